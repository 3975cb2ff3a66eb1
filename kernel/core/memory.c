/*
 * Physical memory discovery: RAM from the device tree's memory nodes,
 * and the ranges that must stay untouched — the kernel image, the early
 * page-table pages, the device tree, the boot image (initrd), the
 * firmware's /memreserve/ entries and /reserved-memory children. The
 * frame allocator (frame.c) then manages RAM minus these.
 *
 * Early page-table pages come from a small window right after the
 * kernel image (boot_page_alloc), before the frame allocator exists.
 */
#include "memory.h"
#include "fdt.h"
#include "kernel.h"

#define MAX_RESERVED    32
#define BOOT_WINDOW     (64 * 4096)

static struct mem_range ram[CONFIG_MAX_MEM_REGIONS];
static unsigned nram;
static struct mem_range reserved[MAX_RESERVED];
static unsigned nreserved;
#define MAX_HIDDEN      4
static struct mem_range hidden[MAX_HIDDEN];
static unsigned nhidden;
static struct mem_range withheld;   /* K2's balloon pool: frame_init leaves it out */
static paddr_t boot_next, boot_end;
static bool boot_closed;

/* Mark [base, base+size) as never to be handed out. */
void mem_reserve(paddr_t base, uint64_t size)
{
    if (size == 0)
        return;
    if (nreserved == MAX_RESERVED)
        panic("too many reserved memory ranges");
    reserved[nreserved].base = ALIGN_DOWN(base, 4096);
    reserved[nreserved].size = ALIGN_UP(base + size, 4096) - reserved[nreserved].base;
    nreserved++;
}

/* Add every "reg" range of every memory node. */
static void add_memory_nodes(const struct fdt *fdt)
{
    for (int n = fdt_root(fdt); n >= 0; n = fdt_next_node(fdt, n, NULL)) {
        uint32_t len;
        const char *type = fdt_prop(fdt, n, "device_type", &len);
        if (!type || len != 7 || strcmp(type, "memory") != 0)
            continue;
        uint64_t base, size;
        for (unsigned i = 0; fdt_reg(fdt, n, i, &base, &size); i++) {
            if (size == 0 || nram == CONFIG_MAX_MEM_REGIONS)
                continue;
            ram[nram].base = ALIGN_UP(base, 4096);
            ram[nram].size = ALIGN_DOWN(base + size, 4096) - ram[nram].base;
            nram++;
        }
    }
}

/* A range this kernel must never touch: never handed out and not in the
 * direct map (K2: the other kernel's local region; before the final map). */
void mem_hide(paddr_t base, uint64_t size)
{
    if (nhidden == MAX_HIDDEN)
        panic("too many hidden memory ranges");
    mem_reserve(base, size);
    hidden[nhidden++] = reserved[nreserved - 1];
}

unsigned mem_hidden_ranges(const struct mem_range **out)
{
    *out = hidden;
    return nhidden;
}

/* A range the frame allocator does not take at frame_init but is given
 * piece by piece later (frame_add_range): K2's balloon pool. One only. */
void mem_withhold(paddr_t base, uint64_t size)
{
    withheld.base = base;
    withheld.size = size;
}

bool mem_is_withheld(paddr_t pa)
{
    return pa - withheld.base < withheld.size;
}

bool mem_overlaps_withheld(paddr_t base, uint64_t size)
{
    return withheld.size && base < withheld.base + withheld.size && withheld.base < base + size;
}

/* Reserve the /memreserve/ block entries and /reserved-memory children. */
static void add_reservations(const struct fdt *fdt)
{
    const uint8_t *rsv = fdt->blob + be32(fdt->blob + 16);
    for (;; rsv += 16) {
        uint64_t base = fdt_read_cells(rsv, 2), size = fdt_read_cells(rsv + 8, 2);
        if (base == 0 && size == 0)
            break;
        mem_reserve(base, size);
    }
    int rm = fdt_path(fdt, "/reserved-memory");
    for (int c = rm >= 0 ? fdt_first_child(fdt, rm) : -1; c >= 0; c = fdt_next_sibling(fdt, c)) {
        uint64_t base, size;
        for (unsigned i = 0; fdt_reg(fdt, c, i, &base, &size); i++)
            mem_reserve(base, size);
    }
}

/* Does [base, base+size) overlap any reserved range? */
bool mem_overlaps_reserved(paddr_t base, uint64_t size)
{
    for (unsigned i = 0; i < nreserved; i++)
        if (base < reserved[i].base + reserved[i].size && reserved[i].base < base + size)
            return true;
    return false;
}

/* Read RAM and reservations from the tree; reserve kernel, DTB, initrd. */
int mem_discover(const struct fdt *fdt, paddr_t dtb_pa)
{
    add_memory_nodes(fdt);
    if (nram == 0)
        return -E_NOENT;
    add_reservations(fdt);
    mem_reserve(dtb_pa, fdt->size);

    int chosen = fdt_path(fdt, "/chosen");
    uint32_t l1, l2;
    const void *s = chosen >= 0 ? fdt_prop(fdt, chosen, "linux,initrd-start", &l1) : NULL;
    const void *e = chosen >= 0 ? fdt_prop(fdt, chosen, "linux,initrd-end", &l2) : NULL;
    if (s && e && (l1 == 4 || l1 == 8) && (l2 == 4 || l2 == 8)) {
        paddr_t start = fdt_read_cells(s, l1 / 4), end = fdt_read_cells(e, l2 / 4);
        if (end > start)
            mem_reserve(start, end - start);
    }

    paddr_t kstart = virt_to_phys(__kernel_start), kend = virt_to_phys(__kernel_end);
    if (mem_overlaps_reserved(kend, BOOT_WINDOW))
        panic("no room for early page tables after the kernel image");
    mem_reserve(kstart, kend - kstart + BOOT_WINDOW);
    boot_next = kend;
    boot_end = kend + BOOT_WINDOW;
    return 0;
}

/* One zeroed page for early page tables (before frame_init). */
paddr_t boot_page_alloc(void)
{
    if (boot_closed)
        return frame_alloc_zeroed(0);
    if (boot_next >= boot_end)
        panic("early page-table window exhausted");
    paddr_t pa = boot_next;
    boot_next += 4096;
    memset(phys_to_virt(pa), 0, 4096);
    return pa;
}

/* From now on page-table pages come from the frame allocator. */
void boot_alloc_done(void)
{
    boot_closed = true;
}

unsigned mem_ram_ranges(const struct mem_range **out)
{
    *out = ram;
    return nram;
}

unsigned mem_reserved_ranges(const struct mem_range **out)
{
    *out = reserved;
    return nreserved;
}

uint64_t mem_total(void)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < nram; i++)
        t += ram[i].size;
    return t;
}
