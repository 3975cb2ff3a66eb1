/*
 * stress: one process whose threads, on every core, make and break
 * resources for SECONDS (default 60), every result checked; then every
 * thread is joined, every child reaped and, on Petrel, the personality's
 * usage (/proc/petrel) must be what it was before.
 *
 * One worker per online core (at least 2) and two more, each looping over
 * operations chosen at random:
 *   pipe    pipe2, dup, F_DUPFD_CLOEXEC, dup3 onto its own descriptor,
 *           close-on-exec flags, data written and read back, poll, O_NONBLOCK
 *   socket  socketpair (stream, datagram, seqpacket): data both ways,
 *           datagram boundaries, SO_TYPE, shutdown's end of file
 *   file    a file of /tmp written, read back, shared offsets of a dup,
 *           ftruncate, unlinked while open; /dev/null; an eventfd
 *   memory  anonymous mmap (zero-filled), a pattern written and verified,
 *           mprotect, a page unmapped from the middle, MADV_DONTNEED,
 *           mremap growing (moved)
 *   fork    a child that checks the memory it got, changes it (the parent's
 *           stays), sends a result through a pipe and a shared page,
 *           sometimes forks a grandchild, and exits with a known status
 *   kill    a child blocked in read killed with SIGKILL or SIGTERM, or
 *           stopped, continued and let go (WUNTRACED, WCONTINUED)
 *   signal  real-time signals queued to a thread (rt_tgsigqueueinfo, with
 *           its number in si_value), pthread_kill, kill of the process
 *   lock    a mutex-protected counter (mutual exclusion checked), futex
 *           calls that fail or time out as they must
 *   handoff items through a bounded queue (mutex, two condition
 *           variables) to a consumer thread, which checks their order;
 *           some carry a pipe's read end or a mapping, which the consumer
 *           reads, checks and closes or unmaps
 *   thread  short-lived threads made and joined, each with its result
 *   ids     getpid, getppid and gettid; /dev/zero read into a buffer and
 *           into a fresh mapping with its first page not there yet,
 *           /dev/null both ways, a read of a write-only descriptor (on
 *           Petrel the calls several cores answer at once while the
 *           others change the tables they read)
 * and three helper threads: the consumer, and two that pass a futex word
 * back and forth. Checks at the end: every real-time signal queued to a
 * thread arrived there exactly once, standard signals at most as often as
 * sent and at least once, every item in order, the counter exact, no
 * child left. Only what is the same on Linux and Petrel is printed (the
 * numbers with -v); a failed check prints what failed and the exit
 * status is 1.
 *
 *     stress [SECONDS] [-v]
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define MAXWORK     32              /* workers at most */
#define EXTRA       2               /* workers beyond one per core */
#define NHELP       3               /* the consumer, ping, pong */
#define MAXTHR      (MAXWORK + NHELP)
#define BUF         16384
#define PAGE        4096
#define QSIZE       16
#define SLACK       (128 * 1024)    /* heap_bytes may stay this much up (lxtest.h) */
#define GRACE_S     60              /* how long the threads may take to stop */
#define MAXSHOWN    20              /* failures printed at most */

/* <linux/futex.h>'s values (the musl toolchain has no kernel headers). */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

#define KINDS(X) X(pipe, 14) X(socket, 12) X(file, 8) X(memory, 14) X(fork, 5) X(kill, 4) X(signal, 20) \
                 X(lock, 10) X(handoff, 10) X(thread, 3) X(ids, 10)
#define K_ENUM(name, w) K_##name,
enum { KINDS(K_ENUM) NKINDS, K_START = NKINDS, K_STOP };
#define K_NAME(name, w) #name,
static const char *const kind_names[] = { KINDS(K_NAME) "start", "stop" };
#define K_W(name, w) w,
static const unsigned kind_weight[NKINDS] = { KINDS(K_W) };

enum role { WORKER, CONSUMER, PING, PONG };
static const char *const role_names[] = { "worker", "consumer", "ping", "pong" };

/* One long-lived thread. Counters named *_sent are added to by other
 * threads (atomically); the rest are its own. */
struct thr {
    pthread_t pt;
    int idx;
    enum role role;
    volatile pid_t tid;
    uint64_t rng;
    volatile int op;                /* what it does now (for a report of a thread that does not stop) */
    volatile int finished;
    uint64_t ops[NKINDS];
    uint64_t rt_sent, rt_got, usr1_sent, usr1_got;
    uint64_t produced, consumed_of;  /* items it handed off; the consumer's count of them */
    uint64_t locked;                 /* increments of the counter it made */
    uint64_t rounds;                 /* ping and pong: hand-offs of the futex word */
    uint64_t cores;                  /* the cores it was seen on (getcpu), a bit each */
    unsigned files;
    unsigned char a[BUF], b[BUF];
};

static struct thr thr[MAXTHR];
static int nwork, nthr, verbose;
static pid_t my_pid, my_ppid;
static int sig_rt;
static volatile int stop;
static uint64_t failures, bad_signals, usr2_sent, usr2_got;
static __thread struct thr *self;
static pthread_barrier_t start_gate, stop_gate;

/* The counter under a mutex, and who holds it. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t counter;
static volatile int holder;

/* The hand-off queue. */
struct item {
    uint32_t from, seq;
    uint64_t check;
    int fd;                         /* if >= 0: a pipe's read end with len bytes of seed in it */
    unsigned char *map;             /* if not NULL: len bytes of memory, filled from seed */
    uint32_t len;
    uint64_t seed;
};
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_not_empty = PTHREAD_COND_INITIALIZER, q_not_full = PTHREAD_COND_INITIALIZER;
static struct item queue[QSIZE];
static int q_head, q_count, producers_done;

/* The futex word ping and pong pass: even for ping, odd for pong. */
static uint32_t ball;

/* ---------------------------------------------------------------- helpers */

