/*
 * bench: Petrel's side of `./petrel bench`, run as the root task. Each
 * benchmark warms up, times a loop with the virtual counter, subtracts
 * the cost of the counter reads and prints one BENCH line (see
 * bench/common/bench.h). Boot argument quick=1 runs every benchmark a few
 * times only (the test suite's check that they all still work);
 * only=NAME runs one.
 */
#include "petrel.h"
#include "noop_if.h"
#include "fs_if.h"
#include "fs_abi.h"
#include "../../common/bench.h"
#include "trace_abi.h"
#include "trace_points.h"

static uint64_t freq, overhead, scale = 1;
static unsigned ncpus;
static char only[32];

static bool wanted(const char *name)
{
    return !only[0] || strcmp(only, name) == 0;
}

static void report(const char *metric, uint64_t ticks, uint64_t iters)
{
    ticks = ticks > overhead ? ticks - overhead : 0;
    uint64_t ps = bench_ps(ticks, iters, freq);
    printf("BENCH %s petrel %lu.%03lu %lu\n", metric, (unsigned long)(ps / 1000), (unsigned long)(ps % 1000),
           (unsigned long)iters);
}

static void report_bw(const char *metric, uint64_t ticks, uint64_t bytes)
{
    uint64_t ns = ticks * (1000000000ull / freq);
    uint64_t mbs = ns ? bytes * 1000 / ns : 0;     /* bytes per microsecond = MB/s */
    printf("BENCH %s petrel %lu.000 %lu MB/s\n", metric, (unsigned long)mbs, (unsigned long)bytes);
}

#define TIME(iters, body) ({ \
    for (uint64_t _w = 0; _w < (iters) / 10 + 1; _w++) { body; } \
    uint64_t _t0 = bench_counter(); \
    for (uint64_t _i = 0; _i < (iters); _i++) { body; } \
    bench_counter() - _t0; })

#define LABEL_QUIT 0x1ff

static void null_syscall(void)
{
    uint64_t n = 20000 / scale;
    report("null_syscall", TIME(n, sys_null()), n);
}

/* Round trips of `len` message registers through ep. */
static uint64_t rtt(uint32_t ep, unsigned len, uint64_t n)
{
    struct petrel_msg m = { MSG_INFO(1, len, 0), { 1, 2, 3, 4, 5, 6 }, 0, 0 };
    return TIME(n, { m.info = MSG_INFO(1, len, 0); sys_ipc_call(ep, &m); });
}

static void quit(uint32_t ep)
{
    struct petrel_msg m = { MSG_INFO(LABEL_QUIT, 0, 0), { 0 }, 0, 0 };
    sys_ipc_call(ep, &m);
}

static void echo_thread(void *arg)
{
    uint32_t ep = (uint32_t)(uintptr_t)arg;
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(ep, &m);
    while (r == 0 && MSG_LABEL(m.info) != LABEL_QUIT)
        r = sys_ipc_reply_recv(ep, &m);
    sys_ipc_reply(0, &m);
}

