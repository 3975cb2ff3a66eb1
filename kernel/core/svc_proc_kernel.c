/*
 * The process environment (services/include/svc_proc.h) inside the
 * kernel: what a kernel-placed service that owns processes (the Linux
 * personality) asks of the kernel, done on the kernel's objects directly.
 * User space does the same through system calls (services/env/user_proc.c);
 * each function here runs the checks of the system call of the same name.
 *
 * Objects are khandles (ksvc.h): a reference and the rights held. What
 * the service makes is charged to its account, the space the system's
 * root task made with the service's limits and gave service_bind; the
 * processes it makes are children of that space. So a kernel-placed
 * personality is bounded exactly as a user-placed one, whose processes
 * are children of its own process: the description's `memory` and
 * `spaces` of the service hold for all of its Linux processes together.
 * A service without an account (one bound without) cannot make
 * processes or memory: E_PERM.
 *
 * Each call takes the kernel lock for itself (env_lock), as every
 * environment call of a kernel-placed service does.
 */
#include "ksvc.h"
#include "memobj.h"
#include "bootimage.h"
#include "timer.h"
#include "cpu.h"
#include "irq.h"
#include "kmalloc.h"
#include "kernel.h"
#include "svc_proc.h"

/* The account of the service whose code runs here. */
static struct space *account(void)
{
    struct ksvc_run *run = ksvc_env_run();
    return run ? run->account : NULL;
}

/* A khandle for o with `rights`, taking over the caller's reference; 0
 * (the reference dropped) if none can be made. */
static svc_handle hold(struct object *o, uint32_t rights, int *err)
{
    struct khandle *k = kmalloc(sizeof(*k));
    if (!k) {
        obj_unref(o);
        if (err)
            *err = SVC_E_NOMEM;
        return 0;
    }
    k->obj = o;
    k->rights = rights;
    return (svc_handle)(uintptr_t)k;
}

/* The object of khandle h if it is of `type` and held with `rights`; NULL with *err. */
static struct object *held(svc_handle h, unsigned type, uint32_t rights, int *err)
{
    const struct khandle *k = khandle_of(h, false);
    *err = 0;
    if (!k || k->obj->type != type)
        *err = -E_BADHANDLE;
    else if ((k->rights & rights) != rights)
        *err = -E_PERM;
    return *err ? NULL : k->obj;
}

static int failed(int *err, int e)
{
    if (err)
        *err = e;
    return 0;
}

/* ---------------------------------------------------------------- spaces */

svc_handle svc_space_create(int *err)
{
    bool l = env_lock();
    svc_handle h = 0;
    struct space *acct = account();
    int e = -E_PERM;
    struct space *s = acct ? space_create(acct, &e) : NULL;
    if (s)
        h = hold(&s->obj, R_ALL, err);
    else
        failed(err, e);
    env_unlock(l);
    return h;
}

int svc_space_set_limit(svc_handle space, unsigned kind, uint64_t value)
{
    bool l = env_lock();
    int err;
    struct object *o = held(space, OBJ_SPACE, R_MANAGE, &err);
    int64_t r = o ? space_set_limit(list_entry(o, struct space, obj), account(), kind, value) : err;
    env_unlock(l);
    return r < 0 ? (int)r : 0;
}

int svc_space_kill(svc_handle space)
{
    bool l = env_lock();
    int err;
    struct object *o = held(space, OBJ_SPACE, R_MANAGE, &err);
    if (o)
        space_kill(list_entry(o, struct space, obj));
    env_unlock(l);
    return err;
}

uint64_t svc_space_id(svc_handle space)
{
    int err;
    bool l = env_lock();
    struct object *o = held(space, OBJ_SPACE, 0, &err);
    uint64_t id = o ? list_entry(o, struct space, obj)->id : 0;
    env_unlock(l);
    return id;
}

/* ---------------------------------------------------------------- memory */

