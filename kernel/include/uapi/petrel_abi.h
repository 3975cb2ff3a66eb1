/*
 * The binary interface between the kernel and Petrel programs, shared by
 * both sides: error codes, handle rights, object types, the IPC message
 * word, the per-thread UTCB page, the fault message and the boot
 * information page. System call numbers and stubs are generated from
 * idl/syscalls.toml (petrel_syscalls.h). docs/design/kernel.md explains
 * the semantics.
 *
 * `svc #0` is never a Petrel call: it is the Linux system call
 * instruction, which the kernel delivers to the thread's fault handler.
 */
#ifndef PETREL_ABI_H
#define PETREL_ABI_H

#include <stdint.h>

/* Error codes; system calls return them negated. */
enum {
    E_OK        = 0,
    E_INVAL     = 1,    /* an argument is malformed or out of range */
    E_FAULT     = 2,    /* a user pointer does not reach accessible memory */
    E_NOMEM     = 3,    /* out of frames, handles or kernel memory */
    E_NOSYS     = 4,    /* no such system call */
    E_NOENT     = 5,    /* no such object, file or mapping */
    E_RANGE     = 6,    /* a value lies outside what the object allows */
    E_BUSY      = 7,    /* already in use (a mapping, an interrupt, a reply) */
    E_PERM      = 8,    /* the handle lacks a right, or W+X was asked */
    E_BADFORMAT = 9,    /* a binary structure (DTB, ELF, image) is malformed */
    E_TIMEOUT   = 10,   /* a wait ran out of time */
    E_BADHANDLE = 11,   /* no such handle, or a handle of the wrong type */
    E_AGAIN     = 12,   /* would block (non-blocking IPC), or futex value changed */
    E_CLOSED    = 13,   /* the object was destroyed while waiting on it */
    E_STATE     = 14,   /* the target is in the wrong state for this */
    E_LIMIT     = 15,   /* a per-process limit (memory, threads, handles, spaces) is reached */
    E_IO        = 16,   /* a device failed the operation (a disk's read or write) */
    E_NUM_ERRORS
};

/* Handle rights. */
#define R_READ      (1u << 0)   /* receive, wait, map readable, read state */
#define R_WRITE     (1u << 1)   /* send, signal, map writable */
#define R_EXEC      (1u << 2)   /* map executable */
#define R_GRANT     (1u << 3)   /* may be transferred in IPC or copied to another space */
#define R_DUP       (1u << 4)   /* may be duplicated */
#define R_MANAGE    (1u << 5)   /* control operations (threads, spaces, interrupts, the system) */
#define R_ALL       0x3fu

/*
 * Per-process limits (space_set_limit, space_usage). A space's usage
 * counts everything it and the spaces it created (its descendants) hold:
 * LIMIT_MEMORY in bytes of frames and kernel memory (committed pages,
 * page tables, thread, space and object records, handle tables),
 * the others in objects. 0 means no limit of its own.
 */
enum { LIMIT_MEMORY = 0, LIMIT_THREADS, LIMIT_HANDLES, LIMIT_SPACES, LIMIT_KINDS };
#define LIMIT_QUERY_MAX     0x100u      /* space_usage: report the limit instead */

/* The lowest address a mapping may start at: page 0 and its neighbours
 * stay unmapped so that a null pointer always faults. */
#define USER_VA_MIN         0x10000ull

/* Object types, as handle_info reports them. */
enum {
    OBJ_NONE = 0, OBJ_ROOT, OBJ_SPACE, OBJ_THREAD, OBJ_ENDPOINT,
    OBJ_NOTIFICATION, OBJ_MEMORY, OBJ_INTERRUPT, OBJ_REPLY, OBJ_TRACE, OBJ_TYPES
};
/* handle_info: set for an endpoint that died (endpoint_watch), or a saved
 * reply whose caller is gone (its thread ended). */
#define HANDLE_INFO_DEAD    (1u << 16)

/*
 * The message word (x1 of the IPC calls): number of message registers,
 * number of handles to transfer, the non-blocking flag and a label.
 * MR0..MR5 travel in x2..x7, MR6..MR31 in the UTCB.
 */
#define MSG_MAX_MRS         32
#define MSG_REG_MRS         6
#define MSG_MAX_HANDLES     3
#define MSG_LEN(info)       ((unsigned)((info) & 0x3f))
#define MSG_HANDLES(info)   ((unsigned)(((info) >> 6) & 3))
#define MSG_NONBLOCK        (1ull << 8)
#define MSG_LABEL(info)     ((info) >> 16)
#define MSG_INFO(label, len, nh) (((uint64_t)(label) << 16) | ((uint64_t)(nh) << 6) | (uint64_t)(len))
#define LABEL_KERNEL        (1ull << 47)            /* labels users cannot send */
#define LABEL_FAULT         (LABEL_KERNEL | 1)
#define LABEL_NOTIFY        (LABEL_KERNEL | 2)

