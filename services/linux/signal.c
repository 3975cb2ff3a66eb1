/*
 * Signals: rt_sigaction, rt_sigprocmask, rt_sigpending, rt_sigsuspend,
 * rt_sigtimedwait, sigaltstack, kill, tkill, tgkill, rt_sigreturn; the
 * timed waits (nanosleep, clock_nanosleep; ppoll's and pselect6's timeouts
 * and masks for poll.c) and the interval timers (setitimer, getitimer: musl's and glibc's
 * alarm; ITIMER_VIRTUAL and ITIMER_PROF in the process's CPU time).
 *
 * A signal sent to a process becomes pending; what its action says
 * happens at once when it can (a default action that ends or stops the
 * process, a handler for a process that runs user code or waits in a
 * call), otherwise when the process's current call is answered:
 *
 * - on the way out of a system call (lx_sig_reply): the thread is stopped
 *   in its call, so its registers are read, a frame built on its stack
 *   for each pending signal (Linux's struct rt_sigframe: siginfo,
 *   ucontext with the sigcontext, the FP/SIMD record, an ESR record for a
 *   fault, the terminating null record), the registers set to enter the
 *   handler, and the call answered;
 * - a process waiting in a call (its reply kept) is woken to run the call
 *   again with `intr` set: the call then answers EINTR, or, for a call
 *   Linux restarts and a handler with SA_RESTART, the handler is entered
 *   with the `svc` itself as the place to come back to;
 * - a process running user code is suspended, its registers read, the
 *   frame written through its memory objects, the registers set, and it
 *   is resumed. If it was on its way into a call instead, the call's
 *   answer delivers.
 *
 * A handler returns through x30: sa_restorer when SA_RESTORER is set (musl
 * always sets it), otherwise LX_SIGRETURN_VA, an address in the thread's
 * control page that cannot execute: the instruction fault there is taken
 * as rt_sigreturn (Linux uses the vDSO's trampoline; Petrel has no vDSO).
 */
#include "lx.h"

#define SIG_DFL         0
#define SIG_IGN         1
#define SA_NOCLDSTOP    0x00000001
#define SA_NOCLDWAIT    0x00000002
#define SA_SIGINFO      0x00000004
#define SA_EXPOSE_TAGBITS 0x00000800
#define SA_RESTORER     0x04000000
#define SA_ONSTACK      0x08000000
#define SA_RESTART      0x10000000
#define SA_NODEFER      0x40000000
#define SA_RESETHAND    0x80000000u
#define SA_UAPI         (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_EXPOSE_TAGBITS | SA_RESTORER | SA_ONSTACK | \
                         SA_RESTART | SA_NODEFER | SA_RESETHAND)
#define SIG_BLOCK       0
#define SIG_UNBLOCK     1
#define SIG_SETMASK     2
#define SS_ONSTACK      1
#define SS_DISABLE      2
#define SS_AUTODISARM   (1u << 31)
#define MINSIGSTKSZ     5120
#define UNBLOCKABLE     (LX_SIGBIT(LX_SIGKILL) | LX_SIGBIT(LX_SIGSTOP))
#define SYNCHRONOUS     (LX_SIGBIT(LX_SIGSEGV) | LX_SIGBIT(LX_SIGBUS) | LX_SIGBIT(LX_SIGILL) | \
                         LX_SIGBIT(LX_SIGTRAP) | LX_SIGBIT(LX_SIGFPE) | LX_SIGBIT(LX_SIGSYS))
#define SEGV_MAPERR     1
#define SEGV_ACCERR     2
#define BUS_ADRALN      1
#define BUS_ADRERR      2
#define ILL_ILLOPC      1
#define TRAP_BRKPT      1
#define NS              1000000000ull

/* System call numbers the restart rules name. */

/* ---------------------------------------------------------------- the frame (Linux's arm64 layout) */
struct lx_siginfo {
    int32_t signo, errno_, code, pad;
    union {
        struct { int32_t pid, uid, status, pad; int64_t utime, stime; } chld;   /* also kill's pid, uid */
        uint64_t addr;
        uint8_t raw[112];
    } u;
};

struct lx_stack {
    uint64_t sp;
    int32_t flags, pad;
    uint64_t size;
};

struct lx_sigcontext {
    uint64_t fault_address;
    uint64_t regs[31];
    uint64_t sp, pc, pstate;
    uint64_t pad;
    uint8_t reserved[4096];     /* records: FP/SIMD, ESR, ..., a null one */
};

struct lx_ucontext {
    uint64_t flags, link;
    struct lx_stack stack;
    uint64_t sigmask;
    uint8_t unused[120];        /* the rest of a 1024-bit sigset_t */
    uint64_t pad;               /* uc_mcontext is 16-byte aligned */
    struct lx_sigcontext mc;
};

struct lx_rt_sigframe {
    struct lx_siginfo info;
    struct lx_ucontext uc;
};

struct lx_ctx_head { uint32_t magic, size; };

struct lx_fpsimd_context {
    struct lx_ctx_head head;
    uint32_t fpsr, fpcr;
    uint64_t vregs[64];
};

struct lx_esr_context {
    struct lx_ctx_head head;
    uint64_t esr;
};

#define FPSIMD_MAGIC    0x46508001
#define ESR_MAGIC       0x45535201

_Static_assert(sizeof(struct lx_siginfo) == 128, "siginfo");
_Static_assert(__builtin_offsetof(struct lx_ucontext, mc) == 176, "uc_mcontext");
_Static_assert(__builtin_offsetof(struct lx_sigcontext, reserved) == 288, "__reserved");
_Static_assert(sizeof(struct lx_rt_sigframe) == 4688, "rt_sigframe");
_Static_assert(sizeof(struct lx_fpsimd_context) == 528, "fpsimd_context");

static struct lx_rt_sigframe frame;     /* one at a time */
#define RESERVED_OFF    __builtin_offsetof(struct lx_rt_sigframe, uc.mc.reserved)
#define RESERVED_FIRST  1024                /* of the records' space, read first at rt_sigreturn */

static int valid(uint64_t sig) { return sig >= 1 && sig <= LX_NSIG; }

enum { ACT_TERM, ACT_IGNORE, ACT_STOP, ACT_CONT };

static int default_action(int sig)
{
    switch (sig) {
    case LX_SIGCHLD: case LX_SIGURG: case LX_SIGWINCH:
        return ACT_IGNORE;
    case LX_SIGCONT:
        return ACT_CONT;
    case LX_SIGSTOP: case LX_SIGTSTP: case LX_SIGTTIN: case LX_SIGTTOU:
        return ACT_STOP;
    default:
        return ACT_TERM;
    }
}

/* Does sig do nothing to t's process (ignored, and not blocked by t: a
 * blocked one waits)? */
static int ignored(struct lx_thread *t, int sig)
{
    const struct lx_sigaction *ka = &t->p->act[sig - 1];
    if (sig == LX_SIGKILL || sig == LX_SIGSTOP || (t->blocked & LX_SIGBIT(sig)))
        return 0;
    return ka->handler == SIG_IGN || (ka->handler == SIG_DFL && (default_action(sig) == ACT_IGNORE ||
                                                                 default_action(sig) == ACT_CONT));
}

/* The next signal for t to act on: pending (for it or its process) and
 * not blocked, the synchronous ones (faults) first, then the lowest; 0 if
 * none. */
static int next_signal(struct lx_thread *t)
{
    uint64_t ready = (t->pending | t->p->pending) & ~t->blocked;
    if (!ready)
        return 0;
    if (ready & SYNCHRONOUS)
        ready &= SYNCHRONOUS;
    return __builtin_ctzll(ready) + 1;
}

/* Is sp on t's alternate signal stack? */
static int on_altstack(struct lx_thread *p, uint64_t sp)
{
    if (p->ss_flags & SS_AUTODISARM)
        return 0;
    return sp > p->ss_sp && sp - p->ss_sp <= p->ss_size;
}

static uint32_t altstack_flags(struct lx_thread *p, uint64_t sp)
{
    if (!p->ss_size)
        return SS_DISABLE;
    return on_altstack(p, sp) ? SS_ONSTACK : 0;
}

/* Write to t's memory: through the current call, or (call NULL) through
 * the memory objects of a suspended thread's process. */
static int put(struct lx_thread *t, struct svc_call *call, uint64_t va, const void *src, uint64_t len)
{
    struct lx_proc *p = t->p;
    if (call) {
        struct lx_ctx c = { p, t, 0, call, call->mr, 0, 0 };
        return lx_copy_out(&c, va, src, len);
    }
    return lx_range_ok(va, len) ? lx_vma_poke(p, va, src, len) : -LX_EFAULT;
}

