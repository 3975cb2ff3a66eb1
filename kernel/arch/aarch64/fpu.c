/*
 * Lazy FP/SIMD context. EL0 runs with FP/SIMD trapped (CPACR_EL1.FPEN =
 * 01) until a thread first uses it in a time slice; the trap loads its
 * state (or zeros) and lets it run untrapped. A thread that used FP is
 * saved when it is switched out, so its state in memory is always
 * current and it may move to another core; a core whose registers still
 * hold the incoming thread's state skips the trap and the reload.
 * Threads that never touch FP (all native Petrel programs) cost nothing.
 * A core that goes idle saves the last thread's state too (arch_fp_idle),
 * so the state in memory of every thread that is not running is current:
 * thread_copy reads it, and another core may pick the thread up.
 */
#include "thread.h"
#include "cpu.h"
#include "kmalloc.h"

struct fpstate {
    uint64_t q[64];             /* q0..q31 */
    uint64_t fpcr, fpsr;
};
_Static_assert(sizeof(struct fpstate) == FP_STATE_BYTES, "FP save area size (charged per thread)");

void fp_save(struct fpstate *s);
void fp_load(const struct fpstate *s);

#define FPEN_TRAP_EL0   ARCH_FPEN_TRAP_EL0
#define FPEN_NONE       (3u << 20)

/* Set CPACR_EL1 now, for the kernel's own use of the registers. */
static void set_fpen(uint64_t v)
{
    write_sysreg(cpacr_el1, v);
    isb();
    this_cpu()->fpen = v;
}

/* Switching prev -> next on this core when either may use FP/SIMD (the
 * inline arch_fp_switch has ruled out the case where neither does). The
 * trap setting for EL0 takes effect at the exception return, which
 * synchronises: no barrier here, and no write when it does not change. */
void arch_fp_switch_slow(struct thread *prev, struct thread *next)
{
    struct cpu *c = this_cpu();
    if (prev && prev == c->fp_owner && prev->fp_used && prev->fp) {
        set_fpen(FPEN_NONE);
        fp_save(prev->fp);
        prev->fp_used = false;
    }
    bool live = c->fp_owner == next && next->fp_cpu == c->index && next->fp;
    uint64_t want = live ? FPEN_NONE : FPEN_TRAP_EL0;
    if (c->fpen != want) {
        write_sysreg(cpacr_el1, want);
        c->fpen = want;
    }
    next->fp_used = live;
}

/* First FP/SIMD instruction of t in this slice: load its state. */
void arch_fp_trap(struct thread *t)
{
    struct cpu *c = this_cpu();
    if (!t->fp && !(t->fp = kmalloc(sizeof(struct fpstate)))) {
        struct fault_info fi = { FAULT_OTHER, 0, 0, "no memory for FP/SIMD state" };
        thread_fault(t, &fi);
        return;
    }
    set_fpen(FPEN_NONE);
    fp_load(t->fp);
    c->fp_owner = t;
    t->fp_cpu = c->index;
    t->fp_used = true;
}

/* t dies or moves: no core may think its registers hold t's state. */
void arch_fp_release(struct thread *t)
{
    struct cpu *c = this_cpu();
    if (c->fp_owner == t && t->fp_used && t->fp && t->state != T_DEAD) {
        set_fpen(FPEN_NONE);
        fp_save(t->fp);
        set_fpen(FPEN_TRAP_EL0);
    }
    t->fp_used = false;
    for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++)
        if (cpus[i].fp_owner == t)
            cpus[i].fp_owner = NULL;
}

/* dst (created, never run: no core holds its registers) takes src's saved
 * state; src is not running, so its state in memory is current. A source
 * that never used FP leaves dst to start with zeros. */
int arch_fp_copy(struct thread *dst, const struct thread *src)
{
    if (!src->fp)
        return 0;
    if (!dst->fp && !(dst->fp = kmalloc(sizeof(struct fpstate))))
        return -E_NOMEM;
    *dst->fp = *src->fp;
    return 0;
}

void arch_fp_flush(struct thread *t)
{
    struct cpu *c = this_cpu();
    if (c->fp_owner == t && t->fp_used && t->fp) {
        set_fpen(FPEN_NONE);
        fp_save(t->fp);
        set_fpen(FPEN_TRAP_EL0);
    }
}

/* This core idles after prev: save prev's state if the registers hold it
 * (they stay loaded: prev resuming here skips the reload). */
void arch_fp_idle(struct thread *prev)
{
    arch_fp_flush(prev);
    prev->fp_used = false;
}
