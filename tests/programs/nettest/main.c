/*
 * nettest: the network device service (idl/netdev.toml, services/netdev)
 * through its generated proxies, on QEMU's user-mode network with
 * restrict=on (tests/guest/cases.toml, net = "isolated"): the device's
 * address and link, the errors of bad requests, an ARP request answered by
 * QEMU's gateway (10.0.2.2), an ICMP echo it reflects, and a burst of
 * sends past the transmit ring's size, paced by E_AGAIN and `wait`.
 * tests/host/test_netpcap.py then judges the recorded frames with tshark.
 */
#include "petrel.h"
#include "netdev_if.h"

#define FRAME_MAX   1514
#define BURST       200

static uint32_t dev;
static const uint8_t gw_ip[4] = { 10, 0, 2, 2 }, my_ip[4] = { 10, 0, 2, 15 };
static uint8_t my_mac[6], gw_mac[6];
static uint8_t frame[FRAME_MAX];

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* The Internet checksum (RFC 1071) of len bytes. */
static uint16_t csum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += get16(p + i);
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* An ARP request (RFC 826) for `target`, from us; `announce`: for our own address. */
static size_t arp_request(uint8_t *f, const uint8_t *target)
{
    memset(f, 0xff, 6);
    memcpy(f + 6, my_mac, 6);
    put16(f + 12, 0x0806);
    uint8_t *a = f + 14;
    put16(a, 1);                    /* Ethernet */
    put16(a + 2, 0x0800);           /* IPv4 */
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, 1);                /* request */
    memcpy(a + 8, my_mac, 6);
    memcpy(a + 14, my_ip, 4);
    memset(a + 18, 0, 6);
    memcpy(a + 24, target, 4);
    memset(f + 42, 0, 18);          /* padded to the least Ethernet payload */
    return 60;
}

/* Receive frames until `match` takes one or `ms` pass; its length or 0. */
static size_t await(bool (*match)(const uint8_t *, size_t), int ms)
{
    for (int waited = 0; waited <= ms; ) {
        uint64_t n = 0;
        int64_t err = netdev_recv(dev, frame, sizeof(frame), &n);
        if (err == 0 && match(frame, n))
            return n;
        if (err == -E_AGAIN) {
            sleep_ms(5);
            waited += 5;
        } else if (err != 0) {
            return 0;
        }
    }
    return 0;
}

static bool is_arp_reply(const uint8_t *f, size_t n)
{
    return n >= 42 && get16(f + 12) == 0x0806 && get16(f + 20) == 2 && memcmp(f + 28, gw_ip, 4) == 0 &&
           memcmp(f + 32, my_mac, 6) == 0 && memcmp(f + 38, my_ip, 4) == 0 && memcmp(f, my_mac, 6) == 0;
}

#define ECHO_ID     0x5e7a
#define ECHO_SEQ    7
#define ECHO_DATA   56

static bool is_echo_reply(const uint8_t *f, size_t n)
{
    const uint8_t *ip = f + 14, *icmp = ip + 20;
    if (n < 14 + 20 + 8 + ECHO_DATA || get16(f + 12) != 0x0800 || ip[0] != 0x45 || ip[9] != 1 ||
        memcmp(ip + 12, gw_ip, 4) != 0 || memcmp(ip + 16, my_ip, 4) != 0 || csum(ip, 20) != 0)
        return false;
    if (icmp[0] != 0 || get16(icmp + 4) != ECHO_ID || get16(icmp + 6) != ECHO_SEQ || csum(icmp, 8 + ECHO_DATA) != 0)
        return false;
    for (int i = 0; i < ECHO_DATA; i++)
        if (icmp[8 + i] != (uint8_t)(i * 3))
            return false;
    return true;
}

static size_t echo_request(uint8_t *f)
{
    memcpy(f, gw_mac, 6);
    memcpy(f + 6, my_mac, 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14, *icmp = ip + 20;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, 20 + 8 + ECHO_DATA);
    put16(ip + 4, 1);
    put16(ip + 6, 0x4000);          /* don't fragment */
    ip[8] = 64;
    ip[9] = 1;                      /* ICMP */
    memcpy(ip + 12, my_ip, 4);
    memcpy(ip + 16, gw_ip, 4);
    put16(ip + 10, csum(ip, 20));
    memset(icmp, 0, 8);
    icmp[0] = 8;                    /* echo request */
    put16(icmp + 4, ECHO_ID);
    put16(icmp + 6, ECHO_SEQ);
    for (int i = 0; i < ECHO_DATA; i++)
        icmp[8 + i] = (uint8_t)(i * 3);
    put16(icmp + 2, csum(icmp, 8 + ECHO_DATA));
    return 14 + 20 + 8 + ECHO_DATA;
}

