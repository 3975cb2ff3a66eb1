/*
 * lxscale: N processes, each making the same fixed number of system
 * calls, first all on one core and then each on a core of its own: the
 * lx_syscall_scaling rows of `./petrel bench --mode wall --smp N`
 * (tools/petrel/bench.py), one static program run unchanged on Linux and
 * on Petrel's Linux personality.
 *
 *     lxscale [--cores K] getppid|zero|pipe WORKERS [COUNT]
 *
 * Each of WORKERS forked processes does COUNT (default: the kind's entry
 * of default_count) of one operation:
 *
 *   getppid  getppid(), which must return lxscale's pid;
 *   zero     read(fd, buf, 4096) of its own descriptor of /dev/zero, which
 *            must return 4096 and clear a byte set before the call (at a
 *            place that moves with each call; the whole buffer is checked
 *            after the last);
 *   pipe     a round trip with a partner process of its own: one byte
 *            down a pipe, the partner reads it and writes back its
 *            complement, the worker reads that; each side checks each
 *            byte, and after the last the partner must read end of file.
 *
 * Where they run: lxscale takes the first K cores of its own affinity
 * mask (all of them without --cores: every core online, unless its parent
 * narrowed the mask), and worker i pins itself with sched_setaffinity to
 * the (i mod K)-th; a pipe partner pins itself to the next one,
 * ((i + 1) mod K), so that with two cores or more every round trip crosses
 * from one core to another. With as many workers as cores, every core
 * holds one worker and the partner of the worker before it: 2K processes,
 * each core's two taking turns with processes on other cores, never with
 * each other. With --cores 1 everything shares the one core, partners
 * too, and a round trip is two switches on that core.
 *
 * The harness runs each job twice in a boot, with --cores 1 and on all N
 * cores, and divides the first time by the second: the speed-up of the
 * same work on N cores. (Not one worker against N: one pipe pair on two
 * cores waits for a cross-core wake-up at every step with the cores idle
 * in between, and N pairs on N cores hide those waits behind each other,
 * so the dearer a system's cross-core round trip, the better it would
 * score; docs/benchmarks.md has the figures.)
 *
 * The job, timed with clock_gettime(CLOCK_MONOTONIC), is everything from
 * before the first fork to after the last waitpid: creating the
 * processes, pinning them, their calls, and reaping them. It prints
 *
 *     BENCH lx_syscall_time_<kind>_<WORKERS>_on_<K> - <nanoseconds> <calls in all>
 *
 * (the "-" is the system, filled in by the harness; for pipe, the calls
 * are the round trips), and before it a line of where the processes ran,
 * "lxscale: ... cpus 0 1>0" (pipe: "0/1 1/0", worker/partner): for each
 * the core it was on when its loop started, and if it ended on another,
 * "> that one" (sched_getcpu; -1 if unknown).
 *
 * Every process sends a record of what it did down one pipe to lxscale
 * before it exits (0 if all was right, 1 if not): a process that did not
 * run, stopped early, got a wrong answer or an error, or exited with
 * another status makes lxscale print "BENCH-FAIL <row> worker I of N: ..."
 * (or "partner of worker I") and exit with 1, and no time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum kind { GETPPID, ZERO, PIPE };

static const char *const kind_name[] = { "getppid", "zero", "pipe" };
static const char *const op_name[] = { "call", "read", "round trip" };
/* A job of two workers takes 1.5 to 2 s on two cores (2.7 to 3 s on one)
 * under QEMU TCG with Linux, on the machine the figures of
 * docs/benchmarks.md come from. */
static const long default_count[] = { 150000, 100000, 10000 };

#define MAX_WORKERS 32
#define WORKER 0
#define PARTNER 1

/* What a process sends back when it is done (smaller than PIPE_BUF: each
 * write is whole). */
struct record {
    int32_t worker, role;               /* its worker's index; WORKER or PARTNER */
    int32_t cpu[2];                     /* sched_getcpu before and after the loop */
    int64_t done;                       /* operations completed right */
    char what[96];                      /* "" if all was right, else what went wrong */
};

