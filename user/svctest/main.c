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

    /* A deferred reply: "later" answers when the next ping arrives. */
    struct later_arg a = { ep, 1, 0, 0 };
    thread_spawn(later_thread, &a, 150, -1);
    sleep_ms(10);
    int was_done = a.done;
    int64_t busy = noop_later(ep, &sum);
    int64_t ping = noop_ping(ep);
    for (int i = 0; i < 100 && !a.done; i++)
        sleep_ms(1);
    tap_ok(!was_done && busy == -E_BUSY && ping == 0 && a.done && a.result == 0 && a.order > 0,
           "%s: a reply kept for later reaches the blocked caller", where);
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

    checks("kernel", kep);
    checks("user", uep);
    inversion(uep);
    tap_plan();
    return 0;
}
