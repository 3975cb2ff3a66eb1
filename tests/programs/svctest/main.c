/*
 * svctest: one service, both placements. It binds the NoOp service's
 * kernel instance to one endpoint and starts its user-space instance
 * (svc-noop) on another, then runs the same checks through the same
 * generated proxies against each: the results must not depend on where
 * the service runs. Then the priority-inversion case against the
 * user-placed instance. Prints TAP.
 */
#include "petrel.h"
#include "noop_if.h"
#include "svc_client.h"

static uint64_t my_pid;

/*
 * regs_call(ep, info, out): an IPC call of `info` (no message registers)
 * on ep with x10..x30 set to REG_PATTERN(n) first; after the call, x10..x30
 * and sp - (sp before) go to out[0..21]. Returns the call's x0. Every
 * register but x0..x9 must come back as it was, however the kernel served
 * the call (a repeated kernel-placed request takes the light call, which
 * saves only part of the frame).
 */
#define STR_(x) #x
#define STR(x) STR_(x)
#define REG_PATTERN(n)  (0x5a5a000000000000ull | (uint64_t)(n) << 32 | 0xb000u | (n))
int64_t regs_call(uint64_t ep, uint64_t info, uint64_t *out);
__asm__(
    "    .text\n"
    "    .global regs_call\n"
    "regs_call:\n"
    "    sub   sp, sp, #304\n"
    "    stp   x19, x20, [sp, #0]\n"
    "    stp   x21, x22, [sp, #16]\n"
    "    stp   x23, x24, [sp, #32]\n"
    "    stp   x25, x26, [sp, #48]\n"
    "    stp   x27, x28, [sp, #64]\n"
    "    stp   x29, x30, [sp, #80]\n"
    "    mov   x9, sp\n"
    "    stp   x2, x9, [sp, #96]\n"
    "    .irp n, 10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30\n"
    "    movz  x\\n, #(0xb000 + \\n)\n"
    "    movk  x\\n, #\\n, lsl #32\n"
    "    movk  x\\n, #0x5a5a, lsl #48\n"
    "    .endr\n"
    "    svc   #" STR(SYS_IPC_CALL) "\n"
    "    stp   x10, x11, [sp, #112]\n"
    "    stp   x12, x13, [sp, #128]\n"
    "    stp   x14, x15, [sp, #144]\n"
    "    stp   x16, x17, [sp, #160]\n"
    "    stp   x18, x19, [sp, #176]\n"
    "    stp   x20, x21, [sp, #192]\n"
    "    stp   x22, x23, [sp, #208]\n"
    "    stp   x24, x25, [sp, #224]\n"
    "    stp   x26, x27, [sp, #240]\n"
    "    stp   x28, x29, [sp, #256]\n"
    "    ldp   x2, x9, [sp, #96]\n"
    "    mov   x10, sp\n"
    "    sub   x9, x10, x9\n"
    "    stp   x30, x9, [sp, #272]\n"
    "    add   x10, sp, #112\n"
    "    mov   x11, #22\n"
    "1:  ldr   x12, [x10], #8\n"
    "    str   x12, [x2], #8\n"
    "    subs  x11, x11, #1\n"
    "    b.ne  1b\n"
    "    ldp   x19, x20, [sp, #0]\n"
    "    ldp   x21, x22, [sp, #16]\n"
    "    ldp   x23, x24, [sp, #32]\n"
    "    ldp   x25, x26, [sp, #48]\n"
    "    ldp   x27, x28, [sp, #64]\n"
    "    ldp   x29, x30, [sp, #80]\n"
    "    add   sp, sp, #304\n"
    "    ret\n");

/* A ping through regs_call: 0 if it was answered and every register that
 * must survive did; else the call's error, or 1 + the first register
 * number that changed (32: sp). */
static int64_t ping_keeping_registers(uint32_t ep)
{
    uint64_t out[22];
    int64_t r = regs_call(ep, MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_PING, 0, 0), out);
    if (r)
        return r;
    for (unsigned n = 10; n <= 30; n++)
        if (out[n - 10] != REG_PATTERN(n))
            return 1 + n;
    return out[21] ? 33 : 0;
}

struct later_arg {
    uint32_t ep;
    volatile int64_t result;
    volatile uint64_t order;
    volatile int done;
};

static void later_thread(void *arg)
{
    struct later_arg *a = arg;
    uint64_t order = 0;
    a->result = noop_later(a->ep, &order);
    a->order = order;
    a->done = 1;
}

