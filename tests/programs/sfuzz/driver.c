/*
 * The driver (sfuzz as the root task): spawns `sfuzz_procs=` workers
 * with limits of every kind, lets each run `sfuzz_threads=` fuzzing
 * threads of `sfuzz_ops=` operations from `seed=` (printed, so a run can
 * be replayed), watches their progress through the shared pages, and
 * then checks that the system survived:
 *   - every operation finished (a stuck kernel path shows as no progress);
 *   - no worker got past its limits;
 *   - space_kill ends every worker, and afterwards everything they held
 *     is returned: the root's usage of every kind is what it was before;
 *   - the root can still spawn a program, talk to it, map memory and
 *     run threads.
 * Prints TAP, the per-operation results and how deep the fuzz went.
 * `sfuzz_break=leak` keeps one object back on purpose: the usage check
 * must then fail (the check of the check).
 */
#include "sfuzz.h"
#include "noop_if.h"

#define MAX_PROCS       8
#define WORKER_PRIO     100
#define WORKER_MEM      (24ull << 20)
#define WORKER_THREADS  32
#define WORKER_HANDLES  256
#define WORKER_SPACES   8

static const char *const state_names[] = {
    "error", "inactive", "running", "ready", "send", "recv", "reply", "notify", "futex", "dead",
};

static struct {
    struct spawn_result r;
    uint32_t shared;
    struct fz_shared *sh;
} wk[MAX_PROCS];

static unsigned procs, threads, ncpus;

static void sleep_ns(uint64_t ns)
{
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, ns);
}

static uint64_t done_total(void)
{
    uint64_t n = 0;
    for (unsigned w = 0; w < procs; w++)
        for (unsigned t = 0; t < threads; t++)
            n += wk[w].sh->t[t].done;
    return n;
}

/* Spawn worker w with its limits; it waits at its start line until `go`. */
static int64_t start_worker(unsigned w, uint32_t shared_ep, uint32_t shared_n, uint32_t kservice, uint32_t root_ro, uint64_t ops,
                            uint64_t seed, unsigned trace)
{
    int64_t m = sys_mem_create(FZ_SHARED_SIZE, MEM_EAGER);
    if (m < 0)
        return m;
    wk[w].shared = (uint32_t)m;
    uint64_t va = va_alloc(FZ_SHARED_SIZE, 4096);
    int64_t err = sys_mem_map(self_space(), (uint32_t)m, va, 0, FZ_SHARED_SIZE, R_READ | R_WRITE);
    if (err)
        return err;
    wk[w].sh = (struct fz_shared *)va;
    struct spawn_grant g[] = {
        { "shared", (uint32_t)m, R_READ | R_WRITE },
        { "shared_ep", shared_ep, R_READ | R_WRITE | R_GRANT | R_DUP },
        { "shared_n", shared_n, R_READ | R_WRITE | R_GRANT | R_DUP },
        { "root", root_ro, R_READ },
        { "kservice", kservice, R_WRITE | R_GRANT | R_DUP },
    };
    char args[160];
    snprintf(args, sizeof(args), "mode=worker id=%u threads=%u cpus=%u ops=%lu seed=%lu prio=%u trace=%u",
             w, threads, ncpus, (unsigned long)ops, (unsigned long)(seed ^ (w + 1) * 0xd1b54a32d192ed03ull),
             WORKER_PRIO, trace);
    struct spawn_req req = { "sfuzz", args, WORKER_PRIO + 1, (int)(w % ncpus), g, 5, 0,
                             WORKER_MEM, WORKER_THREADS, WORKER_HANDLES, WORKER_SPACES };
    return spawn(&req, &wk[w].r);
}

