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
 * value never names the slot's next occupant. Each handle carries
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

struct handle_slot {
    struct object *obj;
    uint64_t badge;
    uint32_t rights;
    uint32_t gen;
    uint64_t pad;       /* 32 bytes: a slot's address is one shift away */
};

#define HANDLE_INDEX_BITS   9
#define HANDLE_SLOTS        (1u << HANDLE_INDEX_BITS)   /* per process; slot 0 unused */

struct handle_table {
    struct handle_slot *slots;
};

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

int handle_table_init(struct handle_table *t);
void handle_table_destroy(struct space *s);
/* Install a handle; returns its value (> 0) or -E_NOMEM. Takes a reference. */
int64_t handle_alloc(struct space *s, struct object *o, uint32_t rights, uint64_t badge);
/* Install at a given slot (boot: the root task's fixed handles). */
int handle_alloc_at(struct space *s, uint32_t value, struct object *o, uint32_t rights);
/* Find handle h of type `type` (OBJ_NONE: any) carrying all of `rights`. */
int handle_get(struct space *s, uint32_t h, unsigned type, uint32_t rights, struct handle_slot **out);
int handle_free(struct space *s, uint32_t h);
/* A space's handle table is gone once it is torn down; no handle resolves. */

/* Per-type hooks (implemented by each object's file). */
void endpoint_shutdown(struct object *o);
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
