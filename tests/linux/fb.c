/* /dev/fb0 of a virtio-gpu screen (Petrel's display service): the screen
 * described by FBIOGET_VSCREENINFO and FBIOGET_FSCREENINFO, bad calls
 * refused, then a pattern drawn through an mmap of the framebuffer (the
 * test's screendump checks every pixel: tools/petrel/cases.py,
 * "fbpattern") and shown with FBIOPAN_DISPLAY, which returns once the
 * frame is on the screen; then read() and write() of its bytes. Petrel's
 * own: the Linux the bench boots loads no DRM driver for virtio-gpu. */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "lxdev.h"

int main(void)
{
    int fd = open("/dev/fb0", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        printf("open: %s\n", errname(errno));
        return 1;
    }
    struct stat st;
    fstat(fd, &st);
    printf("char device %d, %u:%u, mode %o\n", S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev),
           st.st_mode & 07777);
    struct fb_var v;
    struct fb_fix f;
    SHOW("vscreeninfo", ioctl(fd, FBIOGET_VSCREENINFO, &v));
    printf("%ux%u (virtual %ux%u), %u bits: red %u/%u green %u/%u blue %u/%u transp %u/%u\n", v.xres, v.yres,
           v.xres_virtual, v.yres_virtual, v.bits_per_pixel, v.red[0], v.red[1], v.green[0], v.green[1], v.blue[0],
           v.blue[1], v.transp[0], v.transp[1]);
    SHOW("fscreeninfo", ioctl(fd, FBIOGET_FSCREENINFO, &f));
    printf("id %s, %u bytes, type %u, visual %u, line %u bytes\n", f.id, f.smem_len, f.type, f.visual,
           f.line_length);
    struct fb_var other = v;
    other.xres = 123;
    SHOW("another mode", ioctl(fd, FBIOPUT_VSCREENINFO, &other));
    SHOW("the same mode", ioctl(fd, FBIOPUT_VSCREENINFO, &v));
    SHOW("unknown ioctl", ioctl(fd, 0x46ff, &v));
    SHOW("bad pointer", ioctl(fd, FBIOGET_VSCREENINFO, (void *)8));
    SHOW("mmap past the end", (long)mmap(NULL, f.smem_len + 4096, PROT_READ, MAP_SHARED, fd, 0));
    uint32_t *px = mmap(NULL, f.smem_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (px == MAP_FAILED) {
        printf("mmap: %s\n", errname(errno));
        return 1;
    }
    uint32_t w = v.xres, h = v.yres, stride = f.line_length / 4;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            px[y * stride + x] = (x * 255 / (w - 1)) << 16 | (y * 255 / (h - 1)) << 8 | ((x ^ y) & 0xff);
    /* A child of a fork sees the same pixels (the mapping is the device's, shared). */
    pid_t child = fork();
    if (child == 0)
        _exit(px[7 * stride + 9] == ((9u * 255 / (w - 1)) << 16 | (7u * 255 / (h - 1)) << 8 | (9 ^ 7)) ? 0 : 1);
    int status;
    waitpid(child, &status, 0);
    printf("the child sees the pixels: %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "yes" : "no");
    SHOW("pan", ioctl(fd, FBIOPAN_DISPLAY, &v));
    struct fb_var moved = v;
    moved.yoffset = 1;
    SHOW("pan elsewhere", ioctl(fd, FBIOPAN_DISPLAY, &moved));
    uint32_t row[4];
    SHOW("pread of row 2", pread(fd, row, sizeof(row), 2 * f.line_length));
    printf("row 2 as drawn: %s\n", row[3] == px[2 * stride + 3] ? "yes" : "no");
    SHOW("pwrite past the end", pwrite(fd, row, sizeof(row), f.smem_len));
    SHOW("pread past the end", pread(fd, row, sizeof(row), f.smem_len));
    printf("fb: drawn\n");
    fflush(stdout);
    sleep(2);                                   /* (the test's screendump meanwhile) */
    munmap(px, f.smem_len);
    close(fd);
    printf("fb: done\n");
    return 0;
}
