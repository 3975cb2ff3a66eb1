/*
 * netpeer: the network stack service (idl/net.toml, services/net) through
 * its generated proxies.
 *
 * role=self (tests/guest/cases.toml, services/net): one machine on QEMU's
 * user-mode network with restrict=on: a lease from QEMU's DHCP server,
 * then 10.0.2.15/24 via 10.0.2.2 set by hand: the
 * interface, the errors of bad requests and the per-client socket limit,
 * UDP over the loopback interface and to the host's own address, a closed
 * port, pings of itself and of QEMU's gateway (ARP first), and the
 * counters; TAP output.
 *
 * role=echo and role=client (tests/host/test_netlink.py): two machines
 * on the project's own link. The echo side (`addr`) sends every UDP
 * datagram back to where it came from until one says "quit" (one that
 * says "stats?" gets the stack's counters as text instead); the client
 * (`addr`, `peer`) pings the peer, then sends `n` datagrams of sizes from
 * 0 to 1,472 bytes and every tenth of 1,473 to 5,920 (in two to four
 * fragments), each carrying its number, and checks every echo byte for
 * byte, sending a datagram again when its echo is late.
 */
#include "petrel.h"
#include "net_if.h"
#include "net_mib.h"

#define UDP_FRAME   1472                /* the payload of one frame */
#define UDP_MAX     65507               /* of the largest datagram */
#define ECHO_PORT   7

#define POLLIN      0x1u
#define POLLOUT     0x4u
#define POLLERR     0x8u
#define POLLHUP     0x10u
#define POLLRDHUP   0x2000u
#define NSTATS      14

static uint32_t ep, rev;
static uint8_t buf[UDP_MAX + 1], want[UDP_MAX + 1];

/* An address a.b.c.d[/prefix] from the arguments (0 if absent or bad). */
static uint32_t arg_addr(const char *key, uint32_t *prefix)
{
    char v[24];
    if (!start_arg(key, v, sizeof(v)))
        return 0;
    uint32_t a = 0, part = 0, parts = 0;
    const char *p = v;
    for (; *p && *p != '/'; p++) {
        if (*p == '.') {
            a = a << 8 | part;
            part = 0;
            parts++;
        } else
            part = part * 10 + (uint32_t)(*p - '0');
    }
    a = a << 8 | part;
    if (prefix) {
        *prefix = 24;
        if (*p == '/') {
            *prefix = 0;
            for (p++; *p >= '0' && *p <= '9'; p++)
                *prefix = *prefix * 10 + (uint32_t)(*p - '0');
        }
    }
    return parts == 3 ? a : 0;
}

/* The stack's counters (idl/net.toml's `stats`, in its order). */
static void get_stats(uint64_t *s)
{
    net_stats(ep, &s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &s[7], &s[8], &s[9], &s[10], &s[11], &s[12], &s[13]);
}

/* The next datagram on sock within `ms` milliseconds: its length, or -1. */
static int64_t recv_within(uint32_t sock, int ms, uint32_t *from, uint32_t *port)
{
    for (int waited = 0; waited <= ms; waited++) {
        uint64_t n = 0;
        int64_t err = net_recvfrom(ep, sock, buf, sizeof(buf), &n, from, port);
        if (err == 0)
            return (int64_t)n;
        if (err != -E_AGAIN)
            return err;
        sleep_ms(1);
    }
    return -1;
}

/* Ping `addr` from the ICMP socket with sequence number seq and `data`
 * bytes of data; the reply's sequence number, or a negative error. */
static int64_t ping_sized(uint32_t sock, uint32_t addr, uint16_t seq, int ms, uint32_t data)
{
    static uint8_t req[8 + 4096];
    uint32_t len = 8 + (data < 4096 ? data : 4096);
    memset(req, 0, 8);
    req[0] = 8;
    req[6] = (uint8_t)(seq >> 8);
    req[7] = (uint8_t)seq;
    for (unsigned i = 8; i < len; i++)
        req[i] = (uint8_t)(i + seq);
    int64_t err = net_sendto(ep, sock, addr, 0, req, len);
    if (err)
        return err;
    for (;;) {
        uint32_t from = 0, port = 0;
        int64_t n = recv_within(sock, ms, &from, &port);
        if (n < 0)
            return n;
        if (n == len && from == addr && buf[0] == 0 && (buf[6] << 8 | buf[7]) == seq &&
            memcmp(buf + 8, req + 8, len - 8) == 0)
            return seq;
    }
}

static int64_t ping(uint32_t sock, uint32_t addr, uint16_t seq, int ms)
{
    return ping_sized(sock, addr, seq, ms, 32);
}

/* Datagram i of the client: its size and bytes. */
static uint32_t pattern(uint32_t i, uint8_t *p)
{
    uint32_t len = i == 0 ? 0 : i % 10 == 9 ? UDP_FRAME + 1 + i * 977 % (5920 - UDP_FRAME) : 4 + i * 211 % (UDP_FRAME - 3);
    for (uint32_t k = 0; k < len; k++)
        p[k] = (uint8_t)(i * 13 + k * 7);
    if (len >= 4) {
        p[0] = (uint8_t)(i >> 24);
        p[1] = (uint8_t)(i >> 16);
        p[2] = (uint8_t)(i >> 8);
        p[3] = (uint8_t)i;
    }
    return len;
}


/* ---------------------------------------------------------------- TCP */

static uint8_t tcp_byte(uint64_t i) { return (uint8_t)(i * 7 + i / 1021); }

/* Send `total` bytes of tcp_byte() from `from` while taking them at `to`
 * (each checked), both non-blocking, for at most `ms` milliseconds: the
 * bytes that arrived intact (stopping at the first wrong one). */
static uint64_t tcp_pump(uint32_t from, uint32_t to, uint64_t total, int64_t ms)
{
    static uint8_t chunk[24 * 1024];
    uint64_t sent = 0, got = 0;
    int64_t end = sys_clock_ns() + ms * 1000000;
    while (got < total && sys_clock_ns() < end) {
        int progress = 0;
        if (sent < total) {
            uint64_t n = total - sent < sizeof(chunk) ? total - sent : sizeof(chunk), took = 0;
            for (uint64_t k = 0; k < n; k++)
                chunk[k] = tcp_byte(sent + k);
            if (net_send(ep, from, chunk, n, &took) == 0 && took) {
                sent += took;
                progress = 1;
            }
        }
        uint64_t n = 0;
        if (net_recv(ep, to, buf, sizeof(chunk), &n) == 0 && n) {
            for (uint64_t k = 0; k < n; k++)
                if (buf[k] != tcp_byte(got + k))
                    return got + k;
            got += n;
            progress = 1;
        }
        if (!progress)
            sleep_ms(1);
    }
    return got;
}

