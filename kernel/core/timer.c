/*
 * The tick. Each core programs its architectural timer with an absolute
 * deadline and advances it by whole periods, so ticks never drift; a
 * thread's timeout due before the next tick brings the interrupt
 * forward. The rate is CONFIG_HZ unless the boot argument hz=N
 * (1..10000) says otherwise.
 */
#include "timer.h"
#include "k2.h"
#include "irq.h"
#include "fdt.h"
#include "kernel.h"
#include "cpu.h"
#include "sched.h"
#include "ksvc.h"

static unsigned hz;
static unsigned irq_line;
static uint64_t period;

/*
 * The tick. Periods that passed while the core could not take the
 * interrupt (a long stall) are all counted at once, and the next
 * deadline is the next period boundary, so the count never drifts and
 * a late core never catches up with a storm of back-to-back interrupts.
 * The scheduler's part takes the kernel lock only when this core has a
 * thread or a timeout to look after.
 */
static void tick(unsigned irq, void *arg)
{
    struct cpu *c = this_cpu();
    uint64_t now = arch_counter();
    uint64_t n = 0;
    if (now >= c->next_tick) {
        n = 1 + (now - c->next_tick) / period;
        c->ticks += n;
        c->next_tick += n * period;
    }
    if ((n && c->current) || !list_empty(&c->timeouts)) {
        kernel_lock();
        sched_tick(n);
        kernel_unlock();
    } else {
        c->next_timeout = ~0ull;        /* its threads were woken first */
    }
    ksvc_timer_tick(c->index);
    k2_tick();
    timer_rearm();
}

/* The interrupt comes at the next tick, the core's earliest timeout, the
 * earliest timer of a kernel-placed service on it, or when a K2 request
 * this kernel owes may be answered. With K2 an idle main core has no
 * tick (k2_tickless) and looks at its domain when it is due to sleep
 * (k2_idle_timer). */
void timer_rearm(void)
{
    struct cpu *c = this_cpu();
    uint64_t tick = c->idle && k2_tickless() ? ~0ull : c->next_tick;
    uint64_t next = MIN(MIN(tick, c->next_timeout), ksvc_timer_next(c->index));
    arch_timer_set_deadline(MIN(MIN(next, k2_timer_next()), k2_idle_timer()));
}

/* Whether a deadline `at` for core `cpu` comes before its next timer
 * interrupt would anyway (its tick; an idle core's under K2 never). */
bool timer_covers(unsigned cpu, uint64_t at)
{
    return at >= READ_ONCE(cpus[cpu].next_tick) && !(READ_ONCE(cpus[cpu].idle) && k2_tickless());
}

/* A core back from a tickless idle (K2): the periods it slept through
 * are counted without charging them to the thread it now runs, and the
 * tick comes again at the next period boundary. */
void timer_idle_end(void)
{
    struct cpu *c = this_cpu();
    uint64_t now = arch_counter();
    if (now >= c->next_tick) {
        uint64_t n = 1 + (now - c->next_tick) / period;
        c->ticks += n;
        c->next_tick += n * period;
    }
    timer_rearm();
}

/* Read the virtual timer's interrupt from the device tree. */
int timer_init(const struct fdt *fdt)
{
    int node = fdt_find_compatible(fdt, -1, "arm,armv8-timer");
    if (node < 0)
        node = fdt_find_compatible(fdt, -1, "arm,armv7-timer");
    uint32_t len;
    const uint8_t *irqs = node >= 0 ? fdt_prop(fdt, node, "interrupts", &len) : NULL;
    if (!irqs || len < 36)
        return -E_NOENT;
    irq_line = be32(irqs + 24 + 4) + 16;    /* third entry: the virtual timer PPI */
    uint64_t want = cmdline_get_u64("hz", CONFIG_HZ);
    hz = (want >= 1 && want <= 10000) ? (unsigned)want : CONFIG_HZ;
    period = arch_counter_freq() / hz;
    return irq_register_lockless(irq_line, tick, NULL);
}

/* Start this core's tick. */
void timer_cpu_init(void)
{
    struct cpu *c = this_cpu();
    c->next_tick = arch_counter() + period;
    arch_timer_set_deadline(c->next_tick);
    irq_enable(irq_line);
}

unsigned timer_hz(void) { return hz; }
unsigned timer_irq(void) { return irq_line; }

uint64_t timer_ns(void)
{
    uint64_t f = arch_counter_freq(), t = arch_counter();
    return (t / f) * 1000000000ull + (t % f) * 1000000000ull / f;
}

uint64_t timer_ns_to_ticks(uint64_t ns)
{
    uint64_t f = arch_counter_freq();
    return (ns / 1000000000ull) * f + (ns % 1000000000ull) * f / 1000000000ull;
}

void timer_delay_us(uint64_t us)
{
    uint64_t end = arch_counter() + us * arch_counter_freq() / 1000000;
    while (arch_counter() < end)
        arch_cpu_relax();
}
