/* SIGCHLD and SIGPIPE: the siginfo of a child's end (CLD_EXITED,
 * CLD_KILLED), SIG_IGN and SA_NOCLDWAIT reaping children; a write to a
 * pipe without readers: SIGPIPE's default action, SIG_IGN and a handler,
 * then EPIPE. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lxtest.h"

static volatile int hits, code, status;
static volatile pid_t from;
static pid_t child;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
    hits++;
    code = si->si_code;
    status = si->si_status;
    from = si->si_pid;
}

static volatile int pipes, pipe_code;

static void on_pipe(int sig, siginfo_t *si, void *uc)
{
    pipes++;
    pipe_code = si->si_code;
}

static void ms(int n)
{
    struct timespec ts = { 0, n * 1000000L };
    nanosleep(&ts, NULL);
}

static void show_status(const char *what, int st)
{
    printf("%s: exited %d code %d signaled %d sig %d\n", what, WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : 0,
           WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = { 0 };
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGCHLD, &sa, NULL);
    int st;
    sigset_t chld_set, none;
    sigemptyset(&chld_set);
    sigaddset(&chld_set, SIGCHLD);
    sigemptyset(&none);

    child = fork();
    if (child == 0)
        _exit(7);
    SHOW("waitpid (the handler may interrupt nothing: the child is reaped)", waitpid(child, &st, 0) == child);
    printf("SIGCHLD %d code %d status %d from the child %d\n", hits, code, status, from == child);

    sigprocmask(SIG_BLOCK, &chld_set, NULL);    /* no SIGCHLD between a check and the wait */
    child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    ms(20);
    kill(child, SIGTERM);
    while (hits < 2)
        sigsuspend(&none);
    printf("SIGCHLD %d code %d status %d from the child %d\n", hits, code, status, from == child);
    waitpid(child, &st, 0);
    show_status("killed child", st);

    /* A child ends while we wait in pause(). */
    child = fork();
    if (child == 0) {
        ms(20);
        _exit(1);
    }
    SHOW("sigsuspend until SIGCHLD", sigsuspend(&none));
    printf("SIGCHLD %d code %d status %d\n", hits, code, status);
    waitpid(child, &st, 0);
    sigprocmask(SIG_UNBLOCK, &chld_set, NULL);

    /* SIG_IGN: children are reaped as they end; wait finds none. */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigaction(SIGCHLD, &sa, NULL);
    for (int i = 0; i < 3; i++)
        if (fork() == 0)
            _exit(i);
    SHOW("wait with SIGCHLD ignored", wait(&st));
    SHOW("waitpid WNOHANG with SIGCHLD ignored", waitpid(-1, &st, WNOHANG));

    /* SA_NOCLDWAIT with a handler: the handler runs, nothing to wait for. */
    hits = 0;
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO | SA_NOCLDWAIT;
    sigaction(SIGCHLD, &sa, NULL);
    child = fork();
    if (child == 0)
        _exit(4);
    SHOW("wait with SA_NOCLDWAIT", wait(&st));
    printf("SIGCHLD %d code %d status %d\n", hits, code, status);
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    sigaction(SIGCHLD, &sa, NULL);

    /* SIGPIPE. */
    int fds[2];
    pipe(fds);
    close(fds[0]);
    pid_t pid = fork();
    if (pid == 0) {
        write(fds[1], "x", 1);
        _exit(0);
    }
    waitpid(pid, &st, 0);
    show_status("writer with SIGPIPE's default action", st);
    signal(SIGPIPE, SIG_IGN);
    SHOW("write with SIGPIPE ignored", write(fds[1], "x", 1));
    sa.sa_sigaction = on_pipe;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGPIPE, &sa, NULL);
    SHOW("write with a SIGPIPE handler", write(fds[1], "x", 1));
    printf("SIGPIPE %d code %d\n", pipes, pipe_code);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, NULL);
    SHOW("write with SIGPIPE blocked", write(fds[1], "x", 1));
    sigset_t pend;
    sigpending(&pend);
    printf("SIGPIPE pending %d, handled %d\n", sigismember(&pend, SIGPIPE), pipes);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("unblocked: handled %d\n", pipes);

    /* A reader that goes away while the writer waits for room. */
    pipe(fds);
    pid = fork();
    if (pid == 0) {
        static char big[100000];
        signal(SIGPIPE, SIG_DFL);
        close(fds[0]);
        write(fds[1], big, sizeof(big));
        _exit(0);
    }
    close(fds[1]);
    ms(30);
    close(fds[0]);
    waitpid(pid, &st, 0);
    show_status("writer whose reader left", st);
    return 0;
}
