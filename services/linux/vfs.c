/*
 * The file system calls that change names and attributes: mkdirat,
 * unlinkat, renameat2, linkat, symlinkat, fchmod(at), fchown(at),
 * utimensat, faccessat(2), (f)truncate, fallocate, fsync, statfs and
 * sendfile. The store they change is rootfs.c's; see its comment for the
 * model (nodes, entries, contents in place until written, the limits).
 *
 * One user, root: permissions are kept and reported, and only the
 * execute bits are checked (as Linux checks them for root). Errors come
 * in Linux's order, which the oracle tests hold (tests/linux/fs*.c).
 */
#include "lx.h"

#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR        0x200
#define AT_EACCESS          0x200
#define AT_SYMLINK_FOLLOW   0x400
#define AT_EMPTY_PATH       0x1000
#define RENAME_NOREPLACE    1
#define RENAME_EXCHANGE     2
#define RENAME_WHITEOUT     4
#define UTIME_NOW           ((1l << 30) - 1)
#define UTIME_OMIT          ((1l << 30) - 2)
#define S_ISUID             04000
#define S_ISGID             02000
#define S_IXGRP             00010
#define MAX_RW_COUNT        0x7ffff000ull
#define DEVPTS_SUPER_MAGIC  0x1cd1
#define TMPFS_MAGIC         0x01021994
#define PROC_SUPER_MAGIC    0x9fa0
#define ST_VALID            0x20

static char path_a[LX_PATH_MAX], path_b[LX_PATH_MAX];  /* the paths of the call being served */

static uint32_t kind(const struct lx_node *n) { return n->mode & LX_S_IFMT; }

/* The node a path call names: `path` from dirfd, following a final link
 * when `follow`; an empty path names dirfd itself with AT_EMPTY_PATH. */
static int32_t node_at(struct lx_ctx *c, int64_t dirfd, uint64_t upath, int follow, int empty_ok)
{
    int32_t dir = 0;
    int64_t len = lx_path_at(c, dirfd, upath, path_a, &dir);
    if (len < 0)
        return (int32_t)len;
    if (len == 0) {
        if (!empty_ok)
            return -LX_ENOENT;
        if ((int32_t)dirfd == AT_FDCWD)
            return c->p->cwd;
        struct lx_file *f = (int32_t)dirfd >= 0 ? lx_fd_file(c->p, (uint32_t)dirfd) : NULL;
        if (!f)
            return -LX_EBADF;
        return f->node >= 0 ? f->node : -LX_EINVAL;    /* a pipe has no node of ours */
    }
    return lx_lookup(dir, path_a, follow);
}

int32_t lx_node_at_path(struct lx_ctx *c, uint64_t upath, int follow)
{
    return node_at(c, AT_FDCWD, upath, follow, 0);
}

/* The open file of fd for a call that changes it: EBADF for none or an O_PATH one. */
static struct lx_file *changing(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = lx_fd_file(c->p, fd);
    return f && !(f->flags & O_PATH) ? f : NULL;
}

/* Where a new name goes: the last name of `path` from dirfd, which must
 * not exist. 0 (l filled) or a negated errno: EEXIST for "." and an
 * existing name, ENOENT for "name/" unless `dir_ok`. */
static int new_name(struct lx_ctx *c, int64_t dirfd, const char *path, struct lx_last *l, int dir_ok)
{
    int32_t dir = lx_start_dir(c, dirfd, path);
    if (dir < 0)
        return dir;
    int err = lx_lookup_last(dir, path, l);
    if (err)
        return err;
    if (l->type != LX_LAST_NORM || l->node >= 0)
        return -LX_EEXIST;
    if (l->node != -LX_ENOENT)
        return l->node;
    if (l->slash && !dir_ok)
        return -LX_ENOENT;
    if (!lx_node(l->dir)->nlink)
        return -LX_ENOENT;                      /* in a removed directory */
    if (lx_node(l->dir)->proc)
        return -LX_ENOENT;                      /* /proc makes no names: its lookup fails, as Linux's */
    return 0;
}

int64_t lx_sys_mkdirat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t mode)
{
    int64_t len = lx_path_in(c, path_a, upath);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    struct lx_last l;
    int err = new_name(c, dirfd, path_a, &l, 1);
    if (!err)
        err = (int)lx_data_writable(l.dir);    /* EROFS after EEXIST, as Linux's filename_create */
    if (err)
        return err;
    if (lx_node(l.dir)->fs == LX_FS_DATA)
        return lx_data_create(l.dir, l.name, l.len, LX_S_IFDIR | ((uint32_t)mode & 01777 & ~lx_umask_of(c->p)), 0,
                              NULL, 0, NULL);
    int32_t n = lx_node_new(LX_S_IFDIR | ((uint32_t)mode & 01777 & ~lx_umask_of(c->p)));
    if (n < 0)
        return n;
    if ((err = lx_link(l.dir, l.name, l.len, n)) != 0)
        lx_node_maybe_free(n);
    return err;
}

