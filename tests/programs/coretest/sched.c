/* Scheduling: preemption, round robin, timeouts, suspend/resume,
 * affinity, registers, TLS, CPU time, priority ceilings. */
#include "coretest.h"

static volatile int flag;
static volatile uint64_t spins[4];
static volatile int stop;

static void high_waiter(void *arg)
{
    sys_notify_wait((uint32_t)(uintptr_t)arg);
    flag = 1;
}

static void spinner(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    while (!stop)
        spins[i]++;
}

static volatile uint64_t regs_got;

static void regs_target(uint64_t x)
{
    regs_got = x;
    for (;;)
        sys_yield();
}

static volatile uint64_t tls_bad;

static void tls_thread(void *arg)
{
    uint64_t mine = (uint64_t)arg, v;
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(v));
    uint64_t keep = v;                                  /* the runtime's UTCB pointer */
    __asm__ volatile("msr tpidr_el0, %0" :: "r"(mine));
    for (int i = 0; i < 200; i++) {
        sys_yield();
        __asm__ volatile("mrs %0, tpidr_el0" : "=r"(v));
        if (v != mine)
            tls_bad++;
    }
    __asm__ volatile("msr tpidr_el0, %0" :: "r"(keep));
}

/* FP/SIMD registers belong to each thread: d8 keeps its value across
 * switches to another thread that uses it too (lazy save and restore). */
static volatile uint64_t fp_bad, fp_rounds;

static void fp_thread(void *arg)
{
    uint64_t mine = (uint64_t)arg, got;
    for (int i = 0; i < 200; i++) {
        __asm__ volatile(".arch_extension fp\n fmov d8, %0" :: "r"(mine + (uint64_t)i) : "d8");
        sys_yield();
        __asm__ volatile(".arch_extension fp\n fmov %0, d8" : "=r"(got) :: "d8");
        if (got != mine + (uint64_t)i)
            fp_bad++;
    }
    fp_rounds++;
}

static void fp_state(void)
{
    fp_bad = fp_rounds = 0;
    thread_spawn(fp_thread, (void *)0x1000000, 100, 0);
    thread_spawn(fp_thread, (void *)0x2000000, 100, 0);
    thread_spawn(fp_thread, (void *)0x3000000, 100, ncpus > 1 ? 1 : 0);
    for (int i = 0; i < 200 && fp_rounds < 3; i++)
        sleep_ms(5);
    tap_ok(fp_rounds == 3 && fp_bad == 0, "sched: each thread keeps its own FP/SIMD registers (%lu wrong)",
           (unsigned long)fp_bad);
}

