/*
 * AF_INET sockets over the loopback interface: TCP (bind, listen, accept4
 * across fork, blocking and non-blocking connect, 1 MiB each way with a
 * checksum, shutdown and the end of the stream, names, options, poll
 * states, the errors of each call) and UDP (sendto/recvfrom, truncation,
 * a 60,000-byte datagram, connected sockets), MSG_PEEK on both, and small
 * SO_SNDBUF and SO_RCVBUF, TCP_INFO's fields after a transfer, and the
 * counters of /proc/net/snmp an exchange moves. Ports the system picks are
 * not printed (Linux and Petrel pick from different ranges).
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define PORT 5301

static struct sockaddr_in loop_addr(int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static int polled(int fd)
{
    struct pollfd p = { fd, POLLIN | POLLOUT | POLLRDHUP, 0 };
    poll(&p, 1, 0);
    return p.revents;
}

static void show_name(const char *what, int fd, int peer, int with_port)
{
    struct sockaddr_in a;
    memset(&a, 0x55, sizeof(a));
    socklen_t len = sizeof(a);
    errno = 0;
    int r = peer ? getpeername(fd, (struct sockaddr *)&a, &len) : getsockname(fd, (struct sockaddr *)&a, &len);
    if (r < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    printf("%s: len %u family %d addr %s", what, (unsigned)len, a.sin_family, inet_ntoa(a.sin_addr));
    if (with_port)
        printf(" port %d\n", ntohs(a.sin_port));
    else
        printf(" port %s\n", ntohs(a.sin_port) ? "some" : "0");
}

static uint8_t byte_at(uint64_t i) { return (uint8_t)(i * 7 + i / 1021); }

/* Write n bytes of byte_at from `from` on fd; how many went. */
static uint64_t send_pattern(int fd, uint64_t n)
{
    static uint8_t chunk[8192];
    uint64_t sent = 0;
    while (sent < n) {
        uint64_t k = n - sent < sizeof(chunk) ? n - sent : sizeof(chunk);
        for (uint64_t i = 0; i < k; i++)
            chunk[i] = byte_at(sent + i);
        ssize_t w = write(fd, chunk, k);
        if (w <= 0)
            break;
        sent += (uint64_t)w;
    }
    return sent;
}

/* Read to the end of the stream, checking every byte; prints what came. */
static void recv_pattern(const char *what, int fd)
{
    static uint8_t buf[7000];
    uint64_t got = 0, wrong = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < r; i++)
            wrong += buf[i] != byte_at(got + (uint64_t)i);
        got += (uint64_t)r;
    }
    printf("%s: %llu bytes, %llu wrong, end %s\n", what, (unsigned long long)got, (unsigned long long)wrong,
           r == 0 ? "0" : errname(errno));
}

static void tcp_basics(void)
{
    SHOW("socket stream", socket(AF_INET, SOCK_STREAM, 0) >= 0);
    SHOW("socket stream tcp", socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) >= 0);
    SHOW("socket stream udp", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP));
    SHOW("socket seqpacket", socket(AF_INET, SOCK_SEQPACKET, 0));
    SHOW("socket bad type", socket(AF_INET, 77, 0));
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int v = -1;
    socklen_t len = sizeof(v);
    getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len);
    printf("SO_TYPE %d", v);
    getsockopt(s, SOL_SOCKET, SO_DOMAIN, &v, &len);
    printf(" SO_DOMAIN %d", v);
    getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &v, &len);
    printf(" SO_PROTOCOL %d", v);
    getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &v, &len);
    printf(" SO_ACCEPTCONN %d\n", v);
    char cc[16] = { 0 };
    len = sizeof(cc);
    SHOW("TCP_CONGESTION get", getsockopt(s, IPPROTO_TCP, TCP_CONGESTION, cc, &len));
    printf("congestion: %s (%u)\n", cc, (unsigned)len);
    SHOW("TCP_CONGESTION reno", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, "reno", 4));
    SHOW("TCP_CONGESTION bogus", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, "bogus", 5));
    len = sizeof(cc);
    getsockopt(s, IPPROTO_TCP, TCP_CONGESTION, cc, &len);
    printf("congestion now: %s\n", cc);
    v = 1;
    SHOW("TCP_NODELAY set", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)));
    v = -1;
    len = sizeof(v);
    getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &len);
    printf("TCP_NODELAY %d\n", v);
    v = 10000;
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
    len = sizeof(v);
    getsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, &len);
    printf("SO_SNDBUF %d\n", v);
    SHOW("TCP_NODELAY short", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, 2));
    SHOW("unknown level", setsockopt(s, 999, 1, &v, sizeof(v)) < 0 ? -1 : 0);
    show_name("new socket name", s, 0, 1);
    show_name("new socket peer", s, 1, 1);
    printf("new socket poll %#x\n", polled(s));
    char b[4];
    SHOW("recv unconnected", recv(s, b, sizeof(b), 0));
    SHOW("send unconnected", send(s, "x", 1, MSG_NOSIGNAL));
    SHOW("accept unlistening", accept(s, NULL, NULL));
    struct sockaddr_in a = loop_addr(PORT + 9);
    SHOW("connect refused", connect(s, (struct sockaddr *)&a, sizeof(a)));
    a.sin_family = AF_UNIX;
    SHOW("connect bad family", connect(s, (struct sockaddr *)&a, sizeof(a)));
    a = loop_addr(PORT);
    SHOW("bind short", bind(s, (struct sockaddr *)&a, 8));
    a.sin_addr.s_addr = htonl(0x0a0b0c0d);
    SHOW("bind foreign address", bind(s, (struct sockaddr *)&a, sizeof(a)));
    close(s);
}

