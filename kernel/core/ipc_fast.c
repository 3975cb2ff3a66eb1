/*
 * The IPC fastpath: call and reply-and-receive without handles, between
 * any two address spaces on one core.
 *
 * It handles exactly the case that dominates client/server traffic —
 * the partner is already waiting, the message carries no handles (MR0..MR5
 * in registers, MR6.. copied UTCB to UTCB), the partner may run at once
 * on this core and nothing of higher priority is ready there — and
 * switches straight to the partner: no run queue insert and pick, no
 * generic transfer. Anything else returns NULL and the general path
 * (ipc.c) runs instead, with the same results. Entered straight from
 * the exception vector (vectors.S), it takes the kernel lock itself and
 * leaves with it released either way. docs/design/ipc-fastpath.md lists what it checks and skips.
 */
#include "ipc.h"
#include "thread.h"
#include "space.h"
#include "sched.h"
#include "cpu.h"
#include "switch.h"
#include "ksvc.h"
#include <arch/trapframe.h>

/* The endpoint behind handle h with `rights`, or NULL (inline lookup). */
static ALWAYS_INLINE struct endpoint *fast_endpoint(struct thread *t, uint64_t h, uint32_t rights, uint64_t *badge)
{
    struct handle_slot *sl = handle_slot_of(&t->space->handles, h);
    struct object *o = sl->obj;     /* (every value reads some slot: see handle_slot_of) */
    if (sl->value != h || !o || o->type != OBJ_ENDPOINT || (sl->rights & rights) != rights)
        return NULL;
    *badge = sl->badge;
    return (struct endpoint *)o;
}

/* A message word without handles or flags, a user label, length <= 32. */
static ALWAYS_INLINE bool fast_info(uint64_t info)
{
    return (info & 0xffc0) == 0 && MSG_LEN(info) <= MSG_MAX_MRS && !(MSG_LABEL(info) & LABEL_KERNEL);
}

/* May `to` run now instead of everything ready on this core? */
static ALWAYS_INLINE bool fast_may_run(struct cpu *c, const struct thread *to)
{
    if (to->cpu != c->index || to->suspended)
        return false;
    const struct runqueue *rq = &c->rq;
    if (!rq->summary)
        return true;
    unsigned w = 63 - (unsigned)__builtin_clzll(rq->summary);
    unsigned top = w * 64 + 63 - (unsigned)__builtin_clzll(rq->bitmap[w]);
    return to->prio >= top;
}

/* The message's registers (MR0..MR5 in x2..x7) and its length's worth of
 * UTCB words: registers past the length keep the receiver's own values,
 * so nothing of the sender's beyond its message reaches the receiver (the
 * proxies do not clear what they do not send). */
static ALWAYS_INLINE void fast_copy(struct thread *from, struct thread *to, uint64_t info, uint64_t badge)
{
    unsigned len = MSG_LEN(info);
    to->tf.x[0] = 0;
    to->tf.x[1] = info;
    if (likely(len >= MSG_REG_MRS)) {
        /* All loads before the stores, so they go in pairs (from and to
         * may be the same thread as far as the compiler knows). */
        uint64_t m0 = from->tf.x[2], m1 = from->tf.x[3], m2 = from->tf.x[4];
        uint64_t m3 = from->tf.x[5], m4 = from->tf.x[6], m5 = from->tf.x[7];
        to->tf.x[2] = m0;
        to->tf.x[3] = m1;
        to->tf.x[4] = m2;
        to->tf.x[5] = m3;
        to->tf.x[6] = m4;
        to->tf.x[7] = m5;
        if (unlikely(len > MSG_REG_MRS))
            ipc_copy_utcb(from, to, len);       /* out of line: short messages pay one branch */
    } else if (len) {
        to->tf.x[2] = from->tf.x[2];
        if (len > 1) {
            to->tf.x[3] = from->tf.x[3];
            for (unsigned i = 2; i < len; i++)
                to->tf.x[2 + i] = from->tf.x[2 + i];
        }
    }
    to->tf.x[8] = badge;
    to->tf.x[9] = from->space->id;
}

/* May a call from cur switch to dst, a receiver waiting on its endpoint,
 * at once on this core? (Not to a lower server: it would inherit, on the
 * general path.) */
