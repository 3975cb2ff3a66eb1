/*
 * The Linux system call table (AArch64 numbers, asm-generic/unistd.h) and
 * the calls that need no module of their own: exit, identity, time,
 * uname, sysinfo, resource usage, random bytes.
 *
 * A call that is not in the table returns -ENOSYS and is logged once per
 * number ("petrel-linux: ... unknown system call N"); it never ends the
 * process. Arguments are read as Linux reads them: an `int` is the low 32
 * bits of its register, pointers are checked against the user range
 * (EFAULT) and reached only through copies.
 */
#include "lx.h"

#define NSYS 512
#define LX_VERSION_STRING "#1 Petrel 0.1 (Linux personality)"

static uint8_t logged[NSYS / 8];

/* exit ends the calling thread (the process with its last one), exit_group the process. */
static int64_t sys_exit(struct lx_ctx *c, uint64_t code, int group)
{
    int status = (int)((code & 0xff) << 8);
    if (group)
        lx_proc_end(c->p, status);
    else
        lx_thread_exit(c, status);
    return LX_NORETURN;
}

/* struct new_utsname: six fields of 65 bytes. */
/* The host and domain names (sethostname, setdomainname: root may set them). */
static char names[2][65] = { "petrel", "(none)" };

static int64_t sys_uname(struct lx_ctx *c, uint64_t buf)
{
    static const char *const fields[6] = {
        "Linux", NULL, "6.1.0-petrel", LX_VERSION_STRING, "aarch64", NULL,
    };
    char u[6][65];
    memset(u, 0, sizeof(u));
    for (int i = 0; i < 6; i++) {
        const char *f = i == 1 ? names[0] : i == 5 ? names[1] : fields[i];
        memcpy(u[i], f, strlen(f));
    }
    return lx_copy_out(c, buf, u, sizeof(u));
}

/* sethostname (which 0) and setdomainname (1): len bytes, at most 64. */
static int64_t sys_setname(struct lx_ctx *c, int which, uint64_t uname, uint64_t len)
{
    int32_t l = (int32_t)len;                   /* (an int, as Linux takes it) */
    if (l < 0 || l > 64)
        return -LX_EINVAL;
    char n[65] = { 0 };
    if (lx_copy_in(c, n, uname, (uint64_t)l))
        return -LX_EFAULT;
    memcpy(names[which], n, sizeof(n));
    return 0;
}

/* The calendar: the real-time clock's seconds when the personality
 * started, less the system counter then. The RTC (an ARM PL031, granted as
 * devices = ["arm,pl031"]) is read once; without one the realtime clock
 * starts at the epoch at boot. */
#define RTC_DR  0x00                            /* the data register: seconds since the epoch */
static uint64_t realtime_base;

void lx_clock_init(void)
{
    uint32_t irq;
    volatile uint32_t *rtc = svc_device("arm,pl031", &irq);
    if (rtc) {
        uint64_t now = svc_clock_ns(), sec = rtc[RTC_DR / 4];
        realtime_base = sec * 1000000000ull > now ? sec * 1000000000ull - now : 0;
    }
}

uint64_t lx_realtime_base(void)
{
    return realtime_base;
}

#define NS          1000000000ull
#define USER_HZ     100                         /* clock_t's ticks a second (AT_CLKTCK) */

enum {
    CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
    CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
    CLOCK_SGI_CYCLE, CLOCK_TAI,
};

/* A CPU-time clock's id names a process or a thread: ~pid << 3, 4 for a
 * thread, the low two bits the kind (PROF, VIRT, SCHED: one time here, as
 * the kernel does not split user and system time). Its time in *ns, or
 * -EINVAL for an id that names nothing Linux would answer for. */
static int cpu_clock(struct lx_ctx *c, int32_t id, uint64_t *ns)
{
    if ((id & 3) == 3)
        return -LX_EINVAL;
    int32_t pid = ~(id >> 3);
    if (id & 4) {                               /* a thread of the caller's process */
        struct lx_thread *t = pid ? lx_thread_of_tid(pid) : c->t;
        if (!t || t->p != c->p)
            return -LX_EINVAL;
        *ns = lx_thread_cpu_ns(t);
        return 0;
    }
    struct lx_proc *p = pid ? lx_proc_of_pid(pid) : c->p;
    if (!p || p->ended)
        return -LX_EINVAL;
    *ns = lx_proc_cpu_ns(p);
    return 0;
}

/* The time of clock `clock` in *ns; 0 or -EINVAL. CLOCK_REALTIME, its
 * COARSE and ALARM forms, and TAI (no leap seconds are kept: TAI is the
 * calendar, as on a Linux whose offset was never set): the calendar
 * (above); MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME and
 * BOOTTIME_ALARM: the system counter since boot; the CPU-time clocks: the
 * kernel's accounting of the process's or thread's threads. */
int lx_clock_counter_ns(uint64_t clock, uint64_t *ns)
{
    switch ((int32_t)clock) {
    case CLOCK_REALTIME: case CLOCK_REALTIME_COARSE: case CLOCK_REALTIME_ALARM: case CLOCK_TAI:
        *ns = svc_clock_ns() + realtime_base;
        return 0;
    case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW: case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME:
    case CLOCK_BOOTTIME_ALARM:
        *ns = svc_clock_ns();
        return 0;
    default:
        return -1;
    }
}

static int clock_read(struct lx_ctx *c, uint64_t clock, uint64_t *ns)
{
    int32_t id = (int32_t)clock;
    if (id < 0)
        return cpu_clock(c, id, ns);
    if (lx_clock_counter_ns(clock, ns) == 0)
        return 0;
    switch (id) {
    case CLOCK_PROCESS_CPUTIME_ID:
        *ns = lx_proc_cpu_ns(c->p);
        return 0;
    case CLOCK_THREAD_CPUTIME_ID:
        *ns = lx_thread_cpu_ns(c->t);
        return 0;
    default:
        return -LX_EINVAL;
    }
}

