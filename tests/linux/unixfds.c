/*
 * SCM_RIGHTS over AF_UNIX sockets: descriptors of a file, a pipe and a
 * socket passed to a forked child and used there; several in one message;
 * a control buffer too small (MSG_CTRUNC); MSG_CMSG_CLOEXEC; MSG_PEEK;
 * where a stream read stops around a message that carries descriptors;
 * bad control data; and sockets that only descriptors in flight hold.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

/* Send `text` with descriptors fds[0..n) (n may be 0). */
static long send_fds(int s, const char *text, const int *fds, int n)
{
    union { char buf[CMSG_SPACE(sizeof(int) * 8)]; struct cmsghdr align; } u;
    struct iovec iov = { (void *)text, strlen(text) };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (n) {
        memset(&u, 0, sizeof(u));
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
    }
    return sendmsg(s, &m, 0);
}

/* Receive into a control buffer of `room` bytes: prints the bytes, the
 * flags and how many descriptors came; their numbers into fds. */
static int recv_fds(const char *what, int s, size_t room, int flags, int *fds)
{
    union { char buf[256]; struct cmsghdr align; } u;
    char text[64] = { 0 };
    struct iovec iov = { text, sizeof(text) - 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = room ? u.buf : NULL, .msg_controllen = room };
    errno = 0;
    long r = recvmsg(s, &m, flags);
    if (r < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return 0;
    }
    int n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fds + n, CMSG_DATA(c), sizeof(int) * (size_t)k);
            n += k;
        }
    }
    printf("%s: %ld \"%s\" flags 0x%x controllen %zu fds %d\n", what, r, text, (unsigned)m.msg_flags,
           (size_t)m.msg_controllen, n);
    return n;
}

static void to_child(void)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    write_text("/tmp/passed.txt", "a file passed along\n");
    int file = open("/tmp/passed.txt", O_RDONLY);
    int p[2];
    pipe(p);
    int inner[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, inner);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        close(file);
        close(p[1]);
        close(inner[1]);
        int fds[8];
        int n = recv_fds("child receives", sv[1], 256, 0, fds);
        char buf[64] = { 0 };
        read(fds[0], buf, sizeof(buf) - 1);
        printf("child reads the file: %s", buf);
        struct stat st;
        fstat(fds[1], &st);
        printf("child's second is a pipe: %d, third a socket: %d\n", S_ISFIFO(st.st_mode),
               (fstat(fds[2], &st), S_ISSOCK(st.st_mode)));
        write(fds[1], "through the pipe", 16);
        send(fds[2], "through the socket", 18, 0);
        printf("child got %d\n", n);
        _exit(0);
    }
    close(sv[1]);
    int fds[3] = { file, p[1], inner[1] };
    long sent = send_fds(sv[0], "take these", fds, 3);
    close(file);
    close(p[1]);
    close(inner[1]);
    waitpid(pid, NULL, 0);
    printf("sent three descriptors: %ld\n", sent);
    char buf[64] = { 0 };
    SHOW("parent reads the pipe", read(p[0], buf, sizeof(buf) - 1));
    printf("pipe: %s\n", buf);
    memset(buf, 0, sizeof(buf));
    SHOW("parent reads the socket", recv(inner[0], buf, sizeof(buf) - 1, 0));
    printf("socket: %s\n", buf);
    SHOW("the pipe's writers are gone", read(p[0], buf, 1));
    close(p[0]);
    close(inner[0]);
    close(sv[0]);
}

