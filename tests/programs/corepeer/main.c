/*
 * corepeer: the other process of coretest's cross-address-space tests.
 * mode=echo      serve echo requests on "ep"
 * mode=identity  call "ep" once (the caller checks badge and pid)
 * mode=futex     wait on the shared word of "shm", report on "ep"
 * mode=faulter   fault in three ways, report on "results", fault again
 * mode=prio      try to raise its own priority, report on "ep"
 * mode=exit      nothing: exit at once
 * mode=fuzz      throw calls=N random system calls, report on "results"
 * mode=hog       take every free frame (eager objects), report on "ep", wait
 * mode=handles   grow its handle table to 100,000 handles and to the most a
 *                process can hold, shrink it back, then meet a memory and a
 *                handle limit of its own; reports each step on "ep"
 *
 * Reproducers of kernel holes (coretest/review.c runs them, one per boot):
 * mode=deadbind    bind a notification to a dead thread, free the thread, let
 *                  its memory become our FP save area, signal
 * mode=deadfault   set a fault handler on a dead thread, exit (leaks our space)
 * mode=kfill       fill each kmalloc size class up to our limit, free it all
 * mode=devptr      pass a device mapping ("dev") to a system call
 * mode=stickyfault a fault whose handler endpoint dies, then an ordinary call
 * mode=svchandles  pass handles to a kernel-placed service ("svc") that takes none
 * mode=bkl         long kernel entries: map and unmap a huge range over empty page tables
 * mode=pi          serve "pi" (given to us) at a low priority; keep what a send lends
 * mode=conprint    one long print through a kernel-placed console ("svc")
 */
#include "petrel.h"
#include "../coretest/echo.h"

static void echo(uint32_t ep)
{
    int64_t r = echo_loop(ep);
    if (r != 0)
        printf("corepeer: echo: receive failed: %s (ep %u)\n", error_str(r), ep);
}

static void report(const char *name, uint64_t a, uint64_t b, uint64_t c)
{
    struct petrel_msg m = { MSG_INFO(0x400, 3, 0), { a, b, c }, 0, 0 };
    sys_ipc_call(start_handle(name), &m);
}

static void futex_peer(void)
{
    uint64_t va = va_alloc(0x1000, 0x1000) + 0x10000;   /* deliberately not the parent's address */
    int64_t err = sys_mem_map(self_space(), start_handle("shm"), va, 0, 0x1000, R_READ | R_WRITE);
    volatile uint32_t *w = (uint32_t *)va;
    int64_t r = err ? err : sys_futex_wait(va, 0, 2000000000ull);
    report("ep", (uint64_t)r, va, *w);
}

static void faulter(void)
{
    register int64_t x0 __asm__("x0") = 0;
    register int64_t x8 __asm__("x8") = 172;               /* Linux getpid */
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8) : "memory");
    int64_t from_svc = x0;
    register int64_t y0 __asm__("x0") = 0;
    __asm__ volatile(".inst 0x00000000" : "+r"(y0) :: "memory");   /* udf #0 */
    int64_t from_udf = y0;
    uint64_t from_mem = *(volatile uint64_t *)0x500000010ull;     /* the pager backs it */
    report("results", (uint64_t)from_svc, (uint64_t)from_udf, from_mem);
    *(volatile uint64_t *)0x600000000ull = 1;                      /* stopped here */
    puts("corepeer: still running after STOP");
}

/*
 * Allocate against a 256 KiB limit (which counts its kernel memory too:
 * thread, space, handle table, page tables), report, then touch pages
 * past it.
 */
