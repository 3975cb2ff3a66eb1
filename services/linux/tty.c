/*
 * The console as a Linux terminal: the line discipline behind /dev/console
 * and /dev/tty.
 *
 * When the system grants the personality the serial UART (devices =
 * ["arm,pl011"] in its system description), typed characters arrive by the
 * UART's receive interrupt and go through Linux's line discipline, with
 * Linux's termios: input translation (ICRNL, INLCR, IGNCR, ISTRIP), echo
 * (ECHO, ECHOE, ECHOK, ECHONL, ECHOCTL), canonical lines with erase, word
 * erase and kill (ICANON), end of file (VEOF), raw reads by VMIN and VTIME, and the
 * signal characters (ISIG: VINTR, VQUIT, VSUSP) sent to the terminal's
 * foreground process group. Output goes to the system console, which
 * always turns "\n" into "\r\n" (OPOST and ONLCR in effect whatever the
 * flags say).
 *
 * The terminal is the controlling terminal of one session: the session of
 * the programs native code starts (0) until a session leader without one
 * takes it (TIOCSCTTY) or it is let go (TIOCNOTTY). Its foreground process
 * group starts as group 0 and moves by TIOCSPGRP (tcsetpgrp), as a shell
 * with job control does. A process of another group of the session that
 * reads it gets SIGTTIN for its group, and one that changes its settings
 * (or writes, with TOSTOP) SIGTTOU, and the call waits until the group is
 * continued in the foreground; EIO instead (SIGTTIN) or nothing (SIGTTOU)
 * when the caller ignores or blocks the signal, EIO for an orphaned group:
 * Linux's job control.
 *
 * Without the UART (systems that grant it nothing, as the tests' oracle
 * systems) a read of the console is at end of file at once, as before, and
 * the console is nobody's controlling terminal.
 *
 * The input queue has TTY_BUF bytes. When it is full the UART's receive
 * FIFO is left alone and its interrupt masked until a reader makes room:
 * the sender (QEMU's serial backend) waits instead of losing characters.
 */
#include "lx.h"

#define UART_DR     0x00
#define UART_FR     0x18
#define UART_IMSC   0x38
#define UART_ICR    0x44
#define FR_RXFE     (1u << 4)
#define IM_RX       (1u << 4)
#define IM_RT       (1u << 6)

/* termios flags (Linux, asm-generic). */
#define ISTRIP      0000040
#define INLCR       0000100
#define IGNCR       0000200
#define ICRNL       0000400
#define ISIG        0000001
#define ICANON      0000002
#define TOSTOP      0000400
#define ECHO        0000010
#define ECHOE       0000020
#define ECHOK       0000040
#define ECHONL      0000100
#define NOFLSH      0000200
#define ECHOCTL     0001000
#define ECHOKE      0004000
#define IEXTEN      0100000
enum { VINTR, VQUIT, VERASE, VKILL, VEOF, VTIME, VMIN, VSWTC, VSTART, VSTOP, VSUSP, VEOL, VREPRINT, VDISCARD,
       VWERASE, VLNEXT, VEOL2, NCCS = 19 };

/* ioctl requests. */
#define TCGETS      0x5401
#define TCSETS      0x5402
#define TCSETSW     0x5403
#define TCSETSF     0x5404
#define TCSBRK      0x5409
#define TCXONC      0x540a
#define TCFLSH      0x540b
#define TIOCSCTTY   0x540e
#define TIOCGPGRP   0x540f
#define TIOCSPGRP   0x5410
#define TIOCOUTQ    0x5411
#define TIOCGWINSZ  0x5413
#define TIOCSWINSZ  0x5414
#define FIONREAD    0x541b
#define TIOCNOTTY   0x5422
#define TIOCGSID    0x5429
#define TCSBRKP     0x5425

enum { SIGINT = 2, SIGQUIT = 3, SIGTSTP = 20 };

#define TTY_BUF     4096        /* the input queue (Linux's N_TTY_BUF_SIZE) */
#define NO_SESSION  (-1)

/* The kernel's struct termios (TCGETS/TCSETS: 36 bytes). */
struct lx_termios {
    uint32_t iflag, oflag, cflag, lflag;
    uint8_t line, cc[NCCS];
};
_Static_assert(sizeof(struct lx_termios) == 36, "struct termios is 36 bytes on arm64");

