/*
 * rpccli: a client of native object RPC (idl/servicemgr.toml,
 * idl/rpctest.toml), the scenarios of Binder's tests through the service
 * manager (systems/object-rpc-*.toml, the case services/object-rpc):
 * objects looked up by name, the caller's identity as the server sees it,
 * an object made by a call and passed on through a third process, names
 * refused by the system description's permissions, bad registrations,
 * 16 threads calling at once, and the death of a server: its objects'
 * watchers signalled, calls on them failing, its names gone. Prints TAP.
 *
 * With `hostile=1` it is a hostile client of the service manager instead.
 * With `bench=N` it is the benchmark row object_rpc_rtt_4b: N calls of a
 * register-only method (4 bytes and more each way) on an object of
 * rpcsrv, the average in nanoseconds of the system clock (instructions
 * under -icount).
 */
#include "petrel.h"
#include "rpctest_if.h"
#include "servicemgr_if.h"

#define THREADS 16
#define CALLS   2000

static uint32_t mgr;
static uint64_t me;

#define POOL    8               /* calls that hold a server thread at once */
#define NAP_MS  100

/* A thread calling an object: what it did comes back in `result`. */
struct worker {
    uint32_t obj;
    volatile int64_t result;
    volatile int done;
};

static void napper(void *arg)
{
    struct worker *w = arg;
    w->result = rpctest_nap(w->obj, NAP_MS);
    w->done = 1;
}

/* n threads running fn on w[0..n), spread over the cores; waits for all. */
static void run_workers(void (*fn)(void *), struct worker *w, unsigned n, unsigned ncpus)
{
    int64_t t[THREADS];
    for (unsigned i = 0; i < n && i < THREADS; i++)
        t[i] = thread_spawn(fn, &w[i], 100, ncpus > 1 ? (int)(i % ncpus) : -1);
    for (unsigned i = 0; i < n && i < THREADS; i++) {
        while (t[i] > 0 && !w[i].done)
            sleep_ms(5);
        if (t[i] > 0)
            thread_reap((uint32_t)t[i]);
    }
}

static int64_t get(const char *name, uint32_t *obj)
{
    return servicemgr_get(mgr, name, (uint32_t)strlen(name), obj);
}

static int64_t add(const char *name, uint32_t obj)
{
    return servicemgr_add(mgr, name, (uint32_t)strlen(name), obj);
}

/* The servers register as they start: wait for a name a while. */
static int64_t get_soon(const char *name, uint32_t *obj)
{
    int64_t err = -E_NOENT;
    for (int i = 0; i < 500 && err == -E_NOENT; i++)
        if ((err = get(name, obj)) == -E_NOENT)
            sleep_ms(10);
    return err;
}

static void calls(void *arg)
{
    struct worker *c = arg;
    unsigned right = 0;
    for (uint64_t i = 0; i < CALLS; i++) {
        uint64_t next = 0;
        right += rpctest_ping(c->obj, i * 3, &next) == 0 && next == i * 3 + 1;
    }
    c->result = right;
    c->done = 1;
}

/* hostile=1: a program allowed any name tries to take them all, and sends
 * the service manager malformed requests; rpccli (after it) is unaffected.
 * It prints lines the case expects (rpccli's TAP is the case's). */
static int hostile(void)
{
    unsigned ok = 0, limited = 0;
    for (unsigned i = 0; i < 64; i++) {
        char name[8];
        snprintf(name, sizeof(name), "h%u", i);
        int64_t ep = sys_endpoint_create();
        int64_t obj = ep > 0 ? sys_handle_dup((uint32_t)ep, R_WRITE | R_GRANT | R_DUP, i + 1) : ep;
        int64_t err = obj > 0 ? add(name, (uint32_t)obj) : obj;
        ok += err == 0;
        limited += err == -E_LIMIT;
        if (obj > 0)
            sys_handle_close((uint32_t)obj);    /* (the endpoint itself stays: the objects live) */
    }
    printf("rpc-hostile: %u names registered, %u refused with E_LIMIT\n", ok, limited);
    struct petrel_msg m = { MSG_INFO(SERVICEMGR_IF_ID << 16 | 99, 0, 0), { 0 }, 0, 0 };
    int64_t unknown = sys_ipc_call(mgr, &m) == 0 ? (int64_t)m.mr[0] : -1;
    m = (struct petrel_msg){ MSG_INFO(SERVICEMGR_IF_ID << 16 | SERVICEMGR_GET, 5, 0), { 33, 0, 0, 0, 0 }, 0, 0 };
    int64_t longname = sys_ipc_call(mgr, &m) == 0 ? (int64_t)m.mr[0] : -1;
    m = (struct petrel_msg){ MSG_INFO(SERVICEMGR_IF_ID << 16 | SERVICEMGR_ADD, 5, 0), { 2, 0x3068, 0, 0, 0 }, 0, 0 };
    int64_t nohandle = sys_ipc_call(mgr, &m) == 0 ? (int64_t)m.mr[0] : -1;
    m = (struct petrel_msg){ MSG_INFO(SERVICEMGR_IF_ID << 16 | SERVICEMGR_LIST, 0, 0), { 0 }, 0, 0 };
    int64_t short_list = sys_ipc_call(mgr, &m) == 0 ? (int64_t)m.mr[0] : -1;
    printf("rpc-hostile: malformed requests: %s, %s, %s, %s\n", error_str(unknown), error_str(longname),
           error_str(nohandle), error_str(short_list));
    uint32_t a = 0;
    int64_t err = get_soon("rpc.a", &a);
    printf("rpc-hostile: the service manager still answers: %s\n", error_str(err ? err : rpctest_ping(a, 1, &(uint64_t){ 0 })));
    /* Watches of rpc.a it leaves behind when it exits: they go with it (the
     * kernel frees them at its end; rpccli's watch of rpc.a later is alone). */
    unsigned watched = 0;
    for (unsigned i = 0; !err && i < 100; i++) {
        int64_t n = sys_notify_create();
        watched += n > 0 && sys_endpoint_watch(a, (uint32_t)n, 1) == 0;
    }
    printf("rpc-hostile: %u watches of rpc.a left to the kernel\n", watched);
    return 0;
}