int main(void)
{
    dev = start_handle("netdev");
    uint64_t mac = 0;
    uint32_t frame_max = 0, link = 0;
    int64_t err = netdev_info(dev, &mac, &frame_max, &link);
    for (int i = 0; i < 6; i++)
        my_mac[i] = (uint8_t)(mac >> (8 * i));
    tap_ok(err == 0 && mac == 0x563412005452ull && frame_max == FRAME_MAX && link == 1,
           "netdev: the device is up with QEMU's MAC 52:54:00:12:34:56 and 1,514-byte frames (err %ld, link %u)",
           (long)err, link);

    /* Bad requests: refused, nothing sent. */
    uint64_t n = 0;
    uint8_t small[100];
    tap_ok(netdev_send(dev, frame, 13) == -E_INVAL && netdev_send(dev, frame, FRAME_MAX + 1) == -E_INVAL &&
           netdev_send(dev, (void *)0x10, 60) == -E_FAULT && netdev_recv(dev, small, sizeof(small), &n) == -E_INVAL &&
           netdev_wait(dev, 0) == -E_INVAL && netdev_wait(dev, 3) == -E_INVAL,
           "netdev: short, long and unreadable frames, a small buffer and a bad wait are refused");

    /* ARP: QEMU's gateway answers for 10.0.2.2. */
    size_t len = arp_request(frame, gw_ip);
    err = netdev_send(dev, frame, len);
    int64_t waited = err ? err : netdev_wait(dev, 1);
    size_t got = waited ? 0 : await(is_arp_reply, 3000);
    if (got)
        memcpy(gw_mac, frame + 22, 6);
    tap_ok(got && gw_mac[0] == 0x52 && gw_mac[1] == 0x55,
           "netdev: an ARP request for 10.0.2.2 is answered by %02x:%02x:%02x:%02x:%02x:%02x (send %ld, wait %ld)",
           gw_mac[0], gw_mac[1], gw_mac[2], gw_mac[3], gw_mac[4], gw_mac[5], (long)err, (long)waited);

    /* A frame waiting is not lost by a recv into a bad buffer. */
    len = echo_request(frame);
    err = netdev_send(dev, frame, len);
    waited = err ? err : netdev_wait(dev, 1);
    int64_t bad = netdev_recv(dev, (void *)0x10, FRAME_MAX, &n);
    got = waited ? 0 : await(is_echo_reply, 3000);
    tap_ok(got && bad == -E_FAULT, "netdev: an ICMP echo to 10.0.2.2 comes back intact, after a recv into a bad "
           "buffer left it waiting (%ld)", (long)bad);

    /* A burst of ARP announcements past the ring: E_AGAIN, then room after wait. */
    uint64_t tx0 = 0, txb0, rx0, rxb0, ints0;
    netdev_stats(dev, &tx0, &txb0, &rx0, &rxb0, &ints0);
    int sent = 0, full = 0;
    len = arp_request(frame, my_ip);
    while (sent < BURST) {
        err = netdev_send(dev, frame, len);
        if (err == 0) {
            sent++;
        } else if (err == -E_AGAIN) {
            full++;
            if ((err = netdev_wait(dev, 2)) != 0)
                break;
        } else {
            break;
        }
    }
    uint64_t tx1 = 0, txb1 = 0, rx1 = 0, rxb1 = 0, ints1 = 0;
    netdev_stats(dev, &tx1, &txb1, &rx1, &rxb1, &ints1);
    tap_ok(sent == BURST && tx1 - tx0 == BURST && txb1 - txb0 == (uint64_t)BURST * len,
           "netdev: %d frames sent in a burst (the ring full %d times), all counted", sent, full);
    tap_ok(rx1 >= 2 && ints1 >= 1, "netdev: %lu frames received, %lu interrupts", (unsigned long)rx1,
           (unsigned long)ints1);
    tap_plan();
    return 0;
}
