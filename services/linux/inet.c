/*
 * AF_INET sockets: TCP (SOCK_STREAM) and UDP (SOCK_DGRAM) over Petrel's
 * network stack, the `net` service (services/net, idl/net.toml), which
 * the system description lets the personality call (`calls = ["net"]`).
 *
 * socket.c keeps the socket's slot, its open file and the descriptor
 * calls; for a slot of family AF_INET it hands each call to the function
 * here of the same index. What the stack keeps (the connection, its
 * queues and windows) stays in the stack: a slot here is the stack's
 * socket number and what Linux shows of the socket that the stack does
 * not (its options, the address it was bound or connected to).
 *
 * The personality never waits in the stack: every call it makes answers
 * at once (E_AGAIN when it would wait). A Linux call that must wait blocks
 * as a pipe's does (LX_BLK_SOCK on the slot) and runs again when the
 * stack signals the personality's wakeup (`watch`): any change of any of
 * its sockets wakes the waiters of every AF_INET slot, which look again.
 *
 * A stream's bytes go straight between the process's memory and the
 * stack's rings: the personality passes the process's buffer on to the
 * stack (svc_client_buffer: as it is when both are in the kernel, for
 * the process's own thread; lent by the kernel in user space). A send
 * from several buffers, and every datagram, goes through a bounce buffer
 * of the personality's instead: a send copies from the process into it,
 * the stack from it; a receive the other way.
 *
 * The stack counts the personality as one client: its limits on sockets
 * and connections (idl/net.toml) hold for all the Linux processes
 * together, and the personality's own (LX_SOCKS, LX_PROC_SOCKS) for each.
 */
#include "lx.h"
#include "net_if.h"
#include "net_mib.h"

#define AF_INET         2
#define SOCK_STREAM     1
#define SOCK_DGRAM      2
#define SOCK_RAW        3
#define IPPROTO_IP      0
#define IPPROTO_ICMP    1
#define IPPROTO_TCP     6
#define IPPROTO_UDP     17
#define SOL_SOCKET      1

#define SO_REUSEADDR    2
#define SO_TYPE         3
#define SO_ERROR        4
#define SO_BROADCAST    6
#define SO_SNDBUF       7
#define SO_RCVBUF       8
#define SO_KEEPALIVE    9
#define SO_LINGER       13
#define SO_RCVTIMEO     20
#define SO_SNDTIMEO     21
#define SO_ACCEPTCONN   30
#define SO_PROTOCOL     38
#define SO_DOMAIN       39
#define TCP_NODELAY     1
#define TCP_MAXSEG      2
#define TCP_KEEPIDLE    4
#define TCP_KEEPINTVL   5
#define TCP_KEEPCNT     6
#define TCP_INFO        11
#define TCP_CONGESTION  13

#define MSG_OOB         0x1
#define MSG_PEEK        0x2
#define MSG_TRUNC       0x20
#define MSG_WAITALL     0x100

#define LX_EADDRINUSE   98
#define LX_EADDRNOTAVAIL 99
#define LX_ENETUNREACH  101
#define LX_ENOBUFS      105
#define LX_EISCONN      106
#define LX_ENOTCONN     107
#define LX_EDESTADDRREQ 89
#define LX_EMSGSIZE     90
#define LX_ENOPROTOOPT  92
#define LX_EPROTONOSUPPORT 93
#define LX_EALREADY     114
#define LX_ESOCKTNOSUPPORT 94
#define LX_ECONNRESET   104
#define LX_ECONNABORTED 103
#define LX_ECONNREFUSED 111
#define LX_EINPROGRESS  115

#define POLLIN_         0x1
#define POLLOUT_        0x4
#define POLLERR_        0x8
#define POLLHUP_        0x10
#define POLLRDHUP_      0x2000

#define UDP_MAX         65507u          /* the largest UDP payload over IPv4 */
#define ICMP_MAX        65515u          /* ... and ICMP message */
#define BOUNCE          65536u          /* the bounce buffer: one datagram, or a piece of a stream */
#define BACKLOG_MAX     128u            /* the stack's (Linux's somaxconn is 4,096) */
#define BUF_DEFAULT     212992u         /* Linux's wmem_default and rmem_default, as SO_*BUF say them */
#define LOOPBACK        0x7f000001u
#define NET_SOCK_TCP    3u
#define NET_SOCK_UDP    1u
#define NET_SOCK_ICMP   2u
#define NET_OPEN_REUSE  0x100u          /* the stack's `open` kind flag: a UDP port shared */
#define NS              1000000000ull

enum { IN_FREE, IN_NEW, IN_LISTEN, IN_CONNECTING, IN_CONNECTED };

struct lx_inet {
    uint8_t state;              /* IN_*: IN_FREE is a slot no AF_INET socket uses */
    uint8_t type;               /* SOCK_STREAM or SOCK_DGRAM */
    uint8_t connect_waits;      /* a blocking connect waits for the handshake */
    uint8_t in_progress;        /* a non-blocking connect said EINPROGRESS: the next connect finishes it */
    uint8_t err_told;           /* the error the connection ended with was told (once, as Linux tells it) */
    uint8_t icmp;               /* a ping socket (SOCK_DGRAM, IPPROTO_ICMP): ICMP echo, its port the identifier */
    uint8_t nodelay, keepalive, cc, reuseaddr, broadcast, linger0;
    uint8_t raw;                /* a raw ICMP socket (SOCK_RAW, IPPROTO_ICMP): type SOCK_DGRAM, icmp set;
                                 * it sends echo requests whole and receives replies with an IP header */
    uint8_t shut;               /* SHUT_RD + 1 bits of a shutdown Linux marks without a connection
                                 * (a datagram socket, or a stream one not connected) */
    uint32_t sock;              /* the stack's socket (0: not opened yet) */
    uint32_t laddr, raddr;      /* bound (0: any) and connected addresses */
    uint16_t lport, rport;
    int err;                    /* SO_ERROR: a pending error (positive errno) */
    uint32_t keepidle, keepintvl, keepcnt;
    uint32_t linger[2];
    uint32_t sndbuf, rcvbuf;
    uint8_t bufs_set;           /* SO_SNDBUF (1) and SO_RCVBUF (2) were set: the stack's caps (else its
                                 * rings grow with use, as Linux's buffers are tuned until set) */
    uint64_t rcvtimeo, sndtimeo;
};

static struct lx_inet inets[LX_SOCKS];
static uint8_t default_cc = 1;          /* net.ipv4.tcp_congestion_control of the Linux programs (cubic, Linux's) */
static uint32_t net_ep;                 /* the stack (0: not reached yet; ~0: this system has none) */
static uint8_t *bounce;                 /* (the stack signals the personality's wakeup: lx_wakeup) */

/* The stack's poll bits are Linux's (NET_POLL*: idl/net.toml's `wait`). */

/* A change in the stack: every AF_INET socket's waiters look again. */
void lx_inet_changed(void)
{
    for (int i = 0; i < LX_SOCKS; i++)
        if (inets[i].state != IN_FREE)
            lx_wake_all(LX_BLK_SOCK, i);
}

/* The stack, reached at the first AF_INET socket: 0 and EAFNOSUPPORT if
 * this system has none for the personality (as a Linux kernel built
 * without INET says), ENOMEM and another try at the next socket if what it
 * takes could not be had now. */
static int64_t stack(void)
{
    if (net_ep == ~0u)
        return -LX_EAFNOSUPPORT;
    if (net_ep)
        return 0;
    svc_handle ep = svc_service("net");
    if (!ep) {
        net_ep = ~0u;
        return -LX_EAFNOSUPPORT;
    }
    uint64_t wakeup_bits;
    svc_handle wakeup = lx_wakeup(&wakeup_bits);
    if (!bounce)
        bounce = svc_alloc(BOUNCE);
    if (!wakeup || !bounce || net_watch((uint32_t)ep, (uint32_t)wakeup, wakeup_bits) != 0)
        return -LX_ENOMEM;
    net_ep = (uint32_t)ep;
    return 0;
}

/* A stack error as Linux's errno (E_CLOSED is each caller's: it depends on the call). */
static int64_t lx_err(int64_t e)
{
    switch (e) {
    case SVC_E_AGAIN:
        return -LX_EAGAIN;
    case SVC_E_BUSY:
        return -LX_EADDRINUSE;
    case SVC_E_NOMEM:
        return -LX_ENOMEM;
    case SVC_E_LIMIT:
        return -LX_ENOBUFS;
    case SVC_E_NOENT:
        return -LX_ENETUNREACH;
    case SVC_E_FAULT:
        return -LX_EFAULT;
    default:
        return -LX_EINVAL;
    }
}

/* The stack's tcp_info of connection `sock` into o[16] (idl/net.toml's
 * order: state, error, laddr, raddr, rport, mss, rto_us, srtt_us,
 * rttvar_us, cwnd, ssthresh, unacked, retrans, unread, unsent, snd_wnd);
 * 0, or the stack's error (o all zero). */
enum { TI_STATE, TI_ERROR, TI_LADDR, TI_RADDR, TI_RPORT, TI_MSS, TI_RTO, TI_SRTT, TI_RTTVAR, TI_CWND,
       TI_SSTHRESH, TI_UNACKED, TI_RETRANS, TI_UNREAD, TI_UNSENT, TI_SND_WND };

