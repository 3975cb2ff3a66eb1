/* sigaltstack and SA_ONSTACK: the errors, the handler on the alternate
 * stack (SS_ONSTACK inside it, EPERM changing it there), a stack overflow
 * caught on it, SS_AUTODISARM; and handlers entered while the process
 * runs user code (signals from a child into a busy loop that keeps values
 * in FP/SIMD and general registers). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lxtest.h"

static char *alt;
static size_t alt_size = 65536;
static volatile int on_alt, flags_inside, eperm_inside, hits;
static sigjmp_buf env;

static int on_stack(void *p)
{
    return (char *)p >= alt && (char *)p < alt + alt_size;
}

static void handler(int sig)
{
    int local;
    hits++;
    on_alt = on_stack(&local);
    stack_t now;
    sigaltstack(NULL, &now);
    flags_inside = now.ss_flags;
    stack_t other = { .ss_sp = alt, .ss_size = alt_size, .ss_flags = 0 };
    eperm_inside = sigaltstack(&other, NULL) == -1 && errno == EPERM;
}

static void overflow_caught(int sig)
{
    int local;
    on_alt = on_stack(&local);
    siglongjmp(env, 1);
}

static volatile int deeper = 1;

static int recurse(int n)
{
    volatile char pad[1024];
    pad[0] = (char)n;
    return deeper ? recurse(n + 1) + pad[0] : n;
}

static volatile int usr1;

static void count(int sig)
{
    usr1++;
    __asm__ volatile("movi v20.2d, #0\n movi v9.2d, #0\n mov x19, #0\n mov x20, #0\n" ::: "v9", "v20", "x19", "x20");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    stack_t ss, old;
    SHOW("query", sigaltstack(NULL, &old));
    printf("disabled %d size %zu\n", (old.ss_flags & SS_DISABLE) != 0, old.ss_size);
    alt = malloc(alt_size);
    ss = (stack_t){ .ss_sp = alt, .ss_size = 4096, .ss_flags = 0 };
    SHOW("size 4096", sigaltstack(&ss, NULL));
    ss.ss_size = alt_size;
    ss.ss_flags = 7;
    SHOW("flags 7", sigaltstack(&ss, NULL));
    SHOW("from 8", syscall(SYS_sigaltstack, (void *)8, NULL));
    SHOW("old into 8", syscall(SYS_sigaltstack, NULL, (void *)8));
    ss.ss_flags = 0;
    SHOW("set", sigaltstack(&ss, NULL));
    SHOW("query", sigaltstack(NULL, &old));
    printf("flags %d size %zu sp is ours %d\n", old.ss_flags, old.ss_size, old.ss_sp == alt);

    struct sigaction sa = { 0 };
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    printf("SA_ONSTACK: on the alternate stack %d, SS_ONSTACK inside %d, EPERM inside %d\n", on_alt,
           flags_inside == SS_ONSTACK, eperm_inside);
    sa.sa_flags = 0;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    printf("without it: on the alternate stack %d, flags inside %d\n", on_alt, flags_inside);

    /* A stack overflow, caught on the alternate stack. */
    sa.sa_handler = overflow_caught;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    on_alt = 0;
    if (sigsetjmp(env, 1) == 0)
        recurse(0);
    printf("overflow caught on the alternate stack: %d\n", on_alt);

    /* SS_AUTODISARM: off while the handler runs, back after it. */
    ss.ss_flags = SS_AUTODISARM;
    SHOW("set with SS_AUTODISARM", sigaltstack(&ss, NULL));
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    printf("autodisarm: on the alternate stack %d, flags inside 0x%x, EPERM inside %d\n", on_alt,
           (unsigned)flags_inside, eperm_inside);
    sigaltstack(NULL, &old);
    printf("after: flags 0x%x\n", (unsigned)old.ss_flags);
    ss.ss_flags = SS_DISABLE;
    SHOW("disable", sigaltstack(&ss, NULL));
    sigaltstack(NULL, &old);
    printf("disabled %d size %zu\n", (old.ss_flags & SS_DISABLE) != 0, old.ss_size);

    /* Signals into a busy loop: the registers it keeps survive. */
    sa.sa_handler = count;
    sa.sa_flags = 0;
    sigaction(SIGUSR1, &sa, NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 5; i++) {
            struct timespec ts = { 0, 10 * 1000000L };
            nanosleep(&ts, NULL);
            kill(parent, SIGUSR1);
        }
        _exit(0);
    }
    uint64_t bad = 0, rounds = 0;
    while (usr1 < 5 && rounds < 4000000000ull) {
        uint64_t a, b, c, d;
        __asm__ volatile("movz x9, #0x77\n dup v20.2d, x9\n dup v9.2d, x9\n mov x19, x9\n mov x20, x9\n"
                         "mov x10, #2000\n"
                         "1: subs x10, x10, #1\n b.ne 1b\n"
                         "umov %0, v20.d[1]\n umov %1, v9.d[0]\n mov %2, x19\n mov %3, x20"
                         : "=r"(a), "=r"(b), "=r"(c), "=r"(d) :: "x9", "x10", "x19", "x20", "v9", "v20", "cc");
        bad += (a != 0x77) + (b != 0x77) + (c != 0x77) + (d != 0x77);
        rounds++;
    }
    waitpid(pid, NULL, 0);
    printf("busy loop: %d signals, registers changed %llu times\n", usr1, (unsigned long long)bad);
    return 0;
}
