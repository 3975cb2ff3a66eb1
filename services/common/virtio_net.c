/*
 * A virtio-net driver for a modern (Version 2) virtio-mmio transport
 * (services/include/virtio_net.h), written once against svc.h and placed
 * with the service that uses it, in the kernel or in user space.
 *
 * Two split virtqueues (virtio 1.2, 2.7): queue 0 receives, queue 1
 * transmits, VNET_RING_SIZE descriptors each, one buffer of BUF_SIZE bytes
 * per descriptor: a virtio_net_hdr (12 bytes with VERSION_1) and the frame.
 * Every receive buffer is on offer to the device while the caller does not
 * hold its frame. With RING_EVENT_IDX the driver asks for an interrupt only
 * when the caller arms one (used_event) and kicks the device only when the
 * device asked for it (avail_event): a burst of sends is one kick, a burst
 * of frames one interrupt.
 *
 * The rings and buffers are DMA memory (svc_dma_alloc): the device reads
 * and writes them by physical address. The device is reset before any of
 * it could go, and the driver never frees it (it lives as long as the
 * system).
 */
#include "svc_trace.h"
#include "svc.h"
#include "pstring.h"
#include "virtio_mmio.h"
#include "virtio_net.h"

#define RING_SIZE   VNET_RING_SIZE
#define BUF_SIZE    2048u
#define HDR_SIZE    12u                 /* struct virtio_net_hdr with num_buffers */
#define RXQ         0u
#define TXQ         1u

#define NET_F_MAC       5
#define NET_F_STATUS    16
#define NET_S_LINK_UP   1u

#define DESC_F_WRITE    2u

struct vnet_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

struct used_elem {
    uint32_t id, len;
};

static inline uint32_t rd(struct vnet *v, unsigned off) { return v->regs[off / 4]; }
static inline void wr(struct vnet *v, unsigned off, uint32_t x) { v->regs[off / 4] = x; }
static inline void barrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static volatile struct used_elem *used_ring(struct vnet_queue *qu) { return (volatile struct used_elem *)(qu->used + 2); }
static volatile uint16_t *used_event(struct vnet_queue *qu) { return &qu->avail[2 + RING_SIZE]; }
static volatile uint16_t *avail_event(struct vnet_queue *qu)
{
    return (volatile uint16_t *)((volatile uint8_t *)qu->used + 4 + 8 * RING_SIZE);
}

/* A barrier the device sees. Between the driver's publishing of an index
 * and its reading of the device's event index (and the other way round on
 * the device's side) each needs a full barrier, or both may read the
 * other's old value and wait for each other for ever. A dmb is that barrier
 * on hardware, but QEMU's TCG drops the guest's barriers when the machine
 * has one core (it expects no other observer), while its device model runs
 * on another host thread: the guest's store may still sit in the host's
 * store buffer when its next load reads. A register read takes QEMU's
 * global lock, which is a full barrier on the host. It costs a device
 * access, so it is paid only where a stale event index would be trusted:
 * before not kicking and before going to wait for an interrupt. Without it
 * the transmit queue stalled about one run in fifteen of
 * tests/host/test_netlink.py: the device waiting for a kick at index 51,
 * the driver past it, sure it had asked in time. */
static void device_fence(struct vnet *v)
{
    barrier();
    (void)rd(v, VIRTIO_MMIO_MAGIC);
    barrier();
}

/* Tell the device about descriptors made available since the last kick,
 * if it asked to hear of them (its avail_event, read after a barrier it
 * sees), and always when it had used every receive buffer offered before
 * them: it may be waiting for one. The device's used index, read after
 * the new avail index is published, tells. */
static int kick(struct vnet *v, unsigned n)
{
    struct vnet_queue *qu = &v->q[n];
    barrier();
    int dry = n == RXQ && qu->used[1] == qu->kicked;
    int need = dry || virtio_need_event(*avail_event(qu), qu->avail_idx, qu->kicked);
    if (!need) {
        device_fence(v);
        need = virtio_need_event(*avail_event(qu), qu->avail_idx, qu->kicked);
    }
    if (need)
        wr(v, VIRTIO_MMIO_QUEUE_NOTIFY, n);
    qu->kicked = qu->avail_idx;
    return need;
}

/* Offer descriptor d (whose buffer is set) to the device. */
static void make_available(struct vnet_queue *qu, uint16_t d)
{
    qu->avail[2 + qu->avail_idx % RING_SIZE] = d;
    barrier();                                  /* the entry before the index that shows it */
    qu->avail_idx++;
    qu->avail[1] = qu->avail_idx;
}

