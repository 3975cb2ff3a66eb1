/*
 * A hostile program's AF_INET sockets. First the errors of every socket
 * call given bad lengths, pointers, families, types, options and states
 * (compared with Linux line for line). Then 20,000 random calls with
 * random arguments on TCP and UDP sockets, which must leave the program
 * and the stack working. Then exhaustion: one process takes datagram
 * sockets and TCP connections until refused (Petrel: its share, EMFILE;
 * Linux: far later, so the count is capped and marked varying) while
 * another process can still talk over UDP and TCP, and everything can be
 * had again once closed. Last, threads racing on one connection, and a
 * shutdown that wakes the recv blocked in another thread. What Petrel's
 * personality holds (/proc/petrel) is the same before and after.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <arpa/inet.h>
#include <net/if.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define PORT 5401
#define KERNEL_PTR ((void *)0xffff000000001000ul)
#define CAP 100

static struct sockaddr_in loop_addr(int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static int tcp_listener(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = loop_addr(port);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0) {
        printf("listener on %d: %s\n", port, errname(errno));
        exit(1);
    }
    return fd;
}

/* A connected pair over 127.0.0.1 through listener l on port; 0 or -errno. */
static int tcp_pair(int l, int port, int fd[2])
{
    struct sockaddr_in a = loop_addr(port);
    fd[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fd[0] < 0)
        return -errno;
    if (connect(fd[0], (struct sockaddr *)&a, sizeof(a)) < 0) {
        int e = errno;
        close(fd[0]);
        return -e;
    }
    fd[1] = accept(l, NULL, NULL);
    if (fd[1] < 0) {
        int e = errno;
        close(fd[0]);
        return -e;
    }
    return 0;
}

/* ---------------------------------------------------------------- the errors of each call */

