/* uname's fields, sysinfo, getrusage and times: what they say that Linux
 * and Petrel agree on, and sanity checks of the rest. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include "lxtest.h"

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run for `seconds` of wall time, computing (a clock read now and then). */
static void busy(double seconds)
{
    double end = now(CLOCK_MONOTONIC) + seconds;
    while (now(CLOCK_MONOTONIC) < end)
        for (volatile int i = 0; i < 20000; i++)
            ;
}

static double tv(struct timeval t)
{
    return (double)t.tv_sec + t.tv_usec / 1e6;
}

static volatile int spinning;
static volatile double spun;            /* the spinning thread's own CPU time, as it last read it */

static void *spin(void *arg)
{
    (void)arg;
    while (spinning) {
        for (volatile int i = 0; i < 20000; i++)
            ;
        spun = now(CLOCK_THREAD_CPUTIME_ID);
    }
    return NULL;
}

static void *spin_quietly(void *arg)
{
    (void)arg;
    while (spinning)                            /* no system call: nothing switches it out on a core of its own */
        ;
    return NULL;
}

/* A thread that computes without a call, read by another while it runs:
 * its CPU clock and the process's count the slice it is in (on a core of
 * its own it may never be switched out). */
static void running_thread_counted(void)
{
    pthread_t th;
    spinning = 1;
    pthread_create(&th, NULL, spin_quietly, NULL);
    clockid_t its;
    pthread_getcpuclockid(th, &its);
    double before = now(its), process_before = now(CLOCK_PROCESS_CPUTIME_ID);
    struct timespec ms100 = { 0, 100000000 };
    nanosleep(&ms100, NULL);
    double after = now(its), process_after = now(CLOCK_PROCESS_CPUTIME_ID);
    spinning = 0;
    pthread_join(th, NULL);
    printf("a computing thread's clock, read while it runs, grew by 50 ms or more in 100 ms: %d ~%.3f\n",
           after - before >= 0.05, after - before);
    printf("and the process's too: %d ~%.3f\n", process_after - process_before >= 0.05,
           process_after - process_before);
}

/* While a second thread computes (on another core where there is one),
 * the caller's thread time read first is at most the process's read
 * after it, and neither the process's rusage nor its CPU clock goes
 * back, at any moment. */
