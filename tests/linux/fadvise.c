/*
 * fadvise64 (posix_fadvise) on each kind of descriptor: every advice,
 * a negative length, an unknown advice, a pipe (ESPIPE), an O_PATH or
 * closed descriptor (EBADF). Linux's answers: EBADF, then ESPIPE for a
 * FIFO, then EINVAL for a negative length or an unknown advice, else 0.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static void advise(const char *what, int fd)
{
    char line[64];
    for (int advice = -1; advice <= 6; advice++) {
        snprintf(line, sizeof(line), "%s: advice %d", what, advice);
        SHOW(line, syscall(SYS_fadvise64, fd, 0L, 4096L, advice));
    }
    snprintf(line, sizeof(line), "%s: length -1", what);
    SHOW(line, syscall(SYS_fadvise64, fd, 0L, -1L, 0));
    snprintf(line, sizeof(line), "%s: offset -1, length 0", what);
    SHOW(line, syscall(SYS_fadvise64, fd, -1L, 0L, 4));
    snprintf(line, sizeof(line), "%s: past the end", what);
    SHOW(line, syscall(SYS_fadvise64, fd, 1L << 40, 1L << 40, 3));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int tmp = open("/tmp/fadvise.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(tmp, "some bytes\n", 11);
    int p[2], sv[2];
    pipe(p);
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    struct { const char *what; int fd; } all[] = {
        { "a file in /tmp", tmp },
        { "a file of the root", open("/etc/hello.txt", O_RDONLY) },
        { "a directory", open("/tmp", O_RDONLY | O_DIRECTORY) },
        { "a write-only file", open("/tmp/fadvise.txt", O_WRONLY) },
        { "a pipe's read end", p[0] },
        { "a pipe's write end", p[1] },
        { "a socket", sv[0] },
        { "an eventfd", eventfd(0, 0) },
        { "an epoll", epoll_create1(0) },
        { "/dev/null", open("/dev/null", O_RDWR) },
        { "an O_PATH file", open("/tmp/fadvise.txt", O_PATH) },
        { "a closed descriptor", 60 },
        { "descriptor -1", -1 },
    };
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        advise(all[i].what, all[i].fd);
    /* glibc's posix_fadvise returns the error number itself. */
    printf("posix_fadvise of a pipe: %d, of a file: %d\n", posix_fadvise(p[0], 0, 0, POSIX_FADV_SEQUENTIAL),
           posix_fadvise(tmp, 0, 0, POSIX_FADV_SEQUENTIAL));
    unlink("/tmp/fadvise.txt");
    return 0;
}
