/*
 * The host fuzzer of the Linux personality: libFuzzer's entry
 * (LLVMFuzzerTestOneInput) runs the personality's unmodified sources
 * (the .c files of services/linux/) on the test double of the service environment
 * (env_double.c), under AddressSanitizer and UndefinedBehaviorSanitizer,
 * and drives them with Linux system calls from several processes and
 * threads. docs/design/fuzzing.md describes it; tests/hostfuzz/Makefile
 * builds it; `./petrel fuzz personality` runs it.
 *
 * An input is a byte string:
 *
 *     [processes] then operations: [op] [actor] [arguments...] ...
 *
 * `processes` (1 + b % 3) Linux processes are started from /bin/prog as a
 * native program starts them (the interface's exec). Each operation's
 * byte names one of ops.h (b & 0x7f, modulo their count); with bit 7 set
 * the threads its call woke do not run their calls again at once (another
 * operation may come first). The actor byte (which CLOCK, INJECT and DRAIN,
 * not calls of a thread, do not have) picks the thread: below 0x80
 * the thread of that tid if it can run, else the (b & 0x7f) % n-th of the
 * n threads that can, by tid. The arguments are bytes each operation reads
 * (see op_* below); a descriptor byte below 0x80 is that descriptor,
 * else one the process holds (fd_arg). An input ends when its bytes do, or
 * after MAX_OPS operations.
 *
 * Each input starts from the personality at boot: its variables (the
 * sections lxstate.h puts them in, between __lxstate_start and
 * __lxstate_end) are copied back from a snapshot taken before the first
 * input, and the double forgets every object and frees every allocation of
 * the last input. Re-running the personality's initialisation alone would
 * not do: its tables are made at first use and then found through those
 * variables; forking a process per input would be far too slow.
 *
 * Besides the sanitizers, these checks make the input a crash:
 * - after each operation: every descriptor names a live open file (of
 *   the generation it remembers) whose count covers every descriptor
 *   naming it; every reply the personality keeps is live and its thread's;
 *   every thread waiting in a kept reply is one the personality will
 *   answer; a reopened /proc/PID/fd/N names the pipe it named (or a new
 *   one), never another one; woken calls do not wake each other for ever;
 * - the double's (env_double.c): a read, write, sendmsg or recvmsg never
 *   returns more than it was given; no stale or foreign handle or token,
 *   no second answer, no call left unanswered while its thread lives,
 *   svc_free of what svc_alloc gave with its size;
 * - the personality's own complaints on the console (console());
 * - at the end, every process is ended (exit_group from one of its
 *   threads, or a kill) and reaped, and then no process, thread, open file,
 *   pipe, socket, event object, watch, space, handle, kept reply or table
 *   of the personality may be left but its lasting ones (check_clean).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "env_double.h"
#include "lx.h"

/* Is f free, or on its way to be (its last reference gone)? */
static int file_gone(const struct lx_file *f)
{
    return f->kind == LX_FILE_FREE || f->refs == 0 || f->dying;
}

/* Is f a pipe's end? */
static int is_pipe_end(const struct lx_file *f)
{
    return f && f->kind == LX_FILE_PIPE && f->pipe >= 0;
}

/* Every thread of every process (records, not a table: lx.h): the one
 * after t, NULL for the first; NULL after the last. */
static struct lx_thread *next_thread(struct lx_thread *t)
{
    struct lx_proc *p = t ? t->p : lx_procs();
    if (t && t->sibling)
        return t->sibling;
    for (p = t ? p->next : p; p; p = p->next)
        if (p->used && p->first_thread)
            return p->first_thread;
    return NULL;
}

#define MAX_OPS         300
#define TEXT_VA         0x400000ull     /* mkroot.py: the program's text... */
#define DATA_VA         0x500000ull     /* ...and its data, the threads' scratch slots */
#define SLOT            0x10000ull
#define FUTEX_VA        (DATA_VA + 32 * SLOT)
#define HANDLER_VA      (TEXT_VA + 0x800)
#define RESTORER_VA     (TEXT_VA + 0xa00)

/* Where a thread's call arguments go, from its scratch slot's start. */
#define AT_PATH         0x000
#define AT_ADDR         0x100
#define AT_OUT          0x180
#define AT_MSG          0x200
#define AT_IOV          0x240
#define AT_CTL          0x300
#define AT_STRUCT       0x500
#define AT_EVENTS       0x600
#define AT_DATA         0x1000

enum {
#define HF_OP(name) OP_##name,
#include "ops.h"
#undef HF_OP
    NOPS
};

static const char *const op_names[] = {
#define HF_OP(name) #name,
#include "ops.h"
#undef HF_OP
};

/* ---------------------------------------------------------------- the input */

static const uint8_t *in_data;
static size_t in_size, in_at;

/* The next byte of the input (0 past its end). */
static uint8_t u8(void)
{
    return in_at < in_size ? in_data[in_at++] : 0;
}

/* ---------------------------------------------------------------- the snapshot of the personality's variables */

extern char __lxstate_start[], __lxstate_end[];
static char *snapshot;

/* Copy the personality's variables word by word, outside AddressSanitizer
 * (the range holds their red zones, which must stay as they are) and
 * outside the coverage (it is not the personality's behaviour). The range
 * is 64-byte aligned and sized (lxstate.ld, the compiler's alignment). */
__attribute__((no_sanitize("address", "coverage"))) static void copy_state(char *dst, const char *src, size_t n)
{
    volatile uint64_t *d = (volatile uint64_t *)(void *)dst;
    const volatile uint64_t *s = (const volatile uint64_t *)(const void *)src;
    for (size_t i = 0; i < n / 8; i++)
        d[i] = s[i];
    for (size_t i = n & ~(size_t)7; i < n; i++)
        ((volatile char *)dst)[i] = src[i];
}

/* ---------------------------------------------------------------- what the driver keeps track of */

/* Mappings made by mmap, per pid: where munmap may aim. */
static struct {
    int pid;
    uint64_t addr, len;
} maps[64];
static unsigned nmaps;

static unsigned nops;

/* ---------------------------------------------------------------- threads and processes */

/* The personality's thread of the double's thread t (its fault badge), or NULL. */
static struct lx_thread *lx_of(const struct hf_thread *t)
{
    if (!t->has_handler)
        return NULL;
    struct lx_thread *lt = lx_thread_of_tid((int)(t->badge >> 32));    /* (a badge: tid << 32 | slot) */
    return lt && lt->used && lt->slot == (uint32_t)t->badge ? lt : NULL;
}

/* The tid a thread of the double stands for (its badge's). */
static int tid_of(const struct hf_thread *t)
{
    return (int)(t->badge >> 32);               /* (a fault badge is tid << 32 | slot: linux.c) */
}

/* The threads that can act now (running user code, not stopped), by tid. */
static struct hf_thread *runnable[256];
static unsigned nrunnable;

static void find_runnable(void)
{
    nrunnable = 0;
    for (unsigned i = 0; i < hf_thread_count() && nrunnable < 256; i++) {
        struct hf_thread *t = hf_thread_at(i);
        struct lx_thread *lt = t->state == HT_RUN && !t->suspended ? lx_of(t) : NULL;
        if (!lt || lt->p->ended)
            continue;
        unsigned k = nrunnable++;
        while (k > 0 && tid_of(runnable[k - 1]) > tid_of(t)) {
            runnable[k] = runnable[k - 1];
            k--;
        }
        runnable[k] = t;
    }
}

/* The thread actor byte b picks, or NULL if none can act. */
static struct hf_thread *pick_actor(uint8_t b)
{
    find_runnable();
    if (!nrunnable)
        return NULL;
    if (b < 0x80)
        for (unsigned i = 0; i < nrunnable; i++)
            if (tid_of(runnable[i]) == b)
                return runnable[i];
    return runnable[(b & 0x7f) % nrunnable];
}

/* The used, not ended processes, by slot. */
static struct lx_proc *live_proc(unsigned i)
{
    unsigned n = 0;
    for (struct lx_proc *p = lx_procs(); p; p = p->next)
        if (p->used && !p->ended && n++ == i)
            return p;
    return NULL;
}

/* How many processes are used and not ended. */
static unsigned live_procs(void)
{
    unsigned n = 0;
    while (live_proc(n))
        n++;
    return n;
}

/* The descriptor byte b means for process p: below 0x40 a low descriptor
 * (b & 15), below 0x80 any (b & 63, 0x7f: -1); from 0x80 one p holds, the
 * k-th highest for k = b & 0x3f (the ones made last, which sequences use),
 * from 0xc0 any of them. */