static uint64_t rnd(struct thr *t)
{
    t->rng ^= t->rng >> 12;
    t->rng ^= t->rng << 25;
    t->rng ^= t->rng >> 27;
    return t->rng * 0x2545f4914f6cdd1dull;
}

static unsigned below(struct thr *t, unsigned n) { return (unsigned)(rnd(t) % n); }

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int stopping(void) { return __atomic_load_n(&stop, __ATOMIC_ACQUIRE); }

static void add(uint64_t *v, uint64_t n) { __atomic_add_fetch(v, n, __ATOMIC_RELAXED); }

/* Print a line in one write (threads print at once). */
static void say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (k > (int)sizeof(line) - 2)
        k = (int)sizeof(line) - 2;
    line[k++] = '\n';
    write(1, line, (size_t)k);
}

/* A check failed: say which thread, in which operation, and what. */
static void fail(struct thr *t, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < MAXSHOWN)
        say("stress: FAILED: %s %d, %s: %s", role_names[t->role], t->idx, kind_names[t->op], what);
}

/* A check in an operation: on failure, say so and go to its `out`. */
#define CHECK(cond, ...) do { if (!(cond)) { fail(t, __VA_ARGS__); goto out; } } while (0)
/* A call that must not fail (a negative result). */
#define CALL(expr) do { if ((long)(expr) < 0) { fail(t, "%s: %s", #expr, errname(errno)); goto out; } } while (0)

/* Bytes from a seed: what each check compares with. */
static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((seed >> (8 * (i % 8))) + i * 131 + (i >> 8));
}

static int same(const unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)((seed >> (8 * (i % 8))) + i * 131 + (i >> 8)))
            return 0;
    return 1;
}

static uint64_t sum_of(const unsigned char *p, size_t n)
{
    uint64_t s = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        s = (s ^ p[i]) * 1099511628211ull;
    return s;
}

/* Read exactly n bytes (a pipe or stream may give them in parts);
 * the count read, or -1. */
static long read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long)got;
}

/* The descriptors an operation holds, closed (and checked) at its end. */
struct fds {
    int fd[8];
    int n;
};

static int hold(struct fds *s, int fd)
{
    if (fd >= 0 && s->n < 8)
        s->fd[s->n++] = fd;
    return fd;
}

static void close_all(struct thr *t, struct fds *s)
{
    for (int i = 0; i < s->n; i++)
        if (close(s->fd[i]) != 0)
            fail(t, "close(%d): %s", s->fd[i], errname(errno));
    s->n = 0;
}

/* ---------------------------------------------------------------- descriptors */

static void op_pipe(struct thr *t)
{
    struct fds s = { .n = 0 };
    int p[2], cloexec = below(t, 2) ? O_CLOEXEC : 0;
    size_t n = 1 + below(t, PAGE);                 /* at most PIPE_BUF: written at once */
    uint64_t seed = rnd(t);
    CALL(pipe2(p, cloexec));
    hold(&s, p[0]);
    hold(&s, p[1]);
    int fl = fcntl(p[0], F_GETFD);
    CHECK(fl == (cloexec ? FD_CLOEXEC : 0), "F_GETFD of a pipe2(%s) end: %d", cloexec ? "O_CLOEXEC" : "0", fl);
    int w = hold(&s, dup(p[1]));
    CALL(w);
    CHECK(fcntl(w, F_GETFD) == 0, "a dup is close-on-exec");
    int r = hold(&s, fcntl(p[0], F_DUPFD_CLOEXEC, 10));
    CALL(r);
    CHECK(r >= 10 && fcntl(r, F_GETFD) == FD_CLOEXEC, "F_DUPFD_CLOEXEC gave %d, flags %d", r, fcntl(r, F_GETFD));
    CHECK(dup3(p[0], r, 0) == r, "dup3 onto its own descriptor: %s", errname(errno));
    CHECK(fcntl(r, F_GETFD) == 0, "dup3(.., 0) left close-on-exec set");
    fill(t->a, n, seed);
    long k = write(w, t->a, n);
    CHECK(k == (long)n, "write of %zu bytes: %ld %s", n, k, k < 0 ? errname(errno) : "");
    struct pollfd pf = { r, POLLIN, 0 };
    k = poll(&pf, 1, 0);
    CHECK(k == 1 && pf.revents == POLLIN, "poll of a pipe with data: %ld, revents 0x%x", k, pf.revents);
    k = read_full(r, t->b, n);
    CHECK(k == (long)n && same(t->b, n, seed), "read back %ld of %zu bytes, same %d", k, n,
          k == (long)n && same(t->b, n, seed));
    CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0, "F_SETFL O_NONBLOCK: %s", errname(errno));
    k = read(r, t->b, 1);                           /* the same open file: nonblocking too */
    CHECK(k == -1 && errno == EAGAIN, "read of an empty nonblocking pipe: %ld %s", k, k < 0 ? errname(errno) : "");
    CHECK(write(p[1], "xy", 2) == 2 && read(p[0], t->b, 8) == 2 && !memcmp(t->b, "xy", 2), "a second write and read");
out:
    close_all(t, &s);
}

