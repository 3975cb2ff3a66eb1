/*
 * The native runtime's higher layer: start information, threads in the
 * caller's own space, loading boot image programs into new processes,
 * IPC message helpers, and exit reporting to a parent.
 */
#ifndef PETREL_RT_H
#define PETREL_RT_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "petrel_abi.h"
#include "petrel_syscalls.h"

/* What a spawner leaves a new process at PETREL_BOOTINFO_VA (x0 at start). */
#define PETREL_STARTINFO_MAGIC  0x5452415453544550ull   /* "PETSTART" */
#define STARTINFO_HANDLES       24

struct petrel_startinfo {
    uint64_t magic;
    uint32_t nhandles;
    uint32_t pad;
    struct { char name[24]; uint32_t value; uint32_t rights; } handles[STARTINFO_HANDLES];
    char name[32];          /* the program's name */
    char args[256];         /* its arguments, space separated */
};

/* The start information of this process (NULL for the root task). */
const struct petrel_startinfo *startinfo(void);
/* A handle the spawner gave under `name`, or 0. */
uint32_t start_handle(const char *name);
/* The value of `key=` in the program's arguments (root: the boot arguments). */
bool start_arg(const char *key, char *val, size_t size);
uint64_t start_arg_u64(const char *key, uint64_t dflt);   /* key=N, or dflt */
void rt_init(const void *info);
/* End the process's main thread with `status`, telling the parent (if any). */
__attribute__((noreturn)) void exit(int status);
/* Report `status` to the parent as exit does, then end every thread of
 * the process at once (space_kill of its own space). */
__attribute__((noreturn)) void exit_process(int status);

/* Handles every program has: its own space and main thread. */
uint32_t self_space(void);
uint32_t self_thread(void);
uint32_t root_handle(void);     /* the system object (root task and whoever it gave it to) */

/* This thread's UTCB. */
static inline struct petrel_utcb *utcb(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(v));
    return (struct petrel_utcb *)(v ? v : PETREL_ROOT_UTCB_VA);
}

/* Nanoseconds since boot, as sys_clock_ns gives them, read here without
 * entering the kernel (the kernel lets EL0 read the virtual counter and its
 * frequency: the vDSO's clock of Petrel). */
static inline uint64_t clock_ns(void)
{
    uint64_t t, f;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t) :: "memory");
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
    return (t / f) * 1000000000ull + (t % f) * 1000000000ull / f;
}

/* Virtual address space of this process, handed out in page multiples. */
uint64_t va_alloc(uint64_t size, uint64_t align);
/* Give back a range va_alloc handed out (nothing may be mapped there). */
void va_free(uint64_t va, uint64_t size);
/* An anonymous object of `size` bytes mapped here read-write; 0 on failure. */
void *mem_alloc(uint64_t size, uint32_t flags, uint32_t *handle);

/* A thread in this process running fn(arg) at `prio` on core `cpu` (-1:
 * mine; THREAD_ANY_CORE: any core online, the kernel's scheduler placing
 * and moving it). */
#define THREAD_ANY_CORE (-2)
int64_t thread_spawn(void (*fn)(void *), void *arg, unsigned prio, int cpu);
/* Sleep for ms milliseconds (a futex wait nobody wakes). */
void sleep_ms(uint64_t ms);
/* A thread's state (THREAD_*; THREAD_DEAD for a bad handle). */
unsigned thread_state(uint32_t t);
/* Wait up to ms milliseconds for thread t to reach `state`; whether it did. */
bool wait_state(uint32_t t, unsigned state, uint64_t ms);
/* End a thread thread_spawn made (if it still runs), close its handle and
 * give back its stack. */
int64_t thread_reap(uint32_t thread);

/* Loading a boot image program into a new process. */
struct spawn_grant {
    const char *name;       /* how the child finds it: start_handle(name) */
    uint32_t handle;        /* in the spawner's space */
    uint32_t rights;
};

struct spawn_req {
    const char *program;    /* boot image entry name */
    const char *args;
    unsigned prio;
    int cpu;                /* -1: the spawner's core */
    const struct spawn_grant *grants;
    unsigned ngrants;
    uint32_t fault_ep;      /* 0, or an endpoint for the main thread's faults */
    uint64_t mem_limit;     /* 0, or the bytes of memory the program may use (kernel objects included) */
    uint64_t max_threads;   /* 0, or its other limits (LIMIT_THREADS, LIMIT_HANDLES, LIMIT_SPACES) */
    uint64_t max_handles;
    uint64_t max_spaces;
};

struct spawn_result {
    uint32_t space, thread; /* handles with all rights */
    uint64_t pid;
};

int64_t spawn(const struct spawn_req *req, struct spawn_result *out);
int64_t bootfile_find(const char *name, struct petrel_bootfile *bf);

/* IPC helpers. */
static inline void msg_set(struct petrel_msg *m, uint64_t label, unsigned len)
{
    m->info = MSG_INFO(label, len, 0);
}

const char *error_str(int64_t err);

/* The next of a xorshift64 sequence in *s (never 0): test programs' random numbers. */
static inline uint64_t xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
