/*
 * K2: the main kernel's side (regions, the shadow's core, starting it),
 * the shadow kernel's boot and loop, and the mailbox both use
 * (docs/design/k2.md). Compiled into both kernels; CONFIG_K2_SHADOW tells
 * them apart with plain `if`.
 *
 * The mailbox. Each direction is a ring of K2_RING_SLOTS 32-bit messages
 * in .k2hw with one producer (the sending kernel, under its tx_lock) and
 * one consumer. A message that makes an empty ring non-empty rings the
 * doorbell, SGI IRQ_SGI_K2, at the receiving kernel's doorbell core; the
 * receiver empties the ring before it leaves. Both sides close the race
 * the same way: publish your index, a full barrier, read the other's.
 * So either the sender sees the ring was empty and rings, or the
 * receiver sees the new message before it stops.
 *
 * What arrives moves from the ring into an inbox (private to the kernel)
 * and is handled there, by one core at a time. A sender that finds the
 * ring full handles its own inbox meanwhile (or, when it is itself
 * inside a handler, only empties its ring into the inbox), so two
 * kernels sending to each other never wait on each other forever: a
 * handler sends at most one message, a reply. Sequence numbers count
 * each direction mod 512; a gap or a repeat is counted (seq_bad).
 */
#include "k2.h"
#include "arch.h"
#include "cpu.h"
#include "fdt.h"
#include "irq.h"
#include "kernel.h"
#include "memory.h"
#include "platform.h"
#include "sched.h"
#include "space.h"
#include "timer.h"

struct k2_hw k2_hw __attribute__((section(".k2hw"), aligned(64)));
struct k2_shared k2_shared __attribute__((section(".k2shared"), aligned(64)));

extern struct fdt boot_fdt;
extern paddr_t boot_dtb_pa;
extern char __k2hw_start[], __k2hw_end[], __k2shared_start[], __k2shared_end[];

/* "K2SHADOW" in the shadow image's arm64 header, reserved field at 0x20 (boot.S). */
#define K2_SHADOW_MAGIC     0x574f44414853324bull
#define IMAGE_MAGIC_OFF     0x38
#define IMAGE_ROLE_OFF      0x20
#define IMAGE_SIZE_OFF      0x10

static bool want, image_ok, on;     /* main: asked for, shadow image found, running */
static struct k2_stats st;
static spinlock_t tx_lock = SPINLOCK_INIT, rx_lock = SPINLOCK_INIT;
#define INBOX 256
static uint32_t inbox[INBOX];
static uint32_t in_head, in_tail, tx_seq, rx_seq;   /* inbox and rx_seq: rx_lock; tx_seq: tx_lock */
static uint32_t handling;           /* 1 + the index of the core handling the inbox, or 0 */
static uint32_t data_next;          /* the flood's next DATA number (handlers only) */
static uint32_t job, job_arg;       /* shadow: a self-test job main asked for (K2_CTL_FLOOD...) */
static uint32_t unknown_type;

bool k2_on(void) { return on; }
bool k2_handling_here(void) { return __atomic_load_n(&handling, __ATOMIC_RELAXED) == this_cpu()->index + 1; }
const struct k2_stats *k2_stats(void) { return &st; }

static struct k2_ring *tx_ring(void) { return &k2_hw.ring[CONFIG_K2_SHADOW ? K2_TO_MAIN : K2_TO_SHADOW]; }
static struct k2_ring *rx_ring(void) { return &k2_hw.ring[CONFIG_K2_SHADOW ? K2_TO_SHADOW : K2_TO_MAIN]; }
static uint64_t peer_sgi_id(void) { return CONFIG_K2_SHADOW ? k2_shared.main_sgi_id : k2_shared.shadow_sgi_id; }

/* Move what arrived into the inbox, as far as it has room. */
static void pull(void)
{
    struct k2_ring *r = rx_ring();
    uint64_t flags = spin_lock_irqsave(&rx_lock);
    uint32_t h = r->head;
    while (in_tail - in_head < INBOX && h != __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE)) {
        uint32_t m = r->slot[h % K2_RING_SLOTS];
        if (k2_msg_seq(m) != rx_seq % K2_SEQ_MOD)
            st.seq_bad++;
        rx_seq++;
        inbox[in_tail++ % INBOX] = m;
        st.received++;
        h++;
        __atomic_store_n(&r->head, h, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* then read tail again: see the header */
    }
    spin_unlock_irqrestore(&rx_lock, flags);
}

