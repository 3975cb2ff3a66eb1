/* statx: what it says against stat, files, directories, links, devices,
 * pipes and /proc, AT_EMPTY_PATH, dirfd-relative paths, the mask and
 * attributes, and the errors. musl has no wrapper: the raw call. */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "lxtest.h"

struct stx_time { int64_t sec; uint32_t nsec; int32_t pad; };
struct stx {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, pad0;
    uint64_t ino, size, blocks, attributes_mask;
    struct stx_time atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t mnt_id;
    uint32_t dio_mem_align, dio_offset_align;
    uint64_t spare[12];
};

#define STATX_BASIC_STATS   0x7ff
#define STATX_ALL           0xfff
#define STATX__RESERVED     0x80000000u
#define ATTR_MOUNT_ROOT     0x2000
#define AT_STATX_FORCE_SYNC 0x2000
#define AT_STATX_DONT_SYNC  0x4000

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static long sx(int dirfd, const char *path, int flags, unsigned mask, struct stx *buf)
{
    memset(buf, 0xa5, sizeof(*buf));
    return syscall(SYS_statx, dirfd, path, flags, mask, buf);
}

/* Does statx's answer agree with struct stat's, field by field? */
static void against_stat(const char *what, const struct stx *x, const struct stat *st)
{
    unsigned long dev = ((unsigned long)x->dev_major << 8) | (x->dev_minor & 0xff) | ((unsigned long)(x->dev_minor & ~0xffu) << 12);
    unsigned long rdev = ((unsigned long)x->rdev_major << 8) | (x->rdev_minor & 0xff) |
                         ((unsigned long)(x->rdev_minor & ~0xffu) << 12);
    printf("%s: mask has the basic stats %d, agrees with stat: mode %d nlink %d uid %d gid %d ino %d size %d "
           "blocks %d blksize %d atime %d mtime %d ctime %d dev %d rdev %d ~mask %#x attributes %#lx of %#lx\n",
           what, (x->mask & STATX_BASIC_STATS) == STATX_BASIC_STATS, x->mode == st->st_mode,
           x->nlink == st->st_nlink, x->uid == st->st_uid, x->gid == st->st_gid, x->ino == st->st_ino,
           x->size == (uint64_t)st->st_size, x->blocks == (uint64_t)st->st_blocks, x->blksize == (uint32_t)st->st_blksize,
           x->atime.sec == st->st_atim.tv_sec && x->atime.nsec == st->st_atim.tv_nsec,
           x->mtime.sec == st->st_mtim.tv_sec && x->mtime.nsec == st->st_mtim.tv_nsec,
           x->ctime.sec == st->st_ctim.tv_sec && x->ctime.nsec == st->st_ctim.tv_nsec, dev == st->st_dev,
           rdev == st->st_rdev, x->mask, (unsigned long)x->attributes, (unsigned long)x->attributes_mask);
}

