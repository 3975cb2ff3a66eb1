/*
 * The network device service (idl/netdev.toml): a virtio-net driver for a
 * modern (Version 2) virtio-mmio transport, written once against svc.h
 * and placed in the kernel or in user space by the system description.
 *
 * Two split virtqueues (virtio 1.2, 2.7): queue 0 receives, queue 1
 * transmits, RING_SIZE descriptors each, one buffer of BUF_SIZE bytes per
 * descriptor: a virtio_net_hdr (12 bytes with VERSION_1) and the frame.
 * Every receive buffer is on offer to the device while no client holds
 * its frame; `recv` copies the oldest used one out and offers it again at
 * once. `send` copies the frame into a free transmit buffer. With
 * RING_EVENT_IDX the driver asks for an interrupt only when it has a
 * waiter (used_event) and kicks the device only when the device asked for
 * it (avail_event): a burst of sends is one kick, a burst of frames one
 * interrupt.
 *
 * The rings and buffers are DMA memory (svc_dma_alloc): the device reads
 * and writes them by physical address. The device is reset before any of
 * it could go, and this service never frees it (it lives as long as the
 * system).
 */
#include "netdev_if.h"
#include "pstring.h"
#include "virtio_mmio.h"

#define RING_SIZE   64u                 /* descriptors per queue (a power of two) */
#define BUF_SIZE    2048u
#define HDR_SIZE    12u                 /* struct virtio_net_hdr with num_buffers */
#define FRAME_MIN   14u
#define FRAME_MAX   1514u
#define RXQ         0u
#define TXQ         1u

#define NET_F_MAC       5
#define NET_F_STATUS    16
#define NET_S_LINK_UP   1u

#define DESC_F_WRITE    2u

struct desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

struct used_elem {
    uint32_t id, len;
};

/* One queue: its three rings (in one DMA page), its buffers, and what the
 * driver knows of them. */
struct queue {
    volatile struct desc *desc;
    volatile uint16_t *avail;           /* flags, idx, ring[RING_SIZE], used_event */
    volatile uint16_t *used;            /* flags, idx, then ring[RING_SIZE] of used_elem, avail_event */
    uint8_t *buf[RING_SIZE];
    uint16_t avail_idx;                 /* the next avail slot the driver fills */
    uint16_t used_seen;                 /* used entries taken so far */
    uint16_t kicked;                    /* avail_idx at the last notify */
    uint16_t nfree;                     /* transmit: descriptors the device does not hold, */
    uint16_t free[RING_SIZE];           /* and which (the device may give them back in any order) */
};

static volatile uint32_t *regs;
static uint32_t irq;
static int broken;                      /* the device refused to start: every call is E_STATE */
static uint64_t features;
static uint8_t mac[6];
static struct queue q[2];
static svc_token waiter;
static uint32_t waiting_for;            /* 1: a frame, 2: transmit room */
static uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes, interrupts;

static inline uint32_t rd(unsigned off) { return regs[off / 4]; }
static inline void wr(unsigned off, uint32_t v) { regs[off / 4] = v; }
static inline void barrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static volatile struct used_elem *used_ring(struct queue *qu) { return (volatile struct used_elem *)(qu->used + 2); }
static volatile uint16_t *used_event(struct queue *qu) { return &qu->avail[2 + RING_SIZE]; }
static volatile uint16_t *avail_event(struct queue *qu)
{
    return (volatile uint16_t *)((volatile uint8_t *)qu->used + 4 + 8 * RING_SIZE);
}

