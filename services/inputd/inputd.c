/*
 * The input dispatcher (idl/inputd.toml): the OKL4 paper's input path for
 * native programs, placeable like every service. It is the reader of the
 * input services it calls: "input" (a keyboard) and "tablet" (a pointing
 * device), either optional. At its first request it `open`s each with its
 * wakeup and maps the ring each fills (services/include/spsc_ring.h). A
 * service signals the wakeup only when its ring goes from empty to
 * non-empty; the wakeup's handler drains both rings (to the spsc_idle
 * barrier) and hands each event on: straight into the reply of the
 * application's waiting `wait`, or into its queue of 64.
 *
 * Keys go to the focused application: the first that waits or places a
 * window, then whichever last called `focus` or was clicked; a press of
 * Tab moves the focus to the next application in the order they first
 * asked. Tab itself, and a SYN_REPORT that would end a packet of nothing
 * but Tab, go to nobody.
 *
 * The tablet's events are taken a packet at a time (to its SYN_REPORT):
 * its position scaled from the device's axes to the screen's pixels (the
 * display service's size, when the dispatcher calls one). A press of the
 * left button while no button is held finds the topmost window under the
 * pointer: its application takes the focus and the pointer, and gets each
 * packet until the last button is released, as ABS_X and ABS_Y from its
 * window's corner, the buttons that changed, and SYN_REPORT. A packet
 * outside every window with no button held (the pointer passing over)
 * goes to nobody.
 *
 * A service (the Linux personality) takes its events through a ring
 * instead (`attach`), as the dispatcher takes the input services': the
 * records of both devices, tagged with the device, and a signal on the
 * empty-to-non-empty edge. Its window is the whole screen, under every
 * other: the desktop a click falls to when it misses every window.
 *
 * An application that placed a window gave a token, an endpoint it
 * receives on: when the endpoint dies (its process ended) the dispatcher
 * forgets the application, found dead as it next hands it an event that
 * must wait in its queue, or as the focus or a click passes over it.
 */
#include "inputd_if.h"
#include "input_if.h"
#include "display_if.h"
#include "svc_proc.h"
#include "spsc_ring.h"

#define APPS        16u
#define QUEUE       64u                 /* a power of two */
#define EV_SYN      0u
#define EV_KEY      1u
#define EV_ABS      3u
#define EV_FOCUS    0x20u               /* Petrel's own: the focus gained (1) or lost (0) */
#define SYN_REPORT  0u
#define KEY_TAB     15u
#define ABS_X       0u
#define ABS_Y       1u
#define BTN_MOUSE   0x110u              /* BTN_LEFT; the buttons run to BTN_TASK, 0x117 */
#define BTN_LAST    0x117u
#define PACKET      8u                  /* button changes a tablet's packet keeps */
#define WIN_MAX     65536u
#define SYN_DROPPED 3u
#define APP_RING    16384u              /* an attached application's ring: 1,020 events */

struct event {
    uint32_t type, code, value;
    uint64_t irq_ns, dispatch_ns;
    uint32_t dev;                       /* 0: the keyboard's, 1: the tablet's */
};

struct app {
    uint64_t pid;                       /* 0: a free slot */
    svc_token waiting;                  /* its `wait`, kept (0: none) */
    uint32_t head, tail;                /* its queue: events head - tail */
    int got_since_syn;                  /* an event of the current key packet was its */
    svc_handle token;                   /* its window's endpoint (0: none) */
    uint32_t left, top, width, height;  /* its window (width 0: none) */
    uint64_t stacked;                   /* when the window was placed: the latest lies on top */
    uint64_t active;                    /* when it last called (d.calls): the least recent goes first */
    /* attached: its ring (then no queue), the note signalled at its edge */
    struct spsc_ring *ring, *ring_va;   /* ring: ring_va once attached (NULL: not) */
    uint32_t ring_size;
    svc_handle ring_mem, note;
    uint64_t bits;
    uint32_t lost;                      /* devices whose events the full ring lost: SYN_DROPPED first */
    struct event q[QUEUE];
};

/* A ring of an input service's. */
struct source {
    struct spsc_ring *ring;
    uint32_t ring_size;
};

