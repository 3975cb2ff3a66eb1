/*
 * File locks, as Linux keeps them (fs/locks.c):
 *
 * - POSIX record locks (fcntl F_GETLK, F_SETLK, F_SETLKW) belong to a
 *   process: byte ranges of a file, read (shared) or write (exclusive),
 *   split and merged as the owner changes them; any close of the file by
 *   the owner releases all of its locks on it, and so does its end; a
 *   child inherits none; exec keeps them.
 * - Open file description locks (F_OFD_*) are the same ranges owned by an
 *   open file description: shared by dup and fork, released when its last
 *   descriptor closes. They conflict with POSIX locks (even the same
 *   process's), and F_GETLK reports their holder as pid -1.
 * - flock locks are whole-file, owned by an open file description too,
 *   and independent of the other two. Changing one's kind drops it first.
 *
 * A request that conflicts fails with EAGAIN, or with F_SETLKW and flock
 * without LOCK_NB waits (LX_BLK_LOCK) and runs again whenever a lock is
 * released; a signal interrupts the wait (EINTR, or the call runs again
 * after a handler with SA_RESTART: signal.c). A POSIX wait that would
 * close a cycle of processes each waiting for the next is EDEADLK.
 *
 * Locks are entries of one table (LX_LOCKS), each charged to the process
 * that set it, at most LX_PROC_LOCKS per process: past either, ENOLCK. A
 * file is known by its node (or, for a pipe, socket or event, its inode
 * number), which the locks cannot outlive: they go with the last close.
 */
#include "lx.h"

#define F_RDLCK         0
#define F_WRLCK         1
#define F_UNLCK         2

#define LOCK_SH         1
#define LOCK_EX         2
#define LOCK_NB         4
#define LOCK_UN         8
#define LOCK_MAND       32

#define OFFSET_MAX      INT64_MAX
#define DEADLOCK_STEPS  10              /* Linux's MAX_DEADLK_ITERATIONS */

enum { OWN_POSIX = 1, OWN_OFD, OWN_FLOCK };

struct lock {
    uint64_t key;               /* the file */
    int64_t start, end;         /* bytes start..end, both in (end OFFSET_MAX: to any end) */
    int32_t pid;                /* OWN_POSIX: the owner */
    int32_t charged;            /* the pid of the process it is charged to */
    int32_t file;               /* OWN_OFD, OWN_FLOCK: the owning open file description's slot */
    uint8_t cls;                /* OWN_*: 0 a free entry */
    uint8_t type;               /* F_RDLCK or F_WRLCK */
};

static struct lock locks[LX_LOCKS];

/* struct flock of AArch64 Linux. */
struct lx_flock {
    int16_t type, whence;
    int32_t pad;
    int64_t start, len;
    int32_t pid, pad2;
};
_Static_assert(sizeof(struct lx_flock) == 32, "struct flock is 32 bytes on arm64");

/* The key of f's file: its node, or another object's inode number. */
static uint64_t key_of(const struct lx_file *f)
{
    return f->kind == LX_FILE_NODE ? (uint64_t)(uint32_t)f->node : (1ull << 32) | lx_file_ino(f);
}

static int same_owner(const struct lock *l, int cls, int32_t pid, const struct lx_file *f)
{
    return l->cls == cls && (cls == OWN_POSIX ? l->pid == pid : l->file == lx_file_slot(f));
}

static int overlaps(const struct lock *l, int64_t start, int64_t end)
{
    return l->start <= end && start <= l->end;
}

/* Overlapping, or touching end to end. */
static int touches(const struct lock *l, int64_t start, int64_t end)
{
    return overlaps(l, start, end) || (l->end < OFFSET_MAX && l->end + 1 == start) ||
           (end < OFFSET_MAX && end + 1 == l->start);
}

/* The first lock of another owner that a request of `type` for
 * start..end conflicts with (POSIX and OFD locks together; flock locks
 * among themselves), or NULL. */
