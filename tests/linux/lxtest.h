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
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

#endif
