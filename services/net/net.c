/*
 * The network stack service (idl/net.toml): its requests, its sockets and
 * the NIC's interrupt; the packet layers are in stack.c. Written once
 * against svc.h and placed in the kernel or in user space by the system
 * description.
 *
 * The stack drives the machine's virtio-net device itself (services/common/
 * virtio_net.c), opened at the first request; without one it still has its
 * loopback interface. It asks for an interrupt at every received frame and
 * handles the frames in the interrupt's handler, which runs between
 * requests, never during one.
 *
 * A socket's received datagrams wait in a queue of SOCK_QUEUE slots
 * allocated when it is opened (about 12 KiB), counted against its owner's
 * SOCKS_PER_PID datagram sockets (TCP sockets are bounded by their
 * connections, tcp.c); one longer than a slot holds (a reassembled one)
 * is kept in memory of its own, at most SOCK_BIG_BYTES of them a socket.
 */
#include "svc_watch.h"
#include "net.h"
#include "pstring.h"

struct vnet net_nic;
int net_nic_state;
uint32_t net_addr, net_prefix, net_gateway;
struct sock *net_socks;                 /* NSOCKS of them, from the first request on */
struct netstat net_stat;
uint64_t net_mib[NET_MIB_COUNT];

static uint64_t config_owner;           /* the client that configured the interface (0: none yet) */
static uint16_t next_ephemeral[4] = { 0, EPHEMERAL_LO, EPHEMERAL_LO, EPHEMERAL_LO };

/* Take every frame, then ask for the interrupt at the next one; a frame
 * that came meanwhile is taken and the request made again, so that the
 * device's event index is never left behind frames already taken (it
 * would then stay silent while the ring fills). */
static void receive_all(void)
{
    do
        net_receive();
    while (vnet_arm(&net_nic, VNET_WANT_FRAME));
}

static void interrupt(void)
{
    vnet_irq_ack(&net_nic);
    receive_all();
    svc_irq_done(net_nic.irq);
}

int net_nic_ready(void)
{
    if (net_nic_state)
        return net_nic_state == 1;
    /* The first request: the sockets and the stack before any frame comes
     * (allocated, not in the kernel's image when the stack is placed there:
     * no TLB entries for a system without a network). */
    if (!net_socks && (net_socks = svc_alloc(NSOCKS * sizeof *net_socks)) != NULL)
        memset(net_socks, 0, NSOCKS * sizeof *net_socks);
    int err = net_socks ? net_stack_start() : SVC_E_NOMEM;
    err = err ? err : vnet_open(&net_nic, interrupt);
    if (err) {
        net_nic_state = err;                            /* (E_NOENT: the machine has none; E_NOMEM) */
        return 0;
    }
    net_nic_state = 1;
    receive_all();
    return 1;
}

void *net_alloc(size_t size)
{
    void *p = svc_alloc(size);
    net_stat.mem += p ? size : 0;
    return p;
}

void net_free(void *p, size_t size)
{
    if (p) {
        svc_free(p, size);
        net_stat.mem -= size;
    }
}

/* ---------------------------------------------------------------- sockets */

struct sock *net_sock_find(uint32_t kind, uint16_t port)
{
    for (unsigned i = 0; net_socks && i < NSOCKS; i++)
        if (net_socks[i].pid && net_socks[i].kind == kind && net_socks[i].port == port)
            return &net_socks[i];
    return NULL;
}

/* The UDP socket a datagram from src:sport to `port` is for: one
 * connected to that peer, else one not connected (of those sharing the
 * port, as Linux's lookup scores them). */
struct sock *net_udp_find(uint16_t port, uint32_t src, uint16_t sport)
{
    struct sock *open = net_sock_find(SOCK_UDP, port);
    if (!open || !open->reuse)
        return open;                            /* (a port not shared has one socket: the usual case, found at once) */
    open = NULL;
    for (unsigned i = 0; net_socks && i < NSOCKS; i++) {
        struct sock *s = &net_socks[i];
        if (!s->pid || s->kind != SOCK_UDP || s->port != port)
            continue;
        if (s->peer_port && s->peer_addr == src && s->peer_port == sport)
            return s;
        if (!s->peer_port && !open)
            open = s;
    }
    return open;
}