svc_handle svc_mem_create(uint64_t size, int *err)
{
    bool l = env_lock();
    svc_handle h = 0;
    struct space *acct = account();
    int e = -E_PERM;
    struct memobj *m = acct ? memobj_create_for(acct, size, 0, false, &e) : NULL;
    if (m)
        h = hold(&m->obj, MEMOBJ_ANON_RIGHTS, err);
    else
        failed(err, e);
    env_unlock(l);
    return h;
}

svc_handle svc_mem_bootfile(uint32_t index)
{
    bool l = env_lock();
    svc_handle h = 0;
    struct bootimage_file f;
    struct space *acct = account();
    int e;
    if (acct && bootimage_get(index, &f) == 0 && f.size) {
        struct memobj *m = memobj_create_file(acct, f.pa, f.size, &e);
        if (m)
            h = hold(&m->obj, MEMOBJ_FILE_RIGHTS, NULL);
    }
    env_unlock(l);
    return h;
}

svc_handle svc_mem_clone(svc_handle mem, int *err)
{
    bool l = env_lock();
    svc_handle h = 0;
    int e;
    struct object *o = held(mem, OBJ_MEMORY, R_READ, &e);
    struct space *acct = account();
    if (o && !acct)
        e = -E_PERM;
    struct memobj *c = o && acct ? memobj_clone(acct, list_entry(o, struct memobj, obj), &e) : NULL;
    if (c)
        h = hold(&c->obj, MEMOBJ_ANON_RIGHTS, err);
    else
        failed(err, e);
    env_unlock(l);
    return h;
}

int svc_mem_write(svc_handle mem, uint64_t offset, const void *src, uint64_t len)
{
    bool l = env_lock();
    int err;
    struct object *o = held(mem, OBJ_MEMORY, R_WRITE, &err);
    if (o)
        err = memobj_write(list_entry(o, struct memobj, obj), offset, src, len);
    env_unlock(l);
    return err;
}

int svc_mem_cas32(svc_handle mem, uint64_t offset, uint32_t expect, uint32_t desired, uint32_t *old)
{
    bool l = env_lock();
    int err;
    struct object *o = held(mem, OBJ_MEMORY, R_WRITE, &err);
    if (o)
        err = memobj_cas32(list_entry(o, struct memobj, obj), offset, expect, desired, old);
    env_unlock(l);
    return err;
}

int svc_mem_read(svc_handle mem, uint64_t offset, void *dst, uint64_t len)
{
    bool l = env_lock();
    int err;
    struct object *o = held(mem, OBJ_MEMORY, R_READ, &err);
    if (o)
        err = memobj_read(list_entry(o, struct memobj, obj), offset, dst, len);
    env_unlock(l);
    return err;
}

/* Between the caller's buffer and a memory object with no copy in
 * between: a page of the caller's at a time under the lock (at most a page
 * under it, as svc_mem_write), straight from the caller's page into the
 * object's (as svc_copy_in reaches the caller: svc_kernel.c). */
static int mem_copy_client(svc_handle mem, uint64_t offset, uint64_t client_addr, uint64_t len, bool to_client)
{
    if (client_addr + len < client_addr)
        return SVC_E_FAULT;
    while (len) {
        uint64_t n = MIN(len, 4096 - (client_addr & 4095));
        bool l = env_lock();
        int err;
        struct object *o = held(mem, OBJ_MEMORY, to_client ? R_READ : R_WRITE, &err);
        struct memobj *m = o ? list_entry(o, struct memobj, obj) : NULL;
        uint8_t *theirs = m && buffer_owner() ? user_ptr(client_addr, to_client) : NULL;
        if (m && !theirs)
            err = SVC_E_FAULT;
        else if (m)
            err = to_client ? memobj_read(m, offset, theirs, n) : memobj_write(m, offset, theirs, n);
        env_unlock(l);
        if (err)
            return err;
        client_addr += n, offset += n, len -= n;
    }
    return 0;
}

int svc_mem_copy_in(struct svc_call *call, svc_handle mem, uint64_t offset, uint64_t client_addr, uint64_t len)
{
    return mem_copy_client(mem, offset, client_addr, len, false);
}

