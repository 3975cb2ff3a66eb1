/* Memory objects: lazy zero fill, eager commit, 64 KiB and 2 MiB pages,
 * copy-on-write, files mapped in place, W^X, futexes. */
#include "coretest.h"

static bool all_zero(const uint64_t *p, uint64_t bytes)
{
    for (uint64_t i = 0; i < bytes / 8; i += 64)
        if (p[i])
            return false;
    return true;
}

static void pattern_check(const char *what, uint32_t flags, uint64_t size, uint64_t step)
{
    uint32_t h;
    uint64_t *p = mem_alloc(size, flags, &h);
    bool ok = p && all_zero(p, size);
    for (uint64_t off = 0; ok && off < size; off += step)
        p[off / 8] = off ^ 0xa5a5;
    for (uint64_t off = 0; ok && off < size; off += step)
        ok = p[off / 8] == (off ^ 0xa5a5);
    tap_ok(ok, "memory: %s reads zero, then holds what was written", what);
    if (p) {
        sys_mem_unmap(self_space(), (uint64_t)p);
        sys_handle_close(h);
    }
}

static void superpages(void)
{
    int64_t m = sys_mem_create(0x40000, MEM_PAGE_64K);
    uint64_t va = va_alloc(0x40000, 0x10000);
    tap_ok(m > 0 && sys_mem_map(self_space(), (uint32_t)m, va + 0x1000, 0, 0x40000, R_READ) == -E_INVAL &&
           sys_mem_map(self_space(), (uint32_t)m, va, 0x1000, 0x10000, R_READ) == -E_INVAL,
           "memory: 64 KiB pages need 64 KiB aligned addresses and offsets");
    tap_ok(sys_mem_create(0x11000, MEM_PAGE_64K) == -E_INVAL && sys_mem_create(0x100000, MEM_PAGE_2M) == -E_INVAL,
           "memory: object sizes must be whole pages of their size");
    sys_handle_close((uint32_t)m);
    pattern_check("a 256 KiB object of 64 KiB pages", MEM_PAGE_64K, 0x40000, 0x1000);
    pattern_check("a 4 MiB object of 2 MiB pages", MEM_PAGE_2M, 0x400000, 0x10000);
    pattern_check("an eager 64 KiB object", MEM_EAGER, 0x10000, 0x1000);
    pattern_check("a lazy 1 MiB object", 0, 0x100000, 0x1000);
}

static void cow(void)
{
    uint32_t a;
    uint64_t *pa = mem_alloc(0x4000, 0, &a);
    for (int i = 0; i < 4; i++)
        pa[i * 512] = 100 + i;
    int64_t c = sys_mem_clone(a);
    uint64_t vc = va_alloc(0x4000, 4096);
    int64_t err = c > 0 ? sys_mem_map(self_space(), (uint32_t)c, vc, 0, 0x4000, R_READ | R_WRITE) : c;
    uint64_t *pc = (uint64_t *)vc;
    bool same = !err && pc[0] == 100 && pc[512] == 101 && pc[1024] == 102 && pc[1536] == 103;
    tap_ok(same, "memory: a clone shows its source's data");
    pa[0] = 7;          /* write to the source: the clone keeps the old page */
    pc[512] = 8;        /* write to the clone: the source keeps its page */
    tap_ok(!err && pc[0] == 100 && pa[0] == 7 && pa[512] == 101 && pc[512] == 8 && pc[1024] == pa[1024],
           "memory: copy-on-write: writes to either side stay private");
    int64_t c2 = sys_mem_clone((uint32_t)c);
    uint64_t v2 = va_alloc(0x4000, 4096);
    sys_mem_map(self_space(), (uint32_t)c2, v2, 0, 0x4000, R_READ | R_WRITE);
    uint64_t *p2 = (uint64_t *)v2;
    pc[1536] = 9;
    tap_ok(c2 > 0 && p2[512] == 8 && p2[1536] == 103 && pc[1536] == 9, "memory: a clone of a clone is copy-on-write too");
    sys_mem_unmap(self_space(), v2);
    sys_mem_unmap(self_space(), vc);
    sys_mem_unmap(self_space(), (uint64_t)pa);
    sys_handle_close((uint32_t)c2);
    sys_handle_close((uint32_t)c);
    sys_handle_close(a);
}

