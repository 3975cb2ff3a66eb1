/*
 * In-kernel self tests. A test is a function declared with KTEST; the
 * test kernel (CONFIG_KTEST) runs them when the boot arguments contain
 * "ktest" (or "ktest=prefix" to run only tests whose name starts with
 * prefix) and prints TAP: one "ok N - name" or "not ok N - name" line
 * per test, diagnostics as "# ..." lines, the plan "1..N" last.
 */
#ifndef PETREL_KTEST_H
#define PETREL_KTEST_H

#include "kernel.h"

struct ktest {
    const char *name;
    void (*fn)(void);
};

#define KTEST(fn, title) \
    static void fn(void); \
    static const struct ktest __ktest_##fn __attribute__((section(".ktest"), used)) = { title, fn }; \
    static void fn(void)

/* Record a check in the running test; prints a diagnostic if it fails. */
#define KT_CHECK(cond, ...) ktest_check((cond), #cond, __FILE__, __LINE__, __VA_ARGS__)
bool ktest_check(bool ok, const char *expr, const char *file, int line, const char *fmt, ...) PRINTF(5, 6);

/* Report a separate TAP result from inside a test (table-driven tests). */
void ktest_result(bool ok, const char *fmt, ...) PRINTF(2, 3);

void ktest_run_all(void);

/* Run fn on core `cpu` (from its IPI handler) and wait for it. */
int ktest_run_on(unsigned cpu, void (*fn)(void *), void *arg);

/* Overflow the last online core's kernel stack on purpose (stack_overflow.c). */
NORETURN void ktest_stack_overflow(void);

#endif
