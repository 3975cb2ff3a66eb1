/*
 * ppoll and pselect6: which descriptors are ready, or wait until one is.
 *
 * Readiness comes from the file: a pipe's end (pipe.c: data or end of
 * file to read, PIPE_BUF bytes of room to write, a closed other side), the
 * terminal (tty.c: input to read), anything else (files, /dev/null,
 * /dev/zero) always ready. With nothing ready the call waits with its
 * reply kept (LX_BLK_POLL) and runs again whenever a pipe moves or the
 * terminal gets input, as every blocked call does here. A zero timeout
 * never waits; a positive one is a deadline kept across the call's runs
 * (signal.c), after which it returns 0. The signal mask argument holds
 * while the call runs (and for the handler of the signal that interrupts
 * it, EINTR: signal.c). On return, after a wait or not, the sets and
 * revents say what is ready (nothing after a timeout) and the timespec
 * holds the time left, as Linux's ppoll and pselect6 write them back.
 */
#include "lx.h"

#define POLLNVAL    0x020
#define POLLPRI     0x002
#define POLLRDNORM  0x040
#define POLLWRNORM  0x100

struct lx_pollfd {
    int32_t fd;
    int16_t events, revents;
};

/* Whether f's readiness can be learnt here: not an AF_INET socket's where
 * the stack cannot be called (a kernel-placed personality's register
 * entry: the full path asks it). */
int lx_file_poll_here(struct lx_file *f)
{
    return f->kind != LX_FILE_SOCK || svc_may_call() || !lx_sock_is_inet(f);
}

int lx_file_poll(struct lx_file *f)
{
    switch (f->kind) {
    case LX_FILE_EVENT:
        return lx_event_poll(f);
    case LX_FILE_SOCK:
        return lx_sock_poll(f);
    case LX_FILE_PIPE:
        return lx_pipe_poll(f);
    case LX_FILE_NODE:
        break;
    default:
        return LX_POLLERR;
    }
    struct lx_node *n = lx_node(f->node);
    if (n && (n->mode & LX_S_IFMT) != LX_S_IFCHR)
        return LX_POLLIN | LX_POLLOUT;          /* a file, a directory: always ready */
    if (lx_node_is_tty(n))
        return lx_tty_poll(f);
    if (f->binder)
        return lx_binder_poll(f);
    if (f->evdev)
        return lx_evdev_poll(f);
    if (n->dev == LX_DEV_RANDOM)
        return LX_POLLIN;                       /* Linux's random_poll once its generator is ready */
    return LX_POLLIN | LX_POLLOUT;
}

/* The file of descriptor fd for poll: none for an O_PATH one (POLLNVAL), as on Linux. */
static struct lx_file *file_of(struct lx_proc *p, int64_t fd)
{
    return fd >= 0 ? lx_fd_use(p, (uint64_t)fd) : NULL;
}

/* Read the timeout (a struct timespec, or none): -1 to wait for ever, 0 not to wait, 1 for a later time
 * (*ns from now). */
static int64_t timeout_kind(struct lx_ctx *c, uint64_t uts, uint64_t *ns)
{
    *ns = 0;
    if (!uts)
        return -1;
    int64_t err = lx_timespec_in(c, uts, ns);
    if (err)
        return err - 2;
    return *ns ? 1 : 0;
}

/* Nothing is ready: wait (for ever, or until the timeout), or return 0;
 * a call that does not wait with a signal pending that the thread's mask
 * (the call's own, while it runs) lets through is interrupted, EINTR and
 * the handler run, as Linux's select and poll answer ERESTARTNOHAND then. */
static int64_t none_ready(struct lx_ctx *c, int64_t wait, uint64_t ns)
{
    if (wait == 0 || (wait > 0 && (lx_deadline_passed(c, ns) || lx_timer_start())))
        return (c->t->pending | c->p->pending) & ~c->t->blocked ? -LX_EINTR : 0;
    return lx_block(c, LX_BLK_POLL, 0);         /* (without a timer: as if the time were up, above) */
}

/* Write back the time left of a timeout, as Linux's ppoll and pselect6 do
 * (glibc's select reports it through its timeval): the full time when the
 * call never waited, else what is left of its deadline. A timespec in
 * memory the process cannot write is no reason to lose the answer (Linux
 * ignores the fault too). */
