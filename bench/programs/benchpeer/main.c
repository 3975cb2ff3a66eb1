/* benchpeer: the other process of the Petrel benchmarks.
 * mode=echo  answer every call on "ep" with an empty reply until QUIT
 * mode=pong  wait on "pong", signal "ping", forever */
#include "petrel.h"

int main(void *info)
{
    char mode[8] = "";
    start_arg("mode", mode, sizeof(mode));
    if (!strcmp(mode, "echo")) {
        uint32_t ep = start_handle("ep");
        struct petrel_msg m = { 0 };
        int64_t r = sys_ipc_recv(ep, &m);
        while (r == 0 && MSG_LABEL(m.info) != 0x1ff)
            r = sys_ipc_reply_recv(ep, &m);
        sys_ipc_reply(0, &m);
    } else if (!strcmp(mode, "pong")) {
        uint32_t ping = start_handle("ping"), pong = start_handle("pong");
        while (sys_notify_wait(pong) >= 0)
            sys_notify_signal(ping, 1);
    }
    return 0;
}
