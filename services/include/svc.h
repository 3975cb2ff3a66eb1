/*
 * The service environment: everything a Petrel service may use. A service
 * is written once against this API and runs either inside the kernel
 * (kernel/core/svc_kernel.c implements it) or as a user-space server
 * (services/env/user_env.c), as the system description says. Placement
 * never appears in a service's code.
 *
 * A request arrives as a struct svc_call, handed to the generated
 * skeleton (<interface>_dispatch). The handler answers at once (returns 0
 * or a negated error: the skeleton replies) or keeps the reply for later
 * (svc_defer, returns SVC_DEFERRED, and later calls the generated
 * <interface>_<method>_reply with the token). Blocking looks the same in
 * both placements: the caller waits until the reply.
 */
#ifndef PETREL_SVC_H
#define PETREL_SVC_H

#include <stdint.h>
#include <stddef.h>
#include "petrel_abi.h"

#define SVC_DEFERRED    1       /* the handler will reply later */

/* What a register entry (<interface>_fast) did with a request. */
#define SVC_FAST_OTHER      0   /* not a register-only request: nothing done */
#define SVC_FAST_ANSWERED   1   /* answered into the caller's registers */
#define SVC_FAST_KEPT       2   /* the handler kept the reply (svc_defer) */
#define SVC_E_INVAL     (-E_INVAL)
#define SVC_E_RANGE     (-E_RANGE)
#define SVC_E_NOMEM     (-E_NOMEM)
#define SVC_E_NOENT     (-E_NOENT)
#define SVC_E_BUSY      (-E_BUSY)
#define SVC_E_PERM      (-E_PERM)
#define SVC_E_STATE     (-E_STATE)
#define SVC_E_LIMIT     (-E_LIMIT)

typedef uint64_t svc_token;     /* a kept reply; 0 is never a token */
typedef uint64_t svc_handle;    /* an object the service holds: passed in a request (a `handle`
                                 * argument) or made by it (svc_notify_create); 0: none */

/* A request. A handler uses badge and pid, and passes the call on to
 * svc_defer, svc_copy_in and svc_copy_out; the rest is the skeleton's. A
 * request served from registers (see <interface>_fast) has no mr[] (NULL):
 * the arguments stay in the caller's registers. A handler never writes its
 * call: the kernel keeps a register request's call from one request to the
 * next (the light call, docs/design/ipc-fastpath.md). */
struct svc_call {
    uint64_t label;             /* interface id << 16 | method */
    uint64_t badge;             /* of the handle the client called through */
    uint64_t pid;               /* the client's process id (set by the kernel: unforgeable) */
    void *env;                  /* the placement's own state */
    unsigned len;               /* message registers in mr[] */
    unsigned nhandles;          /* objects passed with the request */
    svc_handle handles[MSG_MAX_HANDLES];
    uint64_t *mr;               /* the message registers: the environment's array of MSG_MAX_MRS */
};

/* Reply now with len registers (the skeleton's use). */
void svc_reply(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr);
/* Reply now with an error status only: the request is refused, so the
 * objects passed with it are released (the skeleton calls this before a
 * method ever sees them). */
void svc_fail(struct svc_call *call, int64_t err);
/* Reply now with len registers and nh objects the service holds (0 entries
 * are skipped), given to the client with `rights` each (masked by the
 * service's own; one the client cannot take is left out). The objects are
 * given away: the service no longer holds them afterwards. */
void svc_reply_objects(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                       const svc_handle *h, const uint32_t *rights);
/* Keep this call's reply for later; 0 if it cannot be kept. */
svc_token svc_defer(struct svc_call *call);
/* Whether the client process `pid` (a call's `pid`) is still there: 1;
 * 0 once it ended (ids are never used twice). A kernel-placed service's
 * call carries the id of the account it charges, or 0 without one: it
 * is always there. A service takes back what an
 * ended client held: a walk of the kernel's processes, so to be asked
 * when something runs out, not at every call. */
int svc_client_alive(uint64_t pid);
/* Whether a kept token's caller still waits for its reply: 1; 0 once the
 * caller is gone (its thread ended). The token stays the service's to
 * reply through (a reply to a caller gone goes nowhere). */
int svc_token_alive(svc_token token);
/* Reply through a kept token (the generated <if>_<method>_reply's use). */
void svc_reply_later(svc_token token, uint64_t label, unsigned len, const uint64_t *mr);
void svc_reply_later_objects(svc_token token, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                             const svc_handle *h, const uint32_t *rights);
/* A new notification for the service to hand a client (charged to the
 * client of the current request in the kernel, to the service in user
 * space), or 0. */
