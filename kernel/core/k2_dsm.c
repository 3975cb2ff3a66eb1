/*
 * K2's software distributed shared memory (the paper's section 6.3;
 * docs/design/k2.md): the pages of the DSM area, which the shadowed
 * services' state lives in, are kept coherent between the two kernels by
 * the MMU and the mailbox, not by hardware.
 *
 * Two states per 4 KiB page and kernel, Valid and Invalid; exactly one
 * kernel holds a page Valid (it owns it) or the page is in transit. A
 * kernel maps only its Valid pages; touching an Invalid one faults
 * (exc_el1_sync -> k2_dsm_fault), the faulting core sends GetExclusive
 * with the page's frame number and spins, handling the mailbox, until the
 * owner's PutExclusive comes back; the owner, in its handler, unmaps the
 * page from every core of its own, cleans it from its caches and answers.
 * Each access waits for its page, and messages keep their order: the
 * result is sequential consistency, whatever the code's own locking.
 *
 * Rules that keep it from locking up: a handler never sleeps and never
 * touches a DSM page (a fault there panics: it would wait for itself);
 * the requester spins handling messages, so two kernels faulting on each
 * other's pages both get answered; a kernel changes its pages' states and
 * sends GetExclusive or PutExclusive only under its dsm_lock, so what it
 * sends about one page goes in the order it decided it.
 *
 * Mapping: the main kernel starts owning every page, mapped with 2 MiB
 * blocks; the shadow maps nothing. A block is split into pages (with a
 * table set aside at boot) only when the shadow first asks for a page of
 * it: memory the other kernel never touches keeps its large mapping.
 * Three bits a page of protocol state, as in the paper: Valid, Split (its
 * 2 MiB is mapped by pages here) and Pending (a GetExclusive of ours is out).
 */
#include "k2.h"
#include "arch.h"
#include "cpu.h"
#include "kernel.h"
#include "memory.h"
#include "spinlock.h"
#include "timer.h"

#define DSM_VALID       1u
#define DSM_SPLIT       2u
#define DSM_PENDING     4u
#define DSM_OWED        8u      /* the other kernel asked while we held it too briefly: answered later */
/* A page that just came stays this long, in counter ticks (about 5 us),
 * before a request for it is answered: long enough for the access that
 * faulted to run again. Without it, two kernels writing one page could
 * take it from each other forever, each between its load and its store. */
#define DSM_HOLD(freq)  ((freq) / 200000)
#define DSM_BLOCKS      (K2_DSM_SIZE / (2ul << 20))

static uint8_t state[K2_DSM_PAGES];
static uint64_t got_at[K2_DSM_PAGES];   /* when a page last came (counter) */
static unsigned owed;                   /* pages with DSM_OWED */
static uint64_t owed_until;             /* the earliest end of their holds (counter) */
static spinlock_t dsm_lock = SPINLOCK_INIT;
static paddr_t spare_table[DSM_BLOCKS];     /* main: one table a block, for its split */
static bool ready;
static struct k2_dsm_stats ds;

const struct k2_dsm_stats *k2_dsm_stats(void) { return &ds; }

static vaddr_t page_va(unsigned i) { return (vaddr_t)phys_to_virt(K2_DSM_PA) + (vaddr_t)i * 4096; }
static paddr_t page_pa(unsigned i) { return K2_DSM_PA + (paddr_t)i * 4096; }

void *k2_dsm_page(unsigned i)
{
    return i < K2_DSM_PAGES ? (void *)page_va(i) : NULL;
}

/* The page a message names, or -1 for a frame outside the DSM area. */
static int page_of(uint32_t pfn)
{
    paddr_t pa = (paddr_t)pfn << 12;
    return pa >= K2_DSM_PA && pa < K2_DSM_PA + K2_DSM_SIZE ? (int)((pa - K2_DSM_PA) / 4096) : -1;
}

/* Main, before the shadow starts: every page ours, zeroed, in blocks. */
int k2_dsm_init_main(void)
{
    for (unsigned b = 0; b < DSM_BLOCKS; b++)
        if ((spare_table[b] = frame_alloc_zeroed(0)) == PADDR_INVALID)
            return -E_NOMEM;
    int err = arch_kmap_blocks(page_va(0), K2_DSM_PA, K2_DSM_SIZE);
    if (!err)
        err = arch_cache_alias_init();
    if (err)
        return err;
    memset((void *)page_va(0), 0, K2_DSM_SIZE);
    for (unsigned i = 0; i < K2_DSM_PAGES; i++)
        state[i] = DSM_VALID;
    ready = true;
    return 0;
}

