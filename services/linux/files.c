/*
 * Descriptors and the file system calls that read and write files:
 * open (and create), read, write, stat, getdents, readlink, the working
 * directory. The calls that change names and attributes are in vfs.c;
 * the store of nodes and entries in rootfs.c; /proc in procfs.c.
 *
 * A descriptor names an open file description (struct lx_file: node,
 * access mode, position) from one table shared by all processes, counted
 * by the descriptors naming it; each description holds its node open
 * (lx_node.opens), so an unlinked file stays readable until the last close.
 * Regular files are read from the archive in place until written, then
 * from memory, or through their memory object once mapped MAP_SHARED
 * (rootfs.c). The console is the terminal (tty.c).
 *
 * Errors are checked in Linux's order: the descriptor (EBADF), its access
 * mode (EBADF), the buffer's range (EFAULT), then the file's kind.
 */
#include "lx.h"

#define FIONREAD    0x541b
#define AT_FDCWD    (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_NO_AUTOMOUNT     0x800
#define AT_EMPTY_PATH       0x1000
#define MAX_RW_COUNT        0x7ffff000ull
#define LX_FILE_MAX         ((uint64_t)INT64_MAX)  /* Linux's largest file offset (MAX_LFS_FILESIZE) */
#define UIO_MAXIOV          1024

/*
 * The open file table grows with use: chunks of CHUNK slots, made when
 * every slot of the chunks there are is taken and given back when their
 * last file goes (but the lowest chunk, which stays, so that a file made
 * and closed in a loop does not make and free a chunk each time). A slot
 * keeps its index for as long as its chunk lives, so lx_file_at(i, gen)
 * is two array lookups; generations come from one counter for the whole
 * table, so a slot used again (in the same chunk or in one made anew)
 * never takes a generation it had: a descriptor or an epoll watch that
 * remembers an old one finds the slot stale.
 *
 * A free slot is found from `chunk_room`, the lowest chunk that may have one,
 * in the chunk's bitmap of slots in use: a word of 64 at a time.
 */
#define CHUNK       256
#define CHUNKS      (LX_NR_FILE / CHUNK)
#define CHUNK_WORDS (CHUNK / 64)

struct chunk {
    uint64_t used[CHUNK_WORDS];     /* slot k in use: bit k % 64 of word k / 64 */
    uint32_t count;                 /* slots in use */
    struct lx_file slot[CHUNK];
};

static struct chunk *chunks[CHUNKS];
static uint32_t chunk_room;                 /* no chunk below it has a free slot */
static uint32_t files_open;                 /* slots in use, in all */
static uint32_t next_gen = 1;               /* the generation of the next file made (never 0) */

static struct lx_file *dying;               /* files whose last reference went, to finalise */
static int finalising;                      /* lx_file_put is finalising them (further puts only queue) */
static char path_buf[LX_PATH_MAX];          /* the path of the call being served (one at a time; no
                                             * lx_file_put path reaches a path lookup) */
static int32_t console_node = -1;

/* Is f a file in use (not free, not being finalised) whose generation is gen? */
static int file_live(const struct lx_file *f, uint32_t gen)
{
    return f->kind != LX_FILE_FREE && f->refs && !f->dying && f->gen == gen;
}

/* The file in slot i whose generation is gen, even one being finalised,
 * or NULL. */
static struct lx_file *slot_file(uint32_t i, uint32_t gen)
{
    struct chunk *ch = i < LX_NR_FILE ? chunks[i / CHUNK] : NULL;
    struct lx_file *f = ch ? &ch->slot[i % CHUNK] : NULL;
    return f && f->kind != LX_FILE_FREE && f->gen == gen ? f : NULL;
}

/* What descriptor entry e (lx_fdtable.slot) names: the file's slot and generation. */
static uint32_t entry_slot(uint64_t e) { return (uint32_t)e - 1; }
static uint32_t entry_gen(uint64_t e) { return (uint32_t)(e >> 32); }

struct lx_file *lx_fd_file(struct lx_proc *p, uint64_t fd)
{
    if (fd >= p->fdt.size || !p->fdt.slot[fd])
        return NULL;
    uint64_t e = p->fdt.slot[fd];
    struct lx_file *f = lx_file_at((int32_t)entry_slot(e), entry_gen(e));
    if (!f) {
        lx_log("pid %d: descriptor %u names a stale open file (refused)", p->pid, (unsigned)fd);
        lx_fd_set(p, (uint32_t)fd, NULL);       /* (a bug of ours: never served) */
        return NULL;
    }
    return f;
}

struct lx_file *lx_fd_peek(struct lx_proc *p, uint64_t fd)
{
    uint64_t e = fd < p->fdt.size ? p->fdt.slot[fd] : 0;
    struct lx_file *f = e ? lx_file_at((int32_t)entry_slot(e), entry_gen(e)) : NULL;
    return f && !(f->flags & O_PATH) ? f : NULL;
}

struct lx_file *lx_fd_use(struct lx_proc *p, uint64_t fd)
{
    struct lx_file *f = lx_fd_file(p, fd);
    return f && !(f->flags & O_PATH) ? f : NULL;
}

/* The open file behind descriptor fd of process p (O_PATH too), or NULL. */
static struct lx_file *file_of(struct lx_proc *p, uint64_t fd)
{
    return lx_fd_file(p, fd);
}

struct lx_file *lx_file_at(int32_t i, uint32_t gen)
{
    struct lx_file *f = i >= 0 ? slot_file((uint32_t)i, gen) : NULL;
    return f && file_live(f, gen) ? f : NULL;
}

int lx_fs_writers(int fs)
{
    for (uint32_t i = 0; i < LX_NR_FILE; i += CHUNK) {
        struct chunk *ch = chunks[i / CHUNK];
        for (uint32_t k = 0; ch && k < CHUNK; k++) {
            struct lx_file *f = &ch->slot[k];
            if (f->kind == LX_FILE_NODE && f->refs && f->node >= 0 && !(f->flags & O_PATH) &&
                (f->flags & O_ACCMODE) != 0 && lx_node_fs(f->node) == fs)
                return 1;
        }
    }
    return 0;
}

int32_t lx_file_slot(const struct lx_file *f)
{
    return f->slot;
}

uint32_t lx_ino_new(void)
{
    static uint32_t next = 0x1000;              /* (below: none of Linux's small fixed numbers) */
    if (next >= 0x7fffffff)
        next = 0x1000;
    return next++;
}

int lx_file_names(const struct lx_file *f)
{
    switch (f->kind) {
    case LX_FILE_NAME:
        return f->name_of;
    case LX_FILE_PIPE:
        return LX_NAME_PIPE;
    case LX_FILE_SOCK:
        return LX_NAME_SOCK;
    case LX_FILE_EVENT:
        return lx_event_name_of(f);
    default:
        return 0;
    }
}

uint32_t lx_name_mode(int what)
{
    return what == LX_NAME_PIPE ? LX_S_IFIFO | 0600 : what == LX_NAME_SOCK ? LX_S_IFSOCK | 0777 :
           0600;                                /* (anonymous inodes have no type) */
}

