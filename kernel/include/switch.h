/*
 * The context switch itself, inline for the scheduler and the IPC
 * fastpath.
 */
#ifndef PETREL_SWITCH_H
#define PETREL_SWITCH_H

#include "cpu.h"
#include "thread.h"
#include "space.h"
#include "trace.h"

/*
 * Switch core c from prev (its current thread, or NULL) to t: time
 * accounting, TLS, address space, FP. Every caller returns to user space
 * right after (the exception return makes the new TTBR0 take effect, so
 * no barrier here).
 */
static ALWAYS_INLINE void switch_from_to(struct cpu *c, struct thread *prev, struct thread *t)
{
    uint64_t now = arch_counter_relaxed();
    trace_sched_switch(prev ? prev->tid : 0, prev ? prev->space->id : 0, t->tid, t->space->id);
    if (prev) {
        prev->cpu_ticks += now - prev->run_start;
        prev->tls = read_sysreg(tpidr_el0);
    }
    t->run_start = now;
    write_sysreg(tpidr_el0, t->tls);
    if (!prev || prev->space != t->space)
        arch_space_activate_for_return(t->space->l1_pa, t->space->asid);
    arch_fp_switch(c, prev, t);
    t->state = T_RUNNING;
    c->current = t;
}

/* Switch core c from its current thread to t. */
static ALWAYS_INLINE void sched_switch(struct cpu *c, struct thread *t)
{
    switch_from_to(c, c->current, t);
}

#endif
