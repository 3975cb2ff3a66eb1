/*
 * /data: the machine's disk, its ext2 file system served by the ext2fs
 * service (services/ext2fs, idl/ext2fs.toml) over the block device
 * service (services/blk), mounted in the personality's tree (at /data in
 * the default systems) when the system description lets the personality
 * call both and the machine has a disk.
 *
 * The disk's files live in the same node table as the root's
 * (rootfs.c): a node of LX_FS_DATA mirrors an inode (its number, mode,
 * links, owner, size, times and blocks), and a directory's entries are
 * read into the table, all of them, when a lookup or a listing first
 * needs them. Contents stay on the disk: read() goes to the file system
 * each time, which copies them straight into the program's buffer.
 *
 * The personality never waits for the disk. A call that needs a block
 * not in yet gets E_AGAIN from the file system service, which changed
 * nothing; it answers LX_DISKWAIT, which the dispatcher turns into a wait
 * (LX_BLK_DISK) that the blk service's `watch` ends when the disk
 * finishes a request: then every such call runs again from its `svc`. A
 * read that had moved bytes answers their count instead. As Linux's
 * waits for a disk, these do not end for a signal.
 *
 * The disk is /dev/vda; lx_data_mount mounts it on a directory (mount(2),
 * mount.c; lxrun's mount=DIR at boot), read-write unless the disk or the
 * image allows only reading, and lx_data_umount puts it away (marked
 * clean, everything on the disk) and forgets its nodes. An image the file
 * system refuses is not mounted, with the reason on the console.
 *
 * A user-placed file system service that dies is started again by the
 * root task; the call in flight answers E_CLOSED and the next one finds
 * it not mounted (E_STATE). The personality then mounts it again, as it
 * was, and runs the call again: what the dead instance had not handed to
 * blk is lost (as at a power loss: nothing an fsync covered), the rest is
 * as it was between two changes.
 */
#include "lx.h"
#include "blk_if.h"
#include "ext2fs_if.h"
#include "ext2.h"

#define DBLOCK          4096u
#define CHUNK           (1u << 20)      /* bytes one write request to the file system moves at most */
#define WRITEBACK_RETRY_NS 100000000ull /* the timer asks again after this when the service could not */

static uint32_t fs_ep;                  /* the file system service (0: no disk) */
static uint32_t disk_flags;             /* blk's `info` flags: 1 read-only */
static uint32_t block_size;             /* the mounted file system's */
static int writable;                    /* it is mounted read-write */
static int lost;                        /* the service was restarted: mount it again first */
static uint64_t writeback_due;          /* when the service's oldest dirty block is due (0: none) */
/* Epochs: a node changed records the epoch (lx_node.changed_at); a sync
 * begins a new one, and once it is over every change of the epochs up to
 * the one it began in is on the disk. A restart of the service loses the
 * changes of the epochs after that (lost_from..lost_to): their nodes are
 * cut off from the disk and their next fsync says EIO, as Linux's does
 * after a write-back error. */
static uint64_t epoch = 1, synced_epoch, lost_from = 1, lost_to;
static int32_t mnt_root = -1;           /* the mount's root directory (-1: not mounted) */
static int32_t covered = -1;            /* the directory it hides */
static uint64_t mnt_flags;              /* LX_MS_* it was mounted with (LX_MS_KEPT of them) */
/* The nodes that mirror inodes, by inode number: chains through
 * lx_node.ino_next, so that a change finds its inode's nodes at once. */
#define INO_BUCKETS     1024u
static int32_t ino_heads[INO_BUCKETS];

/* ---------------------------------------------------------------- the service */

static uint64_t now_sec(void) { return (uint64_t)lx_now().sec; }
static void ino_unindex(int32_t n);
static void reload(int32_t dir);
static void mirror(int32_t n, const struct ext2_inode *in);

/* The calls waiting for the disk run again soon (after this request):
 * for a wait that no disk request in flight would end. */
static void kick(void)
{
    uint64_t bits = 0;
    svc_handle n = lx_wakeup(&bits);
    if (n)
        svc_signal(n, bits);
}

/* Releases of orphans that could not be sent (the register entry may not
 * call): sent before the next request. */
#define HELD_RELEASES   64u
static uint32_t releases[HELD_RELEASES];
static unsigned nreleases;

/* Mount the file system again in a restarted service, as it was: 0, or
 * the call's answer (LX_DISKWAIT while it reads the disk). */
