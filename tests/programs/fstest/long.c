/*
 * Long requests: 1 MiB reads of /boot/pattern (build/data/pattern-1m.bin).
 * In the kernel placement such a read runs in bounded steps on the
 * service's own stack and may stop between two of them; in user space it
 * is the server thread's work. Either way: the data arrives whole, a
 * better thread on the same core runs in the middle of it, two readers on
 * two cores both get their data, and a reader killed or suspended in the
 * middle of its request holds nobody else up.
 */
#include "fstest.h"

#define MIB         (1u << 20)
#define TRIALS      10

static uint8_t *buf0, *buf1;          /* one 2 MiB page: one TLB entry */
static volatile int stop_reading;
static volatile unsigned reads_done[2], reads_bad[2];

static inline uint64_t now(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

static inline uint64_t freq(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
    return v;
}

static uint32_t first_bad;     /* where the last pattern_ok that failed found it wrong */

static bool pattern_ok(const uint8_t *b)
{
    for (uint32_t i = 0; i < MIB; i++) {
        if (b[i] != (uint8_t)(i * 7 + i / 4096)) {
            first_bad = i;
            return false;
        }
    }
    return true;
}

static int64_t read_pattern(uint8_t *b)
{
    memset(b, 0, MIB);
    return read_file("/boot/pattern", b, MIB);
}

/* Close what readers killed in the middle left open: their descriptors
 * are this process's (as a process's exit would close them; the service
 * is not told when a thread dies), numbered from 1 per client. */
static void close_left_open(void)
{
    for (uint32_t fd = 1; fd <= FS_CLIENT_OPEN; fd++)
        fs_close(fs, fd);
}

/* Read the pattern until told to stop, counting good and bad reads. */
static void reader(void *arg)
{
    unsigned who = (unsigned)(uintptr_t)arg;
    uint8_t *b = who ? buf1 : buf0;
    while (!stop_reading) {
        int64_t n = read_pattern(b);
        if (n != MIB || !pattern_ok(b))
            reads_bad[who]++;
        reads_done[who]++;
    }
    for (;;)
        sleep_ms(1000);
}

static void whole(void)
{
    tap_ok(read_pattern(buf0) == MIB && pattern_ok(buf0), "fs: a 1 MiB read of a boot file arrives whole");
}

static volatile int woke_mid;     /* the sleeper found the read begun, not ended */

/* Sleep `arg` counter ticks (a futex timeout: this core's timer
 * interrupt), then look at the buffer the read fills, front to back: its
 * front written and its last byte not yet means the read was in the
 * middle. */
static void sleeper(void *arg)
{
    uint64_t ticks = (uint64_t)(uintptr_t)arg;
    uint32_t zero = 0;
    sys_futex_wait((uint64_t)&zero, 0, ticks * 1000000000ull / freq());
    const volatile uint8_t *b = buf0;
    woke_mid = b[1] == 7 && b[MIB - 1] == 0 ? 1 : -1;     /* pattern bytes 1 and MIB-1 are 7 and 248 */
    for (;;)
        sleep_ms(1000);
}

/* A thread of higher priority than the reader (and than a user-placed
 * server) on the same core wakes from a timeout set to half the fastest
 * read: it must find the read's buffer partly filled, i.e. run in
 * the middle of the service's work, not after it. The cases run under
 * icount (guest time is instructions): with the host's clock a busy host
 * delivers timer interrupts late and this would measure the host. */
static void better_thread_runs(void)
{
    uint64_t d = ~0ull;
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = now();
        read_file("/boot/pattern", buf0, MIB);
        d = MIN(d, now() - t0);
    }
    unsigned mid = 0;
    for (int i = 0; i < TRIALS; i++) {
        woke_mid = 0;
        memset(buf0, 0, MIB);
        int64_t t = thread_spawn(sleeper, (void *)(uintptr_t)(d / 2), 200, 0);
        if (t < 0)
            break;
        int64_t n = read_file("/boot/pattern", buf0, MIB);
        for (uint64_t t0 = now(); !woke_mid && now() - t0 < freq();)
            sleep_ms(1);
        thread_reap((uint32_t)t);
        mid += n == MIB && pattern_ok(buf0) && woke_mid == 1;
    }
    tap_ok(mid >= TRIALS - 2, "fs: a better thread on the reader's core runs in the middle of a 1 MiB read "
           "(%u of %u found it partly done)", mid, TRIALS);
}

/* Readers on cores 0 and 1 at once: both get their data every time. */
static void two_cores(void)
{
    stop_reading = 0;
    reads_done[0] = reads_done[1] = reads_bad[0] = reads_bad[1] = 0;
    int64_t a = thread_spawn(reader, (void *)0, 100, 0);
    int64_t b = thread_spawn(reader, (void *)1, 100, 1);
    uint64_t t0 = now();
    while ((reads_done[0] < 3 || reads_done[1] < 3) && now() - t0 < 60 * freq())
        sleep_ms(5);
    stop_reading = 1;
    sleep_ms(50);
    if (a > 0)
        thread_reap((uint32_t)a);
    if (b > 0)
        thread_reap((uint32_t)b);
    close_left_open();
    tap_ok(a > 0 && b > 0 && reads_done[0] >= 3 && reads_done[1] >= 3 && !reads_bad[0] && !reads_bad[1],
           "fs: readers on two cores both get whole data (%u and %u reads, %u and %u bad)", reads_done[0],
           reads_done[1], reads_bad[0], reads_bad[1]);
}

