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
 * number) and runs its call again when woken: the write part is marked
 * consumed in the caller's binder_write_read before it waits, so it is
 * never done twice.
 *
 * The personality serves one call at a time in either placement, so none
 * of this takes a lock. docs/design/android.md describes the mapping.
 *
 * Not here yet: objects in transactions (nodes, handles, file
 * descriptors, scatter-gather buffers: a transaction with offsets is
 * refused, BR_FAILED_REPLY), reference counts and death notifications
 * (their commands are read and ignored, as Linux ignores those naming no
 * reference), BINDER_GET_NODE_DEBUG_INFO, extra devices.
 */

#include "lx.h"
#include "svc_proc.h"

/* ---------------------------------------------------------------- the UAPI */

#define IOC(dir, type, nr, size) ((uint32_t)(dir) << 30 | (uint32_t)(size) << 16 | (uint32_t)(type) << 8 | (uint32_t)(nr))
#define IOC_SIZE(cmd)   (((cmd) >> 16) & 0x3fff)

struct bwr { uint64_t write_size, write_consumed, write_buffer, read_size, read_consumed, read_buffer; };
struct btd {                            /* struct binder_transaction_data */
    uint64_t target, cookie;
    uint32_t code, flags;
    int32_t sender_pid;
    uint32_t sender_euid;
    uint64_t data_size, offsets_size, buffer, offsets;
};
struct btd_sg { struct btd tr; uint64_t buffers_size; };

#define BINDER_WRITE_READ           IOC(3, 'b', 1, sizeof(struct bwr))
#define BINDER_SET_IDLE_TIMEOUT     IOC(1, 'b', 3, 8)
#define BINDER_SET_MAX_THREADS      IOC(1, 'b', 5, 4)
#define BINDER_SET_IDLE_PRIORITY    IOC(1, 'b', 6, 4)
#define BINDER_SET_CONTEXT_MGR      IOC(1, 'b', 7, 4)
#define BINDER_THREAD_EXIT          IOC(1, 'b', 8, 4)
#define BINDER_VERSION              IOC(3, 'b', 9, 4)
#define BINDER_SET_CONTEXT_MGR_EXT  IOC(1, 'b', 13, 24)
#define BINDER_ENABLE_ONEWAY_SPAM_DETECTION IOC(1, 'b', 16, 4)
#define BINDER_PROTOCOL_VERSION     8

#define BC_TRANSACTION              IOC(1, 'c', 0, sizeof(struct btd))
#define BC_REPLY                    IOC(1, 'c', 1, sizeof(struct btd))
#define BC_ACQUIRE_RESULT           IOC(1, 'c', 2, 4)
#define BC_FREE_BUFFER              IOC(1, 'c', 3, 8)
#define BC_INCREFS                  IOC(1, 'c', 4, 4)
#define BC_ACQUIRE                  IOC(1, 'c', 5, 4)
#define BC_RELEASE                  IOC(1, 'c', 6, 4)
#define BC_DECREFS                  IOC(1, 'c', 7, 4)
#define BC_INCREFS_DONE             IOC(1, 'c', 8, 16)
#define BC_ACQUIRE_DONE             IOC(1, 'c', 9, 16)
#define BC_ATTEMPT_ACQUIRE          IOC(1, 'c', 10, 8)
#define BC_REGISTER_LOOPER          IOC(0, 'c', 11, 0)
#define BC_ENTER_LOOPER             IOC(0, 'c', 12, 0)
#define BC_EXIT_LOOPER              IOC(0, 'c', 13, 0)
#define BC_REQUEST_DEATH_NOTIFICATION IOC(1, 'c', 14, 12)
#define BC_CLEAR_DEATH_NOTIFICATION IOC(1, 'c', 15, 12)
#define BC_DEAD_BINDER_DONE         IOC(1, 'c', 16, 8)
#define BC_TRANSACTION_SG           IOC(1, 'c', 17, sizeof(struct btd_sg))
#define BC_REPLY_SG                 IOC(1, 'c', 18, sizeof(struct btd_sg))

#define BR_OK                       IOC(0, 'r', 1, 0)
#define BR_TRANSACTION              IOC(2, 'r', 2, sizeof(struct btd))
#define BR_REPLY                    IOC(2, 'r', 3, sizeof(struct btd))
#define BR_DEAD_REPLY               IOC(0, 'r', 5, 0)
#define BR_TRANSACTION_COMPLETE     IOC(0, 'r', 6, 0)
#define BR_NOOP                     IOC(0, 'r', 12, 0)
#define BR_SPAWN_LOOPER             IOC(0, 'r', 13, 0)
#define BR_FAILED_REPLY             IOC(0, 'r', 17, 0)

