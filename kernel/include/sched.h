/*
 * The scheduler: fixed priorities 0-255 (higher runs first), round robin
 * within a level, one run queue per core with a bitmap for a
 * constant-time pick, and the big kernel lock that serialises all
 * kernel work across cores.
 */
#ifndef PETREL_SCHED_H
#define PETREL_SCHED_H

#include "list.h"
#include "types.h"
#include "spinlock.h"

struct thread;
struct trapframe;
struct cpu;

#define NPRIO           256
#define SLICE_TICKS     5

struct runqueue {
    struct list level[NPRIO];
    uint64_t bitmap[NPRIO / 64];
    uint64_t summary;           /* bit i: bitmap[i] non-empty */
    unsigned nready;            /* threads queued */
};

void sched_init_cpu(unsigned cpu);
void sched_enqueue(struct thread *t);           /* make runnable on t->cpu */
/* The same, at the front of its priority's queue: for a thread that was
 * stopped rather than done (it waited for a busy kernel-placed service
 * only to make its call again), which keeps its turn. */
void sched_enqueue_front(struct thread *t);
void sched_dequeue(struct thread *t);
/* A thread about to start: put it on the best of its cores (t->cpus). */
void sched_place(struct thread *t);
/* Let t run only on the cores of mask (online ones, at least one), moving
 * it now if its core is not among them. */
int sched_set_cpus(struct thread *t, uint64_t mask);
void sched_tick(uint64_t periods);              /* timer: slices (periods passed), timeouts */
void sched_yield(void);
struct thread *sched_peek(unsigned cpu);
/* The frame to return to user space with: the best thread for this core.
 * Enters the idle loop (and never returns) if there is none. */
struct trapframe *sched_exit(void);
/* Would the scheduler take core c from cur now (something better, or as
 * good with cur's slice spent, is ready there; or cur must move)? */
bool sched_should_yield(struct cpu *c, struct thread *cur);
NORETURN void sched_idle(void);
void sched_idle_until(bool (*done)(void));     /* a core with no thread (self tests) */

/* The big kernel lock; nothing to take while only one core runs. */
extern bool smp_running;
extern spinlock_t big_lock;

static inline void kernel_lock(void)
{
    if (smp_running)
        spin_lock(&big_lock);
}

static inline void kernel_unlock(void)
{
    if (smp_running)
        spin_unlock(&big_lock);
}

/* Timeouts (checked at each tick on the thread's core). */
void timeout_add(struct thread *t, uint64_t deadline);
void timeout_cancel(struct thread *t);

#endif