static void ipc(void)
{
    uint64_t n = 10000 / scale;
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", ep, R_READ } };
    struct spawn_req req = { "benchpeer", "mode=echo", 0, -1, g, 1, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    if (spawn(&req, &r) == 0) {
        if (wanted("ipc_rtt_4b"))
            report("ipc_rtt_4b", rtt(ep, 1, n), n);
        if (wanted("ipc_rtt_124b"))
            report("ipc_rtt_124b", rtt(ep, 16, n), n);
        quit(ep);
    }
    if (wanted("ipc_rtt_same_as")) {
        uint32_t e2 = (uint32_t)sys_endpoint_create();
        thread_spawn(echo_thread, (void *)(uintptr_t)e2, 128, -1);
        report("ipc_rtt_same_as", rtt(e2, 1, n), n);
        quit(e2);
    }
    if (ncpus > 1 && wanted("ipc_rtt_cross_core")) {
        uint32_t e3 = (uint32_t)sys_endpoint_create();
        struct spawn_grant g3[] = { { "ep", e3, R_READ } };
        struct spawn_req req3 = { "benchpeer", "mode=echo", 0, 1, g3, 1, 0, 0, 0, 0, 0 };
        if (spawn(&req3, &r) == 0) {
            report("ipc_rtt_cross_core", rtt(e3, 1, n / 4), n / 4);
            quit(e3);
        }
    }
}

static uint32_t na, nb;

static void pong_thread(void *arg)
{
    for (;;) {
        if (sys_notify_wait(nb) < 0)
            return;
        sys_notify_signal(na, 1);
    }
}

static void notify_and_ctx(void)
{
    uint64_t n = 10000 / scale;
    na = (uint32_t)sys_notify_create();
    nb = (uint32_t)sys_notify_create();
    if (wanted("notify_wake")) {
        int64_t t = thread_spawn(pong_thread, NULL, 128, -1);
        uint64_t ticks = TIME(n, { sys_notify_signal(nb, 1); sys_notify_wait(na); });
        report("notify_wake", ticks, 2 * n);     /* two wake-ups per round */
        sys_thread_kill((uint32_t)t);
    }
    if (wanted("ctx_switch_2p")) {
        struct spawn_grant g[] = { { "ping", na, R_WRITE }, { "pong", nb, R_READ } };
        struct spawn_req req = { "benchpeer", "mode=pong", 0, -1, g, 2, 0, 0, 0, 0, 0 };
        struct spawn_result r;
        if (spawn(&req, &r) == 0) {
            uint64_t ticks = TIME(n, { sys_notify_signal(nb, 1); sys_notify_wait(na); });
            report("ctx_switch_2p", ticks, 2 * n);   /* two switches per round */
            sys_thread_kill(r.thread);
        }
    }
}

static volatile uint32_t fword_a, fword_b;

static void futex_pong(void *arg)
{
    for (;;) {
        while (fword_b == 0)
            sys_futex_wait((uint64_t)&fword_b, 0, 0);
        fword_b = 0;
        fword_a = 1;
        sys_futex_wake((uint64_t)&fword_a, 1);
    }
}

static void futex_wake(void)
{
    uint64_t n = 10000 / scale;
    int64_t t = thread_spawn(futex_pong, NULL, 128, -1);
    uint64_t ticks = TIME(n, {
        fword_b = 1;
        sys_futex_wake((uint64_t)&fword_b, 1);
        while (fword_a == 0)
            sys_futex_wait((uint64_t)&fword_a, 0, 0);
        fword_a = 0;
    });
    report("futex_wake", ticks, 2 * n);
    sys_thread_kill((uint32_t)t);
}

static void memory(void)
{
    if (wanted("page_fault")) {
        uint64_t pages = 1024 / scale, total = 0;
        for (int round = 0; round < 4; round++) {
            uint32_t h;
            volatile uint8_t *p = mem_alloc(pages * 4096, 0, &h);
            uint64_t t0 = bench_counter();
            for (uint64_t i = 0; i < pages; i++)
                p[i * 4096] = 1;
            total += bench_counter() - t0;
            sys_mem_unmap(self_space(), (uint64_t)p);
            sys_handle_close(h);
        }
        report("page_fault", total, 4 * pages);
    }
    if (wanted("map_unmap_4k")) {
        uint64_t n = 5000 / scale;
        int64_t m = sys_mem_create(4096, MEM_EAGER);
        uint64_t va = va_alloc(4096, 4096);
        uint64_t ticks = TIME(n, {
            sys_mem_map(self_space(), (uint32_t)m, va, 0, 4096, R_READ | R_WRITE);
            sys_mem_unmap(self_space(), va);
        });
        report("map_unmap_4k", ticks, n);
        sys_handle_close((uint32_t)m);
    }
}

static uint32_t joined;

static void short_thread(void *arg)
{
    sys_notify_signal(joined, 1);
}

static void creation(void)
{
    if (wanted("thread_create_exit")) {
        uint64_t n = 1000 / scale;
        joined = (uint32_t)sys_notify_create();
        uint64_t ticks = TIME(n, {
            int64_t t = thread_spawn(short_thread, NULL, 128, -1);
            sys_notify_wait(joined);
            thread_reap((uint32_t)t);
        });
        report("thread_create_exit", ticks, n);
    }
    if (wanted("process_spawn_exit")) {
        uint64_t n = 200 / scale;
        uint32_t parent = (uint32_t)sys_endpoint_create();
        struct spawn_grant g[] = { { "parent", parent, R_WRITE } };
        struct spawn_req req = { "benchnull", "", 0, -1, g, 1, 0, 0, 0, 0, 0 };
        uint64_t ticks = TIME(n, {
            struct spawn_result r;
            if (spawn(&req, &r) == 0) {
                struct petrel_msg m = { 0 };
                sys_ipc_recv(parent, &m);
                sys_ipc_reply(0, &m);
                sys_thread_kill(r.thread);
                sys_handle_close(r.thread);
                sys_handle_close(r.space);
            }
        });
        report("process_spawn_exit", ticks, n);
    }
}

static int64_t noop_function(uint64_t x)
{
    return (int64_t)x;
}

/* The hybrid kernel paper's Table 1, with our third column: a NoOp
 * function call, and a NoOp request to the NoOp service placed in the
 * kernel and in user space, through the same generated proxy. */
static void placement(void)
{
    uint64_t n = 10000 / scale;
    if (wanted("noop_function_call")) {
        int64_t (*volatile fn)(uint64_t) = noop_function;
        report("noop_function_call", TIME(n, fn(1)), n);
    }
    if (wanted("noop_kernel_service")) {
        uint32_t kep = (uint32_t)sys_endpoint_create();
        if (sys_service_bind(root_handle(), kep, NOOP_IF_ID, 0) == 0)
            report("noop_kernel_service", TIME(n, noop_ping(kep)), n);
    }
    if (wanted("noop_user_service")) {
        uint32_t uep = (uint32_t)sys_endpoint_create();
        struct spawn_grant g[] = { { "service", uep, R_READ } };
        struct spawn_req req = { "svc-noop", "", 0, -1, g, 1, 0, 0, 0, 0, 0 };
        struct spawn_result r;
        if (spawn(&req, &r) == 0) {
            report("noop_user_service", TIME(n, noop_ping(uep)), n);
            sys_thread_kill(r.thread);
        }
    }
}

/* File service throughput, kernel- and user-placed: 128 KiB files in
 * 16 KiB requests. */
static void file_rw(const char *where, uint32_t ep)
{
    static uint8_t chunk[16384];
    char m_read[32], m_write[32];
    snprintf(m_read, sizeof(m_read), "file_read_%s", where);
    snprintf(m_write, sizeof(m_write), "file_write_%s", where);
    if (!wanted(m_read) && !wanted(m_write))
        return;
    uint32_t fd;
    uint64_t n, pos, rounds = 20 / (scale > 20 ? 20 : scale);
    if (fs_open(ep, "/tmp/bench", 10, FS_O_READ | FS_O_WRITE | FS_O_CREATE, &fd) != 0)
        return;
    uint64_t t0 = bench_counter();
    for (uint64_t r = 0; r < rounds; r++) {
        fs_seek(ep, fd, 0, 0, &pos);
        for (int i = 0; i < 8; i++)
            fs_write(ep, fd, chunk, sizeof(chunk), &n);
    }
    uint64_t tw = bench_counter() - t0;
    t0 = bench_counter();
    for (uint64_t r = 0; r < rounds; r++) {
        fs_seek(ep, fd, 0, 0, &pos);
        for (int i = 0; i < 8; i++)
            fs_read(ep, fd, chunk, sizeof(chunk), &n);
    }
    uint64_t tr = bench_counter() - t0;
    fs_close(ep, fd);
    if (wanted(m_write))
        report_bw(m_write, tw, rounds * 8 * sizeof(chunk));
    if (wanted(m_read))
        report_bw(m_read, tr, rounds * 8 * sizeof(chunk));
}

static void files(void)
{
    uint32_t kep = (uint32_t)sys_endpoint_create();
    if (sys_service_bind(root_handle(), kep, FS_IF_ID, 0) == 0)
        file_rw("kernel", kep);
    uint32_t uep = (uint32_t)sys_endpoint_create();
    int64_t state = sys_mem_create(0x200000, MEM_PAGE_2M);
    struct spawn_grant g[] = { { "service", uep, R_READ }, { "state", (uint32_t)state, R_READ | R_WRITE },
                               { "root", root_handle(), R_ALL } };
    struct spawn_req req = { "svc-fs", "", 0, -1, g, 3, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    if (state > 0 && spawn(&req, &r) == 0) {
        file_rw("user", uep);
        sys_thread_kill(r.thread);
    }
}

/*
 * Interrupt latency beside a long kernel-service request: a thread of
 * priority 250 sleeps 50 us at a time (a futex timeout: its core's timer
 * interrupt) while a thread of priority 100 on core 0 reads 1 MiB at a
 * time from the file service placed in the kernel (system petrel), the
 * same placed in user space (petrel-user), a plain loop in user space
 * instead (petrel-loop), or nothing (petrel-idle). The sleeper runs on the
 * last core: core 0 itself on one core, core 1 with two. Reported: the
 * worst lateness of 1,000 wake-ups, as metric irq_latency_under_kservice.
 */
#define LAT_LOOP    ~0u             /* no service: a loop in user space */

static volatile int lat_stop, lat_reading;
static volatile uint64_t lat_worst;
static uint8_t lat_buf[1 << 20];

static void lat_reader(void *arg)
{
    uint32_t ep = (uint32_t)(uintptr_t)arg, fd;
    uint64_t n;
    while (!lat_stop && ep == LAT_LOOP) {
        lat_reading = 1;
        __asm__ volatile("" ::: "memory");
    }
    while (!lat_stop && ep != LAT_LOOP) {
        if (fs_open(ep, "/boot/pattern", 13, FS_O_READ, &fd) != 0)
            break;
        fs_read(ep, fd, lat_buf, sizeof(lat_buf), &n);
        fs_close(ep, fd);
        lat_reading = 1;
    }
    lat_reading = -1;
    for (;;)
        sleep_ms(1000);
}

static void lat_sleeper(void *arg)
{
    uint64_t iters = (uint64_t)(uintptr_t)arg, period = freq / 20000, worst = 0;
    for (uint64_t i = 0; i < iters; i++) {
        uint32_t zero = 0;
        uint64_t deadline = bench_counter() + period;
        sys_futex_wait((uint64_t)&zero, 0, 50000);
        uint64_t t = bench_counter();
        if (t > deadline && t - deadline > worst)
            worst = t - deadline;
    }
    lat_worst = worst + 1;
    for (;;)
        sleep_ms(1000);
}

/* The worst lateness (counter ticks) with a reader on ep (0: none, LAT_LOOP:
 * a loop); 0 if it could not run. */
static uint64_t lat_run(uint32_t ep, uint64_t iters)
{
    lat_stop = 0;
    lat_reading = 0;
    lat_worst = 0;
    int64_t r = 0;
    if (ep) {
        r = thread_spawn(lat_reader, (void *)(uintptr_t)ep, 100, 0);
        while (r > 0 && !lat_reading)
            sleep_ms(1);
    }
    int64_t s = r >= 0 && lat_reading >= 0 ? thread_spawn(lat_sleeper, (void *)(uintptr_t)iters, 250, (int)ncpus - 1) : -1;
    while (s > 0 && !lat_worst)
        sleep_ms(1);
    lat_stop = 1;
    if (r > 0) {
        while (lat_reading != -1)
            sleep_ms(1);
        thread_reap((uint32_t)r);
    }
    if (s > 0)
        thread_reap((uint32_t)s);
    return s > 0 ? lat_worst - 1 : 0;
}

static void lat_report(const char *system, uint64_t ticks)
{
    uint64_t ps = bench_ps(ticks, 1, freq);
    printf("BENCH irq_latency_under_kservice %s %lu.%03lu 1000\n", system, (unsigned long)(ps / 1000),
           (unsigned long)(ps % 1000));
}

static void irq_latency(void)
{
    if (!wanted("irq_latency_under_kservice"))
        return;
    uint64_t iters = 1000 / scale;
    uint32_t kep = (uint32_t)sys_endpoint_create();
    if (sys_service_bind(root_handle(), kep, FS_IF_ID, 0) == 0)
        lat_report("petrel", lat_run(kep, iters));
    uint32_t uep = (uint32_t)sys_endpoint_create();
    int64_t state = sys_mem_create(0x200000, MEM_PAGE_2M);
    struct spawn_grant g[] = { { "service", uep, R_READ }, { "state", (uint32_t)state, R_READ | R_WRITE },
                               { "root", root_handle(), R_ALL } };
    struct spawn_req req = { "svc-fs", "", 120, 0, g, 3, 0, 0, 0, 0, 0 };
    struct spawn_result sr;
    if (state > 0 && spawn(&req, &sr) == 0) {
        lat_report("petrel-user", lat_run(uep, iters));
        sys_thread_kill(sr.thread);
    }
    lat_report("petrel-loop", lat_run(LAT_LOOP, iters));
    lat_report("petrel-idle", lat_run(0, iters));
}

static void bandwidth(void)
{
    uint64_t bytes = (8ull << 20) / scale;
    uint8_t *a = mem_alloc(bytes, MEM_EAGER, NULL), *b = mem_alloc(bytes, MEM_EAGER, NULL);
    if (!a || !b)
        return;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    if (wanted("mem_read_bw")) {
        bw_read(a, bytes);
        uint64_t t0 = bench_counter();
        for (int i = 0; i < 4; i++)
            bw_read(a, bytes);
        report_bw("mem_read_bw", bench_counter() - t0, 4 * bytes);
    }
    if (wanted("mem_copy_bw")) {
        bw_copy(b, a, bytes);
        uint64_t t0 = bench_counter();
        for (int i = 0; i < 4; i++)
            bw_copy(b, a, bytes);
        report_bw("mem_copy_bw", bench_counter() - t0, 4 * bytes);
    }
}

/* The monitor (idl/tracepoints.toml): a system call that is no leaf (a
 * signal to a notification nobody waits on) passes two tracepoint sites,
 * syscall_enter and syscall_exit. Timed with every tracepoint off, then
 * with syscall_enter on (one event recorded a call); on a kernel built
 * without tracepoints (trace_open refuses) the same loop is the base.
 * bench.py makes monitor_event (on - off) and monitor_off ((off - base) / 2)
 * of them. monitor_emit: a user-placed service's event, a trace_emit call;
 * monitor_emit_many: one as a user-placed service records it now, stored
 * stamped into its batch and handed over with 15 others in one
 * trace_emit_many (services/env/user_env.c), a sixteenth of the whole. */
#define EMIT_BATCH 16

static struct trace_event batch[EMIT_BATCH] __attribute__((aligned(1024)));     /* (inside a page, as user_env.c's) */

static __attribute__((noinline)) int64_t emit_batch(uint32_t h)
{
    for (unsigned i = 0; i < EMIT_BATCH; i++) {
        struct trace_event *e = &batch[i];
        __asm__ volatile("mrs %0, cntvct_el0" : "=r"(e->time));
        e->id = TP_TCP_CWND;
        e->arg[0] = 1;
        e->arg[1] = 2;
        e->arg[2] = 3;
        e->arg[3] = 4;
        e->arg[4] = i;
    }
    return sys_trace_emit_many(h, batch, EMIT_BATCH);
}

static void monitor(void)
{
    if (!wanted("monitor_event") && !wanted("monitor_off") && !wanted("monitor_emit") &&
        !wanted("monitor_emit_many"))
        return;
    uint64_t n = 20000 / scale;
    uint32_t note = (uint32_t)sys_notify_create();
    int64_t h = sys_trace_open(root_handle());
    if (h < 0) {
        report("monitor_path_base", TIME(n, sys_notify_signal(note, 1)), n);
        sys_handle_close(note);
        return;
    }
    for (unsigned w = 0; w < 4; w++)
        sys_trace_ctl((uint32_t)h, w, 0, ~0ull);
    report("monitor_path_off", TIME(n, sys_notify_signal(note, 1)), n);
    sys_trace_ctl((uint32_t)h, TP_SYSCALL_ENTER / 64, 1ull << (TP_SYSCALL_ENTER % 64), 0);
    report("monitor_path_on", TIME(n, sys_notify_signal(note, 1)), n);
    sys_trace_ctl((uint32_t)h, TP_SYSCALL_ENTER / 64, 0, ~0ull);
    /* A user-placed service's event: the trace_emit system call. */
    uint64_t point = (uint64_t)TP_TCP_CWND << 32 | (uint32_t)h;
    sys_trace_ctl((uint32_t)h, TP_TCP_CWND / 64, 1ull << (TP_TCP_CWND % 64), 0);
    report("monitor_emit", TIME(n, sys_trace_emit(point, 1, 2, 3, 4, 5)), n);
    report("monitor_emit_many", TIME(n / EMIT_BATCH, emit_batch((uint32_t)h)), n / EMIT_BATCH * EMIT_BATCH);
    sys_trace_ctl((uint32_t)h, TP_TCP_CWND / 64, 0, ~0ull);
    sys_handle_close((uint32_t)h);
    sys_handle_close(note);
}

int main(const struct petrel_bootinfo *bi)
{
    freq = bench_freq();
    ncpus = bi->ncpus;
    char q[8];
    if (start_arg("quick", q, sizeof(q)))
        scale = 100;
    start_arg("only", only, sizeof(only));
    uint64_t t0 = bench_counter();
    for (int i = 0; i < 100; i++)
        (void)bench_counter();
    overhead = (bench_counter() - t0) / 100;
    printf("BENCH-START petrel cores=%u\n", ncpus);
    if (wanted("null_syscall"))
        null_syscall();
    ipc();
    notify_and_ctx();
    if (wanted("futex_wake"))
        futex_wake();
    memory();
    creation();
    placement();
    files();
    irq_latency();
    bandwidth();
    monitor();
    printf("BENCH-END petrel\n");
    return 0;
}
