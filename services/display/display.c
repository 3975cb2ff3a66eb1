/*
 * The display service (idl/display.toml): a virtio-gpu driver in 2D mode
 * (virtio 1.2, section 5.7) over a modern virtio-mmio transport, placed
 * in the kernel or in user space by the system description.
 *
 * At the first request it asks the device for its screen's size, makes
 * one framebuffer of that size (640 by 480 when it would not fit in 8
 * MiB) as a memory object of 4 KiB pages (svc_dma_object: clients map it
 * at any page-aligned address, as Linux's mmap places /dev/fb0), a host
 * resource of it (B8G8R8X8, which is XRGB8888 in memory) backed by the
 * list of its pages, and sets it as scanout 0. Those commands are waited
 * for in place (the device answers them in microseconds); every later one
 * is answered through the interrupt. The service never touches a pixel.
 *
 * A `flush` is two commands in the control queue: TRANSFER_TO_HOST_2D of
 * the rectangle, then RESOURCE_FLUSH with a fence, whose answer says the
 * frame is on the screen: the service notes it (`shown`) and signals the
 * watcher. Commands take slots of a 64 KiB DMA page, a request and its
 * answer each, two descriptors a slot.
 */
#include "display_if.h"
#include "virtq.h"

#define CTRLQ           0u
#define QSIZE           64u
#define SLOTS           (QSIZE / 2)
#define SLOT_BYTES      2048u           /* the request in the first half, the answer in the second */
#define FRAMES_MAX      16u
#define FB_MAX          0x800000u       /* 8 MiB: 2,048 pages, their list in the 32 KiB `backing` */
#define RESOURCE        1u

#define CMD_GET_DISPLAY_INFO    0x0100u
#define CMD_RESOURCE_CREATE_2D  0x0101u
#define CMD_SET_SCANOUT         0x0103u
#define CMD_RESOURCE_FLUSH      0x0104u
#define CMD_TRANSFER_TO_HOST_2D 0x0105u
#define CMD_RESOURCE_ATTACH_BACKING 0x0106u
#define RESP_OK_NODATA          0x1100u
#define RESP_OK_DISPLAY_INFO    0x1101u
#define FLAG_FENCE              1u
#define FORMAT_B8G8R8X8         2u

struct ctrl_hdr {
    uint32_t type, flags;
    uint64_t fence_id;
    uint32_t ctx_id, padding;
};

static struct {
    volatile uint32_t *regs;
    uint32_t irq;
    int state;                          /* 0 before the first request, 1 up, or its error */
    struct virtq q;
    uint8_t *slots;
    uint64_t slots_pa;
    uint32_t slot_busy;                 /* bit i: slot i is the device's */
    uint64_t slot_frame[SLOTS];         /* the frame a RESOURCE_FLUSH slot ends (0: another command) */
    uint32_t width, height, stride;
    uint64_t screen;
    svc_handle fb_mem;
    uint64_t fb_size;
    uint64_t frames, shown, failed;
    unsigned in_flight;                 /* frames asked and not shown */
    svc_handle note;
    uint64_t bits;
} gpu;

static inline uint32_t rd(unsigned off) { return gpu.regs[off / 4]; }
static inline void wr(unsigned off, uint32_t x) { gpu.regs[off / 4] = x; }
static uint8_t *request(unsigned slot) { return gpu.slots + slot * SLOT_BYTES; }
static volatile struct ctrl_hdr *answer(unsigned slot)
{
    return (volatile struct ctrl_hdr *)(gpu.slots + slot * SLOT_BYTES + SLOT_BYTES / 2);
}

/* A free slot (marked the device's), or -1. */
static int slot_take(void)
{
    for (unsigned i = 0; i < SLOTS; i++)
        if (!(gpu.slot_busy & (1u << i))) {
            gpu.slot_busy |= 1u << i;
            return (int)i;
        }
    return -1;
}

/* Hand slot `slot`'s request of `len` bytes (at req_pa: the slot's own
 * when 0) to the device (not kicked). */
static void submit(unsigned slot, uint64_t req_pa, uint32_t len, uint64_t frame)
{
    unsigned d = 2 * slot;
    uint64_t pa = gpu.slots_pa + slot * SLOT_BYTES;
    answer(slot)->type = 0;
    gpu.slot_frame[slot] = frame;
    gpu.q.desc[d] = (struct virtq_desc){ req_pa ? req_pa : pa, len, VIRTQ_DESC_F_NEXT, (uint16_t)(d + 1) };
    gpu.q.desc[d + 1] = (struct virtq_desc){ pa + SLOT_BYTES / 2, SLOT_BYTES / 2, VIRTQ_DESC_F_WRITE, 0 };
    virtq_offer(&gpu.q, (uint16_t)d);
}

