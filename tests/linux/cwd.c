/* The working directory: chdir, fchdir, getcwd, paths relative to it
 * (open, stat, execve), inherited by a child. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

static void pwd(const char *when)
{
    char buf[256];
    printf("%s: %s\n", when, getcwd(buf, sizeof(buf)) ? buf : errname(errno));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pwd("at start");
    SHOW("chdir /data", chdir("/data"));
    pwd("after chdir /data");
    SHOW("open a.txt relative", open("a.txt", O_RDONLY) >= 0);
    struct stat st;
    SHOW("stat sub relative", stat("sub", &st));
    SHOW("chdir sub", chdir("sub"));
    pwd("in sub");
    SHOW("chdir ..", chdir(".."));
    pwd("back up");
    SHOW("chdir to a file", chdir("a.txt"));
    SHOW("chdir to nothing", chdir("/nope"));
    SHOW("chdir to an empty path", chdir(""));
    char small[4];
    SHOW("getcwd into 4 bytes", syscall(SYS_getcwd, small, 4));
    SHOW("getcwd length", syscall(SYS_getcwd, (char[64]){ 0 }, 64));
    int etc = open("/etc", O_RDONLY | O_DIRECTORY);
    SHOW("fchdir /etc", fchdir(etc));
    pwd("after fchdir");
    int file = open("hello.txt", O_RDONLY);
    SHOW("fchdir to a file", fchdir(file));
    SHOW("fchdir to a bad descriptor", fchdir(99));
    chdir("/bin");
    pid_t pid = fork();
    if (pid == 0) {
        pwd("child");
        char *argv[] = { "hello", NULL };
        execv("./hello", argv);
        printf("exec ./hello failed: %s\n", errname(errno));
        _exit(99);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("./hello from /bin: status %d\n", WEXITSTATUS(status));
    SHOW("chdir /", chdir("/"));
    pwd("at the end");
    return 0;
}
