/*
 * A deliberate kernel stack overflow (test kernel only, boot argument
 * "kstackoverflow"): deep recursion on the highest-numbered online core,
 * so that what stops it is the guard page below that core's stack and
 * not another core's. The expected end is the panic "kernel stack
 * overflow" on that core (guest cases panic/stack-overflow-*).
 */
#include "ktest.h"
#include "cpu.h"

/*
 * Recurse `depth` levels with a 256-byte frame each. The frame is
 * volatile and the result is used after the call, so the compiler can
 * neither shrink the frames nor turn the recursion into a loop.
 */
static unsigned __attribute__((noinline)) recurse(unsigned depth)
{
    volatile uint8_t frame[256];
    frame[0] = (uint8_t)depth;
    if (depth == 0)
        return frame[0];
    return recurse(depth - 1) + frame[0];
}

/* Runs on the target core: recursion far deeper than any kernel stack. */
static void overflow(void *arg)
{
    kprintf("petrel: kstackoverflow: deep recursion on cpu%u\n", this_cpu()->index);
    recurse(1u << 20);
    panic("kstackoverflow: the recursion returned");
}

/* Overflow the kernel stack of the last online core. Never returns. */
NORETURN void ktest_stack_overflow(void)
{
    unsigned cpu = ncpus_present - 1;
    while (cpu > 0 && !READ_ONCE(cpus[cpu].online))
        cpu--;
    int err = ktest_run_on(cpu, overflow, NULL);
    panic("kstackoverflow: cpu%u did not overflow: %s", cpu, error_name(err));
}