static int bench(unsigned n)
{
    uint32_t a;
    int64_t err = get_soon("rpc.a", &a);
    uint64_t next = 0;
    if (err || rpctest_ping(a, 1, &next) != 0) {
        printf("BENCH-SKIP object_rpc_rtt_4b lookup-failed\n");
        return 1;
    }
    uint64_t t0 = clock_ns();
    for (unsigned i = 0; i < n; i++)
        rpctest_ping(a, i, &next);
    uint64_t ps = (clock_ns() - t0) * 1000 / n;
    printf("BENCH object_rpc_rtt_4b - %lu.%03lu %u\n", (unsigned long)(ps / 1000), (unsigned long)(ps % 1000), n);
    printf("BENCH-END\n");
    rpctest_exit(a);                            /* (the last program ends: the system powers off) */
    return 0;
}

int main(const struct petrel_bootinfo *bi)
{
    mgr = start_handle("servicemgr");
    me = (uint64_t)sys_space_id(self_space());
    unsigned n = (unsigned)start_arg_u64("bench", 0);
    if (n)
        return bench(n);
    if (start_arg_u64("hostile", 0))
        return hostile();

    /* Objects by name; who is calling, as the server sees it. */
    uint32_t a = 0, b = 0, x = 0;
    int64_t err = get_soon("rpc.a", &a);
    tap_ok(err == 0 && a, "servicemgr: rpc.a is found (%s)", error_str(err));
    uint64_t obj = 0, pid = 0, next = 0;
    tap_ok(rpctest_who(a, &obj, &pid) == 0 && obj == 1 && pid == me,
           "rpc: the server sees which object was called (%lu) and the caller's pid (%lu, mine %lu)",
           (unsigned long)obj, (unsigned long)pid, (unsigned long)me);
    tap_ok(rpctest_ping(a, 41, &next) == 0 && next == 42, "rpc: a call and its reply (41 -> %lu)", (unsigned long)next);

    /* An object made by a call, passed on through a third process. */
    err = rpctest_make(a, 7, &x);
    tap_ok(err == 0 && rpctest_who(x, &obj, &pid) == 0 && obj == 7 && pid == me,
           "rpc: a call answers a new object of its server (badge %lu)", (unsigned long)obj);
    tap_ok(rpctest_make(a, 0, &(uint32_t){ 0 }) == -E_INVAL && rpctest_make(a, 1ull << 32, &(uint32_t){ 0 }) == -E_INVAL,
           "rpc: a bad id is refused by the server");
    err = get_soon("rpc.b", &b);
    uint64_t bpid = 0;
    tap_ok(err == 0 && rpctest_relay(b, x, &obj, &bpid) == 0 && obj == 7 && bpid != me && bpid != 0,
           "rpc: an object passed in a call to another server is called by it (object %lu, caller pid %lu)",
           (unsigned long)obj, (unsigned long)bpid);
    tap_ok(rpctest_who(x, &obj, &pid) == 0 && obj == 7, "rpc: the passed object still answers its first holder");

    /* The system description's permissions (systems/object-rpc-*.toml). */
    uint32_t h = 0;
    tap_ok(get("secret", &h) == -E_PERM && !h, "servicemgr: a lookup without permission is refused");
    tap_ok(get("missing", &h) == -E_NOENT, "servicemgr: a permitted name nobody registered is E_NOENT");
    tap_ok(add("rpc.a", x) == -E_PERM && add("rpc.c", x) == -E_PERM,
           "servicemgr: registering a name without permission is refused");
    char names[2][33] = { "", "" };
    uint32_t len[2] = { 0, 0 };
    tap_ok(servicemgr_list(mgr, 0, names[0], &len[0]) == 0 && servicemgr_list(mgr, 1, names[1], &len[1]) == 0 &&
           servicemgr_list(mgr, 2, names[0] + 32, &(uint32_t){ 0 }) == -E_NOENT && len[0] == 5 && len[1] == 5 &&
           !memcmp(names[0], "rpc.a", 5) && !memcmp(names[1], "rpc.b", 5),
           "servicemgr: list shows the names the caller may look up");

    /* Bad registrations. */
    uint32_t note = (uint32_t)sys_notify_create();
    uint32_t mine = (uint32_t)sys_endpoint_create();
    uint32_t own = (uint32_t)sys_handle_dup(mine, R_WRITE | R_GRANT | R_DUP, 5);
    tap_ok(add("cli.obj", (uint32_t)sys_handle_dup(note, R_ALL, 0)) == -E_INVAL &&
           add("bad name", own) == -E_INVAL && add("", own) == -E_INVAL &&
           add("0123456789012345678901234567890123", own) == -E_INVAL,
           "servicemgr: a notification for an object and bad names are refused");
    uint32_t nodup = (uint32_t)sys_handle_dup(mine, R_WRITE | R_GRANT, 0);
    tap_ok(add("cli.obj", nodup) == -E_INVAL, "servicemgr: an object that cannot be handed out (no R_DUP) is refused");
    tap_ok(add("cli.obj", mine) == -E_INVAL,
           "servicemgr: an object with R_READ is refused (kept, it would keep its server's endpoint alive)");
    tap_ok(add("cli.obj", own) == 0 && add("cli.obj", own) == -E_BUSY,
           "servicemgr: a permitted name is registered once");
    uint32_t again = (uint32_t)sys_handle_dup(mine, R_WRITE | R_GRANT | R_DUP, 6);
    sys_handle_close(mine);                     /* our object dies: nobody can receive on it */
    tap_ok(add("cli.obj", again) == -E_INVAL, "servicemgr: a dead object is refused");
    uint32_t mine2 = (uint32_t)sys_endpoint_create();
    uint32_t own2 = (uint32_t)sys_handle_dup(mine2, R_WRITE | R_GRANT | R_DUP, 9);
    tap_ok(add("cli.obj", own2) == 0, "servicemgr: the name of a dead object can be registered again");
    sys_handle_close(own);
    sys_handle_close(again);

    /* 16 threads at once, over the cores. */
    static struct worker c[THREADS];
    for (unsigned i = 0; i < THREADS; i++)
        c[i] = (struct worker){ a, 0, 0 };
    run_workers(calls, c, THREADS, bi->ncpus);
    unsigned right = 0;
    for (unsigned i = 0; i < THREADS; i++)
        right += (unsigned)c[i].result;
    tap_ok(right == THREADS * CALLS, "rpc: %u threads, %u calls each: %u answered right", THREADS, CALLS, right);

    /* Calls that hold a server thread: the pool grows to take the others. */
    static struct worker nz[POOL];
    uint64_t before = 0, after = 0, t0 = clock_ns();
    rpctest_threads(a, &before);
    for (unsigned i = 0; i < POOL; i++)
        nz[i] = (struct worker){ a, -1, 0 };
    run_workers(napper, nz, POOL, bi->ncpus);
    unsigned napped = 0;
    for (unsigned i = 0; i < POOL; i++)
        napped += nz[i].result == 0;
    uint64_t took_ms = (clock_ns() - t0) / 1000000;
    rpctest_threads(a, &after);
    tap_ok(napped == POOL && after > before && after <= 8 && took_ms < POOL * NAP_MS / 2,
           "rpc: %u calls of %u ms at once: the pool grew from %lu to %lu threads, all answered in %lu ms",
           POOL, NAP_MS, (unsigned long)before, (unsigned long)after, (unsigned long)took_ms);
    tap_ok(rpctest_nap(a, 1001) == -E_INVAL, "rpc: a nap too long is refused");

    /* The server of rpc.a dies. */
    tap_ok(sys_endpoint_watch(a, note, 1) == 0 && sys_endpoint_watch(x, note, 2) == 0,
           "rpc: its objects are watched (endpoint_watch)");
    err = rpctest_exit(a);
    tap_ok(err == -E_CLOSED, "rpc: a call whose server dies fails with E_CLOSED (%s)", error_str(err));
    uint64_t bits = 0;
    for (int i = 0; i < 100 && bits != 3; i++) {
        int64_t got = sys_notify_poll(note);
        bits |= got > 0 ? (uint64_t)got : 0;
        if (bits != 3)
            sleep_ms(10);
    }
    tap_ok(bits == 3, "rpc: the watchers of both its objects are signalled (bits %lu)", (unsigned long)bits);
    tap_ok(rpctest_ping(a, 1, &next) == -E_CLOSED && rpctest_who(x, &obj, &pid) == -E_CLOSED,
           "rpc: calls on a dead server's objects fail with E_CLOSED");
    tap_ok(get("rpc.a", &h) == -E_NOENT, "servicemgr: a dead server's name is gone");
    tap_ok(rpctest_ping(b, 1, &next) == 0 && next == 2, "rpc: the other server is unaffected");
    tap_ok(rpctest_exit(b) == -E_CLOSED, "rpc: the other server ends too");
    tap_plan();
    return 0;
}
