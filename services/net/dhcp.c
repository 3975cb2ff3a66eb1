/*
 * The stack's DHCP client (RFC 2131, options of RFC 2132): the `dhcp`
 * request broadcasts a DISCOVER, takes the first OFFER, REQUESTs it and,
 * on the server's ACK, gives the interface the address, prefix and
 * gateway leased, then answers the request. The lease is kept as RFC 2131
 * says: renewed with the server at T1 (half the lease, unless the server
 * says otherwise), with any server from T2 (seven eighths), and at its end
 * the address is removed and discovery starts again; a NAK starts it again
 * at once. Messages are sent again after 4, 8, 16 and 32 seconds (each
 * plus or minus up to a second); with no answer by then the request is
 * answered E_TIMEOUT and the client stops.
 *
 * The client asks servers to broadcast their answers (it cannot take
 * unicast before it has an address) and takes only answers with its own
 * transaction id and hardware address.
 */
#include "net.h"
#include "pstring.h"
#include "svc_proc.h"

#define PORT_SERVER     67u
#define PORT_CLIENT     68u
#define BOOTP_LEN       236u
#define MAGIC           0x63825363u
#define TRIES           5u                      /* the first message and four more */
#define SEC             1000000000ull

enum { DISCOVER = 1, OFFER, REQUEST, DECLINE, ACK, NAK, RELEASE };
enum { D_OFF, D_SELECTING, D_REQUESTING, D_BOUND, D_RENEWING, D_REBINDING };

static struct {
    uint8_t state, tries;
    uint32_t xid;
    uint32_t offered, server;                   /* the address offered or leased, and by whom */
    uint32_t prefix, gateway, dns;
    uint32_t lease, t1, t2;                     /* seconds */
    uint64_t bound_at;                          /* when the lease began (ns) */
    uint64_t next;                              /* the next message or state change (ns) */
    svc_token waiter;                           /* the `dhcp` request, answered when bound */
} d;

static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }

static uint32_t random32(void)
{
    static uint64_t x;
    x = x * 6364136223846793005ull + (svc_clock_ns() | 1);
    return (uint32_t)(x >> 32);
}

/* RFC 2131 4.1: 4 s before the second try, doubling, each plus or minus
 * up to a second. */
static uint64_t backoff(unsigned tries)
{
    uint64_t base = (4ull << (tries - 1)) * SEC;
    return base - SEC + random32() % (2 * SEC);
}

static void answer(int64_t status)
{
    if (d.waiter)
        net_dhcp_reply(d.waiter, status, net_addr, net_prefix, net_gateway, d.dns, d.lease);
    d.waiter = 0;
}

/* Send a DISCOVER or REQUEST (broadcast, or to the server while renewing). */
static void send_msg(uint8_t type)
{
    uint8_t *u = net_ip_payload(), *m = u + 8, *o = m + BOOTP_LEN;
    memset(m, 0, BOOTP_LEN);
    m[0] = 1;                                   /* BOOTREQUEST, Ethernet */
    m[1] = 1;
    m[2] = 6;
    put32(m + 4, d.xid);
    int renewing = d.state == D_RENEWING || d.state == D_REBINDING;
    if (!renewing)
        m[10] = 0x80;                           /* answer by broadcast */
    else
        put32(m + 12, net_addr);                /* ciaddr */
    memcpy(m + 28, net_nic.mac, 6);
    put32(o, MAGIC);
    o += 4;
    *o++ = 53;
    *o++ = 1;
    *o++ = type;
    *o++ = 61;                                  /* client identifier: hardware type and address */
    *o++ = 7;
    *o++ = 1;
    memcpy(o, net_nic.mac, 6);
    o += 6;
    if (type == REQUEST && d.state == D_REQUESTING) {
        *o++ = 50;                              /* the address asked for, and from whom */
        *o++ = 4;
        put32(o, d.offered);
        o += 4;
        *o++ = 54;
        *o++ = 4;
        put32(o, d.server);
        o += 4;
    }
    static const uint8_t params[] = { 55, 4, 1, 3, 6, 51 };     /* mask, router, DNS, lease */
    memcpy(o, params, sizeof params);
    o += sizeof params;
    *o++ = 255;
    while ((uint32_t)(o - m) < 300)             /* (BOOTP's minimum message) */
        *o++ = 0;
    uint32_t len = 8 + (uint32_t)(o - m);
    uint32_t dst = d.state == D_RENEWING ? d.server : 0xffffffffu;
    u[0] = 0;
    u[1] = PORT_CLIENT;
    u[2] = 0;
    u[3] = PORT_SERVER;
    u[4] = (uint8_t)(len >> 8);
    u[5] = (uint8_t)len;
    u[6] = u[7] = 0;
    uint16_t c = inet_checksum(u, len, net_pseudo_sum(net_addr, dst, 17, len));
    c = c ? c : 0xffff;
    u[6] = (uint8_t)(c >> 8);
    u[7] = (uint8_t)c;
    if (net_ip_send(dst, 17, u, len))
        net_stat.tx_dropped++;
}

static void start_discovery(void)
{
    d.state = D_SELECTING;
    d.xid = random32();
    d.tries = 1;
    send_msg(DISCOVER);
    d.next = svc_clock_ns() + backoff(1);
    net_timers_update();
}

/* The address goes (the lease ended, or a NAK). */
static void unbind(void)
{
    net_addr = net_prefix = net_gateway = 0;
    net_forget_neighbours();
}

