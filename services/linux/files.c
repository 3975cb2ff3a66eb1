/*
 * Descriptors and the file system calls over the root archive and the
 * three devices (/dev/null, /dev/zero, /dev/console).
 *
 * A descriptor names an open file description (struct lx_file: node,
 * access mode, position) from one table shared by all processes, counted
 * by the descriptors naming it. Regular files are read straight from the
 * archive in place. The console writes to the system console; reading it
 * gives end of file in this step (line input comes with the terminal).
 * The root is read-only: opening a file for writing gives EROFS.
 *
 * Errors are checked in Linux's order: the descriptor (EBADF), its access
 * mode (EBADF), the buffer's range (EFAULT), then the file's kind.
 */
#include "lx.h"

#define O_ACCMODE   3
#define O_WRONLY    1
#define O_RDWR      2
#define O_CREAT     0100
#define O_EXCL      0200
#define O_TRUNC     01000
#define O_APPEND    02000
#define O_DIRECTORY 040000
#define O_NOFOLLOW  0100000
#define O_CLOEXEC   02000000
#define O_LARGEFILE 0400000
#define FIONREAD    0x541b
#define O_PATH      010000000
#define AT_FDCWD    (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_NO_AUTOMOUNT     0x800
#define AT_EMPTY_PATH       0x1000
#define MAX_RW_COUNT        0x7ffff000ull
#define UIO_MAXIOV          1024
#define LX_ENXIO            6

static struct lx_file files[LX_OPEN];
static char path_buf[LX_PATH_MAX];          /* the path of the call being served (one at a time) */
static int32_t console_node = -1;

/* The open file behind descriptor fd of process p, or NULL. */
static struct lx_file *file_of(struct lx_proc *p, uint64_t fd)
{
    return fd < LX_FDS ? p->fds[fd] : NULL;
}

struct lx_file *lx_file_new(int32_t node, uint32_t flags)
{
    for (int i = 0; i < LX_OPEN; i++) {
        if (!files[i].refs) {
            files[i] = (struct lx_file){ 1, node, flags, 0, -1 };
            return &files[i];
        }
    }
    return NULL;
}

void lx_file_get(struct lx_file *f)
{
    f->refs++;
}

void lx_file_put(struct lx_file *f)
{
    if (--f->refs == 0 && f->node < 0)
        lx_pipe_close(f);
}

int lx_fd_new(struct lx_proc *p, struct lx_file *f, int cloexec, int from)
{
    for (int fd = from; fd < LX_FDS; fd++) {
        if (!p->fds[fd]) {
            p->fds[fd] = f;
            p->cloexec[fd] = (uint8_t)cloexec;
            return fd;
        }
    }
    return -LX_EMFILE;
}

int lx_files_init(struct lx_proc *p)
{
    if (console_node < 0)
        console_node = lx_lookup(LX_ROOT, "/dev/console", 1);
    struct lx_file *f = console_node >= 0 ? lx_file_new(console_node, O_RDWR) : NULL;
    if (!f)
        return -LX_ENFILE;
    f->refs = 3;
    p->fds[0] = p->fds[1] = p->fds[2] = f;
    return 0;
}

void lx_files_drop(struct lx_proc *p)
{
    for (int fd = 0; fd < LX_FDS; fd++) {
        if (p->fds[fd])
            lx_file_put(p->fds[fd]);
        p->fds[fd] = NULL;
    }
}

static uint32_t kind(const struct lx_node *n) { return n->mode & LX_S_IFMT; }

/* The directory a path is relative to: AT_FDCWD (the working directory)
 * or a directory descriptor. */
static int32_t start_dir(struct lx_ctx *c, int64_t dirfd, const char *path)
{
    if (path[0] == '/')
        return LX_ROOT;
    if ((int32_t)dirfd == AT_FDCWD)
        return c->p->cwd;
    struct lx_file *f = (int32_t)dirfd >= 0 ? file_of(c->p, (uint32_t)dirfd) : NULL;
    if (!f)
        return -LX_EBADF;
    return f->node >= 0 && kind(lx_node(f->node)) == LX_S_IFDIR ? f->node : -LX_ENOTDIR;
}

