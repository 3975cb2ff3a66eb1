/* /dev/input/event0 of a virtio keyboard (Linux's evdev; on Petrel the
 * input service's events through the input path's ring): what the device
 * says of itself through evdev's ioctls, errors of bad calls, then keys
 * the test presses through QEMU's QMP once this prints "evdev: ready" and
 * "evdev: grabbed": each event read in order (type, code, value; its time
 * only checked against the clock), the grab giving one descriptor every
 * event, events written to the device read back, the monotonic clock. */
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lxdev.h"

#define KEY_ENTER 28
#define KEY_B     48
#define KEY_X     45

static int64_t clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec;
}

/* Read events from fd until a SYN_REPORT after a release of `last`; print them. */
static void read_until(int fd, const char *who, int last, clockid_t clk)
{
    int done = 0, n = 0, late = 0;
    int seen_last = 0;
    while (!done && n < 200) {
        struct ev e[8];
        long got = read(fd, e, sizeof(e));
        if (got < 0) {
            printf("%s read: %s\n", who, errname(errno));
            return;
        }
        if (got % sizeof(struct ev)) {
            printf("%s read %ld: not whole events\n", who, got);
            return;
        }
        for (long i = 0; i < got / (long)sizeof(struct ev); i++, n++) {
            printf("%s: %u %u %d\n", who, e[i].type, e[i].code, e[i].value);
            int64_t now = clock_s(clk);
            late += e[i].sec > now || e[i].sec < now - 30 || e[i].usec < 0 || e[i].usec >= 1000000;
            if (e[i].type == 1 && e[i].code == last && e[i].value == 0)
                seen_last = 1;
            if (seen_last && e[i].type == 0 && e[i].code == 0)
                done = 1;
        }
    }
    printf("%s: times within the clock's last 30 s: %s\n", who, late ? "no" : "yes");
}