svc_handle svc_notify_create(void);
/* A handle passed in a request belongs to the service from then on: signal
 * it if it is a notification (it must carry R_WRITE), and release it when
 * done. */
int svc_signal(svc_handle n, uint64_t bits);
void svc_handle_release(svc_handle h);
/* A second hold of an object the service holds (with its rights and badge),
 * to give away while keeping the first; 0 if none can be made (no memory,
 * or the object lacks R_DUP). */
svc_handle svc_handle_copy(svc_handle h);
/* Whether h is an endpoint someone can still receive on: 1; 0 if it died
 * (its server's process ended: endpoint_watch); SVC_E_INVAL if h is no
 * endpoint. */
int svc_endpoint_alive(svc_handle h);
/* The rights the service holds h with (R_READ, R_WRITE, ...: petrel_abi.h),
 * or SVC_E_INVAL if it holds no such object. */
int svc_handle_rights(svc_handle h);

/* Memory for the service's own state (zeroed), and its release. */
void *svc_alloc(size_t size);
void svc_free(void *p, size_t size);
/* The memory limit its allocations and objects are charged against (the
 * system description's `memory` of a user-placed instance, or of the
 * account a kernel-placed one charges), in bytes; 0 if it has none. */
uint64_t svc_memory_limit(void);

/* Memory for a device to read and write: `size` bytes (at most 2 MiB),
 * zeroed, physically contiguous, its bus address in *pa, charged like
 * svc_alloc (a whole page of 4 KiB, 64 KiB or 2 MiB). NULL if none can
 * be had. The device must be stopped before svc_dma_free. */
void *svc_dma_alloc(size_t size, uint64_t *pa);
void svc_dma_free(void *p, size_t size);

/* Memory to share with clients: `size` bytes (at most 2 MiB), zeroed,
 * physically contiguous (its bus address in *pa unless pa is NULL: a
 * device may read and write it), reached by this service at the address
 * it answers, and in *mem the service's handle of a memory object of the
 * same pages, which it keeps (the memory lives as long as the service,
 * or a holder of the object). Charged like svc_alloc; NULL if none can be
 * had. */
void *svc_shared_alloc(size_t size, svc_handle *mem, uint64_t *pa);
/* A new handle of shared memory object `mem` (svc_shared_alloc's) with
 * read, write and grant rights, for a reply to give a client (an `out`
 * handle); 0 if none can be had. */
svc_handle svc_shared_give(svc_handle mem);
/* A memory object of `size` bytes in 4 KiB pages (zeroed, committed now
 * and never moved: a device may read and write each page, at the bus
 * address svc_dma_page answers), for the service to give clients
 * (svc_shared_give) and a device to use; the service itself does not
 * reach its bytes. Charged like svc_alloc; 0 if none can be had. */
svc_handle svc_dma_object(uint64_t size);
/* The bus address of the byte at `offset` of svc_dma_object `mem` (its
 * page is contiguous, the next page may be anywhere), or a negated error. */
int64_t svc_dma_page(svc_handle mem, uint64_t offset);
/* Reach the first `size` bytes of a memory object another service shared
 * (svc_shared_alloc's, given with read and write rights), at the address
 * answered, for as long as the service holds `mem`; NULL if it is not
 * such an object or smaller. */
void *svc_shared_map(svc_handle mem, size_t size);

/* Copy from or to a client buffer (a `buffer` argument) of the current call,
 * as the client itself could reach it. 0 or SVC_E_FAULT. */
int svc_copy_in(struct svc_call *call, void *dst, uint64_t client_addr, uint64_t len);
int svc_copy_out(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len);
/* svc_copy_out for a shared entry (<name>_fault_shared): there, without
 * the kernel lock, only into pages the client has mapped writable already,
 * else SVC_E_AGAIN (what went before may be written: the usual path, which
 * the entry then leaves the call to, writes it again); elsewhere as
 * svc_copy_out. */
int svc_copy_out_try(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len);

/* The service's durable state: `size` bytes that outlive a restart of a
 * user-placed service (a memory object its supervisor keeps). *fresh says
 * whether it was just created (zeroed). NULL if it cannot be had. */
void *svc_state(size_t size, int *fresh);

/* Boot image file `index`: its description and its bytes, in place. */
int svc_bootfile(uint32_t index, struct petrel_bootfile *info, const void **data);

/* End this service instance abnormally, to test its supervisor's restart.
 * Only a user-placed instance can: the kernel's refuses (SVC_E_PERM). */
int svc_crash_for_testing(void);

/* The device this service drives: the registers of the first device tree
 * node compatible with `compat`, mapped uncached (NULL if none), and its
 * interrupt id in *irq. */
volatile void *svc_device(const char *compat, uint32_t *irq);

