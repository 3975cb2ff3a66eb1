/*
 * TCP (RFC 9293) in the stack service. So far the stack has no TCP
 * sockets, so every port is closed: a segment is checked (header length,
 * checksum over the pseudo-header) and answered as RFC 9293 3.10.7.1 says
 * for a connection that does not exist, as Linux answers a closed port:
 *
 * - a segment with RST is dropped;
 * - one without ACK gets <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
 *   (SYN and FIN each count one in SEG.LEN);
 * - one with ACK gets <SEQ=SEG.ACK><CTL=RST>;
 *
 * never to a broadcast or multicast destination. docs/design/network.md
 * says what comes next.
 */
#include "net.h"
#include "pstring.h"

#define PROTO_TCP       6u
#define TCP_HLEN        20u

#define FIN             0x01u
#define SYN             0x02u
#define RST             0x04u
#define ACK             0x10u

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }

/* Send a segment with no data from local (laddr:lport) to remote. */
static void send_bare(uint32_t laddr, uint32_t raddr, uint16_t lport, uint16_t rport, uint32_t seq, uint32_t ack,
                      uint8_t flags)
{
    uint8_t *t = net_ip_payload();
    put16(t, lport);
    put16(t + 2, rport);
    put32(t + 4, seq);
    put32(t + 8, ack);
    t[12] = (TCP_HLEN / 4) << 4;
    t[13] = flags;
    put16(t + 14, 0);                                   /* window */
    put16(t + 16, 0);
    put16(t + 18, 0);                                   /* urgent pointer */
    put16(t + 16, net_checksum(t, TCP_HLEN, net_pseudo_sum(laddr, raddr, PROTO_TCP, TCP_HLEN)));
    if (net_ip_send(raddr, PROTO_TCP, t, TCP_HLEN))
        net_stat.tx_dropped++;
}

void net_tcp_input(const uint8_t *ip, uint32_t hlen, uint32_t len, int to_broadcast)
{
    const uint8_t *t = ip + hlen;
    uint32_t tlen = len - hlen, src = get32(ip + 12), dst = get32(ip + 16);
    uint32_t off = tlen >= TCP_HLEN ? (uint32_t)(t[12] >> 4) * 4 : 0;
    if (off < TCP_HLEN || off > tlen || net_checksum(t, tlen, net_pseudo_sum(src, dst, PROTO_TCP, tlen)) != 0) {
        net_stat.ip_dropped++;                          /* too short, bad offset or bad checksum */
        return;
    }
    uint8_t flags = t[13];
    if ((flags & RST) || to_broadcast)
        return;
    uint32_t seq = get32(t + 4), seg_len = tlen - off + !!(flags & SYN) + !!(flags & FIN);
    if (flags & ACK)
        send_bare(dst, src, get16(t + 2), get16(t), get32(t + 8), 0, RST);
    else
        send_bare(dst, src, get16(t + 2), get16(t), 0, seq + seg_len, RST | ACK);
}
