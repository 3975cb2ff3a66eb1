/*
 * Each kind of descriptor in each of select's three sets, in poll with
 * POLLPRI and in epoll with EPOLLPRI: which is ready, and what the sets
 * hold afterwards. Linux marks exceptfds (POLLPRI) only for a socket's
 * out-of-band data and a pty in packet mode, none of which is here, so
 * every exceptfds comes back empty. A select or ppoll that times out
 * clears every set it was given (lmbench's harness relies on it), and the
 * raw pselect6 and ppoll write back the time that was left. Calls with a
 * zero timeout (which Petrel serves on the register entry of its
 * personality) over two words of descriptors, with bad arguments and with
 * a mask that unblocks a pending signal.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>

struct kind {
    const char *what;
    int fd;
};

/* fd alone in set k (0 read, 1 write, 2 except) with a zero timeout. */
static void in_set(const char *what, int fd, int k)
{
    static const char *names[] = { "readfds", "writefds", "exceptfds" };
    fd_set s[3];
    for (int i = 0; i < 3; i++)
        FD_ZERO(&s[i]);
    FD_SET(fd, &s[k]);
    struct timeval tv = { 0, 0 };
    errno = 0;
    int r = select(fd + 1, &s[0], &s[1], &s[2], &tv);
    printf("%s in %s: %d%s%s, still set: %d\n", what, names[k], r, r < 0 ? " " : "", r < 0 ? errname(errno) : "",
           FD_ISSET(fd, &s[k]) ? 1 : 0);
}

static void by_poll(const char *what, int fd)
{
    struct pollfd p = { fd, POLLIN | POLLOUT | POLLPRI, 0 };
    int r = poll(&p, 1, 0);
    printf("%s: poll %d revents 0x%x; ", what, r, p.revents);
    p.events = POLLPRI;
    r = poll(&p, 1, 0);
    printf("POLLPRI alone %d revents 0x%x\n", r, p.revents);
}

static void by_epoll(const char *what, int fd)
{
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLPRI, .data.fd = fd };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        printf("%s: epoll_ctl -1 %s\n", what, errname(errno));
        close(ep);
        return;
    }
    struct epoll_event out = { 0 };
    int n = epoll_wait(ep, &out, 1, 0);
    printf("%s: epoll %d events 0x%x; ", what, n, n > 0 ? out.events : 0);
    ev.events = EPOLLPRI;
    epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    out.events = 0;
    n = epoll_wait(ep, &out, 1, 0);
    printf("EPOLLPRI alone %d events 0x%x\n", n, n > 0 ? out.events : 0);
    close(ep);
}

/* A select that waits 20 ms for nothing: 0, and every set cleared. */
static void times_out(int quiet_read, int quiet_write_full)
{
    fd_set r, w, e;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&e);
    FD_SET(quiet_read, &r);
    FD_SET(quiet_read, &e);
    FD_SET(quiet_write_full, &w);
    FD_SET(quiet_write_full, &e);
    int n = (quiet_read > quiet_write_full ? quiet_read : quiet_write_full) + 1;
    struct timeval tv = { 0, 20000 };
    int ret = select(n, &r, &w, &e, &tv);
    printf("select timing out: %d, read %d write %d except %d %d\n", ret, FD_ISSET(quiet_read, &r),
           FD_ISSET(quiet_write_full, &w), FD_ISSET(quiet_read, &e), FD_ISSET(quiet_write_full, &e));

    /* The raw pselect6 writes back the time left: none. */
    FD_SET(quiet_read, &r);
    FD_SET(quiet_read, &e);
    struct timespec ts = { 0, 20000000 };
    ret = (int)syscall(SYS_pselect6, n, &r, NULL, &e, &ts, NULL);
    printf("pselect6 timing out: %d, read %d except %d, left %ld.%09ld\n", ret, FD_ISSET(quiet_read, &r),
           FD_ISSET(quiet_read, &e), (long)ts.tv_sec, ts.tv_nsec);

    /* ppoll timing out: revents cleared, time left none. */
    struct pollfd p[2] = { { quiet_read, POLLIN | POLLPRI, 0x7fff }, { quiet_write_full, POLLOUT | POLLPRI, 0x7fff } };
    ts = (struct timespec){ 0, 20000000 };
    ret = (int)syscall(SYS_ppoll, p, 2, &ts, NULL, 8);
    printf("ppoll timing out: %d, revents 0x%x 0x%x, left %ld.%09ld\n", ret, p[0].revents, p[1].revents,
           (long)ts.tv_sec, ts.tv_nsec);
}