static struct {
    int state;                          /* 0 before the first request, 1 up, or its error */
    struct source keys, pointer;
    struct app apps[APPS];
    int focused;                        /* index in apps, or -1 */
    uint64_t taken, handed, dropped, wakeups, stack, calls;
    int timer;                          /* its timer is attached (drain) */
    svc_handle note;                    /* its wakeup, which the input services signal */
    uint64_t bits;
    /* the tablet: its axes' ranges, the screen, and the packet being read */
    int64_t min[2], span[2];
    uint32_t screen[2];
    uint32_t at[2];                     /* the pointer, in the screen's pixels */
    uint32_t buttons;                   /* held: bit n for BTN_MOUSE + n */
    int grabbed;                        /* the application that has the pointer, or -1 */
    unsigned nchanged;
    struct event changed[PACKET];       /* the packet's button changes */
} d = { .focused = -1, .grabbed = -1 };

/* The application forgotten: its slot freed, its queue and token gone, its
 * focus passed on. */
static void focus_next(void);
static void forget(struct app *a)
{
    int me = (int)(a - d.apps);
    if (a->waiting)
        inputd_wait_reply(a->waiting, SVC_E_CLOSED, 0, 0, 0, 0, 0);
    if (a->token)
        svc_handle_release(a->token);
    *a = (struct app){ 0 };                     /* (never an attached one's: it has no token) */
    if (d.grabbed == me)
        d.grabbed = -1;
    if (d.focused == me)
        focus_next();
}

/* a, unless its window's endpoint died: then it is forgotten (a `wait`
 * it left, its process gone, answered E_CLOSED), and NULL. An application
 * without a window (no token) is taken as living. */
static struct app *living(struct app *a)
{
    if (!a->token || svc_endpoint_alive(a->token) > 0)
        return a;
    forget(a);
    return NULL;
}

/* Into an attached application's ring: the edge signalled, what a full
 * ring loses counted, and SYN_DROPPED put in before the device's next. */
static void push(struct app *a, const struct event *e)
{
    uint64_t tag = (uint64_t)e->dev << 56;
    struct spsc_rec lost = { e->irq_ns, tag | (uint64_t)SYN_DROPPED << 32 },
                    r = { e->irq_ns, tag | (uint64_t)e->type << 48 | (uint64_t)e->code << 32 | e->value };
    int pushed = 0;
    if (a->lost & (1u << e->dev)) {
        pushed = spsc_push(a->ring, a->ring_size, &lost);
        if (pushed != SPSC_FULL)
            a->lost &= ~(1u << e->dev);
    }
    if (!(a->lost & (1u << e->dev))) {
        int p = spsc_push(a->ring, a->ring_size, &r);
        pushed = pushed == 1 ? 1 : p;
    }
    if (pushed == SPSC_FULL || (a->lost & (1u << e->dev))) {
        a->lost |= 1u << e->dev;
        d.dropped++;
        return;
    }
    d.handed++;
    if (pushed == 1)
        svc_signal(a->note, a->bits);
}

/* Hand an event to a; 0 if it was found dead (and forgotten). */
static int give(struct app *a, const struct event *e)
{
    if (a->ring) {
        push(a, e);
        return 1;
    }
    if (a->token && !living(a))
        return 0;                               /* (one that died waiting: nothing is lost to it) */
    if (a->waiting) {
        svc_token t = a->waiting;
        a->waiting = 0;
        d.handed++;
        inputd_wait_reply(t, 0, e->type, e->code, e->value, e->irq_ns, e->dispatch_ns);
        return 1;
    }
    if (a->head - a->tail == QUEUE) {
        a->tail++;                              /* the oldest goes */
        d.dropped++;
    }
    a->q[a->head++ % QUEUE] = *e;
    return 1;
}

/* Tell a windowed application it gained or lost the focus (EV_FOCUS), as
 * Android's dispatcher tells a window; 0 if it was found dead. */
