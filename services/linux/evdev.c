/*
 * /dev/input/event0 and event1: Linux's evdev interface over Petrel's
 * input services (services/input, idl/input.toml), the reader end of the
 * input path: event0 the one the personality calls "input" (a keyboard),
 * event1 the one it calls "tablet" (a pointing device), each made when
 * the system gives the personality that service.
 *
 * When the system gives the personality the input dispatcher (a service
 * it calls "inputd", services/inputd), the devices' events come through
 * it instead, so that they are the personality's only while it has the
 * focus (the desktop under the native programs' windows): at the first
 * open the personality `attach`es, and one ring carries both devices'
 * records, each tagged with its device; the tablet's position comes in
 * the screen's pixels, and event1 describes its axes so.
 *
 * Else, at a device's first open the personality becomes its service's reader:
 * it maps the ring the service fills (services/include/spsc_ring.h) and
 * gives it its wakeup, which the service signals only when the ring goes
 * from empty to non-empty. Each wakeup (and each read) drains the ring
 * through what Linux's input core does with a device's events before any
 * handler sees them (input_handle_event): a key event that does not change
 * the key's state is dropped, as are a zero relative motion and an
 * absolute value that did not change; the events of a packet are held
 * until its SYN_REPORT, and a packet with nothing in it is not passed on.
 * Each open file is a client with its own buffer of 64 events, filled and
 * read as Linux's evdev does (evdev_pass_values, evdev_read): a read
 * returns whole events of whole packets only, a buffer that overflows
 * keeps SYN_DROPPED and the newest event, EVIOCGRAB gives one client
 * every event. Events written to the file go the same way, as
 * input_inject_event's do.
 */
#include "lx.h"
#include "svc_proc.h"
#include "input_if.h"
#include "inputd_if.h"
#include "spsc_ring.h"

#define EV_SYN      0x00
#define EV_KEY      0x01
#define EV_REL      0x02
#define EV_ABS      0x03
#define EV_MSC      0x04
#define EV_SW       0x05
#define EV_LED      0x11
#define EV_SND      0x12
#define EV_REP      0x14
#define EV_FF       0x15
#define EV_MAX      0x1f
#define SYN_REPORT  0
#define SYN_DROPPED 3
#define KEY_MAX     0x2ff
#define ABS_MAX     0x3f
#define REP_DELAY   0
#define REP_PERIOD  1
#define PROPS       0x10000u

#define EVBUF       64u                 /* a client's events (EVDEV_MIN_BUFFER_SIZE) */
#define PACKET_MAX  64u                 /* events of a packet held until its SYN_REPORT */
#define EV_SIZE     24u                 /* struct input_event: a timeval, type, code, value */

/* Linux's _IOC for 'E' ioctls: number, size, direction (bit 30 read, bit 31 write). */
#define IOC_NR(r)   ((r) & 0xff)
#define IOC_TYPE(r) (((r) >> 8) & 0xff)
#define IOC_SIZE(r) (((r) >> 16) & 0x3fff)
#define IOC_DIR(r)  ((r) >> 30)
#define IOC_READ    2u
#define IOC_WRITE   1u

struct lx_input_event {
    int64_t sec, usec;
    uint16_t type, code;
    int32_t value;
};

struct evclient {
    struct evclient *next;
    struct evdev_device *dev;           /* the device it reads */
    struct lx_file *f;
    uint32_t head, tail, packet_head;
    uint32_t clock;                     /* CLOCK_REALTIME (0), _MONOTONIC (1) or _BOOTTIME (7) */
    struct lx_input_event buf[EVBUF];
};

/* A device, as its input service describes it, and its state: made at
 * its first open (most systems never open one). */
