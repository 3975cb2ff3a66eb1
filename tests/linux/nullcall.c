/*
 * The cost of a null system call (getppid) and of a write to /dev/null,
 * in system counter ticks per call; under QEMU's -icount (one tick per 16
 * instructions) multiplied into instructions. Run it on both sides:
 *
 *     ./petrel run --icount --exec nullcall
 *     ./petrel run --icount --linux --exec nullcall
 *
 * In the oracle list the figures are masked (" ~").
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

#define N 20000

static uint64_t ticks(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

int main(void)
{
    int null = open("/dev/null", O_WRONLY);
    char c = 0;
    syscall(SYS_getppid);
    uint64_t t0 = ticks();
    for (int i = 0; i < N; i++)
        syscall(SYS_getppid);
    uint64_t t1 = ticks();
    for (int i = 0; i < N; i++)
        write(null, &c, 1);
    uint64_t t2 = ticks();
    uint64_t loop0 = ticks();
    for (volatile int i = 0; i < N; i++)
        ;
    uint64_t loop1 = ticks();
    printf("getppid: ~%lu instructions per call (icount)\n", (unsigned long)((t1 - t0) * 16 / N));
    printf("write /dev/null: ~%lu instructions per call (icount)\n", (unsigned long)((t2 - t1) * 16 / N));
    printf("empty loop: ~%lu instructions per iteration\n", (unsigned long)((loop1 - loop0) * 16 / N));
    return 0;
}