static void errors(void)
{
    int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
    struct sockaddr_in a = loop_addr(PORT), far = loop_addr(PORT);
    far.sin_addr.s_addr = inet_addr("10.9.9.9");
    char big[200];
    memset(big, 0, sizeof(big));
    memcpy(big, &a, sizeof(a));

    SHOW("socket type 99", socket(AF_INET, 99, 0));
    SHOW("socket seqpacket", socket(AF_INET, SOCK_SEQPACKET, 0));
    SHOW("socket stream udp", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP));
    SHOW("socket dgram tcp", socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP));
    SHOW("socket protocol 255", socket(AF_INET, SOCK_STREAM, 255));
    SHOW("socket protocol -1", socket(AF_INET, SOCK_DGRAM, -1));
    SHOW("socket bad flag", socket(AF_INET, SOCK_STREAM | 0x40000000, 0));

    SHOW("bind NULL", bind(u, NULL, sizeof(a)));
    SHOW("bind kernel pointer", bind(u, KERNEL_PTR, sizeof(a)));
    SHOW("bind len 0", bind(u, (struct sockaddr *)&a, 0));
    SHOW("bind len 15", bind(u, (struct sockaddr *)&a, 15));
    SHOW("bind len -1", bind(u, (struct sockaddr *)&a, (socklen_t)-1));
    SHOW("bind len 129", bind(u, (struct sockaddr *)big, 129));
    SHOW("bind len 128", bind(t, (struct sockaddr *)big, 128));
    close(t);
    t = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in fam = a;
    fam.sin_family = AF_UNIX;
    SHOW("bind AF_UNIX family", bind(u, (struct sockaddr *)&fam, sizeof(fam)));
    SHOW("bind far address", bind(u, (struct sockaddr *)&far, sizeof(far)));
    SHOW("bind", bind(u, (struct sockaddr *)&a, sizeof(a)));
    SHOW("bind again", bind(u, (struct sockaddr *)&a, sizeof(a)));
    int u2 = socket(AF_INET, SOCK_DGRAM, 0);
    SHOW("bind a port in use", bind(u2, (struct sockaddr *)&a, sizeof(a)));
    close(u2);

    SHOW("connect NULL", connect(t, NULL, sizeof(a)));
    SHOW("connect len 8", connect(t, (struct sockaddr *)&a, 8));
    SHOW("connect len 200", connect(t, (struct sockaddr *)big, 200));
    SHOW("connect AF_UNIX family", connect(t, (struct sockaddr *)&fam, sizeof(fam)));
    SHOW("connect nobody listening", connect(t, (struct sockaddr *)&a, sizeof(a)));

    SHOW("listen udp", listen(u, 5));
    SHOW("accept udp", accept(u, NULL, NULL));
    int t2 = socket(AF_INET, SOCK_STREAM, 0);
    SHOW("accept unlistened", accept(t2, NULL, NULL));
    SHOW("accept4 bad flags", accept4(t2, NULL, NULL, 0x7));
    SHOW("shutdown how 7", shutdown(t2, 7));
    SHOW("shutdown unconnected tcp", shutdown(t2, SHUT_RDWR));
    SHOW("getpeername unconnected", getpeername(t2, (struct sockaddr *)&a, &(socklen_t){ sizeof(a) }));
    SHOW("send unconnected tcp", send(t2, "x", 1, MSG_NOSIGNAL));
    SHOW("recv unconnected tcp", recv(t2, big, 1, MSG_DONTWAIT));
    close(t2);

    SHOW("sendto no address", sendto(u, "x", 1, 0, NULL, 0));
    SHOW("sendto NULL buffer", sendto(u, NULL, 10, 0, (struct sockaddr *)&a, sizeof(a)));
    SHOW("sendto kernel buffer", sendto(u, KERNEL_PTR, 10, 0, (struct sockaddr *)&a, sizeof(a)));
    SHOW("sendto address len 8", sendto(u, "x", 1, 0, (struct sockaddr *)&a, 8));
    SHOW("sendto address NULL len 16", sendto(u, "x", 1, 0, NULL, sizeof(a)));
    static char huge[70000];
    SHOW("sendto 65508 bytes", sendto(u, huge, 65508, 0, (struct sockaddr *)&a, sizeof(a)));
    SHOW("sendto 65507 bytes", sendto(u, huge, 65507, 0, (struct sockaddr *)&a, sizeof(a)));
    SHOW("recvfrom kernel buffer", recvfrom(u, KERNEL_PTR, 10, MSG_DONTWAIT, NULL, NULL));
    SHOW("recvfrom bad length word", recvfrom(u, big, 10, MSG_DONTWAIT, (struct sockaddr *)&a, KERNEL_PTR));
    SHOW("recvfrom negative length", recvfrom(u, big, 10, MSG_DONTWAIT, (struct sockaddr *)&a, &(socklen_t){ (socklen_t)-1 }));
    SHOW("sendto one to read", sendto(u, "y", 1, 0, (struct sockaddr *)&a, sizeof(a)));
    SHOW("peek into a kernel buffer", recvfrom(u, KERNEL_PTR, 10, MSG_PEEK, NULL, NULL));
    SHOW("recvfrom it, name of length 2", recvfrom(u, huge, 10, 0, (struct sockaddr *)big, &(socklen_t){ 2 }));
    SHOW("recv nothing there", recv(u, big, 10, MSG_DONTWAIT));

    struct iovec iov = { big, 1 };
    struct msghdr m = { .msg_name = &a, .msg_namelen = sizeof(a), .msg_iov = &iov, .msg_iovlen = 1 };
    m.msg_iovlen = 2000;
    SHOW("sendmsg 2000 iovecs", sendmsg(u, &m, 0));
    m.msg_iovlen = 1;
    m.msg_iov = NULL;
    SHOW("sendmsg NULL iovecs", sendmsg(u, &m, 0));
    m.msg_iov = &iov;
    m.msg_name = KERNEL_PTR;
    SHOW("sendmsg kernel name", sendmsg(u, &m, 0));
    m.msg_name = big;
    m.msg_namelen = 200;
    SHOW("sendmsg name length 200", sendmsg(u, &m, 0));
    SHOW("sendmsg kernel header", syscall(SYS_sendmsg, u, KERNEL_PTR, 0));

    SHOW("setsockopt len 0", setsockopt(u, SOL_SOCKET, SO_REUSEADDR, &one, 0));
    SHOW("setsockopt NULL", setsockopt(u, SOL_SOCKET, SO_REUSEADDR, NULL, 4));
    SHOW("setsockopt level 999", setsockopt(u, 999, 1, &one, 4));
    SHOW("setsockopt name 9999", setsockopt(u, SOL_SOCKET, 9999, &one, 4));
    SHOW("setsockopt TCP_NODELAY on udp", setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, 4));
    SHOW("setsockopt TCP_CONGESTION nope", setsockopt(t, IPPROTO_TCP, TCP_CONGESTION, "nope", 4));
    memset(big, 'A', sizeof(big));
    SHOW("setsockopt TCP_CONGESTION 200 A's", setsockopt(t, IPPROTO_TCP, TCP_CONGESTION, big, 200));
    SHOW("setsockopt TCP_CONGESTION reno", setsockopt(t, IPPROTO_TCP, TCP_CONGESTION, "reno", 4));
    SHOW("setsockopt SO_RCVTIMEO len 4", setsockopt(t, SOL_SOCKET, SO_RCVTIMEO, &one, 4));
    struct timeval tv = { 1, 2000000 };
    SHOW("setsockopt SO_RCVTIMEO usec 2000000", setsockopt(t, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    SHOW("setsockopt SO_LINGER len 4", setsockopt(t, SOL_SOCKET, SO_LINGER, &one, 4));
    SHOW("setsockopt TCP_KEEPIDLE 0", setsockopt(t, IPPROTO_TCP, TCP_KEEPIDLE, &(int){ 0 }, 4));
    SHOW("setsockopt TCP_KEEPCNT 128", setsockopt(t, IPPROTO_TCP, TCP_KEEPCNT, &(int){ 128 }, 4));
    SHOW("getsockopt NULL length", getsockopt(u, SOL_SOCKET, SO_TYPE, big, NULL));
    SHOW("getsockopt length -1", getsockopt(u, SOL_SOCKET, SO_TYPE, big, &(socklen_t){ (socklen_t)-1 }));
    SHOW("getsockopt NULL value", getsockopt(u, SOL_SOCKET, SO_TYPE, NULL, &(socklen_t){ 4 }));
    socklen_t len = 0;
    SHOW("getsockopt TCP_INFO length 0", getsockopt(t, IPPROTO_TCP, TCP_INFO, big, &len));
    printf("its length: %u\n", len);
    len = 2;
    SHOW("getsockopt SO_TYPE length 2", getsockopt(u, SOL_SOCKET, SO_TYPE, big, &len));
    printf("its length: %u\n", len);
    SHOW("getsockopt level 999", getsockopt(u, 999, 1, big, &(socklen_t){ 4 }));
    SHOW("ioctl FIONREAD bad pointer", ioctl(u, FIONREAD, KERNEL_PTR));
    SHOW("ioctl 0x1234", ioctl(u, 0x1234, big));
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    SHOW("SIOCGIFFLAGS kernel pointer", ioctl(u, SIOCGIFFLAGS, KERNEL_PTR));
    strcpy(ifr.ifr_name, "nope");
    SHOW("SIOCGIFFLAGS nope", ioctl(u, SIOCGIFFLAGS, &ifr));
    memset(ifr.ifr_name, 'x', sizeof(ifr.ifr_name));            /* (no terminating zero) */
    SHOW("SIOCGIFINDEX unterminated", ioctl(u, SIOCGIFINDEX, &ifr));
    strcpy(ifr.ifr_name, "lo");
    SHOW("SIOCGIFFLAGS lo", ioctl(u, SIOCGIFFLAGS, &ifr));
    printf("its flags: %#x\n", ifr.ifr_flags);
    SHOW("SIOCGIFINDEX lo", ioctl(u, SIOCGIFINDEX, &ifr));
    printf("its index: %d\n", ifr.ifr_ifindex);
    SHOW("SIOCGIFADDR lo", ioctl(u, SIOCGIFADDR, &ifr));
    printf("its address: %s\n", inet_ntoa(((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr));
    SHOW("SIOCGIFNETMASK lo", ioctl(u, SIOCGIFNETMASK, &ifr));
    printf("its mask: %s\n", inet_ntoa(((struct sockaddr_in *)&ifr.ifr_netmask)->sin_addr));
    ifr.ifr_ifindex = 1;
    SHOW("SIOCGIFNAME 1", ioctl(u, SIOCGIFNAME, &ifr));
    printf("its name: %s\n", ifr.ifr_name);
    ifr.ifr_ifindex = 99;
    SHOW("SIOCGIFNAME 99", ioctl(u, SIOCGIFNAME, &ifr));
    struct ifconf conf = { .ifc_len = 0, .ifc_buf = NULL };
    SHOW("SIOCGIFCONF without a buffer", ioctl(u, SIOCGIFCONF, &conf));
    printf("its length: %d\n", conf.ifc_len);
    conf.ifc_len = 1000;
    conf.ifc_buf = KERNEL_PTR;
    SHOW("SIOCGIFCONF kernel buffer", ioctl(u, SIOCGIFCONF, &conf));
    close(t);
    close(u);
}

/* ---------------------------------------------------------------- netlink */

/* Linux's netlink UAPI (linux/netlink.h; the musl toolchain has no kernel headers). */
#define NETLINK_ROUTE   0
#define NLMSG_NOOP      1
#define NLMSG_ERROR     2
#define NLM_F_REQUEST   1
#define NLM_F_ACK       4
#define NLM_F_DUMP      0x300
#define RTM_GETLINK     18
#define RTM_GETADDR     22
struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; uint32_t nl_pid, nl_groups; };
struct nlmsghdr { uint32_t nlmsg_len; uint16_t nlmsg_type, nlmsg_flags; uint32_t nlmsg_seq, nlmsg_pid; };
struct nlmsgerr { int error; struct nlmsghdr msg; };
struct rtgenmsg { unsigned char rtgen_family; };
#define NLMSG_ALIGN(n)  (((n) + 3) & ~3u)
#define NLMSG_DATA(h)   ((void *)((char *)(h) + 16))
#define NLMSG_OK(h, n)  ((n) >= 16 && (h)->nlmsg_len >= 16 && (h)->nlmsg_len <= (n))
#define NLMSG_NEXT(h, n) ((n) -= NLMSG_ALIGN((h)->nlmsg_len), (struct nlmsghdr *)((char *)(h) + NLMSG_ALIGN((h)->nlmsg_len)))

/* Send a netlink message of `type` and `flags` (with `extra` bytes of
 * zeros after the header) and print what comes back: each message's type,
 * flags and length, and an error's code. */
static void nl_ask(int fd, const char *what, uint16_t type, uint16_t flags, int extra)
{
    static uint8_t req[256], buf[8192];
    struct nlmsghdr *h = (struct nlmsghdr *)req;
    memset(req, 0, sizeof(req));
    h->nlmsg_len = (uint32_t)(sizeof(*h) + (unsigned)extra);
    h->nlmsg_type = type;
    h->nlmsg_flags = flags;
    h->nlmsg_seq = 77;
    struct sockaddr_nl k = { .nl_family = AF_NETLINK };
    long n = sendto(fd, req, h->nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k));
    printf("%s: sent %ld\n", what, n);
    n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0) {
        printf("  answer: -1 %s\n", errname(errno));
        return;
    }
    for (struct nlmsghdr *r = (struct nlmsghdr *)buf; NLMSG_OK(r, (unsigned long)n); r = NLMSG_NEXT(r, n)) {
        printf("  answer: type %u flags %#x length %u seq %u", r->nlmsg_type, r->nlmsg_flags, r->nlmsg_len, r->nlmsg_seq);
        if (r->nlmsg_type == NLMSG_ERROR)
            printf(" error %s", ((struct nlmsgerr *)NLMSG_DATA(r))->error ? errname(-((struct nlmsgerr *)NLMSG_DATA(r))->error) : "0");
        printf("\n");
    }
}

