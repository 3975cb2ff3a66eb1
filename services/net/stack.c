/*
 * The packet layers of the network stack: Ethernet II, ARP (RFC 826),
 * IPv4 (RFC 791; no options sent, none honoured; datagrams past the MTU
 * sent in fragments and received ones reassembled), ICMP (RFC 792: echo
 * answered, port and protocol unreachable and reassembly time exceeded
 * sent), UDP (RFC 768) and TCP's answer to a closed port (tcp.c), over
 * the NIC and the loopback interface.
 *
 * Received frames are taken from the device's ring one by one and handled
 * where the device wrote them; a datagram for a socket is copied into the
 * socket's queue (net.c). Packets for this host's own addresses go through
 * a small loopback queue instead of the wire (whole: the loopback interface
 * has no MTU short of IP_MAX, like Linux's 64 KiB), drained after the
 * request that sent them, so that nothing here calls itself.
 *
 * Reassembly (RFC 791, RFC 815's holes kept as a bitmap of 8-byte blocks)
 * follows Linux: a fragment that overlaps one received before throws the
 * whole datagram away (RFC 5722's rule, which Linux applies to IPv4 too),
 * an exact duplicate is ignored, and a datagram not complete 30 seconds
 * after its first fragment came is dropped, with an ICMP time exceeded
 * (type 11, code 1) to its sender if its first fragment was in. At most
 * FRAG_SLOTS datagrams are reassembled at once, FRAG_PER_SOURCE of them
 * from one sender: past that the oldest (of that sender) gives way.
 *
 * Neighbours go through Linux's NUD states with its default times: three
 * broadcast requests a second apart to resolve one (then it is given up
 * and the packet held for it dropped), confirmed by a reply for 15 to 45 s,
 * then stale: still used, but the first use starts a 5 s grace after which
 * three unicast requests confirm it or give it up; one stale and unused
 * for 60 s goes. An ARP request from a neighbour makes it known but stale,
 * as on Linux. The service's one timer serves these and reassembly.
 */
#include "net.h"
#include "pstring.h"
#include "svc_proc.h"

#define ETH_HLEN        14u
#define ETH_IP          0x0800u
#define ETH_ARP         0x0806u
#define ARP_LEN         28u
#define PROTO_ICMP      1u
#define PROTO_UDP       17u
#define NEIGHBOURS      16u
#define ARP_RETRANS_NS  1000000000ull   /* between requests (Linux's retrans_time_ms) */
#define ARP_TRIES       3u              /* requests before giving up (mcast_solicit, ucast_solicit) */
#define ARP_REACHABLE_NS 30000000000ull /* confirmed this long, times 0.5 to 1.5 (base_reachable_time_ms) */
#define ARP_DELAY_NS    5000000000ull   /* a stale one used: the grace before probing (delay_first_probe_time) */
#define ARP_GC_NS       60000000000ull  /* a stale one unused this long goes (gc_stale_time) */
#define LOOP_SLOTS      8u
#define LOOP_SPARES     2u              /* IP_MAX buffers kept for big packets to this host */
#define FRAG_SLOTS      8u
#define FRAG_PER_SOURCE 4u
#define FRAG_TIME_NS    30000000000ull                  /* Linux's net.ipv4.ipfrag_time */
#define FRAG_BLOCKS     ((IP_MAX - IP_HLEN + 7) / 8)    /* 8-byte blocks of a payload */
#define FRAG_PAYLOAD    ((IP_MTU - IP_HLEN) & ~7u)      /* the payload of each fragment but the last */

/* A neighbour's states, as Linux's NUD ones: being resolved (broadcast
 * requests), known and confirmed lately, known but not confirmed lately
 * (used as it is), used while stale (a few seconds' grace for a
 * confirmation), being confirmed (unicast requests). */
enum { N_INCOMPLETE, N_REACHABLE, N_STALE, N_DELAY, N_PROBE };

struct neighbour {
    uint32_t addr;                      /* 0: the entry is free */
    uint8_t mac[6];
    uint8_t state, probes;              /* its state; requests sent in it */
    uint64_t when;                      /* INCOMPLETE, PROBE: the next request; REACHABLE, DELAY: the
                                         * state's end; STALE: since when */
    uint32_t used;                      /* when last used, for replacing the oldest */
    uint32_t held_len;                  /* a packet waiting for the answer (0: none), */
    uint8_t *held;                      /* ... whole (fragmented when sent), allocated */
};

/* A datagram being reassembled: its payload in `buf` after a 20-byte
 * header made from its first fragment's. */
