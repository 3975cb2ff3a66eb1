/*
 * Setting the clock (root may): clock_settime and settimeofday, the
 * clocks that cannot be set, Linux's order of checks, the calendar read
 * back through clock_gettime, gettimeofday and time, the time zone
 * settimeofday keeps, a child that sees the new time, and an absolute
 * sleep that follows the calendar while a relative one does not. The
 * clock is put back at the end.
 */
#include "lxtest.h"
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#define Y2030 1893456000ll                      /* 2030-01-01 00:00:00 UTC */

static int64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static long settime(clockid_t id, int64_t sec, int64_t nsec)
{
    struct timespec ts = { (time_t)sec, (long)nsec };
    return syscall(SYS_clock_settime, id, &ts);
}

static long settod(const struct timeval *tv, const struct timezone *tz)
{
    return syscall(SYS_settimeofday, tv, tz);
}

/* The calendar's year and day of the year now, from three calls. */
static void show_date(const char *what)
{
    struct timespec ts;
    struct timeval tv;
    struct timezone tz = { 99, 99 };
    clock_gettime(CLOCK_REALTIME, &ts);
    syscall(SYS_gettimeofday, &tv, &tz);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    printf("%s: %d day %d; gettimeofday agrees %d, time agrees %d; zone %d %d\n", what, tm.tm_year + 1900,
           tm.tm_yday, tv.tv_sec >= ts.tv_sec && tv.tv_sec - ts.tv_sec <= 1, t >= ts.tv_sec && t - ts.tv_sec <= 1,
           tz.tz_minuteswest, tz.tz_dsttime);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int64_t real0 = ns_of(CLOCK_REALTIME), mono0 = ns_of(CLOCK_MONOTONIC);

    SHOW("clock_settime MONOTONIC", settime(CLOCK_MONOTONIC, Y2030, 0));
    SHOW("clock_settime BOOTTIME", settime(CLOCK_BOOTTIME, Y2030, 0));
    SHOW("clock_settime REALTIME_COARSE", settime(CLOCK_REALTIME_COARSE, Y2030, 0));
    SHOW("clock_settime TAI", settime(CLOCK_TAI, Y2030, 0));
    SHOW("clock_settime PROCESS_CPUTIME", settime(CLOCK_PROCESS_CPUTIME_ID, Y2030, 0));
    SHOW("clock_settime THREAD_CPUTIME", settime(CLOCK_THREAD_CPUTIME_ID, Y2030, 0));
    clockid_t mine;
    clock_getcpuclockid(getpid(), &mine);
    SHOW("clock_settime of this process's CPU clock", settime(mine, Y2030, 0));
    SHOW("clock_settime of a CPU clock of nobody", settime((~(clockid_t)99999 << 3) | 2, Y2030, 0));
    SHOW("clock_settime 100", settime(100, Y2030, 0));
    SHOW("clock_settime MONOTONIC with a NULL time", syscall(SYS_clock_settime, CLOCK_MONOTONIC, NULL));
    SHOW("clock_settime REALTIME with a NULL time", syscall(SYS_clock_settime, CLOCK_REALTIME, NULL));
    SHOW("clock_settime REALTIME with a bad pointer", syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)16));
    SHOW("nanoseconds 1e9", settime(CLOCK_REALTIME, Y2030, 1000000000));
    SHOW("nanoseconds -1", settime(CLOCK_REALTIME, Y2030, -1));
    SHOW("seconds -1", settime(CLOCK_REALTIME, -1, 0));
    SHOW("the epoch (before the machine started)", settime(CLOCK_REALTIME, 0, 0));
    SHOW("the year 2262 and later", settime(CLOCK_REALTIME, 9223372036ll, 0));
    SHOW("the last second Linux allows + 1", settime(CLOCK_REALTIME, 9223372036ll - 946080000ll, 0));

    SHOW("clock_settime REALTIME 2030", settime(CLOCK_REALTIME, Y2030, 0));
    show_date("after clock_settime");
    int64_t mono1 = ns_of(CLOCK_MONOTONIC);
    printf("monotonic went on: %d\n", mono1 >= mono0);
    pid_t child = fork();
    if (child == 0) {
        show_date("a child");
        _exit(0);
    }
    waitpid(child, NULL, 0);

    struct timeval tv = { (time_t)(Y2030 + 86400 * 40), 999999 };
    struct timezone tz = { -60, 0 };
    SHOW("settimeofday NULL NULL", settod(NULL, NULL));
    struct timeval bad = { (time_t)Y2030, 1000000 };
    SHOW("settimeofday 1000000 microseconds", settod(&bad, NULL));
    bad.tv_usec = -1;
    SHOW("settimeofday -1 microseconds", settod(&bad, NULL));
    bad.tv_usec = 0;
    bad.tv_sec = -5;
    SHOW("settimeofday -5 seconds", settod(&bad, NULL));
    struct timezone far = { 15 * 60 + 1, 0 };
    SHOW("settimeofday zone 15 hours and a minute west", settod(NULL, &far));
    far.tz_minuteswest = -15 * 60 - 1;
    SHOW("settimeofday zone 15 hours and a minute east", settod(NULL, &far));
    SHOW("settimeofday bad tv pointer", settod((void *)16, NULL));
    SHOW("settimeofday bad tz pointer", settod(&tv, (void *)16));
    show_date("nothing changed");
    SHOW("settimeofday a time and a zone", settod(&tv, &tz));
    show_date("after settimeofday");
    tz.tz_minuteswest = 0;
    SHOW("settimeofday the zone alone", settod(NULL, &tz));
    show_date("zone back");

    /* an absolute sleep on the calendar follows it; a relative one does not */
    struct timespec wake_at;
    clock_gettime(CLOCK_REALTIME, &wake_at);
    wake_at.tv_sec += 10;
    pid_t sleeper = fork();
    if (sleeper == 0) {
        int64_t t0 = ns_of(CLOCK_MONOTONIC);
        int r = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &wake_at, NULL);
        printf("absolute sleep: %d, woke within 3 s of the clock's move: %d\n", r,
               ns_of(CLOCK_MONOTONIC) - t0 < 3000000000ll);
        _exit(0);
    }
    pid_t napper = fork();
    if (napper == 0) {
        int64_t t0 = ns_of(CLOCK_MONOTONIC);
        struct timespec half = { 0, 500000000 };
        int r = clock_nanosleep(CLOCK_REALTIME, 0, &half, NULL);
        printf("relative sleep: %d, took its half second: %d\n", r, ns_of(CLOCK_MONOTONIC) - t0 >= 500000000ll);
        _exit(0);
    }
    struct timespec tenth = { 0, 100000000 };
    nanosleep(&tenth, NULL);
    struct timespec later;
    clock_gettime(CLOCK_REALTIME, &later);
    long moved = settime(CLOCK_REALTIME, later.tv_sec + 20, later.tv_nsec);
    waitpid(sleeper, NULL, 0);
    waitpid(napper, NULL, 0);
    SHOW("the clock moved 20 s on (said after the sleepers)", moved);

    int64_t back = real0 + (ns_of(CLOCK_MONOTONIC) - mono0);
    SHOW("the clock put back", settime(CLOCK_REALTIME, back / 1000000000ll, back % 1000000000ll));
    int64_t off = ns_of(CLOCK_REALTIME) - (real0 + ns_of(CLOCK_MONOTONIC) - mono0);
    printf("back within a second: %d\n", off > -1000000000ll && off < 1000000000ll);
    return 0;
}
