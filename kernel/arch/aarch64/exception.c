/*
 * Exception handling: decode the syndrome (ESR_EL1) of every exception
 * the vectors deliver and hand it to generic code. EL0 system calls go
 * to the dispatcher, EL0 faults to thread_fault, interrupts to the
 * interrupt layer; anything the kernel itself triggers is a panic.
 */
#include "arch.h"
#include "kernel.h"
#include "k2.h"
#include "irq.h"
#include "cpu.h"
#include "thread.h"
#include "trace.h"
#include "ipc.h"
#include "sched.h"
#include "memobj.h"
#include "syscalls_gen.h"
#include <arch/trapframe.h>

#define EC_UNKNOWN      0x00
#define EC_ILLEGAL      0x0e
#define EC_SVC64        0x15
#define EC_SYSREG       0x18
#define EC_IABT_LOW     0x20
#define EC_IABT_CUR     0x21
#define EC_PC_ALIGN     0x22
#define EC_DABT_LOW     0x24
#define EC_DABT_CUR     0x25
#define EC_SP_ALIGN     0x26
#define EC_BRK64        0x3c

extern char exception_vectors[];
#define EC_FP           0x07
#define PSR_I           (1u << 7)      /* SPSR: IRQs masked */

struct trapframe *exc_el0_svc(struct trapframe *tf, uint64_t esr);
struct trapframe *exc_el0_leaf(struct trapframe *tf, uint64_t esr, uint64_t n, int64_t (*fn)(struct trapframe *));
struct trapframe *exc_el0_sync(struct trapframe *tf, uint64_t esr);
struct trapframe *exc_el0_irq(struct trapframe *tf);
struct trapframe *exc_el0_serror(struct trapframe *tf);
void exc_el1_sync(struct trapframe *tf);
void exc_el1_irq(struct trapframe *tf);
void exc_serror(struct trapframe *tf);
void exc_bad_mode(struct trapframe *tf);

/* Install the vectors; let EL0 read the virtual counter and the EL1 physical timer. */
void arch_trap_init(void)
{
    write_sysreg(vbar_el1, exception_vectors);
    write_sysreg(cntkctl_el1, (1 << 1) | (1 << 9));     /* EL0VCTEN, EL0PTEN */
    isb();
}

/* What an EL0 exception was, for the message of a fault that kills its
 * thread (thread_fault): an abort's fault status, or the class. Only
 * then, so a fault its handler takes costs no formatting. */
const char *arch_fault_detail(uint64_t esr, char *buf, size_t size)
{
    unsigned ec = (unsigned)(esr >> 26), fsc = esr & 0x3f, level = fsc & 3;
    if (ec != EC_DABT_LOW && ec != EC_IABT_LOW) {
        ksnprintf(buf, size, "exception class 0x%x", ec);
        return buf;
    }
    const char *what;
    if ((fsc & 0x3c) == 0x04) what = "translation fault";
    else if ((fsc & 0x3c) == 0x08) what = "access flag fault";
    else if ((fsc & 0x3c) == 0x0c) what = "permission fault";
    else if (fsc == 0x21) what = "alignment fault";
    else what = "abort";
    bool has_level = (fsc & 0x30) == 0 && fsc >= 4;
    const char *rw = ec == EC_DABT_LOW ? ((esr & (1 << 6)) ? ", write" : ", read") : "";
    if (has_level)
        ksnprintf(buf, size, "%s, level %u%s", what, level, rw);
    else
        ksnprintf(buf, size, "%s%s", what, rw);
    return buf;
}

/* Resolve an abort through the memory objects (lazy page, copy-on-write):
 * 0 if the access may be retried, else why not. */
static int resolve_abort(struct thread *t, uint64_t esr, uint64_t far)
{
    unsigned ec = (unsigned)(esr >> 26), fsc = esr & 0x3c;
    if (fsc != 0x04 && fsc != 0x0c)     /* translation or permission fault */
        return -E_FAULT;
    bool write = ec == EC_DABT_LOW && (esr & (1 << 6));
    bool exec = ec == EC_IABT_LOW;
    trace_page_fault(far, write, exec);
    return memobj_resolve_access(t->space, far, write, exec);
}

