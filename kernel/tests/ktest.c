/*
 * The self-test runner (test kernel only): runs every KTEST in link
 * order, or those whose name starts with the value of "ktest=", and
 * prints TAP with the plan at the end.
 */
#include "ktest.h"
#include "cpu.h"
#include "irq.h"

extern const struct ktest __ktest_start[], __ktest_end[];

static unsigned number;         /* TAP test number */
static bool current_ok;
static bool current_reported;   /* the test printed its own results */
static unsigned failed;

bool ktest_check(bool ok, const char *expr, const char *file, int line, const char *fmt, ...)
{
    if (ok)
        return true;
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    kprintf("# check failed: %s (%s:%d): %s\n", expr, file, line, buf);
    current_ok = false;
    return false;
}

void ktest_result(bool ok, const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    kprintf("%s %u - %s\n", ok ? "ok" : "not ok", ++number, buf);
    failed += !ok;
    current_reported = true;
}

int ktest_run_on(unsigned cpu, void (*fn)(void *), void *arg)
{
    if (cpu >= ncpus_present || !READ_ONCE(cpus[cpu].online))
        return -E_INVAL;
    struct cpu *c = &cpus[cpu];
    if (c == this_cpu()) {
        fn(arg);
        return 0;
    }
    c->work_done = 0;
    c->work_arg = arg;
    __atomic_store_n(&c->work, fn, __ATOMIC_RELEASE);
    irq_send_ipi(cpu, IRQ_SGI_TEST);
    uint64_t deadline = arch_counter() + 2 * arch_counter_freq();
    while (!__atomic_load_n(&c->work_done, __ATOMIC_ACQUIRE)) {
        if (arch_counter() > deadline)
            return -E_TIMEOUT;
        arch_cpu_relax();       /* (QEMU's icount mode runs the other cores at a yield) */
    }
    return 0;
}

void ktest_run_all(void)
{
    char filter[64] = "";
    cmdline_get("ktest", filter, sizeof(filter));
    size_t flen = strlen(filter);
    kprintf("# petrel self tests%s%s\n", flen ? ": " : "", filter);
    for (const struct ktest *t = __ktest_start; t < __ktest_end; t++) {
        if (flen && strncmp(t->name, filter, flen) != 0)
            continue;
        current_ok = true;
        current_reported = false;
        t->fn();
        if (!current_reported) {
            kprintf("%s %u - %s\n", current_ok ? "ok" : "not ok", ++number, t->name);
            failed += !current_ok;
        } else if (!current_ok) {
            kprintf("not ok %u - %s (checks outside a result)\n", ++number, t->name);
            failed++;
        }
    }
    kprintf("1..%u\n", number);
    kprintf("# %u of %u self tests failed\n", failed, number);
}
