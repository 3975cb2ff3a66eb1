/* Binder objects and their counts across three processes: a service (B)
 * registers its node with the context manager (A), a client (C) looks it
 * up, gets a handle through A, calls it, lets it go; B hears BR_INCREFS,
 * BR_ACQUIRE, BR_RELEASE, BR_DECREFS as the counts go. Each process keeps
 * its own log (every return it reads, in order); the parent prints the
 * three logs one after another at the end. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "lxtest.h"
#include "../../bench/linux/binder_rtt.h"

static char logbuf[8192];
static size_t loglen;

static void say(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, f, ap);
    va_end(ap);
    if (n > 0)
        loglen += (size_t)n < sizeof(logbuf) - loglen ? (size_t)n : sizeof(logbuf) - loglen - 1;
}

static const char *name(uint32_t cmd)
{
    switch (cmd) {
    case BR_TRANSACTION: return "TRANSACTION";
    case BR_REPLY: return "REPLY";
    case BR_NOOP: return "NOOP";
    case BR_TRANSACTION_COMPLETE: return "COMPLETE";
    case BR_DEAD_REPLY: return "DEAD_REPLY";
    case BR_FAILED_REPLY: return "FAILED_REPLY";
    case BR_INCREFS: return "INCREFS";
    case BR_ACQUIRE: return "ACQUIRE";
    case BR_RELEASE: return "RELEASE";
    case BR_DECREFS: return "DECREFS";
    case BR_DEAD_BINDER: return "DEAD_BINDER";
    case BR_CLEAR_DEATH_NOTIFICATION_DONE: return "CLEAR_DEATH_NOTIFICATION_DONE";
    default: return "?";
    }
}

/* One BINDER_WRITE_READ: logs what it read as "who: [A B C]"; the last
 * transaction or reply in *tr; node commands answered in *w (INCREFS_DONE,
 * ACQUIRE_DONE) for the next write. Returns the last command read. */
static uint32_t step(const char *who, int fd, uint8_t *w, size_t *wl, struct binder_transaction_data *tr)
{
    static uint8_t r[512];
    struct binder_write_read b = { *wl, 0, (uint64_t)w, sizeof(r), 0, (uint64_t)r };
    if (ioctl(fd, (int)BINDER_WRITE_READ, &b) != 0) {
        say("%s: ioctl %s\n", who, errname(errno));
        exit(1);
    }
    *wl = 0;
    uint32_t last = 0;
    say("%s: [", who);
    for (size_t at = 0; at < b.read_consumed;) {
        uint32_t cmd;
        memcpy(&cmd, r + at, 4);
        at += 4;
        say("%s%s", at > 4 ? " " : "", name(cmd));
        if (cmd == BR_TRANSACTION || cmd == BR_REPLY) {
            memcpy(tr, r + at, sizeof(*tr));
            last = cmd;
        } else if (cmd == BR_INCREFS || cmd == BR_ACQUIRE || cmd == BR_RELEASE || cmd == BR_DECREFS) {
            uint64_t pc[2];
            memcpy(pc, r + at, 16);
            say(" %llx/%llx", (unsigned long long)pc[0], (unsigned long long)pc[1]);
            if (cmd == BR_INCREFS)
                *wl = binder_put(w, *wl, BC_INCREFS_DONE, pc, 16);
            if (cmd == BR_ACQUIRE)
                *wl = binder_put(w, *wl, BC_ACQUIRE_DONE, pc, 16);
            if (!last)
                last = cmd;
        } else if (cmd == BR_DEAD_REPLY || cmd == BR_FAILED_REPLY) {
            last = cmd;
        } else if (cmd == BR_DEAD_BINDER || cmd == BR_CLEAR_DEATH_NOTIFICATION_DONE) {
            uint64_t cookie;
            memcpy(&cookie, r + at, 8);
            say(" %llx", (unsigned long long)cookie);
            last = cmd;
        }
        at += (cmd >> 16) & 0x3fff;
    }
    say("]\n");
    return last;
}

/* Wait for a reply (or an error) to what *w holds. */
static uint32_t until_reply(const char *who, int fd, uint8_t *w, size_t *wl, struct binder_transaction_data *tr)
{
    for (;;) {
        uint32_t got = step(who, fd, w, wl, tr);
        if (got == BR_REPLY || got == BR_DEAD_REPLY || got == BR_FAILED_REPLY)
            return got;
    }
}

static size_t call(uint8_t *w, size_t wl, uint32_t handle, uint32_t code, const void *data, size_t len,
                   const uint64_t *offsets, size_t noff)
{
    return binder_put_txn(w, wl, BC_TRANSACTION, handle, code, 0, data, len, offsets, noff);
}

