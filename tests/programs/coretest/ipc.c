/* IPC: every length within and across address spaces and cores, handle
 * transfer, badges and sender identity, reply-once, notifications. */
#include "coretest.h"

/* Lengths 0..32 through ep, `rounds` times each; true if all echo back. */
static bool all_lengths(uint32_t ep, unsigned rounds)
{
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned len = 0; len <= MSG_MAX_MRS; len++)
            if (!echo_roundtrip(ep, len, len * 1000 + r + 1))
                return false;
    return true;
}

static void quit(uint32_t ep)
{
    struct petrel_msg m = { MSG_INFO(LABEL_QUIT, 0, 0), { 0 }, 0, 0 };
    sys_ipc_call(ep, &m);
}

static void lengths_same_space(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    int64_t t = thread_spawn(echo_thread, (void *)(uintptr_t)ep, 100, -1);
    tap_ok(t > 0 && all_lengths(ep, 3), "ipc: lengths 0-32, two threads of one space");
    quit(ep);
    sys_handle_close(ep);
}

static void lengths_other_space(int cpu, const char *what)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", ep, R_READ | R_WRITE } };
    struct spawn_result r;
    int64_t err = spawn_peer("echo", g, 1, cpu, 0, &r);
    bool ok = err == 0 && all_lengths(ep, 3);
    struct petrel_msg m = { MSG_INFO(LABEL_WHO, 0, 0), { 0 }, 0, 0 };
    ok = ok && sys_ipc_call(ep, &m) == 0 && m.pid == r.pid && m.pid != my_pid;
    tap_ok(ok, "ipc: lengths 0-32 %s (spawn %s)", what, error_str(err));
    quit(ep);
    sys_handle_close(ep);
    if (!err) {
        sys_handle_close(r.thread);
        sys_handle_close(r.space);
    }
}

static void transfer(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    int64_t t = thread_spawn(echo_thread, (void *)(uintptr_t)ep, 100, -1);
    uint32_t gift = (uint32_t)sys_endpoint_create();
    struct petrel_msg m = { MSG_INFO(LABEL_XFER, 0, 1), { 0 }, 0, 0 };
    utcb()->send_handles[0] = gift;
    utcb()->send_rights[0] = R_WRITE;
    int64_t err = sys_ipc_call(ep, &m);
    tap_ok(t > 0 && err == 0 && m.mr[0] == 1, "ipc: a handle travels with a message");
    tap_ok((m.mr[1] & 0xff) == OBJ_ENDPOINT && (m.mr[1] >> 8) == R_WRITE,
           "ipc: the transferred handle has only the rights given (info 0x%lx)", (unsigned long)m.mr[1]);
    tap_ok((int64_t)m.mr[2] == -E_PERM, "ipc: receiving through it without R_READ is refused (%s)",
           error_str((int64_t)m.mr[2]));
    tap_ok((int64_t)m.mr[3] == -E_AGAIN, "ipc: sending through it works (%s: no receiver)", error_str((int64_t)m.mr[3]));

    int64_t weak = sys_handle_dup(gift, R_READ | R_WRITE, 0);   /* no R_GRANT */
    struct petrel_msg m2 = { MSG_INFO(LABEL_XFER, 0, 1), { 0 }, 0, 0 };
    utcb()->send_handles[0] = (uint32_t)weak;
    utcb()->send_rights[0] = R_WRITE;
    tap_ok(weak > 0 && sys_ipc_call(ep, &m2) == -E_PERM, "ipc: a handle without R_GRANT cannot be sent");
    tap_ok(sys_handle_dup((uint32_t)weak, R_ALL, 0) == -E_PERM, "handles: dup cannot add rights (or lacks R_DUP)");
    tap_ok(sys_handle_dup(gift, R_READ, 0) > 0 && sys_handle_dup(gift, R_ALL, 0) > 0, "handles: dup with fewer or equal rights");
    struct petrel_msg bad = { MSG_INFO(LABEL_ECHO, 33, 0), { 0 }, 0, 0 };
    tap_ok(sys_ipc_call(ep, &bad) == -E_INVAL, "ipc: length 33 is refused");
    bad.info = MSG_INFO(LABEL_KERNEL | 5, 0, 0);
    tap_ok(sys_ipc_call(ep, &bad) == -E_INVAL, "ipc: a kernel label cannot be forged");
    quit(ep);
    sys_handle_close(ep);
}