/* May `call`'s client open another UDP socket on `port`? Only when it
 * asks to share it and every socket on it is its own and shared. */
static int udp_port_shared(struct svc_call *call, uint16_t port)
{
    for (unsigned i = 0; net_socks && i < NSOCKS; i++) {
        struct sock *s = &net_socks[i];
        if (s->pid && s->kind == SOCK_UDP && s->port == port && (s->pid != call->pid || !s->reuse))
            return 0;
    }
    return 1;
}

void net_sock_deliver(struct sock *s, uint32_t addr, uint16_t port, const uint8_t *data, uint32_t len)
{
    uint8_t *big = NULL;
    if (s->count == SOCK_QUEUE ||
        (len > INLINE_MAX && (s->big_bytes + len > SOCK_BIG_BYTES || !(big = net_alloc(len))))) {
        if (s->kind == SOCK_UDP) {
            net_stat.udp_dropped++;
            MIB(UDP_RCVBUF_ERRORS);
            MIB(UDP_IN_ERRORS);
        }
        return;
    }
    struct dgram *d = &s->queue[(s->head + s->count++) % SOCK_QUEUE];
    d->addr = addr;
    d->port = port;
    d->len = len;
    d->big = big;
    memcpy(big ? big : d->data, data, len);
    s->big_bytes += big ? len : 0;
    if (s->kind == SOCK_UDP)
        net_stat.udp_in++;
    net_sock_wake(s);
}

static uint32_t sock_poll(const struct sock *s)
{
    if (s->kind == SOCK_TCP)
        return net_tcp_poll(s);
    return NET_POLLOUT | (s->count ? NET_POLLIN : 0);
}

/* Clients that watch their sockets (`watch`) instead of waiting on each:
 * each one's notification and the bits it asked for. */
#define WATCHES 8u
static struct svc_watch watches[WATCHES];

static void watch_signal(uint64_t pid)
{
    svc_watch_signal(watches, WATCHES, pid);
}

void net_sock_wake(struct sock *s)
{
    if (s->pid)
        watch_signal(s->pid);
    if (!s->waiter)
        return;
    uint32_t ready = sock_poll(s) & (s->events | NET_POLLERR | NET_POLLHUP);
    if (ready) {
        svc_token t = s->waiter;
        s->waiter = 0;
        net_wait_reply(t, 0, ready);
    }
}

/* Take the oldest datagram off s's queue. */
static void dgram_pop(struct sock *s)
{
    struct dgram *d = &s->queue[s->head];
    if (d->big) {
        net_free(d->big, d->len);
        s->big_bytes -= d->len;
        d->big = NULL;
    }
    s->head = (uint16_t)((s->head + 1) % SOCK_QUEUE);
    s->count--;
}

/* Everything of socket s let go: its waiter answered with `err`, its
 * connection closed, its datagrams and queue freed, its slot free. */
static void sock_release(struct sock *s, int64_t err)
{
    if (s->waiter)
        net_wait_reply(s->waiter, err, 0);
    if (s->kind == SOCK_TCP)
        net_tcp_close(s);
    while (s->count)
        dgram_pop(s);
    net_free(s->queue, s->queue ? SOCK_QUEUE * sizeof *s->queue : 0);
    memset(s, 0, sizeof *s);
}

/* The sockets of clients that ended, let go (a client's process may end
 * without closing them: the kernel tells nobody). Asked when sockets or
 * ports run out, not at every call (svc_client_alive walks the kernel's
 * processes); how many went. */
static unsigned reap_ended(void)
{
    unsigned n = 0;
    uint64_t dead = 0;                                  /* (the last one found: its sockets come together) */
    for (unsigned i = 0; net_socks && i < NSOCKS; i++) {
        uint64_t pid = net_socks[i].pid;
        if (pid && (pid == dead || !svc_client_alive(pid))) {
            dead = pid;
            sock_release(&net_socks[i], SVC_E_CLOSED);
            n++;
        }
    }
    return n;
}

