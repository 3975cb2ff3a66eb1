/*
 * signalfd: a set of blocked signals read as struct signalfd_siginfo,
 * several in one read, the sender's pid and code, sigqueue's value, the
 * set replaced, poll and epoll readiness, a blocking read woken by a
 * child's kill, and the errors of bad arguments.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

static void show_info(const char *what, const struct signalfd_siginfo *si, pid_t me)
{
    printf("%s: signo %u code %d from me %d value %d\n", what, si->ssi_signo, si->ssi_code,
           si->ssi_pid == (uint32_t)me, si->ssi_int);
}

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    SHOW("signalfd", fd >= 0);
    printf("close-on-exec %d, non-blocking %d\n", (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0,
           (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
    struct signalfd_siginfo si[4];
    SHOW("read with nothing pending", read(fd, si, sizeof(si)));
    SHOW("read into 127 bytes", read(fd, si, 127));
    struct pollfd p = { fd, POLLIN, 0 };
    SHOW("poll with nothing pending", poll(&p, 1, 0));
    pid_t me = getpid();
    kill(me, SIGUSR1);
    union sigval v = { .sival_int = 42 };
    sigqueue(me, SIGUSR2, v);
    SHOW("poll with two pending", poll(&p, 1, 0));
    int ep = epoll_create1(0);
    struct epoll_event ev = { EPOLLIN, { .u64 = 7 } }, got;
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    SHOW("epoll_wait", epoll_wait(ep, &got, 1, 0));
    long n = read(fd, si, sizeof(si));
    printf("one read: %ld bytes\n", n);
    for (long i = 0; i < n / (long)sizeof(si[0]); i++)
        show_info("  took", &si[i], me);
    sigset_t pending;
    sigpending(&pending);
    printf("still pending: USR1 %d USR2 %d\n", sigismember(&pending, SIGUSR1), sigismember(&pending, SIGUSR2));
    SHOW("read of one siginfo when one fits and none is pending", read(fd, si, sizeof(si[0])));

    /* The set replaced: SIGUSR1 no longer read through it. */
    sigset_t only2;
    sigemptyset(&only2);
    sigaddset(&only2, SIGUSR2);
    SHOW("signalfd on the same descriptor", signalfd(fd, &only2, 0) == fd);
    kill(me, SIGUSR1);
    SHOW("read with only a signal outside the set", read(fd, si, sizeof(si)));
    struct timespec zero = { 0, 0 };
    SHOW("sigtimedwait takes it", sigtimedwait(&set, NULL, &zero));

    /* A blocking read, woken by a child's kill. */
    int bfd = signalfd(-1, &set, 0);
    pid_t kid = fork();
    if (kid == 0) {
        usleep(100000);
        kill(getppid(), SIGUSR2);
        _exit(0);
    }
    n = read(bfd, si, sizeof(si));
    printf("blocking read: %ld bytes, signo %u, from the child %d, code %d\n", n, si[0].ssi_signo,
           si[0].ssi_pid == (uint32_t)kid, si[0].ssi_code);
    waitpid(kid, NULL, 0);

    /* SIGKILL and SIGSTOP are dropped from a set; bad arguments. */
    sigset_t all;
    sigfillset(&all);
    int afd = signalfd(-1, &all, SFD_NONBLOCK);
    SHOW("a set of every signal", afd >= 0);
    SHOW("sizemask 4", syscall(SYS_signalfd4, -1, &set, 4, 0));
    SHOW("flags 1", syscall(SYS_signalfd4, -1, &set, 8, 1));
    SHOW("a bad mask pointer", syscall(SYS_signalfd4, -1, (void *)8, 8, 0));
    SHOW("a descriptor that is not a signalfd (stdin)", syscall(SYS_signalfd4, 0, &set, 8, 0));
    SHOW("descriptor 999", syscall(SYS_signalfd4, 999, &set, 8, 0));
    SHOW("write", write(fd, si, sizeof(si[0])));
    char link[64] = { 0 }, path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    readlink(path, link, sizeof(link) - 1);
    printf("its /proc link: %s\n", link);
    return 0;
}
