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
#include "ipc.h"
#include "thread.h"
#include "memobj.h"
#include "kmalloc.h"
#include "memory.h"
#include "cpu.h"
#include "syscalls_gen.h"

static uint32_t next_pid = 1;

/* What a space's own records take: its struct and L1 table. Its handle
 * table is charged as it grows (object.c). */
static uint64_t space_bytes(void)
{
    return kmalloc_size(sizeof(struct space)) + 4096;
}

struct space *space_create(struct space *parent, int *err)
{
    *err = space_charge(parent, LIMIT_SPACES, 1);
    if (*err)
        return NULL;
    *err = -E_NOMEM;
    struct space *s = kmalloc(sizeof(*s));
    paddr_t l1 = frame_alloc_zeroed(0);
    if (!s || l1 == PADDR_INVALID || mmu_asid_alloc(&s->asid) != 0)
        goto fail;
    handle_table_init(&s->handles);
    s->parent = parent;
    if ((*err = space_charge(s, LIMIT_MEMORY, space_bytes())) != 0) {
        mmu_asid_free(s->asid);
        goto fail;
    }
    list_init(&s->children);
    list_init(&s->ep_watches);
    if (parent) {
        obj_ref(&parent->obj);
        list_add_tail(&parent->children, &s->child_link);
    }
    obj_init(&s->obj, OBJ_SPACE);
    s->l1_pa = l1;
    s->l1 = phys_to_virt(l1);
    s->id = next_pid++;
    list_init(&s->threads);
    vatree_init(&s->mappings);
    *err = 0;
    return s;
fail:
    if (l1 != PADDR_INVALID)
        frame_free(l1, 0);
    kfree(s, sizeof(*s));
    space_uncharge(parent, LIMIT_SPACES, 1);
    return NULL;
}

/* End every thread of s; its teardown follows (now or from the work list). */
static unsigned kill_threads(struct space *s)
{
    unsigned n = 0;
    while (!list_empty(&s->threads)) {
        thread_kill(list_first(&s->threads, struct thread, space_link), -1);
        n++;
    }
    return n;
}

/*
 * Close all handles and remove all mappings, once. Afterwards the space
 * accepts no threads, mappings or handles (each of those checks
 * torn_down), so nothing it held can come back. The processes it
 * created die with it: a process cannot outlive its own end, or escape
 * space_kill, through a child it made (each child's teardown is queued,
 * so a deep family goes one generation at a time, without recursion).
 */
void space_teardown(struct space *s)
{
    if (s->torn_down)
        return;
    s->torn_down = true;
    bool alive = s->obj.refs > 0;   /* not called from space_free */
    if (alive)
        obj_ref(&s->obj);           /* survive the handles to itself going */
    list_for_each(pos, &s->children) {
        struct space *child = list_entry(pos, struct space, child_link);
        kill_threads(child);
        space_teardown_later(child);
    }
    while (s->mappings.root)
        memobj_unmap(vanode_entry(s->mappings.root, struct mapping, node));
    endpoint_watches_gone(s);       /* (first: no death signals its own notifications as they go) */
    handle_table_destroy(s);
    if (alive)
        obj_unref(&s->obj);
}

void space_maybe_orphaned(struct space *s)
{
    if (s->nthreads == 0 && s->obj.handles == s->inner_handles)
        space_teardown_later(s);
}

void space_shutdown(struct object *o)
{
    struct space *s = list_entry(o, struct space, obj);
    if (s->nthreads == 0)
        space_teardown_later(s);
}

void space_free(struct object *o)
{
    struct space *s = list_entry(o, struct space, obj);
    space_teardown(s);              /* only a space that never had a handle gets here untorn */
    ASSERT(!s->mappings.root && list_empty(&s->threads));
    mmu_free_tables(s->l1);
    if (s->spare_table)
        frame_free(s->spare_table, 0);
    frame_free(s->l1_pa, 0);
    mmu_asid_free(s->asid);
    struct space *parent = s->parent;
    space_uncharge(s, LIMIT_MEMORY, space_bytes() + s->table_pages * 4096);
    space_uncharge(parent, LIMIT_SPACES, 1);
    if (parent)
        list_del(&s->child_link);
    ASSERT(list_empty(&s->children));   /* each child holds a reference to it */
    kfree(s, sizeof(*s));
    if (parent)
        obj_unref(&parent->obj);
}