static void netlink(void)
{
    SHOW("netlink protocol 99", socket(AF_NETLINK, SOCK_RAW, 99));
    SHOW("netlink stream", socket(AF_NETLINK, SOCK_STREAM, 0));
    int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
    struct sockaddr_nl a = { .nl_family = AF_NETLINK };
    SHOW("netlink bind length 4", bind(fd, (struct sockaddr *)&a, 4));
    a.nl_family = AF_INET;
    SHOW("netlink bind AF_INET", bind(fd, (struct sockaddr *)&a, sizeof(a)));
    SHOW("netlink bind kernel pointer", bind(fd, KERNEL_PTR, sizeof(a)));
    a.nl_family = AF_NETLINK;
    SHOW("netlink bind", bind(fd, (struct sockaddr *)&a, sizeof(a)));
    socklen_t len = sizeof(a);
    SHOW("netlink getsockname", getsockname(fd, (struct sockaddr *)&a, &len));
    printf("its length %u, family %u, port id the pid: %d\n", len, a.nl_family, a.nl_pid == (uint32_t)getpid());
    SHOW("netlink send 3 bytes", send(fd, "abc", 3, 0));
    SHOW("netlink send kernel buffer", send(fd, KERNEL_PTR, 16, 0));
    struct sockaddr_nl other = { .nl_family = AF_NETLINK, .nl_pid = 12345 };
    SHOW("netlink sendto port 12345", sendto(fd, "abcdabcdabcdabcd", 16, 0, (struct sockaddr *)&other, sizeof(other)));
    SHOW("netlink recv nothing there", recv(fd, &len, 4, MSG_DONTWAIT));
    nl_ask(fd, "NLMSG_NOOP with an ack", NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, 0);
    nl_ask(fd, "type 200", 200, NLM_F_REQUEST, 8);
    nl_ask(fd, "not a request", RTM_GETLINK, 0, 16);
    nl_ask(fd, "a length past the message", RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, -8);
    struct { struct nlmsghdr h; struct rtgenmsg g; } req = { { sizeof(req), RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 5, 0 },
                                                             { AF_INET } };
    send(fd, &req, sizeof(req), 0);
    SHOW("netlink recv into a kernel buffer", recv(fd, KERNEL_PTR, 4096, 0));
    SHOW("netlink recv 16 bytes with MSG_TRUNC", recv(fd, &a, 16, MSG_TRUNC | MSG_DONTWAIT) > 16);
    close(fd);
}

