/*
 * Reproducers of holes found in a security review of the kernel: each
 * check states the behaviour the kernel should have, so it fails (or the
 * kernel panics) until the hole is closed. Run one per boot with
 * `only=review hole=NAME` (tests/guest/cases.toml: review/NAME); they are
 * not part of the default coretest run.
 */
#include "coretest.h"

static int64_t peer_as(const char *mode, uint32_t ep, const char *extra_name, uint32_t extra, uint64_t mem_limit,
                       struct spawn_result *r)
{
    char args[64];
    snprintf(args, sizeof(args), "mode=%s", mode);
    struct spawn_grant g[] = { { "ep", ep, R_WRITE }, { extra_name, extra, R_READ | R_WRITE } };
    struct spawn_req req = { "corepeer", args, 0, -1, g, extra ? 2 : 1, 0, mem_limit, 0, 0, 0 };
    return spawn(&req, r);
}

static int64_t peer(const char *mode, uint32_t ep, uint32_t extra, uint64_t mem_limit, struct spawn_result *r)
{
    return peer_as(mode, ep, "dev", extra, mem_limit, r);
}

/* Receive the peer's report (a call) and answer it. */
static int64_t hear(uint32_t ep, struct petrel_msg *m)
{
    int64_t rr = sys_ipc_recv(ep, m);
    if (rr == 0) {
        struct petrel_msg a = { 0 };
        sys_ipc_reply(0, &a);
    }
    return rr;
}

/* Let a peer that has reported finish, then close our handles to it. */
static void reap_peer(struct spawn_result *r)
{
    wait_state(r->thread, THREAD_DEAD, 1000);
    sys_handle_close(r->thread);
    sys_handle_close(r->space);
}

/* notify_bind on a dead thread: a dangling pointer an unprivileged
 * process turns into a kernel write through an address it chooses. */
static void deadbind(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = peer("deadbind", ep, 0, 0, &r);
    int64_t rr = err ? err : hear(ep, &m);
    tap_ok(rr == 0 && (int64_t)m.mr[0] < 0,
           "review: notify_bind on a dead thread is refused (%s), and the kernel survives the signal",
           rr == 0 ? error_str((int64_t)m.mr[0]) : error_str(rr));
}

/* thread_set_fault_handler on a dead thread: the process's space is
 * never freed (nor its page tables, ASID, and its parent's charges). */
static void deadfault(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    int64_t spaces0 = sys_space_usage(self_space(), LIMIT_SPACES);
    int64_t mem0 = sys_space_usage(self_space(), LIMIT_MEMORY);
    int64_t set = 0;
    for (int round = 0; round < 4; round++) {
        struct spawn_result r;
        struct petrel_msg m = { 0 };
        int64_t err = peer("deadfault", ep, 0, 0, &r);
        int64_t rr = err ? err : hear(ep, &m);
        if (rr == 0)
            set = (int64_t)m.mr[0];
        if (!err)
            reap_peer(&r);
        printf("# review: deadfault round %d: fault handler on a dead thread: %s; our usage now %ld spaces, "
               "%ld KiB (before: %ld, %ld KiB)\n", round, error_str(set),
               (long)sys_space_usage(self_space(), LIMIT_SPACES), (long)(sys_space_usage(self_space(), LIMIT_MEMORY) >> 10),
               (long)spaces0, (long)(mem0 >> 10));
    }
    int64_t spaces1 = sys_space_usage(self_space(), LIMIT_SPACES);
    tap_ok(spaces1 == spaces0,
           "review: four exited processes that set a fault handler on a dead thread leave no space behind "
           "(%ld spaces before, %ld after)", (long)spaces0, (long)spaces1);
}

/* How many bytes a hog process can take now (it is killed afterwards). */
static uint64_t hog_measure(uint32_t ep)
{
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = peer("hog", ep, 0, 0, &r);
    int64_t rr = err ? err : sys_ipc_recv(ep, &m);
    uint64_t taken = rr == 0 ? m.mr[0] : 0;
    if (rr == 0) {
        struct petrel_msg a = { 0 };
        sys_ipc_reply(0, &a);
    }
    if (!err) {
        sys_space_kill(r.space);
        sys_handle_close(r.space);
        sys_handle_close(r.thread);
    }
    return taken;
}

/* kmalloc keeps every frame a size class ever took: a process within a
 * 32 MiB limit leaves several times that behind, charged to nobody. */
static void kfill(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    uint64_t before = hog_measure(ep);
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = peer("kfill", ep, 0, 32ull << 20, &r);
    int64_t rr = err ? err : hear(ep, &m);
    if (!err)
        reap_peer(&r);
    uint64_t after = hog_measure(ep);
    int64_t lost = (int64_t)(before - after);
    printf("# review: kfill: %lu objects; a hog took %lu MiB before, %lu MiB after\n", (unsigned long)m.mr[0],
           (unsigned long)(before >> 20), (unsigned long)(after >> 20));
    tap_ok(rr == 0 && lost < (4 << 20),
           "review: a process with a 32 MiB limit, once it exited, leaves no kernel memory behind (%ld MiB gone)",
           (long)(lost >> 20));
}

