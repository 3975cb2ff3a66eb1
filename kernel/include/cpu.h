/* Per-core state and SMP bring-up. */
#ifndef PETREL_CPU_H
#define PETREL_CPU_H

#include "kernel.h"
#include "arch.h"
#include "sched.h"

struct thread;
struct fdt;

struct ksvc_run;

struct cpu {
    uint64_t kstack_top;        /* first: the exception entry loads it */
    unsigned index;             /* logical number, 0 = boot core */
    uint64_t hwid;              /* MPIDR affinity from the device tree */
    volatile uint32_t online;   /* set by the core itself once running */
    volatile uint64_t ticks;    /* timer interrupts taken */
    uint64_t next_tick;         /* counter value of the next tick */
    volatile uint64_t ipis;     /* inter-processor interrupts taken */
    struct thread *current;     /* the thread running here, or NULL */
    struct runqueue rq;
    struct list timeouts;       /* threads with a deadline, on this core */
    uint64_t next_timeout;      /* earliest of their deadlines (~0: none) */
    struct thread *fp_owner;    /* whose FP/SIMD state the registers hold */
    uint64_t fpen;              /* CPACR_EL1 as last written (0: unknown) */
    bool idle;
    struct ksvc_run *ksvc;      /* the kernel service request running here, if any */
    bool ksvc_unlocked;         /* its service code runs: no kernel lock, interrupts on */
    /* the service whose shared register entry runs here (ksvc_shared_fault),
     * or NULL; written only by this core, read by a core that wants the
     * service to itself (ksvc_excl_begin) */
    const struct ksvc_run *volatile shared_in;
    void (*volatile work)(void *); /* run by the IPI handler (self tests) */
    void *work_arg;
    volatile uint32_t work_done;
};

extern struct cpu cpus[CONFIG_MAX_CPUS];
extern unsigned ncpus_present;  /* cores named in the device tree (capped) */

static inline struct cpu *this_cpu(void) { return arch_this_cpu(); }

/* Discover cores from /cpus (smp.c). */
int smp_discover(const struct fdt *fdt);
/* Start every secondary core and wait for it; returns cores online. */
unsigned smp_boot_secondaries(void);
unsigned smp_online_count(void);
uint64_t smp_online_mask(void);     /* bit i: core i online */
void smp_init_boot_cpu(void);

/* Entry of a secondary core once its MMU is on (smp.c). */
NORETURN void secondary_main(unsigned index);

#endif
