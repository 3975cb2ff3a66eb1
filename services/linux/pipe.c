/*
 * Pipes and the descriptor calls: pipe2, dup, dup3, close_range, fcntl.
 *
 * A pipe is a ring of LX_PIPE_BUF bytes in the personality (nothing of the
 * kernel's; F_SETPIPE_SZ makes it 4 KiB to 1 MiB, a power of two as
 * Linux rounds it), with the counts of the open file descriptions of its
 * two ends. A read of an empty pipe and a write to a full one wait (the
 * caller keeps its reply, linux.c: lx_wake) until the other side moves,
 * then run again; with O_NONBLOCK they fail with EAGAIN instead. Reading
 * gives end of file once every writer is closed; writing with no reader
 * left sends the writer SIGPIPE and fails with EPIPE. A write of at most
 * LX_PIPE_ATOMIC bytes is never split; a longer one is written in pieces
 * as room comes, and write() returns only when all of it went (the bytes
 * already written are kept in the process across its restarts).
 */
#include "lx.h"

#define F_DUPFD     0
#define F_GETFD     1
#define F_SETFD     2
#define F_GETFL     3
#define F_SETFL     4
#define F_DUPFD_CLOEXEC 1030
#define F_SETPIPE_SZ 1031
#define F_GETPIPE_SZ 1032
#define PIPE_MAX_SIZE (1u << 20)       /* Linux's /proc/sys/fs/pipe-max-size */
#define PIPE_BYTES    (8u << 20)       /* all pipes' rings together, at most (F_SETPIPE_SZ: EPERM past it) */
#define FD_CLOEXEC  1
#define SETFL_BITS  (O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME)

struct lx_pipe {
    uint8_t *buf;               /* NULL: free */
    uint32_t cap;               /* its size */
    uint32_t head, count;       /* the first unread byte, how many */
    uint32_t readers, writers;  /* open file descriptions of each end */
    uint32_t ino;               /* its inode number (lx_ino_new; a pipe made again for an O_PATH name
                                 * of a gone one takes that one's: lx_pipe_reopen) */
    uint64_t owner_serial;      /* the process it is charged to (its pipes), while one of pid owner_pid
                                 * has this serial number */
    int32_t owner_pid;
    int32_t id;                 /* its index in `pipes` (what open files and waits name it by) */
};

/* The pipes: records of the personality's heap, named by their index in
 * an array of pointers that doubles when full (from 64 entries on, up to
 * LX_NR_PIPES), so that a pipe's number stays what it was while it lives.
 * A free entry is looked for from `pipes_low` on (none is free below it). */
static struct lx_pipe **pipes;
static uint32_t pipes_size, pipes_low, pipes_used;
static uint64_t pipe_bytes;             /* the rings' sizes, summed */

static struct lx_file *file_of(struct lx_proc *p, uint64_t fd)
{
    return lx_fd_file(p, fd);
}

/* The pipe of open file f, or NULL if f is not a pipe's end. */
static struct lx_pipe *pipe_of(const struct lx_file *f)
{
    if (f->kind != LX_FILE_PIPE || f->pipe < 0 || (uint32_t)f->pipe >= pipes_size)
        return NULL;
    return pipes[f->pipe];
}

/* Double the array of pipes; 0 or -1 (LX_NR_PIPES, or no memory). */
static int pipes_grow(void)
{
    uint32_t size = pipes_size ? pipes_size * 2 : 64;
    if (size > LX_NR_PIPES)
        return -1;
    struct lx_pipe **n = lx_alloc(size * sizeof(*n));
    if (!n)
        return -1;
    if (pipes_size) {
        memcpy(n, pipes, pipes_size * sizeof(*n));
        lx_free(pipes, pipes_size * sizeof(*n));
    }
    pipes = n;
    pipes_size = size;
    return 0;
}

/* A free pipe number (its pipe not made yet), or -1. */
static int32_t pipe_slot(void)
{
    uint32_t i = pipes_low;
    while (i < pipes_size && pipes[i])
        i++;
    pipes_low = i;
    if (i == pipes_size && pipes_grow())
        return -1;
    return (int32_t)i;
}

/* Make pipe i with its ring and inode number ino, charged to `by`, its
 * ends not open yet; 0 or -ENOMEM. */
