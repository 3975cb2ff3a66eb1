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
 * The priority-inheritance operations are not implemented (ENOSYS).
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
#define LX_ETIMEDOUT            110

/* The key of the word at uaddr for process p; 0 or -EFAULT. */
static int key_of(struct lx_proc *p, uint64_t uaddr, int private, uint64_t key[2])
{
    if (private) {
        key[0] = (uint64_t)(uintptr_t)p;
        key[1] = uaddr;
        return 0;
    }
    for (unsigned i = 0; i < p->nvmas; i++) {
        const struct lx_vma *v = &p->vmas[i];
        if (v->start <= uaddr && uaddr < v->end) {
            if (!v->obj)
                return -LX_EFAULT;              /* reserved, nothing mapped */
            key[0] = (uint64_t)(uintptr_t)v->obj | 1;  /* (objects are aligned: never a process's key) */
            key[1] = v->off + (uaddr - v->start);
            return 0;
        }
    }
    return -LX_EFAULT;
}

/* Wake up to n threads waiting on key whose bits meet `bits`; how many. */
static int wake(const uint64_t key[2], int n, uint32_t bits)
{
    int woken = 0;
    for (struct lx_thread *t = lx_waiting_next(NULL); t && woken < n; t = lx_waiting_next(t)) {
        if (t->blk.kind == LX_BLK_FUTEX && t->fkey[0] == key[0] &&
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
    for (struct lx_thread *t = lx_waiting_next(NULL); t && moved < n; t = lx_waiting_next(t)) {
        if (t->blk.kind == LX_BLK_FUTEX && t->fkey[0] == from[0] &&
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
        if (absolute && !t->timed) {
            uint64_t base = absolute > 1 ? lx_realtime_base() : 0;     /* CLOCK_REALTIME: the calendar's */
            t->timed = 1;
            t->timed_calendar = absolute > 1;
            t->deadline = ns > base ? ns - base : 0;
        }
        if (lx_deadline_passed(c, ns))
            return -LX_ETIMEDOUT;
        int64_t err = lx_timer_start();
        if (err)
            return err;
    }
    int64_t err = key_of(c->p, uaddr, private, t->fkey);
    if (err)
        return err;
    t->fbits = bits;
    if (uts)
        lx_timer_update();
    return lx_block(c, LX_BLK_FUTEX, 0);
}

/* FUTEX_WAKE_OP's operation on the old value, and its comparison. */
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
    uint32_t old;
    if ((uaddr2 & 3) || lx_copy_in(c, &old, uaddr2, sizeof(old)))
        return (uaddr2 & 3) ? -LX_EINVAL : -LX_EFAULT;
    uint32_t new = op == 0 ? oparg : op == 1 ? old + oparg : op == 2 ? (old | oparg) :
                   op == 3 ? (old & ~oparg) : (old ^ oparg);
    if (lx_copy_out(c, uaddr2, &new, sizeof(new)))
        return -LX_EFAULT;
    int32_t o = (int32_t)old, a = (int32_t)(cmparg << 20) >> 20;   /* cmparg is a signed 12-bit value */
    *cmp_true = cmp == 0 ? o == a : cmp == 1 ? o != a : cmp == 2 ? o < a : cmp == 3 ? o <= a : cmp == 4 ? o > a : o >= a;
    return 0;
}

int64_t lx_sys_futex(struct lx_ctx *c, uint64_t uaddr, uint64_t uop, uint64_t val, uint64_t uts, uint64_t uaddr2,
                     uint64_t val3)
{
    uint32_t op = (uint32_t)uop, cmd = op & FUTEX_CMD_MASK;
    int private = (op & FUTEX_PRIVATE_FLAG) != 0;
    if ((op & FUTEX_CLOCK_REALTIME) && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT_REQUEUE_PI &&
        cmd != FUTEX_LOCK_PI2)
        return -LX_ENOSYS;
    if (cmd >= FUTEX_LOCK_PI && cmd <= FUTEX_TRYLOCK_PI) {
        static int said;
        if (!said++)
            lx_log("pid %d (%s): priority-inheritance futexes are not supported, returning ENOSYS", c->p->pid,
                   c->p->comm);
        return -LX_ENOSYS;
    }
    if (cmd > FUTEX_WAKE_BITSET || cmd == FUTEX_FD)
        return -LX_ENOSYS;
    if (uaddr & 3)
        return -LX_EINVAL;
    if (!lx_range_ok(uaddr, 4))
        return -LX_EFAULT;
    uint64_t key[2], key2[2];
    int64_t err;
    int n = (int32_t)val <= 0 ? 1 : (int)(uint32_t)val;  /* Linux wakes one for a count of 0 or less */
    switch (cmd) {
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