struct evdev_device {
    int state;                          /* 1: attached */
    unsigned index;                     /* N of /dev/input/eventN */
    uint32_t ep;
    struct spsc_ring *ring;
    uint32_t ring_size;
    uint64_t id, types;
    char name[128], uniq[128];
    uint32_t name_len, uniq_len;
    uint8_t bits[EV_MAX + 1][96];       /* per type: the codes it sends (Linux's keybit, relbit, ...) */
    uint8_t props[8];
    int32_t absinfo[ABS_MAX + 1][6];    /* value, min, max, fuzz, flat, resolution */
    uint8_t key[96], led[8], snd[8], sw[8];     /* the state of each */
    uint32_t rep[2];
    struct lx_input_event packet[PACKET_MAX];
    uint32_t npacket;
    uint64_t packet_time;               /* ns of the packet's first event (the system counter) */
    struct evclient *clients, *grab;
    uint32_t ring_h;                    /* the ring's handle (kept: the mapping lives while it is held) */
    int broken;                         /* the ring went wrong: the device is gone (ENODEV, POLLERR) */
    /* The input core's software autorepeat (input_start_autorepeat): a
     * key held down past REP_DELAY ms comes again as value 2, then every
     * REP_PERIOD ms, until a key is released; and a drain that left
     * events in the ring goes on at once from the timer. 0: nothing due. */
    uint64_t repeat_at, drain_at;
    uint16_t repeat_key;
};

/* The services of event0 and event1, and the devices once opened. */
#define EVDEV_DEVICES 2u
static const char *const service_of[EVDEV_DEVICES] = { "input", "tablet" };
static struct evdev_device *devs[EVDEV_DEVICES];

/* The input dispatcher's ring, when the events come through it. */
static struct {
    int state;                          /* 1: attached */
    struct spsc_ring *ring;
    uint32_t ring_size, ring_h;
    uint32_t width, height;             /* the screen: the range of the tablet's position */
    uint64_t drain_at;
} hub;

static int bit(const uint8_t *map, uint32_t n) { return (map[n / 8] >> (n % 8)) & 1; }
static void set_bit_to(uint8_t *map, uint32_t n, int v)
{
    if (v)
        map[n / 8] |= (uint8_t)(1u << (n % 8));
    else
        map[n / 8] &= (uint8_t)~(1u << (n % 8));
}

/* The largest code of each type Linux's bitmaps have (their length: evdev's bits_to_user). */
static uint32_t type_max(uint32_t type)
{
    switch (type) {
    case 0: return EV_MAX;
    case EV_KEY: return KEY_MAX;
    case EV_REL: return 0x0f;
    case EV_ABS: return ABS_MAX;
    case EV_MSC: return 0x07;
    case EV_LED: return 0x0f;
    case EV_SND: return 0x07;
    case EV_FF: return 0x7f;
    case EV_SW: return 0x10;
    default: return 0;
    }
}

/* Bytes of Linux's bitmap of codes up to max (longs of 64 bits). */
static uint32_t map_bytes(uint32_t max) { return (max + 63) / 64 * 8; }

/* ---------------------------------------------------------------- the events */

/* Into client cl's buffer, as evdev's __pass_event. */
static void pass_event(struct evclient *cl, const struct lx_input_event *e)
{
    cl->buf[cl->head++] = *e;
    cl->head &= EVBUF - 1;
    if (cl->head == cl->tail) {
        /* full: everything unread goes but SYN_DROPPED and the newest */
        cl->tail = (cl->head - 2) & (EVBUF - 1);
        cl->buf[cl->tail] = (struct lx_input_event){ e->sec, e->usec, EV_SYN, SYN_DROPPED, 0 };
        cl->packet_head = cl->tail;
    }
    if (e->type == EV_SYN && e->code == SYN_REPORT)
        cl->packet_head = cl->head;
}

/* The time of ns on the system counter in the client's clock, as a timeval. */
static void stamp(const struct evclient *cl, uint64_t ns, struct lx_input_event *e)
{
    if (cl->clock == 0)
        ns += lx_realtime_base();
    e->sec = (int64_t)(ns / 1000000000u);
    e->usec = (int64_t)(ns % 1000000000u / 1000u);
}

/* The held packet, ended by its SYN_REPORT (of value `syn`: 1 after an
 * autorepeat, as input_d->repeat_key sends it), to the grabbing client or
 * every client; its key presses start the autorepeat, its releases stop
 * it (input_pass_values). */