static int64_t recover(void)
{
    struct ext2_inode root;
    uint32_t err = 0, rw = 0, bs = 0, why_len = 0;
    uint8_t why[120];
    int64_t st = ext2fs_mount(fs_ep, (uint32_t)writable, now_sec(), &root, sizeof(root), &err, &rw, &bs, why,
                              &why_len);
    if (st == -E_CLOSED)
        kick();                                 /* (it died again: try again soon) */
    if (st == -E_AGAIN || st == -E_CLOSED)
        return LX_DISKWAIT;                     /* (its blocks on their way; or it died again) */
    if (st || (err && err != EXT2_EBUSY)) {
        lx_log("EXT2-fs (vda): the file system service came back, but the disk would not mount again (%ld, %u)",
               (long)st, err);
        return -LX_EIO;
    }
    lx_log("EXT2-fs (vda): mounted again after the file system service restarted");
    lost = 0;
    writable = (int)rw;
    nreleases = 0;                              /* (the new instance has no orphans of ours) */
    lost_from = synced_epoch + 1;
    lost_to = epoch++;
    /* What no sync covered is gone: the nodes made since no longer name
     * their inodes (which may be free, or another's, now), a file changed
     * since says EIO at its next fsync, and every directory is read again
     * from the disk at its next lookup. */
    for (int32_t i = 0; i < lx_nodes_max(); i++) {
        struct lx_node *x = lx_node(i);
        if (!x || x->fs != LX_FS_DATA)
            continue;
        struct ext2_inode in;
        uint32_t fserr = 0;
        int changed = x->changed_at >= lost_from && x->changed_at <= lost_to;
        x->wb_error |= (uint8_t)changed;
        if (i == mnt_root)
            continue;
        if ((x->born_at >= lost_from && x->born_at <= lost_to) || !x->nlink) {
            /* Made since (its inode may be free, or another's, now), or
             * unlinked while open (the mount freed it as an orphan). */
            ino_unindex(i);
            x->ino = 0;
            x->wb_error = 1;
        } else if (changed && x->ino) {
            int64_t g = ext2fs_getattr(fs_ep, x->ino, 0, &in, sizeof(in), &fserr);
            if (!g && !fserr)
                mirror(i, &in);                 /* (as the disk has it again) */
            else if (g != -E_AGAIN)
                ino_unindex(i), x->ino = 0;     /* (not there any more) */
        }
        if ((x->mode & LX_S_IFMT) == LX_S_IFDIR && x->loaded)
            reload(i);
    }
    return 0;
}

/* A request's status and file system error as the call's answer: 0, a
 * negated errno, LX_DISKWAIT; or 1: the service was restarted and is
 * mounted again: the call is to run again from its start (its lookups
 * too: the directories were read again), which LX_DISKWAIT after a kick
 * does (restarted()). */
static int64_t answer(int64_t st, uint32_t fserr)
{
    if (st == -E_CLOSED || (st == -E_STATE && mnt_root >= 0)) {
        lost = 1;
        int64_t r = recover();
        return r ? r : 1;
    }
    if (st == -E_AGAIN)
        return LX_DISKWAIT;
    if (st)
        return st == -E_FAULT ? -LX_EFAULT : st == -E_INVAL ? -LX_EINVAL : -LX_EIO;
    return fserr ? -(int64_t)fserr : 0;
}

/* answer()'s 1 as the call's answer: it runs again, from its start. */
static int64_t restarted(int64_t r)
{
    if (r != 1)
        return r;
    kick();
    return LX_DISKWAIT;
}

/* Before a request: a restarted service mounted again, the releases
 * held back sent. */
static int64_t ready(void)
{
    if (!svc_may_call())
        return LX_DISKWAIT;                     /* (the register entry: the full path asks) */
    if (lost) {
        int64_t r = recover();
        if (r)
            return r;
    }
    while (nreleases)
        ext2fs_release(fs_ep, releases[--nreleases]);
    return 0;
}

/* The disk finished a request (the blk service's `watch`): the calls
 * waiting for one run again. */
void lx_data_changed(void)
{
    if (fs_ep)
        lx_wake_all(LX_BLK_DISK, 0);
}

/* A change was kept, of nodes a and b (-1: none): they record the epoch,
 * and the service's write-back is due within 5 s (the timer asks it; in
 * the kernel placement the next change does). */
static void changed(int32_t a, int32_t b)
{
    if (lx_node(a))
        lx_node(a)->changed_at = epoch;
    if (lx_node(b))
        lx_node(b)->changed_at = epoch;
    if (!writeback_due) {
        writeback_due = svc_clock_ns() + 5000000000ull;
        lx_timer_note(writeback_due);
    }
}

uint64_t lx_data_writeback_at(void)
{
    return writeback_due;
}

void lx_data_timer(uint64_t now)
{
    if (!writeback_due || now < writeback_due)
        return;
    if (!svc_may_call()) {
        writeback_due = 0;                      /* (the kernel's timer may not call: the service's */
        return;                                 /* next change hands them on when due) */
    }
    if (lost) {
        writeback_due = now + WRITEBACK_RETRY_NS;
        return;
    }
    uint32_t err = 0;
    uint64_t due = 0;
    int64_t st = ext2fs_writeback(fs_ep, &err, &due);
    if (st == -E_CLOSED || st == -E_STATE)
        lost = 1;                               /* (restarted: the next call mounts it again) */
    writeback_due = st || (due && due <= now) ? now + WRITEBACK_RETRY_NS : due;    /* (blk busy: soon again) */
    if (writeback_due)
        lx_timer_note(writeback_due);
}

