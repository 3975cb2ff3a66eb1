/* wait4 and waitid: status encodings (exit, signals, stop, continue),
 * WNOHANG, WUNTRACED, WCONTINUED, WNOWAIT, selection by pid, group and
 * any, rusage, and the errors (ECHILD, EINVAL). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "lxtest.h"

static void show(const char *what, int st)
{
    printf("%s: raw %#x exited %d code %d signaled %d sig %d stopped %d stopsig %d continued %d\n", what, st,
           WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : 0, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0,
           WIFSTOPPED(st), WIFSTOPPED(st) ? WSTOPSIG(st) : 0, WIFCONTINUED(st));
}

static void show_info(const char *what, long r, const siginfo_t *si, pid_t pid)
{
    if (r < 0)
        printf("%s: %s\n", what, errname(errno));
    else
        printf("%s: %ld signo %d code %d status %d pid %s\n", what, r, si->si_signo, si->si_code, si->si_status,
               si->si_pid == pid ? "the child's" : si->si_pid == 0 ? "0" : "other");
}

static volatile int chlds;

static void on_chld(int sig)
{
    (void)sig;
    chlds++;
}

/* The parent already waits (WUNTRACED | WCONTINUED) when its child stops
 * itself and when the parent continues it, under a SIGCHLD action of
 * `flags` (-1: the default action, -2: it with SA_NOCLDSTOP). The wait returns the child whatever
 * the action: a SIGCHLD that comes with the stop does not interrupt it. */
static void stop_while_waiting(const char *what, int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = flags < 0 ? SIG_DFL : on_chld;
    sa.sa_flags = flags == -2 ? SA_NOCLDSTOP : flags < 0 ? 0 : flags;
    sigaction(SIGCHLD, &sa, NULL);
    chlds = 0;
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        struct timespec ms20 = { 0, 20000000 };
        nanosleep(&ms20, NULL);
        raise(SIGSTOP);
        char b;
        read(p[0], &b, 1);
        _exit(9);
    }
    int st = 0;
    errno = 0;
    pid_t r = waitpid(pid, &st, WUNTRACED);
    printf("%s: waitpid WUNTRACED while it stops: %s %s\n", what, r == pid ? "the child" : "not the child",
           r < 0 ? errname(errno) : "");
    show("  status", st);
    printf("%s: SIGCHLD handled %d times by then\n", what, chlds);
    kill(pid, SIGCONT);
    r = waitpid(pid, &st, WCONTINUED);
    int e = errno;
    /* Linux's child sends the SIGCHLD of its continuing when it runs
     * again: let it come now, not during the output or the wait for the
     * exit, which it would interrupt without SA_RESTART. */
    struct timespec ms50 = { 0, 50000000 };
    nanosleep(&ms50, NULL);
    printf("%s: waitpid WCONTINUED: %s\n", what, r == pid ? "the child" : r < 0 ? errname(e) : "other");
    show("  status", st);
    write(p[1], "x", 1);
    r = waitpid(pid, &st, 0);
    printf("%s: then its exit: %s\n", what, r == pid ? "the child" : r < 0 ? errname(errno) : "other");
    show("  status", st);
    close(p[0]);
    close(p[1]);
    signal(SIGCHLD, SIG_DFL);
}