/* ---------------------------------------------------------------- random calls */

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void) { return xorshift64(&rng); }

static uintptr_t rnd_ptr(void *good)
{
    static const uintptr_t bad[] = { 0, 1, 4095, 0xffff000000001000ul, 0x0000700000000000ul, ~0ul };
    return rnd() % 3 ? (uintptr_t)good : bad[rnd() % 6];
}

static long rnd_len(void)
{
    static const long lens[] = { 0, 1, 2, 4, 8, 15, 16, 17, 128, 129, 1500, 65507, 65536, -1, 0x7fffffff };
    return lens[rnd() % 15];
}

static void random_calls(void)
{
    static char buf[70000];
    int fds[8];
    for (int i = 0; i < 8; i++)
        fds[i] = socket(AF_INET, (i & 1 ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0);
    for (int n = 0; n < 20000; n++) {
        int k = (int)(rnd() % 8), fd = fds[k];
        struct sockaddr_in a = loop_addr((int)(PORT + 10 + rnd() % 4));
        if (rnd() % 4 == 0)
            a.sin_addr.s_addr = (uint32_t)rnd();
        if (rnd() % 8 == 0)
            a.sin_family = (sa_family_t)(rnd() % 4);
        socklen_t len = (socklen_t)rnd_len();
        switch (rnd() % 14) {
        case 0: bind(fd, (void *)rnd_ptr(&a), (socklen_t)rnd_len()); break;
        case 1: connect(fd, (void *)rnd_ptr(&a), (socklen_t)rnd_len()); break;
        case 2: listen(fd, (int)rnd()); break;
        case 3: {
            int c = accept4(fd, (void *)rnd_ptr(&a), (void *)rnd_ptr(&len), (int)(rnd() & (SOCK_NONBLOCK | SOCK_CLOEXEC | 3)));
            if (c >= 0)
                close(c);
            break;
        }
        case 4: sendto(fd, (void *)rnd_ptr(buf), (size_t)rnd_len(), MSG_DONTWAIT | MSG_NOSIGNAL, (void *)rnd_ptr(&a), (socklen_t)rnd_len()); break;
        case 5: recvfrom(fd, (void *)rnd_ptr(buf), (size_t)rnd_len(), MSG_DONTWAIT | (int)(rnd() & MSG_PEEK), (void *)rnd_ptr(&a), (void *)rnd_ptr(&len)); break;
        case 6: setsockopt(fd, (int)(rnd() % 3 == 0 ? SOL_SOCKET : rnd() % 2 ? IPPROTO_TCP : IPPROTO_IP), (int)(rnd() % 40),
                           (void *)rnd_ptr(buf), (socklen_t)rnd_len()); break;
        case 7: getsockopt(fd, (int)(rnd() % 3 == 0 ? SOL_SOCKET : rnd() % 2 ? IPPROTO_TCP : IPPROTO_IP), (int)(rnd() % 40),
                           (void *)rnd_ptr(buf), (void *)rnd_ptr(&len)); break;
        case 8: shutdown(fd, (int)(rnd() % 4)); break;
        case 9: getsockname(fd, (void *)rnd_ptr(&a), (void *)rnd_ptr(&len)); break;
        case 10: getpeername(fd, (void *)rnd_ptr(&a), (void *)rnd_ptr(&len)); break;
        case 11: { struct iovec iov[3] = { { (void *)rnd_ptr(buf), (size_t)rnd_len() }, { buf, 10 }, { (void *)rnd_ptr(buf), 5 } };
                   struct msghdr m = { .msg_name = (void *)rnd_ptr(&a), .msg_namelen = (socklen_t)rnd_len(),
                                      .msg_iov = (void *)rnd_ptr(iov), .msg_iovlen = rnd() % 4 };
                   if (rnd() % 2)
                       syscall(SYS_sendmsg, fd, rnd_ptr(&m), MSG_DONTWAIT | MSG_NOSIGNAL);
                   else
                       syscall(SYS_recvmsg, fd, rnd_ptr(&m), MSG_DONTWAIT);
                   break; }
        case 12: { struct pollfd p = { fd, (short)rnd(), 0 }; poll(&p, 1, 0); ioctl(fd, FIONREAD, (void *)rnd_ptr(&len)); break; }
        default: close(fd);
                 fds[k] = socket(AF_INET, (rnd() % 2 ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0);
                 break;
        }
    }
    for (int i = 0; i < 8; i++)
        close(fds[i]);
    int l = tcp_listener(PORT + 1), p[2];
    char got[8] = { 0 };
    int e = tcp_pair(l, PORT + 1, p);
    if (!e) {
        write(p[0], "works", 5);
        read(p[1], got, sizeof(got) - 1);
        close(p[0]);
        close(p[1]);
    }
    printf("after 20000 random calls: %s\n", e ? errname(-e) : got);
    close(l);
}

/* ---------------------------------------------------------------- exhaustion */

/* Another process talks over UDP and TCP while this one holds what it could take. */
static void another_process(int *held, int nheld)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < nheld; i++)         /* (the child's copies would keep them) */
            close(held[i]);
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in a = loop_addr(PORT + 2);
        char buf[8] = { 0 };
        if (u < 0 || bind(u, (struct sockaddr *)&a, sizeof(a)) < 0 ||
            sendto(u, "udp", 3, 0, (struct sockaddr *)&a, sizeof(a)) != 3 || recv(u, buf, sizeof(buf), 0) != 3)
            printf("another process: udp %s\n", errname(errno));
        else
            printf("another process: %s\n", buf);
        close(u);
        int l = tcp_listener(PORT + 3), p[2];
        int e = tcp_pair(l, PORT + 3, p);
        memset(buf, 0, sizeof(buf));
        if (e || write(p[0], "tcp", 3) != 3 || read(p[1], buf, sizeof(buf)) != 3)
            printf("another process: tcp %s\n", errname(e ? -e : errno));
        else
            printf("another process: %s\n", buf);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
}