static const struct lx_termios cooked = {
    ICRNL | 0x2000 /* IXON */, 0x5 /* OPOST | ONLCR */, 0x4bf /* B38400 | CS8 | CREAD | HUPCL */,
    ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN, 0,
    { 3, 0x1c, 0x7f, 0x15, 4, 0, 1, 0, 0x11, 0x13, 0x1a, 0, 0x12, 0xf, 0x17, 0x16, 0, 0, 0 },
};

static struct {
    volatile uint32_t *uart;    /* NULL: no input (reads are at end of file) */
    uint32_t irq;
    struct lx_termios t;
    uint16_t winsize[4];
    int sid;                    /* the session it is the controlling terminal of, or NO_SESSION */
    int pgrp;                   /* its foreground process group */
    /* Input: [0, ready) may be read; [ready, count) is the line being
     * edited (canonical mode). A VEOF character is kept in the queue:
     * in canonical mode it ends a line without being read (alone, it
     * reads as end of file); a switch to raw mode makes it a byte. */
    uint8_t buf[TTY_BUF];
    uint32_t count, ready;
    uint64_t last_input;        /* when input last became readable (svc_clock_ns): VTIME's inter-byte timer */
    int stalled;                /* the queue was full: the receive interrupt is masked */
} tty = { .sid = NO_SESSION };

static inline volatile uint32_t *reg(unsigned off) { return tty.uart + off / 4; }

static void out(const void *s, uint64_t n) { svc_console_write(s, n); }

/* Echo one input character as the flags say: a control character other
 * than tab and newline as ^X under ECHOCTL. */