static void preemption(void)
{
    uint32_t n = (uint32_t)sys_notify_create();
    flag = 0;
    thread_spawn(high_waiter, (void *)(uintptr_t)n, 150, 0);
    sys_yield();
    sys_notify_signal(n, 1);
    int seen = flag;                    /* before anything else can run */
    tap_ok(seen == 1, "sched: a higher-priority thread made ready runs at once");
    sys_handle_close(n);

    /* Round robin: two spinners of equal priority share a core. */
    stop = 0;
    spins[0] = spins[1] = 0;
    int64_t a = thread_spawn(spinner, (void *)0, 60, 0);
    int64_t b = thread_spawn(spinner, (void *)1, 60, 0);
    sleep_ms(300);
    uint64_t sa = spins[0], sb = spins[1];
    tap_ok(sa > 0 && sb > 0, "sched: equal priorities take turns (%lu / %lu)", (unsigned long)sa, (unsigned long)sb);

    /* A timeout wakes a high-priority thread over a spinning low one. */
    uint64_t t0 = now_ns();
    sleep_ms(40);
    uint64_t late = now_ns() - t0;
    tap_ok(late >= 40000000ull && late < 500000000ull, "sched: a sleeper preempts spinning threads on time (%lu ms)",
           (unsigned long)(late / 1000000));

    /* Timeouts finer than the tick: 1 ms sleeps end well before the next
     * 10 ms tick would (most of them: the host may stall the guest). */
    unsigned prompt = 0;
    uint64_t shortest = ~0ull;
    for (int i = 0; i < 20; i++) {
        uint64_t s0 = now_ns();
        sleep_ms(1);
        uint64_t took = now_ns() - s0;
        prompt += took >= 1000000ull && took < 4000000ull;
        shortest = MIN(shortest, took);
    }
    /* Waking at the next tick instead, about 3 in 10 would be under 4 ms. */
    tap_ok(prompt >= 12 && shortest >= 1000000ull, "sched: a 1 ms timeout takes 1 ms, not a tick (%u of 20 under 4 ms)",
           prompt);

    /* Suspend and resume. */
    sys_thread_suspend((uint32_t)a);
    sleep_ms(30);
    uint64_t s1 = spins[0];
    sleep_ms(30);
    uint64_t s2 = spins[0];
    sys_thread_resume((uint32_t)a);
    for (int i = 0; i < 100 && spins[0] == s2; i++)
        sleep_ms(10);                   /* it shares the core with b, in 50 ms slices */
    tap_ok(s1 == s2 && spins[0] > s2, "sched: a suspended thread stops; resumed, it runs again");
    tap_ok(sys_thread_resume((uint32_t)a) == -E_STATE, "sched: resuming a running thread is refused");

    /* Registers of a suspended thread. */
    sys_thread_suspend((uint32_t)b);
    struct petrel_regs r;
    int64_t e1 = sys_thread_read_regs((uint32_t)b, &r);
    bool in_spinner = r.pc >= (uint64_t)spinner && r.pc < (uint64_t)spinner + 256;
    r.pc = (uint64_t)regs_target;
    r.x[0] = 0x5eed;
    int64_t e2 = sys_thread_write_regs((uint32_t)b, &r);
    r.pc = 0xffffff8040080000ull;
    int64_t e3 = sys_thread_write_regs((uint32_t)b, &r);
    regs_got = 0;
    sys_thread_resume((uint32_t)b);
    for (int i = 0; i < 40 && !regs_got; i++)
        sleep_ms(10);                   /* b shares the core with a, in 50 ms slices */
    tap_ok(e1 == 0 && in_spinner && e2 == 0 && regs_got == 0x5eed && e3 == -E_INVAL,
           "sched: registers of a stopped thread can be read and rewritten (not to kernel addresses)");
    tap_ok(sys_thread_read_regs(self_thread(), &r) == -E_STATE, "sched: a running thread's registers cannot be read");

    /* CPU time accounting. */
    struct petrel_thread_stats st;
    sys_thread_stats((uint32_t)a, &st);
    tap_ok(st.cpu_ns > 1000000ull && st.cpu_ns < 10000000000ull && st.prio == 60,
           "sched: CPU time is accounted (%lu ms)", (unsigned long)(st.cpu_ns / 1000000));
    stop = 1;
    sleep_ms(20);
    sys_thread_kill((uint32_t)a);
    sys_thread_kill((uint32_t)b);

    /* TLS survives switches. */
    tls_bad = 0;
    thread_spawn(tls_thread, (void *)0x1111, 100, 0);
    thread_spawn(tls_thread, (void *)0x2222, 100, 0);
    sleep_ms(50);
    tap_ok(tls_bad == 0, "sched: each thread keeps its own TLS register");
}

/* thread_copy: a created thread takes a stopped thread's registers, TLS
 * and FP/SIMD registers (what fork needs). The source sets x19, TPIDR_EL0
 * and d8 and blocks; the copy, started elsewhere, stores what it finds. */
volatile uint64_t copy_seen[3];
void copy_target(void);
__asm__(".text\n.global copy_target\ncopy_target:\n.arch_extension fp\n"
        "adrp x1, copy_seen\nadd x1, x1, :lo12:copy_seen\n"
        "mrs x2, tpidr_el0\nfmov x3, d8\nstr x2, [x1, #8]\nstr x3, [x1, #16]\nstr x19, [x1]\n"
        "1: b 1b\n");

static void copy_source(void *arg)
{
    register uint64_t x0 __asm__("x0") = (uint64_t)(uintptr_t)arg;
    __asm__ volatile(".arch_extension fp\n"
                     "mov x9, #0x5151\nfmov d8, x9\nmrs x10, tpidr_el0\nmov x11, #0x7272\nmsr tpidr_el0, x11\n"
                     "mov x19, #0x1919\nsvc #62\nmsr tpidr_el0, x10\n"
                     : "+r"(x0) : : "x9", "x10", "x11", "x19", "d8", "memory");
}

