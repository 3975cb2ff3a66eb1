/*
 * Shared by the Petrel and Linux benchmark programs: timing with the
 * virtual counter (readable at EL0 on both systems) and the report line
 * the host harness parses:
 *
 *   BENCH <metric> <system> <per-iteration nanoseconds> <iterations>
 *
 * Under `-icount shift=0` one guest instruction takes one nanosecond, so
 * the same line reads as instructions.
 */
#ifndef PETREL_BENCH_H
#define PETREL_BENCH_H

#include <stdint.h>

static inline uint64_t bench_counter(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
    return v;
}

static inline uint64_t bench_freq(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
    return v;
}

uint64_t bw_read(const void *buf, uint64_t bytes);
void bw_copy(void *dst, const void *src, uint64_t bytes);

/* Picoseconds per iteration for `ticks` counter ticks over `iters`
 * (the counter frequency divides 10^12 on every platform we run on). */
static inline uint64_t bench_ps(uint64_t ticks, uint64_t iters, uint64_t freq)
{
    return ticks * (1000000000000ull / freq) / (iters ? iters : 1);
}

#endif