static void badge_identity(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    int64_t t = thread_spawn(echo_thread, (void *)(uintptr_t)ep, 100, -1);
    int64_t badged = sys_handle_dup(ep, R_WRITE | R_GRANT | R_DUP, 0xbeef);
    struct petrel_msg m = { MSG_INFO(LABEL_WHO, 0, 0), { 0 }, 0, 0 };
    int64_t err = sys_ipc_call((uint32_t)badged, &m);
    tap_ok(t > 0 && err == 0 && m.mr[0] == 0xbeef && m.mr[1] == my_pid,
           "ipc: the receiver sees the handle's badge and the sender's pid");
    tap_ok(sys_handle_dup((uint32_t)badged, R_WRITE, 0x1) == -E_INVAL && sys_handle_dup((uint32_t)badged, R_WRITE, 0) > 0,
           "ipc: a badged handle keeps its badge and cannot be re-badged");
    quit(ep);

    /* Across processes: the peer calls us through a badged handle. */
    int64_t mine = sys_handle_dup(ep, R_ALL, 0);
    int64_t for_peer = sys_handle_dup(ep, R_WRITE | R_GRANT, 0xb0b);
    struct spawn_grant g[] = { { "ep", (uint32_t)for_peer, R_WRITE } };
    struct spawn_result r;
    err = spawn_peer("identity", g, 1, -1, 0, &r);
    struct petrel_msg in = { 0 };
    int64_t rr = err ? err : sys_ipc_recv((uint32_t)mine, &in);
    tap_ok(rr == 0 && in.badge == 0xb0b && in.pid == r.pid && in.mr[0] == 0x1d,
           "ipc: identity across processes (badge 0x%lx, pid %lu of %lu)", (unsigned long)in.badge,
           (unsigned long)in.pid, (unsigned long)r.pid);
    if (rr == 0) {
        in.info = MSG_INFO(0, 0, 0);
        sys_ipc_reply(0, &in);
    }
    sys_handle_close(ep);
}

struct replier {
    uint32_t ep;
    volatile int64_t second, saved, after_save, reply_to, again;
    volatile int done;
};

static void reply_thread(void *arg)
{
    struct replier *r = arg;
    struct petrel_msg m = { 0 };
    sys_ipc_recv(r->ep, &m);
    m.info = MSG_INFO(1, 0, 0);
    sys_ipc_reply(0, &m);
    r->second = sys_ipc_reply(0, &m);           /* nobody left to reply to */
    sys_ipc_recv(r->ep, &m);
    r->saved = sys_reply_save();
    r->after_save = sys_ipc_reply(0, &m);       /* moved away: E_STATE */
    m.info = MSG_INFO(2, 1, 0);
    m.mr[0] = 77;
    r->reply_to = sys_ipc_reply_to((uint32_t)r->saved, &m);
    r->again = sys_ipc_reply_to((uint32_t)r->saved, &m);
    sys_ipc_recv(r->ep, &m);
    int64_t h = sys_reply_save();
    sys_handle_close((uint32_t)h);              /* the caller will never hear back */
    r->done = 1;
}

static void reply_once(void)
{
    struct replier r = { (uint32_t)sys_endpoint_create(), 0, 0, 0, 0, 0, 0 };
    thread_spawn(reply_thread, &r, 100, -1);
    struct petrel_msg m = { MSG_INFO(9, 0, 0), { 0 }, 0, 0 };
    int64_t a = sys_ipc_call(r.ep, &m);
    struct petrel_msg m2 = { MSG_INFO(9, 0, 0), { 0 }, 0, 0 };
    int64_t b = sys_ipc_call(r.ep, &m2);
    struct petrel_msg m3 = { MSG_INFO(9, 0, 0), { 0 }, 0, 0 };
    int64_t c = sys_ipc_call(r.ep, &m3);
    tap_ok(a == 0 && r.second == -E_STATE, "ipc: a call gets exactly one reply (second: %s)", error_str(r.second));
    tap_ok(r.saved > 0 && r.after_save == -E_STATE && r.reply_to == 0 && b == 0 && m2.mr[0] == 77,
           "ipc: reply_save keeps the capability and ipc_reply_to answers later");
    tap_ok(r.again == -E_BADHANDLE, "ipc: a saved reply is used once (%s)", error_str(r.again));
    tap_ok(c == -E_CLOSED, "ipc: dropping a saved reply wakes the caller with E_CLOSED (%s)", error_str(c));
    tap_ok(sys_ipc_reply(0, &m) == -E_STATE, "ipc: reply without a call is refused");
    sys_handle_close(r.ep);
}