static void flush_packet(struct evdev_device *d, int32_t syn)
{
    if (!d->npacket)
        return;                                 /* (input core: a lone SYN_REPORT is not passed) */
    for (uint32_t i = 0; i < d->npacket; i++) {
        const struct lx_input_event *e = &d->packet[i];
        if (e->type != EV_KEY || e->value == 2 || !bit(d->bits[0], EV_REP))
            continue;
        d->repeat_at = 0;
        if (e->value && d->rep[REP_DELAY] && d->rep[REP_PERIOD]) {
            d->repeat_key = e->code;
            d->repeat_at = d->packet_time + d->rep[REP_DELAY] * 1000000ull;
            lx_timer_note(d->repeat_at);
        }
    }
    d->packet[d->npacket++] = (struct lx_input_event){ 0, 0, EV_SYN, SYN_REPORT, syn };
    for (struct evclient *cl = d->clients; cl; cl = cl->next) {
        if (d->grab && cl != d->grab)
            continue;
        for (uint32_t i = 0; i < d->npacket; i++) {
            struct lx_input_event e = d->packet[i];
            stamp(cl, d->packet_time, &e);
            pass_event(cl, &e);
        }
    }
    d->npacket = 0;
    lx_wake_all(LX_BLK_INPUT, 0);
}

/* The service's ring overflowed and events were lost: what is held goes,
 * each client is told with SYN_DROPPED (evdev_queue_syn_dropped), and the
 * keys are taken as released (a lost release would leave one down for
 * ever, and its next press filtered out). */
static void dropped(struct evdev_device *d, uint64_t ns)
{
    d->npacket = 0;
    for (uint32_t i = 0; i < sizeof(d->key); i++)
        d->key[i] = 0;
    for (struct evclient *cl = d->clients; cl; cl = cl->next) {
        struct lx_input_event e = { 0, 0, EV_SYN, SYN_DROPPED, 0 };
        stamp(cl, ns, &e);
        cl->buf[cl->head] = e;
        cl->head = (cl->head + 1) & (EVBUF - 1);
        if (cl->head == cl->tail) {
            cl->tail = (cl->head - 1) & (EVBUF - 1);
            cl->packet_head = cl->tail;
        }
    }
}

/* One event from the device (or written by a program), through Linux's
 * input core's filter (input_get_disposition). */
static void feed(struct evdev_device *d, uint64_t ns, uint16_t type, uint16_t code, int32_t value)
{
    int pass = 0;
    if (type > EV_MAX || !bit(d->bits[0], type))
        return;
    switch (type) {
    case EV_SYN:
        if (code == SYN_REPORT) {
            flush_packet(d, 0);
            return;
        }
        if (code == SYN_DROPPED) {
            dropped(d, ns);
            return;
        }
        pass = code <= 2;                       /* SYN_CONFIG, SYN_MT_REPORT */
        break;
    case EV_KEY:
        if (code <= KEY_MAX && bit(d->bits[EV_KEY], code)) {
            if (value == 2)
                pass = 1;                       /* (autorepeat bypasses the state) */
            else if (bit(d->key, code) != !!value) {
                set_bit_to(d->key, code, value);
                pass = 1;
            }
        }
        break;
    case EV_SW:
    case EV_LED: {
        uint8_t *state = type == EV_SW ? d->sw : d->led;
        if (code <= type_max(type) && bit(d->bits[type], code) && bit(state, code) != !!value) {
            set_bit_to(state, code, value);
            pass = 1;
        }
        break;
    }
    case EV_SND:
        if (code <= type_max(type) && bit(d->bits[EV_SND], code)) {
            set_bit_to(d->snd, code, value);
            pass = 1;                           /* (passed whether it changed or not) */
        }
        break;
    case EV_ABS:
        if (code <= ABS_MAX && bit(d->bits[EV_ABS], code) && d->absinfo[code][0] != value) {
            d->absinfo[code][0] = value;
            pass = 1;
        }
        break;
    case EV_REL:
        pass = code <= 0x0f && bit(d->bits[EV_REL], code) && value;
        break;
    case EV_MSC:
        pass = code <= 0x07 && bit(d->bits[EV_MSC], code);
        break;
    case EV_REP:
        if (code <= REP_PERIOD && value >= 0 && d->rep[code] != (uint32_t)value) {
            d->rep[code] = (uint32_t)value;
            pass = 1;
        }
        break;
    case EV_FF:
        pass = value >= 0;
        break;
    default:
        break;
    }
    if (!pass)
        return;
    if (!d->npacket)
        d->packet_time = ns;
    d->packet[d->npacket++] = (struct lx_input_event){ 0, 0, type, code, value };
    if (d->npacket == PACKET_MAX - 1)
        flush_packet(d, 0);                        /* (as the input core when its values fill up) */
}