/* Decode an EL0 exception that is not a Petrel system call into a fault. */
static void el0_fault(struct thread *t, uint64_t esr, uint64_t far)
{
    unsigned ec = (unsigned)(esr >> 26);
    struct fault_info fi = { FAULT_OTHER, far, esr, NULL };     /* NULL: arch_fault_detail */
    switch (ec) {
    case EC_SVC64:
        fi.kind = FAULT_FOREIGN_SYSCALL;
        fi.addr = t->tf.x[8];
        fi.detail = "Linux system call";
        break;
    case EC_DABT_LOW:
        fi.kind = ((esr & 0x3f) == 0x21) ? FAULT_ALIGN : FAULT_DATA;
        break;
    case EC_IABT_LOW:
        fi.kind = FAULT_INSN;
        break;
    case EC_PC_ALIGN:
        fi.kind = FAULT_ALIGN;
        fi.detail = "misaligned pc";
        break;
    case EC_SP_ALIGN:
        fi.kind = FAULT_ALIGN;
        fi.addr = t->tf.sp;
        fi.detail = "misaligned sp";
        break;
    case EC_UNKNOWN:
    case EC_SYSREG:
    case EC_ILLEGAL:
    case EC_BRK64:
        fi.kind = FAULT_UNDEF;
        fi.addr = t->tf.pc;
        fi.detail = ec == EC_BRK64 ? "breakpoint" : ec == EC_SYSREG ? "system register access" :
                    ec == EC_ILLEGAL ? "illegal execution state" : "undefined instruction";
        break;
    default:
        break;
    }
    thread_fault(t, &fi);
}

/*
 * Every synchronous exception from EL0. The IPC fastpath goes first;
 * everything else is a system call, an FP/SIMD first use, a fault a
 * memory object resolves, or a fault for the thread's handler.
 * Returns the frame to resume.
 */
static NOINLINE struct trapframe *el0_sync_locked(struct trapframe *tf, uint64_t esr);

/* A system call with its entry and exit tracepoints (either of them on):
 * out of line, so that the usual path pays one test for both. */
static NOINLINE struct trapframe *syscall_traced(unsigned n, struct trapframe *tf)
{
    _Static_assert(TP_SYSCALL_ENTER / 64 == TP_SYSCALL_EXIT / 64, "one word of the mask");
    trace_syscall_enter(n, tf->x[0], tf->x[1], tf->x[2]);
    tf->x[0] = (uint64_t)syscall_dispatch(n, tf);
    trace_syscall_exit(n, tf->x[0]);
    return sched_exit();
}

/*
 * A Petrel system call (`svc #N`, N > 0; vectors.S tells it apart by the
 * syndrome's class and passes the syndrome), with the kernel lock held.
 * The two IPC calls the fastpath serves went to it straight from the
 * vector and come here only when it declines; every other call goes to
 * the generated dispatcher and back, with nothing set up it does not need.
 */
struct trapframe *exc_el0_svc_locked(struct trapframe *tf, uint64_t esr)
{
    unsigned n = esr & 0xffff;
    struct thread *t = (struct thread *)tf;
    if (unlikely(n == 0 || t->foreign_svc || t->state != T_RUNNING))
        return el0_sync_locked(tf, esr);    /* svc #0 or a foreign thread's: a Linux call, for the handler */
    if (unlikely(TRACE_EITHER(TP_SYSCALL_ENTER, TP_SYSCALL_EXIT)))
        return syscall_traced(n, tf);
    tf->x[0] = (uint64_t)syscall_dispatch(n, tf);
    return sched_exit();
}

struct trapframe *exc_el0_svc(struct trapframe *tf, uint64_t esr)
{
    kernel_lock();
    return exc_el0_svc_locked(tf, esr);
}

/*
 * A leaf system call (leaf = true in idl/syscalls.toml; vectors.S found
 * its handler fn in syscall_leaf) while several cores run; with one,
 * vectors.S calls fn itself. It returns straight to the caller, without
 * sched_exit's decision: nothing a leaf call does can make another
 * thread the better choice on this core, and what other cores change
 * here (a wake-up of higher priority, a kill, a suspension, a new
 * affinity) comes with an IPI, taken as soon as the caller runs again.
 */
struct trapframe *exc_el0_leaf(struct trapframe *tf, uint64_t esr, uint64_t n, int64_t (*fn)(struct trapframe *))
{
    kernel_lock();
    struct thread *t = (struct thread *)tf;
    if (unlikely(t->state != T_RUNNING))
        return el0_sync_locked(tf, esr);    /* killed by another core meanwhile */
    tf->x[0] = (uint64_t)fn(tf);
    kernel_unlock();
    return tf;
}

