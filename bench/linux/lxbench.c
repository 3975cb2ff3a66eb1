/*
 * lxbench: the Linux system call benchmarks of the L4Linux paper's Tables
 * II and III (lmbench's rows), as ONE static program that runs unchanged
 * on Linux and on Petrel's Linux personality in either placement.
 * `./petrel bench` boots it on all three with the same root archive
 * (tools/petrel/bench.py) and compares; `./petrel run --exec lxbench`
 * runs it by hand.
 *
 * Each row prints
 *
 *     BENCH lx_<metric> - <nanoseconds per operation> <operations>
 *
 * timed with the virtual counter (readable at EL0 on both systems; under
 * QEMU's -icount shift=0 a nanosecond is a guest instruction). The "-" is
 * the system, which the harness fills in from the boot. A row whose
 * calls the system does not offer (ENOSYS, EAFNOSUPPORT) prints
 * "BENCH-SKIP lx_<metric> <reason>" instead.
 *
 * `lxbench --exit` exits at once: the program fork+execve runs.
 * `lxbench --quick` runs each row three times and prints "lxbench: ROW
 * ~ran" (or "~skipped: why") instead of figures: the test suite's check
 * that the program runs on Linux and Petrel alike (linux/oracle).
 * `lxbench --trace ROW` runs only the group of rows ROW is in, five times
 * each, for `./petrel profile ROW ANCHOR` (QEMU's log of every
 * instruction of the run).
 * `lxbench --time METRIC N PROGRAM ARG...` times a whole program instead:
 * it runs PROGRAM N times, one after the other (fork, execve, wait; its
 * output to /dev/null), and prints METRIC's row, the time of one run
 * (the apps rows: Debian's python3.11 and sqlite3; the application
 * benchmarks of bench/apps/apps.sh); a run that fails prints "BENCH-SKIP
 * METRIC PROGRAM exited with status N" (or "killed by signal N") instead,
 * and lxbench exits with 1. `lxbench --end` prints the
 * BENCH-END line that closes a boot's figures. `lxbench --since-boot
 * METRIC` prints the virtual counter itself as METRIC's row: the time since
 * the machine was reset (boot_to_shell: run by the first shell, under
 * -icount the instructions the boot took). `lxbench --input N` times the
 * input path as Android has it on Linux (input_rows): it prints
 * "lxbench: press I" for I = 1..N and waits each time for a key the
 * harness presses on the machine's virtio keyboard.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../common/bench.h"
#include "binder_rtt.h"

static uint64_t freq;
static int quick;               /* --quick: a few of each, no figures (the test suite's check) */
static int trace;               /* --trace: five of each (a middle one is profiled) */
static const char *traced;      /* --trace ROW: ROW */

static void report(const char *metric, uint64_t ticks, uint64_t ops)
{
    uint64_t ps = bench_ps(ticks, ops, freq);
    if (quick)
        printf("lxbench: %s ~ran\n", metric);
    else
        printf("BENCH %s - %llu.%03llu %llu\n", metric, (unsigned long long)(ps / 1000),
               (unsigned long long)(ps % 1000), (unsigned long long)ops);
    fflush(stdout);
}

static void skip(const char *metric, const char *why)
{
    printf(quick ? "lxbench: %s ~skipped: %s\n" : "BENCH-SKIP %s %s\n", metric, why);
    fflush(stdout);
}

/* How many of an operation to time: n, or 3 with --quick, 5 with --trace. */
static long times(long n)
{
    return trace ? 5 : quick ? 3 : n;
}

/* With --trace ROW, ROW's loop runs between these two calls, so that
 * ./petrel profile takes an iteration of that row and not of another row
 * of its group that calls the same function (tools/petrel/insntrace.py). */
__attribute__((noinline)) void lxbench_traced_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void lxbench_traced_end(void) { __asm__ volatile("" ::: "memory"); }

#define TIME(metric, ops, body) do {                                    \
        long n_ = times(ops);                                           \
        int traced_ = traced && strcmp(metric, traced) == 0;            \
        if (traced_)                                                    \
            lxbench_traced_begin();                                     \
        uint64_t t0_ = bench_counter();                                 \
        for (long i_ = 0; i_ < n_; i_++) { body; }                      \
        report(metric, bench_counter() - t0_, n_);                      \
        if (traced_)                                                    \
            lxbench_traced_end();                                       \
    } while (0)

static const char *self = "/bin/lxbench";