static void thread_copy(void)
{
    int64_t n = sys_notify_create();
    int64_t src = thread_spawn(copy_source, (void *)(uintptr_t)n, 100, 0);
    sleep_ms(20);                               /* it blocks in notify_wait */
    uint64_t utcb = va_alloc(4096, 4096);
    int64_t c = sys_thread_create(self_space(), utcb);
    int64_t e_self = sys_thread_copy((uint32_t)c, self_thread());
    int64_t e_same = sys_thread_copy((uint32_t)c, (uint32_t)c);
    int64_t e = sys_thread_copy((uint32_t)c, (uint32_t)src);
    static uint64_t stack[64];
    copy_seen[0] = copy_seen[1] = copy_seen[2] = 0;
    int64_t e_start = sys_thread_start((uint32_t)c, (uint64_t)copy_target, (uint64_t)&stack[64], 0);
    for (int i = 0; i < 40 && !copy_seen[0]; i++)
        sleep_ms(10);
    int64_t e_again = sys_thread_copy((uint32_t)c, (uint32_t)src);
    tap_ok(e == 0 && e_start == 0 && copy_seen[0] == 0x1919 && copy_seen[1] == 0x7272 && copy_seen[2] == 0x5151,
           "sched: thread_copy gives a new thread another's registers, TLS and FP registers (%ld %ld %lx %lx %lx)", (long)e, (long)e_start, (unsigned long)copy_seen[0], (unsigned long)copy_seen[1], (unsigned long)copy_seen[2]);
    tap_ok(e_self == -E_STATE && e_same == -E_INVAL && e_again == -E_STATE,
           "sched: thread_copy refuses a running source, itself and a started copy");
    sys_thread_kill((uint32_t)c);
    sys_handle_close((uint32_t)c);
    sys_notify_signal((uint32_t)n, 1);
    sleep_ms(10);
    thread_reap((uint32_t)src);
    sys_handle_close((uint32_t)n);
}

/* A thread's FP registers survive its core going idle while it waits and
 * another thread using FP running there meanwhile. */
static volatile uint64_t idle_fp_got;

static void idle_fp_waiter(void *arg)
{
    uint64_t got;
    register uint64_t x0 __asm__("x0") = (uint64_t)(uintptr_t)arg;
    __asm__ volatile(".arch_extension fp\nmov x9, #0x3131\nfmov d9, x9\nsvc #62\nfmov %1, d9\n"
                     : "+r"(x0), "=r"(got) : : "x9", "d9", "memory");
    idle_fp_got = got;
}

static void idle_fp_clobber(void *arg)
{
    (void)arg;
    __asm__ volatile(".arch_extension fp\nmov x9, #0x4242\nfmov d9, x9\n" : : : "x9", "d9");
}

static void idle_fp(void)
{
    int64_t n = sys_notify_create();
    idle_fp_got = 0;
    int64_t a = thread_spawn(idle_fp_waiter, (void *)(uintptr_t)n, 100, 0);
    sleep_ms(20);                               /* a waits; the core idles with its FP state loaded */
    int64_t b = thread_spawn(idle_fp_clobber, NULL, 100, 0);
    sleep_ms(20);                               /* b ran on the same core and used FP */
    sys_notify_signal((uint32_t)n, 1);
    for (int i = 0; i < 40 && !idle_fp_got; i++)
        sleep_ms(5);
    tap_ok(idle_fp_got == 0x3131, "sched: FP registers survive an idle core and another FP thread (d9 %lx)",
           (unsigned long)idle_fp_got);
    thread_reap((uint32_t)a);
    thread_reap((uint32_t)b);
    sys_handle_close((uint32_t)n);
}

/* thread_read_fp and thread_write_fp reach the FP registers of a thread
 * waiting in a call (its state may still be loaded on the core it waits
 * on: the write must win), and thread_write_regs sets its condition flags. */
static volatile uint64_t fpw_got[2];

static void fp_regs_waiter(void *arg)
{
    uint64_t got, flags;
    register uint64_t x0 __asm__("x0") = (uint64_t)(uintptr_t)arg;
    __asm__ volatile(".arch_extension fp\nmov x9, #0x3131\nfmov d9, x9\ncmp xzr, xzr\nsvc #62\n"
                     "mrs %2, nzcv\nfmov %1, d9\n"
                     : "+r"(x0), "=r"(got), "=r"(flags) : : "x9", "d9", "memory", "cc");
    fpw_got[1] = flags;
    fpw_got[0] = got;
}

