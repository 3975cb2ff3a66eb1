/*
 * Object lifetime and per-process handle tables (see object.h).
 * Everything here runs under the kernel lock.
 */
#include "object.h"
#include "space.h"
#include "memory.h"
#include "kmalloc.h"
#include "thread.h"

static struct object *dead_objects;     /* references gone, not yet freed */
static struct space *doomed_spaces;     /* waiting to be torn down */
static bool reaping;                    /* reap() runs further up the stack */

void obj_init(struct object *o, unsigned type)
{
    o->type = type;
    o->refs = 1;
    o->handles = 0;
    o->charge = 0;
    o->payer = NULL;
    o->next_dead = NULL;
}

void obj_ref(struct object *o)
{
    o->refs++;
}

int obj_charge(struct object *o, struct space *payer, uint32_t bytes)
{
    if (!payer)
        return 0;
    int err = space_charge(payer, LIMIT_MEMORY, bytes);
    if (err)
        return err;
    o->payer = payer;
    o->charge = bytes;
    obj_ref(&payer->obj);
    return 0;
}

void *obj_alloc(size_t size, unsigned type, struct space *payer, int *err)
{
    struct object *o = kmalloc(size);
    if (!o) {
        *err = -E_NOMEM;
        return NULL;
    }
    obj_init(o, type);
    if ((*err = obj_charge(o, payer, kmalloc_size(size))) != 0) {
        kfree(o, size);
        return NULL;
    }
    return o;
}

/* Free o through its type and give its charge back. */
static void free_object(struct object *o)
{
    struct space *payer = o->payer;
    uint32_t charge = o->charge;
    switch (o->type) {
    case OBJ_SPACE: space_free(o); break;
    case OBJ_THREAD: thread_free(o); break;
    case OBJ_ENDPOINT: endpoint_free(o); break;
    case OBJ_NOTIFICATION: notify_free(o); break;
    case OBJ_MEMORY: memobj_free(o); break;
    case OBJ_INTERRUPT: irqobj_free(o); break;
    case OBJ_REPLY: reply_free(o); break;
    default: break;     /* the root and trace objects are static */
    }
    if (payer) {
        space_uncharge(payer, LIMIT_MEMORY, charge);
        obj_unref(&payer->obj);
    }
}

/*
 * Run the queued teardowns and frees, one after another. A teardown
 * closes handles, which can doom further spaces and kill objects, and a
 * free drops references to others (a thread its space, a space its
 * parent): done recursively, a chain of such objects would run the
 * kernel stack out. Instead the outermost caller loops here and every
 * nested request only joins the lists.
 */
static void reap(void)
{
    if (reaping)
        return;
    reaping = true;
    for (;;) {
        if (doomed_spaces) {
            struct space *s = doomed_spaces;
            doomed_spaces = s->next_teardown;
            space_teardown(s);
            obj_unref(&s->obj);         /* the work list's reference */
        } else if (dead_objects) {
            struct object *o = dead_objects;
            dead_objects = o->next_dead;
            free_object(o);
        } else {
            break;
        }
    }
    reaping = false;
}

/* Drop a reference; the last one frees the object (see reap). */
void obj_unref(struct object *o)
{
    if (o->refs == 0)                   /* a reference dropped twice: say whose drop it was */
        panic("obj_unref: object %p of type %d has no reference left (dropped from %p)", (void *)o, (int)o->type,
              __builtin_return_address(0));
    if (--o->refs || o->type == OBJ_ROOT || o->type == OBJ_TRACE)
        return;
    o->next_dead = dead_objects;
    dead_objects = o;
    reap();
}

void space_teardown_later(struct space *s)
{
    if (s->torn_down || s->teardown_queued)
        return;
    s->teardown_queued = true;
    obj_ref(&s->obj);
    s->next_teardown = doomed_spaces;
    doomed_spaces = s;
    reap();
}

/* The last handle went: shut the object down (wake its waiters). */
static void last_handle(struct object *o)
{
    switch (o->type) {
    case OBJ_ENDPOINT: endpoint_shutdown(o); break;
    case OBJ_NOTIFICATION: notify_shutdown(o); break;
    case OBJ_INTERRUPT: irqobj_shutdown(o); break;
    case OBJ_REPLY: reply_shutdown(o); break;
    case OBJ_SPACE: space_shutdown(o); break;
    case OBJ_THREAD: thread_shutdown(o); break;
    default: break;     /* memory stays while mapped */
    }
}