struct closer_arg {
    uint32_t h;
    volatile int phase;
    volatile int64_t before, after;
};

/* Pings through h until told the handle went, then once more. */
static void pinger_thread(void *arg)
{
    struct closer_arg *a = arg;
    int64_t r = 0;
    for (int i = 0; i < 5; i++)
        r |= noop_ping(a->h);
    a->before = r;
    a->phase = 1;
    while (a->phase != 2)
        sleep_ms(1);
    a->after = noop_ping(a->h);
    a->phase = 3;
}

/*
 * What a light call (a repeated register-only request of a kernel-placed
 * service, served from the exception vector) must never change: the
 * handle's rights, badge and life, for this thread and for the others of
 * its process. The same checks hold for a user-placed server.
 */
static void light_calls(const char *where, uint32_t ep)
{
    int64_t kept = 0;
    for (int i = 0; i < 50 && !kept; i++)
        kept = ping_keeping_registers(ep);
    tap_ok(kept == 0, "%s: a call keeps x10..x30 and sp, call after call (%ld)", where, (long)kept);

    uint32_t ha = (uint32_t)sys_handle_dup(ep, R_WRITE, 0x11);
    uint32_t hb = (uint32_t)sys_handle_dup(ep, R_WRITE, 0x22);
    bool badges = true;
    for (int i = 0; i < 4; i++) {
        uint64_t b1 = 0, b2 = 0, b3 = 0, b4 = 0, pid = 0;
        badges &= noop_who(ha, &b1, &pid) == 0 && noop_who(ha, &b2, &pid) == 0 && noop_who(hb, &b3, &pid) == 0 &&
                  noop_who(hb, &b4, &pid) == 0 && b1 == 0x11 && b2 == 0x11 && b3 == 0x22 && b4 == 0x22 &&
                  pid == my_pid;
    }
    tap_ok(badges, "%s: each handle's badge, alternating and repeated", where);

    int64_t r1 = noop_ping(ha), r2 = noop_ping(ha);
    sys_handle_close(ha);
    int64_t r3 = noop_ping(ha), r4 = noop_ping(ha);
    tap_ok(r1 == 0 && r2 == 0 && r3 == -E_BADHANDLE && r4 == -E_BADHANDLE,
           "%s: a closed handle is refused, even right after it served (%ld %ld)", where, (long)r3, (long)r4);

    uint32_t hr = (uint32_t)sys_handle_dup(ep, R_READ, 0);
    int64_t p1 = noop_ping(hr), p2 = noop_ping(hr);
    uint64_t sum = 0;
    int64_t p3 = noop_add(hr, 1, 2, &sum);
    tap_ok(p1 == -E_PERM && p2 == -E_PERM && p3 == -E_PERM, "%s: a handle without the write right is refused, "
           "every time", where);
    sys_handle_close(hr);

    struct closer_arg c = { hb, 0, 1, 1 };
    thread_spawn(pinger_thread, &c, 100, 0);
    for (int i = 0; i < 200 && c.phase != 1; i++)
        sleep_ms(1);
    sys_handle_close(hb);
    c.phase = 2;
    for (int i = 0; i < 200 && c.phase != 3; i++)
        sleep_ms(1);
    tap_ok(c.phase == 3 && c.before == 0 && c.after == -E_BADHANDLE,
           "%s: a handle another thread closed is refused to this one (%ld)", where, (long)c.after);
}

static volatile int stop_hammer;

/* Faults once: its handler is a service that handles no faults. */
static void fault_once(void *arg)
{
    *(volatile uint64_t *)8 = 1;
}

struct echo_arg {
    uint32_t ep;
    int rounds;                 /* < 0: until stop_hammer */
    volatile int done, ok;
};

/* Requests that are not register-only, one after another (in the kernel
 * placement each is a request on the service's own stack). */
static void echo_many(void *arg)
{
    struct echo_arg *a = arg;
    int ok = 1;
    for (int i = 0; a->rounds < 0 ? !stop_hammer : i < a->rounds; i++) {
        uint8_t back[8];
        uint32_t back_len = 0, count = 0;
        ok &= noop_echo(a->ep, "ab", 2, back, &back_len, &count) == 0 && back_len == 2 && back[0] == 'b';
    }
    a->ok = ok;
    a->done = 1;
}