static ALWAYS_INLINE bool fast_server_ok(struct cpu *c, const struct thread *cur, const struct thread *dst)
{
    return fast_may_run(c, dst) && !dst->reply.caller && dst->prio >= cur->prio;
}

/* The first receiver waiting on ep if a call from cur may switch to it
 * at once on this core, or NULL: then the caller looks further
 * (fast_server_here) in a function of its own, so the common path saves
 * no registers for the look. */
static ALWAYS_INLINE struct thread *fast_server(struct cpu *c, const struct thread *cur, struct endpoint *ep)
{
    if (list_empty(&ep->receivers))
        return NULL;
    struct thread *dst = list_first(&ep->receivers, struct thread, link);
    return fast_server_ok(c, cur, dst) ? dst : NULL;
}

/* The second look: a receiver waiting on this core further in the queue
 * (a server with a thread on each core), or NULL. */
static ALWAYS_INLINE struct thread *fast_server_here(struct cpu *c, const struct thread *cur, struct endpoint *ep)
{
    if (list_empty(&ep->receivers))
        return NULL;
    struct thread *dst = ep_receiver(&ep->receivers, c->index);
    return fast_server_ok(c, cur, dst) ? dst : NULL;
}

/* cur calls server dst of ep, its message already in dst's registers: dst
 * leaves ep's queue holding cur's reply, and runs. */
static ALWAYS_INLINE struct trapframe *fast_call_switch(struct cpu *c, struct thread *cur, struct endpoint *ep,
                                                        struct thread *dst)
{
    list_del(&dst->link);
    dst->waiting_on = NULL;
    ep->obj.refs--;                     /* the queue's reference; handles keep ep alive */
    cur->state = T_REPLY;
    cur->reply_holder = &dst->reply;
    dst->reply.caller = cur;
    dst->lend_len = 0;
    switch_from_to(c, cur, dst);
    kernel_unlock();
    return &dst->tf;
}

/* A fastpath call to server dst, waiting on ep. */
static ALWAYS_INLINE struct trapframe *fast_call_to(struct cpu *c, struct thread *cur, struct endpoint *ep,
                                                    struct thread *dst, uint64_t info, uint64_t badge)
{
    /* dst in a register of its own: the copy then writes its frame in pairs
     * at small offsets, not field by field from the queue link. */
    __asm__("" : "+r"(dst));
    fast_copy(cur, dst, info, badge);
    cur->send_is_fault = false;
    return fast_call_switch(c, cur, ep, dst);
}

/* fast_call_server's second look (fast_server_here). */
static NOINLINE struct trapframe *fast_call_server_here(struct trapframe *tf, uint64_t esr, struct endpoint *ep,
                                                        uint64_t info, uint64_t badge)
{
    struct thread *cur = (struct thread *)tf;
    struct cpu *c = this_cpu();
    struct thread *dst = fast_server_here(c, cur, ep);
    if (!dst)
        return exc_el0_svc_locked(tf, esr);
    return fast_call_to(c, cur, ep, dst, info, badge);
}

/* The rest of a fastpath call whose endpoint is a user-level server's: out
 * of line, so the kernel-placed service's branch in fastpath_call saves no
 * registers for it. */
static NOINLINE struct trapframe *fast_call_server(struct trapframe *tf, uint64_t esr, struct endpoint *ep,
                                                   uint64_t info, uint64_t badge)
{
    struct thread *cur = (struct thread *)tf;
    struct cpu *c = this_cpu();
    struct thread *dst = fast_server(c, cur, ep);
    if (!dst)
        return fast_call_server_here(tf, esr, ep, info, badge);
    return fast_call_to(c, cur, ep, dst, info, badge);
}

/* ipc_call from the vector: a kernel-placed service answers it here, a
 * user-level server waiting on this core gets it straight away, anything
 * else takes the general path. Returns the frame to resume, the lock
 * released. */
struct trapframe *fastpath_call(struct trapframe *tf, uint64_t esr)
{
    struct thread *cur = (struct thread *)tf;
    uint64_t info = tf->x[1], badge;
    if (!kernel_enter(cur) || !fast_info(info))
        return exc_el0_svc_locked(tf, esr);
    struct endpoint *ep = fast_endpoint(cur, tf->x[0], R_WRITE, &badge);
    if (!ep)
        return exc_el0_svc_locked(tf, esr);
    if (ep->ksvc)       /* a kernel-placed service: answered in this entry (ksvc.h) */
        return ep->ksvc->fastcall(tf, ep, info, badge);
    return fast_call_server(tf, esr, ep, info, badge);
}