/*
 * Handle tables.
 *
 * Two levels: t->leaf[] points to leaves of 128 slots (one 4 KiB page
 * each), so slot i is slot i & 127 of leaf i >> 7; each entry is stored
 * biased by the leaf's offset (leaf_at, leaf_set). A lookup masks the value
 * with t->mask (the table's size less one) instead of checking bounds,
 * and an absent leaf is a shared page of free slots, so handle_slot_of
 * always reads a slot; the slot's `value` then decides. That is one load
 * more than a flat table, and no branch.
 *
 * Free slots are found in O(1): each leaf chains its own free slots
 * (slot.next_free, leaf.free), and the leaves with a free slot form a
 * doubly linked list (leaf.prev/next, t->partial). A full table gets a
 * new leaf at the first unused top-level entry (t->unused chains them);
 * when there is none the top level doubles (4, 8, ... 2048 entries). A
 * leaf whose last handle goes is freed at once, and the top level halves
 * once no leaf is left in its upper three quarters (t->upper counts
 * those): a table shrinks back when its handles go, and the gap between
 * doubling and halving keeps a process from making it resize on every
 * call. Every leaf and the top level are charged to the space's memory.
 *
 * Generations come from one counter per table (1..16383, then 1 again),
 * not one per slot: a freed leaf forgets its slots, and the space's
 * counter does not. A closed handle's value comes back only when the
 * same slot is taken just as the counter returns to the same generation,
 * so after 16,383 handles have been created in that space at the least.
 */
#define LEAF_NONE   0xff
#define TOP_NONE    0xffff

/* The slots every absent leaf shows: all free. Read-only in effect. */
static struct handle_slot empty_leaf[HANDLE_LEAF_SLOTS] __attribute__((aligned(4096)));
/* The top level of a table without one (new or destroyed). */
static uintptr_t empty_top[1] = { (uintptr_t)empty_leaf };

_Static_assert(sizeof(struct handle_slot) * HANDLE_LEAF_SLOTS == 4096, "a leaf is one page");
_Static_assert(HANDLE_LEAVES - 1 < TOP_NONE, "leaf numbers fit the lists");

void handle_table_init(struct handle_table *t)
{
    t->leaf = empty_top;
    t->mask = HANDLE_LEAF_SLOTS - 1;
    t->info = NULL;
    t->cap = 0;
    t->upper = 0;
    t->partial = TOP_NONE;
    t->unused = TOP_NONE;
    t->gen = 0;
}

/* Bytes of a top level of `cap` entries: the pointers, then the leaves' bookkeeping. */
static size_t top_bytes(uint32_t cap)
{
    return cap * (sizeof(uintptr_t) + sizeof(struct handle_leaf));
}

/* The frame order of a top level too big for kmalloc. */
static unsigned top_order(size_t bytes)
{
    unsigned order = 0;
    while ((4096ull << order) < bytes)
        order++;
    return order;
}

/* What a top level of `cap` entries really takes (its charge). */
static uint64_t top_charge(uint32_t cap)
{
    size_t bytes = top_bytes(cap);
    return bytes <= 2048 ? kmalloc_size(bytes) : 4096ull << top_order(bytes);
}

static void *top_alloc(uint32_t cap)
{
    size_t bytes = top_bytes(cap);
    if (bytes <= 2048)
        return kmalloc(bytes);
    paddr_t pa = frame_alloc_zeroed(top_order(bytes));
    return pa == PADDR_INVALID ? NULL : phys_to_virt(pa);
}

static void top_free(void *p, uint32_t cap)
{
    size_t bytes = top_bytes(cap);
    if (bytes <= 2048)
        kfree(p, bytes);
    else
        frame_free(virt_to_phys(p), top_order(bytes));
}

/* Top-level entry l stores leaf l's address less l leaves' worth of bytes. */
static uintptr_t leaf_bias(uint32_t l)
{
    return (uintptr_t)l * HANDLE_LEAF_SLOTS * sizeof(struct handle_slot);
}

