/* Several Binder devices, each a context of its own (binder_linux's
 * devices=binder,hwbinder,vndbinder; Petrel: the system description's
 * lxrun binder=): one process becomes the context manager of /dev/binder
 * and of /dev/hwbinder, each answering with its device's name; a client
 * calls handle 0 on each device and hears the right one; /dev/vndbinder
 * has no context manager, so its handle 0 is a dead reply; a second
 * context manager of hwbinder is refused, one of vndbinder is not. */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "lxtest.h"
#include "../../bench/linux/binder_rtt.h"

static const char *const names[] = { "binder", "hwbinder", "vndbinder" };

static int dev_open(const char *name)
{
    char path[32];
    snprintf(path, sizeof(path), "/dev/%s", name);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 || mmap(NULL, 65536, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        return -1;
    return fd;
}

/* One write and read; the first reply, transaction or dead reply it read
 * (0: none), that one's data in *tr. */
static uint32_t step(int fd, uint8_t *w, size_t *wl, struct binder_transaction_data *tr)
{
    uint8_t r[256];
    size_t got;
    if (binder_io(&(struct binder){ fd }, w, *wl, r, sizeof(r), &got) != 0)
        return 1;
    *wl = 0;
    uint32_t seen = 0;
    for (size_t at = 0; at < got;) {
        uint32_t cmd;
        memcpy(&cmd, r + at, 4);
        at += 4;
        if (!seen && (cmd == BR_REPLY || cmd == BR_TRANSACTION)) {
            memcpy(tr, r + at, sizeof(*tr));
            seen = cmd;
        } else if (!seen && (cmd == BR_DEAD_REPLY || cmd == BR_FAILED_REPLY)) {
            seen = cmd;
        }
        at += (cmd >> 16) & 0x3fff;
    }
    return seen;
}

/* The context manager of binder and hwbinder: each call is answered with
 * its device's name; it ends when its pipe closes. */
static void manager(int ready)
{
    int fd[2] = { dev_open("binder"), dev_open("hwbinder") };
    int again = -1;
    int set = -1;                               /* (the last program's manager may be going still: bindersg.c) */
    for (int tries = 0; fd[0] >= 0 && tries < 200 && (set = ioctl(fd[0], (int)BINDER_SET_CONTEXT_MGR, 0)) &&
                        errno == EBUSY; tries++)
        usleep(10000);
    if (set || fd[1] < 0 || ioctl(fd[1], (int)BINDER_SET_CONTEXT_MGR, 0) != 0)
        _exit(2);
    int other = dev_open("hwbinder");           /* a second open of hwbinder: a second manager is refused */
    again = ioctl(other, (int)BINDER_SET_CONTEXT_MGR, 0) == 0 ? 0 : errno;
    if (write(ready, &again, sizeof(again)) != sizeof(again))
        _exit(3);
    for (int served = 0; served < 2;) {
        struct pollfd p[2] = { { fd[0], POLLIN, 0 }, { fd[1], POLLIN, 0 } };
        if (poll(p, 2, -1) < 0)
            _exit(4);
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            uint8_t w[256];
            size_t wl = 0;
            struct binder_transaction_data tr;
            uint32_t got = step(fd[i], w, &wl, &tr);
            if (got != BR_TRANSACTION)
                continue;
            wl = binder_put(w, 0, BC_FREE_BUFFER, &tr.buffer, 8);
            struct binder_transaction_data rp = { 0 };
            rp.data_size = strlen(names[i]) + 1;
            rp.buffer = (uint64_t)names[i];
            wl = binder_put(w, wl, BC_REPLY, &rp, sizeof(rp));
            step(fd[i], w, &wl, &tr);
            served++;
        }
    }
    pause();
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    dev_t rdev[3] = { 0 };
    for (int i = 0; i < 3; i++) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "/dev/%s", names[i]);
        int there = stat(path, &st) == 0;
        printf("%s: %s\n", path, there && S_ISCHR(st.st_mode) ? "a character device" : there ? "not a device" : "none");
        rdev[i] = there ? st.st_rdev : 0;
    }
    printf("their minors: %u %u %u\n", minor(rdev[0]), minor(rdev[1]), minor(rdev[2]));
    printf("misc devices (major 10), each its own minor: %d\n", major(rdev[0]) == 10 && major(rdev[1]) == 10 &&
           major(rdev[2]) == 10 && rdev[0] != rdev[1] && rdev[1] != rdev[2] && rdev[0] != rdev[2]);
    int ready[2];
    if (pipe(ready))
        return 1;
    pid_t m = fork();
    if (m == 0) {
        close(ready[0]);
        manager(ready[1]);
    }
    close(ready[1]);
    int again;
    if (read(ready[0], &again, sizeof(again)) != sizeof(again)) {
        printf("the manager did not start\n");
        return 1;
    }
    printf("a second context manager of hwbinder: %s\n", again ? errname(again) : "accepted");
    int fd[3], right = again == EBUSY;
    for (int i = 0; i < 3; i++)
        fd[i] = dev_open(names[i]);
    for (int i = 0; i < 3; i++) {
        uint8_t w[256];
        struct binder_transaction_data tr = { 0 }, call = { 0 };
        size_t wl = binder_put(w, 0, BC_TRANSACTION, &call, sizeof(call));
        uint32_t got;
        while (!(got = step(fd[i], w, &wl, &tr)))
            ;
        if (got == BR_REPLY) {
            printf("handle 0 of /dev/%s: answered by the manager of %.*s\n", names[i], (int)tr.data_size,
                   (const char *)tr.buffer);
            right += i < 2 && !strcmp((const char *)tr.buffer, names[i]);
        } else {
            right += i == 2 && got == BR_DEAD_REPLY;
            printf("handle 0 of /dev/%s: %s\n", names[i], got == BR_DEAD_REPLY ? "BR_DEAD_REPLY" : "other");
        }
    }
    int mgr = ioctl(fd[2], (int)BINDER_SET_CONTEXT_MGR, 0);
    printf("the client becomes the context manager of vndbinder: %s\n", mgr == 0 ? "yes" : errname(errno));
    kill(m, SIGKILL);
    waitpid(m, NULL, 0);
    right += mgr == 0;
    printf("binderdevs: %s\n", right == 5 ? "done" : "FAILED");
    return right == 5 ? 0 : 1;
}
