/* Clocks: clock_getres and clock_gettime of every clock Linux has, the
 * CPU-time clocks, gettimeofday against clock_gettime, nanosleep and
 * clock_nanosleep (relative and absolute), and their errors. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include "lxtest.h"

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return ns_of(t);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    static const struct { int id; const char *name; int coarse; } clocks[] = {
        { CLOCK_REALTIME, "REALTIME", 0 }, { CLOCK_MONOTONIC, "MONOTONIC", 0 },
        { CLOCK_PROCESS_CPUTIME_ID, "PROCESS_CPUTIME_ID", 0 }, { CLOCK_THREAD_CPUTIME_ID, "THREAD_CPUTIME_ID", 0 },
        { CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW", 0 }, { CLOCK_REALTIME_COARSE, "REALTIME_COARSE", 1 },
        { CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE", 1 }, { CLOCK_BOOTTIME, "BOOTTIME", 0 },
        { CLOCK_REALTIME_ALARM, "REALTIME_ALARM", 0 }, { CLOCK_BOOTTIME_ALARM, "BOOTTIME_ALARM", 0 },
        { CLOCK_TAI, "TAI", 0 },
    };
    for (unsigned i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
        struct timespec res = { -1, -1 }, t = { -1, -1 };
        char what[64];
        snprintf(what, sizeof(what), "clock_getres %s", clocks[i].name);
        SHOW(what, syscall(SYS_clock_getres, clocks[i].id, &res));
        if (clocks[i].coarse)
            printf("  resolution at most 10 ms: %d ~%ld.%09ld\n", res.tv_sec == 0 && res.tv_nsec > 0 &&
                   res.tv_nsec <= 10000000, (long)res.tv_sec, res.tv_nsec);
        else
            printf("  resolution: %ld.%09ld\n", (long)res.tv_sec, res.tv_nsec);
        snprintf(what, sizeof(what), "clock_gettime %s", clocks[i].name);
        SHOW(what, syscall(SYS_clock_gettime, clocks[i].id, &t));
        printf("  nanoseconds below a second: %d\n", t.tv_nsec >= 0 && t.tv_nsec < 1000000000);
    }
    struct timespec res;
    SHOW("clock_getres SGI_CYCLE (10)", syscall(SYS_clock_getres, 10, &res));
    SHOW("clock_getres 12", syscall(SYS_clock_getres, 12, &res));
    SHOW("clock_getres 99", syscall(SYS_clock_getres, 99, &res));
    SHOW("clock_getres -1 (a CPU clock of kind 3)", syscall(SYS_clock_getres, -1, &res));
    SHOW("clock_getres without a buffer", syscall(SYS_clock_getres, CLOCK_MONOTONIC, NULL));
    SHOW("clock_getres into a bad pointer", syscall(SYS_clock_getres, CLOCK_MONOTONIC, hidden(8)));
    SHOW("clock_gettime 12", syscall(SYS_clock_gettime, 12, &res));
    SHOW("clock_gettime into NULL", syscall(SYS_clock_gettime, CLOCK_MONOTONIC, NULL));

    /* The clocks agree with each other. */
    int64_t rt = now(CLOCK_REALTIME), tai = now(CLOCK_TAI), rc = now(CLOCK_REALTIME_COARSE);
    printf("TAI is the calendar (no offset set): %d\n", tai - rt >= 0 && tai - rt < 1000000000);
    printf("REALTIME_COARSE is within 10 ms of it: %d\n", rc - rt > -20000000 && rc - rt < 20000000);
    int64_t mono = now(CLOCK_MONOTONIC), boot = now(CLOCK_BOOTTIME), raw = now(CLOCK_MONOTONIC_RAW);
    printf("BOOTTIME >= MONOTONIC (nothing suspended): %d\n", boot >= mono && boot - mono < 1000000000);
    printf("MONOTONIC_RAW is near MONOTONIC: %d ~%ld\n", raw - mono > -100000000 && raw - mono < 100000000,
           (long)(raw - mono));

    /* CPU time: a busy loop of 50 ms shows in both CPU clocks. */
    int64_t p0 = now(CLOCK_PROCESS_CPUTIME_ID), t0 = now(CLOCK_THREAD_CPUTIME_ID), end = now(CLOCK_MONOTONIC) + 50000000;
    while (now(CLOCK_MONOTONIC) < end)
        for (volatile int i = 0; i < 20000; i++)        /* computing, a clock read now and then */
            ;
    int64_t p1 = now(CLOCK_PROCESS_CPUTIME_ID), t1 = now(CLOCK_THREAD_CPUTIME_ID);
    printf("process CPU time grew by 10 ms or more: %d ~%ld\n", p1 - p0 >= 10000000, (long)(p1 - p0));
    printf("thread CPU time grew by 10 ms or more: %d ~%ld\n", t1 - t0 >= 10000000, (long)(t1 - t0));
    printf("thread <= process: %d\n", now(CLOCK_THREAD_CPUTIME_ID) <= now(CLOCK_PROCESS_CPUTIME_ID) + 1000000);
    clockid_t cid;
    SHOW("clock_getcpuclockid of itself", clock_getcpuclockid(getpid(), &cid));
    struct timespec ct;
    SHOW("clock_gettime of that clock", clock_gettime(cid, &ct));
    printf("it is the process's CPU time: %d\n", ns_of(ct) >= p1 && ns_of(ct) - p1 < 1000000000);
    printf("clock_getcpuclockid of nobody: %s\n", errname(clock_getcpuclockid(99999, &cid)));
    clockid_t tclock = (clockid_t)((~(unsigned)getpid() << 3) | 6);        /* its thread's, by tid */
    SHOW("clock_gettime of its thread by tid", clock_gettime(tclock, &ct));
    int hold[2];
    pipe(hold);
    pid_t other = fork();
    if (other == 0) {
        char b;
        close(hold[1]);
        read(hold[0], &b, 1);
        _exit(0);
    }
    tclock = (clockid_t)((~(unsigned)other << 3) | 6);
    SHOW("clock_gettime of a thread of another process", syscall(SYS_clock_gettime, tclock, &ct));
    tclock = (clockid_t)((~(unsigned)other << 3) | 2);
    SHOW("clock_gettime of another process's CPU time", syscall(SYS_clock_gettime, tclock, &ct));
    close(hold[1]);
    wait(NULL);

    /* gettimeofday: the calendar in microseconds, UTC. */
    struct timeval tv;
    struct { int minuteswest, dsttime; } tz = { 99, 99 };
    int64_t before = now(CLOCK_REALTIME);
    SHOW("gettimeofday", syscall(SYS_gettimeofday, &tv, &tz));
    int64_t after = now(CLOCK_REALTIME);
    int64_t us = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
    printf("between two clock_gettime calls: %d\n", us >= before / 1000 && us <= after / 1000);
    printf("microseconds below a second: %d\n", tv.tv_usec >= 0 && tv.tv_usec < 1000000);
    printf("time zone: %d %d\n", tz.minuteswest, tz.dsttime);
    SHOW("gettimeofday(NULL, NULL)", syscall(SYS_gettimeofday, NULL, NULL));
    SHOW("gettimeofday into a bad pointer", syscall(SYS_gettimeofday, hidden(8), NULL));
    SHOW("gettimeofday, time zone into a bad pointer", syscall(SYS_gettimeofday, &tv, hidden(8)));
    printf("time() agrees: %d\n", time(NULL) - tv.tv_sec <= 1);

    /* Sleeps: relative and absolute. */
    struct timespec d = { 0, 20000000 }, rem = { 9, 9 };
    int64_t s0 = now(CLOCK_MONOTONIC);
    SHOW("nanosleep 20 ms", syscall(SYS_nanosleep, &d, &rem));
    printf("  slept 20 ms or more: %d\n", now(CLOCK_MONOTONIC) - s0 >= 20000000);
    d.tv_nsec = 0;
    SHOW("nanosleep 0", syscall(SYS_nanosleep, &d, NULL));
    d.tv_nsec = 1000000000;
    SHOW("nanosleep with 10^9 ns", syscall(SYS_nanosleep, &d, NULL));
    d.tv_nsec = -1;
    SHOW("nanosleep with -1 ns", syscall(SYS_nanosleep, &d, NULL));
    d.tv_sec = -1, d.tv_nsec = 0;
    SHOW("nanosleep of -1 s", syscall(SYS_nanosleep, &d, NULL));
    SHOW("nanosleep from a bad pointer", syscall(SYS_nanosleep, hidden(8), NULL));
    d.tv_sec = 0, d.tv_nsec = 10000000;
    s0 = now(CLOCK_MONOTONIC);
    SHOW("clock_nanosleep MONOTONIC 10 ms", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, NULL));
    printf("  slept 10 ms or more: %d\n", now(CLOCK_MONOTONIC) - s0 >= 10000000);
    SHOW("clock_nanosleep REALTIME 10 ms", syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &d, NULL));
    SHOW("clock_nanosleep BOOTTIME 10 ms", syscall(SYS_clock_nanosleep, CLOCK_BOOTTIME, 0, &d, NULL));
    SHOW("clock_nanosleep TAI 10 ms", syscall(SYS_clock_nanosleep, CLOCK_TAI, 0, &d, NULL));
    struct timespec at;
    int64_t target;
    SHOW("clock_nanosleep BOOTTIME_ALARM 10 ms", syscall(SYS_clock_nanosleep, CLOCK_BOOTTIME_ALARM, 0, &d, NULL));
    target = now(CLOCK_REALTIME) + 20000000;
    at.tv_sec = target / 1000000000, at.tv_nsec = target % 1000000000;
    SHOW("clock_nanosleep REALTIME_ALARM until now + 20 ms",
         syscall(SYS_clock_nanosleep, CLOCK_REALTIME_ALARM, TIMER_ABSTIME, &at, NULL));
    printf("  woke at or after it: %d\n", now(CLOCK_REALTIME) >= target);
    target = now(CLOCK_TAI) + 20000000;
    at.tv_sec = target / 1000000000, at.tv_nsec = target % 1000000000;
    SHOW("clock_nanosleep TAI until now + 20 ms", syscall(SYS_clock_nanosleep, CLOCK_TAI, TIMER_ABSTIME, &at, NULL));
    printf("  woke at or after it, not long after: %d\n",
           now(CLOCK_TAI) >= target && now(CLOCK_TAI) - target < 500000000);
    target = now(CLOCK_MONOTONIC) + 30000000;
    at.tv_sec = target / 1000000000, at.tv_nsec = target % 1000000000;
    SHOW("clock_nanosleep MONOTONIC until now + 30 ms", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
                                                                 &at, NULL));
    printf("  woke at or after it: %d\n", now(CLOCK_MONOTONIC) >= target);
    target = now(CLOCK_REALTIME) + 30000000;
    at.tv_sec = target / 1000000000, at.tv_nsec = target % 1000000000;
    SHOW("clock_nanosleep REALTIME until now + 30 ms", syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME,
                                                                &at, NULL));
    printf("  woke at or after it: %d\n", now(CLOCK_REALTIME) >= target);
    at.tv_sec = 0, at.tv_nsec = 1;
    s0 = now(CLOCK_MONOTONIC);
    SHOW("clock_nanosleep REALTIME until 1970", syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL));
    SHOW("clock_nanosleep MONOTONIC until 1 ns after boot",
         syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL));
    printf("  both at once: %d\n", now(CLOCK_MONOTONIC) - s0 < 500000000);
    SHOW("clock_nanosleep with 10^9 ns", (d.tv_nsec = 1000000000,
                                          syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, NULL)));
    d.tv_nsec = 1000;
    SHOW("clock_nanosleep MONOTONIC_RAW", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_RAW, 0, &d, NULL));
    SHOW("clock_nanosleep REALTIME_COARSE", syscall(SYS_clock_nanosleep, CLOCK_REALTIME_COARSE, 0, &d, NULL));
    SHOW("clock_nanosleep MONOTONIC_COARSE", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_COARSE, 0, &d, NULL));
    SHOW("clock_nanosleep THREAD_CPUTIME_ID", syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &d, NULL));
    SHOW("clock_nanosleep 10", syscall(SYS_clock_nanosleep, 10, 0, &d, NULL));
    SHOW("clock_nanosleep 99", syscall(SYS_clock_nanosleep, 99, 0, &d, NULL));
    SHOW("clock_nanosleep MONOTONIC_RAW from a bad pointer",
         syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_RAW, 0, hidden(8), NULL));
    SHOW("clock_nanosleep MONOTONIC from a bad pointer",
         syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, hidden(8), NULL));
    printf("musl's clock_nanosleep of THREAD_CPUTIME_ID: %s\n",
           errname(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &d, NULL)));
    return 0;
}