static void memlimit(void)
{
    int64_t a = sys_mem_create(0x20000, MEM_EAGER);
    int64_t b = sys_mem_create(0x40000, MEM_EAGER);
    int64_t dma = sys_mem_create(0x40000, MEM_DMA);        /* committed at once too: refused the same */
    if (dma != b)
        b = dma > 0 ? 0 : dma;
    uint32_t c;
    volatile uint8_t *p = mem_alloc(0x100000, 0, &c);
    int touched = 0;
    /* Fill to within three pages of the limit (a page may need two table pages). */
    while (p && touched < 256 && sys_space_usage(self_space(), LIMIT_MEMORY) + 3 * 4096 <= 0x40000)
        p[touched++ * 4096] = 1;
    int64_t used = sys_space_limit(self_space(), 0x40000);  /* unchanged limit: reports usage */
    if (sys_space_limit(self_space(), 0x80000) != -E_PERM || sys_space_limit(self_space(), 0) != -E_PERM)
        used = -1;                                          /* it must not raise its own limit */
    report("ep", (uint64_t)a, (uint64_t)b, (uint64_t)used);
    for (int i = 0; p && i < 8; i++)
        p[(touched + i) * 4096] = 1;                        /* over it: a fault, no handler */
    puts("corepeer: wrote past the memory limit");
}

static void prio(void)
{
    int64_t up = sys_thread_set_priority(self_thread(), 150);
    int64_t down = sys_thread_set_priority(self_thread(), 80);
    report("ep", (uint64_t)up, (uint64_t)down, 0);
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void) { return xorshift64(&rng); }

extern char svc_table[];
typedef int64_t (*svc_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

/* An argument: small numbers, likely handles, pointers good and bad, junk. */
static uint64_t arg(uint64_t *buf)
{
    switch (rnd() % 10) {
    case 0: return 0;
    case 1: return rnd() % 16;
    case 2: return (rnd() % 24) | ((rnd() % 3) << 9);         /* plausible handle values */
    case 3: return (uint64_t)buf + (rnd() % 8192);             /* our own memory */
    case 4: return 0xffffff8040000000ull + (rnd() % 0x100000); /* the kernel */
    case 5: return rnd() & 0x7ffffff000ull;                    /* somewhere in user space */
    case 6: return 1ull << (rnd() % 64);
    case 7: return ~0ull - (rnd() % 4096);
    case 8: return rnd() % 0x400000;
    default: return rnd();
    }
}

static void fuzz(void)
{
    char calls_s[16] = "100000";
    start_arg("calls", calls_s, sizeof(calls_s));
    uint64_t calls = 0;
    for (const char *p = calls_s; *p >= '0' && *p <= '9'; p++)
        calls = calls * 10 + (uint64_t)(*p - '0');
    /* No way to hurt ourselves through our own space or thread handles. */
    sys_handle_close(start_handle("space"));
    sys_handle_close(start_handle("thread"));
    static uint64_t buf[1024];
    uint64_t ok = 0, errors = 0;
    for (uint64_t i = 0; i < calls; i++) {
        unsigned n = (unsigned)(1 + rnd() % 127);
        if (n == 1 || n == 2 || n == 62)
            continue;               /* debug_write (console noise), thread_exit, notify_wait (may wait forever) */
        uint64_t a[6];
        for (int k = 0; k < 6; k++)
            a[k] = arg(buf);
        if (n >= 51 && n <= 57)
            a[1] |= MSG_NONBLOCK;   /* IPC must not wait for a partner that never comes */
        if (n == 80)
            a[2] = 1000000;         /* futex_wait: at most a millisecond */
        if (n == 41 || n == 32)
            a[0] = 0;               /* thread_kill, thread_suspend: not on a guessed handle of ours */
        int64_t r = ((svc_fn)(void *)(svc_table + 8 * n))(a[0], a[1], a[2], a[3], a[4], a[5]);
        if (r >= 0)
            ok++;
        else
            errors++;
    }
    report("results", calls, ok, errors);
}

/* Take all free memory: eager objects of 4 KiB pages, halving the size
 * whenever one does not fit, down to one page. */
static void hog(void)
{
    uint64_t taken = 0, objects = 0;
    for (uint64_t size = 256ull << 20; size >= 4096; ) {
        int64_t m = sys_mem_create(size, MEM_EAGER);
        if (m > 0) {
            taken += size;
            objects++;
        } else {
            size /= 2;
        }
    }
    report("ep", taken, objects, 0);
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, 0, 0);
}

