/*
 * POSIX timers: timer_create (ids, the default and given sigevents, every
 * error in Linux's order, ids used up by failures), timer_settime and
 * timer_gettime (one-shot, interval, absolute, SIGEV_NONE running down),
 * the signal's siginfo (SI_TIMER, si_timerid, si_overrun, si_value),
 * timer_getoverrun, SIGEV_THREAD_ID, a CPU-time timer, timer_delete,
 * fork (the child has none) and exec (deletes them, ids go on); then
 * the calendar set under an absolute and a relative timer and a timerfd
 * armed with TFD_TIMER_CANCEL_ON_SET (the clock is put back).
 */
#include "lxtest.h"
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

#define SIGEV_THREAD_ID 4
#define MS 1000000l

struct kevent {                                 /* the kernel's struct sigevent */
    union sigval value;
    int signo, notify, tid;
    int pad[11];
};

static long create(clockid_t clock, const struct kevent *ev, int *id)
{
    return syscall(SYS_timer_create, clock, ev, id);
}

static long settime(int id, int flags, long value_ns, long every_ns, struct itimerspec *old)
{
    struct itimerspec v = { { every_ns / 1000000000l, every_ns % 1000000000l },
                            { value_ns / 1000000000l, value_ns % 1000000000l } };
    return syscall(SYS_timer_settime, id, flags, &v, old);
}

/* Wait up to ms for sig (blocked) and print what its siginfo says. */
static void take(const char *what, int sig, long ms)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    struct timespec ts = { ms / 1000, ms % 1000 * MS };
    siginfo_t si;
    int got = sigtimedwait(&set, &si, &ts);
    if (got < 0) {
        printf("%s: %s\n", what, errname(errno));
        return;
    }
    printf("%s: signal %d code %d timerid %d value %d\n", what, got, si.si_code, si.si_timerid,
           si.si_value.sival_int);
}

static int thread_sig;

/* Another thread waits for the signal the timer sends to main: it must not get it. */
static void *waiter(void *arg)
{
    (void)arg;
    take("the other thread", thread_sig, 300);
    return NULL;
}

