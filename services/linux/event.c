/*
 * Descriptors for waiting: eventfd, timerfd, signalfd and epoll.
 *
 * Each is an open file (node -1) naming an event object of this file's
 * table (`ev`). A call that must wait keeps its reply (LX_BLK_EVENT on the
 * object) and runs again when the object changes; every change calls
 * lx_wake_all, which also wakes waiting polls and epolls, as every file
 * event does (linux.c).
 *
 * - eventfd: a 64-bit counter. read takes it all (EFD_SEMAPHORE: one) and
 *   waits at zero; write adds and waits while the sum would pass
 *   0xfffffffffffffffe.
 * - timerfd: a deadline and an interval on a clock; read returns the
 *   expirations since the last read (counted when read or polled) and
 *   waits until the first. The personality's timer (signal.c) runs at
 *   the earliest armed deadline and wakes the waiters.
 * - signalfd: a set of signals. read takes pending signals of the set
 *   (the reading thread's own, then its process's), as many
 *   struct signalfd_siginfo as fit, and waits for the first; the signals
 *   stay pending until then (a program blocks them). A signal sent to a
 *   process wakes the signalfd waiters. poll says POLLIN when a signal of
 *   the set is pending for the process that made it or one of its
 *   threads (Linux asks the polling thread).
 * - epoll: a set of watched (descriptor, open file) pairs, each with its
 *   events and data. epoll_pwait asks each watched file for its poll
 *   state (lx_file_poll): level-triggered by default; EPOLLET reports a
 *   file when it has events it did not have at its last report, or any
 *   file event came since (Linux reports a file's own new wake-ups; this
 *   may report one more time than Linux, which edge-triggered programs,
 *   reading until EAGAIN, never mind); EPOLLONESHOT disables a watch once
 *   reported until EPOLL_CTL_MOD. A watch goes when its open file does
 *   (the last descriptor closed), as on Linux.
 *
 * The tables are the service's own memory, made at first use:
 * LX_EVENTS objects and LX_WATCHES watches in all (ENFILE / ENOSPC past
 * them, as Linux's limits say).
 */
#include "lx.h"

#define LX_EVENTS       64
#define LX_WATCHES      256
#define PROC_EVENTS     (LX_EVENTS / 2)         /* objects one process made and still open (EMFILE past it) */
#define PROC_WATCHES    (LX_WATCHES / 2)        /* watches one process added and still in place (ENOSPC past it) */
#define EV_MAX          0xfffffffffffffffeull
#define NS              1000000000ull

#define EFD_SEMAPHORE   1
#define EFD_CLOEXEC     02000000
#define TFD_TIMER_ABSTIME       1
#define TFD_TIMER_CANCEL_ON_SET 2
#define EPOLL_CTL_ADD   1
#define EPOLL_CTL_DEL   2
#define EPOLL_CTL_MOD   3
#define EPOLLEXCLUSIVE  (1u << 28)
#define EPOLLWAKEUP     (1u << 29)
#define EPOLLONESHOT    (1u << 30)
#define EPOLLET         (1u << 31)
#define EP_MAX_EVENTS   (0x7fffffff / 16)
#define EP_MAX_NESTS    4               /* Linux's: epoll_ctl's ELOOP past this many epolls nested in a chain */

#define SFD_CLOEXEC     02000000
#define SIGINFO_SIZE    128                     /* struct signalfd_siginfo */

enum { EV_NONE, EV_EVENTFD, EV_TIMERFD, EV_EPOLL, EV_SIGNALFD };

struct lx_event {
    int kind;
    uint64_t count;             /* eventfd: the counter; timerfd: expirations not yet read */
    int semaphore;
    int clock;                  /* timerfd: its clock */
    uint64_t next, interval;    /* timerfd: the next expiry (system counter ns; 0: disarmed) */
    int abs_calendar;           /* timerfd: set for an absolute calendar time (moves when the clock is set) */
    int might_cancel;           /* ... with TFD_TIMER_CANCEL_ON_SET */
    int canceled;               /* the clock was set since: the next read says ECANCELED */
    uint64_t sigmask;           /* signalfd: its signals (bit sig - 1) */
    int32_t owner;              /* the pid of the process that made it (its share: PROC_EVENTS) */
    uint32_t ino;               /* its inode number (lx_ino_new) */
};