/* ---------------------------------------------------------------- reproducers */

static volatile uint32_t go_word, never_word;

static void sleep_ns(uint64_t ns)
{
    sys_futex_wait((uint64_t)&never_word, 0, ns);
}

struct signaller {
    uint32_t n;
    volatile int64_t result;
};

static void signaller(void *arg)
{
    struct signaller *s = arg;
    while (!go_word)
        sys_futex_wait((uint64_t)&go_word, 0, 0);
    puts("corepeer: deadbind: signalling the notification bound to the freed thread");
    s->result = sys_notify_signal(s->n, 1);
    puts("corepeer: deadbind: signal returned");
}

/*
 * notify_bind accepts a dead thread; thread_free does not unbind, so the
 * notification keeps a pointer to the freed struct thread (kmalloc class
 * 1024). Our first FP instruction allocates our FP save area (528 bytes,
 * the same class) in exactly that slot, so the "thread" the notification
 * points at is now our q0..q31: state (offset 318) = T_RECV, link.prev
 * (offset 336) and waiting_on (offset 368) = addresses we choose.
 * notify_signal then runs ipc_cancel on it: list_del writes through our
 * pointer.
 */
static void deadbind(void)
{
    static struct signaller sg;
    sg.n = (uint32_t)sys_notify_create();
    sg.result = 1;
    /* Every other allocation first: the helper thread, its stack. */
    int64_t helper = thread_spawn(signaller, &sg, 0, -1);
    sys_thread_set_priority(self_thread(), 0);
    uint64_t utcb = va_alloc(4096, 4096);
    int64_t t = sys_thread_create(self_space(), utcb);
    int64_t killed = t > 0 ? sys_thread_kill((uint32_t)t) : t;
    int64_t bound = sys_notify_bind((uint32_t)t, sg.n);
    printf("corepeer: deadbind: helper %ld, thread %ld, kill %s, notify_bind on the dead thread: %s\n",
           (long)helper, (long)t, error_str(killed), error_str(bound));
    sys_handle_close((uint32_t)t);                      /* frees the struct thread */

    static uint8_t fake[512] __attribute__((aligned(16)));
    fake[318] = 4;                                      /* T_RECV */
    *(uint64_t *)&fake[328] = 0xffffff80dead0000ull;    /* link.next */
    *(uint64_t *)&fake[336] = 0xffffff80dead0000ull;    /* link.prev: written through */
    *(uint64_t *)&fake[368] = 0xffffff80dead1000ull;    /* waiting_on */
    register uint64_t x0 __asm__("x0") = (uint64_t)fake;
    __asm__ volatile(".inst 0x4cdf2000\n\t.inst 0x4cdf2004\n\t.inst 0x4cdf2008\n\t.inst 0x4cdf200c\n\t"
                     ".inst 0x4cdf2010\n\t.inst 0x4cdf2014\n\t.inst 0x4cdf2018\n\t.inst 0x4cdf201c"
                     : "+r"(x0) :: "memory");           /* ld1 {v0-v31}: our FP state is now `fake` */
    go_word = 1;
    sys_futex_wake((uint64_t)&go_word, 1);
    sleep_ns(20000000);                                 /* switched out: the FP state is saved */
    report("ep", (uint64_t)bound, (uint64_t)sg.result, 0);
}

/*
 * thread_set_fault_handler accepts a dead thread; thread_free does not
 * drop fault_ep, so the endpoint (paid by us, holding our space) is never
 * freed, and neither is our space: its struct, L1 table, page tables
 * and ASID, and the charges on our parent.
 */