int64_t lx_sys_unlinkat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t flags)
{
    if ((uint32_t)flags & ~(uint32_t)AT_REMOVEDIR)
        return -LX_EINVAL;
    int32_t dir = 0;
    int64_t len = lx_path_at(c, dirfd, upath, path_a, &dir);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    struct lx_last l;
    int err = lx_lookup_last(dir, path_a, &l);
    if (err)
        return err;
    if ((uint32_t)flags & AT_REMOVEDIR) {
        if (l.type == LX_LAST_DOT)
            return -LX_EINVAL;
        if (l.type == LX_LAST_DOTDOT)
            return -LX_ENOTEMPTY;
        if (l.type == LX_LAST_ROOT)
            return -LX_EBUSY;
        if ((err = (int)lx_data_writable(l.dir)) != 0)
            return err;
        if (l.node < 0)
            return l.node;
        if (kind(lx_node(l.node)) != LX_S_IFDIR)
            return -LX_ENOTDIR;
        if (l.dent < 0 || lx_node(l.dir)->proc)
            return -LX_EPERM;                   /* /proc's */
        if (lx_is_mount_point(l.node))
            return -LX_EBUSY;
        if (lx_node(l.dir)->fs == LX_FS_DATA)
            return lx_data_unlink(l.dent, 1);  /* (the disk says whether it is empty) */
        if (lx_node(l.node)->entries)
            return -LX_ENOTEMPTY;
    } else {
        if (l.type != LX_LAST_NORM)
            return -LX_EISDIR;
        if ((err = (int)lx_data_writable(l.dir)) != 0)
            return err;
        if (l.node < 0)
            return l.node;
        if (kind(lx_node(l.node)) == LX_S_IFDIR)
            return -LX_EISDIR;
        if (l.slash)
            return -LX_ENOTDIR;
        if (l.dent < 0 || lx_node(l.dir)->proc)
            return -LX_EPERM;
    }
    if (lx_node(l.dir)->fs == LX_FS_DATA)
        return lx_data_unlink(l.dent, 0);
    lx_unlink(l.dent);
    return 0;
}

int64_t lx_sys_renameat2(struct lx_ctx *c, int64_t olddirfd, uint64_t oldpath, int64_t newdirfd, uint64_t newpath,
                         uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
        return -LX_EINVAL;
    if ((fl & RENAME_NOREPLACE) && (fl & RENAME_EXCHANGE))
        return -LX_EINVAL;
    if (fl & RENAME_WHITEOUT)
        return -LX_EINVAL;                      /* whiteouts are for overlay file systems: none here */
    int32_t odir = 0, ndir = 0;
    int64_t olen = lx_path_at(c, olddirfd, oldpath, path_a, &odir);
    if (olen <= 0)
        return olen ? olen : -LX_ENOENT;
    struct lx_last o, n;
    int err = lx_lookup_last(odir, path_a, &o);
    if (err)
        return err;
    int64_t nlen = lx_path_at(c, newdirfd, newpath, path_b, &ndir);
    if (nlen <= 0)
        return nlen ? nlen : -LX_ENOENT;
    if ((err = lx_lookup_last(ndir, path_b, &n)) != 0)
        return err;
    if (lx_node_fs(o.dir) != lx_node_fs(n.dir))
        return -LX_EXDEV;                       /* another file system: a name does not move there */
    if (o.type != LX_LAST_NORM)
        return -LX_EBUSY;
    if (n.type != LX_LAST_NORM)
        return (fl & RENAME_NOREPLACE) ? -LX_EEXIST : -LX_EBUSY;
    if ((err = (int)lx_data_writable(o.dir)) != 0)
        return err;
    if (o.node < 0)
        return o.node;
    if (n.node < 0 && n.node != -LX_ENOENT)
        return n.node;
    if ((fl & RENAME_EXCHANGE) && n.node < 0)
        return n.node;
    if ((fl & RENAME_NOREPLACE) && n.node >= 0)
        return -LX_EEXIST;
    if (o.dent < 0 || lx_node(o.dir)->proc || lx_node(n.dir)->proc)
        return -LX_EPERM;                       /* /proc's names do not move */
    if (!lx_node(n.dir)->nlink)
        return -LX_ENOENT;
    int odir_is = kind(lx_node(o.node)) == LX_S_IFDIR;
    int ndir_is = n.node >= 0 && kind(lx_node(n.node)) == LX_S_IFDIR;
    if (fl & RENAME_EXCHANGE) {
        if ((!odir_is && o.slash) || (!ndir_is && n.slash))
            return -LX_ENOTDIR;
    } else if (!odir_is && (o.slash || n.slash)) {
        return -LX_ENOTDIR;
    }
    /* Neither may end up inside itself. */
    if (odir_is && lx_is_below(n.dir, o.node))
        return -LX_EINVAL;
    if (ndir_is && lx_is_below(o.dir, n.node))
        return (fl & RENAME_EXCHANGE) ? -LX_EINVAL : -LX_ENOTEMPTY;
    if (lx_is_mount_point(o.node) || (n.node >= 0 && lx_is_mount_point(n.node)))
        return -LX_EBUSY;
    if (o.node == n.node)
        return 0;                               /* two names of one file: nothing to do */
    if (lx_node_fs(o.dir) == LX_FS_DATA && (fl & RENAME_EXCHANGE))
        return -LX_EINVAL;                      /* (ext2 here exchanges nothing) */
    if (fl & RENAME_EXCHANGE) {
        lx_exchange(o.dent, n.dent);
        return 0;
    }
    if (n.node >= 0) {
        if (odir_is && !ndir_is)
            return -LX_ENOTDIR;
        if (!odir_is && ndir_is)
            return -LX_EISDIR;
        if (ndir_is && lx_node(n.node)->entries && lx_node_fs(n.node) != LX_FS_DATA)
            return -LX_ENOTEMPTY;
    }
    if (lx_node_fs(o.dir) == LX_FS_DATA)
        return lx_data_rename(&o, &n);         /* (the disk says whether a directory replaced is empty) */
    if ((err = lx_rename(o.dent, n.dir, n.name, n.len)) != 0)
        return err;
    if (n.dent >= 0)
        lx_unlink(n.dent);                      /* the file it replaced */
    return 0;
}

