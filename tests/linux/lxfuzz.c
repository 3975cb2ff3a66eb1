/*
 * lxfuzz: a stateful fuzzer of descriptor graphs, an ordinary static Linux
 * program (it runs on Linux too). procs= worker processes, each with
 * threads= fuzzing threads on any core, do ops= operations in all, chosen
 * at random from seed=: pipes, socketpairs (stream, datagram, seqpacket),
 * eventfds and epolls made, dup'ed, closed (also under threads blocked in
 * them), passed with SCM_RIGHTS (sockets in sockets, cycles), nested into
 * each other, reopened through /proc/self/fd; signals, forks, exec of this
 * program (mode=exit), exits and waits. Each process keeps a table of the
 * descriptors it holds, so that most calls reach real objects, and a
 * registry in shared memory of every object made, so that every result can
 * be checked: no count above what was asked, every byte read tagged by a
 * writer of that object, every descriptor received naming what was sent,
 * no end of file while this process holds a writer. Then every process is
 * killed and reaped, and on Petrel the personality's usage (/proc/petrel)
 * must be what it was before. docs/design/fuzzing.md describes it.
 *
 *     lxfuzz [seed=N] [procs=N] [threads=N] [ops=N] [trace=1] [stats=1]
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#define MAXFD       64          /* descriptor numbers: RLIMIT_NOFILE here, Petrel's LX_FDS */
#define SOFT_FDS    22          /* a process keeps about this many in its table */
#define HIST        8           /* what a descriptor number named, by generation */
#define MAXPROCS    8
#define MAXTHREADS  6
#define NCHILD      2           /* victims a worker has at once */
#define NOBJ        (1u << 18)  /* the registry: a ring of objects by id */
#define INOHASH     (1u << 17)
#define MAXSEND     4           /* descriptors in one SCM_RIGHTS message */
#define MAGIC       0x6c78667aU
#define EPDATA      0xe900000000000000ull
#define PIPE_ATOMIC 4096
#define STALL_MS    8           /* a fuzzing thread blocked this long is interrupted */
#define EXEC_OK     9           /* exit status of mode=exit when all was as expected */
#define EXEC_BAD    99
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

enum kind { K_NONE, K_PIPE, K_STREAM, K_DGRAM, K_SEQ, K_EVENT, K_EPOLL, K_NULL, K_KINDS };
static const char *const kind_names[K_KINDS] = { "none", "pipe", "stream", "dgram", "seqpacket", "eventfd", "epoll",
                                                 "null" };

/* ---------------------------------------------------------------- shared state */

/* One object made by some process: what fstat said of each end (a pipe's
 * one inode, a socketpair's two sockets) and the data that went through:
 * wmax[d] bytes (an eventfd: its count) at most were written toward end d
 * (counted before the write, given back after), rd[d] were read there. */
struct obj {
    uint32_t id;
    uint8_t kind, shut, sema, pad;
    uint64_t ino[2];
    uint32_t mode[2];
    uint64_t wmax[2], rd[2];
    uint32_t seq;
};

struct inoslot {
    uint64_t key;
    uint32_t id;
};

/* The operations, with their weights in a worker and in a victim child. */
#define OPS(X) \
    X(pipe, 30, 2) X(socketpair, 36, 1) X(eventfd, 15, 1) X(epoll_create, 15, 1) X(close, 70, 3) X(dup, 22, 1) \
    X(dup2, 22, 2) X(dupfd, 15, 1) X(close_range, 8, 1) X(fcntl, 25, 1) X(write, 130, 4) X(read, 130, 4) \
    X(send_fds, 55, 3) X(shutdown, 8, 1) X(epoll_ctl, 45, 1) X(epoll_wait, 30, 1) X(epoll_loop, 1, 0) \
    X(poll, 15, 1) X(check, 40, 2) X(proc_reopen, 15, 1) X(block_shared, 2, 2) X(blk_pipe_read, 1, 1) \
    X(blk_pipe_write, 1, 1) X(blk_recv, 1, 1) X(blk_dgram_send, 1, 1) X(blk_epoll, 1, 1) X(blk_eventfd, 1, 1) \
    X(scm_graph, 3, 1) X(signal, 22, 1) X(sigaction, 6, 0) X(fork, 2, 0) X(wait, 8, 0) X(yield, 3, 1) \
    X(thread_exit, 0, 0) X(exec, 0, 0) X(exit, 0, 0)
#define OP_ENUM(name, w, cw) OP_##name,
enum { OPS(OP_ENUM) NOPS };
#define OP_NAME(name, w, cw) #name,
static const char *const op_names[NOPS] = { OPS(OP_NAME) };
#define OP_W(name, w, cw) w,
static unsigned op_weight[NOPS] = { OPS(OP_W) };
#define OP_CW(name, w, cw) cw,
static unsigned child_weight[NOPS] = { OPS(OP_CW) };

#define NERR 134

struct shared {
    uint64_t seed;
    uint32_t next_id;
    uint64_t failures;
    uint64_t ops[MAXPROCS];                     /* fuzzing threads' operations, by worker */
    int done[MAXPROCS];
    int cur[MAXPROCS][MAXTHREADS];              /* each fuzzing thread's operation now ... */
    int spin[MAXPROCS][MAXTHREADS];             /* ... whether it waits for the table (1) or to make descriptors (2) */
    int64_t since[MAXPROCS][MAXTHREADS];        /* ... and since when it blocks (ms; 0: not) */
    uint64_t child_ops, forks, execs, exec_fail, exits, handled, interrupts, replaced, received, sent_fds;
    uint64_t blocked_results[4];                /* blocker: data, EOF, EINTR, EBADF */
    uint64_t calls[NOPS], oks[NOPS], errs[NOPS][NERR], us[NOPS];
    struct inoslot inos[INOHASH];
    struct obj objs[NOBJ];
};

static struct shared *sh;
static int nprocs = 3, nthreads = 3, trace, show_stats;
static uint64_t total_ops = 30000;
static int worker;                  /* this process's worker number */
static int is_child;                /* a victim forked by a worker */
static char self_path[256] = "/bin/lxfuzz";     /* what victims exec */
static volatile pid_t my_pid, parent_pid;

/* ---------------------------------------------------------------- small helpers */

/* Sleep us microseconds (a signal may end it early). */
static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* Let others run for a moment: n yields (a sleep would last a whole timer
 * tick on Petrel, 10 ms). */
static void yields(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sched_yield();
}

/* Write a formatted line to stdout in one write (no stdio: threads, forks). */
static void say(const char *fmt, ...)
{
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    for (int off = 0; off < n; ) {
        long w = write(1, line + off, (size_t)(n - off));
        if (w <= 0)
            break;
        off += (int)w;
    }
}

#define ADD(field, v) __atomic_add_fetch(&(field), (v), __ATOMIC_RELAXED)
#define TR(...) do { if (trace > 1) say("lxfuzz:   " __VA_ARGS__); } while (0)   /* trace=2: the calls */

/* A spin lock for the table (never held across a blocking call, but across fork). */
static void spin_lock(volatile int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (*l)
            sched_yield();
}

static void spinning(int how);

static void spin_unlock(volatile int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* ---------------------------------------------------------------- fuzzing threads */

struct ctx {
    int slot;                       /* fuzzing thread number in its process */
    pthread_t th;
    volatile long tid;
    volatile int alive, exiting;
    uint64_t rng, done, quota;
    int op;
    char buf[8192], buf2[8192];
};

static struct ctx ctxs[MAXTHREADS];
static __thread struct ctx *self;

/* The thread's next random number (xorshift64*). */
static uint64_t rnd(struct ctx *c)
{
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * 2685821657736338717ull;
}

static unsigned below(struct ctx *c, unsigned n) { return n ? (unsigned)((rnd(c) >> 16) % n) : 0; }
static int chance(struct ctx *c, unsigned n) { return below(c, n) == 0; }

/* Count an implausible result and print it (the first 60). */
static void fail(const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    uint64_t n = ADD(sh->failures, 1);
    if (n <= 60)
        say("lxfuzz: FAIL pid %d tid %ld %s op %s: %s", my_pid, gettid_(), is_child ? "child" : "worker",
            self ? op_names[self->op] : "-", what);
}

/* Mark the calling fuzzing thread as (not) in a call that may block: the
 * worker's main thread interrupts it with SIGUSR2 after STALL_MS. */
static void blocking(int on)
{
    if (!self || is_child)
        return;
    __atomic_store_n(&sh->since[worker][self->slot], on ? now_ms() : 0, __ATOMIC_RELAXED);
}

/* Show (for a hang report) what the calling fuzzing thread waits for. */
static void spinning(int how)
{
    if (self && !is_child && sh)
        sh->spin[worker][self->slot] = how;
}

/* Record one call's outcome for the report. */
static void tally(long r, int err)
{
    if (!self)
        return;
    if (r >= 0)
        ADD(sh->oks[self->op], 1);
    else
        ADD(sh->errs[self->op][err > 0 && err < NERR ? err : 0], 1);
}

/* ---------------------------------------------------------------- the registry */

static struct obj *obj_of(uint32_t id)
{
    if (!id)
        return NULL;
    struct obj *o = &sh->objs[id % NOBJ];
    return __atomic_load_n(&o->id, __ATOMIC_ACQUIRE) == id ? o : NULL;
}

/* A new object: its fstat of end 0 (and 1) recorded, its inodes findable. */
static uint32_t obj_new(int kind, const struct stat *s0, const struct stat *s1)
{
    uint32_t id;
    do
        id = ADD(sh->next_id, 1);
    while (!id);
    struct obj *o = &sh->objs[id % NOBJ];
    __atomic_store_n(&o->id, 0, __ATOMIC_RELEASE);
    memset((char *)o + sizeof(o->id), 0, sizeof(*o) - sizeof(o->id));
    o->kind = (uint8_t)kind;
    o->ino[0] = s0->st_ino;
    o->mode[0] = s0->st_mode & S_IFMT;
    o->ino[1] = s1 ? s1->st_ino : s0->st_ino;
    o->mode[1] = s1 ? s1->st_mode & S_IFMT : o->mode[0];
    __atomic_store_n(&o->id, id, __ATOMIC_RELEASE);
    if (kind != K_EVENT && kind != K_EPOLL) {           /* (Linux's anonymous inodes share one number) */
        extern void ino_put(uint64_t ino, uint32_t mode, uint32_t id);
        ino_put(o->ino[0], o->mode[0], id);
        if (s1)
            ino_put(o->ino[1], o->mode[1], id);
    }
    return id;
}

static uint64_t ino_key(uint64_t ino, uint32_t mode) { return ino * 16 + (mode >> 12) + 1; }

/* Remember which object has inode ino (the newest one wins). */
void ino_put(uint64_t ino, uint32_t mode, uint32_t id)
{
    uint64_t key = ino_key(ino, mode);
    uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) % INOHASH, victim = h;
    for (int i = 0; i < 8; i++) {
        struct inoslot *s = &sh->inos[(h + i) % INOHASH];
        if (s->key == key || !s->key) {
            victim = (h + i) % INOHASH;
            break;
        }
        if (s->id < sh->inos[victim].id)
            victim = (h + i) % INOHASH;
    }
    sh->inos[victim].id = id;
    sh->inos[victim].key = key;
}

/* The object that had inode ino last (0: none known). */
static uint32_t ino_get(uint64_t ino, uint32_t mode)
{
    uint64_t key = ino_key(ino, mode);
    uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) % INOHASH;
    for (int i = 0; i < 8; i++) {
        struct inoslot *s = &sh->inos[(h + i) % INOHASH];
        if (s->key == key)
            return s->id;
    }
    return 0;
}

/* The tag of every byte that goes toward end `dir` of object id. */
static uint8_t tagb(uint32_t id, int dir)
{
    uint32_t h = (id * 2u + (uint32_t)dir) * 2654435761u;
    return (uint8_t)(1 + (h >> 24) % 255);
}

/* ---------------------------------------------------------------- the table */

enum { S_FREE, S_LIVE, S_PRIV, S_CLOSING, S_UNKNOWN, S_STDIO };

/* What this process knows of one descriptor number. A number changes
 * meaning only through our own calls, and each first bumps gen: a call
 * whose number kept its gen from before to after reached the object the
 * table says (strict checks); otherwise any object the number named in
 * between (hist). */
struct ent {
    uint8_t state, kind, end, cloexec, path, owner;
    uint16_t pins, flux;            /* pins: passed or dup'ed now (not closed); flux: flags changing */
    uint32_t obj, gen, fgen;        /* fgen: bumped when its descriptor flags change */
};

struct hist {
    uint32_t gen, obj;
    uint8_t kind, end;
};

struct pick {
    int fd;
    struct ent e;
};

static struct ent tab[MAXFD];
static struct hist hist[MAXFD][HIST];
static uint16_t users[MAXFD];                   /* calls on the number not pinned, from pick_use to unuse */
static volatile int tab_lock;
static volatile int fd_readers, fd_writer;      /* creators share; close_range and dup2 to a free number exclude */
static uint32_t null_obj;                       /* the /dev/null every worker starts with */

struct child {
    pid_t pid;
    int state;                      /* 0 free, 1 running, 2 being waited for */
    uint32_t sigs;                  /* signals sent to it */
};
static struct child children[NCHILD];

/* Take and release the table's lock. */
static void lock(void)
{
    if (!__atomic_exchange_n(&tab_lock, 1, __ATOMIC_ACQUIRE))
        return;
    spinning(1);
    spin_lock(&tab_lock);
    spinning(0);
}
static void unlock(void) { spin_unlock(&tab_lock); }

/* Enter a call that may make descriptors. */
static void creating(void)
{
    spinning(2);
    for (;;) {
        for (int i = 0; __atomic_load_n(&fd_writer, __ATOMIC_SEQ_CST); i++)
            i < 8 ? sched_yield() : sleep_us(200);
        __atomic_add_fetch(&fd_readers, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&fd_writer, __ATOMIC_SEQ_CST)) {
            spinning(0);
            return;
        }
        __atomic_sub_fetch(&fd_readers, 1, __ATOMIC_SEQ_CST);
    }
}

static void created(void) { __atomic_sub_fetch(&fd_readers, 1, __ATOMIC_SEQ_CST); }

