/*
 * AF_UNIX sockets: stream, datagram and seqpacket; socketpair, and
 * socket/bind/listen/accept4/connect on file system paths and on abstract
 * names; sendto/recvfrom/sendmsg/recvmsg (and read, write, readv, writev)
 * with SCM_RIGHTS; shutdown; getsockname/getpeername; the common socket
 * options. AF_INET sockets take a slot here too (their open file and the
 * descriptor calls), and inet.c does the rest of each call over the
 * network stack.
 *
 * A socket is a slot of `socks` with its receive queue, the service's own
 * memory made with the socket: a ring of SOCK_BUF bytes, a ring of records
 * (a datagram, or a stream write; a stream write is merged into the
 * record before it unless either carries descriptors) and a ring of the
 * open files in flight to it (SCM_RIGHTS: a record's `nfiles` are the next
 * ones of that ring). A sender copies straight from its buffers into the
 * receiver's queue; a receiver copies out of its own. Nothing else holds
 * data, so a socket costs the same whoever sends to it.
 *
 * Waiting is the pipe's (LX_BLK_SOCK on the socket index): a reader waits
 * on its own socket, a writer on the receiver's, connect and accept on the
 * listener; every change wakes the socket it changed (and polls).
 *
 * A stream connection is made at connect(): the listener gets a new socket
 * (an "embryo": no open file until accept4 takes it), connected to the
 * client. A listener holds at most its backlog + 1 of them, as Linux does;
 * connect waits (or EAGAIN) past that.
 *
 * Descriptors in flight hold references to their open files. A socket
 * whose only references are in flight (sent over itself, or in a cycle of
 * sockets) would never close: when a socket's file loses a reference and
 * descriptors are in flight, a collection (lx_sock_collect) finds the sockets no
 * process can reach any more and empties their queues, which closes them
 * (Linux's unix_gc does the same).
 *
 * Limits: LX_SOCKS sockets in all (ENFILE past it), LX_PROC_SOCKS made by
 * one process and still open (EMFILE past it: a process cannot take them
 * all, and the queue memory it makes is bounded); SOCK_BUF bytes,
 * SOCK_RECS records and SCM_MAX_FD descriptors queued to one socket (the
 * writer waits); a datagram of at most SO_SNDBUF - 32 bytes (EMSGSIZE); an
 * unconnected receiver holds at most MAX_DGRAM_QLEN + 1 datagrams from
 * others (Linux's net.unix.max_dgram_qlen).
 */
#include "lx.h"

#define LX_PROC_SOCKS   32              /* sockets one process made and still open (EMFILE past it) */
#define LX_PROC_DGRAMS  8               /* AF_INET datagram ones among them: half of the 16 the stack gives
                                         * the personality for all its processes (services/net/net.h) */
#define SOCK_BUF        212992          /* a receive queue's bytes: Linux's default buffer, so its biggest datagram fits */
#define SOCK_RECS       64
#define SCM_MAX_FD      253
#define MAX_DGRAM_QLEN  10
#define MAX_BACKLOG     16              /* connections a listener holds unaccepted, at most (+1) */
#define UN_MAX          110             /* sizeof(struct sockaddr_un) */
#define OPTMEM_MAX      20480           /* control data of one sendmsg (net.core.optmem_max) */
#define UIO_MAXIOV      1024
#define MAX_RW_COUNT    0x7ffff000ull
#define DEFAULT_BUF     212992          /* what SO_SNDBUF and SO_RCVBUF say (Linux's wmem_default) */
#define DGRAM_MAX(s)    ((s)->sndbuf - 32 < SOCK_BUF ? (s)->sndbuf - 32 : SOCK_BUF)    /* Linux's EMSGSIZE limit */

#define AF_UNSPEC       0
#define AF_UNIX         1
#define AF_INET         2
#define AF_NETLINK      16
#define NL_ADDR         12              /* struct sockaddr_nl: family, pad, port id, groups */
#define SOCK_STREAM     1
#define SOCK_DGRAM      2
#define SOCK_RAW        3
#define SOCK_SEQPACKET  5
#define SOCK_TYPE_MASK  0xf
#define SOCK_MAX        11
#define SOCK_CLOEXEC    02000000
#define SOCK_NONBLOCK   O_NONBLOCK

#define MSG_OOB         0x1
#define MSG_PEEK        0x2
#define MSG_CTRUNC      0x8
#define MSG_TRUNC       0x20
#define MSG_DONTWAIT    0x40
#define MSG_WAITALL     0x100
#define MSG_NOSIGNAL    0x4000
#define MSG_CMSG_CLOEXEC 0x40000000

#define SOL_SOCKET      1
#define SCM_RIGHTS      1
#define SCM_CREDENTIALS 2
#define SO_REUSEADDR    2
#define SO_TYPE         3
#define SO_ERROR        4
#define SO_DONTROUTE    5
#define SO_BROADCAST    6
#define SO_SNDBUF       7
#define SO_RCVBUF       8
#define SO_KEEPALIVE    9
#define SO_OOBINLINE    10
#define SO_LINGER       13
#define SO_PASSCRED     16
#define SO_PEERCRED     17
#define SO_RCVLOWAT     18
#define SO_SNDLOWAT     19
#define SO_RCVTIMEO     20
#define SO_SNDTIMEO     21
#define SO_ACCEPTCONN   30
#define SO_PROTOCOL     38
#define SO_DOMAIN       39

#define RCV_SHUTDOWN    1
#define SEND_SHUTDOWN   2

#define LX_EDOM         33
#define LX_ENOTSOCK     88
#define LX_EDESTADDRREQ 89
#define LX_EMSGSIZE     90
#define LX_EPROTOTYPE   91
#define LX_ENOPROTOOPT  92
#define LX_EPROTONOSUPPORT 93
#define LX_ESOCKTNOSUPPORT 94
#define LX_EADDRINUSE   98
#define LX_ENOBUFS      105
#define LX_EISCONN      106
#define LX_ENOTCONN     107
#define LX_ECONNREFUSED 111
#define LX_ECONNRESET   104
#define LX_POLLRDHUP    0x2000

#define LX_S_IFSOCK     0140000
#define NS              1000000000ull

/* A message in a receive queue: len bytes of the data ring (what is left
 * of it), the next nfiles files of the file ring, and who sent it (a
 * datagram's sender address). */
struct srec {
    uint32_t len;
    uint16_t nfiles;
    uint16_t addrlen;
    int32_t pid;                /* the sender (SCM_CREDENTIALS) */
    uint8_t addr[UN_MAX];
};

struct squeue {
    uint8_t data[SOCK_BUF];
    struct srec recs[SOCK_RECS];
    struct lx_file *files[SCM_MAX_FD];
};

enum { SS_FREE, SS_OPEN, SS_LISTEN, SS_CONNECTED };

struct lx_sock {
    int state;                  /* SS_*: SS_FREE is a free slot */
    int type;                   /* SOCK_STREAM, SOCK_DGRAM or SOCK_SEQPACKET */
    int family;                 /* AF_UNIX, or AF_INET: inet.c has the rest (same index), no queue here */
    struct squeue *q;
    uint32_t head, count;       /* the data ring: first byte, bytes */
    uint32_t rhead, rcount;     /* the record ring */
    uint32_t fhead, fcount;     /* the file ring */
    struct lx_file *file;       /* its open file (NULL: a connection not accepted yet) */
    int32_t peer;               /* the socket it is connected to, or -1 */
    int32_t listener;           /* a connection not accepted yet: its listener; -1 */
    uint64_t seq;               /* ... and its place in the listener's queue */
    uint32_t backlog, pending;  /* a listener: connections it may hold (less one), holds */
    int32_t node;               /* bound to this file system node, or -1 */
    uint16_t addrlen;           /* its address (0: none) */
    uint8_t bound;              /* it took the address itself (bind, autobind): it answers to the name;
                                 * an accepted connection shows its listener's but does not */
    uint8_t addr[UN_MAX];
    uint16_t peer_addrlen;      /* the address of a peer that closed (getpeername still answers) */
    uint8_t peer_addr[UN_MAX];
    int shut;                   /* RCV_SHUTDOWN, SEND_SHUTDOWN */
    int err;                    /* SO_ERROR: a pending error (positive errno) */
    int peer_gone;              /* a datagram socket's peer closed: ECONNREFUSED once */
    int32_t cred_pid;           /* SO_PEERCRED: the peer's pid (at connect, listen or socketpair) */
    int32_t own_pid;            /* who made it, or listened on it */
    int32_t owner;              /* the process it is charged to (who made it) */
    uint32_t sndbuf, rcvbuf;    /* what SO_SNDBUF and SO_RCVBUF say */
    uint32_t ino;               /* its inode number (lx_ino_new) */
    int passcred, reuseaddr, keepalive, broadcast, oobinline, dontroute;
    uint32_t linger[2];
    uint64_t rcvtimeo, sndtimeo;        /* ns (0: none) */
};

static struct lx_sock socks[LX_SOCKS];
static uint64_t next_seq;
static uint32_t in_flight;      /* files in flight in all queues */
static int gc_due;             /* a reference to a file went while files were in flight */
static uint32_t autobind_next;

/* ---------------------------------------------------------------- slots */

static struct lx_sock *sock_of(struct lx_file *f)
{
    return &socks[f->sock];                     /* (f->kind is LX_FILE_SOCK: its callers checked) */
}

uint32_t lx_socks_in_use(void)
{
    uint32_t n = 0;
    for (int i = 0; i < LX_SOCKS; i++)
        n += socks[i].state != SS_FREE;
    return n;
}

static int32_t index_of(const struct lx_sock *s)
{
    return (int32_t)(s - socks);
}

/* A new socket of `type` with its queue, charged to the calling process,
 * or NULL (EMFILE past its share, ENFILE, ENOMEM in *err). */
static struct lx_sock *sock_new(struct lx_ctx *c, int family, int type, int *err)
{
    int mine = 0;
    for (int i = 0; i < LX_SOCKS; i++)
        mine += socks[i].state != SS_FREE && socks[i].owner == c->p->pid;
    if (mine >= LX_PROC_SOCKS) {
        *err = -LX_EMFILE;                      /* one process never takes every socket there is */
        return NULL;
    }
    for (int i = 0; i < LX_SOCKS; i++) {
        struct lx_sock *s = &socks[i];
        if (s->state != SS_FREE)
            continue;
        struct squeue *q = family != AF_INET ? svc_alloc(sizeof(struct squeue)) : NULL;
        if (!q && family != AF_INET) {
            *err = -LX_ENOMEM;
            return NULL;
        }
        *s = (struct lx_sock){ .state = SS_OPEN, .type = type, .family = family, .q = q, .peer = -1, .listener = -1, .node = -1,
                               .own_pid = c->p->pid, .owner = c->p->pid, .sndbuf = DEFAULT_BUF, .rcvbuf = DEFAULT_BUF,
                               .ino = lx_ino_new() };
        return s;
    }
    *err = -LX_ENFILE;
    return NULL;
}