uint64_t lx_file_ino(const struct lx_file *f)
{
    switch (f->kind) {
    case LX_FILE_NODE:
        return (uint64_t)f->node + 1;           /* (lx_stat_fill's) */
    case LX_FILE_PIPE:
        return lx_pipe_ino(f);
    case LX_FILE_EVENT:
        return lx_event_ino(f);
    case LX_FILE_SOCK:
        return lx_sock_ino(f);
    case LX_FILE_NAME:
        return f->name_ino;
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- descriptor tables */

/* Bytes of a descriptor table of `size`: its slots, then its two bitmaps. */
static uint64_t fdt_bytes(uint32_t size)
{
    return (uint64_t)size * 8 + (uint64_t)size / 64 * 8 * 2;
}

/* Make p's table room for descriptor fd: the next power of two past it
 * (64 at least), with what the old one held; 0 or -ENOMEM. */
static int fdt_grow(struct lx_proc *p, uint32_t fd)
{
    struct lx_fdtable *t = &p->fdt;
    if (fd < t->size)
        return 0;
    if (fd >= LX_NR_OPEN)
        return -LX_EMFILE;                      /* (callers check RLIMIT_NOFILE first) */
    uint32_t size = t->size ? t->size : 64;
    while (size <= fd)
        size *= 2;
    uint64_t *mem = lx_alloc(fdt_bytes(size));
    if (!mem)
        return -LX_ENOMEM;
    struct lx_fdtable n = { size, t->next, t->count, mem, mem + size, mem + size + size / 64 };
    if (t->size) {
        memcpy(n.slot, t->slot, (uint64_t)t->size * 8);
        memcpy(n.open, t->open, (uint64_t)t->size / 8);
        memcpy(n.cloexec, t->cloexec, (uint64_t)t->size / 8);
        lx_free(t->slot, fdt_bytes(t->size));
    }
    *t = n;
    return 0;
}

/* The lowest descriptor from `from` on whose bit in `bits` is `want`
 * (1: open, 0: free), or t->size if none. */
static uint32_t fdt_scan(const struct lx_fdtable *t, const uint64_t *bits, uint64_t from, int want)
{
    for (uint64_t w = from / 64; w < t->size / 64; w++) {
        uint64_t word = want ? bits[w] : ~bits[w];
        if (w == from / 64)
            word &= ~0ull << (from % 64);       /* (none below from) */
        if (word)
            return (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(word));
    }
    return t->size;
}

int lx_fd_set(struct lx_proc *p, uint32_t fd, struct lx_file *f)
{
    struct lx_fdtable *t = &p->fdt;
    if (f && fdt_grow(p, fd))
        return -LX_ENOMEM;
    if (fd >= t->size)
        return 0;                               /* (nothing there to close) */
    uint64_t e = t->slot[fd];
    struct lx_file *old = e ? slot_file(entry_slot(e), entry_gen(e)) : NULL;
    if (old && old != f) {
        lx_locks_closed(p, old);                /* any close of a file ends the process's POSIX locks of it */
        if (old->binder)
            lx_binder_flush(old);               /* (Linux's flush of a binder file at every close) */
    }
    uint64_t bit = 1ull << (fd % 64);
    t->cloexec[fd / 64] &= ~bit;
    t->count += (f != NULL) - ((t->open[fd / 64] & bit) != 0);
    if (f) {
        t->slot[fd] = (uint64_t)f->gen << 32 | ((uint32_t)f->slot + 1);
        t->open[fd / 64] |= bit;
    } else {
        t->slot[fd] = 0;
        t->open[fd / 64] &= ~bit;
        if (fd < t->next)
            t->next = fd;                       /* the lowest free one may be this one now */
    }
    return 0;
}

int lx_fd_cloexec(const struct lx_proc *p, uint32_t fd)
{
    return fd < p->fdt.size && (p->fdt.cloexec[fd / 64] >> (fd % 64) & 1);
}

void lx_fd_set_cloexec(struct lx_proc *p, uint32_t fd, int on)
{
    if (fd >= p->fdt.size)
        return;
    uint64_t bit = 1ull << (fd % 64);
    p->fdt.cloexec[fd / 64] = on ? p->fdt.cloexec[fd / 64] | bit : p->fdt.cloexec[fd / 64] & ~bit;
}

int64_t lx_fd_next_open(const struct lx_proc *p, uint64_t from)
{
    uint32_t fd = from < p->fdt.size ? fdt_scan(&p->fdt, p->fdt.open, from, 1) : p->fdt.size;
    return fd < p->fdt.size ? (int64_t)fd : -1;
}

/* The table a child gets (as Linux's dup_fd) is only as big as the
 * parent's highest open descriptor needs. */
int lx_fds_fork(struct lx_proc *p, struct lx_proc *child)
{
    int64_t last = -1;
    uint32_t left = p->fdt.count;               /* (the walks stop at the last open one, not the table's end) */
    for (int64_t fd = lx_fd_next_open(p, 0); fd >= 0 && left; fd = lx_fd_next_open(p, (uint64_t)fd + 1), left--)
        last = fd;
    if (last >= 0 && fdt_grow(child, (uint32_t)last))
        return -LX_ENOMEM;
    left = p->fdt.count;
    for (int64_t fd = lx_fd_next_open(p, 0); fd >= 0 && left; fd = lx_fd_next_open(p, (uint64_t)fd + 1), left--) {
        struct lx_file *f = lx_fd_file(p, (uint32_t)fd);
        if (!f)
            continue;
        lx_file_get(f);
        lx_fd_set(child, (uint32_t)fd, f);      /* (the table has room: no failure) */
        lx_fd_set_cloexec(child, (uint32_t)fd, lx_fd_cloexec(p, (uint32_t)fd));
    }
    child->fdt.next = p->fdt.next;
    return 0;
}

void lx_fds_exec(struct lx_proc *p)
{
    uint32_t left = p->fdt.count;
    for (int64_t fd = lx_fd_next_open(p, 0); fd >= 0 && left; fd = lx_fd_next_open(p, (uint64_t)fd + 1), left--) {
        if (!lx_fd_cloexec(p, (uint32_t)fd))
            continue;
        struct lx_file *f = lx_fd_file(p, (uint32_t)fd);
        lx_fd_set(p, (uint32_t)fd, NULL);
        if (f)
            lx_file_put(f);
    }
}

struct lx_file *lx_call_file(struct lx_ctx *c, uint64_t fd)
{
    const struct lx_io *io = &c->t->io;
    if (io->file && io->nr == c->nr && io->fd == (uint32_t)fd && io->pc == c->mr[FAULT_MR_PC])
        return io->file;
    return lx_fd_use(c->p, fd);
}

void lx_io_end(struct lx_thread *t)
{
    struct lx_file *f = t->io.file;
    t->io = (struct lx_io){ 0 };
    if (f)
        lx_file_put(f);
}

/* How many open files `by` may have made that are still open: twice its
 * hard RLIMIT_NOFILE, and never fewer than a new process's hard limit.
 * Its own descriptors stop at the soft limit first; this bounds those it
 * passed on and closed (to children, or in flight in sockets, which Linux
 * bounds by RLIMIT_NOFILE too) without refusing a program that keeps a
 * low limit and passes many around. */
static uint32_t files_allowed(const struct lx_proc *by)
{
    uint64_t hard = by->rlim[LX_RLIMIT_NOFILE][1], twice = hard < LX_NR_OPEN ? hard * 2 : 2ull * LX_NR_OPEN;
    return twice < LX_NOFILE_HARD ? LX_NOFILE_HARD : (uint32_t)twice;
}

int lx_file_error(const struct lx_proc *by)
{
    return by->files >= files_allowed(by) ? -LX_EMFILE : -LX_ENFILE;
}

/* A new chunk at index k, all free; 0 or -1 (no memory). */
static int chunk_make(uint32_t k)
{
    struct chunk *ch = lx_alloc(sizeof(struct chunk));
    if (!ch)
        return -1;
    for (uint32_t i = 0; i < CHUNK; i++)
        ch->slot[i] = (struct lx_file){ .kind = LX_FILE_FREE, .slot = (int32_t)(k * CHUNK + i) };
    chunks[k] = ch;
    return 0;
}

/* A free slot of the table (made in a new chunk if all are taken), marked
 * in use; or NULL (LX_NR_FILE in use, or no memory). */
static struct lx_file *slot_take(void)
{
    uint32_t k = chunk_room;
    while (k < CHUNKS && chunks[k] && chunks[k]->count == CHUNK)
        k++;
    chunk_room = k;
    if (k == CHUNKS || (!chunks[k] && chunk_make(k)))
        return NULL;
    struct chunk *ch = chunks[k];
    uint32_t w = 0;
    while (ch->used[w] == ~0ull)
        w++;
    uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(~ch->used[w]);
    ch->used[w] |= 1ull << (i % 64);
    ch->count++;
    files_open++;
    return &ch->slot[i];
}

/* Slot f is free again; its chunk is given back if that was its last file
 * (but chunk 0). */
static void slot_give(struct lx_file *f)
{
    uint32_t k = (uint32_t)f->slot / CHUNK, i = (uint32_t)f->slot % CHUNK;
    struct chunk *ch = chunks[k];
    *f = (struct lx_file){ .kind = LX_FILE_FREE, .slot = f->slot };
    ch->used[i / 64] &= ~(1ull << (i % 64));
    ch->count--;
    files_open--;
    if (k < chunk_room)
        chunk_room = k;
    if (ch->count == 0 && k > 0) {
        lx_free(ch, sizeof(struct chunk));
        chunks[k] = NULL;
    }
}

struct lx_file *lx_file_new(struct lx_proc *by, int kind, int32_t obj, uint32_t flags)
{
    if (by->files >= files_allowed(by))
        return NULL;                            /* one process never takes every open file there is */
    struct lx_file *f = slot_take();
    if (!f)
        return NULL;
    uint32_t gen = next_gen++;
    if (next_gen == 0)
        next_gen = 1;
    *f = (struct lx_file){ .refs = 1, .kind = (uint8_t)kind, .gen = gen, .slot = f->slot, .node = -1,
                           .flags = flags, .pipe = -1, .ev = -1, .sock = -1, .pty = -1, .owner_serial = by->serial,
                           .owner_pid = by->pid };
    by->files++;
    if (kind == LX_FILE_NODE) {
        f->node = obj;
        lx_node(obj)->opens++;
    } else if (kind == LX_FILE_PIPE) {
        f->pipe = obj;
    } else if (kind == LX_FILE_EVENT) {
        f->ev = obj;
    } else if (kind == LX_FILE_SOCK) {
        f->sock = obj;
    } else {
        f->name_ino = (uint32_t)obj;            /* (LX_FILE_NAME: the caller sets name_of) */
    }
    return f;
}

/* The slot of f is free again, and its owner's share one more. */
static void file_free(struct lx_file *f)
{
    struct lx_proc *owner = lx_proc_of_serial(f->owner_pid, f->owner_serial);
    if (owner && owner->files)
        owner->files--;
    slot_give(f);
}

/* Let go of node n, which an open file held. */
static void node_let_go(int32_t node)
{
    struct lx_node *n = lx_node(node);
    if (n && n->opens) {
        n->opens--;
        lx_node_maybe_free(node);
    }
}

void lx_file_discard(struct lx_file *f)
{
    if (f->kind == LX_FILE_NODE)
        node_let_go(f->node);
    file_free(f);
}

void lx_file_get(struct lx_file *f)
{
    f->refs++;
}

/* The last reference to f went: what it holds goes, then its slot. */
static void finalise(struct lx_file *f)
{
    lx_event_file_gone(f);                      /* epoll watches of it go (and an event object's own) */
    lx_locks_file_gone(f);                      /* its OFD and flock locks */
    switch (f->kind) {
    case LX_FILE_SOCK:
        lx_sock_close(f);                       /* (its queue's files are dropped: they only queue here) */
        break;
    case LX_FILE_PIPE:
        lx_pipe_close(f);
        break;
    case LX_FILE_NODE:
        lx_tty_file_gone(f);                    /* a pseudo-terminal's side */
        lx_binder_file_gone(f);                 /* a binder process */
        lx_evdev_file_gone(f);                  /* an input device's client */
        if (f->mon)
            lx_tcpmon_close(f);
        node_let_go(f->node);
        break;
    default:
        break;
    }
    file_free(f);
}

void lx_file_put(struct lx_file *f)
{
    if (f->kind == LX_FILE_FREE || !f->refs || f->dying) {
        lx_log("a reference dropped twice to an open file (ignored)");
        return;
    }
    if (--f->refs == 0) {
        f->dying = 1;
        f->next_dying = dying;
        dying = f;
    } else {
        lx_sock_ref_dropped();                  /* a cycle of sockets in flight may be all that holds it now */
    }
    if (finalising)
        return;                                 /* the outermost put finalises it */
    finalising = 1;
    for (;;) {
        if (dying) {
            struct lx_file *d = dying;
            dying = d->next_dying;
            finalise(d);
        } else if (!lx_sock_collect()) {
            break;                              /* nothing to finalise, and no socket left unreachable */
        }
    }
    finalising = 0;
}

uint32_t lx_files_in_use(void)
{
    return files_open;
}

/* The lowest free descriptor from `from` on, as Linux's alloc_fd: the
 * search starts at the table's `next` when that is higher (none is free
 * below it), and a search from below `next` moves it past what it took. */
int lx_fd_new(struct lx_proc *p, struct lx_file *f, int cloexec, int from)
{
    struct lx_fdtable *t = &p->fdt;
    uint32_t start = (uint32_t)from, fd = start < t->next ? t->next : start;
    fd = fd < t->size ? fdt_scan(t, t->open, fd, 0) : fd;
    if (fd >= lx_nofile(p))
        return -LX_EMFILE;
    if (lx_fd_set(p, fd, f))
        return -LX_ENOMEM;
    if (start <= t->next)
        t->next = fd + 1;
    lx_fd_set_cloexec(p, fd, cloexec);
    return (int)fd;
}

int lx_fd_open(struct lx_proc *p, int kind, int32_t obj, uint32_t flags, int cloexec, struct lx_file **out)
{
    struct lx_file *f = lx_file_new(p, kind, obj, flags);
    if (!f)
        return lx_file_error(p);
    int fd = lx_fd_new(p, f, cloexec, 0);
    if (fd < 0)
        lx_file_discard(f);
    else
        *out = f;
    return fd;
}

int lx_files_init(struct lx_proc *p)
{
    if (console_node < 0)
        console_node = lx_lookup(LX_ROOT, "/dev/console", 1);
    struct lx_file *f = console_node >= 0 ? lx_file_new(p, LX_FILE_NODE, console_node, O_RDWR) : NULL;
    if (!f)
        return -LX_ENFILE;
    if (lx_fd_set(p, 0, f)) {                   /* (the table's first allocation) */
        lx_file_discard(f);
        return -LX_ENOMEM;
    }
    f->refs = 3;
    lx_fd_set(p, 1, f);
    lx_fd_set(p, 2, f);
    return 0;
}

void lx_files_drop(struct lx_proc *p)
{
    uint32_t left = p->fdt.count;
    for (int64_t fd = lx_fd_next_open(p, 0); fd >= 0 && left; fd = lx_fd_next_open(p, (uint64_t)fd + 1), left--) {
        struct lx_file *f = lx_fd_file(p, (uint32_t)fd);
        lx_fd_set(p, (uint32_t)fd, NULL);
        if (f)
            lx_file_put(f);
    }
    if (p->fdt.size)
        lx_free(p->fdt.slot, fdt_bytes(p->fdt.size));
    p->fdt = (struct lx_fdtable){ 0 };
}

static uint32_t kind(const struct lx_node *n) { return n->mode & LX_S_IFMT; }

int64_t lx_path_in(struct lx_ctx *c, char *buf, uint64_t upath)
{
    lx_procfs_caller(c->p);
    return lx_copy_str(c, buf, upath, LX_PATH_MAX);
}

int32_t lx_start_dir(struct lx_ctx *c, int64_t dirfd, const char *path)
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

int64_t lx_path_at(struct lx_ctx *c, int64_t dirfd, uint64_t upath, char *buf, int32_t *dir)
{
    int64_t len = lx_path_in(c, buf, upath);
    if (len <= 0)
        return len;
    *dir = lx_start_dir(c, dirfd, buf);
    return *dir < 0 ? *dir : len;
}

/* The node `path` opens with O_CREAT: found, or made (a regular file of
 * `mode` less the umask) where it or the link it ends in leads. A node or a
 * negated errno; *made says whether it is new. */
static int32_t open_create(int32_t dir, const char *path, uint32_t fl, uint32_t mode, uint32_t mask, int *made)
{
    static char target[LX_PATH_MAX];
    struct lx_last l;
    *made = 0;
    for (int depth = 0;; depth++) {
        int err = lx_lookup_last(dir, path, &l);
        if (err)
            return err;
        if (l.type != LX_LAST_NORM)             /* ".", ".." or "/": a directory */
            return l.node < 0 ? l.node : (fl & O_EXCL) ? -LX_EEXIST : -LX_EISDIR;
        if (l.slash)
            return -LX_EISDIR;
        if (l.node >= 0) {
            if (fl & O_EXCL)
                return -LX_EEXIST;
            if (kind(lx_node(l.node)) != LX_S_IFLNK || (fl & O_NOFOLLOW))
                return l.node;
            int32_t to = lx_follow_last(&l, depth);
            if (to != -LX_ENOENT)
                return to;
            /* A link to nothing: make what it names. */
            struct lx_node *ln = lx_node(l.node);
            if (depth >= 40)
                return -LX_ELOOP;
            if (ln->proc || ln->size == 0 || ln->size >= LX_PATH_MAX)
                return -LX_ENOENT;
            memcpy(target, lx_node_data(ln), ln->size);
            target[ln->size] = 0;
            dir = l.dir;
            path = target;
            continue;
        }
        if (l.node != -LX_ENOENT)
            return l.node;
        if (lx_node(l.dir)->proc)
            return -LX_ENOENT;                  /* /proc makes no names (its lookup fails first, as Linux's) */
        if (!lx_node(l.dir)->nlink)
            return -LX_ENOENT;
        if ((err = (int)lx_data_writable(l.dir)) != 0)
            return err;                         /* (the disk is read-only) */
        if (lx_node(l.dir)->fs == LX_FS_DATA) { /* on the disk */
            int32_t made_node = -1;
            int64_t e = lx_data_create(l.dir, l.name, l.len, LX_S_IFREG | (mode & 07777 & ~mask), 0, NULL, 0,
                                       &made_node);
            if (e || made_node < 0)
                return e ? (int32_t)e : -LX_ENOENT;
            *made = 1;
            return made_node;
        }
        int32_t n = lx_node_new(LX_S_IFREG | (mode & 07777 & ~mask));
        if (n < 0)
            return n;
        if ((err = lx_link(l.dir, l.name, l.len, n)) != 0) {
            lx_node_maybe_free(n);
            return err;
        }
        *made = 1;
        return n;
    }
}

int64_t lx_sys_openat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mode)
{
    uint32_t fl = (uint32_t)flags;
    if ((fl & (O_CREAT | O_DIRECTORY)) == (O_CREAT | O_DIRECTORY) && !(fl & O_PATH))
        return -LX_EINVAL;                      /* Linux's rule (6.4, and 6.1's updates), before the path */
    int32_t dir;
    int64_t len = lx_path_at(c, dirfd, upath, path_buf, &dir);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    if ((fl & O_TMPFILE) == O_TMPFILE)
        return -LX_EOPNOTSUPP;                  /* no unnamed files */
    if ((fl & O_ACCMODE) == O_ACCMODE && !(fl & O_PATH))
        return -LX_EINVAL;
    int made = 0;
    int32_t node = (fl & O_CREAT) ? open_create(dir, path_buf, fl, (uint32_t)mode, lx_umask_of(c->p), &made)
                                  : lx_lookup(dir, path_buf, !(fl & O_NOFOLLOW));
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if ((fl & O_CREAT) && !made && kind(n) == LX_S_IFDIR)
        return -LX_EISDIR;
    if ((fl & O_DIRECTORY) && kind(n) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    if (n->proc >= LX_PROC_OBJ) {               /* /proc/PID/fd/N of a pipe, socket or event object */
        struct lx_file *t = lx_file_at((int32_t)(n->proc - LX_PROC_OBJ), (uint32_t)n->proc_pid);
        return t ? lx_file_reopen(c->p, t, fl) : -LX_ENOENT;
    }
    if (kind(n) == LX_S_IFLNK && !(fl & O_PATH))
        return -LX_ELOOP;                       /* O_NOFOLLOW on a link (after O_DIRECTORY, as Linux checks) */
    int writing = (fl & O_ACCMODE) != 0 || (fl & O_TRUNC);
    if (!(fl & O_PATH)) {
        if (kind(n) == LX_S_IFDIR && writing)
            return -LX_EISDIR;
        if (kind(n) == LX_S_IFREG && writing && lx_data_writable(node))
            return -LX_EROFS;
        if (n->proc && writing && !lx_procfs_writable(n->proc))
            return -LX_EACCES;                  /* /proc is read-only here, but for its sysctls */
        if ((kind(n) == LX_S_IFCHR || kind(n) == LX_S_IFBLK) && lx_data_refuses(n, LX_MS_NODEV))
            return -LX_EACCES;                  /* (a nodev mount) */
        if ((kind(n) == LX_S_IFCHR && n->dev == LX_DEV_NONE) || kind(n) == LX_S_IFSOCK || kind(n) == LX_S_IFBLK)
            return -LX_ENXIO;                   /* (a socket is reached with connect, not open; a disk is mounted) */
        if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_TTY) {
            node = lx_tty_ctty_node(c->p);      /* /dev/tty: the caller's controlling terminal, if it has one */
            if (node < 0)
                return -LX_ENXIO;
            n = lx_node(node);
        }
        if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_BINDER && !(fl & O_PATH))
            return lx_binder_open(c, node, (fl & ~(uint32_t)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) |
                                  O_LARGEFILE, (fl & O_CLOEXEC) != 0);
        if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_FB)
            return lx_fb_open(c, node, (fl & ~(uint32_t)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) |
                              O_LARGEFILE, (fl & O_CLOEXEC) != 0);
        if (kind(n) == LX_S_IFCHR && (n->dev == LX_DEV_INPUT || n->dev == LX_DEV_INPUT1))
            return lx_evdev_open(c, node, n->dev == LX_DEV_INPUT1,
                                 (fl & ~(uint32_t)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) | O_LARGEFILE,
                                 (fl & O_CLOEXEC) != 0);
        if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_PTMX)
            return lx_pty_open_master(c, node, (fl & ~(uint32_t)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) |
                                      O_LARGEFILE, (fl & O_CLOEXEC) != 0);
        if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_PTS) {
            int err = lx_pty_slave_check(node);
            if (err)
                return err;
        }
    }
    /* What F_GETFL shows: O_PATH keeps only itself, O_DIRECTORY and
     * O_NOFOLLOW; other opens all but the open-time flags, with O_LARGEFILE. */
    uint32_t kept = (fl & O_PATH) ? fl & (O_PATH | O_DIRECTORY | O_NOFOLLOW)
                                  : (fl & ~(uint32_t)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) | O_LARGEFILE;
    if ((fl & O_TRUNC) && !(fl & O_PATH) && kind(n) == LX_S_IFREG && !made && n->fs == LX_FS_DATA) {
        int64_t e = lx_data_truncate(node, 0);  /* (before the descriptor: the call may run again) */
        if (e)
            return e;
    }
    struct lx_file *f;
    int fd = lx_fd_open(c->p, LX_FILE_NODE, node, kept, (fl & O_CLOEXEC) != 0, &f);
    if (fd < 0)
        return fd;
    if (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_PTS && !(fl & O_PATH))
        lx_pty_slave_opened(c, f, fl);
    if ((fl & O_TRUNC) && !(fl & O_PATH) && kind(n) == LX_S_IFREG && !made && !n->proc && n->fs != LX_FS_DATA) {
        lx_node_resize(n, 0);
        n->mtime = n->ctime = lx_now();
    }
    return fd;
}

