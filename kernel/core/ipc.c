/*
 * Synchronous IPC on endpoints: the general path.
 *
 * A message is a word (length, handle count, label; see petrel_abi.h),
 * MR0..MR5 in x2..x7 and MR6..MR31 in the UTCB, plus up to three
 * handles. Whoever arrives second at an endpoint completes the
 * transfer: a receiver finding a queued sender copies from the sender's
 * saved registers and UTCB; a sender finding a queued receiver copies
 * into the receiver's. The kernel writes the sender's badge (from the
 * handle it sent through) and its process id into x8 and x9, so neither
 * can be forged.
 *
 * A call leaves the caller in T_REPLY and gives the receiver the one
 * capability to answer it (thread->reply, or a reply handle after
 * reply_save). Using it clears it: a caller gets exactly one reply. If
 * the holder dies or drops it, the caller wakes with E_CLOSED.
 *
 * Faults travel the same way: the faulting thread "calls" its fault
 * handler endpoint with a message built by the kernel (label
 * LABEL_FAULT), and the reply decides how it resumes.
 *
 * ipc_fast.c serves the common call and reply-and-receive without this
 * file; everything it declines lands here with identical results.
 */
#include "ipc.h"
#include "trace.h"
#include "ksvc.h"
#include "thread.h"
#include "space.h"
#include "sched.h"
#include "kmalloc.h"
#include "syscalls_gen.h"
#include <arch/trapframe.h>

/* ---------------------------------------------------------------- endpoints */

int64_t sys_endpoint_create(void)
{
    int err;
    struct endpoint *ep = obj_alloc(sizeof(*ep), OBJ_ENDPOINT, current_thread()->space, &err);
    if (!ep)
        return err;
    list_init(&ep->senders);
    list_init(&ep->receivers);
    list_init(&ep->watches);
    int64_t h = handle_alloc(current_thread()->space, &ep->obj, R_ALL, 0);
    obj_unref(&ep->obj);
    return h;
}

/*
 * Death of an endpoint. A server's objects are handles of its endpoints
 * (badged, without R_READ); when the last handle that can receive on one
 * goes (its process died, or closed it), nobody can ever answer there:
 * the endpoint is dead. Queued callers wake with E_CLOSED, later calls
 * and sends fail with it, and each watch (endpoint_watch) signals its
 * notification once: Binder's death notification, on Petrel's handles.
 * An endpoint a kernel-placed service answers never dies.
 */
struct ep_watch {
    struct list ep_link;            /* in endpoint->watches */
    struct list space_link;         /* in the watcher's space->ep_watches */
    struct endpoint *ep;            /* (a reference) */
    struct notification *note;      /* (a reference) */
    struct space *payer;            /* the watcher: charged for the record */
    uint64_t badge;                 /* of the handle it watches through (which object of the server) */
    uint64_t bits;
};

static void watch_free(struct ep_watch *w)
{
    list_del(&w->ep_link);
    list_del(&w->space_link);
    space_uncharge(w->payer, LIMIT_MEMORY, kmalloc_size(sizeof(*w)));
    obj_unref(&w->note->obj);
    obj_unref(&w->ep->obj);
    kfree(w, sizeof(*w));
}

static void endpoint_die(struct endpoint *ep)
{
    if (ep->dead || ep->ksvc)
        return;
    ep->dead = true;
    obj_ref(&ep->obj);
    while (!list_empty(&ep->senders))
        thread_wake(list_first(&ep->senders, struct thread, link), -E_CLOSED);
    while (!list_empty(&ep->receivers))
        thread_wake(list_first(&ep->receivers, struct thread, link), -E_CLOSED);
    while (!list_empty(&ep->watches)) {
        struct ep_watch *w = list_first(&ep->watches, struct ep_watch, ep_link);
        notify_raise(w->note, w->bits);
        watch_free(w);
    }
    obj_unref(&ep->obj);
}

void endpoint_readers(struct object *o, int delta)
{
    struct endpoint *ep = list_entry(o, struct endpoint, obj);
    ep->readers = (uint32_t)((int)ep->readers + delta);
    if (ep->readers == 0)
        endpoint_die(ep);
}

