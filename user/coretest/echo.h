/* The echo protocol coretest speaks with its own server threads and with
 * corepeer's echo mode (user/corepeer includes this file too). */
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

#endif
