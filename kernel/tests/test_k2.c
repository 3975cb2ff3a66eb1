/*
 * K2's mailbox (core/k2.c): the message format on its own, and, when the
 * shadow kernel runs beside this one (boot argument k2), round trips, a
 * flood each way at once through the four-slot rings, and a counter both
 * kernels add to under a hardware spinlock. Run with `ktest=k2` (the
 * k2/mailbox cases of tests/guest/cases.toml); k2.n sets the flood's
 * length (default 1,000,000 each way).
 */
#include "ktest.h"
#include "k2.h"
#include "space.h"
#include "cpu.h"
#include "memory.h"
#include "irq.h"
#include "sched.h"
#include "timer.h"

#define SKIP_UNLESS_K2() do { if (!k2_on()) { ktest_result(true, "# SKIP no shadow kernel (boot argument k2)"); return; } } while (0)

KTEST(k2_formats, "k2: messages keep a 20-bit frame number, a 3-bit type and a 9-bit sequence number")
{
    static const uint32_t pfns[] = { 0, 1, 0x12345, K2_PFN_MAX - 1, K2_PFN_MAX };
    unsigned bad = 0, n = 0;
    for (unsigned p = 0; p < ARRAY_SIZE(pfns); p++)
        for (unsigned type = 0; type < 8; type++)
            for (unsigned seq = 0; seq < 2 * K2_SEQ_MOD; seq += 7) {
                uint32_t m = k2_msg(pfns[p], type, seq);
                bad += k2_msg_pfn(m) != pfns[p] || k2_msg_type(m) != type || k2_msg_seq(m) != seq % K2_SEQ_MOD;
                n++;
            }
    KT_CHECK(bad == 0, "%u of %u messages decoded wrong", bad, n);
    KT_CHECK(k2_msg_seq(k2_msg(0, 0, 511)) == 511 && k2_msg_seq(k2_msg(0, 0, 512)) == 0, "sequence 511 -> 0");
    KT_CHECK(k2_msg(K2_PFN_MAX, 7, 511) == 0xffffffffu && k2_msg(0, 0, 0) == 0, "all ones and all zeros");
    KT_CHECK(k2_msg_pfn(k2_msg(K2_PFN_MAX + 1, 0, 0)) == 0, "a frame number past 20 bits is cut, not spilled");
    KT_CHECK(k2_msg_type(k2_msg(0, 8, 0)) == 0 && k2_msg_seq(k2_msg(0, 7, 0)) == 0, "no field spills into another");
}

/* Wait until *word reaches want, handling the mailbox; false after 60 s. */
static bool wait_for(const uint64_t *word, uint64_t want)
{
    uint64_t deadline = arch_counter() + 60 * arch_counter_freq();
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < want) {
        if (arch_counter() > deadline)
            return false;
        k2_poll();
        arch_cpu_relax();
    }
    return true;
}

KTEST(k2_roundtrip, "k2: round trips to the shadow kernel")
{
    SKIP_UNLESS_K2();
    k2_reset_test_counts();
    unsigned n = 10000;
    uint64_t bad = k2_stats()->pong_bad;
    uint64_t ticks = k2_ping(n);
    KT_CHECK(k2_stats()->pongs == n, "%lu answers to %u pings", k2_stats()->pongs, n);
    KT_CHECK(k2_stats()->pong_bad == bad, "%lu answers not their ping's", k2_stats()->pong_bad - bad);
    kprintf("# %u round trips, %lu ns each\n", n, ticks * 1000000000 / arch_counter_freq() / n);
}