int64_t lx_sys_linkat(struct lx_ctx *c, int64_t olddirfd, uint64_t oldpath, int64_t newdirfd, uint64_t newpath,
                      uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t old = node_at(c, olddirfd, oldpath, (fl & AT_SYMLINK_FOLLOW) != 0, (fl & AT_EMPTY_PATH) != 0);
    if (old < 0)
        return old;
    int64_t len = lx_path_in(c, path_b, newpath);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    struct lx_last l;
    int err = new_name(c, newdirfd, path_b, &l, 0);
    if (!err)
        err = (int)lx_data_writable(l.dir);
    if (err)
        return err;
    struct lx_node *n = lx_node(old);
    if (lx_node_fs(old) != lx_node_fs(l.dir))
        return -LX_EXDEV;
    if (kind(n) == LX_S_IFDIR || n->proc)
        return -LX_EPERM;
    if (!n->nlink)
        return -LX_ENOENT;                      /* unlinked: only its descriptors hold it */
    if (n->fs == LX_FS_DATA)
        return lx_data_link(old, l.dir, l.name, l.len);
    if ((err = lx_link(l.dir, l.name, l.len, old)) != 0)
        return err;
    n->ctime = lx_now();
    return 0;
}

int64_t lx_sys_symlinkat(struct lx_ctx *c, uint64_t target, int64_t newdirfd, uint64_t linkpath)
{
    int64_t tlen = lx_path_in(c, path_a, target);
    if (tlen <= 0)
        return tlen ? tlen : -LX_ENOENT;
    int64_t len = lx_path_in(c, path_b, linkpath);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    struct lx_last l;
    int err = new_name(c, newdirfd, path_b, &l, 0);
    if (!err)
        err = (int)lx_data_writable(l.dir);
    if (err)
        return err;
    if (lx_node(l.dir)->fs == LX_FS_DATA)
        return tlen >= (int64_t)lx_data_block_size() ? -LX_ENAMETOOLONG :
               lx_data_create(l.dir, l.name, l.len, LX_S_IFLNK | 0777, 0, path_a, (uint32_t)tlen, NULL);
    int32_t node = lx_node_new(LX_S_IFLNK | 0777);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if ((err = lx_node_resize(n, (uint64_t)tlen)) == 0) {
        memcpy(n->mem, path_a, (uint64_t)tlen);
        err = lx_link(l.dir, l.name, l.len, node);
    }
    if (err)
        lx_node_maybe_free(node);
    return err;
}

/* ---------------------------------------------------------------- the creation mask */
/* The mask is the process's own, copied at fork as on Linux. */
uint32_t lx_umask_of(const struct lx_proc *p)
{
    return p->umask;
}