static struct record rec;
static const char *op;                  /* what the process counts: "call", "read", "round trip" */
static int answers = -1;                /* the write end of the records' pipe, in a child */
static unsigned char buf[4096] __attribute__((aligned(4096)));

/* Sends the record and exits: 0 if nothing went wrong. */
static void __attribute__((noreturn)) finish(void)
{
    _exit(write(answers, &rec, sizeof(rec)) == (ssize_t)sizeof(rec) && !rec.what[0] ? 0 : 1);
}

/* Notes what went wrong with operation `at` (0-based) and finishes. */
static void __attribute__((noreturn, format(printf, 2, 3))) wrong(long at, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(rec.what, sizeof(rec.what), "%s %ld: ", op, at + 1);
    va_start(ap, fmt);
    vsnprintf(rec.what + n, sizeof(rec.what) - (size_t)n, fmt, ap);
    va_end(ap);
    finish();
}

/* Pins the calling process to `cpu`; false (with the record saying why)
 * if the system refused. */
static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) == 0)
        return 1;
    snprintf(rec.what, sizeof(rec.what), "sched_setaffinity to core %d: %s", cpu, strerror(errno));
    return 0;
}

/* `count` getppid calls, each of which must name lxscale. */
static void loop_getppid(long count, pid_t parent)
{
    for (long k = 0; k < count; k++) {
        pid_t got = getppid();
        if (got != parent)
            wrong(k, "getppid returned %ld, expected %ld", (long)got, (long)parent);
        rec.done = k + 1;
    }
}

/* `count` reads of 4 KiB from a descriptor of /dev/zero of its own, each
 * of which must clear the byte set before it; then the whole buffer must
 * be zeros. */
static void loop_zero(long count)
{
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        wrong(0, "open /dev/zero: %s", strerror(errno));
    for (long k = 0; k < count; k++) {
        size_t at = ((size_t)k * 61) % sizeof(buf);    /* 61 is prime to 4096: every byte in turn */
        buf[at] = 0xa5;
        ssize_t got = read(fd, buf, sizeof(buf));
        if (got != (ssize_t)sizeof(buf))
            wrong(k, "read returned %ld (%s)", (long)got, got < 0 ? strerror(errno) : "short");
        if (buf[at] != 0)
            wrong(k, "read left byte %zu as %d", at, buf[at]);
        rec.done = k + 1;
    }
    for (size_t i = 0; i < sizeof(buf); i++)
        if (buf[i] != 0)
            wrong(count - 1, "byte %zu of the last read is %d", i, buf[i]);
    close(fd);
}

/* The worker's side of the round trips: `down` to the partner, `up` back. */
static void loop_pipe_worker(long count, int down, int up)
{
    for (long k = 0; k < count; k++) {
        unsigned char c = (unsigned char)k, r = 0;
        ssize_t w = write(down, &c, 1), n = w == 1 ? read(up, &r, 1) : 0;
        if (w != 1 || n != 1)
            wrong(k, "write returned %ld, read %ld (%s)", (long)w, (long)n,
                  w < 0 || n < 0 ? strerror(errno) : "end of file");
        if (r != (unsigned char)~c)
            wrong(k, "read back %d, expected %d", r, (unsigned char)~c);
        rec.done = k + 1;
    }
    close(down);
}

/* The partner's side: reads a byte, checks it, sends its complement back;
 * after the last, the worker's close must give end of file. */
static void loop_pipe_partner(long count, int down, int up)
{
    for (long k = 0; k < count; k++) {
        unsigned char c = 0;
        ssize_t n = read(down, &c, 1);
        if (n != 1)
            wrong(k, "read returned %ld (%s)", (long)n, n < 0 ? strerror(errno) : "end of file");
        if (c != (unsigned char)k)
            wrong(k, "read %d, expected %d", c, (unsigned char)k);
        c = (unsigned char)~c;
        if (write(up, &c, 1) != 1)
            wrong(k, "write failed (%s)", strerror(errno));
        rec.done = k + 1;
    }
    unsigned char extra;
    ssize_t n = read(down, &extra, 1);
    if (n != 0)
        wrong(count, "read returned %ld, expected end of file", (long)n);
}