static int tell_focus(struct app *a, uint32_t gained)
{
    uint64_t now = svc_clock_ns();
    struct event e = { EV_FOCUS, 0, gained, now, now, 0 };
    if (a->ring && !gained) {
        /* An attached one has no focus events: SYN_DROPPED of the
         * keyboard's has its reader take every key as released (a key held
         * as the focus left would repeat for ever). */
        struct event lost = { EV_SYN, SYN_DROPPED, 0, now, now, 0 };
        push(a, &lost);
        return 1;
    }
    return !a->pid || !a->token || give(a, &e);
}

/* The focus to application `to` (-1: nobody). */
static void set_focus(int to)
{
    int from = d.focused;
    d.focused = to;
    if (from == to)
        return;
    if (from >= 0)
        tell_focus(&d.apps[from], 0);          /* (found dead: forgotten, the focus stays with `to`) */
    if (to >= 0 && d.focused == to)
        tell_focus(&d.apps[to], 1);            /* (found dead: forgotten, the focus moved on) */
}

/* The next living application after the focused one that asked for events
 * (the focused one itself if it is alone; -1 if none is left). */
static void focus_next(void)
{
    int from = d.focused;
    for (unsigned i = 1; i <= APPS; i++) {
        unsigned at = (unsigned)(from + (int)i) % APPS;
        if (d.apps[at].pid && (int)at != from && living(&d.apps[at])) {
            set_focus((int)at);
            return;
        }
    }
    set_focus(from >= 0 && d.apps[from].pid ? from : -1);
}

/* A key's event, to the focused application. */
static void key_event(const struct event *e)
{
    if (e->type == EV_KEY && e->code == KEY_TAB) {
        if (e->value == 1)
            focus_next();
        return;
    }
    for (;;) {
        struct app *a = d.focused >= 0 ? &d.apps[d.focused] : NULL;
        if (!a) {
            d.dropped++;
            return;
        }
        if (e->type == EV_SYN && e->code == SYN_REPORT && !a->got_since_syn)
            return;                             /* (the end of a packet that gave it nothing) */
        if (give(a, e)) {
            a->got_since_syn = !(e->type == EV_SYN && e->code == SYN_REPORT);
            return;
        }                                       /* (found dead: the focus moved on) */
    }
}

/* The topmost living window at the pointer, or -1. */
static int window_at(void)
{
    for (;;) {
        int best = -1;
        for (unsigned i = 0; i < APPS; i++) {
            const struct app *a = &d.apps[i];
            if (a->pid && a->width && d.at[0] - a->left < a->width && d.at[1] - a->top < a->height &&
                (best < 0 || a->stacked > d.apps[best].stacked))     /* (an attached one's: 0, the lowest) */
                best = (int)i;
        }
        if (best < 0 || living(&d.apps[best]))
            return best;
    }
}

/* The tablet's packet ended (SYN_REPORT at time t): to the application
 * that has the pointer, or to the window a press finds. */
static void pointer_packet(uint64_t t)
{
    uint32_t held = d.buttons;
    for (unsigned i = 0; i < d.nchanged; i++) {
        uint32_t bit = 1u << (d.changed[i].code - BTN_MOUSE);
        held = d.changed[i].value ? held | bit : held & ~bit;
    }
    for (unsigned i = 0; !d.buttons && i < d.nchanged; i++) {
        if (d.changed[i].code == BTN_MOUSE && d.changed[i].value) {
            d.grabbed = window_at();            /* a click */
            if (d.grabbed >= 0)
                set_focus(d.grabbed);
            break;
        }
    }
    if (d.grabbed >= 0 && (d.buttons || held)) {
        struct app *a = &d.apps[d.grabbed];
        uint64_t now = svc_clock_ns();
        struct event e[2 + PACKET + 1] = {
            { EV_ABS, ABS_X, d.at[0] - a->left, t, now, 1 },
            { EV_ABS, ABS_Y, d.at[1] - a->top, t, now, 1 },
        };
        unsigned n = 2;
        for (unsigned i = 0; i < d.nchanged; i++)
            e[n++] = (struct event){ EV_KEY, d.changed[i].code, d.changed[i].value, d.changed[i].irq_ns, now, 1 };
        e[n++] = (struct event){ EV_SYN, SYN_REPORT, 0, t, now, 1 };
        for (unsigned i = 0; i < n && d.grabbed >= 0; i++)
            if (!give(a, &e[i]))
                break;                          /* (found dead: forgotten, the pointer let go) */
    }
    d.buttons = held;
    if (!held)
        d.grabbed = -1;
    d.nchanged = 0;
}