/* One record of the ring, as feed takes it. */
static void feed_rec(const struct spsc_rec *r, void *to)
{
    feed(to, r->a, (uint16_t)(r->b >> 48), (uint16_t)(r->b >> 32), (int32_t)(uint32_t)r->b);
}

/* One record of the dispatcher's ring: to its device, if it was opened. */
static void feed_hub(const struct spsc_rec *r, void *unused)
{
    (void)unused;
    uint64_t n = r->b >> 56;
    if (n < EVDEV_DEVICES && devs[n] && devs[n]->state == 1)
        feed(devs[n], r->a, (uint16_t)(r->b >> 48) & 0xff, (uint16_t)(r->b >> 32), (int32_t)(uint32_t)r->b);
}

/* Take what the service (or the dispatcher) has put in the ring, until it
 * is empty after the barrier spsc_idle makes (else the service, not
 * seeing it empty, would not signal the next record), or a ring's worth
 * (a service that never stops writing does not hold the personality
 * here): then the rest from the timer. */
static void drain(struct evdev_device *d)
{
    if (hub.state == 1) {
        int more = hub.ring ? spsc_drain(hub.ring, hub.ring_size, hub.ring_size, feed_hub, NULL) : 0;
        if (more < 0) {
            hub.ring = NULL;                    /* (a ring gone wrong: read no more of it) */
            for (unsigned n = 0; n < EVDEV_DEVICES; n++)
                if (devs[n])
                    devs[n]->broken = 1;
            lx_wake_all(LX_BLK_INPUT, 0);
        }
        if (more > 0) {
            hub.drain_at = svc_clock_ns();
            lx_timer_note(hub.drain_at);
        }
        return;
    }
    int more = d->ring ? spsc_drain(d->ring, d->ring_size, d->ring_size, feed_rec, d) : 0;
    if (more < 0) {
        d->ring = NULL;
        d->broken = 1;
        lx_wake_all(LX_BLK_INPUT, 0);
    }
    if (more > 0) {
        d->drain_at = svc_clock_ns();
        lx_timer_note(d->drain_at);
    }
}

uint64_t lx_evdev_due(void)
{
    uint64_t due = hub.drain_at;
    for (unsigned n = 0; n < EVDEV_DEVICES; n++) {
        const struct evdev_device *d = devs[n];
        for (unsigned k = 0; d && k < 2; k++) {
            uint64_t at = k ? d->drain_at : d->repeat_at;
            if (at && (!due || at < due))
                due = at;
        }
    }
    return due;
}

void lx_evdev_timer(uint64_t now)
{
    if (hub.drain_at && now >= hub.drain_at) {
        hub.drain_at = 0;
        drain(NULL);
    }
    for (unsigned n = 0; n < EVDEV_DEVICES; n++) {
        struct evdev_device *d = devs[n];
        if (!d)
            continue;
        if (d->drain_at && now >= d->drain_at) {
            d->drain_at = 0;
            drain(d);
        }
        if (d->repeat_at && now >= d->repeat_at) {
            d->repeat_at = 0;
            if (bit(d->key, d->repeat_key) && bit(d->bits[EV_KEY], d->repeat_key)) {  /* (input_repeat_key) */
                flush_packet(d, 0);             /* (what was held goes first) */
                feed(d, now, EV_KEY, d->repeat_key, 2);
                flush_packet(d, 1);
                d->repeat_at = now + d->rep[REP_PERIOD] * 1000000ull;
                lx_timer_note(d->repeat_at);
            }
        }
    }
}

