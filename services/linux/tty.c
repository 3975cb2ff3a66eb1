/*
 * The terminals: the console as a Linux terminal (/dev/console, /dev/tty),
 * and the pseudo-terminals (/dev/ptmx and /dev/pts/N), with one line
 * discipline for all.
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
 * A pseudo-terminal is a pair: what is written to its master (an open of
 * /dev/ptmx) is the slave's (/dev/pts/N's) input, through the same line
 * discipline; what the slave writes, and the echo, is the master's to
 * read, after output processing (OPOST: ONLCR, OCRNL). As on Linux: the
 * slave starts locked (unlockpt, TIOCSPTLCK), TIOCGPTN names it,
 * TIOCGPTPEER opens it; a master reads EIO once every slave open is closed
 * and its data is read, and polls POLLHUP; closing the master removes
 * /dev/pts/N and hangs the slave up (reads at end of file, writes EIO,
 * SIGHUP and SIGCONT to the session leader, the session loses it); the
 * number is free again once both sides are closed. A session leader
 * without a controlling terminal that opens a slave without O_NOCTTY gets
 * it as its controlling terminal, and when a session leader ends its
 * pseudo-terminal's foreground group gets SIGHUP (Linux's
 * disassociate_ctty). Each is charged to the process that opened /dev/ptmx
 * (LX_PROC_PTYS, and LX_PTYS in all: ENOSPC past either).
 *
 * A terminal is the controlling terminal of one session: the console is
 * that of the programs native code starts (session 0) until a session
 * leader without one takes it (TIOCSCTTY) or it is let go (TIOCNOTTY). Its
 * foreground process group starts as group 0 and moves by TIOCSPGRP
 * (tcsetpgrp), as a shell with job control does. A process of another
 * group of the session that reads it gets SIGTTIN for its group, and one
 * that changes its settings (or writes, with TOSTOP) SIGTTOU, and the call
 * waits until the group is continued in the foreground; EIO instead
 * (SIGTTIN) or nothing (SIGTTOU) when the caller ignores or blocks the
 * signal, EIO for an orphaned group: Linux's job control.
 *
 * Without the UART (systems that grant it nothing, as the tests' oracle
 * systems) a read of the console is at end of file at once, as before, and
 * the console is nobody's controlling terminal.
 *
 * An input queue has TTY_BUF bytes. When the console's is full the UART's
 * receive FIFO is left alone and its interrupt masked until a reader makes
 * room: the sender (QEMU's serial backend) waits instead of losing
 * characters; a master's writer waits for room in the same way, and a
 * slave's writer for room in the master's queue (TTY_BUF too).
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
#define TIOCGPTN    0x80045430
#define TIOCSPTLCK  0x40045431
#define TIOCGPTLCK  0x80045439
#define TIOCGPTPEER 0x5441

/* c_oflag */
#define OPOST       0000001
#define ONLCR       0000004
#define OCRNL       0000010

enum { SIGHUP = 1, SIGINT = 2, SIGQUIT = 3, SIGCONT = 18, SIGTSTP = 20, SIGWINCH = 28 };

#define TTY_BUF     4096        /* an input queue (Linux's N_TTY_BUF_SIZE), and a master's */
#define NO_SESSION  (-1)
#define TTY_GID     5           /* the group of /dev/pts/N (devpts's gid=5: Debian's "tty") */
#define PTY_MAJOR   136         /* /dev/pts/N is 136:N */
#define ECHO_ROOM   8           /* the most one input character can echo (an erase of ^X: 6) */

/* The kernel's struct termios (TCGETS/TCSETS: 36 bytes). */
struct lx_termios {
    uint32_t iflag, oflag, cflag, lflag;
    uint8_t line, cc[NCCS];
};
_Static_assert(sizeof(struct lx_termios) == 36, "struct termios is 36 bytes on arm64");

static const struct lx_termios cooked = {
    ICRNL | 0002000 /* IXON */, OPOST | ONLCR, 0x4bf /* B38400 | CS8 | CREAD | HUPCL */,
    ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN, 0,
    { 3, 0x1c, 0x7f, 0x15, 4, 0, 1, 0, 0x11, 0x13, 0x1a, 0, 0x12, 0xf, 0x17, 0x16, 0, 0, 0 },
};
#define PTS_CFLAG   0xbf        /* a slave's: B38400 | CS8 | CREAD (Linux's pts init_termios) */