/* A tablet's event: the position kept, the buttons' changes gathered, the
 * packet handed on at its end. */
static void pointer_event(const struct event *e)
{
    if (e->type == EV_ABS && e->code <= ABS_Y) {
        int64_t v = (int64_t)(int32_t)e->value - d.min[e->code];
        if (v < 0)
            v = 0;
        if (v >= d.span[e->code])
            v = d.span[e->code] - 1;
        d.at[e->code] = (uint32_t)((uint64_t)v * d.screen[e->code] / (uint64_t)d.span[e->code]);
    } else if (e->type == EV_KEY && e->code >= BTN_MOUSE && e->code <= BTN_LAST && e->value <= 1) {
        if (d.nchanged < PACKET)
            d.changed[d.nchanged++] = *e;
    } else if (e->type == EV_SYN && e->code == SYN_REPORT) {
        pointer_packet(e->irq_ns);
    } else if (e->type == EV_SYN && e->code == SYN_DROPPED) {
        /* Events were lost, a release among them perhaps: the packet goes,
         * the buttons held are taken as released (the application that
         * has the pointer is told so), and the pointer is free again. */
        d.nchanged = 0;
        for (uint32_t b = 0; b <= BTN_LAST - BTN_MOUSE && d.buttons; b++)
            if ((d.buttons >> b) & 1 && d.nchanged < PACKET)
                d.changed[d.nchanged++] = (struct event){ EV_KEY, BTN_MOUSE + b, 0, e->irq_ns, 0, 1 };
        if (d.nchanged)
            pointer_packet(e->irq_ns);
        d.buttons = 0;
        d.grabbed = -1;
        d.nchanged = 0;
    }
}

static void from_keys(const struct spsc_rec *r)
{
    struct event e = { (uint32_t)(r->b >> 48), (uint32_t)(r->b >> 32) & 0xffff, (uint32_t)r->b, r->a,
                       svc_clock_ns(), 0 };
    d.taken++;
    key_event(&e);
}

static void from_pointer(const struct spsc_rec *r)
{
    struct event e = { (uint32_t)(r->b >> 48), (uint32_t)(r->b >> 32) & 0xffff, (uint32_t)r->b, r->a, 0, 1 };
    d.taken++;
    pointer_event(&e);
}

/* A ring's next record (1), or 0 once it is empty after spsc_idle's
 * barrier (the service signals its next); a ring gone wrong is read no more. */
static int take(struct source *s, struct spsc_rec *x)
{
    int got = s->ring ? spsc_take(s->ring, s->ring_size, x) : 0;
    if (got < 0)
        s->ring = NULL;
    return got > 0;
}

/* Both rings, their records in the order of their interrupts' times (a
 * click and the key pressed after it go in that order), until both are
 * empty, or a ring's worth of each (services that never stop writing do
 * not hold the dispatcher here): then the rest from the timer at once,
 * for a service signals only an empty ring's next record. */
static void drain(void)
{
    struct spsc_rec k, p;
    int have_k = take(&d.keys, &k), have_p = take(&d.pointer, &p);
    for (uint32_t n = d.keys.ring_size + d.pointer.ring_size; (have_k || have_p) && n; n--) {
        if (have_k && (!have_p || k.a <= p.a)) {
            from_keys(&k);
            have_k = take(&d.keys, &k);
        } else {
            from_pointer(&p);
            have_p = take(&d.pointer, &p);
        }
    }
    if (have_k)
        from_keys(&k);                    /* (taken from its ring already) */
    if (have_p)
        from_pointer(&p);
    if ((have_k || have_p) && d.timer)
        svc_timer_set(svc_clock_ns());
}

/* An input service signalled: its ring went from empty to non-empty. */
static void woken(void)
{
    d.wakeups++;
    drain();
}

/* Open the input service named `name` and map its ring: 0 (nothing if the
 * description gives no such service), or the error. */