static void kick(void)
{
    virtq_barrier();
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, CTRLQ);
}

/* The answers the device has given: their slots free again, frames shown. */
static void harvest(void)
{
    uint32_t d;
    while (virtq_used(&gpu.q, &d)) {
        uint32_t slot = d / 2;
        if (d % 2 || slot >= SLOTS || !(gpu.slot_busy & (1u << slot)))
            continue;                           /* (a device gone wrong) */
        int ok = answer(slot)->type == RESP_OK_NODATA;
        gpu.failed += !ok;
        if (gpu.slot_frame[slot]) {
            if (gpu.slot_frame[slot] > gpu.shown)
                gpu.shown = gpu.slot_frame[slot];
            gpu.in_flight--;
        }
        gpu.slot_busy &= ~(1u << slot);
    }
}

/* One command of `len` bytes (in slot 0, or at req_pa), waited for in
 * place (setting up): its answer's type. */
static uint32_t command_now(uint64_t req_pa, uint32_t len)
{
    submit(0, req_pa, len, 0);
    kick();
    for (uint64_t spins = 0; spins < 100000000u; spins++) {
        (void)rd(VIRTIO_MMIO_MAGIC);            /* (a device access: QEMU runs the device meanwhile) */
        uint32_t d;
        if (virtq_used(&gpu.q, &d)) {
            gpu.slot_busy = 0;
            return answer(0)->type;
        }
    }
    return 0;
}

static void interrupt(void)
{
    wr(VIRTIO_MMIO_INT_ACK, rd(VIRTIO_MMIO_INT_STATUS));
    uint64_t before = gpu.shown;
    harvest();
    if (gpu.shown != before && gpu.note)
        svc_signal(gpu.note, gpu.bits);
    svc_irq_done(gpu.irq);
}

static void put32(uint8_t *p, uint32_t x) { __builtin_memcpy(p, &x, 4); }
static void put64(uint8_t *p, uint64_t x) { __builtin_memcpy(p, &x, 8); }

/* A request's header in slot's buffer, zeroing `len` bytes first. */
static uint8_t *header(unsigned slot, uint32_t type, uint32_t len, uint32_t flags, uint64_t fence)
{
    uint8_t *r = request(slot);
    for (uint32_t i = 0; i < len; i++)
        r[i] = 0;
    put32(r, type);
    put32(r + 4, flags);
    put64(r + 8, fence);
    return r;
}

/* Set the device up and learn its screen: 0 or an error (kept). */
static int start(void)
{
    uint64_t features, pa;
    if (rd(VIRTIO_MMIO_VERSION) != 2 ||
        virtio_mmio_negotiate(gpu.regs, 1ull << VIRTIO_F_VERSION_1, 1ull << VIRTIO_F_VERSION_1, &features) != 0)
        return SVC_E_STATE;
    uint8_t *page = svc_dma_alloc(4096, &pa);
    gpu.slots = svc_dma_alloc(SLOTS * SLOT_BYTES, &gpu.slots_pa);
    if (!page || !gpu.slots)
        return SVC_E_NOMEM;
    if (virtq_setup(&gpu.q, gpu.regs, CTRLQ, QSIZE, page, pa) != 0)
        return SVC_E_STATE;
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                           VIRTIO_STATUS_DRIVER_OK);
    header(0, CMD_GET_DISPLAY_INFO, 24, 0, 0);
    if (command_now(0, 24) != RESP_OK_DISPLAY_INFO)
        return SVC_E_STATE;
    const volatile uint8_t *mode = (const volatile uint8_t *)answer(0) + 24;   /* pmodes[0]: x, y, w, h, enabled */
    uint32_t w = virtq_le32(mode + 8), h = virtq_le32(mode + 12);
    gpu.screen = (uint64_t)w << 32 | h;
    if (!w || !h || (uint64_t)w * h * 4 > FB_MAX)
        w = 640, h = 480;
    gpu.width = w, gpu.height = h, gpu.stride = w * 4;
    gpu.fb_size = ((uint64_t)gpu.stride * h + 0xfff) & ~0xfffull;
    gpu.fb_mem = svc_dma_object(gpu.fb_size);
    if (!gpu.fb_mem)
        return SVC_E_NOMEM;
    uint8_t *r = header(0, CMD_RESOURCE_CREATE_2D, 40, 0, 0);
    put32(r + 24, RESOURCE), put32(r + 28, FORMAT_B8G8R8X8), put32(r + 32, w), put32(r + 36, h);
    if (command_now(0, 40) != RESP_OK_NODATA)
        return SVC_E_STATE;
    /* The backing: one entry a page (32 KiB of entries at most: FB_MAX),
     * in memory of its own; made for this command and kept after (the
     * device is done with it, but the service has no use for it either). */
    uint32_t pages = (uint32_t)(gpu.fb_size / 4096), len = 32 + 16 * pages;
    uint64_t backing_pa;
    uint8_t *b = svc_dma_alloc(len, &backing_pa);
    if (!b)
        return SVC_E_NOMEM;
    put32(b, CMD_RESOURCE_ATTACH_BACKING);
    put32(b + 24, RESOURCE), put32(b + 28, pages);
    for (uint32_t i = 0; i < pages; i++) {
        int64_t at = svc_dma_page(gpu.fb_mem, (uint64_t)i * 4096);
        if (at < 0)
            return SVC_E_STATE;
        put64(b + 32 + 16 * i, (uint64_t)at), put32(b + 40 + 16 * i, 4096);
    }
    if (command_now(backing_pa, len) != RESP_OK_NODATA)
        return SVC_E_STATE;
    r = header(0, CMD_SET_SCANOUT, 48, 0, 0);
    put32(r + 32, w), put32(r + 36, h), put32(r + 40, 0), put32(r + 44, RESOURCE);
    if (command_now(0, 48) != RESP_OK_NODATA)
        return SVC_E_STATE;
    if (svc_irq_attach(gpu.irq, interrupt) != 0)
        return SVC_E_BUSY;
    return 0;
}

