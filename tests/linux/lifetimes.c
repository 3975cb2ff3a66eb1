/*
 * Lifetimes of open files, run as an attacker would: each part is a
 * sequence that once reached freed or reused state in the personality
 * (docs/design/personality.md, "Lifetimes"). On Linux every descriptor
 * keeps naming what it named; the transcripts must match.
 *
 * 1. SCM_RIGHTS queues purged inside each other: a file still open must
 *    stay open (and another process's files stay its own).
 * 2. A pipe write waiting after part of its bytes went, its descriptor
 *    closed by another thread: the write goes on with its file, and the
 *    thread's next write counts only its own bytes.
 * 3. epoll inside epoll: chains too deep and cycles are ELOOP; waits on
 *    the deepest allowed chain answer.
 * 4. /proc/self/fd/N of an O_PATH descriptor of a pipe that is gone
 *    reaches a new pipe of its own, never another process's.
 * 5. A listener sent into its own unaccepted connection's queue, then
 *    closed: collected (nothing stays after the program is done).
 * 6. An accepted connection shows its listener's abstract name but does
 *    not answer to it.
 * 7. One process parks pipes, eventfds and files in its socket queues
 *    until something says no: another process still gets its own.
 * 8. A vfork child (CLONE_VM | CLONE_VFORK) kills its parent while the
 *    parent waits for it.
 * 9. A few bytes written at the start of a file of the root archive
 *    bigger than a page: the rest of it reads as it was (the contents
 *    move to memory whole), and nothing past it.
 * 10. A stream sendmsg with a descriptor, bigger than the receiver's
 *    queue, waits and runs again: no reference to the descriptor's file
 *    stays behind (the pipe it names sees end of file once closed).
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

/* Send len bytes of data with descriptors fds[0..n) over socket s (sendmsg's flags). */
static long send_data(int s, const void *data, size_t len, const int *fds, int n, int flags)
{
    struct iovec iov = { (void *)data, len };
    union { char buf[CMSG_SPACE(8 * sizeof(int))]; struct cmsghdr align; } u;
    memset(&u, 0, sizeof(u));
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    return sendmsg(s, &m, flags);
}

/* Send descriptors fds[0..n) over socket s with one byte of data (sendmsg's flags). */
static long send_flags(int s, const int *fds, int n, int flags)
{
    return send_data(s, "x", 1, fds, n, flags);
}

/* The same, waiting for room. */
static long send_fds(int s, const int *fds, int n)
{
    return send_flags(s, fds, n, 0);
}

/* Print what descriptor fd reads from offset 0 (up to 31 bytes). */
static void show_fd(const char *what, int fd)
{
    char buf[32] = { 0 };
    errno = 0;
    long n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n < 0)
        printf("%s: -1 %s\n", what, errname(errno));
    else
        printf("%s: %ld \"%s\"\n", what, n, buf);
}

/* Wait for one byte on fd (a pipe from another process). */
static void wait_byte(int fd)
{
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR)
        ;
}