int64_t lx_sys_umask(struct lx_ctx *c, uint64_t mask)
{
    uint32_t old = c->p->umask;
    c->p->umask = (uint32_t)mask & 0777;
    return old;
}

/* ---------------------------------------------------------------- attributes */

static int64_t chmod_node(int32_t node, uint64_t mode)
{
    struct lx_node *n = lx_node(node);
    if (n->proc)
        return -LX_EPERM;
    if (lx_data_writable(node))
        return -LX_EROFS;
    if (n->fs == LX_FS_DATA)
        return lx_data_setattr(node, LX_ATTR_MODE, (uint32_t)mode & 07777, 0, 0, NULL, NULL);
    n->mode = kind(n) | ((uint32_t)mode & 07777);
    n->ctime = lx_now();
    return 0;
}

int64_t lx_sys_fchmodat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t mode, uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t node = node_at(c, dirfd, upath, !(fl & AT_SYMLINK_NOFOLLOW), (fl & AT_EMPTY_PATH) != 0);
    if (node < 0)
        return node;
    if (kind(lx_node(node)) == LX_S_IFLNK)
        return -LX_EOPNOTSUPP;                  /* a link's own mode does not change */
    return chmod_node(node, mode);
}

int64_t lx_sys_fchmod(struct lx_ctx *c, uint64_t fd, uint64_t mode)
{
    struct lx_file *f = changing(c, fd);
    if (!f)
        return -LX_EBADF;
    return f->node < 0 ? 0 : chmod_node(f->node, mode);     /* a pipe's mode is not kept */
}

/* Owner and group (-1: unchanged); like Linux, a change clears set-user-ID
 * and (with group execute) set-group-ID of a file that is not a directory. */
static int64_t chown_node(int32_t node, uint32_t uid, uint32_t gid)
{
    struct lx_node *n = lx_node(node);
    if (n->proc)
        return -LX_EPERM;
    if (lx_data_writable(node))
        return -LX_EROFS;
    if (n->fs == LX_FS_DATA) {
        uint32_t m = n->mode;
        if (kind(n) != LX_S_IFDIR) {
            m &= ~(uint32_t)S_ISUID;
            if (m & S_IXGRP)
                m &= ~(uint32_t)S_ISGID;
        }
        return lx_data_setattr(node, LX_ATTR_MODE | (uid != ~0u ? LX_ATTR_UID : 0) | (gid != ~0u ? LX_ATTR_GID : 0),
                               m & 07777, uid, gid, NULL, NULL);
    }
    if (uid != ~0u)
        n->uid = uid;
    if (gid != ~0u)
        n->gid = gid;
    if (kind(n) != LX_S_IFDIR) {
        n->mode &= ~(uint32_t)S_ISUID;
        if (n->mode & S_IXGRP)
            n->mode &= ~(uint32_t)S_ISGID;
    }
    n->ctime = lx_now();
    return 0;
}

int64_t lx_sys_fchownat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t uid, uint64_t gid, uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t node = node_at(c, dirfd, upath, !(fl & AT_SYMLINK_NOFOLLOW), (fl & AT_EMPTY_PATH) != 0);
    return node < 0 ? node : chown_node(node, (uint32_t)uid, (uint32_t)gid);
}

int64_t lx_sys_fchown(struct lx_ctx *c, uint64_t fd, uint64_t uid, uint64_t gid)
{
    struct lx_file *f = changing(c, fd);
    if (!f)
        return -LX_EBADF;
    return f->node < 0 ? 0 : chown_node(f->node, (uint32_t)uid, (uint32_t)gid);
}

static int nsec_valid(int64_t ns) { return (ns >= 0 && ns < 1000000000) || ns == UTIME_NOW || ns == UTIME_OMIT; }