static void files(void)
{
    struct petrel_bootfile bf;
    int64_t idx = bootfile_find("coretest", &bf);
    int64_t f = idx >= 0 ? sys_mem_from_bootfile(root_handle(), (uint64_t)idx) : idx;
    uint64_t va = va_alloc(bf.size, 4096), vc = va_alloc(bf.size, 4096);
    uint64_t size = (bf.size + 4095) & ~4095ull;
    int64_t e1 = f > 0 ? sys_mem_map(self_space(), (uint32_t)f, va, 0, size, R_READ) : f;
    const uint8_t *img = (const uint8_t *)va;
    tap_ok(e1 == 0 && memcmp(img, "\177ELF", 4) == 0, "memory: a boot image file maps in place");
    tap_ok(sys_mem_map(self_space(), (uint32_t)f, va_alloc(size, 4096), 0, size, R_READ | R_WRITE) == -E_PERM,
           "memory: a boot image file cannot be mapped writable");
    int64_t c = sys_mem_clone((uint32_t)f);
    int64_t e2 = c > 0 ? sys_mem_map(self_space(), (uint32_t)c, vc, 0, size, R_READ | R_WRITE) : c;
    uint8_t *cp = (uint8_t *)vc;
    bool ok = e2 == 0 && memcmp(cp, "\177ELF", 4) == 0;
    if (ok)
        cp[0] = 'X';
    tap_ok(ok && cp[0] == 'X' && img[0] == 0x7f, "memory: a clone of a file is private and writable");
    sys_mem_unmap(self_space(), va);
    sys_mem_unmap(self_space(), vc);
    sys_handle_close((uint32_t)f);
    sys_handle_close((uint32_t)c);
}

static void rules(void)
{
    int64_t m = sys_mem_create(0x2000, 0);
    uint64_t va = va_alloc(0x2000, 4096);
    tap_ok(sys_mem_map(self_space(), (uint32_t)m, va, 0, 0x2000, R_READ | R_WRITE | R_EXEC) == -E_PERM,
           "memory: writable and executable together is refused");
    tap_ok(sys_mem_map(self_space(), (uint32_t)m, 0xffffff8040000000ull, 0, 0x1000, R_READ) == -E_INVAL &&
           sys_mem_map(self_space(), (uint32_t)m, 0x7ffffff000ull, 0, 0x2000, R_READ) == -E_INVAL,
           "memory: no mapping reaches the kernel half");
    tap_ok(sys_mem_map(self_space(), (uint32_t)m, va, 0, 0x2000, R_READ) == 0 &&
           sys_mem_map(self_space(), (uint32_t)m, va + 0x1000, 0, 0x1000, R_READ) == -E_BUSY &&
           sys_mem_map(self_space(), (uint32_t)m, PETREL_ROOT_UTCB_VA, 0, 0x1000, R_READ) == -E_BUSY,
           "memory: mappings never overlap (each other or a UTCB)");
    int64_t ro = sys_handle_dup((uint32_t)m, R_READ, 0);
    tap_ok(sys_mem_map(self_space(), (uint32_t)ro, va_alloc(0x1000, 4096), 0, 0x1000, R_READ | R_WRITE) == -E_PERM,
           "memory: a read-only handle maps read-only only");
    tap_ok(sys_mem_unmap(self_space(), va + 0x1000) == -E_NOENT && sys_mem_unmap(self_space(), va) == 0 &&
           sys_mem_unmap(self_space(), va) == -E_NOENT, "memory: unmap takes a mapping's start, once");
    sys_handle_close((uint32_t)m);
    sys_handle_close((uint32_t)ro);
}

/* Probes that never fault: can this process read (futex_wait reads the
 * word) or write (thread_stats writes its record) the page at va? */