/* Part 1: the nested purge, then a victim process opening files, then sockets and pipes made and closed. */
static void scm_purge(void)
{
    write_text("/tmp/lt-x", "X-DATA");
    write_text("/tmp/lt-y", "Y-DATA");
    write_text("/tmp/lt-z", "Z-DATA");
    int x = open("/tmp/lt-x", O_RDWR), y = open("/tmp/lt-y", O_RDWR), z = open("/tmp/lt-z", O_RDWR);
    int a[2], b[2];
    SHOW("socketpair a", socketpair(AF_UNIX, SOCK_STREAM, 0, a));
    SHOW("socketpair b", socketpair(AF_UNIX, SOCK_STREAM, 0, b));
    int xy[2] = { x, y };
    SHOW("send x, y over b", send_fds(b[0], xy, 2));
    close(x);
    int bz[2] = { b[1], z };
    SHOW("send b1, z over a", send_fds(a[0], bz, 2));
    close(b[1]);
    close(b[0]);
    close(z);
    SHOW("close a1", close(a[1]));
    show_fd("y after the purge", y);
    struct stat st;
    SHOW("fstat y", fstat(y, &st));
    printf("y: size %ld, regular %d\n", (long)st.st_size, S_ISREG(st.st_mode));

    /* A victim opens files: none of them may become y. */
    int ready[2], go[2];
    pipe(ready);
    pipe(go);
    pid_t child = fork();
    if (child == 0) {
        int fds[8];
        for (int k = 0; k < 8; k++) {
            char path[32], text[32];
            snprintf(path, sizeof(path), "/tmp/lt-secret-%d", k);
            snprintf(text, sizeof(text), "CHILD-SECRET-%d", k);
            write_text(path, text);
            fds[k] = open(path, O_RDWR);
        }
        write(ready[1], "r", 1);
        wait_byte(go[0]);
        int intact = 0;
        for (int k = 0; k < 8; k++) {
            char want[32], got[32] = { 0 };
            snprintf(want, sizeof(want), "CHILD-SECRET-%d", k);
            intact += pread(fds[k], got, sizeof(got) - 1, 0) == (long)strlen(want) && strcmp(got, want) == 0;
        }
        printf("child: %d of 8 files intact\n", intact);
        _exit(0);
    }
    wait_byte(ready[0]);
    show_fd("y while the child holds files", y);
    SHOW("pwrite y", pwrite(y, "ATTACK", 6, 0));
    write(go[1], "g", 1);
    int status;
    waitpid(child, &status, 0);
    printf("child: status %d\n", WEXITSTATUS(status));
    show_text("lt-y", "/tmp/lt-y");
    show_text("lt-secret-5", "/tmp/lt-secret-5");

    /* Sockets, pipes and eventfds made and closed: y stays a regular file. */
    for (int k = 0; k < 6; k++) {
        int s[2], p[2];
        socketpair(AF_UNIX, SOCK_STREAM, 0, s);
        pipe(p);
        int e = eventfd(1, 0);
        close(s[0]);
        close(s[1]);
        close(p[0]);
        close(p[1]);
        close(e);
    }
    SHOW("F_GETPIPE_SZ of y", fcntl(y, F_GETPIPE_SZ));
    char buf[16] = { 0 };
    SHOW("read y", read(y, buf, 6));
    printf("read y: \"%s\"\n", buf);
    SHOW("write y", write(y, "!", 1));
    show_text("lt-y at last", "/tmp/lt-y");
    close(y);
    close(a[0]);
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
    for (int k = 0; k < 8; k++) {
        char path[32];
        snprintf(path, sizeof(path), "/tmp/lt-secret-%d", k);
        unlink(path);
    }
    unlink("/tmp/lt-x");
    unlink("/tmp/lt-y");
    unlink("/tmp/lt-z");
}

#define BIG 100000
static int wfd;
static char big[BIG];
static long big_result;

/* Part 2's writer: one write bigger than the pipe. */
static void *writer(void *arg)
{
    (void)arg;
    errno = 0;
    big_result = write(wfd, big, BIG);
    if (big_result < 0)
        big_result = -errno;
    return NULL;
}

/* Part 2: a waiting write whose descriptor another thread closes. */
static void write_closed(void)
{
    int p[2];
    signal(SIGPIPE, SIG_IGN);
    pipe(p);
    wfd = p[1];
    for (int i = 0; i < BIG; i++)
        big[i] = (char)('a' + i % 26);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    int avail = 0;
    for (int spins = 0; spins < 100000 && avail < 65536; spins++) {
        ioctl(p[0], FIONREAD, &avail);
        if (avail < 65536)
            sched_yield();
    }
    printf("pipe full: %d\n", avail);
    int keep = dup(p[1]);
    SHOW("close the writer's descriptor", close(p[1]));
    static char got[BIG];
    long total = 0;
    while (total < BIG) {
        long n = read(p[0], got + total, BIG - total);
        if (n <= 0)
            break;
        total += n;
    }
    pthread_join(t, NULL);
    printf("the waiting write: %ld\n", big_result);
    printf("read back: %ld bytes, %s\n", total, memcmp(got, big, BIG) == 0 ? "as written" : "DIFFERENT");
    SHOW("the next write, 10 bytes", write(keep, "0123456789", 10));
    char ten[16] = { 0 };
    SHOW("read it", read(p[0], ten, sizeof(ten) - 1));
    printf("read: \"%s\"\n", ten);
    close(keep);
    SHOW("read at end of file", read(p[0], ten, 1));
    close(p[0]);
}

