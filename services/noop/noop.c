/*
 * The NoOp service (idl/noop.toml): requests that do almost nothing,
 * for the hybrid kernel paper's Table 1 and for checking that a service
 * behaves the same in both placements. Written only against svc.h.
 */
#include "noop_if.h"

static svc_token waiting;       /* a deferred "later" call */
static uint64_t served;

static int64_t ping(struct svc_call *call)
{
    served++;
    if (waiting) {
        svc_token t = waiting;
        waiting = 0;
        noop_later_reply(t, 0, served);
    }
    return 0;
}

static int64_t add(struct svc_call *call, uint64_t a, uint64_t b, uint64_t *sum)
{
    if (a + b < a)
        return SVC_E_RANGE;
    *sum = a + b;
    return 0;
}

static int64_t echo(struct svc_call *call, const uint8_t *data, uint32_t data_len, uint8_t *back,
                    uint32_t *back_len, uint32_t *count)
{
    for (uint32_t i = 0; i < data_len; i++)
        back[i] = data[data_len - 1 - i];
    *back_len = data_len;
    *count = data_len;
    return 0;
}

static int64_t who(struct svc_call *call, uint64_t *badge, uint64_t *pid)
{
    *badge = call->badge;
    *pid = call->pid;
    return 0;
}

static int64_t later(struct svc_call *call, uint64_t *order)
{
    if (waiting)
        return SVC_E_BUSY;
    waiting = svc_defer(call);
    return waiting ? SVC_DEFERRED : SVC_E_NOMEM;
}

static int64_t work(struct svc_call *call, uint64_t loops)
{
    if (loops > 10000000)
        return SVC_E_RANGE;
    for (volatile uint64_t i = 0; i < loops; i++)
        ;
    return 0;
}

static int64_t notify(struct svc_call *call, svc_handle n, uint64_t bits)
{
    int err = svc_signal(n, bits);
    svc_handle_release(n);
    return err;
}

/* A service handing its client a new object: made here, given away by the
 * skeleton with the rights the interface names. */
static int64_t make_notify(struct svc_call *call, uint64_t bits, svc_handle *n)
{
    if (!bits || (bits >> 63))
        return SVC_E_INVAL;
    *n = svc_notify_create();
    if (!*n)
        return SVC_E_NOMEM;
    return svc_signal(*n, bits);
}

static int64_t low(struct svc_call *call, uint64_t value, uint32_t bits, uint64_t *result)
{
    if (bits > 64)
        return SVC_E_RANGE;
    *result = bits == 64 ? value : value & ((1ull << bits) - 1);
    return 0;
}

/* The handlers: the generated skeleton (noop_service, noop_fast) calls them. */
const struct noop_ops noop_ops = { ping, add, echo, who, later, work, notify, make_notify, low };