static void deadfault(void)
{
    int64_t ep = sys_endpoint_create();
    uint64_t utcb = va_alloc(4096, 4096);
    int64_t t = sys_thread_create(self_space(), utcb);
    sys_thread_kill((uint32_t)t);
    int64_t set = sys_thread_set_fault_handler((uint32_t)t, (uint32_t)ep);
    sys_handle_close((uint32_t)t);
    sys_handle_close((uint32_t)ep);
    /* Page tables (kept until the space is freed): 64 L3 tables. */
    uint32_t m;
    volatile uint8_t *p = mem_alloc(4096, 0, &m);
    uint64_t base = 0x4000000000ull;
    for (int i = 0; p && i < 64; i++) {
        uint64_t va = base + (uint64_t)i * 0x200000;
        if (sys_mem_map(self_space(), m, va, 0, 4096, R_READ) == 0) {
            (void)*(volatile uint8_t *)va;
            sys_mem_unmap(self_space(), va);
        }
    }
    report("ep", (uint64_t)set, (uint64_t)sys_space_usage(self_space(), LIMIT_MEMORY), 0);
}

/*
 * kmalloc never gives a frame back once a size class took it. Fill each
 * class from 32 to 2048 bytes (memory-object page arrays of 4..256
 * entries, each object held by a lazy mapping) until our limit says no,
 * then free it all: our usage goes back to nothing, the frames stay in
 * the kernel heap, charged to nobody.
 */
static void kfill(void)
{
    uint64_t objects = 0;
    uint64_t base = 0x1000000000ull;
    for (uint64_t pages = 4; pages <= 256; pages *= 2) {
        uint64_t size = pages * 4096, n = 0;
        for (;;) {
            int64_t h = sys_mem_create(size, 0);
            if (h < 0)
                break;
            int64_t e = sys_mem_map(self_space(), (uint32_t)h, base + n * size, 0, size, R_READ);
            sys_handle_close((uint32_t)h);
            if (e)
                break;
            n++;
        }
        for (uint64_t i = 0; i < n; i++)
            sys_mem_unmap(self_space(), base + i * size);
        printf("corepeer: kfill: %lu objects with %lu-byte page arrays, freed again (usage now %ld)\n",
               (unsigned long)n, (unsigned long)(pages * 8), (long)sys_space_usage(self_space(), LIMIT_MEMORY));
        objects += n;
    }
    report("ep", objects, (uint64_t)sys_space_usage(self_space(), LIMIT_MEMORY), 0);
}

/* A driver passes its device mapping to the kernel as a buffer. */
static void devptr(void)
{
    uint64_t va = va_alloc(0x1000, 0x1000);
    int64_t e = sys_mem_map(self_space(), start_handle("dev"), va, 0, 0x1000, R_READ | R_WRITE);
    printf("corepeer: devptr: device page mapped at 0x%lx (%s); debug_write from it\n", (unsigned long)va,
           error_str(e));
    int64_t w = sys_debug_write((const void *)va, 4);
    int64_t f = sys_futex_wake(va, 1);
    report("ep", (uint64_t)e, (uint64_t)w, (uint64_t)f);
}

static volatile int hijacked_flag;

static void hijacked(void)
{
    puts("corepeer: stickyfault: the reply to an ordinary call redirected this thread's pc");
    hijacked_flag = 1;
    report("ep", 0xbad, 0, 0);
    sys_thread_exit(0);
}

static void closer(void *arg)
{
    sleep_ns(5000000);
    sys_handle_close((uint32_t)(uintptr_t)arg);        /* the fault handler endpoint goes */
}

static uint64_t server_stack[512] __attribute__((aligned(16)));