int64_t lx_sys_close(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    lx_fd_set(c->p, (uint32_t)fd, NULL);
    lx_file_put(f);
    return 0;
}

static const uint8_t zeros[1024];

/* Copy up to len bytes of regular file n from *pos to the process at buf
 * (range checked), a page of the process's at a time straight from the
 * memory object when n's contents are in one; how many (0: end of file),
 * or -EFAULT (-ENOMEM: the object could not be read) if none could go. */
static int64_t read_regular(struct lx_ctx *c, struct lx_node *n, uint64_t buf, uint64_t len, uint64_t *pos)
{
    if (n->fs == LX_FS_DATA)
        return lx_data_read(c, n, buf, len, pos);
    uint64_t left = *pos < n->size ? n->size - *pos : 0, want = len < left ? len : left, count = 0;
    if (!n->obj)
        count = lx_copy_out_some(c, buf, lx_node_data(n) + *pos, want);
    int err = 0;
    while (n->obj && count < want) {
        uint64_t k = LX_PAGE - ((buf + count) & (LX_PAGE - 1));
        if (k > want - count)
            k = want - count;
        if ((err = lx_node_read_to(c, n, *pos + count, buf + count, k)) != 0)
            break;
        count += k;
    }
    if (err == -LX_EFAULT)
        err = 0;                                /* the process's buffer: what went before it counts */
    if (count == 0 && want)
        return err ? err : -LX_EFAULT;
    *pos += count;
    return (int64_t)count;
}