KTEST(k2_flood, "k2: a flood each way at once: nothing lost, repeated or reordered, a ring fills")
{
    SKIP_UNLESS_K2();
    const struct k2_stats *st = k2_stats();
    uint64_t n = cmdline_get_u64("k2.n", 1000000);
    uint64_t full0 = st->full_waits, seq0 = st->seq_bad, sent0 = st->sent, rx0 = st->received;
    k2_reset_test_counts();
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(K2_CTL_FLOOD, 0));
    for (uint64_t i = 0; i < n; i++)
        k2_send(K2_CTL, k2_ctl(K2_CTL_DATA, (unsigned)i));
    KT_CHECK(wait_for(&st->data_rx, n), "main received %lu of %lu", st->data_rx, n);
    KT_CHECK(wait_for(&st->done, 1), "the shadow did not finish");
    KT_CHECK(st->data_bad == 0, "main: %lu out of order", st->data_bad);
    KT_CHECK(st->seq_bad == seq0, "main: %lu sequence numbers wrong", st->seq_bad - seq0);
    KT_CHECK(k2_shared.shadow_data_rx == n, "shadow received %lu of %lu", k2_shared.shadow_data_rx, n);
    KT_CHECK(k2_shared.shadow_data_bad == 0, "shadow: %lu out of order", k2_shared.shadow_data_bad);
    KT_CHECK(k2_shared.shadow_seq_bad == 0, "shadow: %lu sequence numbers wrong", k2_shared.shadow_seq_bad);
    KT_CHECK(st->full_waits > full0 || k2_shared.shadow_full_waits > 0, "neither side ever found the ring full");
    kprintf("# %lu each way: main sent %lu and received %lu; the ring was full %lu times for main, %lu for the shadow\n",
            n, st->sent - sent0, st->received - rx0, st->full_waits - full0, k2_shared.shadow_full_waits);
}

KTEST(k2_counter, "k2: both kernels add to one counter under a hardware spinlock")
{
    SKIP_UNLESS_K2();
    const struct k2_stats *st = k2_stats();
    uint64_t n = 100000;
    k2_reset_test_counts();
    k2_shared.counter = 0;
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(K2_CTL_COUNT, 0));
    spinlock_t *l = &k2_hw.hwspin[K2_HWSPIN_TEST];
    for (uint64_t i = 0; i < n; i++) {
        spin_lock(l);
        k2_shared.counter++;
        spin_unlock(l);
    }
    KT_CHECK(wait_for(&st->done, 1), "the shadow did not finish");
    KT_CHECK(k2_shared.counter == 2 * n, "counter %lu, expected %lu", k2_shared.counter, 2 * n);
}

KTEST(k2_private, "k2: neither kernel maps the other's local region")
{
    SKIP_UNLESS_K2();
    KT_CHECK(k2_pages_mapped(K2_GLOBAL_PA, K2_STATICS_SIZE) == K2_STATICS_SIZE / 4096,
             "the shared statics are not all mapped here (the walk itself is wrong)");
    uint64_t mapped = k2_pages_mapped(K2_SHADOW_LOCAL_PA, K2_LOCAL_SIZE);
    KT_CHECK(mapped == 0, "%lu pages of the shadow's local region mapped here", mapped);
    KT_CHECK(k2_shared.shadow_main_mapped == 0, "the shadow maps %lu pages of main's local region",
             k2_shared.shadow_main_mapped);
    KT_CHECK(k2_shared.shadow_managed_kib > 0 && k2_shared.shadow_managed_kib <= K2_LOCAL_SIZE / 1024,
             "the shadow manages %lu KiB, beyond its local region", k2_shared.shadow_managed_kib);
}

/* ------------------------------------------------------------------ DSM */

/* Ask the shadow for a job; `mine` runs here meanwhile; then wait for DONE. */
static bool shadow_does(unsigned op, unsigned arg, uint64_t n, void (*mine)(uint64_t n))
{
    const struct k2_stats *st = k2_stats();
    k2_reset_test_counts();
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(op, arg));
    if (mine)
        mine(n);
    return wait_for(&st->done, 1);
}

KTEST(k2_dsm_split, "k2: the DSM splits a 2 MiB mapping only when the shadow first takes a page of it")
{
    SKIP_UNLESS_K2();
    const struct k2_dsm_stats *ds = k2_dsm_stats();
    uint64_t splits = ds->splits, puts = ds->puts_sent, lines = ds->lines;
    KT_CHECK(k2_dsm_is_block(0) && k2_dsm_is_block(512), "the DSM area starts mapped by 2 MiB blocks here");
    KT_CHECK(shadow_does(K2_CTL_TOUCH, 5, 0, NULL), "the shadow did not write page 5");
    KT_CHECK(!k2_dsm_is_block(5) && !k2_dsm_is_block(0), "page 5's block is still one block");
    KT_CHECK(k2_dsm_is_block(512) && k2_dsm_is_block(1023), "the other block was split too");
    KT_CHECK(ds->splits - splits == 1, "%lu splits", ds->splits - splits);
    uint64_t v = *(volatile uint64_t *)k2_dsm_page(5);
    KT_CHECK(v == 0xfeed0005, "page 5 reads 0x%lx here after the shadow wrote 0xfeed0005", v);
    unsigned line = 4u << ((read_sysreg(ctr_el0) >> 16) & 15);
    KT_CHECK(ds->puts_sent - puts == 1 && ds->lines - lines == 4096 / line,
             "%lu lines cleaned for %lu PutExclusive (%u-byte lines)", ds->lines - lines, ds->puts_sent - puts, line);
}

