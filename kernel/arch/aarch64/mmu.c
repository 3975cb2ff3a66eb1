/*
 * AArch64 page tables.
 *
 * The kernel map (TTBR1) is built once on the boot core, after the
 * device tree has told us where RAM is: all RAM at KERNEL_VA_BASE + PA
 * with the largest blocks that fit, except the kernel image, which is
 * mapped with 64 KiB pages (sixteen 4 KiB entries under the contiguous
 * hint, one TLB entry each; kernel.ld aligns its sections to 64 KiB) so
 * that text is read-only and executable, rodata read-only, and data and
 * bss writable but never executable.
 * The kernel stacks come last in the image; the guard pages around
 * them are left unmapped (arch/kstack.h).
 * Devices are mapped on request into the device window at
 * DEVICE_VA_BASE + PA as Device-nGnRE. SCTLR_EL1.WXN then makes every
 * writable page non-executable, at EL1 and EL0 alike.
 *
 * User address spaces (TTBR0) use the same walker with 4 KiB pages and
 * non-global entries tagged by the space's ASID.
 */
#include "arch.h"
#include "kernel.h"
#include "memory.h"
#include "spinlock.h"
#include "space.h"
#include <arch/mmu_defs.h>
#include <arch/kstack.h>

extern uint64_t kernel_ttbr1;
static uint64_t *kernel_l1;
static paddr_t kernel_l1_pa;
static paddr_t empty_l1_pa;
static spinlock_t kmap_lock = SPINLOCK_INIT;

#define L1_SHIFT 30
#define L2_SHIFT 21
#define L3_SHIFT 12

unsigned arch_zva_bytes;

/* May pages be zeroed with `dc zva`, and in blocks of what size? */
void arch_zero_init(void)
{
    uint64_t dczid = read_sysreg(dczid_el0);
    arch_zva_bytes = (dczid & 16) ? 0 : 4u << (dczid & 15);     /* DZP set: prohibited */
}

static inline uint64_t *table_va(uint64_t desc)
{
    return phys_to_virt(desc & PTE_ADDR_MASK);
}

/* The next-level table under *entry, created if absent (counted in
 * *created, unless it is the space's spare, which is empty and charged
 * already); NULL if out of memory. */
static uint64_t *next_table_spare(uint64_t *entry, unsigned *created, paddr_t *spare)
{
    if (*entry & PTE_VALID) {
        if (!(*entry & PTE_TABLE))
            return NULL;        /* a block is already there */
        return table_va(*entry);
    }
    if (spare && *spare) {
        paddr_t pa = *spare;
        *spare = 0;
        dsb(ishst);
        *entry = pa | PTE_VALID | PTE_TABLE;
        return phys_to_virt(pa);
    }
    paddr_t pa = boot_page_alloc();
    if (pa == PADDR_INVALID)
        return NULL;
    dsb(ishst);
    *entry = pa | PTE_VALID | PTE_TABLE;
    (*created)++;
    return phys_to_virt(pa);
}

static uint64_t *next_table(uint64_t *entry)
{
    unsigned ignored = 0;
    return next_table_spare(entry, &ignored, NULL);
}

/*
 * Map [va, va+size) to [pa, pa+size) with leaf attributes `attrs`,
 * using, where alignment allows, 1 GiB and 2 MiB blocks if `how` has
 * MAP_BLOCKS and 64 KiB contiguous-hint pages if it has MAP_CONT.
 * Returns 0 or -E_NOMEM / -E_BUSY (something else mapped there).
 */
