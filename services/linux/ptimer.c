/*
 * POSIX per-process timers: timer_create, timer_settime, timer_gettime,
 * timer_getoverrun and timer_delete, as Linux's posix-timers.c has them.
 *
 * A process's timers are records on a list of its own (lx_alloc), as
 * many as its RLIMIT_SIGPENDING (Linux's bound: each timer keeps a queued
 * signal ready) and memory allow (EAGAIN past either). Ids count up from 0 per process
 * (Linux's posix_timer_id; past INT_MAX Petrel gives no more, where Linux
 * wraps); a failed timer_create that got as far as an id uses it up too. A timer measures
 * the calendar and the monotonic clocks on the system counter (an absolute
 * calendar time is turned into the counter's time when it is set) and
 * the CPU-time clocks on the kernel's accounting of a process or thread,
 * looked at again when the counter says that much time could have gone.
 *
 * When a timer expires it queues its signal (SI_TIMER, si_timerid, the
 * sigev_value) to the process or, with SIGEV_THREAD_ID, to one of its
 * threads. While that signal is pending the timer rests, as Linux's does
 * until posixtimer_rearm: when the signal is taken, the periods that went
 * by are its overruns (si_overrun, and timer_getoverrun afterwards) and
 * the timer goes on from the next one. A signal that is ignored queues
 * nothing: the timer then goes off at most once a tick (Linux's limit for
 * the same case). SIGEV_NONE timers only run down (timer_gettime). A
 * fork's child has no timers; exec deletes them.
 */
#include "lx.h"

#define NS              1000000000ull
#define TIMER_ABSTIME   1
#define SIGEV_SIGNAL    0
#define SIGEV_NONE      1
#define SIGEV_THREAD    2
#define SIGEV_THREAD_ID 4
#define DELAYTIMER_MAX  0x7fffffff
#define TICK_NS         10000000ull             /* the least period of a timer whose signal is ignored */

enum { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
       CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
       CLOCK_SGI_CYCLE, CLOCK_TAI };

/* struct sigevent as arm64 Linux lays it out (64 bytes). */
struct lx_sigevent {
    uint64_t value;             /* sigev_value */
    int32_t signo, notify;
    int32_t tid;                /* sigev_notify_thread_id (SIGEV_THREAD_ID) */
    int32_t pad[11];
};

/* The CPU time that timer t's clock measures now; 0 (and t disarmed for
 * good, as Linux's timer of a task that has gone) if what it measures is
 * gone. */
static uint64_t cpu_now(struct lx_ptimer *t)
{
    const struct lx_thread *th = t->cpu_tid ? lx_thread_of_tid(t->cpu_tid) : NULL;
    const struct lx_proc *p = t->cpu_tid ? NULL : lx_proc_of_pid(t->cpu_pid);
    if (th)
        return lx_thread_cpu_ns(th);
    if (p && !p->ended)
        return lx_proc_cpu_ns(p);
    t->at = 0;
    return 0;
}

/* The time timer t runs on, now: the counter or a CPU time. */
static uint64_t clock_now(struct lx_ptimer *t)
{
    return t->cpu ? cpu_now(t) : svc_clock_ns();
}

/* Is a calendar clock (an absolute time on it is the calendar's)? */
static int calendar(int32_t clock)
{
    return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_ALARM || clock == CLOCK_TAI;
}

/* Check `clock` for a timer and note what kind it is in *t; 0, -EINVAL
 * (no clock) or -EOPNOTSUPP (no timers on it). Which process or thread a
 * CPU clock of clock_getcpuclockid names is checked later (cpu_target),
 * as Linux does it after the timer has its id. */
static int timer_clock(struct lx_ctx *c, int32_t clock, struct lx_ptimer *t)
{
    t->clock = clock;
    if (clock < 0) {                            /* ~pid << 3 | kind (4: a thread); 3 a clock device */
        t->cpu = 1;
        return (clock & 7) == 3 ? -LX_EOPNOTSUPP : 0;
    }
    switch (clock) {
    case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_BOOTTIME: case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM: case CLOCK_TAI:
        return 0;
    case CLOCK_PROCESS_CPUTIME_ID:
        t->cpu = 1;
        t->cpu_pid = c->p->pid;
        return 0;
    case CLOCK_THREAD_CPUTIME_ID:
        t->cpu = 1;
        t->cpu_tid = c->t->tid;
        return 0;
    case CLOCK_MONOTONIC_RAW: case CLOCK_REALTIME_COARSE: case CLOCK_MONOTONIC_COARSE:
        return -LX_EOPNOTSUPP;
    default:
        return -LX_EINVAL;
    }
}

/* The process or thread a CPU clock of clock_getcpuclockid (~pid << 3,
 * 4 for a thread) names: one of the caller's threads, or any process. */