static void op_socket(struct thr *t)
{
    static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
    static const char *const type_names[] = { "stream", "datagram", "seqpacket" };
    struct fds s = { .n = 0 };
    unsigned ti = below(t, 3);
    int type = types[ti], sv[2];
    size_t n1 = 1 + below(t, 2048), n2 = 1 + below(t, 2048), n3 = 1 + below(t, 2048);
    uint64_t seed = rnd(t);
    CALL(socketpair(AF_UNIX, type | (below(t, 2) ? SOCK_CLOEXEC : 0), 0, sv));
    hold(&s, sv[0]);
    hold(&s, sv[1]);
    int got_type = 0;
    socklen_t len = sizeof(got_type);
    CHECK(getsockopt(sv[1], SOL_SOCKET, SO_TYPE, &got_type, &len) == 0 && got_type == type, "SO_TYPE %d of a %s pair",
          got_type, type_names[ti]);
    fill(t->a, n1 + n2, seed);
    CHECK(write(sv[0], t->a, n1) == (long)n1 && write(sv[0], t->a + n1, n2) == (long)n2, "%s writes: %s",
          type_names[ti], errname(errno));
    long k;
    if (type == SOCK_STREAM) {
        k = read_full(sv[1], t->b, n1 + n2);
        CHECK(k == (long)(n1 + n2) && same(t->b, n1 + n2, seed), "stream: read %ld of %zu bytes", k, n1 + n2);
    } else {
        k = read(sv[1], t->b, BUF);
        CHECK(k == (long)n1 && !memcmp(t->b, t->a, n1), "%s: first message %ld bytes, sent %zu", type_names[ti], k, n1);
        k = read(sv[1], t->b, BUF);
        CHECK(k == (long)n2 && !memcmp(t->b, t->a + n1, n2), "%s: second message %ld bytes, sent %zu", type_names[ti],
              k, n2);
    }
    fill(t->a, n3, seed + 1);
    CHECK(write(sv[1], t->a, n3) == (long)n3, "%s: write back: %s", type_names[ti], errname(errno));
    k = read_full(sv[0], t->b, n3);
    CHECK(k == (long)n3 && same(t->b, n3, seed + 1), "%s: read back %ld of %zu bytes", type_names[ti], k, n3);
    if (type == SOCK_STREAM) {                      /* children may hold the ends too: shutdown ends it anyway */
        CHECK(shutdown(sv[0], SHUT_WR) == 0, "shutdown: %s", errname(errno));
        k = read(sv[1], t->b, 1);
        CHECK(k == 0, "read after the peer's shutdown: %ld %s", k, k < 0 ? errname(errno) : "");
    }
out:
    close_all(t, &s);
}

static void op_file(struct thr *t)
{
    struct fds s = { .n = 0 };
    char path[64];
    snprintf(path, sizeof(path), "/tmp/stress.%d.%d.%u", (int)my_pid, t->idx, t->files++);
    size_t n = 1 + below(t, BUF);
    uint64_t seed = rnd(t);
    int linked = 0;
    int fd = hold(&s, open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    CALL(fd);
    linked = 1;
    fill(t->a, n, seed);
    long k = write(fd, t->a, n);
    CHECK(k == (long)n, "write of %zu bytes: %ld %s", n, k, k < 0 ? errname(errno) : "");
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == (off_t)n && S_ISREG(st.st_mode), "fstat: size %lld of %zu",
          (long long)st.st_size, n);
    k = pread(fd, t->b, n, 0);
    CHECK(k == (long)n && same(t->b, n, seed), "pread %ld of %zu bytes", k, n);
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)n, "the offset after a write and a pread");
    int d = hold(&s, dup(fd));
    CALL(d);
    CHECK(lseek(d, 1, SEEK_SET) == 1, "lseek of the dup");
    k = read(fd, t->b, 1);                          /* the offset is shared */
    CHECK(k == (n > 1) && (n == 1 || t->b[0] == t->a[1]), "read at the dup's offset: %ld", k);
    CHECK(ftruncate(fd, (off_t)(n / 2)) == 0 && fstat(d, &st) == 0 && st.st_size == (off_t)(n / 2),
          "ftruncate to %zu: size %lld", n / 2, (long long)st.st_size);
    CHECK(unlink(path) == 0, "unlink: %s", errname(errno));
    linked = 0;
    CHECK(fstat(fd, &st) == 0 && st.st_nlink == 0, "an unlinked file's st_nlink %ld", (long)st.st_nlink);
    k = pread(d, t->b, n, 0);
    CHECK(k == (long)(n / 2) && !memcmp(t->b, t->a, n / 2), "pread of an unlinked file: %ld of %zu", k, n / 2);
    close_all(t, &s);
    int null = hold(&s, open("/dev/null", O_RDWR | O_CLOEXEC));
    CALL(null);
    CHECK(write(null, t->a, n) == (long)n && read(null, t->b, n) == 0, "/dev/null");
    int ev = hold(&s, eventfd(3, EFD_CLOEXEC));
    CALL(ev);
    uint64_t v = 4;
    CHECK(write(ev, &v, 8) == 8 && read(ev, &v, 8) == 8 && v == 7, "eventfd: 3 + 4 read as %llu",
          (unsigned long long)v);
out:
    close_all(t, &s);
    if (linked)
        unlink(path);
}

/* ---------------------------------------------------------------- ids */

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* A read of n bytes of /dev/zero returned k: all of them, or (Linux's
 * read_zero stops after a page when a signal is pending, and signals fly
 * here) whole pages of them. */
static int zero_read(long k, size_t n)
{
    return k == (long)n || (k > 0 && (size_t)k < n && k % PAGE == 0);
}