static int pipe_make(struct lx_proc *by, int32_t i, uint32_t ino)
{
    uint32_t cap = by->pipes < LX_PROC_PIPES ? LX_PIPE_BUF : LX_PAGE;
    struct lx_pipe *pp = lx_alloc(sizeof(*pp));
    uint8_t *buf = pp ? svc_alloc(cap) : NULL;
    if (!buf) {
        lx_free(pp, sizeof(*pp));
        return -LX_ENOMEM;
    }
    *pp = (struct lx_pipe){ buf, cap, 0, 0, 0, 0, ino, by->serial, by->pid, i };
    pipes[i] = pp;
    pipes_used++;
    pipe_bytes += cap;
    by->pipes++;
    return 0;
}

/* With no pipe left, the array goes too (every byte back): after the
 * last pipe is unmade, and after a call that grew it made none. */
static void pipes_trim(void)
{
    if (pipes_used || !pipes)
        return;
    lx_free(pipes, pipes_size * sizeof(*pipes));
    pipes = NULL;
    pipes_size = pipes_low = 0;
}

/* Free pipe pp's ring (no end is open). */
static void pipe_unmake(struct lx_pipe *pp)
{
    struct lx_proc *owner = lx_proc_of_serial(pp->owner_pid, pp->owner_serial);
    if (owner && owner->pipes)
        owner->pipes--;
    svc_free(pp->buf, pp->cap);
    pipe_bytes -= pp->cap;
    pipes[pp->id] = NULL;
    if ((uint32_t)pp->id < pipes_low)
        pipes_low = (uint32_t)pp->id;
    pipes_used--;
    lx_free(pp, sizeof(*pp));
    pipes_trim();
}

uint32_t lx_pipes_in_use(void)
{
    return pipes_used;
}

int64_t lx_sys_pipe2(struct lx_ctx *c, uint64_t ufds, uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
        return -LX_EINVAL;
    int32_t i = pipe_slot();
    if (i < 0)
        return -LX_ENFILE;
    struct lx_file *r = lx_file_new(c->p, LX_FILE_PIPE, i, fl & (O_NONBLOCK | O_DIRECT));
    struct lx_file *w = r ? lx_file_new(c->p, LX_FILE_PIPE, i, O_WRONLY | (fl & (O_NONBLOCK | O_DIRECT))) : NULL;
    int err = w ? pipe_make(c->p, i, lx_ino_new()) : lx_file_error(c->p);
    int rfd = !err ? lx_fd_new(c->p, r, (fl & O_CLOEXEC) != 0, 0) : err;
    int wfd = rfd >= 0 ? lx_fd_new(c->p, w, (fl & O_CLOEXEC) != 0, 0) : rfd;
    int32_t fds[2] = { rfd, wfd };
    if (wfd >= 0 && lx_copy_out(c, ufds, fds, sizeof(fds)) == 0) {
        pipes[i]->readers = pipes[i]->writers = 1;
        return 0;
    }
    err = wfd >= 0 ? -LX_EFAULT : wfd;
    if (rfd >= 0)
        lx_fd_set(c->p, (uint32_t)rfd, NULL);
    if (wfd >= 0)
        lx_fd_set(c->p, (uint32_t)wfd, NULL);
    if (pipes[i])
        pipe_unmake(pipes[i]);
    pipes_trim();
    if (r)
        lx_file_discard(r);
    if (w)
        lx_file_discard(w);
    return err;
}

uint64_t lx_pipe_avail(struct lx_file *f)
{
    const struct lx_pipe *pp = pipe_of(f);
    return pp ? pp->count : 0;
}

int lx_pipe_poll(struct lx_file *f)
{
    const struct lx_pipe *pp = pipe_of(f);
    if (!pp)
        return LX_POLLERR;
    if ((f->flags & O_ACCMODE) == O_WRONLY)
        return !pp->readers ? LX_POLLOUT | LX_POLLERR : pp->cap - pp->count >= LX_PIPE_ATOMIC ? LX_POLLOUT : 0;
    return (pp->count ? LX_POLLIN : 0) | (pp->writers ? 0 : LX_POLLHUP);
}

int lx_pipe_ready(struct lx_file *f, int writing, uint64_t len)
{
    const struct lx_pipe *pp = pipe_of(f);
    if (!pp)
        return 0;
    if (writing)
        return pp->readers && pp->cap - pp->count >= len;
    return pp->count || !pp->writers;
}