static int cpu_target(struct lx_ctx *c, struct lx_ptimer *t)
{
    if (t->clock >= 0)
        return 0;
    if ((t->clock & 3) == 3)
        return -LX_EINVAL;                      /* no such kind of CPU clock */
    int32_t id = ~(t->clock >> 3);
    if (t->clock & 4) {
        const struct lx_thread *th = id ? lx_thread_of_tid(id) : c->t;
        if (!th || th->p != c->p)
            return -LX_EINVAL;
        t->cpu_tid = th->tid;
    } else {
        const struct lx_proc *p = id ? lx_proc_of_pid(id) : c->p;
        if (!p || p->ended)
            return -LX_EINVAL;
        t->cpu_pid = p->pid;
    }
    return 0;
}

/* Linux's good_sigevent: what notifies, which signal, which thread. */
static int check_event(struct lx_ctx *c, const struct lx_sigevent *ev)
{
    switch (ev->notify) {
    case SIGEV_SIGNAL | SIGEV_THREAD_ID: {
        const struct lx_thread *th = lx_thread_of_tid(ev->tid);
        if (!th || th->p != c->p)
            return -LX_EINVAL;
    }
        /* fall through */
    case SIGEV_SIGNAL:
    case SIGEV_THREAD:
        if (ev->signo <= 0 || ev->signo > LX_NSIG)
            return -LX_EINVAL;
        /* fall through */
    case SIGEV_NONE:
        return 0;
    default:
        return -LX_EINVAL;
    }
}

/* timer_create, in Linux's order: the sigevent's EFAULT, the clock
 * (EINVAL, EOPNOTSUPP), a free slot (EAGAIN), then with an id used up
 * the sigevent's checks (EINVAL), the id's EFAULT and a CPU clock's
 * target (EINVAL). */
int64_t lx_sys_timer_create(struct lx_ctx *c, uint64_t clock, uint64_t uevent, uint64_t uid)
{
    struct lx_proc *p = c->p;
    struct lx_sigevent ev;
    if (uevent && lx_copy_in(c, &ev, uevent, sizeof(ev)))
        return -LX_EFAULT;
    struct lx_ptimer t = { 0 };
    int err = timer_clock(c, (int32_t)clock, &t);
    if (err)
        return err;
    if ((uint64_t)p->ntimers >= p->rlim[LX_RLIMIT_SIGPENDING][0] || p->next_timer_id < 0)
        return -LX_EAGAIN;
    t.id = p->next_timer_id;                    /* used up from here on, whatever happens */
    p->next_timer_id = t.id == INT32_MAX ? -1 : t.id + 1;
    if (uevent) {
        if ((err = check_event(c, &ev)))
            return err;
        t.notify = ev.notify;
        t.sig = ev.signo;
        t.tid = ev.notify == (SIGEV_SIGNAL | SIGEV_THREAD_ID) ? ev.tid : 0;
        t.value = ev.value;
    } else {
        t.notify = SIGEV_SIGNAL;
        t.sig = LX_SIGALRM;
        t.value = (uint64_t)(uint32_t)t.id;     /* sival_int: the timer's id */
    }
    int32_t id = t.id;
    if (lx_copy_out(c, uid, &id, sizeof(id)))
        return -LX_EFAULT;
    if ((err = cpu_target(c, &t)))
        return err;
    struct lx_ptimer *rec = lx_alloc(sizeof(*rec));
    if (!rec)
        return -LX_EAGAIN;                      /* (Linux's answer when it has no memory for one) */
    *rec = t;
    rec->used = 1;
    rec->next = p->timers;
    p->timers = rec;
    p->ntimers++;
    return 0;
}

/* Process p's timer `id` (a timer_t: an int, so the low 32 bits), or NULL. */
static struct lx_ptimer *timer_of(struct lx_proc *p, uint64_t id)
{
    for (struct lx_ptimer *t = p->timers; t; t = t->next)
        if (t->id == (int32_t)id)
            return t;
    return NULL;
}

/* Move a SIGEV_NONE timer on past `now`, counting what it missed (nothing
 * is sent for it, so this happens when it is looked at). */
static void run_down(struct lx_ptimer *t, uint64_t now)
{
    if (t->notify != SIGEV_NONE || !t->at || now < t->at)
        return;
    if (!t->every) {
        t->at = 0;
        return;
    }
    uint64_t missed = (now - t->at) / t->every;
    t->at += (missed + 1) * t->every;
}