static void replier(void *arg)
{
    uint32_t s = (uint32_t)(uintptr_t)arg;
    struct petrel_msg m = { 0 };
    if (sys_ipc_recv(s, &m) != 0)
        return;
    /* An ordinary reply of three words (a server's answer, say). */
    m.info = MSG_INFO(1, 3, 0);
    m.mr[0] = 0;
    m.mr[1] = (uint64_t)hijacked;
    m.mr[2] = (uint64_t)&server_stack[510];
    sys_ipc_reply(0, &m);
}

/*
 * A thread in a fault (in_fault) whose handler endpoint is closed wakes
 * with E_CLOSED but keeps in_fault; do_reply then treats the reply to its
 * next ordinary call as a fault reply: MR1 becomes its pc, MR2 its sp,
 * MR3.. its x0.., MR0 == 1 kills it.
 */
static void stickyfault(void)
{
    int64_t fe = sys_endpoint_create();
    int64_t s = sys_endpoint_create();
    sys_thread_set_fault_handler(self_thread(), (uint32_t)fe);
    thread_spawn(closer, (void *)(uintptr_t)fe, 0, -1);
    thread_spawn(replier, (void *)(uintptr_t)s, 0, -1);
    register int64_t x0 __asm__("x0") = 0;
    register int64_t x8 __asm__("x8") = 172;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8) : "memory");   /* waits for a handler that goes away */
    int64_t from_svc = x0;
    struct petrel_msg m = { MSG_INFO(7, 0, 0), { 0 }, 0, 0 };
    int64_t c = sys_ipc_call((uint32_t)s, &m);
    printf("corepeer: stickyfault: svc #0 gave %s, the call returned normally (%s, mr1 0x%lx)\n",
           error_str(from_svc), error_str(c), (unsigned long)m.mr[1]);
    report("ep", 0, (uint64_t)c, (uint64_t)from_svc);
}

/*
 * The generated skeletons refuse a request whose handle count is wrong
 * (svc_fail) without releasing the handles take_handles took: in the
 * kernel placement each one is a kmalloc'd khandle (charged to nobody)
 * and a reference on the object, forever.
 */
static void svchandles(void)
{
    uint32_t svc = start_handle("svc");
    int64_t e = sys_endpoint_create();
    struct petrel_utcb *u = utcb();
    uint64_t calls = 0, refused = 0;
    for (int i = 0; i < 300000; i++) {
        u->send_handles[0] = i == 0 ? self_space() : (uint32_t)e;   /* our own space too, once */
        u->send_handles[1] = u->send_handles[2] = (uint32_t)e;
        u->send_rights[0] = u->send_rights[1] = u->send_rights[2] = R_READ;
        struct petrel_msg m = { MSG_INFO((2ull << 16) | 2, 1, 3), { 1 }, 0, 0 };    /* fs close(1), 3 handles */
        if (sys_ipc_call(svc, &m) == 0)
            calls++;
        refused += (int64_t)m.mr[0] == -E_INVAL;
    }
    printf("corepeer: svchandles: %lu calls with three handles each, %lu refused; our usage %ld bytes\n",
           (unsigned long)calls, (unsigned long)refused, (long)sys_space_usage(self_space(), LIMIT_MEMORY));
    report("ep", calls, refused, (uint64_t)sys_space_usage(self_space(), LIMIT_MEMORY));
}

#define HANDLES_MANY    100000
#define HANDLES_MOST    ((1u << 18) - 1)    /* the kernel's HANDLE_MAX */
#define DUP_RIGHTS      (R_READ | R_WRITE | R_DUP)

static void report6(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
    struct petrel_msg m = { MSG_INFO(0x400, 6, 0), { a, b, c, d, e, f }, 0, 0 };
    sys_ipc_call(start_handle("ep"), &m);
}

static int64_t usage(unsigned kind)
{
    return sys_space_usage(self_space(), kind);
}

