/* The transport under the generated client proxies (user/rt/svc_client.c). */
#ifndef PETREL_SVC_CLIENT_H
#define PETREL_SVC_CLIENT_H

#include <stdint.h>
#include "petrel_syscalls.h"    /* SYS_IPC_CALL: a register-only proxy makes the call inline */
#include "svc_transport.h"
/* A register-only proxy's reply that is not a plain success of `want`
 * registers (x0 the call's result, x1 the reply's message word, x2 MR0):
 * closes the handles it brought and returns what svc_client_call's callers
 * would: the call's error, the service's status, SVC_E_INVAL for a wrong
 * length, or 0 (a success after all). */
int64_t svc_client_status(uint64_t x0, uint64_t x1, uint64_t x2, unsigned want);

#endif
