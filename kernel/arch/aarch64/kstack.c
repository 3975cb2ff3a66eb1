/*
 * Kernel stacks and their guards (layout in <arch/kstack.h>).
 *
 * Every core runs the kernel on its own stack in kstack_region (boot.S).
 * The guards below and above each stack are left out of the final
 * kernel map, so running off either end faults instead of writing into
 * another core's stack or the page tables. That fault alone would
 * loop: the exception entry pushes its frame onto the same bad stack.
 * So the EL1 entry (vectors.S) first checks that its frame fits; if not,
 * it moves to the core's emergency stack and comes here to panic.
 */
#include "arch.h"
#include "kernel.h"
#include "cpu.h"
#include "space.h"
#include <arch/kstack.h>
#include <arch/trapframe.h>

extern char kstack_region[];

_Static_assert(KSTACK_SIZE >= ESTACK_OFFSET + ESTACK_SIZE + KSTACK_GUARD_SIZE,
               "a guard page fits between the emergency stack and the kernel stack");

/* The initial stack pointer (the top) of core cpu's kernel stack. */
uint64_t arch_kstack_top(unsigned cpu)
{
    return (uint64_t)kstack_region + (uint64_t)(cpu + 1) * KSTACK_SLOT;
}

/* The initial stack pointer of kernel-placed service stack i (< KSVC_STACKS). */
uint64_t arch_service_stack_top(unsigned i)
{
    return arch_kstack_top(CONFIG_MAX_CPUS + i);
}

/* Map every kernel and emergency stack; the guards stay unmapped. */
int kstack_map(uint64_t *l1, uint64_t attrs)
{
    int err = 0;
    for (unsigned i = 0; i < KSTACK_SLOTS; i++) {
        vaddr_t slot = (vaddr_t)kstack_region + (vaddr_t)i * KSTACK_SLOT;
        err |= mmu_map_range(l1, slot + ESTACK_OFFSET, virt_to_phys((void *)(slot + ESTACK_OFFSET)),
                             ESTACK_SIZE, attrs, 0);
        err |= mmu_map_range(l1, slot + KSTACK_OFFSET, virt_to_phys((void *)(slot + KSTACK_OFFSET)),
                             KSTACK_SIZE, attrs, 0);
    }
    return err;
}

/*
 * An EL1 exception found SP_EL1 too low for its frame (vectors.S); tf is
 * on the emergency stack, sp is where SP_EL1 was. Below this core's
 * kernel stack, within its slot, it is an overflow; anywhere else the
 * kernel was running on no kernel stack at all.
 */
NORETURN void exc_el1_stack_overflow(struct trapframe *tf, uint64_t sp)
{
    uint64_t top = this_cpu()->kstack_top, base = top - KSTACK_SIZE;
    if (sp <= top && sp >= top - KSTACK_SLOT)
        panic_frame(tf, "kernel stack overflow (sp 0x%lx, stack 0x%lx-0x%lx)", sp, base, top);
    panic_frame(tf, "kernel exception with sp 0x%lx, off this core's stack 0x%lx-0x%lx", sp, base, top);
}