/* An open file for socket s (refs 1), or NULL. */
static struct lx_file *sock_file(struct lx_ctx *c, struct lx_sock *s, uint32_t flags)
{
    struct lx_file *f = lx_file_new(c->p, LX_FILE_SOCK, index_of(s), O_RDWR | (flags & O_NONBLOCK));
    if (f)
        s->file = f;
    return f;
}

static struct lx_sock *peer_of(const struct lx_sock *s)
{
    return s->peer >= 0 ? &socks[s->peer] : NULL;
}

static int connection_based(const struct lx_sock *s)
{
    return s->type != SOCK_DGRAM;
}

/* ---------------------------------------------------------------- the user's buffers */

int lx_uio_copy(struct lx_ctx *c, const struct uio *u, uint64_t off, void *buf, uint64_t len, int out)
{
    uint8_t *b = buf;
    if (u->kbuf) {
        memcpy(b, u->kbuf + off, len);          /* (only ever copied from) */
        return 0;
    }
    for (uint64_t k = 0; len && k < (u->n ? u->n : 1); k++) {
        uint64_t v[2] = { u->base, u->len };
        if (u->n && lx_copy_in(c, v, u->iov + k * 16, 16))
            return -LX_EFAULT;
        if (off >= v[1]) {
            off -= v[1];
            continue;
        }
        uint64_t m = v[1] - off < len ? v[1] - off : len;
        if (out ? lx_copy_out(c, v[0] + off, b, m) : lx_copy_in(c, b, v[0] + off, m))
            return -LX_EFAULT;
        b += m;
        len -= m;
        off = 0;
    }
    return 0;
}

int lx_uio_piece(struct lx_ctx *c, const struct uio *u, uint64_t off, uint64_t max, uint64_t *addr,
                 uint64_t *len)
{
    uint64_t v[2] = { u->base, u->len };
    if (u->kbuf)
        v[0] = (uint64_t)(uintptr_t)u->kbuf, v[1] = off + max;    /* (its length is the caller's) */
    for (uint64_t k = 0; k < (u->n ? u->n : 1); k++) {
        if (u->n && lx_copy_in(c, v, u->iov + k * 16, 16))
            return -LX_EFAULT;
        if (off < v[1]) {
            *addr = v[0] + off;
            *len = v[1] - off < max ? v[1] - off : max;
            return 0;
        }
        off -= v[1];
    }
    *addr = 0;
    *len = 0;
    return 0;
}

/* Check an iovec array (as readv does) and set up u; the total length or a negated errno. */
static int64_t uio_iov(struct lx_ctx *c, struct uio *u, uint64_t iov, uint64_t n)
{
    if (n > UIO_MAXIOV)
        return -LX_EMSGSIZE;
    *u = (struct uio){ iov, n, 0, 0, NULL };
    uint64_t total = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t v[2];
        if (lx_copy_in(c, v, iov + k * 16, 16))
            return -LX_EFAULT;
        if ((int64_t)v[1] < 0)
            return -LX_EINVAL;
        if (!lx_range_ok(v[0], v[1]))
            return -LX_EFAULT;
        total += v[1];
        if (total > MAX_RW_COUNT)
            return -LX_EINVAL;
    }
    return (int64_t)total;
}

/* Copy n bytes between the data ring of s at ring position pos and offset off of u. */
static int ring_copy(struct lx_ctx *c, struct lx_sock *s, uint32_t pos, const struct uio *u, uint64_t off,
                     uint64_t n, int out)
{
    pos %= SOCK_BUF;
    uint64_t first = SOCK_BUF - pos < n ? SOCK_BUF - pos : n;
    if (lx_uio_copy(c, u, off, s->q->data + pos, first, out))
        return -LX_EFAULT;
    return n > first ? lx_uio_copy(c, u, off + first, s->q->data, n - first, out) : 0;
}

/* ---------------------------------------------------------------- addresses */

/* Copy a struct sockaddr_un from the process and check it: its length, or
 * a negated errno. The family alone (length 2) is an address only for
 * bind (`bind`: autobind). AF_UNSPEC is allowed when unspec_ok (a datagram
 * socket's disconnect): then 0. */
static int64_t addr_in(struct lx_ctx *c, uint64_t uaddr, uint64_t len, uint8_t *addr, int unspec_ok, int bind)
{
    if ((int32_t)len < 0 || len > UN_MAX || len < 2)
        return -LX_EINVAL;
    if (lx_copy_in(c, addr, uaddr, len))
        return -LX_EFAULT;
    uint16_t family = (uint16_t)(addr[0] | addr[1] << 8);
    if (family == AF_UNSPEC && unspec_ok)
        return 0;
    if (family != AF_UNIX || (len == 2 && !bind))
        return -LX_EINVAL;
    return (int64_t)len;
}

/* A path address's path (NUL-terminated in buf, 109 bytes at least). */
static void addr_path(const uint8_t *addr, uint64_t len, char *buf)
{
    uint64_t n = 0;
    while (2 + n < len && addr[2 + n])
        n++;
    memcpy(buf, addr + 2, n);
    buf[n] = 0;
}

/* The socket bound to address addr[0..len), or a negated errno. */
static int32_t find_bound(struct lx_ctx *c, const uint8_t *addr, uint64_t len)
{
    if (len > 2 && addr[2] == 0) {              /* an abstract name: all of its bytes */
        for (int i = 0; i < LX_SOCKS; i++)
            if (socks[i].state != SS_FREE && socks[i].bound && socks[i].addrlen == len && socks[i].node < 0 &&
                memcmp(socks[i].addr, addr, len) == 0)
                return i;
        return -LX_ECONNREFUSED;
    }
    char path[UN_MAX];
    addr_path(addr, len, path);
    if (!path[0])
        return -LX_ENOENT;
    int32_t dir = lx_start_dir(c, -100, path);
    int32_t node = dir < 0 ? dir : lx_lookup(dir, path, 1);
    if (node < 0)
        return node;
    if ((lx_node(node)->mode & LX_S_IFMT) != LX_S_IFSOCK)
        return -LX_ECONNREFUSED;
    for (int i = 0; i < LX_SOCKS; i++)
        if (socks[i].state != SS_FREE && socks[i].node == node)
            return i;
    return -LX_ECONNREFUSED;
}

/* Write an address out as accept, getsockname, recvfrom do: at most *ulen
 * bytes of it, and its real length into *ulen. 0 or a negated errno. */
static int addr_out(struct lx_ctx *c, uint64_t uaddr, uint64_t ulen, const uint8_t *addr, uint32_t len)
{
    if (!uaddr)
        return 0;
    int32_t room;
    if (lx_copy_in(c, &room, ulen, sizeof(room)))
        return -LX_EFAULT;
    if (room < 0)
        return -LX_EINVAL;
    uint8_t unnamed[2] = { AF_UNIX, 0 };
    if (!len) {                                 /* no address: the family alone */
        addr = unnamed;
        len = 2;
    }
    uint32_t n = (uint32_t)room < len ? (uint32_t)room : len;
    if (lx_copy_out(c, uaddr, addr, n))
        return -LX_EFAULT;
    int32_t full = (int32_t)len;
    return lx_copy_out(c, ulen, &full, sizeof(full));
}

/* Give s an abstract name of five hex digits (Linux's autobind). */
static void autobind(struct lx_sock *s)
{
    static const char hex[] = "0123456789abcdef";
    for (;;) {
        uint32_t v = autobind_next++ & 0xfffff;
        uint8_t a[8] = { AF_UNIX, 0, 0 };
        for (int k = 0; k < 5; k++)
            a[3 + k] = (uint8_t)hex[(v >> (4 * (4 - k))) & 0xf];
        int used = 0;
        for (int i = 0; i < LX_SOCKS; i++)
            used |= socks[i].state != SS_FREE && socks[i].bound && socks[i].addrlen == 8 &&
                    memcmp(socks[i].addr, a, 8) == 0;
        if (!used) {
            memcpy(s->addr, a, 8);
            s->addrlen = 8;
            s->bound = 1;
            return;
        }
    }
}

/* ---------------------------------------------------------------- closing, and the collection of unreachable sockets */


/* Take the files out of s's queue and drop them, one at a time, the
 * queue consistent at each drop. A drop finalises nothing while it runs
 * (lx_file_put finalises in its outermost call, after this returns), so
 * neither s nor any other queue changes under it. */
static void purge(struct lx_sock *s)
{
    for (uint32_t k = 0; k < s->rcount; k++)
        s->q->recs[(s->rhead + k) % SOCK_RECS].nfiles = 0;
    while (s->q && s->fcount) {
        struct lx_file *f = s->q->files[s->fhead];
        s->fhead = (s->fhead + 1) % SCM_MAX_FD;
        s->fcount--;
        in_flight--;
        lx_file_put(f);
    }
}

/* Socket s goes: its peer sees the end, its unaccepted connections go.
 * An unaccepted connection is never a listener, so this goes one level
 * deep at most. */
static void sock_release(struct lx_sock *s)
{
    int32_t me = index_of(s);
    if (s->family == AF_INET) {
        lx_inet_close(me);
        s->state = SS_FREE;
        s->file = NULL;
        lx_wake_all(LX_BLK_SOCK, me);
        return;
    }
    struct lx_sock *p = peer_of(s);
    if (p && connection_based(s)) {
        p->shut = RCV_SHUTDOWN | SEND_SHUTDOWN;
        if (s->count || s->rcount || s->listener >= 0)
            p->err = LX_ECONNRESET;             /* data it never read, or a connection never accepted */
        p->peer_addrlen = s->addrlen;
        memcpy(p->peer_addr, s->addr, UN_MAX);
        p->peer = -1;
        lx_wake_all(LX_BLK_SOCK, s->peer);
    }
    for (int i = 0; i < LX_SOCKS; i++) {
        struct lx_sock *o = &socks[i];
        if (o->state != SS_FREE && o != s && o->type == SOCK_DGRAM && o->peer == me) {
            o->peer = -1;                       /* a datagram socket connected to it */
            o->peer_gone = 1;
        }
    }
    if (s->listener >= 0 && socks[s->listener].state != SS_FREE) {
        socks[s->listener].pending--;
        lx_wake_all(LX_BLK_SOCK, s->listener);
    }
    s->state = SS_FREE;                         /* nothing reaches it from here on */
    s->file = NULL;
    purge(s);
    for (int i = 0; i < LX_SOCKS; i++)
        if (socks[i].state != SS_FREE && socks[i].listener == me)
            sock_release(&socks[i]);            /* connections it never accepted: their clients see ECONNRESET */
    if (s->node >= 0) {
        struct lx_node *n = lx_node(s->node);
        n->opens--;
        lx_node_maybe_free(s->node);
    }
    svc_free(s->q, sizeof(struct squeue));
    s->q = NULL;
    lx_wake_all(LX_BLK_SOCK, me);               /* writers waiting for room in it find it gone */
}

void lx_sock_close(struct lx_file *f)
{
    if (f->kind == LX_FILE_SOCK && f->sock >= 0 && f->sock < LX_SOCKS && socks[f->sock].state != SS_FREE &&
        socks[f->sock].file == f)
        sock_release(sock_of(f));
}

uint32_t lx_sock_ino_at(int i)
{
    return socks[i].ino;
}