/* tcp_info's state and error. */
static uint32_t tcp_state(uint32_t sock, uint32_t *error)
{
    uint32_t v[16] = { 0 };
    int64_t err = net_tcp_info(ep, sock, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
                               &v[10], &v[11], &v[12], &v[13], &v[14], &v[15]);
    if (error)
        *error = v[1];
    return err ? 0 : v[0];
}

/* A connection over 127.0.0.1 and what it does, then the refused, the
 * reset and the bad requests. */
static void tcp_self_test(void)
{
    enum { ESTABLISHED = 1, CLOSE = 7, LISTEN = 10 };
    uint64_t s0[NSTATS], s1[NSTATS], n = 0;
    get_stats(s0);
    uint32_t l = 0, c = 0, a = 0, bound = 0, cport = 0, from = 0, port = 0, error = 0, u = 0;
    int64_t err = net_open(ep, 3, 8000, &l, &bound);
    err = err ? err : net_listen(ep, l, 4);
    err = err ? err : net_open(ep, 3, 0, &c, &cport);
    err = err ? err : net_connect(ep, c, 0x7f000001, 8000);
    err = err ? err : net_wait(ep, c, POLLOUT, &rev);
    uint32_t crev = rev;
    err = err ? err : net_wait(ep, l, POLLIN, &rev);
    err = err ? err : net_accept(ep, l, &a, &from, &port);
    tap_ok(err == 0 && crev == POLLOUT && from == 0x7f000001 && port == cport && tcp_state(c, NULL) == ESTABLISHED &&
           tcp_state(a, NULL) == ESTABLISHED && tcp_state(l, NULL) == LISTEN,
           "tcp: a connection over 127.0.0.1 is set up and accepted from the client's port %u (err %ld)", cport,
           (long)err);
    int64_t t0 = sys_clock_ns();
    uint64_t moved = tcp_pump(c, a, 4u << 20, 20000);
    int64_t us = (sys_clock_ns() - t0) / 1000;
    uint64_t back = tcp_pump(a, c, 300000, 20000);
    tap_ok(moved == 4u << 20 && back == 300000,
           "tcp: 4 MiB go one way intact (%lu bytes, %lu KiB/s) and 300,000 bytes the other (%lu)",
           (unsigned long)moved, (unsigned long)(us ? moved * 1000000 / 1024 / (uint64_t)us : 0),
           (unsigned long)back);
    uint32_t v = 0;
    err = net_tcp_set(ep, c, 1, 1);
    err = err ? err : net_send(ep, c, "ab", 2, &n);
    err = err ? err : net_send(ep, c, "cd", 2, &n);
    err = err ? err : net_wait(ep, a, POLLIN, &rev);
    uint64_t n2 = 0;
    for (int i = 0; i < 100 && n2 < 4 && !err; i++) {
        uint64_t k = 0;
        err = net_recv(ep, a, buf + n2, 16, &k);
        n2 += k;
        if (err == -E_AGAIN) {
            err = 0;
            sleep_ms(1);
        }
    }
    tap_ok(err == 0 && n2 == 4 && memcmp(buf, "abcd", 4) == 0, "tcp: with TCP_NODELAY two small sends arrive (%ld)",
           (long)err);
    /* peek: what has come, from an offset, left to be taken. */
    err = net_send(ep, c, "efgh", 4, &n);
    uint64_t all = 0, part = 0, taken = 0;
    char whole[8] = { 0 }, tail[8] = { 0 };
    for (int i = 0; i < 100 && all < 4 && !err; i++) {
        err = net_peek(ep, a, 0, whole, sizeof(whole), &all);
        if (err == -E_AGAIN || (!err && all < 4)) {
            err = 0;
            sleep_ms(1);
        }
    }
    err = err ? err : net_peek(ep, a, 2, tail, sizeof(tail), &part);
    int64_t past = net_peek(ep, a, 4, tail + 2, 4, &n), at_end = net_peek(ep, a, 9, tail + 2, 4, &n);
    int64_t fault = net_peek(ep, a, 0, (void *)0x10, 4, &n);         /* (and the data stays) */
    err = err ? err : net_recv(ep, a, buf, 16, &taken);
    int64_t after = net_peek(ep, a, 0, buf + 8, 4, &n);
    tap_ok(err == 0 && all == 4 && memcmp(whole, "efgh", 4) == 0 && part == 2 && memcmp(tail, "gh", 2) == 0 &&
           past == -E_AGAIN && at_end == -E_AGAIN && fault == -E_FAULT && taken == 4 && memcmp(buf, "efgh", 4) == 0 && after == -E_AGAIN,
           "tcp: peek shows what came from an offset and leaves it (a bad buffer: E_FAULT); recv then takes it all "
           "(%ld, %lu %lu %lu, %ld %ld %ld)",
           (long)err, (unsigned long)all, (unsigned long)part, (unsigned long)taken, (long)past, (long)at_end,
           (long)after);
    /* discard: what recv would take, dropped without a copy. */
    err = net_send(ep, c, "ijkl", 4, &n);
    uint64_t there = 0, dropped = 0, rest = 0;
    for (int i = 0; i < 100 && there < 4 && !err; i++) {
        err = net_peek(ep, a, 0, whole, sizeof(whole), &there);
        if (err == -E_AGAIN || (!err && there < 4)) {
            err = 0;
            sleep_ms(1);
        }
    }
    err = err ? err : net_discard(ep, a, 2, &dropped);
    err = err ? err : net_recv(ep, a, buf, 16, &rest);
    int64_t none = net_discard(ep, a, 2, &n);
    tap_ok(err == 0 && dropped == 2 && rest == 2 && memcmp(buf, "kl", 2) == 0 && none == -E_AGAIN,
           "tcp: discard drops what recv would take, and recv takes the rest (%ld, %lu %lu, %ld)", (long)err,
           (unsigned long)dropped, (unsigned long)rest, (long)none);
    /* The client shuts its sending: the server reads the end, closes; the client ends in TIME_WAIT. */
    err = net_shutdown(ep, c, 1);
    err = err ? err : net_wait(ep, a, POLLIN | POLLRDHUP, &rev);
    uint32_t arev = rev;
    err = err ? err : net_recv(ep, a, buf, 16, &n);
    uint64_t end_a = n;
    int64_t closed = net_close(ep, a);
    err = err ? err : net_wait(ep, c, POLLRDHUP, &rev);
    err = err ? err : net_recv(ep, c, buf, 16, &n);
    v = tcp_state(c, NULL);
    net_close(ep, c);
    uint32_t again = 0;
    int64_t busy = net_open(ep, 3, cport, &again, &bound);
    busy = busy ? busy : net_connect(ep, again, 0x7f000001, 8000);
    net_close(ep, again);
    tap_ok(err == 0 && (arev & (POLLIN | POLLRDHUP)) == (POLLIN | POLLRDHUP) && end_a == 0 && closed == 0 &&
           n == 0 && v == CLOSE && busy == -E_BUSY,
           "tcp: shut down one way, then closed the other: both read the end; the client's socket shows CLOSE, "
           "its connection waits in TIME_WAIT (the same again is E_BUSY) (state %u, err %ld, %ld)", v, (long)err,
           (long)busy);

    /* A closed port: RST, ECONNREFUSED. */
    err = net_open(ep, 3, 0, &c, &cport);
    err = err ? err : net_connect(ep, c, 0x7f000001, 8001);
    err = err ? err : net_wait(ep, c, POLLOUT, &rev);
    v = tcp_state(c, &error);
    int64_t r1 = net_recv(ep, c, buf, 16, &n), r2 = net_recv(ep, c, buf, 16, &n);
    tap_ok(err == 0 && (rev & (POLLERR | POLLHUP)) == (POLLERR | POLLHUP) && v == CLOSE && error == 111 &&
           r1 == -E_CLOSED && r2 == 0 && n == 0,
           "tcp: a connection to a closed port is refused: POLLERR, ECONNREFUSED told once, then the end "
           "(revents %x, error %u)", rev, error);
    net_close(ep, c);

    /* Closing with unread data resets the connection (as Linux). */
    err = net_open(ep, 3, 0, &c, &cport);
    err = err ? err : net_connect(ep, c, 0x7f000001, 8000);
    err = err ? err : net_accept(ep, l, &a, &from, &port);
    err = err ? err : net_send(ep, a, "unread", 6, &n);
    err = err ? err : net_wait(ep, c, POLLIN, &rev);
    err = err ? err : net_close(ep, c);
    err = err ? err : net_wait(ep, a, POLLERR, &rev);
    v = tcp_state(a, &error);
    r1 = net_send(ep, a, "x", 1, &n);
    r2 = net_send(ep, a, "x", 1, &n);
    tap_ok(err == 0 && (rev & POLLERR) && v == CLOSE && error == 104 && r1 == -E_CLOSED && r2 == -E_CLOSED,
           "tcp: closing with unread data resets the peer: ECONNRESET (error %u, err %ld)", error, (long)err);
    net_close(ep, a);

    /* SO_LINGER 0: close resets at once. */
    err = net_open(ep, 3, 0, &c, &cport);
    err = err ? err : net_connect(ep, c, 0x7f000001, 8000);
    err = err ? err : net_accept(ep, l, &a, &from, &port);
    err = err ? err : net_tcp_set(ep, c, 7, 1);
    err = err ? err : net_close(ep, c);
    err = err ? err : net_wait(ep, a, POLLIN, &rev);
    v = tcp_state(a, &error);
    tap_ok(err == 0 && (rev & (POLLERR | POLLHUP)) && v == CLOSE && error == 104,
           "tcp: with SO_LINGER 0, close resets the connection (error %u, err %ld)", error, (long)err);
    net_close(ep, a);

    /* Bad requests. */
    err = net_open(ep, 3, 0, &c, &cport);
    net_open(ep, 1, 0, &u, &bound);
    tap_ok(err == 0 && net_open(ep, 3, 8000, &a, &bound) == -E_BUSY && net_listen(ep, u, 1) == -E_INVAL &&
           net_accept(ep, c, &a, &from, &port) == -E_STATE && net_send(ep, c, "x", 1, &n) == -E_STATE &&
           net_recv(ep, c, buf, 1, &n) == -E_STATE && net_shutdown(ep, c, 1) == -E_STATE &&
           net_peek(ep, c, 0, buf, 1, &n) == -E_STATE && net_peek(ep, 99, 0, buf, 1, &n) == -E_BADHANDLE &&
           net_discard(ep, c, 1, &n) == -E_STATE && net_discard(ep, 99, 1, &n) == -E_BADHANDLE &&
           net_peekfrom(ep, c, buf, 1, &n, &from, &port) == -E_INVAL &&
           net_accept(ep, l, &a, &from, &port) == -E_AGAIN && net_connect(ep, c, 0, 80) == -E_INVAL &&
           net_connect(ep, c, 0x7f000001, 0) == -E_INVAL && net_connect(ep, c, 0xe0000001, 80) == -E_INVAL &&
           net_sendto(ep, c, 0x7f000001, 80, "x", 1) == -E_INVAL && net_recvfrom(ep, c, buf, 1, &n, &from, &port) == -E_INVAL &&
           net_tcp_set(ep, c, 1, 2) == -E_INVAL && net_tcp_set(ep, c, 2, 3) == -E_INVAL &&
           net_tcp_set(ep, c, 10, 0) == -E_INVAL && net_tcp_set(ep, c, 9, 1000) == -E_INVAL &&
           net_tcp_set(ep, c, 8, (1u << 24) + 1) == -E_INVAL && net_tcp_set(ep, c, 9, 8192) == 0 && net_tcp_set(ep, c, 9, 0) == 0 &&
           net_tcp_set(ep, c, 2, 1) == 0 && net_tcp_set(ep, c, 3, 2) == -E_INVAL && net_tcp_set(ep, c, 4, 0) == -E_INVAL &&
           net_tcp_set(ep, c, 4, 32768) == -E_INVAL && net_tcp_set(ep, c, 6, 128) == -E_INVAL &&
           net_tcp_set(ep, c, 7, 2) == -E_INVAL && net_tcp_set(ep, c, 5, 32767) == 0 &&
           net_send(ep, 99, "x", 1, &n) == -E_BADHANDLE &&
           net_connect(ep, c, 0x7f000001, 8000) == 0 && net_connect(ep, c, 0x7f000001, 8000) == -E_STATE &&
           net_listen(ep, c, 1) == -E_STATE && net_shutdown(ep, c, 3) == -E_INVAL &&
           net_send(ep, c, (void *)0x10, 8, &n) == -E_FAULT,
           "tcp: bad requests are refused (wrong kind, wrong state, bad addresses, options and buffers)");
    net_accept(ep, l, &a, &from, &port);
    net_close(ep, a);
    net_close(ep, c);

    /* The snmp counters: as many as the buffer holds, none through a bad
     * one; and a buffer tagged as lent (SVC_BUFFER_LENT) by a client that
     * answers no call, and so lent nothing, reaches nothing. */
    static uint64_t mib[NET_MIB_COUNT + 4];
    uint64_t fit = 0, some = 0, tagged = SVC_BUFFER_LENT | (uint64_t)(uintptr_t)buf;
    err = net_snmp(ep, mib, sizeof mib, &fit);
    err = err ? err : net_snmp(ep, mib, 3 * sizeof(uint64_t) + 5, &some);
    tap_ok(err == 0 && fit == NET_MIB_COUNT && some == 3 && mib[MIB_TCP_ACTIVE_OPENS] > 0 &&
           net_snmp(ep, (void *)0x10, sizeof mib, &n) == -E_FAULT &&
           net_snmp(ep, (void *)(uintptr_t)tagged, 8, &n) == -E_FAULT &&
           net_sendto(ep, u, 0x7f000001, 9, (void *)(uintptr_t)tagged, 8) == -E_FAULT,
           "net: snmp gives as many counters as fit (%lu, %lu), and a bad or unlent buffer is E_FAULT",
           (unsigned long)fit, (unsigned long)some);
    net_close(ep, u);

    /* A hostile client: 7 connections it fills and never reads. Each takes
     * at most its send ring and the peer's receive ring (64 KiB each), then
     * E_AGAIN; the stack holds no more than their rings; closing them all
     * (the readers first: a reset for unread data) gives every byte back. */
    static uint8_t junk[16384];
    uint32_t cs[7] = { 0 }, as[7] = { 0 };
    uint64_t least = ~0ull, most = 0, s2[NSTATS];
    int64_t bad = 0;
    for (int i = 0; i < 7; i++) {
        uint64_t queued = 0;
        bad |= net_open(ep, 3, 0, &cs[i], &cport) | net_connect(ep, cs[i], 0x7f000001, 8000) |
               net_accept(ep, l, &as[i], &from, &port);
        for (int k = 0; k < 64 && !bad; k++) {
            err = net_send(ep, cs[i], junk, sizeof(junk), &n);
            if (err == -E_AGAIN)
                break;
            bad |= err;
            queued += n;
        }
        least = queued < least ? queued : least;
        most = queued > most ? queued : most;
    }
    get_stats(s2);
    for (int i = 0; i < 7; i++)
        net_close(ep, as[i]);
    for (int i = 0; i < 7; i++)
        net_close(ep, cs[i]);
    net_close(ep, l);
    tap_ok(bad == 0 && least >= 65536 && most <= 2 * 65536 && s2[10] <= s0[10] + 14 * 2 * 65536,
           "tcp: 7 connections filled and never read take 64 to 128 KiB each (%lu to %lu), then E_AGAIN; the stack "
           "holds %lu bytes more, no more than their rings", (unsigned long)least, (unsigned long)most,
           (unsigned long)(s2[10] - s0[10]));
    get_stats(s1);
    tap_ok(s1[10] == s0[10] && s1[11] > s0[11] && s1[12] > s0[12],
           "tcp: every connection closed, the stack holds what it held before (%lu bytes, %lu then) and counted "
           "%lu segments in", (unsigned long)s1[10], (unsigned long)s0[10], (unsigned long)(s1[11] - s0[11]));

    /* A client's TCP connections are bounded: 128 (its TIME_WAITs give way
     * to new ones), half the service's table, whatever its 16 datagram
     * sockets. */
    static uint32_t many[129];
    uint32_t opened = 0;
    while (opened < 129 && (err = net_open(ep, 3, 0, &many[opened], &bound)) == 0)
        opened++;
    for (uint32_t i = 0; i < opened; i++)
        net_close(ep, many[i]);
    tap_ok(opened == 128 && err == -E_LIMIT, "tcp: a client's 129th TCP socket is E_LIMIT (%u opened, then %ld)",
           opened, (long)err);
}

