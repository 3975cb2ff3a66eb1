/*
 * A virtio-blk device on a modern virtio-mmio transport (services/common/
 * virtio_blk.c): the driver the block device service (services/blk)
 * drives its disk with, written once against svc.h like the virtio-net one.
 *
 * The caller owns a struct vblk and calls in from its requests and its
 * interrupt handler. A request is asynchronous: vblk_submit puts it on the
 * device's queue (VBLK_SLOTS of them may be in flight) with the caller's
 * tag; vblk_done hands back, one at a time, those the device finished,
 * with their tag and status. The data moves by DMA from and to memory the
 * caller owns (svc_dma_alloc), in up to VBLK_SEGS physically contiguous
 * segments a request (indirect descriptors, virtio 1.2 2.7.5.3), so that
 * a run of blocks scattered in memory is one request to the device.
 */
#ifndef VIRTIO_BLK_H
#define VIRTIO_BLK_H

#include <stdint.h>

#define VBLK_SECTOR     512u            /* the unit of a request's sector number, whatever the block size */
#define VBLK_RING_SIZE  64u             /* descriptors (a power of two) */
#define VBLK_SLOTS      VBLK_RING_SIZE  /* requests in flight: one descriptor each when the device reads
                                         * indirect tables, else three (a header, the data, a status) */
#define VBLK_SEGS       32u             /* data segments one request may have (with indirect tables; else 1) */
#define VBLK_MAX_BYTES  (64u * 1024)    /* the most one segment moves */

/* Request types (virtio 1.2, 5.2.6). */
#define VBLK_T_IN       0u              /* read */
#define VBLK_T_OUT      1u              /* write */
#define VBLK_T_FLUSH    4u              /* what was written reaches stable storage */

#define VBLK_RO         1u              /* vblk.flags: the device is read-only */
#define VBLK_FLUSH      2u              /*             it has a write cache that FLUSH empties */

struct vblk_desc;

struct vblk {
    volatile uint32_t *regs;
    uint32_t irq;
    int state;                          /* 0 until vblk_open, 1 running, or the error it failed with */
    uint64_t features;
    uint64_t capacity;                  /* in 512-byte sectors */
    uint32_t blk_size;                  /* the device's logical block size (512 when it does not say) */
    uint32_t size_max;                  /* the most bytes one data segment may hold (0: no limit said) */
    uint32_t max_segs;                  /* data segments a request may have (1 without indirect tables) */
    uint32_t slots;                     /* requests that may be in flight */
    uint32_t flags;                     /* VBLK_RO, VBLK_FLUSH */
    uint16_t cylinders;                 /* the geometry the device reports (0s when it does not) */
    uint8_t heads, sectors;
    volatile struct vblk_desc *desc;
    volatile uint16_t *avail;           /* flags, idx, ring[VBLK_RING_SIZE], used_event */
    volatile uint16_t *used;            /* flags, idx, ring[VBLK_RING_SIZE] of used_elem, avail_event */
    uint8_t *slot_mem;                  /* each slot's header (16 bytes) and status (1 byte), 32 bytes apart */
    uint64_t slot_pa;
    volatile struct vblk_desc *tables;  /* each slot's indirect table (VBLK_SEGS + 2 descriptors) */
    uint64_t tables_pa;
    uint64_t tag[VBLK_SLOTS];
    uint32_t bytes[VBLK_SLOTS];
    uint8_t busy[VBLK_SLOTS];
    uint16_t avail_idx, used_seen, kicked;
    unsigned inflight;
    uint64_t reads, writes, flushes, bytes_read, bytes_written, errors, interrupts;
};

/* Find the machine's virtio-blk device, start it and attach `handler` to
 * its interrupt; 0 or an SVC_E_ error (E_NOENT: the machine has none).
 * Once only: later calls answer what the first one did. */
int vblk_open(struct vblk *b, void (*handler)(void));
/* One physically contiguous piece of a request's data. */
struct vblk_seg {
    uint64_t pa;
    uint32_t len;
};

/* Put a request on the queue: `type` VBLK_T_*, from `sector` (512 bytes
 * each), its data in `nseg` segments (up to b->max_segs, each a multiple
 * of 512 bytes and at most VBLK_MAX_BYTES and the device's size_max; none
 * for a flush), moved in order to and from consecutive sectors. 0, or
 * SVC_E_AGAIN (every slot in flight), SVC_E_RANGE (past the disk's end),
 * SVC_E_PERM (a write to a read-only disk), SVC_E_INVAL (a bad size,
 * segment count or type, or a flush the device does not do). */
int vblk_submit_sg(struct vblk *b, unsigned type, uint64_t sector, const struct vblk_seg *seg, unsigned nseg,
                   uint64_t tag);
/* The same with one segment of `bytes` at `pa` (0 bytes: a flush). */
int vblk_submit(struct vblk *b, unsigned type, uint64_t sector, uint32_t bytes, uint64_t pa, uint64_t tag);
/* The next request the device finished: 1 with its tag and status (0, or
 * SVC_E_IO when the device failed it), 0 when none has. */
int vblk_done(struct vblk *b, uint64_t *tag, int *status);
/* Ask for an interrupt when the next request finishes (want 1) or for
 * none (0), then look: 1 when one has finished already (then no interrupt
 * may come for it: take it with vblk_done and arm again). */
int vblk_arm(struct vblk *b, int want);
/* From the interrupt handler: acknowledge the device's interrupt. */
void vblk_irq_ack(struct vblk *b);

#endif