static void op_ids(struct thr *t)
{
    struct fds s = { .n = 0 };
    unsigned char *m = MAP_FAILED;
    CHECK(getpid() == my_pid, "getpid: %d, not %d", (int)getpid(), (int)my_pid);
    CHECK(getppid() == my_ppid, "getppid: %d, not %d", (int)getppid(), (int)my_ppid);
    CHECK((pid_t)gettid_() == t->tid, "gettid: %d, not %d", (int)gettid_(), (int)t->tid);
    int z = hold(&s, open("/dev/zero", O_RDONLY | O_CLOEXEC));
    CALL(z);
    size_t n = 1 + below(t, BUF);
    memset(t->b, 0xa5, n);
    long k = read(z, t->b, n);
    CHECK(zero_read(k, n) && all_zero(t->b, (size_t)k), "read of %zu bytes of /dev/zero: %ld", n, k);
    m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap: %s", errname(errno));
    m[PAGE] = 0xa5;                                 /* the middle page there, the first not yet */
    m[2 * PAGE + 7] = 0xa5;
    k = read(z, m, 3 * PAGE);
    CHECK(zero_read(k, 3 * PAGE) && all_zero(m, (size_t)k) && (k == 3 * PAGE || m[2 * PAGE + 7] == 0xa5),
          "read of /dev/zero into a fresh mapping: %ld", k);
    memset(m, 0xa5, 3 * PAGE);
    k = read(z, m + 1, 2 * PAGE);
    CHECK(zero_read(k, 2 * PAGE) && m[0] == 0xa5 && all_zero(m + 1, (size_t)k) && m[1 + k] == 0xa5,
          "read of /dev/zero into a mapping: %ld", k);
    CHECK(write(z, t->a, n) == -1 && errno == EBADF, "write to a read-only /dev/zero: %s", errname(errno));
    int w = hold(&s, open("/dev/zero", O_WRONLY | O_CLOEXEC));
    CALL(w);
    CHECK(write(w, t->a, n) == (long)n, "write of %zu bytes to /dev/zero", n);
    CHECK(read(w, t->b, n) == -1 && errno == EBADF, "read of a write-only /dev/zero: %s", errname(errno));
    int null = hold(&s, open("/dev/null", O_RDWR | O_CLOEXEC));
    CALL(null);
    CHECK(write(null, t->a, n) == (long)n && read(null, t->b, n) == 0, "/dev/null");
out:
    if (m != MAP_FAILED)
        munmap(m, 3 * PAGE);
    close_all(t, &s);
}

/* ---------------------------------------------------------------- memory */

static void op_memory(struct thr *t)
{
    unsigned pages = 1 + below(t, 16), hole = 0;   /* hole: the page unmapped from the middle, if not 0 */
    size_t len = (size_t)pages * PAGE;
    uint64_t seed = rnd(t);
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fail(t, "mmap of %u pages: %s", pages, errname(errno));
        return;
    }
    CHECK(((uintptr_t)p & (PAGE - 1)) == 0, "mmap gave %p", (void *)p);
    for (unsigned i = 0; i < pages; i++)
        CHECK(p[(size_t)i * PAGE] == 0 && p[(size_t)i * PAGE + PAGE - 1] == 0, "page %u of new memory not zero", i);
    fill(p, len, seed);
    CHECK(same(p, len, seed), "a pattern written to %u pages reads back different", pages);
    CHECK(mprotect(p, len, PROT_READ) == 0, "mprotect PROT_READ: %s", errname(errno));
    CHECK(same(p, len, seed), "read-only memory changed");
    switch (below(t, 3)) {
    case 0:
        /* A hole in the middle (another thread's mmap may take it at once:
         * nothing here touches it, and the two sides are unmapped apart). */
        if (pages >= 3) {
            unsigned mid = 1 + below(t, pages - 2);
            CHECK(munmap(p + (size_t)mid * PAGE, PAGE) == 0, "munmap of page %u of %u: %s", mid, pages, errname(errno));
            hole = mid;
            CHECK(mprotect(p, (size_t)mid * PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect below the hole: %s",
                  errname(errno));
            p[0] ^= 0xff;                           /* writable again */
            p[0] ^= 0xff;
            CHECK(same(p, (size_t)mid * PAGE, seed), "below the hole");
            for (size_t i = (size_t)(mid + 1) * PAGE; i < len; i += 512)
                CHECK(p[i] == (unsigned char)((seed >> (8 * (i % 8))) + i * 131 + (i >> 8)), "above the hole");
        }
        break;
    case 1:                                         /* MADV_DONTNEED: private memory reads as zeros */
        CHECK(mprotect(p, len, PROT_READ | PROT_WRITE) == 0, "mprotect back to read-write: %s", errname(errno));
        CHECK(madvise(p, PAGE, MADV_DONTNEED) == 0, "madvise: %s", errname(errno));
        CHECK(p[0] == 0 && p[PAGE - 1] == 0, "after MADV_DONTNEED: %d %d", p[0], p[PAGE - 1]);
        for (size_t i = PAGE; i < len; i += 256)
            CHECK(p[i] == (unsigned char)((seed >> (8 * (i % 8))) + i * 131 + (i >> 8)), "a page after the one dropped");
        break;
    default: {                                      /* grown by mremap: moved or not, the same contents */
        CHECK(mprotect(p, len, PROT_READ | PROT_WRITE) == 0, "mprotect back to read-write: %s", errname(errno));
        unsigned char *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
        CHECK(q != MAP_FAILED, "mremap to %zu bytes: %s", 2 * len, errname(errno));
        p = q;
        len *= 2;
        CHECK(same(p, len / 2, seed), "the contents moved by mremap");
        CHECK(p[len / 2] == 0 && p[len - 1] == 0, "the part mremap added is not zero");
        p[len - 1] = 1;
        break;
    }
    }
out:
    if (hole) {
        size_t above = (size_t)(hole + 1) * PAGE;
        if (munmap(p, (size_t)hole * PAGE) != 0 || munmap(p + above, len - above) != 0)
            fail(t, "munmap of the two sides of a hole: %s", errname(errno));
    } else if (munmap(p, len) != 0) {
        fail(t, "munmap of %zu bytes: %s", len, errname(errno));
    }
}

/* ---------------------------------------------------------------- processes */

/* The child of op_fork: check what it got, change it, answer, exit with
 * `status` (250..254 when something was wrong). */