static struct handle_slot *leaf_at(const struct handle_table *t, uint32_t l)
{
    return (struct handle_slot *)(t->leaf[l] + leaf_bias(l));
}

static void leaf_set(uintptr_t *top, uint32_t l, struct handle_slot *leaf)
{
    top[l] = (uintptr_t)leaf - leaf_bias(l);
}

static bool leaf_present(const struct handle_table *t, uint32_t l)
{
    return leaf_at(t, l) != empty_leaf;
}

/*
 * Give s's table a top level of `cap` entries, keeping every leaf (all
 * lie below cap). Rebuilds the chain of unused entries in ascending order
 * and the count of upper leaves. Growing is charged (-E_LIMIT, -E_NOMEM);
 * shrinking frees more than it takes, so it is charged past the limit.
 */
static int top_resize(struct space *s, uint32_t cap)
{
    struct handle_table *t = &s->handles;
    bool grow = cap > t->cap;
    if (grow) {
        int err = space_charge(s, LIMIT_MEMORY, top_charge(cap));
        if (err)
            return err;
    } else {
        space_charge_force(s, LIMIT_MEMORY, top_charge(cap));
    }
    uintptr_t *leaf = top_alloc(cap);
    if (!leaf) {
        space_uncharge(s, LIMIT_MEMORY, top_charge(cap));
        return -E_NOMEM;
    }
    struct handle_leaf *info = (struct handle_leaf *)(leaf + cap);
    uint32_t keep = grow ? t->cap : cap;
    for (uint32_t l = 0; l < keep; l++) {
        leaf[l] = t->leaf[l];
        info[l] = t->info[l];
    }
    for (uint32_t l = keep; l < cap; l++)
        leaf_set(leaf, l, empty_leaf);
    uint32_t upper = 0;
    uint16_t unused = TOP_NONE;
    for (uint32_t l = cap; l-- > 0;) {
        if (leaf[l] + leaf_bias(l) == (uintptr_t)empty_leaf) {
            info[l].next = unused;
            unused = (uint16_t)l;
        } else if (l >= cap / 4) {
            upper++;
        }
    }
    if (t->cap) {
        top_free(t->leaf, t->cap);
        space_uncharge(s, LIMIT_MEMORY, top_charge(t->cap));
    }
    t->leaf = leaf;
    t->info = info;
    t->cap = cap;
    t->mask = (uint64_t)cap * HANDLE_LEAF_SLOTS - 1;
    t->unused = unused;
    t->upper = upper;
    return 0;
}

/* Put leaf l at the head of the list of leaves with a free slot. */
static void partial_push(struct handle_table *t, uint32_t l)
{
    t->info[l].prev = TOP_NONE;
    t->info[l].next = t->partial;
    if (t->partial != TOP_NONE)
        t->info[t->partial].prev = (uint16_t)l;
    t->partial = (uint16_t)l;
}

static void partial_unlink(struct handle_table *t, uint32_t l)
{
    struct handle_leaf *li = &t->info[l];
    if (li->prev != TOP_NONE)
        t->info[li->prev].next = li->next;
    else
        t->partial = li->next;
    if (li->next != TOP_NONE)
        t->info[li->next].prev = li->prev;
}

/*
 * Give s's table a leaf at top-level entry `want` (TOP_NONE: the first
 * unused one, doubling the top level if there is none), charged to s;
 * its free slots join the table. Returns the leaf's number or an error.
 */
