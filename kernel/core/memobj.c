/*
 * Memory objects and their mappings.
 *
 * Anonymous objects keep one physical block per page (4 KiB, 64 KiB or
 * 2 MiB), committed at creation (eager) or at the first touch (lazy,
 * zero-filled). A copy-on-write clone shares every committed block with
 * its source, each block counting its sharers (frame_share); all
 * mappings of the source are dropped so that they fault again, and any
 * write to a shared block — through either object — copies it first.
 * A clone of a boot image file reads unwritten pages from the file in
 * place and copies a page only when it is written.
 *
 * Invariants:
 *  - a page table entry maps a block writable only if the mapping has
 *    R_WRITE and the block has a single sharer;
 *  - whenever an object's block for a page changes, every mapping of that
 *    page is removed (on all cores) before anyone can use it again;
 *  - no mapping is ever writable and executable.
 */
#include "memobj.h"
#include "space.h"
#include "thread.h"
#include "memory.h"
#include "kmalloc.h"
#include "bootimage.h"
#include "syscalls_gen.h"

#define ANON_RIGHTS MEMOBJ_ANON_RIGHTS
#define FILE_RIGHTS MEMOBJ_FILE_RIGHTS
#define PHYS_RIGHTS (R_READ | R_WRITE | R_GRANT | R_DUP)
#define MAX_PAGES   (MiB(2) / sizeof(paddr_t))

extern struct object root_object;

static uint64_t page_bytes(const struct memobj *m) { return 4096ull << m->order; }

/* Bytes the pages array of n pages takes (charged to the owner). */
static uint64_t pages_bytes(uint64_t n)
{
    uint64_t bytes = n * sizeof(paddr_t);
    if (bytes <= 2048)
        return kmalloc_size(bytes);
    unsigned order = 0;
    while ((4096ull << order) < bytes)
        order++;
    return 4096ull << order;
}

/* The pages array: kmalloc for small objects, whole frames for big ones. */
static paddr_t *pages_alloc(uint64_t n)
{
    uint64_t bytes = n * sizeof(paddr_t);
    if (bytes <= 2048)
        return kmalloc(bytes);
    unsigned order = 0;
    while ((4096ull << order) < bytes)
        order++;
    paddr_t pa = frame_alloc_zeroed(order);
    return pa == PADDR_INVALID ? NULL : phys_to_virt(pa);
}

static void pages_free(paddr_t *p, uint64_t n)
{
    uint64_t bytes = n * sizeof(paddr_t);
    if (!p)
        return;
    if (bytes <= 2048) {
        kfree(p, bytes);
        return;
    }
    unsigned order = 0;
    while ((4096ull << order) < bytes)
        order++;
    frame_free(virt_to_phys(p), order);
}

/* Make sure the CPU fetches what the kernel just wrote into a frame. */
static void sync_icache(void *va, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += 64)
        __asm__ volatile("dc cvau, %0" :: "r"((uint8_t *)va + off) : "memory");
    __asm__ volatile("dsb ish; ic ialluis; dsb ish; isb" ::: "memory");
}

/* A memory object record charged to payer (its page array is charged separately). */
static struct memobj *alloc_obj(unsigned kind, uint64_t size, unsigned order, struct space *payer, int *err)
{
    struct memobj *m = obj_alloc(sizeof(*m), OBJ_MEMORY, payer, err);
    if (!m)
        return NULL;
    m->kind = (uint8_t)kind;
    m->order = (uint8_t)order;
    m->size = size;
    list_init(&m->mappings);
    return m;
}

struct memobj *memobj_create(uint64_t size, unsigned order, bool eager, int *err)
{
    return memobj_create_for(NULL, size, order, eager, err);
}

/* Charge the owner for one more committed page of m. */
static int charge(struct memobj *m)
{
    return space_charge(m->owner, LIMIT_MEMORY, page_bytes(m));
}

