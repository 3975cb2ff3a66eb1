/*
 * File locks: POSIX record locks (per process: split, merged, released by
 * any close and at exit, not inherited, F_GETLK's owner pid, F_SETLKW
 * waits, EDEADLK, EINTR), open file description locks (per description:
 * shared by fork, conflicting with POSIX locks, pid -1), flock (per
 * description, independent of the others), the errors, and a process
 * that sets locks without end (it alone gets ENOLCK, if anyone).
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>

#define PATH "/tmp/locks.db"

static pid_t parent;

static void ms(int n)
{
    struct timespec t = { n / 1000, (n % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static const char *type_name(int t)
{
    return t == F_RDLCK ? "read" : t == F_WRLCK ? "write" : t == F_UNLCK ? "unlocked" : "?";
}

static int setlk(int fd, int cmd, int type, int whence, long start, long len)
{
    struct flock fl = { .l_type = (short)type, .l_whence = (short)whence, .l_start = start, .l_len = len };
    return fcntl(fd, cmd, &fl);
}

/* F_GETLK (or F_OFD_GETLK) of a `type` lock of start..+len: who is in the way. */
static void getlk(const char *what, int fd, int cmd, int type, long start, long len)
{
    struct flock fl = { .l_type = (short)type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
    if (fcntl(fd, cmd, &fl) < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    if (fl.l_type == F_UNLCK) {
        printf("%s: free\n", what);
        return;
    }
    printf("%s: %s lock at %ld len %ld whence %d by %s\n", what, type_name(fl.l_type), (long)fl.l_start,
           (long)fl.l_len, fl.l_whence, fl.l_pid == parent ? "the parent" : fl.l_pid == -1 ? "-1 (a description)"
                                                                   : fl.l_pid == getpid() ? "me" : "another");
}

/* Run `body` in a child (which reports), and wait for it. */
static void in_child(void (*body)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
}

static void probe_ranges(void)
{
    int fd = open(PATH, O_RDWR);
    getlk("  byte 0 (write?)", fd, F_GETLK, F_WRLCK, 0, 1);
    getlk("  byte 39 (write?)", fd, F_GETLK, F_WRLCK, 39, 1);
    getlk("  byte 40 (write?)", fd, F_GETLK, F_WRLCK, 40, 1);
    getlk("  byte 40 (read?)", fd, F_GETLK, F_RDLCK, 40, 1);
    getlk("  byte 59 (write?)", fd, F_GETLK, F_WRLCK, 59, 1);
    getlk("  byte 60 (read?)", fd, F_GETLK, F_RDLCK, 60, 1);
    getlk("  bytes 100.. (write?)", fd, F_GETLK, F_WRLCK, 100, 0);
    getlk("  byte 1000 (write?)", fd, F_GETLK, F_WRLCK, 1000, 1);
    getlk("  all (read?)", fd, F_GETLK, F_RDLCK, 0, 0);
    SHOW("  write-lock byte 100", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 100, 1));
    SHOW("  write-lock byte 2000", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 2000, 1));
    SHOW("  read-lock 40..59", setlk(fd, F_SETLK, F_RDLCK, SEEK_SET, 40, 20));
    close(fd);
}

