/*
 * The Linux personality (idl/linux.toml): a service that owns Linux
 * processes and answers their system calls.
 *
 * Each Linux process is a Petrel address space the personality made, with
 * threads whose fault handler is the personality's own endpoint, each
 * badged with its tid and slot. A Linux `svc #0` in one is a fault the
 * kernel delivers as a call on that endpoint (L4Linux's system-call
 * redirection): the registers x0..x8 arrive in the fault message, the
 * handler runs, and the reply resumes the thread after the `svc` with x0
 * set, or enters a signal handler first (signal.c). A real fault (a bad
 * access, an undefined instruction) is the signal Linux would send: its
 * handler runs, or the process ends with it. Native programs use the
 * interface's methods: exec starts a process, wait waits for its end, run
 * runs the commands of a file one after the other.
 *
 * The same source serves both placements: it uses only svc.h and
 * svc_proc.h (docs/design/personality.md).
 */
#include "cmd_words.h"
#include "lx.h"
#include "svc_trace.h"
#include "format.h"

#define ROOT_ARCHIVE    "rootfs.cpio"
#define MAX_ARGS        32
#define LX_LINE_MAX     4096            /* a command line of a script, its newline included (longer: cut) */
#define LX_SCRIPT_MAX   (64 * 1024)     /* a command file (run: SVC_E_INVAL past it) */

static int fs_ready;            /* 0: not tried; 1: loaded; < 0: the error */

/* The command file `run` is working through. */
static struct {
    svc_token token;            /* 0: none running */
    char *text;                 /* LX_SCRIPT_MAX bytes, made at the first run */
    uint32_t len, at;           /* its bytes, and the start of the next line */
    int pid;                    /* the command running now */
    int status;                 /* the last nonzero exit code */
    int paused;                 /* stopped at line `at`, whose program is on the disk and not read yet */
    uint32_t said;              /* 1 + the start of the line last announced ("lx: run") */
    char path[97];              /* the file, for a `run` that goes on after a pause */
} script;

int lx_format(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n < (int)size ? n : (int)size - 1;
}

/* One line on the console, written whole: a line another core writes at
 * the same time goes before or after it, never into it. */
void lx_log(const char *fmt, ...)
{
    static const char prefix[] = "petrel-linux: ";
    const int at = (int)sizeof(prefix) - 1;
    char buf[256];
    memcpy(buf, prefix, (size_t)at);
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf + at, sizeof(buf) - (size_t)at - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(buf) - at - 2)
        n = (int)sizeof(buf) - at - 2;
    buf[at + n] = '\n';
    svc_console_write(buf, (uint64_t)(at + n + 1));
}

/* xorshift128+ seeded from the system counter at first use. */
void lx_random(void *buf, uint64_t len)
{
    static uint64_t s0, s1;
    if (!s0 && !s1) {
        s0 = svc_clock_ns() * 0x9e3779b97f4a7c15ull | 1;
        s1 = (s0 ^ 0xdeadbeefcafef00dull) * 0xbf58476d1ce4e5b9ull;
    }
    uint8_t *out = buf;
    for (uint64_t i = 0; i < len; i++) {
        uint64_t x = s0, y = s1;
        s0 = y;
        x ^= x << 23;
        s1 = x ^ y ^ (x >> 17) ^ (y >> 26);
        out[i] = (uint8_t)((s1 + y) >> 24);
    }
}

int lx_copy_in(struct lx_ctx *c, void *dst, uint64_t src, uint64_t len)
{
    if (!lx_range_ok(src, len))
        return -LX_EFAULT;
    return len && svc_copy_in(c->call, dst, src, len) ? -LX_EFAULT : 0;
}

int lx_copy_out(struct lx_ctx *c, uint64_t dst, const void *src, uint64_t len)
{
    if (!lx_range_ok(dst, len))
        return -LX_EFAULT;
    return len && svc_copy_out(c->call, dst, src, len) ? -LX_EFAULT : 0;
}

uint64_t lx_copy_out_some(struct lx_ctx *c, uint64_t dst, const void *src, uint64_t len)
{
    if (lx_copy_out(c, dst, src, len) == 0)
        return len;                             /* the usual case: all of it in one go */
    uint64_t done = 0;
    while (done < len) {
        uint64_t n = LX_PAGE - ((dst + done) & (LX_PAGE - 1));
        if (n > len - done)
            n = len - done;
        if (lx_copy_out(c, dst + done, (const uint8_t *)src + done, n))
            break;
        done += n;
    }
    return done;
}

uint64_t lx_copy_in_some(struct lx_ctx *c, void *dst, uint64_t src, uint64_t len)
{
    if (lx_copy_in(c, dst, src, len) == 0)
        return len;
    uint64_t done = 0;
    while (done < len) {
        uint64_t n = LX_PAGE - ((src + done) & (LX_PAGE - 1));
        if (n > len - done)
            n = len - done;
        if (lx_copy_in(c, (uint8_t *)dst + done, src + done, n))
            break;
        done += n;
    }
    return done;
}

/* In pieces of at most 256 bytes that never cross a page: a short path is
 * one copy, and a string ending just before unmapped memory is fine. */
int64_t lx_copy_str(struct lx_ctx *c, char *dst, uint64_t src, uint64_t max)
{
    uint64_t done = 0;
    while (done < max) {
        uint64_t n = LX_PAGE - ((src + done) & (LX_PAGE - 1));
        if (n > 256)
            n = 256;
        if (n > max - done)
            n = max - done;
        if (lx_copy_in(c, dst + done, src + done, n))
            return -LX_EFAULT;
        for (uint64_t i = 0; i < n; i++)
            if (dst[done + i] == 0)
                return (int64_t)(done + i);
        done += n;
    }
    return -LX_ENAMETOOLONG;
}

/* ---------------------------------------------------------------- the process and thread tables */
/*
 * Processes and threads are records of the service's memory (lx_alloc),
 * made as programs fork and clone and bounded only by what the system
 * description gives the personality (spaces, threads, memory): no table
 * is fixed at build time. Each kind is found by its id through a hash
 * table that doubles as it fills (O(1) on average); every process is on
 * one list (oldest first) for the calls that look at all of them (kill
 * -1, /proc); a process's children are a list of its own, so waiting for
 * one and ending never look at the others.
 *
 * A thread also has a slot: a small number, given lowest first and used
 * again, that names it in its fault badge (the tid beside it, so a stale
 * badge finds nothing) and in the bitmap of threads that keep a reply
 * (lx_waiting_next), which a wake-up walks in slot order and which stays
 * right while the walk wakes the threads it finds.
 *
 * A record freed during a request (a process reaped, a thread ended)
 * leaves the tables at once but stays readable until the request is
 * done: the code that freed it may still look at it (serve checks
 * `t->used` after a call that may have ended its own thread), and a
 * freed process keeps its `next`, so a walk of every process that sends
 * a signal which ends the one it is on goes on from there (such walks
 * skip records whose `used` is 0). lx_reap, run when the next request
 * starts, frees them.
 */
struct idhash {
    void **bucket;              /* chains through the records' hnext */
    uint32_t mask;              /* buckets - 1 (0: none yet) */
    uint32_t count;
};

static struct idhash pid_hash, tid_hash;
static struct lx_proc *proc_first, *proc_last;
static struct lx_proc *dead_procs;      /* freed in this request, through their hnext */
static struct lx_thread *dead_threads;
static uint64_t shared_calls_gone;          /* lx_shared_calls of the threads that went */
static uint32_t procs_alive, threads_alive;
static uint64_t proc_serial;

/* The thread slots: slot[i] is the thread in slot i or NULL; `taken` and
 * `waiting` have bit i for slot i. All three grow together (doubling). */
static struct lx_thread **slot;
static uint64_t *taken, *waiting;
static uint32_t slots;                  /* entries of slot[] (a multiple of 64) */

#define HASH_FIRST  256                 /* buckets a table starts with */

static uint32_t hash_id(int id, uint32_t mask)
{
    return ((uint32_t)id * 0x9e3779b1u >> 8) & mask;
}

/* The chain link of a record of either kind: hnext is at the same use in both. */
#define LINK(rec, is_proc) ((is_proc) ? (void **)&((struct lx_proc *)(rec))->hnext : \
                                        (void **)&((struct lx_thread *)(rec))->hnext)
#define ID(rec, is_proc) ((is_proc) ? ((struct lx_proc *)(rec))->pid : ((struct lx_thread *)(rec))->tid)