static void fill_siginfo(struct lx_siginfo *info, int sig, const struct lx_sinfo *si)
{
    memset(info, 0, sizeof(*info));
    info->signo = sig;
    info->code = si->code;
    if (sig == LX_SIGCHLD && si->code > 0) {
        info->u.chld.pid = si->pid;
        info->u.chld.status = si->status;
    } else if (si->code > 0 && (sig == LX_SIGSEGV || sig == LX_SIGBUS || sig == LX_SIGILL || sig == LX_SIGTRAP ||
                                sig == LX_SIGFPE)) {
        info->u.addr = si->addr;
    } else if (si->code <= 0) {
        info->u.chld.pid = si->pid;             /* si_pid, or a timer's si_tid */
        if (si->code == LX_SI_TIMER)
            info->u.chld.uid = si->status;      /* si_overrun */
        if (si->code == LX_SI_QUEUE || si->code == LX_SI_TIMER)
            memcpy(info->u.raw + 8, &si->value, 8);    /* si_value */
    }
}

/* Build the frame for sig on top of register state r and enter its
 * handler: r becomes the handler's entry state. 0 or -EFAULT. */
static int setup_frame(struct lx_thread *p, struct svc_call *call, int sig, const struct lx_sinfo *si,
                       struct petrel_regs *r, const struct petrel_fpregs *fp)
{
    struct lx_sigaction *ka = &p->p->act[sig - 1];
    uint64_t sp = r->sp;
    if ((ka->flags & SA_ONSTACK) && altstack_flags(p, sp) == 0)
        sp = p->ss_sp + p->ss_size;
    uint64_t record = (sp - 16) & ~15ull;          /* x29, x30: a frame record for unwinders */
    uint64_t sf = record - sizeof(frame);
    memset(&frame, 0, sizeof(frame));
    if (ka->flags & SA_SIGINFO)
        fill_siginfo(&frame.info, sig, si);
    struct lx_ucontext *uc = &frame.uc;
    uc->stack.sp = p->ss_sp;
    uc->stack.flags = (int32_t)(altstack_flags(p, r->sp) | (p->ss_flags & SS_AUTODISARM));
    uc->stack.size = p->ss_size;
    uint64_t old_mask = p->restore_mask ? p->saved_mask : p->blocked;
    uc->sigmask = old_mask;
    uc->mc.fault_address = p->fault_addr;
    memcpy(uc->mc.regs, r->x, sizeof(r->x));
    uc->mc.sp = r->sp;
    uc->mc.pc = r->pc;
    uc->mc.pstate = r->pstate;
    struct lx_fpsimd_context fc = { { FPSIMD_MAGIC, sizeof(fc) }, (uint32_t)fp->fpsr, (uint32_t)fp->fpcr, { 0 } };
    memcpy(fc.vregs, fp->q, sizeof(fc.vregs));
    memcpy(uc->mc.reserved, &fc, sizeof(fc));
    uint64_t used = sizeof(fc);
    if (p->fault_esr) {
        struct lx_esr_context ec = { { ESR_MAGIC, sizeof(ec) }, p->fault_esr };
        memcpy(uc->mc.reserved + used, &ec, sizeof(ec));
        used += sizeof(ec);
    }
    used += sizeof(struct lx_ctx_head);         /* the null record (zeros) */
    /* Like Linux, only what is used: the rest of the records' space keeps
     * whatever the stack held. */
    uint64_t rec[2] = { r->x[29], r->x[30] };
    if (!lx_range_ok(sf, record + sizeof(rec) - sf) || put(p, call, record, rec, sizeof(rec)) ||
        put(p, call, sf, &frame, RESERVED_OFF + used))
        return -LX_EFAULT;
    if (p->ss_flags & SS_AUTODISARM) {
        p->ss_sp = p->ss_size = 0;
        p->ss_flags = SS_DISABLE;
    }
    p->restore_mask = 0;
    p->blocked = (old_mask | ka->mask | ((ka->flags & SA_NODEFER) ? 0 : LX_SIGBIT(sig))) & ~UNBLOCKABLE;
    r->x[0] = (uint64_t)sig;
    if (ka->flags & SA_SIGINFO) {
        r->x[1] = sf;
        r->x[2] = sf + __builtin_offsetof(struct lx_rt_sigframe, uc);
    }
    r->x[29] = record;
    r->x[30] = (ka->flags & SA_RESTORER) ? ka->restorer : LX_SIGRETURN_VA;
    r->sp = sf;
    r->pc = ka->handler;
    if (ka->flags & SA_RESETHAND)
        ka->handler = SIG_DFL;
    return 0;
}

static void stop(struct lx_proc *p, int sig);

/* Take signal sig off what t has pending (its own first, then its
 * process's), with its info. */
static struct lx_sinfo take(struct lx_thread *t, int sig)
{
    uint64_t bit = LX_SIGBIT(sig);
    struct lx_proc *p = t->p;
    int own = (t->pending & bit) != 0;
    struct lx_sinfo si = own ? t->sinfo[sig - 1] : p->sinfo[sig - 1];
    if (own)
        t->pending &= ~bit;
    else
        p->pending &= ~bit;
    for (int i = 0; i < p->nrtq; i++) {
        if (p->rtq[i].sig != sig || p->rtq[i].tid != (own ? t->tid : 0))
            continue;
        if (own) {                              /* the next instance of a real-time signal: still pending */
            t->sinfo[sig - 1] = p->rtq[i].si;
            t->pending |= bit;
        } else {
            p->sinfo[sig - 1] = p->rtq[i].si;
            p->pending |= bit;
        }
        memmove(&p->rtq[i], &p->rtq[i + 1], (size_t)(p->nrtq - i - 1) * sizeof(p->rtq[0]));
        p->nrtq--;
        break;
    }
    if (si.code == LX_SI_TIMER)
        lx_ptimer_taken(p, &si);                /* the overruns it stands for */
    return si;
}

void lx_sig_thread_gone(struct lx_thread *t)
{
    struct lx_proc *p = t->p;
    int k = 0;
    for (int i = 0; i < p->nrtq; i++)
        if (p->rtq[i].tid != t->tid)
            p->rtq[k++] = p->rtq[i];
    p->nrtq = k;
}

/* Forget the queued instances of sig (it is ignored or taken away). */
static void drop_queued(struct lx_proc *p, int sig)
{
    int k = 0;
    for (int i = 0; i < p->nrtq; i++)
        if (p->rtq[i].sig != sig)
            p->rtq[k++] = p->rtq[i];
    p->nrtq = k;
}

/* Act on t's pending signals before it goes on from register state *r
 * (t is stopped: in its current call `call`, or suspended with call
 * NULL): default actions, and a frame for each handled signal (*entered
 * set). 0, or LX_NORETURN when its process ended. */
static int act(struct lx_thread *t, struct svc_call *call, struct petrel_regs *r, int *entered)
{
    struct lx_proc *p = t->p;
    struct petrel_fpregs fp;
    int have_fp = 0;
    for (int sig; (sig = next_signal(t)); ) {
        struct lx_sinfo si = take(t, sig);
        struct lx_sigaction *ka = &p->act[sig - 1];
        if (sig != LX_SIGKILL && sig != LX_SIGSTOP && ka->handler == SIG_IGN)
            continue;
        if (sig == LX_SIGKILL || sig == LX_SIGSTOP || ka->handler == SIG_DFL) {
            int a = default_action(sig);
            if (a == ACT_TERM) {
                lx_proc_end(p, sig);
                return LX_NORETURN;
            }
            if (a == ACT_STOP)
                stop(p, sig);
            continue;
        }
        if (!have_fp && svc_thread_read_fp(t->thread, &fp))
            memset(&fp, 0, sizeof(fp));
        have_fp = 1;
        if (setup_frame(t, call, sig, &si, r, &fp)) {
            lx_log("pid %d (%s): no room for the frame of signal %d at sp 0x%lx", p->pid, p->comm, sig,
                   (unsigned long)r->sp);
            lx_proc_end(p, LX_SIGSEGV);
            return LX_NORETURN;
        }
        *entered = 1;
    }
    if (t->restore_mask) {
        t->blocked = t->saved_mask;
        t->restore_mask = 0;
    }
    return 0;
}

