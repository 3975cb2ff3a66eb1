/*
 * Watchers: clients that cannot wait in a service (the Linux personality
 * serves many) and are signalled instead, on a notification they passed
 * (a `watch` method: net's, blk's), when something of theirs may have
 * changed. One watch a client (its pid), a table of n a service.
 */
#ifndef PETREL_SVC_WATCH_H
#define PETREL_SVC_WATCH_H

#include "svc.h"

struct svc_watch {
    uint64_t pid;               /* the client (0: a free slot) */
    svc_handle note;            /* its notification, held by the service */
    uint64_t bits;              /* what to signal on it */
};

/* The `watch` method's work: client pid's watch replaced by (note, bits),
 * or ended when bits is 0 (the note is then released). 0, or SVC_E_BUSY
 * when all n slots are other clients' that still run (one of a client
 * that ended is taken over). The service holds note from then on. */
int64_t svc_watch_set(struct svc_watch *w, unsigned n, uint64_t pid, svc_handle note, uint64_t bits);

/* Signal the watch of client pid (0: every watch). */
void svc_watch_signal(const struct svc_watch *w, unsigned n, uint64_t pid);

#endif