struct reasm {
    uint32_t src, dst;                  /* src 0: the slot is free */
    uint16_t id;
    uint8_t proto, have_last;
    uint32_t len;                       /* the payload's end: the last fragment's, or the furthest yet */
    uint32_t got;                       /* payload bytes received */
    uint32_t head_len;                  /* the first fragment's header and 8 bytes, for ICMP (0: not in yet) */
    uint8_t head[60 + 8];
    uint64_t born;                      /* when its first fragment came (ns) */
    uint8_t *buf;                       /* IP_MAX bytes (svc_alloc) */
    uint64_t covered[(FRAG_BLOCKS + 63) / 64];  /* blocks received */
    uint64_t starts[(FRAG_BLOCKS + 63) / 64];   /* blocks where a fragment received starts */
};

static struct neighbour neighbours[NEIGHBOURS];
static uint32_t clock_;                 /* counts uses, for the oldest entry */
static uint16_t ip_id;
static uint8_t *out;                    /* the datagram being sent, whole (IP_MAX bytes; allocated at the start) */
static uint8_t loop_pkt[LOOP_SLOTS][IP_MTU];    /* packets to this host: here up to the MTU, */
static uint8_t *loop_big[LOOP_SLOTS];           /* ... past it in memory of their own */
static uint32_t loop_len[LOOP_SLOTS], loop_head, loop_count;
static struct net_bytes loop_ref[LOOP_SLOTS];    /* ... the data one refers to (net_ip_send_ref; 0 bytes: none) */
static const struct net_bytes no_bytes;
const struct net_bytes *net_loop_data;
static uint8_t *loop_spare[LOOP_SPARES];        /* ... buffers of IP_MAX bytes they gave back */
static uint32_t loop_spares;
static struct reasm reasm[FRAG_SLOTS];

static const uint8_t broadcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }

/* The partial sum of the pseudo-header (RFC 768) for a UDP datagram. */
uint32_t net_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint32_t len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

static int is_loopback(uint32_t a) { return (a >> 24) == (LOOPBACK_NET >> 24); }
uint32_t net_source_for(uint32_t dst) { return is_loopback(dst) ? (LOOPBACK_NET | 1) : net_addr; }
static uint32_t netmask(void) { return net_prefix ? 0xffffffffu << (32 - net_prefix) : 0; }
static int is_local(uint32_t a) { return is_loopback(a) || (net_addr && a == net_addr); }
int net_is_local(uint32_t a) { return is_local(a); }

/* The checksum field of a TCP or UDP packet to this host: the folded sum
 * of its pseudo-header, what Linux's loopback leaves there (its lo
 * checksums nothing: the packet never leaves memory, and what reads it is
 * this stack, which checks no checksum of a packet that did not come from
 * the wire). */
uint16_t net_local_check(uint32_t pseudo)
{
    pseudo = (pseudo & 0xffff) + (pseudo >> 16);
    return (uint16_t)((pseudo & 0xffff) + (pseudo >> 16));
}
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

/* An ARP request for tpa (to eth_dst: broadcast, or a neighbour's MAC to
 * confirm it) or a reply to tha. */
