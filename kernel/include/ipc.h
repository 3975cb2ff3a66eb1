/* Endpoints (synchronous IPC) and notifications (asynchronous signals). */
#ifndef PETREL_IPC_H
#define PETREL_IPC_H

#include "object.h"
#include "list.h"

struct thread;
struct fault_info;
struct trapframe;

struct ksvc;
struct space;

struct endpoint {
    struct object obj;
    struct list senders;        /* threads in T_SEND, in arrival order */
    struct list receivers;      /* threads in T_RECV */
    const struct ksvc *ksvc;    /* a kernel-placed service answers here */
    struct thread *server;      /* who last received here (priority inheritance) */
    uint32_t readers;           /* handles to it with R_READ */
    bool dead;                  /* none is left (and no kernel service answers): nobody ever receives */
    struct list watches;        /* struct ep_watch: notifications to signal when it dies */
};

/* A space is torn down: its endpoint watches go. */
void endpoint_watches_gone(struct space *s);

/* Apply the words of a fault handler's reply (FAULT_REPLY_RESUME: pc, sp,
 * x0.., or FAULT_REPLY_STOP) to caller, in a fault; false if it stopped
 * (killed) it. */
struct thread;
bool fault_apply(struct thread *caller, unsigned len, const uint64_t *mr);

/* A call or send on an endpoint bound to a kernel service (svc_kernel.c). */
int64_t ksvc_call(struct endpoint *ep, uint64_t info, uint64_t badge, bool is_call);

struct notification {
    struct object obj;
    uint64_t bits;              /* pending signals */
    struct thread *waiter;      /* a thread in notify_wait */
    struct thread *bound;       /* a thread whose ipc_recv also takes signals */
    struct ksvc_run *kwake;     /* a kernel-placed service's wakeup (svc_wakeup): signals run it */
};

/* Deliver a fault of t to its handler endpoint as a call; false if none. */
bool ipc_send_fault(struct thread *t, const struct fault_info *fi);
/* A thread blocked as sender/receiver leaves its endpoint queue. */
void ipc_cancel(struct thread *t);
/* A dying thread gives up every reply relationship. */
void ipc_thread_gone(struct thread *t);
/* Whose memory len bytes at va of lender's lent range are (reply_lend): its caller's; NULL outside it. */
struct thread *lent_owner(struct thread *lender, uint64_t va, uint64_t len, bool write);
/* A new notification charged to payer (one reference, no handle); NULL if none. */
struct notification *notify_create(struct space *payer);
/* Signal a notification (also used by interrupt delivery). */
void notify_raise(struct notification *n, uint64_t bits);
void notify_thread_gone(struct thread *t);
void notify_cancel(struct thread *t);
/* ipc_recv's check for a bound notification with pending bits. */
bool notify_take_bound(struct thread *t);

/* MR6..len-1 of a message, from's UTCB to to's (nothing for len <= 6). */
void ipc_copy_utcb(const struct thread *from, struct thread *to, unsigned len);

/* Note t as the server of ep (priority inheritance); t holds a reference. */
void ipc_set_served(struct thread *t, struct endpoint *ep);

/* The IPC fastpath, entered from the exception vector with the syscall's
 * syndrome; falls back to the general system call path itself. */
struct trapframe *fastpath_call(struct trapframe *tf, uint64_t esr);
struct trapframe *fastpath_reply_recv(struct trapframe *tf, uint64_t esr);
struct trapframe *fastpath_foreign_syscall(struct trapframe *tf, uint64_t esr);
/* The general system call path, with the kernel lock held (exception.c). */
struct trapframe *exc_el0_svc_locked(struct trapframe *tf, uint64_t esr);

#endif
