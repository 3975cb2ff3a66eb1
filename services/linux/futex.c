/*
 * futex: a thread waits until another wakes it at the same word.
 *
 * A waiting thread keeps its call's reply (LX_BLK_FUTEX) with the key of
 * its word: for FUTEX_PRIVATE_FLAG the process and the address; otherwise
 * the memory object behind the address and the offset in it, so that the
 * same word mapped by two processes (a shared mapping) meets, as Linux
 * keys shared futexes by the page and not by the address. Linux's two
 * kinds of keys never meet each other, and these do not either.
 *
 * The personality answers one call at a time, so FUTEX_WAIT's "compare
 * the word, then sleep" is atomic with respect to every other futex call,
 * as Linux's is. A wake answers the waiter's kept call with 0 (it does
 * not run again); a signal or the timeout runs it again, and it then
 * returns EINTR or ETIMEDOUT (or EAGAIN if the word changed meanwhile,
 * which Linux's callers treat the same way).
 *
 * FUTEX_WAKE_OP's read-modify-write of the second word is a copy in and
 * a copy out: atomic with respect to futex calls, not to stores that
 * other threads of the process make at the same moment on other cores.
 *
 * Priority-inheritance futexes (FUTEX_LOCK_PI, LOCK_PI2, TRYLOCK_PI,
 * UNLOCK_PI) keep Linux's protocol on the word: the owner's tid, with
 * FUTEX_WAITERS while threads wait; an unlock hands the lock to a waiter
 * (Linux picks the one of highest priority, and here all are equal: the
 * first in the personality's table of threads; the word becomes
 * FUTEX_WAITERS | its tid, as Linux writes it) and an owner that ends
 * holding it hands it on with FUTEX_OWNER_DIED. The inheritance itself
 * has nothing to do: every Linux thread runs at the same priority (nice
 * values are kept, not applied). A signal runs its handler and then the
 * lock again, as Linux does. The requeue-to-PI operations are ENOSYS.
 *
 * Robust futex lists (set_robust_list): when a thread ends (exit, the
 * end of its process, or the execve of another program) its list is
 * walked in the process's memory as Linux walks it (at most 2048 entries,
 * then the pending one): each word it still owns gets FUTEX_OWNER_DIED,
 * and a waiter is woken (a PI word goes to its first waiter).
 */
#include "lx.h"

enum {
    FUTEX_WAIT = 0, FUTEX_WAKE = 1, FUTEX_FD = 2, FUTEX_REQUEUE = 3, FUTEX_CMP_REQUEUE = 4, FUTEX_WAKE_OP = 5,
    FUTEX_LOCK_PI = 6, FUTEX_UNLOCK_PI = 7, FUTEX_TRYLOCK_PI = 8, FUTEX_WAIT_BITSET = 9, FUTEX_WAKE_BITSET = 10,
    FUTEX_WAIT_REQUEUE_PI = 11, FUTEX_CMP_REQUEUE_PI = 12, FUTEX_LOCK_PI2 = 13,
};
#define FUTEX_PRIVATE_FLAG      128
#define FUTEX_CLOCK_REALTIME    256
#define FUTEX_CMD_MASK          (~(uint32_t)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))
#define FUTEX_BITSET_ANY        0xffffffffu
#define FUTEX_WAITERS           0x80000000u
#define FUTEX_OWNER_DIED        0x40000000u
#define FUTEX_TID_MASK          0x3fffffffu
#define ROBUST_LIST_LIMIT       2048
#define LX_ETIMEDOUT            110

/* The key of the word at uaddr for process p; 0 or -EFAULT. */
static int key_of(struct lx_proc *p, uint64_t uaddr, int private, uint64_t key[2])
{
    if (private) {
        key[0] = (uint64_t)(uintptr_t)p;
        key[1] = uaddr;
        return 0;
    }
    const struct lx_vma *v = lx_vma_at(p, uaddr);
    if (!v || !v->obj)
        return -LX_EFAULT;                      /* not mapped, or reserved with nothing mapped */
    key[0] = (uint64_t)(uintptr_t)v->obj | 1;  /* (objects are aligned: never a process's key) */
    key[1] = v->off + (uaddr - v->node.start);
    return 0;
}

