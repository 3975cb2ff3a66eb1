/*
 * mount(2) and umount2(2).
 *
 * The tree's own file systems (the root, devtmpfs on /dev, devpts, the
 * tmpfs of /dev/shm, proc) are mounted when the personality starts and
 * stay: they are its own, so umount2 says EBUSY of them, and a remount
 * that would change one says EPERM (one that changes nothing succeeds).
 *
 * What mount(2) mounts is the machine's disk, /dev/vda, with its ext2
 * file system (data.c), type "ext2", the one disk file system
 * /proc/filesystems lists (an image with features the file system does
 * not read is refused with EINVAL, as Linux refuses it). One mount of it
 * at a time, on a directory of the root, devtmpfs or the tmpfs; the
 * flags of the mount (read-only, nosuid, nodev, noexec, sync, the atime
 * ones) show in /proc/mounts and statfs, and noexec, nodev and sync are
 * kept. A remount changes them (read-only: EBUSY while a file is open for
 * writing). umount2 says EBUSY while anything of the disk's is held: an
 * open file, a working directory (MNT_DETACH too: no lazy unmount).
 * Bind mounts, moves and shared subtrees are not made (EINVAL); making
 * a mount private or a slave is what every mount here is already (0).
 * The arguments are taken in Linux's order (the type, the source and the
 * options copied, the target looked up, then the flags, the options
 * parsed, the source looked up), so a bad call fails as on Linux
 * (tests/linux/mounthostile.c).
 */
#include "lx.h"

#define MS_MGC_MSK      0xffff0000u
#define MS_MGC_VAL      0xc0ed0000u
#define MS_NOUSER       (1u << 31)
#define MOUNT_STR_MAX   4096u           /* PATH_MAX: what strndup_user takes of the type and source */
#define MNT_FORCE       1
#define MNT_DETACH      2
#define MNT_EXPIRE      4
#define UMOUNT_NOFOLLOW 8
#define ATIME_FLAGS     (LX_MS_NOATIME | LX_MS_NODIRATIME | LX_MS_RELATIME | LX_MS_STRICTATIME)

/* The flags each of the tree's own file systems is mounted with. */
static uint64_t fixed_flags(int fs)
{
    static const uint64_t flags[LX_FS_COUNT] = {
        [LX_FS_ROOT] = 0, [LX_FS_DEV] = LX_MS_RELATIME, [LX_FS_PROC] = LX_MS_RELATIME,
        [LX_FS_PTS] = LX_MS_NOSUID | LX_MS_NOEXEC | LX_MS_RELATIME,
        [LX_FS_SHM] = LX_MS_NOSUID | LX_MS_NODEV | LX_MS_RELATIME,
    };
    return flags[fs];
}

/* The flags a mount keeps, as Linux's path_mount makes them: relatime
 * unless noatime or strictatime; a remount that names no atime flag
 * keeps the mount's. */
static uint64_t kept_flags(uint64_t flags, uint64_t old)
{
    uint64_t kept = flags & LX_MS_KEPT & ~(uint64_t)LX_MS_RELATIME;
    if (!(flags & LX_MS_NOATIME))
        kept |= LX_MS_RELATIME;
    if (flags & LX_MS_STRICTATIME)
        kept &= ~(uint64_t)(LX_MS_RELATIME | LX_MS_NOATIME);
    if ((flags & LX_MS_REMOUNT) && !(flags & ATIME_FLAGS))
        kept = (kept & ~(uint64_t)ATIME_FLAGS) | (old & ATIME_FLAGS);
    return kept;
}

/* The options of the data string the ext2 file system takes: each says
 * what it does anyway (errors go on, df counts as BSD's, no extended
 * attributes or ACLs). 0, or EINVAL with the word on the console. */
static int64_t check_options(struct lx_ctx *c, uint64_t udata)
{
    char data[256];
    if (!udata)
        return 0;
    int64_t len = lx_copy_str(c, data, udata, sizeof(data));
    if (len == -LX_ENAMETOOLONG)
        return -LX_EINVAL;
    if (len < 0)
        return len;
    static const char *const known[] = { "errors=continue", "bsddf", "nouser_xattr", "noacl", "rw", "ro" };
    for (char *w = data; *w;) {
        uint64_t n = 0;
        while (w[n] && w[n] != ',')
            n++;
        int ok = n == 0;
        for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]) && !ok; i++)
            ok = strlen(known[i]) == n && memcmp(known[i], w, n) == 0;
        if (!ok) {
            lx_log("EXT2-fs (vda): unrecognized mount option \"%.*s\" or missing value", (int)n, w);
            return -LX_EINVAL;
        }
        w += n + (w[n] == ',');
    }
    return 0;
}

/* A string mount(2) copies whole (its type, its source), as
 * strndup_user(s, PATH_MAX) finds it: its length, -EFAULT, or -EINVAL
 * when no NUL ends it within PATH_MAX bytes. */
static int64_t mount_strlen(struct lx_ctx *c, uint64_t src)
{
    char chunk[64];
    for (uint64_t done = 0; done < MOUNT_STR_MAX; done += sizeof(chunk)) {
        uint64_t max = MOUNT_STR_MAX - done < sizeof(chunk) ? MOUNT_STR_MAX - done : sizeof(chunk);
        int64_t n = lx_copy_str(c, chunk, src + done, max);
        if (n != -LX_ENAMETOOLONG)
            return n < 0 ? n : (int64_t)done + n;
    }
    return -LX_EINVAL;
}

/* The source names the disk: 0, or EINVAL (none, or empty: lookup_bdev),
 * ENOENT (no such path), ENOTBLK (not a block device), EACCES (on a nodev
 * mount), ENXIO (not this disk). */
