/*
 * The test double of the service environment (svc.h, svc_proc.h) for the
 * host fuzzer of the Linux personality: see env_double.h for what it
 * offers the driver, docs/design/fuzzing.md for what it models.
 *
 * It behaves as the user placement does (services/env/user_env.c,
 * user_proc.c) and checks what the kernel's calls check
 * (kernel/core/svc_proc_kernel.c, memobj.c):
 *
 * - svc_alloc is calloc (page-aligned from a page on, as in both
 *   placements), so AddressSanitizer sees every overflow of the
 *   personality's own memory; svc_free checks the pointer and the size
 *   (the kernel's kfree trusts the size);
 * - a space is a list of mappings of memory objects; an object is a
 *   sparse set of 4 KiB pages over an optional read-only backing (the
 *   root archive); a clone copies the pages at once;
 * - a thread has registers, FP/SIMD registers and TLS; it runs user code
 *   (the driver decides what), is in a call, or waits in a kept reply;
 * - a reply to a fault sets pc, sp and x0.. as the kernel's fault_apply
 *   does; a pc left at an svc the thread executed means the thread runs
 *   that call again (the personality's restart of a blocked call);
 * - handles, tokens and ids are numbered once per input and never again,
 *   so that a stale one is seen (the real ones are reused).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/common_interface_defs.h>
#include "env_double.h"
#include "linux_if.h"
#include "svc_transport.h"
#include "svc_trace.h"

int hf_tracing;

void hf_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\n==hostfuzz== personality failure: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    abort();
}

void hf_trace(const char *fmt, ...)
{
    if (!hf_tracing)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define PAGE            4096ull
#define HANDLE_BASE     0x100           /* the first handle number of an input */
#define TOKEN_BASE      0x7000          /* the first token */
#define MAX_HANDLES     4096            /* the personality's handle limit (its system description) */
#define MAX_COMMIT      32768           /* pages of simulated memory in all (128 MiB): past it, faults */
#define MAX_OBJ_SIZE    (1ull << 30)    /* the kernel's largest object of 4 KiB pages (memobj.c MAX_PAGES) */
#define USER_VA_LIMIT   0x0000008000000000ull
#define ANON_RIGHTS     (R_READ | R_WRITE | R_EXEC | R_GRANT | R_DUP)
#define FILE_RIGHTS     (R_READ | R_EXEC | R_GRANT | R_DUP)
#define MAX_SPACES      64              /* spaces at once (the service's `spaces`) */

/* ---------------------------------------------------------------- objects */

struct hf_mem {
    uint32_t handles, maps;     /* what holds it: the personality's handles, mappings */
    uint64_t size;
    uint32_t rights;            /* what a handle to it holds */
    const uint8_t *backing;     /* what its pages read before they are written (NULL: zeros) */
    uint64_t backing_size;
    uint64_t *keys;             /* its pages: an open hash of page index + 1 (0: empty) */
    uint8_t **pages;
    uint32_t cap, count;
};

struct hf_map {
    uint64_t va, size, off;
    struct hf_mem *m;
    uint32_t rights, max;
};

struct hf_space {
    uint32_t handles;
    int killed;
    uint64_t id;
    struct hf_map *maps;
    uint32_t nmaps, cap;
    uint64_t limits[LIMIT_KINDS];
};

enum { HK_FREE, HK_SPACE, HK_MEM, HK_THREAD, HK_NOTIFY, HK_GONE };

struct hf_handle {
    int kind;
    void *obj;
};

enum { TK_KEPT = 1, TK_USED, TK_DEAD };

struct hf_token {
    struct hf_thread *t;
    int state;
};

/* A request in progress: the svc_call the personality sees, and what it did with it. */
struct hf_call {
    struct svc_call call;
    int active;                 /* the handler runs (copies through it are allowed) */
    int replied;
    svc_token kept;             /* svc_defer's token, or 0 */
    struct hf_thread *t;        /* the faulting thread; NULL for a native request */
    uint64_t mr[MSG_MAX_MRS];
    uint64_t out[4];
    unsigned outlen;
};

static struct {
    struct hf_handle *handles;
    uint32_t nhandles, cap_handles;     /* handles given: HANDLE_BASE + index */
    uint32_t live_handles;
    struct hf_token *tokens;
    uint32_t ntokens, cap_tokens;
    struct hf_thread **threads;
    uint32_t nthreads, cap_threads;
    struct hf_space **spaces;
    uint32_t nspaces, cap_spaces;
    struct hf_mem **mems;
    uint32_t nmems, cap_mems;
    uint64_t next_space_id;
    uint64_t committed;         /* pages of all objects */
    uint64_t clock;
    void (*timer)(void);
    uint64_t deadline;
    unsigned inject[HF_INJ_KINDS];      /* countdowns: the call that brings one to 0 fails */
    struct hf_call *current;
} env;

/* Append p to a growable array of pointers. */
static void push(void ***arr, uint32_t *n, uint32_t *cap, void *p)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *arr = realloc(*arr, *cap * sizeof(void *));
        if (!*arr)
            hf_fail("host out of memory");
    }
    (*arr)[(*n)++] = p;
}

/* Does the injected failure of `kind` hit now? */
static int injected(int kind)
{
    if (!env.inject[kind])
        return 0;
    return --env.inject[kind] == 0;
}

void hf_inject(int kind, unsigned n)
{
    if (kind >= 0 && kind < HF_INJ_KINDS)
        env.inject[kind] = n;
}

/* A new handle for obj of kind; 0 past the limit. */
static svc_handle handle_new(int kind, void *obj)
{
    if (env.live_handles >= MAX_HANDLES)
        return 0;
    if (env.nhandles == env.cap_handles) {
        env.cap_handles = env.cap_handles ? env.cap_handles * 2 : 256;
        env.handles = realloc(env.handles, env.cap_handles * sizeof(*env.handles));
        if (!env.handles)
            hf_fail("host out of memory");
    }
    env.handles[env.nhandles] = (struct hf_handle){ kind, obj };
    env.live_handles++;
    return HANDLE_BASE + env.nhandles++;
}

/* The object of handle h, which must be of `kind` (the personality's own
 * handle: a released one, an unknown one or one of another type is a bug
 * of the personality). NULL for handle 0. */
static void *handle_obj(svc_handle h, int kind, const char *what)
{
    if (h == 0)
        return NULL;
    if (h < HANDLE_BASE || h - HANDLE_BASE >= env.nhandles)
        hf_fail("%s: handle %#llx was never given", what, (unsigned long long)h);
    struct hf_handle *e = &env.handles[h - HANDLE_BASE];
    if (e->kind == HK_GONE)
        hf_fail("%s: handle %#llx used after its release", what, (unsigned long long)h);
    if (e->kind != kind)
        hf_fail("%s: handle %#llx is of another kind (%d, not %d)", what, (unsigned long long)h, e->kind, kind);
    return e->obj;
}

/* ---------------------------------------------------------------- svc_alloc */

/* Outstanding allocations: an open hash of pointer -> size, place. */
struct hf_alloc {
    void *p;
    size_t size;
    const char *file;
    int line;
    void *caller;               /* where the function that called svc_alloc was called from */
};

static struct hf_alloc *allocs;
static uint32_t alloc_cap, alloc_count;
static uint64_t alloc_bytes;

/* The slot where p's record starts its search. */
static uint32_t alloc_slot(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (alloc_cap - 1);
}

static void alloc_insert(struct hf_alloc a);

/* Double the table of allocations. */
static void alloc_grow(void)
{
    struct hf_alloc *old = allocs;
    uint32_t old_cap = alloc_cap;
    alloc_cap = alloc_cap ? alloc_cap * 2 : 1024;
    allocs = calloc(alloc_cap, sizeof(*allocs));
    if (!allocs)
        hf_fail("host out of memory");
    alloc_count = 0;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].p)
            alloc_insert(old[i]);
    free(old);
}

