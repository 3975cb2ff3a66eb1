/* execve: a new program in the same process (pid, descriptors without
 * close-on-exec), argv and envp, errors, #! scripts, posix_spawn
 * (CLONE_VM | CLONE_VFORK). Run without arguments; it runs itself. */
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

extern char **environ;

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static int status_of(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "child")) {
        /* The program execve started: what it was given. */
        printf("child: argc %d argv[2] %s env %s\n", argc, argc > 2 ? argv[2] : "-", getenv("LXTEST") ?
               getenv("LXTEST") : "(none)");
        printf("child: same pid as before exec: %d\n", argc > 3 && atoi(argv[3]) == getpid());
        printf("child: descriptor 5 open: %d, descriptor 6 open: %d\n", fcntl(5, F_GETFD) >= 0,
               fcntl(6, F_GETFD) >= 0);
        return 12;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char mypid[16];
        snprintf(mypid, sizeof(mypid), "%d", getpid());
        dup2(1, 5);
        fcntl(dup2(1, 6), F_SETFD, FD_CLOEXEC);
        char *args[] = { "exec", "child", "second", mypid, NULL };
        char *env[] = { "LXTEST=yes", NULL };
        execve("/bin/exec", args, env);
        printf("execve failed: %s\n", errname(errno));
        _exit(99);
    }
    printf("exec'd child's status: %d\n", status_of(pid));

    char *none[] = { "x", NULL };
    SHOW("execve of nothing", execve("/bin/no-such-program", none, environ));
    SHOW("execve of a directory", execve("/bin", none, environ));
    SHOW("execve of a file without x", execve("/etc/lxrun", none, environ));
    SHOW("execve of an empty path", execve("", none, environ));
    SHOW("execve of a bad path pointer", execve(hidden(8), none, environ));
    SHOW("execve of a bad argv", execve("/bin/hello", hidden(8), environ));
    SHOW("execve of a data file", execve("/data/notelf", none, environ));
    char *badarg[] = { "x", hidden(8), NULL };
    SHOW("execve with a bad argv string", execve("/bin/hello", badarg, environ));
    SHOW("execve with a bad envp", execve("/bin/hello", none, hidden(16)));
    SHOW("execve with a bad envp string", execve("/bin/hello", none, badarg));
    SHOW("execve of nothing with a bad argv (the strings first)", execve("/bin/nothing", hidden(8), environ));
    SHOW("execve through a file", execve("/bin/hello/x", none, environ));

    /* A #! script runs its interpreter with the script's path. */
    pid = fork();
    if (pid == 0) {
        char *args[] = { "/data/script.sh", "one", NULL };
        execve("/data/script.sh", args, environ);
        printf("script failed: %s\n", errname(errno));
        _exit(99);
    }
    printf("script's status: %d\n", status_of(pid));

    /* posix_spawn: clone with CLONE_VM | CLONE_VFORK, then execve. */
    char *sargs[] = { "hello", NULL };
    int r = posix_spawn(&pid, "/bin/hello", NULL, NULL, sargs, environ);
    printf("posix_spawn: %d, status %d\n", r, r ? -1 : status_of(pid));
    r = posix_spawn(&pid, "/bin/no-such-program", NULL, NULL, sargs, environ);
    printf("posix_spawn of nothing: %s\n", errname(r));
    return 0;
}