static void fork_child(struct thr *t, int out, uint64_t *shared, size_t n, uint64_t seed, int status, int grandchild)
{
    if (!same(t->a, n, seed))
        _exit(250);
    uint64_t sum = sum_of(t->a, n);
    memset(t->a, 0x5a, n);                          /* the parent's copy stays as it was */
    if (grandchild) {
        pid_t g = fork();
        if (g == 0)
            _exit(t->a[0] == 0x5a ? 7 : 99);        /* its parent's memory as it left it */
        int st;
        if (g < 0 || waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
            _exit(251);
    }
    shared[0] = sum;
    shared[1] = (uint64_t)getpid();
    if (write(out, &sum, sizeof(sum)) != sizeof(sum))
        _exit(252);
    _exit(status);
}

static void op_fork(struct thr *t)
{
    struct fds s = { .n = 0 };
    size_t n = 1 + below(t, BUF);
    uint64_t seed = rnd(t);
    int status = 1 + (int)below(t, 120), grandchild = below(t, 8) == 0;
    int p[2];
    uint64_t *shared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        fail(t, "mmap of a shared page: %s", errname(errno));
        return;
    }
    CALL(pipe2(p, O_CLOEXEC));
    hold(&s, p[0]);
    fill(t->a, n, seed);
    uint64_t sum = sum_of(t->a, n);
    pid_t pid = fork();
    if (pid == 0)
        fork_child(t, p[1], shared, n, seed, status, grandchild);
    close(p[1]);
    CHECK(pid > 0, "fork: %s", errname(errno));
    uint64_t got = 0;
    long k = read_full(p[0], &got, sizeof(got));
    int st = 0;
    pid_t w = waitpid(pid, &st, 0);
    CHECK(w == pid, "waitpid(%d): %d %s", (int)pid, (int)w, w < 0 ? errname(errno) : "");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == status, "the child's wait status 0x%x, not exit %d", st, status);
    CHECK(k == sizeof(got) && got == sum, "the child's answer: %ld bytes", k);
    CHECK(shared[0] == sum && shared[1] == (uint64_t)pid, "the shared page after the child");
    CHECK(same(t->a, n, seed), "the parent's memory changed with its child's");
out:
    close_all(t, &s);
    munmap(shared, PAGE);
}

static void op_kill(struct thr *t)
{
    struct fds s = { .n = 0 };
    int p[2], how = (int)below(t, 3), st = 0;
    pid_t pid = 0;
    CALL(pipe2(p, O_CLOEXEC));
    hold(&s, p[0]);
    hold(&s, p[1]);
    pid = fork();
    if (pid == 0) {
        char c;
        _exit(read(p[0], &c, 1) == 1 && c == 'g' ? 42 : 253);
    }
    CHECK(pid > 0, "fork: %s", errname(errno));
    if (how < 2) {
        int sig = how ? SIGTERM : SIGKILL;
        CHECK(kill(pid, sig) == 0, "kill(%d, %d): %s", (int)pid, sig, errname(errno));
        CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", errname(errno));
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sig, "killed by %d: wait status 0x%x", sig, st);
    } else {
        pid_t w;
        CHECK(kill(pid, SIGSTOP) == 0, "SIGSTOP: %s", errname(errno));
        CHECK((w = waitpid(pid, &st, WUNTRACED)) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
              "waitpid(WUNTRACED) after SIGSTOP: %d, status 0x%x %s", (int)w, st, w < 0 ? errname(errno) : "");
        CHECK(kill(pid, SIGCONT) == 0, "SIGCONT: %s", errname(errno));
        CHECK((w = waitpid(pid, &st, WCONTINUED)) == pid && WIFCONTINUED(st),
              "waitpid(WCONTINUED) after SIGCONT: %d, status 0x%x %s", (int)w, st, w < 0 ? errname(errno) : "");
        CHECK(write(p[1], "g", 1) == 1, "write: %s", errname(errno));
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 42,
              "a child stopped and continued: wait status 0x%x", st);
    }
    pid = 0;
out:
    if (pid > 0) {                                  /* (after a failure: do not leave it behind) */
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    close_all(t, &s);
}

/* ---------------------------------------------------------------- signals */

static void on_rt(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    struct thr *me = self;
    if (!me || si->si_code != SI_QUEUE || si->si_pid != my_pid || si->si_value.sival_int != me->idx)
        __atomic_add_fetch(&bad_signals, 1, __ATOMIC_RELAXED);
    else
        me->rt_got++;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    struct thr *me = self;
    if (!me || si->si_code != SI_TKILL)
        __atomic_add_fetch(&bad_signals, 1, __ATOMIC_RELAXED);
    else
        me->usr1_got++;
}

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (si->si_code != SI_USER || si->si_pid != my_pid)
        __atomic_add_fetch(&bad_signals, 1, __ATOMIC_RELAXED);
    else
        __atomic_add_fetch(&usr2_got, 1, __ATOMIC_RELAXED);
}

static void our_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
    sigaddset(set, sig_rt);
}

static void op_signal(struct thr *t)
{
    struct thr *to = &thr[below(t, (unsigned)nthr)];
    switch (below(t, 4)) {
    case 0:
    case 1: {                                       /* queued: each arrives */
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        si.si_signo = sig_rt;
        si.si_code = SI_QUEUE;
        si.si_pid = my_pid;
        si.si_uid = getuid();
        si.si_value.sival_int = to->idx;
        add(&to->rt_sent, 1);
        if (syscall(SYS_rt_tgsigqueueinfo, my_pid, to->tid, sig_rt, &si) != 0) {
            __atomic_sub_fetch(&to->rt_sent, 1, __ATOMIC_RELAXED);
            CHECK(errno == EAGAIN, "rt_tgsigqueueinfo to %s %d: %s", role_names[to->role], to->idx, errname(errno));
        }
        break;
    }
    case 2: {
        add(&to->usr1_sent, 1);
        int e = pthread_kill(to->pt, SIGUSR1);
        CHECK(e == 0, "pthread_kill of %s %d: %s", role_names[to->role], to->idx, errname(e));
        break;
    }
    default:
        add(&usr2_sent, 1);
        CHECK(kill(my_pid, SIGUSR2) == 0, "kill of its own process: %s", errname(errno));
        break;
    }
out:
    ;
}

/* ---------------------------------------------------------------- locks and hand-offs */

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

