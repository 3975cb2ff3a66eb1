/* dup, dup2, dup3 and fcntl: shared file positions, close-on-exec, the
 * lowest free descriptor, errors. */
#include <fcntl.h>
#include <unistd.h>
#include "lxtest.h"

int main(void)
{
    int fd = open("/data/b.txt", O_RDONLY);
    printf("open: %d\n", fd);
    int d = dup(fd);
    printf("dup: %d\n", d);
    char c[4] = { 0 };
    read(fd, c, 3);
    printf("read via fd: %s\n", c);
    read(d, c, 3);
    printf("read via dup (the position is shared): %s\n", c);
    SHOW("lseek via dup", lseek(d, 0, SEEK_CUR));
    SHOW("dup2 to 10", dup2(fd, 10));
    SHOW("dup2 onto itself", dup2(fd, fd));
    SHOW("dup2 of a closed one onto itself", dup2(40, 40));
    SHOW("dup3 onto itself", dup3(fd, fd, 0));
    SHOW("dup3 with bad flags", dup3(fd, 11, 1));
    SHOW("dup3 O_CLOEXEC", dup3(fd, 11, O_CLOEXEC));
    SHOW("F_GETFD of 11", fcntl(11, F_GETFD));
    SHOW("F_GETFD of 10", fcntl(10, F_GETFD));
    SHOW("F_SETFD", fcntl(10, F_SETFD, FD_CLOEXEC));
    SHOW("F_GETFD after", fcntl(10, F_GETFD));
    SHOW("F_DUPFD from 20", fcntl(fd, F_DUPFD, 20));
    SHOW("F_DUPFD_CLOEXEC from 20", fcntl(fd, F_DUPFD_CLOEXEC, 20));
    SHOW("F_GETFD of 21", fcntl(21, F_GETFD));
    SHOW("F_DUPFD from 100000", fcntl(fd, F_DUPFD, 100000));
    SHOW("F_GETFL", fcntl(fd, F_GETFL));
    SHOW("F_SETFL O_NONBLOCK", fcntl(fd, F_SETFL, O_NONBLOCK));
    SHOW("F_GETFL via dup", fcntl(d, F_GETFL));
    SHOW("F_SETFL O_APPEND|O_RDWR keeps the access mode", fcntl(fd, F_SETFL, O_APPEND | O_RDWR));
    SHOW("F_GETFL again", fcntl(fd, F_GETFL));
    SHOW("fcntl of a bad descriptor", fcntl(99, F_GETFD));
    SHOW("fcntl with a bad command", fcntl(fd, 9999));
    SHOW("dup of a bad descriptor", dup(99));
    SHOW("dup2 to a huge descriptor", dup2(fd, 1 << 20));
    SHOW("dup2 from a bad descriptor", dup2(99, 12));
    close(fd);
    read(d, c, 3);
    printf("the dup still reads after close: %s\n", c);
    close(0);
    SHOW("dup takes the lowest free: 0", dup(d));
    return 0;
}