/* ---------------------------------------------------------------- nodes */

static struct lx_time at_sec(uint32_t s) { return (struct lx_time){ (int64_t)s, 0 }; }

static int32_t *ino_chain(uint32_t ino)
{
    return &ino_heads[ino % INO_BUCKETS];
}

static void ino_unindex(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (!x->indexed)
        return;
    int32_t *at = ino_chain(x->ino);
    while (*at >= 0 && *at != n)
        at = &lx_node(*at)->ino_next;
    if (*at == n)
        *at = x->ino_next;
    x->indexed = 0;
}

/* Node n now mirrors inode `in`. */
static void mirror(int32_t n, const struct ext2_inode *in)
{
    struct lx_node *x = lx_node(n);
    if (!x->indexed || x->ino != in->ino) {
        ino_unindex(n);
        int32_t *head = ino_chain(in->ino);
        x->ino_next = *head;
        *head = n;
        x->indexed = 1;
    }
    x->mode = in->mode;
    x->nlink = in->links;
    x->uid = in->uid;
    x->gid = in->gid;
    x->size = in->size;
    x->atime = at_sec(in->atime);
    x->mtime = at_sec(in->mtime);
    x->ctime = at_sec(in->ctime);
    x->disk_blocks = in->blocks;
    x->ino = in->ino;
    x->fs = LX_FS_DATA;
}

/* The node that mirrors (non-directory) inode ino, or -1. */
static int32_t node_of_ino(uint32_t ino)
{
    for (int32_t i = *ino_chain(ino); i >= 0; i = lx_node(i)->ino_next) {
        struct lx_node *x = lx_node(i);
        if (x->ino == ino && (x->mode & LX_S_IFMT) != LX_S_IFDIR)
            return i;
    }
    return -1;
}

/* A node for the file a change is about to make, freed if it fails. */
static void node_drop(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (x) {
        x->nlink = 0;
        lx_node_maybe_free(n);
    }
}

/* The mirror of directory `dir` could not follow a change the disk
 * took: it is read again at its next lookup. */
static void reload(int32_t dir)
{
    lx_dir_unload(dir);
    lx_node(dir)->loaded = 0;
}

/* Every node that mirrors inode in->ino mirrors it as it is now. */
static void refresh(const struct ext2_inode *in)
{
    for (int32_t i = *ino_chain(in->ino); i >= 0; i = lx_node(i)->ino_next)
        if (lx_node(i)->ino == in->ino)
            mirror(i, in);
}

/* ---------------------------------------------------------------- mounting */

int64_t lx_data_mount(int32_t dir, uint64_t flags)
{
    if (!fs_ep)
        return -LX_ENXIO;
    if (mnt_root >= 0)
        return -LX_EBUSY;                       /* (one mount of the disk at a time) */
    if (!(flags & LX_MS_RDONLY) && (disk_flags & 1))
        return -LX_EACCES;                      /* a read-only disk: mount(8) mounts it read-only */
    if (!svc_may_call())
        return LX_DISKWAIT;
    struct ext2_inode root;
    uint32_t err = 0, rw = 0, bs = 0, why_len = 0;
    uint8_t why[121];
    int64_t st = ext2fs_mount(fs_ep, !(flags & LX_MS_RDONLY), now_sec(), &root, sizeof(root), &err, &rw, &bs, why,
                              &why_len);
    if (st == -E_AGAIN || st == -E_CLOSED)
        return LX_DISKWAIT;
    if (st)
        return -LX_EIO;
    why[why_len < 120 ? why_len : 120] = 0;
    if (err == EXT2_EBUSY) {
        /* (a mount left by a personality that did not unmount: put away, then ours) */
        uint32_t e2 = 0;
        if (ext2fs_set_readonly(fs_ep, now_sec(), &e2) == -E_AGAIN)
            return LX_DISKWAIT;
        ext2fs_unmount(fs_ep);
        return LX_DISKWAIT;
    }
    if (err) {
        lx_log("EXT2-fs (vda): not mounted: %s (error %u)", why_len ? (const char *)why : "the disk could not be read",
               err);
        return err == EXT2_EOPNOTSUPP ? -LX_EINVAL : -(int64_t)err;     /* (Linux's answer to features it lacks) */
    }
    if (!(flags & LX_MS_RDONLY) && !rw) {
        ext2fs_unmount(fs_ep);                  /* (the service said why on the console) */
        return -LX_EROFS;                       /* (mount(8) then mounts it read-only) */
    }
    int32_t n = lx_node_new(LX_S_IFDIR | 0755);
    if (n < 0) {
        uint32_t e2 = 0;
        ext2fs_set_readonly(fs_ep, now_sec(), &e2);
        ext2fs_unmount(fs_ep);
        return -LX_ENOMEM;
    }
    lx_mount_dir(dir, n, LX_FS_DATA);
    mirror(n, &root);
    mnt_root = n;
    covered = dir;
    mnt_flags = flags & LX_MS_KEPT;
    block_size = bs;
    writable = (int)rw;
    lost = 0;
    return 0;
}