struct lx_watch {
    int32_t ep;                 /* the epoll object (-1: a free slot) */
    int32_t fd;
    struct lx_file *f;          /* the watched file (no reference: its end removes the watch) ... */
    uint32_t fgen;              /* ... of this generation (a stale one is dropped, not polled) */
    uint32_t events;            /* asked for, with EPOLLET/EPOLLONESHOT */
    uint64_t data;
    uint32_t last;              /* EPOLLET: what it had at its last report... */
    uint64_t gen;               /* ... and the file events' count then (lx_io_generation) */
    int off;                    /* EPOLLONESHOT: reported, off until EPOLL_CTL_MOD */
    int32_t owner;              /* the pid of the process that added it (its share: PROC_WATCHES) */
};

static struct lx_event *events;
static struct lx_watch *watches;
static int signalfds;                           /* signalfd objects open (lx_event_signal_sent looks only then) */

static int tables(void)
{
    if (!events)
        events = svc_alloc(LX_EVENTS * sizeof(*events));
    if (!watches) {
        watches = svc_alloc(LX_WATCHES * sizeof(*watches));
        for (int i = 0; watches && i < LX_WATCHES; i++)
            watches[i].ep = -1;
    }
    return events && watches ? 0 : -LX_ENOMEM;
}

static struct lx_event *ev_of(const struct lx_file *f)
{
    return f && f->kind == LX_FILE_EVENT && f->ev >= 0 && f->ev < LX_EVENTS && events ? &events[f->ev] : NULL;
}

/* A new object of `kind` behind a new descriptor; the descriptor or a negated errno. */
static int64_t ev_new(struct lx_ctx *c, int kind, uint32_t oflags, int cloexec, struct lx_event **out)
{
    int err = tables();
    if (err)
        return err;
    int idx = -1, mine = 0;
    for (int i = 0; i < LX_EVENTS; i++) {
        if (events[i].kind == EV_NONE && idx < 0)
            idx = i;
        mine += events[i].kind != EV_NONE && events[i].owner == c->p->pid;
    }
    if (mine >= PROC_EVENTS)
        return -LX_EMFILE;                      /* one process never takes every object there is */
    if (idx < 0)
        return -LX_ENFILE;
    struct lx_file *f;
    int fd = lx_fd_open(c->p, LX_FILE_EVENT, idx, O_RDWR | oflags, cloexec, &f);
    if (fd < 0)
        return fd;                              /* (the object was not made) */
    events[idx] = (struct lx_event){ .kind = kind, .owner = c->p->pid, .ino = lx_ino_new() };
    *out = &events[idx];
    return fd;
}

void lx_events_in_use(uint32_t *objects, uint32_t *nwatches)
{
    *objects = *nwatches = 0;
    for (int i = 0; events && i < LX_EVENTS; i++)
        *objects += events[i].kind != EV_NONE;
    for (int i = 0; watches && i < LX_WATCHES; i++)
        *nwatches += watches[i].ep >= 0;
}

/* ---------------------------------------------------------------- timerfd's clock */

/* Count the expirations of timer e up to now. */
static void tick(struct lx_event *e)
{
    uint64_t now = svc_clock_ns();
    if (!e->next || now < e->next)
        return;
    uint64_t n = 1 + (e->interval ? (now - e->next) / e->interval : 0);
    e->count += n;
    e->next = e->interval ? e->next + n * e->interval : 0;
}

uint64_t lx_event_next_deadline(void)
{
    uint64_t next = 0;
    for (int i = 0; events && i < LX_EVENTS; i++)
        if (events[i].kind == EV_TIMERFD && events[i].next && (!next || events[i].next < next))
            next = events[i].next;
    return next;
}

void lx_event_timers(void)
{
    uint64_t now = svc_clock_ns();
    for (int i = 0; events && i < LX_EVENTS; i++) {
        struct lx_event *e = &events[i];
        if (e->kind == EV_TIMERFD && e->next && now >= e->next) {
            tick(e);
            lx_wake_all(LX_BLK_EVENT, i);       /* readers, polls and epolls look again */
        }
    }
}

