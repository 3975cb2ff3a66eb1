/*
 * /dev/binder: Linux's binder UAPI (linux/android/binder.h) for the
 * personality's processes, on the personality's own structures.
 *
 * An open of /dev/binder is a binder process (struct bproc, Linux's
 * binder_proc); each thread that makes a call on it is a binder thread
 * (struct bthread) of it, found by tid. A transaction's bytes go from the
 * sender's memory straight into a buffer of the receiver's mapping (one
 * copy, svc_mem_copy_in): the mapping is a memory object the personality
 * holds and the receiver maps read-only. Work (transactions, replies,
 * their completions, errors) waits on a thread's list or the process's,
 * as in Linux's driver, and is handed out by BINDER_WRITE_READ's read.
 * A thread with nothing to read waits (LX_BLK_BINDER on its process's
 * number), its binder_write_read kept (the write part marked consumed
 * there before it waits, so it is never done twice). Work for it that a
 * BINDER_WRITE_READ of another thread brings is read for it at the end
 * of that call, straight into its memory, and its call answered then
 * (finish_parked): a call and its reply each take one entry into the
 * personality, not two. Woken any other way, or when its buffers are
 * not plain writable memory, it runs its call again.
 *
 * The personality serves one call at a time in either placement, so none
 * of this takes a lock. docs/design/android.md describes the mapping.
 *
 * Nodes (a process's objects) and references to them (handles of other
 * processes) go in transactions as Linux's binder translates them, with
 * Linux's counts and its BR_INCREFS .. BR_DECREFS to the owner.
 *
 * Death notifications as Linux's: BR_DEAD_BINDER when a node's owner
 * is gone, kept until BC_DEAD_BINDER_DONE, and cleared with
 * BR_CLEAR_DEATH_NOTIFICATION_DONE.
 *
 * A file descriptor in a transaction (BINDER_TYPE_FD) goes to a node that
 * takes them: its file is held with the buffer, and becomes a descriptor
 * of the reading process (close on exec) when the call is read.
 *
 * Each device (/dev/binder, and those lxrun's binder= makes) is a
 * context of its own: its own context manager, so its own handle 0.
 *
 * Scatter-gather transactions copy buffer objects (BINDER_TYPE_PTR)
 * into the receiver's buffer after its offsets and fix up the pointers
 * to them; arrays of descriptors (BINDER_TYPE_FDA) in them are held like
 * single ones and closed when the buffer is freed.
 *
 * BINDER_FREEZE and BINDER_GET_FROZEN_INFO as Linux 6.1's (freeze, below).
 */

#include "lx.h"
#include "svc_proc.h"

#include "binder_uapi.h"

enum { LOOPER_REGISTERED = 1, LOOPER_ENTERED = 2, LOOPER_EXITED = 4, LOOPER_INVALID = 8 };

#define MAP_MAX         (4u << 20)      /* bytes of a process's buffer mapping at most (Linux's SZ_4M) */
#define BUFS_MAX        4096u           /* buffers a process holds at most (ENOSPC past it) */
#define WORK_MAX        4096u           /* items waiting on one thread at most (ENOMEM past it) */
#define NODES_MAX       4096u           /* nodes a process owns at most */
#define REFS_MAX        4096u           /* references a process holds at most */
#define OBJS_MAX        1024u           /* objects one transaction carries at most (EINVAL past it) */
#define FDS_MAX         1024u           /* descriptors one transaction carries at most (EINVAL past it) */
#define CTX_MAX         8u              /* binder devices at most: /dev/binder and seven more */

/* ---------------------------------------------------------------- structures */

enum { W_TXN, W_COMPLETE, W_ERROR, W_NODE, W_DEAD, W_DEAD_CLEAR, W_CLEAR };
struct bwork {
    struct bwork *next;
    uint8_t type;
    uint32_t cmd;                       /* W_ERROR: what it says (BR_OK: nothing now); W_COMPLETE:
                                         * BR_TRANSACTION_COMPLETE or BR_ONEWAY_SPAM_SUSPECT */
};

struct bproc;
struct bthread;
struct bnode;

/* A binder device (Linux's binder_device and its binder_context): its own
 * context manager, so its own handle 0. Processes of different devices
 * never share nodes or handles. */
struct bctx {
    int32_t node;                       /* its /dev node */
    struct bnode *mgr;                  /* handle 0's node: the context manager's, or NULL */
    char name[32];
};

/* A node: an object of its owner's, named there by ptr and cookie, by
 * handles (refs) in other processes. Counts as Linux's binder_node. */
struct bnode {
    struct bwork work;                  /* (first) W_NODE: its owner hears of its counts' change */
    struct bnode *next;                 /* its owner's */
    struct bproc *proc;                 /* its owner (NULL: gone; the node stays while refs do) */
    struct bctx *ctx;                   /* its owner's device */
    uint64_t ptr, cookie;
    int32_t internal_strong, local_strong, local_weak;
    uint32_t refs;                      /* references to it */
    uint8_t has_strong, pending_strong, has_weak, pending_weak;
    uint8_t queued;                     /* its work is on a list: ... */
    struct bthread *queued_on;          /* ... this thread's (NULL: its owner's) */
    uint8_t async_busy;                 /* a one-way call to it is out: the next ones wait (async) */
    uint8_t accept_fds;                 /* its calls may carry file descriptors (FLAT_BINDER_FLAG_ACCEPTS_FDS) */
    struct bwork *async, *async_tail;
};

/* A reference: handle `desc` of process proc to a node. */
struct bref {
    struct bref *next;                  /* its holder's, by desc */
    struct bproc *proc;
    struct bnode *node;
    uint32_t desc;
    int32_t strong, weak;
    struct bdeath *death;               /* its death notification (BC_REQUEST_DEATH_NOTIFICATION), or NULL */
};

/* A death notification (Linux's binder_ref_death): W_DEAD when the node's
 * owner is gone (BR_DEAD_BINDER, then kept on the process's delivered
 * list until BC_DEAD_BINDER_DONE), W_CLEAR once cleared
 * (BR_CLEAR_DEATH_NOTIFICATION_DONE), W_DEAD_CLEAR both. */
enum { ON_NONE, ON_PROC, ON_THREAD, ON_DELIVERED };
struct bdeath {
    struct bwork work;                  /* (first) */
    uint64_t cookie;
    uint8_t on;                         /* the list it is on (ON_*) */
    struct bthread *on_thread;          /* ON_THREAD: whose */
};

/* An object a buffer carries, as translated into it (released with it). */
struct bobj {
    uint32_t type;
    uint32_t handle;                    /* a handle's */
    struct bnode *node;                 /* a binder's (its receiver owns it) */
    uint64_t at;                        /* its offset in the data */
    /* BINDER_TYPE_PTR: its copy at `sg` in the buffer, `length` bytes, from
     * the sender's `ubuf`; its parent (an index of the offsets) and where
     * in the parent it is named, if flags has BINDER_BUFFER_FLAG_HAS_PARENT. */
    uint64_t sg, length, ubuf, parent, parent_offset;
    uint32_t flags;
};

/* A descriptor a buffer carries (BINDER_TYPE_FD, or one of an FDA's): its
 * file, held until the receiver has it, and where in the buffer its
 * number goes. The descriptors of an array are the buffer's: they are
 * closed when the buffer is freed (Linux's binder_deferred_fd_close). */
struct bfd {
    struct lx_file *file;
    uint64_t at;                        /* offset of its 32-bit number in the mapping */
    int32_t fd;                         /* its number in the receiver, once made */
    uint8_t in_array;
};

/* A buffer of a process's mapping: [off, off + size). */
struct bbuf {
    struct bbuf *next;                  /* the process's, by offset */
    uint64_t off, size, data_size, offsets_size;
    struct btxn *txn;                   /* the transaction it carries, while that lives */
    uint8_t user_free;                  /* handed to the process: BC_FREE_BUFFER frees it */
    uint8_t async;                      /* a one-way call's (its space is the one-way half's) */
    uint8_t spam_suspect;               /* that call's sender looks like a one-way spammer */
    int32_t pid;                        /* the process whose call it carries */
    struct bnode *target_node;          /* a call's node (a local strong count, kept while it lives) */
    struct bobj *objs;                  /* its objects (room for objs_cap) */
    uint32_t nobjs, objs_cap;
    struct bfd *fds;                    /* its descriptors, in the order they came (room for fds_cap) */
    uint32_t nfds, fds_cap;
    uint8_t fds_made;                   /* they are the receiver's descriptors now */
};

struct btxn {
    struct bwork w;                     /* (first: a W_TXN work is its transaction) */
    struct bthread *from;               /* a call's sender, waiting for the reply (NULL: gone, or none) */
    struct bthread *to_thread;          /* the thread that took it (a call being served) */
    struct bproc *to_proc;
    struct btxn *from_parent, *to_parent;       /* the stacks of the threads (Linux's) */
    struct bbuf *buf;
    uint32_t code, flags, euid;
    uint8_t reply, need_reply;
    uint8_t counted;                    /* in to_proc's `outstanding` until it is freed */
};

struct bthread {
    struct bthread *next;
    struct bproc *proc;
    int32_t id;                         /* its wait number (LX_BLK_BINDER): each thread is woken alone */
    int tid;
    uint32_t looper;
    uint8_t need_return;                /* a new thread: its first read does not wait */
    uint8_t process_todo;               /* its list has something to read now (not only a deferred completion) */
    uint8_t waiting;                    /* it waits for the process's work */
    uint32_t queued;                    /* items on its list */
    struct bwork *todo, *todo_tail;
    struct btxn *stack;                 /* the transactions it is in (sent or being served) */
    struct bwork return_error, reply_error;
    struct binder_extended_error ee;    /* its last transaction's fate (BINDER_GET_EXTENDED_ERROR) */
    /* Waiting in BINDER_WRITE_READ's read: the call's binder_write_read
     * (at park_arg, write part done) for finish_parked; on the list of
     * threads to finish at the end of the running call (`finishing`). */
    uint8_t parked, finishing;
    struct bthread *finish_next;
    uint64_t park_arg;
    struct binder_write_read park_bwr;
};

struct bproc {
    struct bproc *next;                 /* every open binder process */
    int pid;                            /* the process that opened it */
    struct bctx *ctx;                   /* the device it opened */
    uint64_t serial;
    uint8_t dead;
    struct lx_mobj *obj;                /* its buffers' memory (NULL: not mapped yet) */
    uint64_t va, size, free_async;
    struct bbuf *bufs;
    uint32_t nbufs;
    struct bthread *threads;
    struct bwork *todo, *todo_tail;
    int32_t max_threads;                /* (an int, as Linux's: negative never spawns) */
    uint32_t requested, started;
    struct bnode *nodes;
    struct bref *refs;                  /* by desc */
    struct bwork *delivered, *delivered_tail;   /* death notifications read, not yet done */
    uint32_t nnodes, nrefs;
    /* BINDER_FREEZE (Linux's is_frozen, sync_recv, async_recv, outstanding_txns):
     * calls to a frozen process fail with BR_FROZEN_REPLY, one-way calls wait;
     * what came since it was frozen is kept; `outstanding` counts the
     * transactions queued to it or being served by it, not yet freed. */
    uint8_t frozen, sync_recv, async_recv;
    /* BINDER_ENABLE_ONEWAY_SPAM_DETECTION (Linux's oneway_spam_detection_enabled)
     * of the process as a sender; one-way spam seen in its buffer
     * (Linux's alloc->oneway_spam_detected) as a receiver. */
    uint8_t spam_detection, spam_detected;
    uint8_t was_frozen, was_sync, was_async;    /* (before a BINDER_FREEZE that may be undone) */
    uint32_t outstanding;
};

static struct bproc *procs;
static struct bctx ctxs[CTX_MAX];       /* the devices, in the order they were made */
static unsigned nctx;
static int32_t next_id = 1;
/* A BINDER_WRITE_READ or other binder ioctl is running (binder_ioctl):
 * the parked threads it gives work are read for at its end, in the order
 * they were given it. */
