/* Scheduling calls: sched_yield (which gives the core to another thread
 * ready there), CPU affinity and getcpu (and the count of cores that
 * sysconf, /proc/cpuinfo and /proc/stat give), nice values
 * (getpriority, setpriority), the policy and its parameters. Raw system
 * calls where musl's wrappers differ (its sched_getscheduler and
 * sched_getparam are ENOSYS stubs, its getpriority adds 20). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static unsigned current_cpu(void)
{
    unsigned cpu = 999, node = 999;
    syscall(SYS_getcpu, &cpu, &node, NULL);
    return cpu;
}

/* Lines of a file that start with `prefix` (and then a digit, if digit). */
static int count_lines(const char *path, const char *prefix, int digit)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int n = 0;
    size_t len = strlen(prefix);
    while (f && fgets(line, sizeof(line), f))
        n += !strncmp(line, prefix, len) && (!digit || (line[len] >= '0' && line[len] <= '9'));
    if (f)
        fclose(f);
    return n;
}

static void *mask_of_thread(void *arg)
{
    syscall(SYS_sched_getaffinity, 0, 8, arg);
    return NULL;
}

/* Every core online: the affinity mask, sysconf, /proc/cpuinfo and
 * /proc/stat agree on how many there are; pinned to each in turn, the
 * thread runs there; a thread it makes and a child it forks inherit its
 * mask. */
static void every_core(uint64_t orig)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    printf("cores online: ~%ld\n", n);
    printf("the affinity mask has that many: %d\n", __builtin_popcountll(orig) == n);
    printf("sysconf's configured count is the same: %d\n", sysconf(_SC_NPROCESSORS_CONF) == n);
    printf("/proc/cpuinfo lists that many: %d\n", count_lines("/proc/cpuinfo", "processor\t:", 0) == n);
    printf("/proc/stat lists that many: %d\n", count_lines("/proc/stat", "cpu", 1) == n);
    int moved = 1, last = 0;
    for (uint64_t m = orig; m; m &= m - 1) {
        last = __builtin_ctzll(m);
        uint64_t one = 1ull << last;
        if (syscall(SYS_sched_setaffinity, 0, 8, &one) || current_cpu() != (unsigned)last)
            moved = 0;
        for (volatile int i = 0; i < 1000000; i++)
            ;
        if (current_cpu() != (unsigned)last)
            moved = 0;
    }
    printf("pinned to each core in turn, it runs there: %d\n", moved);
    uint64_t one = 1ull << last, got = 0;
    pthread_t th;
    if (pthread_create(&th, NULL, mask_of_thread, &got) == 0)
        pthread_join(th, NULL);
    printf("a thread it makes has its mask: %d\n", got == one);
    int fds[2];
    got = 0;
    if (pipe(fds) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            uint64_t m = 0;
            syscall(SYS_sched_getaffinity, 0, 8, &m);
            write(fds[1], &m, sizeof(m));
            _exit(0);
        }
        read(fds[0], &got, sizeof(got));
        waitpid(pid, NULL, 0);
        close(fds[0]);
        close(fds[1]);
    }
    printf("a child it forks has its mask: %d\n", got == one);
    uint64_t extra = orig | 1ull << 63;
    SHOW("sched_setaffinity to every core and core 63", syscall(SYS_sched_setaffinity, 0, 8, &extra));
    got = 0;
    syscall(SYS_sched_getaffinity, 0, 8, &got);
    printf("the mask then is the cores online: %d\n", got == orig);
}

#define ROUNDS 200

static volatile int turn;
static volatile long other_yields;

/* The second thread: its half of the turns. */
static void *other(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (turn != 1)
            sched_yield(), other_yields++;
        turn = 0;
    }
    return NULL;
}

/* Two threads on one core pass a turn back and forth, each yielding
 * while the turn is the other's: when a yield gives the core to the
 * other thread, a turn takes a few yields (about 1 on Petrel, up to about
 * 5 on Linux with two cores); a yield that kept the core would spin
 * through the rest of the time slice, tens of thousands of times. */