/* The next message of the inbox, or false. */
static bool take(uint32_t *m)
{
    uint64_t flags = spin_lock_irqsave(&rx_lock);
    bool got = in_head != in_tail;
    if (got)
        *m = inbox[in_head++ % INBOX];
    spin_unlock_irqrestore(&rx_lock, flags);
    return got;
}

/* Is anything waiting, in the inbox or the ring? Under rx_lock, so that
 * a pull by another core is seen whole: before it, in the ring; after it,
 * in the inbox. */
static bool pending(void)
{
    struct k2_ring *r = rx_ring();
    uint64_t flags = spin_lock_irqsave(&rx_lock);
    bool any = in_head != in_tail || r->head != __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) || k2_mem_pending();
    spin_unlock_irqrestore(&rx_lock, flags);
    return any;
}

void k2_pull(void)
{
    pull();
}

static void handle_ctl(unsigned op, unsigned arg)
{
    switch (op) {
    case K2_CTL_HELLO:
        st.hello++;
        break;
    case K2_CTL_PING:
        k2_send(K2_CTL, k2_ctl(K2_CTL_PONG, arg));
        break;
    case K2_CTL_PONG:
        st.last_pong = arg;
        __atomic_add_fetch(&st.pongs, 1, __ATOMIC_RELEASE);
        break;
    case K2_CTL_DATA:
        if (arg != (data_next & 0xffff))
            st.data_bad++;
        data_next++;
        __atomic_add_fetch(&st.data_rx, 1, __ATOMIC_RELEASE);
        break;
    case K2_CTL_FLOOD:
    case K2_CTL_COUNT:
    case K2_CTL_DSM_COUNT:
    case K2_CTL_SB:
    case K2_CTL_CROSS:
    case K2_CTL_TOUCH:
    case K2_CTL_READ:
    case K2_CTL_JOB:
        job_arg = arg;
        __atomic_store_n(&job, op, __ATOMIC_RELEASE);
        break;
    case K2_CTL_FREEZE:
        k2_dsm_freeze();
        break;
    case K2_CTL_DONE:
        __atomic_add_fetch(&st.done, 1, __ATOMIC_RELEASE);
        break;
    case K2_CTL_WAKE:
        k2_wake();
        break;
    default:
        unknown_type++;
    }
}

static void handle(uint32_t m)
{
    switch (k2_msg_type(m)) {
    case K2_CTL:
        handle_ctl(k2_msg_pfn(m) >> 16, k2_msg_pfn(m) & 0xffff);
        break;
    case K2_GET_EXCL:
        k2_dsm_get(k2_msg_pfn(m));
        break;
    case K2_PUT_EXCL:
        k2_dsm_put(k2_msg_pfn(m));
        break;
    case K2_MEMCTL:
        k2_mem_handle(k2_msg_pfn(m) >> 16, k2_msg_pfn(m) & 0xffff);
        break;
    default:
        unknown_type++;     /* NightWatch's messages come later */
    }
}

/* Take and handle what arrived. A core that finds another handling (or
 * itself, from a handler's send) only moves messages into the inbox; the
 * handling core looks again after it lets go, so nothing waits there.
 * Handlers run with interrupts masked from before `handling` is taken to
 * after it is let go (an interrupt there could touch a DSM page, or find
 * `handling` taken by its own core), at most K2_BATCH messages at a time
 * so that this core's other interrupts come in between. */