static void tcp_server_client(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loop_addr(PORT);
    SHOW("bind", bind(l, (struct sockaddr *)&a, sizeof(a)));
    SHOW("bind again", bind(l, (struct sockaddr *)&a, sizeof(a)));
    int other = socket(AF_INET, SOCK_STREAM, 0);
    SHOW("listen", listen(l, 4));
    SHOW("bind taken port", bind(other, (struct sockaddr *)&a, sizeof(a)));
    close(other);
    show_name("listener name", l, 0, 1);
    int v = -1;
    socklen_t len = sizeof(v);
    getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len);
    printf("listener SO_ACCEPTCONN %d poll %#x\n", v, polled(l));
    fcntl(l, F_SETFL, O_NONBLOCK);
    SHOW("accept nothing yet", accept(l, NULL, NULL));
    fcntl(l, F_SETFL, 0);

    pid_t child = fork();
    if (child == 0) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in to = loop_addr(PORT);
        if (connect(c, (struct sockaddr *)&to, sizeof(to)) != 0) {
            printf("child: connect %s\n", errname(errno));
            _exit(1);
        }
        write(c, "hello", 5);
        char buf[16] = { 0 };
        ssize_t n = read(c, buf, sizeof(buf) - 1);
        printf("child: read %zd '%s'\n", n, buf);
        printf("child: sent %llu\n", (unsigned long long)send_pattern(c, 1 << 20));
        shutdown(c, SHUT_WR);
        recv_pattern("child: from the server", c);
        close(c);
        _exit(0);
    }
    struct sockaddr_in peer;
    len = sizeof(peer);
    int c = accept4(l, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    printf("accepted: %s len %u family %d addr %s\n", c >= 0 ? "yes" : errname(errno), (unsigned)len,
           peer.sin_family, inet_ntoa(peer.sin_addr));
    printf("accepted cloexec %d\n", (fcntl(c, F_GETFD) & FD_CLOEXEC) != 0);
    show_name("accepted name", c, 0, 1);
    show_name("accepted peer", c, 1, 0);
    char buf[16] = { 0 };
    ssize_t n = read(c, buf, 5);
    printf("server: read %zd '%s'\n", n, buf);
    write(c, "world", 5);
    recv_pattern("server: from the child", c);
    printf("server: poll after the end %#x\n", polled(c) & (POLLIN | POLLRDHUP));
    printf("server: sent %llu\n", (unsigned long long)send_pattern(c, 1 << 20));
    close(c);
    int status = 0;
    waitpid(child, &status, 0);
    printf("child status %d\n", WEXITSTATUS(status));
    close(l);
}

static void tcp_nonblocking(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = loop_addr(PORT + 1);
    bind(l, (struct sockaddr *)&a, sizeof(a));
    listen(l, 2);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    SHOW("connect non-blocking", connect(c, (struct sockaddr *)&a, sizeof(a)));
    struct pollfd p = { c, POLLOUT, 0 };
    SHOW("poll for the connection", poll(&p, 1, 5000));
    printf("revents %#x\n", p.revents);
    int err = -1;
    socklen_t len = sizeof(err);
    getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len);
    printf("SO_ERROR %d\n", err);
    SHOW("connect again", connect(c, (struct sockaddr *)&a, sizeof(a)));
    p = (struct pollfd){ l, POLLIN, 0 };
    SHOW("poll the listener", poll(&p, 1, 5000));
    int s = accept(l, NULL, NULL);
    char b[8];
    SHOW("read nothing yet", recv(c, b, sizeof(b), 0));
    SHOW("send", send(s, "abc", 3, 0));
    p = (struct pollfd){ c, POLLIN, 0 };
    poll(&p, 1, 5000);
    SHOW("read", recv(c, b, sizeof(b), MSG_DONTWAIT));
    int avail = -1;
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 }, got;
    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
    SHOW("epoll nothing yet", epoll_wait(ep, &got, 1, 0));
    pid_t kid = fork();
    if (kid == 0) {
        usleep(100000);                         /* the parent waits in epoll_wait first */
        send(s, "defg", 4, 0);
        _exit(0);
    }
    SHOW("epoll wait", epoll_wait(ep, &got, 1, 5000));
    printf("epoll events %#x data %u\n", got.events, got.data.u32);
    waitpid(kid, NULL, 0);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(c, &rd);
    struct timeval tv = { 5, 0 };
    SHOW("select", select(c + 1, &rd, NULL, NULL, &tv));
    printf("select readable %d\n", FD_ISSET(c, &rd) != 0);
    close(ep);
    ioctl(c, FIONREAD, &avail);
    printf("FIONREAD %d\n", avail);
    close(s);
    p = (struct pollfd){ c, POLLIN | POLLRDHUP, 0 };
    poll(&p, 1, 5000);
    SHOW("read the rest", recv(c, b, sizeof(b), 0));
    SHOW("read the end", recv(c, b, sizeof(b), 0));
    close(c);

    c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in closed = loop_addr(PORT + 8);
    SHOW("connect a closed port", connect(c, (struct sockaddr *)&closed, sizeof(closed)));
    p = (struct pollfd){ c, POLLOUT, 0 };
    poll(&p, 1, 5000);
    printf("refused revents %#x\n", p.revents & (POLLOUT | POLLERR | POLLHUP));
    len = sizeof(err);
    getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len);
    printf("SO_ERROR %s\n", errname(err));
    close(c);
    close(l);
}