static void count_here(uint64_t n)
{
    spinlock_t *l = &k2_hw.hwspin[K2_HWSPIN_TEST];
    volatile uint64_t *c = k2_dsm_page(0);
    for (uint64_t i = 0; i < n; i++) {
        spin_lock(l);
        (*c)++;
        spin_unlock(l);
    }
}

KTEST(k2_dsm_pingpong, "k2: both kernels add 100,000 each to one DSM word; one writer per page throughout")
{
    SKIP_UNLESS_K2();
    const struct k2_dsm_stats *ds = k2_dsm_stats();
    uint64_t n = 100000, faults = ds->faults, ticks = ds->fault_ticks;
    *(volatile uint64_t *)k2_dsm_page(0) = 0;
    KT_CHECK(shadow_does(K2_CTL_DSM_COUNT, 0, n, count_here), "the shadow did not finish");
    uint64_t got = *(volatile uint64_t *)k2_dsm_page(0);
    KT_CHECK(got == 2 * n, "the word is %lu, expected %lu", got, 2 * n);
    KT_CHECK(ds->faults > faults && k2_shared.shadow_dsm_faults > 0, "no page moved (main %lu, shadow %lu faults)",
             ds->faults - faults, k2_shared.shadow_dsm_faults);
    struct k2_audit a = k2_dsm_audit();
    KT_CHECK(a.both == 0, "%u pages Valid in both kernels", a.both);
    KT_CHECK(a.main_bad == 0 && a.shadow_bad == 0, "mappings disagree with states: %u here, %u in the shadow",
             a.main_bad, a.shadow_bad);
    KT_CHECK(a.main_valid + a.shadow_valid == K2_DSM_PAGES, "%u + %u Valid pages of %lu", a.main_valid,
             a.shadow_valid, K2_DSM_PAGES);
    kprintf("# %lu page faults here (%lu ns each), %lu in the shadow; audit: %u pages here, %u there, 0 in both\n",
            ds->faults - faults, (ds->fault_ticks - ticks) * 1000000000 / arch_counter_freq() / MAX(1, ds->faults - faults),
            k2_shared.shadow_dsm_faults, a.main_valid, a.shadow_valid);
}

KTEST(k2_dsm_sb, "k2: store buffering across the kernels never reads r1 = r2 = 0 (sequential consistency)")
{
    SKIP_UNLESS_K2();
    uint64_t n = cmdline_get_u64("k2.sb", 20000), both_zero = 0, outcomes[4] = { 0 };
    volatile uint64_t *x = k2_dsm_page(K2_SB_X), *y = k2_dsm_page(K2_SB_Y);
    k2_shared.sb_round = k2_shared.sb_ready = k2_shared.sb_done = 0;
    k2_reset_test_counts();
    k2_shared.test_n = n;
    k2_send(K2_CTL, k2_ctl(K2_CTL_SB, 0));
    bool late = false;
    for (uint64_t r = 1; r <= n && !late; r++) {
        *x = 0;
        *y = 0;
        __atomic_store_n(&k2_shared.sb_round, r, __ATOMIC_RELEASE);
        late = !wait_for(&k2_shared.sb_ready, r);
        for (uint64_t d = (r * 40503u >> 5) % 64; d; d--)          /* a different start each round */
            arch_cpu_relax();
        *x = 1;
        uint64_t r1 = *y;
        late = !wait_for(&k2_shared.sb_done, r);
        uint64_t r2 = k2_shared.sb_r2;
        both_zero += !r1 && !r2;
        outcomes[(r1 ? 2 : 0) + (r2 ? 1 : 0)]++;
    }
    KT_CHECK(!late && wait_for(&k2_stats()->done, 1), "the shadow stopped");
    KT_CHECK(both_zero == 0, "r1 = r2 = 0 in %lu of %lu rounds", both_zero, n);
    KT_CHECK(outcomes[3] > 0, "never r1 = r2 = 1: the two sides never overlapped, and the test showed nothing");
    kprintf("# %lu rounds: (r1, r2) = (0, 1) %lu times, (1, 0) %lu, (1, 1) %lu, (0, 0) %lu\n", n, outcomes[1],
            outcomes[2], outcomes[3], outcomes[0]);
}

