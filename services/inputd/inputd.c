/*
 * The input dispatcher (idl/inputd.toml): the OKL4 paper's input path for
 * native programs, placeable like every service. It is the input service's
 * reader: at its first request it `open`s the input service with its
 * wakeup and maps the ring the service fills (services/include/spsc_ring.h).
 * The service signals the wakeup only when the ring goes from empty to
 * non-empty; the wakeup's handler drains the ring (to the spsc_idle
 * barrier) and hands each event to the focused application: straight into
 * the reply of its waiting `wait`, or into its queue of 64.
 *
 * Focus: the first application that waits, then whichever last called
 * `focus`; a press of Tab moves it to the next application in the order
 * they first asked. Tab itself, and a SYN_REPORT that would end a packet
 * of nothing but Tab, go to nobody.
 */
#include "inputd_if.h"
#include "input_if.h"
#include "svc_proc.h"
#include "spsc_ring.h"

#define APPS        16u
#define QUEUE       64u                 /* a power of two */
#define EV_SYN      0u
#define EV_KEY      1u
#define KEY_TAB     15u

struct event {
    uint32_t type, code, value;
    uint64_t irq_ns, dispatch_ns;
};

struct app {
    uint64_t pid;                       /* 0: a free slot */
    svc_token waiting;                  /* its `wait`, kept (0: none) */
    uint32_t head, tail;                /* its queue: events head - tail */
    int got_since_syn;                  /* an event of the current packet was its */
    struct event q[QUEUE];
};

static struct {
    int state;                          /* 0 before the first request, 1 up, or its error */
    struct spsc_ring *ring;
    uint32_t ring_size;
    struct app apps[APPS];
    int focused;                        /* index in apps, or -1 */
    uint64_t taken, handed, dropped, wakeups;
    int timer;                          /* its timer is attached (drain) */
} d = { .focused = -1 };

static void give(struct app *a, const struct event *e)
{
    if (a->waiting) {
        svc_token t = a->waiting;
        a->waiting = 0;
        d.handed++;
        inputd_wait_reply(t, 0, e->type, e->code, e->value, e->irq_ns, e->dispatch_ns);
        return;
    }
    if (a->head - a->tail == QUEUE) {
        a->tail++;                              /* the oldest goes */
        d.dropped++;
    }
    a->q[a->head++ % QUEUE] = *e;
}

/* The next application after the focused one that asked for events. */
static void focus_next(void)
{
    for (unsigned i = 1; i <= APPS; i++) {
        unsigned at = (unsigned)(d.focused + (int)i) % APPS;
        if (d.apps[at].pid) {
            d.focused = (int)at;
            return;
        }
    }
}

static void dispatch(const struct spsc_rec *r, void *unused)
{
    (void)unused;
    struct event e = { (uint32_t)(r->b >> 48), (uint32_t)(r->b >> 32) & 0xffff, (uint32_t)r->b, r->a,
                       svc_clock_ns() };
    d.taken++;
    if (e.type == EV_KEY && e.code == KEY_TAB) {
        if (e.value == 1)
            focus_next();
        return;
    }
    struct app *a = d.focused >= 0 ? &d.apps[d.focused] : NULL;
    if (!a) {
        d.dropped++;
        return;
    }
    if (e.type == EV_SYN && e.code == 0 && !a->got_since_syn)
        return;                                 /* (the end of a packet that gave it nothing) */
    a->got_since_syn = !(e.type == EV_SYN && e.code == 0);
    give(a, &e);
}

/* Take the ring's records, until it is empty after spsc_idle's barrier,
 * or a ring's worth (a service that never stops writing does not hold the
 * dispatcher here): then the rest from the timer at once, for the service
 * signals only an empty ring's next record. */
static void drain(void)
{
    int more = d.ring ? spsc_drain(d.ring, d.ring_size, d.ring_size, dispatch, NULL) : 0;
    if (more < 0)
        d.ring = NULL;                          /* (a ring gone wrong: read no more of it) */
    if (more > 0 && d.timer)
        svc_timer_set(svc_clock_ns());
}

/* The input service signalled: its ring went from empty to non-empty. */
static void woken(void)
{
    d.wakeups++;
    drain();
}

static int ready(void)
{
    if (d.state)
        return d.state == 1 ? 0 : d.state;
    svc_handle in = svc_service("input");
    uint64_t bits, size = 0;
    svc_handle note = svc_wakeup(woken, &bits);
    uint32_t ring = 0;
    if (!in)
        return SVC_E_NOENT;
    int64_t err = note ? input_open((uint32_t)in, (uint32_t)note, bits, &ring, &size) : SVC_E_NOMEM;
    if (err)
        return (int)err;                        /* (asked again next time) */
    d.timer = svc_timer_attach(drain) == 0;
    d.ring = svc_shared_map(ring, size);
    d.ring_size = d.ring ? spsc_attach(d.ring, size) : 0;
    if (!d.ring_size) {
        d.state = SVC_E_STATE;
        return d.state;
    }
    d.state = 1;
    return 0;
}

/* The caller's slot, made if it has none (and the first takes the focus); NULL if all are taken. */
static struct app *app_of(uint64_t pid)
{
    struct app *free = NULL;
    for (unsigned i = 0; i < APPS; i++) {
        if (d.apps[i].pid == pid)
            return &d.apps[i];
        if (!d.apps[i].pid && !free)
            free = &d.apps[i];
    }
    if (free) {
        *free = (struct app){ .pid = pid };
        if (d.focused < 0)
            d.focused = (int)(free - d.apps);
    }
    return free;
}

/* The caller's application slot (ready first): 0, or the error to answer. */
static int64_t caller(struct svc_call *call, struct app **a)
{
    int err = ready();
    if (err)
        return err;
    *a = app_of(call->pid);
    return *a ? 0 : SVC_E_LIMIT;
}

static int64_t wait(struct svc_call *call, uint32_t *type, uint32_t *code, uint32_t *value, uint64_t *irq_ns,
                    uint64_t *dispatch_ns)
{
    struct app *a;
    int64_t err = caller(call, &a);
    if (err)
        return err;
    if (a->waiting)
        return SVC_E_BUSY;
    if (a->head != a->tail) {
        struct event *e = &a->q[a->tail++ % QUEUE];
        *type = e->type, *code = e->code, *value = e->value, *irq_ns = e->irq_ns, *dispatch_ns = e->dispatch_ns;
        d.handed++;
        return 0;
    }
    a->waiting = svc_defer(call);
    return a->waiting ? SVC_DEFERRED : SVC_E_NOMEM;
}

static int64_t focus(struct svc_call *call, uint64_t *before)
{
    struct app *a;
    int64_t err = caller(call, &a);
    if (err)
        return err;
    *before = d.focused >= 0 ? d.apps[d.focused].pid : 0;
    d.focused = (int)(a - d.apps);
    return 0;
}

static int64_t stats(struct svc_call *call, uint64_t *taken, uint64_t *handed, uint64_t *dropped, uint64_t *wakeups,
                     uint64_t *focused)
{
    (void)call;
    int err = ready();
    if (err)
        return err;
    *taken = d.taken, *handed = d.handed, *dropped = d.dropped, *wakeups = d.wakeups;
    *focused = d.focused >= 0 ? d.apps[d.focused].pid : 0;
    return 0;
}

/* The handlers: the generated skeleton (inputd_service, inputd_fast) calls them. */
const struct inputd_ops inputd_ops = { wait, focus, stats };
