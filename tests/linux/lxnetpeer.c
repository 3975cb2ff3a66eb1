/*
 * lxnetpeer: the Linux side of tests/host/test_netlink.py's Petrel-Linux
 * runs. Booted as init of Debian's kernel (the one the bench boots) on
 * the project's relay, it loads the virtio modules, brings up eth0 with
 * `addr` (/24) and lo, and plays one role, like Petrel's netpeer
 * (tests/programs/netpeer):
 *
 * - role=echo: echoes UDP datagrams and TCP streams on port 7 until a
 *   datagram says "quit" (the kernel answers pings);
 * - role=client: sends `tcp` bytes (byte i is i * 7 + i / 1021) through
 *   the peer's TCP echo on port 7 while checking what comes back, shuts
 *   its sending and reads to the end, says how it went in netpeer's words,
 *   then tells the peer "quit";
 * - role=oracle: Linux's stack as the judge of Petrel's (netpeer role=echo
 *   at `peer`): pings it, has it echo UDP datagrams of every size to
 *   3,000 bytes and then a stride and the fragment boundaries to 65,507,
 *   connects to a closed port and has Petrel connect to one of ours,
 *   sends 1 MiB and 64 MiB to its sink on port 9 and has it send as many
 *   to us, fills a listener's backlog (port 13) as it fills its own,
 *   holds 100 connections to its echo at once, and last opens a
 *   connection to its keepalive echo on port 17 and powers off without
 *   closing it (the peer vanishes). Each check says what it saw in one
 *   line that tests/host/test_netlink.py reads.
 * - role=up: only the modules, lo and eth0, then it exits (a command of
 *   /etc/lxrun run by tests/linux/init.c: `lxnetpeer role=up addr=ADDR`,
 *   the network of `./petrel bench --suite net`'s Linux side).
 *
 * The settings come from the environment (the kernel passes its unknown
 * boot arguments to init that way) or as KEY=VALUE arguments. Except as
 * role=up, it then powers the machine off.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PORT 7

static const char *const modules[] = { "virtio_mmio", "failover", "net_failover", "virtio_net" };

static uint8_t byte_at(uint64_t i) { return (uint8_t)(i * 7 + i / 1021); }

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void load_modules(void)
{
    for (unsigned i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/%s.ko", modules[i]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST))
            printf("lxnetpeer: cannot load %s: %s\n", modules[i], strerror(errno));
        close(fd);
    }
}

/* Give interface `name` the address (0: none) and bring it up. */
static int if_up(const char *name, const char *addr)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    for (int tries = 0; ioctl(s, SIOCGIFINDEX, &ifr) != 0; tries++) {
        if (tries == 500) {
            printf("lxnetpeer: no %s: %s\n", name, strerror(errno));
            return -1;
        }
        usleep(10000);                                  /* (the driver probes the device after loading) */
    }
    if (addr) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
        sin->sin_family = AF_INET;
        inet_pton(AF_INET, addr, &sin->sin_addr);
        if (ioctl(s, SIOCSIFADDR, &ifr) != 0)
            printf("lxnetpeer: SIOCSIFADDR: %s\n", strerror(errno));
        inet_pton(AF_INET, "255.255.255.0", &sin->sin_addr);
        if (ioctl(s, SIOCSIFNETMASK, &ifr) != 0)
            printf("lxnetpeer: SIOCSIFNETMASK: %s\n", strerror(errno));
    }
    ioctl(s, SIOCGIFFLAGS, &ifr);
    ifr.ifr_flags |= IFF_UP;
    int err = ioctl(s, SIOCSIFFLAGS, &ifr);
    close(s);
    return err;
}

static int bound(int type, int port)
{
    int s = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0)
        printf("lxnetpeer: bind %d: %s\n", port, strerror(errno));
    return s;
}