/* virtio 1.2, 2.7.10: has the device's event index been passed? */
static int need_event(uint16_t event, uint16_t now, uint16_t old)
{
    return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

/* Tell the device about descriptors made available since the last kick,
 * if it asked to hear of them. */
static void kick(unsigned n)
{
    struct queue *qu = &q[n];
    barrier();
    uint16_t event = *avail_event(qu);
    if (need_event(event, qu->avail_idx, qu->kicked))
        wr(VIRTIO_MMIO_QUEUE_NOTIFY, n);
    qu->kicked = qu->avail_idx;
}

/* Offer descriptor d (whose buffer is set) to the device. */
static void make_available(struct queue *qu, uint16_t d)
{
    qu->avail[2 + qu->avail_idx % RING_SIZE] = d;
    barrier();                                  /* the entry before the index that shows it */
    qu->avail_idx++;
    qu->avail[1] = qu->avail_idx;
}

/* Queue n: a 4 KiB page of DMA memory for its rings, and its buffers in
 * pieces of 64 KiB (BUFS_PER_PIECE each: in user space one MEM_DMA page). */
#define PIECE           0x10000u
#define BUFS_PER_PIECE  (PIECE / BUF_SIZE)
static int queue_setup(unsigned n)
{
    struct queue *qu = &q[n];
    wr(VIRTIO_MMIO_QUEUE_SEL, n);
    if (rd(VIRTIO_MMIO_QUEUE_READY) || rd(VIRTIO_MMIO_QUEUE_NUM_MAX) < RING_SIZE)
        return SVC_E_STATE;
    uint64_t page_pa, bufs_pa = 0;
    uint8_t *page = svc_dma_alloc(0x1000, &page_pa), *bufs = NULL;
    if (!page)
        return SVC_E_NOMEM;                             /* (what was had stays: the service starts once) */
    /* desc at 0 (16 x 64 = 1 KiB), avail at 1 KiB, used at 2 KiB (4 + 8 x 64 + 2 bytes). */
    qu->desc = (volatile struct desc *)page;
    qu->avail = (volatile uint16_t *)(page + 0x400);
    qu->used = (volatile uint16_t *)(page + 0x800);
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
    wr(VIRTIO_MMIO_QUEUE_NUM, RING_SIZE);
    uint64_t d = page_pa, a = page_pa + 0x400, u = page_pa + 0x800;
    wr(VIRTIO_MMIO_QUEUE_DESC_LO, (uint32_t)d);
    wr(VIRTIO_MMIO_QUEUE_DESC_HI, (uint32_t)(d >> 32));
    wr(VIRTIO_MMIO_QUEUE_AVAIL_LO, (uint32_t)a);
    wr(VIRTIO_MMIO_QUEUE_AVAIL_HI, (uint32_t)(a >> 32));
    wr(VIRTIO_MMIO_QUEUE_USED_LO, (uint32_t)u);
    wr(VIRTIO_MMIO_QUEUE_USED_HI, (uint32_t)(u >> 32));
    wr(VIRTIO_MMIO_QUEUE_READY, 1);
    return 0;
}

/* Is a received frame waiting, or transmit room? */
static int frame_waiting(void) { barrier(); return q[RXQ].used[1] != q[RXQ].used_seen; }

/* Take back the transmit descriptors the device is done with. */
static void tx_reclaim(void)
{
    struct queue *qu = &q[TXQ];
    barrier();
    for (uint16_t used = qu->used[1]; qu->used_seen != used; qu->used_seen++) {
        uint32_t d = used_ring(qu)[qu->used_seen % RING_SIZE].id;
        if (d < RING_SIZE && qu->nfree < RING_SIZE)
            qu->free[qu->nfree++] = (uint16_t)d;
    }
}

static int tx_room(void) { tx_reclaim(); return q[TXQ].nfree > 0; }

/* Ask for an interrupt at the next used entry of the queue the waiter
 * waits on, and none from the other. */
static void arm(void)
{
    *used_event(&q[RXQ]) = waiting_for == 1 ? q[RXQ].used_seen : (uint16_t)(q[RXQ].used_seen - 1);
    *used_event(&q[TXQ]) = waiting_for == 2 ? q[TXQ].used_seen : (uint16_t)(q[TXQ].used_seen - 1);
    barrier();
}

/* Answer the waiter if what it waits for is there. */
static void serve_waiter(void)
{
    if (!waiter)
        return;
    if ((waiting_for == 1 && frame_waiting()) || (waiting_for == 2 && tx_room())) {
        svc_token t = waiter;
        waiter = 0;
        waiting_for = 0;
        arm();
        netdev_wait_reply(t, 0);
    }
}

static void interrupt(void)
{
    uint32_t st = rd(VIRTIO_MMIO_INT_STATUS);
    wr(VIRTIO_MMIO_INT_ACK, st);
    interrupts++;
    serve_waiter();
    svc_irq_done(irq);
}

static int start(void)
{
    wr(VIRTIO_MMIO_STATUS, 0);                          /* reset */
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER);
    wr(VIRTIO_MMIO_DEV_FEATURES_SEL, 0);
    uint64_t offered = rd(VIRTIO_MMIO_DEV_FEATURES);
    wr(VIRTIO_MMIO_DEV_FEATURES_SEL, 1);
    offered |= (uint64_t)rd(VIRTIO_MMIO_DEV_FEATURES) << 32;
    uint64_t want = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_EVENT_IDX) | (1ull << NET_F_MAC) |
                    (1ull << NET_F_STATUS);
    uint64_t need = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_EVENT_IDX) | (1ull << NET_F_MAC);
    if ((offered & need) != need)
        return SVC_E_STATE;
    features = offered & want;
    wr(VIRTIO_MMIO_DRV_FEATURES_SEL, 0);
    wr(VIRTIO_MMIO_DRV_FEATURES, (uint32_t)features);
    wr(VIRTIO_MMIO_DRV_FEATURES_SEL, 1);
    wr(VIRTIO_MMIO_DRV_FEATURES, (uint32_t)(features >> 32));
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    if (!(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK))
        return SVC_E_STATE;
    volatile uint8_t *cfg = (volatile uint8_t *)regs + VIRTIO_MMIO_CONFIG;
    for (unsigned i = 0; i < 6; i++)
        mac[i] = cfg[i];
    int err = queue_setup(RXQ);
    return err ? err : queue_setup(TXQ);
}