static int64_t tcp_info_of(uint32_t sock, uint32_t *o)
{
    memset(o, 0, 16 * sizeof(*o));
    if (!sock)
        return SVC_E_BADHANDLE;
    return net_tcp_info(net_ep, sock, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9], &o[10],
                        &o[11], &o[12], &o[13], &o[14], &o[15]);
}

/* The errno a TCP connection ended with (0: none). */
static int conn_error(const struct lx_inet *s)
{
    uint32_t o[16];
    return tcp_info_of(s->sock, o) == 0 ? (int)o[TI_ERROR] : 0;
}

static uint32_t stack_poll(const struct lx_inet *s)
{
    uint32_t rev = 0;
    return s->sock && net_poll(net_ep, s->sock, &rev) == 0 ? rev : 0;
}

/* The options kept before the stack's socket existed, given to it. */
static void apply_options(const struct lx_inet *s)
{
    if (s->type != SOCK_STREAM || !s->sock)
        return;
    net_tcp_set(net_ep, s->sock, 1, s->nodelay);
    net_tcp_set(net_ep, s->sock, 2, s->cc);
    if (s->keepidle)
        net_tcp_set(net_ep, s->sock, 4, s->keepidle);
    if (s->keepintvl)
        net_tcp_set(net_ep, s->sock, 5, s->keepintvl);
    if (s->keepcnt)
        net_tcp_set(net_ep, s->sock, 6, s->keepcnt);
    net_tcp_set(net_ep, s->sock, 3, s->keepalive);
    net_tcp_set(net_ep, s->sock, 7, s->linger0);
    if (s->bufs_set & 1)
        net_tcp_set(net_ep, s->sock, 8, s->sndbuf);
    if (s->bufs_set & 2)
        net_tcp_set(net_ep, s->sock, 9, s->rcvbuf);
}

/* Open the stack's socket on `port` (0: an ephemeral one) if it has none. */
static int64_t open_sock(struct lx_inet *s, uint32_t port)
{
    if (s->sock)
        return 0;
    uint32_t sock = 0, bound = 0;
    uint32_t kind = s->type == SOCK_STREAM ? NET_SOCK_TCP : s->icmp ? NET_SOCK_ICMP : NET_SOCK_UDP;
    if (kind == NET_SOCK_UDP && s->reuseaddr && port)
        kind |= NET_OPEN_REUSE;                 /* (SO_REUSEADDR: the port may be shared) */
    int64_t e = net_open(net_ep, kind, port, &sock, &bound);
    if (e)
        return e == SVC_E_BUSY && !port ? -LX_EAGAIN : lx_err(e);      /* (no ephemeral port left: Linux's EAGAIN) */
    s->sock = sock;
    s->lport = (uint16_t)bound;
    apply_options(s);
    return 0;
}

/* ---------------------------------------------------------------- addresses */

struct sin {
    uint16_t family;
    uint16_t port;              /* network byte order */
    uint32_t addr;              /* network byte order */
    uint8_t zero[8];
};

static uint32_t swap32(uint32_t x) { return __builtin_bswap32(x); }
static uint16_t swap16(uint16_t x) { return __builtin_bswap16(x); }

/* A struct sockaddr_in from the process: 0, or a negated errno; *unspec
 * (if asked) for AF_UNSPEC, which connect takes as "disconnect". */
static int64_t addr_in(struct lx_ctx *c, uint64_t uaddr, uint64_t len, uint32_t *addr, uint16_t *port, int *unspec)
{
    struct sin a = { 0 };
    if ((int32_t)len < 0 || (uint32_t)len > 128)
        return -LX_EINVAL;                      /* (past a struct sockaddr_storage, as Linux says) */
    if (len < sizeof(uint16_t))
        return -LX_EINVAL;
    if (lx_copy_in(c, &a, uaddr, len < sizeof(a) ? len : sizeof(a)))
        return -LX_EFAULT;
    if (unspec && a.family == 0) {
        *unspec = 1;
        return 0;
    }
    if (len < sizeof(a))
        return -LX_EINVAL;
    if (a.family != AF_INET)
        return -LX_EAFNOSUPPORT;
    *addr = swap32(a.addr);
    *port = swap16(a.port);
    return 0;
}

/* Write a struct sockaddr_in to the process as getsockname does: at most
 * the room the length word at ulen says, the full length back into it. */
static int64_t addr_out(struct lx_ctx *c, uint64_t uaddr, uint64_t ulen, uint32_t addr, uint16_t port)
{
    struct sin a = { AF_INET, swap16(port), swap32(addr), { 0 } };
    int32_t room;
    if (lx_copy_in(c, &room, ulen, sizeof(room)))
        return -LX_EFAULT;
    if (room < 0)
        return -LX_EINVAL;
    uint32_t n = (uint32_t)room < sizeof(a) ? (uint32_t)room : sizeof(a);
    int32_t full = sizeof(a);
    if ((n && lx_copy_out(c, uaddr, &a, n)) || lx_copy_out(c, ulen, &full, sizeof(full)))
        return -LX_EFAULT;
    return 0;
}

/* A receive's sender address into recvfrom's or recvmsg's name. */
static int64_t name_out(struct lx_ctx *c, struct lx_recv_args *a, uint32_t addr, uint16_t port)
{
    if (!a->uname)
        return 0;
    if (!a->msg)
        return addr_out(c, a->uname, a->unamelen, addr, port);
    struct sin s = { AF_INET, swap16(port), swap32(addr), { 0 } };
    uint32_t room = (uint32_t)a->unamelen;
    if (room && lx_copy_out(c, a->uname, &s, room < sizeof(s) ? room : sizeof(s)))
        return -LX_EFAULT;
    a->namelen = sizeof(s);
    return 0;
}

/* The interface's address (0: none yet). */
static uint32_t if_addr(void)
{
    uint64_t mac = 0;
    uint32_t addr = 0, prefix = 0, gw = 0, mtu = 0, link = 0;
    return net_info(net_ep, &mac, &addr, &prefix, &gw, &mtu, &link) == 0 ? addr : 0;
}

/* ---------------------------------------------------------------- socket, close */

int lx_inet_socket(int i, uint64_t type, uint64_t protocol)
{
    if (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_RAW)
        return -LX_ESOCKTNOSUPPORT;
    if ((int32_t)protocol < 0 || (int32_t)protocol >= 256)
        return -LX_EINVAL;
    int raw = type == SOCK_RAW;
    if (raw && protocol != IPPROTO_ICMP)
        return -LX_EPERM;                       /* (raw sockets of ICMP only: others as without CAP_NET_RAW) */
    if (raw)
        type = SOCK_DGRAM;
    int icmp = type == SOCK_DGRAM && protocol == IPPROTO_ICMP;     /* a ping socket, or a raw ICMP one */
    if (protocol && !icmp && protocol != (type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP))
        return -LX_EPROTONOSUPPORT;
    int64_t e = stack();
    if (e)
        return (int)e;
    inets[i] = (struct lx_inet){ .state = IN_NEW, .type = (uint8_t)type, .icmp = (uint8_t)icmp, .raw = (uint8_t)raw,
                                 .cc = default_cc,
                                 .sndbuf = BUF_DEFAULT, .rcvbuf = BUF_DEFAULT };
    return 0;
}

void lx_inet_close(int i)
{
    struct lx_inet *s = &inets[i];
    if (s->sock)
        net_close(net_ep, s->sock);
    s->state = IN_FREE;
    s->sock = 0;
}

/* ---------------------------------------------------------------- bind, listen, connect, accept */

int64_t lx_inet_bind(struct lx_ctx *c, int i, uint64_t uaddr, uint64_t len)
{
    struct lx_inet *s = &inets[i];
    uint32_t addr = 0;
    uint16_t port = 0;
    int64_t e = addr_in(c, uaddr, len, &addr, &port, NULL);
    if (e)
        return e;
    if (s->sock || s->state != IN_NEW)
        return -LX_EINVAL;                      /* bound already */
    if (addr && (addr >> 24) != 127 && addr != if_addr() && addr != 0xffffffffu)
        return -LX_EADDRNOTAVAIL;
    e = open_sock(s, port);
    if (e)
        return e;
    s->laddr = addr;
    return 0;
}

int64_t lx_inet_listen(int i, uint64_t backlog)
{
    struct lx_inet *s = &inets[i];
    if (s->type != SOCK_STREAM)
        return -LX_EOPNOTSUPP;
    if (s->state != IN_NEW && s->state != IN_LISTEN)
        return -LX_EINVAL;
    int64_t e = open_sock(s, 0);
    if (e)
        return e;
    int32_t b = (int32_t)backlog;
    uint32_t n = b < 1 ? 1 : (uint32_t)b > BACKLOG_MAX ? BACKLOG_MAX : (uint32_t)b;
    e = net_listen(net_ep, s->sock, n);
    if (e && s->state != IN_LISTEN)
        return lx_err(e);
    s->state = IN_LISTEN;
    return 0;
}

/* Wait on slot i (its sending or receiving timeout `timeo`). */
static int64_t wait_on(struct lx_ctx *c, int i, uint64_t timeo)
{
    return lx_sock_wait(c, i, timeo);
}

/* A connection in progress moves on as the stack says: up (IN_CONNECTED),
 * or failed: its error pending (SO_ERROR, or what connect says next) and
 * the socket new again, able to connect again as Linux's is (the stack's
 * socket goes with the failed connection, and a port bound with it). */