static void op_lock(struct thr *t)
{
    unsigned n = 20 + below(t, 100);
    for (unsigned i = 0; i < n; i++) {
        int e = below(t, 4) ? pthread_mutex_lock(&count_lock) : pthread_mutex_trylock(&count_lock);
        if (e == EBUSY)
            continue;
        CHECK(e == 0, "pthread_mutex_lock: %s", errname(e));
        int was = holder;
        holder = t->idx + 1;
        counter++;
        t->locked++;
        if ((i & 15) == 0)
            sched_yield();                          /* (preempted, or not, with the lock held) */
        int now = holder;
        holder = 0;
        pthread_mutex_unlock(&count_lock);
        CHECK(was == 0 && now == t->idx + 1, "two threads in the mutex at once: %d and %d", was, now);
    }
    uint32_t word = 5;
    struct timespec ms = { 0, 1000000 };
    long r = futex(&word, FUTEX_WAIT_PRIVATE, 6, NULL);
    CHECK(r == -1 && errno == EAGAIN, "FUTEX_WAIT with another value: %ld %s", r, r < 0 ? errname(errno) : "");
    r = futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL);
    CHECK(r == 0, "FUTEX_WAKE with no waiter: %ld %s", r, r < 0 ? errname(errno) : "");
    r = futex(&word, FUTEX_WAIT_PRIVATE, 5, &ms);
    CHECK(r == -1 && (errno == ETIMEDOUT || errno == EINTR), "FUTEX_WAIT of 1 ms: %ld %s", r,
          r < 0 ? errname(errno) : "");
out:
    ;
}

static uint64_t item_check(uint32_t from, uint32_t seq) { return ((uint64_t)from << 32 | seq) * 0x9e3779b97f4a7c15ull; }

/* Items to the consumer, some with a descriptor or memory it checks
 * and lets go (closed or unmapped by another thread than made it). */
