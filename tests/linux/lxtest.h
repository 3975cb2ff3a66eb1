/*
 * Helpers of the Linux oracle tests (tests/linux/, one .c file each): static musl
 * programs run unchanged on Linux and on Petrel's Linux personality; their
 * outputs must be identical line for line. A line whose value may differ
 * between the two (a pid, a time) prints it after " ~", and the test
 * masks everything from " ~" on.
 */
#ifndef LXTEST_H
#define LXTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The caller's thread id (musl has no gettid wrapper). */
static inline long gettid_(void) { return syscall(SYS_gettid); }

/* Milliseconds of CLOCK_MONOTONIC. */
static inline int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline const char *errname(int e)
{
    static const struct { int e; const char *name; } names[] = {
        { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" }, { EINTR, "EINTR" }, { EIO, "EIO" },
        { ENXIO, "ENXIO" }, { E2BIG, "E2BIG" }, { ENOEXEC, "ENOEXEC" }, { EBADF, "EBADF" },
        { ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" },
        { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
        { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ENFILE, "ENFILE" },
        { EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" }, { ESPIPE, "ESPIPE" }, { EROFS, "EROFS" },
        { ENAMETOOLONG, "ENAMETOOLONG" }, { ENOSYS, "ENOSYS" }, { ELOOP, "ELOOP" }, { EOVERFLOW, "EOVERFLOW" },
        { ENOTEMPTY, "ENOTEMPTY" }, { EXDEV, "EXDEV" }, { ENOSPC, "ENOSPC" }, { EOPNOTSUPP, "EOPNOTSUPP" },
        { EMLINK, "EMLINK" }, { EFBIG, "EFBIG" }, { ERANGE, "ERANGE" }, { EPIPE, "EPIPE" },
        { ETIMEDOUT, "ETIMEDOUT" }, { ENOTSOCK, "ENOTSOCK" }, { EDESTADDRREQ, "EDESTADDRREQ" },
        { EMSGSIZE, "EMSGSIZE" }, { EPROTOTYPE, "EPROTOTYPE" }, { ENOPROTOOPT, "ENOPROTOOPT" },
        { EPROTONOSUPPORT, "EPROTONOSUPPORT" }, { ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" },
        { EAFNOSUPPORT, "EAFNOSUPPORT" }, { EADDRINUSE, "EADDRINUSE" }, { ECONNRESET, "ECONNRESET" },
        { ENOBUFS, "ENOBUFS" }, { EISCONN, "EISCONN" }, { ENOTCONN, "ENOTCONN" },
        { ECONNREFUSED, "ECONNREFUSED" }, { EDOM, "EDOM" }, { ECANCELED, "ECANCELED" },
        { EDEADLK, "EDEADLK" }, { ENOLCK, "ENOLCK" }, { ENODATA, "ENODATA" }, { EOWNERDEAD, "EOWNERDEAD" }, { ENOTRECOVERABLE, "ENOTRECOVERABLE" },
        { EINPROGRESS, "EINPROGRESS" }, { EALREADY, "EALREADY" }, { EADDRNOTAVAIL, "EADDRNOTAVAIL" },
        { ENETUNREACH, "ENETUNREACH" }, { ENOTBLK, "ENOTBLK" }, { EUCLEAN, "EUCLEAN" },
    };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].e == e)
            return names[i].name;
    return "E?";
}

/* Print "what: value", or "what: -1 ERRNO" for a failed call. */
#define SHOW(what, expr) do {                                               \
        errno = 0;                                                          \
        long show_r_ = (long)(expr);                                        \
        if (show_r_ < 0)                                                    \
            printf("%s: %ld %s\n", what, show_r_, errname(errno));          \
        else                                                                \
            printf("%s: %ld\n", what, show_r_);                             \
    } while (0)

/* Write `text` into the file at path (created or truncated). */
static inline void write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    write(fd, text, strlen(text));
    close(fd);
}

/* Print "what: " and the file's first 63 bytes, or the errno of opening it. */
static inline void show_text(const char *what, const char *path)
{
    char buf[64] = { 0 };
    int fd = open(path, O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -errno;
    printf("%s: %s\n", what, n >= 0 ? buf : errname((int)-n));
    if (fd >= 0)
        close(fd);
}

/* What Petrel's personality holds now (/proc/petrel: "name value" lines,
 * Petrel's own file); petrel_usage_read gives 0 on Linux, which has none. */
#define PETREL_USAGE_MAX 24
struct petrel_usage {
    int n;
    char name[PETREL_USAGE_MAX][24];
    long long value[PETREL_USAGE_MAX];
};

static inline int petrel_usage_read(struct petrel_usage *u)
{
    char text[2048];
    int fd = open("/proc/petrel", O_RDONLY | O_CLOEXEC);
    u->n = 0;
    if (fd < 0)
        return 0;
    long n = read(fd, text, sizeof(text) - 1);
    close(fd);
    text[n > 0 ? n : 0] = 0;
    for (char *line = text; *line && u->n < PETREL_USAGE_MAX; ) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (sscanf(line, "%23s %lld", u->name[u->n], &u->value[u->n]) == 2)
            u->n++;
        if (!nl)
            break;
        line = nl + 1;
    }
    return 1;
}

/* Does `now` hold what `then` did: every count the same, and heap_bytes
 * (the bytes of the personality's records in use) at most `slack` more
 * (a table that indexes records stays at its largest size while any
 * record is left)? With `loud`, the differences go to stderr. */
static inline int petrel_usage_same(const struct petrel_usage *then, const struct petrel_usage *now, long long slack, int loud)
{
    int same = then->n == now->n;
    for (int i = 0; i < then->n && i < now->n; i++) {
        long long allowed = strcmp(then->name[i], "heap_bytes") ? 0 : slack;
        int ok = !strcmp(then->name[i], now->name[i]) && now->value[i] >= then->value[i] - allowed &&
                 now->value[i] <= then->value[i] + allowed;
        if (!ok && loud)
            fprintf(stderr, "usage: %s %lld, was %lld\n", now->name[i], now->value[i], then->value[i]);
        same &= ok;
    }
    return same;
}

/* Read the usage into `now` until it holds what `then` did (what a process
 * leaves is let go as the personality finishes with it), for at most 5 s;
 * 1 if it does, or on Linux (nothing to compare). */
static inline int petrel_usage_back(const struct petrel_usage *then, struct petrel_usage *now, long long slack)
{
    for (int tries = 0; tries < 100; tries++) {
        if (!petrel_usage_read(now) || petrel_usage_same(then, now, slack, 0))
            return 1;
        usleep(50000);
    }
    return petrel_usage_same(then, now, slack, 1);
}

/* The next of a xorshift64 sequence in *s (never 0): test programs' random numbers. */
static inline uint64_t xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