/* struct itimerspec of t: its interval and the time left. */
static void timer_now(struct lx_ptimer *t, int64_t out[4])
{
    uint64_t now = clock_now(t);
    run_down(t, now);
    uint64_t left = t->at > now ? t->at - now : 0;
    out[0] = (int64_t)(t->every / NS);
    out[1] = (int64_t)(t->every % NS);
    out[2] = (int64_t)(left / NS);
    out[3] = (int64_t)(left % NS);
}

/* timer_settime: NULL is EINVAL, then the new value's EFAULT and EINVAL,
 * then the id; the old setting is written after the change. */
int64_t lx_sys_timer_settime(struct lx_ctx *c, uint64_t id, uint64_t flags, uint64_t unew, uint64_t uold)
{
    int64_t v[4], old[4];
    if (!unew)
        return -LX_EINVAL;
    if (lx_copy_in(c, v, unew, sizeof(v)))
        return -LX_EFAULT;
    if (v[0] < 0 || v[1] < 0 || v[1] >= (int64_t)NS || v[2] < 0 || v[3] < 0 || v[3] >= (int64_t)NS)
        return -LX_EINVAL;
    struct lx_ptimer *t = timer_of(c->p, id);
    if (!t)
        return -LX_EINVAL;
    uint64_t value = (uint64_t)v[2] > (UINT64_MAX / 4) / NS ? UINT64_MAX / 4 : (uint64_t)v[2] * NS + (uint64_t)v[3];
    uint64_t every = (uint64_t)v[0] > (UINT64_MAX / 4) / NS ? UINT64_MAX / 4 : (uint64_t)v[0] * NS + (uint64_t)v[1];
    if (value && !t->cpu && t->notify != SIGEV_NONE) {
        int64_t err = lx_timer_start();
        if (err)
            return err;
    }
    timer_now(t, old);
    t->overrun_last = 0;
    t->overrun = 0;
    t->abs_calendar = 0;                        /* a relative time runs on the counter, as Linux's */
    t->every = value ? every : 0;
    uint64_t now = clock_now(t);
    if (!value) {
        t->at = 0;
    } else if ((uint32_t)flags & TIMER_ABSTIME) {
        t->abs_calendar = calendar(t->clock);   /* it follows the calendar when the clock is set */
        uint64_t base = t->abs_calendar ? lx_realtime_base() : 0;
        t->at = value > base ? value - base : 1;
        if (t->at <= now)
            t->at = now ? now : 1;              /* already past: expires at once */
    } else {
        t->at = now + value;
    }
    lx_timer_update();
    if (uold && lx_copy_out(c, uold, old, sizeof(old)))
        return -LX_EFAULT;
    return 0;
}

/* timer_gettime: the interval and the time left (0: disarmed or spent). */
int64_t lx_sys_timer_gettime(struct lx_ctx *c, uint64_t id, uint64_t ucur)
{
    struct lx_ptimer *t = timer_of(c->p, id);
    if (!t)
        return -LX_EINVAL;
    int64_t cur[4];
    timer_now(t, cur);
    return lx_copy_out(c, ucur, cur, sizeof(cur));
}

/* timer_getoverrun: what the timer's last signal taken carried. */
int64_t lx_sys_timer_getoverrun(struct lx_ctx *c, uint64_t id)
{
    struct lx_ptimer *t = timer_of(c->p, id);
    return t ? (int64_t)t->overrun_last : -LX_EINVAL;
}

/* timer_delete: a signal of it still pending stays pending. */
int64_t lx_sys_timer_delete(struct lx_ctx *c, uint64_t id)
{
    struct lx_ptimer *t = timer_of(c->p, id);
    if (!t)
        return -LX_EINVAL;
    for (struct lx_ptimer **link = &c->p->timers; *link; link = &(*link)->next) {
        if (*link == t) {
            *link = t->next;
            break;
        }
    }
    lx_free(t, sizeof(*t));
    c->p->ntimers--;
    lx_timer_update();
    return 0;
}

/* exec, and the end of the process: its timers go (the id count goes on). */
void lx_ptimers_exec(struct lx_proc *p)
{
    while (p->timers) {
        struct lx_ptimer *t = p->timers;
        p->timers = t->next;
        lx_free(t, sizeof(*t));
    }
    p->ntimers = 0;
}

/* Is the signal of process p's timer t queued and not yet taken? */
static int signal_pending(struct lx_proc *p, const struct lx_ptimer *t)
{
    uint64_t bit = LX_SIGBIT(t->sig);
    const struct lx_thread *th = t->tid ? lx_thread_of_tid(t->tid) : NULL;
    const struct lx_sinfo *si = th ? &th->sinfo[t->sig - 1] : &p->sinfo[t->sig - 1];
    if (((th ? th->pending : p->pending) & bit) && si->timer == t->id + 1)
        return 1;
    for (int i = 0; i < p->nrtq; i++)
        if (p->rtq[i].sig == t->sig && p->rtq[i].si.timer == t->id + 1)
            return 1;
    return 0;
}

