/*
 * Exception vectors.
 *
 * From EL0: while a thread runs in user space, SP_EL1 points just past
 * its struct thread's register frame, so the entry saves the user
 * registers straight into the thread. The handler then runs on this
 * core's kernel stack (struct cpu's first field, through TPIDR_EL1) and
 * returns the frame to resume — the same thread's or, after a switch,
 * another's. Restoring that frame leaves SP_EL1 just past it again.
 *
 * From EL1 (interrupts while the core idles, or a kernel fault): the
 * frame goes on the current kernel stack and is restored from there,
 * once a check of one address bit has shown that it fits (see
 * el1h_vector). A frame that would not fit means the kernel stack has
 * overflowed into the guard below it: the entry moves to the core's
 * emergency stack and panics. The EL0 entries need no such check: they
 * save into the thread and switch to the top of the kernel stack.
 */
#include <arch/trapframe.h>
#include <arch/kstack.h>
#include "syscalls_gen.h"

.macro save_frame
    sub     sp, sp, #TF_SIZE
    save_regs
.endm

/* Save x0..x30, sp_el0, elr and spsr at sp (the frame already reserved). */
.macro save_regs
    stp     x0, x1, [sp, #16 * 0]
    stp     x2, x3, [sp, #16 * 1]
    save_regs_from_x4
.endm

/* x4..x17 into the frame at sp: with x0..x3, the registers C may change. */
.macro save_x4_x17
    stp     x4, x5, [sp, #16 * 2]
    stp     x6, x7, [sp, #16 * 3]
    stp     x8, x9, [sp, #16 * 4]
    stp     x10, x11, [sp, #16 * 5]
    stp     x12, x13, [sp, #16 * 6]
    stp     x14, x15, [sp, #16 * 7]
    stp     x16, x17, [sp, #16 * 8]
.endm

/* x0..x17 back from the frame at sp. */
.macro load_x0_x17
    ldp     x0, x1, [sp, #16 * 0]
    ldp     x2, x3, [sp, #16 * 1]
    ldp     x4, x5, [sp, #16 * 2]
    ldp     x6, x7, [sp, #16 * 3]
    ldp     x8, x9, [sp, #16 * 4]
    ldp     x10, x11, [sp, #16 * 5]
    ldp     x12, x13, [sp, #16 * 6]
    ldp     x14, x15, [sp, #16 * 7]
    ldp     x16, x17, [sp, #16 * 8]
.endm

/* x18..x29 into the frame at \base. */
.macro save_x18_x29 base
    stp     x18, x19, [\base, #16 * 9]
    stp     x20, x21, [\base, #16 * 10]
    stp     x22, x23, [\base, #16 * 11]
    stp     x24, x25, [\base, #16 * 12]
    stp     x26, x27, [\base, #16 * 13]
    stp     x28, x29, [\base, #16 * 14]
.endm

/* elr and spsr into the frame at \base (x22, x23 already saved). */
.macro save_elr_spsr base
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [\base, #16 * 16]
.endm

/* The same from x4 on (x0..x3 already saved). */
.macro save_regs_from_x4
    save_x4_x17
    save_x18_x29 sp
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #16 * 15]
    save_elr_spsr sp
.endm

/* Each entry is at most 0x80 bytes: .org refuses to move backwards. */
.macro el1_vector handler, n
    .org exception_vectors + \n * 0x80
    save_frame
    mov     x0, sp
    bl      \handler
    b       restore_frame
.endm

/*
 * An exception taken on SP_EL1 at EL1. A kernel stack is the upper half
 * of an aligned slot twice its size (<arch/kstack.h>), so bit
 * KSTACK_SHIFT of the frame's lowest address is set if the frame fits
 * and clear if it would reach into the guard below. No register is free
 * for the test: x0 is parked in sp (sp + x0) meanwhile, as Linux arm64
 * does. Five instructions more than el1_vector, no memory access.
 */
.macro el1h_vector handler, n
    .org exception_vectors + \n * 0x80
    sub     sp, sp, #TF_SIZE
    add     sp, sp, x0              /* sp = frame + x0 */
    sub     x0, sp, x0              /* x0 = frame */
    tbz     x0, #KSTACK_SHIFT, el1_stack_overflow
    sub     x0, sp, x0              /* x0 = x0 again */
    sub     sp, sp, x0              /* sp = frame again */
    save_regs
    mov     x0, sp
    bl      \handler
    b       restore_frame
.endm

.macro el0_vector handler, n
    .org exception_vectors + \n * 0x80
    save_frame
    mov     x0, sp
    mrs     x1, tpidr_el1
    ldr     x1, [x1]                /* struct cpu: kstack_top */
    mov     sp, x1
    bl      \handler
    mov     sp, x0
    b       restore_frame
.endm

/* From the frame (sp, passed on in x0) to the top of this core's kernel stack. */
.macro to_kstack
    mov     x0, sp
    mrs     x1, tpidr_el1
    ldr     x1, [x1]                /* struct cpu: kstack_top */
    mov     sp, x1
.endm

/*
 * EL0 AArch64 sync. The syndrome is decoded before the frame is whole:
 * an IPC call (`svc #SYS_IPC_CALL`) whose handle and message word (x0,
 * x1) match the thread's light call (struct kcall, thread.h) is served
 * by the light call's entry having saved only x0..x17 and x30, the
 * registers C code may change (the kernel never uses x18): x19..x29 stay
 * in their registers across the C code, and sp_el0, elr and spsr in
 * theirs. That needs no exception taken at EL1 before the eret, which
 * would overwrite elr and spsr: interrupts stay masked in the kernel
 * (only a long request on a service's own stack unmasks them, and a
 * light call never runs one), and a synchronous exception at EL1 is a
 * panic. The entry (ksvc_light) returns the frame, and
 * those registers alone go back; or the frame + 1, and the rest of the
 * frame is saved for kcall_slow. Every other exception saves the whole
 * frame first: el0_call (an IPC call), el0_svc (another system call),
 * el0_sync_other (anything else).
 */
.macro el0_sync_vector n
    .org exception_vectors + \n * 0x80
    sub     sp, sp, #TF_SIZE
    stp     x0, x1, [sp, #16 * 0]
    stp     x2, x3, [sp, #16 * 1]
    mrs     x3, esr_el1
    lsr     x2, x3, #26
    cmp     x2, #0x15               /* SVC64 */
    b.ne    el0_sync_other
    and     x2, x3, #0xffff         /* the call's number */
    cmp     x2, #SYS_IPC_CALL
    b.ne    el0_svc
    ldp     x2, x3, [sp, #TF_THREAD_KCALL]
    cmp     x0, x2
    ccmp    x1, x3, #0, eq
    b.ne    el0_call
    save_x4_x17
    str     x30, [sp, #16 * 15]
    to_kstack
    ldr     x2, [x0, #TF_THREAD_KCALL + KCALL_FN]
    blr     x2
    tbnz    x0, #0, el0_kcall_slow
    mov     sp, x0
    b       el0_kcall_return
.endm

.section .text
.balign 2048
.global exception_vectors
exception_vectors:
    el1_vector  exc_bad_mode, 0     /* EL1t sync */
    el1_vector  exc_bad_mode, 1     /* EL1t irq */
    el1_vector  exc_bad_mode, 2     /* EL1t fiq */
    el1_vector  exc_bad_mode, 3     /* EL1t serror */
    el1h_vector exc_el1_sync, 4     /* EL1h sync */
    el1h_vector exc_el1_irq, 5      /* EL1h irq */
    el1h_vector exc_bad_mode, 6     /* EL1h fiq */
    el1h_vector exc_serror, 7       /* EL1h serror */
    el0_sync_vector 8               /* EL0 AArch64 sync */
    el0_vector  exc_el0_irq, 9     /* EL0 AArch64 irq */
    el1_vector  exc_bad_mode, 10    /* EL0 AArch64 fiq */
    el0_vector  exc_el0_serror, 11    /* EL0 AArch64 serror */
    el1_vector  exc_bad_mode, 12    /* EL0 AArch32 sync */
    el1_vector  exc_bad_mode, 13    /* EL0 AArch32 irq */
    el1_vector  exc_bad_mode, 14    /* EL0 AArch32 fiq */
    el1_vector  exc_bad_mode, 15    /* EL0 AArch32 serror */

    .org exception_vectors + 16 * 0x80

restore_frame:
    ldp     x22, x23, [sp, #16 * 16]
    msr     elr_el1, x22
    msr     spsr_el1, x23
    ldp     x30, x21, [sp, #16 * 15]
    msr     sp_el0, x21
    load_x0_x17
    ldp     x18, x19, [sp, #16 * 9]
    ldp     x20, x21, [sp, #16 * 10]
    ldp     x22, x23, [sp, #16 * 11]
    ldp     x24, x25, [sp, #16 * 12]
    ldp     x26, x27, [sp, #16 * 13]
    ldp     x28, x29, [sp, #16 * 14]
    add     sp, sp, #TF_SIZE
    eret

/* The light call answered: back with the registers its entry saved. */
el0_kcall_return:
    load_x0_x17
    ldr     x30, [sp, #16 * 15]
    add     sp, sp, #TF_SIZE
    eret

/* The light call did not answer (x0 = frame + 1, on the kernel stack):
 * the rest of the frame, still in the registers, goes into it, and
 * kcall_slow carries on with the call's syndrome. */
el0_kcall_slow:
    sub     x0, x0, #1
    save_x18_x29 x0
    mrs     x21, sp_el0
    str     x21, [x0, #16 * 15 + 8]     /* (x30 is the user's already: lr is the kernel's now) */
    save_elr_spsr x0
    mov     x1, #SYS_IPC_CALL
    movk    x1, #0x5600, lsl #16    /* SVC64 (0x15 << 26), 32-bit instruction (1 << 25) */
    bl      kcall_slow
    mov     sp, x0
    b       restore_frame

/* Any other IPC call: the foreign-call fastpath for a foreign thread, else
 * the IPC fastpath. */
el0_call:
    save_regs_from_x4
    to_kstack
    ldrb    w3, [x0, #TF_THREAD_FOREIGN]
    mrs     x1, esr_el1
    cbnz    w3, 1f
    bl      fastpath_call
    mov     sp, x0
    b       restore_frame
1:  bl      fastpath_foreign_syscall
    mov     sp, x0
    b       restore_frame

/* Any other system call (x2 = its number, x3 = syndrome). */
el0_svc:
    save_regs_from_x4
    to_kstack
    mov     x1, x3
    bl      el0_svc_entry
    mov     sp, x0
    b       restore_frame

/* Anything else but a system call (x3 = syndrome). */
el0_sync_other:
    save_regs_from_x4
    to_kstack
    mov     x1, x3
    bl      exc_el0_sync
    mov     sp, x0
    b       restore_frame

/* A system call but an IPC call (x2 = its number): the syndrome goes
 * along as the second argument. Every svc of a thread made foreign (a Linux thread:
 * thread_make_foreign) and a Linux `svc #0` go to the foreign-call
 * fastpath, a reply-and-receive to the IPC fastpath, a leaf call
 * (idl/syscalls.toml) to its handler in syscall_leaf, every other call to
 * exc_el0_svc. */
el0_svc_entry:
    ldrb    w3, [x0, #TF_THREAD_FOREIGN]
    cbnz    w3, fastpath_foreign_syscall
    cmp     x2, #SYS_IPC_REPLY_RECV
    b.eq    fastpath_reply_recv
    cmp     x2, #SYSCALL_LEAF_TOP
    b.hs    exc_el0_svc
    adrp    x3, syscall_leaf
    add     x3, x3, :lo12:syscall_leaf
    ldr     x3, [x3, x2, lsl #3]
    cbz     x3, el0_not_leaf
/*
 * A leaf call returns straight to its caller, without a scheduling
 * decision (see exc_el0_leaf). With one core there is no lock to take,
 * and the caller is still T_RUNNING (only another core could have
 * changed that while it ran in user space), so the handler runs from
 * here: the frame stays in x19 (the user's x19 is saved in it), the
 * result goes to its x0 and the whole frame is restored. With more
 * cores, exc_el0_leaf takes the lock and checks the thread first.
 */
    adrp    x4, smp_running
    ldrb    w4, [x4, :lo12:smp_running]
    cbnz    w4, exc_el0_leaf
    mov     x19, x0
    blr     x3
    str     x0, [x19]
    mov     sp, x19
    b       restore_frame

/* Not a leaf call: `svc #0` (a Linux process's system call, for its fault
 * handler) has a fastpath of its own; every other call goes to exc_el0_svc. */
el0_not_leaf:
    cbz     x2, fastpath_foreign_syscall
    b       exc_el0_svc

/* arch_enter_user(tf): resume the thread whose frame is tf. */
.global arch_enter_user
arch_enter_user:
    mov     sp, x0
    b       restore_frame

/*
 * The frame of an EL1 exception would not fit on the kernel stack
 * (el1h_vector): sp = frame + x0, x0 = frame. Park both in EL0's thread
 * registers (the machine stops, so no thread needs them again), move to
 * this core's emergency stack, save the registers there as usual and
 * panic. A fault on the emergency stack itself comes back here and ends
 * in the panic path's "panic while panicking" stop.
 */
el1_stack_overflow:
    msr     tpidr_el0, x0           /* the frame address */
    sub     x0, sp, x0
    msr     tpidrro_el0, x0         /* x0 */
    mrs     x0, tpidr_el1
    ldr     x0, [x0]                /* struct cpu: kstack_top */
    sub     sp, x0, #ESTACK_TOP_BELOW_KSTACK_TOP
    mrs     x0, tpidrro_el0
    save_frame
    mov     x0, sp
    mrs     x1, tpidr_el0
    add     x1, x1, #TF_SIZE        /* SP_EL1 when the exception came */
    bl      exc_el1_stack_overflow
1:  b       1b
