/* The echo protocol coretest speaks with its own server threads and with
 * corepeer's echo mode (corepeer includes this file too). */
#ifndef CORETEST_ECHO_H
#define CORETEST_ECHO_H

#include "petrel.h"

#define LABEL_ECHO  0x100       /* reply: every word complemented */
#define LABEL_QUIT  0x1ff
#define LABEL_WHO   0x200       /* reply: mr0 = badge, mr1 = pid */

/* Answer an ECHO or WHO request in place (anything else goes back as
 * it came); returns the reply's length. Complementing every word checks
 * the reply direction as well. */
static inline unsigned echo_answer(struct petrel_msg *m)
{
    unsigned len = MSG_LEN(m->info);
    if (MSG_LABEL(m->info) == LABEL_WHO) {
        m->mr[0] = m->badge;
        m->mr[1] = m->pid;
        return 2;
    }
    if (MSG_LABEL(m->info) != LABEL_ECHO)
        return len;
    for (unsigned i = 0; i < len; i++) {
        if (i < MSG_REG_MRS)
            m->mr[i] = ~m->mr[i];
        else
            utcb()->mr[i] = ~utcb()->mr[i];
    }
    return len;
}

/* Serve echo requests on ep until LABEL_QUIT; the receive's status if it
 * ends otherwise (0 after a QUIT). */
static inline int64_t echo_loop(uint32_t ep)
{
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(ep, &m);
    while (r == 0) {
        uint64_t label = MSG_LABEL(m.info);
        m.info = MSG_INFO(label + 1, echo_answer(&m), 0);
        if (label == LABEL_QUIT) {
            sys_ipc_reply(0, &m);
            return 0;
        }
        r = sys_ipc_reply_recv(ep, &m);
    }
    return r;
}

#endif
