/*
 * /dev/fb0: Linux's framebuffer device over Petrel's display service
 * (services/display, idl/display.toml, a virtio-gpu driver).
 *
 * At the first open the personality takes the service's framebuffer, a
 * memory object it shares with the service: a program's mmap of /dev/fb0
 * maps that object itself (shared, as a device's memory: a fork maps it
 * too), so what the program draws is in the pixels the device reads, with
 * no copy. FBIOPAN_DISPLAY has the service show the whole screen and
 * waits until the device says the frame is shown (the service signals
 * the personality's wakeup); write() puts bytes into the framebuffer and
 * has them shown without waiting, as Linux's deferred I/O does. The
 * screen is described as the DRM framebuffer emulation of Linux's
 * virtio-gpu driver describes it: 32-bit XRGB8888 true colour, one
 * buffer, no acceleration.
 */
#include "lx.h"
#include "svc_proc.h"
#include "display_if.h"

#define FBIOGET_VSCREENINFO 0x4600
#define FBIOPUT_VSCREENINFO 0x4601
#define FBIOGET_FSCREENINFO 0x4602
#define FBIOPAN_DISPLAY     0x4606
#define FBIOBLANK           0x4611
#define FB_VAR_WORDS        40          /* struct fb_var_screeninfo: 160 bytes of u32 */
#define FB_FIX_BYTES        80          /* struct fb_fix_screeninfo on a 64-bit machine */

static struct {
    int state;                          /* 1: attached */
    uint32_t ep;
    uint32_t width, height, stride;
    uint64_t size;
    struct lx_mobj *obj;                /* the framebuffer, as programs map it */
    uint64_t asked, shown;              /* the last frame asked for and the last shown */
} fb;

int lx_fb_present(void)
{
    return svc_service("display") != 0;
}

/* Take the display service's framebuffer: 0, or ENODEV when the system has
 * no display service or the machine no virtio-gpu. */
static int64_t attach(void)
{
    if (fb.state == 1)
        return 0;
    svc_handle ep = svc_service("display");
    uint64_t screen;
    if (!ep || display_info((uint32_t)ep, &fb.width, &fb.height, &fb.stride, &screen) != 0)
        return -LX_ENODEV;
    uint32_t h = 0;
    uint64_t size = 0, note_bits;
    if (display_framebuffer((uint32_t)ep, &h, &size) != 0)
        return -LX_ENOMEM;
    fb.obj = lx_mobj_new(h, 0);
    svc_handle note = lx_wakeup(&note_bits);
    if (!fb.obj || !note || display_watch((uint32_t)ep, (uint32_t)note, note_bits) != 0) {
        if (!fb.obj)
            svc_handle_release(h);
        return -LX_ENOMEM;
    }
    fb.obj->refs++;                             /* (the personality's own, for ever) */
    fb.obj->shared = 1;
    fb.ep = (uint32_t)ep;
    fb.size = size;
    fb.state = 1;
    return 0;
}

int64_t lx_fb_open(struct lx_ctx *c, int32_t node, uint32_t flags, int cloexec)
{
    int64_t err = attach();
    if (err)
        return err;
    struct lx_file *f;
    return lx_fd_open(c->p, LX_FILE_NODE, node, flags, cloexec, &f);
}

/* The wakeup ran: a frame may have been shown. */
void lx_fb_changed(void)
{
    if (fb.state == 1 && fb.asked != fb.shown)
        lx_wake_all(LX_BLK_DISPLAY, 0);
}

int64_t lx_fb_mmap(struct lx_proc *p, uint64_t off, uint64_t size, struct lx_mobj **obj)
{
    (void)p;
    if (fb.state != 1)
        return -LX_ENODEV;
    if (off > fb.size || size > fb.size - off)
        return -LX_EINVAL;                      /* (fb_mmap: past smem_len) */
    *obj = fb.obj;
    return 0;
}

/* Bytes of the framebuffer at *pos to or from the caller, as fb_read and
 * fb_write: none past its end (ENOSPC for a write that starts there, EFBIG
 * past it). */
int64_t lx_fb_rw(struct lx_ctx *c, uint64_t buf, uint64_t len, uint64_t *pos, int write)
{
    if (fb.state != 1)
        return -LX_ENODEV;
    if (*pos > fb.size)
        return write ? -LX_EFBIG : 0;
    if (*pos == fb.size && write && len)
        return -LX_ENOSPC;
    uint64_t n = len < fb.size - *pos ? len : fb.size - *pos;
    if (n && (write ? svc_mem_copy_in(c->call, fb.obj->h, *pos, buf, n) : svc_mem_copy_out(c->call, buf, fb.obj->h, *pos, n)))
        return -LX_EFAULT;
    *pos += n;
    if (write && n) {
        uint64_t frame;
        if (display_flush(fb.ep, 0, 0, 0, 0, &frame) == 0)
            fb.asked = frame;
    }
    return (int64_t)n;
}

static void var_info(uint32_t v[FB_VAR_WORDS])
{
    for (unsigned i = 0; i < FB_VAR_WORDS; i++)
        v[i] = 0;
    v[0] = v[2] = fb.width;                     /* xres, xres_virtual */
    v[1] = v[3] = fb.height;                    /* yres, yres_virtual */
    v[6] = 32;                                  /* bits_per_pixel */
    v[8] = 16, v[9] = 8;                        /* red: offset, length */
    v[11] = 8, v[12] = 8;                       /* green */
    v[14] = 0, v[15] = 8;                       /* blue (transp: none) */
    v[22] = v[23] = 0xffffffffu;                /* height, width in mm: not known */
}

int64_t lx_fb_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    (void)f;
    if (fb.state != 1)
        return -LX_ENODEV;
    uint32_t v[FB_VAR_WORDS], mine[FB_VAR_WORDS];
    switch ((uint32_t)req) {
    case FBIOGET_VSCREENINFO:
        var_info(v);
        return lx_copy_out(c, arg, v, sizeof(v)) ? -LX_EFAULT : 0;
    case FBIOPUT_VSCREENINFO:
        /* One mode: asking for it is fine, any other resolution or depth is not. */
        if (lx_copy_in(c, v, arg, sizeof(v)))
            return -LX_EFAULT;
        var_info(mine);
        if (v[0] != mine[0] || v[1] != mine[1] || v[2] > mine[2] || v[3] > mine[3] || (v[6] && v[6] != 32))
            return -LX_EINVAL;
        return lx_copy_out(c, arg, mine, sizeof(mine)) ? -LX_EFAULT : 0;
    case FBIOGET_FSCREENINFO: {
        uint8_t x[FB_FIX_BYTES] = "virtio_gpudrmfb";
        uint32_t words[3] = { (uint32_t)fb.size, 0, 0 };                /* smem_len, type, type_aux */
        uint32_t visual = 2;                                            /* FB_VISUAL_TRUECOLOR */
        uint16_t pan[3] = { 1, 1, 0 };                                  /* xpanstep, ypanstep, ywrapstep */
        memcpy(x + 24, words, sizeof(words));
        memcpy(x + 36, &visual, 4);
        memcpy(x + 40, pan, sizeof(pan));
        memcpy(x + 48, &fb.stride, 4);                                  /* line_length */
        return lx_copy_out(c, arg, x, sizeof(x)) ? -LX_EFAULT : 0;
    }
    case FBIOPAN_DISPLAY: {
        /* The whole screen shown, then the call answers; asked again when
         * woken, it waits for the frame it asked for. */
        if (lx_copy_in(c, v, arg, sizeof(v)))
            return -LX_EFAULT;
        if (v[4] || v[5])
            return -LX_EINVAL;                  /* (one buffer: no offset to pan to) */
        uint64_t failed;
        if (!c->t->fb_frame) {
            uint64_t frame;
            int64_t err = display_flush(fb.ep, 0, 0, 0, 0, &frame);
            if (err)
                return err == SVC_E_BUSY ? -LX_EBUSY : -LX_EIO;
            c->t->fb_frame = fb.asked = frame;
        }
        if (display_shown(fb.ep, &fb.shown, &failed) != 0)
            return -LX_EIO;
        if (fb.shown < c->t->fb_frame)
            return lx_block(c, LX_BLK_DISPLAY, 0);
        c->t->fb_frame = 0;
        return 0;
    }
    case FBIOBLANK:
        return 0;
    default:
        return -LX_ENOTTY;
    }
}