int64_t net_dhcp_start(svc_token waiter)
{
    if (d.waiter)
        return SVC_E_BUSY;
    if (d.state == D_BOUND || d.state == D_RENEWING || d.state == D_REBINDING) {
        d.waiter = waiter;
        answer(0);                              /* (already leased: what it has) */
        return 0;
    }
    d.waiter = waiter;
    if (d.state == D_OFF)
        start_discovery();
    return 0;
}

uint64_t net_dhcp_deadline(void)
{
    return d.state == D_OFF || d.next == ~0ull ? 0 : d.next;
}

void net_dhcp_timer(uint64_t now)
{
    if (d.state == D_OFF || now < d.next)
        return;
    uint64_t lease_end = d.bound_at + (uint64_t)d.lease * SEC;
    switch (d.state) {
    case D_SELECTING:
    case D_REQUESTING:
        if (d.tries >= TRIES) {
            d.state = D_OFF;                    /* nobody answers: stop, and say so */
            answer((-E_TIMEOUT));
            return;
        }
        d.tries++;
        send_msg(d.state == D_SELECTING ? DISCOVER : REQUEST);
        d.next = now + backoff(d.tries);
        return;
    case D_BOUND:                               /* T1: ask the server to renew */
        d.state = D_RENEWING;
        d.xid = random32();
        /* fall through */
    case D_RENEWING:
    case D_REBINDING:
        if (d.state == D_RENEWING && now >= d.bound_at + (uint64_t)d.t2 * SEC)
            d.state = D_REBINDING;              /* T2: any server */
        if (now >= lease_end) {
            unbind();
            start_discovery();
            return;
        }
        send_msg(REQUEST);
        /* RFC 2131 4.4.5: again after half the time left, at least 60 s. */
        uint64_t until = d.state == D_RENEWING ? d.bound_at + (uint64_t)d.t2 * SEC : lease_end;
        uint64_t wait = (until - now) / 2;
        d.next = now + (wait < 60 * SEC ? (until - now < 60 * SEC ? until - now : 60 * SEC) : wait);
        return;
    }
}

int net_dhcp_input(const uint8_t *m, uint32_t len)
{
    if (d.state == D_OFF)
        return 0;
    if (d.state == D_BOUND || len < BOOTP_LEN + 4 || m[0] != 2 || get32(m + 4) != d.xid ||
        memcmp(m + 28, net_nic.mac, 6) != 0 || get32(m + BOOTP_LEN) != MAGIC)
        return 1;
    uint8_t type = 0;
    uint32_t mask = 0, router = 0, dns = 0, server = 0, lease = 0, t1 = 0, t2 = 0;
    for (uint32_t i = BOOTP_LEN + 4; i < len && m[i] != 255;) {
        if (m[i] == 0) {
            i++;
            continue;
        }
        if (i + 2 > len || i + 2 + m[i + 1] > len)
            return 1;                           /* an option past the message: malformed */
        uint8_t code = m[i], olen = m[i + 1];
        const uint8_t *v = m + i + 2;
        if (code == 53 && olen == 1)
            type = v[0];
        else if (olen >= 4 && (code == 1 || code == 3 || code == 6 || code == 54 || code == 51 || code == 58 ||
                               code == 59)) {
            uint32_t x = get32(v);
            if (code == 1) mask = x;
            if (code == 3) router = x;
            if (code == 6) dns = x;
            if (code == 54) server = x;
            if (code == 51) lease = x;
            if (code == 58) t1 = x;
            if (code == 59) t2 = x;
        }
        i += 2u + olen;
    }
    uint32_t yiaddr = get32(m + 16);
    uint64_t now = svc_clock_ns();
    if (d.state == D_SELECTING && type == OFFER && yiaddr && server) {
        d.offered = yiaddr;
        d.server = server;
        d.state = D_REQUESTING;
        d.tries = 1;
        send_msg(REQUEST);
        d.next = now + backoff(1);
        net_timers_update();
        return 1;
    }
    if (type == NAK && (!server || server == d.server)) {
        if (net_addr)
            unbind();
        start_discovery();
        return 1;
    }
    if (type != ACK || !yiaddr || (d.state == D_REQUESTING && yiaddr != d.offered))
        return 1;
    uint32_t prefix = 0;
    while (prefix < 32 && (mask << prefix) & 0x80000000u)
        prefix++;
    if (!mask || prefix < 1 || prefix > 30 || (router && (router & mask) != (yiaddr & mask)))
        return 1;                               /* a lease the interface cannot take */
    if (net_addr != yiaddr || net_prefix != prefix)
        net_forget_neighbours();
    net_addr = yiaddr;
    net_prefix = prefix;
    net_gateway = router;
    d.dns = dns;
    d.server = server ? server : d.server;
    d.lease = lease ? lease : 0xffffffffu;      /* (no lease time: for ever, RFC 2131 3.3) */
    d.t1 = t1 && t1 < d.lease ? t1 : d.lease / 2;
    d.t2 = t2 && t2 < d.lease && t2 > d.t1 ? t2 : d.lease / 8 * 7;
    d.bound_at = now;
    d.state = D_BOUND;
    d.next = d.lease == 0xffffffffu ? ~0ull : now + (uint64_t)d.t1 * SEC;
    net_timers_update();
    answer(0);
    return 1;
}

/* The client that asked goes away, or the configuration is set by hand:
 * the client stops (its request answered E_CLOSED). */
void net_dhcp_stop(void)
{
    d.state = D_OFF;
    answer((-E_CLOSED));
}
