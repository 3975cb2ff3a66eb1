/*
 * The architecture contract: everything generic kernel code may ask of
 * the CPU architecture. Each architecture provides these, inline ones in
 * <arch/arch_ops.h> and the rest in kernel/arch/<arch>/. Generic code
 * includes only this header, never a file from an arch folder.
 */
#ifndef PETREL_ARCH_H
#define PETREL_ARCH_H

#include "types.h"

struct cpu;
struct trapframe;

/* Interrupt masking on this core. */
static inline void arch_irq_enable(void);
static inline void arch_irq_disable(void);
static inline uint64_t arch_irq_save(void);        /* mask, return old state */
static inline void arch_irq_restore(uint64_t state);
static inline bool arch_irq_pending(void);         /* is an interrupt waiting (masked or not)? */

/* Per-core state: the running core's `struct cpu`. */
static inline struct cpu *arch_this_cpu(void);
static inline void arch_set_this_cpu(struct cpu *c);
static inline uint64_t arch_cpu_hwid(void);         /* MPIDR affinity bits */
const char *arch_cpu_name(void);                    /* "Cortex-A53" */
uint64_t arch_kstack_top(unsigned cpu);             /* initial SP of a core's kernel stack */
uint64_t arch_service_stack_top(unsigned i);        /* of kernel service stack i (< ARCH_SERVICE_STACKS) */

/* Kernel execution contexts (arch/aarch64/kctx.S): code running on its own
 * kernel stack that can stop and be resumed later, from another stack.
 * struct arch_kctx (in <arch/arch_ops.h>) holds what a switch keeps.
 * arch_kctx_init prepares c to run entry(arg) on the stack ending at
 * stack_top (entry never returns: it switches away); arch_kctx_switch
 * saves the running context in `save` and continues `load`. */
struct arch_kctx;
void arch_kctx_init(struct arch_kctx *c, uint64_t stack_top, void (*entry)(void *), void *arg);
void arch_kctx_switch(struct arch_kctx *save, const struct arch_kctx *load);

/* What the syndrome esr of an EL0 exception says, written into buf: for
 * the message of a fault that kills its thread. */
const char *arch_fault_detail(uint64_t esr, char *buf, size_t size);

/* ARCH_FPEN_TRAP_EL0: the value of cpu->fpen while EL0's FP/SIMD use traps. */

/* Zeroing whole pages (len a multiple of 256, va 64-byte aligned). */
static inline void arch_zero(void *va, uint64_t len);
void arch_zero_init(void);

/* Idle and barriers. */
static inline void arch_wait_for_interrupt(void);  /* until an interrupt is pending (masked or not) */
static inline void arch_mb(void);                   /* full barrier */
static inline void arch_cpu_relax(void);

/* The free-running system counter and the per-core tick timer. */
static inline uint64_t arch_counter(void);
static inline uint64_t arch_counter_relaxed(void);  /* unordered: for accounting */
static inline uint64_t arch_counter_freq(void);
static inline void arch_timer_set_deadline(uint64_t counter_value);
static inline void arch_timer_stop(void);
static inline void arch_space_activate(paddr_t l1_pa, uint16_t asid);   /* TTBR0 + ASID */
/* The same, taking effect at the next exception return (no user access before it). */
static inline void arch_space_activate_for_return(paddr_t l1_pa, uint16_t asid);

/* Memory management (arch/aarch64/mmu.c). */
void arch_mmu_init_kernel(paddr_t ram_lo, paddr_t ram_hi);
int arch_map_device(paddr_t pa, uint64_t size, void **va_out);
void arch_mmu_enable_wxn(void);
void arch_mmu_secondary_init(void);
void *arch_user_translate(vaddr_t va, bool write);  /* AT S1E0: what EL0 may access */

/* User entry and exceptions (arch/aarch64/). */
NORETURN void arch_enter_user(struct trapframe *tf);
void arch_trap_init(void);
void arch_dump_frame(const struct trapframe *tf);

/* Firmware (PSCI) calls (arch/aarch64/psci.c). */
int arch_firmware_init(const void *fdt_blob);
int arch_cpu_start(uint64_t hwid, unsigned index);
int arch_cpu_start_at(uint64_t hwid, paddr_t entry, uint64_t context);   /* K2: another kernel's entry */

/* K2's shared pages in the kernel map (arch/aarch64/mmu.c; core/k2_dsm.c). */
int arch_kmap_blocks(vaddr_t va, paddr_t pa, uint64_t size);
bool arch_kmap_is_block(vaddr_t va);
bool arch_kmap_split(vaddr_t va, paddr_t table);
int arch_kmap_page(vaddr_t va, paddr_t pa, bool valid);
unsigned arch_cache_flush_page(paddr_t pa, unsigned cpu_index);
int arch_cache_alias_init(void);
NORETURN void arch_system_off(void);
NORETURN void arch_system_fail(int status);

#include <arch/arch_ops.h>

#endif