/* Wake up to n threads waiting on key whose bits meet `bits`; how many. */
static int wake(const uint64_t key[2], int n, uint32_t bits)
{
    int woken = 0;
    for (struct lx_thread *t = lx_waiting_on(LX_BLK_FUTEX, 0); t && woken < n; t = t->wq_next) {
        if (t->blk.kind == LX_BLK_FUTEX && !t->fpi && t->fkey[0] == key[0] &&
            t->fkey[1] == key[1] && (t->fbits & bits)) {
            lx_wake_resume(t, 0);
            woken++;
        }
    }
    return woken;
}

/* Move up to n waiters of `from` to `to`; how many. */
static int requeue(const uint64_t from[2], const uint64_t to[2], int n)
{
    int moved = 0;
    for (struct lx_thread *t = lx_waiting_on(LX_BLK_FUTEX, 0); t && moved < n; t = t->wq_next) {
        if (t->blk.kind == LX_BLK_FUTEX && !t->fpi && t->fkey[0] == from[0] &&
            t->fkey[1] == from[1]) {
            t->fkey[0] = to[0];
            t->fkey[1] = to[1];
            moved++;
        }
    }
    return moved;
}

void lx_futex_wake_addr(struct lx_proc *p, uint64_t uaddr, int n)
{
    uint64_t key[2];
    if (key_of(p, uaddr, 0, key) == 0)
        wake(key, n, FUTEX_BITSET_ANY);
}

/* absolute: 0 for a relative timeout, 1 for a CLOCK_MONOTONIC time, 2 for a CLOCK_REALTIME one. */
/* The timeout of c's futex wait, at ns: an absolute one (absolute 1 on the
 * monotonic clock, 2 on the calendar's) is set on the first try, a
 * relative one is lx_deadline_passed's. 0, -ETIMEDOUT once it passed, or
 * the timer's error. */
static int64_t arm_timeout(struct lx_ctx *c, uint64_t ns, int absolute)
{
    struct lx_thread *t = c->t;
    if (absolute && !t->timed) {
        uint64_t base = absolute > 1 ? lx_realtime_base() : 0;     /* CLOCK_REALTIME: the calendar's */
        t->timed = 1;
        t->timed_calendar = absolute > 1;
        t->deadline = ns > base ? ns - base : 0;
    }
    if (lx_deadline_passed(c, ns))
        return -LX_ETIMEDOUT;
    return lx_timer_start();
}

static int64_t futex_wait(struct lx_ctx *c, uint64_t uaddr, uint32_t val, uint64_t uts, uint32_t bits, int private,
                          int absolute)
{
    struct lx_thread *t = c->t;
    uint64_t ns = 0;
    if (uts) {
        int64_t err = lx_timespec_in(c, uts, &ns);
        if (err)
            return err;
    }
    if (t->intr) {
        t->intr = 0;
        return -LX_EINTR;                       /* a signal woke it (linux.c runs the handler) */
    }
    uint32_t now;
    if (lx_copy_in(c, &now, uaddr, sizeof(now)))
        return -LX_EFAULT;
    if (now != val)
        return -LX_EAGAIN;
    if (uts) {
        int64_t err = arm_timeout(c, ns, absolute);
        if (err)
            return err;
    }
    int64_t err = key_of(c->p, uaddr, private, t->fkey);
    if (err)
        return err;
    t->fbits = bits;
    t->fpi = 0;
    if (uts)
        lx_timer_note(t->deadline);
    return lx_block(c, LX_BLK_FUTEX, 0);
}

/* A PI, robust or FUTEX_WAKE_OP word changes only by compare-and-swap (lx_vma_cas32),
 * as Linux's cmpxchg: the process's other threads lock and unlock it in
 * user space meanwhile, on any core. After this many tries lost to them,
 * the call runs again from its `svc` (LX_AGAIN), as Linux's loop goes on
 * trying: never EAGAIN, which glibc takes for a lock it got. */
#define CAS_TRIES 64

/* FUTEX_WAKE_OP's operation on the old value, atomic as Linux's
 * futex_atomic_op_inuser (by compare-and-swap; a word of a file's shared
 * mapping, which lx_vma_cas32 does not reach, by a copy in and out), and
 * its comparison. */
