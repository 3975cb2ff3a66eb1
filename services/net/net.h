/*
 * The network stack's parts (services/net): the packet layers (stack.c)
 * and the sockets and requests (net.c). One copy of this state per system;
 * the service's requests and its interrupt handler never run at once.
 * (Its names start net_: placed in the kernel, it shares one namespace.)
 */
#ifndef NET_H
#define NET_H

#include "inet_csum.h"
#include "net_if.h"
#include "virtio_net.h"
#include "net_mib.h"

#define SOCK_UDP        1u
#define SOCK_ICMP       2u
#define NET_OPEN_REUSE  0x100u          /* `open`'s kind | this: a UDP port shared (SO_REUSEADDR) */
#define SOCK_TCP        3u
#define NSOCKS          256u            /* the service's sockets in all */
#define SOCKS_PER_PID   16u             /* a client's UDP and ICMP ones (TCP sockets: its connections' limit) */
#define SOCK_QUEUE      8u              /* datagrams a socket holds */
#define SOCK_BIG_BYTES  (128u * 1024)   /* ... of which those past one frame's size hold at most this much */
#define IP_MTU          1500u
#define IP_MAX          65535u          /* an IPv4 datagram, header and all */
#define IP_HLEN         20u             /* its header as sent (no options) */
#define UDP_MAX         (IP_MAX - IP_HLEN - 8)  /* 65,507: the payload of the largest UDP datagram */
#define ICMP_MAX        (IP_MAX - IP_HLEN)      /* an ICMP message */
#define INLINE_MAX      (IP_MTU - IP_HLEN)      /* a datagram kept in its queue slot; bigger ones are allocated */
#define EPHEMERAL_LO    49152u

#define LOOPBACK_NET    0x7f000000u     /* 127.0.0.0/8 */

/* A received datagram waiting on a socket: in the slot itself, or past
 * INLINE_MAX bytes in memory of its own (`big`). */
struct dgram {
    uint32_t addr;
    uint16_t port;
    uint32_t len;
    uint8_t *big;
    uint8_t data[INLINE_MAX];
};

/* poll(2)'s bits, as `wait` takes and answers them */
#define NET_POLLIN      0x1u
#define NET_POLLOUT     0x4u
#define NET_POLLERR     0x8u
#define NET_POLLHUP     0x10u
#define NET_POLLRDHUP   0x2000u

/* tcp_set's options */
#define NET_TCP_NODELAY     1u
#define NET_TCP_CONGESTION  2u
#define NET_TCP_KEEPALIVE   3u
#define NET_TCP_KEEPIDLE    4u
#define NET_TCP_KEEPINTVL   5u
#define NET_TCP_KEEPCNT     6u
#define NET_TCP_LINGER0     7u
#define NET_TCP_SNDBUF      8u
#define NET_TCP_RCVBUF      9u

struct tcb;

struct sock {
    uint64_t pid;                       /* its owner; 0: the slot is free */
    uint32_t kind;
    uint16_t port;
    uint16_t head, count;               /* the queue: oldest at head */
    uint32_t big_bytes;                 /* what its big datagrams take */
    svc_token waiter;
    uint32_t events;                    /* what the waiter waits for */
    struct dgram *queue;                /* SOCK_QUEUE of them (svc_alloc; not for TCP) */
    struct tcb *tcb;                    /* TCP: its connection */
    uint8_t reuse;                      /* UDP: opened with NET_OPEN_REUSE (its port may be shared) */
    uint16_t peer_port;                 /* UDP: the peer it is connected to (`udp_connect`; 0: none) */
    uint32_t peer_addr;
};

struct netstat {
    uint64_t ip_in, ip_dropped, udp_in, udp_dropped, echo_answered, tx_dropped;
    uint64_t frags_in, reassembled, reasm_failed, frags_out;
    uint64_t mem;                       /* bytes allocated (net_alloc) and not freed */
    uint64_t tcp_in, tcp_out, syn_cookies;
    uint64_t lo_packets, lo_bytes, lo_dropped;  /* the loopback interface's (its drops are in tx_dropped too) */
};

extern struct vnet net_nic;
extern int net_nic_state;                   /* 0 until the NIC was asked for, then vnet_open's answer */
int net_nic_ready(void);                    /* the NIC started (1) or not (0) */
extern uint32_t net_addr, net_prefix, net_gateway;
extern struct sock *net_socks;              /* NSOCKS, allocated at the first request */
extern struct netstat net_stat;
extern uint64_t net_mib[NET_MIB_COUNT];     /* Linux's /proc/net/snmp counters (net_mib.h) */
#define MIB(field) (net_mib[MIB_##field]++)
void net_icmp_sent(uint8_t type, int err);  /* an ICMP message of `type` went (err 0) or not */

/* net.c: the service's memory (svc_alloc), counted in net_stat.mem */
void *net_alloc(size_t size);
void net_free(void *p, size_t size);

/* stack.c */
int net_stack_start(void);               /* once, from the first request (SVC_E_NOMEM: no memory for it) */
int net_stack_ready(void);               /* it started */
void net_timers_update(void);            /* the timer at the stack's next deadline */
void net_receive(void);                  /* take every frame the NIC has */
/* Send `len` bytes of payload (at most IP_MAX - IP_HLEN) to dst: in one
 * packet, or in fragments past the MTU. The payload may be built in place
 * at net_ip_payload() (no copy then). */
int net_ip_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len);
uint8_t *net_ip_payload(void);
/* Where a payload of len bytes to dst is best built: in the NIC's next
 * transmit buffer when the packet goes out whole to a neighbour whose
 * address is known (net_ip_send then copies nothing), else at
 * net_ip_payload(). Good until the next call of either or net_ip_send. */
