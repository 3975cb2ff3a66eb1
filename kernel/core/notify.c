/*
 * Notifications: a word of pending signal bits. notify_signal ORs bits
 * in and wakes the one waiter (notify_wait) or, failing that, the bound
 * thread if it is blocked receiving on any endpoint; the woken thread
 * takes all pending bits at once. Bit 63 is not used, so that a bit
 * word is never mistaken for an error.
 */
#include "ipc.h"
#include "thread.h"
#include "sched.h"
#include "kmalloc.h"
#include "syscalls_gen.h"
#include "ksvc.h"

#define BITS_MASK   0x7fffffffffffffffull

struct notification *notify_create(struct space *payer)
{
    int err;
    return obj_alloc(sizeof(struct notification), OBJ_NOTIFICATION, payer, &err);
}

int64_t sys_notify_create(void)
{
    int err;
    struct notification *n = obj_alloc(sizeof(*n), OBJ_NOTIFICATION, current_thread()->space, &err);
    if (!n)
        return err;
    int64_t h = handle_alloc(current_thread()->space, &n->obj, R_ALL, 0);
    obj_unref(&n->obj);
    return h;
}

/* The pending bits, cleared. */
static int64_t take_bits(struct notification *n)
{
    uint64_t got = n->bits;
    n->bits = 0;
    return (int64_t)got;
}

/* The bound thread t gets the pending bits as a LABEL_NOTIFY message. */
static void deliver_bound(struct notification *n, struct thread *t)
{
    t->tf.x[0] = 0;
    t->tf.x[1] = MSG_INFO(LABEL_NOTIFY, 1, 0);
    t->tf.x[2] = (uint64_t)take_bits(n);
    t->tf.x[8] = 0;
    t->tf.x[9] = 0;
}

void notify_raise(struct notification *n, uint64_t bits)
{
    if (unlikely(n->kwake)) {
        ksvc_wake(n->kwake);           /* nobody waits on it: its service's handler runs */
        return;
    }
    n->bits |= bits & BITS_MASK;
    if (n->waiter) {
        thread_wake(n->waiter, take_bits(n));
    } else if (n->bound && n->bound->state == T_RECV) {
        struct thread *t = n->bound;
        thread_cancel_wait(t);
        deliver_bound(n, t);
        sched_enqueue(t);
    }
}

/* At ipc_recv: if the thread's bound notification has bits, take them. */
bool notify_take_bound(struct thread *t)
{
    if (!t->bound || !t->bound->bits)
        return false;
    deliver_bound(t->bound, t);
    return true;
}

void notify_cancel(struct thread *t)
{
    struct notification *n = t->waiting_notify;
    if (!n)
        return;
    if (n->waiter == t)
        n->waiter = NULL;
    t->waiting_notify = NULL;
    obj_unref(&n->obj);
}

void notify_thread_gone(struct thread *t)
{
    if (t->bound) {
        t->bound->bound = NULL;
        obj_unref(&t->bound->obj);
        t->bound = NULL;
    }
}

void notify_shutdown(struct object *o)
{
    struct notification *n = list_entry(o, struct notification, obj);
    if (n->waiter)
        thread_wake(n->waiter, -E_CLOSED);
    if (n->bound)
        notify_thread_gone(n->bound);
}

void notify_free(struct object *o)
{
    kfree(list_entry(o, struct notification, obj), sizeof(struct notification));
}

static struct notification *get(uint32_t h, uint32_t rights, struct handle_slot **sl, int *err)
{
    *err = handle_get(current_thread()->space, h, OBJ_NOTIFICATION, rights, sl);
    return *err ? NULL : list_entry((*sl)->obj, struct notification, obj);
}

int64_t sys_notify_signal(uint32_t h, uint64_t bits)
{
    struct handle_slot *sl;
    int err;
    struct notification *n = get(h, R_WRITE, &sl, &err);
    if (!n)
        return err;
    if (!bits)
        bits = sl->badge;
    if (!(bits & BITS_MASK))
        return -E_INVAL;
    notify_raise(n, bits);
    return 0;
}

int64_t sys_notify_wait(uint32_t h)
{
    struct handle_slot *sl;
    int err;
    struct notification *n = get(h, R_READ, &sl, &err);
    if (!n)
        return err;
    if (n->bits)
        return take_bits(n);
    if (n->waiter)
        return -E_BUSY;
    struct thread *t = current_thread();
    n->waiter = t;
    t->waiting_notify = n;
    obj_ref(&n->obj);
    t->state = T_NOTIFY;
    return 0;
}

int64_t sys_notify_poll(uint32_t h)
{
    struct handle_slot *sl;
    int err;
    struct notification *n = get(h, R_READ, &sl, &err);
    if (!n)
        return err;
    return take_bits(n);
}

int64_t sys_notify_bind(uint32_t thread_h, uint32_t h)
{
    struct handle_slot *ts, *ns;
    struct thread *cur = current_thread();
    int err = handle_get(cur->space, thread_h, OBJ_THREAD, R_MANAGE, &ts);
    if (err)
        return err;
    struct thread *t = list_entry(ts->obj, struct thread, obj);
    if (h == 0) {
        notify_thread_gone(t);
        return 0;
    }
    if (t->state == T_DEAD)
        return -E_STATE;            /* its death already dropped every binding */
    struct notification *n = get(h, R_READ, &ns, &err);
    if (!n)
        return err;
    if (n->bound == t)
        return 0;
    if (n->bound || t->bound)
        return -E_BUSY;
    n->bound = t;
    t->bound = n;
    obj_ref(&n->obj);
    return 0;
}
