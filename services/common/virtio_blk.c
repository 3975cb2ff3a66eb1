/*
 * A virtio-blk driver for a modern (Version 2) virtio-mmio transport
 * (services/include/virtio_blk.h), written once against svc.h and placed
 * with the service that uses it, in the kernel or in user space.
 *
 * One split virtqueue (virtio 1.2, 5.2: the request queue) of
 * VBLK_RING_SIZE descriptors. A request is a chain of its header (type,
 * sector: the device reads it), its data segments (the device reads them
 * for a write, writes them for a read; none for a flush) and its status
 * byte (the device writes it). When the device reads indirect tables
 * (VIRTIO_F_INDIRECT_DESC, as QEMU's does), slot s owns ring descriptor s,
 * which points at its own table of VBLK_SEGS + 2 descriptors, so 64
 * requests of up to 32 segments may be in flight; else slot s owns ring
 * descriptors 3s to 3s+2 and a request has one segment. Either way the
 * chain is built the same, at a base index (0 in a table, 3s in the
 * ring), and each slot has 32 bytes of DMA memory for its header and
 * status, so a request needs no allocation. With RING_EVENT_IDX the
 * driver kicks the device only when it asked (a burst of requests is one
 * kick) and is interrupted only when the caller arms it.
 */
#include "svc.h"
#include "pstring.h"
#include "virtio_mmio.h"
#include "virtio_blk.h"

#define RING_SIZE       VBLK_RING_SIZE
#define SLOT_BYTES      32u             /* a slot's header (16) and status (1), padded */

#define BLK_F_SIZE_MAX  1
#define BLK_F_SEG_MAX   2
#define BLK_F_GEOMETRY  4
#define BLK_F_RO        5
#define BLK_F_BLK_SIZE  6
#define BLK_F_FLUSH     9

#define S_OK            0u              /* a request's status byte (5.2.6) */
#define S_PENDING       0xffu           /* (ours: the device has not written it) */

#define DESC_F_NEXT     1u
#define DESC_F_WRITE    2u
#define DESC_F_INDIRECT 4u
#define F_INDIRECT_DESC 28              /* VIRTIO_F_INDIRECT_DESC */
#define TABLE_DESCS     (VBLK_SEGS + 2u)

/* The device's configuration space (5.2.4), at VIRTIO_MMIO_CONFIG. */
#define CFG_CAPACITY    0x00            /* le64: 512-byte sectors */
#define CFG_SIZE_MAX    0x08            /* le32 */
#define CFG_SEG_MAX     0x0c            /* le32 */
#define CFG_CYLINDERS   0x10            /* le16 */
#define CFG_HEADS       0x12            /* u8 */
#define CFG_SECTORS     0x13            /* u8 */
#define CFG_BLK_SIZE    0x14            /* le32 */

struct vblk_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

struct used_elem {
    uint32_t id, len;
};

static inline uint32_t rd(struct vblk *b, unsigned off) { return b->regs[off / 4]; }
static inline void wr(struct vblk *b, unsigned off, uint32_t x) { b->regs[off / 4] = x; }
static inline void barrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static volatile struct used_elem *used_ring(struct vblk *b) { return (volatile struct used_elem *)(b->used + 2); }
static volatile uint16_t *used_event(struct vblk *b) { return &b->avail[2 + RING_SIZE]; }
static volatile uint16_t *avail_event(struct vblk *b)
{
    return (volatile uint16_t *)((volatile uint8_t *)b->used + 4 + 8 * RING_SIZE);
}
static volatile uint8_t *cfg(struct vblk *b) { return (volatile uint8_t *)b->regs + VIRTIO_MMIO_CONFIG; }
static uint32_t cfg32(struct vblk *b, unsigned off) { return *(volatile uint32_t *)(cfg(b) + off); }

/* A barrier the device sees (a register read takes QEMU's global lock):
 * see services/common/virtio_net.c's device_fence for why a dmb is not
 * enough under TCG. Paid only where a stale event index would be trusted. */