int64_t lx_sys_openat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mode)
{
    int64_t len = lx_copy_str(c, path_buf, upath, sizeof(path_buf));
    if (len < 0)
        return len;
    if (len == 0)
        return -LX_ENOENT;
    int32_t dir = start_dir(c, dirfd, path_buf);
    if (dir < 0)
        return dir;
    uint32_t fl = (uint32_t)flags;
    int32_t node = lx_lookup(dir, path_buf, !(fl & O_NOFOLLOW));
    if (node == -LX_ENOENT && (fl & O_CREAT))
        return -LX_EROFS;
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if ((fl & O_CREAT) && (fl & O_EXCL))
        return -LX_EEXIST;
    if (kind(n) == LX_S_IFLNK)
        return -LX_ELOOP;                       /* O_NOFOLLOW on a link */
    if ((fl & O_DIRECTORY) && kind(n) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    int writing = (fl & O_ACCMODE) != 0 || (fl & O_TRUNC);
    if (kind(n) == LX_S_IFDIR && writing)
        return -LX_EISDIR;
    if (kind(n) == LX_S_IFREG && writing)
        return -LX_EROFS;
    if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_NONE)
        return -LX_ENXIO;
    if ((fl & O_ACCMODE) == O_ACCMODE)
        return -LX_EINVAL;
    if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_TTY) {
        if (!lx_tty_is_ctty(c->p))
            return -LX_ENXIO;                   /* /dev/tty: the caller's controlling terminal, if it has one */
        node = console_node >= 0 ? console_node : lx_lookup(LX_ROOT, "/dev/console", 1);
        if (node < 0)
            return -LX_ENXIO;
    }
    struct lx_file *f = lx_file_new(node, (fl & ~(uint32_t)(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC)) | O_LARGEFILE);
    if (!f)
        return -LX_ENFILE;
    int fd = lx_fd_new(c->p, f, (fl & O_CLOEXEC) != 0, 0);
    if (fd < 0)
        f->refs = 0;
    return fd;
}

int64_t lx_sys_close(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    c->p->fds[(uint32_t)fd] = NULL;
    lx_file_put(f);
    return 0;
}

static const uint8_t zeros[1024];

/* Read up to len bytes of f at *pos into the process at buf (range checked). */
static int64_t read_file(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len, uint64_t *pos)
{
    if (len > MAX_RW_COUNT)
        len = MAX_RW_COUNT;
    if (f->node < 0)
        return lx_pipe_read(c, f, buf, len);
    struct lx_node *n = lx_node(f->node);
    switch (kind(n)) {
    case LX_S_IFDIR:
        return -LX_EISDIR;
    case LX_S_IFREG: {
        uint64_t left = *pos < n->size ? n->size - *pos : 0, want = len < left ? len : left;
        uint64_t count = lx_copy_out_some(c, buf, lx_fs_data() + n->data_off + *pos, want);
        if (count == 0 && want)
            return -LX_EFAULT;
        *pos += count;
        return (int64_t)count;
    }
    default:
        break;
    }
    if (n->dev == LX_DEV_CONSOLE)
        return lx_tty_read(c, f, buf, len);
    if (n->dev != LX_DEV_ZERO)
        return 0;                               /* /dev/null: end of file */
    uint64_t done = 0;
    while (done < len) {
        uint64_t chunk = len - done < sizeof(zeros) ? len - done : sizeof(zeros);
        if (lx_copy_out(c, buf + done, zeros, chunk))
            return done ? (int64_t)done : -LX_EFAULT;
        done += chunk;
    }
    return (int64_t)done;
}

/* Write len bytes from the process at buf to f (range checked). */
static int64_t write_file(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    if (len > MAX_RW_COUNT)
        len = MAX_RW_COUNT;
    if (f->node < 0)
        return lx_pipe_write(c, f, buf, len);
    struct lx_node *n = lx_node(f->node);
    if (kind(n) != LX_S_IFCHR)
        return -LX_EBADF;
    if (n->dev != LX_DEV_CONSOLE)
        return (int64_t)len;                    /* /dev/null and /dev/zero take everything unread */
    return lx_tty_write(c, buf, len);
}

int64_t lx_sys_read(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == O_WRONLY || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    return read_file(c, f, buf, len, &f->pos);
}