void lx_pipe_close(struct lx_file *f)
{
    struct lx_pipe *pp = pipe_of(f);
    if (!pp)
        return;
    if ((f->flags & O_ACCMODE) != 0 && pp->writers)
        pp->writers--;                          /* (O_RDWR, through /proc/PID/fd: both ends) */
    if ((f->flags & O_ACCMODE) != O_WRONLY && pp->readers)
        pp->readers--;
    if (!pp->readers && !pp->writers) {
        pipe_unmake(pp);
        return;
    }
    lx_wake_all(LX_BLK_PIPE, f->pipe);          /* end of file, or EPIPE, for whoever waits */
}

/* Wait for the pipe (or EAGAIN with O_NONBLOCK). */
static int64_t wait_pipe(struct lx_ctx *c, struct lx_file *f)
{
    if (f->flags & O_NONBLOCK)
        return -LX_EAGAIN;
    return lx_block(c, LX_BLK_PIPE, f->pipe);
}

int64_t lx_pipe_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    struct lx_pipe *pp = pipe_of(f);
    if (!pp)
        return -LX_EBADF;
    if (len == 0)
        return 0;
    if (pp->count == 0)
        return pp->writers ? wait_pipe(c, f) : 0;
    uint64_t n = len < pp->count ? len : pp->count;
    uint64_t first = pp->cap - pp->head < n ? pp->cap - pp->head : n;
    if (lx_copy_out(c, buf, pp->buf + pp->head, first) ||
        (n > first && lx_copy_out(c, buf + first, pp->buf, n - first)))
        return -LX_EFAULT;
    pp->head = (uint32_t)((pp->head + n) % pp->cap);
    pp->count -= (uint32_t)n;
    lx_wake_all(LX_BLK_PIPE, f->pipe);          /* room for writers */
    return (int64_t)n;
}

/* Copy up to n bytes of s from offset off into the pipe's free room; how many, or -EFAULT. */
static int64_t fill(struct lx_ctx *c, struct lx_pipe *pp, const struct lx_src *s, uint64_t off, uint64_t n)
{
    uint64_t room = pp->cap - pp->count;
    n = n < room ? n : room;
    uint64_t tail = (pp->head + pp->count) % pp->cap;
    uint64_t first = pp->cap - tail < n ? pp->cap - tail : n;
    if (lx_src_copy(c, pp->buf + tail, s, off, first) ||
        (n > first && lx_src_copy(c, pp->buf, s, off + first, n - first)))
        return -LX_EFAULT;
    pp->count += (uint32_t)n;
    return (int64_t)n;
}

int64_t lx_pipe_write(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    struct lx_src s = { buf, 0, 0 };
    return lx_pipe_write_src(c, f, &s, len);
}

/* All of it, waiting for room as often as it takes. */
int64_t lx_pipe_write_src(struct lx_ctx *c, struct lx_file *f, const struct lx_src *s, uint64_t len)
{
    struct lx_pipe *pp = pipe_of(f);
    if (!pp)
        return -LX_EBADF;
    struct lx_thread *p = c->t;
    uint64_t done = p->io.done;                 /* (0 unless this call waited before: lx_io_end) */
    p->io.done = 0;
    if (!pp->readers) {
        struct lx_sinfo si = { LX_SI_USER, c->p->pid, 0, 0, 0, 0 };
        lx_sig_send_thread(p, LX_SIGPIPE, &si); /* acted on when this call returns */
        return done ? (int64_t)done : -LX_EPIPE;
    }
    if (len == 0)
        return 0;
    uint64_t room = pp->cap - pp->count;
    if (len - done <= LX_PIPE_ATOMIC ? room < len - done : room == 0) {
        if (f->flags & O_NONBLOCK)
            return done ? (int64_t)done : -LX_EAGAIN;
        p->io.done = done;
        return wait_pipe(c, f);
    }
    int64_t n = fill(c, pp, s, done, len - done);
    if (n < 0)
        return done ? (int64_t)done : n;
    done += (uint64_t)n;
    lx_wake_all(LX_BLK_PIPE, f->pipe);          /* data for readers */
    if (done < len && !(f->flags & O_NONBLOCK)) {
        p->io.done = done;
        return wait_pipe(c, f);
    }
    return (int64_t)done;
}