/* Record allocation a. */
static void alloc_insert(struct hf_alloc a)
{
    if ((alloc_count + 1) * 2 > alloc_cap)
        alloc_grow();
    uint32_t i = alloc_slot(a.p);
    while (allocs[i].p)
        i = (i + 1) & (alloc_cap - 1);
    allocs[i] = a;
    alloc_count++;
}

/* Remove p's record (backward-shift deletion); its record, or a zero one. */
static struct hf_alloc alloc_remove(const void *p)
{
    struct hf_alloc found = { 0 };
    if (!alloc_cap)
        return found;
    uint32_t i = alloc_slot(p);
    while (allocs[i].p && allocs[i].p != p)
        i = (i + 1) & (alloc_cap - 1);
    if (!allocs[i].p)
        return found;
    found = allocs[i];
    allocs[i].p = NULL;
    alloc_count--;
    for (uint32_t j = (i + 1) & (alloc_cap - 1); allocs[j].p; j = (j + 1) & (alloc_cap - 1)) {
        struct hf_alloc a = allocs[j];
        allocs[j].p = NULL;
        alloc_count--;
        alloc_insert(a);
    }
    return found;
}

/* svc_alloc: zeroed memory of the host's heap, recorded with its place (or NULL when a failure is injected). */
void *hf_alloc_at(size_t size, const char *file, int line)
{
    if (injected(HF_INJ_ALLOC) || size > (512u << 20))
        return NULL;
    /* Page-aligned from a page on, as both placements give it (heap.c
     * finds a record's page by rounding its address down). */
    void *p = size >= 4096 ? aligned_alloc(4096, (size + 4095) & ~(size_t)4095) : calloc(1, size ? size : 1);
    if (p && size >= 4096)
        memset(p, 0, size);
    if (!p)
        return NULL;
    /* heap.c's lx_alloc serves every table of the personality from one
     * line: its caller tells the tables apart (frame pointers are kept, so
     * the frame above ours can be read). */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wframe-address"
    void *caller = __builtin_return_address(1);
#pragma clang diagnostic pop
    alloc_insert((struct hf_alloc){ p, size, file, line, caller });
    alloc_bytes += size;
    return p;
}

/* svc_free: p must be what svc_alloc gave, and size its size. */
void hf_free_at(void *p, size_t size, const char *file, int line)
{
    if (!p)
        return;                 /* (kfree(NULL) is no-op too) */
    struct hf_alloc a = alloc_remove(p);
    if (!a.p)
        hf_fail("svc_free(%p, %zu) at %s:%d: not memory svc_alloc gave (freed twice?)", p, size, file, line);
    if (a.size != size)
        hf_fail("svc_free(%p, %zu) at %s:%d: it was svc_alloc(%zu) at %s:%d", p, size, file, line, a.size, a.file,
                a.line);
    alloc_bytes -= size;
    free(p);
}

/* svc_alloc and svc_free for code not built with lxstate.h (none of the personality's). */
void *svc_alloc(size_t size)
{
    return hf_alloc_at(size, "?", 0);
}

void svc_free(void *p, size_t size)
{
    hf_free_at(p, size, "?", 0);
}

uint64_t svc_memory_limit(void)
{
    return 128ull << 20;                        /* (the default systems' personality's) */
}

uint64_t hf_alloc_bytes(void)
{
    return alloc_bytes;
}

/* ---------------------------------------------------------------- memory objects */

static struct hf_mem *mem_new(uint64_t size, uint32_t rights)
{
    struct hf_mem *m = calloc(1, sizeof(*m));
    if (!m)
        hf_fail("host out of memory");
    m->size = size;
    m->rights = rights;
    push((void ***)&env.mems, &env.nmems, &env.cap_mems, m);
    return m;
}

/* Release the pages of m (it stays as a record until the reset). */
static void mem_release_pages(struct hf_mem *m)
{
    for (uint32_t i = 0; i < m->cap; i++)
        free(m->pages && m->keys[i] ? m->pages[i] : NULL);
    env.committed -= m->count;
    free(m->keys);
    free(m->pages);
    m->keys = NULL;
    m->pages = NULL;
    m->cap = m->count = 0;
}

/* m lost a holder: nothing holds it any more, its pages go. */
static void mem_unref(struct hf_mem *m)
{
    if (!m->handles && !m->maps)
        mem_release_pages(m);
}

/* The slot where a page's key starts its search. */
static uint32_t page_hash(uint64_t key, uint32_t cap)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
}

/* The page of m at index idx, or NULL. */
static uint8_t *mem_page(const struct hf_mem *m, uint64_t idx)
{
    if (!m->cap)
        return NULL;
    for (uint32_t i = page_hash(idx + 1, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == idx + 1)
            return m->pages[i];
        if (!m->keys[i])
            return NULL;
    }
}

static void mem_put_page(struct hf_mem *m, uint64_t idx, uint8_t *page);

/* Double the page table of m. */
static void mem_grow(struct hf_mem *m)
{
    uint64_t *keys = m->keys;
    uint8_t **pages = m->pages;
    uint32_t cap = m->cap;
    m->cap = cap ? cap * 2 : 16;
    m->keys = calloc(m->cap, sizeof(*m->keys));
    m->pages = calloc(m->cap, sizeof(*m->pages));
    if (!m->keys || !m->pages)
        hf_fail("host out of memory");
    m->count = 0;
    for (uint32_t i = 0; i < cap; i++)
        if (keys[i])
            mem_put_page(m, keys[i] - 1, pages[i]);
    free(keys);
    free(pages);
}

/* Record page idx of m. */
static void mem_put_page(struct hf_mem *m, uint64_t idx, uint8_t *page)
{
    if ((m->count + 1) * 2 > m->cap)
        mem_grow(m);
    uint32_t i = page_hash(idx + 1, m->cap);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = idx + 1;
    m->pages[i] = page;
    m->count++;
}

/* The page of m at idx for writing, made (from the backing, or zeros) if
 * needed; NULL past the commit limit. */
static uint8_t *mem_page_w(struct hf_mem *m, uint64_t idx)
{
    uint8_t *p = mem_page(m, idx);
    if (p)
        return p;
    if (env.committed >= MAX_COMMIT)
        return NULL;
    p = calloc(1, PAGE);
    if (!p)
        hf_fail("host out of memory");
    uint64_t at = idx * PAGE;
    if (m->backing && at < m->backing_size)
        memcpy(p, m->backing + at, m->backing_size - at < PAGE ? m->backing_size - at : PAGE);
    mem_put_page(m, idx, p);
    env.committed++;
    return p;
}

/* Copy n bytes (inside one page) between m at off and buf; 0 or -1 (no page to be had). */
static int mem_rw(struct hf_mem *m, uint64_t off, void *buf, uint64_t n, int write)
{
    uint64_t idx = off / PAGE, in = off % PAGE;
    if (write) {
        uint8_t *p = mem_page_w(m, idx);
        if (!p)
            return -1;
        memcpy(p + in, buf, n);
        return 0;
    }
    const uint8_t *p = mem_page(m, idx);
    if (p) {
        memcpy(buf, p + in, n);
        return 0;
    }
    memset(buf, 0, n);
    if (m->backing && off < m->backing_size)
        memcpy(buf, m->backing + off, m->backing_size - off < n ? m->backing_size - off : n);
    return 0;
}

