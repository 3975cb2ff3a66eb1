/* /dev/binder (Linux's binder UAPI) between processes: the context
 * manager, calls and replies of many sizes, one-way calls and their order,
 * the sender's identity, the errors of bad commands, and the replies a
 * dead server or a dead client leave. Only the client prints; the server
 * says what it saw in its replies. On Linux, /init loads binder_linux
 * (its devices binder, hwbinder, vndbinder). */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "lxtest.h"

#include "../../services/include/binder_uapi.h"

#define MAP 131072

static const char *brname(uint32_t cmd)
{
    switch (cmd) {
    case BR_TRANSACTION: return "BR_TRANSACTION";
    case BR_REPLY: return "BR_REPLY";
    case BR_DEAD_REPLY: return "BR_DEAD_REPLY";
    case BR_TRANSACTION_COMPLETE: return "BR_TRANSACTION_COMPLETE";
    case BR_NOOP: return "BR_NOOP";
    case BR_SPAWN_LOOPER: return "BR_SPAWN_LOOPER";
    case BR_FAILED_REPLY: return "BR_FAILED_REPLY";
    default: return "BR_?";
    }
}

static int bopen(int flags)
{
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC | flags);
    if (fd >= 0 && mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
        printf("mmap: %s\n", errname(errno));
        exit(1);
    }
    return fd;
}

/* One BINDER_WRITE_READ; the commands read, as names, into `seen`, the
 * last transaction or reply in *tr. */
static int io(int fd, const void *w, size_t wl, char *seen, size_t seen_len, struct binder_transaction_data *tr)
{
    static uint8_t r[1024];
    struct binder_write_read b = { wl, 0, (uint64_t)w, seen ? sizeof(r) : 0, 0, (uint64_t)r };
    int ret = ioctl(fd, BINDER_WRITE_READ, &b);
    if (seen)
        seen[0] = 0;
    for (size_t at = 0; seen && at < b.read_consumed;) {
        uint32_t cmd;
        memcpy(&cmd, r + at, 4);
        at += 4;
        size_t n = strlen(seen);
        snprintf(seen + n, seen_len - n, "%s%s", n ? " " : "", brname(cmd));
        if (cmd == BR_TRANSACTION || cmd == BR_REPLY)
            memcpy(tr, r + at, sizeof(*tr));
        at += (cmd >> 16) & 0x3fff;
    }
    return ret;
}

static size_t put(uint8_t *w, size_t at, uint32_t cmd, const void *arg, size_t len)
{
    memcpy(w + at, &cmd, 4);
    memcpy(w + at + 4, arg, len);
    return at + 4 + len;
}

/* The server: the context manager, answering each call with what it saw. */
struct answer { uint32_t code, size, sum, flags; int32_t pid_ok; uint32_t euid, oneways[8], n_oneway; };

static void server(int ready, pid_t client)
{
    int fd = bopen(0);
    if (ioctl(fd, BINDER_SET_CONTEXT_MGR, 0) != 0)
        exit(2);
    write(ready, "x", 1);
    static uint8_t w[512];
    size_t wl = put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    struct answer a = { 0 };
    uint32_t oneways[8], n_oneway = 0;
    for (;;) {
        char seen[256];
        struct binder_transaction_data tr = { 0 };
        if (io(fd, w, wl, seen, sizeof(seen), &tr) != 0)
            exit(3);
        wl = 0;
        const char *p = seen;
        int got = 0;
        while ((p = strstr(p, "BR_TRANSACTION")) != NULL) {
            got |= p[14] != '_';
            p += 14;
        }
        if (!got)
            continue;
        const uint8_t *data = (const uint8_t *)(uintptr_t)tr.buffer;
        uint32_t sum = 0;
        for (uint64_t i = 0; i < tr.data_size; i++)
            sum = sum * 31 + data[i];
        wl = put(w, wl, BC_FREE_BUFFER, &tr.buffer, 8);
        if (tr.flags & TF_ONE_WAY) {
            if (n_oneway < 8)
                oneways[n_oneway++] = tr.code;
            continue;
        }
        if (tr.code == 99)
            _exit(0);                           /* dies holding the call */
        if (tr.code == 98) {
            sleep(1);                           /* its client is killed meanwhile */
        }
        a = (struct answer){ tr.code, (uint32_t)tr.data_size, sum, tr.flags, tr.sender_pid == client,
                             tr.sender_euid, { 0 }, n_oneway };
        memcpy(a.oneways, oneways, sizeof(oneways));
        n_oneway = 0;
        struct binder_transaction_data rp = { 0 };
        rp.data_size = sizeof(a);
        rp.buffer = (uint64_t)&a;
        wl = put(w, wl, BC_REPLY, &rp, sizeof(rp));
        if (tr.code == 98) {
            char seen2[256];
            struct binder_transaction_data t2;
            io(fd, w, wl, seen2, sizeof(seen2), &t2);   /* the reply to the dead client */
            wl = 0;
            a = (struct answer){ 0 };
            a.code = strstr(seen2, "BR_TRANSACTION_COMPLETE") ? 1 : strstr(seen2, "BR_DEAD_REPLY") ? 2 : 3;
            oneways[n_oneway++] = 1000 + a.code;        /* (told to the next caller) */
        }
    }
}

