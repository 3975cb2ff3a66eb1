/* Hostile /dev/binder clients, each in its own process, beside a context
 * manager and a well-behaved client: random command streams (seeded),
 * a flood of one-way calls, and a client that never frees the replies it
 * gets. Each is told errors; afterwards the context manager still
 * answers the good client. Counts that may differ from Linux's print
 * after " ~". */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "lxtest.h"
#include "../../bench/linux/binder_rtt.h"

#define MAP                     (128 * 1024)

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

/* The context manager's code 50 sleeps before its answer. */
static void slow(const struct binder_transaction_data *tr)
{
    if (tr->code == 50)
        sleep(2);
}

/* Random command streams on a non-blocking descriptor. */
static void fuzz(long streams)
{
    int fd = open("/dev/binder", O_RDWR | O_NONBLOCK);
    void *map = fd >= 0 ? mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED)
        _exit(1);
    static const uint32_t cmds[] = {
        BC_TRANSACTION, BC_REPLY, BINDER_IOC(1, 'c', 2, 4), BC_FREE_BUFFER, BINDER_IOC(1, 'c', 4, 4), BINDER_IOC(1, 'c', 5, 4),
        BINDER_IOC(1, 'c', 6, 4), BINDER_IOC(1, 'c', 7, 4), BINDER_IOC(1, 'c', 8, 16), BINDER_IOC(1, 'c', 9, 16), BINDER_IOC(1, 'c', 10, 8),
        BINDER_IOC(0, 'c', 11, 0), BC_ENTER_LOOPER, BINDER_IOC(0, 'c', 13, 0), BINDER_IOC(1, 'c', 14, 12), BINDER_IOC(1, 'c', 15, 12),
        BINDER_IOC(1, 'c', 16, 8), BC_TRANSACTION_SG, BC_REPLY_SG, BC_TRANSACTION_SG,
    };
    static uint8_t w[512], r[512], data[8192];
    static uint64_t offs[512];
    long ok = 0, failed = 0, other = 0;
    for (long s = 0; s < streams; s++) {
        size_t wl = 0;
        unsigned n = 1 + rnd() % 6;
        for (unsigned k = 0; k < n && wl < sizeof(w) - 80; k++) {
            uint32_t cmd = rnd() % 8 ? cmds[rnd() % (sizeof(cmds) / sizeof(cmds[0]))] : (uint32_t)rnd();
            uint8_t arg[72];
            for (unsigned i = 0; i < sizeof(arg); i++)
                arg[i] = (uint8_t)rnd();
            if (cmd == BC_TRANSACTION_SG || cmd == BC_REPLY_SG) {
                /* scatter-gather: buffer objects and descriptor arrays laid
                 * one after another, with parents and places near right */
                struct binder_transaction_data_sg sg = { { 0 }, rnd() % 4 ? (rnd() % 64) * 8 : rnd() };
                size_t at = rnd() % 2 ? 0 : 8;
                unsigned nobj = 0;
                while (nobj < 8 && at + 40 <= sizeof(data) && rnd() % 4) {
                    offs[nobj] = rnd() % 8 ? at : rnd() % sizeof(data);
                    if (rnd() % 2) {
                        struct binder_buffer_object b = { 0x70742a85, (uint32_t)(rnd() % 4 ? rnd() % 2 : rnd()),
                                                          rnd() % 4 ? (uint64_t)data + rnd() % 256 : rnd(),
                                                          rnd() % 8 ? rnd() % 64 : rnd(), rnd() % (nobj + 2),
                                                          rnd() % 4 ? rnd() % 64 : rnd() };
                        memcpy(data + at, &b, sizeof(b));
                        at += sizeof(b);
                    } else {
                        struct binder_fd_array_object a = { rnd() % 8 ? 0x66646185u : 0x66642a85u, 0,
                                                            rnd() % 8 ? rnd() % 4 : rnd(), rnd() % (nobj + 2),
                                                            rnd() % 4 ? rnd() % 32 : rnd() };
                        memcpy(data + at, &a, sizeof(a));
                        at += sizeof(a) + (rnd() % 4 ? 0 : 8);
                    }
                    nobj++;
                }
                sg.tr.target = rnd() % 4 ? 0 : rnd() % 8;
                sg.tr.code = 51;                /* (not the sleeping call) */
                sg.tr.flags = rnd() % 2 ? TF_ONE_WAY | TF_ACCEPT_FDS : (uint32_t)rnd() % 64;
                sg.tr.data_size = rnd() % 8 ? at : rnd() % sizeof(data);
                sg.tr.offsets_size = rnd() % 8 ? nobj * 8 : rnd() % 80;
                sg.tr.buffer = (uint64_t)data;
                sg.tr.offsets = (uint64_t)offs;
                memcpy(arg, &sg, sizeof(sg));
            } else if (cmd == BC_TRANSACTION || cmd == BC_REPLY) {
                struct binder_transaction_data tr = { 0 };
                tr.target = rnd() % 4 ? 0 : rnd() % 8;
                tr.code = (uint32_t)rnd() % 100;
                tr.flags = rnd() % 2 ? TF_ONE_WAY : (uint32_t)rnd() % 64;
                tr.data_size = rnd() % 4 ? rnd() % sizeof(data) : rnd();
                tr.offsets_size = rnd() % 4 ? 0 : rnd() % 2 ? rnd() % 64 : (rnd() % 512) * 8;
                tr.buffer = rnd() % 4 ? (uint64_t)data : rnd();
                tr.offsets = rnd() % 2 ? (uint64_t)offs : rnd() % 2 ? (uint64_t)data : rnd();
                /* objects, good and bad, at the offsets: binders, handles, descriptors */
                static const uint32_t types[] = { 0x73622a85, 0x77622a85, 0x73682a85, 0x77682a85, 0x66642a85,
                                                  0x66646185, 0x70742a85 };
                for (unsigned k = 0; k < 512; k++) {
                    offs[k] = rnd() % 8 ? (uint64_t)k * 24 : rnd() % sizeof(data);
                    if (k * 24 + 24 <= sizeof(data)) {
                        uint32_t ty = rnd() % 8 ? types[rnd() % 7] : (uint32_t)rnd();
                        uint64_t val = rnd() % 2 ? rnd() % 4 : rnd();
                        memcpy(data + k * 24, &ty, 4);
                        memcpy(data + k * 24 + 8, &val, 8);
                    }
                }
                if (tr.code == 50)
                    tr.code = 51;               /* (not the sleeping call) */
                memcpy(arg, &tr, sizeof(tr));
            } else if (cmd == BC_FREE_BUFFER) {
                uint64_t p = rnd() % 2 ? (uint64_t)map + (rnd() % MAP & ~7ull) : rnd();
                memcpy(arg, &p, 8);
            }
            uint32_t len = (cmd >> 16) & 0x3fff;
            if (len > sizeof(arg))
                len = 0;
            memcpy(w + wl, &cmd, 4);
            memcpy(w + wl + 4, arg, len);
            wl += 4 + len;
        }
        if (rnd() % 16 == 0)
            wl = rnd() % (wl + 8);              /* (cut short, or past the end) */
        struct binder_write_read bwr = { wl, 0, (uint64_t)w, rnd() % 4 ? sizeof(r) : rnd() % 16, 0, (uint64_t)r };
        if (rnd() % 32 == 0)
            bwr.write_buffer = rnd();
        if (rnd() % 32 == 0)
            bwr.read_buffer = rnd();
        int ret = ioctl(fd, (int)BINDER_WRITE_READ, &bwr);
        if (ret == 0)
            ok++;
        else if (errno == EINVAL || errno == EFAULT || errno == EAGAIN)
            failed++;
        else
            other++;
        if (rnd() % 512 == 0)
            ioctl(fd, BINDER_IOC(1, 'b', 8, 4), 0);    /* BINDER_THREAD_EXIT */
        if (rnd() % 512 == 0)
            ioctl(fd, (int)rnd(), (void *)rnd());
    }
    printf("fuzz: %ld streams, only the errors Linux gives: %s ~%ld done, %ld refused\n", streams,
           other ? "no" : "yes", ok, failed);
}