/* Shadow: nothing ours; the page tables of the area made now, so that
 * taking a page in later allocates nothing. */
int k2_dsm_init_shadow(void)
{
    for (unsigned b = 0; b < DSM_BLOCKS; b++) {
        int err = arch_kmap_page(page_va(b * 512), 0, false);
        if (err)
            return err;
    }
    int err = arch_cache_alias_init();
    if (err)
        return err;
    for (unsigned i = 0; i < K2_DSM_PAGES; i++)
        state[i] = DSM_SPLIT;
    ready = true;
    return 0;
}

bool k2_dsm_is_block(unsigned i)
{
    return i < K2_DSM_PAGES && arch_kmap_is_block(page_va(i));
}

/*
 * An access of this kernel to an unmapped page of the area (exc_el1_sync,
 * translation faults only). Returns false for anything else, which stays
 * a kernel fault. Spins until the page is ours; the access then runs again.
 */
bool k2_dsm_fault(uint64_t far, uint64_t esr)
{
    if (!ready || far < page_va(0) || far >= page_va(0) + K2_DSM_SIZE || (esr & 0x3c) != 0x04)
        return false;
    unsigned i = (unsigned)((far - page_va(0)) / 4096);
    if (k2_handling_here())
        panic("k2: DSM fault on page %u inside a mailbox handler (it would wait for itself)", i);
    uint64_t t0 = arch_counter();
    for (;;) {
        uint64_t flags = spin_lock_irqsave(&dsm_lock);
        bool valid = state[i] & DSM_VALID;
        if (!valid && !(state[i] & DSM_PENDING)) {
            /* (again, when it came and went before this core saw it) */
            state[i] |= DSM_PENDING;
            k2_send_nohandle(K2_GET_EXCL, (uint32_t)(page_pa(i) >> 12));
        }
        spin_unlock_irqrestore(&dsm_lock, flags);
        if (valid)
            break;
        k2_poll();
        arch_cpu_relax();
    }
    __atomic_add_fetch(&ds.faults, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ds.fault_ticks, arch_counter() - t0, __ATOMIC_RELAXED);
    return true;
}

/* Give page i to the other kernel: out of this kernel's map (split from
 * its block first), out of its caches, then PutExclusive. dsm_lock held. */
static void give(unsigned i)
{
    if (!(state[i] & DSM_SPLIT)) {
        unsigned b = i / 512;
        if (arch_kmap_split(page_va(i), spare_table[b]))
            ds.splits++;
        else
            frame_free(spare_table[b], 0);
        spare_table[b] = 0;
        for (unsigned j = b * 512; j < (b + 1) * 512; j++)
            state[j] |= DSM_SPLIT;
    }
    arch_kmap_page(page_va(i), 0, false);           /* gone from every core's TLB */
    ds.lines += arch_cache_flush_page(page_pa(i), this_cpu()->index);
    state[i] &= (uint8_t)~(DSM_VALID | DSM_OWED);
    ds.puts_sent++;
    k2_send_nohandle(K2_PUT_EXCL, (uint32_t)(page_pa(i) >> 12));
}

/* The other kernel's GetExclusive (a handler): give the page up, or owe
 * it when it came too recently (k2_dsm_poll answers later). */
void k2_dsm_get(uint32_t pfn)
{
    int i = page_of(pfn);
    if (i < 0 || !ready)
        panic("k2: GetExclusive for frame 0x%x, outside the DSM area", pfn);
    uint64_t flags = spin_lock_irqsave(&dsm_lock);
    if (!(state[i] & DSM_VALID) || (state[i] & DSM_OWED))
        panic("k2: GetExclusive for DSM page %d, which this kernel does not own (state %u)", i, state[i]);
    uint64_t hold = DSM_HOLD(arch_counter_freq());
    if (arch_counter() - got_at[i] < hold) {
        state[i] |= DSM_OWED;
        owed_until = owed++ ? MIN(owed_until, got_at[i] + hold) : got_at[i] + hold;
        ds.owed++;
        timer_rearm();          /* this core's timer comes then (k2_timer_next), if nothing polls first */
    } else {
        give((unsigned)i);
    }
    spin_unlock_irqrestore(&dsm_lock, flags);
}

