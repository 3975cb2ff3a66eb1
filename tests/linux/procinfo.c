/*
 * /proc/PID/environ, fdinfo/ and the paths of /proc's own directories:
 * the environment a program was started with, each descriptor's position
 * and status flags, the modes and sizes of the fd links, getcwd and
 * readlink inside /proc/self, and a child's view of its parent.
 */
#include "lxtest.h"
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* s with the decimal pid replaced by "PID" (it differs from system to system). */
static const char *unpid(const char *s, int pid)
{
    static char out[512];
    char num[16];
    snprintf(num, sizeof(num), "%d", pid);
    size_t nl = strlen(num), o = 0;
    while (*s && o + 4 < sizeof(out)) {
        if (!strncmp(s, num, nl) && (s[nl] == '/' || s[nl] == 0)) {
            memcpy(out + o, "PID", 3);
            o += 3;
            s += nl;
        } else {
            out[o++] = *s++;
        }
    }
    out[o] = 0;
    return out;
}

/* Print /proc/self/environ (or another file of NUL-separated strings), a string a line. */
static void show_strings(const char *path)
{
    char buf[1024];
    int fd = open(path, O_RDONLY);
    long n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
    if (n < 0) {
        printf("%s: -1 %s\n", path, errname(errno));
        return;
    }
    close(fd);
    printf("%s: %ld bytes\n", path, n);
    for (long i = 0; i < n; i += (long)strlen(buf + i) + 1)
        printf("  [%s]\n", buf + i);
}

/* fdinfo of fd: pos and flags as they are, mnt_id and ino after " ~". */
static void show_fdinfo(const char *what, int fd)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    int f = open(path, O_RDONLY);
    long n = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
    if (n < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    close(f);
    buf[n] = 0;
    printf("%s:", what);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "mnt_id:", 7) || !strncmp(line, "ino:", 4))
            printf(" [%.*s ~%s]", (int)(strchr(line, ':') - line), line, strchr(line, ':') + 1);
        else
            printf(" [%s]", line);
    }
    printf("\n");
}

/* The mode bits and size of /proc/self/fd/N (lstat of the link). */
static void show_link_mode(const char *what, int fd)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (lstat(path, &st)) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    printf("%s: link %d mode %o size %lld\n", what, S_ISLNK(st.st_mode), (unsigned)(st.st_mode & 0777),
           (long long)st.st_size);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) {                             /* start again with an environment of our own */
        char *args[] = { argv[0], "again", "x y", NULL };
        char *env[] = { "A=1", "B=two words", "EMPTY=", "PATH=/bin", NULL };
        execve("/proc/self/exe", args, env);
        printf("execve: %s\n", errname(errno));
        return 1;
    }
    int me = getpid();
    show_strings("/proc/self/environ");
    show_strings("/proc/self/cmdline");

    int file = open("/tmp/pi", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(file, "0123456789", 10);
    lseek(file, 4, SEEK_SET);
    show_fdinfo("read-write file at 4", file);
    int app = open("/tmp/pi", O_WRONLY | O_APPEND);
    show_fdinfo("append only", app);
    int ro = open("/tmp/pi", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    show_fdinfo("read only, nonblocking, close-on-exec", ro);
    fcntl(ro, F_SETFD, 0);
    fcntl(ro, F_SETFL, 0);
    show_fdinfo("the same after F_SETFD 0 and F_SETFL 0", ro);
    int p[2];
    pipe(p);
    show_fdinfo("pipe read end", p[0]);
    show_fdinfo("pipe write end", p[1]);
    int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
    show_fdinfo("directory", dir);
    show_fdinfo("closed", 50);
    show_link_mode("read-write link", file);
    show_link_mode("write-only link", app);
    show_link_mode("read-only link", ro);

    char link[256] = { 0 }, path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", dir);
    long n = readlink(path, link, sizeof(link) - 1);
    printf("link of a /proc directory: %s\n", n < 0 ? errname(errno) : unpid(link, me));

    DIR *d = opendir("/proc/self/fdinfo");
    int count = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            count++;
            if (e->d_type != DT_REG)
                printf("fdinfo/%s is not a regular file\n", e->d_name);
        }
    if (d)
        closedir(d);
    printf("fdinfo entries: %d\n", count);

    char cwd[256];
    const char *dirs[] = { "/proc/self/fd", "/proc/self", "/proc/self/fdinfo", "/proc" };
    for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        SHOW("chdir", chdir(dirs[i]));
        printf("  getcwd in %s: %s\n", dirs[i], getcwd(cwd, sizeof(cwd)) ? unpid(cwd, me) : errname(errno));
    }
    chdir("/");

    pid_t child = fork();
    if (child == 0) {                           /* the parent's files, seen from its child */
        char ppath[64];
        snprintf(ppath, sizeof(ppath), "/proc/%d/environ", me);
        int f = open(ppath, O_RDONLY);
        char buf[256];
        long k = f < 0 ? -1 : read(f, buf, sizeof(buf));
        printf("child reads its parent's environ: %ld bytes\n", k);
        snprintf(ppath, sizeof(ppath), "/proc/%d/fdinfo/%d", me, file);
        f = open(ppath, O_RDONLY);
        k = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
        buf[k > 0 ? k : 0] = 0;
        printf("child reads its parent's fdinfo: %.6s\n", buf);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    unlink("/tmp/pi");
    return 0;
}
