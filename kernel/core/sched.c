/*
 * The scheduler and the big kernel lock.
 *
 * Invariants:
 *  - All kernel state is touched only under kernel_lock (taken at every
 *    entry from EL0 and by the idle loop), so the kernel runs on one
 *    core at a time; user code runs on all of them.
 *  - Each core has its own run queue: 256 FIFO lists, one per priority,
 *    and a two-level bitmap of non-empty lists, so the best thread is
 *    found with two count-leading-zeros. A thread sits in the queue of
 *    t->cpu, its affinity, and only while T_READY and not suspended.
 *  - The running thread (cpu->current, T_RUNNING) is in no queue. At
 *    every return to user space sched_exit() keeps it unless a thread
 *    of higher priority is ready, or one of equal priority is and the
 *    current one's slice is used up (then it goes to the back).
 *  - A thread made ready on another core is queued there and that core
 *    gets an IPI if the newcomer should preempt what it runs.
 *
 * Cores: a thread may run on the cores of t->cpus (one core unless it
 * was given more: a new thread gets its creator's core). The scheduler
 * moves a thread among them at two moments only, so a thread woken by a
 * partner on its core stays there (no ping-pong between cores on every
 * call and reply):
 *  - when it starts (sched_place): to an idle core of its set, else the
 *    one with the fewest threads (its own on a tie);
 *  - at a tick of a core where it waits in the run queue while one of
 *    its cores idles (push): the first such thread, best priority first,
 *    goes there.
 * A thread stopped inside a kernel-placed service's request never moves:
 * its request is resumed where it stopped.
 */
#include "sched.h"
#include "k2.h"
#include "cpu.h"
#include "thread.h"
#include "space.h"
#include "irq.h"
#include "spinlock.h"
#include "timer.h"
#include "switch.h"
#include "memory.h"

spinlock_t big_lock = SPINLOCK_INIT;
bool smp_running;

void sched_init_cpu(unsigned cpu)
{
    struct runqueue *rq = &cpus[cpu].rq;
    for (unsigned p = 0; p < NPRIO; p++)
        list_init(&rq->level[p]);
    list_init(&cpus[cpu].timeouts);
    cpus[cpu].next_timeout = ~0ull;
}

/* Highest priority with a ready thread, or -1. */
static inline int top_prio(const struct runqueue *rq)
{
    if (!rq->summary)
        return -1;
    unsigned w = 63 - (unsigned)__builtin_clzll(rq->summary);
    return (int)(w * 64 + 63 - (unsigned)__builtin_clzll(rq->bitmap[w]));
}

static void rq_insert(struct runqueue *rq, struct thread *t, bool front)
{
    if (front)
        list_add_head(&rq->level[t->prio], &t->link);
    else
        list_add_tail(&rq->level[t->prio], &t->link);
    rq->bitmap[t->prio / 64] |= 1ull << (t->prio % 64);
    rq->summary |= 1ull << (t->prio / 64);
    rq->nready++;
}

static void rq_remove(struct runqueue *rq, struct thread *t)
{
    list_del(&t->link);
    if (list_empty(&rq->level[t->prio])) {
        rq->bitmap[t->prio / 64] &= ~(1ull << (t->prio % 64));
        if (!rq->bitmap[t->prio / 64])
            rq->summary &= ~(1ull << (t->prio / 64));
    }
    rq->nready--;
}

/* Make t runnable on its core (at the back of its priority's queue, or
 * at the front: its turn kept), preempting there if it should. */
static void enqueue(struct thread *t, bool front)
{
    t->state = T_READY;
    if (t->suspended)
        return;
    struct cpu *c = &cpus[t->cpu];
    rq_insert(&c->rq, t, front);
    if (c != this_cpu()) {
        struct thread *cur = c->current;
        if (!cur || t->prio > cur->prio)
            irq_send_ipi(t->cpu, IRQ_SGI_WAKE);
    }
}

void sched_enqueue(struct thread *t)
{
    enqueue(t, false);
}

void sched_enqueue_front(struct thread *t)
{
    enqueue(t, true);
}

/* Take t out of its run queue (if it is in one). */
void sched_dequeue(struct thread *t)
{
    if (t->state == T_READY && !t->suspended)
        rq_remove(&cpus[t->cpu].rq, t);
}

/* Threads on core c: those queued and the one running. */
static unsigned load(const struct cpu *c)
{
    return c->rq.nready + (c->current != NULL);
}

void sched_place(struct thread *t)
{
    uint64_t allowed = t->cpus & smp_online_mask();
    if (!(allowed & ~(1ull << t->cpu)))
        return;                         /* its own core is all it has */
    unsigned best = (allowed >> t->cpu) & 1 ? t->cpu : (unsigned)__builtin_ctzll(allowed);
    for (uint64_t m = allowed; m; m &= m - 1) {
        unsigned i = (unsigned)__builtin_ctzll(m);
        if (load(&cpus[i]) < load(&cpus[best]))
            best = i;
    }
    t->cpu = best;
}