/* Answer what is owed once its hold is over (k2_poll, the tick). */
void k2_dsm_poll(void)
{
    if (!READ_ONCE(owed))
        return;
    uint64_t now = arch_counter(), hold = DSM_HOLD(arch_counter_freq());
    uint64_t flags = spin_lock_irqsave(&dsm_lock);
    uint64_t until = ~0ull;
    for (unsigned i = 0; i < K2_DSM_PAGES && owed; i++) {
        if (!(state[i] & DSM_OWED))
            continue;
        if (now - got_at[i] >= hold) {
            give(i);
            owed--;
        } else {
            until = MIN(until, got_at[i] + hold);
        }
    }
    owed_until = until;
    spin_unlock_irqrestore(&dsm_lock, flags);
}

/* When this kernel's timer must come for what it owes (timer_rearm):
 * never in the past, so that a core whose poll finds another core
 * handling is not interrupted again at once, and again. */
uint64_t k2_timer_next(void)
{
    if (!READ_ONCE(owed))
        return ~0ull;
    return MAX(READ_ONCE(owed_until), arch_counter() + DSM_HOLD(arch_counter_freq()) / 4);
}

/* The owner's PutExclusive (a handler): the page is ours; map it. */
void k2_dsm_put(uint32_t pfn)
{
    int i = page_of(pfn);
    if (i < 0 || !ready)
        panic("k2: PutExclusive for frame 0x%x, outside the DSM area", pfn);
    uint64_t flags = spin_lock_irqsave(&dsm_lock);
    if (!(state[i] & DSM_PENDING) || (state[i] & DSM_VALID))
        panic("k2: PutExclusive for DSM page %d, which this kernel did not ask for (state %u)", i, state[i]);
    int err = arch_kmap_page(page_va((unsigned)i), page_pa((unsigned)i), true);
    if (err)
        panic("k2: cannot map DSM page %d: %s", i, error_name(err));
    ds.puts_got++;
    got_at[i] = arch_counter();
    __atomic_store_n(&state[i], (uint8_t)((state[i] | DSM_VALID) & ~DSM_PENDING), __ATOMIC_RELEASE);
    spin_unlock_irqrestore(&dsm_lock, flags);
}

/* This kernel's side of the audit, under its lock: a bit a page it holds
 * Valid into `valid`, and how many pages its map and its states disagree on. */
static unsigned audit_here(uint8_t *valid)
{
    unsigned bad = 0;
    for (unsigned i = 0; i < K2_DSM_PAGES; i++) {
        bool v = state[i] & DSM_VALID;
        bool mapped = k2_pages_mapped(page_pa(i), 4096) == 1;
        bad += v != mapped;
        if (v)
            valid[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    return bad;
}

/* Shadow (a handler: main's FREEZE): report, then stay still until main
 * has compared. */
void k2_dsm_freeze(void)
{
    uint64_t flags = spin_lock_irqsave(&dsm_lock);
    memset(k2_shared.audit_valid, 0, sizeof(k2_shared.audit_valid));
    k2_shared.audit_bad = audit_here(k2_shared.audit_valid);
    __atomic_store_n(&k2_shared.frozen, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&k2_shared.thaw, __ATOMIC_ACQUIRE)) {
        k2_pull();              /* main's other cores' sends still find room */
        arch_cpu_relax();
    }
    __atomic_store_n(&k2_shared.thaw, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&k2_shared.frozen, 0, __ATOMIC_RELEASE);
    spin_unlock_irqrestore(&dsm_lock, flags);
}

/* Main: freeze the shadow and check the one-writer rule on every page. */
struct k2_audit k2_dsm_audit(void)
{
    struct k2_audit a = { 0 };
    static uint8_t mine[K2_DSM_PAGES / 8];
    k2_send(K2_CTL, k2_ctl(K2_CTL_FREEZE, 0));
    while (!__atomic_load_n(&k2_shared.frozen, __ATOMIC_ACQUIRE)) {
        k2_poll();
        arch_cpu_relax();
    }
    uint64_t flags = spin_lock_irqsave(&dsm_lock);
    memset(mine, 0, sizeof(mine));
    a.main_bad = audit_here(mine);
    a.shadow_bad = (unsigned)k2_shared.audit_bad;
    for (unsigned i = 0; i < K2_DSM_PAGES; i++) {
        bool m = mine[i / 8] >> (i % 8) & 1, s = k2_shared.audit_valid[i / 8] >> (i % 8) & 1;
        a.both += m && s;
        a.main_valid += m;
        a.shadow_valid += s;
    }
    spin_unlock_irqrestore(&dsm_lock, flags);
    __atomic_store_n(&k2_shared.thaw, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&k2_shared.frozen, __ATOMIC_ACQUIRE))
        arch_cpu_relax();
    return a;
}