uint32_t lx_sock_ino(const struct lx_file *f)
{
    if (f->kind != LX_FILE_SOCK || f->sock < 0 || f->sock >= LX_SOCKS || socks[f->sock].state == SS_FREE)
        return 0;
    return socks[f->sock].ino;
}

void lx_sock_ref_dropped(void)
{
    if (in_flight)
        gc_due = 1;                             /* lx_file_put runs the collection (lx_sock_collect) */
}

/* The collection's scratch: which sockets files in flight hold, which are
 * reachable, and the sockets still to visit. Used by lx_sock_collect
 * alone, which never runs inside itself (lx_file_put calls it only from
 * its outermost call, between finalisations). */
static uint32_t held[LX_SOCKS];
static uint8_t live[LX_SOCKS];
static int32_t visit[LX_SOCKS];

/* Mark socket i reachable, and everything in flight in it, and the
 * unaccepted connections of it, transitively: a walk with a list of its
 * own (each socket enters it once), not a recursion. */
static void mark(int i)
{
    uint32_t n = 0;
    if (live[i])
        return;
    live[i] = 1;
    visit[n++] = i;
    while (n) {
        struct lx_sock *s = &socks[visit[--n]];
        int32_t me = index_of(s);
        for (uint32_t k = 0; k < s->fcount; k++) {
            struct lx_file *f = s->q->files[(s->fhead + k) % SCM_MAX_FD];
            if (f->kind == LX_FILE_SOCK && !live[f->sock]) {
                live[f->sock] = 1;
                visit[n++] = f->sock;
            }
        }
        for (int j = 0; j < LX_SOCKS; j++) {
            if (socks[j].state != SS_FREE && socks[j].listener == me && !live[j]) {
                live[j] = 1;                    /* its unaccepted connections */
                visit[n++] = j;
            }
        }
    }
}

/* Find the sockets that only descriptors in flight reach (no process
 * holds them or can receive them) and empty their queues; 1 if it ran
 * (references were dropped, so lx_file_put looks again), 0 if it was not
 * due. Linux's unix_gc does the same. */
int lx_sock_collect(void)
{
    if (!gc_due)
        return 0;
    gc_due = 0;
    if (!in_flight)
        return 0;
    for (int i = 0; i < LX_SOCKS; i++)
        held[i] = live[i] = 0;
    for (int i = 0; i < LX_SOCKS; i++) {
        struct lx_sock *s = &socks[i];
        for (uint32_t k = 0; s->state != SS_FREE && k < s->fcount; k++) {
            struct lx_file *f = s->q->files[(s->fhead + k) % SCM_MAX_FD];
            if (f->kind == LX_FILE_SOCK)
                held[f->sock]++;
        }
    }
    for (int i = 0; i < LX_SOCKS; i++)
        if (socks[i].state != SS_FREE && socks[i].file && socks[i].file->refs > held[i])
            mark(i);                            /* a descriptor of some process (or a waiting call) holds it */
    int dropped = 0;
    for (int i = 0; i < LX_SOCKS; i++) {
        if (socks[i].state != SS_FREE && !live[i] && socks[i].fcount) {
            purge(&socks[i]);                   /* its files go; the cycle's sockets close (an unaccepted */
            dropped = 1;                        /* connection is live only through a live listener) */
        }
    }
    return dropped;
}

/* ---------------------------------------------------------------- socket, socketpair */

/* A descriptor for new socket s (SOCK_CLOEXEC, SOCK_NONBLOCK in fl), or a
 * negated errno with the socket closed. */
static int64_t sock_fd_new(struct lx_ctx *c, struct lx_sock *s, uint32_t fl)
{
    struct lx_file *f = sock_file(c, s, fl);
    int fd = f ? lx_fd_new(c->p, f, (fl & SOCK_CLOEXEC) != 0, 0) : lx_file_error(c->p);
    if (fd < 0) {
        if (f)
            lx_file_put(f);                     /* (closes the socket) */
        else
            sock_release(s);
    }
    return fd;
}

/* socket(AF_INET): a slot without a queue, the rest inet.c's. */
static int64_t inet_socket(struct lx_ctx *c, uint32_t type, uint64_t protocol, uint32_t fl)
{
    if (type >= SOCK_MAX)
        return -LX_EINVAL;
    int err = 0, dgrams = 0;
    uint32_t kind = type == SOCK_RAW ? SOCK_DGRAM : type;  /* (a raw ICMP socket is a datagram one here) */
    for (int i = 0; i < LX_SOCKS && kind == SOCK_DGRAM; i++)
        dgrams += socks[i].state != SS_FREE && socks[i].family == AF_INET && socks[i].type == SOCK_DGRAM &&
                  socks[i].owner == c->p->pid;
    if (dgrams >= LX_PROC_DGRAMS)
        return -LX_EMFILE;                      /* the stack's datagram sockets are shared by every process */
    struct lx_sock *s = sock_new(c, AF_INET, (int)kind, &err);
    if (!s)
        return err;
    err = lx_inet_socket(index_of(s), type, protocol);
    if (err) {
        s->state = SS_FREE;
        return err;
    }
    return sock_fd_new(c, s, fl);
}

/* ---------------------------------------------------------------- AF_NETLINK (NETLINK_ROUTE) */

/* A netlink socket is a datagram socket with a queue of its own, named by
 * a struct sockaddr_nl; what it sends to the kernel (port id 0) is answered
 * by rtnetlink.c into its queue, from port id 0. */
static const struct lx_sock kernel_nl = { .addrlen = NL_ADDR, .addr = { AF_NETLINK } };
static int has_room(const struct lx_sock *r, uint64_t n, uint32_t nfiles, int merge);
static int enqueue(struct lx_ctx *c, struct lx_sock *r, const struct lx_sock *s, const struct uio *u, uint64_t off,
                   uint64_t n, uint32_t nfiles, int merge);

static uint32_t nl_portid(const struct lx_sock *s)
{
    uint32_t id;
    memcpy(&id, s->addr + 4, 4);
    return id;
}

static int nl_taken(uint32_t id)
{
    for (int i = 0; i < LX_SOCKS; i++)
        if (socks[i].state != SS_FREE && socks[i].family == AF_NETLINK && socks[i].addrlen && nl_portid(&socks[i]) == id)
            return 1;
    return 0;
}

/* Name s with port id `id` (0: the process's pid if free, else one of
 * its own below 0xfffff000, as Linux's autobind picks). */
static void nl_bind(struct lx_ctx *c, struct lx_sock *s, uint32_t id)
{
    static uint32_t next = 0xffffefffu;
    if (!id) {
        id = (uint32_t)c->p->pid;
        while (nl_taken(id))
            id = next--;
    }
    memset(s->addr, 0, UN_MAX);
    s->addr[0] = AF_NETLINK;
    memcpy(s->addr + 4, &id, 4);
    s->addrlen = NL_ADDR;
    s->bound = 1;
}

/* A struct sockaddr_nl from the process: its port id in *id; 0 or a negated errno. */
static int64_t nl_addr_in(struct lx_ctx *c, uint64_t uaddr, uint64_t len, uint32_t *id)
{
    uint8_t a[NL_ADDR];
    if ((int32_t)len < 0 || (uint32_t)len > 128)
        return -LX_EINVAL;
    if (len < NL_ADDR)
        return -LX_EINVAL;
    if (lx_copy_in(c, a, uaddr, NL_ADDR))
        return -LX_EFAULT;
    if (a[0] != AF_NETLINK || a[1] != 0)
        return -LX_EINVAL;
    memcpy(id, a + 4, 4);
    return 0;
}

static int64_t netlink_socket(struct lx_ctx *c, uint32_t type, uint64_t protocol, uint32_t fl)
{
    if (type != SOCK_RAW && type != SOCK_DGRAM)
        return -LX_ESOCKTNOSUPPORT;
    if ((uint32_t)protocol != 0)
        return -LX_EPROTONOSUPPORT;             /* NETLINK_ROUTE only */
    int err = 0;
    struct lx_sock *s = sock_new(c, AF_NETLINK, SOCK_DGRAM, &err);
    if (!s)
        return err;
    return sock_fd_new(c, s, fl);
}

static void nl_reply(void *to, const uint8_t *msg, uint32_t len)
{
    struct lx_sock *s = to;
    struct uio u = { 0, 0, 0, 0, msg };
    if (!has_room(s, len, 0, 0)) {
        s->err = LX_ENOBUFS;                    /* an overrun, as Linux reports one */
        return;
    }
    enqueue(NULL, s, &kernel_nl, &u, 0, len, 0, 0);
    lx_wake_all(LX_BLK_SOCK, index_of(s));
}

static int64_t netlink_send(struct lx_ctx *c, struct lx_sock *s, const struct uio *u, uint64_t len, uint64_t uto,
                            uint64_t tolen)
{
    uint32_t to = 0;
    if (uto && tolen) {
        int64_t e = nl_addr_in(c, uto, tolen, &to);
        if (e)
            return e;
        if (to)
            return -LX_ECONNREFUSED;            /* (another process's netlink socket: not here) */
    }
    if (len > s->sndbuf - 32)
        return -LX_EMSGSIZE;                    /* (Linux's bound: the send buffer) */
    uint8_t *msg = len ? svc_alloc(len) : NULL;
    if (len && !msg)
        return -LX_ENOBUFS;
    if (len && lx_uio_copy(c, u, 0, msg, len, 0)) {
        svc_free(msg, len);
        return -LX_EFAULT;
    }
    if (!s->addrlen)
        nl_bind(c, s, 0);
    lx_rtnl_request(msg, (uint32_t)len, nl_portid(s), nl_reply, s);
    if (msg)
        svc_free(msg, len);
    return (int64_t)len;
}

int64_t lx_sys_socket(struct lx_ctx *c, uint64_t family, uint64_t type, uint64_t protocol)
{
    uint32_t t = (uint32_t)type & SOCK_TYPE_MASK, fl = (uint32_t)type & ~(uint32_t)SOCK_TYPE_MASK;
    if (fl & ~(uint32_t)(SOCK_CLOEXEC | SOCK_NONBLOCK))
        return -LX_EINVAL;
    if ((uint32_t)family == AF_INET)
        return inet_socket(c, t, protocol, fl);
    if ((uint32_t)family == AF_NETLINK)
        return netlink_socket(c, t, protocol, fl);
    if ((uint32_t)family != AF_UNIX)
        return -LX_EAFNOSUPPORT;
    if ((uint32_t)protocol && (uint32_t)protocol != AF_UNIX)
        return -LX_EPROTONOSUPPORT;
    if (t == SOCK_RAW)
        t = SOCK_DGRAM;                         /* (as Linux takes it) */
    if (t >= SOCK_MAX)
        return -LX_EINVAL;
    if (t != SOCK_STREAM && t != SOCK_DGRAM && t != SOCK_SEQPACKET)
        return -LX_ESOCKTNOSUPPORT;
    int err = 0;
    struct lx_sock *s = sock_new(c, AF_UNIX, (int)t, &err);
    if (!s)
        return err;
    return sock_fd_new(c, s, fl);
}

