/*
 * The native Petrel user runtime: system call stubs, console output and
 * the boot information the kernel hands the root task.
 */
#ifndef PETREL_USER_H
#define PETREL_USER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdarg.h>
#include "petrel_abi.h"
#include "pstring.h"

/* Error codes returned (negated) by system calls. */
#define E_INVAL     1
#define E_FAULT     2
#define E_NOSYS     4

#define PETREL_SVC(n, a0, a1) ({ \
    register uint64_t x0 __asm__("x0") = (uint64_t)(a0); \
    register uint64_t x1 __asm__("x1") = (uint64_t)(a1); \
    __asm__ volatile("svc #" #n : "+r"(x0) : "r"(x1) : "memory"); \
    (int64_t)x0; })

static inline int64_t sys_debug_write(const void *buf, size_t len) { return PETREL_SVC(1, buf, len); }
static inline __attribute__((noreturn)) void sys_exit(int status)
{
    PETREL_SVC(2, status, 0);
    __builtin_unreachable();
}
static inline int64_t sys_yield(void) { return PETREL_SVC(3, 0, 0); }
static inline int64_t sys_null(void) { return PETREL_SVC(4, 0, 0); }

int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int puts(const char *s);

/* The boot arguments' value for key (copied into val), or false. */
bool bootarg(const struct petrel_bootinfo *bi, const char *key, char *val, size_t size);

/* TAP helpers for guest tests. */
void tap_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_plan(void);

#endif