/* Reply to p's current call with its whole register state r. */
static void reply_regs(struct lx_ctx *c, const struct petrel_regs *r)
{
    uint64_t resume[1] = { FAULT_REPLY_RESUME };
    if (svc_thread_write_regs(c->t->thread, r)) {
        lx_log("pid %d (%s): cannot set its registers", c->p->pid, c->p->comm);
        lx_proc_end(c->p, LX_SIGSEGV);
        return;
    }
    svc_reply(c->call, 0, 1, resume);
}

void lx_sig_reply(struct lx_ctx *c, uint64_t pc, int64_t result)
{
    struct lx_thread *p = c->t;
    const uint64_t *mr = c->mr;
    if (p->restore_mask && result != -LX_EINTR) {
        p->blocked = p->saved_mask;             /* a call that was not interrupted: its mask goes first */
        p->restore_mask = 0;
    }
    if (!((p->pending | p->p->pending) & ~p->blocked) && !p->restore_mask) {
        uint64_t resume[4] = { c->yield ? FAULT_REPLY_YIELD : FAULT_REPLY_RESUME, pc, mr[FAULT_MR_SP],
                               (uint64_t)result };
        svc_reply(c->call, 0, 4, resume);
        return;
    }
    struct petrel_regs r;
    if (svc_thread_read_regs(p->thread, &r)) {
        uint64_t resume[4] = { FAULT_REPLY_RESUME, pc, mr[FAULT_MR_SP], (uint64_t)result };
        svc_reply(c->call, 0, 4, resume);
        return;
    }
    r.pc = pc;
    r.sp = mr[FAULT_MR_SP];
    r.x[0] = (uint64_t)result;
    int entered = 0;
    if (act(p, c->call, &r, &entered) == LX_NORETURN)
        return;
    if (p->p->stopped)
        svc_thread_suspend(p->thread);          /* it stays in its call's answer until continued */
    reply_regs(c, &r);
}

/* Linux restarts these after a handler with SA_RESTART (ERESTARTSYS);
 * the timed waits, rt_sigsuspend and rt_sigtimedwait always give EINTR. */
static int restartable(uint64_t nr)
{
    return nr == NR_read || nr == NR_write || nr == NR_readv || nr == NR_writev || nr == NR_wait4 ||
           nr == NR_waitid || nr == NR_fcntl || nr == NR_flock;   /* (fcntl: F_SETLKW, the one that waits) */
}

int lx_sig_interrupted(struct lx_ctx *c, uint64_t nr)
{
    struct lx_thread *p = c->t;
    int sig = next_signal(p);
    p->intr = 0;                                /* (a wake-up whose signal another thread took: it waits
                                                 * again, still on what it waits for) */
    if (!sig || p->blk.kind == LX_BLK_DISK)
        return 0;                               /* (a wait for the disk is not interrupted, as Linux's) */
    p->blk = (struct lx_block){ 0 };
    p->fb_frame = 0;                            /* (a pan asks for its frame afresh: fbdev.c) */
    const uint64_t *mr = c->mr;
    if (p->io.done) {                           /* a write that moved some bytes returns their count */
        int64_t done = (int64_t)p->io.done;
        p->io.done = 0;
        lx_sig_reply(c, mr[FAULT_MR_PC], done);
        return 1;
    }
    /* Some calls run again after the handler whatever SA_RESTART says,
     * as Linux's ERESTARTNOINTR (futex.c). */
    int always = nr == NR_futex && lx_futex_never_eintr(mr[FAULT_MR_X0 + 1]);
    if ((always || ((c->p->act[sig - 1].flags & SA_RESTART) && restartable(nr))) && c->p->act[sig - 1].handler > SIG_IGN) {
        struct petrel_regs r;                   /* the handler returns to the `svc` itself */
        if (svc_thread_read_regs(p->thread, &r) == 0) {
            r.pc = mr[FAULT_MR_PC] - 4;
            r.sp = mr[FAULT_MR_SP];
            int entered = 0;
            if (act(p, c->call, &r, &entered) != LX_NORETURN)
                reply_regs(c, &r);
            return 1;
        }
    }
    lx_sig_reply(c, mr[FAULT_MR_PC], -LX_EINTR);
    return 1;
}

static void deliver_later(struct lx_thread *p, int suspended);

/* t runs user code (or is about to enter a call): stop it, and enter
 * its handlers from where it is. */
static void deliver_async(struct lx_thread *p)
{
    int state = svc_thread_suspend(p->thread);
    if (state == THREAD_RUNNING) {              /* still on another core (svc_thread_suspend) */
        deliver_later(p, 1);
        return;
    }
    if (state < 0 || state == THREAD_SEND || state == THREAD_REPLY) {
        /* Suspended but not stopped yet, or on its way into a call: the
         * call's answer usually delivers the signal, but not every way
         * into the kernel ends in an answer of ours. The timer looks
         * again, so that a thread back in its own loop by then takes it. */
        svc_thread_resume(p->thread);
        deliver_later(p, 0);
        return;
    }
    struct petrel_regs r;
    if (svc_thread_read_regs(p->thread, &r)) {
        svc_thread_resume(p->thread);
        return;
    }
    int entered = 0, changed = 0;
    if (p->io.nr) {                             /* woken to run its call again, not there yet: */
        int sig = next_signal(p);
        const struct lx_sigaction *ka = sig ? &p->p->act[sig - 1] : NULL;
        int handler = ka && ka->handler > SIG_IGN;
        if (r.pc == p->io.pc - 4 && p->io.done) {
            r.pc = p->io.pc;                    /* the signal ends it, with the bytes it moved (as */
            r.x[0] = p->io.done;                /* Linux's write returns a partial count) */
            changed = 1;
        } else if (r.pc == p->io.pc - 4 && handler && !((ka->flags & SA_RESTART) && restartable(p->io.nr))) {
            r.pc = p->io.pc;                    /* a handler without SA_RESTART: EINTR, as Linux answers a
                                                 * call a signal interrupts (run again, it would look its
                                                 * descriptor up afresh: perhaps another file by now) */
            r.x[0] = (uint64_t)-LX_EINTR;
            changed = 1;
        }
        lx_io_end(p);                           /* (or, with SA_RESTART, it runs again after the handler) */
        p->timed = 0;                           /* (its wait is over: no timer wakes it any more) */
        p->timed_calendar = 0;
    }
    if (act(p, NULL, &r, &entered) == LX_NORETURN)
        return;
    if ((entered || changed) && svc_thread_write_regs(p->thread, &r)) {
        lx_proc_end(p->p, LX_SIGSEGV);
        return;
    }
    if (!p->p->stopped)
        svc_thread_resume(p->thread);
}

/* Threads deliver_async could not stop where they run: running user
 * code on another core, or on their way into the kernel. In the kernel
 * placement the personality holds the kernel, so it cannot wait for that
 * core to stop the thread; the user placement's svc_thread_suspend waits,
 * but only a while (that core may not run for long on a busy host): the
 * suspension it asked for takes hold at the interrupt the kernel sends
 * there, and the timer looks again LX_STOP_RETRY_NS later. A thread on
 * its way into a call is not left suspended (the kernel must take its
 * call), only looked at again. Kept by tid, so that a thread gone
 * meanwhile is skipped; t->stopping says which (LX_STOP_SUSPENDED, or
 * LX_STOP_RECHECK). */
#define LX_STOP_RETRY_NS    100000
#define LX_STOP_SUSPENDED   1
#define LX_STOP_RECHECK     2
static int32_t *stopping;
static uint32_t nstopping, stopping_cap;

static void deliver_later(struct lx_thread *p, int suspended)
{
    if (p->stopping) {
        if (suspended)
            p->stopping = LX_STOP_SUSPENDED;    /* (listed already: now to be resumed too) */
        return;
    }
    if (nstopping == stopping_cap) {
        uint32_t cap = stopping_cap ? stopping_cap * 2 : 16;
        int32_t *grown = lx_alloc(cap * sizeof(*grown));
        if (!grown || lx_timer_start()) {
            if (grown)
                lx_free(grown, cap * sizeof(*grown));
            if (suspended)
                svc_thread_resume(p->thread);   /* its next call delivers the signal */
            return;
        }
        if (stopping)
            memcpy(grown, stopping, nstopping * sizeof(*grown));
        lx_free(stopping, stopping_cap * sizeof(*stopping));
        stopping = grown;
        stopping_cap = cap;
    }
    stopping[nstopping++] = p->tid;
    p->stopping = suspended ? LX_STOP_SUSPENDED : LX_STOP_RECHECK;
    lx_timer_update();
}

static void kick(struct lx_thread *p);