static void op_handoff(struct thr *t)
{
    unsigned n = 1 + below(t, 32);
    for (unsigned i = 0; i < n; i++) {
        struct item it = { (uint32_t)t->idx, 0, 0, -1, NULL, 0, rnd(t) };
        unsigned what = below(t, 8);
        if (what == 0) {
            int p[2];
            it.len = 1 + below(t, PAGE);
            fill(t->a, it.len, it.seed);
            if (pipe2(p, O_CLOEXEC) != 0) {
                fail(t, "pipe2: %s", errname(errno));
            } else {
                long k = write(p[1], t->a, it.len);
                if (k != (long)it.len)
                    fail(t, "write of %u bytes: %ld %s", it.len, k, k < 0 ? errname(errno) : "");
                if (close(p[1]) != 0)
                    fail(t, "close: %s", errname(errno));
                it.fd = p[0];
            }
        } else if (what == 1) {
            it.len = (1 + below(t, 4)) * PAGE;
            it.map = mmap(NULL, it.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (it.map == MAP_FAILED) {
                fail(t, "mmap: %s", errname(errno));
                it.map = NULL;
            } else {
                fill(it.map, it.len, it.seed);
            }
        }
        pthread_mutex_lock(&q_lock);
        while (q_count == QSIZE)
            pthread_cond_wait(&q_not_full, &q_lock);
        it.seq = (uint32_t)t->produced++;
        it.check = item_check(it.from, it.seq);
        queue[(q_head + q_count++) % QSIZE] = it;
        pthread_cond_signal(&q_not_empty);
        pthread_mutex_unlock(&q_lock);
    }
}

/* The consumer: items in order from each worker, until every worker is done. */
static void consume(struct thr *t)
{
    pthread_mutex_lock(&q_lock);
    for (;;) {
        while (q_count == 0 && producers_done < nwork)
            pthread_cond_wait(&q_not_empty, &q_lock);
        if (q_count == 0)
            break;
        struct item it = queue[q_head];
        q_head = (q_head + 1) % QSIZE;
        q_count--;
        pthread_cond_signal(&q_not_full);
        pthread_mutex_unlock(&q_lock);
        t->op = K_handoff;
        if (it.from >= (uint32_t)nwork || it.seq != thr[it.from].consumed_of || it.check != item_check(it.from, it.seq))
            fail(t, "item %u of worker %u came when %llu was due", it.seq, it.from,
                 it.from < (uint32_t)nwork ? (unsigned long long)thr[it.from].consumed_of : 0ull);
        else
            thr[it.from].consumed_of++;
        if (it.fd >= 0) {
            long k = read_full(it.fd, t->b, it.len);
            if (k != (long)it.len || !same(t->b, it.len, it.seed))
                fail(t, "a pipe handed off by worker %u: read %ld of %u bytes", it.from, k, it.len);
            if (close(it.fd) != 0)
                fail(t, "close of a pipe handed off: %s", errname(errno));
        }
        if (it.map) {
            if (!same(it.map, it.len, it.seed))
                fail(t, "memory handed off by worker %u is not what it wrote", it.from);
            if (munmap(it.map, it.len) != 0)
                fail(t, "munmap of memory handed off: %s", errname(errno));
        }
        t->ops[K_handoff]++;
        pthread_mutex_lock(&q_lock);
    }
    pthread_mutex_unlock(&q_lock);
}

/* Ping (even values) and pong (odd) pass the futex word: each sees exactly
 * the value the other left, and waits for its turn with FUTEX_WAIT. */
static void pass_ball(struct thr *t, uint32_t parity)
{
    struct timespec wait = { 0, 20 * 1000000 };
    uint32_t mine = parity;                         /* the value of this thread's next turn */
    t->op = K_lock;
    while (!stopping()) {
        uint32_t v = __atomic_load_n(&ball, __ATOMIC_ACQUIRE);
        if (v != mine) {
            if ((v & 1) == parity) {
                fail(t, "the futex word is %u at its turn, not %u", v, mine);
                return;
            }
            long r = futex(&ball, FUTEX_WAIT_PRIVATE, v, &wait);
            if (r != 0 && errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR) {
                fail(t, "FUTEX_WAIT: %s", errname(errno));
                return;
            }
            continue;
        }
        __atomic_store_n(&ball, mine + 1, __ATOMIC_RELEASE);
        long r = futex(&ball, FUTEX_WAKE_PRIVATE, 1, NULL);
        if (r < 0 || r > 1) {
            fail(t, "FUTEX_WAKE: %ld %s", r, r < 0 ? errname(errno) : "");
            return;
        }
        mine += 2;
        t->rounds++;
    }
}

/* ---------------------------------------------------------------- threads */

static void *short_thread(void *arg)
{
    uintptr_t n = (uintptr_t)arg, sum = 0;
    for (uintptr_t i = 1; i <= n; i++)
        sum += i;
    if (gettid_() == getpid())
        return NULL;
    return (void *)sum;
}

static void op_thread(struct thr *t)
{
    pthread_t pt[3];
    uintptr_t arg[3];
    int made = 0, n = 1 + (int)below(t, 3);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (; made < n; made++) {
        arg[made] = 1 + below(t, 1000);
        int e = pthread_create(&pt[made], &attr, short_thread, (void *)arg[made]);
        if (e) {
            fail(t, "pthread_create: %s", errname(e));
            break;
        }
    }
    pthread_attr_destroy(&attr);
    for (int i = 0; i < made; i++) {
        void *ret;
        int e = pthread_join(pt[i], &ret);
        if (e || (uintptr_t)ret != arg[i] * (arg[i] + 1) / 2)
            fail(t, "pthread_join: %s, result %lu of %lu", errname(e), (unsigned long)(uintptr_t)ret,
                 (unsigned long)(arg[i] * (arg[i] + 1) / 2));
    }
}

/* ---------------------------------------------------------------- the threads' lives */

static void work(struct thr *t)
{
    unsigned total = 0;
    for (int k = 0; k < NKINDS; k++)
        total += kind_weight[k];
    while (!stopping()) {
        unsigned pick = below(t, total);
        int k = 0;
        while (pick >= kind_weight[k])
            pick -= kind_weight[k++];
        t->op = k;
        int cpu = sched_getcpu();
        if (cpu >= 0)
            t->cores |= 1ull << (cpu & 63);
        switch (k) {
        case K_pipe: op_pipe(t); break;
        case K_socket: op_socket(t); break;
        case K_file: op_file(t); break;
        case K_memory: op_memory(t); break;
        case K_fork: op_fork(t); break;
        case K_kill: op_kill(t); break;
        case K_signal: op_signal(t); break;
        case K_lock: op_lock(t); break;
        case K_handoff: op_handoff(t); break;
        case K_ids: op_ids(t); break;
        default: op_thread(t); break;
        }
        t->ops[k]++;
    }
    pthread_mutex_lock(&q_lock);                    /* no more items from this one */
    producers_done++;
    pthread_cond_broadcast(&q_not_empty);
    pthread_mutex_unlock(&q_lock);
}

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    sigset_t set;
    self = t;
    t->tid = (pid_t)gettid_();
    t->op = K_START;
    our_signals(&set);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);       /* (blocked in the main thread, and so at first here) */
    pthread_barrier_wait(&start_gate);
    if (t->role == WORKER)
        work(t);
    else if (t->role == CONSUMER)
        consume(t);
    else
        pass_ball(t, t->role == PING ? 0 : 1);
    /* Past the gate no thread sends a signal any more: what was sent to
     * this thread arrives as a call returns (getppid's). Then, blocked,
     * none of those is pending (sigpending tells blocked ones only); a
     * SIGUSR2 may be, as it goes to whichever thread takes it first. */
    t->op = K_STOP;
    pthread_barrier_wait(&stop_gate);
    getppid();
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    sigset_t pending;
    sigemptyset(&pending);
    if (sigpending(&pending) != 0)
        fail(t, "sigpending: %s", errname(errno));
    if (sigismember(&pending, sig_rt) || sigismember(&pending, SIGUSR1))
        fail(t, "a signal sent to this thread still pending after a call returned: real-time %d, SIGUSR1 %d",
             sigismember(&pending, sig_rt), sigismember(&pending, SIGUSR1));
    __atomic_store_n(&t->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int handle(int sig, void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
    long seconds = 60;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
            continue;
        }
        seconds = strtol(argv[i], &end, 10);
        if (*end || seconds < 1 || seconds > 86400) {
            fprintf(stderr, "usage: stress [SECONDS] [-v]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    my_pid = getpid();
    my_ppid = getppid();
    sig_rt = SIGRTMIN + 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    nwork = (int)(cores < 2 ? 2 : cores) + EXTRA;
    if (nwork > MAXWORK)
        nwork = MAXWORK;
    nthr = nwork + NHELP;
    say("stress: %ld s, a worker per core (at least two) and %d more, a consumer, ping and pong", seconds, EXTRA);
    if (verbose)
        say("stress: ~%ld cores, %d workers", cores, nwork);

    struct petrel_usage before, after;
    petrel_usage_read(&before);
    sigset_t set;
    our_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);         /* the main thread takes none of them */
    if (handle(sig_rt, on_rt) || handle(SIGUSR1, on_usr1) || handle(SIGUSR2, on_usr2)) {
        say("stress: sigaction: %s", errname(errno));
        return 1;
    }
    pthread_barrier_init(&start_gate, NULL, (unsigned)nthr + 1);
    pthread_barrier_init(&stop_gate, NULL, (unsigned)nthr);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int i = 0; i < nthr; i++) {
        struct thr *t = &thr[i];
        t->idx = i;
        t->role = i < nwork ? WORKER : i == nwork ? CONSUMER : i == nwork + 1 ? PING : PONG;
        t->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) ^ (uint64_t)now_ms() << 20;
        int e = pthread_create(&t->pt, &attr, thread_main, t);
        if (e) {
            say("stress: pthread_create of thread %d: %s", i, errname(e));
            return 1;                               /* (the others wait at the gate: exit ends them) */
        }
    }
    pthread_attr_destroy(&attr);
    pthread_barrier_wait(&start_gate);
    int64_t t0 = now_ms();
    while (now_ms() - t0 < seconds * 1000)
        sleep_ms(100);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);

    /* Every thread ends its operation and stops within GRACE_S, or what
     * each does is told and that is a failure. */
    int64_t t1 = now_ms();
    for (;;) {
        int all = 1;
        for (int i = 0; i < nthr; i++)
            all &= __atomic_load_n(&thr[i].finished, __ATOMIC_ACQUIRE);
        if (all)
            break;
        if (now_ms() - t1 > GRACE_S * 1000) {
            say("stress: FAILED: threads still running %d s after the end:", GRACE_S);
            for (int i = 0; i < nthr; i++)
                if (!thr[i].finished)
                    say("stress:   %s %d (tid %d) in %s", role_names[thr[i].role], i, (int)thr[i].tid,
                        kind_names[thr[i].op]);
            return 1;
        }
        sleep_ms(50);
    }
    int joined = 0;
    for (int i = 0; i < nthr; i++)
        joined += pthread_join(thr[i].pt, NULL) == 0;
    int st;
    int none_left = waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
    say("stress: every thread stopped and joined: %d, no child left: %d", joined == nthr, none_left);

    /* What they did. */
    uint64_t ops[NKINDS] = { 0 }, rt_sent = 0, rt_got = 0, usr1_sent = 0, usr1_got = 0, produced = 0, consumed = 0;
    uint64_t locked = 0;
    int rt_exact = 1, usr1_sane = 1, in_order = 1;
    for (int i = 0; i < nthr; i++) {
        struct thr *t = &thr[i];
        for (int k = 0; k < NKINDS; k++)
            ops[k] += t->ops[k];
        rt_sent += t->rt_sent;
        rt_got += t->rt_got;
        usr1_sent += t->usr1_sent;
        usr1_got += t->usr1_got;
        produced += t->produced;
        consumed += t->consumed_of;
        locked += t->locked;
        if (t->rt_got != t->rt_sent) {
            rt_exact = 0;
            say("stress: FAILED: %s %d: %llu real-time signals queued to it, %llu arrived", role_names[t->role], i,
                (unsigned long long)t->rt_sent, (unsigned long long)t->rt_got);
        }
        if (t->usr1_got > t->usr1_sent || (t->usr1_sent && !t->usr1_got)) {
            usr1_sane = 0;
            say("stress: FAILED: %s %d: SIGUSR1 sent %llu times, arrived %llu times", role_names[t->role], i,
                (unsigned long long)t->usr1_sent, (unsigned long long)t->usr1_got);
        }
        if (t->consumed_of != t->produced) {
            in_order = 0;
            say("stress: FAILED: worker %d handed off %llu items, %llu arrived in order", i,
                (unsigned long long)t->produced, (unsigned long long)t->consumed_of);
        }
    }
    int usr2_sane = usr2_got <= usr2_sent && (usr2_got > 0) == (usr2_sent > 0);
    if (!usr2_sane)
        say("stress: FAILED: SIGUSR2 sent %llu times to the process, arrived %llu times", (unsigned long long)usr2_sent,
            (unsigned long long)usr2_got);
    if (bad_signals)
        say("stress: FAILED: %llu signals with the wrong siginfo or at the wrong thread", (unsigned long long)bad_signals);
    int count_ok = counter == locked;
    if (!count_ok)
        say("stress: FAILED: the counter is %llu after %llu increments", (unsigned long long)counter,
            (unsigned long long)locked);
    int every_kind = thr[nwork + 1].rounds > 0 && thr[nwork + 2].rounds > 0;
    for (int k = 0; k < NKINDS; k++)
        if (!ops[k]) {
            every_kind = 0;
            say("stress: FAILED: no %s operation ran", kind_names[k]);
        }
    if (verbose) {
        char line[512];
        int k = snprintf(line, sizeof(line), "stress: operations ~");
        for (int i = 0; i < NKINDS; i++)
            k += snprintf(line + k, sizeof(line) - (size_t)k, "%s %llu, ", kind_names[i], (unsigned long long)ops[i]);
        snprintf(line + k, sizeof(line) - (size_t)k, "futex rounds %llu; signals: queued %llu, SIGUSR1 %llu of %llu, "
                 "SIGUSR2 %llu of %llu; items %llu of %llu; counter %llu", (unsigned long long)thr[nwork + 1].rounds,
                 (unsigned long long)rt_got, (unsigned long long)usr1_got, (unsigned long long)usr1_sent,
                 (unsigned long long)usr2_got, (unsigned long long)usr2_sent, (unsigned long long)consumed,
                 (unsigned long long)produced, (unsigned long long)counter);
        say("%s", line);
        uint64_t seen = 0;
        for (int i = 0; i < nwork; i++)
            seen |= thr[i].cores;
        k = snprintf(line, sizeof(line), "stress: the workers ran on cores ~");
        for (int c = 0, first = 1; c < 64; c++)
            if (seen >> c & 1) {
                k += snprintf(line + k, sizeof(line) - (size_t)k, "%s%d", first ? "" : ",", c);
                first = 0;
            }
        say("%s", line);
    }
    say("stress: every kind of operation ran: %d", every_kind);
    say("stress: every queued signal arrived once at its thread: %d, others at most as often as sent: %d",
        rt_exact && !bad_signals, usr1_sane && usr2_sane);
    say("stress: every item handed off arrived in order: %d, the counter exact: %d", in_order, count_ok);
    uint64_t failed = __atomic_load_n(&failures, __ATOMIC_RELAXED);
    say("stress: checks that failed in the operations: %llu", (unsigned long long)failed);

    /* On Petrel: everything the threads and children held is let go. */
    int back = petrel_usage_back(&before, &after, SLACK);
    say("stress: the personality's usage back: %d", back);
    int ok = joined == nthr && none_left && every_kind && rt_exact && !bad_signals && usr1_sane && usr2_sane &&
             in_order && count_ok && !failed && back;
    return ok ? 0 : 1;
}
