/*
 * vfork shares the parent's memory until the child execs or ends, as
 * Linux's does: what the child writes the parent sees; the parent waits
 * meanwhile; the child is its own process (pid, descriptors, signal mask);
 * posix_spawn learns an exec error through that memory (glibc's does).
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;
static volatile int shared_word;

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int stack_word = 1;
    pid_t parent = getpid();
    pid_t pid = vfork();
    if (pid == 0) {
        shared_word = 42;                       /* (allowed of a vfork child: it only writes memory) */
        stack_word = 2;
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGUSR1);
        sigprocmask(SIG_BLOCK, &s, NULL);
        close(2);
        _exit(getpid() != parent ? 7 : 8);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("the child's writes: %d %d\n", shared_word, stack_word);
    printf("the child was its own process: status %d\n", WEXITSTATUS(status));
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("the child's mask is its own: %d\n", sigismember(&now, SIGUSR1));
    printf("the child's close is its own: %d\n", write(2, "", 0) == 0);

    /* the parent goes on only when the child has called execve */
    pid = vfork();
    if (pid == 0) {
        shared_word = 99;
        execl("/bin/hello", "hello", (char *)NULL);
        _exit(127);
    }
    int seen = shared_word;                     /* (printed after the wait: hello may print meanwhile) */
    waitpid(pid, &status, 0);
    printf("after exec: %d\n", seen);
    printf("hello's status: %d\n", WEXITSTATUS(status));

    /* a failed exec is seen through the memory */
    pid = vfork();
    if (pid == 0) {
        execl("/bin/no-such-program", "x", (char *)NULL);
        shared_word = -errno;
        _exit(127);
    }
    waitpid(pid, &status, 0);
    printf("a failed exec's errno, seen by the parent: %s, status %d\n", errname(-shared_word), WEXITSTATUS(status));
    char *args[] = { "hello", NULL };
    int r = posix_spawn(&pid, "/bin/no-such-program", NULL, NULL, args, environ);
    printf("posix_spawn of nothing: %s\n", errname(r));
    r = posix_spawn(&pid, "/bin/hello", NULL, NULL, args, environ);
    waitpid(pid, &status, 0);
    printf("posix_spawn of hello: %d, status %d\n", r, WEXITSTATUS(status));
    int many = 0;
    for (int i = 0; i < 100; i++) {             /* each child gives its control page back */
        pid = vfork();
        if (pid == 0)
            _exit(3);
        if (waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 3)
            many++;
    }
    printf("100 vforks: %d\n", many);
    return 0;
}