#define TF_ONE_WAY                  0x01

enum { LOOPER_REGISTERED = 1, LOOPER_ENTERED = 2, LOOPER_EXITED = 4, LOOPER_INVALID = 8 };

#define MAP_MAX         (4u << 20)      /* bytes of a process's buffer mapping at most (Linux's SZ_4M) */
#define BUF_OVERHEAD    64u             /* what one-way space a buffer costs beyond its bytes */
#define BUFS_MAX        4096u           /* buffers a process holds at most (ENOSPC past it) */
#define WORK_MAX        4096u           /* items waiting on one thread at most (ENOMEM past it) */

/* ---------------------------------------------------------------- structures */

enum { W_TXN, W_COMPLETE, W_ERROR };
struct bwork {
    struct bwork *next;
    uint8_t type;
    uint32_t cmd;                       /* W_ERROR: what it says (BR_OK: nothing now) */
};

struct bproc;
struct bthread;

/* A buffer of a process's mapping: [off, off + size). */
struct bbuf {
    struct bbuf *next;                  /* the process's, by offset */
    uint64_t off, size, data_size, offsets_size;
    struct btxn *txn;                   /* the transaction it carries, while that lives */
    uint8_t user_free;                  /* handed to the process: BC_FREE_BUFFER frees it */
    uint8_t async;                      /* a one-way call's (its space is the one-way half's) */
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
};

struct bproc {
    struct bproc *next;                 /* every open binder process */
    int pid;                            /* the process that opened it */
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
    uint8_t async_busy;                 /* its node has a one-way call out: the next ones wait (async) */
    struct bwork *async, *async_tail;
};

static struct bproc *procs;
static struct bproc *context_mgr;       /* the process of handle 0's node (the context manager) */
static uint64_t context_ptr, context_cookie;    /* its node's (BINDER_SET_CONTEXT_MGR_EXT's; else 0) */
static int32_t next_id = 1;            /* (0 is the pollers': LX_BLK_BINDER's wake of no thread) */

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