struct memobj *memobj_create_for(struct space *owner, uint64_t size, unsigned order, bool eager, int *err)
{
    uint64_t pb = 4096ull << order;
    *err = -E_INVAL;
    if ((order != 0 && order != 4 && order != 9) || size == 0 || !IS_ALIGNED(size, pb))
        return NULL;
    *err = -E_NOMEM;
    if (size / pb > MAX_PAGES)
        return NULL;
    /* Its record and page array are the owner's too (a lazy 512 GiB
     * object of 2 MiB pages has a 2 MiB array before any page exists). */
    if ((*err = space_charge(owner, LIMIT_MEMORY, pages_bytes(size / pb))) != 0)
        return NULL;
    struct memobj *m = alloc_obj(MEM_ANON, size, order, owner, err);
    if (!m) {
        space_uncharge(owner, LIMIT_MEMORY, pages_bytes(size / pb));
        return NULL;
    }
    *err = -E_NOMEM;
    m->npages = size / pb;
    m->eager = eager;
    m->owner = owner;               /* before anything can fail: the free uncharges it */
    if (owner)
        obj_ref(&owner->obj);
    m->pages = pages_alloc(m->npages);
    if (!m->pages) {
        obj_unref(&m->obj);
        return NULL;
    }
    for (uint64_t i = 0; eager && i < m->npages; i++) {
        if ((*err = charge(m)) != 0) {
            obj_unref(&m->obj);
            return NULL;
        }
        m->pages[i] = frame_alloc_zeroed(order);
        if (m->pages[i] == PADDR_INVALID) {
            m->pages[i] = 0;
            space_uncharge(m->owner, LIMIT_MEMORY, pb);
            *err = -E_NOMEM;
            obj_unref(&m->obj);
            return NULL;
        }
    }
    *err = 0;
    return m;
}

struct memobj *memobj_create_file(struct space *payer, paddr_t pa, uint64_t size, int *err)
{
    struct memobj *m = alloc_obj(MEM_FILE, ALIGN_UP(size, 4096), 0, payer, err);
    if (m) {
        m->base = pa;
        m->eager = true;
    }
    return m;
}

void memobj_free(struct object *o)
{
    struct memobj *m = list_entry(o, struct memobj, obj);
    for (uint64_t i = 0; m->pages && i < m->npages; i++) {
        if (m->pages[i]) {
            frame_release(m->pages[i], m->order);
            space_uncharge(m->owner, LIMIT_MEMORY, page_bytes(m));
        }
    }
    pages_free(m->pages, m->npages);
    if (m->kind == MEM_ANON)
        space_uncharge(m->owner, LIMIT_MEMORY, pages_bytes(m->npages));
    if (m->owner)
        obj_unref(&m->owner->obj);
    kfree(m, sizeof(*m));
}

/* Remove page idx of m from every mapping that shows it. */
static void unmap_page_everywhere(struct memobj *m, uint64_t idx)
{
    uint64_t pb = page_bytes(m), off = idx * pb;
    list_for_each(pos, &m->mappings) {
        struct mapping *map = list_entry(pos, struct mapping, mem_link);
        if (off >= map->offset && off - map->offset < map->size)
            space_unmap_range(map->space, map->va + (off - map->offset), pb);
    }
}

/* A fresh block for page idx: zeros, or the source file's bytes. */
static paddr_t fill_page(struct memobj *m, uint64_t idx, paddr_t copy_from)
{
    uint64_t pb = page_bytes(m);
    paddr_t pa = frame_alloc(m->order);
    if (pa == PADDR_INVALID)
        return pa;
    uint8_t *dst = phys_to_virt(pa);
    uint64_t have = 0;
    if (copy_from) {
        have = pb;
        memcpy(dst, phys_to_virt(copy_from), pb);
    } else if (m->src_pa && idx * pb < m->src_size) {
        have = MIN(pb, m->src_size - idx * pb);
        memcpy(dst, phys_to_virt(m->src_pa + idx * pb), have);
    }
    if (have == 0)
        arch_zero(dst, pb);             /* a whole page: block zeroing */
    else
        memset(dst + have, 0, pb - have);
    if (have)
        sync_icache(dst, pb);
    return pa;
}

/*
 * The block to show for page idx on an access, committing or un-sharing
 * it as the access needs; *writable says whether it may be mapped so.
 */
