/*
 * Timer and multi-core tests: ticks arrive at the configured rate on
 * every core, every core named in the device tree reported in, and an
 * inter-processor interrupt reaches exactly the core it was sent to.
 */
#include "ktest.h"
#include "cpu.h"
#include "irq.h"
#include "timer.h"

/* A core's tick count together with the counter value it belongs to:
 * retried until both reads of the counter fall within a tenth of a period. */
static uint64_t ticks_at(unsigned cpu, uint64_t *when)
{
    uint64_t period = arch_counter_freq() / timer_hz();
    for (;;) {
        uint64_t a = arch_counter();
        uint64_t t = READ_ONCE(cpus[cpu].ticks);
        uint64_t b = arch_counter();
        if (b - a <= period / 10) {
            *when = a;
            return t;
        }
    }
}

KTEST(timer_rate, "timer: ticks arrive at the configured rate on every core")
{
    unsigned n = smp_online_count();
    uint64_t window = arch_counter_freq() / 2;     /* half a second */
    for (unsigned c = 0; c < n; c++) {
        uint64_t t0, t1;
        uint64_t start = ticks_at(c, &t0);
        while (arch_counter() - t0 < window)
            arch_wait_for_interrupt();
        uint64_t got = ticks_at(c, &t1) - start;
        uint64_t expected = (t1 - t0) * timer_hz() / arch_counter_freq();
        /* Deadlines are absolute and late periods are counted, so the count
         * tracks time; a core's pending catch-up (its virtual CPU stalled by a
         * busy host, tens of milliseconds on a loaded 2-core machine) shifts
         * it by a few percent at most. A wrong rate is off by far more. */
        uint64_t slack = MAX(3, expected / 20);
        KT_CHECK(got + slack >= expected && got <= expected + slack,
                 "cpu%u: %lu ticks in %lu counts, expected %lu at %u Hz", c, got, t1 - t0, expected, timer_hz());
    }
    kprintf("# %u Hz: %lu ticks expected per core per 500 ms\n", timer_hz(), (uint64_t)timer_hz() / 2);
}

KTEST(timer_counter, "timer: the counter is monotonic and runs at its stated frequency")
{
    uint64_t f = arch_counter_freq();
    KT_CHECK(f >= 1000000 && f <= 1000000000, "frequency %lu Hz", f);
    uint64_t last = arch_counter();
    bool mono = true;
    for (int i = 0; i < 10000; i++) {
        uint64_t now = arch_counter();
        mono &= now >= last;
        last = now;
    }
    KT_CHECK(mono, "counter went backwards");
    uint64_t t0 = timer_ns();
    timer_delay_us(20000);
    uint64_t dt = timer_ns() - t0;
    /* The upper bound only catches a runaway delay: a loaded host can
     * stall this virtual core for tens of milliseconds at any point. */
    KT_CHECK(dt >= 20000000 && dt < 1000000000, "20 ms delay took %lu ns", dt);
}

KTEST(smp_all_online, "smp: every core in the device tree reported in")
{
    KT_CHECK(smp_online_count() == ncpus_present, "%u of %u online", smp_online_count(), ncpus_present);
    for (unsigned c = 0; c < ncpus_present; c++)
        KT_CHECK(cpus[c].online && cpus[c].index == c, "cpu%u not online", c);
    uint64_t want = cmdline_get_u64("cpus", 0);
    if (want)
        KT_CHECK(ncpus_present == want, "device tree has %u cores, QEMU was given %lu", ncpus_present, want);
}

static void whoami(void *arg)
{
    uint64_t *out = arg;
    *out = arch_cpu_hwid() | (uint64_t)this_cpu()->index << 48;
}

KTEST(smp_ipi, "smp: an IPI runs work on exactly the core it targets")
{
    for (unsigned c = 1; c < smp_online_count(); c++) {
        uint64_t before[CONFIG_MAX_CPUS];
        for (unsigned k = 0; k < ncpus_present; k++)
            before[k] = READ_ONCE(cpus[k].ipis);
        uint64_t seen = ~0ull;
        KT_CHECK(ktest_run_on(c, whoami, &seen) == 0, "cpu%u did not answer", c);
        KT_CHECK(seen == (cpus[c].hwid | (uint64_t)c << 48), "work ran on 0x%lx, not cpu%u", seen, c);
        for (unsigned k = 0; k < ncpus_present; k++)
            KT_CHECK((READ_ONCE(cpus[k].ipis) - before[k]) == (k == c), "cpu%u ipi count", k);
    }
}
