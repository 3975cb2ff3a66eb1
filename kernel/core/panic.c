/*
 * Kernel panic: say why, on which core, with the exception frame when
 * there is one, then stop the machine with a failure status so that a
 * test runner (or CI) sees the crash. A panic while panicking just
 * stops the core.
 */
#include "kernel.h"
#include "arch.h"
#include "cpu.h"

static volatile uint32_t panicking;

static NORETURN void vpanic(const struct trapframe *tf, const char *fmt, va_list ap)
{
    arch_irq_disable();
    if (__atomic_exchange_n(&panicking, 1, __ATOMIC_SEQ_CST)) {
        for (;;)
            arch_wait_for_interrupt();
    }
    char buf[256];
    kvsnprintf(buf, sizeof(buf), fmt, ap);
    struct cpu *c = this_cpu();
    kprintf("\nPANIC on cpu%u: %s\n", c ? c->index : 0, buf);
    if (tf)
        arch_dump_frame(tf);
    kprintf("PANIC: system halted\n");
    arch_system_fail(1);
}

NORETURN void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vpanic(NULL, fmt, ap);
}

NORETURN void panic_frame(const struct trapframe *tf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vpanic(tf, fmt, ap);
}