#define K2_BATCH 64
void k2_poll(void)
{
    for (;;) {
        uint64_t flags = arch_irq_save();
        uint32_t free = 0;
        if (!__atomic_compare_exchange_n(&handling, &free, this_cpu()->index + 1, false, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED)) {
            pull();
            arch_irq_restore(flags);
            return;
        }
        uint32_t m;
        for (unsigned n = 0; n < K2_BATCH; n++) {
            pull();
            if (!take(&m))
                break;
            handle(m);
        }
        k2_dsm_poll();
        k2_mem_poll();
        __atomic_store_n(&handling, 0, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        bool more = pending();
        arch_irq_restore(flags);
        if (!more)
            return;
    }
}

/* Put one message on the ring to the other kernel; while it is full,
 * handle what arrives (handle_meanwhile) or only take it in. With a
 * deadline (a counter value, 0 for none), false if the ring stayed full
 * until then. */
static bool send(unsigned type, uint32_t pfn, bool handle_meanwhile, uint64_t deadline)
{
    struct k2_ring *r = tx_ring();
    bool waited = false;
    uint64_t flags;
    for (;;) {
        flags = spin_lock_irqsave(&tx_lock);
        if (r->tail - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) < K2_RING_SLOTS)
            break;
        spin_unlock_irqrestore(&tx_lock, flags);
        if (!waited)
            __atomic_add_fetch(&st.full_waits, 1, __ATOMIC_RELAXED);
        waited = true;
        if (deadline && arch_counter() > deadline)
            return false;
        if (handle_meanwhile)
            k2_poll();          /* the other side may be waiting for room here */
        else
            pull();
        arch_cpu_relax();
    }
    uint32_t t = r->tail;
    r->slot[t % K2_RING_SLOTS] = k2_msg(pfn, type, tx_seq++);
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);            /* then read head: see the header */
    bool was_empty = __atomic_load_n(&r->head, __ATOMIC_RELAXED) == t;
    st.sent++;
    spin_unlock_irqrestore(&tx_lock, flags);
    if (was_empty) {
        __atomic_add_fetch(&st.doorbells, 1, __ATOMIC_RELAXED);
        irq_chip()->send_sgi_id(peer_sgi_id(), IRQ_SGI_K2);
        /* A hint that the other kernel has work: QEMU's single-threaded
         * (icount) mode runs the next core at a yield, where it would
         * otherwise run this one to the end of its slice. */
        arch_cpu_relax();
    }
    return true;
}

void k2_send(unsigned type, uint32_t pfn)
{
    send(type, pfn, true, 0);
}

/* For a caller holding a lock a handler takes (the DSM's): waits for room
 * without handling anything, only moving what arrives into the inbox, so
 * the other kernel, which does the same, can always go on. */
void k2_send_nohandle(unsigned type, uint32_t pfn)
{
    send(type, pfn, false, 0);
}

static void doorbell(unsigned irq UNUSED, void *arg UNUSED)
{
    k2_poll();
}

/* Every tick of every core: a request owed (k2_dsm.c) is answered within
 * one tick even when nothing else polls, and a pressure probe that could
 * not act looks again. */
void k2_tick(void)
{
    if (CONFIG_K2_SHADOW || on) {
        k2_mem_tick();
        k2_poll();
    }
}

void k2_reset_test_counts(void)
{
    uint64_t flags = arch_irq_save();
    st.pongs = st.data_rx = st.data_bad = st.done = 0;
    data_next = 0;
    arch_irq_restore(flags);
}

/* ------------------------------------------------------------ main kernel */

static bool ram_covers(paddr_t base, uint64_t size)
{
    const struct mem_range *ram;
    unsigned n = mem_ram_ranges(&ram);
    for (unsigned i = 0; i < n; i++)
        if (ram[i].base <= base && base + size <= ram[i].base + ram[i].size)
            return true;
    return false;
}

static const char *off_why;         /* why `k2` was asked for and is off (said once the console is up) */
static NORETURN void k2_bench_base(void);

/*
 * Before the final map and the console (the early map still covers the
 * shadow's region), with `k2`: find the shadow's image, check that K2's
 * fixed regions are RAM nothing else uses, zero the shared statics, keep
 * them and the DSM area from the allocator, hide the shadow's region and
 * the DSM area from this kernel's map, and take console lines under the
 * shared lock. Without `k2` none of this: the regions are plain memory.
 */
