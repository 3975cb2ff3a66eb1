/*
 * mount(2) and umount2(2) with hostile arguments, on a system whose disk
 * is /dev/vda (ext2) mounted at /data: wild pointers in each argument,
 * names past PATH_MAX, unknown flags and types, and calls that make no
 * sense; each must fail with the error Linux gives (the "M|" lines,
 * compared with Linux line for line: tests/host/test_data_mount.py).
 * Then 3,000 random calls built from good and bad pieces (not compared:
 * Linux mounts what Petrel refuses, such as tmpfs and binds), after which
 * every mount is taken down, the disk is mounted at /data again and a file
 * written and read there: the system still works, on both sides alike.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

#define KERNEL_PTR  0xffff000000001000ul
#define HIGH_PTR    0x0000700000000000ul        /* in the user range on Linux, mapped nowhere */

static const uintptr_t bad_ptrs[] = { 0, 1, 4095, KERNEL_PTR, HIGH_PTR, (uintptr_t)-1 };
static const char *const bad_names[] = { "NULL", "1", "4095", "kernel", "high", "-1" };

static long mount_(uintptr_t src, uintptr_t dst, uintptr_t type, unsigned long flags, uintptr_t data)
{
    return syscall(SYS_mount, src, dst, type, flags, data);
}

static long umount_(uintptr_t dst, long flags) { return syscall(SYS_umount2, dst, flags); }

static uint64_t rng = 0x6d6f756e74ull;
static uint64_t next(void) { return xorshift64(&rng); }

#define P(s) ((uintptr_t)(s))

/* A string of n copies of c, then NUL, in a buffer of its own. */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = 0;
    return s;
}