static int wake_op(struct lx_ctx *c, uint64_t uaddr2, uint32_t encoded, int *cmp_true)
{
    uint32_t op = (encoded >> 28) & 7, cmp = (encoded >> 24) & 15;
    uint32_t oparg = (encoded >> 12) & 0xfff, cmparg = encoded & 0xfff;
    if (encoded & (8u << 28)) {                 /* FUTEX_OP_OPARG_SHIFT */
        if (oparg > 31)
            return -LX_EINVAL;                  /* (Linux warns and masks; newer ones refuse) */
        oparg = 1u << oparg;
    }
    if (op > 4 || cmp > 5)
        return -LX_ENOSYS;
    uint32_t old, seen;
    if ((uaddr2 & 3) || lx_copy_in(c, &old, uaddr2, sizeof(old)))
        return (uaddr2 & 3) ? -LX_EINVAL : -LX_EFAULT;
    for (int tries = 0;; tries++) {
        if (tries == CAS_TRIES)
            return LX_AGAIN;                    /* (nothing done yet: the call runs again whole) */
        uint32_t new = op == 0 ? oparg : op == 1 ? old + oparg : op == 2 ? (old | oparg) :
                       op == 3 ? (old & ~oparg) : (old ^ oparg);
        if (lx_vma_cas32(lx_memory_of(c->p), uaddr2, old, new, &seen)) {
            if (lx_copy_out(c, uaddr2, &new, sizeof(new)))
                return -LX_EFAULT;
            break;
        }
        if (seen == old)
            break;
        old = seen;
    }
    int32_t o = (int32_t)old, a = (int32_t)(cmparg << 20) >> 20;   /* cmparg is a signed 12-bit value */
    *cmp_true = cmp == 0 ? o == a : cmp == 1 ? o != a : cmp == 2 ? o < a : cmp == 3 ? o <= a : cmp == 4 ? o > a : o >= a;
    return 0;
}

/* The first thread waiting for the PI futex of key (other than `not`), or NULL. */
static struct lx_thread *pi_waiter(const uint64_t key[2], const struct lx_thread *not)
{
    for (struct lx_thread *t = lx_waiting_on(LX_BLK_FUTEX, 0); t; t = t->wq_next)
        if (t->blk.kind == LX_BLK_FUTEX && t->fpi && t != not && t->fkey[0] == key[0] && t->fkey[1] == key[1])
            return t;
    return NULL;
}


/* The PI futex at va of process p goes from its owner to waiter w, if the
 * word is still `word`: it then names w with FUTEX_WAITERS (and `died` if
 * the owner ended holding it), and w's FUTEX_LOCK_PI returns 0. 0, 1 if
 * the word had changed (*word says to what), or -EFAULT. */
static int pi_hand_over(struct lx_proc *p, uint64_t va, uint32_t *word, struct lx_thread *w, uint32_t died)
{
    uint32_t old;
    if (lx_vma_cas32(p, va, *word, FUTEX_WAITERS | died | (uint32_t)w->tid, &old))
        return -LX_EFAULT;
    if (old != *word) {
        *word = old;
        return 1;
    }
    for (struct lx_thread *o = lx_waiting_on(LX_BLK_FUTEX, 0); o; o = o->wq_next)
        if (o->blk.kind == LX_BLK_FUTEX && o->fpi && o->fkey[0] == w->fkey[0] && o->fkey[1] == w->fkey[1])
            o->fowner = w->tid;                 /* the others wait for the new owner now */
    lx_wake_resume(w, 0);
    return 0;
}

/* FUTEX_LOCK_PI (absolute 2: its timeout is a CLOCK_REALTIME time),
 * FUTEX_LOCK_PI2 (absolute 1, or 2 with FUTEX_CLOCK_REALTIME) and
 * FUTEX_TRYLOCK_PI (try). A call that waited and runs again (the timeout,
 * a signal) takes the lock if it is free by then. */