/* The timer: each thread left suspended on another core is let go, and
 * each listed thread kicked again if its signal is still pending
 * (stopped by now, it takes it; still running, it waits for another
 * round; in a call by now, the call's answer delivers). */
static void deliver_stopped(void)
{
    int32_t *tids = stopping;
    uint32_t n = nstopping, cap = stopping_cap;
    stopping = NULL;
    nstopping = stopping_cap = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct lx_thread *t = lx_thread_of_tid(tids[i]);
        if (!t || !t->stopping)
            continue;
        int suspended = t->stopping == LX_STOP_SUSPENDED;
        t->stopping = 0;
        if (t->p->stopped || t->p->ended)
            continue;                           /* SIGCONT resumes it; an end kills it */
        if (suspended)
            svc_thread_resume(t->thread);
        kick(t);
    }
    lx_free(tids, cap * sizeof(*tids));
}

/* t has a signal to act on: wake its kept call (interrupted), or stop it
 * where it runs and enter its handler. Not while its own call is answered
 * or while its process is stopped: the answer, or SIGCONT, does it then. */
static void kick(struct lx_thread *p)
{
    if (!p->used || p->in_call || p->p->stopped || p->p->ended || !((p->pending | p->p->pending) & ~p->blocked))
        return;
    if (p->blk.token) {
        if (p->blk.kind != LX_BLK_VFORK) {
            p->intr = 1;                        /* its call runs again and is interrupted */
            lx_wake(p, 0);
        }
        return;
    }
    deliver_async(p);
}

/* ---------------------------------------------------------------- stop and continue */

static void notify_parent(struct lx_proc *p, int code, int status)
{
    struct lx_proc *parent = p->ppid ? lx_proc_of_pid(p->ppid) : NULL;
    if (!parent)
        return;
    if (!(parent->act[LX_SIGCHLD - 1].flags & SA_NOCLDSTOP)) {
        struct lx_sinfo si = { code, p->pid, status, 0, 0, 0 };
        lx_sig_send(parent, LX_SIGCHLD, &si);
    }
    lx_wake_proc(parent, LX_BLK_WAIT);
}

/* Every thread of p, one after the other: for (t = NULL; (t = each(p, t)); ). */
static struct lx_thread *each(struct lx_proc *p, struct lx_thread *after)
{
    return after ? after->sibling : p->first_thread;
}

static void stop(struct lx_proc *p, int sig)
{
    if (p->stopped)
        return;
    p->stopped = 1;
    p->report = sig;
    for (struct lx_thread *t = NULL; (t = each(p, t)); )
        if (!t->in_call)
            svc_thread_suspend(t->thread);      /* a caller is suspended just before its answer */
    notify_parent(p, LX_CLD_STOPPED, sig);
}

static void cont(struct lx_proc *p)
{
    uint64_t stops = LX_SIGBIT(LX_SIGSTOP) | LX_SIGBIT(LX_SIGTSTP) | LX_SIGBIT(LX_SIGTTIN) | LX_SIGBIT(LX_SIGTTOU);
    p->pending &= ~stops;
    for (struct lx_thread *t = NULL; (t = each(p, t)); )
        t->pending &= ~stops;
    if (!p->stopped)
        return;
    p->stopped = 0;
    p->report = 0xffff;
    for (struct lx_thread *t = NULL; (t = each(p, t)); )
        svc_thread_resume(t->thread);
    notify_parent(p, LX_CLD_CONTINUED, LX_SIGCONT);
    for (struct lx_thread *t = NULL; (t = each(p, t)); )
        kick(t);                                /* what came while it was stopped */
}

/* ---------------------------------------------------------------- sending */

/* Who takes signal `bit` sent to p's thread t (NULL: to the process): t,
 * or the first thread not blocking it; NULL while blocked everywhere. */
static struct lx_thread *taker(struct lx_proc *p, struct lx_thread *t, uint64_t bit)
{
    struct lx_thread *to = t;
    for (struct lx_thread *u = NULL; !to && (u = each(p, u)); )
        if (!(u->blocked & bit))
            to = u;
    return to && !(to->blocked & bit) ? to : NULL;
}

/* A signal for p's thread t (t NULL: for the process, any of its
 * threads not blocking it). */
static void send(struct lx_proc *p, struct lx_thread *t, int sig, const struct lx_sinfo *si)
{
    if (!p->used || p->ended || !valid((uint64_t)sig))
        return;
    struct lx_thread *main = t ? t : lx_main_thread(p);
    if (!main)
        return;                                 /* no thread left to take it */
    uint64_t bit = LX_SIGBIT(sig);
    if (sig == LX_SIGCONT || sig == LX_SIGKILL) {
        cont(p);
        /* Continuing it delivers what came while it was stopped, which
         * may have ended it (a handler without room for its frame) or
         * the thread the signal was for. */
        main = t ? t : lx_main_thread(p);
        if (!p->used || p->ended || !main || main->p != p)
            return;
    } else if (default_action(sig) == ACT_STOP) {
        p->pending &= ~LX_SIGBIT(LX_SIGCONT);
        for (struct lx_thread *u = NULL; (u = each(p, u)); )
            u->pending &= ~LX_SIGBIT(LX_SIGCONT);
    }
    if (ignored(main, sig))
        return;
    if ((t ? t->pending : p->pending) & bit) {
        if (sig >= LX_SIGRTMIN && p->nrtq < LX_RTQ) {
            p->rtq[p->nrtq].sig = sig;          /* real-time signals queue (to the process, or a thread) */
            p->rtq[p->nrtq].tid = t ? t->tid : 0;
            p->rtq[p->nrtq++].si = *si;
        }
        /* Standard signals do not. A taker running its own code is kicked
         * again all the same: the signal waits pending only while every
         * taker blocks it or is in a call whose answer delivers it, and
         * stopping one that is neither costs little. (Not a taker blocked
         * in a call: the first signal woke that call already, and waking
         * it again would run it again, and a call may send this signal.) */
        struct lx_thread *to = taker(p, t, bit);
        if (to && !to->blk.token)
            kick(to);
        return;
    }
    if (t) {
        t->pending |= bit;
        t->sinfo[sig - 1] = *si;
    } else {
        p->pending |= bit;
        p->sinfo[sig - 1] = *si;
    }
    lx_event_signal_sent();                     /* a signalfd may take it */
    for (struct lx_thread *u = NULL; (u = each(p, u)); ) {
        if ((!t || u == t) && u->blk.token && u->blk.kind == LX_BLK_SIGWAIT && (u->wait_set & bit)) {
            lx_wake(u, 0);                      /* rt_sigtimedwait runs again and takes it */
            return;
        }
    }
    struct lx_thread *to = taker(p, t, bit);
    if (!to)
        return;                                 /* blocked everywhere: it waits */
    const struct lx_sigaction *ka = &p->act[sig - 1];
    if (sig == LX_SIGKILL || sig == LX_SIGSTOP || ka->handler == SIG_DFL) {
        int a = default_action(sig);
        int in_call = 0;
        for (struct lx_thread *u = NULL; (u = each(p, u)); )
            in_call |= u->in_call;
        if (a == ACT_TERM && !in_call) {
            lx_proc_end(p, sig);
        } else if (a == ACT_TERM) {
            p->doomed = sig;                    /* the caller's call is answered first (linux.c: fault) */
        } else if (a == ACT_STOP) {
            p->pending &= ~bit;
            if (t)
                t->pending &= ~bit;
            stop(p, sig);
        } else {
            p->pending &= ~bit;
            drop_queued(p, sig);
            if (t)
                t->pending &= ~bit;
        }
        return;
    }
    kick(to);
}

void lx_sig_send(struct lx_proc *p, int sig, const struct lx_sinfo *si)
{
    send(p, NULL, sig, si);
}

void lx_sig_send_thread(struct lx_thread *t, int sig, const struct lx_sinfo *si)
{
    send(t->p, t, sig, si);
}