void lx_event_clock_set(int64_t delta)
{
    for (int i = 0; events && i < LX_EVENTS; i++) {
        struct lx_event *e = &events[i];
        if (e->kind != EV_TIMERFD || (!e->abs_calendar && !e->might_cancel))
            continue;
        if (e->next && e->abs_calendar)
            e->next = delta > 0 && (uint64_t)delta >= e->next ? 1 : e->next - (uint64_t)delta;
        if (e->might_cancel) {
            e->canceled = 1;
            e->count++;                         /* readable: the read says ECANCELED */
        }
        lx_wake_all(LX_BLK_EVENT, i);
    }
}

/* ---------------------------------------------------------------- the file calls */

int lx_event_poll(struct lx_file *f);
static int64_t signalfd_read(struct lx_ctx *c, struct lx_file *f, struct lx_event *e, uint64_t buf, uint64_t len);

/* The epoll object that open file f is, or -1. */
static int32_t epoll_obj(const struct lx_file *f)
{
    if (f->kind != LX_FILE_EVENT || !events || f->ev < 0 || f->ev >= LX_EVENTS || events[f->ev].kind != EV_EPOLL)
        return -1;
    return f->ev;
}

/* Is watch w's file still the one it was made for? A watch goes with its
 * file (lx_event_file_gone), so this holds; one that did not is dropped. */
static int watch_live(struct lx_watch *w)
{
    if (w->f->kind != LX_FILE_FREE && w->f->gen == w->fgen)
        return 1;
    w->ep = -1;
    return 0;
}

/* What epoll object `ep` reports now into out[0..max) (NULL: only
 * count); how many. Reporting changes EPOLLET and EPOLLONESHOT state.
 * An epoll it watches is asked in turn, `depth` levels down: epoll_ctl
 * keeps chains to EP_MAX_NESTS + 1 epolls, and this stops there anyway. */
static int ep_scan(int ep, struct lx_watch **out, uint32_t *revents, int max, int depth)
{
    int n = 0;
    for (int i = 0; i < LX_WATCHES && n < max; i++) {
        struct lx_watch *w = &watches[i];
        if (w->ep != ep || w->off || !watch_live(w))
            continue;
        int32_t inner = epoll_obj(w->f);
        uint32_t r;
        if (inner < 0)
            r = (uint32_t)lx_file_poll(w->f);
        else
            r = depth < EP_MAX_NESTS && ep_scan(inner, NULL, NULL, 1, depth + 1) ? LX_POLLIN : 0;
        if (r & LX_POLLIN)
            r |= 0x040;                         /* EPOLLRDNORM */
        if (r & LX_POLLOUT)
            r |= 0x100;                         /* EPOLLWRNORM */
        r &= (w->events & ~(EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE | EPOLLWAKEUP)) | LX_POLLERR | LX_POLLHUP;
        uint64_t gen = lx_io_generation();
        uint32_t fresh = !(w->events & EPOLLET) || gen != w->gen ? r : r & ~w->last;
        if (w->events & EPOLLET) {
            w->last = r;
            w->gen = gen;
        }
        if (!fresh)
            continue;
        if (out) {
            out[n] = w;
            revents[n] = r;
            if (w->events & EPOLLONESHOT)
                w->off = 1;
        } else if (w->events & EPOLLET) {
            w->last &= ~fresh;                  /* only looking (poll of the epoll): not a report */
            w->gen--;
        }
        n++;
    }
    return n;
}

const char *lx_event_name(struct lx_file *f)
{
    struct lx_event *e = ev_of(f);
    return !e ? "" : e->kind == EV_EVENTFD ? "[eventfd]" : e->kind == EV_TIMERFD ? "[timerfd]" :
           e->kind == EV_SIGNALFD ? "[signalfd]" : "[eventpoll]";
}

int lx_event_name_of(const struct lx_file *f)
{
    const struct lx_event *e = ev_of(f);
    return !e ? 0 : e->kind == EV_EVENTFD ? LX_NAME_EVENTFD : e->kind == EV_TIMERFD ? LX_NAME_TIMERFD :
           e->kind == EV_SIGNALFD ? LX_NAME_SIGNALFD : LX_NAME_EPOLL;
}

