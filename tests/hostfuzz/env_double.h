/*
 * The host test double of the service environment (svc.h, svc_proc.h) the
 * Linux personality runs on in the host fuzzer (fuzz_personality.c). What
 * the personality sees is the user placement's environment: spaces with
 * sparse simulated memory, memory objects, threads with registers, kept
 * replies, one timer, a fake clock. What the driver sees is declared here:
 * it makes the threads of the simulated Linux processes call the
 * personality, reads and writes their memory, and checks what is left.
 *
 * Everything the double hands out is numbered once per input and never
 * again (handles, tokens, space ids), so a stale handle or token the
 * personality uses is caught as such, not confused with a newer one.
 */
#ifndef HOSTFUZZ_ENV_DOUBLE_H
#define HOSTFUZZ_ENV_DOUBLE_H

#include <stdint.h>
#include <stddef.h>
#include "svc_proc.h"

/* A failure of the personality the double or the driver saw: the message
 * and abort(), so that libFuzzer keeps the input. */
void hf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Print a trace line when HOSTFUZZ_TRACE is set. */
void hf_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int hf_tracing;

/* ---------------------------------------------------------------- threads of the simulated processes */
enum { HT_NEW, HT_RUN, HT_CALL, HT_BLOCKED, HT_DEAD };

#define HF_SVC_SITES 16

struct hf_space;

struct hf_thread {
    int live;                   /* the record is in use */
    int state;                  /* HT_* */
    int suspended;              /* svc_thread_suspend without a resume */
    int foreign, has_handler;
    uint32_t handles;           /* the personality's handles naming it */
    struct hf_space *space;
    uint64_t utcb;
    uint64_t badge;             /* its fault handler's badge (the personality's tid << 7 | slot) */
    struct petrel_regs regs;
    struct petrel_fpregs fp;
    uint64_t tls;
    svc_token token;            /* HT_BLOCKED: the reply the personality keeps */
    int restart;                /* its pc is at an svc: its next step runs that call again (HF_WOKEN:
                                 * its kept reply said so; HF_OWN: its own registers, a program's loop) */
    unsigned own_runs;          /* HF_OWN restarts run in the current hf_run_restarts */
    uint64_t svc_sites[HF_SVC_SITES];   /* addresses where it executed an svc (its program's calls) */
    unsigned nsites;
    uint64_t cpu_ns;
    /* What the call in progress may return at most (a count of bytes), checked at its normal return. */
    uint64_t call_pc, call_nr, call_limit;
    int call_limited;
};

/* Threads in creation order (live ones), for the driver to pick. */
struct hf_thread *hf_thread_at(unsigned i);
unsigned hf_thread_count(void);

/* Run thread t's svc at its current pc with x0..x5 = a[0..5] and x8 = nr
 * (a NULL a: the registers as they are, a call run again): the fault
 * message goes to the personality's fault entry, as the server loop
 * delivers it; afterwards t is running, blocked (kept reply) or dead. */
void hf_syscall(struct hf_thread *t, uint64_t nr, const uint64_t *a);
/* A real fault of t (kind FAULT_*) at addr with syndrome esr, its pc as it is. */
void hf_fault(struct hf_thread *t, unsigned kind, uint64_t addr, uint64_t esr);
enum { HF_WOKEN = 1, HF_OWN };
/* Run the calls of threads at an svc (at most max; a thread whose own
 * registers loop on an svc at most a few times); how many of them a kept
 * reply had woken. */
unsigned hf_run_restarts(unsigned max);
/* Threads woken through their kept reply that could run their call again now. */
unsigned hf_restarts_pending(void);

/* Read or write a simulated process's memory at va through its mappings,
 * as the driver sets up a call's arguments (rights ignored); 0 or -1 where
 * nothing is mapped. */
int hf_poke(struct hf_space *s, uint64_t va, const void *src, uint64_t len);
int hf_peek(struct hf_space *s, uint64_t va, void *dst, uint64_t len);

/* A request of the personality's own interface (exec, wait) from a native
 * program: label, message registers; the reply's registers into out (up
 * to 4); 1 if it was answered, 0 if kept. */
int hf_native_call(uint64_t label, unsigned len, const uint64_t *mr, uint64_t *out);

/* Called with everything the personality writes to the console. */
extern void (*hf_console_hook)(const char *buf, uint64_t len);

/* ---------------------------------------------------------------- time */
uint64_t hf_clock(void);
/* Move the clock on by ns and run the timer's handler if its deadline passed. */
void hf_advance(uint64_t ns);
/* Run the timer's handler if its deadline passed (between requests). */
void hf_timer_check(void);

/* ---------------------------------------------------------------- failures on purpose */
enum { HF_INJ_ALLOC, HF_INJ_MEM_CREATE, HF_INJ_MEM_CLONE, HF_INJ_SPACE, HF_INJ_THREAD, HF_INJ_MAP, HF_INJ_KINDS };
/* The n-th next call of that kind (1: the next) fails as if out of resources. */
void hf_inject(int kind, unsigned n);

/* ---------------------------------------------------------------- the root archive (rootfs_image.c, generated) */
extern const unsigned char hf_rootfs[];
extern const unsigned long hf_rootfs_size;

/* ---------------------------------------------------------------- state and accounting */
/* Forget everything: every object, memory page and allocation of the last
 * input is freed (the personality's statics are reset by the driver). */
void hf_env_reset(void);
/* Check that nothing of the simulated system is left once every process
 * ended: no thread alive, no space, no reply kept, no handle but the
 * personality's lasting ones (each `keep` handle), no allocation of pipe.c
 * or socket.c, at most one of every other place (rootfs.c aside). Fails
 * with a message otherwise. */
void hf_env_check_clean(const svc_handle *keep, unsigned nkeep);
/* Does thread t (the double's) hold kept reply `token`? Is token live? */
int hf_token_live(svc_token token, struct hf_thread **t);
/* The double's thread of a personality handle, or NULL. */
struct hf_thread *hf_thread_of_handle(svc_handle h);
/* Bytes of svc_alloc memory outstanding, and allocations. */
uint64_t hf_alloc_bytes(void);

/* svc_alloc and svc_free as the personality's sources call them (lxstate.h
 * renames them): with the file and line of the call, for the accounting. */
void *hf_alloc_at(size_t size, const char *file, int line);
void hf_free_at(void *p, size_t size, const char *file, int line);

#endif