/* Twice the buckets, when it can be had (if not, chains just get longer). */
static void hash_grow(struct idhash *h, int is_proc)
{
    uint32_t nb = h->mask ? (h->mask + 1) * 2 : HASH_FIRST;
    void **b = lx_alloc(nb * sizeof(void *));
    if (!b)
        return;
    for (uint32_t i = 0; h->mask && i <= h->mask; i++) {
        void *rec = h->bucket[i];
        while (rec) {
            void *next = *LINK(rec, is_proc);
            uint32_t k = hash_id(ID(rec, is_proc), nb - 1);
            *LINK(rec, is_proc) = b[k];
            b[k] = rec;
            rec = next;
        }
    }
    if (h->mask)
        lx_free(h->bucket, (h->mask + 1) * sizeof(void *));
    h->bucket = b;
    h->mask = nb - 1;
}

/* 0, or -ENOMEM when the table has no buckets at all and none can be had. */
static int hash_add(struct idhash *h, void *rec, int is_proc)
{
    if (!h->mask || h->count >= (h->mask + 1) * 2)
        hash_grow(h, is_proc);
    if (!h->mask)
        return -LX_ENOMEM;
    uint32_t k = hash_id(ID(rec, is_proc), h->mask);
    *LINK(rec, is_proc) = h->bucket[k];
    h->bucket[k] = rec;
    h->count++;
    return 0;
}

/* Take rec out; the last one takes the buckets with it unless `keep`. */
static void hash_del(struct idhash *h, void *rec, int is_proc, int keep)
{
    for (void **link = &h->bucket[hash_id(ID(rec, is_proc), h->mask)]; *link; link = LINK(*link, is_proc)) {
        if (*link == rec) {
            *link = *LINK(rec, is_proc);
            if (--h->count == 0 && !keep) {     /* the last one: the buckets go too (every byte back) */
                lx_free(h->bucket, (h->mask + 1) * sizeof(void *));
                h->bucket = NULL;
                h->mask = 0;
            }
            return;
        }
    }
}

static void *hash_find(const struct idhash *h, int id, int is_proc)
{
    if (!h->mask)
        return NULL;
    void *rec = h->bucket[hash_id(id, h->mask)];
    while (rec && ID(rec, is_proc) != id)
        rec = *LINK(rec, is_proc);
    return rec;
}

struct lx_proc *lx_proc_of_pid(int pid)
{
    return hash_find(&pid_hash, pid, 1);
}

struct lx_proc *lx_proc_of_serial(int pid, uint64_t serial)
{
    struct lx_proc *p = lx_proc_of_pid(pid);
    return p && p->serial == serial ? p : NULL;
}

struct lx_proc *lx_procs(void)
{
    return proc_first;
}

uint32_t lx_procs_alive(void)
{
    return procs_alive;
}

uint32_t lx_threads_alive(void)
{
    return threads_alive;
}

uint64_t lx_shared_calls(void)
{
    uint64_t n = shared_calls_gone;
    for (uint32_t i = 0; i < slots; i++)
        n += slot[i] ? slot[i]->shared_calls : 0;
    return n;
}

struct lx_thread *lx_thread_of_tid(int tid)
{
    return hash_find(&tid_hash, tid, 0);
}

/* A thread's fault badge: its tid and its slot, so that finding it takes one look. */
static uint64_t badge_of(const struct lx_thread *t)
{
    return (uint64_t)(uint32_t)t->tid << 32 | t->slot;
}

static struct lx_thread *thread_of_badge(uint64_t badge)
{
    uint32_t i = (uint32_t)badge;
    struct lx_thread *t = i < slots ? slot[i] : NULL;
    return t && (uint64_t)(uint32_t)t->tid == badge >> 32 ? t : NULL;
}

struct lx_thread *lx_main_thread(struct lx_proc *p)
{
    struct lx_thread *any = p->first_thread;
    for (struct lx_thread *t = any; t; t = t->sibling)
        if (t->tid == p->pid)
            return t;
    return any;
}

/* The threads that keep a reply are also queued by what they wait for
 * (blk.kind and blk.on, which do not change while they wait), in a hash
 * of lists: a wake-up of one pipe or child looks at the threads waiting
 * for it (and at the polls, which any file event wakes), not at every
 * thread that waits. */
#define WQ_BUCKETS  256
static struct lx_thread *wq_first[WQ_BUCKETS], *wq_last[WQ_BUCKETS];   /* oldest first, as Linux's queues */

static uint32_t wq_of(int kind, int32_t on)
{
    return ((uint32_t)kind * 0x9e3779b1u ^ (uint32_t)on * 0x85ebca6bu) >> 24;
}

static void set_waiting(struct lx_thread *t, int on)
{
    unsigned i = t->slot;
    int was = (waiting[i / 64] >> (i % 64)) & 1;
    if (on && !was) {
        waiting[i / 64] |= 1ull << (i % 64);
        t->wq = wq_of(t->blk.kind, t->blk.on);
        t->wq_next = NULL;
        t->wq_prev = wq_last[t->wq];
        *(t->wq_prev ? &t->wq_prev->wq_next : &wq_first[t->wq]) = t;
        wq_last[t->wq] = t;
    } else if (!on && was) {                    /* (its wq_next stays: a walk that woke it goes on) */
        waiting[i / 64] &= ~(1ull << (i % 64));
        *(t->wq_prev ? &t->wq_prev->wq_next : &wq_first[t->wq]) = t->wq_next;
        *(t->wq_next ? &t->wq_next->wq_prev : &wq_last[t->wq]) = t->wq_prev;
    }
}

struct lx_thread *lx_waiting_on(int kind, int32_t on)
{
    return wq_first[wq_of(kind, on)];
}

struct lx_thread *lx_waiting_next(const struct lx_thread *after)
{
    unsigned from = after ? after->slot + 1 : 0;
    for (unsigned w = from / 64; w < slots / 64; w++) {
        uint64_t bits = waiting[w];
        if (from > w * 64)
            bits &= ~0ull << (from - w * 64);
        if (bits)
            return slot[w * 64 + (unsigned)__builtin_ctzll(bits)];
    }
    return NULL;
}

/* Twice the slots (64 at first); -ENOMEM if that cannot be had. */
static int slots_grow(void)
{
    uint32_t n = slots ? slots * 2 : 64;
    struct lx_thread **s = lx_alloc(n * sizeof(*s));
    uint64_t *tk = lx_alloc(n / 8), *wt = lx_alloc(n / 8);
    if (!s || !tk || !wt) {
        lx_free(s, n * sizeof(*s));
        lx_free(tk, n / 8);
        lx_free(wt, n / 8);
        return -LX_ENOMEM;
    }
    if (slots) {
        memcpy(s, slot, slots * sizeof(*s));
        memcpy(tk, taken, slots / 8);
        memcpy(wt, waiting, slots / 8);
        lx_free(slot, slots * sizeof(*s));
        lx_free(taken, slots / 8);
        lx_free(waiting, slots / 8);
    }
    slot = s, taken = tk, waiting = wt, slots = n;
    return 0;
}

/* The lowest free slot, growing the slots if all are taken; -ENOMEM. */
static int64_t slot_take(void)
{
    for (;;) {
        for (uint32_t w = 0; w < slots / 64; w++)
            if (~taken[w]) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(~taken[w]);
                taken[w] |= 1ull << (i % 64);
                return i;
            }
        if (slots_grow())
            return -LX_ENOMEM;
    }
}

static uint64_t ids_given;
static int next_id = 1;

uint64_t lx_ids_given(void)
{
    return ids_given;
}

/* A fresh pid or tid (they share one space of numbers, as on Linux): the
 * next one not in use, going round from LX_PID_MAX to 300 as Linux does;
 * 0 if every number is in use. */
static int new_id(void)
{
    for (int tries = 0; tries < LX_PID_MAX; tries++) {
        int id = next_id;
        next_id = next_id + 1 >= LX_PID_MAX ? 300 : next_id + 1;
        if (!lx_proc_of_pid(id) && !lx_thread_of_tid(id)) {
            ids_given++;
            return id;
        }
    }
    return 0;
}