int64_t lx_sys_socketpair(struct lx_ctx *c, uint64_t family, uint64_t type, uint64_t protocol, uint64_t usv)
{
    uint32_t t = (uint32_t)type & SOCK_TYPE_MASK, fl = (uint32_t)type & ~(uint32_t)SOCK_TYPE_MASK;
    if (fl & ~(uint32_t)(SOCK_CLOEXEC | SOCK_NONBLOCK))
        return -LX_EINVAL;
    if ((uint32_t)family != AF_UNIX)
        return -LX_EAFNOSUPPORT;
    if ((uint32_t)protocol && (uint32_t)protocol != AF_UNIX)
        return -LX_EPROTONOSUPPORT;
    if (t == SOCK_RAW)
        t = SOCK_DGRAM;
    if (t >= SOCK_MAX)
        return -LX_EINVAL;
    if (t != SOCK_STREAM && t != SOCK_DGRAM && t != SOCK_SEQPACKET)
        return -LX_ESOCKTNOSUPPORT;
    int32_t probe[2];
    if (lx_copy_in(c, probe, usv, sizeof(probe)) || lx_copy_out(c, usv, probe, sizeof(probe)))
        return -LX_EFAULT;
    int err = 0;
    struct lx_sock *a = sock_new(c, AF_UNIX, (int)t, &err);
    struct lx_sock *b = a ? sock_new(c, AF_UNIX, (int)t, &err) : NULL;
    struct lx_file *fa = b ? sock_file(c, a, fl) : NULL;
    struct lx_file *fb = fa ? sock_file(c, b, fl) : NULL;
    int fda = fb ? lx_fd_new(c->p, fa, (fl & SOCK_CLOEXEC) != 0, 0) : b ? lx_file_error(c->p) : -LX_ENFILE;
    int fdb = fda >= 0 ? lx_fd_new(c->p, fb, (fl & SOCK_CLOEXEC) != 0, 0) : -LX_ENFILE;
    if (fdb < 0) {
        if (fda >= 0)
            lx_fd_set(c->p, (uint32_t)fda, NULL);
        if (fa)
            lx_file_put(fa);
        else if (a)
            sock_release(a);
        if (fb)
            lx_file_put(fb);
        else if (b)
            sock_release(b);
        return err ? err : fdb;
    }
    a->peer = index_of(b);
    b->peer = index_of(a);
    a->state = b->state = SS_CONNECTED;
    a->cred_pid = b->cred_pid = c->p->pid;
    int32_t sv[2] = { fda, fdb };
    lx_copy_out(c, usv, sv, sizeof(sv));        /* (checked writable above) */
    return 0;
}

/* The socket of descriptor fd: the slot, or NULL with *err (EBADF, ENOTSOCK). */
static struct lx_sock *sock_fd(struct lx_ctx *c, uint64_t fd, struct lx_file **fp, int64_t *err)
{
    struct lx_file *f = lx_call_file(c, (uint32_t)fd);
    *err = !f ? -LX_EBADF : -LX_ENOTSOCK;
    if (!f || f->kind != LX_FILE_SOCK || f->sock < 0 || f->sock >= LX_SOCKS || socks[f->sock].state == SS_FREE)
        return NULL;
    if (fp)
        *fp = f;
    return sock_of(f);
}

/* ---------------------------------------------------------------- bind, listen, connect, accept */

int64_t lx_sys_bind(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t len)
{
    int64_t err;
    struct lx_sock *s = sock_fd(c, fd, NULL, &err);
    if (!s)
        return err;
    if (s->family == AF_INET)
        return lx_inet_bind(c, index_of(s), uaddr, len);
    if (s->family == AF_NETLINK) {
        uint32_t id = 0;
        int64_t e = nl_addr_in(c, uaddr, len, &id);
        if (e)
            return e;
        if (s->addrlen)
            return id == nl_portid(s) ? 0 : -LX_EINVAL;
        if (id && nl_taken(id))
            return -LX_EADDRINUSE;
        nl_bind(c, s, id);
        return 0;
    }
    uint8_t addr[UN_MAX];
    int64_t n = addr_in(c, uaddr, len, addr, 0, 1);
    if (n < 0)
        return n;
    if (n == 2) {
        if (!s->addrlen)
            autobind(s);
        return 0;
    }
    if (addr[2] == 0) {                         /* an abstract name */
        if (s->addrlen)
            return -LX_EINVAL;                  /* bound already */
        for (int i = 0; i < LX_SOCKS; i++)
            if (socks[i].state != SS_FREE && socks[i].bound && socks[i].addrlen == n && socks[i].node < 0 &&
                memcmp(socks[i].addr, addr, (uint64_t)n) == 0)
                return -LX_EADDRINUSE;
        memcpy(s->addr, addr, (uint64_t)n);
        s->addrlen = (uint16_t)n;
        s->bound = 1;
        return 0;
    }
    char path[UN_MAX];
    addr_path(addr, (uint64_t)n, path);
    int32_t dir = lx_start_dir(c, -100, path);
    if (dir < 0)
        return dir;
    struct lx_last l;
    int e = lx_lookup_last(dir, path, &l);
    if (e)
        return e;
    if (l.type != LX_LAST_NORM || l.node >= 0)
        return -LX_EADDRINUSE;
    if (l.node != -LX_ENOENT)
        return l.node;
    if (l.slash || !lx_node(l.dir)->nlink)
        return -LX_ENOENT;
    if (lx_node(l.dir)->proc)
        return -LX_EACCES;
    if (s->addrlen)
        return -LX_EINVAL;                      /* bound already (a path that exists says EADDRINUSE first) */
    int32_t node = lx_node_new(LX_S_IFSOCK | (0777 & ~lx_umask_of(c->p)));
    if (node < 0)
        return node;
    if ((e = lx_link(l.dir, l.name, l.len, node)) != 0) {
        lx_node_maybe_free(node);
        return e;
    }
    lx_node(node)->opens++;                     /* held while bound */
    s->node = node;
    uint64_t plen = strlen(path);
    memset(s->addr, 0, UN_MAX);
    s->addr[0] = AF_UNIX;
    memcpy(s->addr + 2, path, plen);
    s->addrlen = (uint16_t)(2 + plen + 1);
    s->bound = 1;
    return 0;
}

int64_t lx_sys_listen(struct lx_ctx *c, uint64_t fd, uint64_t backlog)
{
    int64_t err;
    struct lx_sock *s = sock_fd(c, fd, NULL, &err);
    if (!s)
        return err;
    if (s->family == AF_INET)
        return lx_inet_listen(index_of(s), backlog);
    if (!connection_based(s))
        return -LX_EOPNOTSUPP;
    if (!s->addrlen || s->state == SS_CONNECTED)
        return -LX_EINVAL;
    int32_t b = (int32_t)backlog;
    s->backlog = b < 0 ? MAX_BACKLOG : b > MAX_BACKLOG ? MAX_BACKLOG : (uint32_t)b;
    if (s->state != SS_LISTEN) {
        s->state = SS_LISTEN;
        s->own_pid = c->p->pid;
    }
    lx_wake_all(LX_BLK_SOCK, index_of(s));      /* a bigger backlog lets connects in */
    return 0;
}

/* Wait on socket `on` (LX_BLK_SOCK) with a timeout of `timeo` ns (0: none):
 * LX_BLOCK, or EAGAIN once the time is up. */
int64_t lx_sock_wait(struct lx_ctx *c, int32_t on, uint64_t timeo)
{
    if (timeo) {
        if (lx_deadline_passed(c, timeo))
            return -LX_EAGAIN;
        int err = lx_timer_start();
        if (err)
            return err;
    }
    return lx_block(c, LX_BLK_SOCK, on);
}

/* A datagram socket's connect: its default destination (AF_UNSPEC: none). */
static int64_t dgram_connect(struct lx_ctx *c, struct lx_sock *s, const uint8_t *addr, int64_t n)
{
    if (n == 0) {
        s->peer = -1;
        s->peer_gone = 0;
        s->state = SS_OPEN;
        return 0;
    }
    int32_t o = find_bound(c, addr, (uint64_t)n);
    if (o < 0)
        return o;
    if (socks[o].type != s->type)
        return -LX_EPROTOTYPE;
    if (s->passcred && !s->addrlen)
        autobind(s);
    s->peer = o;
    s->peer_gone = 0;
    s->state = SS_CONNECTED;
    return 0;
}

int64_t lx_sys_connect(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t len)
{
    int64_t err;
    struct lx_file *f;
    struct lx_sock *s = sock_fd(c, fd, &f, &err);
    if (!s)
        return err;
    if (s->family == AF_INET)
        return lx_inet_connect(c, index_of(s), (f->flags & O_NONBLOCK) != 0, uaddr, len);
    if (s->family == AF_NETLINK) {
        uint32_t id = 0;
        int64_t e = nl_addr_in(c, uaddr, len, &id);
        if (e)
            return e;
        if (id)
            return -LX_ECONNREFUSED;
        if (!s->addrlen)
            nl_bind(c, s, 0);
        return 0;                               /* (the kernel: where its sends go anyway) */
    }
    uint8_t addr[UN_MAX];
    int64_t n = addr_in(c, uaddr, len, addr, s->type == SOCK_DGRAM, 0);
    if (n < 0)
        return n;
    if (s->type == SOCK_DGRAM)
        return dgram_connect(c, s, addr, n);
    int32_t o = find_bound(c, addr, (uint64_t)n);
    if (o < 0)
        return o;
    struct lx_sock *l = &socks[o];
    if (l->type != s->type)
        return -LX_EPROTOTYPE;
    if (l->state != SS_LISTEN)
        return -LX_ECONNREFUSED;
    if (l->pending > l->backlog)
        return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_sock_wait(c, o, s->sndtimeo);
    if (s->state == SS_CONNECTED)               /* (checked after the listener's, as Linux does) */
        return -LX_EISCONN;
    if (s->state == SS_LISTEN)
        return -LX_EINVAL;
    int e = 0;
    struct lx_sock *emb = sock_new(c, AF_UNIX, s->type, &e);
    if (!emb)
        return e;
    if (s->passcred && !s->addrlen)
        autobind(s);
    emb->state = s->state = SS_CONNECTED;
    emb->peer = index_of(s);
    s->peer = index_of(emb);
    emb->listener = o;
    emb->seq = ++next_seq;
    emb->addrlen = l->addrlen;                  /* it answers to the listener's address */
    memcpy(emb->addr, l->addr, UN_MAX);
    emb->cred_pid = c->p->pid;
    emb->own_pid = l->own_pid;
    s->cred_pid = l->own_pid;
    l->pending++;
    lx_wake_all(LX_BLK_SOCK, o);                /* accept, and polls of the listener */
    return 0;
}

/* accept4's address length word (if it asked for the address): 0, or EFAULT or EINVAL. */
static int64_t accept_room(struct lx_ctx *c, uint64_t uaddr, uint64_t ulen)
{
    int32_t room;
    if (!uaddr)
        return 0;
    if (lx_copy_in(c, &room, ulen, sizeof(room)))
        return -LX_EFAULT;
    return room < 0 ? -LX_EINVAL : 0;
}

