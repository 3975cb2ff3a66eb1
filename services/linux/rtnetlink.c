/*
 * NETLINK_ROUTE for Linux programs: the dumps busybox `ip link`, `ip addr`
 * and `ip route` ask for (RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE), made
 * from what the stack says of its interfaces (inet.c's lx_inet_if: lo and
 * eth0). socket.c keeps the AF_NETLINK sockets (their queues and names)
 * and hands each message sent to the kernel here; the answers go back
 * into the sender's queue as datagrams from port id 0, one for the dump's
 * messages and one for NLMSG_DONE, as Linux sends them.
 *
 * Requests that would change the configuration (RTM_NEW*, RTM_DEL*,
 * RTM_SETLINK) are answered with an NLMSG_ERROR of EPERM: it is the
 * system's (netcfg), as for a process without CAP_NET_ADMIN. Other
 * requests are EOPNOTSUPP. Nothing is ever multicast to groups.
 */
#include "lx.h"

#define NLMSG_ERROR     2
#define NLMSG_DONE      3
#define NLM_F_REQUEST   0x1
#define NLM_F_MULTI     0x2
#define NLM_F_ACK       0x4
#define NLM_F_DUMP      0x300
#define NLM_F_CAPPED    0x100
#define RTM_NEWLINK     16
#define RTM_GETLINK     18
#define RTM_SETLINK     19
#define RTM_NEWADDR     20
#define RTM_GETADDR     22
#define RTM_NEWROUTE    24
#define RTM_GETROUTE    26
#define RTM_MAX         127             /* (Linux 6.1's last message type: those past it are EOPNOTSUPP) */
#define IFLA_ADDRESS    1
#define IFLA_BROADCAST  2
#define IFLA_IFNAME     3
#define IFLA_MTU        4
#define IFLA_QDISC      6
#define IFLA_TXQLEN     13
#define IFLA_OPERSTATE  16
#define IFLA_LINKMODE   17
#define IFA_ADDRESS     1
#define IFA_LOCAL       2
#define IFA_LABEL       3
#define IFA_BROADCAST   4
#define IFA_CACHEINFO   6
#define RTA_DST         1
#define RTA_OIF         4
#define RTA_GATEWAY     5
#define RTA_PREFSRC     7
#define RTA_TABLE       15
#define IFF_BROADCAST   0x2
#define IFF_RUNNING     0x40
#define IFF_LOWER_UP    0x10000
#define IFA_F_PERMANENT 0x80
#define RT_TABLE_MAIN   254
#define RT_SCOPE_LINK   253
#define RT_SCOPE_HOST   254
#define RTPROT_KERNEL   2
#define RTPROT_BOOT     3
#define RTN_UNICAST     1
#define AF_INET         2

#define OUT_MAX         2048            /* one dump: two interfaces' links, addresses or routes */

static uint8_t out[OUT_MAX];
static uint32_t out_len;

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* A message's header (struct nlmsghdr), its length filled in by msg_end. */
static uint32_t msg_begin(uint16_t type, uint16_t flags, uint32_t seq, uint32_t portid)
{
    uint32_t at = out_len;
    memset(out + at, 0, 16);
    put16(out + at + 4, type);
    put16(out + at + 6, flags);
    put32(out + at + 8, seq);
    put32(out + at + 12, portid);
    out_len += 16;
    return at;
}

static void msg_end(uint32_t at)
{
    put32(out + at, out_len - at);
}

static void put_bytes(const void *p, uint32_t n)
{
    memcpy(out + out_len, p, n);
    out_len += (n + 3) & ~3u;
}

/* An attribute (struct rtattr: length, type, value, padded to 4 bytes). */
static void attr(uint16_t type, const void *v, uint16_t n)
{
    memset(out + out_len, 0, 4 + ((n + 3u) & ~3u));
    put16(out + out_len, (uint16_t)(4 + n));
    put16(out + out_len + 2, type);
    out_len += 4;
    put_bytes(v, n);
}