/* Copy len bytes between m at off and buf, page by page. */
static int mem_copy(struct hf_mem *m, uint64_t off, void *buf, uint64_t len, int write)
{
    if (off > m->size || len > m->size - off)
        return SVC_E_RANGE;
    uint8_t *b = buf;
    for (uint64_t done = 0; done < len; ) {
        uint64_t n = PAGE - (off + done) % PAGE;
        if (n > len - done)
            n = len - done;
        if (mem_rw(m, off + done, b + done, n, write))
            return SVC_E_NOMEM;
        done += n;
    }
    return 0;
}

/* ---------------------------------------------------------------- spaces and their memory */

/* The mapping of s holding va, or NULL. */
static struct hf_map *map_at(struct hf_space *s, uint64_t va)
{
    for (uint32_t i = 0; i < s->nmaps; i++)
        if (va >= s->maps[i].va && va - s->maps[i].va < s->maps[i].size)
            return &s->maps[i];
    return NULL;
}

/* Copy len bytes between s's memory at va and buf; with need (R_READ or
 * R_WRITE) only through mappings that allow it. Bytes copied before the
 * first page that cannot be reached go; 0 or -1. */
static int space_copy(struct hf_space *s, uint64_t va, void *buf, uint64_t len, int write, uint32_t need)
{
    uint8_t *b = buf;
    for (uint64_t done = 0; done < len; ) {
        uint64_t at = va + done, n = PAGE - at % PAGE;
        if (n > len - done)
            n = len - done;
        if (at < va)
            return -1;
        struct hf_map *mp = s && !s->killed ? map_at(s, at) : NULL;
        if (!mp || (mp->rights & need) != need)
            return -1;
        if (mem_rw(mp->m, mp->off + (at - mp->va), b + done, n, write))
            return -1;
        done += n;
    }
    return 0;
}

int hf_poke(struct hf_space *s, uint64_t va, const void *src, uint64_t len)
{
    return space_copy(s, va, (void *)(uintptr_t)src, len, 1, 0);
}

int hf_peek(struct hf_space *s, uint64_t va, void *dst, uint64_t len)
{
    return space_copy(s, va, dst, len, 0, 0);
}

/* Drop mapping i of s. */
static void map_drop(struct hf_space *s, uint32_t i)
{
    struct hf_mem *m = s->maps[i].m;
    s->maps[i] = s->maps[--s->nmaps];
    m->maps--;
    mem_unref(m);
}

/* Add a mapping record to s. */
static void map_add(struct hf_space *s, struct hf_map mp)
{
    if (s->nmaps == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->maps = realloc(s->maps, s->cap * sizeof(*s->maps));
        if (!s->maps)
            hf_fail("host out of memory");
    }
    s->maps[s->nmaps++] = mp;
    mp.m->maps++;
}

/* Cut the mapping holding va at va, so that va starts a mapping. */
static void cut_at(struct hf_space *s, uint64_t va)
{
    struct hf_map *mp = map_at(s, va);
    if (!mp || mp->va == va)
        return;
    struct hf_map tail = *mp;
    tail.va = va;
    tail.size = mp->va + mp->size - va;
    tail.off = mp->off + (va - mp->va);
    mp->size = va - mp->va;
    map_add(s, tail);
}

/* Is [va, va + size) a non-empty page-aligned range of user space? */
static int range_ok(uint64_t va, uint64_t size)
{
    return size && !((va | size) & (PAGE - 1)) && va >= USER_VA_MIN && va < USER_VA_LIMIT &&
           size <= USER_VA_LIMIT - va;
}

/* A thread dies: its kept reply can no longer be answered (the kernel drops it). */
static void thread_die(struct hf_thread *t)
{
    if (t->state == HT_DEAD)
        return;
    if (t->state == HT_BLOCKED && t->token && env.tokens[t->token - TOKEN_BASE].state == TK_KEPT)
        env.tokens[t->token - TOKEN_BASE].state = TK_DEAD;
    t->state = HT_DEAD;
    t->restart = 0;
    t->token = 0;
}

/* End space s: its threads die, its mappings go. */
static void space_kill(struct hf_space *s)
{
    if (s->killed)
        return;
    s->killed = 1;
    for (uint32_t i = 0; i < env.nthreads; i++)
        if (env.threads[i]->space == s)
            thread_die(env.threads[i]);
    while (s->nmaps)
        map_drop(s, s->nmaps - 1);
}

/* ---------------------------------------------------------------- svc.h */

static struct hf_call *call_of(struct svc_call *call, const char *what)
{
    struct hf_call *hc = call ? call->env : NULL;
    if (!hc || hc != env.current || !hc->active)
        hf_fail("%s through a call that is not in progress (answered and gone)", what);
    return hc;
}

/* Apply the answer to a fault (mr[0..len)) to thread t, as the kernel's
 * fault_apply: stop (the thread ends), or resume with pc, sp, x0...; a pc
 * at an svc the thread executed runs that call again, HF_WOKEN when the
 * answer came through a kept reply. */
static void fault_apply(struct hf_thread *t, unsigned len, const uint64_t *mr, int woken)
{
    if (t->state == HT_DEAD)
        return;
    if (len >= 1 && mr[0] == FAULT_REPLY_STOP) {
        hf_trace("    tid %llu stops", (unsigned long long)(t->badge >> 7));
        thread_die(t);
        return;
    }
    if (len >= 2 && mr[1] < USER_VA_LIMIT)
        t->regs.pc = mr[1];
    if (len >= 3 && mr[2] < USER_VA_LIMIT + 4096)
        t->regs.sp = mr[2];
    for (unsigned i = 3; i < len && i < 12; i++)
        t->regs.x[i - 3] = mr[i];
    if (t->call_limited && t->regs.pc == t->call_pc + 4 && (int64_t)t->regs.x[0] >= 0 &&
        t->regs.x[0] > t->call_limit)
        hf_fail("tid %llu: system call %llu returned %lld, more than the %llu bytes it was given",
                (unsigned long long)(t->badge >> 7), (unsigned long long)t->call_nr, (long long)t->regs.x[0],
                (unsigned long long)t->call_limit);
    t->call_limited = 0;
    t->state = HT_RUN;
    t->token = 0;
    t->restart = 0;
    for (unsigned i = 0; i < t->nsites && i < HF_SVC_SITES; i++)
        if (t->svc_sites[i] == t->regs.pc)
            t->restart = woken ? HF_WOKEN : HF_OWN;
}

/* svc.h, as user_env.c: the answer to the call in progress (once, and not after svc_defer). */
void svc_reply(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr)
{
    struct hf_call *hc = call_of(call, "svc_reply");
    if (hc->replied)
        hf_fail("svc_reply: a second answer to one call");
    if (hc->kept)
        hf_fail("svc_reply: the call's reply was kept (svc_defer) and is answered now as well");
    hc->replied = 1;
    if (len > MSG_MAX_MRS)
        hf_fail("svc_reply: %u message registers", len);
    if (hc->t) {
        fault_apply(hc->t, len, mr, 0);
        return;
    }
    hc->outlen = len < 4 ? len : 4;
    for (unsigned i = 0; i < hc->outlen; i++)
        hc->out[i] = mr[i];
}

/* A refused request: its objects released, a fault's thread stopped. */
void svc_fail(struct svc_call *call, int64_t err)
{
    for (unsigned i = 0; i < call->nhandles; i++)
        svc_handle_release(call->handles[i]);
    call->nhandles = 0;
    if (call->label == LABEL_FAULT) {
        uint64_t stop[1] = { FAULT_REPLY_STOP };
        svc_reply(call, 0, 1, stop);
        return;
    }
    uint64_t mr[1] = { (uint64_t)err };
    svc_reply(call, call->label, 1, mr);
}

