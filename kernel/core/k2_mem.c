/*
 * K2's physical memory (docs/design/k2.md, "Memory"): one allocator per
 * kernel, balloons over a shared pool, a pressure probe, remote frees.
 *
 * Each kernel runs its own frame allocator (frame.c) over its local
 * region, and main's over the rest of RAM below and above the pool too.
 * The pool, from K2_POOL_PA, is cut into 16 MiB blocks; at boot the
 * balloons hold all of them and frame_init leaves them out (withheld).
 * A kernel's balloon deflates (a block goes to its allocator, at the
 * tail of the free lists) and inflates (the block goes back, only if
 * every page of it is free) at its own end of the pool: main's blocks
 * are the first main_blocks, the shadow's the last shadow_blocks, so
 * each side's deflates ascend (main) or descend (shadow) and its
 * inflates undo them last-in first-out. The two counts change under one
 * hardware spinlock; nothing else about the pool is shared.
 *
 * Blocks holding a reservation (QEMU's device tree and boot image) are
 * main's from boot and never inflate (main_floor); main starts with at
 * least half the pool, the shadow with none.
 *
 * The meta-level manager is a probe in each kernel: frame_alloc calls
 * k2_mem_pressure when fewer than K2_LOW_PAGES pages stay free; that
 * costs the allocation one compare, and the probe only rings this
 * kernel's own doorbell. The deflate runs in k2_poll, in the
 * background. If the balloon is empty the kernel asks the other one to
 * reclaim (K2_MEMCTL_RECLAIM): it inflates a block if it can spare one,
 * and answers. An allocation that finds nothing at all deflates a block
 * itself first (counted as sync_deflates: the probe was late).
 *
 * A frame freed by the kernel that did not allocate it (frame_free sees
 * from its address whose it is) goes into a queue to its owner, 256
 * entries in .k2shared, and the owner, told by K2_MEMCTL_FREES when the
 * queue stops being empty, frees it in its own allocator: asynchronous,
 * and no kernel ever touches the other's allocator.
 */
#include "k2.h"
#include "arch.h"
#include "cpu.h"
#include "irq.h"
#include "kernel.h"
#include "memory.h"

#define K2_LOW_PAGES    1024u       /* 4 MiB: below it the probe asks for a block */
#define ROLE            (CONFIG_K2_SHADOW ? 1 : 0)

static uint32_t pressure;           /* the probe rang; k2_mem_poll deflates */
static uint32_t stalled;            /* ... and could not: the next tick tries again, the probe does not ring */
static uint32_t reclaim_waiting;    /* asked the other kernel to reclaim, no answer yet */
static uint64_t reclaim_quiet_until;/* after a refusal, ask again only from this counter value */
static spinlock_t fq_lock = SPINLOCK_INIT;  /* this kernel's side of the free queue to the other */
static bool pool_on;                /* main: k2_layout withheld the pool */

struct k2_mem_stats *k2_mem_mine(void) { return &k2_shared.mem[ROLE]; }
static uint32_t memctl(unsigned op, unsigned arg) { return (uint32_t)(op & 15u) << 16 | (arg & 0xffffu); }
static spinlock_t *pool_lock(void) { return &k2_hw.hwspin[K2_HWSPIN_POOL]; }

paddr_t k2_mem_block_pa(unsigned b) { return K2_POOL_PA + (paddr_t)b * K2_BLOCK_SIZE; }

unsigned k2_mem_block_of(paddr_t pa)
{
    uint64_t b = (pa - K2_POOL_PA) / K2_BLOCK_SIZE;
    return pa >= K2_POOL_PA && b < k2_shared.pool_blocks ? (unsigned)b : K2_MAX_BLOCKS;
}

/* The pool: from K2_POOL_PA, whole blocks of the RAM range holding it. */
static unsigned pool_blocks_in_ram(void)
{
    const struct mem_range *ram;
    unsigned n = mem_ram_ranges(&ram);
    for (unsigned i = 0; i < n; i++)
        if (ram[i].base <= K2_POOL_PA && K2_POOL_PA < ram[i].base + ram[i].size)
            return (unsigned)MIN((ram[i].base + ram[i].size - K2_POOL_PA) / K2_BLOCK_SIZE, K2_MAX_BLOCKS);
    return 0;
}

