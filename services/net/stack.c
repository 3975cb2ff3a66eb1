/*
 * The packet layers of the network stack: Ethernet II, ARP (RFC 826),
 * IPv4 (RFC 791; no options sent, none honoured, fragments dropped),
 * ICMP (RFC 792: echo answered, port and protocol unreachable sent) and
 * UDP (RFC 768), over the NIC and the loopback interface.
 *
 * Received frames are taken from the device's ring one by one and handled
 * where the device wrote them; a datagram for a socket is copied into the
 * socket's queue (net.c). Packets for this host's own addresses go through
 * a small loopback queue instead of the wire, drained after the request
 * that sent them, so that nothing here calls itself.
 */
#include "net.h"
#include "pstring.h"

#define ETH_HLEN        14u
#define ETH_IP          0x0800u
#define ETH_ARP         0x0806u
#define ARP_LEN         28u
#define IP_HLEN         20u
#define PROTO_ICMP      1u
#define PROTO_UDP       17u
#define NEIGHBOURS      16u
#define LOOP_SLOTS      4u

struct neighbour {
    uint32_t addr;                      /* 0: the entry is free */
    uint8_t mac[6];
    uint8_t resolved;
    uint32_t used;                      /* when last used, for replacing the oldest */
    uint32_t held_len;                  /* a packet waiting for the answer (0: none) */
    uint8_t held[IP_MTU];
};

static struct neighbour neighbours[NEIGHBOURS];
static uint32_t clock_;                 /* counts uses, for the oldest entry */
static uint16_t ip_id;
static uint8_t out[IP_MTU];             /* the packet being built */
static uint8_t loop_pkt[LOOP_SLOTS][IP_MTU];
static uint32_t loop_len[LOOP_SLOTS], loop_head, loop_count;

static const uint8_t broadcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }

/* The Internet checksum (RFC 1071) of p[0..len) added to `sum` (a
 * pseudo-header's partial sum), complemented: 0 over data that holds its
 * own correct checksum. */