static int64_t fd_arg(struct lx_proc *p, uint8_t b)
{
    if (b < 0x40)
        return b & 15;
    if (b < 0x80)
        return b == 0x7f ? -1 : b & 63;
    int held[64], n = 0;                        /* (the 64 lowest it holds) */
    for (int64_t fd = lx_fd_next_open(p, 0); fd >= 0 && n < 64; fd = lx_fd_next_open(p, (uint64_t)fd + 1))
        held[n++] = (int)fd;
    if (!n)
        return 0;
    return b < 0xc0 ? held[n - 1 - (b & 0x3f) % n] : held[(b & 0x3f) % n];
}

/* A thread's scratch slot, by its control page (the personality gives each
 * thread of a space its own). */
static uint64_t scratch(const struct hf_thread *t)
{
    uint64_t slot = (LX_UTCB_VA - t->utcb) / LX_PAGE;
    return DATA_VA + (slot % 32) * SLOT;
}

/* Put a call's argument into the memory of t's process. */
static void poke(struct hf_thread *t, uint64_t va, const void *src, uint64_t len)
{
    hf_poke(t->space, va, src, len);
}

/* ---------------------------------------------------------------- calls */

/* How the last call ended. */
enum { DONE, BLOCKED, ELSEWHERE, GONE };
static int last_how;
static int64_t last_result;

/* The last call's outcome, for the trace. */
static const char *how_name(void)
{
    static char buf[64];
    switch (last_how) {
    case DONE:
        snprintf(buf, sizeof(buf), "%lld", (long long)last_result);
        return buf;
    case BLOCKED:
        return "blocked";
    case ELSEWHERE:
        return "went on elsewhere (a signal handler, a restart, stopped)";
    default:
        return "thread gone";
    }
}

/* Thread t calls nr(a0..a5); its result when it returned at once (DONE),
 * or -1 with last_how saying what happened instead. */
static int64_t sys(struct hf_thread *t, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                   uint64_t a4, uint64_t a5)
{
    uint64_t a[6] = { a0, a1, a2, a3, a4, a5 };
    uint64_t pc = t->regs.pc;
    hf_syscall(t, nr, a);
    if (t->state == HT_DEAD)
        last_how = GONE;
    else if (t->state == HT_BLOCKED)
        last_how = BLOCKED;
    else if (t->state == HT_RUN && t->regs.pc == pc + 4 && !t->suspended)
        last_how = DONE;
    else
        last_how = ELSEWHERE;
    last_result = last_how == DONE ? (int64_t)t->regs.x[0] : -1;
    return last_result;
}

/* ---------------------------------------------------------------- checks after each operation */

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Every descriptor names a live open file counted at least once per descriptor. */
static void check_files(void)
{
    static uintptr_t seen[1 << 16];
    unsigned n = 0;
    for (struct lx_proc *p = lx_procs(); p; p = p->next) {
        if (!p->used || p->ended)
            continue;
        for (int64_t fd = lx_fd_next_open(p, 0); fd >= 0 && n < sizeof(seen) / sizeof(seen[0]);
             fd = lx_fd_next_open(p, (uint64_t)fd + 1)) {
            struct lx_file *f = lx_fd_file(p, (uint64_t)fd);
            if (!f)
                hf_fail("pid %d: descriptor %d names an open file freed and made again since (a stale descriptor)",
                        p->pid, (int)fd);
            if (file_gone(f))
                hf_fail("pid %d: descriptor %d names an open file that was freed (refs %u)", p->pid, (int)fd,
                        f->refs);
            if (f->refs > 1000000)
                hf_fail("pid %d: descriptor %d names an open file whose count went below zero (%u)", p->pid, (int)fd,
                        f->refs);
            seen[n++] = (uintptr_t)f;
        }
    }
    qsort(seen, n, sizeof(seen[0]), cmp_ptr);
    for (unsigned i = 0; i < n; ) {
        unsigned j = i;
        while (j < n && seen[j] == seen[i])
            j++;
        const struct lx_file *f = (const struct lx_file *)seen[i];
        if (f->refs < j - i)
            hf_fail("an open file is named by %u descriptors but counted %u times", j - i, f->refs);
        i = j;
    }
}

/* The kept replies: each is live and its thread's; each waiting thread has one the personality holds. */
static void check_tokens(void)
{
    for (struct lx_thread *lt = next_thread(NULL); lt; lt = next_thread(lt)) {
        if (!lt->used || !lt->blk.token)
            continue;
        struct hf_thread *owner = NULL;
        if (!hf_token_live(lt->blk.token, &owner))
            hf_fail("tid %d keeps a reply (token %#llx) that was answered already", lt->tid,
                    (unsigned long long)lt->blk.token);
        struct hf_thread *mine = hf_thread_of_handle(lt->thread);
        if (mine && owner != mine)
            hf_fail("tid %d keeps the reply of another thread", lt->tid);
    }
    for (unsigned i = 0; i < hf_thread_count(); i++) {
        struct hf_thread *t = hf_thread_at(i);
        if (t->state != HT_BLOCKED)
            continue;
        int held = 0;
        for (struct lx_thread *lt = next_thread(NULL); lt && !held; lt = next_thread(lt))
            held = lt->used && lt->blk.token == t->token;
        for (struct lx_proc *q = lx_procs(); q && !held; q = q->next)
            held = q->used && q->waiter == t->token;
        if (!held)
            hf_fail("tid %d waits in a reply nobody keeps any more: it waits for ever", tid_of(t));
    }
}

/* The checks after each operation. */
static void check_state(void)
{
    check_files();
    check_tokens();
}

/* ---------------------------------------------------------------- pipes seen through /proc */

/* The inode number of the pipe open file f stands for: a pipe's end's,
 * or an O_PATH name's of a pipe (its identity, which a pipe made again
 * for a name whose pipe went takes over); 0 if neither. */
static uint32_t pipe_named(const struct lx_file *f)
{
    if (is_pipe_end(f))
        return lx_pipe_ino(f);
    if (f && f->kind == LX_FILE_NAME && f->name_of == LX_NAME_PIPE)
        return f->name_ino;
    return 0;
}

/* ---------------------------------------------------------------- the operations */

#define NR(x) ((uint64_t)(x))

/* A length: 16 sizes around the interesting edges (a pipe's 64 KiB, PIPE_BUF). */
static uint64_t len_arg(uint8_t b)
{
    static const uint64_t lens[16] = { 0, 1, 7, 8, 16, 100, 512, 4095, 4096, 4097, 8192, 65535, 65536, 65537,
                                       100000, 250000 };
    return lens[b & 15];
}

static const int sigs[16] = { 0, 10, 15, 9, 19, 18, 17, 13, 14, 2, 11, 34, 12, 20, 28, 64 };

/* A pid for kill and wait: 0, -1, its own, its parent's, another's, none. */
static int64_t pid_arg(struct lx_proc *p, uint8_t b)
{
    switch (b & 7) {
    case 0:
        return 0;
    case 1:
        return -1;
    case 2:
        return p->pid;
    case 3:
        return p->ppid;
    case 4:
        return 9999;
    default: {
        unsigned n = live_procs();
        struct lx_proc *q = n ? live_proc((b >> 3) % n) : NULL;
        return q ? q->pid : 1;
    }
    }
}

/* An AF_UNIX address at va; its length. */
static uint64_t addr_arg(struct hf_thread *t, uint64_t va, uint8_t b)
{
    uint8_t a[112] = { 1, 0 };
    uint64_t len;
    switch (b % 8) {
    case 0: case 1: case 2: case 3:
        memcpy(a + 2, "\0hf", 3);
        a[5] = (uint8_t)('0' + b % 4);
        len = 6;                        /* abstract names */
        break;
    case 4: case 5:
        memcpy(a + 2, b % 8 == 4 ? "/tmp/s0" : "/tmp/s1", 8);
        len = 2 + 8;
        break;
    case 6:
        len = 2;                        /* just the family: autobind */
        break;
    default:
        a[0] = 2;                       /* AF_INET */
        len = 16;
        break;
    }
    poke(t, va, a, sizeof(a));
    return len;
}