static bool readable(uint64_t va)
{
    return sys_futex_wait(va, 0x5a5a5a5a, 1) != -E_FAULT;
}

static bool writable(uint64_t va)
{
    return sys_thread_stats(self_thread(), (void *)va) == 0;
}

/* munmap and mprotect of any page range: head, tail, middle, across mappings. */
static void ranges(void)
{
    const uint64_t P = 4096;
    uint32_t h;
    volatile uint64_t *p = mem_alloc(16 * P, 0, &h);
    uint64_t va = (uint64_t)p;
    for (int i = 0; i < 16; i++)
        p[i * 512] = 0xabc0 + (uint64_t)i;
    bool head = sys_mem_unmap_range(self_space(), va, 2 * P) == 0 && !readable(va) && !readable(va + P) &&
                p[2 * 512] == 0xabc2;
    bool tail = sys_mem_unmap_range(self_space(), va + 14 * P, 2 * P) == 0 && !readable(va + 14 * P) &&
                !readable(va + 15 * P) && p[13 * 512] == 0xabcd;
    bool middle = sys_mem_unmap_range(self_space(), va + 6 * P, 2 * P) == 0 && !readable(va + 6 * P) &&
                  !readable(va + 7 * P) && p[5 * 512] == 0xabc5 && p[8 * 512] == 0xabc8 &&
                  sys_mem_unmap(self_space(), va + 8 * P) == 0 && !readable(va + 8 * P) && p[2 * 512] == 0xabc2;
    tap_ok(head && tail && middle, "memory: unmapping a range cuts a mapping's head, tail or middle (%d%d%d)",
           head, tail, middle);
    sys_mem_unmap_range(self_space(), va, 16 * P);
    tap_ok(!readable(va + 2 * P) && !readable(va + 5 * P), "memory: a range over a gap unmaps what is there");
    sys_handle_close(h);

    uint32_t a, b;
    uint64_t w = va_alloc(8 * P, P);
    int64_t ma = sys_mem_create(4 * P, 0), mb = sys_mem_create(4 * P, 0);
    a = (uint32_t)ma, b = (uint32_t)mb;
    bool mapped = sys_mem_map(self_space(), a, w, 0, 4 * P, R_READ | R_WRITE) == 0 &&
                  sys_mem_map(self_space(), b, w + 4 * P, 0, 4 * P, R_READ | R_WRITE) == 0;
    volatile uint64_t *q = (uint64_t *)w;
    for (int i = 0; mapped && i < 8; i++)
        q[i * 512] = 0x1000 + (uint64_t)i;
    bool across = mapped && sys_mem_unmap_range(self_space(), w + 2 * P, 4 * P) == 0 && !readable(w + 2 * P) &&
                  !readable(w + 5 * P) && q[1 * 512] == 0x1001 && q[6 * 512] == 0x1006;
    tap_ok(across, "memory: a range spanning two mappings cuts both");
    sys_mem_unmap_range(self_space(), w, 8 * P);

    bool prot = sys_mem_map(self_space(), a, w, 0, 4 * P, R_READ | R_WRITE) == 0 &&
                sys_mem_protect(self_space(), w + P, 2 * P, R_READ) == 0 && writable(w) && !writable(w + P) &&
                !writable(w + 2 * P) && writable(w + 3 * P) && readable(w + P) && q[1 * 512] == 0x1001 &&
                sys_mem_protect(self_space(), w + P, P, R_READ | R_WRITE) == 0 && writable(w + P) &&
                !writable(w + 2 * P);
    tap_ok(prot, "memory: protecting a range splits the mapping; rights come back within the handle's");
    int64_t wx = sys_mem_protect(self_space(), w, P, R_READ | R_WRITE | R_EXEC);
    int64_t gap = sys_mem_protect(self_space(), w + 3 * P, 2 * P, R_READ);
    sys_mem_unmap_range(self_space(), w, 8 * P);
    int64_t ro = sys_handle_dup(a, R_READ, 0);
    int64_t up = sys_mem_map(self_space(), (uint32_t)ro, w, 0, 4 * P, R_READ) ?: sys_mem_protect(self_space(), w, P, R_READ | R_WRITE);
    tap_ok(wx == -E_PERM && gap == -E_NOENT && up == -E_PERM,
           "memory: protect refuses W+X (%s), unmapped pages (%s) and rights the handle lacked (%s)",
           error_str(wx), error_str(gap), error_str(up));
    sys_mem_unmap_range(self_space(), w, 8 * P);
    int64_t big = sys_mem_create(0x20000, MEM_PAGE_64K);
    uint64_t bv = va_alloc(0x20000, 0x10000);
    int64_t inside = sys_mem_map(self_space(), (uint32_t)big, bv, 0, 0x20000, R_READ) ?:
                     sys_mem_unmap_range(self_space(), bv + P, P);
    int64_t whole = sys_mem_unmap_range(self_space(), bv + 0x10000, 0x10000);
    tap_ok(inside == -E_INVAL && whole == 0, "memory: a range may not cut a 64 KiB page (%s), whole ones go (%s)",
           error_str(inside), error_str(whole));
    sys_mem_unmap_range(self_space(), bv, 0x20000);
    sys_handle_close((uint32_t)big);
    sys_handle_close((uint32_t)ro);
    sys_handle_close(a);
    sys_handle_close(b);
}

