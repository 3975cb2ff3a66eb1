/*
 * TCP (RFC 9293) in the stack service: connections and their sockets.
 *
 * A connection is a `struct tcb` in a table of NTCB, found by its four
 * numbers (a listener by its port and local address). Each TCP socket has
 * one from `open` on; a listener's connections get theirs when the SYN
 * comes and their socket at `accept`. A connection closed by its socket
 * lives on without one (an orphan) until its FIN is acknowledged and
 * TIME_WAIT is over, or it is reset.
 *
 * Segments are processed as RFC 9293 3.10.7 says, with RFC 5961's
 * challenge ACKs for a RST or SYN that is not exactly expected. Sending
 * follows RFC 5681 and 6582 (NewReno's fast retransmit and recovery, with
 * window inflation) through the socket's congestion module (tcp_cc.h),
 * RFC 6298's timer (tcp_rtx.h; Karn's rule), the sender's and receiver's
 * silly window avoidance, Nagle's algorithm (off with TCP_NODELAY), zero
 * window probes as Linux sends them (an ACK one below SND.UNA), delayed
 * ACKs (40 ms, or at once every second segment). Data that comes early is
 * kept in the receive ring at its place (OOO_RANGES ranges of it).
 *
 * Timings are Linux's, the oracle: SYN retried 6 times and a SYN-ACK 5,
 * data 15 times, TIME_WAIT 60 s, an orphan's FIN_WAIT_2 60 s. The only
 * option so far is MSS (window scaling, timestamps and SACK come next:
 * docs/design/network.md).
 */
#include "net.h"
#include "pstring.h"
#include "svc_proc.h"
#include "tcp_cc.h"
#include "svc_trace.h"
#include "tcp_rtx.h"

uint32_t net_tcp_default_cc;            /* an index of tcp_cc_modules: newreno until the system says */

#define PROTO_TCP       6u
#define TCP_HLEN        20u
#define FIN             0x01u
#define SYN             0x02u
#define RST             0x04u
#define PSH             0x08u
#define ACK             0x10u

#define NTCB            256u            /* connections in all (listeners, orphans and TIME_WAIT among them) */
#define TCB_PER_PID     128u            /* a client's, its listeners' among them: a server holds 100 at once */
#define BUF_BYTES       (64u * 1024)    /* each direction's ring at first (a power of two) */
#define BUF_MAX         (4096u * 1024)  /* ... grown (ring_grow) up to this (net.ipv4.tcp_wmem's most) */
#define GROWN_MAX       (8u << 20)      /* the bytes a client's grown rings add in all */
#define BACKLOG_MAX     128u
#define OOO_RANGES      4u
#define DELACK_NS       40000000ull     /* Linux's TCP_DELACK_MIN */
#define TIME_WAIT_NS    60000000000ull  /* Linux's TCP_TIMEWAIT_LEN */
#define FIN_TIMEOUT_NS  60000000000ull  /* net.ipv4.tcp_fin_timeout */
#define SYN_RETRIES     6u              /* net.ipv4.tcp_syn_retries */
#define SYNACK_RETRIES  5u              /* net.ipv4.tcp_synack_retries */
#define RETRIES2        15u             /* net.ipv4.tcp_retries2 */
#define MSS_DEFAULT     536u            /* RFC 9293 3.7.1: without the option */
#define MSS_MIN         88u             /* Linux's TCP_MIN_MSS */
#define WSCALE          7u              /* the window shift we ask for (Linux's with its buffers) */
#define PACE_SS_RATIO   200u            /* net.ipv4.tcp_pacing_ss_ratio: % of cwnd/SRTT in slow start */
#define PACE_CA_RATIO   120u            /* net.ipv4.tcp_pacing_ca_ratio: ... after it */
#define PACE_BURST_NS   1000000ull      /* the most a sender idle long enough sends at once: 1 ms at its rate */
#define PACE_GRAIN_NS   200000ull       /* the pacing timer lets this much pass, so that it sends a few */
#define TS_TICK_NS      1000000ull      /* timestamps count milliseconds (Linux's TCP_TS_HZ) */
#define PAWS_IDLE_NS    (24ull * 86400 * 1000000000)    /* RFC 7323 5.5: TS.Recent older is invalid */
#define OOW_ACK_NS      500000000ull    /* net.ipv4.tcp_invalid_ratelimit: ACKs to segments out of place */

#define KEEP_IDLE_S     7200u           /* net.ipv4.tcp_keepalive_time */
#define KEEP_INTVL_S    75u             /* net.ipv4.tcp_keepalive_intvl */
#define KEEP_CNT        9u              /* net.ipv4.tcp_keepalive_probes */

#define ECONNRESET      104
#define ECONNREFUSED    111
#define ETIMEDOUT       110

/* The states, numbered as Linux numbers them (TCP_INFO's tcpi_state). */
enum {
    T_ESTABLISHED = 1, T_SYN_SENT, T_SYN_RECEIVED, T_FIN_WAIT_1, T_FIN_WAIT_2, T_TIME_WAIT, T_CLOSED,
    T_CLOSE_WAIT, T_LAST_ACK, T_LISTEN, T_CLOSING,
};

struct ring {
    uint8_t *buf;
    uint32_t head, len;                 /* the oldest byte, and how many */
    uint32_t size;                      /* BUF_BYTES, or grown: a power of two to BUF_MAX */
};

struct tcb {
    uint64_t pid;                       /* its client; 0: the slot is free */
    struct sock *sock;                  /* NULL: an orphan, or not accepted yet */
    struct tcb *listener;               /* not accepted yet: whose queue it is in */
    uint64_t born;                      /* the order connections came to a listener in */
    uint8_t state, used, nodelay, linger0;
    uint8_t keepalive, keep_cnt, keep_sent;
    uint16_t keep_idle, keep_intvl;     /* seconds */
    uint64_t last_rcv;                  /* when a segment last came */
    uint8_t ts_ok, sack_ok, ws_ok;      /* options agreed (offered, in SYN_SENT) */
    uint8_t snd_wscale, rcv_wscale;
    uint8_t shut_rd, shut_wr;           /* no more to read (FIN, shutdown or the end); no more to send */
    uint8_t fin_done;                   /* our FIN was acknowledged */
    uint8_t err_told;
    int32_t err;                        /* a Linux errno: why the connection ended (0: it did not, or well) */
    uint32_t laddr, raddr;
    uint16_t lport, rport;
    uint32_t id;                        /* the connection's number since the stack started (its tracepoints) */
    /* RFC 9293 3.3.1 */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2, max_wnd;
    uint32_t irs, rcv_nxt, rcv_adv;     /* rcv_adv: the right edge of the window we offered */
    uint32_t last_ack_sent, ts_recent, ts_offset, last_early;
    uint64_t ts_recent_at;
    uint32_t mss, rmss;                 /* what we send in a segment; what we asked for */
    struct ring snd, rcv;               /* snd: from snd_una (after the SYN); rcv: read up to rcv_nxt, then early data */
    uint32_t ooo_start[OOO_RANGES], ooo_end[OOO_RANGES];    /* early data held, sorted, apart */
    uint8_t nooo;
    struct tcp_rto rto;
    struct tcp_cc cc;
    struct tcp_sb sb;                   /* what the peer SACKed */
    uint32_t high_rxt;                  /* RFC 6675's HighRxt */
    uint8_t dupacks, in_recovery, retries;
    uint32_t recover, inflate;          /* RFC 6582's recovery point; NewReno's window inflation */
    uint32_t rtt_seq;                   /* the segment being timed (Karn), valid while rtt_at */
    uint64_t rtt_at;
    uint64_t t_rtx, t_delack, t_wait, t_persist, t_keep, t_pace;    /* deadlines (0: none) */
    uint64_t pace_at;                   /* when the next segment may go at the pacing rate (pace) */
    uint32_t persist_us, retrans;
    uint8_t probes;                     /* zero-window probes unanswered */
    uint8_t ack_batched;                /* in ack_batch: its ACK goes when the frames at hand are done */
    uint8_t rcv_edge;                   /* the peer filled the window offered since the reader last emptied it */
    uint32_t rcv_rtt_us;                /* the round trip as the receiver sees it (the peer's echoes of our
                                         * timestamps on its data; 0: none yet) */
    uint32_t drs_taken;                 /* bytes the reader took since drs_at (dynamic right-sizing) */
    uint64_t drs_at;
    uint64_t data_at;                   /* when data last came (the reader's clock: no clock read a read) */
    uint32_t snd_cap, rcv_cap;          /* SO_SNDBUF and SO_RCVBUF as the client set them (0: not set: the
                                         * rings grow with use) */
    uint16_t backlog;                   /* a listener's: room in its queue */
    uint64_t cookie_at;                 /* a listener's: when it last sent a SYN cookie (0: never) */
    uint64_t oow_ack_at;                /* when ack_oow last answered (0: never) */
    uint64_t bytes_acked, bytes_received;   /* sequence space the peer acknowledged, and we received in
                                             * order, past the SYNs (our SYN and FIN acknowledged count, as
                                             * their FIN does: Linux's tcpi_bytes_acked and _received) */
    uint32_t segs_out, segs_in;         /* segments sent and received (TCP_INFO's) */
};

/* The table: NTCB blocks and a scratch one last (a SYN cookie is sent
 * from it), allocated at the first use (not in the kernel's image when
 * the stack is placed there: no TLB entries for a stack without TCP). */
static struct tcb *tcbs;

static int table_ready(void)
{
    if (!tcbs)
        tcbs = svc_alloc((NTCB + 1) * sizeof *tcbs);
    return tcbs != NULL;
}
static uint64_t isn_key[2], born_clock;

/* ACKs held while the stack takes a batch of frames from the NIC
 * (net_tcp_batch): a connection that gets several segments at once is
 * acknowledged once, at the end, as Linux acknowledges what its receive
 * offload merged from one poll of the NIC. Every frame the receiver sends
 * costs the link and the sender as much as a data segment. */
#define ACK_BATCH       32u
static struct tcb *ack_batch[ACK_BATCH];
static unsigned ack_batched, batching;

/* The connection the last segment was for (tcb_find looks there first). */
static struct tcb *last_found;

/* The slots ever given out are the first tcb_top (tcb_new gives the
 * lowest free one): the scans of connections stop there. */
static unsigned tcb_top;

/* No connection's timer is due before this (0: none is set). Setting one
 * earlier lowers it (set_timer); one stopped or moved later leaves it
 * where it was, so the service's timer may come early: net_tcp_timers
 * then finds nothing due and sets it exact again from every connection's
 * deadlines. The stack asks for its next deadline after every request,
 * and a scan of all connections (TIME_WAIT's among them) each time cost
 * more than the rest of a loopback segment's timer work. */
static uint64_t tcp_first;

/* t sent a segment again (n 1), or one counted so was not (n -1). */
static void count_retrans(struct tcb *t, int n)
{
    t->retrans += (uint32_t)n;
    net_mib[MIB_TCP_RETRANS_SEGS] += (uint64_t)(int64_t)n;
}

/* The monitor (idl/tracepoints.toml): the window and why it is what it is. */
static void trace_cwnd(const struct tcb *t, unsigned why)
{
    trace_tcp_cwnd(t->id, why, t->cc.cwnd, t->cc.ssthresh, t->snd_max - t->snd_una);
}

/* An RTT sample of `us` microseconds into t's estimator (RFC 6298), and its tracepoint. */
static void rtt_sample(struct tcb *t, uint32_t us)
{
    tcp_rto_sample(&t->rto, us);
    trace_tcp_rtt(t->id, us, t->rto.srtt_us, t->rto.rttvar_us, t->rto.rto_us / 1000);
}

/* The congestion module's own event in its last call, if it had one. */
static void cc_event(struct tcb *t)
{
    if (t->cc.event) {
        trace_tcp_cc(t->id, t->cc.event, t->cc.event_a, t->cc.event_b);
        t->cc.event = 0;
    }
}

/* t goes to state s (the tracepoint sees every change). */
static void set_state(struct tcb *t, uint8_t s)
{
    if (t->state != s)
        trace_tcp_state(t->id, t->state, s, t->lport, t->rport);
    t->state = s;
}

static void timer_note(uint64_t at)
{
    if (at && (!tcp_first || at < tcp_first))
        tcp_first = at;
}