static int64_t check_source(struct lx_ctx *c, uint64_t usource)
{
    char first = 0;
    if (!usource || lx_copy_in(c, &first, usource, 1) || !first)
        return -LX_EINVAL;                      /* "No source specified" */
    int32_t n = lx_node_at_path(c, usource, 1);
    if (n < 0)
        return n;
    struct lx_node *x = lx_node(n);
    if ((x->mode & LX_S_IFMT) != LX_S_IFBLK)
        return -LX_ENOTBLK;
    if (lx_node_fs(n) == LX_FS_DATA && (lx_data_mount_flags() & LX_MS_NODEV))
        return -LX_EACCES;
    return x->dev == LX_DEV_DISK ? 0 : -LX_ENXIO;
}

int64_t lx_mount_disk(int32_t n, uint64_t flags)
{
    struct lx_node *x = lx_node(n);
    if ((x->mode & LX_S_IFMT) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    if (n != LX_ROOT && (!x->nlink || x->dent < 0))
        return -LX_ENOENT;                      /* a removed directory (a working directory's "."), as Linux says */
    int fs = lx_node_fs(n);
    if (fs != LX_FS_ROOT && fs != LX_FS_DEV && fs != LX_FS_SHM)
        return -LX_EINVAL;                      /* (not on /proc, /dev/pts, nor the disk itself) */
    if (n == LX_ROOT || lx_is_mount_point(n))
        return -LX_EBUSY;                       /* (no mount over another) */
    return lx_data_mount(n, flags);
}

static int64_t remount(struct lx_ctx *c, int32_t n, uint64_t flags, uint64_t udata)
{
    int root = n == lx_data_mount_root();
    if (!root && n != LX_ROOT && !lx_is_mount_point(n))
        return -LX_EINVAL;                      /* not the root of a mount */
    if (root) {
        int64_t err = (flags & LX_MS_BIND) ? 0 : check_options(c, udata);
        return err ? err : lx_data_remount(c, kept_flags(flags, lx_data_mount_flags()));
    }
    uint64_t old = fixed_flags(lx_node_fs(n));
    return kept_flags(flags, old) == old ? 0 : -LX_EPERM;
}

int64_t lx_sys_mount(struct lx_ctx *c, uint64_t usource, uint64_t utarget, uint64_t utype, uint64_t flags,
                     uint64_t udata)
{
    /* As Linux's: the type, the source and the options copied first
     * (a page of options, EFAULT only when none of it can be read), then
     * the target looked up, then the flags. */
    char type[16], first;
    int64_t len = utype ? mount_strlen(c, utype) : 0, slen = usource ? mount_strlen(c, usource) : 0;
    if (len < 0)
        return len;
    int known = len > 0 && len < (int64_t)sizeof(type) && lx_copy_str(c, type, utype, sizeof(type)) == len &&
                !strcmp(type, "ext2");
    if (slen < 0)
        return slen;
    if (udata && lx_copy_in(c, &first, udata, 1))
        return -LX_EFAULT;
    int32_t n = lx_node_at_path(c, utarget, 1);
    if (n < 0)
        return n;
    if ((flags & MS_MGC_MSK) == MS_MGC_VAL)
        flags &= ~(uint64_t)MS_MGC_MSK;         /* the magic number of old programs */
    if (flags & MS_NOUSER)
        return -LX_EINVAL;
    if (flags & LX_MS_REMOUNT)
        return remount(c, n, flags, udata);     /* (with MS_BIND too: the mount's flags, which are the same here) */
    if (flags & LX_MS_BIND)
        return -LX_EINVAL;                      /* not made here */
    if (flags & (LX_MS_SHARED | LX_MS_PRIVATE | LX_MS_SLAVE | LX_MS_UNBINDABLE)) {
        uint32_t kind = (uint32_t)flags & ~(uint32_t)(LX_MS_REC | LX_MS_SILENT);    /* (an int, as do_change_type's) */
        if (n != LX_ROOT && !lx_is_mount_point(n))
            return -LX_EINVAL;                  /* not the root of a mount */
        if (kind & (kind - 1))
            return -LX_EINVAL;                  /* more than one kind, or any other flag with it */
        return kind == LX_MS_SHARED ? -LX_EINVAL : 0;   /* (not made here; every mount is private already) */
    }
    if (flags & LX_MS_MOVE)
        return -LX_EINVAL;                      /* not made here */
    if (!utype)
        return -LX_EINVAL;
    if (!known)
        return -LX_ENODEV;                      /* (the disk's file system is the one mount(2) mounts) */
    int64_t err = check_options(c, udata);
    if (!err)
        err = check_source(c, usource);
    if (err)
        return err;
    if (n == lx_data_mount_root())
        return -LX_EBUSY;                       /* the disk on the same place again */
    return lx_mount_disk(n, kept_flags(flags, 0));
}

int64_t lx_sys_umount2(struct lx_ctx *c, uint64_t utarget, uint64_t flags)
{
    if (flags & ~(uint64_t)(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
        return -LX_EINVAL;
    int32_t n = lx_node_at_path(c, utarget, !(flags & UMOUNT_NOFOLLOW));
    if (n < 0)
        return n;
    if (n == lx_data_mount_root())
        return (flags & MNT_EXPIRE) ? -LX_EINVAL : lx_data_umount(c);
    if (n == LX_ROOT || lx_is_mount_point(n))
        return -LX_EBUSY;                       /* the tree's own */
    return -LX_EINVAL;                          /* not the root of a mount */
}