static int open_source(const char *name, struct source *s, svc_handle note, uint64_t bits)
{
    svc_handle in = svc_service(name);
    uint64_t size = 0;
    uint32_t ring = 0;
    if (!in)
        return 0;
    int64_t err = input_open((uint32_t)in, (uint32_t)note, bits, &ring, &size);
    if (err)
        return (int)err;
    s->ring = svc_shared_map(ring, size);
    s->ring_size = s->ring ? spsc_attach(s->ring, size) : 0;
    return s->ring_size ? 0 : SVC_E_STATE;
}

/* The screen (the display service's size, else the tablet's range) and
 * the tablet's axes: 1 if the tablet has both, else 0 (it is not used). */
static int measure(void)
{
    svc_handle tablet = svc_service("tablet"), display = svc_service("display");
    int axes = tablet != 0;
    for (uint32_t axis = ABS_X; axes && axis <= ABS_Y; axis++) {
        int64_t min, max;
        uint32_t fuzz, flat, res;
        axes = input_abs((uint32_t)tablet, axis, &min, &max, &fuzz, &flat, &res) == 0 && max >= min &&
               max - min < (int64_t)1 << 31;
        d.min[axis] = min;
        d.span[axis] = max - min + 1;
        d.screen[axis] = axes ? (uint32_t)d.span[axis] : 0;
    }
    uint32_t w, h, stride;
    uint64_t screen;
    if (display && display_info((uint32_t)display, &w, &h, &stride, &screen) == 0)
        d.screen[0] = w, d.screen[1] = h;
    return axes;
}

static int ready(void)
{
    if (d.state)
        return d.state == 1 ? 0 : d.state;
    if (!svc_service("input") && !svc_service("tablet"))
        return SVC_E_NOENT;
    if (!d.note)
        d.note = svc_wakeup(woken, &d.bits);
    if (!d.note)
        return SVC_E_NOMEM;                     /* (asked again next time) */
    int tablet = measure();                     /* (one without its axes is left alone) */
    int err = d.keys.ring ? 0 : open_source("input", &d.keys, d.note, d.bits);
    if (!err && tablet && !d.pointer.ring)
        err = open_source("tablet", &d.pointer, d.note, d.bits);
    if (err == SVC_E_STATE) {
        d.state = err;
        return err;
    }
    if (err)
        return err;                             /* (asked again next time: an open again is allowed) */
    d.timer = svc_timer_attach(drain) == 0;
    d.state = 1;
    return 0;
}

/* a's kept `wait`, whose thread ended, answered to nobody and dropped. */
static void drop_dead_wait(struct app *a)
{
    inputd_wait_reply(a->waiting, SVC_E_CLOSED, 0, 0, 0, 0, 0);
    a->waiting = 0;
}

/*
 * All slots are taken: free those of applications that are gone (a window
 * whose endpoint died, a process that ended: svc_client_alive; a kept
 * `wait` whose thread ended is dropped first), and else the one of the application that
 * called least recently of those that hold nothing (no window, no ring,
 * no focus, no `wait` kept, nothing queued: if it is still there, it only
 * asks again). A slot of one of them, or NULL if every application holds
 * something. The attached one is never let go: a kernel-placed
 * personality attaches from whichever of its processes came first.
 */
static struct app *reclaim(void)
{
    struct app *idle = NULL, *free = NULL;
    for (unsigned i = 0; i < APPS; i++) {
        struct app *a = &d.apps[i];
        if (a->waiting && !svc_token_alive(a->waiting))
            drop_dead_wait(a);                  /* (its waiting thread ended: the rest may live on) */
        if (a->pid && !living(a))
            ;                                   /* (its window's endpoint died: forgotten) */
        else if (a->pid && !a->ring_va && !svc_client_alive(a->pid))
            forget(a);                          /* (its process ended) */
        else if (!a->token && !a->ring_va && !a->waiting && a->head == a->tail && (int)i != d.focused &&
                 (!idle || a->active < idle->active))
            idle = a;
        if (!a->pid && !free)
            free = a;
    }
    if (!free && idle) {
        forget(idle);
        free = idle;
    }
    return free;
}