/* A terminal: the console, or a pseudo-terminal (its slave's side, and its master's queue). */
struct tty {
    int index;                  /* the pseudo-terminal's number (/dev/pts/N), or -1: the console */
    volatile uint32_t *uart;    /* the console's UART; NULL: no input (console reads are at end of file) */
    uint32_t irq;
    struct lx_termios t;
    uint16_t winsize[4];
    int sid;                    /* the session it is the controlling terminal of, or NO_SESSION */
    int pgrp;                   /* its foreground process group */
    /* Input: [0, ready) may be read; [ready, count) is the line being
     * edited (canonical mode). A VEOF character is kept in the queue:
     * in canonical mode it ends a line without being read (alone, it
     * reads as end of file); a switch to raw mode makes it a byte. */
    uint8_t *buf;
    uint32_t count, ready;
    uint64_t last_input;        /* when input last became readable (svc_clock_ns): VTIME's inter-byte timer */
    int stalled;                /* the console's queue was full: the receive interrupt is masked */
    /* A pseudo-terminal's: */
    uint8_t *out;               /* what the slave wrote and echoed, for the master to read (a ring of TTY_BUF) */
    uint32_t out_head, out_count;
    uint32_t masters, slaves;   /* open file descriptions of each side */
    int slave_closed;           /* a slave was open and every slave open is closed since */
    int hung;                   /* the master is closed: the slave is hung up */
    int locked;                 /* the slave may not be opened (TIOCSPTLCK) */
    int32_t node;               /* its /dev/pts/N (-1 once removed) */
    uint64_t owner_serial;      /* the process it is charged to (its ptys), while one of pid owner_pid
                                 * has this serial number */
    int32_t owner_pid;
};

static uint8_t console_buf[TTY_BUF];
static struct tty console = { .index = -1, .sid = NO_SESSION, .buf = console_buf, .node = -1 };
static struct tty *ptys[LX_PTYS];

/* What blocked calls on t wait for (lx_block's `on`): 0 the console, N + 1 pseudo-terminal N. */
static int32_t key(const struct tty *t) { return t->index + 1; }

static inline volatile uint32_t *reg(unsigned off) { return console.uart + off / 4; }

/* The free room of a pseudo-terminal's master queue. */
static uint32_t out_room(const struct tty *t) { return TTY_BUF - t->out_count; }

static void out_put(struct tty *t, uint8_t c)
{
    t->out[(t->out_head + t->out_count) % TTY_BUF] = c;
    t->out_count++;
}

/* Output of terminal t (a slave's writes and the echo): the console's to
 * the system console; a pseudo-terminal's, after output processing, into
 * its master's queue while there is room. How many of s's bytes went. */
static uint64_t out(struct tty *t, const void *s, uint64_t n)
{
    if (t->index < 0) {
        svc_console_write(s, n);
        return n;
    }
    const uint8_t *b = s;
    uint64_t i = 0;
    int post = (t->t.oflag & OPOST) != 0;
    for (; i < n; i++) {
        uint8_t c = b[i];
        if (post && c == '\n' && (t->t.oflag & ONLCR)) {
            if (out_room(t) < 2)
                break;
            out_put(t, '\r');
        } else if (post && c == '\r' && (t->t.oflag & OCRNL)) {
            c = '\n';
        }
        if (out_room(t) < 1)
            break;
        out_put(t, c);
    }
    if (i)
        lx_wake_all(LX_BLK_TTY, key(t));        /* the master's readers */
    return i;
}

/* Echo one input character as the flags say: a control character other
 * than tab and newline as ^X under ECHOCTL. */