static int in_ioctl;
static struct bthread *finish_first, *finish_last;
static struct bthread *ioctl_caller;    /* the running ioctl's thread: it reads again itself (lx_binder_ioctl) */
static uint32_t last_txn_id;            /* transactions' numbers (Linux's debug ids: only their order means anything) */            /* (0 is the pollers': LX_BLK_BINDER's wake of no thread) */

/* ---------------------------------------------------------------- lists */

static void enqueue(struct bwork **head, struct bwork **tail, struct bwork *w)
{
    w->next = NULL;
    if (*tail)
        (*tail)->next = w;
    else
        *head = w;
    *tail = w;
}

static struct bwork *dequeue(struct bwork **head, struct bwork **tail)
{
    struct bwork *w = *head;
    if (w) {
        *head = w->next;
        if (!*head)
            *tail = NULL;
    }
    return w;
}

/* Wake thread bt if it waits in a read (and every poll: lx_wake_all).
 * Within an ioctl, a thread parked in a read is finished at its end. */
static void wake_thread(struct bthread *bt)
{
    if (bt && in_ioctl && bt->parked && bt != ioctl_caller) {
        if (!bt->finishing) {
            bt->finishing = 1;
            bt->finish_next = NULL;
            if (finish_last)
                finish_last->finish_next = bt;
            else
                finish_first = bt;
            finish_last = bt;
        }
        return;
    }
    lx_wake_all(LX_BLK_BINDER, bt ? bt->id : 0);
}

/* Does thread k wait for its process's work now (parked in a read that
 * may take it)? A flag alone could be stale: the call it was set in may
 * have ended another way (a signal, the thread's end). */
static int waits_for_proc(const struct bthread *k)
{
    if (!k->waiting)
        return 0;
    struct lx_thread *t = lx_thread_of_tid(k->tid);
    return t && t->blk.token && t->blk.kind == LX_BLK_BINDER && t->blk.on == k->id;
}

/* The process's list has work: one thread waiting for it is woken
 * (Linux's binder_wakeup_proc_ilocked), else only pollers. */
static void wake_proc(struct bproc *bp, const struct bthread *not)
{
    for (struct bthread *k = bp->threads; k; k = k->next) {
        if (k != not && waits_for_proc(k)) {
            k->waiting = 0;
            wake_thread(k);
            return;
        }
    }
    wake_thread(NULL);
}

/* Work for thread bt; `deferred`: not reason enough to end its wait (the
 * completion of a call, which it reads with the reply). */
static void thread_work(struct bthread *bt, struct bwork *w, int deferred)
{
    enqueue(&bt->todo, &bt->todo_tail, w);
    bt->queued++;
    if (!deferred) {
        bt->process_todo = 1;
        wake_thread(bt);
    }
}

static void set_error(struct bthread *bt, struct bwork *e, uint32_t cmd)
{
    e->cmd = cmd;
    thread_work(bt, e, 0);
}

/* ---------------------------------------------------------------- nodes and references */

static void unlink_work(struct bwork **head, struct bwork **tail, struct bwork *w)
{
    struct bwork *prev = NULL;
    for (struct bwork *k = *head; k; prev = k, k = k->next) {
        if (k == w) {
            if (prev)
                prev->next = k->next;
            else
                *head = k->next;
            if (*tail == k)
                *tail = prev;
            return;
        }
    }
}

static void node_dequeue(struct bnode *n)
{
    if (!n->queued)
        return;
    struct bthread *bt = n->queued_on;
    if (bt) {
        unlink_work(&bt->todo, &bt->todo_tail, &n->work);
        bt->queued--;
        if (!bt->todo)
            bt->process_todo = 0;
    } else if (n->proc) {
        unlink_work(&n->proc->todo, &n->proc->todo_tail, &n->work);
    }
    n->queued = 0;
    n->queued_on = NULL;
}

/* Its owner hears of n's counts: on thread bt's list (read with what that
 * thread reads next), or on the owner's. */
static void node_enqueue(struct bnode *n, struct bthread *bt)
{
    node_dequeue(n);
    n->queued = 1;
    n->queued_on = bt;
    if (bt) {
        enqueue(&bt->todo, &bt->todo_tail, &n->work);
        bt->queued++;
    } else {
        enqueue(&n->proc->todo, &n->proc->todo_tail, &n->work);
        wake_proc(n->proc, NULL);
    }
}

static struct bnode *node_of_ptr(struct bproc *bp, uint64_t ptr)
{
    for (struct bnode *n = bp->nodes; n; n = n->next)
        if (n->ptr == ptr)
            return n;
    return NULL;
}

static struct bnode *node_new(struct bproc *bp, uint64_t ptr, uint64_t cookie, uint32_t flags)
{
    if (bp->nnodes >= NODES_MAX)
        return NULL;
    struct bnode *n = lx_alloc(sizeof(*n));
    if (!n)
        return NULL;
    *n = (struct bnode){ .work.type = W_NODE, .next = bp->nodes, .proc = bp, .ctx = bp->ctx, .ptr = ptr,
                         .cookie = cookie,
                         .accept_fds = (flags & FLAT_BINDER_FLAG_ACCEPTS_FDS) != 0 };
    bp->nodes = n;
    bp->nnodes++;
    return n;
}

static void release_work(struct bwork **head, struct bwork **tail);
static void fd_arrays_close(struct lx_ctx *c, struct bproc *bp, struct bbuf *b);

static void node_free(struct bnode *n)
{
    node_dequeue(n);
    release_work(&n->async, &n->async_tail);
    if (n->proc) {
        for (struct bnode **link = &n->proc->nodes; *link; link = &(*link)->next) {
            if (*link == n) {
                *link = n->next;
                break;
            }
        }
        n->proc->nnodes--;
    }
    if (n->ctx->mgr == n)
        n->ctx->mgr = NULL;
    lx_free(n, sizeof(*n));
}

/* Linux's binder_inc_node_nilocked: 0, or -LX_EINVAL (a strong count
 * from nothing with nobody to tell). bt: the thread whose list tells the
 * owner (the sender of its own node), or NULL. */
static int inc_node(struct bnode *n, int strong, int internal, struct bthread *bt)
{
    if (strong) {
        if (internal) {
            if (!bt && n->internal_strong == 0 && !(n == n->ctx->mgr && n->has_strong))
                return -LX_EINVAL;
            n->internal_strong++;
        } else {
            n->local_strong++;
        }
        if (!n->has_strong && bt)
            node_enqueue(n, bt);
    } else {
        if (!internal)
            n->local_weak++;
        if (!n->has_weak && !n->queued) {
            if (!bt)
                return -LX_EINVAL;
            node_enqueue(n, bt);
        }
    }
    return 0;
}

/* Linux's binder_dec_node_nilocked: whether n is to be freed now. */
static int dec_node(struct bnode *n, int strong, int internal)
{
    if (strong) {
        if (internal)
            n->internal_strong--;
        else
            n->local_strong--;
        if (n->local_strong || n->internal_strong)
            return 0;
    } else {
        if (!internal)
            n->local_weak--;
        if (n->local_weak || n->refs)
            return 0;
    }
    if (n->proc && (n->has_strong || n->has_weak)) {
        if (!n->queued)
            node_enqueue(n, NULL);              /* (its owner hears BR_RELEASE / BR_DECREFS) */
        return 0;
    }
    return !n->refs && !n->local_strong && !n->local_weak;
}

static void node_put(struct bnode *n, int strong, int internal)
{
    if (dec_node(n, strong, internal))
        node_free(n);
}

/* Death notifications' lists: bp is the holder of the reference. */
static void death_dequeue(struct bproc *bp, struct bdeath *d)
{
    if (d->on == ON_PROC) {
        unlink_work(&bp->todo, &bp->todo_tail, &d->work);
    } else if (d->on == ON_THREAD) {
        struct bthread *bt = d->on_thread;
        unlink_work(&bt->todo, &bt->todo_tail, &d->work);
        bt->queued--;
        if (!bt->todo)
            bt->process_todo = 0;
    } else if (d->on == ON_DELIVERED) {
        unlink_work(&bp->delivered, &bp->delivered_tail, &d->work);
    }
    d->on = ON_NONE;
    d->on_thread = NULL;
}

/* To the thread that asked, if it is a looper, else to its process. */
static void death_queue(struct bproc *bp, struct bthread *bt, struct bdeath *d)
{
    if (bt && (bt->looper & (LOOPER_REGISTERED | LOOPER_ENTERED))) {
        d->on = ON_THREAD;
        d->on_thread = bt;
        thread_work(bt, &d->work, 0);
    } else {
        d->on = ON_PROC;
        enqueue(&bp->todo, &bp->todo_tail, &d->work);
        wake_proc(bp, NULL);
    }
}

static struct bref *ref_of_desc(struct bproc *bp, uint32_t desc, int need_strong)
{
    for (struct bref *r = bp->refs; r; r = r->next)
        if (r->desc == desc)
            return need_strong && !r->strong ? NULL : r;
    return NULL;
}

/* bp's reference to n, made if it has none (the lowest free handle, from
 * 1; 0 for the context manager's node); NULL past its bound. */
static struct bref *ref_for_node(struct bproc *bp, struct bnode *n)
{
    for (struct bref *r = bp->refs; r; r = r->next)
        if (r->node == n)
            return r;
    if (bp->nrefs >= REFS_MAX)
        return NULL;
    struct bref *r = lx_alloc(sizeof(*r));
    if (!r)
        return NULL;
    uint32_t desc = n == bp->ctx->mgr ? 0 : 1;
    struct bref **link = &bp->refs;
    for (; *link && (*link)->desc <= desc; link = &(*link)->next)
        desc = (*link)->desc + 1;
    *r = (struct bref){ .next = *link, .proc = bp, .node = n, .desc = desc };
    *link = r;
    bp->nrefs++;
    n->refs++;
    return r;
}

/* Linux's binder_cleanup_ref_olocked, and the reference freed. */
static void ref_cleanup(struct bref *r)
{
    struct bnode *n = r->node;
    for (struct bref **link = &r->proc->refs; *link; link = &(*link)->next) {
        if (*link == r) {
            *link = r->next;
            break;
        }
    }
    r->proc->nrefs--;
    if (r->death) {
        death_dequeue(r->proc, r->death);
        lx_free(r->death, sizeof(*r->death));
    }
    if (r->strong)
        dec_node(n, 1, 1);                      /* (the weak count below decides) */
    n->refs--;
    int gone = dec_node(n, 0, 1);
    lx_free(r, sizeof(*r));
    if (gone)
        node_free(n);
}

static int inc_ref(struct bref *r, int strong, struct bthread *bt)
{
    int err = 0;
    if (strong) {
        if (r->strong == 0 && (err = inc_node(r->node, 1, 1, bt)) != 0)
            return err;
        r->strong++;
    } else {
        if (r->weak == 0 && (err = inc_node(r->node, 0, 1, bt)) != 0)
            return err;
        r->weak++;
    }
    return 0;
}

/* A count of r down: -1 if it had none of that kind; r is freed when
 * both reach 0. */
static int dec_ref(struct bref *r, int strong)
{
    if (strong) {
        if (r->strong == 0)
            return -1;
        if (--r->strong == 0)
            node_put(r->node, 1, 1);
    } else {
        if (r->weak == 0)
            return -1;
        r->weak--;
    }
    if (r->strong == 0 && r->weak == 0)
        ref_cleanup(r);
    return 0;
}

/* Linux's binder_inc_ref_for_node: bp's reference to n counted up; its
 * handle in *desc. */
static int inc_ref_for_node(struct bproc *bp, struct bnode *n, int strong, struct bthread *bt, uint32_t *desc)
{
    struct bref *r = ref_for_node(bp, n);
    if (!r)
        return -LX_ENOMEM;
    int made = r->strong == 0 && r->weak == 0;
    int err = inc_ref(r, strong, bt);
    *desc = r->desc;
    if (err && made)
        ref_cleanup(r);
    return err;
}