/* Try to become the only one making descriptors now (1: got it). */
static int excluding(void)
{
    int zero = 0;
    if (!__atomic_compare_exchange_n(&fd_writer, &zero, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return 0;
    for (int i = 0; i < 40 && __atomic_load_n(&fd_readers, __ATOMIC_SEQ_CST); i++)
        sched_yield();
    if (__atomic_load_n(&fd_readers, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&fd_writer, 0, __ATOMIC_SEQ_CST);
        return 0;
    }
    return 1;
}

static void excluded(void) { __atomic_store_n(&fd_writer, 0, __ATOMIC_SEQ_CST); }

/* How many descriptors the table holds (lock held). */
static int live_count(void)
{
    int n = 0;
    for (int fd = 0; fd < MAXFD; fd++)
        n += tab[fd].state == S_LIVE || tab[fd].state == S_PRIV;
    return n;
}

/* Record that the kernel gave us descriptor fd for (kind, obj, end): it
 * must have been free. Returns 0 when it was not (a failure). A private
 * one becomes everyone's (returns -1) if a call not pinned may still reach
 * its number: it could disturb what the private one is for. */
static int install(int fd, int kind, uint32_t obj, int end, int cloexec, int path, int priv)
{
    if (fd < 0 || fd >= MAXFD) {
        fail("descriptor %d outside 0..%d", fd, MAXFD - 1);
        return 0;
    }
    lock();
    struct ent *e = &tab[fd];
    if (e->state == S_LIVE || e->state == S_PRIV || e->state == S_STDIO) {
        struct ent old = *e;
        unlock();
        fail("new descriptor %d for a %s, but it holds a %s (object %u, state %d)", fd, kind_names[kind],
             kind_names[old.kind], old.obj, old.state);
        return 0;
    }
    uint32_t gen = e->gen + 1;
    int tainted = priv && users[fd];
    if (tainted)
        priv = 0;
    *e = (struct ent){ priv ? S_PRIV : S_LIVE, (uint8_t)kind, (uint8_t)end, (uint8_t)!!cloexec, (uint8_t)!!path,
                       (uint8_t)(self ? self->slot : 0), 0, 0, obj, gen, 0 };
    hist[fd][gen % HIST] = (struct hist){ gen, obj, (uint8_t)kind, (uint8_t)end };
    unlock();
    return tainted ? -1 : 1;
}

/* Pick a live descriptor that `ok` accepts (any when NULL); -1 if none.
 * use: a call not pinned will be made on its number (unuse after it). */
static int pick_(struct ctx *c, int (*ok)(const struct ent *), struct pick *out, int use)
{
    int cand[MAXFD], n = 0;
    lock();
    for (int fd = 0; fd < MAXFD; fd++)
        if (tab[fd].state == S_LIVE && (!ok || ok(&tab[fd])))
            cand[n++] = fd;
    if (!n) {
        unlock();
        return -1;
    }
    out->fd = cand[below(c, (unsigned)n)];
    out->e = tab[out->fd];
    users[out->fd] += (uint16_t)use;
    unlock();
    return out->fd;
}

static int pick(struct ctx *c, int (*ok)(const struct ent *), struct pick *out) { return pick_(c, ok, out, 0); }
static int pick_use(struct ctx *c, int (*ok)(const struct ent *), struct pick *out) { return pick_(c, ok, out, 1); }

/* The call on pick_use's number is over. */
static void unuse(int fd)
{
    lock();
    users[fd]--;
    unlock();
}

/* Did fd keep its meaning (gen) since p was taken? */
static int same(const struct pick *p)
{
    lock();
    int r = tab[p->fd].gen == p->e.gen && (tab[p->fd].state == S_LIVE || tab[p->fd].state == S_PRIV);
    unlock();
    return r;
}

static __thread uint32_t closing_gen[MAXFD];     /* the gen each of this thread's closes set */

/* Start closing (or replacing) fd as picked: 0 when someone else changed it first. */
static int begin_close(const struct pick *p)
{
    lock();
    struct ent *e = &tab[p->fd];
    int ok = (e->state == S_LIVE || (e->state == S_PRIV && self && e->owner == self->slot)) &&
             e->gen == p->e.gen && !e->pins && !e->flux;
    if (ok) {
        e->state = S_CLOSING;
        e->gen++;
        closing_gen[p->fd] = e->gen;
        hist[p->fd][e->gen % HIST] = (struct hist){ e->gen, 0, K_NONE, 0 };
    }
    unlock();
    return ok;
}

/* The close started by begin_close is over: the number is free (unless
 * it was taken again meanwhile). */
static void end_close(int fd)
{
    lock();
    if (tab[fd].state == S_CLOSING && tab[fd].gen == closing_gen[fd])
        tab[fd].state = S_FREE;
    unlock();
}

/* Pin a picked descriptor for a short call that needs it unchanged. */
static int pin(const struct pick *p)
{
    lock();
    int ok = tab[p->fd].gen == p->e.gen && (tab[p->fd].state == S_LIVE || tab[p->fd].state == S_PRIV);
    if (ok)
        tab[p->fd].pins++;
    unlock();
    return ok;
}

/* The pinned call is over. */
static void unpin(int fd)
{
    lock();
    tab[fd].pins--;
    unlock();
}

/* A private descriptor (not picked by other threads) becomes everyone's. */
static void publish(int fd)
{
    lock();
    if (tab[fd].state == S_PRIV)
        tab[fd].state = S_LIVE;
    unlock();
}

/* Close a private descriptor. */
static void close_private(int fd)
{
    if (fd < 0)
        return;
    lock();
    struct pick p = { fd, tab[fd] };
    unlock();
    if (p.e.state != S_PRIV || !self || p.e.owner != self->slot || !begin_close(&p))
        return;
    long r = close(fd);
    if (r < 0)
        fail("close of private descriptor %d: %s", fd, errname(errno));
    end_close(fd);
}

/* The two private pairs (pipes or socketpairs) a blocked-call test made:
 * each closed if it was made (its object nonzero). */
static void close_pairs(uint32_t a_id, const int a[2], uint32_t b_id, const int b[2])
{
    if (a_id) {
        close_private(a[0]);
        close_private(a[1]);
    }
    if (b_id) {
        close_private(b[0]);
        close_private(b[1]);
    }
}

/* Descriptors of object obj whose end matches (pipes: a writer or a reader)
 * that this process holds now: snapshot, then whether they stayed. */
struct hold {
    int n;
    uint8_t fd[MAXFD];
    uint32_t gen[MAXFD];
};

static int is_writer(const struct ent *e) { return e->kind == K_PIPE ? e->end != 0 : 1; }
static int is_reader(const struct ent *e) { return e->kind == K_PIPE ? e->end != 1 : 1; }

/* want: 1 writers of a pipe, 0 readers; for a socket: end `peer`. */
static void hold_snap(uint32_t obj, int kind, int want, struct hold *h)
{
    h->n = 0;
    if (!obj)
        return;
    lock();
    for (int fd = 0; fd < MAXFD; fd++) {
        const struct ent *e = &tab[fd];
        if ((e->state != S_LIVE && e->state != S_PRIV) || e->obj != obj || e->path)
            continue;
        int match = kind == K_PIPE ? (want ? is_writer(e) : is_reader(e)) : e->end == want;
        if (match) {
            h->fd[h->n] = (uint8_t)fd;
            h->gen[h->n++] = e->gen;
        }
    }
    unlock();
}

/* Is one of the snapshot's descriptors still held, unchanged? */
static int hold_kept(const struct hold *h)
{
    int kept = 0;
    lock();
    for (int i = 0; i < h->n; i++)
        if (tab[h->fd[i]].gen == h->gen[i] && (tab[h->fd[i]].state == S_LIVE || tab[h->fd[i]].state == S_PRIV))
            kept = 1;
    unlock();
    return kept;
}

/* ---------------------------------------------------------------- signals */

static volatile uint64_t sig_sent[4], sig_handled[4];    /* SIGUSR1, SIGUSR2, SIGALRM, SIGRTMIN */
static volatile int bad_siginfo;
static volatile int bad_sig, bad_code, bad_pid;

static int sig_index(int sig) { return sig == SIGUSR1 ? 0 : sig == SIGUSR2 ? 1 : sig == SIGALRM ? 2 : 3; }

/* SIGUSR1 (SA_RESTART or not, changed by op sigaction), SIGUSR2 (never
 * SA_RESTART: it interrupts blocked calls), SIGALRM (a victim's timer):
 * each counts itself and checks who sent it. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    ADD(sig_handled[sig_index(sig)], 1);
    if (si->si_signo != sig || (sig != SIGALRM && si->si_code != SI_USER && si->si_code != SI_TKILL) ||
        (sig != SIGALRM && si->si_pid != my_pid && si->si_pid != parent_pid)) {
        bad_sig = si->si_signo;
        bad_code = si->si_code;
        bad_pid = si->si_pid;
        bad_siginfo = 1;
    }
}

/* Install on_signal for sig, with SA_RESTART or not. */
static void handle(int sig, int restart)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | (restart ? SA_RESTART : 0);
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* Did the handlers see anything odd, or more signals than were sent? */
static void check_signals(void)
{
    if (bad_siginfo) {
        bad_siginfo = 0;
        fail("a handler got signal %d with si_signo %d, si_code %d, si_pid %d (me %d, parent %d)", bad_sig, bad_sig,
             bad_code, bad_pid, my_pid, parent_pid);
    }
    for (int i = 0; i < 2; i++)
        if (!is_child && sig_handled[i] > sig_sent[i])
            fail("%s handled %llu times, sent %llu times", i ? "SIGUSR2" : "SIGUSR1",
                 (unsigned long long)sig_handled[i], (unsigned long long)sig_sent[i]);
}

/* Send sig to thread tid of this process, counted first. */
static long send_thread(long tid, int sig)
{
    ADD(sig_sent[sig_index(sig)], 1);
    return syscall(SYS_tgkill, my_pid, tid, sig);
}

/* ---------------------------------------------------------------- objects */

static int fstat_type(int fd, struct stat *st)
{
    return fstat(fd, st) < 0 ? -1 : (int)(st->st_mode & S_IFMT);
}

/* Is what fstat says of fd what the registry says of (obj, end)? Returns
 * NULL if so, else what differs. */
static const char *stat_differs(int fd, uint32_t obj, int kind, int end, struct stat *st)
{
    if (fstat(fd, st) < 0)
        return errname(errno);
    struct obj *o = obj_of(obj);
    if (!o)
        return NULL;
    int i = kind == K_PIPE ? 0 : end & 1;
    if ((st->st_mode & S_IFMT) != o->mode[i])
        return "type";
    if (st->st_ino != o->ino[i])
        return "inode";
    return NULL;
}

/* Which of ours a descriptor we got (by SCM_RIGHTS or /proc) is: kind,
 * object (0 if not known), end, O_PATH. Returns the kind (K_NONE: none of
 * ours, a failure the caller reports). */
static int identify(int fd, uint32_t *obj, int *end, int *path)
{
    struct stat st;
    *obj = 0;
    *end = 0;
    int fl = fcntl(fd, F_GETFL);
    *path = fl >= 0 && (fl & O_PATH);
    if (fstat(fd, &st) < 0)
        return K_NONE;
    uint32_t type = st.st_mode & S_IFMT;
    uint32_t id = ino_get(st.st_ino, type);
    struct obj *o = obj_of(id);
    if (type == S_IFIFO) {
        *end = (fl & O_ACCMODE) == O_RDONLY ? 0 : (fl & O_ACCMODE) == O_WRONLY ? 1 : 2;
        if (*path)
            *end = 0;
        *obj = o && o->kind == K_PIPE && o->ino[0] == st.st_ino ? id : 0;
        return K_PIPE;
    }
    if (type == S_IFSOCK) {
        int t = 0;
        socklen_t len = sizeof(t);
        int kind = K_STREAM;
        if (!*path && getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &len) == 0)
            kind = t == SOCK_DGRAM ? K_DGRAM : t == SOCK_SEQPACKET ? K_SEQ : K_STREAM;
        if (o && (o->ino[0] == st.st_ino || o->ino[1] == st.st_ino)) {
            *obj = id;
            *end = o->ino[1] == st.st_ino;
            return o->kind;
        }
        return kind;
    }
    struct obj *null = obj_of(null_obj);
    if (type == S_IFCHR)
        return null && null->ino[0] == st.st_ino ? (*obj = null_obj, K_NULL) : K_NONE;
    char path_[40], link[64] = { 0 };
    snprintf(path_, sizeof(path_), "/proc/self/fd/%d", fd);
    if (readlink(path_, link, sizeof(link) - 1) < 0)
        return K_NONE;
    return !strcmp(link, "anon_inode:[eventfd]") ? K_EVENT : !strcmp(link, "anon_inode:[eventpoll]") ? K_EPOLL : K_NONE;
}

/* Register a new pipe (fds p[0], p[1]): returns its object, 0 on a failure. */
static uint32_t new_pipe(const int p[2], int cloexec, int priv)
{
    struct stat s0, s1;
    if (fstat_type(p[0], &s0) != S_IFIFO || fstat_type(p[1], &s1) != S_IFIFO || s0.st_ino != s1.st_ino) {
        fail("a new pipe's ends %d, %d: not one FIFO (modes 0%o 0%o)", p[0], p[1], (unsigned)s0.st_mode,
             (unsigned)s1.st_mode);
        return 0;
    }
    uint32_t id = obj_new(K_PIPE, &s0, NULL);
    int a = install(p[0], K_PIPE, id, 0, cloexec, 0, priv), b = install(p[1], K_PIPE, id, 1, cloexec, 0, priv);
    if (a < 0 || b < 0) {
        publish(p[0]);
        publish(p[1]);
    }
    return a > 0 && b > 0 ? id : 0;
}

static int sock_type(int kind) { return kind == K_STREAM ? SOCK_STREAM : kind == K_DGRAM ? SOCK_DGRAM : SOCK_SEQPACKET; }

/* Register a new socketpair (sv[0], sv[1]): its object, 0 on a failure. */
static uint32_t new_socketpair(int kind, const int sv[2], int cloexec, int priv)
{
    struct stat s0, s1;
    if (fstat_type(sv[0], &s0) != S_IFSOCK || fstat_type(sv[1], &s1) != S_IFSOCK || s0.st_ino == s1.st_ino) {
        fail("a new socketpair's ends %d, %d: not two sockets", sv[0], sv[1]);
        return 0;
    }
    uint32_t id = obj_new(kind, &s0, &s1);
    int a = install(sv[0], kind, id, 0, cloexec, 0, priv), b = install(sv[1], kind, id, 1, cloexec, 0, priv);
    if (a < 0 || b < 0) {
        publish(sv[0]);
        publish(sv[1]);
    }
    return a > 0 && b > 0 ? id : 0;
}

/* Register a new eventfd, epoll or /dev/null. */
static uint32_t new_single(int kind, int fd, int cloexec, int priv)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        fail("fstat of a new %s: %s", kind_names[kind], errname(errno));
        return 0;
    }
    uint32_t id = obj_new(kind, &st, NULL);
    return install(fd, kind, id, 0, cloexec, 0, priv) > 0 ? id : 0;
}

/* Make a private pipe (p[0] read, p[1] write); 0 on EMFILE and the like. */
static uint32_t make_pipe(int p[2], int flags)
{
    creating();
    long r = pipe2(p, flags);
    int err = errno;
    uint32_t id = r == 0 ? new_pipe(p, flags & O_CLOEXEC, 1) : 0;
    created();
    if (r < 0 && err != EMFILE && err != ENFILE && err != ENOMEM)
        fail("pipe2: %s", errname(err));
    return id;
}

/* Make a private socketpair of kind; 0 on EMFILE and the like. */
static uint32_t make_socketpair(int kind, int sv[2], int flags)
{
    creating();
    long r = socketpair(AF_UNIX, sock_type(kind) | flags, 0, sv);
    int err = errno;
    uint32_t id = r == 0 ? new_socketpair(kind, sv, flags & SOCK_CLOEXEC, 1) : 0;
    created();
    if (r < 0 && err != EMFILE && err != ENFILE && err != ENOMEM)
        fail("socketpair %s: %s", kind_names[kind], errname(err));
    return id;
}

/* Make a private eventfd or epoll: its descriptor, -1 if none. */
static int make_single(int kind, int flags, uint32_t *id)
{
    creating();
    int fd = kind == K_EVENT ? eventfd(0, flags) : epoll_create1(flags);
    int err = errno;
    *id = fd >= 0 ? new_single(kind, fd, flags & O_CLOEXEC, 1) : 0;
    created();
    if (fd < 0 && err != EMFILE && err != ENFILE && err != ENOMEM)
        fail("%s: %s", kind_names[kind], errname(err));
    return *id ? fd : -1;
}

/* ---------------------------------------------------------------- data */

/* A datagram or seqpacket message: this head, then the claims (what the
 * SCM_RIGHTS descriptors sent with it are), then body bytes. */
struct head {
    uint32_t magic, id, seq;
    uint16_t len;
    uint8_t dir, nclaim;
};

struct claim {
    uint32_t id;
    uint8_t end, path, kind, pad;
};

/* Byte i of the body of message seq toward end dir of object id. */
static uint8_t body_byte(uint32_t id, int dir, uint32_t seq, size_t i)
{
    return (uint8_t)(tagb(id, dir) ^ (uint8_t)(seq * 7 + i * 13));
}

/* The data going toward end dir of object id: for a byte stream, n tag
 * bytes; for messages, a head, the claims and a body, n bytes in all (at
 * least the head and claims). Returns the length. */
static size_t build(uint8_t *buf, size_t n, int kind, uint32_t id, int dir, const struct claim *cl, int ncl)
{
    if (kind == K_PIPE || kind == K_STREAM) {
        memset(buf, tagb(id, dir), n);
        return n;
    }
    size_t min = sizeof(struct head) + (size_t)ncl * sizeof(struct claim);
    if (n < min)
        n = min;
    if (n > 65535)
        n = 65535;
    struct obj *o = obj_of(id);
    struct head h = { MAGIC, id, o ? ADD(o->seq, 1) : 0, (uint16_t)n, (uint8_t)dir, (uint8_t)ncl };
    memcpy(buf, &h, sizeof(h));
    if (ncl)
        memcpy(buf + sizeof(h), cl, (size_t)ncl * sizeof(*cl));
    for (size_t i = min; i < n; i++)
        buf[i] = body_byte(id, dir, h.seq, i);
    return n;
}

/* One possible meaning of a descriptor number during a call. */
struct cand {
    uint32_t obj;
    uint8_t kind, end;
};

static int data_dir(int kind, int end) { return kind == K_PIPE ? 0 : end & 1; }

/* Do n bytes read (room asked; trunc: MSG_TRUNC said) fit candidate c?
 * Sets *msglen to the whole message's length for messages. */
static int fits(const uint8_t *b, long n, long room, const struct cand *c, long *msglen)
{
    int dir = data_dir(c->kind, c->end);
    *msglen = n;
    if (c->kind == K_PIPE || c->kind == K_STREAM) {
        uint8_t t = tagb(c->obj, dir);
        for (long i = 0; i < n; i++)
            if (b[i] != t)
                return 0;
        return 1;
    }
    if (c->kind == K_EVENT) {
        uint64_t v = 0;
        memcpy(&v, b, n == 8 ? 8 : 0);
        return n == 8 && v;
    }
    if (c->kind != K_DGRAM && c->kind != K_SEQ)
        return 0;
    struct head h;
    if (n < (long)sizeof(h)) {
        if (n != room)
            return 0;
        uint32_t magic = MAGIC;
        return !memcmp(b, &magic, (size_t)(n < 4 ? n : 4));
    }
    memcpy(&h, b, sizeof(h));
    if (h.magic != MAGIC || h.id != c->obj || h.dir != dir || h.len < n || (h.len > n && n != room))
        return 0;
    size_t min = sizeof(h) + (size_t)h.nclaim * sizeof(struct claim);
    for (long i = (long)min; i < n; i++)
        if (b[i] != body_byte(h.id, dir, h.seq, (size_t)i))
            return 0;
    *msglen = h.len;
    return 1;
}

/* Count `asked` bytes going toward (obj, dir) before a write ... */
static void writing(uint32_t obj, int dir, uint64_t asked)
{
    struct obj *o = obj_of(obj);
    if (o)
        ADD(o->wmax[dir], asked);
}

/* ... and give back what did not go. */
static void written(uint32_t obj, int dir, uint64_t asked, long got)
{
    struct obj *o = obj_of(obj);
    if (o && (uint64_t)(got < 0 ? 0 : got) < asked)
        __atomic_sub_fetch(&o->wmax[dir], asked - (uint64_t)(got < 0 ? 0 : got), __ATOMIC_RELAXED);
}

/* Count n bytes read at (obj, dir): never more than were written. */
static void consumed(uint32_t obj, int dir, uint64_t n, const char *what)
{
    struct obj *o = obj_of(obj);
    if (!o)
        return;
    uint64_t rd = ADD(o->rd[dir], n);
    uint64_t wmax = __atomic_load_n(&o->wmax[dir], __ATOMIC_RELAXED);
    if (rd > wmax && obj_of(obj))
        fail("%s: %llu bytes read from %s %u (end %d), at most %llu written", what, (unsigned long long)rd,
             kind_names[o->kind], obj, dir, (unsigned long long)wmax);
}

/* The candidates for what pick p's number named during a call: the picked
 * object if the number kept its meaning (strict: returns 1), else all it
 * named since (returns 0; n = -1 when history ran out or a received
 * object the registry does not know is among them). */
static int candidates(const struct pick *p, struct cand *c, int *n)
{
    if (same(p)) {
        c[0] = (struct cand){ p->e.obj, p->e.kind, p->e.end };
        *n = p->e.obj ? 1 : -1;                 /* (0: what it is, the registry does not know) */
        return 1;
    }
    lock();
    uint32_t g1 = tab[p->fd].gen;
    *n = g1 - p->e.gen < HIST ? 0 : -1;
    for (uint32_t g = p->e.gen; *n >= 0 && g != g1 + 1; g++) {
        const struct hist *h = &hist[p->fd][g % HIST];
        if (h->gen == g && h->obj)
            c[(*n)++] = (struct cand){ h->obj, h->kind, h->end };
        else if (h->gen == g && h->kind != K_NONE)
            *n = -1;                            /* an object the registry does not know (received): no check */
    }
    unlock();
    return 0;
}

/* Check data read through pick p (n bytes of room asked): it came from a
 * writer of what the number named. Counts it (strict reads) unless peek.
 * (A number that changed may name an object whose maker has not recorded
 * it yet: a misfit looks again for a while before it counts.) */
static void check_read(const struct pick *p, const uint8_t *b, long n, long room, int peek, const char *what)
{
    struct cand c[HIST + 1];
    int nc, strict;
    if (n <= 0)
        return;
    for (int tries = 0;; tries++) {
        strict = candidates(p, c, &nc);
        if (nc < 0)
            return;
        long msglen = n;
        for (int i = 0; i < nc; i++)
            if (fits(b, n, room, &c[i], &msglen)) {
                if (strict && !peek)
                    consumed(c[i].obj, data_dir(c[i].kind, c[i].end), (uint64_t)msglen, what);
                return;
            }
        /* Looked 40 times (about 10 ms): give up, unless a thread is
         * still making a descriptor (creating() to created()). That
         * thread may be off its core for longer than 10 ms, with threads
         * on several cores: wait for it up to a second. */
        if (strict || (tries >= 40 && (!__atomic_load_n(&fd_readers, __ATOMIC_SEQ_CST) || tries >= 4000)))
            break;
        /* A number that changed may also have named, for a moment,
         * another thread's /proc/self/fdinfo/N file: those are opened
         * and closed again without being recorded (op_check, below).
         * With threads on several cores that happens. */
        if (n >= 5 && !memcmp(b, "pos:\t", 5))
            return;
        tries < 4 ? yields(2) : sleep_us(250);
    }
    char first[40] = { 0 };
    for (int i = 0; i < (n < 12 ? n : 12); i++)
        snprintf(first + 3 * i, 4, "%02x ", b[i]);
    fail("%s of %ld bytes from descriptor %d (%s %u end %d%s): data not written to it: %s", what, n, p->fd,
         kind_names[p->e.kind], p->e.obj, p->e.end, strict ? "" : ", changed meanwhile", first);
}

/* ---------------------------------------------------------------- filters */

static int f_any(const struct ent *e) { (void)e; return 1; }
static int f_open(const struct ent *e) { return !e->path; }
static int f_sock(const struct ent *e) { return !e->path && (e->kind == K_STREAM || e->kind == K_DGRAM || e->kind == K_SEQ); }
static int f_epoll(const struct ent *e) { return !e->path && e->kind == K_EPOLL; }
static int f_readable(const struct ent *e) { return !e->path && e->kind != K_EPOLL && e->kind != K_NULL && is_reader(e); }
static int f_writable(const struct ent *e) { return e->obj && !e->path && e->kind != K_EPOLL && is_writer(e); }
static int is_sock(int kind) { return kind == K_STREAM || kind == K_DGRAM || kind == K_SEQ; }

/* Is err in set[0..n)? */
static int one_of(int err, const int *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == err)
            return 1;
    return 0;
}
#define IN(err, ...) one_of(err, (const int[]){ __VA_ARGS__ }, sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

/* Errors a call may give that no bookkeeping of ours predicts. */
static int resource_err(int err) { return IN(err, EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, EINTR); }

/* Was shutdown called on obj (unknown: as if it was)? */
static int shut_of(uint32_t obj)
{
    struct obj *o = obj_of(obj);
    return o ? __atomic_load_n(&o->shut, __ATOMIC_RELAXED) : 1;
}

/* ---------------------------------------------------------------- making and closing */

static void op_close(struct ctx *c);

/* Does the table hold as many descriptors as a process keeps? */
static int full(void)
{
    lock();
    int n = live_count();
    unlock();
    return n >= SOFT_FDS;
}

/* pipe2 with O_NONBLOCK, O_CLOEXEC or not. */
static void op_pipe(struct ctx *c)
{
    if (full())
        return op_close(c);
    int p[2], fl = (chance(c, 3) ? O_NONBLOCK : 0) | (chance(c, 3) ? O_CLOEXEC : 0);
    errno = 0;
    uint32_t id = make_pipe(p, fl);
    tally(id || !errno ? 0 : -1, errno);
    if (id) {
        publish(p[0]);
        publish(p[1]);
    }
}

/* A socketpair: stream, datagram or seqpacket. */
static void op_socketpair(struct ctx *c)
{
    if (full())
        return op_close(c);
    int sv[2], kind = K_STREAM + (int)below(c, 3);
    int fl = (chance(c, 3) ? SOCK_NONBLOCK : 0) | (chance(c, 3) ? SOCK_CLOEXEC : 0);
    errno = 0;
    uint32_t id = make_socketpair(kind, sv, fl);
    tally(id || !errno ? 0 : -1, errno);
    if (id) {
        publish(sv[0]);
        publish(sv[1]);
    }
}

/* An eventfd, a semaphore or not. */
static void op_eventfd(struct ctx *c)
{
    if (full())
        return op_close(c);
    uint32_t id;
    int sema = chance(c, 3);
    int fd = make_single(K_EVENT, (chance(c, 3) ? EFD_NONBLOCK : 0) | (chance(c, 3) ? EFD_CLOEXEC : 0) |
                                  (sema ? EFD_SEMAPHORE : 0), &id);
    tally(fd, errno);
    if (fd >= 0) {
        struct obj *o = obj_of(id);
        if (o)
            o->sema = (uint8_t)sema;
        publish(fd);
    }
}

