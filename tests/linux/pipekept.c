/* A write blocked on a full pipe keeps the file it writes to: its
 * descriptor closed, or replaced by another pipe's write end, under it
 * while the reader is interrupted by an alarm every millisecond and by
 * signals from its parent; the writer's count must be exactly the bytes
 * that come out of the pipe, in order, whatever interrupts the reader.
 * The rounds run in a forked child (as lxfuzz's victims do) and in the
 * first process. Usage: pipekept [rounds] */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "lxtest.h"

static void on_signal(int sig) { (void)sig; }    /* (only to interrupt) */

struct job {
    int fd;
    const uint8_t *buf;
    size_t len;
    volatile long r;
    volatile int err, go, finished;
};

static void *writer(void *arg)
{
    struct job *j = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);   /* the signals are the reader's */
    for (;;) {
        while (!__atomic_load_n(&j->go, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &j->go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        if (j->fd < 0)
            return NULL;
        long r = write(j->fd, j->buf, j->len);
        j->err = errno;
        j->r = r;
        __atomic_store_n(&j->go, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&j->finished, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &j->finished, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

static long fionread(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) < 0 ? -1 : n;
}

static uint32_t rng = 12345;
static uint32_t below(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng % n;
}

/* The bytes read from fd until j's write has finished (until_finished)
 * or until end of file, 5 s at most, every byte checked to be tag; -1 on
 * a wrong byte, an error other than EINTR, or no end in time. */
static long read_all(int fd, uint8_t tag, uint8_t *b, size_t size, struct job *j, int until_finished)
{
    long total = 0;
    int64_t t0 = now_ms();
    while (until_finished ? !__atomic_load_n(&j->finished, __ATOMIC_ACQUIRE) : 1) {
        if (now_ms() - t0 > 5000) {
            printf("no end after 5 s (%ld bytes read)\n", total);
            return -1;
        }
        memset(b, 0, size);
        long r = read(fd, b, size);
        if (r == 0 && !until_finished)
            break;
        if (r < 0 && errno != EINTR) {
            printf("read: %s\n", errname(errno));
            return -1;
        }
        for (long i = 0; i < r; i++)
            if (b[i] != tag) {
                printf("byte %ld of a read of %ld is 0x%02x, not 0x%02x\n", total + i, r, b[i], tag);
                return -1;
            }
        if (r > 0)
            total += r;
    }
    return total;
}

/* rounds rounds; the count of those whose bytes did not add up. */
static int rounds_of(int rounds, const char *who)
{
    static uint8_t b[3000];
    struct job j = { 0 };
    pthread_t th;
    if (pthread_create(&th, NULL, writer, &j)) {
        printf("%s: pthread_create failed\n", who);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < rounds; i++) {
        int p[2], q[2], way = (int)below(2);
        if (pipe(p) || pipe(q)) {
            printf("%s: pipe: %s\n", who, errname(errno));
            return bad + 1;
        }
        long size = fcntl(p[1], F_SETPIPE_SZ, 4096);
        size_t len = (size_t)size + 1 + below(3 * (uint32_t)size);
        uint8_t *big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        uint8_t tag = (uint8_t)(1 + below(250));
        memset(big, tag, len);
        j.fd = p[1];
        j.buf = big;
        j.len = len;
        j.finished = 0;
        __atomic_store_n(&j.go, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &j.go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        while (fionread(p[0]) <= 0)
            sched_yield();
        if (way)
            dup2(q[1], p[1]);
        else
            close(p[1]);
        long got = read_all(p[0], tag, b, sizeof(b), &j, 1);
        while (!__atomic_load_n(&j.finished, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &j.finished, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        if (way)
            close(p[1]);
        long rest = got < 0 ? -1 : read_all(p[0], tag, b, sizeof(b), &j, 0);
        if (rest < 0 || j.r != (long)(got + rest)) {
            printf("%s: round %d: a write of %zu, its descriptor %s, says %ld (%s); %ld bytes came out\n", who, i,
                   len, way ? "replaced" : "closed", j.r, j.r < 0 ? errname(j.err) : "", rest < 0 ? -1 : got + rest);
            bad++;
        }
        close(p[0]);
        close(q[0]);
        close(q[1]);
        munmap(big, len);
    }
    j.fd = -1;
    __atomic_store_n(&j.go, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &j.go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_join(th, NULL);
    return bad;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    struct sigaction sa = { 0 };
    sa.sa_handler = on_signal;                  /* no SA_RESTART: reads end with EINTR */
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
    pid_t child = fork();
    if (child == 0) {
        rng = 777;
        setitimer(ITIMER_REAL, &it, NULL);
        _exit(rounds_of(rounds, "child") ? 1 : 0);
    }
    int status = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        kill(child, SIGUSR1);                   /* the parent interrupts it too */
        usleep(300);
    }
    printf("child: %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "every count matched" : "mismatches");
    setitimer(ITIMER_REAL, &it, NULL);
    int bad = rounds_of(rounds, "parent");
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    printf("parent: %s\n", bad ? "mismatches" : "every count matched");
    return 0;
}