/* A looper of its own process's binder that waits with nothing to read:
 * what its read gives when the descriptor it waits on is closed. */
static int loop_fd, loop_ret;
static char loop_seen[256];

static void *looper(void *arg)
{
    (void)arg;
    uint8_t w[8];
    size_t wl = put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    struct binder_transaction_data tr;
    io(loop_fd, w, wl, loop_seen, sizeof(loop_seen), &tr);     /* (a new thread's first read does not wait) */
    loop_ret = io(loop_fd, NULL, 0, loop_seen, sizeof(loop_seen), &tr);
    if (loop_ret)
        loop_ret = -errno;
    return NULL;
}

static uint8_t big[65536];

/* A call to handle 0 with `len` bytes and `code`; prints what came back. */
static void call(int fd, uint32_t code, size_t len, uint32_t flags, const char *what)
{
    static uint8_t w[512];
    static uint64_t pending;
    size_t wl = 0;
    if (pending)
        wl = put(w, wl, BC_FREE_BUFFER, &pending, 8);
    pending = 0;
    struct binder_transaction_data tr = { 0 };
    tr.code = code;
    tr.flags = flags;
    tr.data_size = len;
    tr.buffer = (uint64_t)big;
    wl = put(w, wl, BC_TRANSACTION, &tr, sizeof(tr));
    char all[512] = "";
    for (int rounds = 0; rounds < 4; rounds++) {
        char seen[256];
        struct binder_transaction_data rp = { 0 };
        int r = io(fd, w, wl, seen, sizeof(seen), &rp);
        wl = 0;
        size_t n = strlen(all);
        snprintf(all + n, sizeof(all) - n, "%s[%s]%s", n ? " " : "", seen, r ? " (error)" : "");
        if (strstr(seen, "BR_REPLY")) {
            const struct answer *a = (const struct answer *)(uintptr_t)rp.buffer;
            pending = rp.buffer;
            printf("%s: %s\n", what, all);
            printf("  reply: %llu bytes, code %u, size %u, sum %u, flags %u, sender pid right %d, euid %u, sender pid of "
                   "the reply %d", (unsigned long long)rp.data_size, a->code, a->size, a->sum, a->flags, a->pid_ok,
                   a->euid, rp.sender_pid);
            for (uint32_t i = 0; i < a->n_oneway && i < 8; i++)
                printf("%s%u", i ? "," : ", one-way calls before it: ", a->oneways[i]);
            printf("\n");
            return;
        }
        if (strstr(seen, "BR_DEAD_REPLY") || strstr(seen, "BR_FAILED_REPLY") || r ||
            ((flags & TF_ONE_WAY) && strstr(seen, "BR_TRANSACTION_COMPLETE")))
            break;
    }
    printf("%s: %s\n", what, all);
}

