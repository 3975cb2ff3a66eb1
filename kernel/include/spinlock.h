/*
 * Spinlocks: test and test-and-set. spin_lock_irqsave masks interrupts on
 * this core first, so a handler can never spin on a lock its own core
 * holds.
 *
 * Not ticket locks on purpose. A ticket lock hands the lock to the next
 * waiter in line even when that waiter's core is not running, which is
 * the common case on a virtual machine with more cores than its host
 * gives it (QEMU with four cores on a two-core host): everyone then waits
 * for the host to run that one core, at every hand-over. With four Linux
 * threads on four cores of a two-core host, the stress case did 53
 * operations in 20 s with ticket locks and about 4,400 with these. Here
 * whichever waiter runs when the lock is let go takes it. The price is
 * fairness: a core may lose the race several times in a row; the locks
 * are held for short stretches, so it waits longer, never forever in
 * practice (docs/design/kernel.md, "The locks").
 */
#ifndef PETREL_SPINLOCK_H
#define PETREL_SPINLOCK_H

#include "arch.h"

typedef struct {
    uint32_t locked;    /* 1 while a core holds it */
} spinlock_t;

#define SPINLOCK_INIT { 0 }

static inline void spin_lock(spinlock_t *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            arch_cpu_relax();   /* read only while it is held: the line stays shared */
}

static inline void spin_unlock(spinlock_t *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
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
