/* paint: the android-demo system's Linux program (systems/android-demo.toml,
 * run by /etc/android-demo): an ordinary static Linux program that draws
 * its panel into /dev/fb0 through an mmap (the part of the screen its
 * arguments name: left top width height, default the right half of a
 * 640x480 screen) and shows it with FBIOPAN_DISPLAY, and reads the
 * keyboard and the tablet from /dev/input/event0 and event1 with poll.
 * Keys type into its panel, a click puts a square where it fell. On
 * Petrel the personality takes these events from the input dispatcher:
 * they are this program's only while the personality has the focus (a
 * click outside every native window). Escape ends it. It prints each
 * event it acts on. */
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "lxdev.h"
#include "draw.h"

#define EV_SYN      0
#define EV_KEY      1
#define EV_ABS      3
#define BTN_LEFT    0x110
#define KEY_ESC     1

int main(int argc, char **argv)
{
    int fb = open("/dev/fb0", O_RDWR | O_CLOEXEC);
    struct fb_var v;
    struct fb_fix f;
    if (fb < 0 || ioctl(fb, FBIOGET_VSCREENINFO, &v) || ioctl(fb, FBIOGET_FSCREENINFO, &f)) {
        printf("paint: no /dev/fb0: %s\n", errname(errno));
        return 1;
    }
    uint32_t *px = mmap(NULL, f.smem_len, PROT_READ | PROT_WRITE, MAP_SHARED, fb, 0);
    if (px == MAP_FAILED) {
        printf("paint: mmap: %s\n", errname(errno));
        return 1;
    }
    struct canvas cv = { px, v.xres, v.yres, f.line_length / 4 };
    struct panel p = { .x = (int)v.xres / 2, .y = 0, .w = (int)v.xres / 2, .h = (int)v.yres, .title = "LINUX PROGRAM",
                       .background = 0x00204020u, .frame = 0x0040a040u, .focused_frame = 0x0040a040u };
    if (argc == 5)
        p.x = atoi(argv[1]), p.y = atoi(argv[2]), p.w = atoi(argv[3]), p.h = atoi(argv[4]);
    struct pollfd in[2];
    int32_t axis[2][2][6];                      /* each device's ABS_X and ABS_Y: value, min, max, ... */
    int nin = 0;
    for (int i = 0; i < 2; i++) {
        char path[32];
        snprintf(path, sizeof(path), "/dev/input/event%d", i);
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        for (int a = 0; a < 2; a++)
            if (ioctl(fd, EVIOCGABS(a), axis[nin][a]) || axis[nin][a][2] <= axis[nin][a][1])
                axis[nin][a][1] = 0, axis[nin][a][2] = a ? (int32_t)v.yres - 1 : (int32_t)v.xres - 1;
        in[nin++] = (struct pollfd){ fd, POLLIN, 0 };
    }
    if (!nin) {
        printf("paint: no /dev/input/event0 or event1: %s\n", errname(errno));
        return 1;
    }
    panel_draw(&cv, &p);
    ioctl(fb, FBIOPAN_DISPLAY, &v);
    printf("paint: ready\n");
    fflush(stdout);
    int at[2] = { 0, 0 };
    for (;;) {
        if (poll(in, (nfds_t)nin, -1) < 0) {
            printf("paint: poll: %s\n", errname(errno));
            return 1;
        }
        for (int i = 0; i < nin; i++) {
            struct ev e[16];
            long got = (in[i].revents & POLLIN) ? read(in[i].fd, e, sizeof(e)) : 0;
            int changed = 0;
            for (long k = 0; k < got / (long)sizeof(e[0]); k++) {
                if (e[k].type == EV_ABS && e[k].code <= 1) {
                    /* (scaled to the screen from the axis's range: on Petrel's desktop its pixels already) */
                    const int32_t *r = axis[i][e[k].code];
                    int64_t span = (int64_t)r[2] - r[1] + 1, size = e[k].code ? v.yres : v.xres;
                    at[e[k].code] = (int)(((int64_t)e[k].value - r[1]) * size / span);
                } else if (e[k].type == EV_KEY && e[k].code == BTN_LEFT && e[k].value == 1) {
                    printf("paint: click %d %d\n", at[0], at[1]);
                    panel_click(&p, at[0], at[1]);
                    changed = 1;
                } else if (e[k].type == EV_KEY && e[k].code == KEY_ESC && e[k].value == 1) {
                    printf("paint: %u keys, %u clicks: bye\n", p.keys, p.clicks);
                    return 0;
                } else if (e[k].type == EV_KEY && e[k].code < BTN_LEFT && e[k].value == 1) {
                    char ch = draw_key_char(e[k].code);
                    printf("paint: key %u %c\n", e[k].code, ch ? ch : '?');
                    panel_key(&p, e[k].code);
                    changed = 1;
                }
                if (changed && e[k].type == EV_SYN) {
                    panel_draw(&cv, &p);
                    ioctl(fb, FBIOPAN_DISPLAY, &v);     /* (returns once the frame is on the screen) */
                    printf("paint: shown\n");
                    changed = 0;
                }
            }
            fflush(stdout);
        }
    }
}