/* The last handle is gone: nobody can meet the waiters any more. */
void endpoint_shutdown(struct object *o)
{
    struct endpoint *ep = list_entry(o, struct endpoint, obj);
    obj_ref(o);
    endpoint_die(ep);
    while (!list_empty(&ep->senders))
        thread_wake(list_first(&ep->senders, struct thread, link), -E_CLOSED);
    while (!list_empty(&ep->receivers))
        thread_wake(list_first(&ep->receivers, struct thread, link), -E_CLOSED);
    obj_unref(o);
}

void endpoint_free(struct object *o)
{
    kfree(list_entry(o, struct endpoint, obj), sizeof(struct endpoint));
}

void endpoint_watches_gone(struct space *s)
{
    while (!list_empty(&s->ep_watches))
        watch_free(list_first(&s->ep_watches, struct ep_watch, space_link));
}

int64_t sys_endpoint_watch(uint32_t h, uint32_t note_h, uint64_t bits)
{
    struct space *s = current_thread()->space;
    struct handle_slot *sl, *nsl;
    int err = handle_get(s, h, OBJ_ENDPOINT, R_WRITE, &sl);
    if (err || (err = handle_get(s, note_h, OBJ_NOTIFICATION, R_WRITE, &nsl)) != 0)
        return err;
    if (bits >> 63)
        return -E_INVAL;                /* (the bits a notification carries: notify_signal's) */
    struct endpoint *ep = list_entry(sl->obj, struct endpoint, obj);
    struct notification *n = list_entry(nsl->obj, struct notification, obj);
    if (n->kwake)
        return -E_PERM;                 /* a kernel-placed service's wakeup: signalled by its own means only */
    /* (The caller's own watches, not the endpoint's: another process's many
     * cannot make this long.) */
    list_for_each(pos, &s->ep_watches) {
        struct ep_watch *w = list_entry(pos, struct ep_watch, space_link);
        if (w->ep == ep && w->note == n && w->badge == sl->badge) {
            if (bits)
                w->bits = bits;         /* the same watch: new bits */
            else
                watch_free(w);
            return 0;
        }
    }
    if (!bits)
        return -E_NOENT;
    if (ep->dead) {
        notify_raise(n, bits);          /* dead already: at once, as Binder does */
        return 0;
    }
    if (ep->ksvc)
        return 0;                       /* a kernel service never dies: nothing to keep */
    if ((err = space_charge(s, LIMIT_MEMORY, kmalloc_size(sizeof(struct ep_watch)))) != 0)
        return err;
    struct ep_watch *w = kmalloc(sizeof(*w));
    if (!w) {
        space_uncharge(s, LIMIT_MEMORY, kmalloc_size(sizeof(*w)));
        return -E_NOMEM;
    }
    w->ep = ep;
    w->note = n;
    w->payer = s;
    w->badge = sl->badge;
    w->bits = bits;
    obj_ref(&ep->obj);
    obj_ref(&n->obj);
    list_add_tail(&ep->watches, &w->ep_link);
    list_add_tail(&s->ep_watches, &w->space_link);
    return 0;
}

/* Queue t on ep; the queue holds a reference to ep. */
static void enqueue(struct thread *t, struct endpoint *ep, struct list *q, unsigned state)
{
    t->state = (uint8_t)state;
    t->waiting_on = ep;
    obj_ref(&ep->obj);
    list_add_tail(q, &t->link);
}

void ipc_cancel(struct thread *t)
{
    if (!t->waiting_on)
        return;
    list_del(&t->link);
    struct endpoint *ep = t->waiting_on;
    t->waiting_on = NULL;
    obj_unref(&ep->obj);
}

/* ---------------------------------------------------------------- messages */

/* Check a message word and the handles it names; 0 or an error. */
static int check_message(struct thread *t, uint64_t info)
{
    if (MSG_LEN(info) > MSG_MAX_MRS || (MSG_LABEL(info) & LABEL_KERNEL) || (info & 0xfe00))
        return -E_INVAL;
    for (unsigned i = 0; i < MSG_HANDLES(info); i++) {
        struct handle_slot *sl;
        int err = handle_get(t->space, t->utcb->send_handles[i], OBJ_NONE, R_GRANT, &sl);
        if (err)
            return err == -E_BADHANDLE ? -E_INVAL : err;
        if (sl->obj->type == OBJ_REPLY)
            return -E_INVAL;        /* a reply capability stays with its process */
    }
    return 0;
}