void lx_data_init(void)
{
    for (uint32_t i = 0; i < INO_BUCKETS; i++)
        ino_heads[i] = -1;
    svc_handle blk = svc_service("blk"), fs = svc_service("ext2fs");
    uint64_t sectors = 0;
    uint32_t bsize = 0, geometry = 0;
    if (!blk || !fs || blk_info((uint32_t)blk, &sectors, &bsize, &disk_flags, &geometry) != 0 || !sectors)
        return;                                 /* no disk, or no file system service: no /dev/vda */
    uint64_t bits;
    svc_handle note = lx_wakeup(&bits);
    if (!note || blk_watch((uint32_t)blk, (uint32_t)note, bits) != 0) {
        lx_log("/dev/vda left out: the disk's service takes no more watchers");
        return;
    }
    if (lx_dev_node("dev/vda", LX_S_IFBLK | 0600, 0, LX_DEV_DISK) < 0)    /* as devtmpfs makes it */
        return;
    fs_ep = (uint32_t)fs;
}

int64_t lx_data_ready(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (!x || x->fs != LX_FS_DATA)
        return 0;
    return x->bad ? -EXT2_EUCLEAN : 0;
}

/* ---------------------------------------------------------------- reading */

#define DIRENTS     16384u              /* bytes of records asked for at once */
int64_t lx_data_dir_ready(int32_t dir)
{
    static uint8_t *recs;                       /* (memory, not the image's: made at the first listing) */
    if (!recs && !(recs = svc_alloc(DIRENTS)))
        return -LX_ENOMEM;
    struct lx_node *d = lx_node(dir);
    if (!d || d->fs != LX_FS_DATA || (d->mode & LX_S_IFMT) != LX_S_IFDIR)
        return 0;
    if (d->loaded || !d->nlink)
        return 0;
    int64_t r = ready();
    if (r)
        return r;
    /* Every entry, each with its inode, or none: a block not in yet
     * undoes what was read so far, and the call runs again (the service
     * keeps what it read: the next try goes further). */
    uint64_t pos = 0;
    uint32_t done = 0;
    int64_t e = 0;
    while (!e && !done) {
        uint32_t fserr = 0, count = 0;
        uint64_t bytes = 0, next = pos;
        int64_t st = ext2fs_readdir(fs_ep, d->ino, pos, recs, DIRENTS, &fserr, &count, &bytes, &next, &done);
        if ((e = answer(st, fserr)) != 0)
            break;
        for (uint64_t at = 0; !e && at + sizeof(struct ext2fs_dirent) <= bytes;) {
            const struct ext2fs_dirent *rec = (const struct ext2fs_dirent *)(recs + at);
            at += rec->reclen ? rec->reclen : bytes;
            const struct ext2_inode *in = &rec->in;
            uint32_t kind = in->mode & EXT2_S_IFMT;
            int32_t n = !rec->bad && kind != EXT2_S_IFDIR ? node_of_ino(in->ino) : -1;
            if (n >= 0) {                       /* another name of a file read in, or a file still open
                                                 * from before its directory was read again: the same
                                                 * node (so "open" means open under any name) */
                e = lx_dent_attach(dir, rec->name, rec->len, n, (1ull << 40) + rec->pos);
                continue;
            }
            n = lx_node_new(in->mode);
            if (n < 0) {
                e = n;
                break;
            }
            mirror(n, in);
            lx_node(n)->bad = rec->bad;
            if (!rec->bad && kind == EXT2_S_IFLNK) {   /* the target, kept as the root's links keep it */
                struct lx_node *x = lx_node(n);
                uint32_t fe = 0;
                uint64_t got = 0;
                x->size = 0;                    /* (made room for below) */
                int64_t ls = -1;
                if (in->size > 0 && in->size < LX_PATH_MAX && (e = lx_node_resize(x, in->size)) == 0)
                    ls = ext2fs_readlink(fs_ep, in->ino, x->mem, in->size, &fe, &got);
                if (ls == -E_AGAIN || ls == -E_CLOSED || e == -LX_ENOSPC) {
                    x->nlink = 0;
                    lx_node_maybe_free(n);
                    if (e != -LX_ENOSPC)        /* (no room for the target: that, as before) */
                        e = restarted(answer(ls, 0));
                    break;
                }
                e = 0;
                if (ls || fe || got != in->size) {
                    x->size = 0;
                    x->bad = 1;                 /* (its target is past the disk, or no target) */
                }
                x->disk_blocks = in->blocks;
            }
            if ((e = lx_dent_attach(dir, rec->name, rec->len, n, (1ull << 40) + rec->pos)) != 0) {
                lx_node(n)->nlink = 0;
                lx_node_maybe_free(n);
                break;
            }
        }
        pos = next;
    }
    if (e) {
        lx_dir_unload(dir);
        return restarted(e);                    /* (restarted: the directory read again) */
    }
    d->loaded = 1;
    return 0;
}