/* One-way calls of 1 KiB while the server sleeps: refused once they fill
 * its buffer's one-way half. With spam detection on, the completion of
 * the call that leaves less than a tenth of the server's buffer free
 * says BR_ONEWAY_SPAM_SUSPECT, once. */
static void flood(void)
{
    struct binder b;
    if (binder_open(&b))
        _exit(1);
    uint32_t on = 1;
    printf("flood: spam detection on: %d\n", ioctl(b.fd, (int)BINDER_ENABLE_ONEWAY_SPAM_DETECTION, &on));
    static char data[1024];
    static uint8_t w[256], r[512];
    long sent = 0, refused = 0, suspects = 0, first_suspect = 0, completes = 0;
    for (long i = 0; i < 2000 && !refused; i++) {
        struct binder_transaction_data tr = { 0 };
        tr.code = 7;
        tr.flags = TF_ONE_WAY;
        tr.data_size = sizeof(data);
        tr.buffer = (uint64_t)data;
        size_t wl = binder_put(w, 0, BC_TRANSACTION, &tr, sizeof(tr)), got;
        if (binder_io(&b, w, wl, r, sizeof(r), &got) < 0)
            break;
        for (size_t at = 0; at + 4 <= got; at += 4) {
            uint32_t cmd;
            memcpy(&cmd, r + at, 4);
            refused |= cmd == BR_FAILED_REPLY;
            completes += cmd == BR_TRANSACTION_COMPLETE;
            if (cmd == BR_ONEWAY_SPAM_SUSPECT && !suspects++)
                first_suspect = i + 1;
        }
        sent += !refused;
    }
    printf("flood: one-way calls refused when the server's buffer is full: %s after %ld\n", refused ? "yes" : "no",
           sent);
    printf("flood: BR_ONEWAY_SPAM_SUSPECT %ld time(s), at call %ld; BR_TRANSACTION_COMPLETE for the other %ld\n",
           suspects, first_suspect, completes);
}

