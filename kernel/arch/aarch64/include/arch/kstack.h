/*
 * The layout of the per-core kernel stacks, shared by boot.S (which
 * reserves them), vectors.S (which checks them), mmu.c (which maps
 * them) and kstack.c.
 *
 * Each core owns one slot of 2 * KSTACK_SIZE bytes, aligned to its own
 * size, in the region kstack_region:
 *
 *   slot + 0             guard page (above the previous core's stack)
 *   slot + 4 KiB         emergency stack (4 KiB)
 *   slot + 8 KiB         guard, KSTACK_SIZE - 8 KiB (below the kernel stack)
 *   slot + KSTACK_SIZE   kernel stack (KSTACK_SIZE), top at slot + 2 * KSTACK_SIZE
 *
 * After the cores' slots come KSVC_STACKS more of the same shape: the
 * stacks kernel-placed services run their requests on (svc_kernel.c), so
 * a request can stop at a step and resume later. One more guard page
 * follows the last slot. Guards are left out of
 * the final kernel map. Since the kernel stack is the upper half of an
 * aligned slot, bit KSTACK_SHIFT is set in every address on it and clear
 * in the KSTACK_SIZE below it: the EL1 exception entry tests that one
 * bit to tell whether its frame still fits.
 */
#ifndef PETREL_ARCH_KSTACK_H
#define PETREL_ARCH_KSTACK_H

#include <config.h>

#define KSTACK_SIZE         CONFIG_KSTACK_SIZE
#if KSTACK_SIZE == 16384
#define KSTACK_SHIFT        14
#elif KSTACK_SIZE == 32768
#define KSTACK_SHIFT        15
#elif KSTACK_SIZE == 65536
#define KSTACK_SHIFT        16
#else
#error "CONFIG_KSTACK_SIZE must be 16384, 32768 or 65536"
#endif

#define KSTACK_GUARD_SIZE   4096
#define KSTACK_SLOT         (2 * KSTACK_SIZE)
#define ESTACK_SIZE         4096
#define ESTACK_OFFSET       KSTACK_GUARD_SIZE               /* in the slot */
#define KSTACK_OFFSET       KSTACK_SIZE                     /* in the slot */
#define KSVC_STACKS         8                               /* kernel-placed services (of one system) */
#define KSTACK_SLOTS        (CONFIG_MAX_CPUS + KSVC_STACKS)
#define KSTACK_REGION_SIZE  (KSTACK_SLOTS * KSTACK_SLOT + KSTACK_GUARD_SIZE)

/* From a core's kernel stack top down to the top of its emergency stack. */
#define ESTACK_TOP_BELOW_KSTACK_TOP  (KSTACK_SLOT - ESTACK_OFFSET - ESTACK_SIZE)

#ifndef __ASSEMBLER__
#include "types.h"

struct trapframe;

/* Map every core's kernel and emergency stack into the kernel table l1
 * with attributes attrs, leaving the guards out (mmu.c). */
int kstack_map(uint64_t *l1, uint64_t attrs);

/* vectors.S: an EL1 exception whose frame does not fit on the kernel
 * stack; tf is on this core's emergency stack, sp is where SP_EL1 was. */
NORETURN void exc_el1_stack_overflow(struct trapframe *tf, uint64_t sp);
#endif

#endif