/* The light call (thread.h): kcall_none is the entry of an empty one. */
uintptr_t kcall_none(struct trapframe *tf)
{
    ((struct thread *)tf)->kcall_ctx.after = KCALL_UNSERVED;
    return (uintptr_t)tf + 1;
}

void kcall_forget(struct thread *t)
{
    t->kcall.handle = 0;
    t->kcall.info = 0;
    t->kcall.fn = kcall_none;
}

void kcall_forget_space(struct space *s)
{
    list_for_each(pos, &s->threads)
        kcall_forget(list_entry(pos, struct thread, space_link));
    s->kcall_cached = false;
}

void kcall_remember(struct thread *t, uint64_t h, struct endpoint *ep, uint64_t info, uint64_t badge)
{
    const struct ksvc *k = ep->ksvc;
    if (t->foreign_svc)
        return;
    for (unsigned i = 0; i < k->nlights; i++) {
        if (k->lights[i].info != info)
            continue;
        struct kcall_ctx *c = &t->kcall_ctx;
        t->kcall.handle = h;
        t->kcall.info = info;
        t->kcall.fn = k->lights[i].fn;
        c->run = k->run;
        c->svc = k;
        c->call.label = MSG_LABEL(info);
        c->call.badge = badge;
        c->call.pid = t->space->id;
        c->call.env = t;
        c->call.len = MSG_LEN(info);
        c->call.nhandles = 0;
        c->call.mr = NULL;
        t->space->kcall_cached = true;
        return;
    }
}

/* After a light entry that did not answer (ksvc_light), the frame whole
 * again and esr the syndrome of the call: on the same way as any call. */
struct trapframe *kcall_slow(struct trapframe *tf, uint64_t esr)
{
    struct thread *t = (struct thread *)tf;
    if (t->kcall_ctx.after == KCALL_SCHEDULE)
        return sched_exit();            /* (one core: no lock to take) */
    if (t->foreign_svc)
        return fastpath_foreign_syscall(tf, esr);   /* (an empty light call matches x0 = x1 = 0) */
    return fastpath_call(tf, esr);
}

/*
 * A Linux `svc #0` (a foreign system call) of a thread whose fault handler
 * is a kernel-placed service (the Linux personality in the kernel) is
 * offered to it here (ksvc_foreign_syscall); one whose handler is a
 * user-placed server waiting on this core (the personality in user space)
 * has its fault message go straight into the server's registers and UTCB,
 * exactly as ipc_send_fault would deliver it, and the server runs.
 * Anything else takes the general path.
 */
static ALWAYS_INLINE struct trapframe *foreign_to(struct cpu *c, struct thread *cur, struct endpoint *ep,
                                                  struct thread *dst, uint64_t esr);

/* fastpath_foreign_syscall's second look (fast_server_here), lock held. */
static NOINLINE struct trapframe *foreign_here(struct trapframe *tf, uint64_t esr, struct endpoint *ep)
{
    struct thread *cur = (struct thread *)tf;
    struct cpu *c = this_cpu();
    struct thread *dst = fast_server_here(c, cur, ep);
    if (!dst)
        return exc_el0_svc_locked(tf, esr);
    return foreign_to(c, cur, ep, dst, esr);
}

/* The foreign-call fastpath once the entry holds the lock (or needs none). */
static ALWAYS_INLINE struct trapframe *foreign_locked(struct trapframe *tf, uint64_t esr)
{
    struct thread *cur = (struct thread *)tf;
    struct cpu *c = this_cpu();
    struct endpoint *ep = cur->fault_ep;
    if (ep && ep->ksvc)
        return ksvc_foreign_syscall(tf, esr, ep);   /* the personality in the kernel: this entry answers */
    if (!ep || ep->dead)
        return exc_el0_svc_locked(tf, esr);
    struct thread *dst = fast_server(c, cur, ep);
    if (!dst)
        return foreign_here(tf, esr, ep);
    return foreign_to(c, cur, ep, dst, esr);
}

