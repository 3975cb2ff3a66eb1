/* /dev/input/event0 of a virtio tablet, the machine's only input device
 * (Linux's evdev; on Petrel the input service's events through the input
 * path's ring): what the device says of itself, then clicks the test
 * makes through QEMU's QMP once this prints "tablet: ready" (each a move
 * with the left button down, then the button up), read in order: the
 * absolute axes in the device's own units, an unchanged position not
 * reported again, the button's state between the clicks. */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lxdev.h"

#define BTN_LEFT  0x110

static void show_abs(const char *what, int fd, int axis)
{
    int32_t a[6] = { 0 };
    SHOW(what, ioctl(fd, EVIOCGABS(axis), a));
    printf("%s: value %d, min %d, max %d, fuzz %d, flat %d, resolution %d\n", what, a[0], a[1], a[2], a[3], a[4],
           a[5]);
}

/* Events until the SYN_REPORT after the `clicks`th release of the left button. */
static void read_clicks(int fd, int clicks)
{
    int released = 0;
    for (int n = 0; n < 200; ) {
        struct ev e[8];
        long got = read(fd, e, sizeof(e));
        if (got <= 0 || got % (long)sizeof(struct ev)) {
            printf("read: %ld %s\n", got, errname(errno));
            return;
        }
        for (long i = 0; i < got / (long)sizeof(struct ev); i++, n++) {
            printf("event: %u %u %d\n", e[i].type, e[i].code, e[i].value);
            released += e[i].type == 1 && e[i].code == BTN_LEFT && e[i].value == 0;
            if (released == clicks && e[i].type == 0 && e[i].code == 0)
                return;
        }
    }
}

int main(void)
{
    int fd = open_device("/dev/input/event0", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        printf("open: %s\n", errname(errno));
        return 1;
    }
    struct stat st;
    fstat(fd, &st);
    printf("char device %d, %u:%u\n", S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev));
    uint16_t id[4] = { 0 };
    SHOW("id", ioctl(fd, EVIOCGID, id));
    printf("id: bus %#x vendor %#x product %#x version %#x\n", id[0], id[1], id[2], id[3]);
    char s[256];
    memset(s, 0, sizeof(s));
    SHOW("name", ioctl(fd, EVIOCGNAME(sizeof(s)), s));
    printf("name: %s\n", s);
    show_bits("props", fd, EVIOCGPROP(128));
    show_bits("types", fd, EVIOCGBIT(0, 128));
    show_bits("keys", fd, EVIOCGBIT(1, 128));
    show_bits("rel", fd, EVIOCGBIT(2, 128));
    show_bits("abs", fd, EVIOCGBIT(3, 128));
    show_abs("abs x", fd, 0);
    show_abs("abs y", fd, 1);
    show_abs("abs z", fd, 2);
    printf("tablet: ready\n");
    fflush(stdout);
    struct pollfd p = { fd, POLLIN, 0 };
    SHOW("poll for clicks", poll(&p, 1, 20000));
    read_clicks(fd, 3);
    show_abs("abs x after", fd, 0);
    show_abs("abs y after", fd, 1);
    show_bits("button state after", fd, EVIOCGKEY(128));
    close(fd);
    printf("tablet: done\n");
    return 0;
}