/* Calls that cannot wait (a zero timeout), each kind of argument that
 * makes one different: descriptors past the first word of the sets,
 * bits past nfds, a bad descriptor in the second word, more ppoll
 * entries than a short scan, a bad timespec and masks, and a mask that
 * unblocks a pending signal. */
static volatile int usr1_caught;
static void on_usr1(int sig) { (void)sig; usr1_caught++; }

static void zero_timeouts(int ready, int quiet)
{
    int hi = dup2(ready, 100), hi_quiet = dup2(quiet, 130);
    fd_set r;
    FD_ZERO(&r);
    FD_SET(ready, &r);
    FD_SET(hi, &r);
    FD_SET(hi_quiet, &r);
    FD_SET(140, &r);                    /* past nfds (131): not looked at */
    struct timespec ts = { 0, 0 };
    int ret = (int)syscall(SYS_pselect6, hi_quiet + 1, &r, NULL, NULL, &ts, NULL);
    printf("pselect6 over two words: %d, set %d %d %d %d\n", ret, FD_ISSET(ready, &r), FD_ISSET(hi, &r),
           FD_ISSET(hi_quiet, &r), FD_ISSET(140, &r));
    FD_ZERO(&r);
    FD_SET(ready, &r);
    FD_SET(120, &r);                    /* not open */
    errno = 0;
    ret = (int)syscall(SYS_pselect6, 121, &r, NULL, NULL, &ts, NULL);
    printf("pselect6 with a closed descriptor in the second word: %d %s, set %d\n", ret,
           ret < 0 ? errname(errno) : "", FD_ISSET(ready, &r));
    struct pollfd many[70];
    for (int i = 0; i < 70; i++)
        many[i] = (struct pollfd){ i % 2 ? hi : hi_quiet, POLLIN, 0 };
    ret = (int)syscall(SYS_ppoll, many, 70, &ts, NULL, 8);
    printf("ppoll of 70 entries: %d, revents 0x%x 0x%x\n", ret, many[0].revents, many[1].revents);
    struct timespec bad = { 0, 1000000000 };
    errno = 0;
    ret = (int)syscall(SYS_pselect6, ready + 1, &r, NULL, NULL, &bad, NULL);
    printf("pselect6 with tv_nsec 1e9: %d %s\n", ret, ret < 0 ? errname(errno) : "");
    errno = 0;
    ret = (int)syscall(SYS_ppoll, many, 1, (void *)8, NULL, 8);
    printf("ppoll with an unreadable timespec: %d %s\n", ret, ret < 0 ? errname(errno) : "");
    sigset_t none;
    sigemptyset(&none);
    errno = 0;
    ret = (int)syscall(SYS_ppoll, many, 1, &ts, &none, 7);
    printf("ppoll with a mask size of 7: %d %s\n", ret, ret < 0 ? errname(errno) : "");
    /* SIGUSR1 blocked and pending; a zero-timeout call whose mask unblocks it. */
    signal(SIGUSR1, on_usr1);
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &old);
    raise(SIGUSR1);
    FD_ZERO(&r);
    FD_SET(ready, &r);
    struct { const sigset_t *mask; size_t size; } arg = { &none, 8 };
    errno = 0;
    ret = (int)syscall(SYS_pselect6, ready + 1, &r, NULL, NULL, &ts, &arg);
    printf("pselect6 ready, its mask unblocking a pending signal: %d %s, caught %d\n", ret,
           ret < 0 ? errname(errno) : "", usr1_caught);
    FD_ZERO(&r);
    FD_SET(hi_quiet, &r);
    errno = 0;
    ret = (int)syscall(SYS_pselect6, hi_quiet + 1, &r, NULL, NULL, &ts, &arg);
    printf("pselect6 not ready, the same: %d %s, caught %d\n", ret, ret < 0 ? errname(errno) : "", usr1_caught);
    raise(SIGUSR1);
    struct pollfd one = { ready, POLLIN, 0 };
    errno = 0;
    ret = (int)syscall(SYS_ppoll, &one, 1, &ts, &none, 8);
    printf("ppoll ready, its mask unblocking a pending signal: %d %s, caught %d\n", ret,
           ret < 0 ? errname(errno) : "", usr1_caught);
    one.fd = hi_quiet;
    errno = 0;
    ret = (int)syscall(SYS_ppoll, &one, 1, &ts, &none, 8);
    printf("ppoll not ready, the same: %d %s, caught %d\n", ret, ret < 0 ? errname(errno) : "", usr1_caught);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("after unblocking: caught %d\n", usr1_caught);
    close(hi);
    close(hi_quiet);
}