/* Read up to len bytes of f at *pos into the process at buf (range checked). */
static int64_t read_file(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len, uint64_t *pos)
{
    if (len > MAX_RW_COUNT)
        len = MAX_RW_COUNT;
    switch (f->kind) {
    case LX_FILE_EVENT:
        return lx_event_rw(c, f, buf, len, 0);
    case LX_FILE_SOCK:
        return lx_sock_rw(c, f, 0, (uint64_t)-1, buf, len, 0);
    case LX_FILE_PIPE:
        return lx_pipe_read(c, f, buf, len);
    case LX_FILE_NODE:
        break;
    default:
        return -LX_EBADF;
    }
    struct lx_node *n = lx_node(f->node);
    switch (kind(n)) {
    case LX_S_IFDIR:
        return -LX_EISDIR;
    case LX_S_IFREG: {
        if (!n->proc)
            return read_regular(c, n, buf, len, pos);
        if (n->proc == LX_PROC_NET_TCPMON) {
            char lines[1024];
            int64_t got = lx_tcpmon_read(f, lines, len < sizeof(lines) ? len : sizeof(lines));
            if (got > 0 && lx_copy_out(c, buf, lines, (uint64_t)got))
                return -LX_EFAULT;
            return got;
        }
        uint64_t size;
        lx_procfs_caller(c->p);                 /* its state shows as running */
        const uint8_t *data = (const uint8_t *)lx_procfs_text(f->node, &size);
        uint64_t left = *pos < size ? size - *pos : 0, want = len < left ? len : left;
        uint64_t count = lx_copy_out_some(c, buf, data + *pos, want);
        if (count == 0 && want)
            return -LX_EFAULT;
        *pos += count;
        return (int64_t)count;
    }
    default:
        break;
    }
    if (lx_node_is_tty(n))
        return lx_tty_read(c, f, buf, len);
    if (f->evdev)
        return lx_evdev_read(c, f, buf, len);
    if (n->dev == LX_DEV_FB)
        return lx_fb_rw(c, buf, len, pos, 0);
    if (n->dev == LX_DEV_NULL)
        return 0;                               /* end of file */
    int random = n->dev == LX_DEV_RANDOM || n->dev == LX_DEV_URANDOM;
    uint8_t bytes[256];
    uint64_t done = 0;
    while (done < len) {                        /* /dev/zero and /dev/full: zeros; /dev/(u)random: random bytes */
        uint64_t chunk = len - done < sizeof(zeros) ? len - done : sizeof(zeros);
        if (random) {
            chunk = chunk < sizeof(bytes) ? chunk : sizeof(bytes);
            lx_random(bytes, chunk);
        }
        if (lx_copy_out(c, buf + done, random ? bytes : zeros, chunk))
            return done ? (int64_t)done : -LX_EFAULT;
        done += chunk;
    }
    return (int64_t)done;
}