/* Duplicate ep into hs[] until `max` or the first error; returns the count, *err what stopped it. */
static uint32_t dup_many(uint32_t ep, uint32_t *hs, uint32_t max, int64_t *err)
{
    uint32_t n = 0;
    *err = 0;
    for (; n < max; n++) {
        int64_t h = sys_handle_dup(ep, DUP_RIGHTS, 0);
        if (h <= 0) {
            *err = h;
            break;
        }
        hs[n] = (uint32_t)h;
    }
    return n;
}

/* Close hs[0..n); returns how many closes failed. */
static uint32_t close_many(const uint32_t *hs, uint32_t n)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++)
        bad += sys_handle_close(hs[i]) != 0;
    return bad;
}

/*
 * A handle table that grows and shrinks (the kernel's limit is 262,143
 * handles, in 4 KiB pages of 128 that the process pays for):
 *  1. 100,000 handles, each resolving; closing them returns the memory;
 *  2. as many as a process can hold (E_NOMEM at 262,143), and back;
 *  3. a closed value names nothing for 16,382 new handles in its slot,
 *     and only the 16,383rd brings it back (the generation window);
 *  4. over a memory limit a little above its usage: E_LIMIT, and back;
 *  5. at a handle limit of its own: E_LIMIT exactly there.
 * Usage is compared before and after each step; the spawner checks.
 */
static void handles(void)
{
    uint32_t mh;
    uint32_t *hs = mem_alloc(HANDLES_MOST * sizeof(uint32_t), MEM_EAGER, &mh);
    int64_t e = sys_endpoint_create(), err;
    if (!hs || e <= 0) {
        report6(0, 0, 0, 0, 0, 0);
        return;
    }
    uint32_t ep = (uint32_t)e;
    for (uint32_t i = 0; i < HANDLES_MOST; i += 1024)
        hs[i] = 0;                                  /* every page of the array in place now */
    int64_t mem0 = usage(LIMIT_MEMORY), h0 = usage(LIMIT_HANDLES);

    /* 1: count, resolved, handles counted, memory grown, closes failed, memory and handles left */
    uint32_t n = dup_many(ep, hs, HANDLES_MANY, &err), resolved = 0;
    for (uint32_t i = 0; i < n; i++)
        resolved += sys_handle_info(hs[i]) == (int64_t)(OBJ_ENDPOINT | DUP_RIGHTS << 8);
    int64_t grown = usage(LIMIT_MEMORY) - mem0, counted = usage(LIMIT_HANDLES) - h0;
    uint32_t bad = close_many(hs, n);
    report6(n, resolved, (uint64_t)counted, (uint64_t)grown, bad,
            (uint64_t)(usage(LIMIT_MEMORY) - mem0) | (uint64_t)(usage(LIMIT_HANDLES) - h0) << 32);

    /* 2: what stopped it, the handles held then, closes failed, memory and handles left */
    n = dup_many(ep, hs, HANDLES_MOST, &err);
    int64_t most = usage(LIMIT_HANDLES);
    bad = close_many(hs, n);
    report6((uint64_t)err, (uint64_t)most, bad, (uint64_t)(usage(LIMIT_MEMORY) - mem0),
            (uint64_t)(usage(LIMIT_HANDLES) - h0), 0);

    /* 3: the stale value, times it named something, whether the 16,383rd brought it back */
    int64_t stale = sys_handle_dup(ep, DUP_RIGHTS, 0);
    uint32_t named = 0;
    sys_handle_close((uint32_t)stale);
    for (uint32_t i = 1; i < 16383; i++) {
        int64_t h = sys_handle_dup(ep, DUP_RIGHTS, 0);
        named += h <= 0 || h == stale || sys_handle_info((uint32_t)stale) != -E_BADHANDLE;
        sys_handle_close((uint32_t)h);
    }
    int64_t again = sys_handle_dup(ep, DUP_RIGHTS, 0);
    sys_handle_close((uint32_t)again);
    report6((uint64_t)stale, named, again == stale, (uint64_t)(usage(LIMIT_MEMORY) - mem0),
            (uint64_t)(usage(LIMIT_HANDLES) - h0), 0);

    /* 4: a memory limit two pages above its usage: what stopped it, count, memory at the stop and after */
    int64_t mem1 = usage(LIMIT_MEMORY);
    int64_t lim = sys_space_set_limit(self_space(), LIMIT_MEMORY, (uint64_t)mem1 + 8192);
    n = lim < 0 ? 0 : dup_many(ep, hs, HANDLES_MOST, &err);
    int64_t at = usage(LIMIT_MEMORY) - mem1;
    bad = close_many(hs, n);
    report6((uint64_t)(lim < 0 ? lim : err), n, (uint64_t)at, (uint64_t)(usage(LIMIT_MEMORY) - mem1), bad, 0);

    /* 5: a handle limit 200 above its usage: what stopped it, count, handles at the stop and after */
    int64_t h1 = usage(LIMIT_HANDLES);
    lim = sys_space_set_limit(self_space(), LIMIT_HANDLES, (uint64_t)h1 + 200);
    n = lim < 0 ? 0 : dup_many(ep, hs, HANDLES_MOST, &err);
    int64_t top = usage(LIMIT_HANDLES) - h1;
    bad = close_many(hs, n);
    report6((uint64_t)(lim < 0 ? lim : err), n, (uint64_t)top, (uint64_t)(usage(LIMIT_HANDLES) - h1), bad, 0);
}

