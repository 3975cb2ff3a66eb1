/*
 * The process environment: what a service that owns processes of its own
 * (the Linux personality) may use besides svc.h. Like svc.h, it is written
 * once and implemented per placement: services/env/user_proc.c over system
 * calls today; the kernel placement of the personality will implement the
 * same calls over the kernel's objects. A service never sees which.
 *
 * Objects are svc_handles (svc.h): in user space handles of the service's
 * own table, in the kernel references. Everything the service makes is
 * charged to the service (user placement) or to whoever the kernel
 * placement says, and the process it makes is a child of the service: if
 * the service dies, its processes die with it.
 *
 * A process's threads fault to the service: svc_thread_fault_to_me makes
 * the service's own endpoint the thread's fault handler, with a badge the
 * service chooses, so each fault (a Linux `svc #0` among them) arrives as
 * a struct svc_call with label LABEL_FAULT and that badge; the fault
 * message layout is petrel_abi.h's FAULT_MR_*. The service answers with
 * svc_reply (FAULT_REPLY_RESUME, pc, sp, x0..) or not at all after killing
 * the process. svc_copy_in / svc_copy_out reach the faulting process's
 * memory exactly as it could.
 */
#ifndef PETREL_SVC_PROC_H
#define PETREL_SVC_PROC_H

#include "svc.h"

/* A new empty process (address space), a child of the service; 0 if none
 * can be made (*err says why: SVC_E_LIMIT, SVC_E_NOMEM). */
svc_handle svc_space_create(int *err);
/* Set one of a process's limits (LIMIT_MEMORY, LIMIT_THREADS, ...); 0 or an error. */
int svc_space_set_limit(svc_handle space, unsigned kind, uint64_t value);
/* End a process as a whole: every thread, mapping and handle of it. */
int svc_space_kill(svc_handle space);
/* The process id the kernel gives a space (what svc_call.pid says). */
uint64_t svc_space_id(svc_handle space);

/* A zero-filled anonymous memory object of `size` bytes (pages filled on
 * first touch); 0 if none (*err says why). */
svc_handle svc_mem_create(uint64_t size, int *err);
/* A read-only, executable memory object over boot image file `index`
 * (its pages used in place); 0 if none. */
svc_handle svc_mem_bootfile(uint32_t index);
/* A copy-on-write clone of memory object `mem`: both read the same until
 * either writes a page (fork); 0 if none (*err says why). */
svc_handle svc_mem_clone(svc_handle mem, int *err);
/* Write `len` bytes into memory object `mem` at `offset` (before it is
 * mapped where its owner could see a partial write). */
int svc_mem_write(svc_handle mem, uint64_t offset, const void *src, uint64_t len);
/* Read `len` bytes of memory object `mem` at `offset` into dst (a page
 * never written reads as zeros); 0 or an error. */
int svc_mem_read(svc_handle mem, uint64_t offset, void *dst, uint64_t len);
/* Compare-and-swap the aligned 32-bit word of memory object `mem` at
 * `offset`, atomically also against the processes that map it (a futex
 * word): `desired` replaces it if it was `expect`; *old says what it was.
 * 0 or an error. */
int svc_mem_cas32(svc_handle mem, uint64_t offset, uint32_t expect, uint32_t desired, uint32_t *old);
/* Copy `len` bytes from the caller of `call` at client_addr into memory
 * object `mem` at `offset` (svc_mem_copy_in), or the other way
 * (svc_mem_copy_out), with no copy in between; 0, SVC_E_FAULT if the
 * caller's buffer could not be reached (what went before it went), or
 * the object's error. */
int svc_mem_copy_in(struct svc_call *call, svc_handle mem, uint64_t offset, uint64_t client_addr, uint64_t len);
int svc_mem_copy_out(struct svc_call *call, uint64_t client_addr, svc_handle mem, uint64_t offset, uint64_t len);
/* Map, unmap and protect in another process (mem_map, mem_unmap_range,
 * mem_protect). A mapping keeps its object alive: the service may release
 * its handle right after mapping. */
