/*
 * Threads: creation, start, death, waking, and the thread system calls.
 *
 * A thread holds a reference to itself while alive (obj_init's), its
 * handles hold more. Death (exit, kill, a fault nobody handles) takes
 * it out of every queue and relationship at once; the "alive"
 * reference is dropped then, or, if the thread is still the current
 * thread of some core, by that core's scheduler when it switches away
 * (its register frame is the place that core's next exception entry
 * would write to, so the memory must outlive that).
 */
#include "thread.h"
#include "k2.h"
#include "space.h"
#include "sched.h"
#include "cpu.h"
#include "ipc.h"
#include "kmalloc.h"
#include "memory.h"
#include "irq.h"
#include "timer.h"
#include "syscalls_gen.h"
#include "petrel_abi.h"

#define PSTATE_NZCV     (0xfull << 28)

static uint64_t ticks_to_ns(uint64_t t)
{
    uint64_t f = arch_counter_freq();
    return (t / f) * 1000000000ull + (t % f) * 1000000000ull / f;
}

struct thread *current_thread(void)
{
    return this_cpu()->current;
}

/* Kernel memory a thread takes: its record, UTCB page and FP/SIMD save area. */
static uint64_t thread_bytes(void)
{
    return kmalloc_size(sizeof(struct thread)) + 4096 + kmalloc_size(FP_STATE_BYTES);
}

/* A new thread in space s, not started, its UTCB mapped at utcb_va;
 * charged to s (one thread, and its memory). */
struct thread *thread_create(struct space *s, vaddr_t utcb_va, int *err)
{
    if (!IS_ALIGNED(utcb_va, 4096) || utcb_va < USER_VA_MIN || utcb_va >= USER_VA_LIMIT) {
        *err = -E_INVAL;
        return NULL;
    }
    if (s->torn_down) {
        *err = -E_CLOSED;       /* a dead process gets no new threads */
        return NULL;
    }
    unsigned level;
    if (space_find_mapping(s, utcb_va) || space_pte(s, utcb_va, &level)) {
        *err = -E_BUSY;
        return NULL;
    }
    if ((*err = space_charge(s, LIMIT_THREADS, 1)) != 0)
        return NULL;
    if ((*err = space_charge(s, LIMIT_MEMORY, thread_bytes())) != 0) {
        space_uncharge(s, LIMIT_THREADS, 1);
        return NULL;
    }
    struct thread *t = kmalloc(sizeof(*t));
    paddr_t utcb = frame_alloc_zeroed(0);
    *err = -E_NOMEM;
    if (!t || utcb == PADDR_INVALID ||
        (*err = space_map_pages(s, utcb_va, utcb, 4096, VM_READ | VM_WRITE, 0, false)) != 0) {
        kfree(t, sizeof(*t));
        if (utcb != PADDR_INVALID)
            frame_free(utcb, 0);
        space_uncharge(s, LIMIT_THREADS, 1);
        space_uncharge(s, LIMIT_MEMORY, thread_bytes());
        return NULL;
    }
    obj_init(&t->obj, OBJ_THREAD);          /* the "alive" reference */
    static uint32_t last_tid;
    t->tid = ++last_tid;
    t->space = s;
    obj_ref(&s->obj);
    list_add_tail(&s->threads, &t->space_link);
    s->nthreads++;
    s->had_threads = true;
    list_init(&t->link);
    list_init(&t->timeout_link);
    struct thread *cur = current_thread();
    t->cpu = cur ? cur->cpu : this_cpu()->index;
    t->cpus = 1ull << t->cpu;
    t->prio = cur ? cur->base_prio : 128;
    t->base_prio = t->prio;
    t->max_prio = cur ? cur->max_prio : 255;
    t->slice = SLICE_TICKS;
    t->state = T_INACTIVE;
    t->utcb_va = utcb_va;
    t->utcb_pa = utcb;
    t->utcb = phys_to_virt(utcb);
    t->tf.pstate = 0;                       /* EL0t, interrupts unmasked */
    kcall_forget(t);
    *err = 0;
    return t;
}

