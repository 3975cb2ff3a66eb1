/* Freezing a process's binder (BINDER_FREEZE, BINDER_GET_FROZEN_INFO), as
 * Android's freezer does to cached apps: a call to a frozen process fails
 * with BR_FROZEN_REPLY (its extended error says so), a one-way call waits
 * for it, and what came while it was frozen is reported; freezing fails
 * with EAGAIN while calls to the process are not done, after waiting up
 * to the timeout given, and the process is then not frozen; an unknown
 * pid is EINVAL, and so is a process that has ended; bad pointers are
 * EFAULT; a process may freeze itself. The server (the context manager) answers calls; after
 * code 5 it stops reading until the client lets it go on, and code 6 it
 * answers only then, so that what waits for it is known. Only the client
 * prints. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include "lxtest.h"
#include "../../bench/linux/binder_rtt.h"

#define MAP 65536

static uint8_t r[512];

/* Reads (after writing w) until one of BR_REPLY, BR_FAILED_REPLY,
 * BR_DEAD_REPLY, BR_FROZEN_REPLY, or for a one-way call
 * BR_TRANSACTION_COMPLETE; the commands read named into `seen`. */
static uint32_t call(int fd, uint32_t code, uint32_t flags, char *seen, size_t room)
{
    struct binder_transaction_data tr = { 0 };
    tr.code = code;
    tr.flags = flags;
    uint8_t w[80];
    size_t wl = binder_put(w, 0, BC_TRANSACTION, &tr, sizeof(tr));
    seen[0] = 0;
    for (;;) {
        struct binder_write_read b = { wl, 0, (uint64_t)w, sizeof(r), 0, (uint64_t)r };
        wl = 0;
        if (ioctl(fd, (int)BINDER_WRITE_READ, &b) != 0)
            return 0;
        for (size_t at = 0; at < b.read_consumed;) {
            uint32_t cmd;
            memcpy(&cmd, r + at, 4);
            at += 4;
            const char *n = cmd == BR_NOOP ? "BR_NOOP" : cmd == BR_TRANSACTION_COMPLETE ? "BR_TRANSACTION_COMPLETE" :
                            cmd == BR_REPLY ? "BR_REPLY" : cmd == BR_FAILED_REPLY ? "BR_FAILED_REPLY" :
                            cmd == BR_DEAD_REPLY ? "BR_DEAD_REPLY" : cmd == BR_FROZEN_REPLY ? "BR_FROZEN_REPLY" : "?";
            snprintf(seen + strlen(seen), room - strlen(seen), "%s%s", seen[0] ? " " : "", n);
            if (cmd == BR_REPLY) {
                memcpy(&tr, r + at, sizeof(tr));
                uint8_t f[16];
                struct binder_write_read fb = { binder_put(f, 0, BC_FREE_BUFFER, &tr.buffer, 8), 0,
                                                (uint64_t)f, 0, 0, 0 };
                ioctl(fd, (int)BINDER_WRITE_READ, &fb);
            }
            at += (cmd >> 16) & 0x3fff;
            if (cmd == BR_REPLY || cmd == BR_FAILED_REPLY || cmd == BR_DEAD_REPLY || cmd == BR_FROZEN_REPLY ||
                (cmd == BR_TRANSACTION_COMPLETE && (flags & TF_ONE_WAY)))
                return cmd;
        }
    }
}

static void freeze(int fd, const char *what, uint32_t pid, uint32_t enable, uint32_t timeout_ms)
{
    struct binder_freeze_info fi = { pid, enable, timeout_ms };
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int e = ioctl(fd, (int)BINDER_FREEZE, &fi);
    int err = errno;
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    printf("client: %s: %d %s", what, e, e ? errname(err) : "");
    if (timeout_ms)
        printf(", waited its %u ms: %d", timeout_ms, ms >= (long)timeout_ms - 5);
    printf("\n");
}

static void info(int fd, const char *when, uint32_t pid)
{
    struct binder_frozen_status_info si = { pid, 7, 7 };
    int e = ioctl(fd, (int)BINDER_GET_FROZEN_INFO, &si);
    printf("client: frozen info %s: %d %s sync %u async %u\n", when, e, e ? errname(errno) : "", si.sync_recv,
           si.async_recv);
}

static void extended(int fd)
{
    struct binder_extended_error ee = { 7, 7, 7 };
    int e = ioctl(fd, (int)BINDER_GET_EXTENDED_ERROR, &ee);
    printf("client: extended error: %d, frozen %d, param %d\n", e, ee.command == BR_FROZEN_REPLY, ee.param);
}

/* The server: answers each call; after code 5, waits for a byte on `go`
 * before it reads again; tells `ack` of each one-way call it read. */
