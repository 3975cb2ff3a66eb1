/*
 * futex(2) itself: the value check, timeouts, bad arguments, wake counts,
 * bitsets, requeue, wake-op, and a wait/wake between two threads.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

/* <linux/futex.h>'s values (the musl toolchain has no kernel headers). */
#define FUTEX_WAIT              0
#define FUTEX_WAKE              1
#define FUTEX_CMP_REQUEUE       4
#define FUTEX_WAKE_OP           5
#define FUTEX_WAIT_BITSET       9
#define FUTEX_WAKE_BITSET       10
#define FUTEX_PRIVATE_FLAG      128
#define FUTEX_CLOCK_REALTIME    256
#define FUTEX_WAIT_PRIVATE      (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE      (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_CMP_REQUEUE_PRIVATE (FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_OP_PRIVATE   (FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAIT_BITSET_PRIVATE (FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_BITSET_PRIVATE (FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_BITSET_MATCH_ANY  0xffffffffu
#define FUTEX_OP_ADD            1
#define FUTEX_OP_OR             2
#define FUTEX_OP_CMP_EQ         0
#define FUTEX_OP_CMP_GT         4
#define FUTEX_OP(op, oparg, cmp, cmparg) \
    ((((op) & 0xf) << 28) | (((cmp) & 0xf) << 24) | (((oparg) & 0xfff) << 12) | ((cmparg) & 0xfff))

static long futex(uint32_t *uaddr, int op, uint32_t val, const void *ts_or_n, uint32_t *uaddr2, uint32_t val3)
{
    return syscall(SYS_futex, uaddr, op, val, ts_or_n, uaddr2, val3);
}

static uint32_t word, word2;
static volatile int waiting;

static void *wait_on_word(void *arg)
{
    int op = (int)(long)arg;
    __atomic_add_fetch(&waiting, 1, __ATOMIC_SEQ_CST);
    long r;
    do
        r = futex(&word, op, 0, NULL, NULL, op == FUTEX_WAIT_BITSET_PRIVATE ? 2 : 0);
    while (r == 0 && __atomic_load_n(&word, __ATOMIC_SEQ_CST) == 0);     /* (a wake with nothing changed) */
    return (void *)r;
}

/* Wait until n threads are blocked in the kernel on word (no clean way to
 * know: give them time after they said they are about to). */
static void settle(int n)
{
    while (waiting < n)
        usleep(1000);
    usleep(100000);
}

/* A word other threads change while the kernel reads or changes it: a
 * futex call sees it whole (one 32-bit access), and FUTEX_WAKE_OP's
 * operation is atomic against their own atomics. */
static uint32_t busy;
static volatile int stop;

static void *flip(void *arg)
{
    (void)arg;
    while (!stop) {
        __atomic_store_n(&busy, 0x000000ffu, __ATOMIC_RELAXED);
        __atomic_store_n(&busy, 0x0000ff00u, __ATOMIC_RELAXED);
    }
    return NULL;
}

#define ADDS 20000