/* One process of the job: pins itself, runs its loop, sends its record. */
static void run_child(enum kind kind, int worker, int role, int cpu, long count, pid_t parent,
                      int down, int up)
{
    rec = (struct record){ .worker = worker, .role = role, .cpu = { -1, -1 } };
    op = op_name[kind];
    if (!pin(cpu))
        finish();
    rec.cpu[0] = sched_getcpu();
    if (kind == GETPPID)
        loop_getppid(count, parent);
    else if (kind == ZERO)
        loop_zero(count);
    else if (role == WORKER)
        loop_pipe_worker(count, down, up);
    else
        loop_pipe_partner(count, down, up);
    rec.cpu[1] = sched_getcpu();
    finish();
}

/* CLOCK_MONOTONIC in nanoseconds. */
static double now(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) {
        perror("lxscale: clock_gettime");
        exit(1);
    }
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static const char *row;                 /* "lx_syscall_time_pipe_2_on_2" */
static int workers;

/* Says what went wrong with a process of the job (or the job) and exits
 * with 1, giving no time. */
static void fail(int worker, int role, const char *what)
{
    printf("BENCH-FAIL %s %s %d of %d: %s\n", row, role == PARTNER ? "partner of worker" : "worker", worker + 1,
           workers, what);
    exit(1);
}

/* The first `want` cores of lxscale's affinity mask (0: all of them) into
 * list; their count. */
static int cores(int *list, int want)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        fail(0, WORKER, "sched_getaffinity failed");
    for (int c = 0; c < CPU_SETSIZE && n < MAX_WORKERS && (!want || n < want); c++)
        if (CPU_ISSET(c, &set))
            list[n++] = c;
    if (n == 0 || n < want)
        fail(0, WORKER, "fewer cores in the affinity mask than --cores asks");
    return n;
}

static struct record records[MAX_WORKERS][2];     /* by worker and role, as received */
static int received[MAX_WORKERS][2];
static pid_t pid[MAX_WORKERS][2];

/* Forks one process of the job; the parent's side returns its pid. */
static pid_t spawn(enum kind kind, int i, int role, int cpu, long count, int fds[2], int down[2], int up[2])
{
    pid_t parent = getpid();
    pid_t p = fork();
    if (p < 0)
        fail(i, role, strerror(errno));
    if (p == 0) {
        close(fds[0]);
        answers = fds[1];
        if (kind == PIPE) {
            close(role == WORKER ? down[0] : down[1]);
            close(role == WORKER ? up[1] : up[0]);
        }
        run_child(kind, i, role, cpu, count, parent, role == WORKER ? down[1] : down[0],
                  role == WORKER ? up[0] : up[1]);
    }
    return p;
}