void ipc_copy_utcb(const struct thread *from, struct thread *to, unsigned len)
{
    for (unsigned i = MSG_REG_MRS; i < len; i++)
        to->utcb->mr[i] = from->utcb->mr[i];
}

/* Copy a message from src (registers, UTCB, handles) into dst's frame. */
static void transfer(struct thread *src, struct thread *dst, uint64_t info, uint64_t badge)
{
    unsigned len = MSG_LEN(info), nh = MSG_HANDLES(info), got = 0;
    if (src->send_is_fault) {
        for (unsigned i = 0; i < MSG_REG_MRS; i++)
            dst->tf.x[2 + i] = src->fault_msg[i];
        for (unsigned i = MSG_REG_MRS; i < len; i++)
            dst->utcb->mr[i] = src->fault_msg[i];
    } else {
        /* the message's registers only: past its length dst keeps its own (fast_copy) */
        for (unsigned i = 0; i < MSG_REG_MRS && i < len; i++)
            dst->tf.x[2 + i] = src->tf.x[2 + i];
        ipc_copy_utcb(src, dst, len);
    }
    for (unsigned i = 0; i < nh; i++) {
        struct handle_slot *sl;
        uint32_t value = 0;
        /* Looked up again: the sender's UTCB may have changed since the send. */
        if (handle_get(src->space, src->utcb->send_handles[i], OBJ_NONE, R_GRANT, &sl) == 0 &&
            sl->obj->type != OBJ_REPLY) {
            int64_t h = handle_alloc(dst->space, sl->obj, sl->rights & src->utcb->send_rights[i], sl->badge);
            if (h > 0) {
                value = (uint32_t)h;
                got++;
            }
        }
        dst->utcb->recv_handles[got ? got - 1 : 0] = value;
    }
    dst->tf.x[0] = 0;
    dst->tf.x[1] = (info & ~(3ull << 6) & ~MSG_NONBLOCK) | ((uint64_t)got << 6);
    dst->tf.x[8] = badge;
    dst->tf.x[9] = src->space->id;
}

/* Hand `caller`'s reply capability to `server` (dropping an unused one). */
static void give_reply(struct thread *server, struct thread *caller)
{
    struct thread *old = server->reply.caller;
    if (old)
        thread_wake(old, -E_CLOSED);    /* the server received again without replying */
    server->reply.caller = caller;
    server->lend_len = 0;               /* (a lend was for the caller before) */
    caller->reply_holder = &server->reply;
    caller->state = T_REPLY;
}

/* src's message meets receiver dst; whichever of them is not the current
 * thread (and not left waiting for a reply) becomes runnable. */
static void deliver(struct thread *src, struct thread *dst, uint64_t info, uint64_t badge, bool is_call)
{
    struct thread *cur = current_thread();
    transfer(src, dst, info, badge);
    if (is_call) {
        give_reply(dst, src);
    } else {
        src->tf.x[0] = 0;
        if (src != cur)
            sched_enqueue(src);
    }
    if (dst != cur)
        sched_enqueue(dst);
}

/* ---------------------------------------------------------------- priority inheritance */

/*
 * A user-placed server runs at least at the priority of the highest
 * caller it serves or that waits on its endpoint: a high-priority client
 * is never held up by a medium-priority thread while a low-priority
 * client occupies the server (the hybrid kernel paper, section 3.2).
 * Boosts happen when a call reaches the server or queues on its
 * endpoint; the priority falls back when the server replies.
 */
static void inherit(struct thread *server, unsigned prio)
{
    if (server && server->state != T_DEAD && server->prio < prio)
        thread_set_prio(server, prio);
}

void ipc_set_served(struct thread *t, struct endpoint *ep)
{
    ep->server = t;
    if (t->served_ep == ep)
        return;
    if (t->served_ep) {
        if (t->served_ep->server == t)
            t->served_ep->server = NULL;    /* it serves elsewhere now: no stale pointer */
        obj_unref(&t->served_ep->obj);
    }
    obj_ref(&ep->obj);
    t->served_ep = ep;
}

/* After a reply (or back to receive with nobody to answer): the base
 * priority, or the highest caller still queued. */
static void uninherit(struct thread *server)
{
    unsigned prio = server->base_prio;
    struct endpoint *ep = server->served_ep;
    if (ep)
        list_for_each(pos, &ep->senders) {
            struct thread *s = list_entry(pos, struct thread, link);
            if (s->send_is_call)
                prio = MAX(prio, s->prio);
        }
    thread_set_prio(server, prio);
}