int64_t lx_sys_pread(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, int64_t off)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == O_WRONLY || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    if (f->node < 0)
        return -LX_ESPIPE;
    if (off < 0)
        return -LX_EINVAL;
    if (kind(lx_node(f->node)) != LX_S_IFREG && kind(lx_node(f->node)) != LX_S_IFDIR)
        return lx_node(f->node)->dev == LX_DEV_CONSOLE ? -LX_ESPIPE : read_file(c, f, buf, len, &f->pos);
    uint64_t pos = (uint64_t)off;
    return read_file(c, f, buf, len, &pos);
}

int64_t lx_sys_write(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == 0 || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    return write_file(c, f, buf, len);
}

/* readv (writing 0) and writev (writing 1). */
int64_t lx_sys_readv(struct lx_ctx *c, uint64_t fd, uint64_t uiov, uint64_t cnt, int writing)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f || (f->flags & O_PATH) || (f->flags & O_ACCMODE) == (writing ? 0 : O_WRONLY))
        return -LX_EBADF;
    uint64_t n = (uint32_t)cnt;
    if (n > UIO_MAXIOV)
        return -LX_EINVAL;
    struct { uint64_t base, len; } iov[16];
    uint64_t total = 0;
    /* Check every vector first, as Linux does before moving a byte. */
    for (uint64_t i = 0; i < n; i += 16) {
        uint64_t k = n - i < 16 ? n - i : 16;
        if (lx_copy_in(c, iov, uiov + i * 16, k * 16))
            return -LX_EFAULT;
        for (uint64_t j = 0; j < k; j++) {
            if ((int64_t)iov[j].len < 0)
                return -LX_EINVAL;
            if (!lx_range_ok(iov[j].base, iov[j].len))
                return -LX_EFAULT;
        }
    }
    for (uint64_t i = 0; i < n; i += 16) {
        uint64_t k = n - i < 16 ? n - i : 16;
        if (lx_copy_in(c, iov, uiov + i * 16, k * 16))
            return total ? (int64_t)total : -LX_EFAULT;
        for (uint64_t j = 0; j < k; j++) {
            uint64_t want = iov[j].len < MAX_RW_COUNT - total ? iov[j].len : MAX_RW_COUNT - total;
            int64_t r = writing ? write_file(c, f, iov[j].base, want) : read_file(c, f, iov[j].base, want, &f->pos);
            if (r == LX_BLOCK) {                /* a pipe: what moved so far, or wait with nothing moved */
                total += c->p->io_done;
                c->p->io_done = 0;
                if (!total)
                    return LX_BLOCK;
                c->p->blk.kind = LX_BLK_NONE;
                return (int64_t)total;
            }
            if (r < 0)
                return total ? (int64_t)total : r;
            total += (uint64_t)r;
            if ((uint64_t)r < want || total == MAX_RW_COUNT)
                return (int64_t)total;
        }
    }
    return (int64_t)total;
}

int64_t lx_sys_lseek(struct lx_ctx *c, uint64_t fd, int64_t off, uint64_t whence)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->node < 0)
        return -LX_ESPIPE;
    struct lx_node *n = lx_node(f->node);
    if (kind(n) == LX_S_IFCHR)
        return n->dev == LX_DEV_CONSOLE ? -LX_ESPIPE : 0;
    int64_t base;
    switch ((uint32_t)whence) {
    case 0: base = 0; break;
    case 1: base = (int64_t)f->pos; break;
    case 2: base = (int64_t)n->size; break;
    case 3: case 4:                             /* SEEK_DATA, SEEK_HOLE: one extent of data */
        if (kind(n) != LX_S_IFREG)
            return -LX_EINVAL;
        if (off < 0 || (uint64_t)off >= n->size)
            return -LX_ENXIO;
        f->pos = whence == 3 ? (uint64_t)off : n->size;
        return (int64_t)f->pos;
    default:
        return -LX_EINVAL;
    }
    if (kind(n) == LX_S_IFDIR && whence == 2)
        return -LX_EINVAL;
    if ((off > 0 && base > INT64_MAX - off) || base + off < 0)
        return -LX_EINVAL;
    f->pos = (uint64_t)(base + off);
    return (int64_t)f->pos;
}

/* struct stat as the generic (and arm64) Linux ABI lays it out: 128 bytes. */
struct lx_stat {
    uint64_t dev, ino;
    uint32_t mode, nlink, uid, gid;
    uint64_t rdev, pad1;
    int64_t size;
    int32_t blksize, pad2;
    int64_t blocks;
    int64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
    uint32_t unused[2];
};
_Static_assert(sizeof(struct lx_stat) == 128, "struct stat is 128 bytes on arm64");