static int self_test(void)
{
    uint64_t mac = 0;
    uint32_t addr = 0, prefix = 0, gw = 0, mtu = 0, link = 0, sock = 0, bound = 0;
    int64_t err = net_info(ep, &mac, &addr, &prefix, &gw, &mtu, &link);
    tap_ok(err == 0 && mac == 0x563412005452ull && addr == 0 && mtu == 1500 && link == 1,
           "net: the interface is up with QEMU's MAC, no address yet and a 1,500-byte MTU (err %ld)", (long)err);
    const uint32_t me = 0x0a00020f, gateway = 0x0a000202;
    tap_ok(net_config(ep, me, 0, gateway) == -E_INVAL && net_config(ep, me, 31, gateway) == -E_INVAL &&
           net_config(ep, 0x7f000001, 8, 0) == -E_INVAL && net_config(ep, 0x0a0002ff, 24, gateway) == -E_INVAL &&
           net_config(ep, 0x0a000200, 24, gateway) == -E_INVAL && net_config(ep, 0xe0000001, 24, 0) == -E_INVAL &&
           net_config(ep, me, 24, 0x0a000302) == -E_INVAL && net_config(ep, me, 24, me) == -E_INVAL,
           "net: bad addresses, prefixes and gateways are refused");
    uint32_t dns = 0, lease = 0;
    err = net_dhcp(ep, &addr, &prefix, &gw, &dns, &lease);
    /* (A restricted user-mode network offers no router and no DNS server.) */
    tap_ok(err == 0 && addr == me && prefix == 24 && gw == 0 && dns == 0 && lease == 86400,
           "net: DHCP from QEMU's server leases 10.0.2.15/24 (no router or DNS: restrict=on) for %u s "
           "(err %ld: %x/%u via %x, DNS %x)", lease, (long)err, addr, prefix, gw, dns);
    err = net_config(ep, me, 24, gateway);
    net_info(ep, &mac, &addr, &prefix, &gw, &mtu, &link);
    tap_ok(err == 0 && addr == me && prefix == 24 && gw == gateway, "net: configured 10.0.2.15/24 via 10.0.2.2");

    uint32_t a = 0, b = 0, b_port = 0, ping_sock = 0;
    tap_ok(net_open(ep, 4, 0, &sock, &bound) == -E_INVAL && net_open(ep, 1, 70000, &sock, &bound) == -E_INVAL &&
           net_open(ep, 1, 5000, &a, &bound) == 0 && bound == 5000 && net_open(ep, 1, 5000, &sock, &bound) == -E_BUSY &&
           net_open(ep, 1, 0, &b, &b_port) == 0 && b_port >= 49152 && net_open(ep, 2, 0, &ping_sock, &bound) == 0,
           "net: sockets open on a port of their own or a picked one (%u); a taken port is E_BUSY", b_port);
    uint32_t extra[16], opened = 0;
    while (opened < 16 && net_open(ep, 1, 0, &extra[opened], &bound) == 0)
        opened++;
    err = net_open(ep, 1, 0, &sock, &bound);
    for (uint32_t i = 0; i < opened; i++)
        net_close(ep, extra[i]);
    tap_ok(opened == 13 && err == -E_LIMIT, "net: a client's 17th socket is E_LIMIT (%u more opened, then %ld)",
           opened, (long)err);

    uint64_t n = 0;
    uint32_t from = 0, port = 0;
    tap_ok(net_sendto(ep, 99, 0x7f000001, 5000, "x", 1) == -E_BADHANDLE && net_close(ep, 0) == -E_BADHANDLE &&
           net_recvfrom(ep, 65, buf, 16, &n, &from, &port) == -E_BADHANDLE && net_wait(ep, 77, POLLIN, &rev) == -E_BADHANDLE &&
           net_peekfrom(ep, 65, buf, 16, &n, &from, &port) == -E_BADHANDLE &&
           net_sendto(ep, b, 0x7f000001, 0, "x", 1) == -E_INVAL && net_sendto(ep, b, 0, 5000, "x", 1) == -E_INVAL &&
           net_sendto(ep, b, 0x7f000001, 5000, buf, UDP_MAX + 1) == -E_RANGE &&
           net_sendto(ep, b, 0x7f000001, 5000, (void *)0x10, 8) == -E_FAULT &&
           net_sendto(ep, ping_sock, 0x7f000001, 0, "\0\0\0\0\0\0\0\0", 8) == -E_INVAL &&
           net_recvfrom(ep, a, buf, 16, &n, &from, &port) == -E_AGAIN,
           "net: bad sockets, addresses, sizes and buffers are refused");

    /* UDP through the loopback interface, then to our own address. */
    uint32_t len = pattern(7, want);
    err = net_sendto(ep, b, 0x7f000001, 5000, want, len);
    int64_t got = err ? err : net_wait(ep, a, POLLIN, &rev);
    got = got ? got : net_recvfrom(ep, a, buf, sizeof(buf), &n, &from, &port);
    tap_ok(got == 0 && n == len && from == 0x7f000001 && port == b_port && memcmp(buf, want, len) == 0,
           "net: %u bytes over 127.0.0.1 arrive whole from the sender's port (err %ld)", len, (long)got);
    err = net_sendto(ep, a, me, b_port, "to myself", 9);
    got = err ? err : recv_within(b, 100, &from, &port);
    tap_ok(got == 9 && from == me && port == 5000 && memcmp(buf, "to myself", 9) == 0,
           "net: a datagram to 10.0.2.15 comes back without touching the wire (%ld)", (long)got);
    err = net_sendto(ep, b, me, 5000, "12345", 5);
    uint64_t peeked = 0, again = 0;
    got = err ? err : net_peekfrom(ep, a, buf, 2, &peeked, &from, &port);
    got = got ? got : net_peekfrom(ep, a, buf + 2, 8, &again, &from, &port);
    got = got ? got : net_recvfrom(ep, a, buf, 2, &n, &from, &port);
    int64_t none = net_peekfrom(ep, a, buf, 2, &again, &from, &port);
    tap_ok(got == 0 && peeked == 5 && n == 5 && memcmp(buf + 2, "12345", 5) == 0 && none == -E_AGAIN,
           "net: a datagram bigger than the buffer says its whole length; peeked twice, it stays for recvfrom (%lu)",
           (unsigned long)n);

    /* The largest datagram, whole over loopback; one byte more is E_RANGE. */
    for (uint32_t k = 0; k < UDP_MAX; k++)
        want[k] = (uint8_t)(k * 31 + k / 251);
    err = net_sendto(ep, b, 0x7f000001, 5000, want, UDP_MAX);
    got = err ? err : recv_within(a, 100, &from, &port);
    tap_ok(got == UDP_MAX && port == b_port && memcmp(buf, want, UDP_MAX) == 0 &&
           net_sendto(ep, b, 0x7f000001, 5000, want, UDP_MAX + 1) == -E_RANGE,
           "net: a datagram of 65,507 bytes arrives whole over 127.0.0.1; 65,508 are E_RANGE (%ld)", (long)got);

    uint64_t s0[NSTATS], s1[NSTATS];
    get_stats(s0);
    err = net_sendto(ep, b, 0x7f000001, 5001, "nobody", 6);
    int64_t pinged = ping(ping_sock, 0x7f000001, 1, 100);
    get_stats(s1);
    tap_ok(err == 0 && s1[3] == s0[3] + 1 && pinged == 1 && s1[4] == s0[4] + 1,
           "net: a closed port is counted, and the host answers its own ping (%ld)", (long)pinged);

    int answered = 0;
    for (uint16_t seq = 1; seq <= 3; seq++)
        answered += ping(ping_sock, gateway, seq, 2000) == seq;
    tap_ok(answered == 3, "net: 3 pings of the gateway 10.0.2.2 answered (ARP first)");
    get_stats(s0);
    int64_t big = ping_sized(ping_sock, gateway, 4, 2000, 4000);
    get_stats(s1);
    tap_ok(big == 4 && s1[9] - s0[9] == 3 && s1[6] - s0[6] >= 2 && s1[7] == s0[7] + 1,
           "net: a ping of 4,000 bytes of the gateway goes in 3 fragments and its reply, in %lu, is reassembled (%ld)",
           (unsigned long)(s1[6] - s0[6]), (long)big);

    tap_ok(net_close(ep, a) == 0 && net_close(ep, a) == -E_BADHANDLE && net_close(ep, b) == 0 &&
           net_close(ep, ping_sock) == 0 && net_open(ep, 1, 5000, &a, &bound) == 0 && net_close(ep, a) == 0,
           "net: closed sockets are gone and their ports free");
    tcp_self_test();
    tap_plan();
    return 0;
}

