/*
 * Between the two halves of the user-space service environment
 * (user_env.c: the server loop; user_proc.c: the process environment).
 */
#ifndef PETREL_USER_ENV_H
#define PETREL_USER_ENV_H

#include <stdint.h>

/* The bit of the server loop's notification that stands for an event of
 * the process environment (its timer); interrupts take the low bits, and
 * the kernel keeps bit 63. */
#define USER_ENV_EVENT  (1ull << 62)
/* The bit another service signals for svc_wakeup. */
#define USER_ENV_WAKEUP (1ull << 61)

/* Have the server loop run `handler` (between requests) whenever
 * USER_ENV_EVENT is signalled on the notification returned (0: none could
 * be made). */
uint32_t user_env_event(void (*handler)(void));

/* Handle h is being released: drop what the process environment keeps of
 * it (user_proc.c: a mapping of a memory object read or written). */
void user_proc_forget(uint32_t h);

#endif