static void settle(struct lx_inet *s)
{
    if (s->state != IN_CONNECTING)
        return;
    uint32_t rev = stack_poll(s);
    if (rev & POLLERR_) {
        int err = conn_error(s);
        net_close(net_ep, s->sock);
        s->sock = 0;
        s->lport = 0;
        s->state = IN_NEW;
        s->err = err ? err : LX_ECONNREFUSED;
    } else if (rev & POLLOUT_)
        s->state = IN_CONNECTED;
}

static int take_err(struct lx_inet *s)
{
    int e = s->err;
    s->err = 0;
    return e;
}

/* The error an established connection ended with, the first time it is
 * asked (Linux reports ECONNRESET or ETIMEDOUT once; then a read sees the
 * end and a write EPIPE); 0 after that, or if none. */
static int tell_error(struct lx_inet *s)
{
    int e = s->err_told ? 0 : conn_error(s);
    s->err_told |= e != 0;
    return e;
}

/* A connect whose handshake is under way: wait for it (blocking), or say
 * EALREADY; once it ended, 0 or its error, as the first connect after the
 * end says on Linux, whatever poll or SO_ERROR saw of it meanwhile. */
static int64_t connect_outcome(struct lx_ctx *c, int i, int nonblock)
{
    struct lx_inet *s = &inets[i];
    settle(s);
    if (s->state == IN_CONNECTING) {
        if (nonblock && !s->connect_waits)
            return -LX_EALREADY;
        s->connect_waits = 1;
        int64_t w = wait_on(c, i, s->sndtimeo);
        if (w == -LX_EAGAIN) {                  /* SO_SNDTIMEO ran out: the handshake goes on */
            s->connect_waits = 0;
            s->in_progress = 1;
            return -LX_EINPROGRESS;
        }
        return w;
    }
    s->connect_waits = s->in_progress = 0;
    if (s->state == IN_CONNECTED)
        return 0;
    int e = take_err(s);
    return e ? -e : -LX_ECONNABORTED;
}

int64_t lx_inet_connect(struct lx_ctx *c, int i, int nonblock, uint64_t uaddr, uint64_t len)
{
    struct lx_inet *s = &inets[i];
    uint32_t addr = 0;
    uint16_t port = 0;
    int unspec = 0;
    if (s->type == SOCK_STREAM && (s->connect_waits || s->in_progress))
        return connect_outcome(c, i, nonblock);
    int64_t e = addr_in(c, uaddr, len, &addr, &port, &unspec);
    if (e)
        return e;
    if (s->type == SOCK_DGRAM) {
        if (unspec) {
            if (s->sock && !s->icmp)
                net_udp_connect(net_ep, s->sock, 0, 0);
            s->raddr = 0;
            s->rport = 0;
            s->state = IN_NEW;
            return 0;
        }
        e = open_sock(s, 0);
        if (e)
            return e;
        s->raddr = addr ? addr : LOOPBACK;
        s->rport = port;
        s->state = IN_CONNECTED;
        if (!s->icmp && port)
            net_udp_connect(net_ep, s->sock, s->raddr, port);   /* (the stack's choice among sockets sharing a port) */
        return 0;
    }
    if (unspec)
        return s->state == IN_NEW ? 0 : -LX_EINVAL;
    if (s->state == IN_CONNECTED || s->state == IN_LISTEN)
        return -LX_EISCONN;
    e = open_sock(s, 0);
    if (e)
        return e;
    if (!addr)
        addr = LOOPBACK;                        /* (Linux takes INADDR_ANY as this host) */
    e = net_connect(net_ep, s->sock, addr, port);
    if (e == SVC_E_BUSY)
        return -LX_EADDRNOTAVAIL;
    if (e == SVC_E_STATE)
        return -LX_ENETUNREACH;                 /* no address on the interface yet: only loopback */
    if (e)
        return lx_err(e);
    s->raddr = addr;
    s->rport = port;
    s->state = IN_CONNECTING;
    s->err = 0;
    s->err_told = 0;
    if (nonblock) {
        s->in_progress = 1;
        return -LX_EINPROGRESS;
    }
    s->connect_waits = 1;
    return connect_outcome(c, i, nonblock);
}

int64_t lx_inet_accept(struct lx_ctx *c, int i, int nonblock, uint32_t *conn)
{
    struct lx_inet *s = &inets[i];
    if (s->type != SOCK_STREAM)
        return -LX_EOPNOTSUPP;
    if (s->state != IN_LISTEN)
        return -LX_EINVAL;
    uint32_t addr = 0, port = 0;
    int64_t e = net_accept(net_ep, s->sock, conn, &addr, &port);
    if (e == SVC_E_AGAIN)
        return nonblock ? -LX_EAGAIN : wait_on(c, i, s->rcvtimeo);
    return e ? lx_err(e) : 0;
}

/* Slot i takes connection `conn` that listener slot `from` accepted. */
void lx_inet_accepted(int i, int from, uint32_t conn)
{
    struct lx_inet *l = &inets[from], *s = &inets[i];
    *s = *l;                                    /* its options are the listener's, as on Linux */
    s->sock = conn;
    s->state = IN_CONNECTED;
    s->connect_waits = 0;
    s->err = 0;
    uint32_t o[16];
    tcp_info_of(conn, o);
    s->laddr = o[TI_LADDR];
    s->raddr = o[TI_RADDR];
    s->rport = (uint16_t)o[TI_RPORT];
}

int64_t lx_inet_peer_out(struct lx_ctx *c, int i, uint64_t uaddr, uint64_t ulen)
{
    return addr_out(c, uaddr, ulen, inets[i].raddr, inets[i].rport);
}

/* ---------------------------------------------------------------- sending */

/* Where the next bytes of a stream, `done` bytes into u, go to the stack
 * or come from it: u's own memory, passed on to the stack
 * (svc_client_buffer), so that each byte is copied once between the
 * program and the stack's rings, else the bounce buffer, filled from u
 * first when sending (`fill`). At most `max` bytes and BOUNCE (*n, 0 past u's
 * end); 0 or -EFAULT. A send from several buffers goes through the bounce
 * buffer all the same: like Linux's, its piece of up to 64 KiB goes
 * whole or not at all when a buffer in it cannot be read (one by one,
 * those before it would go). */
static int stream_piece(struct lx_ctx *c, const struct uio *u, uint64_t done, uint64_t max, int fill,
                        uint64_t *at, uint64_t *n)
{
    max = max < BOUNCE ? max : BOUNCE;
    if (!fill || u->n <= 1) {
        int e = lx_uio_piece(c, u, done, max, at, n);
        if (e || !*n || u->kbuf)
            return e;                           /* (a buffer of the personality's own passes as it is) */
        uint64_t pass = svc_client_buffer(c->call, *at, *n, !fill);
        if (pass) {
            *at = pass;
            return 0;
        }
    }
    *at = (uint64_t)(uintptr_t)bounce;
    *n = max;
    return fill ? lx_uio_copy(c, u, done, bounce, *n, 0) : 0;
}

/* The bytes a piece of stream_piece received: into u, if they came into the bounce buffer. */
static int stream_piece_got(struct lx_ctx *c, const struct uio *u, uint64_t done, uint64_t at, uint64_t got)
{
    return at == (uint64_t)(uintptr_t)bounce ? lx_uio_copy(c, u, done, bounce, got, 1) : 0;
}

static int64_t stream_send(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len, uint32_t flags)
{
    struct lx_inet *s = &inets[i];
    uint64_t done = c->t->io.done;
    c->t->io.done = 0;
    settle(s);
    if (s->state == IN_CONNECTING)
        return nonblock ? -LX_EAGAIN : wait_on(c, i, s->sndtimeo);
    if (s->err)
        return -take_err(s);                    /* a connection that failed */
    if (s->state != IN_CONNECTED)
        return lx_sock_broken_pipe(c, 0, flags);
    while (done < len) {
        uint64_t at, n, took = 0;
        if (stream_piece(c, u, done, len - done, 1, &at, &n) || !n)
            return done ? (int64_t)done : -LX_EFAULT;
        int64_t e = net_send(net_ep, s->sock, (void *)(uintptr_t)at, n, &took);
        if (e == SVC_E_CLOSED) {
            int err = done ? 0 : tell_error(s);
            return err ? -err : lx_sock_broken_pipe(c, done, flags);
        }
        if (e && e != SVC_E_AGAIN)
            return done ? (int64_t)done : lx_err(e);
        done += took;
        if (took < n) {                         /* the stack's send ring is full */
            if (nonblock)
                return done ? (int64_t)done : -LX_EAGAIN;
            c->t->io.done = done;
            int64_t w = wait_on(c, i, s->sndtimeo);
            if (w != LX_BLOCK)
                c->t->io.done = 0;
            return w == LX_BLOCK || !done ? w : (int64_t)done;
        }
    }
    return (int64_t)done;
}

