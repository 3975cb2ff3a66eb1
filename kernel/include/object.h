/*
 * Kernel objects and handles.
 *
 * Every object starts with a struct object: its type, a count of all
 * references (handles plus kernel references such as a thread's
 * reference to its space, or a blocked thread's reference to the
 * endpoint it waits on) and a count of handles alone. When the last
 * handle goes, the object is shut down (threads blocked on it wake with
 * E_CLOSED); when the last reference goes, its memory is freed.
 *
 * A process (struct space) names objects only through its handle table:
 * a handle is a slot index plus a generation, so a closed handle's
 * value does not name the slot's next occupant (until the generation
 * comes round again, 16,383 handles later). Each handle carries
 * rights and, for endpoints and notifications, a badge.
 */
#ifndef PETREL_OBJECT_H
#define PETREL_OBJECT_H

#include "kernel.h"
#include "petrel_abi.h"

struct space;

struct object {
    uint32_t type;
    uint32_t refs;      /* handles + kernel references */
    uint32_t handles;   /* handles alone */
    uint32_t charge;    /* bytes of kernel memory charged to `payer` */
    struct space *payer;    /* the space charged for it (a reference), or NULL */
    struct object *next_dead;   /* on the list of objects waiting to be freed */
};

/*
 * A handle table has two levels: a top-level array of pointers to leaves,
 * each leaf one 4 KiB page of 128 slots. A handle's value is
 * `generation << 18 | index`, index = leaf << 7 | slot. Leaves are
 * allocated when the table fills and freed when their last handle goes;
 * the top level doubles and halves with them. See object.c.
 */
struct handle_slot {
    struct object *obj;     /* NULL: free */
    uint64_t badge;
    uint32_t rights;
    uint32_t value;         /* the handle's value while in use; 0 while free */
    uint32_t next_free;     /* while free: the next free slot of its leaf */
    uint32_t pad;           /* 32 bytes: 128 to a page, a slot one shift away */
};

#define HANDLE_INDEX_BITS   18
#define HANDLE_GEN_BITS     (32 - HANDLE_INDEX_BITS)
#define HANDLE_GEN_MAX      ((1u << HANDLE_GEN_BITS) - 1)      /* generations 1..16383 (0: fixed) */
#define HANDLE_MAX          ((1u << HANDLE_INDEX_BITS) - 1)    /* handles per process; slot 0 unused */
#define HANDLE_LEAF_BITS    7
#define HANDLE_LEAF_SLOTS   (1u << HANDLE_LEAF_BITS)           /* one 4 KiB page of slots */
#define HANDLE_LEAVES       (1u << (HANDLE_INDEX_BITS - HANDLE_LEAF_BITS))  /* 2048 at most */
#define HANDLE_TOP_MIN      4       /* the smallest top level: 4 leaves, 511 handles */

/* Bookkeeping of one leaf, kept beside the top level (not in the leaf). */
struct handle_leaf {
    uint8_t used;           /* slots in use (leaf 0 counts its slot 0, which never is free) */
    uint8_t free;           /* its first free slot, or LEAF_NONE */
    uint16_t prev, next;    /* leaves with a free slot; `next` also chains unused top entries */
};

struct handle_table {
    uintptr_t *leaf;            /* `cap` entries: leaf l's address less l * 4096 (see handle_slot_of) */
    uint64_t mask;              /* cap * 128 - 1: the index bits that name a slot */
    struct handle_leaf *info;   /* `cap` entries, in the same allocation as `leaf` */
    uint32_t cap;               /* top-level entries: 0 (no handle yet, or destroyed) or 4..2048 */
    uint32_t upper;             /* leaves at index cap/4 and above: at 0 the top level halves */
    uint16_t partial;           /* first leaf with a free slot, or TOP_NONE */
    uint16_t unused;            /* a chain of the top-level entries without a leaf, or TOP_NONE */
    uint32_t gen;               /* the generation the last handle got */
};

/*
 * The slot handle value h would name: no bounds check, no branch. Index
 * bits beyond the table wrap into it (the mask), and an absent leaf is a
 * shared page of free slots, so every value reads some slot; the caller
 * compares the slot's `value` with h, which holds index and generation in
 * full. Each top-level entry is stored less its leaf's offset in a flat
 * table, so slot i is at leaf[i >> 7] + i * 32: one load and one add.
 */
static ALWAYS_INLINE struct handle_slot *handle_slot_of(const struct handle_table *t, uint64_t h)
{
    uint64_t i = h & t->mask, l = i >> HANDLE_LEAF_BITS;
    __asm__("" : "+r"(l));      /* else clang rewrites l * 8 as a shift and a mask: one more instruction */
    return (struct handle_slot *)(t->leaf[l] + i * sizeof(struct handle_slot));
}

void obj_init(struct object *o, unsigned type);     /* one kernel reference */
void obj_ref(struct object *o);
/* Drop a reference; at zero the object is freed (never recursively: frees
 * that drop further references are queued and run one after another). */
void obj_unref(struct object *o);
/* Charge `bytes` of kernel memory for o to space `payer` and its ancestors
 * (-E_LIMIT over a limit); uncharged when o is freed. */
int obj_charge(struct object *o, struct space *payer, uint32_t bytes);
/* A new object of `size` bytes (kmalloc, obj_init) charged to payer; NULL with *err. */
void *obj_alloc(size_t size, unsigned type, struct space *payer, int *err);
/* Tear s down once no caller up the stack is in the middle of a teardown
 * or free (a work list instead of recursion: a chain of spaces holding
 * each other's handles must not overflow the kernel stack). */
void space_teardown_later(struct space *s);

/* An empty table (no memory until the first handle). */
void handle_table_init(struct handle_table *t);
/* Close every handle and free the table; afterwards no value resolves. */
void handle_table_destroy(struct space *s);
/* Install a handle; returns its value (> 0), or -E_LIMIT (a handle or
 * memory limit), -E_NOMEM (out of memory, or HANDLE_MAX handles), -E_CLOSED
 * (a torn-down space). Takes a reference. */
int64_t handle_alloc(struct space *s, struct object *o, uint32_t rights, uint64_t badge);
/* Install at a given slot (boot: the root task's fixed handles). */
int handle_alloc_at(struct space *s, uint32_t value, struct object *o, uint32_t rights);
/* Find handle h of type `type` (OBJ_NONE: any) carrying all of `rights`. */
int handle_get(struct space *s, uint32_t h, unsigned type, uint32_t rights, struct handle_slot **out);
int handle_free(struct space *s, uint32_t h);
/* A space's handle table is gone once it is torn down; no handle resolves. */

/* Per-type hooks (implemented by each object's file). */
void endpoint_shutdown(struct object *o);
/* An endpoint's handle with R_READ was made (+1) or closed (-1); the last
 * one closed kills it (ipc.c: endpoint_watch). */
void endpoint_readers(struct object *o, int delta);
void endpoint_free(struct object *o);
void notify_shutdown(struct object *o);
void notify_free(struct object *o);
void memobj_free(struct object *o);
void irqobj_shutdown(struct object *o);
void irqobj_free(struct object *o);
void reply_shutdown(struct object *o);
void reply_free(struct object *o);
void space_shutdown(struct object *o);
void space_free(struct object *o);
void thread_shutdown(struct object *o);
void thread_free(struct object *o);

#endif