/* The target of kill's pid, as Linux picks: one process, a group, or all. */
static int64_t send_to(struct lx_proc *self, int32_t pid, uint64_t sig, int code)
{
    struct lx_sinfo si = { code, self->pid, 0, 0, 0, 0 };
    if (pid == INT32_MIN)
        return -LX_ESRCH;
    if (pid > 0) {
        struct lx_proc *q = lx_proc_of_pid(pid);
        if (!q)
            return -LX_ESRCH;
        if (!valid(sig) && sig)
            return -LX_EINVAL;
        if (sig)
            lx_sig_send(q, (int)sig, &si);
        return 0;
    }
    int32_t group = pid == 0 ? self->pgid : -pid;
    int found = 0;
    int64_t err = 0;
    for (struct lx_proc *q = lx_procs(); q; q = q->next) {
        if (!q->used)
            continue;                           /* (ended by a signal of this walk) */
        if (pid == -1 ? (q == self || q->pid == 1) : q->pgid != group)
            continue;
        found = 1;
        if (!valid(sig) && sig) {
            err = -LX_EINVAL;
            continue;
        }
        if (sig && q != self)
            lx_sig_send(q, (int)sig, &si);
    }
    if (found && sig && valid(sig) && pid != -1 && self->pgid == group && self->used)
        lx_sig_send(self, (int)sig, &si);       /* itself last: the others first */
    return found ? err : -LX_ESRCH;
}

int64_t lx_sys_kill(struct lx_ctx *c, int64_t pid, uint64_t sig)
{
    return send_to(c->p, (int32_t)pid, (uint32_t)sig, LX_SI_USER);   /* the signal is checked per target, as Linux */
}

int64_t lx_sys_tgkill(struct lx_ctx *c, int64_t tgid, int64_t tid, uint64_t sig, int tkill)
{
    int32_t g = (int32_t)tgid, t = (int32_t)tid;
    uint32_t s = (uint32_t)sig;
    if (t <= 0 || (!tkill && g <= 0))
        return -LX_EINVAL;
    struct lx_thread *q = lx_thread_of_tid(t);
    if (!q || q->p->ended || (!tkill && q->p->pid != g))
        return -LX_ESRCH;
    if (s > LX_NSIG)
        return -LX_EINVAL;
    if (s) {
        struct lx_sinfo si = { LX_SI_TKILL, c->p->pid, 0, 0, 0, 0 };
        lx_sig_send_thread(q, (int)s, &si);
    }
    return 0;
}

/* rt_sigqueueinfo and rt_tgsigqueueinfo (tid > 0): a signal with the
 * caller's siginfo (si_code, si_pid, si_value as given). */
int64_t lx_sys_rt_sigqueueinfo(struct lx_ctx *c, int64_t tgid, int64_t tid, uint64_t sig, uint64_t uinfo)
{
    struct lx_siginfo info;
    if (lx_copy_in(c, &info, uinfo, sizeof(info)))
        return -LX_EFAULT;
    int32_t g = (int32_t)tgid, t = (int32_t)tid;
    uint32_t s = (uint32_t)sig;
    if (tid && (g <= 0 || t <= 0))
        return -LX_EINVAL;
    if ((info.code >= 0 || info.code == LX_SI_TKILL) && g != c->p->pid)
        return -LX_EPERM;                       /* only the kernel sends those, to others (checked first, as Linux) */
    struct lx_thread *q = tid ? lx_thread_of_tid(t) : NULL;
    struct lx_proc *p = tid ? (q && q->p->pid == g ? q->p : NULL) : lx_proc_of_pid(g);
    if (s > LX_NSIG)
        return -LX_EINVAL;
    if (!p || p->ended)
        return -LX_ESRCH;
    if (!s)
        return 0;
    if (s >= LX_SIGRTMIN && ((q ? q->pending : p->pending) & LX_SIGBIT(s)) && p->nrtq >= LX_RTQ)
        return -LX_EAGAIN;                      /* the queue is full (Linux: RLIMIT_SIGPENDING) */
    struct lx_sinfo si = { info.code, info.u.chld.pid, 0, 0, 0, 0 };
    memcpy(&si.value, info.u.raw + 8, 8);
    if (q)
        lx_sig_send_thread(q, (int)s, &si);
    else
        lx_sig_send(p, (int)s, &si);
    return 0;
}

/* ---------------------------------------------------------------- actions and masks */

int64_t lx_sys_rt_sigaction(struct lx_ctx *c, uint64_t sig, uint64_t uact, uint64_t uoact, uint64_t size)
{
    struct lx_proc *p = c->p;
    int s = (int)(uint32_t)sig;
    if (size != 8)
        return -LX_EINVAL;
    struct lx_sigaction na;
    if (uact && lx_copy_in(c, &na, uact, sizeof(na)))
        return -LX_EFAULT;
    if (!valid((uint64_t)(uint32_t)s) || (uact && (s == LX_SIGKILL || s == LX_SIGSTOP)))
        return -LX_EINVAL;
    struct lx_sigaction old = p->act[s - 1];
    old.flags &= SA_UAPI;
    if (uact) {
        na.flags &= SA_UAPI;
        na.mask &= ~UNBLOCKABLE;
        p->act[s - 1] = na;
        int a = default_action(s);
        if (na.handler == SIG_IGN || (na.handler == SIG_DFL && (a == ACT_IGNORE || a == ACT_CONT))) {
            p->pending &= ~LX_SIGBIT(s);        /* an ignored signal that waits goes, blocked or not */
            drop_queued(p, s);
            for (struct lx_thread *t = NULL; (t = each(p, t)); )
                t->pending &= ~LX_SIGBIT(s);
        }
    }
    if (uoact && lx_copy_out(c, uoact, &old, sizeof(old)))
        return -LX_EFAULT;
    return 0;
}

int64_t lx_sys_rt_sigprocmask(struct lx_ctx *c, uint64_t how, uint64_t uset, uint64_t uoset, uint64_t size)
{
    struct lx_thread *p = c->t;
    if (size != 8)
        return -LX_EINVAL;
    uint64_t old = p->blocked, set;
    if (uset) {
        if (lx_copy_in(c, &set, uset, sizeof(set)))
            return -LX_EFAULT;
        set &= ~UNBLOCKABLE;
        switch ((uint32_t)how) {
        case SIG_BLOCK:   p->blocked |= set; break;
        case SIG_UNBLOCK: p->blocked &= ~set; break;
        case SIG_SETMASK: p->blocked = set; break;
        default:          return -LX_EINVAL;
        }
    }
    if (uoset && lx_copy_out(c, uoset, &old, sizeof(old)))
        return -LX_EFAULT;
    return 0;
}

int64_t lx_sys_rt_sigpending(struct lx_ctx *c, uint64_t uset, uint64_t size)
{
    if (size > 8)
        return -LX_EINVAL;
    uint64_t set = (c->t->pending | c->p->pending) & c->t->blocked;
    return lx_copy_out(c, uset, &set, size);
}

int64_t lx_sys_rt_sigsuspend(struct lx_ctx *c, uint64_t uset, uint64_t size)
{
    struct lx_thread *p = c->t;
    if (p->intr) {
        p->intr = 0;                            /* woken: the mask it set stays until the handler runs */
        return -LX_EINTR;
    }
    if (size != 8)
        return -LX_EINVAL;
    uint64_t set;
    if (lx_copy_in(c, &set, uset, sizeof(set)))
        return -LX_EFAULT;
    p->saved_mask = p->blocked;
    p->restore_mask = 1;
    p->blocked = set & ~UNBLOCKABLE;
    if (next_signal(p))
        return -LX_EINTR;
    return lx_block(c, LX_BLK_SIGSUSPEND, 0);
}

/* A struct timespec from the process: its nanoseconds, or a negated errno. */
int64_t lx_timespec_in(struct lx_ctx *c, uint64_t uts, uint64_t *ns)
{
    int64_t ts[2];
    if (lx_copy_in(c, ts, uts, sizeof(ts)))
        return -LX_EFAULT;
    if (ts[0] < 0 || ts[1] < 0 || ts[1] >= (int64_t)NS)
        return -LX_EINVAL;
    *ns = (uint64_t)ts[0] > (UINT64_MAX / 2) / NS ? UINT64_MAX / 2 : (uint64_t)ts[0] * NS + (uint64_t)ts[1];
    return 0;
}

/* Wait until p->deadline (set now from `ns` unless kept from an earlier
 * round of the same call); 1 when it has passed. */
int lx_deadline_passed(struct lx_ctx *c, uint64_t ns)
{
    struct lx_thread *p = c->t;
    uint64_t now = svc_clock_ns();
    if (!p->timed) {
        p->timed = 1;
        p->deadline = now + ns;
    }
    return now >= p->deadline;
}

int lx_sig_take_from(struct lx_thread *t, uint64_t set, struct lx_sinfo *si)
{
    uint64_t ready = (t->pending | t->p->pending) & set;
    if (!ready)
        return 0;
    int sig = (ready & SYNCHRONOUS) ? __builtin_ctzll(ready & SYNCHRONOUS) + 1 : __builtin_ctzll(ready) + 1;
    *si = take(t, sig);
    return sig;
}