/* Several cores: the shared entry of the thread's kernel-placed handler
 * first (ksvc.h), then the lock (kernel_enter). Out of line, so that the
 * one-core path saves no registers for it. */
static NOINLINE struct trapframe *foreign_smp(struct trapframe *tf, uint64_t esr)
{
    struct thread *cur = (struct thread *)tf;
    const struct ksvc *svc = cur->fault_ksvc;
    if (svc && svc->run->shared && ksvc_shared_fault(tf, esr, svc))
        return tf;          /* answered on the shared entry, without the lock */
    if (!kernel_enter(cur))
        return exc_el0_svc_locked(tf, esr);
    return foreign_locked(tf, esr);
}

struct trapframe *fastpath_foreign_syscall(struct trapframe *tf, uint64_t esr)
{
    if (unlikely(smp_running))
        return foreign_smp(tf, esr);
    return foreign_locked(tf, esr);
}

/* The foreign call of cur (the current thread) to server dst waiting on ep. */
static ALWAYS_INLINE struct trapframe *foreign_to(struct cpu *c, struct thread *cur, struct endpoint *ep,
                                                  struct thread *dst, uint64_t esr)
{
    struct trapframe *tf = &cur->tf;
    /* The fault message goes straight into the server's registers and
     * UTCB, not through cur->fault_msg: that is read only for a fault
     * message that waits in a queue (deliver) or a kernel-placed handler. */
    _Static_assert(FAULT_MR_X0 == MSG_REG_MRS - 1, "x0 is the last message word in a register");
    cur->send_is_fault = true;
    cur->in_fault = true;
    dst->tf.x[0] = 0;
    dst->tf.x[1] = MSG_INFO(LABEL_FAULT, FAULT_MSG_LEN, 0);
    dst->tf.x[2 + FAULT_MR_KIND] = FAULT_FOREIGN_SYSCALL;
    dst->tf.x[2 + FAULT_MR_ADDR] = tf->x[8];
    dst->tf.x[2 + FAULT_MR_ESR] = esr;
    dst->tf.x[2 + FAULT_MR_PC] = tf->pc;
    dst->tf.x[2 + FAULT_MR_SP] = tf->sp;
    dst->tf.x[2 + FAULT_MR_X0] = tf->x[0];
    for (unsigned i = 1; i < 9; i++)
        dst->utcb->mr[FAULT_MR_X0 + i] = tf->x[i];
    dst->tf.x[8] = cur->fault_badge;
    dst->tf.x[9] = cur->space->id;
    return fast_call_switch(c, cur, ep, dst);
}

struct trapframe *fastpath_reply_recv(struct trapframe *tf, uint64_t esr)
{
    struct thread *cur = (struct thread *)tf;
    struct cpu *c = this_cpu();
    uint64_t info = tf->x[1], badge;
    if (!kernel_enter(cur))
        return exc_el0_svc_locked(tf, esr);
    struct thread *caller = cur->reply.caller;
    if (!caller || !fast_info(info) || cur->prio != cur->base_prio)
        return exc_el0_svc_locked(tf, esr);
    /* A fault's caller takes a "resume" reply from the registers (fault_apply). */
    if (caller->in_fault && (MSG_LEN(info) > MSG_REG_MRS || MSG_LEN(info) < 1 || tf->x[2] != FAULT_REPLY_RESUME))
        return exc_el0_svc_locked(tf, esr);
    struct endpoint *ep = fast_endpoint(cur, tf->x[0], R_READ, &badge);
    if (!ep || ep->ksvc || !list_empty(&ep->senders) || (cur->bound && cur->bound->bits) || !fast_may_run(c, caller))
        return exc_el0_svc_locked(tf, esr);

    cur->reply.caller = NULL;
    caller->reply_holder = NULL;
    caller->lend_len = 0;
    if (caller->in_fault)
        fault_apply(caller, MSG_LEN(info), &tf->x[2]);
    else
        fast_copy(cur, caller, info, 0);
    cur->state = T_RECV;
    cur->waiting_on = ep;
    ep->obj.refs++;
    if (cur->served_ep != ep)
        ipc_set_served(cur, ep);
    else
        ep->server = cur;
    list_add_tail(&ep->receivers, &cur->link);
    switch_from_to(c, cur, caller);
    kernel_unlock();
    return &caller->tf;
}