/*
 * A thread that calls the service without pause does not starve the
 * service's other callers of its priority (a waiter woken when a request
 * ends competes with it). And a thread whose fault handler is a service
 * that handles no faults is stopped, not resumed into the same fault (in
 * the kernel placement that kept the service busy for good; in user space
 * the refused reply ended the server's loop).
 */
static void fairness(const char *where, uint32_t ep)
{
    struct petrel_thread_stats st = { 0 };
    sys_thread_stats(self_thread(), &st);
    stop_hammer = 0;
    struct echo_arg h = { ep, -1, 0, 0 }, a = { ep, 50, 0, 0 };
    int64_t ht = thread_spawn(echo_many, &h, st.prio, 0);
    int64_t at = thread_spawn(echo_many, &a, st.prio, 0);
    for (int i = 0; i < 3000 && !a.done; i++)
        sleep_ms(1);
    int done = a.done;
    stop_hammer = 1;
    for (int i = 0; i < 3000 && !(a.done && h.done); i++)
        sleep_ms(1);                    /* starved, it goes on once the busy caller stops */
    thread_reap((uint32_t)at);
    thread_reap((uint32_t)ht);
    tap_ok(done && a.ok && h.ok, "%s: a caller that never pauses does not starve the service's other callers", where);

    int64_t f = thread_spawn(fault_once, NULL, 1, 0);
    int64_t set = f > 0 ? sys_thread_set_fault_handler((uint32_t)f, ep) : f;
    sys_thread_set_priority((uint32_t)f, st.prio);
    bool stopped = wait_state((uint32_t)f, THREAD_DEAD, 2000);
    thread_reap((uint32_t)f);
    tap_ok(set == 0 && stopped && noop_ping(ep) == 0,
           "%s: a fault sent to the service, which handles none, stops the thread (and the service goes on)", where);
}

static volatile uint64_t work_start_ns, work_end_ns, sleep_from_ns, woke_ns;

static void long_worker(void *arg)
{
    work_start_ns = (uint64_t)sys_clock_ns();
    noop_work((uint32_t)(uintptr_t)arg, 10000000);
    work_end_ns = (uint64_t)sys_clock_ns();
}

static void early_sleeper(void *arg)
{
    sleep_from_ns = (uint64_t)sys_clock_ns();
    sleep_ms(5);
    woke_ns = (uint64_t)sys_clock_ns();
}

/* A request that takes long (`work`, marked `long` in the IDL) does not
 * hold the core: a thread of higher priority whose 5 ms sleep ends
 * meanwhile runs at its next tick, not when the request is over. (On the
 * register path, which runs with interrupts masked, it waited for the
 * whole request.) services/noop-1core runs this under icount, where the
 * request's 10,000,000 turns take the same guest time on every host. */
static void long_request_yields(const char *where, uint32_t ep)
{
    struct petrel_thread_stats st = { 0 };
    sys_thread_stats(self_thread(), &st);
    work_start_ns = work_end_ns = sleep_from_ns = woke_ns = 0;
    int64_t s = thread_spawn(early_sleeper, NULL, st.prio + 10, 0);
    int64_t w = thread_spawn(long_worker, (void *)(uintptr_t)ep, st.prio - 10, 0);
    for (int i = 0; i < 5000 && !(work_end_ns && woke_ns); i++)
        sleep_ms(1);
    thread_reap((uint32_t)s);
    thread_reap((uint32_t)w);
    uint64_t late = woke_ns - sleep_from_ns - 5000000, took = work_end_ns - work_start_ns;
    tap_ok(work_end_ns && woke_ns && late < took / 2,
           "%s: a long request gives way to a thread of higher priority (the sleeper %lu us late; the request "
           "took %lu us)", where, (unsigned long)(late / 1000), (unsigned long)(took / 1000));
}

struct waiter_arg {
    uint32_t ep;
    int delay_ms, ping;         /* ping: a register-only call; else add */
    volatile uint64_t called_ns, done_ns;
    volatile int ok;
};

static void late_caller(void *arg)
{
    struct waiter_arg *a = arg;
    sleep_ms(a->delay_ms);
    a->called_ns = (uint64_t)sys_clock_ns();
    uint64_t sum = 0;
    a->ok = a->ping ? noop_ping(a->ep) == 0 : noop_add(a->ep, 2, 3, &sum) == 0 && sum == 5;
    a->done_ns = (uint64_t)sys_clock_ns();
}