static void cross_here(uint64_t n)
{
    volatile uint64_t *p = k2_dsm_page(K2_CROSS_P), *q = k2_dsm_page(K2_CROSS_Q);
    wait_for(&k2_shared.sb_ready, 1);       /* both start together */
    for (uint64_t i = 0; i < n; i++) {
        p[0]++;
        q[0]++;
    }
}

KTEST(k2_dsm_crossed, "k2: both kernels fault on each other's pages at once, and no write is lost")
{
    SKIP_UNLESS_K2();
    uint64_t n = cmdline_get_u64("k2.cross", 10000);
    volatile uint64_t *p = k2_dsm_page(K2_CROSS_P), *q = k2_dsm_page(K2_CROSS_Q);
    p[0] = p[1] = q[0] = q[1] = 0;
    k2_shared.sb_ready = 0;
    uint64_t faults = k2_dsm_stats()->faults;
    KT_CHECK(shadow_does(K2_CTL_CROSS, 0, n, cross_here), "the shadow did not finish");
    KT_CHECK(p[0] == n && p[1] == n && q[0] == n && q[1] == n, "counts %lu %lu %lu %lu, expected %lu each",
             p[0], p[1], q[0], q[1], n);
    kprintf("# %lu rounds, %lu page faults here\n", n, k2_dsm_stats()->faults - faults);
}

static void read_700(void *out)
{
    *(uint64_t *)out = *(volatile uint64_t *)k2_dsm_page(700);
}

KTEST(k2_dsm_irq, "k2: an interrupt handler touching a page the shadow holds spins until it comes")
{
    SKIP_UNLESS_K2();
    KT_CHECK(shadow_does(K2_CTL_TOUCH, 700, 0, NULL), "the shadow did not write page 700");
    uint64_t v = 0;
    if (smp_online_count() > 1) {
        KT_CHECK(ktest_run_on(1, read_700, &v) == 0, "cpu1's interrupt handler did not finish");
    } else {
        uint64_t flags = arch_irq_save();   /* as a handler runs: no doorbell can come in */
        read_700(&v);
        arch_irq_restore(flags);
    }
    KT_CHECK(v == 0xfeed0000u + 700, "read 0x%lx", v);
}

/* --------------------------------------------------------------- memory */

extern paddr_t boot_dtb_pa;

/* Run a memory job in the shadow (k2_mem_job) and wait for it. */
static bool shadow_mem(unsigned kind, uint64_t n, unsigned order)
{
    k2_shared.test_arg = order;
    k2_shared.test_fail = ~0ull;
    return shadow_does(K2_CTL_JOB, kind, n, NULL);
}

KTEST(k2_balloon_boot, "k2: the balloons hold the pool at boot; main's blocks come first and hold the boot image")
{
    SKIP_UNLESS_K2();
    struct k2_shared *s = &k2_shared;
    const struct mem_range *ram;
    mem_ram_ranges(&ram);
    uint64_t end = ram[0].base + ram[0].size;
    KT_CHECK(s->pool_blocks == (end - K2_POOL_PA) / K2_BLOCK_SIZE, "%u blocks in a pool up to 0x%lx", s->pool_blocks, end);
    KT_CHECK(s->main_blocks == MAX(s->main_floor, (s->pool_blocks + 1) / 2) && s->shadow_blocks == 0,
             "main holds %u blocks (floor %u), the shadow %u", s->main_blocks, s->main_floor, s->shadow_blocks);
    unsigned dtb = k2_mem_block_of(boot_dtb_pa);   /* QEMU puts it after the boot image, in the pool */
    KT_CHECK(dtb < s->main_floor, "the device tree (0x%lx) is in block %u, main's floor is %u", boot_dtb_pa, dtb,
             s->main_floor);
    /* A block the balloon holds has no page in main's allocator: taking it finds none. */
    int64_t got = frame_take_range(k2_mem_block_pa(s->main_blocks), K2_BLOCK_SIZE);
    KT_CHECK(got == 0, "block %u, the balloon's, gave main's allocator %ld pages", s->main_blocks, got);
}

