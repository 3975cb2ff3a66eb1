/*
 * Interrupt dispatch. The kernel owns only the timer and the
 * inter-processor interrupts; every other line will be handed to a
 * user-level driver through an interrupt object.
 */
#include "irq.h"
#include "trace.h"
#include "fdt.h"
#include "kernel.h"
#include "cpu.h"
#include "sched.h"
#include "k2.h"

struct handler {
    irq_handler_t fn;
    void *arg;
    bool lockless;          /* runs without the kernel lock (self-test IPIs) */
};

static struct irqchip *chip;
static struct handler handlers[IRQ_MAX];

/* Pick the GIC driver that matches the device tree and start it (owner:
 * program the distributor too; K2's shadow kernel does not). */
int irq_init(const struct fdt *fdt, bool owner)
{
    static const struct { const char *compat; struct irqchip *chip; } table[] = {
        { "arm,gic-v3", &gicv3_chip },
        { "arm,cortex-a15-gic", &gicv2_chip },
        { "arm,gic-400", &gicv2_chip },
    };
    for (unsigned i = 0; i < ARRAY_SIZE(table); i++) {
        int node = fdt_find_compatible(fdt, -1, table[i].compat);
        if (node < 0)
            continue;
        int err = table[i].chip->init(fdt, node, table[i].chip, owner);
        if (err)
            return err;
        chip = table[i].chip;
        return 0;
    }
    return -E_NOENT;
}

const struct irqchip *irq_chip(void) { return chip; }

/* Bring up this core's CPU interface. */
void irq_cpu_init(void)
{
    chip->cpu_init(this_cpu()->index);
}

/* Install the handler for an interrupt line (run under the kernel lock). */
int irq_register(unsigned irq, irq_handler_t fn, void *arg)
{
    if (irq >= IRQ_MAX || !fn)
        return -E_INVAL;
    if (handlers[irq].fn)
        return -E_BUSY;
    handlers[irq].arg = arg;
    WRITE_ONCE(handlers[irq].fn, fn);
    return 0;
}

/* A handler that must run even while another core holds the kernel lock. */
int irq_register_lockless(unsigned irq, irq_handler_t fn, void *arg)
{
    int err = irq_register(irq, fn, arg);
    if (!err)
        handlers[irq].lockless = true;
    return err;
}

void irq_unregister(unsigned irq)
{
    if (irq < IRQ_MAX) {
        handlers[irq].fn = NULL;
        handlers[irq].lockless = false;
    }
}

bool irq_taken(unsigned irq)
{
    return irq >= IRQ_MAX || handlers[irq].fn != NULL;
}

void irq_disable(unsigned irq)
{
    if (!k2_irq_disable(irq))
        chip->disable(irq);
}

void irq_enable_on(unsigned irq, unsigned cpu)
{
    chip->enable(irq, cpu);
    k2_irq_enabled(irq, cpu);
}

/* Enable a line: private lines on this core, shared lines routed here. */
void irq_enable(unsigned irq)
{
    irq_enable_on(irq, this_cpu()->index);
}

/* Take every pending interrupt (interrupts masked, kernel lock not held). */
void irq_handle(void)
{
    for (;;) {
        unsigned irq = chip->ack();
        if (irq >= IRQ_MAX)
            return;                 /* spurious: nothing (more) pending */
        trace_irq(irq);
        struct handler *h = &handlers[irq];
        if (h->lockless && h->fn) {
            h->fn(irq, h->arg);
        } else {
            /* Look at the handler under the lock: another core may be
             * removing it (its interrupt object closing) right now. */
            kernel_lock();
            irq_handler_t fn = h->fn;
            if (fn) {
                fn(irq, h->arg);
            } else if (!k2_irq_pass(irq)) {
                /* Nobody wants it (a per-core line left enabled on this
                 * core, say): switch it off here, or it fires forever.
                 * (K2's shadow holds a shared line for main instead.) */
                kprintf("irq: unexpected interrupt %u on cpu%u, disabled\n", irq, this_cpu()->index);
                chip->disable(irq);
            }
            kernel_unlock();
        }
        chip->eoi(irq);
    }
}

void irq_send_ipi(unsigned cpu_index, unsigned sgi)
{
    chip->send_sgi(cpu_index, sgi);
}