static void exhaustion(void)
{
    static int held[2 * CAP + 1];
    int n = 0, err = 0;
    while (n < CAP) {
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in a = loop_addr(0);
        if (u < 0 || bind(u, (struct sockaddr *)&a, sizeof(a)) < 0) {
            err = errno;
            if (u >= 0)
                close(u);
            break;
        }
        held[n++] = u;
    }
    printf("datagram sockets until refused or %d: ~%d\n", CAP, n);
    printf("refused with EMFILE or not refused: %d\n", n == CAP || err == EMFILE);
    another_process(held, n);
    for (int i = 0; i < n; i++)
        close(held[i]);

    int l = tcp_listener(PORT + 4), pairs = 0;
    n = 0;
    err = 0;
    while (pairs < CAP / 2) {
        int p[2], e = tcp_pair(l, PORT + 4, p);
        if (e) {
            err = -e;
            break;
        }
        held[n++] = p[0];
        held[n++] = p[1];
        pairs++;
    }
    held[n++] = l;
    printf("connections until refused or %d: ~%d\n", CAP / 2, pairs);
    printf("refused with EMFILE or not refused: %d\n", pairs == CAP / 2 || err == EMFILE);
    another_process(held, n);
    for (int i = 0; i < n; i++)
        close(held[i]);

    int again = 0;
    for (int i = 0; i < 10; i++) {
        held[i] = socket(AF_INET, i & 1 ? SOCK_DGRAM : SOCK_STREAM, 0);
        struct sockaddr_in a = loop_addr(0);
        again += held[i] >= 0 && bind(held[i], (struct sockaddr *)&a, sizeof(a)) == 0;
    }
    for (int i = 0; i < 10; i++)
        close(held[i]);
    printf("after closing them, sockets bound again: %d\n", again);
}