struct futex_waiter {
    volatile uint32_t *word;
    volatile int64_t result;
    volatile int done;
};

static void futex_thread(void *arg)
{
    struct futex_waiter *w = arg;
    w->result = sys_futex_wait((uint64_t)w->word, 0, 0);
    w->done = 1;
}

static void futexes(void)
{
    static volatile uint32_t word;
    word = 5;
    tap_ok(sys_futex_wait((uint64_t)&word, 6, 0) == -E_AGAIN, "futex: a changed value returns at once (E_AGAIN)");
    uint64_t t0 = now_ns();
    int64_t r = sys_futex_wait((uint64_t)&word, 5, 30000000ull);
    uint64_t dt = now_ns() - t0;
    tap_ok(r == -E_TIMEOUT && dt >= 30000000ull && dt < 2000000000ull, "futex: a wait times out (%lu ms)",
           (unsigned long)(dt / 1000000));
    tap_ok(sys_futex_wait((uint64_t)&word + 1, 5, 0) == -E_INVAL && sys_futex_wait(0x10, 0, 0) == -E_FAULT &&
           sys_futex_wake(0xffffff8040000000ull, 1) == -E_FAULT, "futex: bad addresses are refused");

    word = 0;
    struct futex_waiter w = { &word, 1, 0 };
    thread_spawn(futex_thread, &w, 90, -1);
    sleep_ms(10);
    word = 1;
    int64_t woken = sys_futex_wake((uint64_t)&word, 10);
    for (int i = 0; i < 100 && !w.done; i++)
        sleep_ms(1);
    tap_ok(woken == 1 && w.done && w.result == 0, "futex: wake wakes the waiter (%ld woken)", (long)woken);

    /* Two processes, two virtual addresses, one physical word. */
    uint32_t shm;
    volatile uint32_t *mine = mem_alloc(0x1000, 0, &shm);
    mine[0] = 0;
    uint32_t done = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "shm", shm, R_READ | R_WRITE }, { "ep", done, R_WRITE } };
    struct spawn_result sr;
    int64_t err = spawn_peer("futex", g, 2, -1, 0, &sr);
    sleep_ms(30);                                     /* the peer waits on word 0 */
    mine[0] = 1;
    int64_t n = sys_futex_wake((uint64_t)mine, 1);
    struct petrel_msg m = { 0 };
    int64_t rr = err ? err : sys_ipc_recv(done, &m);
    tap_ok(n == 1 && rr == 0 && m.mr[0] == 0 && m.mr[1] != (uint64_t)mine,
           "futex: processes sharing memory meet on the physical word (peer va 0x%lx)", (unsigned long)m.mr[1]);
    if (rr == 0) {
        m.info = 0;
        sys_ipc_reply(0, &m);
    }
    sys_handle_close(done);
}