void svc_reply_objects(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                       const svc_handle *h, const uint32_t *rights)
{
    svc_reply(call, label, len, mr);
    for (unsigned i = 0; i < nh && i < MSG_MAX_HANDLES; i++)
        if (h[i])
            svc_handle_release(h[i]);   /* given away */
    (void)rights;
}

/* Keep the reply of the call in progress: a token never given before. */
svc_token svc_defer(struct svc_call *call)
{
    struct hf_call *hc = call_of(call, "svc_defer");
    if (hc->replied)
        hf_fail("svc_defer of a call already answered");
    if (hc->kept)
        hf_fail("svc_defer twice for one call");
    if (env.ntokens == env.cap_tokens) {
        env.cap_tokens = env.cap_tokens ? env.cap_tokens * 2 : 64;
        env.tokens = realloc(env.tokens, env.cap_tokens * sizeof(*env.tokens));
        if (!env.tokens)
            hf_fail("host out of memory");
    }
    env.tokens[env.ntokens] = (struct hf_token){ hc->t, TK_KEPT };
    hc->kept = TOKEN_BASE + env.ntokens++;
    return hc->kept;
}

void svc_reply_later_objects(svc_token token, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                             const svc_handle *h, const uint32_t *rights)
{
    if (token < TOKEN_BASE || token - TOKEN_BASE >= env.ntokens)
        hf_fail("svc_reply_later: token %#llx was never given", (unsigned long long)token);
    struct hf_token *k = &env.tokens[token - TOKEN_BASE];
    if (k->state == TK_USED)
        hf_fail("svc_reply_later: token %#llx answered a second time", (unsigned long long)token);
    int was = k->state;
    k->state = TK_USED;
    for (unsigned i = 0; i < nh && i < MSG_MAX_HANDLES; i++)
        if (h[i])
            svc_handle_release(h[i]);
    (void)rights;
    (void)label;
    struct hf_thread *t = k->t;
    if (was == TK_DEAD || !t)
        return;                 /* its thread died: the kernel drops the answer */
    if (t->state == HT_CALL)
        hf_fail("svc_reply_later: token %#llx of the call in progress answered before it was kept",
                (unsigned long long)token);
    if (t->state != HT_BLOCKED || t->token != token)
        hf_fail("svc_reply_later: token %#llx, but its thread does not wait in it", (unsigned long long)token);
    if (len >= 2)
        hf_trace("    tid %llu woken (pc %#llx)", (unsigned long long)(t->badge >> 7), (unsigned long long)mr[1]);
    fault_apply(t, len, mr, 1);
}

void svc_reply_later(svc_token token, uint64_t label, unsigned len, const uint64_t *mr)
{
    svc_reply_later_objects(token, label, len, mr, 0, NULL, NULL);
}

/* Notifications: handles only (the personality makes none). */
svc_handle svc_notify_create(void)
{
    return handle_new(HK_NOTIFY, NULL);
}

int svc_signal(svc_handle n, uint64_t bits)
{
    (void)bits;
    handle_obj(n, HK_NOTIFY, "svc_signal");
    return 0;
}

/* Release a handle: once, and only one that was given. */
void svc_handle_release(svc_handle h)
{
    if (h == 0)
        return;
    if (h < HANDLE_BASE || h - HANDLE_BASE >= env.nhandles)
        hf_fail("svc_handle_release: handle %#llx was never given", (unsigned long long)h);
    struct hf_handle *e = &env.handles[h - HANDLE_BASE];
    if (e->kind == HK_GONE)
        hf_fail("svc_handle_release: handle %#llx released twice", (unsigned long long)h);
    switch (e->kind) {
    case HK_SPACE:
        ((struct hf_space *)e->obj)->handles--;
        break;
    case HK_MEM: {
        struct hf_mem *m = e->obj;
        m->handles--;
        mem_unref(m);
        break;
    }
    case HK_THREAD:
        ((struct hf_thread *)e->obj)->handles--;
        break;
    default:
        break;
    }
    e->kind = HK_GONE;
    env.live_handles--;
}

/* Copy from and to the memory of the caller of the call in progress, with its rights. */
int svc_copy_in(struct svc_call *call, void *dst, uint64_t client_addr, uint64_t len)
{
    struct hf_call *hc = call_of(call, "svc_copy_in");
    if (!hc->t)
        return SVC_E_FAULT;
    return space_copy(hc->t->space, client_addr, dst, len, 0, R_READ) ? SVC_E_FAULT : 0;
}

int svc_copy_out(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    struct hf_call *hc = call_of(call, "svc_copy_out");
    if (!hc->t)
        return SVC_E_FAULT;
    return space_copy(hc->t->space, client_addr, (void *)(uintptr_t)src, len, 1, R_WRITE) ? SVC_E_FAULT : 0;
}

/* (One thread runs the personality here, as in the user placement on one
 * core: the shared entry's copy is any copy.) */
int svc_copy_out_try(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    return svc_copy_out(call, client_addr, src, len);
}

/* What the personality does not use: no durable state, no device, no interrupt. */
void *svc_state(size_t size, int *fresh)
{
    (void)size;
    *fresh = 1;
    return NULL;
}

/* Boot file 0 is the root archive (mkroot.py); there is no other. */
int svc_bootfile(uint32_t index, struct petrel_bootfile *info, const void **data)
{
    if (index != 0)
        return SVC_E_NOENT;
    memset(info, 0, sizeof(*info));
    strcpy(info->name, "rootfs.cpio");
    info->size = hf_rootfs_size;
    *data = hf_rootfs;
    return 0;
}

int svc_crash_for_testing(void)
{
    return SVC_E_PERM;
}

volatile void *svc_device(const char *compat, uint32_t *irq)
{
    (void)compat;
    *irq = 0;
    return NULL;                /* no UART: the console reads at end of file */
}

int svc_irq_attach(uint32_t irq, void (*handler)(void))
{
    (void)irq;
    (void)handler;
    return SVC_E_NOENT;
}

void svc_irq_done(uint32_t irq)
{
    (void)irq;
}

/* ---------------------------------------------------------------- svc_proc.h: spaces and memory */

svc_handle svc_space_create(int *err)
{
    uint32_t alive = 0;
    for (uint32_t i = 0; i < env.nspaces; i++)
        alive += !env.spaces[i]->killed;
    if (alive >= MAX_SPACES || injected(HF_INJ_SPACE)) {
        if (err)
            *err = SVC_E_LIMIT;
        return 0;
    }
    struct hf_space *s = calloc(1, sizeof(*s));
    if (!s)
        hf_fail("host out of memory");
    s->id = ++env.next_space_id + 100;
    svc_handle h = handle_new(HK_SPACE, s);
    if (!h) {
        free(s);
        if (err)
            *err = SVC_E_NOMEM;
        return 0;
    }
    push((void ***)&env.spaces, &env.nspaces, &env.cap_spaces, s);
    s->handles = 1;
    return h;
}

/* A space's limit (only LIMIT_THREADS is enforced). */
int svc_space_set_limit(svc_handle space, unsigned kind, uint64_t value)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_space_set_limit");
    if (!s || kind >= LIMIT_KINDS)
        return SVC_E_INVAL;
    s->limits[kind] = value;
    return 0;
}

int svc_space_kill(svc_handle space)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_space_kill");
    if (!s)
        return -E_BADHANDLE;
    space_kill(s);
    return 0;
}

uint64_t svc_space_id(svc_handle space)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_space_id");
    return s ? s->id : 0;
}