/* An epoll. */
static void op_epoll_create(struct ctx *c)
{
    if (full())
        return op_close(c);
    uint32_t id;
    int fd = make_single(K_EPOLL, chance(c, 3) ? EPOLL_CLOEXEC : 0, &id);
    tally(fd, errno);
    if (fd >= 0)
        publish(fd);
}

/* Close a picked descriptor: it was ours, so it must succeed. */
static void op_close(struct ctx *c)
{
    struct pick p;
    if (pick(c, f_any, &p) < 0 || !begin_close(&p))
        return;
    TR("close fd %d (%s %u end %d)", p.fd, kind_names[p.e.kind], p.e.obj, p.e.end);
    long r = close(p.fd);
    int err = errno;
    tally(r, err);
    if (r != 0)
        fail("close(%d) of a %s: %s", p.fd, kind_names[p.e.kind], errname(err));
    end_close(p.fd);
}

/* A descriptor made from pick p (dup and the like) must name its object. */
static void got_dup(const struct pick *p, int fd, int cloexec, const char *what)
{
    struct stat st;
    const char *d = stat_differs(fd, p->e.obj, p->e.kind, p->e.end, &st);
    if (d)
        fail("%s(%d) -> %d: the copy's %s differs from the %s's", what, p->fd, fd, d, kind_names[p->e.kind]);
    int fdfl = fcntl(fd, F_GETFD);
    if (fdfl < 0 || !!(fdfl & FD_CLOEXEC) != !!cloexec)
        fail("%s(%d) -> %d: FD_CLOEXEC %d, expected %d", what, p->fd, fd, fdfl, cloexec);
    install(fd, p->e.kind, p->e.obj, p->e.end, cloexec, p->e.path, 0);
}

/* dup of a pinned descriptor. */
static void op_dup(struct ctx *c)
{
    struct pick p;
    if (full() || pick(c, f_any, &p) < 0 || !pin(&p))
        return;
    creating();
    long r = dup(p.fd);
    int err = errno;
    if (r >= 0)
        got_dup(&p, (int)r, 0, "dup");
    created();
    unpin(p.fd);
    tally(r, err);
    if (r < 0 && !IN(err, EMFILE, ENFILE, ENOMEM))
        fail("dup(%d): %s", p.fd, errname(err));
}

/* F_DUPFD or F_DUPFD_CLOEXEC with a minimum: never below it. */
static void op_dupfd(struct ctx *c)
{
    struct pick p;
    if (full() || pick(c, f_any, &p) < 0 || !pin(&p))
        return;
    int min = (int)below(c, 48), cloexec = chance(c, 2);
    creating();
    long r = fcntl(p.fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, min);
    int err = errno;
    if (r >= 0 && r < min)
        fail("F_DUPFD(%d, %d) gave %ld", p.fd, min, r);
    if (r >= 0)
        got_dup(&p, (int)r, cloexec, "F_DUPFD");
    created();
    unpin(p.fd);
    tally(r, err);
    if (r < 0 && !IN(err, EMFILE, ENFILE, ENOMEM, EINVAL))
        fail("F_DUPFD(%d, %d): %s", p.fd, min, errname(err));
}

/* dup2 or dup3 of a picked descriptor onto another of ours (closed by it),
 * onto a free number, or onto itself. */
static void op_dup2(struct ctx *c)
{
    struct pick p, t;
    if (pick(c, f_any, &p) < 0)
        return;
    int use3 = chance(c, 2), cloexec = use3 && chance(c, 2), way = (int)below(c, 8);
    if (way == 0) {                                     /* onto itself */
        long r = use3 ? dup3(p.fd, p.fd, cloexec ? O_CLOEXEC : 0) : dup2(p.fd, p.fd);
        int err = errno;
        tally(r, err);
        if (same(&p) && (use3 ? !(r < 0 && err == EINVAL) : r != p.fd))
            fail("%s(%d, %d) on itself: %ld %s", use3 ? "dup3" : "dup2", p.fd, p.fd, r, r < 0 ? errname(err) : "");
        return;
    }
    if (way <= 4) {                                     /* onto another of ours */
        if (pick(c, f_any, &t) < 0 || t.fd == p.fd || !pin(&p))
            return;
        if (!begin_close(&t)) {
            unpin(p.fd);
            return;
        }
        creating();
        long r = use3 ? dup3(p.fd, t.fd, cloexec ? O_CLOEXEC : 0) : dup2(p.fd, t.fd);
        int err = errno;
        if (r == t.fd)
            got_dup(&p, t.fd, cloexec, use3 ? "dup3" : "dup2");
        created();
        unpin(p.fd);
        tally(r, err);
        if (r != t.fd) {
            fail("%s(%d, %d) onto a %s: %ld %s", use3 ? "dup3" : "dup2", p.fd, t.fd, kind_names[t.e.kind], r,
                 r < 0 ? errname(err) : "");
            close(t.fd);
            end_close(t.fd);
        }
        return;
    }
    if (full() || !excluding())                         /* onto a free number */
        return;
    int n = -1;
    lock();
    for (int tries = 0; tries < 8 && n < 0; tries++) {
        int fd = 3 + (int)below(c, MAXFD - 3);
        if (tab[fd].state == S_FREE)
            n = fd;
    }
    unlock();
    if (n >= 0 && pin(&p)) {
        long r = use3 ? dup3(p.fd, n, cloexec ? O_CLOEXEC : 0) : dup2(p.fd, n);
        int err = errno;
        if (r == n)
            got_dup(&p, n, cloexec, use3 ? "dup3" : "dup2");
        unpin(p.fd);
        tally(r, err);
        if (r != n && !(r < 0 && IN(err, EMFILE, ENFILE, ENOMEM)))
            fail("%s(%d, %d) onto a free number: %ld %s", use3 ? "dup3" : "dup2", p.fd, n, r, r < 0 ? errname(err) : "");
    }
    excluded();
}

/* close_range over numbers that are all free or ours to close (or mark
 * close-on-exec). */
static void op_close_range(struct ctx *c)
{
    if (!excluding())
        return;
    int lo = 3 + (int)below(c, MAXFD - 3), hi = lo + (int)below(c, 6), cloexec = chance(c, 3);
    unsigned last = chance(c, 8) ? ~0u : (unsigned)hi;
    if (last == ~0u || hi >= MAXFD)
        hi = MAXFD - 1;
    lock();
    int ok = 1;
    for (int fd = lo; fd <= hi; fd++) {
        struct ent *e = &tab[fd];
        if (e->state == S_PRIV || e->state == S_CLOSING || e->state == S_STDIO || e->pins || e->flux)
            ok = 0;
    }
    if (ok)
        for (int fd = lo; fd <= hi; fd++) {
            struct ent *e = &tab[fd];
            if (e->state != S_LIVE)
                continue;
            if (cloexec) {
                e->flux++;
            } else {
                e->state = S_CLOSING;
                e->gen++;
                hist[fd][e->gen % HIST] = (struct hist){ e->gen, 0, K_NONE, 0 };
            }
        }
    unlock();
    if (ok) {
        long r = syscall(SYS_close_range, lo, last, cloexec ? 4 : 0);
        int err = errno;
        tally(r, err);
        if (r != 0)
            fail("close_range(%d, %u, %s): %s", lo, last, cloexec ? "CLOEXEC" : "0", errname(err));
        lock();
        for (int fd = lo; fd <= hi; fd++) {
            struct ent *e = &tab[fd];
            if (cloexec && e->state == S_LIVE && e->flux) {
                e->cloexec = 1;
                e->fgen++;
                e->flux--;
            } else if (!cloexec && (e->state == S_CLOSING || e->state == S_UNKNOWN)) {
                e->state = S_FREE;
            }
        }
        unlock();
    }
    excluded();
}

/* The access mode F_GETFL should say for an entry. */
static int accmode(const struct ent *e)
{
    if (e->kind == K_PIPE)
        return e->end == 0 ? O_RDONLY : e->end == 1 ? O_WRONLY : O_RDWR;
    return O_RDWR;
}

/* F_SETFD (one setter at a time), F_GETFD, F_GETFL, F_SETFL, checked against the table. */
static void op_fcntl(struct ctx *c)
{
    struct pick p;
    if (pick(c, f_any, &p) < 0)
        return;
    int way = (int)below(c, 4);
    if (way == 0) {                                     /* F_SETFD */
        lock();
        int ok = tab[p.fd].gen == p.e.gen && tab[p.fd].state == S_LIVE && !tab[p.fd].flux;  /* (one setter at a time) */
        if (ok)
            tab[p.fd].flux++;
        unlock();
        if (!ok)
            return;
        int v = chance(c, 2);
        long r = fcntl(p.fd, F_SETFD, v ? FD_CLOEXEC : 0);
        int err = errno;
        tally(r, err);
        if (r != 0)
            fail("F_SETFD(%d): %s", p.fd, errname(err));
        lock();
        tab[p.fd].cloexec = (uint8_t)v;
        tab[p.fd].fgen++;
        tab[p.fd].flux--;
        unlock();
    } else if (way == 1) {                              /* F_GETFD */
        uint16_t flux0 = p.e.flux;
        long r = fcntl(p.fd, F_GETFD);
        int err = errno;
        tally(r, err);
        lock();
        int strict = tab[p.fd].gen == p.e.gen && tab[p.fd].fgen == p.e.fgen && !flux0 && !tab[p.fd].flux;
        unlock();
        if (strict && (r < 0 || !!(r & FD_CLOEXEC) != p.e.cloexec))
            fail("F_GETFD(%d) of a %s: %ld %s, expected close-on-exec %d", p.fd, kind_names[p.e.kind], r,
                 r < 0 ? errname(err) : "", p.e.cloexec);
    } else if (way == 2) {                              /* F_GETFL */
        long r = fcntl(p.fd, F_GETFL);
        int err = errno;
        tally(r, err);
        if (same(&p) && (r < 0 || (p.e.path ? !(r & O_PATH) : (r & O_ACCMODE) != accmode(&p.e) || (r & O_PATH))))
            fail("F_GETFL(%d) of a %s%s (end %d): %ld %s", p.fd, p.e.path ? "O_PATH " : "", kind_names[p.e.kind],
                 p.e.end, r, r < 0 ? errname(err) : "");
    } else {                                            /* F_SETFL O_NONBLOCK on or off (pinned) */
        if (!pin(&p))
            return;
        long fl = fcntl(p.fd, F_GETFL);
        long r = fcntl(p.fd, F_SETFL, (fl < 0 ? 0 : fl & ~O_ACCMODE) ^ O_NONBLOCK);
        int err = errno;
        unpin(p.fd);
        tally(r, err);
        if (same(&p) && (p.e.path ? !(r < 0 && err == EBADF) : r != 0))
            fail("F_SETFL(%d) of a %s%s: %ld %s", p.fd, p.e.path ? "O_PATH " : "", kind_names[p.e.kind], r,
                 r < 0 ? errname(err) : "");
    }
}

/* ---------------------------------------------------------------- writing */

/* The errors a write (or send) toward a `kind` at `end` may give, given
 * that the other side (peer) was held by this process all along or not. */
static int write_err_ok(int kind, const struct ent *e, int err, int peer_held, int shut)
{
    if (e->path)
        return err == EBADF;
    if (e->kind == K_EPOLL)
        return err == EINVAL;
    if (kind == K_PIPE && e->end == 0)
        return err == EBADF;
    if (IN(err, EAGAIN, EINTR, ENOBUFS, ENOMEM))
        return 1;
    if (kind == K_EVENT)
        return err == EINVAL;
    if (IN(err, EPIPE, ECONNREFUSED, ENOTCONN, ECONNRESET))
        return !peer_held || shut;
    return kind == K_DGRAM && err == EMSGSIZE;
}

/* For a failure's message: the inode an object's end was made with, and
 * the one a descriptor names now (0: none). */
static uint64_t ino_made(uint32_t obj, int end)
{
    struct obj *o = obj_of(obj);
    return o ? o->ino[end] : 0;
}

static uint64_t ino_now(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static const char *write_name(int way) { return way == 0 ? "write" : way == 1 ? "writev" : way == 2 ? "send" : "sendmsg"; }

/* Write through a pinned descriptor: tagged bytes, a message or an eventfd
 * count; the count is checked and accounted. */
static void op_write(struct ctx *c)
{
    struct pick p;
    if (pick(c, chance(c, 12) ? f_any : f_writable, &p) < 0)
        return;
    if (!p.e.obj && !p.e.path && p.e.kind != K_EPOLL && is_writer(&p.e))
        return;                                         /* (what it is, we do not know: its readers could not tell) */
    if (!pin(&p))
        return;
    const struct ent *e = &p.e;
    int kind = e->kind, dir = data_dir(kind, e->end ^ (is_sock(kind) ? 1 : 0));
    uint8_t *buf = (uint8_t *)c->buf;
    size_t n = 1 + below(c, chance(c, 4) ? sizeof(c->buf) : 512);
    if (kind == K_PIPE && chance(c, 2) && n > PIPE_ATOMIC)
        n = PIPE_ATOMIC;
    int way = is_sock(kind) ? (int)below(c, 4) : kind == K_EVENT ? 0 : (int)below(c, 2);
    int flags = (chance(c, 2) ? MSG_DONTWAIT : 0) | MSG_NOSIGNAL;
    struct hold peers;
    hold_snap(e->obj, kind, kind == K_PIPE ? 0 : e->end ^ 1, &peers);
    int shut0 = shut_of(e->obj);
    uint64_t v = 1 + below(c, 1000);
    if (kind == K_EVENT) {
        n = chance(c, 30) ? 4 : 8;
        if (chance(c, 50))
            v = ~0ull;
        memcpy(buf, &v, 8);
    } else if (!e->path && e->kind != K_EPOLL && e->kind != K_NULL) {
        n = build(buf, n, kind, e->obj, dir, NULL, 0);
    }
    int counted = !e->path && (kind == K_EVENT ? n == 8 && v != ~0ull : kind != K_EPOLL && kind != K_NULL && is_writer(e));
    uint64_t asked = kind == K_EVENT ? v : n;
    if (counted)
        writing(e->obj, dir, asked);
    struct iovec iov[2] = { { buf, n / 2 }, { buf + n / 2, n - n / 2 } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
    blocking(!(flags & MSG_DONTWAIT) || way < 2);
    long r = way == 0 ? write(p.fd, buf, n) : way == 1 ? writev(p.fd, iov, 2) :
             way == 2 ? send(p.fd, buf, n, flags) : sendmsg(p.fd, &m, flags);
    int err = errno;
    blocking(0);
    if (counted)
        written(e->obj, dir, asked, kind == K_EVENT ? (r == 8 ? (long)v : 0) : r);
    int held = hold_kept(&peers), shut = shut0 || shut_of(e->obj);
    unpin(p.fd);
    tally(r, err);
    if (r > (long)n)
        fail("%s(%d, %zu) to a %s returned %ld", write_name(way), p.fd, n, kind_names[kind], r);
    else if (r >= 0 && (e->path || kind == K_EPOLL || (kind == K_PIPE && e->end == 0)))
        fail("%s(%d) to a %s%s (end %d) returned %ld", write_name(way), p.fd, e->path ? "O_PATH " : "",
             kind_names[kind], e->end, r);
    else if (r >= 0 && r < (long)n && (kind == K_NULL || kind == K_EVENT || kind == K_DGRAM || kind == K_SEQ ||
                                       (kind == K_PIPE && n <= PIPE_ATOMIC)))
        fail("%s(%d, %zu) to a %s: only %ld written", write_name(way), p.fd, n, kind_names[kind], r);
    else if (r == 0 && n > 0)
        fail("%s(%d, %zu) to a %s: 0 written", write_name(way), p.fd, n, kind_names[kind]);
    else if (r < 0 && !write_err_ok(kind, e, err, held, shut))
        fail("%s(%d, %zu) to a %s%s (end %d)%s: %s (the other side: descriptor %d of gen %u, %d in all; "
             "that number now state %d gen %u; inodes made %llu %llu, now %llu here and %llu there)",
             write_name(way), p.fd, n, e->path ? "O_PATH " : "",
             kind_names[kind], e->end, held ? ", its other side held here" : "", errname(err),
             peers.n ? peers.fd[0] : -1, peers.n ? peers.gen[0] : 0, peers.n,
             peers.n ? tab[peers.fd[0]].state : -1, peers.n ? tab[peers.fd[0]].gen : 0,
             (unsigned long long)ino_made(e->obj, 0), (unsigned long long)ino_made(e->obj, 1),
             (unsigned long long)ino_now(p.fd), (unsigned long long)(peers.n ? ino_now(peers.fd[0]) : 0));
    else if (r < 0 && kind == K_EVENT && err == EINVAL && n == 8 && v != ~0ull)
        fail("write(%d) of %llu to an eventfd: EINVAL", p.fd, (unsigned long long)v);
    else if (r >= 0 && kind == K_EVENT && (n != 8 || v == ~0ull))
        fail("write(%d, %zu) of %llx to an eventfd returned %ld", p.fd, n, (unsigned long long)v, r);
}

/* ---------------------------------------------------------------- reading */

/* Take in the descriptors of a received message: each must be one of ours,
 * and in a message with claims, the one claimed. */
static void take_fds(struct msghdr *m, const uint8_t *data, long n, long room, const struct pick *p, int cloexec,
                     int priv, int *got, int *ngot)
{
    int fds[64], nfd = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
            fail("recvmsg(%d): a control message of level %d type %d", p->fd, cm->cmsg_level, cm->cmsg_type);
            continue;
        }
        int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < k && nfd < 64; i++)
            memcpy(&fds[nfd++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
    }
    if (ngot)
        *ngot = 0;
    if (!nfd && !(m->msg_flags & MSG_CTRUNC))
        return;
    struct head h;
    struct claim cl[MAXSEND];
    int ncl = -1;
    struct cand cd = { p->e.obj, p->e.kind, p->e.end };
    long msglen;
    if ((p->e.kind == K_DGRAM || p->e.kind == K_SEQ) && n >= (long)sizeof(h) && same(p) &&
        fits(data, n, room, &cd, &msglen)) {
        memcpy(&h, data, sizeof(h));
        if (h.nclaim <= MAXSEND && n >= (long)(sizeof(h) + h.nclaim * sizeof(struct claim))) {
            ncl = h.nclaim;
            memcpy(cl, data + sizeof(h), (size_t)ncl * sizeof(struct claim));
        }
    }
    if (ncl >= 0 && (nfd > ncl || (nfd < ncl && !(m->msg_flags & MSG_CTRUNC))))
        fail("recvmsg(%d) from a %s: %d descriptors for %d sent, flags 0x%x", p->fd, kind_names[p->e.kind], nfd, ncl,
             (unsigned)m->msg_flags);
    ADD(sh->received, (uint64_t)nfd);
    for (int i = 0; i < nfd; i++) {
        int fd = fds[i], end, path;
        uint32_t obj;
        int kind = identify(fd, &obj, &end, &path);
        if (ncl > i) {
            struct stat st;
            const char *d = stat_differs(fd, cl[i].id, cl[i].kind, cl[i].end, &st);
            if (d || path != cl[i].path || (kind != cl[i].kind && obj_of(cl[i].id)))
                fail("descriptor %d received on %d names a %s%s (object %u), sent as a %s%s %u end %d: %s differs",
                     fd, p->fd, path ? "O_PATH " : "", kind_names[kind], obj, cl[i].path ? "O_PATH " : "",
                     kind_names[cl[i].kind], cl[i].id, cl[i].end, d ? d : "kind");
            else if (obj_of(cl[i].id)) {
                obj = cl[i].id;
                kind = cl[i].kind;
                end = cl[i].end;
            }
        }
        if (kind == K_NONE) {
            struct stat st;
            fstat(fd, &st);
            fail("descriptor %d received on %d is none of ours (mode 0%o ino %llu)", fd, p->fd, (unsigned)st.st_mode,
                 (unsigned long long)st.st_ino);
            close(fd);
            continue;
        }
        int fdfl = fcntl(fd, F_GETFD);
        if (fdfl < 0 || !!(fdfl & FD_CLOEXEC) != !!cloexec)
            fail("descriptor %d received on %d: FD_CLOEXEC %d, asked %d", fd, p->fd, fdfl, cloexec);
        if (install(fd, kind, obj, end, cloexec, path, priv) > 0 && got && ngot && *ngot < MAXFD)
            got[(*ngot)++] = fd;
    }
}

/* Check a read's count or error through pick p (room bytes asked).
 * held: a writer of it was held here all along (no end of file). */
static void check_count(const struct pick *p, const char *what, long r, int err, long room, int held, int shut)
{
    const struct ent *e = &p->e;
    int strict = same(p);
    if (r > room) {
        fail("%s(%d, %ld) from a %s returned %ld", what, p->fd, room, kind_names[e->kind], r);
    } else if (r == 0 && strict && room > 0 && held && !shut && e->kind != K_NULL) {
        fail("%s(%d) from a %s (end %d): end of file while a writer is held here (inodes made %llu %llu, now %llu)",
             what, p->fd, kind_names[e->kind], e->end, (unsigned long long)ino_made(e->obj, 0),
             (unsigned long long)ino_made(e->obj, 1), (unsigned long long)ino_now(p->fd));
    } else if (r >= 0 && strict && (e->path || e->kind == K_EPOLL || (e->kind == K_PIPE && e->end == 1))) {
        fail("%s(%d) from a %s%s (end %d) returned %ld", what, p->fd, e->path ? "O_PATH " : "", kind_names[e->kind],
             e->end, r);
    } else if (r < 0 && strict) {
        int ok = e->path ? err == EBADF : e->kind == K_EPOLL ? err == EINVAL :
                 e->kind == K_PIPE && e->end == 1 ? err == EBADF : IN(err, EAGAIN, EINTR, ENOMEM) ||
                 (e->kind == K_EVENT && err == EINVAL && room < 8) || (err == ECONNRESET && is_sock(e->kind));
        if (!ok)
            fail("%s(%d, %ld) from a %s%s (end %d): %s", what, p->fd, room, e->path ? "O_PATH " : "",
                 kind_names[e->kind], e->end, errname(err));
    }
}

/* Read (read, readv, recv, recvmsg with room for descriptors) from a
 * picked descriptor, not pinned: it may be closed meanwhile. */
static void op_read(struct ctx *c)
{
    struct pick p;
    if (pick_use(c, chance(c, 12) ? f_any : f_readable, &p) < 0)
        return;
    const struct ent *e = &p.e;
    uint8_t *buf = (uint8_t *)c->buf;
    long room = 1 + (long)below(c, chance(c, 4) ? sizeof(c->buf) : 600);
    if (e->kind == K_EVENT)
        room = chance(c, 30) ? 4 : 8;
    else if ((e->kind == K_DGRAM || e->kind == K_SEQ) && chance(c, 6))
        room = 1 + below(c, 40);
    int way = is_sock(e->kind) ? (int)below(c, 4) : (int)below(c, 2);
    if (is_sock(e->kind) && chance(c, 2))
        way = 3;
    int flags = (chance(c, 16) ? 0 : MSG_DONTWAIT) | (chance(c, 10) ? MSG_PEEK : 0);
    struct pollfd pf = { p.fd, POLLIN, 0 };
    if (way < 2 && !chance(c, 16) && poll(&pf, 1, 0) == 0) {
        unuse(p.fd);                                    /* (most reads only when there is something) */
        return;
    }
    int cloexec = chance(c, 3);
    if (cloexec)
        flags |= MSG_CMSG_CLOEXEC;
    struct hold writers;
    hold_snap(e->obj, e->kind, e->kind == K_PIPE ? 1 : e->end ^ 1, &writers);
    int shut0 = shut_of(e->obj);
    union { char b[CMSG_SPACE(sizeof(int) * 8)]; struct cmsghdr align; } u;
    struct iovec iov[2] = { { buf, (size_t)room / 2 }, { buf + room / 2, (size_t)(room - room / 2) } };
    size_t ctl = way == 3 ? CMSG_SPACE(sizeof(int) * below(c, 9)) : 0;
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = ctl ? u.b : NULL, .msg_controllen = ctl };
    if (ctl)
        creating();
    TR("%s fd %d (%s %u end %d%s) room %ld flags 0x%x control %zu", way == 0 ? "read" : way == 1 ? "readv" : way == 2 ?
       "recv" : "recvmsg", p.fd, kind_names[e->kind], e->obj, e->end, e->path ? " O_PATH" : "", room, flags, ctl);
    blocking(!(flags & MSG_DONTWAIT) || way < 2);
    long r = way == 0 ? read(p.fd, buf, (size_t)room) : way == 1 ? readv(p.fd, iov, 2) :
             way == 2 ? recv(p.fd, buf, (size_t)room, flags & ~MSG_CMSG_CLOEXEC) : recvmsg(p.fd, &m, flags);
    int err = errno;
    blocking(0);
    unuse(p.fd);
    if (r >= 0 && way == 3)
        take_fds(&m, buf, r, room, &p, cloexec, 0, NULL, NULL);
    if (ctl)
        created();
    tally(r, err);
    const char *what = way == 0 ? "read" : way == 1 ? "readv" : way == 2 ? "recv" : "recvmsg";
    check_count(&p, what, r, err, room, hold_kept(&writers), shut0 || shut_of(e->obj));
    if (r <= 0 || r > room)
        return;
    if (e->kind == K_EVENT && same(&p)) {
        uint64_t v;
        memcpy(&v, buf, 8);
        struct obj *o = obj_of(e->obj);
        if (r != 8 || v == 0 || (o && o->sema && v != 1))
            fail("%s(%d) from an eventfd%s: %ld bytes, value %llu", what, p.fd, o && o->sema ? " (semaphore)" : "", r,
                 (unsigned long long)v);
        else
            consumed(e->obj, 0, v, what);
        return;
    }
    if (e->kind == K_EVENT || e->kind == K_NULL || e->path)
        return;
    check_read(&p, buf, r, room, flags & MSG_PEEK, what);
    if (way == 3 && (e->kind == K_DGRAM || e->kind == K_SEQ) && same(&p) && r == room && r >= (long)sizeof(struct head)) {
        struct head h;
        memcpy(&h, buf, sizeof(h));
        if (h.magic == MAGIC && h.len > r && !(m.msg_flags & MSG_TRUNC))
            fail("recvmsg(%d) from a %s: %ld bytes of a %u-byte message without MSG_TRUNC", p.fd,
                 kind_names[e->kind], r, h.len);
    }
}