static void echo_char(struct tty *t, uint8_t c)
{
    if (!(t->t.lflag & ECHO))
        return;
    if ((t->t.lflag & ECHOCTL) && (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n') {
        char s[2] = { '^', (char)(c == 0x7f ? '?' : c + '@') };
        out(t, s, 2);
        return;
    }
    out(t, &c, 1);
}

/* Erase the last character of the line being edited (a control character echoed as ^X takes two columns). */
static int erase_one(struct tty *t)
{
    if (t->count == t->ready)
        return 0;
    uint8_t c = t->buf[--t->count];
    if ((t->t.lflag & ECHO) && (t->t.lflag & ECHOE)) {
        int wide = (t->t.lflag & ECHOCTL) && (c < 0x20 || c == 0x7f) && c != '\t';
        out(t, wide ? "\b\b  \b\b" : "\b \b", wide ? 6 : 3);
    }
    return 1;
}

/* Make everything typed so far readable (a completed line, or raw input). */
static void publish(struct tty *t)
{
    t->ready = t->count;
    t->last_input = svc_clock_ns();
    lx_wake_all(LX_BLK_TTY, key(t));
}

/* Throw the input away (a signal character, TCFLSH). */
static void flush_input(struct tty *t)
{
    t->count = t->ready = 0;
}

/* One typed character through the line discipline; 0 if the queue had no
 * room for it (it stays in the FIFO, or unwritten on the master). */
static int input(struct tty *tt, uint8_t c)
{
    const struct lx_termios *t = &tt->t;
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
            flush_input(tt);
        echo_char(tt, c);                       /* ^C, with no newline (the shell prints one) */
        if (tt->sid != NO_SESSION)
            lx_signal_group(tt->pgrp, sig);
        return 1;
    }
    if (!(t->lflag & ICANON)) {
        if (tt->count == TTY_BUF)
            return 0;
        tt->buf[tt->count++] = c;
        echo_char(tt, c);
        publish(tt);
        return 1;
    }
    if (c && (c == t->cc[VERASE] || c == 0x08 || c == 0x7f)) {
        erase_one(tt);
        return 1;
    }
    if (c && c == t->cc[VKILL]) {
        if ((t->lflag & ECHOKE) || !(t->lflag & ECHO)) {
            while (erase_one(tt))
                ;
        } else {
            tt->count = tt->ready;
            echo_char(tt, c);
            if (t->lflag & ECHOK)
                out(tt, "\n", 1);
        }
        return 1;
    }
    if (c && c == t->cc[VWERASE] && (t->lflag & IEXTEN)) {
        while (tt->count > tt->ready && tt->buf[tt->count - 1] == ' ')
            erase_one(tt);
        while (tt->count > tt->ready && tt->buf[tt->count - 1] != ' ')
            erase_one(tt);
        return 1;
    }
    int ends = c == '\n' || (c && (c == t->cc[VEOL] || c == t->cc[VEOL2] || c == t->cc[VEOF]));
    /* Room is kept for the line's end: a full line takes only that. */
    if (tt->count >= TTY_BUF - 1 && !(ends && tt->count < TTY_BUF))
        return ends ? 0 : 1;
    tt->buf[tt->count++] = c;
    if (c == '\n' && !(t->lflag & ECHO) && (t->lflag & ECHONL))
        out(tt, "\n", 1);
    else if (c != t->cc[VEOF])                  /* VEOF is not echoed */
        echo_char(tt, c);
    if (ends)
        publish(tt);
    return 1;
}

/* The receive interrupt: the FIFO through the line discipline while the queue has room. */
static void received(void)
{
    lx_reap();                                  /* (an entry of the service: see lx_reap) */
    *reg(UART_ICR) = IM_RX | IM_RT;
    while (!(*reg(UART_FR) & FR_RXFE)) {
        uint8_t c = (uint8_t)(*reg(UART_DR) & 0xff);
        if (!input(&console, c)) {
            /* No room: the character is lost only if the FIFO had it
             * already; mask the interrupt until a reader drains. */
            console.stalled = 1;
            *reg(UART_IMSC) &= ~(IM_RX | IM_RT);
            break;
        }
    }
    svc_irq_done(console.irq);
}

void lx_tty_init(void)
{
    console.t = cooked;
    uint32_t irq;
    volatile uint32_t *u = svc_device("arm,pl011", &irq);
    if (!u)
        return;
    console.uart = u;
    console.irq = irq;
    if (svc_irq_attach(irq, received) != 0) {
        console.uart = NULL;
        lx_log("the console's input interrupt is taken: console reads are at end of file");
        return;
    }
    console.sid = 0;            /* the session of what native programs start */
    console.pgrp = 0;
    *reg(UART_IMSC) |= IM_RX | IM_RT;
}

/* ---------------------------------------------------------------- which terminal */

int lx_node_is_tty(const struct lx_node *n)
{
    return n && (n->mode & LX_S_IFMT) == LX_S_IFCHR &&
           (n->dev == LX_DEV_CONSOLE || n->dev == LX_DEV_PTMX || n->dev == LX_DEV_PTS);
}

/* The pseudo-terminal /dev/pts/N node `node` is the slave of, or NULL. */
static struct tty *pty_of_node(int32_t node)
{
    struct lx_node *n = lx_node(node);
    if (!n || n->dev != LX_DEV_PTS || n->pty < 0 || n->pty >= LX_PTYS)
        return NULL;
    struct tty *t = ptys[n->pty];
    return t && t->node == node ? t : NULL;
}

/* The terminal of open file f (*master set for a pseudo-terminal's master), or NULL. */
static struct tty *tty_of(const struct lx_file *f, int *master)
{
    *master = 0;
    if (f->pty >= 0) {
        *master = 1;
        return f->pty < LX_PTYS ? ptys[f->pty] : NULL;
    }
    struct lx_node *n = f->node >= 0 ? lx_node(f->node) : NULL;
    if (!lx_node_is_tty(n))
        return NULL;
    if (n->dev == LX_DEV_CONSOLE)
        return &console;
    return n->dev == LX_DEV_PTS ? ptys[n->pty] : NULL;  /* (an open slave holds its pty) */
}

/* The controlling terminal of session sid, or NULL. */
static struct tty *tty_of_session(int sid)
{
    if (console.sid != NO_SESSION && console.sid == sid)
        return &console;
    for (int i = 0; i < LX_PTYS; i++)
        if (ptys[i] && ptys[i]->sid != NO_SESSION && ptys[i]->sid == sid)
            return ptys[i];
    return NULL;
}