/* svc_proc.h: an anonymous object of whole pages, at most MAX_OBJ_SIZE. */
svc_handle svc_mem_create(uint64_t size, int *err)
{
    int e = 0;
    if (size == 0 || (size & (PAGE - 1)))
        e = SVC_E_INVAL;
    else if (size > MAX_OBJ_SIZE || injected(HF_INJ_MEM_CREATE))
        e = SVC_E_NOMEM;
    svc_handle h = 0;
    if (!e) {
        struct hf_mem *m = mem_new(size, ANON_RIGHTS);
        h = handle_new(HK_MEM, m);
        m->handles = h != 0;
        e = h ? 0 : SVC_E_NOMEM;
    }
    if (e && err)
        *err = e;
    return h;
}

/* A read-only, executable object over the root archive. */
svc_handle svc_mem_bootfile(uint32_t index)
{
    if (index != 0)
        return 0;
    struct hf_mem *m = mem_new((hf_rootfs_size + PAGE - 1) & ~(PAGE - 1), FILE_RIGHTS);
    m->backing = hf_rootfs;
    m->backing_size = hf_rootfs_size;
    svc_handle h = handle_new(HK_MEM, m);
    m->handles = h != 0;
    return h;
}

/* A clone: its own copy of every page written so far, the same backing. */
svc_handle svc_mem_clone(svc_handle mem, int *err)
{
    struct hf_mem *src = handle_obj(mem, HK_MEM, "svc_mem_clone");
    if (!src || injected(HF_INJ_MEM_CLONE)) {
        if (err)
            *err = src ? SVC_E_NOMEM : -E_BADHANDLE;
        return 0;
    }
    struct hf_mem *m = mem_new(src->size, ANON_RIGHTS);
    m->backing = src->backing;
    m->backing_size = src->backing_size;
    for (uint32_t i = 0; i < src->cap; i++) {
        if (!src->keys[i])
            continue;
        uint8_t *p = malloc(PAGE);
        if (!p)
            hf_fail("host out of memory");
        memcpy(p, src->pages[i], PAGE);
        mem_put_page(m, src->keys[i] - 1, p);
        env.committed++;
    }
    svc_handle h = handle_new(HK_MEM, m);
    m->handles = h != 0;
    if (!h) {
        mem_unref(m);
        if (err)
            *err = SVC_E_NOMEM;
    }
    return h;
}

/* Write, read and compare-and-swap an object, inside its size, with its handle's rights. */
int svc_mem_write(svc_handle mem, uint64_t offset, const void *src, uint64_t len)
{
    struct hf_mem *m = handle_obj(mem, HK_MEM, "svc_mem_write");
    if (!m)
        return -E_BADHANDLE;
    if (!(m->rights & R_WRITE))
        return SVC_E_PERM;
    return mem_copy(m, offset, (void *)(uintptr_t)src, len, 1);
}

int svc_mem_read(svc_handle mem, uint64_t offset, void *dst, uint64_t len)
{
    struct hf_mem *m = handle_obj(mem, HK_MEM, "svc_mem_read");
    if (!m)
        return -E_BADHANDLE;
    return mem_copy(m, offset, dst, len, 0);
}

int svc_mem_cas32(svc_handle mem, uint64_t offset, uint32_t expect, uint32_t desired, uint32_t *old)
{
    struct hf_mem *m = handle_obj(mem, HK_MEM, "svc_mem_cas32");
    if (!m)
        return -E_BADHANDLE;
    if (offset & 3)
        return SVC_E_INVAL;
    if (!(m->rights & R_WRITE))
        return SVC_E_PERM;
    uint32_t v;
    int err = mem_copy(m, offset, &v, 4, 0);
    if (err)
        return err;
    *old = v;
    return v == expect ? mem_copy(m, offset, &desired, 4, 1) : 0;
}

/* Copy between the caller of call and object mem (svc_mem_copy_in, _out). */
static int mem_copy_client(struct svc_call *call, svc_handle mem, uint64_t offset, uint64_t client_addr,
                           uint64_t len, int to_client)
{
    struct hf_call *hc = call_of(call, to_client ? "svc_mem_copy_out" : "svc_mem_copy_in");
    struct hf_mem *m = handle_obj(mem, HK_MEM, to_client ? "svc_mem_copy_out" : "svc_mem_copy_in");
    if (!m)
        return -E_BADHANDLE;
    if (offset > m->size || len > m->size - offset)
        return SVC_E_RANGE;
    if (!to_client && !(m->rights & R_WRITE))
        return SVC_E_PERM;
    uint8_t buf[512];
    for (uint64_t done = 0; done < len; done += sizeof(buf)) {
        uint64_t k = len - done < sizeof(buf) ? len - done : sizeof(buf);
        if (to_client) {
            if (mem_copy(m, offset + done, buf, k, 0))
                return SVC_E_NOMEM;
            if (!hc->t || space_copy(hc->t->space, client_addr + done, buf, k, 1, R_WRITE))
                return SVC_E_FAULT;
        } else {
            if (!hc->t || space_copy(hc->t->space, client_addr + done, buf, k, 0, R_READ))
                return SVC_E_FAULT;
            if (mem_copy(m, offset + done, buf, k, 1))
                return SVC_E_NOMEM;
        }
    }
    return 0;
}

int svc_mem_copy_in(struct svc_call *call, svc_handle mem, uint64_t offset, uint64_t client_addr, uint64_t len)
{
    return mem_copy_client(call, mem, offset, client_addr, len, 0);
}

int svc_mem_copy_out(struct svc_call *call, uint64_t client_addr, svc_handle mem, uint64_t offset, uint64_t len)
{
    return mem_copy_client(call, mem, offset, client_addr, len, 1);
}

/* Map, unmap and protect with the checks of memobj.c (alignment, W+X, rights, bounds, overlap). */
int svc_mem_map(svc_handle space, svc_handle mem, uint64_t va, uint64_t offset, uint64_t size, uint32_t rights)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_mem_map");
    struct hf_mem *m = handle_obj(mem, HK_MEM, "svc_mem_map");
    if (!s || !m)
        return -E_BADHANDLE;
    if ((rights & R_WRITE) && (rights & R_EXEC))
        return SVC_E_PERM;
    if ((m->rights & rights & (R_READ | R_WRITE | R_EXEC)) != (rights & (R_READ | R_WRITE | R_EXEC)))
        return SVC_E_PERM;
    if (!(rights & R_READ) || (rights & ~(R_READ | R_WRITE | R_EXEC)) || !range_ok(va, size) || (offset & (PAGE - 1)) ||
        offset > m->size || size > m->size - offset)
        return SVC_E_INVAL;
    if (s->killed)
        return -E_CLOSED;
    for (uint32_t i = 0; i < s->nmaps; i++)
        if (s->maps[i].va < va + size && va < s->maps[i].va + s->maps[i].size)
            return SVC_E_BUSY;
    if (injected(HF_INJ_MAP))
        return SVC_E_NOMEM;
    map_add(s, (struct hf_map){ va, size, offset, m, rights, m->rights & (R_READ | R_WRITE | R_EXEC) });
    return 0;
}

int svc_mem_unmap(svc_handle space, uint64_t va, uint64_t size)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_mem_unmap");
    if (!s)
        return -E_BADHANDLE;
    if (!range_ok(va, size))
        return SVC_E_INVAL;
    cut_at(s, va);
    cut_at(s, va + size);
    for (uint32_t i = 0; i < s->nmaps; )
        if (s->maps[i].va >= va && s->maps[i].va < va + size)
            map_drop(s, i);
        else
            i++;
    return 0;
}

