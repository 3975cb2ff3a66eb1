/*
 * /data: the machine's disk, driven by the block device service (`blk`,
 * services/blk, idl/blk.toml), with its ext2 file system (lib/ext2.c)
 * mounted in the personality's tree when the system description lets
 * the personality call `blk` and the machine has a disk.
 *
 * The disk's files live in the same node table as the root's
 * (rootfs.c): a node of LX_FS_DATA mirrors an inode (its number, mode,
 * links, owner, size, times and blocks), and a directory's entries are
 * read into the table, all of them, when a lookup or a listing first
 * needs them. Contents stay on the disk: read() goes to the file system
 * each time, through the blk service's cache and a small one here
 * (CACHE_BLOCKS blocks of 4 KiB, least recently used first out).
 *
 * The personality never waits for the disk. A call that needs a block
 * the cache lacks gets -EXT2_EAGAIN from the file system, having changed
 * nothing; it answers LX_DISKWAIT, which the dispatcher turns into a
 * wait (LX_BLK_DISK) that the blk service's `watch` ends when the disk
 * finishes a request: then every such call runs again from its `svc`.
 * A read that had moved bytes answers their count instead. As Linux's
 * waits for a disk, these do not end for a signal.
 *
 * The mount is read-only for now: every call that would change the disk
 * answers EROFS (ext2fs_writable). It happens at the first lookup that
 * reaches /data; an image the file system refuses leaves /data an empty
 * directory of the root, and the reason on the console.
 */
#include "lx.h"
#include "blk_if.h"
#include "ext2.h"

#define DBLOCK          4096u           /* the unit of the cache here and in the blk service */
#define CACHE_BLOCKS    64u             /* 256 KiB */
#define SECTOR          512u
#define EXT2_MAGIC      0xef53

static uint32_t blk_ep;                 /* the blk service (0: none) */
static uint64_t disk_bytes;
static uint32_t disk_flags;             /* blk's `info` flags: 1 read-only */
static struct {
    uint64_t no, used;
    uint8_t *data;
    uint8_t valid;
} cache[CACHE_BLOCKS];
static uint64_t clock_;
static struct ext2_fs fs;
static int mounted;                     /* 0: not yet; 1: mounted; -1: refused (/data is the root's) */
static int32_t data_root = -1;          /* the node of /data */
static int32_t covered = -1;            /* the root's /data, which the mount hides */

/* ---------------------------------------------------------------- the disk */

/* Block `no` of the disk, in the cache here: 0 (*out), -EXT2_EAGAIN while
 * the blk service fetches it, -EXT2_EIO. */
static int block(uint64_t no, uint8_t **out)
{
    unsigned victim = 0;
    for (unsigned i = 0; i < CACHE_BLOCKS; i++) {
        if (cache[i].valid && cache[i].no == no) {
            cache[i].used = ++clock_;
            *out = cache[i].data;
            return 0;
        }
        if (!cache[i].valid || cache[i].used < cache[victim].used)
            victim = i;
        if (!cache[victim].valid)
            break;
    }
    if (no >= (disk_bytes + DBLOCK - 1) / DBLOCK)
        return -EXT2_EIO;
    if (!svc_may_call())
        return -EXT2_EAGAIN;                    /* (the register entry: the full path asks the disk) */
    if (!cache[victim].data && !(cache[victim].data = svc_alloc(DBLOCK)))
        return -EXT2_EIO;
    uint64_t bytes = disk_bytes - no * DBLOCK < DBLOCK ? disk_bytes - no * DBLOCK : DBLOCK, count = 0;
    cache[victim].valid = 0;
    int64_t err = blk_read(blk_ep, no * (DBLOCK / SECTOR), cache[victim].data, bytes, &count);
    if (err == SVC_E_AGAIN)
        return -EXT2_EAGAIN;
    if (err || count != bytes)
        return -EXT2_EIO;
    cache[victim].no = no;
    cache[victim].valid = 1;
    cache[victim].used = ++clock_;
    *out = cache[victim].data;
    return 0;
}

/* The file system's read callback. */
static int disk_read(void *ctx, uint64_t off, void *buf, uint32_t len)
{
    (void)ctx;
    uint8_t *dst = buf;
    if (off > disk_bytes || len > disk_bytes - off)
        return -EXT2_EIO;
    while (len) {
        uint8_t *b;
        uint32_t in = (uint32_t)(off % DBLOCK), k = DBLOCK - in < len ? DBLOCK - in : len;
        int err = block(off / DBLOCK, &b);
        if (err)
            return err;
        memcpy(dst, b + in, k);
        dst += k;
        off += k;
        len -= k;
    }
    return 0;
}