int64_t lx_data_read(struct lx_ctx *c, struct lx_node *n, uint64_t buf, uint64_t len, uint64_t *pos)
{
    int64_t r = ready();
    if (r)
        return r;
    uint64_t done = c->t->io.done;              /* (a read run again after a wait: what it moved then) */
    c->t->io.done = 0;
    uint32_t fserr = 0, more = 0;
    uint64_t count = 0, size = n->size, want = len - done;
    int64_t st = 0;
    if (want) {
        uint64_t lent = lx_range_ok(buf + done, want) ? svc_client_buffer(c->call, buf + done, want, 1) : 0;
        st = lent ? ext2fs_read(fs_ep, n->ino, !n->nlink, *pos + done, (void *)(uintptr_t)lent, want, &fserr,
                                &count, &more, &size)
                  : -E_FAULT;
    }
    if (!st)
        n->size = size;
    done += count;
    r = restarted(answer(st, fserr));           /* (restarted: run again, on from what moved) */
    if ((!r && more) || (r == LX_DISKWAIT && done)) {
        c->t->io.done = done;                   /* wait, then on from here: a regular file's read is whole */
        return LX_DISKWAIT;
    }
    if (!done && r)
        return r;
    *pos += done;
    return (int64_t)done;
}

int lx_data_node_read(const struct lx_node *n, uint64_t off, void *dst, uint64_t len)
{
    int64_t r = ready();
    if (r)
        return (int)r;
    if (off > n->size || len > n->size - off)
        return -LX_EIO;
    uint8_t *d = dst;
    while (len) {
        uint32_t fserr = 0, more = 0;
        uint64_t count = 0, size = 0;
        int64_t st = ext2fs_read(fs_ep, n->ino, !n->nlink, off, d, len, &fserr, &count, &more, &size);
        r = restarted(answer(st, fserr));
        if (r)
            return (int)r;
        if (!count)
            return more ? LX_DISKWAIT : -LX_EIO;
        d += count;
        off += count;
        len -= count;
    }
    return 0;
}

int64_t lx_data_writable(int32_t n)
{
    struct lx_node *x = lx_node(n);
    return x && x->fs == LX_FS_DATA && !writable ? -LX_EROFS : 0;
}

uint32_t lx_data_block_size(void)
{
    return mnt_root >= 0 ? block_size : DBLOCK;
}

int64_t lx_data_statfs(uint64_t *out)
{
    /* struct statfs from f_type: type, bsize, blocks, bfree, bavail,
     * files, ffree, fsid, namelen, frsize, flags. */
    if (mnt_root < 0)
        return 1;
    uint64_t st[6] = { 0 };
    int64_t r = ready();
    if (r)
        return r;
    r = restarted(answer(ext2fs_statfs(fs_ep, &st[0], &st[1], &st[2], &st[3], &st[4], &st[5]), 0));
    if (r)
        return r;
    /* ST_* are MS_* but for ST_RELATIME 0x1000 and ST_NOSYMFOLLOW 0x2000; ST_VALID 0x20. */
    uint64_t f = lx_data_mount_flags(), flags = (f & 0xdf) | (f & LX_MS_NOATIME) | (f & LX_MS_NODIRATIME) | 0x20 |
                 (f & LX_MS_RELATIME ? 0x1000 : 0) | (f & LX_MS_NOSYMFOLLOW ? 0x2000 : 0);
    uint64_t v[11] = { 0xef53, block_size, st[0], st[1], st[2], st[3], st[4], st[5],
                       EXT2_NAME_MAX, block_size, flags & ~(uint64_t)LX_MS_DIRSYNC };
    memcpy(out, v, sizeof(v));
    return 0;
}

uint64_t lx_data_mount_flags(void)
{
    return mnt_root < 0 ? 0 : mnt_flags | (writable ? 0 : LX_MS_RDONLY);
}

int32_t lx_data_mount_root(void)
{
    return mnt_root;
}

int lx_data_refuses(const struct lx_node *n, uint64_t flag)
{
    return n->fs == LX_FS_DATA && (mnt_flags & flag);
}

int64_t lx_data_prefetch(const struct lx_node *n, uint64_t off, uint64_t len)
{
    if (n->fs != LX_FS_DATA || (n->mode & LX_S_IFMT) != LX_S_IFREG || mnt_root < 0)
        return 0;
    int64_t r = ready();
    if (r)
        return r;
    if (len > LX_DATA_COPY_MAX)
        return 0;                               /* (lx_node_copy_out refuses it) */
    uint32_t fserr = 0;
    r = answer(ext2fs_prefetch(fs_ep, n->ino, off, len, &fserr), fserr);
    return restarted(r);
}

/* ---------------------------------------------------------------- changes */

void lx_data_node_gone(int32_t node)
{
    const struct lx_node *n = lx_node(node);
    ino_unindex(node);
    if (n->fs != LX_FS_DATA || n->nlink || !n->ino || mnt_root < 0 || (n->mode & LX_S_IFMT) == LX_S_IFDIR)
        return;
    if (!svc_may_call() || lost) {
        if (nreleases < HELD_RELEASES)
            releases[nreleases++] = n->ino;     /* (sent before the next request) */
        return;
    }
    ext2fs_release(fs_ep, n->ino);              /* (an orphan of the service's, if it is one: freed) */
}

