/* The monitor from user space: trace_open, trace_ctl, trace_map and
 * trace_emit with good and bad arguments; the kernel's tracepoints
 * recorded with the values they should carry; a flood that overruns the
 * rings, with the reader's count of what it missed exact; a reader that
 * never reads; switched off, nothing recorded. */
#include "coretest.h"
#include "trace_abi.h"
#include "trace_points.h"

static const struct trace_area *area;
static uint32_t mon;

/* Every core's events written so far. */
static uint64_t written(void)
{
    uint64_t n = 0;
    for (unsigned c = 0; c < area->ncpus; c++)
        n += __atomic_load_n(&area->core[c].head, __ATOMIC_ACQUIRE);
    return n;
}

static void set_only(unsigned id)
{
    for (unsigned w = 0; w < TRACE_MAX_POINTS / 64; w++)
        sys_trace_ctl(mon, w, w == id / 64 ? 1ull << (id % 64) : 0, ~0ull);
}

static void all_off(void)
{
    for (unsigned w = 0; w < TRACE_MAX_POINTS / 64; w++)
        sys_trace_ctl(mon, w, 0, ~0ull);
}

static void calls(void)
{
    uint32_t n = (uint32_t)sys_notify_create();
    set_only(TP_SYSCALL_ENTER);
    sys_trace_ctl(mon, TP_SYSCALL_EXIT / 64, 1ull << (TP_SYSCALL_EXIT % 64), 0);
    struct trace_reader r;
    trace_reader_init(&r, area, 1);
    sys_notify_signal(n, 0x5);
    sys_notify_signal(~0u, 1);                  /* a bad handle: its error is the recorded result */
    all_off();
    struct trace_record e;
    int seen = 0;
    while (trace_reader_next(&r, &e)) {
        if (e.pid != my_pid || e.arg[0] != SYS_NOTIFY_SIGNAL)
            continue;
        if (seen == 0 && e.id == TP_SYSCALL_ENTER && e.arg[1] == n && e.arg[2] == 0x5)
            seen = 1;
        else if (seen == 1 && e.id == TP_SYSCALL_EXIT && e.arg[1] == 0)
            seen = 2;
        else if (seen == 2 && e.id == TP_SYSCALL_ENTER && e.arg[1] == ~0u)
            seen = 3;
        else if (seen == 3 && e.id == TP_SYSCALL_EXIT && (int64_t)e.arg[1] == -E_BADHANDLE)
            seen = 4;
    }
    tap_ok(seen == 4 && r.lost == 0, "trace: a system call's entry and exit, in order, with its arguments, "
           "result and process (%d of 4 seen)", seen);
    uint64_t before = written();
    sys_notify_signal(n, 1);
    tap_ok(written() == before, "trace: switched off, a tracepoint records nothing");
    sys_handle_close(n);
}

/* A page fault, a switch between two threads, a timer interrupt. */
static volatile int ponged;

static void ponger(void *arg)
{
    (void)arg;
    ponged = 1;
}