static void yield_to_another(void)
{
    uint64_t mask[16], one[16];
    memset(mask, 0, sizeof(mask));
    memset(one, 0, sizeof(one));
    syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
    one[0] = mask[0] & -mask[0];            /* the first core it may use */
    int pinned = syscall(SYS_sched_setaffinity, 0, sizeof(one), one) == 0;
    pthread_t th;
    int made = pthread_create(&th, NULL, other, NULL) == 0;
    long yields = 0;
    for (int i = 0; made && i < ROUNDS; i++) {
        while (turn != 0)
            sched_yield(), yields++;
        turn = 1;
    }
    if (made)
        pthread_join(th, NULL);
    long per = (yields + other_yields) / (2 * ROUNDS);
    printf("pinned to one core %d, a thread made %d; yields a turn: %s ~%ld\n", pinned, made,
           per <= 100 ? "at most 100" : "more than 100", per);
    syscall(SYS_sched_setaffinity, 0, sizeof(mask), mask);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    SHOW("sched_yield", syscall(SYS_sched_yield));
    SHOW("sched_yield again", sched_yield());
    yield_to_another();

    uint64_t mask[16];
    memset(mask, 0, sizeof(mask));
    SHOW("sched_getaffinity, 8 bytes", syscall(SYS_sched_getaffinity, 0, 8, mask));
    uint64_t orig = mask[0];
    SHOW("sched_getaffinity, 128 bytes", syscall(SYS_sched_getaffinity, 0, 128, mask));
    SHOW("sched_getaffinity, 0 bytes", syscall(SYS_sched_getaffinity, 0, 0, mask));
    SHOW("sched_getaffinity, 4 bytes", syscall(SYS_sched_getaffinity, 0, 4, mask));
    SHOW("sched_getaffinity, 12 bytes", syscall(SYS_sched_getaffinity, 0, 12, mask));
    SHOW("sched_getaffinity into a bad pointer", syscall(SYS_sched_getaffinity, 0, 8, hidden(8)));
    SHOW("sched_getaffinity of nobody", syscall(SYS_sched_getaffinity, 99999, 8, mask));
    SHOW("sched_getaffinity of itself by pid", syscall(SYS_sched_getaffinity, getpid(), 8, mask) == 8);
    cpu_set_t set;
    SHOW("musl's sched_getaffinity", sched_getaffinity(0, sizeof(set), &set));

    unsigned cpu = 999, node = 999;
    SHOW("getcpu", syscall(SYS_getcpu, &cpu, &node, NULL));
    printf("node: %u\n", node);
    printf("the mask holds that core: %d ~cpu %u mask %#lx, %d cores\n", (int)((orig >> cpu) & 1), cpu,
           (unsigned long)orig, CPU_COUNT(&set));
    SHOW("getcpu without pointers", syscall(SYS_getcpu, NULL, NULL, NULL));
    SHOW("getcpu into a bad pointer", syscall(SYS_getcpu, hidden(8), NULL, NULL));
    SHOW("getcpu, node into a bad pointer", syscall(SYS_getcpu, &cpu, hidden(8), NULL));
    printf("sched_getcpu agrees: %d\n", sched_getcpu() == (int)current_cpu());

    /* Pinned to the core it is on, it stays there. */
    cpu = current_cpu();
    uint64_t one = 1ull << cpu;
    SHOW("sched_setaffinity to its core", syscall(SYS_sched_setaffinity, 0, 8, &one));
    SHOW("sched_getaffinity then", syscall(SYS_sched_getaffinity, 0, 8, mask));
    printf("the mask is that core alone: %d\n", mask[0] == one);
    sched_yield();
    printf("still on it: %d\n", current_cpu() == cpu);
    uint64_t none = 0, far = 1ull << 63;
    SHOW("sched_setaffinity to no core", syscall(SYS_sched_setaffinity, 0, 8, &none));
    SHOW("sched_setaffinity to core 63 only", syscall(SYS_sched_setaffinity, 0, 8, &far));
    SHOW("sched_setaffinity of 0 bytes", syscall(SYS_sched_setaffinity, 0, 0, &one));
    SHOW("sched_setaffinity from a bad pointer", syscall(SYS_sched_setaffinity, 0, 8, hidden(8)));
    SHOW("sched_setaffinity of nobody", syscall(SYS_sched_setaffinity, 99999, 8, &one));
    SHOW("sched_setaffinity of 4 bytes", cpu < 32 ? syscall(SYS_sched_setaffinity, 0, 4, &one) : 0);
    SHOW("sched_setaffinity back", syscall(SYS_sched_setaffinity, 0, 8, &orig));
    every_core(orig);

    /* Nice values: kept per process, inherited, clamped to -20..19. */
    SHOW("setpgid(0, 0) (its own group)", setpgid(0, 0));
    SHOW("getpriority raw (20 - nice)", syscall(SYS_getpriority, PRIO_PROCESS, 0));
    printf("getpriority: %d\n", getpriority(PRIO_PROCESS, 0));
    SHOW("setpriority 5", setpriority(PRIO_PROCESS, 0, 5));
    printf("getpriority: %d\n", getpriority(PRIO_PROCESS, 0));
    printf("getpriority by pid: %d\n", getpriority(PRIO_PROCESS, getpid()));
    printf("getpriority of its group: %d\n", getpriority(PRIO_PGRP, 0));
    printf("getpriority of its group by id: %d\n", getpriority(PRIO_PGRP, getpid()));
    SHOW("setpriority 100 (clamped)", setpriority(PRIO_PROCESS, 0, 100));
    printf("getpriority: %d\n", getpriority(PRIO_PROCESS, 0));
    SHOW("setpriority -100 (root may lower it)", setpriority(PRIO_PROCESS, 0, -100));
    printf("getpriority: %d\n", getpriority(PRIO_PROCESS, 0));
    printf("nice(3): %d\n", nice(3));
    SHOW("setpriority 2", setpriority(PRIO_PROCESS, 0, 2));
    int p2c[2], c2p[2];
    pipe(p2c);
    pipe(c2p);
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        printf("child inherits nice: %d\n", getpriority(PRIO_PROCESS, 0));
        write(c2p[1], "x", 1);
        read(p2c[0], &b, 1);
        _exit(0);
    }
    char b;
    read(c2p[0], &b, 1);
    SHOW("setpriority of the child", setpriority(PRIO_PROCESS, pid, 7));
    printf("its nice: %d\n", getpriority(PRIO_PROCESS, pid));
    SHOW("the group's highest (20 - lowest nice), raw", syscall(SYS_getpriority, PRIO_PGRP, 0));
    SHOW("setpriority of the group", setpriority(PRIO_PGRP, 0, 4));
    printf("the child's: %d\n", getpriority(PRIO_PROCESS, pid));
    write(p2c[1], "x", 1);
    int st;
    waitpid(pid, &st, 0);
    SHOW("getpriority of nobody", syscall(SYS_getpriority, PRIO_PROCESS, 99999));
    SHOW("setpriority of nobody", setpriority(PRIO_PROCESS, 99999, 0));
    SHOW("getpriority of a group that is not there", syscall(SYS_getpriority, PRIO_PGRP, 99999));
    SHOW("getpriority of user 1000 (none)", syscall(SYS_getpriority, PRIO_USER, 1000));
    SHOW("setpriority of user 1000 (none)", setpriority(PRIO_USER, 1000, 0));
    SHOW("getpriority which 3", syscall(SYS_getpriority, 3, 0));
    SHOW("getpriority which -1", syscall(SYS_getpriority, -1, 0));
    SHOW("setpriority which 3", setpriority(3, 0, 0));

    /* The policy: SCHED_OTHER, priority 0. */
    SHOW("sched_getscheduler", syscall(SYS_sched_getscheduler, 0));
    SHOW("sched_getscheduler by pid", syscall(SYS_sched_getscheduler, getpid()));
    SHOW("sched_getscheduler of -1", syscall(SYS_sched_getscheduler, -1));
    SHOW("sched_getscheduler of nobody", syscall(SYS_sched_getscheduler, 99999));
    int prio = 77;
    SHOW("sched_getparam", syscall(SYS_sched_getparam, 0, &prio));
    printf("priority: %d\n", prio);
    SHOW("sched_getparam into NULL", syscall(SYS_sched_getparam, 0, NULL));
    SHOW("sched_getparam of -1", syscall(SYS_sched_getparam, -1, &prio));
    SHOW("sched_getparam of nobody", syscall(SYS_sched_getparam, 99999, &prio));
    SHOW("sched_getparam into a bad pointer", syscall(SYS_sched_getparam, 0, hidden(8)));
    static const int policies[] = { SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, 4, SCHED_IDLE, 6, 7, -1 };
    for (unsigned i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        char what[64];
        snprintf(what, sizeof(what), "priority range of policy %d: max", policies[i]);
        SHOW(what, syscall(SYS_sched_get_priority_max, policies[i]));
        snprintf(what, sizeof(what), "priority range of policy %d: min", policies[i]);
        SHOW(what, syscall(SYS_sched_get_priority_min, policies[i]));
    }
    return 0;
}
