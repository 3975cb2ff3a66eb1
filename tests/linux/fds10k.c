/* Descriptors by the thousand: RLIMIT_NOFILE's defaults and bounds
 * (fs.nr_open), 10,000 descriptors open at once (/dev/null and a regular
 * file in turn), the lowest free one taken, dup2 and F_DUPFD far up,
 * poll and select of high descriptors, /proc/self/fd and fdinfo, a forked
 * child's copies, close_range, EMFILE at the soft limit, and everything
 * open again after closing it all. On Petrel the personality's usage
 * (/proc/petrel: open files, pipes, its heap) must be what it was before
 * the run, once a small run has warmed it: every byte comes back. */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "lxtest.h"

#define MANY    10000
#define SOFT    12000
#define PATH    "/tmp/fds10k"

/* Open the i-th of the many: /dev/null for even i, the regular file for odd. */
static int open_one(int i)
{
    return open(i % 2 ? PATH : "/dev/null", O_RDWR);
}

/* Open MANY from descriptor 3 on; 1 if each got the next descriptor. */
static int open_many(void)
{
    int in_order = 1;
    for (int i = 0; i < MANY; i++) {
        int fd = open_one(i);
        if (fd != 3 + i) {
            printf("open %d gave %d %s\n", i, fd, fd < 0 ? errname(errno) : "");
            in_order = 0;
            break;
        }
    }
    return in_order;
}