/* A select that finds something at once: the time left is what was given, or a little less. */
static void time_left(int ready)
{
    fd_set r;
    FD_ZERO(&r);
    FD_SET(ready, &r);
    struct timespec ts = { 5, 0 };
    int ret = (int)syscall(SYS_pselect6, ready + 1, &r, NULL, NULL, &ts, NULL);
    long left_ms = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    printf("pselect6 ready at once: %d, left between 4.5 s and 5 s: %d\n", ret, left_ms > 4500 && left_ms <= 5000);
    struct pollfd p = { ready, POLLIN, 0 };
    ts = (struct timespec){ 5, 0 };
    ret = (int)syscall(SYS_ppoll, &p, 1, &ts, NULL, 8);
    left_ms = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    printf("ppoll ready at once: %d, left between 4.5 s and 5 s: %d\n", ret, left_ms > 4500 && left_ms <= 5000);
    /* A bad set pointer after the wait is not a reason to lose the answer on Linux either: EFAULT. */
    ts = (struct timespec){ 0, 0 };
    errno = 0;
    ret = (int)syscall(SYS_pselect6, ready + 1, (void *)8, NULL, NULL, &ts, NULL);
    printf("pselect6 with a bad set: %d %s\n", ret, ret < 0 ? errname(errno) : "");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGPIPE, SIG_IGN);
    int file = open("/tmp/selectsets.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(file, "bytes\n", 6);
    int empty[2], full[2], fed[2], hup[2], broken[2], sv[2], quiet[2], dg[2];
    pipe(empty);
    pipe(full);
    pipe(fed);
    pipe(hup);
    pipe(broken);
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    socketpair(AF_UNIX, SOCK_STREAM, 0, quiet);
    socketpair(AF_UNIX, SOCK_DGRAM, 0, dg);
    fcntl(full[1], F_SETFL, O_NONBLOCK);
    char chunk[4096] = { 0 };
    while (write(full[1], chunk, sizeof(chunk)) > 0)
        ;
    write(fed[1], "x", 1);
    close(hup[1]);
    close(broken[0]);
    write(sv[1], "data", 4);
    write(dg[1], "dgram", 5);
    int ev0 = eventfd(0, 0), ev1 = eventfd(3, 0);
    int tf = timerfd_create(CLOCK_MONOTONIC, 0);
    int tf_fired = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };
    timerfd_settime(tf_fired, 0, &its, NULL);
    usleep(5000);
    struct kind all[] = {
        { "a file in /tmp", file },
        { "a directory", open("/tmp", O_RDONLY | O_DIRECTORY) },
        { "/dev/null", open("/dev/null", O_RDWR) },
        { "/dev/zero", open("/dev/zero", O_RDONLY) },
        { "an empty pipe's read end", empty[0] },
        { "an empty pipe's write end", empty[1] },
        { "a full pipe's write end", full[1] },
        { "a full pipe's read end", full[0] },
        { "a pipe's read end with a byte", fed[0] },
        { "a read end without writers", hup[0] },
        { "a write end without readers", broken[1] },
        { "a stream socket with data", sv[0] },
        { "a stream socket without data", quiet[0] },
        { "a datagram socket with data", dg[0] },
        { "an eventfd at 0", ev0 },
        { "an eventfd at 3", ev1 },
        { "an idle timerfd", tf },
        { "a timerfd that fired", tf_fired },
        { "an epoll", epoll_create1(0) },
        { "an O_PATH file", open("/tmp/selectsets.txt", O_PATH) },
    };
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        for (int k = 0; k < 3; k++)
            in_set(all[i].what, all[i].fd, k);
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        by_poll(all[i].what, all[i].fd);
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        by_epoll(all[i].what, all[i].fd);
    {
        /* A closed descriptor in exceptfds alone is EBADF too. */
        fd_set e;
        FD_ZERO(&e);
        FD_SET(60, &e);
        struct timeval tv = { 0, 0 };
        errno = 0;
        int r = select(61, NULL, NULL, &e, &tv);
        printf("a closed descriptor in exceptfds: %d %s\n", r, r < 0 ? errname(errno) : "");
    }
    times_out(empty[0], full[1]);
    time_left(fed[0]);
    zero_timeouts(fed[0], empty[0]);
    unlink("/tmp/selectsets.txt");
    return 0;
}
