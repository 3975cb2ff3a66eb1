/* The input path's lock-free ring (services/include/spsc_ring.h, the
 * header the input service and the personality use) between two threads,
 * the producer pinned to the last core and the consumer to the first (on
 * one core, both on it), the consumer sleeping on a futex word only when
 * it has found the ring empty:
 *  - one thread alone: the edge (a push into an empty ring says signal,
 *    one into a non-empty ring does not), a full ring refusing a push and
 *    counting it, the records back in order, the edge again once drained;
 *  - EVENTS records through a ring of 64, so it wraps round thousands of
 *    times: every one arrives once, in order, intact (a sequence number
 *    and a check word); the producer waits (yields) when it finds the
 *    ring full, so none is dropped;
 *  - the producer's signals counted where it made them (a push that
 *    found the ring empty: the edge itself is checked by the first part),
 *    never more than one a record. A consumer may sleep more often than
 *    it was signalled: a wake the producer makes late (after the consumer
 *    found its record without sleeping) can end a later sleep early. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include "lxtest.h"
#include "../../services/include/spsc_ring.h"

#define FUTEX_WAIT_PRIVATE  128   /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG (musl has no linux/futex.h) */
#define FUTEX_WAKE_PRIVATE  129
#define EVENTS      2000000ull
#define RING_BYTES  (SPSC_HEADER + 64 * sizeof(struct spsc_rec))
#define CHECK       0x9e3779b97f4a7c15ull

static union {
    struct spsc_ring r;
    uint8_t bytes[RING_BYTES];
} ring __attribute__((aligned(64)));
static uint32_t size;
static volatile uint32_t doorbell;      /* the consumer's futex word: bumped on each signal */
static uint64_t pushes_signalled, full_waits;
static int ncpus;

static void pin(int cpu)
{
    uint64_t one = 1ull << cpu;
    syscall(SYS_sched_setaffinity, 0, 8, &one);
}

static void ring_bell(void)
{
    __atomic_fetch_add(&doorbell, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &doorbell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *producer(void *arg)
{
    (void)arg;
    pin(ncpus - 1);
    for (uint64_t i = 0; i < EVENTS; i++) {
        struct spsc_rec x = { i, i * CHECK };
        int r;
        while ((r = spsc_push(&ring.r, size, &x)) == SPSC_FULL) {
            full_waits++;
            sched_yield();
        }
        if (r == 1) {
            pushes_signalled++;
            ring_bell();
        }
    }
    return NULL;
}

static void alone(void)
{
    struct spsc_rec x = { 7, 7 * CHECK }, y;
    printf("empty pop: %d\n", spsc_pop(&ring.r, size, &y));
    printf("push into empty: %d\n", spsc_push(&ring.r, size, &x));
    printf("push into non-empty: %d\n", spsc_push(&ring.r, size, &x));
    int pushed = 2, r;
    while ((r = spsc_push(&ring.r, size, &x)) == 0)
        pushed++;
    printf("full after: %d, then: %d, dropped: %llu\n", pushed, r, (unsigned long long)ring.r.dropped);
    int popped = 0, ok = 1;
    while ((r = spsc_pop(&ring.r, size, &y)) == 1)
        popped++, ok &= y.a == 7 && y.b == 7 * CHECK;
    printf("popped: %d intact %d, then %d, idle %d\n", popped, ok, r, spsc_idle(&ring.r));
    printf("push into drained: %d\n", spsc_push(&ring.r, size, &x));
    spsc_pop(&ring.r, size, &y);
    ring.r.head = ring.r.tail + size + 1;                   /* a producer gone wrong */
    printf("impossible head: %d\n", spsc_pop(&ring.r, size, &y));
    ring.r.head = ring.r.tail;
    ring.r.dropped = ring.r.signals = ring.r.idles = 0;
}

int main(void)
{
    ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf("ring: %u records, attach %u, attach short %u\n", size = spsc_init(&ring.r, sizeof(ring.bytes)),
           spsc_attach(&ring.r, sizeof(ring.bytes)), spsc_attach(&ring.r, sizeof(ring.bytes) - 16));
    alone();
    pin(0);
    pthread_t t;
    if (pthread_create(&t, NULL, producer, NULL)) {
        printf("pthread_create failed\n");
        return 1;
    }
    uint64_t next = 0, bad = 0, wakeups = 0;
    int64_t start = now_ms();
    while (next < EVENTS) {
        struct spsc_rec y;
        int r = spsc_pop(&ring.r, size, &y);
        if (r == 1) {
            if (y.a != next || y.b != y.a * CHECK)
                bad++;
            next = y.a + 1;
            continue;
        }
        if (r < 0) {
            printf("broken ring at %llu\n", (unsigned long long)next);
            return 1;
        }
        uint32_t bell = __atomic_load_n(&doorbell, __ATOMIC_SEQ_CST);
        if (spsc_idle(&ring.r)) {
            syscall(SYS_futex, &doorbell, FUTEX_WAIT_PRIVATE, bell, NULL, NULL, 0);
            wakeups++;
        }
    }
    pthread_join(t, NULL);
    struct spsc_rec y;
    printf("received %llu of %llu, out of order or damaged %llu, more after the last: %d\n",
           (unsigned long long)next, (unsigned long long)EVENTS, (unsigned long long)bad,
           spsc_pop(&ring.r, size, &y));
    printf("wrapped round more than 10000 times: %s\n", EVENTS / size > 10000 ? "yes" : "no");
    printf("refusals counted as dropped %s, signals counted as pushed %s, woken only after sleeping %s\n",
           ring.r.dropped == full_waits ? "yes" : "no", ring.r.signals == pushes_signalled ? "yes" : "no",
           wakeups <= ring.r.idles ? "yes" : "no");
    printf("signals at most one per record: %s ~ signals %llu sleeps %llu full %llu, %lld ms on %d cores\n",
           ring.r.signals <= EVENTS ? "yes" : "no", (unsigned long long)ring.r.signals,
           (unsigned long long)ring.r.idles, (unsigned long long)full_waits, (long long)(now_ms() - start), ncpus);
    printf("spscring: done\n");
    return 0;
}