/* The client's socket numbered `sock` (its index + 1), or NULL. */
struct sock *net_sock_of(struct svc_call *call, uint32_t sock)
{
    if (!net_socks || sock == 0 || sock > NSOCKS || net_socks[sock - 1].pid != call->pid)
        return NULL;
    return &net_socks[sock - 1];
}

int64_t net_sock_new(struct svc_call *call, uint32_t kind, uint16_t port, uint32_t *sock, struct sock **s)
{
    unsigned mine = 0, slot = NSOCKS;
    for (unsigned i = 0; i < NSOCKS; i++) {
        mine += net_socks[i].pid == call->pid && net_socks[i].kind != SOCK_TCP;
        if (!net_socks[i].pid && slot == NSOCKS)
            slot = i;
    }
    /* A TCP socket costs no queue: its connection is what is bounded
     * (TCB_PER_PID), so a server may hold more of them than datagram sockets. */
    if (kind != SOCK_TCP && mine >= SOCKS_PER_PID)
        return SVC_E_LIMIT;
    if (slot == NSOCKS && reap_ended())
        return net_sock_new(call, kind, port, sock, s);
    if (slot == NSOCKS)
        return SVC_E_BUSY;
    net_socks[slot] = (struct sock){ .pid = call->pid, .kind = kind, .port = port };
    *sock = slot + 1;
    *s = &net_socks[slot];
    return 0;
}

/* Whether a socket of `kind` bound to `port` keeps the caller from it. */
static int port_taken(struct svc_call *call, uint32_t kind, uint16_t port, int reuse)
{
    return net_sock_find(kind, port) && !(reuse && udp_port_shared(call, port));
}

static int64_t open(struct svc_call *call, uint32_t kind, uint32_t port, uint32_t *sock, uint32_t *bound)
{
    int reuse = (kind & ~0xffu) == NET_OPEN_REUSE;
    kind &= reuse ? 0xffu : ~0u;
    if ((kind != SOCK_UDP && kind != SOCK_ICMP && kind != SOCK_TCP) || port > 0xffff || (reuse && kind != SOCK_UDP))
        return SVC_E_INVAL;
    net_nic_ready();                                    /* (the stack starts at the first request) */
    if (!net_stack_ready())
        return SVC_E_NOMEM;
    if (port == 0) {                                    /* the next free one from 49152 up, wrapping */
        for (unsigned tries = 0; tries < 0x10000 - EPHEMERAL_LO && !port; tries++) {
            uint16_t p = next_ephemeral[kind];
            next_ephemeral[kind] = p == 0xffff ? EPHEMERAL_LO : (uint16_t)(p + 1);
            if (!net_sock_find(kind, p))
                port = p;
        }
        if (!port)
            return SVC_E_BUSY;
    } else if (port_taken(call, kind, (uint16_t)port, reuse) &&
               (!reap_ended() || port_taken(call, kind, (uint16_t)port, reuse))) {
        return SVC_E_BUSY;                              /* (held by a client that still runs) */
    }
    struct dgram *queue = NULL;
    if (kind != SOCK_TCP && !(queue = net_alloc(SOCK_QUEUE * sizeof *queue)))
        return SVC_E_NOMEM;
    struct sock *s = NULL;
    int64_t err = net_sock_new(call, kind, (uint16_t)port, sock, &s);
    if (!err && kind == SOCK_TCP) {
        err = net_tcp_open(s, call->pid);
        if (err == SVC_E_LIMIT && reap_ended())
            err = net_tcp_open(s, call->pid);           /* (connections of ended clients let go first) */
        if (err)
            memset(s, 0, sizeof *s);
    }
    if (err) {
        net_free(queue, SOCK_QUEUE * sizeof *queue);
        return err;
    }
    s->queue = queue;
    s->reuse = (uint8_t)reuse;
    *bound = port;
    return 0;
}

static int64_t udp_connect(struct svc_call *call, uint32_t sock, uint32_t addr, uint32_t port)
{
    struct sock *s = net_sock_of(call, sock);
    if (!s)
        return SVC_E_BADHANDLE;
    if (s->kind != SOCK_UDP || port > 0xffff || (!port && addr))
        return SVC_E_INVAL;
    s->peer_addr = addr;
    s->peer_port = (uint16_t)port;
    return 0;
}