/* Write len bytes from the process at buf into regular file n at *pos
 * (the end with O_APPEND): Linux's partial write up to the first page it
 * cannot read; EFBIG past the largest offset, ENOSPC past the limit. */
static int64_t write_regular(struct lx_ctx *c, struct lx_file *f, struct lx_node *n, uint64_t buf, uint64_t len,
                             uint64_t *pos)
{
    if (f->flags & O_APPEND)
        *pos = n->size;
    if (len == 0)
        return 0;
    int64_t big = lx_fsize_check(c, *pos, &len);
    if (big)
        return big;
    if (*pos >= LX_FILE_MAX)
        return -LX_EFBIG;
    if (len > LX_FILE_MAX - *pos)
        len = LX_FILE_MAX - *pos;
    if (n->fs == LX_FS_DATA)
        return lx_data_write(c, n, f->flags, buf, len, pos);
    int err = lx_node_reserve(n, *pos + len);
    if (err)
        return err;
    uint64_t done = 0;
    while (done < len && !err) {
        uint64_t at = buf + done, chunk = LX_PAGE - (at & (LX_PAGE - 1));
        if (chunk > len - done)
            chunk = len - done;
        int e = n->obj ? lx_node_write_from(c, n, *pos + done, at, chunk) : lx_copy_in(c, n->mem + *pos + done, at, chunk);
        if (e) {
            err = e == -LX_EFAULT ? 0 : e;      /* the process's buffer: what went before it counts */
            break;
        }
        done += chunk;
    }
    if (!done)
        return err ? err : -LX_EFAULT;
    *pos += done;
    if (*pos > n->size)
        lx_node_set_size(n, *pos);
    n->mtime = n->ctime = lx_now();
    return (int64_t)done;
}

/* Write len bytes from the process at buf to f (range checked). */
static int64_t write_file(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len, uint64_t *pos)
{
    if (len > MAX_RW_COUNT)
        len = MAX_RW_COUNT;
    switch (f->kind) {
    case LX_FILE_EVENT:
        return lx_event_rw(c, f, buf, len, 1);
    case LX_FILE_SOCK:
        return lx_sock_rw(c, f, 0, (uint64_t)-1, buf, len, 1);
    case LX_FILE_PIPE:
        return lx_pipe_write(c, f, buf, len);
    case LX_FILE_NODE:
        break;
    default:
        return -LX_EBADF;
    }
    struct lx_node *n = lx_node(f->node);
    if (kind(n) == LX_S_IFREG && !n->proc)
        return write_regular(c, f, n, buf, len, pos);
    if (kind(n) == LX_S_IFREG)
        return lx_procfs_write(c, f->node, buf, len);
    if (kind(n) != LX_S_IFCHR)
        return -LX_EBADF;
    if (lx_node_is_tty(n))
        return lx_tty_write(c, f, buf, len);
    if (f->evdev)
        return lx_evdev_write(c, f, buf, len);
    if (n->dev == LX_DEV_FB)
        return lx_fb_rw(c, buf, len, pos, 1);
    if (n->dev == LX_DEV_FULL)
        return -LX_ENOSPC;                      /* the device that is always full */
    return (int64_t)len;                        /* /dev/null, zero and (u)random take everything unread */
}

int64_t lx_sys_read(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len)
{
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == O_WRONLY || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    return read_file(c, f, buf, len, &f->pos);
}

int64_t lx_sys_pread(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, int64_t off)
{
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == O_WRONLY || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    if (f->node < 0)
        return -LX_ESPIPE;
    if (off < 0)
        return -LX_EINVAL;
    if (kind(lx_node(f->node)) != LX_S_IFREG && kind(lx_node(f->node)) != LX_S_IFDIR &&
        lx_node(f->node)->dev != LX_DEV_FB)     /* (the framebuffer reads at the offset, as a file) */
        return lx_node_is_tty(lx_node(f->node)) ? -LX_ESPIPE : read_file(c, f, buf, len, &f->pos);
    uint64_t pos = (uint64_t)off;
    return read_file(c, f, buf, len, &pos);
}

int64_t lx_sys_write(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len)
{
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == 0 || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    return write_file(c, f, buf, len, &f->pos);
}

/* pwrite64: at `off`, the position unchanged (with O_APPEND, at the end:
 * Linux's behaviour). */
int64_t lx_sys_pwrite(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, int64_t off)
{
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    if (!f || (f->flags & O_ACCMODE) == 0 || (f->flags & O_PATH))
        return -LX_EBADF;
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    if (f->node < 0)
        return -LX_ESPIPE;
    if (off < 0)
        return -LX_EINVAL;
    struct lx_node *n = lx_node(f->node);
    if (lx_node_is_tty(n))
        return -LX_ESPIPE;
    uint64_t pos = (uint64_t)off;
    return write_file(c, f, buf, len, kind(n) == LX_S_IFREG || (kind(n) == LX_S_IFCHR && n->dev == LX_DEV_FB) ?
                                      &pos : &f->pos);
}

int64_t lx_file_read_kernel(struct lx_file *f, void *dst, uint64_t len, uint64_t *pos)
{
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    if (!n)
        return -LX_EINVAL;
    if (kind(n) == LX_S_IFCHR) {
        if (n->dev == LX_DEV_ZERO || n->dev == LX_DEV_FULL) {
            memset(dst, 0, len);
            return (int64_t)len;
        }
        if (n->dev == LX_DEV_RANDOM || n->dev == LX_DEV_URANDOM) {
            lx_random(dst, len);
            return (int64_t)len;
        }
        return n->dev == LX_DEV_NULL ? 0 : -LX_EINVAL;
    }
    if (kind(n) != LX_S_IFREG)
        return kind(n) == LX_S_IFDIR ? -LX_EISDIR : -LX_EINVAL;
    if (n->proc == LX_PROC_NET_TCPMON)
        return lx_tcpmon_read(f, dst, len);
    uint64_t size = n->size;
    const uint8_t *data = n->proc ? (const uint8_t *)lx_procfs_text(f->node, &size) : NULL;
    uint64_t left = *pos < size ? size - *pos : 0, want = len < left ? len : left;
    int err = 0;
    if (data)
        memcpy(dst, data + *pos, want);
    else if (want && (err = lx_node_read(n, *pos, dst, want)) != 0)
        return err == LX_DISKWAIT || err == -LX_EIO || err == -117 ? err : -LX_ENOMEM;    /* (117: EUCLEAN) */
    *pos += want;
    return (int64_t)want;
}

int64_t lx_file_write_kernel(struct lx_file *f, const void *src, uint64_t len)
{
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    if (!n)
        return -LX_EINVAL;
    if (kind(n) == LX_S_IFCHR) {
        if (lx_node_is_tty(n) || n->dev == LX_DEV_TTY)
            return -LX_EINVAL;
        return n->dev == LX_DEV_FULL ? -LX_ENOSPC : (int64_t)len;   /* null, zero, (u)random take it all */
    }
    if (kind(n) != LX_S_IFREG || n->proc)
        return -LX_EINVAL;
    if (f->flags & O_APPEND)
        f->pos = n->size;
    if (len == 0)
        return 0;
    if (f->pos >= LX_FILE_MAX)
        return -LX_EFBIG;
    if (len > LX_FILE_MAX - f->pos)
        len = LX_FILE_MAX - f->pos;
    if (n->fs == LX_FS_DATA)
        return lx_data_write_kernel(n, src, len, &f->pos);
    int err = lx_node_reserve(n, f->pos + len);
    if (!err)
        err = lx_node_write(n, f->pos, src, len);
    if (err)
        return err;
    f->pos += len;
    if (f->pos > n->size)
        lx_node_set_size(n, f->pos);
    n->mtime = n->ctime = lx_now();
    return (int64_t)len;
}

