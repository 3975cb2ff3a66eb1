/*
 * The input service (idl/input.toml): a virtio-input driver (virtio 1.2,
 * section 5.8) over a modern virtio-mmio transport, placed in the kernel
 * or in user space by the system description, and the producer of the
 * input path's ring (services/include/spsc_ring.h).
 *
 * The device writes each event (type, code, value: 8 bytes) into a buffer
 * the driver offered on its event queue and raises the interrupt. The
 * interrupt's handler stamps the events with the clock, pushes them into
 * the ring it shares with the one reader that `open`ed, offers the buffers
 * again, and signals the reader's note only if a push found the ring empty
 * (the OKL4 paper's edge: the reader sleeps only on an empty ring). A full
 * ring drops what does not fit and, as Linux's evdev does when a client's
 * buffer overflows, puts SYN_DROPPED in once there is room, so the reader
 * knows to ask the device's state again.
 *
 * The ring is one page of shared memory (svc_shared_alloc) made at the
 * first `open` and kept for the service's life: each `open` clears it
 * and gives the reader a new handle of it. A reader that closed keeps its
 * mapping of it, so a later reader's events are open to an earlier one:
 * the service is for one reader for the system's life (the Linux
 * personality, or the dispatcher of native programs), not for a
 * succession of mutually distrusting ones.
 */
#include "input_if.h"
#include "svc_proc.h"
#include "spsc_ring.h"
#include "virtq.h"

#define EVENTQ          0u
#define QSIZE           64u             /* event buffers on offer to the device */
#define RING_BYTES      65536u          /* the shared ring: 4,084 events */

/* virtio-input's configuration (section 5.8.4): select, subsel, size, then the answer. */
#define CFG_SELECT      0x00u
#define CFG_SUBSEL      0x01u
#define CFG_SIZE        0x02u
#define CFG_U           0x08u
#define CFG_ID_NAME     0x01u
#define CFG_ID_SERIAL   0x02u
#define CFG_ID_DEVIDS   0x03u
#define CFG_PROP_BITS   0x10u
#define CFG_EV_BITS     0x11u
#define CFG_ABS_INFO    0x12u

#define EV_SYN          0x00u
#define EV_MAX          0x1fu
#define SYN_DROPPED     3u
#define PROPS           0x10000u        /* `bits`: the properties, not a type */

struct vinput_event {
    uint16_t type, code;
    uint32_t value;
};

static struct {
    volatile uint32_t *regs;
    uint32_t irq;
    int state;                          /* 0 before the first request, 1 up, or its error */
    struct virtq q;
    volatile struct vinput_event *ev;   /* QSIZE buffers */
    /* the reader */
    int has_reader;
    uint64_t reader;                    /* its pid */
    svc_handle note;
    uint64_t bits;
    svc_handle ring_mem;
    struct spsc_ring *ring_va;          /* the shared page (made at the first open) */
    struct spsc_ring *ring;             /* ring_va while there is a reader, else NULL */
    uint32_t ring_size;
    int overflowed;                     /* events were dropped: SYN_DROPPED goes in first */
    uint64_t events, queued, dropped, signals, interrupts;
} in;

static inline uint32_t rd(unsigned off) { return in.regs[off / 4]; }
static inline void wr(unsigned off, uint32_t x) { in.regs[off / 4] = x; }
static inline uint8_t cfg8(unsigned off) { return ((volatile uint8_t *)in.regs)[VIRTIO_MMIO_CONFIG + off]; }

/* Ask the device's configuration (select, subsel): the answer's size, its bytes in out[0..size). */
static unsigned cfg_query(uint8_t select, uint8_t subsel, uint8_t out[128])
{
    ((volatile uint8_t *)in.regs)[VIRTIO_MMIO_CONFIG + CFG_SELECT] = select;
    ((volatile uint8_t *)in.regs)[VIRTIO_MMIO_CONFIG + CFG_SUBSEL] = subsel;
    unsigned size = cfg8(CFG_SIZE);
    if (size > 128)
        size = 128;
    for (unsigned i = 0; i < size; i++)
        out[i] = cfg8(CFG_U + i);
    return size;
}

