/*
 * The physical frame allocator: a binary buddy system over all RAM.
 *
 * Every 4 KiB frame has a 16-byte descriptor. A free block of 2^order
 * frames sits on free_list[order], linked through the descriptor of its
 * first frame, which records the order and FRAME_FREE. An allocated
 * block's first frame records its order and FRAME_USED, so frame_free
 * can reject a wrong order, a double free or a pointer into the middle
 * of a block instead of corrupting the lists. Freeing merges a block
 * with its buddy (the block whose frame number differs only in bit
 * `order`) as long as the buddy is free and of the same order.
 *
 * Orders run from 0 (4 KiB) to FRAME_MAX_ORDER (2 MiB), which gives the
 * 64 KiB (order 4) and 2 MiB (order 9) blocks that back large pages.
 * Allocation and free are O(FRAME_MAX_ORDER) under one lock.
 *
 * Single frames, by far the most common request (every page a fault
 * fills, every page table), come from a small cache in front of the
 * lists: it is refilled a 64 KiB block at a time and takes single frames
 * back when they are freed, so a run of page faults costs no splitting or
 * merging per page. A cached frame (FRAME_CACHED) counts as free; an
 * allocation the lists cannot satisfy, and frame_free_blocks, first
 * return the cache to the lists, where its frames merge as usual.
 *
 * K2 (k2_mem.c) adds two things. Its balloon pool is withheld at
 * frame_init and handed over 16 MiB at a time (frame_add_range, at the
 * tail of the lists, so that it is used last) or taken back whole
 * (frame_take_range). frame_alloc tells the pressure probe when free
 * pages drop below frame_low_mark, and frame_free sends a frame the other
 * kernel allocated back to it (k2_mem_remote).
 */
#include "memory.h"
#include "kernel.h"
#include "spinlock.h"
#include "sched.h"
#include "arch.h"
#include "k2.h"

#define NONE        0xffffffffu
#define FRAME_RESERVED  0
#define FRAME_FREE      1
#define FRAME_USED      2
#define FRAME_CACHED    3
#define CACHE_MAX       64
#define CACHE_REFILL    4           /* the order of the block a refill splits */

struct frame {
    union {
        struct { uint32_t next, prev; };    /* FRAME_FREE: free-list links (frame indexes) */
        uint64_t owner_word;                /* FRAME_USED, order 0: its owner's (kmalloc) */
    };
    uint8_t order;
    uint8_t state;
    uint16_t refs;          /* sharers of an allocated block (copy-on-write) */
    uint8_t pad[4];
};

static struct frame *frames;
static paddr_t base_pa;             /* physical address of frame 0 */
static uint32_t nframes;
static uint32_t free_list[FRAME_MAX_ORDER + 1];
static uint32_t free_count[FRAME_MAX_ORDER + 1];
static uint64_t free_pages, managed_pages;
static spinlock_t lock = SPINLOCK_INIT;
static uint32_t cache[CACHE_MAX];   /* single free frames, by index */
static unsigned ncached;
uint64_t frame_low_mark;            /* 0 without K2: never below */
bool frame_k2;

/* The allocator's lock, with this core's interrupts masked; while only
 * one core runs, masking them is all it takes. */
static inline uint64_t frames_lock(void)
{
    uint64_t flags = arch_irq_save();
    if (smp_running)
        spin_lock(&lock);
    return flags;
}

static inline void frames_unlock(uint64_t flags)
{
    if (smp_running)
        spin_unlock(&lock);
    arch_irq_restore(flags);
}

static void list_push(uint32_t idx, unsigned order)
{
    struct frame *f = &frames[idx];
    f->state = FRAME_FREE;
    f->order = (uint8_t)order;
    f->prev = NONE;
    f->next = free_list[order];
    if (f->next != NONE)
        frames[f->next].prev = idx;
    free_list[order] = idx;
    free_count[order]++;
    free_pages += 1ull << order;
}

static void list_remove(uint32_t idx)
{
    struct frame *f = &frames[idx];
    if (f->prev != NONE)
        frames[f->prev].next = f->next;
    else
        free_list[f->order] = f->next;
    if (f->next != NONE)
        frames[f->next].prev = f->prev;
    free_count[f->order]--;
    free_pages -= 1ull << f->order;
    f->state = FRAME_USED;
}

/* Put a block at the end of its list (frames added by K2's balloons:
 * used after everything else). Caller holds the lock. */