/* A change's request made: its answer (a restarted service: the call
 * runs again from its start, its names looked up again). */
#define CHANGE(r, call)                                                         \
    do {                                                                        \
        int64_t st_ = (call);                                                   \
        (r) = restarted(answer(st_, fserr));                                    \
    } while (0)

/* Before a change: writable, the service ready. */
static int64_t change_ready(void)
{
    if (mnt_root < 0 || !writable)
        return -LX_EROFS;
    return ready();
}

int64_t lx_data_create(int32_t dir, const char *name, uint32_t len, uint32_t mode, uint32_t rdev,
                       const char *target, uint32_t tlen, int32_t *out)
{
    int64_t r = change_ready();
    if (r)
        return r;
    struct ext2_inode in[2];                    /* the new inode, the directory */
    uint32_t fserr = 0;
    CHANGE(r, ext2fs_create(fs_ep, lx_node(dir)->ino, mode, rdev, now_sec(), (void *)name, len, (void *)target,
                            target ? tlen : 0, in, sizeof(in), &fserr));
    if (r)
        return r;
    changed(dir, -1);
    int32_t n = lx_node_new(mode);
    if (n < 0) {
        reload(dir);                            /* (the disk has it: the next lookup finds it) */
        return 0;
    }
    struct lx_node *x = lx_node(n);
    mirror(n, &in[0]);
    x->nlink = 0;                               /* (lx_link counts the name) */
    x->size = 0;
    if ((target && (lx_node_resize(x, tlen) || (memcpy(x->mem, target, tlen), 0))) ||
        lx_link(dir, name, len, n) != 0) {
        node_drop(n);
        reload(dir);
        return 0;
    }
    mirror(n, &in[0]);
    mirror(dir, &in[1]);
    x->changed_at = x->born_at = epoch;
    x->loaded = (mode & LX_S_IFMT) == LX_S_IFDIR;       /* (a new directory: no entries to read) */
    if (out)
        *out = n;
    return 0;
}

int64_t lx_data_unlink(int32_t dent, int rmdir)
{
    int64_t r = change_ready();
    if (r)
        return r;
    struct lx_dent *d = lx_dent(dent);
    int32_t dir = d->dir, node = d->node;
    int open = !rmdir && lx_node(node)->opens > 0;
    struct ext2_inode in[2];                    /* the directory, the inode that lost the name */
    uint32_t fserr = 0, orphaned = 0;
    CHANGE(r, ext2fs_unlink(fs_ep, lx_node(dir)->ino, (uint32_t)rmdir, (uint32_t)open, now_sec(), (void *)d->name, d->len, in,
                            sizeof(in), &fserr, &orphaned));
    if (r)
        return r;
    changed(dir, node);
    lx_unlink(dent);
    mirror(dir, &in[0]);
    if (!rmdir && in[1].ino)
        refresh(&in[1]);
    struct lx_node *x = rmdir ? lx_node(node) : NULL;
    if (x && !x->nlink) {
        ino_unindex(node);                      /* (a removed directory still someone's: its inode is free) */
        x->ino = 0;
    }
    return 0;
}

int64_t lx_data_rename(const struct lx_last *o, const struct lx_last *n)
{
    int64_t r = change_ready();
    if (r)
        return r;
    struct lx_node *victim_node = n->node >= 0 ? lx_node(n->node) : NULL;
    int open = victim_node && (victim_node->mode & LX_S_IFMT) != LX_S_IFDIR && victim_node->opens > 0;
    int same = o->dir == n->dir;
    struct ext2_inode in[4];                    /* the old directory, the new, the moved inode, the replaced */
    uint32_t fserr = 0, orphaned = 0;
    CHANGE(r, ext2fs_rename(fs_ep, lx_node(o->dir)->ino, lx_node(n->dir)->ino, lx_node(o->node)->ino, (uint32_t)open,
                            now_sec(), (void *)o->name, o->len, (void *)n->name, n->len, in, sizeof(in), &fserr,
                            &orphaned));
    if (r)
        return r;
    changed(o->dir, n->dir);
    if (lx_rename(o->dent, n->dir, n->name, n->len) != 0) {
        reload(o->dir);
        if (!same)
            reload(n->dir);
        return 0;
    }
    if (n->dent >= 0)
        lx_unlink(n->dent);
    mirror(o->dir, &in[0]);
    mirror(n->dir, same ? &in[0] : &in[1]);
    refresh(&in[2]);
    lx_node(o->node)->changed_at = epoch;
    if (in[3].ino)
        refresh(&in[3]);
    struct lx_node *v = n->node >= 0 ? lx_node(n->node) : NULL;
    if (v && !v->nlink && (v->mode & LX_S_IFMT) == LX_S_IFDIR) {
        ino_unindex(n->node);                   /* (a directory replaced, still someone's: its inode is free) */
        v->ino = 0;
    }
    return 0;
}