int main(void)
{
    char name[96];
    mkdir("/mnt", 0755);
    mkdir("/mnt/h", 0755);
    write_text("/mnt/file", "x\n");

    /* Wild pointers, one argument at a time, the others good. */
    for (unsigned i = 0; i < sizeof(bad_ptrs) / sizeof(bad_ptrs[0]); i++) {
        uintptr_t b = bad_ptrs[i];
#define TRY(what, call) do { snprintf(name, sizeof(name), "M|%s %s", what, bad_names[i]); SHOW(name, call); } while (0)
        TRY("mount source", mount_(b, P("/mnt/h"), P("ext2"), 0, 0));
        TRY("mount target", mount_(P("/dev/vda"), b, P("ext2"), 0, 0));
        TRY("mount type", mount_(P("/dev/vda"), P("/mnt/h"), b, 0, 0));
        umount_(P("/data"), 0);                 /* (data that can be read mounts the disk) */
        TRY("mount data", mount_(P("/dev/vda"), P("/data"), P("ext2"), 0, b));
        if (access("/data/lost+found", F_OK) != 0)
            mount_(P("/dev/vda"), P("/data"), P("ext2"), 0, 0);
        TRY("remount data", mount_(P("/dev/vda"), P("/data"), P("ext2"), MS_REMOUNT, b));
        TRY("umount2 target", umount_(b, 0));
        TRY("umount2 target, detached", umount_(b, MNT_DETACH));
#undef TRY
    }

    /* Names too long, types unknown, nonsense. */
    char *longpath = repeat('a', 5000), *longname = repeat('b', 300), *longtype = repeat('t', 5000);
    char *longopts = repeat('o', 5000);
    SHOW("M|mount onto a path past PATH_MAX", mount_(P("/dev/vda"), P(longpath), P("ext2"), 0, 0));
    SHOW("M|mount from a path past PATH_MAX", mount_(P(longpath), P("/mnt/h"), P("ext2"), 0, 0));
    char *longlast = malloc(strlen(longname) + 8);
    sprintf(longlast, "/mnt/%s", longname);
    SHOW("M|mount onto a name past NAME_MAX", mount_(P("/dev/vda"), P(longlast), P("ext2"), 0, 0));
    SHOW("M|mount with a type past a page", mount_(P("/dev/vda"), P("/mnt/h"), P(longtype), 0, 0));
    SHOW("M|mount with options past a page", mount_(P("/dev/vda"), P("/mnt/h"), P("ext2"), 0, P(longopts)));
    SHOW("M|mount with an empty type", mount_(P("/dev/vda"), P("/mnt/h"), P(""), 0, 0));
    SHOW("M|mount with an unknown type", mount_(P("/dev/vda"), P("/mnt/h"), P("nosuchfs"), 0, 0));
    SHOW("M|mount with an empty source", mount_(P(""), P("/mnt/h"), P("ext2"), 0, 0));
    SHOW("M|mount onto an empty target", mount_(P("/dev/vda"), P(""), P("ext2"), 0, 0));
    SHOW("M|mount onto a file", mount_(P("/dev/vda"), P("/mnt/file"), P("ext2"), 0, 0));
    SHOW("M|mount onto a missing directory", mount_(P("/dev/vda"), P("/mnt/none/x"), P("ext2"), 0, 0));
    SHOW("M|mount from a regular file", mount_(P("/mnt/file"), P("/mnt/h"), P("ext2"), 0, 0));
    SHOW("M|mount from a character device", mount_(P("/dev/null"), P("/mnt/h"), P("ext2"), 0, 0));
    SHOW("M|mount from a missing device", mount_(P("/dev/nosuch"), P("/mnt/h"), P("ext2"), 0, 0));
    SHOW("M|mount with unknown options", mount_(P("/dev/vda"), P("/mnt/h"), P("ext2"), 0, P("frobnicate=3")));
    SHOW("M|mount the mounted disk again", mount_(P("/dev/vda"), P("/data"), P("ext2"), 0, 0));
    SHOW("M|remount a directory that is no mount", mount_(0, P("/mnt/h"), 0, MS_REMOUNT, 0));
    SHOW("M|remount a missing path", mount_(0, P("/mnt/none"), 0, MS_REMOUNT, 0));
    SHOW("M|mount with MS_NOUSER", mount_(P("/dev/vda"), P("/mnt/h"), P("ext2"), 1ul << 31, 0));
    SHOW("M|two propagation types", mount_(0, P("/data"), 0, MS_SLAVE | MS_PRIVATE, 0));
    SHOW("M|a propagation type with another flag", mount_(0, P("/data"), 0, MS_PRIVATE | MS_RDONLY, 0));
    SHOW("M|a propagation type with per-mount flags", mount_(0, P("/data"), 0, MS_PRIVATE | MS_NOSUID | MS_REC, 0));
    SHOW("M|a propagation type on no mount", mount_(0, P("/mnt/h"), 0, MS_PRIVATE, 0));
    SHOW("M|remount with unknown options", mount_(0, P("/data"), 0, MS_REMOUNT, P("frobnicate")));
    SHOW("M|mount with unknown options from a missing device",
         mount_(P("/dev/nosuch"), P("/mnt/h"), P("ext2"), 0, P("frobnicate")));
    SHOW("M|umount2 with unknown flags", umount_(P("/data"), 0x100));
    SHOW("M|umount2 expire and force", umount_(P("/data"), MNT_EXPIRE | MNT_FORCE));
    SHOW("M|umount2 expire and detach", umount_(P("/data"), MNT_EXPIRE | MNT_DETACH));
    SHOW("M|umount2 of no mount", umount_(P("/mnt/h"), 0));
    SHOW("M|umount2 of a file", umount_(P("/mnt/file"), 0));
    SHOW("M|umount2 of a missing path", umount_(P("/mnt/none"), 0));
    SHOW("M|umount2 of a path past PATH_MAX", umount_(P(longpath), 0));
    SHOW("M|umount2 of an empty path", umount_(P(""), 0));
    SHOW("M|umount2 nofollow of a missing path", umount_(P("/mnt/none"), UMOUNT_NOFOLLOW));
    SHOW("M|the disk is still at /data", access("/data/lost+found", F_OK));

    /* Random calls of good and bad pieces. */
    static const char *const paths[] = { "/data", "/mnt/h", "/mnt/file", "/mnt/none", "/dev/vda", "/dev/null", "" };
    static const char *const types[] = { "ext2", "ext4", "tmpfs", "proc", "nosuchfs", "" };
    static const char *const opts[] = { "ro", "rw,noatime", "errors=remount-ro", "frobnicate", "", "sync,nodev" };
    static const unsigned long flag_bits[] = { MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_SYNCHRONOUS, MS_REMOUNT,
                                               MS_MANDLOCK, MS_DIRSYNC, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_MOVE,
                                               MS_REC, MS_SILENT, MS_PRIVATE, MS_SLAVE, MS_SHARED, MS_UNBINDABLE,
                                               MS_RELATIME, MS_STRICTATIME, MS_LAZYTIME, 1ul << 31, 1ul << 40 };
    for (int k = 0; k < 3000; k++) {
        uint64_t r = next();
        uintptr_t pick[4];
        for (int j = 0; j < 4; j++) {
            uint64_t q = next();
            if (q % 5 == 0)
                pick[j] = bad_ptrs[(q >> 8) % (sizeof(bad_ptrs) / sizeof(bad_ptrs[0]))];
            else if (j == 2)
                pick[j] = P(types[(q >> 8) % (sizeof(types) / sizeof(types[0]))]);
            else if (j == 3)
                pick[j] = P(opts[(q >> 8) % (sizeof(opts) / sizeof(opts[0]))]);
            else
                pick[j] = P(paths[(q >> 8) % (sizeof(paths) / sizeof(paths[0]))]);
        }
        unsigned long flags = 0;
        for (int j = 0; j < 3; j++)
            if (next() % 2)
                flags |= flag_bits[next() % (sizeof(flag_bits) / sizeof(flag_bits[0]))];
        if (r % 3 == 0)
            umount_(pick[1], (long)(next() % 16) | (next() % 8 == 0 ? (long)next() : 0));
        else
            mount_(pick[0], pick[1], pick[2], flags, pick[3]);
    }

    /* Everything down, the disk back at /data, and a file there. */
    int downs = 0;
    while (umount_(P("/mnt/h"), 0) == 0 && downs < 100)
        downs++;
    while (umount_(P("/data"), 0) == 0 && downs < 200)
        downs++;
    SHOW("M|mount the disk at /data again", mount_(P("/dev/vda"), P("/data"), P("ext2"), 0, 0));
    write_text("/data/mounthostile.txt", "still here\n");
    char back[32] = { 0 };
    int fd = open("/data/mounthostile.txt", O_RDONLY);
    SHOW("M|read back what was written on the disk", read(fd, back, sizeof(back) - 1));
    printf("M|it says %s", back);
    close(fd);
    unlink("/data/mounthostile.txt");
    printf("M|mounthostile: survived\n");
    return 0;
}