/* clock_gettime: a struct timespec of the clock's time. */
static int64_t sys_clock_gettime(struct lx_ctx *c, uint64_t clock, uint64_t buf)
{
    uint64_t ns;
    int err = clock_read(c, clock, &ns);
    if (err)
        return err;
    int64_t ts[2] = { (int64_t)(ns / NS), (int64_t)(ns % NS) };
    return lx_copy_out(c, buf, ts, sizeof(ts));
}

/* The time zone settimeofday keeps (minutes west of Greenwich, DST kind):
 * only reported back, as Linux's sys_tz. */
static int32_t time_zone[2];

/* The latest calendar time that may be set: Linux's TIME_SETTOD_SEC_MAX
 * (the end of its 64-bit nanosecond time, less 30 years of uptime). */
#define SETTOD_SEC_MAX  (9223372036ll - 946080000ll)

/* Set the calendar to sec:nsec (Linux's do_settimeofday64): EINVAL for a
 * time Linux refuses, or one before the time since boot (the calendar
 * would start before the machine did). Waits and timers set for an
 * absolute calendar time follow it (lx_calendar_moved). */
static int set_calendar(int64_t sec, int64_t nsec)
{
    if (sec < 0 || nsec < 0 || nsec >= (int64_t)NS || sec >= SETTOD_SEC_MAX)
        return -LX_EINVAL;
    uint64_t want = (uint64_t)sec * NS + (uint64_t)nsec, now = svc_clock_ns();
    if (want < now)
        return -LX_EINVAL;
    int64_t delta = (int64_t)(want - now) - (int64_t)realtime_base;
    realtime_base = want - now;
    lx_calendar_moved(delta);
    return 0;
}

/* clock_settime: only CLOCK_REALTIME can be set (the one user is root).
 * Every other clock of a number (CLOCK_PROCESS_CPUTIME_ID among them) is
 * EINVAL before the time is read; a CPU-time clock of clock_getcpuclockid
 * is read first (EFAULT), then EPERM if its process or thread exists and
 * EINVAL if not, as Linux checks. */
static int64_t sys_clock_settime(struct lx_ctx *c, uint64_t clock, uint64_t tp)
{
    int32_t id = (int32_t)clock;
    uint64_t ns;
    if (id >= 0 && id != CLOCK_REALTIME)
        return -LX_EINVAL;
    int64_t ts[2];
    if (lx_copy_in(c, ts, tp, sizeof(ts)))
        return -LX_EFAULT;
    if (id < 0)
        return cpu_clock(c, id, &ns) ? -LX_EINVAL : -LX_EPERM;
    return set_calendar(ts[0], ts[1]);
}

/* settimeofday: the calendar (a NULL tv leaves it) and the time zone (a
 * NULL tz leaves it; at most 15 hours from Greenwich). Microseconds up to
 * and including 1,000,000 pass the first check, as in Linux, and fail the
 * second. */
static int64_t sys_settimeofday(struct lx_ctx *c, uint64_t tv, uint64_t tz)
{
    int64_t t[2] = { 0, 0 };
    int32_t zone[2];
    if (tv) {
        if (lx_copy_in(c, t, tv, sizeof(t)))
            return -LX_EFAULT;
        if (t[1] > 1000000 || t[1] < 0)
            return -LX_EINVAL;
    }
    if (tz && lx_copy_in(c, zone, tz, sizeof(zone)))
        return -LX_EFAULT;
    if (tv && (t[0] < 0 || t[1] * 1000 >= (int64_t)NS || t[0] >= SETTOD_SEC_MAX))
        return -LX_EINVAL;
    if (tz) {
        if (zone[0] > 15 * 60 || zone[0] < -15 * 60)
            return -LX_EINVAL;
        time_zone[0] = zone[0];
        time_zone[1] = zone[1];
    }
    return tv ? set_calendar(t[0], t[1] * 1000) : 0;
}

/* clock_getres: every clock reads the counter to the nanosecond (the
 * coarse ones too: they are not coarser here), so 1 ns; a NULL buffer
 * only checks the clock. */
static int64_t sys_clock_getres(struct lx_ctx *c, uint64_t clock, uint64_t buf)
{
    uint64_t ns;
    int err = clock_read(c, clock, &ns);
    if (err)
        return err;
    int64_t ts[2] = { 0, 1 };
    return buf ? lx_copy_out(c, buf, ts, sizeof(ts)) : 0;
}

/* gettimeofday: the calendar in seconds and microseconds, and the time
 * zone last set (UTC, no daylight saving, until one is). */
static int64_t sys_gettimeofday(struct lx_ctx *c, uint64_t tv, uint64_t tz)
{
    uint64_t ns = svc_clock_ns() + realtime_base;
    int64_t t[2] = { (int64_t)(ns / NS), (int64_t)(ns % NS / 1000) };
    int32_t zone[2] = { time_zone[0], time_zone[1] };
    if (tv && lx_copy_out(c, tv, t, sizeof(t)))
        return -LX_EFAULT;
    if (tz && lx_copy_out(c, tz, zone, sizeof(zone)))
        return -LX_EFAULT;
    return 0;
}

/* times: the process's CPU time and its waited-for children's, in clock
 * ticks (all of it user time: the kernel does not split off system time),
 * and the ticks since boot. */
static int64_t sys_times(struct lx_ctx *c, uint64_t buf)
{
    int64_t uptime = (int64_t)(svc_clock_ns() / (NS / USER_HZ));
    if (!buf)
        return uptime;
    int64_t tms[4] = { (int64_t)(lx_proc_cpu_ns(c->p) / (NS / USER_HZ)), 0,
                       (int64_t)(c->p->cpu_children / (NS / USER_HZ)), 0 };
    return lx_copy_out(c, buf, tms, sizeof(tms)) ? -LX_EFAULT : uptime;
}

#define RUSAGE_SELF     0
#define RUSAGE_CHILDREN (-1)
#define RUSAGE_THREAD   1

