/* fcntl: F_DUPFD and F_DUPFD_CLOEXEC (the lowest free from a start),
 * F_GETFD and F_SETFD, F_GETFL and F_SETFL (O_NONBLOCK and O_APPEND
 * change, the rest stays), shared by dup'ed descriptors but not by
 * another open, pipes, O_PATH descriptors, and the errors. */
#define _GNU_SOURCE
#include <stdlib.h>
#include "lxtest.h"

int main(void)
{
    int fd = open("/data/a.txt", O_RDONLY);
    printf("open: %d\n", fd);
    SHOW("F_DUPFD from 0", fcntl(fd, F_DUPFD, 0));
    SHOW("F_DUPFD from 10", fcntl(fd, F_DUPFD, 10));
    SHOW("F_DUPFD from 10 again", fcntl(fd, F_DUPFD, 10));
    SHOW("F_DUPFD_CLOEXEC from 5", fcntl(fd, F_DUPFD_CLOEXEC, 5));
    SHOW("  F_GETFD of it", fcntl(5, F_GETFD));
    SHOW("  F_GETFD of 10", fcntl(10, F_GETFD));
    SHOW("F_DUPFD from -1", fcntl(fd, F_DUPFD, -1));
    SHOW("F_DUPFD from 1 << 20", fcntl(fd, F_DUPFD, 1 << 20));
    SHOW("F_DUPFD of a closed descriptor", fcntl(30, F_DUPFD, 0));

    /* Close-on-exec: only its bit is kept. */
    SHOW("F_SETFD FD_CLOEXEC", fcntl(10, F_SETFD, FD_CLOEXEC));
    SHOW("  F_GETFD", fcntl(10, F_GETFD));
    SHOW("F_SETFD 0", fcntl(10, F_SETFD, 0));
    SHOW("  F_GETFD", fcntl(10, F_GETFD));
    SHOW("F_SETFD 3", fcntl(10, F_SETFD, 3));
    SHOW("  F_GETFD", fcntl(10, F_GETFD));
    SHOW("F_SETFD 2", fcntl(10, F_SETFD, 2));
    SHOW("  F_GETFD", fcntl(10, F_GETFD));
    SHOW("the original's is its own", fcntl(fd, F_GETFD));
    SHOW("dup2 onto a close-on-exec one clears it", (fcntl(5, F_SETFD, 1), dup2(fd, 5)));
    SHOW("  F_GETFD", fcntl(5, F_GETFD));

    /* Status flags: shared by the duplicates, not by another open. */
    int w = open("/tmp/fcntl", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int wdup = dup(w), other = open("/tmp/fcntl", O_RDWR);
    printf("F_GETFL: %o\n", fcntl(w, F_GETFL));
    SHOW("F_SETFL O_APPEND", fcntl(w, F_SETFL, O_APPEND));
    printf("  F_GETFL %o, of the dup %o, of another open %o\n", fcntl(w, F_GETFL), fcntl(wdup, F_GETFL),
           fcntl(other, F_GETFL));
    write(w, "abc", 3);
    lseek(w, 0, SEEK_SET);
    write(wdup, "d", 1);
    printf("  the dup appends: position %ld\n", (long)lseek(wdup, 0, SEEK_CUR));
    pwrite(other, "X", 1, 0);
    char buf[16] = { 0 };
    pread(other, buf, sizeof(buf) - 1, 0);
    printf("  another open writes in place: %s\n", buf);
    SHOW("F_SETFL with O_WRONLY | O_CREAT | O_TRUNC | O_EXCL (ignored)",
         fcntl(w, F_SETFL, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_APPEND));
    printf("  F_GETFL %o\n", fcntl(w, F_GETFL));
    SHOW("F_SETFL 0 (off again)", fcntl(w, F_SETFL, 0));
    printf("  F_GETFL %o\n", fcntl(w, F_GETFL));
    SHOW("F_SETFL O_NONBLOCK", fcntl(w, F_SETFL, O_NONBLOCK));
    printf("  F_GETFL %o, of the dup %o\n", fcntl(w, F_GETFL), fcntl(wdup, F_GETFL));
    SHOW("F_SETFL O_NONBLOCK | O_APPEND", fcntl(w, F_SETFL, O_NONBLOCK | O_APPEND));
    printf("  F_GETFL %o\n", fcntl(w, F_GETFL));
    SHOW("F_SETFL O_CLOEXEC (not a status flag)", fcntl(w, F_SETFL, O_CLOEXEC));
    printf("  F_GETFL %o F_GETFD %d\n", fcntl(w, F_GETFL), fcntl(w, F_GETFD));
    close(w);
    close(wdup);
    close(other);
    unlink("/tmp/fcntl");

    /* Pipes. */
    int p[2];
    pipe(p);
    printf("pipe ends' F_GETFL: %o %o\n", fcntl(p[0], F_GETFL), fcntl(p[1], F_GETFL));
    SHOW("F_SETFL O_NONBLOCK on the read end", fcntl(p[0], F_SETFL, O_NONBLOCK));
    SHOW("  read of the empty pipe", read(p[0], buf, 1));
    write(p[1], "z", 1);
    SHOW("  read with a byte there", read(p[0], buf, 1));
    SHOW("F_SETFL 0", fcntl(p[0], F_SETFL, 0));
    printf("  F_GETFL %o\n", fcntl(p[0], F_GETFL));
    SHOW("F_GETPIPE_SZ", fcntl(p[0], F_GETPIPE_SZ));
    SHOW("F_GETPIPE_SZ of a file", fcntl(fd, F_GETPIPE_SZ));
    int pipe2fd[2];
    pipe2(pipe2fd, O_NONBLOCK | O_CLOEXEC);
    printf("pipe2 O_NONBLOCK | O_CLOEXEC: F_GETFL %o F_GETFD %d\n", fcntl(pipe2fd[0], F_GETFL), fcntl(pipe2fd[0], F_GETFD));

    /* O_PATH descriptors: only the descriptor calls. */
    int op = open("/data/a.txt", O_PATH);
    printf("O_PATH: F_GETFL %o\n", fcntl(op, F_GETFL));
    SHOW("  F_GETFD", fcntl(op, F_GETFD));
    SHOW("  F_SETFD", fcntl(op, F_SETFD, FD_CLOEXEC));
    SHOW("  F_DUPFD", fcntl(op, F_DUPFD, 20) == 20);
    SHOW("  F_SETFL", fcntl(op, F_SETFL, O_NONBLOCK));
    SHOW("  F_GETPIPE_SZ", fcntl(op, F_GETPIPE_SZ));

    /* Errors. */
    SHOW("fcntl of a bad descriptor", fcntl(99, F_GETFL));
    SHOW("fcntl of descriptor -1", fcntl(-1, F_GETFD));
    SHOW("F_SETFD of a bad descriptor", fcntl(99, F_SETFD, 0));
    SHOW("fcntl with command 9999", fcntl(fd, 9999));
    SHOW("fcntl with command -1", fcntl(fd, -1));
    return 0;
}
