/*
 * Address spaces (processes) and kernel access to user memory.
 *
 * A space is torn down — its handles closed, its mappings removed — when
 * it has no threads left after having had some, or when its last handle
 * is closed while it has none. That breaks the reference cycles a space
 * can be part of (its table holding handles to itself or its threads);
 * its page tables and ASID go when the last reference does.
 */
#include "space.h"
#include "thread.h"
#include "memobj.h"
#include "kmalloc.h"
#include "memory.h"
#include "cpu.h"
#include "syscalls_gen.h"

static uint32_t next_pid = 1;

struct space *space_create(void)
{
    struct space *s = kmalloc(sizeof(*s));
    if (!s)
        return NULL;
    paddr_t l1 = frame_alloc_zeroed(0);
    if (l1 == PADDR_INVALID || mmu_asid_alloc(&s->asid) != 0) {
        if (l1 != PADDR_INVALID)
            frame_free(l1, 0);
        kfree(s, sizeof(*s));
        return NULL;
    }
    if (handle_table_init(&s->handles) != 0) {
        mmu_asid_free(s->asid);
        frame_free(l1, 0);
        kfree(s, sizeof(*s));
        return NULL;
    }
    obj_init(&s->obj, OBJ_SPACE);
    s->l1_pa = l1;
    s->l1 = phys_to_virt(l1);
    s->id = next_pid++;
    list_init(&s->threads);
    list_init(&s->mappings);
    return s;
}

/* Close all handles and remove all mappings (once). */
void space_teardown(struct space *s)
{
    if (s->torn_down)
        return;
    s->torn_down = true;
    bool alive = s->obj.refs > 0;   /* not called from space_free */
    if (alive)
        obj_ref(&s->obj);           /* survive the handles to itself going */
    while (!list_empty(&s->mappings))
        memobj_unmap(list_first(&s->mappings, struct mapping, link));
    handle_table_destroy(s);
    if (alive)
        obj_unref(&s->obj);
}

void space_shutdown(struct object *o)
{
    struct space *s = list_entry(o, struct space, obj);
    if (s->nthreads == 0)
        space_teardown(s);
}

void space_free(struct object *o)
{
    struct space *s = list_entry(o, struct space, obj);
    space_teardown(s);
    mmu_free_tables(s->l1);
    frame_free(s->l1_pa, 0);
    mmu_asid_free(s->asid);
    kfree(s, sizeof(*s));
}

/* The mapping record covering va, or NULL. */
struct mapping *space_find_mapping(struct space *s, vaddr_t va)
{
    list_for_each(pos, &s->mappings) {
        struct mapping *m = list_entry(pos, struct mapping, link);
        if (va >= m->va && va - m->va < m->size)
            return m;
    }
    return NULL;
}

/* Map [va, va+size) to [pa, ...) in pages of 4 KiB << page_order. */
int space_map_pages(struct space *s, vaddr_t va, paddr_t pa, uint64_t size, uint32_t rights,
                    unsigned page_order, bool device)
{
    uint64_t attrs = mmu_user_attrs(rights, device), step = 4096ull << page_order;
    for (uint64_t off = 0; off < size; off += step) {
        int err = mmu_map_user(s->l1, va + off, pa + off, attrs, page_order);
        if (err) {
            space_unmap_range(s, va, off);
            return err;
        }
    }
    return 0;
}

void space_unmap_range(struct space *s, vaddr_t va, uint64_t size)
{
    mmu_unmap_user(s->l1, s->asid, va, size);
}

uint64_t *space_pte(struct space *s, vaddr_t va, unsigned *level)
{
    return mmu_walk(s->l1, va, level);
}

/* ---------------------------------------------------------------- memory limits */

int space_charge(struct space *s, uint64_t bytes)
{
    if (!s)
        return 0;
    if (s->mem_limit && (s->mem_used + bytes > s->mem_limit || s->mem_used + bytes < s->mem_used))
        return -E_NOMEM;
    s->mem_used += bytes;
    return 0;
}