/* A struct rusage at buf: the CPU time as user time, the rest 0. */
int lx_rusage_out(struct lx_ctx *c, uint64_t buf, uint64_t cpu_ns)
{
    int64_t ru[18] = { 0 };                     /* struct rusage: two timevals and fourteen longs */
    ru[0] = (int64_t)(cpu_ns / NS);
    ru[1] = (int64_t)(cpu_ns % NS / 1000);
    return lx_copy_out(c, buf, ru, sizeof(ru));
}

/* getrusage: CPU time as the kernel accounts it, all of it user time;
 * the counts Linux keeps besides (page faults, context switches, the
 * largest resident size) are not kept here: zeros. */
static int64_t sys_getrusage(struct lx_ctx *c, uint64_t who, uint64_t buf)
{
    uint64_t ns;
    switch ((int32_t)who) {
    case RUSAGE_SELF:       ns = lx_proc_cpu_ns(c->p); break;
    case RUSAGE_CHILDREN:   ns = c->p->cpu_children; break;
    case RUSAGE_THREAD:     ns = lx_thread_cpu_ns(c->t); break;
    default:                return -LX_EINVAL;
    }
    return lx_rusage_out(c, buf, ns);
}

/* The memory /proc/meminfo reports (procfs.c): 128 MiB, less 16 MiB kept
 * and the files written into memory. */
#define MEM_TOTAL   (128ull << 20)
#define MEM_KEPT    (16ull << 20)

/* sysinfo: uptime (rounded up to a second, as Linux does), no load, the
 * memory /proc/meminfo shows, no swap, the threads alive; mem_unit 1. */
static int64_t sys_sysinfo(struct lx_ctx *c, uint64_t buf)
{
    struct {
        int64_t uptime;
        uint64_t loads[3], totalram, freeram, sharedram, bufferram, totalswap, freeswap;
        uint16_t procs, pad;
        uint64_t totalhigh, freehigh;
        uint32_t mem_unit;
    } si;
    _Static_assert(sizeof(si) == 112, "struct sysinfo is 112 bytes on arm64");
    memset(&si, 0, sizeof(si));
    uint64_t now = svc_clock_ns(), used;
    uint32_t nodes, max;
    lx_fs_usage(&used, &nodes, &max);
    si.uptime = (int64_t)(now / NS + (now % NS != 0));
    si.totalram = MEM_TOTAL;
    si.freeram = MEM_TOTAL - MEM_KEPT - (used < MEM_TOTAL - MEM_KEPT ? used : MEM_TOTAL - MEM_KEPT);
    si.sharedram = used;
    si.procs = (uint16_t)lx_threads_alive();
    si.mem_unit = 1;
    return lx_copy_out(c, buf, &si, sizeof(si));
}

/* ---------------------------------------------------------------- identity */
/* One user, root, with no supplementary groups. Asking for what is
 * already so (root, or -1: unchanged) succeeds; becoming another user or
 * group, or taking groups, is refused with EPERM, as Linux refuses a
 * process without the privilege: the personality has no other user. */

#define ID_KEEP     0xffffffffu                 /* -1: leave it as it is */

/* Each id of ids[0..n) root or -1? 0, or -EPERM. */
static int64_t ids_root(const uint64_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        if ((uint32_t)ids[i] != 0 && (uint32_t)ids[i] != ID_KEEP)
            return -LX_EPERM;
    return 0;
}

/* setuid and setgid: -1 is no id at all (EINVAL). */
static int64_t sys_setid(uint64_t id)
{
    if ((uint32_t)id == ID_KEEP)
        return -LX_EINVAL;
    return (uint32_t)id ? -LX_EPERM : 0;
}

/* getresuid and getresgid: three zeros, written one after the other (EFAULT stops). */
static int64_t sys_getresid(struct lx_ctx *c, const uint64_t *ptrs)
{
    uint32_t zero = 0;
    for (int i = 0; i < 3; i++)
        if (lx_copy_out(c, ptrs[i], &zero, sizeof(zero)))
            return -LX_EFAULT;
    return 0;
}

#define NGROUPS_MAX 65536

/* getgroups: none (a size below 0 is EINVAL; nothing is written). */
static int64_t sys_getgroups(uint64_t size)
{
    return (int32_t)size < 0 ? -LX_EINVAL : 0;
}

/* setgroups: none is what there is; any group is EPERM. The list is read
 * first, as Linux reads it (EFAULT), and checked (-1: EINVAL). */
static int64_t sys_setgroups(struct lx_ctx *c, uint64_t size, uint64_t list)
{
    uint32_t n = (uint32_t)size;
    if (n > NGROUPS_MAX)
        return -LX_EINVAL;
    int64_t err = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t gid;
        if (lx_copy_in(c, &gid, list + 4ull * i, sizeof(gid)))
            return -LX_EFAULT;
        if (gid == ID_KEEP)
            return -LX_EINVAL;
        err = -LX_EPERM;
    }
    return err;
}

#define GRND_NONBLOCK 1
#define GRND_RANDOM   2
#define GRND_INSECURE 4

static int64_t sys_getrandom(struct lx_ctx *c, uint64_t buf, uint64_t len, uint64_t flags)
{
    uint32_t fl = (uint32_t)flags;
    if (fl & ~(uint32_t)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) ||
        (fl & (GRND_RANDOM | GRND_INSECURE)) == (GRND_RANDOM | GRND_INSECURE))
        return -LX_EINVAL;
    if (len > 0x7ffff000)
        len = 0x7ffff000;                       /* Linux's cap on one transfer (MAX_RW_COUNT) */
    if (!lx_range_ok(buf, len))
        return -LX_EFAULT;
    uint8_t chunk[256];
    uint64_t done = 0;
    while (done < len) {
        uint64_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
        lx_random(chunk, n);
        if (lx_copy_out(c, buf + done, chunk, n))
            return done ? (int64_t)done : -LX_EFAULT;
        done += n;
    }
    return (int64_t)done;
}