int lx_utcb_take(struct lx_proc *p)
{
    for (uint32_t w = 0;; w++) {
        if (w == p->utcb_words) {
            uint32_t n = w ? w * 2 : 1;
            if ((uint64_t)n * 64 > LX_PROC_THREADS + 1ull)
                n = (LX_PROC_THREADS + 1 + 63) / 64;
            if (n == w)
                return -1;                      /* every control page is used */
            uint64_t *m = lx_alloc(n * sizeof(uint64_t));
            if (!m)
                return -1;
            if (w)
                memcpy(m, p->utcbs, w * sizeof(uint64_t));
            lx_free(p->utcbs, w * sizeof(uint64_t));
            p->utcbs = m;
            p->utcb_words = n;
        }
        if (~p->utcbs[w]) {
            int k = (int)(w * 64) + __builtin_ctzll(~p->utcbs[w]);
            if (k > LX_PROC_THREADS)
                return -1;
            p->utcbs[w] |= 1ull << (k % 64);
            return k;
        }
    }
}

void lx_utcb_give(struct lx_proc *p, int k)
{
    if (k >= 0 && (uint32_t)k / 64 < p->utcb_words)
        p->utcbs[k / 64] &= ~(1ull << (k % 64));
}

struct lx_thread *lx_thread_new(struct lx_proc *p, int tid, int *err)
{
    *err = -LX_EAGAIN;
    if (p->nthreads >= LX_PROC_THREADS)
        return NULL;
    *err = -LX_ENOMEM;
    struct lx_thread *t = lx_alloc(sizeof(*t));
    if (!t)
        return NULL;
    int64_t s = slot_take();
    if (s < 0) {
        lx_free(t, sizeof(*t));
        return NULL;
    }
    int utcb = lx_utcb_take(p);
    t->tid = tid ? tid : new_id();
    if (utcb < 0 || !t->tid || hash_add(&tid_hash, t, 0)) {
        *err = -LX_EAGAIN;                      /* no control page or id left (or no memory for either) */
        lx_utcb_give(p, utcb);
        taken[s / 64] &= ~(1ull << (s % 64));
        lx_free(t, sizeof(*t));
        return NULL;
    }
    t->used = 1;
    t->slot = (uint32_t)s;
    slot[s] = t;
    t->p = p;
    t->sibling = p->first_thread;
    p->first_thread = t;
    t->utcb = utcb;
    p->nthreads++;
    threads_alive++;
    *err = 0;
    return t;
}

void lx_thread_renumber(struct lx_thread *t, int tid)
{
    hash_del(&tid_hash, t, 0, 1);
    t->tid = tid;
    hash_add(&tid_hash, t, 0);                  /* (the table has buckets: it held t) */
}

void lx_thread_free(struct lx_thread *t)
{
    if (!t->used)
        return;
    if (t->blk.token) {                         /* blocked: its kernel thread stops */
        uint64_t stop[1] = { FAULT_REPLY_STOP };
        svc_reply_later(t->blk.token, 0, 1, stop);
    }
    t->blk = (struct lx_block){ 0 };            /* (so no wake-up below finds it waiting) */
    set_waiting(t, 0);
    lx_io_end(t);                               /* its call's open file goes */
    struct lx_proc *p = t->p;
    lx_futex_thread_gone(t);
    lx_sig_thread_gone(t);
    lx_binder_thread_gone(t);
    if (t->thread) {
        p->cpu_gone += lx_thread_cpu_ns(t);     /* its time stays the process's */
        /* Ended now, not by the "stop" answer to its call: in user space
         * that answer goes out only when the server next waits, and
         * another server thread may by then give its control page slot
         * to a new thread (whose create would find the page still
         * mapped) or count it against the process's thread limit. The
         * answer then finds nobody (killed already in the kernel
         * placement, where it stops the thread at once). A thread in a
         * space it borrowed must go now too: that space stays. */
        svc_thread_kill(t->thread);
        svc_handle_release(t->thread);
        t->thread = 0;
    }
    for (struct lx_thread **link = &p->first_thread; *link; link = &(*link)->sibling) {
        if (*link == t) {
            *link = t->sibling;
            break;
        }
    }
    lx_utcb_give(p->vm_of ? p->vm_of : p, t->utcb);    /* a vfork child's control page was the lender's */
    p->nthreads--;
    set_waiting(t, 0);
    hash_del(&tid_hash, t, 0, 0);
    slot[t->slot] = NULL;
    taken[t->slot / 64] &= ~(1ull << (t->slot % 64));
    threads_alive--;
    if (!threads_alive) {                       /* the last one: the slots go too */
        lx_free(slot, slots * sizeof(*slot));
        lx_free(taken, slots / 8);
        lx_free(waiting, slots / 8);
        slot = NULL, taken = waiting = NULL, slots = 0;
    }
    t->used = 0;
    shared_calls_gone += t->shared_calls;
    t->hnext = dead_threads;                    /* freed when this request is done */
    dead_threads = t;
}

void lx_proc_free(struct lx_proc *p)
{
    if (!p->used)
        return;
    struct lx_proc *parent = p->ppid ? lx_proc_of_pid(p->ppid) : NULL;
    if (parent) {
        *(p->sibling_prev ? &p->sibling_prev->sibling : &parent->first_child) = p->sibling;
        *(p->sibling ? &p->sibling->sibling_prev : &parent->last_child) = p->sibling_prev;
    }
    hash_del(&pid_hash, p, 1, 0);
    *(p->prev ? &p->prev->next : &proc_first) = p->next;
    *(p->next ? &p->next->prev : &proc_last) = p->prev;
    procs_alive--;
    p->used = 0;
    p->hnext = dead_procs;                      /* freed when this request is done; its next stays, */
    dead_procs = p;                             /* so a walk of lx_procs that is on it goes on */
}

void lx_reap(void)
{
    while (dead_threads) {
        struct lx_thread *t = dead_threads;
        dead_threads = t->hnext;
        lx_free(t, sizeof(*t));
    }
    while (dead_procs) {
        struct lx_proc *p = dead_procs;
        dead_procs = p->hnext;
        lx_procfs_drop(p);
        lx_ptimers_exec(p);                     /* (kept till now: a walk of the timers may be on one) */
        lx_free(p->utcbs, p->utcb_words * sizeof(uint64_t));
        lx_free(p, sizeof(*p));
    }
}

uint64_t lx_thread_cpu_ns(const struct lx_thread *t)
{
    struct petrel_thread_stats st;
    return t->thread && svc_thread_stats(t->thread, &st) == 0 ? st.cpu_ns : 0;
}

uint32_t lx_thread_core(const struct lx_thread *t)
{
    struct petrel_thread_stats st;
    return t->thread && svc_thread_stats(t->thread, &st) == 0 ? st.cpu : 0;
}

uint64_t lx_cpus_online(void)
{
    static uint64_t online;                     /* cores do not go offline */
    if (!online)
        online = svc_cpus_online();
    return online ? online : 1;
}

int lx_ncpus(void)
{
    return __builtin_popcountll(lx_cpus_online());
}

uint64_t lx_proc_cpu_ns(const struct lx_proc *p)
{
    uint64_t ns = p->cpu_gone;
    for (const struct lx_thread *t = p->first_thread; t; t = t->sibling)
        ns += lx_thread_cpu_ns(t);
    return ns;
}

static int fs(void)
{
    if (!fs_ready) {
        int err = lx_fs_init(ROOT_ARCHIVE);
        fs_ready = err ? err : 1;
        if (!err)
            lx_data_init();
        lx_clock_init();
        lx_tty_init();
        if (err)
            lx_log("no root file system (boot image file %s): error %d", ROOT_ARCHIVE, -err);
    }
    return fs_ready < 0 ? fs_ready : 0;
}

/* Release what a process holds besides its record and its identity. */
static void proc_release(struct lx_proc *p)
{
    /* Its files first, while the thread whose call ends it still lives:
     * closing a socket calls the network stack, and in the kernel
     * placement that call may have to wait for the stack, which only a
     * living caller can (svc_client_call). */
    lx_files_drop(p);
    while (p->first_thread)
        lx_thread_free(p->first_thread);
    if (p->space && !p->vm_of) {
        lx_end_borrowers(p);
        svc_space_kill(p->space);
        svc_handle_release(p->space);
    }
    p->space = 0;
    if (p->vm_of)
        p->vm_of->borrowed--;
    p->vm_of = NULL;
    lx_vmas_drop(p);
}

/*
 * What a Linux process itself may make the kernel allocate. Its memory
 * objects are made by the personality and charged to it; charged to the
 * process are the records and page tables of its mappings and its threads.
 * Its threads are foreign (svc_thread_make_foreign): every `svc` of theirs
 * is a Linux call, so the process itself asks the kernel for nothing.
 */