void k2_layout(void)
{
    want = cmdline_has("k2");
    if (!want)
        return;
    paddr_t end = K2_DSM_PA + K2_DSM_SIZE;
    if (mem_total() > K2_MAX_RAM) {         /* each kernel's frame descriptors (16 B a page) stay in its region */
        off_why = "it runs with at most 2 GiB of RAM";
        return;
    }
    if (!ram_covers(K2_SHADOW_LOCAL_PA, end - K2_SHADOW_LOCAL_PA)) {
        off_why = "its regions (0x41000000-0x425fffff) are not all RAM";
        return;
    }
    if (mem_overlaps_reserved(K2_SHADOW_LOCAL_PA, end - K2_SHADOW_LOCAL_PA)) {   /* the device tree, the boot image */
        off_why = "QEMU put the boot image or the device tree in its regions (0x41000000-0x425fffff): "
                  "give the machine 128 MiB or more";
        return;
    }
    const uint8_t *img = phys_to_virt(K2_SHADOW_LOCAL_PA);
    uint64_t role, size;
    uint32_t magic;
    memcpy(&role, img + IMAGE_ROLE_OFF, 8);
    memcpy(&size, img + IMAGE_SIZE_OFF, 8);
    memcpy(&magic, img + IMAGE_MAGIC_OFF, 4);
    image_ok = magic == 0x644d5241 && role == K2_SHADOW_MAGIC && size <= K2_LOCAL_SIZE / 2;
    if (!image_ok) {
        off_why = "no shadow kernel image at 0x41000000 (./petrel run --k2 loads build/k2/shadow.bin there)";
        return;
    }
    memset(__k2hw_start, 0, (size_t)(__k2hw_end - __k2hw_start));
    memset(__k2shared_start, 0, (size_t)(__k2shared_end - __k2shared_start));
    mem_reserve(K2_GLOBAL_PA, K2_STATICS_SIZE);
    mem_hide(K2_SHADOW_LOCAL_PA, K2_LOCAL_SIZE);
    mem_hide(K2_DSM_PA, K2_DSM_SIZE);       /* mapped by the DSM (k2_dsm.c), in neither allocator */
    k2_mem_layout();                        /* the balloon pool: no allocator's until deflated */
    console_share_lock(&k2_hw.hwspin[K2_HWSPIN_CONSOLE]);
}

/* After smp_discover: the last core becomes the weak domain's. */
void k2_cores(void)
{
    if (!want)
        return;
    if (off_why) {
        kprintf("k2: %s: K2 off\n", off_why);
        return;
    }
    if (ncpus_present < 2) {
        kprintf("k2: the shadow kernel needs a core of its own (two cores or more): K2 off\n");
        k2_mem_off();
        return;
    }
    ncpus_present--;
    k2_shared.shadow_hwid = cpus[ncpus_present].hwid;
    cpus[ncpus_present].hwid = 0;
    on = true;
    kprintf("k2: main kernel on %u core%s, shadow kernel on the last (mpidr 0x%lx)\n",
            ncpus_present, ncpus_present > 1 ? "s" : "", k2_shared.shadow_hwid);
}

/* After the secondaries: start the shadow on its core and wait up to a
 * second for its HELLO. */
void k2_start(void)
{
    if (!on) {
        if (cmdline_has("k2.bench") && !want)
            k2_bench_base();
        return;
    }
    int err = k2_dsm_init_main();
    if (err) {
        kprintf("k2: the DSM area could not be set up: %s; K2 off\n", error_name(err));
        on = false;
        k2_mem_off();
        return;
    }
    k2_shared.main_sgi_id = irq_chip()->sgi_id();       /* this core takes the doorbell */
    if (irq_register_lockless(IRQ_SGI_K2, doorbell, NULL) != 0)
        panic("k2: the doorbell's SGI %u is taken", IRQ_SGI_K2);
    dsb(sy);
    uint64_t t0 = arch_counter();
    err = arch_cpu_start_at(k2_shared.shadow_hwid, K2_SHADOW_LOCAL_PA, boot_dtb_pa);
    if (err) {
        kprintf("k2: the shadow's core (mpidr 0x%lx) did not start: %s\n", k2_shared.shadow_hwid, error_name(err));
        on = false;
        k2_mem_off();
        return;
    }
    uint64_t deadline = t0 + arch_counter_freq();
    while (!READ_ONCE(st.hello) && arch_counter() < deadline) {
        k2_poll();
        arch_cpu_relax();
    }
    if (!READ_ONCE(st.hello)) {
        kprintf("k2: the shadow kernel did not report in within a second\n");
        on = false;
        k2_mem_off();
        return;
    }
    kprintf("k2: shadow kernel reported in after %lu us; %u shared interrupts routed to its core\n",
            (arch_counter() - t0) * 1000000 / arch_counter_freq(),
            irq_chip()->spis_routed_to(k2_shared.shadow_sgi_id));
    k2_mem_start();
    k2_irq_start();
    kprintf("k2: balloon pool of %u blocks of 16 MiB at 0x%lx: %u main's (the first %u for good), %u the shadow's\n",
            k2_shared.pool_blocks, K2_POOL_PA, k2_shared.main_blocks, k2_shared.main_floor, k2_shared.shadow_blocks);
    if (cmdline_has("k2.bench"))
        k2_bench();
}