static void *add(void *arg)
{
    (void)arg;
    for (int i = 0; i < ADDS; i++)
        __atomic_add_fetch(&busy, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void changing_words(void)
{
    pthread_t t;
    struct timespec none = { 0, 0 };
    int again = 0, tries = 3000;
    stop = 0;
    busy = 0x000000ffu;
    pthread_create(&t, NULL, flip, NULL);
    for (int i = 0; i < tries; i++) {
        /* 0x0000ffff and 0 are never its value: only a torn read matches. */
        uint32_t never = (i & 1) ? 0x0000ffffu : 0;
        again += futex(&busy, FUTEX_WAIT_PRIVATE, never, &none, NULL, 0) == -1 && errno == EAGAIN;
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("wait on a word another thread keeps changing, never to the value: EAGAIN %d of %d\n", again, tries);
    busy = 0;
    int ops = 2000;
    uint32_t op = FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0);
    pthread_create(&t, NULL, add, NULL);
    for (int i = 0; i < ops; i++)
        futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &busy, op);
    pthread_join(t, NULL);
    printf("wake_op adding %d beside a thread adding %d: %u\n", ops, ADDS, busy);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct timespec short_ts = { 0, 20 * 1000 * 1000 };
    word = 5;
    SHOW("wait with another value", futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0));
    SHOW("wait, 20 ms timeout", futex(&word, FUTEX_WAIT_PRIVATE, 5, &short_ts, NULL, 0));
    SHOW("wait, shared, timeout", futex(&word, FUTEX_WAIT, 5, &short_ts, NULL, 0));
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    now.tv_nsec += 10 * 1000 * 1000;
    if (now.tv_nsec >= 1000000000) {
        now.tv_sec++;
        now.tv_nsec -= 1000000000;
    }
    SHOW("wait_bitset, absolute timeout", futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 5, &now, NULL, FUTEX_BITSET_MATCH_ANY));
    struct timespec past = { 0, 0 };
    SHOW("wait_bitset realtime, past", futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &past, NULL, ~0u));
    SHOW("wait with clock_realtime", futex(&word, FUTEX_WAIT_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &short_ts, NULL, 0));
    struct timespec bad = { 0, 1000000000 };
    SHOW("wait, bad timespec", futex(&word, FUTEX_WAIT_PRIVATE, 5, &bad, NULL, 0));
    SHOW("wait, misaligned", futex((uint32_t *)((char *)&word + 1), FUTEX_WAIT_PRIVATE, 5, NULL, NULL, 0));
    SHOW("wait, bad address", futex((uint32_t *)8, FUTEX_WAIT_PRIVATE, 5, NULL, NULL, 0));
    SHOW("wait, timeout at a bad address", futex(&word, FUTEX_WAIT_PRIVATE, 5, (void *)8, NULL, 0));
    SHOW("wait_bitset, zero bitset", futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 5, NULL, NULL, 0));
    SHOW("wake, nobody waits", futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    SHOW("wake_bitset, zero bitset", futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0));
    SHOW("wake, bad address", futex((uint32_t *)8, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    SHOW("unknown op", futex(&word, 99, 0, NULL, NULL, 0));
    SHOW("cmp_requeue, value differs", futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1, &word2, 4));
    SHOW("cmp_requeue, negative count", futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)-1L, &word2, 5));
    SHOW("cmp_requeue, misaligned second", futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1,
                                                 (uint32_t *)((char *)&word2 + 2), 5));

    /* Three waiters: a shared wake does not meet them; wake one, then the rest. */
    pthread_t t[3];
    word = 0;
    waiting = 0;
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, wait_on_word, (void *)(long)FUTEX_WAIT_PRIVATE);
    settle(3);
    SHOW("shared wake meets private waiters", futex(&word, FUTEX_WAKE, 3, NULL, NULL, 0));
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    SHOW("wake with count 0 wakes one", futex(&word, FUTEX_WAKE_PRIVATE, 0, NULL, NULL, 0));
    SHOW("wake all", futex(&word, FUTEX_WAKE_PRIVATE, 100, NULL, NULL, 0));
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("three waiters done\n");

    /* Bitsets: a waiter on bit 2 is not woken by bit 1. */
    word = 0;
    waiting = 0;
    pthread_create(&t[0], NULL, wait_on_word, (void *)(long)FUTEX_WAIT_BITSET_PRIVATE);
    settle(1);
    SHOW("wake_bitset other bits", futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 1));
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    SHOW("wake_bitset its bit", futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 2 | 8));
    pthread_join(t[0], NULL);

    /* Requeue: two waiters on word; wake one, move one to word2, wake it there. */
    word = 0;
    waiting = 0;
    pthread_create(&t[0], NULL, wait_on_word, (void *)(long)FUTEX_WAIT_PRIVATE);
    pthread_create(&t[1], NULL, wait_on_word, (void *)(long)FUTEX_WAIT_PRIVATE);
    settle(2);
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    SHOW("cmp_requeue wakes 1, moves 1", futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1, &word2, 1));
    SHOW("wake on the first word", futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
    SHOW("wake on the second word", futex(&word2, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);

    /* Wake-op: word2 = word2 + 5 (old 0 == 0: wake the second word's waiters too). */
    word = word2 = 0;
    uint32_t op = FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0);
    SHOW("wake_op", futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &word2, op));
    printf("second word after wake_op: %u\n", word2);
    op = FUTEX_OP(FUTEX_OP_OR, 2, FUTEX_OP_CMP_GT, 100);
    SHOW("wake_op or", futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &word2, op));
    printf("second word after wake_op or: %u\n", word2);
    SHOW("wake_op, bad second address", futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, (uint32_t *)8, op));

    /* A word in a read-only mapping can be waited on (it is only read). */
    uint32_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SHOW("wait on a read-only page, other value", futex(ro, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0));
    SHOW("wait on a read-only page, timeout", futex(ro, FUTEX_WAIT_PRIVATE, 0, &short_ts, NULL, 0));
    SHOW("wake_op on a read-only page", futex(&word, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, ro, op));
    changing_words();
    return 0;
}