KTEST(k2_balloon_direction, "k2: 6 deflates then 6 inflates a kernel: main ascends, the shadow descends, inflates undo them last first")
{
    SKIP_UNLESS_K2();
    struct k2_shared *s = &k2_shared;
    struct k2_mem_stats *sm = &s->mem[1];
    unsigned m0 = s->main_blocks, sh0 = s->shadow_blocks, n = 6;
    KT_CHECK(s->pool_blocks - m0 - sh0 >= 2 * n, "the balloon holds %u blocks, fewer than %u", s->pool_blocks - m0 - sh0, 2 * n);
    uint64_t free0 = frame_free_pages(), managed0 = frame_managed_pages();
    KT_CHECK(shadow_mem(K2_MJ_CHURN, 0, 0), "the shadow did not answer");
    uint64_t sfree0 = sm->free_pages, smanaged0 = sm->managed_pages;
    unsigned order_bad = 0;
    for (unsigned i = 0; i < n; i++)
        order_bad += k2_balloon_deflate() != (int)(m0 + i);
    KT_CHECK(order_bad == 0, "%u of main's deflates were not the next block up", order_bad);
    KT_CHECK(frame_managed_pages() - managed0 == n * K2_BLOCK_PAGES && frame_free_pages() - free0 == n * K2_BLOCK_PAGES,
             "main gained %lu managed and %lu free pages, expected %lu", frame_managed_pages() - managed0,
             frame_free_pages() - free0, n * K2_BLOCK_PAGES);
    KT_CHECK(shadow_mem(K2_MJ_DEFLATE, n, 0), "the shadow did not deflate");
    order_bad = 0;
    for (unsigned i = 0; i < n; i++)
        order_bad += s->test_blocks[i] != s->pool_blocks - 1 - sh0 - i;
    KT_CHECK(order_bad == 0, "%u of the shadow's deflates were not the next block down (first %ld)", order_bad,
             (int64_t)s->test_blocks[0]);
    KT_CHECK(sm->managed_pages - smanaged0 == n * K2_BLOCK_PAGES, "the shadow gained %lu managed pages",
             sm->managed_pages - smanaged0);
    order_bad = 0;
    for (unsigned i = 0; i < n; i++)
        order_bad += k2_balloon_inflate() != (int)(m0 + n - 1 - i);
    KT_CHECK(order_bad == 0, "%u of main's inflates were not the last block deflated", order_bad);
    KT_CHECK(shadow_mem(K2_MJ_INFLATE, n, 0), "the shadow did not inflate");
    order_bad = 0;
    for (unsigned i = 0; i < n; i++)
        order_bad += s->test_blocks[i] != s->pool_blocks - sh0 - n + i;
    KT_CHECK(order_bad == 0, "%u of the shadow's inflates were not the last block deflated", order_bad);
    KT_CHECK(frame_managed_pages() == managed0 && frame_free_pages() == free0, "main: %lu managed, %lu free; before %lu, %lu",
             frame_managed_pages(), frame_free_pages(), managed0, free0);
    KT_CHECK(sm->managed_pages == smanaged0 && sm->free_pages == sfree0, "shadow: %lu managed, %lu free; before %lu, %lu",
             sm->managed_pages, sm->free_pages, smanaged0, sfree0);
    KT_CHECK(s->main_blocks == m0 && s->shadow_blocks == sh0, "the counts did not come back");
}

static void churn_here(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        paddr_t pa = frame_alloc(0);
        if (pa == PADDR_INVALID || frame_free(pa, 0) != 0)
            k2_shared.test_blocks[15]++;
    }
}

KTEST(k2_alloc_local, "k2: 100,000 allocations and frees of 4 KiB in each kernel at once send no message")
{
    SKIP_UNLESS_K2();
    const struct k2_stats *st = k2_stats();
    uint64_t sent = st->sent, received = st->received, n = 100000;
    k2_shared.test_blocks[15] = 0;
    k2_shared.test_arg = 0;
    KT_CHECK(shadow_does(K2_CTL_JOB, K2_MJ_CHURN, n, churn_here), "the shadow did not finish");
    KT_CHECK(k2_shared.test_fail == 0 && k2_shared.test_blocks[15] == 0, "%lu failed in the shadow, %lu here",
             k2_shared.test_fail, k2_shared.test_blocks[15]);
    KT_CHECK(st->sent - sent == 1 && st->received - received == 1,
             "%lu messages sent and %lu received besides the job's request and its answer",
             st->sent - sent - 1, st->received - received - 1);
}

/* Wait until the shadow's published count reaches want (it drains when told). */
static bool shadow_drained(uint64_t want)
{
    return wait_for(&k2_shared.mem[1].remote_drained, want) && shadow_mem(K2_MJ_CHURN, 0, 0);
}