uint64_t lx_sig_pending_any(struct lx_proc *p)
{
    uint64_t all = p->pending;
    for (struct lx_thread *u = NULL; (u = each(p, u)); )
        all |= u->pending;
    return all;
}

int64_t lx_sys_rt_sigtimedwait(struct lx_ctx *c, uint64_t uset, uint64_t uinfo, uint64_t uts, uint64_t size)
{
    struct lx_thread *p = c->t;
    if (size != 8)
        return -LX_EINVAL;
    uint64_t set, ns = 0;
    if (lx_copy_in(c, &set, uset, sizeof(set)))
        return -LX_EFAULT;
    set &= ~UNBLOCKABLE;
    if (uts) {
        int64_t err = lx_timespec_in(c, uts, &ns);
        if (err)
            return err;
    }
    uint64_t ready = (p->pending | p->p->pending) & set;
    if (ready) {
        int sig = (ready & SYNCHRONOUS) ? __builtin_ctzll(ready & SYNCHRONOUS) + 1 : __builtin_ctzll(ready) + 1;
        struct lx_sinfo si = take(p, sig);
        p->intr = 0;
        if (uinfo) {
            struct lx_siginfo info;
            fill_siginfo(&info, sig, &si);
            if (lx_copy_out(c, uinfo, &info, sizeof(info)))
                return -LX_EFAULT;
        }
        return sig;
    }
    if (p->intr) {
        p->intr = 0;
        return -LX_EINTR;
    }
    if (uts && lx_deadline_passed(c, ns))
        return -LX_EAGAIN;
    if (uts && lx_timer_start())
        return -LX_ENOSYS;
    if ((p->pending | p->p->pending) & ~p->blocked & ~set)
        return -LX_EINTR;
    p->wait_set = set;
    lx_timer_update();
    return lx_block(c, LX_BLK_SIGWAIT, 0);
}

int64_t lx_sys_sigaltstack(struct lx_ctx *c, uint64_t uss, uint64_t uoss)
{
    struct lx_thread *p = c->t;
    uint64_t sp = c->mr[FAULT_MR_SP];
    struct lx_stack old = { p->ss_sp, (int32_t)(altstack_flags(p, sp) | (p->ss_flags & SS_AUTODISARM)), 0, p->ss_size };
    if (uss) {
        struct lx_stack ns;
        if (lx_copy_in(c, &ns, uss, sizeof(ns)))
            return -LX_EFAULT;
        if (on_altstack(p, sp))
            return -LX_EPERM;
        uint32_t mode = (uint32_t)ns.flags & ~SS_AUTODISARM;
        if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
            return -LX_EINVAL;
        if (mode == SS_DISABLE) {
            ns.sp = ns.size = 0;
        } else if (ns.size < MINSIGSTKSZ) {
            return -LX_ENOMEM;
        }
        p->ss_sp = ns.sp;
        p->ss_size = ns.size;
        p->ss_flags = (uint32_t)ns.flags;
    }
    if (uoss && lx_copy_out(c, uoss, &old, sizeof(old)))
        return -LX_EFAULT;
    return 0;
}

/* ---------------------------------------------------------------- rt_sigreturn */

/* Check the records of a frame in the first `have` bytes of its records'
 * space: one FP/SIMD record, ESR records, a null one at the end. The
 * FP/SIMD record, or NULL if the frame is bad (*more set if it may be
 * good but reaches past `have`). */
static const struct lx_fpsimd_context *records(const uint8_t *res, uint32_t have, int *more)
{
    const struct lx_fpsimd_context *fp = NULL;
    *more = 0;
    for (uint32_t off = 0; off + sizeof(struct lx_ctx_head) <= 4096; ) {
        if (off + sizeof(struct lx_ctx_head) > have) {
            *more = 1;
            return NULL;
        }
        struct lx_ctx_head h;
        memcpy(&h, res + off, sizeof(h));
        if (h.magic == 0)
            return h.size == 0 ? fp : NULL;
        if (h.size < sizeof(h) || h.size % 16 || h.size > 4096 - off)
            return NULL;
        if (off + h.size > have) {
            *more = 1;
            return NULL;
        }
        if (h.magic == FPSIMD_MAGIC) {
            if (fp || h.size != sizeof(*fp))
                return NULL;
            fp = (const struct lx_fpsimd_context *)(res + off);
        } else if (h.magic != ESR_MAGIC) {
            return NULL;
        }
        off += h.size;
    }
    return NULL;
}

/* Restore the state a frame at sp saved; 0, or -1 for a bad frame. */
static int restore(struct lx_ctx *c, uint64_t sp, struct petrel_regs *r)
{
    struct lx_thread *p = c->t;
    /* The frame up to its first records (Linux's access_ok covers all of it);
     * the rest of the records' space only if they go on there. */
    int more;
    if ((sp & 15) || !lx_range_ok(sp, sizeof(frame)) || lx_copy_in(c, &frame, sp, RESERVED_OFF + RESERVED_FIRST))
        return -1;
    const struct lx_fpsimd_context *f = records(frame.uc.mc.reserved, RESERVED_FIRST, &more);
    if (!f && more) {
        if (lx_copy_in(c, frame.uc.mc.reserved + RESERVED_FIRST, sp + RESERVED_OFF + RESERVED_FIRST,
                       sizeof(frame) - RESERVED_OFF - RESERVED_FIRST))
            return -1;
        f = records(frame.uc.mc.reserved, 4096, &more);
    }
    if (!f || frame.uc.mc.pc >= LX_USER_END || frame.uc.mc.sp > LX_USER_END)
        return -1;
    struct petrel_fpregs fp;
    memcpy(fp.q, f->vregs, sizeof(fp.q));
    fp.fpsr = f->fpsr;
    fp.fpcr = f->fpcr;
    memcpy(r->x, frame.uc.mc.regs, sizeof(r->x));
    r->sp = frame.uc.mc.sp;
    r->pc = frame.uc.mc.pc;
    r->pstate = frame.uc.mc.pstate;
    if (svc_thread_write_fp(p->thread, &fp))
        return -1;
    p->blocked = frame.uc.sigmask & ~UNBLOCKABLE;
    /* The alternate stack as it was (errors other than a fault are ignored, as Linux does). */
    struct lx_stack ss = frame.uc.stack;
    uint32_t mode = (uint32_t)ss.flags & ~SS_AUTODISARM;
    if (!on_altstack(p, r->sp) && (mode == 0 || mode == SS_ONSTACK || mode == SS_DISABLE) &&
        (mode == SS_DISABLE || ss.size >= MINSIGSTKSZ)) {
        p->ss_sp = mode == SS_DISABLE ? 0 : ss.sp;
        p->ss_size = mode == SS_DISABLE ? 0 : ss.size;
        p->ss_flags = (uint32_t)ss.flags;
    }
    return 0;
}

int64_t lx_sys_rt_sigreturn(struct lx_ctx *c)
{
    struct lx_thread *p = c->t;
    struct petrel_regs r;
    uint64_t sp = c->mr[FAULT_MR_SP];
    if (svc_thread_read_regs(p->thread, &r) || restore(c, sp, &r)) {
        lx_sig_fault(c, FAULT_DATA, sp, 0);     /* Linux: SIGSEGV for a bad frame */
        return LX_NORETURN;
    }
    p->restore_mask = 0;
    int entered = 0;
    if (act(p, c->call, &r, &entered) == LX_NORETURN)
        return LX_NORETURN;
    reply_regs(c, &r);
    return LX_NORETURN;                         /* answered */
}

/* ---------------------------------------------------------------- faults */