static void arp_send(uint16_t op, const uint8_t *eth_dst, const uint8_t *tha, uint32_t tpa)
{
    uint8_t *f = frame_start(eth_dst, ETH_ARP);
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
    memcpy(a + 18, tha ? tha : (const uint8_t[6]){ 0 }, 6);
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

static void held_drop(struct neighbour *n)
{
    if (n->held_len) {
        net_stat.tx_dropped++;
        net_free(n->held, n->held_len);
    }
    n->held = NULL;
    n->held_len = 0;
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
    held_drop(oldest);
    memset(oldest, 0, sizeof *oldest);
    oldest->addr = addr;
    return oldest;
}

void net_forget_neighbours(void)
{
    for (unsigned i = 0; i < NEIGHBOURS; i++) {
        held_drop(&neighbours[i]);
        neighbours[i].addr = 0;
    }
}

/* Put the IPv4 packet pkt (len bytes, its header IP_HLEN bytes) on the
 * wire to mac: as it is, or in fragments of FRAG_PAYLOAD bytes if it
 * is bigger than the MTU (each with the header, its length, offset and
 * more-fragments flag, and checksum of its own). All of them or none:
 * E_AGAIN if the transmit ring has not room for every one. */
static int wire_send(const uint8_t *mac, const uint8_t *pkt, uint32_t len)
{
    uint32_t payload = len - IP_HLEN;
    uint32_t frags = len <= IP_MTU ? 1 : (payload + FRAG_PAYLOAD - 1) / FRAG_PAYLOAD;
    if (!net_nic_ready() || vnet_tx_room(&net_nic) < frags)
        return SVC_E_AGAIN;
    uint32_t off = 0;
    do {
        uint32_t n = frags == 1 || payload - off < FRAG_PAYLOAD ? payload - off : FRAG_PAYLOAD;
        uint8_t *f = frame_start(mac, ETH_IP);
        uint8_t *ip = f + ETH_HLEN;
        if (ip != pkt) {                                /* (else built there: net_ip_payload_to) */
            memcpy(ip, pkt, IP_HLEN);
            memcpy(ip + IP_HLEN, pkt + IP_HLEN + off, n);
        }
        if (frags > 1) {
            put16(ip + 2, IP_HLEN + n);
            put16(ip + 6, (off + n < payload ? 0x2000u : 0) | off / 8);
            put16(ip + 10, 0);
            put16(ip + 10, inet_checksum(ip, IP_HLEN, 0));
            net_stat.frags_out++;
            MIB(IP_FRAG_CREATES);
        }
        uint32_t flen = ETH_HLEN + IP_HLEN + n;
        if (flen < 60) {
            memset(f + flen, 0, 60 - flen);
            flen = 60;
        }
        vnet_tx_commit(&net_nic, flen);
        off += n;
    } while (off < payload);
    if (frags > 1)
        MIB(IP_FRAG_OKS);
    return 0;
}

/* How long a confirmation holds: ARP_REACHABLE_NS times 0.5 to 1.5, drawn
 * for each (so that neighbours do not all go stale at once). */
static uint64_t reachable_ns(void)
{
    static uint64_t x;
    x = x * 6364136223846793005ull + (svc_clock_ns() | 1);
    return ARP_REACHABLE_NS / 2 + (x >> 33) % ARP_REACHABLE_NS;
}

static void set_state(struct neighbour *n, uint8_t state, uint64_t when)
{
    n->state = state;
    n->when = when;
    n->probes = 0;
    net_timers_update();
}

/* What an ARP packet from addr (at mac) says: a reply to this host
 * confirms it; a request or an unasked-for change leaves it known but
 * stale (Linux's neigh_update). A packet held for it goes. */
static void arp_learn(uint32_t addr, const uint8_t *mac, int create, int confirms)
{
    struct neighbour *n = create ? neighbour_make(addr) : neighbour_find(addr);
    if (!n)
        return;
    uint64_t now = svc_clock_ns();
    int changed = n->state == N_INCOMPLETE || memcmp(n->mac, mac, 6) != 0;
    memcpy(n->mac, mac, 6);
    if (confirms)
        set_state(n, N_REACHABLE, now + reachable_ns());
    else if (changed)
        set_state(n, N_STALE, now);
    n->used = ++clock_;
    if (n->held_len) {
        if (wire_send(n->mac, n->held, n->held_len))
            net_stat.tx_dropped++;
        net_free(n->held, n->held_len);
        n->held = NULL;
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
    arp_learn(spa, a + 8, for_us, for_us && op == 2);   /* RFC 826: merge, and add if it is for us */
    if (for_us && op == 1)
        arp_send(2, a + 8, a + 8, spa);
}

/* The neighbours' timers: requests sent again, or given up (the held
 * packet dropped and counted, the entry gone); confirmations that
 * lapse; stale ones used that are probed; stale ones unused that go. */
static void neighbour_timers(uint64_t now)
{
    for (unsigned i = 0; i < NEIGHBOURS; i++) {
        struct neighbour *n = &neighbours[i];
        if (!n->addr)
            continue;
        if (n->state == N_STALE) {
            if (now - n->when >= ARP_GC_NS)
                n->addr = 0;
            continue;
        }
        if (now < n->when)
            continue;
        if (n->state == N_REACHABLE) {
            n->state = N_STALE;
            n->when = now;
        } else if (n->state == N_DELAY || n->probes < ARP_TRIES) {
            if (n->state == N_DELAY) {
                n->state = N_PROBE;
                n->probes = 0;
            }
            n->probes++;
            n->when = now + ARP_RETRANS_NS;
            arp_send(1, n->state == N_PROBE ? n->mac : broadcast_mac, NULL, n->addr);
        } else {
            held_drop(n);                               /* no answer: unreachable */
            n->addr = 0;
        }
    }
}

/* The first deadline of the neighbours' timers, or 0. */
static uint64_t neighbour_deadline(void)
{
    uint64_t first = 0;
    for (unsigned i = 0; i < NEIGHBOURS; i++) {
        const struct neighbour *n = &neighbours[i];
        if (!n->addr)
            continue;
        uint64_t at = n->state == N_STALE ? n->when + ARP_GC_NS : n->when;
        if (!first || at < first)
            first = at;
    }
    return first;
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

/* A buffer of IP_MAX bytes for a big packet to this host: one given back
 * before, or a new one. */
static uint8_t *loop_buf(void)
{
    return loop_spares ? loop_spare[--loop_spares] : net_alloc(IP_MAX);
}

static void loop_buf_put(uint8_t *p)
{
    if (loop_spares < LOOP_SPARES)
        loop_spare[loop_spares++] = p;
    else
        net_free(p, IP_MAX);
}

static uint32_t bytes_len(const struct net_bytes *d)
{
    return d ? d->n[0] + d->n[1] : 0;
}

/* Queue a packet for this host. One up to the MTU is copied into its slot;
 * a bigger one built in `out` (net_ip_send's) is queued as it is, a fresh
 * buffer taking out's place, so a 64 KiB segment is not copied again (nor
 * memory mapped and faulted in for it: the buffers are used again). One
 * that refers to its data (`ref`: a TCP segment's, in its send ring) has
 * only its headers in the slot. */
static int loop_send(uint8_t *pkt, uint32_t len, const struct net_bytes *ref)
{
    if (loop_count == LOOP_SLOTS) {
        net_stat.tx_dropped++;
        net_stat.lo_dropped++;
        return SVC_E_AGAIN;
    }
    unsigned slot = (loop_head + loop_count) % LOOP_SLOTS;
    uint8_t *to = loop_pkt[slot];
    if (len > IP_MTU) {
        if (!(to = loop_buf())) {
            net_stat.tx_dropped++;
            net_stat.lo_dropped++;
            return SVC_E_NOMEM;
        }
        if (pkt == out) {
            out = to;
            to = pkt;
        }
        loop_big[slot] = to;
    }
    net_stat.lo_packets++;
    net_stat.lo_bytes += len + bytes_len(ref);
    if (to != pkt)
        memcpy(to, pkt, len);
    loop_len[slot] = len;
    loop_ref[slot] = ref ? *ref : no_bytes;
    loop_count++;
    return 0;
}

uint8_t *net_ip_payload(void)
{
    return out + IP_HLEN;
}

/* The payload of the NIC's next transmit buffer, when net_ip_payload_to
 * gave it (NULL otherwise, or once net_ip_send has taken it). */
static uint8_t *in_place;

uint8_t *net_ip_payload_to(uint32_t dst, uint32_t len)
{
    in_place = NULL;
    if (is_local(dst) || len > IP_MTU - IP_HLEN || !net_nic_ready() || !vnet_tx_room(&net_nic))
        return net_ip_payload();
    uint32_t hop = next_hop(dst);
    struct neighbour *n = hop ? neighbour_find(hop) : NULL;
    if (!n || n->state == N_INCOMPLETE || hop == 0xffffffffu || is_broadcast(hop))
        return net_ip_payload();
    in_place = vnet_tx_buf(&net_nic) + ETH_HLEN + IP_HLEN;
    return in_place;
}

static int ip_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len, const struct net_bytes *ref);

int net_ip_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len)
{
    return ip_send(dst, proto, payload, len, NULL);
}

int net_ip_send_ref(uint32_t dst, uint8_t proto, const uint8_t *hdr, uint32_t hlen, const struct net_bytes *data)
{
    if (!is_local(dst))
        return SVC_E_INVAL;
    return ip_send(dst, proto, hdr, hlen, data);
}

/* A copy of the data each queued packet that refers into [buf, buf + size)
 * refers to, after its headers in its slot (or in a buffer of its own,
 * past the MTU; without one, the packet is lost, as a full queue loses
 * one: TCP sends it again). */
void net_loop_forget(const uint8_t *buf, uint32_t size)
{
    for (unsigned k = 0; k < loop_count; k++) {
        unsigned slot = (loop_head + k) % LOOP_SLOTS;
        struct net_bytes *d = &loop_ref[slot];
        int inside = 0;
        for (unsigned i = 0; i < 2; i++)
            inside |= d->n[i] && d->p[i] < buf + size && d->p[i] + d->n[i] > buf;
        if (!inside)
            continue;
        uint32_t len = loop_len[slot], total = len + bytes_len(d);
        uint8_t *to = loop_pkt[slot];
        if (total > IP_MTU && (to = loop_buf()) != NULL) {
            memcpy(to, loop_pkt[slot], len);
            loop_big[slot] = to;
        }
        if (to) {
            memcpy(to + len, d->p[0], d->n[0]);
            memcpy(to + len + d->n[0], d->p[1], d->n[1]);
            loop_len[slot] = total;
        } else {
            loop_len[slot] = 0;                         /* (delivered as nothing: dropped) */
            net_stat.lo_dropped++;
        }
        *d = no_bytes;
    }
}

static int ip_route_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len,
                         const struct net_bytes *ref, uint32_t hop, int local);

