/*
 * The process environment (svc_proc.h) in user space: each call is the
 * system call of the same name on handles of the service's own table.
 * Handles are 32-bit values inside the 64-bit svc_handle.
 */
#include "petrel.h"
#include "svc_proc.h"
#include "user_env.h"

static svc_handle made(int64_t h, int *err)
{
    if (h < 0) {
        if (err)
            *err = (int)h;
        return 0;
    }
    return (svc_handle)h;
}

svc_handle svc_space_create(int *err)
{
    return made(sys_space_create(), err);
}

int svc_space_set_limit(svc_handle space, unsigned kind, uint64_t value)
{
    int64_t r = sys_space_set_limit((uint32_t)space, kind, value);     /* the usage, or an error */
    return r < 0 ? (int)r : 0;
}

int svc_space_kill(svc_handle space)
{
    return (int)sys_space_kill((uint32_t)space);
}

uint64_t svc_space_id(svc_handle space)
{
    int64_t id = sys_space_id((uint32_t)space);
    return id < 0 ? 0 : (uint64_t)id;
}

svc_handle svc_mem_create(uint64_t size, int *err)
{
    return made(sys_mem_create(size, MEM_PAGE_4K), err);
}

svc_handle svc_mem_bootfile(uint32_t index)
{
    return made(sys_mem_from_bootfile(root_handle(), index), NULL);
}

svc_handle svc_mem_clone(svc_handle mem, int *err)
{
    return made(sys_mem_clone((uint32_t)mem), err);
}

/* An object this service reads or writes again (svc_mem_read,
 * svc_mem_write: a file's object, read and written with each call on the
 * file) is mapped here whole and stays mapped, so that a copy costs no
 * system call; one used only once (a program's segment, its stack) is
 * mapped for that call only, which is cheaper than a kept mapping. The
 * VIEWS objects used last are kept, and the VIEWS last used once
 * remembered. Releasing a handle forgets both (user_proc_forget), so a
 * handle number used again never shows the object it named before. */
#define VIEWS 8
static struct view {
    uint32_t h;                 /* 0: free */
    uint8_t writable;
    uint64_t va, size, used;
} views[VIEWS];
static uint64_t view_clock;
static uint32_t once[VIEWS];    /* objects used once, without a view */
static unsigned once_next;

static void view_drop(struct view *v)
{
    sys_mem_unmap(self_space(), v->va);
    va_free(v->va, v->size);
    v->h = 0;
}

void user_proc_forget(uint32_t h)
{
    for (unsigned i = 0; i < VIEWS; i++) {
        if (views[i].h && views[i].h == h)
            view_drop(&views[i]);
        if (once[i] == h)
            once[i] = 0;
    }
}

/* Was h used once already (remembered now if not)? */
static int used_before(uint32_t h)
{
    for (unsigned i = 0; i < VIEWS; i++)
        if (once[i] && once[i] == h)
            return 1;
    once[once_next] = h;
    once_next = (once_next + 1) % VIEWS;
    return 0;
}

/* [offset, offset + len) of object mem in its kept mapping here, made now
 * on its second use (writable if the object allows); NULL on its first
 * use, or if it is past the object's end or cannot be mapped (the caller
 * then maps the pages for the call: copy_once). */
static uint8_t *view_of(svc_handle mem, uint64_t offset, uint64_t len, int write)
{
    uint32_t h = (uint32_t)mem;
    struct view *v = NULL, *oldest = &views[0];
    for (unsigned i = 0; i < VIEWS && !v; i++) {
        if (views[i].h && views[i].h == h)
            v = &views[i];
        else if (!views[i].h || (oldest->h && views[i].used < oldest->used))
            oldest = &views[i];
    }
    if (!v) {
        int64_t size = used_before(h) ? sys_mem_size(h) : 0;
        if (size <= 0)
            return NULL;
        uint64_t va = va_alloc((uint64_t)size, 4096);
        uint8_t writable = sys_mem_map(self_space(), h, va, 0, (uint64_t)size, R_READ | R_WRITE) == 0;
        if (!writable && sys_mem_map(self_space(), h, va, 0, (uint64_t)size, R_READ) != 0) {
            va_free(va, (uint64_t)size);
            return NULL;
        }
        if (oldest->h)
            view_drop(oldest);
        v = oldest;
        *v = (struct view){ h, writable, va, (uint64_t)size, 0 };
    }
    v->used = ++view_clock;
    if (offset > v->size || len > v->size - offset || (write && !v->writable))
        return NULL;
    return (uint8_t *)v->va + offset;
}