/* Queue n: DMA memory for its rings (the descriptor table, then the
 * avail ring with used_event, then the used ring with avail_event, each
 * as virtio 1.2, 2.7 aligns it), and its buffers in pieces of 64 KiB
 * (BUFS_PER_PIECE each: in user space one MEM_DMA page). */
#define PIECE           0x10000u
#define BUFS_PER_PIECE  (PIECE / BUF_SIZE)
#define AVAIL_OFF       (16u * RING_SIZE)
#define USED_OFF        ((AVAIL_OFF + 6u + 2u * RING_SIZE + 3u) & ~3u)
#define RINGS_BYTES     ((USED_OFF + 6u + 8u * RING_SIZE + 0xfffu) & ~0xfffu)
static int queue_setup(struct vnet *v, unsigned n)
{
    struct vnet_queue *qu = &v->q[n];
    wr(v, VIRTIO_MMIO_QUEUE_SEL, n);
    if (rd(v, VIRTIO_MMIO_QUEUE_READY) || rd(v, VIRTIO_MMIO_QUEUE_NUM_MAX) < RING_SIZE)
        return SVC_E_STATE;
    uint64_t page_pa, bufs_pa = 0;
    uint8_t *page = svc_dma_alloc(RINGS_BYTES, &page_pa), *bufs = NULL;
    if (!page)
        return SVC_E_NOMEM;                             /* (what was had stays: the device starts once) */
    qu->desc = (volatile struct vnet_desc *)page;
    qu->avail = (volatile uint16_t *)(page + AVAIL_OFF);
    qu->used = (volatile uint16_t *)(page + USED_OFF);
    for (unsigned i = 0; i < RING_SIZE; i++) {
        if (i % BUFS_PER_PIECE == 0 && !(bufs = svc_dma_alloc(PIECE, &bufs_pa)))
            return SVC_E_NOMEM;
        qu->buf[i] = bufs + (uint64_t)(i % BUFS_PER_PIECE) * BUF_SIZE;
        qu->desc[i].addr = bufs_pa + (uint64_t)(i % BUFS_PER_PIECE) * BUF_SIZE;
        qu->desc[i].len = BUF_SIZE;
        qu->desc[i].flags = n == RXQ ? DESC_F_WRITE : 0;
        qu->desc[i].next = 0;
        qu->free[i] = (uint16_t)(RING_SIZE - 1 - i);
    }
    qu->nfree = n == TXQ ? RING_SIZE : 0;
    virtio_mmio_queue_ready(v->regs, RING_SIZE, page_pa, page_pa + AVAIL_OFF, page_pa + USED_OFF);
    return 0;
}

static int negotiate(struct vnet *v)
{
    uint64_t want = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_EVENT_IDX) | (1ull << NET_F_MAC) |
                    (1ull << NET_F_STATUS);
    uint64_t need = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_EVENT_IDX) | (1ull << NET_F_MAC);
    int err = virtio_mmio_negotiate(v->regs, want, need, &v->features);
    if (err)
        return err;
    volatile uint8_t *cfg = (volatile uint8_t *)v->regs + VIRTIO_MMIO_CONFIG;
    for (unsigned i = 0; i < 6; i++)
        v->mac[i] = cfg[i];
    err = queue_setup(v, RXQ);
    return err ? err : queue_setup(v, TXQ);
}

