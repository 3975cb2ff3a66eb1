/*
 * Futexes keyed by the physical address of the 32-bit word (OKL4 paper
 * IV.A.5), so that processes sharing memory meet on the same futex
 * whatever virtual address each uses. futex_wait checks the word and
 * queues the thread under the kernel lock, and futex_wake takes the same
 * lock, so a wake after the word changed can never be missed. Timeouts
 * are checked at each tick of the waiter's core.
 */
#include "thread.h"
#include "space.h"
#include "sched.h"
#include "timer.h"
#include "syscalls_gen.h"
#include "arch.h"

#define BUCKETS 64

static struct list buckets[BUCKETS];
static bool ready;

static struct list *bucket(paddr_t key)
{
    if (!ready) {
        for (unsigned i = 0; i < BUCKETS; i++)
            list_init(&buckets[i]);
        ready = true;
    }
    return &buckets[(key >> 2) % BUCKETS];
}

/* The physical address of a user word, or an error. */
static int64_t word_key(uint64_t addr, volatile uint32_t **word)
{
    if (addr & 3)
        return -E_INVAL;
    uint32_t *p = user_ptr(addr, false);
    if (!p)
        return -E_FAULT;
    *word = p;
    return (int64_t)virt_to_phys(p);
}

int64_t sys_futex_wait(uint64_t addr, uint32_t expected, uint64_t timeout_ns)
{
    volatile uint32_t *word;
    int64_t key = word_key(addr, &word);
    if (key < 0)
        return key;
    if (*word != expected)
        return -E_AGAIN;
    struct thread *t = current_thread();
    t->futex_key = (paddr_t)key;
    t->state = T_FUTEX;
    list_add_tail(bucket((paddr_t)key), &t->link);
    if (timeout_ns) {
        uint64_t ticks = timer_ns_to_ticks(timeout_ns), now = arch_counter();
        timeout_add(t, ticks > ~0ull - now ? ~0ull : now + MAX(ticks, 1));
    }
    return 0;
}

int64_t sys_futex_wake(uint64_t addr, uint64_t count)
{
    volatile uint32_t *word;
    int64_t key = word_key(addr, &word);
    if (key < 0)
        return key;
    int64_t woken = 0;
    list_for_each_safe(pos, tmp, bucket((paddr_t)key)) {
        if ((uint64_t)woken >= count)
            break;
        struct thread *t = list_entry(pos, struct thread, link);
        if (t->futex_key == (paddr_t)key) {
            thread_wake(t, 0);
            woken++;
        }
    }
    return woken;
}
