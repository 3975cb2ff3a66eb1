/*
 * The Linux side of `./petrel bench`: PID 1 of the baseline initramfs.
 * It mounts /dev and /proc, loads binder_linux (devices=binder), runs the
 * same benchmarks as bench/programs/bench on Linux's primitives — Binder,
 * pipes, AF_UNIX sockets, futexes over shared memory, eventfd — prints the
 * same BENCH lines, and powers the machine off. Built static with musl.
 * Argument (kernel command line): quick=1 for a short pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
/* (musl ships no kernel headers: the futex operations by number) */
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../common/bench.h"

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

static uint64_t freq, overhead, scale = 1;
static int ncpus;
static const char *only;        /* run one benchmark (kernel command line only=NAME) */

static int wanted(const char *metric)
{
    return !only || !strcmp(only, metric);
}
extern char **environ;

static void report(const char *metric, const char *system, uint64_t ticks, uint64_t iters)
{
    ticks = ticks > overhead ? ticks - overhead : 0;
    uint64_t ps = bench_ps(ticks, iters, freq);
    printf("BENCH %s %s %lu.%03lu %lu\n", metric, system, (unsigned long)(ps / 1000), (unsigned long)(ps % 1000),
           (unsigned long)iters);
    fflush(stdout);
}

static void report_bw_as(const char *metric, const char *system, uint64_t ticks, uint64_t bytes)
{
    uint64_t ns = ticks * (1000000000ull / freq);
    printf("BENCH %s %s %lu.000 %lu MB/s\n", metric, system, (unsigned long)(ns ? bytes * 1000 / ns : 0),
           (unsigned long)bytes);
    fflush(stdout);
}

static void report_bw(const char *metric, uint64_t ticks, uint64_t bytes)
{
    report_bw_as(metric, "linux", ticks, bytes);
}