static void set_timer(uint64_t *deadline, uint64_t at)
{
    *deadline = at;
    timer_note(at);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* ---------------------------------------------------------------- rings */

/* A ring's size; one not had yet or freed (and the scratch block's)
 * counts as a new one, whose window a SYN-ACK or RST from it offers. */
static uint32_t ring_size(const struct ring *r) { return r->buf ? r->size : BUF_BYTES; }
static uint32_t ring_room(const struct ring *r) { return ring_size(r) - r->len; }

/* Copy n bytes to or from offset off of r's data, wrapping. */
static void ring_put(struct ring *r, uint32_t off, const uint8_t *p, uint32_t n)
{
    uint32_t at = (r->head + off) & (r->size - 1), first = min32(n, r->size - at);
    memcpy(r->buf + at, p, first);
    memcpy(r->buf, p + first, n - first);
}

/* n bytes of d from `from` on, to offset off of r's data. */
static void ring_write(struct ring *r, uint32_t off, const struct net_bytes *d, uint32_t from, uint32_t n)
{
    for (unsigned i = 0; i < 2 && n; i++) {
        if (from >= d->n[i]) {
            from -= d->n[i];
            continue;
        }
        uint32_t k = min32(n, d->n[i] - from);
        ring_put(r, off, d->p[i] + from, k);
        off += k;
        n -= k;
        from = 0;
    }
}

/* n bytes from offset off of r's data, where they are (in two pieces
 * where they wrap round). */
static void ring_bytes(const struct ring *r, uint32_t off, uint32_t n, struct net_bytes *d)
{
    uint32_t at = (r->head + off) & (r->size - 1), first = min32(n, r->size - at);
    *d = (struct net_bytes){ { r->buf + at, r->buf }, { first, n - first } };
}

static void ring_read(const struct ring *r, uint32_t off, uint8_t *p, uint32_t n)
{
    uint32_t at = (r->head + off) & (r->size - 1), first = min32(n, r->size - at);
    memcpy(p, r->buf + at, first);
    memcpy(p + first, r->buf, n - first);
}

/* Append n bytes from the client's `from` to r; take n bytes from r's
 * front to the client's `to` (not dropping them). Nonzero: a bad buffer. */
static int ring_copy_in(struct svc_call *call, struct ring *r, uint64_t from, uint32_t n)
{
    uint32_t at = (r->head + r->len) & (r->size - 1), first = min32(n, r->size - at);
    return svc_copy_in(call, r->buf + at, from, first) || svc_copy_in(call, r->buf, from + first, n - first);
}

/* n bytes from off past the ring's first to the client's `to`. */
static int ring_copy_out(struct svc_call *call, const struct ring *r, uint32_t off, uint64_t to, uint32_t n)
{
    uint32_t at = (r->head + off) & (r->size - 1), first = min32(n, r->size - at);
    return svc_copy_out(call, to, r->buf + at, first) || svc_copy_out(call, to + first, r->buf, n - first);
}

static void ring_drop(struct ring *r, uint32_t n)
{
    r->head = (r->head + n) & (r->size - 1);
    r->len -= n;
}

/* ---------------------------------------------------------------- sequence numbers and windows */

/* RFC 6528: a clock ticking every 4 us plus a keyed hash of the
 * connection's four numbers, so that a new incarnation starts above the
 * old one's and an off-path host cannot guess it. */
static uint32_t new_isn(uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport)
{
    if (!isn_key[0]) {
        isn_key[0] = svc_clock_ns() * 0x9e3779b97f4a7c15ull | 1;
        isn_key[1] = (isn_key[0] ^ 0xbf58476d1ce4e5b9ull) * 0x94d049bb133111ebull;
    }
    uint64_t x = ((uint64_t)laddr << 32 | raddr) ^ isn_key[0];
    x ^= ((uint64_t)lport << 16 | rport) * isn_key[1];
    for (int i = 0; i < 3; i++) {                       /* (splitmix64's finaliser, three rounds) */
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        x ^= x >> 31;
    }
    return (uint32_t)x + (uint32_t)(svc_clock_ns() / 4000);
}

/* The MSS the route allows: the largest datagram's to this host (65,495,
 * as Linux's lo), the NIC's MTU's elsewhere. */
static uint32_t route_mss(uint32_t raddr)
{
    int local = (raddr >> 24) == 127 || (net_addr && raddr == net_addr);
    return (local ? IP_MAX : IP_MTU) - IP_HLEN - TCP_HLEN;
}

/* The room for data past rcv_nxt. */
static uint32_t rcv_room(const struct tcb *t)
{
    return ring_room(&t->rcv);
}

/* What is left of half of a cap (SO_SNDBUF or SO_RCVBUF: Linux counts the
 * overhead of its buffers against the other half) beside `used` bytes,
 * within `room`; `room` itself without a cap. */
static uint32_t capped(uint32_t room, uint32_t cap, uint32_t used)
{
    return cap ? min32(room, cap / 2 > used ? cap / 2 - used : 0) : room;
}

/* The room to offer the peer: the receive ring's, within SO_RCVBUF. */
static uint32_t rcv_offer(const struct tcb *t)
{
    return capped(rcv_room(t), t->rcv_cap, t->rcv.len);
}

/* The receive buffer the window is offered from: the ring, or half of
 * SO_RCVBUF if less (for the receiver's silly window avoidance, RFC 9293
 * 3.8.6.2.2, and when ACKs are due). */
static uint32_t rcv_space(const struct tcb *t)
{
    return t->rcv_cap ? min32(t->rcv_cap / 2, ring_size(&t->rcv)) : ring_size(&t->rcv);
}

/* The room for the writer: the send ring's, within SO_SNDBUF. */
static uint32_t snd_room(const struct tcb *t)
{
    return capped(ring_room(&t->snd), t->snd_cap, t->snd.len);
}

/* The window offered last, from rcv_nxt to its right edge. */
static uint32_t offered(const struct tcb *t)
{
    return seq_lt(t->rcv_nxt, t->rcv_adv) ? t->rcv_adv - t->rcv_nxt : 0;
}

/* The window to offer: never shrinking the right edge offered before, and
 * moving it on only by a useful amount (RFC 9293 3.8.6.2.2: at least
 * min(half the buffer, one segment)). */
static uint32_t rcv_window(const struct tcb *t)
{
    uint32_t room = min32(rcv_offer(t), 0xffffu << t->rcv_wscale);
    room &= ~((1u << t->rcv_wscale) - 1);               /* (what the scaled field can say) */
    uint32_t before = offered(t);
    if (room > before && room - before < min32(rcv_space(t) / 2, t->rmss))
        return before;
    return min32(room > before ? room : before, 0xffffu << t->rcv_wscale);
}

/* ---------------------------------------------------------------- options */

/* A segment's options (RFC 9293 3.2, RFC 7323, RFC 2018). */
struct opts {
    uint32_t mss;                       /* 0: none */
    int32_t wscale;                     /* -1: none */
    uint8_t sack_perm, has_ts, nsack;
    uint32_t tsval, tsecr;
    uint32_t sack_start[4], sack_end[4];
};

static void parse_options(const uint8_t *opt, uint32_t len, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->wscale = -1;
    for (uint32_t i = 0; i < len;) {
        uint8_t kind = opt[i];
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        if (i + 1 >= len || opt[i + 1] < 2 || i + opt[i + 1] > len)
            break;                                      /* (a malformed list: what came before holds) */
        uint32_t olen = opt[i + 1];
        const uint8_t *v = opt + i + 2;
        if (kind == 2 && olen == 4) {
            o->mss = get16(v) < MSS_MIN ? MSS_MIN : get16(v);
        } else if (kind == 3 && olen == 3) {
            o->wscale = v[0] > 14 ? 14 : v[0];          /* (RFC 7323 2.3: more is taken as 14) */
        } else if (kind == 4 && olen == 2) {
            o->sack_perm = 1;
        } else if (kind == 5 && olen >= 10 && (olen - 2) % 8 == 0) {
            for (uint32_t k = 0; k < (olen - 2) / 8 && k < 4; k++) {
                o->sack_start[k] = get32(v + 8 * k);
                o->sack_end[k] = get32(v + 8 * k + 4);
                o->nsack = (uint8_t)(k + 1);
            }
        } else if (kind == 8 && olen == 10) {
            o->has_ts = 1;
            o->tsval = get32(v);
            o->tsecr = get32(v + 4);
        }
        i += olen;
    }
}

static uint32_t ts_now(const struct tcb *t)
{
    return (uint32_t)(svc_clock_ns() / TS_TICK_NS) + t->ts_offset;
}

/* The options of a segment of t with `flags` into p, in Linux's order
 * and layout (so that a capture compares with Linux's): a SYN offers (or,
 * answering, accepts) MSS, SACK, timestamps and window scaling; later
 * segments carry the timestamps and, in a pure ACK while early data is
 * held, SACK blocks (the range of the latest segment first). Their length
 * (a multiple of 4). */
static uint32_t write_options(const struct tcb *t, uint8_t *p, uint8_t flags, uint32_t len)
{
    uint32_t n = 0;
    if (flags & SYN) {
        p[n++] = 2;
        p[n++] = 4;
        put16(p + n, t->rmss);
        n += 2;
    }
    if (t->ts_ok) {
        if ((flags & SYN) && t->sack_ok) {
            p[n++] = 4;
            p[n++] = 2;
        } else {
            p[n++] = 1;
            p[n++] = 1;
        }
        p[n++] = 8;
        p[n++] = 10;
        put32(p + n, ts_now(t));
        put32(p + n + 4, t->ts_recent);
        n += 8;
    }
    if ((flags & SYN) && t->ws_ok) {
        p[n++] = 1;
        p[n++] = 3;
        p[n++] = 3;
        p[n++] = WSCALE;
    }
    if ((flags & SYN) && t->sack_ok && !t->ts_ok) {
        p[n++] = 1;
        p[n++] = 1;
        p[n++] = 4;
        p[n++] = 2;
    }
    if (!(flags & (SYN | RST)) && !len && t->sack_ok && t->nooo) {
        uint32_t max = t->ts_ok ? 3 : 4, k = t->nooo < max ? t->nooo : max, latest = 0;
        for (uint32_t i = 0; i < t->nooo; i++)
            if (seq_le(t->ooo_start[i], t->last_early) && seq_lt(t->last_early, t->ooo_end[i]))
                latest = i;
        p[n++] = 1;
        p[n++] = 1;
        p[n++] = 5;
        p[n++] = (uint8_t)(2 + 8 * k);
        put32(p + n, t->ooo_start[latest]);
        put32(p + n + 4, t->ooo_end[latest]);
        n += 8;
        for (uint32_t i = 0, put = 1; i < t->nooo && put < k; i++) {
            if (i == latest)
                continue;
            put32(p + n, t->ooo_start[i]);
            put32(p + n + 4, t->ooo_end[i]);
            n += 8;
            put++;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- output */

/* The checksum field of a segment of len bytes at s: its checksum, or to
 * this host the pseudo-header's sum alone (net_local_check). */
static uint16_t tcp_check(const uint8_t *s, uint32_t len, uint32_t laddr, uint32_t raddr)
{
    uint32_t pseudo = net_pseudo_sum(laddr, raddr, PROTO_TCP, len);
    return net_is_local(raddr) ? net_local_check(pseudo) : inet_checksum(s, len, pseudo);
}

static void send_bare(uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport, uint32_t seq, uint32_t ack,
                      uint8_t flags)
{
    uint8_t *s = net_ip_payload();
    put16(s, lport);
    put16(s + 2, rport);
    put32(s + 4, seq);
    put32(s + 8, ack);
    s[12] = (TCP_HLEN / 4) << 4;
    s[13] = flags;
    put16(s + 14, 0);
    put16(s + 16, 0);
    put16(s + 18, 0);
    put16(s + 16, tcp_check(s, TCP_HLEN, laddr, raddr));
    if (net_ip_send(raddr, PROTO_TCP, s, TCP_HLEN)) {
        net_stat.tx_dropped++;
        return;
    }
    MIB(TCP_OUT_SEGS);
    if (flags & RST)
        MIB(TCP_OUT_RSTS);
}

/* Send one segment of t: seq, flags, and len bytes of the send ring from
 * offset off (with the MSS option when SYN is set). */
static int emit(struct tcb *t, uint32_t seq, uint8_t flags, uint32_t off, uint32_t len)
{
    uint8_t opt[40];
    uint32_t olen = write_options(t, opt, flags, len), hlen = TCP_HLEN + olen, wnd = rcv_window(t);
    uint8_t *s = net_ip_payload_to(t->raddr, hlen + len);  /* (the NIC's buffer, if it can go there whole) */
    memcpy(s + TCP_HLEN, opt, olen);
    if (flags & SYN)
        wnd = min32(rcv_offer(t), 0xffff);              /* (a SYN's window is never scaled) */
    put16(s, t->lport);
    put16(s + 2, t->rport);
    put32(s + 4, seq);
    put32(s + 8, (flags & ACK) ? t->rcv_nxt : 0);
    s[12] = (uint8_t)((hlen / 4) << 4);
    s[13] = flags;
    put16(s + 14, (flags & SYN) ? wnd : wnd >> t->rcv_wscale);
    put16(s + 16, 0);
    put16(s + 18, 0);
    /* To this host, the data stays in the ring until the receiver takes
     * it (net_ip_send_ref): copied once, from this ring to the other's. */
    struct net_bytes d;
    int ref = len && net_is_local(t->raddr);
    if (ref)
        ring_bytes(&t->snd, off, len, &d);
    else if (len)
        ring_read(&t->snd, off, s + hlen, len);
    put16(s + 16, tcp_check(s, hlen + len, t->laddr, t->raddr));
    int err = ref ? net_ip_send_ref(t->raddr, PROTO_TCP, s, hlen, &d) : net_ip_send(t->raddr, PROTO_TCP, s, hlen + len);
    if (err) {
        net_stat.tx_dropped++;
        return err;
    }
    if (flags & ACK) {
        t->t_delack = 0;                                /* (the ACK went with it) */
        t->ack_batched = 0;
        t->rcv_adv = t->rcv_nxt + wnd;
        t->last_ack_sent = t->rcv_nxt;
    }
    net_stat.tcp_out++;
    t->segs_out++;
    MIB(TCP_OUT_SEGS);
    if (flags & RST)
        MIB(TCP_OUT_RSTS);
    return 0;
}

/* An ACK without data: at SND.MAX, not SND.NXT, which a timeout took back
 * (the peer may have had what we sent before, and an ACK below its
 * RCV.NXT is not acceptable to it), but not past the window's right edge
 * (a peer that took part of a segment into the last of its room has a
 * window of 0: only RCV.NXT is acceptable to it). As Linux's
 * tcp_acceptable_seq. */
static void ack_now(struct tcb *t)
{
    emit(t, seq_min(t->snd_max, t->snd_una + t->snd_wnd), ACK, 0, 0);
}

/* The ACK that answers a segment out of place (outside the window, an
 * old timestamp, a RST or SYN not exactly in place, an ACK of what was
 * never sent): at most one in OOW_ACK_NS for those that take no sequence
 * space or carry a SYN (as Linux: two ends each thinking the other out
 * of place would otherwise ACK each other at the speed of the link). */
static void ack_oow(struct tcb *t, uint32_t seg_len, uint8_t flags)
{
    uint64_t now = svc_clock_ns();
    if (!seg_len || (flags & SYN)) {
        if (t->oow_ack_at && now - t->oow_ack_at < OOW_ACK_NS)
            return;
        t->oow_ack_at = now;
    }
    ack_now(t);
}

static void arm_rtx(struct tcb *t)
{
    set_timer(&t->t_rtx, svc_clock_ns() + (uint64_t)t->rto.rto_us * 1000);
}

/* Pacing, as Linux's internal pacing (tcp_update_pacing_rate): segments
 * leave at most at max(cwnd, flight) / SRTT, times 2 in slow start (cwnd
 * under half ssthresh) and 1.2 after it, not in bursts as ACKs open the
 * window. A burst at the speed of the machine fills the queues on the
 * path (the NIC's ring, the next hop's buffer) in an instant, and what
 * overflows them is lost: the window halves though the link had room.
 * Up to PACE_BURST_NS of the rate goes at once after an idle spell; then
 * the pacing timer sends what it let through, PACE_GRAIN_NS at a time.
 * Not to this host (no queue between) nor before the first RTT sample.
 * 1: len bytes may go now (and are counted); 0: not yet (the timer is set). */
static int pace(struct tcb *t, uint32_t len, uint64_t now)
{
    if (!t->rto.srtt_us || net_is_local(t->raddr))
        return 1;
    if (t->pace_at > now) {
        if (!t->t_pace)
            set_timer(&t->t_pace, t->pace_at + PACE_GRAIN_NS);
        return 0;
    }
    uint32_t flight = t->snd_nxt - t->snd_una, window = t->cc.cwnd > flight ? t->cc.cwnd : flight;
    uint32_t ratio = t->cc.cwnd < t->cc.ssthresh / 2 ? PACE_SS_RATIO : PACE_CA_RATIO;
    uint64_t gap = (uint64_t)len * t->rto.srtt_us * 1000 * 100 / ((uint64_t)(window | 1) * ratio);
    uint64_t from = t->pace_at + PACE_BURST_NS > now ? t->pace_at : now - PACE_BURST_NS;
    t->pace_at = from + gap;
    return 1;
}

/* Send what the state, the windows and the send ring allow. */
static void output(struct tcb *t)
{
    uint64_t now = svc_clock_ns();
    if (t->state == T_SYN_SENT || t->state == T_SYN_RECEIVED) {
        if (t->snd_nxt == t->iss) {                     /* the SYN (and our ACK of theirs) */
            if (!t->rtt_at && t->snd_max == t->iss) {
                t->rtt_seq = t->iss;
                t->rtt_at = svc_clock_ns();
            }
            emit(t, t->iss, t->state == T_SYN_SENT ? SYN : SYN | ACK, 0, 0);
            t->snd_nxt = t->snd_max = t->iss + 1;
            if (!t->t_rtx)
                arm_rtx(t);
        }
        return;
    }
    if ((t->state != T_ESTABLISHED && t->state != T_CLOSE_WAIT && t->state != T_FIN_WAIT_1 &&
         t->state != T_CLOSING && t->state != T_LAST_ACK) || t->fin_done)
        return;
    int sack_rec = t->in_recovery && t->sack_ok;
    while (sack_rec) {                                  /* RFC 6675 5 (C): the lost holes first, as the pipe allows */
        uint32_t seq, len;
        uint32_t pipe = tcp_sb_pipe(&t->sb, t->snd_una, t->snd_nxt, t->high_rxt, t->mss);
        if (pipe + t->mss > t->cc.cwnd || !tcp_sb_next_seg(&t->sb, t->snd_una, t->high_rxt, t->mss, 0, &seq, &len))
            break;
        if (!pace(t, len, now))
            return;
        if (emit(t, seq, ACK, seq - t->snd_una, len))
            break;
        t->high_rxt = seq + len;
        count_retrans(t, 1);
        trace_tcp_retransmit(t->id, seq, len, TRACE_TCP_WHY_SACK);
    }
    uint32_t wnd = min32(t->snd_wnd, t->cc.cwnd + t->inflate);
    for (;;) {
        uint32_t end = t->snd_una + t->snd.len;         /* the sequence number after the last byte */
        if (seq_lt(end, t->snd_nxt))
            break;                                      /* (the FIN went) */
        uint32_t sent = t->snd_nxt - t->snd_una, avail = t->snd.len - sent;
        uint32_t flight = t->snd_nxt - t->snd_una;
        uint32_t usable = wnd > flight ? wnd - flight : 0;
        if (sack_rec) {                                 /* (new data, rule 2: within cwnd - pipe) */
            uint32_t pipe = tcp_sb_pipe(&t->sb, t->snd_una, t->snd_nxt, t->high_rxt, t->mss);
            usable = min32(t->snd_wnd > flight ? t->snd_wnd - flight : 0, t->cc.cwnd > pipe ? t->cc.cwnd - pipe : 0);
        }
        uint32_t n = min32(min32(avail, t->mss), usable);
        int fin = t->shut_wr && n == avail;
        if (n < t->mss && n > 0 && flight) {
            if (n < avail && n < t->max_wnd / 2)
                break;                                  /* the sender's silly window avoidance */
            if (n == avail && !t->nodelay && !fin)
                break;                                  /* Nagle: one small segment in flight at a time */
        }
        if (!n && !fin) {
            if (avail && !flight && !t->t_rtx && !t->t_persist) {
                t->persist_us = t->rto.rto_us;          /* a zero window: probe it */
                set_timer(&t->t_persist, svc_clock_ns() + (uint64_t)t->persist_us * 1000);
            }
            break;
        }
        uint8_t flags = ACK | (n && n == avail ? PSH : 0) | (fin ? FIN : 0);
        if (n && !pace(t, n, now))
            break;
        if (emit(t, t->snd_nxt, flags, sent, n)) {
            trace_cwnd(t, TRACE_TCP_WHY_LOCAL);         /* (the transmit path is full: local congestion) */
            if (!t->t_rtx)
                arm_rtx(t);                             /* (no room: the timer sends it again) */
            break;
        }
        if (seq_lt(t->snd_nxt, t->snd_max)) {
            count_retrans(t, 1);
            trace_tcp_retransmit(t->id, t->snd_nxt, n, TRACE_TCP_WHY_TIMEOUT);
        } else if (!t->rtt_at && n) {
            t->rtt_seq = t->snd_nxt;
            t->rtt_at = svc_clock_ns();
        }
        t->snd_nxt += n + (uint32_t)fin;
        t->snd_max = seq_max(t->snd_max, t->snd_nxt);
        t->t_persist = 0;
        if (fin && t->state == T_ESTABLISHED)
            set_state(t, T_FIN_WAIT_1);
        else if (fin && t->state == T_CLOSE_WAIT)
            set_state(t, T_LAST_ACK);
        if (!t->t_rtx)
            arm_rtx(t);
        if (fin)
            break;
    }
}

/* Hold t's ACK to the end of the batch of frames at hand; 0 if it cannot
 * be held: no batch, the list full, or a quarter of the receive ring
 * taken since the last ACK (the sender's window must not run dry while
 * the batch lasts). */
static int ack_later(struct tcb *t)
{
    if (!batching || t->rcv_nxt - t->last_ack_sent >= rcv_space(t) / 4)
        return 0;
    if (!t->ack_batched) {
        if (ack_batched == ACK_BATCH)
            return 0;
        ack_batch[ack_batched++] = t;
        t->ack_batched = 1;
    }
    return 1;
}

/* Acknowledge received data: at once, or within DELACK_NS for a lone
 * segment; the second one is acknowledged at once, or at the end of the
 * batch of frames it came in. */
static void ack_soon(struct tcb *t, int now)
{
    if (now || t->t_delack) {
        if (now || !ack_later(t))
            ack_now(t);
        return;
    }
    set_timer(&t->t_delack, svc_clock_ns() + DELACK_NS);
}

void net_tcp_batch(int start)
{
    batching = (unsigned)start;
    if (start)
        return;
    for (unsigned i = 0; i < ack_batched; i++) {
        struct tcb *t = ack_batch[i];
        if (t->ack_batched && t->pid && t->state != T_CLOSED)
            ack_now(t);
        t->ack_batched = 0;
    }
    ack_batched = 0;
}

/* ---------------------------------------------------------------- the table */

static void free_ring(struct ring *r)
{
    net_loop_forget(r->buf, r->size);                   /* (segments to this host may refer to it) */
    net_free(r->buf, r->size);
    *r = (struct ring){ 0 };
}

static void free_buffers(struct tcb *t)
{
    free_ring(&t->snd);
    free_ring(&t->rcv);
}

static void tcb_free(struct tcb *t)
{
    free_buffers(t);
    if (t->sock)
        t->sock->tcb = NULL;
    memset(t, 0, sizeof *t);
}

/* A free slot for client pid: a TIME_WAIT gives way (the oldest first)
 * when the table or the client's share is full. */
static struct tcb *tcb_new(uint64_t pid)
{
    unsigned mine = 0;
    struct tcb *slot = NULL, *oldest_wait = NULL, *my_oldest_wait = NULL;
    for (unsigned i = 0; i < NTCB; i++) {
        struct tcb *t = &tcbs[i];
        if (!t->pid) {
            slot = slot ? slot : t;
            continue;
        }
        mine += t->pid == pid;
        if (t->state == T_TIME_WAIT && !t->sock) {
            if (!oldest_wait || t->t_wait < oldest_wait->t_wait)
                oldest_wait = t;
            if (t->pid == pid && (!my_oldest_wait || t->t_wait < my_oldest_wait->t_wait))
                my_oldest_wait = t;
        }
    }
    if (mine >= TCB_PER_PID) {
        if (!my_oldest_wait)
            return NULL;
        tcb_free(my_oldest_wait);
        slot = my_oldest_wait;
    } else if (!slot) {
        if (!oldest_wait)
            return NULL;
        tcb_free(oldest_wait);
        slot = oldest_wait;
    }
    memset(slot, 0, sizeof *slot);
    static uint32_t last_id;
    slot->id = ++last_id;
    slot->pid = pid;
    if ((unsigned)(slot - tcbs) >= tcb_top)
        tcb_top = (unsigned)(slot - tcbs) + 1;
    slot->state = T_CLOSED;
    slot->mss = MSS_DEFAULT;
    slot->keep_idle = KEEP_IDLE_S;
    slot->keep_intvl = KEEP_INTVL_S;
    slot->keep_cnt = KEEP_CNT;
    tcp_rto_init(&slot->rto);
    return slot;
}

static int get_buffers(struct tcb *t)
{
    t->snd.buf = net_alloc(BUF_BYTES);
    t->rcv.buf = t->snd.buf ? net_alloc(BUF_BYTES) : NULL;
    t->snd.size = t->snd.buf ? BUF_BYTES : 0;
    t->rcv.size = t->rcv.buf ? BUF_BYTES : 0;
    if (!t->rcv.buf) {
        free_buffers(t);
        return SVC_E_NOMEM;
    }
    return 0;
}

/* Is t the connection (not a listener) of these four numbers? */
static int tcb_is(const struct tcb *t, uint32_t laddr, uint16_t lport, uint32_t raddr, uint16_t rport)
{
    return t->pid && t->state != T_CLOSED && t->state != T_LISTEN && t->lport == lport && t->raddr == raddr &&
           t->rport == rport && t->laddr == laddr;
}

/* Double a ring of t's, its contents kept at their offsets (early data
 * past the read part too), when a ring of BUF_MAX would not be passed and
 * t's client's grown rings would add at most GROWN_MAX bytes. 0 if done.
 * (Linux grows a connection's buffers the same way, to net.ipv4.tcp_rmem
 * and tcp_wmem's limits: a window of 64 KiB is less than a fast link
 * holds in one round trip.) */
static int ring_grow(struct tcb *t, struct ring *r)
{
    if (!r->buf || r->size >= BUF_MAX)
        return -1;
    uint64_t grown = 0;
    for (unsigned i = 0; i < tcb_top; i++) {
        const struct tcb *c = &tcbs[i];
        if (c->pid == t->pid)
            grown += (c->snd.size > BUF_BYTES ? c->snd.size - BUF_BYTES : 0) +
                     (c->rcv.size > BUF_BYTES ? c->rcv.size - BUF_BYTES : 0);
    }
    uint8_t *buf;
    if (grown + r->size > GROWN_MAX || !(buf = net_alloc(r->size * 2)))
        return -1;
    ring_read(r, 0, buf, r->len);                       /* (the bytes it holds: a receive ring grows empty) */
    net_loop_forget(r->buf, r->size);
    net_free(r->buf, r->size);
    r->buf = buf;
    r->head = 0;
    r->size *= 2;
    return 0;
}

/* The connection of the four numbers, else the listener on the port. */
static struct tcb *tcb_find(uint32_t laddr, uint16_t lport, uint32_t raddr, uint16_t rport)
{
    if (last_found && tcb_is(last_found, laddr, lport, raddr, rport))
        return last_found;
    struct tcb *listener = NULL;
    for (unsigned i = 0; i < tcb_top; i++) {
        struct tcb *t = &tcbs[i];
        if (!t->pid || t->lport != lport || t->state == T_CLOSED)
            continue;
        if (t->state == T_LISTEN) {
            if (!t->laddr || t->laddr == laddr)
                listener = t;
            continue;
        }
        if (tcb_is(t, laddr, lport, raddr, rport))
            return last_found = t;
    }
    return listener;
}

/* Tell the socket (or the listener it waits for) that something changed. */
static void wake(struct tcb *t)
{
    if (t->sock)
        net_sock_wake(t->sock);
    else if (t->listener && t->listener->sock)
        net_sock_wake(t->listener->sock);
}

/* t goes from its state to CLOSED: Linux's counters of that (tcp_set_state, tcp_done). */
static void count_closing(const struct tcb *t)
{
    if (t->state == T_SYN_SENT || (t->state == T_SYN_RECEIVED && !t->listener))
        MIB(TCP_ATTEMPT_FAILS);                         /* (a listener's half-open one is Linux's request socket: not counted) */
    else if (t->state == T_ESTABLISHED || t->state == T_CLOSE_WAIT)
        MIB(TCP_ESTAB_RESETS);
}

/* The connection is over: its error and the data received kept for its
 * socket (an orphan, or one not accepted yet, is freed). */
static void tcb_end(struct tcb *t, int32_t err)
{
    count_closing(t);
    set_state(t, T_CLOSED);
    t->err = err;
    t->shut_rd = t->shut_wr = 1;
    t->t_rtx = t->t_delack = t->t_wait = t->t_persist = t->t_keep = t->t_pace = 0;
    if (!t->sock) {
        tcb_free(t);
        return;
    }
    free_ring(&t->snd);
    t->nooo = 0;
    net_sock_wake(t->sock);
}

static void reset(struct tcb *t)
{
    send_bare(t->laddr, t->raddr, t->lport, t->rport, t->snd_max, 0, RST);
}

/* TIME_WAIT: nothing more to send; an orphan needs no rings any more. */
static void enter_time_wait(struct tcb *t, uint64_t now)
{
    set_state(t, T_TIME_WAIT);
    set_timer(&t->t_wait, now + TIME_WAIT_NS);
    t->t_rtx = t->t_persist = t->t_keep = t->t_pace = 0;
    free_ring(&t->snd);
    if (!t->sock)
        free_ring(&t->rcv);
}

/* ---------------------------------------------------------------- keepalive */

static int synchronized(const struct tcb *t)
{
    return t->state != T_CLOSED && t->state != T_LISTEN && t->state != T_SYN_SENT && t->state != T_SYN_RECEIVED &&
           t->state != T_TIME_WAIT;
}

/* The keepalive timer at the idle time after the last segment came (or
 * none: keepalive off, or not connected). */
static void keep_arm(struct tcb *t)
{
    uint64_t now = svc_clock_ns(), at = t->last_rcv + (uint64_t)t->keep_idle * 1000000000ull;
    set_timer(&t->t_keep, t->keepalive && synchronized(t) ? (at > now ? at : now) : 0);
}

/* As Linux's tcp_keepalive_timer: nothing while data is out or queued;
 * idle long enough, a probe (an ACK one below SND.UNA) every interval;
 * when `keep_cnt` went unanswered, a RST and ETIMEDOUT. */
static void keep_timer(struct tcb *t, uint64_t now)
{
    uint64_t idle = (uint64_t)t->keep_idle * 1000000000ull;
    t->t_keep = 0;
    if (!t->keepalive || !synchronized(t))
        return;
    if (t->snd_max != t->snd_una || t->snd.len) {
        set_timer(&t->t_keep, now + idle);
        return;
    }
    if (now - t->last_rcv < idle) {
        set_timer(&t->t_keep, t->last_rcv + idle);
        return;
    }
    if (t->keep_sent >= t->keep_cnt) {
        reset(t);
        tcb_end(t, ETIMEDOUT);
        return;
    }
    emit(t, t->snd_una - 1, ACK, 0, 0);
    t->keep_sent++;
    set_timer(&t->t_keep, now + (uint64_t)t->keep_intvl * 1000000000ull);
}

/* ---------------------------------------------------------------- input */

/* RFC 9293 3.10.7.4's acceptability test, against the room we have. With
 * no room, a segment exactly at RCV.NXT is let in for its ACK, window and
 * RST (the RFC's "special allowance"; take_data refuses its data). */
static int acceptable(const struct tcb *t, uint32_t seq, uint32_t len)
{
    uint32_t wnd = rcv_room(t);
    if (!len || !wnd)
        return wnd ? seq_le(t->rcv_nxt, seq) && seq_lt(seq, t->rcv_nxt + wnd) : seq == t->rcv_nxt;
    uint32_t last = seq + len - 1;
    return (seq_le(t->rcv_nxt, seq) && seq_lt(seq, t->rcv_nxt + wnd)) ||
           (seq_le(t->rcv_nxt, last) && seq_lt(last, t->rcv_nxt + wnd));
}

/* The options a SYN (or SYN-ACK) agreed, and the congestion module
 * started for the segment size they give (the timestamps take 12 bytes of
 * every segment, as Linux counts them). */
static void agree(struct tcb *t, const struct opts *o)
{
    t->ts_ok = t->ts_ok && o->has_ts;
    t->sack_ok = t->sack_ok && o->sack_perm;
    t->ws_ok = t->ws_ok && o->wscale >= 0;
    t->snd_wscale = t->ws_ok ? (uint8_t)o->wscale : 0;
    t->rcv_wscale = t->ws_ok ? WSCALE : 0;
    if (t->ts_ok) {
        t->ts_recent = o->tsval;
        t->ts_recent_at = svc_clock_ns();
    }
    t->mss = min32(o->mss ? o->mss : MSS_DEFAULT, route_mss(t->raddr)) - (t->ts_ok ? 12 : 0);
    tcp_cc_start(&t->cc, t->cc.ops ? t->cc.ops : tcp_cc_modules[net_tcp_default_cc], t->mss);
    trace_cwnd(t, TRACE_TCP_WHY_INIT);
}

static void offer_options(struct tcb *t)
{
    t->ts_ok = t->sack_ok = t->ws_ok = 1;
    t->ts_offset = (uint32_t)new_isn(t->raddr, t->laddr, t->rport, t->lport);
}

static void established(struct tcb *t, const uint8_t *s, uint32_t off, uint32_t tlen, const struct opts *o);

/* ---------------------------------------------------------------- a listener's queue, SYN cookies */

/* The listener's connections in SYN_RECEIVED, and those established and
 * waiting for accept. */
static void queue_counts(const struct tcb *l, unsigned *half, unsigned *ready)
{
    for (unsigned i = 0; i < tcb_top; i++) {
        if (!tcbs[i].pid || tcbs[i].listener != l)
            continue;
        if (tcbs[i].state == T_SYN_RECEIVED)
            ++*half;
        else
            ++*ready;
    }
}

/* Linux's sk_acceptq_is_full: the accept queue takes one connection past
 * the backlog (listen(2) on Linux with a backlog of 2 has 3 established
 * and waiting), then SYNs and the ACKs that would complete one are dropped. */
static int accept_queue_full(const struct tcb *l)
{
    unsigned half = 0, ready = 0;
    queue_counts(l, &half, &ready);
    return ready > l->backlog;
}

/* A new connection of listener l from raddr:rport, its receive sequence
 * at rcv_nxt, in SYN_RECEIVED with the listener's options; NULL if no
 * slot or memory. */
static struct tcb *child(struct tcb *l, uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport,
                         uint32_t rcv_nxt)
{
    struct tcb *c = tcb_new(l->pid);
    if (!c)
        return NULL;
    if (get_buffers(c)) {
        tcb_free(c);
        return NULL;
    }
    c->laddr = laddr;
    c->raddr = raddr;
    c->lport = lport;
    c->rport = rport;
    set_state(c, T_SYN_RECEIVED);
    c->used = 1;
    c->nodelay = l->nodelay;                            /* (a listener's options are its connections') */
    c->linger0 = l->linger0;
    c->keepalive = l->keepalive;
    c->keep_idle = l->keep_idle;
    c->keep_intvl = l->keep_intvl;
    c->keep_cnt = l->keep_cnt;
    c->snd_cap = l->snd_cap;
    c->rcv_cap = l->rcv_cap;
    c->irs = rcv_nxt - 1;
    c->rcv_nxt = c->rcv_adv = c->last_ack_sent = rcv_nxt;
    c->segs_in = 1;                                     /* (the segment it is made for, as Linux's child) */
    c->rmss = route_mss(raddr);
    c->cc.ops = l->cc.ops;
    c->listener = l;
    c->born = ++born_clock;
    return c;
}

/* SYN cookies (RFC 4987 3.6, in the manner of Linux's): when a listener
 * has as many connections half open as its backlog, a SYN is answered
 * without keeping anything; its ISN carries a time (5 bits of a 64 s
 * clock), the MSS (an index into cookie_mss) and 24 bits of a keyed hash
 * of the connection's four numbers, the peer's ISN and that time. The ACK
 * that returns it makes the connection (without window scaling,
 * timestamps or SACK: a cookie has no room for them). */
static const uint16_t cookie_mss[4] = { 536, 1300, 1440, 1460 };

static uint32_t cookie_hash(uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport, uint32_t irs,
                            uint32_t period, uint32_t m)
{
    new_isn(0, 0, 0, 0);                                /* (the key made) */
    uint64_t x = ((uint64_t)laddr << 32 | raddr) ^ isn_key[1];
    x ^= ((uint64_t)lport << 48 | (uint64_t)rport << 32 | irs) * isn_key[0];
    x ^= ((uint64_t)m << 32 | period) * 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3; i++) {
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 29;
    }
    return (uint32_t)x & 0xffffff;
}

static uint32_t cookie_period(void)
{
    return (uint32_t)(svc_clock_ns() / 64000000000ull);
}

static void send_cookie(struct tcb *l, uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport,
                        uint32_t irs, const struct opts *o)
{
    struct tcb *c = &tcbs[NTCB];                        /* (nothing kept: a scratch block to send from) */
    uint32_t mss = o->mss ? o->mss : MSS_DEFAULT, m = 0, period = cookie_period();
    while (m < 3 && cookie_mss[m + 1] <= mss)
        m++;
    memset(c, 0, sizeof *c);
    c->laddr = laddr;
    c->raddr = raddr;
    c->lport = lport;
    c->rport = rport;
    c->rcv_nxt = irs + 1;
    c->rmss = route_mss(raddr);
    uint32_t cookie = (period & 31) << 27 | m << 24 | cookie_hash(laddr, raddr, lport, rport, irs, period, m);
    if (emit(c, cookie, SYN | ACK, 0, 0) == 0)
        net_stat.syn_cookies++;
    l->cookie_at = svc_clock_ns();
}

/* The connection an ACK to a listener makes if it returns a cookie
 * (*valid) and the accept queue has room; NULL otherwise. */
static struct tcb *from_cookie(struct tcb *l, uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport,
                               uint32_t seq, uint32_t ackn, uint32_t wnd, int *valid)
{
    uint32_t cookie = ackn - 1, now = cookie_period(), m = cookie >> 24 & 7, period = 0;
    for (uint32_t back = 0; back < 2 && !*valid; back++) {
        period = now - back;
        *valid = (period & 31) == cookie >> 27 && m < 4 &&
                 cookie_hash(laddr, raddr, lport, rport, seq - 1, period, m) == (cookie & 0xffffff);
    }
    /* (only while the listener has sent cookies lately, as Linux: a blind
     * guess needs the listener flooded too) */
    *valid = *valid && l->cookie_at && svc_clock_ns() - l->cookie_at < 2 * 64000000000ull;
    if (!*valid || accept_queue_full(l))
        return NULL;
    struct tcb *c = child(l, laddr, raddr, lport, rport, seq);
    if (!c)
        return NULL;
    struct opts o = { .mss = cookie_mss[m], .wscale = -1 };
    agree(c, &o);
    c->snd_wnd = c->max_wnd = wnd;
    c->snd_wl1 = seq - 1;
    c->iss = c->snd_una = c->recover = cookie;
    c->snd_nxt = c->snd_max = cookie + 1;
    return c;
}

void net_tcp_input(const uint8_t *ip, uint32_t hlen, uint32_t len, int to_broadcast, int from_wire)
{
    const uint8_t *s = ip + hlen;
    uint32_t tlen = len - hlen, src = get32(ip + 12), dst = get32(ip + 16);
    uint32_t off = tlen >= TCP_HLEN ? (uint32_t)(s[12] >> 4) * 4 : 0;
    MIB(TCP_IN_SEGS);
    int bad_sum = off >= TCP_HLEN && off <= tlen && from_wire &&
                  inet_checksum(s, tlen, net_pseudo_sum(src, dst, PROTO_TCP, tlen)) != 0;
    if (off < TCP_HLEN || off > tlen || bad_sum) {
        if (bad_sum)
            MIB(TCP_IN_CSUM_ERRORS);
        MIB(TCP_IN_ERRS);
        net_stat.ip_dropped++;                          /* too short, bad offset or bad checksum */
        return;
    }
    if (to_broadcast || !table_ready())
        return;
    net_stat.tcp_in++;
    uint32_t seq = get32(s + 4), ackn = get32(s + 8);
    uint16_t sport = get16(s), dport = get16(s + 2);
    uint8_t flags = s[13];
    uint32_t seg_len = tlen - off + !!(flags & SYN) + !!(flags & FIN);
    struct opts o;
    parse_options(s + TCP_HLEN, off - TCP_HLEN, &o);
    struct tcb *t = tcb_find(dst, dport, src, sport);
    if (!t) {                                           /* 3.10.7.1 */
        if (flags & RST)
            return;
        if (flags & ACK)
            send_bare(dst, src, dport, sport, ackn, 0, RST);
        else
            send_bare(dst, src, dport, sport, 0, seq + seg_len, RST | ACK);
        return;
    }
    t->segs_in++;                                       /* (a listener's: the SYNs and cookie ACKs it took) */
    if (t->state == T_LISTEN) {                         /* 3.10.7.2 */
        if (flags & RST)
            return;
        unsigned half = 0, ready = 0;
        queue_counts(t, &half, &ready);
        if ((flags & ACK) && !(flags & SYN)) {
            int valid = 0;
            struct tcb *c = from_cookie(t, dst, src, dport, sport, seq, ackn, get16(s + 14), &valid);
            if (!c) {
                if (!valid)
                    send_bare(dst, src, dport, sport, ackn, 0, RST);
                return;                                 /* (a good cookie, no room: the peer sends again) */
            }
            t = c;                                      /* (on as a connection in SYN_RECEIVED) */
        } else {
            if (flags & ACK) {
                send_bare(dst, src, dport, sport, ackn, 0, RST);
                return;
            }
            if (!(flags & SYN) || ready > t->backlog)
                return;                                 /* (a full accept queue: the peer tries again) */
            if (half >= t->backlog) {
                send_cookie(t, dst, src, dport, sport, seq, &o);
                return;
            }
            struct tcb *c = child(t, dst, src, dport, sport, seq + 1);
            if (!c) {                                   /* (no slot or memory for it: a cookie then) */
                send_cookie(t, dst, src, dport, sport, seq, &o);
                return;
            }
            offer_options(c);
            agree(c, &o);
            c->snd_wnd = c->max_wnd = get16(s + 14);
            c->snd_wl1 = seq;
            c->iss = c->snd_una = c->snd_nxt = c->snd_max = c->recover = new_isn(dst, src, dport, sport);
            output(c);
            net_timers_update();
            return;
        }
    }
    if (t->state == T_SYN_SENT) {                       /* 3.10.7.3 */
        if ((flags & ACK) && (seq_le(ackn, t->iss) || seq_lt(t->snd_max, ackn))) {
            if (!(flags & RST))
                send_bare(dst, src, dport, sport, ackn, 0, RST);
            return;
        }
        if (flags & RST) {
            if (flags & ACK)
                tcb_end(t, ECONNREFUSED);
            return;
        }
        if (!(flags & SYN))
            return;
        t->irs = seq;
        t->rcv_nxt = t->rcv_adv = t->last_ack_sent = seq + 1;
        agree(t, &o);
        if (flags & ACK) {
            t->bytes_acked += ackn - t->snd_una;        /* (our SYN: Linux counts it on the side that
                                                         * connects, not on the one that accepts) */
            t->snd_una = ackn;
            t->snd_wnd = t->max_wnd = get16(s + 14);
            t->snd_wl1 = seq;
            t->snd_wl2 = ackn;
            set_state(t, T_ESTABLISHED);
            t->t_rtx = 0;
            t->retries = 0;
            t->last_rcv = svc_clock_ns();
            keep_arm(t);
            if (t->rtt_at) {
                rtt_sample(t, (uint32_t)((svc_clock_ns() - t->rtt_at) / 1000));
                t->rtt_at = 0;
            }
            ack_now(t);
            output(t);
        } else {                                        /* simultaneous open */
            set_state(t, T_SYN_RECEIVED);
            emit(t, t->iss, SYN | ACK, 0, 0);
        }
        wake(t);
        net_timers_update();
        return;
    }
    /* RFC 7323 5.3: PAWS, an old timestamp marks an old duplicate. */
    if (t->ts_ok && o.has_ts && !(flags & RST) && (int32_t)(o.tsval - t->ts_recent) < 0) {
        if (svc_clock_ns() - t->ts_recent_at <= PAWS_IDLE_NS) {
            ack_oow(t, seg_len, flags);
            return;
        }
        t->ts_recent = o.tsval;                         /* (idle past 24 days: TS.Recent is no more) */
    }
    if (!acceptable(t, seq, seg_len)) {                 /* 3.10.7.4, first */
        if (t->state == T_SYN_RECEIVED && (flags & (SYN | ACK | RST)) == SYN && seq == t->irs) {
            emit(t, t->iss, SYN | ACK, 0, 0);           /* the peer's SYN again: our SYN-ACK was lost */
            return;
        }
        if (t->state == T_TIME_WAIT && (flags & FIN) && !(flags & RST))
            set_timer(&t->t_wait, svc_clock_ns() + TIME_WAIT_NS);  /* its FIN again: our last ACK was lost (RFC 9293 3.10.7.4) */
        if (!(flags & RST))
            ack_oow(t, seg_len, flags);
        return;
    }
    t->last_rcv = svc_clock_ns();
    t->keep_sent = 0;
    t->probes = 0;
    if (t->ts_ok && o.has_ts && (int32_t)(o.tsval - t->ts_recent) >= 0 && seq_le(seq, t->last_ack_sent)) {
        t->ts_recent = o.tsval;                         /* (RFC 7323 4.3) */
        t->ts_recent_at = svc_clock_ns();
    }
    if (flags & RST) {                                  /* second (RFC 5961 3.2: exactly at RCV.NXT) */
        if (seq != t->rcv_nxt) {
            ack_oow(t, seg_len, flags);                 /* a challenge ACK */
            return;
        }
        if (t->state == T_SYN_RECEIVED && t->listener) {
            tcb_free(t);                                /* back to LISTEN: the listener's */
            return;
        }
        int32_t why = t->state == T_SYN_RECEIVED ? ECONNREFUSED : ECONNRESET;
        if (t->state == T_CLOSING || t->state == T_LAST_ACK || t->state == T_TIME_WAIT)
            why = 0;
        tcb_end(t, why);
        net_timers_update();
        return;
    }
    if (flags & SYN) {                                  /* fourth (RFC 5961 4.2): a challenge ACK */
        ack_oow(t, seg_len, flags);
        return;
    }
    if (!(flags & ACK))
        return;
    established(t, s, off, tlen, &o);
    if (t->pid)
        wake(t);
    net_timers_update();
}

/* Take early data [seq, seq + n) into the receive ring at its place, its
 * range kept (merged with those it touches); dropped when the ranges are
 * all in use and it touches none. */
static void hold_early(struct tcb *t, uint32_t seq, const struct net_bytes *data, uint32_t from, uint32_t n)
{
    uint32_t start = seq, end = seq + n;
    unsigned i = 0;
    while (i < t->nooo && seq_lt(t->ooo_end[i], start))
        i++;
    unsigned j = i;                                     /* [i, j): the ranges it touches */
    while (j < t->nooo && seq_le(t->ooo_start[j], end))
        j++;
    if (i == j && t->nooo == OOO_RANGES)
        return;
    ring_write(&t->rcv, t->rcv.len + (seq - t->rcv_nxt), data, from, n);
    t->last_early = seq;
    if (i < j) {
        start = seq_min(start, t->ooo_start[i]);
        end = seq_max(end, t->ooo_end[j - 1]);
    }
    unsigned removed = j - i;                           /* replaced by one */
    if (removed == 0) {
        memmove(&t->ooo_start[i + 1], &t->ooo_start[i], (t->nooo - i) * sizeof t->ooo_start[0]);
        memmove(&t->ooo_end[i + 1], &t->ooo_end[i], (t->nooo - i) * sizeof t->ooo_end[0]);
        t->nooo++;
    } else if (removed > 1) {
        memmove(&t->ooo_start[i + 1], &t->ooo_start[j], (t->nooo - j) * sizeof t->ooo_start[0]);
        memmove(&t->ooo_end[i + 1], &t->ooo_end[j], (t->nooo - j) * sizeof t->ooo_end[0]);
        t->nooo = (uint8_t)(t->nooo - (removed - 1));
    }
    t->ooo_start[i] = start;
    t->ooo_end[i] = end;
}

/* The data of a segment, trimmed to what is new and fits. 1 if it was in
 * order (rcv_nxt moved). */
static int take_data(struct tcb *t, uint32_t seq, const struct net_bytes *data, uint32_t dlen, int *early)
{
    uint32_t from = 0;
    if (seq_lt(seq, t->rcv_nxt)) {                      /* (the front was had already) */
        from = min32(t->rcv_nxt - seq, dlen);
        dlen -= from;
        seq += from;
    }
    uint32_t room = rcv_room(t);
    if (!dlen || seq - t->rcv_nxt >= room)
        return 0;
    dlen = min32(dlen, room - (seq - t->rcv_nxt));
    if (seq != t->rcv_nxt) {
        hold_early(t, seq, data, from, dlen);
        *early = 1;
        return 0;
    }
    ring_write(&t->rcv, t->rcv.len, data, from, dlen);
    t->rcv.len += dlen;
    t->rcv_nxt += dlen;
    t->bytes_received += dlen;
    if (t->rcv_nxt == t->rcv_adv)
        t->rcv_edge = 1;                                /* the window held the peer back */
    while (t->nooo && seq_le(t->ooo_start[0], t->rcv_nxt)) {   /* early data now in order */
        if (seq_lt(t->rcv_nxt, t->ooo_end[0])) {
            t->rcv.len += t->ooo_end[0] - t->rcv_nxt;
            t->bytes_received += t->ooo_end[0] - t->rcv_nxt;
            t->rcv_nxt = t->ooo_end[0];
        }
        t->nooo--;
        memmove(&t->ooo_start[0], &t->ooo_start[1], t->nooo * sizeof t->ooo_start[0]);
        memmove(&t->ooo_end[0], &t->ooo_end[1], t->nooo * sizeof t->ooo_end[0]);
        *early = 1;                                     /* (a hole filled: acknowledged at once) */
    }
    return 1;
}

/* New data acknowledged (RFC 9293 3.10.7.4's fifth step; RFC 5681, 6582
 * and 6298 for what it does to the window and the timer). */
static void new_ack(struct tcb *t, uint32_t ackn, uint64_t now, const struct opts *o, struct tcp_cc_ack *told)
{
    uint32_t acked = ackn - t->snd_una, data = acked;
    if (data > t->snd.len) {                            /* (our FIN too) */
        data = t->snd.len;
        t->fin_done = 1;
    }
    ring_drop(&t->snd, data);
    t->bytes_acked += acked;                            /* (our FIN too, as Linux's tcpi_bytes_acked) */
    t->snd_una = ackn;
    if (seq_lt(t->snd_nxt, ackn))
        t->snd_nxt = ackn;
    t->retries = 0;
    t->dupacks = 0;
    uint32_t sacked_before = tcp_sb_ack(&t->sb, ackn);
    told->acked = data > sacked_before ? data - sacked_before : 0;
    if (seq_lt(t->high_rxt, ackn))
        t->high_rxt = ackn;
    /* An RTT sample: of the segment timed (Karn's rule kept), else by the
     * timestamp echoed (RFC 7323 4.1; a tick of 1 ms at least, as Linux). */
    uint32_t rtt = 0;
    if (t->rtt_at && seq_lt(t->rtt_seq, ackn)) {
        rtt = (uint32_t)((now - t->rtt_at) / 1000);
        rtt = rtt ? rtt : 1;
        t->rtt_at = 0;
        told->rtt_fine = 1;
    } else if (t->ts_ok && o->has_ts && o->tsecr && ts_now(t) - o->tsecr < 60000) {
        uint32_t ms = ts_now(t) - o->tsecr;
        rtt = ms ? ms * 1000 : 1000;
    }
    if (rtt)
        rtt_sample(t, rtt);
    told->rtt_us = rtt;
    if (t->in_recovery && seq_le(t->recover, ackn)) {
        t->in_recovery = 0;
        t->inflate = 0;
        t->cc.ops->recovered(&t->cc, t->snd_max - t->snd_una);
        cc_event(t);
        trace_cwnd(t, TRACE_TCP_WHY_RECOVERED);
    } else if (t->in_recovery && t->sack_ok) {
        /* RFC 6675: the holes go as the pipe lets them (output). */
    } else if (t->in_recovery) {                        /* RFC 6582: a partial ACK, the next hole */
        emit(t, t->snd_una, ACK, 0, min32(t->snd.len, t->mss));
        count_retrans(t, 1);
        trace_tcp_retransmit(t->id, t->snd_una, min32(t->snd.len, t->mss), TRACE_TCP_WHY_DUPACK);
        t->inflate = (t->inflate > acked ? t->inflate - acked : 0) + t->mss;
    } else if (data) {
        struct tcp_cc_ack a = { data, rtt, t->rto.srtt_us, t->snd_una, t->snd_nxt, now / 1000, told->rtt_fine };
        uint32_t cwnd = t->cc.cwnd, ssthresh = t->cc.ssthresh;
        t->cc.ops->ack(&t->cc, &a);
        cc_event(t);
        if (t->cc.cwnd != cwnd || t->cc.ssthresh != ssthresh)
            trace_cwnd(t, TRACE_TCP_WHY_ACK);
    }
    set_timer(&t->t_rtx, t->snd_una == t->snd_max ? 0 : now + (uint64_t)t->rto.rto_us * 1000);
}

/* ACK, data and FIN of a segment in a synchronized state (3.10.7.4's fifth
 * step on). */
/* Loss detected (RFC 5681 3.2, RFC 6675 5): ssthresh and cwnd from the
 * module, the first segment not acknowledged sent again at once. */
static void enter_recovery(struct tcb *t, uint64_t now)
{
    unsigned why = t->dupacks >= TCP_DUPTHRESH ? TRACE_TCP_WHY_DUPACK : TRACE_TCP_WHY_SACK;
    t->cc.ops->congestion(&t->cc, t->snd_max - t->snd_una, now / 1000);
    cc_event(t);
    trace_cwnd(t, why);
    t->in_recovery = 1;
    t->recover = t->snd_max;
    t->inflate = t->sack_ok ? 0 : TCP_DUPTHRESH * t->mss;
    t->rtt_at = 0;                                      /* (Karn) */
    uint32_t n = min32(t->snd.len, t->mss);
    if (t->sack_ok) {
        uint32_t seq, len;
        if (!tcp_sb_next_seg(&t->sb, t->snd_una, t->snd_una, t->mss, 1, &seq, &len)) {
            seq = t->snd_una;
            len = n;
        }
        n = seq == t->snd_una ? len : n;
        t->high_rxt = t->snd_una + n;
    }
    emit(t, t->snd_una, ACK, 0, n);
    count_retrans(t, 1);
    trace_tcp_retransmit(t->id, t->snd_una, n, why);
    arm_rtx(t);                                         /* (the oldest segment sent again: its timer anew, as Linux) */
}

static void established(struct tcb *t, const uint8_t *s, uint32_t off, uint32_t tlen, const struct opts *o)
{
    uint32_t seq = get32(s + 4), ackn = get32(s + 8), wnd = (uint32_t)get16(s + 14) << t->snd_wscale;
    uint8_t flags = s[13];
    uint64_t now = svc_clock_ns();
    if (t->state == T_SYN_RECEIVED) {
        if (!(seq_lt(t->snd_una, ackn) && seq_le(ackn, t->snd_max))) {
            send_bare(t->laddr, t->raddr, t->lport, t->rport, ackn, 0, RST);
            return;
        }
        if (t->listener && accept_queue_full(t->listener))
            return;         /* (dropped, as Linux with tcp_abort_on_overflow 0: our SYN-ACK goes again, then the ACK) */
        if (t->listener)
            MIB(TCP_PASSIVE_OPENS);
        set_state(t, T_ESTABLISHED);
        keep_arm(t);
        t->snd_una = t->iss + 1;                        /* (our SYN acknowledged: what new_ack sees is data) */
        t->retries = 0;
        t->t_rtx = t->snd_una == t->snd_max ? 0 : t->t_rtx;
        if (t->rtt_at) {
            rtt_sample(t, (uint32_t)((now - t->rtt_at) / 1000) + 1);
            t->rtt_at = 0;
        }
        t->snd_wnd = wnd;
        t->max_wnd = wnd > t->max_wnd ? wnd : t->max_wnd;
        t->snd_wl1 = seq;
        t->snd_wl2 = ackn;
    }
    if (seq_lt(t->snd_max, ackn)) {                     /* acknowledges what was never sent */
        ack_oow(t, tlen - off + !!(flags & FIN), flags);
        return;
    }
    int advanced = seq_lt(t->snd_una, ackn);
    struct tcp_cc_ack told = { 0 };
    if (advanced)
        new_ack(t, ackn, now, o, &told);
    uint32_t sacked = 0;
    for (unsigned k = 0; t->sack_ok && k < o->nsack; k++)
        sacked += tcp_sb_add(&t->sb, t->snd_una, t->snd_max, o->sack_start[k], o->sack_end[k]);
    if (t->cc.ops->delivered && told.acked + sacked) {  /* (the module that measures the delivery rate) */
        told.acked += sacked;
        told.srtt_us = t->rto.srtt_us;
        told.snd_una = t->snd_una;
        told.snd_nxt = t->snd_nxt;
        told.now_us = now / 1000;
        t->cc.ops->delivered(&t->cc, &told);
        cc_event(t);
    }
    int dup = !advanced && t->snd_una != t->snd_max &&
              (sacked || (ackn == t->snd_una && tlen == off && wnd == t->snd_wnd && !(flags & (SYN | FIN))));
    if (dup) {
        /* RFC 5681's duplicate ACK (RFC 6675's: one that SACKs new data):
         * the third, or SACKs that show the first segment lost, start
         * recovery; in NewReno's each one after lets one more segment out. */
        trace_tcp_dupack(t->id, t->dupacks + 1u, ackn, sacked);
        if (t->in_recovery) {
            t->inflate += t->sack_ok ? 0 : t->mss;
        } else if ((++t->dupacks >= TCP_DUPTHRESH || (t->sack_ok && tcp_sb_is_lost(&t->sb, t->snd_una, t->mss))) &&
                   seq_lt(t->recover, t->snd_una)) {
            enter_recovery(t, now);                     /* (RFC 6582 3.2 1: not for what a timeout sent again) */
        }
    }
    if (seq_lt(t->snd_wl1, seq) || (t->snd_wl1 == seq && seq_le(t->snd_wl2, ackn))) {
        if (wnd != t->snd_wnd)
            trace_tcp_window(t->id, wnd, t->snd_nxt - t->snd_una);
        t->snd_wnd = wnd;                               /* the window update (3.10.7.4) */
        t->max_wnd = wnd > t->max_wnd ? wnd : t->max_wnd;
        t->snd_wl1 = seq;
        t->snd_wl2 = ackn;
        if (wnd)
            t->t_persist = 0;
    }
    if (t->fin_done) {
        if (t->state == T_FIN_WAIT_1) {
            set_state(t, T_FIN_WAIT_2);
            if (!t->sock)
                set_timer(&t->t_wait, now + FIN_TIMEOUT_NS);       /* an orphan waits so long for the peer's FIN */
        } else if (t->state == T_CLOSING) {
            enter_time_wait(t, now);
        } else if (t->state == T_LAST_ACK) {
            tcb_end(t, 0);
            return;
        }
    }
    uint32_t dlen = tlen - off;
    int in_order = 0, early = 0;
    if (dlen && (t->state == T_ESTABLISHED || t->state == T_FIN_WAIT_1 || t->state == T_FIN_WAIT_2)) {
        if (!t->sock && !t->listener && seq_lt(t->rcv_nxt, seq + dlen)) {
            reset(t);                                   /* new data for a closed socket (as Linux) */
            tcb_end(t, 0);
            return;
        }
        uint32_t ts = (uint32_t)(now / TS_TICK_NS) + t->ts_offset;
        if (t->ts_ok && o->has_ts && o->tsecr && ts - o->tsecr < 60000) {
            /* the receiver's round trip (Linux's tcp_rcv_rtt_measure_ts): the least, slowly forgotten */
            uint32_t us = (ts - o->tsecr) * 1000 + 1000;
            t->rcv_rtt_us = !t->rcv_rtt_us || us < t->rcv_rtt_us ? us : (7 * t->rcv_rtt_us + us) / 8;
        }
        t->data_at = now;
        /* (from this host, perhaps still in the sender's ring: net_loop_data) */
        struct net_bytes d = { { s + off, NULL }, { dlen, 0 } };
        in_order = take_data(t, seq, net_loop_data ? net_loop_data : &d, dlen, &early);
        if (in_order && !early)
            ack_soon(t, 0);
        else
            ack_now(t);                                 /* early, a duplicate or no room: say where we are */
    }
    if ((flags & FIN) && seq + dlen == t->rcv_nxt && (t->state == T_ESTABLISHED || t->state == T_SYN_RECEIVED ||
                                                      t->state == T_FIN_WAIT_1 || t->state == T_FIN_WAIT_2)) {
        t->rcv_nxt++;                                   /* the eighth step */
        t->bytes_received++;                            /* (as Linux's tcpi_bytes_received: the FIN too) */
        t->shut_rd = 1;
        if (t->state == T_FIN_WAIT_1)
            set_state(t, t->fin_done ? T_TIME_WAIT : T_CLOSING);
        else if (t->state == T_FIN_WAIT_2)
            set_state(t, T_TIME_WAIT);
        else
            set_state(t, T_CLOSE_WAIT);
        if (t->state == T_TIME_WAIT)
            enter_time_wait(t, now);
        ack_now(t);
    } else if ((flags & FIN) && t->state == T_TIME_WAIT) {
        ack_now(t);                                     /* the peer's FIN again: our ACK was lost */
        set_timer(&t->t_wait, now + TIME_WAIT_NS);
    }
    output(t);
}

/* ---------------------------------------------------------------- timers */

uint64_t net_tcp_deadline(void)
{
    return tcp_first;
}

uint64_t net_tcp_curr_estab(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; tcbs && i < tcb_top; i++)
        n += tcbs[i].pid && (tcbs[i].state == T_ESTABLISHED || tcbs[i].state == T_CLOSE_WAIT);
    return n;
}

/* The retransmission timer (RFC 6298 5.4-5.7): the oldest segment again,
 * the timeout doubled, the congestion window one segment. */
static void rtx_timeout(struct tcb *t, uint64_t now)
{
    int syn = t->state == T_SYN_SENT || t->state == T_SYN_RECEIVED;
    unsigned limit = t->state == T_SYN_SENT ? SYN_RETRIES : t->state == T_SYN_RECEIVED ? SYNACK_RETRIES : RETRIES2;
    t->t_rtx = 0;
    if (++t->retries > limit) {
        if (t->state == T_SYN_RECEIVED && t->listener) {
            tcb_free(t);
            return;
        }
        tcb_end(t, ETIMEDOUT);
        return;
    }
    tcp_rto_backoff(&t->rto);
    t->rtt_at = 0;                                      /* (Karn) */
    count_retrans(t, 1);
    if (syn) {
        emit(t, t->iss, t->state == T_SYN_SENT ? SYN : SYN | ACK, 0, 0);
    } else {
        t->cc.ops->timeout(&t->cc, t->snd_max - t->snd_una, now / 1000);
        cc_event(t);
        trace_cwnd(t, TRACE_TCP_WHY_TIMEOUT);
        t->in_recovery = 0;
        t->inflate = 0;
        t->dupacks = 0;
        tcp_sb_clear(&t->sb);                           /* (RFC 2018 8: the peer may have dropped what it SACKed) */
        t->high_rxt = t->snd_una;
        t->recover = t->snd_max;                        /* (RFC 6582 3.2 1) */
        t->snd_nxt = t->snd_una;                        /* go back: send from the oldest again */
        count_retrans(t, -1);                                   /* (output counts what it sends again) */
        output(t);
    }
    if (t->pid && t->state != T_CLOSED && !t->t_rtx && t->snd_una != t->snd_max)
        arm_rtx(t);
}

/* t's timers that are due at `now`, run. */
static void timers_due(struct tcb *t, uint64_t now)
{
    if (t->t_wait && now >= t->t_wait) {                /* TIME_WAIT, or an orphan's FIN_WAIT_2, over */
        tcb_end(t, 0);
        return;
    }
    if (t->t_delack && now >= t->t_delack) {
        t->t_delack = 0;
        ack_now(t);
    }
    if (t->t_persist && now >= t->t_persist) {          /* a zero-window probe: an ACK one below SND.UNA */
        emit(t, t->snd_una - 1, ACK, 0, 0);
        if (++t->probes > RETRIES2) {                   /* (unanswered: the peer is gone, as Linux's tcp_probe_timer) */
            tcb_end(t, ETIMEDOUT);
            return;
        }
        t->persist_us = min32(t->persist_us * 2, TCP_RTO_MAX_US);
        set_timer(&t->t_persist, now + (uint64_t)t->persist_us * 1000);
    }
    if (t->t_rtx && now >= t->t_rtx) {
        rtx_timeout(t, now);
        if (t->pid)
            wake(t);
    }
    if (t->pid && t->t_keep && now >= t->t_keep)
        keep_timer(t, now);
    if (t->pid && t->t_pace && now >= t->t_pace) {
        t->t_pace = 0;
        output(t);
    }
}

void net_tcp_timers(uint64_t now)
{
    tcp_first = 0;                                      /* (found again below, and lowered by set_timer meanwhile) */
    for (unsigned i = 0; tcbs && i < tcb_top; i++) {
        struct tcb *t = &tcbs[i];
        if (t->pid)
            timers_due(t, now);
        if (!t->pid)
            continue;
        timer_note(t->t_rtx), timer_note(t->t_delack), timer_note(t->t_wait);
        timer_note(t->t_persist), timer_note(t->t_keep), timer_note(t->t_pace);
    }
}

/* ---------------------------------------------------------------- sockets */

/* A socket's readiness, as Linux's tcp_poll answers it. */
uint32_t net_tcp_poll(const struct sock *s)
{
    const struct tcb *t = s->tcb;
    if (!t)
        return NET_POLLOUT | NET_POLLHUP;
    if (t->state == T_LISTEN) {
        for (unsigned i = 0; i < tcb_top; i++)
            if (tcbs[i].pid && tcbs[i].listener == t && tcbs[i].state != T_SYN_RECEIVED)
                return NET_POLLIN;
        return 0;
    }
    uint32_t r = 0;
    if (t->err && !t->err_told)
        r |= NET_POLLERR;
    if (t->state == T_CLOSED || (t->shut_rd && t->shut_wr))
        r |= NET_POLLHUP;
    if (t->shut_rd)
        r |= NET_POLLIN | NET_POLLRDHUP;
    if (t->state == T_SYN_SENT || t->state == T_SYN_RECEIVED)
        return r;
    if (t->rcv.len)
        r |= NET_POLLIN;
    if (t->shut_wr || t->state == T_CLOSED || snd_room(t) >= t->snd.len / 2)
        r |= NET_POLLOUT;
    return r;
}

/* A TCP socket's connection when a socket is opened: CLOSED, bound to port. */
int64_t net_tcp_open(struct sock *s, uint64_t pid)
{
    if (!table_ready())
        return SVC_E_NOMEM;
    struct tcb *t = tcb_new(pid);
    if (!t)
        return SVC_E_LIMIT;
    t->lport = s->port;
    t->sock = s;
    s->tcb = t;
    return 0;
}

static void drop_pending(struct tcb *l)
{
    for (unsigned i = 0; i < tcb_top; i++) {
        struct tcb *c = &tcbs[i];
        if (c->pid && c->listener == l) {
            reset(c);
            tcb_free(c);
        }
    }
}

void net_tcp_close(struct sock *s)
{
    struct tcb *t = s->tcb;
    if (!t)
        return;
    t->sock = NULL;
    s->tcb = NULL;
    if (t->state == T_LISTEN)
        drop_pending(t);
    if (t->state == T_LISTEN || t->state == T_CLOSED || t->state == T_SYN_SENT) {
        tcb_free(t);
        return;
    }
    if (t->state == T_TIME_WAIT) {
        free_ring(&t->rcv);                             /* (it waits out its time alone) */
        return;
    }
    if (t->rcv.len || t->linger0) {
        reset(t);                                       /* unread data, or SO_LINGER 0: RST, as Linux (RFC 2525 2.17) */
        count_closing(t);
        tcb_free(t);
        net_loop_drain();
        return;
    }
    t->shut_rd = 1;
    if (t->state == T_FIN_WAIT_2)
        set_timer(&t->t_wait, svc_clock_ns() + FIN_TIMEOUT_NS);
    if (!t->shut_wr) {
        t->shut_wr = 1;
        output(t);
    }
    net_timers_update();
    net_loop_drain();
}

/* The socket's connection, checked for an operation: E_BADHANDLE (none:
 * not a TCP socket), E_INVAL (not TCP). */
static struct tcb *tcb_of(struct svc_call *call, uint32_t sock, int64_t *err)
{
    struct sock *s = net_sock_of(call, sock);
    *err = !s ? SVC_E_BADHANDLE : s->kind != SOCK_TCP ? SVC_E_INVAL : 0;
    return *err ? NULL : s->tcb;
}

int64_t net_op_listen(struct svc_call *call, uint32_t sock, uint32_t backlog)
{
    int64_t err;
    struct tcb *t = tcb_of(call, sock, &err);
    if (err)
        return err;
    if (t->state == T_LISTEN) {
        t->backlog = (uint16_t)(backlog < 1 ? 1 : backlog > BACKLOG_MAX ? BACKLOG_MAX : backlog);
        return 0;
    }
    if (t->state != T_CLOSED || t->used)
        return SVC_E_STATE;
    set_state(t, T_LISTEN);
    t->used = 1;
    t->backlog = (uint16_t)(backlog < 1 ? 1 : backlog > BACKLOG_MAX ? BACKLOG_MAX : backlog);
    return 0;
}

int64_t net_op_accept(struct svc_call *call, uint32_t sock, uint32_t *conn, uint32_t *addr, uint32_t *port)
{
    int64_t err;
    struct tcb *l = tcb_of(call, sock, &err);
    if (err)
        return err;
    if (l->state != T_LISTEN)
        return SVC_E_STATE;
    struct tcb *first = NULL;
    for (unsigned i = 0; i < tcb_top; i++) {
        struct tcb *c = &tcbs[i];
        if (c->pid && c->listener == l && c->state != T_SYN_RECEIVED && (!first || c->born < first->born))
            first = c;
    }
    if (!first)
        return SVC_E_AGAIN;
    struct sock *s;
    err = net_sock_new(call, SOCK_TCP, l->lport, conn, &s);
    if (err)
        return err;
    first->listener = NULL;
    first->sock = s;
    s->tcb = first;
    *addr = first->raddr;
    *port = first->rport;
    return 0;
}

int64_t net_op_connect(struct svc_call *call, uint32_t sock, uint32_t addr, uint32_t port)
{
    int64_t err;
    struct tcb *t = tcb_of(call, sock, &err);
    if (err)
        return err;
    if (t->state != T_CLOSED || t->used)
        return SVC_E_STATE;
    if (addr == 0 || port == 0 || port > 0xffff || (addr >> 28) >= 14)
        return SVC_E_INVAL;
    if (!net_addr && (addr >> 24) != 127)
        return net_nic_ready() ? SVC_E_STATE : SVC_E_NOENT;
    uint32_t laddr = net_source_for(addr);
    for (unsigned i = 0; i < tcb_top; i++) {
        const struct tcb *o = &tcbs[i];
        if (o->pid && o->state != T_CLOSED && o->state != T_LISTEN && o->lport == t->lport && o->laddr == laddr &&
            o->raddr == addr && o->rport == port)
            return SVC_E_BUSY;                          /* that connection exists (or waits in TIME_WAIT) */
    }
    if (get_buffers(t))
        return SVC_E_NOMEM;
    t->laddr = laddr;
    t->raddr = addr;
    t->rport = (uint16_t)port;
    t->used = 1;
    t->rmss = route_mss(addr);
    offer_options(t);
    t->iss = t->snd_una = t->snd_nxt = t->snd_max = t->recover = new_isn(laddr, addr, t->lport, t->rport);
    set_state(t, T_SYN_SENT);
    MIB(TCP_ACTIVE_OPENS);
    output(t);
    net_timers_update();
    net_loop_drain();
    return 0;
}

/* The socket's connection for `send` and `recv` (E_STATE: it listens or
 * never connected). */
static struct tcb *conn_of(struct svc_call *call, uint32_t sock, int64_t *err)
{
    struct tcb *t = tcb_of(call, sock, err);
    if (!*err && (!t->used || t->state == T_LISTEN))
        *err = SVC_E_STATE;
    return *err ? NULL : t;
}

/* The error the connection ended with, told once: E_CLOSED, else 0. */
static int64_t tell_error(struct tcb *t)
{
    if (!t->err || t->err_told)
        return 0;
    t->err_told = 1;
    return SVC_E_CLOSED;
}

int64_t net_op_send(struct svc_call *call, uint32_t sock, uint64_t data, uint64_t data_len, uint64_t *count)
{
    int64_t err;
    struct tcb *t = conn_of(call, sock, &err);
    if (err || (err = tell_error(t)) != 0)
        return err;
    if (t->shut_wr || t->state == T_CLOSED)
        return SVC_E_CLOSED;
    if (t->state == T_SYN_SENT || t->state == T_SYN_RECEIVED)
        return SVC_E_AGAIN;
    /* The writer has more than the ring holds, and the ring holds less
     * than twice what the windows let go in a round trip (what is in
     * flight, and as much again for the pacing to send while it comes
     * back): the ring would hold the connection back. As Linux's
     * tcp_sndbuf_expand. */
    if (data_len > ring_room(&t->snd) && (uint64_t)min32(t->snd_wnd, t->cc.cwnd) * 2 > t->snd.size &&
        !t->snd_cap)
        ring_grow(t, &t->snd);
    uint32_t room = snd_room(t);
    uint32_t n = (uint32_t)(data_len < room ? data_len : room);
    if (!n && data_len)
        return SVC_E_AGAIN;
    if (ring_copy_in(call, &t->snd, data, n))
        return SVC_E_FAULT;
    t->snd.len += n;
    *count = n;
    output(t);
    net_timers_update();
    net_loop_drain();
    return 0;
}

/* What recv and peek answer when nothing is there to read: the error
 * the connection ended with (told once), the end of the stream (0), or
 * E_AGAIN. */
static int64_t nothing_to_read(struct tcb *t, uint64_t *count)
{
    int64_t err = tell_error(t);
    if (err)
        return err;
    if (t->shut_rd || t->state == T_CLOSED) {
        *count = 0;                                     /* the end of the stream */
        return 0;
    }
    return SVC_E_AGAIN;
}

/* The receive ring doubles (within its limits), its tracepoint told. */
static void rcv_grow(struct tcb *t)
{
    int grew = ring_grow(t, &t->rcv) == 0;
    trace_tcp_rcvbuf(t->id, ring_size(&t->rcv), grew);
}

#define DRS_MIN_RTT_US  2000u           /* below: a round trip the millisecond timestamps cannot tell apart */

/* Dynamic right-sizing (as Linux's tcp_rcv_space_adjust): once a receive
 * round trip, if the reader took half the ring or more in it, the window
 * is what paces the sender (a long path's bandwidth-delay product): the
 * ring doubles, and the window offered with it. A reader that keeps up on
 * a short path never needs it; one that falls behind takes less. */
static void rcv_space_adjust(struct tcb *t, uint32_t n)
{
    if (t->rcv_cap || t->rcv_rtt_us < DRS_MIN_RTT_US)
        return;                                         /* (a path shorter than the timestamps' tick: the
                                                         * first ring holds what it carries in a round trip) */
    uint64_t now = t->data_at;
    t->drs_taken += n;
    if (!t->drs_at) {
        t->drs_at = now;
        t->drs_taken = n;
        return;
    }
    if (now - t->drs_at < (uint64_t)t->rcv_rtt_us * 1000)
        return;
    if ((uint64_t)t->drs_taken * 2 >= ring_size(&t->rcv) && ring_size(&t->rcv) < BUF_MAX && !t->nooo &&
        now - t->drs_at < 2ull * t->rcv_rtt_us * 1000)        /* (not what piled up over an idle while) */
        rcv_grow(t);
    t->drs_at = now;
    t->drs_taken = 0;
}

/* n bytes of t's received data were taken: a bigger ring when the reader
 * keeps up and the window held the peer back, and the peer told of the
 * room when it grew by a useful amount (as Linux's tcp_cleanup_rbuf). */
static void taken(struct tcb *t, uint32_t n)
{
    ring_drop(&t->rcv, n);
    rcv_space_adjust(t, n);
    if (!t->rcv.len && t->rcv_edge && !t->nooo) {
        t->rcv_edge = 0;
        if (!t->rcv_cap)                                /* (SO_RCVBUF set: the ring stays) */
            rcv_grow(t);
    }
    if (n && t->state != T_CLOSED && rcv_window(t) >= offered(t) + min32(rcv_space(t) / 2, 2 * t->rmss)) {
        ack_now(t);
        net_loop_drain();
    }
}

int64_t net_op_recv(struct svc_call *call, uint32_t sock, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    int64_t err;
    struct tcb *t = conn_of(call, sock, &err);
    if (err)
        return err;
    if (!t->rcv.len)
        return nothing_to_read(t, count);
    uint32_t n = (uint32_t)(buf_len < t->rcv.len ? buf_len : t->rcv.len);
    if (ring_copy_out(call, &t->rcv, 0, buf, n))
        return SVC_E_FAULT;
    *count = n;
    taken(t, n);
    return 0;
}

int64_t net_op_discard(struct svc_call *call, uint32_t sock, uint64_t count, uint64_t *dropped)
{
    int64_t err;
    struct tcb *t = conn_of(call, sock, &err);
    if (err)
        return err;
    if (!t->rcv.len)
        return nothing_to_read(t, dropped);
    uint32_t n = (uint32_t)(count < t->rcv.len ? count : t->rcv.len);
    *dropped = n;
    taken(t, n);
    return 0;
}

int64_t net_op_peek(struct svc_call *call, uint32_t sock, uint64_t offset, uint64_t buf, uint64_t buf_len,
                    uint64_t *count)
{
    int64_t err;
    struct tcb *t = conn_of(call, sock, &err);
    if (err)
        return err;
    if (t->rcv.len <= offset)
        return nothing_to_read(t, count);
    uint32_t n = (uint32_t)(buf_len < t->rcv.len - offset ? buf_len : t->rcv.len - offset);
    if (ring_copy_out(call, &t->rcv, (uint32_t)offset, buf, n))
        return SVC_E_FAULT;
    *count = n;
    return 0;
}

int64_t net_op_shutdown(struct svc_call *call, uint32_t sock, uint32_t how)
{
    int64_t err;
    struct tcb *t = tcb_of(call, sock, &err);
    if (err)
        return err;
    if (how > 2)
        return SVC_E_INVAL;
    if (!t->used || t->state == T_CLOSED)
        return SVC_E_STATE;                             /* (ENOTCONN) */
    if (t->state == T_LISTEN) {
        if (how != 1) {                                 /* (reading shut: it listens no more, as Linux) */
            drop_pending(t);
            set_state(t, T_CLOSED);
            t->shut_rd = t->shut_wr = 1;
            wake(t);                                    /* (a waiter for a connection learns it) */
        }
        return 0;
    }
    if (how != 1)
        t->shut_rd = 1;
    if (how != 0 && !t->shut_wr) {
        t->shut_wr = 1;
        output(t);
        net_timers_update();
        net_loop_drain();
    }
    wake(t);                                            /* (a reader waiting finds the end now) */
    return 0;
}

int64_t net_op_tcp_info(struct svc_call *call, uint32_t sock, uint32_t *state, uint32_t *error, uint32_t *laddr,
                        uint32_t *raddr, uint32_t *rport, uint32_t *mss, uint32_t *rto_us, uint32_t *srtt_us,
                        uint32_t *rttvar_us, uint32_t *cwnd, uint32_t *ssthresh, uint32_t *unacked,
                        uint32_t *retrans, uint32_t *unread, uint32_t *unsent, uint32_t *snd_wnd)
{
    int64_t err;
    struct tcb *t = tcb_of(call, sock, &err);
    if (err)
        return err;
    *state = t->state == T_TIME_WAIT ? T_CLOSED : t->state;    /* (Linux's socket is closed by then: a */
    *error = (uint32_t)t->err;                                  /* TIME_WAIT is no socket's) */
    *laddr = t->laddr;
    *raddr = t->raddr;
    *rport = t->rport;
    *mss = t->mss;
    *rto_us = t->rto.rto_us;
    *srtt_us = t->rto.srtt_us;
    *rttvar_us = t->rto.rttvar_us;
    *cwnd = t->cc.cwnd;
    *ssthresh = t->cc.ssthresh;
    *unacked = t->snd_max - t->snd_una;
    *retrans = t->retrans;
    *unread = t->rcv.len;
    *unsent = t->snd.len - min32(t->snd.len, t->snd_nxt - t->snd_una);
    *snd_wnd = t->snd_wnd;
    return 0;
}

int64_t net_op_tcp_stats(struct svc_call *call, uint32_t sock, uint32_t *options, uint32_t *wscale,
                         uint64_t *pacing_rate, uint64_t *bytes_acked, uint64_t *bytes_received, uint32_t *segs_out,
                         uint32_t *segs_in)
{
    int64_t err;
    struct tcb *t = tcb_of(call, sock, &err);
    if (err)
        return err;
    *options = (t->ts_ok ? 1u : 0) | (t->sack_ok ? 2u : 0) | (t->ws_ok ? 4u : 0);
    *wscale = t->ws_ok ? (uint32_t)(t->snd_wscale | t->rcv_wscale << 4) : 0;
    uint32_t flight = t->snd_nxt - t->snd_una, window = t->cc.cwnd > flight ? t->cc.cwnd : flight;
    uint32_t ratio = t->cc.cwnd < t->cc.ssthresh / 2 ? PACE_SS_RATIO : PACE_CA_RATIO;
    *pacing_rate = t->rto.srtt_us ? (uint64_t)window * 1000000 / t->rto.srtt_us * ratio / 100 : ~0ull;   /* (pace's;
                                                         * none before an RTT sample, as Linux's all ones) */
    *bytes_acked = t->bytes_acked;
    *bytes_received = t->bytes_received;
    *segs_out = t->segs_out;
    *segs_in = t->segs_in;
    return 0;
}

int64_t net_op_tcp_set(struct svc_call *call, uint32_t sock, uint32_t option, uint32_t value)
{
    int64_t err;
    struct tcb *t = tcb_of(call, sock, &err);
    if (err)
        return err;
    if (option == NET_TCP_NODELAY) {
        if (value > 1)
            return SVC_E_INVAL;
        t->nodelay = (uint8_t)value;
        output(t);
        net_timers_update();                            /* (what it sent may have started a timer) */
        net_loop_drain();
        return 0;
    }
    if (option == NET_TCP_CONGESTION) {
        if (value >= sizeof tcp_cc_modules / sizeof tcp_cc_modules[0])
            return SVC_E_INVAL;
        const struct tcp_cc_ops *ops = tcp_cc_modules[value];
        if (t->state == T_CLOSED || t->state == T_LISTEN || t->state == T_SYN_SENT)
            t->cc.ops = ops;                            /* (started when the connection is) */
        else if (t->cc.ops != ops) {                    /* (the module starts anew from the window now, as Linux's) */
            uint32_t cwnd = t->cc.cwnd, ssthresh = t->cc.ssthresh;
            tcp_cc_start(&t->cc, ops, t->mss);
            t->cc.cwnd = cwnd;
            t->cc.ssthresh = ssthresh;
            trace_cwnd(t, TRACE_TCP_WHY_MODULE);
        }
        return 0;
    }
    if (option == NET_TCP_KEEPALIVE || option == NET_TCP_LINGER0) {
        if (value > 1)
            return SVC_E_INVAL;
        if (option == NET_TCP_LINGER0) {
            t->linger0 = (uint8_t)value;
            return 0;
        }
        t->keepalive = (uint8_t)value;
        if (value)
            t->last_rcv = t->last_rcv ? t->last_rcv : svc_clock_ns();
        keep_arm(t);
        net_timers_update();
        return 0;
    }
    if (option == NET_TCP_SNDBUF || option == NET_TCP_RCVBUF) {
        if (value && (value < 2048 || value > (1u << 24)))
            return SVC_E_INVAL;
        *(option == NET_TCP_SNDBUF ? &t->snd_cap : &t->rcv_cap) = value;
        if (option == NET_TCP_SNDBUF)
            wake(t);                                    /* (writable sooner or later than it was) */
        return 0;
    }
    uint32_t max = option == NET_TCP_KEEPCNT ? 127 : 32767;
    if ((option != NET_TCP_KEEPIDLE && option != NET_TCP_KEEPINTVL && option != NET_TCP_KEEPCNT) || value < 1 ||
        value > max)
        return SVC_E_INVAL;
    if (option == NET_TCP_KEEPIDLE)
        t->keep_idle = (uint16_t)value;
    else if (option == NET_TCP_KEEPINTVL)
        t->keep_intvl = (uint16_t)value;
    else
        t->keep_cnt = (uint8_t)value;
    if (option == NET_TCP_KEEPIDLE && t->t_keep) {
        keep_arm(t);
        net_timers_update();
    }
    return 0;
}