/* ---------------------------------------------------------------- passing descriptors */

/* sendmsg with SCM_RIGHTS of sock (pinned) carrying the pinned picks fds:
 * for messages, their claims. Returns sendmsg's result. */
static long send_rights(struct ctx *c, const struct pick *sock, const struct pick *fds, int nfd, int flags, int *errp)
{
    struct claim cl[MAXSEND];
    int list[MAXSEND];
    for (int i = 0; i < nfd; i++) {
        cl[i] = (struct claim){ fds[i].e.obj, fds[i].e.end, fds[i].e.path, fds[i].e.kind, 0 };
        list[i] = fds[i].fd;
    }
    int kind = sock->e.kind, dir = sock->e.end ^ 1;
    uint8_t *buf = (uint8_t *)c->buf2;
    size_t n = build(buf, 1 + below(c, 8), kind, sock->e.obj, dir, cl, nfd);
    union { char b[CMSG_SPACE(sizeof(int) * MAXSEND)]; struct cmsghdr align; } u;
    memset(&u, 0, sizeof(u));
    struct iovec iov = { buf, n };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd) };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
    memcpy(CMSG_DATA(cm), list, sizeof(int) * (size_t)nfd);
    struct hold peers;
    hold_snap(sock->e.obj, kind, dir, &peers);
    int shut0 = shut_of(sock->e.obj);
    TR("sendmsg fd %d (%s %u end %d) %zu bytes, descriptors %d %d %d %d, flags 0x%x", sock->fd, kind_names[kind],
       sock->e.obj, sock->e.end, n, list[0], nfd > 1 ? list[1] : -1, nfd > 2 ? list[2] : -1, nfd > 3 ? list[3] : -1,
       flags);
    writing(sock->e.obj, dir, n);
    blocking(!(flags & MSG_DONTWAIT));
    long r = sendmsg(sock->fd, &m, flags | MSG_NOSIGNAL);
    int err = errno;
    blocking(0);
    written(sock->e.obj, dir, n, r);
    *errp = err;
    if (r > (long)n || (r >= 0 && r < (long)n && kind != K_STREAM) || r == 0)
        fail("sendmsg(%d, %zu bytes, %d descriptors) to a %s returned %ld", sock->fd, n, nfd, kind_names[kind], r);
    else if (r < 0 && !IN(err, EAGAIN, EINTR, ENOBUFS, ENOMEM, ETOOMANYREFS) &&
             !(IN(err, EPIPE, ECONNREFUSED, ENOTCONN, ECONNRESET) && (!hold_kept(&peers) || shut0 || shut_of(sock->e.obj))))
        fail("sendmsg(%d) of %d descriptors to a %s (end %d): %s", sock->fd, nfd, kind_names[kind], sock->e.end,
             errname(err));
    if (r > 0)
        ADD(sh->sent_fds, (uint64_t)nfd);
    return r;
}

/* Pass 1..4 of our descriptors over a socket: itself, its peer, anything. */
static void op_send_fds(struct ctx *c)
{
    struct pick s, fds[MAXSEND];
    if (pick(c, f_sock, &s) < 0 || !pin(&s))
        return;
    int nfd = 1 + (int)below(c, MAXSEND), n = 0;
    for (int i = 0; i < nfd; i++) {
        struct pick q;
        int way = (int)below(c, 4);
        if (way == 0) {
            q = s;
        } else if (way == 1) {
            lock();
            int peer = -1;
            for (int fd = 0; fd < MAXFD; fd++)
                if (tab[fd].state == S_LIVE && tab[fd].obj == s.e.obj && tab[fd].end != s.e.end)
                    peer = fd;
            if (peer >= 0)
                q = (struct pick){ peer, tab[peer] };
            unlock();
            if (peer < 0)
                continue;
        } else if (pick(c, f_any, &q) < 0) {
            continue;
        }
        if (pin(&q))
            fds[n++] = q;
    }
    if (n) {
        int err;
        long r = send_rights(c, &s, fds, n, chance(c, 10) ? 0 : MSG_DONTWAIT, &err);
        tally(r, err);
    }
    for (int i = 0; i < n; i++)
        unpin(fds[i].fd);
    unpin(s.fd);
}

/* shutdown of a socket (marked on its object first). */
static void op_shutdown(struct ctx *c)
{
    struct pick p;
    if (pick(c, f_sock, &p) < 0)
        return;
    /* Pinned: the number must name the socket on record when the call
     * comes (another thread's dup2 over it would shut down a socket the
     * record never hears of, whose peer then sees EPIPE and end of file
     * unexplained). A socket the registry does not know (received, its
     * inode no longer in the hash) is left alone for the same reason. */
    struct obj *o = obj_of(p.e.obj);
    if (!o || !pin(&p))
        return;
    __atomic_store_n(&o->shut, 1, __ATOMIC_RELAXED);
    int how = (int)below(c, 3);
    long r = shutdown(p.fd, how);
    int err = errno;
    unpin(p.fd);
    tally(r, err);
    if (r < 0 && err != ENOTCONN)
        fail("shutdown(%d, %d) of a %s: %s", p.fd, how, kind_names[p.e.kind], errname(err));
}

/* ---------------------------------------------------------------- epoll */

static uint64_t ep_data(const struct ent *e) { return EPDATA | (uint64_t)e->obj << 8 | e->end; }

#define EP_EVENTS (EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLRDNORM | EPOLLRDBAND | EPOLLWRNORM | \
                   EPOLLWRBAND | EPOLLMSG | EPOLLRDHUP)

/* Check what epoll_wait returned: our data words and known event bits. */
static void check_events(int fd, const struct epoll_event *ev, long n, int max, const char *what)
{
    if (n > max) {
        fail("%s(%d, max %d) returned %ld", what, fd, max, n);
        return;
    }
    for (long i = 0; i < n; i++)
        if ((ev[i].data.u64 & 0xff00000000000000ull) != EPDATA || (ev[i].events & ~(uint32_t)EP_EVENTS) ||
            !ev[i].events)
            fail("%s(%d): event %ld: data 0x%llx events 0x%x", what, fd, i, (unsigned long long)ev[i].data.u64,
                 ev[i].events);
}

/* epoll_ctl ADD, MOD or DEL of any of ours into (mostly) an epoll. */
static void op_epoll_ctl(struct ctx *c)
{
    struct pick ep, t;
    if (pick_use(c, chance(c, 10) ? f_any : f_epoll, &ep) < 0)
        return;
    if (pick_use(c, f_any, &t) < 0) {
        unuse(ep.fd);
        return;
    }
    int op = chance(c, 2) ? EPOLL_CTL_ADD : chance(c, 2) ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;
    struct epoll_event ev = { (uint32_t)(EPOLLIN | (chance(c, 2) ? EPOLLOUT : 0) | (chance(c, 4) ? EPOLLET : 0) |
                                         (chance(c, 6) ? EPOLLONESHOT : 0) | (chance(c, 4) ? EPOLLRDHUP : 0)),
                              { .u64 = ep_data(&t.e) } };
    long r = epoll_ctl(ep.fd, op, t.fd, &ev);
    int err = errno;
    unuse(ep.fd);
    unuse(t.fd);
    tally(r, err);
    if (!same(&ep) || !same(&t))
        return;
    const char *bad = NULL;
    int not_ep = ep.e.kind != K_EPOLL || ep.e.path;
    if (ep.e.path || t.e.path)
        bad = r < 0 && (err == EBADF || (not_ep && !ep.e.path && err == EINVAL)) ? NULL : "expected EBADF";
    else if (t.e.kind == K_NULL)
        bad = r < 0 && (err == EPERM || (err == EINVAL && (not_ep || ep.e.obj == t.e.obj))) ? NULL : "expected EPERM";
    else if (not_ep || (ep.e.obj && ep.e.obj == t.e.obj))
        bad = r < 0 && err == EINVAL ? NULL : "expected EINVAL";
    else if (r < 0 && err == EINVAL && (!ep.e.obj || !t.e.obj))
        bad = NULL;                                     /* (received epolls of unknown identity: maybe the same) */
    else if (r < 0 && err == ELOOP)
        bad = t.e.kind == K_EPOLL && op == EPOLL_CTL_ADD ? NULL : "ELOOP";
    else if (r < 0)
        bad = IN(err, ENOMEM, ENOSPC) || (op == EPOLL_CTL_ADD && err == EEXIST) || (op != EPOLL_CTL_ADD && err == ENOENT)
              ? NULL : "unexpected";
    if (bad)
        fail("epoll_ctl(%d %s, %s, %d %s%s): %ld %s (%s)", ep.fd, kind_names[ep.e.kind],
             op == EPOLL_CTL_ADD ? "ADD" : op == EPOLL_CTL_MOD ? "MOD" : "DEL", t.fd, t.e.path ? "O_PATH " : "",
             kind_names[t.e.kind], r, r < 0 ? errname(err) : "", bad);
}

/* epoll_wait or epoll_pwait: no timeout, a few ms, or forever. */
static void op_epoll_wait(struct ctx *c)
{
    struct pick ep;
    if (pick_use(c, chance(c, 10) ? f_any : f_epoll, &ep) < 0)
        return;
    struct epoll_event ev[8];
    int max = chance(c, 40) ? 0 : 1 + (int)below(c, 8);
    int timeout = chance(c, 40) ? -1 : chance(c, 12) ? 1 + (int)below(c, 3) : 0;
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    int pw = chance(c, 3);
    blocking(timeout != 0);
    long r = pw ? epoll_pwait(ep.fd, ev, max, timeout, &mask) : epoll_wait(ep.fd, ev, max, timeout);
    int err = errno;
    blocking(0);
    unuse(ep.fd);
    tally(r, err);
    if (r >= 0)
        check_events(ep.fd, ev, r, max, "epoll_wait");
    if (!same(&ep))
        return;
    int bad = max == 0 ? !(r < 0 && err == EINVAL) : ep.e.path ? !(r < 0 && err == EBADF) :
              ep.e.kind != K_EPOLL ? !(r < 0 && err == EINVAL) : r < 0 && err != EINTR;
    if (bad)
        fail("epoll_wait(%d %s%s, max %d, timeout %d): %ld %s", ep.fd, ep.e.path ? "O_PATH " : "",
             kind_names[ep.e.kind], max, timeout, r, r < 0 ? errname(err) : "");
}

/* A private chain of 2..8 epolls, each watching the next, the last a
 * private pipe with data: closing it into a cycle must fail with ELOOP,
 * adding one to itself with EINVAL; then some join the table. */
static void op_epoll_loop(struct ctx *c)
{
    int k = 2 + (int)below(c, 7), ep[8], p[2] = { -1, -1 }, built = 1;
    uint32_t ids[8];
    for (int i = 0; i < k; i++)
        if ((ep[i] = make_single(K_EPOLL, 0, &ids[i])) < 0) {
            k = i;
            break;
        }
    if (k >= 2 && make_pipe(p, O_NONBLOCK)) {
        struct epoll_event ev = { EPOLLIN, { .u64 = EPDATA | (uint64_t)tab[p[0]].obj << 8 } };
        if (epoll_ctl(ep[k - 1], EPOLL_CTL_ADD, p[0], &ev) < 0)
            fail("epoll_ctl ADD of a pipe to a new epoll: %s", errname(errno));
        uint8_t t = tagb(tab[p[0]].obj, 0);
        writing(tab[p[0]].obj, 0, 1);
        written(tab[p[0]].obj, 0, 1, write(p[1], &t, 1));
        for (int i = k - 2; i >= 0; i--) {
            struct epoll_event e2 = { EPOLLIN, { .u64 = EPDATA | (uint64_t)ids[i + 1] << 8 } };
            long r = epoll_ctl(ep[i], EPOLL_CTL_ADD, ep[i + 1], &e2);
            int err = errno;
            tally(r, err);
            if (r < 0) {
                if (!(err == ELOOP && k - 1 - i >= 4) && !IN(err, ENOMEM, ENOSPC))
                    fail("epoll_ctl ADD of epoll %d of a chain of %d into the one above: %s", i + 1, k, errname(err));
                built = 0;
                break;
            }
        }
        if (built) {
            struct epoll_event e3 = { EPOLLIN, { .u64 = EPDATA | (uint64_t)ids[0] << 8 } };
            long r = epoll_ctl(ep[k - 1], EPOLL_CTL_ADD, ep[0], &e3);
            int err = errno;
            tally(r, err);
            if (!(r < 0 && err == ELOOP))
                fail("a cycle of %d epolls closed: %ld %s (expected ELOOP)", k, r, r < 0 ? errname(err) : "");
            int mid = (int)below(c, (unsigned)k);
            r = epoll_ctl(ep[mid], EPOLL_CTL_ADD, ep[mid], &e3);
            err = errno;
            if (!(r < 0 && err == EINVAL))
                fail("an epoll added to itself: %ld %s (expected EINVAL)", r, r < 0 ? errname(err) : "");
            struct epoll_event out[4];
            r = epoll_wait(ep[0], out, 4, 0);
            err = errno;
            if (r >= 0)
                check_events(ep[0], out, r, 4, "epoll_wait of a chain");
            if (r < 0 ? err != EINTR : k <= 4 && (r != 1 || out[0].data.u64 != (EPDATA | (uint64_t)ids[1] << 8)))
                fail("epoll_wait of a chain of %d epolls with data at the end: %ld %s", k, r, r < 0 ? errname(err) : "");
        }
    }
    for (int i = 0; i < k; i++) {
        if (chance(c, 2))
            publish(ep[i]);
        else
            close_private(ep[i]);
    }
    if (p[0] >= 0) {
        if (chance(c, 2)) {
            publish(p[0]);
            publish(p[1]);
        } else {
            close_private(p[0]);
            close_private(p[1]);
        }
    }
}

/* poll of up to four of ours: events asked or errors, POLLNVAL only for O_PATH. */
static void op_poll(struct ctx *c)
{
    struct pollfd pf[4];
    struct pick p[4];
    int n = 1 + (int)below(c, 4), m = 0;
    for (int i = 0; i < n; i++)
        if (pick(c, f_any, &p[m]) >= 0) {
            pf[m] = (struct pollfd){ p[m].fd, (short)(POLLIN | (chance(c, 2) ? POLLOUT : 0)), 0 };
            m++;
        }
    if (!m)
        return;
    long r = poll(pf, (nfds_t)m, 0);
    int err = errno;
    tally(r, err);
    if (r < 0 ? err != EINTR && err != ENOMEM : r > m)
        fail("poll of %d: %ld %s", m, r, r < 0 ? errname(err) : "");
    for (int i = 0; r > 0 && i < m; i++) {
        short extra = (short)(pf[i].revents & ~(pf[i].events | POLLERR | POLLHUP | POLLNVAL | POLLRDHUP | POLLRDNORM |
                                                POLLWRNORM | POLLRDBAND | POLLWRBAND | POLLPRI));
        if (extra || (same(&p[i]) && !!(pf[i].revents & POLLNVAL) != p[i].e.path))
            fail("poll: descriptor %d, a %s%s: revents 0x%x for events 0x%x", p[i].fd, p[i].e.path ? "O_PATH " : "",
                 kind_names[p[i].e.kind], pf[i].revents, pf[i].events);
    }
}