static void posix_locks(void)
{
    int fd = open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "0123456789", 10);
    getlk("nothing locked", fd, F_GETLK, F_WRLCK, 0, 0);
    SHOW("write-lock 0..99", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 100));
    getlk("my own lock is no conflict", fd, F_GETLK, F_WRLCK, 0, 0);
    SHOW("unlock 40..59", setlk(fd, F_SETLK, F_UNLCK, SEEK_SET, 40, 20));
    SHOW("read-lock 50..54", setlk(fd, F_SETLK, F_RDLCK, SEEK_SET, 50, 5));
    SHOW("write-lock 1000 to any end", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 1000, 0));
    printf("a child looks:\n");
    in_child(probe_ranges);
    SHOW("read-lock 0..99 (a write lock made a read one)", setlk(fd, F_SETLK, F_RDLCK, SEEK_SET, 0, 100));
    printf("a child looks again:\n");
    in_child(probe_ranges);
    SHOW("write-lock 10..19 through SEEK_CUR (at 10)", setlk(fd, F_SETLK, F_WRLCK, SEEK_CUR, 0, 10));
    SHOW("write-lock 5..9 through SEEK_END and a negative length", setlk(fd, F_SETLK, F_WRLCK, SEEK_END, 0, -5));
    printf("after the merges:\n");
    in_child(probe_ranges);

    /* Any close of the file by the owner releases all of its locks of it. */
    int other = open(PATH, O_RDONLY);
    SHOW("close of another descriptor of the file", close(other));
    printf("after it:\n");
    in_child(probe_ranges);
    close(fd);
}

static int waited_fd;

static void wait_for_lock(void)
{
    int fd = open(PATH, O_RDWR);
    SHOW("  the child: F_SETLK of byte 0", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
    write(waited_fd, "w", 1);
    SHOW("  the child: F_SETLKW of byte 0 (waits)", setlk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 0, 1));
    getlk("  the child: who has byte 0 now", fd, F_GETLK, F_WRLCK, 0, 1);
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* A child that holds byte 0 for 1.5 s (from when this returns). */
static pid_t holding_byte_0(const int p[2])
{
    pid_t pid = fork();
    if (pid == 0) {
        int cfd = open(PATH, O_RDWR);
        setlk(cfd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1);
        write(p[1], "w", 1);
        ms(1500);
        _exit(0);
    }
    char b;
    read(p[0], &b, 1);
    return pid;
}

static void waiting(void)
{
    int fd = open(PATH, O_RDWR);
    SHOW("write-lock byte 0", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
    int p[2];
    pipe(p);
    waited_fd = p[1];
    pid_t pid = fork();
    if (pid == 0) {
        wait_for_lock();
        _exit(0);
    }
    char b;
    read(p[0], &b, 1);
    ms(50);
    printf("unlock byte 0\n");
    setlk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 1);
    int st;
    waitpid(pid, &st, 0);

    /* A lock the holder had at its end is gone. */
    getlk("after the child's end, byte 0", fd, F_GETLK, F_WRLCK, 0, 1);

    /* EDEADLK: the parent holds byte 0 and waits for byte 1, which the child holds while it waits for byte 0. */
    SHOW("write-lock byte 0", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
    pid = fork();
    if (pid == 0) {
        int cfd = open(PATH, O_RDWR);
        setlk(cfd, F_SETLK, F_WRLCK, SEEK_SET, 1, 1);
        write(p[1], "w", 1);
        SHOW("  the child: F_SETLKW of byte 0 (waits, then gets it)", setlk(cfd, F_SETLKW, F_WRLCK, SEEK_SET, 0, 1));
        _exit(0);
    }
    read(p[0], &b, 1);
    ms(50);
    SHOW("F_SETLKW of the child's byte 1", setlk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 1, 1));
    setlk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 1);
    waitpid(pid, &st, 0);

    /* A signal ends the wait: EINTR without SA_RESTART; with it, the wait goes on. */
    pid = holding_byte_0(p);
    struct sigaction sa = { .sa_handler = on_alarm };
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    SHOW("F_SETLKW interrupted by SIGALRM (no SA_RESTART)", setlk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 0, 1));
    waitpid(pid, &st, 0);
    pid = holding_byte_0(p);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    SHOW("F_SETLKW through SIGALRM with SA_RESTART (gets it at the holder's end)",
         setlk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 0, 1));
    waitpid(pid, &st, 0);
    setlk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
    close(p[0]);
    close(p[1]);
    close(fd);
}

static int ofd_fd;