/* Write all of buf (blocking). */
static int write_all(int fd, const uint8_t *buf, size_t n)
{
    while (n) {
        ssize_t k = write(fd, buf, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

static int echo(void)
{
    static uint8_t buf[65536];
    int u = bound(SOCK_DGRAM, PORT), l = bound(SOCK_STREAM, PORT);
    listen(l, 16);
    struct pollfd fds[18] = { { u, POLLIN, 0 }, { l, POLLIN, 0 } };
    int n = 2;
    printf("lxnetpeer: echoing on UDP and TCP port %d\n", PORT);
    fflush(stdout);
    for (;;) {
        if (poll(fds, (nfds_t)n, -1) < 0)
            continue;
        if (fds[0].revents & POLLIN) {
            struct sockaddr_in from;
            socklen_t fl = sizeof(from);
            ssize_t k = recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
            if (k == 4 && memcmp(buf, "quit", 4) == 0)
                break;
            if (k >= 0)
                sendto(u, buf, (size_t)k, 0, (struct sockaddr *)&from, fl);
        }
        if ((fds[1].revents & POLLIN) && n < 18) {
            int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0)
                fds[n++] = (struct pollfd){ c, POLLIN, 0 };
        }
        for (int i = 2; i < n; i++) {
            if (!fds[i].revents)
                continue;
            ssize_t k = read(fds[i].fd, buf, sizeof(buf));
            if (k > 0 && write_all(fds[i].fd, buf, (size_t)k) == 0)
                continue;
            close(fds[i].fd);                           /* (the end, or an error) */
            fds[i--] = fds[--n];
        }
    }
    printf("lxnetpeer: echo done\n");
    return 0;
}

static int client(const char *peer, uint64_t total)
{
    static uint8_t chunk[8192], buf[8192];
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
    inet_pton(AF_INET, peer, &a.sin_addr);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int64_t t0 = now_ms();
    uint64_t sent = 0, got = 0, wrong = 0;
    long err = 0, eof = -1;
    for (int tries = 0; connect(c, (struct sockaddr *)&a, sizeof(a)) != 0; tries++) {
        if (tries == 50) {                              /* (the peer may still be booting) */
            err = -errno;
            break;
        }
        close(c);
        c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sleep(1);
    }
    fcntl(c, F_SETFL, O_NONBLOCK);
    while (!err && got < total && now_ms() - t0 < 90000) {
        struct pollfd p = { c, (short)(POLLIN | (sent < total ? POLLOUT : 0)), 0 };
        poll(&p, 1, 1000);
        if (sent < total && (p.revents & POLLOUT)) {
            size_t k = total - sent < sizeof(chunk) ? (size_t)(total - sent) : sizeof(chunk);
            for (size_t i = 0; i < k; i++)
                chunk[i] = byte_at(sent + i);
            ssize_t w = write(c, chunk, k);
            if (w > 0)
                sent += (uint64_t)w;
            else if (w < 0 && errno != EAGAIN)
                err = -errno;
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(c, buf, sizeof(buf));
            if (r == 0)
                break;
            if (r < 0 && errno != EAGAIN)
                err = -errno;
            for (ssize_t i = 0; i < r; i++)
                wrong += buf[i] != byte_at(got + (uint64_t)i);
            got += r > 0 ? (uint64_t)r : 0;
        }
    }
    int64_t ms = now_ms() - t0;
    shutdown(c, SHUT_WR);
    fcntl(c, F_SETFL, 0);
    if (!err) {
        struct timeval tv = { 10, 0 };
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        ssize_t r = read(c, buf, 16);
        eof = r < 0 ? -errno : r;
    }
    struct tcp_info ti;
    socklen_t tl = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &tl);
    close(c);
    printf("netpeer: tcp cubic: %llu/%llu bytes echoed, %llu wrong, in %lld ms; %u segments sent again; "
           "then the end (%ld), state %u, error %ld\n", (unsigned long long)got, (unsigned long long)total,
           (unsigned long long)wrong, (long long)ms, ti.tcpi_total_retrans, eof, ti.tcpi_state, err);
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (int i = 0; i < 3; i++) {
        sendto(u, "quit", 4, 0, (struct sockaddr *)&a, sizeof(a));
        usleep(100000);                                 /* (out of the NIC before the power goes) */
    }
    return 0;
}

/* ---------------------------------------------------------------- role=oracle */

static struct sockaddr_in peer_port(const char *peer, int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, peer, &a.sin_addr);
    return a;
}