/* ---------------------------------------------------------------- races */

static int race_fd[2];
static volatile int racing;
static long moved[2];

static void *race_send(void *arg)
{
    (void)arg;
    static char buf[3000];
    while (racing) {
        long n = send(race_fd[0], buf, 1 + rnd() % sizeof(buf), MSG_NOSIGNAL);
        if (n < 0)
            break;
        moved[0] += n;
    }
    shutdown(race_fd[0], SHUT_WR);
    return NULL;
}

static void *race_recv(void *arg)
{
    (void)arg;
    static char buf[5000];
    long n;
    while ((n = recv(race_fd[1], buf, sizeof(buf), 0)) > 0)
        moved[1] += n;
    return NULL;
}

static long blocked_result;

static void *blocked_recv(void *arg)
{
    char c;
    blocked_result = recv(*(int *)arg, &c, 1, 0);
    return NULL;
}

static void races(void)
{
    int l = tcp_listener(PORT + 5);
    if (tcp_pair(l, PORT + 5, race_fd)) {
        printf("race pair: %s\n", errname(errno));
        return;
    }
    racing = 1;
    pthread_t ts, tr;
    pthread_create(&ts, NULL, race_send, NULL);
    pthread_create(&tr, NULL, race_recv, NULL);
    for (int i = 0; i < 3000; i++) {      /* the options and states of both ends, meanwhile */
        int v = i & 1;
        socklen_t len = sizeof(v);
        setsockopt(race_fd[i & 1], IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
        getsockopt(race_fd[i & 1], SOL_SOCKET, SO_ERROR, &v, &len);
        struct pollfd p[2] = { { race_fd[0], POLLIN | POLLOUT, 0 }, { race_fd[1], POLLIN | POLLOUT, 0 } };
        poll(p, 2, 0);
        ioctl(race_fd[1], FIONREAD, &v);
    }
    racing = 0;
    pthread_join(ts, NULL);
    pthread_join(tr, NULL);
    printf("bytes sent and received while racing: equal %d\n", moved[0] == moved[1]);
    close(race_fd[0]);
    close(race_fd[1]);

    int p[2];
    tcp_pair(l, PORT + 5, p);
    pthread_t tb;
    pthread_create(&tb, NULL, blocked_recv, &p[1]);
    usleep(100000);
    SHOW("shutdown SHUT_RD under it", shutdown(p[1], SHUT_RD));
    pthread_join(tb, NULL);
    printf("recv blocked in another thread returned: %ld\n", blocked_result);
    close(p[0]);
    close(p[1]);
    close(l);

    int u = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = loop_addr(PORT + 6);
    bind(u, (struct sockaddr *)&a, sizeof(a));
    pthread_create(&tb, NULL, blocked_recv, &u);
    usleep(100000);
    SHOW("shutdown of an unconnected udp socket under it", shutdown(u, SHUT_RD));
    pthread_join(tb, NULL);
    printf("recv blocked in another thread returned: %ld\n", blocked_result);
    SHOW("recv after it", recv(u, &(char){ 0 }, 1, 0));
    SHOW("send after SHUT_WR", (shutdown(u, SHUT_WR), sendto(u, "x", 1, 0, (struct sockaddr *)&a, sizeof(a))));
    struct pollfd pf = { u, POLLIN | POLLOUT | POLLRDHUP, 0 };
    poll(&pf, 1, 0);
    printf("its poll: %#x\n", pf.revents);
    close(u);
}

/* ---------------------------------------------------------------- a stream's buffers */

/* A stream's bytes from and into buffers the process cannot reach (with
 * the personality and the stack in the kernel, the stack copies from and
 * into the process's buffers itself): refused, and nothing sent or taken. */
static void stream_buffers(void)
{
    int l = tcp_listener(PORT + 7), fd[2];
    char buf[32];
    struct pollfd p;
    char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(gone, 4096);
    if (tcp_pair(l, PORT + 7, fd) < 0) {
        printf("stream pair: %s\n", errname(errno));
        close(l);
        return;
    }
    SHOW("stream send kernel buffer", send(fd[0], KERNEL_PTR, 10, MSG_NOSIGNAL));
    SHOW("stream send NULL buffer", send(fd[0], NULL, 10, MSG_NOSIGNAL));
    SHOW("stream write unmapped buffer", write(fd[0], gone, 10));
    SHOW("stream send hello", send(fd[0], "hello", 5, MSG_NOSIGNAL));
    p.fd = fd[1];
    p.events = POLLIN;
    SHOW("stream poll for it", poll(&p, 1, 5000));
    SHOW("stream recv into a kernel buffer", recv(fd[1], KERNEL_PTR, 10, 0));
    SHOW("stream recv into NULL", recv(fd[1], NULL, 10, 0));
    SHOW("stream read into unmapped", read(fd[1], gone, 10));
    SHOW("stream peek into NULL", recv(fd[1], NULL, 10, MSG_PEEK));
    memset(buf, 0, sizeof(buf));
    SHOW("stream recv after them", recv(fd[1], buf, sizeof(buf) - 1, MSG_DONTWAIT));
    printf("stream got: %s\n", buf);
    close(fd[0]);
    close(fd[1]);
    close(l);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGPIPE, SIG_IGN);
    struct petrel_usage before, after;
    petrel_usage_read(&before);
    errors();
    stream_buffers();
    netlink();
    random_calls();
    exhaustion();
    races();
    printf("what the personality holds is as before: %d\n", petrel_usage_back(&before, &after, 65536));
    return 0;
}