/* Per-operation results over all workers and threads. */
static void report_ops(void)
{
    static const char *const short_err[FZ_NERR] = {
        "ok", "INVAL", "FAULT", "NOMEM", "NOSYS", "NOENT", "RANGE", "BUSY", "PERM", "BADFORMAT",
        "TIMEOUT", "BADHANDLE", "AGAIN", "CLOSED", "STATE", "LIMIT", "other",
    };
    printf("# %-14s %9s %9s  errors\n", "operation", "ok", "failed");
    for (unsigned op = 0; op < OP_COUNT; op++) {
        uint64_t n[FZ_NERR] = { 0 }, failed = 0;
        for (unsigned w = 0; w < procs; w++)
            for (unsigned t = 0; t < threads; t++)
                for (unsigned e = 0; e < FZ_NERR; e++)
                    n[e] += wk[w].sh->t[t].count[op][e];
        for (unsigned e = 1; e < FZ_NERR; e++)
            failed += n[e];
        char line[256];
        int len = snprintf(line, sizeof(line), "# %-14s %9lu %9lu ", fz_op_names[op], (unsigned long)n[0],
                           (unsigned long)failed);
        for (unsigned e = 1; e < FZ_NERR && len < (int)sizeof(line) - 24; e++)
            if (n[e])
                len += snprintf(line + len, sizeof(line) - (size_t)len, " %s %lu", short_err[e],
                                (unsigned long)n[e]);
        printf("%s\n", line);
    }
    uint64_t faults = 0, rescues = 0, victims = 0, ks[THREAD_DEAD + 2] = { 0 }, ws[THREAD_DEAD + 2] = { 0 };
    for (unsigned w = 0; w < procs; w++) {
        faults += wk[w].sh->faults;
        rescues += wk[w].sh->rescues;
        victims += wk[w].sh->victims;
        for (unsigned s = 0; s < THREAD_DEAD + 2; s++) {
            ks[s] += wk[w].sh->kill_state[s];
            ws[s] += wk[w].sh->wregs_state[s];
        }
    }
    printf("# victims started %lu, fuzzing-thread faults resumed %lu, stuck fuzzing threads replaced %lu\n",
           (unsigned long)victims, (unsigned long)faults, (unsigned long)rescues);
    const uint64_t *hist[2] = { ks, ws };
    const char *what[2] = { "killed while", "registers rewritten while" };
    for (int h = 0; h < 2; h++) {
        char line[256];
        int len = snprintf(line, sizeof(line), "# threads %s:", what[h]);
        for (unsigned s = 0; s < THREAD_DEAD + 2; s++)
            len += snprintf(line + len, sizeof(line) - (size_t)len, " %s %lu", state_names[s],
                            (unsigned long)hist[h][s]);
        printf("%s\n", line);
    }
}

/*
 * Some page tables outlive their mappings (L2 tables stay; an emptied L3
 * table is kept as the space's spare), and they are charged to their
 * space, so the root's usage after the run would differ from before by
 * the tables its own new mappings needed: the shared pages, spawn's
 * temporary views of the program file. Make them now, before the first
 * count, by mapping one page into every 2 MiB of the address range the
 * runtime will hand out next.
 */
static void warm_tables(uint64_t bytes)
{
    uint64_t va = va_alloc(4096, 4096);
    for (uint64_t a = va & ~(FZ_SLOT_SIZE - 1); a < va + bytes; a += FZ_SLOT_SIZE) {
        uint64_t at = MAX(a, va);
        int64_t m = sys_mem_create(4096, MEM_EAGER);
        if (m > 0 && sys_mem_map(self_space(), (uint32_t)m, at, 0, 4096, R_READ) == 0)
            sys_mem_unmap(self_space(), at);
        if (m > 0)
            sys_handle_close((uint32_t)m);
    }
}

/* Every kind of usage of the root's space (which counts all its descendants). */
static void usage_now(int64_t u[LIMIT_KINDS])
{
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        u[k] = sys_space_usage(self_space(), k);
}

static bool usage_back(const int64_t base[LIMIT_KINDS], int64_t u[LIMIT_KINDS])
{
    /* Dead threads are freed when their core next switches: give it a moment. */
    for (int tries = 0; tries < 50; tries++) {
        usage_now(u);
        bool same = true;
        for (unsigned k = 0; k < LIMIT_KINDS; k++)
            same = same && u[k] == base[k];
        if (same)
            return true;
        sleep_ns(20000000);
    }
    return false;
}

static void print_usage(const char *what, const int64_t u[LIMIT_KINDS])
{
    printf("# %s: memory %ld bytes, threads %ld, handles %ld, spaces %ld\n", what, (long)u[0], (long)u[1],
           (long)u[2], (long)u[3]);
}