/* Wait for `events` on fd for at most ms milliseconds: the revents (0: none). */
static int ready(int fd, short events, int ms)
{
    struct pollfd p = { fd, events, 0 };
    return poll(&p, 1, ms) == 1 ? p.revents : 0;
}

/* netpeer's check of a stream: h = h * 31 + byte, 32 bits. */
static uint32_t hash_bytes(uint32_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = h * 31 + p[i];
    return h;
}

/* Pings of 0 to 65,507 bytes of data from an ICMP echo socket: each reply
 * must carry its request's sequence number and data. */
static void oracle_ping(const char *peer)
{
    static const int sizes[] = { 56, 0, 56, 1472, 1473, 4000, 65507 };
    static uint8_t req[65535], rep[65535];
    int fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0 2147483647", 12) != 12)
        printf("lxnetpeer: ping_group_range: %s\n", strerror(errno));
    close(fd);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
    struct sockaddr_in to = peer_port(peer, 0);
    int n = (int)(sizeof(sizes) / sizeof(sizes[0])), answered = 0, wrong = 0;
    for (int i = 0; i < n; i++) {
        uint16_t seq = (uint16_t)(i + 1);
        size_t len = 8 + (size_t)sizes[i];
        memset(req, 0, 8);
        req[0] = 8;                                     /* (the kernel sets the identifier and checksum) */
        req[6] = (uint8_t)(seq >> 8);
        req[7] = (uint8_t)seq;
        for (size_t k = 8; k < len; k++)
            req[k] = (uint8_t)(k * 3 + seq);
        if (sendto(s, req, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len)
            printf("lxnetpeer: ping %u: %s\n", seq, strerror(errno));
        while (ready(s, POLLIN, 2000)) {
            ssize_t k = recv(s, rep, sizeof(rep), 0);
            if (k >= 8 && rep[0] == 0 && (rep[6] << 8 | rep[7]) == seq) {
                answered++;
                wrong += (size_t)k != len || memcmp(rep + 8, req + 8, len - 8) != 0;
                break;
            }
        }
    }
    close(s);
    printf("lxnetpeer: ping: %d/%d answered with their sequence numbers, %d with wrong data\n", answered, n,
           wrong);
}

/* The UDP sizes: every one to 1,600 bytes, then every 7th to 3,000, the
 * payloads filling k fragments of 1,480 bytes exactly and a byte either
 * side, every 1,009th from 3,000, and 65,506 and 65,507. */
static int udp_sizes(int *sizes)
{
    int n = 0;
    for (int len = 0; len <= 1600; len++)
        sizes[n++] = len;
    for (int len = 1607; len <= 3000; len += 7)
        sizes[n++] = len;
    for (int k = 2; k * 1480 - 8 - 1 <= 65507; k++)
        for (int d = -1; d <= 1; d++)
            if (k * 1480 - 8 + d <= 65507)
                sizes[n++] = k * 1480 - 8 + d;
    for (int len = 3000 + 1009; len < 65506; len += 1009)
        sizes[n++] = len;
    sizes[n++] = 65506;
    sizes[n++] = 65507;
    return n;
}

/* Each size through Petrel's UDP echo, one at a time: the echo must be
 * the datagram, byte for byte (sent again after 1 s without it). */
static void oracle_udp(int u, const char *peer)
{
    static int sizes[2000];
    static uint8_t out[65507], in[65536];
    struct sockaddr_in to = peer_port(peer, PORT);
    int n = udp_sizes(sizes), intact = 0, again = 0, wrong = 0;
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)sizes[i];
        for (size_t k = 0; k < len; k++)
            out[k] = (uint8_t)(k * 7 + len * 13 + 1);  /* (never "quit", "stats?" or "connect ") */
        int ok = 0;
        for (int tries = 0; tries < 3 && !ok; tries++) {
            again += tries > 0;
            sendto(u, out, len, 0, (struct sockaddr *)&to, sizeof(to));
            while (!ok && ready(u, POLLIN, 1000)) {
                ssize_t k = recv(u, in, sizeof(in), 0);
                if (k == (ssize_t)len && memcmp(in, out, len) == 0)
                    ok = 1;
                else if (k >= 0 && (size_t)k == len)
                    wrong++;
            }
        }
        intact += ok;
    }
    printf("lxnetpeer: udp: %d/%d sizes echoed intact (%d sent again, %d wrong), the largest %d bytes\n", intact, n,
           again, wrong, sizes[n - 1]);
}