/* accept4 of an AF_INET listener: the stack's connection in a new slot. */
static int64_t inet_accept(struct lx_ctx *c, struct lx_file *f, struct lx_sock *l, uint64_t uaddr, uint64_t ulen,
                           uint32_t fl)
{
    int64_t bad = accept_room(c, uaddr, ulen);  /* checked before a connection is taken */
    if (bad)
        return bad;
    int err = 0;
    struct lx_sock *s = sock_new(c, AF_INET, l->type, &err);
    if (!s)
        return err;                             /* (the connection waits in the stack for the next accept) */
    uint32_t conn = 0;
    int64_t r = lx_inet_accept(c, index_of(l), (f->flags & O_NONBLOCK) != 0, &conn);
    if (r) {
        s->state = SS_FREE;
        return r;
    }
    lx_inet_accepted(index_of(s), index_of(l), conn);
    struct lx_file *nf = sock_file(c, s, fl);
    int nfd = nf ? lx_fd_new(c->p, nf, (fl & SOCK_CLOEXEC) != 0, 0) : lx_file_error(c->p);
    if (nfd < 0) {
        if (nf)
            lx_file_put(nf);                    /* (closes the connection: Linux's would be reset too) */
        else
            sock_release(s);
        return nfd;
    }
    if (uaddr && lx_inet_peer_out(c, index_of(s), uaddr, ulen)) {
        lx_fd_set(c->p, (uint32_t)nfd, NULL);
        lx_file_put(nf);
        return -LX_EFAULT;
    }
    return nfd;
}

int64_t lx_sys_accept4(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t ulen, uint64_t flags)
{
    int64_t err;
    struct lx_file *f;
    struct lx_sock *l = sock_fd(c, fd, &f, &err);
    if (!l)
        return err;
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(SOCK_CLOEXEC | SOCK_NONBLOCK))
        return -LX_EINVAL;
    if (l->family == AF_INET)
        return inet_accept(c, f, l, uaddr, ulen, fl);
    if (!connection_based(l))
        return -LX_EOPNOTSUPP;
    if (l->state != SS_LISTEN)
        return -LX_EINVAL;
    int64_t bad = accept_room(c, uaddr, ulen);  /* checked before a connection is taken */
    if (bad)
        return bad;
    int32_t me = index_of(l), pick = -1;
    for (int i = 0; i < LX_SOCKS; i++)
        if (socks[i].state != SS_FREE && socks[i].listener == me && (pick < 0 || socks[i].seq < socks[pick].seq))
            pick = i;
    if (pick < 0)
        return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_sock_wait(c, me, l->rcvtimeo);
    struct lx_sock *s = &socks[pick];
    struct lx_file *nf = sock_file(c, s, fl);
    if (!nf)
        return lx_file_error(c->p);
    int nfd = lx_fd_new(c->p, nf, (fl & SOCK_CLOEXEC) != 0, 0);
    if (nfd < 0) {
        s->file = NULL;
        lx_file_discard(nf);                    /* (the connection stays, for the next accept) */
        return nfd;
    }
    s->listener = -1;
    l->pending--;
    struct lx_sock *p = peer_of(s);
    const uint8_t *pa = p ? p->addr : s->peer_addr;
    uint32_t pl = p ? p->addrlen : s->peer_addrlen;
    lx_wake_all(LX_BLK_SOCK, me);               /* room for connects */
    if (addr_out(c, uaddr, ulen, pa, pl)) {
        lx_fd_set(c->p, (uint32_t)nfd, NULL);
        lx_file_put(nf);                        /* (Linux drops the connection too) */
        return -LX_EFAULT;
    }
    return nfd;
}

/* ---------------------------------------------------------------- sending */

/* The control data of a sendmsg: the files of its SCM_RIGHTS (into
 * sendfiles, *nfiles of them, each with a reference taken); 0 or a negated
 * errno (then no references are held). sendfiles is one call's: filled by
 * control_in and emptied (into a queue, or dropped) before that send
 * returns; a drop may finalise files (lx_file_put), and no finalisation
 * sends, so nothing reaches it while it is in use. */
static struct lx_file *sendfiles[SCM_MAX_FD];

static void drop_sendfiles(uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        lx_file_put(sendfiles[k]);
}

static int64_t control_in(struct lx_ctx *c, uint64_t ctl, uint64_t ctllen, uint32_t *nfiles)
{
    *nfiles = 0;
    if (!ctllen)
        return 0;
    if (ctllen > OPTMEM_MAX)
        return -LX_ENOBUFS;
    uint64_t off = 0;
    while (ctllen - off >= 16) {
        struct { uint64_t len; int32_t level, type; } h;
        if (lx_copy_in(c, &h, ctl + off, sizeof(h))) {
            drop_sendfiles(*nfiles);
            return -LX_EFAULT;
        }
        if (h.len < 16 || h.len > ctllen - off) {
            drop_sendfiles(*nfiles);
            return -LX_EINVAL;
        }
        if (h.level == SOL_SOCKET) {
            if (h.type == SCM_RIGHTS) {
                uint64_t n = (h.len - 16) / 4;
                if (*nfiles + n > SCM_MAX_FD) {
                    drop_sendfiles(*nfiles);
                    return -LX_EINVAL;
                }
                for (uint64_t k = 0; k < n; k++) {
                    int32_t fd;
                    struct lx_file *f = NULL;
                    if (lx_copy_in(c, &fd, ctl + off + 16 + 4 * k, 4) == 0)
                        f = fd >= 0 ? lx_fd_file(c->p, (uint32_t)fd) : NULL;
                    if (!f) {
                        drop_sendfiles(*nfiles);
                        return -LX_EBADF;
                    }
                    lx_file_get(f);
                    sendfiles[(*nfiles)++] = f;
                }
            } else if (h.type == SCM_CREDENTIALS) {
                int32_t cred[3];
                if (h.len != 16 + sizeof(cred) || lx_copy_in(c, cred, ctl + off + 16, sizeof(cred))) {
                    drop_sendfiles(*nfiles);
                    return -LX_EINVAL;
                }
                if (cred[0] != c->p->pid && !lx_proc_of_pid(cred[0])) {
                    drop_sendfiles(*nfiles);
                    return -LX_ESRCH;
                }
            } else {
                drop_sendfiles(*nfiles);
                return -LX_EINVAL;
            }
        }
        off += (h.len + 7) & ~7ull;
        if (off > ctllen)
            break;
    }
    return 0;
}

/* Is there room in r's queue for a record of n bytes with nfiles files
 * (`merge`: the bytes may go into its last record)? */
static int has_room(const struct lx_sock *r, uint64_t n, uint32_t nfiles, int merge)
{
    return SOCK_BUF - r->count >= n && (merge || r->rcount < SOCK_RECS) && SCM_MAX_FD - r->fcount >= nfiles;
}

/* Put n bytes at offset off of u, with the files of sendfiles, into r's
 * queue as a new record (or into its last one: merge) from sender s. */
static int enqueue(struct lx_ctx *c, struct lx_sock *r, const struct lx_sock *s, const struct uio *u, uint64_t off,
                   uint64_t n, uint32_t nfiles, int merge)
{
    if (n && ring_copy(c, r, r->head + r->count, u, off, n, 0))
        return -LX_EFAULT;
    r->count += (uint32_t)n;
    if (merge) {
        r->q->recs[(r->rhead + r->rcount - 1) % SOCK_RECS].len += (uint32_t)n;
    } else {
        struct srec *rec = &r->q->recs[(r->rhead + r->rcount) % SOCK_RECS];
        rec->len = (uint32_t)n;
        rec->nfiles = (uint16_t)nfiles;
        rec->addrlen = s->addrlen;
        rec->pid = c ? c->p->pid : 0;          /* (no process: the kernel's netlink answers) */
        memcpy(rec->addr, s->addr, UN_MAX);
        r->rcount++;
    }
    for (uint32_t k = 0; k < nfiles; k++)
        r->q->files[(r->fhead + r->fcount + k) % SCM_MAX_FD] = sendfiles[k];
    r->fcount += nfiles;
    in_flight += nfiles;
    return 0;
}

/* The broken-connection answer of a stream write: EPIPE, and SIGPIPE unless MSG_NOSIGNAL. */
int64_t lx_sock_broken_pipe(struct lx_ctx *c, uint64_t done, uint32_t flags)
{
    if (!done && !(flags & MSG_NOSIGNAL)) {
        struct lx_sinfo si = { LX_SI_USER, c->p->pid, 0, 0, 0, 0 };
        lx_sig_send_thread(c->t, LX_SIGPIPE, &si);
    }
    return done ? (int64_t)done : -LX_EPIPE;
}

/* A stream write of len bytes of u: all of it, waiting for room as often
 * as it takes (what went so far is kept across the call's restarts). */
static int64_t stream_send(struct lx_ctx *c, struct lx_sock *s, int nonblock, const struct uio *u, uint64_t len,
                           uint32_t flags, uint32_t nfiles)
{
    uint64_t done = c->t->io.done;
    c->t->io.done = 0;
    if (done) {
        drop_sendfiles(nfiles);                 /* (they went with the first piece: these are the */
        nfiles = 0;                             /* references this run of the call took again) */
    }
    for (;;) {
        if (s->state != SS_CONNECTED) {
            drop_sendfiles(nfiles);
            return -LX_ENOTCONN;
        }
        struct lx_sock *r = peer_of(s);
        if (!r || (s->shut & SEND_SHUTDOWN) || (r->shut & RCV_SHUTDOWN)) {
            drop_sendfiles(nfiles);
            return lx_sock_broken_pipe(c, done, flags);
        }
        if (done == len) {
            drop_sendfiles(nfiles);             /* (an empty write sends no files, as on Linux) */
            return (int64_t)done;
        }
        const struct srec *last = r->rcount ? &r->q->recs[(r->rhead + r->rcount - 1) % SOCK_RECS] : NULL;
        int merge = s->type == SOCK_STREAM && last && !last->nfiles && !nfiles && last->pid == c->p->pid;
        uint64_t room = SOCK_BUF - r->count;
        uint64_t n = len - done;
        if (s->type == SOCK_SEQPACKET && n > DGRAM_MAX(s)) {
            drop_sendfiles(nfiles);
            return -LX_EMSGSIZE;
        }
        if (s->type == SOCK_STREAM && n > room)
            n = room;
        if (!n || !has_room(r, n, nfiles, merge)) {
            if (nonblock) {
                drop_sendfiles(nfiles);
                return done ? (int64_t)done : -LX_EAGAIN;
            }
            drop_sendfiles(nfiles);             /* (taken again when the call runs again) */
            c->t->io.done = done;
            int64_t w = lx_sock_wait(c, s->peer, s->sndtimeo);
            if (w != LX_BLOCK)
                c->t->io.done = 0;
            return w == LX_BLOCK || !done ? w : (int64_t)done;
        }
        if (enqueue(c, r, s, u, done, n, nfiles, merge)) {
            drop_sendfiles(nfiles);
            return done ? (int64_t)done : -LX_EFAULT;
        }
        nfiles = 0;
        done += n;
        lx_wake_all(LX_BLK_SOCK, s->peer);      /* data for its reader */
    }
}