void thread_start(struct thread *t, uint64_t pc, uint64_t sp, uint64_t arg)
{
    t->tf.pc = pc;
    t->tf.sp = sp;
    t->tf.x[0] = arg;
    sched_place(t);
    sched_enqueue(t);
}

/* Change t's effective priority, moving it in its run queue if queued. */
void thread_set_prio(struct thread *t, unsigned prio)
{
    if (t->prio == prio)
        return;
    bool queued = t->state == T_READY;
    if (queued)
        sched_dequeue(t);
    t->prio = (uint8_t)prio;
    if (queued)
        sched_enqueue(t);
}

/* Leave whatever t is waiting in (endpoint, notification, futex, reply, timeout). */
void thread_cancel_wait(struct thread *t)
{
    switch (t->state) {
    case T_SEND:
        if (t->ksvc_wait) {
            ksvc_cancel_wait(t);
            break;
        }
        ipc_cancel(t);
        break;
    case T_RECV:
        ipc_cancel(t);
        break;
    case T_NOTIFY:
        notify_cancel(t);
        break;
    case T_FUTEX:
        list_del(&t->link);
        break;
    case T_REPLY:
        if (t->reply_holder)
            t->reply_holder->caller = NULL;
        t->reply_holder = NULL;
        break;
    default:
        break;
    }
    timeout_cancel(t);
}

/* End a wait of t with `result` in its x0 and make it runnable. A fault
 * ended this way (its handler went away) is over: the next reply t gets
 * is an ordinary one. */
void thread_wake(struct thread *t, int64_t result)
{
    thread_cancel_wait(t);
    t->in_fault = false;
    t->tf.x[0] = (uint64_t)result;
    sched_enqueue(t);
}

/* Kill t: out of every queue and relationship; its memory goes later. */
void thread_kill(struct thread *t, int status)
{
    if (t->state == T_DEAD)
        return;
    if (t->ksvc_run)
        ksvc_abort(t);          /* its request finishes first, without it */
    unsigned prev = t->state;
    if (prev == T_READY)
        sched_dequeue(t);
    else if (prev != T_RUNNING && prev != T_INACTIVE)
        thread_cancel_wait(t);
    timeout_cancel(t);
    ipc_thread_gone(t);
    notify_thread_gone(t);
    arch_fp_release(t);
    t->state = T_DEAD;
    t->exit_status = status;
    list_del(&t->space_link);
    space_unmap_range(t->space, t->utcb_va, 4096);
    frame_free(t->utcb_pa, 0);
    t->utcb = NULL;
    space_uncharge(t->space, LIMIT_THREADS, 1);
    if (--t->space->nthreads == 0)
        space_teardown_later(t->space); /* breaks handle cycles; memory goes with the last reference */

    if (t->is_root) {
        kprintf("root: \"%s\" exited with status %d\n", t->name, status);
        k2_shutdown_report();
        kprintf("petrel: shutting down\n");
        arch_system_off();
    }
    /* Current on a core (running, or in the middle of a kernel entry that
     * changed its state, a kernel-placed service's request say): that
     * core's scheduler drops the "alive" reference when it switches away
     * (sched_exit_slow, sched_idle), and another core must stop it now. */
    bool current = false;
    for (unsigned i = 0; i < ncpus_present; i++) {
        if (cpus[i].current != t)
            continue;
        current = true;
        if (i != this_cpu()->index)
            irq_send_ipi(i, IRQ_SGI_WAKE);
    }
    if (!current)
        obj_unref(&t->obj);
}

/* The last handle to t is gone: a running or waiting thread runs on, but
 * one never started or suspended could never be started or resumed
 * again — it dies instead of holding its space forever. */
void thread_shutdown(struct object *o)
{
    struct thread *t = list_entry(o, struct thread, obj);
    if (t->state == T_INACTIVE || t->suspended)
        thread_kill(t, -1);
}