/* BC_INCREFS .. BC_DECREFS on handle desc (Linux's binder_update_ref_for_handle). */
static int update_ref(struct bproc *bp, uint32_t desc, int increment, int strong)
{
    struct bref *r = ref_of_desc(bp, desc, strong);
    if (!r)
        return -LX_EINVAL;
    if (increment)
        return inc_ref(r, strong, NULL);
    return dec_ref(r, strong) ? -LX_EINVAL : 0;
}

/* ---------------------------------------------------------------- buffers */

static uint64_t align8(uint64_t x) { return (x + 7) & ~7ull; }

/* Whether process `pid` is the one-way spammer of bp's buffer, now that
 * its one-way space is low: its one-way calls there, more than 50 or
 * more than a quarter of the buffer, told once until the space recovers
 * (Linux's debug_low_async_space_locked). */
static int spam_suspect(struct bproc *bp, int32_t pid)
{
    uint64_t total = 0, n = 0;
    for (struct bbuf *b = bp->bufs; b; b = b->next) {
        if (b->pid == pid && b->async) {
            total += b->size;
            n++;
        }
    }
    if ((n <= 50 && total <= bp->size / 4) || bp->spam_detected)
        return 0;
    bp->spam_detected = 1;
    return 1;
}

/* A buffer of `size` bytes in bp's mapping for a call of process `pid`,
 * the first place it fits: 0, -LX_ESRCH (not mapped) or -LX_ENOSPC. */
static int buf_alloc(struct bproc *bp, uint64_t size, int async, int32_t pid, struct bbuf **out)
{
    if (!bp->obj)
        return -LX_ESRCH;
    size = size < 8 ? 8 : size;
    if (size > bp->size || bp->nbufs >= BUFS_MAX)
        return -LX_ENOSPC;
    if (async && bp->free_async < size)
        return -LX_ENOSPC;
    uint64_t at = 0;
    struct bbuf **link = &bp->bufs;
    while (*link && (*link)->off - at < size) {
        at = (*link)->off + (*link)->size;
        link = &(*link)->next;
    }
    if (!*link && bp->size - at < size)
        return -LX_ENOSPC;
    struct bbuf *b = lx_alloc(sizeof(*b));
    if (!b)
        return -LX_ENOMEM;
    b->next = *link;                            /* (the rest zero: lx_alloc's) */
    b->off = at;
    b->size = size;
    b->async = (uint8_t)async;
    b->pid = pid;
    *link = b;
    bp->nbufs++;
    if (async) {
        bp->free_async -= size;
        if (bp->free_async < bp->size / 10)
            b->spam_suspect = (uint8_t)spam_suspect(bp, pid);   /* (the last tenth of the buffer) */
        else
            bp->spam_detected = 0;
    }
    *out = b;
    return 0;
}

/* What a buffer holds goes with it: its call's node count, and the counts
 * its objects were given (Linux's binder_transaction_buffer_release). */
static void buf_release(struct bproc *bp, struct bbuf *b)
{
    struct bnode *target = b->target_node;
    b->target_node = NULL;
    if (target)
        node_put(target, 1, 0);
    for (uint32_t i = 0; i < b->nobjs; i++) {
        struct bobj *o = &b->objs[i];
        if (o->type == BINDER_TYPE_BINDER || o->type == BINDER_TYPE_WEAK_BINDER) {
            node_put(o->node, o->type == BINDER_TYPE_BINDER, 0);
        } else if (o->type == BINDER_TYPE_HANDLE || o->type == BINDER_TYPE_WEAK_HANDLE) {
            struct bref *r = ref_of_desc(bp, o->handle, o->type == BINDER_TYPE_HANDLE);
            if (r)
                dec_ref(r, o->type == BINDER_TYPE_HANDLE);
        }
    }
    for (uint32_t i = 0; i < b->nfds; i++)
        if (b->fds[i].file)
            lx_file_put(b->fds[i].file);        /* (never delivered; a delivered one is the receiver's) */
    if (b->objs)
        lx_free(b->objs, b->objs_cap * sizeof(*b->objs));
    if (b->fds)
        lx_free(b->fds, b->fds_cap * sizeof(*b->fds));
    b->objs = NULL;
    b->nobjs = b->objs_cap = 0;
    b->fds = NULL;
    b->nfds = b->fds_cap = 0;
}

static void buf_free(struct bproc *bp, struct bbuf *b)
{
    buf_release(bp, b);
    for (struct bbuf **link = &bp->bufs; *link; link = &(*link)->next) {
        if (*link == b) {
            *link = b->next;
            break;
        }
    }
    if (b->async)
        bp->free_async += b->size;
    if (b->txn)
        b->txn->buf = NULL;
    bp->nbufs--;
    lx_free(b, sizeof(*b));
}

/* A one-way call's buffer was freed: the next one-way call waiting for
 * node n goes to the process's list. */
static void async_next(struct bproc *bp, struct bnode *n)
{
    struct bwork *w = dequeue(&n->async, &n->async_tail);
    if (w) {
        enqueue(&bp->todo, &bp->todo_tail, w);
        wake_proc(bp, NULL);
    } else {
        n->async_busy = 0;
    }
}

/* ---------------------------------------------------------------- transactions */

#define FREEZE_WAIT (-1)                /* LX_BLK_BINDER's `on` of a BINDER_FREEZE waiting for calls to end */

static void txn_free(struct btxn *t)
{
    if (t->counted && t->to_proc && --t->to_proc->outstanding == 0 && t->to_proc->frozen)
        lx_wake_all(LX_BLK_BINDER, FREEZE_WAIT);
    if (t->buf) {
        t->buf->txn = NULL;
        if (!t->buf->user_free && t->to_proc)
            buf_free(t->to_proc, t->buf);       /* (never handed over: nobody else frees it) */
    }
    lx_free(t, sizeof(*t));
}

/* t's sender waits no more: error_code to the first thread of the chain
 * of senders still there (Linux's binder_send_failed_reply). */
static void send_failed_reply(struct btxn *t, uint32_t error_code)
{
    while (t) {
        struct bthread *target = t->from;
        if (target) {
            if (target->stack != t)
                return;                         /* (not its top: Linux BUG_ONs; left in place here) */
            target->stack = t->from_parent;
            if (target->reply_error.cmd == BR_OK)
                set_error(target, &target->reply_error, error_code);
            txn_free(t);
            return;
        }
        struct btxn *next = t->from_parent;
        txn_free(t);
        t = next;
    }
}

/* Transaction t for process tp (thread tt if it is one of a call chain):
 * on a list, its process woken. */
static void deliver(struct btxn *t, struct bproc *tp, struct bthread *tt)
{
    t->counted = 1;
    tp->outstanding++;
    if (tt) {
        thread_work(tt, &t->w, 0);
        return;
    }
    struct bnode *n = t->buf ? t->buf->target_node : NULL;
    if ((t->flags & TF_ONE_WAY) && n) {
        if (n->async_busy) {
            enqueue(&n->async, &n->async_tail, &t->w);
            return;
        }
        n->async_busy = 1;
    }
    for (struct bthread *k = tp->threads; k; k = k->next) {
        if (waits_for_proc(k)) {
            k->waiting = 0;                     /* a thread waiting for the process's work takes it */
            thread_work(k, &t->w, 0);
            return;
        }
    }
    enqueue(&tp->todo, &tp->todo_tail, &t->w);
    wake_thread(NULL);                          /* (its pollers) */
}

/* The size of an object of `type` in a transaction's data; 0: no such type. */
static uint32_t obj_size(uint32_t type)
{
    switch (type) {
    case BINDER_TYPE_BINDER: case BINDER_TYPE_WEAK_BINDER: case BINDER_TYPE_HANDLE: case BINDER_TYPE_WEAK_HANDLE:
    case BINDER_TYPE_FD:
        return sizeof(struct flat_binder_object);
    case BINDER_TYPE_PTR:
        return sizeof(struct binder_buffer_object);
    case BINDER_TYPE_FDA:
        return sizeof(struct binder_fd_array_object);
    default:
        return 0;
    }
}

/* A descriptor of the sender's, held for the receiver, its number to go at
 * `at` in the buffer: 0, -LX_EPERM (the receiver takes none), -LX_EBADF,
 * -LX_EINVAL (too many) or -LX_ENOMEM (Linux's binder_translate_fd). */
static int fd_take(struct lx_ctx *c, struct bbuf *b, uint32_t fd, uint64_t at, int allow_fds, int in_array)
{
    if (!allow_fds)
        return -LX_EPERM;
    struct lx_file *f = lx_fd_file(c->p, fd);
    if (!f)
        return -LX_EBADF;
    if (b->nfds == b->fds_cap) {
        uint32_t cap = b->fds_cap ? 2 * b->fds_cap : 4;
        if (cap > FDS_MAX)
            return -LX_EINVAL;
        struct bfd *more = lx_alloc(cap * sizeof(*more));
        if (!more)
            return -LX_ENOMEM;
        if (b->nfds)
            memcpy(more, b->fds, b->nfds * sizeof(*more));
        if (b->fds)
            lx_free(b->fds, b->fds_cap * sizeof(*b->fds));
        b->fds = more;
        b->fds_cap = cap;
    }
    lx_file_get(f);                             /* (the receiver's descriptor is made when it reads) */
    b->fds[b->nfds++] = (struct bfd){ .file = f, .at = at, .in_array = (uint8_t)in_array };
    return 0;
}

/* Linux's binder_validate_fixup: may a fixup at `fixup_offset` of buffer
 * object `parent` (an index of the offsets) come now, after the last one
 * (in buffer object `last`, -1: none, at or past `last_min`)? Fixups go
 * into the last buffer object or one of its ancestors, in increasing
 * order. (A parent's index is below its child's, checked when the child
 * came: the walk goes down and ends.) */
static int fixup_ok(struct bbuf *b, uint64_t parent, uint64_t fixup_offset, int64_t last, uint64_t last_min)
{
    if (last < 0)
        return 0;                               /* (nothing to fix up in) */
    while ((uint64_t)last != parent) {
        const struct bobj *o = &b->objs[last];
        if (!(o->flags & BINDER_BUFFER_FLAG_HAS_PARENT))
            return 0;
        last_min = o->parent_offset + 8;
        last = (int64_t)o->parent;
    }
    return fixup_offset >= last_min;
}

/* The objects of a transaction's data (tr's offsets), as Linux's
 * binder_transaction translates them into the receiver's buffer b of
 * process tp: a node of the sender's becomes a handle of the receiver's,
 * a handle a handle of the receiver's, or the node itself when the
 * receiver owns it; a descriptor is held for the receiver; a buffer
 * object's bytes are copied into the buffer's scatter-gather part (extra
 * bytes after the offsets) and named there by their address in the
 * receiver, also in the parent buffer that points to them; an array of
 * descriptors in such a buffer is held descriptor by descriptor. Each is
 * read from the sender's memory, checked, counted and written into the
 * buffer; what it was given is kept with the buffer (b->objs, b->fds) and
 * given back with it. 0 or an errno. */