static void time_left_out(struct lx_ctx *c, uint64_t uts, int64_t wait, uint64_t ns)
{
    if (wait <= 0)
        return;
    uint64_t now = svc_clock_ns();
    uint64_t left = !c->t->timed ? ns : c->t->deadline > now ? c->t->deadline - now : 0;
    int64_t ts[2] = { (int64_t)(left / 1000000000u), (int64_t)(left % 1000000000u) };
    lx_copy_out(c, uts, ts, sizeof(ts));
}

/* The entries of a ppoll call: on the stack for a few, else from the
 * personality's heap (up to RLIMIT_NOFILE of them, as Linux allows). */
#define POLL_STACK  64

/* Fill in fds[0..nfds)'s revents; how many have some. */
static int64_t poll_scan(struct lx_ctx *c, struct lx_pollfd *fds, uint64_t nfds)
{
    int64_t count = 0;
    for (uint64_t i = 0; i < nfds; i++) {
        fds[i].revents = 0;
        if (fds[i].fd < 0)
            continue;
        struct lx_file *f = file_of(c->p, fds[i].fd);
        if (c->fast && f && !lx_file_poll_here(f))
            return LX_SLOW;
        int r = f ? lx_file_poll(f) : POLLNVAL;
        if (r & LX_POLLIN)
            r |= POLLRDNORM;
        if (r & LX_POLLOUT)
            r |= POLLWRNORM;
        fds[i].revents = (int16_t)(r & (fds[i].events | LX_POLLERR | LX_POLLHUP | POLLNVAL));
        if (fds[i].revents)
            count++;
    }
    return count;
}

/* ppoll with its entries in fds (nfds of them). */
static int64_t ppoll_in(struct lx_ctx *c, struct lx_pollfd *fds, uint64_t ufds, uint64_t nfds, uint64_t uts,
                        uint64_t mask, uint64_t masksize)
{
    uint64_t ns;
    int64_t wait = timeout_kind(c, uts, &ns);
    if (wait < -1)
        return wait + 2;
    if (mask && masksize != 8)
        return -LX_EINVAL;
    if (c->fast && (wait != 0 || mask))
        return LX_SLOW;
    if (lx_copy_in(c, fds, ufds, nfds * sizeof(fds[0])))
        return -LX_EFAULT;
    int64_t err = lx_sig_mask_for_call(c, mask);
    if (err)
        return err;
    int64_t count = poll_scan(c, fds, nfds);
    if (count < 0)
        return count;                           /* LX_SLOW: nothing done */
    if (count == 0) {
        int64_t r = none_ready(c, wait, ns);
        if (r)
            return r;                           /* waiting */
    }
    time_left_out(c, uts, wait, ns);
    if (lx_copy_out(c, ufds, fds, nfds * sizeof(fds[0])))    /* cleared revents after a timeout too */
        return -LX_EFAULT;
    return count;
}

int64_t lx_sys_ppoll(struct lx_ctx *c, uint64_t ufds, uint64_t nfds, uint64_t uts, uint64_t mask, uint64_t masksize)
{
    struct lx_pollfd few[POLL_STACK];
    if (nfds > lx_nofile(c->p))
        return -LX_EINVAL;                      /* more entries than descriptors (Linux: RLIMIT_NOFILE) */
    if (nfds <= POLL_STACK)
        return ppoll_in(c, few, ufds, nfds, uts, mask, masksize);
    struct lx_pollfd *fds = lx_alloc(nfds * sizeof(*fds));
    if (!fds)
        return -LX_ENOMEM;
    int64_t r = ppoll_in(c, fds, ufds, nfds, uts, mask, masksize);
    lx_free(fds, nfds * sizeof(*fds));
    return r;
}

/* The six bitmaps of a pselect6 call (three in, three out) of `words`
 * words each: on the stack for up to SELECT_STACK descriptors (FD_SETSIZE,
 * what nearly every program passes), else from the personality's heap. */
#define SELECT_STACK    1024

/* Which of the descriptors below nfds in the sets in[0..3) are ready,
 * into out[0..3); how many bits were set, or -EBADF. A word of 64
 * descriptors at a time, only those asked about. */