uint32_t lx_event_ino(const struct lx_file *f)
{
    const struct lx_event *e = ev_of(f);
    return e ? e->ino : 0;
}

int lx_event_poll(struct lx_file *f)
{
    struct lx_event *e = ev_of(f);
    if (!e)
        return 0;
    switch (e->kind) {
    case EV_EVENTFD:
        return (e->count ? LX_POLLIN : 0) | (e->count < EV_MAX ? LX_POLLOUT : 0);
    case EV_TIMERFD:
        tick(e);
        return e->count ? LX_POLLIN : 0;
    case EV_EPOLL:
        return ep_scan(f->ev, NULL, NULL, 1, 0) ? LX_POLLIN : 0;
    case EV_SIGNALFD: {
        struct lx_proc *p = lx_proc_of_pid(e->owner);
        return p && !p->ended && (lx_sig_pending_any(p) & e->sigmask) ? LX_POLLIN : 0;
    }
    default:
        return 0;
    }
}

int64_t lx_eventfd_take(struct lx_ctx *c, struct lx_file *f, uint64_t *v)
{
    struct lx_event *e = ev_of(f);
    if (!e || e->kind != EV_EVENTFD)
        return -LX_EINVAL;
    if (!e->count)
        return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_block(c, LX_BLK_EVENT, f->ev);
    *v = e->semaphore ? 1 : e->count;
    e->count -= *v;
    lx_wake_all(LX_BLK_EVENT, f->ev);           /* room for writers */
    return 8;
}

int64_t lx_event_rw(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len, int writing)
{
    struct lx_event *e = ev_of(f);
    if (e->kind == EV_EPOLL)
        return -LX_EINVAL;                      /* an epoll descriptor is neither read nor written */
    if (e->kind == EV_SIGNALFD)
        return writing ? -LX_EINVAL : signalfd_read(c, f, e, buf, len);
    if (len < 8)
        return -LX_EINVAL;
    if (e->kind == EV_TIMERFD) {
        if (writing)
            return -LX_EINVAL;
        if (e->canceled) {                      /* the clock was set: said once */
            e->canceled = 0;
            e->count = 0;
            return -LX_ECANCELED;
        }
        tick(e);
        if (!e->count) {
            if (f->flags & O_NONBLOCK)
                return -LX_EAGAIN;
            if (!e->next)
                return lx_block(c, LX_BLK_EVENT, f->ev);       /* disarmed: until settime */
            int err = lx_timer_start();
            if (err)
                return err;
            c->t->timed = 1;                    /* woken at the expiry (lx_event_timers) */
            c->t->deadline = e->next;
            return lx_block(c, LX_BLK_EVENT, f->ev);
        }
        uint64_t n = e->count;
        if (lx_copy_out(c, buf, &n, 8))
            return -LX_EFAULT;
        e->count = 0;
        lx_wake_all(LX_BLK_EVENT, f->ev);
        return 8;
    }
    uint64_t v;
    if (!writing) {
        int64_t r = lx_eventfd_take(c, f, &v);
        if (r != 8)
            return r;
        if (lx_copy_out(c, buf, &v, 8))
            return -LX_EFAULT;                  /* (taken: as Linux, which copies after) */
    } else {
        if (lx_copy_in(c, &v, buf, 8))
            return -LX_EFAULT;
        if (v == UINT64_MAX)
            return -LX_EINVAL;
        if (v > EV_MAX - e->count)
            return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_block(c, LX_BLK_EVENT, f->ev);
        e->count += v;
    }
    lx_wake_all(LX_BLK_EVENT, f->ev);           /* the other side, and polls */
    return 8;
}

void lx_event_file_gone(struct lx_file *f)
{
    for (int i = 0; watches && i < LX_WATCHES; i++)
        if (watches[i].ep >= 0 && (watches[i].f == f || (f->ev >= 0 && watches[i].ep == f->ev)))
            watches[i].ep = -1;                 /* watches of the file, and an epoll's own */
    struct lx_event *e = ev_of(f);
    if (e) {
        lx_wake_all(LX_BLK_EVENT, f->ev);
        signalfds -= e->kind == EV_SIGNALFD;
        e->kind = EV_NONE;
    }
}