/* Part 3: chains and cycles of epolls. */
static void epoll_nesting(void)
{
    enum { N = 9 };
    int e[N], f[N], g[N];
    for (int k = 0; k < N; k++) {
        e[k] = epoll_create1(0);
        f[k] = epoll_create1(0);
        g[k] = epoll_create1(0);
    }
    struct epoll_event ev = { .events = EPOLLIN };
    int ev0 = eventfd(1, 0);
    ev.data.u64 = 100;
    epoll_ctl(e[0], EPOLL_CTL_ADD, ev0, &ev);
    for (int k = 0; k + 1 < N; k++) {       /* bottom up: e[k] goes into e[k + 1] */
        char what[48];
        ev.data.u64 = (uint64_t)k;
        snprintf(what, sizeof(what), "add e%d into e%d", k, k + 1);
        SHOW(what, epoll_ctl(e[k + 1], EPOLL_CTL_ADD, e[k], &ev));
    }
    for (int k = 0; k + 1 < N; k++) {       /* top down: f[k + 1] goes into f[k] */
        char what[48];
        snprintf(what, sizeof(what), "add f%d into f%d", k + 1, k);
        SHOW(what, epoll_ctl(f[k], EPOLL_CTL_ADD, f[k + 1], &ev));
    }
    for (int k = 0; k + 1 < 4; k++)
        epoll_ctl(g[k], EPOLL_CTL_ADD, g[k + 1], &ev);
    SHOW("close the cycle g3 -> g0", epoll_ctl(g[3], EPOLL_CTL_ADD, g[0], &ev));
    SHOW("a cycle of two", epoll_ctl(g[5], EPOLL_CTL_ADD, g[6], &ev) | epoll_ctl(g[6], EPOLL_CTL_ADD, g[5], &ev));
    SHOW("itself", epoll_ctl(g[7], EPOLL_CTL_ADD, g[7], &ev));
    for (int k = 0; k < N; k++) {
        struct epoll_event out[4];
        char what[48];
        snprintf(what, sizeof(what), "wait e%d", k);
        SHOW(what, epoll_wait(e[k], out, 4, 0));
        snprintf(what, sizeof(what), "wait f%d", k);
        SHOW(what, epoll_wait(f[k], out, 4, 0));
    }
    for (int k = 0; k < N; k++) {
        close(e[k]);
        close(f[k]);
        close(g[k]);
    }
    close(ev0);
}

/* Part 4: a /proc FIFO of a pipe that is gone, while another process has pipes. */
static void proc_pipe(void)
{
    int q[2], ready[2], go[2];
    pipe(q);
    char path[48];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", q[0]);
    int opath = open(path, O_PATH);
    printf("O_PATH of the pipe: %s\n", opath >= 0 ? "ok" : errname(errno));
    close(q[0]);
    close(q[1]);
    pipe(ready);
    pipe(go);
    pid_t child = fork();
    if (child == 0) {
        int cp[2];
        pipe(cp);
        write(cp[1], "SECRET-OF-CHILD", 15);
        write(ready[1], "r", 1);
        wait_byte(go[0]);
        fcntl(cp[0], F_SETFL, O_NONBLOCK);
        char buf[32] = { 0 };
        long n = read(cp[0], buf, sizeof(buf) - 1);
        printf("child reads its pipe: %ld \"%s\"\n", n, buf);
        errno = 0;
        n = read(cp[0], buf, sizeof(buf) - 1);
        printf("child reads again: %ld %s\n", n, n < 0 ? errname(errno) : "");
        _exit(0);
    }
    wait_byte(ready[0]);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", opath);
    int fd = open(path, O_RDWR | O_NONBLOCK);
    printf("reopen: %s\n", fd >= 0 ? "ok" : errname(errno));
    char buf[32] = { 0 };
    SHOW("read the reopened pipe", read(fd, buf, sizeof(buf) - 1));
    SHOW("write INJECTED", write(fd, "INJECTED", 8));
    SHOW("read it back", read(fd, buf, sizeof(buf) - 1));
    printf("got: \"%s\"\n", buf);
    int fd2 = open(path, O_RDONLY | O_NONBLOCK);
    SHOW("a second reopen reads the same pipe", write(fd, "AGAIN", 5) + read(fd2, buf, sizeof(buf) - 1));
    write(go[1], "g", 1);
    int status;
    waitpid(child, &status, 0);
    printf("child: status %d\n", WEXITSTATUS(status));
    close(fd);
    close(fd2);
    close(opath);
}