/* Calls whose replies it never frees: refused once its own buffer is full. */
static void hoard(void)
{
    struct binder b;
    if (binder_open(&b))
        _exit(1);
    static char data[4096];
    long got_replies = 0;
    int refused = 0;
    for (long i = 0; i < 200 && !refused; i++) {
        uint64_t never = 0;                     /* (each reply's buffer is left in place) */
        int r = binder_call(&b, data, sizeof(data), &never);
        if (r == 0)
            got_replies++;
        else
            refused = 1;
    }
    printf("hoarder: calls refused once its buffer is full: %s ~after %ld\n", refused ? "yes" : "no", got_replies);
}

int main(int argc, char **argv)
{
    long streams = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    int p[2];
    pipe(p);
    pid_t srv = fork();
    if (srv == 0)
        binder_serve(slow, p[1]);
    char x;
    read(p[0], &x, 1);

    pid_t f = fork();
    if (f == 0) {
        fuzz(streams);
        _exit(0);
    }
    int st;
    waitpid(f, &st, 0);
    printf("the fuzzing process ended by itself: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);

    pid_t slow = fork();
    if (slow == 0) {
        /* code 50: the server sleeps 2 s before its answer */
        struct binder b;
        static char d[4] = "slow";
        static uint8_t w[256], r[512];
        struct binder_transaction_data tr = { 0 };
        tr.code = 50;
        tr.data_size = sizeof(d);
        tr.buffer = (uint64_t)d;
        size_t wl = binder_put(w, 0, BC_TRANSACTION, &tr, sizeof(tr)), got;
        if (binder_open(&b))
            _exit(1);
        for (;;) {
            if (binder_io(&b, w, wl, r, sizeof(r), &got) < 0)
                _exit(1);
            wl = 0;
            for (size_t at = 0; at + 4 <= got;) {
                uint32_t cmd;
                memcpy(&cmd, r + at, 4);
                if (cmd == BR_REPLY)
                    _exit(0);
                at += 4 + ((cmd >> 16) & 0x3fff);
            }
        }
    }
    usleep(100000);
    pid_t fl = fork();
    if (fl == 0) {
        flood();
        _exit(0);
    }
    waitpid(fl, NULL, 0);
    waitpid(slow, NULL, 0);
    pid_t h = fork();
    if (h == 0) {
        hoard();
        _exit(0);
    }
    waitpid(h, NULL, 0);

    struct binder b;
    uint64_t pending = 0;
    static char data[4096] = "good";
    int good = binder_open(&b) == 0;
    for (int i = 0; good && i < 100; i++)
        good = binder_call(&b, data, i % 2 ? 4 : sizeof(data), &pending) == 0;
    printf("a good client after them: 100 calls answered: %d\n", good);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    printf("binderhostile: done\n");
    return 0;
}