int svc_mem_copy_out(struct svc_call *call, uint64_t client_addr, svc_handle mem, uint64_t offset, uint64_t len)
{
    return mem_copy_client(mem, offset, client_addr, len, true);
}

int svc_mem_map(svc_handle space, svc_handle mem, uint64_t va, uint64_t offset, uint64_t size, uint32_t rights)
{
    bool l = env_lock();
    int err;
    struct object *so = held(space, OBJ_SPACE, R_MANAGE, &err);
    struct object *mo = so ? held(mem, OBJ_MEMORY, 0, &err) : NULL;
    if (mo)
        err = memobj_map_checked(list_entry(so, struct space, obj), list_entry(mo, struct memobj, obj),
                                 khandle_of(mem, false)->rights, va, offset, size, rights);
    env_unlock(l);
    return err;
}

int svc_mem_unmap(svc_handle space, uint64_t va, uint64_t size)
{
    bool l = env_lock();
    int err;
    struct object *o = held(space, OBJ_SPACE, R_MANAGE, &err);
    if (o)
        err = memobj_unmap_range(list_entry(o, struct space, obj), va, size);
    env_unlock(l);
    return err;
}

int svc_mem_protect(svc_handle space, uint64_t va, uint64_t size, uint32_t rights)
{
    bool l = env_lock();
    int err;
    struct object *o = held(space, OBJ_SPACE, R_MANAGE, &err);
    if (o)
        err = memobj_protect_range(list_entry(o, struct space, obj), va, size, rights);
    env_unlock(l);
    return err;
}

/* ---------------------------------------------------------------- threads */

svc_handle svc_thread_create(svc_handle space, uint64_t utcb_va, int *err)
{
    bool l = env_lock();
    svc_handle h = 0;
    int e;
    struct object *o = held(space, OBJ_SPACE, R_MANAGE, &e);
    struct thread *t = o ? thread_create(list_entry(o, struct space, obj), utcb_va, &e) : NULL;
    if (t) {
        obj_ref(&t->obj);               /* ours; the "alive" reference goes when it dies */
        h = hold(&t->obj, R_ALL, &e);
        if (!h)
            thread_kill(t, -1);
    }
    if (!h)
        failed(err, e);
    env_unlock(l);
    return h;
}

static struct thread *thread_held(svc_handle h, uint32_t rights, int *err)
{
    struct object *o = held(h, OBJ_THREAD, rights, err);
    return o ? list_entry(o, struct thread, obj) : NULL;
}

int svc_thread_fault_to_me(svc_handle thread, uint64_t badge)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    struct ksvc_run *run = ksvc_env_run();
    if (t)
        err = run && run->ep ? thread_set_fault_ep(t, run->ep, badge) : -E_STATE;
    env_unlock(l);
    return err;
}

int svc_thread_copy(svc_handle dst, svc_handle from)
{
    bool l = env_lock();
    int err;
    struct thread *d = thread_held(dst, R_MANAGE, &err);
    struct thread *s = d ? thread_held(from, R_READ, &err) : NULL;
    if (s)
        err = thread_copy_state(d, s);
    env_unlock(l);
    return err;
}

int svc_thread_set_tls(svc_handle thread, uint64_t value)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        thread_set_tls(t, value);
    env_unlock(l);
    return err;
}

int svc_thread_make_foreign(svc_handle thread)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        thread_make_foreign(t);
    env_unlock(l);
    return err;
}

int svc_thread_start(svc_handle thread, uint64_t pc, uint64_t sp, uint64_t arg)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        err = thread_start_checked(t, pc, sp, arg);
    env_unlock(l);
    return err;
}

/* The caller of the request runs this code in its own kernel entry: its
 * user registers are in its trapframe and its FP/SIMD registers are saved
 * first (arch_fp_get), so it counts as stopped here. */
static bool stopped(struct thread *t)
{
    return t->state != T_DEAD && (t->state != T_RUNNING || t == current_thread());
}

int svc_thread_read_regs(svc_handle thread, struct petrel_regs *r)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_READ, &err);
    if (t && !stopped(t))
        err = -E_STATE;
    else if (t)
        memcpy(r, &t->tf, sizeof(*r));
    env_unlock(l);
    return err;
}