/* Put one record into the reader's ring: the edge signalled, a full ring counted. */
static int push(uint64_t time, uint16_t type, uint16_t code, uint32_t value)
{
    struct spsc_rec r = { time, (uint64_t)type << 48 | (uint64_t)code << 32 | value };
    int pushed = spsc_push(in.ring, in.ring_size, &r);
    if (pushed == SPSC_FULL)
        return pushed;
    in.queued++;
    if (pushed == 1 && svc_signal(in.note, in.bits) == 0)
        in.signals++;
    return pushed;
}

static void interrupt(void)
{
    in.interrupts++;
    wr(VIRTIO_MMIO_INT_ACK, rd(VIRTIO_MMIO_INT_STATUS));
    uint64_t now = svc_clock_ns();
    uint32_t d;
    while (virtq_used(&in.q, &d)) {
        if (d >= QSIZE)
            continue;                                   /* (a device gone wrong) */
        struct vinput_event e = { in.ev[d].type, in.ev[d].code, in.ev[d].value };
        virtq_offer(&in.q, (uint16_t)d);
        in.events++;
        if (!in.ring)
            continue;                                   /* no reader: nobody keeps it */
        if (in.overflowed && push(now, EV_SYN, SYN_DROPPED, 0) != SPSC_FULL)
            in.overflowed = 0;
        if (in.overflowed || push(now, e.type, e.code, e.value) == SPSC_FULL) {
            in.dropped++;
            in.overflowed = 1;
        }
    }
    virtq_barrier();
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, EVENTQ);               /* (the buffers are back on offer) */
    svc_irq_done(in.irq);
}

/* Find and start the device at the first request; its state after. */
static int ready(void)
{
    if (in.state)
        return in.state == 1 ? 0 : in.state;
    in.regs = (volatile uint32_t *)svc_device("virtio-input", &in.irq);
    if (!in.regs)
        return SVC_E_NOENT;                             /* (asked again next time: nothing was taken) */
    uint64_t features;
    uint64_t pa;
    uint8_t *page = NULL;
    if (rd(VIRTIO_MMIO_VERSION) != 2 ||
        virtio_mmio_negotiate(in.regs, 1ull << VIRTIO_F_VERSION_1, 1ull << VIRTIO_F_VERSION_1, &features) != 0)
        in.state = SVC_E_STATE;
    /* One page: the queue (virtq.h), the event buffers after it. */
    if (!in.state && !(page = svc_dma_alloc(4096, &pa)))
        in.state = SVC_E_NOMEM;
    if (!in.state && virtq_setup(&in.q, in.regs, EVENTQ, QSIZE, page, pa) != 0)
        in.state = SVC_E_STATE;
    if (!in.state && svc_irq_attach(in.irq, interrupt) != 0)
        in.state = SVC_E_BUSY;
    if (in.state) {
        wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
        return in.state;
    }
    in.ev = (volatile struct vinput_event *)(page + VIRTQ_FREE_OFF);
    for (unsigned i = 0; i < QSIZE; i++) {
        in.q.desc[i] = (struct virtq_desc){ pa + VIRTQ_FREE_OFF + i * sizeof(struct vinput_event),
                                            sizeof(struct vinput_event), VIRTQ_DESC_F_WRITE, 0 };
        virtq_offer(&in.q, (uint16_t)i);
    }
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                           VIRTIO_STATUS_DRIVER_OK);
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, EVENTQ);
    in.state = 1;
    return 0;
}

static int64_t info(struct svc_call *call, uint64_t *id, uint64_t *types)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    uint8_t u[128];
    uint64_t ids = 0;
    if (cfg_query(CFG_ID_DEVIDS, 0, u) >= 8)
        for (unsigned i = 0; i < 4; i++)
            ids |= (uint64_t)(u[2 * i] | u[2 * i + 1] << 8) << (48 - 16 * i);
    *id = ids;
    uint64_t t = 1u << EV_SYN;                          /* (every device sends EV_SYN: Linux sets it) */
    for (unsigned type = 1; type <= EV_MAX; type++)
        if (cfg_query(CFG_EV_BITS, (uint8_t)type, u))
            t |= 1ull << type;
    *types = t;
    return 0;
}