/* readv of an eventfd: its 8 bytes spread over the vectors (`room`
 * bytes in all), as Linux's eventfd read_iter gathers (its write is
 * per vector). */
static int64_t eventfd_readv(struct lx_ctx *c, struct lx_file *f, uint64_t uiov, uint64_t n, uint64_t room)
{
    if (room < 8)
        return -LX_EINVAL;
    uint64_t v;
    int64_t r = lx_eventfd_take(c, f, &v);
    if (r != 8)
        return r;
    uint64_t done = 0;
    for (uint64_t i = 0; i < n && done < 8; i++) {
        struct { uint64_t base, len; } one;
        if (lx_copy_in(c, &one, uiov + i * 16, 16))
            return -LX_EFAULT;
        uint64_t k = one.len < 8 - done ? one.len : 8 - done;
        if (k && lx_copy_out(c, one.base, (const uint8_t *)&v + done, k))
            return -LX_EFAULT;
        done += k;
    }
    return 8;
}

int lx_src_copy(struct lx_ctx *c, void *dst, const struct lx_src *s, uint64_t off, uint64_t n)
{
    if (!s->niov)
        return lx_copy_in(c, dst, s->buf + off, n);
    uint8_t *d = dst;
    struct { uint64_t base, len; } v[16];       /* read 16 at a time, as vector_rw does */
    for (uint64_t i = 0; i < s->niov && n; i++) {
        if (i % 16 == 0 && lx_copy_in(c, v, s->iov + i * 16, (s->niov - i < 16 ? s->niov - i : 16) * 16))
            return -LX_EFAULT;
        uint64_t base = v[i % 16].base, len = v[i % 16].len;
        if (off >= len) {
            off -= len;
            continue;
        }
        uint64_t k = len - off < n ? len - off : n;
        if (lx_copy_in(c, d, base + off, k))
            return -LX_EFAULT;
        d += k;
        n -= k;
        off = 0;
    }
    return n ? -LX_EFAULT : 0;
}

/* A writev of `room` bytes or fewer to a terminal goes out as one write,
 * as Linux writes a terminal's whole writev under one lock: a line that
 * musl's stdio hands over in two vectors (what it buffered, and the rest)
 * is never cut on the console by another writer's. */
#define TTY_GATHER 512

static int64_t tty_writev(struct lx_ctx *c, struct lx_file *f, uint64_t uiov, uint64_t n, uint64_t room)
{
    uint8_t all[TTY_GATHER];
    struct { uint64_t base, len; } iov;
    uint64_t at = 0;
    for (uint64_t i = 0; i < n; i++) {         /* (a vector that faults ends the write, as on Linux) */
        if (lx_copy_in(c, &iov, uiov + i * 16, 16) || iov.len > room - at ||
            (iov.len && lx_copy_in(c, all + at, iov.base, iov.len)))
            break;
        at += iov.len;
    }
    if (!at && room)
        return -LX_EFAULT;
    return lx_tty_write_kernel(c, f, all, at, 1);
}

/* readv (writing 0) and writev (writing 1). */
/* The vectors of readv and writev (and their p- and 2 forms, `pos` their
 * offset): all checked first, then moved one after the other. */