static void echo_char(uint8_t c)
{
    if (!(tty.t.lflag & ECHO))
        return;
    if ((tty.t.lflag & ECHOCTL) && (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n') {
        char s[2] = { '^', (char)(c == 0x7f ? '?' : c + '@') };
        out(s, 2);
        return;
    }
    out(&c, 1);
}

/* Erase the last character of the line being edited (a control character echoed as ^X takes two columns). */
static int erase_one(void)
{
    if (tty.count == tty.ready)
        return 0;
    uint8_t c = tty.buf[--tty.count];
    if ((tty.t.lflag & ECHO) && (tty.t.lflag & ECHOE)) {
        int wide = (tty.t.lflag & ECHOCTL) && (c < 0x20 || c == 0x7f) && c != '\t';
        out(wide ? "\b\b  \b\b" : "\b \b", wide ? 6 : 3);
    }
    return 1;
}

static void wake_readers(void)
{
    lx_wake_all(LX_BLK_TTY, 0);
}

/* Make everything typed so far readable (a completed line, or raw input). */
static void publish(void)
{
    tty.ready = tty.count;
    tty.last_input = svc_clock_ns();
    wake_readers();
}

/* Throw the input away (a signal character, TCFLSH). */
static void flush_input(void)
{
    tty.count = tty.ready = 0;
}

/* One typed character through the line discipline; 0 if the queue had no room for it (it stays in the FIFO). */
static int input(uint8_t c)
{
    const struct lx_termios *t = &tty.t;
    if (t->iflag & ISTRIP)
        c &= 0x7f;
    if (c == '\r') {
        if (t->iflag & IGNCR)
            return 1;
        if (t->iflag & ICRNL)
            c = '\n';
    } else if (c == '\n' && (t->iflag & INLCR)) {
        c = '\r';
    }
    if ((t->lflag & ISIG) && c && (c == t->cc[VINTR] || c == t->cc[VQUIT] || c == t->cc[VSUSP])) {
        int sig = c == t->cc[VINTR] ? SIGINT : c == t->cc[VQUIT] ? SIGQUIT : SIGTSTP;
        if (!(t->lflag & NOFLSH))
            flush_input();
        echo_char(c);
        if (t->lflag & ECHO)
            out("\n", 1);
        if (tty.sid != NO_SESSION)
            lx_signal_group(tty.pgrp, sig);
        return 1;
    }
    if (!(t->lflag & ICANON)) {
        if (tty.count == TTY_BUF)
            return 0;
        tty.buf[tty.count++] = c;
        echo_char(c);
        publish();
        return 1;
    }
    if (c && (c == t->cc[VERASE] || c == 0x08 || c == 0x7f)) {
        erase_one();
        return 1;
    }
    if (c && c == t->cc[VKILL]) {
        if ((t->lflag & ECHOKE) || !(t->lflag & ECHO)) {
            while (erase_one())
                ;
        } else {
            tty.count = tty.ready;
            echo_char(c);
            if (t->lflag & ECHOK)
                out("\n", 1);
        }
        return 1;
    }
    if (c && c == t->cc[VWERASE] && (t->lflag & IEXTEN)) {
        while (tty.count > tty.ready && tty.buf[tty.count - 1] == ' ')
            erase_one();
        while (tty.count > tty.ready && tty.buf[tty.count - 1] != ' ')
            erase_one();
        return 1;
    }
    int ends = c == '\n' || (c && (c == t->cc[VEOL] || c == t->cc[VEOL2] || c == t->cc[VEOF]));
    /* Room is kept for the line's end: a full line takes only that. */
    if (tty.count >= TTY_BUF - 1 && !(ends && tty.count < TTY_BUF))
        return ends ? 0 : 1;
    tty.buf[tty.count++] = c;
    if (c == '\n' && !(t->lflag & ECHO) && (t->lflag & ECHONL))
        out("\n", 1);
    else if (c != t->cc[VEOF])                  /* VEOF is not echoed */
        echo_char(c);
    if (ends)
        publish();
    return 1;
}

/* The receive interrupt: the FIFO through the line discipline while the queue has room. */
static void received(void)
{
    *reg(UART_ICR) = IM_RX | IM_RT;
    while (!(*reg(UART_FR) & FR_RXFE)) {
        uint8_t c = (uint8_t)(*reg(UART_DR) & 0xff);
        if (!input(c)) {
            /* No room: the character is lost only if the FIFO had it
             * already; mask the interrupt until a reader drains. */
            tty.stalled = 1;
            *reg(UART_IMSC) &= ~(IM_RX | IM_RT);
            break;
        }
    }
    svc_irq_done(tty.irq);
}

void lx_tty_init(void)
{
    tty.t = cooked;
    uint32_t irq;
    volatile uint32_t *u = svc_device("arm,pl011", &irq);
    if (!u)
        return;
    tty.uart = u;
    tty.irq = irq;
    if (svc_irq_attach(irq, received) != 0) {
        tty.uart = NULL;
        lx_log("the console's input interrupt is taken: console reads are at end of file");
        return;
    }
    tty.sid = 0;                /* the session of what native programs start */
    tty.pgrp = 0;
    *reg(UART_IMSC) |= IM_RX | IM_RT;
}

int lx_tty_is_ctty(const struct lx_proc *p)
{
    return tty.sid != NO_SESSION && p->sid == tty.sid;
}

/* Does byte c end a line in canonical mode? */
static int line_end(uint8_t c)
{
    return c == '\n' || (c && (c == tty.t.cc[VEOL] || c == tty.t.cc[VEOL2] || c == tty.t.cc[VEOF]));
}

/* How many bytes a read may have now: in canonical mode the first line,
 * without the VEOF that ends it (*eof then set). */
static uint32_t readable(int *eof)
{
    *eof = 0;
    if (!(tty.t.lflag & ICANON))
        return tty.ready;
    for (uint32_t i = 0; i < tty.ready; i++) {
        if (line_end(tty.buf[i])) {
            *eof = tty.buf[i] == tty.t.cc[VEOF];
            return *eof ? i : i + 1;
        }
    }
    return tty.ready;
}

uint64_t lx_tty_avail(void)
{
    int eof;
    return readable(&eof);
}

int lx_tty_poll(void)
{
    int in = !tty.uart || tty.ready;            /* no input at all: end of file, readable */
    return (in ? LX_POLLIN : 0) | LX_POLLOUT;
}

/* Take `n` bytes off the front of the queue. */
static void consume(uint32_t n)
{
    memmove(tty.buf, tty.buf + n, tty.count - n);
    tty.count -= n;
    tty.ready -= n;
    if (tty.stalled && tty.uart) {
        tty.stalled = 0;
        *reg(UART_IMSC) |= IM_RX | IM_RT;   /* the FIFO's characters raise it again */
    }
}

/* Is group pgrp of session sid orphaned: no member has a parent in
 * another group of the same session (so nobody will continue it)? */
static int orphaned(int pgrp, int sid)
{
    struct lx_proc *procs = lx_procs();
    for (int i = 0; i < LX_PROCS; i++) {
        struct lx_proc *q = &procs[i];
        if (!q->used || q->ended || q->pgid != pgrp)
            continue;
        struct lx_proc *parent = q->ppid ? lx_proc_of_pid(q->ppid) : NULL;
        if (parent && parent->pgid != pgrp && parent->sid == sid)
            return 0;
    }
    return 1;
}

/* Job control (Linux's tty_check_change): a process of a background
 * group of the terminal's session that reads (SIGTTIN) or changes it
 * (SIGTTOU) stops with its group and waits to be in the foreground.
 * 0 to go on, LX_BLOCK, or -EIO. */
static int64_t job_check(struct lx_ctx *c, int sig)
{
    struct lx_proc *p = c->p;
    if (!lx_tty_is_ctty(p) || p->pgid == tty.pgrp)
        return 0;
    if (lx_sig_ignored_or_blocked(c, sig))
        return sig == LX_SIGTTIN ? -LX_EIO : 0;
    if (orphaned(p->pgid, p->sid))
        return -LX_EIO;
    lx_signal_group(p->pgid, sig);              /* the group stops (the caller at its answer) */
    return lx_block(c, LX_BLK_TTY, 0);          /* runs again when it is continued and input or tcsetpgrp comes */
}

int64_t lx_tty_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    if (!tty.uart)
        return 0;                               /* no input: end of file */
    int64_t job = job_check(c, LX_SIGTTIN);
    if (job)
        return job;
    if (len == 0)
        return 0;
    int canon = (tty.t.lflag & ICANON) != 0;
    /* A line a VEOF ended: its bytes, then the VEOF is dropped (alone: end of file). */
    int eof_next;
    uint32_t avail = readable(&eof_next);
    if (eof_next && avail == 0) {
        consume(1);
        return 0;
    }
    uint64_t vtime = canon ? 0 : (uint64_t)tty.t.cc[VTIME] * 100000000ull;       /* tenths of a second */
    if (!canon && tty.t.cc[VMIN] == 0 && avail == 0) {
        if (!vtime)
            return 0;                           /* VMIN 0, VTIME 0: a poll */
        if (f->flags & O_NONBLOCK)
            return -LX_EAGAIN;
        if (lx_deadline_passed(c, vtime) || lx_timer_start())
            return 0;                           /* VMIN 0: VTIME after the read began, then nothing */
        return lx_block(c, LX_BLK_TTY, 0);
    }
    uint64_t want = canon ? 1 : tty.t.cc[VMIN] < len ? tty.t.cc[VMIN] : len;    /* raw: VMIN bytes, or all asked */
    if (avail < want && vtime && avail > 0 && !(f->flags & O_NONBLOCK)) {
        uint64_t end = tty.last_input + vtime;  /* VMIN and VTIME: VTIME after the last byte came */
        if (svc_clock_ns() < end && !lx_timer_start()) {
            c->t->timed = 1;
            c->t->deadline = end;
            return lx_block(c, LX_BLK_TTY, 0);
        }
        want = avail;
    }
    if (avail < want) {
        if (f->flags & O_NONBLOCK)
            return -LX_EAGAIN;
        return lx_block(c, LX_BLK_TTY, 0);
    }
    uint32_t n = avail < len ? avail : (uint32_t)len;
    uint64_t went = lx_copy_out_some(c, buf, tty.buf, n);
    if (went == 0)
        return -LX_EFAULT;
    consume((uint32_t)went + (eof_next && went == avail));
    return (int64_t)went;
}