void thread_free(struct object *o)
{
    struct thread *t = list_entry(o, struct thread, obj);
    struct space *s = t->space;
    kfree(t->fp, FP_STATE_BYTES);
    kfree(t, sizeof(*t));
    space_uncharge(s, LIMIT_MEMORY, thread_bytes());
    obj_unref(&s->obj);
}

const char *fault_kind_name(unsigned kind)
{
    static const char *const names[] = {
        [FAULT_DATA] = "data abort", [FAULT_INSN] = "instruction abort",
        [FAULT_ALIGN] = "alignment fault", [FAULT_UNDEF] = "undefined instruction",
        [FAULT_FOREIGN_SYSCALL] = "foreign system call", [FAULT_OTHER] = "exception",
    };
    return kind < ARRAY_SIZE(names) ? names[kind] : "fault";
}

/* A fault: to the handler if there is one, else report it and kill the thread. */
void thread_fault(struct thread *t, const struct fault_info *fi)
{
    if (ipc_send_fault(t, fi))
        return;
    char buf[64];
    kprintf("fault: thread \"%s\": %s (%s) at 0x%lx, pc 0x%lx, esr 0x%lx\n",
            t->name, fault_kind_name(fi->kind),
            fi->detail ? fi->detail : arch_fault_detail(fi->esr, buf, sizeof(buf)), fi->addr, t->tf.pc, fi->esr);
    kprintf("fault: thread \"%s\" killed\n", t->name);
    thread_kill(t, -1);
}

#define MEM_WAIT_NS 10000000ull     /* how long a thread waits before it retries */

/*
 * Out of frames (not over its own limit: that is E_LIMIT, and a fault)
 * a thread with a fault handler hears of it there; one without waits
 * 10 ms and retries the access, so a process that did nothing wrong is
 * never killed because another one took the memory. It waits as in a
 * futex (its state says so) but in no bucket: only the timeout or a
 * kill ends the wait.
 */
bool thread_wait_for_memory(struct thread *t)
{
    if (t->fault_ep && !t->fault_ep->dead)
        return false;
    if (!t->mem_wait_noted)
        kprintf("memory: out of frames, thread \"%s\" waits for memory\n", t->name);
    t->mem_wait_noted = true;
    t->mem_wait = true;
    t->mem_wait_x0 = t->tf.x[0];
    t->state = T_FUTEX;
    list_init(&t->link);
    timeout_add(t, arch_counter() + timer_ns_to_ticks(MEM_WAIT_NS));
    return true;
}

void thread_memory_retry(struct thread *t)
{
    t->tf.x[0] = t->mem_wait_x0;        /* the wake wrote E_TIMEOUT there */
    t->mem_wait = false;                /* a new fault parks it again */
}

/* ---------------------------------------------------------------- system calls */

/* "<parent>.<n>" into out (truncated to size), without the printf machinery:
 * it runs on every thread creation. */
static void name_child(char *out, size_t size, const char *parent, unsigned n)
{
    char digits[10];
    unsigned nd = 0;
    do {
        digits[nd++] = (char)('0' + n % 10);
        n /= 10;
    } while (n && nd < sizeof(digits));
    size_t len = strnlen(parent, size - 1);
    if (len + 1 + nd > size - 1)
        len = size - 1 > nd + 1 ? size - 1 - nd - 1 : 0;
    memcpy(out, parent, len);
    out[len++] = '.';
    while (nd && len < size - 1)
        out[len++] = digits[--nd];
    out[len] = '\0';
}

/* The object behind handle h of the calling process, or NULL with *err. */
static void *lookup(uint32_t h, unsigned type, uint32_t rights, int64_t *err)
{
    struct handle_slot *sl;
    int e = handle_get(current_thread()->space, h, type, rights, &sl);
    *err = e;
    return e ? NULL : sl->obj;
}

#define THREAD_OF(o) list_entry((struct object *)(o), struct thread, obj)

