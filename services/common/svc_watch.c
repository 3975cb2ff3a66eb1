/* Watchers (services/include/svc_watch.h). */
#include "svc_watch.h"

int64_t svc_watch_set(struct svc_watch *w, unsigned n, uint64_t pid, svc_handle note, uint64_t bits)
{
    unsigned slot = n;
    for (unsigned i = 0; i < n; i++)
        if (w[i].pid == pid || (slot == n && !w[i].pid))
            slot = i;
    for (unsigned i = 0; slot == n && bits && i < n; i++)
        if (!svc_client_alive(w[i].pid))
            slot = i;                           /* (all taken: one of a client that ended) */
    if (slot < n && w[slot].pid) {
        svc_handle_release(w[slot].note);
        w[slot].pid = 0;
    }
    if (!bits || slot == n) {
        svc_handle_release(note);
        return bits ? SVC_E_BUSY : 0;
    }
    w[slot] = (struct svc_watch){ pid, note, bits };
    return 0;
}

void svc_watch_signal(const struct svc_watch *w, unsigned n, uint64_t pid)
{
    for (unsigned i = 0; i < n; i++)
        if (w[i].pid && (!pid || w[i].pid == pid))
            svc_signal(w[i].note, w[i].bits);
}