/* An abstract address "\0name" into a; its length. */
static socklen_t abstract(struct sockaddr_un *a, const char *name)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name, strlen(name));
    return (socklen_t)(sizeof(sa_family_t) + 1 + strlen(name));
}

/* Part 5: rounds of a listener that sends itself into its own connection's queue. */
static void listener_in_flight(void)
{
    int done = 0;
    for (int r = 0; r < 120; r++) {
        char name[32];
        snprintf(name, sizeof(name), "lt-embryo-%d", r);
        struct sockaddr_un a;
        socklen_t len = abstract(&a, name);
        int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);
        if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, len) || listen(l, 1) ||
            connect(c, (struct sockaddr *)&a, len) || send_fds(c, &l, 1) != 1) {
            printf("round %d: %s\n", r, errname(errno));
            break;
        }
        close(l);
        close(c);
        done++;
    }
    printf("rounds done: %d\n", done);
    int s[2];
    SHOW("a socketpair afterwards", socketpair(AF_UNIX, SOCK_STREAM, 0, s));
    close(s[0]);
    close(s[1]);
}

/* Part 6: an accepted connection and its listener's abstract name. */
static void accepted_name(void)
{
    int d[3];
    for (int i = 0; i < 3; i++)
        d[i] = socket(AF_UNIX, SOCK_STREAM, 0);    /* low slots taken, then freed for the connection */
    struct sockaddr_un a;
    socklen_t len = abstract(&a, "lt-server");
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("bind", bind(l, (struct sockaddr *)&a, len));
    SHOW("listen", listen(l, 8));
    for (int i = 0; i < 3; i++)
        close(d[i]);
    int c1 = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("first connect", connect(c1, (struct sockaddr *)&a, len));
    int s1 = accept(l, NULL, NULL);
    printf("accept: %s\n", s1 >= 0 ? "ok" : errname(errno));
    struct sockaddr_un got;
    memset(&got, 0, sizeof(got));
    socklen_t glen = sizeof(got);
    getsockname(s1, (struct sockaddr *)&got, &glen);
    printf("the connection's name: %d bytes, \"%s\"\n", (int)glen, got.sun_path + 1);
    int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("second connect", connect(c2, (struct sockaddr *)&a, len));
    close(l);
    int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
    SHOW("bind again after the listener closed", bind(l2, (struct sockaddr *)&a, len));
    close(l2);
    close(c1);
    close(c2);
    close(s1);
}

/* Send fds[0..n) into one of the queues q[0..3], the next with room; 0, or -1 when all are full. */
static int park(const int *q, int *at, int *fds, int n)
{
    while (*at < 4) {
        if (send_flags(q[*at], fds, n, MSG_DONTWAIT) == 1)
            return 0;
        (*at)++;
    }
    return -1;
}

