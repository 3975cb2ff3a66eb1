/*
 * Ticket spinlocks. spin_lock_irqsave masks interrupts on this core
 * first, so a handler can never spin on a lock its own core holds.
 */
#ifndef PETREL_SPINLOCK_H
#define PETREL_SPINLOCK_H

#include "arch.h"

typedef struct {
    uint32_t next;      /* the next ticket to hand out */
    uint32_t owner;     /* the ticket now allowed in */
} spinlock_t;

#define SPINLOCK_INIT { 0, 0 }

static inline void spin_lock(spinlock_t *l)
{
    uint32_t me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != me)
        arch_cpu_relax();
}

static inline void spin_unlock(spinlock_t *l)
{
    __atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

static inline uint64_t spin_lock_irqsave(spinlock_t *l)
{
    uint64_t flags = arch_irq_save();
    spin_lock(l);
    return flags;
}

static inline void spin_unlock_irqrestore(spinlock_t *l, uint64_t flags)
{
    spin_unlock(l);
    arch_irq_restore(flags);
}

#endif