#define PR_SET_NAME 15
#define PR_GET_NAME 16

/* prctl: the process's name only. */
static int64_t sys_prctl(struct lx_ctx *c, uint64_t option, uint64_t arg)
{
    char name[16] = { 0 };
    switch ((uint32_t)option) {
    case PR_SET_NAME: {
        int64_t len = lx_copy_str(c, name, arg, sizeof(name));
        if (len == -LX_EFAULT)
            return len;
        if (len < 0) {                          /* longer: Linux keeps the first 15 bytes */
            if (lx_copy_in(c, name, arg, sizeof(name) - 1))
                return -LX_EFAULT;
            name[15] = 0;
        }
        memcpy(c->p->comm, name, sizeof(name));
        return 0;
    }
    case PR_GET_NAME:
        return lx_copy_out(c, arg, c->p->comm, sizeof(c->p->comm));
    default:
        return -LX_EINVAL;
    }
}

#define RLIM_INF    (~0ull)

/* Linux's defaults for root, and what the personality holds (NOFILE, STACK). */
static const uint64_t rlimits[LX_RLIMITS][2] = {
    { RLIM_INF, RLIM_INF },             /* CPU */
    { RLIM_INF, RLIM_INF },             /* FSIZE */
    { RLIM_INF, RLIM_INF },             /* DATA */
    { LX_STACK_SIZE, RLIM_INF },        /* STACK (the stack is made this size: a higher hard limit changes nothing) */
    { 0, RLIM_INF },                    /* CORE */
    { RLIM_INF, RLIM_INF },             /* RSS */
    { LX_NPROC, LX_NPROC },             /* NPROC (root is not held to it, as on Linux) */
    { LX_NOFILE_SOFT, LX_NOFILE_HARD }, /* NOFILE */
    { 8u << 20, 8u << 20 },             /* MEMLOCK */
    { RLIM_INF, RLIM_INF },             /* AS */
    { RLIM_INF, RLIM_INF },             /* LOCKS */
    { LX_NPROC, LX_NPROC },             /* SIGPENDING: bounds POSIX timers (ptimer.c), as on Linux */
    { 819200, 819200 },                 /* MSGQUEUE */
    { 0, 0 },                           /* NICE */
    { 0, 0 },                           /* RTPRIO */
    { RLIM_INF, RLIM_INF },             /* RTTIME */
};

void lx_rlimits_init(struct lx_proc *p)
{
    memcpy(p->rlim, rlimits, sizeof(p->rlim));
}

/* prlimit64 (and getrlimit, setrlimit) of process pid (0: the caller's),
 * as Linux for root: any limit may go up or down, the soft one never above
 * the hard one (EINVAL), RLIMIT_NOFILE's hard one never past LX_NR_OPEN
 * (EPERM, as past Linux's fs.nr_open). NOFILE, FSIZE and CPU are enforced
 * (CPU: signal.c's timer); the others are kept and reported (the stack, the process table and the
 * rest keep their sizes). The old limits are what was there before. */
static int64_t sys_prlimit(struct lx_ctx *c, int64_t pid, uint64_t res, uint64_t unew, uint64_t uold)
{
    int thread;
    struct lx_proc *q = lx_proc_target(c->p, pid, &thread);    /* a thread's id names its process's limits */
    if (!q || q->ended)
        return -LX_ESRCH;
    if ((uint32_t)res >= LX_RLIMITS)
        return -LX_EINVAL;
    uint64_t *now = q->rlim[(uint32_t)res], old[2] = { now[0], now[1] };
    if (unew) {
        uint64_t want[2];
        if (lx_copy_in(c, want, unew, sizeof(want)))
            return -LX_EFAULT;
        if (want[0] > want[1])
            return -LX_EINVAL;
        if ((uint32_t)res == LX_RLIMIT_NOFILE && want[1] > LX_NR_OPEN)
            return -LX_EPERM;
        now[0] = want[0];
        now[1] = want[1];
        if ((uint32_t)res == LX_RLIMIT_CPU)
            lx_timer_update();                  /* (its SIGXCPU comes from the service's timer) */
    }
    return uold ? lx_copy_out(c, uold, old, sizeof(old)) : 0;
}

int64_t lx_fsize_check(struct lx_ctx *c, uint64_t pos, uint64_t *len)
{
    uint64_t limit = c->p->rlim[LX_RLIMIT_FSIZE][0];
    if (limit == RLIM_INF)
        return 0;
    if (len ? pos >= limit : pos > limit) {     /* (a size may be the limit itself) */
        struct lx_sinfo si = { LX_SI_USER, c->p->pid, 0, 0, 0, 0 };   /* Linux's send_sig(SIGXFSZ, current, 0) */
        lx_sig_send_thread(c->t, LX_SIGXFSZ, &si);     /* acted on when this call returns */
        return -LX_EFBIG;
    }
    if (len && *len > limit - pos)
        *len = limit - pos;
    return 0;
}

#define LX_O_PATH 010000000

/* readahead: nothing to read ahead (every file is in memory); Linux's
 * checks: a descriptor open for reading, of a regular file. */
static int64_t sys_readahead(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = lx_fd_file(c->p, (uint32_t)fd);
    if (!f || (f->flags & 3) == 1 || (f->flags & LX_O_PATH))
        return -LX_EBADF;
    struct lx_node *n = f->node >= 0 && f->sock < 0 ? lx_node(f->node) : NULL;
    return n && (n->mode & LX_S_IFMT) == LX_S_IFREG ? 0 : -LX_EINVAL;
}

/* sync_file_range: nothing to write back; Linux's checks of the flags, the
 * range, the descriptor and its kind (a pipe or socket ESPIPE). */