/* The stack's counters as one line of text. */
static const char *counters(void)
{
    static char line[400];
    uint64_t s[NSTATS];
    get_stats(s);
    snprintf(line, sizeof(line), "ip_in %lu ip_dropped %lu udp_in %lu udp_dropped %lu echo_answered %lu "
             "tx_dropped %lu frags_in %lu reassembled %lu reasm_failed %lu frags_out %lu mem %lu tcp_in %lu tcp_out %lu syn_cookies %lu",
             (unsigned long)s[0], (unsigned long)s[1], (unsigned long)s[2], (unsigned long)s[3], (unsigned long)s[4],
             (unsigned long)s[5], (unsigned long)s[6], (unsigned long)s[7], (unsigned long)s[8], (unsigned long)s[9],
             (unsigned long)s[10], (unsigned long)s[11], (unsigned long)s[12], (unsigned long)s[13]);
    return line;
}

/* The sink's and the source's check of a stream: a rolling hash of its
 * bytes (h = h * 31 + byte, 32 bits), which the other side computes too. */
static uint32_t hash_bytes(uint32_t h, const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        h = h * 31 + p[i];
    return h;
}

/* role=echo's TCP side, a thread of its own: an echo on port 7; the same on
 * port 17 with keepalive probes after 1 s idle, 1 s apart, 3 of them; and a
 * sink on port 9 that checks every byte against tcp_byte() and, at the end
 * of the peer's data, answers how many came, how many were wrong and their
 * hash, then closes; and a listener on port 13 with a backlog of 2 that
 * is never accepted from (its queue fills). Up to MAX_CONNS connections
 * at once (test_netlink's Linux client holds 100), each closed when its
 * peer's data ends (or the connection does). A keepalive connection that
 * ends in an error says so and how long after the peer's last data. */
