/*
 * Kernel execution contexts (arch.h): a switch between two kernel stacks.
 * Only what a C call must preserve is kept (x19-x28, the frame pointer,
 * the link register and sp): arch_kctx_switch is an ordinary call for its
 * caller, which resumes from it when something switches back.
 */

/* struct arch_kctx: x19..x28 at 0, fp at 80, lr at 88, sp at 96. */

/* void arch_kctx_switch(struct arch_kctx *save, const struct arch_kctx *load) */
.global arch_kctx_switch
arch_kctx_switch:
    stp     x19, x20, [x0, #0]
    stp     x21, x22, [x0, #16]
    stp     x23, x24, [x0, #32]
    stp     x25, x26, [x0, #48]
    stp     x27, x28, [x0, #64]
    stp     x29, x30, [x0, #80]
    mov     x9, sp
    str     x9, [x0, #96]
    ldp     x19, x20, [x1, #0]
    ldp     x21, x22, [x1, #16]
    ldp     x23, x24, [x1, #32]
    ldp     x25, x26, [x1, #48]
    ldp     x27, x28, [x1, #64]
    ldp     x29, x30, [x1, #80]
    ldr     x9, [x1, #96]
    mov     sp, x9
    ret

/* A fresh context's first switch lands here: x19 = arg, x20 = entry
 * (arch_kctx_init). entry never returns; if it did, stop here. */
kctx_start:
    mov     x0, x19
    blr     x20
1:  brk     #0x4b
    b       1b

/* void arch_kctx_init(struct arch_kctx *c, uint64_t stack_top, void (*entry)(void *), void *arg) */
.global arch_kctx_init
arch_kctx_init:
    stp     x3, x2, [x0, #0]        /* x19 = arg, x20 = entry */
    adr     x9, kctx_start
    stp     xzr, x9, [x0, #80]      /* fp = 0 (the end of a backtrace), lr */
    and     x1, x1, #~15
    str     x1, [x0, #96]
    ret
