/*
 * The strace view of Linux calls (`./petrel run --strace`, tools/petrel/
 * strace.py): with the monitor's linux group on, each call the personality
 * serves is recorded as lx_enter (number, x0, x1), lx_args (x2..x5), lx_data
 * (the strings it names, the first bytes of a buffer it writes), and,
 * when answered, lx_data (the first bytes of a buffer it filled) and
 * lx_exit (linux.c). Switched off, a call pays one test of the enabled bits.
 */
#include "lx.h"
#include "svc_trace.h"

#define STR_MAX   96            /* bytes of a string recorded */
#define BUF_MAX   32            /* ... of a buffer */
#define WHERE_MORE (1ull << 32)
#define WHERE_OUT  (1ull << 33)

/* What a call passes: its string arguments (bit i: argument i is a
 * NUL-terminated string), a buffer it reads (argument `in`, its length in
 * argument `in_len`), a buffer it fills (argument `out`, the result its length). */
struct shape {
    uint16_t nr;
    uint8_t strings;
    int8_t in, in_len, out;
};

static const struct shape shapes[] = {
    { NR_openat, 1 << 1, -1, -1, -1 }, { NR_newfstatat, 1 << 1, -1, -1, -1 }, { NR_statx, 1 << 1, -1, -1, -1 },
    { NR_faccessat, 1 << 1, -1, -1, -1 }, { NR_faccessat2, 1 << 1, -1, -1, -1 },
    { NR_readlinkat, 1 << 1, -1, -1, 2 }, { NR_mkdirat, 1 << 1, -1, -1, -1 }, { NR_unlinkat, 1 << 1, -1, -1, -1 },
    { NR_mknodat, 1 << 1, -1, -1, -1 }, { NR_fchmodat, 1 << 1, -1, -1, -1 }, { NR_fchownat, 1 << 1, -1, -1, -1 },
    { NR_utimensat, 1 << 1, -1, -1, -1 }, { NR_renameat, 1 << 1 | 1 << 3, -1, -1, -1 },
    { NR_renameat2, 1 << 1 | 1 << 3, -1, -1, -1 }, { NR_linkat, 1 << 1 | 1 << 3, -1, -1, -1 },
    { NR_symlinkat, 1 << 0 | 1 << 2, -1, -1, -1 }, { NR_chdir, 1 << 0, -1, -1, -1 }, { NR_chroot, 1 << 0, -1, -1, -1 },
    { NR_execve, 1 << 0, -1, -1, -1 }, { NR_truncate, 1 << 0, -1, -1, -1 }, { NR_statfs, 1 << 0, -1, -1, -1 },
    { NR_mount, 1 << 0 | 1 << 1 | 1 << 2, -1, -1, -1 }, { NR_umount2, 1 << 0, -1, -1, -1 },
    { NR_inotify_add_watch, 1 << 1, -1, -1, -1 }, { NR_memfd_create, 1 << 0, -1, -1, -1 },
    { NR_write, 0, 1, 2, -1 }, { NR_pwrite64, 0, 1, 2, -1 }, { NR_sendto, 0, 1, 2, -1 },
    { NR_read, 0, -1, -1, 1 }, { NR_pread64, 0, -1, -1, 1 }, { NR_recvfrom, 0, -1, -1, 1 },
    { NR_getcwd, 0, -1, -1, 0 },
};

static const struct shape *shape_of(uint64_t nr)
{
    for (unsigned i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        if (shapes[i].nr == nr)
            return &shapes[i];
    return NULL;
}

static int on(unsigned id)
{
    return svc_trace_enabled[id / 64] >> (id % 64) & 1;
}

/* `len` bytes of `bytes` as lx_data events of argument `arg` (more: the
 * whole was longer; out: it came back). */
static void data(uint32_t tid, unsigned arg, const uint8_t *bytes, uint32_t len, int more, int out)
{
    for (uint32_t at = 0, piece = 0; at < len || (piece == 0 && len == 0); at += 24, piece++) {
        uint64_t d[3] = { 0, 0, 0 };
        for (uint32_t i = 0; i < 24 && at + i < len; i++)
            d[i / 8] |= (uint64_t)bytes[at + i] << (8 * (i % 8));
        uint64_t where = arg | (uint64_t)piece << 8 | (uint64_t)len << 16 | (more ? WHERE_MORE : 0) |
                         (out ? WHERE_OUT : 0);
        trace_lx_data(tid, where, d[0], d[1], d[2]);
        if (len == 0)
            break;
    }
}

void lx_trace_enter(struct lx_ctx *c, uint64_t nr, const uint64_t *a)
{
    uint32_t tid = (uint32_t)c->t->tid;
    trace_lx_enter((uint32_t)c->p->pid, tid, nr, a[0], a[1]);
    if (!on(TP_LX_ARGS) && !on(TP_LX_DATA))
        return;
    trace_lx_args(tid, a[2], a[3], a[4], a[5]);
    const struct shape *s = shape_of(nr);
    if (!s || !on(TP_LX_DATA))
        return;
    uint8_t buf[STR_MAX + 1];
    for (unsigned i = 0; i < 6; i++) {
        if (!(s->strings >> i & 1))
            continue;
        int64_t n = lx_copy_str(c, (char *)buf, a[i], STR_MAX + 1);
        if (n >= 0)
            data(tid, i, buf, (uint32_t)n, 0, 0);
        else if (n == -LX_ENAMETOOLONG)
            data(tid, i, buf, STR_MAX, 1, 0);
    }
    if (s->in >= 0) {
        uint64_t len = a[s->in_len];
        uint32_t n = len < BUF_MAX ? (uint32_t)len : BUF_MAX;
        if (lx_copy_in(c, buf, a[s->in], n) == 0)
            data(tid, (unsigned)s->in, buf, n, len > n, 0);
    }
}

void lx_trace_exit(struct lx_ctx *c, uint64_t nr, const uint64_t *a, int64_t r)
{
    uint32_t tid = (uint32_t)c->t->tid;
    const struct shape *s = on(TP_LX_DATA) ? shape_of(nr) : NULL;
    if (s && s->out >= 0 && r > 0) {
        uint8_t buf[BUF_MAX];
        uint32_t n = r < BUF_MAX ? (uint32_t)r : BUF_MAX;
        if (lx_copy_in(c, buf, a[s->out], n) == 0)
            data(tid, (unsigned)s->out, buf, n, (uint64_t)r > n, 1);
    }
    trace_lx_exit((uint32_t)c->p->pid, tid, nr, (uint64_t)r);
}
