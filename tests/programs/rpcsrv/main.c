/*
 * rpcsrv: a server of native object RPC (idl/rpctest.toml). It makes an
 * endpoint of its own, registers an object of it (a handle badged 1) with
 * the service manager under `name=` (granted as "servicemgr"), and serves
 * the objects' calls with idlc's skeleton in the user environment of
 * services, on a pool of server threads that grows on demand up to
 * `threads=` (default 8; svc_serve_pool): the badge says which object a
 * call is for, and the kernel gives the caller's pid beside it. Its
 * handlers keep no state, so they may run at once.
 */
#include "petrel.h"
#include "svc.h"
#include "rpctest_if.h"
#include "servicemgr_if.h"

static uint32_t ep;             /* ours: every object is a badged handle of it */

static int64_t ping(struct svc_call *call, uint64_t value, uint64_t *out)
{
    *out = value + 1;
    return 0;
}

static int64_t who(struct svc_call *call, uint64_t *object, uint64_t *pid)
{
    *object = call->badge;
    *pid = call->pid;
    return 0;
}

static int64_t make(struct svc_call *call, uint64_t id, svc_handle *object)
{
    if (id == 0 || id >> 32)
        return SVC_E_INVAL;
    int64_t h = sys_handle_dup(ep, R_WRITE | R_GRANT | R_DUP, id);
    if (h < 0)
        return SVC_E_NOMEM;
    *object = (svc_handle)h;
    return 0;
}

static int64_t relay(struct svc_call *call, svc_handle object, uint64_t *seen, uint64_t *pid)
{
    int64_t err = rpctest_who((uint32_t)object, seen, pid);
    svc_handle_release(object);
    return err;
}

static int64_t stop(struct svc_call *call)
{
    printf("rpcsrv: exiting as asked by pid %lu\n", (unsigned long)call->pid);
    exit_process(0);                            /* (every thread of the pool: the call is never answered) */
}

static int64_t nap(struct svc_call *call, uint64_t ms)
{
    if (ms > 1000)
        return SVC_E_INVAL;
    sleep_ms(ms);
    return 0;
}

static int64_t threads(struct svc_call *call, uint64_t *count)
{
    *count = svc_pool_threads();
    return 0;
}

const struct rpctest_ops rpctest_ops = { ping, who, make, relay, stop, nap, threads };

int main(void)
{
    char name[33] = "";
    start_arg("name", name, sizeof(name));
    uint32_t mgr = start_handle("servicemgr");
    int64_t e = sys_endpoint_create();
    int64_t obj = e > 0 ? sys_handle_dup((uint32_t)e, R_WRITE | R_GRANT | R_DUP, 1) : e;
    if (!mgr || !name[0] || obj < 0) {
        printf("rpcsrv: needs name= and a servicemgr grant (%ld)\n", (long)obj);
        return 1;
    }
    ep = (uint32_t)e;
    int64_t err = servicemgr_add(mgr, name, (uint32_t)strlen(name), (uint32_t)obj);
    sys_handle_close((uint32_t)obj);            /* (the service manager has its copy) */
    printf("rpcsrv %s: registered: %s (pid %lu)\n", name, error_str(err), (unsigned long)sys_space_id(self_space()));
    if (err)
        return 1;
    svc_serve_pool(ep, rpctest_service, rpctest_fastentry, (unsigned)start_arg_u64("threads", 8));
    return 1;
}