/* A datagram to `to` (an address, or the socket's peer). */
static int64_t dgram_send(struct lx_ctx *c, struct lx_sock *s, int nonblock, const struct uio *u, uint64_t len,
                          const uint8_t *to, int64_t tolen, uint32_t nfiles)
{
    int32_t o;
    if (tolen > 0) {
        o = find_bound(c, to, (uint64_t)tolen);
    } else if (s->peer >= 0) {
        o = s->peer;
    } else if (s->peer_gone) {
        s->peer_gone = 0;
        s->state = SS_OPEN;
        o = -LX_ECONNREFUSED;
    } else {
        o = -LX_ENOTCONN;
    }
    int64_t err = o < 0 ? o : 0;
    struct lx_sock *r = o >= 0 ? &socks[o] : NULL;
    if (r && r->type != SOCK_DGRAM)
        err = -LX_EPROTOTYPE;
    else if (r && r->peer >= 0 && r->peer != index_of(s))
        err = -LX_EPERM;                        /* it takes datagrams from its peer only */
    else if (len > DGRAM_MAX(s))
        err = -LX_EMSGSIZE;
    else if (r && (r->shut & RCV_SHUTDOWN))
        err = -LX_EPIPE;
    if (err) {
        drop_sendfiles(nfiles);
        return err;
    }
    if (s->passcred && !s->addrlen)
        autobind(s);
    int full = !has_room(r, len, nfiles, 0) || (r != s && r->peer != index_of(s) && r->rcount > MAX_DGRAM_QLEN);
    if (full) {
        drop_sendfiles(nfiles);
        return nonblock ? -LX_EAGAIN : lx_sock_wait(c, o, s->sndtimeo);
    }
    if (enqueue(c, r, s, u, 0, len, nfiles, 0)) {
        drop_sendfiles(nfiles);
        return -LX_EFAULT;
    }
    lx_wake_all(LX_BLK_SOCK, o);
    return (int64_t)len;
}

int64_t lx_sock_write_kernel(struct lx_ctx *c, struct lx_file *f, const void *src, uint64_t len, int may_wait)
{
    struct lx_sock *s = sock_of(f);
    if (s->type != SOCK_STREAM)
        return -LX_EINVAL;
    if (s->family == AF_INET)
        return lx_inet_write_kernel(c, index_of(s), (f->flags & O_NONBLOCK) != 0, src, len, may_wait);
    if (s->state != SS_CONNECTED)
        return -LX_ENOTCONN;
    struct lx_sock *r = peer_of(s);
    if (!r || (s->shut & SEND_SHUTDOWN) || (r->shut & RCV_SHUTDOWN))
        return -LX_EPIPE;
    const struct srec *last = r->rcount ? &r->q->recs[(r->rhead + r->rcount - 1) % SOCK_RECS] : NULL;
    int merge = last && !last->nfiles && last->pid == c->p->pid;   /* (another writer's bytes: a record of their own) */
    uint64_t room = SOCK_BUF - r->count;
    uint64_t n = len < room ? len : room;
    if (len && (!n || !has_room(r, n, 0, merge))) {
        if (!may_wait)
            return 0;
        return (f->flags & O_NONBLOCK) ? -LX_EAGAIN : lx_sock_wait(c, s->peer, s->sndtimeo);
    }
    struct uio u = { 0, 0, 0, 0, src };
    enqueue(c, r, s, &u, 0, n, 0, merge);
    lx_wake_all(LX_BLK_SOCK, s->peer);
    return (int64_t)n;
}

