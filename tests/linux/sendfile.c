/* sendfile between files: with and without an offset pointer, past the
 * end, into /dev/null, a large copy, and every error (descriptors, access
 * modes, O_APPEND, the offset). Pipes and the terminal as the output are
 * left out: Petrel does not support them (EINVAL, then programs fall back
 * to read and write). */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"
#include <sys/wait.h>
#include <signal.h>
#include <sys/socket.h>

#define D "/tmp/sendfile"

static void cat(const char *what, const char *path)
{
    char buf[64] = { 0 };
    int fd = open(path, O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -errno;
    printf("%s: %ld [%s]\n", what, n, n >= 0 ? buf : errname((int)-n));
    if (fd >= 0)
        close(fd);
}

/* copy_file_range (coreutils cp uses it first): offsets given and not,
 * the copy cut at the end, within one file, and each error in Linux's order. */
static void copy_range(void)
{
    write_text(D "/cr-in", "0123456789abcdefghij");
    int in = open(D "/cr-in", O_RDONLY), out = open(D "/cr-out", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int64_t a = 5, b = 2;
    SHOW("copy_file_range with offsets", syscall(SYS_copy_file_range, in, &a, out, &b, 8, 0));
    printf("offsets now %lld %lld, positions %ld %ld\n", (long long)a, (long long)b, (long)lseek(in, 0, SEEK_CUR),
           (long)lseek(out, 0, SEEK_CUR));
    cat("the copy (a hole first)", D "/cr-out");
    SHOW("without offsets, past the end", syscall(SYS_copy_file_range, in, NULL, out, NULL, 100, 0));
    printf("positions now %ld %ld\n", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
    SHOW("at the end", syscall(SYS_copy_file_range, in, NULL, out, NULL, 100, 0));
    a = 0, b = 30;
    SHOW("within one file, apart", syscall(SYS_copy_file_range, out, &a, out, &b, 4, 0));
    a = 0, b = 2;
    SHOW("within one file, overlapping", syscall(SYS_copy_file_range, out, &a, out, &b, 4, 0));
    cat("then", D "/cr-out");
    SHOW("flags", syscall(SYS_copy_file_range, in, NULL, out, NULL, 1, 1));
    SHOW("a bad descriptor", syscall(SYS_copy_file_range, 99, NULL, out, NULL, 1, 0));
    SHOW("a bad offset pointer", syscall(SYS_copy_file_range, in, (void *)8, out, NULL, 1, 0));
    SHOW("a directory", syscall(SYS_copy_file_range, open("/tmp", O_RDONLY | O_DIRECTORY), NULL, out, NULL, 1, 0));
    int p[2];
    pipe(p);
    SHOW("into a pipe", syscall(SYS_copy_file_range, in, NULL, p[1], NULL, 1, 0));
    SHOW("into a file open for reading", syscall(SYS_copy_file_range, in, NULL, in, NULL, 1, 0));
    int app = open(D "/cr-out", O_WRONLY | O_APPEND);
    SHOW("into an O_APPEND file", syscall(SYS_copy_file_range, in, NULL, app, NULL, 1, 0));
    int shm = open("/dev/shm/cr", O_RDWR | O_CREAT, 0600);
    SHOW("into another file system", syscall(SYS_copy_file_range, in, NULL, shm, NULL, 1, 0));
    SHOW("from /proc", syscall(SYS_copy_file_range, open("/proc/self/stat", O_RDONLY), NULL, out, NULL, 10, 0));
    a = -5;
    SHOW("a negative offset", syscall(SYS_copy_file_range, in, &a, out, NULL, 1, 0));
    a = INT64_MAX;
    SHOW("an offset that wraps", syscall(SYS_copy_file_range, in, &a, out, NULL, 10, 0));
    unlink("/dev/shm/cr");
    unlink(D "/cr-in");
    unlink(D "/cr-out");
    close(app);
    close(shm);
    close(p[0]);
    close(p[1]);
    close(in);
    close(out);
}

int main(void)
{
    mkdir(D, 0755);
    int in = open(D "/in", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(in, "0123456789abcdef", 16);
    lseek(in, 0, SEEK_SET);
    int out = open(D "/out", O_RDWR | O_CREAT | O_TRUNC, 0644);

    SHOW("sendfile 4 bytes", sendfile(out, in, NULL, 4));
    SHOW("in's position moved", lseek(in, 0, SEEK_CUR));
    SHOW("out's position moved", lseek(out, 0, SEEK_CUR));
    off_t off = 10;
    SHOW("sendfile 3 at offset 10", sendfile(out, in, &off, 3));
    printf("offset now %ld, in's position %ld\n", (long)off, (long)lseek(in, 0, SEEK_CUR));
    cat("out", D "/out");
    SHOW("sendfile past the end (asks 100)", sendfile(out, in, NULL, 100));
    SHOW("sendfile at the end", sendfile(out, in, NULL, 100));
    off = 100;
    SHOW("sendfile from an offset past the end", sendfile(out, in, &off, 5));
    SHOW("sendfile 0 bytes", sendfile(out, in, NULL, 0));
    cat("out", D "/out");

    int null = open("/dev/null", O_WRONLY);
    off = 0;
    SHOW("sendfile into /dev/null", sendfile(null, in, &off, 16));
    close(null);

    /* Errors. */
    off = 0;
    SHOW("a bad input descriptor", sendfile(out, 99, NULL, 1));
    SHOW("a bad output descriptor", sendfile(99, in, NULL, 1));
    int wo = open(D "/in", O_WRONLY);
    SHOW("a write-only input", sendfile(out, wo, NULL, 1));
    int ro = open(D "/out", O_RDONLY);
    SHOW("a read-only output", sendfile(ro, in, &off, 1));
    int ap = open(D "/out", O_WRONLY | O_APPEND);
    SHOW("an O_APPEND output", sendfile(ap, in, &off, 1));
    off = -1;
    SHOW("a negative offset", sendfile(out, in, &off, 1));
    SHOW("a bad offset pointer", syscall(SYS_sendfile, out, in, (void *)8, 1));
    SHOW("a bad offset pointer and a bad descriptor", syscall(SYS_sendfile, out, 99, (void *)8, 1));
    int dir = open(D, O_RDONLY | O_DIRECTORY);
    off = 0;
    SHOW("a directory as input", sendfile(out, dir, &off, 1));
    int p[2];
    pipe(p);
    SHOW("a pipe as input with an offset", sendfile(out, p[0], &off, 1));
    close(p[0]);
    close(p[1]);
    close(dir);
    close(wo);
    close(ro);
    close(ap);

    /* A large copy, in pieces, compared. */
    int big = open(D "/big", O_RDWR | O_CREAT | O_TRUNC, 0644);
    static char buf[300 * 1024], back[300 * 1024];
    for (unsigned i = 0; i < sizeof(buf); i++)
        buf[i] = (char)(i * 31 + i / 1000);
    write(big, buf, sizeof(buf));
    lseek(big, 0, SEEK_SET);
    int copy = open(D "/copy", O_RDWR | O_CREAT | O_TRUNC, 0644);
    long total = 0, n;
    while ((n = sendfile(copy, big, NULL, 70000)) > 0)
        total += n;
    SHOW("copied", total);
    lseek(copy, 0, SEEK_SET);
    SHOW("read back", read(copy, back, sizeof(back)));
    SHOW("same bytes", !memcmp(buf, back, sizeof(buf)));
    struct stat st;
    SHOW("size", (fstat(copy, &st), (long)st.st_size));

    /* Into a pipe (read by a child, more than the pipe holds), a stream socket, the console. */
    int q[2];
    pipe(q);
    pid_t pid = fork();
    if (pid == 0) {
        close(q[1]);
        long got = 0, r;
        static char in2[300 * 1024];
        while ((r = read(q[0], in2 + got, sizeof(in2) - got)) > 0)
            got += r;
        printf("the child read %ld, same bytes %d\n", got, !memcmp(in2, buf, sizeof(buf)));
        _exit(0);
    }
    close(q[0]);
    off = 0;
    total = 0;
    while (total < (long)sizeof(buf) && (n = sendfile(q[1], big, &off, sizeof(buf) - total)) > 0)
        total += n;
    close(q[1]);
    waitpid(pid, NULL, 0);
    printf("into a pipe: %ld\n", total);
    pipe(q);
    close(q[0]);
    signal(SIGPIPE, SIG_IGN);
    off = 0;
    SHOW("into a pipe without readers", sendfile(q[1], big, &off, 10));
    close(q[1]);
    pipe(q);
    fcntl(q[1], F_SETFL, O_NONBLOCK);
    off = 0;
    SHOW("into a nonblocking pipe, more than it holds", sendfile(q[1], big, &off, sizeof(buf)));
    SHOW("into it when full", sendfile(q[1], big, &off, 10));
    close(q[0]);
    close(q[1]);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    off = 1000;
    SHOW("into a socket", sendfile(sv[0], big, &off, 5000));
    SHOW("read from its peer", read(sv[1], back, sizeof(back)));
    SHOW("same bytes", !memcmp(back, buf + 1000, 5000));
    close(sv[0]);
    close(sv[1]);
    int hello = open("/etc/hello.txt", O_RDONLY);
    SHOW("onto the console", sendfile(1, hello, NULL, 100));
    close(hello);
    close(big);
    close(copy);
    close(in);
    close(out);

    copy_range();
    unlink(D "/in");
    unlink(D "/out");
    unlink(D "/big");
    unlink(D "/copy");
    SHOW("rmdir " D, rmdir(D));
    return 0;
}