/* openat(AT_FDCWD, path, flags): a path of 16 (b % 16), flags of 8, bit 7 O_CLOEXEC. */
static void op_openat(struct hf_thread *t, struct lx_proc *p)
{
    static const char *const paths[16] = {
        "/etc/hostname", "/etc/passwd", "/dev/null", "/dev/zero", "/", "/etc", "/proc/self/fd", "/proc/self/status",
        "/proc/self/maps", "/nonexistent", "/dev/console", "/tmp", "/etc/link", "/etc/big", "/bin/prog",
        "/proc/self/fdinfo",
    };
    static const uint32_t flags[8] = { 0, 1, 2, 010000000, 04000, 040000, 010000000 | 0100000, 2 | 02000 };
    uint8_t b = u8(), f = u8();
    const char *path = paths[b % 16];
    uint32_t fl = flags[f % 8] | (f & 0x80 ? 02000000 : 0);
    poke(t, scratch(t) + AT_PATH, path, strlen(path) + 1);
    sys(t, NR_openat, NR(-100), scratch(t) + AT_PATH, fl, 0644, 0, 0);
    hf_trace("op %u: tid %d openat(%s, %#x) = %s", nops, tid_of(t), path, fl, how_name());
    (void)p;
}

/* openat of /proc/self/fd/N (whose 0) or /proc/PID/fd/N (a process by whose), N a descriptor of
 * that process, flags of 8 (O_PATH among them); checks a reopened pipe is the one named. */
static void op_open_proc_fd(struct hf_thread *t, struct lx_proc *p)
{
    static const uint32_t flags[8] = { 0, 1, 2, 010000000, 04000, 1 | 04000, 010000000, 2 | 04000 };
    uint8_t w = u8(), b = u8(), f = u8();
    unsigned n = live_procs();
    struct lx_proc *q = w == 0 || !n ? p : live_proc(w % n);
    if (!q)
        q = p;
    int64_t fd = fd_arg(q, b);
    uint32_t fl = flags[f % 8] | (f & 0x80 ? 02000000 : 0);
    char path[64];
    if (q == p)
        snprintf(path, sizeof(path), "/proc/self/fd/%lld", (long long)fd);
    else
        snprintf(path, sizeof(path), "/proc/%d/fd/%lld", q->pid, (long long)fd);
    uint32_t ino = fd >= 0 ? pipe_named(lx_fd_file(q, (uint64_t)fd)) : 0;
    poke(t, scratch(t) + AT_PATH, path, strlen(path) + 1);
    int64_t r = sys(t, NR_openat, NR(-100), scratch(t) + AT_PATH, fl, 0, 0, 0);
    hf_trace("op %u: tid %d openat(%s, %#x) = %s%s", nops, tid_of(t), path, fl, how_name(),
             ino ? " (a pipe's)" : "");
    if (last_how != DONE || r < 0 || !ino || !p->used || p->ended)
        return;
    /* The pipe it named (its O_PATH name, or an end of that pipe, or of a
     * new one of the same inode if that one is gone, as on Linux): never
     * another pipe some process has. */
    uint32_t now = pipe_named(lx_fd_file(p, (uint64_t)r));
    if (now != ino)
        hf_fail("pid %d: %s (flags %#x) gave descriptor %lld of pipe inode %u, but it named pipe inode %u",
                p->pid, path, fl, (long long)r, now, ino);
}

/* close(fd). */
static void op_close(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    sys(t, NR_close, NR(fd), 0, 0, 0, 0, 0);
    hf_trace("op %u: tid %d close(%lld) = %s", nops, tid_of(t), (long long)fd, how_name());
}

/* read or write(fd, the data area, a length of len_arg); a write's first 8 bytes say 1 + (b >> 4). */
static void op_rw(struct hf_thread *t, struct lx_proc *p, int writing)
{
    int64_t fd = fd_arg(p, u8());
    uint8_t b = u8();
    uint64_t len = len_arg(b), value = 1 + (b >> 4);
    if (writing)
        poke(t, scratch(t) + AT_DATA, &value, sizeof(value));   /* (an eventfd adds it) */
    sys(t, writing ? NR_write : NR_read, NR(fd), scratch(t) + AT_DATA, len, 0, 0, 0);
    hf_trace("op %u: tid %d %s(%lld, %llu) = %s", nops, tid_of(t), writing ? "write" : "read", (long long)fd,
             (unsigned long long)len, how_name());
}

/* pipe2(flags of 8). */
static void op_pipe2(struct hf_thread *t, struct lx_proc *p)
{
    static const uint32_t flags[8] = { 0, 04000, 02000000, 040000, 04000 | 02000000, 0, 0, 04000 };
    uint32_t fl = flags[u8() % 8];
    int64_t r = sys(t, NR_pipe2, scratch(t) + AT_OUT, fl, 0, 0, 0, 0);
    int32_t fds[2] = { -1, -1 };
    if (last_how == DONE && r == 0)
        hf_peek(t->space, scratch(t) + AT_OUT, fds, sizeof(fds));
    (void)p;
    hf_trace("op %u: tid %d pipe2(%#x) = %s [%d, %d]", nops, tid_of(t), fl, how_name(), fds[0], fds[1]);
}

/* dup(fd). */
static void op_dup(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    sys(t, NR_dup, NR(fd), 0, 0, 0, 0, 0);
    hf_trace("op %u: tid %d dup(%lld) = %s", nops, tid_of(t), (long long)fd, how_name());
}

/* dup3(fd, b & 63, bit 7 O_CLOEXEC). */
static void op_dup3(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    uint8_t b = u8();
    uint64_t fl = b & 0x80 ? 02000000 : 0;
    sys(t, NR_dup3, NR(fd), b & 63, fl, 0, 0, 0);
    hf_trace("op %u: tid %d dup3(%lld, %d, %#llx) = %s", nops, tid_of(t), (long long)fd, b & 63,
             (unsigned long long)fl, how_name());
}

/* fcntl(fd, a command of 8, an argument for it). */
static void op_fcntl(struct hf_thread *t, struct lx_proc *p)
{
    static const uint32_t cmds[8] = { 0, 1030, 1, 2, 3, 4, 1031, 1032 };
    static const uint64_t setfl[4] = { 0, 04000, 02000, 06000 };
    int64_t fd = fd_arg(p, u8());
    uint32_t cmd = cmds[u8() % 8];
    uint8_t b = u8();
    uint64_t arg = cmd == 4 ? setfl[b % 4] : cmd == 1031 ? 4096ull << (b % 10) : cmd == 2 ? b & 1 : b & 63;
    sys(t, NR_fcntl, NR(fd), cmd, arg, 0, 0, 0);
    hf_trace("op %u: tid %d fcntl(%lld, %u, %#llx) = %s", nops, tid_of(t), (long long)fd, cmd,
             (unsigned long long)arg, how_name());
}

/* A socket type with flags: stream, datagram, seqpacket; nonblocking and close-on-exec from the high bits. */
static uint64_t sock_type(uint8_t b)
{
    static const uint64_t types[4] = { 1, 2, 5, 1 };
    return types[b % 4] | (b & 0x40 ? 04000 : 0) | (b & 0x80 ? 02000000 : 0);
}

/* socketpair(AF_UNIX, sock_type). */
static void op_socketpair(struct hf_thread *t, struct lx_proc *p)
{
    uint64_t type = sock_type(u8());
    int64_t r = sys(t, NR_socketpair, 1, type, 0, scratch(t) + AT_OUT, 0, 0);
    int32_t sv[2] = { -1, -1 };
    if (last_how == DONE && r == 0)
        hf_peek(t->space, scratch(t) + AT_OUT, sv, sizeof(sv));
    hf_trace("op %u: tid %d socketpair(%#llx) = %s [%d, %d]", nops, tid_of(t), (unsigned long long)type,
             how_name(), sv[0], sv[1]);
    (void)p;
}

/* socket(AF_UNIX, sock_type). */
static void op_socket(struct hf_thread *t, struct lx_proc *p)
{
    uint64_t type = sock_type(u8());
    sys(t, NR_socket, 1, type, 0, 0, 0, 0);
    hf_trace("op %u: tid %d socket(%#llx) = %s", nops, tid_of(t), (unsigned long long)type, how_name());
    (void)p;
}

/* bind or connect(fd, an address of addr_arg). */
static void op_bind_connect(struct hf_thread *t, struct lx_proc *p, int connect)
{
    int64_t fd = fd_arg(p, u8());
    uint8_t b = u8();
    uint64_t len = addr_arg(t, scratch(t) + AT_ADDR, b);
    sys(t, connect ? NR_connect : NR_bind, NR(fd), scratch(t) + AT_ADDR, len, 0, 0, 0);
    hf_trace("op %u: tid %d %s(%lld, address %u) = %s", nops, tid_of(t), connect ? "connect" : "bind",
             (long long)fd, b % 8, how_name());
}