#define MAX_CONNS   120
enum { ECHO, KEEP, SINK };
static volatile uint32_t keep_open;     /* keepalive connections open: "quit" waits for them */
static uint32_t most_at_once;

static void tcp_serve(void *arg)
{
    static uint8_t tbuf[65536];
    static uint32_t conns[MAX_CONNS], kind[MAX_CONNS], hash[MAX_CONNS];
    static uint64_t got[MAX_CONNS], wrong[MAX_CONNS];
    static int64_t last[MAX_CONNS];
    uint32_t ls[3] = { (uint32_t)(uint64_t)arg, 0, 0 }, bound = 0, open_now = 0, full = 0;
    if (net_open(ep, 3, 17, &ls[KEEP], &bound) || net_tcp_set(ep, ls[KEEP], 3, 1) ||
        net_tcp_set(ep, ls[KEEP], 4, 1) || net_tcp_set(ep, ls[KEEP], 5, 1) || net_tcp_set(ep, ls[KEEP], 6, 3) ||
        net_listen(ep, ls[KEEP], 4) || net_open(ep, 3, 9, &ls[SINK], &bound) || net_listen(ep, ls[SINK], 4) ||
        net_open(ep, 3, 13, &full, &bound) || net_listen(ep, full, 2))
        printf("netpeer: cannot listen on TCP ports 17, 9 and 13\n");
    for (uint32_t k = 0;; k = (k + 1) % 3) {            /* (one listener a turn: the stack has work of its own) */
        int progress = 0;
        uint32_t c = 0, addr = 0, port = 0;
        if (net_accept(ep, ls[k], &c, &addr, &port) == 0) {
            progress = 1;
            unsigned i = 0;
            while (i < MAX_CONNS && conns[i])
                i++;
            if (i == MAX_CONNS)
                net_close(ep, c);
            else {
                conns[i] = c;
                kind[i] = k;
                got[i] = wrong[i] = 0;
                hash[i] = 0;
                last[i] = sys_clock_ns();
                keep_open += k == KEEP;
                open_now++;
                most_at_once = open_now > most_at_once ? open_now : most_at_once;
            }
        }
        for (unsigned i = 0; i < MAX_CONNS; i++) {
            uint64_t n = 0;
            if (!conns[i])
                continue;
            int64_t err = net_recv(ep, conns[i], tbuf, kind[i] == SINK ? sizeof(tbuf) : 8192, &n);
            if (err == -E_AGAIN)
                continue;
            progress = 1;
            if (!err && n)
                last[i] = sys_clock_ns();
            if (kind[i] == SINK && !err) {
                for (uint64_t j = 0; j < n; j++)
                    wrong[i] += tbuf[j] != tcp_byte(got[i] + j);
                hash[i] = hash_bytes(hash[i], tbuf, n);
                got[i] += n;
                if (n)
                    continue;
                n = (uint64_t)snprintf((char *)tbuf, 128, "sink: %lu bytes, %lu wrong, hash %08x",
                                       (unsigned long)got[i], (unsigned long)wrong[i], hash[i]);
                printf("netpeer: tcp %s\n", tbuf);
            }
            for (uint64_t done = 0, took = 0; !err && done < n; done += took) {
                took = 0;
                err = net_send(ep, conns[i], tbuf + done, n - done, &took);
                if (err == -E_AGAIN) {
                    err = 0;
                    sleep_ms(1);
                }
            }
            if (err || n == 0 || kind[i] == SINK) {
                uint32_t error = 0;
                tcp_state(conns[i], &error);
                if (kind[i] == KEEP && error)
                    printf("netpeer: tcp keepalive: the connection ended with error %u, %ld ms after the peer's "
                           "last data\n", error, (long)((sys_clock_ns() - last[i]) / 1000000));
                net_close(ep, conns[i]);
                conns[i] = 0;
                keep_open -= kind[i] == KEEP;
                open_now--;
            }
        }
        if (!progress)
            sleep_ms(1);
    }
}