/* Send: the checks common to every way in, then the type's own. */
static int64_t sock_send(struct lx_ctx *c, struct lx_file *f, const struct uio *u, uint64_t len, uint32_t flags,
                         uint64_t uto, uint64_t tolen, uint64_t ctl, uint64_t ctllen)
{
    struct lx_sock *s = sock_of(f);
    if (s->family == AF_INET)
        return lx_inet_send(c, index_of(s), (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT), u, len, flags, uto,
                            tolen);
    if (s->family == AF_NETLINK)
        return netlink_send(c, s, u, len, uto, tolen);
    if (flags & MSG_OOB)
        return -LX_EOPNOTSUPP;
    uint8_t to[UN_MAX];
    int64_t n = 0;
    if (uto && tolen) {
        if (connection_based(s))
            return s->state == SS_CONNECTED ? -LX_EISCONN : -LX_EOPNOTSUPP;
        n = addr_in(c, uto, tolen, to, 0, 0);
        if (n < 0)
            return n;
    }
    uint32_t nfiles;
    int64_t err = control_in(c, ctl, ctllen, &nfiles);
    if (err)
        return err;
    int nonblock = (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
    if (s->type == SOCK_DGRAM)
        return dgram_send(c, s, nonblock, u, len, to, n, nfiles);
    return stream_send(c, s, nonblock, u, len, flags, nfiles);
}

/* ---------------------------------------------------------------- receiving */

/* Give the receiver the n files at the head of s's file ring (SCM_RIGHTS
 * into its control buffer): as many as fit, the others dropped (MSG_CTRUNC).
 * With `peek`, new descriptors for them, the queue unchanged. The control
 * bytes used, or a negated errno. */
static int64_t control_out(struct lx_ctx *c, struct lx_sock *s, uint32_t n, int peek, uint64_t ctl, uint64_t ctllen,
                           uint32_t cloexec, uint32_t *mflags)
{
    uint64_t fit = ctl && ctllen >= 16 ? (ctllen - 16) / 4 : 0;
    uint32_t given = 0;
    int64_t used = 0;
    for (uint32_t k = 0; k < n && k < fit; k++) {
        struct lx_file *f = s->q->files[(s->fhead + k) % SCM_MAX_FD];
        int fd = lx_fd_new(c->p, f, cloexec != 0, 0);
        if (fd < 0)
            break;
        int32_t v = fd;
        if (lx_copy_out(c, ctl + 16 + 4 * k, &v, 4)) {
            lx_fd_set(c->p, (uint32_t)fd, NULL);
            break;
        }
        if (peek)
            lx_file_get(f);
        given++;
    }
    if (given) {
        struct { uint64_t len; int32_t level, type; } h = { 16 + 4ull * given, SOL_SOCKET, SCM_RIGHTS };
        lx_copy_out(c, ctl, &h, sizeof(h));     /* (the bytes after it were written: it is writable) */
        uint64_t space = (h.len + 7) & ~7ull;
        used = (int64_t)(space < ctllen ? space : ctllen);
    }
    if (given < n)
        *mflags |= MSG_CTRUNC;
    for (uint32_t k = 0; !peek && k < n && s->q; k++) {
        struct lx_file *f = s->q->files[s->fhead];     /* out of the ring first, then dropped */
        s->fhead = (s->fhead + 1) % SCM_MAX_FD;
        s->fcount--;
        in_flight--;
        if (k >= given)
            lx_file_put(f);                     /* (one the receiver had no room for) */
    }
    return used;
}

static uint64_t creds_out(struct lx_ctx *c, struct lx_recv_args *a, const struct lx_sock *s, int32_t pid);

/* A record-based receive (datagram, seqpacket): one message. */
static int64_t recv_record(struct lx_ctx *c, struct lx_sock *s, const struct uio *u, uint64_t len,
                           struct lx_recv_args *a)
{
    struct srec *rec = &s->q->recs[s->rhead];
    uint64_t n = rec->len < len ? rec->len : len;
    if (n && ring_copy(c, s, s->head, u, 0, n, 1))
        return -LX_EFAULT;
    if (rec->len > len)
        a->mflags |= MSG_TRUNC;
    if (a->uname && s->type == SOCK_DGRAM) {
        uint32_t al = rec->addrlen;
        if (a->msg) {
            uint32_t room = (uint32_t)a->unamelen;
            if (lx_copy_out(c, a->uname, rec->addr, al < room ? al : room))
                return -LX_EFAULT;
            a->namelen = al;
        } else if (al) {
            int64_t e = addr_out(c, a->uname, a->unamelen, rec->addr, al);
            if (e)
                return e;
        } else {
            int32_t room;                       /* (an unbound sender: no address at all) */
            if (lx_copy_in(c, &room, a->unamelen, sizeof(room)))
                return -LX_EFAULT;
            if (room < 0)
                return -LX_EINVAL;
            if (lx_copy_out(c, a->unamelen, &(int32_t){ 0 }, 4))
                return -LX_EFAULT;
        }
    }
    int peek = (a->flags & MSG_PEEK) != 0;
    uint64_t cr = creds_out(c, a, s, rec->pid);
    int64_t used = 0;
    if (rec->nfiles) {
        used = control_out(c, s, rec->nfiles, peek, a->ctl ? a->ctl + cr : 0, a->ctllen - cr,
                           a->flags & MSG_CMSG_CLOEXEC, &a->mflags);
        if (!peek)
            rec->nfiles = 0;
    }
    a->ctlused = cr + (uint64_t)used;
    int64_t whole = rec->len;
    if (!peek) {
        s->head = (s->head + rec->len) % SOCK_BUF;
        s->count -= rec->len;
        s->rhead = (s->rhead + 1) % SOCK_RECS;
        s->rcount--;
        lx_wake_all(LX_BLK_SOCK, index_of(s));  /* room for writers */
    }
    return (a->flags & MSG_TRUNC) ? whole : (int64_t)n;
}

/* A stream receive: bytes across records, stopping after one that carries files. */
static int64_t recv_stream(struct lx_ctx *c, struct lx_sock *s, const struct uio *u, uint64_t len,
                           struct lx_recv_args *a, uint64_t done)
{
    int peek = (a->flags & MSG_PEEK) != 0;
    uint32_t pos = s->head;
    int32_t from = s->q->recs[s->rhead].pid;
    uint64_t cr = creds_out(c, a, s, from);
    a->ctlused = cr;
    for (uint32_t k = 0; done < len && k < s->rcount; k++) {
        struct srec *rec = &s->q->recs[(s->rhead + k) % SOCK_RECS];
        if (s->passcred && rec->pid != from)
            break;                              /* with SO_PASSCRED, one writer's bytes at a time (Linux's rule) */
        uint64_t n = rec->len < len - done ? rec->len : len - done;
        if (ring_copy(c, s, peek ? pos : s->head, u, done, n, 1))
            return done ? (int64_t)done : -LX_EFAULT;
        done += n;
        uint32_t nf = rec->nfiles;
        if (nf) {
            int64_t used = control_out(c, s, nf, peek, a->ctl ? a->ctl + cr : 0, a->ctllen - cr,
                                       a->flags & MSG_CMSG_CLOEXEC, &a->mflags);
            a->ctlused = cr + (uint64_t)used;
            if (!peek)
                rec->nfiles = 0;
        }
        if (peek) {
            pos = (pos + (uint32_t)n) % SOCK_BUF;
        } else {
            s->head = (s->head + (uint32_t)n) % SOCK_BUF;
            s->count -= (uint32_t)n;
            rec->len -= (uint32_t)n;
            if (!rec->len) {
                s->rhead = (s->rhead + 1) % SOCK_RECS;
                s->rcount--;
                k--;
            }
        }
        if (nf)
            break;
    }
    if (!peek)
        lx_wake_all(LX_BLK_SOCK, index_of(s));  /* room for the writer */
    return (int64_t)done;
}

/* With SO_PASSCRED on s, SCM_CREDENTIALS of the sender `pid` (uid and gid
 * 0) first in the control buffer: the bytes it takes; none and MSG_CTRUNC
 * when it does not fit. */
static uint64_t creds_out(struct lx_ctx *c, struct lx_recv_args *a, const struct lx_sock *s, int32_t pid)
{
    if (!s->passcred || !a->msg)
        return 0;
    struct { uint64_t len; int32_t level, type; int32_t pid; uint32_t uid, gid; } m =
        { 28, SOL_SOCKET, SCM_CREDENTIALS, pid, 0, 0 };
    if (!a->ctl || a->ctllen < 28 || lx_copy_out(c, a->ctl, &m, 28)) {
        a->mflags |= MSG_CTRUNC;
        return 0;
    }
    return a->ctllen < 32 ? a->ctllen : 32;
}

static int64_t sock_recv(struct lx_ctx *c, struct lx_file *f, const struct uio *u, uint64_t len, struct lx_recv_args *a)
{
    struct lx_sock *s = sock_of(f);
    if (s->family == AF_INET)
        return lx_inet_recv(c, index_of(s), (f->flags & O_NONBLOCK) || (a->flags & MSG_DONTWAIT), u, len, a);
    if (a->flags & MSG_OOB)
        return -LX_EOPNOTSUPP;
    if (s->type == SOCK_STREAM && s->state != SS_CONNECTED)
        return -LX_EINVAL;
    if (s->type == SOCK_SEQPACKET && s->state != SS_CONNECTED)
        return -LX_ENOTCONN;
    int nonblock = (f->flags & O_NONBLOCK) || (a->flags & MSG_DONTWAIT);
    uint64_t done = c->t->io.done;              /* MSG_WAITALL: what a stream read took before it waited */
    c->t->io.done = 0;
    if (!s->rcount) {
        if (done && (s->err || (s->shut & RCV_SHUTDOWN)))
            return (int64_t)done;
        if (s->err) {
            int e = s->err;
            s->err = 0;
            return -e;
        }
        if (s->type != SOCK_STREAM && nonblock)
            return -LX_EAGAIN;                  /* (a record socket says so before its end of file) */
        if (s->shut & RCV_SHUTDOWN)
            return 0;
        if (nonblock)
            return done ? (int64_t)done : -LX_EAGAIN;
        c->t->io.done = done;
        int64_t w = lx_sock_wait(c, index_of(s), s->rcvtimeo);
        if (w != LX_BLOCK)
            c->t->io.done = 0;
        return w == LX_BLOCK || !done ? w : (int64_t)done;
    }
    if (s->type != SOCK_STREAM)
        return recv_record(c, s, u, len, a);
    int64_t r = recv_stream(c, s, u, len, a, done);
    if (r >= 0 && (uint64_t)r < len && (a->flags & MSG_WAITALL) && !(a->flags & MSG_PEEK) && !nonblock &&
        !a->ctlused && !(s->shut & RCV_SHUTDOWN) && !s->err) {
        c->t->io.done = (uint64_t)r;            /* wait for the rest */
        int64_t w = lx_sock_wait(c, index_of(s), s->rcvtimeo);
        if (w != LX_BLOCK)
            c->t->io.done = 0;
        return w == LX_BLOCK ? w : r;
    }
    return r;
}

/* ---------------------------------------------------------------- the calls that move data */

/* The socket file of fd and its one buffer [buf, buf + len) as u (len cut
 * to MAX_RW_COUNT), or NULL with *err. */
static struct lx_file *sock_buf(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, struct uio *u, int64_t *err)
{
    struct lx_file *f;
    if (!sock_fd(c, fd, &f, err))
        return NULL;
    if (len > MAX_RW_COUNT)
        len = MAX_RW_COUNT;
    if (!lx_range_ok(buf, len)) {
        *err = -LX_EFAULT;
        return NULL;
    }
    *u = (struct uio){ 0, 0, buf, len, NULL };
    return f;
}

int64_t lx_sys_sendto(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, uint64_t flags, uint64_t uto,
                      uint64_t tolen)
{
    int64_t err;
    struct uio u;
    struct lx_file *f = sock_buf(c, fd, buf, len, &u, &err);
    if (!f)
        return err;
    return sock_send(c, f, &u, u.len, (uint32_t)flags, uto, (uint32_t)tolen, 0, 0);
}

int64_t lx_sys_recvfrom(struct lx_ctx *c, uint64_t fd, uint64_t buf, uint64_t len, uint64_t flags, uint64_t uaddr,
                        uint64_t ulen)
{
    int64_t err;
    struct uio u;
    struct lx_file *f = sock_buf(c, fd, buf, len, &u, &err);
    if (!f)
        return err;
    len = u.len;
    struct lx_recv_args a = { .flags = (uint32_t)flags, .uname = uaddr, .unamelen = ulen };
    /* The name's length word is read after the data is taken, as Linux
     * reads it: a bad one loses what was received. */
    int64_t r = sock_recv(c, f, &u, len, &a);
    if (r >= 0 && uaddr && sock_of(f)->type != SOCK_DGRAM) {
        int32_t room, zero = 0;                 /* a connection's receive names no sender */
        if (lx_copy_in(c, &room, ulen, sizeof(room)))
            return -LX_EFAULT;
        if (room < 0)
            return -LX_EINVAL;
        if (lx_copy_out(c, ulen, &zero, sizeof(zero)))
            return -LX_EFAULT;
    }
    return r;
}

/* struct msghdr (AArch64). */
struct lx_msghdr {
    uint64_t name;
    uint32_t namelen, pad0;
    uint64_t iov, iovlen;
    uint64_t control, controllen;
    int32_t flags, pad1;
};

/* The socket file of fd, its struct msghdr at umsg into m and the
 * message's buffers as u; NULL with *err (for a receive, a negative name
 * length is EINVAL). */
static struct lx_file *sock_msg(struct lx_ctx *c, uint64_t fd, uint64_t umsg, struct lx_msghdr *m, struct uio *u,
                                int receiving, int64_t *err)
{
    struct lx_file *f;
    if (!sock_fd(c, fd, &f, err))
        return NULL;
    *err = lx_copy_in(c, m, umsg, sizeof(*m)) ? -LX_EFAULT : receiving && (int32_t)m->namelen < 0 ? -LX_EINVAL :
           uio_iov(c, u, m->iov, m->iovlen);
    return *err < 0 ? NULL : f;
}

int64_t lx_sys_sendmsg(struct lx_ctx *c, uint64_t fd, uint64_t umsg, uint64_t flags)
{
    int64_t len;
    struct lx_msghdr m;
    struct uio u;
    struct lx_file *f = sock_msg(c, fd, umsg, &m, &u, 0, &len);
    if (!f)
        return len;
    return sock_send(c, f, &u, (uint64_t)len, (uint32_t)flags, m.name, m.namelen, m.control, m.controllen);
}

int64_t lx_sys_recvmsg(struct lx_ctx *c, uint64_t fd, uint64_t umsg, uint64_t flags)
{
    int64_t len;
    struct lx_msghdr m;
    struct uio u;
    struct lx_file *f = sock_msg(c, fd, umsg, &m, &u, 1, &len);
    if (!f)
        return len;
    struct lx_recv_args a = { .flags = (uint32_t)flags, .uname = m.name, .unamelen = m.namelen, .msg = 1,
                           .ctl = m.control, .ctllen = m.controllen, .mflags = (uint32_t)flags & MSG_CMSG_CLOEXEC };
    int64_t r = sock_recv(c, f, &u, (uint64_t)len, &a);
    if (r < 0)
        return r;
    m.namelen = m.name ? a.namelen : 0;
    m.controllen = a.ctlused;
    m.flags = (int32_t)a.mflags;
    if (lx_copy_out(c, umsg + 8, &m.namelen, 4) || lx_copy_out(c, umsg + 40, &m.controllen, 8) ||
        lx_copy_out(c, umsg + 48, &m.flags, 4))
        return -LX_EFAULT;
    return r;
}

/* sendmmsg and recvmmsg: each struct mmsghdr (a msghdr and the count
 * moved, 64 bytes) as sendmsg or recvmsg, the first as flags say (it may
 * wait) and the rest without waiting; how many went (the first one's
 * error if none did). Linux's recvmmsg waits for all vlen unless
 * MSG_WAITFORONE; here every one after the first is taken only if it is
 * there, as with MSG_WAITFORONE. */
#define MMSG_SIZE       64
#define MSG_WAITFORONE  0x10000

static int64_t mmsg(struct lx_ctx *c, uint64_t fd, uint64_t uvec, uint64_t vlen, uint64_t flags, int receiving)
{
    int64_t err;
    if (!sock_fd(c, fd, NULL, &err))
        return err;
    uint32_t n = (uint32_t)vlen > UIO_MAXIOV ? UIO_MAXIOV : (uint32_t)vlen, done = 0;
    flags &= ~(uint64_t)MSG_WAITFORONE;
    for (; done < n; done++) {
        uint64_t m = uvec + (uint64_t)done * MMSG_SIZE;
        uint64_t fl = done ? (flags | MSG_DONTWAIT) : flags;
        int64_t r = receiving ? lx_sys_recvmsg(c, fd, m, fl) : lx_sys_sendmsg(c, fd, m, fl);
        if (r < 0 || r == LX_BLOCK)
            return done ? (int64_t)done : r;    /* (LX_BLOCK only for the first: nothing went yet) */
        uint32_t len = (uint32_t)r;
        if (lx_copy_out(c, m + 56, &len, 4))
            return done ? (int64_t)done : -LX_EFAULT;
    }
    return done;
}

int64_t lx_sys_sendmmsg(struct lx_ctx *c, uint64_t fd, uint64_t uvec, uint64_t vlen, uint64_t flags)
{
    return mmsg(c, fd, uvec, vlen, flags, 0);
}

/* (The timeout is checked, not used.) */
int64_t lx_sys_recvmmsg(struct lx_ctx *c, uint64_t fd, uint64_t uvec, uint64_t vlen, uint64_t flags, uint64_t uts)
{
    int64_t ts[2];
    if (uts && lx_copy_in(c, ts, uts, sizeof(ts)))
        return -LX_EFAULT;
    if (uts && (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000))
        return -LX_EINVAL;
    return mmsg(c, fd, uvec, vlen, flags, 1);
}

int64_t lx_sock_rw(struct lx_ctx *c, struct lx_file *f, uint64_t iov, uint64_t niov, uint64_t buf, uint64_t len,
                   int writing)
{
    struct uio u = { 0, 0, buf, len, NULL };
    if (niov != (uint64_t)-1) {
        int64_t n = uio_iov(c, &u, iov, niov);
        if (n < 0)
            return n == -LX_EMSGSIZE ? -LX_EINVAL : n;
        len = (uint64_t)n;
    }
    if (writing)
        return sock_send(c, f, &u, len, 0, 0, 0, 0, 0);
    struct lx_recv_args a = { 0 };
    return sock_recv(c, f, &u, len, &a);
}

/* ---------------------------------------------------------------- shutdown, names, options, poll */

int64_t lx_sys_shutdown(struct lx_ctx *c, uint64_t fd, uint64_t how)
{
    int64_t err;
    struct lx_sock *s = sock_fd(c, fd, NULL, &err);
    if (!s)
        return err;
    if (s->family == AF_INET)
        return lx_inet_shutdown(index_of(s), how);
    if ((uint32_t)how > 2)
        return -LX_EINVAL;
    int mode = (int)(uint32_t)how + 1;          /* SHUT_RD 0 -> RCV, SHUT_WR 1 -> SEND, SHUT_RDWR -> both */
    s->shut |= mode;
    lx_wake_all(LX_BLK_SOCK, index_of(s));
    struct lx_sock *p = peer_of(s);
    if (p && connection_based(s)) {
        p->shut |= ((mode & RCV_SHUTDOWN) ? SEND_SHUTDOWN : 0) | ((mode & SEND_SHUTDOWN) ? RCV_SHUTDOWN : 0);
        lx_wake_all(LX_BLK_SOCK, s->peer);
    }
    return 0;
}

int64_t lx_sys_getsockname(struct lx_ctx *c, uint64_t fd, uint64_t uaddr, uint64_t ulen, int peer)
{
    int64_t err;
    struct lx_sock *s = sock_fd(c, fd, NULL, &err);
    if (!s)
        return err;
    if (!uaddr)
        return -LX_EFAULT;
    if (s->family == AF_INET)
        return lx_inet_name(c, index_of(s), uaddr, ulen, peer);
    if (s->family == AF_NETLINK)
        return addr_out(c, uaddr, ulen, peer || !s->addrlen ? kernel_nl.addr : s->addr, NL_ADDR);
    if (!peer)
        return addr_out(c, uaddr, ulen, s->addr, s->addrlen);
    struct lx_sock *p = peer_of(s);
    if (!p && !(connection_based(s) && s->state == SS_CONNECTED))
        return -LX_ENOTCONN;
    return p ? addr_out(c, uaddr, ulen, p->addr, p->addrlen) : addr_out(c, uaddr, ulen, s->peer_addr, s->peer_addrlen);
}

/* An int option's value, clamped as Linux clamps buffer sizes. */
int lx_sock_opt_int(struct lx_ctx *c, uint64_t uval, uint64_t len, int32_t *v)
{
    if ((int32_t)len < 4)
        return -LX_EINVAL;
    return lx_copy_in(c, v, uval, 4) ? -LX_EFAULT : 0;
}

/* A struct timeval option in ns (0: none); 0 or a negated errno. */
int lx_sock_opt_timeval(struct lx_ctx *c, uint64_t uval, uint64_t len, uint64_t *ns)
{
    int64_t tv[2];
    if ((int32_t)len < (int32_t)sizeof(tv))
        return -LX_EINVAL;
    if (lx_copy_in(c, tv, uval, sizeof(tv)))
        return -LX_EFAULT;
    if (tv[1] < 0 || tv[1] >= 1000000)
        return -LX_EDOM;
    *ns = tv[0] < 0 ? 0 : (uint64_t)tv[0] * NS + (uint64_t)tv[1] * 1000;
    return 0;
}

int64_t lx_sys_setsockopt(struct lx_ctx *c, uint64_t fd, uint64_t level, uint64_t name, uint64_t uval, uint64_t len)
{
    int64_t err;
    struct lx_sock *s = sock_fd(c, fd, NULL, &err);
    if (!s)
        return err;
    if (s->family == AF_INET)
        return lx_inet_setsockopt(c, index_of(s), level, name, uval, len);
    if ((uint32_t)level != SOL_SOCKET)
        return -LX_EOPNOTSUPP;
    int32_t v = 0;
    switch ((uint32_t)name) {
    case SO_SNDTIMEO:
        return lx_sock_opt_timeval(c, uval, len, &s->sndtimeo);
    case SO_RCVTIMEO:
        return lx_sock_opt_timeval(c, uval, len, &s->rcvtimeo);
    case SO_LINGER: {
        if ((int32_t)len < 8)
            return -LX_EINVAL;
        return lx_copy_in(c, s->linger, uval, 8) ? -LX_EFAULT : 0;
    }
    default:
        break;
    }
    int e = lx_sock_opt_int(c, uval, len, &v);
    if (e)
        return e;
    switch ((uint32_t)name) {
    case SO_REUSEADDR:  s->reuseaddr = v != 0; return 0;
    case SO_KEEPALIVE:  s->keepalive = v != 0; return 0;
    case SO_BROADCAST:  s->broadcast = v != 0; return 0;
    case SO_OOBINLINE:  s->oobinline = v != 0; return 0;
    case SO_DONTROUTE:  s->dontroute = v != 0; return 0;
    case SO_PASSCRED:   s->passcred = v != 0; return 0;
    case SO_RCVLOWAT:   return v < 0 ? -LX_EINVAL : 0;
    case SO_SNDBUF:
    case SO_RCVBUF: {
        uint32_t b = v < 0 ? 0 : (uint32_t)v;
        b = b > DEFAULT_BUF ? DEFAULT_BUF : b;  /* Linux: at most wmem_max/rmem_max, then doubled */
        b = b * 2 < 4608 ? 4608 : b * 2;
        if ((uint32_t)name == SO_SNDBUF)
            s->sndbuf = b;
        else
            s->rcvbuf = b < 2304 ? 2304 : b;
        return 0;
    }
    case SO_TYPE: case SO_ERROR: case SO_PEERCRED: case SO_ACCEPTCONN: case SO_DOMAIN: case SO_PROTOCOL:
        return -LX_ENOPROTOOPT;                 /* read-only */
    default:
        return -LX_ENOPROTOOPT;
    }
}

int64_t lx_sys_getsockopt(struct lx_ctx *c, uint64_t fd, uint64_t level, uint64_t name, uint64_t uval, uint64_t ulen)
{
    int64_t err;
    struct lx_sock *s = sock_fd(c, fd, NULL, &err);
    if (!s)
        return err;
    if (s->family == AF_INET)
        return lx_inet_getsockopt(c, index_of(s), level, name, uval, ulen);
    if ((uint32_t)level != SOL_SOCKET)
        return -LX_EOPNOTSUPP;
    int32_t room;
    if (lx_copy_in(c, &room, ulen, sizeof(room)))
        return -LX_EFAULT;
    if (room < 0)
        return -LX_EINVAL;
    uint8_t out[16] = { 0 };
    uint32_t n = 4;
    int32_t v = 0;
    switch ((uint32_t)name) {
    case SO_TYPE:       v = s->type; break;
    case SO_ERROR:      v = s->err; s->err = 0; break;
    case SO_REUSEADDR:  v = s->reuseaddr; break;
    case SO_KEEPALIVE:  v = s->keepalive; break;
    case SO_BROADCAST:  v = s->broadcast; break;
    case SO_OOBINLINE:  v = s->oobinline; break;
    case SO_DONTROUTE:  v = s->dontroute; break;
    case SO_PASSCRED:   v = s->passcred; break;
    case SO_SNDBUF:     v = (int32_t)s->sndbuf; break;
    case SO_RCVBUF:     v = (int32_t)s->rcvbuf; break;
    case SO_RCVLOWAT:   v = 1; break;
    case SO_SNDLOWAT:   v = 1; break;
    case SO_ACCEPTCONN: v = s->state == SS_LISTEN; break;
    case SO_DOMAIN:     v = s->family; break;
    case SO_PROTOCOL:   v = 0; break;
    case SO_LINGER:
        memcpy(out, s->linger, 8);
        n = 8;
        break;
    case SO_RCVTIMEO:
    case SO_SNDTIMEO: {
        uint64_t ns = (uint32_t)name == SO_RCVTIMEO ? s->rcvtimeo : s->sndtimeo;
        int64_t tv[2] = { (int64_t)(ns / NS), (int64_t)(ns % NS / 1000) };
        memcpy(out, tv, 16);
        n = 16;
        break;
    }
    case SO_PEERCRED: {
        int32_t cred[3] = { connection_based(s) && s->state == SS_CONNECTED ? s->cred_pid : 0, 0, 0 };
        if (!cred[0])
            cred[1] = cred[2] = -1;             /* nobody: Linux's overflow ids */
        memcpy(out, cred, 12);
        n = 12;
        break;
    }
    default:
        return -LX_ENOPROTOOPT;
    }
    if (n == 4)
        memcpy(out, &v, 4);
    uint32_t give = (uint32_t)room < n ? (uint32_t)room : n;
    int32_t full = (int32_t)give;
    if (lx_copy_out(c, uval, out, give) || lx_copy_out(c, ulen, &full, sizeof(full)))
        return -LX_EFAULT;
    return 0;
}

int lx_sock_ready(struct lx_file *f, int writing, uint64_t len)
{
    const struct lx_sock *s = sock_of(f);
    if (s->type != SOCK_STREAM || s->state != SS_CONNECTED || s->err || s->shut)
        return 0;
    if (!writing)
        return s->rcount != 0;
    const struct lx_sock *r = peer_of(s);
    return r && !r->shut && has_room(r, len, 0, 1) && has_room(r, len, 0, 0);
}

int lx_sock_is_inet(struct lx_file *f)
{
    return sock_of(f)->family == AF_INET;
}

int lx_sock_poll(struct lx_file *f)
{
    const struct lx_sock *s = sock_of(f);
    int m = 0;
    if (s->family == AF_INET)
        return lx_inet_poll(index_of(s));
    if (s->state == SS_LISTEN)
        return s->pending ? LX_POLLIN : 0;
    if (s->err)
        m |= LX_POLLERR;
    if (s->shut & RCV_SHUTDOWN)
        m |= LX_POLLRDHUP | LX_POLLIN;
    if (s->shut == (RCV_SHUTDOWN | SEND_SHUTDOWN))
        m |= LX_POLLHUP;
    if (s->rcount)
        m |= LX_POLLIN;
    if (connection_based(s) && s->state != SS_CONNECTED)
        return m | LX_POLLHUP | LX_POLLOUT;
    const struct lx_sock *r = peer_of(s);
    if (r && r->shut & RCV_SHUTDOWN)
        return m | LX_POLLOUT;                  /* (a write fails at once) */
    if (!r || has_room(r, SOCK_BUF / 4, 0, 0))
        m |= LX_POLLOUT;
    if (r && s->type == SOCK_DGRAM && r->peer != index_of(s) && r != s && r->rcount > MAX_DGRAM_QLEN)
        m &= ~LX_POLLOUT;
    return m;
}

int64_t lx_sock_inq(struct lx_file *f)
{
    const struct lx_sock *s = sock_of(f);
    if (s->family == AF_INET)
        return lx_inet_inq(index_of(s));
    if (s->state == SS_LISTEN)
        return -LX_EINVAL;
    if (s->type == SOCK_STREAM)
        return s->count;
    return s->rcount ? s->q->recs[s->rhead].len : 0;
}