/* The wakeup ran (lx_wakeup): a ring may hold events. */
void lx_evdev_changed(void)
{
    if (hub.state == 1)
        drain(NULL);
    for (unsigned n = 0; hub.state != 1 && n < EVDEV_DEVICES; n++)
        if (devs[n])
            drain(devs[n]);
}

/* Take events from the dispatcher (once, for every device): 0 or the error. */
static int64_t attach_hub(svc_handle inputd)
{
    if (hub.state == 1)
        return 0;
    uint64_t note_bits, size = 0;
    svc_handle note = lx_wakeup(&note_bits);
    uint32_t ring_h = 0, w = 0, h = 0;
    if (!note || inputd_attach((uint32_t)inputd, (uint32_t)note, note_bits, &ring_h, &size, &w, &h) != 0)
        return -LX_ENOMEM;
    struct spsc_ring *r = svc_shared_map(ring_h, size);
    uint32_t slots = r ? spsc_attach(r, size) : 0;
    if (!slots) {
        svc_handle_release(ring_h);
        return -LX_ENODEV;
    }
    hub.ring = r, hub.ring_size = slots, hub.ring_h = ring_h, hub.width = w, hub.height = h;
    hub.state = 1;
    return 0;
}

/* ---------------------------------------------------------------- the device */

int lx_evdev_present(unsigned n)
{
    return n < EVDEV_DEVICES && svc_service(service_of[n]) != 0;
}

/* Become device n's service's reader and learn the device: it, or NULL
 * and *err (ENODEV when the system has no such service or the machine no
 * device). */
static struct evdev_device *attach(unsigned n, int64_t *err)
{
    *err = -LX_ENOMEM;
    if (!devs[n] && !(devs[n] = lx_alloc(sizeof(*devs[n]))))
        return NULL;
    struct evdev_device *d = devs[n];
    d->index = n;
    if (d->state == 1)
        return d;
    *err = -LX_ENODEV;
    svc_handle ep = svc_service(service_of[n]);
    if (!ep)
        return NULL;
    uint64_t id, types, count;
    if (input_info((uint32_t)ep, &id, &types) != 0)
        return NULL;
    d->ep = (uint32_t)ep;
    d->id = id;
    types |= 1u << EV_SYN;
    uint8_t buf[128];
    for (uint32_t t = 1; t <= EV_MAX; t++) {
        if (!((types >> t) & 1) || input_bits(d->ep, t, buf, sizeof(buf), &count) != 0)
            continue;
        for (uint32_t i = 0; i < count && i < sizeof(d->bits[t]) && i < sizeof(buf); i++)
            d->bits[t][i] = buf[i];
    }
    for (uint32_t i = 0; i < 4; i++)
        d->bits[0][i] = (uint8_t)(types >> (8 * i));
    set_bit_to(d->bits[EV_KEY], 0, 0);         /* (KEY_RESERVED is never reported) */
    for (uint32_t t = 1; t <= EV_MAX; t++)
        if (!bit(d->bits[0], t))
            for (uint32_t i = 0; i < sizeof(d->bits[t]); i++)
                d->bits[t][i] = 0;             /* (input_cleanse_bitmasks) */
    if (input_bits(d->ep, PROPS, buf, sizeof(d->props), &count) == 0)
        for (uint32_t i = 0; i < count && i < sizeof(d->props); i++)
            d->props[i] = buf[i];
    if (input_name(d->ep, 1, d->name, sizeof(d->name) - 1, &count) == 0)
        d->name_len = count < sizeof(d->name) - 1 ? (uint32_t)count : sizeof(d->name) - 1;
    if (input_name(d->ep, 2, d->uniq, sizeof(d->uniq) - 1, &count) == 0)
        d->uniq_len = count < sizeof(d->uniq) - 1 ? (uint32_t)count : sizeof(d->uniq) - 1;
    for (uint32_t a = 0; a <= ABS_MAX; a++) {
        int64_t mn, mx;
        uint32_t fuzz, flat, res;
        if (bit(d->bits[EV_ABS], a) && input_abs(d->ep, a, &mn, &mx, &fuzz, &flat, &res) == 0) {
            d->absinfo[a][1] = (int32_t)mn, d->absinfo[a][2] = (int32_t)mx;
            d->absinfo[a][3] = (int32_t)fuzz, d->absinfo[a][4] = (int32_t)flat, d->absinfo[a][5] = (int32_t)res;
        }
    }
    if (bit(d->bits[0], EV_REP))
        d->rep[REP_DELAY] = 250, d->rep[REP_PERIOD] = 33;     /* (input_register_device's defaults) */
    svc_handle inputd = svc_service("inputd");
    if (inputd) {
        *err = attach_hub(inputd);
        if (*err)
            return NULL;
        for (uint32_t a = 0; a < 2 && hub.width && hub.height && bit(d->bits[EV_ABS], a); a++) {
            uint32_t size = a ? hub.height : hub.width;     /* (the position in the screen's pixels) */
            d->absinfo[a][0] = 0, d->absinfo[a][1] = 0, d->absinfo[a][2] = (int32_t)size - 1;
            d->absinfo[a][3] = d->absinfo[a][4] = d->absinfo[a][5] = 0;
        }
        d->state = 1;
        return d;
    }
    uint64_t note_bits;
    svc_handle note = lx_wakeup(&note_bits);
    uint32_t ring_h = 0;
    uint64_t size = 0;
    *err = -LX_ENOMEM;
    if (!note || input_open(d->ep, (uint32_t)note, note_bits, &ring_h, &size) != 0)
        return NULL;
    struct spsc_ring *r = svc_shared_map(ring_h, size);
    uint32_t slots = r ? spsc_attach(r, size) : 0;
    if (!slots) {
        svc_handle_release(ring_h);
        *err = -LX_ENODEV;
        return NULL;
    }
    d->ring = r;
    d->ring_size = slots;
    d->ring_h = ring_h;
    d->state = 1;
    return d;
}