/* net_ip_send, the payload in `payload` and then `ref` (to this host only). */
static int ip_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len, const struct net_bytes *ref)
{
    uint32_t total = len + bytes_len(ref);
    if (total > IP_MAX - IP_HLEN)
        return SVC_E_RANGE;
    int local = is_local(dst);
    uint32_t hop = local || dst == 0xffffffffu ? dst : next_hop(dst);   /* (broadcast: even with no address) */
    if (!hop) {
        MIB(IP_OUT_NO_ROUTES);                          /* (no route: not a request sent, as Linux) */
        return SVC_E_NOENT;
    }
    MIB(IP_OUT_REQUESTS);
    int err = ip_route_send(dst, proto, payload, len, ref, hop, local);
    if (err)
        MIB(IP_OUT_DISCARDS);
    return err;
}

/* ip_send's packet to dst through hop, the next hop it found (local: dst is this host). */
static int ip_route_send(uint32_t dst, uint8_t proto, const uint8_t *payload, uint32_t len,
                         const struct net_bytes *ref, uint32_t hop, int local)
{
    uint32_t total = len + bytes_len(ref);
    uint32_t src = net_source_for(dst);
    uint8_t *ip = payload == in_place ? in_place - IP_HLEN : out;   /* (in_place: wire_send copies nothing) */
    in_place = NULL;
    if (payload != ip + IP_HLEN)
        memmove(ip + IP_HLEN, payload, len);
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, IP_HLEN + total);
    put16(ip + 4, ip_id++);
    /* Don't fragment on what goes whole (as Linux's path MTU discovery
     * does); one sent in fragments may be fragmented further on the way. */
    put16(ip + 6, local || IP_HLEN + total <= IP_MTU ? 0x4000 : 0);
    ip[8] = 64;
    ip[9] = proto;
    put16(ip + 10, 0);
    put32(ip + 12, src);
    put32(ip + 16, dst);
    put16(ip + 10, inet_checksum(ip, IP_HLEN, 0));
    len += IP_HLEN;
    if (local)
        return loop_send(ip, len, ref);
    if (!net_nic_ready())
        return SVC_E_NOENT;
    if (hop == 0xffffffffu || is_broadcast(hop))
        return wire_send(broadcast_mac, ip, len);
    struct neighbour *n = neighbour_make(hop);
    n->used = ++clock_;
    if (n->state != N_INCOMPLETE) {
        if (n->state == N_STALE)                        /* used: confirmed soon, or probed */
            set_state(n, N_DELAY, svc_clock_ns() + ARP_DELAY_NS);
        return wire_send(n->mac, ip, len);
    }
    held_drop(n);                                       /* the older one waits no more */
    if (!(n->held = net_alloc(len)))
        return SVC_E_NOMEM;
    memcpy(n->held, ip, len);
    n->held_len = len;
    if (!n->probes) {                                   /* the first request; the timer sends the others */
        n->probes = 1;
        n->when = svc_clock_ns() + ARP_RETRANS_NS;
        arp_send(1, broadcast_mac, NULL, hop);
        net_timers_update();
    }
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
    put16(msg + 2, inet_checksum(msg, 8 + quote, 0));
    int err = net_ip_send(get32(ip + 12), PROTO_ICMP, msg, 8 + quote);
    net_icmp_sent(type, err);
    if (err)
        net_stat.tx_dropped++;
}