/* Every other synchronous exception from EL0 (faults, FP first use). */
struct trapframe *exc_el0_sync(struct trapframe *tf, uint64_t esr)
{
    kernel_lock();
    return el0_sync_locked(tf, esr);
}

static NOINLINE struct trapframe *el0_sync_locked(struct trapframe *tf, uint64_t esr)
{
    struct thread *t = (struct thread *)tf;
    if (t->state != T_RUNNING)
        return sched_exit();            /* killed by another core meanwhile */
    unsigned ec = (unsigned)(esr >> 26);
    if (ec == EC_SVC64 && (esr & 0xffff) != 0 && !t->foreign_svc) {
        if (unlikely(TRACE_EITHER(TP_SYSCALL_ENTER, TP_SYSCALL_EXIT)))
            return syscall_traced(esr & 0xffff, tf);
        int64_t r = syscall_dispatch(esr & 0xffff, tf);
        tf->x[0] = (uint64_t)r;
        return sched_exit();
    }
    if (ec == EC_FP) {
        arch_fp_trap(t);
        return sched_exit();
    }
    uint64_t far = read_sysreg(far_el1);
    if (ec == EC_DABT_LOW || ec == EC_IABT_LOW) {
        int err = resolve_abort(t, esr, far);
        if (err == 0) {
            /* Filling a page changes no thread's scheduling state: back
             * to t without a decision, as after a leaf call. */
            t->mem_wait_noted = false;
            kernel_unlock();
            return tf;
        }
        if (err == -E_NOMEM && thread_wait_for_memory(t))
            return sched_exit();
    }
    el0_fault(t, esr, far);
    return sched_exit();
}

struct trapframe *exc_el0_irq(struct trapframe *tf)
{
    irq_handle();
    kernel_lock();
    return sched_exit();
}

struct trapframe *exc_el0_serror(struct trapframe *tf)
{
    kernel_lock();
    struct thread *t = (struct thread *)tf;
    struct fault_info fi = { FAULT_OTHER, 0, read_sysreg(esr_el1), "SError" };
    if (t->state == T_RUNNING)
        thread_fault(t, &fi);
    return sched_exit();
}

void exc_el1_sync(struct trapframe *tf)
{
    uint64_t esr = read_sysreg(esr_el1);
    if ((esr >> 26) == EC_DABT_CUR && k2_dsm_fault(read_sysreg(far_el1), esr))
        return;                         /* K2: a shared page came over; the access runs again */
    panic_frame(tf, "kernel exception, class 0x%x, far 0x%lx", (unsigned)(esr >> 26), read_sysreg(far_el1));
}

/* An interrupt in the kernel: while the core idles, or while a kernel
 * service's request runs its service code (which may stop here, see
 * ksvc_irq_exit; resumed to be finished without its caller, it goes on
 * with interrupts masked). */
void exc_el1_irq(struct trapframe *tf)
{
    bool in_service = ksvc_irq_enter();
    irq_handle();
    if (in_service && ksvc_irq_exit())
        tf->pstate |= PSR_I;
}

void exc_serror(struct trapframe *tf)
{
    panic_frame(tf, "SError");
}

void exc_bad_mode(struct trapframe *tf)
{
    panic_frame(tf, "exception from an unexpected mode");
}

/* Print a saved frame: syndrome, fault address and every register. */
void arch_dump_frame(const struct trapframe *tf)
{
    uint64_t esr = read_sysreg(esr_el1);
    kprintf("  esr 0x%08lx (class 0x%02x, iss 0x%07lx)  far 0x%016lx\n",
            esr, (unsigned)(esr >> 26), esr & 0x1ffffff, read_sysreg(far_el1));
    kprintf("  pc  0x%016lx  pstate 0x%08lx  sp_el0 0x%016lx\n", tf->pc, tf->pstate, tf->sp);
    for (int i = 0; i < 31; i += 2) {
        if (i == 30)
            kprintf("  x30 0x%016lx\n", tf->x[30]);
        else
            kprintf("  x%-2d 0x%016lx  x%-2d 0x%016lx\n", i, tf->x[i], i + 1, tf->x[i + 1]);
    }
}
