/* The transport of the generated service proxies: one IPC call. */
#include "petrel.h"
#include "svc_client.h"

int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles)
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
    unsigned got = MSG_LEN(m.info);
    for (unsigned i = 0; i < got && i < cap; i++)
        mr[i] = i < MSG_REG_MRS ? m.mr[i] : utcb()->mr[i];
    return got;
}