/* Is t armed and due to go off by itself (not resting while its signal waits)? */
static int running(struct lx_proc *p, const struct lx_ptimer *t)
{
    return t->used && t->at && t->notify != SIGEV_NONE && !signal_pending(p, t);
}

/* t of process p expired (now on its clock): its signal sent, and t on to
 * its next period (the periods it missed: overruns). */
static void expire(struct lx_proc *p, struct lx_ptimer *t, uint64_t now)
{
    uint64_t missed = t->every ? (now - t->at) / t->every : 0;
    t->at = t->every ? t->at + (missed + 1) * t->every : 0;
    t->overrun = missed > DELAYTIMER_MAX ? DELAYTIMER_MAX : (uint32_t)missed;
    struct lx_sinfo si = { LX_SI_TIMER, t->id, 0, 0, t->value, t->id + 1 };
    struct lx_thread *th = t->tid ? lx_thread_of_tid(t->tid) : NULL;
    if (th && th->p == p)
        lx_sig_send_thread(th, t->sig, &si);
    else if (!t->tid)
        lx_sig_send(p, t->sig, &si);            /* (a target thread that has gone gets nothing, as Linux) */
    if (t->at && t->at < now + TICK_NS && !signal_pending(p, t))
        t->at = now + TICK_NS;                  /* ignored: no faster than a tick */
}

/* The running timer after t (NULL: the first) of any process, its
 * process in *pp; NULL after the last. */
static struct lx_ptimer *next_running(struct lx_ptimer *t, struct lx_proc **pp)
{
    struct lx_proc *p = t ? *pp : lx_procs();
    struct lx_ptimer *from = t ? t->next : p ? p->timers : NULL;
    while (p) {
        for (struct lx_ptimer *u = p->used && !p->ended ? from : NULL; u; u = u->next)
            if (running(p, u)) {
                *pp = p;
                return u;
            }
        p = p->next;
        from = p ? p->timers : NULL;
    }
    return NULL;
}

/* The service's timer went off (the counter says `now`): the timers due. */
void lx_ptimers_fire(uint64_t now)
{
    struct lx_proc *p = NULL;
    for (struct lx_ptimer *t = NULL; (t = next_running(t, &p)); ) {
        uint64_t at_now = t->cpu ? cpu_now(t) : now;
        if (t->at && at_now >= t->at)
            expire(p, t, at_now);
    }
}

/* When the service's timer should go off next for the timers (counter
 * ns, 0: none): a CPU-time timer is looked at when its process could have
 * used that much time if it ran all along. */
uint64_t lx_ptimers_next(uint64_t now)
{
    uint64_t next = 0;
    struct lx_proc *p = NULL;
    for (struct lx_ptimer *t = NULL; (t = next_running(t, &p)); ) {
        uint64_t at = t->at, cpu = t->cpu ? cpu_now(t) : 0;
        if (t->cpu && !t->at)
            continue;                           /* (its process or thread has gone) */
        if (t->cpu)
            at = now + (t->at > cpu ? t->at - cpu : 0);
        if (!next || at < next)
            next = at;
    }
    return next;
}

/* A thread takes the signal of one of p's timers (si: a copy about to be
 * delivered): the periods that went by since it was sent are its
 * overruns, and the timer runs on from the next period. */
void lx_ptimer_taken(struct lx_proc *p, struct lx_sinfo *si)
{
    struct lx_ptimer *t = si->timer ? timer_of(p, (uint64_t)(uint32_t)(si->timer - 1)) : NULL;
    if (!t)
        return;                                 /* deleted since, or not a timer's own: no overruns to tell */
    uint64_t over = t->overrun, now = clock_now(t);
    if (t->at && t->every && now >= t->at) {
        uint64_t missed = (now - t->at) / t->every + 1;
        over += missed;
        t->at += missed * t->every;
    }
    t->overrun = 0;
    t->overrun_last = over > DELAYTIMER_MAX ? DELAYTIMER_MAX : (uint32_t)over;
    si->status = (int32_t)t->overrun_last;
    lx_timer_update();
}

/* The calendar moved by delta ns: timers set for an absolute calendar
 * time follow it (one whose time the move passed goes off at once). */
void lx_ptimers_clock_set(int64_t delta)
{
    for (struct lx_proc *p = lx_procs(); p; p = p->next)
        for (struct lx_ptimer *t = p->used ? p->timers : NULL; t; t = t->next) {
            if (t->at && t->abs_calendar)
                t->at = delta > 0 && (uint64_t)delta >= t->at ? 1 : t->at - (uint64_t)delta;
        }
}