static int translate(struct lx_ctx *c, struct bthread *bt, struct bproc *tp, struct bbuf *b, const struct binder_transaction_data *tr,
                     int allow_fds, uint64_t extra)
{
    struct bproc *bp = bt->proc;
    if (tr->offsets_size % 8)
        return -LX_EINVAL;
    uint64_t n = tr->offsets_size / 8, min = 0, table = b->off + align8(tr->data_size);
    uint64_t sg = align8(tr->data_size) + align8(tr->offsets_size), sg_end = sg + extra;
    int64_t last = -1;                          /* (Linux's last_fixup_obj_off, as an index; -1: none, */
    uint64_t last_min = 0;                      /* as for one at data offset 0, which Linux takes for none) */
    if (n > tr->data_size / sizeof(struct flat_binder_object) || n > OBJS_MAX)
        return -LX_EINVAL;                      /* (objects cannot overlap: some offset is bad; a bound) */
    if (svc_mem_copy_in(c->call, tp->obj->h, table, tr->offsets, tr->offsets_size))
        return -LX_EFAULT;
    b->objs = lx_alloc(n * sizeof(*b->objs));
    if (!b->objs)
        return -LX_ENOMEM;
    b->objs_cap = (uint32_t)n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t at;
        uint32_t type;
        if (svc_mem_read(tp->obj->h, table + i * 8, &at, 8))
            return -LX_EFAULT;                  /* (the receiver's copy: what it will read) */
        if (at % 4 || at < min || at > tr->data_size || tr->data_size - at < 4)
            return -LX_EINVAL;                  /* (misplaced, overlapping, or past the data) */
        if (lx_copy_in(c, &type, tr->buffer + at, 4))
            return -LX_EFAULT;
        uint32_t size = obj_size(type);
        if (!size || tr->data_size - at < size)
            return -LX_EINVAL;                  /* (no such object, or past the data) */
        union { struct flat_binder_object f; struct binder_buffer_object p; struct binder_fd_array_object a; } u;
        if (lx_copy_in(c, &u, tr->buffer + at, size))
            return -LX_EFAULT;
        min = at + size;
        struct flat_binder_object o = u.f;
        struct bobj *kept = &b->objs[b->nobjs];
        *kept = (struct bobj){ .type = type, .at = at };
        int err = 0;
        uint32_t desc = 0;
        if (type == BINDER_TYPE_BINDER || type == BINDER_TYPE_WEAK_BINDER) {
            struct bnode *node = node_of_ptr(bp, o.binder);
            int made = !node;
            if (!node && !(node = node_new(bp, o.binder, o.cookie, o.flags)))
                return -LX_ENOMEM;
            if (o.cookie != node->cookie)
                return -LX_EINVAL;              /* (its node, named with another cookie) */
            err = inc_ref_for_node(tp, node, o.type == BINDER_TYPE_BINDER, bt, &desc);
            if (err && made && !node->refs && !node->local_strong && !node->local_weak && !node->internal_strong)
                node_free(node);                /* (made for this object alone) */
            if (err)
                return err;
            o.type = o.type == BINDER_TYPE_BINDER ? BINDER_TYPE_HANDLE : BINDER_TYPE_WEAK_HANDLE;
            o.binder = desc;
            o.cookie = 0;
            *kept = (struct bobj){ .type = o.type, .handle = desc, .at = at };
        } else if (type == BINDER_TYPE_HANDLE || type == BINDER_TYPE_WEAK_HANDLE) {
            struct bref *r = ref_of_desc(bp, (uint32_t)o.binder, o.type == BINDER_TYPE_HANDLE);
            if (!r)
                return -LX_EINVAL;              /* (a handle it does not hold) */
            struct bnode *node = r->node;
            if (node->proc == tp) {
                o.type = o.type == BINDER_TYPE_HANDLE ? BINDER_TYPE_BINDER : BINDER_TYPE_WEAK_BINDER;
                o.binder = node->ptr;
                o.cookie = node->cookie;
                inc_node(node, o.type == BINDER_TYPE_BINDER, 0, NULL);
                *kept = (struct bobj){ .type = o.type, .node = node, .at = at };
            } else {
                err = inc_ref_for_node(tp, node, o.type == BINDER_TYPE_HANDLE, NULL, &desc);
                if (err)
                    return err;
                o.binder = desc;
                o.cookie = 0;
                *kept = (struct bobj){ .type = o.type, .handle = desc, .at = at };
            }
        } else if (type == BINDER_TYPE_FD) {
            if ((err = fd_take(c, b, (uint32_t)o.binder, b->off + at + 8, allow_fds, 0)) != 0)
                return err;
            o.binder = 0;                       /* (the number is the receiver's, written when it reads) */
        } else if (type == BINDER_TYPE_PTR) {
            struct binder_buffer_object *p = &u.p;
            if (p->length > sg_end - sg)
                return -LX_EINVAL;              /* (past the scatter-gather bytes) */
            if (p->length && svc_mem_copy_in(c->call, tp->obj->h, b->off + sg, p->buffer, p->length))
                return -LX_EINVAL;              /* (Linux: the deferred copy fails, EINVAL) */
            *kept = (struct bobj){ .type = type, .at = at, .sg = sg, .length = p->length, .ubuf = p->buffer,
                                   .parent = p->parent, .parent_offset = p->parent_offset, .flags = p->flags };
            p->buffer = tp->va + b->off + sg;   /* (its address in the receiver) */
            sg += align8(p->length);
            if (p->flags & BINDER_BUFFER_FLAG_HAS_PARENT) {
                /* Linux's binder_fixup_parent: the parent an earlier buffer
                 * object, the pointer at a place the order allows, inside it. */
                struct bobj *parent = p->parent < i ? &b->objs[p->parent] : NULL;
                if (!parent || parent->type != BINDER_TYPE_PTR ||
                    !fixup_ok(b, p->parent, p->parent_offset, last, last_min) ||
                    parent->length < 8 || p->parent_offset > parent->length - 8 ||
                    (parent->sg + p->parent_offset) % 4)
                    return -LX_EINVAL;
                if (svc_mem_write(tp->obj->h, b->off + parent->sg + p->parent_offset, &p->buffer, 8))
                    return -LX_EFAULT;
            }
            last = at ? (int64_t)i : -1;
            last_min = 0;
        } else {                                /* BINDER_TYPE_FDA */
            struct binder_fd_array_object *fa = &u.a;
            struct bobj *parent = fa->parent < i ? &b->objs[fa->parent] : NULL;
            if (!parent || parent->type != BINDER_TYPE_PTR ||
                !fixup_ok(b, fa->parent, fa->parent_offset, last, last_min))
                return -LX_EINVAL;
            if (fa->num_fds) {                  /* (Linux's binder_translate_fd_array) */
                if (fa->num_fds > FDS_MAX || 4 * fa->num_fds > parent->length ||
                    fa->parent_offset > parent->length - 4 * fa->num_fds)
                    return -LX_EINVAL;
                uint64_t in_buf = parent->sg + fa->parent_offset, from = parent->ubuf + fa->parent_offset;
                if (in_buf % 4 || from % 4)
                    return -LX_EINVAL;
                for (uint64_t k = 0; k < fa->num_fds; k++) {
                    uint32_t fd;
                    if (lx_copy_in(c, &fd, from + 4 * k, 4))
                        return -LX_EINVAL;      /* (read from the sender's own memory, as Linux) */
                    if ((err = fd_take(c, b, fd, b->off + in_buf + 4 * k, allow_fds, 1)) != 0)
                        return err;
                }
            }
            last = parent->at ? (int64_t)fa->parent : -1;
            last_min = fa->parent_offset + 4 * fa->num_fds;
        }
        b->nobjs++;
        if (type == BINDER_TYPE_PTR ? svc_mem_write(tp->obj->h, b->off + at, &u.p, sizeof(u.p)) :
            type == BINDER_TYPE_FDA ? 0 : svc_mem_write(tp->obj->h, b->off + at, &o, sizeof(o)))
            return -LX_EFAULT;
    }
    return 0;
}

/* BC_TRANSACTION or BC_REPLY (extra: the scatter-gather buffers' bytes). */
static void transaction(struct lx_ctx *c, struct bthread *bt, const struct binder_transaction_data *tr, int reply, uint64_t extra)
{
    struct bproc *bp = bt->proc, *tp = NULL;
    struct bthread *tt = NULL;
    struct btxn *in_reply_to = NULL;
    struct bnode *target = NULL;
    uint32_t error = BR_FAILED_REPLY, id = ++last_txn_id;
    int32_t param = -LX_EPROTO;                 /* (the errno Linux's return_error_param would say) */
    bt->ee = (struct binder_extended_error){ id, BR_OK, 0 };
    if (reply) {
        in_reply_to = bt->stack;
        if (!in_reply_to || in_reply_to->to_thread != bt)
            goto fail_no_reply;                 /* (no call to answer: EPROTO) */
        bt->stack = in_reply_to->to_parent;
        tt = in_reply_to->from;
        if (!tt) {
            error = BR_DEAD_REPLY;              /* its sender is gone */
            param = 0;
            goto fail;
        }
        if (tt->stack != in_reply_to) {
            in_reply_to = NULL;
            goto fail_no_reply;
        }
        tp = tt->proc;
    } else {
        param = -LX_EINVAL;
        if ((uint32_t)tr->target != 0) {
            struct bref *r = ref_of_desc(bp, (uint32_t)tr->target, 1);
            if (!r)
                goto fail_no_reply;             /* (no such handle, or a weak one: EINVAL) */
            target = r->node;
        } else {
            target = bp->ctx->mgr;
        }
        tp = target ? target->proc : NULL;
        if (!tp || tp->dead) {
            error = BR_DEAD_REPLY;              /* (no context manager, or the node's owner is gone) */
            goto fail_no_reply;
        }
        if ((uint32_t)tr->target == 0 ? tp->pid == bp->pid : tp == bp)
            goto fail_no_reply;                 /* (Linux 6.1: never the context manager of its own process,
                                                 * never its own binder process) */
        if (!(tr->flags & TF_ONE_WAY) && bt->stack) {
            struct btxn *s = bt->stack;
            param = -LX_EPROTO;
            if (s->to_thread != bt)
                goto fail_no_reply;             /* (a call out of a call it did not take: EPROTO) */
            for (; s && !tt; s = s->from_parent)
                if (s->from && s->from->proc == tp)
                    tt = s->from;               /* a call back into a caller: its waiting thread takes it */
        }
    }
    param = -LX_ENOMEM;
    if (bt->queued >= WORK_MAX)
        goto fail;                              /* (its list is full) */
    struct btxn *t = lx_alloc(sizeof(*t));
    struct bwork *done = t ? lx_alloc(sizeof(*done)) : NULL;
    if (!done) {
        if (t)
            lx_free(t, sizeof(*t));
        goto fail;
    }
    t->w.type = W_TXN;                          /* (the rest zero: lx_alloc's) */
    t->to_proc = tp;
    t->code = tr->code;
    t->flags = tr->flags;
    t->reply = (uint8_t)reply;
    done->type = W_COMPLETE;
    if (!reply && !(tr->flags & TF_ONE_WAY))
        t->from = bt;
    /* (each part at most a mapping's size: the sum cannot wrap) */
    int err = tr->data_size > MAP_MAX || tr->offsets_size > MAP_MAX || extra > MAP_MAX || extra % 8 ? -LX_EINVAL : 0;
    uint64_t size = align8(tr->data_size) + align8(tr->offsets_size) + align8(extra);
    if (!err)
        err = buf_alloc(tp, size, !reply && (tr->flags & TF_ONE_WAY), c->p->pid, &t->buf);
    if (!err && tr->data_size &&
        svc_mem_copy_in(c->call, tp->obj->h, t->buf->off, tr->buffer, tr->data_size) != 0)
        err = -LX_EFAULT;
    if (!err && tr->offsets_size)
        err = translate(c, bt, tp, t->buf, tr,
                        reply ? (in_reply_to->flags & TF_ACCEPT_FDS) != 0 : target->accept_fds, extra);
    if (err) {
        if (t->buf)
            buf_free(tp, t->buf);
        lx_free(done, sizeof(*done));
        lx_free(t, sizeof(*t));
        if (err == -LX_ESRCH)
            error = BR_DEAD_REPLY;              /* (it never mapped its buffer) */
        param = err;
        goto fail;
    }
    if (!reply && tp->frozen) {
        /* (Linux's binder_proc_transaction: noted, and a call refused) */
        tp->sync_recv |= !(tr->flags & TF_ONE_WAY);
        tp->async_recv |= (tr->flags & TF_ONE_WAY) != 0;
        if (!(tr->flags & TF_ONE_WAY)) {
            buf_free(tp, t->buf);
            lx_free(done, sizeof(*done));
            lx_free(t, sizeof(*t));
            error = BR_FROZEN_REPLY;
            param = 0;
            goto fail_no_reply;
        }
    }
    t->buf->txn = t;
    done->cmd = t->buf->spam_suspect ? BR_ONEWAY_SPAM_SUSPECT : BR_TRANSACTION_COMPLETE;
    t->buf->data_size = tr->data_size;
    t->buf->offsets_size = tr->offsets_size;
    if (target) {
        target->local_strong++;                 /* (the call's hold on its node, until its buffer goes) */
        t->buf->target_node = target;
    }
    if (reply) {
        thread_work(bt, done, 0);
        tt->stack = in_reply_to->from_parent;
        in_reply_to->from = NULL;
        txn_free(in_reply_to);
        deliver(t, tp, tt);
    } else if (!(tr->flags & TF_ONE_WAY)) {
        thread_work(bt, done, 1);               /* (read with the reply) */
        t->need_reply = 1;
        t->from_parent = bt->stack;
        bt->stack = t;
        deliver(t, tp, tt);
    } else {
        thread_work(bt, done, 0);
        deliver(t, tp, NULL);
    }
    return;
fail:
    if (in_reply_to) {
        /* A reply that failed: the replier hears its completion, the
         * caller the error (Linux 6.1's order), and so does its
         * extended error, unless it holds one already. */
        if (in_reply_to->from && in_reply_to->from->ee.command == BR_OK)
            in_reply_to->from->ee = (struct binder_extended_error){ id, error, param };
        set_error(bt, &bt->return_error, BR_TRANSACTION_COMPLETE);
        send_failed_reply(in_reply_to, error);
        return;
    }
fail_no_reply:
    bt->ee = (struct binder_extended_error){ id, error, param };
    set_error(bt, &bt->return_error, error);
}

