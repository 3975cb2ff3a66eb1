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

#endif
