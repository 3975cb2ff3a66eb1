/* execveat: a program by descriptor (AT_EMPTY_PATH, also an O_PATH one),
 * by a path relative to a directory descriptor, an absolute path that
 * ignores the descriptor, AT_SYMLINK_NOFOLLOW, the errors; `#!` scripts
 * with an interpreter argument run by execve and by execveat (their
 * path then /dev/fd/N/NAME, or ENOENT for a close-on-exec descriptor).
 * Run without arguments; it runs itself, as "execveat child ...". */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

#define AT_EMPTY_PATH 0x1000

extern char **environ;

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static long execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    return syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* Run execveat in a child; its status, or the error the call gave. */
static void run(const char *what, int dirfd, const char *path, int flags)
{
    int p[2];
    pipe(p);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = { "execveat", "child", (char *)what, NULL };
        close(p[0]);
        long r = execveat(dirfd, path, args, environ, flags);
        int e = r < 0 ? errno : 0;
        write(p[1], &e, sizeof(e));
        _exit(99);
    }
    close(p[1]);
    int e = 0, st = 0;
    long n = read(p[0], &e, sizeof(e));
    close(p[0]);
    waitpid(pid, &st, 0);
    if (n == sizeof(e))
        printf("%s: %s\n", what, errname(e));
    else
        printf("%s: ran, status %d\n", what, WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "child")) {
        char comm[32] = { 0 };
        int fd = open("/proc/self/comm", O_RDONLY);
        read(fd, comm, sizeof(comm) - 1);
        comm[strcspn(comm, "\n")] = 0;
        printf("  child (%s): argv[0] %s, comm %s\n", argc > 2 ? argv[2] : "?", argv[0], comm);
        return 3;
    }
    if (argc > 1) {                             /* run as a script's interpreter */
        printf("  interpreter: argc %d:", argc);
        for (int i = 1; i < argc; i++)
            printf(" %s", argv[i]);
        printf("\n");
        return 4;
    }
    int prog = open("/bin/execveat", O_RDONLY), bin = open("/bin", O_RDONLY | O_DIRECTORY);
    int opath = open("/bin/execveat", O_PATH), file = open("/etc/hello.txt", O_RDONLY);
    printf("descriptors: %d %d %d %d\n", prog, bin, opath, file);
    run("AT_EMPTY_PATH of a descriptor", prog, "", AT_EMPTY_PATH);
    run("AT_EMPTY_PATH of an O_PATH descriptor", opath, "", AT_EMPTY_PATH);
    run("relative to /bin", bin, "execveat", 0);
    run("absolute, with a bad descriptor", 99, "/bin/execveat", 0);
    chdir("/bin");
    run("relative to the working directory", AT_FDCWD, "execveat", 0);
    chdir("/");
    symlink("/bin/execveat", "/tmp/xlink");
    int tmp = open("/tmp", O_RDONLY | O_DIRECTORY);
    run("through a link", tmp, "xlink", 0);
    run("a link with AT_SYMLINK_NOFOLLOW", tmp, "xlink", AT_SYMLINK_NOFOLLOW);
    run("a program with AT_SYMLINK_NOFOLLOW", bin, "execveat", AT_SYMLINK_NOFOLLOW);
    run("flag 4", prog, "", AT_EMPTY_PATH | 4);
    run("flag AT_REMOVEDIR", bin, "execveat", 0x200);
    run("an empty path without AT_EMPTY_PATH", prog, "", 0);
    run("relative with a bad descriptor", 99, "execveat", 0);
    run("relative to a file", file, "execveat", 0);
    run("AT_EMPTY_PATH of a bad descriptor", 99, "", AT_EMPTY_PATH);
    run("AT_EMPTY_PATH of a directory", bin, "", AT_EMPTY_PATH);
    run("AT_EMPTY_PATH of AT_FDCWD", AT_FDCWD, "", AT_EMPTY_PATH);
    run("AT_EMPTY_PATH of a file without x", file, "", AT_EMPTY_PATH);
    int p[2];
    pipe(p);
    run("AT_EMPTY_PATH of a pipe", p[0], "", AT_EMPTY_PATH);
    run("nothing there", bin, "no-such-program", 0);
    char *none[] = { "x", NULL };
    SHOW("execveat of a bad path pointer", execveat(bin, hidden(8), none, environ, 0));
    SHOW("execveat with a bad argv", execveat(bin, "execveat", hidden(8), environ, 0));
    SHOW("execveat with a bad argv and flags", execveat(bin, "execveat", hidden(8), environ, 4));

    /* Scripts: "#!/bin/execveat one-arg" runs the interpreter with its
     * argument, the script's path and the script's own arguments. */
    write_text("/tmp/s.sh", "#!/bin/execveat  one-arg \nnot read\n");
    chmod("/tmp/s.sh", 0755);
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = { "s.sh", "first", "second", NULL };
        execve("/tmp/s.sh", args, environ);
        printf("execve of a script: %s\n", errname(errno));
        _exit(99);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("the script's status: %d\n", WEXITSTATUS(st));
    write_text("/tmp/t.sh", "#!/bin/execveat\n");
    chmod("/tmp/t.sh", 0755);
    if ((pid = fork()) == 0) {
        char *args[] = { "t.sh", NULL };
        execve("/tmp/t.sh", args, environ);
        _exit(99);
    }
    waitpid(pid, &st, 0);
    printf("a script without an interpreter argument: status %d\n", WEXITSTATUS(st));
    write_text("/tmp/u.sh", "#!/bin/no-such-interpreter\n");
    chmod("/tmp/u.sh", 0755);
    SHOW("execve of a script whose interpreter is not there", execve("/tmp/u.sh", none, environ));
    run("a script relative to /tmp", tmp, "s.sh", 0);
    int script = open("/tmp/s.sh", O_RDONLY);
    run("a script by descriptor", script, "", AT_EMPTY_PATH);
    fcntl(tmp, F_SETFD, FD_CLOEXEC);
    run("a script relative to a close-on-exec directory", tmp, "s.sh", 0);
    fcntl(script, F_SETFD, FD_CLOEXEC);
    run("a script by a close-on-exec descriptor", script, "", AT_EMPTY_PATH);
    run("a program by a close-on-exec descriptor", (fcntl(prog, F_SETFD, FD_CLOEXEC), prog), "", AT_EMPTY_PATH);
    unlink("/tmp/s.sh");
    unlink("/tmp/t.sh");
    unlink("/tmp/u.sh");
    unlink("/tmp/xlink");
    return 0;
}