/* ---------------------------------------------------------------- threads and processes */

static struct bthread *thread_of(struct bproc *bp, int tid, int make)
{
    for (struct bthread *bt = bp->threads; bt; bt = bt->next)
        if (bt->tid == tid)
            return bt;
    if (!make)
        return NULL;
    struct bthread *bt = lx_alloc(sizeof(*bt));
    if (!bt)
        return NULL;
    *bt = (struct bthread){ .next = bp->threads, .proc = bp, .id = next_id, .tid = tid, .need_return = 1 };
    next_id = next_id == INT32_MAX ? 1 : next_id + 1;
    struct lx_thread *t = lx_thread_of_tid(tid);
    if (t)
        t->binder = 1;                          /* (its end looks for its binder threads) */
    bt->return_error = (struct bwork){ .type = W_ERROR, .cmd = BR_OK };
    bt->ee = (struct binder_extended_error){ 0, BR_OK, 0 };
    bt->reply_error = (struct bwork){ .type = W_ERROR, .cmd = BR_OK };
    bp->threads = bt;
    return bt;
}

/* What waits on a list that is going: calls answered BR_DEAD_REPLY. */
static void release_work(struct bwork **head, struct bwork **tail)
{
    struct bwork *w;
    while ((w = dequeue(head, tail)) != NULL) {
        if (w->type == W_COMPLETE) {
            lx_free(w, sizeof(*w));
        } else if (w->type == W_TXN) {
            struct btxn *t = (struct btxn *)w;
            if (!t->reply && !(t->flags & TF_ONE_WAY))
                send_failed_reply(t, BR_DEAD_REPLY);
            else
                txn_free(t);
        } else if (w->type == W_NODE) {
            struct bnode *n = (struct bnode *)w;
            n->queued = 0;                      /* (off its list: the node itself stays) */
            n->queued_on = NULL;
        } else if (w->type == W_DEAD) {
            ((struct bdeath *)w)->on = ON_NONE; /* (its reference's: freed with it) */
        } else if (w->type == W_DEAD_CLEAR || w->type == W_CLEAR) {
            lx_free(w, sizeof(struct bdeath));  /* (cleared: its own) */
        }
    }
}

/* Thread bt ends (BINDER_THREAD_EXIT, its Linux thread's end, its
 * process's): the calls it serves are answered BR_DEAD_REPLY, the ones it
 * sent lose their sender. */
static void thread_release(struct bthread *bt)
{
    struct bproc *bp = bt->proc;
    for (struct bthread **link = &bp->threads; *link; link = &(*link)->next) {
        if (*link == bt) {
            *link = bt->next;
            break;
        }
    }
    /* Linux's binder_thread_release: the call it serves, if that is the
     * top of its stack, is answered BR_DEAD_REPLY. */
    struct btxn *send_reply = bt->stack && bt->stack->to_thread == bt ? bt->stack : NULL;
    for (struct btxn *t = bt->stack; t;) {
        if (t->to_thread == bt) {
            t->to_thread = NULL;
            t = t->to_parent;
        } else if (t->from == bt) {
            t->from = NULL;
            t = t->from_parent;
        } else {
            break;
        }
    }
    if (send_reply)
        send_failed_reply(send_reply, BR_DEAD_REPLY);
    /* (its own error items are part of it: off the list first) */
    for (struct bwork **link = &bt->todo; *link;) {
        if (*link == &bt->return_error || *link == &bt->reply_error)
            *link = (*link)->next;
        else
            link = &(*link)->next;
    }
    bt->todo_tail = NULL;
    for (struct bwork *w = bt->todo; w; w = w->next)
        bt->todo_tail = w;
    release_work(&bt->todo, &bt->todo_tail);
    if (bt->finishing) {
        struct bthread *prev = NULL;
        for (struct bthread *k = finish_first; k; prev = k, k = k->finish_next) {
            if (k == bt) {
                if (prev)
                    prev->finish_next = bt->finish_next;
                else
                    finish_first = bt->finish_next;
                if (finish_last == bt)
                    finish_last = prev;
                break;
            }
        }
    }
    lx_free(bt, sizeof(*bt));
}

static void proc_release(struct bproc *bp)
{
    bp->dead = 1;
    if (bp->ctx->mgr && bp->ctx->mgr->proc == bp)
        bp->ctx->mgr = NULL;
    while (bp->threads)
        thread_release(bp->threads);
    release_work(&bp->todo, &bp->todo_tail);
    release_work(&bp->delivered, &bp->delivered_tail);
    /* Its buffers go with it (and what they hold: their calls' node
     * counts, their objects' counts); a transaction still waiting for one
     * of its nodes (one-way) loses its buffer. */
    while (bp->bufs) {
        struct bbuf *b = bp->bufs;
        if (b->txn)
            b->txn->buf = NULL;
        b->txn = NULL;
        buf_free(bp, b);
    }
    /* Its nodes: freed, or, while others hold references, left without an
     * owner (calls to them: BR_DEAD_REPLY). */
    while (bp->nodes) {
        struct bnode *n = bp->nodes;
        bp->nodes = n->next;
        bp->nnodes--;
        node_dequeue(n);
        release_work(&n->async, &n->async_tail);
        n->proc = NULL;
        n->local_strong = n->local_weak = 0;
        n->async_busy = 0;
        if (!n->refs) {
            node_free(n);
            continue;
        }
        /* Whoever asked hears BR_DEAD_BINDER. */
        for (struct bproc *k = procs; k; k = k->next)
            for (struct bref *r = k->refs; r; r = r->next)
                if (r->node == n && r->death && r->death->on == ON_NONE && r->death->work.type == W_DEAD)
                    death_queue(k, NULL, r->death);
    }
    /* Its references: the nodes' owners hear of the counts they lose. */
    while (bp->refs)
        ref_cleanup(bp->refs);
    if (bp->obj) {
        bp->obj->refs--;
        lx_mobj_unused(bp->obj);
    }
    for (struct bproc **link = &procs; *link; link = &(*link)->next) {
        if (*link == bp) {
            *link = bp->next;
            break;
        }
    }
    lx_free(bp, sizeof(*bp));
}

/* ---------------------------------------------------------------- the file */

/* Tie binder device node `node` to the context named `name`: the one of
 * that name whose node went (an rm of /dev/NAME leaves the device, as on
 * Linux: made again, the node gets it back), else a new one; 0, or
 * -LX_ENOSPC past CTX_MAX contexts. */
int64_t lx_binder_device_attach(int32_t node, const char *name)
{
    size_t len = strlen(name);
    if (len >= sizeof(ctxs[0].name))
        return -LX_EINVAL;
    for (unsigned i = 0; i < nctx; i++) {
        if (ctxs[i].node < 0 && !strcmp(ctxs[i].name, name)) {
            ctxs[i].node = node;
            return 0;
        }
    }
    if (nctx >= CTX_MAX)
        return -LX_ENOSPC;
    ctxs[nctx] = (struct bctx){ .node = node };
    memcpy(ctxs[nctx].name, name, len + 1);
    nctx++;
    return 0;
}

/* Node `node` of /dev went: its context stays, with no node. */
void lx_binder_node_gone(int32_t node)
{
    for (unsigned i = 0; i < nctx; i++)
        if (ctxs[i].node == node)
            ctxs[i].node = -1;
}

/* Make /dev/NAME a binder device of its own (binderfs's BINDER_CTL_ADD;
 * binder_linux's devices=): 0, -LX_EINVAL for a name that is not 1 to 31
 * of [a-z0-9_-], -LX_EEXIST if /dev has it, -LX_ENOSPC past CTX_MAX
 * devices. */