static int exists(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* ---------------------------------------------------------------- simple calls */

static void simple_calls(void)
{
    char c = 0;
    struct stat st;
    TIME("lx_null_syscall", 4000, getppid());
    int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
    TIME("lx_read_dev_zero", 4000, if (read(zero, &c, 1) != 1) abort());
    TIME("lx_write_dev_null", 4000, if (write(null, &c, 1) != 1) abort());
    TIME("lx_stat", 2000, if (stat(self, &st)) abort());
    int fd = open(self, O_RDONLY);
    TIME("lx_fstat", 4000, if (fstat(fd, &st)) abort());
    TIME("lx_open_close", 2000, int f = open(self, O_RDONLY); if (f < 0) abort(); close(f));
    /* select on 10 descriptors of regular files, all ready, no waiting. */
    int fds[10], top = 0;
    for (int i = 0; i < 10; i++) {
        fds[i] = open(self, O_RDONLY);
        top = fds[i] > top ? fds[i] : top;
    }
    struct timeval tv;
    fd_set set;
    TIME("lx_select_10", 2000,
         FD_ZERO(&set); for (int k = 0; k < 10; k++) FD_SET(fds[k], &set);
         tv.tv_sec = 0; tv.tv_usec = 0;
         if (select(top + 1, &set, NULL, NULL, &tv) != 10) abort());
    for (int i = 0; i < 10; i++)
        close(fds[i]);
    close(fd);
    close(zero);
    close(null);
}

/* ---------------------------------------------------------------- signals */

static volatile int caught;
static void on_usr1(int sig) { (void)sig; caught++; }

static sigjmp_buf fault_jump;
static void on_segv(int sig) { (void)sig; siglongjmp(fault_jump, 1); }

static void signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        skip("lx_sig_install", strerror(errno));
        skip("lx_sig_catch", strerror(errno));
        skip("lx_prot_fault", strerror(errno));
        return;
    }
    TIME("lx_sig_install", 2000, if (sigaction(SIGUSR1, &sa, NULL)) abort());
    TIME("lx_sig_catch", 1000, kill(getpid(), SIGUSR1));
    if (caught != times(1000))
        printf("lxbench: %d of %ld signals caught\n", caught, times(1000));
    /* A write to a read-only page, caught (SIGSEGV) and left by siglongjmp. */
    char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sv;
    memset(&sv, 0, sizeof(sv));
    sv.sa_handler = on_segv;
    sv.sa_flags = SA_NODEFER;
    if (ro == MAP_FAILED || sigaction(SIGSEGV, &sv, NULL) != 0) {
        skip("lx_prot_fault", strerror(errno));
        return;
    }
    uint64_t t0 = bench_counter();
    for (volatile long i = 0; i < times(500); i++)
        if (!sigsetjmp(fault_jump, 0))
            *(volatile char *)ro = 1;
    report("lx_prot_fault", bench_counter() - t0, (uint64_t)times(500));
    signal(SIGSEGV, SIG_DFL);
    munmap(ro, 4096);
}

/* ---------------------------------------------------------------- two processes */

/* One byte there and back between two processes over a pair of pipes
 * (or one socket pair); also the context switch of two processes. */
static void round_trips(void)
{
    int ab[2], ba[2];
    char c = 'x';
    if (pipe(ab) || pipe(ba))
        abort();
    pid_t child = fork();
    if (child == 0) {
        close(ab[1]), close(ba[0]);             /* so that the parent's close ends it */
        while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
            ;
        _exit(0);
    }
    close(ab[0]), close(ba[1]);
    uint64_t t0 = bench_counter();
    for (long i = 0; i < times(500); i++)
        if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
            abort();
    uint64_t ticks = bench_counter() - t0;
    report("lx_pipe_rtt", ticks, (uint64_t)times(500));
    report("lx_ctx_2p", ticks, 2 * (uint64_t)times(500));  /* lmbench's 2p/0k ring: a round trip is two switches */
    close(ab[1]);
    waitpid(child, NULL, 0);
    close(ba[0]);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        skip("lx_unix_rtt", strerror(errno));
        return;
    }
    child = fork();
    if (child == 0) {
        close(sv[0]);
        while (read(sv[1], &c, 1) == 1 && write(sv[1], &c, 1) == 1)
            ;
        _exit(0);
    }
    close(sv[1]);
    TIME("lx_unix_rtt", 500, if (write(sv[0], &c, 1) != 1 || read(sv[0], &c, 1) != 1) abort());
    close(sv[0]);
    waitpid(child, NULL, 0);
}

/* ---------------------------------------------------------------- processes */