int64_t lx_inet_write_kernel(struct lx_ctx *c, int i, int nonblock, const void *src, uint64_t len, int may_wait)
{
    struct lx_inet *s = &inets[i];
    settle(s);
    if (s->state != IN_CONNECTED)
        return -LX_ENOTCONN;
    uint64_t took = 0;
    int64_t e = len ? net_send(net_ep, s->sock, (void *)src, len, &took) : 0;
    if (e == SVC_E_CLOSED) {
        int err = tell_error(s);
        return -(err ? err : LX_EPIPE);
    }
    if (e && e != SVC_E_AGAIN)
        return lx_err(e);
    if (len && !took) {
        if (!may_wait)
            return 0;
        return nonblock ? -LX_EAGAIN : wait_on(c, i, s->sndtimeo);
    }
    return (int64_t)took;
}

static int64_t dgram_send(struct lx_ctx *c, int i, const struct uio *u, uint64_t len, uint64_t uto, uint64_t tolen)
{
    struct lx_inet *s = &inets[i];
    uint32_t addr = s->raddr;
    uint16_t port = s->rport;
    if (uto && tolen) {
        int64_t e = addr_in(c, uto, tolen, &addr, &port, NULL);
        if (e)
            return e;
        if (!addr)
            addr = LOOPBACK;
    } else if (s->state != IN_CONNECTED)
        return -LX_EDESTADDRREQ;
    if (!port && !s->icmp)
        return -LX_EINVAL;
    if (len > (s->icmp ? ICMP_MAX : UDP_MAX))
        return -LX_EMSGSIZE;
    if (s->shut & 2)
        return -LX_EPIPE;                       /* (shut for writing; no SIGPIPE for a datagram, as Linux) */
    if (len && lx_uio_copy(c, u, 0, bounce, len, 0))
        return -LX_EFAULT;
    uint16_t ident = 0;
    if (s->raw) {                               /* the process's echo request, its identifier its own */
        if (len < 8 || bounce[0] != 8 || bounce[1] != 0)
            return -LX_EINVAL;                  /* (the stack sends echo requests only) */
        ident = (uint16_t)(bounce[4] << 8 | bounce[5]);
        if (s->sock && s->lport != ident) {
            net_close(net_ep, s->sock);
            s->sock = 0;
        }
    }
    int64_t e = open_sock(s, ident);
    if (e)
        return e;
    e = net_sendto(net_ep, s->sock, addr, port, bounce, len);
    if (e == SVC_E_AGAIN)
        return (int64_t)len;                    /* no room in the device's ring: dropped, as Linux's full
                                                 * queue drops it and says nothing (without IP_RECVERR) */
    if (e == SVC_E_NOENT || e == SVC_E_STATE)
        return -LX_ENETUNREACH;
    if (e == SVC_E_RANGE)
        return -LX_EMSGSIZE;
    if (e == SVC_E_INVAL)
        return -LX_EINVAL;
    return e ? lx_err(e) : (int64_t)len;
}

int64_t lx_inet_send(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len, uint32_t flags,
                     uint64_t uto, uint64_t tolen)
{
    struct lx_inet *s = &inets[i];
    if (flags & MSG_OOB)
        return -LX_EOPNOTSUPP;
    if (s->type == SOCK_DGRAM)
        return dgram_send(c, i, u, len, uto, tolen);
    return stream_send(c, i, nonblock, u, len, flags);  /* (an address is ignored, as Linux's TCP does) */
}

/* ---------------------------------------------------------------- receiving */

/* MSG_PEEK: what has come, left to be read. Waiting (for anything, or with
 * MSG_WAITALL for all of len), it starts again from the first byte when
 * the stack next changes. */
static int64_t stream_peek(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len, int waitall,
                           int trunc)
{
    struct lx_inet *s = &inets[i];
    uint64_t done = 0;
    int ended = 0;
    while (done < len) {
        uint64_t at = (uint64_t)(uintptr_t)bounce, n = len - done < BOUNCE ? len - done : BOUNCE, got = 0;
        /* (MSG_TRUNC: counted, not copied, as Linux's tcp_recvmsg) */
        if (!trunc && (stream_piece(c, u, done, len - done, 0, &at, &n) || !n))
            return done ? (int64_t)done : -LX_EFAULT;
        int64_t e = net_peek(net_ep, s->sock, done, (void *)(uintptr_t)at, n, &got);
        if (e == SVC_E_CLOSED) {
            int err = done ? 0 : tell_error(s);
            return err ? -err : (int64_t)done;
        }
        if (e == SVC_E_AGAIN)
            break;                              /* nothing more yet */
        if (e)
            return done ? (int64_t)done : lx_err(e);
        if (!got) {
            ended = 1;                          /* the end of the stream */
            break;
        }
        if (!trunc && stream_piece_got(c, u, done, at, got))
            return done ? (int64_t)done : -LX_EFAULT;
        done += got;
        if (got < n && !waitall)
            break;                              /* all there is */
    }
    if (ended || done == len || (done && !waitall))
        return (int64_t)done;
    if (nonblock)
        return done ? (int64_t)done : -LX_EAGAIN;
    int64_t w = wait_on(c, i, s->rcvtimeo);
    return w == LX_BLOCK || !done ? w : (int64_t)done;
}

static int64_t stream_recv(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len,
                           struct lx_recv_args *a)
{
    struct lx_inet *s = &inets[i];
    settle(s);
    if (s->state == IN_CONNECTING)
        return nonblock ? -LX_EAGAIN : wait_on(c, i, s->rcvtimeo);
    if (s->err)
        return -take_err(s);                    /* a connection that failed */
    if (s->state != IN_CONNECTED)
        return s->shut & 1 ? 0 : -LX_ENOTCONN;
    if (a->flags & MSG_PEEK)
        return stream_peek(c, i, nonblock, u, len, (a->flags & MSG_WAITALL) != 0, (a->flags & MSG_TRUNC) != 0);
    uint64_t done = c->t->io.done;              /* MSG_WAITALL: what it took before it waited */
    c->t->io.done = 0;
    int trunc = (a->flags & MSG_TRUNC) != 0;
    while (done < len) {
        uint64_t at = 0, n = len - done, got = 0;
        if (!trunc && (stream_piece(c, u, done, len - done, 0, &at, &n) || !n))
            return done ? (int64_t)done : -LX_EFAULT;
        /* Into the bounce buffer the bytes are only peeked, and taken once
         * they are in the process's buffers: one it cannot write to leaves
         * them to be read (as on Linux), rather than lost. MSG_TRUNC drops
         * them uncopied (Linux's tcp_recvmsg). */
        int bounced = at == (uint64_t)(uintptr_t)bounce;
        int64_t e = trunc     ? net_discard(net_ep, s->sock, n, &got)
                    : bounced ? net_peek(net_ep, s->sock, 0, bounce, n, &got)
                              : net_recv(net_ep, s->sock, (void *)(uintptr_t)at, n, &got);
        if (e == SVC_E_CLOSED) {
            int err = done ? 0 : tell_error(s);
            return err ? -err : (int64_t)done;  /* (told once: then the end of the stream) */
        }
        if (e == SVC_E_AGAIN) {
            if (done && !(a->flags & MSG_WAITALL))
                break;
            if (nonblock)
                return done ? (int64_t)done : -LX_EAGAIN;
            c->t->io.done = done;
            int64_t w = wait_on(c, i, s->rcvtimeo);
            if (w != LX_BLOCK)
                c->t->io.done = 0;
            return w == LX_BLOCK || !done ? w : (int64_t)done;
        }
        if (e)
            return done ? (int64_t)done : lx_err(e);
        if (!got)
            break;                              /* the end of the stream */
        if (!trunc && stream_piece_got(c, u, done, at, got))
            return done ? (int64_t)done : -LX_EFAULT;
        if (!trunc && bounced && (e = net_discard(net_ep, s->sock, got, &got)) != 0)
            return done ? (int64_t)done : lx_err(e);
        done += got;
    }
    return (int64_t)done;
}

static int64_t dgram_recv(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len,
                          struct lx_recv_args *a)
{
    struct lx_inet *s = &inets[i];
    int peek = (a->flags & MSG_PEEK) != 0;
    int64_t e = open_sock(s, 0);
    if (e)
        return e;
    for (;;) {
        uint64_t n = 0;
        uint32_t from = 0, port = 0;
        e = (peek ? net_peekfrom : net_recvfrom)(net_ep, s->sock, bounce, BOUNCE, &n, &from, &port);
        if (e == SVC_E_AGAIN && (s->shut & 1))
            return 0;                           /* shut for reading: the end */
        if (e == SVC_E_AGAIN)
            return nonblock ? -LX_EAGAIN : wait_on(c, i, s->rcvtimeo);
        if (e)
            return lx_err(e);
        if (s->state == IN_CONNECTED && (from != s->raddr || (!s->icmp && port != s->rport))) {
            if (peek)                           /* (peeked: taken now, to look at the next) */
                net_recvfrom(net_ep, s->sock, bounce, 0, &n, &from, &port);
            continue;                           /* a connected socket takes its peer's only */
        }
        uint64_t at = 0;
        if (s->raw) {                           /* the IPv4 header a raw socket receives before the message */
            uint8_t h[20] = { 0x45, 0, (uint8_t)((n + 20) >> 8), (uint8_t)(n + 20), 0, 0, 0x40, 0, (uint8_t)port,
                              IPPROTO_ICMP };
            uint32_t dst = (from >> 24) == 127 ? LOOPBACK : if_addr();
            for (int k = 0; k < 4; k++) {
                h[12 + k] = (uint8_t)(from >> (24 - 8 * k));
                h[16 + k] = (uint8_t)(dst >> (24 - 8 * k));
            }
            uint32_t sum = 0;
            for (int k = 0; k < 20; k += 2)
                sum += (uint32_t)(h[k] << 8 | h[k + 1]);
            sum = (sum & 0xffff) + (sum >> 16);
            sum = ~((sum & 0xffff) + (sum >> 16)) & 0xffff;
            h[10] = (uint8_t)(sum >> 8);
            h[11] = (uint8_t)sum;
            at = len < 20 ? len : 20;
            if (at && lx_uio_copy(c, u, 0, h, at, 1))
                return -LX_EFAULT;
            n += 20;
        }
        uint64_t k = n < len ? n : len;
        if (k > at && lx_uio_copy(c, u, at, bounce, k - at, 1))
            return -LX_EFAULT;
        if (n > len)
            a->mflags |= MSG_TRUNC;
        e = name_out(c, a, from, s->icmp ? 0 : (uint16_t)port);
        if (e)
            return e;
        return (int64_t)((a->flags & MSG_TRUNC) ? n : k);
    }
}