/* Two callers come while a long request runs, the better one with a
 * register-only call: when the request ends, both are served. (The
 * kernel placement woke only the best waiter; answered on the register
 * entry, its call finished no request, and the other slept on until
 * some other call came.) */
static bool waiters_try(uint32_t ep, bool *during)
{
    struct petrel_thread_stats st = { 0 };
    sys_thread_stats(self_thread(), &st);
    work_start_ns = work_end_ns = 0;
    struct waiter_arg c = { ep, 3, 0, 0, 0, 0 }, b = { ep, 6, 1, 0, 0, 0 };
    int64_t ct = thread_spawn(late_caller, &c, st.prio + 5, 0);
    int64_t bt = thread_spawn(late_caller, &b, st.prio + 10, 0);
    int64_t w = thread_spawn(long_worker, (void *)(uintptr_t)ep, st.prio - 10, 0);
    for (int i = 0; i < 3000 && !(work_end_ns && c.done_ns && b.done_ns); i++)
        sleep_ms(1);
    *during = c.called_ns > work_start_ns && b.called_ns > work_start_ns && work_end_ns &&
              c.called_ns < work_end_ns && b.called_ns < work_end_ns;
    bool served = c.done_ns && b.done_ns && c.ok && b.ok;
    for (int i = 0; i < 100 && !c.done_ns; i++) {
        uint8_t back[2];
        uint32_t back_len = 0, count = 0;
        (void)noop_echo(ep, "ab", 2, back, &back_len, &count);  /* (a request that ends frees a caller left */
        sleep_ms(1);                                            /* waiting, so that it can be reaped) */
    }
    thread_reap((uint32_t)ct);
    thread_reap((uint32_t)bt);
    thread_reap((uint32_t)w);
    return served;
}

/* (On a loaded host the callers may come before the long request starts
 * or after it ends: then the case is not what is checked, and it runs
 * again, up to five times.) */
static void waiters_all_served(const char *where, uint32_t ep)
{
    bool during = false, served = false;
    for (int tries = 0; tries < 5 && !during; tries++)
        served = waiters_try(ep, &during);
    tap_ok(during && served, "%s: callers waiting for a long request are all served when it ends, the best one "
           "with a register-only call (called during it: %d; served: %d)", where, during, served);
}