KTEST(k2_remote_free, "k2: frames freed by the kernel that did not allocate them go back to their own allocator")
{
    SKIP_UNLESS_K2();
    struct k2_shared *s = &k2_shared;
    struct k2_mem_stats *mm = &s->mem[0], *sm = &s->mem[1];
    KT_CHECK(shadow_mem(K2_MJ_CHURN, 0, 0), "the shadow did not answer");
    uint64_t sfree0 = sm->free_pages, drained0 = sm->remote_drained, bad0 = sm->remote_bad;
    uint64_t free0 = frame_free_pages();
    /* The shadow allocates, main frees. */
    for (unsigned order = 0; order <= 3; order += 3) {
        KT_CHECK(shadow_mem(K2_MJ_GRAB, K2_GRAB, order) && s->test_fail == 0, "the shadow could not allocate");
        unsigned refused = 0;
        for (unsigned i = 0; i < K2_GRAB; i++)
            refused += frame_free(s->grab[i], order) != 0;
        KT_CHECK(refused == 0, "%u frees refused", refused);
    }
    KT_CHECK(frame_free_pages() == free0, "main's free pages moved: %lu, before %lu", frame_free_pages(), free0);
    KT_CHECK(shadow_drained(drained0 + 2 * K2_GRAB), "the shadow took back %lu of %u", sm->remote_drained - drained0, 2 * K2_GRAB);
    KT_CHECK(sm->free_pages == sfree0 && sm->remote_bad == bad0, "the shadow has %lu free pages, before %lu (%lu bad)",
             sm->free_pages, sfree0, sm->remote_bad - bad0);
    /* A frame freed twice: the second is refused by its owner, and changes nothing. */
    KT_CHECK(frame_free(s->grab[0], 3) == 0, "the second free was not even queued");
    KT_CHECK(wait_for(&sm->remote_bad, bad0 + 1) && shadow_mem(K2_MJ_CHURN, 0, 0), "the shadow did not refuse it");
    KT_CHECK(sm->free_pages == sfree0, "a double free moved the shadow's free pages");
    /* Main allocates, the shadow frees. */
    uint64_t mdrained0 = mm->remote_drained;
    unsigned fails = 0;
    for (unsigned i = 0; i < K2_GRAB; i++)
        fails += (s->grab[i] = frame_alloc(0)) == PADDR_INVALID;
    KT_CHECK(fails == 0, "main could not allocate");
    KT_CHECK(shadow_mem(K2_MJ_FREE, K2_GRAB, 0) && s->test_fail == 0, "the shadow's frees were refused");
    KT_CHECK(wait_for(&mm->remote_drained, mdrained0 + K2_GRAB), "main took back %lu of %u", mm->remote_drained - mdrained0,
             K2_GRAB);
    KT_CHECK(frame_free_pages() == free0 && mm->remote_bad == 0, "main has %lu free pages, before %lu (%lu bad)",
             frame_free_pages(), free0, mm->remote_bad);
}

KTEST(k2_balloon_pressure, "k2: the shadow's probe deflates before an allocation fails; an empty balloon is refilled by main")
{
    SKIP_UNLESS_K2();
    struct k2_shared *s = &k2_shared;
    struct k2_mem_stats *sm = &s->mem[1], *mm = &s->mem[0];
    KT_CHECK(shadow_mem(K2_MJ_CHURN, 0, 0), "the shadow did not answer");
    uint64_t sync0 = sm->sync_deflates, probes0 = sm->probes, sh0 = s->shadow_blocks;
    uint64_t n = sm->free_pages + 2 * K2_BLOCK_PAGES + 100;
    KT_CHECK(shadow_mem(K2_MJ_FILL, n, 0), "the shadow did not finish");
    KT_CHECK(s->test_fail == 0, "an allocation of %lu failed", n);
    KT_CHECK(s->test_blocks[0] >= sh0 + 3, "the shadow held %lu blocks at the top, before %lu", s->test_blocks[0], sh0);
    KT_CHECK(sm->sync_deflates == sync0 && sm->probes > probes0, "%lu deflates on the allocation path (probes: %lu)",
             sm->sync_deflates - sync0, sm->probes - probes0);
    KT_CHECK(shadow_mem(K2_MJ_INFLATE, s->shadow_blocks - sh0, 0) && s->shadow_blocks == sh0, "the shadow kept %lu blocks",
             s->shadow_blocks - sh0);
    /* The balloon empty: main holds every free block. The shadow asks main to reclaim one. */
    unsigned m0 = s->main_blocks;
    while (k2_balloon_deflate() >= 0)
        ;
    uint64_t given0 = mm->reclaims_given;
    KT_CHECK(shadow_mem(K2_MJ_FILL, sm->free_pages + K2_BLOCK_PAGES / 2, 0), "the shadow did not finish");
    KT_CHECK(s->test_fail == 0, "an allocation failed while main could give a block");
    KT_CHECK(mm->reclaims_given > given0, "main gave no block back");
    KT_CHECK(shadow_mem(K2_MJ_INFLATE, s->shadow_blocks - sh0, 0) && s->shadow_blocks == sh0, "the shadow kept blocks");
    while (s->main_blocks > m0 && k2_balloon_inflate() >= 0)
        ;
    KT_CHECK(s->main_blocks == m0, "main kept %u blocks", s->main_blocks - m0);
}