static void processes(void)
{
    int status;
    TIME("lx_fork_exit", 40,
         pid_t p = fork(); if (p == 0) _exit(0); if (p < 0 || waitpid(p, &status, 0) != p) abort());
    /* lx_fork_1000: 1,000 forks in a row, each child exiting at once, then
     * all reaped; per process (up to 1,000 of them alive or waiting to be reaped). */
    static pid_t kids[1000];
    long n = times(1000);
    int traced_ = traced && strcmp("lx_fork_1000", traced) == 0;
    if (traced_)
        lxbench_traced_begin();
    uint64_t t0 = bench_counter();
    for (long i = 0; i < n; i++) {
        kids[i] = fork();
        if (kids[i] == 0)
            _exit(0);
        if (kids[i] < 0)
            abort();
    }
    for (long i = 0; i < n; i++)
        if (waitpid(kids[i], &status, 0) != kids[i] || status != 0)
            abort();
    report("lx_fork_1000", bench_counter() - t0, (uint64_t)n);
    if (traced_)
        lxbench_traced_end();
    char *const argv[] = { "lxbench", "--exit", NULL }, *const envp[] = { NULL };
    TIME("lx_fork_execve", 30,
         pid_t p = fork(); if (p == 0) { execve(self, argv, envp); _exit(127); }
         if (p < 0 || waitpid(p, &status, 0) != p || status != 0) abort());
    char *const sh[] = { "sh", "-c", "/bin/lxbench --exit", NULL };
    if (!exists("/bin/sh")) {
        skip("lx_fork_sh", "no /bin/sh");
        return;
    }
    TIME("lx_fork_sh", 10,
         pid_t p = fork(); if (p == 0) { execve("/bin/sh", sh, envp); _exit(127); }
         if (p < 0 || waitpid(p, &status, 0) != p || status != 0) abort());
}

/* ---------------------------------------------------------------- memory */

static void memory(void)
{
    /* Page faults on a private read-only mapping of a file: one per page. */
    const char *file = exists("/bin/busybox") ? "/bin/busybox" : self;
    int fd = open(file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        abort();
    long pages = st.st_size / 4096 > times(256) ? times(256) : st.st_size / 4096;
    volatile char *m = mmap(NULL, pages * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        abort();
    uint64_t t0 = bench_counter();
    for (long i = 0; i < pages; i++)
        (void)m[i * 4096];
    report("lx_file_mmap_fault", bench_counter() - t0, (uint64_t)pages);
    munmap((void *)m, pages * 4096);
    close(fd);
    TIME("lx_mmap_1m", 500,
         void *a = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
         if (a == MAP_FAILED || munmap(a, 1 << 20)) abort());
}

/* pread and pwrite of a page of a file of 16 pages in /tmp: one that was
 * never mapped, then the same file while it is mapped MAP_SHARED (on
 * Petrel its contents are then in a memory object). */
static void file_pages(void)
{
    static char page[4096];
    const char *path = "/tmp/lxbench-pages";
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 16; i++)
        if (write(fd, page, sizeof(page)) != sizeof(page))
            abort();
    TIME("lx_pread_4k", 2000, if (pread(fd, page, 4096, (i_ % 16) * 4096) != 4096) abort());
    char *m = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        skip("lx_pread_4k_shared", "no shared file mappings");
        skip("lx_pwrite_4k_shared", "no shared file mappings");
    } else {
        m[0] = 1;
        TIME("lx_pread_4k_shared", 2000, if (pread(fd, page, 4096, (i_ % 16) * 4096) != 4096) abort());
        TIME("lx_pwrite_4k_shared", 2000, if (pwrite(fd, page, 4096, (i_ % 16) * 4096) != 4096) abort());
        munmap(m, 16 * 4096);
    }
    close(fd);
    unlink(path);
}

/* ---------------------------------------------------------------- a crowded process */

