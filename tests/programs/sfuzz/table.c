/*
 * The worker's table of live handles. Each worker keeps one table of the
 * handles it holds (FZ_TABLE entries, shared by its fuzzing threads under
 * a spin lock that is never held across a system call), with what it
 * knows of each object (fuzz.h). Whatever an operation creates or
 * receives is added; a full table drops a random entry. Handles that
 * other threads close meanwhile make stale values, which the kernel must
 * refuse.
 */
#include "fuzz.h"

static struct fz_ent table[FZ_TABLE];
volatile uint32_t fz_table_lock;

/* Copy a random entry whose type is in `types` (a mask of 1 << OBJ_*) and
 * kind in `kinds` (a mask of 1 << K_*, 0: any); false if there is none. */
bool fz_pick(struct fz_ctx *c, unsigned types, unsigned kinds, struct fz_ent *out, unsigned *idx)
{
    unsigned start = (unsigned)below(c, FZ_TABLE);
    bool found = false;
    fz_lock(&fz_table_lock);
    for (unsigned n = 0; n < FZ_TABLE && !found; n++) {
        unsigned i = (start + n) % FZ_TABLE;
        const struct fz_ent *e = &table[i];
        if (e->h && (types & (1u << e->type)) && (!kinds || (kinds & (1u << e->kind)))) {
            *out = *e;
            if (idx)
                *idx = i;
            found = true;
        }
    }
    fz_unlock(&fz_table_lock);
    return found;
}

/* Close a handle we are dropping. A process cannot get back what only
 * an unreachable object holds (a child space with a thread, a thread
 * never started), so mostly end such objects first: that keeps the
 * worker under its limits and the fuzz deep. */
void fz_drop(struct fz_ctx *c, const struct fz_ent *e)
{
    if (!chance(c, 4)) {
        if (e->type == OBJ_SPACE && e->kind != K_OWN)
            sys_space_kill(e->h);
        else if (e->type == OBJ_THREAD && !(e->flags & F_STARTED))
            sys_thread_kill(e->h);
    }
    sys_handle_close(e->h);
}

/* Put an entry in the table; a full table loses (and drops) a random one. */
void fz_add(struct fz_ctx *c, struct fz_ent e)
{
    struct fz_ent evicted = { 0 };
    fz_lock(&fz_table_lock);
    unsigned i;
    for (i = 0; i < FZ_TABLE && table[i].h; i++)
        ;
    if (i == FZ_TABLE) {
        i = (unsigned)below(c, FZ_TABLE);
        evicted = table[i];
    }
    table[i] = e;
    fz_unlock(&fz_table_lock);
    if (evicted.h)
        fz_drop(c, &evicted);
}

/* Give up n entries of the table (the worker's own threads need room). */
void fz_shed(struct fz_ctx *c, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        struct fz_ent e = { 0 };
        fz_lock(&fz_table_lock);
        unsigned i = (unsigned)below(c, FZ_TABLE);
        e = table[i];
        table[i].h = 0;
        fz_unlock(&fz_table_lock);
        if (e.h)
            fz_drop(c, &e);
    }
}

/* Forget handle h (closed, or found dead). */
void fz_forget(uint32_t h)
{
    fz_lock(&fz_table_lock);
    for (unsigned i = 0; i < FZ_TABLE; i++)
        if (table[i].h == h)
            table[i].h = 0;
    fz_unlock(&fz_table_lock);
}

/* Entry idx's counter (if it still holds h), counted up; else `def`. */
uint64_t fz_count_aux(unsigned idx, uint32_t h, uint64_t def)
{
    fz_lock(&fz_table_lock);
    if (table[idx].h == h)
        def = table[idx].aux++;
    fz_unlock(&fz_table_lock);
    return def;
}

/* Add flags to entry idx if it still holds h. */
void fz_set_flags(unsigned idx, uint32_t h, uint8_t flags)
{
    fz_lock(&fz_table_lock);
    if (table[idx].h == h)
        table[idx].flags |= flags;
    fz_unlock(&fz_table_lock);
}

/* A handle we were given by the kernel (IPC): its type from handle_info. */
static void add_received(struct fz_ctx *c, uint32_t h)
{
    int64_t info = sys_handle_info(h);
    if (info < 0)
        return;
    unsigned type = (unsigned)info & 0xff;
    unsigned kind = type == OBJ_SPACE || type == OBJ_THREAD ? K_UNKNOWN : K_OTHER;
    fz_add(c, (struct fz_ent){ h, (uint8_t)type, (uint8_t)kind, F_STARTED, 0, 0 });
}

void fz_add_received_msg(struct fz_ctx *c, uint64_t info)
{
    for (unsigned i = 0; i < MSG_HANDLES(info); i++)
        add_received(c, utcb()->recv_handles[i]);
}

/* The rights of a handle (0 if it is gone). */
uint32_t fz_rights_of(uint32_t h)
{
    int64_t info = sys_handle_info(h);
    return info < 0 ? 0 : (uint32_t)(info >> 8) & R_ALL;
}

void fz_table_init(void)
{
    struct fz_ent own = { 0, OBJ_SPACE, K_OWN, 0, 0, 0 };
    for (int i = 0; i < 2; i++) {
        int64_t h = sys_handle_dup(W.own_space, R_ALL, 0);
        if (h > 0) {
            own.h = (uint32_t)h;
            table[i] = own;
        }
    }
    table[2] = (struct fz_ent){ W.shared_ep, OBJ_ENDPOINT, K_OTHER, 0, 0, 0 };
    table[3] = (struct fz_ent){ W.shared_n, OBJ_NOTIFICATION, K_OTHER, 0, 0, 0 };
    /* Keep private copies: the table's may be closed, these are re-added from time to time. */
    W.shared_ep = (uint32_t)sys_handle_dup(W.shared_ep, fz_rights_of(W.shared_ep), 0);
    W.shared_n = (uint32_t)sys_handle_dup(W.shared_n, fz_rights_of(W.shared_n), 0);
}


/* Rights to hand out with e: a random subset, never R_MANAGE on our own space. */
uint32_t fz_give_rights(struct fz_ctx *c, const struct fz_ent *e)
{
    uint32_t r = chance(c, 4) ? (uint32_t)rnd(c) & R_ALL : R_ALL;
    if (e->type == OBJ_SPACE && e->kind == K_OWN)
        r &= ~R_MANAGE;
    return r;
}

/*
 * Every space we make, also under a private handle: a space whose table
 * handles are gone may live on with a thread nobody can reach (faulting
 * on a shared endpoint, say), holding our quota of spaces. When one runs
 * out (or the list is full), the oldest goes with space_kill.
 */
#define FZ_SPACES 12
static uint32_t spaces[FZ_SPACES];
static unsigned spaces_next;

void fz_remember_space(int64_t h)
{
    uint32_t old = 0;
    if (h == -E_LIMIT || h > 0) {
        int64_t priv = h > 0 ? sys_handle_dup((uint32_t)h, R_MANAGE | R_READ, 0) : 0;
        fz_lock(&fz_table_lock);
        unsigned i = spaces_next++ % FZ_SPACES;
        old = spaces[i];
        spaces[i] = priv > 0 ? (uint32_t)priv : 0;
        fz_unlock(&fz_table_lock);
    }
    if (old) {
        sys_space_kill(old);
        sys_handle_close(old);
    }
}