/* reply_copy's `dir`: bit 0 set copies to the caller; REPLY_COPY_LENT
 * reaches the caller's own caller, in the range the caller lent
 * (reply_lend). A service's buffer argument that is such a range carries
 * SVC_BUFFER_LENT (above every user and kernel address), so that a service
 * in either placement copies it with the lender's caller. */
#define REPLY_COPY_LENT     2ull
#define SVC_BUFFER_LENT     (1ull << 62)

/* The user thread control block: one page per thread, mapped where its
 * creator said, also written by the kernel during IPC. */
struct petrel_utcb {
    uint64_t mr[MSG_MAX_MRS];           /* MR6..MR31 live here (MR0..5 in registers) */
    uint32_t send_handles[MSG_MAX_HANDLES];
    uint32_t send_rights[MSG_MAX_HANDLES];  /* rights to give (masked by the handle's own) */
    uint32_t recv_handles[MSG_MAX_HANDLES]; /* handles received, in the receiver's space */
    uint32_t pad;
    uint64_t user[8];                   /* free for the runtime */
};

/* Fault message (label LABEL_FAULT) sent to a thread's fault handler. */
enum {
    FAULT_MR_KIND, FAULT_MR_ADDR, FAULT_MR_ESR, FAULT_MR_PC, FAULT_MR_SP,
    FAULT_MR_X0,    /* x0..x8 follow: the arguments and number of a Linux call */
    FAULT_MSG_LEN = FAULT_MR_X0 + 9
};
enum {
    FAULT_DATA, FAULT_INSN, FAULT_ALIGN, FAULT_UNDEF, FAULT_FOREIGN_SYSCALL, FAULT_OTHER
};
/* The handler's reply: MR0 = action, then (optional) pc, sp, x0..x8.
 * YIELD resumes as RESUME, the thread giving up the rest of its time
 * slice: it goes behind the threads ready at its priority on its core. */
#define FAULT_REPLY_RESUME  0
#define FAULT_REPLY_STOP    1
#define FAULT_REPLY_YIELD   2

/* thread_read_regs / thread_write_regs layout. */
struct petrel_regs {
    uint64_t x[31];
    uint64_t sp, pc, pstate;
};

/* thread_read_fp / thread_write_fp layout: the FP/SIMD registers. */
struct petrel_fpregs {
    uint64_t q[64];                     /* q0..q31, low half first */
    uint64_t fpcr, fpsr;
};

#define PETREL_BOOTINFO_MAGIC   0x4f464e4954455250ull  /* "PETINFO" */
#define PETREL_BOOTINFO_VA      0x0000007fffff0000ull  /* read-only page */
#define PETREL_ROOT_UTCB_VA     0x0000007fffffe000ull  /* the root thread's UTCB */
#define PETREL_USER_STACK_TOP   0x0000007ffff00000ull
#define PETREL_USER_STACK_SIZE  0x10000ull
#define PETREL_ROOT_HANDLE      1   /* the root task's handle to the system object */
#define PETREL_SELF_SPACE       2   /* the root task's handle to its own space */
#define PETREL_SELF_THREAD      3   /* the root task's handle to its own thread */

struct petrel_bootinfo {
    uint64_t magic;
    uint32_t version;           /* 1 */
    uint32_t ncpus;             /* cores online */
    uint64_t mem_bytes;         /* RAM in total */
    uint64_t free_bytes;        /* free when the root task started */
    uint32_t gic_version;
    uint32_t tick_hz;
    uint64_t counter_hz;
    char cpu_name[32];
    char cmdline[512];
    uint32_t nfiles;            /* files in the boot image */
    uint32_t pad;
};

/* bootfile_info result. */
struct petrel_bootfile {
    char name[40];
    uint64_t size;
    uint32_t flags;             /* bit 0: executable */
    uint32_t pad;
};

/* device_find result. */
struct petrel_device {
    uint64_t pa, size;          /* first register range (0 if none) */
    uint32_t irq;               /* first interrupt as a GIC interrupt id (0 if none) */
    uint32_t pad;
};

/* mem_create flags. */
#define MEM_PAGE_4K     0
#define MEM_PAGE_64K    1
#define MEM_PAGE_2M     2
#define MEM_PAGE_MASK   3
#define MEM_EAGER       (1u << 2)   /* commit every page now (default: on first touch) */
#define MEM_DMA         (1u << 3)   /* for a device: committed now, its pages never move (mem_dma_addr) */

/* Thread states, as thread_stats reports them. */
enum {
    THREAD_INACTIVE, THREAD_RUNNING, THREAD_READY, THREAD_SEND, THREAD_RECV, THREAD_REPLY,
    THREAD_NOTIFY, THREAD_FUTEX, THREAD_DEAD
};

/* thread_stats result. */
struct petrel_thread_stats {
    uint64_t cpu_ns;            /* time spent running */
    uint32_t state, prio, cpu;
    uint32_t effective_prio;    /* prio, or higher while serving a caller (inheritance) */
};

#endif