/* At power-off: where the shared interrupts went, and the mailbox's counts. */
void k2_shutdown_report(void)
{
    if (!on)
        return;
    const struct irqchip *chip = irq_chip();
    kprintf("k2: at power-off %u shared interrupts enabled, %u of them routed to the shadow's core; "
            "mailbox: %lu messages sent, %lu received\n", chip->spis_enabled(),
            chip->spis_routed_to(k2_shared.shadow_sgi_id), st.sent, st.received);
    k2_irq_report();
    /* Whatever the programs did, the shadow still answers. */
    uint64_t before = __atomic_load_n(&st.pongs, __ATOMIC_ACQUIRE), deadline = arch_counter() + arch_counter_freq();
    bool sent = send(K2_CTL, k2_ctl(K2_CTL_PING, 0xffff), true, deadline);
    while (sent && __atomic_load_n(&st.pongs, __ATOMIC_ACQUIRE) == before && arch_counter() < deadline) {
        k2_poll();
        arch_cpu_relax();
    }
    kprintf("k2: the shadow kernel %s\n", __atomic_load_n(&st.pongs, __ATOMIC_ACQUIRE) != before ?
            "answered a ping at power-off" : "did not answer a ping within a second");
}

/* n mailbox round trips (PING, PONG); the counter ticks they took.
 * Answers whose argument is not their PING's are counted (pong_bad). */
uint64_t k2_ping(unsigned n)
{
    uint64_t t0 = arch_counter();
    for (unsigned i = 0; i < n; i++) {
        uint64_t before = __atomic_load_n(&st.pongs, __ATOMIC_ACQUIRE);
        k2_send(K2_CTL, k2_ctl(K2_CTL_PING, i));
        while (__atomic_load_n(&st.pongs, __ATOMIC_ACQUIRE) == before) {
            k2_poll();
            arch_cpu_relax();
        }
        st.pong_bad += READ_ONCE(st.last_pong) != (i & 0xffff) ||
                       __atomic_load_n(&st.pongs, __ATOMIC_ACQUIRE) != before + 1;
    }
    return arch_counter() - t0;
}

/* Ask the shadow for a job and wait for its DONE (handling the mailbox). */
static void shadow_job_wait(unsigned op, unsigned arg, uint64_t n)
{
    k2_reset_test_counts();
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(op, arg));
    while (!__atomic_load_n(&st.done, __ATOMIC_ACQUIRE)) {
        k2_poll();
        arch_cpu_relax();
    }
}

static uint64_t ticks_ns(uint64_t ticks, uint64_t n)
{
    return ticks * 1000000000 / arch_counter_freq() / MAX(n, 1);
}

/* The allocation rows: the paper's Table 4 sizes. */
static const struct { const char *name; unsigned order, n; } alloc_rows[] = {
    { "4k", 0, 64 }, { "256k", 6, 32 }, { "1m", 8, 16 },
};

/* This kernel's allocations, timed (k2_mem_time_allocs), as BENCH lines. */
static void bench_allocs(const char *who, const char *system)
{
    paddr_t pa[K2_GRAB];
    for (unsigned i = 0; i < ARRAY_SIZE(alloc_rows); i++) {
        uint64_t free_ticks, fail = 0, ops = (uint64_t)alloc_rows[i].n * K2_TIME_ROUNDS;
        k2_mem_time_allocs(pa, alloc_rows[i].n, alloc_rows[i].order, &free_ticks, &fail);     /* warm */
        uint64_t t = k2_mem_time_allocs(pa, alloc_rows[i].n, alloc_rows[i].order, &free_ticks, &fail);
        if (fail)
            kprintf("k2: bench: %lu allocations of order %u failed\n", fail, alloc_rows[i].order);
        kprintf("BENCH k2_alloc_%s_%s %s %lu %lu\n", alloc_rows[i].name, who, system, ticks_ns(t, ops), ops);
    }
}