/* A device mapping passed to a system call as a buffer. */
static void devptr(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    int64_t dev = sys_mem_create_phys(root_handle(), 0x09010000, 0x1000);     /* the PL031 RTC of virt */
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = dev < 0 ? dev : peer("devptr", ep, (uint32_t)dev, 0, &r);
    int64_t rr = err ? err : hear(ep, &m);
    tap_ok(rr == 0 && m.mr[0] == 0 && (int64_t)m.mr[1] == -E_FAULT,
           "review: a driver passing its device mapping to debug_write gets E_FAULT (%s)",
           rr == 0 ? error_str((int64_t)m.mr[1]) : error_str(rr));
}

/* The reply to an ordinary call after a fault whose handler went away. */
static void stickyfault(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = peer("stickyfault", ep, 0, 0, &r);
    int64_t rr = err ? err : hear(ep, &m);
    tap_ok(rr == 0 && m.mr[0] != 0xbad,
           "review: a reply to an ordinary call cannot set the caller's pc (%s)",
           rr != 0 ? error_str(rr) : m.mr[0] == 0xbad ? "it did" : "it did not");
}

/* Handles passed to a kernel-placed service method that takes none. */
static void svchandles(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    uint32_t svc = (uint32_t)sys_endpoint_create();
    int64_t bound = sys_service_bind(root_handle(), svc, 2, 0);                 /* the file service, in the kernel */
    uint64_t before = hog_measure(ep);
    int64_t spaces0 = sys_space_usage(self_space(), LIMIT_SPACES);
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = bound ? bound : peer_as("svchandles", ep, "svc", svc, 8ull << 20, &r);
    int64_t rr = err ? err : hear(ep, &m);
    if (!err)
        reap_peer(&r);
    uint64_t after = hog_measure(ep);
    int64_t lost = (int64_t)(before - after);
    int64_t spaces1 = sys_space_usage(self_space(), LIMIT_SPACES);
    printf("# review: svchandles: %lu calls; a hog took %lu MiB before, %lu MiB after; spaces %ld -> %ld\n",
           (unsigned long)m.mr[0], (unsigned long)(before >> 20), (unsigned long)(after >> 20), (long)spaces0,
           (long)spaces1);
    tap_ok(rr == 0 && lost < (4 << 20) && spaces1 == spaces0,
           "review: handles passed to a kernel-placed service that refuses the request are released "
           "(%ld MiB gone, %ld spaces left behind)", (long)(lost >> 20), (long)(spaces1 - spaces0));
}

/* PPI 30, the EL1 physical timer, which every EL0 program may program
 * (CNTKCTL_EL1.EL0PTEN). */
static volatile int64_t ppi_irq;
static volatile int ppi_bound, ppi_armed, ppi_done;
static uint32_t ppi_n;

static void ppi_bind_on_cpu1(void *arg)
{
    ppi_irq = sys_irq_create(root_handle(), 30);
    if (ppi_irq > 0)
        sys_irq_bind((uint32_t)ppi_irq, ppi_n, 1);      /* enables the line on cpu1 */
    ppi_bound = 1;
}

static void ppi_arm_on_cpu1(void *arg)
{
    __asm__ volatile("msr cntp_tval_el0, %0; msr cntp_ctl_el0, %1; isb" :: "r"(0ull), "r"(1ull) : "memory");
    ppi_armed = 1;
    sleep_ms(2);
    __asm__ volatile("msr cntp_ctl_el0, %0; isb" :: "r"(0ull) : "memory");
    ppi_done = 1;
}

/* A driver binds a per-core interrupt on cpu1 and closes it from cpu0:
 * with GICv2 (banked enables) the line stays enabled on cpu1 with no
 * handler, and any program there that arms the EL0-accessible physical
 * timer leaves cpu1 taking "unexpected interrupt" forever. */
static void ppistorm(void)
{
    if (ncpus < 2) {
        tap_ok(false, "review: ppistorm needs two cores");
        return;
    }
    ppi_n = (uint32_t)sys_notify_create();
    thread_spawn(ppi_bind_on_cpu1, NULL, 150, 1);
    for (int i = 0; i < 100 && !ppi_bound; i++)
        sleep_ms(1);
    int64_t closed = ppi_irq > 0 ? sys_handle_close((uint32_t)ppi_irq) : ppi_irq;   /* from cpu0 */
    thread_spawn(ppi_arm_on_cpu1, NULL, 150, 1);
    for (int i = 0; i < 300 && !ppi_done; i++)
        sleep_ms(1);
    tap_ok(closed == 0 && ppi_done,
           "review: after a per-core interrupt object is closed from another core, arming the physical timer "
           "on the first core does not stop it (%s)", ppi_done ? "it runs" : "cpu1 never came back");
}

static volatile int probe_stop;
static volatile uint64_t probe_worst, probe_calls;

/* On cpu1: how long does the cheapest system call take, at worst? */
static void probe(void *arg)
{
    while (!probe_stop) {
        uint64_t t0 = (uint64_t)sys_clock_ns();
        sys_null();
        uint64_t t1 = (uint64_t)sys_clock_ns();
        if (t1 - t0 > probe_worst)
            probe_worst = t1 - t0;
        probe_calls++;
    }
}