int mmu_map_range(uint64_t *l1, vaddr_t va, paddr_t pa, uint64_t size, uint64_t attrs, unsigned how)
{
    bool blocks = how & MAP_BLOCKS;
    while (size) {
        uint64_t *e1 = &l1[(va >> L1_SHIFT) & 511];
        if (blocks && IS_ALIGNED(va | pa, GiB(1)) && size >= GiB(1)) {
            *e1 = pa | attrs | PTE_VALID;
            va += GiB(1), pa += GiB(1), size -= GiB(1);
            continue;
        }
        uint64_t *l2 = next_table(e1);
        if (!l2)
            return (*e1 & PTE_VALID) ? -E_BUSY : -E_NOMEM;
        uint64_t *e2 = &l2[(va >> L2_SHIFT) & 511];
        if (blocks && IS_ALIGNED(va | pa, MiB(2)) && size >= MiB(2)) {
            *e2 = pa | attrs | PTE_VALID;
            va += MiB(2), pa += MiB(2), size -= MiB(2);
            continue;
        }
        uint64_t *l3 = next_table(e2);
        if (!l3)
            return (*e2 & PTE_VALID) ? -E_BUSY : -E_NOMEM;
        if ((how & MAP_CONT) && IS_ALIGNED(va | pa, KiB(64)) && size >= KiB(64)) {
            for (unsigned i = 0; i < 16; i++)
                l3[((va >> L3_SHIFT) & 511) + i] = (pa + 4096ull * i) | attrs | PTE_CONT | PTE_VALID | PTE_PAGE;
            va += KiB(64), pa += KiB(64), size -= KiB(64);
            continue;
        }
        l3[(va >> L3_SHIFT) & 511] = pa | attrs | PTE_VALID | PTE_PAGE;
        va += 4096, pa += 4096, size -= 4096;
    }
    dsb(ishst);
    return 0;
}

/* The leaf descriptor for va (4 KiB level only), or NULL. */
uint64_t *mmu_lookup_page(uint64_t *l1, vaddr_t va)
{
    uint64_t e1 = l1[(va >> L1_SHIFT) & 511];
    if ((e1 & 3) != 3)
        return NULL;
    uint64_t e2 = table_va(e1)[(va >> L2_SHIFT) & 511];
    if ((e2 & 3) != 3)
        return NULL;
    return &table_va(e2)[(va >> L3_SHIFT) & 511];
}

#define KATTR_RW    (PTE_ATTR(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_UXN | PTE_PXN)
#define KATTR_RO    (KATTR_RW | PTE_AP_RO)
#define KATTR_TEXT  (PTE_ATTR(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_UXN | PTE_AP_RO)
#define KATTR_DEV   (PTE_ATTR(MT_DEVICE_nGnRE) | PTE_AF | PTE_UXN | PTE_PXN)

/* Map one RAM range into the direct map, skipping the holes: the kernel
 * image (mapped apart, in pages) and the ranges memory.c hides (K2: the
 * other kernel's local region). Holes are sorted and apart. */
static void map_ram(paddr_t base, paddr_t end, const struct mem_range *holes, unsigned nholes)
{
    vaddr_t off = KERNEL_VA_BASE;
    paddr_t at = base;
    for (unsigned i = 0; i < nholes && at < end; i++) {
        paddr_t hs = holes[i].base, he = holes[i].base + holes[i].size;
        if (he <= at || hs >= end)
            continue;
        if (hs > at && mmu_map_range(kernel_l1, at + off, at, hs - at, KATTR_RW, MAP_BLOCKS))
            panic("cannot map RAM at %lx", at);
        at = he;
    }
    if (at < end && mmu_map_range(kernel_l1, at + off, at, end - at, KATTR_RW, MAP_BLOCKS))
        panic("cannot map RAM at %lx", at);
}