/* Ask Petrel's echo (UDP) to do `cmd` and answer its line (a stale echo
 * ignored); "" after `ms` without one. */
static const char *ask(int u, const char *peer, const char *cmd, int ms)
{
    static char line[256];
    struct sockaddr_in to = peer_port(peer, PORT);
    sendto(u, cmd, strlen(cmd), 0, (struct sockaddr *)&to, sizeof(to));
    while (ready(u, POLLIN, ms)) {
        ssize_t k = recv(u, line, sizeof(line) - 1, 0);
        if (k > 8 && memcmp(line, cmd, 7) == 0) {       /* ("connect" answers "connect: ...") */
            line[k] = 0;
            return line;
        }
    }
    return "";
}

/* A connection to Petrel's closed port 23 (its RST: ECONNREFUSED), and
 * Petrel's to our closed port 24 (ours). */
static void oracle_refused(int u, const char *peer)
{
    struct sockaddr_in to = peer_port(peer, 23);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int r = connect(c, (struct sockaddr *)&to, sizeof(to)), e = r ? errno : 0;
    close(c);
    printf("lxnetpeer: refused: connecting to Petrel's closed port 23: %d, errno %d (%s)\n", r, e, strerror(e));
    printf("lxnetpeer: refused: Petrel connecting to our closed port 24: %s\n", ask(u, peer, "connect 24 0", 30000));
}

/* `total` bytes of byte_at() to Petrel's sink on port 9, then its line. */
static void oracle_to_sink(const char *peer, uint64_t total)
{
    static uint8_t chunk[65536];
    static char line[256];
    struct sockaddr_in to = peer_port(peer, 9);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uint64_t sent = 0;
    uint32_t h = 0;
    long err = 0;
    int64_t t0 = now_ms();
    if (connect(c, (struct sockaddr *)&to, sizeof(to)) != 0)
        err = -errno;
    struct timeval tv = { 120, 0 };
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    while (!err && sent < total) {
        size_t k = total - sent < sizeof(chunk) ? (size_t)(total - sent) : sizeof(chunk);
        for (size_t i = 0; i < k; i++)
            chunk[i] = byte_at(sent + i);
        h = hash_bytes(h, chunk, k);
        if (write_all(c, chunk, k) != 0)
            err = -errno;
        sent += err ? 0 : k;
    }
    int64_t ms = now_ms() - t0;
    shutdown(c, SHUT_WR);
    size_t got = 0;
    for (ssize_t k = 1; k > 0 && got < sizeof(line) - 1; got += k > 0 ? (size_t)k : 0)
        k = read(c, line + got, sizeof(line) - 1 - got);
    line[got] = 0;
    close(c);
    printf("lxnetpeer: tcp to Petrel: sent %llu bytes, hash %08x, in %lld ms (error %ld); Petrel says: %s\n",
           (unsigned long long)sent, h, (long long)ms, err, line);
}

/* Have Petrel connect to our port 5001 and send `total` bytes; every one
 * checked as it comes, then the end; its line. */