/* Read connection c to its end or until the clock passes `end`, adding
 * what came to *got: 0 at the end, -E_TIMEOUT, or the error. */
static int64_t read_to_end(uint32_t c, int64_t end, uint64_t *got)
{
    while (sys_clock_ns() < end) {
        uint64_t n = 0;
        int64_t err = net_recv(ep, c, buf, 4096, &n);
        if (err == -E_AGAIN) {
            sleep_ms(1);
            continue;
        }
        if (err || n == 0)
            return err;
        *got += n;
    }
    return -E_TIMEOUT;
}

/* The echo side's "connect PORT BYTES": connect to the asker's PORT, send
 * BYTES bytes of tcp_byte() (for at most 120 s), shut sending, read to the
 * end (at most 20 s more), close; what happened, as text (the hash of the
 * bytes sent too), also said on the console. */
static const char *tcp_connect_to(uint32_t addr, const char *cmd)
{
    static char line[160];
    uint32_t port = 0, c = 0, bound = 0;
    uint64_t bytes = 0, sent = 0, got = 0;
    const char *p = cmd + 8;
    while (*p >= '0' && *p <= '9')
        port = port * 10 + (uint32_t)(*p++ - '0');
    while (*p == ' ')
        p++;
    while (*p >= '0' && *p <= '9')
        bytes = bytes * 10 + (uint64_t)(*p++ - '0');
    int64_t err = net_open(ep, 3, 0, &c, &bound);
    err = err ? err : net_connect(ep, c, addr, port);
    err = err ? err : net_wait(ep, c, POLLOUT, &rev);
    if (!err && (rev & POLLERR))                        /* (refused, say: the error as recv tells it) */
        err = net_recv(ep, c, buf, 1, &got);
    int64_t t0 = sys_clock_ns(), end = t0 + 120000000000ll;
    uint32_t h = 0;
    while (!err && sent < bytes && sys_clock_ns() < end) {
        static uint8_t chunk[16384];
        uint64_t k = bytes - sent < sizeof(chunk) ? bytes - sent : sizeof(chunk), took = 0;
        for (uint64_t i = 0; i < k; i++)
            chunk[i] = tcp_byte(sent + i);
        err = net_send(ep, c, chunk, k, &took);
        sent += err ? 0 : took;
        h = err ? h : hash_bytes(h, chunk, took);
        if (err == -E_AGAIN) {
            err = 0;
            sleep_ms(1);
        }
    }
    int64_t ms = (sys_clock_ns() - t0) / 1000000;
    err = err ? err : net_shutdown(ep, c, 1);
    err = err ? err : read_to_end(c, sys_clock_ns() + 20000000000ll, &got);
    err = err == -E_TIMEOUT ? 0 : err;
    uint32_t error = 0, state = tcp_state(c, &error);
    net_close(ep, c);
    snprintf(line, sizeof(line), "connect: err %ld sent %lu got %lu state %u error %u port %u hash %08x in %ld ms",
             (long)err, (unsigned long)sent, (unsigned long)got, state, error, bound, h, (long)ms);
    printf("netpeer: tcp %s\n", line);
    return line;
}

