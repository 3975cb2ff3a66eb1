/*
 * Minimal reproducers of kernel bugs the fuzzer found, kept so that a
 * fix can be checked (boot argument sfuzz_repro=NAME; the driver runs it
 * instead of fuzzing and reports whether the kernel survived). None of
 * them needs any privilege: an ordinary process can do each.
 */
#include "sfuzz.h"

#define UVA 0x0000004000000000ull

static char diag[256];     /* what the reproducer saw, printed after its TAP line */

#define SAY(...) snprintf(diag, sizeof(diag), __VA_ARGS__)

/* A mapping made after its space was torn down outlives the space: the
 * memory object's mapping list points at freed memory, which mem_clone
 * walks. */
static bool map_after_teardown(void)
{
    int64_t sp = sys_space_create();
    int64_t t = sys_thread_create((uint32_t)sp, UVA);
    int64_t k = sys_thread_kill((uint32_t)t);          /* its last thread: the space is torn down */
    int64_t m = sys_mem_create(0x1000, 0);
    int64_t r = sys_mem_map((uint32_t)sp, (uint32_t)m, UVA + 0x10000, 0, 0x1000, R_READ);
    SAY("space %ld, thread %ld, kill %ld, map into the torn-down space %ld", (long)sp, (long)t, (long)k, (long)r);
    sys_handle_close((uint32_t)t);
    sys_handle_close((uint32_t)sp);                    /* the space is freed; its mapping is not */
    int64_t c = sys_mem_clone((uint32_t)m);            /* walks the mapping of the freed space */
    if (c > 0)
        sys_handle_close((uint32_t)c);
    sys_handle_close((uint32_t)m);
    return r != 0;                                      /* refused, or we would not be here */
}

/* A notification bound to a dead thread keeps pointing at it after the
 * thread is freed; closing the notification then writes through the
 * stale pointer: here it unbinds the thread that reused the memory. */
static bool bind_dead_thread(void)
{
    int64_t t = sys_thread_create(self_space(), UVA);
    sys_thread_kill((uint32_t)t);
    int64_t n = sys_notify_create();
    int64_t b = sys_notify_bind((uint32_t)t, (uint32_t)n);    /* a dead thread: should be refused */
    sys_handle_close((uint32_t)t);                          /* the thread is freed, n->bound dangles */
    int64_t t2 = sys_thread_create(self_space(), UVA + 0x2000);   /* reuses its memory */
    int64_t n2 = sys_notify_create(), n3 = sys_notify_create();
    int64_t b2 = sys_notify_bind((uint32_t)t2, (uint32_t)n2);
    sys_handle_close((uint32_t)n);                          /* writes through the stale pointer */
    int64_t b3 = sys_notify_bind((uint32_t)t2, (uint32_t)n3); /* t2 is bound to n2: E_BUSY expected */
    SAY("bind to a dead thread %ld, bind t2 %ld, t2 still bound after closing n: %s", (long)b,
           (long)b2, b3 == -E_BUSY ? "yes" : "NO (unbound by a stale pointer)");
    sys_thread_kill((uint32_t)t2);
    sys_handle_close((uint32_t)t2);
    sys_handle_close((uint32_t)n2);
    sys_handle_close((uint32_t)n3);
    return b != 0 || b3 == -E_BUSY;
}


/* space_kill of a process ends its threads but not those of the
 * processes it created: a killed program lives on in its children, still
 * charged to its parent's limits. */
static bool kill_leaves_children(void)
{
    int64_t ep = sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", (uint32_t)ep, R_WRITE } };
    struct spawn_req req = { "sfuzz", "mode=nest", 100, -1, g, 1, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = spawn(&req, &r);
    if (!err)
        err = sys_ipc_recv((uint32_t)ep, &m);           /* it made its child process */
    if (!err)
        sys_ipc_reply(0, &m);
    int64_t n = err ? err : sys_space_kill(r.space);
    sys_handle_close(r.thread);
    sys_handle_close(r.space);
    sys_handle_close((uint32_t)ep);
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, 20000000);
    int64_t threads = sys_space_usage(self_space(), LIMIT_THREADS);
    SAY("killed a process (%ld threads); threads left besides the root's own: %ld", (long)n,
           (long)(threads - 1));
    return !err && threads == 1;
}

/* A fault handler set on a dead thread: the thread's reference to the
 * endpoint is never dropped, so the endpoint (and what it is charged
 * to) is never freed. */
static bool fault_handler_dead_thread(void)
{
    int64_t t = sys_thread_create(self_space(), UVA);    /* page tables for the UTCB, once */
    sys_thread_kill((uint32_t)t);
    sys_handle_close((uint32_t)t);
    int64_t before = sys_space_usage(self_space(), LIMIT_MEMORY);
    t = sys_thread_create(self_space(), UVA);
    int64_t ep = sys_endpoint_create();
    sys_thread_kill((uint32_t)t);
    int64_t r = sys_thread_set_fault_handler((uint32_t)t, (uint32_t)ep);
    sys_handle_close((uint32_t)t);
    sys_handle_close((uint32_t)ep);
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, 20000000);
    int64_t after = sys_space_usage(self_space(), LIMIT_MEMORY);
    SAY("set_fault_handler on a dead thread %ld; memory usage %ld before, %ld after closing both",
           (long)r, (long)before, (long)after);
    return after == before;
}

/* A space that never had a thread, holding the only handle to itself:
 * nothing can reach it, nothing tears it down, and its memory stays
 * charged to its creator (space_kill of the creator does not reach it). */
static bool space_cycle(void)
{
    int64_t before = sys_space_usage(self_space(), LIMIT_SPACES);
    int64_t a = sys_space_create();
    int64_t g = sys_handle_give((uint32_t)a, (uint32_t)a, R_ALL);
    sys_handle_close((uint32_t)a);
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, 20000000);
    int64_t after = sys_space_usage(self_space(), LIMIT_SPACES);
    SAY("a space given to itself (%ld) and closed: %ld spaces before, %ld after", (long)g, (long)before,
           (long)after);
    return after == before;
}

static const struct { const char *name; bool (*fn)(void); } repros[] = {
    { "map-after-teardown", map_after_teardown },
    { "bind-dead-thread", bind_dead_thread },
    { "fault-handler-dead-thread", fault_handler_dead_thread },
    { "kill-leaves-children", kill_leaves_children },
    { "space-cycle", space_cycle },
};

/* Run reproducer `name` ("all": every one), one TAP line each. */
int fz_repro(const char *name)
{
    bool any = false;
    for (unsigned i = 0; i < sizeof(repros) / sizeof(repros[0]); i++) {
        if (strcmp(name, "all") != 0 && strcmp(name, repros[i].name) != 0)
            continue;
        diag[0] = 0;
        bool ok = repros[i].fn();
        tap_ok(ok, "sfuzz: repro %s: refused, or harmless", repros[i].name);
        printf("# %s\n", diag);
        any = true;
    }
    if (!any)
        printf("# repro: no such reproducer \"%s\"\n", name);
    tap_plan();
    return any ? 0 : 1;
}
