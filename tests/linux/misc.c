/* Identity, uname, time and random bytes. */
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "lxtest.h"

int main(void)
{
    struct utsname u;
    SHOW("uname", uname(&u));
    printf("sysname: %s\n", u.sysname);
    printf("machine: %s\n", u.machine);
    printf("release starts with a digit: %d ~%s\n", u.release[0] >= '0' && u.release[0] <= '9', u.release);
    printf("version: ~%s\n", u.version);
    pid_t pid = getpid();
    printf("pid > 0: %d ~%d\n", pid > 0, pid);
    printf("ppid: ~%d\n", getppid());
    printf("gettid == getpid: %d\n", (pid_t)syscall(SYS_gettid) == pid);
    printf("set_tid_address returns the tid: %d\n", (pid_t)syscall(SYS_set_tid_address, NULL) == pid);
    printf("uid %d euid %d gid %d egid %d\n", getuid(), geteuid(), getgid(), getegid());
    struct timespec a, b;
    SHOW("clock_gettime MONOTONIC", clock_gettime(CLOCK_MONOTONIC, &a));
    for (volatile int i = 0; i < 100000; i++)
        ;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("monotonic goes forward: %d\n", b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec > a.tv_nsec));
    printf("nanoseconds below a second: %d\n", a.tv_nsec >= 0 && a.tv_nsec < 1000000000);
    SHOW("clock_gettime REALTIME", clock_gettime(CLOCK_REALTIME, &a));
    SHOW("clock_gettime BOOTTIME", clock_gettime(CLOCK_BOOTTIME, &a));
    SHOW("clock_gettime clock 99", syscall(SYS_clock_gettime, 99, &a));
    uint8_t r1[32], r2[32];
    SHOW("getrandom 32", getrandom(r1, sizeof(r1), 0));
    getrandom(r2, sizeof(r2), 0);
    printf("two draws differ: %d\n", memcmp(r1, r2, sizeof(r1)) != 0);
    SHOW("getrandom bad flags", getrandom(r1, 8, 0x80));
    SHOW("getrandom 0 bytes", getrandom(r1, 0, 0));
    return 0;
}