int64_t lx_tty_write_kernel(struct lx_ctx *c, const void *src, uint64_t len)
{
    int64_t job = (tty.t.lflag & TOSTOP) ? job_check(c, LX_SIGTTOU) : 0;
    if (job)
        return job;
    out(src, len);
    return (int64_t)len;
}

int64_t lx_tty_write(struct lx_ctx *c, uint64_t buf, uint64_t len)
{
    char chunk[512];
    uint64_t done = 0;
    int64_t job = (tty.t.lflag & TOSTOP) ? job_check(c, LX_SIGTTOU) : 0;
    if (job)
        return job;
    while (done < len) {
        uint64_t k = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
        if (lx_copy_in(c, chunk, buf + done, k))
            return done ? (int64_t)done : -LX_EFAULT;
        out(chunk, k);
        done += k;
    }
    return (int64_t)done;
}

/* Set the termios (TCSETS*); a switch out of canonical mode makes the line being edited readable. */
static int64_t set_termios(struct lx_ctx *c, uint64_t arg, int flush)
{
    struct lx_termios t;
    if (lx_copy_in(c, &t, arg, sizeof(t)))
        return -LX_EFAULT;
    if (flush)
        flush_input();
    int was_canon = (tty.t.lflag & ICANON) != 0;
    tty.t = t;
    if (was_canon && !(t.lflag & ICANON))
        publish();
    return 0;
}

