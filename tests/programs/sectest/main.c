/*
 * sectest: regression tests for the attacks an independent security
 * review found. It runs as the root task and replays each attack from
 * an unprivileged hostile process (its own space and thread
 * handles, a "parent" endpoint and what the test grants; a memory limit
 * of 1 MiB unless the attack needs more), then checks the kernel's
 * answer, that the child's resources all come back, and that the system
 * still works: the root task spawns a program, maps memory and does
 * IPC. A panic, a hang, a forged right or a raised priority fails.
 * Prints TAP; only=<name> runs one test.
 */
#include "sectest.h"
#include "../coretest/echo.h"

unsigned ncpus;

uint64_t now_ms(void)
{
    return (uint64_t)sys_clock_ns() / 1000000ull;
}

/* ---------------------------------------------------------------- children */

int64_t child_spawn(struct child *c, const char *args, uint64_t mem_limit, const struct spawn_grant *g,
                    unsigned ng)
{
    memset(c, 0, sizeof(*c));
    int64_t ep = sys_endpoint_create();
    if (ep < 0)
        return c->err = ep;
    c->ep = (uint32_t)ep;
    struct spawn_grant all[4] = { { "parent", c->ep, R_WRITE } };
    for (unsigned i = 0; i < ng && i < 3; i++)
        all[1 + i] = g[i];
    struct spawn_req req = { .program = "hostile", .args = args, .prio = CHILD_PRIO, .cpu = -1, .grants = all,
                             .ngrants = 1 + MIN(ng, 3u), .mem_limit = mem_limit };
    c->err = spawn(&req, &c->r);
    return c->err;
}

/* The next message from the child within ms: 0 for a report (its words
 * in mr), -E_CLOSED once it exited, -E_TIMEOUT. */
static int64_t child_next(struct child *c, uint64_t mr[6], uint64_t ms)
{
    uint64_t end = now_ms() + ms;
    while (!c->err && !c->exited) {
        struct petrel_msg m = { MSG_NONBLOCK, { 0 }, 0, 0 };
        int64_t r = sys_ipc_recv(c->ep, &m);
        if (r == -E_AGAIN) {
            if (now_ms() > end)
                return -E_TIMEOUT;
            sleep_ms(1);
            continue;
        }
        if (r != 0)
            return r;
        if (MSG_LABEL(m.info) == LABEL_EXIT) {
            c->exited = true;
        } else if (MSG_LABEL(m.info) == LABEL_REPORT) {
            int64_t h = sys_reply_save();
            c->reply = h > 0 ? (uint32_t)h : 0;
            memcpy(mr, m.mr, sizeof(m.mr));
            return 0;
        }
    }
    return c->err ? c->err : -E_CLOSED;
}

int64_t child_report(struct child *c, uint64_t mr[6], uint64_t ms)
{
    memset(mr, 0, 6 * sizeof(uint64_t));
    return child_next(c, mr, ms);
}

void child_answer(struct child *c, uint64_t word)
{
    if (!c->reply)
        return;
    struct petrel_msg m = { MSG_INFO(0, 1, 0), { word }, 0, 0 };
    sys_ipc_reply_to(c->reply, &m);
    c->reply = 0;
}

int64_t child_result(struct child *c, uint64_t mr[6], uint64_t ms)
{
    int64_t r = child_report(c, mr, ms);
    child_answer(c, 0);
    return r;
}

int64_t child_end(struct child *c, uint64_t ms)
{
    if (c->err) {
        if (c->ep)
            sys_handle_close(c->ep);
        return c->err;
    }
    if (c->reply)
        sys_handle_close(c->reply);     /* a report left unanswered: its caller hears E_CLOSED */
    c->reply = 0;
    uint64_t mr[6], end = now_ms() + ms;
    while (!c->exited && child_next(c, mr, end > now_ms() ? end - now_ms() : 0) == 0)
        child_answer(c, 0);             /* reports nobody asked for */
    if (c->exited)
        wait_state(c->r.thread, THREAD_DEAD, ms);
    int64_t killed = sys_space_kill(c->r.space);
    sys_handle_close(c->r.thread);
    sys_handle_close(c->r.space);
    sys_handle_close(c->ep);
    return killed;
}

int64_t child_run(const char *args, uint64_t mr[6], uint64_t ms)
{
    struct child c;
    child_spawn(&c, args, MiB(1), NULL, 0);
    int64_t r = child_result(&c, mr, ms);
    child_end(&c, 2000);
    return r;
}

/* ---------------------------------------------------------------- checks */