static void ofd_child(void)
{
    /* The description is shared: its lock is this child's too. */
    SHOW("  the child: F_OFD_SETLK on the shared description", setlk(ofd_fd, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 10));
    int own = open(PATH, O_RDWR);
    SHOW("  the child: F_OFD_SETLK on its own description", setlk(own, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 10));
    getlk("  the child: F_OFD_GETLK", own, F_OFD_GETLK, F_WRLCK, 0, 10);
    getlk("  the child: F_GETLK", own, F_GETLK, F_RDLCK, 5, 1);
    SHOW("  the child: POSIX lock of it", setlk(own, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
    close(own);
}

static void ofd_locks(void)
{
    ofd_fd = open(PATH, O_RDWR);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10, .l_pid = 1 };
    SHOW("F_OFD_SETLK with l_pid 1", fcntl(ofd_fd, F_OFD_SETLK, &fl));
    SHOW("F_OFD_SETLK of 0..9", setlk(ofd_fd, F_OFD_SETLK, F_WRLCK, SEEK_SET, 0, 10));
    int other = open(PATH, O_RDWR);
    SHOW("the same process's POSIX lock conflicts with it", setlk(other, F_SETLK, F_WRLCK, SEEK_SET, 5, 1));
    SHOW("an OFD lock through another description too", setlk(other, F_OFD_SETLK, F_RDLCK, SEEK_SET, 5, 1));
    getlk("F_GETLK through the other", other, F_GETLK, F_RDLCK, 0, 0);
    in_child(ofd_child);
    int copy = dup(ofd_fd);
    close(ofd_fd);
    SHOW("after closing one of two descriptors, still locked", setlk(other, F_OFD_SETLK, F_RDLCK, SEEK_SET, 5, 1));
    close(copy);
    SHOW("after the last, free", setlk(other, F_OFD_SETLK, F_RDLCK, SEEK_SET, 5, 1));
    close(other);
}

static void flock_child(void)
{
    int fd = open(PATH, O_RDONLY);
    SHOW("  the child: LOCK_EX | LOCK_NB on its own description", flock(fd, LOCK_EX | LOCK_NB));
    SHOW("  the child: LOCK_SH | LOCK_NB", flock(fd, LOCK_SH | LOCK_NB));
    close(fd);
}

static void flocks(void)
{
    int a = open(PATH, O_RDONLY), b = open(PATH, O_WRONLY);
    SHOW("LOCK_EX (a read-only descriptor is enough)", flock(a, LOCK_EX));
    SHOW("LOCK_EX again", flock(a, LOCK_EX));
    SHOW("another description: LOCK_EX | LOCK_NB", flock(b, LOCK_EX | LOCK_NB));
    SHOW("another description: LOCK_SH | LOCK_NB", flock(b, LOCK_SH | LOCK_NB));
    SHOW("POSIX locks do not see it", setlk(b, F_SETLK, F_WRLCK, SEEK_SET, 0, 0));
    setlk(b, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
    int d = dup(a);
    SHOW("a dup shares it: LOCK_EX | LOCK_NB", flock(d, LOCK_EX | LOCK_NB));
    in_child(flock_child);
    SHOW("made shared", flock(a, LOCK_SH));
    in_child(flock_child);
    SHOW("LOCK_UN", flock(a, LOCK_UN));
    SHOW("LOCK_UN again", flock(a, LOCK_UN));
    SHOW("now another description: LOCK_EX | LOCK_NB", flock(b, LOCK_EX | LOCK_NB));
    SHOW("LOCK_SH | LOCK_EX", flock(a, LOCK_SH | LOCK_EX));
    SHOW("0", flock(a, 0));
    SHOW("LOCK_NB alone", flock(a, LOCK_NB));
    SHOW("LOCK_MAND (32)", flock(a, 32));
    SHOW("a closed descriptor", flock(60, LOCK_EX));
    SHOW("a closed descriptor, bad operation", flock(60, 99));
    int path = open(PATH, O_PATH);
    SHOW("an O_PATH descriptor", flock(path, LOCK_SH));
    close(path);
    close(b);
    SHOW("its description's last close released it", flock(a, LOCK_EX | LOCK_NB));
    close(a);
    close(d);
    /* flock of a pipe's end works too. */
    int p[2];
    pipe(p);
    SHOW("flock of a pipe", flock(p[0], LOCK_EX | LOCK_NB));
    SHOW("POSIX lock of a pipe", setlk(p[1], F_SETLK, F_WRLCK, SEEK_SET, 0, 0));
    close(p[0]);
    close(p[1]);
}

static void errors(void)
{
    int rw = open(PATH, O_RDWR), ro = open(PATH, O_RDONLY), wo = open(PATH, O_WRONLY);
    SHOW("whence 3", setlk(rw, F_SETLK, F_WRLCK, 3, 0, 1));
    SHOW("start -1", setlk(rw, F_SETLK, F_WRLCK, SEEK_SET, -1, 1));
    SHOW("SEEK_CUR -1 at 0", setlk(rw, F_SETLK, F_WRLCK, SEEK_CUR, -1, 1));
    SHOW("length reaching past the largest offset", setlk(rw, F_SETLK, F_WRLCK, SEEK_SET, 1L << 62, 1L << 62));
    SHOW("start past the largest offset through SEEK_END", setlk(rw, F_SETLK, F_WRLCK, SEEK_END, 0x7fffffffffffffffL, 1));
    SHOW("negative length before 0", setlk(rw, F_SETLK, F_WRLCK, SEEK_SET, 2, -3));
    SHOW("type 5", setlk(rw, F_SETLK, 5, SEEK_SET, 0, 1));
    SHOW("type 5 on a read-only descriptor", setlk(ro, F_SETLK, 5, SEEK_SET, 0, 1));
    SHOW("a read lock on a write-only descriptor", setlk(wo, F_SETLK, F_RDLCK, SEEK_SET, 0, 1));
    SHOW("a write lock on a read-only descriptor", setlk(ro, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
    SHOW("unlock on a read-only descriptor", setlk(ro, F_SETLK, F_UNLCK, SEEK_SET, 0, 1));
    SHOW("F_GETLK of F_UNLCK", setlk(rw, F_GETLK, F_UNLCK, SEEK_SET, 0, 1));
    SHOW("F_GETLK of a bad whence", setlk(rw, F_GETLK, F_RDLCK, 7, 0, 1));
    SHOW("F_GETLK on a write-only descriptor", setlk(wo, F_GETLK, F_RDLCK, SEEK_SET, 0, 1));
    SHOW("F_SETLK with a bad pointer", fcntl(rw, F_SETLK, (void *)8));
    SHOW("F_GETLK with a bad pointer", fcntl(rw, F_GETLK, (void *)8));
    SHOW("F_SETLK on a closed descriptor", setlk(60, F_SETLK, F_WRLCK, SEEK_SET, 0, 1));
    int path = open(PATH, O_PATH);
    SHOW("F_SETLK on an O_PATH descriptor", setlk(path, F_SETLK, F_RDLCK, SEEK_SET, 0, 1));
    SHOW("F_OFD_GETLK with l_pid 1", ({
        struct flock fl = { .l_type = F_RDLCK, .l_pid = 1 };
        fcntl(rw, F_OFD_GETLK, &fl);
    }));
    close(path);
    close(rw);
    close(ro);
    close(wo);
}

/* A process that sets locks without end: it may run out (ENOLCK, its
 * share), and another process can still lock. */
static void hostile(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(PATH, O_RDWR);
        long n = 0;
        while (n < 5000 && setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 2 * n, 1) == 0)
            n++;
        int e = n < 5000 ? errno : 0;
        printf("the hostile child set more than 50 locks: %d ~%ld %s\n", n > 50, n, e ? errname(e) : "");
        char b;
        read(0, &b, 0);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    int fd = open(PATH, O_RDWR);
    SHOW("after it ended, a lock", setlk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0));
    close(fd);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    parent = getpid();
    posix_locks();
    waiting();
    ofd_locks();
    flocks();
    errors();
    hostile();
    unlink(PATH);
    return 0;
}
