/*
 * /proc/PID/exe, cwd and fd/: what a process's links say (paths of files
 * and directories, pipe:[N], socket:[N], anon_inode:[eventfd]), the fd
 * directory's listing, another process's links, and a closed descriptor;
 * then pipes, sockets and event descriptors reached through their links:
 * stat, O_PATH opens (what they name, what works on them, after the
 * object closed) and opens for reading and writing.
 */
#include "lxtest.h"
#include <dirent.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
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

/* Is what path leads to the same object as descriptor fd (inode and type)? */
static int same_as(int fd, const char *path, int follow)
{
    struct stat a, b;
    if (fstat(fd, &a))
        return -1;
    if (follow ? stat(path, &b) : fstat(atoi(path), &b))
        return -2;
    return a.st_ino == b.st_ino && a.st_mode == b.st_mode && a.st_dev == b.st_dev;
}

/* Do two links say the same? */
static int same_link(int a, int b)
{
    char pa[64], pb[64], la[128] = { 0 }, lb[128] = { 0 };
    snprintf(pa, sizeof(pa), "/proc/self/fd/%d", a);
    snprintf(pb, sizeof(pb), "/proc/self/fd/%d", b);
    if (readlink(pa, la, sizeof(la) - 1) < 0 || readlink(pb, lb, sizeof(lb) - 1) < 0)
        return -1;
    return !strcmp(la, lb);
}

/* A pipe, a socket, an eventfd and an epoll through /proc/self/fd/N. */
static void objects(void)
{
    int p[2], sv[2];
    pipe(p);
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int fds[] = { p[0], p[1], sv[0], eventfd(3, 0), epoll_create1(0) };
    const char *names[] = { "pipe read end", "pipe write end", "socket", "eventfd", "epoll" };
    for (int i = 0; i < 5; i++) {
        char path[64], num[16];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
        struct stat st;
        errno = 0;
        int r = stat(path, &st);
        printf("%s: stat through the link %d %s, type 0%o, same object %d\n", names[i], r, errname(errno),
               (unsigned)(st.st_mode & S_IFMT), same_as(fds[i], path, 1));
        errno = 0;
        int o = open(path, O_PATH);
        printf("%s: O_PATH open %s, F_GETFL has O_PATH %d\n", names[i], o >= 0 ? "ok" : errname(errno),
               o >= 0 && (fcntl(o, F_GETFL) & O_PATH) != 0);
        if (o < 0)
            continue;
        snprintf(num, sizeof(num), "%d", o);
        printf("%s: the O_PATH one: same object %d, same link %d\n", names[i], same_as(fds[i], num, 0),
               same_link(fds[i], o));
        char c;
        uint64_t v;
        SHOW("  read", read(o, &c, 1));
        SHOW("  write", write(o, &v, 8));
        SHOW("  lseek", lseek(o, 0, SEEK_SET));
        int t = 0;
        socklen_t tl = sizeof(t);
        SHOW("  getsockopt", getsockopt(o, SOL_SOCKET, SO_TYPE, &t, &tl));
        struct pollfd pf = { o, POLLIN | POLLOUT, 0 };
        long n = poll(&pf, 1, 0);
        printf("  poll: %ld revents 0x%x\n", n, (unsigned)pf.revents);
        fd_set rs;
        FD_ZERO(&rs);
        FD_SET(o, &rs);
        struct timeval tv = { 0, 0 };
        fd_set ws;
        FD_ZERO(&ws);
        FD_SET(o, &ws);
        errno = 0;
        n = select(o + 1, &rs, &ws, NULL, &tv);
        printf("  select: %ld %s, readable %d, writable %d\n", n, n < 0 ? errname(errno) : "", FD_ISSET(o, &rs) != 0,
               FD_ISSET(o, &ws) != 0);
        int ep = epoll_create1(0);
        struct epoll_event ee = { EPOLLIN, { 0 } };
        SHOW("  epoll_ctl of it", epoll_ctl(ep, EPOLL_CTL_ADD, o, &ee));
        SHOW("  epoll_wait on it", epoll_wait(o, &ee, 1, 0));
        close(ep);
        int d = dup(o);
        printf("  its dup: same object %d\n", d >= 0 ? same_as(o, (snprintf(num, sizeof(num), "%d", d), num), 0) : -1);
        close(d);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", o);
        int o2 = open(path, O_PATH);
        printf("  O_PATH again through it: %s, same object %d\n", o2 >= 0 ? "ok" : errname(errno),
               o2 >= 0 ? same_as(fds[i], (snprintf(num, sizeof(num), "%d", o2), num), 0) : -1);
        close(o2);
        errno = 0;
        int rw = open(path, O_RDWR | O_NONBLOCK);
        printf("  O_RDWR through it: %s\n", rw >= 0 ? "ok" : errname(errno));
        if (rw >= 0)
            close(rw);
        close(o);
    }
    for (int i = 2; i < 5; i++) {               /* (Linux reopens none of these) */
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
        errno = 0;
        int rw = open(path, O_RDWR);
        printf("%s opened O_RDWR: %s\n", names[i], rw >= 0 ? "ok" : errname(errno));
        if (rw >= 0)
            close(rw);
    }
    /* The pipe's name outlives the pipe: fstat still says it, and opening
     * it again gives a new empty pipe of the same inode. */
    char path[64], num[16];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
    int o = open(path, O_PATH);
    struct stat before, after;
    fstat(p[0], &before);
    write(p[1], "old", 3);
    close(p[0]);
    close(p[1]);
    fstat(o, &after);
    printf("the pipe closed: its O_PATH name keeps its inode %d\n", before.st_ino == after.st_ino);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", o);
    int r = open(path, O_RDONLY | O_NONBLOCK), w = open(path, O_WRONLY | O_NONBLOCK);
    char buf[8] = { 0 };
    SHOW("  reopened: read (empty)", read(r, buf, sizeof(buf)));
    SHOW("  write", write(w, "new", 3));
    SHOW("  read", read(r, buf, sizeof(buf)));
    printf("  read \"%s\"; same inode %d\n", buf, same_as(r, (snprintf(num, sizeof(num), "%d", o), num), 0));
    close(r);
    close(w);
    close(o);
    for (int i = 2; i < 5; i++)
        close(fds[i]);
    close(sv[1]);
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
    close(file);
    close(dir);
    objects();
    return 0;
}