/* k2.bench without K2 (the one-kernel system the rows compare with): the
 * main kernel's allocation rows, then power off. */
static NORETURN void k2_bench_base(void)
{
    bench_allocs("main", "petrel");
    kprintf("BENCH-END\n");
    arch_system_off();
}

/*
 * `./petrel bench --suite k2` (boot argument k2.bench, production kernel):
 * the mailbox's round trip and one DSM fault taken by each kernel, as
 * BENCH lines in nanoseconds of guest time (instructions under icount),
 * then power off. Pages come from the shadow after their hold is over.
 */
NORETURN void k2_bench(void)
{
    unsigned n = (unsigned)cmdline_get_u64("k2.bench", 1000);
    if (n < 10 || n > 256)
        n = 256;
    k2_ping(100);                                   /* warm */
    uint64_t t = k2_ping(10000);
    kprintf("BENCH k2_mbox_rtt petrel-k2 %lu 10000\n", ticks_ns(t, 10000));

    const struct k2_dsm_stats *ds = k2_dsm_stats();
    shadow_job_wait(K2_CTL_TOUCH, 100, n);          /* the shadow takes pages 100.. */
    uint64_t wait = arch_counter() + arch_counter_freq() / 1000;
    while (arch_counter() < wait)
        arch_cpu_relax();
    uint64_t f0 = ds->faults, t0 = ds->fault_ticks;
    for (unsigned i = 100; i < 100 + n; i++)
        (void)*(volatile uint64_t *)k2_dsm_page(i);
    kprintf("BENCH k2_dsm_fault_main petrel-k2 %lu %lu\n", ticks_ns(ds->fault_ticks - t0, ds->faults - f0),
            ds->faults - f0);

    wait = arch_counter() + arch_counter_freq() / 1000;
    while (arch_counter() < wait)
        arch_cpu_relax();
    uint64_t sf0 = k2_shared.shadow_dsm_faults, st0 = k2_shared.shadow_fault_ticks;
    shadow_job_wait(K2_CTL_READ, 100, n);           /* and takes them back */
    kprintf("BENCH k2_dsm_fault_shadow petrel-k2 %lu %lu\n",
            ticks_ns(k2_shared.shadow_fault_ticks - st0, k2_shared.shadow_dsm_faults - sf0),
            k2_shared.shadow_dsm_faults - sf0);

    /* Allocation: main's, then the shadow's with blocks of its own first
     * (its local region alone has too little for 64 MiB at a time). */
    bench_allocs("main", "petrel-k2");
    k2_shared.test_arg = 0;
    uint64_t deflated = k2_shared.mem[1].deflates;
    shadow_job_wait(K2_CTL_JOB, K2_MJ_DEFLATE, 6);
    deflated = k2_shared.mem[1].deflates - deflated;
    for (unsigned i = 0; i < ARRAY_SIZE(alloc_rows); i++) {
        k2_shared.test_arg = alloc_rows[i].order;
        shadow_job_wait(K2_CTL_JOB, K2_MJ_TIME, alloc_rows[i].n);
        uint64_t ops = (uint64_t)alloc_rows[i].n * K2_TIME_ROUNDS;
        if (k2_shared.test_fail)
            kprintf("k2: bench: %lu allocations of order %u failed in the shadow\n", k2_shared.test_fail,
                    alloc_rows[i].order);
        kprintf("BENCH k2_alloc_%s_shadow petrel-k2 %lu %lu\n", alloc_rows[i].name, ticks_ns(k2_shared.test_ticks[0], ops),
                ops);
    }
    shadow_job_wait(K2_CTL_JOB, K2_MJ_INFLATE, deflated);

    /* Balloons: four 16 MiB blocks each way, each kernel. */
    struct k2_mem_stats *mm = &k2_shared.mem[0], *sm = &k2_shared.mem[1];
    uint64_t d0 = mm->deflate_ticks, i0 = mm->inflate_ticks, dn = mm->deflates, in = mm->inflates;
    unsigned got = 0;
    while (got < 4 && k2_balloon_deflate() >= 0)
        got++;
    for (unsigned i = 0; i < got; i++)
        k2_balloon_inflate();
    if (got < 4)
        kprintf("k2: bench: the balloon had %u blocks for main of the 4 asked for\n", got);
    kprintf("BENCH k2_balloon_deflate_main petrel-k2 %lu %lu\n", ticks_ns(mm->deflate_ticks - d0, mm->deflates - dn),
            mm->deflates - dn);
    kprintf("BENCH k2_balloon_inflate_main petrel-k2 %lu %lu\n", ticks_ns(mm->inflate_ticks - i0, mm->inflates - in),
            mm->inflates - in);
    d0 = sm->deflate_ticks, i0 = sm->inflate_ticks, dn = sm->deflates, in = sm->inflates;
    shadow_job_wait(K2_CTL_JOB, K2_MJ_DEFLATE, 4);
    shadow_job_wait(K2_CTL_JOB, K2_MJ_INFLATE, sm->deflates - dn);
    kprintf("BENCH k2_balloon_deflate_shadow petrel-k2 %lu %lu\n", ticks_ns(sm->deflate_ticks - d0, sm->deflates - dn),
            sm->deflates - dn);
    kprintf("BENCH k2_balloon_inflate_shadow petrel-k2 %lu %lu\n", ticks_ns(sm->inflate_ticks - i0, sm->inflates - in),
            sm->inflates - in);
    kprintf("BENCH-END\n");
    k2_shutdown_report();
    arch_system_off();
}