/* Put t on `cpu`: at once if it is queued or waits; if it runs, its
 * core's scheduler moves it when it next leaves the kernel. */
static void move(struct thread *t, unsigned cpu)
{
    if (t->state == T_READY) {
        sched_dequeue(t);
        t->cpu = cpu;
        sched_enqueue(t);
    } else if (t->state == T_RUNNING) {
        unsigned old = t->cpu;
        t->cpu = cpu;                   /* the scheduler of `old` moves it */
        if (old != this_cpu()->index)
            irq_send_ipi(old, IRQ_SGI_WAKE);
    } else {
        t->cpu = cpu;
    }
}

int sched_set_cpus(struct thread *t, uint64_t mask)
{
    uint64_t allowed = mask & smp_online_mask();
    if (!allowed)
        return -E_INVAL;
    t->cpus = allowed;
    if (!((allowed >> t->cpu) & 1))
        move(t, (unsigned)__builtin_ctzll(allowed));
    return 0;
}

/* At a tick of core c with threads waiting: give the first of them that
 * may run on an idle core to that core. */
static void push(struct cpu *c)
{
    uint64_t idle = 0;
    for (unsigned i = 0; i < ncpus_present; i++)
        if (i != c->index && cpus[i].idle && !cpus[i].rq.nready)
            idle |= 1ull << i;
    if (!idle)
        return;
    for (int p = NPRIO - 1; p >= 0; p--) {
        if (!((c->rq.bitmap[p / 64] >> (p % 64)) & 1))
            continue;
        list_for_each(pos, &c->rq.level[p]) {
            struct thread *t = list_entry(pos, struct thread, link);
            uint64_t to = t->cpus & idle;
            if (!to || t->ksvc_run || t->ksvc_stopped)
                continue;
            move(t, (unsigned)__builtin_ctzll(to));      /* (the idle core gets an IPI) */
            return;
        }
    }
}

struct thread *sched_peek(unsigned cpu)
{
    int p = top_prio(&cpus[cpu].rq);
    return p < 0 ? NULL : list_first(&cpus[cpu].rq.level[p], struct thread, link);
}

/* Timer interrupt on this core: the time slice loses every tick period
 * that passed (a stalled core's thread does not keep the core longer), and
 * expired timeouts wake; notes the earliest deadline still pending. */
void sched_tick(uint64_t periods)
{
    struct cpu *c = this_cpu();
    if (periods && c->current && c->current->slice > 0)
        c->current->slice -= (int)MIN(periods, (uint64_t)c->current->slice);
    uint64_t now = arch_counter(), next = ~0ull;
    list_for_each_safe(pos, tmp, &c->timeouts) {
        struct thread *t = list_entry(pos, struct thread, timeout_link);
        if (t->deadline <= now) {
            thread_wake(t, -E_TIMEOUT);
            if (t->mem_wait)
                thread_memory_retry(t);
        } else
            next = MIN(next, t->deadline);
    }
    c->next_timeout = next;
    if (c->rq.nready && smp_running)
        push(c);
}

void sched_yield(void)
{
    struct thread *t = this_cpu()->current;
    if (t)
        t->slice = 0;
}

/*
 * Pick the thread to run on this core and return its frame. Called
 * with the kernel lock held at the end of every kernel entry from EL0;
 * releases the lock.
 */
static NOINLINE struct trapframe *sched_exit_slow(struct cpu *c, struct thread *cur);

struct trapframe *sched_exit(void)
{
    struct cpu *c = this_cpu();
    struct thread *cur = c->current;
    /* The common case, without a stack frame: nothing else is ready
     * here, so the current thread keeps running. */
    if (!c->rq.summary && cur && cur->state == T_RUNNING && cur->cpu == c->index && !cur->suspended) {
        kernel_unlock();
        return &cur->tf;
    }
    return sched_exit_slow(c, cur);
}

bool sched_should_yield(struct cpu *c, struct thread *cur)
{
    int best = top_prio(&c->rq);
    return cur->cpu != c->index || cur->suspended || best > cur->prio || (best == cur->prio && cur->slice <= 0);
}