/* ---------------------------------------------------------------- operations */

/* Send (or call) from the current thread through endpoint handle h. */
static int64_t do_send(struct trapframe *tf, bool is_call)
{
    struct thread *t = current_thread();
    struct handle_slot *sl;
    int err = handle_get(t->space, (uint32_t)tf->x[0], OBJ_ENDPOINT, R_WRITE, &sl);
    if (err || (err = check_message(t, tf->x[1])) != 0)
        return err;
    if (tf->x[0] >> 32)
        return -E_INVAL;
    struct endpoint *ep = list_entry(sl->obj, struct endpoint, obj);
    uint64_t info = tf->x[1];
    t->send_is_fault = false;
    if (ep->ksvc) {
        trace_svc_request(MSG_LABEL(info), t->space->id, TRACE_PLACEMENT_KERNEL);
        return ksvc_call(ep, info, sl->badge, is_call);
    }
    if (ep->dead)
        return -E_CLOSED;
    if (!list_empty(&ep->receivers)) {
        struct thread *dst = ep_receiver(&ep->receivers, this_cpu()->index);
        trace_ipc_call(info, dst->space->id, is_call, 0);
        ipc_cancel(dst);
        if (is_call)
            inherit(dst, t->prio);
        deliver(t, dst, info, sl->badge, is_call);
        return 0;
    }
    if (info & MSG_NONBLOCK)
        return -E_AGAIN;
    trace_ipc_call(info, 0, is_call, 1);
    t->send_badge = sl->badge;
    t->send_info = info;            /* checked above; x1 may be rewritten while queued */
    t->send_is_call = is_call;
    enqueue(t, ep, &ep->senders, T_SEND);
    if (is_call)
        inherit(ep->server, t->prio);   /* a plain send waits for no answer: no loan */
    return 0;
}

/* Receive on endpoint handle h: a queued sender, a bound signal, or wait. */
static int64_t do_recv(struct thread *t, uint32_t h, bool nonblock)
{
    struct handle_slot *sl;
    int err = handle_get(t->space, h, OBJ_ENDPOINT, R_READ, &sl);
    if (err)
        return err;
    struct endpoint *ep = list_entry(sl->obj, struct endpoint, obj);
    if (ep->ksvc)
        return -E_BUSY;             /* a kernel service answers here */
    if (ep->dead)
        return -E_CLOSED;           /* (a handle with R_READ made again, by a service, after it died) */
    if (t->prio != t->base_prio && !t->reply.caller)
        uninherit(t);               /* serving nobody now: what is still queued decides */
    if (notify_take_bound(t))
        return 0;
    ipc_set_served(t, ep);
    if (!list_empty(&ep->senders)) {
        struct thread *src = list_first(&ep->senders, struct thread, link);
        ipc_cancel(src);
        if (src->send_is_call)
            inherit(t, src->prio);
        uint64_t info = src->send_is_fault ? MSG_INFO(LABEL_FAULT, FAULT_MSG_LEN, 0) : src->send_info;
        deliver(src, t, info, src->send_badge, src->send_is_call);
        return 0;
    }
    if (nonblock)
        return -E_AGAIN;
    enqueue(t, ep, &ep->receivers, T_RECV);
    return 0;
}

bool fault_apply(struct thread *caller, unsigned len, const uint64_t *mr)
{
    caller->in_fault = false;
    caller->send_is_fault = false;
    if (len >= 1 && mr[0] == FAULT_REPLY_STOP) {
        thread_kill(caller, -1);
        return false;
    }
    /* A yield: the thread running here (the reply came in its own entry)
     * goes to the back when it leaves the kernel (sched_exit, with a new
     * slice); one waiting goes to the back when it is queued, with a new
     * slice already. */
    if (len >= 1 && mr[0] == FAULT_REPLY_YIELD)
        caller->slice = caller == this_cpu()->current ? 0 : SLICE_TICKS;
    if (len >= 2 && mr[1] < USER_VA_LIMIT)
        caller->tf.pc = mr[1];
    if (len >= 3 && mr[2] < USER_VA_LIMIT + 4096)
        caller->tf.sp = mr[2];
    /* Mostly one register (a system call's result): a plain loop, not
     * the compiler's unrolled one with its set-up. */
#pragma clang loop unroll(disable) vectorize(disable)
    for (unsigned i = 3; i < len && i < 12; i++)
        caller->tf.x[i - 3] = mr[i];
    return true;
}