static void fp_regs(void)
{
    int64_t n = sys_notify_create();
    fpw_got[0] = fpw_got[1] = 0;
    int64_t a = thread_spawn(fp_regs_waiter, (void *)(uintptr_t)n, 100, 0);
    sleep_ms(20);                               /* a waits in notify_wait */
    static struct petrel_fpregs fp;
    struct petrel_regs r;
    int64_t e1 = sys_thread_read_fp((uint32_t)a, &fp);
    uint64_t d9 = fp.q[18];                     /* v9's low half */
    fp.q[18] = 0x6161;
    int64_t e2 = sys_thread_write_fp((uint32_t)a, &fp);
    int64_t e3 = sys_thread_read_regs((uint32_t)a, &r);
    r.pstate = (r.pstate & ~(0xfull << 28)) | (0x9ull << 28);     /* N and V, where it had Z and C */
    int64_t e4 = sys_thread_write_regs((uint32_t)a, &r);
    int64_t f1 = sys_thread_read_fp((uint32_t)a, (void *)8), f2 = sys_thread_write_fp((uint32_t)a, (void *)8);
    sys_notify_signal((uint32_t)n, 1);
    for (int i = 0; i < 40 && !fpw_got[0]; i++)
        sleep_ms(5);
    tap_ok(e1 == 0 && d9 == 0x3131 && e2 == 0 && fpw_got[0] == 0x6161,
           "sched: a waiting thread's FP registers can be read and rewritten (d9 %lx, then %lx)", (unsigned long)d9,
           (unsigned long)fpw_got[0]);
    tap_ok(e3 == 0 && e4 == 0 && (fpw_got[1] >> 28) == 0x9, "sched: thread_write_regs sets the condition flags (%lx)",
           (unsigned long)fpw_got[1]);
    tap_ok(f1 == -E_FAULT && f2 == -E_FAULT && sys_thread_read_fp(self_thread(), &fp) == -E_STATE &&
           sys_thread_write_fp(self_thread(), &fp) == -E_STATE && sys_thread_read_fp((uint32_t)n, &fp) == -E_BADHANDLE,
           "sched: thread_read_fp and thread_write_fp refuse bad buffers, a running thread, other objects");
    thread_reap((uint32_t)a);
    sys_handle_close((uint32_t)n);
}

static void affinity(void)
{
    stop = 0;
    spins[2] = 0;
    int64_t t = thread_spawn(spinner, (void *)2, 60, 0);
    struct petrel_thread_stats st;
    int64_t e = sys_thread_set_affinity((uint32_t)t, (uint64_t)(ncpus - 1));
    sleep_ms(30);
    sys_thread_stats((uint32_t)t, &st);
    uint64_t before = spins[2];
    for (int i = 0; i < 100 && spins[2] == before; i++)
        sleep_ms(10);
    tap_ok(e == 0 && st.cpu == ncpus - 1 && spins[2] > before, "sched: a thread moves to core %u and runs there", ncpus - 1);
    /* Its CPU time, read from this core while it runs on its own, counts
     * the slice it is in: it grows between two readings 1 ms apart,
     * whether or not a tick came between them. */
    int grew = 0;
    for (int i = 0; i < 20; i++) {
        struct petrel_thread_stats s1, s2;
        sys_thread_stats((uint32_t)t, &s1);
        uint64_t until = (uint64_t)sys_clock_ns() + 1000000;
        while ((uint64_t)sys_clock_ns() < until)
            ;
        sys_thread_stats((uint32_t)t, &s2);
        grew += s2.cpu_ns > s1.cpu_ns;
    }
    tap_ok(ncpus < 2 || grew == 20, "sched: a thread running on another core has its current slice counted (%d of 20)",
           grew);
    tap_ok(sys_thread_set_affinity((uint32_t)t, 64) == -E_INVAL, "sched: no such core is refused");
    stop = 1;
    sleep_ms(10);
    sys_thread_kill((uint32_t)t);
}

/* A thread's set of cores (thread_set_cpus, cpus_online): refused with
 * no core of the mask online and on what is not a thread or lacks
 * R_MANAGE; a thread starting with every core goes to an idle one; one
 * waiting in a busy core's run queue moves, at a tick, to a core of its
 * set that idles. */
