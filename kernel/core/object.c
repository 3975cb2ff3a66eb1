/*
 * Object lifetime and per-process handle tables (see object.h).
 * Everything here runs under the kernel lock.
 */
#include "object.h"
#include "space.h"
#include "memory.h"

void obj_init(struct object *o, unsigned type)
{
    o->type = type;
    o->refs = 1;
    o->handles = 0;
}

void obj_ref(struct object *o)
{
    o->refs++;
}

/* Drop a reference; the last one frees the object through its type. */
void obj_unref(struct object *o)
{
    ASSERT(o->refs > 0);
    if (--o->refs)
        return;
    switch (o->type) {
    case OBJ_SPACE: space_free(o); break;
    case OBJ_THREAD: thread_free(o); break;
    case OBJ_ENDPOINT: endpoint_free(o); break;
    case OBJ_NOTIFICATION: notify_free(o); break;
    case OBJ_MEMORY: memobj_free(o); break;
    case OBJ_INTERRUPT: irqobj_free(o); break;
    case OBJ_REPLY: reply_free(o); break;
    default: break;     /* the root object is static */
    }
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
    default: break;     /* threads run on; memory stays while mapped */
    }
}

int handle_table_init(struct handle_table *t)
{
    size_t bytes = HANDLE_SLOTS * sizeof(struct handle_slot);
    paddr_t pa = frame_alloc_zeroed(2);
    if (pa == PADDR_INVALID || bytes > 16384)
        return -E_NOMEM;
    t->slots = phys_to_virt(pa);
    return 0;
}

/* Close every handle of a dying space and free the table. */
void handle_table_destroy(struct space *s)
{
    struct handle_table *t = &s->handles;
    if (!t->slots)
        return;
    for (uint32_t i = 1; i < HANDLE_SLOTS; i++)
        if (t->slots[i].obj)
            handle_free(s, (t->slots[i].gen << HANDLE_INDEX_BITS) | i);
    frame_free(virt_to_phys(t->slots), 2);
    t->slots = NULL;
}

static uint32_t value_of(uint32_t index, uint32_t gen)
{
    return (gen << HANDLE_INDEX_BITS) | index;
}

static void fill(struct handle_slot *sl, struct object *o, uint32_t rights, uint64_t badge)
{
    sl->obj = o;
    sl->rights = rights & R_ALL;
    sl->badge = badge;
    o->refs++;
    o->handles++;
}

int64_t handle_alloc(struct space *s, struct object *o, uint32_t rights, uint64_t badge)
{
    struct handle_slot *slots = s->handles.slots;
    if (!slots)
        return -E_NOMEM;
    for (uint32_t i = 1; i < HANDLE_SLOTS; i++) {
        if (!slots[i].obj) {
            slots[i].gen = (slots[i].gen + 1) & 0x7fffff;   /* a new value for the slot */
            if (slots[i].gen == 0)
                slots[i].gen = 1;
            fill(&slots[i], o, rights, badge);
            return value_of(i, slots[i].gen);
        }
    }
    return -E_NOMEM;
}

int handle_alloc_at(struct space *s, uint32_t index, struct object *o, uint32_t rights)
{
    struct handle_slot *sl = &s->handles.slots[index];
    if (index == 0 || index >= HANDLE_SLOTS || sl->obj)
        return -E_BUSY;
    sl->gen = 0;            /* generation 0: the value equals the index */
    fill(sl, o, rights, 0);
    return 0;
}

int handle_get(struct space *s, uint32_t h, unsigned type, uint32_t rights, struct handle_slot **out)
{
    uint32_t index = h & (HANDLE_SLOTS - 1), gen = h >> HANDLE_INDEX_BITS;
    struct handle_slot *sl = &s->handles.slots[index];
    if (index == 0 || !sl->obj || sl->gen != gen || (type != OBJ_NONE && sl->obj->type != type))
        return -E_BADHANDLE;
    if ((sl->rights & rights) != rights)
        return -E_PERM;
    *out = sl;
    return 0;
}

int handle_free(struct space *s, uint32_t h)
{
    struct handle_slot *sl;
    int err = handle_get(s, h, OBJ_NONE, 0, &sl);
    if (err)
        return err;
    struct object *o = sl->obj;
    sl->obj = NULL;
    sl->rights = 0;
    sl->badge = 0;
    if (--o->handles == 0)
        last_handle(o);
    obj_unref(o);
    return 0;
}
