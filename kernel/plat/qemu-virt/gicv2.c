/*
 * GICv2 driver: distributor (GICD) and memory-mapped CPU interface
 * (GICC). All interrupts are group 0 with one priority; SPIs are routed
 * to the boot core unless enabled for another.
 */
#include "irq.h"
#include "fdt.h"
#include "kernel.h"
#include "cpu.h"
#include "gicd.h"

#define GICD_CTLR       0x000
#define GICD_TYPER      0x004
#define GICD_IPRIORITYR 0x400
#define GICD_ITARGETSR  0x800
#define GICD_SGIR       0xf00
#define GICC_CTLR       0x000
#define GICC_PMR        0x004
#define GICC_BPR        0x008
#define GICC_IAR        0x00c
#define GICC_EOIR       0x010

static volatile uint8_t *gicd, *gicc;
static uint8_t cpu_target[CONFIG_MAX_CPUS];   /* GIC CPU interface bit per core */

static inline volatile uint32_t *d32(unsigned off) { return (volatile uint32_t *)(gicd + off); }
static inline volatile uint32_t *c32(unsigned off) { return (volatile uint32_t *)(gicc + off); }

static int v2_init(const struct fdt *fdt, int node, struct irqchip *chip, bool owner)
{
    uint64_t dbase, dsize, cbase, csize;
    if (!fdt_reg(fdt, node, 0, &dbase, &dsize) || !fdt_reg(fdt, node, 1, &cbase, &csize))
        return -E_BADFORMAT;
    void *va;
    if (arch_map_device(dbase, 0x1000, &va))
        return -E_NOMEM;
    gicd = va;
    if (arch_map_device(cbase, 0x2000, &va))
        return -E_NOMEM;
    gicc = va;
    chip->dist_base = dbase;
    chip->cpu_base = cbase;

    unsigned lines = 32 * ((*d32(GICD_TYPER) & 0x1f) + 1);
    chip->lines = MIN(lines, IRQ_MAX);
    if (!owner)
        return 0;
    *d32(GICD_CTLR) = 0;
    for (unsigned i = 32; i < lines && i < IRQ_MAX; i += 32)
        *d32(GICD_ICENABLER + i / 8) = 0xffffffff;
    for (unsigned i = 32; i < lines && i < IRQ_MAX; i += 4) {
        *d32(GICD_IPRIORITYR + i) = 0xa0a0a0a0;
        *d32(GICD_ITARGETSR + i) = 0x01010101;
    }
    *d32(GICD_CTLR) = 1;
    return 0;
}

static void v2_cpu_init(unsigned cpu_index)
{
    /* GICD_ITARGETSR0 reads back this interface's own bit. */
    cpu_target[cpu_index] = (uint8_t)(*d32(GICD_ITARGETSR) & 0xff);
    *d32(GICD_ICENABLER) = 0xffff0000;      /* PPIs off until asked for */
    *d32(GICD_ISENABLER) = 0x0000ffff;      /* SGIs on */
    for (unsigned i = 0; i < 32; i += 4)
        *d32(GICD_IPRIORITYR + i) = 0xa0a0a0a0;
    *c32(GICC_PMR) = 0xf0;
    *c32(GICC_BPR) = 0;
    *c32(GICC_CTLR) = 1;
}

static void v2_route(unsigned irq, uint64_t target);

static void v2_enable(unsigned irq, unsigned cpu_index)
{
    if (irq >= 32)
        v2_route(irq, cpu_target[cpu_index] ? cpu_target[cpu_index] : 1);
    *d32(GICD_ISENABLER + (irq / 32) * 4) = 1u << (irq % 32);
}

static void v2_disable(unsigned irq)
{
    *d32(GICD_ICENABLER + (irq / 32) * 4) = 1u << (irq % 32);
}

/* The acknowledged value of an SGI carries the sending core's number in
 * bits 12:10, and its end must be written with the same value (GICv2
 * 4.4.5): each core keeps the last one it took. Interrupts are handled
 * one at a time on a core (irq_handle: ack, handler, eoi of that one,
 * with interrupts masked), so the last one taken is the one ending. */
