/*
 * Pseudo-terminals: /dev/ptmx and /dev/pts/N as Linux has them. The
 * master's side, the slave's line discipline and output processing, the
 * lock, TIOCGPTPEER, a session leader's controlling terminal and its
 * signals, job control in the pty, the hangup when the master closes and
 * EIO on the master once the slave is closed.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include "lxtest.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441
#endif

/* Everything the master has to read, until it has been quiet for 300 ms
 * (Linux moves a master's writes to the slave asynchronously), printed
 * with control characters escaped. */
static void drain(const char *what, int m)
{
    char all[512], buf[256];
    size_t n = 0;
    struct pollfd p = { m, POLLIN, 0 };
    while (n < sizeof(all) - 1 && poll(&p, 1, 300) == 1 && (p.revents & POLLIN)) {
        ssize_t k = read(m, buf, sizeof(buf));
        if (k <= 0)
            break;
        if ((size_t)k > sizeof(all) - 1 - n)
            k = (ssize_t)(sizeof(all) - 1 - n);
        memcpy(all + n, buf, (size_t)k);
        n += (size_t)k;
    }
    printf("%s: \"", what);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)all[i];
        if (c == '\r')
            printf("\\r");
        else if (c == '\n')
            printf("\\n");
        else if (c < 0x20 || c == 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    printf("\"\n");
}

/* A read of the slave, printed as drain prints. */
static void slave_read(const char *what, int s)
{
    char buf[128];
    struct pollfd p = { s, POLLIN, 0 };
    if (poll(&p, 1, 1000) != 1) {
        printf("%s: nothing\n", what);
        return;
    }
    ssize_t k = read(s, buf, sizeof(buf) - 1);
    if (k < 0) {
        printf("%s: %s\n", what, errname(errno));
        return;
    }
    buf[k] = 0;
    for (char *c = buf; *c; c++)
        if (*c == '\n')
            *c = '|';
        else if (*c == '\r')
            *c = '^';
    printf("%s: %zd \"%s\"\n", what, k, buf);
}

static void show_stat(const char *what, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("%s: %s\n", what, errname(errno));
        return;
    }
    printf("%s: chr %d, %u:%u, mode %o, gid %u\n", what, S_ISCHR(st.st_mode), major(st.st_rdev),
           minor(st.st_rdev), st.st_mode & 07777, (unsigned)st.st_gid);
}

/* A new unlocked pair: the master, and its slave's name in name. */
static int pair(char *name, size_t size)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) || unlockpt(m) || ptsname_r(m, name, size))
        return -1;
    return m;
}

/* The session leader's side of the signal test: the slave becomes its
 * controlling terminal; it says so on `ready` and waits to be killed by
 * the master's ^C. */
static void leader(const char *name, int ready)
{
    setsid();
    int s = open(name, O_RDWR);                 /* no O_NOCTTY: its controlling terminal */
    pid_t sid = -1, fg = tcgetpgrp(s);
    ioctl(s, TIOCGSID, &sid);
    int tty = open("/dev/tty", O_RDWR);
    char line[96];
    snprintf(line, sizeof(line), "sid is me %d, foreground is me %d, /dev/tty %s\n", sid == getpid(),
             fg == getpid(), tty >= 0 ? "opens" : errname(errno));
    write(ready, line, strlen(line));
    char buf[16];
    read(s, buf, sizeof(buf));                  /* ^C ends it here */
    _exit(3);
}

/* Job control in the pty: a child in a background group that reads the
 * terminal stops with SIGTTIN; continued in the foreground, it reads. */
