/* The transport under the generated client proxies (user/rt/svc_client.c). */
#ifndef PETREL_SVC_CLIENT_H
#define PETREL_SVC_CLIENT_H

#include <stdint.h>
#include "petrel_syscalls.h"    /* SYS_IPC_CALL: a register-only proxy makes the call inline */

/* Call ep with `label`, mr[0..len) and `nh` handles (given with all their
 * rights); the reply overwrites mr[0..cap) (words beyond cap are dropped)
 * and the handles it carries land in got[0..3) (0 where none; got may be
 * NULL, and then they are closed). Returns the reply's length, or a
 * negated error of the IPC itself. */
int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles, uint32_t *got);
/* Close the handles a reply brought (a reply the proxy refuses). */
void svc_client_drop(const uint32_t *got);
/* A register-only proxy's reply that is not a plain success of `want`
 * registers (x0 the call's result, x1 the reply's message word, x2 MR0):
 * closes the handles it brought and returns what svc_client_call's callers
 * would: the call's error, the service's status, SVC_E_INVAL for a wrong
 * length, or 0 (a success after all). */
int64_t svc_client_status(uint64_t x0, uint64_t x1, uint64_t x2, unsigned want);

#endif