/* Is process pid asleep in a call (its /proc/PID/stat state S)? */
static int sleeping(pid_t pid)
{
    char path[32], text[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    long n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
    if (fd >= 0)
        close(fd);
    text[n > 0 ? n : 0] = 0;
    const char *paren = strrchr(text, ')');
    return !paren || paren[1] != ' ' || paren[2] == 'S';       /* (unreadable: do not wait for it) */
}

/* Called once in each timed iteration of a crowded row: anchors of their
 * own for `./petrel profile` (fork and open run in the setup too). */
static volatile int crowded_row;       /* (a different store in each: the three stay three functions) */
static __attribute__((noinline)) void crowded_open(void) { crowded_row = 1; }
static __attribute__((noinline)) void crowded_mmap(void) { crowded_row = 2; }
static __attribute__((noinline)) void crowded_fork(void) { crowded_row = 3; }

/* Three rows again with much else alive (issue: no fixed tables): open and
 * close with 10,000 descriptors open, mmap and munmap of 1 MiB with 20,000
 * mappings, fork and exit with 1,000 other processes. Each should cost
 * what it does on an empty system (bench.py compares the pairs). */
static void crowded(void)
{
    int nfds = quick ? 20 : trace ? 1000 : 10000, nmaps = quick ? 20 : trace ? 2000 : 20000;
    int nprocs = quick ? 20 : trace ? 100 : 1000;       /* (--trace: a tenth, for the instruction log) */
    struct rlimit rl = { (rlim_t)nfds + 100, (rlim_t)nfds + 100 };
    int null = open("/dev/null", O_RDONLY), first = -1, n = 0;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
        for (; n < nfds; n++) {
            int fd = dup(null);
            if (fd < 0)
                break;
            first = first < 0 ? fd : first;
        }
    if (n < nfds) {
        skip("lx_open_close_10k_fds", "no 10,000 descriptors");
    } else {
        TIME("lx_open_close_10k_fds", 2000, crowded_open(); int f = open(self, O_RDONLY); if (f < 0) abort(); close(f));
    }
    for (int fd = first; fd >= 0 && fd < first + n; fd++)
        close(fd);
    close(null);

    char *maps = mmap(NULL, (size_t)nmaps * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int split = maps != MAP_FAILED;
    for (int i = 1; split && i < nmaps; i += 2)         /* every other page writable: 20,000 ranges */
        split = mprotect(maps + (size_t)i * 4096, 4096, PROT_READ | PROT_WRITE) == 0;
    if (!split) {
        skip("lx_mmap_1m_20k_maps", "no 20,000 mappings");
    } else {
        TIME("lx_mmap_1m_20k_maps", 500, crowded_mmap();
             void *a = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
             if (a == MAP_FAILED || munmap(a, 1 << 20)) abort());
    }
    if (maps != MAP_FAILED)
        munmap(maps, (size_t)nmaps * 4096);

    static pid_t kids[1000];
    int ready[2], alive = 0, status;
    if (pipe(ready))
        abort();
    for (; alive < nprocs; alive++) {
        pid_t p = fork();
        if (p == 0) {
            char b = 0;
            close(ready[0]);
            write(ready[1], &b, 1);
            close(ready[1]);
            for (;;)
                pause();                        /* until the parent kills it */
        }
        if (p < 0)
            break;
        kids[alive] = p;
    }
    close(ready[1]);                            /* (the parent keeps no more descriptors than before) */
    for (int got = 0; got < alive; ) {          /* each has started (and the timing is of the forks alone) */
        char buf[256];
        long n = read(ready[0], buf, sizeof(buf));
        if (n <= 0)
            break;
        got += (int)n;
    }
    close(ready[0]);
    for (int i = 0; i < alive; i++)             /* ... and waits in pause: nothing of theirs runs meanwhile */
        while (!sleeping(kids[i]))
            sched_yield();
    if (alive < nprocs) {
        skip("lx_fork_exit_1k_procs", "no 1,000 processes");
    } else {
        TIME("lx_fork_exit_1k_procs", 40, crowded_fork();
             pid_t p = fork(); if (p == 0) _exit(0); if (p < 0 || waitpid(p, &status, 0) != p) abort());
    }
    for (int i = 0; i < alive; i++)
        kill(kids[i], SIGKILL);
    for (int i = 0; i < alive; i++)
        waitpid(kids[i], &status, 0);
}

/* A CPU-bound loop: no system call at all, the same instructions on both. */
/* ---------------------------------------------------------------- the network */

#define NET_PORT 5401
#define STREAM_CHUNK 65536

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void skip_network(const char *why)
{
    skip("lx_tcp_rr_loopback", why);
    skip("lx_udp_rr_loopback", why);
    skip("lx_tcp_connect_loopback", why);
    skip("lx_tcp_stream_loopback", why);
}

/* A TCP connection over 127.0.0.1 to a child process that runs `serve`
 * on its end; the parent's end, or -1. */
static int tcp_pair(int port, void (*serve)(int), pid_t *child)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = loopback(port);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0)
        return -1;
    *child = fork();
    if (*child == 0) {
        int c = accept(l, NULL, NULL);
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        serve(c);
        _exit(0);
    }
    close(l);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
        return -1;
    return c;
}

static void echo_bytes(int c)
{
    char b;
    while (read(c, &b, 1) == 1 && write(c, &b, 1) == 1)
        ;
}

static void drain(int c)
{
    static char buf[STREAM_CHUNK];
    while (read(c, buf, sizeof(buf)) > 0)
        ;
}

/* netperf's TCP_RR and UDP_RR (1-byte request and response), TCP_CRR
 * (connect, a 1-byte request and response, close), and a stream of 64 KiB
 * writes, all over 127.0.0.1 between two processes. */