/* The pages of mem holding [offset, offset + len) mapped here for a
 * moment (unmap_once after): where offset is now, or 0 with *err. */
static uint8_t *map_once(svc_handle mem, uint64_t offset, uint64_t len, int write, int *err)
{
    uint64_t start = offset & ~4095ull, end = (offset + len + 4095) & ~4095ull;
    if (end <= start) {
        *err = SVC_E_INVAL;
        return 0;
    }
    uint64_t va = va_alloc(end - start, 4096);
    *err = (int)sys_mem_map(self_space(), (uint32_t)mem, va, start, end - start, write ? R_READ | R_WRITE : R_READ);
    if (*err) {
        va_free(va, end - start);
        return 0;
    }
    return (uint8_t *)va + (offset - start);
}

static void unmap_once(uint8_t *at, uint64_t offset, uint64_t len)
{
    uint64_t start = offset & ~4095ull, end = (offset + len + 4095) & ~4095ull;
    uint64_t va = (uint64_t)at - (offset - start);
    sys_mem_unmap(self_space(), va);
    va_free(va, end - start);
}

/* Copy into the pages of mem holding [offset, offset + len) (write) or
 * out of them, mapped for the copy; 0 or an error. */
static int copy_once(svc_handle mem, uint64_t offset, void *buf, uint64_t len, int write)
{
    int err;
    uint8_t *at = map_once(mem, offset, len, write, &err);
    if (!at)
        return err;
    if (write)
        memcpy(at, buf, len);
    else
        memcpy(buf, at, len);
    unmap_once(at, offset, len);
    return 0;
}

int svc_mem_write(svc_handle mem, uint64_t offset, const void *src, uint64_t len)
{
    if (!len)
        return 0;
    uint8_t *at = view_of(mem, offset, len, 1);
    if (!at)
        return copy_once(mem, offset, (void *)(uintptr_t)src, len, 1);
    memcpy(at, src, len);
    return 0;
}