static void list_append(uint32_t idx, unsigned order)
{
    uint32_t last = free_list[order];
    if (last == NONE) {
        list_push(idx, order);
        return;
    }
    while (frames[last].next != NONE)
        last = frames[last].next;
    struct frame *f = &frames[idx];
    f->state = FRAME_FREE;
    f->order = (uint8_t)order;
    f->prev = last;
    f->next = NONE;
    frames[last].next = idx;
    free_count[order]++;
    free_pages += 1ull << order;
}

/* Is [base, base+size) clear of every reserved range? */
static bool range_free(paddr_t base, uint64_t size)
{
    const struct mem_range *r;
    unsigned n = mem_reserved_ranges(&r);
    for (unsigned i = 0; i < n; i++)
        if (base < r[i].base + r[i].size && r[i].base < base + size)
            return false;
    return true;
}

/* Hand the free frames in [lo, hi) to the lists in maximal aligned blocks. */
static void add_free_range(uint32_t lo, uint32_t hi, bool at_end)
{
    while (lo < hi) {
        unsigned order = FRAME_MAX_ORDER;
        while (order && ((lo & ((1u << order) - 1)) || lo + (1u << order) > hi))
            order--;
        if (at_end)
            list_append(lo, order);
        else
            list_push(lo, order);
        managed_pages += 1ull << order;
        lo += 1u << order;
    }
}

/* Hand the frames of [first, last) that are in no list yet, no
 * reservation and (at frame_init) not K2's pool to the lists, run by run;
 * `clear`: the caller knows no reservation touches the range. A K2
 * deflate puts them at the end (at_end) and gives the pool's frames. */
static void add_free_runs(uint32_t first, uint32_t last, bool at_end, bool clear)
{
    uint32_t run = NONE;
    for (uint32_t f = first; f < last; f++) {
        paddr_t pa = base_pa + ((uint64_t)f << 12);
        bool ok = frames[f].state == FRAME_RESERVED && (clear || range_free(pa, 4096)) &&
                  (at_end || !mem_is_withheld(pa));
        if (ok && run == NONE)
            run = f;
        if (!ok && run != NONE) {
            add_free_range(run, f, at_end);
            run = NONE;
        }
    }
    if (run != NONE)
        add_free_range(run, last, at_end);
}

/* Build the descriptors and free lists from RAM minus reservations. */
int frame_init(void)
{
    const struct mem_range *ram;
    unsigned nram = mem_ram_ranges(&ram);
    paddr_t lo = ram[0].base, hi = ram[0].base + ram[0].size;
    for (unsigned i = 1; i < nram; i++) {
        lo = MIN(lo, ram[i].base);
        hi = MAX(hi, ram[i].base + ram[i].size);
    }
    base_pa = ALIGN_DOWN(lo, MiB(2));  /* buddies align to absolute frame numbers */
    nframes = (uint32_t)((hi - lo) >> 12);
    uint64_t table = ALIGN_UP((uint64_t)nframes * sizeof(struct frame), 4096);

    /* Place the descriptor table in the first free stretch that fits
     * (not in K2's pool: that is no kernel's until a balloon deflates). */
    paddr_t where = PADDR_INVALID;
    for (unsigned i = 0; i < nram && where == PADDR_INVALID; i++)
        for (paddr_t p = ram[i].base; p + table <= ram[i].base + ram[i].size; p += MiB(2) - (p & (MiB(2) - 1)))
            if (range_free(p, table) && !mem_overlaps_withheld(p, table)) {
                where = p;
                break;
            }
    if (where == PADDR_INVALID)
        return -E_NOMEM;
    mem_reserve(where, table);
    frames = phys_to_virt(where);
    memset(frames, 0, table);
    for (unsigned o = 0; o <= FRAME_MAX_ORDER; o++)
        free_list[o] = NONE;

    /* Walk every frame: free runs between reservations become blocks. */
    for (unsigned i = 0; i < nram; i++) {
        uint32_t first = (uint32_t)((ram[i].base - base_pa) >> 12);
        add_free_runs(first, first + (uint32_t)(ram[i].size >> 12), false, false);
    }
    boot_alloc_done();
    return 0;
}

/* Take a block of 2^order frames off the lists (splitting a larger one),
 * or NONE. Caller holds the lock. */
static uint32_t buddy_take(unsigned order)
{
    unsigned o = order;
    while (o <= FRAME_MAX_ORDER && free_list[o] == NONE)
        o++;
    if (o > FRAME_MAX_ORDER)
        return NONE;
    uint32_t idx = free_list[o];
    list_remove(idx);
    while (o > order) {
        o--;
        list_push(idx + (1u << o), o);
    }
    return idx;
}

