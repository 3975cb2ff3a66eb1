/* A thread on another core (pinned there with sched_setaffinity, as a
 * program that spreads its threads does; on one core, the same core):
 *  - a signal reaches it while it runs user code in a loop with no system
 *    call, and while it makes calls the personality serves in full (open
 *    and close) in a loop: 100 rounds each;
 *  - memory another thread unmaps (512 pages it had all read there)
 *    faults there afterwards, page by page, and a range mapped over its
 *    old one reads the new contents there;
 *  - 1 ms sleeps on either core end on time;
 *  - id calls, /dev/zero reads and clock reads (clock_gettime of the
 *    monotonic clock, gettimeofday) made on both cores at once are answered
 *    right, and on Petrel with two cores by the personality's shared entry
 *    (/proc/petrel_shared, Petrel's own: docs/design/personality.md,
 *    "Several cores"), at least half of them: else a line says so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
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

/* The shared entry's count of calls (/proc/petrel_shared), or -1 (Linux). */
static long long shared_calls(void)
{
    char text[128];
    long long n = -1;
    int fd = open("/proc/petrel_shared", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long k = read(fd, text, sizeof(text) - 1);
    close(fd);
    text[k > 0 ? k : 0] = 0;
    return sscanf(text, "shared_calls %lld", &n) == 1 ? n : -1;
}

#define ID_CALLS 20000
#define ZERO_READS 1000
#define CLOCK_CALLS 4000

/* ID_CALLS getppid and gettid, ZERO_READS reads of 4 KiB of /dev/zero and
 * CLOCK_CALLS clock_gettime(CLOCK_MONOTONIC) and gettimeofday (system
 * calls, not the vDSO's) on core cpu: how many were wrong (a clock going
 * back counts). */
static long id_calls_on(int cpu)
{
    static __thread char buf[4096];
    pin(cpu);
    long wrong = 0;
    pid_t ppid = getppid(), tid = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < ID_CALLS / 2; i++)
        wrong += getppid() != ppid || (pid_t)syscall(SYS_gettid) != tid;
    int z = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    for (int i = 0; i < ZERO_READS; i++) {
        buf[i % 4096] = 1;
        wrong += read(z, buf, 4096) != 4096 || buf[i % 4096] != 0;
    }
    close(z);
    struct timespec last = { 0, 0 }, now;
    struct timeval tv_last = { 0, 0 }, tv;
    for (int i = 0; i < CLOCK_CALLS / 2; i++) {
        int r = (int)syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
        wrong += r != 0 || now.tv_nsec >= 1000000000 || now.tv_sec < last.tv_sec ||
                 (now.tv_sec == last.tv_sec && now.tv_nsec < last.tv_nsec);
        last = now;
        r = (int)syscall(SYS_gettimeofday, &tv, NULL);
        wrong += r != 0 || tv.tv_usec >= 1000000 || tv.tv_sec < tv_last.tv_sec ||
                 (tv.tv_sec == tv_last.tv_sec && tv.tv_usec < tv_last.tv_usec);
        tv_last = tv;
    }
    return wrong;
}

static volatile long other_wrong = -1;

static void *id_worker(void *arg)
{
    other_wrong = id_calls_on((int)(intptr_t)arg);
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

/* 200 sleeps of 1 ms on core cpu: how many ms they took in all (under
 * 1 s is right: a timer that only a tick 10 ms apart looks at takes 2 s). */
static long sleeps_on(int cpu)
{
    pin(cpu);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 200; i++)
        pause_ms(1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
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
    long on_first = sleeps_on(first), on_last = sleeps_on(last);
    printf("200 sleeps of 1 ms on the first core and on the last, each in under 1 s: %d %d ~%ld and %ld ms\n",
           on_first < 1000, on_last < 1000, on_first, on_last);

    long long before = shared_calls();
    pthread_t other;
    if (pthread_create(&other, NULL, id_worker, (void *)(intptr_t)last)) {
        printf("no thread\n");
        return 1;
    }
    long wrong = id_calls_on(first);
    pthread_join(other, NULL);
    long long answered = before >= 0 ? shared_calls() - before : -1;
    printf("id calls, /dev/zero reads and clock reads on both cores at once, wrong answers: %ld\n",
           wrong + other_wrong);
    if (before >= 0 && first != last && answered < ID_CALLS + ZERO_READS + CLOCK_CALLS)
        printf("the personality's shared entry answered %lld of %d calls on two cores\n", answered,
               2 * (ID_CALLS + ZERO_READS + CLOCK_CALLS));
    return 0;
}