/* Build the final kernel map and switch TTBR1 to it (boot core). */
void arch_mmu_init_kernel(paddr_t ram_lo UNUSED, paddr_t ram_hi UNUSED)
{
    kernel_l1_pa = boot_page_alloc();
    kernel_l1 = phys_to_virt(kernel_l1_pa);
    empty_l1_pa = boot_page_alloc();

    paddr_t kstart = virt_to_phys(__kernel_start), kend = virt_to_phys(__kernel_end);
    paddr_t text_end = virt_to_phys(__text_end), ro_end = virt_to_phys(__rodata_end);
    paddr_t data_end = virt_to_phys(__data_end);
    const struct mem_range *ram, *hidden;
    unsigned n = mem_ram_ranges(&ram), nh = mem_hidden_ranges(&hidden);
    struct mem_range holes[5] = { { kstart, kend - kstart } };
    unsigned nholes = 1;
    for (unsigned i = 0; i < nh && nholes < ARRAY_SIZE(holes); i++) {
        unsigned j = nholes++;                  /* insertion by base */
        for (; j > 0 && holes[j - 1].base > hidden[i].base; j--)
            holes[j] = holes[j - 1];
        holes[j] = hidden[i];
    }
    for (unsigned i = 0; i < n; i++)
        map_ram(ram[i].base, ram[i].base + ram[i].size, holes, nholes);
    int err = mmu_map_range(kernel_l1, (vaddr_t)__kernel_start, kstart, text_end - kstart, KATTR_TEXT, MAP_CONT);
    err |= mmu_map_range(kernel_l1, (vaddr_t)__text_end, text_end, ro_end - text_end, KATTR_RO, MAP_CONT);
    err |= mmu_map_range(kernel_l1, (vaddr_t)__rodata_end, ro_end, data_end - ro_end, KATTR_RW, MAP_CONT);
    err |= kstack_map(kernel_l1, KATTR_RW);
    if (err)
        panic("cannot map the kernel image");

    dsb(ish);
    write_sysreg(ttbr1_el1, kernel_l1_pa);
    write_sysreg(ttbr0_el1, empty_l1_pa);
    isb();
    __asm__ volatile("tlbi vmalle1is" ::: "memory");
    dsb(ish);
    isb();
    arch_mmu_enable_wxn();

    /* Publish the table for secondary cores, which read it with the MMU off. */
    kernel_ttbr1 = kernel_l1_pa;
    __asm__ volatile("dc civac, %0" :: "r"(&kernel_ttbr1) : "memory");
    dsb(sy);
}

/* The kernel's top-level table (TTBR1), for tests that walk its map. */
uint64_t *mmu_kernel_l1(void)
{
    return kernel_l1;
}

/* Writable implies never executable, from now on (this core). */
void arch_mmu_enable_wxn(void)
{
    write_sysreg(sctlr_el1, read_sysreg(sctlr_el1) | SCTLR_WXN);
    isb();
    __asm__ volatile("tlbi vmalle1" ::: "memory");
    dsb(nsh);
    isb();
}

/* A secondary core leaves the boot identity map behind. */
void arch_mmu_secondary_init(void)
{
    write_sysreg(ttbr0_el1, empty_l1_pa);
    isb();
    arch_mmu_enable_wxn();
}

/* Map a device range into the device window; *va_out gets its address. */
int arch_map_device(paddr_t pa, uint64_t size, void **va_out)
{
    paddr_t base = ALIGN_DOWN(pa, 4096);
    uint64_t len = ALIGN_UP(pa + size, 4096) - base;
    if (pa + size < pa || pa + size > GiB(255))     /* (the last GiB: KALIAS_VA_BASE) */
        return -E_RANGE;
    uint64_t flags = spin_lock_irqsave(&kmap_lock);
    int err = 0;
    for (uint64_t off = 0; off < len && !err; off += 4096) {
        uint64_t *pte = mmu_lookup_page(kernel_l1, DEVICE_VA_BASE + base + off);
        if (pte && (*pte & PTE_VALID))
            continue;       /* already mapped by an earlier request */
        err = mmu_map_range(kernel_l1, DEVICE_VA_BASE + base + off, base + off, 4096, KATTR_DEV, 0);
    }
    spin_unlock_irqrestore(&kmap_lock, flags);
    if (err)
        return err;
    *va_out = (void *)(DEVICE_VA_BASE + pa);
    return 0;
}

/* ---------------------------------------------------------------- user */

