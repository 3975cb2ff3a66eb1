/* The per-core periodic tick, driven by the architectural timer. */
#ifndef PETREL_TIMER_H
#define PETREL_TIMER_H

#include "types.h"

struct fdt;

int timer_init(const struct fdt *fdt);   /* find the timer's interrupt, pick the rate */
void timer_cpu_init(void);               /* start ticking on this core */
unsigned timer_hz(void);
void timer_rearm(void);                  /* next interrupt: tick or earliest timeout */
void timer_idle_end(void);
bool timer_covers(unsigned cpu, uint64_t at);    /* that core's timer interrupt comes by `at` anyway */               /* a core back from a tickless idle (K2) */
unsigned timer_irq(void);
uint64_t timer_ns(void);                 /* nanoseconds since the counter started */
void timer_delay_us(uint64_t us);        /* busy wait */

/* Counter ticks in ns nanoseconds (no overflow for any 64-bit ns). */
uint64_t timer_ns_to_ticks(uint64_t ns);

#endif