/* A child that waits for a byte on fd, then exits with `code`. */
static pid_t child_waiting(int fd, int code)
{
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        read(fd, &b, 1);
        _exit(code);
    }
    return pid;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int st;
    siginfo_t si;
    pid_t pid;

    /* Exit codes and signals. */
    static const int sigs[] = { SIGTERM, SIGKILL, SIGINT, SIGUSR1, SIGHUP };
    for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        int p[2];
        pipe(p);
        pid = child_waiting(p[0], 0);
        kill(pid, sigs[i]);
        waitpid(pid, &st, 0);
        char what[32];
        snprintf(what, sizeof(what), "killed by %d", sigs[i]);
        show(what, st);
        close(p[0]);
        close(p[1]);
    }
    if ((pid = fork()) == 0)
        abort();
    waitpid(pid, &st, 0);
    show("abort (no core: RLIMIT_CORE is 0)", st);
    if ((pid = fork()) == 0)
        exit(0);
    waitpid(pid, &st, 0);
    show("exit 0", st);
    if ((pid = fork()) == 0)
        exit(255);
    waitpid(pid, &st, 0);
    show("exit 255", st);

    /* Stop and continue, seen by wait4 and by waitid. */
    int p[2];
    pipe(p);
    pid = child_waiting(p[0], 6);
    kill(pid, SIGSTOP);
    SHOW("waitpid WUNTRACED of the stopped child", waitpid(pid, &st, WUNTRACED) == pid);
    show("stopped", st);
    SHOW("again: reported once (WNOHANG)", waitpid(pid, &st, WUNTRACED | WNOHANG));
    kill(pid, SIGCONT);
    SHOW("waitpid WCONTINUED", waitpid(pid, &st, WCONTINUED) == pid);
    show("continued", st);
    SHOW("again: reported once (WNOHANG)", waitpid(pid, &st, WCONTINUED | WNOHANG));
    kill(pid, SIGSTOP);
    memset(&si, 0xff, sizeof(si));
    show_info("waitid WSTOPPED", waitid(P_PID, pid, &si, WSTOPPED), &si, pid);
    memset(&si, 0xff, sizeof(si));
    show_info("waitid WSTOPPED | WNOHANG again", waitid(P_PID, pid, &si, WSTOPPED | WNOHANG), &si, pid);
    kill(pid, SIGCONT);
    memset(&si, 0xff, sizeof(si));
    show_info("waitid WCONTINUED", waitid(P_PID, pid, &si, WCONTINUED), &si, pid);
    memset(&si, 0xff, sizeof(si));
    show_info("waitid WEXITED | WNOHANG while it runs", waitid(P_PID, pid, &si, WEXITED | WNOHANG), &si, pid);
    SHOW("waitpid WNOHANG while it runs", waitpid(pid, &st, WNOHANG));
    write(p[1], "x", 1);
    memset(&si, 0xff, sizeof(si));
    show_info("waitid WEXITED | WNOWAIT", waitid(P_PID, pid, &si, WEXITED | WNOWAIT), &si, pid);
    SHOW("wait4 after WNOWAIT: it is still there", wait4(pid, &st, 0, NULL) == pid);
    show("its exit", st);
    SHOW("then it is gone", waitpid(pid, &st, WNOHANG));
    close(p[0]);
    close(p[1]);

    /* Selection: by group (0: the caller's; -pgid), and any. */
    SHOW("setpgid(0, 0)", setpgid(0, 0));
    pipe(p);
    pid_t in_group = child_waiting(p[0], 11);
    pid_t own_group = child_waiting(p[0], 12);
    setpgid(own_group, own_group);
    write(p[1], "xx", 2);
    SHOW("waitpid(-its group) takes that child", waitpid(-own_group, &st, 0) == own_group);
    printf("  its code: %d\n", WEXITSTATUS(st));
    SHOW("waitpid(0) takes the one in the caller's group", waitpid(0, &st, 0) == in_group);
    printf("  its code: %d\n", WEXITSTATUS(st));
    pid = child_waiting(p[0], 13);
    setpgid(pid, pid);
    memset(&si, 0, sizeof(si));
    show_info("waitid P_PGID of an empty group, WNOHANG", waitid(P_PGID, 99999, &si, WEXITED | WNOHANG), &si, pid);
    write(p[1], "x", 1);
    memset(&si, 0, sizeof(si));
    show_info("waitid P_PGID of its group", waitid(P_PGID, pid, &si, WEXITED), &si, pid);
    pid = child_waiting(p[0], 14);
    write(p[1], "x", 1);
    memset(&si, 0, sizeof(si));
    show_info("waitid P_ALL", waitid(P_ALL, 0, &si, WEXITED), &si, pid);
    pid = child_waiting(p[0], 15);
    write(p[1], "x", 1);
    SHOW("waitid without siginfo", waitid(P_PID, pid, NULL, WEXITED));
    SHOW("and it was reaped", waitpid(pid, &st, WNOHANG));

    /* rusage of a child that ran 50 ms: wait4's and waitid's (its fifth argument). */
    for (int k = 0; k < 2; k++) {
        if ((pid = fork()) == 0) {
            struct timespec t, e;
            clock_gettime(CLOCK_MONOTONIC, &e);
            e.tv_nsec += 50000000;
            do {
                for (volatile int i = 0; i < 20000; i++)        /* computing, a clock read now and then */
                    ;
                clock_gettime(CLOCK_MONOTONIC, &t);
            } while (t.tv_sec < e.tv_sec + e.tv_nsec / 1000000000 ||
                   (t.tv_sec == e.tv_sec + e.tv_nsec / 1000000000 && t.tv_nsec < e.tv_nsec % 1000000000));
            _exit(0);
        }
        struct rusage ru;
        memset(&ru, 0, sizeof(ru));
        long r = k ? syscall(SYS_waitid, P_PID, pid, &si, WEXITED, &ru) : wait4(pid, &st, 0, &ru);
        double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
        printf("%s with rusage: %ld, 10 ms of CPU or more %d ~%.3f\n", k ? "waitid" : "wait4", r >= 0 ? 0 : r,
               cpu >= 0.01, cpu);
    }

    stop_while_waiting("SA_NOCLDSTOP | SA_RESTART", SA_NOCLDSTOP | SA_RESTART);
    stop_while_waiting("SA_NOCLDSTOP", SA_NOCLDSTOP);
    stop_while_waiting("SA_RESTART", SA_RESTART);
    stop_while_waiting("a handler without SA_RESTART", 0);
    stop_while_waiting("the default action", -1);
    stop_while_waiting("the default action with SA_NOCLDSTOP", -2);

    /* Errors. */
    SHOW("wait with no children", wait(&st));
    SHOW("waitpid WNOHANG with no children", waitpid(-1, &st, WNOHANG));
    SHOW("waitid with no children", waitid(P_ALL, 0, &si, WEXITED | WNOHANG));
    /* A grandchild is not the caller's child. */
    int a[2], b[2];
    pipe(a);
    pipe(b);
    if ((pid = fork()) == 0) {
        pid_t g = child_waiting(a[0], 0);
        write(b[1], &g, sizeof(g));
        waitpid(g, &st, 0);
        _exit(0);
    }
    pid_t g = 0;
    read(b[0], &g, sizeof(g));
    SHOW("waitpid of a grandchild", waitpid(g, &st, 0));
    SHOW("waitid of a grandchild", waitid(P_PID, g, &si, WEXITED));
    write(a[1], "x", 1);
    waitpid(pid, &st, 0);
    SHOW("waitpid of a pid that is nobody", waitpid(99999, &st, 0));
    SHOW("waitpid with option 0x10000", waitpid(-1, &st, 0x10000));
    SHOW("waitpid of INT_MIN", syscall(SYS_wait4, (int)0x80000000, &st, 0, NULL));
    SHOW("waitid P_PID 0", waitid(P_PID, 0, &si, WEXITED));
    SHOW("waitid P_PGID -1", syscall(SYS_waitid, P_PGID, -1, &si, WEXITED, NULL));
    SHOW("waitid idtype 7", syscall(SYS_waitid, 7, 0, &si, WEXITED, NULL));
    SHOW("waitid option 0x100", waitid(P_ALL, 0, &si, WEXITED | 0x100));
    SHOW("waitid without WEXITED, WSTOPPED or WCONTINUED", waitid(P_ALL, 0, &si, WNOHANG));
    return 0;
}
