/* close_range: closing a range of descriptors, or marking them
 * close-on-exec (CLOSE_RANGE_CLOEXEC), CLOSE_RANGE_UNSHARE in a process
 * of one thread, the errors; what an exec'd program still has. Run
 * without arguments; it runs itself. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4

static void show_fds(const char *when)
{
    printf("%s:", when);
    for (int fd = 0; fd < 12; fd++) {
        int fl = fcntl(fd, F_GETFD);
        printf(" %s", fl < 0 ? "-" : fl ? "c" : "o");
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) {
        show_fds("after exec");
        return 0;
    }
    for (int i = 3; i < 12; i++)
        open("/dev/null", O_RDONLY);
    show_fds("opened 3-11");
    SHOW("close_range(5, 7, 0)", syscall(SYS_close_range, 5, 7, 0));
    show_fds("closed 5-7");
    SHOW("close_range(9, ~0, CLOEXEC)", syscall(SYS_close_range, 9, ~0u, CLOSE_RANGE_CLOEXEC));
    show_fds("9 on close-on-exec");
    SHOW("close_range(4, 3, 0)", syscall(SYS_close_range, 4, 3, 0));
    SHOW("close_range with flag 1", syscall(SYS_close_range, 3, 3, 1));
    SHOW("close_range with flag 8", syscall(SYS_close_range, 3, 3, 8));
    SHOW("close_range with flag 1 << 31", syscall(SYS_close_range, 3, 3, 1u << 31));
    SHOW("close_range(100, 200, 0): nothing open there", syscall(SYS_close_range, 100, 200, 0));
    SHOW("close_range(8, 8, 0): one", syscall(SYS_close_range, 8, 8, 0));
    SHOW("close_range(6, 6, 0): already closed", syscall(SYS_close_range, 6, 6, 0));
    SHOW("close_range(1 << 31, ~0, 0)", syscall(SYS_close_range, 1u << 31, ~0u, 0));
    show_fds("now");
    pid_t pid = fork();
    if (pid == 0) {
        SHOW("child: close_range(3, ~0, CLOEXEC | UNSHARE)",
             syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE));
        show_fds("child");
        dup2(1, 10);                            /* a new one without close-on-exec */
        char *args[] = { "closerange", "child", NULL };
        execve("/bin/closerange", args, NULL);
        _exit(99);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child's status: %d\n", WEXITSTATUS(st));
    show_fds("the parent's are its own");
    SHOW("close_range(3, ~0, UNSHARE)", syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_UNSHARE));
    show_fds("all but stdio closed");
    SHOW("stdio still works", write(1, "", 0));
    return 0;
}
