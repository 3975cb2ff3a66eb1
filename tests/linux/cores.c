/* A thread on another core (pinned there with sched_setaffinity, as a
 * program that spreads its threads does; on one core, the same core):
 *  - a signal reaches it while it runs user code in a loop with no system
 *    call, and while it makes calls the personality serves in full (open
 *    and close) in a loop: 100 rounds each;
 *  - memory another thread unmaps (512 pages it had all read there)
 *    faults there afterwards, page by page, and a range mapped over its
 *    old one reads the new contents there;
 *  - 1 ms sleeps on either core end on time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include "lxtest.h"

#define ROUNDS  100
#define PAGES   512
#define PAGE    4096

static volatile int got, quit, mode;
static volatile int cmd, done;
static volatile long result;
static char *volatile area;
static sigjmp_buf fault_env;
static pthread_t the_worker;

static void on_usr1(int sig)
{
    (void)sig;
    got++;
}

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(fault_env, 1);
}

static void pin(int cpu)
{
    uint64_t one = 1ull << cpu;
    syscall(SYS_sched_setaffinity, 0, 8, &one);
}

static void pause_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000 };
    nanosleep(&ts, NULL);
}

/* Read one byte of every 16th page (or every page): how many reads faulted;
 * *sum gets the sum of what was read. */
static long read_pages(int step, long *sum)
{
    long faults = 0;
    *sum = 0;
    for (int p = 0; p < PAGES; p += step) {
        if (sigsetjmp(fault_env, 1)) {
            faults++;
            continue;
        }
        *sum += area[(long)p * PAGE];
    }
    return faults;
}

static void *worker(void *arg)
{
    pin((int)(intptr_t)arg);
    while (!quit) {
        if (mode == 1) {                        /* calls the personality serves in full */
            int fd = open("/dev/null", O_RDONLY);
            if (fd >= 0)
                close(fd);
        }
        int c = cmd;
        if (c != done) {
            long sum;
            long faults = read_pages(c == 2 ? 16 : 1, &sum);
            result = c == 2 ? faults : sum;
            done = c;
        }
    }
    return NULL;
}

/* Wait up to 2 s for *v to reach want. */
static int wait_for(volatile int *v, int want)
{
    for (int i = 0; i < 2000 && *v != want; i++)
        pause_ms(1);
    return *v == want;
}

static int signals(int m)
{
    mode = m;
    int ok = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int before = got;
        pthread_kill(the_worker, SIGUSR1);
        ok += wait_for(&got, before + 1);
    }
    mode = 0;
    return ok;
}

/* 200 sleeps of 1 ms on core cpu: did they take under 1 s in all (a
 * timer that only a tick 10 ms apart looks at takes 2 s)? */
static int sleeps_on(int cpu)
{
    pin(cpu);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 200; i++)
        pause_ms(1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    return ms < 1000;
}

static int command(int c)
{
    cmd = c;
    return wait_for(&done, c);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    uint64_t mask = 0;
    syscall(SYS_sched_getaffinity, 0, 8, &mask);
    int first = __builtin_ctzll(mask), last = 63 - __builtin_clzll(mask);
    pin(first);
    struct sigaction sa = { 0 };
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    printf("cores: the worker on the last core, this thread on the first ~%d and %d\n", last, first);
    if (pthread_create(&the_worker, NULL, worker, (void *)(intptr_t)last)) {
        printf("no thread\n");
        return 1;
    }
    printf("signals to a thread busy in a loop on another core: %d of %d\n", signals(0), ROUNDS);
    printf("signals to a thread making calls on another core: %d of %d\n", signals(1), ROUNDS);

    char *a = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        printf("mmap: %s\n", errname(errno));
        return 1;
    }
    for (long p = 0; p < PAGES; p++)
        a[p * PAGE] = 1;
    area = a;
    int c1 = command(1);
    printf("it read every page: %d, sum %ld\n", c1, result);
    char *b = mmap(a, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    for (long p = 0; b == a && p < PAGES; p++)
        b[p * PAGE] = 2;
    int c3 = command(3);
    printf("a mapping over it: %d; the other core reads the new pages: %d, sum %ld\n", b == a, c3, result);
    munmap(a, (size_t)PAGES * PAGE);
    int c2 = command(2);
    printf("unmapped: the other core's reads of every 16th page fault: %d, %ld of %d\n", c2, result, PAGES / 16);
    quit = 1;
    pthread_join(the_worker, NULL);
    /* Timed waits end on time whichever core waits: 1 ms sleeps take
     * about 1 ms each (Linux: 1.1) on the first core and on the last. */
    int on_first = sleeps_on(first), on_last = sleeps_on(last);
    printf("200 sleeps of 1 ms on the first core and on the last, each in under 1 s: %d %d\n", on_first, on_last);
    return 0;
}