static int64_t lock_pi(struct lx_ctx *c, uint64_t uaddr, uint64_t uts, int private, int absolute, int try)
{
    struct lx_thread *t = c->t;
    struct lx_proc *mp = lx_memory_of(c->p);
    uint64_t ns = 0, key[2];
    int64_t err;
    if (uts && !try && (err = lx_timespec_in(c, uts, &ns)) != 0)
        return err;
    uint32_t word, old;
    if (lx_vma_peek(mp, uaddr, &word, sizeof(word)))
        return -LX_EFAULT;
    if ((err = key_of(c->p, uaddr, private, key)))
        return err;
    for (int tries = 0; tries < CAS_TRIES; tries++) {
        if ((word & FUTEX_TID_MASK) == (uint32_t)t->tid)
            return -LX_EDEADLK;
        if (!(word & FUTEX_TID_MASK)) {
            /* Free (perhaps after an owner died): the caller's now. */
            uint32_t mine = (word & FUTEX_OWNER_DIED) | (uint32_t)t->tid | (pi_waiter(key, t) ? FUTEX_WAITERS : 0);
            if (lx_vma_cas32(mp, uaddr, word, mine, &old))
                return -LX_EFAULT;
            if (old == word)
                return 0;
            word = old;
            continue;
        }
        if (!lx_thread_of_tid((int)(word & FUTEX_TID_MASK)))
            return -LX_ESRCH;                   /* no thread has the tid the word names */
        if (try)
            return -LX_EAGAIN;
        if (!(word & FUTEX_WAITERS)) {
            if (lx_vma_cas32(mp, uaddr, word, word | FUTEX_WAITERS, &old))
                return -LX_EFAULT;
            if (old != word) {
                word = old;
                continue;
            }
            word |= FUTEX_WAITERS;
        }
        /* (A signal that woke it: the call blocks again, and
         * lx_sig_interrupted runs the handler and then the call again,
         * never EINTR: signal.c.) */
        if (uts && (err = arm_timeout(c, ns, absolute)))   /* (absolute: 1 or 2 here) */
            return err;
        t->fkey[0] = key[0];
        t->fkey[1] = key[1];
        t->fbits = FUTEX_BITSET_ANY;
        t->fpi = 1;
        t->fuaddr = uaddr;
        t->fowner = (int)(word & FUTEX_TID_MASK);
        if (uts)
            lx_timer_note(t->deadline);
        return lx_block(c, LX_BLK_FUTEX, 0);
    }
    return LX_AGAIN;
}

static int64_t unlock_pi(struct lx_ctx *c, uint64_t uaddr, int private)
{
    struct lx_proc *mp = lx_memory_of(c->p);
    uint32_t word, old;
    uint64_t key[2];
    int64_t err;
    if (lx_vma_peek(mp, uaddr, &word, sizeof(word)))
        return -LX_EFAULT;
    if ((err = key_of(c->p, uaddr, private, key)))
        return err;
    for (int tries = 0; tries < CAS_TRIES; tries++) {
        if ((word & FUTEX_TID_MASK) != (uint32_t)c->t->tid)
            return -LX_EPERM;
        struct lx_thread *w = pi_waiter(key, NULL);
        if (w) {
            int r = pi_hand_over(mp, uaddr, &word, w, 0);
            if (r <= 0)
                return r;
            continue;
        }
        if (lx_vma_cas32(mp, uaddr, word, 0, &old))
            return -LX_EFAULT;
        if (old == word)
            return 0;
        word = old;
    }
    return LX_AGAIN;
}

int lx_futex_never_eintr(uint64_t op)
{
    uint32_t cmd = (uint32_t)op & FUTEX_CMD_MASK;
    return cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2;
}