int64_t lx_evdev_open(struct lx_ctx *c, int32_t node, unsigned n, uint32_t flags, int cloexec)
{
    int64_t err;
    struct evdev_device *d = n < EVDEV_DEVICES ? attach(n, &err) : NULL;
    if (!d)
        return n < EVDEV_DEVICES ? err : -LX_ENODEV;
    struct evclient *cl = lx_alloc(sizeof(*cl));
    if (!cl)
        return -LX_ENOMEM;
    *cl = (struct evclient){ .next = d->clients, .dev = d };
    struct lx_file *f;
    int fd = lx_fd_open(c->p, LX_FILE_NODE, node, flags, cloexec, &f);
    if (fd < 0) {
        lx_free(cl, sizeof(*cl));
        return fd;
    }
    drain(d);                                   /* (what came before the open is not this client's) */
    cl->f = f;
    d->clients = cl;
    f->evdev = cl;
    return fd;
}

void lx_evdev_file_gone(struct lx_file *f)
{
    struct evclient *cl = f->evdev;
    if (!cl)
        return;
    struct evdev_device *d = cl->dev;
    f->evdev = NULL;
    for (struct evclient **p = &d->clients; *p; p = &(*p)->next)
        if (*p == cl) {
            *p = cl->next;
            break;
        }
    if (d->grab == cl)
        d->grab = NULL;
    lx_free(cl, sizeof(*cl));
}

int lx_evdev_poll(struct lx_file *f)
{
    struct evclient *cl = f->evdev;
    if (!cl || cl->dev->broken)
        return LX_POLLERR | LX_POLLHUP;
    drain(cl->dev);
    return LX_POLLOUT | (cl->packet_head != cl->tail ? LX_POLLIN : 0);
}

int64_t lx_evdev_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    struct evclient *cl = f->evdev;
    if (!cl)
        return -LX_EBADF;
    struct evdev_device *d = cl->dev;
    if (len != 0 && len < EV_SIZE)
        return -LX_EINVAL;
    drain(d);
    if (d->broken)
        return -LX_ENODEV;                      /* (as a device that went away) */
    if (cl->packet_head == cl->tail && (f->flags & O_NONBLOCK))
        return -LX_EAGAIN;
    if (len == 0)
        return 0;
    uint64_t done = 0;
    while (done + EV_SIZE <= len && cl->packet_head != cl->tail) {
        if (lx_copy_out(c, buf + done, &cl->buf[cl->tail], EV_SIZE))
            return done ? (int64_t)done : -LX_EFAULT;
        cl->tail = (cl->tail + 1) & (EVBUF - 1);
        done += EV_SIZE;
    }
    return done ? (int64_t)done : lx_block(c, LX_BLK_INPUT, 0);
}