void space_uncharge(struct space *s, uint64_t bytes)
{
    if (s)
        s->mem_used -= MIN(bytes, s->mem_used);
}

int64_t sys_space_limit(uint32_t h, uint64_t bytes)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, h, OBJ_SPACE, R_MANAGE, &sl);
    if (err)
        return err;
    struct space *s = list_entry(sl->obj, struct space, obj);
    if (bytes && bytes < s->mem_used)
        return -E_RANGE;
    if (s == current_thread()->space && s->mem_limit && (!bytes || bytes > s->mem_limit))
        return -E_PERM;             /* a process cannot raise its own limit */
    s->mem_limit = bytes;
    return (int64_t)s->mem_used;
}

/* ---------------------------------------------------------------- user memory */

/*
 * The kernel alias of a user byte the current thread may read (or
 * write). Pages of lazy or copy-on-write mappings not yet touched are
 * filled first, exactly as a user access would.
 */
void *user_ptr(vaddr_t va, bool write)
{
    void *p = arch_user_translate(va, write);
    if (p)
        return p;
    struct thread *t = current_thread();
    if (!t || memobj_resolve(t->space, va, write) != 0)
        return NULL;
    return arch_user_translate(va, write);
}

int copy_from_user(void *dst, vaddr_t src, size_t len)
{
    uint8_t *d = dst;
    if (src + len < src)
        return -E_FAULT;
    while (len) {
        const uint8_t *p = user_ptr(src, false);
        if (!p)
            return -E_FAULT;
        size_t chunk = MIN(len, 4096 - (src & 4095));
        memcpy(d, p, chunk);
        d += chunk, src += chunk, len -= chunk;
    }
    return 0;
}

int copy_to_user(vaddr_t dst, const void *src, size_t len)
{
    const uint8_t *s = src;
    if (dst + len < dst)
        return -E_FAULT;
    while (len) {
        uint8_t *p = user_ptr(dst, true);
        if (!p)
            return -E_FAULT;
        size_t chunk = MIN(len, 4096 - (dst & 4095));
        memcpy(p, s, chunk);
        s += chunk, dst += chunk, len -= chunk;
    }
    return 0;
}

/* The kernel alias of va in space s for a user access, filling lazy or
 * copy-on-write pages as a touch there would. */
static void *other_ptr(struct space *s, vaddr_t va, bool write)
{
    paddr_t pa = mmu_user_pa(s->l1, va, write);
    if (pa == PADDR_INVALID && memobj_resolve(s, va, write) == 0)
        pa = mmu_user_pa(s->l1, va, write);
    return pa == PADDR_INVALID ? NULL : phys_to_virt(pa);
}

/* Copy len bytes between my_va (current space) and other_va (space other). */
int space_copy(struct space *other, vaddr_t other_va, vaddr_t my_va, size_t len, bool to_other)
{
    if (other_va + len < other_va || my_va + len < my_va)
        return -E_FAULT;
    while (len) {
        size_t chunk = MIN(len, MIN(4096 - (other_va & 4095), 4096 - (my_va & 4095)));
        uint8_t *theirs = other_ptr(other, other_va, to_other);
        uint8_t *mine = user_ptr(my_va, !to_other);
        if (!theirs || !mine)
            return -E_FAULT;
        if (to_other)
            memcpy(theirs, mine, chunk);
        else
            memcpy(mine, theirs, chunk);
        other_va += chunk, my_va += chunk, len -= chunk;
    }
    return 0;
}

/* ---------------------------------------------------------------- system calls */

int64_t sys_space_create(void)
{
    struct space *s = space_create();
    if (!s)
        return -E_NOMEM;
    int64_t h = handle_alloc(current_thread()->space, &s->obj, R_ALL, 0);
    obj_unref(&s->obj);             /* the handle holds it now */
    return h;
}

int64_t sys_space_id(uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, h, OBJ_SPACE, 0, &sl);
    if (err)
        return err;
    return list_entry(sl->obj, struct space, obj)->id;
}