/* The valid leaf (block or page) mapping va, with its level, or NULL
 * with *level the level whose entry was empty. */
uint64_t *mmu_walk(uint64_t *l1, vaddr_t va, unsigned *level)
{
    uint64_t *e = &l1[(va >> L1_SHIFT) & 511];
    *level = 1;
    if (!(*e & PTE_VALID))
        return NULL;
    if (!(*e & PTE_TABLE))
        return e;
    e = &table_va(*e)[(va >> L2_SHIFT) & 511];
    *level = 2;
    if (!(*e & PTE_VALID))
        return NULL;
    if (!(*e & PTE_TABLE))
        return e;
    e = &table_va(*e)[(va >> L3_SHIFT) & 511];
    *level = 3;
    return (*e & PTE_VALID) ? e : NULL;
}

/* Is nothing mapped in [va, va+size)? Skips absent tables whole. */
bool mmu_range_empty(uint64_t *l1, vaddr_t va, uint64_t size)
{
    vaddr_t end = va + size;
    while (va < end) {
        uint64_t e1 = l1[(va >> L1_SHIFT) & 511];
        if (!(e1 & PTE_VALID)) {
            va = ALIGN_DOWN(va, GiB(1)) + GiB(1);
            continue;
        }
        if (!(e1 & PTE_TABLE))
            return false;
        uint64_t e2 = table_va(e1)[(va >> L2_SHIFT) & 511];
        if (!(e2 & PTE_VALID)) {
            va = ALIGN_DOWN(va, MiB(2)) + MiB(2);
            continue;
        }
        if (!(e2 & PTE_TABLE) || (table_va(e2)[(va >> L3_SHIFT) & 511] & PTE_VALID))
            return false;
        va = ALIGN_DOWN(va, 4096) + 4096;
    }
    return true;
}

/* Leaf attributes of a user mapping with `rights` (never W and X). */
uint64_t mmu_user_attrs(uint32_t rights, bool device)
{
    uint64_t a = PTE_AF | PTE_NG | PTE_AP_EL0 | PTE_PXN;
    a |= device ? PTE_ATTR(MT_DEVICE_nGnRE) : (PTE_ATTR(MT_NORMAL) | PTE_SH_INNER);
    if (!(rights & R_WRITE))
        a |= PTE_AP_RO;
    if (!(rights & R_EXEC) || (rights & R_WRITE))
        a |= PTE_UXN;
    return a;
}

paddr_t mmu_pte_pa(uint64_t pte) { return pte & PTE_ADDR_MASK; }

/*
 * The physical address of user address va in the space with table l1, if
 * EL0 there could read it (or write it): a software walk of the same
 * entries the MMU would use. PADDR_INVALID if not mapped so.
 */
paddr_t mmu_user_pa(uint64_t *l1, vaddr_t va, bool write)
{
    unsigned level;
    if (va >= USER_VA_TOP)
        return PADDR_INVALID;
    uint64_t *e = mmu_walk(l1, va, &level);
    if (!e || !(*e & PTE_AP_EL0) || (write && (*e & PTE_AP_RO)) || (*e & PTE_ATTR(7)) != PTE_ATTR(MT_NORMAL))
        return PADDR_INVALID;       /* device registers are no buffer the kernel copies */
    uint64_t size = level == 3 ? 4096 : level == 2 ? MiB(2) : GiB(1);
    return (*e & PTE_ADDR_MASK & ~(size - 1)) | (va & (size - 1));
}
bool mmu_pte_writable(uint64_t pte) { return !(pte & PTE_AP_RO); }

/*
 * User L3 tables count their valid entries (in the owner word of the
 * table's frame descriptor), so one that empties is unhooked at once (kept
 * as the space's spare, or freed): a process cannot pile up empty tables
 * that every later walk over its range would have to step through, and a
 * 2 MiB page can go where 4 KiB pages were. L2 tables (one per GiB, at most
 * 512 per space, charged) stay until the space goes. Tables made before
 * the frame allocator (the kernel's) have no descriptor and are never
 * counted or freed.
 */