uint16_t net_checksum(const uint8_t *p, uint32_t len, uint32_t sum)
{
    uint64_t s = sum;
    for (uint32_t i = 0; i + 1 < len; i += 2)
        s += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (len & 1)
        s += (uint32_t)p[len - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* The partial sum of the pseudo-header (RFC 768) for a UDP datagram. */
uint32_t net_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint32_t len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

static int is_loopback(uint32_t a) { return (a >> 24) == (LOOPBACK_NET >> 24); }
uint32_t net_source_for(uint32_t dst) { return is_loopback(dst) ? (LOOPBACK_NET | 1) : net_addr; }
static uint32_t netmask(void) { return net_prefix ? 0xffffffffu << (32 - net_prefix) : 0; }
static int is_local(uint32_t a) { return is_loopback(a) || (net_addr && a == net_addr); }
static int is_broadcast(uint32_t a)
{
    return a == 0xffffffffu || (net_addr && a == (net_addr | ~netmask()));
}

/* ---------------------------------------------------------------- Ethernet and ARP */

static uint8_t *frame_start(const uint8_t *dst_mac, uint16_t type)
{
    if (!net_nic_ready())
        return NULL;
    uint8_t *f = vnet_tx_buf(&net_nic);
    if (!f)
        return NULL;
    memcpy(f, dst_mac, 6);
    memcpy(f + 6, net_nic.mac, 6);
    put16(f + 12, type);
    return f;
}

static void arp_send(uint16_t op, const uint8_t *tha, uint32_t tpa)
{
    uint8_t *f = frame_start(op == 1 ? broadcast_mac : tha, ETH_ARP);
    if (!f) {
        net_stat.tx_dropped++;
        return;
    }
    uint8_t *a = f + ETH_HLEN;
    put16(a, 1);                                        /* Ethernet */
    put16(a + 2, ETH_IP);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, op);
    memcpy(a + 8, net_nic.mac, 6);
    put32(a + 14, net_addr);
    memcpy(a + 18, op == 1 ? (const uint8_t[6]){ 0 } : tha, 6);
    put32(a + 24, tpa);
    memset(a + ARP_LEN, 0, 60 - ETH_HLEN - ARP_LEN);    /* padded to the minimum frame */
    vnet_tx_commit(&net_nic, 60);
}

static struct neighbour *neighbour_find(uint32_t addr)
{
    for (unsigned i = 0; i < NEIGHBOURS; i++)
        if (neighbours[i].addr == addr)
            return &neighbours[i];
    return NULL;
}

/* An entry for addr: its own, else a free one, else the least recently used. */
static struct neighbour *neighbour_make(uint32_t addr)
{
    struct neighbour *n = neighbour_find(addr), *oldest = &neighbours[0];
    if (n)
        return n;
    for (unsigned i = 0; i < NEIGHBOURS; i++) {
        if (!neighbours[i].addr) {
            oldest = &neighbours[i];
            break;
        }
        if (neighbours[i].used < oldest->used)
            oldest = &neighbours[i];
    }
    if (oldest->held_len)
        net_stat.tx_dropped++;
    memset(oldest, 0, sizeof *oldest - IP_MTU);
    oldest->held_len = 0;
    oldest->addr = addr;
    return oldest;
}

void net_forget_neighbours(void)
{
    for (unsigned i = 0; i < NEIGHBOURS; i++) {
        if (neighbours[i].held_len)
            net_stat.tx_dropped++;
        neighbours[i].addr = 0;
        neighbours[i].held_len = 0;
    }
}

/* Put an IPv4 packet on the wire to the neighbour n (resolved). */
static int wire_send(const uint8_t *mac, const uint8_t *pkt, uint32_t len)
{
    uint8_t *f = frame_start(mac, ETH_IP);
    if (!f)
        return SVC_E_AGAIN;
    memcpy(f + ETH_HLEN, pkt, len);
    uint32_t flen = ETH_HLEN + len;
    if (flen < 60) {
        memset(f + flen, 0, 60 - flen);
        flen = 60;
    }
    vnet_tx_commit(&net_nic, flen);
    return 0;
}

static void arp_learn(uint32_t addr, const uint8_t *mac, int create)
{
    struct neighbour *n = create ? neighbour_make(addr) : neighbour_find(addr);
    if (!n)
        return;
    memcpy(n->mac, mac, 6);
    n->resolved = 1;
    n->used = ++clock_;
    if (n->held_len) {
        if (wire_send(n->mac, n->held, n->held_len))
            net_stat.tx_dropped++;
        n->held_len = 0;
    }
}

static void arp_input(const uint8_t *a, uint32_t len)
{
    if (len < ARP_LEN || get16(a) != 1 || get16(a + 2) != ETH_IP || a[4] != 6 || a[5] != 4)
        return;
    uint16_t op = get16(a + 6);
    uint32_t spa = get32(a + 14), tpa = get32(a + 24);
    if ((op != 1 && op != 2) || !spa || is_broadcast(spa) || (a[8] & 1))
        return;                                         /* (no multicast or broadcast sender) */
    int for_us = net_addr && tpa == net_addr;
    arp_learn(spa, a + 8, for_us);                      /* RFC 826: merge, and add if it is for us */
    if (for_us && op == 1)
        arp_send(2, a + 8, spa);
}

/* ---------------------------------------------------------------- IPv4 */

/* The next hop toward dst, or 0 if there is no route. */
static uint32_t next_hop(uint32_t dst)
{
    if (!net_addr)
        return 0;
    if (dst == 0xffffffffu || (dst & netmask()) == (net_addr & netmask()))
        return dst;
    return net_gateway;
}

static int loop_send(const uint8_t *pkt, uint32_t len)
{
    if (loop_count == LOOP_SLOTS) {
        net_stat.tx_dropped++;
        return SVC_E_AGAIN;
    }
    unsigned slot = (loop_head + loop_count++) % LOOP_SLOTS;
    memcpy(loop_pkt[slot], pkt, len);
    loop_len[slot] = len;
    return 0;
}

int net_ip_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len)
{
    if (len > IP_MTU - IP_HLEN)
        return SVC_E_RANGE;
    int local = is_local(dst);
    uint32_t hop = local ? dst : next_hop(dst);
    if (!hop)
        return SVC_E_NOENT;
    uint32_t src = net_source_for(dst);
    uint8_t *ip = out;
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, IP_HLEN + len);
    put16(ip + 4, ip_id++);
    put16(ip + 6, 0x4000);                              /* don't fragment: nothing here is fragmented */
    ip[8] = 64;
    ip[9] = proto;
    put16(ip + 10, 0);
    put32(ip + 12, src);
    put32(ip + 16, dst);
    put16(ip + 10, net_checksum(ip, IP_HLEN, 0));
    memcpy(ip + IP_HLEN, payload, len);
    len += IP_HLEN;
    if (local)
        return loop_send(ip, len);
    if (!net_nic_ready())
        return SVC_E_NOENT;
    if (hop == 0xffffffffu || is_broadcast(hop))
        return wire_send(broadcast_mac, ip, len);
    struct neighbour *n = neighbour_make(hop);
    n->used = ++clock_;
    if (n->resolved)
        return wire_send(n->mac, ip, len);
    if (n->held_len)
        net_stat.tx_dropped++;                          /* the older one waits no more */
    memcpy(n->held, ip, len);
    n->held_len = len;
    arp_send(1, NULL, hop);
    return 0;
}

/* ICMP error `type`/`code` about the packet ip (its header and 8 bytes). */
static void icmp_error(uint8_t type, uint8_t code, const uint8_t *ip, uint32_t ip_len)
{
    uint8_t msg[8 + 60 + 8];
    uint32_t quote = ((uint32_t)(ip[0] & 15) * 4) + 8;
    if (quote > ip_len)
        quote = ip_len;
    memset(msg, 0, 8);
    msg[0] = type;
    msg[1] = code;
    memcpy(msg + 8, ip, quote);
    put16(msg + 2, net_checksum(msg, 8 + quote, 0));
    if (net_ip_send(get32(ip + 12), PROTO_ICMP, msg, 8 + quote))
        net_stat.tx_dropped++;
}