int64_t lx_evdev_write(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    if (!f->evdev)
        return -LX_EBADF;
    struct evdev_device *d = f->evdev->dev;
    if (len != 0 && len < EV_SIZE)
        return -LX_EINVAL;
    uint64_t done = 0;
    while (done + EV_SIZE <= len) {
        struct lx_input_event e;
        if (lx_copy_in(c, &e, buf + done, EV_SIZE))
            return done ? (int64_t)done : -LX_EFAULT;
        done += EV_SIZE;
        feed(d, svc_clock_ns(), e.type, e.code, e.value);     /* (one input handle for all: a grab does not stop it) */
    }
    return (int64_t)done;
}

/* A string to the caller as evdev's str_to_user: with its zero, at most
 * `size` bytes; the bytes copied, ENOENT if there is none. */
static int64_t give_string(struct lx_ctx *c, uint64_t arg, uint32_t size, const char *s, uint32_t len)
{
    uint32_t n = len + 1 < size ? len + 1 : size;
    char tmp[130];
    memcpy(tmp, s, len);
    tmp[len] = 0;
    return lx_copy_out(c, arg, tmp, n) ? -LX_EFAULT : (int64_t)n;
}

/* Events of `type` leave client cl's buffer, and with them a SYN_REPORT
 * that would end an empty packet (but one at the front); what is left
 * closes up. Linux's evdev does this before it answers the state of a
 * type (EVIOCGKEY, ...): an event the state shows is not read again. */
static void flush_type(struct evclient *cl, uint16_t type)
{
    uint32_t to = cl->tail, in_packet = 1;
    cl->packet_head = cl->tail;
    for (uint32_t at = cl->tail; at != cl->head; at = (at + 1) & (EVBUF - 1)) {
        struct lx_input_event e = cl->buf[at];
        int report = e.type == EV_SYN && e.code == SYN_REPORT;
        if (e.type == type || (report && !in_packet))
            continue;
        cl->buf[to] = e;
        to = (to + 1) & (EVBUF - 1);
        in_packet++;
        if (report) {
            in_packet = 0;
            cl->packet_head = to;
        }
    }
    cl->head = to;
}

/* A bitmap to the caller as evdev's bits_to_user: Linux's whole length, at most `size`. */
static int64_t give_bits(struct lx_ctx *c, uint64_t arg, uint32_t size, const uint8_t *map, uint32_t max)
{
    uint32_t n = map_bytes(max);
    if (n > size)
        n = size;
    return lx_copy_out(c, arg, map, n) ? -LX_EFAULT : (int64_t)n;
}