/* Put the block of 2^order frames at idx on the lists, merged with its
 * free buddies. Caller holds the lock. */
static void buddy_put(uint32_t idx, unsigned order)
{
    while (order < FRAME_MAX_ORDER) {
        uint32_t buddy = idx ^ (1u << order);
        if (buddy >= nframes || frames[buddy].state != FRAME_FREE || frames[buddy].order != order)
            break;
        list_remove(buddy);
        frames[buddy].state = FRAME_RESERVED;
        frames[idx].state = FRAME_RESERVED;
        idx = MIN(idx, buddy);
        order++;
    }
    list_push(idx, order);
}

/* Return every cached frame to the lists. Caller holds the lock. */
static void cache_drain(void)
{
    while (ncached) {
        free_pages--;                   /* buddy_put counts it again */
        buddy_put(cache[--ncached], 0);
    }
}

/* A single frame for the empty cache: a block of the lists goes into it
 * and one of its frames is returned; NONE if the lists have no frame.
 * Caller holds the lock. */
static NOINLINE uint32_t cache_refill(void)
{
    uint32_t idx = buddy_take(CACHE_REFILL);
    if (idx == NONE)
        return buddy_take(0);
    for (uint32_t i = 1u << CACHE_REFILL; i-- > 1; ) {
        frames[idx + i].state = FRAME_CACHED;
        cache[ncached++] = idx + i;
    }
    free_pages += (1u << CACHE_REFILL) - 1;    /* still free, in the cache */
    return idx;
}

/* A single frame from the cache (refilled when empty), or NONE. Caller
 * holds the lock. */
static inline uint32_t cache_take(void)
{
    if (!ncached)
        return cache_refill();
    free_pages--;
    return cache[--ncached];
}

/* The lists could not give a block of 2^order frames: try again with the
 * cache returned to them (its frames may merge into one). */
static NOINLINE uint32_t take_drained(unsigned order)
{
    if (!ncached)
        return NONE;
    cache_drain();
    return buddy_take(order);
}

/* Allocate 2^order contiguous frames aligned to their size. Under K2,
 * when nothing is left, a block of the balloon comes in first (the
 * pressure probe should have seen to that before; k2_mem counts it). */
paddr_t frame_alloc(unsigned order)
{
    if (order > FRAME_MAX_ORDER || !frames)
        return PADDR_INVALID;
    uint64_t flags;
    uint32_t idx;
    for (;;) {
        flags = frames_lock();
        idx = order == 0 ? cache_take() : buddy_take(order);
        if (unlikely(idx == NONE))
            idx = take_drained(order);
        if (likely(idx != NONE))
            break;
        frames_unlock(flags);
        if (!frame_low_mark || !k2_mem_deflate_now())
            return PADDR_INVALID;
    }
    frames[idx].order = (uint8_t)order;
    frames[idx].state = FRAME_USED;
    frames[idx].refs = 1;
    frames[idx].owner_word = 0;
    frames_unlock(flags);
    if (unlikely(free_pages < frame_low_mark))
        k2_mem_pressure();
    return base_pa + ((uint64_t)idx << 12);
}

paddr_t frame_alloc_zeroed(unsigned order)
{
    paddr_t pa = frame_alloc(order);
    if (pa != PADDR_INVALID)
        arch_zero(phys_to_virt(pa), 4096ull << order);
    return pa;
}

/* Return a block; refuses anything frame_alloc did not hand out as such. */
int frame_free(paddr_t pa, unsigned order)
{
    if (order > FRAME_MAX_ORDER || !frames || pa < base_pa || !IS_ALIGNED(pa, 4096ull << order))
        return -E_INVAL;
    uint64_t idx64 = (pa - base_pa) >> 12;
    if (idx64 + (1ull << order) > nframes)
        return -E_INVAL;
    if (unlikely(frame_k2) && k2_mem_remote(pa))
        return k2_mem_free_remote(pa, order);
    uint32_t idx = (uint32_t)idx64;
    uint64_t flags = frames_lock();
    if (frames[idx].state != FRAME_USED || frames[idx].order != order) {
        frames_unlock(flags);
        return -E_INVAL;
    }
    if (order == 0 && ncached < CACHE_MAX) {
        frames[idx].state = FRAME_CACHED;
        cache[ncached++] = idx;
        free_pages++;
    } else {
        buddy_put(idx, order);
    }
    frames_unlock(flags);
    return 0;
}