static size_t reply(uint8_t *w, size_t wl, const void *data, size_t len, const uint64_t *offsets, size_t noff)
{
    return binder_put_txn(w, wl, BC_REPLY, 0, 0, 0, data, len, offsets, noff);
}

/* An open and mapped /dev/binder, its thread made by a first ioctl: a
 * new thread's first read returns at once, reply or not (Linux's
 * looper_need_return), and whether the reply was there already would
 * depend on which core ran first; made here, each read waits for it. */
static int bopen(void)
{
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    int32_t version;
    if (fd < 0 || mmap(NULL, 128 * 1024, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED ||
        ioctl(fd, (int)BINDER_VERSION, &version) != 0)
        exit(1);
    return fd;
}

static void finish(int out)
{
    write(out, logbuf, loglen);
    close(out);
    _exit(0);
}

/* A: the context manager, keeping one registered handle. */
static void manager(int ready, int out)
{
    int fd = bopen();
    if (ioctl(fd, (int)BINDER_SET_CONTEXT_MGR, 0) != 0)
        exit(1);
    write(ready, "a", 1);
    static uint8_t w[512];
    size_t wl = binder_put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    uint32_t kept = 0;
    static struct flat_binder_object obj;
    static const uint64_t off0[1] = { 0 };
    for (;;) {
        struct binder_transaction_data tr = { 0 };
        if (step("A", fd, w, &wl, &tr) != BR_TRANSACTION)
            continue;
        const struct flat_binder_object *in = (const struct flat_binder_object *)(uintptr_t)tr.buffer;
        wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
        if (tr.code == 1) {                     /* register: keep the handle */
            say("A: register: %s handle %u, offsets %llu\n", in->type == BINDER_TYPE_HANDLE ? "a" : "not a",
                (unsigned)in->binder, (unsigned long long)tr.offsets_size);
            kept = (uint32_t)in->binder;
            /* (acquired before the buffer, which holds a count of it, goes) */
            struct binder_write_read b0;
            uint8_t w0[16];
            size_t l0 = binder_put(w0, 0, BC_ACQUIRE, &kept, 4);
            l0 = binder_put(w0, l0, BC_INCREFS, &kept, 4);
            b0 = (struct binder_write_read){ l0, 0, (uint64_t)w0, 0, 0, 0 };
            ioctl(fd, (int)BINDER_WRITE_READ, &b0);
            wl = reply(w, wl, "ok", 2, NULL, 0);
        } else if (tr.code == 2) {              /* look up: the handle back */
            obj = (struct flat_binder_object){ BINDER_TYPE_HANDLE, 0, kept, 0 };
            say("A: lookup\n");
            wl = reply(w, wl, &obj, sizeof(obj), off0, 1);
        } else if (tr.code == 3) {              /* let it go */
            say("A: release\n");
            wl = binder_put(w, wl, BC_RELEASE, &kept, 4);
            wl = binder_put(w, wl, BC_DECREFS, &kept, 4);
            wl = reply(w, wl, "ok", 2, NULL, 0);
        } else {
            wl = reply(w, wl, "bye", 3, NULL, 0);
            struct binder_transaction_data t2;
            step("A", fd, w, &wl, &t2);
            finish(out);
        }
    }
}

/* B: the service, registered with a node of its own. */
static void service(int ready, int out)
{
    int fd = bopen();
    static uint8_t w[512];
    static struct flat_binder_object obj = { BINDER_TYPE_BINDER, FLAT_BINDER_FLAG_ACCEPTS_FDS, 0xb0b0, 0xc0c0 };
    static const uint64_t off0[1] = { 0 };
    size_t wl = call(w, 0, 0, 1, &obj, sizeof(obj), off0, 1);
    struct binder_transaction_data tr;
    uint32_t got = until_reply("B", fd, w, &wl, &tr);
    say("B: registered: %s\n", name(got));
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    wl = binder_put(w, wl, BC_ENTER_LOOPER, NULL, 0);
    write(ready, "b", 1);
    for (int rounds = 0; rounds < 20; rounds++) {
        uint8_t saw[512];
        size_t before = loglen;
        uint32_t last = step("B", fd, w, &wl, &tr);
        memcpy(saw, logbuf + before, loglen - before < sizeof(saw) - 1 ? loglen - before : sizeof(saw) - 1);
        saw[loglen - before < sizeof(saw) - 1 ? loglen - before : sizeof(saw) - 1] = 0;
        if (last == BR_TRANSACTION) {
            say("B: call %u to %llx/%llx\n", tr.code, (unsigned long long)tr.target, (unsigned long long)tr.cookie);
            static char got[64];
            size_t n = 4;
            memcpy(got, "pong", 4);
            if (tr.code == 6) {                 /* a descriptor: what it reads */
                const struct flat_binder_object *in = (const struct flat_binder_object *)(uintptr_t)tr.buffer;
                int fd = (int)(uint32_t)in->binder;
                int flags = fcntl(fd, F_GETFD);
                ssize_t k = read(fd, got, sizeof(got));
                n = k > 0 ? (size_t)k : 0;
                say("B: a descriptor of type %s, close-on-exec %d, read %zd bytes\n",
                    in->type == BINDER_TYPE_FD ? "fd" : "?", flags >= 0 && (flags & FD_CLOEXEC), k);
                close(fd);
            }
            wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
            wl = reply(w, wl, got, n, NULL, 0);
        }
        if (strstr((char *)saw, "DECREFS"))
            finish(out);
    }
    finish(out);
}

static size_t death(uint8_t *w, size_t wl, uint32_t cmd, uint32_t h, uint64_t cookie)
{
    uint8_t hc[12];
    memcpy(hc, &h, 4);
    memcpy(hc + 4, &cookie, 8);
    return binder_put(w, wl, cmd, hc, 12);
}

/* D: a second service, killed while C watches it. */
static void doomed(int ready)
{
    int fd = bopen();
    static uint8_t w[512];
    static struct flat_binder_object obj = { BINDER_TYPE_BINDER, 0, 0xd0d0, 0xe0e0 };
    static const uint64_t off0[1] = { 0 };
    size_t wl = call(w, 0, 0, 1, &obj, sizeof(obj), off0, 1);
    struct binder_transaction_data tr;
    until_reply("D", fd, w, &wl, &tr);
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    wl = binder_put(w, wl, BC_ENTER_LOOPER, NULL, 0);
    write(ready, "d", 1);
    for (;;)
        step("D", fd, w, &wl, &tr);
}

static int go[2], armed[2];

/* C: the client. */
static void client(int out)
{
    int fd = bopen();
    static uint8_t w[512];
    struct binder_transaction_data tr;
    size_t wl = call(w, 0, 0, 2, "?", 1, NULL, 0);
    until_reply("C", fd, w, &wl, &tr);
    const struct flat_binder_object *in = (const struct flat_binder_object *)(uintptr_t)tr.buffer;
    uint32_t h = (uint32_t)in->binder;
    say("C: looked up: %s handle %u, offsets %llu\n", in->type == BINDER_TYPE_HANDLE ? "a" : "not a", (unsigned)h,
        (unsigned long long)tr.offsets_size);
    wl = binder_put(w, wl, BC_ACQUIRE, &h, 4);
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    wl = call(w, wl, h, 5, "ping", 4, NULL, 0);
    uint32_t got = until_reply("C", fd, w, &wl, &tr);
    say("C: call through handle %u: %s %.*s\n", (unsigned)h, name(got), got == BR_REPLY ? (int)tr.data_size : 0,
        (const char *)(uintptr_t)tr.buffer);
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);

    /* a pipe's read end passed to B, which takes descriptors */
    int p[2];
    pipe(p);
    write(p[1], "through binder", 14);
    close(p[1]);
    static struct flat_binder_object fdo;
    static const uint64_t off0[1] = { 0 };
    fdo = (struct flat_binder_object){ BINDER_TYPE_FD, 0, (uint64_t)p[0], 0 };
    wl = call(w, wl, h, 6, &fdo, sizeof(fdo), off0, 1);
    got = until_reply("C", fd, w, &wl, &tr);
    say("C: a descriptor to B: %s %.*s\n", name(got), got == BR_REPLY ? (int)tr.data_size : 0,
        (const char *)(uintptr_t)tr.buffer);
    if (got == BR_REPLY)
        wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    close(p[0]);
    fdo.binder = 999;
    wl = call(w, wl, h, 6, &fdo, sizeof(fdo), off0, 1);
    got = until_reply("C", fd, w, &wl, &tr);
    say("C: a descriptor it does not have: %s\n", name(got));
    pipe(p);
    fdo.binder = (uint64_t)p[0];
    wl = call(w, wl, 0, 7, &fdo, sizeof(fdo), off0, 1);
    got = until_reply("C", fd, w, &wl, &tr);
    say("C: a descriptor to the context manager, which takes none: %s\n", name(got));
    close(p[0]), close(p[1]);

    wl = binder_put(w, wl, BC_RELEASE, &h, 4);
    wl = call(w, wl, 0, 3, "-", 1, NULL, 0);    /* A lets its handle go */
    until_reply("C", fd, w, &wl, &tr);
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    wl = call(w, wl, h, 5, "ping", 4, NULL, 0);
    got = until_reply("C", fd, w, &wl, &tr);
    say("C: the handle after it was let go: %s\n", name(got));

    /* a second service's node, watched until its process is killed */
    char x;
    write(armed[1], "1", 1);
    read(go[0], &x, 1);                         /* (D registered) */
    wl = call(w, wl, 0, 2, "?", 1, NULL, 0);
    until_reply("C", fd, w, &wl, &tr);
    in = (const struct flat_binder_object *)(uintptr_t)tr.buffer;
    uint32_t h2 = (uint32_t)in->binder;
    say("C: looked up the second: handle %u\n", (unsigned)h2);
    wl = binder_put(w, wl, BC_ACQUIRE, &h2, 4);
    wl = death(w, wl, BC_REQUEST_DEATH_NOTIFICATION, h2, 0x5ee);
    wl = death(w, wl, BC_REQUEST_DEATH_NOTIFICATION, h2, 0x5ef);     /* (a second on the same reference: ignored) */
    wl = binder_put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
    wl = binder_put(w, wl, BC_ENTER_LOOPER, NULL, 0);
    struct binder_write_read b0 = { wl, 0, (uint64_t)w, 0, 0, 0 };
    ioctl(fd, (int)BINDER_WRITE_READ, &b0);
    wl = 0;
    write(armed[1], "2", 1);                    /* (the parent kills D) */
    while (step("C", fd, w, &wl, &tr) != BR_DEAD_BINDER)
        ;
    wl = binder_put(w, wl, BC_DEAD_BINDER_DONE, &(uint64_t){ 0x5ee }, 8);
    wl = death(w, wl, BC_CLEAR_DEATH_NOTIFICATION, h2, 0x5ee);
    while (step("C", fd, w, &wl, &tr) != BR_CLEAR_DEATH_NOTIFICATION_DONE)
        ;
    wl = call(w, wl, h2, 5, "ping", 4, NULL, 0);
    got = until_reply("C", fd, w, &wl, &tr);
    say("C: a call to the dead service's handle: %s\n", name(got));
    wl = binder_put(w, wl, BC_RELEASE, &h2, 4);
    b0 = (struct binder_write_read){ wl, 0, (uint64_t)w, 0, 0, 0 };
    ioctl(fd, (int)BINDER_WRITE_READ, &b0);
    finish(out);
}

static void show(const char *who, int fd)
{
    static char buf[8192];
    ssize_t n, all = 0;
    while ((n = read(fd, buf + all, sizeof(buf) - 1 - (size_t)all)) > 0)
        all += n;
    buf[all] = 0;
    printf("--- %s\n%s", who, buf);
}

int main(void)
{
    int ready[2], la[2], lb[2], lc[2];
    pipe(ready), pipe(la), pipe(lb), pipe(lc), pipe(go), pipe(armed);
    char x;
    pid_t a = fork();
    if (a == 0) {
        close(lb[1]), close(lc[1]);             /* (each log's end is its writer's only) */
        manager(ready[1], la[1]);
    }
    read(ready[0], &x, 1);
    pid_t b = fork();
    if (b == 0) {
        close(la[1]), close(lc[1]);
        service(ready[1], lb[1]);
    }
    read(ready[0], &x, 1);
    pid_t c = fork();
    if (c == 0) {
        close(la[1]), close(lb[1]);
        client(lc[1]);
    }
    close(la[1]), close(lb[1]), close(lc[1]);
    read(armed[0], &x, 1);                      /* (C is done with B) */
    pid_t d = fork();
    if (d == 0) {
        close(la[1]), close(lb[1]), close(lc[1]);
        doomed(ready[1]);
    }
    read(ready[0], &x, 1);
    write(go[1], "g", 1);
    read(armed[0], &x, 1);                      /* (C watches D's node) */
    kill(d, SIGKILL);
    waitpid(d, NULL, 0);
    waitpid(c, NULL, 0);
    show("C", lc[0]);
    waitpid(b, NULL, 0);
    show("B", lb[0]);
    /* (A answers code 9 and ends) */
    int fd = bopen();
    static uint8_t w[256];
    struct binder_transaction_data tr;
    size_t wl = call(w, 0, 0, 9, "x", 1, NULL, 0);
    for (int i = 0; i < 4 && wl; i++) {
        static uint8_t r[512];
        struct binder_write_read bw = { wl, 0, (uint64_t)w, sizeof(r), 0, (uint64_t)r };
        ioctl(fd, (int)BINDER_WRITE_READ, &bw);
        wl = bw.write_consumed < wl ? wl : 0;
        (void)tr;
    }
    waitpid(a, NULL, 0);
    show("A", la[0]);
    printf("binderrefs: done\n");
    return 0;
}