/* listen(fd, a backlog of 4). */
static void op_listen(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t backlogs[4] = { 0, 1, 5, 128 };
    int64_t fd = fd_arg(p, u8());
    uint64_t backlog = backlogs[u8() % 4];
    sys(t, NR_listen, NR(fd), backlog, 0, 0, 0, 0);
    hf_trace("op %u: tid %d listen(%lld, %llu) = %s", nops, tid_of(t), (long long)fd, (unsigned long long)backlog,
             how_name());
}

/* accept4(fd, an address buffer if bit 2, flags from bits 0 and 1). */
static void op_accept4(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    uint8_t b = u8();
    uint64_t fl = (b & 1 ? 04000 : 0) | (b & 2 ? 02000000 : 0);
    uint32_t alen = 110;
    poke(t, scratch(t) + AT_OUT, &alen, sizeof(alen));
    uint64_t addr = b & 4 ? scratch(t) + AT_ADDR : 0, lenp = b & 4 ? scratch(t) + AT_OUT : 0;
    sys(t, NR_accept4, NR(fd), addr, lenp, fl, 0, 0);
    hf_trace("op %u: tid %d accept4(%lld, %#llx) = %s", nops, tid_of(t), (long long)fd, (unsigned long long)fl,
             how_name());
}

/* Write a struct msghdr at the thread's AT_MSG: one or two vectors over
 * len bytes of its data area, control data of ctllen bytes at AT_CTL. */
static void put_msghdr(struct hf_thread *t, uint64_t len, int two, uint64_t name, uint64_t namelen, uint64_t ctllen)
{
    uint64_t s = scratch(t);
    uint64_t iov[4] = { s + AT_DATA, two ? len / 2 : len, s + AT_DATA + len / 2, len - len / 2 };
    uint64_t hdr[7] = { name, namelen, s + AT_IOV, two ? 2 : 1, ctllen ? s + AT_CTL : 0, ctllen, 0 };
    poke(t, s + AT_IOV, iov, sizeof(iov));
    poke(t, s + AT_MSG, hdr, sizeof(hdr));
}

/* sendmsg(fd, b: a length of 8 (b % 8), (b >> 3) % 4 descriptors in SCM_RIGHTS (a byte each),
 * two vectors if bit 7; c: flags of 4, a destination address (addr_arg of c >> 5) if bit 4). */
static void op_sendmsg(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t lens[8] = { 0, 1, 16, 100, 4096, 65536, 250000, 3 };
    static const uint64_t flags[4] = { 0, 0x40, 0x4000, 0x4040 };
    int64_t fd = fd_arg(p, u8());
    uint8_t b = u8();
    uint64_t len = lens[b % 8];
    unsigned n = (b >> 3) % 4;
    int32_t fds[3] = { 0, 0, 0 };
    for (unsigned i = 0; i < n; i++)
        fds[i] = (int32_t)fd_arg(p, u8());
    uint8_t c = u8();
    uint64_t fl = flags[c % 4];
    uint64_t ctllen = 0, namelen = 0, name = 0;
    if (n) {
        uint8_t ctl[32] = { 0 };
        uint64_t cl = 16 + 4 * n;
        int32_t level = 1, type = 1;
        memcpy(ctl, &cl, 8);
        memcpy(ctl + 8, &level, 4);
        memcpy(ctl + 12, &type, 4);
        memcpy(ctl + 16, fds, 4 * n);
        ctllen = (cl + 7) & ~7ull;
        poke(t, scratch(t) + AT_CTL, ctl, sizeof(ctl));
    }
    if (c & 0x10) {
        name = scratch(t) + AT_ADDR;
        namelen = addr_arg(t, name, c >> 5);
    }
    put_msghdr(t, len, (b & 0x80) != 0, name, namelen, ctllen);
    sys(t, NR_sendmsg, NR(fd), scratch(t) + AT_MSG, fl, 0, 0, 0);
    hf_trace("op %u: tid %d sendmsg(%lld, %llu bytes, fds [%d %d %d] of %u, %#llx) = %s", nops, tid_of(t),
             (long long)fd, (unsigned long long)len, fds[0], fds[1], fds[2], n, (unsigned long long)fl, how_name());
}

/* recvmsg(fd, a length of len_arg, c: room for control data of 8, flags of 8, a name if bit 6, two
 * vectors if bit 7). */
static void op_recvmsg(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t ctls[8] = { 0, 24, 32, 48, 8, 144, 0, 24 };
    static const uint64_t flags[8] = { 0, 0x40, 0x42, 0x40000000, 0x100, 0x40000040, 0, 0x40 };
    int64_t fd = fd_arg(p, u8());
    uint64_t len = len_arg(u8());
    uint8_t c = u8();
    uint64_t ctllen = ctls[c % 8], fl = flags[(c >> 3) % 8];
    put_msghdr(t, len, (c & 0x80) != 0, c & 0x40 ? scratch(t) + AT_ADDR : 0, c & 0x40 ? 110 : 0, ctllen);
    sys(t, NR_recvmsg, NR(fd), scratch(t) + AT_MSG, fl, 0, 0, 0);
    hf_trace("op %u: tid %d recvmsg(%lld, %llu bytes, control %llu, %#llx) = %s", nops, tid_of(t), (long long)fd,
             (unsigned long long)len, (unsigned long long)ctllen, (unsigned long long)fl, how_name());
}

/* shutdown(fd, how). */
static void op_shutdown(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    uint64_t how = u8() % 3;
    sys(t, NR_shutdown, NR(fd), how, 0, 0, 0, 0);
    hf_trace("op %u: tid %d shutdown(%lld, %llu) = %s", nops, tid_of(t), (long long)fd, (unsigned long long)how,
             how_name());
}

/* epoll_create1(bit 0: EPOLL_CLOEXEC). */
static void op_epoll_create1(struct hf_thread *t, struct lx_proc *p)
{
    uint64_t fl = u8() & 1 ? 02000000 : 0;
    sys(t, NR_epoll_create1, fl, 0, 0, 0, 0, 0);
    hf_trace("op %u: tid %d epoll_create1(%#llx) = %s", nops, tid_of(t), (unsigned long long)fl, how_name());
    (void)p;
}

/* epoll_ctl(epoll fd, b: ADD, DEL or MOD and events of 8, fd), the fd as its data. */
static void op_epoll_ctl(struct hf_thread *t, struct lx_proc *p)
{
    static const uint32_t events[8] = { 1, 4, 1 | 0x80000000u, 1 | 0x40000000u, 1 | 4 | 0x2000, 1 | 0x10000000u, 5, 0 };
    int64_t ep = fd_arg(p, u8());
    uint8_t b = u8();
    uint64_t op = 1 + b % 3;
    int64_t fd = fd_arg(p, u8());
    uint32_t ev[4] = { events[(b >> 2) % 8], 0, (uint32_t)fd, 0 };
    poke(t, scratch(t) + AT_OUT, ev, sizeof(ev));
    sys(t, NR_epoll_ctl, NR(ep), op, NR(fd), scratch(t) + AT_OUT, 0, 0);
    hf_trace("op %u: tid %d epoll_ctl(%lld, %llu, %lld, %#x) = %s", nops, tid_of(t), (long long)ep,
             (unsigned long long)op, (long long)fd, ev[0], how_name());
}

/* epoll_pwait(epoll fd, most events of 4, a timeout of 4: 0, for ever, 10 ms). */
static void op_epoll_pwait(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t maxev[4] = { 1, 4, 32, 8 };
    static const int64_t timeouts[4] = { 0, -1, 10, 0 };
    int64_t ep = fd_arg(p, u8());
    uint8_t b = u8();
    sys(t, NR_epoll_pwait, NR(ep), scratch(t) + AT_EVENTS, maxev[b % 4], NR(timeouts[(b >> 2) % 4]), 0, 8);
    hf_trace("op %u: tid %d epoll_pwait(%lld, %llu, %lld) = %s", nops, tid_of(t), (long long)ep,
             (unsigned long long)maxev[b % 4], (long long)timeouts[(b >> 2) % 4], how_name());
}

/* eventfd2(an initial value of 4, flags of 4). */
static void op_eventfd2(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t init[4] = { 0, 1, 5, 0xffffffffull };
    static const uint64_t flags[4] = { 0, 04000, 1, 02000000 | 04000 };
    uint8_t b = u8();
    sys(t, NR_eventfd2, init[b % 4], flags[(b >> 2) % 4], 0, 0, 0, 0);
    hf_trace("op %u: tid %d eventfd2(%llu, %#llx) = %s", nops, tid_of(t), (unsigned long long)init[b % 4],
             (unsigned long long)flags[(b >> 2) % 4], how_name());
    (void)p;
}

