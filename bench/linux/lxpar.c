/*
 * lxpar: a fixed amount of CPU-bound integer work, split into N equal parts
 * run by N threads or N processes at once: the lx_parallel_speedup rows of
 * `./petrel bench --mode wall --smp N` (tools/petrel/bench.py), one static
 * program run unchanged on Linux and on Petrel's Linux personality.
 *
 *     lxpar threads|procs WORKERS [STEPS]
 *
 * The work is STEPS steps (default DEFAULT_STEPS) of a 64-bit linear
 * congruential generator, x' = x * MUL + INC, from x = SEED. Worker i of
 * WORKERS takes steps [i * STEPS / WORKERS, (i + 1) * STEPS / WORKERS): it
 * starts from the generator's value at its first step (found by jumping
 * ahead in log2 steps, not by stepping) and steps through its part with no
 * system call and no memory access in the loop; its last value is stored
 * once, in a slot of its own 128 bytes apart from the others (threads), or
 * written to a pipe (processes). A step depends on the one before, so the
 * compiler cannot skip or fold the loop.
 *
 * The job, timed with clock_gettime(CLOCK_MONOTONIC), is everything from
 * before the first pthread_create (fork) to after the last pthread_join
 * (waitpid): creating the workers, their work, and waiting for them. It
 * prints
 *
 *     BENCH lx_parallel_time_<threads|procs>_<WORKERS> - <nanoseconds> <STEPS>
 *
 * (the "-" is the system, filled in by the harness), and before it a line
 * of where the workers ran, "lxpar: ... cpus 0 1>0": for each worker the
 * core it started its part on, and if it finished on another, "> that
 * one" (sched_getcpu just before and after the loop; -1 if unknown).
 *
 * Each worker's last value is checked against the generator's value at the
 * end of its part, found by jumping ahead from SEED again (the parts follow
 * one another and the last ends at STEPS, so all the work is checked;
 * a jump that disagreed with stepping would fail too): a worker that did not run,
 * stopped early or computed something else makes lxpar print
 * "BENCH-FAIL <row> worker I of N: ..." and exit with 1, and no time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MUL 6364136223846793005ull      /* Knuth's MMIX multiplier (full period mod 2^64 with an odd increment) */
#define INC 1442695040888963407ull
#define SEED 0x2545f4914f6cdd1dull
/* About 1.5 s of one worker under QEMU TCG (docs/benchmarks.md); a multiple
 * of 840, so that 1 to 8 workers get exactly equal parts. */
#define DEFAULT_STEPS 1260000000ull
#define MAX_WORKERS 64

/* The generator's value `n` steps after x: x * MUL^n + INC * (MUL^(n-1) +
 * ... + 1), composing the step with itself by squaring. */
static uint64_t jump(uint64_t x, uint64_t n)
{
    uint64_t mul = MUL, inc = INC;      /* the step 2^k times: x -> x * mul + inc */
    uint64_t acc_mul = 1, acc_inc = 0;  /* the steps taken so far */
    for (; n; n >>= 1) {
        if (n & 1) {
            acc_mul *= mul;
            acc_inc = acc_inc * mul + inc;
        }
        inc = inc * (mul + 1);          /* twice: x * mul^2 + inc * mul + inc */
        mul *= mul;
    }
    return x * acc_mul + acc_inc;
}

/* The work itself: n steps from x. */
static __attribute__((noinline)) uint64_t steps(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        x = x * MUL + INC;
    return x;
}

/* One worker's part and what it found, alone in its 128 bytes (two cache
 * lines of most cores: nothing a worker writes shares a line with another's). */
struct part {
    uint64_t first, count;              /* its steps: [first, first + count) */
    uint64_t start;                     /* the generator's value at `first` */
    uint64_t end;                       /* its value after the part (the worker's answer) */
    int cpu[2];                         /* the cores it started and finished on */
} __attribute__((aligned(128)));

static struct part parts[MAX_WORKERS];

static void split(uint64_t total, int workers)
{
    for (int i = 0; i < workers; i++) {
        uint64_t a = total * (uint64_t)i / (uint64_t)workers, b = total * (uint64_t)(i + 1) / (uint64_t)workers;
        parts[i] = (struct part){ .first = a, .count = b - a, .start = jump(SEED, a), .end = 0, .cpu = { -1, -1 } };
    }
}

static void *thread_main(void *arg)
{
    struct part *p = arg;
    int first = sched_getcpu();
    uint64_t end = steps(p->start, p->count);
    p->cpu[0] = first;
    p->cpu[1] = sched_getcpu();
    p->end = end;
    return NULL;
}