static int64_t select_scan(struct lx_ctx *c, uint64_t nfds, uint64_t *const in[3], uint64_t *const out[3])
{
    int64_t count = 0;
    uint64_t words = (nfds + 63) / 64;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t rd = in[0][w], wr = in[1][w], ex = in[2][w], asked = rd | wr | ex;
        if (w == words - 1 && nfds % 64)
            asked &= (1ull << (nfds % 64)) - 1;  /* (bits past nfds are not looked at, as on Linux) */
        uint64_t got_rd = 0, got_wr = 0, got_ex = 0;
        for (; asked; asked &= asked - 1) {    /* each descriptor asked about, lowest first */
            uint64_t bit = asked & -asked;
            struct lx_file *f = lx_fd_file(c->p, w * 64 + (uint64_t)__builtin_ctzll(asked));
            if (!f)
                return -LX_EBADF;
            /* An O_PATH descriptor is open but has nothing to poll:
             * Linux's select gets POLLNVAL for it, which counts in all
             * three sets. No other file here has urgent data (POLLPRI: a
             * socket's out-of-band data, a pty in packet mode), so
             * exceptfds is otherwise empty. */
            if (c->fast && !lx_file_poll_here(f))
                return LX_SLOW;
            int r = (f->flags & O_PATH) ? POLLNVAL : lx_file_poll(f);
            if (r & (LX_POLLIN | LX_POLLHUP | LX_POLLERR | POLLNVAL))
                got_rd |= bit;
            if (r & (LX_POLLOUT | LX_POLLERR | POLLNVAL))
                got_wr |= bit;
            if (r & (POLLPRI | POLLNVAL))
                got_ex |= bit;
        }
        out[0][w] = got_rd & rd;
        out[1][w] = got_wr & wr;
        out[2][w] = got_ex & ex;
        count += __builtin_popcountll(out[0][w]) + __builtin_popcountll(out[1][w]) +
                 __builtin_popcountll(out[2][w]);
    }
    return count;
}

/* pselect6 with its six bitmaps at bits (zeroed, `words` words each). */
static int64_t pselect_in(struct lx_ctx *c, uint64_t nfds, const uint64_t sets[3], uint64_t uts, uint64_t usig,
                          uint64_t *bits, uint64_t words)
{
    uint64_t *const in[3] = { bits, bits + words, bits + 2 * words };
    uint64_t *const out[3] = { bits + 3 * words, bits + 4 * words, bits + 5 * words };
    uint64_t bytes = (nfds + 63) / 64 * 8;
    uint64_t ns, sig[2] = { 0, 0 };
    int64_t wait = timeout_kind(c, uts, &ns);
    if (wait < -1)
        return wait + 2;
    if (usig) {
        if (lx_copy_in(c, sig, usig, sizeof(sig)))
            return -LX_EFAULT;
        if (sig[0] && sig[1] != 8)
            return -LX_EINVAL;
    }
    if (c->fast && (wait != 0 || sig[0]))
        return LX_SLOW;
    for (int k = 0; k < 3; k++)
        if (sets[k] && lx_copy_in(c, in[k], sets[k], bytes))
            return -LX_EFAULT;
    int64_t count = select_scan(c, nfds, in, out);
    if (count < 0)
        return count;
    int64_t err = lx_sig_mask_for_call(c, sig[0]);
    if (err)
        return err;
    if (count == 0) {
        int64_t r = none_ready(c, wait, ns);
        if (r)
            return r;                           /* waiting */
    }
    time_left_out(c, uts, wait, ns);
    for (int k = 0; k < 3; k++)                 /* cleared sets after a timeout too */
        if (sets[k] && lx_copy_out(c, sets[k], out[k], bytes))
            return -LX_EFAULT;
    return count;
}

/* pselect6: three fd_sets of nfds bits (64 per word), a timespec, and {sigmask pointer, size}. */
int64_t lx_sys_pselect6(struct lx_ctx *c, uint64_t nfds, uint64_t urd, uint64_t uwr, uint64_t uex, uint64_t uts,
                        uint64_t usig)
{
    uint64_t few[6 * SELECT_STACK / 64];      /* (only the words the call uses are cleared) */
    const uint64_t sets[3] = { urd, uwr, uex };
    if ((int32_t)nfds < 0)
        return -LX_EINVAL;
    if (nfds > c->p->fdt.size)
        nfds = c->p->fdt.size;                  /* no descriptor beyond: Linux clips at the table's size */
    uint64_t words = (nfds + 63) / 64;
    if (nfds <= SELECT_STACK) {
        memset(few, 0, 6 * words * 8);
        return pselect_in(c, nfds, sets, uts, usig, few, words);
    }
    uint64_t *bits = lx_alloc(6 * words * 8);
    if (!bits)
        return -LX_ENOMEM;
    int64_t r = pselect_in(c, nfds, sets, uts, usig, bits, words);
    lx_free(bits, 6 * words * 8);
    return r;
}