int main(void)
{
    struct stx x;
    struct stat st;
    SHOW("statx /etc/hello.txt", sx(AT_FDCWD, "/etc/hello.txt", 0, STATX_BASIC_STATS, &x));
    stat("/etc/hello.txt", &st);
    against_stat("/etc/hello.txt", &x, &st);
    printf("a regular file of %lu bytes, mode %o, not a mount root: %d\n", (unsigned long)x.size, x.mode,
           !(x.attributes & ATTR_MOUNT_ROOT));
    printf("spare words zeroed: %d\n", x.spare[0] == 0 && x.spare[11] == 0);
    SHOW("statx / ", sx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, &x));
    stat("/", &st);
    against_stat("/", &x, &st);
    printf("/ is a mount root: %d, knows it can say so: %d\n", !!(x.attributes & ATTR_MOUNT_ROOT),
           !!(x.attributes_mask & ATTR_MOUNT_ROOT));
    SHOW("statx /proc", sx(AT_FDCWD, "/proc", 0, STATX_BASIC_STATS, &x));
    printf("/proc is a mount root: %d, a directory: %d\n", !!(x.attributes & ATTR_MOUNT_ROOT), S_ISDIR(x.mode));
    SHOW("statx /dev/null", sx(AT_FDCWD, "/dev/null", 0, STATX_BASIC_STATS, &x));
    printf("/dev/null: character device %d, rdev %u:%u\n", S_ISCHR(x.mode), x.rdev_major, x.rdev_minor);
    SHOW("statx /dev/zero", sx(AT_FDCWD, "/dev/zero", 0, STATX_BASIC_STATS, &x));
    printf("/dev/zero: rdev %u:%u\n", x.rdev_major, x.rdev_minor);

    /* A file written now, and a link to it. */
    write_text("/tmp/sx", "twelve bytes");
    SHOW("statx /tmp/sx", sx(AT_FDCWD, "/tmp/sx", 0, STATX_ALL, &x));
    stat("/tmp/sx", &st);
    against_stat("/tmp/sx", &x, &st);
    printf("size %lu nlink %u mode %o\n", (unsigned long)x.size, x.nlink, x.mode);
    symlink("/tmp/sx", "/tmp/sx-link");
    SHOW("statx through a link", sx(AT_FDCWD, "/tmp/sx-link", 0, STATX_BASIC_STATS, &x));
    printf("  a regular file: %d\n", S_ISREG(x.mode));
    SHOW("statx of the link itself", sx(AT_FDCWD, "/tmp/sx-link", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &x));
    lstat("/tmp/sx-link", &st);
    printf("  a link: %d, size %lu, agrees with lstat: %d\n", S_ISLNK(x.mode), (unsigned long)x.size, x.ino == st.st_ino);
    SHOW("statx with mask 0", sx(AT_FDCWD, "/tmp/sx", 0, 0, &x));
    printf("  says the basic stats anyway: %d, size %lu\n", (x.mask & STATX_BASIC_STATS) == STATX_BASIC_STATS,
           (unsigned long)x.size);
    SHOW("statx AT_STATX_FORCE_SYNC", sx(AT_FDCWD, "/tmp/sx", AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &x));
    SHOW("statx AT_STATX_DONT_SYNC", sx(AT_FDCWD, "/tmp/sx", AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &x));
    SHOW("statx AT_NO_AUTOMOUNT", sx(AT_FDCWD, "/tmp/sx", AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &x));

    /* Descriptors: AT_EMPTY_PATH, and paths relative to a directory. */
    int fd = open("/tmp/sx", O_RDONLY), dir = open("/etc", O_RDONLY | O_DIRECTORY);
    SHOW("statx AT_EMPTY_PATH of a file", sx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x));
    fstat(fd, &st);
    against_stat("  that file", &x, &st);
    SHOW("statx AT_EMPTY_PATH of AT_FDCWD", sx(AT_FDCWD, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x));
    stat(".", &st);
    printf("  the working directory: %d\n", x.ino == st.st_ino && S_ISDIR(x.mode));
    int p[2];
    pipe(p);
    SHOW("statx AT_EMPTY_PATH of a pipe", sx(p[0], "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x));
    fstat(p[0], &st);
    printf("  a FIFO: %d, agrees with fstat: %d\n", S_ISFIFO(x.mode), x.ino == st.st_ino && x.mode == st.st_mode);
    int opath = open("/etc/hello.txt", O_PATH);
    SHOW("statx AT_EMPTY_PATH of an O_PATH descriptor", sx(opath, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x));
    printf("  size %lu\n", (unsigned long)x.size);
    SHOW("statx relative to /etc", sx(dir, "hello.txt", 0, STATX_BASIC_STATS, &x));
    printf("  size %lu\n", (unsigned long)x.size);
    SHOW("statx absolute with a bad dirfd", sx(99, "/etc/hello.txt", 0, STATX_BASIC_STATS, &x));
    SHOW("statx relative with a bad dirfd", sx(99, "hello.txt", 0, STATX_BASIC_STATS, &x));
    SHOW("statx relative to a file", sx(fd, "x", 0, STATX_BASIC_STATS, &x));
    SHOW("statx AT_EMPTY_PATH of a bad descriptor", sx(99, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x));
    SHOW("statx of an empty path without AT_EMPTY_PATH", sx(fd, "", 0, STATX_BASIC_STATS, &x));

    /* Errors. */
    SHOW("statx of nothing", sx(AT_FDCWD, "/tmp/none", 0, STATX_BASIC_STATS, &x));
    SHOW("statx through a file", sx(AT_FDCWD, "/tmp/sx/x", 0, STATX_BASIC_STATS, &x));
    SHOW("statx with STATX__RESERVED", sx(AT_FDCWD, "/tmp/sx", 0, STATX__RESERVED, &x));
    SHOW("statx with both sync flags", sx(AT_FDCWD, "/tmp/sx", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
                                         STATX_BASIC_STATS, &x));
    SHOW("statx with flag 0x10000", sx(AT_FDCWD, "/tmp/sx", 0x10000, STATX_BASIC_STATS, &x));
    SHOW("statx with flag AT_REMOVEDIR", sx(AT_FDCWD, "/tmp/sx", 0x200, STATX_BASIC_STATS, &x));
    SHOW("statx into a bad pointer", syscall(SYS_statx, AT_FDCWD, "/tmp/sx", 0, STATX_BASIC_STATS, hidden(8)));
    SHOW("statx of a bad path pointer", syscall(SYS_statx, AT_FDCWD, hidden(8), 0, STATX_BASIC_STATS, &x));
    SHOW("statx of a bad path with a bad flag", syscall(SYS_statx, AT_FDCWD, hidden(8), 0x10000, STATX_BASIC_STATS, &x));
    SHOW("statx of nothing with a reserved mask", sx(AT_FDCWD, "/tmp/none", 0, STATX__RESERVED, &x));
    SHOW("statx of an empty path with a bad flag", sx(AT_FDCWD, "", 0x10000, STATX_BASIC_STATS, &x));
    unlink("/tmp/sx-link");
    unlink("/tmp/sx");
    return 0;
}