static void network(void)
{
    char c = 'x';
    pid_t child;
    int s = tcp_pair(NET_PORT, echo_bytes, &child);
    if (s < 0) {
        skip_network(strerror(errno));
        return;
    }
    TIME("lx_tcp_rr_loopback", 500, if (write(s, &c, 1) != 1 || read(s, &c, 1) != 1) abort());
    close(s);
    waitpid(child, NULL, 0);

    int u = socket(AF_INET, SOCK_DGRAM, 0), v = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in ua = loopback(NET_PORT + 1), va = loopback(NET_PORT + 2);
    if (u < 0 || v < 0 || bind(u, (struct sockaddr *)&ua, sizeof(ua)) || bind(v, (struct sockaddr *)&va, sizeof(va)) ||
        connect(u, (struct sockaddr *)&va, sizeof(va)) || connect(v, (struct sockaddr *)&ua, sizeof(ua))) {
        skip("lx_udp_rr_loopback", strerror(errno));
    } else {
        child = fork();
        if (child == 0) {
            while (recv(v, &c, 1, 0) == 1 && c != 'q' && send(v, &c, 1, 0) == 1)
                ;
            _exit(0);
        }
        TIME("lx_udp_rr_loopback", 500, if (send(u, &c, 1, 0) != 1 || recv(u, &c, 1, 0) != 1) abort());
        send(u, "q", 1, 0);
        waitpid(child, NULL, 0);
    }
    close(u);
    close(v);

    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in la = loopback(NET_PORT + 3);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (l < 0 || bind(l, (struct sockaddr *)&la, sizeof(la)) != 0 || listen(l, 8) != 0) {
        skip("lx_tcp_connect_loopback", strerror(errno));
    } else {
        child = fork();
        if (child == 0) {
            for (;;) {
                int a = accept(l, NULL, NULL);
                if (a < 0 || read(a, &c, 1) != 1 || c == 'q' || write(a, &c, 1) != 1)
                    _exit(0);
                close(a);
            }
        }
        /* (the answer keeps the two in step: connecting on, the client
         * would fill the listener's queue, and a SYN finding it full waits
         * a second to be sent again) */
        TIME("lx_tcp_connect_loopback", 100, {
            int k = socket(AF_INET, SOCK_STREAM, 0);
            if (k < 0 || connect(k, (struct sockaddr *)&la, sizeof(la)) != 0 || write(k, "c", 1) != 1 ||
                read(k, &c, 1) != 1)
                abort();
            close(k);
        });
        int k = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(k, (struct sockaddr *)&la, sizeof(la)) == 0)
            write(k, "q", 1);
        close(k);
        waitpid(child, NULL, 0);
    }
    close(l);

    s = tcp_pair(NET_PORT + 4, drain, &child);
    if (s < 0) {
        skip("lx_tcp_stream_loopback", strerror(errno));
        return;
    }
    static char chunk[STREAM_CHUNK];
    TIME("lx_tcp_stream_loopback", 64, if (write(s, chunk, sizeof(chunk)) != sizeof(chunk)) abort());
    close(s);
    waitpid(child, NULL, 0);
}

static void cpu_loop(void)
{
    volatile uint64_t sink;
    uint64_t x = 1, t0 = bench_counter();
    for (long i = 0; i < times(2000000); i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
    (void)sink;
    report("lx_cpu_loop", bench_counter() - t0, (uint64_t)times(2000000));
}

/* The file system rows, on the disk's ext2 at /data (lmbench's lat_fs
 * shapes, and sequential and random transfers): skipped without one. */
#define FS_FILES        200
#define FS_BIG          (1 << 20)
#define FS_RAND_FILE    (8 << 20)

static void fs_rows(void)
{
    static const char *const names[] = { "lx_fs_create_0k", "lx_fs_create_10k", "lx_fs_delete_0k",
                                         "lx_fs_read_seq_1m", "lx_fs_write_seq_1m_fsync", "lx_fs_read_rand_4k",
                                         "lx_fs_stat" };
    struct statfs sf;
    if (statfs("/data", &sf) != 0 || sf.f_type != 0xef53 || mkdir("/data/lxbench", 0755) != 0) {
        for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            skip(names[i], "no ext2 disk at /data");
        return;
    }
    static char path[64], ten[10240], big[FS_BIG];
    memset(ten, 'x', sizeof(ten));
    for (unsigned i = 0; i < sizeof(big); i++)
        big[i] = (char)(i * 7);
    long files = times(FS_FILES);
    TIME("lx_fs_create_0k", FS_FILES, {
        snprintf(path, sizeof(path), "/data/lxbench/z%ld", i_);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || close(fd))
            abort();
    });
    TIME("lx_fs_create_10k", FS_FILES, {
        snprintf(path, sizeof(path), "/data/lxbench/t%ld", i_);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write(fd, ten, sizeof(ten)) != sizeof(ten) || close(fd))
            abort();
    });
    TIME("lx_fs_delete_0k", FS_FILES, {
        snprintf(path, sizeof(path), "/data/lxbench/z%ld", i_);
        if (unlink(path))
            abort();
    });
    for (long i = 0; i < files; i++) {
        snprintf(path, sizeof(path), "/data/lxbench/t%ld", i);
        unlink(path);
    }
    int fd = open("/data/lxbench/big", O_RDWR | O_CREAT | O_TRUNC, 0644);
    TIME("lx_fs_write_seq_1m_fsync", 20, {
        if (pwrite(fd, big, sizeof(big), 0) != sizeof(big) || fsync(fd))
            abort();
    });
    TIME("lx_fs_read_seq_1m", 50, {
        for (long at = 0; at < FS_BIG; at += 65536)
            if (pread(fd, big + at, 65536, at) != 65536)
                abort();
    });
    close(fd);
    fd = open("/data/lxbench/rand", O_RDWR | O_CREAT | O_TRUNC, 0644);
    for (long at = 0; at < FS_RAND_FILE; at += FS_BIG)
        if (pwrite(fd, big, FS_BIG, at) != FS_BIG)
            abort();
    fsync(fd);
    uint64_t x = 88172645463325252ull;
    TIME("lx_fs_read_rand_4k", 2000, {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (pread(fd, big, 4096, (off_t)(x % (FS_RAND_FILE / 4096)) * 4096) != 4096)
            abort();
    });
    close(fd);
    struct stat st;
    TIME("lx_fs_stat", 2000, if (stat("/data/lxbench/rand", &st)) abort());
    unlink("/data/lxbench/big");
    unlink("/data/lxbench/rand");
    rmdir("/data/lxbench");
}

