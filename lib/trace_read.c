/*
 * Reading the trace area (trace_abi.h) without a lock: the kernel, a
 * service in either placement and a native program read it the same way.
 */
#include "trace_abi.h"

int trace_reader_init(struct trace_reader *r, const struct trace_area *a, int from_now)
{
    if (a->magic != TRACE_MAGIC || a->version != TRACE_VERSION || a->ncpus == 0 || a->ncpus > TRACE_MAX_CPUS ||
        a->slots == 0 || (a->slots & (a->slots - 1)))
        return -1;
    r->area = a;
    r->lost = 0;
    for (unsigned c = 0; c < TRACE_MAX_CPUS; c++) {
        uint64_t head = c < a->ncpus ? __atomic_load_n(&a->core[c].head, __ATOMIC_ACQUIRE) : 0;
        r->next[c] = from_now ? head : head > a->slots ? head - a->slots : 0;
        r->stop[c] = ~0ull;
        r->have[c] = 0;
    }
    return 0;
}

/* Read core c's next record ahead: 1 if there is one. */
static int fill(struct trace_reader *r, unsigned c)
{
    const struct trace_area *a = r->area;
    for (;;) {
        uint64_t head = __atomic_load_n(&a->core[c].head, __ATOMIC_ACQUIRE);
        uint64_t n = r->next[c];
        if (head > r->stop[c])
            head = r->stop[c];
        if (n >= head)
            return 0;
        if (head - n > a->slots) {              /* overwritten before we came */
            r->lost += head - a->slots - n;
            n = head - a->slots;
        }
        const struct trace_record *s = trace_ring(a, c) + (n & (a->slots - 1));
        uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        const volatile uint64_t *src = (const volatile uint64_t *)s;
        uint64_t *dst = (uint64_t *)&r->ahead[c];
        for (unsigned i = 0; i < sizeof(*s) / 8; i++)
            dst[i] = src[i];
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t again = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
        r->next[c] = n + 1;
        if (seq == n + 1 && again == n + 1) {
            r->have[c] = 1;
            return 1;
        }
        r->lost++;                              /* overwritten while we read it */
    }
}

int trace_reader_next(struct trace_reader *r, struct trace_record *out)
{
    int best = -1;
    for (unsigned c = 0; c < r->area->ncpus; c++) {
        if (!r->have[c] && !fill(r, c))
            continue;
        if (best < 0 || r->ahead[c].time < r->ahead[best].time)
            best = (int)c;
    }
    if (best < 0)
        return 0;
    *out = r->ahead[best];
    r->have[best] = 0;
    return 1;
}

void trace_reader_bound(struct trace_reader *r)
{
    for (unsigned c = 0; c < r->area->ncpus; c++)
        r->stop[c] = __atomic_load_n(&r->area->core[c].head, __ATOMIC_ACQUIRE);
}