static void stat_add(uint64_t *c, uint64_t n)
{
    __atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

void k2_mem_publish(void)
{
    struct k2_mem_stats *m = k2_mem_mine();
    m->free_pages = frame_free_pages();
    m->managed_pages = frame_managed_pages();
}

/* ---------------------------------------------------------------- balloons */

/* Deflate: the next block of this kernel's end of the pool goes to its
 * allocator. Its index, or -E_NOMEM when the balloon holds none. */
int k2_balloon_deflate(void)
{
    struct k2_shared *s = &k2_shared;
    uint64_t flags = spin_lock_irqsave(pool_lock());
    if (s->main_blocks + s->shadow_blocks >= s->pool_blocks) {
        spin_unlock_irqrestore(pool_lock(), flags);
        return -E_NOMEM;
    }
    unsigned b = CONFIG_K2_SHADOW ? s->pool_blocks - 1 - s->shadow_blocks : s->main_blocks;
    /* The count first: a frame of the block may be allocated, handed to
     * the other kernel and freed there as soon as it is on the lists. */
    if (CONFIG_K2_SHADOW)
        __atomic_store_n(&s->shadow_blocks, s->shadow_blocks + 1, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&s->main_blocks, s->main_blocks + 1, __ATOMIC_RELEASE);
    uint64_t t0 = arch_counter();
    frame_add_range(k2_mem_block_pa(b), K2_BLOCK_SIZE);
    struct k2_mem_stats *m = k2_mem_mine();
    m->deflate_ticks += arch_counter() - t0;
    m->deflates++;
    spin_unlock_irqrestore(pool_lock(), flags);
    return (int)b;
}

/* Inflate: this kernel's last deflated block goes back to the balloon if
 * every page of it is free. Its index, -E_NOMEM (none this kernel may
 * give) or -E_BUSY (a page of it is in use; nothing changed). */
int k2_balloon_inflate(void)
{
    struct k2_shared *s = &k2_shared;
    struct k2_mem_stats *m = k2_mem_mine();
    uint64_t flags = spin_lock_irqsave(pool_lock());
    uint32_t *mine = CONFIG_K2_SHADOW ? &s->shadow_blocks : &s->main_blocks;
    if (*mine <= (CONFIG_K2_SHADOW ? 0 : s->main_floor)) {
        spin_unlock_irqrestore(pool_lock(), flags);
        return -E_NOMEM;
    }
    unsigned b = CONFIG_K2_SHADOW ? s->pool_blocks - *mine : *mine - 1;
    uint64_t t0 = arch_counter();
    int64_t got = frame_take_range(k2_mem_block_pa(b), K2_BLOCK_SIZE);
    if (got < 0) {
        m->inflate_busy++;
        spin_unlock_irqrestore(pool_lock(), flags);
        return -E_BUSY;
    }
    (*mine)--;
    m->inflate_ticks += arch_counter() - t0;
    m->inflates++;
    spin_unlock_irqrestore(pool_lock(), flags);
    return (int)b;
}

/* ------------------------------------------------------------- main's boot */

/* In k2_layout: the pool is left out of frame_init. */
void k2_mem_layout(void)
{
    k2_shared.pool_blocks = pool_blocks_in_ram();
    k2_shared.main_blocks = k2_shared.shadow_blocks = 0;
    if (k2_shared.pool_blocks)
        mem_withhold(K2_POOL_PA, (uint64_t)k2_shared.pool_blocks * K2_BLOCK_SIZE);
    pool_on = true;
}

/* After frame_init: main deflates the blocks that hold a reservation and
 * at least half the pool. */
void k2_mem_boot(void)
{
    struct k2_shared *s = &k2_shared;
    if (!pool_on)
        return;
    unsigned floor = 0;
    for (unsigned b = 0; b < s->pool_blocks; b++)
        if (mem_overlaps_reserved(k2_mem_block_pa(b), K2_BLOCK_SIZE))
            floor = b + 1;
    s->main_floor = floor;
    unsigned want = MAX(floor, (s->pool_blocks + 1) / 2);
    while (s->main_blocks < want && k2_balloon_deflate() >= 0)
        ;
    k2_mem_mine()->deflates = 0;
    k2_mem_mine()->deflate_ticks = 0;
}

/* K2 given up after k2_mem_boot: main takes every block. */
void k2_mem_off(void)
{
    if (!pool_on)
        return;
    while (k2_balloon_deflate() >= 0)
        ;
    frame_low_mark = 0;
    frame_k2 = false;
}

/* The shadow, before its frame_init: everything of the global region but
 * the pool stays out of its allocator, and the pool waits for deflates. */
int k2_mem_init_shadow(void)
{
    const struct mem_range *ram;
    unsigned n = mem_ram_ranges(&ram);
    paddr_t pool_end = k2_mem_block_pa(k2_shared.pool_blocks);
    if (k2_shared.pool_blocks != pool_blocks_in_ram())
        return -E_STATE;                /* main saw another machine */
    for (unsigned i = 0; i < n; i++) {
        paddr_t lo = MAX(ram[i].base, K2_GLOBAL_PA), hi = ram[i].base + ram[i].size;
        if (lo < MIN(hi, K2_POOL_PA))
            mem_reserve(lo, MIN(hi, K2_POOL_PA) - lo);
        lo = MAX(lo, pool_end);
        if (lo < hi)
            mem_reserve(lo, hi - lo);   /* main's, above the pool */
    }
    if (k2_shared.pool_blocks)
        mem_withhold(K2_POOL_PA, pool_end - K2_POOL_PA);
    return 0;
}

/* Both, once the mailbox works: the probe and remote frees on. */
void k2_mem_start(void)
{
    frame_low_mark = K2_LOW_PAGES;
    frame_k2 = true;
    k2_mem_publish();
}

/* ------------------------------------------------- the meta-level manager */

static void ring_own_doorbell(void)
{
    irq_chip()->send_sgi_id(CONFIG_K2_SHADOW ? k2_shared.shadow_sgi_id : k2_shared.main_sgi_id, IRQ_SGI_K2);
}

/* frame_alloc: fewer than the low mark free. Only rings: the work is k2_mem_poll's. */
void k2_mem_pressure(void)
{
    stat_add(&k2_mem_mine()->probes, 1);
    if (!__atomic_load_n(&stalled, __ATOMIC_RELAXED) && !__atomic_exchange_n(&pressure, 1, __ATOMIC_ACQ_REL))
        ring_own_doorbell();
}

/* k2_poll's question: has the probe rung since the last k2_mem_poll? */
bool k2_mem_pending(void)
{
    return __atomic_load_n(&pressure, __ATOMIC_ACQUIRE);
}

/* k2_tick: a stalled probe tries again (a block may be free by now). */
void k2_mem_tick(void)
{
    if (__atomic_exchange_n(&stalled, 0, __ATOMIC_ACQ_REL))
        __atomic_store_n(&pressure, 1, __ATOMIC_RELEASE);
}

/* Ask the other kernel to reclaim a block, unless asked already or it
 * refused less than a second ago. */
static void ask_reclaim(void)
{
    if (arch_counter() < __atomic_load_n(&reclaim_quiet_until, __ATOMIC_RELAXED) ||
        __atomic_exchange_n(&reclaim_waiting, 1, __ATOMIC_ACQ_REL))
        return;
    stat_add(&k2_mem_mine()->reclaims_asked, 1);
    k2_send(K2_MEMCTL, memctl(K2_MEMCTL_RECLAIM, 0));
}

/* frame_alloc found nothing: a block now, if the balloon has one; if it
 * is empty, the other kernel's answer to a reclaim, waited for (handling
 * the mailbox) up to 10 ms. True when a block came in meanwhile, by this
 * call or by k2_mem_poll (which may take the reclaimed block first).
 * It handles messages while it waits: no caller of frame_alloc may hold a
 * lock a handler takes (the DSM's, the mailbox's); none does. */
bool k2_mem_deflate_now(void)
{
    uint64_t before = __atomic_load_n(&k2_mem_mine()->deflates, __ATOMIC_ACQUIRE);
    bool got = k2_balloon_deflate() >= 0;
    if (!got && !k2_handling_here()) {
        ask_reclaim();
        uint64_t deadline = arch_counter() + arch_counter_freq() / 100;
        while (__atomic_load_n(&reclaim_waiting, __ATOMIC_ACQUIRE) && arch_counter() < deadline) {
            k2_poll();
            arch_cpu_relax();
        }
        got = k2_balloon_deflate() >= 0 || __atomic_load_n(&k2_mem_mine()->deflates, __ATOMIC_ACQUIRE) != before;
    }
    if (got)
        stat_add(&k2_mem_mine()->sync_deflates, 1);
    return got;
}

/* From k2_poll (this core handles the mailbox, interrupts masked). */
void k2_mem_poll(void)
{
    if (!__atomic_exchange_n(&pressure, 0, __ATOMIC_ACQ_REL))
        return;
    if (frame_free_pages() >= K2_LOW_PAGES || k2_balloon_deflate() >= 0)
        return;
    ask_reclaim();
    __atomic_store_n(&stalled, 1, __ATOMIC_RELEASE);    /* the next tick looks again */
}

/* Free what the other kernel queued for this one. */
static void drain_frees(void)
{
    struct k2_freeq *q = &k2_shared.freeq[CONFIG_K2_SHADOW ? K2_TO_SHADOW : K2_TO_MAIN];
    struct k2_mem_stats *m = k2_mem_mine();
    for (;;) {
        uint32_t h = q->head;
        if (h == __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE))
            break;
        uint64_t e = q->slot[h % K2_FREEQ_SLOTS];
        if (k2_mem_remote(e & ~0xfffull) || frame_free(e & ~0xfffull, (unsigned)(e & 0xfff)) != 0)
            m->remote_bad++;
        else
            m->remote_drained++;
        __atomic_store_n(&q->head, h + 1, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* then read tail again: see free_remote */
    }
}

void k2_mem_handle(unsigned op, unsigned arg)
{
    struct k2_mem_stats *m = k2_mem_mine();
    switch (op) {
    case K2_MEMCTL_FREES:
        drain_frees();
        break;
    case K2_MEMCTL_RECLAIM: {
        bool given = frame_free_pages() >= K2_BLOCK_PAGES + 2 * K2_LOW_PAGES && k2_balloon_inflate() >= 0;
        m->reclaims_given += given;
        k2_send(K2_MEMCTL, memctl(K2_MEMCTL_RECLAIMED, given));
        break;
    }
    case K2_MEMCTL_RECLAIMED:
        if (arg)
            __atomic_store_n(&pressure, 1, __ATOMIC_RELEASE);  /* deflate it: k2_poll calls k2_mem_poll next */
        else
            __atomic_store_n(&reclaim_quiet_until, arch_counter() + arch_counter_freq(), __ATOMIC_RELAXED);
        __atomic_store_n(&reclaim_waiting, 0, __ATOMIC_RELEASE);
        break;
    default:
        m->remote_bad++;
    }
}

/* ------------------------------------------------------------ remote frees */

/* Whose is the frame at pa: the other kernel's? */
bool k2_mem_remote(paddr_t pa)
{
    if (pa - K2_SHADOW_LOCAL_PA < K2_LOCAL_SIZE)
        return !CONFIG_K2_SHADOW;
    if (pa - K2_MAIN_LOCAL_PA < K2_LOCAL_SIZE)
        return CONFIG_K2_SHADOW;
    unsigned b = k2_mem_block_of(pa);
    if (b == K2_MAX_BLOCKS)
        return CONFIG_K2_SHADOW;        /* outside the pool: main's */
    if (CONFIG_K2_SHADOW)
        return b < __atomic_load_n(&k2_shared.main_blocks, __ATOMIC_RELAXED);
    return b >= k2_shared.pool_blocks - __atomic_load_n(&k2_shared.shadow_blocks, __ATOMIC_RELAXED);
}

/* frame_free of the other kernel's frame: into the queue to it. Waits
 * (handling the mailbox) while the queue is full. */
int k2_mem_free_remote(paddr_t pa, unsigned order)
{
    struct k2_freeq *q = &k2_shared.freeq[CONFIG_K2_SHADOW ? K2_TO_MAIN : K2_TO_SHADOW];
    uint64_t flags;
    for (;;) {
        flags = spin_lock_irqsave(&fq_lock);
        if (q->tail - __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) < K2_FREEQ_SLOTS)
            break;
        spin_unlock_irqrestore(&fq_lock, flags);
        k2_poll();
        arch_cpu_relax();
    }
    uint32_t t = q->tail;
    q->slot[t % K2_FREEQ_SLOTS] = pa | order;
    __atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);        /* then read head: see drain_frees */
    bool was_empty = __atomic_load_n(&q->head, __ATOMIC_RELAXED) == t;
    stat_add(&k2_mem_mine()->remote_frees, 1);
    spin_unlock_irqrestore(&fq_lock, flags);
    if (was_empty)
        k2_send(K2_MEMCTL, memctl(K2_MEMCTL_FREES, 0));
    return 0;
}