void net_icmp_sent(uint8_t type, int err)
{
    if (err) {
        MIB(ICMP_OUT_ERRORS);
        return;
    }
    MIB(ICMP_OUT_MSGS);
    net_mib[MIB_ICMP_OUT_TYPE + type]++;
}

static void icmp_input(const uint8_t *ip, uint32_t hlen, uint32_t len)
{
    const uint8_t *m = ip + hlen;
    uint32_t mlen = len - hlen;
    MIB(ICMP_IN_MSGS);
    if (mlen < 8 || inet_checksum(m, mlen, 0) != 0) {
        if (mlen >= 8)
            MIB(ICMP_IN_CSUM_ERRORS);
        MIB(ICMP_IN_ERRORS);
        net_stat.ip_dropped++;
        return;
    }
    net_mib[MIB_ICMP_IN_TYPE + m[0]]++;
    uint32_t src = get32(ip + 12);
    if (m[0] == 8 && m[1] == 0) {                       /* echo request: the same back as a reply */
        if (is_broadcast(get32(ip + 16)))
            return;                                     /* (no answer to a broadcast ping) */
        uint8_t *reply = net_ip_payload();             /* (built where it is sent from) */
        memcpy(reply, m, mlen);
        reply[0] = 0;
        put16(reply + 2, 0);
        put16(reply + 2, inet_checksum(reply, mlen, 0));
        int err = net_ip_send(src, PROTO_ICMP, reply, mlen);
        net_icmp_sent(0, err);
        if (err == 0)
            net_stat.echo_answered++;
        else
            net_stat.tx_dropped++;
        return;
    }
    if (m[0] == 0 && m[1] == 0) {                       /* echo reply: to the socket of its identifier */
        struct sock *s = net_sock_find(SOCK_ICMP, get16(m + 4));
        if (s)
            net_sock_deliver(s, src, ip[8], m, mlen);  /* (its "port": the TTL it came with) */
        return;
    }
}