static void device_fence(struct vblk *b)
{
    barrier();
    (void)rd(b, VIRTIO_MMIO_MAGIC);
    barrier();
}

static void kick(struct vblk *b)
{
    barrier();
    int need = virtio_need_event(*avail_event(b), b->avail_idx, b->kicked);
    if (!need) {
        device_fence(b);
        need = virtio_need_event(*avail_event(b), b->avail_idx, b->kicked);
    }
    if (need)
        wr(b, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
    b->kicked = b->avail_idx;
}

/* The queue's rings in one DMA page (the descriptor table, the avail ring
 * with used_event, the used ring with avail_event, aligned as 2.7 asks)
 * and the slots' headers and statuses in another. */
#define AVAIL_OFF       (16u * RING_SIZE)
#define USED_OFF        ((AVAIL_OFF + 6u + 2u * RING_SIZE + 3u) & ~3u)
#define RINGS_BYTES     ((USED_OFF + 6u + 8u * RING_SIZE + 0xfffu) & ~0xfffu)
static int queue_setup(struct vblk *b)
{
    wr(b, VIRTIO_MMIO_QUEUE_SEL, 0);
    if (rd(b, VIRTIO_MMIO_QUEUE_READY) || rd(b, VIRTIO_MMIO_QUEUE_NUM_MAX) < RING_SIZE)
        return SVC_E_STATE;
    uint64_t page_pa, slots_pa, tables_pa = 0;
    uint8_t *page = svc_dma_alloc(RINGS_BYTES, &page_pa);
    uint8_t *slots = page ? svc_dma_alloc(4096, &slots_pa) : NULL;
    uint8_t *tables = NULL;
    if (slots && (b->features & (1ull << F_INDIRECT_DESC)))
        tables = svc_dma_alloc(VBLK_SLOTS * TABLE_DESCS * sizeof(struct vblk_desc), &tables_pa);
    if (!slots)
        return SVC_E_NOMEM;                             /* (what was had stays: the device starts once) */
    b->desc = (volatile struct vblk_desc *)page;
    b->avail = (volatile uint16_t *)(page + AVAIL_OFF);
    b->used = (volatile uint16_t *)(page + USED_OFF);
    b->slot_mem = slots;
    b->slot_pa = slots_pa;
    b->tables = (volatile struct vblk_desc *)tables;
    b->tables_pa = tables_pa;
    b->slots = tables ? VBLK_SLOTS : VBLK_RING_SIZE / 3;
    if (!tables)
        b->max_segs = 1;
    for (unsigned s = 0; tables && s < VBLK_SLOTS; s++) {
        b->desc[s].addr = tables_pa + s * TABLE_DESCS * sizeof(struct vblk_desc);
        b->desc[s].flags = DESC_F_INDIRECT;
        b->desc[s].next = 0;
    }
    virtio_mmio_queue_ready(b->regs, RING_SIZE, page_pa, page_pa + AVAIL_OFF, page_pa + USED_OFF);
    return 0;
}

static int negotiate(struct vblk *b)
{
    uint64_t want = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_EVENT_IDX) | (1ull << F_INDIRECT_DESC) |
                    (1ull << BLK_F_SIZE_MAX) | (1ull << BLK_F_SEG_MAX) | (1ull << BLK_F_GEOMETRY) | (1ull << BLK_F_RO) |
                    (1ull << BLK_F_BLK_SIZE) | (1ull << BLK_F_FLUSH);
    uint64_t need = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_EVENT_IDX);
    int err = virtio_mmio_negotiate(b->regs, want, need, &b->features);
    if (err)
        return err;
    /* The configuration, read until its generation holds still (4.2.2.2). */
    uint32_t gen;
    do {
        gen = rd(b, VIRTIO_MMIO_CONFIG_GEN);
        b->capacity = cfg32(b, CFG_CAPACITY) | (uint64_t)cfg32(b, CFG_CAPACITY + 4) << 32;
        b->size_max = (b->features & (1ull << BLK_F_SIZE_MAX)) ? cfg32(b, CFG_SIZE_MAX) : 0;
        b->max_segs = (b->features & (1ull << BLK_F_SEG_MAX)) ? cfg32(b, CFG_SEG_MAX) : VBLK_SEGS;
        b->blk_size = (b->features & (1ull << BLK_F_BLK_SIZE)) ? cfg32(b, CFG_BLK_SIZE) : VBLK_SECTOR;
        if (b->features & (1ull << BLK_F_GEOMETRY)) {
            b->cylinders = (uint16_t)(cfg(b)[CFG_CYLINDERS] | cfg(b)[CFG_CYLINDERS + 1] << 8);
            b->heads = cfg(b)[CFG_HEADS];
            b->sectors = cfg(b)[CFG_SECTORS];
        }
    } while (rd(b, VIRTIO_MMIO_CONFIG_GEN) != gen);
    if (b->blk_size < VBLK_SECTOR || b->blk_size > 65536 || (b->blk_size & (b->blk_size - 1)))
        b->blk_size = VBLK_SECTOR;                      /* (nonsense from the device: sectors, then) */
    if (b->max_segs == 0 || b->max_segs > VBLK_SEGS)
        b->max_segs = b->max_segs ? VBLK_SEGS : 1;      /* (0 from the device: one, to be safe) */
    b->flags = ((b->features & (1ull << BLK_F_RO)) ? VBLK_RO : 0) |
               ((b->features & (1ull << BLK_F_FLUSH)) ? VBLK_FLUSH : 0);
    return queue_setup(b);
}