int64_t lx_binder_device_add(const char *name)
{
    size_t len = strlen(name);
    int ok = len > 0 && len < sizeof(ctxs[0].name);
    for (size_t i = 0; ok && i < len; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
             name[i] == '-';
    if (!ok)
        return -LX_EINVAL;
    char path[40] = "dev/";
    memcpy(path + 4, name, len + 1);
    if (lx_lookup(LX_ROOT, path, 0) >= 0)
        return -LX_EEXIST;
    int room = nctx < CTX_MAX;
    for (unsigned i = 0; i < nctx && !room; i++)
        room = ctxs[i].node < 0 && !strcmp(ctxs[i].name, name);
    if (!room)
        return -LX_ENOSPC;
    int32_t node = lx_rootfs_device(path, LX_DEV_BINDER);
    if (node < 0)
        return node == -LX_EEXIST ? node : node == -LX_ENOSPC ? -LX_ENOMEM : -LX_EINVAL;
    return lx_binder_device_attach(node, name);
}

/* The device number of binder device node `node`: misc 10, minor 124 for
 * the first and one less for each made after it, as Linux 6.1 hands out
 * dynamic misc minors (downward) to binder_linux's devices in the same
 * machine. */
uint32_t lx_binder_rdev(int32_t node)
{
    for (unsigned i = 0; i < nctx; i++)
        if (ctxs[i].node == node)
            return 0xa00 | (124 - i);
    return 0xa7c;
}

int64_t lx_binder_open(struct lx_ctx *c, int32_t node, uint32_t flags, int cloexec)
{
    struct bctx *ctx = NULL;
    for (unsigned i = 0; i < nctx && !ctx; i++)
        if (ctxs[i].node == node)
            ctx = &ctxs[i];
    if (!ctx)
        return -LX_ENXIO;                       /* (no device behind the node) */
    struct bproc *bp = lx_alloc(sizeof(*bp));
    if (!bp)
        return -LX_ENOMEM;
    *bp = (struct bproc){ .next = procs, .pid = c->p->pid, .ctx = ctx, .serial = c->p->serial };
    struct lx_file *f;
    int fd = lx_fd_open(c->p, LX_FILE_NODE, node, flags, cloexec, &f);
    if (fd < 0) {
        lx_free(bp, sizeof(*bp));
        return fd;
    }
    procs = bp;
    f->binder = bp;
    return fd;
}

void lx_binder_file_gone(struct lx_file *f)
{
    struct bproc *bp = f->binder;
    if (!bp)
        return;
    f->binder = NULL;
    proc_release(bp);
}

/* A descriptor of f was closed (any, by any process): each of its threads
 * reads at once, without waiting, at its next read (Linux's flush). */
void lx_binder_flush(struct lx_file *f)
{
    struct bproc *bp = f->binder;
    for (struct bthread *bt = bp ? bp->threads : NULL; bt; bt = bt->next) {
        bt->need_return = 1;
        wake_thread(bt);
    }
}

void lx_binder_thread_gone(struct lx_thread *t)
{
    if (!t->binder)
        return;                                 /* (it never called the driver) */
    for (struct bproc *bp = procs; bp; bp = bp->next) {
        struct bthread *bt = thread_of(bp, t->tid, 0);
        if (bt)
            thread_release(bt);
    }
}

int64_t lx_binder_mmap(struct lx_ctx *c, struct lx_file *f, uint64_t size, uint64_t prot, struct lx_mobj **obj,
                       uint64_t *len)
{
    struct bproc *bp = f->binder;
    if (!bp || bp->pid != c->p->pid || bp->serial != c->p->serial)
        return -LX_EINVAL;                      /* (only the process that opened it maps it) */
    if (prot & 2)
        return -LX_EPERM;                       /* PROT_WRITE: the buffers are the driver's to write */
    if (bp->obj)
        return -LX_EBUSY;                       /* already mapped */
    *len = size < MAP_MAX ? size : MAP_MAX;
    int err;
    svc_handle m = svc_mem_create(*len, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (!o)
        return -LX_ENOMEM;
    o->refs++;                                  /* (binder's own: the buffers' memory) */
    bp->obj = o;
    bp->size = *len;
    bp->free_async = *len / 2;
    *obj = o;
    return 0;
}

void lx_binder_mapped(struct lx_file *f, uint64_t va)
{
    struct bproc *bp = f->binder;
    if (bp && !va && bp->obj) {
        bp->obj->refs--;                        /* (its mapping failed: no buffers) */
        lx_mobj_unused(bp->obj);
        bp->obj = NULL;
    }
    if (bp)
        bp->va = va;
}

int lx_binder_poll(struct lx_file *f)
{
    struct bproc *bp = f->binder;
    if (!bp)
        return LX_POLLERR;
    if (bp->todo)
        return LX_POLLIN;
    for (struct bthread *bt = bp->threads; bt; bt = bt->next)
        if (bt->process_todo || bt->need_return)
            return LX_POLLIN;
    return 0;
}

/* ---------------------------------------------------------------- BINDER_WRITE_READ */

/* The caller's write buffer, a window of it copied in at once: len bytes
 * at `at` (of the buffer ending at `end`) into dst; 0 or -1 (a fault, or
 * past the end). A window that faults is tried again as the bytes asked
 * for alone, so a fault comes where Linux's would. */
struct window {
    uint64_t start;
    uint32_t have;
    uint8_t b[256];
};

static int window_get(struct lx_ctx *c, struct window *w, uint64_t at, uint64_t end, void *dst, uint32_t len)
{
    if (at > end || end - at < len)
        return -1;
    if (at < w->start || at - w->start + len > w->have) {
        uint64_t n = end - at < sizeof(w->b) ? end - at : sizeof(w->b);
        if (lx_copy_in(c, w->b, at, n) != 0) {
            n = len;
            if (lx_copy_in(c, w->b, at, n) != 0)
                return -1;
        }
        w->start = at;
        w->have = (uint32_t)n;
    }
    memcpy(dst, w->b + (at - w->start), len);
    return 0;
}

static int64_t thread_write(struct lx_ctx *c, struct bthread *bt, uint64_t buf, uint64_t size, uint64_t *consumed)
{
    struct bproc *bp = bt->proc;
    struct window win;
    win.start = win.have = 0;
    while (*consumed < size && bt->return_error.cmd == BR_OK) {
        uint64_t at = buf + *consumed;
        uint32_t cmd;
        if (window_get(c, &win, at, buf + size, &cmd, 4))
            return -LX_EFAULT;
        uint32_t len = BINDER_IOC_SIZE(cmd);
        union { struct binder_transaction_data tr; struct binder_transaction_data_sg sg; uint64_t ptr; uint32_t u32; uint8_t raw[72]; } arg;
        switch (cmd) {
        case BC_TRANSACTION: case BC_REPLY: case BC_TRANSACTION_SG: case BC_REPLY_SG:
        case BC_FREE_BUFFER: case BC_INCREFS: case BC_ACQUIRE: case BC_RELEASE: case BC_DECREFS:
        case BC_INCREFS_DONE: case BC_ACQUIRE_DONE: case BC_REQUEST_DEATH_NOTIFICATION:
        case BC_CLEAR_DEATH_NOTIFICATION: case BC_DEAD_BINDER_DONE:
            if (len > sizeof(arg) || window_get(c, &win, at + 4, buf + size, &arg, len))
                return -LX_EFAULT;
            break;
        case BC_REGISTER_LOOPER: case BC_ENTER_LOOPER: case BC_EXIT_LOOPER:
            break;
        default:
            return -LX_EINVAL;                  /* unknown, or BC_ACQUIRE_RESULT / BC_ATTEMPT_ACQUIRE */
        }
        *consumed += 4 + len;
        switch (cmd) {
        case BC_TRANSACTION:
        case BC_REPLY:
            transaction(c, bt, &arg.tr, cmd == BC_REPLY, 0);
            break;
        case BC_TRANSACTION_SG:
        case BC_REPLY_SG:
            transaction(c, bt, &arg.sg.tr, cmd == BC_REPLY_SG, arg.sg.buffers_size);
            break;
        case BC_FREE_BUFFER: {
            struct bbuf *b = NULL;
            for (struct bbuf *k = bp->bufs; k && !b; k = k->next)
                if (bp->va + k->off == arg.ptr)
                    b = k;
            if (!b || !b->user_free)
                break;                          /* (no match, or not handed over: ignored, as on Linux) */
            if (b->txn)
                b->txn->buf = NULL;             /* (the call it came with is still being served) */
            b->txn = NULL;
            if (b->async && b->target_node)
                async_next(bp, b->target_node);  /* (first, as Linux's binder_free_buf) */
            fd_arrays_close(c, bp, b);
            buf_free(bp, b);
            break;
        }
        case BC_REGISTER_LOOPER:
            if (bt->looper & LOOPER_ENTERED)
                bt->looper |= LOOPER_INVALID;
            else if (bp->requested == 0)
                bt->looper |= LOOPER_INVALID;
            else
                bp->requested--, bp->started++;
            bt->looper |= LOOPER_REGISTERED;
            break;
        case BC_ENTER_LOOPER:
            if (bt->looper & LOOPER_REGISTERED)
                bt->looper |= LOOPER_INVALID;
            bt->looper |= LOOPER_ENTERED;
            break;
        case BC_EXIT_LOOPER:
            bt->looper |= LOOPER_EXITED;
            break;
        case BC_INCREFS:
        case BC_ACQUIRE:
        case BC_RELEASE:
        case BC_DECREFS: {
            int strong = cmd == BC_ACQUIRE || cmd == BC_RELEASE, inc = cmd == BC_INCREFS || cmd == BC_ACQUIRE;
            int ret = -1;
            uint32_t desc;
            struct bnode *mgr = bp->ctx->mgr;
            if (inc && arg.u32 == 0 && mgr) {
                if (mgr->proc == bp) {
                    *consumed -= 4 + len;       /* (as Linux: write_consumed stays at the command) */
                    return -LX_EINVAL;          /* (the context manager's own node: not a reference) */
                }
                ret = inc_ref_for_node(bp, mgr, strong, NULL, &desc);
            }
            if (ret)
                update_ref(bp, arg.u32, inc, strong);   /* (a bad one is ignored, as on Linux) */
            break;
        }
        case BC_INCREFS_DONE:
        case BC_ACQUIRE_DONE: {
            uint64_t pc[2];
            memcpy(pc, &arg, sizeof(pc));
            struct bnode *n = node_of_ptr(bp, pc[0]);
            if (!n || n->cookie != pc[1])
                break;                          /* (no such node: ignored, as on Linux) */
            uint8_t *pending = cmd == BC_ACQUIRE_DONE ? &n->pending_strong : &n->pending_weak;
            if (!*pending)
                break;
            *pending = 0;
            node_put(n, cmd == BC_ACQUIRE_DONE, 0);
            break;
        }
        case BC_REQUEST_DEATH_NOTIFICATION:
        case BC_CLEAR_DEATH_NOTIFICATION: {
            uint32_t h;
            uint64_t cookie;
            memcpy(&h, arg.raw, 4);
            memcpy(&cookie, arg.raw + 4, 8);
            struct bref *r = ref_of_desc(bp, h, 0);
            if (!r)
                break;                          /* (no such handle: ignored, as on Linux) */
            if (cmd == BC_REQUEST_DEATH_NOTIFICATION) {
                if (r->death)
                    break;                      /* (one a reference) */
                struct bdeath *d = lx_alloc(sizeof(*d));
                if (!d)
                    return -LX_ENOMEM;
                *d = (struct bdeath){ .work.type = W_DEAD, .cookie = cookie };
                r->death = d;
                if (!r->node->proc)
                    death_queue(bp, NULL, d);   /* (dead already) */
                break;
            }
            struct bdeath *d = r->death;
            if (!d || d->cookie != cookie)
                break;
            r->death = NULL;                    /* (its work's from now on) */
            if (d->on == ON_NONE) {
                d->work.type = W_CLEAR;
                death_queue(bp, bt, d);
            } else {
                d->work.type = W_DEAD_CLEAR;    /* (told it is dead first) */
            }
            break;
        }
        case BC_DEAD_BINDER_DONE: {
            struct bdeath *d = NULL;
            for (struct bwork *w = bp->delivered; w && !d; w = w->next)
                if (((struct bdeath *)w)->cookie == arg.ptr)
                    d = (struct bdeath *)w;
            if (!d)
                break;
            death_dequeue(bp, d);
            if (d->work.type == W_DEAD_CLEAR) {
                d->work.type = W_CLEAR;
                death_queue(bp, bt, d);
            }
            break;
        }
        default:
            break;
        }
    }
    return 0;
}

/* Whether thread bt has something to read (proc: the process's work too). */
static int has_work(struct bthread *bt, int proc)
{
    return bt->process_todo || bt->need_return || (proc && bt->proc->todo);
}

/* What a read hands over, gathered here and copied out at once. */
struct outbuf {
    uint64_t at;                        /* where out[0] goes in the caller's buffer */
    uint32_t n;
    /* Not the caller's buffer (finish_parked): the memory object behind
     * the whole of it, and the offset there of address poke_va. */
    svc_handle poke;
    uint64_t poke_va, poke_len, poke_off;
    uint8_t b[256];
};

/* len bytes to the reader's buffer at `at`: 0 or -1. */
static int out_write(struct lx_ctx *c, const struct outbuf *o, uint64_t at, const void *src, uint32_t len)
{
    if (o->poke)                                /* (only inside the range found writable) */
        return at < o->poke_va || at - o->poke_va > o->poke_len || len > o->poke_len - (at - o->poke_va) ||
               svc_mem_write(o->poke, o->poke_off + (at - o->poke_va), src, len) ? -1 : 0;
    return lx_copy_out(c, at, src, len) ? -1 : 0;
}

static int out_flush(struct lx_ctx *c, struct outbuf *o)
{
    int err = o->n && out_write(c, o, o->at, o->b, o->n) ? -1 : 0;
    o->at += o->n;
    o->n = 0;
    return err;
}

static int out_put(struct lx_ctx *c, struct outbuf *o, const void *src, uint32_t len)
{
    if (o->n + len > sizeof(o->b) && out_flush(c, o))
        return -1;
    memcpy(o->b + o->n, src, len);
    o->n += len;
    return 0;
}

/* The descriptors a buffer brings, made in the reading process (close
 * on exec, as Linux's) and written into the buffer: 0, or -1 with none
 * made (all or nothing, as Linux's binder_apply_fd_fixups). */
static int fd_fixups(struct lx_ctx *c, struct bproc *bp, struct bbuf *b)
{
    uint32_t made = 0;
    for (; made < b->nfds; made++) {
        struct bfd *d = &b->fds[made];
        int fd = lx_fd_new(c->p, d->file, 1, 0);
        uint32_t v = (uint32_t)fd;
        if (fd < 0 || svc_mem_write(bp->obj->h, d->at, &v, 4)) {
            if (fd >= 0)
                lx_fd_set(c->p, (uint32_t)fd, NULL);
            break;
        }
        d->fd = fd;
    }
    if (made < b->nfds) {
        for (uint32_t i = 0; i < made; i++)
            lx_fd_set(c->p, (uint32_t)b->fds[i].fd, NULL);     /* (the buffer keeps its file) */
        return -1;
    }
    for (uint32_t i = 0; i < b->nfds; i++)
        b->fds[i].file = NULL;                  /* (the descriptor's now) */
    b->fds_made = 1;
    return 0;
}

/* BC_FREE_BUFFER of a buffer whose descriptors were made: those of its
 * arrays are closed in the freeing process, whatever descriptor has the
 * number now (Linux's binder_release_entire_buffer); single ones are the
 * process's to close. */
static void fd_arrays_close(struct lx_ctx *c, struct bproc *bp, struct bbuf *b)
{
    for (uint32_t i = 0; b->fds_made && i < b->nfds; i++) {
        uint32_t fd;
        if (b->fds[i].in_array && !svc_mem_read(bp->obj->h, b->fds[i].at, &fd, 4))
            lx_sys_close(c, fd);
    }
}

/* A node's work (Linux's BINDER_WORK_NODE): its owner hears BR_INCREFS,
 * BR_ACQUIRE, BR_RELEASE, BR_DECREFS as its counts went; a node nobody
 * counts any more is freed. 0 or -1 (a fault). */
static int node_report(struct lx_ctx *c, struct outbuf *o, struct bnode *n)
{
    n->queued = 0;
    n->queued_on = NULL;
    int strong = n->internal_strong || n->local_strong;
    int weak = n->refs || n->local_weak || strong;
    int had_strong = n->has_strong, had_weak = n->has_weak;
    uint64_t pc[2] = { n->ptr, n->cookie };
    if (weak && !had_weak) {
        n->has_weak = n->pending_weak = 1;
        n->local_weak++;
    }
    if (strong && !had_strong) {
        n->has_strong = n->pending_strong = 1;
        n->local_strong++;
    }
    if (!strong && had_strong)
        n->has_strong = 0;
    if (!weak && had_weak)
        n->has_weak = 0;
    if (!weak && !strong)
        node_free(n);
    static const uint32_t cmds[4] = { BR_INCREFS, BR_ACQUIRE, BR_RELEASE, BR_DECREFS };
    int say[4] = { weak && !had_weak, strong && !had_strong, !strong && had_strong, !weak && had_weak };
    for (int i = 0; i < 4; i++) {
        if (say[i] && (out_put(c, o, &cmds[i], 4) || out_put(c, o, pc, sizeof(pc))))
            return -1;
    }
    return 0;
}

/* Fill the read buffer [buf + *consumed, buf + size): 0, LX_BLOCK (nothing
 * to read: wait), -LX_EAGAIN, or -LX_EFAULT. */
static int64_t thread_read(struct lx_ctx *c, struct bthread *bt, uint64_t buf, uint64_t size, uint64_t *consumed,
                           int nonblock, const struct outbuf *poke)
{
    struct bproc *bp = bt->proc;
    uint64_t end = buf + size;
    struct outbuf o;
    o.at = buf + *consumed;
    o.n = 0;
    o.poke = poke ? poke->poke : 0;
    o.poke_va = poke ? poke->poke_va : 0;
    o.poke_len = poke ? poke->poke_len : 0;
    o.poke_off = poke ? poke->poke_off : 0;
    if (*consumed == 0) {
        uint32_t noop = BR_NOOP;                /* (as Linux: at once, whatever the buffer's size) */
        if (o.poke) {
            memcpy(o.b, &noop, 4);              /* (its buffer is known writable: with the rest) */
            o.n = 4;
        } else {
            if (out_write(c, &o, o.at, &noop, 4))
                return -LX_EFAULT;
            o.at += 4;
        }
    }
    int proc_work = !bt->stack && !bt->todo;   /* (Linux 6.1: a thread not a looper takes it too) */
    if (!has_work(bt, proc_work)) {
        if (out_flush(c, &o))
            return -LX_EFAULT;
        if (nonblock)
            return -LX_EAGAIN;
        bt->waiting = (uint8_t)proc_work;
        return LX_BLOCK;
    }
    bt->waiting = 0;
    for (;;) {
        struct bwork **head, **tail;
        uint64_t ptr = o.at + o.n;
        if (bt->todo) {
            head = &bt->todo, tail = &bt->todo_tail;
        } else if (bp->todo && proc_work) {
            head = &bp->todo, tail = &bp->todo_tail;
        } else {
            if (ptr - buf == 4 && !bt->need_return) {
                if (out_flush(c, &o))
                    return -LX_EFAULT;
                bt->waiting = (uint8_t)proc_work;
                return nonblock ? -LX_EAGAIN : LX_BLOCK;    /* (nothing after all: wait again) */
            }
            break;
        }
        if ((int64_t)(end - ptr) < (int64_t)sizeof(struct binder_transaction_data) + 8 + 4)
            break;                              /* (Linux's room for a binder_transaction_data_secctx) */
        struct bwork *w = dequeue(head, tail);
        if (head == &bt->todo) {
            bt->queued--;
            if (!bt->todo)
                bt->process_todo = 0;
        }
        if (w->type == W_NODE) {
            if (node_report(c, &o, (struct bnode *)w))
                return -LX_EFAULT;
            continue;
        }
        if (w->type == W_DEAD || w->type == W_DEAD_CLEAR || w->type == W_CLEAR) {
            struct bdeath *d = (struct bdeath *)w;
            uint32_t cmd = w->type == W_CLEAR ? BR_CLEAR_DEATH_NOTIFICATION_DONE : BR_DEAD_BINDER;
            uint64_t cookie = d->cookie;
            d->on = ON_NONE;
            d->on_thread = NULL;
            if (w->type == W_CLEAR) {
                lx_free(d, sizeof(*d));
            } else {
                d->on = ON_DELIVERED;           /* (until BC_DEAD_BINDER_DONE) */
                enqueue(&bp->delivered, &bp->delivered_tail, &d->work);
            }
            if (out_put(c, &o, &cmd, 4) || out_put(c, &o, &cookie, 8))
                return -LX_EFAULT;
            if (cmd == BR_DEAD_BINDER)
                break;                          /* (it may make calls: Linux ends the read here) */
            continue;
        }
        if (w->type == W_ERROR || w->type == W_COMPLETE) {
            uint32_t cmd = w->type == W_ERROR ? w->cmd :
                           w->cmd == BR_ONEWAY_SPAM_SUSPECT && bp->spam_detection ? BR_ONEWAY_SPAM_SUSPECT :
                           BR_TRANSACTION_COMPLETE;
            if (w->type == W_ERROR)
                w->cmd = BR_OK;
            else
                lx_free(w, sizeof(*w));
            if (out_put(c, &o, &cmd, 4))
                return -LX_EFAULT;
            continue;
        }
        struct btxn *t = (struct btxn *)w;
        uint32_t cmd = t->reply ? BR_REPLY : BR_TRANSACTION;
        struct binder_transaction_data tr = { .code = t->code, .flags = t->flags, .sender_euid = t->euid };
        if (t->buf && t->buf->target_node)
            tr.target = t->buf->target_node->ptr, tr.cookie = t->buf->target_node->cookie;
        tr.sender_pid = t->from ? t->from->proc->pid : 0;
        if (t->buf) {
            tr.data_size = t->buf->data_size;
            tr.offsets_size = t->buf->offsets_size;
            tr.buffer = bp->va + t->buf->off;
            tr.offsets = tr.buffer + align8(t->buf->data_size);
        }
        if (t->buf && fd_fixups(c, bp, t->buf)) {
            /* (no descriptor for the receiver: the call fails, as Linux's) */
            int was_reply = t->reply;
            if (!t->reply && !(t->flags & TF_ONE_WAY))
                send_failed_reply(t, BR_FAILED_REPLY);
            else
                txn_free(t);
            if (!was_reply)
                continue;
            uint32_t failed = BR_FAILED_REPLY;
            if (out_put(c, &o, &failed, 4))
                return -LX_EFAULT;
            break;
        }
        if (out_put(c, &o, &cmd, 4) || out_put(c, &o, &tr, sizeof(tr)) || out_flush(c, &o)) {
            if (!t->reply && !(t->flags & TF_ONE_WAY))
                send_failed_reply(t, BR_FAILED_REPLY);
            else
                txn_free(t);
            return -LX_EFAULT;
        }
        if (t->buf)
            t->buf->user_free = 1;
        if (!t->reply && !(t->flags & TF_ONE_WAY)) {
            t->to_parent = bt->stack;           /* a call: this thread serves it */
            t->to_thread = bt;
            bt->stack = t;
        } else {
            if (t->buf)
                t->buf->txn = NULL;
            t->buf = NULL;                      /* (its buffer is the process's until BC_FREE_BUFFER) */
            txn_free(t);
        }
        break;
    }
    if (out_flush(c, &o))
        return -LX_EFAULT;
    *consumed = o.at - buf;
    int others_wait = 0;
    for (struct bthread *k = bp->threads; k; k = k->next)
        others_wait |= k != bt && waits_for_proc(k);
    if (bp->requested == 0 && !others_wait && (int32_t)bp->started < bp->max_threads &&
        (bt->looper & (LOOPER_REGISTERED | LOOPER_ENTERED))) {
        uint32_t spawn = BR_SPAWN_LOOPER;       /* (in place of the first BR_NOOP) */
        bp->requested++;
        out_write(c, &o, buf, &spawn, 4);
    }
    return 0;
}

static int64_t write_read(struct lx_ctx *c, struct lx_file *f, struct bthread *bt, uint64_t arg)
{
    struct binder_write_read bwr;
    if (lx_copy_in(c, &bwr, arg, sizeof(bwr)))
        return -LX_EFAULT;
    int64_t r = 0;
    if (bwr.write_size > 0) {
        r = thread_write(c, bt, bwr.write_buffer, bwr.write_size, &bwr.write_consumed);
        if (r < 0) {
            bwr.read_consumed = 0;
            lx_copy_out(c, arg, &bwr, sizeof(bwr));
            return r;
        }
    }
    if (bwr.read_size > 0) {
        r = thread_read(c, bt, bwr.read_buffer, bwr.read_size, &bwr.read_consumed, (f->flags & O_NONBLOCK) != 0, NULL);
        if (bt->proc->todo)
            wake_proc(bt->proc, bt);
    }
    if (lx_copy_out(c, arg, &bwr, sizeof(bwr)))
        return -LX_EFAULT;
    if (r == LX_BLOCK) {
        bt->parked = 1;
        bt->park_arg = arg;
        bt->park_bwr = bwr;
        return lx_block(c, LX_BLK_BINDER, bt->id);
    }
    return r;
}

/* Thread bt, parked in a read, was given work by the call that ends now:
 * its read is done here, into its own memory, and its call answered with
 * the result, as if it had run it again. If it waits no more, or its
 * buffers are not memory it could write, it is woken to run it again. */
static void finish_parked(struct bthread *bt)
{
    struct lx_thread *t = lx_thread_of_tid(bt->tid);
    bt->parked = 0;
    struct binder_write_read bwr = bt->park_bwr;
    struct lx_proc *mem = t ? lx_memory_of(t->p) : NULL;
    struct outbuf to;                           /* (only its poke fields: the bytes are thread_read's) */
    to.poke_va = bwr.read_buffer;
    to.poke_len = bwr.read_size;
    svc_handle arg_h;
    uint64_t arg_off;
    if (!t || !t->blk.token || t->blk.kind != LX_BLK_BINDER || t->blk.on != bt->id ||
        bwr.read_consumed != 0 || bwr.read_size < 8 ||     /* (unusual reads: run again, as they came) */
        lx_vma_target(mem, bt->park_arg, sizeof(bwr), &arg_h, &arg_off) ||
        lx_vma_target(mem, bwr.read_buffer, bwr.read_size, &to.poke, &to.poke_off)) {
        lx_wake_all(LX_BLK_BINDER, bt->id);
        return;
    }
    struct lx_ctx c = { .p = t->p, .t = t, .nr = NR_ioctl };
    int64_t r = thread_read(&c, bt, bwr.read_buffer, bwr.read_size, &bwr.read_consumed, 0, &to);
    if (r == LX_BLOCK) {
        bt->parked = 1;                         /* (nothing for it after all: it waits on) */
        lx_wake_all(LX_BLK_BINDER, 0);          /* (pollers) */
        return;
    }
    if (bt->proc->todo)
        wake_proc(bt->proc, bt);
    if (svc_mem_write(arg_h, arg_off, &bwr, sizeof(bwr)))
        r = -LX_EFAULT;
    bt->need_return = 0;
    lx_wake_resume(t, r);
    lx_wake_all(LX_BLK_BINDER, 0);              /* (pollers) */
}

/* BINDER_GET_NODE_DEBUG_INFO: the first of bp's nodes with a ptr above
 * the one asked for (all zero: none). */
static int64_t node_debug_info(struct lx_ctx *c, struct bproc *bp, uint64_t arg)
{
    struct binder_node_debug_info info;
    if (lx_copy_in(c, &info, arg, sizeof(info)))
        return -LX_EFAULT;
    struct bnode *best = NULL;
    for (struct bnode *n = bp->nodes; n; n = n->next)
        if (n->ptr > info.ptr && (!best || n->ptr < best->ptr))
            best = n;
    memset(&info, 0, sizeof(info));
    if (best)
        info = (struct binder_node_debug_info){ best->ptr, best->cookie, best->has_strong, best->has_weak };
    return lx_copy_out(c, arg, &info, sizeof(info)) ? -LX_EFAULT : 0;
}

/* BINDER_GET_NODE_INFO_FOR_REF: the counts of the node a strong handle of
 * the context manager's names (only the context manager may ask). */
static int64_t node_info_for_ref(struct lx_ctx *c, struct bproc *bp, uint64_t arg)
{
    struct binder_node_info_for_ref info;
    if (lx_copy_in(c, &info, arg, sizeof(info)))
        return -LX_EFAULT;
    if (info.strong_count || info.weak_count || info.reserved1 || info.reserved2 || info.reserved3)
        return -LX_EINVAL;                      /* (only the handle may be set) */
    if (!bp->ctx->mgr || bp->ctx->mgr->proc != bp)
        return -LX_EPERM;
    struct bref *r = ref_of_desc(bp, info.handle, 1);
    if (!r)
        return -LX_EINVAL;
    info.strong_count = (uint32_t)(r->node->local_strong + r->node->internal_strong);
    info.weak_count = (uint32_t)r->node->local_weak;
    return lx_copy_out(c, arg, &info, sizeof(info)) ? -LX_EFAULT : 0;
}

static int64_t binder_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg);

/* Linux's binder_txns_pending_ilocked: calls to bp not done, or a thread
 * of it in a call (made or served). */
static int txns_pending(const struct bproc *bp)
{
    if (bp->outstanding)
        return 1;
    for (const struct bthread *k = bp->threads; k; k = k->next)
        if (k->stack)
            return 1;
    return 0;
}

/* BINDER_FREEZE: every binder process of `pid` (of any device), newest
 * first as Linux's list has them. Freezing waits up to timeout_ms for the
 * calls to it to be done (the wait runs the call again when one is: the
 * state is set at its first run only), then fails with EAGAIN, undoing
 * it, if any is left; one process failing leaves the later ones as they
 * were, as Linux never reaches them. */
static int64_t freeze(struct lx_ctx *c, uint64_t arg)
{
    struct binder_freeze_info fi;
    if (lx_copy_in(c, &fi, arg, sizeof(fi)))
        return -LX_EFAULT;
    int found = 0, first = !c->t->timed, outstanding = 0;
    for (struct bproc *bp = procs; bp; bp = bp->next) {
        if (bp->pid != (int)fi.pid || bp->dead)
            continue;
        found = 1;
        if (!fi.enable) {
            bp->frozen = bp->sync_recv = bp->async_recv = 0;
            continue;
        }
        if (first) {
            bp->was_frozen = bp->frozen, bp->was_sync = bp->sync_recv, bp->was_async = bp->async_recv;
            bp->frozen = 1;
            bp->sync_recv = bp->async_recv = 0;
        }
        outstanding |= bp->outstanding != 0;
    }
    if (!found)
        return -LX_EINVAL;
    if (!fi.enable)
        return 0;
    if (fi.timeout_ms && outstanding && !lx_deadline_passed(c, (uint64_t)fi.timeout_ms * 1000000) &&
        lx_timer_start() == 0)
        return lx_block(c, LX_BLK_BINDER, FREEZE_WAIT);
    int64_t r = 0;
    for (struct bproc *bp = procs; bp; bp = bp->next) {
        if (bp->pid != (int)fi.pid || bp->dead)
            continue;
        if (r) {
            bp->frozen = bp->was_frozen, bp->sync_recv = bp->was_sync, bp->async_recv = bp->was_async;
        } else if (txns_pending(bp)) {
            bp->frozen = 0;
            r = -LX_EAGAIN;
        }
    }
    return r;
}

/* BINDER_GET_FROZEN_INFO: over pid's binder processes, calls received
 * while frozen (bit 0) and calls not done (bit 1), one-way calls received. */
static int64_t frozen_info(struct lx_ctx *c, uint64_t arg)
{
    struct binder_frozen_status_info si;
    if (lx_copy_in(c, &si, arg, sizeof(si)))
        return -LX_EFAULT;
    int found = 0;
    si.sync_recv = si.async_recv = 0;
    for (struct bproc *bp = procs; bp; bp = bp->next) {
        if (bp->pid != (int)si.pid || bp->dead)
            continue;
        found = 1;
        si.sync_recv |= bp->sync_recv | (uint32_t)txns_pending(bp) << 1;
        si.async_recv |= bp->async_recv;
    }
    if (!found)
        return -LX_EINVAL;
    return lx_copy_out(c, arg, &si, sizeof(si)) ? -LX_EFAULT : 0;
}

/* The running ioctl's thread bt was to wait, and finishing others' reads
 * gave it work: its read again, in its own call (its write part done). */
static int64_t read_again(struct lx_ctx *c, struct lx_file *f, struct bthread *bt)
{
    struct binder_write_read bwr = bt->park_bwr;
    bt->parked = 0;
    c->t->blk.kind = LX_BLK_NONE;               /* (lx_block's, undone: it may not wait now) */
    c->t->blk.on = 0;
    int64_t r = thread_read(c, bt, bwr.read_buffer, bwr.read_size, &bwr.read_consumed, (f->flags & O_NONBLOCK) != 0,
                            NULL);
    if (bt->proc->todo)
        wake_proc(bt->proc, bt);
    if (lx_copy_out(c, bt->park_arg, &bwr, sizeof(bwr)))
        return -LX_EFAULT;
    if (r == LX_BLOCK) {
        bt->parked = 1;
        bt->park_bwr = bwr;
        return lx_block(c, LX_BLK_BINDER, bt->id);
    }
    return r;
}

int64_t lx_binder_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    /* The file is held through the call: freeing a buffer closes the
     * descriptors of its arrays, and one may be the last of this file. */
    lx_file_get(f);
    in_ioctl = 1;
    int64_t r = binder_ioctl(c, f, req, arg);
    for (;;) {
        while (finish_first) {                  /* (finishing one may give work to another) */
            struct bthread *bt = finish_first;
            finish_first = bt->finish_next;
            if (!finish_first)
                finish_last = NULL;
            bt->finishing = 0;
            finish_parked(bt);
        }
        struct bthread *me = ioctl_caller;
        if (r != LX_BLOCK || !me || !has_work(me, me->waiting))
            break;
        r = read_again(c, f, me);               /* (work came to it meanwhile: it does not wait) */
    }
    in_ioctl = 0;
    ioctl_caller = NULL;
    lx_file_put(f);
    return r;
}