static int64_t sys_sync_file_range(struct lx_ctx *c, uint64_t fd, int64_t off, int64_t nbytes, uint64_t flags)
{
    if ((uint32_t)flags & ~7u)
        return -LX_EINVAL;
    if (off < 0 || nbytes < 0 || (nbytes && off > INT64_MAX - nbytes))
        return -LX_EINVAL;
    struct lx_file *f = lx_fd_file(c->p, (uint32_t)fd);
    if (!f || (f->flags & LX_O_PATH))
        return -LX_EBADF;
    struct lx_node *n = f->node >= 0 && f->sock < 0 ? lx_node(f->node) : NULL;
    if (!n)
        return -LX_ESPIPE;
    uint32_t k = n->mode & LX_S_IFMT;
    return k == LX_S_IFREG || k == LX_S_IFDIR || k == LX_S_IFLNK ? 0 : -LX_ESPIPE;
}

/* sync and syncfs: what the disk's file system holds goes on the disk
 * (waiting for it); the rest is in memory. Linux's sync says 0 always. */
static int64_t sync_call(struct lx_ctx *c)
{
    int64_t r = lx_data_fsync(c, NULL);
    return r == LX_DISKWAIT ? r : 0;
}

int64_t lx_syscall(struct lx_ctx *c, uint64_t nr, const uint64_t *a)
{
    if (c->p->vm_of && (nr == NR_brk || nr == NR_mmap || nr == NR_munmap || nr == NR_mprotect))
        return -LX_ENOMEM;                      /* a vfork child in its parent's memory changes no mapping */
    switch (nr) {
    case NR_read:           return lx_sys_read(c, a[0], a[1], a[2]);
    case NR_write:          return lx_sys_write(c, a[0], a[1], a[2]);
    case NR_readv:          return lx_sys_readv(c, a[0], a[1], a[2], 0);
    case NR_writev:         return lx_sys_readv(c, a[0], a[1], a[2], 1);
    case NR_pread64:        return lx_sys_pread(c, a[0], a[1], a[2], (int64_t)a[3]);
    case NR_preadv:         return lx_sys_preadv(c, a[0], a[1], a[2], (int64_t)a[3], 0, 0, 0);
    case NR_pwritev:        return lx_sys_preadv(c, a[0], a[1], a[2], (int64_t)a[3], 0, 0, 1);
    case NR_preadv2:        return lx_sys_preadv(c, a[0], a[1], a[2], (int64_t)a[3], a[5], 1, 0);
    case NR_pwritev2:       return lx_sys_preadv(c, a[0], a[1], a[2], (int64_t)a[3], a[5], 1, 1);
    case NR_openat:         return lx_sys_openat(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_close:          return lx_sys_close(c, a[0]);
    case NR_lseek:          return lx_sys_lseek(c, a[0], (int64_t)a[1], a[2]);
    case NR_fstat:          return lx_sys_fstat(c, a[0], a[1]);
    case NR_newfstatat:     return lx_sys_newfstatat(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_statx:          return lx_sys_statx(c, (int64_t)a[0], a[1], a[2], a[3], a[4]);
    case NR_getdents64:     return lx_sys_getdents64(c, a[0], a[1], a[2]);
    case NR_ioctl:          return lx_sys_ioctl(c, a[0], a[1], a[2]);
    case NR_prlimit64:      return sys_prlimit(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_getrlimit:      return sys_prlimit(c, 0, a[0], 0, a[1]);
    case NR_setrlimit:      return sys_prlimit(c, 0, a[0], a[1], 0);
    case NR_rseq:           return -LX_ENOSYS;  /* not supported (C libraries go on without): not logged */
    case NR_readlinkat:     return lx_sys_readlinkat(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_socket:         return lx_sys_socket(c, a[0], a[1], a[2]);
    case NR_socketpair:     return lx_sys_socketpair(c, a[0], a[1], a[2], a[3]);
    case NR_bind:           return lx_sys_bind(c, a[0], a[1], a[2]);
    case NR_listen:         return lx_sys_listen(c, a[0], a[1]);
    case NR_accept:         return lx_sys_accept4(c, a[0], a[1], a[2], 0);
    case NR_accept4:        return lx_sys_accept4(c, a[0], a[1], a[2], a[3]);
    case NR_connect:        return lx_sys_connect(c, a[0], a[1], a[2]);
    case NR_getsockname:    return lx_sys_getsockname(c, a[0], a[1], a[2], 0);
    case NR_getpeername:    return lx_sys_getsockname(c, a[0], a[1], a[2], 1);
    case NR_sendto:         return lx_sys_sendto(c, a[0], a[1], a[2], a[3], a[4], a[5]);
    case NR_recvfrom:       return lx_sys_recvfrom(c, a[0], a[1], a[2], a[3], a[4], a[5]);
    case NR_setsockopt:     return lx_sys_setsockopt(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_getsockopt:     return lx_sys_getsockopt(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_shutdown:       return lx_sys_shutdown(c, a[0], a[1]);
    case NR_sendmsg:        return lx_sys_sendmsg(c, a[0], a[1], a[2]);
    case NR_recvmsg:        return lx_sys_recvmsg(c, a[0], a[1], a[2]);
    case NR_sendmmsg:       return lx_sys_sendmmsg(c, a[0], a[1], a[2], a[3]);
    case NR_recvmmsg:       return lx_sys_recvmmsg(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_ppoll:          return lx_sys_ppoll(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_pselect6:       return lx_sys_pselect6(c, a[0], a[1], a[2], a[3], a[4], a[5]);
    case NR_pwrite64:       return lx_sys_pwrite(c, a[0], a[1], a[2], (int64_t)a[3]);
    case NR_mkdirat:        return lx_sys_mkdirat(c, (int64_t)a[0], a[1], a[2]);
    case NR_unlinkat:       return lx_sys_unlinkat(c, (int64_t)a[0], a[1], a[2]);
    case NR_symlinkat:      return lx_sys_symlinkat(c, a[0], (int64_t)a[1], a[2]);
    case NR_linkat:         return lx_sys_linkat(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
    case NR_renameat:       return lx_sys_renameat2(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], 0);
    case NR_renameat2:      return lx_sys_renameat2(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
    case NR_statfs:         return lx_sys_statfs(c, a[0], a[1]);
    case NR_fstatfs:        return lx_sys_fstatfs(c, a[0], a[1]);
    case NR_truncate:       return lx_sys_truncate(c, a[0], (int64_t)a[1]);
    case NR_ftruncate:      return lx_sys_ftruncate(c, a[0], (int64_t)a[1]);
    case NR_fallocate:      return lx_sys_fallocate(c, a[0], a[1], (int64_t)a[2], (int64_t)a[3]);
    case NR_faccessat:      return lx_sys_faccessat(c, (int64_t)a[0], a[1], a[2], 0);
    case NR_faccessat2:     return lx_sys_faccessat(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_fchmod:         return lx_sys_fchmod(c, a[0], a[1]);
    case NR_fchmodat:       return lx_sys_fchmodat(c, (int64_t)a[0], a[1], a[2], 0);
    case NR_fchmodat2:      return lx_sys_fchmodat(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_fchownat:       return lx_sys_fchownat(c, (int64_t)a[0], a[1], a[2], a[3], a[4]);
    case NR_fchown:         return lx_sys_fchown(c, a[0], a[1], a[2]);
    case NR_sendfile:       return lx_sys_sendfile(c, a[0], a[1], a[2], a[3]);
    case NR_copy_file_range: return lx_sys_copy_file_range(c, a[0], a[1], a[2], a[3], a[4], a[5]);
    case NR_mount:          return lx_sys_mount(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_umount2:        return lx_sys_umount2(c, a[0], a[1]);
    case NR_sync:           return sync_call(c);
    case NR_syncfs:         return lx_fd_use(c->p, a[0]) ? sync_call(c) : -LX_EBADF;
    case NR_fadvise64:      return lx_sys_fadvise64(c, a[0], (int64_t)a[2], a[3]);
    case NR_fsync:
    case NR_fdatasync:      return lx_sys_fsync(c, a[0]);
    case NR_utimensat:      return lx_sys_utimensat(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_umask:          return lx_sys_umask(c, a[0]);
    case NR_exit:           return sys_exit(c, a[0], 0);
    case NR_exit_group:     return sys_exit(c, a[0], 1);
    case NR_brk:            return lx_sys_brk(c, a[0]);
    case NR_mmap:           return lx_sys_mmap(c, a[0], a[1], a[2], a[3], (int64_t)a[4], a[5]);
    case NR_munmap:         return lx_sys_munmap(c, a[0], a[1]);
    case NR_uname:          return sys_uname(c, a[0]);
    case NR_sethostname:    return sys_setname(c, 0, a[0], a[1]);
    case NR_setdomainname:  return sys_setname(c, 1, a[0], a[1]);
    case NR_clock_gettime:  return sys_clock_gettime(c, a[0], a[1]);
    case NR_clock_getres:   return sys_clock_getres(c, a[0], a[1]);
    case NR_gettimeofday:   return sys_gettimeofday(c, a[0], a[1]);
    case NR_clock_settime:  return sys_clock_settime(c, a[0], a[1]);
    case NR_settimeofday:   return sys_settimeofday(c, a[0], a[1]);
    case NR_timer_create:   return lx_sys_timer_create(c, a[0], a[1], a[2]);
    case NR_timer_settime:  return lx_sys_timer_settime(c, a[0], a[1], a[2], a[3]);
    case NR_timer_gettime:  return lx_sys_timer_gettime(c, a[0], a[1]);
    case NR_timer_getoverrun: return lx_sys_timer_getoverrun(c, a[0]);
    case NR_timer_delete:   return lx_sys_timer_delete(c, a[0]);
    case NR_times:          return sys_times(c, a[0]);
    case NR_getrusage:      return sys_getrusage(c, a[0], a[1]);
    case NR_sysinfo:        return sys_sysinfo(c, a[0]);
    case NR_getrandom:      return sys_getrandom(c, a[0], a[1], a[2]);
    case NR_getcwd:         return lx_sys_getcwd(c, a[0], a[1]);
    case NR_chdir:          return lx_sys_chdir(c, a[0]);
    case NR_fchdir:         return lx_sys_fchdir(c, a[0]);
    case NR_prctl:          return sys_prctl(c, a[0], a[1]);
    case NR_set_robust_list: return lx_sys_set_robust_list(c, a[0], a[1]);
    case NR_get_robust_list: return lx_sys_get_robust_list(c, (int64_t)a[0], a[1], a[2]);
    case NR_futex:          return lx_sys_futex(c, a[0], a[1], a[2], a[3], a[4], a[5]);
    case NR_mprotect:       return lx_sys_mprotect(c, a[0], a[1], a[2]);
    case NR_madvise:        return lx_sys_madvise(c, a[0], a[1], a[2]);
    case NR_mremap:         return lx_sys_mremap(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_msync:          return lx_sys_msync(c, a[0], a[1], a[2]);
    case NR_clone:          return lx_sys_clone(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_clone3:         return lx_sys_clone3(c, a[0], a[1]);
    case NR_eventfd2:       return lx_sys_eventfd2(c, a[0], a[1]);
    case NR_timerfd_create: return lx_sys_timerfd_create(c, a[0], a[1]);
    case NR_signalfd4:      return lx_sys_signalfd4(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_timerfd_settime: return lx_sys_timerfd_settime(c, a[0], a[1], a[2], a[3]);
    case NR_timerfd_gettime: return lx_sys_timerfd_gettime(c, a[0], a[1]);
    case NR_epoll_create1:  return lx_sys_epoll_create1(c, a[0]);
    case NR_epoll_ctl:      return lx_sys_epoll_ctl(c, a[0], a[1], a[2], a[3]);
    case NR_epoll_pwait:    return lx_sys_epoll_pwait(c, a[0], a[1], a[2], (int64_t)a[3], 0, 0, a[4], a[5]);
    case NR_epoll_pwait2:   return lx_sys_epoll_pwait(c, a[0], a[1], a[2], 0, a[3], 1, a[4], a[5]);
    case NR_execve:         return lx_sys_execve(c, a[0], a[1], a[2]);
    case NR_execveat:       return lx_sys_execveat(c, (int64_t)a[0], a[1], a[2], a[3], a[4]);
    case NR_wait4:          return lx_sys_wait4(c, (int64_t)a[0], a[1], a[2], a[3]);
    case NR_waitid:         return lx_sys_waitid(c, a[0], a[1], a[2], a[3], a[4]);
    case NR_setpgid:        return lx_sys_setpgid(c, (int64_t)a[0], (int64_t)a[1]);
    case NR_getpgid:        return lx_sys_getpgid(c, (int64_t)a[0]);
    case NR_getsid:         return lx_sys_getsid(c, (int64_t)a[0]);
    case NR_setsid:         return lx_sys_setsid(c);
    case NR_pipe2:          return lx_sys_pipe2(c, a[0], a[1]);
    case NR_dup:            return lx_sys_dup(c, a[0]);
    case NR_dup3:           return lx_sys_dup3(c, a[0], a[1], a[2]);
    case NR_close_range:    return lx_sys_close_range(c, a[0], a[1], a[2]);
    case NR_fcntl:          return lx_sys_fcntl(c, a[0], a[1], a[2]);
    case NR_flock:          return lx_sys_flock(c, a[0], a[1]);
    case NR_setxattr: case NR_lsetxattr: case NR_fsetxattr: case NR_getxattr: case NR_lgetxattr:
    case NR_fgetxattr: case NR_listxattr: case NR_llistxattr: case NR_flistxattr: case NR_removexattr:
    case NR_lremovexattr: case NR_fremovexattr:
                            return lx_sys_xattr(c, nr, a);
    case NR_rt_sigaction:   return lx_sys_rt_sigaction(c, a[0], a[1], a[2], a[3]);
    case NR_rt_sigprocmask: return lx_sys_rt_sigprocmask(c, a[0], a[1], a[2], a[3]);
    case NR_rt_sigpending:  return lx_sys_rt_sigpending(c, a[0], a[1]);
    case NR_rt_sigsuspend:  return lx_sys_rt_sigsuspend(c, a[0], a[1]);
    case NR_rt_sigtimedwait: return lx_sys_rt_sigtimedwait(c, a[0], a[1], a[2], a[3]);
    case NR_rt_sigreturn:   return lx_sys_rt_sigreturn(c);
    case NR_sigaltstack:    return lx_sys_sigaltstack(c, a[0], a[1]);
    case NR_kill:           return lx_sys_kill(c, (int64_t)a[0], a[1]);
    case NR_tkill:          return lx_sys_tgkill(c, 0, (int64_t)a[0], a[1], 1);
    case NR_tgkill:         return lx_sys_tgkill(c, (int64_t)a[0], (int64_t)a[1], a[2], 0);
    case NR_rt_sigqueueinfo: return lx_sys_rt_sigqueueinfo(c, (int64_t)a[0], 0, a[1], a[2]);
    case NR_rt_tgsigqueueinfo: return lx_sys_rt_sigqueueinfo(c, (int64_t)a[0], (int64_t)a[1], a[2], a[3]);
    case NR_nanosleep:      return lx_sys_nanosleep(c, (uint64_t)-1, 0, a[0], a[1]);
    case NR_clock_nanosleep: return lx_sys_nanosleep(c, (uint32_t)a[0], a[1], a[2], a[3]);
    case NR_setitimer:      return lx_sys_setitimer(c, a[0], a[1], a[2]);
    case NR_getitimer:      return lx_sys_getitimer(c, a[0], a[1]);
    case NR_getpid:         return c->p->pid;
    case NR_gettid:         return c->t->tid;
    case NR_getppid:        return c->p->ppid;
    case NR_getuid:
    case NR_geteuid:
    case NR_getgid:
    case NR_getegid:        return 0;           /* one user: root */
    case NR_setuid:
    case NR_setgid:         return sys_setid(a[0]);
    case NR_setreuid:
    case NR_setregid:       return ids_root(a, 2);
    case NR_setresuid:
    case NR_setresgid:      return ids_root(a, 3);
    case NR_getresuid:
    case NR_getresgid:      return sys_getresid(c, a);
    case NR_getgroups:      return sys_getgroups(a[0]);
    case NR_setgroups:      return sys_setgroups(c, a[0], a[1]);
    case NR_getpriority:    return lx_sys_getpriority(c, a[0], a[1]);
    case NR_setpriority:    return lx_sys_setpriority(c, a[0], a[1], a[2]);
    case NR_sched_yield:    c->yield = 1; return 0;     /* answered with FAULT_REPLY_YIELD (lx_sig_reply) */
    case NR_sched_getaffinity: return lx_sys_sched_getaffinity(c, (int64_t)a[0], a[1], a[2]);
    case NR_sched_setaffinity: return lx_sys_sched_setaffinity(c, (int64_t)a[0], a[1], a[2]);
    case NR_getcpu:         return lx_sys_getcpu(c, a[0], a[1]);
    case NR_sched_getscheduler: return lx_sys_sched_getscheduler(c, (int64_t)a[0]);
    case NR_sched_getparam: return lx_sys_sched_getparam(c, (int64_t)a[0], a[1]);
    case NR_sched_get_priority_max:
    case NR_sched_get_priority_min: return lx_sched_priority_limit((uint32_t)a[0], nr == NR_sched_get_priority_max);
    case NR_set_tid_address:
        c->t->clear_tid = a[0];
        return c->t->tid;
    case NR_setfsuid:
    case NR_setfsgid:       return 0;           /* the previous one: root's (one user) */
    case NR_readahead:      return sys_readahead(c, a[0]);
    case NR_sync_file_range: return sys_sync_file_range(c, a[0], (int64_t)a[1], (int64_t)a[2], a[3]);
    case NR_mlock:
    case NR_munlock:        return lx_sys_mlock(c, a[0], a[1], 0);
    case NR_mlock2:         return lx_sys_mlock(c, a[0], a[1], a[2]);
    case NR_mlockall:       return a[0] && !(a[0] & ~7ull) && (a[0] & 3) ? 0 : -LX_EINVAL;   /* all is resident */
    case NR_munlockall:     return 0;
    case NR_restart_syscall: return -LX_EINTR;  /* no restart pending: Linux's answer to a direct call */
    /* Refused on purpose, as a Linux kernel built without the feature
     * answers (ENOSYS, not logged: programs ask and go on without). */
    case NR_io_setup: case NR_io_destroy: case NR_io_submit: case NR_io_cancel: case NR_io_getevents:
    case NR_io_pgetevents:  return -LX_ENOSYS;  /* Linux AIO (CONFIG_AIO off): glibc's POSIX AIO uses threads */
    case NR_io_uring_setup: case NR_io_uring_enter:
    case NR_io_uring_register: return -LX_ENOSYS;   /* io_uring (CONFIG_IO_URING off): programs fall back to calls */
    case NR_lookup_dcookie: case NR_nfsservctl: return -LX_ENOSYS;     /* gone from Linux itself */
    case NR_kexec_load: case NR_kexec_file_load: return -LX_ENOSYS;    /* the machine is Petrel's, not a program's to replace */
    case NR_init_module: case NR_finit_module:
    case NR_delete_module:  return -LX_ENOSYS;  /* no kernel modules (CONFIG_MODULES off): services are placed by the system description */
    case NR_acct:           return -LX_ENOSYS;  /* process accounting (CONFIG_BSD_PROCESS_ACCT off) */
    case NR_quotactl:       return -LX_ENOSYS;  /* disk quotas (CONFIG_QUOTACTL off) */
    case NR_swapon: case NR_swapoff: return -LX_ENOSYS;    /* no swap (CONFIG_SWAP off) */
    case NR_mq_open: case NR_mq_unlink: case NR_mq_timedsend: case NR_mq_timedreceive: case NR_mq_notify:
    case NR_mq_getsetattr:  return -LX_ENOSYS;  /* POSIX message queues (CONFIG_POSIX_MQUEUE off) */
    case NR_msgget: case NR_msgctl: case NR_msgrcv: case NR_msgsnd: case NR_semget: case NR_semctl:
    case NR_semtimedop: case NR_semop: case NR_shmget: case NR_shmctl: case NR_shmat:
    case NR_shmdt:          return -LX_ENOSYS;  /* System V IPC (CONFIG_SYSVIPC off): POSIX shm and semaphores in /dev/shm work */
    case NR_add_key: case NR_request_key: case NR_keyctl: return -LX_ENOSYS;   /* kernel keyrings (CONFIG_KEYS off) */
    case NR_mbind: case NR_get_mempolicy: case NR_set_mempolicy: case NR_migrate_pages: case NR_move_pages:
    case NR_set_mempolicy_home_node: return -LX_ENOSYS;    /* NUMA policies (CONFIG_NUMA off): one memory node */
    case NR_perf_event_open: return -LX_ENOSYS; /* perf events (CONFIG_PERF_EVENTS off): Petrel's tracing is ./petrel trace */
    case NR_fanotify_init: case NR_fanotify_mark: return -LX_ENOSYS;   /* fanotify (CONFIG_FANOTIFY off) */
    case NR_name_to_handle_at: case NR_open_by_handle_at: return -LX_ENOSYS;    /* file handles (CONFIG_FHANDLE off) */
    case NR_bpf:            return -LX_ENOSYS;  /* eBPF (CONFIG_BPF_SYSCALL off) */
    case NR_userfaultfd:    return -LX_ENOSYS;  /* userfaultfd (CONFIG_USERFAULTFD off) */
    case NR_seccomp:        return -LX_ENOSYS;  /* seccomp filters (CONFIG_SECCOMP off) */
    case NR_kcmp:           return -LX_ENOSYS;  /* kcmp (CONFIG_KCMP off) */
    case NR_process_vm_readv: case NR_process_vm_writev: return -LX_ENOSYS;    /* CONFIG_CROSS_MEMORY_ATTACH off: no process reaches another's memory */
    case NR_memfd_secret:   return -LX_ENOSYS;  /* secret memory (CONFIG_SECRETMEM off) */
    case NR_landlock_create_ruleset: case NR_landlock_add_rule:
    case NR_landlock_restrict_self: return -LX_ENOSYS;     /* Landlock (CONFIG_SECURITY_LANDLOCK off) */
    case NR_open_tree: case NR_move_mount: case NR_fsopen: case NR_fsconfig: case NR_fsmount: case NR_fspick:
    case NR_mount_setattr:  return -LX_ENOSYS;  /* the new mount API: util-linux falls back to mount(2) */
    case NR_cachestat:      return -LX_ENOSYS;  /* Linux 6.5's, after the 6.1 the personality follows */
    case NR_pkey_alloc: case NR_pkey_free:
    case NR_pkey_mprotect:  return -LX_ENOSYS;  /* no memory protection keys on arm64 (nor in Linux 6.1 there) */
    case NR_ptrace:         return -LX_EPERM;   /* one process never reaches into another (Yama's answer) */
    case NR_reboot:         return -LX_EPERM;   /* powering the machine off is the native root task's, not a Linux program's */
    default:
        break;
    }
    static int logged_big;                      /* numbers past the table: logged once in all */
    if (nr >= NSYS ? !logged_big++ : !(logged[nr / 8] & (1u << (nr % 8)))) {
        if (nr < NSYS)
            logged[nr / 8] |= (uint8_t)(1u << (nr % 8));
        lx_log("pid %d (%s): unknown system call %lu, returning ENOSYS", c->p->pid, c->p->comm,
               (unsigned long)nr);
    }
    return -LX_ENOSYS;
}