/* timerfd_create(REALTIME or MONOTONIC, nonblocking and close-on-exec from bits 1 and 2). */
static void op_timerfd_create(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8();
    uint64_t clock = b & 1, fl = (b & 2 ? 04000 : 0) | (b & 4 ? 02000000 : 0);
    sys(t, NR_timerfd_create, clock, fl, 0, 0, 0, 0);
    hf_trace("op %u: tid %d timerfd_create(%llu, %#llx) = %s", nops, tid_of(t), (unsigned long long)clock,
             (unsigned long long)fl, how_name());
    (void)p;
}

/* timerfd_settime(fd, bit 4: absolute, a value and an interval of 0, 1, 10, 1000 ms). */
static void op_timerfd_settime(struct hf_thread *t, struct lx_proc *p)
{
    static const int64_t ms[4] = { 0, 1, 10, 1000 };
    int64_t fd = fd_arg(p, u8());
    uint8_t b = u8();
    int64_t value = ms[b % 4], every = ms[(b >> 2) % 3];
    int64_t its[4] = { every / 1000, every % 1000 * 1000000, value / 1000, value % 1000 * 1000000 };
    poke(t, scratch(t) + AT_OUT, its, sizeof(its));
    sys(t, NR_timerfd_settime, NR(fd), (b >> 4) & 1, scratch(t) + AT_OUT, 0, 0, 0);
    hf_trace("op %u: tid %d timerfd_settime(%lld, %lld ms every %lld ms) = %s", nops, tid_of(t), (long long)fd,
             (long long)value, (long long)every, how_name());
}

/* clone as fork, or as glibc's vfork (CLONE_VM | CLONE_VFORK). */
static void op_fork(struct hf_thread *t, struct lx_proc *p, int vfork)
{
    uint64_t flags = vfork ? 0x100 | 0x4000 | 17 : 17;
    sys(t, NR_clone, flags, 0, 0, 0, 0, 0);
    hf_trace("op %u: tid %d %s() = %s", nops, tid_of(t), vfork ? "vfork" : "fork", how_name());
    (void)p;
}

/* clone as pthread_create does, on a stack of 6 places in the stack area. */
static void op_thread(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8();
    uint64_t sp = LX_STACK_TOP - 0x100000ull * (1 + b % 6);
    uint64_t flags = 0x3d0f00;      /* VM FS FILES SIGHAND THREAD SYSVSEM SETTLS PARENT_SETTID CHILD_CLEARTID */
    sys(t, NR_clone, flags, sp, scratch(t) + AT_OUT, 0x1234000, scratch(t) + AT_OUT + 4, 0);
    hf_trace("op %u: tid %d clone(thread) = %s", nops, tid_of(t), how_name());
    (void)p;
}

/* exit or exit_group(status). */
static void op_exit(struct hf_thread *t, struct lx_proc *p, int group)
{
    uint64_t status = u8();
    sys(t, group ? NR_exit_group : NR_exit, status, 0, 0, 0, 0, 0);
    hf_trace("op %u: tid %d %s(%llu) = %s", nops, tid_of(t), group ? "exit_group" : "exit",
             (unsigned long long)status, how_name());
    (void)p;
}

/* kill(pid_arg, a signal of 16). */
static void op_kill(struct hf_thread *t, struct lx_proc *p)
{
    int64_t pid = pid_arg(p, u8());
    int sig = sigs[u8() % 16];
    sys(t, NR_kill, NR(pid), NR(sig), 0, 0, 0, 0);
    hf_trace("op %u: tid %d kill(%lld, %d) = %s", nops, tid_of(t), (long long)pid, sig, how_name());
}

/* tgkill(a process, one of its threads (c >> 4), a signal of 16 (c % 16)). */
static void op_tgkill(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8(), c = u8();
    unsigned n = live_procs();
    struct lx_proc *q = n ? live_proc(b % n) : p;
    if (!q)
        q = p;
    unsigned k = 0;
    struct lx_thread *lt = q->first_thread, *pick = lt;
    for (; lt; lt = lt->sibling, k++)
        if (k == (unsigned)(c >> 4))
            pick = lt;
    int tid = pick ? pick->tid : q->pid;
    int sig = sigs[c % 16];
    sys(t, NR_tgkill, NR(q->pid), NR(tid), NR(sig), 0, 0, 0);
    hf_trace("op %u: tid %d tgkill(%d, %d, %d) = %s", nops, tid_of(t), q->pid, tid, sig, how_name());
}

/* wait4(-1, or pid_arg if bit 7, options of 8). */
static void op_wait4(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t options[8] = { 0, 1, 2, 1 | 2 | 8, 0x40000000 | 1, 1, 0, 2 | 8 };
    uint8_t b = u8();
    int64_t pid = b & 0x80 ? pid_arg(p, b) : -1;
    uint64_t opt = options[u8() % 8];
    sys(t, NR_wait4, NR(pid), scratch(t) + AT_OUT, opt, 0, 0, 0);
    hf_trace("op %u: tid %d wait4(%lld, %#llx) = %s", nops, tid_of(t), (long long)pid, (unsigned long long)opt,
             how_name());
}

/* close_range(first, first + n or ~0, none, CLOSE_RANGE_CLOEXEC or CLOSE_RANGE_UNSHARE). */
static void op_close_range(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t a = u8(), b = u8(), c = u8();
    uint64_t first = a & 63, last = b == 0xff ? 0xffffffffull : first + (b & 63);
    uint64_t fl = c % 3 == 1 ? 4 : c % 3 == 2 ? 2 : 0;
    sys(t, NR_close_range, first, last, fl, 0, 0, 0);
    hf_trace("op %u: tid %d close_range(%llu, %llu, %#llx) = %s", nops, tid_of(t), (unsigned long long)first,
             (unsigned long long)last, (unsigned long long)fl, how_name());
    (void)p;
}

/* mmap(1 to 16 pages, a protection of 4, private or shared, anonymous or of fd); remembered for munmap. */
static void op_mmap(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t prots[4] = { 3, 1, 0, 5 };
    static const uint64_t kinds[4] = { 0x22, 0x21, 0x02, 0x01 };
    uint8_t a = u8(), b = u8();
    uint64_t len = (1 + a % 16) * LX_PAGE, prot = prots[b % 4], flags = kinds[(b >> 2) % 4];
    int64_t fd = flags & 0x20 ? -1 : fd_arg(p, u8());
    int64_t r = sys(t, NR_mmap, 0, len, prot, flags, NR(fd), 0);
    hf_trace("op %u: tid %d mmap(%llu, %llu, %#llx, %lld) = %s", nops, tid_of(t), (unsigned long long)len,
             (unsigned long long)prot, (unsigned long long)flags, (long long)fd, how_name());
    if (last_how == DONE && r > 0 && (uint64_t)r < LX_USER_END && nmaps < 64)
        maps[nmaps++] = (typeof(maps[0])){ p->pid, (uint64_t)r, len };
}

/* munmap of one of the process's mmaps (or a page of it), of scratch pages, or of nothing. */
static void op_munmap(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t a = u8(), b = u8();
    uint64_t mine[64], lens[64];
    unsigned n = 0;
    for (unsigned i = 0; i < nmaps; i++)
        if (maps[i].pid == p->pid) {
            mine[n] = maps[i].addr;
            lens[n++] = maps[i].len;
        }
    uint64_t addr, len;
    unsigned k = a % (n + 2);
    if (k < n) {
        addr = mine[k] + (b & 0x80 ? LX_PAGE : 0);
        len = b & 0x40 ? LX_PAGE : lens[k];
    } else if (k == n) {
        addr = DATA_VA + 31 * SLOT + (b % 16) * LX_PAGE;   /* the last scratch slot's pages */
        len = LX_PAGE * (1 + b % 3);
    } else {
        addr = 0x123000 + (b % 8) * LX_PAGE;            /* nothing there */
        len = LX_PAGE;
    }
    sys(t, NR_munmap, addr, len, 0, 0, 0, 0);
    hf_trace("op %u: tid %d munmap(%#llx, %llu) = %s", nops, tid_of(t), (unsigned long long)addr,
             (unsigned long long)len, how_name());
}