/*
 * Page tables are never freed before the space is, and the walks of
 * mmu_range_empty (mem_map) and mmu_unmap_user (mem_unmap, clone, ...)
 * step through an empty L3 table entry by entry. Fill the limit with
 * empty L3 tables, then map and unmap one lazy object over all of them:
 * millions of steps per system call, under the kernel lock.
 */
static void bkl(void)
{
    uint32_t small;
    mem_alloc(4096, 0, &small);
    uint64_t base = 0x4000000000ull, tables = 0;     /* 256 GiB */
    for (; tables < 8192; tables++) {               /* (tables that empty are freed now: cap the loop) */
        uint64_t va = base + tables * 0x200000;
        if (sys_mem_map(self_space(), small, va, 0, 4096, R_READ) != 0)
            break;
        volatile uint8_t *p = (volatile uint8_t *)va;
        (void)p[0];                                   /* the fault builds the L3 table */
        sys_mem_unmap(self_space(), va);
        if (sys_space_usage(self_space(), LIMIT_MEMORY) + (512 << 10) >= sys_space_usage(self_space(), LIMIT_MEMORY | LIMIT_QUERY_MAX))
            break;
    }
    uint64_t span = (tables + 1) * 0x200000;
    int64_t big = sys_mem_create(span, MEM_PAGE_2M);
    printf("corepeer: bkl: tables built; object of %lu MiB: %s\n", (unsigned long)(span >> 20),
           big > 0 ? "ok" : error_str(big));
    uint64_t worst = 0, total = 0;
    int rounds = 10;
    for (int i = 0; i < rounds && big > 0; i++) {
        uint64_t t0 = (uint64_t)sys_clock_ns();
        int64_t e = sys_mem_map(self_space(), (uint32_t)big, base, 0, span, R_READ);
        uint64_t t1 = (uint64_t)sys_clock_ns();
        if (e == 0)
            sys_mem_unmap(self_space(), base);
        uint64_t t2 = (uint64_t)sys_clock_ns();
        worst = MAX(worst, MAX(t1 - t0, t2 - t1));
        total += t2 - t0;
    }
    printf("corepeer: bkl: %lu empty L3 tables; mem_map + mem_unmap of %lu MiB: worst call %lu us, %lu us a pair\n",
           (unsigned long)tables, (unsigned long)(span >> 20), (unsigned long)(worst / 1000),
           (unsigned long)(total / 1000 / rounds));
    report("ep", tables, worst, 0);
}