int64_t lx_data_link(int32_t node, int32_t dir, const char *name, uint32_t len)
{
    int64_t r = change_ready();
    if (r)
        return r;
    struct ext2_inode in[2];                    /* the directory, the inode */
    uint32_t fserr = 0;
    CHANGE(r, ext2fs_link(fs_ep, lx_node(node)->ino, lx_node(dir)->ino, now_sec(), (void *)name, len, in, sizeof(in),
                          &fserr));
    if (r)
        return r;
    changed(dir, node);
    if (lx_link(dir, name, len, node) != 0)
        reload(dir);
    else
        mirror(dir, &in[0]);
    refresh(&in[1]);
    return 0;
}

int64_t lx_data_setattr(int32_t node, uint32_t what, uint32_t mode, uint32_t uid, uint32_t gid,
                        const struct lx_time *atime, const struct lx_time *mtime)
{
    int64_t r = change_ready();
    if (r)
        return r;
    struct ext2_inode in;
    uint32_t fserr = 0;
    CHANGE(r, ext2fs_setattr(fs_ep, lx_node(node)->ino, what, mode, uid, gid, atime ? (uint64_t)atime->sec : 0,
                             mtime ? (uint64_t)mtime->sec : 0, now_sec(), &in, sizeof(in), &fserr));
    if (r)
        return r;
    changed(node, -1);
    refresh(&in);
    return 0;
}

int64_t lx_data_truncate(int32_t node, uint64_t size)
{
    int64_t r = change_ready();
    if (r)
        return r;
    struct ext2_inode in;
    uint32_t fserr = 0;
    CHANGE(r, ext2fs_truncate(fs_ep, lx_node(node)->ino, size, now_sec(), &in, sizeof(in), &fserr));
    if (r)
        return r;
    changed(node, -1);
    refresh(&in);
    return 0;
}

/* One request writing [src, src + len) (lent: the program's memory, or
 * the personality's own) into n at `at` (its end when `append`): 0 and
 * *put, LX_DISKWAIT (*put: what went before the wait) or an error. */
static int64_t write_some(struct lx_node *n, int append, uint64_t at, void *src, uint64_t len, uint64_t *put)
{
    struct ext2_inode in;
    uint32_t fserr = 0, more = 0;
    int64_t r;
    *put = 0;
    CHANGE(r, ext2fs_write(fs_ep, n->ino, !n->nlink, at, (uint32_t)append, now_sec(), src, len, &in, sizeof(in),
                           &fserr, put, &more));
    if (*put) {
        n->changed_at = epoch;
        changed(-1, -1);
        refresh(&in);
    }
    if (!r && more)
        r = LX_DISKWAIT;
    return r;
}

int64_t lx_data_write_kernel(struct lx_node *n, const void *src, uint64_t len, uint64_t *pos)
{
    int64_t r = change_ready();
    if (r)
        return r;
    uint64_t done = 0;
    while (done < len) {
        uint64_t k = len - done < CHUNK ? len - done : CHUNK, put = 0;
        r = write_some(n, 0, *pos + done, (uint8_t *)(uintptr_t)src + done, k, &put);
        done += put;
        if (r || put < k)
            break;
    }
    if (!done)
        return r;
    *pos += done;
    return (int64_t)done;                       /* (a wait after some bytes: those; the caller asks again) */
}

int64_t lx_data_write(struct lx_ctx *c, struct lx_node *n, uint32_t flags, uint64_t buf, uint64_t len, uint64_t *pos)
{
    int64_t r = change_ready();
    if (r)
        return r;
    uint64_t done = c->t->io.done;              /* (a write run again after a wait: what it wrote then) */
    int append = (flags & O_APPEND) != 0;
    int64_t err = 0;
    while (done < len) {
        uint64_t k = len - done < CHUNK ? len - done : CHUNK, put = 0;
        uint64_t lent = lx_range_ok(buf + done, k) ? svc_client_buffer(c->call, buf + done, k, 0) : 0;
        if (!lent) {
            err = -LX_EFAULT;
            break;
        }
        err = write_some(n, append, *pos + done, (void *)(uintptr_t)lent, k, &put);
        done += put;
        if (err || put < k)
            break;                              /* the disk is full (or the file at its largest) */
    }
    int sync_failed = 0;
    if (!err && done && ((flags & O_DSYNC) || (mnt_flags & LX_MS_SYNCHRONOUS))) {
        err = lx_data_fsync(c, n);              /* O_SYNC, O_DSYNC, a sync mount: on the disk before it returns */
        sync_failed = err < 0 && err != LX_DISKWAIT;
    }
    if (err == LX_DISKWAIT && done) {
        c->t->io.done = done;                   /* run again: on from here */
        return LX_DISKWAIT;
    }
    c->t->io.done = 0;
    if (!done || sync_failed)
        return err;                             /* (an O_SYNC write whose sync failed: its error, as
                                                 * Linux's generic_write_sync gives) */
    if (!append)
        *pos += done;
    else
        *pos = n->size;
    return (int64_t)done;
}