/* ---------------------------------------------------------------- signalfd */

/* read of a signalfd: a struct signalfd_siginfo for each signal of its
 * set pending for the reader, as many as fit; waits for the first. */
static int64_t signalfd_read(struct lx_ctx *c, struct lx_file *f, struct lx_event *e, uint64_t buf, uint64_t len)
{
    if (len < SIGINFO_SIZE)
        return -LX_EINVAL;
    uint64_t done = 0;
    while (len - done >= SIGINFO_SIZE) {
        struct lx_sinfo si;
        int sig = lx_sig_take_from(c->t, e->sigmask, &si);
        if (!sig)
            break;
        struct {
            uint32_t signo;
            int32_t err, code;
            uint32_t pid, uid;
            int32_t fd;
            uint32_t tid, band, overrun, trapno;
            int32_t status, value_int;
            uint64_t ptr, utime, stime, addr;
            uint16_t addr_lsb;
            uint8_t pad[46];
        } info = { 0 };
        _Static_assert(sizeof(info) == SIGINFO_SIZE, "struct signalfd_siginfo is 128 bytes");
        info.signo = (uint32_t)sig;
        info.code = si.code == LX_SI_QUEUE ? -1 : si.code == LX_SI_TIMER ? -2 : si.code;
        if (si.code == LX_SI_TIMER) {
            info.tid = (uint32_t)si.pid;        /* the timer's id, and its overruns */
            info.overrun = (uint32_t)si.status;
        } else {
            info.pid = (uint32_t)si.pid;
            info.status = si.status;
        }
        info.addr = si.addr;
        info.ptr = si.value;
        info.value_int = (int32_t)si.value;
        if (lx_copy_out(c, buf + done, &info, sizeof(info)))
            return done ? (int64_t)done : -LX_EFAULT;
        done += SIGINFO_SIZE;
    }
    if (done)
        return (int64_t)done;
    return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_block(c, LX_BLK_EVENT, f->ev);
}

void lx_event_signal_sent(void)
{
    for (int i = 0; signalfds && i < LX_EVENTS; i++)
        if (events[i].kind == EV_SIGNALFD)
            lx_wake_all(LX_BLK_EVENT, i);       /* readers, polls and epolls look again */
}

int64_t lx_sys_signalfd4(struct lx_ctx *c, int64_t fd, uint64_t umask, uint64_t size, uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    uint64_t mask;
    if (fl & ~(uint32_t)(SFD_CLOEXEC | O_NONBLOCK))
        return -LX_EINVAL;
    if (size != 8)
        return -LX_EINVAL;
    if (lx_copy_in(c, &mask, umask, sizeof(mask)))
        return -LX_EFAULT;
    mask &= ~(LX_SIGBIT(LX_SIGKILL) | LX_SIGBIT(LX_SIGSTOP));
    if ((int32_t)fd != -1) {
        struct lx_file *f = lx_fd_use(c->p, (uint64_t)(uint32_t)fd);
        if (!f)
            return -LX_EBADF;
        struct lx_event *e = ev_of(f);
        if (!e || e->kind != EV_SIGNALFD)
            return -LX_EINVAL;
        e->sigmask = mask;
        lx_wake_all(LX_BLK_EVENT, f->ev);
        return (int32_t)fd;
    }
    struct lx_event *e;
    int64_t nfd = ev_new(c, EV_SIGNALFD, fl & O_NONBLOCK, (fl & SFD_CLOEXEC) != 0, &e);
    if (nfd >= 0) {
        e->sigmask = mask;
        signalfds++;
    }
    return nfd;
}

/* ---------------------------------------------------------------- eventfd and timerfd calls */

int64_t lx_sys_eventfd2(struct lx_ctx *c, uint64_t initval, uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(EFD_SEMAPHORE | EFD_CLOEXEC | O_NONBLOCK))
        return -LX_EINVAL;
    struct lx_event *e;
    int64_t fd = ev_new(c, EV_EVENTFD, fl & O_NONBLOCK, (fl & EFD_CLOEXEC) != 0, &e);
    if (fd >= 0) {
        e->count = (uint32_t)initval;           /* an unsigned int */
        e->semaphore = (fl & EFD_SEMAPHORE) != 0;
    }
    return fd;
}

