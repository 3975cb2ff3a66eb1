/*
 * AF_UNIX stream sockets: socketpair, then a server on a path and one on
 * an abstract name (bind, listen, connect, accept4 across fork), names,
 * options, shutdown, end of file, EPIPE, ECONNRESET, poll states, MSG_PEEK,
 * MSG_WAITALL, MSG_DONTWAIT, a transfer bigger than the queue, and the
 * errors of each call.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <stddef.h>
#include <stdint.h>

static volatile uintptr_t bad_ptr = 8;     /* (an address the compiler cannot see through) */

static int polled(int fd)
{
    struct pollfd p = { fd, POLLIN | POLLOUT | POLLRDHUP, 0 };
    poll(&p, 1, 0);
    return p.revents;
}

static socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    strcpy(a->sun_path, path);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name, strlen(name));
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

static void show_name(const char *what, int fd, int peer)
{
    struct sockaddr_un a;
    memset(&a, 0x55, sizeof(a));
    socklen_t len = sizeof(a);
    errno = 0;
    int r = peer ? getpeername(fd, (struct sockaddr *)&a, &len) : getsockname(fd, (struct sockaddr *)&a, &len);
    if (r < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    printf("%s: len %u family %d", what, (unsigned)len, a.sun_family);
    if (len > 2 && a.sun_path[0])
        printf(" path %s", a.sun_path);
    else if (len > 2)
        printf(" abstract %.*s", (int)(len - 3), a.sun_path + 1);
    printf("\n");
}

static void show_opt(const char *what, int fd, int name)
{
    int v = -7;
    socklen_t len = sizeof(v);
    errno = 0;
    if (getsockopt(fd, SOL_SOCKET, name, &v, &len) < 0)
        printf("%s: -1 %s\n", what, errname(errno));
    else
        printf("%s: %d (len %u)\n", what, v, (unsigned)len);
}

static void pair_basics(void)
{
    int sv[2];
    SHOW("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    struct stat st;
    fstat(sv[0], &st);
    printf("fstat: socket %d mode %o\n", S_ISSOCK(st.st_mode), (unsigned)(st.st_mode & 0777));
    printf("F_GETFL: 0%o\n", (unsigned)fcntl(sv[0], F_GETFL));
    printf("poll fresh: 0x%x\n", polled(sv[0]));
    SHOW("write hello", write(sv[0], "hello", 5));
    printf("poll with data: 0x%x\n", polled(sv[1]));
    int n = -1;
    ioctl(sv[1], FIONREAD, &n);
    printf("FIONREAD: %d\n", n);
    char buf[64] = { 0 };
    SHOW("recv peek", recv(sv[1], buf, 3, MSG_PEEK));
    printf("peeked: %s\n", buf);
    memset(buf, 0, sizeof(buf));
    SHOW("read", read(sv[1], buf, sizeof(buf)));
    printf("read: %s\n", buf);
    SHOW("recv empty, MSG_DONTWAIT", recv(sv[1], buf, 1, MSG_DONTWAIT));
    SHOW("send two", send(sv[1], "ab", 2, 0));
    SHOW("send three", send(sv[1], "cde", 3, 0));
    memset(buf, 0, sizeof(buf));
    SHOW("read merges them", read(sv[0], buf, sizeof(buf)));
    printf("read: %s\n", buf);
    struct iovec iov[2] = { { "vec", 3 }, { "tor", 3 } };
    SHOW("writev", writev(sv[0], iov, 2));
    char x[4] = { 0 }, y[8] = { 0 };
    struct iovec rv[2] = { { x, 2 }, { y, 7 } };
    SHOW("readv", readv(sv[1], rv, 2));
    printf("readv: %s %s\n", x, y);
    show_name("getsockname of a pair", sv[0], 0);
    show_name("getpeername of a pair", sv[0], 1);
    show_opt("SO_TYPE", sv[0], SO_TYPE);
    show_opt("SO_DOMAIN", sv[0], SO_DOMAIN);
    show_opt("SO_PROTOCOL", sv[0], SO_PROTOCOL);
    show_opt("SO_ACCEPTCONN", sv[0], SO_ACCEPTCONN);
    show_opt("SO_ERROR", sv[0], SO_ERROR);
    show_opt("SO_PASSCRED", sv[0], SO_PASSCRED);
    int one = 1;
    SHOW("set SO_PASSCRED", setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)));
    show_opt("SO_PASSCRED now", sv[0], SO_PASSCRED);
    SHOW("set SO_TYPE", setsockopt(sv[0], SOL_SOCKET, SO_TYPE, &one, sizeof(one)));
    SHOW("set short option", setsockopt(sv[0], SOL_SOCKET, SO_KEEPALIVE, &one, 2));
    SHOW("set unknown option", setsockopt(sv[0], SOL_SOCKET, 9999, &one, sizeof(one)));
    SHOW("get unknown option", getsockopt(sv[0], SOL_SOCKET, 9999, &one, &(socklen_t){ 4 }));
    struct ucred cred = { 0 };
    socklen_t cl = sizeof(cred);
    SHOW("SO_PEERCRED", getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &cl));
    printf("SO_PEERCRED: is me %d uid %d gid %d len %u\n", cred.pid == getpid(), (int)cred.uid, (int)cred.gid,
           (unsigned)cl);
    struct timeval tv = { 0, 200000 };
    SHOW("SO_RCVTIMEO 0.2 s", setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    SHOW("read times out", read(sv[0], buf, 1));
    tv.tv_usec = 2000000;
    SHOW("SO_RCVTIMEO bad usec", setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    SHOW("lseek", lseek(sv[0], 0, SEEK_SET));
    SHOW("pread", pread(sv[0], buf, 1, 0));

    /* shutdown: the writer's end of file, then EPIPE */
    SHOW("send before shutdown", send(sv[0], "zz", 2, 0));
    SHOW("shutdown SHUT_WR", shutdown(sv[0], SHUT_WR));
    printf("poll after SHUT_WR (writer): 0x%x\n", polled(sv[0]));
    printf("poll after SHUT_WR (reader): 0x%x\n", polled(sv[1]));
    SHOW("read the rest", read(sv[1], buf, 10));
    SHOW("read end of file", read(sv[1], buf, 10));
    SHOW("send after SHUT_WR, MSG_NOSIGNAL", send(sv[0], "x", 1, MSG_NOSIGNAL));
    signal(SIGPIPE, SIG_IGN);
    SHOW("write after SHUT_WR", write(sv[0], "x", 1));
    SHOW("the other way still works", write(sv[1], "back", 4));
    SHOW("read it", read(sv[0], buf, 10));
    SHOW("shutdown bad how", shutdown(sv[0], 7));
    SHOW("shutdown SHUT_RDWR", shutdown(sv[1], SHUT_RDWR));
    printf("poll after both: 0x%x 0x%x\n", polled(sv[0]), polled(sv[1]));
    close(sv[0]);
    close(sv[1]);

    /* close with data unread: the peer reads ECONNRESET, then end of file */
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    write(sv[0], "unread", 6);
    close(sv[1]);
    printf("poll of the survivor: 0x%x\n", polled(sv[0]));
    SHOW("read after peer closed with data", read(sv[0], buf, 10));
    SHOW("read again", read(sv[0], buf, 10));
    SHOW("write to closed peer", write(sv[0], "x", 1));
    show_name("getpeername after close", sv[0], 1);
    close(sv[0]);
}

static void errors(void)
{
    char buf[8];
    int fd = open("/dev/null", O_RDONLY);
    SHOW("socket bad type", socket(AF_UNIX, 99, 0));
    SHOW("socket bad flags", socket(AF_UNIX, SOCK_STREAM | 0x100, 0));
    SHOW("socket bad protocol", socket(AF_UNIX, SOCK_STREAM, 7));
    SHOW("socket bad family", socket(12345, SOCK_STREAM, 0));
    SHOW("socketpair bad address", socketpair(AF_UNIX, SOCK_STREAM, 0, (int *)(uintptr_t)bad_ptr));
    SHOW("bind a file", bind(fd, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "x" }, 4));
    SHOW("send to a file", send(fd, "x", 1, 0));
    SHOW("send bad fd", send(99, "x", 1, 0));
    SHOW("recv a file", recv(fd, buf, 1, 0));
    SHOW("listen a file", listen(fd, 1));
    SHOW("shutdown a file", shutdown(fd, SHUT_RD));
    SHOW("getsockopt a file", getsockopt(fd, SOL_SOCKET, SO_TYPE, buf, &(socklen_t){ 4 }));
    close(fd);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    printf("socket: %d\n", s >= 0);
    printf("poll unconnected: 0x%x\n", polled(s));
    SHOW("listen unbound", listen(s, 1));
    SHOW("recv unconnected", recv(s, buf, 1, 0));
    SHOW("send unconnected", send(s, "x", 1, MSG_NOSIGNAL));
    SHOW("accept unbound", accept(s, NULL, NULL));
    show_name("getsockname unbound", s, 0);
    show_name("getpeername unconnected", s, 1);
    SHOW("shutdown unconnected", shutdown(s, SHUT_RDWR));
    SHOW("connect to nothing", connect(s, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/tmp/none" }, 12));
    SHOW("connect to a file", connect(s, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/etc/hello.txt" }, 17));
    SHOW("connect short address", connect(s, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "" }, 1));
    SHOW("connect bad family", connect(s, (struct sockaddr *)&(struct sockaddr_un){ 2, "/tmp/x" }, 9));
    SHOW("connect long address", connect(s, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/tmp/x" }, 111));
    SHOW("connect bad address", connect(s, (struct sockaddr *)8, 9));
    SHOW("bind in a missing directory", bind(s, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/no/x" }, 8));
    SHOW("bind bad family", bind(s, (struct sockaddr *)&(struct sockaddr_un){ 2, "/tmp/x" }, 9));
    SHOW("bind over a file", bind(s, (struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, "/etc/hello.txt" }, 17));
    close(s);
}

/* A server on address a (len) in this process, a client in a child. */
static void server(const char *what, struct sockaddr_un *a, socklen_t len)
{
    printf("-- %s\n", what);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    SHOW("bind", bind(l, (struct sockaddr *)a, len));
    int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("bind the same address again", bind(l2, (struct sockaddr *)a, len));
    SHOW("bind twice", bind(l, (struct sockaddr *)a, len));
    show_name("getsockname", l, 0);
    SHOW("connect before listen", connect(l2, (struct sockaddr *)a, len));
    SHOW("listen", listen(l, 4));
    show_opt("SO_ACCEPTCONN", l, SO_ACCEPTCONN);
    printf("poll listener idle: 0x%x\n", polled(l));
    SHOW("accept4 bad flags", syscall(SYS_accept4, l, 0, 0, 0x100));
    fcntl(l, F_SETFL, O_NONBLOCK);
    SHOW("accept on O_NONBLOCK, nobody", accept(l, NULL, NULL));
    fcntl(l, F_SETFL, 0);
    SHOW("connect to self", connect(l, (struct sockaddr *)a, len));
    close(l2);
    pid_t pid = fork();
    if (pid == 0) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)a, len) < 0) {
            printf("child connect: %s\n", errname(errno));
            _exit(1);
        }
        write(s, "ping", 4);
        char buf[16] = { 0 };
        read(s, buf, sizeof(buf));
        printf("child got: %s\n", buf);
        int big = 300000, sum = 0;
        char *data = malloc((size_t)big);
        for (int i = 0; i < big; i++)
            data[i] = (char)(i * 7), sum += (unsigned char)data[i];
        long w = write(s, data, (size_t)big);       /* more than the queue holds: the writer waits */
        printf("child wrote %ld, sum %d\n", w, sum);
        shutdown(s, SHUT_WR);
        read(s, buf, 1);                            /* until the server closes */
        _exit(0);
    }
    struct sockaddr_un peer;
    memset(&peer, 0x55, sizeof(peer));
    socklen_t pl = sizeof(peer);
    int c = accept4(l, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
    printf("accept4: %d, peer address len %u family %d\n", c >= 0, (unsigned)pl, peer.sun_family);
    printf("accepted socket CLOEXEC: %d\n", fcntl(c, F_GETFD) & FD_CLOEXEC);
    show_name("accepted getsockname", c, 0);
    show_name("accepted getpeername", c, 1);
    struct ucred cred = { 0 };
    socklen_t cl = sizeof(cred);
    getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
    printf("SO_PEERCRED of the client: is the child %d\n", cred.pid == pid);
    char buf[16] = { 0 };
    SHOW("recv MSG_WAITALL", recv(c, buf, 4, MSG_WAITALL));
    printf("server got: %s\n", buf);
    write(c, "pong", 4);
    char *in = malloc(400000);
    long got = 0, r;
    while ((r = read(c, in + got, 400000 - got)) > 0)
        got += r;
    int sum = 0;
    for (long i = 0; i < got; i++)
        sum += (unsigned char)in[i];
    printf("server read %ld, sum %d, last read %ld\n", got, sum, r);
    close(c);
    int status;
    waitpid(pid, &status, 0);
    printf("child status %d\n", WEXITSTATUS(status));
    close(l);
    free(in);
}

/* connect() with a full backlog: EAGAIN without waiting; unaccepted connections reset when the listener closes. */
static void backlog(void)
{
    printf("-- backlog\n");
    struct sockaddr_un a;
    socklen_t len = abstract_addr(&a, "petrel-backlog");
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    bind(l, (struct sockaddr *)&a, len);
    SHOW("listen 0", listen(l, 0));
    int c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        char what[32];
        snprintf(what, sizeof(what), "connect %d", i);
        SHOW(what, connect(c[i], (struct sockaddr *)&a, len));
    }
    printf("poll listener with a connection: 0x%x\n", polled(l));
    SHOW("write before accept", write(c[0], "early", 5));
    int s = accept(l, NULL, NULL);
    char buf[8] = { 0 };
    SHOW("read what came before accept", read(s, buf, sizeof(buf)));
    SHOW("connect 2 again", connect(c[2], (struct sockaddr *)&a, len));
    SHOW("connect 2 once more", connect(c[2], (struct sockaddr *)&a, len));
    close(l);
    SHOW("read of the unaccepted after listener close", read(c[2], buf, 1));
    SHOW("accepted one still works", write(s, "ok", 2));
    SHOW("and its peer reads it", read(c[0], buf, 2));
    SHOW("connect after listener closed", connect(c[1], (struct sockaddr *)&a, len));
    for (int i = 0; i < 3; i++)
        close(c[i]);
    close(s);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pair_basics();
    errors();
    struct sockaddr_un a;
    unlink("/tmp/petrel.sock");
    socklen_t len = path_addr(&a, "/tmp/petrel.sock");
    server("a path", &a, len);
    struct stat st;
    SHOW("the socket file stays", stat("/tmp/petrel.sock", &st));
    printf("it is a socket: %d\n", S_ISSOCK(st.st_mode));
    SHOW("open it", open("/tmp/petrel.sock", O_RDONLY));
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("connect to it, nobody listening", connect(s, (struct sockaddr *)&a, len));
    close(s);
    SHOW("unlink it", unlink("/tmp/petrel.sock"));
    chdir("/tmp");
    len = path_addr(&a, "rel.sock");
    server("a relative path", &a, len);
    unlink("/tmp/rel.sock");
    len = abstract_addr(&a, "petrel-test");
    server("an abstract name", &a, len);
    backlog();
    return 0;
}