/* Everything on the disk, what was changed before the call: 0,
 * LX_DISKWAIT while that goes on (*need: what the call waits for;
 * *began: the epoch it began in), or EIO (once) if a write failed. */
static int64_t sync_all(uint64_t *need, uint64_t *began)
{
    if (mnt_root < 0)
        return 0;
    int64_t r = ready();
    if (r)
        return r;
    if (*need && *began <= lost_to) {
        *need = 0;                              /* (it began before the service restarted: what it */
        return -LX_EIO;                         /* covered may be what the restart lost) */
    }
    if (!*need)
        *began = epoch++;                       /* (what is changed from now on: the next sync's) */
    uint32_t fserr = 0;
    uint64_t next = 0;
    int64_t st = ext2fs_sync(fs_ep, *need, &fserr, &next);
    r = answer(st, fserr);
    if (r == 1) {
        *need = 0;
        return -LX_EIO;                         /* (restarted: what it lost may be what this covered) */
    }
    if (r)
        return r;
    *need = next;
    if (next)
        return LX_DISKWAIT;
    synced_epoch = *began > synced_epoch ? *began : synced_epoch;
    writeback_due = 0;
    return 0;
}

int64_t lx_data_fsync(struct lx_ctx *c, struct lx_node *n)
{
    if (n && n->wb_error) {
        n->wb_error = 0;                        /* (told once, as Linux tells a write-back error) */
        c->t->sync_need = 0;
        return -LX_EIO;
    }
    int64_t r = sync_all(&c->t->sync_need, &c->t->sync_epoch);
    if (r != LX_DISKWAIT)
        c->t->sync_need = 0;                    /* (the call is over: the next one waits for its own) */
    return r;
}

/* Mark the file system clean and read-only, everything on the disk:
 * 0, LX_DISKWAIT (the call runs again) or EIO. */
static int putting;                     /* a put_away under way (the service read-only already) */
static int64_t put_away(void)
{
    if (mnt_root < 0)
        return 0;
    int64_t r = ready();
    if (r)
        return r;
    uint32_t fserr = 0;
    r = restarted(answer(ext2fs_set_readonly(fs_ep, now_sec(), &fserr), fserr));
    putting = r == LX_DISKWAIT;
    if (r != LX_DISKWAIT)
        writable = 0;
    if (!r)
        writeback_due = 0;
    return r;
}

int64_t lx_data_unmount(void)
{
    return put_away();
}

/* Make it writable again: 0, LX_DISKWAIT or EROFS. */
static int64_t make_writable(void)
{
    int64_t r = ready();
    if (r)
        return r;
    uint32_t fserr = 0;
    r = restarted(answer(ext2fs_set_writable(fs_ep, now_sec(), &fserr), fserr));
    if (!r)
        writable = 1;
    else if (r != LX_DISKWAIT)
        lx_log("EXT2-fs (vda): not writable (error %ld)", (long)-r);
    return r;
}

int64_t lx_data_umount(struct lx_ctx *c)
{
    static int made_ro;                         /* the umount under way made the file system read-only */
    c->t->sync_need = 0;
    if (mnt_root < 0)
        return -LX_EINVAL;
    if (lx_fs_busy(LX_FS_DATA)) {
        /* (held again while it waited: as it was, read-write) */
        if (made_ro && !(disk_flags & 1) && make_writable() == LX_DISKWAIT)
            return LX_DISKWAIT;
        made_ro = 0;
        putting = 0;
        return -LX_EBUSY;
    }
    int was = writable;
    int64_t r = put_away();
    made_ro |= was && (putting || !writable);  /* (the service read-only from its first answer on) */
    if (r == LX_DISKWAIT)
        return r;
    made_ro = 0;
    putting = 0;
    if (r)
        lx_log("EXT2-fs (vda): unmounted, but a write to the disk failed");   /* (umount succeeds, as Linux's) */
    ext2fs_unmount(fs_ep);
    lx_fs_forget(LX_FS_DATA, mnt_root);
    lx_unmount_dir(mnt_root, covered);
    mnt_root = covered = -1;
    mnt_flags = 0;
    writable = 0;
    lost = 0;
    writeback_due = 0;
    return 0;
}

int64_t lx_data_remount(struct lx_ctx *c, uint64_t flags)
{
    c->t->sync_need = 0;
    if (mnt_root < 0)
        return -LX_EINVAL;
    if ((flags & LX_MS_RDONLY) && writable) {
        if (!putting && lx_fs_writers(LX_FS_DATA))
            return -LX_EBUSY;                   /* files open for writing, as Linux says */
        int64_t r = put_away();
        if (r)
            return r;
    } else if (!(flags & LX_MS_RDONLY) && !writable) {
        if (disk_flags & 1)
            return -LX_EACCES;
        int64_t r = make_writable();
        if (r)
            return r;
    }
    mnt_flags = flags & LX_MS_KEPT;
    return 0;
}
