/*
 * AF_UNIX datagram and seqpacket sockets: message boundaries, truncation
 * (MSG_TRUNC both ways), empty datagrams, sendto/recvfrom with addresses,
 * connect and disconnect, who may send to a connected socket, a peer that
 * closes, the queue limit of an unconnected receiver, EMSGSIZE, autobind,
 * and seqpacket's boundaries and end of file.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

static int polled(int fd)
{
    struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
    poll(&p, 1, 0);
    return p.revents;
}

static socklen_t named(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    strcpy(a->sun_path, path);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

/* recvfrom into a buffer of `room` bytes: the count, the text, and who sent it. */
static void show_recv(const char *what, int fd, size_t room, int flags)
{
    char buf[64] = { 0 };
    struct sockaddr_un from;
    memset(&from, 0x55, sizeof(from));
    socklen_t fl = sizeof(from);
    errno = 0;
    long r = recvfrom(fd, buf, room, flags, (struct sockaddr *)&from, &fl);
    if (r < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    printf("%s: %ld \"%.*s\" from len %u", what, r, (int)(r < (long)room ? r : (long)room), buf, (unsigned)fl);
    if (fl > 2 && from.sun_path[0])
        printf(" %s", from.sun_path);
    printf("\n");
}

static void pair(void)
{
    int sv[2];
    SHOW("socketpair dgram", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
    printf("poll fresh: 0x%x\n", polled(sv[0]));
    SHOW("send one", send(sv[0], "one", 3, 0));
    SHOW("send two", send(sv[0], "two!", 4, 0));
    SHOW("send empty", send(sv[0], "", 0, 0));
    int n = -1;
    ioctl(sv[1], FIONREAD, &n);
    printf("FIONREAD (the next datagram): %d\n", n);
    show_recv("recv", sv[1], 64, 0);
    show_recv("recv 2 bytes of 4", sv[1], 2, 0);
    show_recv("recv the empty one", sv[1], 64, 0);
    show_recv("recv nothing left", sv[1], 64, MSG_DONTWAIT);
    SHOW("send five", send(sv[0], "fives", 5, 0));
    show_recv("recv MSG_PEEK", sv[1], 64, MSG_PEEK);
    show_recv("recv MSG_TRUNC into 2", sv[1], 2, MSG_TRUNC);
    char big[1000];
    memset(big, 'b', sizeof(big));
    struct iovec iov[3] = { { big, 10 }, { big, 20 }, { big, 30 } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };
    SHOW("sendmsg of three vectors", sendmsg(sv[0], &m, 0));
    char in[16];
    struct iovec riov[1] = { { in, sizeof(in) } };
    struct msghdr rm = { .msg_iov = riov, .msg_iovlen = 1 };
    SHOW("recvmsg into 16", recvmsg(sv[1], &rm, 0));
    printf("msg_flags: 0x%x (MSG_TRUNC %d)\n", rm.msg_flags, !!(rm.msg_flags & MSG_TRUNC));
    SHOW("sendto a pair's own peer with an address", sendto(sv[0], "x", 1, 0, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/tmp/nope" }, 12));
    SHOW("shutdown SHUT_RD of the receiver", shutdown(sv[1], SHUT_RD));
    SHOW("send after it", send(sv[0], "late", 4, MSG_DONTWAIT));
    SHOW("recv after SHUT_RD", recv(sv[1], in, 4, MSG_DONTWAIT));
    close(sv[0]);
    close(sv[1]);

    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    close(sv[1]);
    SHOW("send to a closed peer", send(sv[0], "x", 1, 0));
    SHOW("send again", send(sv[0], "x", 1, 0));
    close(sv[0]);
}

static void bound(void)
{
    struct sockaddr_un a, b, c;
    socklen_t al = named(&a, "/tmp/dg.a"), bl = named(&b, "/tmp/dg.b"), cl = named(&c, "/tmp/dg.c");
    unlink(a.sun_path);
    unlink(b.sun_path);
    unlink(c.sun_path);
    int sa = socket(AF_UNIX, SOCK_DGRAM, 0), sb = socket(AF_UNIX, SOCK_DGRAM, 0), sc = socket(AF_UNIX, SOCK_DGRAM, 0);
    SHOW("bind a", bind(sa, (struct sockaddr *)&a, al));
    SHOW("bind b", bind(sb, (struct sockaddr *)&b, bl));
    SHOW("bind c", bind(sc, (struct sockaddr *)&c, cl));
    SHOW("send unconnected", send(sa, "x", 1, 0));
    SHOW("sendto b", sendto(sa, "from a", 6, 0, (struct sockaddr *)&b, bl));
    show_recv("b receives", sb, 64, 0);
    SHOW("sendto nowhere", sendto(sa, "x", 1, 0, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/tmp/nope" }, 12));
    SHOW("sendto a file", sendto(sa, "x", 1, 0, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/etc/hello.txt" }, 17));
    SHOW("sendto itself", sendto(sa, "me", 2, 0, (struct sockaddr *)&a, al));
    show_recv("a receives", sa, 64, 0);
    int anon = socket(AF_UNIX, SOCK_DGRAM, 0);
    SHOW("an unbound sender", sendto(anon, "anon", 4, 0, (struct sockaddr *)&b, bl));
    show_recv("b receives", sb, 64, 0);
    SHOW("connect b to a", connect(sb, (struct sockaddr *)&a, al));
    SHOW("send on b", send(sb, "b to a", 6, 0));
    show_recv("a receives", sa, 64, 0);
    SHOW("connect a to b", connect(sa, (struct sockaddr *)&b, bl));
    SHOW("c sends to a (a's peer is b)", sendto(sc, "x", 1, 0, (struct sockaddr *)&a, al));
    SHOW("b sends to a", send(sb, "ok", 2, 0));
    show_recv("a receives", sa, 64, 0);
    SHOW("disconnect a (AF_UNSPEC)", connect(sa, (struct sockaddr *)&(struct sockaddr){ AF_UNSPEC }, sizeof(struct sockaddr)));
    SHOW("c sends to a now", sendto(sc, "from c", 6, 0, (struct sockaddr *)&a, al));
    show_recv("a receives", sa, 64, 0);
    SHOW("getpeername of b", getpeername(sb, (struct sockaddr *)&c, &(socklen_t){ sizeof(c) }));
    SHOW("listen on a datagram socket", listen(sa, 1));
    SHOW("accept on a datagram socket", accept(sa, NULL, NULL));
    int st = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("a stream socket sends to a datagram address", sendto(st, "x", 1, MSG_NOSIGNAL, (struct sockaddr *)&a, al));
    SHOW("a stream socket connects to it", connect(st, (struct sockaddr *)&a, al));
    SHOW("a datagram socket connects to a stream listener", connect(anon, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "" }, 2));
    close(st);

    /* an unconnected receiver: a queue limit for senders that are not its peer */
    int got = 0;
    for (int i = 0; i < 40; i++) {
        if (sendto(sc, "q", 1, MSG_DONTWAIT, (struct sockaddr *)&a, al) < 0) {
            printf("queue full after %d: %s\n", got, errname(errno));
            break;
        }
        got++;
    }
    printf("poll of the sender to a full queue (unconnected): 0x%x\n", polled(sc));
    char tmp[8];
    while (recv(sa, tmp, sizeof(tmp), MSG_DONTWAIT) > 0)
        got--;
    printf("all read back: %d\n", got == 0);

    char *huge = calloc(1, 300000);
    SHOW("a datagram of 300000 bytes", sendto(sc, huge, 300000, 0, (struct sockaddr *)&a, al));
    SHOW("a datagram of 100000 bytes", sendto(sc, huge, 100000, 0, (struct sockaddr *)&a, al));
    SHOW("recv it", recv(sa, huge, 300000, 0));
    free(huge);
    close(sa);
    SHOW("b sends to a closed a", send(sb, "x", 1, 0));
    SHOW("b sends again", send(sb, "x", 1, 0));
    close(sb);
    close(sc);
    close(anon);
    unlink(a.sun_path);
    unlink(b.sun_path);
    unlink(c.sun_path);
}

static void autobound(void)
{
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    SHOW("bind with the family alone", bind(s, (struct sockaddr *)&(struct sockaddr){ AF_UNIX }, 2));
    struct sockaddr_un a;
    socklen_t len = sizeof(a);
    getsockname(s, (struct sockaddr *)&a, &len);
    printf("autobind: len %u abstract %d ~ %.5s\n", (unsigned)len, a.sun_path[0] == 0, a.sun_path + 1);
    SHOW("bind with the family alone again", bind(s, (struct sockaddr *)&(struct sockaddr){ AF_UNIX }, 2));
    int t = socket(AF_UNIX, SOCK_DGRAM, 0);
    SHOW("send to the autobound name", sendto(t, "auto", 4, 0, (struct sockaddr *)&a, len));
    show_recv("it receives", s, 64, 0);
    close(s);
    close(t);
}

/* sendmmsg and recvmmsg: several datagrams in one call each, their lengths. */
static void mmsg(void)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    static char bufs[4][16];
    struct iovec out[3] = { { "first", 5 }, { "second", 6 }, { "3", 1 } };
    struct mmsghdr om[3];
    memset(om, 0, sizeof(om));
    for (int i = 0; i < 3; i++) {
        om[i].msg_hdr.msg_iov = &out[i];
        om[i].msg_hdr.msg_iovlen = 1;
    }
    SHOW("sendmmsg of three", syscall(SYS_sendmmsg, sv[0], om, 3, 0));     /* (musl's sendmmsg loops over sendmsg) */
    printf("their lengths: %u %u %u\n", om[0].msg_len, om[1].msg_len, om[2].msg_len);
    struct iovec in[4];
    struct mmsghdr im[4];
    memset(im, 0, sizeof(im));
    for (int i = 0; i < 4; i++) {
        in[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) - 1 };
        im[i].msg_hdr.msg_iov = &in[i];
        im[i].msg_hdr.msg_iovlen = 1;
    }
    SHOW("recvmmsg of two", recvmmsg(sv[1], im, 2, 0, NULL));
    printf("got: %s (%u) %s (%u)\n", bufs[0], im[0].msg_len, bufs[1], im[1].msg_len);
    SHOW("recvmmsg of four, MSG_DONTWAIT, one there", recvmmsg(sv[1], im, 4, MSG_DONTWAIT, NULL));
    printf("got: %s (%u)\n", bufs[0], im[0].msg_len);
    SHOW("recvmmsg with none there, MSG_DONTWAIT", recvmmsg(sv[1], im, 4, MSG_DONTWAIT, NULL));
    SHOW("sendmmsg of none", syscall(SYS_sendmmsg, sv[0], om, 0, 0));
    SHOW("sendmmsg bad address", syscall(SYS_sendmmsg, sv[0], 8, 1, 0));
    SHOW("recvmmsg bad timeout", recvmmsg(sv[1], im, 1, MSG_DONTWAIT, (struct timespec *)8));
    SHOW("sendmmsg on a file", syscall(SYS_sendmmsg, open("/dev/null", O_RDONLY), om, 1, 0));
    close(sv[0]);
    close(sv[1]);
}

static void seqpacket(void)
{
    int sv[2];
    SHOW("socketpair seqpacket", socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
    send(sv[0], "first", 5, 0);
    send(sv[0], "second", 6, 0);
    show_recv("recv", sv[1], 64, 0);
    show_recv("recv 3 of 6", sv[1], 3, 0);
    pid_t pid = fork();
    if (pid == 0) {
        char buf[16];
        long r = recv(sv[0], buf, sizeof(buf), 0);
        send(sv[0], buf, (size_t)r, 0);
        _exit(0);
    }
    send(sv[1], "echo", 4, 0);
    show_recv("echoed by the child", sv[1], 64, 0);
    waitpid(pid, NULL, 0);
    close(sv[0]);
    show_recv("recv after the peer closed", sv[1], 64, 0);
    SHOW("send after the peer closed", send(sv[1], "x", 1, MSG_NOSIGNAL));
    close(sv[1]);

    struct sockaddr_un a;
    socklen_t al = named(&a, "/tmp/sp.sock");
    unlink(a.sun_path);
    int l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    bind(l, (struct sockaddr *)&a, al);
    SHOW("listen seqpacket", listen(l, 1));
    int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    SHOW("recv unconnected seqpacket", recv(s, &a, 1, MSG_DONTWAIT));
    SHOW("connect", connect(s, (struct sockaddr *)&a, al));
    int c = accept(l, NULL, NULL);
    send(s, "rec1", 4, 0);
    send(s, "record2", 7, 0);
    show_recv("server recv", c, 64, 0);
    show_recv("server recv", c, 64, 0);
    int st = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("a stream socket connects to a seqpacket listener", connect(st, (struct sockaddr *)&a, al));
    close(st);
    close(s);
    close(c);
    close(l);
    unlink(a.sun_path);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pair();
    bound();
    autobound();
    mmsg();
    seqpacket();
    return 0;
}