int64_t lx_sys_utimensat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t utimes, uint64_t flags)
{
    int64_t ts[4];
    int now_both = !utimes;
    if (utimes) {
        if (lx_copy_in(c, ts, utimes, sizeof(ts)))
            return -LX_EFAULT;
        if (!nsec_valid(ts[1]) || !nsec_valid(ts[3]))
            return -LX_EINVAL;
        now_both = ts[1] == UTIME_NOW && ts[3] == UTIME_NOW;
    }
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t node;
    if (!upath && (int32_t)dirfd != AT_FDCWD) {     /* Linux's own extension: the descriptor itself */
        if (fl)
            return -LX_EINVAL;
        struct lx_file *f = changing(c, dirfd);
        if (!f)
            return -LX_EBADF;
        if (f->node < 0)
            return 0;
        node = f->node;
    } else {
        node = node_at(c, dirfd, upath, !(fl & AT_SYMLINK_NOFOLLOW), (fl & AT_EMPTY_PATH) != 0);
        if (node < 0)
            return node;
    }
    if (lx_data_writable(node))
        return -LX_EROFS;
    struct lx_node *n = lx_node(node);
    struct lx_time now = lx_now();
    if (n->fs == LX_FS_DATA) {
        struct lx_time a = now, m = now;
        uint32_t what = LX_ATTR_ATIME | LX_ATTR_MTIME;
        if (!now_both) {
            if (ts[1] == UTIME_OMIT)
                what &= ~(uint32_t)LX_ATTR_ATIME;
            else if (ts[1] != UTIME_NOW)
                a = (struct lx_time){ ts[0], ts[1] };
            if (ts[3] == UTIME_OMIT)
                what &= ~(uint32_t)LX_ATTR_MTIME;
            else if (ts[3] != UTIME_NOW)
                m = (struct lx_time){ ts[2], ts[3] };
        }
        return lx_data_setattr(node, what, 0, 0, 0, &a, &m);
    }
    if (now_both) {
        n->atime = n->mtime = now;
    } else {
        if (ts[1] != UTIME_OMIT)
            n->atime = ts[1] == UTIME_NOW ? now : (struct lx_time){ ts[0], ts[1] };
        if (ts[3] != UTIME_OMIT)
            n->mtime = ts[3] == UTIME_NOW ? now : (struct lx_time){ ts[2], ts[3] };
    }
    n->ctime = now;
    return 0;
}

int64_t lx_sys_faccessat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t mode, uint64_t flags)
{
    if ((uint32_t)mode & ~7u)
        return -LX_EINVAL;
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t node = node_at(c, dirfd, upath, !(fl & AT_SYMLINK_NOFOLLOW), (fl & AT_EMPTY_PATH) != 0);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if (((uint32_t)mode & 1) && kind(n) != LX_S_IFDIR && !(n->mode & 0111))
        return -LX_EACCES;                      /* root may execute what has an execute bit */
    return 0;
}

/* ---------------------------------------------------------------- sizes */

static int64_t truncate_node(struct lx_ctx *c, struct lx_node *n, int64_t len)
{
    if (n->proc)
        return -LX_EACCES;
    if (lx_data_writable((int32_t)(n - lx_node(0))))
        return -LX_EROFS;
    if (n->fs == LX_FS_DATA) {
        int64_t big = (uint64_t)len > n->size ? lx_fsize_check(c, (uint64_t)len, NULL) : 0;
        return big ? big : lx_data_truncate((int32_t)(n - lx_node(0)), (uint64_t)len);
    }
    int64_t big = (uint64_t)len > n->size ? lx_fsize_check(c, (uint64_t)len, NULL) : 0;   /* growing only */
    if (big)
        return big;
    int err = lx_node_resize(n, (uint64_t)len);
    if (err)
        return err;
    n->mtime = n->ctime = lx_now();
    return 0;
}

int64_t lx_sys_truncate(struct lx_ctx *c, uint64_t upath, int64_t len)
{
    if (len < 0)
        return -LX_EINVAL;
    int32_t node = node_at(c, AT_FDCWD, upath, 1, 0);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if (kind(n) == LX_S_IFDIR)
        return -LX_EISDIR;
    if (kind(n) != LX_S_IFREG)
        return -LX_EINVAL;
    return truncate_node(c, n, len);
}

int64_t lx_sys_ftruncate(struct lx_ctx *c, uint64_t fd, int64_t len)
{
    if (len < 0)
        return -LX_EINVAL;
    struct lx_file *f = changing(c, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->node < 0 || kind(lx_node(f->node)) != LX_S_IFREG || (f->flags & O_ACCMODE) == 0)
        return -LX_EINVAL;
    return truncate_node(c, lx_node(f->node), len);
}

#define FALLOC_FL_KEEP_SIZE 1