static void table_count_add(uint64_t *table, int64_t n)
{
    uint64_t *count = frame_owner_word(virt_to_phys(table));
    if (count)
        *count += (uint64_t)n;
}

/* Drop n entries of the table under *entry; if it is empty then, unhook
 * it (after the TLBs of every core forget it) and keep it as the space's
 * spare (all its entries are zero: the next table needed is this one) or
 * free it and tell the caller. */
static bool table_drop(uint64_t *entry, uint16_t asid, vaddr_t va, uint64_t n, paddr_t *spare)
{
    uint64_t *table = table_va(*entry);
    uint64_t *count = frame_owner_word(virt_to_phys(table));
    if (!count || (*count -= MIN(n, *count)) != 0)
        return false;
    *entry = 0;
    dsb(ishst);
    __asm__ volatile("tlbi vae1is, %0" :: "r"(((uint64_t)asid << 48) | ((va >> 12) & 0xfffffffffffull)) : "memory");
    dsb(ish);
    if (!*spare) {
        *spare = virt_to_phys(table);
        return false;
    }
    frame_free(virt_to_phys(table), 0);
    return true;
}

/* How many tables mapping a page of `order` at va would have to create. */
unsigned mmu_tables_needed(uint64_t *l1, vaddr_t va, unsigned order)
{
    uint64_t e1 = l1[(va >> L1_SHIFT) & 511];
    if (!(e1 & PTE_VALID))
        return order == 9 ? 1 : 2;
    if (order == 9 || !(e1 & PTE_TABLE))
        return 0;
    return (table_va(e1)[(va >> L2_SHIFT) & 511] & PTE_VALID) ? 0 : 1;
}

/*
 * Map one page of 4 KiB (order 0), 64 KiB (order 4: sixteen entries with
 * the contiguous hint) or 2 MiB (order 9: an L2 block) at va -> pa.
 * -E_BUSY if anything is mapped there already.
 */
int mmu_map_user(uint64_t *l1, vaddr_t va, paddr_t pa, uint64_t attrs, unsigned order, unsigned *tables,
                 paddr_t *spare)
{
    uint64_t *e1 = &l1[(va >> L1_SHIFT) & 511];
    uint64_t *l2 = next_table_spare(e1, tables, spare);
    if (!l2)
        return (*e1 & PTE_VALID) ? -E_BUSY : -E_NOMEM;
    uint64_t *e2 = &l2[(va >> L2_SHIFT) & 511];
    if (order == 9) {
        if (*e2 & PTE_VALID)
            return -E_BUSY;
        *e2 = pa | attrs | PTE_VALID;
        dsb(ishst);
        return 0;
    }
    uint64_t *l3 = next_table_spare(e2, tables, spare);
    if (!l3)
        return (*e2 & PTE_VALID) ? -E_BUSY : -E_NOMEM;
    unsigned n = 1u << order, first = (va >> L3_SHIFT) & 511;
    for (unsigned i = 0; i < n; i++)
        if (l3[first + i] & PTE_VALID)
            return -E_BUSY;
    uint64_t cont = order == 4 ? PTE_CONT : 0;
    for (unsigned i = 0; i < n; i++)
        l3[first + i] = (pa + 4096ull * i) | attrs | cont | PTE_VALID | PTE_PAGE;
    dsb(ishst);
    table_count_add(l3, n);
    return 0;
}

static inline void tlbi_page(uint16_t asid, vaddr_t va)
{
    __asm__ volatile("tlbi vae1is, %0" :: "r"(((uint64_t)asid << 48) | ((va >> 12) & 0xfffffffffffull)) : "memory");
}

/* Replace a live entry: break, invalidate on every core, make. */
void mmu_set_pte(uint64_t *l1 UNUSED, uint16_t asid, uint64_t *pte, uint64_t value, vaddr_t va)
{
    *pte = 0;
    dsb(ishst);
    tlbi_page(asid, va);
    dsb(ish);
    *pte = value;
    dsb(ishst);
    isb();
}

