/*
 * ITIMER_VIRTUAL and ITIMER_PROF count the process's CPU time: a busy
 * loop gets SIGVTALRM and SIGPROF (repeating with an interval), a sleep
 * does not advance them; getitimer's remaining time and setitimer's old
 * value; the errors.
 */
#include "lxtest.h"
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static volatile int vt, prof;

static void on_vt(int sig) { (void)sig; vt++; }
static void on_prof(int sig) { (void)sig; prof++; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin until *flag reaches n or 10 s pass. */
static void spin(volatile int *flag, int n)
{
    double end = now() + 10;
    while (*flag < n && now() < end)
        ;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGVTALRM, on_vt);
    signal(SIGPROF, on_prof);
    struct itimerval cur;
    SHOW("getitimer ITIMER_VIRTUAL", getitimer(ITIMER_VIRTUAL, &cur));
    printf("off: %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);
    struct itimerval v = { { 0, 0 }, { 0, 50000 } };
    SHOW("setitimer ITIMER_VIRTUAL 50 ms", setitimer(ITIMER_VIRTUAL, &v, NULL));
    getitimer(ITIMER_VIRTUAL, &cur);
    printf("remaining about 50 ms: %d ~%ld\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_usec > 30000 &&
           cur.it_value.tv_usec <= 60000, (long)cur.it_value.tv_usec);     /* (Linux rounds up to its tick) */
    spin(&vt, 1);
    printf("a busy loop got SIGVTALRM: %d\n", vt);
    getitimer(ITIMER_VIRTUAL, &cur);
    printf("then off: %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);

    v.it_value.tv_usec = 100000;
    setitimer(ITIMER_VIRTUAL, &v, NULL);
    struct timespec nap = { 0, 300000000 };
    nanosleep(&nap, NULL);
    getitimer(ITIMER_VIRTUAL, &cur);
    printf("a sleep of 300 ms used little of 100 ms: %d, no signal: %d\n", cur.it_value.tv_usec > 50000, vt == 1);
    struct itimerval old, off = { { 0, 0 }, { 0, 0 } };
    SHOW("setitimer off", setitimer(ITIMER_VIRTUAL, &off, &old));
    printf("the old value: %d\n", old.it_value.tv_sec == 0 && old.it_value.tv_usec > 50000);

    struct itimerval p = { { 0, 30000 }, { 0, 30000 } };
    SHOW("setitimer ITIMER_PROF every 30 ms", setitimer(ITIMER_PROF, &p, NULL));
    spin(&prof, 3);
    setitimer(ITIMER_PROF, &off, &old);
    printf("SIGPROF three times: %d, interval kept: %ld\n", prof >= 3, (long)old.it_interval.tv_usec);
    SHOW("setitimer bad which", setitimer(7, &v, NULL));
    SHOW("getitimer bad which", getitimer(7, &cur));
    v.it_value.tv_usec = 1000000;
    SHOW("setitimer bad usec", setitimer(ITIMER_VIRTUAL, &v, NULL));
    return 0;
}