/* A device range: QEMU virt's PL031 real-time clock, through its
 * PrimeCell identification registers. */
static void device(void)
{
    int64_t m = sys_mem_create_phys(root_handle(), 0x9010000, 0x1000);
    uint64_t va = va_alloc(0x1000, 0x1000);
    int64_t err = m > 0 ? sys_mem_map(self_space(), (uint32_t)m, va, 0, 0x1000, R_READ | R_WRITE) : m;
    volatile uint32_t *rtc = (volatile uint32_t *)va;
    bool id = !err && rtc[0xff0 / 4] == 0x0d && rtc[0xff4 / 4] == 0xf0 && rtc[0xff8 / 4] == 0x05 &&
              rtc[0xffc / 4] == 0xb1 && (rtc[0xfe0 / 4] & 0xff) == 0x31;
    tap_ok(id && rtc[0] > 1000000000u, "memory: a device range maps uncached and reads the RTC's registers");
    tap_ok(sys_mem_create_phys(root_handle(), 0x40000000, 0x1000) == -E_INVAL &&
           sys_mem_create_phys(root_handle(), 0x9010001, 0x1000) == -E_INVAL &&
           sys_mem_create_phys(root_handle(), ~0ull - 0xfff, 0x2000) == -E_INVAL,
           "memory: device objects over RAM, misaligned or wrapping are refused");
    /* K2's regions (docs/design/k2.md) are RAM whether or not the shadow
     * kernel runs: its local region, the mailbox and spinlock words, the
     * shared statics, the DSM area, the balloon pool. */
    static const uint64_t k2[] = { 0x41000000, 0x41fff000, 0x42000000, 0x42010000, 0x42200000, 0x43000000 };
    bool refused = true;
    for (unsigned i = 0; i < sizeof(k2) / sizeof(k2[0]); i++)
        refused &= sys_mem_create_phys(root_handle(), k2[i], 0x1000) == -E_INVAL;
    refused &= sys_mem_create_phys(root_handle(), 0x3ffff000, 0x2000) == -E_INVAL;    /* reaching into RAM */
    tap_ok(refused, "memory: no device object over K2's regions (the shadow kernel, the mailbox, the DSM area)");
    sys_mem_unmap(self_space(), va);
    sys_handle_close((uint32_t)m);
}

/* Memory for a device (MEM_DMA): committed and charged at creation, each
 * page one physical block of RAM whose address mem_dma_addr gives and
 * which never changes (a clone, which would share it, is refused). */