int64_t lx_sys_timerfd_create(struct lx_ctx *c, uint64_t clock, uint64_t flags)
{
    uint32_t id = (uint32_t)clock, fl = (uint32_t)flags;
    if (id != 0 && id != 1 && id != 7 && id != 8 && id != 9)
        return -LX_EINVAL;                      /* REALTIME, MONOTONIC, BOOTTIME and their ALARM forms */
    if (fl & ~(uint32_t)(EFD_CLOEXEC | O_NONBLOCK))
        return -LX_EINVAL;
    struct lx_event *e;
    int64_t fd = ev_new(c, EV_TIMERFD, fl & O_NONBLOCK, (fl & EFD_CLOEXEC) != 0, &e);
    if (fd >= 0)
        e->clock = (int)id;
    return fd;
}

/* The timer of descriptor fd, or NULL with *err (EBADF, or EINVAL for another kind). */
static struct lx_event *timer_of(struct lx_ctx *c, uint64_t fd, int64_t *err)
{
    struct lx_file *f = lx_fd_use(c->p, fd);
    struct lx_event *e = ev_of(f);
    *err = !f ? -LX_EBADF : -LX_EINVAL;
    return e && e->kind == EV_TIMERFD ? e : NULL;
}

/* struct itimerspec of e now: the interval, then the time left. */
static void timer_now(struct lx_event *e, int64_t out[4])
{
    tick(e);
    uint64_t now = svc_clock_ns(), left = e->next > now ? e->next - now : 0;
    out[0] = (int64_t)(e->interval / NS);
    out[1] = (int64_t)(e->interval % NS);
    out[2] = (int64_t)(left / NS);
    out[3] = (int64_t)(left % NS);
}

int64_t lx_sys_timerfd_settime(struct lx_ctx *c, uint64_t fd, uint64_t flags, uint64_t unew, uint64_t uold)
{
    int64_t err, v[4], old[4];
    struct lx_event *e = timer_of(c, fd, &err);
    if (!e)
        return err;
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
        return -LX_EINVAL;
    if (lx_copy_in(c, v, unew, sizeof(v)))
        return -LX_EFAULT;
    if (v[0] < 0 || v[1] < 0 || v[1] >= (int64_t)NS || v[2] < 0 || v[3] < 0 || v[3] >= (int64_t)NS)
        return -LX_EINVAL;
    uint64_t value = (uint64_t)v[2] * NS + (uint64_t)v[3];
    if (value && (err = lx_timer_start()))
        return err;
    timer_now(e, old);
    e->count = 0;
    e->canceled = 0;
    e->interval = (uint64_t)v[0] * NS + (uint64_t)v[1];
    int calendar = e->clock == 0 || e->clock == 8;     /* REALTIME, REALTIME_ALARM */
    e->abs_calendar = value && (fl & TFD_TIMER_ABSTIME) && calendar;
    e->might_cancel = calendar && (fl & TFD_TIMER_ABSTIME) && (fl & TFD_TIMER_CANCEL_ON_SET);   /* armed or not */
    if (!value) {
        e->next = 0;
    } else if (fl & TFD_TIMER_ABSTIME) {
        uint64_t base = calendar ? lx_realtime_base() : 0;
        e->next = value > base ? value - base : 1;     /* already past: expires at once */
    } else {
        e->next = svc_clock_ns() + value;
    }
    lx_timer_update();
    lx_wake_all(LX_BLK_EVENT, (int32_t)(e - events));
    if (uold && lx_copy_out(c, uold, old, sizeof(old)))
        return -LX_EFAULT;
    return 0;
}

int64_t lx_sys_timerfd_gettime(struct lx_ctx *c, uint64_t fd, uint64_t ucur)
{
    int64_t err, cur[4];
    struct lx_event *e = timer_of(c, fd, &err);
    if (!e)
        return err;
    timer_now(e, cur);
    return lx_copy_out(c, ucur, cur, sizeof(cur));
}

/* ---------------------------------------------------------------- epoll */