void lx_sig_fault(struct lx_ctx *c, unsigned kind, uint64_t addr, uint64_t esr)
{
    struct lx_proc *p = c->p;
    struct lx_thread *t = c->t;
    const uint64_t *mr = c->mr;
    uint32_t ec = (uint32_t)(esr >> 26);
    uint32_t need = R_READ | (kind == FAULT_INSN ? R_EXEC : 0) | (ec == 0x24 && (esr & (1u << 6)) ? R_WRITE : 0);
    int sig, in_file = kind == FAULT_DATA || kind == FAULT_INSN ? lx_vma_file_page(p, addr, need) : -1;
    struct lx_sinfo si = { 0, 0, 0, addr, 0, 0 };
    if (in_file == 1 && t->retried != (addr & ~(LX_PAGE - 1))) {
        /* A page of a shared file mapping that the file reaches: it grew
         * (another thread's write) after this access faulted, and the
         * page is mapped now. Run the access again, once. */
        uint64_t resume[1] = { FAULT_REPLY_RESUME };
        t->retried = addr & ~(LX_PAGE - 1);
        svc_reply(c->call, 0, 1, resume);
        return;
    }
    t->retried = 0;
    if (kind == FAULT_INSN && addr == LX_SIGRETURN_VA && mr[FAULT_MR_PC] == LX_SIGRETURN_VA) {
        lx_sys_rt_sigreturn(c);                 /* a handler without SA_RESTORER returned */
        return;
    }
    if (kind == FAULT_UNDEF && ec == 0x3c) {
        sig = LX_SIGTRAP;                       /* brk */
        si.code = TRAP_BRKPT;
        si.addr = mr[FAULT_MR_PC];
    } else if (kind == FAULT_UNDEF) {
        sig = LX_SIGILL;
        si.code = ILL_ILLOPC;
        si.addr = mr[FAULT_MR_PC];
    } else if (kind == FAULT_ALIGN) {
        sig = LX_SIGBUS;
        si.code = BUS_ADRALN;
    } else if (in_file >= 0) {
        sig = LX_SIGBUS;                        /* a page of a shared file mapping past the file's end (or */
        si.code = BUS_ADRERR;                   /* one that cannot be filled: run again, it faulted again) */
    } else {
        sig = LX_SIGSEGV;
        si.code = lx_vma_has(p, addr) ? SEGV_ACCERR : SEGV_MAPERR;
    }
    const struct lx_sigaction *ka = &p->act[sig - 1];
    if (ka->handler <= SIG_IGN || (t->blocked & LX_SIGBIT(sig))) {
        lx_log("pid %d (%s): signal %d, fault at 0x%lx, pc 0x%lx", p->pid, p->comm, sig, (unsigned long)addr,
               (unsigned long)mr[FAULT_MR_PC]);
        lx_proc_end(p, sig);
        return;
    }
    struct petrel_regs r;
    if (svc_thread_read_regs(t->thread, &r)) {
        lx_proc_end(p, sig);
        return;
    }
    /* Linux keeps the ESR with only the class, the write bit and a generic fault status. */
    t->fault_addr = addr;
    t->fault_esr = (ec == 0x24 || ec == 0x25) ? (esr & ((0x3full << 26) | (1u << 25) | (1u << 8) | (1u << 6))) | 0x4
                                              : (esr & (0x3full << 26)) | (1u << 25);
    t->pending |= LX_SIGBIT(sig);
    t->sinfo[sig - 1] = si;
    int entered = 0;
    if (act(t, c->call, &r, &entered) == LX_NORETURN)
        return;
    reply_regs(c, &r);
}

/* ---------------------------------------------------------------- fork and exec */

void lx_sig_fork(struct lx_thread *child, const struct lx_thread *parent)
{
    if (child->p != parent->p)
        memcpy(child->p->act, parent->p->act, sizeof(child->p->act));
    child->blocked = parent->blocked;
    child->ss_sp = parent->ss_sp;
    child->ss_size = parent->ss_size;
    child->ss_flags = parent->ss_flags;
}

void lx_sig_exec(struct lx_thread *p)
{
    struct lx_sigaction *act = p->p->act;
    for (int i = 0; i < LX_NSIG; i++) {
        if (act[i].handler != SIG_IGN)
            act[i].handler = SIG_DFL;
        act[i].flags = act[i].restorer = act[i].mask = 0;
    }
    p->ss_sp = p->ss_size = 0;
    p->ss_flags = 0;
    p->intr = p->restore_mask = 0;
    p->fault_addr = p->fault_esr = 0;
}

/* ---------------------------------------------------------------- timed waits and the interval timer */

static int timer_ready;
static uint64_t timer_set_at;                   /* the deadline given to the service's timer (0: none) */

/* RLIMIT_CPU of q: the CPU time (ns) at which its next SIGXCPU (or, at the
 * hard limit, SIGKILL) is due; 0 without a soft limit (Linux looks at the
 * hard one only then too). */
static uint64_t cpu_limit_at(const struct lx_proc *q)
{
    uint64_t soft = q->rlim[LX_RLIMIT_CPU][0];
    if (soft >= ~0ull / 1000000000ull)
        return 0;                               /* (RLIM_INFINITY, or as good as it) */
    return soft ? soft * 1000000000ull : 1;     /* (0 s: due at once) */
}

/* q's CPU time passed its RLIMIT_CPU: SIGKILL at the hard limit, else
 * SIGXCPU with the soft limit a second further on (Linux's rule). */
static void cpu_limit_passed(struct lx_proc *q, uint64_t cpu)
{
    uint64_t *lim = q->rlim[LX_RLIMIT_CPU];
    struct lx_sinfo si = { LX_SI_KERNEL, 0, 0, 0, 0, 0 };
    if (lim[1] < ~0ull / 1000000000ull && cpu >= lim[1] * 1000000000ull) {
        lx_sig_send(q, LX_SIGKILL, &si);
        return;
    }
    if (lim[0] < lim[1])
        lim[0]++;
    lx_sig_send(q, LX_SIGXCPU, &si);
}

void lx_timer_update(void)
{
    uint64_t next = 0;
    uint64_t now = svc_clock_ns();
    for (struct lx_proc *q = lx_procs(); q; q = q->next) {
        if (q->used && !q->ended && q->alarm_at && (!next || q->alarm_at < next))
            next = q->alarm_at;
        for (int k = 0; k < 2; k++) {
            if (!q->used || q->ended || !q->cpu_at[k])
                continue;
            uint64_t cpu = lx_proc_cpu_ns(q);   /* CPU time goes no faster than the clock: look again then */
            uint64_t at = now + (q->cpu_at[k] > cpu ? q->cpu_at[k] - cpu : 0);
            if (!next || at < next)
                next = at;
        }
        uint64_t limit = q->used && !q->ended ? cpu_limit_at(q) : 0;
        if (limit) {
            uint64_t cpu = lx_proc_cpu_ns(q), at = now + (limit > cpu ? limit - cpu : 0);
            if (!next || at < next)
                next = at;
        }
    }
    for (struct lx_thread *q = lx_waiting_next(NULL); q; q = lx_waiting_next(q))
        if (q->timed && (!next || q->deadline < next))
            next = q->deadline;
    uint64_t ev = lx_event_next_deadline();     /* armed timerfds */
    if (ev && (!next || ev < next))
        next = ev;
    uint64_t pt = lx_ptimers_next(now);         /* POSIX timers */
    if (pt && (!next || pt < next))
        next = pt;
    uint64_t in = lx_evdev_due();               /* a held key's autorepeat */
    if (in && (!next || in < next))
        next = in;
    uint64_t wb = lx_data_writeback_at();       /* the disk's write-back */
    if (wb && (!next || wb < next))
        next = wb;
    if (nstopping && (!next || now + LX_STOP_RETRY_NS < next))
        next = now + LX_STOP_RETRY_NS;          /* signals for threads stopping on other cores */
    if (next && lx_timer_start())
        return;
    if (timer_ready) {
        timer_set_at = next;
        svc_timer_set(next);
    }
}

/* One deadline more (a thread's timed wait): the timer brought forward
 * to it if it comes first, without a walk over every other deadline,
 * which a personality with many waiting threads would pay at each wait.
 * A deadline that goes early (its wait woken) leaves the timer set too
 * early, never too late: it then goes off for nothing once, and its
 * handler sets it right (timer_fired: lx_timer_update). */
void lx_timer_note(uint64_t at)
{
    if (!at || (timer_set_at && timer_set_at <= at) || lx_timer_start())
        return;
    timer_set_at = at;
    svc_timer_set(at);
}

void lx_calendar_moved(int64_t delta)
{
    for (struct lx_thread *q = lx_waiting_next(NULL); q; q = lx_waiting_next(q))
        if (q->timed && q->timed_calendar)
            q->deadline = delta > 0 && (uint64_t)delta >= q->deadline ? 1 : q->deadline - (uint64_t)delta;
    lx_event_clock_set(delta);
    lx_ptimers_clock_set(delta);
    lx_timer_update();
}