static void after_exec(void)
{
    struct itimerspec cur;
    SHOW("after exec: timer_gettime of id 0", syscall(SYS_timer_gettime, 0, &cur));
    int id = -1;
    SHOW("after exec: timer_create", create(CLOCK_MONOTONIC, NULL, &id));
    printf("  id %d\n", id);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) {
        after_exec();
        return 0;
    }
    sigset_t all;
    sigemptyset(&all);
    for (int s = SIGRTMIN; s <= SIGRTMIN + 4; s++)
        sigaddset(&all, s);
    sigaddset(&all, SIGALRM);
    sigprocmask(SIG_BLOCK, &all, NULL);         /* every timer signal is taken with sigtimedwait */

    int id = -1, id2 = -1;
    struct kevent ev = { { .sival_int = 77 }, SIGRTMIN + 1, SIGEV_SIGNAL, 0, { 0 } };
    SHOW("create with a bad sigevent pointer", create(CLOCK_MONOTONIC, (void *)16, &id));
    SHOW("create on clock 10", create(10, &ev, &id));
    SHOW("create on clock 12", create(12, &ev, &id));
    SHOW("create on MONOTONIC_RAW", create(CLOCK_MONOTONIC_RAW, &ev, &id));
    SHOW("create on REALTIME_COARSE", create(CLOCK_REALTIME_COARSE, &ev, &id));
    SHOW("create on a CPU clock of nobody", create((~(clockid_t)99999 << 3) | 2, &ev, &id));
    SHOW("create with no default sigevent, NULL id", create(CLOCK_MONOTONIC, NULL, (void *)0));
    SHOW("create, then a bad id pointer", create(CLOCK_MONOTONIC, &ev, (void *)16));
    SHOW("create with notify 3", create(CLOCK_MONOTONIC, &(struct kevent){ { 0 }, SIGUSR1, 3, 0, { 0 } }, &id));
    SHOW("create with signal 0", create(CLOCK_MONOTONIC, &(struct kevent){ { 0 }, 0, SIGEV_SIGNAL, 0, { 0 } }, &id));
    SHOW("create with signal 65", create(CLOCK_MONOTONIC, &(struct kevent){ { 0 }, 65, SIGEV_SIGNAL, 0, { 0 } }, &id));
    SHOW("create for thread 99999", create(CLOCK_MONOTONIC,
         &(struct kevent){ { 0 }, SIGUSR1, SIGEV_SIGNAL | SIGEV_THREAD_ID, 99999, { 0 } }, &id));
    SHOW("create with notify NONE and signal 0", create(CLOCK_MONOTONIC, &(struct kevent){ { 0 }, 0, SIGEV_NONE, 0, { 0 } }, &id));
    printf("  id %d (failures after the clock check used ids up)\n", id);
    SHOW("create, default sigevent", create(CLOCK_MONOTONIC, NULL, &id));
    printf("  id %d\n", id);
    SHOW("create, RT signal 1 with value 77", create(CLOCK_MONOTONIC, &ev, &id2));
    printf("  id %d\n", id2);

    /* the default sigevent: SIGALRM, sival_int the id */
    SHOW("settime 30 ms", settime(id, 0, 30 * MS, 0, NULL));
    take("default timer", SIGALRM, 2000);
    struct itimerspec cur;
    SHOW("gettime after it went off", syscall(SYS_timer_gettime, id, &cur));
    printf("  value %ld.%09ld interval %ld.%09ld\n", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec,
           (long)cur.it_interval.tv_sec, cur.it_interval.tv_nsec);

    SHOW("settime NULL", syscall(SYS_timer_settime, id2, 0, NULL, NULL));
    SHOW("settime bad pointer", syscall(SYS_timer_settime, id2, 0, (void *)16, NULL));
    struct itimerspec badv = { { 0, 0 }, { 0, 1000000000 } };
    SHOW("settime 1e9 ns", syscall(SYS_timer_settime, id2, 0, &badv, NULL));
    SHOW("settime unknown id", settime(4242, 0, MS, 0, NULL));
    SHOW("settime id -1", settime(-1, 0, MS, 0, NULL));
    SHOW("gettime unknown id", syscall(SYS_timer_gettime, 4242, &cur));
    SHOW("gettime bad pointer", syscall(SYS_timer_gettime, id2, (void *)16));
    SHOW("getoverrun unknown id", syscall(SYS_timer_getoverrun, 4242));

    /* one-shot with a value; the old setting comes back */
    SHOW("settime 5 s", settime(id2, 0, 5000 * MS, 0, NULL));
    struct itimerspec old;
    SHOW("settime 20 ms, old setting", settime(id2, 0, 20 * MS, 0, &old));
    printf("  old value at most 5 s and more than 4: %d\n", old.it_value.tv_sec == 4 || (old.it_value.tv_sec == 5 &&
           old.it_value.tv_nsec == 0));
    take("RT timer", SIGRTMIN + 1, 2000);

    /* an interval timer whose signal waits: overruns */
    SHOW("settime every 10 ms", settime(id2, 0, 10 * MS, 10 * MS, NULL));
    struct timespec pause = { 0, 105 * MS };
    nanosleep(&pause, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGRTMIN + 1);
    siginfo_t si;
    struct timespec zero = { 0, 0 };
    int got = sigtimedwait(&one, &si, &zero);
    long over = syscall(SYS_timer_getoverrun, id2);
    printf("interval: signal %d, overrun in 5..15 %d, getoverrun the same %d ~%d\n", got == SIGRTMIN + 1,
           si.si_overrun >= 5 && si.si_overrun <= 15, over == si.si_overrun, si.si_overrun);
    SHOW("gettime while running", syscall(SYS_timer_gettime, id2, &cur));
    printf("  interval %ld.%09ld, value at most that %d\n", (long)cur.it_interval.tv_sec, cur.it_interval.tv_nsec,
           cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec <= 10 * MS);
    struct timespec expire = { 0, 25 * MS };
    nanosleep(&expire, NULL);                   /* (so that a signal surely waits when it is disarmed) */
    SHOW("disarm", settime(id2, 0, 0, 10 * MS, &old));
    printf("  old interval %ld ms\n", old.it_interval.tv_nsec / MS);
    SHOW("gettime disarmed", syscall(SYS_timer_gettime, id2, &cur));
    printf("  value %ld interval %ld\n", (long)cur.it_value.tv_nsec, (long)cur.it_interval.tv_nsec);
    SHOW("getoverrun after settime", syscall(SYS_timer_getoverrun, id2));
    take("after disarming", SIGRTMIN + 1, 50);

    /* SIGEV_NONE: nothing sent, the time runs down */
    int none = -1;
    SHOW("create SIGEV_NONE", create(CLOCK_MONOTONIC, &(struct kevent){ { 0 }, 0, SIGEV_NONE, 0, { 0 } }, &none));
    SHOW("settime 40 ms every 30 ms", settime(none, 0, 40 * MS, 30 * MS, NULL));
    pause.tv_nsec = 50 * MS;
    nanosleep(&pause, NULL);
    syscall(SYS_timer_gettime, none, &cur);
    printf("SIGEV_NONE after 50 ms: value under 30 ms %d, interval %ld ms\n", cur.it_value.tv_sec == 0 &&
           cur.it_value.tv_nsec <= 30 * MS, cur.it_interval.tv_nsec / MS);

    /* an absolute time on the calendar */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int abs = -1;
    ev.value.sival_int = 5;
    ev.signo = SIGRTMIN + 2;
    SHOW("create on REALTIME", create(CLOCK_REALTIME, &ev, &abs));
    long at = (long)now.tv_sec * 1000000000l + now.tv_nsec + 30 * MS;
    SHOW("settime absolute now + 30 ms", settime(abs, TIMER_ABSTIME, at, 0, NULL));
    take("absolute", SIGRTMIN + 2, 2000);
    SHOW("settime absolute in the past", settime(abs, TIMER_ABSTIME, 1000, 0, NULL));
    take("in the past", SIGRTMIN + 2, 2000);

    /* SIGEV_THREAD_ID: to main only, while another thread waits for the
     * same signal (it would take one sent to the process) */
    pthread_t th;
    int dir = -1;
    thread_sig = SIGRTMIN + 3;
    ev.signo = SIGRTMIN + 3;
    ev.notify = SIGEV_SIGNAL | SIGEV_THREAD_ID;
    ev.tid = getpid();
    ev.value.sival_int = 9;
    SHOW("create for the main thread", create(CLOCK_MONOTONIC, &ev, &dir));
    printf("settime 20 ms: %ld\n", settime(dir, 0, 20 * MS, 0, NULL));
    pthread_create(&th, NULL, waiter, NULL);
    pthread_join(th, NULL);
    sigset_t pend;
    sigpending(&pend);
    printf("pending for main: %d\n", sigismember(&pend, SIGRTMIN + 3));
    take("main took", SIGRTMIN + 3, 0);

    /* the process's CPU time */
    int cpu = -1;
    ev.signo = SIGRTMIN + 4;
    ev.notify = SIGEV_SIGNAL;
    ev.value.sival_int = 4;
    SHOW("create on PROCESS_CPUTIME", create(CLOCK_PROCESS_CPUTIME_ID, &ev, &cpu));
    SHOW("settime 20 ms of CPU", settime(cpu, 0, 20 * MS, 0, NULL));
    struct timespec start, t1;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        sigpending(&pend);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while (!sigismember(&pend, SIGRTMIN + 4) && t1.tv_sec - start.tv_sec < 10);
    take("CPU timer", SIGRTMIN + 4, 0);

    /* a signal that looks like a timer's (rt_sigqueueinfo may send
     * SI_TIMER) does not stand in for the timer's own */
    siginfo_t fake;
    memset(&fake, 0, sizeof(fake));
    fake.si_signo = SIGRTMIN + 1;
    fake.si_code = SI_TIMER;
    fake.si_value.sival_int = 1234;
    SHOW("queue a look-alike", syscall(SYS_rt_sigqueueinfo, getpid(), SIGRTMIN + 1, &fake));
    SHOW("settime 20 ms", settime(id2, 0, 20 * MS, 0, NULL));
    take("first", SIGRTMIN + 1, 2000);
    take("second", SIGRTMIN + 1, 2000);

    /* a 1 ns period whose signal is ignored: the system keeps going */
    signal(SIGRTMIN + 4, SIG_IGN);
    SHOW("settime every nanosecond, ignored", settime(cpu, 0, 1, 1, NULL));
    pause.tv_nsec = 100 * MS;
    nanosleep(&pause, NULL);
    printf("after 100 ms of it: still here\n");

    SHOW("delete", syscall(SYS_timer_delete, cpu));
    SHOW("delete again", syscall(SYS_timer_delete, cpu));
    SHOW("gettime deleted", syscall(SYS_timer_gettime, cpu, &cur));

    pid_t child = fork();
    if (child == 0) {
        SHOW("child: gettime of its parent's timer", syscall(SYS_timer_gettime, id, &cur));
        int cid = -1;
        SHOW("child: create", create(CLOCK_MONOTONIC, NULL, &cid));
        printf("  id %d\n", cid);
        _exit(0);
    }
    waitpid(child, NULL, 0);

    /* the calendar set under an absolute and a relative timer, and a timerfd */
    struct timespec real0, mono0;
    clock_gettime(CLOCK_REALTIME, &real0);
    clock_gettime(CLOCK_MONOTONIC, &mono0);
    int rel = -1;
    ev.signo = SIGRTMIN + 1;
    ev.value.sival_int = 11;
    SHOW("create relative REALTIME", create(CLOCK_REALTIME, &ev, &rel));
    SHOW("settime 1 s relative", settime(rel, 0, 1000 * MS, 0, NULL));
    SHOW("settime absolute now + 10 s", settime(abs, TIMER_ABSTIME, (long)real0.tv_sec * 1000000000l + 10000 * MS, 0,
                                                NULL));
    int tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    struct itimerspec far = { { 0, 0 }, { real0.tv_sec + 100, 0 } };
    SHOW("timerfd absolute + 100 s, cancel on set", timerfd_settime(tfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
                                                                    &far, NULL));
    int tfd2 = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    SHOW("another, not cancelled", timerfd_settime(tfd2, TFD_TIMER_ABSTIME, &far, NULL));
    uint64_t n;
    SHOW("read the timerfd", read(tfd, &n, 8));
    struct timespec ahead = { real0.tv_sec + 20, real0.tv_nsec };
    SHOW("clock set 20 s ahead", clock_settime(CLOCK_REALTIME, &ahead));
    take("absolute timer after the clock moved past it", SIGRTMIN + 2, 2000);
    take("relative timer within 0.2 s", SIGRTMIN + 1, 200);
    SHOW("read the timerfd after the clock was set", read(tfd, &n, 8));
    SHOW("read it again", read(tfd, &n, 8));
    SHOW("read the other", read(tfd2, &n, 8));
    struct itimerspec tcur;
    timerfd_gettime(tfd2, &tcur);
    printf("the other: 80 s left, give or take 2: %d\n", tcur.it_value.tv_sec >= 78 && tcur.it_value.tv_sec <= 80);
    take("relative timer at its time", SIGRTMIN + 1, 2000);
    struct timespec mono1;
    clock_gettime(CLOCK_MONOTONIC, &mono1);
    long gone = (mono1.tv_sec - mono0.tv_sec) * 1000000000l + (mono1.tv_nsec - mono0.tv_nsec);
    long back = (long)real0.tv_sec * 1000000000l + real0.tv_nsec + gone;
    struct timespec put = { back / 1000000000l, back % 1000000000l };
    SHOW("the clock put back", clock_settime(CLOCK_REALTIME, &put));

    fflush(stdout);
    execl("/proc/self/exe", argv[0], "again", (char *)NULL);
    printf("exec: %s\n", errname(errno));
    return 1;
}