/* reply_lend: a client A calls B, B lends C a range of A's memory and calls
 * C, C copies with REPLY_COPY_LENT (mr: dir, va, len; the reply: the
 * result and the first 8 bytes C read). */
struct lend {
    uint32_t ep_b, ep_c;
    volatile int64_t bad_rights, wraps, lend, in_range, past, readonly_write, lend_w, write, answered, after, bad_dir;
    volatile uint64_t got;
};

static void lent_server(void *arg)
{
    struct lend *l = arg;
    static uint8_t buf[64];
    struct petrel_msg m = { 0 };
    while (sys_ipc_recv(l->ep_c, &m) == 0 && MSG_LABEL(m.info) != LABEL_QUIT) {
        memset(buf, 'W', sizeof buf);
        int64_t r = sys_reply_copy(m.mr[0], m.mr[1], (uint64_t)(uintptr_t)buf, m.mr[2]);
        m.info = MSG_INFO(0, 2, 0);
        m.mr[0] = (uint64_t)r;
        memcpy((void *)&m.mr[1], buf, 8);
        sys_ipc_reply(0, &m);
    }
    sys_ipc_reply(0, &m);
}

static int64_t lent_copy(struct lend *l, uint64_t dir, uint64_t va, uint64_t len, volatile uint64_t *got)
{
    struct petrel_msg m = { MSG_INFO(1, 3, 0), { dir, va, len }, 0, 0 };
    if (sys_ipc_call(l->ep_c, &m) != 0)
        return -E_STATE;
    if (got)
        *got = m.mr[1];
    return (int64_t)m.mr[0];
}

static void lender(void *arg)
{
    struct lend *l = arg;
    struct petrel_msg m = { 0 };
    sys_ipc_recv(l->ep_b, &m);
    uint64_t a = m.mr[0];
    l->bad_rights = sys_reply_lend(a, 64, 2);
    l->wraps = sys_reply_lend(~0ull - 8, 64, 0);
    l->lend = sys_reply_lend(a, 64, 0);
    l->in_range = lent_copy(l, REPLY_COPY_LENT, a + 8, 16, &l->got);
    sys_reply_lend(a, 64, 0);
    l->past = lent_copy(l, REPLY_COPY_LENT, a + 56, 16, NULL);
    sys_reply_lend(a, 64, 0);
    l->readonly_write = lent_copy(l, REPLY_COPY_LENT | 1, a, 8, NULL);
    sys_reply_lend(a, 64, 0);
    l->bad_dir = lent_copy(l, 4, a, 8, NULL);
    l->lend_w = sys_reply_lend(a, 64, 1);
    l->write = lent_copy(l, REPLY_COPY_LENT | 1, a + 4, 8, NULL);
    l->answered = lent_copy(l, REPLY_COPY_LENT, a, 8, NULL);     /* (the lend went with the call answered) */
    sys_reply_lend(a, 64, 0);
    m.info = MSG_INFO(0, 0, 0);
    sys_ipc_reply(0, &m);
    sys_ipc_recv(l->ep_b, &m);                  /* the next call: the lend is over */
    l->after = lent_copy(l, REPLY_COPY_LENT, a, 8, NULL);
    m.info = MSG_INFO(0, 0, 0);
    sys_ipc_reply(0, &m);
}