static int page_for_access(struct memobj *m, uint64_t idx, bool write, paddr_t *pa, bool *writable)
{
    uint64_t pb = page_bytes(m);
    *writable = false;
    if (m->kind != MEM_ANON) {
        *pa = m->base + idx * pb;
        *writable = m->kind == MEM_PHYS;
        return 0;
    }
    paddr_t cur = m->pages[idx];
    if (!cur && !write && m->src_pa && idx * pb < m->src_size) {
        *pa = m->src_pa + idx * pb;     /* unwritten file page: shown in place */
        return 0;
    }
    unsigned sharers = cur ? frame_sharers(cur) : 0;
    if (!cur || (write && sharers > 1)) {
        int err = cur ? 0 : charge(m);
        if (err)
            return err;                 /* over the owner's memory limit */
        paddr_t fresh = fill_page(m, idx, cur);
        if (fresh == PADDR_INVALID) {
            if (!cur)
                space_uncharge(m->owner, LIMIT_MEMORY, pb);
            return -E_NOMEM;
        }
        if (cur)
            frame_release(cur, m->order);
        bool had_view = cur || m->src_pa;
        m->pages[idx] = fresh;
        if (had_view)
            unmap_page_everywhere(m, idx);
        *pa = fresh;
        *writable = true;               /* just made: nobody shares it */
        return 0;
    }
    *pa = cur;
    *writable = sharers == 1;
    return 0;
}

/* Install the page under va for map (replacing a read-only view). */
static int install(struct mapping *map, vaddr_t va, bool write)
{
    struct memobj *m = map->mem;
    uint64_t pb = page_bytes(m);
    uint64_t off = va - map->va + map->offset;
    uint64_t idx = off / pb;
    vaddr_t page_va = map->va + (idx * pb - map->offset);
    paddr_t pa;
    bool writable;
    /* A page of anonymous memory never filled, with no file behind it, has
     * never been shown anywhere: nothing is mapped at page_va to replace. */
    bool unseen = m->kind == MEM_ANON && !m->pages[idx] && !m->src_pa;
    int err = page_for_access(m, idx, write, &pa, &writable);
    if (err)
        return err;
    uint32_t rights = map->rights;
    if (!writable)
        rights &= ~R_WRITE;
    unsigned level;
    if (!unseen && space_pte(map->space, page_va, &level))
        space_unmap_range(map->space, page_va, pb);
    return space_map_pages(map->space, page_va, pa, pb, rights, m->order, m->kind == MEM_PHYS);
}

int memobj_write(struct memobj *m, uint64_t offset, const void *src, uint64_t len)
{
    const uint8_t *from = src;
    if (m->kind != MEM_ANON)
        return -E_PERM;
    if (offset + len < offset || offset + len > m->size)
        return -E_INVAL;
    uint64_t pb = page_bytes(m);
    while (len) {
        uint64_t idx = offset / pb, in = offset % pb, n = MIN(len, pb - in);
        paddr_t pa;
        bool writable;
        int err = page_for_access(m, idx, true, &pa, &writable);
        if (err)
            return err;
        memcpy((uint8_t *)phys_to_virt(pa) + in, from, n);
        sync_icache((uint8_t *)phys_to_virt(pa) + in, n);
        offset += n, from += n, len -= n;
    }
    return 0;
}

