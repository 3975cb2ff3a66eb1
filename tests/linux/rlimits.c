/* Resource limits (prlimit64, getrlimit, setrlimit) and readlinkat: what
 * the personality answers as Linux does for root; RLIMIT_NOFILE lowered
 * (open, dup2, F_DUPFD) and RLIMIT_FSIZE (SIGXFSZ and EFBIG from write,
 * ftruncate and fallocate), RLIMIT_CPU (SIGXCPU, then SIGKILL), inherited
 * by a child, set on another process. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

static volatile int xfsz;
static void on_xfsz(int sig)
{
    (void)sig;
    xfsz++;
}

/* RLIMIT_NOFILE lowered to 10: descriptors 0..9 only. */
static void nofile(void)
{
    struct rlimit old, ten = { 10, 0 };
    getrlimit(RLIMIT_NOFILE, &old);
    ten.rlim_max = old.rlim_max;
    SHOW("setrlimit NOFILE soft 10", setrlimit(RLIMIT_NOFILE, &ten));
    int opened = 0, fd, last = -1;
    while ((fd = open("/etc/hello.txt", O_RDONLY)) >= 0)
        opened++, last = fd;
    printf("opened until %s, the last descriptor %d\n", errname(errno), last);
    SHOW("dup2 to descriptor 10", dup2(0, 10));
    SHOW("dup2 to descriptor 9", (close(9), dup2(0, 9)));
    SHOW("F_DUPFD from 10", fcntl(0, F_DUPFD, 10));
    SHOW("F_DUPFD from 3, all taken", fcntl(0, F_DUPFD, 3));
    for (fd = 3; fd < 10; fd++)
        close(fd);
    struct rlimit huge = { 10, 1u << 30 };
    SHOW("setrlimit NOFILE hard past the largest", setrlimit(RLIMIT_NOFILE, &huge));
    SHOW("setrlimit NOFILE back", setrlimit(RLIMIT_NOFILE, &old));
    SHOW("open after", (fd = open("/etc/hello.txt", O_RDONLY)) > 2);
    close(fd);
}

/* RLIMIT_FSIZE of 1000 bytes. */
static void fsize(void)
{
    struct rlimit old, k = { 1000, RLIM_INFINITY };
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, on_xfsz);
    SHOW("setrlimit FSIZE 1000", setrlimit(RLIMIT_FSIZE, &k));
    int fd = open("/tmp/fsize", O_RDWR | O_CREAT | O_TRUNC, 0644);
    char buf[1500];
    memset(buf, 'f', sizeof(buf));
    SHOW("write of 1500 bytes", write(fd, buf, sizeof(buf)));
    SHOW("write at the limit", write(fd, buf, 10));
    printf("SIGXFSZ caught %d\n", xfsz);
    SHOW("pwrite of 0 bytes at the limit", pwrite(fd, buf, 0, 1000));
    SHOW("pwrite of 10 bytes from 995", pwrite(fd, buf, 10, 995));
    SHOW("ftruncate to 1000", ftruncate(fd, 1000));
    SHOW("ftruncate to 1001", ftruncate(fd, 1001));
    SHOW("ftruncate down to 10", ftruncate(fd, 10));
    SHOW("fallocate to 2000", fallocate(fd, 0, 0, 2000));
    SHOW("fallocate, keeping the size", fallocate(fd, 1, 0, 2000));
    printf("SIGXFSZ caught %d\n", xfsz);
    /* Its default action ends a child that writes past it; the child
     * inherits the limit. */
    signal(SIGXFSZ, SIG_DFL);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit mine;
        getrlimit(RLIMIT_FSIZE, &mine);
        if (mine.rlim_cur != 1000)
            _exit(3);
        pwrite(fd, buf, 10, 5000);
        _exit(4);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("a child writing past it: signalled %d, signal %d\n", WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    close(fd);
    unlink("/tmp/fsize");
    SHOW("setrlimit FSIZE back", setrlimit(RLIMIT_FSIZE, &old));
}

