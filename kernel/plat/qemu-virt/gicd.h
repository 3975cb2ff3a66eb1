/*
 * Distributor registers GICv2 and GICv3 lay out alike (gicv2.c, gicv3.c):
 * per-line enable, pending and trigger bits.
 */
#ifndef PETREL_GICD_H
#define PETREL_GICD_H

#include "types.h"

#define GICD_ISENABLER  0x100
#define GICD_ICENABLER  0x180
#define GICD_ISPENDR    0x200
#define GICD_ICPENDR    0x280
#define GICD_ICFGR      0xc00

static inline volatile uint32_t *gicd_word(volatile uint8_t *gicd, unsigned off, unsigned irq, unsigned per_word)
{
    return (volatile uint32_t *)(gicd + off + (irq / per_word) * 4);
}

static inline bool gicd_enabled(volatile uint8_t *gicd, unsigned irq)
{
    return *gicd_word(gicd, GICD_ISENABLER, irq, 32) >> (irq % 32) & 1;
}

static inline void gicd_pend(volatile uint8_t *gicd, unsigned irq)
{
    *gicd_word(gicd, GICD_ISPENDR, irq, 32) = 1u << (irq % 32);
}

/* GICD_ICFGR: two bits a line, the upper one set for edge-triggered. */
static inline bool gicd_edge(volatile uint8_t *gicd, unsigned irq)
{
    return *gicd_word(gicd, GICD_ICFGR, irq, 16) >> (2 * (irq % 16) + 1) & 1;
}

static inline void gicd_set_edge(volatile uint8_t *gicd, unsigned irq, bool edge)
{
    volatile uint32_t *r = gicd_word(gicd, GICD_ICFGR, irq, 16);
    uint32_t bit = 2u << (2 * (irq % 16));
    *r = edge ? *r | bit : *r & ~bit;
}

#endif