static void details(void)
{
    int sv[2], fds[8];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int a = open("/dev/null", O_RDONLY), b = open("/etc/hello.txt", O_RDONLY);
    int two[2] = { a, b };

    send_fds(sv[0], "small", two, 2);
    int n = recv_fds("control room for one", sv[1], CMSG_SPACE(sizeof(int)), 0, fds);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    send_fds(sv[0], "none", two, 2);
    recv_fds("no control buffer", sv[1], 0, 0, fds);
    send_fds(sv[0], "tiny", two, 2);
    recv_fds("a control buffer smaller than a header", sv[1], 8, 0, fds);

    send_fds(sv[0], "cloexec", two, 1);
    n = recv_fds("MSG_CMSG_CLOEXEC", sv[1], 256, MSG_CMSG_CLOEXEC, fds);
    printf("FD_CLOEXEC: %d\n", n ? fcntl(fds[0], F_GETFD) & FD_CLOEXEC : -1);
    if (n)
        close(fds[0]);
    send_fds(sv[0], "plain", two, 1);
    n = recv_fds("without it", sv[1], 256, 0, fds);
    printf("FD_CLOEXEC: %d\n", n ? fcntl(fds[0], F_GETFD) & FD_CLOEXEC : -1);
    if (n)
        close(fds[0]);

    send_fds(sv[0], "peek", two, 1);
    n = recv_fds("MSG_PEEK", sv[1], 256, MSG_PEEK, fds);
    if (n)
        close(fds[0]);
    n = recv_fds("then for real", sv[1], 256, 0, fds);
    if (n)
        close(fds[0]);

    /* stream reads: data before a message with descriptors joins it; data after it does not */
    send_fds(sv[0], "ab", NULL, 0);
    send_fds(sv[0], "cd", two, 1);
    send_fds(sv[0], "ef", NULL, 0);
    n = recv_fds("read across", sv[1], 256, 0, fds);
    if (n)
        close(fds[0]);
    send_fds(sv[0], "gh", two, 1);
    send_fds(sv[0], "ij", two, 1);
    n = recv_fds("two messages with descriptors", sv[1], 256, 0, fds);
    if (n)
        close(fds[0]);
    n = recv_fds("the second", sv[1], 256, 0, fds);
    if (n)
        close(fds[0]);
    SHOW("an empty write with descriptors", send_fds(sv[0], "", two, 1));

    /* bad control data */
    int bad = 99;
    SHOW("a closed descriptor", send_fds(sv[0], "x", &bad, 1));
    char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
    struct iovec iov = { "x", 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = 77;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    SHOW("an unknown control message", sendmsg(sv[0], &m, 0));
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = sizeof(cbuf) + 8;
    SHOW("a control length past the buffer", sendmsg(sv[0], &m, 0));
    c->cmsg_len = 4;
    SHOW("a control length below a header", sendmsg(sv[0], &m, 0));
    c->cmsg_len = CMSG_LEN(sizeof(int));
    c->cmsg_level = 99;
    SHOW("another level (ignored)", sendmsg(sv[0], &m, 0));
    char tmp[8];
    SHOW("what went", recv(sv[1], tmp, sizeof(tmp), MSG_DONTWAIT));
    SHOW("nothing more", recv(sv[1], tmp, sizeof(tmp), MSG_DONTWAIT));
    close(a);
    close(b);
    close(sv[0]);
    close(sv[1]);
}

/* SO_PASSCRED: SCM_CREDENTIALS with each message, before any descriptors;
 * a stream read does not join two writers' bytes. */
static void credentials(void)
{
    int sv[2], one = 1;
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
    write(sv[0], "p1", 2);
    pid_t pid = fork();
    if (pid == 0) {
        write(sv[0], "c1", 2);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    int fd = open("/dev/null", O_RDONLY);
    send_fds(sv[0], "p2", &fd, 1);
    for (int i = 0; i < 3; i++) {
        union { char buf[256]; struct cmsghdr align; } u;
        char text[16] = { 0 };
        struct iovec iov = { text, sizeof(text) - 1 };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        long r = recvmsg(sv[1], &m, 0);
        printf("read %ld \"%s\":", r, text);
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_type == SCM_CREDENTIALS) {
                struct ucred cr;
                memcpy(&cr, CMSG_DATA(c), sizeof(cr));
                printf(" credentials (me %d, child %d, uid %d)", cr.pid == getpid(), cr.pid == pid, (int)cr.uid);
            } else if (c->cmsg_type == SCM_RIGHTS) {
                int got;
                memcpy(&got, CMSG_DATA(c), sizeof(got));
                printf(" a descriptor");
                close(got);
            }
        }
        printf("\n");
    }
    write(sv[0], "x", 1);
    char cbuf[16], t;
    struct iovec iov = { &t, 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
    SHOW("a control buffer too small for them", recvmsg(sv[1], &m, 0));
    printf("MSG_CTRUNC: %d\n", !!(m.msg_flags & MSG_CTRUNC));
    close(fd);
    close(sv[0]);
    close(sv[1]);
}

/* Sockets held only by descriptors in flight: sent over themselves, and a
 * cycle of two, then closed; many rounds, so a leak would use up the
 * sockets there are. */
static void cycles(void)
{
    int ok = 0;
    for (int round = 0; round < 200; round++) {
        int sv[2], tv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || socketpair(AF_UNIX, SOCK_DGRAM, 0, tv) < 0) {
            printf("round %d: socketpair: %s\n", round, errname(errno));
            break;
        }
        send_fds(sv[0], "self", &sv[1], 1);     /* sv[1] in its own queue */
        send_fds(tv[0], "x", &sv[0], 1);         /* a cycle: sv[0] in tv[1]'s queue... */
        send_fds(sv[1], "y", &tv[0], 1);         /* ...and tv[0] in sv[0]'s */
        close(sv[0]);
        close(sv[1]);
        close(tv[0]);
        close(tv[1]);
        ok++;
    }
    printf("rounds of sockets held only in flight: %d\n", ok);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    to_child();
    details();
    credentials();
    cycles();
    return 0;
}