/* Take interrupt `irq`: `handler` runs when it fires (in the kernel: in the
 * interrupt; in user space: in the server loop, between requests). The line
 * stays masked until svc_irq_done. */
int svc_irq_attach(uint32_t irq, void (*handler)(void));
void svc_irq_done(uint32_t irq);

/* Calling another service: the one named `name` in this service's `calls`
 * list of the system description, as a handle for the interface's
 * generated proxies (<interface>_<method>(h, ...)); 0 if the description
 * gives none. The caller waits for each call: call only methods that
 * answer at once, and learn of changes through a wakeup. A kernel-placed
 * service calls only kernel-placed ones (tools/petrel/systems.py checks),
 * in the same kernel entry, and only from a request: see svc_may_call. */
svc_handle svc_service(const char *name);
/* Whether a call to another service may be made from here: always in user
 * space; in the kernel from a request's code, not from an interrupt's,
 * timer's or wakeup's handler or a register entry (there a call fails
 * with SVC_E_STATE: nothing may wait). */
int svc_may_call(void);
/* What to pass in a `buffer` argument of a call to another service
 * (svc_service) for the len bytes at addr in the memory of this request's
 * client (writable: the callee may write them), so that the callee's
 * svc_copy_in and svc_copy_out reach the client's memory and the bytes
 * are not copied through a buffer of this service's on the way; 0 when
 * they cannot be passed (copy them through a buffer of the service's own
 * and pass that). In the kernel, where both services run for the client's
 * own thread, addr itself; in user space the range is lent to the service
 * this one calls next, until it answers (the kernel's reply_lend), and the
 * address is tagged SVC_BUFFER_LENT: the callee reaches that range of the
 * client's memory and no other byte of it. Call it for each call. */
uint64_t svc_client_buffer(struct svc_call *call, uint64_t addr, uint64_t len, int writable);
/* A wakeup: a notification to give another service (as a `handle`
 * argument) for it to signal with *bits; each signal runs `handler` in
 * this service, between requests, as an interrupt's handler runs. One per
 * service; 0 if none can be made. */
svc_handle svc_wakeup(void (*handler)(void), uint64_t *bits);

#define SVC_E_FAULT     (-E_FAULT)
#define SVC_E_AGAIN     (-E_AGAIN)
#define SVC_E_BADHANDLE (-E_BADHANDLE)
#define SVC_E_CLOSED    (-E_CLOSED)
#define SVC_E_IO        (-E_IO)

/* The user placement's server loop (services/env/user_env.c): each
 * request goes to `fast` first (the generated <name>_fastentry: a
 * register-only request answered from the message registers, no copy into
 * a svc_call), then to `entry`. A fault of a thread the service handles
 * goes first to `fault_fast` when there is one (<name>_fault_fast, idl
 * fault_fast = true), with the fault message where it arrived. A service
 * with a shared entry (`fault_shared`, idl fault_shared = true) is served
 * by one server thread on each core online, which answer its faults there
 * at once, and take turns for everything else (docs/design/hybrid.md). */
void svc_serve(uint32_t ep, void (*entry)(struct svc_call *call), int (*fast)(struct svc_call *call, uint64_t *x),
               int (*fault_fast)(struct svc_call *call, const uint64_t *msg),
               int (*fault_shared)(struct svc_call *call, const uint64_t *msg));

/* A program serving objects (native object RPC) instead: the same loop on a
 * pool of server threads that run handlers at once (the program guards its
 * own state), grown on demand up to `max` (at most 64) threads: one that
 * takes a call when no other waits for the next starts one more, at its
 * priority, on any core. svc_pool_threads says how many there are. Of this
 * file's calls, a pool's handlers may make at once those about their own
 * call (svc_reply, svc_fail, svc_defer, svc_copy_*, svc_reply_later with
 * their tokens) and about handles (svc_signal, svc_handle_copy,
 * svc_handle_release, svc_handle_rights, svc_endpoint_alive); the others
 * (svc_alloc, the memory objects and views of svc_proc.h) need the
 * program's own lock. */
void svc_serve_pool(uint32_t ep, void (*entry)(struct svc_call *call), int (*fast)(struct svc_call *call, uint64_t *x),
                    unsigned max);
unsigned svc_pool_threads(void);

static inline void svc_bytes_put(uint64_t *dst, const void *src, uint32_t len)
{
    const uint8_t *s = src;
    uint8_t *d = (uint8_t *)dst;
    for (uint32_t i = 0; i < len; i++)
        d[i] = s[i];
}

static inline void svc_bytes_get(void *dst, const uint64_t *src, uint32_t len)
{
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = dst;
    for (uint32_t i = 0; i < len; i++)
        d[i] = s[i];
}

#endif
