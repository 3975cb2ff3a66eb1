/*
 * Handle table tests: a table grows to 100,000 handles and shrinks back
 * to its smallest top level as they close in a scattered order; random
 * allocations and frees against a model; the table stops at HANDLE_MAX
 * with E_NOMEM; a teardown with handles open frees every page. A checker
 * goes over the table's books throughout: per-leaf counts and free
 * chains, the list of leaves with a free slot, the chain of unused
 * top-level entries, the count of upper leaves and the memory charged.
 */
#include "ktest.h"
#include "space.h"
#include "memory.h"
#include "kmalloc.h"

extern struct object root_object;      /* static: handles to it never free it */

/* The shared page every absent leaf shows (read from an empty table). */
static uintptr_t empty_leaf_addr(void)
{
    struct handle_table fresh;
    handle_table_init(&fresh);
    return fresh.leaf[0];
}

static uintptr_t leaf_addr(const struct handle_table *t, uint32_t l)
{
    return t->leaf[l] + (uintptr_t)l * 4096;
}

/* What a top level of `cap` entries is charged (as object.c allocates it). */
static uint64_t top_charge(uint32_t cap)
{
    size_t bytes = cap * (sizeof(uintptr_t) + sizeof(struct handle_leaf));
    if (!cap)
        return 0;
    if (bytes <= 2048)
        return kmalloc_size(bytes);
    uint64_t size = 4096;
    while (size < bytes)
        size <<= 1;
    return size;
}

/* Check every invariant of s's table; NULL if it holds, else what is wrong. */
static const char *table_check(const struct space *s, uint64_t base_memory)
{
    const struct handle_table *t = &s->handles;
    uintptr_t empty = empty_leaf_addr();
    if (t->cap == 0)
        return t->mask == HANDLE_LEAF_SLOTS - 1 && s->used[LIMIT_MEMORY] == base_memory ? NULL : "an empty table's books";
    if (t->cap < HANDLE_TOP_MIN || t->cap > HANDLE_LEAVES || (t->cap & (t->cap - 1)))
        return "the top level's size";
    if (t->mask != (uint64_t)t->cap * HANDLE_LEAF_SLOTS - 1)
        return "the mask";
    uint32_t present = 0, upper = 0, partial = 0, absent = 0;
    uint64_t in_use = 0;
    for (uint32_t l = 0; l < t->cap; l++) {
        if (leaf_addr(t, l) == empty) {
            absent++;
            continue;
        }
        present++;
        upper += l >= t->cap / 4;
        const struct handle_slot *leaf = (const struct handle_slot *)leaf_addr(t, l);
        uint32_t used = l == 0;
        for (uint32_t k = 0; k < HANDLE_LEAF_SLOTS; k++) {
            if (!leaf[k].obj)
                continue;
            if (l == 0 && k == 0)
                return "slot 0 is in use";
            if ((leaf[k].value & HANDLE_MAX) != (l << HANDLE_LEAF_BITS | k))
                return "a slot's value names another slot";
            used++;
        }
        if (used != t->info[l].used || used == (l == 0 ? 1u : 0u))
            return "a leaf's count is wrong, or an empty leaf was kept";
        in_use += used - (l == 0);
        uint32_t free = 0;
        for (uint32_t k = t->info[l].free; k != 0xff; k = leaf[k].next_free) {
            if (k >= HANDLE_LEAF_SLOTS || leaf[k].obj || (l == 0 && k == 0) || ++free > HANDLE_LEAF_SLOTS)
                return "a leaf's free chain";
        }
        if (free != HANDLE_LEAF_SLOTS - used)
            return "a leaf's free chain misses slots";
        partial += used < HANDLE_LEAF_SLOTS;
    }
    uint32_t n = 0;
    for (uint16_t l = t->partial, prev = 0xffff; l != 0xffff; prev = l, l = t->info[l].next) {
        if (l >= t->cap || leaf_addr(t, l) == empty || t->info[l].used == HANDLE_LEAF_SLOTS ||
            t->info[l].prev != prev || ++n > partial)
            return "the list of leaves with a free slot";
    }
    if (n != partial)
        return "a leaf with a free slot is not listed";
    n = 0;
    for (uint16_t l = t->unused; l != 0xffff; l = t->info[l].next) {
        if (l >= t->cap || leaf_addr(t, l) != empty || ++n > absent)
            return "the chain of unused entries";
    }
    if (n != absent)
        return "an unused entry is not chained";
    if (upper != t->upper)
        return "the count of upper leaves";
    if (s->used[LIMIT_HANDLES] != in_use)
        return "the handles charged";
    if (s->used[LIMIT_MEMORY] != base_memory + present * 4096ull + top_charge(t->cap))
        return "the memory charged";
    return NULL;
}

