/*
 * Threads. A thread's user registers live at the start of its struct
 * thread: the EL0 exception entry saves them there directly, and the
 * kernel returns to a thread by restoring that frame. The kernel itself
 * runs on one stack per core and never blocks inside C: a thread that
 * waits is parked with its result still to be written into its frame
 * by whoever wakes it.
 */
#ifndef PETREL_THREAD_H
#define PETREL_THREAD_H

#include "object.h"
#include "list.h"
#include "cpu.h"
#include "svc.h"
#include <arch/trapframe.h>

struct space;
struct endpoint;
struct notification;
struct petrel_utcb;
struct ksvc_run;
struct ksvc;

enum thread_state {
    T_INACTIVE,         /* created, not started */
    T_RUNNING,          /* current on its core */
    T_READY,            /* runnable (in a run queue unless suspended) */
    T_SEND,             /* queued on an endpoint to send (or call) */
    T_RECV,             /* queued on an endpoint to receive */
    T_REPLY,            /* waiting for the reply to a call */
    T_NOTIFY,           /* waiting on a notification */
    T_FUTEX,            /* waiting on a futex */
    T_DEAD,
};

_Static_assert(T_DEAD == THREAD_DEAD && T_FUTEX == THREAD_FUTEX, "thread states match the ABI");

/* The capability to reply to one call, held by the receiver or a handle. */
struct reply {
    struct object obj;          /* used only when saved as a handle */
    struct thread *caller;      /* NULL once used or when the caller died */
};

struct fault_info {
    unsigned kind;              /* FAULT_* of petrel_abi.h */
    uint64_t addr;
    uint64_t esr;
    const char *detail;         /* for the message if it kills; NULL: arch_fault_detail(esr) */
};

/*
 * A thread's light call (ipc_fast.c; docs/design/ipc-fastpath.md): the
 * register-only request it last made of a kernel-placed service through
 * the fastpath. The EL0 entry compares a call's x0 (the handle) and x1
 * (the message word) with `handle` and `info` before it saves anything
 * else, and on a match runs `fn`, the method's light entry, which serves
 * the request from the registers: no handle lookup, no dispatch, no call
 * record to fill. Whatever changes what the handle names in the thread's
 * space (slot_release) or makes the thread foreign empties it
 * (kcall_forget); it is filled only with one core running. The match
 * sits right after the frame, where the entry reaches it; what the entry
 * needs next is at the end of struct thread (struct kcall_ctx), so that
 * it pushes no other field out of reach of a short displacement.
 */
struct kcall {
    uint64_t handle;            /* at TF_THREAD_KCALL */
    uint64_t info;
    uintptr_t (*fn)(struct trapframe *tf);  /* at TF_THREAD_KCALL + KCALL_FN; kcall_none when empty */
};

struct kcall_ctx {
    struct svc_call call;       /* the handler's call: label, badge, pid, env, len; no mr[] */
    struct ksvc_run *run;       /* the service's request state (busy: holder) */
    const struct ksvc *svc;
    unsigned after;             /* what kcall_slow does when fn did not answer: KCALL_* */
};

enum { KCALL_UNSERVED, KCALL_SCHEDULE };

struct thread {
    struct trapframe tf;        /* first: the EL0 entry saves here */
    bool foreign_svc;           /* every svc is a Linux call (thread_make_foreign); at TF_THREAD_FOREIGN */
    struct kcall kcall;         /* at TF_THREAD_KCALL */
    struct object obj;
    struct space *space;
    unsigned cpu;               /* the core it runs on, or whose run queue holds it */
    uint8_t prio;               /* effective: base, or higher while serving a caller */
    uint8_t base_prio;          /* as set with thread_set_priority */
    uint8_t state;
    bool suspended;
    bool fp_used;
    int slice;                  /* ticks left in its time slice */
    struct list link;           /* run queue, endpoint queue or futex bucket */
    struct list space_link;
    uint64_t tls;               /* TPIDR_EL0 while not running */

    /* IPC */
    struct endpoint *waiting_on;
    uint64_t send_badge;        /* badge of the handle a queued sender used */
    uint64_t send_info;         /* its message word, as checked when it queued */
    bool send_is_call;
    bool send_is_fault;         /* the queued message is fault_msg, not registers */
    bool in_fault;              /* waiting for a fault handler's reply */
    uint64_t fault_msg[FAULT_MSG_LEN];
    struct reply reply;         /* the reply capability of the last call received */
    struct reply *reply_holder; /* where the capability to answer this caller sits */
    vaddr_t lend_va;            /* a range of that caller's memory lent to the server of this */
    uint64_t lend_len;          /* ... thread's next call (reply_lend; 0: none, and none once a server answers it or this thread receives a call) */
    bool lend_write;            /* ... which it may write too */
    struct notification *bound;
    struct notification *waiting_notify;
    struct endpoint *fault_ep;
    uint64_t fault_badge;
    struct endpoint *served_ep; /* the endpoint it last received on (priority inheritance) */