static void kernel_points(void)
{
    int64_t m = sys_mem_create(0x4000, 0);
    uint64_t va = va_alloc(0x4000, 0x1000);
    sys_mem_map(self_space(), (uint32_t)m, va, 0, 0x4000, R_READ | R_WRITE);
    set_only(TP_PAGE_FAULT);
    struct trace_reader r;
    trace_reader_init(&r, area, 1);
    *(volatile uint64_t *)(va + 0x2008) = 1;    /* a lazily committed page: the kernel fills it */
    all_off();
    struct trace_record e;
    bool fault = false;
    while (trace_reader_next(&r, &e))
        fault |= e.id == TP_PAGE_FAULT && e.pid == my_pid && e.arg[0] == va + 0x2008 && e.arg[1] == 1 && e.arg[2] == 0;
    tap_ok(fault, "trace: a page fault with its address, a write, no fetch");
    sys_mem_unmap(self_space(), va);
    sys_handle_close((uint32_t)m);

    set_only(TP_SCHED_SWITCH);
    sys_trace_ctl(mon, TP_IRQ / 64, 1ull << (TP_IRQ % 64), 0);
    trace_reader_init(&r, area, 1);
    ponged = 0;
    thread_spawn(ponger, NULL, 200, 0);         /* above us, on our core: it runs at once */
    sleep_ms(30);                               /* the timer's interrupt ends the sleep */
    all_off();
    bool to_other = false, back = false, timer = false;
    while (trace_reader_next(&r, &e)) {
        if (e.id == TP_SCHED_SWITCH && e.arg[1] == my_pid && e.arg[3] == my_pid && e.arg[0] != e.arg[2])
            to_other = true;
        if (e.id == TP_SCHED_SWITCH && e.arg[3] == my_pid && to_other)
            back = true;
        timer |= e.id == TP_IRQ && e.arg[0] == 27;
    }
    tap_ok(ponged && to_other && back, "trace: the switches to a thread of ours and back, with threads and processes");
    tap_ok(timer, "trace: the timer's interrupt (27)");
}

/* A call and its answer outside the fastpath: a message longer than the
 * registers, to a thread of ours. */
static void ipc_points(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    thread_spawn(echo_thread, (void *)(uintptr_t)ep, 100, -1);
    set_only(TP_IPC_CALL);
    sys_trace_ctl(mon, TP_IPC_REPLY / 64, 1ull << (TP_IPC_REPLY % 64), 0);
    struct trace_reader r;
    trace_reader_init(&r, area, 1);
    bool echoed = echo_roundtrip(ep, 20, 99);
    all_off();
    struct trace_record e;
    bool call = false, reply = false;
    while (trace_reader_next(&r, &e)) {
        call |= e.id == TP_IPC_CALL && e.pid == my_pid && MSG_LABEL(e.arg[0]) == LABEL_ECHO &&
                MSG_LEN(e.arg[0]) == 20 && e.arg[2] == 1 && (e.arg[3] ? e.arg[1] == 0 : e.arg[1] == my_pid);
        reply |= call && e.id == TP_IPC_REPLY && MSG_LABEL(e.arg[0]) == LABEL_ECHO + 1 && e.arg[1] == my_pid;
    }
    tap_ok(echoed && call && reply, "trace: an IPC call of 20 words and its answer, with message words and processes");
    struct petrel_msg m = { MSG_INFO(LABEL_QUIT, 0, 0), { 0 }, 0, 0 };
    sys_ipc_call(ep, &m);
    sys_handle_close(ep);
}

/* More events than the rings hold: the traced path goes on, the newest
 * overwrite the oldest, and the reader's count of what it missed is exact. */
static void flood(void)
{
    uint32_t n = (uint32_t)sys_notify_create();
    struct trace_reader r;
    trace_reader_init(&r, area, 1);
    uint64_t start = written();
    set_only(TP_SYSCALL_ENTER);
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < 3 * area->slots; i++)
        sys_notify_signal(n, 1);
    uint64_t flood_ns = now_ns() - t0;
    all_off();
    uint64_t total = written() - start, got = 0;
    struct trace_record e;
    bool ordered = true;
    uint64_t last = 0;
    while (trace_reader_next(&r, &e)) {
        got++;
        ordered &= e.time >= last || area->ncpus > 1;
        last = e.time;
    }
    tap_ok(total >= 3 * area->slots && got + r.lost == total && r.lost > 0 &&
           got <= area->ncpus * area->slots && ordered,
           "trace: %lu events into rings of %u: %lu read, %lu missed, exactly the rest (%lu ms)", (unsigned long)total,
           area->slots, (unsigned long)got, (unsigned long)r.lost, (unsigned long)(flood_ns / 1000000));
    sys_handle_close(n);
}