/* Is there a process group `pgrp` in session `sid`? (A group lives while
 * any member does, a zombie not yet waited for included, as on Linux: the
 * shell may make a finished pipeline stage's group the foreground one.) */
static int group_in_session(int pgrp, int sid)
{
    if (pgrp == 0 && sid == 0)
        return 1;           /* the group of the native programs (lxrun) that started session 0 */
    struct lx_proc *procs = lx_procs();
    for (int i = 0; i < LX_PROCS; i++)
        if (procs[i].used && procs[i].pgid == pgrp && procs[i].sid == sid)
            return 1;
    return 0;
}

int64_t lx_tty_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    struct lx_proc *p = c->p;
    int mine = lx_tty_is_ctty(p);
    uint32_t r = (uint32_t)req;
    if (r == TCSETS || r == TCSETSW || r == TCSETSF || r == TCFLSH || r == TCXONC || r == TIOCSPGRP ||
        r == TCSBRK || r == TCSBRKP) {
        int64_t job = job_check(c, LX_SIGTTOU);    /* changing the terminal from the background */
        if (job)
            return job;
    }
    switch (r) {
    case TCGETS:
        return lx_copy_out(c, arg, &tty.t, sizeof(tty.t));
    case TCSETS:
    case TCSETSW:
        return set_termios(c, arg, 0);
    case TCSETSF:
        return set_termios(c, arg, 1);
    case TCSBRK:
    case TCSBRKP:
    case TCXONC:
        return 0;                               /* output is never held back */
    case TCFLSH:
        if (arg > 2)
            return -LX_EINVAL;
        if (arg != 1)                           /* TCIFLUSH or TCIOFLUSH */
            flush_input();
        return 0;
    case TIOCGWINSZ:
        return lx_copy_out(c, arg, tty.winsize, sizeof(tty.winsize));
    case TIOCSWINSZ:
        return lx_copy_in(c, tty.winsize, arg, sizeof(tty.winsize));
    case FIONREAD: {
        int32_t n = (int32_t)lx_tty_avail();
        return lx_copy_out(c, arg, &n, sizeof(n));
    }
    case TIOCOUTQ: {
        int32_t n = 0;
        return lx_copy_out(c, arg, &n, sizeof(n));
    }
    case TIOCGPGRP:
        if (!mine)
            return -LX_ENOTTY;
        return lx_copy_out(c, arg, &tty.pgrp, sizeof(tty.pgrp));
    case TIOCSPGRP: {
        int32_t pgrp;
        if (!mine)
            return -LX_ENOTTY;
        if (lx_copy_in(c, &pgrp, arg, sizeof(pgrp)))
            return -LX_EFAULT;
        if (pgrp < 0)
            return -LX_EINVAL;
        if (!group_in_session(pgrp, p->sid))
            return -LX_EPERM;
        tty.pgrp = pgrp;
        lx_wake_all(LX_BLK_TTY, 0);             /* a reader stopped in the background may now read */
        return 0;
    }
    case TIOCGSID:
        if (!mine)
            return -LX_ENOTTY;
        return lx_copy_out(c, arg, &tty.sid, sizeof(tty.sid));
    case TIOCSCTTY:
        if (!tty.uart)
            return -LX_EPERM;
        if (mine)
            return 0;
        if (p->sid != p->pid)
            return -LX_EPERM;                   /* only a session leader */
        if (tty.sid != NO_SESSION && arg != 1)
            return -LX_EPERM;                   /* another session's; arg 1 steals it (we are root) */
        tty.sid = p->sid;
        tty.pgrp = p->pgid;
        return 0;
    case TIOCNOTTY:
        if (!mine)
            return -LX_ENOTTY;
        if (p->sid == p->pid)
            tty.sid = NO_SESSION;               /* the session leader lets it go */
        return 0;
    default:
        (void)f;
        return -LX_ENOTTY;
    }
}