static int64_t vector_rw(struct lx_ctx *c, struct lx_file *f, uint64_t uiov, uint64_t cnt, int writing, uint64_t *pos)
{
    uint64_t n = (uint32_t)cnt;
    if (n > UIO_MAXIOV)
        return -LX_EINVAL;
    if (f->sock >= 0)
        return lx_sock_rw(c, f, uiov, n, 0, 0, writing);
    struct { uint64_t base, len; } iov[16];
    uint64_t total = 0, room = 0;
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
            room += iov[j].len < MAX_RW_COUNT ? iov[j].len : MAX_RW_COUNT;
        }
    }
    if (!writing && lx_event_name_of(f) == LX_NAME_EVENTFD)
        return eventfd_readv(c, f, uiov, n, room);
    if (writing && f->kind == LX_FILE_PIPE) {   /* one write of them all: PIPE_BUF bytes or fewer never split */
        struct lx_src s = { 0, uiov, n };
        return lx_pipe_write_src(c, f, &s, room < MAX_RW_COUNT ? room : MAX_RW_COUNT);
    }
    if (writing && room <= TTY_GATHER && f->kind == LX_FILE_NODE && lx_node_is_tty(lx_node(f->node)))
        return tty_writev(c, f, uiov, n, room);
    for (uint64_t i = 0; i < n; i += 16) {
        uint64_t k = n - i < 16 ? n - i : 16;
        if (lx_copy_in(c, iov, uiov + i * 16, k * 16))
            return total ? (int64_t)total : -LX_EFAULT;
        for (uint64_t j = 0; j < k; j++) {
            uint64_t want = iov[j].len < MAX_RW_COUNT - total ? iov[j].len : MAX_RW_COUNT - total;
            int64_t r = writing ? write_file(c, f, iov[j].base, want, pos) : read_file(c, f, iov[j].base, want, pos);
            if (r == LX_DISKWAIT) {             /* a disk file: what moved so far, or wait and go on */
                if (!total)
                    return LX_DISKWAIT;         /* (io.done says how far this vector went) */
                total += c->t->io.done;
                c->t->io.done = 0;
                return (int64_t)total;
            }
            if (r == LX_BLOCK) {                /* a pipe: what moved so far, or wait with nothing moved */
                total += c->t->io.done;
                c->t->io.done = 0;
                if (!total)
                    return LX_BLOCK;
                c->t->blk.kind = LX_BLK_NONE;
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

int64_t lx_sys_readv(struct lx_ctx *c, uint64_t fd, uint64_t uiov, uint64_t cnt, int writing)
{
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    if (!f || (f->flags & O_PATH) || (f->flags & O_ACCMODE) == (writing ? 0 : O_WRONLY))
        return -LX_EBADF;
    return vector_rw(c, f, uiov, cnt, writing, &f->pos);
}

#define RWF_ALL     0x1f    /* RWF_HIPRI, RWF_DSYNC, RWF_SYNC, RWF_NOWAIT, RWF_APPEND */
#define RWF_APPEND  0x10

/* preadv and pwritev (v2 0), preadv2 and pwritev2 (v2 1: flags, and an
 * offset of -1 for the file's position), in Linux's order: the offset,
 * the descriptor, a pipe or socket ESPIPE, the access mode, the flags. */
int64_t lx_sys_preadv(struct lx_ctx *c, uint64_t fd, uint64_t uiov, uint64_t cnt, int64_t off, uint64_t flags,
                      int v2, int writing)
{
    if (off < 0 && !(v2 && off == -1))
        return -LX_EINVAL;
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    if (!f || (f->flags & O_PATH))
        return -LX_EBADF;
    if (off == -1) {
        if ((f->flags & O_ACCMODE) == (writing ? 0 : O_WRONLY))
            return -LX_EBADF;
        return ((uint32_t)flags & ~RWF_ALL) ? -LX_EOPNOTSUPP : vector_rw(c, f, uiov, cnt, writing, &f->pos);
    }
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    if (!n || f->sock >= 0 || lx_node_is_tty(n))
        return -LX_ESPIPE;
    if ((f->flags & O_ACCMODE) == (writing ? 0 : O_WRONLY))
        return -LX_EBADF;
    if ((uint32_t)flags & ~RWF_ALL)
        return -LX_EOPNOTSUPP;
    uint64_t pos = (uint64_t)off;
    if (writing && ((uint32_t)flags & RWF_APPEND) && kind(n) == LX_S_IFREG)
        pos = n->size;
    return vector_rw(c, f, uiov, cnt, writing, kind(n) == LX_S_IFREG || kind(n) == LX_S_IFDIR ? &pos : &f->pos);
}

int64_t lx_sys_lseek(struct lx_ctx *c, uint64_t fd, int64_t off, uint64_t whence)
{
    struct lx_file *f = lx_fd_use(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    if (f->ev >= 0)
        return 0;                               /* anonymous inodes: lseek does nothing (noop_llseek) */
    if (f->node < 0)
        return -LX_ESPIPE;
    struct lx_node *n = lx_node(f->node);
    if (kind(n) == LX_S_IFCHR)
        return lx_node_is_tty(n) ? -LX_ESPIPE : 0;
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

/* tmpfs's sizes of a directory: 20 bytes a name, "." and ".." included. */
#define DIR_ENTRY_SIZE 20

static void file_stat(const struct lx_file *f, struct lx_stat *st);

int lx_stat_fill(int32_t node, void *out)
{
    struct lx_node *n = lx_node(node);
    struct lx_file *obj = n->proc >= LX_PROC_OBJ ? lx_file_at((int32_t)(n->proc - LX_PROC_OBJ), (uint32_t)n->proc_pid)
                                                 : NULL;
    if (obj) {                                  /* /proc/PID/fd/N followed to a pipe, socket or event: that */
        struct lx_stat st;
        file_stat(obj, &st);
        memcpy(out, &st, sizeof(st));
        return 0;
    }
    /* null 1:3, zero 1:5, console 5:1, tty 5:0, full 1:7, random 1:8, urandom 1:9, ptmx 5:2 (pts: 136:N);
     * the disk, a block device, vda 254:0; binder, a misc device, 10:124 and down for each more device
     * (binder.c; its minor is dynamic on Linux);
     * input/event0 13:64; fb0 29:0; input/event1 13:65 */
    static const uint32_t rdev[] = { 0, 0x103, 0x105, 0x501, 0x500, 0x107, 0x108, 0x109, 0x502, 0, 0xfe00, 0xa7c,
                                     0xd40, 0x1d00, 0xd41 };
    _Static_assert(sizeof(rdev) / sizeof(rdev[0]) == LX_DEV_INPUT1 + 1, "a device number for every device");
    struct lx_stat st = { 0 };
    st.dev = lx_fs_dev(lx_node_fs(node));
    st.ino = lx_node_ino(node);
    st.mode = n->mode;
    st.nlink = n->nlink;
    st.uid = n->uid;
    st.gid = n->gid;
    st.rdev = kind(n) != LX_S_IFCHR && kind(n) != LX_S_IFBLK ? 0 : n->dev == LX_DEV_PTS ? lx_tty_pts_rdev(n) :
              n->dev == LX_DEV_BINDER ? lx_binder_rdev(node) : rdev[n->dev];
    st.size = (int64_t)n->size;
    if (kind(n) == LX_S_IFDIR)
        st.size = n->proc ? 0 : (int64_t)(DIR_ENTRY_SIZE * (2 + (uint64_t)n->entries));
    if (lx_proc_is_fd(n->proc))
        st.size = 64;                           /* what Linux says of /proc/PID/fd/N */
    st.blksize = 4096;
    st.blocks = kind(n) == LX_S_IFREG ? (int64_t)(lx_page_up(n->size) / 512) : 0;
    if (n->fs == LX_FS_DATA) {                  /* the disk's: as its inode says */
        st.size = (int64_t)n->size;
        st.blksize = (int32_t)lx_data_block_size();
        st.blocks = (int64_t)n->disk_blocks;
    }
    st.atime = n->atime.sec, st.atime_ns = n->atime.nsec;
    st.mtime = n->mtime.sec, st.mtime_ns = n->mtime.nsec;
    st.ctime = n->ctime.sec, st.ctime_ns = n->ctime.nsec;
    memcpy(out, &st, sizeof(st));
    return 0;
}

static int64_t stat_out(struct lx_ctx *c, int32_t node, uint64_t buf)
{
    struct lx_stat st;
    lx_stat_fill(node, &st);
    return lx_copy_out(c, buf, &st, sizeof(st));
}

/* The struct stat of open file f: its node's, or for a pipe a FIFO of the
 * pipe file system, for a socket one of the socket file system, for an
 * event object an anonymous inode (an O_PATH name of one: the same). */
static void file_stat(const struct lx_file *f, struct lx_stat *st)
{
    if (f->kind == LX_FILE_NODE) {
        lx_stat_fill(f->node, st);
        return;
    }
    memset(st, 0, sizeof(*st));
    st->dev = 0xc;
    st->ino = lx_file_ino(f);
    st->mode = lx_name_mode(lx_file_names(f));
    st->nlink = 1;
    st->blksize = 4096;
}

int64_t lx_file_reopen(struct lx_proc *p, struct lx_file *t, uint32_t fl)
{
    int what = lx_file_names(t);
    uint32_t ino = (uint32_t)lx_file_ino(t);
    if (!what || !ino)
        return -LX_ENOENT;
    if (!(fl & O_PATH))
        return what == LX_NAME_PIPE ? lx_pipe_reopen(p, ino, fl) : -LX_ENXIO;
    struct lx_file *f;
    int fd = lx_fd_open(p, LX_FILE_NAME, (int32_t)ino, O_PATH | (fl & O_NOFOLLOW), (fl & O_CLOEXEC) != 0, &f);
    if (fd >= 0)
        f->name_of = (uint8_t)what;
    return fd;
}

int64_t lx_sys_fstat(struct lx_ctx *c, uint64_t fd, uint64_t buf)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    struct lx_stat st;
    file_stat(f, &st);
    return lx_copy_out(c, buf, &st, sizeof(st));
}

int64_t lx_sys_newfstatat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t buf, uint64_t flags)
{
    if ((uint32_t)flags & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t dir;
    int64_t len = lx_path_at(c, dirfd, upath, path_buf, &dir);
    if (len < 0)
        return len;
    if (len == 0 && ((uint32_t)flags & AT_EMPTY_PATH)) {
        if ((int32_t)dirfd == AT_FDCWD)
            return stat_out(c, c->p->cwd, buf);
        return lx_sys_fstat(c, (uint32_t)dirfd, buf);
    }
    if (len == 0)
        return -LX_ENOENT;
    int32_t node = lx_lookup(dir, path_buf, !((uint32_t)flags & AT_SYMLINK_NOFOLLOW));
    return node < 0 ? node : stat_out(c, node, buf);
}

#define AT_STATX_SYNC_TYPE  0x6000
#define STATX_BASIC_STATS   0x7ff
#define STATX_MNT_ID        0x1000
#define STATX__RESERVED     0x80000000u
#define STATX_ATTR_MOUNT_ROOT 0x2000
#define STATX_ATTR_KNOWN    (0x10 | 0x20 | 0x40 | 0x1000 | STATX_ATTR_MOUNT_ROOT | 0x200000)
                            /* immutable, append, nodump (tmpfs's), automount, mount root, DAX */

/* struct statx, 256 bytes. */
struct lx_statx_time { int64_t sec; uint32_t nsec; int32_t pad; };
struct lx_statx {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, pad0;
    uint64_t ino, size, blocks, attributes_mask;
    struct lx_statx_time atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t mnt_id;
    uint32_t dio_mem_align, dio_offset_align;
    uint64_t spare[12];
};
_Static_assert(sizeof(struct lx_statx) == 256, "struct statx is 256 bytes");

/* statx: what stat says, in statx's form. Every file has the basic
 * fields and a mount id (the root's file system 1, /proc 2, pipes 3); no
 * birth time is kept, so STATX_BTIME is never in the mask. The sync
 * flags mean nothing for files in memory. */
int64_t lx_sys_statx(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mask, uint64_t buf)
{
    uint32_t fl = (uint32_t)flags;
    int32_t dir = 0;
    int64_t len = lx_path_at(c, dirfd, upath, path_buf, &dir);
    if (len == 0 && !(fl & AT_EMPTY_PATH))
        len = -LX_ENOENT;
    if ((uint32_t)mask & STATX__RESERVED)
        return -LX_EINVAL;
    if ((fl & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
        return -LX_EINVAL;
    if (fl & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
        return -LX_EINVAL;
    if (len < 0)
        return len;
    struct lx_stat st;
    int32_t node = -1;
    if (len == 0) {                             /* AT_EMPTY_PATH: dirfd itself */
        struct lx_file *f = (int32_t)dirfd == AT_FDCWD ? NULL : file_of(c->p, (uint32_t)dirfd);
        if ((int32_t)dirfd != AT_FDCWD && !f)
            return -LX_EBADF;
        if (f && f->node < 0)
            file_stat(f, &st);
        else
            node = f ? f->node : c->p->cwd;
    } else {
        node = lx_lookup(dir, path_buf, !(fl & AT_SYMLINK_NOFOLLOW));
        if (node < 0)
            return node;
    }
    if (node >= 0)
        lx_stat_fill(node, &st);
    struct lx_statx sx;
    memset(&sx, 0, sizeof(sx));
    sx.mask = STATX_BASIC_STATS | STATX_MNT_ID;
    sx.blksize = (uint32_t)st.blksize;
    sx.nlink = st.nlink;
    sx.uid = st.uid;
    sx.gid = st.gid;
    sx.mode = (uint16_t)st.mode;
    sx.ino = st.ino;
    sx.size = (uint64_t)st.size;
    sx.blocks = (uint64_t)st.blocks;
    sx.attributes_mask = STATX_ATTR_KNOWN;
    if (node == LX_ROOT || (node >= 0 && lx_node(node)->proc == LX_PROC_ROOT))
        sx.attributes |= STATX_ATTR_MOUNT_ROOT;
    sx.atime = (struct lx_statx_time){ st.atime, (uint32_t)st.atime_ns, 0 };
    sx.mtime = (struct lx_statx_time){ st.mtime, (uint32_t)st.mtime_ns, 0 };
    sx.ctime = (struct lx_statx_time){ st.ctime, (uint32_t)st.ctime_ns, 0 };
    /* Linux's device numbers: major in bits 8-19, minor in 0-7 and 20-31. */
    sx.rdev_major = (uint32_t)(st.rdev >> 8) & 0xfff;
    sx.rdev_minor = (uint32_t)(st.rdev & 0xff) | (uint32_t)((st.rdev >> 12) & ~0xffull);
    sx.dev_major = (uint32_t)(st.dev >> 8) & 0xfff;
    sx.dev_minor = (uint32_t)(st.dev & 0xff) | (uint32_t)((st.dev >> 12) & ~0xffull);
    sx.mnt_id = node < 0 ? 3 : lx_node(node)->proc ? 2 : 1;
    return lx_copy_out(c, buf, &sx, sizeof(sx));
}

/* The entry of directory `dir` after cookie `pos` ("." is 1, ".." 2,
 * then each entry's own, then /proc's processes): its name, inode number,
 * type (DT_*) and cookie; 0, or -1 past the end. */
static int next_entry(int32_t dir, uint64_t pos, const char **name, uint32_t *nlen, uint64_t *ino, uint8_t *type,
                      uint64_t *cookie)
{
    static char dyn[32];
    struct lx_node *d = lx_node(dir);
    if (pos < 2) {
        int32_t e = pos == 0 ? dir : d->parent >= 0 ? d->parent : dir;
        *name = pos == 0 ? "." : "..";
        *nlen = (uint32_t)pos + 1;
        *ino = lx_node_ino(e);
        *type = 4;                              /* DT_DIR */
        *cookie = pos + 1;
        return 0;
    }
    for (int32_t i = d->first; i >= 0; i = lx_dent(i)->next) {
        struct lx_dent *e = lx_dent(i);
        if (e->cookie <= pos)
            continue;
        *name = e->name;
        *nlen = e->len;
        *ino = lx_node_ino(e->node);
        *type = (uint8_t)(kind(lx_node(e->node)) >> 12);       /* DT_* is the S_IF* type shifted down */
        *cookie = e->cookie;
        return 0;
    }
    if (d->proc && lx_procfs_entry(dir, pos, dyn, type, ino, cookie) == 0) {
        *name = dyn;
        *nlen = (uint32_t)strlen(dyn);
        return 0;
    }
    return -1;
}

int64_t lx_sys_getdents64(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f || (f->flags & O_PATH))
        return -LX_EBADF;
    if (f->node < 0 || kind(lx_node(f->node)) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    if (!lx_node(f->node)->nlink)
        return -LX_ENOENT;                      /* a removed directory */
    int64_t ready = lx_data_dir_ready(f->node);
    if (ready)
        return ready;
    lx_procfs_caller(c->p);
    int32_t count = (int32_t)len;               /* Linux keeps the count in an int: past 2^31, EINVAL */
    uint8_t rec[8 + 8 + 2 + 1 + LX_NAME_MAX + 1 + 8];
    uint64_t done = 0, ino, cookie;
    const char *name;
    uint32_t nlen;
    uint8_t type;
    while (next_entry(f->node, f->pos, &name, &nlen, &ino, &type, &cookie) == 0) {
        uint16_t reclen = (uint16_t)((19 + nlen + 1 + 7) & ~7u);
        if (count < 0 || done + reclen > (uint64_t)count)
            return done ? (int64_t)done : -LX_EINVAL;
        memset(rec, 0, reclen);
        memcpy(rec, &ino, 8);
        memcpy(rec + 8, &cookie, 8);
        memcpy(rec + 16, &reclen, 2);
        rec[18] = type;
        memcpy(rec + 19, name, nlen);
        if (lx_copy_out(c, buf + done, rec, reclen))
            return done ? (int64_t)done : -LX_EFAULT;
        done += reclen;
        f->pos = cookie;
    }
    return (int64_t)done;
}

#define FIONBIO     0x5421
#define FIONCLEX    0x5450
#define FIOCLEX     0x5451

int64_t lx_sys_ioctl(struct lx_ctx *c, uint64_t fd, uint64_t req, uint64_t arg)
{
    struct lx_file *f = lx_call_file(c, fd);    /* (a re-run after a wait: the file it waited on) */
    if (!f)
        return -LX_EBADF;
    if (f->sock >= 0 && (uint32_t)req == FIONREAD) {
        int64_t avail = lx_sock_inq(f);
        int32_t v = (int32_t)avail;
        return avail < 0 ? avail : lx_copy_out(c, arg, &v, sizeof(v));
    }
    if (f->sock >= 0 && ((uint32_t)req & 0xff00) == 0x8900)
        return lx_inet_ifioctl(c, (uint32_t)req, arg);     /* the interfaces' ioctls, on a socket of any family */
    if (f->kind == LX_FILE_PIPE && (uint32_t)req == FIONREAD) {
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
        lx_fd_set_cloexec(c->p, (uint32_t)fd, (uint32_t)req == FIOCLEX);
        return 0;
    default:
        break;
    }
    if (f->binder)
        return lx_binder_ioctl(c, f, req, arg);
    if (f->evdev)
        return lx_evdev_ioctl(c, f, req, arg);
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    if (n && (n->mode & LX_S_IFMT) == LX_S_IFCHR && n->dev == LX_DEV_FB)
        return lx_fb_ioctl(c, f, req, arg);
    if (!lx_node_is_tty(n))
        return -LX_ENOTTY;
    return lx_tty_ioctl(c, f, req, arg);
}

int64_t lx_sys_readlinkat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t buf, uint64_t size)
{
    if ((int32_t)size <= 0)
        return -LX_EINVAL;
    int32_t dir;
    int64_t len = lx_path_at(c, dirfd, upath, path_buf, &dir);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    int32_t node = lx_lookup(dir, path_buf, 0);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if (kind(n) != LX_S_IFLNK)
        return -LX_EINVAL;
    static char self[LX_PATH_MAX];
    const char *target = (const char *)lx_node_data(n);
    uint64_t tlen = n->size;
    if (n->proc) {
        tlen = lx_procfs_link(node, self, sizeof(self));
        target = self;
    }
    uint64_t k = tlen < (uint32_t)size ? tlen : (uint32_t)size;
    if (lx_copy_out(c, buf, target, k))
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
    c->p->cwd = dir;                            /* root searches any directory, whatever its mode */
    return 0;
}

int64_t lx_sys_chdir(struct lx_ctx *c, uint64_t upath)
{
    int32_t dir;
    int64_t len = lx_path_at(c, AT_FDCWD, upath, path_buf, &dir);
    if (len <= 0)
        return len ? len : -LX_ENOENT;
    return set_cwd(c, lx_lookup(dir, path_buf, 1));
}

int64_t lx_sys_fadvise64(struct lx_ctx *c, uint64_t fd, int64_t len, uint64_t advice)
{
    struct lx_file *f = lx_fd_use(c->p, fd);
    if (!f)
        return -LX_EBADF;
    if (f->kind == LX_FILE_PIPE || (f->kind == LX_FILE_NODE && kind(lx_node(f->node)) == LX_S_IFIFO))
        return -LX_ESPIPE;
    if (len < 0 || (uint32_t)advice > 5)
        return -LX_EINVAL;                      /* POSIX_FADV_NORMAL .. POSIX_FADV_NOREUSE: nothing to do */
    return 0;
}

int64_t lx_sys_fchdir(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    return f->node < 0 ? -LX_ENOTDIR : set_cwd(c, f->node);
}

/* The working directory's path (lx_node_path: from its node up to the root). */
int64_t lx_sys_getcwd(struct lx_ctx *c, uint64_t buf, uint64_t size)
{
    if (!lx_node(c->p->cwd)->nlink)
        return -LX_ENOENT;                      /* removed */
    lx_procfs_caller(c->p);
    int64_t len = lx_node_path(c->p->cwd, path_buf, sizeof(path_buf));
    if (len < 0)
        return len;
    if (size < (uint64_t)len + 1)               /* with its NUL */
        return -LX_ERANGE;
    return lx_copy_out(c, buf, path_buf, (uint64_t)len + 1) ? -LX_EFAULT : len + 1;
}
