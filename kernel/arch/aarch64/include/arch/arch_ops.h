/* AArch64 implementation of the inline part of the arch contract (arch.h). */
#ifndef PETREL_ARCH_OPS_H
#define PETREL_ARCH_OPS_H

#define read_sysreg(r) ({ uint64_t __v; \
        __asm__ volatile("mrs %0, " #r : "=r"(__v)); __v; })
#define write_sysreg(r, v) do { uint64_t __wv = (uint64_t)(v); \
        __asm__ volatile("msr " #r ", %0" :: "r"(__wv)); } while (0)
#define isb()       __asm__ volatile("isb" ::: "memory")
#define dsb(opt)    __asm__ volatile("dsb " #opt ::: "memory")
#define dmb(opt)    __asm__ volatile("dmb " #opt ::: "memory")

/* cpu->fpen (CPACR_EL1) while EL0's FP/SIMD use traps (lazy switching). */
#define ARCH_FPEN_TRAP_EL0  (1u << 20)

static inline void arch_irq_enable(void)  { __asm__ volatile("msr daifclr, #2" ::: "memory"); }
static inline void arch_irq_disable(void) { __asm__ volatile("msr daifset, #2" ::: "memory"); }

/* ISR_EL1.I: an IRQ is pending at this core (whether masked or not). */
static inline bool arch_irq_pending(void)
{
    return (read_sysreg(isr_el1) >> 7) & 1;
}

/* A stopped kernel context: the callee-saved registers x19-x28, the frame
 * pointer, the link register (where it resumes) and the stack pointer. */
struct arch_kctx {
    uint64_t x19_x28[10];
    uint64_t fp, lr, sp;
};

#include <arch/kstack.h>
#define ARCH_SERVICE_STACKS KSVC_STACKS

static inline uint64_t arch_irq_save(void)
{
    uint64_t daif = read_sysreg(daif);
    arch_irq_disable();
    return daif;
}

static inline void arch_irq_restore(uint64_t state)
{
    __asm__ volatile("msr daif, %0" :: "r"(state) : "memory");
}

static inline struct cpu *arch_this_cpu(void)
{
    return (struct cpu *)read_sysreg(tpidr_el1);
}

static inline void arch_set_this_cpu(struct cpu *c) { write_sysreg(tpidr_el1, c); }
static inline uint64_t arch_cpu_hwid(void) { return read_sysreg(mpidr_el1) & 0xff00ffffffull; }
static inline void arch_wait_for_interrupt(void) { __asm__ volatile("dsb sy; wfi" ::: "memory"); }
static inline void arch_mb(void) { dsb(sy); }
static inline void arch_cpu_relax(void) { __asm__ volatile("yield" ::: "memory"); }

static inline uint64_t arch_counter(void)
{
    isb();
    return read_sysreg(cntvct_el0);
}

/* The counter without ordering it after earlier instructions: for CPU
 * time accounting, where a few instructions' skew do not matter. */
static inline uint64_t arch_counter_relaxed(void)
{
    return read_sysreg(cntvct_el0);
}

static inline uint64_t arch_counter_freq(void) { return read_sysreg(cntfrq_el0); }

static inline void arch_timer_set_deadline(uint64_t counter_value)
{
    write_sysreg(cntv_cval_el0, counter_value);
    write_sysreg(cntv_ctl_el0, 1);      /* ENABLE, interrupt not masked */
    isb();
}

static inline void arch_timer_stop(void) { write_sysreg(cntv_ctl_el0, 2); /* IMASK */ }

/*
 * Zero `len` bytes at va, both multiples of 256 and va 64-byte aligned
 * (whole pages, or kmalloc's blocks of 256 bytes and up): `dc zva`
 * clears a 64-byte block per instruction, eight to a loop round (one
 * add each) when len is a multiple of 512. QEMU's virt cores
 * (Cortex-A53/A72) have 64-byte blocks and allow it at EL1;
 * arch_zero_init checks that at boot and falls back to stores if not.
 */
extern unsigned arch_zva_bytes;     /* 0: dc zva unusable */
static inline void arch_zero(void *va, uint64_t len)
{
    uint8_t *p = va, *end = p + len;
    if (arch_zva_bytes == 64 && len % 512 == 0 && len) {
        __asm__ volatile("1:  dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    dc zva, %0\n    add %0, %0, #64\n"
                         "    cmp %0, %1\n    b.lo 1b"
                         : "+r"(p) : "r"(end) : "memory", "cc");
        return;
    }
    if (arch_zva_bytes == 64) {
        for (; p < end; p += 256) {
            __asm__ volatile("dc zva, %0" :: "r"(p) : "memory");
            __asm__ volatile("dc zva, %0" :: "r"(p + 64) : "memory");
            __asm__ volatile("dc zva, %0" :: "r"(p + 128) : "memory");
            __asm__ volatile("dc zva, %0" :: "r"(p + 192) : "memory");
        }
        return;
    }
    for (uint64_t *q = va; (uint8_t *)q < end; q += 2) {
        q[0] = 0;
        q[1] = 0;
    }
}

/* Run this core in the user address space with table l1_pa, tagged asid. */
static inline void arch_space_activate(paddr_t l1_pa, uint16_t asid)
{
    write_sysreg(ttbr0_el1, l1_pa | ((uint64_t)asid << 48));
    isb();
}

/* The same on the way out to user space: the exception return
 * synchronises, so no barrier, as long as the kernel does not touch user
 * memory between this and the return. */
static inline void arch_space_activate_for_return(paddr_t l1_pa, uint16_t asid)
{
    write_sysreg(ttbr0_el1, l1_pa | ((uint64_t)asid << 48));
}

#endif
