/*
 * timerfd: creation errors, settime and gettime (relative, absolute,
 * interval, disarm), read counts, nonblocking reads, poll, and a blocking
 * read. Times are printed coarsely, so that Linux and Petrel agree under load.
 */
#include "lxtest.h"
#include <poll.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

static long ms(const struct timespec *t) { return t->tv_sec * 1000 + t->tv_nsec / 1000000; }

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    SHOW("create with a bad clock", timerfd_create(99, 0));
    SHOW("create with CPU-time clock", timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0));
    SHOW("create with bad flags", timerfd_create(CLOCK_MONOTONIC, 0x40));
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    printf("create: %d\n", fd >= 0);
    uint64_t n = 0;
    SHOW("read disarmed", read(fd, &n, 8));
    struct itimerspec cur, its = { { 0, 0 }, { 0, 20 * 1000 * 1000 } };
    SHOW("settime 20 ms", timerfd_settime(fd, 0, &its, NULL));
    timerfd_gettime(fd, &cur);
    printf("gettime: interval %ld ms, left at most 20 ms: %d\n", ms(&cur.it_interval), ms(&cur.it_value) <= 20);
    SHOW("read before expiry", read(fd, &n, 8));
    struct pollfd p = { fd, POLLIN, 0 };
    SHOW("poll until it expires", poll(&p, 1, 5000));
    SHOW("read", read(fd, &n, 8));
    printf("expirations %llu\n", (unsigned long long)n);
    timerfd_gettime(fd, &cur);
    printf("after: left %ld ms\n", ms(&cur.it_value));

    struct itimerspec every = { { 0, 10 * 1000 * 1000 }, { 0, 10 * 1000 * 1000 } };
    timerfd_settime(fd, 0, &every, NULL);
    usleep(45000);
    read(fd, &n, 8);
    printf("interval 10 ms after 45 ms: at least 3: %d\n", n >= 3);
    struct itimerspec old, off = { { 0, 0 }, { 0, 0 } };
    SHOW("disarm", timerfd_settime(fd, 0, &off, &old));
    printf("old interval %ld ms\n", ms(&old.it_interval));
    SHOW("read disarmed", read(fd, &n, 8));
    SHOW("settime bad flags", timerfd_settime(fd, 8, &its, NULL));
    struct itimerspec bad = { { 0, 0 }, { 0, 1000000000 } };
    SHOW("settime bad nanoseconds", timerfd_settime(fd, 0, &bad, NULL));
    SHOW("settime bad pointer", timerfd_settime(fd, 0, (void *)8, NULL));
    SHOW("settime cancel-on-set on a monotonic clock", timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL));
    SHOW("settime on stdin", timerfd_settime(0, 0, &its, NULL));
    SHOW("settime on a bad descriptor", timerfd_settime(99, 0, &its, NULL));
    SHOW("read 4 bytes", read(fd, &n, 4));

    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct itimerspec abs = { { 0, 0 }, { now.tv_sec, now.tv_nsec } };
    abs.it_value.tv_nsec += 30 * 1000 * 1000;
    if (abs.it_value.tv_nsec >= 1000000000) {
        abs.it_value.tv_sec++;
        abs.it_value.tv_nsec -= 1000000000;
    }
    int blk = timerfd_create(CLOCK_MONOTONIC, 0);
    SHOW("settime absolute", timerfd_settime(blk, TFD_TIMER_ABSTIME, &abs, NULL));
    SHOW("blocking read", read(blk, &n, 8));
    printf("expirations %llu\n", (unsigned long long)n);
    int rt = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    clock_gettime(CLOCK_REALTIME, &now);
    struct itimerspec past = { { 0, 0 }, { now.tv_sec - 10, 0 } };
    SHOW("realtime absolute in the past", timerfd_settime(rt, TFD_TIMER_ABSTIME, &past, NULL));
    usleep(1000);
    SHOW("read", read(rt, &n, 8));
    printf("expirations %llu\n", (unsigned long long)n);
    return 0;
}