/* rt_sigaction(a signal of 16, a handler of 4 (SIG_DFL, SIG_IGN, two addresses), flags of 8). */
static void op_sigaction(struct hf_thread *t, struct lx_proc *p)
{
    static const uint64_t handlers[4] = { 0, 1, HANDLER_VA, HANDLER_VA + 0x100 };
    static const uint64_t flags[8] = { 0, 0x10000000, 0x10000004, 0x40000000, 0x80000000, 0x14000000, 2, 1 };
    int sig = sigs[u8() % 16];
    uint8_t b = u8();
    uint64_t act[4] = { handlers[b % 4], flags[(b >> 2) % 8], RESTORER_VA, b & 0x20 ? (1ull << 9) : 0 };
    poke(t, scratch(t) + AT_STRUCT, act, sizeof(act));
    sys(t, NR_rt_sigaction, NR(sig), scratch(t) + AT_STRUCT, 0, 8, 0, 0);
    hf_trace("op %u: tid %d rt_sigaction(%d, handler %#llx, flags %#llx) = %s", nops, tid_of(t), sig,
             (unsigned long long)act[0], (unsigned long long)act[1], how_name());
    (void)p;
}

/* The handler the thread runs returns: to the restorer (rt_sigreturn), or
 * without one to the control page (its instruction fault is rt_sigreturn). */
static void op_sigreturn(struct hf_thread *t, struct lx_proc *p)
{
    uint64_t lr = t->regs.x[30];
    t->regs.pc = lr;
    if (lr == LX_SIGRETURN_VA) {
        hf_fault(t, FAULT_INSN, lr, 0x20ull << 26 | 0xf);
        hf_trace("op %u: tid %d returns from a handler (through its control page)", nops, tid_of(t));
    } else {
        sys(t, NR_rt_sigreturn, 0, 0, 0, 0, 0, 0);
        hf_trace("op %u: tid %d rt_sigreturn at %#llx", nops, tid_of(t), (unsigned long long)lr);
    }
    (void)p;
}

/* rt_sigprocmask(block, unblock or set, one signal). */
static void op_sigprocmask(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8();
    uint64_t how = b % 3, set = 1ull << ((sigs[(b >> 2) % 16] ? sigs[(b >> 2) % 16] : 10) - 1);
    poke(t, scratch(t) + AT_STRUCT, &set, 8);
    sys(t, NR_rt_sigprocmask, how, scratch(t) + AT_STRUCT, 0, 8, 0, 0);
    hf_trace("op %u: tid %d rt_sigprocmask(%llu, %#llx) = %s", nops, tid_of(t), (unsigned long long)how,
             (unsigned long long)set, how_name());
    (void)p;
}

/* nanosleep(0, 1 ms, 10 ms or 1 s). */
static void op_nanosleep(struct hf_thread *t, struct lx_proc *p)
{
    static const int64_t ns[4] = { 0, 1000000, 10000000, 1000000000 };
    int64_t d = ns[u8() % 4];
    int64_t ts[2] = { d / 1000000000, d % 1000000000 };
    poke(t, scratch(t) + AT_OUT, ts, sizeof(ts));
    sys(t, NR_nanosleep, scratch(t) + AT_OUT, 0, 0, 0, 0, 0);
    hf_trace("op %u: tid %d nanosleep(%lld ns) = %s", nops, tid_of(t), (long long)d, how_name());
    (void)p;
}

/* ppoll(1 to 3 descriptors, their events, a timeout of 0 or 10 ms, or none). */
static void op_ppoll(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8();
    unsigned n = 1 + b % 3;
    uint8_t pfd[24] = { 0 };
    for (unsigned i = 0; i < n; i++) {
        int32_t fd = (int32_t)fd_arg(p, u8());
        int16_t ev = (b >> 2) & 1 ? 4 : (b >> 3) & 1 ? 5 : 1;
        memcpy(pfd + 8 * i, &fd, 4);
        memcpy(pfd + 8 * i + 4, &ev, 2);
    }
    int64_t ts[2] = { 0, (b >> 4) & 1 ? 10000000 : 0 };
    uint64_t tsp = (b >> 5) & 1 ? 0 : scratch(t) + AT_OUT;
    poke(t, scratch(t) + AT_EVENTS, pfd, sizeof(pfd));
    poke(t, scratch(t) + AT_OUT, ts, sizeof(ts));
    sys(t, NR_ppoll, scratch(t) + AT_EVENTS, n, tsp, 0, 8, 0);
    hf_trace("op %u: tid %d ppoll(%u fds, %s) = %s", nops, tid_of(t), n, tsp ? "timeout" : "no timeout",
             how_name());
}

/* execve(/bin/prog, a script, a file that is no program, nothing). */
static void op_execve(struct hf_thread *t, struct lx_proc *p)
{
    static const char *const progs[4] = { "/bin/prog", "/bin/script", "/etc/hostname", "/nonexistent" };
    const char *path = progs[u8() % 4];
    uint64_t s = scratch(t);
    uint64_t argv[3] = { s + AT_PATH, s + AT_PATH + 0x40, 0 };
    poke(t, s + AT_PATH, path, strlen(path) + 1);
    poke(t, s + AT_PATH + 0x40, "again", 6);
    poke(t, s + AT_STRUCT, argv, sizeof(argv));
    sys(t, NR_execve, s + AT_PATH, s + AT_STRUCT, 0, 0, 0, 0);
    hf_trace("op %u: tid %d execve(%s) = %s", nops, tid_of(t), path, how_name());
    (void)p;
}

/* getdents64(fd, 64 to 8192 bytes). */
static void op_getdents(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    uint64_t len = 64ull << (u8() % 8);
    sys(t, NR_getdents64, NR(fd), scratch(t) + AT_DATA, len, 0, 0, 0);
    hf_trace("op %u: tid %d getdents64(%lld, %llu) = %s", nops, tid_of(t), (long long)fd, (unsigned long long)len,
             how_name());
}

/* readlinkat of /proc/self/fd/N. */
static void op_readlink(struct hf_thread *t, struct lx_proc *p)
{
    int64_t fd = fd_arg(p, u8());
    char path[48];
    snprintf(path, sizeof(path), "/proc/self/fd/%lld", (long long)fd);
    poke(t, scratch(t) + AT_PATH, path, strlen(path) + 1);
    sys(t, NR_readlinkat, NR(-100), scratch(t) + AT_PATH, scratch(t) + AT_DATA, 256, 0, 0);
    hf_trace("op %u: tid %d readlink(%s) = %s", nops, tid_of(t), path, how_name());
}

/* The calls the register entry may answer at once. */
static void op_fast(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8();
    int64_t fd = fd_arg(p, u8());
    switch (b % 6) {
    case 0:
        sys(t, NR_getpid, 0, 0, 0, 0, 0, 0);
        break;
    case 1:
        sys(t, NR_gettid, 0, 0, 0, 0, 0, 0);
        break;
    case 2:
        sys(t, NR_fstat, NR(fd), scratch(t) + AT_DATA, 0, 0, 0, 0);
        break;
    case 3:
        sys(t, NR_lseek, NR(fd), 0, 1, 0, 0, 0);
        break;
    case 4:
        sys(t, NR_sched_yield, 0, 0, 0, 0, 0, 0);
        break;
    default:
        sys(t, NR_getppid, 0, 0, 0, 0, 0, 0);
        break;
    }
    hf_trace("op %u: tid %d fast call %u (fd %lld) = %s", nops, tid_of(t), b % 6, (long long)fd, how_name());
}

/* A real fault of the thread: its kind and address from b (a null pointer, its data, a stack guard,
 * text, a mapping). */
static void op_fault(struct hf_thread *t, struct lx_proc *p)
{
    static const unsigned kinds[4] = { FAULT_DATA, FAULT_INSN, FAULT_ALIGN, FAULT_UNDEF };
    uint8_t b = u8();
    uint64_t where[5] = { 0x10, scratch(t) + AT_DATA, LX_STACK_TOP - 0x800000 - LX_PAGE, TEXT_VA, 0x7000000000ull };
    for (unsigned i = 0; i < nmaps; i++)
        if (maps[i].pid == p->pid)
            where[4] = maps[i].addr;
    unsigned kind = kinds[b % 4];
    uint64_t addr = where[(b >> 2) % 5];
    uint64_t esr = kind == FAULT_DATA ? (0x24ull << 26 | (b & 0x80 ? 1u << 6 : 0) | 0x7) :
                   kind == FAULT_UNDEF ? (b & 0x40 ? 0x3cull << 26 : 0) : 0x20ull << 26;
    hf_fault(t, kind, addr, esr);
    hf_trace("op %u: tid %d fault %u at %#llx (esr %#llx): %s", nops, tid_of(t), kind, (unsigned long long)addr,
             (unsigned long long)esr, t->state == HT_DEAD ? "thread gone" : "resumed");
}