static double now(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) {
        perror("lxpar: clock_gettime");
        exit(1);
    }
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static const char *row;                 /* "lx_parallel_time_threads_2" */

static void fail(int worker, int workers, const char *what)
{
    printf("BENCH-FAIL %s worker %d of %d: %s\n", row, worker + 1, workers, what);
    exit(1);
}

/* N threads, one part each; the job's nanoseconds. */
static double run_threads(int workers)
{
    pthread_t tid[MAX_WORKERS];
    double t0 = now();
    for (int i = 0; i < workers; i++) {
        int err = pthread_create(&tid[i], NULL, thread_main, &parts[i]);
        if (err)
            fail(i, workers, strerror(err));
    }
    for (int i = 0; i < workers; i++) {
        int err = pthread_join(tid[i], NULL);
        if (err)
            fail(i, workers, strerror(err));
    }
    return now() - t0;
}

/* What a child process sends back through the pipe. */
struct answer {
    uint64_t worker, end;
    int32_t cpu[2];
};

/* N processes, one part each, their answers through one pipe (a record is
 * smaller than PIPE_BUF: each write is whole); the job's nanoseconds. */
static double run_procs(int workers)
{
    int fds[2];
    pid_t pid[MAX_WORKERS];
    if (pipe(fds) != 0)
        fail(0, workers, strerror(errno));
    double t0 = now();
    for (int i = 0; i < workers; i++) {
        pid[i] = fork();
        if (pid[i] < 0)
            fail(i, workers, strerror(errno));
        if (pid[i] == 0) {
            close(fds[0]);
            struct answer a = { (uint64_t)i, 0, { sched_getcpu(), -1 } };
            a.end = steps(parts[i].start, parts[i].count);
            a.cpu[1] = sched_getcpu();
            _exit(write(fds[1], &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 2);
        }
    }
    close(fds[1]);
    for (int got = 0; got < workers; got++) {
        struct answer a;
        ssize_t n = read(fds[0], &a, sizeof(a));
        if (n != (ssize_t)sizeof(a) || a.worker >= (uint64_t)workers)
            fail(got, workers, n < 0 ? strerror(errno) : "a worker's answer is missing");
        parts[a.worker].end = a.end;
        parts[a.worker].cpu[0] = a.cpu[0];
        parts[a.worker].cpu[1] = a.cpu[1];
    }
    for (int i = 0; i < workers; i++) {
        int status;
        if (waitpid(pid[i], &status, 0) != pid[i])
            fail(i, workers, strerror(errno));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail(i, workers, "the worker process failed");
    }
    double t = now() - t0;
    close(fds[0]);
    return t;
}

int main(int argc, char **argv)
{
    static char name[64];
    int threads = argc > 1 && strcmp(argv[1], "threads") == 0;
    int procs = argc > 1 && strcmp(argv[1], "procs") == 0;
    long workers = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    uint64_t total = argc > 3 ? strtoull(argv[3], NULL, 10) : DEFAULT_STEPS;
    if ((!threads && !procs) || workers < 1 || workers > MAX_WORKERS || total < (uint64_t)workers || argc > 4) {
        fprintf(stderr, "usage: lxpar threads|procs WORKERS [STEPS]  (WORKERS from 1 to %d, at most STEPS)\n",
                MAX_WORKERS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(name, sizeof(name), "lx_parallel_time_%s_%ld", argv[1], workers);
    row = name;
    split(total, (int)workers);
    double ns = threads ? run_threads((int)workers) : run_procs((int)workers);
    char cpus[MAX_WORKERS * 12 + 1] = "";
    for (int i = 0; i < workers; i++) {
        uint64_t want = jump(SEED, parts[i].first + parts[i].count);       /* where part i ends, part i + 1 starts */
        if (parts[i].end != want) {
            char what[96];
            snprintf(what, sizeof(what), "ended at %016llx, expected %016llx", (unsigned long long)parts[i].end,
                     (unsigned long long)want);
            fail(i, (int)workers, what);
        }
        int *c = parts[i].cpu;
        if (c[0] == c[1])
            snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), " %d", c[0]);
        else
            snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), " %d>%d", c[0], c[1]);
    }
    printf("lxpar: %s %ld worker%s, %llu steps, every answer right; cpus%s\n", argv[1], workers,
           workers > 1 ? "s" : "", (unsigned long long)total, cpus);
    printf("BENCH %s - %.0f %llu\n", row, ns, (unsigned long long)total);
    return 0;
}