static void fs_throughput(void);
static void binder_rows(void);

/* The groups of rows, each with the first row and the one after its last. */
static const struct { const char *first; void (*run)(void); } groups[] = {
    { "lx_null_syscall", simple_calls }, { "lx_sig_install", signals }, { "lx_pipe_rtt", round_trips },
    { "lx_fork_exit", processes }, { "lx_file_mmap_fault", memory }, { "lx_pread_4k", file_pages },
    { "lx_open_close_10k_fds", crowded }, { "lx_tcp_rr_loopback", network }, { "lx_cpu_loop", cpu_loop },
    { "lx_fs_create_0k", fs_rows }, { "lx_fs_write_256m_fsync", fs_throughput }, { "binder_rtt_4b", binder_rows },
};
static const char *const rows[] = {
    "lx_null_syscall", "lx_read_dev_zero", "lx_write_dev_null", "lx_stat", "lx_fstat", "lx_open_close",
    "lx_select_10", "lx_sig_install", "lx_sig_catch", "lx_prot_fault", "lx_pipe_rtt", "lx_ctx_2p", "lx_unix_rtt",
    "lx_fork_exit", "lx_fork_1000", "lx_fork_execve", "lx_fork_sh", "lx_file_mmap_fault", "lx_mmap_1m", "lx_pread_4k",
    "lx_pread_4k_shared", "lx_pwrite_4k_shared", "lx_open_close_10k_fds", "lx_mmap_1m_20k_maps",
    "lx_fork_exit_1k_procs", "lx_tcp_rr_loopback", "lx_udp_rr_loopback", "lx_tcp_connect_loopback",
    "lx_tcp_stream_loopback", "lx_cpu_loop", "lx_fs_create_0k", "lx_fs_create_10k", "lx_fs_delete_0k",
    "lx_fs_write_seq_1m_fsync", "lx_fs_read_seq_1m", "lx_fs_read_rand_4k", "lx_fs_stat",
    "lx_fs_write_256m_fsync", "lx_fs_read_256m", "binder_rtt_4b", "binder_rtt_4k",
};

/* --trace ROW: run the group ROW is in (rows are listed group by group). */
static int trace_row(const char *row)
{
    void (*run)(void) = NULL;
    for (unsigned i = 0, g = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (g + 1 < sizeof(groups) / sizeof(groups[0]) && strcmp(rows[i], groups[g + 1].first) == 0)
            g++;
        if (strcmp(rows[i], row) == 0)
            run = groups[g].run;
    }
    if (!run) {
        printf("lxbench: no row %s\n", row);
        return 2;
    }
    run();
    return 0;
}

extern char **environ;