/* Wake thread bt if it waits in a read (and every poll: lx_wake_all). */
static void wake_thread(struct bthread *bt)
{
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

/* ---------------------------------------------------------------- buffers */

static uint64_t align8(uint64_t x) { return (x + 7) & ~7ull; }

/* A buffer of `size` bytes in bp's mapping, the first place it fits: 0,
 * -LX_ESRCH (not mapped) or -LX_ENOSPC. */
static int buf_alloc(struct bproc *bp, uint64_t size, int async, struct bbuf **out)
{
    if (!bp->obj)
        return -LX_ESRCH;
    size = size < 8 ? 8 : size;
    if (size > bp->size || bp->nbufs >= BUFS_MAX)
        return -LX_ENOSPC;
    if (async && bp->free_async < size + BUF_OVERHEAD)
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
    *b = (struct bbuf){ .next = *link, .off = at, .size = size, .async = (uint8_t)async };
    *link = b;
    bp->nbufs++;
    if (async)
        bp->free_async -= size + BUF_OVERHEAD;
    *out = b;
    return 0;
}

static void buf_free(struct bproc *bp, struct bbuf *b)
{
    for (struct bbuf **link = &bp->bufs; *link; link = &(*link)->next) {
        if (*link == b) {
            *link = b->next;
            break;
        }
    }
    if (b->async)
        bp->free_async += b->size + BUF_OVERHEAD;
    if (b->txn)
        b->txn->buf = NULL;
    bp->nbufs--;
    lx_free(b, sizeof(*b));
}

/* A one-way call's buffer was freed: the next one-way call waiting for
 * the node goes to the process's list. */
static void async_next(struct bproc *bp)
{
    struct bwork *w = dequeue(&bp->async, &bp->async_tail);
    if (w) {
        enqueue(&bp->todo, &bp->todo_tail, w);
        wake_proc(bp, NULL);
    } else {
        bp->async_busy = 0;
    }
}

/* ---------------------------------------------------------------- transactions */

static void txn_free(struct btxn *t)
{
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
    if (tt) {
        thread_work(tt, &t->w, 0);
        return;
    }
    if (t->flags & TF_ONE_WAY) {
        if (tp->async_busy) {
            enqueue(&tp->async, &tp->async_tail, &t->w);
            return;
        }
        tp->async_busy = 1;
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

/* BC_TRANSACTION or BC_REPLY (extra: the scatter-gather buffers' bytes). */
static void transaction(struct lx_ctx *c, struct bthread *bt, const struct btd *tr, int reply, uint64_t extra)
{
    struct bproc *bp = bt->proc, *tp = NULL;
    struct bthread *tt = NULL;
    struct btxn *in_reply_to = NULL;
    uint32_t error = BR_FAILED_REPLY;
    if (reply) {
        in_reply_to = bt->stack;
        if (!in_reply_to || in_reply_to->to_thread != bt)
            goto fail_no_reply;                 /* (no call to answer: EPROTO) */
        bt->stack = in_reply_to->to_parent;
        tt = in_reply_to->from;
        if (!tt) {
            error = BR_DEAD_REPLY;              /* its sender is gone */
            goto fail;
        }
        if (tt->stack != in_reply_to) {
            in_reply_to = NULL;
            goto fail_no_reply;
        }
        tp = tt->proc;
    } else {
        if ((uint32_t)tr->target != 0)
            goto fail_no_reply;                 /* (no handle but the context manager's yet: EINVAL) */
        tp = context_mgr;
        if (!tp || tp->dead) {
            error = BR_DEAD_REPLY;
            goto fail_no_reply;
        }
        if (tp->pid == bp->pid)
            goto fail_no_reply;                 /* (Linux 6.1: a process never calls itself) */
        if (!(tr->flags & TF_ONE_WAY) && bt->stack) {
            struct btxn *s = bt->stack;
            if (s->to_thread != bt)
                goto fail_no_reply;             /* (a call out of a call it did not take: EPROTO) */
            for (; s && !tt; s = s->from_parent)
                if (s->from && s->from->proc == tp)
                    tt = s->from;               /* a call back into a caller: its waiting thread takes it */
        }
    }
    if (bt->queued >= WORK_MAX)
        goto fail;                              /* (its list is full) */
    struct btxn *t = lx_alloc(sizeof(*t));
    struct bwork *done = t ? lx_alloc(sizeof(*done)) : NULL;
    if (!done) {
        if (t)
            lx_free(t, sizeof(*t));
        goto fail;
    }
    *t = (struct btxn){ .w.type = W_TXN, .to_proc = tp, .code = tr->code, .flags = tr->flags, .euid = 0,
                        .reply = (uint8_t)reply };
    *done = (struct bwork){ .type = W_COMPLETE };
    if (!reply && !(tr->flags & TF_ONE_WAY))
        t->from = bt;
    uint64_t size = align8(tr->data_size) + align8(tr->offsets_size) + align8(extra);
    int err = size < tr->data_size ? -LX_EINVAL :
              buf_alloc(tp, size, !reply && (tr->flags & TF_ONE_WAY), &t->buf);
    if (!err && tr->data_size &&
        svc_mem_copy_in(c->call, tp->obj->h, t->buf->off, tr->buffer, tr->data_size) != 0)
        err = -LX_EFAULT;
    if (!err && tr->offsets_size)
        err = -LX_EINVAL;                       /* (objects are not passed yet) */
    if (err) {
        if (t->buf)
            buf_free(tp, t->buf);
        lx_free(done, sizeof(*done));
        lx_free(t, sizeof(*t));
        if (err == -LX_ESRCH)
            error = BR_DEAD_REPLY;              /* (it never mapped its buffer) */
        goto fail;
    }
    t->buf->txn = t;
    t->buf->data_size = tr->data_size;
    t->buf->offsets_size = tr->offsets_size;
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
         * caller the error (Linux 6.1's order). */
        set_error(bt, &bt->return_error, BR_TRANSACTION_COMPLETE);
        send_failed_reply(in_reply_to, error);
        return;
    }
fail_no_reply:
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
    lx_free(bt, sizeof(*bt));
}

static void proc_release(struct bproc *bp)
{
    bp->dead = 1;
    if (context_mgr == bp)
        context_mgr = NULL;
    while (bp->threads)
        thread_release(bp->threads);
    release_work(&bp->todo, &bp->todo_tail);
    release_work(&bp->async, &bp->async_tail);
    /* Transactions still on other lists that carry a buffer of this one
     * (replies and one-way calls it sent do not: theirs are the
     * receivers'); its own buffers go with it. */
    while (bp->bufs) {
        struct bbuf *b = bp->bufs;
        if (b->txn)
            b->txn->buf = NULL;
        b->txn = NULL;
        buf_free(bp, b);
    }
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

int64_t lx_binder_open(struct lx_ctx *c, int32_t node, uint32_t flags, int cloexec)
{
    struct bproc *bp = lx_alloc(sizeof(*bp));
    if (!bp)
        return -LX_ENOMEM;
    *bp = (struct bproc){ .next = procs, .pid = c->p->pid, .serial = c->p->serial };
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
        uint32_t len = IOC_SIZE(cmd);
        union { struct btd tr; struct btd_sg sg; uint64_t ptr; uint32_t u32; uint8_t raw[72]; } arg;
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
            int async = b->async;
            buf_free(bp, b);
            if (async)
                async_next(bp);
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
        default:
            break;                              /* references and death notifications: none to name yet */
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
    uint8_t b[256];
};

static int out_flush(struct lx_ctx *c, struct outbuf *o)
{
    int err = o->n && lx_copy_out(c, o->at, o->b, o->n) ? -1 : 0;
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

/* Fill the read buffer [buf + *consumed, buf + size): 0, LX_BLOCK (nothing
 * to read: wait), -LX_EAGAIN, or -LX_EFAULT. */
static int64_t thread_read(struct lx_ctx *c, struct bthread *bt, uint64_t buf, uint64_t size, uint64_t *consumed,
                           int nonblock)
{
    struct bproc *bp = bt->proc;
    uint64_t end = buf + size;
    struct outbuf o;
    o.at = buf + *consumed;
    o.n = 0;
    if (*consumed == 0) {
        uint32_t noop = BR_NOOP;                /* (as Linux: at once, whatever the buffer's size) */
        if (lx_copy_out(c, o.at, &noop, 4))
            return -LX_EFAULT;
        o.at += 4;
    }
    int proc_work = !bt->stack && !bt->todo && (bt->looper & (LOOPER_REGISTERED | LOOPER_ENTERED));
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
        if ((int64_t)(end - ptr) < (int64_t)sizeof(struct btd) + 8 + 4)
            break;                              /* (Linux's room for a binder_transaction_data_secctx) */
        struct bwork *w = dequeue(head, tail);
        if (head == &bt->todo) {
            bt->queued--;
            if (!bt->todo)
                bt->process_todo = 0;
        }
        if (w->type == W_ERROR || w->type == W_COMPLETE) {
            uint32_t cmd = w->type == W_ERROR ? w->cmd : BR_TRANSACTION_COMPLETE;
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
        struct btd tr = { .code = t->code, .flags = t->flags, .sender_euid = t->euid };
        if (!t->reply)
            tr.target = context_ptr, tr.cookie = context_cookie;   /* (its node: the only one yet) */
        tr.sender_pid = t->from ? t->from->proc->pid : 0;
        if (t->buf) {
            tr.data_size = t->buf->data_size;
            tr.offsets_size = t->buf->offsets_size;
            tr.buffer = bp->va + t->buf->off;
            tr.offsets = tr.buffer + align8(t->buf->data_size);
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
        lx_copy_out(c, buf, &spawn, 4);
    }
    return 0;
}

static int64_t write_read(struct lx_ctx *c, struct lx_file *f, struct bthread *bt, uint64_t arg)
{
    struct bwr bwr;
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
        r = thread_read(c, bt, bwr.read_buffer, bwr.read_size, &bwr.read_consumed, (f->flags & O_NONBLOCK) != 0);
        if (bt->proc->todo)
            wake_proc(bt->proc, bt);
    }
    if (lx_copy_out(c, arg, &bwr, sizeof(bwr)))
        return -LX_EFAULT;
    if (r == LX_BLOCK)
        return lx_block(c, LX_BLK_BINDER, bt->id);
    return r;
}

int64_t lx_binder_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    struct bproc *bp = f->binder;
    if (!bp)
        return -LX_EINVAL;
    struct bthread *bt = thread_of(bp, c->t->tid, 1);
    if (!bt)
        return -LX_ENOMEM;
    int64_t r;
    switch ((uint32_t)req) {
    case BINDER_WRITE_READ:
        r = write_read(c, f, bt, arg);
        break;
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
        r = (uint32_t)req == BINDER_SET_CONTEXT_MGR_EXT && lx_copy_in(c, obj, arg, sizeof(obj)) ? -LX_EINVAL :
            context_mgr ? -LX_EBUSY : 0;
        if (!r) {
            context_mgr = bp;
            context_ptr = context_cookie = 0;
            if ((uint32_t)req == BINDER_SET_CONTEXT_MGR_EXT) {
                memcpy(&context_ptr, obj + 8, 8);       /* (a flat_binder_object: binder, cookie) */
                memcpy(&context_cookie, obj + 16, 8);
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
        uint32_t on;                            /* (taken; no call is ever suspected of spam here) */
        r = lx_copy_in(c, &on, arg, 4) ? -LX_EFAULT : 0;
        break;
    }
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