static int64_t sock_close(struct svc_call *call, uint32_t sock)
{
    struct sock *s = net_sock_of(call, sock);
    if (!s)
        return SVC_E_BADHANDLE;
    sock_release(s, SVC_E_BADHANDLE);
    return 0;
}

static int64_t sendto(struct svc_call *call, uint32_t sock, uint32_t addr, uint32_t port, uint64_t data,
                      uint64_t data_len)
{
    struct sock *s = net_sock_of(call, sock);
    if (!s)
        return SVC_E_BADHANDLE;
    if (s->kind == SOCK_TCP || addr == 0 || (s->kind == SOCK_UDP && (port == 0 || port > 0xffff)))
        return SVC_E_INVAL;
    if (data_len > (s->kind == SOCK_UDP ? UDP_MAX : ICMP_MAX))
        return SVC_E_RANGE;
    uint8_t *msg = net_ip_payload();                    /* built where the stack sends it from */
    uint32_t len, off = s->kind == SOCK_UDP ? 8 : 0;
    if (svc_copy_in(call, msg + off, data, data_len))
        return SVC_E_FAULT;
    len = off + (uint32_t)data_len;
    if (s->kind == SOCK_UDP) {
        msg[0] = (uint8_t)(s->port >> 8);
        msg[1] = (uint8_t)s->port;
        msg[2] = (uint8_t)(port >> 8);
        msg[3] = (uint8_t)port;
        msg[4] = (uint8_t)(len >> 8);
        msg[5] = (uint8_t)len;
        msg[6] = msg[7] = 0;
        uint32_t pseudo = net_pseudo_sum(net_source_for(addr), addr, 17, len);
        uint16_t c = net_is_local(addr) ? net_local_check(pseudo) : inet_checksum(msg, len, pseudo);
        c = c ? c : 0xffff;                             /* RFC 768: a computed 0 is sent as all ones */
        msg[6] = (uint8_t)(c >> 8);
        msg[7] = (uint8_t)c;
    } else {
        if (len < 8 || msg[0] != 8 || msg[1] != 0)
            return SVC_E_INVAL;
        msg[4] = (uint8_t)(s->port >> 8);
        msg[5] = (uint8_t)s->port;
        msg[2] = msg[3] = 0;
        uint16_t c = inet_checksum(msg, len, 0);
        msg[2] = (uint8_t)(c >> 8);
        msg[3] = (uint8_t)c;
    }
    if (!net_addr && (addr >> 24) != 127)
        return net_nic_ready() ? SVC_E_STATE : SVC_E_NOENT;
    uint8_t type = msg[0];                              /* (msg may be the stack's buffer, used again by the send) */
    int err = net_ip_send(addr, s->kind == SOCK_UDP ? 17 : 1, msg, len);
    if (s->kind != SOCK_UDP)
        net_icmp_sent(type, err);
    else if (!err)
        MIB(UDP_OUT_DATAGRAMS);
    else if (err == SVC_E_AGAIN || err == SVC_E_NOMEM)
        MIB(UDP_SNDBUF_ERRORS);
    net_loop_drain();
    return err;
}

/* The socket's oldest datagram into buf, taken (recvfrom) or left (peekfrom). */
static int64_t take_dgram(struct svc_call *call, uint32_t sock, uint64_t buf, uint64_t buf_len, uint64_t *count,
                          uint32_t *addr, uint32_t *port, int peek)
{
    struct sock *s = net_sock_of(call, sock);
    if (!s)
        return SVC_E_BADHANDLE;
    if (s->kind == SOCK_TCP)
        return SVC_E_INVAL;
    if (!s->count)
        return SVC_E_AGAIN;
    struct dgram *d = &s->queue[s->head];
    uint64_t n = d->len < buf_len ? d->len : buf_len;
    if (n && svc_copy_out(call, buf, d->big ? d->big : d->data, n) != 0)
        return SVC_E_FAULT;                             /* the datagram stays */
    *count = d->len;
    *addr = d->addr;
    *port = d->port;
    if (!peek) {
        if (s->kind == SOCK_UDP)
            MIB(UDP_IN_DATAGRAMS);                      /* (Linux counts a datagram read, in udp_recvmsg) */
        dgram_pop(s);
    }
    return 0;
}