static void consistent_with_a_busy_thread(void)
{
    pthread_t th;
    spinning = 1;
    pthread_create(&th, NULL, spin, NULL);
    int above = 0, back = 0, clock_back = 0, behind = 0;
    double last = 0, last_clock = 0;
    for (int i = 0; i < 2000; i++) {
        struct rusage t, s;
        getrusage(RUSAGE_THREAD, &t);
        getrusage(RUSAGE_SELF, &s);
        double tt = tv(t.ru_utime) + tv(t.ru_stime), st = tv(s.ru_utime) + tv(s.ru_stime);
        double clk = now(CLOCK_PROCESS_CPUTIME_ID);
        above += tt > st + 0.001;
        back += st + 0.001 < last;
        clock_back += clk < last_clock;
        /* The process's time covers both threads', the running one's included. */
        double other = spun, mine = now(CLOCK_THREAD_CPUTIME_ID), all = now(CLOCK_PROCESS_CPUTIME_ID);
        behind += all + 0.002 < other + mine;
        last = st;
        last_clock = clk;
    }
    spinning = 0;
    pthread_join(th, NULL);
    printf("with a busy thread: thread above process %d times, process going back %d, its clock going back %d\n",
           above, back, clock_back);
    printf("with a busy thread: the process's clock behind its threads' %d times\n", behind);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct utsname u;
    SHOW("uname", uname(&u));
    printf("sysname: %s\n", u.sysname);
    printf("machine: %s\n", u.machine);
    printf("nodename: ~%s\n", u.nodename);
    printf("release: ~%s\n", u.release);
    printf("version: ~%s\n", u.version);
    printf("domainname: ~%s\n", u.domainname);
    printf("release is major.minor.patch: %d\n", u.release[0] >= '1' && u.release[0] <= '9' && strchr(u.release, '.'));
    int terminated = 1;
    const char *f[] = { u.sysname, u.nodename, u.release, u.version, u.machine, u.domainname };
    for (int i = 0; i < 6; i++)
        terminated &= memchr(f[i], 0, 65) != NULL;
    printf("every field is terminated within 65 bytes: %d\n", terminated);
    SHOW("uname into a bad pointer", syscall(SYS_uname, 8));

    struct sysinfo si;
    memset(&si, 0xa5, sizeof(si));
    SHOW("sysinfo", sysinfo(&si));
    printf("mem_unit: %u\n", si.mem_unit);
    printf("totalram > 16 MiB: %d ~%lu\n", si.totalram > 16ul << 20, si.totalram);
    printf("0 < freeram <= totalram: %d ~%lu\n", si.freeram > 0 && si.freeram <= si.totalram, si.freeram);
    printf("sharedram and bufferram <= totalram: %d ~%lu %lu\n", si.sharedram <= si.totalram &&
           si.bufferram <= si.totalram, si.sharedram, si.bufferram);
    printf("swap: %lu %lu\n", si.totalswap, si.freeswap);
    printf("high memory: %lu %lu\n", si.totalhigh, si.freehigh);
    printf("procs >= 1: %d ~%u\n", si.procs >= 1, si.procs);
    printf("loads: ~%lu %lu %lu\n", si.loads[0], si.loads[1], si.loads[2]);
    double boot = now(CLOCK_BOOTTIME);
    printf("uptime is CLOCK_BOOTTIME rounded up: %d ~%ld %.3f\n", si.uptime >= (long)boot && si.uptime <= (long)boot + 2,
           si.uptime, boot);
    SHOW("sysinfo into NULL", syscall(SYS_sysinfo, NULL));
    SHOW("sysinfo into a bad pointer", syscall(SYS_sysinfo, 8));

    /* getrusage: CPU time grows with a busy loop. */
    struct rusage r0, r1, rt, rc;
    SHOW("getrusage SELF", getrusage(RUSAGE_SELF, &r0));
    busy(0.1);
    SHOW("getrusage SELF again", getrusage(RUSAGE_SELF, &r1));
    double used = tv(r1.ru_utime) + tv(r1.ru_stime) - tv(r0.ru_utime) - tv(r0.ru_stime);
    printf("0.1 s busy: CPU time grew by 0.02 s or more: %d ~%.3f (user %.3f system %.3f)\n", used >= 0.02, used,
           tv(r1.ru_utime), tv(r1.ru_stime));
    printf("usec below a second: %d\n", r1.ru_utime.tv_usec >= 0 && r1.ru_utime.tv_usec < 1000000 &&
           r1.ru_stime.tv_usec >= 0 && r1.ru_stime.tv_usec < 1000000);
    printf("maxrss: ~%ld\n", r1.ru_maxrss);
    SHOW("getrusage THREAD", getrusage(RUSAGE_THREAD, &rt));
    getrusage(RUSAGE_SELF, &r1);
    printf("the thread's time is at most the process's read after it: %d\n",
           tv(rt.ru_utime) + tv(rt.ru_stime) <= tv(r1.ru_utime) + tv(r1.ru_stime) + 0.001);
    consistent_with_a_busy_thread();
    running_thread_counted();
    SHOW("getrusage CHILDREN", getrusage(RUSAGE_CHILDREN, &rc));
    printf("no children yet: %d\n", rc.ru_utime.tv_sec == 0 && rc.ru_utime.tv_usec == 0 &&
           rc.ru_stime.tv_sec == 0 && rc.ru_stime.tv_usec == 0);
    SHOW("getrusage who 5", getrusage(5, &rc));
    SHOW("getrusage who -2", getrusage(-2, &rc));
    SHOW("getrusage into a bad pointer", syscall(SYS_getrusage, RUSAGE_SELF, 8));

    /* A child that runs 0.1 s: its time becomes the children's once waited for. */
    pid_t pid = fork();
    if (pid == 0) {
        busy(0.1);
        _exit(0);
    }
    int st;
    struct rusage rw;
    SHOW("wait4 with rusage", wait4(pid, &st, 0, &rw) == pid);
    double child = tv(rw.ru_utime) + tv(rw.ru_stime);
    printf("wait4's rusage: the child's 0.1 s busy: %d ~%.3f\n", child >= 0.02, child);
    getrusage(RUSAGE_CHILDREN, &rc);
    double children = tv(rc.ru_utime) + tv(rc.ru_stime);
    /* (Linux's two sums of the same time differ by a few ms: wait4's is
     * the scheduler's exact one, RUSAGE_CHILDREN's the tick-sampled split.) */
    printf("RUSAGE_CHILDREN now holds it: %d ~%.3f\n", children >= 0.02 && children >= child - 0.02, children);

    /* times: clock ticks of 1/100 s. */
    printf("clock ticks a second: %ld\n", sysconf(_SC_CLK_TCK));
    struct tms t;
    clock_t ticks = times(&t);
    printf("times > 0: %d ~%ld\n", ticks > 0, (long)ticks);
    printf("tms_utime + tms_stime >= 2 ticks: %d ~%ld %ld\n", t.tms_utime + t.tms_stime >= 2, (long)t.tms_utime,
           (long)t.tms_stime);
    printf("tms_cutime + tms_cstime >= 2 ticks: %d ~%ld %ld\n", t.tms_cutime + t.tms_cstime >= 2, (long)t.tms_cutime,
           (long)t.tms_cstime);
    clock_t again = times(NULL);
    printf("times(NULL) goes on from it: %d\n", again >= ticks && again - ticks < 100);
    busy(0.05);
    printf("and grows with the time: %d\n", times(NULL) > again);
    SHOW("times into a bad pointer", syscall(SYS_times, 8));
    printf("processors online: ~%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}