/* RLIMIT_CPU of 1 s soft, 3 s hard: SIGXCPU at 1 s and at 2 s (the soft
 * limit a second further each time), SIGKILL at 3 s. */
static int xcpu_pipe;
static void on_xcpu(int sig)
{
    (void)sig;
    struct rlimit r;
    getrlimit(RLIMIT_CPU, &r);
    char c = (char)('0' + r.rlim_cur);
    write(xcpu_pipe, &c, 1);
}

static void cpu(void)
{
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        xcpu_pipe = p[1];
        signal(SIGXCPU, on_xcpu);
        struct rlimit r = { 1, 3 };
        setrlimit(RLIMIT_CPU, &r);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    close(p[1]);
    int st = 0;
    waitpid(pid, &st, 0);
    char got[16] = { 0 };
    long n = read(p[0], got, sizeof(got) - 1);
    close(p[0]);
    printf("RLIMIT_CPU 1 s, hard 3 s: SIGXCPU %ld times, the soft limit then %s; then signal %d\n", n, got,
           WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

/* prlimit64 on a child: its limit changes, not the caller's. */
static void other_process(void)
{
    int go[2];
    pipe(go);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        read(go[0], &c, 1);
        struct rlimit r;
        getrlimit(RLIMIT_CORE, &r);
        _exit(r.rlim_cur == 4096 ? 0 : 1);
    }
    struct rlimit set = { 4096, RLIM_INFINITY }, before, mine;
    SHOW("prlimit64 of a child", syscall(SYS_prlimit64, pid, RLIMIT_CORE, &set, &before));
    printf("  it was soft %lu\n", (unsigned long)before.rlim_cur);
    getrlimit(RLIMIT_CORE, &mine);
    printf("  this process's own soft %lu\n", (unsigned long)mine.rlim_cur);
    write(go[1], "x", 1);
    int st = 0;
    waitpid(pid, &st, 0);
    printf("  the child saw it: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(go[0]);
    close(go[1]);
}

int main(void)
{
    struct rlimit r;
    SHOW("getrlimit STACK", getrlimit(RLIMIT_STACK, &r));
    printf("stack: soft %lu, hard infinite %d\n", (unsigned long)r.rlim_cur, r.rlim_max == RLIM_INFINITY);
    SHOW("getrlimit CORE", getrlimit(RLIMIT_CORE, &r));
    printf("core: soft %lu, hard infinite %d\n", (unsigned long)r.rlim_cur, r.rlim_max == RLIM_INFINITY);
    SHOW("getrlimit NOFILE", getrlimit(RLIMIT_NOFILE, &r));
    printf("nofile: soft ~%lu\n", (unsigned long)r.rlim_cur);
    SHOW("getrlimit of resource 99", syscall(SYS_prlimit64, 0, 99, NULL, &r));
    SHOW("prlimit64 of pid 99999", syscall(SYS_prlimit64, 99999, RLIMIT_NOFILE, NULL, &r));
    struct rlimit bad = { 10, 5 };
    SHOW("setrlimit soft above hard", setrlimit(RLIMIT_NOFILE, &bad));
    SHOW("getrlimit into a bad pointer", syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, (void *)8));
    SHOW("setrlimit to what it is", (getrlimit(RLIMIT_CORE, &r), setrlimit(RLIMIT_CORE, &r)));
    char buf[64] = { 0 };
    SHOW("readlink /bin/sh", readlink("/bin/sh", buf, sizeof(buf) - 1));
    printf("it says %s\n", buf);
    SHOW("readlink of a file", readlink("/etc/hello.txt", buf, sizeof(buf)));
    SHOW("readlink of nothing", readlink("/nope", buf, sizeof(buf)));
    SHOW("readlink into 0 bytes", syscall(SYS_readlinkat, AT_FDCWD, "/bin/sh", buf, 0));
    SHOW("readlink into 3 bytes", readlink("/bin/sh", buf, 3));
    nofile();
    fsize();
    cpu();
    other_process();
    return 0;
}