int lx_tty_is_ctty(const struct lx_proc *p)
{
    return tty_of_session(p->sid) != NULL;
}

int32_t lx_tty_ctty_node(const struct lx_proc *p)
{
    struct tty *t = tty_of_session(p->sid);
    if (!t)
        return -LX_ENXIO;
    if (t->index >= 0)
        return t->node >= 0 ? t->node : -LX_ENXIO;
    return lx_lookup(LX_ROOT, "/dev/console", 1);
}

/* Linux's encoding of device number major:minor (new_encode_dev). */
static uint32_t dev_number(uint32_t major, uint32_t minor)
{
    return (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
}

uint32_t lx_tty_ctty_dev(const struct lx_proc *p, int *fg_pgrp)
{
    struct tty *t = tty_of_session(p->sid);
    *fg_pgrp = t ? t->pgrp : -1;
    if (!t)
        return 0;
    return t->index < 0 ? dev_number(5, 1) : dev_number(PTY_MAJOR, (uint32_t)t->index);
}

uint32_t lx_tty_pts_rdev(const struct lx_node *n)
{
    return dev_number(PTY_MAJOR, n->pty >= 0 ? (uint32_t)n->pty : 0);
}

/* ---------------------------------------------------------------- pseudo-terminals */

/* Free pseudo-terminal t (neither side is open). */
static void pty_free(struct tty *t)
{
    struct lx_proc *owner = lx_proc_of_serial(t->owner_pid, t->owner_serial);
    if (owner && owner->ptys)
        owner->ptys--;
    ptys[t->index] = NULL;
    svc_free(t->out, TTY_BUF);
    svc_free(t->buf, TTY_BUF);
    svc_free(t, sizeof(*t));
}

/* Remove /dev/pts/N of t (its master closed). */
static void pty_unname(struct tty *t)
{
    if (t->node < 0)
        return;
    int32_t d = lx_dent_of(t->node);
    t->node = -1;                               /* (its open slaves still reach t through the node's pty) */
    if (d >= 0)
        lx_unlink(d);
}

int64_t lx_pty_open_master(struct lx_ctx *c, int32_t ptmx, uint32_t flags, int cloexec)
{
    struct lx_proc *p = c->p;
    if (p->ptys >= LX_PROC_PTYS)
        return -LX_ENOSPC;
    int idx = -1;
    for (int i = 0; i < LX_PTYS && idx < 0; i++)
        if (!ptys[i])
            idx = i;
    if (idx < 0)
        return -LX_ENOSPC;                      /* kernel.pty.max */
    int32_t pts = lx_lookup(LX_ROOT, "/dev/pts", 1);
    if (pts < 0)
        return -LX_EIO;
    struct tty *t = svc_alloc(sizeof(*t));
    uint8_t *in = t ? svc_alloc(TTY_BUF) : NULL, *outq = in ? svc_alloc(TTY_BUF) : NULL;
    if (!outq) {
        if (in)
            svc_free(in, TTY_BUF);
        if (t)
            svc_free(t, sizeof(*t));
        return -LX_ENOMEM;
    }
    *t = (struct tty){ .index = idx, .t = cooked, .sid = NO_SESSION, .buf = in, .out = outq, .locked = 1,
                       .node = -1, .owner_serial = p->serial, .owner_pid = p->pid };
    t->t.cflag = PTS_CFLAG;
    int32_t node = lx_node_new(LX_S_IFCHR | 0620);
    char name[12];
    int len = lx_format(name, sizeof(name), "%d", idx);
    if (node < 0 || lx_link(pts, name, (uint32_t)len, node) != 0) {
        if (node >= 0)
            lx_node_maybe_free(node);
        svc_free(outq, TTY_BUF);
        svc_free(in, TTY_BUF);
        svc_free(t, sizeof(*t));
        return -LX_ENOSPC;
    }
    struct lx_node *n = lx_node(node);
    n->dev = LX_DEV_PTS;
    n->pty = idx;
    n->fs = LX_FS_PTS;
    n->gid = TTY_GID;
    t->node = node;
    ptys[idx] = t;
    p->ptys++;
    struct lx_file *f;
    int fd = lx_fd_open(p, LX_FILE_NODE, ptmx, flags, cloexec, &f);
    if (fd < 0) {
        pty_unname(t);
        pty_free(t);
        return fd;
    }
    f->pty = idx;
    t->masters = 1;
    return fd;
}

int lx_pty_slave_check(int32_t node)
{
    struct tty *t = pty_of_node(node);
    return !t || t->hung || t->locked ? -LX_EIO : 0;
}

void lx_pty_slave_opened(struct lx_ctx *c, struct lx_file *f, uint32_t open_flags)
{
    struct lx_proc *p = c->p;
    struct tty *t = pty_of_node(f->node);
    if (!t)
        return;
    t->slaves++;
    t->slave_closed = 0;
    /* A session leader without a controlling terminal gets it (Linux's tty_open). */
    if (!(open_flags & O_NOCTTY) && p->sid == p->pid && !lx_tty_is_ctty(p) && t->sid == NO_SESSION) {
        t->sid = p->sid;
        t->pgrp = p->pgid;
    }
}

/* The session of t loses it: SIGHUP and SIGCONT to its leader (Linux's
 * tty_signal_session_leader, on a hangup). */
static void hang_up_session(struct tty *t)
{
    if (t->sid == NO_SESSION)
        return;
    struct lx_proc *leader = t->sid > 0 ? lx_proc_of_pid(t->sid) : NULL;
    if (leader && !leader->ended && leader->sid == t->sid) {
        struct lx_sinfo si = { LX_SI_KERNEL, 0, 0, 0, 0, 0 };
        lx_sig_send(leader, SIGHUP, &si);
        lx_sig_send(leader, SIGCONT, &si);
    }
    t->sid = NO_SESSION;
    t->pgrp = 0;
}

void lx_tty_file_gone(struct lx_file *f)
{
    int master;
    if (f->flags & O_PATH)
        return;                                 /* (never counted as a side) */
    struct tty *t = tty_of(f, &master);
    if (!t || t->index < 0)
        return;
    if (master) {
        if (--t->masters == 0) {
            pty_unname(t);
            t->hung = 1;
            hang_up_session(t);
        }
    } else if (t->slaves && --t->slaves == 0) {
        t->slave_closed = 1;
    }
    lx_wake_all(LX_BLK_TTY, key(t));            /* readers and writers of both sides look again */
    if (!t->masters && !t->slaves)
        pty_free(t);
}

void lx_tty_leader_gone(const struct lx_proc *p)
{
    for (int i = 0; i < LX_PTYS; i++) {
        struct tty *t = ptys[i];
        if (!t || t->sid != p->pid)
            continue;
        if (t->pgrp > 0)
            lx_signal_group(t->pgrp, SIGHUP);
        t->sid = NO_SESSION;
        t->pgrp = 0;
    }
}

/* ---------------------------------------------------------------- reading and writing */

/* Does byte c end a line of t in canonical mode? */
static int line_end(const struct tty *t, uint8_t c)
{
    return c == '\n' || (c && (c == t->t.cc[VEOL] || c == t->t.cc[VEOL2] || c == t->t.cc[VEOF]));
}

/* How many bytes a read of t may have now: in canonical mode the first
 * line, without the VEOF that ends it (*eof then set). */
static uint32_t readable(const struct tty *t, int *eof)
{
    *eof = 0;
    if (!(t->t.lflag & ICANON))
        return t->ready;
    for (uint32_t i = 0; i < t->ready; i++) {
        if (line_end(t, t->buf[i])) {
            *eof = t->buf[i] == t->t.cc[VEOF];
            return *eof ? i : i + 1;
        }
    }
    return t->ready;
}

int lx_tty_poll(struct lx_file *f)
{
    int master;
    struct tty *t = tty_of(f, &master);
    if (!t)
        return LX_POLLIN | LX_POLLOUT | LX_POLLERR | LX_POLLHUP;
    if (master) {
        int ev = (t->out_count ? LX_POLLIN : 0) | (t->slave_closed ? LX_POLLHUP : 0);
        return ev | (t->count < TTY_BUF ? LX_POLLOUT : 0);
    }
    if (t->hung)
        return LX_POLLIN | LX_POLLOUT | LX_POLLERR | LX_POLLHUP;
    int in = (t->index < 0 && !t->uart) || t->ready;    /* no console input at all: end of file, readable */
    int room = t->index < 0 || out_room(t) > 1;
    return (in ? LX_POLLIN : 0) | (room ? LX_POLLOUT : 0);
}

/* Take `n` bytes off the front of t's queue. */
static void consume(struct tty *t, uint32_t n)
{
    memmove(t->buf, t->buf + n, t->count - n);
    t->count -= n;
    t->ready -= n;
    if (t->index >= 0) {
        lx_wake_all(LX_BLK_TTY, key(t));        /* a master's writer waiting for room */
    } else if (t->stalled && t->uart) {
        t->stalled = 0;
        *reg(UART_IMSC) |= IM_RX | IM_RT;       /* the FIFO's characters raise it again */
    }
}

/* Is group pgrp of session sid orphaned: no member has a parent in
 * another group of the same session (so nobody will continue it)? */
static int orphaned(int pgrp, int sid)
{
    for (struct lx_proc *q = lx_procs(); q; q = q->next) {
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
static int64_t job_check(struct lx_ctx *c, struct tty *t, int sig)
{
    struct lx_proc *p = c->p;
    if (t->sid == NO_SESSION || p->sid != t->sid || p->pgid == t->pgrp)
        return 0;
    if (lx_sig_ignored_or_blocked(c, sig))
        return sig == LX_SIGTTIN ? -LX_EIO : 0;
    if (orphaned(p->pgid, p->sid))
        return -LX_EIO;
    lx_signal_group(p->pgid, sig);              /* the group stops (the caller at its answer) */
    return lx_block(c, LX_BLK_TTY, key(t));     /* runs again when it is continued and input or tcsetpgrp comes */
}

/* A master's read: what the slave wrote and echoed, as it is. */
static int64_t master_read(struct lx_ctx *c, struct lx_file *f, struct tty *t, uint64_t buf, uint64_t len)
{
    if (len == 0)
        return 0;
    if (!t->out_count) {
        if (t->slave_closed)
            return -LX_EIO;                     /* every slave is closed and all is read */
        return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_block(c, LX_BLK_TTY, key(t));
    }
    uint32_t n = t->out_count < len ? t->out_count : (uint32_t)len;
    uint32_t first = TTY_BUF - t->out_head < n ? TTY_BUF - t->out_head : n;
    uint64_t went = lx_copy_out_some(c, buf, t->out + t->out_head, first);
    if (went == first && n > first)
        went += lx_copy_out_some(c, buf + first, t->out, n - first);
    if (went == 0)
        return -LX_EFAULT;
    t->out_head = (t->out_head + (uint32_t)went) % TTY_BUF;
    t->out_count -= (uint32_t)went;
    lx_wake_all(LX_BLK_TTY, key(t));            /* a slave's writer waiting for room */
    return (int64_t)went;
}

int64_t lx_tty_read(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    int master;
    struct tty *t = tty_of(f, &master);
    if (!t)
        return -LX_EIO;
    if (master)
        return master_read(c, f, t, buf, len);
    if (t->hung || (t->index < 0 && !t->uart))
        return 0;                               /* hung up, or no console input: end of file */
    int64_t job = job_check(c, t, LX_SIGTTIN);
    if (job)
        return job;
    if (len == 0)
        return 0;
    int canon = (t->t.lflag & ICANON) != 0;
    /* A line a VEOF ended: its bytes, then the VEOF is dropped (alone: end of file). */
    int eof_next;
    uint32_t avail = readable(t, &eof_next);
    if (eof_next && avail == 0) {
        consume(t, 1);
        return 0;
    }
    uint64_t vtime = canon ? 0 : (uint64_t)t->t.cc[VTIME] * 100000000ull;     /* tenths of a second */
    if (!canon && t->t.cc[VMIN] == 0 && avail == 0) {
        if (!vtime)
            return 0;                           /* VMIN 0, VTIME 0: a poll */
        if (f->flags & O_NONBLOCK)
            return -LX_EAGAIN;
        if (lx_deadline_passed(c, vtime) || lx_timer_start())
            return 0;                           /* VMIN 0: VTIME after the read began, then nothing */
        return lx_block(c, LX_BLK_TTY, key(t));
    }
    uint64_t want = canon ? 1 : t->t.cc[VMIN] < len ? t->t.cc[VMIN] : len;     /* raw: VMIN bytes, or all asked */
    if (avail < want && vtime && avail > 0 && !(f->flags & O_NONBLOCK)) {
        uint64_t end = t->last_input + vtime;   /* VMIN and VTIME: VTIME after the last byte came */
        if (svc_clock_ns() < end && !lx_timer_start()) {
            c->t->timed = 1;
            c->t->deadline = end;
            return lx_block(c, LX_BLK_TTY, key(t));
        }
        want = avail;
    }
    if (avail < want) {
        if (f->flags & O_NONBLOCK)
            return -LX_EAGAIN;
        return lx_block(c, LX_BLK_TTY, key(t));
    }
    uint32_t n = avail < len ? avail : (uint32_t)len;
    uint64_t went = lx_copy_out_some(c, buf, t->buf, n);
    if (went == 0)
        return -LX_EFAULT;
    consume(t, (uint32_t)went + (eof_next && went == avail));
    return (int64_t)went;
}

/* Bytes src[0..len) written to side `master` of t, already in the
 * personality: a master's go through the slave's line discipline, a
 * slave's to its output. How many went (0: no room). */
static uint64_t put(struct tty *t, int master, const uint8_t *src, uint64_t len)
{
    if (!master)
        return out(t, src, len);
    uint64_t i = 0;
    /* With echo on, input waits while the master's queue could not take
     * its echo (Linux stalls the slave's input on a full master too). */
    while (i < len && !((t->t.lflag & ECHO) && out_room(t) < ECHO_ROOM) && input(t, src[i]))
        i++;
    return i;
}

/* write() of a terminal: all of it, waiting for room as often as it takes
 * (the bytes moved kept across waits in the thread's io.done, as a pipe's).
 * From the program's memory at buf, or from the personality's at
 * kernel_src; a write that may not wait (`resumable` 0) ends short. */
static int64_t tty_write(struct lx_ctx *c, struct lx_file *f, struct tty *t, int master, uint64_t buf,
                         const void *kernel_src, uint64_t len, int resumable)
{
    if (!master && t->hung)
        return -LX_EIO;
    if (!master) {
        int64_t job = (t->t.lflag & TOSTOP) ? job_check(c, t, LX_SIGTTOU) : 0;
        if (job)
            return job;
    }
    uint64_t done = resumable ? c->t->io.done : 0;
    c->t->io.done = 0;
    while (done < len) {
        uint8_t chunk[512];
        uint64_t k = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
        const uint8_t *src = kernel_src ? (const uint8_t *)kernel_src + done : chunk;
        if (!kernel_src && lx_copy_in(c, chunk, buf + done, k))
            return done ? (int64_t)done : -LX_EFAULT;
        uint64_t went = put(t, master, src, k);
        done += went;
        if (went < k) {
            if ((f->flags & O_NONBLOCK) || !resumable)
                return done ? (int64_t)done : -LX_EAGAIN;
            c->t->io.done = done;
            return lx_block(c, LX_BLK_TTY, key(t));
        }
    }
    return (int64_t)done;
}

int64_t lx_tty_write(struct lx_ctx *c, struct lx_file *f, uint64_t buf, uint64_t len)
{
    int master;
    struct tty *t = tty_of(f, &master);
    return t ? tty_write(c, f, t, master, buf, NULL, len, 1) : -LX_EIO;
}

int64_t lx_tty_write_kernel(struct lx_ctx *c, struct lx_file *f, const void *src, uint64_t len, int resumable)
{
    int master;
    struct tty *t = tty_of(f, &master);
    return t ? tty_write(c, f, t, master, 0, src, len, resumable) : -LX_EIO;
}

/* ---------------------------------------------------------------- ioctl */

/* Set the termios (TCSETS*); a switch out of canonical mode makes the line being edited readable. */
static int64_t set_termios(struct lx_ctx *c, struct tty *t, uint64_t arg, int flush)
{
    struct lx_termios nt;
    if (lx_copy_in(c, &nt, arg, sizeof(nt)))
        return -LX_EFAULT;
    if (flush)
        flush_input(t);
    int was_canon = (t->t.lflag & ICANON) != 0;
    t->t = nt;
    if (was_canon && !(nt.lflag & ICANON))
        publish(t);
    return 0;
}

/* Is there a process group `pgrp` in session `sid`? (A group lives while
 * any member does, a zombie not yet waited for included, as on Linux: the
 * shell may make a finished pipeline stage's group the foreground one.) */
static int group_in_session(int pgrp, int sid)
{
    if (pgrp == 0 && sid == 0)
        return 1;           /* the group of the native programs (lxrun) that started session 0 */
    for (struct lx_proc *q = lx_procs(); q; q = q->next)
        if (q->used && q->pgid == pgrp && q->sid == sid)
            return 1;
    return 0;
}

/* TIOCSCTTY: session leader p takes t as its controlling terminal (arg 1: from another session, as root). */
static int64_t take_ctty(struct lx_proc *p, struct tty *t, uint64_t arg)
{
    if (t->index < 0 && !t->uart)
        return -LX_EPERM;
    if (p->sid == p->pid && t->sid == p->sid)
        return 0;
    if (p->sid != p->pid || lx_tty_is_ctty(p))
        return -LX_EPERM;                       /* only a session leader without one */
    if (t->sid != NO_SESSION) {
        if (arg != 1)
            return -LX_EPERM;                   /* another session's; arg 1 steals it (we are root) */
    }
    t->sid = p->sid;
    t->pgrp = p->pgid;
    return 0;
}

/* A master's own requests: its number, the slave's lock, opening the slave. */
static int64_t master_ioctl(struct lx_ctx *c, struct tty *t, uint32_t r, uint64_t arg)
{
    switch (r) {
    case TIOCGPTN: {
        uint32_t n = (uint32_t)t->index;
        return lx_copy_out(c, arg, &n, sizeof(n));
    }
    case TIOCSPTLCK: {
        int32_t lock;
        if (lx_copy_in(c, &lock, arg, sizeof(lock)))
            return -LX_EFAULT;
        t->locked = lock != 0;
        return 0;
    }
    case TIOCGPTLCK: {
        int32_t lock = t->locked;
        return lx_copy_out(c, arg, &lock, sizeof(lock));
    }
    case TIOCGPTPEER: {
        uint32_t fl = (uint32_t)arg;
        if (fl & ~(uint32_t)(O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | O_APPEND | O_LARGEFILE))
            return -LX_EINVAL;                  /* (an open flag a terminal has no use for) */
        if (t->node < 0 || lx_pty_slave_check(t->node))
            return -LX_EIO;
        struct lx_file *f;
        int fd = lx_fd_open(c->p, LX_FILE_NODE, t->node, (fl & ~(uint32_t)(O_CLOEXEC | O_NOCTTY)) | O_LARGEFILE,
                            (fl & O_CLOEXEC) != 0, &f);
        if (fd >= 0)
            lx_pty_slave_opened(c, f, fl | O_NOCTTY);  /* (always O_NOCTTY) */
        return fd;
    }
    case FIONREAD: {
        int32_t n = (int32_t)t->out_count;
        return lx_copy_out(c, arg, &n, sizeof(n));
    }
    default:
        return 1;                               /* not a master's own */
    }
}

int64_t lx_tty_ioctl(struct lx_ctx *c, struct lx_file *f, uint64_t req, uint64_t arg)
{
    struct lx_proc *p = c->p;
    int master;
    struct tty *t = tty_of(f, &master);
    uint32_t r = (uint32_t)req;
    if (!t)
        return -LX_EIO;
    if (!master && t->hung)
        return r == TIOCSPGRP ? -LX_ENOTTY : -LX_EIO;  /* (Linux's hung_up_tty_ioctl) */
    if (master) {
        int64_t own = master_ioctl(c, t, r, arg);
        if (own != 1)
            return own;
    } else if (r == TIOCGPTN || r == TIOCSPTLCK || r == TIOCGPTLCK || r == TIOCGPTPEER) {
        return -LX_ENOTTY;
    }
    int mine = t->sid != NO_SESSION && p->sid == t->sid;
    if (r == TCSETS || r == TCSETSW || r == TCSETSF || r == TCFLSH || r == TCXONC || r == TIOCSPGRP ||
        r == TCSBRK || r == TCSBRKP) {
        int64_t job = job_check(c, t, LX_SIGTTOU);     /* changing the terminal from the background */
        if (job)
            return job;
    }
    switch (r) {
    case TCGETS:
        return lx_copy_out(c, arg, &t->t, sizeof(t->t));
    case TCSETS:
    case TCSETSW:
        return set_termios(c, t, arg, 0);
    case TCSETSF:
        return set_termios(c, t, arg, 1);
    case TCSBRK:
    case TCSBRKP:
    case TCXONC:
        return 0;                               /* output is never held back */
    case TCFLSH:
        if (arg > 2)
            return -LX_EINVAL;
        if (arg != 1)                           /* TCIFLUSH or TCIOFLUSH */
            flush_input(t);
        if (arg != 0 && t->index >= 0) {        /* TCOFLUSH or TCIOFLUSH: the master's queue */
            t->out_head = t->out_count = 0;
            lx_wake_all(LX_BLK_TTY, key(t));
        }
        return 0;
    case TIOCGWINSZ:
        return lx_copy_out(c, arg, t->winsize, sizeof(t->winsize));
    case TIOCSWINSZ: {
        uint16_t ws[4];
        if (lx_copy_in(c, ws, arg, sizeof(ws)))
            return -LX_EFAULT;
        if (memcmp(ws, t->winsize, sizeof(ws)) != 0) {
            memcpy(t->winsize, ws, sizeof(ws));
            if (t->sid != NO_SESSION && t->pgrp > 0)
                lx_signal_group(t->pgrp, SIGWINCH);
        }
        return 0;
    }
    case FIONREAD: {
        int eof;
        int32_t n = (int32_t)readable(t, &eof);
        return lx_copy_out(c, arg, &n, sizeof(n));
    }
    case TIOCOUTQ: {
        int32_t n = t->index < 0 ? 0 : (int32_t)t->out_count;
        return lx_copy_out(c, arg, &n, sizeof(n));
    }
    case TIOCGPGRP:
        if (!mine && !master)
            return -LX_ENOTTY;
        return lx_copy_out(c, arg, &t->pgrp, sizeof(t->pgrp));
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
        t->pgrp = pgrp;
        lx_wake_all(LX_BLK_TTY, key(t));        /* a reader stopped in the background may now read */
        return 0;
    }
    case TIOCGSID:
        if ((!mine && !master) || t->sid == NO_SESSION)
            return -LX_ENOTTY;
        return lx_copy_out(c, arg, &t->sid, sizeof(t->sid));
    case TIOCSCTTY:
        return take_ctty(p, t, arg);
    case TIOCNOTTY:
        if (!mine || master)
            return -LX_ENOTTY;
        if (p->sid == p->pid)
            t->sid = NO_SESSION;                /* the session leader lets it go */
        return 0;
    default:
        return -LX_ENOTTY;
    }
}