/* --time: PROGRAM (argv[0] of `prog`) run n times; its row. */
static int time_program(const char *metric, long n, char **prog)
{
    if (n <= 0) {
        skip(metric, "bad-count");
        return 2;
    }
    uint64_t t0 = bench_counter();
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execve(prog[0], prog, environ);        /* (lxrun's, or Linux's /init's) */
            _exit(127);
        }
        int status = -1;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) {
            if (pid > 0 && WIFEXITED(status))
                printf("BENCH-SKIP %s %s exited with status %d\n", metric, prog[0], WEXITSTATUS(status));
            else if (pid > 0 && WIFSIGNALED(status))
                printf("BENCH-SKIP %s %s killed by signal %d\n", metric, prog[0], WTERMSIG(status));
            else
                printf("BENCH-SKIP %s %s could not be started (%s)\n", metric, prog[0], strerror(errno));
            return 1;
        }
    }
    report(metric, bench_counter() - t0, (uint64_t)n);
    return 0;
}

/* --fs-throughput (the bench runs it in wall mode): 256 MiB written to
 * /data a MiB at a time and fsync'ed, then read back a MiB at a time
 * after POSIX_FADV_DONTNEED (Linux then drops the file's clean pages, so
 * both systems read it from the disk): one operation each. */
/* A call of the throughput run failed: which one, where and why. */
static void fs_fail(const char *call, long mib)
{
    printf("lxbench: %s of MiB %ld of /data/lxbench-256m failed: %s\n", call, mib, strerror(errno));
    abort();
}

static void fs_throughput(void)
{
    static char mib[1 << 20];
    struct statfs sf;
    if (statfs("/data", &sf) != 0 || sf.f_type != 0xef53 || (uint64_t)sf.f_bavail * sf.f_bsize < (300ull << 20)) {
        skip("lx_fs_write_256m_fsync", "no ext2 disk with 300 MiB free at /data");
        skip("lx_fs_read_256m", "no ext2 disk with 300 MiB free at /data");
        return;
    }
    for (unsigned i = 0; i < sizeof(mib); i++)
        mib[i] = (char)(i * 13);
    int fd = open("/data/lxbench-256m", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        fs_fail("open", 0);
    uint64_t t0 = bench_counter();
    for (long i = 0; i < 256; i++)
        if (pwrite(fd, mib, sizeof(mib), (off_t)i << 20) != sizeof(mib))
            fs_fail("pwrite", i);
    if (fsync(fd))
        fs_fail("fsync", 256);
    report("lx_fs_write_256m_fsync", bench_counter() - t0, 1);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    t0 = bench_counter();
    for (long i = 0; i < 256; i++)
        if (pread(fd, mib, sizeof(mib), (off_t)i << 20) != sizeof(mib))
            fs_fail("pread", i);
    report("lx_fs_read_256m", bench_counter() - t0, 1);
    close(fd);
    unlink("/data/lxbench-256m");
}

/* Binder round trips (binder_rtt.h, as bench.c times them against
 * Petrel's IPC): a call of 4 bytes and of 4 KiB to a context manager in
 * another process, answered with the same bytes. Skipped without
 * /dev/binder (on Linux: binder_linux not loaded). */
static void binder_rows(void)
{
    static const struct { const char *name; size_t len; } rows[] = { { "binder_rtt_4b", 4 }, { "binder_rtt_4k", 4096 } };
    if (access("/dev/binder", F_OK) != 0) {
        for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
            skip(rows[i].name, "no /dev/binder");
        return;
    }
    pid_t server = fork();
    if (server == 0)
        binder_server();
    static char data[BINDER_RTT_MAX];
    memset(data, 'b', sizeof(data));
    struct binder b;
    uint64_t pending = 0;
    int ok = binder_open(&b) == 0, called = 0;
    for (int tries = 0; ok && !called && tries < 200; tries++) {
        usleep(10000);                          /* (until the server is the context manager) */
        called = binder_call(&b, data, 4, &pending) == 0;
    }
    ok = ok && called;
    for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (!ok) {
            skip(rows[i].name, "binder-call-failed");
            continue;
        }
        TIME(rows[i].name, 2000, if (binder_call(&b, data, rows[i].len, &pending)) abort());
    }
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    close(b.fd);
}

/* The input path as Android's is on Linux (the OKL4 paper's Figs. 6-8):
 * a reader process reads the keyboard's events from /dev/input/event0
 * (their time in CLOCK_MONOTONIC: when the driver's interrupt took them)
 * and hands each key press to the application process in a Binder call
 * (binder_rtt.h's context manager, which takes the time it got it). After
 * N presses the application prints, as nanoseconds per press:
 * input_obtain (the interrupt to the reader's read returning),
 * input_dispatch (the read to the application's receipt) and
 * input_path_e2e. evdev's times are in microseconds, so each press's
 * figures are up to 1 us late or early, on both systems alike. */
#define EVIOCSCLOCKID_ 0x400445a0
static int input_n, input_got;
static uint64_t input_sum[3];

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void input_print(const char *metric, uint64_t sum, int n)
{
    uint64_t ps = sum * 1000 / (uint64_t)n;
    printf("BENCH %s - %llu.%03llu %d\n", metric, (unsigned long long)(ps / 1000), (unsigned long long)(ps % 1000),
           n);
}