static void server(int ready, int go, int ack)
{
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    if (fd < 0 || mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        _exit(2);
    int set = -1;
    for (int tries = 0; tries < 200 && (set = ioctl(fd, (int)BINDER_SET_CONTEXT_MGR, 0)) && errno == EBUSY; tries++)
        usleep(10000);
    if (set)
        _exit(2);
    write(ready, "r", 1);
    uint8_t w[160];
    size_t wl = binder_put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    int pause = 0;
    for (;;) {
        if (pause) {
            struct binder_write_read b = { wl, 0, (uint64_t)w, 0, 0, 0 };    /* (the reply goes first) */
            ioctl(fd, (int)BINDER_WRITE_READ, &b);
            wl = 0;
            char c;
            if (read(go, &c, 1) != 1)
                _exit(0);
            pause = 0;
        }
        size_t got;
        if (binder_io(&(struct binder){ fd }, w, wl, r, sizeof(r), &got) < 0)
            _exit(3);
        wl = 0;
        for (size_t at = 0; at < got;) {
            uint32_t cmd;
            memcpy(&cmd, r + at, 4);
            at += 4;
            if (cmd == BR_TRANSACTION) {
                struct binder_transaction_data tr;
                memcpy(&tr, r + at, sizeof(tr));
                wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
                if (tr.flags & TF_ONE_WAY) {
                    write(ack, "o", 1);
                } else {
                    if (tr.code == 9)
                        _exit(0);
                    if (tr.code == 6) {
                        char c;                 /* (held until the client says) */
                        write(ack, "h", 1);
                        if (read(go, &c, 1) != 1)
                            _exit(0);
                    }
                    struct binder_transaction_data rp = { 0 };
                    wl = binder_put(w, wl, BC_REPLY, &rp, sizeof(rp));
                    pause = tr.code == 5;
                }
            }
            at += (cmd >> 16) & 0x3fff;
        }
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int ready[2], go[2], ack[2];
    if (pipe(ready) || pipe(go) || pipe(ack))
        return 1;
    pid_t s = fork();
    if (s == 0) {
        close(ready[0]);
        server(ready[1], go[0], ack[1]);
    }
    char c;
    close(ready[1]);
    if (read(ready[0], &c, 1) != 1) {
        printf("no server\n");
        return 1;
    }
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    if (fd < 0 || mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        return 1;
    char seen[200];

    freeze(fd, "freeze a pid without binder", 0x7ffffff0, 1, 0);
    info(fd, "of a pid without binder", 0x7ffffff0);
    info(fd, "before", (uint32_t)s);
    call(fd, 1, 0, seen, sizeof(seen));
    printf("client: a call: %s\n", seen);

    /* The server stops reading; it is frozen. */
    call(fd, 5, 0, seen, sizeof(seen));
    printf("client: a call after which the server waits: %s\n", seen);
    freeze(fd, "freeze the server", (uint32_t)s, 1, 0);
    info(fd, "once frozen", (uint32_t)s);
    call(fd, 1, 0, seen, sizeof(seen));
    printf("client: a call to the frozen server: %s\n", seen);
    extended(fd);
    info(fd, "after a call", (uint32_t)s);
    call(fd, 2, TF_ONE_WAY, seen, sizeof(seen));
    printf("client: a one-way call to it: %s\n", seen);
    info(fd, "after a one-way call", (uint32_t)s);
    freeze(fd, "freeze it again with the one-way call waiting", (uint32_t)s, 1, 0);
    info(fd, "after that", (uint32_t)s);

    /* It reads again: the one-way call, then a call. */
    write(go[1], "g", 1);
    call(fd, 1, 0, seen, sizeof(seen));
    printf("client: a call to it once it reads again: %s\n", seen);
    read(ack[0], &c, 1);
    printf("client: the server read the one-way call\n");
    freeze(fd, "freeze it with nothing waiting", (uint32_t)s, 1, 0);
    info(fd, "frozen again", (uint32_t)s);
    freeze(fd, "unfreeze it", (uint32_t)s, 0, 0);
    info(fd, "unfrozen", (uint32_t)s);
    call(fd, 1, 0, seen, sizeof(seen));
    printf("client: a call: %s\n", seen);

    /* A call the server holds: freezing waits for it, in vain. */
    pid_t h = fork();
    if (h == 0) {
        int hfd = open("/dev/binder", O_RDWR | O_CLOEXEC);
        if (hfd < 0 || mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, hfd, 0) == MAP_FAILED)
            _exit(1);
        char hs[200];
        _exit(call(hfd, 6, 0, hs, sizeof(hs)) == BR_REPLY ? 0 : 1);
    }
    read(ack[0], &c, 1);                        /* (the held call reached the server) */
    freeze(fd, "freeze it while it holds a call", (uint32_t)s, 1, 50);
    info(fd, "after that", (uint32_t)s);
    write(go[1], "g", 1);
    int st = 0;
    waitpid(h, &st, 0);
    printf("client: the held call got its reply: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    freeze(fd, "freeze it with nothing held", (uint32_t)s, 1, 50);
    freeze(fd, "unfreeze it", (uint32_t)s, 0, 0);
    call(fd, 9, 0, seen, sizeof(seen));
    waitpid(s, &st, 0);
    printf("client: the server ended: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);

    /* Bad requests: a process that has ended, pointers that reach nothing,
     * and this process itself (any non-zero enable freezes). */
    freeze(fd, "freeze the ended server", (uint32_t)s, 1, 0);
    info(fd, "of the ended server", (uint32_t)s);
    errno = 0;
    int e = ioctl(fd, (int)BINDER_FREEZE, (void *)8);
    printf("client: freeze through a bad pointer: %d %s\n", e, errname(errno));
    errno = 0;
    e = ioctl(fd, (int)BINDER_GET_FROZEN_INFO, (void *)8);
    printf("client: frozen info through a bad pointer: %d %s\n", e, errname(errno));
    freeze(fd, "freeze itself with enable 2", (uint32_t)getpid(), 2, 0);
    info(fd, "of itself", (uint32_t)getpid());
    freeze(fd, "unfreeze itself", (uint32_t)getpid(), 0, 0);
    freeze(fd, "unfreeze itself again", (uint32_t)getpid(), 0, 0);
    info(fd, "of itself unfrozen", (uint32_t)getpid());
    freeze(fd, "freeze pid 0", 0, 1, 0);
    printf("binderfreeze: done\n");
    return 0;
}
