/*
 * A small split virtqueue (virtio 1.2, section 2.7) in one 4 KiB page of
 * DMA memory, for drivers that need no event index: the descriptor table
 * at 0 (at most 64 entries), the avail ring at 1 KiB, the used ring at
 * 2 KiB; the rest of the page is the driver's (the input service keeps
 * its event buffers there). The driver offers descriptors with
 * virtq_offer, kicks the device itself, and takes what the device used
 * with virtq_used. services/input and services/display use it;
 * virtio_net.c and virtio_blk.c keep rings of their own (event indexes,
 * more entries).
 */
#ifndef PETREL_VIRTQ_H
#define PETREL_VIRTQ_H

#include <stdint.h>
#include "virtio_mmio.h"

#define VIRTQ_MAX           64u
#define VIRTQ_AVAIL_OFF     1024u
#define VIRTQ_USED_OFF      2048u
#define VIRTQ_FREE_OFF      3072u       /* the page's bytes from here are the driver's */
#define VIRTQ_DESC_F_NEXT   1u
#define VIRTQ_DESC_F_WRITE  2u

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

struct virtq_used_elem {
    uint32_t id, len;
};

struct virtq {
    uint32_t size;                      /* entries, at most VIRTQ_MAX */
    volatile struct virtq_desc *desc;
    volatile uint16_t *avail, *used;
    uint16_t avail_idx, used_seen;
};

static inline void virtq_barrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* A little-endian 32-bit word of a device's (its configuration, an answer). */
static inline uint32_t virtq_le32(const volatile uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Queue `n` of the device at regs, of `size` entries, in the page at
 * `page` (bus address pa): made ready. 0, or -E_STATE if the device has
 * the queue ready already or fewer entries. */
static inline int virtq_setup(struct virtq *q, volatile uint32_t *regs, uint32_t n, uint32_t size, uint8_t *page,
                              uint64_t pa)
{
    virtio_mmio_wr(regs, VIRTIO_MMIO_QUEUE_SEL, n);
    if (size > VIRTQ_MAX || virtio_mmio_rd(regs, VIRTIO_MMIO_QUEUE_READY) ||
        virtio_mmio_rd(regs, VIRTIO_MMIO_QUEUE_NUM_MAX) < size)
        return -E_STATE;
    q->size = size;
    q->desc = (volatile struct virtq_desc *)page;
    q->avail = (volatile uint16_t *)(page + VIRTQ_AVAIL_OFF);
    q->used = (volatile uint16_t *)(page + VIRTQ_USED_OFF);
    q->avail_idx = q->used_seen = 0;
    virtio_mmio_queue_ready(regs, size, pa, pa + VIRTQ_AVAIL_OFF, pa + VIRTQ_USED_OFF);
    return 0;
}

/* Offer the chain that starts at descriptor d (its entries set) to the device. */
static inline void virtq_offer(struct virtq *q, uint16_t d)
{
    q->avail[2 + q->avail_idx % q->size] = d;
    virtq_barrier();                    /* the entry before the index that shows it */
    q->avail_idx++;
    q->avail[1] = q->avail_idx;
}

/* The next chain the device has used: 1 and its first descriptor in *d,
 * or 0 if it has used no more. */
static inline int virtq_used(struct virtq *q, uint32_t *d)
{
    virtq_barrier();
    if (q->used[1] == q->used_seen)
        return 0;
    virtq_barrier();                    /* the entry after the index that shows it */
    volatile struct virtq_used_elem *u = (volatile struct virtq_used_elem *)(q->used + 2) + q->used_seen % q->size;
    *d = u->id;
    q->used_seen++;
    return 1;
}

#endif