/* Bring the device up at the first request (as the console does). */
static int ready(void)
{
    if (regs)
        return broken;
    regs = svc_device("virtio-net", &irq);
    if (!regs)
        return SVC_E_NOENT;
    if (rd(VIRTIO_MMIO_VERSION) != 2) {
        broken = SVC_E_STATE;                           /* a legacy transport: not driven here */
        return broken;
    }
    broken = start();
    if (!broken && svc_irq_attach(irq, interrupt) != 0)
        broken = SVC_E_BUSY;
    if (broken) {
        wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
        return broken;
    }
    for (uint16_t d = 0; d < RING_SIZE; d++)
        make_available(&q[RXQ], d);
    arm();
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                           VIRTIO_STATUS_DRIVER_OK);
    kick(RXQ);
    return 0;
}

static int64_t info(struct svc_call *call, uint64_t *mac_out, uint32_t *frame_max, uint32_t *link)
{
    int err = ready();
    if (err)
        return err;
    uint64_t m = 0;
    for (unsigned i = 0; i < 6; i++)
        m |= (uint64_t)mac[i] << (8 * i);
    *mac_out = m;
    *frame_max = FRAME_MAX;
    volatile uint16_t *status = (volatile uint16_t *)((volatile uint8_t *)regs + VIRTIO_MMIO_CONFIG + 6);
    *link = (features & (1ull << NET_F_STATUS)) ? (*status & NET_S_LINK_UP) : 1;    /* no status: always up */
    return 0;
}

static int64_t send(struct svc_call *call, uint64_t frame, uint64_t frame_len)
{
    int err = ready();
    if (err)
        return err;
    if (frame_len < FRAME_MIN || frame_len > FRAME_MAX)
        return SVC_E_INVAL;
    if (!tx_room())
        return SVC_E_AGAIN;
    struct queue *qu = &q[TXQ];
    uint16_t d = qu->free[qu->nfree - 1];
    memset(qu->buf[d], 0, HDR_SIZE);
    if (svc_copy_in(call, qu->buf[d] + HDR_SIZE, frame, frame_len))
        return SVC_E_FAULT;
    qu->nfree--;
    qu->desc[d].len = (uint32_t)(HDR_SIZE + frame_len);
    make_available(qu, d);
    kick(TXQ);
    tx_frames++;
    tx_bytes += frame_len;
    return 0;
}

static int64_t recv(struct svc_call *call, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    int err = ready();
    if (err)
        return err;
    if (buf_len < FRAME_MAX)
        return SVC_E_INVAL;
    struct queue *qu = &q[RXQ];
    for (;;) {
        if (!frame_waiting())
            return SVC_E_AGAIN;
        volatile struct used_elem *e = &used_ring(qu)[qu->used_seen % RING_SIZE];
        uint32_t d = e->id, len = e->len;
        if (d >= RING_SIZE) {
            qu->used_seen++;                            /* (a device that names no descriptor of ours) */
            continue;
        }
        int bad = len < HDR_SIZE + FRAME_MIN || len > HDR_SIZE + FRAME_MAX;
        if (!bad && svc_copy_out(call, buf, qu->buf[d] + HDR_SIZE, len - HDR_SIZE) != 0)
            return SVC_E_FAULT;                         /* the frame stays for the next recv */
        qu->used_seen++;
        make_available(qu, (uint16_t)d);                /* its buffer is on offer again */
        arm();
        kick(RXQ);
        if (bad)
            continue;                                   /* a runt or giant: dropped */
        rx_frames++;
        rx_bytes += len - HDR_SIZE;
        *count = len - HDR_SIZE;
        return 0;
    }
}

static int64_t wait(struct svc_call *call, uint32_t what)
{
    int err = ready();
    if (err)
        return err;
    if (what != 1 && what != 2)
        return SVC_E_INVAL;
    if (waiter)
        return (what == 1 && frame_waiting()) || (what == 2 && tx_room()) ? 0 : SVC_E_BUSY;
    /* Ask for the interrupt first, then look: what comes after the look
     * raises it (its handler runs after this request, in either
     * placement), what came before is seen here. */
    waiting_for = what;
    arm();
    if ((what == 1 && frame_waiting()) || (what == 2 && tx_room())) {
        waiting_for = 0;
        arm();
        return 0;
    }
    waiter = svc_defer(call);
    if (!waiter) {
        waiting_for = 0;
        arm();
        return SVC_E_NOMEM;
    }
    return SVC_DEFERRED;
}

static int64_t stats(struct svc_call *call, uint64_t *txf, uint64_t *txb, uint64_t *rxf, uint64_t *rxb, uint64_t *ints)
{
    int err = ready();
    if (err)
        return err;
    *txf = tx_frames;
    *txb = tx_bytes;
    *rxf = rx_frames;
    *rxb = rx_bytes;
    *ints = interrupts;
    return 0;
}

/* The handlers: the generated skeleton (netdev_service, netdev_fast) calls them. */
const struct netdev_ops netdev_ops = { info, send, recv, wait, stats };