int64_t lx_inet_recv(struct lx_ctx *c, int i, int nonblock, const struct uio *u, uint64_t len,
                     struct lx_recv_args *a)
{
    if (a->flags & MSG_OOB)
        return -LX_EOPNOTSUPP;
    if (inets[i].err) {
        int e = inets[i].err;
        inets[i].err = 0;
        return -e;
    }
    return inets[i].type == SOCK_DGRAM ? dgram_recv(c, i, nonblock, u, len, a)
                                       : stream_recv(c, i, nonblock, u, len, a);
}

/* ---------------------------------------------------------------- shutdown, names, poll */

int64_t lx_inet_shutdown(int i, uint64_t how)
{
    struct lx_inet *s = &inets[i];
    if (how > 2)
        return -LX_EINVAL;
    settle(s);
    int64_t e = 0;
    if (s->state == IN_LISTEN) {
        if (how != 1) {
            net_shutdown(net_ep, s->sock, 0);   /* it stops listening, as Linux's does */
            s->state = IN_NEW;
        }
    } else if (s->type == SOCK_DGRAM || s->state != IN_CONNECTED) {
        /* Linux marks it, and says ENOTCONN unless connected: a receive
         * with nothing queued then ends at once (0), a send is EPIPE. */
        s->shut |= (uint8_t)(how + 1);
        e = s->state == IN_CONNECTED ? 0 : -LX_ENOTCONN;
        lx_wake_all(LX_BLK_SOCK, i);
        return e;
    } else {
        e = net_shutdown(net_ep, s->sock, (uint32_t)how);
        if (e == SVC_E_STATE)
            return -LX_ENOTCONN;                /* (the connection is over) */
    }
    lx_wake_all(LX_BLK_SOCK, i);                /* its waiters look again: an accept ends, a read finds the end */
    return e ? lx_err(e) : 0;
}

int64_t lx_inet_name(struct lx_ctx *c, int i, uint64_t uaddr, uint64_t ulen, int peer)
{
    struct lx_inet *s = &inets[i];
    settle(s);
    if (peer) {
        if (s->state != IN_CONNECTED || (!s->rport && !s->icmp))
            return -LX_ENOTCONN;
        return addr_out(c, uaddr, ulen, s->raddr, s->rport);
    }
    uint32_t laddr = s->laddr;
    if (s->type == SOCK_STREAM && (s->state == IN_CONNECTED || s->state == IN_CONNECTING)) {
        uint32_t o[16];
        if (tcp_info_of(s->sock, o) == 0 && o[TI_LADDR])
            laddr = o[TI_LADDR];
    } else if (s->type == SOCK_DGRAM && s->state == IN_CONNECTED && !laddr)
        laddr = (s->raddr >> 24) == 127 ? LOOPBACK : if_addr();
    return addr_out(c, uaddr, ulen, laddr, s->lport);
}

int lx_inet_poll(int i)
{
    struct lx_inet *s = &inets[i];
    settle(s);
    uint32_t rev = s->sock ? stack_poll(s) : s->type == SOCK_STREAM ? POLLOUT_ | POLLHUP_ : POLLOUT_;
    if (s->err_told)
        rev &= ~POLLERR_;                       /* (its error was told: what is left is the end) */
    if (s->err)
        rev |= POLLERR_;
    if (s->shut & 1)
        rev |= POLLIN_ | POLLRDHUP_;            /* (marked without a connection: shutdown's note) */
    if (s->shut == 3)
        rev |= POLLHUP_;
    return (int)rev;
}

int64_t lx_inet_inq(int i)
{
    struct lx_inet *s = &inets[i];
    if (s->type != SOCK_STREAM || !s->sock)
        return 0;
    if (s->state == IN_LISTEN)
        return -LX_EINVAL;
    uint32_t o[16];
    return tcp_info_of(s->sock, o) == 0 ? o[TI_UNREAD] : 0;
}

/* ---------------------------------------------------------------- options */

static const char *const cc_names[] = { "reno", "cubic", "westwood" };

static int64_t set_tcp(struct lx_ctx *c, struct lx_inet *s, uint64_t name, uint64_t uval, uint64_t len)
{
    int32_t v = 0;
    if (s->type != SOCK_STREAM)
        return -LX_ENOPROTOOPT;                 /* (UDP hands another level to IP's, which knows only its own) */
    if (name == TCP_CONGESTION) {
        char want[16] = { 0 };
        uint64_t n = len < sizeof(want) - 1 ? len : sizeof(want) - 1;
        if (lx_copy_in(c, want, uval, n))
            return -LX_EFAULT;
        for (uint8_t k = 0; k < 3; k++)
            if (!strcmp(want, cc_names[k])) {
                s->cc = k;
                apply_options(s);
                return 0;
            }
        return -LX_ENOENT;                      /* (Linux's answer for a module it does not have) */
    }
    int64_t e = lx_sock_opt_int(c, uval, len, &v);
    if (e)
        return e;
    switch (name) {
    case TCP_NODELAY:
        s->nodelay = v != 0;
        break;
    case TCP_KEEPIDLE:
    case TCP_KEEPINTVL:
        if (v < 1 || v > 32767)
            return -LX_EINVAL;
        *(name == TCP_KEEPIDLE ? &s->keepidle : &s->keepintvl) = (uint32_t)v;
        break;
    case TCP_KEEPCNT:
        if (v < 1 || v > 127)
            return -LX_EINVAL;
        s->keepcnt = (uint32_t)v;
        break;
    case TCP_MAXSEG:
        return 0;                               /* (taken, as Linux takes it before connecting) */
    default:
        return -LX_ENOPROTOOPT;
    }
    apply_options(s);
    return 0;
}

int64_t lx_inet_setsockopt(struct lx_ctx *c, int i, uint64_t level, uint64_t name, uint64_t uval, uint64_t len)
{
    struct lx_inet *s = &inets[i];
    if (level == IPPROTO_TCP)
        return set_tcp(c, s, name, uval, len);
    if (level == IPPROTO_IP)
        return 0;                               /* (IP_TOS and the like: taken, not used) */
    if (level != SOL_SOCKET)
        return -LX_ENOPROTOOPT;
    int32_t v = 0;
    int64_t e;
    switch (name) {
    case SO_RCVTIMEO:
    case SO_SNDTIMEO:
        return lx_sock_opt_timeval(c, uval, len, name == SO_RCVTIMEO ? &s->rcvtimeo : &s->sndtimeo);
    case SO_LINGER: {
        int32_t l[2];
        if (len < sizeof(l))
            return -LX_EINVAL;
        if (lx_copy_in(c, l, uval, sizeof(l)))
            return -LX_EFAULT;
        s->linger[0] = l[0] != 0;
        s->linger[1] = l[1] < 0 ? 0 : (uint32_t)l[1];
        s->linger0 = l[0] && !l[1];
        apply_options(s);
        return 0;
    }
    }
    if ((e = lx_sock_opt_int(c, uval, len, &v)) != 0)
        return e;
    switch (name) {
    case SO_REUSEADDR:
        s->reuseaddr = v != 0;
        return 0;
    case SO_BROADCAST:
        s->broadcast = v != 0;
        return 0;
    case SO_KEEPALIVE:
        s->keepalive = v != 0;
        apply_options(s);
        return 0;
    case SO_SNDBUF:
    case SO_RCVBUF: {
        /* Doubled and clamped as Linux does (net.core.wmem_max and rmem_max
         * 212,992; at least 4,608 and 2,304); a TCP socket's caps from then
         * on: half of it queued to send, half of it the window offered. */
        uint32_t want = v < 0 ? 0 : (uint32_t)v > BUF_DEFAULT ? BUF_DEFAULT : (uint32_t)v;
        uint32_t min = name == SO_SNDBUF ? 4608 : 2304;
        *(name == SO_SNDBUF ? &s->sndbuf : &s->rcvbuf) = want * 2 < min ? min : want * 2;
        s->bufs_set |= name == SO_SNDBUF ? 1 : 2;
        apply_options(s);
        return 0;
    }
    default:
        return -LX_ENOPROTOOPT;
    }
}