/* Kill every thread of s (a whole process ends at once) and tear it down,
 * and with it every process it created. */
unsigned space_kill(struct space *s)
{
    obj_ref(&s->obj);
    unsigned n = kill_threads(s);
    space_teardown_later(s);
    obj_unref(&s->obj);
    return n;
}

/* The mapping record covering va, or NULL (O(log n) in the mappings). */
struct mapping *space_find_mapping(struct space *s, vaddr_t va)
{
    struct vanode *n = vatree_find(&s->mappings, va);
    return n ? vanode_entry(n, struct mapping, node) : NULL;
}

/* Map [va, va+size) to [pa, ...) in pages of 4 KiB << page_order. The
 * page tables this needs are charged to s before they are made (none for
 * most pages: the tables are there already), so a space at its limit
 * gets E_LIMIT instead of tables for free; the space's spare table, if
 * used, is charged already. */
int space_map_pages(struct space *s, vaddr_t va, paddr_t pa, uint64_t size, uint32_t rights,
                    unsigned page_order, bool device)
{
    uint64_t attrs = mmu_user_attrs(rights, device), step = 4096ull << page_order;
    for (uint64_t off = 0; off < size; off += step) {
        unsigned need = mmu_tables_needed(s->l1, va + off, page_order), tables = 0;
        int err = need ? space_charge(s, LIMIT_MEMORY, need * 4096ull) : 0;
        if (!err) {
            err = mmu_map_user(s->l1, va + off, pa + off, attrs, page_order, &tables, &s->spare_table);
            if (need > tables)      /* the spare table, or nothing on an error */
                space_uncharge(s, LIMIT_MEMORY, (need - tables) * 4096ull);
            s->table_pages += tables;
        }
        if (err) {
            space_unmap_range(s, va, off);
            return err;
        }
    }
    return 0;
}

void space_unmap_range(struct space *s, vaddr_t va, uint64_t size)
{
    unsigned freed = mmu_unmap_user(s->l1, s->asid, va, size, &s->spare_table);
    s->table_pages -= MIN(freed, s->table_pages);
    space_uncharge(s, LIMIT_MEMORY, freed * 4096ull);
}

uint64_t *space_pte(struct space *s, vaddr_t va, unsigned *level)
{
    return mmu_walk(s->l1, va, level);
}

/* ---------------------------------------------------------------- limits */

int space_charge(struct space *s, unsigned kind, uint64_t amount)
{
    for (struct space *a = s; a; a = a->parent) {
        uint64_t now = a->used[kind];
        if (a->limit[kind] && (now + amount > a->limit[kind] || now + amount < now))
            return -E_LIMIT;
    }
    for (struct space *a = s; a; a = a->parent)
        a->used[kind] += amount;
    return 0;
}

void space_charge_force(struct space *s, unsigned kind, uint64_t amount)
{
    for (struct space *a = s; a; a = a->parent)
        a->used[kind] += amount;
}

void space_uncharge(struct space *s, unsigned kind, uint64_t amount)
{
    for (struct space *a = s; a; a = a->parent)
        a->used[kind] -= MIN(amount, a->used[kind]);
}

/* The space behind handle h with `rights`, or NULL with *err. */
static struct space *space_of(uint32_t h, uint32_t rights, int *err)
{
    struct handle_slot *sl;
    *err = handle_get(current_thread()->space, h, OBJ_SPACE, rights, &sl);
    return *err ? NULL : list_entry(sl->obj, struct space, obj);
}

/* Set limit `kind` of the space behind h; returns its usage. */
int64_t sys_space_set_limit(uint32_t h, uint32_t kind, uint64_t value)
{
    int err;
    struct space *s = space_of(h, R_MANAGE, &err);
    if (!s)
        return err;
    return space_set_limit(s, current_thread()->space, kind, value);
}