static void reply_lend(void)
{
    static uint8_t mine[64];
    for (unsigned i = 0; i < sizeof mine; i++)
        mine[i] = (uint8_t)i;
    struct lend l = { 0 };
    l.ep_b = (uint32_t)sys_endpoint_create();
    l.ep_c = (uint32_t)sys_endpoint_create();
    tap_ok(sys_reply_lend((uint64_t)(uintptr_t)mine, 8, 0) == -E_STATE,
           "ipc: reply_lend without a call to answer is refused");
    thread_spawn(lent_server, &l, 120, -1);
    thread_spawn(lender, &l, 110, -1);
    struct petrel_msg m = { MSG_INFO(1, 1, 0), { (uint64_t)(uintptr_t)mine }, 0, 0 };
    int64_t first = sys_ipc_call(l.ep_b, &m);
    struct petrel_msg m2 = { MSG_INFO(1, 1, 0), { (uint64_t)(uintptr_t)mine }, 0, 0 };
    int64_t second = sys_ipc_call(l.ep_b, &m2);
    tap_ok(first == 0 && l.bad_rights == -E_INVAL && l.wraps == -E_INVAL && l.lend == 0,
           "ipc: reply_lend checks its range and rights (%s, %s)", error_str(l.bad_rights), error_str(l.wraps));
    tap_ok(l.in_range == 0 && l.got == 0x0f0e0d0c0b0a0908ull,
           "ipc: a server reads its caller's lent range of the caller's caller (%s, 0x%lx)", error_str(l.in_range),
           (unsigned long)l.got);
    tap_ok(l.past == -E_FAULT && l.readonly_write == -E_FAULT && l.bad_dir == -E_INVAL,
           "ipc: past the lent range, or writing a range lent to read, is E_FAULT (%s, %s, %s)", error_str(l.past),
           error_str(l.readonly_write), error_str(l.bad_dir));
    tap_ok(l.lend_w == 0 && l.write == 0 && mine[3] == 3 && mine[4] == 'W' && mine[11] == 'W' && mine[12] == 12,
           "ipc: a range lent writable is written, and only there (%s)", error_str(l.write));
    tap_ok(l.answered == -E_FAULT, "ipc: a lend ends when its call is answered (%s)", error_str(l.answered));
    tap_ok(second == 0 && l.after == -E_FAULT, "ipc: a lend ends when the lender receives its next call (%s)",
           error_str(l.after));
    struct petrel_msg q = { MSG_INFO(LABEL_QUIT, 0, 0), { 0 }, 0, 0 };
    sys_ipc_call(l.ep_c, &q);
    sys_handle_close(l.ep_b);
    sys_handle_close(l.ep_c);
}

struct waiter {
    uint32_t h;
    volatile int64_t result;
    volatile uint64_t label, bits;
    volatile int done;
};

static void notify_waiter(void *arg)
{
    struct waiter *w = arg;
    w->result = sys_notify_wait(w->h);
    w->done = 1;
}

static void bound_receiver(void *arg)
{
    struct waiter *w = arg;
    struct petrel_msg m = { 0 };
    w->result = sys_ipc_recv(w->h, &m);
    w->label = MSG_LABEL(m.info);
    w->bits = m.mr[0];
    w->done = 1;
}

static void notifications(void)
{
    uint32_t n = (uint32_t)sys_notify_create();
    tap_ok(sys_notify_poll(n) == 0 && sys_notify_signal(n, 0x5) == 0 && sys_notify_signal(n, 0x2) == 0 &&
           sys_notify_poll(n) == 0x7 && sys_notify_poll(n) == 0, "notify: signal ORs bits, poll takes them");
    struct waiter w = { n, 0, 0, 0, 0 };
    thread_spawn(notify_waiter, &w, 150, -1);   /* higher: runs and blocks at once */
    sys_notify_signal(n, 0x40);
    for (int i = 0; i < 100 && !w.done; i++)
        sleep_ms(1);
    tap_ok(w.done && w.result == 0x40, "notify: a waiter wakes with the bits (%ld)", (long)w.result);
    tap_ok(sys_notify_signal(n, 1ull << 63) == -E_INVAL, "notify: bit 63 is refused");

    /* A notification bound to a thread ends its ipc_recv. */
    uint32_t ep = (uint32_t)sys_endpoint_create();
    uint32_t n2 = (uint32_t)sys_notify_create();
    struct waiter b = { ep, 1, 0, 0, 0 };
    int64_t t = thread_spawn(bound_receiver, &b, 90, -1);
    int64_t bind = sys_notify_bind((uint32_t)t, n2);
    sleep_ms(20);                                /* let it block in ipc_recv */
    sys_notify_signal(n2, 0x300);
    for (int i = 0; i < 100 && !b.done; i++)
        sleep_ms(1);
    tap_ok(bind == 0 && b.done && b.result == 0 && b.label == LABEL_NOTIFY && b.bits == 0x300,
           "notify: a bound notification wakes ipc_recv with LABEL_NOTIFY");
    sys_handle_close(ep);
    sys_handle_close(n);
    sys_handle_close(n2);
}