int64_t lx_sys_epoll_create1(struct lx_ctx *c, uint64_t flags)
{
    if ((uint32_t)flags & ~(uint32_t)EFD_CLOEXEC)
        return -LX_EINVAL;
    struct lx_event *e;
    return ev_new(c, EV_EPOLL, 0, ((uint32_t)flags & EFD_CLOEXEC) != 0, &e);
}

/* The epoll object of descriptor epfd, or -EBADF / -EINVAL. */
static int32_t epoll_of(struct lx_ctx *c, uint64_t epfd)
{
    struct lx_file *f = lx_call_file(c, epfd);
    struct lx_event *e = ev_of(f);
    if (!f)
        return -LX_EBADF;
    return e && e->kind == EV_EPOLL ? f->ev : -LX_EINVAL;
}

static struct lx_watch *watch_find(int32_t ep, int32_t fd, struct lx_file *f)
{
    for (int i = 0; i < LX_WATCHES; i++)
        if (watches[i].ep == ep && watches[i].fd == fd && watches[i].f == f)
            return &watches[i];
    return NULL;
}

/* Linux's check of an epoll inside an epoll (fs/eventpoll.c: ep_loop_check):
 * the chain below `to` (how many epolls deep it goes), never reaching
 * `into`, and the chain above `into` (how many epolls watch it, nested),
 * may together make at most EP_MAX_NESTS links with the new one. Each
 * object is visited once per check (its depth kept), and the walks stop
 * past EP_MAX_NESTS, so the recursion is at most EP_MAX_NESTS + 2 deep
 * whatever a program built. */
static uint32_t check_gen;
static uint32_t down_gen[LX_EVENTS], up_gen[LX_EVENTS];
static int down_depth[LX_EVENTS], up_depth[LX_EVENTS];

/* How deep the chain of epolls below ep goes (EP_MAX_NESTS + 1: too deep, or it reaches `into`). */
static int depth_below(int32_t ep, int32_t into, int depth)
{
    if (down_gen[ep] == check_gen)
        return down_depth[ep];
    down_gen[ep] = check_gen;
    int result = 0;
    for (int i = 0; i < LX_WATCHES && result <= EP_MAX_NESTS; i++) {
        struct lx_watch *w = &watches[i];
        int32_t to = w->ep == ep && watch_live(w) ? epoll_obj(w->f) : -1;
        if (to < 0)
            continue;
        int d = to == into || depth > EP_MAX_NESTS ? EP_MAX_NESTS + 1 : depth_below(to, into, depth + 1) + 1;
        result = d > result ? d : result;
    }
    down_depth[ep] = result;
    return result;
}

/* How long the chain of epolls that watch ep (nested) is. */
static int depth_above(int32_t ep, int depth)
{
    if (up_gen[ep] == check_gen)
        return up_depth[ep];
    up_gen[ep] = check_gen;
    int result = 0;
    for (int i = 0; i < LX_WATCHES && depth <= EP_MAX_NESTS + 1; i++) {
        struct lx_watch *w = &watches[i];
        if (w->ep < 0 || !watch_live(w) || epoll_obj(w->f) != ep)
            continue;
        int d = depth_above(w->ep, depth + 1) + 1;
        result = d > result ? d : result;
    }
    up_depth[ep] = result;
    return result;
}

/* May epoll `to` be added to epoll `into` (0), or would it close a loop or nest too deep (-ELOOP)? */
static int loop_check(int32_t into, int32_t to)
{
    check_gen++;
    int below = depth_below(to, into, 0);
    if (below > EP_MAX_NESTS)
        return -LX_ELOOP;
    return below + 1 + depth_above(into, 0) > EP_MAX_NESTS ? -LX_ELOOP : 0;
}