/* struct tcp_info as Linux 6.1 lays it out (232 bytes): what the stack says of it. */
static uint32_t tcp_info_fill(const struct lx_inet *s, uint8_t *b)
{
    uint32_t o[16];
    memset(b, 0, 232);
    if (tcp_info_of(s->sock, o) == 0) {
        uint32_t mss = o[5] ? o[5] : 536;
        uint32_t ssthresh = o[10] >= 0x7fffffffu / mss * mss ? 0x7fffffffu : o[10] / mss;
        uint32_t w[] = {
            [2] = o[6],             /* tcpi_rto (us) */
            [4] = o[5],             /* tcpi_snd_mss */
            [5] = o[5],             /* tcpi_rcv_mss */
            [6] = (o[11] + mss - 1) / mss,      /* tcpi_unacked (segments) */
            [9] = o[12],            /* tcpi_retrans */
            [15] = 1500,            /* tcpi_pmtu */
            [17] = o[7],            /* tcpi_rtt (us) */
            [18] = o[8],            /* tcpi_rttvar (us) */
            [19] = ssthresh,        /* tcpi_snd_ssthresh (segments) */
            [20] = o[9] / mss,      /* tcpi_snd_cwnd (segments) */
            [21] = o[5],            /* tcpi_advmss */
            [22] = 3,               /* tcpi_reordering */
            [25] = o[12],           /* tcpi_total_retrans */
        };
        b[0] = (uint8_t)o[0];                   /* tcpi_state (the stack's numbers are Linux's) */
        for (unsigned k = 2; k < sizeof(w) / sizeof(w[0]); k++)
            memcpy(b + 4 * k, &w[k], 4);
        memcpy(b + 144, &o[TI_UNSENT], 4);      /* tcpi_notsent_bytes */
        memcpy(b + 228, &o[TI_SND_WND], 4);     /* tcpi_snd_wnd */
        uint32_t options = 0, wscale = 0, segs[2] = { 0, 0 };
        uint64_t rates[4] = { 0, ~0ull, 0, 0 }; /* pacing rate, its maximum (none set), bytes acked, received */
        if (net_tcp_stats(net_ep, s->sock, &options, &wscale, &rates[0], &rates[2], &rates[3], &segs[0],
                          &segs[1]) == 0) {
            b[5] = (uint8_t)options;            /* tcpi_options */
            b[6] = (uint8_t)wscale;             /* tcpi_snd_wscale, tcpi_rcv_wscale (4 bits each) */
            memcpy(b + 104, rates, sizeof(rates));      /* tcpi_pacing_rate .. tcpi_bytes_received */
            memcpy(b + 136, segs, sizeof(segs));        /* tcpi_segs_out, tcpi_segs_in */
        }
    } else
        b[0] = s->state == IN_LISTEN ? 10 : 7;  /* LISTEN, CLOSE */
    return 232;
}

int64_t lx_inet_getsockopt(struct lx_ctx *c, int i, uint64_t level, uint64_t name, uint64_t uval, uint64_t ulen)
{
    struct lx_inet *s = &inets[i];
    int32_t room;
    if (lx_copy_in(c, &room, ulen, sizeof(room)))
        return -LX_EFAULT;
    if (room < 0)
        return -LX_EINVAL;
    uint8_t buf[232];
    uint32_t n = sizeof(int32_t);
    int32_t v = 0;
    if (level != SOL_SOCKET && level != IPPROTO_IP && (level != IPPROTO_TCP || s->type != SOCK_STREAM))
        return -LX_EOPNOTSUPP;                  /* (IP's answer for a level not its own, as Linux's ip_getsockopt) */
    if (level == IPPROTO_TCP && name == TCP_INFO) {
        n = tcp_info_fill(s, buf);
    } else if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
        memset(buf, 0, 16);
        memcpy(buf, cc_names[s->cc], strlen(cc_names[s->cc]));
        n = 16;
    } else if (level == IPPROTO_TCP) {
        switch (name) {
        case TCP_NODELAY: v = s->nodelay; break;
        case TCP_KEEPIDLE: v = s->keepidle ? (int32_t)s->keepidle : 7200; break;
        case TCP_KEEPINTVL: v = s->keepintvl ? (int32_t)s->keepintvl : 75; break;
        case TCP_KEEPCNT: v = s->keepcnt ? (int32_t)s->keepcnt : 9; break;
        case TCP_MAXSEG: {
            uint32_t o[16];                     /* the MSS it sends; 536 before it connects, as Linux says */
            tcp_info_of(s->sock, o);
            v = s->state == IN_CONNECTED && o[TI_MSS] ? (int32_t)o[TI_MSS] : 536;
            break;
        }
        default: return -LX_ENOPROTOOPT;
        }
        memcpy(buf, &v, sizeof(v));
    } else if (level == SOL_SOCKET) {
        uint64_t tv[2];
        switch (name) {
        case SO_TYPE: v = s->raw ? SOCK_RAW : s->type; break;
        case SO_DOMAIN: v = AF_INET; break;
        case SO_PROTOCOL: v = s->type == SOCK_STREAM ? IPPROTO_TCP : s->icmp ? IPPROTO_ICMP : IPPROTO_UDP; break;
        case SO_ACCEPTCONN: v = s->state == IN_LISTEN; break;
        case SO_REUSEADDR: v = s->reuseaddr; break;
        case SO_BROADCAST: v = s->broadcast; break;
        case SO_KEEPALIVE: v = s->keepalive; break;
        case SO_SNDBUF: v = (int32_t)s->sndbuf; break;
        case SO_RCVBUF: v = (int32_t)s->rcvbuf; break;
        case SO_ERROR:
            settle(s);                          /* (a non-blocking connect's outcome) */
            v = take_err(s);
            if (!v && s->state == IN_CONNECTED && s->type == SOCK_STREAM)
                v = tell_error(s);
            break;
        case SO_LINGER:
            memcpy(buf, s->linger, 8);
            n = 8;
            break;
        case SO_RCVTIMEO:
        case SO_SNDTIMEO: {
            uint64_t ns = name == SO_RCVTIMEO ? s->rcvtimeo : s->sndtimeo;
            tv[0] = ns / NS;
            tv[1] = ns % NS / 1000;
            memcpy(buf, tv, sizeof(tv));
            n = sizeof(tv);
            break;
        }
        default:
            return -LX_ENOPROTOOPT;
        }
        if (n == sizeof(int32_t))
            memcpy(buf, &v, sizeof(v));
    } else
        return -LX_ENOPROTOOPT;
    uint32_t k = (uint32_t)room < n ? (uint32_t)room : n;
    int32_t out = (int32_t)k;
    if ((k && lx_copy_out(c, uval, buf, k)) || lx_copy_out(c, ulen, &out, sizeof(out)))
        return -LX_EFAULT;
    return 0;
}

/* ---------------------------------------------------------------- /proc/net, /proc/sys/net/ipv4 */

const char *lx_inet_cc_default(void)
{
    return cc_names[default_cc];
}

/* A new default for the Linux programs' new sockets: the personality's
 * own, not the stack's system-wide one (other clients keep theirs). */
int lx_inet_cc_set_default(const char *name)
{
    for (uint8_t k = 0; k < 3; k++)
        if (!strcmp(name, cc_names[k])) {
            default_cc = k;
            return 0;
        }
    return -LX_ENOENT;                          /* (Linux's answer for a module it does not have) */
}

/* "%08X:%04X": an address as Linux's /proc/net shows it (the network-order
 * word printed as a little-endian number) and a port. */
static void put_endpoint(uint32_t addr, uint16_t port)
{
    static const char digits[] = "0123456789ABCDEF";
    char b[14];
    for (int k = 0; k < 8; k++)                 /* (the word as the machine reads it: its bytes reversed) */
        b[k] = digits[(swap32(addr) >> (28 - 4 * k)) & 15];
    b[8] = ':';
    for (int k = 0; k < 4; k++)
        b[9 + k] = digits[(port >> (12 - 4 * k)) & 15];
    b[13] = 0;
    lx_proc_put("%s", b);
}

static void put_hex8(uint32_t v)
{
    static const char digits[] = "0123456789ABCDEF";
    char b[9];
    for (int k = 0; k < 8; k++)
        b[k] = digits[(v >> (28 - 4 * k)) & 15];
    b[8] = 0;
    lx_proc_put("%s", b);
}

/* End the line begun at `from` padded with spaces to `width` characters, as Linux's seq_pad does. */
static void put_pad(uint64_t from, uint64_t width)
{
    for (uint64_t n = lx_proc_text_len() - from; n < width; n++)
        lx_proc_put(" ");
    lx_proc_put("\n");
}

/* The stack was reached (a system without one shows the files' headers only). */
static int reached(void)
{
    return net_ep && net_ep != ~0u;
}

static void proc_dev(void)
{
    lx_proc_put("Inter-|   Receive                                                |  Transmit\n"
                " face |bytes    packets errs drop fifo frame compressed multicast|"
                "bytes    packets errs drop fifo colls carrier compressed\n");
    static const char *const names[] = { "lo", "eth0" };
    for (uint32_t index = 1; index <= 2 && reached(); index++) {
        uint64_t rb = 0, rp = 0, rd = 0, tb = 0, tp = 0, td = 0;
        if (net_ifstats(net_ep, index, &rb, &rp, &rd, &tb, &tp, &td) != 0)
            continue;
        lx_proc_put("%6s: %7lu %7lu %4u %4lu %4u %5u %10u %9u %8lu %7lu %4u %4lu %4u %5u %7u %10u\n", names[index - 1],
                    (unsigned long)rb, (unsigned long)rp, 0, (unsigned long)rd, 0, 0, 0, 0, (unsigned long)tb,
                    (unsigned long)tp, 0, (unsigned long)td, 0, 0, 0, 0);
    }
}