static const uint64_t proc_limits[LIMIT_KINDS] = {
    [LIMIT_MEMORY] = 64u << 20, [LIMIT_THREADS] = LX_PROC_THREADS, [LIMIT_HANDLES] = 8, [LIMIT_SPACES] = 1,
};

svc_handle lx_space_new(void)
{
    int serr;
    svc_handle s = svc_space_create(&serr);
    for (unsigned k = 0; k < LIMIT_KINDS && s; k++) {
        if (svc_space_set_limit(s, k, proc_limits[k])) {
            svc_space_kill(s);
            svc_handle_release(s);
            s = 0;
        }
    }
    return s;
}

struct lx_proc *lx_proc_new(struct lx_proc *parent, int *err)
{
    struct lx_proc *p = lx_alloc(sizeof(*p));
    *err = -LX_ENOMEM;
    if (!p)
        return NULL;
    lx_rlimits_init(p);
    p->umask = parent ? parent->umask : LX_UMASK;
    p->pid = new_id();
    p->serial = ++proc_serial;
    if (!p->pid || hash_add(&pid_hash, p, 1)) {
        *err = p->pid ? -LX_ENOMEM : -LX_EAGAIN;
        lx_free(p, sizeof(*p));
        return NULL;
    }
    p->used = 1;
    p->prev = proc_last;
    *(proc_last ? &proc_last->next : &proc_first) = p;
    proc_last = p;
    procs_alive++;
    if (parent) {
        p->ppid = parent->pid;
        p->sibling_prev = parent->last_child;
        *(parent->last_child ? &parent->last_child->sibling : &parent->first_child) = p;
        parent->last_child = p;
    }
    if (!lx_thread_new(p, p->pid, err)) {
        lx_proc_free(p);
        return NULL;
    }
    p->space = lx_space_new();
    if (!p->space) {
        lx_proc_discard(p);
        *err = -LX_EAGAIN;
        return NULL;
    }
    return p;
}

void lx_proc_discard(struct lx_proc *p)
{
    proc_release(p);
    lx_proc_free(p);
}

/* A kernel call that made a thread failed: said once (the program sees
 * only EAGAIN, as from Linux past its limits), with the step and error. */
static int thread_failed(struct lx_thread *t, const char *step, int64_t err)
{
    static int said;
    if (!said++)
        lx_log("pid %d (%s): a new thread: %s failed with kernel error %ld", t->p->pid, t->p->comm, step,
               (long)err);
    return -LX_EAGAIN;
}

int lx_thread_start(struct lx_thread *t, svc_handle from, uint64_t pc, uint64_t sp, uint64_t arg, const uint64_t *tls)
{
    int serr, e;
    if (!(t->thread = svc_thread_create(t->p->space, LX_UTCB_VA - (uint64_t)t->utcb * LX_PAGE, &serr)))
        return thread_failed(t, "create", serr);
    if (from && (e = svc_thread_copy(t->thread, from)))
        return thread_failed(t, "copy", e);
    if (tls && (e = svc_thread_set_tls(t->thread, *tls)))
        return thread_failed(t, "set_tls", e);
    if ((e = svc_thread_make_foreign(t->thread)))   /* svc #N, N > 0, is a Linux call too, as on Linux */
        return thread_failed(t, "make_foreign", e);
    /* The cores sched_setaffinity gave it (or its creator), or else every
     * core online, as on Linux: the kernel's scheduler chooses among them
     * (a new thread goes to the least busy). */
    svc_thread_set_cpus(t->thread, t->cpus ? t->cpus : lx_cpus_online());
    if ((e = svc_thread_fault_to_me(t->thread, badge_of(t))))
        return thread_failed(t, "fault_to_me", e);
    if ((e = svc_thread_start(t->thread, pc, sp, arg)))
        return thread_failed(t, "start", e);
    return 0;
}

int lx_exec(char *const *argv, int argc, char *const envp[], int envc)
{
    int err = fs();
    if (err)
        return err;
    if (argc < 1)
        return -LX_EINVAL;
    const char *path = argv[0];                 /* (a script's: its comm and AT_EXECFN, as on Linux) */
    int32_t node = lx_lookup(LX_ROOT, path, 1);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if ((n->mode & LX_S_IFMT) != LX_S_IFREG || !(n->mode & 0111))
        return -LX_EACCES;
    /* A `#!` script runs its interpreter with the script's path (and the
     * interpreter's one argument) before its own arguments, as execve
     * runs one (proc.c) and Linux runs init's. */
    static char interp[LX_PATH_MAX], iarg[256];
    char *sargv[MAX_ARGS + 2], magic[2];
    if (n->size >= 2 && !lx_node_read(n, 0, magic, 2) && !memcmp(magic, "#!", 2)) {
        int has_arg = lx_script_line(node, interp, sizeof(interp), iarg, sizeof(iarg));
        if (has_arg < 0)
            return has_arg;
        if (argc + 1 + has_arg > MAX_ARGS + 2)
            return -LX_E2BIG;
        int32_t in = lx_script_interp(interp);
        if (in < 0)
            return in;
        int k = 0;
        sargv[k++] = interp;
        if (has_arg)
            sargv[k++] = iarg;
        for (int i = 0; i < argc; i++)
            sargv[k++] = argv[i];
        argv = sargv;
        argc = k;
        node = in;
    }
    struct lx_proc *p = lx_proc_new(NULL, &err);  /* started by a native program: no Linux parent */
    if (!p)
        return err;
    p->pgid = p->sid = 0;                       /* as a child of Linux's /init: in its group and session 0 */
    const char *base = path;
    for (const char *s = path; *s; s++)
        if (*s == '/' && s[1])
            base = s + 1;
    memcpy(p->comm, base, strnlen(base, sizeof(p->comm) - 1));
    uint64_t pc, sp;
    err = lx_files_init(p);
    if (!err)
        err = lx_load(p, node, path, argv[0], argv, argc, envp, envc, &pc, &sp);
    if (!err)
        err = lx_thread_start(lx_main_thread(p), 0, pc, sp, 0, NULL);
    if (err) {
        lx_proc_discard(p);
        return err;
    }
    return p->pid;
}

static void script_next(void);

void lx_end_borrowers(struct lx_proc *p)
{
    if (!p->borrowed)
        return;
    for (struct lx_proc *q = lx_procs(); q; q = q->next)
        if (q->used && !q->ended && q->vm_of == p)
            lx_proc_end(q, LX_SIGKILL);
}

void lx_proc_end(struct lx_proc *p, int status)
{
    if (p->ended)
        return;                                 /* (ended already: what follows may reach here again) */
    p->ended = 1;                               /* first: a signal its end sends does not come back to it */
    p->status = status;
    if (p->sid == p->pid)
        lx_tty_leader_gone(p);                  /* its pseudo-terminal's foreground group: SIGHUP */
    proc_release(p);
    lx_wake_all(LX_BLK_VFORK, p->pid);          /* a vfork parent goes on */
    struct lx_proc *q = p->first_child;
    p->first_child = p->last_child = NULL;
    while (q) {
        struct lx_proc *next = q->sibling;
        q->sibling = q->sibling_prev = NULL;
        q->ppid = 0;
        if (q->ended)
            lx_proc_free(q);                    /* nobody will wait for these */
        else
            q->orphan = 1;
        q = next;
    }
    struct lx_proc *parent = p->ppid ? lx_proc_of_pid(p->ppid) : NULL;
    if (p->waiter) {
        linux_wait_reply(p->waiter, 0, (uint64_t)status);
        lx_proc_free(p);
    } else if (script.token && p->pid == script.pid) {
        char line[48];
        int code = (status >> 8) & 0xff, sig = status & 0x7f;
        int len = sig ? lx_format(line, sizeof(line), "lx: signal %d\n", sig) :
                        lx_format(line, sizeof(line), "lx: exit %d\n", code);
        svc_console_write(line, (uint64_t)len);
        if (sig)
            script.status = 128 + sig;
        else if (code)
            script.status = code;
        lx_proc_free(p);
        script_next();
    } else if (parent) {
        const struct lx_sigaction *ka = &parent->act[LX_SIGCHLD - 1];
        int sig = status & 0x7f;
        struct lx_sinfo si = { sig ? LX_CLD_KILLED : LX_CLD_EXITED, p->pid, sig ? sig : (status >> 8) & 0xff, 0, 0, 0 };
        if (ka->handler == 1 || (ka->flags & 2))
            lx_proc_free(p);                   /* SIG_IGN or SA_NOCLDWAIT: nobody waits for it */
        lx_sig_send(parent, LX_SIGCHLD, &si);
        lx_wake_proc(parent, LX_BLK_WAIT);      /* a thread waiting for a child looks again */
    } else if (p->orphan) {
        lx_proc_free(p);
    }
}

