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
 *   then tells the peer "quit".
 *
 * Then it powers the machine off.
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

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    mount("proc", "/proc", "proc", 0, NULL);
    load_modules();
    const char *role = getenv("role"), *addr = getenv("addr"), *peer = getenv("peer"), *tcp = getenv("tcp");
    int err = if_up("lo", NULL) || !addr || if_up("eth0", addr);
    if (err)
        printf("lxnetpeer: the network did not come up\n");
    else if (role && strcmp(role, "echo") == 0)
        echo();
    else if (role && strcmp(role, "client") == 0 && peer)
        client(peer, tcp ? strtoull(tcp, NULL, 10) : 400000);
    else
        printf("lxnetpeer: role=echo or role=client peer=ADDR, and addr=ADDR\n");
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;
}