int64_t lx_sys_futex(struct lx_ctx *c, uint64_t uaddr, uint64_t uop, uint64_t val, uint64_t uts, uint64_t uaddr2,
                     uint64_t val3)
{
    uint32_t op = (uint32_t)uop, cmd = op & FUTEX_CMD_MASK;
    int private = (op & FUTEX_PRIVATE_FLAG) != 0;
    if ((op & FUTEX_CLOCK_REALTIME) && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT_REQUEUE_PI &&
        cmd != FUTEX_LOCK_PI2)
        return -LX_ENOSYS;
    if (cmd == FUTEX_WAIT_REQUEUE_PI || cmd == FUTEX_CMP_REQUEUE_PI) {
        static int said;
        if (!said++)
            lx_log("pid %d (%s): the requeue-to-PI futex operations are not supported, returning ENOSYS", c->p->pid,
                   c->p->comm);
        return -LX_ENOSYS;
    }
    if ((cmd > FUTEX_WAKE_BITSET && cmd != FUTEX_LOCK_PI2) || cmd == FUTEX_FD)
        return -LX_ENOSYS;
    if (uaddr & 3)
        return -LX_EINVAL;
    if (!lx_range_ok(uaddr, 4))
        return -LX_EFAULT;
    uint64_t key[2], key2[2];
    int64_t err;
    int n = (int32_t)val <= 0 ? 1 : (int)(uint32_t)val;  /* Linux wakes one for a count of 0 or less */
    switch (cmd) {
    case FUTEX_LOCK_PI:
        return lock_pi(c, uaddr, uts, private, 2, 0);
    case FUTEX_LOCK_PI2:
        return lock_pi(c, uaddr, uts, private, (op & FUTEX_CLOCK_REALTIME) ? 2 : 1, 0);
    case FUTEX_TRYLOCK_PI:
        return lock_pi(c, uaddr, 0, private, 0, 1);
    case FUTEX_UNLOCK_PI:
        return unlock_pi(c, uaddr, private);
    case FUTEX_WAIT:
        return futex_wait(c, uaddr, (uint32_t)val, uts, FUTEX_BITSET_ANY, private, 0);
    case FUTEX_WAIT_BITSET:
        if (!(uint32_t)val3)
            return -LX_EINVAL;
        return futex_wait(c, uaddr, (uint32_t)val, uts, (uint32_t)val3, private,
                          (op & FUTEX_CLOCK_REALTIME) ? 2 : 1);
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
        if (cmd == FUTEX_WAKE_BITSET && !(uint32_t)val3)
            return -LX_EINVAL;
        if ((err = key_of(c->p, uaddr, private, key)))
            return err;
        return wake(key, n, cmd == FUTEX_WAKE ? FUTEX_BITSET_ANY : (uint32_t)val3);
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE: {
        int n2 = (int32_t)uts < 0 ? -1 : (int)(uint32_t)uts;   /* the timeout argument is the count here */
        if ((int32_t)val < 0 || n2 < 0)
            return -LX_EINVAL;
        if (uaddr2 & 3)
            return -LX_EINVAL;
        if (!lx_range_ok(uaddr2, 4))
            return -LX_EFAULT;
        if ((err = key_of(c->p, uaddr, private, key)) || (err = key_of(c->p, uaddr2, private, key2)))
            return err;
        if (cmd == FUTEX_CMP_REQUEUE) {
            uint32_t now;
            if (lx_copy_in(c, &now, uaddr, sizeof(now)))
                return -LX_EFAULT;
            if (now != (uint32_t)val3)
                return -LX_EAGAIN;
        }
        int woken = wake(key, (int)(uint32_t)val, FUTEX_BITSET_ANY);
        return woken + requeue(key, key2, n2);
    }
    case FUTEX_WAKE_OP: {
        int n2 = (int32_t)uts <= 0 ? 1 : (int)(uint32_t)uts;
        int cmp_true = 0;
        if ((err = key_of(c->p, uaddr, private, key)))
            return err;
        if (!lx_range_ok(uaddr2, 4))
            return -LX_EFAULT;
        if ((err = key_of(c->p, uaddr2, private, key2)))
            return err;
        if ((err = wake_op(c, uaddr2, (uint32_t)val3, &cmp_true)))
            return err;
        int woken = wake(key, n, FUTEX_BITSET_ANY);
        if (cmp_true)
            woken += wake(key2, n2, FUTEX_BITSET_ANY);
        return woken;
    }
    default:
        return -LX_ENOSYS;
    }
}

/* ---------------------------------------------------------------- robust lists, and owners that end */

int64_t lx_sys_set_robust_list(struct lx_ctx *c, uint64_t head, uint64_t len)
{
    if (len != 24)                              /* sizeof(struct robust_list_head) */
        return -LX_EINVAL;
    c->t->robust = head;
    return 0;
}

int64_t lx_sys_get_robust_list(struct lx_ctx *c, int64_t tid, uint64_t uhead, uint64_t ulen)
{
    const struct lx_thread *t = tid ? lx_thread_of_tid((int)tid) : c->t;
    if (!t || tid < 0 || tid > (int64_t)FUTEX_TID_MASK)
        return -LX_ESRCH;
    uint64_t head = t->robust, len = 24;
    if (lx_copy_out(c, ulen, &len, sizeof(len)) || lx_copy_out(c, uhead, &head, sizeof(head)))
        return -LX_EFAULT;
    return 0;
}