int main(void)
{
    int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
    SHOW("open /dev/binder", fd >= 0);
    int32_t version = 0;
    SHOW("BINDER_VERSION", ioctl(fd, BINDER_VERSION, &version));
    printf("protocol version %d\n", version);
    SHOW("mmap writable", mmap(NULL, MAP, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) != MAP_FAILED);
    void *m = mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0);
    SHOW("mmap read-only", m != MAP_FAILED);
    SHOW("mmap again", mmap(NULL, MAP, PROT_READ, MAP_PRIVATE, fd, 0) != MAP_FAILED);
    SHOW("write into the mapping is refused: mprotect", mprotect(m, 4096, PROT_READ | PROT_WRITE));
    uint32_t max = 4;
    SHOW("BINDER_SET_MAX_THREADS", ioctl(fd, BINDER_SET_MAX_THREADS, &max));
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7 + 3);

    call(fd, 1, 4, 0, "a call with no context manager");

    int p[2];
    pipe(p);
    pid_t me = getpid(), srv = fork();
    if (srv == 0) {
        close(fd);
        server(p[1], me);
    }
    char x;
    read(p[0], &x, 1);
    int other = bopen(0);
    SHOW("a second BINDER_SET_CONTEXT_MGR", ioctl(other, BINDER_SET_CONTEXT_MGR, 0));
    close(other);

    call(fd, 7, 4, 0, "a first call of 4 bytes");
    call(fd, 8, 0, 0, "a call of 0 bytes");
    call(fd, 9, 100, 0, "a call of 100 bytes");
    call(fd, 10, 4096, 0, "a call of 4096 bytes");
    call(fd, 11, 65536, 0, "a call of 65536 bytes");
    call(fd, 21, 8, TF_ONE_WAY, "one-way call 21");
    call(fd, 22, 8, TF_ONE_WAY, "one-way call 22");
    call(fd, 23, 8, TF_ONE_WAY, "one-way call 23");
    usleep(200000);                     /* (the server takes them all first) */
    call(fd, 12, 16, 0, "a call after three one-way calls");

    /* bad commands */
    uint8_t w[128];
    struct binder_write_read b = { 0 };
    uint32_t unknown = 0x12345678;
    b.write_size = 4, b.write_buffer = (uint64_t)&unknown;
    SHOW("an unknown command", ioctl(fd, BINDER_WRITE_READ, &b));
    printf("  write_consumed %llu\n", (unsigned long long)b.write_consumed);
    size_t wl = put(w, 0, BC_ENTER_LOOPER, NULL, 0);
    int32_t res = 0;
    wl = put(w, wl, BC_ACQUIRE_RESULT, &res, 4);
    b = (struct binder_write_read){ wl, 0, (uint64_t)w, 0, 0, 0 };
    SHOW("BC_ACQUIRE_RESULT after BC_ENTER_LOOPER", ioctl(fd, BINDER_WRITE_READ, &b));
    printf("  write_consumed %llu\n", (unsigned long long)b.write_consumed);
    b = (struct binder_write_read){ 8, 0, 16, 0, 0, 0 };
    SHOW("a write buffer at a bad address", ioctl(fd, BINDER_WRITE_READ, &b));
    SHOW("BINDER_WRITE_READ from a bad address", ioctl(fd, BINDER_WRITE_READ, (void *)16));
    uint64_t junk = 0x1234;
    wl = put(w, 0, BC_FREE_BUFFER, &junk, 8);
    b = (struct binder_write_read){ wl, 0, (uint64_t)w, 0, 0, 0 };
    SHOW("BC_FREE_BUFFER of a buffer never received", ioctl(fd, BINDER_WRITE_READ, &b));
    SHOW("an unknown ioctl", ioctl(fd, BINDER_IOC(3, 'b', 99, 8), &junk));
    SHOW("TCGETS on binder", ioctl(fd, 0x5401, w));

    int nb = bopen(O_NONBLOCK);
    static uint8_t rb[256];
    b = (struct binder_write_read){ 0, 0, 0, sizeof(rb), 0, (uint64_t)rb };
    SHOW("a first read (a new thread's)", ioctl(nb, BINDER_WRITE_READ, &b));
    printf("  read_consumed %llu\n", (unsigned long long)b.read_consumed);
    b = (struct binder_write_read){ 0, 0, 0, sizeof(rb), 0, (uint64_t)rb };
    SHOW("a non-blocking read with nothing to read", ioctl(nb, BINDER_WRITE_READ, &b));
    printf("  read_consumed %llu\n", (unsigned long long)b.read_consumed);
    struct pollfd pf = { nb, POLLIN, 0 };
    SHOW("poll with nothing to read", poll(&pf, 1, 0));
    struct binder_transaction_data rp = { 0 };
    wl = put(w, 0, BC_REPLY, &rp, sizeof(rp));
    char seen[256];
    struct binder_transaction_data got;
    io(nb, w, wl, seen, sizeof(seen), &got);
    printf("a reply with no call to answer: [%s]\n", seen);
    SHOW("BINDER_THREAD_EXIT", ioctl(nb, BINDER_THREAD_EXIT, 0));
    close(nb);

    loop_fd = bopen(0);
    pthread_t lt;
    pthread_create(&lt, NULL, looper, NULL);
    usleep(300000);
    close(loop_fd);
    pthread_join(lt, NULL);
    printf("a looper waiting on the descriptor closed under it: %d [%s]\n", loop_ret, loop_seen);

    /* a client killed while the server holds its call: the server's reply */
    pid_t victim = fork();
    if (victim == 0) {
        int v = bopen(0);
        call(v, 98, 4, 0, "(the victim's call)");
        _exit(0);
    }
    usleep(300000);
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
    call(fd, 13, 4, 0, "the call after a dead client's");

    call(fd, 99, 4, 0, "a call whose server dies holding it");
    waitpid(srv, NULL, 0);
    call(fd, 14, 4, 0, "a call after the context manager died");
    printf("binder: done\n");
    return 0;
}