/* Invalidate the n leaves of asid just cleared (their addresses in va[],
 * the first TLBI_BATCH of them) on every core: one by one, or, past
 * TLBI_BATCH, the whole ASID at once, as Linux does past a table's worth:
 * under QEMU every broadcast invalidation stops every other core, so a
 * process's teardown would cost one such stop per page. */
#define TLBI_BATCH      32

static void tlbi_leaves(uint16_t asid, const vaddr_t *va, unsigned n)
{
    if (!n)
        return;
    dsb(ishst);
    if (n > TLBI_BATCH) {
        __asm__ volatile("tlbi aside1is, %0" :: "r"((uint64_t)asid << 48) : "memory");
        return;
    }
    for (unsigned i = 0; i < n; i++)
        tlbi_page(asid, va[i]);
}

/* Remove every leaf in [va, va+size) and invalidate it on every core;
 * tables left empty are freed. Returns how many table pages were freed. */
unsigned mmu_unmap_user(uint64_t *l1, uint16_t asid, vaddr_t va, uint64_t size, paddr_t *spare)
{
    vaddr_t end = va + size;
    unsigned freed = 0;
    while (va < end) {
        uint64_t *e1 = &l1[(va >> L1_SHIFT) & 511];
        if (!(*e1 & PTE_VALID) || !(*e1 & PTE_TABLE)) {
            va = ALIGN_DOWN(va, GiB(1)) + GiB(1);   /* no table (user space has no 1 GiB blocks) */
            continue;
        }
        uint64_t *e2 = &table_va(*e1)[(va >> L2_SHIFT) & 511];
        if (!(*e2 & PTE_VALID)) {
            va = ALIGN_DOWN(va, MiB(2)) + MiB(2);
            continue;
        }
        if (!(*e2 & PTE_TABLE)) {               /* a 2 MiB page */
            *e2 = 0;
            dsb(ishst);
            tlbi_page(asid, va);
            va = ALIGN_DOWN(va, MiB(2)) + MiB(2);
            continue;
        }
        /* Within one L3 table: clear what the range covers, invalidate
         * it, then count (the table may go: after the invalidation). */
        uint64_t *l3 = table_va(*e2);
        vaddr_t stop = MIN(end, ALIGN_DOWN(va, MiB(2)) + MiB(2));
        vaddr_t gone[TLBI_BATCH];
        unsigned cleared = 0;
        for (; va < stop; va += 4096) {
            uint64_t *e = &l3[(va >> L3_SHIFT) & 511];
            if (!(*e & PTE_VALID))
                continue;
            if (*e & PTE_CONT) {                /* a 64 KiB page goes whole */
                uint64_t *first = e - ((va >> 12) & 15);
                vaddr_t base = ALIGN_DOWN(va, KiB(64));
                for (unsigned i = 0; i < 16; i++) {
                    if (first[i] & PTE_VALID) {
                        if (cleared < TLBI_BATCH)
                            gone[cleared] = base + 4096ull * i;
                        cleared++;
                    }
                    first[i] = 0;
                }
                va = base + KiB(64) - 4096;
                continue;
            }
            *e = 0;
            if (cleared < TLBI_BATCH)
                gone[cleared] = va;
            cleared++;
        }
        tlbi_leaves(asid, gone, cleared);
        if (cleared)
            freed += table_drop(e2, asid, va - 4096, cleared, spare);
    }
    dsb(ish);
    isb();
    return freed;
}

/* Are the eight entries of a table from t on all zero (nothing there)?
 * Most of a user table is: a process's tables are scanned eight entries
 * to a test (four load pairs), not one. */
static inline bool table_octet_empty(const uint64_t *t)
{
    return !(t[0] | t[1] | t[2] | t[3] | t[4] | t[5] | t[6] | t[7]);
}