/* Part 7: a hog parks what it can (at most 300 of each) while a victim asks for its own. */
static void hog(void)
{
    int ready[2], go[2];
    pipe(ready);
    pipe(go);
    pid_t child = fork();
    if (child == 0) {
        int q[4], at = 0;
        socketpair(AF_UNIX, SOCK_STREAM, 0, q);
        socketpair(AF_UNIX, SOCK_STREAM, 0, q + 2);
        for (int k = 0; k < 300; k++) {
            int p[2];
            if (pipe(p))
                break;
            int bad = park(q, &at, p, 2);
            close(p[0]);
            close(p[1]);
            if (bad)
                break;
        }
        for (int k = 0; k < 300; k++) {
            int e = eventfd(0, 0);
            if (e < 0)
                break;
            int bad = park(q, &at, &e, 1);
            close(e);
            if (bad)
                break;
        }
        for (int k = 0; k < 300; k++) {
            int fd = open("/dev/null", O_RDONLY);
            if (fd < 0)
                break;
            int bad = park(q, &at, &fd, 1);
            close(fd);
            if (bad)
                break;
        }
        write(ready[1], "r", 1);
        wait_byte(go[0]);
        _exit(0);
    }
    wait_byte(ready[0]);
    int p[2], s[2];
    SHOW("victim: pipe", pipe(p));
    int fd = open("/dev/null", O_RDONLY), e = eventfd(0, 0), ep = epoll_create1(0);
    printf("victim: open %s\n", fd >= 0 ? "ok" : errname(errno));
    printf("victim: eventfd %s\n", e >= 0 ? "ok" : errname(errno));
    printf("victim: epoll_create1 %s\n", ep >= 0 ? "ok" : errname(errno));
    SHOW("victim: socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, s));
    write(go[1], "g", 1);
    int status;
    waitpid(child, &status, 0);
    printf("hog: status %d\n", WEXITSTATUS(status));
    close(p[0]);
    close(p[1]);
    close(s[0]);
    close(s[1]);
    close(fd);
    close(e);
    close(ep);
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
}

/* Part 8: the middle process vforks a child that kills it with SIGKILL. */
static void vfork_kills_parent(void)
{
    pid_t middle = fork();
    if (middle == 0) {
        long r = syscall(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
        if (r == 0) {                           /* the child, on the middle's stack: raw calls only */
            syscall(SYS_kill, syscall(SYS_getppid), SIGKILL);
            syscall(SYS_exit, 0);
        }
        _exit(3);                               /* (never: SIGKILL came first) */
    }
    int status;
    waitpid(middle, &status, 0);
    printf("the vfork parent: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    int p[2];
    SHOW("a pipe afterwards", pipe(p));
    close(p[0]);
    close(p[1]);
}

/* Part 9: write 8 bytes at the start of /bin/hello (78 KiB of the archive), read it all, put them back. */
static void big_file_write(void)
{
    int fd = open("/bin/hello", O_RDWR);
    struct stat st;
    fstat(fd, &st);
    static char before[256 * 1024], after[256 * 1024];
    long size = st.st_size < (long)sizeof(before) ? st.st_size : (long)sizeof(before);
    long got = pread(fd, before, size, 0);
    SHOW("pwrite 8 bytes at 0", pwrite(fd, "PETREL!!", 8, 0));
    long again = pread(fd, after, size + 100, 0);
    printf("read back: %s, %s\n", again == got ? "the same size" : "ANOTHER SIZE",
           memcmp(after, "PETREL!!", 8) == 0 && memcmp(after + 8, before + 8, size - 8) == 0 ? "the rest as it was"
                                                                                            : "DIFFERENT");
    SHOW("put them back", pwrite(fd, before, 8, 0));
    close(fd);
}

/* Part 10: a pipe's write end sent with 250000 bytes over a stream socket; all of it read. */
static void big_send_with_fd(void)
{
    enum { SIZE = 250000 };
    static char data[SIZE];
    int p[2], s[2];
    pipe(p);
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    pid_t child = fork();
    if (child == 0) {
        close(s[1]);
        long n = send_data(s[0], data, SIZE, &p[1], 1, 0);
        _exit(n == SIZE ? 0 : 1);
    }
    close(s[0]);
    close(p[1]);
    long total = 0, fds = 0;
    while (total < SIZE) {
        static char buf[65536];
        struct iovec iov = { buf, sizeof(buf) };
        union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        long n = recvmsg(s[1], &m, 0);
        if (n <= 0)
            break;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            int fd;
            memcpy(&fd, CMSG_DATA(c), sizeof(int));
            close(fd);
            fds++;
        }
        total += n;
    }
    int status;
    waitpid(child, &status, 0);
    printf("received %ld bytes and %ld descriptor; the sender: %d\n", total, fds, WEXITSTATUS(status));
    close(s[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    char c;
    SHOW("the pipe, every write end closed", read(p[0], &c, 1));
    close(p[0]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("-- SCM_RIGHTS purge\n");
    scm_purge();
    printf("-- a waiting write's descriptor closed\n");
    write_closed();
    printf("-- epoll nesting\n");
    epoll_nesting();
    printf("-- /proc pipe of a pipe that is gone\n");
    proc_pipe();
    printf("-- a listener in flight in its own connection\n");
    listener_in_flight();
    printf("-- an accepted connection and its listener's name\n");
    accepted_name();
    printf("-- one process parks what it can\n");
    hog();
    printf("-- a vfork child kills its parent\n");
    vfork_kills_parent();
    printf("-- a write at the start of a big file of the archive\n");
    big_file_write();
    printf("-- a stream sendmsg with a descriptor that waits\n");
    big_send_with_fd();
    printf("lifetimes: done\n");
    return 0;
}