static void cross_core_wake(void)
{
    uint32_t n = (uint32_t)sys_notify_create();
    struct waiter w = { n, 0, 0, 0, 0 };
    int64_t t = thread_spawn(notify_waiter, &w, 100, 1);
    sleep_ms(20);
    struct petrel_thread_stats st;
    sys_thread_stats((uint32_t)t, &st);
    sys_notify_signal(n, 0x8);
    for (int i = 0; i < 200 && !w.done; i++)
        sleep_ms(1);
    tap_ok(st.cpu == 1 && w.done && w.result == 0x8, "smp: a signal from core 0 wakes a waiter on core 1 (IPI)");
    sys_handle_close(n);
}

struct queued_call {
    uint32_t ep;
    volatile int64_t result;
    volatile int done;
};

static void queued_caller(void *arg)
{
    struct queued_call *q = arg;
    struct petrel_msg m = { MSG_INFO(LABEL_ECHO, 1, 0), { 5 }, 0, 0 };
    q->result = sys_ipc_call(q->ep, &m);
    q->done = 1;
}

/* An endpoint dies when its last handle with R_READ goes (endpoint_watch):
 * callers waiting on it wake with E_CLOSED, later calls fail with it, and
 * each watch signals its notification once. */
static void endpoint_death(void)
{
    /* In one process: a call queued on an endpoint nobody receives on. */
    uint32_t ep = (uint32_t)sys_endpoint_create();
    uint32_t obj = (uint32_t)sys_handle_dup(ep, R_WRITE | R_GRANT, 0x51);
    uint32_t n = (uint32_t)sys_notify_create();
    tap_ok(sys_endpoint_watch(obj, n, 0x4) == 0 && sys_notify_poll(n) == 0, "endpoint_watch: a live endpoint is watched, no signal yet");
    tap_ok(sys_endpoint_watch(obj, n, 1ull << 63) == -E_INVAL && sys_endpoint_watch(n, n, 1) == -E_BADHANDLE &&
           sys_endpoint_watch(obj, obj, 1) == -E_BADHANDLE && sys_endpoint_watch(0xdead, n, 1) == -E_BADHANDLE,
           "endpoint_watch: bad bits and handles are refused");
    uint32_t read_only = (uint32_t)sys_handle_dup(ep, R_READ, 0);
    uint32_t n_read = (uint32_t)sys_handle_dup(n, R_READ, 0);
    tap_ok(sys_endpoint_watch(read_only, n, 1) == -E_PERM && sys_endpoint_watch(obj, n_read, 1) == -E_PERM,
           "endpoint_watch: an endpoint or notification handle without R_WRITE is refused");
    uint32_t n2 = (uint32_t)sys_notify_create();
    tap_ok(sys_endpoint_watch(obj, n2, 0x8) == 0 && sys_endpoint_watch(obj, n2, 0) == 0 &&
           sys_endpoint_watch(obj, n2, 0) == -E_NOENT, "endpoint_watch: bits 0 removes a watch, once");
    struct queued_call q = { obj, 0, 0 };
    struct petrel_thread_stats me;
    sys_thread_stats(self_thread(), &me);
    int64_t t = thread_spawn(queued_caller, &q, me.prio, -1);     /* (a yield lets it run) */
    for (struct petrel_thread_stats st; t > 0 && !q.done; sys_yield())
        if (sys_thread_stats((uint32_t)t, &st) != 0 || st.state == THREAD_SEND)
            break;                              /* (queued on the endpoint) */
    sys_handle_close(read_only);
    tap_ok(!q.done && sys_notify_poll(n) == 0, "endpoint: still alive while one handle with R_READ is left");
    sys_handle_close(ep);                       /* the last handle that can receive */
    while (t > 0 && !q.done)
        sys_yield();
    tap_ok(t > 0 && q.result == -E_CLOSED, "endpoint: a call queued when it dies wakes with E_CLOSED (%ld)", (long)q.result);
    tap_ok(sys_notify_poll(n) == 0x4 && sys_notify_poll(n2) == 0, "endpoint_watch: its death signals the watch once, a removed one not");
    struct petrel_msg m = { MSG_INFO(LABEL_ECHO, 1, 0), { 5 }, 0, 0 };
    tap_ok(sys_ipc_call(obj, &m) == -E_CLOSED && sys_ipc_send(obj, &m) == -E_CLOSED,
           "endpoint: a call or send on a dead one fails with E_CLOSED");
    tap_ok(sys_handle_info(obj) == (int64_t)(OBJ_ENDPOINT | (R_WRITE | R_GRANT) << 8 | HANDLE_INFO_DEAD) &&
           !(sys_handle_info(n) & HANDLE_INFO_DEAD), "handle_info: a dead endpoint says so");
    tap_ok(sys_endpoint_watch(obj, n2, 0x10) == 0 && sys_notify_poll(n2) == 0x10,
           "endpoint_watch: a dead endpoint is signalled at once");
    if (t > 0)
        thread_reap((uint32_t)t);
    sys_handle_close(obj);

    /* Across processes: the server is killed. */
    ep = (uint32_t)sys_endpoint_create();
    obj = (uint32_t)sys_handle_dup(ep, R_WRITE | R_GRANT, 0x52);
    struct spawn_grant g[] = { { "ep", ep, R_READ | R_WRITE } };
    struct spawn_result r;
    int64_t err = spawn_peer("echo", g, 1, -1, 0, &r);
    sys_handle_close(ep);                       /* the server's is the one that can receive now */
    tap_ok(err == 0 && sys_endpoint_watch(obj, n, 0x20) == 0 && echo_roundtrip(obj, 2, 9) && sys_notify_poll(n) == 0,
           "endpoint: a server in another process answers through its object");
    int64_t alive = err ? err : sys_space_alive(r.pid);
    int64_t killed = err ? err : sys_space_kill(r.space);
    int64_t bits = sys_notify_poll(n), later = sys_ipc_call(obj, &m);
    tap_ok(killed == 1 && bits == 0x20 && later == -E_CLOSED,
           "endpoint_watch: the server's death (%ld thread killed) is signalled and its object fails with E_CLOSED",
           (long)killed);
    int64_t dead = err ? err : sys_space_alive(r.pid);
    tap_ok(alive == 1 && dead == 0 && sys_space_alive(my_pid) == 1 && sys_space_alive(0) == 0 &&
               sys_space_alive(~0ull) == 0,
           "space_alive: the server's process runs (%ld), then not once killed (%ld); this one runs, no process 0 or ~0",
           (long)alive, (long)dead);
    if (!err) {
        sys_handle_close(r.thread);
        sys_handle_close(r.space);
    }
    sys_handle_close(obj);

    /* Watches are charged to the watcher and go back with the endpoint. */
    ep = (uint32_t)sys_endpoint_create();
    obj = (uint32_t)sys_handle_dup(ep, R_WRITE, 0);
    enum { WATCHES = 200 };
    static uint32_t notes[WATCHES];
    for (unsigned i = 0; i < WATCHES; i++)
        notes[i] = (uint32_t)sys_notify_create();
    int64_t before = sys_space_usage(self_space(), LIMIT_MEMORY);
    unsigned ok = 0;
    for (unsigned i = 0; i < WATCHES; i++)
        ok += sys_endpoint_watch(obj, notes[i], 1) == 0;
    int64_t during = sys_space_usage(self_space(), LIMIT_MEMORY);
    sys_handle_close(ep);
    int64_t after = sys_space_usage(self_space(), LIMIT_MEMORY);
    unsigned signalled = 0;
    for (unsigned i = 0; i < WATCHES; i++) {
        signalled += sys_notify_poll(notes[i]) == 1;
        sys_handle_close(notes[i]);
    }
    tap_ok(ok == WATCHES && during - before >= WATCHES * 48 && after == before && signalled == WATCHES,
           "endpoint_watch: %u watches cost the watcher %ld bytes, back when the endpoint died; each signalled",
           ok, (long)(during - before));
    sys_handle_close(obj);
    sys_handle_close(n);
    sys_handle_close(n2);
    sys_handle_close(n_read);
}

void test_ipc(void)
{
    lengths_same_space();
    lengths_other_space(-1, "between two address spaces");
    if (ncpus > 1)
        lengths_other_space(1, "between address spaces on two cores");
    transfer();
    badge_identity();
    reply_once();
    reply_lend();
    notifications();
    endpoint_death();
    if (ncpus > 1)
        cross_core_wake();
}
