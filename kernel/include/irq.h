/*
 * Interrupt controller interface. The platform's GIC driver (v2 or v3,
 * chosen from the device tree) fills in a struct irqchip; generic code
 * only calls the irq_* functions below.
 */
#ifndef PETREL_IRQ_H
#define PETREL_IRQ_H

#include "types.h"

struct fdt;

#define IRQ_MAX         1020
#define IRQ_SPURIOUS    1023
#define IRQ_SGI_WAKE    0       /* inter-processor interrupt: wake up / reschedule */
#define IRQ_SGI_TEST    1       /* inter-processor interrupt used by self tests */
#define IRQ_SGI_K2      2       /* K2's mailbox doorbell between the two kernels (k2.c) */

struct irqchip {
    const char *name;
    unsigned version;                       /* 2 or 3 */
    unsigned lines;                         /* interrupt IDs below this exist */
    paddr_t dist_base, cpu_base;            /* GICD, GICC (v2) or GICR (v3) */
    /* owner: reset and program the distributor (the only kernel that does:
     * K2's shadow kernel attaches to it without touching its global state) */
    int (*init)(const struct fdt *fdt, int node, struct irqchip *chip, bool owner);
    void (*cpu_init)(unsigned cpu_index);
    void (*enable)(unsigned irq, unsigned cpu_index);
    void (*disable)(unsigned irq);
    unsigned (*ack)(void);
    void (*eoi)(unsigned irq);
    void (*send_sgi)(unsigned cpu_index, unsigned sgi);
    /* K2: a core of the other kernel, named by the id its own kernel read
     * with sgi_id (GICv2: its CPU interface's bit, GICv3: its affinity) */
    uint64_t (*sgi_id)(void);
    void (*send_sgi_id)(uint64_t id, unsigned sgi);
    unsigned (*spis_routed_to)(uint64_t id);    /* enabled SPIs that target that core */
    unsigned (*spis_enabled)(void);
    /* K2's interrupt routing (k2_irq.c): one shared line's target as
     * sgi_id names a core, set (a pending interrupt goes with it) and read
     * back (~0: none or several); whether it is enabled; make it pending
     * (a replay, or a self test's device); edge-triggered or level */
    void (*route)(unsigned irq, uint64_t id);
    uint64_t (*target)(unsigned irq);
    bool (*enabled)(unsigned irq);
    void (*pend)(unsigned irq);
    bool (*edge)(unsigned irq);
    void (*set_edge)(unsigned irq, bool edge);
};

typedef void (*irq_handler_t)(unsigned irq, void *arg);

int irq_init(const struct fdt *fdt, bool owner);
const struct irqchip *irq_chip(void);
void irq_cpu_init(void);
int irq_register(unsigned irq, irq_handler_t handler, void *arg);
int irq_register_lockless(unsigned irq, irq_handler_t handler, void *arg);
void irq_unregister(unsigned irq);
bool irq_taken(unsigned irq);
void irq_disable(unsigned irq);
void irq_enable_on(unsigned irq, unsigned cpu);
void irq_enable(unsigned irq);
void irq_handle(void);                  /* called by the exception path */
void irq_send_ipi(unsigned cpu_index, unsigned sgi);

/* The GIC drivers (plat/qemu-virt). */
extern struct irqchip gicv2_chip, gicv3_chip;

#endif