static NOINLINE struct trapframe *sched_exit_slow(struct cpu *c, struct thread *cur)
{
    int best = top_prio(&c->rq);

    if (cur && cur->state == T_RUNNING && cur->cpu != c->index) {
        cur->state = T_READY;           /* its affinity moved: migrate */
        c->current = NULL;
        cur->cpu_ticks += arch_counter() - cur->run_start;
        cur->tls = read_sysreg(tpidr_el0);
        arch_fp_release(cur);
        sched_enqueue(cur);
        cur = NULL;
    }
    if (cur && cur->state == T_RUNNING) {
        if (!cur->suspended && (best < cur->prio || (best == cur->prio && cur->slice > 0))) {
            kernel_unlock();
            return &cur->tf;
        }
        bool preempted = cur->slice > 0;
        if (cur->slice <= 0)
            cur->slice = SLICE_TICKS;
        cur->state = T_READY;
        if (!cur->suspended)
            rq_insert(&c->rq, cur, preempted);  /* preempted: keep its turn */
        best = top_prio(&c->rq);
    }
    if (best < 0)
        sched_idle();
    struct thread *next = list_first(&c->rq.level[best], struct thread, link);
    rq_remove(&c->rq, next);
    struct thread *dead = (cur && cur->state == T_DEAD) ? cur : NULL;
    sched_switch(c, next);
    if (dead)
        obj_unref(&dead->obj);              /* its "alive" reference */
    if (unlikely(ksvc_stopped(next))) {
        /* It stopped inside a kernel service's request: go on with that
         * first; then decide again (it finished, or gave way again). */
        ksvc_resume(next);
        return sched_exit();
    }
    kernel_unlock();
    return &next->tf;
}

/* One wait of an idle core, interrupts masked: K2's strong domain may
 * fall asleep first (k2_irq.c); then whatever ended the wait is taken. */
static void idle_wait(void)
{
    k2_idle_wait();
    arch_wait_for_interrupt();
    k2_idle_woke();
    arch_irq_enable();                  /* take it (the tick, an IPI) */
    arch_irq_disable();
}

/*
 * Nothing to run: wait for an interrupt with the kernel unlocked, then
 * look again. Entered with the lock held; leaves into user space.
 */
NORETURN void sched_idle(void)
{
    struct cpu *c = this_cpu();
    struct thread *prev = c->current;
    /* Off the last thread's address space first: it may be freed (and its
     * tables reused) while this core idles, and a core must never walk
     * freed tables, even speculatively. An empty table with ASID 0 (never
     * given to a space) stands in. */
    static paddr_t empty_l1;
    if (!empty_l1)
        empty_l1 = frame_alloc_zeroed(0);
    if (prev && empty_l1 != PADDR_INVALID)
        arch_space_activate(empty_l1, 0);
    if (prev) {
        trace_sched_switch(prev->tid, prev->space->id, 0, 0);
        prev->cpu_ticks += arch_counter() - prev->run_start;
        prev->tls = read_sysreg(tpidr_el0);
        arch_fp_idle(prev);
        c->current = NULL;
        if (prev->state == T_DEAD)
            obj_unref(&prev->obj);
    }
    c->idle = true;
    k2_idle_enter();
    for (;;) {
        int best = top_prio(&c->rq);
        if (best >= 0) {
            struct thread *next = list_first(&c->rq.level[best], struct thread, link);
            rq_remove(&c->rq, next);
            c->idle = false;
            k2_idle_exit();
            sched_switch(c, next);
            if (unlikely(ksvc_stopped(next))) {
                ksvc_resume(next);
                arch_enter_user(sched_exit());
            }
            kernel_unlock();
            arch_enter_user(&next->tf);
        }
        kernel_unlock();
        /* Sleep until something is queued here (an IPI follows every remote
         * enqueue), without touching the kernel lock meanwhile. The wait
         * starts with interrupts masked, which a pending interrupt still
         * ends: an IPI sent between the unlock and the wait is not taken
         * first and then slept through until the next tick. */
        while (!READ_ONCE(c->rq.summary))
            idle_wait();
        kernel_lock();
    }
}

/* The idle loop's wait for interrupt, from the self tests too: a core with
 * no thread waits until done() (interrupts masked, no kernel lock). */
void sched_idle_until(bool (*done)(void))
{
    struct cpu *c = this_cpu();
    c->idle = true;
    k2_idle_enter();
    while (!done())
        idle_wait();
    c->idle = false;
    k2_idle_exit();
}

/* Wake t with E_TIMEOUT at counter value `deadline` unless woken first.
 * A deadline earlier than the core's others re-arms its timer (on another
 * core, through a wake-up IPI) for the next tick or this deadline,
 * whichever comes first, so timeouts are as precise as the counter. */
void timeout_add(struct thread *t, uint64_t deadline)
{
    struct cpu *c = &cpus[t->cpu];
    t->deadline = deadline;
    list_add_tail(&c->timeouts, &t->timeout_link);
    if (deadline < c->next_timeout) {
        c->next_timeout = deadline;
        if (c == this_cpu())
            timer_rearm();
        else
            irq_send_ipi(t->cpu, IRQ_SGI_WAKE);
    }
}

void timeout_cancel(struct thread *t)
{
    if (t->deadline) {
        list_del(&t->timeout_link);
        t->deadline = 0;
    }
}