/* A file system error as the call's answer: LX_DISKWAIT for a block not
 * in yet, else Linux's errno (the file system's are Linux's). */
static int64_t answer(int err)
{
    return err == -EXT2_EAGAIN ? LX_DISKWAIT : err;
}

/* The disk finished a request (the blk service's `watch`): the calls
 * waiting for one run again. */
void lx_data_changed(void)
{
    if (blk_ep)
        lx_wake_all(LX_BLK_DISK, 0);
}

/* ---------------------------------------------------------------- nodes */

static struct lx_time at_sec(uint32_t s) { return (struct lx_time){ (int64_t)s, 0 }; }

/* Node n now mirrors inode `in`. */
static void mirror(int32_t n, const struct ext2_inode *in)
{
    struct lx_node *x = lx_node(n);
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

/* The inode node n mirrors, read again. */
static int inode_of(const struct lx_node *n, struct ext2_inode *in)
{
    int err = ext2_inode(&fs, n->ino, in);
    if (err == -EXT2_ENOENT)
        return -EXT2_EUCLEAN;                   /* an entry naming a free inode */
    if (!err && (in->mode & EXT2_S_IFMT) != (n->mode & LX_S_IFMT))
        return -EXT2_EUCLEAN;                   /* (changed under us: only a corrupt image does that) */
    return err;
}

/* Mount the disk's file system on /data, once: 0 (mounted, or refused:
 * then /data is the root's again, an empty directory) or LX_DISKWAIT. */
static int64_t mount(void)
{
    if (mounted)
        return 0;
    struct ext2_io io = { NULL, disk_read, NULL };
    struct ext2_inode root;
    int err = ext2_mount(&fs, &io);
    if (!err)
        err = ext2_inode(&fs, EXT2_ROOT_INO, &root);
    if (!err && (root.mode & EXT2_S_IFMT) != EXT2_S_IFDIR)
        err = -EXT2_EUCLEAN, fs.why = "the root inode is not a directory";
    if (err == -EXT2_EAGAIN)
        return LX_DISKWAIT;
    if (err) {
        lx_log("/dev/vda not mounted on /data: %s (error %d)", fs.why ? fs.why : "the disk could not be read",
               -err);
        mounted = -1;
        lx_unmount_dir(data_root, covered);     /* the root's /data again */
        return 0;
    }
    mirror(data_root, &root);
    lx_node(data_root)->loaded = 0;
    mounted = 1;
    return 0;
}

void lx_data_init(void)
{
    svc_handle ep = svc_service("blk");
    uint64_t sectors = 0;
    uint32_t block_size = 0, geometry = 0;
    if (!ep || blk_info((uint32_t)ep, &sectors, &block_size, &disk_flags, &geometry) != 0 || !sectors)
        return;                                 /* no disk: no /data */
    uint64_t bits;
    svc_handle note = lx_wakeup(&bits);
    if (!note || blk_watch((uint32_t)ep, (uint32_t)note, bits) != 0) {
        lx_log("/dev/vda not mounted on /data: the disk's service takes no more watchers");
        return;
    }
    data_root = lx_mount_dir("data", LX_FS_DATA, 0755, &covered);
    if (data_root < 0)
        return;
    blk_ep = (uint32_t)ep;
    disk_bytes = sectors * SECTOR;
    lx_node(data_root)->ino = EXT2_ROOT_INO;
}

int64_t lx_data_ready(int32_t n)
{
    struct lx_node *x = lx_node(n);
    if (!x || x->fs != LX_FS_DATA)
        return 0;
    return mount();
}

int64_t lx_data_dir_ready(int32_t dir)
{
    struct lx_node *d = lx_node(dir);
    if (!d || d->fs != LX_FS_DATA || (d->mode & LX_S_IFMT) != LX_S_IFDIR)
        return 0;
    int64_t err = mount();
    if (err || d->loaded || !d->nlink || d->fs != LX_FS_DATA)
        return err;                             /* (refused: /data is an empty directory of the root) */
    /* Every entry, each with its inode, or none: a block not in yet
     * undoes what was read so far, and the call runs again. */
    struct ext2_inode din, in;
    int e = inode_of(d, &din);
    uint64_t pos = 0;
    uint32_t ino, len;
    uint8_t type;
    char name[EXT2_NAME_MAX];
    while (!e && (e = ext2_readdir(&fs, &din, &pos, &ino, &type, name, &len)) == 1) {
        e = 0;
        if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        if ((e = ext2_inode(&fs, ino, &in)) != 0) {
            e = e == -EXT2_ENOENT ? -EXT2_EUCLEAN : e;
            break;
        }
        uint32_t kind = in.mode & EXT2_S_IFMT;
        if (!kind || (type && type != ((kind >> 12) == 8 ? 1 : (kind >> 12) == 4 ? 2 : (kind >> 12) == 2 ? 3 :
                                       (kind >> 12) == 6 ? 4 : (kind >> 12) == 1 ? 5 : (kind >> 12) == 12 ? 6 : 7))) {
            e = -EXT2_EUCLEAN;                  /* the entry's type is not its inode's */
            break;
        }
        int32_t n = lx_node_new(in.mode);
        if (n < 0) {
            e = n;
            break;
        }
        mirror(n, &in);
        if (kind == EXT2_S_IFLNK) {             /* the target, kept here as the root's links keep it */
            struct lx_node *x = lx_node(n);
            uint32_t got = 0;
            x->size = 0;                        /* (made room for below) */
            if (in.size == 0 || in.size >= LX_PATH_MAX || (e = lx_node_resize(x, in.size)) != 0 ||
                (e = ext2_readlink(&fs, &in, (char *)x->mem, (uint32_t)in.size, &got)) != 0 || got != in.size) {
                e = e ? e : -EXT2_EUCLEAN;
                lx_node_maybe_free(n);
                break;
            }
            x->disk_blocks = in.blocks;
        }
        if ((e = lx_dent_attach(dir, name, len, n, (1ull << 40) + pos)) != 0) {
            lx_node_maybe_free(n);
            break;
        }
    }
    if (e < 0) {
        lx_dir_unload(dir);
        return answer(e);
    }
    d->loaded = 1;
    return 0;
}

int64_t lx_data_read(struct lx_ctx *c, struct lx_node *n, uint64_t buf, uint64_t len, uint64_t *pos)
{
    static uint8_t bounce[16384];
    struct ext2_inode in;
    int err = inode_of(n, &in);
    if (err)
        return answer(err);
    n->size = in.size;
    uint64_t done = 0;
    while (done < len && *pos + done < in.size) {
        uint32_t k = len - done < sizeof(bounce) ? (uint32_t)(len - done) : (uint32_t)sizeof(bounce), got = 0;
        if ((err = ext2_read(&fs, &in, *pos + done, bounce, k, &got)) != 0 || got == 0)
            break;
        uint64_t out = lx_copy_out_some(c, buf + done, bounce, got);
        done += out;
        if (out < got) {
            err = done ? 0 : -LX_EFAULT;
            break;
        }
    }
    if (!done && err)
        return answer(err);
    *pos += done;
    return (int64_t)done;                       /* (a block not in yet after some bytes: those) */
}

int lx_data_node_read(const struct lx_node *n, uint64_t off, void *dst, uint64_t len)
{
    struct ext2_inode in;
    int err = inode_of(n, &in);
    if (err)
        return (int)answer(err);
    if (off > in.size || len > in.size - off)
        return -LX_EIO;
    uint8_t *d = dst;
    while (len) {
        uint32_t k = len < (1u << 30) ? (uint32_t)len : 1u << 30, got = 0;
        if ((err = ext2_read(&fs, &in, off, d, k, &got)) != 0)
            return (int)answer(err);
        if (!got)
            return -LX_EIO;
        d += got;
        off += got;
        len -= got;
    }
    return 0;
}

int64_t lx_data_writable(int32_t n)
{
    struct lx_node *x = lx_node(n);
    return x && x->fs == LX_FS_DATA ? -LX_EROFS : 0;
}

uint32_t lx_data_block_size(void)
{
    return mounted > 0 ? fs.block_size : DBLOCK;
}

int64_t lx_data_statfs(uint64_t *out)
{
    /* struct statfs from f_type: type, bsize, blocks, bfree, bavail,
     * files, ffree, fsid, namelen, frsize, flags. */
    int64_t err = mount();
    if (err || mounted < 0)
        return err ? err : 1;
    struct ext2_statfs st;
    ext2_statfs(&fs, &st);
    uint64_t v[11] = { EXT2_MAGIC, fs.block_size, st.blocks, st.bfree, st.bavail, st.files, st.ffree, st.fsid,
                       EXT2_NAME_MAX, fs.block_size, 0x1020 | 1 };  /* ST_VALID | ST_RELATIME | ST_RDONLY */
    memcpy(out, v, sizeof(v));
    return 0;
}

int lx_data_mounted(void)
{
    return mounted > 0;
}