static void dma(void)
{
    int64_t before = sys_space_usage(self_space(), LIMIT_MEMORY);
    int64_t m = sys_mem_create(0x20000, MEM_PAGE_64K | MEM_DMA);
    int64_t used = sys_space_usage(self_space(), LIMIT_MEMORY) - before;
    int64_t a0 = m > 0 ? sys_mem_dma_addr((uint32_t)m, 0) : m, a1 = m > 0 ? sys_mem_dma_addr((uint32_t)m, 0x1fffe) : m;
    tap_ok(m > 0 && used >= 0x20000 && a0 >= 0x40000000 && a0 < 0x60000000 && !(a0 & 0xffff) &&
           a1 >= 0x40000000 && (a1 & 0xffff) == 0xfffe,
           "memory: a DMA object is committed and charged at once, in 64 KiB blocks of RAM (0x%lx, 0x%lx)",
           (unsigned long)a0, (unsigned long)a1);
    uint64_t va = va_alloc(0x20000, 0x10000);
    int64_t err = m > 0 ? sys_mem_map(self_space(), (uint32_t)m, va, 0, 0x20000, R_READ | R_WRITE) : m;
    volatile uint64_t *p = (volatile uint64_t *)va;
    bool kept = !err && p[0] == 0 && p[0x1fff8 / 8] == 0;
    if (kept) {
        p[0] = 0x1234;
        kept = sys_mem_dma_addr((uint32_t)m, 0) == a0 && p[0] == 0x1234;
    }
    tap_ok(kept, "memory: a DMA object maps, reads zero and keeps its address when written");
    int64_t ro = m > 0 ? sys_handle_dup((uint32_t)m, R_READ, 0) : m;
    int64_t plain = sys_mem_create(0x1000, MEM_EAGER);
    tap_ok(sys_mem_clone((uint32_t)m) == -E_PERM && sys_mem_dma_addr((uint32_t)m, 0x20000) == -E_INVAL &&
           sys_mem_dma_addr((uint32_t)m, ~0ull) == -E_INVAL && sys_mem_dma_addr((uint32_t)ro, 0) == -E_PERM &&
           sys_mem_dma_addr((uint32_t)plain, 0) == -E_INVAL && sys_mem_dma_addr(self_space(), 0) == -E_BADHANDLE &&
           sys_mem_create(0x1000, MEM_DMA << 1) == -E_INVAL && sys_mem_create(0x11000, MEM_PAGE_64K | MEM_DMA) == -E_INVAL,
           "memory: a DMA object is never cloned; its address needs R_WRITE, an offset inside, and a DMA object");
    sys_handle_close((uint32_t)ro);
    sys_handle_close((uint32_t)plain);
    sys_mem_unmap(self_space(), va);
    sys_handle_close((uint32_t)m);
    tap_ok(sys_space_usage(self_space(), LIMIT_MEMORY) == before, "memory: a DMA object's memory is back when it goes");
}

/* Starting and ending processes gives back everything they took: the
 * root's usage (which counts its children) returns to where it was. */