static void cas_at(uint32_t *word, uint32_t expect, uint32_t desired, uint32_t *old)
{
    __atomic_compare_exchange_n(word, &expect, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = expect;
}

/* Through the object's view, or its page mapped here for a moment: the
 * same memory the processes map, so the atomic is atomic against them. */
int svc_mem_cas32(svc_handle mem, uint64_t offset, uint32_t expect, uint32_t desired, uint32_t *old)
{
    if (offset & 3)
        return SVC_E_INVAL;
    int err;
    uint8_t *at = view_of(mem, offset, 4, 1);
    if (at) {
        cas_at((uint32_t *)at, expect, desired, old);
        return 0;
    }
    if (!(at = map_once(mem, offset, 4, 1, &err)))
        return err;
    cas_at((uint32_t *)at, expect, desired, old);
    unmap_once(at, offset, 4);
    return 0;
}

/* Through the object's view when it has one (one copy, by the kernel,
 * between the caller and the view); else through a buffer here. */
static int mem_copy_client(struct svc_call *call, svc_handle mem, uint64_t offset, uint64_t client_addr,
                           uint64_t len, int to_client)
{
    uint8_t buf[512];
    if (!len)
        return 0;
    uint8_t *at = view_of(mem, offset, len, !to_client);
    if (at)
        return to_client ? svc_copy_out(call, client_addr, at, len) : svc_copy_in(call, at, client_addr, len);
    for (uint64_t done = 0; done < len; done += sizeof(buf)) {
        uint64_t k = MIN(len - done, sizeof(buf));
        int err = to_client ? svc_mem_read(mem, offset + done, buf, k) : svc_copy_in(call, buf, client_addr + done, k);
        if (!err)
            err = to_client ? svc_copy_out(call, client_addr + done, buf, k) : svc_mem_write(mem, offset + done, buf, k);
        if (err)
            return err;
    }
    return 0;
}

int svc_mem_copy_in(struct svc_call *call, svc_handle mem, uint64_t offset, uint64_t client_addr, uint64_t len)
{
    return mem_copy_client(call, mem, offset, client_addr, len, 0);
}

int svc_mem_copy_out(struct svc_call *call, uint64_t client_addr, svc_handle mem, uint64_t offset, uint64_t len)
{
    return mem_copy_client(call, mem, offset, client_addr, len, 1);
}

int svc_mem_read(svc_handle mem, uint64_t offset, void *dst, uint64_t len)
{
    if (!len)
        return 0;
    const uint8_t *at = view_of(mem, offset, len, 0);
    if (!at)
        return copy_once(mem, offset, dst, len, 0);
    memcpy(dst, at, len);
    return 0;
}

int svc_mem_map(svc_handle space, svc_handle mem, uint64_t va, uint64_t offset, uint64_t size, uint32_t rights)
{
    return (int)sys_mem_map((uint32_t)space, (uint32_t)mem, va, offset, size, rights);
}

int svc_mem_unmap(svc_handle space, uint64_t va, uint64_t size)
{
    return (int)sys_mem_unmap_range((uint32_t)space, va, size);
}

int svc_mem_protect(svc_handle space, uint64_t va, uint64_t size, uint32_t rights)
{
    return (int)sys_mem_protect((uint32_t)space, va, size, rights);
}

svc_handle svc_thread_create(svc_handle space, uint64_t utcb_va, int *err)
{
    return made(sys_thread_create((uint32_t)space, utcb_va), err);
}

/* Our endpoint is the one the supervisor granted as "service" (with the
 * right to send and to duplicate, so that it can be a fault handler). */
int svc_thread_fault_to_me(svc_handle thread, uint64_t badge)
{
    uint32_t ep = start_handle("service");
    int64_t h = ep ? sys_handle_dup(ep, R_WRITE, badge) : -E_BADHANDLE;
    if (h < 0)
        return (int)h;
    int64_t err = sys_thread_set_fault_handler((uint32_t)thread, (uint32_t)h);
    sys_handle_close((uint32_t)h);      /* the thread holds the endpoint now */
    return (int)err;
}

int svc_thread_copy(svc_handle t, svc_handle from)
{
    return (int)sys_thread_copy((uint32_t)t, (uint32_t)from);
}

int svc_thread_set_tls(svc_handle t, uint64_t value)
{
    return (int)sys_thread_set_tls((uint32_t)t, value);
}

int svc_thread_make_foreign(svc_handle t)
{
    return (int)sys_thread_make_foreign((uint32_t)t);
}

int svc_thread_start(svc_handle thread, uint64_t pc, uint64_t sp, uint64_t arg)
{
    return (int)sys_thread_start((uint32_t)thread, pc, sp, arg);
}

int svc_thread_read_regs(svc_handle t, struct petrel_regs *r)
{
    return (int)sys_thread_read_regs((uint32_t)t, r);
}

int svc_thread_write_regs(svc_handle t, const struct petrel_regs *r)
{
    return (int)sys_thread_write_regs((uint32_t)t, r);
}

int svc_thread_read_fp(svc_handle t, struct petrel_fpregs *fp)
{
    return (int)sys_thread_read_fp((uint32_t)t, fp);
}

int svc_thread_write_fp(svc_handle t, const struct petrel_fpregs *fp)
{
    return (int)sys_thread_write_fp((uint32_t)t, fp);
}

int svc_thread_stats(svc_handle t, struct petrel_thread_stats *st)
{
    return (int)sys_thread_stats((uint32_t)t, st);
}

/* On another core the thread stops at its next kernel entry (the kernel
 * sends that core an interrupt): wait for it a while, yielding. A core
 * that does not take the interrupt in that time (its host thread not
 * scheduled, under an emulator on a busy host) leaves the thread
 * suspended but running: THREAD_RUNNING, as in the kernel placement,
 * and the caller looks again later. */
int svc_thread_suspend(svc_handle t)
{
    int64_t err = sys_thread_suspend((uint32_t)t);
    if (err < 0)
        return (int)err;
    struct petrel_thread_stats st;
    for (int tries = 0; tries < 100000; tries++) {
        err = sys_thread_stats((uint32_t)t, &st);
        if (err < 0)
            return (int)err;
        if (st.state != THREAD_RUNNING)
            return (int)st.state;
        sys_yield();
    }
    return THREAD_RUNNING;
}

int svc_thread_set_cpus(svc_handle t, uint64_t mask)
{
    return (int)sys_thread_set_cpus((uint32_t)t, mask);
}

uint64_t svc_cpus_online(void)
{
    return (uint64_t)sys_cpus_online();
}

int svc_thread_resume(svc_handle t)
{
    return (int)sys_thread_resume((uint32_t)t);
}

int svc_thread_kill(svc_handle t)
{
    return (int)sys_thread_kill((uint32_t)t);
}

/*
 * The timer: a thread of ours sleeps on a futex until the deadline (or a
 * change of it), then signals the server loop's notification; the loop
 * runs the handler between requests. timer_seq changes with every
 * deadline set, so a deadline fires once. timer_armed is the deadline the
 * thread sleeps toward (~0: none; 0: not asleep), so that a deadline set
 * no earlier than that one costs no wake-up: the thread wakes at its own,
 * sees the new one and sleeps on (every timed wait of a busy personality
 * sets the deadline again, mostly to a later one). The thread publishes
 * timer_armed before its wait compares timer_seq, and svc_timer_set
 * changes timer_seq before it reads timer_armed: one of the two sees the
 * other's change.
 */
static uint32_t timer_seq;
static uint64_t timer_deadline;
static uint64_t timer_armed;
static uint32_t timer_note;

static void timer_wait(uint32_t seq, uint64_t until, uint64_t now)
{
    __atomic_store_n(&timer_armed, until ? until : ~0ull, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    sys_futex_wait((uint64_t)&timer_seq, seq, until ? until - now : 0);
    __atomic_store_n(&timer_armed, 0, __ATOMIC_RELAXED);
}

static void timer_thread(void *arg)
{
    uint32_t fired = 0;
    bool have_fired = false;
    for (;;) {
        uint32_t seq = __atomic_load_n(&timer_seq, __ATOMIC_ACQUIRE);
        uint64_t d = __atomic_load_n(&timer_deadline, __ATOMIC_RELAXED);
        uint64_t now = svc_clock_ns();
        if (!d || (have_fired && fired == seq)) {
            timer_wait(seq, 0, now);
        } else if (now >= d) {
            sys_notify_signal(timer_note, USER_ENV_EVENT);
            fired = seq;
            have_fired = true;
        } else {
            timer_wait(seq, d, now);
        }
    }
}

int svc_timer_attach(void (*handler)(void))
{
    if (timer_note)
        return SVC_E_BUSY;
    struct petrel_thread_stats st;
    if (sys_thread_stats(self_thread(), &st) < 0)
        return SVC_E_STATE;
    uint32_t n = user_env_event(handler);
    if (!n)
        return SVC_E_NOMEM;
    timer_note = n;
    int64_t t = thread_spawn(timer_thread, NULL, st.prio, -1);   /* as urgent as the server thread */
    if (t < 0) {
        timer_note = 0;
        return (int)t;
    }
    return 0;
}

void svc_timer_set(uint64_t deadline_ns)
{
    __atomic_store_n(&timer_deadline, deadline_ns, __ATOMIC_RELAXED);
    __atomic_add_fetch(&timer_seq, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint64_t armed = __atomic_load_n(&timer_armed, __ATOMIC_SEQ_CST);
    if (deadline_ns && (!armed || deadline_ns < armed))
        sys_futex_wake((uint64_t)&timer_seq, 1);    /* (else it wakes at its own deadline, or at none) */
}

void svc_console_write(const void *buf, uint64_t len)
{
    sys_debug_write(buf, len);
}

uint64_t svc_clock_ns(void)
{
    return clock_ns();                          /* (the counter, read here: no kernel entry) */
}
