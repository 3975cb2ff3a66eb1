/*
 * Physical memory: the RAM ranges from the device tree, the ranges that
 * must never be handed out (kernel image, device tree, boot image,
 * firmware reservations), and the buddy allocator that serves the rest
 * in 4 KiB pages and power-of-two blocks up to 2 MiB.
 */
#ifndef PETREL_MEMORY_H
#define PETREL_MEMORY_H

#include "types.h"

struct fdt;

struct mem_range {
    paddr_t base;
    uint64_t size;
};

#define FRAME_ORDER_4K      0
#define FRAME_ORDER_64K     4
#define FRAME_ORDER_2M      9
#define FRAME_MAX_ORDER     9

/* memory.c */
int mem_discover(const struct fdt *fdt, paddr_t dtb_pa);
void mem_reserve(paddr_t base, uint64_t size);
void mem_hide(paddr_t base, uint64_t size); /* reserved and left out of the direct map (K2) */
unsigned mem_hidden_ranges(const struct mem_range **out);
void mem_withhold(paddr_t base, uint64_t size); /* not taken at frame_init, given later (K2's balloons) */
bool mem_is_withheld(paddr_t pa);
bool mem_overlaps_withheld(paddr_t base, uint64_t size);
bool mem_overlaps_reserved(paddr_t base, uint64_t size);
unsigned mem_ram_ranges(const struct mem_range **out);
unsigned mem_reserved_ranges(const struct mem_range **out);
uint64_t mem_total(void);
paddr_t boot_page_alloc(void);          /* early page-table pages */
void boot_alloc_done(void);

/* frame.c: the buddy allocator. */
int frame_init(void);
paddr_t frame_alloc(unsigned order);    /* PADDR_INVALID if none */
paddr_t frame_alloc_zeroed(unsigned order);
int frame_free(paddr_t pa, unsigned order);  /* -E_INVAL on a bad or double free */
/* A word in the descriptor of an allocated 4 KiB frame for its owner's
 * bookkeeping (zero when allocated); NULL if pa is no such frame. */
uint64_t *frame_owner_word(paddr_t pa);
int frame_share(paddr_t pa);            /* copy-on-write: one more sharer */
unsigned frame_sharers(paddr_t pa);
int frame_release(paddr_t pa, unsigned order);  /* one sharer fewer; frees at zero */
uint64_t frame_free_pages(void);
/* K2's balloons: hand the free frames of a range (withheld or taken
 * back before) to the allocator, or take them all back out of it. */
uint64_t frame_add_range(paddr_t base, uint64_t size);     /* the pages added */
int64_t frame_take_range(paddr_t base, uint64_t size);     /* the pages taken, -E_BUSY if one is in use */
extern uint64_t frame_low_mark;     /* K2: below this many free pages frame_alloc calls k2_mem_pressure */
extern bool frame_k2;               /* K2: frame_free asks k2_mem_remote whose a frame is */
uint64_t frame_managed_pages(void);
unsigned frame_free_blocks(unsigned order);

#endif