int64_t lx_sys_epoll_ctl(struct lx_ctx *c, uint64_t epfd, uint64_t op, uint64_t fd, uint64_t uevent)
{
    struct { uint32_t events, pad; uint64_t data; } ev = { 0, 0, 0 };
    uint32_t o = (uint32_t)op;
    if ((o == EPOLL_CTL_ADD || o == EPOLL_CTL_MOD) && lx_copy_in(c, &ev, uevent, sizeof(ev)))
        return -LX_EFAULT;
    int32_t ep = epoll_of(c, epfd);
    if (ep < 0)
        return ep == -LX_EINVAL ? -LX_EINVAL : -LX_EBADF;
    struct lx_file *f = lx_fd_use(c->p, fd);
    if (!f)
        return -LX_EBADF;                       /* (an O_PATH one too, as Linux's fdget) */
    if (f->ev == ep)
        return -LX_EINVAL;                      /* itself */
    if (f->node >= 0) {
        struct lx_node *n = lx_node(f->node);
        if (!lx_node_is_tty(n))
            return -LX_EPERM;                   /* files, directories, /dev/null...: nothing to wait for */
    }
    if ((ev.events & EPOLLEXCLUSIVE) && (o == EPOLL_CTL_MOD || (f->ev >= 0 && events[f->ev].kind == EV_EPOLL)))
        return -LX_EINVAL;
    struct lx_watch *w = watch_find(ep, (int32_t)fd, f);
    switch (o) {
    case EPOLL_CTL_ADD:
        if (w)
            return -LX_EEXIST;
        if (epoll_obj(f) >= 0 && loop_check(ep, f->ev))
            return -LX_ELOOP;
        int mine = 0;
        for (int i = 0; i < LX_WATCHES; i++) {
            if (watches[i].ep < 0 && !w)
                w = &watches[i];
            mine += watches[i].ep >= 0 && watches[i].owner == c->p->pid;
        }
        if (!w || mine >= PROC_WATCHES)
            return -LX_ENOSPC;                  /* (Linux: max_user_watches; one process never takes them all) */
        *w = (struct lx_watch){ ep, (int32_t)fd, f, f->gen, ev.events, ev.data, 0, 0, 0, c->p->pid };
        break;
    case EPOLL_CTL_MOD:
        if (!w)
            return -LX_ENOENT;
        if (w->events & EPOLLEXCLUSIVE)
            return -LX_EINVAL;
        w->events = ev.events;
        w->data = ev.data;
        w->last = 0;
        w->off = 0;
        break;
    case EPOLL_CTL_DEL:
        if (!w)
            return -LX_ENOENT;
        w->ep = -1;
        return 0;
    default:
        return -LX_EINVAL;
    }
    lx_wake_all(LX_BLK_EVENT, ep);              /* a waiter looks again */
    return 0;
}

/* epoll_pwait (uts 0: timeout in ms, -1 for ever) and epoll_pwait2 (a timespec, NULL for ever). */
int64_t lx_sys_epoll_pwait(struct lx_ctx *c, uint64_t epfd, uint64_t uevents, uint64_t maxevents, int64_t ms,
                           uint64_t uts, int two, uint64_t mask, uint64_t masksize)
{
    int32_t max = (int32_t)maxevents;
    if (max <= 0 || max > EP_MAX_EVENTS)
        return -LX_EINVAL;
    if (!lx_range_ok(uevents, (uint64_t)max * 16))
        return -LX_EFAULT;
    int32_t ep = epoll_of(c, epfd);
    if (ep < 0)
        return ep;
    int wait = 1;
    uint64_t ns = 0;
    if (two && uts) {
        int64_t err = lx_timespec_in(c, uts, &ns);
        if (err)
            return err;
        wait = ns ? 1 : 0;
    } else if (!two && (int32_t)ms >= 0) {
        ns = (uint64_t)(int32_t)ms * 1000000ull;
        wait = ms ? 1 : 0;
    }
    int timed = two ? uts != 0 : (int32_t)ms >= 0;
    if (mask && masksize != 8)
        return -LX_EINVAL;
    int64_t err = lx_sig_mask_for_call(c, mask);
    if (err)
        return err;
    struct lx_watch *got[32];
    uint32_t rev[32];
    int n = ep_scan(ep, got, rev, max < 32 ? max : 32, 0);
    if (n == 0) {
        if (!wait || (timed && (lx_deadline_passed(c, ns) || lx_timer_start())))
            return 0;
        return lx_block(c, LX_BLK_POLL, 0);     /* any file event wakes it */
    }
    for (int i = 0; i < n; i++) {
        struct { uint32_t events, pad; uint64_t data; } out = { rev[i], 0, got[i]->data };
        if (lx_copy_out(c, uevents + (uint64_t)i * 16, &out, sizeof(out)))
            return -LX_EFAULT;
    }
    return n;
}