/* Room for `count` handle values, from the frame allocator. */
static uint32_t *values_alloc(uint32_t count, unsigned *order)
{
    *order = 0;
    while ((4096ull << *order) < count * sizeof(uint32_t))
        (*order)++;
    paddr_t pa = frame_alloc(*order);
    return pa == PADDR_INVALID ? NULL : phys_to_virt(pa);
}

KTEST(handles_grow_shrink, "handles: a table grows to 100,000 handles and shrinks back as they close in any order")
{
    enum { N = 100000 };
    int err;
    unsigned order;
    uint32_t refs = root_object.refs;
    struct space *s = space_create(NULL, &err);
    uint32_t *v = values_alloc(N, &order);
    if (!KT_CHECK(s && v, "space and room for the values"))
        return;
    uint64_t base = s->used[LIMIT_MEMORY];
    const char *why = table_check(s, base);
    KT_CHECK(!why, "new table: %s", why);
    bool made = true;
    for (uint32_t i = 0; i < N && made; i++) {
        int64_t h = handle_alloc(s, &root_object, R_READ, i);
        made = h > 0;
        v[i] = (uint32_t)h;
        if (made && i % 9973 == 0 && (why = table_check(s, base)) != NULL)
            break;
    }
    KT_CHECK(made && !why, "100,000 handles (%s)", why ? why : "books ok");
    KT_CHECK(s->handles.cap == 1024, "782 leaves under a top level of 1024 (%u)", s->handles.cap);
    bool resolve = true;
    for (uint32_t i = 0; i < N; i++) {
        struct handle_slot *sl;
        resolve &= handle_get(s, v[i], OBJ_NONE, R_READ, &sl) == 0 && sl->badge == i;
    }
    KT_CHECK(resolve, "every value resolves to its own slot");
    KT_CHECK(handle_get(s, v[0] ^ (1u << HANDLE_INDEX_BITS), OBJ_NONE, 0, &(struct handle_slot *){ 0 }) == -E_BADHANDLE,
             "another generation is refused");
    /* Close in a scattered order (7919 is prime to N), checking as we go. */
    bool closed = true;
    for (uint32_t j = 0; j < N && closed; j++) {
        uint32_t i = (uint32_t)((uint64_t)j * 7919 % N);
        closed = handle_free(s, v[i]) == 0 && handle_free(s, v[i]) == -E_BADHANDLE;
        if (j % 4999 == 0 && (why = table_check(s, base)) != NULL)
            break;
    }
    KT_CHECK(closed && !why, "closing all (%s)", why ? why : "books ok");
    why = table_check(s, base);
    KT_CHECK(!why && s->handles.cap == HANDLE_TOP_MIN && s->used[LIMIT_HANDLES] == 0 &&
             s->used[LIMIT_MEMORY] == base + top_charge(HANDLE_TOP_MIN),
             "back to the smallest top level and no leaf (%s, top %u, %lu bytes over the space's own)",
             why ? why : "books ok", s->handles.cap, s->used[LIMIT_MEMORY] - base);
    frame_free(virt_to_phys(v), order);
    obj_unref(&s->obj);
    KT_CHECK(root_object.refs == refs, "every reference given back");
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

KTEST(handles_random, "handles: random allocations and frees keep the table's books; stale values resolve to nothing")
{
    enum { MAXLIVE = 20000, OPS = 200000, STALE = 1024 };
    int err;
    unsigned order, sorder;
    struct space *s = space_create(NULL, &err);
    uint32_t *live = values_alloc(MAXLIVE, &order), *stale = values_alloc(STALE, &sorder);
    if (!KT_CHECK(s && live && stale, "space and room for the values"))
        return;
    uint64_t base = s->used[LIMIT_MEMORY];
    uint32_t n = 0, nstale = 0, bad = 0;
    const char *why = NULL;
    for (uint32_t op = 0; op < OPS && !why; op++) {
        /* Phases of growth and shrinkage, so the top level doubles and halves. */
        bool grow = (op / 20000) % 2 == 0 ? rnd() % 8 < 5 : rnd() % 8 < 3;
        if ((grow || n == 0) && n < MAXLIVE) {
            int64_t h = handle_alloc(s, &root_object, R_READ, 0);
            if (h <= 0)
                bad++;
            else
                live[n++] = (uint32_t)h;
        } else if (n) {
            uint32_t i = (uint32_t)(rnd() % n);
            bad += handle_free(s, live[i]) != 0;
            stale[nstale++ % STALE] = live[i];
            live[i] = live[--n];
        }
        if (op % 1000 == 0) {
            struct handle_slot *sl;
            for (uint32_t i = 0; i < STALE && i < nstale; i++)
                bad += handle_get(s, stale[i], OBJ_NONE, 0, &sl) != -E_BADHANDLE;
            for (uint32_t i = 0; i < n; i += 97)
                bad += handle_get(s, live[i], OBJ_NONE, R_READ, &sl) != 0;
            why = table_check(s, base);
        }
    }
    KT_CHECK(!why && bad == 0, "books (%s), %u wrong answers", why ? why : "ok", bad);
    while (n)
        handle_free(s, live[--n]);
    why = table_check(s, base);
    KT_CHECK(!why && s->handles.cap == HANDLE_TOP_MIN, "all closed (%s, top %u)", why ? why : "ok", s->handles.cap);
    frame_free(virt_to_phys(live), order);
    frame_free(virt_to_phys(stale), sorder);
    obj_unref(&s->obj);
}

KTEST(handles_most, "handles: a table stops at HANDLE_MAX with E_NOMEM; a teardown frees it with handles open")
{
    int err;
    uint32_t refs = root_object.refs;
    uint64_t free_before = frame_free_pages();
    struct space *s = space_create(NULL, &err);
    if (!KT_CHECK(s, "space"))
        return;
    uint64_t base = s->used[LIMIT_MEMORY];
    uint32_t n = 0;
    int64_t h, first = 0;
    while ((h = handle_alloc(s, &root_object, R_READ, 0)) > 0) {
        first = first ? first : h;
        n++;
    }
    const char *why = table_check(s, base);
    KT_CHECK(h == -E_NOMEM && n == HANDLE_MAX && s->handles.cap == HANDLE_LEAVES && !why,
             "%u handles, then %ld (%s)", n, h, why ? why : "books ok");
    space_teardown(s);
    struct handle_slot *sl;
    KT_CHECK(s->used[LIMIT_MEMORY] == base && s->used[LIMIT_HANDLES] == 0 && s->handles.cap == 0,
             "a teardown gives back every page (%lu bytes over the space's own)", s->used[LIMIT_MEMORY] - base);
    KT_CHECK(handle_get(s, (uint32_t)first, OBJ_NONE, 0, &sl) == -E_BADHANDLE &&
             handle_alloc(s, &root_object, R_READ, 0) == -E_CLOSED, "a torn-down table names nothing and takes nothing");
    obj_unref(&s->obj);
    KT_CHECK(root_object.refs == refs, "every reference given back");
    /* kmalloc keeps one empty slab per size class: allow a few pages. */
    KT_CHECK(frame_free_pages() + 8 >= free_before, "frames back (%lu of %lu free)", frame_free_pages(), free_before);
}