int svc_mem_protect(svc_handle space, uint64_t va, uint64_t size, uint32_t rights)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_mem_protect");
    if (!s)
        return -E_BADHANDLE;
    if (!(rights & R_READ) || (rights & ~(R_READ | R_WRITE | R_EXEC)))
        return SVC_E_INVAL;
    if ((rights & R_WRITE) && (rights & R_EXEC))
        return SVC_E_PERM;
    if (!range_ok(va, size))
        return SVC_E_INVAL;
    for (uint64_t at = va; at < va + size; ) {
        struct hf_map *mp = map_at(s, at);
        if (!mp)
            return SVC_E_NOENT;
        if ((mp->max & rights) != rights)
            return SVC_E_PERM;
        at = mp->va + mp->size;
    }
    cut_at(s, va);
    cut_at(s, va + size);
    for (uint32_t i = 0; i < s->nmaps; i++)
        if (s->maps[i].va >= va && s->maps[i].va < va + size)
            s->maps[i].rights = rights;
    return 0;
}

/* ---------------------------------------------------------------- svc_proc.h: threads */

static struct hf_thread *thread_arg(svc_handle h, const char *what)
{
    return handle_obj(h, HK_THREAD, what);
}

/* Is t stopped, so that its registers may be read or set (in a call to us,
 * waiting in a kept reply, suspended, or never started)? */
static int stopped(const struct hf_thread *t)
{
    return t->state != HT_RUN || t->suspended;
}

/* A thread in a live space, its control page free, within the space's thread limit. */
svc_handle svc_thread_create(svc_handle space, uint64_t utcb_va, int *err)
{
    struct hf_space *s = handle_obj(space, HK_SPACE, "svc_thread_create");
    int e = 0;
    if (!s)
        e = -E_BADHANDLE;
    else if (s->killed)
        e = -E_CLOSED;
    else if ((utcb_va & (PAGE - 1)) || utcb_va < USER_VA_MIN || utcb_va >= USER_VA_LIMIT || map_at(s, utcb_va))
        e = SVC_E_INVAL;
    uint32_t mine = 0;
    for (uint32_t i = 0; !e && i < env.nthreads; i++) {
        struct hf_thread *o = env.threads[i];
        if (o->space == s && o->state != HT_DEAD) {
            mine++;
            if (o->utcb == utcb_va)
                e = SVC_E_BUSY;     /* another thread's control page */
        }
    }
    if (!e && s->limits[LIMIT_THREADS] && mine >= s->limits[LIMIT_THREADS])
        e = SVC_E_LIMIT;
    if (!e && injected(HF_INJ_THREAD))
        e = SVC_E_NOMEM;
    if (e) {
        if (err)
            *err = e;
        return 0;
    }
    struct hf_thread *t = calloc(1, sizeof(*t));
    if (!t)
        hf_fail("host out of memory");
    t->live = 1;
    t->state = HT_NEW;
    t->space = s;
    t->utcb = utcb_va;
    svc_handle h = handle_new(HK_THREAD, t);
    if (!h) {
        free(t);
        if (err)
            *err = SVC_E_NOMEM;
        return 0;
    }
    t->handles = 1;
    push((void ***)&env.threads, &env.nthreads, &env.cap_threads, t);
    return h;
}

/* Its faults come to the personality with this badge. */
int svc_thread_fault_to_me(svc_handle thread, uint64_t badge)
{
    struct hf_thread *t = thread_arg(thread, "svc_thread_fault_to_me");
    if (!t)
        return -E_BADHANDLE;
    t->badge = badge;
    t->has_handler = 1;
    return 0;
}

/* A new thread gets the registers of a stopped one (and its program's svc sites). */
int svc_thread_copy(svc_handle dst, svc_handle from)
{
    struct hf_thread *d = thread_arg(dst, "svc_thread_copy"), *s = thread_arg(from, "svc_thread_copy");
    if (!d || !s)
        return -E_BADHANDLE;
    if (d->state == HT_DEAD || s->state == HT_DEAD || !stopped(s))
        return -E_STATE;
    d->regs = s->regs;
    d->fp = s->fp;
    d->tls = s->tls;
    memcpy(d->svc_sites, s->svc_sites, sizeof(d->svc_sites));
    d->nsites = s->nsites;
    return 0;
}

int svc_thread_set_tls(svc_handle t, uint64_t value)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_set_tls");
    if (!th)
        return -E_BADHANDLE;
    th->tls = value;
    return 0;
}

int svc_thread_make_foreign(svc_handle t)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_make_foreign");
    if (!th)
        return -E_BADHANDLE;
    th->foreign = 1;
    return 0;
}

/* Start a new thread: it must be foreign and fault to the personality by now. */
int svc_thread_start(svc_handle thread, uint64_t pc, uint64_t sp, uint64_t arg)
{
    struct hf_thread *t = thread_arg(thread, "svc_thread_start");
    if (!t)
        return -E_BADHANDLE;
    if (t->state != HT_NEW)
        return -E_STATE;
    if (!t->foreign || !t->has_handler)
        hf_fail("a thread started before it was made foreign with the personality as its fault handler");
    t->regs.pc = pc;
    t->regs.sp = sp;
    t->regs.x[0] = arg;
    t->state = HT_RUN;
    return 0;
}

/* Registers and FP/SIMD registers of a stopped thread. */
int svc_thread_read_regs(svc_handle t, struct petrel_regs *r)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_read_regs");
    if (!th)
        return -E_BADHANDLE;
    if (th->state == HT_DEAD || !stopped(th))
        return -E_STATE;
    *r = th->regs;
    return 0;
}

int svc_thread_write_regs(svc_handle t, const struct petrel_regs *r)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_write_regs");
    if (!th)
        return -E_BADHANDLE;
    if (th->state == HT_DEAD || !stopped(th))
        return -E_STATE;
    uint64_t pstate = (th->regs.pstate & ~0xf0000000ull) | (r->pstate & 0xf0000000ull);
    th->regs = *r;
    th->regs.pstate = pstate;
    th->restart = 0;
    for (unsigned i = 0; i < th->nsites && i < HF_SVC_SITES; i++)
        if (th->svc_sites[i] == th->regs.pc && th->state == HT_RUN)
            th->restart = HF_OWN;
    return 0;
}

int svc_thread_read_fp(svc_handle t, struct petrel_fpregs *fp)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_read_fp");
    if (!th)
        return -E_BADHANDLE;
    if (th->state == HT_DEAD || !stopped(th))
        return -E_STATE;
    *fp = th->fp;
    return 0;
}

int svc_thread_write_fp(svc_handle t, const struct petrel_fpregs *fp)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_write_fp");
    if (!th)
        return -E_BADHANDLE;
    if (th->state == HT_DEAD || !stopped(th))
        return -E_STATE;
    th->fp = *fp;
    return 0;
}

/* Its CPU time (a fixed amount per call) and state. */
int svc_thread_stats(svc_handle t, struct petrel_thread_stats *st)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_stats");
    if (!th)
        return -E_BADHANDLE;
    memset(st, 0, sizeof(*st));
    st->cpu_ns = th->cpu_ns;
    st->state = th->state == HT_DEAD ? THREAD_DEAD : th->state == HT_NEW ? THREAD_INACTIVE :
                th->state == HT_RUN ? THREAD_READY : THREAD_REPLY;
    st->prio = st->effective_prio = 100;
    return 0;
}

/* Suspend: the thread is off every core at once; its state says where it is. */
int svc_thread_suspend(svc_handle t)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_suspend");
    if (!th)
        return -E_BADHANDLE;
    if (th->state == HT_DEAD)
        return -E_STATE;
    th->suspended = 1;
    return th->state == HT_NEW ? THREAD_INACTIVE : th->state == HT_RUN ? THREAD_READY : THREAD_REPLY;
}

int svc_thread_resume(svc_handle t)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_resume");
    if (!th)
        return -E_BADHANDLE;
    if (th->state == HT_DEAD)
        return -E_STATE;
    th->suspended = 0;
    return 0;
}