static int64_t recvfrom(struct svc_call *call, uint32_t sock, uint64_t buf, uint64_t buf_len, uint64_t *count,
                        uint32_t *addr, uint32_t *port)
{
    return take_dgram(call, sock, buf, buf_len, count, addr, port, 0);
}

static int64_t peekfrom(struct svc_call *call, uint32_t sock, uint64_t buf, uint64_t buf_len, uint64_t *count,
                        uint32_t *addr, uint32_t *port)
{
    return take_dgram(call, sock, buf, buf_len, count, addr, port, 1);
}

static int64_t wait(struct svc_call *call, uint32_t sock, uint32_t events, uint32_t *revents)
{
    struct sock *s = net_sock_of(call, sock);
    if (!s)
        return SVC_E_BADHANDLE;
    uint32_t ready = sock_poll(s) & (events | NET_POLLERR | NET_POLLHUP);
    if (ready) {
        *revents = ready;
        return 0;
    }
    if (s->waiter)
        return SVC_E_BUSY;
    s->events = events;
    s->waiter = svc_defer(call);
    return s->waiter ? SVC_DEFERRED : SVC_E_NOMEM;
}

static int64_t watch(struct svc_call *call, svc_handle note, uint64_t bits)
{
    return svc_watch_set(watches, WATCHES, call->pid, note, bits);
}

static int64_t poll_now(struct svc_call *call, uint32_t sock, uint32_t *revents)
{
    struct sock *s = net_sock_of(call, sock);
    if (!s)
        return SVC_E_BADHANDLE;
    *revents = sock_poll(s);
    return 0;
}

/* ---------------------------------------------------------------- the interface */

static int64_t config(struct svc_call *call, uint32_t addr, uint32_t prefix, uint32_t gateway)
{
    if (!net_nic_ready())
        return net_nic_state;
    if (config_owner && config_owner != call->pid)
        return SVC_E_PERM;
    if (addr == 0) {
        net_dhcp_stop();
        net_addr = net_prefix = net_gateway = 0;
        net_forget_neighbours();
        return 0;
    }
    if (prefix < 1 || prefix > 30)
        return SVC_E_INVAL;
    uint32_t mask = 0xffffffffu << (32 - prefix);
    int bad_addr = (addr >> 24) == 127 || (addr >> 24) == 0 || (addr >> 28) >= 14 ||
                   (addr & ~mask) == 0 || (addr & ~mask) == ~mask;
    int bad_gw = gateway && ((gateway & mask) != (addr & mask) || gateway == addr || (gateway & ~mask) == 0 ||
                             (gateway & ~mask) == ~mask);
    if (bad_addr || bad_gw)
        return SVC_E_INVAL;
    config_owner = call->pid;
    net_dhcp_stop();                                    /* (set by hand: no lease kept any more) */
    if (addr != net_addr || prefix != net_prefix)
        net_forget_neighbours();
    net_addr = addr;
    net_prefix = prefix;
    net_gateway = gateway;
    return 0;
}

static int64_t dhcp(struct svc_call *call, uint32_t *addr, uint32_t *prefix, uint32_t *gateway, uint32_t *dns,
                    uint32_t *lease)
{
    (void)addr, (void)prefix, (void)gateway, (void)dns, (void)lease;    /* (answered by net_dhcp_reply) */
    if (!net_nic_ready())
        return net_nic_state;
    if (config_owner && config_owner != call->pid)
        return SVC_E_PERM;
    svc_token t = svc_defer(call);
    if (!t)
        return SVC_E_NOMEM;
    int64_t err = net_dhcp_start(t);
    if (err) {
        net_dhcp_reply(t, err, 0, 0, 0, 0, 0);
        return SVC_DEFERRED;
    }
    config_owner = call->pid;
    return SVC_DEFERRED;
}

static int64_t info(struct svc_call *call, uint64_t *mac, uint32_t *addr, uint32_t *prefix, uint32_t *gateway,
                    uint32_t *mtu, uint32_t *link)
{
    if (!net_nic_ready())
        return net_nic_state;
    uint64_t m = 0;
    for (unsigned i = 0; i < 6; i++)
        m |= (uint64_t)net_nic.mac[i] << (8 * i);
    *mac = m;
    *addr = net_addr;
    *prefix = net_prefix;
    *gateway = net_gateway;
    *mtu = IP_MTU;
    *link = (uint32_t)vnet_link_up(&net_nic);
    return 0;
}