/* ---------------------------------------------------- shared interrupts */

static bool job_done(void)
{
    return __atomic_load_n(&k2_stats()->done, __ATOMIC_ACQUIRE) >= 1;
}

/* Rounds of main's cores all idle (this one in the idle loop's own
 * wait) while the shadow raises the test line `per` times, gap_us apart,
 * each after the last was taken; the rounds that ended. */
static unsigned irq_rounds(unsigned rounds, unsigned per, uint64_t gap_us, uint64_t next_us)
{
    unsigned ended = 0;
    k2_shared.route.test_n2 = gap_us;
    k2_shared.route.test_gap_next = next_us;
    for (unsigned r = 0; r < rounds; r++) {
        k2_reset_test_counts();
        k2_shared.test_n = per;
        k2_send(K2_CTL, k2_ctl(K2_CTL_JOB, K2_IJ_RAISE));
        uint64_t flags = arch_irq_save();
        sched_idle_until(job_done);
        arch_irq_restore(flags);
        ended += job_done();
    }
    return ended;
}

/* Main's core `cpu` takes the line, pending before it moved there from
 * this core (whose interrupts are masked meanwhile). */
static bool pending_moves(unsigned line, unsigned cpu)
{
    struct k2_route *rt = &k2_shared.route;
    uint64_t taken = rt->test_main, flags = arch_irq_save();
    irq_chip()->pend(line);
    irq_enable_on(line, cpu);
    uint64_t deadline = arch_counter() + arch_counter_freq() / 10;
    while (__atomic_load_n(&rt->test_main, __ATOMIC_ACQUIRE) == taken && arch_counter() < deadline)
        arch_cpu_relax();
    bool moved = rt->test_main == taken + 1 && rt->test_cpu == cpu;
    irq_enable(line);
    arch_irq_restore(flags);
    return moved;
}

/* The line the shadow raises stands for an edge-triggered shared device
 * (virt's own lines are level-triggered: the UART's is in the
 * k2/console-asleep cases). First an interrupt pending when its line
 * moves goes with it. Then, with a handler in both kernels: each round
 * the first raises come to main, then the domain falls asleep after 1 ms
 * and the rest go to the shadow, and only the shadow's DONE wakes main.
 * Then with a handler in main only (a driver of main's): a raise after
 * 15 ms of idleness is held by the shadow, wakes main and is taken there;
 * one 0.5 ms after that finds main awake (its idle time restarted at the
 * wake-up) and goes to main directly. */
