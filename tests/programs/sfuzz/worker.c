/*
 * A fuzzing worker (mode=worker): a process of its own, with limits of
 * every kind set by the driver, running `threads=` fuzzing threads of
 * `ops=` operations each (ops.c) on different cores.
 *
 * Its main thread serves the fuzzing threads' faults (a load or store
 * in a scratch slot that is not mapped, read-only or over the memory
 * limit is resumed at the next instruction) and, woken every 10 ms by a
 * ticker through a bound notification, watches them: a fuzzing thread
 * that has waited in IPC for 40 ms (a call nobody answers, a
 * blocking send) is killed and replaced by a new thread that continues
 * its count. When all are done it tells the driver through the shared
 * page and waits to be killed: its victims live on until then.
 */
#include "fuzz.h"

#define FUZZ_STACK  0x10000ull
#define TICK_NS     10000000ull
#define STUCK_TICKS 4

struct fz_worker W;

static struct fz_ctx ctx[FZ_MAX_THREADS];
static uint32_t fuzzer[FZ_MAX_THREADS];     /* thread handles */
static uint64_t fuzz_stack[FZ_MAX_THREADS], fuzz_utcb[FZ_MAX_THREADS];
static volatile uint32_t finished_mask;
static uint32_t fault_ep, tick_n;

extern char thread_entry[];

static void fuzz_thread(void *arg)
{
    struct fz_ctx *c = arg;
    fz_run(c);
    __atomic_fetch_or(&finished_mask, 1u << c->index, __ATOMIC_SEQ_CST);
}

/* Start (or restart) fuzzing thread i on its stack, with faults to us. */
static int64_t fuzzer_start(unsigned i)
{
    int64_t t = sys_thread_create(W.own_space, fuzz_utcb[i]);
    if (t < 0)
        return t;
    uint64_t *top = (uint64_t *)(fuzz_stack[i] + FUZZ_STACK) - 2;
    top[0] = (uint64_t)fuzz_thread;
    top[1] = (uint64_t)&ctx[i];
    int64_t badged = sys_handle_dup(fault_ep, R_WRITE, i + 1);
    int64_t err = badged < 0 ? badged : sys_thread_set_fault_handler((uint32_t)t, (uint32_t)badged);
    if (badged > 0)
        sys_handle_close((uint32_t)badged);     /* the thread holds the endpoint now */
    if (!err)
        err = sys_thread_set_priority((uint32_t)t, W.prio);
    if (!err)
        err = sys_thread_set_affinity((uint32_t)t, (W.id * W.nthreads + i) % W.ncpus);
    if (!err)
        err = sys_thread_set_tls((uint32_t)t, fuzz_utcb[i]);
    if (!err)
        err = sys_thread_start((uint32_t)t, (uint64_t)thread_entry, (uint64_t)top, (uint64_t)top);
    if (err) {
        sys_thread_kill((uint32_t)t);
        sys_handle_close((uint32_t)t);
        return err;
    }
    fuzzer[i] = (uint32_t)t;
    return 0;
}

static void ticker(void *arg)
{
    static volatile uint32_t never;
    for (;;) {
        sys_futex_wait((uint64_t)&never, 0, TICK_NS);
        sys_notify_signal(tick_n, 1);
    }
}

/* A fuzzing thread stuck in IPC: kill it and start another in its place. */
static void watch(void)
{
    static struct fz_ctx shed = { FZ_MAX_THREADS, 0x5eed, NULL, 0, 0 };
    static uint64_t last[FZ_MAX_THREADS], still[FZ_MAX_THREADS];
    for (unsigned i = 0; i < W.nthreads; i++) {
        struct fz_thread_stats *st = &W.sh->t[i];
        if (finished_mask & (1u << i) || st->done != last[i] || !st->may_block) {
            last[i] = st->done;
            still[i] = 0;
            continue;
        }
        if (++still[i] < STUCK_TICKS)
            continue;
        still[i] = 0;
        sys_thread_suspend(fuzzer[i]);
        struct petrel_thread_stats ts;
        int64_t err = sys_thread_stats(fuzzer[i], &ts);
        bool waiting = !err && (ts.state == THREAD_SEND || ts.state == THREAD_RECV || ts.state == THREAD_REPLY);
        if (!waiting || !st->may_block) {
            sys_thread_resume(fuzzer[i]);
            continue;
        }
        sys_thread_kill(fuzzer[i]);
        sys_handle_close(fuzzer[i]);
        st->may_block = 0;
        st->count[st->cur_op][E_CLOSED]++;      /* the operation ends as a caller's would */
        st->done++;
        W.sh->rescues++;
        err = fuzzer_start(i);
        for (int tries = 0; err && tries < 8; tries++) {
            fz_shed(&shed, 8);          /* at our own limits: make room */
            err = fuzzer_start(i);
        }
        if (err) {
            printf("sfuzz: worker %u: cannot restart fuzzing thread %u: %s\n", W.id, i, error_str(err));
            __atomic_fetch_or(&finished_mask, 1u << i, __ATOMIC_SEQ_CST);
        }
    }
}

