/* alarm, setitimer and getitimer (ITIMER_REAL), and calls a signal
 * interrupts: EINTR without SA_RESTART, the call run again with it (read
 * of an empty pipe, wait4), always EINTR for nanosleep (with the time
 * left) and pause; a busy loop interrupted by SIGALRM. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lxtest.h"

static volatile int alarms;
static int wake_fd = -1;

static void on_alarm(int sig)
{
    alarms++;
    if (wake_fd >= 0)
        write(wake_fd, "w", 1);
}

static void handle(int flags)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigaction(SIGALRM, &sa, NULL);
}

static void arm_ms(int ms)
{
    struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

/* An alarm every ms milliseconds: a wait that starts late still gets one. */
static void tick(int ms)
{
    struct itimerval it = { { ms / 1000, (ms % 1000) * 1000 }, { ms / 1000, (ms % 1000) * 1000 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

static void stop(void)
{
    struct itimerval it = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    handle(0);
    SHOW("alarm(5)", alarm(5));
    SHOW("alarm(0) says what was left", alarm(0));
    SHOW("alarm(0) again", alarm(0));
    struct itimerval it, old;
    SHOW("getitimer with none", getitimer(ITIMER_REAL, &it));
    printf("value %ld.%06ld interval %ld.%06ld\n", (long)it.it_value.tv_sec, (long)it.it_value.tv_usec,
           (long)it.it_interval.tv_sec, (long)it.it_interval.tv_usec);
    struct itimerval bad = { { 0, 1000000 }, { 1, 0 } };
    SHOW("setitimer with 1000000 us", setitimer(ITIMER_REAL, &bad, NULL));
    SHOW("setitimer which 3", setitimer(3, &it, NULL));
    SHOW("getitimer which 3", getitimer(3, &it));
    SHOW("setitimer value at 8", syscall(SYS_setitimer, ITIMER_REAL, (void *)8, NULL));
    SHOW("getitimer into 8", syscall(SYS_getitimer, ITIMER_REAL, (void *)8));

    /* pause until the alarm (a second one comes if the first was early). */
    tick(100);
    SHOW("pause", pause());
    stop();
    printf("alarms came: %d\n", alarms > 0);

    /* An interval timer: alarms in a row. */
    int before = alarms;
    tick(20);
    while (alarms < before + 3)
        pause();
    it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
    SHOW("stop the interval timer", setitimer(ITIMER_REAL, &it, &old));
    printf("it had an interval of %ld us\n", (long)old.it_interval.tv_usec);

    /* A busy loop (no system call) is interrupted. */
    before = alarms;
    arm_ms(30);
    volatile uint64_t spins = 0;
    while (alarms == before)
        spins++;
    printf("the busy loop saw the alarm ~%llu spins\n", (unsigned long long)spins);

    /* read of an empty pipe: EINTR without SA_RESTART. */
    int fds[2];
    pipe(fds);
    char buf[8];
    tick(30);
    SHOW("read interrupted", read(fds[0], buf, sizeof(buf)));
    stop();

    /* With SA_RESTART the read goes on; the handler writes what it then reads. */
    handle(SA_RESTART);
    wake_fd = fds[1];
    before = alarms;
    arm_ms(30);
    SHOW("read restarted", read(fds[0], buf, sizeof(buf)));
    printf("an alarm came %d, read '%c'\n", alarms > before, buf[0]);
    wake_fd = -1;

    /* wait4: EINTR without SA_RESTART, the wait goes on with it. */
    handle(0);
    pid_t pid = fork();
    if (pid == 0) {
        struct timespec ts = { 0, 500 * 1000000L };
        nanosleep(&ts, NULL);
        _exit(3);
    }
    tick(20);
    int st = 0;
    SHOW("waitpid interrupted", waitpid(pid, &st, 0));
    handle(SA_RESTART);
    before = alarms;
    SHOW("waitpid restarted finds the child", waitpid(pid, &st, 0) == pid);
    stop();
    printf("status %d, alarms came meanwhile %d\n", WEXITSTATUS(st), alarms > before);

    /* nanosleep: EINTR even with SA_RESTART, and the time left. */
    tick(30);
    struct timespec req = { 2, 0 }, rem = { 0, 0 };
    SHOW("nanosleep interrupted", nanosleep(&req, &rem));
    stop();
    printf("time left: more than 1 s %d, less than 2 s %d ~%ld.%09ld\n", rem.tv_sec >= 1, rem.tv_sec < 2,
           (long)rem.tv_sec, rem.tv_nsec);
    struct timespec badts = { 0, 1000000000 };
    SHOW("nanosleep with a bad timespec", nanosleep(&badts, NULL));
    SHOW("nanosleep from 8", syscall(SYS_nanosleep, (void *)8, NULL));
    struct timespec t0, t1, abs;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    abs = t0;
    abs.tv_nsec += 30 * 1000000L;
    if (abs.tv_nsec >= 1000000000L) {
        abs.tv_sec++;
        abs.tv_nsec -= 1000000000L;
    }
    SHOW("clock_nanosleep to an absolute time", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("it woke after it: %d\n", t1.tv_sec > abs.tv_sec || (t1.tv_sec == abs.tv_sec && t1.tv_nsec >= abs.tv_nsec));
    SHOW("clock_nanosleep on clock 99", syscall(SYS_clock_nanosleep, 99, 0, &req, NULL));

    /* An alarm with SIGALRM's default action ends the process. */
    pid = fork();
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        alarm(1);
        for (;;)
            pause();
    }
    waitpid(pid, &st, 0);
    printf("child: signaled %d sig %d\n", WIFSIGNALED(st), WTERMSIG(st));
    return 0;
}
