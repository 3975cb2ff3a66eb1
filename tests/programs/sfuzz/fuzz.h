/* The worker's side of sfuzz: its table of live handles and its threads. */
#ifndef SFUZZ_FUZZ_H
#define SFUZZ_FUZZ_H

#include "sfuzz.h"

/* What the worker knows about the object behind a handle. */
enum fz_kind {
    K_OTHER,        /* endpoints, notifications, memory, replies */
    K_OWN,          /* the worker's own space, or a victim thread in it */
    K_CHILD,        /* a space spawned from the boot image, or a victim thread in one */
    K_EMPTY,        /* a space from space_create, or a thread in one */
    K_UNKNOWN,      /* a space or thread received from someone else */
};

#define F_STARTED   1u      /* a thread that was started (or found so) */

struct fz_ent {
    uint32_t h;             /* 0: a free entry */
    uint8_t type;           /* OBJ_* */
    uint8_t kind;           /* enum fz_kind */
    uint8_t flags;
    uint8_t slot;           /* own victims: the victim slot */
    uint64_t aux;           /* threads: the stack pointer to start with; spaces: victims made there */
};

#define FZ_TABLE    48      /* live handles per worker */
#define FZ_VSLOTS   12      /* victim threads in the worker's own space at once */

/* One fuzzing thread's context. */
struct fz_ctx {
    unsigned index;
    uint64_t seed;
    struct fz_thread_stats *st;
    uint64_t temp_va;               /* a private window for setting up other spaces */
    unsigned kcall_word;            /* op kcall's last request (repeated often: a light call) */
};

/* Shared by the worker's threads (worker.c). */
struct fz_worker {
    unsigned id, nthreads, ncpus, prio;
    uint64_t ops;                   /* per fuzzing thread */
    uint64_t seed;
    bool trace;
    uint32_t own_space;             /* a private handle, never in the table */
    uint32_t main_thread;
    uint32_t root_ro;               /* the system object with R_READ: boot files only */
    uint32_t shared_ep, shared_n;   /* the same objects in every worker */
    uint32_t kservice;              /* an endpoint bound to the kernel-placed NoOp service (never in the table) */
    struct fz_shared *sh;
    volatile uint64_t faults[FZ_MAX_THREADS];   /* per fuzzing thread, counted by the fault server */
};

extern struct fz_worker W;

/* Random numbers of a fuzzing thread. */
static inline uint64_t rnd(struct fz_ctx *c) { return fz_next(&c->seed); }
static inline uint64_t below(struct fz_ctx *c, uint64_t n) { return rnd(c) % n; }
static inline bool chance(struct fz_ctx *c, unsigned one_in) { return below(c, one_in) == 0; }

/* table.c: the table of live handles. */
extern volatile uint32_t fz_table_lock;
void fz_table_init(void);
/* Copy a random entry of a type in `types` (1 << OBJ_*) and a kind in `kinds`
 * (1 << K_*, 0: any), with its index; false if there is none. */
bool fz_pick(struct fz_ctx *c, unsigned types, unsigned kinds, struct fz_ent *out, unsigned *idx);
void fz_add(struct fz_ctx *c, struct fz_ent e);
void fz_drop(struct fz_ctx *c, const struct fz_ent *e);
void fz_forget(uint32_t h);
void fz_set_flags(unsigned idx, uint32_t h, uint8_t flags);
uint64_t fz_count_aux(unsigned idx, uint32_t h, uint64_t def);
void fz_add_received_msg(struct fz_ctx *c, uint64_t info);
void fz_shed(struct fz_ctx *c, unsigned n);
uint32_t fz_rights_of(uint32_t h);
uint32_t fz_give_rights(struct fz_ctx *c, const struct fz_ent *e);
void fz_remember_space(int64_t h);

/* ops.c: the operations. */
void fz_ops_init(void);
void fz_run(struct fz_ctx *c);

/* A spin lock (the holder never waits in the kernel while holding it). */
static inline void fz_lock(volatile uint32_t *l)
{
    for (unsigned spins = 0; __atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE); spins++) {
        if (spins < 100)
            __asm__ volatile("yield");
        else
            sys_yield();        /* the holder may be waiting for our core */
    }
}

static inline void fz_unlock(volatile uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif
