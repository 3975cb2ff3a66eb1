/* The transport under the generated client proxies (user/rt/svc_client.c). */
#ifndef PETREL_SVC_CLIENT_H
#define PETREL_SVC_CLIENT_H

#include <stdint.h>

/* Call ep with `label`, mr[0..len) and `nh` handles (given with all their
 * rights); the reply overwrites mr[0..cap) (words beyond cap are dropped).
 * Returns the reply's length, or a negated error of the IPC itself. */
int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles);

#endif