static void checks(const char *where, uint32_t ep)
{
    tap_ok(noop_ping(ep) == 0, "%s: ping", where);
    uint64_t sum = 0;
    tap_ok(noop_add(ep, 40, 2, &sum) == 0 && sum == 42, "%s: add returns its result", where);
    tap_ok(noop_add(ep, ~0ull, 1, &sum) == -E_RANGE, "%s: add reports E_RANGE", where);
    uint8_t back[120];
    uint32_t back_len = 0, count = 0;
    tap_ok(noop_echo(ep, "hello", 5, back, &back_len, &count) == 0 && back_len == 5 && count == 5 &&
           memcmp(back, "olleh", 5) == 0, "%s: bytes travel both ways", where);
    uint8_t big[200] = { 0 };
    tap_ok(noop_echo(ep, big, 121, back, &back_len, &count) == -E_INVAL, "%s: too many bytes are refused", where);
    uint64_t mr[32] = { 5 };
    int64_t n = svc_client_call(ep, ((uint64_t)NOOP_IF_ID << 16) | NOOP_ADD, 1, mr, 32, 0, 0, 0);
    tap_ok(n == 1 && (int64_t)mr[0] == -E_INVAL, "%s: a request of the wrong length is refused", where);
    mr[0] = 0;
    n = svc_client_call(ep, ((uint64_t)NOOP_IF_ID << 16) | 99, 0, mr, 32, 0, 0, 0);
    tap_ok(n == 1 && (int64_t)mr[0] == -E_INVAL, "%s: an unknown method is refused", where);
    n = svc_client_call(ep, (77ull << 16) | 1, 0, mr, 32, 0, 0, 0);
    tap_ok(n == 1 && (int64_t)mr[0] == -E_INVAL, "%s: another interface's request is refused", where);
    uint64_t low = 0;
    tap_ok(noop_low(ep, 0x1234, 8, &low) == 0 && low == 0x34 && noop_low(ep, 1, 65, &low) == -E_RANGE,
           "%s: a 32-bit argument and its range", where);
    mr[0] = 0x1234;
    mr[1] = (1ull << 32) | 8;
    n = svc_client_call(ep, ((uint64_t)NOOP_IF_ID << 16) | NOOP_LOW, 2, mr, 32, 0, 0, 0);
    tap_ok(n == 1 && (int64_t)mr[0] == -E_INVAL, "%s: a 32-bit argument with stray high bits is refused", where);
    uint32_t passed = (uint32_t)sys_notify_create();
    mr[0] = 0;
    n = svc_client_call(ep, ((uint64_t)NOOP_IF_ID << 16) | NOOP_PING, 0, mr, 32, 1, &passed, 0);
    tap_ok(n == 1 && (int64_t)mr[0] == -E_INVAL && sys_handle_close(passed) == 0,
           "%s: a request carrying a handle its method does not take is refused", where);
    int64_t badged = sys_handle_dup(ep, R_WRITE, 0x77);
    uint64_t badge = 0, pid = 0;
    tap_ok(noop_who((uint32_t)badged, &badge, &pid) == 0 && badge == 0x77 && pid == my_pid,
           "%s: the service sees the caller's badge and pid", where);
    sys_handle_close((uint32_t)badged);
    tap_ok(noop_work(ep, 1000) == 0 && noop_work(ep, 100000000) == -E_RANGE, "%s: work and its limit", where);
    uint32_t nf = (uint32_t)sys_notify_create();
    int64_t ro = sys_handle_dup(nf, R_READ | R_GRANT, 0);
    tap_ok(noop_notify(ep, nf, 0x40) == 0 && sys_notify_poll(nf) == 0x40,
           "%s: a handle passed in a request reaches the service (it signals it)", where);
    tap_ok(noop_notify(ep, (uint32_t)ro, 0x40) == -E_PERM && sys_notify_poll(nf) == 0 &&
           noop_notify(ep, 0xdead, 1) == -E_INVAL, "%s: a passed handle keeps only its rights; a bogus one is refused",
           where);
    sys_handle_close(nf);
    sys_handle_close((uint32_t)ro);
    uint32_t made = 0, none = 0;
    int64_t mk = noop_make_notify(ep, 0x15, &made);
    int64_t info = mk == 0 ? sys_handle_info(made) : mk;
    tap_ok(mk == 0 && (info & 0xff) == OBJ_NOTIFICATION && (info >> 8) == R_READ && sys_notify_poll(made) == 0x15 &&
           sys_notify_signal(made, 1) == -E_PERM,
           "%s: the service hands its client a new object, with the rights it chose (info 0x%lx)", where,
           (unsigned long)info);
    tap_ok(noop_make_notify(ep, 0, &none) == -E_INVAL && none == 0 && sys_handle_close(made) == 0,
           "%s: a refused request hands out nothing", where);

    /* A send has no reply to keep: "later" sent (not called) must leave
     * nothing waiting, or the deferred case below would get E_BUSY. */
    struct petrel_msg sent = { MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_LATER, 0, 0), { 0 }, 0, 0 };
    tap_ok(sys_ipc_send(ep, &sent) == 0 && noop_ping(ep) == 0, "%s: a send is served and answered to nobody", where);

    /* A deferred reply: "later" answers when the next ping arrives. The
     * ping keeps the caller's registers though it wakes another thread
     * (a light call's way through the scheduler). */
    struct later_arg a = { ep, 1, 0, 0 };
    thread_spawn(later_thread, &a, 150, -1);
    sleep_ms(10);
    int was_done = a.done;
    int64_t busy = noop_later(ep, &sum);
    int64_t ping = ping_keeping_registers(ep);
    for (int i = 0; i < 100 && !a.done; i++)
        sleep_ms(1);
    tap_ok(!was_done && busy == -E_BUSY && ping == 0 && a.done && a.result == 0 && a.order > 0,
           "%s: a reply kept for later reaches the blocked caller (ping %ld)", where, (long)ping);

    light_calls(where, ep);
    fairness(where, ep);
    long_request_yields(where, ep);
    waiters_all_served(where, ep);
}

/* A server of two requests that records the message registers it got. */
struct mr_server_arg {
    uint32_t ep;
    volatile uint64_t seen[2][MSG_REG_MRS];
    volatile int done;
};