static int64_t leaf_add(struct space *s, uint32_t want)
{
    struct handle_table *t = &s->handles;
    while (t->unused == TOP_NONE || (want != TOP_NONE && want >= t->cap)) {
        if (t->cap == HANDLE_LEAVES)
            return -E_NOMEM;                /* HANDLE_MAX handles: the table is full */
        int err = top_resize(s, t->cap ? t->cap * 2 : HANDLE_TOP_MIN);
        if (err)
            return err;
    }
    int err = space_charge(s, LIMIT_MEMORY, 4096);
    if (err)
        return err;
    paddr_t pa = frame_alloc_zeroed(0);
    if (pa == PADDR_INVALID) {
        space_uncharge(s, LIMIT_MEMORY, 4096);
        return -E_NOMEM;
    }
    uint32_t l = want;
    if (l == TOP_NONE) {
        l = t->unused;
        t->unused = t->info[l].next;
    } else {                                /* boot only: a fixed handle's leaf */
        uint16_t *link = &t->unused;
        while (*link != l)
            link = &t->info[*link].next;
        *link = t->info[l].next;
    }
    struct handle_slot *leaf = phys_to_virt(pa);
    uint32_t first = l == 0 ? 1 : 0;        /* slot 0 of the table is never used */
    for (uint32_t k = first; k < HANDLE_LEAF_SLOTS; k++)
        leaf[k].next_free = k + 1 < HANDLE_LEAF_SLOTS ? k + 1 : LEAF_NONE;
    leaf_set(t->leaf, l, leaf);
    t->info[l].used = (uint8_t)first;
    t->info[l].free = (uint8_t)first;
    partial_push(t, l);
    if (l >= t->cap / 4)
        t->upper++;
    return l;
}

/* Free leaf l, now empty, and halve the top level while its upper three
 * quarters hold no leaf (not while the table is being destroyed). */
static void leaf_remove(struct space *s, uint32_t l)
{
    struct handle_table *t = &s->handles;
    partial_unlink(t, l);
    frame_free(virt_to_phys(leaf_at(t, l)), 0);
    space_uncharge(s, LIMIT_MEMORY, 4096);
    leaf_set(t->leaf, l, empty_leaf);
    t->info[l].next = t->unused;
    t->unused = (uint16_t)l;
    if (l < t->cap / 4)
        return;
    t->upper--;
    while (t->upper == 0 && t->cap > HANDLE_TOP_MIN && !s->torn_down)
        if (top_resize(s, t->cap / 2) != 0)
            break;                          /* no memory for the smaller copy: keep this one */
}

/* Take slot k of leaf l (which must be free) off the leaf's free chain. */
static void slot_take(struct handle_table *t, uint32_t l, uint32_t k)
{
    struct handle_leaf *li = &t->info[l];
    struct handle_slot *leaf = leaf_at(t, l);
    if (li->free == k) {
        li->free = (uint8_t)leaf[k].next_free;
    } else {                                /* boot only (handle_alloc_at) */
        uint32_t p = li->free;
        while (leaf[p].next_free != k)
            p = leaf[p].next_free;
        leaf[p].next_free = leaf[k].next_free;
    }
    if (++li->used == HANDLE_LEAF_SLOTS)
        partial_unlink(t, l);
}

/*
 * Is o a space that `holder` is, or descends from? Such a handle cannot
 * keep o alive on its own: a space without threads whose every handle is
 * held inside it (or by the spaces it made) can never be used again.
 */
static struct space *held_inside(struct space *holder, struct object *o)
{
    if (o->type != OBJ_SPACE)
        return NULL;
    for (struct space *a = holder; a; a = a->parent)
        if (&a->obj == o)
            return a;
    return NULL;
}

static void fill(struct space *s, struct handle_slot *sl, uint32_t value, struct object *o, uint32_t rights,
                 uint64_t badge)
{
    sl->obj = o;
    sl->rights = rights & R_ALL;
    sl->badge = badge;
    sl->value = value;
    o->refs++;
    o->handles++;
    if (o->type == OBJ_ENDPOINT && (rights & R_READ))
        endpoint_readers(o, 1);
    struct space *x = held_inside(s, o);
    if (x)
        x->inner_handles++;
}

int64_t handle_alloc(struct space *s, struct object *o, uint32_t rights, uint64_t badge)
{
    struct handle_table *t = &s->handles;
    if (s->torn_down)
        return -E_CLOSED;
    int err = space_charge(s, LIMIT_HANDLES, 1);
    if (err)
        return err;
    int64_t l = t->partial;
    if (l == TOP_NONE && (l = leaf_add(s, TOP_NONE)) < 0) {
        space_uncharge(s, LIMIT_HANDLES, 1);
        return l;
    }
    uint32_t k = t->info[l].free;
    slot_take(t, (uint32_t)l, k);
    t->gen = t->gen % HANDLE_GEN_MAX + 1;      /* a new value: 1..16383, never 0 */
    uint32_t value = t->gen << HANDLE_INDEX_BITS | (uint32_t)l << HANDLE_LEAF_BITS | k;
    fill(s, &leaf_at(t, (uint32_t)l)[k], value, o, rights, badge);
    return value;
}

