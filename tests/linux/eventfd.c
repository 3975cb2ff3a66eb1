/*
 * eventfd: the counter, EFD_SEMAPHORE, EFD_NONBLOCK, short buffers, the
 * overflow limit, poll readiness, a reader blocked until a child writes,
 * and fstat.
 */
#include "lxtest.h"
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void show_read(const char *what, int fd)
{
    uint64_t v = 0;
    errno = 0;
    long r = read(fd, &v, sizeof(v));
    if (r < 0)
        printf("%s: -1 %s\n", what, errname(errno));
    else
        printf("%s: %ld bytes, value %llu\n", what, r, (unsigned long long)v);
}

static int polled(int fd)
{
    struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
    poll(&p, 1, 0);
    return p.revents;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    SHOW("eventfd bad flags", eventfd(0, 0x40));
    int fd = eventfd(3, EFD_NONBLOCK);
    printf("eventfd: %d\n", fd >= 0);
    printf("poll with 3: 0x%x\n", polled(fd));
    show_read("read", fd);
    show_read("read at zero", fd);
    printf("poll at zero: 0x%x\n", polled(fd));
    uint64_t v = 5;
    SHOW("write 5", write(fd, &v, 8));
    SHOW("write 5 again", write(fd, &v, 8));
    SHOW("write 4 bytes", write(fd, &v, 4));
    char small[4];
    SHOW("read 4 bytes", read(fd, small, 4));
    v = UINT64_MAX;
    SHOW("write the all-ones value", write(fd, &v, 8));
    v = UINT64_MAX - 1 - 10;
    SHOW("write near the limit", write(fd, &v, 8));
    v = 1;
    SHOW("write past the limit", write(fd, &v, 8));
    printf("poll at the limit: 0x%x\n", polled(fd));
    show_read("read all", fd);
    SHOW("write bad address", write(fd, (void *)8, 8));
    SHOW("read bad address", read(fd, (void *)8, 8));
    SHOW("lseek", lseek(fd, 0, SEEK_SET));
    struct stat st = { 0 };
    SHOW("fstat", fstat(fd, &st));
    printf("fstat: no file type: %d\n", (st.st_mode & S_IFMT) == 0);  /* (the permission bits vary between kernels) */
    close(fd);

    int sem = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
    show_read("semaphore read", sem);
    show_read("semaphore read", sem);
    show_read("semaphore read", sem);
    close(sem);

    int blk = eventfd(0, EFD_CLOEXEC);
    pid_t pid = fork();
    if (pid == 0) {
        usleep(50000);
        uint64_t one = 7;
        write(blk, &one, 8);
        _exit(0);
    }
    show_read("blocking read woken by a child", blk);
    waitpid(pid, NULL, 0);
    close(blk);
    return 0;
}