static int64_t stats(struct svc_call *call, uint64_t *ip_in, uint64_t *ip_dropped, uint64_t *udp_in,
                     uint64_t *udp_dropped, uint64_t *echo_answered, uint64_t *tx_dropped, uint64_t *frags_in,
                     uint64_t *reassembled, uint64_t *reasm_failed, uint64_t *frags_out, uint64_t *mem,
                     uint64_t *tcp_in, uint64_t *tcp_out, uint64_t *syn_cookies)
{
    net_nic_ready();
    *ip_in = net_stat.ip_in;
    *ip_dropped = net_stat.ip_dropped;
    *udp_in = net_stat.udp_in;
    *udp_dropped = net_stat.udp_dropped;
    *echo_answered = net_stat.echo_answered;
    *tx_dropped = net_stat.tx_dropped;
    *frags_in = net_stat.frags_in;
    *reassembled = net_stat.reassembled;
    *reasm_failed = net_stat.reasm_failed;
    *frags_out = net_stat.frags_out;
    *mem = net_stat.mem;
    *tcp_in = net_stat.tcp_in;
    *tcp_out = net_stat.tcp_out;
    *syn_cookies = net_stat.syn_cookies;
    return 0;
}

/* Linux's /proc/net/snmp counters (net_mib.h), as many as buf holds. */
static int64_t snmp(struct svc_call *call, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    net_nic_ready();
    net_mib[MIB_TCP_CURR_ESTAB] = net_tcp_curr_estab();
    uint64_t n = buf_len / sizeof(uint64_t);
    n = n < NET_MIB_COUNT ? n : NET_MIB_COUNT;
    if (svc_copy_out(call, buf, net_mib, n * sizeof(uint64_t)))
        return SVC_E_FAULT;
    *count = n;
    return 0;
}

static int64_t ifstats(struct svc_call *call, uint32_t index, uint64_t *rx_bytes, uint64_t *rx_packets,
                       uint64_t *rx_dropped, uint64_t *tx_bytes, uint64_t *tx_packets, uint64_t *tx_dropped)
{
    (void)call;
    if (index == 1) {                                   /* lo: what it sends it receives */
        *rx_bytes = *tx_bytes = net_stat.lo_bytes;
        *rx_packets = *tx_packets = net_stat.lo_packets;
        *rx_dropped = 0;
        *tx_dropped = net_stat.lo_dropped;
        return 0;
    }
    if (index != 2 || !net_nic_ready())
        return SVC_E_NOENT;
    *rx_bytes = net_nic.rx_bytes;
    *rx_packets = net_nic.rx_frames;
    *rx_dropped = net_nic.rx_dropped;
    *tx_bytes = net_nic.tx_bytes;
    *tx_packets = net_nic.tx_frames;
    *tx_dropped = net_stat.tx_dropped - net_stat.lo_dropped;
    return 0;
}

static int64_t default_cc(struct svc_call *call, uint32_t set, uint32_t cc, uint32_t *now)
{
    if (set) {
        if (cc > 2 || set != 1)
            return SVC_E_INVAL;
        if (config_owner && config_owner != call->pid)
            return SVC_E_PERM;                          /* the system's choice: its configuration's owner's */
        config_owner = call->pid;
        net_tcp_default_cc = cc;
    }
    *now = net_tcp_default_cc;
    return 0;
}

/* The handlers: the generated skeleton (net_service, net_fast) calls them. */
const struct net_ops net_ops = { config, dhcp, info, open, sendto, recvfrom, wait, sock_close, stats,
                                 net_op_listen, net_op_accept, net_op_connect, net_op_send, net_op_recv,
                                 net_op_shutdown, net_op_tcp_info, net_op_tcp_set, watch, poll_now,
                                 ifstats, default_cc, udp_connect, net_op_peek, peekfrom, net_op_discard, snmp,
                                 net_op_tcp_stats };