/* An unprivileged process holds the kernel lock for long stretches. */
static void bkl(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    if (ncpus > 1)
        thread_spawn(probe, NULL, 100, 1);
    sleep_ms(500);
    printf("# review: bkl: baseline: a null system call on cpu1 took up to %lu us (%lu calls)\n",
           (unsigned long)(probe_worst / 1000), (unsigned long)probe_calls);
    probe_worst = 0;
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = peer("bkl", ep, 0, 32ull << 20, &r);
    int64_t rr = err ? err : hear(ep, &m);
    probe_stop = 1;
    printf("# review: bkl: %lu empty L3 tables; its worst mem_map/mem_unmap took %lu ms; "
           "a null system call on cpu1 took up to %lu ms (%lu calls)\n", (unsigned long)m.mr[0],
           (unsigned long)(m.mr[1] / 1000000), (unsigned long)(probe_worst / 1000000), (unsigned long)probe_calls);
    /* The other core's wait is host time under TCG (a loaded host stalls
     * virtual cores for seconds): reported, but only the attacker's own
     * calls are judged. */
    tap_ok(rr == 0 && m.mr[1] < 50000000,
           "review: no system call of a process with a 32 MiB limit holds the kernel for 50 ms or more "
           "(worst %lu ms; other core waited up to %lu ms)", (unsigned long)(m.mr[1] / 1000000),
           (unsigned long)(probe_worst / 1000000));
}

static uint32_t pi_ep;
static volatile int pi_sent;

static void pi_sender(void *arg)
{
    struct petrel_msg m = { MSG_INFO(1, 0, 0), { 0 }, 0, 0 };
    sys_ipc_send(pi_ep, &m);        /* queues: the server is busy */
    pi_sent = 1;
}

/* A process started at priority 20 keeps priority 200 lent by a send. */
static void pi(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    pi_ep = (uint32_t)sys_endpoint_create();
    char args[] = "mode=pi";
    struct spawn_grant g[] = { { "ep", ep, R_WRITE }, { "pi", pi_ep, R_READ } };
    struct spawn_req req = { "corepeer", args, 20, -1, g, 2, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    struct petrel_msg m = { MSG_INFO(1, 0, 0), { 0 }, 0, 0 };
    int64_t err = spawn(&req, &r);
    if (!err)
        sys_ipc_send(pi_ep, &m);                    /* the first message: now it serves pi */
    struct petrel_msg rep = { 0 };
    int64_t rr = err ? err : hear(ep, &rep);        /* it is busy */
    thread_spawn(pi_sender, NULL, 200, -1);
    if (rr == 0)
        rr = hear(ep, &rep);
    tap_ok(rr == 0 && rep.mr[2] <= 20,
           "review: a process started at priority 20 does not keep a priority lent by a send "
           "(before %lu, after receiving it %lu, later %lu)", (unsigned long)rep.mr[0], (unsigned long)rep.mr[1],
           (unsigned long)rep.mr[2]);
}

/* A client of the kernel-placed console holds every core out of the kernel. */
static void conprint(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    uint32_t svc = (uint32_t)sys_endpoint_create();
    int64_t bound = sys_service_bind(root_handle(), svc, 3, 0);                 /* the console, in the kernel */
    if (ncpus > 1)
        thread_spawn(probe, NULL, 100, 1);
    sleep_ms(200);
    probe_worst = 0;
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = bound ? bound : peer_as("conprint", ep, "svc", svc, 8ull << 20, &r);
    int64_t rr = err ? err : hear(ep, &m);
    probe_stop = 1;
    printf("# review: conprint: the print took %lu ms; a null system call on cpu1 waited up to %lu ms\n",
           (unsigned long)(m.mr[0] / 1000000), (unsigned long)(probe_worst / 1000000));
    /* Judged by how much one kernel entry may print: times here are host
     * time under TCG (a UART write waits for the host's pipe), reported only. */
    tap_ok(rr == 0 && m.mr[2] == 0 && m.mr[1] > 0 && m.mr[1] <= 1024,
           "review: a long print through the kernel-placed console is cut into short kernel entries "
           "(%lu bytes in one; it took %lu ms; other cores waited up to %lu ms)", (unsigned long)m.mr[1],
           (unsigned long)(m.mr[0] / 1000000), (unsigned long)(probe_worst / 1000000));
}

void test_review(void)
{
    char hole[32] = "";
    start_arg("hole", hole, sizeof(hole));
    struct { const char *name; void (*fn)(void); } holes[] = {
        { "deadbind", deadbind }, { "deadfault", deadfault }, { "kfill", kfill }, { "devptr", devptr },
        { "stickyfault", stickyfault }, { "svchandles", svchandles },
        { "ppistorm", ppistorm }, { "bkl", bkl }, { "pi", pi },
        { "conprint", conprint },
    };
    for (unsigned i = 0; i < sizeof(holes) / sizeof(holes[0]); i++)
        if (!hole[0] || !strcmp(hole, holes[i].name))
            holes[i].fn();
}
