/*
 * A lock-free ring of 16-byte records between one producer and one
 * consumer in shared memory (the OKL4 paper's input path, section IV.C):
 * neither side takes a lock or enters the kernel to pass a record; the
 * producer tells the consumer only when the ring goes from empty to
 * non-empty, the consumer sleeps only when it has found it empty.
 *
 * Layout: a header whose producer's and consumer's words sit in cache
 * lines of their own (neither side's stores disturb the other's line more
 * than the handing over needs), then `size` records, a power of two.
 * `head` counts the records ever published (only the producer writes it),
 * `tail` those ever taken (only the consumer writes it); head - tail is
 * the number waiting, never more than size.
 *
 * The edge: the producer publishes head, then (after a full barrier)
 * reads tail; if tail equals the head before the push, the consumer had
 * taken everything, so it may be asleep or about to be: signal it. The
 * consumer, before it sleeps, stores its tail, then (after a full barrier)
 * reads head once more (spsc_idle). Of two such store-barrier-load
 * sequences at least one sees the other's store: either the producer sees
 * the ring empty and signals, or the consumer sees the new record and
 * does not sleep. A signal is never needed otherwise, and with a sticky
 * notification (Petrel's, or a futex word compared on wait) never lost.
 *
 * Either side may be untrusted by the other: each keeps its own copy of
 * `size` (checked once, spsc_attach) and indexes records with it, and
 * the consumer treats a head more than size ahead of its tail as a broken
 * ring (SPSC_BROKEN) rather than read what it does not own.
 */
#ifndef PETREL_SPSC_RING_H
#define PETREL_SPSC_RING_H

#include <stdint.h>

#define SPSC_MAGIC      0x43535053u     /* "SPSC" */
#define SPSC_HEADER     192u            /* three 64-byte cache lines */
#define SPSC_FULL       (-1)            /* spsc_push: no room; the record was not published */
#define SPSC_BROKEN     (-2)            /* spsc_pop: the producer's head is impossible */

struct spsc_rec {
    uint64_t a, b;
};

struct spsc_ring {
    uint32_t magic, size;               /* records (a power of two) */
    uint8_t pad0[56];
    uint64_t head;                      /* producer: records published */
    uint64_t dropped;                   /* producer: pushes refused, the ring full */
    uint64_t signals;                   /* producer: empty-to-non-empty edges it signalled */
    uint8_t pad1[40];
    uint64_t tail;                      /* consumer: records taken */
    uint64_t idles;                     /* consumer: times it found the ring empty and slept */
    uint8_t pad2[48];
    struct spsc_rec rec[];
};

_Static_assert(__builtin_offsetof(struct spsc_ring, rec) == SPSC_HEADER, "spsc header");

static inline void spsc_full_barrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* Make a ring in `bytes` of zeroed shared memory: as many records as a
 * power of two fits. Its size, or 0 if not even two fit. */
static inline uint32_t spsc_init(struct spsc_ring *r, uint64_t bytes)
{
    if (bytes < SPSC_HEADER + 2 * sizeof(struct spsc_rec))
        return 0;
    uint64_t n = (bytes - SPSC_HEADER) / sizeof(struct spsc_rec), size = 1;
    while (size * 2 <= n && size < (1u << 30))
        size *= 2;
    r->size = (uint32_t)size;
    __atomic_store_n(&r->magic, SPSC_MAGIC, __ATOMIC_RELEASE);
    return r->size;
}

/* The other side's check of a ring in `bytes` of shared memory: its size
 * (to be kept and passed to push and pop), or 0 if it is not a ring that
 * fits. */
static inline uint32_t spsc_attach(const struct spsc_ring *r, uint64_t bytes)
{
    uint32_t size = r->size;
    if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != SPSC_MAGIC || size < 2 || (size & (size - 1)) ||
        size > (bytes - SPSC_HEADER) / sizeof(struct spsc_rec) || bytes < SPSC_HEADER)
        return 0;
    return size;
}

/* Producer: publish x. 1 if the ring was empty (signal the consumer), 0
 * if not, SPSC_FULL if there is no room (counted in dropped). */
static inline int spsc_push(struct spsc_ring *r, uint32_t size, const struct spsc_rec *x)
{
    uint64_t h = r->head;
    if (h - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= size) {
        r->dropped++;
        return SPSC_FULL;
    }
    r->rec[h & (size - 1)] = *x;
    __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
    spsc_full_barrier();
    if (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) != h)
        return 0;
    r->signals++;
    return 1;
}

/* Consumer: take the oldest record into *x. 1 if one was taken, 0 if the
 * ring is empty, SPSC_BROKEN if its head cannot be right. */
static inline int spsc_pop(struct spsc_ring *r, uint32_t size, struct spsc_rec *x)
{
    uint64_t t = r->tail, h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    if (h == t)
        return 0;
    if (h - t > size)
        return SPSC_BROKEN;
    *x = r->rec[t & (size - 1)];
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
    return 1;
}

/* Consumer, about to sleep until signalled: 1 if it may (the ring is
 * still empty after the barrier that orders its last tail store before
 * this read of head; counted in idles), 0 if a record came meanwhile. */
static inline int spsc_idle(struct spsc_ring *r)
{
    spsc_full_barrier();
    if (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != r->tail)
        return 0;
    r->idles++;
    return 1;
}

/* Consumer: the next record into *x (1), or 0 once the ring is still
 * empty after spsc_idle's barrier (the consumer may sleep: a record that
 * comes later is signalled), or SPSC_BROKEN. */
static inline int spsc_take(struct spsc_ring *r, uint32_t size, struct spsc_rec *x)
{
    for (;;) {
        int got = spsc_pop(r, size, x);
        if (got != 0 || spsc_idle(r))
            return got;
    }
}

/* Consumer: records to fn(rec, arg), until the ring is empty after
 * spsc_take's barrier (0), or `max` of them (1: more may be there, and the
 * producer signals only an empty ring's next record, so the caller must
 * come back by itself: a producer that never stops does not hold it here),
 * or SPSC_BROKEN. */
static inline int spsc_drain(struct spsc_ring *r, uint32_t size, uint32_t max,
                             void (*fn)(const struct spsc_rec *, void *), void *arg)
{
    struct spsc_rec x;
    for (uint32_t n = 0; n < max; n++) {
        int got = spsc_take(r, size, &x);
        if (got <= 0)
            return got;
        fn(&x, arg);
    }
    return 1;
}

#endif
