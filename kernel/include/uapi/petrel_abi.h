/*
 * The binary interface between the kernel and native Petrel programs,
 * shared by both sides: system call numbers (the immediate of `svc`),
 * error codes and the boot information page.
 *
 * `svc #0` is never a Petrel call: it is the Linux system call
 * instruction, which the kernel treats as a foreign call.
 */
#ifndef PETREL_ABI_H
#define PETREL_ABI_H

#include <stdint.h>

#define PETREL_SYS_DEBUG_WRITE  1   /* (const char *buf, size_t len) -> bytes written */
#define PETREL_SYS_EXIT         2   /* (int status) -> does not return */
#define PETREL_SYS_YIELD        3   /* () -> 0 */
#define PETREL_SYS_NULL         4   /* () -> 0: the cheapest call, for benchmarks */

#define PETREL_BOOTINFO_MAGIC   0x4f464e4954455250ull  /* "PETINFO" */
#define PETREL_BOOTINFO_VA      0x0000007fffff0000ull  /* read-only page */
#define PETREL_USER_STACK_TOP   0x0000007ffff00000ull
#define PETREL_USER_STACK_SIZE  0x10000ull

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
};

#endif
