/* rt_sigprocmask, rt_sigpending, rt_sigsuspend and rt_sigtimedwait:
 * blocked signals wait, unblocking delivers them (in Linux's order),
 * sigsuspend's temporary mask, sigtimedwait's timeout and siginfo, the
 * errors. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lxtest.h"

static char order[16];
static volatile int n;

static void note(int sig)
{
    if (n < 15)
        order[n++] = sig == SIGUSR1 ? '1' : sig == SIGUSR2 ? '2' : sig == SIGHUP ? 'h' : '?';
}

static void show_set(const char *what, const sigset_t *s)
{
    printf("%s: usr1 %d usr2 %d hup %d kill %d stop %d\n", what, sigismember(s, SIGUSR1), sigismember(s, SIGUSR2),
           sigismember(s, SIGHUP), sigismember(s, SIGKILL), sigismember(s, SIGSTOP));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = { 0 };
    sa.sa_handler = note;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    sigset_t set, old, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGKILL);
    sigaddset(&set, SIGSTOP);
    SHOW("block usr1 usr2 hup kill stop", sigprocmask(SIG_BLOCK, &set, &old));
    sigprocmask(SIG_BLOCK, NULL, &old);
    show_set("blocked now", &old);
    raise(SIGUSR2);
    raise(SIGHUP);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("handled while blocked: %d\n", n);
    sigpending(&pend);
    show_set("pending", &pend);
    SHOW("unblock all three", sigprocmask(SIG_UNBLOCK, &set, NULL));
    order[n] = 0;
    printf("handled %d in the order %s\n", n, order);
    sigpending(&pend);
    show_set("pending after", &pend);

    /* Errors. */
    SHOW("sigprocmask how 7", syscall(SYS_rt_sigprocmask, 7, &set, NULL, 8));
    SHOW("sigprocmask how 7 without a set", syscall(SYS_rt_sigprocmask, 7, NULL, &old, 8));
    SHOW("sigprocmask sigsetsize 4", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 4));
    SHOW("sigprocmask set at 8", syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, 8));
    SHOW("sigprocmask old at 8", syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, (void *)8, 8));
    SHOW("sigpending sigsetsize 9", syscall(SYS_rt_sigpending, &pend, 9));
    SHOW("sigpending sigsetsize 4", syscall(SYS_rt_sigpending, &pend, 4));
    SHOW("sigpending at 8", syscall(SYS_rt_sigpending, (void *)8, 8));
    SHOW("sigsuspend sigsetsize 4", syscall(SYS_rt_sigsuspend, &set, 4));
    SHOW("sigsuspend at 8", syscall(SYS_rt_sigsuspend, (void *)8, 8));

    /* sigsuspend: USR1 blocked, a child sends it, sigsuspend lets it in. */
    n = 0;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        kill(parent, SIGUSR1);
        _exit(0);
    }
    sigset_t none;
    sigemptyset(&none);
    SHOW("sigsuspend", sigsuspend(&none));
    printf("handled %d\n", n);
    sigprocmask(SIG_BLOCK, NULL, &old);
    show_set("mask after sigsuspend", &old);
    waitpid(pid, NULL, 0);

    /* sigtimedwait: a pending signal, none with a zero timeout, a timeout, a child's. */
    raise(SIGUSR1);
    siginfo_t si;
    struct timespec zero = { 0, 0 }, short_time = { 0, 30 * 1000 * 1000 }, bad = { 0, 1000000000 };
    int sig = sigtimedwait(&set, &si, &zero);
    printf("sigtimedwait: %d signo %d code %d pid is mine %d, handled %d\n", sig, si.si_signo, si.si_code,
           si.si_pid == getpid(), n);
    SHOW("sigtimedwait, none pending, zero timeout", sigtimedwait(&set, &si, &zero));
    SHOW("sigtimedwait, 30 ms", sigtimedwait(&set, &si, &short_time));
    SHOW("sigtimedwait, bad timespec", sigtimedwait(&set, &si, &bad));
    SHOW("sigtimedwait, set at 8", syscall(SYS_rt_sigtimedwait, (void *)8, &si, &zero, 8));
    SHOW("sigtimedwait, sigsetsize 4", syscall(SYS_rt_sigtimedwait, &set, &si, &zero, 4));
    SHOW("sigtimedwait, timeout at 8", syscall(SYS_rt_sigtimedwait, &set, &si, (void *)8, 8));
    pid = fork();
    if (pid == 0) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        kill(parent, SIGUSR1);
        _exit(0);
    }
    sig = sigwaitinfo(&set, &si);
    printf("sigwaitinfo: %d signo %d code %d pid is the child's %d\n", sig, si.si_signo, si.si_code,
           si.si_pid == pid);
    waitpid(pid, NULL, 0);

    /* A signal outside the set, with a handler, interrupts rt_sigtimedwait (musl's wrapper would retry). */
    pid = fork();
    if (pid == 0) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        kill(parent, SIGUSR2);
        _exit(0);
    }
    n = 0;
    struct timespec long_time = { 5, 0 };
    SHOW("rt_sigtimedwait interrupted by SIGUSR2", syscall(SYS_rt_sigtimedwait, &set, &si, &long_time, 8));
    printf("handled %d\n", n);
    waitpid(pid, NULL, 0);

    /* fork keeps the mask; the child has nothing pending. */
    raise(SIGUSR1);
    pid = fork();
    if (pid == 0) {
        sigpending(&pend);
        sigprocmask(SIG_BLOCK, NULL, &old);
        printf("child: pending usr1 %d, blocked usr1 %d\n", sigismember(&pend, SIGUSR1), sigismember(&old, SIGUSR1));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    sigpending(&pend);
    printf("parent: pending usr1 %d\n", sigismember(&pend, SIGUSR1));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGUSR1, &sa, NULL);
    sigpending(&pend);
    printf("ignored: pending usr1 %d\n", sigismember(&pend, SIGUSR1));
    return 0;
}
