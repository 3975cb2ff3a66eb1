/*
 * The service environment in user space: the service is its own process,
 * a server loop over IPC on the endpoint its spawner granted as "service".
 * A reply kept for later is a reply handle (reply_save), answered with
 * ipc_reply_to.
 */
#include "petrel.h"
#include "svc.h"

struct user_env {
    int have_reply;             /* a reply for the current call is in `out` */
    struct petrel_msg out;
};

/* Load mr[0..len) into a message: MR0..5 in registers, the rest in the UTCB. */
static void load(struct petrel_msg *m, uint64_t label, unsigned len, const uint64_t *mr)
{
    m->info = MSG_INFO(label, len, 0);
    for (unsigned i = 0; i < len && i < MSG_REG_MRS; i++)
        m->mr[i] = mr[i];
    for (unsigned i = MSG_REG_MRS; i < len; i++)
        utcb()->mr[i] = mr[i];
}

void svc_reply(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr)
{
    struct user_env *env = call->env;
    load(&env->out, label, len, mr);
    env->have_reply = 1;
    call->replied = 1;
}

void svc_fail(struct svc_call *call, int64_t err)
{
    uint64_t mr[1] = { (uint64_t)err };
    svc_reply(call, call->label, 1, mr);
}

svc_token svc_defer(struct svc_call *call)
{
    int64_t h = sys_reply_save();
    return h > 0 ? (svc_token)h : 0;
}

void svc_reply_later(svc_token token, uint64_t label, unsigned len, const uint64_t *mr)
{
    struct petrel_msg m = { 0 };
    load(&m, label, len, mr);
    sys_ipc_reply_to((uint32_t)token, &m);
}

void *svc_alloc(size_t size)
{
    return mem_alloc(size, 0, NULL);
}

void svc_free(void *p, size_t size)
{
    sys_mem_unmap(self_space(), (uint64_t)p);
}

/* Serve requests on `ep` forever with `entry` (the service's dispatcher). */
void svc_serve(uint32_t ep, void (*entry)(struct svc_call *))
{
    struct user_env env = { 0 };
    struct petrel_msg m = { 0 };
    struct svc_call call;
    int64_t r = sys_ipc_recv(ep, &m);
    for (;;) {
        if (r < 0) {
            printf("service: receive failed: %s\n", error_str(r));
            return;
        }
        call.label = MSG_LABEL(m.info);
        call.len = MSG_LEN(m.info);
        for (unsigned i = 0; i < call.len; i++)
            call.mr[i] = i < MSG_REG_MRS ? m.mr[i] : utcb()->mr[i];
        call.badge = m.badge;
        call.pid = m.pid;
        call.env = &env;
        call.replied = 0;
        env.have_reply = 0;
        entry(&call);
        if (env.have_reply) {
            m = env.out;
            r = sys_ipc_reply_recv(ep, &m);
        } else {
            m.info = 0;
            r = sys_ipc_recv(ep, &m);
        }
    }
}