static struct lock *conflict(uint64_t key, int cls, int32_t pid, const struct lx_file *f, int type, int64_t start,
                             int64_t end)
{
    int flock = cls == OWN_FLOCK;
    for (int i = 0; i < LX_LOCKS; i++) {
        struct lock *l = &locks[i];
        if (!l->cls || l->key != key || (l->cls == OWN_FLOCK) != flock || same_owner(l, cls, pid, f))
            continue;
        if (overlaps(l, start, end) && (l->type == F_WRLCK || type == F_WRLCK))
            return l;
    }
    return NULL;
}

static uint32_t charged_to(int32_t pid)
{
    uint32_t n = 0;
    for (int i = 0; i < LX_LOCKS; i++)
        n += locks[i].cls && locks[i].charged == pid;
    return n;
}

static uint32_t free_entries(void)
{
    uint32_t n = 0;
    for (int i = 0; i < LX_LOCKS; i++)
        n += !locks[i].cls;
    return n;
}

/* One more than the highest entry that may be in use: the walks a close
 * makes (lx_locks_closed, lx_locks_file_gone) stop there, so that closing
 * a file costs nothing while nobody holds locks. */
static int locks_top;

static void top_settle(void)
{
    while (locks_top > 0 && !locks[locks_top - 1].cls)
        locks_top--;
}

static struct lock *new_entry(void)
{
    for (int i = 0; i < LX_LOCKS; i++)
        if (!locks[i].cls) {
            if (i >= locks_top)
                locks_top = i + 1;
            return &locks[i];
        }
    return NULL;                                /* (room was checked first) */
}

/* Locks went or shrank: waiters look again. */
static void released(void)
{
    lx_wake_all(LX_BLK_LOCK, 0);
}

/* Would process `pid` waiting for a lock of process `holder` close a
 * cycle of POSIX waits? */
static int deadlock(int32_t pid, int32_t holder)
{
    for (int step = 0; step < DEADLOCK_STEPS; step++) {
        if (holder == pid)
            return 1;
        int32_t next = 0;
        for (struct lx_thread *t = lx_waiting_on(LX_BLK_LOCK, 0); t; t = t->wq_next)
            if (t->blk.kind == LX_BLK_LOCK && t->p->pid == holder && t->lock_blocker) {
                next = t->lock_blocker;
                break;
            }
        if (!next)
            return 0;
        holder = next;
    }
    return 0;
}

/* Set (type F_RDLCK or F_WRLCK) or clear (F_UNLCK) start..end of an
 * owner's POSIX or OFD locks of `key`, in one step: its locks there are
 * merged, split or cut to fit. 0 or -ENOLCK (nothing changed). */
static int64_t set_range(struct lx_ctx *c, uint64_t key, int cls, const struct lx_file *f, int type, int64_t start,
                         int64_t end)
{
    int32_t pid = c->p->pid;
    int64_t s = start, e = end;
    int add = type != F_UNLCK;
    /* Locks of the same kind that overlap or touch it become part of it. */
    int merged = 0;
    for (int i = 0; i < LX_LOCKS && add; i++) {
        struct lock *l = &locks[i];
        if (l->cls && l->key == key && same_owner(l, cls, pid, f) && l->type == type && touches(l, start, end)) {
            s = l->start < s ? l->start : s;
            e = l->end > e ? l->end : e;
            merged++;
        }
    }
    /* The others are cut around it: split in two, or gone if inside it. */
    int splits = 0, inside = 0;
    for (int i = 0; i < LX_LOCKS; i++) {
        struct lock *l = &locks[i];
        if (!l->cls || l->key != key || !same_owner(l, cls, pid, f) || (add && l->type == type) || !overlaps(l, s, e))
            continue;
        if (l->start < s && l->end > e)
            splits++;
        else if (l->start >= s && l->end <= e)
            inside++;
    }
    int net = add + splits - merged - inside;
    if (net > 0 && ((uint32_t)net > free_entries() || charged_to(pid) + (uint32_t)net > LX_PROC_LOCKS))
        return -LX_ENOLCK;
    int shrank = 0;
    for (int i = 0; i < LX_LOCKS; i++) {
        struct lock *l = &locks[i];
        if (!l->cls || l->key != key || !same_owner(l, cls, pid, f))
            continue;
        if (add && l->type == type && touches(l, start, end)) {
            l->cls = 0;                         /* merged into the new one */
            continue;
        }
        if (!overlaps(l, s, e))
            continue;
        shrank = 1;
        if (l->start < s && l->end > e) {
            struct lock *right = new_entry();
            *right = *l;
            right->start = e + 1;
            right->charged = pid;
            l->end = s - 1;
        } else if (l->start < s) {
            l->end = s - 1;
        } else if (l->end > e) {
            l->start = e + 1;
        } else {
            l->cls = 0;
        }
    }
    if (add) {
        struct lock *l = new_entry();
        *l = (struct lock){ key, s, e, pid, pid, cls == OWN_POSIX ? -1 : lx_file_slot(f), (uint8_t)cls,
                            (uint8_t)type };
    }
    if (shrank || !add)
        released();                             /* (a write lock cut or made a read lock: waiters may go) */
    return 0;
}