static void oracle_from_source(int u, const char *peer, uint64_t total)
{
    static uint8_t buf[65536];
    char cmd[48];
    int l = bound(SOCK_STREAM, 5001);
    listen(l, 1);
    snprintf(cmd, sizeof(cmd), "connect 5001 %llu", (unsigned long long)total);
    struct sockaddr_in to = peer_port(peer, PORT);
    sendto(u, cmd, strlen(cmd), 0, (struct sockaddr *)&to, sizeof(to));
    uint64_t got = 0, wrong = 0;
    uint32_t h = 0;
    long err = 0;
    int64_t t0 = now_ms();
    int c = ready(l, POLLIN, 10000) ? accept4(l, NULL, NULL, SOCK_CLOEXEC) : -1;
    if (c < 0)
        err = -ETIMEDOUT;
    struct timeval tv = { 30, 0 };
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (ssize_t k = 1; !err && k > 0;) {
        k = read(c, buf, sizeof(buf));
        if (k < 0)
            err = -errno;
        for (ssize_t i = 0; i < k; i++)
            wrong += buf[i] != byte_at(got + (uint64_t)i);
        h = hash_bytes(h, buf, k > 0 ? (size_t)k : 0);
        got += k > 0 ? (uint64_t)k : 0;
    }
    int64_t ms = now_ms() - t0;
    close(c);
    close(l);
    char line[256] = "";
    while (ready(u, POLLIN, 30000)) {                   /* (its answer, once it read our end) */
        ssize_t k = recv(u, line, sizeof(line) - 1, 0);
        line[k > 0 ? k : 0] = 0;
        if (strncmp(line, "connect:", 8) == 0)
            break;
    }
    printf("lxnetpeer: tcp from Petrel: got %llu bytes, %llu wrong, hash %08x, in %lld ms (error %ld); "
           "Petrel says: %s\n", (unsigned long long)got, (unsigned long long)wrong, h, (long long)ms, err, line);
}

/* `n` connections to Petrel's echo, all connected before any sends, each
 * sending 100 bytes of its own and reading them back; all still
 * established when the last echo is in, then all closed. */