/* Apply a fault handler's reply to the faulting thread and resume or stop it. */
static void fault_reply(struct thread *from, struct thread *caller, uint64_t info)
{
    unsigned len = MSG_LEN(info);
    uint64_t mr[12];
    for (unsigned i = 0; i < len && i < 12; i++)
        mr[i] = i < MSG_REG_MRS ? from->tf.x[2 + i] : from->utcb->mr[i];
    if (fault_apply(caller, len, mr))
        sched_enqueue(caller);
}

/* Reply from t to the caller behind capability r. */
static int64_t do_reply(struct thread *t, struct reply *r, uint64_t info)
{
    struct thread *caller = r->caller;
    if (!caller)
        return -E_STATE;
    int err = check_message(t, info);
    if (err)
        return err;
    r->caller = NULL;
    caller->reply_holder = NULL;
    caller->lend_len = 0;               /* (its lend was for this call: reply_lend) */
    trace_ipc_reply(info, caller->space->id);
    if (t->prio != t->base_prio)
        uninherit(t);
    if (caller->in_fault) {
        fault_reply(t, caller, info);
        return 0;
    }
    t->send_is_fault = false;
    transfer(t, caller, info, 0);
    sched_enqueue(caller);
    return 0;
}

int64_t sys_ipc_send(struct trapframe *tf)
{
    return do_send(tf, false);
}

int64_t sys_ipc_call(struct trapframe *tf)
{
    return do_send(tf, true);
}

int64_t sys_ipc_recv(struct trapframe *tf)
{
    if (tf->x[0] >> 32)
        return -E_BADHANDLE;
    return do_recv(current_thread(), (uint32_t)tf->x[0], tf->x[1] & MSG_NONBLOCK);
}

int64_t sys_ipc_reply(struct trapframe *tf)
{
    struct thread *t = current_thread();
    int64_t err = do_reply(t, &t->reply, tf->x[1]);
    if (!err)
        memset(&tf->x[1], 0, 9 * sizeof(uint64_t));
    return err;
}

int64_t sys_ipc_reply_recv(struct trapframe *tf)
{
    struct thread *t = current_thread();
    if (tf->x[0] >> 32)
        return -E_BADHANDLE;
    struct handle_slot *sl;
    int err = handle_get(t->space, (uint32_t)tf->x[0], OBJ_ENDPOINT, R_READ, &sl);
    if (err)
        return err;
    if (t->reply.caller && (err = do_reply(t, &t->reply, tf->x[1])) != 0)
        return err;
    return do_recv(t, (uint32_t)tf->x[0], tf->x[1] & MSG_NONBLOCK);
}

/* ---------------------------------------------------------------- reply handles */

int64_t sys_reply_save(void)
{
    struct thread *t = current_thread();
    if (!t->reply.caller)
        return -E_STATE;
    int err;
    struct reply *r = obj_alloc(sizeof(*r), OBJ_REPLY, t->space, &err);
    if (!r)
        return err;
    int64_t h = handle_alloc(t->space, &r->obj, R_WRITE, 0);
    obj_unref(&r->obj);
    if (h < 0)
        return h;
    r->caller = t->reply.caller;
    r->caller->reply_holder = r;
    t->reply.caller = NULL;
    return h;
}

int64_t sys_ipc_reply_to(struct trapframe *tf)
{
    struct thread *t = current_thread();
    struct handle_slot *sl;
    if (tf->x[0] >> 32)
        return -E_BADHANDLE;
    int err = handle_get(t->space, (uint32_t)tf->x[0], OBJ_REPLY, R_WRITE, &sl);
    if (err)
        return err;
    struct reply *r = list_entry(sl->obj, struct reply, obj);
    if (!r->caller) {
        handle_free(t->space, (uint32_t)tf->x[0]);
        return -E_CLOSED;
    }
    int64_t res = do_reply(t, r, tf->x[1]);
    if (res == 0)
        handle_free(t->space, (uint32_t)tf->x[0]);
    return res;
}