/* Read a struct flock into the byte range it names in f: 0, or a negated errno. */
static int64_t range_of(const struct lx_file *f, const struct lx_flock *fl, int64_t *start, int64_t *end)
{
    int64_t base;
    switch (fl->whence) {
    case 0:
        base = 0;
        break;
    case 1:
        base = (int64_t)f->pos;
        break;
    case 2: {
        struct lx_node *n = f->kind == LX_FILE_NODE ? lx_node(f->node) : NULL;
        base = n ? (int64_t)n->size : 0;
        break;
    }
    default:
        return -LX_EINVAL;
    }
    int64_t s;
    if (__builtin_add_overflow(base, fl->start, &s))
        return -LX_EOVERFLOW;
    if (s < 0)
        return -LX_EINVAL;
    if (fl->len > 0) {
        if (fl->len - 1 > OFFSET_MAX - s)
            return -LX_EOVERFLOW;
        *start = s;
        *end = s + fl->len - 1;
    } else if (fl->len < 0) {
        if (s + fl->len < 0)
            return -LX_EINVAL;
        *start = s + fl->len;
        *end = s - 1;
    } else {
        *start = s;
        *end = OFFSET_MAX;
    }
    return 0;
}

int64_t lx_fcntl_lock(struct lx_ctx *c, struct lx_file *f, uint32_t cmd, uint64_t uflock)
{
    struct lx_flock fl;
    if (lx_copy_in(c, &fl, uflock, sizeof(fl)))
        return -LX_EFAULT;
    int ofd = cmd >= F_OFD_GETLK;
    int cls = ofd ? OWN_OFD : OWN_POSIX;
    int32_t pid = c->p->pid;
    int64_t start, end;
    if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
        if (fl.type != F_RDLCK && fl.type != F_WRLCK)
            return -LX_EINVAL;
        int64_t err = range_of(f, &fl, &start, &end);
        if (err)
            return err;
        if (ofd && fl.pid != 0)
            return -LX_EINVAL;
        struct lock *l = conflict(key_of(f), cls, pid, f, fl.type, start, end);
        if (!l) {
            fl.type = F_UNLCK;
        } else {
            fl.type = (int16_t)l->type;
            fl.whence = 0;
            fl.start = l->start;
            fl.len = l->end == OFFSET_MAX ? 0 : l->end - l->start + 1;
            fl.pid = l->cls == OWN_POSIX ? l->pid : -1;
        }
        return lx_copy_out(c, uflock, &fl, sizeof(fl)) ? -LX_EFAULT : 0;
    }
    int64_t err = range_of(f, &fl, &start, &end);
    if (err)
        return err;
    if (ofd && fl.pid != 0)
        return -LX_EINVAL;
    if (fl.type != F_RDLCK && fl.type != F_WRLCK && fl.type != F_UNLCK)
        return -LX_EINVAL;
    uint32_t mode = f->flags & 3;
    if (fl.type == F_RDLCK && mode == 1)
        return -LX_EBADF;                       /* a read lock needs the file open for reading */
    if (fl.type == F_WRLCK && mode == 0)
        return -LX_EBADF;                       /* a write lock, for writing */
    if (ofd && fl.pid != 0)
        return -LX_EINVAL;
    uint64_t key = key_of(f);
    c->t->lock_blocker = 0;
    if (fl.type != F_UNLCK) {
        struct lock *l = conflict(key, cls, pid, f, fl.type, start, end);
        if (l) {
            if (cmd != F_SETLKW && cmd != F_OFD_SETLKW)
                return -LX_EAGAIN;
            if (!ofd && l->cls == OWN_POSIX && deadlock(pid, l->pid))
                return -LX_EDEADLK;
            c->t->lock_blocker = !ofd && l->cls == OWN_POSIX ? l->pid : 0;
            return lx_block(c, LX_BLK_LOCK, 0);
        }
    }
    return set_range(c, key, cls, f, fl.type, start, end);
}