static void udp(void)
{
    int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = loop_addr(PORT + 2);
    SHOW("udp bind", bind(r, (struct sockaddr *)&a, sizeof(a)));
    show_name("udp name", r, 0, 1);
    printf("udp poll %#x\n", polled(r));
    SHOW("udp send without address", send(s, "x", 1, 0));
    SHOW("udp sendto", sendto(s, "ping", 4, 0, (struct sockaddr *)&a, sizeof(a)));
    static char big[65600];
    SHOW("udp sendto too big", sendto(s, big, 65508, 0, (struct sockaddr *)&a, sizeof(a)));
    struct pollfd p = { r, POLLIN, 0 };
    poll(&p, 1, 5000);
    printf("udp poll now %#x\n", polled(r));
    char buf[16] = { 0 };
    struct sockaddr_in from;
    socklen_t len = sizeof(from);
    ssize_t n = recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len);
    printf("udp recvfrom %zd '%s' from %s len %u\n", n, buf, inet_ntoa(from.sin_addr), (unsigned)len);
    sendto(s, "0123456789", 10, 0, (struct sockaddr *)&a, sizeof(a));
    poll(&p, 1, 5000);
    SHOW("udp truncated", recv(r, buf, 4, MSG_TRUNC));
    for (unsigned i = 0; i < 60000; i++)
        big[i] = (char)byte_at(i);
    SHOW("udp sendto 60000", sendto(s, big, 60000, 0, (struct sockaddr *)&a, sizeof(a)));
    poll(&p, 1, 5000);
    static char in[65600];
    n = recv(r, in, sizeof(in), 0);
    printf("udp 60000: %zd, same %d\n", n, n == 60000 && !memcmp(in, big, 60000));
    struct iovec iov[2] = { { in, 3 }, { in + 3, 3 } };
    struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = iov, .msg_iovlen = 2 };
    sendto(s, "abcdefgh", 8, 0, (struct sockaddr *)&a, sizeof(a));
    poll(&p, 1, 5000);
    n = recvmsg(r, &m, 0);
    printf("udp recvmsg %zd '%.6s' flags %#x namelen %u\n", n, in, m.msg_flags, (unsigned)m.msg_namelen);
    SHOW("udp connect", connect(s, (struct sockaddr *)&a, sizeof(a)));
    show_name("udp connected peer", s, 1, 1);
    SHOW("udp send connected", send(s, "conn", 4, 0));
    poll(&p, 1, 5000);
    n = recv(r, buf, sizeof(buf), 0);
    printf("udp got %zd '%.4s'\n", n, buf);
    struct sockaddr_in none = { .sin_family = AF_UNSPEC };
    SHOW("udp disconnect", connect(s, (struct sockaddr *)&none, sizeof(none)));
    show_name("udp disconnected peer", s, 1, 1);
    fcntl(r, F_SETFL, O_NONBLOCK);
    SHOW("udp nothing to read", recv(r, buf, sizeof(buf), 0));
    close(r);
    close(s);
}

/* MSG_PEEK: what has come, looked at and left to be read, on a stream and
 * on datagrams. */
