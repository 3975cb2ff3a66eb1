/* The register frame every exception entry saves on the kernel stack. */
#ifndef PETREL_TRAPFRAME_H
#define PETREL_TRAPFRAME_H

#define TF_SIZE     272
/* struct thread's foreign_svc flag, right after its frame (thread.h checks):
 * the system call entry reads it before anything else. */
#define TF_THREAD_FOREIGN   TF_SIZE
/* struct thread's light call (struct kcall), after the flag: the handle and
 * message word it matches, then its entry, at KCALL_FN. */
#define TF_THREAD_KCALL     (TF_SIZE + 8)
#define KCALL_FN            16

#ifndef __ASSEMBLER__
#include "types.h"

struct trapframe {
    uint64_t x[31];     /* x0..x30 */
    uint64_t sp;        /* sp_el0: the user stack pointer */
    uint64_t pc;        /* elr_el1 */
    uint64_t pstate;    /* spsr_el1 */
};

_Static_assert(sizeof(struct trapframe) == TF_SIZE, "trapframe layout");
#endif

#endif