/* ---------------------------------------------------------- shadow kernel */

/* Pages of [base, base + size) this kernel's map reaches. */
uint64_t k2_pages_mapped(paddr_t base, uint64_t size)
{
    uint64_t n = 0;
    for (paddr_t pa = base; pa < base + size; pa += 4096) {
        unsigned level;
        uint64_t *pte = mmu_walk(mmu_kernel_l1(), (vaddr_t)phys_to_virt(pa), &level);
        n += pte && (*pte & 1);
    }
    return n;
}

/* A self-test job main asked for (kernel/tests/test_k2.c), run from the
 * shadow's loop with interrupts on. */
static void shadow_job(unsigned op, unsigned arg)
{
    uint64_t n = READ_ONCE(k2_shared.test_n);
    spinlock_t *l = &k2_hw.hwspin[K2_HWSPIN_TEST];
    if (op == K2_CTL_FLOOD) {
        uint64_t full0 = st.full_waits;
        for (uint64_t i = 0; i < n; i++)
            k2_send(K2_CTL, k2_ctl(K2_CTL_DATA, (unsigned)i));
        while (__atomic_load_n(&st.data_rx, __ATOMIC_ACQUIRE) < n) {
            k2_poll();
            arch_cpu_relax();
        }
        k2_shared.shadow_data_rx = st.data_rx;
        k2_shared.shadow_data_bad = st.data_bad;
        k2_shared.shadow_full_waits = st.full_waits - full0;
        k2_shared.shadow_seq_bad = st.seq_bad;
        k2_reset_test_counts();
    } else if (op == K2_CTL_COUNT || op == K2_CTL_DSM_COUNT) {
        volatile uint64_t *c = op == K2_CTL_COUNT ? &k2_shared.counter : k2_dsm_page(0);
        for (uint64_t i = 0; i < n; i++) {
            spin_lock(l);
            (*c)++;
            spin_unlock(l);
        }
    } else if (op == K2_CTL_SB) {
        volatile uint64_t *x = k2_dsm_page(K2_SB_X), *y = k2_dsm_page(K2_SB_Y);
        for (uint64_t r = 1; r <= n; r++) {
            while (__atomic_load_n(&k2_shared.sb_round, __ATOMIC_ACQUIRE) < r)
                arch_cpu_relax();
            __atomic_store_n(&k2_shared.sb_ready, r, __ATOMIC_RELEASE);
            for (uint64_t d = (r * 2654435761u >> 7) % 64; d; d--)    /* a different start each round */
                arch_cpu_relax();
            *y = 1;
            uint64_t r2 = *x;
            k2_shared.sb_r2 = r2;
            __atomic_store_n(&k2_shared.sb_done, r, __ATOMIC_RELEASE);
        }
    } else if (op == K2_CTL_CROSS) {
        volatile uint64_t *p = k2_dsm_page(K2_CROSS_P), *q = k2_dsm_page(K2_CROSS_Q);
        __atomic_store_n(&k2_shared.sb_ready, 1, __ATOMIC_RELEASE);   /* main starts with us */
        for (uint64_t i = 0; i < n; i++) {
            q[1]++;
            p[1]++;
        }
    } else if (op == K2_CTL_JOB && arg >= K2_IJ_FIRST) {
        k2_irq_job(arg);
    } else if (op == K2_CTL_JOB) {
        k2_mem_job(arg);
    } else if (op == K2_CTL_TOUCH || op == K2_CTL_READ) {
        for (unsigned i = arg; i < arg + MAX(n, 1) && i < K2_DSM_PAGES; i++) {
            volatile uint64_t *w = k2_dsm_page(i);
            if (op == K2_CTL_TOUCH)
                *w = 0xfeed0000u + i;
            else
                (void)*w;
        }
    }
    k2_shared.shadow_dsm_faults = k2_dsm_stats()->faults;
    k2_shared.shadow_fault_ticks = k2_dsm_stats()->fault_ticks;
    k2_send(K2_CTL, k2_ctl(K2_CTL_DONE, op));
}