void lx_wake_resume(struct lx_thread *t, int64_t result)
{
    svc_token token = t->blk.token;
    uint64_t resume[4] = { FAULT_REPLY_RESUME, t->blk.pc, t->blk.sp, (uint64_t)result };
    uint64_t nr = t->blk.x[8];
    t->blk.kind = 0;                            /* (what else it kept is read only with a token) */
    t->blk.token = 0;
    t->blk.on = 0;
    set_waiting(t, 0);
    if (!token)
        return;
    lx_io_end(t);                               /* answered: the call is over */
    t->timed = 0;
    t->timed_calendar = 0;
    trace_lx_exit((uint32_t)t->p->pid, (uint32_t)t->tid, nr, (uint64_t)result);
    svc_reply_later(token, 0, 4, resume);
}

void lx_wake(struct lx_thread *t, int64_t result)
{
    if (t->blk.kind == LX_BLK_VFORK) {
        lx_wake_resume(t, result);
        return;
    }
    struct lx_block b = t->blk;
    t->blk = (struct lx_block){ 0 };
    set_waiting(t, 0);
    if (!b.token)
        return;
    uint64_t again[12] = { FAULT_REPLY_RESUME, b.pc - 4, b.sp };   /* the `svc` once more */
    for (int i = 0; i < 9; i++)
        again[3 + i] = b.x[i];
    svc_reply_later(b.token, 0, 12, again);
}

/* The services the personality calls signal one wakeup; each signal has
 * all of them looked at again. */
static svc_handle wakeup_note;
static uint64_t wakeup_bits;

static void woken(void)
{
    lx_inet_changed();
    lx_data_changed();
    lx_evdev_changed();
    lx_fb_changed();
}

svc_handle lx_wakeup(uint64_t *bits)
{
    if (!wakeup_note)
        wakeup_note = svc_wakeup(woken, &wakeup_bits);
    *bits = wakeup_bits;
    return wakeup_note;
}

int64_t lx_block(struct lx_ctx *c, int kind, int32_t on)
{
    c->t->blk.kind = kind;
    c->t->blk.on = on;
    return LX_BLOCK;
}

static uint64_t io_generation;

uint64_t lx_io_generation(void)
{
    return io_generation;
}

void lx_wake_all(int kind, int32_t on)
{
    int io = kind != LX_BLK_WAIT && kind != LX_BLK_VFORK;
    io_generation += io;
    /* A woken thread leaves its queue, and nothing else does meanwhile:
     * the next one is taken before it is woken. */
    for (struct lx_thread *t = wq_first[wq_of(kind, on)], *next; t; t = next) {
        next = t->wq_next;
        if (t->blk.kind == kind && t->blk.on == on)
            lx_wake(t, kind == LX_BLK_VFORK ? on : 0);     /* a vfork parent learns the child's pid */
    }
    for (struct lx_thread *t = io ? wq_first[wq_of(LX_BLK_POLL, 0)] : NULL, *next; t; t = next) {
        next = t->wq_next;
        if (t->blk.kind == LX_BLK_POLL)
            lx_wake(t, 0);                      /* a poll looks again at what it waits on */
    }
}

void lx_wake_proc(struct lx_proc *p, int kind)
{
    for (struct lx_thread *t = p->first_thread; t; t = t->sibling)
        if (t->blk.token && t->blk.kind == kind)
            lx_wake(t, 0);
}

void lx_thread_exit(struct lx_ctx *c, int status)
{
    struct lx_thread *t = c->t;
    if (t->p->nthreads <= 1) {
        lx_proc_end(t->p, status);              /* the last thread: the process ends */
        return;
    }
    if (t->clear_tid) {                         /* pthread_join's word: zeroed, and its waiter woken */
        uint32_t zero = 0;
        if (lx_copy_out(c, t->clear_tid, &zero, sizeof(zero)) == 0)
            lx_futex_wake_addr(t->p, t->clear_tid, 1);
    }
    uint64_t stop[1] = { FAULT_REPLY_STOP };
    svc_reply(c->call, 0, 1, stop);             /* its kernel thread ends */
    lx_thread_free(t);
}

/* ---------------------------------------------------------------- starting commands */

/* The environment of a command (tests/linux/init.c gives Linux's the same):
 * PATH is Debian's for root. */
#define LX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
static char *const default_env[] = { "HOME=/", "TERM=linux", ("PATH=" LX_PATH) };

/* Start the next command of the script, or finish it. */
static void script_next(void)
{
    while (script.at < script.len) {
        static char line[LX_LINE_MAX];          /* (one script runs at a time) */
        char *argv[MAX_ARGS], path[96];
        uint32_t start = script.at, end = script.at;
        while (end < script.len && script.text[end] != '\n')
            end++;
        uint32_t n = end - script.at < sizeof(line) - 1 ? end - script.at : sizeof(line) - 1;
        const char *shown = script.text + script.at;    /* (cmd_words changes line) */
        memcpy(line, shown, n);
        line[n] = 0;
        script.at = end + 1;
        int argc = cmd_words(line, argv, MAX_ARGS);
        if (argc == 0 || argv[0][0] == '#')
            continue;
        static char said[LX_LINE_MAX + 16];     /* (one write: no other core's line lands inside it) */
        memcpy(said, "lx: run ", 8);
        memcpy(said + 8, shown, n);
        said[8 + n] = '\n';
        if (script.said != start + 1)
            svc_console_write(said, 8 + (uint64_t)n + 1);   /* (once: not again when it goes on after a pause) */
        script.said = start + 1;
        int pid = -LX_ENOENT;
        if (argv[0][0] == '/') {
            pid = lx_exec(argv, argc, default_env, 3);
        } else {                                /* a bare name: the first of PATH's directories that has it */
            const char *name = argv[0];
            uint64_t len = strnlen(name, sizeof(path) - 20);
            argv[0] = path;
            for (const char *dir = LX_PATH; *dir && pid == -LX_ENOENT; ) {
                uint64_t at = 0;
                while (dir[at] && dir[at] != ':')
                    at++;
                memcpy(path, dir, at);
                path[at] = '/';
                memcpy(path + at + 1, name, len);
                path[at + 1 + len] = 0;
                pid = lx_exec(argv, argc, default_env, 3);
                dir += at + (dir[at] == ':');
            }
        }
        if (pid > 0) {
            script.pid = pid;
            return;
        }
        if (pid == LX_DISKWAIT) {
            /* Its program is on the disk and not read yet; where this
             * runs may not wait for the disk (the end of a process, in a
             * kernel-placed personality's interrupt time). `run` answers
             * E_AGAIN and, called again, goes on from this line. */
            script.at = start;
            script.paused = 1;
            svc_token t = script.token;
            script.token = 0;
            linux_run_reply(t, SVC_E_AGAIN, 0);
            return;
        }
        char msg[48];
        svc_console_write(msg, (uint64_t)lx_format(msg, sizeof(msg), "lx: cannot run, errno %d\n", -pid));
        script.status = 127;
    }
    svc_console_write("lx: done\n", 9);
    svc_token t = script.token;
    script.token = 0;
    linux_run_reply(t, 0, (uint64_t)script.status);
}

/* ---------------------------------------------------------------- the interface's methods */