/* ---------------------------------------------------------------- checks and /proc */

/* What /proc/self/fd/N should name for an entry (or NULL: not checked). */
static const char *link_of(const struct ent *e, char *buf, size_t size)
{
    struct obj *o = obj_of(e->obj);
    if (e->kind == K_EVENT)
        return "anon_inode:[eventfd]";
    if (e->kind == K_EPOLL)
        return "anon_inode:[eventpoll]";
    if (e->kind == K_NULL)
        return "/dev/null";
    if (!o)
        return NULL;
    snprintf(buf, size, "%s:[%llu]", e->kind == K_PIPE ? "pipe" : "socket",
             (unsigned long long)o->ino[e->kind == K_PIPE ? 0 : e->end & 1]);
    return buf;
}

/* fstat, /proc/self/fd/N, /proc/self/fdinfo/N and F_GETFD of a picked
 * descriptor against the table and the registry. */
static void op_check(struct ctx *c)
{
    struct pick p;
    if (pick(c, f_any, &p) < 0)
        return;
    char path[48], got[96] = { 0 }, want[64];
    int way = (int)below(c, 3);
    if (way == 0) {
        struct stat st;
        const char *d = stat_differs(p.fd, p.e.obj, p.e.kind, p.e.end, &st);
        tally(d ? -1 : 0, EIO);
        if (d && same(&p))
            fail("fstat(%d) of a %s%s %u (end %d): %s differs (mode 0%o ino %llu)", p.fd, p.e.path ? "O_PATH " : "",
                 kind_names[p.e.kind], p.e.obj, p.e.end, d, (unsigned)st.st_mode, (unsigned long long)st.st_ino);
    } else if (way == 1) {
        snprintf(path, sizeof(path), "/proc/self/fd/%d", p.fd);
        long r = readlink(path, got, sizeof(got) - 1);
        int err = errno;
        tally(r, err);
        const char *w = link_of(&p.e, want, sizeof(want));
        if (same(&p) && (r < 0 || (w && strcmp(got, w))))
            fail("readlink %s of a %s: \"%s\" %s, expected \"%s\"", path, kind_names[p.e.kind], r < 0 ? "" : got,
                 r < 0 ? errname(err) : "", w ? w : "?");
    } else {
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", p.fd);
        uint16_t flux0 = p.e.flux;
        creating();
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        /* pread at 0: another thread's unpinned read of a number it picked
         * before that number was closed may land on this new descriptor
         * and move its position (an eventfd read takes 8 bytes). */
        long r = fd >= 0 ? pread(fd, got, sizeof(got) - 1, 0) : -1;
        int err = errno;
        struct stat st1 = { 0 };
        if (fd >= 0) {
            fstat(fd, &st1);
            close(fd);
        }
        created();
        tally(r, err);
        lock();
        int strict = tab[p.fd].gen == p.e.gen && tab[p.fd].fgen == p.e.fgen && !flux0 && !tab[p.fd].flux &&
                     tab[p.fd].state == S_LIVE;
        unlock();
        if (!strict)
            return;
        const char *fl = r > 0 ? strstr(got, "flags:\t") : NULL, *ino = r > 0 ? strstr(got, "ino:\t") : NULL;
        unsigned long flags = fl ? strtoul(fl + 7, NULL, 8) : 0;
        struct obj *o = obj_of(p.e.obj);
        int mode_ok = p.e.path ? (flags & O_PATH) != 0 : (int)(flags & O_ACCMODE) == accmode(&p.e);
        if (!fl || !mode_ok || !!(flags & O_CLOEXEC) != p.e.cloexec ||
            (ino && o && strtoull(ino + 5, NULL, 10) != o->ino[p.e.kind == K_PIPE ? 0 : p.e.end & 1])) {
            /* What the descriptor and a second look say now (a transient or a wrong file?). */
            char again[96] = { 0 }, link[64] = { 0 }, lpath[48];
            int fd2 = open(path, O_RDONLY | O_CLOEXEC);
            long r2 = fd2 >= 0 ? pread(fd2, again, sizeof(again) - 1, 0) : -1;
            struct stat st2 = { 0 };
            if (fd2 >= 0) {
                fstat(fd2, &st2);
                close(fd2);
            }
            snprintf(lpath, sizeof(lpath), "/proc/self/fd/%d", p.fd);
            readlink(lpath, link, sizeof(link) - 1);
            for (char *q = again; *q; q++)
                if (*q == '\n')
                    *q = ' ';
            fail("%s of a %s%s (end %d, close-on-exec %d): read %ld %s \"%s\"; now F_GETFD %d, link \"%s\", "
                 "again %ld \"%s\" (fdinfo inodes %llu, %llu)", path, p.e.path ? "O_PATH " : "", kind_names[p.e.kind],
                 p.e.end, p.e.cloexec, r, r < 0 ? errname(err) : "", got, fcntl(p.fd, F_GETFD), link, r2, again,
                 (unsigned long long)st1.st_ino, (unsigned long long)st2.st_ino);
        }
    }
}

/* /proc/self/fd/N opened: O_PATH (names the same object), then read-write
 * (a pipe: both its ends; a socket: ENXIO); or a child's /proc/PID/fd/N
 * (O_PATH), looked at and closed at once: kept, it could be reopened
 * read-write here (way 2 or 3 on it), which makes a private pipe of the
 * child's (blk_pipe_write's) one that this process reads and writes. */
static void op_proc_reopen(struct ctx *c)
{
    struct pick p;
    if (full() || pick_use(c, f_any, &p) < 0)
        return;
    char path[48];
    int way = (int)below(c, 5), cloexec = chance(c, 2);
    pid_t child = 0;
    if (way == 4) {
        lock();
        int i = (int)below(c, NCHILD);
        child = children[i].state ? children[i].pid : 0;
        unlock();
        if (!child)
            way = 0;
    }
    if (way == 4)
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", child, p.fd);
    else
        snprintf(path, sizeof(path), "/proc/self/fd/%d", p.fd);
    int path_only = way <= 1 || way == 4;
    int fl = path_only ? O_PATH : O_RDWR | O_NONBLOCK;
    creating();
    long r = open(path, fl | (cloexec ? O_CLOEXEC : 0));
    int err = errno;
    unuse(p.fd);
    tally(r, err);
    uint32_t obj;
    int end, path_;
    if (r >= 0 && way == 4) {
        identify((int)r, &obj, &end, &path_);
        if (!path_)
            fail("open %s (O_PATH): F_GETFL says it is not O_PATH", path);
        close((int)r);
    } else if (r >= 0) {
        int kind = identify((int)r, &obj, &end, &path_), kept = same(&p);
        int strict = kept && (p.e.obj || !p.e.path);     /* (an O_PATH socket unknown: its kind too) */
        if (strict && (kind != p.e.kind || (obj != p.e.obj && p.e.obj && obj) || path_ != path_only)) {
            fail("open %s (%s) of a %s%s %u: a %s%s %u", path, path_only ? "O_PATH" : "O_RDWR", p.e.path ? "O_PATH " : "",
                 kind_names[p.e.kind], p.e.obj, path_ ? "O_PATH " : "", kind_names[kind], obj);
            close((int)r);
        } else if (!kept) {
            /* The number changed meaning while it was opened: what the
             * open reached may be another thread's private object, made
             * at the number after this thread's use of it ended (a real
             * end of a private pipe, kept in the table, would let other
             * threads read its bytes). Not kept. */
            close((int)r);
        } else if (kind == K_NONE) {
            if (strict)                                 /* (a number that changed: maybe another's fdinfo file) */
                fail("open %s: none of ours", path);
            close((int)r);
        } else {
            if (strict && p.e.obj) {
                obj = p.e.obj;
                if (path_only)
                    end = p.e.end;
            }
            if (!path_only && kind == K_PIPE)
                end = 2;
            install((int)r, kind, obj, end, cloexec, path_, 0);
        }
    } else if (way != 4 && same(&p) &&
               (path_only ? !resource_err(err) : !(IN(err, ENXIO, ENOENT) && p.e.kind != K_PIPE && p.e.kind != K_NULL) &&
                                                 !resource_err(err))) {
        fail("open %s (%s) of a %s%s: %s", path, path_only ? "O_PATH" : "O_RDWR", p.e.path ? "O_PATH " : "",
             kind_names[p.e.kind], errname(err));
    } else if (way == 4 && !IN(err, ENOENT, EACCES, EPERM, ENXIO, ESRCH) && !resource_err(err)) {
        fail("open %s: %s", path, errname(err));
    }
    created();
}

/* ---------------------------------------------------------------- signals, processes */

static void op_signal(struct ctx *c)
{
    int way = (int)below(c, 5), sig = chance(c, 2) ? SIGUSR1 : SIGUSR2;
    if (way == 0) {                                     /* the whole process */
        ADD(sig_sent[sig_index(sig)], 1);
        long r = kill(my_pid, sig);
        tally(r, errno);
        if (r != 0)
            fail("kill(self, %d): %s", sig, errname(errno));
    } else if (way == 1 && !is_child) {                 /* a sibling fuzzing thread */
        struct ctx *t = &ctxs[below(c, (unsigned)nthreads)];
        long tid = t->tid;
        if (!tid || !t->alive)
            return;
        long r = send_thread(tid, sig);
        int err = errno;
        tally(r, err);
        if (r != 0 && !(err == ESRCH && (t->exiting || t->tid != tid)))
            fail("tgkill(%ld, %d): %s", tid, sig, errname(err));
    } else if (way == 2) {                              /* SIGUSR1 blocked or not in this thread */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        long r = pthread_sigmask(chance(c, 2) ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
        tally(r ? -1 : 0, (int)r);
    } else if (way == 3 && !is_child) {                 /* a victim child */
        lock();
        int i = (int)below(c, NCHILD);
        int ok = children[i].state == 1;
        if (ok)
            children[i].state = 2;
        pid_t pid = children[i].pid;
        unlock();
        if (!ok)
            return;
        sig = chance(c, 3) ? SIGKILL : sig;
        children[i].sigs |= 1u << sig;
        long r = kill(pid, sig);
        int err = errno;
        tally(r, err);
        if (r != 0)
            fail("kill(child %d, %d): %s", pid, sig, errname(err));
        lock();
        children[i].state = 1;
        unlock();
    } else {                                            /* this thread */
        long r = send_thread(gettid_(), sig);
        tally(r, errno);
        if (r != 0)
            fail("tgkill(self, %d): %s", sig, errname(errno));
    }
}

/* SIGUSR1's handler with SA_RESTART or without. */
static void op_sigaction(struct ctx *c)
{
    handle(SIGUSR1, chance(c, 2));
    tally(0, 0);
}

/* Is a victim's wait status one it may have? */
static void check_status(pid_t pid, int st, uint32_t sigs)
{
    if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        if (code == EXEC_BAD)
            fail("child %d: after exec its descriptors were not as they should be", pid);
        else if (code != 7 && code != 8 && code != EXEC_OK && code != 11)
            fail("child %d exited with %d", pid, code);
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        if (sig != SIGALRM && !(sig < 32 && (sigs & (1u << sig))))
            fail("child %d died of signal %d (sent: 0x%x)", pid, sig, sigs);
    } else {
        fail("child %d: wait status 0x%x", pid, st);
    }
}

/* Wait for a victim: WNOHANG, or kill it first and wait for it. */
static void op_wait(struct ctx *c)
{
    lock();
    int i = (int)below(c, NCHILD);
    int ok = children[i].state == 1;
    if (ok)
        children[i].state = 2;
    struct child ch = children[i];
    unlock();
    if (!ok)
        return;
    int hang = chance(c, 3), st = 0;
    if (hang) {
        children[i].sigs |= 1u << SIGKILL;
        ch.sigs |= 1u << SIGKILL;
        if (kill(ch.pid, SIGKILL) != 0)
            fail("kill(child %d, SIGKILL): %s", ch.pid, errname(errno));
    }
    long r;
    do {
        blocking(hang);
        r = waitpid(ch.pid, &st, hang ? 0 : WNOHANG);
        blocking(0);
    } while (hang && r < 0 && errno == EINTR);
    int err = errno;
    tally(r, err);
    if (r == ch.pid)
        check_status(ch.pid, st, ch.sigs);
    else if (r != 0 || hang)
        fail("waitpid(%d, %s): %ld %s", ch.pid, hang ? "0" : "WNOHANG", r, r < 0 ? errname(err) : "");
    lock();
    children[i].state = r == ch.pid || (r < 0 && err == ECHILD) ? 0 : 1;
    unlock();
}

static void child_main(struct ctx *c);

/* Fork a victim (table locked across, so the child's copy is whole). */
static void op_fork(struct ctx *c)
{
    lock();
    int slot = -1;
    for (int i = 0; i < NCHILD; i++)
        if (!children[i].state)
            slot = i;
    if (slot < 0) {
        unlock();
        return op_wait(c);
    }
    long r = fork();
    int err = errno;
    if (r == 0)
        child_main(c);                                  /* never returns */
    if (r > 0)
        children[slot] = (struct child){ (pid_t)r, 1, 0 };
    unlock();
    tally(r, err);
    if (r > 0)
        ADD(sh->forks, 1);
    if (r < 0 && !IN(err, EAGAIN, ENOMEM))
        fail("fork: %s", errname(err));
}

/* sched_yield or a short sleep. */
static void op_yield(struct ctx *c)
{
    if (!chance(c, 8))
        sched_yield();
    else
        sleep_us(below(c, 300));
    tally(0, 0);
}

/* ---------------------------------------------------------------- blocked calls */

enum { H_READ, H_WRITE, H_RECV, H_SEND, H_EPWAIT, H_EXIT };

/* A helper thread of a fuzzing thread, made once: it waits for a call to
 * make (go), makes it (blocking, mostly), and waits again. Only SIGRTMIN
 * reaches it (sent by helper_wait), so that an EINTR it gets happened
 * after what the fuzzing thread did meanwhile. */
struct helper {
    pthread_t th;
    volatile long tid;
    volatile int go, entered, finished, lost;
    int what, fd;
    uint8_t *buf;
    size_t len;
    long r;
    int err;
    struct epoll_event ev[4];
};

static struct helper helpers[MAXTHREADS];

/* The calling fuzzing thread's helper. */
static struct helper *helper_of(struct ctx *c) { return &helpers[c->slot]; }