uint8_t *net_ip_payload_to(uint32_t dst, uint32_t len);
uint32_t net_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint32_t len);
uint32_t net_source_for(uint32_t dst);       /* the source address a packet to dst carries */
int net_is_local(uint32_t dst);             /* dst is this host's: packets to it go through the loopback */
uint16_t net_local_check(uint32_t pseudo);  /* the TCP or UDP checksum field of such a packet */
void net_forget_neighbours(void);
void net_loop_drain(void);                  /* deliver what was sent to this host */
/* Bytes in up to two pieces (a ring's, wrapping round). */
struct net_bytes {
    const uint8_t *p[2];
    uint32_t n[2];
};
/* As net_ip_send of `hlen` bytes of header followed by `data`, to this
 * host only (net_is_local, else E_INVAL): the data is not copied but
 * referred to, and is read when the packet is delivered (net_loop_drain,
 * at the end of the request), or copied first where net_loop_forget says
 * its memory goes away; what it holds may change meanwhile only where the
 * receiver has had it already. */
int net_ip_send_ref(uint32_t dst, uint8_t proto, const uint8_t *hdr, uint32_t hlen, const struct net_bytes *data);
/* [buf, buf + size) is about to be freed or reused: packets queued for
 * this host that refer to it take copies of their data. */
void net_loop_forget(const uint8_t *buf, uint32_t size);
/* The data of the packet being delivered, when it refers to its data
 * (net_ip_send_ref), else NULL: its payload past the headers is there,
 * not after them. */
extern const struct net_bytes *net_loop_data;

/* tcp.c: the congestion control new connections take (`default_cc`) */
extern uint32_t net_tcp_default_cc;
/* tcp.c: a TCP segment for this host (to its broadcast address or not;
 * from the wire, its checksum checked, or from this host, not) */
void net_tcp_input(const uint8_t *ip, uint32_t hlen, uint32_t len, int to_broadcast, int from_wire);
void net_tcp_batch(int start);               /* frames from the NIC follow (1); they are done (0: held ACKs go) */
uint64_t net_tcp_deadline(void);            /* its next timer (0: none) */
uint64_t net_tcp_curr_estab(void);          /* connections ESTABLISHED or in CLOSE_WAIT */
void net_tcp_timers(uint64_t now);
int64_t net_tcp_open(struct sock *s, uint64_t pid);     /* a new TCP socket's connection block */
void net_tcp_close(struct sock *s);
uint32_t net_tcp_poll(const struct sock *s);
/* tcp.c: the TCP methods of idl/net.toml */
int64_t net_op_listen(struct svc_call *call, uint32_t sock, uint32_t backlog);
int64_t net_op_accept(struct svc_call *call, uint32_t sock, uint32_t *conn, uint32_t *addr, uint32_t *port);
int64_t net_op_connect(struct svc_call *call, uint32_t sock, uint32_t addr, uint32_t port);
int64_t net_op_send(struct svc_call *call, uint32_t sock, uint64_t data, uint64_t data_len, uint64_t *count);
int64_t net_op_recv(struct svc_call *call, uint32_t sock, uint64_t buf, uint64_t buf_len, uint64_t *count);
int64_t net_op_peek(struct svc_call *call, uint32_t sock, uint64_t offset, uint64_t buf, uint64_t buf_len,
                    uint64_t *count);
int64_t net_op_discard(struct svc_call *call, uint32_t sock, uint64_t count, uint64_t *dropped);
int64_t net_op_shutdown(struct svc_call *call, uint32_t sock, uint32_t how);
int64_t net_op_tcp_info(struct svc_call *call, uint32_t sock, uint32_t *state, uint32_t *error, uint32_t *laddr,
                        uint32_t *raddr, uint32_t *rport, uint32_t *mss, uint32_t *rto_us, uint32_t *srtt_us,
                        uint32_t *rttvar_us, uint32_t *cwnd, uint32_t *ssthresh, uint32_t *unacked,
                        uint32_t *retrans, uint32_t *unread, uint32_t *unsent, uint32_t *snd_wnd);
int64_t net_op_tcp_set(struct svc_call *call, uint32_t sock, uint32_t option, uint32_t value);
int64_t net_op_tcp_stats(struct svc_call *call, uint32_t sock, uint32_t *options, uint32_t *wscale,
                         uint64_t *pacing_rate, uint64_t *bytes_acked, uint64_t *bytes_received, uint32_t *segs_out,
                         uint32_t *segs_in);

/* dhcp.c */
int64_t net_dhcp_start(svc_token waiter);   /* the `dhcp` request: answered when leased (or failed) */
void net_dhcp_stop(void);
uint64_t net_dhcp_deadline(void);           /* its next timer (0: none) */
void net_dhcp_timer(uint64_t now);
int net_dhcp_input(const uint8_t *m, uint32_t len);    /* UDP to port 68: taken (1) if the client runs */

/* net.c: a datagram for a socket arrived */
struct sock *net_sock_find(uint32_t kind, uint16_t port);
struct sock *net_udp_find(uint16_t port, uint32_t src, uint16_t sport);   /* a datagram's socket */
void net_sock_deliver(struct sock *s, uint32_t addr, uint16_t port, const uint8_t *data, uint32_t len);
/* net.c: the client's socket numbered `sock` (or NULL); a new one for the
 * client (E_LIMIT, E_BUSY); a socket's readiness changed (its waiter is
 * answered if it waits for what is ready now). */
struct sock *net_sock_of(struct svc_call *call, uint32_t sock);
int64_t net_sock_new(struct svc_call *call, uint32_t kind, uint16_t port, uint32_t *sock, struct sock **s);
void net_sock_wake(struct sock *s);

#endif