/* The root still works: a new process answers IPC, memory maps, threads run. */
static bool root_alive(uint32_t root_ro)
{
    int64_t ep = sys_endpoint_create();
    if (ep < 0)
        return false;
    struct spawn_grant g[] = { { "ep", (uint32_t)ep, R_READ | R_WRITE } };
    struct spawn_req req = { "sfuzz", "mode=echo", 150, (int)(ncpus - 1), g, 1, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    bool ok = spawn(&req, &r) == 0;
    for (unsigned round = 0; ok && round < 8; round++) {
        struct petrel_msg m = { MSG_INFO(0x100, 20, 0), { 0 }, 0, 0 };
        for (unsigned i = 0; i < 20; i++) {
            if (i < MSG_REG_MRS)
                m.mr[i] = i * 77 + round;
            else
                utcb()->mr[i] = i * 77 + round;
        }
        ok = sys_ipc_call((uint32_t)ep, &m) == 0 && MSG_LEN(m.info) == 20 && MSG_LABEL(m.info) == 0x101;
        for (unsigned i = 0; ok && i < 20; i++)
            ok = (i < MSG_REG_MRS ? m.mr[i] : utcb()->mr[i]) == ~(uint64_t)(i * 77 + round);
    }
    if (!ok)
        printf("# liveness: no echo from a new process\n");
    struct petrel_msg q = { MSG_INFO(0x1ff, 0, 0), { 0 }, 0, 0 };
    bool quit = ok && sys_ipc_call((uint32_t)ep, &q) == 0;
    uint32_t mh;
    volatile uint64_t *p = mem_alloc(0x100000, 0, &mh);
    bool mem = p != NULL;
    for (unsigned i = 0; mem && i < 256; i++)
        p[i * 512] = i * 3;
    for (unsigned i = 0; mem && i < 256; i++)
        mem = p[i * 512] == i * 3;
    if (p) {
        sys_mem_unmap(self_space(), (uint64_t)p);
        sys_handle_close(mh);
    }
    if (!mem)
        printf("# liveness: memory does not map\n");
    int64_t bf = sys_mem_from_bootfile(root_ro, 0);
    if (bf > 0)
        sys_handle_close((uint32_t)bf);
    if (r.space) {
        sys_handle_close(r.space);
        sys_handle_close(r.thread);
    }
    sys_handle_close((uint32_t)ep);
    return ok && quit && mem && bf > 0;
}

int driver_main(const struct petrel_bootinfo *bi)
{
    char repro[32];
    if (start_arg("sfuzz_repro", repro, sizeof(repro)))
        return fz_repro(repro);
    ncpus = bi->ncpus;
    procs = (unsigned)MIN(MAX(fz_arg("sfuzz_procs", 4), 1), MAX_PROCS);
    threads = (unsigned)MIN(MAX(fz_arg("sfuzz_threads", 2), 1), FZ_MAX_THREADS);
    uint64_t ops = fz_arg("sfuzz_ops", ncpus >= 4 ? 125000 : 50000);
    uint64_t seed = fz_arg("seed", 0);
    uint64_t limit_s = fz_arg("sfuzz_timeout", 150);
    unsigned trace = (unsigned)fz_arg("sfuzz_trace", 0);
    char brk[16] = "";
    start_arg("sfuzz_break", brk, sizeof(brk));
    if (!seed)
        seed = (uint64_t)sys_clock_ns() * 0x9e3779b97f4a7c15ull | 1;
    sys_thread_set_priority(self_thread(), 200);
    printf("# sfuzz: seed 0x%lx: %u processes x %u threads x %lu operations on %u cores\n", (unsigned long)seed,
           procs, threads, (unsigned long)ops, ncpus);
    printf("# sfuzz: replay with the boot arguments \"seed=0x%lx sfuzz_procs=%u sfuzz_threads=%u sfuzz_ops=%lu\"\n",
           (unsigned long)seed, procs, threads, (unsigned long)ops);

    int64_t root_ro = sys_handle_dup(root_handle(), R_READ | R_GRANT, 0);
    /* The kernel-placed NoOp service's endpoint (op kcall): made before the
     * usage is taken, since the service keeps the first endpoint bound to
     * it for good (its processes' fault handler). */
    int64_t kservice = sys_endpoint_create();
    int64_t bound = kservice < 0 ? kservice : sys_service_bind(root_handle(), (uint32_t)kservice, NOOP_IF_ID, 0);
    warm_tables(16ull << 20);
    int64_t base[LIMIT_KINDS], u[LIMIT_KINDS];
    usage_now(base);
    print_usage("root usage before", base);

    int64_t shared_ep = sys_endpoint_create(), shared_n = sys_notify_create();
    int64_t err = shared_ep < 0 ? shared_ep : shared_n < 0 ? shared_n : root_ro < 0 ? root_ro : bound;
    unsigned started = 0;
    for (; !err && started < procs; started++) {
        err = start_worker(started, (uint32_t)shared_ep, (uint32_t)shared_n, (uint32_t)kservice, (uint32_t)root_ro,
                           ops, seed, trace);
        if (err)
            printf("# sfuzz: worker %u: %s\n", started, error_str(err));
    }
    if (err) {
        tap_ok(false, "sfuzz: workers start");
        tap_plan();
        return 1;
    }

    /* Go, and watch. */
    uint64_t t0 = (uint64_t)sys_clock_ns(), last_progress = t0, last_done = 0, last_print = t0;
    for (unsigned w = 0; w < procs; w++) {
        wk[w].sh->go = 1;
        sys_futex_wake((uint64_t)&wk[w].sh->go, 1);
    }
    bool finished = false, stalled = false;
    while (!finished && !stalled) {
        sleep_ns(50000000);
        uint64_t now = (uint64_t)sys_clock_ns(), done = done_total();
        finished = true;
        for (unsigned w = 0; w < procs; w++)
            finished = finished && wk[w].sh->finished;
        if (done != last_done) {
            last_done = done;
            last_progress = now;
        }
        if (now - last_print > 10000000000ull) {
            printf("# sfuzz: %lu operations after %lu s\n", (unsigned long)done, (unsigned long)((now - t0) / 1000000000ull));
            last_print = now;
        }
        stalled = now - last_progress > 20000000000ull || now - t0 > limit_s * 1000000000ull;
    }
    uint64_t ns = (uint64_t)sys_clock_ns() - t0, total = done_total();
    tap_ok(finished && total == ops * procs * threads,
           "sfuzz: %lu operations by %u processes x %u threads on %u cores in %lu.%02lu s (seed 0x%lx)",
           (unsigned long)total, procs, threads, ncpus, (unsigned long)(ns / 1000000000ull),
           (unsigned long)(ns % 1000000000ull / 10000000ull), (unsigned long)seed);
    for (unsigned w = 0; stalled && w < procs; w++)
        for (unsigned t = 0; t < threads; t++)
            if (wk[w].sh->t[t].done < ops)
                printf("# sfuzz: worker %u thread %u stopped at operation %lu (%s)\n", w, t,
                       (unsigned long)wk[w].sh->t[t].done, fz_op_names[wk[w].sh->t[t].cur_op % OP_COUNT]);
    report_ops();
    uint64_t checked = 0, wrong = 0;
    for (unsigned w = 0; w < procs; w++) {
        checked += wk[w].sh->kcall_checked;
        wrong += wk[w].sh->kcall_wrong;
    }
    tap_ok(checked > 0 && wrong == 0, "sfuzz: the kernel-placed NoOp service summed right %lu times, wrong %lu times",
           (unsigned long)(checked - wrong), (unsigned long)wrong);

    /* Limits: no worker (with its children) got past any of them. */
    bool within = true;
    int64_t used[MAX_PROCS][LIMIT_KINDS], max[MAX_PROCS][LIMIT_KINDS];
    for (unsigned w = 0; w < procs; w++) {
        for (unsigned k = 0; k < LIMIT_KINDS; k++) {
            used[w][k] = sys_space_usage(wk[w].r.space, k);
            max[w][k] = sys_space_usage(wk[w].r.space, k | LIMIT_QUERY_MAX);
            within = within && used[w][k] >= 0 && max[w][k] > 0 && used[w][k] <= max[w][k];
        }
    }
    tap_ok(within, "sfuzz: every worker stayed within its limits of memory, threads, handles and spaces");
    for (unsigned w = 0; w < procs; w++)
        printf("# worker %u usage (limit): memory %ld (%ld) bytes, threads %ld (%ld), handles %ld (%ld), spaces %ld (%ld)\n",
               w, (long)used[w][0], (long)max[w][0], (long)used[w][1], (long)max[w][1], (long)used[w][2],
               (long)max[w][2], (long)used[w][3], (long)max[w][3]);

    /* Kill them all, then everything must come back. */
    bool killed = true;
    int64_t nkilled[MAX_PROCS];
    for (unsigned w = 0; w < procs; w++) {
        nkilled[w] = sys_space_kill(wk[w].r.space);
        for (unsigned k = 0; k < LIMIT_KINDS; k++)
            used[w][k] = sys_space_usage(wk[w].r.space, k);
        killed = killed && nkilled[w] >= 0 && used[w][LIMIT_THREADS] == 0;
    }
    tap_ok(killed, "sfuzz: space_kill ends every worker and all the threads it counts");
    for (unsigned w = 0; w < procs; w++)
        printf("# worker %u: space_kill %ld; then counted to it: threads %ld, memory %ld, handles %ld, spaces %ld\n",
               w, (long)nkilled[w], (long)used[w][1], (long)used[w][0], (long)used[w][2], (long)used[w][3]);
    for (unsigned w = 0; w < procs; w++) {
        sys_handle_close(wk[w].r.thread);
        sys_handle_close(wk[w].r.space);
        sys_mem_unmap(self_space(), (uint64_t)wk[w].sh);
        sys_handle_close(wk[w].shared);
    }
    sys_handle_close((uint32_t)shared_ep);
    sys_handle_close((uint32_t)shared_n);
    int64_t keep = !strcmp(brk, "leak") ? sys_mem_create(0x10000, MEM_EAGER) : 0;
    bool back = usage_back(base, u);
    tap_ok(back, "sfuzz: after the kill the root's usage of every kind is back where it was");
    print_usage("root usage after", u);
    if (keep > 0)
        sys_handle_close((uint32_t)keep);

    tap_ok(root_alive((uint32_t)root_ro), "sfuzz: afterwards the root spawns a program, calls it, maps memory");
    back = usage_back(base, u);
    tap_ok(back, "sfuzz: and its usage is back again after that program exits");
    print_usage("root usage at the end", u);
    sys_handle_close((uint32_t)root_ro);
    sys_handle_close((uint32_t)kservice);
    tap_plan();
    return 0;
}