int64_t lx_pipe_write_kernel(struct lx_ctx *c, struct lx_file *f, const void *src, uint64_t len, int may_wait)
{
    struct lx_pipe *pp = pipe_of(f);
    if (!pp)
        return -LX_EBADF;
    if (!pp->readers)
        return -LX_EPIPE;
    uint64_t room = pp->cap - pp->count;
    if (room == 0 && len) {
        if (!may_wait)
            return 0;
        return wait_pipe(c, f);
    }
    uint64_t n = len < room ? len : room;
    uint64_t tail = (pp->head + pp->count) % pp->cap;
    uint64_t first = pp->cap - tail < n ? pp->cap - tail : n;
    memcpy(pp->buf + tail, src, first);
    memcpy(pp->buf, (const uint8_t *)src + first, n - first);
    pp->count += (uint32_t)n;
    lx_wake_all(LX_BLK_PIPE, f->pipe);
    return (int64_t)n;
}

uint32_t lx_pipe_ino(const struct lx_file *f)
{
    const struct lx_pipe *pp = pipe_of(f);
    return pp ? pp->ino : 0;
}

int64_t lx_pipe_reopen(struct lx_proc *p, uint32_t ino, uint32_t fl)
{
    int32_t i = -1;
    for (uint32_t j = 0; j < pipes_size && i < 0; j++)
        if (pipes[j] && pipes[j]->ino == ino)
            i = (int32_t)j;
    int fresh = i < 0;
    if (fresh) {                                /* its pipe is gone: as on Linux, the inode gets a new one */
        i = pipe_slot();
        if (i < 0)
            return -LX_ENFILE;
    }
    uint32_t acc = fl & O_ACCMODE;
    struct lx_file *f = lx_file_new(p, LX_FILE_PIPE, i, acc | (fl & (O_NONBLOCK | O_APPEND)));
    if (!f) {
        pipes_trim();
        return lx_file_error(p);
    }
    int err = fresh ? pipe_make(p, i, ino) : 0;
    int fd = err ? err : lx_fd_new(p, f, (fl & O_CLOEXEC) != 0, 0);
    if (fd < 0) {
        if (fresh && pipes[i])
            pipe_unmake(pipes[i]);
        pipes_trim();
        lx_file_discard(f);
        return fd;
    }
    if (acc != O_WRONLY)
        pipes[i]->readers++;
    if (acc != 0)
        pipes[i]->writers++;
    return fd;
}

/* ---------------------------------------------------------------- dup, dup3, fcntl */

int64_t lx_sys_dup(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = file_of(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    int nfd = lx_fd_new(c->p, f, 0, 0);
    if (nfd >= 0)
        lx_file_get(f);
    return nfd;
}

int64_t lx_sys_dup3(struct lx_ctx *c, uint64_t oldfd, uint64_t newfd, uint64_t flags)
{
    struct lx_proc *p = c->p;
    uint32_t o = (uint32_t)oldfd, n = (uint32_t)newfd;
    if ((uint32_t)flags & ~(uint32_t)O_CLOEXEC)
        return -LX_EINVAL;
    if (o == n)
        return -LX_EINVAL;
    if (n >= lx_nofile(p))
        return -LX_EBADF;
    struct lx_file *f = file_of(p, o);
    if (!f)
        return -LX_EBADF;
    lx_file_get(f);
    struct lx_file *old = lx_fd_file(p, n);
    if (lx_fd_set(p, n, f)) {
        lx_file_put(f);
        return -LX_ENOMEM;                      /* (the table could not grow to n: nothing changed) */
    }
    if (old)
        lx_file_put(old);
    lx_fd_set_cloexec(p, n, ((uint32_t)flags & O_CLOEXEC) != 0);
    return n;
}

#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4

/* close_range: close (or, with CLOSE_RANGE_CLOEXEC, mark close-on-exec)
 * every open descriptor from first to last. CLOSE_RANGE_UNSHARE asks for
 * a table of the caller's own first: a process of one thread has that
 * already; the threads of a process share one table here, which cannot be
 * split (EINVAL). */
int64_t lx_sys_close_range(struct lx_ctx *c, uint64_t ufirst, uint64_t ulast, uint64_t flags)
{
    struct lx_proc *p = c->p;
    uint32_t first = (uint32_t)ufirst, last = (uint32_t)ulast, fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC))
        return -LX_EINVAL;
    if (first > last)
        return -LX_EINVAL;
    if ((fl & CLOSE_RANGE_UNSHARE) && p->nthreads > 1)
        return -LX_EINVAL;
    for (int64_t next = lx_fd_next_open(p, first); next >= 0 && (uint64_t)next <= last;
         next = lx_fd_next_open(p, (uint64_t)next + 1)) {
        uint32_t fd = (uint32_t)next;
        if (fl & CLOSE_RANGE_CLOEXEC) {
            lx_fd_set_cloexec(p, fd, 1);
        } else {
            struct lx_file *f = lx_fd_file(p, fd);
            lx_fd_set(p, fd, NULL);
            if (f)
                lx_file_put(f);
        }
    }
    return 0;
}