int svc_thread_set_cpus(svc_handle t, uint64_t mask)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_set_cpus");
    if (!th)
        return -E_BADHANDLE;
    return mask & svc_cpus_online() ? 0 : -E_INVAL;
}

uint64_t svc_cpus_online(void)
{
    return 0x3;                                 /* two cores, as the guest tests run */
}

int svc_thread_kill(svc_handle t)
{
    struct hf_thread *th = thread_arg(t, "svc_thread_kill");
    if (!th)
        return -E_BADHANDLE;
    thread_die(th);
    return 0;
}

/* ---------------------------------------------------------------- other services */

/* The double has no network stack to call: the personality's AF_INET
 * sockets say EAFNOSUPPORT, as in a system without one. */
svc_handle svc_service(const char *name)
{
    return 0;
}

/* (Never called: svc_service gives no input or display service.) */
void *svc_shared_map(svc_handle mem, size_t size)
{
    (void)mem, (void)size;
    return NULL;
}

int svc_may_call(void)
{
    return 1;                   /* (no service to call: svc_service gives none) */
}

uint64_t svc_client_buffer(struct svc_call *call, uint64_t addr, uint64_t len, int writable)
{
    (void)call, (void)addr, (void)len, (void)writable;
    return 0;                   /* (no service to call: svc_service gives none) */
}

/* No monitor here: every tracepoint is off, and there is no area to read. */
static const uint64_t trace_off[TRACE_MAX_POINTS / 64];
const uint64_t *svc_trace_enabled = trace_off;

void svc_trace_record(unsigned id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    (void)id, (void)a0, (void)a1, (void)a2, (void)a3, (void)a4;
}

const struct trace_area *svc_trace_area(void)
{
    return NULL;
}

svc_handle svc_wakeup(void (*handler)(void), uint64_t *bits)
{
    *bits = 0;
    return 0;
}

int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles, uint32_t *got)
{
    return -E_NOSYS;
}

void svc_client_drop(const uint32_t *got)
{
}

/* ---------------------------------------------------------------- timer, console, clock */

int svc_timer_attach(void (*handler)(void))
{
    if (env.timer)
        return SVC_E_BUSY;
    env.timer = handler;
    return 0;
}

void svc_timer_set(uint64_t deadline_ns)
{
    env.deadline = deadline_ns;
}

void (*hf_console_hook)(const char *buf, uint64_t len);

void svc_console_write(const void *buf, uint64_t len)
{
    if (hf_console_hook)
        hf_console_hook(buf, len);
    if (hf_tracing)
        fprintf(stderr, "    console: %.*s%s", (int)len, (const char *)buf,
                len && ((const char *)buf)[len - 1] == '\n' ? "" : "\n");
}

/* The fake clock: moved by the driver, and a little by each call. */
uint64_t svc_clock_ns(void)
{
    return env.clock;
}

uint64_t hf_clock(void)
{
    return env.clock;
}

void hf_timer_check(void)
{
    if (env.timer && env.deadline && env.clock >= env.deadline) {
        env.deadline = 0;       /* at most once per deadline set */
        hf_trace("    timer fires at %llu ns", (unsigned long long)env.clock);
        env.timer();
    }
}

void hf_advance(uint64_t ns)
{
    env.clock += ns;
    hf_timer_check();
}

/* ---------------------------------------------------------------- requests */

/* Deliver fault message msg of thread t: the register entry first (the
 * personality's fault_fast, as both placements offer it; every other one
 * to its shared entry before that), then the service's entry. */
static void deliver(struct hf_thread *t, const uint64_t *msg)
{
    static struct hf_call hc;
    if (env.current)
        hf_fail("a request while another is in progress");
    memset(&hc, 0, sizeof(hc));
    hc.t = t;
    hc.active = 1;
    hc.call.label = LABEL_FAULT;
    hc.call.badge = t->badge;
    hc.call.pid = t->space ? t->space->id : 0;
    hc.call.env = &hc;
    hc.call.len = FAULT_MSG_LEN;
    env.current = &hc;
    t->state = HT_CALL;
    t->cpu_ns += 20000;
    env.clock += 1000;
    /* Every other fault is offered to the shared entry first, as with
     * several cores (it may only answer, never keep, and says which). */
    static unsigned offers;
    int r = SVC_FAST_OTHER;
    if (offers++ & 1) {
        r = linux_fault_shared(&hc.call, msg);
        if (r != SVC_FAST_ANSWERED && r != SVC_FAST_OTHER)
            hf_fail("the shared entry returned %d", r);
        if (hc.kept || (r == SVC_FAST_ANSWERED) != (hc.replied != 0))
            hf_fail("the shared entry kept a call, or answered and said otherwise (%d)", r);
    }
    if (r != SVC_FAST_ANSWERED)
        r = linux_fault_fast(&hc.call, msg);
    if (r == SVC_FAST_ANSWERED && !hc.replied && !hc.kept)
        hf_fail("the register entry said it answered a fault it neither answered nor kept");
    if (r != SVC_FAST_ANSWERED) {
        if (r != SVC_FAST_OTHER)
            hf_fail("the register entry for faults returned %d", r);
        if (hc.replied || hc.kept)
            hf_fail("the register entry answered a fault but said it did not");
        memcpy(hc.mr, msg, FAULT_MSG_LEN * sizeof(uint64_t));
        hc.call.mr = hc.mr;
        linux_service(&hc.call);
    }
    hc.active = 0;
    env.current = NULL;
    if (hc.kept && t->state == HT_CALL) {
        t->state = HT_BLOCKED;
        t->token = hc.kept;
    } else if (!hc.replied && !hc.kept && t->state == HT_CALL) {
        hf_fail("tid %llu: its call was neither answered nor kept, and the thread lives on: it waits for ever",
                (unsigned long long)(t->badge >> 7));
    }
}

/* Remember that t executes an svc at pc. */
static void add_site(struct hf_thread *t, uint64_t pc)
{
    for (unsigned i = 0; i < t->nsites && i < HF_SVC_SITES; i++)
        if (t->svc_sites[i] == pc)
            return;
    t->svc_sites[t->nsites++ % HF_SVC_SITES] = pc;
}

/* What a counting call may return at most: read/write's count, the
 * vectors' sum of sendmsg/recvmsg (peeked from the process's msghdr). */
static void set_limit(struct hf_thread *t, uint64_t nr)
{
    t->call_limited = 0;
    t->call_nr = nr;
    t->call_pc = t->regs.pc;
    const uint64_t *x = t->regs.x;
    if (nr == 63 || nr == 64 || nr == 67 || nr == 68 || nr == 206) {   /* read, write, pread, pwrite, sendto */
        t->call_limit = x[2];
        t->call_limited = 1;
    } else if (nr == 211 || nr == 212) {                                /* sendmsg, recvmsg */
        uint64_t hdr[7], iov[2], sum = 0;
        if (hf_peek(t->space, x[1], hdr, sizeof(hdr)) || hdr[3] > 64)
            return;
        for (uint64_t i = 0; i < hdr[3]; i++) {
            if (hf_peek(t->space, hdr[2] + i * 16, iov, sizeof(iov)))
                return;
            sum += iov[1];
        }
        t->call_limit = sum;
        t->call_limited = 1;
    }
}

void hf_syscall(struct hf_thread *t, uint64_t nr, const uint64_t *a)
{
    if (t->state != HT_RUN)
        hf_fail("driver: a call from a thread that is not running");
    if (a) {
        for (int i = 0; i < 6; i++)
            t->regs.x[i] = a[i];
        t->regs.x[8] = nr;
    }
    t->restart = 0;
    nr = t->regs.x[8];
    add_site(t, t->regs.pc);
    set_limit(t, nr);
    uint64_t msg[FAULT_MSG_LEN] = { FAULT_FOREIGN_SYSCALL, 0, 0x56000000ull, t->regs.pc + 4, t->regs.sp };
    for (int i = 0; i < 9; i++)
        msg[FAULT_MR_X0 + i] = t->regs.x[i];
    deliver(t, msg);
}

