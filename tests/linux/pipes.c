/* Pipes between processes: data in order, end of file when the writers
 * close, EPIPE when the readers close, a write bigger than the pipe,
 * O_NONBLOCK, fstat, FIONREAD, lseek, dup2 redirection to a child. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define BIG (200 * 1024)

/* An address the compiler cannot see through. */
static void *hidden(unsigned long a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int p[2];
    SHOW("pipe", pipe(p));
    printf("two new descriptors: %d %d\n", p[0], p[1]);
    char buf[256];
    SHOW("write 5", write(p[1], "hello", 5));
    int avail = -1;
    ioctl(p[0], FIONREAD, &avail);
    printf("FIONREAD: %d\n", avail);
    SHOW("read up to 256", read(p[0], buf, sizeof(buf)));
    struct stat st;
    fstat(p[0], &st);
    printf("fstat: fifo %d mode %o size %ld\n", S_ISFIFO(st.st_mode), st.st_mode & 0777, (long)st.st_size);
    SHOW("lseek on a pipe", lseek(p[0], 0, SEEK_SET));
    SHOW("read the write end", read(p[1], buf, 1));
    SHOW("write the read end", write(p[0], "x", 1));
    SHOW("pread on a pipe", pread(p[0], buf, 1, 0));
    printf("F_GETFL: read end %o, write end %o\n", fcntl(p[0], F_GETFL), fcntl(p[1], F_GETFL));

    /* O_NONBLOCK: EAGAIN on empty and on full. */
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    SHOW("nonblocking read of an empty pipe", read(p[0], buf, 1));
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    long filled = 0, w;
    static char big[BIG];
    while ((w = write(p[1], big, 4096)) > 0)
        filled += w;
    printf("a pipe holds %ld bytes, then: %s\n", filled, errname(errno));
    SHOW("a nonblocking write of 8 bytes into a full pipe", write(p[1], big, 8));
    long drained = 0, r;
    while ((r = read(p[0], big, sizeof(big))) > 0)
        drained += r;
    printf("drained %ld\n", drained);
    fcntl(p[0], F_SETFL, 0);
    fcntl(p[1], F_SETFL, 0);

    /* A child writes in pieces; the parent reads until end of file. */
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        for (int i = 0; i < 100; i++) {
            char line[32];
            int n = snprintf(line, sizeof(line), "line %d\n", i);
            write(p[1], line, n);
        }
        _exit(0);
    }
    close(p[1]);
    long total = 0, lines = 0;
    while ((r = read(p[0], buf, sizeof(buf))) > 0) {
        for (long i = 0; i < r; i++)
            lines += buf[i] == '\n';
        total += r;
    }
    printf("read %ld bytes, %ld lines, then %ld (end of file)\n", total, lines, r);
    waitpid(pid, NULL, 0);
    close(p[0]);

    /* One write much bigger than the pipe: it returns all of it. */
    pipe(p);
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        for (int i = 0; i < BIG; i++)
            big[i] = (char)(i * 7);
        long n = write(p[1], big, BIG);
        _exit(n == BIG ? 0 : 1);
    }
    close(p[1]);
    long got = 0, bad = 0;
    while ((r = read(p[0], buf, sizeof(buf))) > 0) {
        for (long i = 0; i < r; i++)
            bad += buf[i] != (char)((got + i) * 7);
        got += r;
    }
    int status;
    waitpid(pid, &status, 0);
    printf("big write: %ld bytes read, %ld wrong, writer's status %d\n", got, bad, WEXITSTATUS(status));
    close(p[0]);

    /* No reader left: EPIPE (and SIGPIPE, which kills a program that does not ignore it). */
    pipe(p);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    SHOW("write with no reader", write(p[1], "x", 1));
    close(p[1]);

    /* A reader blocks until a writer comes; closing every writer wakes it. */
    pipe(p);
    pid = fork();
    if (pid == 0) {
        close(p[1]);
        long n = read(p[0], buf, sizeof(buf));
        _exit((int)n);
    }
    close(p[0]);
    write(p[1], "abc", 3);
    waitpid(pid, &status, 0);
    printf("the blocked reader got %d bytes\n", WEXITSTATUS(status));
    pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    close(p[1]);

    /* dup2 redirection: a child's standard output into a pipe, read back. */
    pipe(p);
    pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        char *args[] = { "hello", NULL };
        execv("/bin/hello", args);
        _exit(127);
    }
    close(p[1]);
    total = 0;
    while ((r = read(p[0], buf + total, sizeof(buf) - 1 - total)) > 0)
        total += r;
    buf[total] = 0;
    waitpid(pid, &status, 0);
    printf("hello through a pipe: \"%.12s\" (%ld bytes), status %d\n", buf, total, WEXITSTATUS(status));
    close(p[0]);
    /* A writer that crashes closes its end: the reader sees end of file. */
    pipe(p);
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        write(p[1], "partial", 7);
        *(volatile int *)hidden(24) = 1;
        _exit(0);
    }
    close(p[1]);
    total = 0;
    while ((r = read(p[0], buf, sizeof(buf))) > 0)
        total += r;
    waitpid(pid, &status, 0);
    printf("after the writer crashed: %ld bytes, then %ld; it died of signal %d\n", total, r,
           WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    close(p[0]);
    SHOW("pipe2 with bad flags", pipe2(p, 1));
    SHOW("pipe2 with O_CLOEXEC", pipe2(p, O_CLOEXEC));
    printf("close-on-exec set: %d\n", fcntl(p[0], F_GETFD) == FD_CLOEXEC && fcntl(p[1], F_GETFD) == FD_CLOEXEC);
    SHOW("pipe to a bad pointer", pipe(hidden(8)));

    /* A pipe's size: F_GETPIPE_SZ and F_SETPIPE_SZ */
    int q[2];
    pipe2(q, O_NONBLOCK);
    SHOW("F_GETPIPE_SZ", fcntl(q[0], F_GETPIPE_SZ));
    SHOW("F_SETPIPE_SZ 100", fcntl(q[1], F_SETPIPE_SZ, 100));
    SHOW("F_GETPIPE_SZ of the other end", fcntl(q[0], F_GETPIPE_SZ));
    static char blob[8192];
    memset(blob, 'z', sizeof(blob));
    SHOW("write 4096 into it", write(q[1], blob, 4096));
    SHOW("write 1 more", write(q[1], blob, 1));
    SHOW("F_SETPIPE_SZ 5000", fcntl(q[1], F_SETPIPE_SZ, 5000));
    SHOW("write 4096 more", write(q[1], blob, 4096));
    SHOW("F_SETPIPE_SZ 4096 while it holds 8192", fcntl(q[1], F_SETPIPE_SZ, 4096));
    SHOW("read 8192 back", read(q[0], blob, sizeof(blob)));
    printf("all z: %d\n", blob[0] == 'z' && blob[8191] == 'z');
    SHOW("F_SETPIPE_SZ 0", fcntl(q[1], F_SETPIPE_SZ, 0));
    SHOW("F_SETPIPE_SZ 70000", fcntl(q[1], F_SETPIPE_SZ, 70000));
    SHOW("F_SETPIPE_SZ 1 MiB", fcntl(q[1], F_SETPIPE_SZ, 1 << 20));
    SHOW("F_SETPIPE_SZ -1", fcntl(q[1], F_SETPIPE_SZ, -1));
    SHOW("F_SETPIPE_SZ 2^31 + 1", syscall(SYS_fcntl, q[1], F_SETPIPE_SZ, (1ul << 31) + 1));
    SHOW("F_GETPIPE_SZ after the errors", fcntl(q[0], F_GETPIPE_SZ));
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    SHOW("F_GETPIPE_SZ of a socket", fcntl(sv[0], F_GETPIPE_SZ));
    SHOW("F_SETPIPE_SZ of a file", fcntl(0 + open("/etc/hello.txt", O_RDONLY), F_SETPIPE_SZ, 4096));

    /* writev is one write: its vectors together, PIPE_BUF bytes or fewer
     * never split, and a blocking one returns when all of it went. */
    int a[2];
    pipe2(a, O_NONBLOCK);
    SHOW("fill all but 3000 bytes", write(a[1], big, 65536 - 3000));
    struct iovec two[2] = { { blob, 2048 }, { blob + 2048, 2048 } };
    SHOW("nonblocking writev of 2 x 2048 (room 3000)", writev(a[1], two, 2));
    struct iovec small[2] = { { blob, 1000 }, { blob + 1000, 1000 } };
    SHOW("nonblocking writev of 2 x 1000", writev(a[1], small, 2));
    fcntl(a[1], F_SETFL, 0);
    pid_t drainer = fork();
    if (drainer == 0) {
        usleep(100000);
        long got = 0, n;
        fcntl(a[0], F_SETFL, 0);
        while (got < 65536 - 3000 + 2000 + 4096 && (n = read(a[0], big, sizeof(big))) > 0)
            got += n;
        _exit(got == 65536 - 3000 + 2000 + 4096 ? 0 : 1);
    }
    SHOW("blocking writev of 2 x 2048 (room 1000) while a reader drains", writev(a[1], two, 2));
    int ws = -1;
    waitpid(drainer, &ws, 0);
    printf("the reader got every byte: %d\n", WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    return 0;
}
