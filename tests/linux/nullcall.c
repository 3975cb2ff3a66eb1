/*
 * The cost of a null system call (getppid), of a write to /dev/null, of
 * installing a signal handler, of catching a signal (kill to itself, the
 * handler, its return), of a pipe round trip between two processes, of
 * fork + exit + wait and of fork + execve + exit + wait, in system
 * counter ticks per call; under
 * QEMU's -icount (one tick per 16 instructions) multiplied into
 * instructions. Run it on both sides:
 *
 *     ./petrel run --icount --exec nullcall
 *     ./petrel run --icount --linux --exec nullcall
 *
 * In the oracle list the figures are masked (" ~").
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

#define N 20000

static uint64_t ticks(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

#define ROUNDS 2000
#define FORKS 100

static volatile int caught;

static void on_usr1(int sig)
{
    caught++;
}

/* rt_sigaction, and kill to itself with the handler run and returned from; ticks each. */
static void signal_costs(uint64_t *install, uint64_t *catch)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pid_t me = getpid();
    uint64_t t0 = ticks();
    for (int i = 0; i < ROUNDS; i++)
        syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 8);
    uint64_t t1 = ticks();
    for (int i = 0; i < ROUNDS; i++)
        syscall(SYS_kill, me, SIGUSR1);
    uint64_t t2 = ticks();
    *install = (t1 - t0) / ROUNDS;
    *catch = (t2 - t1) / ROUNDS;
}

/* One byte to the child and back, ROUNDS times; ticks per round trip. */
static uint64_t pipe_rtt(void)
{
    int to[2], from[2];
    char c = 0;
    pipe(to);
    pipe(from);
    pid_t pid = fork();
    if (pid == 0) {
        close(to[1]);
        while (read(to[0], &c, 1) == 1)
            write(from[1], &c, 1);
        _exit(0);
    }
    write(to[1], &c, 1);                        /* one round to warm up */
    read(from[0], &c, 1);
    uint64_t t0 = ticks();
    for (int i = 0; i < ROUNDS; i++) {
        write(to[1], &c, 1);
        read(from[0], &c, 1);
    }
    uint64_t t1 = ticks();
    close(to[1]);
    waitpid(pid, NULL, 0);
    close(to[0]);
    close(from[0]);
    close(from[1]);
    return (t1 - t0) / ROUNDS;
}

/* fork and exit (or exec hello with its output thrown away), then wait; ticks per child. */
static uint64_t fork_cost(int exec)
{
    uint64_t t0 = ticks();
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            if (exec) {
                char *argv[] = { "/bin/hello", NULL };
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 1);
                execv(argv[0], argv);
            }
            _exit(0);
        }
        waitpid(pid, NULL, 0);
    }
    return (ticks() - t0) / FORKS;
}

int main(int argc, char **argv)
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
    if (argc > 1 && !strcmp(argv[1], "calls"))
        return 0;
    uint64_t install, catch;
    signal_costs(&install, &catch);
    printf("rt_sigaction: ~%lu instructions (icount)\n", (unsigned long)(install * 16));
    printf("signal caught (kill to itself, handler, rt_sigreturn): ~%lu instructions (icount)\n",
           (unsigned long)(catch * 16));
    printf("pipe round trip: ~%lu instructions (icount)\n", (unsigned long)(pipe_rtt() * 16));
    printf("fork + exit + wait: ~%lu instructions (icount)\n", (unsigned long)(fork_cost(0) * 16));
    printf("fork + execve + exit + wait: ~%lu instructions (icount)\n", (unsigned long)(fork_cost(1) * 16));
    return 0;
}