static void udp_input(const uint8_t *ip, uint32_t hlen, uint32_t len, int from_wire)
{
    const uint8_t *u = ip + hlen;
    uint32_t ulen = len - hlen;
    if (ulen < 8 || get16(u + 4) < 8 || get16(u + 4) > ulen) {
        MIB(UDP_IN_ERRORS);
        net_stat.ip_dropped++;
        return;
    }
    ulen = get16(u + 4);
    uint32_t src = get32(ip + 12), dst = get32(ip + 16);
    if (from_wire && get16(u + 6) && inet_checksum(u, ulen, net_pseudo_sum(src, dst, PROTO_UDP, ulen)) != 0) {
        MIB(UDP_IN_CSUM_ERRORS);
        MIB(UDP_IN_ERRORS);
        net_stat.ip_dropped++;
        return;
    }
    if (get16(u + 2) == 68 && net_dhcp_input(u + 8, ulen - 8)) {
        MIB(UDP_IN_DATAGRAMS);                          /* (the DHCP client's: a socket of its own on Linux) */
        return;
    }
    struct sock *s = net_udp_find(get16(u + 2), src, get16(u));
    if (!s) {
        net_mib[is_broadcast(dst) ? MIB_UDP_IGNORED_MULTI : MIB_UDP_NO_PORTS]++;
        net_stat.udp_dropped++;
        if (!is_broadcast(dst))
            icmp_error(3, 3, ip, len);                  /* port unreachable */
        return;
    }
    net_sock_deliver(s, src, get16(u), u + 8, ulen - 8);
}

/* ---------------------------------------------------------------- reassembly */

static uint8_t *spare;                  /* a reassembly buffer kept for the next datagram */
static int timer_ready;
static uint64_t timer_asked;            /* the deadline the service's timer has (0: none, or it came) */

static int bit(const uint64_t *m, uint32_t b) { return (int)(m[b / 64] >> (b % 64)) & 1; }
static void set_bit(uint64_t *m, uint32_t b) { m[b / 64] |= 1ull << (b % 64); }

static void reasm_free(struct reasm *r)
{
    if (r->buf && !spare)
        spare = r->buf;
    else if (r->buf)
        net_free(r->buf, IP_MAX);
    memset(r, 0, sizeof *r);
}

/* The service's one timer at the first deadline of a datagram in
 * reassembly or a neighbour (or none). */
void net_timers_update(void)
{
    uint64_t first = neighbour_deadline(), dhcp = net_dhcp_deadline(), tcp = net_tcp_deadline();
    if (dhcp && (!first || dhcp < first))
        first = dhcp;
    if (tcp && (!first || tcp < first))
        first = tcp;
    for (unsigned i = 0; i < FRAG_SLOTS; i++)
        if (reasm[i].src && (!first || reasm[i].born + FRAG_TIME_NS < first))
            first = reasm[i].born + FRAG_TIME_NS;
    if (timer_ready && first != timer_asked) {          /* (most requests leave it as it was) */
        timer_asked = first;
        svc_timer_set(first);
    }
}

/* Give up on a datagram: counted, and if its time ran out with its first
 * fragment in, an ICMP time exceeded (fragment reassembly) to its sender,
 * quoting that fragment, unless it is itself an ICMP error (RFC 1122). */