static void attr32(uint16_t type, uint32_t v) { attr(type, &v, 4); }
static void attr8(uint16_t type, uint8_t v) { attr(type, &v, 1); }

/* An IPv4 address as netlink carries it: in network order. */
static void attr_in(uint16_t type, uint32_t addr)
{
    uint32_t be = __builtin_bswap32(addr);
    attr(type, &be, 4);
}

static void link_msg(const struct lx_if *f, uint32_t seq, uint32_t portid)
{
    uint32_t at = msg_begin(RTM_NEWLINK, NLM_F_MULTI, seq, portid);
    uint8_t ifi[16] = { 0 };                    /* struct ifinfomsg: family, type, index, flags, change */
    uint32_t flags = f->flags | (f->flags & IFF_RUNNING ? IFF_LOWER_UP : 0);
    put16(ifi + 2, f->hwtype);
    put32(ifi + 4, f->index);
    put32(ifi + 8, flags);
    put_bytes(ifi, 16);
    attr(IFLA_IFNAME, f->name, (uint16_t)(strlen(f->name) + 1));
    attr32(IFLA_TXQLEN, 1000);
    /* Linux's operstate: the loopback's UNKNOWN (0), a NIC UP (6) or DOWN (2) with its link */
    attr8(IFLA_OPERSTATE, f->index == 1 ? 0 : f->flags & IFF_RUNNING ? 6 : 2);
    attr8(IFLA_LINKMODE, 0);
    attr32(IFLA_MTU, f->mtu);
    attr(IFLA_QDISC, "noqueue", 8);            /* (no queueing discipline: frames go to the device) */
    static const uint8_t all_ones[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, zeros[6] = { 0 };
    attr(IFLA_ADDRESS, f->mac, 6);
    attr(IFLA_BROADCAST, f->flags & IFF_BROADCAST ? all_ones : zeros, 6);
    msg_end(at);
}

static void addr_msg(const struct lx_if *f, uint32_t seq, uint32_t portid)
{
    uint32_t prefix = f->mask ? 32 - (uint32_t)__builtin_ctz(f->mask) : 0;
    uint32_t at = msg_begin(RTM_NEWADDR, NLM_F_MULTI, seq, portid);
    uint8_t ifa[8] = { AF_INET, (uint8_t)prefix, IFA_F_PERMANENT, f->index == 1 ? RT_SCOPE_HOST : 0 };
    put32(ifa + 4, f->index);                   /* struct ifaddrmsg: family, prefix, flags, scope, index */
    put_bytes(ifa, 8);
    attr_in(IFA_ADDRESS, f->addr);
    attr_in(IFA_LOCAL, f->addr);
    if (f->flags & IFF_BROADCAST)
        attr_in(IFA_BROADCAST, f->addr | ~f->mask);
    attr(IFA_LABEL, f->name, (uint16_t)(strlen(f->name) + 1));
    uint32_t cache[4] = { 0xffffffffu, 0xffffffffu, 0, 0 };   /* preferred and valid for ever, no timestamps */
    attr(IFA_CACHEINFO, cache, sizeof(cache));
    msg_end(at);
}

/* A route of the main table: the subnet's (dst/prefix on the link) or,
 * with a gateway, the default one through it. */
static void route_msg(const struct lx_if *f, uint32_t gateway, uint32_t seq, uint32_t portid)
{
    uint32_t prefix = gateway ? 0 : 32 - (uint32_t)__builtin_ctz(f->mask);
    uint32_t at = msg_begin(RTM_NEWROUTE, NLM_F_MULTI, seq, portid);
    uint8_t rtm[12] = { AF_INET, (uint8_t)prefix, 0, 0, RT_TABLE_MAIN, gateway ? RTPROT_BOOT : RTPROT_KERNEL,
                        gateway ? 0 : RT_SCOPE_LINK, RTN_UNICAST };
    put_bytes(rtm, 12);                         /* struct rtmsg: family .. type, flags 0 */
    attr32(RTA_TABLE, RT_TABLE_MAIN);
    if (gateway) {
        attr_in(RTA_GATEWAY, gateway);
    } else {
        attr_in(RTA_DST, f->addr & f->mask);
        attr_in(RTA_PREFSRC, f->addr);
    }
    attr32(RTA_OIF, f->index);
    msg_end(at);
}

/* NLMSG_ERROR carrying `err` and the whole request, or (err 0) an
 * acknowledgement carrying its header only (NLM_F_CAPPED), as Linux's
 * netlink_ack without NETLINK_CAP_ACK. Into its own buffer: a request may
 * be longer than a dump. */
static void error_msg(const uint8_t *req, uint32_t req_len, int32_t err, uint32_t portid,
                      void (*reply)(void *to, const uint8_t *msg, uint32_t len), void *to)
{
    uint32_t seq, n = err ? req_len : 16, len = 16 + 4 + ((n + 3) & ~3u);
    uint8_t *m = svc_alloc(len);
    if (!m)
        return;                                 /* (no memory for the answer: lost, as an overrun) */
    memcpy(&seq, req + 8, 4);
    put32(m, len);
    put16(m + 4, NLMSG_ERROR);
    put16(m + 6, err ? 0 : NLM_F_CAPPED);
    put32(m + 8, seq);
    put32(m + 12, portid);
    put32(m + 16, (uint32_t)err);
    memcpy(m + 20, req, n);
    reply(to, m, len);
    svc_free(m, len);
}

void lx_rtnl_request(const uint8_t *msg, uint32_t len, uint32_t portid,
                     void (*reply)(void *to, const uint8_t *msg, uint32_t len), void *to)
{
    while (len >= 16) {
        uint32_t mlen, seq;
        uint16_t type, flags;
        memcpy(&mlen, msg, 4);
        memcpy(&type, msg + 4, 2);
        memcpy(&flags, msg + 6, 2);
        memcpy(&seq, msg + 8, 4);
        if (mlen < 16 || mlen > len)
            return;                             /* (a truncated message: the rest is ignored, as Linux does) */
        out_len = 0;
        int dump = (type == RTM_GETLINK || type == RTM_GETADDR || type == RTM_GETROUTE) && (flags & NLM_F_DUMP);
        if (!(flags & NLM_F_REQUEST) || type < RTM_NEWLINK) {
            if (flags & NLM_F_ACK)              /* (not a request, or a control message: acknowledged if asked) */
                error_msg(msg, mlen, 0, portid, reply, to);
        } else if (dump) {
            for (uint32_t index = 1; index <= 2; index++) {
                struct lx_if f;
                uint32_t gateway = 0;
                if (lx_inet_if(index, &f, &gateway) != 0)
                    continue;
                if (type == RTM_GETLINK)
                    link_msg(&f, seq, portid);
                else if (type == RTM_GETADDR && f.addr)
                    addr_msg(&f, seq, portid);
                else if (type == RTM_GETROUTE && index == 2 && f.addr) {
                    if (gateway)
                        route_msg(&f, gateway, seq, portid);
                    route_msg(&f, 0, seq, portid);
                }
            }
            if (out_len)
                reply(to, out, out_len);
            out_len = 0;
            uint32_t at = msg_begin(NLMSG_DONE, NLM_F_MULTI, seq, portid);
            put32(out + out_len, 0);
            out_len += 4;
            msg_end(at);
        } else {
            int changes = type <= RTM_MAX && (type == RTM_SETLINK || (type & 3) != 2);     /* NEW*, DEL* */
            error_msg(msg, mlen, changes ? -LX_EPERM : -LX_EOPNOTSUPP, portid, reply, to);
        }
        if (out_len)
            reply(to, out, out_len);
        uint32_t step = (mlen + 3) & ~3u;
        if (step >= len)
            break;
        msg += step;
        len -= step;
    }
}