/* Thread t (tid) of p ended holding the futex word at va: Linux's
 * handle_futex_death. `pending` is the list's op_pending entry. */
static void owner_died(struct lx_proc *p, uint64_t va, int tid, int pi, int pending)
{
    uint32_t word, old;
    uint64_t key[2], mine[2] = { (uint64_t)(uintptr_t)p, va };
    if ((va & 3) || lx_vma_peek(p, va, &word, sizeof(word)) || key_of(p, va, 0, key))
        return;
    if (pending && !pi && word == 0) {
        if (!wake(key, 1, FUTEX_BITSET_ANY))    /* it died between unlocking and leaving the list */
            wake(mine, 1, FUTEX_BITSET_ANY);
        return;
    }
    for (int tries = 0; tries < CAS_TRIES; tries++) {
        if ((word & FUTEX_TID_MASK) != (uint32_t)tid)
            return;
        /* (A PI word's waiters get it next, from lx_futex_thread_gone.) */
        if (lx_vma_cas32(p, va, word, (word & FUTEX_WAITERS) | FUTEX_OWNER_DIED, &old))
            return;
        if (old == word)
            break;
        word = old;
    }
    if (!pi && (word & FUTEX_WAITERS) && (word & FUTEX_TID_MASK) == (uint32_t)tid) {
        /* One waiter, private or shared: a word of private memory meets both on Linux. */
        if (!wake(key, 1, FUTEX_BITSET_ANY))
            wake(mine, 1, FUTEX_BITSET_ANY);
    }
}

/* An entry of the list: the address, and the PI flag in its lowest bit. */
static int robust_entry(struct lx_proc *p, uint64_t at, uint64_t *entry, int *pi)
{
    uint64_t v;
    if (lx_vma_peek(p, at, &v, sizeof(v)))
        return -1;
    *entry = v & ~1ull;
    *pi = (int)(v & 1);
    return 0;
}

void lx_futex_thread_gone(struct lx_thread *t)
{
    struct lx_proc *p = lx_memory_of(t->p);
    uint64_t head = t->robust, entry, pending, next;
    int64_t offset;
    int pi, pending_pi, next_pi;
    t->robust = 0;
    if (head && !robust_entry(p, head, &entry, &pi) && !lx_vma_peek(p, head + 8, &offset, sizeof(offset)) &&
        !robust_entry(p, head + 16, &pending, &pending_pi)) {
        int bad = 0;
        for (unsigned n = 0; entry != head && n < ROBUST_LIST_LIMIT && !bad; n++) {
            /* The next one is read first: the owner's death may free this entry. */
            bad = robust_entry(p, entry, &next, &next_pi);
            if (entry != pending)
                owner_died(p, entry + (uint64_t)offset, t->tid, pi, 0);
            entry = next;
            pi = next_pi;
        }
        if (pending && !bad)                    /* (Linux stops at an entry it cannot read) */
            owner_died(p, pending + (uint64_t)offset, t->tid, pending_pi, 1);
    }
    /* Each PI futex it holds that a thread waits for goes to its first
     * waiter, with FUTEX_OWNER_DIED (Linux's exit_pi_state_list). One
     * that cannot be handed over (its word unmapped, or changed by hand)
     * wakes to run its lock again. */
    for (struct lx_thread *w = lx_waiting_on(LX_BLK_FUTEX, 0); w; w = w->wq_next) {
        if (w->blk.kind == LX_BLK_FUTEX && w->fpi && w != t && w->fowner == t->tid) {
            struct lx_proc *wp = lx_memory_of(w->p);
            uint32_t word;
            int r = lx_vma_peek(wp, w->fuaddr, &word, sizeof(word)) ? -1 : 1;
            for (int tries = 0; tries < CAS_TRIES && r == 1; tries++)
                r = pi_hand_over(wp, w->fuaddr, &word, w, FUTEX_OWNER_DIED);
            if (r != 0)
                lx_wake(w, 0);
        }
    }
}
