/*
 * User threads as the foundation needs them: the root task's thread,
 * its address space, and what happens when it exits or faults. The
 * microkernel core replaces the fault path with fault IPC.
 */
#ifndef PETREL_THREAD_H
#define PETREL_THREAD_H

#include "kernel.h"
#include "vm.h"

struct trapframe;

enum fault_kind {
    FAULT_DATA,             /* load/store to a bad address or without the right */
    FAULT_INSN,             /* instruction fetch from a bad address */
    FAULT_ALIGN,            /* misaligned pc, sp or exclusive access */
    FAULT_UNDEF,            /* undefined or not permitted instruction */
    FAULT_FOREIGN_SYSCALL,  /* svc #0: a Linux system call */
    FAULT_OTHER,
};

struct fault_info {
    enum fault_kind kind;
    uint64_t addr;          /* faulting data or instruction address */
    uint64_t esr;           /* raw syndrome */
    const char *detail;     /* e.g. "translation fault, level 3, write" */
};

struct thread {
    char name[32];
    struct vm_space space;
    void *kstack;           /* base of the kernel stack */
    struct trapframe *tf;   /* user registers, at the top of kstack */
};

int task_start_root(void);
NORETURN void thread_exit(int status);
NORETURN void thread_fault(struct trapframe *tf, const struct fault_info *fi);
const char *fault_kind_name(enum fault_kind kind);

/* system call dispatch (syscall.c): returns the value for x0. */
int64_t syscall_dispatch(unsigned number, struct trapframe *tf);

#endif