int svc_mem_map(svc_handle space, svc_handle mem, uint64_t va, uint64_t offset, uint64_t size, uint32_t rights);
int svc_mem_unmap(svc_handle space, uint64_t va, uint64_t size);
int svc_mem_protect(svc_handle space, uint64_t va, uint64_t size, uint32_t rights);

/* A thread in `space` (not running), its kernel control page at utcb_va
 * (a page of the process's address space the process should not use). */
svc_handle svc_thread_create(svc_handle space, uint64_t utcb_va, int *err);
/* Deliver the thread's faults to this service's own endpoint, badged. */
int svc_thread_fault_to_me(svc_handle thread, uint64_t badge);
/* Give created thread `t` the registers, TLS and FP/SIMD registers of
 * thread `from`, which must be stopped (in a fault call, say): fork. */
int svc_thread_copy(svc_handle t, svc_handle from);
/* Set a thread's TLS register (TPIDR_EL0). */
int svc_thread_set_tls(svc_handle t, uint64_t value);
/* Make every svc of the thread, whatever its number, a Linux system call
 * for its fault handler (for good): a Linux program makes no Petrel call. */
int svc_thread_make_foreign(svc_handle t);
/* Let it run on the cores of mask (bit i: core i; offline ones dropped):
 * the kernel places it on the least busy when it starts and moves it to
 * an idle one of them while it waits. 0, or SVC_E_INVAL if no core of
 * the mask is online. A new thread may run only on its creator's core. */
int svc_thread_set_cpus(svc_handle t, uint64_t mask);
/* The cores online, as a mask. */
uint64_t svc_cpus_online(void);
/* Start it at pc with stack pointer sp and x0 = arg. */
int svc_thread_start(svc_handle thread, uint64_t pc, uint64_t sp, uint64_t arg);

/* A thread's user registers (struct petrel_regs) and FP/SIMD registers
 * (struct petrel_fpregs), read or replaced while it does not run: stopped
 * in a fault call to this service, or suspended. Writing the registers
 * takes of pstate only the condition flags. 0 or an error. */
int svc_thread_read_regs(svc_handle t, struct petrel_regs *r);
int svc_thread_write_regs(svc_handle t, const struct petrel_regs *r);
int svc_thread_read_fp(svc_handle t, struct petrel_fpregs *fp);
int svc_thread_write_fp(svc_handle t, const struct petrel_fpregs *fp);
/* A thread's CPU time, state, priority and core (struct petrel_thread_stats
 * of petrel_abi.h: what thread_stats reports); 0 or an error. */
int svc_thread_stats(svc_handle t, struct petrel_thread_stats *st);
/* Stop a thread from running until svc_thread_resume. Its state then
 * (THREAD_* of petrel_abi.h): THREAD_SEND or THREAD_REPLY if it is in a
 * call (a fault call to this service on its way, say), THREAD_READY if
 * it was running user code and is off every core now; THREAD_RUNNING if
 * it still runs user code on another core (it stops at its next kernel
 * entry, which the kernel placement cannot wait for and the user
 * placement waits for only a while): its registers are not to be
 * touched yet, look again later. A negated error if it cannot be stopped. */
int svc_thread_suspend(svc_handle t);
int svc_thread_resume(svc_handle t);
/* End a thread whatever it is doing (its control page goes; its space
 * stays unless it was the last thread there); 0 or a negated error. */
int svc_thread_kill(svc_handle t);

/* One timer for the service: `handler` runs (between requests, never
 * during one) once the clock (svc_clock_ns) has passed the deadline last
 * set; setting another replaces it, 0 cancels it. It may run late, and
 * at most once per deadline set. */
int svc_timer_attach(void (*handler)(void));
void svc_timer_set(uint64_t deadline_ns);

/* Write to the system console. */
void svc_console_write(const void *buf, uint64_t len);
/* Nanoseconds since boot. */
uint64_t svc_clock_ns(void);

#endif