/* The application's side: each press's times (the event's, the read's). */
static void input_received(const struct binder_transaction_data *tr)
{
    uint64_t now = mono_ns(), t[2];
    if (tr->data_size != sizeof(t))
        return;                                 /* (the reader's first call, to find it) */
    memcpy(t, (const void *)tr->buffer, sizeof(t));
    input_sum[0] += t[1] - t[0];
    input_sum[1] += now - t[1];
    input_sum[2] += now - t[0];
    if (++input_got == input_n) {
        input_print("input_obtain", input_sum[0], input_n);
        input_print("input_dispatch", input_sum[1], input_n);
        input_print("input_path_e2e", input_sum[2], input_n);
        fflush(stdout);
    }
}

static int input_rows(int n)
{
    static const char *const names[] = { "input_obtain", "input_dispatch", "input_path_e2e" };
    int fd = open("/dev/input/event0", O_RDONLY | O_CLOEXEC), mono = CLOCK_MONOTONIC;
    for (int tries = 0; fd < 0 && tries < 200; tries++) {
        usleep(10000);                          /* (Linux's devtmpfs makes the node a moment after the driver) */
        fd = open("/dev/input/event0", O_RDONLY | O_CLOEXEC);
    }
    const char *why = fd < 0 ? "no-/dev/input/event0" : access("/dev/binder", F_OK) ? "no-/dev/binder" :
                      ioctl(fd, EVIOCSCLOCKID_, &mono) ? "no-monotonic-clock" : NULL;
    input_n = n;
    pid_t app = why ? -1 : fork();
    if (app == 0)
        binder_serve(input_received, -1);
    struct binder b;
    uint64_t pending = 0, t[2];
    int called = 0;
    if (!why && binder_open(&b) == 0)
        for (int tries = 0; !called && tries < 200; tries++) {
            usleep(10000);                      /* (until the application is the context manager) */
            called = binder_call(&b, "find", 4, &pending) == 0;
        }
    why = why ? why : called ? NULL : "binder-call-failed";
    for (int i = 1; !why && i <= n; i++) {
        printf("lxbench: press %d\n", i);
        fflush(stdout);
        struct { int64_t sec, usec; uint16_t type, code; int32_t value; } ev[16];
        int found = 0;
        while (!found && !why) {
            long got = read(fd, ev, sizeof(ev));
            uint64_t read_at = mono_ns();
            if (got <= 0) {
                why = "read-failed";
                break;
            }
            for (long e = 0; e < got / (long)sizeof(ev[0]) && !found; e++) {
                if (ev[e].type == 1 && ev[e].value == 1) {
                    t[0] = (uint64_t)ev[e].sec * 1000000000u + (uint64_t)ev[e].usec * 1000u;
                    t[1] = read_at;
                    found = 1;
                }
            }
        }
        if (found && binder_call(&b, (const char *)t, sizeof(t), &pending))
            why = "binder-call-failed";
    }
    for (unsigned i = 0; why && i < sizeof(names) / sizeof(names[0]); i++)
        skip(names[i], why);
    usleep(100000);                             /* (the application prints its rows meanwhile) */
    if (app > 0) {
        kill(app, SIGKILL);
        waitpid(app, NULL, 0);
    }
    return why ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exit") == 0)
        return 0;
    if (argc > 2 && strcmp(argv[1], "--since-boot") == 0) {
        freq = bench_freq();
        report(argv[2], bench_counter(), 1);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--fs-throughput") == 0) {
        freq = bench_freq();
        setvbuf(stdout, NULL, _IOLBF, 0);
        fs_throughput();
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "--input") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return input_rows((int)strtol(argv[2], NULL, 10));
    }
    if (argc > 1 && strcmp(argv[1], "--end") == 0) {
        printf("BENCH-END\n");
        return 0;
    }
    if (argc > 4 && strcmp(argv[1], "--time") == 0) {
        freq = bench_freq();
        setvbuf(stdout, NULL, _IOLBF, 0);
        return time_program(argv[2], strtol(argv[3], NULL, 10), argv + 4);
    }
    trace = argc > 2 && strcmp(argv[1], "--trace") == 0;
    freq = bench_freq();
    if (trace) {
        traced = argv[2];
        return trace_row(argv[2]);
    }
    quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    simple_calls();
    signals();
    round_trips();
    processes();
    memory();
    file_pages();
    crowded();
    network();
    cpu_loop();
    fs_rows();
    binder_rows();
    printf(quick ? "lxbench: done\n" : "BENCH-END\n");
    return 0;
}