static void icmp_input(const uint8_t *ip, uint32_t hlen, uint32_t len)
{
    const uint8_t *m = ip + hlen;
    uint32_t mlen = len - hlen;
    if (mlen < 8 || net_checksum(m, mlen, 0) != 0) {
        net_stat.ip_dropped++;
        return;
    }
    uint32_t src = get32(ip + 12);
    if (m[0] == 8 && m[1] == 0) {                       /* echo request: the same back as a reply */
        if (is_broadcast(get32(ip + 16)))
            return;                                     /* (no answer to a broadcast ping) */
        static uint8_t reply[IP_MTU];
        memcpy(reply, m, mlen);
        reply[0] = 0;
        put16(reply + 2, 0);
        put16(reply + 2, net_checksum(reply, mlen, 0));
        if (net_ip_send(src, PROTO_ICMP, reply, mlen) == 0)
            net_stat.echo_answered++;
        else
            net_stat.tx_dropped++;
        return;
    }
    if (m[0] == 0 && m[1] == 0) {                       /* echo reply: to the socket of its identifier */
        struct sock *s = net_sock_find(SOCK_ICMP, get16(m + 4));
        if (s)
            net_sock_deliver(s, src, 0, m, mlen);
        return;
    }
}

static void udp_input(const uint8_t *ip, uint32_t hlen, uint32_t len)
{
    const uint8_t *u = ip + hlen;
    uint32_t ulen = len - hlen;
    if (ulen < 8 || get16(u + 4) < 8 || get16(u + 4) > ulen) {
        net_stat.ip_dropped++;
        return;
    }
    ulen = get16(u + 4);
    uint32_t src = get32(ip + 12), dst = get32(ip + 16);
    if (get16(u + 6) && net_checksum(u, ulen, net_pseudo_sum(src, dst, PROTO_UDP, ulen)) != 0) {
        net_stat.ip_dropped++;
        return;
    }
    struct sock *s = net_sock_find(SOCK_UDP, get16(u + 2));
    if (!s) {
        net_stat.udp_dropped++;
        if (!is_broadcast(dst))
            icmp_error(3, 3, ip, len);                  /* port unreachable */
        return;
    }
    net_sock_deliver(s, src, get16(u), u + 8, ulen - 8);
}

static void ip_input(const uint8_t *ip, uint32_t len, int from_wire)
{
    net_stat.ip_in++;
    uint32_t hlen = (uint32_t)(ip[0] & 15) * 4;
    if (len < IP_HLEN || (ip[0] >> 4) != 4 || hlen < IP_HLEN || get16(ip + 2) < hlen || get16(ip + 2) > len ||
        net_checksum(ip, hlen, 0) != 0) {
        net_stat.ip_dropped++;
        return;
    }
    len = get16(ip + 2);                                /* (what follows in the frame is padding) */
    uint32_t src = get32(ip + 12), dst = get32(ip + 16);
    int ours = (net_addr && dst == net_addr) || is_broadcast(dst) || (!from_wire && is_loopback(dst));
    int martian = from_wire && (is_loopback(src) || is_loopback(dst) || (src >> 28) == 14 || src == 0xffffffffu);
    if (!ours || martian || (get16(ip + 6) & 0x3fff)) {
        net_stat.ip_dropped++;                          /* not for us, impossible, or a fragment */
        return;
    }
    if (ip[9] == PROTO_ICMP)
        icmp_input(ip, hlen, len);
    else if (ip[9] == PROTO_UDP)
        udp_input(ip, hlen, len);
    else {
        net_stat.ip_dropped++;
        if (!is_broadcast(dst))
            icmp_error(3, 2, ip, len);                  /* protocol unreachable */
    }
}

void net_loop_drain(void)
{
    static uint8_t pkt[IP_MTU];
    while (loop_count) {
        uint32_t len = loop_len[loop_head];
        memcpy(pkt, loop_pkt[loop_head], len);          /* (what it answers may take its slot) */
        loop_head = (loop_head + 1) % LOOP_SLOTS;
        loop_count--;
        ip_input(pkt, len, 0);
    }
}

void net_receive(void)
{
    uint32_t len;
    const uint8_t *f;
    while ((f = vnet_rx_peek(&net_nic, &len)) != NULL) {
        uint16_t type = get16(f + 12);
        if (memcmp(f, net_nic.mac, 6) == 0 || memcmp(f, broadcast_mac, 6) == 0) {
            if (type == ETH_ARP)
                arp_input(f + ETH_HLEN, len - ETH_HLEN);
            else if (type == ETH_IP)
                ip_input(f + ETH_HLEN, len - ETH_HLEN, 1);
        }
        vnet_rx_done(&net_nic);
    }
    net_loop_drain();
}