static void jobs(const char *name, int ready)
{
    setsid();
    int s = open(name, O_RDWR);
    pid_t kid = fork();
    if (kid == 0) {
        setpgid(0, 0);
        char buf[32];
        ssize_t k = read(s, buf, sizeof(buf));
        _exit(k > 0 ? (int)k : 100);
    }
    setpgid(kid, kid);
    int st;
    char line[128];
    pid_t w = waitpid(kid, &st, WUNTRACED);
    int stopped = w == kid && WIFSTOPPED(st) ? WSTOPSIG(st) : -1;
    signal(SIGTTOU, SIG_IGN);
    int set = tcsetpgrp(s, kid);
    kill(kid, SIGCONT);
    snprintf(line, sizeof(line), "background reader stopped by %s, tcsetpgrp %d\n",
             stopped == SIGTTIN ? "SIGTTIN" : "something else", set);
    write(ready, line, strlen(line));
    w = waitpid(kid, &st, 0);
    snprintf(line, sizeof(line), "foreground reader read %d bytes\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    write(ready, line, strlen(line));
    _exit(0);
}

static volatile sig_atomic_t hups;

static void on_hup(int sig)
{
    (void)sig;
    hups++;
}

/* The hangup's child: a session leader whose controlling terminal's
 * master closes; it reports the SIGHUP and what the slave does then. */
static void hangup(const char *name, int report)
{
    signal(SIGHUP, on_hup);
    setsid();
    int s = open(name, O_RDWR);
    write(report, "r", 1);
    while (!hups)
        usleep(10000);
    char line[128];
    ssize_t k = read(s, line, sizeof(line));
    int rerr = errno;
    long w = write(s, "x", 1);
    snprintf(line, sizeof(line), "SIGHUP %d, read %ld %s, write %ld %s, tcgetpgrp %s\n", (int)hups, (long)k,
             k < 0 ? errname(rerr) : "", w, w < 0 ? errname(errno) : "", tcgetpgrp(s) < 0 ? errname(errno) : "a group");
    write(report, line, strlen(line));
    _exit(0);
}

/* Fork a child that runs `child` on slave `name` (without master m: the
 * parent's close of it must be the last) and reports on a pipe; the
 * pipe's read end in *from, the child's pid returned. */
static pid_t start(void (*child)(const char *, int), const char *name, int m, int *from)
{
    int fds[2];
    pipe(fds);
    pid_t kid = fork();
    if (kid == 0) {
        close(fds[0]);
        close(m);
        child(name, fds[1]);
    }
    close(fds[1]);
    *from = fds[0];
    return kid;
}

/* Pass the child's lines on `from` to stdout until it closes. */
static void relay(int from)
{
    char buf[256];
    ssize_t k;
    while ((k = read(from, buf, sizeof(buf))) > 0)
        fwrite(buf, 1, (size_t)k, stdout);
    fflush(stdout);
}

int main(void)
{
    char name[64];
    setvbuf(stdout, NULL, _IONBF, 0);
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    SHOW("posix_openpt", m >= 0);
    unsigned n = 99;
    int lock = -1;
    SHOW("TIOCGPTN", ioctl(m, TIOCGPTN, &n));
    SHOW("TIOCGPTLCK", ioctl(m, TIOCGPTLCK, &lock));
    printf("number %u, locked %d\n", n, lock);
    ptsname_r(m, name, sizeof(name));
    printf("ptsname: %s\n", name);
    SHOW("open the slave while locked", open(name, O_RDWR | O_NOCTTY));
    SHOW("grantpt", grantpt(m));
    SHOW("unlockpt", unlockpt(m));
    int s = open(name, O_RDWR | O_NOCTTY);
    SHOW("open the slave", s >= 0);
    show_stat("the slave", name);
    show_stat("/dev/ptmx", "/dev/ptmx");
    show_stat("/dev/pts/ptmx", "/dev/pts/ptmx");
    printf("isatty master %d slave %d\n", isatty(m), isatty(s));
    char link[64] = { 0 }, path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", m);
    readlink(path, link, sizeof(link) - 1);
    printf("master's /proc link: %s\n", link);
    memset(link, 0, sizeof(link));
    snprintf(path, sizeof(path), "/proc/self/fd/%d", s);
    readlink(path, link, sizeof(link) - 1);
    printf("slave's /proc link: %s\n", link);
    struct termios ts, tm;
    tcgetattr(s, &ts);
    tcgetattr(m, &tm);
    printf("slave termios: iflag %o oflag %o cflag %o lflag %o; the master's the same %d\n", ts.c_iflag,
           ts.c_oflag, ts.c_cflag, ts.c_lflag, memcmp(&ts, &tm, sizeof(ts)) == 0);
    SHOW("lseek the master", lseek(m, 0, SEEK_CUR));
    SHOW("TIOCGPTN on the slave", ioctl(s, TIOCGPTN, &n));
    SHOW("TIOCGSID on the master (no session)", ioctl(m, TIOCGSID, &n));

    /* The line discipline: canonical input, echo, erase, output processing. */
    write(m, "hello\n", 6);
    slave_read("slave reads", s);
    drain("echo", m);
    write(m, "ab\x7f" "c\n", 5);
    slave_read("slave reads after an erase", s);
    drain("echo of the erase", m);
    int avail = -1;
    write(m, "partial", 7);
    usleep(100000);
    ioctl(s, FIONREAD, &avail);
    printf("FIONREAD of an unfinished line: %d\n", avail);
    write(m, "\n", 1);
    slave_read("the line finished", s);
    drain("its echo", m);
    write(s, "x\ny", 3);
    drain("the slave's output (ONLCR)", m);
    ts.c_oflag &= ~(tcflag_t)OPOST;
    tcsetattr(s, TCSANOW, &ts);
    write(s, "x\ny", 3);
    drain("... without OPOST", m);
    write(m, "\x04", 1);
    usleep(100000);
    SHOW("read of a lone VEOF", read(s, path, sizeof(path)));
    struct termios raw = ts;
    cfmakeraw(&raw);
    tcsetattr(s, TCSANOW, &raw);
    write(m, "q\r", 2);
    usleep(100000);
    ioctl(s, FIONREAD, &avail);
    printf("raw FIONREAD: %d\n", avail);
    slave_read("raw read", s);
    drain("raw echo", m);
    fcntl(m, F_SETFL, O_NONBLOCK);
    SHOW("master read with nothing to read", read(m, path, sizeof(path)));
    fcntl(m, F_SETFL, 0);
    struct winsize ws = { 24, 80, 0, 0 }, got = { 0 };
    SHOW("TIOCSWINSZ on the master", ioctl(m, TIOCSWINSZ, &ws));
    SHOW("TIOCGWINSZ on the slave", ioctl(s, TIOCGWINSZ, &got));
    printf("window %u x %u\n", got.ws_row, got.ws_col);
    tcsetattr(s, TCSANOW, &tm);                 /* back to cooked */

    /* TIOCGPTPEER: the slave opened through the master. */
    int peer = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
    SHOW("TIOCGPTPEER", peer >= 0);
    write(peer, "peer\n", 5);
    drain("through the peer", m);
    close(peer);

    /* The slave closed: the master reads what is left, then EIO, and polls POLLHUP. */
    write(s, "last", 4);
    close(s);
    struct pollfd p = { m, POLLIN, 0 };
    poll(&p, 1, 1000);
    printf("poll of the master: in %d hup %d\n", !!(p.revents & POLLIN), !!(p.revents & POLLHUP));
    SHOW("master reads the rest", read(m, path, sizeof(path)));
    SHOW("then", read(m, path, sizeof(path)));
    s = open(name, O_RDWR | O_NOCTTY);
    SHOW("the slave opened again", s >= 0);
    p.revents = 0;
    SHOW("poll of the master", poll(&p, 1, 0));
    close(s);
    close(m);
    show_stat("the slave once both are closed", name);

    /* A session leader's controlling terminal, and ^C to its group. */
    int from;
    m = pair(name, sizeof(name));
    pid_t kid = start(leader, name, m, &from);
    char line[128];
    ssize_t k = read(from, line, sizeof(line) - 1);
    line[k > 0 ? k : 0] = 0;
    printf("leader: %s", line);
    usleep(100000);
    write(m, "\x03", 1);
    int st;
    waitpid(kid, &st, 0);
    printf("the leader ended by %s\n", WIFSIGNALED(st) && WTERMSIG(st) == SIGINT ? "SIGINT" : "something else");
    drain("echo of ^C", m);
    close(from);
    close(m);

    /* Job control in the pty. */
    m = pair(name, sizeof(name));
    kid = start(jobs, name, m, &from);
    k = read(from, line, sizeof(line) - 1);
    line[k > 0 ? k : 0] = 0;
    printf("jobs: %s", line);
    write(m, "fg-line\n", 8);
    relay(from);
    waitpid(kid, &st, 0);
    close(from);
    close(m);

    /* The master closed: the slave is hung up, its name gone, its session leader gets SIGHUP. */
    m = pair(name, sizeof(name));
    kid = start(hangup, name, m, &from);
    read(from, line, 1);
    close(m);
    show_stat("the slave's name once the master is closed", name);
    relay(from);
    waitpid(kid, &st, 0);
    close(from);
    return 0;
}