int vblk_open(struct vblk *b, void (*handler)(void))
{
    if (b->state)
        return b->state == 1 ? 0 : b->state;
    b->regs = svc_device("virtio-block", &b->irq);
    if (!b->regs)
        return SVC_E_NOENT;                             /* (asked again next time: nothing was taken) */
    if (rd(b, VIRTIO_MMIO_VERSION) != 2) {
        b->state = SVC_E_STATE;                         /* a legacy transport: not driven here */
        return b->state;
    }
    int err = negotiate(b);
    if (!err && svc_irq_attach(b->irq, handler) != 0)
        err = SVC_E_BUSY;
    if (err) {
        wr(b, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
        b->state = err;
        return err;
    }
    vblk_arm(b, 0);
    wr(b, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                              VIRTIO_STATUS_DRIVER_OK);
    b->state = 1;
    return 0;
}

int vblk_submit_sg(struct vblk *b, unsigned type, uint64_t sector, const struct vblk_seg *seg, unsigned nseg,
                   uint64_t tag)
{
    uint64_t bytes = 0;
    if (nseg > b->max_segs)
        return SVC_E_INVAL;
    for (unsigned i = 0; i < nseg; i++) {
        if (!seg[i].len || seg[i].len % VBLK_SECTOR || seg[i].len > VBLK_MAX_BYTES ||
            (b->size_max && seg[i].len > b->size_max))
            return SVC_E_INVAL;
        bytes += seg[i].len;
    }
    if (type == VBLK_T_FLUSH) {
        if (nseg || !(b->flags & VBLK_FLUSH))
            return SVC_E_INVAL;
    } else if (type == VBLK_T_IN || type == VBLK_T_OUT) {
        if (!nseg)
            return SVC_E_INVAL;
        if (sector > b->capacity || bytes / VBLK_SECTOR > b->capacity - sector)
            return SVC_E_RANGE;
        if (type == VBLK_T_OUT && (b->flags & VBLK_RO))
            return SVC_E_PERM;
    } else {
        return SVC_E_INVAL;
    }
    unsigned s = 0;
    while (s < b->slots && b->busy[s])
        s++;
    if (s == b->slots)
        return SVC_E_AGAIN;
    uint8_t *h = b->slot_mem + s * SLOT_BYTES;
    uint32_t t = type;
    memcpy(h, &t, 4);                                   /* (the device's byte order is little-endian, as ours) */
    memset(h + 4, 0, 4);
    memcpy(h + 8, &sector, 8);
    h[16] = S_PENDING;
    /* The chain: header, segments, status, at `base` in table d. */
    volatile struct vblk_desc *d = b->tables ? b->tables + s * TABLE_DESCS : b->desc;
    unsigned base = b->tables ? 0 : 3 * s;
    d[base].addr = b->slot_pa + s * SLOT_BYTES;
    d[base].len = 16;
    d[base].flags = DESC_F_NEXT;
    d[base].next = (uint16_t)(base + 1);
    for (unsigned i = 0; i < nseg; i++) {
        d[base + 1 + i].addr = seg[i].pa;
        d[base + 1 + i].len = seg[i].len;
        d[base + 1 + i].flags = DESC_F_NEXT | (type == VBLK_T_IN ? DESC_F_WRITE : 0);
        d[base + 1 + i].next = (uint16_t)(base + 2 + i);
    }
    d[base + nseg + 1].addr = b->slot_pa + s * SLOT_BYTES + 16;
    d[base + nseg + 1].len = 1;
    d[base + nseg + 1].flags = DESC_F_WRITE;
    d[base + nseg + 1].next = 0;
    if (b->tables)
        b->desc[s].len = (nseg + 2) * (uint32_t)sizeof(struct vblk_desc);
    b->busy[s] = 1;
    b->tag[s] = tag;
    b->bytes[s] = (uint32_t)bytes;
    b->inflight++;
    b->avail[2 + b->avail_idx % RING_SIZE] = (uint16_t)(b->tables ? s : 3 * s);
    barrier();                                          /* the entry before the index that shows it */
    b->avail_idx++;
    b->avail[1] = b->avail_idx;
    kick(b);
    return 0;
}

int vblk_submit(struct vblk *b, unsigned type, uint64_t sector, uint32_t bytes, uint64_t pa, uint64_t tag)
{
    struct vblk_seg one = { pa, bytes };
    return vblk_submit_sg(b, type, sector, &one, bytes ? 1 : 0, tag);
}

int vblk_done(struct vblk *b, uint64_t *tag, int *status)
{
    for (;;) {
        barrier();
        if (b->used[1] == b->used_seen)
            return 0;
        barrier();                                      /* (the entry and the status after the index that shows them) */
        uint32_t id = used_ring(b)[b->used_seen % RING_SIZE].id;
        b->used_seen++;
        unsigned s = b->tables ? id : id / 3;
        if ((!b->tables && id % 3) || s >= b->slots || !b->busy[s])
            continue;                                   /* (not a request of ours: nothing to hand back) */
        const uint8_t *h = b->slot_mem + s * SLOT_BYTES;
        uint32_t type;
        memcpy(&type, h, 4);
        uint32_t len = b->bytes[s];
        int ok = h[16] == S_OK;
        *status = ok ? 0 : SVC_E_IO;
        *tag = b->tag[s];
        b->busy[s] = 0;
        b->inflight--;
        if (!ok)
            b->errors++;
        else if (type == VBLK_T_IN)
            b->reads++, b->bytes_read += len;
        else if (type == VBLK_T_OUT)
            b->writes++, b->bytes_written += len;
        else
            b->flushes++;
        return 1;
    }
}

int vblk_arm(struct vblk *b, int want)
{
    *used_event(b) = want ? b->used_seen : (uint16_t)(b->used_seen - 1);
    if (want)
        device_fence(b);                        /* the event index out before the used index is read */
    barrier();
    return want && b->used[1] != b->used_seen;
}

void vblk_irq_ack(struct vblk *b)
{
    wr(b, VIRTIO_MMIO_INT_ACK, rd(b, VIRTIO_MMIO_INT_STATUS));
    b->interrupts++;
}
