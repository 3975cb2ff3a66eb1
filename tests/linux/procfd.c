/*
 * /proc/PID/exe, cwd and fd/: what a process's links say (paths of files
 * and directories, pipe:[N], socket:[N], anon_inode:[eventfd]), the fd
 * directory's listing, another process's links, and a closed descriptor.
 */
#include "lxtest.h"
#include <dirent.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Print a link's target; for pipe:[N] and the like the number after " ~". */
static void show_link(const char *what, const char *path)
{
    char buf[256] = { 0 };
    errno = 0;
    long n = readlink(path, buf, sizeof(buf) - 1);
    if (n < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    char *br = strchr(buf, '[');
    if (br && buf[0] != '/') {
        *br = 0;
        printf("%s: %s[ ~%s\n", what, buf, br + 1);
    } else {
        printf("%s: %s\n", what, buf);
    }
}

static void show_fd(int fd)
{
    char path[64], what[32];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    snprintf(what, sizeof(what), "fd %d", fd);
    show_link(what, path);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    show_link("exe", "/proc/self/exe");
    show_link("cwd", "/proc/self/cwd");
    chdir("/tmp");
    mkdir("/tmp/pd", 0755);
    chdir("/tmp/pd");
    show_link("cwd after chdir", "/proc/self/cwd");
    chdir("/");
    show_link("cwd at the root", "/proc/self/cwd");
    int file = open("/etc/hello.txt", O_RDONLY);
    int dir = open("/tmp/pd", O_RDONLY | O_DIRECTORY);
    int p[2];
    pipe(p);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int ev = eventfd(0, 0);
    int fds[] = { file, dir, p[0], p[1], sv[0], ev };
    for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        show_fd(fds[i]);
    show_link("a closed descriptor", "/proc/self/fd/40");
    show_link("not a number", "/proc/self/fd/x");
    DIR *d = opendir("/proc/self/fd");
    int count = 0, max = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        count++;
        max = atoi(e->d_name) > max ? atoi(e->d_name) : max;
        if (e->d_type != DT_LNK)
            printf("%s is not a link\n", e->d_name);
    }
    closedir(d);
    printf("fd entries: %d, highest %d\n", count, max);
    struct stat st;
    SHOW("stat of fd 0 link", lstat("/proc/self/fd/0", &st));
    printf("it is a link: %d\n", S_ISLNK(st.st_mode));
    SHOW("stat through the file's link", stat("/proc/self/fd/3", &st));
    printf("size through it: %ld\n", (long)st.st_size);
    int pr[2];
    pipe(pr);
    pid_t pid = fork();
    if (pid == 0) {
        close(pr[1]);
        chdir("/tmp/pd");
        char c;
        read(pr[0], &c, 1);                     /* until the parent has looked */
        _exit(0);
    }
    usleep(100000);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
    show_link("the child's cwd", path);
    snprintf(path, sizeof(path), "/proc/%d/exe", pid);
    show_link("the child's exe", path);
    write(pr[1], "x", 1);
    waitpid(pid, NULL, 0);
    SHOW("a gone child's fd directory", open(path, O_RDONLY));
    rmdir("/tmp/pd");
    return 0;
}