/* fallocate: mode 0 (grow to off + len) and FALLOC_FL_KEEP_SIZE (room only). */
int64_t lx_sys_fallocate(struct lx_ctx *c, uint64_t fd, uint64_t mode, int64_t off, int64_t len)
{
    struct lx_file *f = changing(c, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (off < 0 || len <= 0)
        return -LX_EINVAL;
    if ((uint32_t)mode & ~(uint32_t)FALLOC_FL_KEEP_SIZE)
        return -LX_EOPNOTSUPP;
    if ((f->flags & O_ACCMODE) == 0)
        return -LX_EBADF;
    if (f->node < 0)
        return -LX_ESPIPE;
    struct lx_node *n = lx_node(f->node);
    if (kind(n) == LX_S_IFDIR)
        return -LX_EISDIR;
    if (kind(n) != LX_S_IFREG || n->proc)
        return -LX_ENODEV;
    if (off > INT64_MAX - len)
        return -LX_EFBIG;
    if (n->fs == LX_FS_DATA)
        return -LX_EOPNOTSUPP;                  /* (Linux's ext2 files: no extents to allocate) */
    uint64_t end = (uint64_t)(off + len);
    int64_t big = end > n->size ? lx_fsize_check(c, end, NULL) : 0;     /* (FALLOC_FL_KEEP_SIZE too, as Linux) */
    if (big)
        return big;
    int err = lx_node_reserve(n, end);
    if (err)
        return err;
    if (!((uint32_t)mode & FALLOC_FL_KEEP_SIZE) && end > n->size) {
        lx_node_set_size(n, end);
        n->ctime = lx_now();
    }
    return 0;
}

/* fsync and fdatasync: everything is in memory already; a pipe or a
 * device has nothing to sync (EINVAL, as on Linux). */
int64_t lx_sys_fsync(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = changing(c, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->node < 0 || kind(lx_node(f->node)) == LX_S_IFCHR)
        return -LX_EINVAL;
    return lx_node(f->node)->fs == LX_FS_DATA ? lx_data_fsync(c, lx_node(f->node)) : 0;     /* the disk's: on it */
}

/* struct statfs of the 64-bit generic ABI: 120 bytes. */
struct lx_statfs {
    int64_t type, bsize;
    uint64_t blocks, bfree, bavail, files, ffree;
    int32_t fsid[2];
    int64_t namelen, frsize, flags, spare[4];
};
_Static_assert(sizeof(struct lx_statfs) == 120, "struct statfs is 120 bytes on arm64");

static int64_t statfs_out(struct lx_ctx *c, int32_t node, uint64_t buf)
{
    struct lx_statfs st = { 0 };
    st.bsize = st.frsize = 4096;
    st.namelen = LX_NAME_MAX;
    int fs = lx_node_fs(node);
    if (fs == LX_FS_DATA) {                     /* the disk's ext2, as Linux's ext2 says */
        int64_t v[11], err = lx_data_statfs((uint64_t *)v);
        if (err < 0)
            return err;
        if (err == 0) {
            st = (struct lx_statfs){ .type = v[0], .bsize = v[1], .blocks = (uint64_t)v[2], .bfree = (uint64_t)v[3],
                                     .bavail = (uint64_t)v[4], .files = (uint64_t)v[5], .ffree = (uint64_t)v[6],
                                     .fsid = { (int32_t)v[7], (int32_t)(v[7] >> 32) }, .namelen = v[8],
                                     .frsize = v[9], .flags = v[10] };
            return lx_copy_out(c, buf, &st, sizeof(st));
        }
        fs = lx_node_fs(node);                  /* (not mounted after all: the root's directory) */
    }
    /* Mount flags as the mount table says: ST_NOSUID 2, ST_NODEV 4, ST_NOEXEC 8, ST_RELATIME 0x1000. */
    static const int64_t flags[LX_FS_COUNT] = { [LX_FS_ROOT] = 0, [LX_FS_DEV] = 0x1000, [LX_FS_PTS] = 0x100a,
                                                [LX_FS_SHM] = 0x1006, [LX_FS_PROC] = 0x1000, [LX_FS_DATA] = 0x1001 };
    st.flags = ST_VALID | flags[fs];
    if (fs == LX_FS_PROC) {
        st.type = PROC_SUPER_MAGIC;
    } else if (fs == LX_FS_PTS) {
        st.type = DEVPTS_SUPER_MAGIC;
    } else {
        /* The tmpfs ones share one store: each shows what it holds as
         * used and what the store has left as free. */
        uint64_t used, mine;
        uint32_t nodes, max, my_nodes;
        lx_fs_usage(&used, &nodes, &max);
        lx_fs_usage_of(fs, &mine, &my_nodes);
        st.type = TMPFS_MAGIC;
        st.bfree = st.bavail = (lx_vfs_bytes() - used) / 4096;
        st.blocks = st.bfree + mine / 4096;
        st.ffree = max - nodes;
        st.files = st.ffree + my_nodes;
        st.fsid[0] = (int32_t)lx_fs_dev(fs);
    }
    return lx_copy_out(c, buf, &st, sizeof(st));
}

int64_t lx_sys_statfs(struct lx_ctx *c, uint64_t upath, uint64_t buf)
{
    int32_t node = node_at(c, AT_FDCWD, upath, 1, 0);
    return node < 0 ? node : statfs_out(c, node, buf);
}

int64_t lx_sys_fstatfs(struct lx_ctx *c, uint64_t fd, uint64_t buf)
{
    struct lx_file *f = lx_fd_file(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->node < 0) {                          /* the pipe file system */
        struct lx_statfs st = { .type = 0x50495045, .bsize = 4096, .namelen = LX_NAME_MAX, .frsize = 4096,
                                .flags = ST_VALID };
        return lx_copy_out(c, buf, &st, sizeof(st));
    }
    return statfs_out(c, f->node, buf);
}

/* ---------------------------------------------------------------- copy_file_range */

/* copy_file_range: bytes of one regular file into another of the same file
 * system (Linux 6.1's checks in its order: descriptors, offsets read,
 * flags, directories EISDIR, other kinds EINVAL, access and O_APPEND
 * EBADF, another file system EXDEV, wrapping offsets EOVERFLOW, the copy
 * cut at the input's end, the size limit, overlap within one file EINVAL,
 * negative offsets EINVAL). Offsets given are read and written back, the
 * files' own positions otherwise. */
#define CHUNK 16384u                            /* what sendfile and copy_file_range move at a time */
static uint8_t *chunk;                          /* (made at the first: most systems never call them) */

static int chunk_ready(void)
{
    return chunk || (chunk = lx_alloc(CHUNK)) != NULL;
}

int64_t lx_sys_copy_file_range(struct lx_ctx *c, uint64_t fd_in, uint64_t uoff_in, uint64_t fd_out,
                               uint64_t uoff_out, uint64_t len, uint64_t flags)
{
    struct lx_file *in = changing(c, (uint32_t)fd_in), *out = in ? changing(c, (uint32_t)fd_out) : NULL;
    if (!in || !out)
        return -LX_EBADF;
    int64_t pos_in = (int64_t)in->pos, pos_out = (int64_t)out->pos;
    if ((uoff_in && lx_copy_in(c, &pos_in, uoff_in, sizeof(pos_in))) ||
        (uoff_out && lx_copy_in(c, &pos_out, uoff_out, sizeof(pos_out))))
        return -LX_EFAULT;
    if (flags)
        return -LX_EINVAL;
    struct lx_node *a = in->node >= 0 ? lx_node(in->node) : NULL, *b = out->node >= 0 ? lx_node(out->node) : NULL;
    if ((a && kind(a) == LX_S_IFDIR) || (b && kind(b) == LX_S_IFDIR))
        return -LX_EISDIR;
    if (!a || !b || kind(a) != LX_S_IFREG || kind(b) != LX_S_IFREG || in->sock >= 0 || out->sock >= 0)
        return -LX_EINVAL;
    if ((in->flags & O_ACCMODE) == 1 || (out->flags & O_ACCMODE) == 0 || (out->flags & O_APPEND))
        return -LX_EBADF;
    if (lx_node_fs(in->node) != lx_node_fs(out->node))
        return -LX_EXDEV;
    if ((uint64_t)pos_in + len < (uint64_t)pos_in || (uint64_t)pos_out + len < (uint64_t)pos_out)
        return -LX_EOVERFLOW;
    uint64_t size_in = a->size;
    if (a->proc)
        lx_procfs_text(in->node, &size_in);
    uint64_t count = pos_in >= 0 && (uint64_t)pos_in >= size_in ? 0 :
                     len < size_in - (uint64_t)pos_in ? len : size_in - (uint64_t)pos_in;
    if (pos_out >= 0) {
        int64_t err = lx_fsize_check(c, (uint64_t)pos_out, &count);
        if (err)
            return err;
    }
    if (in->node == out->node && (uint64_t)pos_out + count > (uint64_t)pos_in &&
        (uint64_t)pos_out < (uint64_t)pos_in + count)
        return -LX_EINVAL;
    if (count == 0)
        return 0;
    if (pos_in < 0 || pos_out < 0)
        return -LX_EINVAL;
    if (count > MAX_RW_COUNT)
        count = MAX_RW_COUNT;
    if (!chunk_ready())
        return -LX_ENOMEM;
    uint64_t from = (uint64_t)pos_in, kept = out->pos, done = 0;
    out->pos = (uint64_t)pos_out;
    int64_t err = 0;
    while (done < count) {
        uint64_t want = count - done < CHUNK ? count - done : CHUNK;
        int64_t r = lx_file_read_kernel(in, chunk, want, &from);
        if (r <= 0) {
            err = r;
            break;
        }
        int64_t w = lx_file_write_kernel(out, chunk, (uint64_t)r);
        if (w < 0) {
            from -= (uint64_t)r;
            err = w;
            break;
        }
        done += (uint64_t)w;
        if (w < r) {                            /* (a disk file that must wait: what went, and again) */
            from -= (uint64_t)(r - w);
            break;
        }
    }
    uint64_t end = out->pos;
    if (uoff_out)
        out->pos = kept;
    if (!done)
        return err;
    pos_in = (int64_t)from;
    pos_out = (int64_t)end;
    if ((uoff_in && lx_copy_out(c, uoff_in, &pos_in, sizeof(pos_in))) ||
        (uoff_out && lx_copy_out(c, uoff_out, &pos_out, sizeof(pos_out))))
        return -LX_EFAULT;
    if (!uoff_in)
        in->pos = from;
    return (int64_t)done;
}

/* ---------------------------------------------------------------- sendfile */

/* Is f a file sendfile moves bytes of here: a regular file, a /proc file,
 * /dev/null or /dev/zero? (Pipes and the terminal are not supported:
 * EINVAL, after which programs such as busybox use read and write.) */
static int sendable(struct lx_file *f)
{
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    return n && (kind(n) == LX_S_IFREG || (kind(n) == LX_S_IFCHR && (n->dev == LX_DEV_NULL || n->dev == LX_DEV_ZERO)));
}

/* Can sendfile write to f: a file as above, a pipe's write end, a stream
 * socket, the console? */
static int send_target(struct lx_file *f)
{
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    return sendable(f) || (f->node < 0 && f->ev < 0) || lx_node_is_tty(n);
}

/* Write len bytes of the personality's src to sendfile's target: what
 * went (0: nothing fits; with may_wait, LX_BLOCK or EAGAIN instead). */
static int64_t send_out(struct lx_ctx *c, struct lx_file *out, const void *src, uint64_t len, int may_wait)
{
    if (out->sock >= 0)
        return lx_sock_write_kernel(c, out, src, len, may_wait);
    if (out->node < 0)
        return lx_pipe_write_kernel(c, out, src, len, may_wait);
    struct lx_node *n = lx_node(out->node);
    if (lx_node_is_tty(n))
        return lx_tty_write_kernel(c, out, src, len, 0);
    return lx_file_write_kernel(out, src, len);
}

int64_t lx_sys_sendfile(struct lx_ctx *c, uint64_t out_fd, uint64_t in_fd, uint64_t offp, uint64_t count)
{
    int64_t off = 0;
    if (offp && lx_copy_in(c, &off, offp, sizeof(off)))
        return -LX_EFAULT;
    struct lx_file *in = changing(c, (uint32_t)in_fd);
    if (!in || (in->flags & O_ACCMODE) == 1)
        return -LX_EBADF;
    if (offp && in->node < 0)
        return -LX_ESPIPE;
    if (offp && off < 0)
        return -LX_EINVAL;
    if (count > MAX_RW_COUNT)
        count = MAX_RW_COUNT;
    struct lx_file *out = changing(c, (uint32_t)out_fd);
    if (!out || (out->flags & O_ACCMODE) == 0)
        return -LX_EBADF;
    if ((out->flags & O_APPEND) || !sendable(in) || !send_target(out))
        return -LX_EINVAL;
    if (!chunk_ready())
        return -LX_ENOMEM;
    uint64_t pos = offp ? (uint64_t)off : in->pos, done = 0;
    int64_t err = 0;
    while (done < count) {
        uint64_t want = count - done < CHUNK ? count - done : CHUNK;
        int64_t r = lx_file_read_kernel(in, chunk, want, &pos);
        if (r <= 0) {
            err = r;
            break;
        }
        int64_t w = send_out(c, out, chunk, (uint64_t)r, done == 0);
        if (w == LX_BLOCK || (w == LX_DISKWAIT && !done))
            return w;                           /* nothing went: the call runs again when there is room */
        if (w == -LX_EPIPE && !done) {
            struct lx_sinfo si = { LX_SI_USER, c->p->pid, 0, 0, 0, 0 };
            lx_sig_send_thread(c->t, LX_SIGPIPE, &si);
        }
        if (w < 0) {
            pos -= (uint64_t)r;
            err = w;
            break;
        }
        done += (uint64_t)w;
        if (w < r) {
            pos -= (uint64_t)(r - w);
            break;
        }
    }
    if (!done && err < 0)
        return err;
    if (offp) {
        off = (int64_t)pos;
        if (lx_copy_out(c, offp, &off, sizeof(off)))
            return -LX_EFAULT;
    } else {
        in->pos = pos;
    }
    return (int64_t)done;
}
