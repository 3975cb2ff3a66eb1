/* The transport of the generated service proxies: one IPC call. */
#include "petrel.h"
#include "svc_client.h"

int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles, uint32_t *got)
{
    struct petrel_msg m = { MSG_INFO(label, len, nh), { 0 }, 0, 0 };
    for (unsigned i = 0; i < nh && i < MSG_MAX_HANDLES; i++) {
        utcb()->send_handles[i] = handles[i];
        utcb()->send_rights[i] = R_ALL;
    }
    for (unsigned i = 0; i < len; i++) {
        if (i < MSG_REG_MRS)
            m.mr[i] = mr[i];
        else
            utcb()->mr[i] = mr[i];
    }
    int64_t err = sys_ipc_call(ep, &m);
    if (err < 0)
        return err;
    for (unsigned i = 0; i < MSG_HANDLES(m.info); i++) {
        uint32_t h = utcb()->recv_handles[i];
        if (got)
            got[i] = h;
        else
            sys_handle_close(h);        /* nobody asked for it */
    }
    unsigned words = MSG_LEN(m.info);
    for (unsigned i = 0; i < words && i < cap; i++)
        mr[i] = i < MSG_REG_MRS ? m.mr[i] : utcb()->mr[i];
    return words;
}

void svc_client_drop(const uint32_t *got)
{
    for (unsigned i = 0; i < MSG_MAX_HANDLES; i++)
        if (got[i])
            sys_handle_close(got[i]);
}

int64_t svc_client_status(uint64_t x0, uint64_t x1, uint64_t x2, unsigned want)
{
    if ((int64_t)x0 < 0)
        return (int64_t)x0;
    for (unsigned i = 0; i < MSG_HANDLES(x1); i++)
        sys_handle_close(utcb()->recv_handles[i]);     /* nobody asked for them */
    unsigned words = MSG_LEN(x1);
    if (words >= 1 && (int64_t)x2 < 0)
        return (int64_t)x2;
    return words == want ? 0 : -E_INVAL;
}