/* The caller's slot, made if it has none (and the first takes the focus); NULL if all are taken. */
static struct app *app_of(uint64_t pid)
{
    struct app *free = NULL;
    for (unsigned i = 0; i < APPS; i++) {
        if (d.apps[i].pid == pid) {
            d.apps[i].active = ++d.calls;
            return &d.apps[i];
        }
        if (!d.apps[i].pid && !free)
            free = &d.apps[i];
    }
    if (!free)
        free = reclaim();
    if (free) {
        *free = (struct app){ .pid = pid, .active = ++d.calls };
        if (d.focused < 0)
            set_focus((int)(free - d.apps));
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
    if (a->ring)
        return SVC_E_STATE;                     /* (its events go into its ring) */
    if (a->waiting && !svc_token_alive(a->waiting))
        drop_dead_wait(a);                      /* (the thread that waited ended: another may wait) */
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
    set_focus((int)(a - d.apps));
    return 0;
}

static int64_t window(struct svc_call *call, svc_handle owner, uint32_t left, uint32_t top, uint32_t width,
                      uint32_t height)
{
    if (svc_endpoint_alive(owner) != 1 || (svc_handle_rights(owner) & R_READ) || width > WIN_MAX ||
        height > WIN_MAX || left > WIN_MAX || top > WIN_MAX) {
        svc_handle_release(owner);
        return SVC_E_INVAL;
    }
    struct app *a;
    int64_t err = caller(call, &a);
    if (!err && a->ring)
        err = SVC_E_STATE;                      /* (an attached one's window is the screen) */
    if (err) {
        svc_handle_release(owner);
        return err;
    }
    int first = !a->token;
    if (a->token)
        svc_handle_release(a->token);
    a->token = owner;
    a->left = left, a->top = top, a->width = width && height ? width : 0, a->height = height;
    a->stacked = ++d.stack;
    if (first && d.focused == (int)(a - d.apps))
        tell_focus(a, 1);                       /* (it had the focus before it had a window) */
    return 0;
}

static int64_t attach(struct svc_call *call, svc_handle note, uint64_t bits, svc_handle *ring, uint64_t *size,
                      uint32_t *width, uint32_t *height)
{
    struct app *a;
    /* (an endpoint for a note is refused: kept here, it would live on) */
    int64_t err = !bits || svc_endpoint_alive(note) >= 0 ? SVC_E_INVAL : caller(call, &a);
    if (!err && (a->waiting || a->token))
        err = SVC_E_STATE;                      /* (it waits in calls, or placed a window) */
    for (unsigned i = 0; !err && i < APPS; i++)
        if (d.apps[i].ring && &d.apps[i] != a)
            err = SVC_E_BUSY;                   /* (one desktop: the first to attach) */
    svc_handle mem = err ? 0 : a->ring_mem;
    struct spsc_ring *r = err ? NULL : a->ring_mem ? a->ring_va : svc_shared_alloc(APP_RING, &mem, NULL);
    if (!err && !r)
        err = SVC_E_NOMEM;
    if (!err)
        a->ring_mem = mem, a->ring_va = r;      /* (kept for the next attach, whatever comes of this one) */
    svc_handle give = err ? 0 : svc_shared_give(mem);
    if (!err && !give)
        err = SVC_E_NOMEM;
    if (err) {
        svc_handle_release(note);
        return err;
    }
    if (a->note)
        svc_handle_release(a->note);
    a->ring = NULL;                             /* (written by nobody while it starts afresh) */
    for (unsigned i = 0; i < APP_RING / 8; i++)
        ((volatile uint64_t *)r)[i] = 0;        /* (nothing of an earlier attachment's) */
    a->ring_size = spsc_init(r, APP_RING);
    a->ring = r;
    a->note = note, a->bits = bits, a->lost = 0;
    a->head = a->tail = 0;
    a->left = a->top = 0, a->width = d.screen[0], a->height = d.screen[1], a->stacked = 0;
    *ring = give, *size = APP_RING, *width = d.screen[0], *height = d.screen[1];
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
const struct inputd_ops inputd_ops = { wait, focus, window, attach, stats };
