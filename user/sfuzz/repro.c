/*
 * Minimal reproducers of kernel bugs the fuzzer found, kept so that a
 * fix can be checked (boot argument sfuzz_repro=NAME; the driver runs it
 * instead of fuzzing and reports whether the kernel survived). None of
 * them needs any privilege: an ordinary process can do each.
 */
#include "sfuzz.h"

#define UVA 0x0000004000000000ull

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
    printf("# repro: space %ld, thread %ld, kill %ld, map into the torn-down space %ld\n", (long)sp, (long)t,
           (long)k, (long)r);
    sys_handle_close((uint32_t)t);
    sys_handle_close((uint32_t)sp);                    /* the space is freed; its mapping is not */
    int64_t c = sys_mem_clone((uint32_t)m);            /* walks the mapping of the freed space */
    printf("# repro: clone %ld\n", (long)c);
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
    printf("# repro: bind to a dead thread %ld, bind t2 %ld, t2 still bound after closing n: %s\n", (long)b,
           (long)b2, b3 == -E_BUSY ? "yes" : "NO (unbound by a stale pointer)");
    sys_thread_kill((uint32_t)t2);
    sys_handle_close((uint32_t)t2);
    sys_handle_close((uint32_t)n2);
    sys_handle_close((uint32_t)n3);
    return b != 0 || b3 == -E_BUSY;
}

/* Usage of a space after space_kill. */
static bool usage_after_kill(void)
{
    int64_t sp = sys_space_create();
    int64_t t = sys_thread_create((uint32_t)sp, UVA);
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        printf("# repro: before kill: kind %u usage %ld\n", k, (long)sys_space_usage((uint32_t)sp, k));
    int64_t n = sys_space_kill((uint32_t)sp);
    bool ok = true;
    for (unsigned k = 0; k < LIMIT_KINDS; k++) {
        int64_t u = sys_space_usage((uint32_t)sp, k);
        printf("# repro: after kill %ld: kind %u usage %ld\n", (long)n, k, (long)u);
        ok = ok && u >= 0;
    }
    sys_handle_close((uint32_t)t);
    sys_handle_close((uint32_t)sp);
    return ok;
}

/* space_kill of a process whose child process has a thread. */
static bool kill_parent(void)
{
    struct spawn_req req = { "sfuzz", "mode=nest", 100, -1, NULL, 0, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    int64_t err = spawn(&req, &r);
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, 50000000);        /* let it make its child */
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        printf("# repro: before kill: kind %u usage %ld\n", k, (long)sys_space_usage(r.space, k));
    int64_t n = sys_space_kill(r.space);
    bool ok = err == 0;
    for (unsigned k = 0; k < LIMIT_KINDS; k++) {
        int64_t u = sys_space_usage(r.space, k);
        printf("# repro: after kill %ld: kind %u usage %ld\n", (long)n, k, (long)u);
        ok = ok && u >= 0;
    }
    int64_t root_threads = sys_space_usage(self_space(), LIMIT_THREADS);
    sys_handle_close(r.thread);
    sys_handle_close(r.space);
    sys_futex_wait((uint64_t)&never, 0, 50000000);
    printf("# repro: the root counts %ld threads before closing, %ld after (1 is its own)\n", (long)root_threads,
           (long)sys_space_usage(self_space(), LIMIT_THREADS));
    return ok && sys_space_usage(self_space(), LIMIT_THREADS) == 1;
}

/* A fault handler set on a dead thread: the thread's reference to the
 * endpoint is never dropped, so the endpoint (and what it is charged
 * to) is never freed. */
static bool fault_handler_dead_thread(void)
{
    int64_t before = sys_space_usage(self_space(), LIMIT_MEMORY);
    int64_t t = sys_thread_create(self_space(), UVA);
    int64_t ep = sys_endpoint_create();
    sys_thread_kill((uint32_t)t);
    int64_t r = sys_thread_set_fault_handler((uint32_t)t, (uint32_t)ep);
    sys_handle_close((uint32_t)t);
    sys_handle_close((uint32_t)ep);
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, 20000000);
    int64_t after = sys_space_usage(self_space(), LIMIT_MEMORY);
    printf("# repro: set_fault_handler on a dead thread %ld; memory usage %ld before, %ld after closing both\n",
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
    printf("# repro: a space given to itself (%ld) and closed: %ld spaces before, %ld after\n", (long)g, (long)before,
           (long)after);
    return after == before;
}

static const struct { const char *name; bool (*fn)(void); } repros[] = {
    { "space-cycle", space_cycle },
    { "fault-handler-dead-thread", fault_handler_dead_thread },
    { "kill-parent", kill_parent },
    { "usage-after-kill", usage_after_kill },
    { "map-after-teardown", map_after_teardown },
    { "bind-dead-thread", bind_dead_thread },
};

int fz_repro(const char *name)
{
    for (unsigned i = 0; i < sizeof(repros) / sizeof(repros[0]); i++) {
        if (strcmp(name, repros[i].name) == 0) {
            printf("# repro: %s\n", name);
            tap_ok(repros[i].fn(), "sfuzz: repro %s: the kernel refused or survived it", name);
            tap_plan();
            return 0;
        }
    }
    printf("# repro: no such reproducer \"%s\"\n", name);
    return 1;
}