int64_t sys_thread_exit(int64_t status)
{
    thread_kill(current_thread(), (int)status);
    return 0;
}

int64_t sys_yield(void)
{
    sched_yield();
    return 0;
}

int64_t sys_thread_create(uint32_t space_h, uint64_t utcb_va)
{
    int64_t err;
    struct space *s = lookup(space_h, OBJ_SPACE, R_MANAGE, &err);
    if (!s)
        return err;
    int e;
    struct thread *t = thread_create(s, utcb_va, &e);
    if (!t)
        return e;
    name_child(t->name, sizeof(t->name), current_thread()->name, s->nthreads);
    int64_t h = handle_alloc(current_thread()->space, &t->obj, R_ALL, 0);
    if (h < 0)
        thread_kill(t, -1);
    return h;
}

int64_t sys_thread_start(uint32_t h, uint64_t pc, uint64_t sp, uint64_t arg)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    return thread_start_checked(THREAD_OF(o), pc, sp, arg);
}

int thread_start_checked(struct thread *t, uint64_t pc, uint64_t sp, uint64_t arg)
{
    if (t->state != T_INACTIVE)
        return -E_STATE;
    if (pc >= USER_VA_LIMIT || sp >= USER_VA_LIMIT + 4096)
        return -E_INVAL;
    thread_start(t, pc, sp, arg);
    return 0;
}

int thread_suspend(struct thread *t)
{
    if (t->state == T_INACTIVE || t->state == T_DEAD)
        return -E_STATE;
    if (t->suspended || t->ksvc_suspend)
        return 0;
    if (t->ksvc_run) {
        t->ksvc_suspend = true;         /* a service is busy with its request: after it */
        return 0;
    }
    sched_dequeue(t);
    t->suspended = true;
    if (t->state == T_RUNNING && t != current_thread())
        irq_send_ipi(t->cpu, IRQ_SGI_WAKE);
    return 0;
}

int thread_resume(struct thread *t)
{
    if (t->ksvc_suspend) {
        t->ksvc_suspend = false;        /* never took effect */
        return 0;
    }
    if (!t->suspended)
        return -E_STATE;
    t->suspended = false;
    if (t->state == T_READY)
        sched_enqueue(t);
    return 0;
}

int64_t sys_thread_suspend(uint32_t h)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    return o ? thread_suspend(THREAD_OF(o)) : err;
}

int64_t sys_thread_resume(uint32_t h)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    return o ? thread_resume(THREAD_OF(o)) : err;
}

int64_t sys_thread_set_priority(uint32_t h, uint64_t prio)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    if (prio >= NPRIO)
        return -E_INVAL;
    struct thread *cur = current_thread();
    if (prio > cur->max_prio)
        return -E_PERM;
    struct thread *t = THREAD_OF(o);
    if (t != cur)
        t->max_prio = (uint8_t)MIN(cur->max_prio, prio);    /* given, not taken: its ceiling */
    unsigned inherited = t->prio > t->base_prio ? t->prio : 0;
    t->base_prio = (uint8_t)prio;
    thread_set_prio(t, MAX(prio, inherited));
    return 0;
}

void thread_make_foreign(struct thread *t)
{
    t->foreign_svc = true;
    kcall_forget(t);        /* its svc are Linux calls now, never light calls */
}

int64_t sys_thread_make_foreign(uint32_t h)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    thread_make_foreign(THREAD_OF(o));
    return 0;
}

int64_t sys_thread_set_affinity(uint32_t h, uint64_t cpu)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    if (cpu >= ncpus_present || !cpus[cpu].online)
        return -E_INVAL;
    return sched_set_cpus(THREAD_OF(o), 1ull << cpu);
}

int64_t sys_thread_set_cpus(uint32_t h, uint64_t mask)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    return o ? sched_set_cpus(THREAD_OF(o), mask) : err;
}