#define TIME(iters, body) ({ \
    for (uint64_t _w = 0; _w < (iters) / 10 + 1; _w++) { body; } \
    uint64_t _t0 = bench_counter(); \
    for (uint64_t _i = 0; _i < (iters); _i++) { body; } \
    bench_counter() - _t0; })

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static long futex(volatile uint32_t *w, int op, uint32_t val)
{
    return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

/* ------------------------------------------------------------ transports */

/* A bidirectional byte channel between two processes (or threads). */
struct chan {
    int kind;                       /* 0 pipe, 1 unix, 2 futex */
    int rd[2], wr[2];               /* pipe: parent->child, child->parent */
    int sv[2];
    struct shm { volatile uint32_t req, rsp; char buf[256]; } *shm;
};

static void chan_open(struct chan *c, int kind)
{
    c->kind = kind;
    if (kind == 0) {
        pipe(c->rd);
        pipe(c->wr);
    } else if (kind == 1) {
        socketpair(AF_UNIX, SOCK_STREAM, 0, c->sv);
    } else {
        c->shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        memset((void *)c->shm, 0, 4096);
    }
}

static void readn(int fd, char *b, size_t n)
{
    while (n) {
        ssize_t r = read(fd, b, n);
        if (r <= 0)
            _exit(1);
        b += r;
        n -= (size_t)r;
    }
}

/* The client's round trip of `len` bytes. */
static void chan_call(struct chan *c, char *buf, size_t len)
{
    if (c->kind == 0) {
        write(c->rd[1], buf, len);
        readn(c->wr[0], buf, len);
    } else if (c->kind == 1) {
        write(c->sv[0], buf, len);
        readn(c->sv[0], buf, len);
    } else {
        memcpy(c->shm->buf, buf, len);
        __atomic_store_n(&c->shm->req, 1, __ATOMIC_RELEASE);
        futex(&c->shm->req, FUTEX_WAKE, 1);
        while (!__atomic_load_n(&c->shm->rsp, __ATOMIC_ACQUIRE))
            futex(&c->shm->rsp, FUTEX_WAIT, 0);
        c->shm->rsp = 0;
        memcpy(buf, c->shm->buf, len);
    }
}

/* The server's loop: echo `len`-byte messages back forever. */
static void chan_serve(struct chan *c, size_t len)
{
    char buf[256];
    for (;;) {
        if (c->kind == 0) {
            readn(c->rd[0], buf, len);
            write(c->wr[1], buf, len);
        } else if (c->kind == 1) {
            readn(c->sv[1], buf, len);
            write(c->sv[1], buf, len);
        } else {
            while (!__atomic_load_n(&c->shm->req, __ATOMIC_ACQUIRE))
                futex(&c->shm->req, FUTEX_WAIT, 0);
            c->shm->req = 0;
            memcpy(buf, c->shm->buf, len);
            memcpy(c->shm->buf, buf, len);
            __atomic_store_n(&c->shm->rsp, 1, __ATOMIC_RELEASE);
            futex(&c->shm->rsp, FUTEX_WAKE, 1);
        }
    }
}

static const char *const chan_names[] = { "linux-pipe", "linux-unix", "linux-futex" };

/* Round trips between two processes; server on core `server_cpu`. */
static void rtt_processes(const char *metric, int kind, size_t len, int server_cpu, uint64_t n)
{
    struct chan c;
    chan_open(&c, kind);
    pid_t pid = fork();
    if (pid == 0) {
        pin(server_cpu);
        chan_serve(&c, len);
    }
    char buf[256] = "ping";
    report(metric, chan_names[kind], TIME(n, chan_call(&c, buf, len)), n);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

struct serve_arg { struct chan *c; size_t len; };

static void *serve_thread(void *arg)
{
    struct serve_arg *a = arg;
    chan_serve(a->c, a->len);
    return NULL;
}

/* Round trips between two threads of one process. */
static void rtt_threads(const char *metric, int kind, size_t len, uint64_t n)
{
    struct chan c;
    chan_open(&c, kind);
    struct serve_arg a = { &c, len };
    pthread_t t;
    pthread_create(&t, NULL, serve_thread, &a);
    char buf[256] = "ping";
    report(metric, chan_names[kind], TIME(n, chan_call(&c, buf, len)), n);
    /* the server thread stays blocked; the process moves on */
}

/* ------------------------------------------------------------ binder */

#include "binder_rtt.h"

static void rtt_binder(const char *metric, size_t len, int server_cpu, uint64_t n)
{
    pid_t pid = fork();
    if (pid == 0) {
        pin(server_cpu);
        binder_server();
    }
    usleep(100000);                     /* let it become the context manager */
    struct binder b;
    uint64_t pending = 0;
    char data[256] = "ping";
    if (binder_open(&b) == 0 && binder_call(&b, data, len, &pending) == 0)
        report(metric, "linux-binder", TIME(n, binder_call(&b, data, len, &pending)), n);
    else
        printf("bench: binder unavailable: %s\n", strerror(errno));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(b.fd);
}

/* ------------------------------------------------------------ the rest */

static volatile uint32_t fa, fb;
static int efd_a, efd_b;

static void *futex_pong(void *arg)
{
    for (;;) {
        while (!__atomic_load_n(&fb, __ATOMIC_ACQUIRE))
            futex(&fb, FUTEX_WAIT_PRIVATE, 0);
        fb = 0;
        __atomic_store_n(&fa, 1, __ATOMIC_RELEASE);
        futex(&fa, FUTEX_WAKE_PRIVATE, 1);
    }
    return NULL;
}

static void *eventfd_pong(void *arg)
{
    uint64_t v;
    for (;;) {
        read(efd_b, &v, 8);
        write(efd_a, &v, 8);
    }
    return NULL;
}

static void wakeups(uint64_t n)
{
    pthread_t t;
    pthread_create(&t, NULL, futex_pong, NULL);
    uint64_t ticks = TIME(n, {
        __atomic_store_n(&fb, 1, __ATOMIC_RELEASE);
        futex(&fb, FUTEX_WAKE_PRIVATE, 1);
        while (!__atomic_load_n(&fa, __ATOMIC_ACQUIRE))
            futex(&fa, FUTEX_WAIT_PRIVATE, 0);
        fa = 0;
    });
    report("futex_wake", "linux-futex", ticks, 2 * n);
    report("notify_wake", "linux-futex", ticks, 2 * n);
    efd_a = eventfd(0, 0);
    efd_b = eventfd(0, 0);
    pthread_create(&t, NULL, eventfd_pong, NULL);
    uint64_t one = 1, v;
    ticks = TIME(n, { write(efd_b, &one, 8); read(efd_a, &v, 8); });
    report("notify_wake", "linux", ticks, 2 * n);
}

static void ctx_switch(uint64_t n)
{
    int p1[2], p2[2];
    pipe(p1);
    pipe(p2);
    pid_t pid = fork();
    char c = 't';
    if (pid == 0) {
        for (;;) {
            read(p1[0], &c, 1);
            write(p2[1], &c, 1);
        }
    }
    report("ctx_switch_2p", "linux", TIME(n, { write(p1[1], &c, 1); read(p2[0], &c, 1); }), 2 * n);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void memory(uint64_t pages, uint64_t n)
{
    uint64_t total = 0;
    for (int round = 0; round < 4; round++) {
        volatile uint8_t *p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        uint64_t t0 = bench_counter();
        for (uint64_t i = 0; i < pages; i++)
            p[i * 4096] = 1;
        total += bench_counter() - t0;
        munmap((void *)p, pages * 4096);
    }
    report("page_fault", "linux", total, 4 * pages);
    report("map_unmap_4k", "linux", TIME(n, {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(p, 4096);
    }), n);
}

static void *nothing(void *arg) { return arg; }

static void creation(uint64_t n)
{
    report("thread_create_exit", "linux", TIME(n, {
        pthread_t t;
        pthread_create(&t, NULL, nothing, NULL);
        pthread_join(t, NULL);
    }), n);
    char *argv[] = { "/null", NULL };
    uint64_t m = n / 5 + 1;
    report("process_spawn_exit", "linux", TIME(m, {
        pid_t pid;
        if (posix_spawn(&pid, "/null", NULL, NULL, argv, environ) == 0)
            waitpid(pid, NULL, 0);
    }), m);
}

static void bandwidth(uint64_t bytes)
{
    uint8_t *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    uint8_t *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    bw_read(a, bytes);
    uint64_t t0 = bench_counter();
    for (int i = 0; i < 4; i++)
        bw_read(a, bytes);
    report_bw("mem_read_bw", bench_counter() - t0, 4 * bytes);
    bw_copy(b, a, bytes);
    t0 = bench_counter();
    for (int i = 0; i < 4; i++)
        bw_copy(b, a, bytes);
    report_bw("mem_copy_bw", bench_counter() - t0, 4 * bytes);
}

/*
 * The file service's anchor: a 128 KiB file on tmpfs written, then read,
 * in 16 KiB requests, the same rounds as Petrel's file_rw
 * (bench/programs/bench).
 * Reported for both placements' rows as system linux-tmpfs.
 */
static void tmpfs_rw(void)
{
    static uint8_t chunk[16384];
    uint64_t rounds = 20 / (scale > 20 ? 20 : scale);
    mkdir("/tmp", 0777);
    if (getpid() == 1 && mount("tmpfs", "/tmp", "tmpfs", 0, NULL) != 0)
        printf("bench: cannot mount tmpfs on /tmp: %s\n", strerror(errno));
    int fd = open("/tmp/bench", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        printf("bench: cannot create /tmp/bench: %s\n", strerror(errno));
        return;
    }
    uint64_t t0 = bench_counter();
    for (uint64_t r = 0; r < rounds; r++) {
        lseek(fd, 0, SEEK_SET);
        for (int i = 0; i < 8; i++)
            if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
                printf("bench: tmpfs write failed: %s\n", strerror(errno));
    }
    uint64_t tw = bench_counter() - t0;
    t0 = bench_counter();
    for (uint64_t r = 0; r < rounds; r++) {
        lseek(fd, 0, SEEK_SET);
        for (int i = 0; i < 8; i++)
            if (read(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
                printf("bench: tmpfs read failed: %s\n", strerror(errno));
    }
    uint64_t tr = bench_counter() - t0;
    close(fd);
    unlink("/tmp/bench");
    uint64_t bytes = rounds * 8 * sizeof(chunk);
    static const char *const where[] = { "kernel", "user" };
    for (int i = 0; i < 2; i++) {
        char m[32];
        snprintf(m, sizeof(m), "file_write_%s", where[i]);
        if (wanted(m))
            report_bw_as(m, "linux-tmpfs", tw, bytes);
        snprintf(m, sizeof(m), "file_read_%s", where[i]);
        if (wanted(m))
            report_bw_as(m, "linux-tmpfs", tr, bytes);
    }
}

static void load_binder(void)
{
    int fd = open("/binder_linux.ko", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || syscall(SYS_finit_module, fd, "devices=binder", 0) != 0)
        printf("bench: cannot load binder_linux: %s\n", strerror(errno));
    close(fd);
}

int main(int argc, char **argv)
{
    if (getpid() == 1) {
        mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        mount("proc", "/proc", "proc", 0, NULL);
        load_binder();
    }
    freq = bench_freq();
    ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    const char *quick = getenv("quick");
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "quick=1"))
            quick = "1";
    if (quick)
        scale = 100;
    only = getenv("only");
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "only=", 5))
            only = argv[i] + 5;
    pin(0);
    uint64_t t0 = bench_counter();
    for (int i = 0; i < 100; i++)
        (void)bench_counter();
    overhead = (bench_counter() - t0) / 100;
    printf("BENCH-START linux cores=%d\n", ncpus);
    uint64_t n = 10000 / scale;

    if (wanted("null_syscall"))
        report("null_syscall", "linux", TIME(20000 / scale, syscall(SYS_getppid)), 20000 / scale);
    if (wanted("ipc_rtt_4b"))
        rtt_binder("ipc_rtt_4b", 4, 0, n / 4);
    if (wanted("ipc_rtt_124b"))
        rtt_binder("ipc_rtt_124b", 124, 0, n / 4);
    for (int k = 0; k < 3; k++) {
        if (wanted("ipc_rtt_4b"))
            rtt_processes("ipc_rtt_4b", k, 4, 0, n);
        if (wanted("ipc_rtt_124b"))
            rtt_processes("ipc_rtt_124b", k, 124, 0, n);
        if (wanted("ipc_rtt_same_as"))
            rtt_threads("ipc_rtt_same_as", k, 4, n);
        if (ncpus > 1 && wanted("ipc_rtt_cross_core"))
            rtt_processes("ipc_rtt_cross_core", k, 4, 1, n / 4);
    }
    if (ncpus > 1 && wanted("ipc_rtt_cross_core"))
        rtt_binder("ipc_rtt_cross_core", 4, 1, n / 4);
    if (wanted("futex_wake") || wanted("notify_wake"))
        wakeups(n);
    if (wanted("ctx_switch_2p"))
        ctx_switch(n);
    if (wanted("page_fault") || wanted("map_unmap_4k"))
        memory(1024 / scale, 5000 / scale);
    if (wanted("thread_create_exit") || wanted("process_spawn_exit"))
        creation(1000 / scale);
    if (wanted("mem_read_bw") || wanted("mem_copy_bw"))
        bandwidth((8u << 20) / scale);
    if (wanted("file_read_kernel") || wanted("file_read_user") || wanted("file_write_kernel") ||
        wanted("file_write_user"))
        tmpfs_rw();
    printf("BENCH-END linux\n");
    fflush(stdout);
    if (getpid() == 1)
        reboot(RB_POWER_OFF);
    return 0;
}