static void emit(void)
{
    uint64_t point = (uint64_t)TP_TCP_CWND << 32 | mon;
    all_off();
    tap_ok(sys_trace_emit(point, 1, 2, 3, 4, 5) == 0, "trace_emit: a service's tracepoint switched off records nothing");
    set_only(TP_TCP_CWND);
    struct trace_reader r;
    trace_reader_init(&r, area, 1);
    int64_t rec = sys_trace_emit(point, 7, 1, 14480, 0x7fffffff, 1448);
    all_off();
    struct trace_record e;
    bool seen = false;
    while (trace_reader_next(&r, &e))
        seen |= e.id == TP_TCP_CWND && e.pid == my_pid && e.arg[0] == 7 && e.arg[2] == 14480 && e.arg[4] == 1448;
    tap_ok(rec == 1 && seen, "trace_emit: recorded with its fields and the caller's process");
    tap_ok(sys_trace_emit((uint64_t)TP_SYSCALL_ENTER << 32 | mon, 0, 0, 0, 0, 0) == -E_INVAL &&
           sys_trace_emit((uint64_t)300 << 32 | mon, 0, 0, 0, 0, 0) == -E_INVAL &&
           sys_trace_emit((uint64_t)TP_TCP_CWND << 32 | self_space(), 0, 0, 0, 0, 0) == -E_BADHANDLE,
           "trace_emit: a kernel's tracepoint, no tracepoint, or no monitor handle is refused");
    int64_t ro = sys_handle_dup(mon, R_READ, 0);
    int64_t view = ro > 0 ? sys_trace_map((uint32_t)ro) : ro;
    tap_ok(ro > 0 && sys_trace_emit((uint64_t)TP_TCP_CWND << 32 | (uint32_t)ro, 0, 0, 0, 0, 0) == -E_PERM &&
           sys_trace_ctl((uint32_t)ro, 0, 2, 0) == -E_PERM && view > 0,
           "trace: a handle without R_WRITE or R_MANAGE may read, not record or switch");
    sys_handle_close((uint32_t)view);
    sys_handle_close((uint32_t)ro);
    int64_t wo = sys_handle_dup(mon, R_WRITE, 0);
    int64_t hdr = wo > 0 ? sys_trace_map((uint32_t)wo) : wo;
    int64_t none = sys_handle_dup(mon, R_DUP, 0);
    tap_ok(hdr > 0 && sys_mem_size((uint32_t)hdr) == TRACE_HEADER && none > 0 && sys_trace_map((uint32_t)none) == -E_PERM,
           "trace_map: a handle that only records gets the header page alone (not the events); none, nothing");
    sys_handle_close((uint32_t)hdr);
    sys_handle_close((uint32_t)wo);
    sys_handle_close((uint32_t)none);
}