/* Free the L2 and L3 tables under a user L1 (not the pages they map). */
void mmu_free_tables(uint64_t *l1)
{
    for (unsigned i = 0; i < 512; i++) {
        if (i % 8 == 0 && table_octet_empty(&l1[i])) {
            i += 7;
            continue;
        }
        if ((l1[i] & 3) != 3)
            continue;
        uint64_t *l2 = table_va(l1[i]);
        for (unsigned j = 0; j < 512; j++) {
            if (j % 8 == 0 && table_octet_empty(&l2[j])) {
                j += 7;
                continue;
            }
            if ((l2[j] & 3) == 3)
                frame_free(l2[j] & PTE_ADDR_MASK, 0);
        }
        frame_free(l1[i] & PTE_ADDR_MASK, 0);
        l1[i] = 0;
    }
}

static uint64_t asid_map[65536 / 64];

/* A free ASID (1..65535); 0 is never given out. */
int mmu_asid_alloc(uint16_t *asid)
{
    for (unsigned w = 0; w < ARRAY_SIZE(asid_map); w++) {
        if (asid_map[w] == ~0ull)
            continue;
        unsigned b = (unsigned)__builtin_ctzll(~asid_map[w]);
        unsigned a = w * 64 + b;
        if (a == 0) {
            asid_map[0] |= 1;
            w--;
            continue;
        }
        asid_map[w] |= 1ull << b;
        *asid = (uint16_t)a;
        return 0;
    }
    return -E_NOMEM;
}

/* Retire an ASID: flush its entries from every core's TLB first. */
void mmu_asid_free(uint16_t asid)
{
    dsb(ishst);
    __asm__ volatile("tlbi aside1is, %0" :: "r"((uint64_t)asid << 48) : "memory");
    dsb(ish);
    asid_map[asid / 64] &= ~(1ull << (asid % 64));
}


/*
 * The kernel alias of user address va if EL0 of the current space may
 * read (or write) it, by asking the MMU itself (AT S1E0R/W); NULL if not.
 */
void *arch_user_translate(vaddr_t va, bool write)
{
    if (va >= USER_VA_TOP)
        return NULL;
    if (write)
        __asm__ volatile("at s1e0w, %0" :: "r"(va));
    else
        __asm__ volatile("at s1e0r, %0" :: "r"(va));
    isb();
    uint64_t par = read_sysreg(par_el1);
    if ((par & 1) || (par >> 56) != 0xff)
        return NULL;                /* not mapped, or not normal memory (device registers) */
    return phys_to_virt((par & PTE_ADDR_MASK) | (va & 0xfff));
}

/* ------------------------------------------------- K2's shared pages (DSM) */

/* A kernel (global) translation leaves every core's TLB. */
static inline void tlbi_kernel_va(vaddr_t va)
{
    __asm__ volatile("dsb ishst; tlbi vaae1is, %0; dsb ish; isb" :: "r"((va >> 12) & 0xfffffffffffull) : "memory");
}

/* Map [va, va + size) read-write with 2 MiB blocks (all three aligned). */
int arch_kmap_blocks(vaddr_t va, paddr_t pa, uint64_t size)
{
    if (!IS_ALIGNED(va | pa | size, MiB(2)))
        return -E_INVAL;
    uint64_t flags = spin_lock_irqsave(&kmap_lock);
    int err = mmu_map_range(kernel_l1, va, pa, size, KATTR_RW, MAP_BLOCKS);
    spin_unlock_irqrestore(&kmap_lock, flags);
    return err;
}

/* Is va's 2 MiB one block of this kernel's map? */
bool arch_kmap_is_block(vaddr_t va)
{
    unsigned level;
    uint64_t *e = mmu_walk(kernel_l1, va, &level);
    return e && level == 2;
}

