/*
 * netpair: frames between two Petrel machines joined by the project's own
 * link (tools/petrel/netrelay.py), through the network device service.
 * role=send sends n numbered frames of every size from 60 to 1,514 bytes
 * (EtherType 0x88b5, for local experiments), each carrying its number and
 * a CRC-32 of its payload, then an end frame a few times; role=recv
 * counts what arrives until the end frame or 10 s of silence, and says how
 * many were good, corrupted, duplicated, out of order and missing, which
 * tests/host/test_netlink.py compares with what the relay did to them.
 */
#include "petrel.h"
#include "netdev_if.h"

#define ETHERTYPE   0x88b5
#define HDR         (14 + 12)           /* Ethernet, then number, kind, length, CRC */
#define FRAME_MAX   1514
#define KIND_DATA   1
#define KIND_END    2
#define MAX_N       100000

static uint32_t dev;
static uint8_t frame[FRAME_MAX];
static uint8_t seen[MAX_N / 8 + 1];

static void put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static size_t make(uint32_t seq, uint32_t kind, const uint8_t *mac)
{
    size_t len = kind == KIND_END ? 60 : 60 + (size_t)(seq * 97u % (FRAME_MAX - 60 + 1));
    memset(frame, 0xff, 6);
    memcpy(frame + 6, mac, 6);
    frame[12] = ETHERTYPE >> 8;
    frame[13] = ETHERTYPE & 0xff;
    put32(frame + 14, seq);
    put32(frame + 18, kind << 16 | (uint32_t)len);
    for (size_t i = HDR; i < len; i++)
        frame[i] = (uint8_t)(seq * 31 + i * 7);
    put32(frame + 22, crc32(frame + HDR, len - HDR));
    return len;
}

static uint32_t ring_full;              /* sends that found the transmit ring full */

static int send_one(size_t len)
{
    for (;;) {
        int64_t err = netdev_send(dev, frame, len);
        if (err != -E_AGAIN)
            return (int)err;
        ring_full++;
        if ((err = netdev_wait(dev, 2)) != 0)
            return (int)err;
    }
}

static int sender(uint32_t n, const uint8_t *mac)
{
    for (uint32_t seq = 0; seq < n; seq++) {
        int err = send_one(make(seq, KIND_DATA, mac));
        if (err) {
            printf("netpair: send %u: error %d\n", seq, err);
            return 1;
        }
        if (seq % 8 == 7)
            sleep_ms(1);                    /* a pace the relay's queue keeps up with */
    }
    for (int i = 0; i < 5; i++) {
        sleep_ms(200);
        send_one(make(n, KIND_END, mac));
    }
    printf("netpair: sent %u frames (the ring full %u times)\n", n, ring_full);
    return 0;
}

static int receiver(uint32_t n)
{
    uint32_t good = 0, bad = 0, dups = 0, late = 0, highest = 0, other = 0;
    bool any = false, ended = false;
    int quiet = 0;
    while (!ended && quiet < 10000) {
        uint64_t len = 0;
        int64_t err = netdev_recv(dev, frame, sizeof(frame), &len);
        if (err == -E_AGAIN) {
            sleep_ms(2);
            quiet += 2;
            continue;
        }
        if (err) {
            printf("netpair: recv: error %ld\n", (long)err);
            return 1;
        }
        quiet = 0;
        if (len < HDR || frame[12] != ETHERTYPE >> 8 || frame[13] != (ETHERTYPE & 0xff)) {
            other++;
            continue;
        }
        uint32_t seq = get32(frame + 14), kind = get32(frame + 18) >> 16, flen = get32(frame + 18) & 0xffff;
        if (flen != len || crc32(frame + HDR, len - HDR) != get32(frame + 22) || kind < KIND_DATA ||
            kind > KIND_END || seq > n || (kind == KIND_DATA) != (seq < n)) {
            bad++;                          /* (a number, kind or length hit by the corruption counts too) */
            continue;
        }
        if (kind == KIND_END) {
            ended = true;
            continue;
        }
        if (seen[seq / 8] & (1u << (seq % 8))) {
            dups++;
            continue;
        }
        seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
        if (any && seq < highest)
            late++;
        if (!any || seq > highest)
            highest = seq;
        any = true;
        good++;
    }
    printf("netpair: received %u good, %u corrupted, %u duplicates, %u out of order, %u missing, %u other%s\n",
           good, bad, dups, late, n - good, other, ended ? "" : " (no end frame)");
    return ended ? 0 : 1;
}

int main(void)
{
    dev = start_handle("netdev");
    uint64_t mac = 0;
    uint32_t frame_max = 0, link = 0;
    int64_t err = netdev_info(dev, &mac, &frame_max, &link);
    if (err) {
        printf("netpair: no network device (error %ld)\n", (long)err);
        return 1;
    }
    uint8_t m[6];
    for (int i = 0; i < 6; i++)
        m[i] = (uint8_t)(mac >> (8 * i));
    uint32_t n = (uint32_t)start_arg_u64("n", 1000);
    if (n > MAX_N)
        n = MAX_N;
    char role[8] = "";
    start_arg("role", role, sizeof(role));
    if (!strcmp(role, "send"))
        return sender(n, m);
    if (!strcmp(role, "recv"))
        return receiver(n);
    printf("netpair: role=send or role=recv\n");
    return 2;
}