int memobj_cas32(struct memobj *m, uint64_t offset, uint32_t expect, uint32_t desired, uint32_t *old)
{
    if (m->kind != MEM_ANON)
        return -E_PERM;
    if ((offset & 3) || offset >= m->size)
        return -E_INVAL;
    uint64_t pb = page_bytes(m);
    paddr_t pa;
    bool writable;
    int err = page_for_access(m, offset / pb, true, &pa, &writable);
    if (err)
        return err;
    uint32_t *word = (uint32_t *)((uint8_t *)phys_to_virt(pa) + offset % pb);
    __atomic_compare_exchange_n(word, &expect, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = expect;
    return 0;
}

/* The read side of memobj_write: committed pages are copied, the others
 * read as fill_page would make them, without making them (a read of a
 * file the service never wrote costs no memory). */
int memobj_read(struct memobj *m, uint64_t offset, void *dst, uint64_t len)
{
    uint8_t *to = dst;
    if (m->kind == MEM_PHYS)
        return -E_PERM;
    if (offset + len < offset || offset + len > m->size)
        return -E_INVAL;
    uint64_t pb = page_bytes(m);
    while (len) {
        uint64_t idx = offset / pb, in = offset % pb, n = MIN(len, pb - in), from_src = 0;
        if (m->kind == MEM_FILE) {
            memcpy(to, (const uint8_t *)phys_to_virt(m->base) + offset, n);
        } else if (m->pages[idx]) {
            memcpy(to, (const uint8_t *)phys_to_virt(m->pages[idx]) + in, n);
        } else {
            /* Not committed: what fill_page would make, the source file's
             * bytes (a clone of a file) up to its size, then zeros. */
            if (m->src_pa && offset < m->src_size)
                from_src = MIN(n, m->src_size - offset);
            if (from_src)
                memcpy(to, (const uint8_t *)phys_to_virt(m->src_pa) + offset, from_src);
            memset(to + from_src, 0, n - from_src);
        }
        offset += n, to += n, len -= n;
    }
    return 0;
}

int memobj_resolve_access(struct space *s, vaddr_t va, bool write, bool exec)
{
    struct mapping *map = space_find_mapping(s, va);
    if (!map)
        return -E_FAULT;
    uint32_t need = R_READ | (write ? R_WRITE : 0) | (exec ? R_EXEC : 0);
    if ((map->rights & need) != need)
        return -E_PERM;
    return install(map, va, write);
}

int memobj_resolve(struct space *s, vaddr_t va, bool write)
{
    return memobj_resolve_access(s, va, write, false);
}

/* A mapping record for space s, charged to it; NULL with *err. */
static struct mapping *mapping_alloc(struct space *s, int *err)
{
    *err = space_charge(s, LIMIT_MEMORY, kmalloc_size(sizeof(struct mapping)));
    if (*err)
        return NULL;
    struct mapping *map = kmalloc(sizeof(*map));
    if (!map) {
        space_uncharge(s, LIMIT_MEMORY, kmalloc_size(sizeof(struct mapping)));
        *err = -E_NOMEM;
    }
    return map;
}

/* Give back a mapping record mapping_alloc made for s, never linked. */
static void mapping_free(struct space *s, struct mapping *map)
{
    space_uncharge(s, LIMIT_MEMORY, kmalloc_size(sizeof(struct mapping)));
    kfree(map, sizeof(*map));
}

int memobj_map(struct space *s, struct memobj *m, vaddr_t va, uint64_t offset, uint64_t size, uint32_t rights)
{
    return memobj_map_max(s, m, va, offset, size, rights, rights);
}

int memobj_map_max(struct space *s, struct memobj *m, vaddr_t va, uint64_t offset, uint64_t size, uint32_t rights,
                   uint32_t max_rights)
{
    uint64_t pb = page_bytes(m);
    if ((rights & R_WRITE) && (rights & R_EXEC))
        return -E_PERM;
    if (!(rights & R_READ) || (rights & ~(R_READ | R_WRITE | R_EXEC)) || size == 0 ||
        !IS_ALIGNED(va | offset | size, pb) || offset > m->size || size > m->size - offset ||
        va < USER_VA_MIN || va >= USER_VA_LIMIT || size > USER_VA_LIMIT - va)
        return -E_INVAL;
    if (s->torn_down)
        return -E_CLOSED;           /* a dead process gets no new mappings */
    if (!mmu_range_empty(s->l1, va, size))
        return -E_BUSY;
    int err;
    struct mapping *map = mapping_alloc(s, &err);
    if (!map)
        return err;
    map->space = s;
    map->mem = m;
    map->va = va;
    map->size = size;
    map->offset = offset;
    map->rights = rights;
    map->max_rights = (max_rights | rights) & (R_READ | R_WRITE | R_EXEC);
    map->node.start = va;
    map->node.size = size;
    if (vatree_insert(&s->mappings, &map->node)) {
        mapping_free(s, map);       /* overlaps a mapping: the insert's own descent found it */
        return -E_BUSY;
    }
    obj_ref(&m->obj);
    list_add_tail(&m->mappings, &map->mem_link);
    if (!m->eager)
        return 0;
    for (uint64_t off = 0; off < size; off += pb) {
        err = install(map, va + off, false);
        if (err) {
            memobj_unmap(map);
            return err;
        }
    }
    return 0;
}

void memobj_unmap(struct mapping *map)
{
    space_unmap_range(map->space, map->va, map->size);
    vatree_remove(&map->space->mappings, &map->node);
    list_del(&map->mem_link);
    obj_unref(&map->mem->obj);
    mapping_free(map->space, map);
}

/* A copy-on-write clone of src, charged to owner. */
struct memobj *memobj_clone(struct space *owner, struct memobj *src, int *err)
{
    *err = -E_INVAL;
    if (src->kind == MEM_PHYS)
        return NULL;
    *err = -E_PERM;
    if (src->dma)
        return NULL;                /* a device may be writing its pages: they are never shared */
    struct memobj *c = memobj_create_for(owner, src->size, src->order, false, err);
    if (!c)
        return NULL;
    if (src->kind == MEM_FILE) {
        c->src_pa = src->base;
        c->src_size = src->size;
        return c;
    }
    c->src_pa = src->src_pa;
    c->src_size = src->src_size;
    /* Every view of the source may have been writable: drop them all
     * first (the TLBs of every core with them), so that a thread of the
     * source running on another core meanwhile faults (and waits for the
     * kernel) instead of writing into a page the clone already shares. */
    list_for_each(pos, &src->mappings) {
        struct mapping *map = list_entry(pos, struct mapping, mem_link);
        space_unmap_range(map->space, map->va, map->size);
    }
    for (uint64_t i = 0; i < src->npages; i++) {
        if (!src->pages[i])
            continue;
        *err = charge(c);
        if (!*err && frame_share(src->pages[i]) != 0) {
            space_uncharge(owner, LIMIT_MEMORY, page_bytes(c));
            *err = -E_NOMEM;
        }
        if (*err) {
            obj_unref(&c->obj);
            return NULL;
        }
        c->pages[i] = src->pages[i];
    }
    return c;
}

/* ---------------------------------------------------------------- system calls */

static struct space *cur_space(void) { return current_thread()->space; }

/* Give the caller a handle to a new object (which the handle then owns). */
static int64_t hand_out(struct memobj *m, uint32_t rights)
{
    int64_t h = handle_alloc(cur_space(), &m->obj, rights, 0);
    obj_unref(&m->obj);
    return h;
}

int64_t sys_mem_create(uint64_t size, uint32_t flags)
{
    static const unsigned orders[] = { 0, 4, 9 };
    if ((flags & ~(MEM_PAGE_MASK | MEM_EAGER | MEM_DMA)) || (flags & MEM_PAGE_MASK) > MEM_PAGE_2M)
        return -E_INVAL;
    int err;
    struct memobj *m = memobj_create_for(cur_space(), size, orders[flags & MEM_PAGE_MASK],
                                         flags & (MEM_EAGER | MEM_DMA), &err);
    if (m)
        m->dma = flags & MEM_DMA;
    return m ? hand_out(m, ANON_RIGHTS) : err;
}

/* The physical address of the byte at `offset` of a MEM_DMA object: its
 * page is one block of the object's page size, and stays where it is for
 * the object's life (committed at creation, never shared by a clone). */
int64_t sys_mem_dma_addr(uint32_t h, uint64_t offset)
{
    struct handle_slot *sl;
    int err = handle_get(cur_space(), h, OBJ_MEMORY, R_WRITE, &sl);
    if (err)
        return err;
    struct memobj *m = list_entry(sl->obj, struct memobj, obj);
    if (!m->dma || offset >= m->size)
        return -E_INVAL;
    uint64_t pb = page_bytes(m);
    return (int64_t)(m->pages[offset / pb] + offset % pb);
}

/* The system object: R_MANAGE for device memory, R_READ for the boot files. */
static int root_right(uint32_t h, uint32_t right)
{
    struct handle_slot *sl;
    return handle_get(cur_space(), h, OBJ_ROOT, right, &sl);
}

int64_t sys_mem_create_phys(uint32_t root, uint64_t pa, uint64_t size)
{
    int err = root_right(root, R_MANAGE);
    if (err)
        return err;
    if (size == 0 || !IS_ALIGNED(pa | size, 4096) || pa + size < pa || pa + size > GiB(256))
        return -E_INVAL;
    const struct mem_range *ram;
    unsigned n = mem_ram_ranges(&ram);
    for (unsigned i = 0; i < n; i++)
        if (pa < ram[i].base + ram[i].size && ram[i].base < pa + size)
            return -E_INVAL;
    struct memobj *m = alloc_obj(MEM_PHYS, size, 0, cur_space(), &err);
    if (!m)
        return err;
    m->base = pa;
    m->eager = true;
    return hand_out(m, PHYS_RIGHTS);
}

int64_t sys_mem_from_bootfile(uint32_t root, uint64_t index)
{
    struct bootimage_file f;
    int err = root_right(root, R_READ);
    if (err)
        return err;
    if (index > 0xffff || bootimage_get((unsigned)index, &f) != 0 || f.size == 0)
        return -E_NOENT;
    struct memobj *m = memobj_create_file(cur_space(), f.pa, f.size, &err);
    return m ? hand_out(m, FILE_RIGHTS) : err;
}

int64_t sys_mem_clone(uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(cur_space(), h, OBJ_MEMORY, R_READ, &sl);
    if (err)
        return err;
    struct memobj *c = memobj_clone(cur_space(), list_entry(sl->obj, struct memobj, obj), &err);
    return c ? hand_out(c, ANON_RIGHTS) : err;
}

int64_t sys_mem_map(uint32_t space_h, uint32_t mem_h, uint64_t va, uint64_t offset, uint64_t size, uint32_t rights)
{
    struct handle_slot *ss, *ms;
    int err = handle_get(cur_space(), space_h, OBJ_SPACE, R_MANAGE, &ss);
    if (!err)
        err = handle_get(cur_space(), mem_h, OBJ_MEMORY, 0, &ms);
    if (err)
        return err;
    return memobj_map_checked(list_entry(ss->obj, struct space, obj), list_entry(ms->obj, struct memobj, obj),
                              ms->rights, va, offset, size, rights);
}

int memobj_map_checked(struct space *s, struct memobj *m, uint32_t held, vaddr_t va, uint64_t offset, uint64_t size,
                       uint32_t rights)
{
    if ((rights & R_WRITE) && (rights & R_EXEC))
        return -E_PERM;
    if ((held & rights & (R_READ | R_WRITE | R_EXEC)) != (rights & (R_READ | R_WRITE | R_EXEC)))
        return -E_PERM;
    return memobj_map_max(s, m, va, offset, size, rights, held);
}

int64_t sys_mem_unmap(uint32_t space_h, uint64_t va)
{
    struct handle_slot *ss;
    int err = handle_get(cur_space(), space_h, OBJ_SPACE, R_MANAGE, &ss);
    if (err)
        return err;
    struct space *s = list_entry(ss->obj, struct space, obj);
    struct mapping *map = space_find_mapping(s, va);
    if (!map || map->va != va)
        return -E_NOENT;
    memobj_unmap(map);
    return 0;
}

/* ---------------------------------------------------------------- ranges */

/*
 * Cut map in two at va (strictly inside it): map keeps [map->va, va), a
 * new record takes [va, end) with the same object window and rights. The
 * new record is charged like any mapping record. The tree stays ordered
 * with map's range shrunk in place (its start does not move and no other
 * record overlaps it).
 */
static int split(struct mapping *map, vaddr_t va)
{
    struct space *s = map->space;
    int err;
    struct mapping *t = mapping_alloc(s, &err);
    if (!t)
        return err;
    *t = *map;
    t->va = va;
    t->size = map->va + map->size - va;
    t->offset = map->offset + (va - map->va);
    map->size = va - map->va;
    map->node.size = map->size;
    t->node.start = t->va;
    t->node.size = t->size;
    t->node.left = t->node.right = t->node.parent = NULL;
    vatree_insert(&s->mappings, &t->node);      /* the space map gave up: cannot overlap */
    obj_ref(&t->mem->obj);
    list_add_tail(&t->mem->mappings, &t->mem_link);
    return 0;
}

/* Is a cut at va allowed (outside every mapping, or on a page boundary of
 * the one it falls in)? */
static bool cut_ok(struct space *s, vaddr_t va)
{
    struct mapping *map = space_find_mapping(s, va);
    return !map || map->va == va || IS_ALIGNED(va - map->va, page_bytes(map->mem));
}

/* Cut the mapping containing va there (nothing if none or at its start). */
static int cut_at(struct space *s, vaddr_t va)
{
    struct mapping *map = space_find_mapping(s, va);
    return (!map || map->va == va) ? 0 : split(map, va);
}

/* Validate [va, va + size) and cut the mappings at both of its ends, so
 * that it is covered by whole records. */
/* A non-empty page-aligned range inside the mappable part of user space? */
static bool range_ok(vaddr_t va, uint64_t size)
{
    return size && IS_ALIGNED(va | size, 4096) && va >= USER_VA_MIN && va < USER_VA_LIMIT &&
           size <= USER_VA_LIMIT - va;
}

static int cut_range(struct space *s, vaddr_t va, uint64_t size)
{
    if (!range_ok(va, size))
        return -E_INVAL;
    if (!cut_ok(s, va) || !cut_ok(s, va + size))
        return -E_INVAL;                /* inside a large page */
    int err = cut_at(s, va);
    return err ? err : cut_at(s, va + size);
}

int64_t sys_mem_unmap_range(uint32_t space_h, uint64_t va, uint64_t size)
{
    struct handle_slot *ss;
    int err = handle_get(cur_space(), space_h, OBJ_SPACE, R_MANAGE, &ss);
    if (err)
        return err;
    return memobj_unmap_range(list_entry(ss->obj, struct space, obj), va, size);
}

int memobj_unmap_range(struct space *s, vaddr_t va, uint64_t size)
{
    /* One search: the records to go follow the first in address order;
     * the two at the ends are cut first (each checked before either is). */
    if (!range_ok(va, size))
        return -E_INVAL;
    vaddr_t end = va + size;
    struct vanode *first = vatree_first_overlap(&s->mappings, va, size), *w = first;
    while (w && w->start + w->size <= end)
        w = vatree_next(w);
    struct mapping *lo = first && first->start < va ? vanode_entry(first, struct mapping, node) : NULL;
    struct mapping *hi = w && w->start < end ? vanode_entry(w, struct mapping, node) : NULL;
    if ((lo && !IS_ALIGNED(va - lo->va, page_bytes(lo->mem))) ||
        (hi && !IS_ALIGNED(end - hi->va, page_bytes(hi->mem))))
        return -E_INVAL;                /* inside a large page */
    int err;
    if (lo) {
        if ((err = split(lo, va)) != 0)
            return err;
        first = vatree_next(&lo->node);
        if (hi == lo)
            hi = vanode_entry(first, struct mapping, node);
    }
    if (hi && (err = split(hi, end)) != 0)
        return err;
    for (struct vanode *n = first; n && n->start < end; ) {
        struct vanode *next = vatree_next(n);
        memobj_unmap(vanode_entry(n, struct mapping, node));
        n = next;
    }
    return 0;
}

int64_t sys_mem_protect(uint32_t space_h, uint64_t va, uint64_t size, uint32_t rights)
{
    struct handle_slot *ss;
    int err = handle_get(cur_space(), space_h, OBJ_SPACE, R_MANAGE, &ss);
    if (err)
        return err;
    return memobj_protect_range(list_entry(ss->obj, struct space, obj), va, size, rights);
}

int memobj_protect_range(struct space *s, vaddr_t va, uint64_t size, uint32_t rights)
{
    int err;
    if (!(rights & R_READ) || (rights & ~(R_READ | R_WRITE | R_EXEC)))
        return -E_INVAL;
    if ((rights & R_WRITE) && (rights & R_EXEC))
        return -E_PERM;
    if (!range_ok(va, size))
        return -E_INVAL;
    /* Every page of the range must be mapped, each allowing the rights. */
    for (vaddr_t at = va; at < va + size; ) {
        struct mapping *map = space_find_mapping(s, at);
        if (!map)
            return -E_NOENT;
        if ((map->max_rights & rights) != rights)
            return -E_PERM;
        at = map->va + map->size;
    }
    if ((err = cut_range(s, va, size)) != 0)
        return err;
    for (struct vanode *n = vatree_first_overlap(&s->mappings, va, size); n && n->start < va + size;
         n = vatree_next(n)) {
        struct mapping *map = vanode_entry(n, struct mapping, node);
        map->rights = rights;
        space_unmap_range(s, map->va, map->size);   /* pages come back with the new rights */
    }
    return 0;
}

int64_t sys_mem_size(uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(cur_space(), h, OBJ_MEMORY, 0, &sl);
    return err ? err : (int64_t)list_entry(sl->obj, struct memobj, obj)->size;
}