static int64_t binder_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    struct bproc *bp = f->binder;
    if (!bp)
        return -LX_EINVAL;
    struct bthread *bt = thread_of(bp, c->t->tid, 1);
    if (!bt)
        return -LX_ENOMEM;
    bt->parked = 0;                             /* (it runs: whatever it waited in is over) */
    ioctl_caller = bt;
    int64_t r;
    switch ((uint32_t)req) {
    case BINDER_WRITE_READ:
        r = write_read(c, f, bt, arg);
        break;
    case BINDER_GET_NODE_DEBUG_INFO:
        r = node_debug_info(c, bp, arg);
        break;
    case BINDER_GET_NODE_INFO_FOR_REF:
        r = node_info_for_ref(c, bp, arg);
        break;
    case BINDER_GET_EXTENDED_ERROR: {
        struct binder_extended_error ee = bt->ee;
        bt->ee = (struct binder_extended_error){ 0, BR_OK, 0 };   /* (cleared even if the copy faults, as Linux) */
        r = lx_copy_out(c, arg, &ee, sizeof(ee)) ? -LX_EFAULT : 0;
        break;
    }
    case BINDER_SET_MAX_THREADS: {
        int32_t n;
        r = lx_copy_in(c, &n, arg, 4) ? -LX_EINVAL : 0;     /* (Linux: EINVAL for a bad pointer) */
        if (!r)
            bp->max_threads = n;
        break;
    }
    case BINDER_SET_CONTEXT_MGR:
    case BINDER_SET_CONTEXT_MGR_EXT: {
        uint8_t obj[24];
        memset(obj, 0, sizeof(obj));
        r = (uint32_t)req == BINDER_SET_CONTEXT_MGR_EXT && lx_copy_in(c, obj, arg, sizeof(obj)) ? -LX_EINVAL :
            bp->ctx->mgr ? -LX_EBUSY : 0;
        if (!r) {
            uint64_t ptr, cookie;               /* (a flat_binder_object's binder and cookie; else 0) */
            memcpy(&ptr, obj + 8, 8);
            memcpy(&cookie, obj + 16, 8);
            uint32_t flags;
            memcpy(&flags, obj + 4, 4);
            struct bnode *n = node_of_ptr(bp, ptr);
            if (!n && !(n = node_new(bp, ptr, cookie, flags)))
                r = -LX_ENOMEM;
            if (n) {
                n->local_weak++;
                n->local_strong++;
                n->has_strong = n->has_weak = 1;
                bp->ctx->mgr = n;
            }
        }
        break;
    }
    case BINDER_THREAD_EXIT:
        thread_release(bt);
        return 0;
    case BINDER_VERSION: {
        int32_t v = BINDER_PROTOCOL_VERSION;
        r = lx_copy_out(c, arg, &v, 4) ? -LX_EINVAL : 0;
        break;
    }
    case BINDER_ENABLE_ONEWAY_SPAM_DETECTION: {
        uint32_t on;                            /* (its one-way calls' completions may say BR_ONEWAY_SPAM_SUSPECT) */
        r = lx_copy_in(c, &on, arg, 4) ? -LX_EFAULT : 0;
        if (!r)
            bp->spam_detection = on != 0;
        break;
    }
    case BINDER_FREEZE:
        r = freeze(c, arg);
        break;
    case BINDER_GET_FROZEN_INFO:
        r = frozen_info(c, arg);
        break;
    case BINDER_SET_IDLE_TIMEOUT:
    case BINDER_SET_IDLE_PRIORITY:
        r = -LX_EINVAL;                         /* (Linux 6.1 has neither) */
        break;
    default:
        r = -LX_EINVAL;
        break;
    }
    if (r != LX_BLOCK)
        bt->need_return = 0;
    return r;
}