int64_t lx_evdev_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    struct evclient *cl = f->evdev;
    uint32_t r = (uint32_t)req, nr = IOC_NR(r), size = IOC_SIZE(r), dir = IOC_DIR(r);
    if (!cl)
        return -LX_EBADF;
    struct evdev_device *d = cl->dev;
    if (IOC_TYPE(r) != 'E')
        return -LX_EINVAL;
    drain(d);
    switch (r) {
    case 0x80044501: {                          /* EVIOCGVERSION */
        int32_t v = 0x010001;
        return lx_copy_out(c, arg, &v, 4) ? -LX_EFAULT : 0;
    }
    case 0x80084502: {                          /* EVIOCGID: bustype, vendor, product, version */
        uint16_t v[4] = { (uint16_t)(d->id >> 48), (uint16_t)(d->id >> 32), (uint16_t)(d->id >> 16),
                          (uint16_t)d->id };
        return lx_copy_out(c, arg, v, 8) ? -LX_EFAULT : 0;
    }
    case 0x80084503:                            /* EVIOCGREP */
        if (!bit(d->bits[0], EV_REP))
            return -LX_ENOSYS;
        return lx_copy_out(c, arg, d->rep, 8) ? -LX_EFAULT : 0;
    case 0x40084503: {                          /* EVIOCSREP: as events, as input_inject_event */
        uint32_t v[2];
        if (!bit(d->bits[0], EV_REP))
            return -LX_ENOSYS;
        if (lx_copy_in(c, v, arg, 8))
            return -LX_EFAULT;
        uint64_t now = svc_clock_ns();
        feed(d, now, EV_REP, REP_DELAY, (int32_t)v[0]);
        feed(d, now, EV_REP, REP_PERIOD, (int32_t)v[1]);
        return 0;
    }
    case 0x40044590: {                          /* EVIOCGRAB */
        if (arg) {
            if (d->grab)
                return -LX_EBUSY;
            d->grab = cl;
            return 0;
        }
        if (d->grab != cl)
            return -LX_EINVAL;
        d->grab = NULL;
        return 0;
    }
    case 0x400445a0: {                          /* EVIOCSCLOCKID */
        int32_t id;
        if (lx_copy_in(c, &id, arg, 4))
            return -LX_EFAULT;
        if (id != 0 && id != 1 && id != 7)
            return -LX_EINVAL;
        if (cl->clock != (uint32_t)id && cl->head != cl->tail) {
            /* (evdev_set_clk_type: what is unread goes, SYN_DROPPED says so) */
            cl->clock = (uint32_t)id;
            cl->packet_head = cl->head = cl->tail;
            struct lx_input_event e = { 0, 0, EV_SYN, SYN_DROPPED, 0 };
            stamp(cl, svc_clock_ns(), &e);
            cl->buf[cl->head] = e;
            cl->head = (cl->head + 1) & (EVBUF - 1);
        }
        cl->clock = (uint32_t)id;
        return 0;
    }
    default:
        break;
    }
    if (dir != IOC_READ)
        return -LX_EINVAL;
    if (nr == 0x06)                             /* EVIOCGNAME(len) */
        return give_string(c, arg, size, d->name, d->name_len);
    if (nr == 0x07) {                           /* EVIOCGPHYS(len): virtio_input's */
        char phys[16] = "virtioN/input0";
        phys[6] = (char)('0' + d->index);
        return give_string(c, arg, size, phys, 14);
    }
    if (nr == 0x08)                             /* EVIOCGUNIQ(len): the serial, "" without one */
        return give_string(c, arg, size, d->uniq, d->uniq_len);
    if (nr == 0x09)                             /* EVIOCGPROP(len) */
        return give_bits(c, arg, size, d->props, 0x1f);
    if (nr >= 0x18 && nr <= 0x1b) {             /* EVIOCGKEY, EVIOCGLED, EVIOCGSND, EVIOCGSW (len) */
        static const uint16_t types[] = { EV_KEY, EV_LED, EV_SND, EV_SW };
        static const uint32_t maxes[] = { KEY_MAX, 0x0f, 0x07, 0x10 };
        uint8_t *states[] = { d->key, d->led, d->snd, d->sw }, copy[96];
        memcpy(copy, states[nr - 0x18], map_bytes(maxes[nr - 0x18]));    /* (the state, then the flush) */
        flush_type(cl, types[nr - 0x18]);
        return give_bits(c, arg, size, copy, maxes[nr - 0x18]);
    }
    if (nr >= 0x20 && nr < 0x20 + EV_MAX + 1) {  /* EVIOCGBIT(type, len) */
        uint32_t type = nr - 0x20;
        if (type != 0 && !type_max(type))
            return -LX_EINVAL;
        return give_bits(c, arg, size, d->bits[type], type_max(type));
    }
    if (nr >= 0x40 && nr <= 0x40 + ABS_MAX) {   /* EVIOCGABS(axis) */
        uint32_t a = nr - 0x40;
        if (!bit(d->bits[0], EV_ABS))
            return -LX_EINVAL;                  /* (a device with axes answers for every one) */
        uint32_t n = size < 24 ? size : 24;
        return lx_copy_out(c, arg, d->absinfo[a], n) ? -LX_EFAULT : 0;
    }
    return -LX_EINVAL;
}
