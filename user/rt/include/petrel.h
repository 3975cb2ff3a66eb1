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

#include "petrel_syscalls.h"
#include "petrel_rt.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static inline __attribute__((noreturn)) void sys_exit(int status)
{
    exit(status);
}

int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int puts(const char *s);


/* TAP helpers for guest tests. */
void tap_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_plan(void);

#endif
