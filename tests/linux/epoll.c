/*
 * epoll: ctl errors, level and edge triggering, one-shot, the data word,
 * a closed descriptor's watch going, an epoll inside an epoll (and a
 * loop), timeouts, and a wait woken by a child writing a pipe.
 */
#include "lxtest.h"
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

static int cmp(const void *a, const void *b)
{
    const struct epoll_event *x = a, *y = b;
    return x->data.u64 < y->data.u64 ? -1 : x->data.u64 > y->data.u64;
}

/* Wait (timeout ms) and print what came, sorted by data. */
static void show_wait(const char *what, int ep, int timeout)
{
    struct epoll_event ev[8];
    errno = 0;
    int n = epoll_wait(ep, ev, 8, timeout);
    if (n < 0) {
        printf("%s: -1 %s\n", what, errname(errno));
        return;
    }
    qsort(ev, (size_t)n, sizeof(ev[0]), cmp);
    printf("%s: %d", what, n);
    for (int i = 0; i < n; i++)
        printf(" [data %llu events 0x%x]", (unsigned long long)ev[i].data.u64, ev[i].events);
    printf("\n");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    SHOW("epoll_create1 bad flags", epoll_create1(1));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int p[2];
    pipe(p);
    struct epoll_event e = { EPOLLIN, { .u64 = 1 } };
    SHOW("add the read end", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e));
    SHOW("add it again", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e));
    e.events = EPOLLOUT;
    e.data.u64 = 2;
    SHOW("add the write end", epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &e));
    SHOW("add itself", epoll_ctl(ep, EPOLL_CTL_ADD, ep, &e));
    SHOW("add a bad descriptor", epoll_ctl(ep, EPOLL_CTL_ADD, 99, &e));
    SHOW("ctl on a pipe as epoll", epoll_ctl(p[0], EPOLL_CTL_ADD, p[1], &e));
    SHOW("bad op", epoll_ctl(ep, 7, p[0], &e));
    SHOW("mod a missing one", epoll_ctl(ep, EPOLL_CTL_MOD, 0 + 98, &e));
    SHOW("add with a bad event pointer", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], (void *)8));
    int file = open("/etc/hello.txt", O_RDONLY);
    SHOW("add a regular file", epoll_ctl(ep, EPOLL_CTL_ADD, file, &e));
    int dn = open("/dev/null", O_RDWR);
    SHOW("add /dev/null", epoll_ctl(ep, EPOLL_CTL_ADD, dn, &e));
    struct epoll_event out[4];
    SHOW("wait with maxevents 0", epoll_wait(ep, out, 0, 0));
    SHOW("wait on a pipe", epoll_wait(p[0], out, 4, 0));
    SHOW("wait with a bad buffer", epoll_wait(ep, (void *)8, 4, 0));

    show_wait("nothing to read", ep, 0);
    write(p[1], "ab", 2);
    show_wait("after a write", ep, 0);
    show_wait("level: again", ep, 0);
    e.events = EPOLLIN | EPOLLET;
    e.data.u64 = 1;
    SHOW("mod to edge", epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &e));
    show_wait("edge: first", ep, 0);
    show_wait("edge: nothing new", ep, 0);
    char buf[8];
    read(p[0], buf, sizeof(buf));
    write(p[1], "c", 1);
    show_wait("edge: new data after draining", ep, 0);
    read(p[0], buf, sizeof(buf));
    e.events = EPOLLIN | EPOLLONESHOT;
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &e);
    write(p[1], "d", 1);
    show_wait("one-shot", ep, 0);
    show_wait("one-shot: off", ep, 0);
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &e);
    show_wait("one-shot: rearmed", ep, 0);
    SHOW("del the write end", epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL));
    SHOW("del it again", epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL));
    read(p[0], buf, sizeof(buf));

    int efd = eventfd(0, 0);
    e.events = EPOLLIN;
    e.data.u64 = 3;
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e);
    int inner = epoll_create1(0);
    e.data.u64 = 4;
    SHOW("add the eventfd to an inner epoll", epoll_ctl(inner, EPOLL_CTL_ADD, efd, &e));
    e.data.u64 = 5;
    SHOW("add the inner epoll", epoll_ctl(ep, EPOLL_CTL_ADD, inner, &e));
    SHOW("add the outer to the inner: a loop", epoll_ctl(inner, EPOLL_CTL_ADD, ep, &e));
    uint64_t one = 1;
    write(efd, &one, 8);
    show_wait("eventfd and the inner epoll", ep, 0);
    show_wait("the inner epoll", inner, 0);
    read(efd, &one, 8);
    close(efd);
    show_wait("the eventfd closed: its watches gone", ep, 0);
    show_wait("a 30 ms timeout", ep, 30);

    pid_t pid = fork();
    if (pid == 0) {
        usleep(50000);
        write(p[1], "x", 1);
        _exit(0);
    }
    show_wait("woken by a child's write", ep, 5000);
    waitpid(pid, NULL, 0);
    close(p[1]);
    read(p[0], buf, sizeof(buf));
    show_wait("the other end closed", ep, 0);
    return 0;
}