/* The whole job; its nanoseconds. */
static double run(enum kind kind, long count, const int *cpu, int ncpu)
{
    int roles = kind == PIPE ? 2 : 1, fds[2], down[2] = { -1, -1 }, up[2] = { -1, -1 };
    if (pipe(fds) != 0)
        fail(0, WORKER, strerror(errno));
    double t0 = now();
    for (int i = 0; i < workers; i++) {
        if (kind == PIPE && (pipe(down) != 0 || pipe(up) != 0))
            fail(i, WORKER, strerror(errno));
        for (int role = 0; role < roles; role++)
            pid[i][role] = spawn(kind, i, role, cpu[(i + role) % ncpu], count, fds, down, up);
        if (kind == PIPE) {
            close(down[0]), close(down[1]), close(up[0]), close(up[1]);
        }
    }
    close(fds[1]);
    /* The records, until all are in or no process is left to write one. */
    for (int n = 0; n < workers * roles; n++) {
        struct record r;
        ssize_t len = read(fds[0], &r, sizeof(r));
        if (len == 0)
            break;
        if (len != (ssize_t)sizeof(r) || r.worker < 0 || r.worker >= workers || r.role < 0 || r.role >= roles)
            fail(0, WORKER, len < 0 ? strerror(errno) : "a record that makes no sense");
        records[r.worker][r.role] = r;
        records[r.worker][r.role].what[sizeof(r.what) - 1] = 0;
        received[r.worker][r.role] = 1;
    }
    for (int i = 0; i < workers; i++)
        for (int role = 0; role < roles; role++) {
            int status;
            char what[96];
            if (waitpid(pid[i][role], &status, 0) != pid[i][role])
                fail(i, role, strerror(errno));
            if (received[i][role] && records[i][role].what[0])
                fail(i, role, records[i][role].what);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !received[i][role]) {
                snprintf(what, sizeof(what), "%s %d%s", WIFSIGNALED(status) ? "killed by signal" : "exit status",
                         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                         received[i][role] ? "" : ", no record");
                fail(i, role, what);
            }
            if (records[i][role].done != count) {
                snprintf(what, sizeof(what), "%lld of %ld done", (long long)records[i][role].done, count);
                fail(i, role, what);
            }
        }
    double t = now() - t0;
    close(fds[0]);
    return t;
}

/* " 0" or " 0>1": where a process started and ended its loop. */
static void where(char *out, size_t size, const int *c, const char *sep)
{
    size_t len = strlen(out);
    if (c[0] == c[1])
        snprintf(out + len, size - len, "%s%d", sep, c[0]);
    else
        snprintf(out + len, size - len, "%s%d>%d", sep, c[0], c[1]);
}

int main(int argc, char **argv)
{
    static char name[64];
    long want = 0;                      /* --cores K */
    if (argc > 2 && strcmp(argv[1], "--cores") == 0) {
        want = strtol(argv[2], NULL, 10);
        argc -= 2, argv += 2;
    }
    int kind = -1;
    for (int k = 0; k < 3 && argc > 1; k++)
        if (strcmp(argv[1], kind_name[k]) == 0)
            kind = k;
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    long count = kind >= 0 ? (argc > 3 ? strtol(argv[3], NULL, 10) : default_count[kind]) : 0;
    if (kind < 0 || n < 1 || n > MAX_WORKERS || count < 1 || argc > 4 || want < 0 || want > MAX_WORKERS) {
        fprintf(stderr, "usage: lxscale [--cores K] getppid|zero|pipe WORKERS [COUNT]  (WORKERS from 1 to %d)\n",
                MAX_WORKERS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    workers = (int)n;
    int cpu[MAX_WORKERS];
    snprintf(name, sizeof(name), "lx_syscall_time_%s_%d", kind_name[kind], workers);
    row = name;                         /* the row's name before the cores are known */
    int ncpu = cores(cpu, (int)want);
    snprintf(name, sizeof(name), "lx_syscall_time_%s_%d_on_%d", kind_name[kind], workers, ncpu);
    double ns = run((enum kind)kind, count, cpu, ncpu);
    char cpus[MAX_WORKERS * 24 + 1] = "";
    for (int i = 0; i < workers; i++) {
        where(cpus, sizeof(cpus), records[i][WORKER].cpu, " ");
        if (kind == PIPE)
            where(cpus, sizeof(cpus), records[i][PARTNER].cpu, "/");
    }
    printf("lxscale: %s %d worker%s on %d core%s, %ld %ss each, every one right; cpus%s\n", kind_name[kind],
           workers, workers > 1 ? "s" : "", ncpu, ncpu > 1 ? "s" : "", count, op_name[kind], cpus);
    printf("BENCH %s - %.0f %lld\n", row, ns, (long long)count * workers);
    return 0;
}