/*
 * A sender queued on an endpoint lends its priority to the endpoint's
 * server (do_send: inherit(ep->server, ...)), but only a reply gives it
 * back (uninherit). A plain send is never replied to: the server keeps
 * the sender's priority for good, above the maximum it was given.
 */
static void pi(void)
{
    uint32_t ep = start_handle("pi");
    struct petrel_thread_stats st = { 0 };
    sys_thread_stats(self_thread(), &st);
    uint32_t before = st.effective_prio;
    struct petrel_msg m = { 0 };
    sys_ipc_recv(ep, &m);                   /* we serve ep: ep->server is us */
    /* Busy now (the parent's high-priority thread sends meanwhile). */
    m.info = 0;
    report("ep", 0, 0, 0);                  /* "busy": the parent sends on pi now */
    sys_ipc_recv(ep, &m);                   /* its send, no reply owed */
    sys_thread_stats(self_thread(), &st);
    uint32_t after_recv = st.effective_prio;
    sleep_ns(5000000);
    sys_thread_stats(self_thread(), &st);
    printf("corepeer: pi: priority %u (maximum given: %u); after receiving a send %u, later %u\n",
           before, st.prio, after_recv, st.effective_prio);
    report("ep", before, after_recv, st.effective_prio);
}

/* A kernel-placed service runs in the caller's kernel entry, under the
 * kernel lock, for as long as the request says: console print writes
 * text_len bytes to the UART before it returns. */
static void conprint(void)
{
    uint64_t len = 256 << 10;
    uint8_t *buf = mem_alloc(len, 0, NULL);
    for (uint64_t i = 0; buf && i < len; i++)
        buf[i] = ' ';
    struct petrel_msg m = { MSG_INFO((3ull << 16) | 1, 2, 0), { (uint64_t)buf, len }, 0, 0 };
    uint64_t t0 = (uint64_t)sys_clock_ns();
    int64_t c = buf ? sys_ipc_call(start_handle("svc"), &m) : -E_NOMEM;
    uint64_t t1 = (uint64_t)sys_clock_ns();
    printf("\ncorepeer: conprint: printing %lu KiB took one kernel entry of %lu ms (%s, status %ld)\n",
           (unsigned long)(len >> 10), (unsigned long)((t1 - t0) / 1000000), error_str(c), (long)m.mr[0]);
    report("ep", t1 - t0, (uint64_t)m.mr[1], (uint64_t)c);
}

int main(void *info)
{
    char mode[16] = "";
    start_arg("mode", mode, sizeof(mode));
    if (!strcmp(mode, "echo"))
        echo(start_handle("ep"));
    else if (!strcmp(mode, "identity"))
        report("ep", 0x1d, 0, 0);
    else if (!strcmp(mode, "futex"))
        futex_peer();
    else if (!strcmp(mode, "faulter"))
        faulter();
    else if (!strcmp(mode, "exit"))
        return 0;
    else if (!strcmp(mode, "prio"))
        prio();
    else if (!strcmp(mode, "memlimit"))
        memlimit();
    else if (!strcmp(mode, "fuzz"))
        fuzz();
    else if (!strcmp(mode, "hog"))
        hog();
    else if (!strcmp(mode, "handles"))
        handles();
    else if (!strcmp(mode, "deadbind"))
        deadbind();
    else if (!strcmp(mode, "deadfault"))
        deadfault();
    else if (!strcmp(mode, "kfill"))
        kfill();
    else if (!strcmp(mode, "devptr"))
        devptr();
    else if (!strcmp(mode, "stickyfault"))
        stickyfault();
    else if (!strcmp(mode, "svchandles"))
        svchandles();
    else if (!strcmp(mode, "bkl"))
        bkl();
    else if (!strcmp(mode, "pi"))
        pi();
    else if (!strcmp(mode, "conprint"))
        conprint();
    else
        printf("corepeer: unknown mode \"%s\"\n", mode);
    return 0;
}