KTEST(k2_irq_route, "k2: the strong domain sleeps 100 times: its shared line goes to the shadow and back, each interrupt taken once, by the right kernel")
{
    SKIP_UNLESS_K2();
    const struct irqchip *chip = irq_chip();
    struct k2_route *rt = &k2_shared.route;
    unsigned line = chip->lines - 1, rounds = 100, per = 10;
    KT_CHECK(!irq_taken(line) && !chip->enabled(line), "line %u is in use", line);
    KT_CHECK(irq_register_lockless(line, k2_irq_test_handler, NULL) == 0, "line %u could not be registered", line);
    k2_shared.test_arg = line;
    KT_CHECK(shadow_does(K2_CTL_JOB, K2_IJ_ATTACH, 0, NULL), "the shadow did not attach line %u", line);
    uint64_t old = k2_irq_set_inactive_after(timer_ns_to_ticks(1000000));
    uint64_t sleeps = rt->sleeps, wakeups = rt->wakeups, wake_irq = rt->wake_irq, asleep_irqs = rt->inactive_irqs;
    uint64_t bad = rt->bad, passed = rt->passed;
    rt->test_main = rt->test_shadow = rt->test_raised = rt->test_wrong = rt->test_late = 0;
    chip->set_edge(line, true);
    irq_enable(line);
    KT_CHECK(smp_online_count() < 2 || pending_moves(line, 1), "a pending interrupt did not move with its line");
    rt->test_main = 0;
    unsigned ended = irq_rounds(rounds, per, 300, 0);
    kprintf("# k2 irq: %lu raised, %lu taken by main, %lu by the shadow; %lu sleeps, %lu wake-ups, "
            "%lu interrupts main took asleep\n", rt->test_raised, rt->test_main, rt->test_shadow,
            rt->sleeps - sleeps, rt->wakeups - wakeups, rt->inactive_irqs - asleep_irqs);
    KT_CHECK(ended == rounds, "%u of %u rounds ended", ended, rounds);
    KT_CHECK(rt->test_raised == rounds * per && rt->test_late == 0, "%lu raised of %u, %lu not taken within a second",
             rt->test_raised, rounds * per, rt->test_late);
    KT_CHECK(rt->test_main + rt->test_shadow == rt->test_raised, "%lu taken of %lu raised",
             rt->test_main + rt->test_shadow, rt->test_raised);
    KT_CHECK(rt->test_main > 0 && rt->test_shadow > 0, "main took %lu, the shadow %lu", rt->test_main, rt->test_shadow);
    KT_CHECK(rt->test_wrong == 0, "%lu taken by the kernel of the other domain", rt->test_wrong);
    KT_CHECK(rt->bad == bad, "the line targeted the wrong domain %lu times", rt->bad - bad);
    KT_CHECK(rt->sleeps - sleeps == rounds && rt->wakeups - wakeups == rounds, "%lu sleeps, %lu wake-ups in %u rounds",
             rt->sleeps - sleeps, rt->wakeups - wakeups, rounds);
    KT_CHECK(rt->wake_irq == wake_irq && rt->passed == passed, "%lu wake-ups by the line", rt->wake_irq - wake_irq);
    KT_CHECK(rt->inactive_irqs - asleep_irqs <= rounds, "main's cores took %lu interrupts asleep (one DONE a round)",
             rt->inactive_irqs - asleep_irqs);
    KT_CHECK(chip->target(line) != k2_shared.shadow_sgi_id && chip->target(line) != ~0ull,
             "the line targets 0x%lx awake", chip->target(line));

    /* Main's driver only: 20 rounds of two raises, 15 ms and 0.5 ms after
     * the last, with a 5 ms timeout. */
    KT_CHECK(shadow_does(K2_CTL_JOB, K2_IJ_DETACH, 0, NULL), "the shadow did not detach line %u", line);
    unsigned n = 20 * 2;
    k2_irq_set_inactive_after(timer_ns_to_ticks(5000000));
    wake_irq = rt->wake_irq;
    passed = rt->passed;
    rt->test_main = rt->test_shadow = rt->test_raised = rt->test_wrong = rt->test_late = 0;
    ended = irq_rounds(20, 2, 15000, 500);
    kprintf("# k2 irq, main's driver: %lu raised, %lu taken by main, %lu held by the shadow, %lu wake-ups by them\n",
            rt->test_raised, rt->test_main, rt->passed - passed, rt->wake_irq - wake_irq);
    KT_CHECK(ended == 20 && rt->test_raised == n && rt->test_late == 0, "%u rounds ended, %lu raised, %lu late", ended,
             rt->test_raised, rt->test_late);
    KT_CHECK(rt->test_main == n && rt->test_shadow == 0, "main took %lu, the shadow %lu", rt->test_main,
             rt->test_shadow);
    /* Each held raise woke main once; one a round was held (all the rounds'
     * first under icount; without it a host thread late by ms can move a
     * raise either way, hence the margins). */
    KT_CHECK(rt->passed - passed >= n / 4 && rt->passed - passed <= 3 * n / 4 &&
             rt->wake_irq - wake_irq == rt->passed - passed,
             "%lu held, %lu wake-ups by the line of %u", rt->passed - passed, rt->wake_irq - wake_irq, n);
    KT_CHECK(!(rt->held[line / 32] >> (line % 32) & 1) && chip->enabled(line), "the line is still held");

    irq_disable(line);
    irq_unregister(line);
    chip->set_edge(line, false);
    k2_irq_set_inactive_after(old);
}