    /* futex and timeouts */
    paddr_t futex_key;
    uint64_t deadline;          /* counter value, 0: none */
    struct list timeout_link;

    /* UTCB */
    vaddr_t utcb_va;
    struct petrel_utcb *utcb;   /* kernel alias */
    paddr_t utcb_pa;

    uint64_t cpu_ticks;         /* counter ticks spent running */
    uint64_t run_start;
    int exit_status;
    bool is_root;
    uint32_t tid;               /* a number no other thread had since boot (tracing names it) */
    char name[24];
    struct fpstate *fp;         /* saved FP/SIMD state (allocated at first use) */
    unsigned fp_cpu;            /* core whose registers last held it */
    uint8_t max_prio;           /* highest priority it may give any thread */
    bool mem_wait;              /* parked until memory may be free again (x0 saved) */
    bool mem_wait_noted;        /* said so on the console (until a fault resolves) */
    uint64_t mem_wait_x0;

    /* Kernel-placed services (svc_kernel.c) */
    struct ksvc_run *ksvc_run;  /* the service running (or stopped in) its request */
    struct ksvc_run *ksvc_wait; /* the busy service it waits for (state T_SEND) */
    bool ksvc_suspend;          /* suspend once its request to a service is done */
    bool ksvc_stopped;          /* its request stopped at a step: resume it, not EL0 */
    const struct ksvc *ksvc_fast_svc;   /* the service of its last register-path request */
    bool ksvc_rewound;                  /* waiting for a service with its pc back on its svc */
    const struct ksvc *fault_ksvc;      /* fault_ep's kernel-placed service when it was set, or NULL
                                         * (read without the lock: svc_kernel.c, the shared entry) */
    uint64_t cpus;              /* the cores it may run on (bit per core); the scheduler moves
                                 * it among them (sched.c: "Cores") */
    struct kcall_ctx kcall_ctx;         /* the rest of its light call (struct kcall) */
};
_Static_assert(__builtin_offsetof(struct thread, foreign_svc) == TF_THREAD_FOREIGN, "vectors.S reads the flag there");
_Static_assert(__builtin_offsetof(struct thread, kcall) == TF_THREAD_KCALL &&
               __builtin_offsetof(struct kcall, info) == 8 && __builtin_offsetof(struct kcall, fn) == KCALL_FN,
               "vectors.S reads the light call there");

/* Empty t's light call (kernel lock held). */
void kcall_forget(struct thread *t);
/* Empty the light calls of every thread of space s, if any has one. */
void kcall_forget_space(struct space *s);
/* The light entry of an empty light call: it sends the request on to the fastpath. */
uintptr_t kcall_none(struct trapframe *tf);

/*
 * Take the kernel lock for an entry from EL0 by t, the thread current on
 * this core; false if t no longer runs (another core killed it while it
 * was in user space). With one core there is no lock, and t runs: only
 * another core could have changed that.
 */
static ALWAYS_INLINE bool kernel_enter(const struct thread *t)
{
    if (likely(!smp_running))
        return true;
    spin_lock(&big_lock);
    return t->state == T_RUNNING;
}

/* The thread to hand a message on ep (it has receivers) to: the first
 * receiver waiting on core `cpu` (a server with a thread on each core
 * answers a call on the caller's core), looked for among the first
 * CONFIG_MAX_CPUS receivers, else the first. Inline: the IPC fastpath's
 * second look, which a call out would make it save registers for. */
static ALWAYS_INLINE struct thread *ep_receiver(struct list *receivers, unsigned cpu)
{
    unsigned n = 0;
    list_for_each(pos, receivers) {
        struct thread *t = list_entry(pos, struct thread, link);
        if (t->cpu == cpu)
            return t;
        if (++n == CONFIG_MAX_CPUS)
            break;
    }
    return list_first(receivers, struct thread, link);
}

struct thread *thread_create(struct space *s, vaddr_t utcb_va, int *err);
void thread_start(struct thread *t, uint64_t pc, uint64_t sp, uint64_t arg);
/* thread_start of a created thread, with thread_start's system call checks. */
int thread_start_checked(struct thread *t, uint64_t pc, uint64_t sp, uint64_t arg);
/* Stop t from running until thread_resume (a thread in a kernel-placed
 * service's request: once it ends), and let it run again; 0 or -E_STATE. */
int thread_suspend(struct thread *t);
int thread_resume(struct thread *t);
/* Replace t's user registers (it does not run, or is the current thread
 * in its kernel entry): pc and sp checked, of pstate only NZCV; 0 or an error. */
