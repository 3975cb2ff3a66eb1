/*
 * corepeer: the other process of coretest's cross-address-space tests.
 * mode=echo      serve echo requests on "ep"
 * mode=identity  call "ep" once (the caller checks badge and pid)
 * mode=futex     wait on the shared word of "shm", report on "ep"
 * mode=faulter   fault in three ways, report on "results", fault again
 * mode=prio      try to raise its own priority, report on "ep"
 * mode=fuzz      throw calls=N random system calls, report on "results"
 * mode=hog       take every free frame (eager objects), report on "ep", wait
 */
#include "petrel.h"
#include "../coretest/echo.h"

static void echo(uint32_t ep)
{
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(ep, &m);
    while (r == 0) {
        uint64_t label = MSG_LABEL(m.info);
        m.info = MSG_INFO(label + 1, echo_answer(&m), 0);
        if (label == LABEL_QUIT) {
            sys_ipc_reply(0, &m);
            return;
        }
        r = sys_ipc_reply_recv(ep, &m);
    }
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

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

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
    else if (!strcmp(mode, "prio"))
        prio();
    else if (!strcmp(mode, "memlimit"))
        memlimit();
    else if (!strcmp(mode, "fuzz"))
        fuzz();
    else if (!strcmp(mode, "hog"))
        hog();
    else
        printf("corepeer: unknown mode \"%s\"\n", mode);
    return 0;
}