static void mr_server(void *arg)
{
    struct mr_server_arg *a = arg;
    /* 1: the caller comes while this waits (the fastpath); the reply goes
     * by the general path */
    struct petrel_msg m = { 0, { 0, 0x71, 0x72, 0x73, 0x74, 0x75 }, 0, 0 };
    int64_t r = sys_ipc_recv(a->ep, &m);
    for (unsigned i = 0; i < MSG_REG_MRS; i++)
        a->seen[0][i] = m.mr[i];
    struct petrel_msg reply = { MSG_INFO(1, 1, 0), { 0x99, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5 }, 0, 0 };
    if (r == 0)
        r = sys_ipc_reply(0, &reply);
    /* 2: the caller waits for this (the general path); the reply goes by
     * the fastpath's reply-and-receive, which then takes request 3 */
    sleep_ms(20);
    struct petrel_msg m2 = { 0, { 0, 0, 0x83, 0x84, 0x85, 0x86 }, 0, 0 };
    if (r == 0)
        r = sys_ipc_recv(a->ep, &m2);
    for (unsigned i = 0; i < MSG_REG_MRS; i++)
        a->seen[1][i] = m2.mr[i];
    m2.info = MSG_INFO(1, 1, 0);
    m2.mr[0] = 0x98;
    for (unsigned i = 1; i < MSG_REG_MRS; i++)
        m2.mr[i] = 0xf0 + i;
    if (r == 0)
        r = sys_ipc_reply_recv(a->ep, &m2);
    struct petrel_msg last = { MSG_INFO(1, 0, 0), { 0 }, 0, 0 };
    if (r == 0)
        sys_ipc_reply(0, &last);
    a->done = 1;
}

/*
 * Message registers past a message's length: the receiver keeps its own
 * there, on the fastpath (the server already waits) and on the general
 * path (the caller waits for the server), both ways. Nothing of the
 * sender's beyond its message reaches the other side.
 */
static void past_length(void)
{
    struct mr_server_arg a = { (uint32_t)sys_endpoint_create(), { { 0 } }, 0 };
    thread_spawn(mr_server, &a, 150, 0);           /* waits at once (higher priority) */
    struct petrel_msg m1 = { MSG_INFO(1, 1, 0), { 0x42, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5 }, 0, 0 };
    int64_t r1 = sys_ipc_call(a.ep, &m1);
    struct petrel_msg m2 = { MSG_INFO(1, 2, 0), { 0x43, 0x44, 0xd2, 0xd3, 0xd4, 0xd5 }, 0, 0 };
    int64_t r2 = sys_ipc_call(a.ep, &m2);
    struct petrel_msg m3 = { MSG_INFO(1, 0, 0), { 0 }, 0, 0 };
    int64_t r3 = sys_ipc_call(a.ep, &m3);
    for (int i = 0; i < 200 && !a.done; i++)
        sleep_ms(1);
    bool server_kept = a.done && a.seen[0][0] == 0x42 && a.seen[1][0] == 0x43 && a.seen[1][1] == 0x44;
    for (unsigned i = 1; i < MSG_REG_MRS; i++)
        server_kept &= a.seen[0][i] == 0x70 + i;
    for (unsigned i = 2; i < MSG_REG_MRS; i++)
        server_kept &= a.seen[1][i] == 0x81 + i;
    bool client_kept = r1 == 0 && r2 == 0 && r3 == 0 && m1.mr[0] == 0x99 && m2.mr[0] == 0x98;
    for (unsigned i = 1; i < MSG_REG_MRS; i++)
        client_kept &= m1.mr[i] == 0xc0 + i;
    for (unsigned i = 1; i < MSG_REG_MRS; i++)
        client_kept &= m2.mr[i] == (i == 1 ? 0x44 : 0xd0 + i);
    tap_ok(server_kept, "message registers past the length: the server keeps its own");
    tap_ok(client_kept, "message registers past the length: the caller keeps its own in the reply");
    sys_handle_close(a.ep);
}

static volatile int m_done, h_done, h_before_m;

static void low_client(void *arg)
{
    noop_work((uint32_t)(uintptr_t)arg, 3000000);
}

static void medium_spinner(void *arg)
{
    uint64_t end = (uint64_t)sys_clock_ns() + 600000000ull;
    while ((uint64_t)sys_clock_ns() < end)
        ;
    m_done = 1;
}

static void high_client(void *arg)
{
    noop_ping((uint32_t)(uintptr_t)arg);
    h_before_m = !m_done;
    h_done = 1;
}