int main(void)
{
    int fd = open_device("/dev/input/event0", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        printf("open: %s\n", errname(errno));
        return 1;
    }
    struct stat st;
    fstat(fd, &st);
    printf("char device %d, %u:%u, mode %o\n", S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev),
           st.st_mode & 07777);
    int v = 0;
    SHOW("version", ioctl(fd, EVIOCGVERSION, &v));
    printf("version: %#x\n", v);
    uint16_t id[4] = { 0 };
    SHOW("id", ioctl(fd, EVIOCGID, id));
    printf("id: bus %#x vendor %#x product %#x version %#x\n", id[0], id[1], id[2], id[3]);
    char s[256];
    memset(s, 'x', sizeof(s));
    SHOW("name", ioctl(fd, EVIOCGNAME(sizeof(s)), s));
    printf("name: %s\n", s);
    memset(s, 'x', sizeof(s));
    SHOW("name in 5 bytes", ioctl(fd, EVIOCGNAME(5), s));
    printf("name in 5 bytes: %.5s|\n", s);
    memset(s, 0, sizeof(s));
    SHOW("phys", ioctl(fd, EVIOCGPHYS(sizeof(s)), s));
    printf("phys: %s\n", s);
    memset(s, 0, sizeof(s));
    SHOW("uniq", ioctl(fd, EVIOCGUNIQ(sizeof(s)), s));
    show_bits("props", fd, EVIOCGPROP(128));
    show_bits("types", fd, EVIOCGBIT(0, 128));
    static const struct { int type; const char *name; } types[] = {
        { 1, "keys" }, { 2, "rel" }, { 3, "abs" }, { 4, "msc" }, { 5, "sw" }, { 0x11, "leds" }, { 0x12, "snd" },
        { 0x14, "rep" }, { 0x15, "ff" },
    };
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        show_bits(types[i].name, fd, EVIOCGBIT(types[i].type, 128));
    show_bits("keys in 4 bytes", fd, EVIOCGBIT(1, 4));
    show_bits("key state", fd, EVIOCGKEY(128));
    show_bits("led state", fd, EVIOCGLED(128));
    unsigned rep[2] = { 0 };
    SHOW("rep", ioctl(fd, EVIOCGREP, rep));
    int32_t abs[6];
    SHOW("abs x", ioctl(fd, EVIOCGABS(0), abs));
    SHOW("unknown ioctl", ioctl(fd, IOC(IOC_R, 0x7f, 4), &v));
    SHOW("other type", ioctl(fd, 0x80045401, &v));
    SHOW("bad pointer", ioctl(fd, EVIOCGNAME(64), (void *)8));
    struct ev e[2];
    SHOW("read 10 bytes", read(fd, e, 10));
    SHOW("read 0 bytes", read(fd, e, 0));
    int nb = open("/dev/input/event0", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    SHOW("nonblocking read", read(nb, e, sizeof(e)));
    struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
    SHOW("poll now", poll(&p, 1, 0));
    printf("revents: %#x\n", p.revents);

    printf("evdev: ready\n");
    fflush(stdout);
    p.events = POLLIN;
    SHOW("poll for keys", poll(&p, 1, 20000));
    printf("revents: %#x\n", p.revents);
    read_until(fd, "fd", KEY_ENTER, CLOCK_REALTIME);
    read_until(nb, "nb", KEY_ENTER, CLOCK_REALTIME);
    show_bits("key state after", fd, EVIOCGKEY(128));

    SHOW("grab", ioctl(nb, EVIOCGRAB, 1));
    SHOW("grab again", ioctl(nb, EVIOCGRAB, 1));
    SHOW("grab by another", ioctl(fd, EVIOCGRAB, 1));
    SHOW("ungrab by another", ioctl(fd, EVIOCGRAB, 0));
    printf("evdev: grabbed\n");
    fflush(stdout);
    int blocking = fcntl(nb, F_GETFL);
    fcntl(nb, F_SETFL, blocking & ~O_NONBLOCK);
    read_until(nb, "grabber", KEY_B, CLOCK_REALTIME);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    SHOW("other during the grab", read(fd, e, sizeof(e)));
    SHOW("ungrab", ioctl(nb, EVIOCGRAB, 0));

    /* Events written to the device: every client reads them. */
    struct ev w[4] = { { 0, 0, 1, KEY_X, 1 }, { 0, 0, 0, 0, 0 }, { 0, 0, 1, KEY_X, 0 }, { 0, 0, 0, 0, 0 } };
    SHOW("write 10 bytes", write(fd, w, 10));
    SHOW("write", write(fd, w, sizeof(w)));
    SHOW("write a key not pressed", write(fd, &w[2], 2 * sizeof(w[0])));
    read_until(nb, "written", KEY_X, CLOCK_REALTIME);
    show_bits("key state with events queued", fd, EVIOCGKEY(128));
    SHOW("what is left to read", read(fd, e, sizeof(e)));
    printf("left: %u %u %d\n", e[0].type, e[0].code, e[0].value);
    SHOW("write once more", write(nb, w, sizeof(w)));
    int mono = CLOCK_MONOTONIC;
    SHOW("monotonic", ioctl(fd, EVIOCSCLOCKID, &mono));
    int bad = 5;
    SHOW("bad clock", ioctl(fd, EVIOCSCLOCKID, &bad));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    SHOW("write again", write(nb, w, sizeof(w)));
    read_until(fd, "monotonic", KEY_X, CLOCK_MONOTONIC);

    /* A key held down (800 ms): the input core repeats it from REP_DELAY
     * (250 ms) on, every REP_PERIOD (33 ms), each repeat (value 2) in a
     * packet of its own ended by a SYN_REPORT of value 1, until it is
     * released. How many come depends on the host's timing: at least 3. */
    printf("evdev: hold\n");
    fflush(stdout);
    int presses = 0, repeats = 0, releases = 0, syn_ones = 0, others = 0, after_repeat = 0, first = 1;
    int64_t pressed_us = 0, first_repeat_us = 0;
    for (int done = 0, n = 0; !done && n < 2000; n++) {
        struct ev h;
        if (read(fd, &h, sizeof(h)) != (long)sizeof(h)) {
            printf("hold read: %s\n", errname(errno));
            break;
        }
        int64_t us = h.sec * 1000000 + h.usec;
        if (h.type == 1 && h.code == 30) {
            presses += h.value == 1;
            releases += h.value == 0;
            if (h.value == 1)
                pressed_us = us;
            if (h.value == 2 && !repeats++)
                first_repeat_us = us;
            after_repeat = h.value == 2;
        } else if (h.type == 0 && h.code == 0) {
            syn_ones += after_repeat && h.value == 1;
            done = releases > 0;
            after_repeat = 0;
        } else if (!(h.type == 4 && h.code == 4)) {   /* (EV_MSC MSC_SCAN: a key's scan code, on Linux alone) */
            others++;
        }
        first = 0;
    }
    (void)first;
    int64_t delay_ms = (first_repeat_us - pressed_us) / 1000;
    printf("hold: pressed %d, released %d, repeated at least 3 times %d, each repeat's SYN_REPORT of value 1 %d, "
           "other events %d, first repeat after 250 to 400 ms %d\n", presses, releases, repeats >= 3,
           syn_ones == repeats, others, delay_ms >= 250 && delay_ms < 400);
    close(nb);
    close(fd);
    printf("evdev: done\n");
    return 0;
}
