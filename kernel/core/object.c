/*
 * Object lifetime and per-process handle tables (see object.h).
 * Everything here runs under the kernel lock.
 */
#include "object.h"
#include "space.h"
#include "memory.h"
#include "kmalloc.h"

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
    default: break;     /* the root object is static */
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
    ASSERT(o->refs > 0);
    if (--o->refs || o->type == OBJ_ROOT)
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
    t->slots = NULL;            /* from now on no handle of s resolves */
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
    if (!slots || s->torn_down)
        return -E_CLOSED;
    for (uint32_t i = 1; i < HANDLE_SLOTS; i++) {
        if (!slots[i].obj) {
            int err = space_charge(s, LIMIT_HANDLES, 1);
            if (err)
                return err;
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
    if (!s->handles.slots || index == 0 || index >= HANDLE_SLOTS || s->handles.slots[index].obj)
        return -E_BUSY;
    struct handle_slot *sl = &s->handles.slots[index];
    space_charge_force(s, LIMIT_HANDLES, 1);
    sl->gen = 0;            /* generation 0: the value equals the index */
    fill(sl, o, rights, 0);
    return 0;
}

int handle_get(struct space *s, uint32_t h, unsigned type, uint32_t rights, struct handle_slot **out)
{
    uint32_t index = h & (HANDLE_SLOTS - 1), gen = h >> HANDLE_INDEX_BITS;
    if (!s->handles.slots)
        return -E_BADHANDLE;        /* a torn-down space names nothing */
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
    space_uncharge(s, LIMIT_HANDLES, 1);
    if (--o->handles == 0)
        last_handle(o);
    obj_unref(o);
    return 0;
}