static int64_t m_exec(struct svc_call *call, const uint8_t *cmd, uint32_t len, uint64_t *pid)
{
    static char buf[256];
    char *argv[MAX_ARGS], *envp[MAX_ARGS];
    int argc = 0, envc = 0, in_env = 0;
    memcpy(buf, cmd, len);
    buf[len] = 0;
    for (uint32_t i = 0; i < len; ) {
        uint32_t n = (uint32_t)strnlen(buf + i, len - i);
        if (i + n >= len)
            return SVC_E_INVAL;                 /* each string ends in a NUL */
        if (n == 0 && !in_env)
            in_env = 1;
        else if (in_env && n && envc < MAX_ARGS)
            envp[envc++] = buf + i;
        else if (!in_env && argc < MAX_ARGS)
            argv[argc++] = buf + i;
        else
            return SVC_E_INVAL;
        i += n + 1;
    }
    int r = lx_exec(argv, argc, envp, envc);
    if (r < 0)
        return r == LX_DISKWAIT ? SVC_E_AGAIN : r == -LX_ENOENT ? SVC_E_NOENT : r == -LX_EACCES ? SVC_E_PERM :
               r == -LX_ENOEXEC || r == -LX_EINVAL ? SVC_E_INVAL : r == -LX_EAGAIN ? SVC_E_LIMIT : SVC_E_NOMEM;
    *pid = (uint64_t)r;
    return 0;
}

static int64_t m_wait(struct svc_call *call, uint64_t pid, uint64_t *status)
{
    struct lx_proc *p = pid < 1u << 30 ? lx_proc_of_pid((int)pid) : NULL;
    if (!p || p->ppid || p->orphan)
        return SVC_E_NOENT;                     /* not one a native program started */
    if (p->ended) {
        *status = (uint64_t)p->status;
        lx_proc_free(p);
        return 0;
    }
    if (p->waiter || (script.token && script.pid == p->pid))
        return SVC_E_BUSY;
    p->waiter = svc_defer(call);
    return p->waiter ? SVC_DEFERRED : SVC_E_NOMEM;
}

static int64_t m_run(struct svc_call *call, const uint8_t *path, uint32_t len, uint64_t *status)
{
    char name[97];
    if (script.token)
        return SVC_E_BUSY;
    int err = fs();
    if (err)
        return SVC_E_NOENT;
    memcpy(name, path, len);
    name[len] = 0;
    if (script.paused && strcmp(name, script.path))
        script.paused = 0;                      /* (another file's run: the stopped one is given up) */
    if (script.paused) {
        script.paused = 0;
        script.token = svc_defer(call);
        if (!script.token) {
            script.paused = 1;
            return SVC_E_NOMEM;
        }
        script_next();
        return SVC_DEFERRED;
    }
    int32_t node = lx_lookup(LX_ROOT, name, 1);
    struct lx_node *n = node >= 0 ? lx_node(node) : NULL;
    if (!n || (n->mode & LX_S_IFMT) != LX_S_IFREG)
        return SVC_E_NOENT;
    if (!script.text && !(script.text = svc_alloc(LX_SCRIPT_MAX)))
        return SVC_E_NOMEM;
    if (n->size >= LX_SCRIPT_MAX || lx_node_read(n, 0, script.text, n->size))
        return SVC_E_INVAL;
    script.len = (uint32_t)n->size;
    script.at = 0;
    script.status = 0;
    script.said = 0;
    memcpy(script.path, name, len + 1);
    script.token = svc_defer(call);
    if (!script.token)
        return SVC_E_NOMEM;
    script_next();
    return SVC_DEFERRED;
}

static int64_t m_unmount(struct svc_call *call)
{
    (void)call;
    if (fs())
        return 0;
    int64_t r = lx_data_unmount();
    return r == LX_DISKWAIT ? SVC_E_AGAIN : r ? SVC_E_IO : 0;
}

static int64_t m_mount(struct svc_call *call, const uint8_t *path, uint32_t path_len)
{
    (void)call;
    char p[97];
    if (fs())
        return SVC_E_NOENT;
    if (path_len == 0 || path_len > 96)
        return SVC_E_INVAL;
    memcpy(p, path, path_len);
    p[path_len] = 0;
    if (strlen(p) != path_len)
        return SVC_E_INVAL;                     /* (a NUL inside) */
    int32_t dir = lx_lookup(LX_ROOT, p, 1);
    int64_t r = dir == LX_DISKWAIT ? LX_DISKWAIT : dir < 0 ? -LX_ENOENT : 0;
    if (!r) {
        r = lx_mount_disk(dir, LX_MS_RELATIME);
        if (r == -LX_EACCES || r == -LX_EROFS)
            r = lx_mount_disk(dir, LX_MS_RDONLY | LX_MS_RELATIME);     /* as mount(8) retries */
    }
    switch (r) {
    case 0: return 0;
    case LX_DISKWAIT: return SVC_E_AGAIN;
    case -LX_ENXIO: case -LX_ENOENT: return SVC_E_NOENT;
    case -LX_EBUSY: return SVC_E_BUSY;
    case -LX_EIO: return SVC_E_IO;
    default: return SVC_E_INVAL;
    }
}

static int64_t m_binder_device(struct svc_call *call, const uint8_t *name, uint32_t name_len)
{
    (void)call;
    char n[32];
    if (name_len == 0 || name_len >= sizeof(n))
        return SVC_E_INVAL;
    memcpy(n, name, name_len);
    n[name_len] = 0;
    if (strlen(n) != name_len)
        return SVC_E_INVAL;                     /* (a NUL inside) */
    if (fs())
        return SVC_E_NOMEM;                     /* (no root file system: no /dev) */
    switch (lx_binder_device_add(n)) {
    case 0: return 0;
    case -LX_EEXIST: return SVC_E_BUSY;
    case -LX_ENOSPC: return SVC_E_LIMIT;
    case -LX_ENOMEM: return SVC_E_NOMEM;
    default: return SVC_E_INVAL;
    }
}

const struct linux_ops linux_ops = { m_exec, m_wait, m_run, m_unmount, m_mount, m_binder_device };

/* ---------------------------------------------------------------- faults */

/* The calls that wait on the open file of their first argument, a descriptor. */
static int waits_on_fd(uint64_t nr)
{
    switch (nr) {
    case NR_read: case NR_write: case NR_readv: case NR_writev: case NR_sendto: case NR_recvfrom:
    case NR_sendmsg: case NR_recvmsg: case NR_sendmmsg: case NR_recvmmsg: case NR_accept: case NR_accept4:
    case NR_connect: case NR_epoll_pwait: case NR_epoll_pwait2: case NR_ioctl:
        return 1;
    default:
        return 0;
    }
}

/* The call c serves (nr) waits: it keeps its open file (a reference) for
 * its restarts, as a Linux call keeps the file it works on however its
 * descriptor changes meanwhile. */
static void io_keep(struct lx_ctx *c, uint64_t nr)
{
    struct lx_io *io = &c->t->io;
    uint32_t fd = (uint32_t)c->mr[FAULT_MR_X0];
    if (io->file || !waits_on_fd(nr))
        return;                                 /* (kept already: this is one of its restarts) */
    struct lx_file *f = lx_fd_file(c->p, fd);
    if (!f)
        return;
    lx_file_get(f);
    io->nr = nr;
    io->pc = c->mr[FAULT_MR_PC];
    io->fd = fd;
    io->file = f;
}

/* A system call (or a real fault) of process p, answered now or kept;
 * false only for a call the register entry left (LX_SLOW: nothing done,
 * no answer). */