static void spawn_reap(void)
{
    char n_s[16] = "1000";
    start_arg("spawns", n_s, sizeof(n_s));
    uint64_t n = 0;
    for (const char *p = n_s; *p >= '0' && *p <= '9'; p++)
        n = n * 10 + (uint64_t)(*p - '0');
    struct spawn_req req = { "corepeer", "mode=exit", 0, -1, NULL, 0, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    int64_t err = spawn(&req, &r);          /* the first one warms the runtime's tables */
    if (!err) {
        wait_state(r.thread, THREAD_DEAD, 2000);
        sys_handle_close(r.thread);
        sys_handle_close(r.space);
    }
    int64_t before[LIMIT_KINDS];
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        before[k] = sys_space_usage(self_space(), k);
    uint64_t done = 0;
    for (; !err && done < n; done++) {
        err = spawn(&req, &r);
        if (err)
            break;
        wait_state(r.thread, THREAD_DEAD, 2000);
        sys_handle_close(r.thread);
        sys_handle_close(r.space);
    }
    bool back = true;
    for (unsigned k = 0; k < LIMIT_KINDS; k++)
        back &= sys_space_usage(self_space(), k) == before[k];
    tap_ok(!err && back, "memory: %lu processes started and reaped leave nothing behind "
           "(memory %ld -> %ld bytes, threads %ld -> %ld, handles %ld -> %ld, spaces %ld -> %ld)",
           (unsigned long)done, (long)before[LIMIT_MEMORY], (long)sys_space_usage(self_space(), LIMIT_MEMORY),
           (long)before[LIMIT_THREADS], (long)sys_space_usage(self_space(), LIMIT_THREADS),
           (long)before[LIMIT_HANDLES], (long)sys_space_usage(self_space(), LIMIT_HANDLES),
           (long)before[LIMIT_SPACES], (long)sys_space_usage(self_space(), LIMIT_SPACES));
}

/* A process's memory limit: allocations past it fail, a touch past it faults. */
static void limits(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", ep, R_WRITE } };
    struct spawn_req req = { "corepeer", "mode=memlimit", 0, -1, g, 1, 0, 0x40000, 0, 0, 0 };
    struct spawn_result r;
    int64_t err = spawn(&req, &r);
    struct petrel_msg m = { 0 };
    int64_t rr = err ? err : sys_ipc_recv(ep, &m);
    tap_ok(rr == 0 && (int64_t)m.mr[0] > 0 && (int64_t)m.mr[1] == -E_LIMIT && m.mr[2] <= 0x40000 &&
           m.mr[2] > 0x40000 - 4 * 4096,
           "memory: allocations within a process's limit succeed, beyond it fail, it cannot raise it (used %lu)",
           (unsigned long)m.mr[2]);
    if (rr == 0) {
        m.info = 0;
        sys_ipc_reply(0, &m);
    }
    struct petrel_thread_stats st = { 0 };
    for (int i = 0; i < 100 && st.state != THREAD_DEAD; i++) {
        sleep_ms(2);
        sys_thread_stats(r.thread, &st);
    }
    tap_ok(st.state == THREAD_DEAD, "memory: touching a page past the limit is a fault");
    tap_ok(sys_space_limit(self_space(), 0x1000) == -E_RANGE, "memory: a limit below the usage is refused");
    sys_handle_close(ep);
}

struct toucher {
    volatile uint32_t go, done;
    volatile uint64_t *page;
};

static void toucher_thread(void *arg)
{
    struct toucher *t = arg;
    while (!t->go)
        sys_futex_wait((uint64_t)&t->go, 0, 0);
    t->page[0] = 0x600d;        /* a fresh page while no frame is free */
    t->done = 1;
    sys_futex_wake((uint64_t)&t->done, 1);
}

/*
 * Out of memory is not a death sentence for a bystander: another process
 * takes every free frame, a thread of ours touching a fresh page waits
 * (it has no fault handler), and continues once the hog is killed.
 */
static void out_of_memory(void)
{
    static struct toucher t;
    uint32_t h;
    t.page = mem_alloc(0x1000, 0, &h);
    int64_t th = thread_spawn(toucher_thread, &t, 0, -1);
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", ep, R_WRITE } };
    struct spawn_req req = { "corepeer", "mode=hog", 0, -1, g, 1, 0, 0, 0, 0, 0 };
    struct spawn_result r;
    struct petrel_msg m = { 0 };
    int64_t err = th < 0 ? th : spawn(&req, &r);
    int64_t rr = err ? err : sys_ipc_recv(ep, &m);
    tap_ok(rr == 0 && m.mr[0] > 0, "memory: a process takes every free frame (%lu MiB in %lu objects)",
           (unsigned long)(m.mr[0] >> 20), (unsigned long)m.mr[1]);
    t.go = 1;
    sys_futex_wake((uint64_t)&t.go, 1);
    sleep_ms(50);
    struct petrel_thread_stats st = { 0 };
    sys_thread_stats((uint32_t)th, &st);
    tap_ok(!t.done && st.state != THREAD_DEAD,
           "memory: a thread whose page cannot be backed waits instead of dying (state %u)", st.state);
    int64_t killed = err ? err : sys_space_kill(r.space);
    for (int i = 0; i < 200 && !t.done; i++)
        sleep_ms(5);
    tap_ok(killed == 1 && t.done && t.page[0] == 0x600d,
           "memory: once the hog is killed (%ld thread) the waiting thread goes on", (long)killed);
    /* It runs on after `done` (on another core, perhaps): let it end, so
     * that the next test's count of our threads does not see it go. */
    for (int i = 0; i < 200 && th > 0 && st.state != THREAD_DEAD; i++) {
        sleep_ms(2);
        sys_thread_stats((uint32_t)th, &st);
    }
    if (!err) {
        sys_handle_close(r.space);
        sys_handle_close(r.thread);
    }
    sys_handle_close(ep);
    sys_mem_unmap(self_space(), (uint64_t)t.page);
    sys_handle_close(h);
}

void test_memory(void)
{
    out_of_memory();
    spawn_reap();
    limits();
    device();
    dma();
    superpages();
    cow();
    files();
    rules();
    ranges();
    futexes();
}
