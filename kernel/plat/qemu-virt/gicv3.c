/*
 * GICv3 driver: distributor (GICD) with affinity routing, one
 * redistributor (GICR) frame pair per core found by matching
 * GICR_TYPER's affinity to the core's MPIDR, and the system-register
 * CPU interface (ICC_*_EL1). Everything is non-secure group 1.
 */
#include "irq.h"
#include "fdt.h"
#include "kernel.h"
#include "cpu.h"
#include "gicd.h"

#define GICD_CTLR       0x0000
#define GICD_TYPER      0x0004
#define GICD_IGROUPR    0x0080
#define GICD_IPRIORITYR 0x0400
#define GICD_IROUTER    0x6000
#define GICR_TYPER      0x0008
#define GICR_WAKER      0x0014
#define GICR_SGI        0x10000     /* SGI_base frame */
#define GICR_IGROUPR0   (GICR_SGI + 0x080)
#define GICR_ISENABLER0 (GICR_SGI + 0x100)
#define GICR_ICENABLER0 (GICR_SGI + 0x180)
#define GICR_IPRIORITYR (GICR_SGI + 0x400)
#define GICR_STRIDE     0x20000

#define ICC_SRE_EL1     S3_0_C12_C12_5
#define ICC_PMR_EL1     S3_0_C4_C6_0
#define ICC_BPR1_EL1    S3_0_C12_C12_3
#define ICC_IGRPEN1_EL1 S3_0_C12_C12_7
#define ICC_IAR1_EL1    S3_0_C12_C12_0
#define ICC_EOIR1_EL1   S3_0_C12_C12_1
#define ICC_SGI1R_EL1   S3_0_C12_C11_5

static volatile uint8_t *gicd, *gicr_base;
static uint64_t gicr_size;
static volatile uint8_t *gicr[CONFIG_MAX_CPUS];

static inline volatile uint32_t *d32(unsigned off) { return (volatile uint32_t *)(gicd + off); }
static inline volatile uint32_t *r32(volatile uint8_t *rd, unsigned off) { return (volatile uint32_t *)(rd + off); }

static int v3_init(const struct fdt *fdt, int node, struct irqchip *chip, bool owner)
{
    uint64_t dbase, dsize, rbase, rsize;
    if (!fdt_reg(fdt, node, 0, &dbase, &dsize) || !fdt_reg(fdt, node, 1, &rbase, &rsize))
        return -E_BADFORMAT;
    void *va;
    if (arch_map_device(dbase, 0x10000, &va))
        return -E_NOMEM;
    gicd = va;
    if (arch_map_device(rbase, rsize, &va))
        return -E_NOMEM;
    gicr_base = va;
    gicr_size = rsize;
    chip->dist_base = dbase;
    chip->cpu_base = rbase;

    unsigned lines = 32 * ((*d32(GICD_TYPER) & 0x1f) + 1);
    chip->lines = MIN(lines, IRQ_MAX);
    if (!owner)
        return 0;
    *d32(GICD_CTLR) = 0;
    while (*d32(GICD_CTLR) & (1u << 31))    /* RWP */
        ;
    for (unsigned i = 32; i < lines && i < IRQ_MAX; i += 32) {
        *d32(GICD_ICENABLER + i / 8) = 0xffffffff;
        *d32(GICD_IGROUPR + i / 8) = 0xffffffff;
    }
    for (unsigned i = 32; i < lines && i < IRQ_MAX; i += 4)
        *d32(GICD_IPRIORITYR + i) = 0xa0a0a0a0;
    *d32(GICD_CTLR) = (1 << 4) | (1 << 1);  /* ARE_NS, EnableGrp1NS */
    while (*d32(GICD_CTLR) & (1u << 31))
        ;
    return 0;
}

/* Affinity of an MPIDR in GICR_TYPER's layout (Aff3.Aff2.Aff1.Aff0). */
static uint32_t mpidr_to_aff(uint64_t mpidr)
{
    return (uint32_t)(((mpidr >> 32) & 0xff) << 24 | (mpidr & 0xffffff));
}

static void v3_cpu_init(unsigned cpu_index)
{
    uint32_t aff = mpidr_to_aff(arch_cpu_hwid());
    volatile uint8_t *rd = NULL;
    for (uint64_t off = 0; off + GICR_STRIDE <= gicr_size; off += GICR_STRIDE) {
        uint64_t typer = *(volatile uint64_t *)(gicr_base + off + GICR_TYPER);
        if ((uint32_t)(typer >> 32) == aff) {
            rd = gicr_base + off;
            break;
        }
        if (typer & (1 << 4))               /* Last */
            break;
    }
    if (!rd)
        panic("GICv3: no redistributor for cpu%u (affinity %x)", cpu_index, aff);
    gicr[cpu_index] = rd;

    *r32(rd, GICR_WAKER) &= ~(1u << 1);     /* ProcessorSleep */
    while (*r32(rd, GICR_WAKER) & (1u << 2)) /* ChildrenAsleep */
        ;
    *r32(rd, GICR_IGROUPR0) = 0xffffffff;
    *r32(rd, GICR_ICENABLER0) = 0xffff0000;
    *r32(rd, GICR_ISENABLER0) = 0x0000ffff;
    for (unsigned i = 0; i < 32; i += 4)
        *r32(rd, GICR_IPRIORITYR + i) = 0xa0a0a0a0;

    write_sysreg(ICC_SRE_EL1, read_sysreg(ICC_SRE_EL1) | 1);
    isb();
    write_sysreg(ICC_PMR_EL1, 0xf0);
    write_sysreg(ICC_BPR1_EL1, 0);
    write_sysreg(ICC_IGRPEN1_EL1, 1);
    isb();
}

