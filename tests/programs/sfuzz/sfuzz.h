/*
 * sfuzz: the stateful kernel fuzzer (docs/design/fuzzing.md). One program
 * in three roles: the root-task driver (driver.c), the fuzzing worker
 * processes it spawns (mode=worker: worker.c, ops.c, table.c) and the
 * victims — threads of this same program started in the worker's own
 * space or in child spaces spawned from the boot image (victim.c). The driver and its
 * workers share one memory object per worker, laid out as struct
 * fz_shared: the start signal, progress and the per-operation counts.
 */
#ifndef SFUZZ_H
#define SFUZZ_H

#include "petrel.h"

#define FZ_MAX_THREADS  4           /* fuzzing threads per worker */
#define FZ_NERR         17          /* result classes: 0 ok, 1..15 -E_*, 16 other */
#define FZ_SHARED_SIZE  0x8000ull

/* The operations, in the order of the report. */
#define FZ_OPS(X) \
    X(ep_create) X(notify_create) X(mem_create) X(mem_clone) X(bootfile) X(space_create) X(spawn) \
    X(thread_create) X(thread_start) X(dup) X(close) X(give) X(info) \
    X(map) X(unmap) X(unmap_range) X(protect) X(touch) X(ktouch) X(mem_size) \
    X(kill) X(suspend) X(resume) X(priority) X(affinity) X(read_regs) X(write_regs) X(stats) \
    X(fault_handler) X(set_tls) X(bind) X(thread_copy) \
    X(send) X(recv) X(call) X(kcall) X(reply) X(reply_recv) X(reply_save) X(reply_to) X(reply_copy) X(reply_lend) X(trace) \
    X(signal) X(poll) X(futex_wait) X(futex_wake) \
    X(space_kill) X(set_limit) X(usage) X(space_id) \
    X(yield) X(cpus)

#define FZ_ENUM(name) OP_##name,
enum fz_op { FZ_OPS(FZ_ENUM) OP_COUNT };
#undef FZ_ENUM

extern const char *const fz_op_names[OP_COUNT];

/* One fuzzing thread's progress and results. */
struct fz_thread_stats {
    volatile uint64_t done;         /* operations finished */
    volatile uint32_t cur_op;       /* the operation in progress */
    volatile uint32_t may_block;    /* in a call that waits for a partner */
    uint32_t count[OP_COUNT][FZ_NERR];
};

/* The page(s) a worker shares with the driver. */
struct fz_shared {
    volatile uint32_t go;           /* driver -> worker: start (futex word) */
    volatile uint32_t finished;     /* worker -> driver: all threads done */
    volatile uint64_t faults;       /* fuzzing-thread faults resumed by the worker */
    volatile uint64_t rescues;      /* fuzzing threads killed while stuck, and replaced */
    volatile uint64_t victims;      /* victim threads started (own and child spaces) */
    volatile uint64_t kcall_checked;    /* kernel-placed NoOp sums checked (op kcall) */
    volatile uint64_t kcall_wrong;      /* and found wrong */
    volatile uint32_t kill_state[THREAD_DEAD + 2];   /* a killed thread's state just before */
    volatile uint32_t wregs_state[THREAD_DEAD + 2];  /* a rewritten thread's state */
    struct fz_thread_stats t[FZ_MAX_THREADS];
};

_Static_assert(sizeof(struct fz_shared) <= FZ_SHARED_SIZE, "shared page layout");

/* Where the fuzz happens, the same in every space: scratch mappings,
 * victim stacks and UTCBs. Nothing else lives in these ranges. */
#define FZ_SLOT_BASE    0x0000004000000000ull   /* FZ_SLOTS scratch slots of 2 MiB */
#define FZ_SLOTS        12
#define FZ_SLOT_SIZE    0x200000ull
#define FZ_VICTIM_BASE  0x0000003000000000ull   /* own victims: stack + UTCB per slot */
#define FZ_VICTIM_STRIDE 0x20000ull
#define FZ_VICTIM_STACK 0x8000ull
#define FZ_CHILD_BASE   0x0000005000000000ull   /* victims made in other spaces */
#define FZ_TEMP_BASE    0x0000006000000000ull   /* a temporary view, per fuzzing thread */

/* What a victim thread does (victim.c); `arg` sits at the top of its stack. */
enum victim_kind {
    V_SERVER, V_REPLY_RECV, V_CALLER, V_SENDER, V_NOTIFY, V_FUTEX, V_SPIN, V_SIGNAL,
    V_FAULT, V_EXIT, V_KINDS
};

struct victim_arg {
    uint64_t kind;
    uint64_t seed;
    uint32_t h[3];                  /* handles in the victim's own space */
    uint32_t pad;
};

extern const volatile uint32_t victim_word;   /* the futex word victims wait on */
__attribute__((noreturn)) void victim_entry(struct victim_arg *a);

/* Roles. */
int driver_main(const struct petrel_bootinfo *bi);
int worker_main(void);
int child_main(void);
int fz_repro(const char *name);   /* repro.c */

/* A small xorshift generator. */
static inline uint64_t fz_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* The number in `key=` of the program's arguments, or `def`. */
uint64_t fz_arg(const char *key, uint64_t def);

/* Result class of a system call result: 0 ok, the error number, or 16. */
static inline unsigned fz_class(int64_t r)
{
    if (r >= 0)
        return 0;
    return -r < FZ_NERR - 1 ? (unsigned)-r : FZ_NERR - 1;
}

#endif
