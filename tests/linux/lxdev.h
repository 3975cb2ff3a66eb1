/*
 * Device helpers of the Linux oracle tests (beside lxtest.h): the input
 * event and framebuffer structures of Linux's UAPI, evdev's ioctl numbers,
 * opening a node devtmpfs makes a moment after its driver, and printing
 * an evdev bitmap. Written from the UAPI's layout, for musl, which has no
 * linux/ headers.
 */
#ifndef LXDEV_H
#define LXDEV_H

#include <sys/ioctl.h>
#include "lxtest.h"

/* struct input_event (64-bit time) */
struct ev {
    int64_t sec, usec;
    uint16_t type, code;
    int32_t value;
};

#define IOC(dir, nr, size)  (((unsigned long)(dir) << 30) | ((unsigned long)(size) << 16) | ('E' << 8) | (nr))
#define IOC_R 2
#define IOC_W 1
#define EVIOCGVERSION   IOC(IOC_R, 0x01, 4)
#define EVIOCGID        IOC(IOC_R, 0x02, 8)
#define EVIOCGREP       IOC(IOC_R, 0x03, 8)
#define EVIOCGNAME(n)   IOC(IOC_R, 0x06, n)
#define EVIOCGPHYS(n)   IOC(IOC_R, 0x07, n)
#define EVIOCGUNIQ(n)   IOC(IOC_R, 0x08, n)
#define EVIOCGPROP(n)   IOC(IOC_R, 0x09, n)
#define EVIOCGKEY(n)    IOC(IOC_R, 0x18, n)
#define EVIOCGLED(n)    IOC(IOC_R, 0x19, n)
#define EVIOCGBIT(t, n) IOC(IOC_R, 0x20 + (t), n)
#define EVIOCGABS(a)    IOC(IOC_R, 0x40 + (a), 24)
#define EVIOCGRAB       IOC(IOC_W, 0x90, 4)
#define EVIOCSCLOCKID   IOC(IOC_W, 0xa0, 4)

/* struct fb_var_screeninfo and fb_fix_screeninfo, and their ioctls */
struct fb_var {
    uint32_t xres, yres, xres_virtual, yres_virtual, xoffset, yoffset, bits_per_pixel, grayscale;
    uint32_t red[3], green[3], blue[3], transp[3];
    uint32_t rest[20];
};

struct fb_fix {
    char id[16];
    unsigned long smem_start;
    uint32_t smem_len, type, type_aux, visual;
    uint16_t xpanstep, ypanstep, ywrapstep;
    uint32_t line_length;
    unsigned long mmio_start;
    uint32_t mmio_len, accel;
    uint16_t capabilities, reserved[2];
};
_Static_assert(sizeof(struct fb_var) == 160 && sizeof(struct fb_fix) == 80, "the UAPI's sizes");

#define FBIOGET_VSCREENINFO 0x4600
#define FBIOPUT_VSCREENINFO 0x4601
#define FBIOGET_FSCREENINFO 0x4602
#define FBIOPAN_DISPLAY     0x4606

/* Open path, waiting up to 2 s for it to appear (Linux's devtmpfs makes
 * the node a moment after the driver); -1 and errno if it does not. */
static inline int open_device(const char *path, int flags)
{
    int fd = -1;
    for (int i = 0; i < 200 && fd < 0; i++) {
        fd = open(path, flags);
        if (fd < 0)
            usleep(10000);
    }
    return fd;
}

/* Print an evdev bitmap the ioctl `req` answers: its length, how many bits
 * are set and which (up to bit 1023), or the error. */
static inline void show_bits(const char *what, int fd, unsigned long req)
{
    uint8_t m[128];
    memset(m, 0, sizeof(m));
    errno = 0;
    long n = ioctl(fd, req, m);
    if (n < 0) {
        printf("%s: %s\n", what, errname(errno));
        return;
    }
    int set = 0;
    for (long i = 0; i < n * 8; i++)
        set += (m[i / 8] >> (i % 8)) & 1;
    printf("%s: %ld bytes, %d set:", what, n, set);
    for (long i = 0; i < n * 8 && i < 1024; i++)
        if ((m[i / 8] >> (i % 8)) & 1)
            printf(" %ld", i);
    printf("\n");
}

#endif