int handle_alloc_at(struct space *s, uint32_t index, struct object *o, uint32_t rights)
{
    struct handle_table *t = &s->handles;
    uint32_t l = index >> HANDLE_LEAF_BITS, k = index & (HANDLE_LEAF_SLOTS - 1);
    if (s->torn_down || index == 0 || index > HANDLE_MAX)
        return -E_BUSY;
    if (l >= t->cap || !leaf_present(t, l)) {
        int64_t err = leaf_add(s, l);
        if (err < 0)
            return (int)err;
    }
    if (leaf_at(t, l)[k].obj)
        return -E_BUSY;
    space_charge_force(s, LIMIT_HANDLES, 1);
    slot_take(t, l, k);
    fill(s, &leaf_at(t, l)[k], index, o, rights, 0);   /* generation 0: the value is the index */
    return 0;
}

int handle_get(struct space *s, uint32_t h, unsigned type, uint32_t rights, struct handle_slot **out)
{
    /* A torn-down space's table is empty_top: nothing is read of what it had. */
    struct handle_slot *sl = handle_slot_of(&s->handles, h);
    if (sl->value != h || !sl->obj || (type != OBJ_NONE && sl->obj->type != type))
        return -E_BADHANDLE;
    if ((sl->rights & rights) != rights)
        return -E_PERM;
    *out = sl;
    return 0;
}

/* Empty slot `index` of s (in use, at sl) and drop what it held. */
static void slot_release(struct space *s, struct handle_slot *sl, uint32_t index)
{
    struct handle_table *t = &s->handles;
    uint32_t l = index >> HANDLE_LEAF_BITS, k = index & (HANDLE_LEAF_SLOTS - 1);
    struct object *o = sl->obj;
    bool reader = o->type == OBJ_ENDPOINT && (sl->rights & R_READ);
    struct handle_leaf *li = &t->info[l];
    if (s->kcall_cached)
        kcall_forget_space(s);          /* a light call may name this handle */
    sl->obj = NULL;
    sl->rights = 0;
    sl->badge = 0;
    sl->value = 0;
    sl->next_free = li->free;
    li->free = (uint8_t)k;
    if (li->used-- == HANDLE_LEAF_SLOTS)
        partial_push(t, l);
    if (li->used == (l == 0 ? 1 : 0))
        leaf_remove(s, l);
    space_uncharge(s, LIMIT_HANDLES, 1);
    struct space *x = held_inside(s, o);
    if (x)
        x->inner_handles--;
    if (reader)
        endpoint_readers(o, -1);
    if (--o->handles == 0)
        last_handle(o);
    else if (o->type == OBJ_SPACE)
        space_maybe_orphaned(list_entry(o, struct space, obj));
    obj_unref(o);
}

int handle_free(struct space *s, uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(s, h, OBJ_NONE, 0, &sl);
    if (err)
        return err;
    slot_release(s, sl, h & HANDLE_MAX);
    return 0;
}

/*
 * Close every handle of a dying space (torn_down is set: nothing can be
 * added) and free the table. Closing can run shutdown hooks, so the loop
 * reads the table afresh after each close; the top level does not
 * shrink meanwhile.
 */
void handle_table_destroy(struct space *s)
{
    struct handle_table *t = &s->handles;
    for (uint32_t l = 0; l < t->cap; l++) {
        for (uint32_t k = 0; k < HANDLE_LEAF_SLOTS && leaf_present(t, l); k++) {
            struct handle_slot *sl = &leaf_at(t, l)[k];
            if (sl->obj)
                slot_release(s, sl, l << HANDLE_LEAF_BITS | k);
        }
        if (leaf_present(t, l)) {           /* not reached: a leaf goes with its last handle */
            frame_free(virt_to_phys(leaf_at(t, l)), 0);
            space_uncharge(s, LIMIT_MEMORY, 4096);
            leaf_set(t->leaf, l, empty_leaf);
        }
    }
    if (t->cap) {
        top_free(t->leaf, t->cap);
        space_uncharge(s, LIMIT_MEMORY, top_charge(t->cap));
    }
    handle_table_init(t);           /* from now on no handle of s resolves */
}