/* The entries of /proc/self/fd (its own descriptor among them). */
static int count_proc_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* The line of /proc/self/status that starts with `key`. */
static void show_status(const char *key)
{
    static char text[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    long n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : 0;
    close(fd);
    text[n > 0 ? n : 0] = 0;
    char *at = strstr(text, key), *nl = at ? strchr(at, '\n') : NULL;
    if (nl)
        *nl = 0;
    printf("status %s\n", at ? at : "(none)");
}

static void limits(void)
{
    struct rlimit r;
    SHOW("getrlimit NOFILE", getrlimit(RLIMIT_NOFILE, &r));
    printf("nofile: soft %lu, hard %lu\n", (unsigned long)r.rlim_cur, (unsigned long)r.rlim_max);
    struct rlimit past = { SOFT, (1u << 20) + 1 }, most = { SOFT, 1u << 20 }, big = { SOFT, 65536 };
    struct rlimit above = { 70000, 65536 };
    SHOW("setrlimit hard past nr_open", setrlimit(RLIMIT_NOFILE, &past));
    SHOW("setrlimit hard at nr_open", setrlimit(RLIMIT_NOFILE, &most));
    SHOW("setrlimit hard down to 65536", setrlimit(RLIMIT_NOFILE, &big));
    SHOW("setrlimit soft above hard", setrlimit(RLIMIT_NOFILE, &above));
    getrlimit(RLIMIT_NOFILE, &r);
    printf("nofile now: soft %lu, hard %lu\n", (unsigned long)r.rlim_cur, (unsigned long)r.rlim_max);
}

static void lowest_free(void)
{
    close(5000);
    close(700);
    close(9000);
    SHOW("open after closing 5000, 700, 9000", open_one(1));
    SHOW("open again", open_one(1));
    SHOW("open again", open_one(1));
    SHOW("open again, past them all", open_one(1));
    close(MANY + 3);
}

static void far_up(void)
{
    int fd;
    SHOW("dup2 to 11000", dup2(4, 11000));
    SHOW("F_DUPFD from 10500", fcntl(3, F_DUPFD, 10500));
    fd = fcntl(3, F_DUPFD_CLOEXEC, 3);
    SHOW("F_DUPFD_CLOEXEC from 3", fd);
    SHOW("its F_GETFD", fcntl(fd, F_GETFD));
    close(fd);
    SHOW("dup2 to the soft limit", dup2(0, SOFT));
    SHOW("F_DUPFD from the soft limit", fcntl(0, F_DUPFD, SOFT));
    show_status("FDSize");
    printf("/proc/self/fd entries: %d\n", count_proc_fds());
    char info[256] = { 0 };
    fd = open("/proc/self/fdinfo/11000", O_RDONLY);
    SHOW("read fdinfo of 11000", read(fd, info, sizeof(info) - 1) > 0);
    close(fd);
    char *ino = strstr(info, "ino:");
    if (ino)
        *ino = 0;                               /* (the inode number is the system's own) */
    printf("it says %s", info);
    char link[64] = { 0 };
    SHOW("readlink /proc/self/fd/10500", readlink("/proc/self/fd/10500", link, sizeof(link) - 1));
    printf("it says %s\n", link);
}

static void polling(void)
{
    struct pollfd one = { 11000, POLLIN | POLLOUT, 0 };
    SHOW("poll of 11000", poll(&one, 1, 0));
    printf("revents 0x%x\n", one.revents);
    static struct pollfd all[11001];
    for (int i = 0; i < 11001; i++)
        all[i] = (struct pollfd){ i < 3 ? -1 : i, POLLIN, 0 };   /* (not the console's: its input varies) */
    SHOW("poll of descriptors 3..11000", poll(all, 11001, 0));
    printf("POLLNVAL at 10800: %d, POLLIN at 10500: %d\n", all[10800].revents == POLLNVAL,
           all[10500].revents == POLLIN);
    static struct pollfd over[SOFT + 1];
    SHOW("poll of more than the soft limit", poll(over, SOFT + 1, 0));
    static uint64_t rd[11001 / 64 + 1];
    rd[11000 / 64] |= 1ull << (11000 % 64);
    rd[0] |= 1ull << 3;
    struct timespec zero = { 0, 0 };
    SHOW("pselect6 of 3 and 11000", syscall(SYS_pselect6, 11001, rd, NULL, NULL, &zero, NULL));
    printf("still set: %d %d\n", (int)(rd[0] >> 3 & 1), (int)(rd[11000 / 64] >> (11000 % 64) & 1));
    rd[10800 / 64] |= 1ull << (10800 % 64);
    SHOW("pselect6 of a closed one", syscall(SYS_pselect6, 11001, rd, NULL, NULL, &zero, NULL));
}

/* A child reads through its copy of descriptor MANY + 2 (the file's), closes them all. */
static void child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char buf[8] = { 0 };
        long n = pread(MANY + 2, buf, 5, 0);
        syscall(SYS_close_range, 3, ~0u, 0);
        int gone = fcntl(MANY + 2, F_GETFD) < 0 && errno == EBADF && fcntl(11000, F_GETFD) < 0;
        _exit(n == 5 && !strcmp(buf, "fds10") && gone ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("the child read its copy and closed them all: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    SHOW("the parent's still open", fcntl(MANY + 2, F_GETFD));
}

static void ranges(void)
{
    SHOW("close_range 5000..5999", syscall(SYS_close_range, 5000, 5999, 0));
    SHOW("F_GETFD of 5500", fcntl(5500, F_GETFD));
    SHOW("open takes 5000", open_one(0));
    SHOW("close_range CLOEXEC 6000..6009", syscall(SYS_close_range, 6000, 6009, 4));
    SHOW("F_GETFD of 6005", fcntl(6005, F_GETFD));
    int opened = 0, fd, last = -1;
    while ((fd = open_one(opened)) >= 0)
        opened++, last = fd;
    printf("opened %d more until %s, the last %d\n", opened, errname(errno), last);
    SHOW("close_range of all", syscall(SYS_close_range, 3, ~0u, 0));
    printf("/proc/self/fd entries: %d\n", count_proc_fds());
    SHOW("open after", open_one(0));
    printf("all %d again in order: %d\n", MANY, (close(3), open_many()));
    syscall(SYS_close_range, 3, ~0u, 0);
}

/* The whole run, in a child (so that its table goes when it ends). */
static int run(void)
{
    limits();
    printf("opened %d in order: %d\n", MANY, open_many());
    lowest_free();
    far_up();
    polling();
    child();
    ranges();
    return 0;
}

/* A run of a few hundred descriptors first, so that whatever the
 * personality makes once and keeps (the first chunk of its open file
 * table) is there before the usage is read. */
static void warm(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct pollfd p[100];
        for (int i = 0; i < 300; i++)
            open_one(i);
        for (int i = 0; i < 100; i++)
            p[i] = (struct pollfd){ i, POLLIN, 0 };
        poll(p, 100, 0);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

/* The lines of /proc/petrel this test must find as they were; 0 on Linux. */
static int usage(char *out, size_t size)
{
    static char text[2048];
    int fd = open("/proc/petrel", O_RDONLY);
    if (fd < 0)
        return 0;
    long n = read(fd, text, sizeof(text) - 1);
    close(fd);
    text[n > 0 ? n : 0] = 0;
    out[0] = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (!strncmp(line, "files ", 6) || !strncmp(line, "pipes ", 6) || !strncmp(line, "heap_bytes ", 11))
            snprintf(out + strlen(out), size - strlen(out), "%s; ", line);
    return 1;
}

int main(void)
{
    write_text(PATH, "fds10k\n");
    warm();
    char before[256], after[256];
    int petrel = usage(before, sizeof(before));
    pid_t pid = fork();
    if (pid == 0)
        _exit(run());
    int st = 0;
    waitpid(pid, &st, 0);
    printf("the run: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    unlink(PATH);
    int same = !petrel || (usage(after, sizeof(after)) && !strcmp(before, after));
    printf("the personality's usage as before: ~%s %s\n", petrel ? (same ? "yes" : "NO") : "(Linux)",
           petrel ? before : "");
    if (!same)
        printf("before: %s\nafter:  %s\n", before, after);
    return same ? 0 : 1;
}