static int64_t stat_out(struct lx_ctx *c, int32_t node, uint64_t buf)
{
    struct lx_node *n = lx_node(node);
    static const uint32_t rdev[] = { 0, 0x103, 0x105, 0x501, 0x500 };  /* null 1:3, zero 1:5, console 5:1, tty 5:0 */
    struct lx_stat st = { 0 };
    st.dev = 1;
    st.ino = (uint64_t)node + 1;
    st.mode = n->mode;
    st.nlink = kind(n) == LX_S_IFDIR ? 2 : 1;
    st.rdev = kind(n) == LX_S_IFCHR ? rdev[n->dev] : 0;
    st.size = (int64_t)n->size;
    st.blksize = 4096;
    st.blocks = (int64_t)(lx_page_up(n->size) / 512);
    st.atime = st.mtime = st.ctime = (int64_t)n->mtime;
    return lx_copy_out(c, buf, &st, sizeof(st));
}

int64_t lx_sys_fstat(struct lx_ctx *c, uint64_t fd, uint64_t buf)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (f && f->node < 0) {                     /* a pipe: a FIFO of the pipe file system */
        struct lx_stat st = { 0 };
        st.dev = 0xc;
        st.ino = 0x1000 + (uint64_t)f->pipe;
        st.mode = 0010600;
        st.nlink = 1;
        st.blksize = 4096;
        return lx_copy_out(c, buf, &st, sizeof(st));
    }
    return f ? stat_out(c, f->node, buf) : -LX_EBADF;
}

int64_t lx_sys_newfstatat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t buf, uint64_t flags)
{
    if ((uint32_t)flags & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int64_t len = lx_copy_str(c, path_buf, upath, sizeof(path_buf));
    if (len < 0)
        return len;
    if (len == 0 && ((uint32_t)flags & AT_EMPTY_PATH)) {
        if ((int32_t)dirfd == AT_FDCWD)
            return stat_out(c, c->p->cwd, buf);
        return lx_sys_fstat(c, (uint32_t)dirfd, buf);
    }
    if (len == 0)
        return -LX_ENOENT;
    int32_t dir = start_dir(c, dirfd, path_buf);
    if (dir < 0)
        return dir;
    int32_t node = lx_lookup(dir, path_buf, !((uint32_t)flags & AT_SYMLINK_NOFOLLOW));
    return node < 0 ? node : stat_out(c, node, buf);
}

/* The n-th entry of directory `dir` (0 ".", 1 "..", then its children):
 * its node, or -1 past the end. */
static int32_t dir_entry(int32_t dir, uint64_t n)
{
    if (n == 0)
        return dir;
    if (n == 1)
        return lx_node(dir)->parent;
    int32_t e = lx_node(dir)->first_child;
    for (uint64_t i = 2; e >= 0 && i < n; i++)
        e = lx_node(e)->next_sibling;
    return e;
}

int64_t lx_sys_getdents64(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->node < 0 || kind(lx_node(f->node)) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    int32_t count = (int32_t)len;               /* Linux keeps the count in an int: past 2^31, EINVAL */
    uint8_t rec[8 + 8 + 2 + 1 + LX_NAME_MAX + 1 + 8];
    uint64_t done = 0;
    for (int32_t e; (e = dir_entry(f->node, f->pos)) >= 0; f->pos++) {
        struct lx_node *n = lx_node(e);
        const char *name = f->pos == 0 ? "." : f->pos == 1 ? ".." : n->name;
        uint32_t nlen = f->pos == 0 ? 1 : f->pos == 1 ? 2 : n->name_len;
        uint16_t reclen = (uint16_t)((19 + nlen + 1 + 7) & ~7u);
        if (count < 0 || done + reclen > (uint64_t)count)
            return done ? (int64_t)done : -LX_EINVAL;
        uint64_t ino = (uint64_t)e + 1, off = f->pos + 1;
        uint8_t type = (uint8_t)(kind(n) >> 12);        /* DT_* is the S_IF* type shifted down */
        memset(rec, 0, reclen);
        memcpy(rec, &ino, 8);
        memcpy(rec + 8, &off, 8);
        memcpy(rec + 16, &reclen, 2);
        rec[18] = type;
        memcpy(rec + 19, name, nlen);
        if (lx_copy_out(c, buf + done, rec, reclen))
            return done ? (int64_t)done : -LX_EFAULT;
        done += reclen;
    }
    return (int64_t)done;
}

#define FIONBIO     0x5421
#define FIONCLEX    0x5450
#define FIOCLEX     0x5451

int64_t lx_sys_ioctl(struct lx_ctx *c, uint64_t fd, uint64_t req, uint64_t arg)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->node < 0 && (uint32_t)req == FIONREAD) {
        int32_t avail = (int32_t)lx_pipe_avail(f);
        return lx_copy_out(c, arg, &avail, sizeof(avail));
    }
    switch ((uint32_t)req) {
    case FIONBIO: {                             /* any descriptor: O_NONBLOCK on or off */
        int32_t on;
        if (lx_copy_in(c, &on, arg, sizeof(on)))
            return -LX_EFAULT;
        f->flags = on ? f->flags | O_NONBLOCK : f->flags & ~(uint32_t)O_NONBLOCK;
        return 0;
    }
    case FIOCLEX:
    case FIONCLEX:
        c->p->cloexec[(uint32_t)fd] = (uint32_t)req == FIOCLEX;
        return 0;
    default:
        break;
    }
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    if (!n || kind(n) != LX_S_IFCHR || n->dev != LX_DEV_CONSOLE)
        return -LX_ENOTTY;
    return lx_tty_ioctl(c, f, req, arg);
}