/* One of four futex words: wait while it holds what it holds, wake, change it, wait for a value it does not hold. */
static void op_futex(struct hf_thread *t, struct lx_proc *p)
{
    uint8_t b = u8();
    uint64_t word = FUTEX_VA + (b % 4) * 4;
    uint32_t now = 0;
    hf_peek(t->space, word, &now, 4);
    int64_t ts[2] = { 0, 10000000 };
    poke(t, scratch(t) + AT_OUT, ts, sizeof(ts));
    switch ((b >> 2) % 4) {
    case 0:         /* wait while the word is what it is */
        sys(t, NR_futex, word, (b & 0x80) ? 128 : 0, now, b & 0x40 ? scratch(t) + AT_OUT : 0, 0, 0);
        break;
    case 1:
        sys(t, NR_futex, word, (b & 0x80) ? 129 : 1, 1 + (b >> 6), 0, 0, 0);
        break;
    case 2:         /* the program changes the word */
        now++;
        hf_poke(t->space, word, &now, 4);
        last_how = DONE;
        last_result = now;
        break;
    default:
        sys(t, NR_futex, word, 0, now + 1, 0, 0, 0);    /* the value is not what it was: EAGAIN */
        break;
    }
    hf_trace("op %u: tid %d futex %u on %#llx = %s", nops, tid_of(t), (b >> 2) % 4, (unsigned long long)word,
             how_name());
    (void)p;
}

/* The calls RAW makes, with arguments of kinds the input picks. */
static const uint16_t raw_calls[] = {
    NR_brk, NR_mprotect, NR_madvise, NR_mremap, NR_msync, NR_sendto, NR_recvfrom, NR_setsockopt, NR_getsockopt,
    NR_getsockname, NR_getpeername, NR_sendfile, NR_ftruncate, NR_fallocate, NR_pread64, NR_pwrite64, NR_readv,
    NR_writev, NR_lseek, NR_ioctl, NR_newfstatat, NR_statx, NR_fchdir, NR_getcwd, NR_rt_sigsuspend,
    NR_rt_sigtimedwait, NR_sigaltstack, NR_setitimer, NR_getitimer, NR_timer_create, NR_timer_settime,
    NR_timer_delete, NR_waitid, NR_setpgid, NR_setsid, NR_getpgid, NR_clone3, NR_execveat, NR_prlimit64,
    NR_pselect6, NR_rt_sigqueueinfo, NR_tkill, NR_mkdirat, NR_unlinkat, NR_renameat2, NR_linkat, NR_symlinkat,
    NR_fchmod, NR_utimensat, NR_faccessat, NR_set_robust_list, NR_futex, NR_sendmmsg, NR_recvmmsg, NR_shutdown,
    NR_dup3, NR_readlinkat, NR_set_tid_address, NR_rt_sigpending, NR_sched_yield, NR_getrusage, NR_times,
    NR_clock_nanosleep, NR_timerfd_gettime, NR_epoll_pwait2, NR_chdir, NR_truncate, NR_sync, NR_fsync,
};

/* One argument of RAW, of the kind byte b names. */
static uint64_t raw_arg(struct hf_thread *t, struct lx_proc *p, uint8_t b)
{
    static const uint64_t extremes[8] = { ~0ull, 0x7fffffff, 1ull << 40, 0x100000, 0x80000000ull, 4096, 0xfff,
                                          1ull << 63 };
    static const char *const paths[8] = { "/tmp/a", "/tmp/b", "/tmp", "/etc/hostname", "/proc/self/fd/3", "/bin/script",
                                          "/tmp/a/../b", "" };
    switch (b >> 5) {
    case 0:
        return (uint64_t)fd_arg(p, 0x80 | b);
    case 1:
        return b & 31;
    case 2:
        return scratch(t) + AT_DATA + (b & 31) * 64;
    case 3:
        return len_arg(b);
    case 4: {
        for (unsigned i = 0; i < nmaps; i++)
            if (maps[i].pid == p->pid && (b & 7) == i % 8)
                return maps[i].addr + (b & 8 ? LX_PAGE : 0);
        return DATA_VA + 31 * SLOT + (b & 15) * LX_PAGE;
    }
    case 5:
        return scratch(t) + AT_STRUCT;
    case 6: {
        const char *path = paths[b & 7];
        poke(t, scratch(t) + AT_PATH, path, strlen(path) + 1);
        return scratch(t) + AT_PATH;
    }
    default:
        return extremes[b & 7];
    }
}

/* A call of raw_calls: its index, then six argument bytes; the struct
 * argument (AT_STRUCT) gets the next 32 bytes. */