void hf_fault(struct hf_thread *t, unsigned kind, uint64_t addr, uint64_t esr)
{
    if (t->state != HT_RUN)
        hf_fail("driver: a fault of a thread that is not running");
    t->restart = 0;
    t->call_limited = 0;
    uint64_t msg[FAULT_MSG_LEN] = { kind, addr, esr, t->regs.pc, t->regs.sp };
    for (int i = 0; i < 9; i++)
        msg[FAULT_MR_X0 + i] = t->regs.x[i];
    deliver(t, msg);
}

unsigned hf_restarts_pending(void)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < env.nthreads; i++) {
        struct hf_thread *t = env.threads[i];
        n += t->state == HT_RUN && t->restart == HF_WOKEN && !t->suspended;
    }
    return n;
}

#define OWN_RUNS 16             /* a thread looping on its own svc runs it this often per round */

unsigned hf_run_restarts(unsigned max)
{
    unsigned ran = 0, woken = 0;
    for (uint32_t i = 0; i < env.nthreads; i++)
        env.threads[i]->own_runs = 0;
    for (int again = 1; again && ran < max; ) {
        again = 0;
        for (uint32_t i = 0; i < env.nthreads && ran < max; i++) {
            struct hf_thread *t = env.threads[i];
            if (t->state != HT_RUN || !t->restart || t->suspended || (t->restart == HF_OWN && t->own_runs >= OWN_RUNS))
                continue;
            hf_trace("  tid %llu runs its call %llu again", (unsigned long long)(t->badge >> 7),
                     (unsigned long long)t->regs.x[8]);
            woken += t->restart == HF_WOKEN;
            t->own_runs += t->restart == HF_OWN;
            hf_syscall(t, 0, NULL);
            hf_timer_check();
            ran++;
            again = 1;
        }
    }
    return woken;
}

int hf_native_call(uint64_t label, unsigned len, const uint64_t *mr, uint64_t *out)
{
    static struct hf_call hc;
    if (env.current)
        hf_fail("a request while another is in progress");
    memset(&hc, 0, sizeof(hc));
    hc.active = 1;
    hc.call.label = label;
    hc.call.env = &hc;
    hc.call.len = len;
    memcpy(hc.mr, mr, len * sizeof(uint64_t));
    hc.call.mr = hc.mr;
    env.current = &hc;
    linux_service(&hc.call);
    env.current = NULL;
    hc.active = 0;
    for (unsigned i = 0; i < hc.outlen; i++)
        out[i] = hc.out[i];
    return hc.replied;
}

struct hf_thread *hf_thread_at(unsigned i)
{
    return i < env.nthreads ? env.threads[i] : NULL;
}

unsigned hf_thread_count(void)
{
    return env.nthreads;
}

struct hf_thread *hf_thread_of_handle(svc_handle h)
{
    if (h < HANDLE_BASE || h - HANDLE_BASE >= env.nhandles || env.handles[h - HANDLE_BASE].kind != HK_THREAD)
        return NULL;
    return env.handles[h - HANDLE_BASE].obj;
}

int hf_token_live(svc_token token, struct hf_thread **t)
{
    if (token < TOKEN_BASE || token - TOKEN_BASE >= env.ntokens)
        return 0;
    struct hf_token *k = &env.tokens[token - TOKEN_BASE];
    *t = k->t;
    return k->state == TK_KEPT || k->state == TK_DEAD;
}

/* ---------------------------------------------------------------- reset and the final check */

void hf_env_reset(void)
{
    for (uint32_t i = 0; i < env.nmems; i++) {
        mem_release_pages(env.mems[i]);
        free(env.mems[i]);
    }
    for (uint32_t i = 0; i < env.nspaces; i++) {
        free(env.spaces[i]->maps);
        free(env.spaces[i]);
    }
    for (uint32_t i = 0; i < env.nthreads; i++)
        free(env.threads[i]);
    for (uint32_t i = 0; i < alloc_cap; i++)
        if (allocs[i].p)
            free(allocs[i].p);
    free(allocs);
    allocs = NULL;
    alloc_cap = alloc_count = 0;
    alloc_bytes = 0;
    free(env.handles);
    free(env.tokens);
    free(env.threads);
    free(env.spaces);
    free(env.mems);
    memset(&env, 0, sizeof(env));
    env.clock = 1000000000ull;
}

/* Is the place of an allocation in file `name` (a path ending in it)? */
static int from_file(const char *file, const char *name)
{
    size_t a = strlen(file), b = strlen(name);
    return a >= b && strcmp(file + a - b, name) == 0 && (a == b || file[a - b - 1] == '/');
}

void hf_env_check_clean(const svc_handle *keep, unsigned nkeep)
{
    for (uint32_t i = 0; i < env.nthreads; i++) {
        struct hf_thread *t = env.threads[i];
        if (t->state != HT_DEAD)
            hf_fail("leak: a thread (badge %#llx, state %d) is alive after every process ended",
                    (unsigned long long)t->badge, t->state);
        if (t->handles)
            hf_fail("leak: the personality still holds a handle of a dead thread (badge %#llx)",
                    (unsigned long long)t->badge);
    }
    for (uint32_t i = 0; i < env.nspaces; i++) {
        struct hf_space *s = env.spaces[i];
        if (!s->killed)
            hf_fail("leak: a space (id %llu) was never killed", (unsigned long long)s->id);
        if (s->handles)
            hf_fail("leak: the personality still holds the handle of a killed space (id %llu)",
                    (unsigned long long)s->id);
    }
    for (uint32_t i = 0; i < env.ntokens; i++)
        if (env.tokens[i].state != TK_USED)
            hf_fail("leak: a kept reply (token %#x) was never answered", TOKEN_BASE + i);
    for (uint32_t i = 0; i < env.nhandles; i++) {
        struct hf_handle *e = &env.handles[i];
        if (e->kind == HK_GONE)
            continue;
        int kept = 0;
        for (unsigned k = 0; k < nkeep; k++)
            kept |= keep[k] == HANDLE_BASE + i;
        if (!kept)
            hf_fail("leak: handle %#x (kind %d) is still held after every process ended", HANDLE_BASE + i, e->kind);
    }
    /* The personality's own memory: pipes and sockets are all gone; a table
     * made at first use exists once (one allocation left of each place that
     * makes one: a file and line, and for lx_alloc's, its caller). The file
     * system's contents stay. */
    struct hf_alloc left[256];
    unsigned nleft = 0;
    for (uint32_t i = 0; i < alloc_cap; i++) {
        struct hf_alloc *a = &allocs[i];
        if (!a->p || from_file(a->file, "rootfs.c"))
            continue;
        if (from_file(a->file, "pipe.c") || from_file(a->file, "socket.c"))
            hf_fail("leak: %zu bytes of svc_alloc at %s:%d outlive every process", a->size, a->file, a->line);
        for (unsigned j = 0; j < nleft; j++) {
            if (left[j].line == a->line && left[j].caller == a->caller && strcmp(left[j].file, a->file) == 0) {
                char by[256];
                __sanitizer_symbolize_pc(a->caller, "%f %L", by, sizeof(by));
                hf_fail("leak: two allocations of %s:%d called from %s (%zu and %zu bytes) are left, a table made once",
                        a->file, a->line, by, a->size, left[j].size);
            }
        }
        if (nleft < 256)
            left[nleft++] = *a;
    }
}