static int ready(void)
{
    if (gpu.state)
        return gpu.state == 1 ? 0 : gpu.state;
    gpu.regs = (volatile uint32_t *)svc_device("virtio-gpu", &gpu.irq);
    if (!gpu.regs)
        return SVC_E_NOENT;                     /* (asked again next time: nothing was taken) */
    int err = start();
    if (err) {
        wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
        gpu.state = err;
        return err;
    }
    gpu.state = 1;
    return 0;
}

static int64_t info(struct svc_call *call, uint32_t *width, uint32_t *height, uint32_t *stride, uint64_t *screen)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    *width = gpu.width;
    *height = gpu.height;
    *stride = gpu.stride;
    *screen = gpu.screen;
    return 0;
}

static int64_t framebuffer(struct svc_call *call, svc_handle *fb, uint64_t *size)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    *fb = svc_shared_give(gpu.fb_mem);
    *size = gpu.fb_size;
    return *fb ? 0 : SVC_E_NOMEM;
}

static int64_t flush(struct svc_call *call, uint32_t x, uint32_t y, uint32_t w, uint32_t h, uint64_t *frame)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    harvest();
    if (gpu.in_flight >= FRAMES_MAX)
        return SVC_E_BUSY;
    if (x >= gpu.width || y >= gpu.height)
        return SVC_E_INVAL;
    if (!w || !h || w > gpu.width - x)
        w = gpu.width - x;
    if (!h || h > gpu.height - y)
        h = gpu.height - y;
    int t = slot_take(), f = t >= 0 ? slot_take() : -1;
    if (f < 0) {
        if (t >= 0)
            gpu.slot_busy &= ~(1u << t);
        return SVC_E_BUSY;
    }
    uint8_t *r = header((unsigned)t, CMD_TRANSFER_TO_HOST_2D, 56, 0, 0);
    put32(r + 24, x), put32(r + 28, y), put32(r + 32, w), put32(r + 36, h);
    put64(r + 40, (uint64_t)y * gpu.stride + (uint64_t)x * 4), put32(r + 48, RESOURCE);
    uint64_t n = ++gpu.frames;
    uint8_t *q = header((unsigned)f, CMD_RESOURCE_FLUSH, 48, FLAG_FENCE, n);
    put32(q + 24, x), put32(q + 28, y), put32(q + 32, w), put32(q + 36, h), put32(q + 40, RESOURCE);
    submit((unsigned)t, 0, 56, 0);
    submit((unsigned)f, 0, 48, n);
    gpu.in_flight++;
    kick();
    *frame = n;
    return 0;
}

static int64_t shown(struct svc_call *call, uint64_t *frame, uint64_t *failed)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    harvest();
    *frame = gpu.shown;
    *failed = gpu.failed;
    return 0;
}

static int64_t watch(struct svc_call *call, svc_handle note, uint64_t bits)
{
    (void)call;
    if (gpu.note)
        svc_handle_release(gpu.note);
    gpu.note = bits ? note : 0;
    gpu.bits = bits;
    if (!bits)
        svc_handle_release(note);
    return 0;
}

/* The handlers: the generated skeleton (display_service, display_fast) calls them. */
const struct display_ops display_ops = { info, framebuffer, flush, shown, watch };