int64_t sys_thread_set_fault_handler(uint32_t h, uint32_t ep_h)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    struct handle_slot *sl = NULL;
    if (ep_h) {
        int e = handle_get(current_thread()->space, ep_h, OBJ_ENDPOINT, R_WRITE, &sl);
        if (e)
            return e;
    }
    return thread_set_fault_ep(THREAD_OF(o), sl ? (struct endpoint *)sl->obj : NULL, sl ? sl->badge : 0);
}

int thread_set_fault_ep(struct thread *t, struct endpoint *ep, uint64_t badge)
{
    if (t->state == T_DEAD)
        return -E_STATE;            /* its death already dropped its handler */
    if (t->fault_ep)
        obj_unref(&t->fault_ep->obj);
    t->fault_ep = ep;
    t->fault_badge = ep ? badge : 0;
    t->fault_ksvc = ep ? ep->ksvc : NULL;
    if (ep)
        obj_ref(&ep->obj);
    return 0;
}

int64_t sys_thread_read_regs(uint32_t h, vaddr_t buf)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_READ, &err);
    if (!o)
        return err;
    struct thread *t = THREAD_OF(o);
    if (t->state == T_RUNNING)
        return -E_STATE;
    _Static_assert(sizeof(struct petrel_regs) == sizeof(struct trapframe), "register layout");
    return copy_to_user(buf, &t->tf, sizeof(struct petrel_regs));
}

int thread_write_regs_checked(struct thread *t, const struct petrel_regs *r)
{
    if (t->state == T_DEAD || (t->state == T_RUNNING && t != current_thread()))
        return -E_STATE;
    if (r->pc >= USER_VA_LIMIT || r->sp >= USER_VA_LIMIT + 4096)
        return -E_INVAL;
    uint64_t pstate = (t->tf.pstate & ~PSTATE_NZCV) | (r->pstate & PSTATE_NZCV);
    memcpy(&t->tf, r, sizeof(*r));
    t->tf.pstate = pstate;              /* only the condition flags come from r */
    return 0;
}

int64_t sys_thread_write_regs(uint32_t h, vaddr_t buf)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    struct thread *t = THREAD_OF(o);
    if (t->state == T_RUNNING)
        return -E_STATE;
    struct petrel_regs r;
    if (copy_from_user(&r, buf, sizeof(r)))
        return -E_FAULT;
    return thread_write_regs_checked(t, &r);
}

int64_t sys_thread_set_tls(uint32_t h, uint64_t value)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    thread_set_tls(THREAD_OF(o), value);
    return 0;
}

void thread_set_tls(struct thread *t, uint64_t value)
{
    if (t == current_thread())
        write_sysreg(tpidr_el0, value);
    t->tls = value;
}

void thread_stats_get(struct thread *t, struct petrel_thread_stats *st)
{
    /* Its time includes the slice it is running now, on this core or
     * another (the kernel lock keeps cpu_ticks and run_start still), so
     * that a process's threads summed at any moment cover all of it. */
    uint64_t ticks = t->cpu_ticks;
    unsigned state = t->state;
    for (unsigned i = 0; i < ncpus_present; i++) {
        if (cpus[i].current != t)
            continue;
        if (state == T_RUNNING)
            ticks += arch_counter() - t->run_start;
        else if (state == T_DEAD)
            state = T_RUNNING;      /* killed, but its core has yet to stop it */
    }
    *st = (struct petrel_thread_stats){ ticks_to_ns(ticks), state, t->base_prio, t->cpu, t->prio };
}

int64_t sys_thread_stats(uint32_t h, vaddr_t buf)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_READ, &err);
    if (!o)
        return err;
    struct petrel_thread_stats st;
    thread_stats_get(THREAD_OF(o), &st);
    return copy_to_user(buf, &st, sizeof(st));
}

int64_t sys_thread_kill(uint32_t h)
{
    int64_t err;
    struct object *o = lookup(h, OBJ_THREAD, R_MANAGE, &err);
    if (!o)
        return err;
    thread_kill(THREAD_OF(o), -1);
    return 0;
}
