/*
 * echo: a small server. It answers each call on its "greeting" endpoint
 * with the message's text in capitals and the caller's process id, until
 * a call with label QUIT.
 */
#include "petrel.h"

#define LABEL_TEXT  1
#define LABEL_QUIT  2

int main(void *info)
{
    uint32_t ep = start_handle("greeting");
    if (!ep) {
        puts("echo: no greeting endpoint");
        return 1;
    }
    unsigned served = 0;
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(ep, &m);
    while (r == 0) {
        if (MSG_LABEL(m.info) == LABEL_QUIT) {
            m.info = MSG_INFO(LABEL_QUIT, 0, 0);
            sys_ipc_reply(0, &m);
            break;
        }
        char *text = (char *)m.mr;              /* up to 48 bytes in MR0..MR5 */
        for (unsigned i = 0; i < 48 && text[i]; i++)
            if (text[i] >= 'a' && text[i] <= 'z')
                text[i] = (char)(text[i] - 'a' + 'A');
        m.mr[5] = m.pid;
        m.info = MSG_INFO(LABEL_TEXT, 6, 0);
        served++;
        r = sys_ipc_reply_recv(ep, &m);
    }
    printf("echo: served %u calls\n", served);
    return 0;
}