/* One line a TCP socket that has a stack socket, as Linux's tcp4_seq_show. */
static void proc_tcp(void)
{
    uint64_t start = lx_proc_text_len();
    lx_proc_put("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode");
    put_pad(start, 149);
    int sl = 0;
    for (int i = 0; i < LX_SOCKS && reached(); i++) {
        struct lx_inet *s = &inets[i];
        if (s->state == IN_FREE || s->type != SOCK_STREAM || !s->sock)
            continue;
        uint32_t o[16];
        if (tcp_info_of(s->sock, o) != 0 && s->state != IN_LISTEN)
            continue;
        uint32_t st = s->state == IN_LISTEN ? 10 : o[TI_STATE], mss = o[TI_MSS] ? o[TI_MSS] : 536;
        start = lx_proc_text_len();
        lx_proc_put("%4d: ", sl++);
        put_endpoint(s->state == IN_LISTEN ? s->laddr : o[TI_LADDR] ? o[TI_LADDR] : s->laddr, s->lport);
        lx_proc_put(" ");
        put_endpoint(s->state == IN_LISTEN ? 0 : o[TI_RADDR], s->state == IN_LISTEN ? 0 : (uint16_t)o[TI_RPORT]);
        lx_proc_put(" %c%c ", "0123456789ABCDEF"[st >> 4 & 15], "0123456789ABCDEF"[st & 15]);
        put_hex8(o[TI_UNACKED] + o[TI_UNSENT]);
        lx_proc_put(":");
        put_hex8(o[TI_UNREAD]);
        lx_proc_put(" 00:00000000 ");
        put_hex8(0);
        uint32_t cwnd = st == 10 ? 10 : o[TI_CWND] / mss;       /* (a listener: the initial window, and 0) */
        int ssthresh = st == 10 ? 0 : o[TI_SSTHRESH] >= 0x7fffffffu / mss * mss ? -1 : (int)(o[TI_SSTHRESH] / mss);
        lx_proc_put(" %5u %8d %u 1 0000000000000000 %u 0 0 %u %d", 0, 0, lx_sock_ino_at(i),
                    st == 10 ? 100 : o[TI_RTO] / 10000, cwnd, ssthresh);
        put_pad(start, 149);
    }
}

/* One line a UDP socket that has a stack socket (is bound), as Linux's udp4_format_sock. */
static void proc_udp(void)
{
    uint64_t start = lx_proc_text_len();
    lx_proc_put("   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode "
                "ref pointer drops");
    put_pad(start, 127);
    int sl = 0;
    for (int i = 0; i < LX_SOCKS && reached(); i++) {
        struct lx_inet *s = &inets[i];
        if (s->state == IN_FREE || s->type != SOCK_DGRAM || s->icmp || !s->sock)
            continue;
        start = lx_proc_text_len();
        lx_proc_put("%5d: ", sl++);
        put_endpoint(s->laddr, s->lport);
        lx_proc_put(" ");
        put_endpoint(s->state == IN_CONNECTED ? s->raddr : 0, s->state == IN_CONNECTED ? s->rport : 0);
        lx_proc_put(" %02x 00000000:00000000 00:00000000 00000000 %5u %8d %u 2 0000000000000000 0",
                    s->state == IN_CONNECTED ? 1 : 7, 0, 0, lx_sock_ino_at(i));
        put_pad(start, 127);
    }
}

/* ICMP's counters by type that Linux names in its Icmp lines (icmpmibmap),
 * in its order. */
static const uint8_t icmp_named[] = { 3, 11, 12, 4, 5, 8, 0, 13, 14, 17, 18 };
static const char *const icmp_names[] = { "DestUnreachs", "TimeExcds", "ParmProbs", "SrcQuenchs", "Redirects", "Echos",
                                          "EchoReps", "Timestamps", "TimestampReps", "AddrMasks", "AddrMaskReps" };

/* Linux's IcmpMsg lines: the types with a count (received ones first), 16
 * a line pair, none without any. */
static void proc_icmpmsg(const uint64_t *m)
{
    unsigned types[16], count = 0;
    for (unsigned i = 0; i <= 512; i++) {
        if (i < 512 && m[MIB_ICMP_IN_TYPE + i])
            types[count++] = i;
        if (count == 16 || (i == 512 && count)) {
            lx_proc_put("IcmpMsg:");
            for (unsigned j = 0; j < count; j++)
                lx_proc_put(" %sType%u", types[j] & 0x100 ? "Out" : "In", types[j] & 0xff);
            lx_proc_put("\nIcmpMsg:");
            for (unsigned j = 0; j < count; j++)
                lx_proc_put(" %lu", (unsigned long)m[MIB_ICMP_IN_TYPE + types[j]]);
            lx_proc_put("\n");
            count = 0;
        }
    }
}

/* The stack's counters (its `snmp`), in Linux's /proc/net/snmp layout. */
static void proc_snmp(void)
{
    static uint64_t m[NET_MIB_COUNT];
    uint64_t got = 0;
    memset(m, 0, sizeof m);
    if (reached())
        net_snmp(net_ep, m, sizeof m, &got);
#define V(f) (unsigned long)m[MIB_##f]
    lx_proc_put("Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos "
                "InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs "
                "ReasmFails FragOKs FragFails FragCreates\n");
    lx_proc_put("Ip: 2 64 %lu %lu %lu 0 %lu 0 %lu %lu %lu %lu %lu %lu %lu %lu %lu 0 %lu\n", V(IP_IN_RECEIVES),
                V(IP_IN_HDR_ERRORS), V(IP_IN_ADDR_ERRORS), V(IP_IN_UNKNOWN_PROTOS), V(IP_IN_DELIVERS),
                V(IP_OUT_REQUESTS), V(IP_OUT_DISCARDS), V(IP_OUT_NO_ROUTES), V(IP_REASM_TIMEOUT), V(IP_REASM_REQDS),
                V(IP_REASM_OKS), V(IP_REASM_FAILS), V(IP_FRAG_OKS), V(IP_FRAG_CREATES));
    lx_proc_put("Icmp: InMsgs InErrors InCsumErrors");
    for (unsigned i = 0; i < sizeof icmp_named; i++)
        lx_proc_put(" In%s", icmp_names[i]);
    lx_proc_put(" OutMsgs OutErrors OutRateLimitGlobal OutRateLimitHost");
    for (unsigned i = 0; i < sizeof icmp_named; i++)
        lx_proc_put(" Out%s", icmp_names[i]);
    lx_proc_put("\nIcmp: %lu %lu %lu", V(ICMP_IN_MSGS), V(ICMP_IN_ERRORS), V(ICMP_IN_CSUM_ERRORS));
    for (unsigned i = 0; i < sizeof icmp_named; i++)
        lx_proc_put(" %lu", (unsigned long)m[MIB_ICMP_IN_TYPE + icmp_named[i]]);
    lx_proc_put(" %lu %lu 0 0", V(ICMP_OUT_MSGS), V(ICMP_OUT_ERRORS));
    for (unsigned i = 0; i < sizeof icmp_named; i++)
        lx_proc_put(" %lu", (unsigned long)m[MIB_ICMP_OUT_TYPE + icmp_named[i]]);
    lx_proc_put("\n");
    proc_icmpmsg(m);
    lx_proc_put("Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets "
                "CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n");
    lx_proc_put("Tcp: 1 200 120000 -1 %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu\n", V(TCP_ACTIVE_OPENS),
                V(TCP_PASSIVE_OPENS), V(TCP_ATTEMPT_FAILS), V(TCP_ESTAB_RESETS), V(TCP_CURR_ESTAB), V(TCP_IN_SEGS),
                V(TCP_OUT_SEGS), V(TCP_RETRANS_SEGS), V(TCP_IN_ERRS), V(TCP_OUT_RSTS), V(TCP_IN_CSUM_ERRORS));
    static const char udp_head[] = "InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors "
                                   "InCsumErrors IgnoredMulti MemErrors\n";
    lx_proc_put("Udp: %s", udp_head);
    lx_proc_put("Udp: %lu %lu %lu %lu %lu %lu %lu %lu 0\n", V(UDP_IN_DATAGRAMS), V(UDP_NO_PORTS), V(UDP_IN_ERRORS),
                V(UDP_OUT_DATAGRAMS), V(UDP_RCVBUF_ERRORS), V(UDP_SNDBUF_ERRORS), V(UDP_IN_CSUM_ERRORS),
                V(UDP_IGNORED_MULTI));
#undef V
    lx_proc_put("UdpLite: %s", udp_head);
    lx_proc_put("UdpLite: 0 0 0 0 0 0 0 0 0\n");
}

/* The NIC's routes, as Linux's /proc/net/route shows its main table: the
 * subnet's, and the default one through the gateway. */