int64_t lx_sys_flock(struct lx_ctx *c, uint64_t ufd, uint64_t op)
{
    if ((uint32_t)op & LOCK_MAND)
        return 0;                               /* Linux ignores these (they never worked) */
    uint32_t how = (uint32_t)op & ~(uint32_t)LOCK_NB;
    int type = how == LOCK_SH ? F_RDLCK : how == LOCK_EX ? F_WRLCK : how == LOCK_UN ? F_UNLCK : -1;
    if (type < 0)
        return -LX_EINVAL;
    struct lx_file *f = lx_fd_use(c->p, (uint32_t)ufd);
    if (!f)
        return -LX_EBADF;                       /* (an O_PATH descriptor too) */
    uint64_t key = key_of(f);
    struct lock *mine = NULL;
    for (int i = 0; i < LX_LOCKS; i++)
        if (locks[i].cls == OWN_FLOCK && locks[i].key == key && locks[i].file == lx_file_slot(f))
            mine = &locks[i];
    if (mine && mine->type == type)
        return 0;
    if (mine) {
        mine->cls = 0;                          /* a change of kind drops the old lock first, as Linux */
        released();
    }
    if (type == F_UNLCK)
        return 0;
    if (conflict(key, OWN_FLOCK, 0, f, type, 0, OFFSET_MAX))
        return ((uint32_t)op & LOCK_NB) ? -LX_EAGAIN : lx_block(c, LX_BLK_LOCK, 0);
    if (!free_entries() || charged_to(c->p->pid) >= LX_PROC_LOCKS)
        return -LX_ENOLCK;
    *new_entry() = (struct lock){ key, 0, OFFSET_MAX, 0, c->p->pid, lx_file_slot(f), OWN_FLOCK,
                                  (uint8_t)type };
    return 0;
}

void lx_locks_closed(const struct lx_proc *p, const struct lx_file *f)
{
    if (!locks_top)
        return;
    uint64_t key = key_of(f);
    int any = 0;
    for (int i = 0; i < locks_top; i++)
        if (locks[i].cls == OWN_POSIX && locks[i].key == key && locks[i].pid == p->pid) {
            locks[i].cls = 0;
            any = 1;
        }
    top_settle();
    if (any)
        released();
}

void lx_locks_file_gone(const struct lx_file *f)
{
    int any = 0;
    for (int i = 0; i < locks_top; i++)
        if ((locks[i].cls == OWN_OFD || locks[i].cls == OWN_FLOCK) && locks[i].file == lx_file_slot(f)) {
            locks[i].cls = 0;
            any = 1;
        }
    top_settle();
    if (any)
        released();
}

uint32_t lx_locks_in_use(void)
{
    return LX_LOCKS - free_entries();
}
