/*
 * Real-time signals queue and standard ones do not: several instances of
 * SIGRTMIN+n sent while blocked are each delivered, in order, with their
 * si_value (sigqueue) or si_pid (kill); the lowest number first; a
 * standard signal sent three times is delivered once; sigtimedwait takes
 * queued instances one by one; SIG_IGN drops what is queued;
 * rt_sigqueueinfo's permission rule for another process.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int got[64], ngot;
static int values[64];

static void handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (ngot < 64) {
        got[ngot] = sig;
        values[ngot++] = si->si_code == SI_QUEUE ? si->si_value.sival_int : -1000 - si->si_code;
    }
}

static void show(const char *what)
{
    printf("%s:", what);
    for (int i = 0; i < ngot; i++)
        printf(" %d/%d", got[i] >= SIGRTMIN ? got[i] - SIGRTMIN + 100 : got[i], values[i]);
    printf("\n");
    ngot = 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGRTMIN);
    sigaddset(&sa.sa_mask, SIGRTMIN + 1);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sigaction(SIGRTMIN, &sa, NULL);
    sigaction(SIGRTMIN + 1, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGRTMIN);
    sigaddset(&block, SIGRTMIN + 1);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, NULL);
    for (int i = 1; i <= 5; i++)
        sigqueue(getpid(), SIGRTMIN + 1, (union sigval){ .sival_int = 10 + i });
    for (int i = 1; i <= 3; i++)
        sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = i });
    kill(getpid(), SIGRTMIN);
    for (int i = 0; i < 3; i++)
        kill(getpid(), SIGUSR1);
    sigset_t pend;
    sigpending(&pend);
    printf("pending: %d %d %d\n", sigismember(&pend, SIGRTMIN), sigismember(&pend, SIGRTMIN + 1),
           sigismember(&pend, SIGUSR1));
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    show("delivered (signal/value)");

    /* sigtimedwait takes them one at a time */
    sigprocmask(SIG_BLOCK, &block, NULL);
    for (int i = 1; i <= 3; i++)
        sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 20 + i });
    struct timespec zero = { 0, 0 };
    siginfo_t si;
    for (int i = 0; i < 4; i++) {
        errno = 0;
        int s = sigtimedwait(&block, &si, &zero);
        if (s < 0)
            printf("sigtimedwait: -1 %s\n", errname(errno));
        else
            printf("sigtimedwait: RTMIN+%d value %d code %d\n", s - SIGRTMIN, si.si_value.sival_int, si.si_code);
    }

    /* ignoring a signal drops what is queued */
    for (int i = 1; i <= 3; i++)
        sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 30 + i });
    signal(SIGRTMIN, SIG_IGN);
    sigaction(SIGRTMIN, &sa, NULL);
    sigpending(&pend);
    printf("after SIG_IGN, pending: %d\n", sigismember(&pend, SIGRTMIN));
    sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 40 });
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    show("then one more");

    /* to this thread alone: rt_tgsigqueueinfo and tgkill queue too */
    sigprocmask(SIG_BLOCK, &block, NULL);
    for (int i = 1; i <= 3; i++) {
        siginfo_t ti = { .si_signo = SIGRTMIN + 1, .si_code = SI_QUEUE, .si_pid = getpid() };
        ti.si_value.sival_int = 50 + i;
        syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), SIGRTMIN + 1, &ti);
    }
    syscall(SYS_tgkill, getpid(), gettid(), SIGRTMIN + 1);
    sigqueue(getpid(), SIGRTMIN + 1, (union sigval){ .sival_int = 60 });
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    show("to the thread, and one to the process");

    /* to a child, from here, through rt_sigqueueinfo */
    int p[2], go[2];
    pipe(p);
    pipe(go);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_BLOCK, &block, NULL);
        write(p[1], "r", 1);
        struct timespec ts = { 5, 0 };
        int s[2], v[2], from[2];
        for (int i = 0; i < 2; i++) {
            s[i] = sigtimedwait(&block, &si, &ts);
            v[i] = si.si_value.sival_int;
            from[i] = si.si_pid == getppid();
        }
        char c;
        read(go[0], &c, 1);                     /* (printed after the parent's lines) */
        for (int i = 0; i < 2; i++)
            printf("child: RTMIN+%d value %d from the parent %d\n", s[i] - SIGRTMIN, v[i], from[i]);
        _exit(0);
    }
    char c;
    read(p[0], &c, 1);
    SHOW("sigqueue to the child", sigqueue(pid, SIGRTMIN, (union sigval){ .sival_int = 77 }));
    SHOW("again", sigqueue(pid, SIGRTMIN, (union sigval){ .sival_int = 78 }));
    siginfo_t fake = { .si_signo = SIGRTMIN, .si_code = SI_USER };
    SHOW("rt_sigqueueinfo with SI_USER to another", syscall(SYS_rt_sigqueueinfo, pid, SIGRTMIN, &fake));
    SHOW("rt_sigqueueinfo bad signal", syscall(SYS_rt_sigqueueinfo, pid, 99, &fake));
    SHOW("rt_sigqueueinfo bad address", syscall(SYS_rt_sigqueueinfo, pid, SIGRTMIN, (void *)8));
    SHOW("rt_sigqueueinfo to nobody", sigqueue(99999, SIGRTMIN, (union sigval){ 0 }));
    write(go[1], "g", 1);
    waitpid(pid, NULL, 0);
    return 0;
}