struct petrel_regs;
int thread_write_regs_checked(struct thread *t, const struct petrel_regs *r);
/* Make ep (NULL: none) t's fault handler, faults badged with `badge`. */
struct endpoint;
int thread_set_fault_ep(struct thread *t, struct endpoint *ep, uint64_t badge);
/* Give created thread dst src's user state (thread_copy.c): src is stopped,
 * or the current thread in its own kernel entry. */
int thread_copy_state(struct thread *dst, struct thread *src);
/* Set t's TLS register (TPIDR_EL0), live if t is the current thread. */
void thread_set_tls(struct thread *t, uint64_t value);
/* t's CPU time (the current thread's run so far included), state,
 * priorities and core, as thread_stats reports them. */
struct petrel_thread_stats;
void thread_stats_get(struct thread *t, struct petrel_thread_stats *st);
/* Make every svc of t a Linux system call (for good). */
void thread_make_foreign(struct thread *t);
void thread_kill(struct thread *t, int status);
void thread_set_prio(struct thread *t, unsigned prio);     /* effective priority, requeues */
void thread_fault(struct thread *t, const struct fault_info *fi);
/* t's fault message for its handler (kind, address, syndrome, pc, sp,
 * x0..x8) in t->fault_msg, t waiting for the answer: ipc_send_fault's,
 * and the fastpaths' for a Linux system call. */
static ALWAYS_INLINE void fault_msg_fill(struct thread *t, unsigned kind, uint64_t addr, uint64_t esr)
{
    uint64_t *m = t->fault_msg;
    m[FAULT_MR_KIND] = kind;
    m[FAULT_MR_ADDR] = addr;
    m[FAULT_MR_ESR] = esr;
    m[FAULT_MR_PC] = t->tf.pc;
    m[FAULT_MR_SP] = t->tf.sp;
    for (unsigned i = 0; i < 9; i++)
        m[FAULT_MR_X0 + i] = t->tf.x[i];
    t->send_is_fault = true;
    t->in_fault = true;
}

/* The machine is out of memory for t's page fault (not t's own limit):
 * without a fault handler t waits and retries instead of dying. */
bool thread_wait_for_memory(struct thread *t);
/* A memory wait ended: t retries its access with all registers intact. */
void thread_memory_retry(struct thread *t);
void thread_wake(struct thread *t, int64_t result);
void thread_cancel_wait(struct thread *t);
const char *fault_kind_name(unsigned kind);
struct thread *current_thread(void);

/* Requests to kernel-placed services (svc_kernel.c). A request runs on
 * the service's own kernel stack in its caller's thread and may stop
 * between bounded steps; the scheduler resumes it when that thread is
 * picked again (ksvc_stopped). A caller killed meanwhile has its request
 * finished at once without it (ksvc_abort); one waiting for a busy
 * service leaves the queue (ksvc_cancel_wait). */
static inline bool ksvc_stopped(const struct thread *t) { return t->ksvc_stopped; }
void ksvc_resume(struct thread *t);
void ksvc_abort(struct thread *t);
void ksvc_cancel_wait(struct thread *t);
/* Interrupts that come while a request's service code runs (exception.c). */
bool ksvc_irq_enter(void);
bool ksvc_irq_exit(void);

/* The root task (task.c). */
int task_start_root(void);

/* Lazy FP/SIMD state (arch); its save area is allocated at first use. */
#define FP_STATE_BYTES  528
void arch_fp_switch_slow(struct thread *prev, struct thread *next);
/* Switching prev -> next: nothing to do in the common case that neither
 * uses FP/SIMD (the registers stay trapped for EL0). While they trap,
 * prev has not used them in this slice (fp_used is only ever set with
 * the trap off), so there is nothing of prev's to save. */
static ALWAYS_INLINE void arch_fp_switch(const struct cpu *c, struct thread *prev, struct thread *next)
{
    if (c->fpen == ARCH_FPEN_TRAP_EL0 && c->fp_owner != next) {
        next->fp_used = false;
        return;
    }
    arch_fp_switch_slow(prev, next);
}
void arch_fp_trap(struct thread *t);
void arch_fp_release(struct thread *t);
/* The core idles after prev: save its state, so memory is current for every thread not running. */
void arch_fp_idle(struct thread *prev);
/* Give dst (never run since created) a copy of src's saved FP/SIMD state; 0 or -E_NOMEM. */
int arch_fp_copy(struct thread *dst, const struct thread *src);
/* The current thread t's FP/SIMD registers, if this core holds them, into its saved area (they stay loaded). */
void arch_fp_flush(struct thread *t);
/* The FP/SIMD state of t (not running, or the current thread) into out
 * (zeros if it never used FP), or replace it from in; FP_STATE_BYTES
 * each. 0 or -E_NOMEM. */
void arch_fp_get(struct thread *t, void *out);
int arch_fp_set(struct thread *t, const void *in);

#endif