static void cores(void)
{
    uint64_t online = (uint64_t)sys_cpus_online();
    tap_ok((online & 1) && (unsigned)__builtin_popcountll(online) == ncpus,
           "sched: cpus_online names the %u cores online (%#lx)", ncpus, (unsigned long)online);
    uint32_t n = (uint32_t)sys_notify_create();
    int64_t weak = sys_handle_dup(self_thread(), R_READ, 0);
    tap_ok(sys_thread_set_cpus(self_thread(), 0) == -E_INVAL && sys_thread_set_cpus(self_thread(), ~online) == -E_INVAL &&
           sys_thread_set_cpus(n, online) == -E_BADHANDLE && sys_thread_set_cpus(0x3ffff, online) == -E_BADHANDLE &&
           weak > 0 && sys_thread_set_cpus((uint32_t)weak, online) == -E_PERM,
           "sched: thread_set_cpus refuses no core online, other objects, bad handles, a handle without R_MANAGE");
    sys_handle_close(n);
    if (weak > 0)
        sys_handle_close((uint32_t)weak);
    if (ncpus < 2) {
        tap_ok(sys_thread_set_cpus(self_thread(), ~0ull) == 0, "sched: every core (one) is a thread's set");
        return;
    }
    /* This thread on core 0; every other core idle. */
    sys_thread_set_affinity(self_thread(), 0);
    stop = 0;
    spins[2] = spins[3] = 0;
    struct petrel_thread_stats st;
    int64_t a = thread_spawn(spinner, (void *)2, 60, THREAD_ANY_CORE);
    sleep_ms(20);
    int placed = a > 0 && sys_thread_stats((uint32_t)a, &st) == 0 && st.cpu != 0;
    tap_ok(placed, "sched: a thread starting with every core goes to an idle one (core %u)", a > 0 ? st.cpu : 0);
    stop = 1;
    thread_reap((uint32_t)a);
    /* Two spinners on core 0, one given every core afterwards: it
     * stays where it is allowed, until a tick finds it waiting there. */
    stop = 0;
    a = thread_spawn(spinner, (void *)2, 60, 0);
    int64_t b = thread_spawn(spinner, (void *)3, 60, 0);
    int64_t e = b > 0 ? sys_thread_set_cpus((uint32_t)b, online) : b;
    int moved = 0;
    for (int i = 0; i < 100 && !moved; i++) {
        sleep_ms(5);
        moved = sys_thread_stats((uint32_t)b, &st) == 0 && st.cpu != 0;
    }
    uint64_t before = spins[3];
    sleep_ms(20);
    tap_ok(a > 0 && e == 0 && moved && spins[3] > before,
           "sched: a thread waiting on a busy core moves to an idle core of its set and runs there");
    stop = 1;
    thread_reap((uint32_t)a);
    thread_reap((uint32_t)b);
    sys_thread_set_cpus(self_thread(), online);
    sys_thread_set_affinity(self_thread(), 0);
}

/* The clock user space reads itself (clock_ns: the counter, no kernel
 * entry) is the kernel's: between two sys_clock_ns, never before the
 * first nor after the second, many times over. */
static void user_clock(void)
{
    int in_order = 1;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = (uint64_t)sys_clock_ns(), b = clock_ns(), c = (uint64_t)sys_clock_ns();
        in_order &= a <= b && b <= c;
    }
    uint64_t t0 = clock_ns();
    sleep_ms(20);
    uint64_t slept = clock_ns() - t0;
    tap_ok(in_order && slept >= 20000000ull, "sched: clock_ns reads the kernel's clock (1,000 times between two "
           "sys_clock_ns; 20 ms of sleep took %lu us)", (unsigned long)(slept / 1000));
}

void test_sched(void)
{
    user_clock();
    fp_state();
    idle_fp();
    fp_regs();
    thread_copy();
    preemption();
    affinity();
    cores();
    tap_ok(sys_thread_set_priority(self_thread(), 256) == -E_INVAL, "sched: priority 256 is refused");
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", ep, R_WRITE } };
    struct spawn_result r;
    struct spawn_req req = { "corepeer", "mode=prio", 90, -1, g, 1, 0, 0, 0, 0, 0 };
    int64_t err = spawn(&req, &r);
    struct petrel_msg m = { 0 };
    int64_t rr = err ? err : sys_ipc_recv(ep, &m);
    tap_ok(rr == 0 && (int64_t)m.mr[0] == -E_PERM && m.mr[1] == 0,
           "sched: a thread cannot raise itself above the priority it was given");
    if (rr == 0)
        sys_ipc_reply(0, &m);
    sys_handle_close(ep);
}