int64_t lx_sys_readlinkat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t buf, uint64_t size)
{
    if ((int32_t)size <= 0)
        return -LX_EINVAL;
    int64_t len = lx_copy_str(c, path_buf, upath, sizeof(path_buf));
    if (len < 0)
        return len;
    if (len == 0)
        return -LX_ENOENT;
    int32_t dir = start_dir(c, dirfd, path_buf);
    if (dir < 0)
        return dir;
    int32_t node = lx_lookup(dir, path_buf, 0);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if (kind(n) != LX_S_IFLNK)
        return -LX_EINVAL;
    uint64_t k = n->size < (uint32_t)size ? n->size : (uint32_t)size;
    if (lx_copy_out(c, buf, lx_fs_data() + n->data_off, k))
        return -LX_EFAULT;
    return (int64_t)k;
}

/* ---------------------------------------------------------------- the working directory */

/* Make directory node `dir` (or the error that finding it gave) the working directory. */
static int64_t set_cwd(struct lx_ctx *c, int32_t dir)
{
    if (dir < 0)
        return dir;
    if (kind(lx_node(dir)) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    if (!(lx_node(dir)->mode & 0111))
        return -LX_EACCES;
    c->p->cwd = dir;
    return 0;
}

int64_t lx_sys_chdir(struct lx_ctx *c, uint64_t upath)
{
    int64_t len = lx_copy_str(c, path_buf, upath, sizeof(path_buf));
    if (len < 0)
        return len;
    if (len == 0)
        return -LX_ENOENT;
    return set_cwd(c, lx_lookup(start_dir(c, AT_FDCWD, path_buf), path_buf, 1));
}

int64_t lx_sys_fchdir(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    return f->node < 0 ? -LX_ENOTDIR : set_cwd(c, f->node);
}

/* The working directory's path, built from its node up to the root. */
int64_t lx_sys_getcwd(struct lx_ctx *c, uint64_t buf, uint64_t size)
{
    uint64_t at = sizeof(path_buf) - 1;
    path_buf[at] = 0;
    for (int32_t n = c->p->cwd; n != LX_ROOT; n = lx_node(n)->parent) {
        struct lx_node *node = lx_node(n);
        if (node->name_len + 1 > at)
            return -LX_ENAMETOOLONG;
        at -= node->name_len;
        memcpy(path_buf + at, node->name, node->name_len);
        path_buf[--at] = '/';
    }
    if (at == sizeof(path_buf) - 1)
        path_buf[--at] = '/';
    uint64_t len = sizeof(path_buf) - at;           /* with its NUL */
    if (size < len)
        return -34;                                 /* ERANGE */
    return lx_copy_out(c, buf, path_buf + at, len) ? -LX_EFAULT : (int64_t)len;
}