/* trace_emit_many: a user-placed service's events handed over together. */
static void emit_many(void)
{
    static struct trace_event ev[TRACE_EMIT_MAX + 1];
    uint64_t now;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(now));
    for (unsigned i = 0; i < 4; i++)
        ev[i] = (struct trace_event){ now - 1000 + i, TP_TCP_CWND, 0, { 100 + i, 1, 2, 3, 4 } };
    ev[1].id = TP_TCP_STATE;                    /* (switched off below: skipped) */
    ev[2].time = now + (1ull << 40);            /* later than the call: stamped with the call's time */
    ev[3].time = 0;                             /* none: the call's time */
    set_only(TP_TCP_CWND);
    struct trace_reader r;
    trace_reader_init(&r, area, 1);
    int64_t rec = sys_trace_emit_many(mon, ev, 4);
    uint64_t after;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(after));
    all_off();
    struct trace_record e[4];
    unsigned n = 0;
    while (n < 4 && trace_reader_next(&r, &e[n]))
        n += e[n].id == TP_TCP_CWND && e[n].pid == my_pid;
    tap_ok(rec == 3 && n == 3 && e[0].arg[0] == 100 && e[1].arg[0] == 102 && e[2].arg[0] == 103 &&
           e[0].arg[4] == 4 && e[0].time == now - 1000 && e[1].time >= now && e[1].time <= after &&
           e[2].time >= now && e[2].time <= after,
           "trace_emit_many: the events switched on recorded in order, with their fields, their own times "
           "(a later one or none: the call's) and the caller's process");
    set_only(TP_TCP_CWND);
    trace_reader_init(&r, area, 1);
    ev[1].id = TP_SYSCALL_ENTER;                /* a kernel's tracepoint: refused, the one before it kept */
    int64_t bad_id = sys_trace_emit_many(mon, ev, 3);
    n = 0;
    while (trace_reader_next(&r, &e[0]))
        n += e[0].id == TP_TCP_CWND && e[0].pid == my_pid;
    all_off();
    tap_ok(bad_id == -E_INVAL && n == 1, "trace_emit_many: an event of no service tracepoint refused, those before it recorded");
    ev[1].id = TP_TCP_CWND;
    int64_t ro = sys_handle_dup(mon, R_READ, 0);
    tap_ok(sys_trace_emit_many(mon, ev, 0) == -E_INVAL && sys_trace_emit_many(mon, ev, TRACE_EMIT_MAX + 1) == -E_INVAL &&
           sys_trace_emit_many(mon, NULL, 1) == -E_FAULT &&
           sys_trace_emit_many(mon, (const void *)0xffff000000001000ull, 2) == -E_FAULT &&
           sys_trace_emit_many(self_space(), ev, 1) == -E_BADHANDLE &&
           ro > 0 && sys_trace_emit_many((uint32_t)ro, ev, 1) == -E_PERM,
           "trace_emit_many: no events, too many, an unreadable or kernel address, no monitor handle or one "
           "without R_WRITE refused");
    sys_handle_close((uint32_t)ro);
}

void test_trace(void)
{
    tap_ok(sys_trace_open(self_space()) == -E_BADHANDLE && sys_trace_open(~0u) == -E_BADHANDLE,
           "trace_open: only the root handle opens the monitor");
    int64_t h = sys_trace_open(root_handle());
    int64_t m = h > 0 ? sys_trace_map((uint32_t)h) : h;
    int64_t size = m > 0 ? sys_mem_size((uint32_t)m) : m;
    uint64_t va = size > 0 ? va_alloc((uint64_t)size, 4096) : 0;
    tap_ok(va && sys_mem_map(self_space(), (uint32_t)m, va, 0, (uint64_t)size, R_READ | R_WRITE) == -E_PERM &&
           sys_mem_map(self_space(), (uint32_t)m, va, 0, (uint64_t)size, R_READ) == 0,
           "trace_map: the rings map read-only, never writable");
    if (!va)
        return;
    mon = (uint32_t)h;
    area = (const struct trace_area *)va;
    struct trace_reader r;
    tap_ok(trace_reader_init(&r, area, 0) == 0 && area->ncpus == (ncpus < TRACE_MAX_CPUS ? ncpus : TRACE_MAX_CPUS) &&
           area->freq > 0 && (uint64_t)size >= TRACE_HEADER + (uint64_t)area->ncpus * area->slots * 64,
           "trace_map: a header the reader takes, a ring of %u events for each of %u cores", area->slots, area->ncpus);
    tap_ok(sys_trace_ctl(mon, 4, 1, 0) == -E_INVAL && sys_trace_ctl(self_space(), 0, 1, 0) == -E_BADHANDLE,
           "trace_ctl: a word past the ids, or no monitor handle, is refused");
    sys_trace_ctl(mon, 3, ~0ull, 0);            /* ids 192..255: none exists */
    tap_ok(area->enabled[3] == 0, "trace_ctl: bits of tracepoints that do not exist stay clear");
    calls();
    kernel_points();
    ipc_points();
    flood();
    emit();
    emit_many();
    all_off();
    /* A reader of something else is refused by the reader, not misread. */
    static struct trace_area fake;
    tap_ok(trace_reader_init(&r, &fake, 0) == -1, "trace reader: a memory that is no trace area is refused");
}