/* Kill readers in the middle of their reads, on this core (a request
 * stopped by this better thread) and on the other (running, or waiting
 * for the service): the service answers the next request every time. */
static void killed_readers(void)
{
    unsigned fine = 0;
    for (int i = 0; i < TRIALS; i++) {
        stop_reading = 0;
        int64_t a = thread_spawn(reader, (void *)0, 100, 0);
        int64_t b = thread_spawn(reader, (void *)1, 100, 1);
        sleep_ms(1 + i % 3);
        if (a > 0)
            sys_thread_kill((uint32_t)a);
        if (i % 2 && b > 0)
            sys_thread_kill((uint32_t)b);
        stop_reading = 1;
        if (a > 0)
            thread_reap((uint32_t)a);
        if (b > 0)
            thread_reap((uint32_t)b);
        close_left_open();
        fine += read_pattern(buf0) == MIB && pattern_ok(buf0);
    }
    tap_ok(fine == TRIALS, "fs: readers killed in the middle of 1 MiB reads leave the service answering (%u of %u)",
           fine, TRIALS);
}

static volatile int spin_stop;

/* Read the pattern until told to stop, without looking at it: nearly
 * always in the middle of a request. */
static void busy_reader(void *arg)
{
    while (!stop_reading) {
        read_file("/boot/pattern", buf0, MIB);
        reads_done[0]++;
    }
    for (;;)
        sleep_ms(1000);
}

/* A busy thread: runs until told to stop, or 3 s at most. */
static void spinner(void *arg)
{
    uint64_t end = now() + 3 * freq();
    while (!spin_stop && now() < end)
        __asm__ volatile("" ::: "memory");
    for (;;)
        sleep_ms(1000);
}

/* A reader of priority 100 is in the middle of its read when a busy thread
 * of priority 150 takes their core; a client of priority 200 then calls the
 * service. It must lend its priority to the request in progress (or to the
 * user-placed server), which then finishes ahead of the busy thread: the
 * better client is served long before the busy thread would let go. */
static void lent_priority(void)
{
    stop_reading = 0;
    spin_stop = 0;
    reads_done[0] = 0;
    int64_t a = thread_spawn(busy_reader, NULL, 100, 0);
    sleep_ms(2);
    int64_t b = thread_spawn(spinner, NULL, 150, 0);
    uint64_t t0 = now();
    bool mine = read_pattern(buf1) == MIB && pattern_ok(buf1);
    uint64_t took = now() - t0;
    spin_stop = 1;
    stop_reading = 1;
    if (b > 0)
        thread_reap((uint32_t)b);
    if (a > 0)
        thread_reap((uint32_t)a);
    close_left_open();
    tap_ok(a > 0 && b > 0 && mine && took < freq(),
           "fs: a better client waiting for a busy service lends its priority to the request in progress "
           "(served in %lu ms beside a busy thread)", (unsigned long)(took * 1000 / freq()));
}

/* Suspend a reader in the middle of its read: a better thread's own read
 * still completes; resumed, the reader goes on reading whole data. */
static void suspended_reader(void)
{
    stop_reading = 0;
    reads_done[0] = reads_bad[0] = 0;
    int64_t a = thread_spawn(reader, (void *)0, 100, 0);
    sleep_ms(2);
    int64_t s = a > 0 ? sys_thread_suspend((uint32_t)a) : a;
    int64_t n = read_pattern(buf1);
    bool mine = n == MIB && pattern_ok(buf1);
    unsigned before = reads_done[0];
    sleep_ms(20);
    bool held = reads_done[0] <= before + 1;       /* at most the request it was in finished */
    int64_t r = a > 0 ? sys_thread_resume((uint32_t)a) : a;
    uint64_t t0 = now();
    while (reads_done[0] < before + 3 && now() - t0 < 20 * freq())
        sleep_ms(5);
    stop_reading = 1;
    bool went_on = reads_done[0] >= before + 3 && !reads_bad[0];
    if (a > 0)
        thread_reap((uint32_t)a);
    close_left_open();
    tap_ok(s == 0 && r == 0 && mine && held && went_on,
           "fs: a reader suspended in a 1 MiB read holds nobody up and reads on when resumed "
           "(suspend %ld, resume %ld, other read %ld bytes, %s at %u, held %s, went on %s)", (long)s, (long)r, (long)n,
           mine ? "whole" : "bad", mine ? 0 : first_bad, held ? "yes" : "no", went_on ? "yes" : "no");
}

void long_requests(void)
{
    buf0 = mem_alloc(2 * MIB, MEM_PAGE_2M, NULL);
    buf1 = buf0 + MIB;
    if (!buf0) {
        tap_ok(false, "fs: 2 MiB of buffers for the long requests");
        return;
    }
    sys_thread_set_affinity(self_thread(), 0);
    whole();
    better_thread_runs();
    sys_thread_set_priority(self_thread(), 200);    /* the better thread of what follows */
    two_cores();
    killed_readers();
    lent_priority();
    suspended_reader();
    sys_thread_set_priority(self_thread(), 100);
}
