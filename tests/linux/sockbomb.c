/*
 * A hostile program's sockets: one process makes socket pairs and fills
 * their queues until it is refused (Petrel: its share of the sockets,
 * EMFILE; Linux: the descriptor limit, EMFILE, far later, so the count is
 * capped and marked varying); while it holds them all, another process can
 * still make a socket pair and talk through it; once they are closed the
 * first can make them again.
 */
#include "lxtest.h"
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define CAP 400

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    static int fds[CAP][2];
    static char junk[4096];
    int made = 0, err = 0;
    while (made < CAP) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds[made]) < 0) {
            err = errno;
            break;
        }
        while (write(fds[made][0], junk, sizeof(junk)) > 0 && made < 8)
            ;                                   /* the first few with full queues */
        made++;
    }
    printf("socket pairs made until refused or %d: ~%d\n", CAP, made);
    printf("refused with EMFILE or not refused: %d\n", made == CAP || err == EMFILE);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < made; i++) {       /* (the child's copies would keep them) */
            close(fds[i][0]);
            close(fds[i][1]);
        }
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
            printf("another process: socketpair %s\n", errname(errno));
            _exit(1);
        }
        char buf[8] = { 0 };
        write(sv[0], "still", 5);
        read(sv[1], buf, sizeof(buf));
        printf("another process: %s\n", buf);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("its status: %d\n", WEXITSTATUS(status));
    for (int i = 0; i < made; i++) {
        close(fds[i][0]);
        close(fds[i][1]);
    }
    int again = 0;
    for (int i = 0; i < 10 && socketpair(AF_UNIX, SOCK_DGRAM, 0, fds[i]) == 0; i++)
        again++;
    printf("after closing them, pairs made again: %d\n", again);
    return 0;
}