static void v3_route(unsigned irq, uint64_t mpidr);

static void v3_enable(unsigned irq, unsigned cpu_index)
{
    if (irq < 32) {
        *r32(gicr[cpu_index], GICR_ISENABLER0) = 1u << irq;
        return;
    }
    v3_route(irq, cpus[cpu_index].hwid);
    *d32(GICD_ISENABLER + (irq / 32) * 4) = 1u << (irq % 32);
}

static void v3_disable(unsigned irq)
{
    if (irq < 32) {
        for (unsigned c = 0; c < CONFIG_MAX_CPUS; c++)
            if (gicr[c])
                *r32(gicr[c], GICR_ICENABLER0) = 1u << irq;
        return;
    }
    *d32(GICD_ICENABLER + (irq / 32) * 4) = 1u << (irq % 32);
}

static unsigned v3_ack(void)
{
    unsigned irq = (unsigned)read_sysreg(ICC_IAR1_EL1) & 0xffffff;
    dsb(sy);
    return irq;
}

static void v3_eoi(unsigned irq)
{
    write_sysreg(ICC_EOIR1_EL1, irq);
    isb();
}

static void v3_send_sgi_id(uint64_t mpidr, unsigned sgi)
{
    uint64_t aff0 = mpidr & 0xff;
    uint64_t v = ((mpidr >> 8) & 0xff) << 16 | ((mpidr >> 16) & 0xff) << 32 |
                 ((mpidr >> 32) & 0xff) << 48 | (uint64_t)(sgi & 15) << 24 | (1ull << (aff0 & 15));
    dsb(ishst);
    write_sysreg(ICC_SGI1R_EL1, v);
    isb();
}

static void v3_send_sgi(unsigned cpu_index, unsigned sgi)
{
    v3_send_sgi_id(cpus[cpu_index].hwid, sgi);
}

static uint64_t v3_sgi_id(void)
{
    return arch_cpu_hwid();
}

/* Enabled SPIs whose GICD_IROUTER names that core, or any core (IRM). */
static unsigned v3_spis_routed_to(uint64_t mpidr)
{
    unsigned n = 0;
    for (unsigned irq = 32; irq < gicv3_chip.lines; irq++) {
        if (!(*d32(GICD_ISENABLER + (irq / 32) * 4) >> (irq % 32) & 1))
            continue;
        uint64_t route = *(volatile uint64_t *)(gicd + GICD_IROUTER + 8 * irq);
        if ((route & (1ull << 31)) || (route & 0xff00ffffffull) == (mpidr & 0xff00ffffffull))
            n++;
    }
    return n;
}

/* An enabled line is disabled around the write (as Linux does), the
 * distributor's disable seen through (RWP) first; its pending state is
 * the distributor's and follows the new route. */
static void v3_route(unsigned irq, uint64_t mpidr)
{
    if (irq < 32 || irq >= gicv3_chip.lines)
        return;
    uint32_t bit = 1u << (irq % 32);
    bool on = *d32(GICD_ISENABLER + (irq / 32) * 4) & bit;
    if (on) {
        *d32(GICD_ICENABLER + (irq / 32) * 4) = bit;
        while (*d32(GICD_CTLR) & (1u << 31))
            ;
    }
    *(volatile uint64_t *)(gicd + GICD_IROUTER + 8 * irq) = mpidr & 0xff00ffffffull;
    if (on)
        *d32(GICD_ISENABLER + (irq / 32) * 4) = bit;
}

/* The one core a shared line targets (its affinity); ~0 for any core
 * (Interrupt_Routing_Mode). */
static uint64_t v3_target(unsigned irq)
{
    if (irq < 32 || irq >= gicv3_chip.lines)
        return ~0ull;
    uint64_t route = *(volatile uint64_t *)(gicd + GICD_IROUTER + 8 * irq);
    return route & (1ull << 31) ? ~0ull : route & 0xff00ffffffull;
}

static bool v3_enabled(unsigned irq) { return gicd_enabled(gicd, irq); }
static void v3_pend(unsigned irq) { gicd_pend(gicd, irq); }
static bool v3_edge(unsigned irq) { return gicd_edge(gicd, irq); }
static void v3_set_edge(unsigned irq, bool edge) { gicd_set_edge(gicd, irq, edge); }

static unsigned v3_spis_enabled(void)
{
    unsigned n = 0;
    for (unsigned irq = 32; irq < gicv3_chip.lines; irq++)
        n += *d32(GICD_ISENABLER + (irq / 32) * 4) >> (irq % 32) & 1;
    return n;
}

struct irqchip gicv3_chip = {
    .name = "GICv3", .version = 3,
    .init = v3_init, .cpu_init = v3_cpu_init, .enable = v3_enable,
    .disable = v3_disable, .ack = v3_ack, .eoi = v3_eoi, .send_sgi = v3_send_sgi,
    .sgi_id = v3_sgi_id, .send_sgi_id = v3_send_sgi_id, .spis_routed_to = v3_spis_routed_to,
    .spis_enabled = v3_spis_enabled, .route = v3_route, .target = v3_target, .enabled = v3_enabled,
    .pend = v3_pend, .edge = v3_edge, .set_edge = v3_set_edge,
};