uint64_t *frame_owner_word(paddr_t pa)
{
    if (!frames || pa < base_pa || ((pa - base_pa) >> 12) >= nframes)
        return NULL;
    struct frame *f = &frames[(pa - base_pa) >> 12];
    return f->state == FRAME_USED && f->order == 0 ? &f->owner_word : NULL;
}

/* The allocated block starting at pa, or NULL. Caller holds the lock. */
static struct frame *block_at(paddr_t pa)
{
    if (!frames || pa < base_pa || ((pa - base_pa) >> 12) >= nframes)
        return NULL;
    struct frame *f = &frames[(pa - base_pa) >> 12];
    return f->state == FRAME_USED ? f : NULL;
}

/* One more sharer of an allocated block; -E_NOMEM if the count is full. */
int frame_share(paddr_t pa)
{
    uint64_t flags = frames_lock();
    struct frame *f = block_at(pa);
    int err = !f ? -E_INVAL : f->refs == 0xffff ? -E_NOMEM : 0;
    if (!err)
        f->refs++;
    frames_unlock(flags);
    return err;
}

/* How many share the block at pa (0 if it is not an allocated block). */
unsigned frame_sharers(paddr_t pa)
{
    uint64_t flags = frames_lock();
    struct frame *f = block_at(pa);
    unsigned n = f ? f->refs : 0;
    frames_unlock(flags);
    return n;
}

/* Drop one sharer; the last one frees the block. */
int frame_release(paddr_t pa, unsigned order)
{
    uint64_t flags = frames_lock();
    struct frame *f = block_at(pa);
    if (!f || f->order != order) {
        frames_unlock(flags);
        return -E_INVAL;
    }
    bool last = --f->refs == 0;
    if (!last) {
        frames_unlock(flags);
        return 0;
    }
    f->refs = 1;
    frames_unlock(flags);
    return frame_free(pa, order);
}

/* K2's deflate: the frames of [base, base+size) that no reservation
 * holds and the lists do not have yet go on them, at the end. */
uint64_t frame_add_range(paddr_t base, uint64_t size)
{
    if (!frames || base < base_pa || ((base + size - base_pa) >> 12) > nframes)
        return 0;
    uint32_t first = (uint32_t)((base - base_pa) >> 12), last = first + (uint32_t)(size >> 12);
    uint64_t before = managed_pages;
    uint64_t flags = frames_lock();
    add_free_runs(first, last, true, range_free(base, size));
    frames_unlock(flags);
    return managed_pages - before;
}

/* K2's inflate: take every managed frame of [base, base+size) back off
 * the lists and out of the cache, only if all of them are free; else
 * change nothing and return -E_BUSY. The range must be 2 MiB aligned,
 * so that no free block reaches beyond it. */
int64_t frame_take_range(paddr_t base, uint64_t size)
{
    if (!frames || base < base_pa || !IS_ALIGNED(base, MiB(2)) || !IS_ALIGNED(size, MiB(2)) ||
        ((base + size - base_pa) >> 12) > nframes)
        return -E_INVAL;
    uint32_t first = (uint32_t)((base - base_pa) >> 12), last = first + (uint32_t)(size >> 12);
    uint64_t flags = frames_lock();
    for (uint32_t f = first; f < last; f += frames[f].state == FRAME_FREE ? 1u << frames[f].order : 1)
        if (frames[f].state == FRAME_USED) {
            frames_unlock(flags);
            return -E_BUSY;
        }
    int64_t taken = 0;
    for (unsigned i = 0; i < ncached; ) {
        if (cache[i] >= first && cache[i] < last) {
            frames[cache[i]].state = FRAME_RESERVED;
            cache[i] = cache[--ncached];
            free_pages--;
            taken++;
        } else {
            i++;
        }
    }
    for (uint32_t f = first; f < last; ) {
        if (frames[f].state != FRAME_FREE) {
            f++;
            continue;
        }
        unsigned order = frames[f].order;
        list_remove(f);
        frames[f].state = FRAME_RESERVED;
        taken += 1 << order;
        f += 1u << order;
    }
    managed_pages -= (uint64_t)taken;
    frames_unlock(flags);
    return taken;
}

uint64_t frame_free_pages(void) { return free_pages; }
uint64_t frame_managed_pages(void) { return managed_pages; }
/* Free blocks of 2^order frames on the lists, with the cache returned to them first. */
unsigned frame_free_blocks(unsigned order)
{
    if (order > FRAME_MAX_ORDER)
        return 0;
    uint64_t flags = frames_lock();
    cache_drain();
    unsigned n = free_count[order];
    frames_unlock(flags);
    return n;
}
