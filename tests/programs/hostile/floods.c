/*
 * Attack 7: kernel memory floods. Each makes one kind of kernel object
 * until the kernel refuses (or CHAIN_MAX or the given cap is reached),
 * keeping what it made, and reports the count, the refusal, an extra
 * figure and the memory usage and limit of the process at that point.
 * (Chained spaces are mode=chain.)
 */
#include "hostile_int.h"

#define FLOOD_VA    0x4000000000ull     /* far from the runtime's allocations */

struct flood {
    uint64_t count;
    int64_t err;                /* what stopped it; 0 if the cap did */
    uint64_t extra;
};

/* Lazy objects of 512 GiB in 2 MiB pages: a 2 MiB page array each. */
static void lazy_huge(struct flood *f)
{
    for (; f->count < 64; f->count++) {
        int64_t m = sys_mem_create(512ull << 30, MEM_PAGE_2M);
        if (m < 0) {
            f->err = m;
            return;
        }
    }
}

/* Threads never started, their handles kept (a never-started thread
 * whose last handle closes dies at once, so only kept ones pile up). */
static void threads(struct flood *f)
{
    for (; f->count < CHAIN_MAX; f->count++) {
        int64_t t = sys_thread_create(self_space(), va_alloc(4096, 4096));
        if (t < 0) {
            f->err = t;
            return;
        }
    }
}

/* The same in a space it made: when the process ends, that space and
 * its threads end with it. */
static void threads_elsewhere(struct flood *f)
{
    int64_t s = sys_space_create();
    if (s < 0) {
        f->err = s;
        return;
    }
    for (; f->count < CHAIN_MAX; f->count++) {
        int64_t t = sys_thread_create((uint32_t)s, FOREIGN_UTCB - f->count * 0x2000);
        if (t < 0) {
            f->err = t;
            return;
        }
    }
}

/* Endpoints whose only handles sit in the tables of spaces made to
 * hold them (extra: the number of such spaces). */
static void endpoints(struct flood *f)
{
    int64_t sink = 0;
    for (; f->count < 8 * CHAIN_MAX; f->count++) {
        int64_t e = sys_endpoint_create();
        if (e < 0) {
            f->err = e;
            return;
        }
        int64_t g = sink > 0 ? sys_handle_give((uint32_t)sink, (uint32_t)e, R_ALL) : -E_NOMEM;
        if (g == -E_NOMEM) {            /* no space yet, or its table is full */
            sink = sys_space_create();
            g = sink;
            if (sink > 0) {
                f->extra++;
                g = sys_handle_give((uint32_t)sink, (uint32_t)e, R_ALL);
            }
        }
        sys_handle_close((uint32_t)e);
        if (g < 0) {
            f->err = g;
            return;
        }
    }
}

/* One eager 4 KiB object mapped at 2 MiB strides: a page table each. */
static void tables(struct flood *f)
{
    int64_t m = sys_mem_create(4096, MEM_EAGER);
    if (m < 0) {
        f->err = m;
        return;
    }
    for (; f->count < CHAIN_MAX; f->count++) {
        uint64_t va = FLOOD_VA + f->count * 0x200000ull;
        int64_t err = sys_mem_map(self_space(), (uint32_t)m, va, 0, 4096, R_READ | R_WRITE);
        if (err) {
            f->err = err;
            return;
        }
        *(volatile uint64_t *)va = f->count;   /* touched */
    }
}

/* Many 4 KiB mappings of one lazy object, side by side. */
static void mappings(struct flood *f)
{
    int64_t m = sys_mem_create(4096, 0);
    if (m < 0) {
        f->err = m;
        return;
    }
    for (; f->count < 4 * CHAIN_MAX; f->count++) {
        int64_t err = sys_mem_map(self_space(), (uint32_t)m, FLOOD_VA + f->count * 4096, 0, 4096, R_READ);
        if (err) {
            f->err = err;
            return;
        }
    }
}

void attack_flood(void)
{
    static const struct { const char *name; void (*fn)(struct flood *); } kinds[] = {
        { "lazy2m", lazy_huge }, { "threads", threads }, { "elsewhere", threads_elsewhere },
        { "endpoints", endpoints },
        { "tables", tables }, { "mappings", mappings },
    };
    char what[16] = "";
    start_arg("what", what, sizeof(what));
    struct flood f = { 0, -E_INVAL, 0 };
    for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (!strcmp(what, kinds[i].name)) {
            f.err = 0;
            kinds[i].fn(&f);
        }
    }
    report(f.count, (uint64_t)f.err, f.extra, (uint64_t)sys_space_usage(self_space(), LIMIT_MEMORY),
           (uint64_t)sys_space_usage(self_space(), LIMIT_MEMORY | LIMIT_QUERY_MAX), 0);
}