int vnet_open(struct vnet *v, void (*handler)(void))
{
    if (v->state)
        return v->state == 1 ? 0 : v->state;
    v->regs = svc_device("virtio-net", &v->irq);
    if (!v->regs)
        return SVC_E_NOENT;                             /* (asked again next time: nothing was taken) */
    if (rd(v, VIRTIO_MMIO_VERSION) != 2) {
        v->state = SVC_E_STATE;                         /* a legacy transport: not driven here */
        return v->state;
    }
    int err = negotiate(v);
    if (!err && svc_irq_attach(v->irq, handler) != 0)
        err = SVC_E_BUSY;
    if (err) {
        wr(v, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
        v->state = err;
        return err;
    }
    for (uint16_t d = 0; d < RING_SIZE; d++)
        make_available(&v->q[RXQ], d);
    vnet_arm(v, 0);
    wr(v, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                              VIRTIO_STATUS_DRIVER_OK);
    kick(v, RXQ);
    v->state = 1;
    return 0;
}

int vnet_link_up(struct vnet *v)
{
    volatile uint16_t *status = (volatile uint16_t *)((volatile uint8_t *)v->regs + VIRTIO_MMIO_CONFIG + 6);
    return (v->features & (1ull << NET_F_STATUS)) ? (*status & NET_S_LINK_UP) != 0 : 1;
}

/* Take back the transmit descriptors the device is done with. */
static void tx_reclaim(struct vnet *v)
{
    struct vnet_queue *qu = &v->q[TXQ];
    barrier();
    uint16_t used = qu->used[1];
    barrier();                                          /* (the entries after the index that shows them) */
    for (; qu->used_seen != used; qu->used_seen++) {
        uint32_t d = used_ring(qu)[qu->used_seen % RING_SIZE].id;
        if (d < RING_SIZE && qu->nfree < RING_SIZE)
            qu->free[qu->nfree++] = (uint16_t)d;
    }
}

uint8_t *vnet_tx_buf(struct vnet *v)
{
    struct vnet_queue *qu = &v->q[TXQ];
    tx_reclaim(v);
    return qu->nfree ? qu->buf[qu->free[qu->nfree - 1]] + HDR_SIZE : NULL;
}

unsigned vnet_tx_room(struct vnet *v)
{
    tx_reclaim(v);
    return v->q[TXQ].nfree;
}

void vnet_tx_commit(struct vnet *v, uint32_t len)
{
    struct vnet_queue *qu = &v->q[TXQ];
    uint16_t d = qu->free[--qu->nfree];
    memset(qu->buf[d], 0, HDR_SIZE);
    qu->desc[d].len = HDR_SIZE + len;
    make_available(qu, d);
    int kicked = kick(v, TXQ);
    trace_netdev_tx(len, kicked, qu->nfree);
    v->tx_frames++;
    v->tx_bytes += len;
}

const uint8_t *vnet_rx_peek(struct vnet *v, uint32_t *len)
{
    struct vnet_queue *qu = &v->q[RXQ];
    for (;;) {
        barrier();
        if (qu->used[1] == qu->used_seen)
            return NULL;
        barrier();                                      /* (the entry and the frame after the index that shows them) */
        volatile struct used_elem *e = &used_ring(qu)[qu->used_seen % RING_SIZE];
        uint32_t d = e->id, n = e->len;
        if (d < RING_SIZE && n >= HDR_SIZE + VNET_FRAME_MIN && n <= HDR_SIZE + VNET_FRAME_MAX) {
            *len = n - HDR_SIZE;
            return qu->buf[d] + HDR_SIZE;
        }
        v->rx_dropped++;                                /* a runt, a giant, or no descriptor of ours */
        qu->used_seen++;
        if (d < RING_SIZE)
            make_available(qu, (uint16_t)d);
        kick(v, RXQ);
    }
}

void vnet_rx_done(struct vnet *v)
{
    struct vnet_queue *qu = &v->q[RXQ];
    volatile struct used_elem *e = &used_ring(qu)[qu->used_seen % RING_SIZE];
    v->rx_frames++;
    v->rx_bytes += e->len - HDR_SIZE;
    trace_netdev_rx(e->len - HDR_SIZE, qu->used_seen);
    make_available(qu, (uint16_t)e->id);                /* its buffer is on offer again */
    qu->used_seen++;
    kick(v, RXQ);
}

int vnet_arm(struct vnet *v, unsigned want)
{
    struct vnet_queue *rx = &v->q[RXQ], *tx = &v->q[TXQ];
    *used_event(rx) = (want & VNET_WANT_FRAME) ? rx->used_seen : (uint16_t)(rx->used_seen - 1);
    tx_reclaim(v);
    *used_event(tx) = (want & VNET_WANT_ROOM) ? tx->used_seen : (uint16_t)(tx->used_seen - 1);
    if (want)
        device_fence(v);                        /* the event indexes out before the used indexes are read */
    tx_reclaim(v);
    return ((want & VNET_WANT_FRAME) && rx->used[1] != rx->used_seen) || ((want & VNET_WANT_ROOM) && tx->nfree);
}

void vnet_irq_ack(struct vnet *v)
{
    wr(v, VIRTIO_MMIO_INT_ACK, rd(v, VIRTIO_MMIO_INT_STATUS));
    v->interrupts++;
}