static void reasm_fail(struct reasm *r, int expired)
{
    net_stat.reasm_failed++;
    MIB(IP_REASM_FAILS);
    if (expired)
        MIB(IP_REASM_TIMEOUT);
    if (expired && r->head_len) {
        uint32_t hlen = (uint32_t)(r->head[0] & 15) * 4;
        uint8_t type = r->head_len > hlen ? r->head[hlen] : 0;
        int icmp_err = r->proto == PROTO_ICMP && (type == 3 || type == 4 || type == 5 || type == 11 || type == 12);
        if (!icmp_err && !is_broadcast(r->dst))
            icmp_error(11, 1, r->head, r->head_len);
    }
    reasm_free(r);
}

static void timers(void)
{
    uint64_t now = svc_clock_ns();
    timer_asked = 0;
    for (unsigned i = 0; i < FRAG_SLOTS; i++)
        if (reasm[i].src && now - reasm[i].born >= FRAG_TIME_NS)
            reasm_fail(&reasm[i], 1);
    neighbour_timers(now);
    net_dhcp_timer(now);
    net_tcp_timers(now);
    net_timers_update();
    net_loop_drain();
}

int net_stack_start(void)
{
    timer_ready = svc_timer_attach(timers) == 0;
    out = svc_alloc(IP_MAX);
    return out ? 0 : SVC_E_NOMEM;
}

int net_stack_ready(void)
{
    return out != NULL;
}

/* The datagram of this fragment: its own, or a new one (in a free slot,
 * else in place of the oldest of its sender's if it has FRAG_PER_SOURCE,
 * else of the oldest of all); NULL without memory for one. */
static struct reasm *reasm_find(const uint8_t *ip, uint64_t now)
{
    uint32_t src = get32(ip + 12), dst = get32(ip + 16);
    uint16_t id = get16(ip + 4);
    struct reasm *slot = NULL, *oldest = NULL, *oldest_mine = NULL;
    unsigned mine = 0;
    for (unsigned i = 0; i < FRAG_SLOTS; i++) {
        struct reasm *r = &reasm[i];
        if (r->src && now - r->born >= FRAG_TIME_NS)
            reasm_fail(r, 1);
        if (!r->src) {
            slot = slot ? slot : r;
            continue;
        }
        if (r->src == src && r->dst == dst && r->id == id && r->proto == ip[9])
            return r;
        if (!oldest || r->born < oldest->born)
            oldest = r;
        if (r->src == src) {
            mine++;
            if (!oldest_mine || r->born < oldest_mine->born)
                oldest_mine = r;
        }
    }
    if (mine >= FRAG_PER_SOURCE || !slot) {
        slot = mine >= FRAG_PER_SOURCE ? oldest_mine : oldest;
        reasm_fail(slot, 0);
    }
    if (spare) {
        slot->buf = spare;
        spare = NULL;
    } else if (!(slot->buf = net_alloc(IP_MAX))) {
        return NULL;
    }
    slot->src = src;
    slot->dst = dst;
    slot->id = id;
    slot->proto = ip[9];
    slot->born = now;
    net_timers_update();
    return slot;
}

/* A fragment for this host (hlen + *len bytes): kept for its datagram.
 * The datagram, complete, when this fragment completes it (its header
 * and payload in the slot's buffer, its length in *len; the caller frees
 * the slot), else NULL. */
static struct reasm *reassemble(const uint8_t *ip, uint32_t hlen, uint32_t *len)
{
    net_stat.frags_in++;
    MIB(IP_REASM_REQDS);
    uint32_t flags = get16(ip + 6), off = (flags & 0x1fff) * 8, end = off + (*len - hlen);
    struct reasm *r = reasm_find(ip, svc_clock_ns());
    if (!r) {
        net_stat.reasm_failed++;
        MIB(IP_REASM_FAILS);
        return NULL;
    }
    if (!(flags & 0x2000)) {                            /* the last: the length is known */
        if (end < r->len || (r->have_last && end != r->len))
            goto drop;                                  /* (data past it came, or another last) */
        r->have_last = 1;
        r->len = end;
    } else {
        end &= ~7u;                                     /* (all but the last hold 8-byte blocks) */
        if (end > r->len) {
            if (r->have_last)
                goto drop;
            r->len = end;
        }
    }
    if (end == off)
        goto drop;
    if (end > IP_MAX - IP_HLEN) {                       /* no datagram is so long */
        reasm_fail(r, 0);
        return NULL;
    }
    uint32_t b0 = off / 8, b1 = (end + 7) / 8, b;
    int any = 0, all = 1, starts_inside = 0;
    for (b = b0; b < b1; b++) {
        any |= bit(r->covered, b);
        all &= bit(r->covered, b);
        starts_inside |= b > b0 && bit(r->starts, b);
    }
    if (any) {
        /* The same fragment again (the one received from b0 ends at b1)
         * is ignored; any other overlap ends the datagram. */
        if (all && bit(r->starts, b0) && !starts_inside &&
            (b1 >= FRAG_BLOCKS || !bit(r->covered, b1) || bit(r->starts, b1)))
            goto drop;
        reasm_fail(r, 0);
        return NULL;
    }
    memcpy(r->buf + IP_HLEN + off, ip + hlen, end - off);
    for (b = b0; b < b1; b++)
        set_bit(r->covered, b);
    set_bit(r->starts, b0);
    r->got += end - off;
    if (off == 0) {
        r->head_len = hlen + (end < 8 ? end : 8);
        memcpy(r->head, ip, r->head_len);
    }
    if (!r->have_last || !r->head_len || r->got != r->len)
        return NULL;
    uint8_t *d = r->buf;                                /* whole: its header, from the first fragment's */
    memcpy(d, r->head, IP_HLEN);
    d[0] = 0x45;
    put16(d + 2, IP_HLEN + r->len);
    put16(d + 6, 0);
    put16(d + 10, 0);
    put16(d + 10, inet_checksum(d, IP_HLEN, 0));
    *len = IP_HLEN + r->len;
    net_stat.reassembled++;
    MIB(IP_REASM_OKS);
    return r;
drop:
    net_stat.ip_dropped++;
    return NULL;
}