#define MEM_SLACK   KiB(64)     /* our own page tables grow as spawn maps at new addresses */

void usage_now(struct usage *u)
{
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        u->of[k] = sys_space_usage(self_space(), k);
}

void check_usage_back(const char *name, const struct usage *before)
{
    struct usage now;
    bool back = false;
    for (uint64_t end = now_ms() + 1000; !back && now_ms() < end; sleep_ms(1)) {
        usage_now(&now);
        back = now.of[LIMIT_MEMORY] >= 0 && now.of[LIMIT_MEMORY] <= before->of[LIMIT_MEMORY] + (int64_t)MEM_SLACK;
        for (unsigned k = LIMIT_THREADS; k < LIMIT_KINDS; k++)
            back = back && now.of[k] == before->of[k];
    }
    tap_ok(back, "%s: every thread, handle, space and byte of the child's comes back "
           "(memory %ld, threads %ld, handles %ld, spaces %ld)", name,
           (long)(now.of[LIMIT_MEMORY] - before->of[LIMIT_MEMORY]), (long)(now.of[LIMIT_THREADS] - before->of[LIMIT_THREADS]),
           (long)(now.of[LIMIT_HANDLES] - before->of[LIMIT_HANDLES]), (long)(now.of[LIMIT_SPACES] - before->of[LIMIT_SPACES]));
}

/* Write a pattern over 64 KiB of fresh memory and read it back. */
static bool memory_works(void)
{
    uint32_t h;
    volatile uint64_t *p = mem_alloc(KiB(64), 0, &h);
    if (!p)
        return false;
    for (unsigned i = 0; i < KiB(64) / 8; i += 64)
        p[i] = i * 0x9e3779b97f4a7c15ull;
    bool ok = true;
    for (unsigned i = 0; i < KiB(64) / 8; i += 64)
        ok = ok && p[i] == i * 0x9e3779b97f4a7c15ull;
    sys_mem_unmap(self_space(), (uint64_t)p);
    sys_handle_close(h);
    return ok;
}

void check_alive(const char *name)
{
    int64_t ep = sys_endpoint_create();
    struct spawn_grant g = { "ep", (uint32_t)ep, R_READ };
    struct spawn_req req = { .program = "hostile", .args = "mode=echo", .prio = CHILD_PRIO, .cpu = -1, .grants = &g,
                             .ngrants = 1, .mem_limit = MiB(1) };
    struct spawn_result r;
    int64_t err = ep < 0 ? ep : spawn(&req, &r);
    bool mem = memory_works();
    bool ipc = false, gone = false;
    if (!err && wait_state(r.thread, THREAD_RECV, 2000)) {
        struct petrel_msg m = { MSG_INFO(LABEL_ECHO, 3, 0), { 1, 2, 3 }, 0, 0 };
        ipc = sys_ipc_call((uint32_t)ep, &m) == 0 && MSG_LABEL(m.info) == LABEL_ECHO + 1 &&
              m.mr[0] == ~1ull && m.mr[1] == ~2ull && m.mr[2] == ~3ull && m.pid == r.pid;
        m.info = MSG_INFO(LABEL_QUIT, 0, 0);
        ipc = ipc && sys_ipc_call((uint32_t)ep, &m) == 0;
    }
    if (!err) {
        gone = wait_state(r.thread, THREAD_DEAD, 2000);
        sys_space_kill(r.space);
        sys_handle_close(r.thread);
        sys_handle_close(r.space);
    }
    if (ep > 0)
        sys_handle_close((uint32_t)ep);
    tap_ok(!err && mem && ipc && gone, "%s: afterwards the root task still spawns a program (%s), maps memory "
           "(%s) and does IPC (%s)", name, error_str(err), mem ? "ok" : "failed", ipc ? "ok" : "failed");
}

int main(const struct petrel_bootinfo *bi)
{
    ncpus = bi->ncpus;
    printf("# sectest: %u cores\n", ncpus);
    char only[32] = "";
    start_arg("only", only, sizeof(only));
    static const struct { const char *name; void (*fn)(void); } tests[] = {
        { "forge", test_forge }, { "forge0", test_forge0 }, { "stalemap", test_stale_mapping },
        { "chain", test_chain }, { "prio", test_prio }, { "label", test_label },
        { "flood", test_floods }, { "kill", test_space_kill }, { "killnest", test_space_kill_nested },
        { "limits", test_limits },
    };
    for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        if (only[0] && strcmp(only, tests[i].name) != 0)
            continue;
        printf("# %s\n", tests[i].name);
        tests[i].fn();
    }
    tap_plan();
    return 0;
}