int svc_thread_write_regs(svc_handle thread, const struct petrel_regs *r)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        err = thread_write_regs_checked(t, r);
    env_unlock(l);
    return err;
}

int svc_thread_read_fp(svc_handle thread, struct petrel_fpregs *fp)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_READ, &err);
    if (t && !stopped(t))
        err = -E_STATE;
    else if (t)
        arch_fp_get(t, fp);
    env_unlock(l);
    return err;
}

int svc_thread_write_fp(svc_handle thread, const struct petrel_fpregs *fp)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t && !stopped(t))
        err = -E_STATE;
    else if (t)
        err = arch_fp_set(t, fp);
    env_unlock(l);
    return err;
}

int svc_thread_stats(svc_handle thread, struct petrel_thread_stats *st)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_READ, &err);
    if (t)
        thread_stats_get(t, st);
    env_unlock(l);
    return err;
}

/* A thread running on another core stops at its next kernel entry, which
 * this code, holding the kernel, cannot wait for: it says THREAD_RUNNING
 * and the caller tries again later. The caller of the request running
 * here is in a call (THREAD_REPLY); the current thread when no request of
 * its runs here (the service's timer or interrupt came while it ran user
 * code on this core) was running user code, all of it in its frame now:
 * it stops when the interrupt returns (THREAD_READY). */
int svc_thread_suspend(svc_handle thread)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        err = thread_suspend(t);
    struct ksvc_run *run = ksvc_env_run();
    bool caller = t && run && run->holder == t;
    int state = t && !err ? (caller ? THREAD_REPLY : t == current_thread() ? THREAD_READY : (int)t->state) : err;
    env_unlock(l);
    return state;
}

int svc_thread_kill(svc_handle thread)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t) {
        thread_kill(t, -1);
        err = 0;
    }
    env_unlock(l);
    return err;
}

int svc_thread_set_cpus(svc_handle thread, uint64_t mask)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        err = sched_set_cpus(t, mask);
    env_unlock(l);
    return err;
}

uint64_t svc_cpus_online(void)
{
    return smp_online_mask();
}

int svc_thread_resume(svc_handle thread)
{
    bool l = env_lock();
    int err;
    struct thread *t = thread_held(thread, R_MANAGE, &err);
    if (t)
        err = thread_resume(t);
    env_unlock(l);
    return err;
}

/* ---------------------------------------------------------------- the timer */

/* The handler runs from the tick of the core that attached it (at its
 * deadline: the core's timer interrupt is brought forward), with the
 * kernel lock held, as an interrupt handler of a kernel-placed service
 * does; while a request of the service is in progress it waits for its
 * end. A deadline set from another core that comes before that core's
 * next tick reaches it with a wake-up interrupt, which re-arms its timer. */
int svc_timer_attach(void (*handler)(void))
{
    bool l = env_lock();
    struct ksvc_run *run = ksvc_env_run();
    int err = run ? 0 : SVC_E_PERM;
    if (run) {
        run->timer = handler;
        run->timer_cpu = this_cpu()->index;
        run->timer_at = 0;
    }
    env_unlock(l);
    return err;
}

void svc_timer_set(uint64_t deadline_ns)
{
    bool l = env_lock();
    struct ksvc_run *run = ksvc_env_run();
    if (run && run->timer) {
        run->timer_at = deadline_ns ? MAX(timer_ns_to_ticks(deadline_ns), 1ull) : 0;
        if (run->timer_cpu == this_cpu()->index)
            timer_rearm();
        else if (run->timer_at && !timer_covers(run->timer_cpu, run->timer_at))
            irq_send_ipi(run->timer_cpu, IRQ_SGI_WAKE);
    }
    env_unlock(l);
}

/* ---------------------------------------------------------------- the console and the clock */

void svc_console_write(const void *buf, uint64_t len)
{
    bool l = env_lock();
    console_write(buf, len);
    env_unlock(l);
}

uint64_t svc_clock_ns(void)
{
    return timer_ns();
}