/* The inversion case: L occupies the server, M spins, H calls. */
static void inversion(uint32_t ep)
{
    thread_spawn(low_client, (void *)(uintptr_t)ep, 40, 0);
    sleep_ms(5);                        /* L's call is in the server's hands */
    thread_spawn(medium_spinner, NULL, 60, 0);
    thread_spawn(high_client, (void *)(uintptr_t)ep, 80, 0);
    for (int i = 0; i < 300 && !(h_done && m_done); i++)
        sleep_ms(5);
    tap_ok(h_done && h_before_m, "priority inheritance: a high client is served while a medium thread spins "
           "(the server inherits its priority)");
}

/* service_link: the kernel-placed noop (bound to kep) may call another
 * kernel-placed service, here the console's instance bound to a second
 * endpoint; every bad argument refused, and no cycle. uep is an endpoint
 * a user-space server answers. */
static void links(uint32_t kep, uint32_t uep)
{
    uint32_t root = root_handle(), other = (uint32_t)sys_endpoint_create();
    int64_t bound = sys_service_bind(root, other, 3, 0);        /* the console, in the kernel */
    int64_t first = sys_service_link(root, kep, other, "other", 5);
    tap_ok(bound == 0 && first == 0, "service_link: noop may call another kernel-placed service (%s, %s)",
           error_str(bound), error_str(first));
    int64_t read_only = sys_handle_dup(other, R_READ, 0);
    tap_ok(sys_service_link(root, kep, other, "other", 5) == -E_BUSY &&
           sys_service_link(root, other, kep, "back", 4) == -E_INVAL &&
           sys_service_link(root, kep, kep, "self", 4) == -E_INVAL &&
           sys_service_link(root, kep, uep, "user", 4) == -E_INVAL &&
           sys_service_link(root, uep, other, "user", 4) == -E_INVAL &&
           sys_service_link(self_space(), kep, other, "x", 1) == -E_BADHANDLE &&
           sys_service_link(root, kep, (uint32_t)read_only, "x", 1) == -E_PERM &&
           sys_service_link(root, kep, other, "", 0) == -E_INVAL &&
           sys_service_link(root, kep, other, "abcdefghijklmnopqrstuvwx", 24) == -E_INVAL &&
           sys_service_link(root, kep, other, "a\0b", 3) == -E_INVAL &&
           sys_service_link(root, kep, other, (const void *)0x10, 3) == -E_FAULT,
           "service_link: the name taken, a cycle, a user-placed end, bad handles, rights, names and "
           "pointers refused");
    int64_t more = 0;
    for (int i = 2; i <= 8 && !more; i++) {
        char name[3] = { 'n', (char)('0' + i), 0 };
        more = sys_service_link(root, kep, other, name, 2);
    }
    tap_ok(more == 0 && sys_service_link(root, kep, other, "n9", 2) == -E_LIMIT,
           "service_link: eight names a service, the ninth refused (%s)", error_str(more));
    sys_handle_close((uint32_t)read_only);
}

int main(const struct petrel_bootinfo *bi)
{
    my_pid = (uint64_t)sys_space_id(self_space());
    sys_thread_set_affinity(self_thread(), 0);
    uint32_t kep = (uint32_t)sys_endpoint_create();
    int64_t bound = sys_service_bind(root_handle(), kep, NOOP_IF_ID, 0);
    tap_ok(bound == 0, "kernel placement: noop bound to an endpoint (%s)", error_str(bound));
    tap_ok(sys_service_bind(root_handle(), kep, NOOP_IF_ID, 0) == -E_BUSY &&
           sys_service_bind(root_handle(), (uint32_t)sys_endpoint_create(), 999, 0) == -E_NOENT &&
           sys_service_bind(self_space(), kep, NOOP_IF_ID, 0) == -E_BADHANDLE,
           "kernel placement: binding checks its arguments");
    struct petrel_msg m = { 0 };
    tap_ok(sys_ipc_recv(kep, &m) == -E_BUSY, "kernel placement: nobody else can receive on the endpoint");

    uint32_t uep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "service", uep, R_READ } };
    struct spawn_req req = { "svc-noop", "", 50, 0, g, 1, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    int64_t err = spawn(&req, &r);
    tap_ok(err == 0, "user placement: svc-noop started (%s)", error_str(err));

    links(kep, uep);
    checks("kernel", kep);
    checks("user", uep);
    past_length();
    inversion(uep);
    tap_plan();
    return 0;
}