int64_t space_set_limit(struct space *s, struct space *by, unsigned kind, uint64_t value)
{
    if (kind >= LIMIT_KINDS)
        return -E_INVAL;
    /* A process cannot raise or remove a limit over itself or an ancestor. */
    for (struct space *a = by; a; a = a->parent)
        if (a == s && s->limit[kind] && (!value || value > s->limit[kind]))
            return -E_PERM;
    if (value && value < s->used[kind])
        return -E_RANGE;
    s->limit[kind] = value;
    return (int64_t)s->used[kind];
}

int64_t sys_space_limit(uint32_t h, uint64_t bytes)
{
    return sys_space_set_limit(h, LIMIT_MEMORY, bytes);
}

int64_t sys_space_usage(uint32_t h, uint32_t kind)
{
    int err;
    struct space *s = space_of(h, 0, &err);
    if (!s)
        return err;
    bool max = kind & LIMIT_QUERY_MAX;
    kind &= ~LIMIT_QUERY_MAX;
    if (kind >= LIMIT_KINDS)
        return -E_INVAL;
    return (int64_t)(max ? s->limit[kind] : s->used[kind]);
}

extern struct space *root_space;

int64_t sys_space_kill(uint32_t h)
{
    int err;
    struct space *s = space_of(h, R_MANAGE, &err);
    if (!s)
        return err;
    if (s == root_space)
        return -E_STATE;
    return space_kill(s);
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

/* Copy len bytes between kbuf (the kernel's) and other_va (space other). */
int space_copy_kernel(struct space *other, vaddr_t other_va, uint8_t *kbuf, size_t len, bool to_other)
{
    if (other_va + len < other_va)
        return -E_FAULT;
    while (len) {
        size_t chunk = MIN(len, 4096 - (other_va & 4095));
        uint8_t *theirs = other_ptr(other, other_va, to_other);
        if (!theirs)
            return -E_FAULT;
        if (to_other)
            memcpy(theirs, kbuf, chunk);
        else
            memcpy(kbuf, theirs, chunk);
        other_va += chunk, kbuf += chunk, len -= chunk;
    }
    return 0;
}

/* Copy len bytes between my_va (current space) and other_va (space other):
 * a page of mine at a time, through its kernel alias. */
int space_copy(struct space *other, vaddr_t other_va, vaddr_t my_va, size_t len, bool to_other)
{
    if (other_va + len < other_va || my_va + len < my_va)
        return -E_FAULT;
    while (len) {
        size_t chunk = MIN(len, 4096 - (my_va & 4095));
        uint8_t *mine = user_ptr(my_va, !to_other);
        if (!mine || space_copy_kernel(other, other_va, mine, chunk, to_other))
            return -E_FAULT;
        other_va += chunk, my_va += chunk, len -= chunk;
    }
    return 0;
}

/* ---------------------------------------------------------------- system calls */

int64_t sys_space_create(void)
{
    int err;
    struct space *s = space_create(current_thread()->space, &err);
    if (!s)
        return err;
    int64_t h = handle_alloc(current_thread()->space, &s->obj, R_ALL, 0);
    obj_unref(&s->obj);             /* the handle holds it now */
    return h;
}

/* Whether the space numbered `id` is there and, if it ever had a thread,
 * not being torn down (its last thread ended, or it was killed). A space
 * that never had a thread (an account a kernel-placed service charges,
 * whose id its calls to other services carry, torn down once its creator
 * let its handle go) lives while it is there. A walk of the tree of
 * spaces: for services that look now and then. */
bool space_id_alive(uint64_t id)
{
    struct space *s = root_space;
    while (s) {
        if (s->id == id)
            return !s->had_threads || (!s->torn_down && !s->teardown_queued);
        if (!list_empty(&s->children)) {
            s = list_first(&s->children, struct space, child_link);
            continue;
        }
        /* the next sibling of s or of its nearest ancestor that has one */
        while (s != root_space && s->child_link.next == &s->parent->children)
            s = s->parent;
        s = s == root_space ? NULL : list_entry(s->child_link.next, struct space, child_link);
    }
    return false;
}

int64_t sys_space_alive(uint64_t pid)
{
    return space_id_alive(pid);
}

int64_t sys_space_id(uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, h, OBJ_SPACE, 0, &sl);
    if (err)
        return err;
    return list_entry(sl->obj, struct space, obj)->id;
}