static int echo(void)
{
    uint32_t sock = 0, bound = 0, from = 0, port = 0, l = 0;
    if (net_open(ep, 1, ECHO_PORT, &sock, &bound) != 0 || net_open(ep, 3, ECHO_PORT, &l, &bound) != 0 ||
        net_listen(ep, l, 8) != 0 || thread_spawn(tcp_serve, (void *)(uint64_t)l, 100, -1) < 0) {
        printf("netpeer: cannot open UDP and TCP port %d\n", ECHO_PORT);
        return 1;
    }
    printf("netpeer: echoing on UDP and TCP port %d\n", ECHO_PORT);
    uint32_t echoed = 0;
    for (;;) {
        uint64_t n = 0;
        int64_t err = net_wait(ep, sock, POLLIN, &rev);
        if (!err)
            err = net_recvfrom(ep, sock, buf, sizeof(buf), &n, &from, &port);
        if (err) {
            printf("netpeer: echo: error %ld\n", (long)err);
            return 1;
        }
        if (n == 4 && memcmp(buf, "quit", 4) == 0)
            break;
        if (n == 6 && memcmp(buf, "stats?", 6) == 0) {   /* the counters as text, instead of an echo */
            const char *c = counters();
            n = strlen(c);
            memmove(buf, c, n);
        }
        if (n > 8 && n < 40 && memcmp(buf, "connect ", 8) == 0) {
            buf[n] = 0;
            const char *c = tcp_connect_to(from, (const char *)buf);
            n = strlen(c);
            memmove(buf, c, n);
        }
        while ((err = net_sendto(ep, sock, from, port, buf, n)) == -E_AGAIN)
            sleep_ms(1);
        echoed += err == 0;
    }
    for (int ms = 0; keep_open && ms < 20000; ms++)    /* (a keepalive connection's end, to be told) */
        sleep_ms(1);
    uint64_t s[NSTATS];
    get_stats(s);
    printf("netpeer: echoed %u datagrams, answered %lu pings\n", echoed, (unsigned long)s[4]);
    printf("netpeer: tcp: at most %u connections open at once\n", most_at_once);
    printf("netpeer: stack counters: %s\n", counters());
    return 0;
}

/* role=client's TCP part: `total` bytes of tcp_byte() through the peer's
 * TCP echo on one connection, sent and checked as they come back, then
 * the end both ways; one line says how it went. */
static void tcp_echo_check(uint32_t peer, uint64_t total, uint32_t cc)
{
    static const char *const cc_name[] = { "newreno", "cubic", "westwood" };
    static uint8_t chunk[8192];
    uint32_t c = 0, bound = 0;
    uint64_t sent = 0, got = 0, n = 0, wrong = 0;
    int64_t t0 = sys_clock_ns(), end = t0 + 60000000000ll;
    int64_t err = net_open(ep, 3, 0, &c, &bound);
    err = err ? err : net_tcp_set(ep, c, 2, cc);
    err = err ? err : net_connect(ep, c, peer, ECHO_PORT);
    err = err ? err : net_wait(ep, c, POLLOUT, &rev);
    while (!err && got < total && sys_clock_ns() < end) {
        int progress = 0;
        if (sent < total) {
            uint64_t k = total - sent < sizeof(chunk) ? total - sent : sizeof(chunk), took = 0;
            for (uint64_t i = 0; i < k; i++)
                chunk[i] = tcp_byte(sent + i);
            err = net_send(ep, c, chunk, k, &took);
            sent += err ? 0 : took;
            progress = err == 0;
            err = err == -E_AGAIN ? 0 : err;
        }
        if (!err) {
            err = net_recv(ep, c, buf, sizeof(chunk), &n);
            if (!err && n == 0)
                break;                                  /* (the end, early) */
            for (uint64_t i = 0; !err && i < n; i++)
                wrong += buf[i] != tcp_byte(got + i);
            got += err ? 0 : n;
            progress |= err == 0;
            err = err == -E_AGAIN ? 0 : err;
        }
        if (!progress)
            sleep_ms(1);
    }
    int64_t ms = (sys_clock_ns() - t0) / 1000000;
    err = err ? err : net_shutdown(ep, c, 1);
    int64_t eof = -1;
    if (!err) {
        uint64_t extra = 0;                             /* (more after all came back: said as eof) */
        eof = read_to_end(c, end, &extra);
        eof = eof == -E_TIMEOUT ? -1 : eof ? eof : (int64_t)extra;
    }
    uint32_t v[16] = { 0 };
    net_tcp_info(ep, c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
                 &v[12], &v[13], &v[14], &v[15]);
    net_close(ep, c);
    printf("netpeer: tcp %s: %lu/%lu bytes echoed, %lu wrong, in %ld ms; %u segments sent again; "
           "then the end (%ld), state %u, error %ld\n", cc_name[cc], (unsigned long)got, (unsigned long)total,
           (unsigned long)wrong, (long)ms, v[12], (long)eof, v[0], (long)err);
    if (got != total || eof != 0)                       /* (what the connection looked like, to tell why) */
        printf("netpeer: tcp: sent %lu; rto %u us, srtt %u, cwnd %u, ssthresh %u, unacked %u, unread %u, "
               "unsent %u, window %u\n", (unsigned long)sent, v[6], v[7], v[9], v[10], v[11], v[13], v[14], v[15]);
}