static void oracle_many(const char *peer, int n)
{
    static int fd[100];
    struct sockaddr_in to = peer_port(peer, PORT);
    int connected = 0, intact = 0, established = 0;
    for (int i = 0; i < n; i++) {
        fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        connect(fd[i], (struct sockaddr *)&to, sizeof(to));
    }
    for (int i = 0; i < n; i++) {
        int e = 0;
        socklen_t el = sizeof(e);
        if (ready(fd[i], POLLOUT, 30000) && getsockopt(fd[i], SOL_SOCKET, SO_ERROR, &e, &el) == 0 && !e)
            connected++;
    }
    for (int i = 0; i < n; i++) {
        uint8_t msg[100];
        for (int k = 0; k < 100; k++)
            msg[k] = (uint8_t)(i * 101 + k);
        if (write(fd[i], msg, sizeof(msg)) != (ssize_t)sizeof(msg))
            printf("lxnetpeer: connection %d: write: %s\n", i, strerror(errno));
    }
    for (int i = 0; i < n; i++) {
        uint8_t back[100];
        size_t got = 0;
        while (got < sizeof(back) && ready(fd[i], POLLIN, 30000)) {
            ssize_t k = read(fd[i], back + got, sizeof(back) - got);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        int ok = got == sizeof(back);
        for (int k = 0; ok && k < 100; k++)
            ok = back[k] == (uint8_t)(i * 101 + k);
        intact += ok;
    }
    for (int i = 0; i < n; i++) {
        struct tcp_info ti;
        socklen_t tl = sizeof(ti);
        memset(&ti, 0, sizeof(ti));
        getsockopt(fd[i], IPPROTO_TCP, TCP_INFO, &ti, &tl);
        established += ti.tcpi_state == TCP_ESTABLISHED;
    }
    for (int i = 0; i < n; i++)
        close(fd[i]);
    printf("lxnetpeer: %d connections: %d connected, %d echoed intact, %d still established before any closed\n",
           n, connected, intact, established);
}

/* Five connections, 200 ms apart, to `addr`:13, a listener with a backlog
 * of 2 that never accepts: how many are established and how many are
 * still waiting (their SYNs dropped, not refused) 1.5 s after the last. */
static void backlog_count(const char *addr, int *established, int *waiting)
{
    int fd[5];
    struct sockaddr_in to = peer_port(addr, 13);
    *established = *waiting = 0;
    for (int i = 0; i < 5; i++) {
        fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        connect(fd[i], (struct sockaddr *)&to, sizeof(to));
        usleep(200000);
    }
    usleep(1500000);
    for (int i = 0; i < 5; i++) {
        struct tcp_info ti;
        socklen_t tl = sizeof(ti);
        memset(&ti, 0, sizeof(ti));
        getsockopt(fd[i], IPPROTO_TCP, TCP_INFO, &ti, &tl);
        *established += ti.tcpi_state == TCP_ESTABLISHED;
        *waiting += ti.tcpi_state == TCP_SYN_SENT;
        close(fd[i]);
    }
}

/* The same against Petrel's listener on port 13 and Linux's own. */
static void oracle_backlog(const char *peer)
{
    int pe, pw, le, lw, l = bound(SOCK_STREAM, 13);
    listen(l, 2);
    backlog_count(peer, &pe, &pw);
    backlog_count("127.0.0.1", &le, &lw);
    close(l);
    printf("lxnetpeer: backlog 2, never accepted, 5 connecting: Petrel's %d established, %d waiting; "
           "Linux's own %d established, %d waiting\n", pe, pw, le, lw);
}

/* A connection to Petrel's keepalive echo (port 17) that works, then the
 * machine goes without closing it: Petrel must give it up (ETIMEDOUT). */
static void oracle_vanish(int u, const char *peer)
{
    struct sockaddr_in to = peer_port(peer, 17);
    char back[16] = "";
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = { 10, 0 };
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ssize_t k = -1;
    if (connect(c, (struct sockaddr *)&to, sizeof(to)) == 0 && write(c, "still there?", 12) == 12)
        k = read(c, back, 12);
    printf("lxnetpeer: vanishing with a connection open to port 17 (its echo: %zd bytes)\n", k);
    struct sockaddr_in echo = peer_port(peer, PORT);
    for (int i = 0; i < 3; i++) {
        sendto(u, "quit", 4, 0, (struct sockaddr *)&echo, sizeof(echo));
        usleep(100000);                                 /* (out of the NIC before the power goes) */
    }
}

static int oracle(const char *peer)
{
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), big = 4 << 20;
    setsockopt(u, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    oracle_ping(peer);
    oracle_udp(u, peer);
    oracle_refused(u, peer);
    oracle_to_sink(peer, 1 << 20);
    oracle_to_sink(peer, 64 << 20);
    oracle_from_source(u, peer, 1 << 20);
    oracle_from_source(u, peer, 64 << 20);
    oracle_backlog(peer);
    oracle_many(peer, 100);
    oracle_vanish(u, peer);
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq) {
            *eq = 0;
            setenv(argv[i], eq + 1, 1);
        }
    }
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    mount("proc", "/proc", "proc", 0, NULL);
    load_modules();
    const char *role = getenv("role"), *addr = getenv("addr"), *peer = getenv("peer"), *tcp = getenv("tcp");
    int err = if_up("lo", NULL) || !addr || if_up("eth0", addr);
    if (err)
        printf("lxnetpeer: the network did not come up\n");
    if (role && strcmp(role, "up") == 0)
        return err ? 1 : 0;
    if (err)
        ;                                               /* (said above) */
    else if (role && strcmp(role, "echo") == 0)
        echo();
    else if (role && strcmp(role, "client") == 0 && peer)
        client(peer, tcp ? strtoull(tcp, NULL, 10) : 400000);
    else if (role && strcmp(role, "oracle") == 0 && peer)
        oracle(peer);
    else
        printf("lxnetpeer: role=up, role=echo, role=client or role=oracle with peer=ADDR, and addr=ADDR\n");
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;
}