static void ip_input(const uint8_t *ip, uint32_t len, int from_wire)
{
    net_stat.ip_in++;
    MIB(IP_IN_RECEIVES);
    uint32_t hlen = (uint32_t)(ip[0] & 15) * 4;
    if (len < IP_HLEN || (ip[0] >> 4) != 4 || hlen < IP_HLEN || get16(ip + 2) < hlen || get16(ip + 2) > len ||
        inet_checksum(ip, hlen, 0) != 0) {
        MIB(IP_IN_HDR_ERRORS);
        net_stat.ip_dropped++;
        return;
    }
    len = get16(ip + 2);                                /* (what follows in the frame is padding) */
    uint32_t src = get32(ip + 12), dst = get32(ip + 16);
    int ours = (net_addr && dst == net_addr) || is_broadcast(dst) || (!from_wire && is_loopback(dst));
    int martian = from_wire && (is_loopback(src) || is_loopback(dst) || (src >> 28) == 14 || src == 0xffffffffu);
    if (!ours || martian) {
        MIB(IP_IN_ADDR_ERRORS);
        net_stat.ip_dropped++;                          /* not for us, or impossible */
        return;
    }
    struct reasm *whole = NULL;
    if (get16(ip + 6) & 0x3fff) {                       /* a fragment (more follow, or an offset) */
        if (!(whole = reassemble(ip, hlen, &len)))
            return;
        ip = whole->buf;
        hlen = IP_HLEN;
    }
    int known = ip[9] == PROTO_ICMP || ip[9] == PROTO_UDP || ip[9] == 6;
    net_mib[known ? MIB_IP_IN_DELIVERS : MIB_IP_IN_UNKNOWN_PROTOS]++;
    if (ip[9] == PROTO_ICMP)
        icmp_input(ip, hlen, len);
    else if (ip[9] == PROTO_UDP)
        udp_input(ip, hlen, len, from_wire);
    else if (ip[9] == 6)
        net_tcp_input(ip, hlen, len, is_broadcast(dst), from_wire);
    else {
        net_stat.ip_dropped++;
        if (!is_broadcast(dst))
            icmp_error(3, 2, ip, len);                  /* protocol unreachable */
    }
    if (whole) {
        reasm_free(whole);
        net_timers_update();
    }
}

void net_loop_drain(void)
{
    static uint8_t pkt[IP_MTU];
    while (loop_count) {
        uint32_t len = loop_len[loop_head];
        uint8_t *p = loop_big[loop_head];               /* (what it answers may take its slot) */
        if (p)
            loop_big[loop_head] = NULL;
        else
            memcpy(pkt, loop_pkt[loop_head], len);
        struct net_bytes ref = loop_ref[loop_head];
        loop_head = (loop_head + 1) % LOOP_SLOTS;
        loop_count--;
        const struct net_bytes *outer = net_loop_data;
        net_loop_data = bytes_len(&ref) ? &ref : NULL;
        ip_input(p ? p : pkt, len + bytes_len(&ref), 0);
        net_loop_data = outer;
        if (p)
            loop_buf_put(p);
    }
}

void net_receive(void)
{
    uint32_t len;
    const uint8_t *f;
    net_tcp_batch(1);
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
    net_tcp_batch(0);
    net_loop_drain();
}
