/*
 * void copy_rounds(uint8_t *d, const uint8_t *s, size_t n) (lib/include/pstring.h):
 * memcpy's bulk, n a multiple of 64 (at least 64), d 8-byte aligned, s
 * anywhere (Normal memory takes unaligned pairs: SCTLR_EL1.A is clear).
 * 128 bytes a round through q0-q3, 12 instructions, where general
 * registers take 24.
 *
 * The SIMD registers may hold a thread's FP/SIMD state (switched lazily:
 * fpu.c), so the copy goes in pieces of at most 1 KiB, each with
 * interrupts masked and q0-q3 saved on the stack before and loaded back
 * after it: nothing can switch threads, or see the registers, while they
 * hold the copy's bytes; an interrupt waits for one piece at most (about
 * 100 instructions), and a handler's own copy saves them again. EL1 never
 * traps FP/SIMD (CPACR_EL1.FPEN is 01 or 11).
 */
.arch armv8-a+fp+simd

.global copy_rounds
copy_rounds:
    mrs     x9, daif
.Lpiece:
    mov     x10, #1024
    cmp     x2, x10
    csel    x10, x2, x10, lo            /* this piece: min(n, 1 KiB) */
    sub     x2, x2, x10
    msr     daifset, #3                 /* IRQ and FIQ */
    stp     q0, q1, [sp, #-64]!
    stp     q2, q3, [sp, #32]
    tbz     x10, #6, .Lpairs            /* (a multiple of 128 already) */
    ldp     q0, q1, [x1]
    ldp     q2, q3, [x1, #32]
    stp     q0, q1, [x0]
    stp     q2, q3, [x0, #32]
    add     x1, x1, #64
    add     x0, x0, #64
    subs    x10, x10, #64
    b.eq    .Ldone
.Lpairs:
    ldp     q0, q1, [x1]
    ldp     q2, q3, [x1, #32]
    stp     q0, q1, [x0]
    stp     q2, q3, [x0, #32]
    ldp     q0, q1, [x1, #64]
    ldp     q2, q3, [x1, #96]
    stp     q0, q1, [x0, #64]
    stp     q2, q3, [x0, #96]
    add     x1, x1, #128
    add     x0, x0, #128
    subs    x10, x10, #128
    b.ne    .Lpairs
.Ldone:
    ldp     q2, q3, [sp, #32]
    ldp     q0, q1, [sp], #64
    msr     daif, x9
    cbnz    x2, .Lpiece
    ret