/* The service's timer went off: alarms, and timed waits whose time is up. */
static void timer_fired(void)
{
    lx_reap();                                  /* (an entry of the service: see lx_reap) */
    if (nstopping)
        deliver_stopped();
    uint64_t now = svc_clock_ns();
    for (struct lx_proc *q = lx_procs(); q; q = q->next) {
        if (q->used && !q->ended && q->alarm_at && now >= q->alarm_at) {
            q->alarm_at = q->alarm_every ? now + q->alarm_every : 0;
            struct lx_sinfo si = { LX_SI_KERNEL, 0, 0, 0, 0, 0 };
            lx_sig_send(q, LX_SIGALRM, &si);
        }
        for (int k = 0; k < 2; k++) {
            if (!q->used || q->ended || !q->cpu_at[k])
                continue;
            uint64_t cpu = lx_proc_cpu_ns(q);
            if (cpu < q->cpu_at[k])
                continue;
            q->cpu_at[k] = q->cpu_every[k] ? cpu + q->cpu_every[k] : 0;
            struct lx_sinfo si = { LX_SI_KERNEL, 0, 0, 0, 0, 0 };
            lx_sig_send(q, k == 0 ? LX_SIGVTALRM : LX_SIGPROF, &si);
        }
        uint64_t limit = q->used && !q->ended ? cpu_limit_at(q) : 0;
        if (limit) {
            uint64_t cpu = lx_proc_cpu_ns(q);
            if (cpu >= limit)
                cpu_limit_passed(q, cpu);
        }
    }
    for (struct lx_thread *q = lx_waiting_next(NULL); q; q = lx_waiting_next(q)) {
        if (!q->timed || now < q->deadline)
            continue;
        if (q->blk.kind == LX_BLK_SLEEP)
            lx_wake_resume(q, 0);               /* a sleep whose time is up: 0, without running it again */
        else
            lx_wake(q, 0);                      /* it runs its call again and finds its time up */
    }
    lx_event_timers();                          /* timerfds that expired: their waiters and polls */
    lx_ptimers_fire(now);
    lx_evdev_timer(now);                        /* a held key's autorepeat */
    lx_data_timer(now);                         /* the disk's write-back */
    lx_timer_update();
}

int lx_timer_start(void)
{
    static int said;
    if (!timer_ready) {
        if (svc_timer_attach(timer_fired)) {
            if (!said++)
                lx_log("no timer in this placement: timed waits and alarms return ENOSYS");
            return -LX_ENOSYS;
        }
        timer_ready = 1;
    }
    return 0;
}

#define TIMER_ABSTIME   1

/* nanosleep (clock -1) and clock_nanosleep. */
int64_t lx_sys_nanosleep(struct lx_ctx *c, uint64_t clock, uint64_t flags, uint64_t ureq, uint64_t urem)
{
    struct lx_thread *p = c->t;
    int abs = (int64_t)clock >= 0 && ((uint32_t)flags & TIMER_ABSTIME);
    if ((int64_t)clock >= 0) {
        /* Linux's rules: the realtime, monotonic, boot, alarm and TAI
         * clocks sleep; MONOTONIC_RAW, the coarse clocks and the thread
         * CPU clock cannot (EOPNOTSUPP); the process CPU clocks, which
         * Linux can sleep on, are not supported here (EOPNOTSUPP too);
         * 10 and past 11 are no clocks (EINVAL). */
        int32_t id = (int32_t)clock;
        if (id < 0)
            return -LX_EOPNOTSUPP;
        if (id == 10 || id > 11)
            return -LX_EINVAL;
        if (id >= 2 && id <= 6)
            return -LX_EOPNOTSUPP;
    }
    uint64_t ns;
    int64_t err = lx_timespec_in(c, ureq, &ns);
    if (err)
        return err;
    if (abs && !p->timed) {
        uint32_t id = (uint32_t)clock;
        uint64_t base = id == 0 || id == 8 || id == 11 ? lx_realtime_base() : 0;    /* REALTIME, its ALARM, TAI: the calendar's */
        p->timed = 1;
        p->timed_calendar = id == 0 || id == 8 || id == 11;
        p->deadline = ns > base ? ns - base : 0;
    }
    uint64_t now = svc_clock_ns();
    if (lx_deadline_passed(c, ns))
        return 0;
    if (p->intr || next_signal(p)) {
        p->intr = 0;
        p->blk = (struct lx_block){ 0 };
        if (urem && !abs) {
            uint64_t left = p->deadline - now;
            int64_t ts[2] = { (int64_t)(left / NS), (int64_t)(left % NS) };
            if (lx_copy_out(c, urem, ts, sizeof(ts)))
                return -LX_EFAULT;
        }
        return -LX_EINTR;
    }
    err = lx_timer_start();
    if (err)
        return err;
    lx_timer_note(p->deadline);
    return lx_block(c, LX_BLK_SLEEP, 0);
}

int lx_sig_mask_for_call(struct lx_ctx *c, uint64_t umask)
{
    struct lx_thread *p = c->t;
    if (!umask || p->restore_mask)
        return 0;                               /* none, or set by an earlier run of the same call */
    uint64_t set;
    if (lx_copy_in(c, &set, umask, sizeof(set)))
        return -LX_EFAULT;
    p->saved_mask = p->blocked;
    p->restore_mask = 1;
    p->blocked = set & ~UNBLOCKABLE;
    return 0;
}

int lx_sig_ignored_or_blocked(struct lx_ctx *c, int sig)
{
    return c->p->act[sig - 1].handler == SIG_IGN || (c->t->blocked & LX_SIGBIT(sig));
}

/* The terminal's signals: from the kernel (SI_KERNEL), to the group. */
void lx_signal_group(int pgrp, int sig)
{
    struct lx_sinfo si = { LX_SI_KERNEL, 0, 0, 0, 0, 0 };
    for (struct lx_proc *q = lx_procs(); q; q = q->next)
        if (q->used && !q->ended && q->pgid == pgrp)
            lx_sig_send(q, sig, &si);
}

#define ITIMER_REAL     0
#define ITIMER_PROF     2
#define US              1000ull

/* struct itimerval of the remaining time and interval of p's timer
 * `which`: ITIMER_REAL in the system counter's time, ITIMER_VIRTUAL and
 * ITIMER_PROF in the process's CPU time. */
static void itimer_now(struct lx_proc *p, uint32_t which, int64_t out[4])
{
    uint64_t now = which == ITIMER_REAL ? svc_clock_ns() : lx_proc_cpu_ns(p);
    uint64_t at = which == ITIMER_REAL ? p->alarm_at : p->cpu_at[which - 1];
    uint64_t every = which == ITIMER_REAL ? p->alarm_every : p->cpu_every[which - 1];
    uint64_t left = at > now ? at - now : (at ? 1000 : 0);
    out[0] = (int64_t)(every / NS);
    out[1] = (int64_t)(every % NS / US);
    out[2] = (int64_t)(left / NS);
    out[3] = (int64_t)(left % NS / US);
}

int64_t lx_sys_getitimer(struct lx_ctx *c, uint64_t which, uint64_t ucur)
{
    if ((uint32_t)which > ITIMER_PROF)
        return -LX_EINVAL;
    int64_t cur[4] = { 0 };
    itimer_now(c->p, (uint32_t)which, cur);
    return lx_copy_out(c, ucur, cur, sizeof(cur));
}

int64_t lx_sys_setitimer(struct lx_ctx *c, uint64_t which, uint64_t uval, uint64_t uold)
{
    struct lx_proc *p = c->p;
    int64_t val[4] = { 0 }, old[4] = { 0 };
    if (uval && lx_copy_in(c, val, uval, sizeof(val)))
        return -LX_EFAULT;
    if (val[0] < 0 || val[1] < 0 || val[1] >= 1000000 || val[2] < 0 || val[3] < 0 || val[3] >= 1000000)
        return -LX_EINVAL;
    uint32_t w = (uint32_t)which;
    if (w > ITIMER_PROF)
        return -LX_EINVAL;
    itimer_now(p, w, old);
    uint64_t value = (uint64_t)val[2] * NS + (uint64_t)val[3] * US;
    if (value && lx_timer_start())
        return -LX_ENOSYS;
    uint64_t every = (uint64_t)val[0] * NS + (uint64_t)val[1] * US;
    if (w == ITIMER_REAL) {
        p->alarm_every = every;
        p->alarm_at = value ? svc_clock_ns() + value : 0;
    } else {
        p->cpu_every[w - 1] = every;            /* counted in the process's CPU time */
        p->cpu_at[w - 1] = value ? lx_proc_cpu_ns(p) + value : 0;
    }
    lx_timer_update();
    if (uold && lx_copy_out(c, uold, old, sizeof(old)))
        return -LX_EFAULT;
    return 0;
}
