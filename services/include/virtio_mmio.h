/*
 * Virtio over MMIO (the virtio 1.2 specification, section 4.2.2: the
 * "modern" register layout, Version 2): the transport's registers, and
 * the device names a system description gives a driver's `devices`.
 *
 * QEMU's virt board has 32 transports ("virtio,mmio" nodes of the device
 * tree, 0x200 bytes apart); a device plugged in with -device shows in one
 * of them, its type in DeviceID. A driver asks for "virtio-<type>" and
 * gets the transport of that type at the lowest address: the root task
 * grants the 4 KiB page holding it (with the other transports that share
 * the page: a page is the least the MMU can grant) and its interrupt,
 * and svc_device finds it in the page; a kernel-placed driver gets the
 * same one.
 */
#ifndef PETREL_VIRTIO_MMIO_H
#define PETREL_VIRTIO_MMIO_H

#include <stdint.h>
#include "petrel_abi.h"

#define VIRTIO_MMIO_COMPAT      "virtio,mmio"
#define VIRTIO_MMIO_STRIDE      0x200u
#define VIRTIO_MMIO_MAGIC_VALUE 0x74726976u     /* "virt" */

/* Register offsets. */
#define VIRTIO_MMIO_MAGIC           0x000
#define VIRTIO_MMIO_VERSION         0x004
#define VIRTIO_MMIO_DEVICE_ID       0x008
#define VIRTIO_MMIO_VENDOR_ID       0x00c
#define VIRTIO_MMIO_DEV_FEATURES    0x010
#define VIRTIO_MMIO_DEV_FEATURES_SEL 0x014
#define VIRTIO_MMIO_DRV_FEATURES    0x020
#define VIRTIO_MMIO_DRV_FEATURES_SEL 0x024
#define VIRTIO_MMIO_QUEUE_SEL       0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX   0x034
#define VIRTIO_MMIO_QUEUE_NUM       0x038
#define VIRTIO_MMIO_QUEUE_READY     0x044
#define VIRTIO_MMIO_QUEUE_NOTIFY    0x050
#define VIRTIO_MMIO_INT_STATUS      0x060
#define VIRTIO_MMIO_INT_ACK         0x064
#define VIRTIO_MMIO_STATUS          0x070
#define VIRTIO_MMIO_QUEUE_DESC_LO   0x080
#define VIRTIO_MMIO_QUEUE_DESC_HI   0x084
#define VIRTIO_MMIO_QUEUE_AVAIL_LO  0x090
#define VIRTIO_MMIO_QUEUE_AVAIL_HI  0x094
#define VIRTIO_MMIO_QUEUE_USED_LO   0x0a0
#define VIRTIO_MMIO_QUEUE_USED_HI   0x0a4
#define VIRTIO_MMIO_CONFIG_GEN      0x0fc
#define VIRTIO_MMIO_CONFIG          0x100

/* Device status bits. */
#define VIRTIO_STATUS_ACK           1u
#define VIRTIO_STATUS_DRIVER        2u
#define VIRTIO_STATUS_DRIVER_OK     4u
#define VIRTIO_STATUS_FEATURES_OK   8u
#define VIRTIO_STATUS_NEEDS_RESET   64u
#define VIRTIO_STATUS_FAILED        128u

/* Interrupt status bits. */
#define VIRTIO_INT_USED             1u
#define VIRTIO_INT_CONFIG           2u

/* Feature bits every device type shares. */
#define VIRTIO_F_RING_EVENT_IDX     29
#define VIRTIO_F_VERSION_1          32

/* "virtio-<type>" -> its DeviceID, or 0 if compat names none. */
static inline uint32_t virtio_device_id(const char *compat)
{
    static const struct { const char *name; uint32_t id; } types[] = {
        { "virtio-net", 1 }, { "virtio-block", 2 }, { "virtio-console", 3 }, { "virtio-rng", 4 },
        { "virtio-gpu", 16 }, { "virtio-input", 18 }, { "virtio-vsock", 19 },
    };
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        const char *a = compat, *b = types[i].name;
        while (*a && *a == *b)
            a++, b++;
        if (!*a && !*b)
            return types[i].id;
    }
    return 0;
}

/* Does the transport at regs hold a modern device of type `id`? */
static inline int virtio_mmio_is(const volatile void *regs, uint32_t id)
{
    const volatile uint32_t *r = (const volatile uint32_t *)regs;
    return r[VIRTIO_MMIO_MAGIC / 4] == VIRTIO_MMIO_MAGIC_VALUE && r[VIRTIO_MMIO_DEVICE_ID / 4] == id;
}

static inline uint32_t virtio_mmio_rd(volatile uint32_t *regs, unsigned off) { return regs[off / 4]; }
static inline void virtio_mmio_wr(volatile uint32_t *regs, unsigned off, uint32_t x) { regs[off / 4] = x; }

/* virtio 1.2, 2.7.10: has the other side's event index been passed? */
static inline int virtio_need_event(uint16_t event, uint16_t now, uint16_t old)
{
    return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

/* Reset the device and agree on features (virtio 1.2, 3.1.1 steps 1-6):
 * those of `want` it offers, failing with -E_STATE unless it
 * offers all of `need` and accepts them. *features: what was agreed. */
static inline int virtio_mmio_negotiate(volatile uint32_t *regs, uint64_t want, uint64_t need, uint64_t *features)
{
    virtio_mmio_wr(regs, VIRTIO_MMIO_STATUS, 0);                       /* reset */
    virtio_mmio_wr(regs, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK);
    virtio_mmio_wr(regs, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER);
    virtio_mmio_wr(regs, VIRTIO_MMIO_DEV_FEATURES_SEL, 0);
    uint64_t offered = virtio_mmio_rd(regs, VIRTIO_MMIO_DEV_FEATURES);
    virtio_mmio_wr(regs, VIRTIO_MMIO_DEV_FEATURES_SEL, 1);
    offered |= (uint64_t)virtio_mmio_rd(regs, VIRTIO_MMIO_DEV_FEATURES) << 32;
    if ((offered & need) != need)
        return -E_STATE;
    *features = offered & want;
    virtio_mmio_wr(regs, VIRTIO_MMIO_DRV_FEATURES_SEL, 0);
    virtio_mmio_wr(regs, VIRTIO_MMIO_DRV_FEATURES, (uint32_t)*features);
    virtio_mmio_wr(regs, VIRTIO_MMIO_DRV_FEATURES_SEL, 1);
    virtio_mmio_wr(regs, VIRTIO_MMIO_DRV_FEATURES, (uint32_t)(*features >> 32));
    virtio_mmio_wr(regs, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    return (virtio_mmio_rd(regs, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK) ? 0 : -E_STATE;
}

/* Give queue n (selected, not ready, with `num` entries) its rings'
 * physical addresses and make it ready (virtio 1.2, 4.2.3.2). */
static inline void virtio_mmio_queue_ready(volatile uint32_t *regs, uint32_t num, uint64_t desc, uint64_t avail,
                                           uint64_t used)
{
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_NUM, num);
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_DESC_LO, (uint32_t)desc);
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_DESC_HI, (uint32_t)(desc >> 32));
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_AVAIL_LO, (uint32_t)avail);
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_AVAIL_HI, (uint32_t)(avail >> 32));
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_USED_LO, (uint32_t)used);
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_USED_HI, (uint32_t)(used >> 32));
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_READY, 1);
}

#endif