/* Serve faults and ticks until every fuzzing thread is done. */
static void serve(void)
{
    uint32_t all = (1u << W.nthreads) - 1;
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(fault_ep, &m);
    while (r == 0) {
        uint64_t label = MSG_LABEL(m.info);
        if (label == LABEL_NOTIFY) {
            watch();
            if ((finished_mask & all) == all)
                return;
            m.info = 0;
            r = sys_ipc_recv(fault_ep, &m);
            continue;
        }
        if (label == LABEL_FAULT && m.badge >= 1 && m.badge <= W.nthreads) {
            W.faults[m.badge - 1]++;
            W.sh->faults++;
            uint64_t pc = m.mr[FAULT_MR_PC];
            m.info = MSG_INFO(0, 2, 0);
            m.mr[0] = FAULT_REPLY_RESUME;
            m.mr[1] = pc + 4;               /* past the load or store */
        } else {
            m.info = MSG_INFO(0, 0, 0);     /* someone guessed our endpoint: an empty answer */
        }
        r = sys_ipc_reply_recv(fault_ep, &m);
    }
    printf("sfuzz: worker %u: fault server: %s\n", W.id, error_str(r));
}

int worker_main(void)
{
    W.id = (unsigned)fz_arg("id", 0);
    W.nthreads = (unsigned)MIN(fz_arg("threads", 2), FZ_MAX_THREADS);
    W.ncpus = (unsigned)MAX(fz_arg("cpus", 1), 1);
    W.ops = fz_arg("ops", 1000);
    W.seed = fz_arg("seed", 1);
    W.prio = (unsigned)fz_arg("prio", 100);
    W.trace = fz_arg("trace", 0) != 0;
    W.own_space = self_space();
    W.main_thread = self_thread();
    W.root_ro = start_handle("root");
    W.shared_ep = start_handle("shared_ep");
    W.shared_n = start_handle("shared_n");
    W.kservice = start_handle("kservice");
    uint64_t va = va_alloc(FZ_SHARED_SIZE, 4096);
    if (sys_mem_map(W.own_space, start_handle("shared"), va, 0, FZ_SHARED_SIZE, R_READ | R_WRITE) != 0) {
        printf("sfuzz: worker %u: no shared page\n", W.id);
        return 1;
    }
    W.sh = (struct fz_shared *)va;

    /* Victim stacks in our own space (the UTCBs come with the threads). */
    for (unsigned k = 0; k < FZ_VSLOTS; k++) {
        int64_t m = sys_mem_create(FZ_VICTIM_STACK, 0);
        if (m < 0 || sys_mem_map(W.own_space, (uint32_t)m, FZ_VICTIM_BASE + k * FZ_VICTIM_STRIDE, 0,
                                 FZ_VICTIM_STACK, R_READ | R_WRITE) != 0) {
            printf("sfuzz: worker %u: no victim stacks\n", W.id);
            return 1;
        }
        sys_handle_close((uint32_t)m);
    }
    for (unsigned i = 0; i < W.nthreads; i++) {
        fuzz_stack[i] = (uint64_t)mem_alloc(FUZZ_STACK, 0, NULL);
        fuzz_utcb[i] = va_alloc(4096, 4096);
        ctx[i] = (struct fz_ctx){ i, W.seed ^ ((i + 1) * 0x9e3779b97f4a7c15ull), &W.sh->t[i],
                                  FZ_TEMP_BASE + i * 0x100000, 0 };
        if (!fuzz_stack[i]) {
            printf("sfuzz: worker %u: no stacks\n", W.id);
            return 1;
        }
    }
    int64_t ep = sys_endpoint_create(), n = sys_notify_create();
    if (ep < 0 || n < 0 || sys_notify_bind(W.main_thread, (uint32_t)n) != 0) {
        printf("sfuzz: worker %u: no endpoint\n", W.id);
        return 1;
    }
    fault_ep = (uint32_t)ep;
    tick_n = (uint32_t)n;
    fz_table_init();
    fz_ops_init();

    /* Wait for the driver's word: it sets our limits first. */
    while (!W.sh->go)
        sys_futex_wait((uint64_t)&W.sh->go, 0, 0);
    if (thread_spawn(ticker, NULL, W.prio + 1, -1) < 0) {
        printf("sfuzz: worker %u: no ticker\n", W.id);
        return 1;
    }
    for (unsigned i = 0; i < W.nthreads; i++) {
        int64_t err = fuzzer_start(i);
        if (err) {
            printf("sfuzz: worker %u: fuzzing thread %u: %s\n", W.id, i, error_str(err));
            finished_mask |= 1u << i;
        }
    }
    serve();
    W.sh->finished = 1;
    sys_futex_wake((uint64_t)&W.sh->finished, 1);
    /* Our victims live on until the driver kills the whole process. */
    int64_t idle = sys_notify_create();
    for (;;)
        sys_notify_wait(idle > 0 ? (uint32_t)idle : tick_n);
}