/* The helper's loop: wait for go, make the call, say it finished. */
static void *helper_main(void *arg)
{
    struct helper *h = arg;
    sigset_t set;
    sigfillset(&set);
    sigdelset(&set, SIGRTMIN);
    pthread_sigmask(SIG_SETMASK, &set, NULL);
    h->tid = gettid_();
    for (;;) {
        while (!__atomic_load_n(&h->go, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &h->go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        __atomic_store_n(&h->entered, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &h->entered, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        switch (h->what) {
        case H_READ:
            h->r = read(h->fd, h->buf, h->len);
            break;
        case H_WRITE:
            h->r = write(h->fd, h->buf, h->len);
            break;
        case H_RECV:
            h->r = recv(h->fd, h->buf, h->len, 0);
            break;
        case H_SEND:
            h->r = send(h->fd, h->buf, h->len, MSG_NOSIGNAL);
            break;
        case H_EPWAIT:
            h->r = epoll_wait(h->fd, h->ev, 4, -1);
            break;
        case H_EXIT:
            syscall(SYS_exit_group, 8);
            break;
        }
        h->err = errno;
        __atomic_store_n(&h->go, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&h->finished, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &h->finished, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return NULL;
}

/* Have the helper start a call; 0 when there is none (no thread could be
 * made: a limit, or one was lost, stuck in a call). */
static int helper_start(struct helper *h, int what, int fd, uint8_t *buf, size_t len)
{
    if (h->lost)
        return 0;
    if (!h->tid) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        h->go = 0;
        int e = pthread_create(&h->th, &attr, helper_main, h);
        pthread_attr_destroy(&attr);
        if (e) {
            if (e != EAGAIN && e != ENOMEM)
                fail("pthread_create: %s", errname(e));
            return 0;
        }
        while (!h->tid)
            sched_yield();
    }
    h->what = what;
    h->fd = fd;
    h->buf = buf;
    h->len = len;
    h->r = 0;
    h->err = 0;
    h->entered = h->finished = 0;
    __atomic_store_n(&h->go, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &h->go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    while (!__atomic_load_n(&h->entered, __ATOMIC_ACQUIRE))
        syscall(SYS_futex, &h->entered, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return 1;
}

/* Interrupt the helper's call. */
static void helper_kick(struct helper *h) { syscall(SYS_tgkill, my_pid, h->tid, SIGRTMIN); }

/* Wait for the helper's call to end: after quiet_ms, SIGRTMIN it every
 * millisecond; a helper still in its call after 5 s is a failure (and is
 * given up). */
static int helper_wait(struct helper *h, int quiet_ms, const char *what)
{
    int64_t t0 = now_ms();
    while (!__atomic_load_n(&h->finished, __ATOMIC_ACQUIRE)) {
        int64_t t = now_ms() - t0;
        if (t > 5000) {
            fail("%s: a thread blocked in it is not woken by signals (%d ms)", what, (int)t);
            h->lost = 1;
            return 0;
        }
        if (t >= quiet_ms)
            helper_kick(h);
        long ms = t >= quiet_ms ? 1 : quiet_ms - t;
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
        syscall(SYS_futex, &h->finished, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
    ADD(sh->blocked_results[h->r > 0 ? 0 : h->r == 0 ? 1 : h->err == EINTR ? 2 : 3], 1);
    return 1;
}

/* Replace private descriptor fd (dup2 of src onto it) or close it. */
static void replace_or_close(int fd, int src, const char *what)
{
    struct pick t = { fd, tab[fd] };
    if (!begin_close(&t))
        return;
    if (src < 0) {
        if (close(fd) != 0)
            fail("%s: close(%d): %s", what, fd, errname(errno));
        end_close(fd);
        return;
    }
    struct ent s = tab[src];
    creating();
    long r = dup2(src, fd);
    if (r == fd)
        install(fd, s.kind, s.obj, s.end, 0, s.path, 1);
    created();
    if (r != fd) {
        fail("%s: dup2(%d, %d): %s", what, src, fd, errname(errno));
        close(fd);
        end_close(fd);
    }
}

/* Read everything from private fd until end of file (deadline 5 s):
 * the bytes must all be tag t. Returns the count, -1 on a failure. */
static long drain(int fd, uint8_t t, uint8_t *buf, size_t size, const char *what)
{
    long total = 0;
    int64_t t0 = now_ms();
    for (;;) {
        memset(buf, 0, size);                   /* (a count without its bytes shows as zeros) */
        blocking(1);
        long r = read(fd, buf, size);
        blocking(0);
        if (r == 0)
            return total;
        if (r < 0) {
            if (errno != EINTR && errno != EAGAIN) {
                fail("%s: draining %d: %s", what, fd, errname(errno));
                return -1;
            }
            if (now_ms() - t0 > 5000) {
                fail("%s: no end of file on %d after 5 s (%ld bytes read)", what, fd, total);
                return -1;
            }
            if (errno == EAGAIN)
                yields(4);
            continue;
        }
        for (long i = 0; i < r; i++)
            if (buf[i] != t) {
                fail("%s: byte %ld read from %d (a read of %ld) is 0x%02x, not 0x%02x", what, total + i, fd, r, buf[i],
                     t);
                return -1;
            }
        total += r;
    }
}

/* FIONREAD of fd (-1 on an error). */
static long fionread(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) < 0 ? -1 : n;
}

/* Close (src < 0, only while no other thread can get the number: 0 if
 * that cannot be had now) or replace the private descriptor a helper is
 * blocked in. */
static int pull_out(int fd, int src, int *excl, const char *what)
{
    *excl = src < 0 && excluding();
    if (src < 0 && !*excl)
        return 0;
    replace_or_close(fd, src, what);
    return 1;
}

/* A private pipe and a thread blocked reading it; the descriptor closed
 * (no one else may get the number meanwhile) or replaced by another
 * pipe's read end that has data already; then data written. If the
 * thread was in its read, it holds a reader: the write succeeds and it
 * gets that data (or EINTR); if not, it finds the other pipe's data (or
 * EBADF), and the write may fail with EPIPE. */
static void blk_pipe_read(struct ctx *c)
{
    int p[2], q[2], dup = chance(c, 2), excl = 0;
    uint32_t pid_ = make_pipe(p, 0), qid = pid_ ? make_pipe(q, 0) : 0;
    struct helper *h = helper_of(c);
    if (qid && helper_start(h, H_READ, p[0], (uint8_t *)c->buf, 1 + below(c, 4096))) {
        size_t k = 1 + below(c, 200);
        uint8_t *w = (uint8_t *)c->buf2;
        memset(w, tagb(qid, 0), k);
        writing(qid, 0, k);
        written(qid, 0, k, write(q[1], w, k));
        yields(below(c, 3));
        if (dup || !pull_out(p[0], -1, &excl, "pipe read blocked")) {
            dup = 1;
            pull_out(p[0], q[0], &excl, "pipe read blocked");
        }
        memset(w, tagb(pid_, 0), k);
        writing(pid_, 0, k);
        long wr = write(p[1], w, k);
        int werr = errno;
        written(pid_, 0, k, wr);
        if (helper_wait(h, 3, "pipe read")) {
            struct cand cd[2] = { { pid_, K_PIPE, 0 }, { qid, K_PIPE, 0 } };
            long ml;
            int from_p = h->r > 0 && fits(h->buf, h->r, (long)h->len, &cd[0], &ml);
            int from_q = h->r > 0 && dup && !from_p && fits(h->buf, h->r, (long)h->len, &cd[1], &ml);
            const char *how = dup ? "replaced" : "closed";
            if (h->r > (long)h->len || (h->r > 0 && !from_p && !from_q))
                fail("pipe read blocked, its descriptor %s: %ld bytes of %zu, not what was written", how, h->r, h->len);
            else if (h->r == 0)
                fail("pipe read blocked, its descriptor %s: end of file with a writer held", how);
            else if (h->r < 0 && h->err != EINTR && !(h->err == EBADF && !dup))
                fail("pipe read blocked, its descriptor %s: %s", how, errname(h->err));
            else if (wr < 0 && !(werr == EPIPE && (from_q || (h->r < 0 && h->err == EBADF))))
                fail("pipe read blocked, its descriptor %s: a write then failed with %s, the reader got %ld %s", how,
                     errname(werr), h->r, h->r < 0 ? errname(h->err) : from_p ? "bytes of it" : "bytes of the other");
        }
        if (excl)
            excluded();
    }
    close_pairs(pid_, p, qid, q);
}

/* A thread blocked writing more than a private pipe holds; its descriptor
 * closed, replaced, or the thread interrupted; everything read until end
 * of file must be exactly what the write says it wrote. */
static void blk_pipe_write(struct ctx *c)
{
    int p[2], q[2], way = (int)below(c, 3);
    uint32_t pid_ = make_pipe(p, 0), qid = pid_ ? make_pipe(q, 0) : 0;
    long size = pid_ && chance(c, 8) ? 65536 : pid_ ? fcntl(p[1], F_SETPIPE_SZ, 4096) : 0;
    if (pid_ && (size < 4096 || size > 65536 || fcntl(p[0], F_GETPIPE_SZ) != size)) {
        fail("F_SETPIPE_SZ 4096: %ld %s, then F_GETPIPE_SZ %d", size, size < 0 ? errname(errno) : "",
             fcntl(p[0], F_GETPIPE_SZ));
        size = 65536;
    }
    size_t len = (size_t)size + 1 + below(c, 3 * (unsigned)size);
    uint8_t *big = qid ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    struct helper *h = helper_of(c);
    if (big != MAP_FAILED) {
        memset(big, tagb(pid_, 0), len);
        writing(pid_, 0, len);
        if (helper_start(h, H_WRITE, p[1], big, len)) {
            int64_t t0 = now_ms();
            while (fionread(p[0]) <= 0 && !h->finished && now_ms() - t0 < 2000)
                yields(2);
            if (fionread(p[0]) <= 0 && !h->finished)
                fail("pipe write blocked: FIONREAD %ld after 2 s", fionread(p[0]));
            else if (way == 2)
                helper_kick(h);
            else
                replace_or_close(p[1], way ? q[1] : -1, "pipe write blocked");
            long total = 0, r;
            uint8_t *b = (uint8_t *)c->buf;
            blocking(1);
            int64_t t1 = now_ms();
            while (!h->finished) {                       /* read as it comes, so it can finish */
                if (now_ms() - t1 > 5000) {
                    fail("pipe write of %zu blocked, its descriptor %s: not finished 5 s after its pipe was read "
                         "(%ld bytes)", len, way == 0 ? "closed" : way == 1 ? "replaced" : "kept (signalled)", total);
                    break;
                }
                memset(b, 0, sizeof(c->buf));           /* (a count without its bytes shows as zeros) */
                r = read(p[0], b, sizeof(c->buf));
                if (r > 0)
                    total += r;
                for (long i = 0; i < r; i++)
                    if (b[i] != tagb(pid_, 0)) {
                        fail("pipe write blocked: read %ld of %zu bytes (%ld so far), byte %ld is 0x%02x", r,
                             sizeof(c->buf), total, i, b[i]);
                        break;
                    }
            }
            blocking(0);
            int ok = helper_wait(h, 1000, "pipe write");
            written(pid_, 0, len, ok ? h->r : (long)len);
            if (way == 2)
                close_private(p[1]);
            long rest = ok ? drain(p[0], tagb(pid_, 0), b, sizeof(c->buf), "pipe write blocked") : -1;
            if (rest >= 0) {
                total += rest;
                if (h->r > (long)len || (h->r >= 0 ? total != h->r : total != 0) ||
                    (h->r < 0 && h->err != EINTR))
                    fail("pipe write of %zu blocked, its descriptor %s: it says %ld %s, %ld bytes came out", len,
                         way == 0 ? "closed" : way == 1 ? "replaced" : "kept (signalled)", h->r,
                         h->r < 0 ? errname(h->err) : "", total);
            }
        } else {
            written(pid_, 0, len, 0);
        }
        munmap(big, len);
    }
    close_pairs(pid_, p, qid, q);
}

/* A thread blocked in recv on a private socket; closed or replaced (by a
 * socket with a message waiting) under it; then a message from the peer:
 * as with blk_pipe_read, the peer's send may fail only if the thread was
 * not in its recv yet. */
static void blk_sock_recv(struct ctx *c)
{
    int kind = K_STREAM + (int)below(c, 3), s[2], q[2], dup = chance(c, 2), excl = 0;
    uint32_t sid = make_socketpair(kind, s, 0), qid = sid ? make_socketpair(kind, q, 0) : 0;
    struct helper *h = helper_of(c);
    if (qid && helper_start(h, H_RECV, s[0], (uint8_t *)c->buf, 100 + below(c, 2000))) {
        uint8_t *w = (uint8_t *)c->buf2;
        size_t n = build(w, 1 + below(c, 300), kind, qid, 0, NULL, 0);
        writing(qid, 0, n);
        written(qid, 0, n, send(q[1], w, n, MSG_NOSIGNAL | MSG_DONTWAIT));
        yields(below(c, 3));
        if (dup || !pull_out(s[0], -1, &excl, "recv blocked")) {
            dup = 1;
            pull_out(s[0], q[0], &excl, "recv blocked");
        }
        n = build(w, 1 + below(c, 300), kind, sid, 0, NULL, 0);
        writing(sid, 0, n);
        long wr = send(s[1], w, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        int werr = errno;
        written(sid, 0, n, wr);
        if (helper_wait(h, 3, "recv")) {
            struct cand cd[2] = { { sid, (uint8_t)kind, 0 }, { qid, (uint8_t)kind, 0 } };
            long ml;
            int from_s = h->r > 0 && fits(h->buf, h->r, (long)h->len, &cd[0], &ml);
            int from_q = h->r > 0 && dup && !from_s && fits(h->buf, h->r, (long)h->len, &cd[1], &ml);
            const char *how = dup ? "replaced" : "closed";
            if (h->r > (long)h->len || (h->r > 0 && !from_s && !from_q))
                fail("recv blocked on a %s, its descriptor %s: %ld bytes, not what was sent", kind_names[kind], how, h->r);
            else if (h->r == 0)
                fail("recv blocked on a %s, its descriptor %s: end of file with the peer held", kind_names[kind], how);
            else if (h->r < 0 && h->err != EINTR && !(h->err == EBADF && !dup))
                fail("recv blocked on a %s, its descriptor %s: %s", kind_names[kind], how, errname(h->err));
            else if (wr < 0 && !(IN(werr, EPIPE, ECONNREFUSED, ECONNRESET, ENOTCONN) &&
                                 (from_q || (h->r < 0 && h->err == EBADF))))
                fail("recv blocked on a %s, its descriptor %s: the peer's send then failed with %s, the reader got %ld %s",
                     kind_names[kind], how, errname(werr), h->r, h->r < 0 ? errname(h->err) : from_s ? "bytes of it" :
                     "bytes of the other");
        }
        if (excl)
            excluded();
    }
    close_pairs(sid, s, qid, q);
}

/* A thread blocked in send on a full private datagram socket; its
 * descriptor replaced or the thread interrupted; the peer then receives
 * every message: exactly those that were sent. */
static void blk_dgram_send(struct ctx *c)
{
    int s[2], q[2], dup = chance(c, 2);
    uint32_t sid = make_socketpair(K_DGRAM, s, 0), qid = sid ? make_socketpair(K_DGRAM, q, 0) : 0;
    size_t len = 1000 + below(c, 3000);
    int sndbuf = 8192;
    if (qid && setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) != 0)
        fail("SO_SNDBUF of a datagram socket: %s", errname(errno));
    uint8_t *m = qid ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    struct helper *h = helper_of(c);
    if (m != MAP_FAILED) {
        int sent = 0;
        for (; sent < 200; sent++) {
            size_t n = build(m, len, K_DGRAM, sid, 1, NULL, 0);
            writing(sid, 1, n);
            long r = send(s[0], m, n, MSG_DONTWAIT | MSG_NOSIGNAL);
            written(sid, 1, n, r);
            if (r < 0) {
                if (errno != EAGAIN && errno != ENOBUFS)
                    fail("send to fill a datagram socket: %s", errname(errno));
                break;
            }
        }
        size_t n = build(m, len, K_DGRAM, sid, 1, NULL, 0);
        writing(sid, 1, n);
        if (sent < 200 && helper_start(h, H_SEND, s[0], m, n)) {
            yields(2 + below(c, 8));
            if (dup)
                replace_or_close(s[0], q[0], "send blocked");
            else
                helper_kick(h);
            int got = 0, got_s = 0, got_q = 0, late = 0, errs = 0, lasterr = 0;
            uint8_t *b = (uint8_t *)c->buf, *b2 = (uint8_t *)c->buf2;
            struct cand cd[1] = { { sid, K_DGRAM, 1 } };
            long ml;
            int64_t t0 = now_ms();
            for (;;) {
                long r = recv(s[1], b, sizeof(c->buf), MSG_DONTWAIT);
                if (r < 0 && errno != EAGAIN)
                    errs++, lasterr = errno;
                long r2 = recv(q[1], b2, sizeof(c->buf2), MSG_DONTWAIT);
                if (r > 0 && !fits(b, r, sizeof(c->buf), &cd[0], &ml))
                    fail("send blocked: a message of %ld bytes not as sent", r);
                if (r2 > 0 && !fits(b2, r2, sizeof(c->buf2), &cd[0], &ml))
                    fail("send blocked: a message of %ld bytes in the replacement not as sent", r2);
                got += (r > 0) + (r2 > 0);
                got_s += r > 0;
                got_q += r2 > 0;
                if (r <= 0 && r2 <= 0 && h->finished)
                    break;
                if (r <= 0 && r2 <= 0)
                    yields(2);
                if (now_ms() - t0 > 5000)
                    break;
            }
            if (helper_wait(h, 3, "send")) {
                written(sid, 1, n, h->r);
                while (recv(s[1], b, sizeof(c->buf), MSG_DONTWAIT) > 0 || recv(q[1], b, 4096, MSG_DONTWAIT) > 0)
                    got++, late++;
                int want = sent + (h->r > 0);
                if ((h->r >= 0 && h->r != (long)n) || (h->r < 0 && h->err != EINTR) || got != want)
                    fail("send of %zu blocked (%s): it says %ld %s; %d of %d messages came (%d %d %d, %d errors, %s)",
                         n, dup ? "descriptor replaced" : "signalled", h->r, h->r < 0 ? errname(h->err) : "", got, want,
                         got_s, got_q, late, errs, errname(lasterr));
            }
        } else {
            written(sid, 1, n, 0);
        }
        munmap(m, len);
    }
    close_pairs(sid, s, qid, q);
}

/* A thread blocked in epoll_wait on a private epoll watching a private
 * pipe; the epoll's descriptor closed or replaced, or the pipe's closed;
 * then the pipe written. */
static void blk_epoll(struct ctx *c)
{
    int p[2], q[2], way = (int)below(c, 4), nested = chance(c, 3);
    uint32_t eid, e2id = 0;
    uint32_t pid_ = make_pipe(p, 0), qid = pid_ ? make_pipe(q, 0) : 0;
    int ep = qid ? make_single(K_EPOLL, 0, &eid) : -1;
    int ep2 = ep >= 0 && nested ? make_single(K_EPOLL, 0, &e2id) : -1;
    uint64_t data = EPDATA | (uint64_t)pid_ << 8;
    struct helper *h = helper_of(c);
    if (ep >= 0 && (!nested || ep2 >= 0)) {
        struct epoll_event ev = { EPOLLIN, { .u64 = data } };
        long r = epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
        if (r == 0 && nested) {
            ev.data.u64 = data = EPDATA | (uint64_t)eid << 8;
            r = epoll_ctl(ep2, EPOLL_CTL_ADD, ep, &ev);
        }
        if (r != 0)
            fail("epoll_ctl ADD (private%s): %s", nested ? ", nested" : "", errname(errno));
        else if (helper_start(h, H_EPWAIT, nested ? ep2 : ep, NULL, 0)) {
            yields(below(c, 3));
            int waited = nested ? ep2 : ep, excl = 0;
            if (way == 0 && !pull_out(waited, -1, &excl, "epoll_wait blocked"))
                way = 1;
            if (way == 1)
                replace_or_close(waited, q[0], "epoll_wait blocked");
            else if (way == 2)
                replace_or_close(p[0], -1, "epoll_wait blocked");
            uint8_t t = tagb(pid_, 0);
            writing(pid_, 0, 1);
            long wr = write(p[1], &t, 1);
            written(pid_, 0, 1, wr);
            if (helper_wait(h, 4, "epoll_wait")) {
                int ok = h->r == 1 ? h->ev[0].data.u64 == data && (h->ev[0].events & EPOLLIN) :
                         h->r < 0 ? h->err == EINTR || (h->err == EBADF && way == 0) || (h->err == EINVAL && way == 1) : 0;
                if (h->r == 1 && way == 2)
                    ok = 1;
                if (!ok)
                    fail("epoll_wait blocked%s, %s: %ld %s (data 0x%llx)", nested ? " (nested)" : "",
                         way == 0 ? "its descriptor closed" : way == 1 ? "its descriptor replaced" :
                         way == 2 ? "the watched pipe closed" : "nothing done", h->r, h->r < 0 ? errname(h->err) : "",
                         h->r > 0 ? (unsigned long long)h->ev[0].data.u64 : 0ull);
            }
            if (excl)
                excluded();
        }
    }
    close_private(ep2);
    close_private(ep);
    close_pairs(pid_, p, qid, q);
}

/* A thread blocked reading a private eventfd; closed or replaced under it;
 * a count written through a copy: it (or a later read) gets exactly that. */
static void blk_eventfd(struct ctx *c)
{
    uint32_t eid, qid;
    int e = make_single(K_EVENT, 0, &eid), q = e >= 0 ? make_single(K_EVENT, EFD_NONBLOCK, &qid) : -1;
    int copy = -1, dup = chance(c, 2);
    if (q >= 0) {
        creating();
        copy = fcntl(e, F_DUPFD_CLOEXEC, 3);
        if (copy >= 0 && install(copy, K_EVENT, eid, 0, 1, 0, 1) <= 0)
            copy = -1;
        created();
    }
    struct helper *h = helper_of(c);
    uint64_t v = 1 + below(c, 1000), got = 0;
    int excl = 0;
    if (copy >= 0 && helper_start(h, H_READ, e, (uint8_t *)&got, 8)) {
        yields(below(c, 3));
        if (dup || !pull_out(e, -1, &excl, "eventfd read blocked")) {
            dup = 1;
            replace_or_close(e, q, "eventfd read blocked");
        }
        writing(eid, 0, v);
        long wr = write(copy, &v, 8);
        written(eid, 0, v, wr == 8 ? (long)v : 0);
        if (wr != 8)
            fail("write to an eventfd: %ld %s", wr, errname(errno));
        if (helper_wait(h, 3, "eventfd read")) {
            uint64_t later = 0;
            fcntl(copy, F_SETFL, O_NONBLOCK);
            long lr = read(copy, &later, 8);
            int lerr = errno;
            if (h->r == 8 && got == v && lr < 0 && lerr == EAGAIN)
                ;
            else if (h->r < 0 && (h->err == EINTR || (h->err == EBADF && !dup) || (h->err == EAGAIN && dup)) && lr == 8 &&
                     later == v)
                ;
            else
                fail("eventfd read blocked, its descriptor %s, %llu written: it got %ld %s (%llu), then %ld (%llu)",
                     dup ? "replaced" : "closed", (unsigned long long)v, h->r, h->r < 0 ? errname(h->err) : "",
                     (unsigned long long)got, lr, (unsigned long long)later);
        }
        if (excl)
            excluded();
    }
    close_private(copy);
    close_private(q);
    close_private(e);
}

/* Write a little toward the end `target` reads, through another of our
 * descriptors of that object (pinned), if this process holds one. */
static void poke(struct ctx *c, const struct ent *target)
{
    struct pick w = { -1, { 0 } };
    if (!target->obj)
        return;
    lock();
    for (int fd = 0; fd < MAXFD; fd++) {
        const struct ent *e = &tab[fd];
        if (e->state == S_LIVE && e->obj == target->obj && !e->path && !e->pins &&
            (target->kind == K_PIPE ? is_writer(e) : is_sock(target->kind) ? e->end != target->end : 1))
            w = (struct pick){ fd, *e };
    }
    unlock();
    if (w.fd < 0 || !pin(&w))
        return;
    uint8_t b[64];
    int dir = data_dir(target->kind, target->end);
    size_t n = target->kind == K_EVENT ? 8 : build(b, 1 + below(c, 40), target->kind, target->obj, dir, NULL, 0);
    uint64_t v = 1, asked = target->kind == K_EVENT ? v : n;
    if (target->kind == K_EVENT)
        memcpy(b, &v, 8);
    writing(target->obj, dir, asked);
    blocking(1);
    long r = is_sock(target->kind) ? send(w.fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) : write(w.fd, b, n);
    blocking(0);
    written(target->obj, dir, asked, target->kind == K_EVENT ? (r == 8 ? 1 : 0) : r);
    unpin(w.fd);
}

/* A thread blocked on one of the table's descriptors (read, recv, an
 * eventfd, epoll_wait) that this thread then closes, replaces with another
 * of ours, writes to, or leaves; data may come from anyone. */
static void op_block_shared(struct ctx *c)
{
    struct pick p, src;
    if (pick_use(c, f_open, &p) < 0)
        return;
    int what = p.e.kind == K_EPOLL ? H_EPWAIT : is_sock(p.e.kind) ? H_RECV : H_READ;
    size_t len = p.e.kind == K_EVENT ? 8 : 1 + below(c, 4096);
    struct helper *h = helper_of(c);
    tally(0, 0);
    if (!helper_start(h, what, p.fd, (uint8_t *)c->buf2, len)) {
        unuse(p.fd);
        return;
    }
    yields(below(c, 3));
    int way = (int)below(c, 4);
    if (way == 0 && begin_close(&p)) {
        if (close(p.fd) != 0)
            fail("close(%d) of a %s a thread is blocked in: %s", p.fd, kind_names[p.e.kind], errname(errno));
        end_close(p.fd);
    } else if (way == 1 && pick(c, f_any, &src) >= 0 && src.fd != p.fd && pin(&src)) {
        if (begin_close(&p)) {
            creating();
            long r = dup2(src.fd, p.fd);
            if (r == p.fd)
                got_dup(&src, p.fd, 0, "dup2");
            created();
            if (r != p.fd) {
                fail("dup2(%d, %d) over a %s a thread is blocked in: %s", src.fd, p.fd, kind_names[p.e.kind],
                     errname(errno));
                close(p.fd);
                end_close(p.fd);
            }
        }
        unpin(src.fd);
    } else if (way == 2) {
        poke(c, &p.e);
    }
    int done = helper_wait(h, 3, "a call on a shared descriptor");
    if (done)
        unuse(p.fd);                                    /* (a lost helper keeps its number used) */
    if (!done)
        return;
    const char *name = what == H_EPWAIT ? "epoll_wait" : what == H_RECV ? "recv" : "read";
    if (what == H_EPWAIT) {
        if (h->r >= 0)
            check_events(p.fd, h->ev, h->r, 4, "blocked epoll_wait");
        if (h->r == 0 || (h->r < 0 && same(&p) && h->err != EINTR))
            fail("blocked epoll_wait(%d, -1): %ld %s", p.fd, h->r, h->r < 0 ? errname(h->err) : "");
        return;
    }
    check_count(&p, name, h->r, h->err, (long)len, 0, 1);
    if (h->r > 0 && h->r <= (long)len && p.e.kind != K_EVENT && p.e.kind != K_NULL)
        check_read(&p, h->buf, h->r, (long)len, 0, name);
}

/* ---------------------------------------------------------------- graphs in flight */

/* A private descriptor of op_scm_graph, with the gen it was made with. */
struct item {
    int fd;
    uint32_t gen;
};

/* Is item it still the private descriptor it was? */
static int mine(const struct item *it)
{
    return tab[it->fd].state == S_PRIV && tab[it->fd].gen == it->gen;
}

/* Add private descriptor fd to the items. */
static void add_item(struct item *items, int *n, int fd)
{
    if (*n < 40)
        items[(*n)++] = (struct item){ fd, tab[fd].gen };
}

/* Private socketpairs and pipes passed over each other (themselves too,
 * in cycles), with a few of the table's descriptors (pinned), some
 * received back, most closed: what is left must still name what it did. */
static void op_scm_graph(struct ctx *c)
{
    struct item it[40];
    int n = 0, socks = 0;
    struct pick shared[2];
    int nshared = 0;
    tally(0, 0);
    for (int i = 0, pairs = 2 + (int)below(c, 2); i < pairs; i++) {
        int sv[2];
        if (make_socketpair(chance(c, 2) ? K_STREAM : K_DGRAM + (int)below(c, 2), sv, 0)) {
            add_item(it, &n, sv[0]);
            add_item(it, &n, sv[1]);
        }
    }
    socks = n;
    for (int i = 0, pipes = (int)below(c, 3); i < pipes; i++) {
        int p[2];
        if (make_pipe(p, 0)) {
            add_item(it, &n, p[0]);
            add_item(it, &n, p[1]);
        }
    }
    for (int i = 0, k = (int)below(c, 3); i < k; i++)
        if (pick(c, f_any, &shared[nshared]) >= 0 && pin(&shared[nshared]))
            nshared++;
    for (int step = 0, steps = 2 + (int)below(c, 7); step < steps && socks; step++) {
        const struct item *si = &it[below(c, (unsigned)socks)];
        if (!mine(si))
            continue;
        struct pick sock = { si->fd, tab[si->fd] }, load[MAXSEND];
        int k = 1 + (int)below(c, 3), m = 0;
        for (int i = 0; i < k; i++) {
            if (nshared && chance(c, 4)) {
                load[m++] = shared[below(c, (unsigned)nshared)];
                continue;
            }
            const struct item *f = chance(c, 4) ? si : &it[below(c, (unsigned)n)];
            if (mine(f))
                load[m++] = (struct pick){ f->fd, tab[f->fd] };
        }
        if (m) {
            int err;
            send_rights(c, &sock, load, m, MSG_DONTWAIT, &err);
        }
        if (chance(c, 3)) {                             /* close one */
            const struct item *f = &it[below(c, (unsigned)n)];
            if (mine(f))
                close_private(f->fd);
        }
        const struct item *ri = &it[below(c, (unsigned)socks)];
        if (chance(c, 4) && mine(ri)) {                 /* take a message back */
            struct pick rp = { ri->fd, tab[ri->fd] };
            uint8_t b[256];
            union { char b[CMSG_SPACE(sizeof(int) * 8)]; struct cmsghdr align; } u;
            struct iovec iov = { b, sizeof(b) };
            struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
            creating();
            long r = recvmsg(ri->fd, &mh, MSG_DONTWAIT);
            int got[MAXFD], ngot = 0;
            if (r > 0) {
                check_read(&rp, b, r, sizeof(b), 0, "recvmsg in a graph");
                take_fds(&mh, b, r, sizeof(b), &rp, 0, 1, got, &ngot);
            }
            created();
            for (int i = 0; i < ngot; i++)
                add_item(it, &n, got[i]);
        }
    }
    for (int i = 0; i < n; i++)                         /* close most */
        if (mine(&it[i]) && !chance(c, 3))
            close_private(it[i].fd);
    for (int i = 0; i < n; i++) {                       /* what is left names what it did */
        struct stat st;
        int f = it[i].fd;
        if (!mine(&it[i]))
            continue;
        const char *d = stat_differs(f, tab[f].obj, tab[f].kind, tab[f].end, &st);
        if (d)
            fail("descriptor %d (a %s %u end %d), kept through SCM_RIGHTS traffic: %s differs (mode 0%o ino %llu)", f,
                 kind_names[tab[f].kind], tab[f].obj, tab[f].end, d, (unsigned)st.st_mode, (unsigned long long)st.st_ino);
    }
    for (int i = 0; i < nshared; i++) {
        struct stat st;
        const char *d = stat_differs(shared[i].fd, shared[i].e.obj, shared[i].e.kind, shared[i].e.end, &st);
        if (d)
            fail("descriptor %d (a %s %u) passed around: %s differs", shared[i].fd, kind_names[shared[i].e.kind],
                 shared[i].e.obj, d);
        unpin(shared[i].fd);
    }
    for (int i = 0; i < n; i++) {
        if (!mine(&it[i]))
            continue;
        if (full())
            close_private(it[i].fd);
        else
            publish(it[i].fd);
    }
}

/* ---------------------------------------------------------------- the fuzzing loop */

static void run_op(struct ctx *c, int op)
{
    switch (op) {
    case OP_pipe: op_pipe(c); break;
    case OP_socketpair: op_socketpair(c); break;
    case OP_eventfd: op_eventfd(c); break;
    case OP_epoll_create: op_epoll_create(c); break;
    case OP_close: op_close(c); break;
    case OP_dup: op_dup(c); break;
    case OP_dup2: op_dup2(c); break;
    case OP_dupfd: op_dupfd(c); break;
    case OP_close_range: op_close_range(c); break;
    case OP_fcntl: op_fcntl(c); break;
    case OP_write: op_write(c); break;
    case OP_read: op_read(c); break;
    case OP_send_fds: op_send_fds(c); break;
    case OP_shutdown: op_shutdown(c); break;
    case OP_epoll_ctl: op_epoll_ctl(c); break;
    case OP_epoll_wait: op_epoll_wait(c); break;
    case OP_epoll_loop: op_epoll_loop(c); break;
    case OP_poll: op_poll(c); break;
    case OP_check: op_check(c); break;
    case OP_proc_reopen: op_proc_reopen(c); break;
    case OP_blk_pipe_read: blk_pipe_read(c); break;
    case OP_blk_pipe_write: blk_pipe_write(c); break;
    case OP_blk_recv: blk_sock_recv(c); break;
    case OP_blk_dgram_send: blk_dgram_send(c); break;
    case OP_blk_epoll: blk_epoll(c); break;
    case OP_blk_eventfd: blk_eventfd(c); break;
    case OP_block_shared: op_block_shared(c); break;
    case OP_scm_graph: op_scm_graph(c); break;
    case OP_signal: op_signal(c); break;
    case OP_sigaction: op_sigaction(c); break;
    case OP_fork: op_fork(c); break;
    case OP_wait: op_wait(c); break;
    case OP_yield: op_yield(c); break;
    }
}

/* An operation, at random by weight. */
static int choose(struct ctx *c, const unsigned *weight)
{
    unsigned sum = 0;
    for (int i = 0; i < NOPS; i++)
        sum += weight[i];
    unsigned x = below(c, sum);
    for (int i = 0; i < NOPS; i++) {
        if (x < weight[i])
            return i;
        x -= weight[i];
    }
    return OP_yield;
}

/* Choose one operation and do it, timed and counted. */
static void one_op(struct ctx *c, const unsigned *weight)
{
    int op = choose(c, weight);
    c->op = op;
    if (!is_child)
        sh->cur[worker][c->slot] = op;
    if (trace)
        say("lxfuzz: pid %d tid %ld op %s", my_pid, gettid_(), op_names[op]);
    struct timespec t0, t1;
    ADD(sh->calls[op], 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_op(c, op);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ADD(sh->us[op], (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
}

/* A fuzzing thread: its share of the operations; now and then it ends
 * itself (op thread_exit), and the worker's main thread starts another
 * that goes on with the count. */
static void *fuzz_main(void *arg)
{
    struct ctx *c = arg;
    self = c;
    c->tid = gettid_();
    c->alive = 1;
    while (c->done < c->quota) {
        if (chance(c, 3000)) {
            c->op = OP_thread_exit;
            ADD(sh->calls[OP_thread_exit], 1);
            c->exiting = 1;
            c->alive = 0;
            return NULL;
        }
        one_op(c, op_weight);
        c->done++;
        ADD(sh->ops[worker], 1);
        if (!(c->done & 255))
            check_signals();
    }
    c->alive = 0;
    return NULL;
}

/* ---------------------------------------------------------------- victims */

/* Expectations for the program exec'd in a victim: descriptor, whether
 * close-on-exec, inode and type ("FD:C:INO:TYPE"). */
static char exec_args[MAXFD][48];

/* Exec this program (mode=exit) with what it must find; or exit 11. */
static void do_exec(struct ctx *c)
{
    char *argv[MAXFD + 4];
    int n = 0;
    argv[n++] = self_path;
    argv[n++] = "mode=exit";
    for (int fd = 3; fd < MAXFD; fd++) {
        const struct ent *e = &tab[fd];
        struct obj *o = obj_of(e->obj);
        if (e->state != S_LIVE && e->state != S_PRIV)
            continue;
        int i = e->kind == K_PIPE ? 0 : e->end & 1;
        snprintf(exec_args[fd], sizeof(exec_args[fd]), "%d:%d:%llu:%u", fd, e->cloexec,
                 o ? (unsigned long long)o->ino[i] : 0ull, o ? o->mode[i] : 0u);
        argv[n++] = exec_args[fd];
    }
    argv[n] = NULL;
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    char *env[] = { NULL };
    c->op = OP_exec;
    ADD(sh->execs, 1);
    execve(argv[0], argv, env);
    int err = errno;
    ADD(sh->exec_fail, 1);
    if (!IN(err, ENOMEM, EAGAIN, E2BIG))
        fail("execve of lxfuzz: %s", errname(err));
    _exit(11);
}

/* A victim: the forking thread alone in a copy of the worker. A timer
 * interrupts whatever blocks; after some operations it exits, has a
 * thread end the process, execs this program (mode=exit; a thread may be
 * blocked in a read meanwhile), or waits to be killed. */
static void child_main(struct ctx *c)
{
    is_child = 1;
    parent_pid = my_pid;                        /* (in this order: a handler may look meanwhile) */
    my_pid = getpid();
    tab_lock = 0;
    fd_readers = fd_writer = 0;
    for (int fd = 0; fd < MAXFD; fd++) {          /* (other threads' private objects are theirs) */
        struct ent *e = &tab[fd];
        if (e->state == S_PRIV && !close(fd))
            e->state = S_FREE;
        if (e->state == S_CLOSING || e->state == S_PRIV || e->flux)
            e->state = S_UNKNOWN;
        e->pins = e->flux = 0;
    }
    /* A number the table calls free may still be open here: another
     * thread's descriptor made (a private pipe's, say) but not yet
     * recorded when the fork came. Kept, it would hold that pipe's end
     * open, and its maker would wait for an end of file that comes only
     * when this child goes. */
    for (int fd = 3; fd < MAXFD; fd++)
        if (tab[fd].state == S_FREE)
            close(fd);
    for (int fd = 3; fd < MAXFD; fd++) {          /* the forked copy names what the table says */
        struct stat st;
        const char *d;
        if (tab[fd].state == S_LIVE && tab[fd].obj && (tab[fd].kind == K_PIPE || is_sock(tab[fd].kind)) &&
            (d = stat_differs(fd, tab[fd].obj, tab[fd].kind, tab[fd].end, &st)))
            fail("after fork: descriptor %d, a %s %u end %d: %s differs (mode 0%o ino %llu)", fd,
                 kind_names[tab[fd].kind], tab[fd].obj, tab[fd].end, d, (unsigned)st.st_mode,
                 (unsigned long long)st.st_ino);
    }
    memset(children, 0, sizeof(children));
    memset(helpers, 0, sizeof(helpers));
    memset(users, 0, sizeof(users));
    for (int i = 0; i < MAXTHREADS; i++)
        ctxs[i].alive = 0;
    self = c;
    c->rng ^= (uint64_t)my_pid * 0x9e3779b97f4a7c15ull;
    handle(SIGALRM, 0);
    struct itimerval it = { { 0, 15000 }, { 0, 15000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    for (int i = 0, n = 5 + (int)below(c, 40); i < n; i++) {
        one_op(c, child_weight);
        ADD(sh->child_ops, 1);
    }
    check_signals();
    int way = (int)below(c, 5);
    struct helper *h = helper_of(c);
    struct pick p;
    if (way == 1 || way == 2) {                         /* a thread blocked in a read meanwhile */
        if (pick(c, f_readable, &p) >= 0)
            helper_start(h, H_READ, p.fd, (uint8_t *)c->buf2, 100);
        sleep_us(below(c, 2000));
    }
    if (way == 1) {
        static struct helper hx;
        c->op = OP_exit;
        hx.lost = 0;
        helper_start(&hx, H_EXIT, -1, NULL, 0);
        for (;;)
            pause();
    }
    if (way == 2)
        do_exec(c);
    if (way == 3) {
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        for (;;)
            pause();
    }
    ADD(sh->exits, 1);
    _exit(7);
}

/* mode=exit: what a victim exec'd: its descriptors must be as it said. */
static int exit_mode(int argc, char **argv)
{
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        int fd, cloexec;
        unsigned long long ino;
        unsigned type;
        if (sscanf(argv[i], "%d:%d:%llu:%u", &fd, &cloexec, &ino, &type) != 4)
            continue;
        struct stat st;
        int open_ = fstat(fd, &st) == 0;
        const char *what = cloexec ? (open_ ? "close-on-exec but open" : NULL) : !open_ ? "lost" :
                           type && ((st.st_mode & S_IFMT) != type || st.st_ino != ino) ? "another object" : NULL;
        if (what) {
            say("lxfuzz: FAIL pid %d after exec: descriptor %d (ino %llu type 0%o): %s (mode 0%o ino %llu)", (int)getpid(),
                fd, ino, type, what, open_ ? (unsigned)st.st_mode : 0u, open_ ? (unsigned long long)st.st_ino : 0ull);
            bad = 1;
        }
    }
    if (bad) {
        int f = open("/tmp/lxfuzz.failed", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (f >= 0) {
            write(f, "x", 1);
            close(f);
        }
    }
    return bad ? EXEC_BAD : EXEC_OK;
}

/* ---------------------------------------------------------------- reproducers */

/* repro=NAME (or all): each problem lxfuzz found, as a few calls, checked
 * against what Linux does: "lxfuzz: repro NAME: ok", or what differs. */
static int repro_bad;

/* Print what reproducer name found different from Linux. */
static void rbad(const char *name, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    say("lxfuzz: repro %s: %s", name, what);
    repro_bad++;
}

/* Send descriptors fds[0..n) with one byte over s. */
static long send_some(int s, const int *fds, int n)
{
    union { char b[CMSG_SPACE(sizeof(int) * 8)]; struct cmsghdr align; } u;
    memset(&u, 0, sizeof(u));
    struct iovec iov = { "abc", 3 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n) };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
    return sendmsg(s, &m, MSG_NOSIGNAL);
}

/* A socket's own end twice in flight to it, received without room for
 * descriptors: the drop frees the receiving socket under the call. */
static void repro_scm_self_drop(const char *name)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int two[2] = { sv[1], sv[1] };
    long r = send_some(sv[0], two, 2);
    char b[64];
    long got = recv(sv[1], b, sizeof(b), 0);
    if (r != 3 || got != 3)
        rbad(name, "sendmsg %ld, recv %ld %s (Linux: 3, 3)", r, got, got < 0 ? errname(errno) : "");
    close(sv[0]);
    close(sv[1]);
}

/* The purge of a queue (a1's, when it closes) that holds a socket (b1)
 * whose queue holds descriptors (x, y): y, still held here, must stay. */
static void repro_scm_purge(const char *name)
{
    int a[2], b[2], x[2], y[2], z[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, a);
    socketpair(AF_UNIX, SOCK_STREAM, 0, b);
    pipe(x);
    pipe2(y, O_NONBLOCK);
    pipe(z);
    struct stat before, after;
    fstat(y[0], &before);
    int xy[2] = { x[0], y[0] }, bz[2] = { b[1], z[0] };
    send_some(b[0], xy, 2);
    close(x[0]);
    send_some(a[0], bz, 2);
    close(b[1]);
    close(b[0]);
    close(z[0]);
    close(a[1]);
    int s = fstat(y[0], &after);
    char c = 0;
    long w = write(y[1], "y", 1);
    int werr = errno;
    long r = read(y[0], &c, 1);
    if (s || after.st_ino != before.st_ino || !S_ISFIFO(after.st_mode) || w != 1 || r != 1 || c != 'y')
        rbad(name, "y after the purge: fstat %d (ino %llu, was %llu, mode 0%o), write %ld %s, read %ld %s (Linux: 1, 1)",
             s, (unsigned long long)after.st_ino, (unsigned long long)before.st_ino, (unsigned)after.st_mode, w,
             w < 0 ? errname(werr) : "", r, r < 0 ? errname(errno) : "");
    close(a[0]);
    close(x[1]);
    close(y[0]);
    close(y[1]);
    close(z[1]);
}

struct rcall {
    int what, fd;                   /* 0 read, 1 write, 2 recv */
    char *buf;
    size_t len;
    volatile long r;
    volatile int err, done;
};

/* A thread that makes one read, write or recv. */
static void *rcall_main(void *arg)
{
    struct rcall *rc = arg;
    rc->r = rc->what == 0 ? read(rc->fd, rc->buf, rc->len) : rc->what == 1 ? write(rc->fd, rc->buf, rc->len) :
            recv(rc->fd, rc->buf, rc->len, 0);
    rc->err = errno;
    rc->done = 1;
    return NULL;
}

static void on_usr1(int sig) { (void)sig; }

/* A thread blocked in a read (recv) of a pipe (socket); its descriptor
 * closed or replaced (dup2 of /dev/null) by another thread; then a byte
 * written: Linux's read goes on and gets it. */
static void repro_blocked_read(const char *name, int sock, int dup)
{
    int p[2], null = open("/dev/null", O_RDWR);
    sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p);
    char b[8] = { 0 };
    struct rcall rc = { sock ? 2 : 0, p[0], b, sizeof(b), 0, 0, 0 };
    pthread_t t;
    pthread_create(&t, NULL, rcall_main, &rc);
    sleep_us(100000);
    if (dup)
        dup2(null, p[0]);
    else
        close(p[0]);
    long w = write(p[1], "x", 1);
    int werr = errno;
    for (int i = 0; i < 100 && !rc.done; i++)
        sleep_us(10000);
    if (!rc.done) {
        pthread_kill(t, SIGUSR1);
        for (int i = 0; i < 100 && !rc.done; i++)
            sleep_us(10000);
    }
    if (w != 1 || rc.r != 1 || b[0] != 'x')
        rbad(name, "write %ld %s, the blocked %s %ld %s (Linux: 1, 1)", w, w < 0 ? errname(werr) : "",
             sock ? "recv" : "read", rc.r, rc.r < 0 ? errname(rc.err) : "");
    if (rc.done)
        pthread_join(t, NULL);
    else
        pthread_detach(t);
    close(p[0]);
    close(p[1]);
    close(null);
}

/* A thread blocked writing 10000 bytes into a pipe of 4096; its descriptor
 * closed, replaced, or the thread interrupted by a signal (no SA_RESTART);
 * then the pipe read to its end: as many bytes as the write says. */
static void repro_blocked_write(const char *name, int way)
{
    int p[2], null = open("/dev/null", O_RDWR);
    pipe(p);
    fcntl(p[1], F_SETPIPE_SZ, 4096);
    static char big[10000];
    memset(big, 'w', sizeof(big));
    struct rcall rc = { 1, p[1], big, sizeof(big), 0, 0, 0 };
    pthread_t t;
    pthread_create(&t, NULL, rcall_main, &rc);
    sleep_us(100000);
    if (way == 0)
        close(p[1]);
    else if (way == 1)
        dup2(null, p[1]);
    else
        pthread_kill(t, SIGUSR1);
    sleep_us(50000);
    long total = 0, n;
    char b[4096];
    int64_t t0 = now_ms();
    while (now_ms() - t0 < 3000) {
        if (way == 2 && rc.done && p[1] >= 0) {
            close(p[1]);
            p[1] = -1;
        }
        n = read(p[0], b, sizeof(b));
        if (n <= 0)
            break;
        for (long i = 0; i < n; i++)
            if (b[i] != 'w')
                rbad(name, "byte %ld read is 0x%02x", total + i, (unsigned char)b[i]);
        total += n;
    }
    for (int i = 0; i < 300 && !rc.done; i++)
        sleep_us(10000);
    long want = way == 2 ? 4096 : (long)sizeof(big);
    if (!rc.done || rc.r != total || rc.r != want)
        rbad(name, "the write says %ld %s%s, %ld bytes came out (Linux: %ld, %ld)", rc.r, rc.r < 0 ? errname(rc.err) : "",
             rc.done ? "" : " (still blocked)", total, want, want);
    if (rc.done)
        pthread_join(t, NULL);
    else
        pthread_detach(t);
    close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    close(null);
}

/* Cycles of 2..8 epolls, each watching the next: closing one must give ELOOP. */
static void repro_epoll_cycle(const char *name)
{
    for (int k = 2; k <= 8; k++) {
        int ep[8], built = 1;
        for (int i = 0; i < k; i++)
            ep[i] = epoll_create1(0);
        for (int i = k - 2; i >= 0 && built; i--) {
            struct epoll_event ev = { EPOLLIN, { .u64 = (uint64_t)i } };
            if (epoll_ctl(ep[i], EPOLL_CTL_ADD, ep[i + 1], &ev) != 0)
                built = 0;                              /* (Linux stops long chains with ELOOP) */
        }
        struct epoll_event ev = { EPOLLIN, { .u64 = 99 } };
        long r = epoll_ctl(ep[k - 1], EPOLL_CTL_ADD, ep[0], &ev);
        if (!(r < 0 && errno == ELOOP))
            rbad(name, "a cycle of %d epolls%s: %ld %s (Linux: ELOOP)", k, built ? "" : " (chain cut short)", r,
                 r < 0 ? errname(errno) : "");
        for (int i = 0; i < k; i++)
            close(ep[i]);
    }
}

/* /proc/self/fd/N opened O_PATH for a socket, an eventfd, an epoll. */
static void repro_proc_opath(const char *name)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    int fds[3] = { sv[0], eventfd(0, 0), epoll_create1(0) };
    const char *what[3] = { "socket", "eventfd", "epoll" };
    for (int i = 0; i < 3; i++) {
        char path[40];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
        int o = open(path, O_PATH);
        struct stat a, b;
        fstat(fds[i], &a);
        if (o < 0 || fstat(o, &b) || a.st_ino != b.st_ino || a.st_mode != b.st_mode)
            rbad(name, "open %s (a %s) O_PATH: %d %s (Linux: a descriptor, same inode)", path, what[i], o,
                 o < 0 ? errname(errno) : "");
        if (o >= 0)
            close(o);
    }
    close(sv[1]);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
}

/* O_PATH of a pipe through /proc/self/fd: fstat, dup, F_GETFL, fdinfo, poll, epoll_ctl. */
static void repro_opath_pipe(const char *name)
{
    int p[2];
    pipe(p);
    char path[40], info[200] = { 0 };
    snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
    int o = open(path, O_PATH);
    struct stat a, b, d;
    fstat(p[0], &a);
    int sb = fstat(o, &b), dd = dup(o), sd = fstat(dd, &d);
    if (o < 0 || sb || sd || b.st_ino != a.st_ino || d.st_ino != a.st_ino || !S_ISFIFO(b.st_mode))
        rbad(name, "O_PATH %d of pipe %llu: fstat %d ino %llu mode 0%o, its dup %d ino %llu (Linux: the pipe's)", o,
             (unsigned long long)a.st_ino, sb, (unsigned long long)b.st_ino, (unsigned)b.st_mode, sd,
             (unsigned long long)d.st_ino);
    int fl = fcntl(o, F_GETFL);
    if (fl < 0 || !(fl & O_PATH))
        rbad(name, "F_GETFL of the O_PATH descriptor: 0%o (Linux: O_PATH set)", fl);
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", o);
    int fi = open(path, O_RDONLY);
    if (fi >= 0) {
        read(fi, info, sizeof(info) - 1);
        close(fi);
    }
    const char *f = strstr(info, "flags:\t");
    if (!f || !(strtoul(f + 7, NULL, 8) & O_PATH))
        rbad(name, "%s says no O_PATH: %s", path, info);
    struct pollfd pf = { o, POLLIN, 0 };
    long r = poll(&pf, 1, 0);
    if (r != 1 || pf.revents != POLLNVAL)
        rbad(name, "poll of the O_PATH descriptor: %ld revents 0x%x (Linux: 1, POLLNVAL)", r, pf.revents);
    int ep = epoll_create1(0);
    struct epoll_event ev = { EPOLLIN, { 0 } };
    r = epoll_ctl(ep, EPOLL_CTL_ADD, o, &ev);
    if (!(r < 0 && errno == EBADF))
        rbad(name, "epoll_ctl ADD of the O_PATH descriptor: %ld %s (Linux: EBADF)", r, r < 0 ? errname(errno) : "");
    snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
    int rw = open(path, O_RDWR);
    char link[64] = { 0 }, want[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", rw);
    readlink(path, link, sizeof(link) - 1);
    snprintf(want, sizeof(want), "pipe:[%llu]", (unsigned long long)a.st_ino);
    if (rw < 0 || strcmp(link, want))
        rbad(name, "the pipe reopened O_RDWR (%d): its link \"%s\" (Linux: \"%s\")", rw, link, want);
    close(rw);
    close(ep);
    close(dd);
    close(o);
    close(p[0]);
    close(p[1]);
}

/* readv of an eventfd's 8 bytes in two pieces. */
static void repro_eventfd_readv(const char *name)
{
    int e = eventfd(5, 0);
    uint64_t v = 0;
    struct iovec iov[2] = { { &v, 4 }, { (char *)&v + 4, 4 } };
    long r = readv(e, iov, 2);
    if (r != 8 || v != 5)
        rbad(name, "readv of 4 + 4 bytes: %ld %s, value %llu (Linux: 8, 5)", r, r < 0 ? errname(errno) : "",
             (unsigned long long)v);
    close(e);
}

/* Run reproducer which (or all); nonzero if any differs from Linux. */
static int repro_mode(const char *which)
{
    static const struct { const char *name; void (*fn)(const char *); int way; } all[] = {
        { "scm_purge", repro_scm_purge, 0 }, { "epoll_cycle", repro_epoll_cycle, 0 },
        { "proc_opath", repro_proc_opath, 0 }, { "opath_pipe", repro_opath_pipe, 0 },
        { "eventfd_readv", repro_eventfd_readv, 0 }, { "blocked_read_close", NULL, 0 },
        { "blocked_read_dup2", NULL, 1 }, { "blocked_recv_close", NULL, 2 }, { "blocked_recv_dup2", NULL, 3 },
        { "blocked_write_close", NULL, 4 }, { "blocked_write_dup2", NULL, 5 }, { "blocked_write_signal", NULL, 6 },
        { "scm_self_drop", repro_scm_self_drop, 0 },   /* (last: Petrel did not survive it) */
    };
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int found = 0;
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(which, "all") && strcmp(which, all[i].name))
            continue;
        int before = repro_bad;
        if (all[i].fn)
            all[i].fn(all[i].name);
        else if (all[i].way < 4)
            repro_blocked_read(all[i].name, all[i].way >= 2, all[i].way & 1);
        else
            repro_blocked_write(all[i].name, all[i].way - 4);
        say("lxfuzz: repro %s: %s", all[i].name, repro_bad == before ? "ok" : "FAIL");
        found = 1;
    }
    if (!found)
        say("lxfuzz: repro %s: no such reproducer", which);
    return repro_bad || !found;
}

/* ---------------------------------------------------------------- workers */

static void start_thread(struct ctx *c)
{
    /* The old thread's tid goes first: a sibling that took it before
     * the old thread ended and signals it now finds ESRCH, and must then
     * see either exiting or another tid (op_signal). */
    __atomic_store_n(&c->tid, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->exiting, 0, __ATOMIC_SEQ_CST);
    int e = pthread_create(&c->th, NULL, fuzz_main, c);
    if (e) {
        fail("pthread_create of a fuzzing thread: %s", errname(e));
        c->done = c->quota;
    }
}

/* A worker: its own process group (killed whole at the end), its fuzzing
 * threads, and its main thread watching them: a thread blocked longer than
 * STALL_MS gets SIGUSR2, one that ended itself is replaced. */
static void worker_main(int w, uint64_t quota, uint64_t extra)
{
    worker = w;
    my_pid = getpid();
    parent_pid = getppid();
    setpgid(0, 0);
    handle(SIGUSR1, 1);
    handle(SIGUSR2, 0);
    handle(SIGRTMIN, 0);
    for (int t = 0; t < nthreads; t++) {
        struct ctx *c = &ctxs[t];
        c->slot = t;
        c->rng = (sh->seed + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(w * 16 + t + 1) * 0xbf58476d1ce4e5b9ull;
        c->quota = quota + (t == 0 ? extra : 0);
        rnd(c);
        start_thread(c);
    }
    for (;;) {
        sleep_us(3000);
        int64_t now = now_ms();
        int all = 1;
        for (int t = 0; t < nthreads; t++) {
            struct ctx *c = &ctxs[t];
            int64_t since = __atomic_load_n(&sh->since[w][t], __ATOMIC_RELAXED);
            if (since && now - since > STALL_MS && c->tid) {
                send_thread(c->tid, SIGUSR2);
                ADD(sh->interrupts, 1);
            }
            if (c->exiting) {
                pthread_join(c->th, NULL);
                sh->since[w][t] = 0;
                ADD(sh->replaced, 1);
                start_thread(c);
            }
            if (c->done < c->quota)
                all = 0;
        }
        check_signals();
        if (all && !sh->done[w])
            __atomic_store_n(&sh->done[w], 1, __ATOMIC_RELEASE);
    }
}

/* ---------------------------------------------------------------- the run */

/* The personality's usage (/proc/petrel): lxtest.h's petrel_usage_read. */

/* Look at enough of /proc (every descriptor's link and fdinfo, with
 * descriptors dup'ed for it) that Petrel's bounded cache of /proc nodes
 * (procfs.c, 96) is full before the first reading: nodes the run leaves
 * in it are not a leak. */
static void fill_proc_cache(void)
{
    int fds[MAXFD], n = 0;
    while (n < MAXFD && (fds[n] = dup(0)) >= 0)
        n++;
    for (int fd = 0; fd < MAXFD; fd++) {
        char path[40], link[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        readlink(path, link, sizeof(link));
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        int f = open(path, O_RDONLY);
        if (f >= 0)
            close(f);
    }
    while (n > 0)
        close(fds[--n]);
}

/* Print what differs between two readings; returns how many differ. */
static int usage_diff(const struct petrel_usage *a, const struct petrel_usage *b, int print)
{
    int d = a->n != b->n;
    for (int i = 0; i < a->n && i < b->n; i++) {
        /* The personality's records may stay a little up: the tables that index them stay at their
         * largest while any is left (lxtest.h). */
        long long slack = strcmp(a->name[i], "heap_bytes") ? 0 : 128 * 1024;
        if (strcmp(a->name[i], b->name[i]) || b->value[i] < a->value[i] - slack || b->value[i] > a->value[i] + slack) {
            d++;
            if (print)
                say("lxfuzz: usage ~%s %lld before, %s %lld after", a->name[i], a->value[i], b->name[i], b->value[i]);
        }
    }
    return d;
}

static uint64_t arg_num(const char *s) { return strtoull(s, NULL, 0); }

/* weight=NAME:N (a worker's weight of an operation, N; 0 also keeps it
 * from victims) or weight=all:N; with victim set, cweight=NAME:N (a
 * victim's weight of an operation victims make at all: not fork, wait,
 * sigaction, epoll_loop, thread_exit, exec or exit) or cweight=all:N (of
 * each of those). */
static int set_weight(const char *arg, int victim)
{
    static const unsigned victims_make[NOPS] = { OPS(OP_CW) };
    const char *colon = strchr(arg, ':');
    if (!colon)
        return 0;
    int found = 0, all = !strncmp(arg, "all:", 4);
    for (int op = 0; op < NOPS; op++)
        if (((size_t)(colon - arg) == strlen(op_names[op]) && !strncmp(arg, op_names[op], (size_t)(colon - arg))) ||
            all) {
            if (victim && !victims_make[op] && !all)
                return 0;
            if (victim) {
                child_weight[op] = victims_make[op] ? (unsigned)arg_num(colon + 1) : 0;
            } else {
                op_weight[op] = (unsigned)arg_num(colon + 1);
                if (!op_weight[op])
                    child_weight[op] = 0;
            }
            found = 1;
        }
    return found;
}

static union {
    struct shared sh;                                   /* (only the counters, up to inos) */
    char counters[offsetof(struct shared, inos)];
} res_;
#define res (res_.sh)

/* The main process: arguments, workers, the wait, the kill, the checks after. */
int main(int argc, char **argv)
{
    uint64_t seed = 0;
    int seeded = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "mode=exit"))
            return exit_mode(argc, argv);
        if (!strncmp(argv[i], "repro=", 6))
            return repro_mode(argv[i] + 6);
        if (!strncmp(argv[i], "seed=", 5))
            seed = arg_num(argv[i] + 5), seeded = 1;
        else if (!strncmp(argv[i], "procs=", 6))
            nprocs = (int)arg_num(argv[i] + 6);
        else if (!strncmp(argv[i], "threads=", 8))
            nthreads = (int)arg_num(argv[i] + 8);
        else if (!strncmp(argv[i], "ops=", 4))
            total_ops = arg_num(argv[i] + 4);
        else if (!strncmp(argv[i], "trace=", 6))
            trace = (int)arg_num(argv[i] + 6);
        else if (!strncmp(argv[i], "stats=", 6))
            show_stats = (int)arg_num(argv[i] + 6);
        else if (!strncmp(argv[i], "weight=", 7) && set_weight(argv[i] + 7, 0))
            ;
        else if (!strncmp(argv[i], "cweight=", 8) && set_weight(argv[i] + 8, 1))
            ;
        else {
            say("usage: lxfuzz [seed=N] [procs=1..%d] [threads=1..%d] [ops=N] [trace=1] [stats=1] [weight=OP:N ...] [cweight=OP:N ...]",
                MAXPROCS, MAXTHREADS);
            return 2;
        }
    }
    if (nprocs < 1 || nprocs > MAXPROCS || nthreads < 1 || nthreads > MAXTHREADS) {
        say("lxfuzz: procs must be 1..%d, threads 1..%d", MAXPROCS, MAXTHREADS);
        return 2;
    }
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32;
    }
    if (strchr(argv[0], '/'))
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    else
        snprintf(self_path, sizeof(self_path), "/bin/%s", argv[0]);
    my_pid = getpid();
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl = { MAXFD, MAXFD };
    setrlimit(RLIMIT_NOFILE, &rl);
    unlink("/tmp/lxfuzz.failed");
    memset(res_.counters, 0, sizeof(res_.counters));     /* (touched before the usage is read) */
    fill_proc_cache();
    struct petrel_usage before, after;
    int petrel = petrel_usage_read(&before);
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        say("lxfuzz: mmap of %zu bytes: %s", sizeof(*sh), errname(errno));
        return 1;
    }
    sh->seed = seed;
    for (int fd = 0; fd < 3; fd++)
        tab[fd].state = S_STDIO;
    int null = open("/dev/null", O_RDWR);               /* every worker starts with it */
    if (null >= 0)
        null_obj = new_single(K_NULL, null, 0, 0);
    say("lxfuzz: %d processes of %d threads, %llu operations ~seed=0x%llx", nprocs, nthreads,
        (unsigned long long)total_ops, (unsigned long long)seed);
    uint64_t share = total_ops / (uint64_t)(nprocs * nthreads);
    uint64_t extra = total_ops - share * (uint64_t)(nprocs * nthreads);
    pid_t pids[MAXPROCS];
    int ended[MAXPROCS] = { 0 }, status[MAXPROCS] = { 0 };
    for (int w = 0; w < nprocs; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            worker_main(w, share, w == 0 ? extra : 0);
            _exit(0);
        }
        if (pids[w] < 0) {
            say("lxfuzz: fork of worker %d: %s", w, errname(errno));
            return 1;
        }
    }
    int64_t t0 = now_ms(), last_change = t0;
    uint64_t last = 0;
    for (;;) {
        sleep_us(50000);
        uint64_t sum = 0;
        int done = 1, early = 0;
        for (int w = 0; w < nprocs; w++) {
            sum += sh->ops[w];
            done &= sh->done[w];
            if (!ended[w] && waitpid(pids[w], &status[w], WNOHANG) == pids[w]) {
                ended[w] = 1;
                early = 1;
                fail("worker %d (pid %d) ended by itself: %s %d", w, pids[w],
                     WIFSIGNALED(status[w]) ? "signal" : "exit", WIFSIGNALED(status[w]) ? WTERMSIG(status[w]) :
                     WEXITSTATUS(status[w]));
            }
        }
        if (sum != last) {
            last = sum;
            last_change = now_ms();
        }
        if (done || early)
            break;
        if (now_ms() - last_change > 30000) {
            fail("no progress for 30 s at %llu operations", (unsigned long long)sum);
            for (int w = 0; w < nprocs; w++)
                for (int t = 0; t < nthreads; t++)
                    say("lxfuzz: worker %d thread %d: %s%s, blocked for %lld ms%s", w, t, op_names[sh->cur[w][t]],
                        sh->done[w] ? " (done)" : "", sh->since[w][t] ? (long long)(now_ms() - sh->since[w][t]) : 0ll,
                        sh->spin[w][t] == 1 ? ", waiting for the table" : sh->spin[w][t] == 2 ?
                        ", waiting to make descriptors" : "");
            break;
        }
    }
    int64_t t1 = now_ms();
    for (int w = 0; w < nprocs; w++) {
        kill(-pids[w], SIGKILL);
        kill(pids[w], SIGKILL);
    }
    for (int w = 0; w < nprocs; w++) {
        if (!ended[w] && waitpid(pids[w], &status[w], 0) != pids[w])
            fail("waitpid of worker %d: %s", w, errname(errno));
        else if (!ended[w] && !(WIFSIGNALED(status[w]) && WTERMSIG(status[w]) == SIGKILL))
            fail("worker %d: wait status 0x%x, not killed by SIGKILL", w, status[w]);
    }
    if (null >= 0)
        close(null);
    struct stat fst;
    if (stat("/tmp/lxfuzz.failed", &fst) == 0) {
        ADD(sh->failures, (uint64_t)fst.st_size);
        unlink("/tmp/lxfuzz.failed");
    }
    memcpy(&res, sh, offsetof(struct shared, inos));     /* the counters, before the memory goes */
    uint32_t objects = sh->next_id;
    munmap(sh, sizeof(*sh));
    sh = NULL;
    uint64_t ops = 0;
    for (int w = 0; w < nprocs; w++)
        ops += res.ops[w];
    say("lxfuzz: depth ~%lld ms; %u objects, %llu descriptors sent, %llu received; %llu forks, %llu execs (%llu failed), "
        "%llu exits, %llu victim operations; blocked calls ended with data %llu, EOF %llu, EINTR %llu, other %llu; "
        "%llu interrupts, %llu threads replaced", (long long)(t1 - t0), objects, (unsigned long long)res.sent_fds,
        (unsigned long long)res.received, (unsigned long long)res.forks, (unsigned long long)res.execs,
        (unsigned long long)res.exec_fail, (unsigned long long)res.exits, (unsigned long long)res.child_ops,
        (unsigned long long)res.blocked_results[0], (unsigned long long)res.blocked_results[1],
        (unsigned long long)res.blocked_results[2], (unsigned long long)res.blocked_results[3],
        (unsigned long long)res.interrupts, (unsigned long long)res.replaced);
    if (show_stats)
        for (int op = 0; op < NOPS; op++) {
            char line[400];
            int k = snprintf(line, sizeof(line), "lxfuzz: op %s ~%llu ms, %llu calls, %llu ok", op_names[op],
                             (unsigned long long)res.us[op] / 1000, (unsigned long long)res.calls[op],
                             (unsigned long long)res.oks[op]);
            for (int e = 0; e < NERR && k < (int)sizeof(line) - 40; e++)
                if (res.errs[op][e])
                    k += snprintf(line + k, sizeof(line) - (size_t)k, ", %s %llu", e ? errname(e) : "E?",
                                  (unsigned long long)res.errs[op][e]);
            say("%s", line);
        }
    const char *usage = "not checked (no /proc/petrel)";
    if (petrel) {
        int64_t u0 = now_ms();
        int d;
        while ((d = (petrel_usage_read(&after), usage_diff(&before, &after, 0))) && now_ms() - u0 < 5000)
            sleep_us(50000);
        if (d) {
            usage_diff(&before, &after, 1);
            res.failures++;
            usage = "NOT back";
        } else {
            usage = "back";
        }
    }
    say("lxfuzz: %llu ops, %llu failures, usage ~%s", (unsigned long long)ops, (unsigned long long)res.failures, usage);
    return res.failures ? 1 : 0;
}