static void peek(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = loop_addr(PORT + 6);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    SHOW("peek listen", bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1));
    int c = socket(AF_INET, SOCK_STREAM, 0);
    SHOW("peek connect", connect(c, (struct sockaddr *)&a, sizeof(a)));
    int s = accept(l, NULL, NULL);
    char buf[64] = { 0 };
    SHOW("peek nothing yet", recv(s, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
    SHOW("peek write", write(c, "hello world", 11));
    struct pollfd p = { s, POLLIN, 0 };
    poll(&p, 1, 5000);
    ssize_t n = recv(s, buf, 5, MSG_PEEK);
    printf("peek 5: %zd '%.5s'\n", n, buf);
    memset(buf, 0, sizeof(buf));
    n = recv(s, buf, sizeof(buf), MSG_PEEK);
    printf("peek all: %zd '%s'\n", n, buf);
    int inq = -1;
    ioctl(s, FIONREAD, &inq);
    printf("peek left them: FIONREAD %d, poll %#x\n", inq, polled(s));
    memset(buf, 0, sizeof(buf));
    n = recv(s, buf, 6, 0);
    printf("read 6: %zd '%s'\n", n, buf);
    memset(buf, 0, sizeof(buf));
    char a3[3] = { 0 }, b3[3] = { 0 };
    struct iovec iov[2] = { { a3, 3 }, { b3, 3 } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
    n = recvmsg(s, &m, MSG_PEEK | MSG_DONTWAIT);
    printf("peek into two vectors: %zd '%.3s' '%.2s' flags %#x\n", n, a3, b3, m.msg_flags);
    n = read(s, buf, sizeof(buf));
    printf("read the rest: %zd '%s'\n", n, buf);
    SHOW("peek nothing left", recv(s, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
    /* 40,000 bytes, peeked whole once they are all in, then read */
    static uint8_t big[40000], in[50000];
    for (unsigned i = 0; i < sizeof(big); i++)
        big[i] = byte_at(i);
    SHOW("peek write 40000", write(c, big, sizeof(big)));
    for (int i = 0; i < 500 && (ioctl(s, FIONREAD, &inq) != 0 || inq < (int)sizeof(big)); i++)
        usleep(10000);
    n = recv(s, in, sizeof(in), MSG_PEEK);
    printf("peek 40000: %zd, same %d\n", n, n == (ssize_t)sizeof(big) && !memcmp(in, big, sizeof(big)));
    memset(in, 0, sizeof(in));
    n = recv(s, in, sizeof(big), MSG_WAITALL);
    printf("read 40000: %zd, same %d\n", n, n == (ssize_t)sizeof(big) && !memcmp(in, big, sizeof(big)));
    /* MSG_TRUNC on a stream: counted and not copied, dropped unless peeked */
    SHOW("trunc write", write(c, "0123456789", 10));
    for (int i = 0; i < 500 && (ioctl(s, FIONREAD, &inq) != 0 || inq < 10); i++)
        usleep(10000);
    memset(buf, 0, sizeof(buf));
    SHOW("peek 4 with MSG_TRUNC", recv(s, buf, 4, MSG_PEEK | MSG_TRUNC));
    printf("it copied nothing: '%s'\n", buf);
    SHOW("recv 3 with MSG_TRUNC into NULL", recv(s, NULL, 3, MSG_TRUNC));
    n = recv(s, buf, sizeof(buf), 0);
    printf("read after them: %zd '%s'\n", n, buf);
    pid_t late = fork();
    if (late == 0) {
        usleep(100000);
        write(c, "late", 4);
        _exit(0);
    }
    memset(buf, 0, sizeof(buf));
    n = recv(s, buf, sizeof(buf), MSG_PEEK);             /* waits for it */
    printf("peek waited: %zd '%s'\n", n, buf);
    n = recv(s, buf, sizeof(buf), 0);
    printf("read it: %zd\n", n);
    waitpid(late, NULL, 0);
    late = fork();
    if (late == 0) {
        write(c, "ab", 2);
        usleep(100000);
        write(c, "cd", 2);
        _exit(0);
    }
    memset(buf, 0, sizeof(buf));
    n = recv(s, buf, 4, MSG_PEEK | MSG_WAITALL);        /* waits for all four */
    printf("peek waited for all: %zd '%s'\n", n, buf);
    n = recv(s, buf, sizeof(buf), 0);
    printf("read them: %zd\n", n);
    waitpid(late, NULL, 0);
    close(c);
    poll(&p, 1, 5000);
    SHOW("peek at the end", recv(s, buf, sizeof(buf), MSG_PEEK));
    SHOW("read at the end", recv(s, buf, sizeof(buf), 0));
    close(s);
    close(l);

    int r = socket(AF_INET, SOCK_DGRAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in ra = loop_addr(PORT + 7), from;
    SHOW("peek udp bind", bind(r, (struct sockaddr *)&ra, sizeof(ra)));
    SHOW("peek udp nothing", recv(r, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
    sendto(u, "first", 5, 0, (struct sockaddr *)&ra, sizeof(ra));
    sendto(u, "second!", 7, 0, (struct sockaddr *)&ra, sizeof(ra));
    p.fd = r;
    poll(&p, 1, 5000);
    memset(a3, 0, sizeof(a3));
    struct iovec one_iov = { a3, 3 };
    struct msghdr mu = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &one_iov, .msg_iovlen = 1 };
    n = recvmsg(r, &mu, MSG_PEEK);
    printf("udp peek 3: %zd '%.3s' flags %#x from %s\n", n, a3, mu.msg_flags, inet_ntoa(from.sin_addr));
    SHOW("udp peek with MSG_TRUNC", recv(r, buf, 2, MSG_PEEK | MSG_TRUNC));
    memset(buf, 0, sizeof(buf));
    n = recv(r, buf, sizeof(buf), MSG_PEEK);
    printf("udp peek: %zd '%s'\n", n, buf);
    memset(buf, 0, sizeof(buf));
    n = recv(r, buf, sizeof(buf), 0);
    printf("udp read: %zd '%s'\n", n, buf);
    memset(buf, 0, sizeof(buf));
    p.fd = r;
    poll(&p, 1, 5000);
    n = recv(r, buf, sizeof(buf), MSG_PEEK);
    printf("udp peek the second: %zd '%s'\n", n, buf);
    memset(buf, 0, sizeof(buf));
    n = recv(r, buf, sizeof(buf), 0);
    printf("udp read the second: %zd '%s'\n", n, buf);
    SHOW("udp peek nothing left", recv(r, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
    close(r);
    close(u);
}

/* SO_SNDBUF and SO_RCVBUF set small (the listener's, which its connection
 * takes, and the client's): what a non-blocking writer gets queued before
 * EAGAIN is bounded by them (unset, it runs to hundreds of KiB), and a
 * transfer many times their size still arrives whole. */
static void small_buffers(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1, small = 4096, v = 0;
    socklen_t vl = sizeof(v);
    struct sockaddr_in a = loop_addr(PORT + 8);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    SHOW("small rcvbuf", setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
    SHOW("small listen", bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1));
    int c = socket(AF_INET, SOCK_STREAM, 0);
    SHOW("small sndbuf", setsockopt(c, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
    SHOW("small connect", connect(c, (struct sockaddr *)&a, sizeof(a)));
    int s = accept(l, NULL, NULL);
    getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &vl);
    printf("small: the accepted socket's SO_RCVBUF %d\n", v);
    fcntl(c, F_SETFL, O_NONBLOCK);
    static uint8_t chunk[1024], in[8192];
    uint64_t queued = 0, got = 0;
    ssize_t w = 0;
    for (int i = 0; i < 2000 && (w = write(c, chunk, sizeof(chunk))) > 0; i++)
        queued += (uint64_t)w;
    printf("small: queued before EAGAIN %s (%s)\n",
           queued >= 2048 && queued < 65536 ? "between 2 KiB and 64 KiB" : "out of those bounds",
           w < 0 ? errname(errno) : "no error");
    for (int i = 0; i < 1000 && got < queued; i++) {
        ssize_t r = read(s, in, sizeof(in));
        if (r <= 0)
            break;
        got += (uint64_t)r;
    }
    printf("small: all of it read %d\n", got == queued);
    fcntl(c, F_SETFL, 0);
    pid_t writer = fork();
    if (writer == 0)
        _exit(send_pattern(c, 300000) == 300000 ? 0 : 1);
    close(c);
    uint64_t wrong = 0;
    got = 0;
    ssize_t r;
    while (got < 300000 && (r = read(s, in, sizeof(in))) > 0) {
        for (ssize_t i = 0; i < r; i++)
            wrong += in[i] != byte_at(got + (uint64_t)i);
        got += (uint64_t)r;
    }
    int st = 0;
    waitpid(writer, &st, 0);
    printf("small: 300000 bytes through them: %llu, %llu wrong, writer %d\n", (unsigned long long)got,
           (unsigned long long)wrong, st);
    close(s);
    close(l);
}

/* Ping sockets (SOCK_DGRAM, IPPROTO_ICMP), as iputils' ping uses them:
 * the system sets the identifier (the socket's port) and the checksum. */
static void ping_socket(void)
{
    write_text("/proc/sys/net/ipv4/ping_group_range", "0 2147483647");     /* (Linux's default lets no group) */
    int p = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
    printf("ping socket: %s\n", p >= 0 ? "yes" : errname(errno));
    int v = -1;
    socklen_t len = sizeof(v);
    getsockopt(p, SOL_SOCKET, SO_PROTOCOL, &v, &len);
    printf("ping SO_PROTOCOL %d\n", v);
    struct sockaddr_in to = loop_addr(0);
    uint8_t msg[14] = { 8, 0, 0, 0, 0, 0, 0, 7, 'p', 'e', 't', 'r', 'e', 'l' };
    SHOW("ping send", sendto(p, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)));
    uint8_t bad[8] = { 13, 0 };
    SHOW("ping send not an echo", sendto(p, bad, sizeof(bad), 0, (struct sockaddr *)&to, sizeof(to)));
    struct pollfd pf = { p, POLLIN, 0 };
    poll(&pf, 1, 5000);
    uint8_t in[64];
    struct sockaddr_in from;
    len = sizeof(from);
    ssize_t n = recvfrom(p, in, sizeof(in), 0, (struct sockaddr *)&from, &len);
    struct sockaddr_in me;
    socklen_t ml = sizeof(me);
    getsockname(p, (struct sockaddr *)&me, &ml);
    printf("ping reply %zd type %d code %d seq %d from %s, identifier the socket's port %d, data %s\n", n, in[0],
           in[1], in[6] << 8 | in[7], inet_ntoa(from.sin_addr), (in[4] << 8 | in[5]) == ntohs(me.sin_port),
           n == 14 && !memcmp(in + 8, "petrel", 6) ? "echoed" : "wrong");
    close(p);
}

/* UDP sockets sharing a port (SO_REUSEADDR on each): a datagram from the
 * peer one is connected to goes to it, any other to the unconnected one;
 * without the option the port is taken. */
static void udp_shared_port(void)
{
    int one = 1;
    struct sockaddr_in a = loop_addr(PORT + 20), pa = loop_addr(PORT + 21), pb = loop_addr(PORT + 22);
    int s1 = socket(AF_INET, SOCK_DGRAM, 0), s2 = socket(AF_INET, SOCK_DGRAM, 0), s3 = socket(AF_INET, SOCK_DGRAM, 0);
    int peer = socket(AF_INET, SOCK_DGRAM, 0), other = socket(AF_INET, SOCK_DGRAM, 0);
    bind(peer, (struct sockaddr *)&pa, sizeof(pa));
    bind(other, (struct sockaddr *)&pb, sizeof(pb));
    setsockopt(s1, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(s2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    SHOW("shared port: bind the first", bind(s1, (struct sockaddr *)&a, sizeof(a)));
    SHOW("shared port: connect it", connect(s1, (struct sockaddr *)&pa, sizeof(pa)));
    SHOW("shared port: bind the second", bind(s2, (struct sockaddr *)&a, sizeof(a)));
    SHOW("shared port: bind one without SO_REUSEADDR", bind(s3, (struct sockaddr *)&a, sizeof(a)));
    sendto(peer, "from peer", 9, 0, (struct sockaddr *)&a, sizeof(a));
    sendto(other, "from other", 10, 0, (struct sockaddr *)&a, sizeof(a));
    usleep(100000);
    char buf[32];
    long n = recv(s1, buf, sizeof(buf) - 1, MSG_DONTWAIT);
    buf[n > 0 ? n : 0] = 0;
    printf("shared port: the connected one got: %s\n", n > 0 ? buf : errname(errno));
    n = recv(s2, buf, sizeof(buf) - 1, MSG_DONTWAIT);
    buf[n > 0 ? n : 0] = 0;
    printf("shared port: the other got: %s\n", n > 0 ? buf : errname(errno));
    SHOW("shared port: nothing more for the connected one", recv(s1, buf, sizeof(buf), MSG_DONTWAIT));
    close(s1);
    close(s2);
    close(s3);
    close(peer);
    close(other);
}

/* System call nr(a, b, c) with v0-v3 loaded from in[] before it and
 * stored to out[] after it: the kernel may copy through the SIMD
 * registers, and must give a program's back as they were. */
static long call_keeping_simd(long nr, long a, long b, long c, const uint8_t in[64], uint8_t out[64])
{
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("ld1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[in]]\n\t"
                     "svc #0\n\t"
                     "st1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[out]]"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), [in] "r"(in), [out] "r"(out)
                     : "v0", "v1", "v2", "v3", "memory");
    return x0;
}

/* 64 KiB through a TCP connection and through a pipe, each write and
 * read keeping v0-v3 (and the bytes arriving whole). */
static void simd_kept(void)
{
    static uint8_t data[65536], back[65536];
    uint8_t in[64], out[64];
    for (unsigned i = 0; i < sizeof(data); i++)
        data[i] = byte_at(i);
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = (uint8_t)(0xa5 ^ (i * 29));
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1, fd[2] = { -1, -1 }, p[2] = { -1, -1 };
    struct sockaddr_in a = loop_addr(PORT + 12);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) || (fd[0] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        connect(fd[0], (struct sockaddr *)&a, sizeof(a)) || (fd[1] = accept(l, NULL, NULL)) < 0 || pipe(p)) {
        printf("simd: setup %s\n", errname(errno));
        return;
    }
    int w[2] = { fd[0], p[1] }, r[2] = { fd[1], p[0] };
    for (int k = 0; k < 2; k++) {
        long calls = 0, kept = 0, sent = 0, got = 0;
        while (sent < (long)sizeof(data)) {
            long n = call_keeping_simd(SYS_write, w[k], (long)(data + sent), (long)sizeof(data) - sent, in, out);
            calls++;
            kept += memcmp(in, out, sizeof(in)) == 0;
            if (n <= 0)
                break;
            sent += n;
        }
        while (got < sent) {
            long n = call_keeping_simd(SYS_read, r[k], (long)(back + got), (long)sizeof(back) - got, in, out);
            calls++;
            kept += memcmp(in, out, sizeof(in)) == 0;
            if (n <= 0)
                break;
            got += n;
        }
        printf("simd: %s: %ld bytes, same: %d, v0-v3 kept over every call: %d\n", k ? "pipe" : "tcp", got,
               got == sent && memcmp(data, back, (size_t)got) == 0, kept == calls);
    }
    close(fd[0]);
    close(fd[1]);
    close(p[0]);
    close(p[1]);
    close(l);
}

/* /proc/net/snmp as "Group:Field" -> value; the number of fields read. */
#define SNMP_MAX 160
struct snmp { int n; char name[SNMP_MAX][40]; long long v[SNMP_MAX]; };

static int snmp_read(struct snmp *t)
{
    static char text[8192];
    t->n = 0;
    int fd = open("/proc/net/snmp", O_RDONLY);
    ssize_t len = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
    if (fd >= 0)
        close(fd);
    if (len <= 0)
        return 0;
    text[len] = 0;
    char *line = text;
    while (line && *line) {             /* a line of names, then one of values */
        char *names = line, *vals = strchr(line, '\n');
        if (!vals)
            break;
        *vals++ = 0;
        char *next = strchr(vals, '\n');
        if (next)
            *next++ = 0;
        char *group_end = strchr(names, ':');
        if (!group_end)
            break;
        int glen = (int)(group_end - names);
        char *np = group_end + 1, *vp = strchr(vals, ':');
        vp = vp ? vp + 1 : vals;
        for (;;) {
            char name[32];
            long long v;
            int an, bn;
            if (sscanf(np, " %31s%n", name, &an) != 1 || sscanf(vp, " %lld%n", &v, &bn) != 1 || t->n == SNMP_MAX)
                break;
            snprintf(t->name[t->n], sizeof(t->name[0]), "%.*s:%s", glen, names, name);
            t->v[t->n++] = v;
            np += an, vp += bn;
        }
        line = next;
    }
    return t->n;
}

static long long snmp_get(const struct snmp *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->name[i], name))
            return t->v[i];
    return 0;                           /* (an IcmpMsg type not seen yet) */
}

/* The counters of /proc/net/snmp that a known exchange over 127.0.0.1
 * moves, by how much: a connection opened and closed, one refused, one
 * reset by SO_LINGER 0, a datagram delivered, one to a closed port (port
 * unreachable), a ping. Counts of segments and packets, which acknowledgment
 * timing moves, only grow. */
static void snmp_counts(void)
{
    static struct snmp a, b;
    printf("snmp fields: %d\n", snmp_read(&a) > 50);
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in la = loop_addr(PORT + 50), closed = loop_addr(PORT + 51);
    bind(l, (struct sockaddr *)&la, sizeof(la));
    listen(l, 4);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    connect(c, (struct sockaddr *)&la, sizeof(la));
    int s = accept(l, NULL, NULL);
    char x = 'x';
    SHOW("snmp: a byte each way", write(c, &x, 1) + read(s, &x, 1) + write(s, &x, 1) + read(c, &x, 1));
    close(c);
    SHOW("snmp: the end of the stream", read(s, &x, 1));
    close(s);
    int r = socket(AF_INET, SOCK_STREAM, 0);
    SHOW("snmp: connect to a closed port", connect(r, (struct sockaddr *)&closed, sizeof(closed)));
    close(r);
    c = socket(AF_INET, SOCK_STREAM, 0);
    connect(c, (struct sockaddr *)&la, sizeof(la));
    s = accept(l, NULL, NULL);
    struct linger lg = { 1, 0 };
    setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(s);
    SHOW("snmp: read after the peer's RST", read(c, &x, 1));
    close(c);
    close(l);
    int u = socket(AF_INET, SOCK_DGRAM, 0), v = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in ua = loop_addr(PORT + 52);
    bind(u, (struct sockaddr *)&ua, sizeof(ua));
    SHOW("snmp: a datagram", sendto(v, "d", 1, 0, (struct sockaddr *)&ua, sizeof(ua)) + recv(u, &x, 1, 0));
    SHOW("snmp: a datagram to a closed port", sendto(v, "d", 1, 0, (struct sockaddr *)&closed, sizeof(closed)));
    usleep(100000);
    close(u);
    close(v);
    int p = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
    uint8_t msg[8] = { 8, 0, 0, 0, 0, 0, 0, 1 }, in[64];
    struct sockaddr_in to = loop_addr(0);
    sendto(p, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to));
    SHOW("snmp: a ping's reply", recv(p, in, sizeof(in), 0));
    close(p);
    usleep(100000);
    snmp_read(&b);
    static const char *const moved[] = {
        "Tcp:ActiveOpens", "Tcp:PassiveOpens", "Tcp:AttemptFails", "Tcp:EstabResets", "Tcp:CurrEstab",
        "Tcp:OutRsts", "Tcp:RetransSegs", "Tcp:InErrs", "Udp:InDatagrams", "Udp:NoPorts", "Udp:InErrors",
        "Udp:OutDatagrams", "Udp:RcvbufErrors", "Icmp:InMsgs", "Icmp:InErrors", "Icmp:InDestUnreachs",
        "Icmp:InEchos", "Icmp:InEchoReps", "Icmp:OutMsgs", "Icmp:OutDestUnreachs", "Icmp:OutEchos",
        "Icmp:OutEchoReps", "IcmpMsg:InType0", "IcmpMsg:InType3", "IcmpMsg:InType8", "IcmpMsg:OutType0",
        "IcmpMsg:OutType3", "IcmpMsg:OutType8", "Ip:InHdrErrors", "Ip:InAddrErrors", "Ip:InUnknownProtos",
        "Ip:OutNoRoutes", "Ip:ReasmReqds", "Ip:FragCreates",
    };
    for (unsigned i = 0; i < sizeof(moved) / sizeof(moved[0]); i++)
        printf("snmp %s: %+lld\n", moved[i], snmp_get(&b, moved[i]) - snmp_get(&a, moved[i]));
    static const char *const grew[] = { "Tcp:InSegs", "Tcp:OutSegs", "Ip:InReceives", "Ip:InDelivers", "Ip:OutRequests" };
    for (unsigned i = 0; i < sizeof(grew) / sizeof(grew[0]); i++)
        printf("snmp %s grew: %d\n", grew[i], snmp_get(&b, grew[i]) > snmp_get(&a, grew[i]));
    printf("snmp fixed: Ip:Forwarding %lld Ip:DefaultTTL %lld Tcp:RtoMin %lld Tcp:MaxConn %lld\n",
           snmp_get(&b, "Ip:Forwarding"), snmp_get(&b, "Ip:DefaultTTL"), snmp_get(&b, "Tcp:RtoMin"),
           snmp_get(&b, "Tcp:MaxConn"));
}

/* TCP_INFO after 300,000 bytes one way, once they are acknowledged: the
 * fields iperf3 and ss read, as relations both systems keep (their
 * values differ with the timing). */
static void tcp_info_fields(void)
{
    struct sockaddr_in a = loop_addr(PORT + 7);
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) || connect(c, (struct sockaddr *)&a, sizeof(a))) {
        printf("tcp_info: no connection: %s\n", strerror(errno));
        return;
    }
    int s = accept(l, NULL, NULL);
    static char buf[65536];
    long sent = 0, got = 0, total = 300000;
    memset(buf, 'i', sizeof(buf));
    while (got < total) {
        long n = sent < total ? send(c, buf, (size_t)(total - sent < 16384 ? total - sent : 16384), MSG_DONTWAIT) : 0;
        sent += n > 0 ? n : 0;
        long r = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
        got += r > 0 ? r : 0;
        if (n <= 0 && r <= 0)
            poll(&(struct pollfd){ s, POLLIN, 0 }, 1, 10);
    }
    struct tcp_info ci, si;
    socklen_t len = sizeof(ci);
    for (int i = 0; i < 200; i++) {             /* (the last ACK may still be on its way) */
        len = sizeof(ci);
        getsockopt(c, IPPROTO_TCP, TCP_INFO, &ci, &len);
        if (!ci.tcpi_unacked && !ci.tcpi_notsent_bytes)
            break;
        poll(NULL, 0, 10);
    }
    socklen_t slen = sizeof(si);
    getsockopt(s, IPPROTO_TCP, TCP_INFO, &si, &slen);
    printf("tcp_info: length %u %u, state %u %u\n", len, slen, ci.tcpi_state, si.tcpi_state);
    printf("tcp_info: options timestamps %d sack %d wscale %d; the same both ends %d\n",
           !!(ci.tcpi_options & TCPI_OPT_TIMESTAMPS), !!(ci.tcpi_options & TCPI_OPT_SACK),
           !!(ci.tcpi_options & TCPI_OPT_WSCALE), ci.tcpi_options == si.tcpi_options);
    printf("tcp_info: each end's send scale the other's receive scale %d\n",
           ci.tcpi_snd_wscale == si.tcpi_rcv_wscale && si.tcpi_snd_wscale == ci.tcpi_rcv_wscale);
    printf("tcp_info: bytes acked %llu, received %llu, nothing unacked %d, nothing unsent %d\n",
           (unsigned long long)ci.tcpi_bytes_acked, (unsigned long long)si.tcpi_bytes_received,
           ci.tcpi_unacked == 0, ci.tcpi_notsent_bytes == 0);
    printf("tcp_info: the accepting end acked %llu, received %llu\n", (unsigned long long)si.tcpi_bytes_acked,
           (unsigned long long)ci.tcpi_bytes_received);
    printf("tcp_info: segments out at least the data's %d, in at least one %d; the receiver's in at least "
           "the data's %d\n", ci.tcpi_segs_out >= (uint32_t)(total / ci.tcpi_snd_mss), ci.tcpi_segs_in >= 1,
           si.tcpi_segs_in >= (uint32_t)(total / si.tcpi_rcv_mss));
    printf("tcp_info: pacing rate set %d, no maximum %d; rtt set %d, cwnd set %d, peer's window set %d\n",
           ci.tcpi_pacing_rate > 0 && ci.tcpi_pacing_rate != ~0ull, ci.tcpi_max_pacing_rate == ~0ull,
           ci.tcpi_rtt > 0, ci.tcpi_snd_cwnd > 0, ci.tcpi_snd_wnd > 0);
    close(s);
    close(c);
    close(l);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    tcp_basics();
    tcp_server_client();
    tcp_nonblocking();
    udp();
    peek();
    small_buffers();
    ping_socket();
    udp_shared_port();
    simd_kept();
    if (argc > 1 && !strcmp(argv[1], "--stack-shared"))
        printf("snmp: not counted (another client of the stack sends too)\n");
    else
        snmp_counts();
    tcp_info_fields();
    return 0;
}