static void op_raw(struct hf_thread *t, struct lx_proc *p)
{
    uint64_t nr = raw_calls[u8() % (sizeof(raw_calls) / sizeof(raw_calls[0]))];
    uint64_t a[6];
    for (int i = 0; i < 6; i++)
        a[i] = raw_arg(t, p, u8());
    uint8_t st[32];
    for (int i = 0; i < 32; i++)
        st[i] = u8();
    poke(t, scratch(t) + AT_STRUCT, st, sizeof(st));
    sys(t, nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    hf_trace("op %u: tid %d call %llu(%#llx, %#llx, %#llx, %#llx, %#llx, %#llx) = %s", nops, tid_of(t),
             (unsigned long long)nr, (unsigned long long)a[0], (unsigned long long)a[1], (unsigned long long)a[2],
             (unsigned long long)a[3], (unsigned long long)a[4], (unsigned long long)a[5], how_name());
}

/* Run operation `op` by thread t of process p. */
static void run_op(int op, struct hf_thread *t, struct lx_proc *p)
{
    switch (op) {
    case OP_OPENAT: op_openat(t, p); break;
    case OP_OPEN_PROC_FD: op_open_proc_fd(t, p); break;
    case OP_CLOSE: op_close(t, p); break;
    case OP_READ: op_rw(t, p, 0); break;
    case OP_WRITE: op_rw(t, p, 1); break;
    case OP_PIPE2: op_pipe2(t, p); break;
    case OP_DUP: op_dup(t, p); break;
    case OP_DUP3: op_dup3(t, p); break;
    case OP_FCNTL: op_fcntl(t, p); break;
    case OP_SOCKETPAIR: op_socketpair(t, p); break;
    case OP_SOCKET: op_socket(t, p); break;
    case OP_BIND: op_bind_connect(t, p, 0); break;
    case OP_LISTEN: op_listen(t, p); break;
    case OP_CONNECT: op_bind_connect(t, p, 1); break;
    case OP_ACCEPT4: op_accept4(t, p); break;
    case OP_SENDMSG: op_sendmsg(t, p); break;
    case OP_RECVMSG: op_recvmsg(t, p); break;
    case OP_SHUTDOWN: op_shutdown(t, p); break;
    case OP_EPOLL_CREATE1: op_epoll_create1(t, p); break;
    case OP_EPOLL_CTL: op_epoll_ctl(t, p); break;
    case OP_EPOLL_PWAIT: op_epoll_pwait(t, p); break;
    case OP_EVENTFD2: op_eventfd2(t, p); break;
    case OP_FORK: op_fork(t, p, 0); break;
    case OP_VFORK: op_fork(t, p, 1); break;
    case OP_THREAD: op_thread(t, p); break;
    case OP_EXIT: op_exit(t, p, 0); break;
    case OP_EXIT_GROUP: op_exit(t, p, 1); break;
    case OP_KILL: op_kill(t, p); break;
    case OP_TGKILL: op_tgkill(t, p); break;
    case OP_WAIT4: op_wait4(t, p); break;
    case OP_CLOSE_RANGE: op_close_range(t, p); break;
    case OP_MMAP: op_mmap(t, p); break;
    case OP_MUNMAP: op_munmap(t, p); break;
    case OP_SIGACTION: op_sigaction(t, p); break;
    case OP_SIGRETURN: op_sigreturn(t, p); break;
    case OP_SIGPROCMASK: op_sigprocmask(t, p); break;
    case OP_NANOSLEEP: op_nanosleep(t, p); break;
    case OP_PPOLL: op_ppoll(t, p); break;
    case OP_EXECVE: op_execve(t, p); break;
    case OP_GETDENTS: op_getdents(t, p); break;
    case OP_READLINK: op_readlink(t, p); break;
    case OP_FAST: op_fast(t, p); break;
    case OP_FAULT: op_fault(t, p); break;
    case OP_TIMERFD_CREATE: op_timerfd_create(t, p); break;
    case OP_TIMERFD_SETTIME: op_timerfd_settime(t, p); break;
    case OP_FUTEX: op_futex(t, p); break;
    case OP_RAW: op_raw(t, p); break;
    default: break;
    }
}

/* Let the threads woken to run their calls again do so until none is
 * left; that never ending is a livelock (calls that wake each other). */
#define MAX_RESTARTS 2000

static void run_woken(void)
{
    if (hf_run_restarts(MAX_RESTARTS) >= MAX_RESTARTS && hf_restarts_pending())
        hf_fail("calls woken and run again %u times in a row, and more keep coming: a livelock", MAX_RESTARTS);
}

/* One operation of the input. */
static void step(void)
{
    uint8_t ob = u8();
    int op = (ob & 0x7f) % NOPS, hold = ob & 0x80;
    if (op == OP_CLOCK) {
        static const uint64_t ns[8] = { 1000000, 10000000, 100000000, 1000000000, 10000000000ull, 1000, 5000000,
                                        2000000000 };
        uint64_t d = ns[u8() % 8];
        hf_trace("op %u: the clock moves %llu ns", nops, (unsigned long long)d);
        hf_advance(d);
    } else if (op == OP_INJECT) {
        uint8_t b = u8();
        hf_trace("op %u: the %u-th next call of kind %d fails", nops, 1 + (b >> 3) % 8, b % HF_INJ_KINDS);
        hf_inject(b % HF_INJ_KINDS, 1 + (b >> 3) % 8);
    } else if (op == OP_DRAIN) {
        hf_trace("op %u: woken threads run", nops);
        run_woken();
    } else {
        struct hf_thread *t = pick_actor(u8());
        struct lx_thread *lt = t ? lx_of(t) : NULL;
        if (!lt) {
            hf_trace("op %u: %s: no thread can act", nops, op_names[op]);
            return;
        }
        if (t->restart) {
            hf_trace("op %u: tid %d runs its call %llu again", nops, tid_of(t), (unsigned long long)t->regs.x[8]);
            hf_syscall(t, 0, NULL);
        } else {
            hf_trace("-- op %u: tid %d: %s", nops, tid_of(t), op_names[op]);
            run_op(op, t, lt->p);
        }
    }
    if (!hold)
        run_woken();
    hf_timer_check();
    check_state();
}

/* ---------------------------------------------------------------- start and end */

/* Start /bin/prog as a native program does (the interface's exec); its pid. */
static int start_process(int i)
{
    char cmd[64];
    int n = snprintf(cmd, sizeof(cmd), "/bin/prog%cp%d%c%cHOME=/%c", 0, i, 0, 0, 0);
    uint64_t mr[26] = { (uint64_t)n };
    memcpy(&mr[1], cmd, (size_t)n);
    uint64_t out[4] = { 0 };
    if (!hf_native_call((uint64_t)LINUX_IF_ID << 16 | LINUX_EXEC, 26, mr, out) || out[0] != 0)
        hf_fail("the personality does not start /bin/prog (status %lld): the harness's root archive or build is "
                "broken", (long long)out[0]);
    return (int)out[1];
}

/* End every process: exit_group from one of its threads that runs, or a
 * kill (SIGKILL) when none does; then reap those no Linux parent waits for. */
static void end_all(void)
{
    run_woken();
    for (int round = 0; round < 4 * 1000; round++) {
        struct lx_proc *p = live_proc(0);
        if (!p)
            break;
        struct hf_thread *by = NULL;
        find_runnable();
        for (unsigned i = 0; i < nrunnable && !by; i++)
            if (lx_of(runnable[i])->p == p && !runnable[i]->restart)
                by = runnable[i];
        if (by) {
            hf_trace("end: tid %d exit_group(0)", tid_of(by));
            sys(by, NR_exit_group, 0, 0, 0, 0, 0, 0);
        } else {
            hf_trace("end: pid %d killed", p->pid);
            lx_proc_end(p, LX_SIGKILL);
        }
        run_woken();
        hf_timer_check();
        check_state();
    }
    if (live_proc(0))
        hf_fail("a process does not end");
    for (struct lx_proc *q = lx_procs(), *next; q; q = next) {
        next = q->next;                         /* (a native wait frees q's record at the next request) */
        if (q->used && q->ended && !q->ppid && !q->orphan) {
            uint64_t mr[1] = { (uint64_t)q->pid }, out[4];
            if (!hf_native_call((uint64_t)LINUX_IF_ID << 16 | LINUX_WAIT, 1, mr, out))
                hf_fail("a native wait for ended pid %d was kept", q->pid);
        }
    }
}

/* Nothing may be left once every process ended and was reaped. */
static void check_clean(void)
{
    lx_reap();                                  /* (records freed by the last request) */
    lx_heap_trim();                             /* (and the empty pages the size classes keep) */
    for (struct lx_proc *q = lx_procs(); q; q = q->next)
        hf_fail("leak: process %d (parent %d, ended %d) is still there after every process ended", q->pid, q->ppid,
                q->ended);
    if (lx_threads_alive() || lx_procs_alive())
        hf_fail("leak: %u threads and %u processes are still counted after every process ended", lx_threads_alive(),
                lx_procs_alive());
    uint32_t files = lx_files_in_use(), pipes = lx_pipes_in_use(), socks = lx_socks_in_use(), events, watches;
    lx_events_in_use(&events, &watches);
    if (files || pipes || socks || events || watches)
        hf_fail("leak: %u open files, %u pipes, %u sockets, %u event objects and %u epoll watches are left after "
                "every process ended", files, pipes, socks, events, watches);
    /* What the personality holds for good: the archive's object and the objects of files mapped shared. */
    svc_handle keep[LX_SHARED_FILES + 2];
    unsigned nkeep = 0;
    svc_handle fs = lx_fs_object();             /* (0: the root file system was never loaded) */
    if (fs)
        keep[nkeep++] = fs;
    uint64_t bytes;
    uint32_t used, max = 0;
    if (fs)
        lx_fs_usage(&bytes, &used, &max);
    for (uint32_t i = 0; i < max; i++) {
        struct lx_node *nd = lx_node((int32_t)i);
        if (nd && nd->obj && nkeep < LX_SHARED_FILES + 2)
            keep[nkeep++] = nd->obj->h;
    }
    if (fs && lx_mobjs_in_use() != nkeep - 1)
        hf_fail("leak: %u memory object records are in use after every process ended, but %u files are mapped "
                "shared", lx_mobjs_in_use(), nkeep - 1);
    hf_env_check_clean(keep, nkeep);
}

/* The personality's console output, a piece at a time: a line that
 * reports a bug of its own (a defence that caught one) is a failure. */
static void console(const char *buf, uint64_t len)
{
    static const char *const bugs[] = { "stale open file", "dropped twice" };
    static char line[512];
    static size_t at;
    for (uint64_t i = 0; i < len; i++) {
        if (buf[i] != '\n') {
            if (at < sizeof(line) - 1)
                line[at++] = buf[i];
            continue;
        }
        line[at] = 0;
        at = 0;
        for (unsigned k = 0; k < sizeof(bugs) / sizeof(bugs[0]); k++)
            if (strstr(line, bugs[k]))
                hf_fail("the personality reports a bug of its own: \"%s\"", line);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    hf_console_hook = console;
    (void)argc;
    (void)argv;
    const char *tr = getenv("HOSTFUZZ_TRACE");
    hf_tracing = tr && *tr && *tr != '0';
    size_t n = (size_t)(__lxstate_end - __lxstate_start);
    snapshot = malloc(n ? n : 1);
    if (!snapshot)
        abort();
    copy_state(snapshot, __lxstate_start, n);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in_data = data;
    in_size = size;
    in_at = 0;
    nops = 0;
    nmaps = 0;
    hf_env_reset();
    copy_state(__lxstate_start, snapshot, (size_t)(__lxstate_end - __lxstate_start));
    int nproc = 1 + u8() % 3;
    for (int i = 0; i < nproc; i++) {
        int pid = start_process(i);
        hf_trace("start: pid %d", pid);
    }
    check_state();
    while (in_at < in_size && nops < MAX_OPS) {
        step();
        nops++;
    }
    end_all();
    check_clean();
    hf_env_reset();
    return 0;
}