static bool serve(struct lx_ctx *c)
{
    struct lx_thread *t = c->t;
    const uint64_t *mr = c->mr;
    if (mr[FAULT_MR_KIND] != FAULT_FOREIGN_SYSCALL) {
        lx_sig_fault(c, (unsigned)mr[FAULT_MR_KIND], mr[FAULT_MR_ADDR], mr[FAULT_MR_ESR]);
        return true;
    }
    uint64_t nr = mr[FAULT_MR_X0 + 8];
    int tid = t->tid;
    if (svc_trace_enabled[TP_LX_ENTER / 64] >> (TP_LX_ENTER % 64) & 1)
        lx_trace_enter(c, nr, &mr[FAULT_MR_X0]);
    t->retried = 0;                             /* (a fault after a call is a new one) */
    int64_t r = lx_syscall(c, nr, &mr[FAULT_MR_X0]);
    if (r == LX_DISKWAIT)                       /* a block of the disk not in yet: nothing was done */
        r = c->fast || !svc_may_call() ? LX_SLOW : lx_block(c, LX_BLK_DISK, 0);   /* (the register entry:
                                                 * the full path asks the disk) */
    if (r == LX_SLOW)
        return false;
    if (r == LX_NORETURN || !t->used || t->tid != tid)
        return true;                            /* its thread is gone (and its io with it): a vfork child
                                                 * that killed its parent ends with the space it ran in */
    if (r == LX_BLOCK) {
        if (lx_sig_interrupted(c, nr)) {        /* EINTR, or the handler first with SA_RESTART */
            t->timed = 0;
            t->timed_calendar = 0;
            lx_io_end(t);
            return true;
        }
        t->blk.token = svc_defer(c->call);
        if (t->blk.token) {
            io_keep(c, nr);
            set_waiting(t, 1);
            t->blk.pc = mr[FAULT_MR_PC];
            t->blk.sp = mr[FAULT_MR_SP];
            for (int i = 0; i < 9; i++)
                t->blk.x[i] = mr[FAULT_MR_X0 + i];
            if (t->timed)
                lx_timer_note(t->deadline);
            return true;
        }
        t->blk.kind = LX_BLK_NONE;
        r = t->io.done ? (int64_t)t->io.done : -LX_ENOMEM;
    }
    uint64_t pc = mr[FAULT_MR_PC];
    int again = r == LX_AGAIN;
    if (again) {
        /* Its `svc` once more, with its own x0, behind the calls queued
         * meanwhile (a handler first if a signal is pending, as after
         * Linux's ERESTARTNOINTR): the personality's time per attempt is
         * bounded, and a thread that keeps losing spends only its own. */
        pc -= 4;
        r = (int64_t)mr[FAULT_MR_X0];
        c->yield = 1;
    }
    if (t->io.file || t->io.done)
        lx_io_end(t);                           /* the call is done: what it kept goes */
    t->intr = 0;                                /* ... and a wake-up it had is spent */
    t->timed = 0;
    t->timed_calendar = 0;
    if (!again && svc_trace_enabled[TP_LX_EXIT / 64] >> (TP_LX_EXIT % 64) & 1)
        lx_trace_exit(c, nr, &mr[FAULT_MR_X0], r);      /* (a call run again is entered again) */
    lx_sig_reply(c, pc, r);                     /* pending signals are acted on here */
    return true;
}

/* The fault of thread t (alive, its process not ended), served. */
static bool fault_of(struct svc_call *call, const uint64_t *mr, struct lx_thread *t, int fast)
{
    struct lx_proc *p = t->p;
    struct lx_ctx c = { p, t, mr[FAULT_MR_X0 + 8], call, mr, 0, fast };
    t->in_call = 1;                             /* signals it is sent now wait for its answer */
    bool served = serve(&c);
    t->in_call = 0;
    if (p->doomed && p->used && !p->ended)
        lx_proc_end(p, p->doomed);              /* a fatal signal that came during the call */
    return served;
}

static void fault(struct svc_call *call)
{
    struct lx_thread *t = thread_of_badge(call->badge);
    if (!t || t->p->ended) {
        uint64_t stop[1] = { FAULT_REPLY_STOP };
        svc_reply(call, 0, 1, stop);
        return;
    }
    fault_of(call, call->mr, t, 0);
}

/* Linux calls that never wait and whose work is bounded, which the
 * register entry below may serve: read, pread, write and pwrite of at most
 * FAST_IO bytes on a regular file (not /proc's; a write only inside the
 * file, not past its end or appending) or /dev/null or /dev/zero,
 * a read or write of a pipe or a connected stream socket that finishes
 * without waiting, and calls that only read or set the caller's own
 * state (sched_yield among them: its answer is all it does).
 * 1: such a call; 2: one if its descriptor says so (io_bounded); 3: one
 * if its arguments say it cannot wait (poll_bounded); 0: not. */
#define FAST_IO         (64 * 1024)

static int bounded_call(uint64_t nr)
{
    switch (nr) {
    case NR_getcwd: case NR_dup: case NR_dup3: case NR_lseek: case NR_newfstatat: case NR_fstat:
    case NR_clock_gettime: case NR_clock_getres: case NR_sigaltstack: case NR_rt_sigaction:
    case NR_rt_sigprocmask: case NR_rt_sigpending: case NR_times: case NR_uname: case NR_getrusage:
    case NR_umask: case NR_gettimeofday: case NR_sysinfo: case NR_statx: case NR_sched_yield:
        return 1;
    case NR_read: case NR_pread64: case NR_write: case NR_pwrite64:
        return 2;
    case NR_pselect6: case NR_ppoll:
        return 3;
    default:
        return 0;
    }
}

/* pselect6 or ppoll (nr, registers x) that may be served on the
 * register entry: few enough descriptors that the scan is short, and a
 * timeout given. Whether it would wait (a timeout other than zero) or
 * change the signal mask shows only once the call has read them: it then
 * answers LX_SLOW, nothing done, and the full path serves it. */
#define FAST_SELECT_FDS 1024
#define FAST_POLL_FDS   64

static int poll_bounded(uint64_t nr, const uint64_t *x)
{
    return nr == NR_pselect6 ? x[0] <= FAST_SELECT_FDS && x[4] : x[1] <= FAST_POLL_FDS && x[2] && !x[3];
}

/* A read or write (nr) of x[2] bytes through open file f (descriptor
 * x[0]'s, or the file a kept call runs on) of process p: bounded (see above)? */
static int io_bounded(struct lx_proc *p, struct lx_file *f, uint64_t nr, const uint64_t *x)
{
    const struct lx_node *n = f && f->kind == LX_FILE_NODE ? lx_node(f->node) : NULL;
    if (!f || x[2] > FAST_IO)
        return 0;
    if (f->kind == LX_FILE_SOCK)                /* a stream socket or a pipe's end: if it would not wait */
        return (nr == NR_read || nr == NR_write) && lx_sock_ready(f, nr == NR_write, x[2]);
    if (f->kind == LX_FILE_PIPE)
        return (nr == NR_read || nr == NR_write) && lx_pipe_ready(f, nr == NR_write, x[2]);
    if (!n)
        return 0;
    uint32_t kind = n->mode & LX_S_IFMT;
    int dev = kind == LX_S_IFCHR ? (int)n->dev : -1;
    if (kind == LX_S_IFREG && (nr == NR_write || nr == NR_pwrite64)) {
        /* Inside the file only: growing it may move its contents or remap its shared mappings. */
        uint64_t pos = nr == NR_pwrite64 ? x[3] : f->pos;
        return !n->proc && n->fs != LX_FS_DATA && !(f->flags & O_APPEND) && pos <= n->size && x[2] <= n->size - pos &&
               p->rlim[LX_RLIMIT_FSIZE][0] == ~0ull;   /* (past a file size limit: SIGXFSZ, the full path) */
    }
    return (kind == LX_S_IFREG && !n->proc && n->fs != LX_FS_DATA) || dev == LX_DEV_NULL || dev == LX_DEV_ZERO;
}

/* A read or write (nr) of /dev/null, /dev/zero or /dev/full through
 * descriptor x[0] (open file f, or NULL) by thread t, with no call kept,
 * at most FAST_IO bytes at x[1], for the shared entry: what read_file and write_file do with them (no position,
 * no state: zeros out, end of file, or every byte taken; a full device's
 * write and every error go the usual way), or SVC_FAST_OTHER. */
static int serve_null_zero(struct svc_call *call, const uint64_t *mr, struct lx_thread *t, struct lx_file *f,
                           uint64_t nr)
{
    static const uint8_t zero_page[4096];
    const uint64_t *x = &mr[FAULT_MR_X0];
    const struct lx_node *n = f && f->kind == LX_FILE_NODE ? lx_node(f->node) : NULL;
    if (!n || (n->mode & LX_S_IFMT) != LX_S_IFCHR || x[2] > FAST_IO || !lx_range_ok(x[1], x[2]))
        return SVC_FAST_OTHER;
    unsigned acc = f->flags & O_ACCMODE;
    if (nr == NR_read && acc != O_WRONLY && (n->dev == LX_DEV_ZERO || n->dev == LX_DEV_FULL)) {
        for (uint64_t done = 0; done < x[2]; done += sizeof(zero_page)) {
            uint64_t chunk = x[2] - done < sizeof(zero_page) ? x[2] - done : sizeof(zero_page);
            if (svc_copy_out_try(call, x[1] + done, zero_page, chunk))
                return SVC_FAST_OTHER;          /* a page not there yet, or none: the usual path */
        }
    } else if (!(nr == NR_read && acc != O_WRONLY && n->dev == LX_DEV_NULL) &&
               !(nr == NR_write && acc != 0 /* O_RDONLY */ && (n->dev == LX_DEV_NULL || n->dev == LX_DEV_ZERO))) {
        return SVC_FAST_OTHER;
    }
    t->retried = 0;                             /* as serve: a fault after a call is a new one, */
    t->intr = 0;                                /* and a wake-up it had is spent */
    t->timed = 0;
    t->timed_calendar = 0;
    int64_t r = nr == NR_read && n->dev == LX_DEV_NULL ? 0 : (int64_t)x[2];
    uint64_t resume[4] = { FAULT_REPLY_RESUME, mr[FAULT_MR_PC], mr[FAULT_MR_SP], (uint64_t)r };
    svc_reply(call, 0, 4, resume);
    return SVC_FAST_ANSWERED;
}