static void proc_route(void)
{
    uint64_t start = lx_proc_text_len(), mac = 0;
    lx_proc_put("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT");
    put_pad(start, 127);
    uint32_t addr = 0, prefix = 0, gw = 0, mtu = 0, link = 0;
    if (!reached() || net_info(net_ep, &mac, &addr, &prefix, &gw, &mtu, &link) != 0 || !addr)
        return;
    uint32_t mask = prefix ? ~0u << (32 - prefix) : 0;
    for (int r = gw ? 0 : 1; r < 2; r++) {      /* (Linux lists the default route first) */
        start = lx_proc_text_len();
        lx_proc_put("eth0\t");
        put_hex8(r ? swap32(addr & mask) : 0);
        lx_proc_put("\t");
        put_hex8(r ? 0 : swap32(gw));
        lx_proc_put("\t000%c\t0\t0\t0\t", r ? '1' : '3');       /* RTF_UP, and RTF_GATEWAY */
        put_hex8(r ? swap32(mask) : 0);
        lx_proc_put("\t0\t0\t0");
        put_pad(start, 127);
    }
}

void lx_inet_proc(uint32_t what)
{
    if (!net_ep)
        stack();                                /* (no socket made yet: reach the stack now) */
    switch (what) {
    case LX_PROC_NET_DEV: proc_dev(); break;
    case LX_PROC_NET_TCP: proc_tcp(); break;
    case LX_PROC_NET_UDP: proc_udp(); break;
    case LX_PROC_NET_SNMP: proc_snmp(); break;
    case LX_PROC_NET_ROUTE: proc_route(); break;
    case LX_PROC_NET_TCP6:                      /* (no IPv6: the headers alone, as Linux's with none open) */
        lx_proc_put("  sl  local_address                         remote_address                        st tx_queue "
                    "rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
        break;
    case LX_PROC_NET_UDP6:
        lx_proc_put("  sl  local_address                         remote_address                        st tx_queue "
                    "rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n");
        break;
    default: break;
    }
}

/* ---------------------------------------------------------------- interface ioctls (SIOCGIF*) */

#define SIOCGIFNAME     0x8910
#define SIOCGIFCONF     0x8912
#define SIOCGIFFLAGS    0x8913
#define SIOCGIFADDR     0x8915
#define SIOCGIFDSTADDR  0x8917
#define SIOCGIFBRDADDR  0x8919
#define SIOCGIFNETMASK  0x891b
#define SIOCGIFMETRIC   0x891d
#define SIOCGIFMTU      0x8921
#define SIOCGIFHWADDR   0x8927
#define SIOCGIFINDEX    0x8933
#define SIOCGIFTXQLEN   0x8942
#define SIOCGIFMAP      0x8970
#define IFF_UP          0x1
#define IFF_BROADCAST   0x2
#define IFF_LOOPBACK    0x8
#define IFF_RUNNING     0x40
#define IFF_MULTICAST   0x1000
#define ARPHRD_ETHER    1
#define ARPHRD_LOOPBACK 772

/* Interface `index`: 0, or ENODEV (no such one: the NIC of a system without). */
static int if_get(uint32_t index, struct lx_if *f)
{
    memset(f, 0, sizeof(*f));
    if (index == 1) {
        /* (lo's MTU is Linux's 65,536: the stack's loopback takes any IPv4
         * datagram whole, up to 65,535 bytes, which no MTU smaller would say) */
        *f = (struct lx_if){ "lo", 1, IFF_UP | IFF_LOOPBACK | IFF_RUNNING, LOOPBACK, 0xff000000u, 65536,
                             ARPHRD_LOOPBACK, { 0 } };
        return 0;
    }
    uint64_t mac = 0;
    uint32_t addr = 0, prefix = 0, gw = 0, mtu = 0, link = 0;
    if (index != 2 || net_info(net_ep, &mac, &addr, &prefix, &gw, &mtu, &link) != 0)
        return -LX_ENODEV;
    *f = (struct lx_if){ "eth0", 2, IFF_UP | IFF_BROADCAST | IFF_MULTICAST | (link ? IFF_RUNNING : 0), addr,
                         prefix ? ~0u << (32 - prefix) : 0, mtu, ARPHRD_ETHER, { 0 } };
    for (int k = 0; k < 6; k++)
        f->mac[k] = (uint8_t)(mac >> (8 * k));
    return 0;
}

int lx_inet_if(uint32_t index, struct lx_if *f, uint32_t *gateway)
{
    int64_t e = stack();
    if (e)
        return (int)e;
    uint64_t mac = 0;
    uint32_t addr = 0, prefix = 0, mtu = 0, link = 0;
    *gateway = 0;
    if (index == 2 && net_info(net_ep, &mac, &addr, &prefix, gateway, &mtu, &link) != 0)
        *gateway = 0;
    return if_get(index, f);
}

/* struct ifreq: the name, then a union of 24 bytes. */
struct lx_ifreq {
    char name[16];
    union {
        struct sin addr;
        struct { uint16_t family; uint8_t data[14]; } hw;
        int16_t flags;
        int32_t value;
        uint8_t map[24];
    } u;
};

static void put_sin(struct lx_ifreq *r, uint32_t addr)
{
    r->u.addr = (struct sin){ AF_INET, 0, swap32(addr), { 0 } };
}

/* SIOCGIFCONF: an ifreq (name and address) for each interface with an
 * address, as much as fits the caller's buffer; with none (NULL), the
 * length they all take. */
static int64_t if_conf(struct lx_ctx *c, uint64_t arg)
{
    struct { int32_t len, pad; uint64_t buf; } conf;
    if (lx_copy_in(c, &conf, arg, sizeof(conf)))
        return -LX_EFAULT;
    int32_t used = 0;
    for (uint32_t index = 1; index <= 2; index++) {
        struct lx_if f;
        if (if_get(index, &f) || !f.addr)
            continue;
        if (conf.buf) {
            if (conf.len - used < (int32_t)sizeof(struct lx_ifreq))
                break;
            struct lx_ifreq r;
            memset(&r, 0, sizeof(r));
            memcpy(r.name, f.name, strlen(f.name));
            put_sin(&r, f.addr);
            if (lx_copy_out(c, conf.buf + (uint64_t)used, &r, sizeof(r)))
                return -LX_EFAULT;
        }
        used += (int32_t)sizeof(struct lx_ifreq);
    }
    conf.len = used;
    return lx_copy_out(c, arg, &conf.len, sizeof(conf.len)) ? -LX_EFAULT : 0;
}

int64_t lx_inet_ifioctl(struct lx_ctx *c, uint32_t req, uint64_t arg)
{
    int64_t e = stack();
    if (e)
        return req == SIOCGIFCONF ? e : -LX_ENODEV;
    if (req == SIOCGIFCONF)
        return if_conf(c, arg);
    struct lx_ifreq r;
    if (lx_copy_in(c, &r, arg, sizeof(r)))
        return -LX_EFAULT;
    struct lx_if f;
    uint32_t index = 0;
    if (req == SIOCGIFNAME) {
        if (r.u.value < 1 || if_get((uint32_t)r.u.value, &f))
            return -LX_ENODEV;
        memset(r.name, 0, sizeof(r.name));
        memcpy(r.name, f.name, strlen(f.name));
        return lx_copy_out(c, arg, &r, sizeof(r)) ? -LX_EFAULT : 0;
    }
    r.name[15] = 0;
    for (uint32_t k = 1; k <= 2 && !index; k++)
        if (!if_get(k, &f) && !strcmp(r.name, f.name))
            index = k;
    if (!index)
        return -LX_ENODEV;
    memset(&r.u, 0, sizeof(r.u));
    switch (req) {
    case SIOCGIFFLAGS: r.u.flags = (int16_t)f.flags; break;
    case SIOCGIFMETRIC: r.u.value = 0; break;
    case SIOCGIFMTU: r.u.value = (int32_t)f.mtu; break;
    case SIOCGIFINDEX: r.u.value = (int32_t)f.index; break;
    case SIOCGIFTXQLEN: r.u.value = 1000; break;
    case SIOCGIFMAP: break;                     /* (no memory window, interrupt or DMA channel to tell) */
    case SIOCGIFHWADDR:
        r.u.hw.family = f.hwtype;
        memcpy(r.u.hw.data, f.mac, 6);
        break;
    case SIOCGIFADDR:
    case SIOCGIFDSTADDR:                        /* (no point-to-point peer: the address itself, as Linux) */
    case SIOCGIFNETMASK:
    case SIOCGIFBRDADDR:
        if (!f.addr)
            return -LX_EADDRNOTAVAIL;
        put_sin(&r, req == SIOCGIFNETMASK ? f.mask : req == SIOCGIFBRDADDR ? (f.flags & IFF_BROADCAST ? f.addr | ~f.mask : 0)
                                                                            : f.addr);
        break;
    default:
        /* The SIOCS* that change an interface: its configuration is the
         * system's (netcfg), as for a process without CAP_NET_ADMIN. */
        switch (req) {
        case 0x890b: case 0x890c:               /* SIOCADDRT, SIOCDELRT */
        case 0x8914: case 0x8916: case 0x8918: case 0x891a: case 0x891c:        /* SIOCSIFFLAGS .. NETMASK */
        case 0x891e: case 0x8922: case 0x8923: case 0x8924: case 0x8943:        /* METRIC, MTU, NAME, HWADDR, TXQLEN */
            return -LX_EPERM;
        default:
            return -LX_ENOTTY;
        }
    }
    return lx_copy_out(c, arg, &r, sizeof(r)) ? -LX_EFAULT : 0;
}