/*
 * The shadow kernel from its boot stub on. It owns one core, its local
 * region's frames and its own page tables, and attaches to what the main
 * kernel set up (the GIC's distributor, the UART) without resetting it:
 * it enables no shared interrupt, so every SPI stays routed to main.
 */
NORETURN void k2_shadow_main(paddr_t dtb_pa)
{
    boot_cpu_and_tree(dtb_pa);
    if (mem_discover(&boot_fdt, dtb_pa) != 0)
        arch_system_fail(3);
    mem_hide(K2_MAIN_LOCAL_PA, K2_LOCAL_SIZE);
    mem_hide(K2_DSM_PA, K2_DSM_SIZE);       /* pages come and go with the DSM */
    console_share_lock(&k2_hw.hwspin[K2_HWSPIN_CONSOLE]);
    if (k2_mem_init_shadow() != 0)          /* the global region: the pool's blocks only as deflated */
        arch_system_fail(5);
    arch_mmu_init_kernel(0, 0);
    if (platform_console_init(&boot_fdt, false) != 0)
        arch_system_fail(4);
    k2_shared.shadow_main_mapped = k2_pages_mapped(K2_MAIN_LOCAL_PA, K2_LOCAL_SIZE);

    cpus[0].hwid = arch_cpu_hwid();
    cpus[0].index = 0;
    sched_init_cpu(0);
    ncpus_present = 1;
    int err = frame_init();
    if (err)
        panic("k2 shadow: frame allocator: %s", error_name(err));
    if ((err = k2_dsm_init_shadow()) != 0)
        panic("k2 shadow: the DSM area's tables: %s", error_name(err));
    if ((err = irq_init(&boot_fdt, false)) != 0)
        panic("k2 shadow: no interrupt controller: %s", error_name(err));
    if ((err = timer_init(&boot_fdt)) != 0)
        panic("k2 shadow: no architectural timer: %s", error_name(err));
    irq_cpu_init();
    timer_cpu_init();
    cpus[0].online = 1;
    if (irq_register_lockless(IRQ_SGI_K2, doorbell, NULL) != 0)
        panic("k2 shadow: the doorbell's SGI is taken");
    k2_shared.shadow_sgi_id = irq_chip()->sgi_id();
    k2_mem_start();
    k2_shared.shadow_free_kib = frame_free_pages() * 4;
    k2_shared.shadow_managed_kib = frame_managed_pages() * 4;
    kprintf("k2: shadow kernel on mpidr 0x%lx (EL1, %s, image at 0x%lx): %lu KiB free of %lu KiB managed\n",
            cpus[0].hwid, irq_chip()->name, virt_to_phys(__kernel_start),
            k2_shared.shadow_free_kib, k2_shared.shadow_managed_kib);
    arch_irq_enable();
    k2_send(K2_CTL, k2_ctl(K2_CTL_HELLO, 0));

    for (;;) {
        arch_irq_disable();
        unsigned op = __atomic_exchange_n(&job, 0, __ATOMIC_ACQUIRE);
        if (!op) {
            uint64_t t0 = arch_counter();
            arch_wait_for_interrupt();  /* woken by a pending interrupt, taken below */
            k2_shadow_idle(arch_counter() - t0);
        }
        arch_irq_enable();
        if (op)
            shadow_job(op, READ_ONCE(job_arg));
    }
}