static uint32_t last_iar[CONFIG_MAX_CPUS];

static unsigned v2_ack(void)
{
    uint32_t iar = *c32(GICC_IAR);
    last_iar[this_cpu()->index] = iar;
    return iar & 0x3ff;
}

static void v2_eoi(unsigned irq UNUSED)
{
    *c32(GICC_EOIR) = last_iar[this_cpu()->index];
}

static void v2_send_sgi(unsigned cpu_index, unsigned sgi)
{
    dsb(ishst);
    *d32(GICD_SGIR) = ((uint32_t)cpu_target[cpu_index] << 16) | (sgi & 15);
}

/* This core's CPU interface bit, as GICD_ITARGETSR0 reads back. */
static uint64_t v2_sgi_id(void)
{
    return *d32(GICD_ITARGETSR) & 0xff;
}

static void v2_send_sgi_id(uint64_t id, unsigned sgi)
{
    dsb(ishst);
    *d32(GICD_SGIR) = (uint32_t)(id & 0xff) << 16 | (sgi & 15);
}

static unsigned v2_spis_routed_to(uint64_t id)
{
    unsigned n = 0;
    for (unsigned irq = 32; irq < gicv2_chip.lines; irq++)
        if ((*d32(GICD_ISENABLER + (irq / 32) * 4) >> (irq % 32) & 1) && (gicd[GICD_ITARGETSR + irq] & id))
            n++;
    return n;
}

/* Point a shared line at the cores of `target`. An edge-triggered
 * interrupt already pending stays pending for the cores it targeted when
 * it came (QEMU 7.2's GICv2 does so): after the write it is cleared and
 * set again, now for the new target (a level one follows its target by
 * itself). The pending bit is read after the write, so an edge that came
 * meanwhile moves too. */
static void v2_route(unsigned irq, uint64_t target)
{
    if (irq < 32 || irq >= gicv2_chip.lines)
        return;
    gicd[GICD_ITARGETSR + irq] = (uint8_t)target;
    volatile uint32_t *pend = gicd_word(gicd, GICD_ISPENDR, irq, 32);
    uint32_t bit = 1u << (irq % 32);
    if (gicd_edge(gicd, irq) && (*pend & bit)) {
        *gicd_word(gicd, GICD_ICPENDR, irq, 32) = bit;
        *pend = bit;
    }
}

/* The one core a shared line targets; ~0 for none or several. */
static uint64_t v2_target(unsigned irq)
{
    uint8_t t = irq >= 32 && irq < gicv2_chip.lines ? gicd[GICD_ITARGETSR + irq] : 0;
    return __builtin_popcount(t) == 1 ? t : ~0ull;
}

static bool v2_enabled(unsigned irq) { return gicd_enabled(gicd, irq); }
static void v2_pend(unsigned irq) { gicd_pend(gicd, irq); }
static bool v2_edge(unsigned irq) { return gicd_edge(gicd, irq); }
static void v2_set_edge(unsigned irq, bool edge) { gicd_set_edge(gicd, irq, edge); }

static unsigned v2_spis_enabled(void)
{
    unsigned n = 0;
    for (unsigned irq = 32; irq < gicv2_chip.lines; irq++)
        n += *d32(GICD_ISENABLER + (irq / 32) * 4) >> (irq % 32) & 1;
    return n;
}

struct irqchip gicv2_chip = {
    .name = "GICv2", .version = 2,
    .init = v2_init, .cpu_init = v2_cpu_init, .enable = v2_enable,
    .disable = v2_disable, .ack = v2_ack, .eoi = v2_eoi, .send_sgi = v2_send_sgi,
    .sgi_id = v2_sgi_id, .send_sgi_id = v2_send_sgi_id, .spis_routed_to = v2_spis_routed_to,
    .spis_enabled = v2_spis_enabled, .route = v2_route, .target = v2_target, .enabled = v2_enabled,
    .pend = v2_pend, .edge = v2_edge, .set_edge = v2_set_edge,
};