/*
 * Replace the 2 MiB block holding va by 512 pages with its attributes, in
 * `table` (a zeroed page the caller set aside: this runs where nothing
 * may be allocated). Break before make: the block entry is cleared and
 * gone from every core's TLB before the table goes in; a core touching
 * the range meanwhile faults and waits for the caller's lock. Returns
 * false (table unused) when va's 2 MiB is no block.
 */
bool arch_kmap_split(vaddr_t va, paddr_t table)
{
    va = ALIGN_DOWN(va, MiB(2));
    uint64_t flags = spin_lock_irqsave(&kmap_lock);
    unsigned level;
    uint64_t *e2 = mmu_walk(kernel_l1, va, &level);
    if (!e2 || level != 2) {
        spin_unlock_irqrestore(&kmap_lock, flags);
        return false;
    }
    uint64_t block = *e2;
    paddr_t pa = block & PTE_ADDR_MASK;
    uint64_t attrs = block & ~(PTE_ADDR_MASK | PTE_VALID | PTE_TABLE);
    uint64_t *l3 = phys_to_virt(table);
    for (unsigned i = 0; i < 512; i++)
        l3[i] = (pa + 4096ull * i) | attrs | PTE_VALID | PTE_PAGE;
    *e2 = 0;
    tlbi_kernel_va(va);
    *e2 = table | PTE_VALID | PTE_TABLE;
    dsb(ishst);
    isb();
    spin_unlock_irqrestore(&kmap_lock, flags);
    return true;
}

/*
 * Map va's 4 KiB read-write to pa, or (valid false) unmap it and wait
 * until no core's TLB holds it. The 2 MiB must be a table already or
 * have nothing mapped (a table is then made: -E_NOMEM if none could be);
 * -E_BUSY if a block maps it.
 */
int arch_kmap_page(vaddr_t va, paddr_t pa, bool valid)
{
    uint64_t flags = spin_lock_irqsave(&kmap_lock);
    uint64_t *l2 = next_table(&kernel_l1[(va >> L1_SHIFT) & 511]);
    uint64_t *e2 = l2 ? &l2[(va >> L2_SHIFT) & 511] : NULL;
    uint64_t *l3 = e2 ? next_table(e2) : NULL;
    int err = 0;
    if (!l3) {
        err = (e2 && (*e2 & PTE_VALID)) ? -E_BUSY : -E_NOMEM;
    } else if (valid) {
        l3[(va >> L3_SHIFT) & 511] = pa | KATTR_RW | PTE_VALID | PTE_PAGE;
        dsb(ishst);
        isb();
    } else {
        l3[(va >> L3_SHIFT) & 511] = 0;
        tlbi_kernel_va(va);
    }
    spin_unlock_irqrestore(&kmap_lock, flags);
    return err;
}

/* Make the table of the cores' aliases now, so that a cache flush in a
 * handler later allocates nothing. */
int arch_cache_alias_init(void)
{
    _Static_assert(CONFIG_MAX_CPUS * 4096 <= (2 << 20), "the aliases share one table");
    return arch_kmap_page(KALIAS_VA_BASE, 0, false);
}

/*
 * Clean and invalidate the physical page pa from the data caches to the
 * point of coherence, through this core's own alias of it (its direct-map
 * entry may be gone already, and a maintenance operation by VA needs a
 * mapping). Returns the number of lines (CTR_EL0.DminLine) it took.
 */
unsigned arch_cache_flush_page(paddr_t pa, unsigned cpu_index)
{
    vaddr_t alias = KALIAS_VA_BASE + (vaddr_t)cpu_index * 4096;
    unsigned line = 4u << ((read_sysreg(ctr_el0) >> 16) & 15);
    if (arch_kmap_page(alias, pa, true) != 0)
        return 0;
    unsigned n = 0;
    for (unsigned off = 0; off < 4096; off += line, n++)
        __asm__ volatile("dc civac, %0" :: "r"(alias + off) : "memory");
    dsb(sy);
    arch_kmap_page(alias, 0, false);
    return n;
}
