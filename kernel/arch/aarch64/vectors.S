/*
 * Exception vectors. Every entry saves a full struct trapframe on the
 * current kernel stack (SP_EL1), calls the C handler with a pointer to
 * it, then restores the frame and returns with eret. A thread entering
 * from EL0 lands at the top of its own kernel stack, so its frame is
 * always at the same place.
 */
#include <arch/trapframe.h>

.macro save_frame
    sub     sp, sp, #TF_SIZE
    stp     x0, x1, [sp, #16 * 0]
    stp     x2, x3, [sp, #16 * 1]
    stp     x4, x5, [sp, #16 * 2]
    stp     x6, x7, [sp, #16 * 3]
    stp     x8, x9, [sp, #16 * 4]
    stp     x10, x11, [sp, #16 * 5]
    stp     x12, x13, [sp, #16 * 6]
    stp     x14, x15, [sp, #16 * 7]
    stp     x16, x17, [sp, #16 * 8]
    stp     x18, x19, [sp, #16 * 9]
    stp     x20, x21, [sp, #16 * 10]
    stp     x22, x23, [sp, #16 * 11]
    stp     x24, x25, [sp, #16 * 12]
    stp     x26, x27, [sp, #16 * 13]
    stp     x28, x29, [sp, #16 * 14]
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #16 * 15]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #16 * 16]
.endm

.macro vector handler
    .balign 0x80
    save_frame
    mov     x0, sp
    bl      \handler
    b       restore_frame
.endm

.section .text
.balign 2048
.global exception_vectors
exception_vectors:
    vector  exc_bad_mode        /* EL1t sync */
    vector  exc_bad_mode        /* EL1t irq */
    vector  exc_bad_mode        /* EL1t fiq */
    vector  exc_bad_mode        /* EL1t serror */
    vector  exc_el1_sync        /* EL1h sync */
    vector  exc_irq             /* EL1h irq */
    vector  exc_bad_mode        /* EL1h fiq */
    vector  exc_serror          /* EL1h serror */
    vector  exc_el0_sync        /* EL0 AArch64 sync */
    vector  exc_irq             /* EL0 AArch64 irq */
    vector  exc_bad_mode        /* EL0 AArch64 fiq */
    vector  exc_serror          /* EL0 AArch64 serror */
    vector  exc_bad_mode        /* EL0 AArch32 sync */
    vector  exc_bad_mode        /* EL0 AArch32 irq */
    vector  exc_bad_mode        /* EL0 AArch32 fiq */
    vector  exc_bad_mode        /* EL0 AArch32 serror */

restore_frame:
    ldp     x22, x23, [sp, #16 * 16]
    msr     elr_el1, x22
    msr     spsr_el1, x23
    ldp     x30, x21, [sp, #16 * 15]
    msr     sp_el0, x21
    ldp     x0, x1, [sp, #16 * 0]
    ldp     x2, x3, [sp, #16 * 1]
    ldp     x4, x5, [sp, #16 * 2]
    ldp     x6, x7, [sp, #16 * 3]
    ldp     x8, x9, [sp, #16 * 4]
    ldp     x10, x11, [sp, #16 * 5]
    ldp     x12, x13, [sp, #16 * 6]
    ldp     x14, x15, [sp, #16 * 7]
    ldp     x16, x17, [sp, #16 * 8]
    ldp     x18, x19, [sp, #16 * 9]
    ldp     x20, x21, [sp, #16 * 10]
    ldp     x22, x23, [sp, #16 * 11]
    ldp     x24, x25, [sp, #16 * 12]
    ldp     x26, x27, [sp, #16 * 13]
    ldp     x28, x29, [sp, #16 * 14]
    add     sp, sp, #TF_SIZE
    eret

/* arch_enter_user(tf): tf sits at the top of the thread's kernel stack. */
.global arch_enter_user
arch_enter_user:
    mov     sp, x0
    b       restore_frame