/* A bounded call (nr, from message mr; `bounded` as bounded_call says)
 * for the register entry: served as any fault (fault_of), the message
 * read where it is (not copied into the call), unless a signal is
 * pending (even a blocked one: the call might unblock it) or its
 * descriptor makes it unbounded. Out of line, so the calls that are not
 * served here pay nothing for it. */
static __attribute__((noinline)) int serve_bounded(struct svc_call *call, const uint64_t *mr, uint64_t nr,
                                                   int bounded)
{
    struct lx_thread *t = thread_of_badge(call->badge);
    if (!t || t->p->ended || t->pending || t->p->pending || t->p->doomed || t->restore_mask)
        return SVC_FAST_OTHER;
    if (bounded == 2) {
        /* A kept call run again (woken: its reader or writer moved) is
         * bounded by its own file, not by what its descriptor names now. */
        const struct lx_io *io = &t->io;
        if (io->file && (io->nr != nr || io->fd != (uint32_t)mr[FAULT_MR_X0] || io->pc != mr[FAULT_MR_PC]))
            return SVC_FAST_OTHER;
        struct lx_file *f = io->file ? io->file : lx_fd_use(t->p, mr[FAULT_MR_X0]);
        if (f && f->kind == LX_FILE_NODE && (nr == NR_read || nr == NR_write) && !io->file && !io->done &&
            serve_null_zero(call, mr, t, f, nr) == SVC_FAST_ANSWERED)
            return SVC_FAST_ANSWERED;           /* as the shared entry serves it */
        if (!io_bounded(t->p, f, nr, &mr[FAULT_MR_X0]))
            return SVC_FAST_OTHER;
    }
    if (bounded == 3 && (t->io.file || !poll_bounded(nr, &mr[FAULT_MR_X0])))
        return SVC_FAST_OTHER;
    return fault_of(call, mr, t, bounded == 3) ? SVC_FAST_ANSWERED : SVC_FAST_OTHER;
}

/* getpid, getppid, gettid and the uid and gid calls of thread t, answered
 * from the process table (0 for the ids: one user, root). */
static int serve_ids(struct svc_call *call, const uint64_t *mr, struct lx_thread *t, uint64_t nr)
{
    if (!t || t->p->ended || ((t->pending | t->p->pending) & ~t->blocked))
        return SVC_FAST_OTHER;                  /* a signal to act on: the full path delivers it */
    int64_t r = nr == NR_getpid ? t->p->pid : nr == NR_gettid ? t->tid : nr == NR_getppid ? t->p->ppid : 0;
    uint64_t resume[4] = { FAULT_REPLY_RESUME, mr[FAULT_MR_PC], mr[FAULT_MR_SP], (uint64_t)r };
    svc_reply(call, 0, 4, resume);
    return SVC_FAST_ANSWERED;
}

/* clock_gettime of a clock that only reads the counter, and
 * gettimeofday without a time zone, for thread t: the time written with
 * an access that does not fault (svc_copy_out_try; a page not there yet
 * takes the usual path). */
static int serve_clock(struct svc_call *call, const uint64_t *mr, struct lx_thread *t, uint64_t nr)
{
    const uint64_t *x = &mr[FAULT_MR_X0];
    uint64_t ns;
    if (!t || t->p->ended || ((t->pending | t->p->pending) & ~t->blocked))
        return SVC_FAST_OTHER;                  /* a signal to act on: the full path delivers it */
    if (nr == NR_gettimeofday ? x[1] || !x[0] : lx_clock_counter_ns(x[0], &ns) != 0)
        return SVC_FAST_OTHER;
    if (nr == NR_gettimeofday)
        ns = svc_clock_ns() + lx_realtime_base();
    uint64_t buf = nr == NR_gettimeofday ? x[0] : x[1];
    int64_t ts[2] = { (int64_t)(ns / 1000000000ull), (int64_t)(ns % 1000000000ull) };
    if (nr == NR_gettimeofday)
        ts[1] /= 1000;                          /* (microseconds) */
    if (!lx_range_ok(buf, sizeof(ts)) || svc_copy_out_try(call, buf, ts, sizeof(ts)))
        return SVC_FAST_OTHER;
    uint64_t resume[4] = { FAULT_REPLY_RESUME, mr[FAULT_MR_PC], mr[FAULT_MR_SP], 0 };
    svc_reply(call, 0, 4, resume);
    return SVC_FAST_ANSWERED;
}

/*
 * The shared register entry (idl/linux.toml: fault_shared): the part of
 * linux_fault_fast that a kernel placement on several cores runs on each
 * at once, without the kernel lock, while none of the personality's other
 * code runs (docs/design/personality.md, "Several cores"). It reads the
 * tables and writes only the calling thread's own record and memory: the
 * id calls, and reads and writes of /dev/null and /dev/zero. Reaping dead
 * records, a pending signal, and anything else: SVC_FAST_OTHER, nothing
 * done.
 */
int linux_fault_shared(struct svc_call *call, const uint64_t *mr)
{
    if (svc_trace_enabled[TP_LX_ENTER / 64] >> (TP_LX_ENTER % 64) & 1)
        return SVC_FAST_OTHER;                  /* (traced: every call through serve(), which records it) */
    uint64_t nr = mr[FAULT_MR_X0 + 8];
    int ids = nr >= NR_getpid && nr <= NR_gettid, clock = nr == NR_clock_gettime || nr == NR_gettimeofday;
    if (mr[FAULT_MR_KIND] != FAULT_FOREIGN_SYSCALL || (!ids && !clock && nr != NR_read && nr != NR_write) ||
        dead_procs || dead_threads)
        return SVC_FAST_OTHER;                  /* (every other call leaves before any lookup) */
    struct lx_thread *t = thread_of_badge(call->badge);
    int r = SVC_FAST_OTHER;
    if (ids)
        r = serve_ids(call, mr, t, nr);
    else if (clock)
        r = serve_clock(call, mr, t, nr);
    else if (t && !t->p->ended && !t->pending && !t->p->pending &&
             !t->p->doomed && !t->restore_mask && !t->io.file && !t->io.done)     /* (a kept call: the full path) */
        r = serve_null_zero(call, mr, t, lx_fd_peek(t->p, mr[FAULT_MR_X0]), nr);
    if (r == SVC_FAST_ANSWERED)
        t->shared_calls++;                      /* (its own record: no other core writes it) */
    return r;
}

/* The register entry for faults (idl/linux.toml: fault_fast): a system
 * call answered in the caller's own kernel entry when the personality is
 * in the kernel (without a request on the service's stack), and straight
 * from the received message in the user server loop: the calls that only
 * read what the process table says, and the bounded calls above. Any
 * other fault: SVC_FAST_OTHER, nothing done (linux_service serves it). */
int linux_fault_fast(struct svc_call *call, const uint64_t *mr)
{
    uint64_t nr = mr[FAULT_MR_X0 + 8];
    if (dead_procs || dead_threads)
        lx_reap();                              /* records freed by the request before this one */
    if (mr[FAULT_MR_KIND] != FAULT_FOREIGN_SYSCALL ||
        svc_trace_enabled[TP_LX_ENTER / 64] >> (TP_LX_ENTER % 64) & 1)
        return SVC_FAST_OTHER;                  /* (traced: every call through serve(), which records it) */
    if (nr >= NR_getpid && nr <= NR_gettid)
        return serve_ids(call, mr, thread_of_badge(call->badge), nr);
    int bounded = bounded_call(nr);
    return bounded ? serve_bounded(call, mr, nr, bounded) : SVC_FAST_OTHER;
}

/* The service's entry: a process's fault (its system calls among them),
 * or a request of the interface. */
void linux_service(struct svc_call *call)
{
    if (dead_procs || dead_threads)
        lx_reap();
    if (call->label == LABEL_FAULT)
        fault(call);
    else
        linux_dispatch(&linux_ops, call);
}
