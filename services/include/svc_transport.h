/* The transport every generated client proxy calls: in user space one IPC
 * call (user/rt/svc_client.c), in the kernel its proxies' (svc_kernel.c:
 * the <interface>_kclient.c proxies, for kernel-placed services' calls). */
#ifndef PETREL_SVC_TRANSPORT_H
#define PETREL_SVC_TRANSPORT_H

#include <stdint.h>

/* Call ep with `label`, mr[0..len) and `nh` handles (given with all their
 * rights); the reply overwrites mr[0..cap) (words beyond cap are dropped)
 * and the handles it carries land in got[0..3) (0 where none; got may be
 * NULL, and then they are closed). Returns the reply's length, or a
 * negated error of the IPC itself. */
int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles, uint32_t *got);
/* Close the handles a reply brought (a reply the proxy refuses). */
void svc_client_drop(const uint32_t *got);

#endif