/* ------------------------------------------------------- the shadow's jobs */

/* The bench's allocation rows: K2_TIME_ROUNDS times, n allocations of
 * 2^order frames in a row (timed), then their frees (timed apart).
 * Counter ticks of all the allocations; *free_ticks those of the frees. */
uint64_t k2_mem_time_allocs(paddr_t *pa, unsigned n, unsigned order, uint64_t *free_ticks, uint64_t *fail)
{
    uint64_t alloc = 0, freeing = 0;
    for (unsigned r = 0; r < K2_TIME_ROUNDS; r++) {
        uint64_t t0 = arch_counter();
        for (unsigned i = 0; i < n; i++)
            pa[i] = frame_alloc(order);
        uint64_t t1 = arch_counter();
        for (unsigned i = 0; i < n; i++)
            *fail += pa[i] == PADDR_INVALID || frame_free(pa[i], order) != 0;
        freeing += arch_counter() - t1;
        alloc += t1 - t0;
    }
    *free_ticks = freeing;
    return alloc;
}

/* A K2_CTL_JOB (kernel/tests/test_k2.c, k2_bench), with k2_shared's
 * test_n and test_arg; results in test_blocks, grab, test_ticks, test_fail. */
void k2_mem_job(unsigned kind)
{
    struct k2_shared *s = &k2_shared;
    uint64_t n = READ_ONCE(s->test_n), fail = 0;
    unsigned order = (unsigned)READ_ONCE(s->test_arg);
    if (kind == K2_MJ_DEFLATE || kind == K2_MJ_INFLATE) {
        for (uint64_t i = 0; i < n && i < ARRAY_SIZE(s->test_blocks); i++)
            s->test_blocks[i] = (uint64_t)(int64_t)(kind == K2_MJ_DEFLATE ? k2_balloon_deflate() : k2_balloon_inflate());
    } else if (kind == K2_MJ_CHURN) {
        for (uint64_t i = 0; i < n; i++) {
            paddr_t pa = frame_alloc(order);
            if (pa == PADDR_INVALID || frame_free(pa, order) != 0)
                fail++;
        }
    } else if (kind == K2_MJ_GRAB) {
        for (uint64_t i = 0; i < MIN(n, K2_GRAB); i++)
            fail += (s->grab[i] = frame_alloc(order)) == PADDR_INVALID;
    } else if (kind == K2_MJ_TIME) {
        s->test_ticks[0] = k2_mem_time_allocs(s->grab, (unsigned)MIN(n, K2_GRAB), order, &s->test_ticks[1], &fail);
    } else if (kind == K2_MJ_FREE) {
        for (uint64_t i = 0; i < MIN(n, K2_GRAB); i++)
            fail += frame_free(s->grab[i], order) != 0;
    } else if (kind == K2_MJ_FILL) {
        paddr_t head = PADDR_INVALID;   /* the pages held, linked through their first word */
        for (uint64_t i = 0; i < n; i++) {
            paddr_t pa = frame_alloc(0);
            if (pa == PADDR_INVALID) {
                fail++;
                break;
            }
            *(paddr_t *)phys_to_virt(pa) = head;
            head = pa;
        }
        k2_mem_publish();
        s->test_blocks[0] = s->shadow_blocks;
        while (head != PADDR_INVALID) {
            paddr_t next = *(paddr_t *)phys_to_virt(head);
            frame_free(head, 0);
            head = next;
        }
    }
    s->test_fail = fail;
    k2_mem_publish();
}