static int64_t name(struct svc_call *call, uint32_t which, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    int err = ready();
    if (err)
        return err;
    if (which != CFG_ID_NAME && which != CFG_ID_SERIAL)
        return SVC_E_INVAL;
    uint8_t u[128];
    unsigned n = cfg_query((uint8_t)which, 0, u);
    while (n && !u[n - 1])
        n--;                                            /* (without a terminating zero) */
    if (n > buf_len)
        n = (unsigned)buf_len;
    if (n && svc_copy_out(call, buf, u, n))
        return SVC_E_FAULT;
    *count = n;
    return 0;
}

static int64_t bits(struct svc_call *call, uint32_t type, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    int err = ready();
    if (err)
        return err;
    if (type != PROPS && type > EV_MAX)
        return SVC_E_INVAL;
    uint8_t u[128];
    unsigned n = type == PROPS ? cfg_query(CFG_PROP_BITS, 0, u) : type ? cfg_query(CFG_EV_BITS, (uint8_t)type, u) : 0;
    if (type == 0) {                                    /* the types themselves */
        uint64_t id, types;
        info(call, &id, &types);
        for (n = 0; n < 4; n++)
            u[n] = (uint8_t)(types >> (8 * n));
    }
    while (n && !u[n - 1])
        n--;
    if (n > buf_len)
        n = (unsigned)buf_len;
    if (n && svc_copy_out(call, buf, u, n))
        return SVC_E_FAULT;
    *count = n;
    return 0;
}

static int64_t abs_(struct svc_call *call, uint32_t code, int64_t *min, int64_t *max, uint32_t *fuzz, uint32_t *flat,
                    uint32_t *res)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    uint8_t u[128];
    if (code > 0x3f || cfg_query(CFG_ABS_INFO, (uint8_t)code, u) < 20)
        return SVC_E_INVAL;
    *min = (int32_t)virtq_le32(u);
    *max = (int32_t)virtq_le32(u + 4);
    *fuzz = virtq_le32(u + 8);
    *flat = virtq_le32(u + 12);
    *res = virtq_le32(u + 16);
    return 0;
}

static int64_t do_open(struct svc_call *call, svc_handle note, uint64_t bits_, svc_handle *ring, uint64_t *size)
{
    int err = ready();
    if (err || !bits_) {
        svc_handle_release(note);
        return err ? err : SVC_E_INVAL;
    }
    if (in.has_reader && in.reader != call->pid) {
        svc_handle_release(note);
        return SVC_E_BUSY;
    }
    if (!in.ring_va) {
        in.ring_va = svc_shared_alloc(RING_BYTES, &in.ring_mem, NULL);
        if (!in.ring_va) {
            svc_handle_release(note);
            return SVC_E_NOMEM;
        }
    }
    svc_handle give = svc_shared_give(in.ring_mem);
    if (!give) {
        svc_handle_release(note);
        return SVC_E_NOMEM;
    }
    if (in.note)
        svc_handle_release(in.note);
    /* (the interrupt's handler runs between requests, or with this one
     * stopped: it sees the ring whole or not at all) */
    struct spsc_ring *r = in.ring_va;
    in.ring = NULL;
    for (unsigned i = 0; i < RING_BYTES / 8; i++)
        ((volatile uint64_t *)r)[i] = 0;        /* (nothing of an earlier reader's is left) */
    in.ring_size = spsc_init(r, RING_BYTES);
    in.overflowed = 0;
    in.has_reader = 1;
    in.reader = call->pid;
    in.note = note;
    in.bits = bits_;
    in.ring = r;
    *ring = give;
    *size = RING_BYTES;
    return 0;
}

static int64_t do_close(struct svc_call *call)
{
    int err = ready();
    if (err)
        return err;
    if (!in.has_reader || in.reader != call->pid)
        return SVC_E_PERM;
    in.has_reader = 0;
    in.ring = NULL;
    svc_handle_release(in.note);
    in.note = 0;
    return 0;
}

static int64_t stats(struct svc_call *call, uint64_t *events, uint64_t *queued, uint64_t *dropped, uint64_t *signals,
                     uint64_t *interrupts)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    *events = in.events;
    *queued = in.queued;
    *dropped = in.dropped;
    *signals = in.signals;
    *interrupts = in.interrupts;
    return 0;
}

/* The handlers: the generated skeleton (input_service, input_fast) calls them. */
const struct input_ops input_ops = { info, name, bits, abs_, do_open, do_close, stats };