/* Is f a pipe's end (not a file, an event object or a socket)? */
static int is_pipe(const struct lx_file *f)
{
    return pipe_of(f) != NULL;
}

/* F_SETPIPE_SZ: at least a page, a power of two (Linux's
 * round_pipe_size: past 2^31 EINVAL), at most 1 MiB, and all pipes
 * together at most PIPE_BYTES here (EPERM, what Linux says to a user
 * without CAP_SYS_RESOURCE or past its pipe buffer limits), never less
 * than what the pipe holds (EBUSY). The new size. */
static int64_t set_size(struct lx_pipe *pp, uint64_t arg)
{
    if (arg > (1ull << 31))
        return -LX_EINVAL;
    uint32_t size = LX_PAGE;
    while (size < arg)
        size <<= 1;
    if (size > PIPE_MAX_SIZE || (size > pp->cap && pipe_bytes - pp->cap + size > PIPE_BYTES))
        return -LX_EPERM;
    if (size == pp->cap)
        return size;
    if (size < pp->count)
        return -LX_EBUSY;
    uint8_t *buf = svc_alloc(size);
    if (!buf)
        return -LX_ENOMEM;
    uint32_t first = pp->cap - pp->head < pp->count ? pp->cap - pp->head : pp->count;
    memcpy(buf, pp->buf + pp->head, first);     /* the bytes it holds, from the start of the new ring */
    memcpy(buf + first, pp->buf, pp->count - first);
    svc_free(pp->buf, pp->cap);
    pipe_bytes = pipe_bytes - pp->cap + size;
    pp->buf = buf;
    pp->cap = size;
    pp->head = 0;
    lx_wake_all(LX_BLK_PIPE, pp->id);   /* writers: there may be room now */
    return size;
}

int64_t lx_sys_fcntl(struct lx_ctx *c, uint64_t ufd, uint64_t cmd, uint64_t arg)
{
    struct lx_proc *p = c->p;
    uint32_t fd = (uint32_t)ufd;
    struct lx_file *f = file_of(p, fd);
    if (!f)
        return -LX_EBADF;
    uint32_t op = (uint32_t)cmd;
    if ((f->flags & O_PATH) && op != F_DUPFD && op != F_DUPFD_CLOEXEC && op != F_GETFD && op != F_SETFD &&
        op != F_GETFL)
        return -LX_EBADF;                       /* an O_PATH descriptor: the descriptor's own commands only */
    switch (op) {
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
        return lx_fcntl_lock(c, f, op, arg);
    case F_GETPIPE_SZ:
        return is_pipe(f) ? (int64_t)pipes[f->pipe]->cap : -LX_EBADF;
    case F_SETPIPE_SZ:
        return is_pipe(f) ? set_size(pipes[f->pipe], arg) : -LX_EBADF;
    case F_DUPFD:
    case F_DUPFD_CLOEXEC: {
        if ((uint32_t)arg >= lx_nofile(p))
            return -LX_EINVAL;
        int nfd = lx_fd_new(p, f, (uint32_t)cmd == F_DUPFD_CLOEXEC, (int)(uint32_t)arg);
        if (nfd >= 0)
            lx_file_get(f);
        return nfd;
    }
    case F_GETFD:
        return lx_fd_cloexec(p, fd) ? FD_CLOEXEC : 0;
    case F_SETFD:
        lx_fd_set_cloexec(p, fd, (arg & FD_CLOEXEC) != 0);
        return 0;
    case F_GETFL:
        return f->flags;
    case F_SETFL:
        f->flags = (f->flags & ~(uint32_t)SETFL_BITS) | ((uint32_t)arg & SETFL_BITS);
        return 0;
    default:
        return -LX_EINVAL;
    }
}