/* A reply handle closed unused: its caller will never hear back. */
void reply_shutdown(struct object *o)
{
    struct reply *r = list_entry(o, struct reply, obj);
    if (r->caller)
        thread_wake(r->caller, -E_CLOSED);
    r->caller = NULL;
}

void reply_free(struct object *o)
{
    kfree(list_entry(o, struct reply, obj), sizeof(struct reply));
}

/* ---------------------------------------------------------------- faults and death */

bool ipc_send_fault(struct thread *t, const struct fault_info *fi)
{
    struct endpoint *ep = t->fault_ep;
    if (!ep || ep->dead || (ep->ksvc && t != current_thread()))
        return false;
    fault_msg_fill(t, fi->kind, fi->addr, fi->esr);
    uint64_t info = MSG_INFO(LABEL_FAULT, FAULT_MSG_LEN, 0);
    if (ep->ksvc) {
        ksvc_fault(t, ep, t->fault_badge);  /* a kernel-placed handler: served in this entry */
        return true;
    }
    if (!list_empty(&ep->receivers)) {
        struct thread *dst = ep_receiver(&ep->receivers, this_cpu()->index);
        ipc_cancel(dst);
        deliver(t, dst, info, t->fault_badge, true);
    } else {
        t->send_badge = t->fault_badge;
        t->send_is_call = true;
        enqueue(t, ep, &ep->senders, T_SEND);
    }
    return true;
}

/* t dies: its pending caller hears E_CLOSED, its handler reference goes. */
void ipc_thread_gone(struct thread *t)
{
    if (t->reply.caller)
        thread_wake(t->reply.caller, -E_CLOSED);
    t->reply.caller = NULL;
    if (t->fault_ep)
        obj_unref(&t->fault_ep->obj);
    t->fault_ep = NULL;
    if (t->served_ep) {
        if (t->served_ep->server == t)
            t->served_ep->server = NULL;
        obj_unref(&t->served_ep->obj);
        t->served_ep = NULL;
    }
}

/* A server copies to or from the buffers of the caller it is answering,
 * or (REPLY_COPY_LENT) of that caller's own caller, in the range it lent. */
int64_t sys_reply_copy(uint64_t dir, uint64_t caller_va, uint64_t my_va, uint64_t len)
{
    struct thread *t = current_thread();
    struct thread *caller = t->reply.caller;
    if (!caller)
        return -E_STATE;
    if (dir > (REPLY_COPY_LENT | 1) || len > KiB(64))
        return -E_INVAL;
    struct thread *owner = dir & REPLY_COPY_LENT ? lent_owner(caller, caller_va, len, dir & 1) : caller;
    if (!owner)
        return -E_FAULT;
    return space_copy(owner->space, caller_va, my_va, len, dir & 1);
}

/*
 * Lend the server of this thread's next call, while this thread answers
 * its own caller, the caller's bytes [va, va + len) (writable: to write as
 * well): a service passes its client's buffer on in a call to another
 * service, which copies straight between that buffer and its own memory
 * (reply_copy with REPLY_COPY_LENT, or a kernel-placed service's copy of
 * an address with SVC_BUFFER_LENT), so that the bytes are not copied
 * through the service in the middle. One range at a time (a new lend
 * replaces it); it ends when a server answers this thread's call, or when
 * this thread receives a call (a kernel-placed server, which is the kernel,
 * may meet it until then). It reaches nothing its lender could not: the
 * lender reaches its caller's memory through reply_copy already.
 */
int64_t sys_reply_lend(uint64_t va, uint64_t len, uint64_t writable)
{
    struct thread *t = current_thread();
    if (!t->reply.caller)
        return -E_STATE;
    if (writable > 1 || va + len < va || va + len > USER_VA_LIMIT)
        return -E_INVAL;
    t->lend_va = va;
    t->lend_len = len;
    t->lend_write = writable;
    return 0;
}

/* The thread whose memory a server reaches through `lender`'s lent range
 * for len bytes at va (write: to write them): the caller `lender` is
 * answering, or NULL outside the range or without one. */
struct thread *lent_owner(struct thread *lender, uint64_t va, uint64_t len, bool write)
{
    struct thread *owner = lender ? lender->reply.caller : NULL;
    if (!owner || va < lender->lend_va || va + len < va || va + len > lender->lend_va + lender->lend_len ||
        (write && !lender->lend_write))
        return NULL;
    return owner;
}