static int client(uint32_t peer, uint32_t count, uint64_t tcp_bytes)
{
    uint32_t usock = 0, psock = 0, bound = 0, from = 0, port = 0;
    if (net_open(ep, 1, 0, &usock, &bound) != 0 || net_open(ep, 2, 0, &psock, &bound) != 0) {
        printf("netpeer: cannot open sockets\n");
        return 1;
    }
    int answered = 0;
    for (uint16_t seq = 1; seq <= 5; seq++)
        answered += ping(psock, peer, seq, 500) == seq;
    uint32_t intact = 0, resent = 0, bad = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t len = pattern(i, want);
        int ok = 0;
        for (int tries = 0; tries < 10 && !ok; tries++) {
            resent += tries > 0;
            int64_t err;
            while ((err = net_sendto(ep, usock, peer, ECHO_PORT, want, len)) == -E_AGAIN)
                sleep_ms(1);
            for (;;) {
                int64_t n = err ? err : recv_within(usock, 300, &from, &port);
                if (n < 0)
                    break;
                if (n == len && from == peer && port == ECHO_PORT && memcmp(buf, want, len) == 0) {
                    ok = 1;
                    break;
                }
                if (n == 0 || (n >= 4 && memcmp(buf, want, 4) != 0))
                    continue;                           /* a late echo of an earlier one */
                bad++;
            }
        }
        intact += ok;
    }
    if (tcp_bytes) {                                    /* 0 and 1 byte, then tcp_bytes with each module */
        tcp_echo_check(peer, 0, 0);
        tcp_echo_check(peer, 1, 0);
        for (uint32_t cc = 0; cc < 3; cc++)
            tcp_echo_check(peer, tcp_bytes, cc);
    }
    for (int i = 0; i < 3; i++)
        net_sendto(ep, usock, peer, ECHO_PORT, "quit", 4);
    printf("netpeer: %d/5 pings answered, %u/%u datagrams echoed intact (%u sent again, %u wrong)\n", answered,
           intact, count, resent, bad);
    return 0;
}

/* role=dhcp: lease an address, then watch the interface's address for
 * `secs` seconds, saying each change (tests/host/test_netdhcp.py plays
 * the server). */
static int dhcp_watch(uint32_t secs)
{
    uint32_t addr = 0, prefix = 0, gw = 0, dns = 0, lease = 0;
    int64_t err = net_dhcp(ep, &addr, &prefix, &gw, &dns, &lease);
    printf("netpeer: dhcp: error %ld, leased %x/%u via %x, dns %x, for %u s\n", (long)err, addr, prefix, gw, dns,
           lease);
    uint64_t mac = 0;
    uint32_t last = addr, mtu = 0, link = 0;
    for (uint32_t ms = 0; ms < secs * 1000; ms += 20) {
        net_info(ep, &mac, &addr, &prefix, &gw, &mtu, &link);
        if (addr != last)
            printf("netpeer: dhcp: address now %x\n", addr);
        last = addr;
        sleep_ms(20);
    }
    return 0;
}

/* role=busy: keep the stack busy for `secs` seconds with requests that
 * run on its own stack (datagrams of 2,000 bytes to itself over the
 * loopback, sent and taken back: copies through this client's buffers),
 * so that another caller of a kernel-placed stack (the kernel-placed
 * Linux personality, on another core) often finds it serving this one
 * and waits; every datagram checked. */
static int busy(uint32_t secs)
{
    static uint8_t out[2000], in[2000];
    uint64_t rounds = 0, wrong = 0;
    uint32_t sock = 0, port = 0;
    if (net_open(ep, 1, 0, &sock, &port) != 0) {
        printf("netpeer: busy: no socket\n");
        return 1;
    }
    int64_t end = sys_clock_ns() + (int64_t)secs * 1000000000;
    while (sys_clock_ns() < end) {
        for (unsigned i = 0; i < sizeof(out); i++)
            out[i] = (uint8_t)(rounds + i * 7);
        uint64_t got = 0;
        uint32_t from = 0, from_port = 0;
        int64_t err = net_sendto(ep, sock, 0x7f000001, port, out, sizeof(out));
        while (!err && (err = net_recvfrom(ep, sock, in, sizeof(in), &got, &from, &from_port)) == SVC_E_AGAIN)
            ;
        wrong += err != 0 || got != sizeof(out) || from != 0x7f000001 || from_port != port ||
                 memcmp(in, out, sizeof(out)) != 0;
        rounds++;
    }
    net_close(ep, sock);
    printf("netpeer: busy: %lu datagrams, %lu wrong\n", (unsigned long)rounds, (unsigned long)wrong);
    return wrong != 0;
}

/* role=hold n=K (systems/netreap-*.toml, the case services/net-reap):
 * client K, 40 ms after client K - 1, opens the 16 UDP sockets a client
 * may have, the first bound to port 41000 + K, and ends without closing
 * them. role=reap, after twenty of them: the service's 256 sockets are
 * full of ended clients', and client 1's port is taken; it opens 16
 * sockets, the first on client 1's port, which the service gives it only
 * if it let the ended clients' sockets go. */
#define HOLD_PORT   41000u
static int hold(uint32_t k, int reap)
{
    if (!reap)
        sleep_ms(40 * (uint64_t)k);             /* (one after another) */
    else
        sleep_ms(40 * 20 + 600);
    unsigned opened = 0;
    int64_t err = 0;
    for (unsigned i = 0; i < 16 && !err; i++) {
        uint32_t sock = 0, bound = 0;
        err = net_open(ep, 1, i == 0 ? HOLD_PORT + (reap ? 1 : k) : 0, &sock, &bound);
        opened += !err;
    }
    if (reap) {
        printf("netpeer: after twenty clients ended holding 16 sockets each, 16 more on client 1's port: %s "
               "(%u, error %ld)\n", opened == 16 ? "yes" : "no", opened, (long)err);
        return opened == 16 ? 0 : 1;
    }
    printf("netpeer: client %u holds %u sockets (error %ld)\n", k, opened, (long)err);
    exit_process(opened == 16 ? 0 : 1);         /* (its sockets left open) */
    return 1;
}

int main(void)
{
    char role[16];
    ep = start_handle("net");
    if (start_arg("role", role, sizeof(role)) && (!strcmp(role, "hold") || !strcmp(role, "reap")))
        return hold((uint32_t)start_arg_u64("n", 1), !strcmp(role, "reap"));
    if (!start_arg("role", role, sizeof(role)) || strcmp(role, "self") == 0)
        return self_test();
    if (strcmp(role, "dhcp") == 0)
        return dhcp_watch((uint32_t)start_arg_u64("secs", 10));
    if (strcmp(role, "busy") == 0)
        return busy((uint32_t)start_arg_u64("secs", 10));
    uint32_t prefix = 24, addr = arg_addr("addr", &prefix);
    int64_t err = net_config(ep, addr, prefix, 0);
    if (err) {
        printf("netpeer: cannot configure the address (error %ld)\n", (long)err);
        return 1;
    }
    if (strcmp(role, "echo") == 0)
        return echo();
    if (strcmp(role, "client") == 0)
        return client(arg_addr("peer", NULL), (uint32_t)start_arg_u64("n", 200), start_arg_u64("tcp", 0));
    printf("netpeer: role=self, role=echo, role=client, role=dhcp or role=busy\n");
    return 1;
}
