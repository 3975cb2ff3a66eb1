/*
 * /proc: made when looked up, its files generated when read, as Linux's
 * proc file system. The fixed files (self, meminfo, cpuinfo, uptime,
 * mounts, version, loadavg, filesystems) are nodes linked into /proc at
 * start, and so are the directories net (dev, tcp, udp, snmp: inet.c
 * makes them from the stack's state; tcpmon: the monitor's log, tcpmon.c) and sys/net/ipv4 (the TCP congestion
 * control sysctls, tcp_congestion_control writable); a process's directory /proc/PID and its files (stat, status,
 * cmdline, environ, comm, maps, the fd and fdinfo directories and what is
 * in them) are nodes made on lookup and kept in a small cache
 * keyed by (what, pid), reused once nothing holds them. A listing of /proc
 * shows the fixed files, then one directory per live pid (cookie 2^40 +
 * pid, so a listing resumes after the last pid it gave).
 *
 * What the personality does not know is a plausible constant: CPU times
 * (0), the start time (0), memory totals (the default system's 128 MiB),
 * the CPU's description (the Cortex-A53 QEMU emulates). cmdline and
 * environ are the argv and environment the process was started with (a
 * forked child shows its parent's), kept at exec rather than read from
 * the process's memory: environ keeps its first ENVIRON_MAX bytes.
 */
#include "lx.h"
#include "format.h"

#define PROC_CACHE      96
#define PID_COOKIE      (1ull << 40)
#define CMDLINE_MAX     512
#define ENVIRON_MAX     1024
#define EXE_MAX         128

static int32_t cache[PROC_CACHE];
static int cache_ready;
static int caller_pid;
static char text[16384];
static uint64_t text_len;

/* What a process was started with: made at exec, shared by the children
 * it forks until they exec (p->started; counted references). */
struct lx_started {
    uint32_t refs;
    uint32_t len, env_len;
    char exe[EXE_MAX];
    char cmdline[CMDLINE_MAX];
    char environ[ENVIRON_MAX];
};

static const struct { const char *name; uint32_t what; uint32_t mode; } fixed[] = {
    { "self", LX_PROC_SELF, LX_S_IFLNK | 0777 },
    { "meminfo", LX_PROC_MEMINFO, LX_S_IFREG | 0444 },
    { "cpuinfo", LX_PROC_CPUINFO, LX_S_IFREG | 0444 },
    { "uptime", LX_PROC_UPTIME, LX_S_IFREG | 0444 },
    { "mounts", LX_PROC_MOUNTS, LX_S_IFLNK | 0777 },     /* -> self/mounts */
    { "version", LX_PROC_VERSION, LX_S_IFREG | 0444 },
    { "loadavg", LX_PROC_LOADAVG, LX_S_IFREG | 0444 },
    { "filesystems", LX_PROC_FILESYSTEMS, LX_S_IFREG | 0444 },
    { "stat", LX_PROC_KSTAT, LX_S_IFREG | 0444 },
    { "petrel", LX_PROC_PETREL, LX_S_IFREG | 0444 },
    { "petrel_shared", LX_PROC_PETREL_SHARED, LX_S_IFREG | 0444 },
};

/* The fixed directories below /proc and what is in them: `dir` is the
 * index in this table of the entry's directory (-1: /proc itself). */
static const struct { int dir; const char *name; uint32_t what; uint32_t mode; } fixed_tree[] = {
    { -1, "net", LX_PROC_NETDIR, LX_S_IFDIR | 0555 },
    { 0, "dev", LX_PROC_NET_DEV, LX_S_IFREG | 0444 },
    { 0, "tcp", LX_PROC_NET_TCP, LX_S_IFREG | 0444 },
    { 0, "udp", LX_PROC_NET_UDP, LX_S_IFREG | 0444 },
    { 0, "snmp", LX_PROC_NET_SNMP, LX_S_IFREG | 0444 },
    { 0, "tcp6", LX_PROC_NET_TCP6, LX_S_IFREG | 0444 },
    { 0, "udp6", LX_PROC_NET_UDP6, LX_S_IFREG | 0444 },
    { 0, "route", LX_PROC_NET_ROUTE, LX_S_IFREG | 0444 },
    { -1, "sys", LX_PROC_SYSDIR, LX_S_IFDIR | 0555 },
    { 8, "net", LX_PROC_SYSDIR, LX_S_IFDIR | 0555 },
    { 9, "ipv4", LX_PROC_SYSDIR, LX_S_IFDIR | 0555 },
    { 10, "tcp_congestion_control", LX_PROC_TCP_CC, LX_S_IFREG | 0644 },
    { 10, "tcp_available_congestion_control", LX_PROC_TCP_CC_AVAIL, LX_S_IFREG | 0444 },
    { 10, "tcp_allowed_congestion_control", LX_PROC_TCP_CC_ALLOWED, LX_S_IFREG | 0444 },
    { 0, "tcpmon", LX_PROC_NET_TCPMON, LX_S_IFREG | 0444 },    /* the monitor's TCP log (tcpmon.c) */
};
#define NFIXED_TREE (sizeof(fixed_tree) / sizeof(fixed_tree[0]))

static const struct { const char *name; uint32_t what; uint32_t mode; } per_pid[] = {
    { "stat", LX_PROC_STAT, LX_S_IFREG | 0444 }, { "status", LX_PROC_STATUS, LX_S_IFREG | 0444 },
    { "cmdline", LX_PROC_CMDLINE, LX_S_IFREG | 0444 }, { "comm", LX_PROC_COMM, LX_S_IFREG | 0444 },
    { "maps", LX_PROC_MAPS, LX_S_IFREG | 0444 }, { "exe", LX_PROC_EXE, LX_S_IFLNK | 0777 },
    { "cwd", LX_PROC_CWD, LX_S_IFLNK | 0777 }, { "fd", LX_PROC_FDDIR, LX_S_IFDIR | 0500 },
    { "environ", LX_PROC_ENVIRON, LX_S_IFREG | 0400 }, { "fdinfo", LX_PROC_FDINFODIR, LX_S_IFDIR | 0500 },
    { "mounts", LX_PROC_PMOUNTS, LX_S_IFREG | 0444 }, { "mountinfo", LX_PROC_MOUNTINFO, LX_S_IFREG | 0444 },
};
#define NPER_PID (sizeof(per_pid) / sizeof(per_pid[0]))

/* snprintf into buf (fmt_vsnprintf: no %o, no "*" widths); the full length. */
static int fmt(char *buf, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));

static int fmt(char *buf, size_t size, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = fmt_vsnprintf(buf, size, f, ap);
    va_end(ap);
    return n;
}

void lx_procfs_caller(const struct lx_proc *p)
{
    caller_pid = p ? p->pid : 0;
}

static struct lx_proc *proc_of(int pid)
{
    return lx_proc_of_pid(pid);
}

static int32_t proc_root(void)
{
    int32_t n = lx_lookup(LX_ROOT, "/proc", 1);
    return n >= 0 && lx_node(n)->proc == LX_PROC_ROOT ? n : -LX_ENOENT;
}

int lx_procfs_init(void)
{
    int32_t root = proc_root();
    for (int i = 0; i < PROC_CACHE; i++)
        cache[i] = -1;
    cache_ready = 1;
    if (root < 0)
        return 0;                               /* an archive without /proc: none */
    for (unsigned i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        int32_t n = lx_node_new(fixed[i].mode);
        if (n < 0)
            return n;
        lx_node(n)->proc = fixed[i].what;
        if (fixed[i].what == LX_PROC_MOUNTS)
            lx_node(n)->size = 11;              /* a fixed link's size is its target's length: "self/mounts" */
        int err = lx_link(root, fixed[i].name, (uint32_t)strlen(fixed[i].name), n);
        if (err)
            return err;
    }
    int32_t made[NFIXED_TREE];
    for (unsigned i = 0; i < NFIXED_TREE; i++) {
        int32_t n = lx_node_new(fixed_tree[i].mode);
        if (n < 0)
            return n;
        lx_node(n)->proc = fixed_tree[i].what;
        int32_t dir = fixed_tree[i].dir < 0 ? root : made[fixed_tree[i].dir];
        int err = lx_link(dir, fixed_tree[i].name, (uint32_t)strlen(fixed_tree[i].name), n);
        if (err)
            return err;
        made[i] = n;
    }
    return 0;
}

/* Is node n a live process's working directory? */
static int held(int32_t n)
{
    if (lx_node(n)->opens)
        return 1;
    for (struct lx_proc *p = lx_procs(); p; p = p->next)
        if (p->used && p->cwd == n)
            return 1;
    return 0;
}

/* The node showing `what` of process `pid`: cached, or made. */
static int32_t dynamic(uint32_t what, int pid, uint32_t mode, int32_t parent)
{
    int free_slot = -1, reuse = -1;
    for (int i = 0; i < PROC_CACHE; i++) {
        struct lx_node *n = cache[i] >= 0 ? lx_node(cache[i]) : NULL;
        if (!n) {
            free_slot = free_slot < 0 ? i : free_slot;
            continue;
        }
        if (n->proc == what && n->proc_pid == pid)
            return cache[i];
        if (reuse < 0 && !held(cache[i]))
            reuse = i;
    }
    int32_t node;
    if (free_slot >= 0) {
        node = lx_node_new(mode);
        if (node < 0)
            return node;
        cache[free_slot] = node;
    } else if (reuse >= 0) {
        node = cache[reuse];
    } else {
        return -LX_ENFILE;
    }
    struct lx_node *n = lx_node(node);
    struct lx_time now = lx_now();
    *n = (struct lx_node){ .mode = mode, .nlink = (mode & LX_S_IFMT) == LX_S_IFDIR ? 2 : 1, .parent = parent,
                           .dent = -1, .first = -1, .last = -1, .atime = now, .mtime = now, .ctime = now,
                           .proc = what, .proc_pid = pid };
    return node;
}

/* A decimal pid of name[0..len), or -1. */
static int parse_pid(const char *name, uint32_t len)
{
    int v = 0;
    if (len == 0 || len > 9 || name[0] == '0')
        return -1;
    for (uint32_t i = 0; i < len; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

int32_t lx_procfs_lookup(int32_t dir, const char *name, uint32_t len)
{
    struct lx_node *d = lx_node(dir);
    if (!cache_ready)
        return -LX_ENOENT;
    if (d->proc == LX_PROC_ROOT) {
        int32_t e = lx_dent_find(dir, name, len);
        if (e >= 0)
            return lx_dent(e)->node;
        int pid = parse_pid(name, len);
        if (pid < 0 || !proc_of(pid))
            return -LX_ENOENT;
        return dynamic(LX_PROC_PIDDIR, pid, LX_S_IFDIR | 0555, dir);
    }
    if (d->proc == LX_PROC_NETDIR || d->proc == LX_PROC_SYSDIR) {
        int32_t e = lx_dent_find(dir, name, len);
        return e >= 0 ? lx_dent(e)->node : -LX_ENOENT;
    }
    if (d->proc == LX_PROC_PIDDIR) {
        if (!proc_of(d->proc_pid))
            return -LX_ENOENT;
        for (unsigned i = 0; i < NPER_PID; i++)
            if (strlen(per_pid[i].name) == len && !memcmp(per_pid[i].name, name, len))
                return dynamic(per_pid[i].what, d->proc_pid, per_pid[i].mode, dir);
    }
    if (d->proc == LX_PROC_FDDIR || d->proc == LX_PROC_FDINFODIR) {
        struct lx_proc *p = proc_of(d->proc_pid);
        int fd = parse_pid(name, len);
        if (len == 1 && name[0] == '0')
            fd = 0;
        if (!p || p->ended || fd < 0 || !lx_fd_file(p, (uint32_t)fd))
            return -LX_ENOENT;
        if (d->proc == LX_PROC_FDINFODIR)
            return dynamic(LX_PROC_FDINFO + (uint32_t)fd, d->proc_pid, LX_S_IFREG | 0444, dir);
        int32_t n = dynamic(LX_PROC_FD + (uint32_t)fd, d->proc_pid, LX_S_IFLNK, dir);
        if (n >= 0) {                           /* r-x, -wx or rwx: the descriptor's access (O_PATH: none), as Linux shows it */
            uint32_t fl = lx_fd_file(p, (uint32_t)fd)->flags, acc = fl & 3;
            uint32_t mode = (acc != 1 ? 0500 : 0100) | (acc != 0 ? 0200 : 0);
            lx_node(n)->mode = LX_S_IFLNK | ((fl & 010000000) ? 0 : mode);
        }
        return n;
    }
    return -LX_ENOENT;
}

int64_t lx_procfs_path(int32_t n, char *buf, uint64_t size)
{
    const struct lx_node *node = lx_node(n);
    uint32_t what = node->proc;
    int pid = node->proc_pid, len;
    if (what == LX_PROC_PIDDIR) {
        len = fmt(buf, size, "/proc/%d", pid);
    } else if (lx_proc_is_fd(what)) {
        len = fmt(buf, size, "/proc/%d/fd/%u", pid, what - LX_PROC_FD);
    } else if (lx_proc_is_fdinfo(what)) {
        len = fmt(buf, size, "/proc/%d/fdinfo/%u", pid, what - LX_PROC_FDINFO);
    } else {
        unsigned i = 0;
        while (i < NPER_PID && per_pid[i].what != what)
            i++;
        if (i == NPER_PID)
            return -LX_ENOENT;                  /* a pipe's FIFO: in no directory */
        len = fmt(buf, size, "/proc/%d/%s", pid, per_pid[i].name);
    }
    return len > 0 && (uint64_t)len < size ? len : -LX_ENAMETOOLONG;
}

int32_t lx_procfs_fd_target(int32_t n)
{
    const struct lx_node *node = lx_node(n);
    struct lx_proc *p = proc_of(node->proc_pid);
    uint32_t fd = node->proc - LX_PROC_FD;
    struct lx_file *f = p && !p->ended ? lx_fd_file(p, fd) : NULL;
    if (!f)
        return -LX_ENOENT;
    if (f->kind == LX_FILE_NODE)
        return f->node;
    uint32_t mode = lx_name_mode(lx_file_names(f));
    int32_t root = proc_root();                 /* a node of /proc standing for the open file, named by */
    return dynamic(LX_PROC_OBJ + (uint32_t)lx_file_slot(f), (int)f->gen,    /* its slot and generation */
                   mode, root < 0 ? LX_ROOT : root);
}

/* The path of node n (" (deleted)" after a name no entry has any more, as Linux says). */
static uint64_t node_link(int32_t n, char *buf, uint64_t size)
{
    int64_t len = lx_node_path(n, buf, size);
    if (len >= 0)
        return (uint64_t)len;
    int l = fmt(buf, size, "(deleted)");
    return l > 0 && (uint64_t)l < size ? (uint64_t)l : 0;
}

/* What /proc/PID/fd/N names: a file's path, or pipe:[ino], socket:[ino], anon_inode:[kind]. */
static uint64_t fd_link(struct lx_file *f, char *buf, uint64_t size)
{
    static const char *const anon[] = { [LX_NAME_EVENTFD] = "[eventfd]", [LX_NAME_TIMERFD] = "[timerfd]",
                                        [LX_NAME_EPOLL] = "[eventpoll]", [LX_NAME_SIGNALFD] = "[signalfd]" };
    if (f->kind == LX_FILE_NODE)
        return node_link(f->node, buf, size);
    int what = lx_file_names(f);
    unsigned long ino = (unsigned long)lx_file_ino(f);
    int len = what == LX_NAME_PIPE ? fmt(buf, size, "pipe:[%lu]", ino) :
              what == LX_NAME_SOCK ? fmt(buf, size, "socket:[%lu]", ino) :
              what >= LX_NAME_EVENTFD && what <= LX_NAME_SIGNALFD ? fmt(buf, size, "anon_inode:%s", anon[what]) : 0;
    return len > 0 && (uint64_t)len < size ? (uint64_t)len : 0;
}


uint64_t lx_procfs_link(int32_t n, char *buf, uint64_t size)
{
    const struct lx_node *node = lx_node(n);
    int len = 0;
    if (node->proc == LX_PROC_SELF || node->proc == LX_PROC_MOUNTS) {
        len = node->proc == LX_PROC_SELF ? fmt(buf, size, "%d", caller_pid) : fmt(buf, size, "self/mounts");
        return len > 0 && (uint64_t)len < size ? (uint64_t)len : 0;
    }
    struct lx_proc *p = proc_of(node->proc_pid);
    if (!p || p->ended)
        return 0;
    if (node->proc == LX_PROC_CWD)
        return node_link(p->cwd, buf, size);
    if (lx_proc_is_fd(node->proc)) {
        uint32_t fd = node->proc - LX_PROC_FD;
        struct lx_file *f = lx_fd_file(p, fd);
        return f ? fd_link(f, buf, size) : 0;
    }
    const struct lx_started *st = p->started;   /* exe: the path it was started by */
    if (!st)
        return 0;
    if (st->exe[0] == '/') {
        len = fmt(buf, size, "%s", st->exe);
    } else {
        uint64_t at = node_link(p->cwd, buf, size);
        len = fmt(buf + at, size - at, "%s%s", at > 1 ? "/" : "", st->exe[0] == '.' && st->exe[1] == '/' ?
                  st->exe + 2 : st->exe) + (int)at;
    }
    return len > 0 && (uint64_t)len < size ? (uint64_t)len : 0;
}

int lx_procfs_entry(int32_t dir, uint64_t from, char *name, uint8_t *type, uint64_t *ino, uint64_t *cookie)
{
    struct lx_node *d = lx_node(dir);
    if (d->proc == LX_PROC_ROOT) {
        int best = -1;
        for (struct lx_proc *q = lx_procs(); q; q = q->next) {
            if (PID_COOKIE + (uint64_t)q->pid <= from)
                continue;
            if (best < 0 || q->pid < best)
                best = q->pid;
        }
        if (best < 0)
            return -1;
        fmt(name, 16, "%d", best);
        *type = 4;                              /* DT_DIR */
        *ino = 0x10000000ull + (uint64_t)best * 16;
        *cookie = PID_COOKIE + (uint64_t)best;
        return 0;
    }
    if (d->proc == LX_PROC_PIDDIR) {
        uint64_t i = from < 2 ? 0 : from - 2;
        if (i >= NPER_PID)
            return -1;
        memcpy(name, per_pid[i].name, strlen(per_pid[i].name) + 1);
        *type = (uint8_t)((per_pid[i].mode & LX_S_IFMT) >> 12);    /* DT_* */
        *ino = 0x10000000ull + (uint64_t)d->proc_pid * 16 + 1 + i;
        *cookie = 3 + i;
        return 0;
    }
    if (d->proc == LX_PROC_FDDIR || d->proc == LX_PROC_FDINFODIR) {
        struct lx_proc *p = proc_of(d->proc_pid);
        int info = d->proc == LX_PROC_FDINFODIR;
        int64_t fd = p && !p->ended ? lx_fd_next_open(p, from < 2 ? 0 : from - 2) : -1;
        if (fd >= 0) {
            fmt(name, 16, "%d", (int)fd);
            *type = info ? 8 : 10;              /* DT_REG, DT_LNK */
            *ino = (1ull << 40) + ((uint64_t)d->proc_pid << 22) + ((uint64_t)info << 21) + (uint64_t)fd;
            *cookie = 3 + (uint64_t)fd;
            return 0;
        }
    }
    return -1;
}

/* Strings strs[0..n) one after another, each with its NUL, into dst (at
 * most max bytes: whole strings only); the bytes used. */
static uint32_t pack_strings(char *dst, uint32_t max, char *const strs[], int n)
{
    uint32_t at = 0;
    for (int i = 0; i < n; i++) {
        uint64_t l = strlen(strs[i]) + 1;
        if (at + l > max)
            break;
        memcpy(dst + at, strs[i], l);
        at += (uint32_t)l;
    }
    return at;
}

void lx_procfs_exec(struct lx_proc *p, const char *execfn, char *const argv[], int argc, char *const envp[],
                    int envc)
{
    struct lx_started *s = lx_alloc(sizeof(*s));
    lx_procfs_drop(p);
    p->started = s;
    if (!s)
        return;                                 /* (no memory: /proc shows nothing of it) */
    s->refs = 1;
    uint64_t el = strnlen(execfn, EXE_MAX - 1);
    memcpy(s->exe, execfn, el);
    s->exe[el] = 0;
    s->len = pack_strings(s->cmdline, CMDLINE_MAX, argv, argc);
    s->env_len = pack_strings(s->environ, ENVIRON_MAX, envp, envc);
}

void lx_procfs_fork(struct lx_proc *child, const struct lx_proc *parent)
{
    child->started = parent->started;
    if (child->started)
        child->started->refs++;
}

void lx_procfs_drop(struct lx_proc *p)
{
    if (p->started && --p->started->refs == 0)
        lx_free(p->started, sizeof(*p->started));
    p->started = NULL;
}

/* ---------------------------------------------------------------- the files' text */

uint64_t lx_proc_text_len(void)
{
    return text_len;
}

/* Append to the file being made (cut at the text's size). */
void lx_proc_put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    uint64_t room = sizeof(text) - text_len;
    int n = fmt_vsnprintf(text + text_len, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        text_len += (uint64_t)n < room ? (uint64_t)n : room - 1;
}

static char state_of(const struct lx_proc *p)
{
    if (p->ended)
        return 'Z';
    if (p->pid == caller_pid)
        return 'R';
    struct lx_thread *t = lx_main_thread((struct lx_proc *)p);
    return t && t->blk.kind != LX_BLK_NONE ? 'S' : 'R';
}

static const char *state_word(char s)
{
    return s == 'Z' ? "zombie" : s == 'S' ? "sleeping" : "running";
}

static uint64_t vm_size(const struct lx_proc *p)
{
    uint64_t size = 0;
    for (const struct lx_vma *v = lx_vma_first(p); v; v = lx_vma_next(v))
        size += v->node.size;
    return size;
}

static void gen_stat(const struct lx_proc *p)
{
    char s = state_of(p);
    int fg;
    uint32_t ctty = lx_tty_ctty_dev(p, &fg);
    uint64_t vsize = p->ended ? 0 : vm_size(p), rss = vsize / LX_PAGE;
    uint64_t tick = 10000000;                   /* clock ticks (1/100 s): CPU time, all of it user time */
    lx_proc_put("%d (%s) %c %d %d %d %d %d 4194560 0 0 0 0 %lu 0 %lu 0 %d %d %d 0 0 %lu %lu 18446744073709551615 ",
        p->pid, p->comm, s, p->ppid, p->pgid, p->sid, (int)ctty, fg,
        (unsigned long)(lx_proc_cpu_ns(p) / tick), (unsigned long)(p->cpu_children / tick), 20 + p->nice, p->nice,
        p->nthreads > 0 ? p->nthreads : 1, (unsigned long)vsize, (unsigned long)rss);
    lx_proc_put("65536 65536 %lu 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 %lu %lu %lu %lu %lu %d\n",
        (unsigned long)(LX_STACK_TOP - 4096), (unsigned long)p->brk_start, (unsigned long)p->brk,
        (unsigned long)(LX_STACK_TOP - 4096), (unsigned long)(LX_STACK_TOP - 2048),
        (unsigned long)(LX_STACK_TOP - 2048), p->ended ? p->status : 0);
}

static void gen_status(const struct lx_proc *p)
{
    char s = state_of(p);
    uint64_t kb = (p->ended ? 0 : vm_size(p)) / 1024;
    uint32_t mask = lx_umask_of(p);
    lx_proc_put("Name:\t%s\nUmask:\t0%u%u%u\nState:\t%c (%s)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
        p->comm, mask >> 6 & 7, mask >> 3 & 7, mask & 7, s, state_word(s), p->pid, p->pid, p->ppid);
    lx_proc_put("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t%u\nGroups:\t0 \n", p->fdt.size);
    lx_proc_put("NStgid:\t%d\nNSpid:\t%d\nNSpgid:\t%d\nNSsid:\t%d\n", p->pid, p->pid, p->pgid, p->sid);
    lx_proc_put("VmPeak:\t%8lu kB\nVmSize:\t%8lu kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\nVmHWM:\t%8lu kB\n"
        "VmRSS:\t%8lu kB\n", (unsigned long)kb, (unsigned long)kb, (unsigned long)kb, (unsigned long)kb);
    lx_proc_put("Threads:\t%d\nSigQ:\t0/0\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
        "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n", p->nthreads);
    lx_proc_put("CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\n"
        "CapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\n");
    lx_proc_put("Cpus_allowed:\t1\nCpus_allowed_list:\t0\nvoluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n");
}

static void gen_maps(const struct lx_proc *p)
{
    const struct lx_started *st = p->started;
    for (const struct lx_vma *v = lx_vma_first(p); v; v = lx_vma_next(v)) {   /* in address order */
        const char *name = v->kind == LX_VMA_HEAP ? "[heap]" : v->kind == LX_VMA_STACK ? "[stack]" :
                           v->kind == LX_VMA_PROG && st ? st->exe : "";
        char line[96];
        int n = fmt(line, sizeof(line), "%08lx-%08lx %c%c%c%c %08lx 00:00 0",
                    (unsigned long)v->node.start, (unsigned long)lx_vma_end(v), (v->rights & R_READ) ? 'r' : '-',
                    (v->rights & R_WRITE) ? 'w' : '-', (v->rights & R_EXEC) ? 'x' : '-',
                    v->obj && v->obj->shared ? 's' : 'p', (unsigned long)v->off);
        while (name[0] && n < 73 && n < (int)sizeof(line) - 1)
            line[n++] = ' ';                    /* Linux pads the name to column 74 */
        line[n < (int)sizeof(line) ? n : (int)sizeof(line) - 1] = 0;
        lx_proc_put("%s%s\n", line, name);
    }
}

/* /proc/PID/fdinfo/N: the position, the status flags (with O_CLOEXEC if
 * the descriptor has it), the mount (its id in mountinfo; 3 for pipes,
 * sockets and event objects) and the inode (what fstat says). */
static void gen_fdinfo(const struct lx_proc *p, uint32_t fd)
{
    const struct lx_file *f = lx_fd_file((struct lx_proc *)p, fd);   /* (clears only a stale one) */
    if (!f)
        return;
    uint32_t flags = f->flags | (lx_fd_cloexec(p, fd) ? 02000000 : 0);
    int mnt = f->kind != LX_FILE_NODE ? 3 : (int)lx_fs_mount_id(lx_node_fs(f->node));
    uint64_t ino = lx_file_ino(f);
    lx_proc_put("pos:\t%lu\nflags:\t0%o\nmnt_id:\t%d\nino:\t%lu\n", (unsigned long)f->pos, flags, mnt,
        (unsigned long)ino);
}

/* /proc/PID/mounts (the fstab format) or mountinfo: the file systems
 * (rootfs.c), as Linux lists them when its init mounts them in this
 * order. The tmpfs sizes are the store's. */
static void gen_mounts(int info)
{
    static const struct { int fs, parent; const char *dir, *type, *source, *flags, *opts; } m[] = {
        { LX_FS_ROOT, LX_FS_ROOT, "/", "rootfs", "rootfs", "rw", "rw,size=%luk,nr_inodes=%u,inode64" },
        { LX_FS_DEV, LX_FS_ROOT, "/dev", "devtmpfs", "devtmpfs", "rw,relatime",
          "rw,size=%luk,nr_inodes=%u,mode=755,inode64" },
        { LX_FS_PROC, LX_FS_ROOT, "/proc", "proc", "proc", "rw,relatime", "rw" },
        { LX_FS_PTS, LX_FS_DEV, "/dev/pts", "devpts", "devpts", "rw,nosuid,noexec,relatime",
          "rw,gid=5,mode=620,ptmxmode=000" },
        { LX_FS_SHM, LX_FS_DEV, "/dev/shm", "tmpfs", "tmpfs", "rw,nosuid,nodev,relatime", "rw,inode64" },
        { LX_FS_DATA, LX_FS_ROOT, NULL, "ext2", "/dev/vda", NULL, NULL },     /* (when mounted, where it is) */
    };
    uint64_t used;
    uint32_t nodes, max;
    lx_fs_usage(&used, &nodes, &max);
    unsigned long kb = (unsigned long)(lx_vfs_bytes() >> 10);
    for (unsigned i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        static char dir[LX_PATH_MAX];
        char flags[96], opts[96];
        int parent = m[i].parent;
        if (m[i].fs == LX_FS_DATA) {
            /* Linux's order: ro or rw, the file system's flags (sync,
             * dirsync, mand, lazytime), the mount's (nosuid ... relatime). */
            uint64_t f = lx_data_mount_flags();
            int32_t root = lx_data_mount_root();
            if (!f && root < 0)
                continue;
            static char path[LX_PATH_MAX];
            if (lx_node_path(root, path, sizeof(path)) < 0)
                continue;
            /* Space, tab, newline and backslash as \ooo, as Linux's mangle() writes them. */
            uint64_t put = 0;
            for (const char *p = path; *p && put + 5 < sizeof(dir); p++)
                put += (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\\')
                           ? (uint64_t)fmt(dir + put, sizeof(dir) - put, "\\%03o", (unsigned char)*p)
                           : (uint64_t)(dir[put] = *p, 1);
            dir[put] = 0;
            parent = lx_node_fs(lx_node(root)->parent);
            static const struct { uint64_t bit; const char *word; } sb[] = {
                { LX_MS_SYNCHRONOUS, ",sync" }, { LX_MS_DIRSYNC, ",dirsync" }, { LX_MS_MANDLOCK, ",mand" },
                { LX_MS_LAZYTIME, ",lazytime" } }, mnt[] = {
                { LX_MS_NOSUID, ",nosuid" }, { LX_MS_NODEV, ",nodev" }, { LX_MS_NOEXEC, ",noexec" },
                { LX_MS_NOATIME, ",noatime" }, { LX_MS_NODIRATIME, ",nodiratime" }, { LX_MS_RELATIME, ",relatime" },
                { LX_MS_NOSYMFOLLOW, ",nosymfollow" } };
            const char *rw = f & LX_MS_RDONLY ? "ro" : "rw";
            uint64_t at = (uint64_t)fmt(opts, sizeof(opts), "%s", rw);  /* the super block's: ro/rw and its flags */
            for (unsigned k = 0; k < sizeof(sb) / sizeof(sb[0]); k++)
                if (f & sb[k].bit)
                    at += (uint64_t)fmt(opts + at, sizeof(opts) - at, "%s", sb[k].word);
            at = (uint64_t)fmt(flags, sizeof(flags), "%s", rw);         /* the mount's: ro/rw and its flags */
            for (unsigned k = 0; k < sizeof(mnt) / sizeof(mnt[0]); k++)
                if (f & mnt[k].bit)
                    at += (uint64_t)fmt(flags + at, sizeof(flags) - at, "%s", mnt[k].word);
        } else {
            fmt(dir, sizeof(dir), "%s", m[i].dir);
            fmt(flags, sizeof(flags), "%s", m[i].flags);
            fmt(opts, sizeof(opts), m[i].opts, kb, max);
        }
        uint32_t dev = lx_fs_dev(m[i].fs);
        if (info) {
            lx_proc_put("%u %u %u:%u / %s %s - %s %s %s\n", lx_fs_mount_id(m[i].fs), lx_fs_mount_id(parent),
                (dev >> 8) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00), dir, flags, m[i].type, m[i].source, opts);
        } else if (m[i].fs == LX_FS_DATA) {
            /* the fstab line: ro or rw, the file system's flags, the mount's */
            lx_proc_put("%s %s %s %s%s 0 0\n", m[i].source, dir, m[i].type, opts, flags + 2);
        } else {
            /* the fstab line: the mount flags first, then the options after the first ("rw") */
            lx_proc_put("%s %s %s %s%s 0 0\n", m[i].source, dir, m[i].type, flags, opts + 2);
        }
    }
}

static void gen(const struct lx_node *n)
{
    text_len = 0;
    text[0] = 0;
    uint64_t ns = svc_clock_ns();
    if (lx_proc_is_fdinfo(n->proc)) {
        const struct lx_proc *p = proc_of(n->proc_pid);
        if (p && !p->ended)
            gen_fdinfo(p, n->proc - LX_PROC_FDINFO);
        return;
    }
    if (n->proc >= LX_PROC_STAT && n->proc <= LX_PROC_ENVIRON) {
        const struct lx_proc *p = proc_of(n->proc_pid);
        if (!p)
            return;
        const struct lx_started *st = p->started;
        switch (n->proc) {
        case LX_PROC_STAT: gen_stat(p); break;
        case LX_PROC_STATUS: gen_status(p); break;
        case LX_PROC_COMM: lx_proc_put("%s\n", p->comm); break;
        case LX_PROC_MAPS: if (!p->ended) gen_maps(p); break;
        case LX_PROC_CMDLINE:
            if (st && !p->ended) {
                memcpy(text, st->cmdline, st->len);
                text_len = st->len;
            }
            break;
        case LX_PROC_ENVIRON:
            if (st && !p->ended) {
                memcpy(text, st->environ, st->env_len);
                text_len = st->env_len;
            }
            break;
        }
        return;
    }
    switch (n->proc) {
    case LX_PROC_MEMINFO: {
        uint64_t used;
        uint32_t nodes, max;
        lx_fs_usage(&used, &nodes, &max);
        unsigned long total = LX_MEM_TOTAL >> 10, free = total - 16384 - used / 1024;
        lx_proc_put("MemTotal:       %8lu kB\nMemFree:        %8lu kB\nMemAvailable:   %8lu kB\nBuffers:               0 kB\n"
            "Cached:         %8lu kB\nSwapCached:            0 kB\n", total, free, free, (unsigned long)(used / 1024));
        lx_proc_put("SwapTotal:             0 kB\nSwapFree:              0 kB\nShmem:          %8lu kB\n", (unsigned long)(used / 1024));
        break;
    }
    case LX_PROC_CPUINFO:
        for (uint64_t m = lx_cpus_online(); m; m &= m - 1)     /* one entry per core online, as Linux */
            lx_proc_put("processor\t: %d\nBogoMIPS\t: 125.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"
                "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\n"
                "CPU revision\t: 4\n\n", __builtin_ctzll(m));
        break;
    case LX_PROC_UPTIME:
        lx_proc_put("%lu.%02lu 0.00\n", (unsigned long)(ns / 1000000000u), (unsigned long)(ns / 10000000u % 100));
        break;
    case LX_PROC_PMOUNTS:
    case LX_PROC_MOUNTINFO:
        gen_mounts(n->proc == LX_PROC_MOUNTINFO);
        break;
    case LX_PROC_VERSION:
        lx_proc_put("Linux version 6.1.0-petrel (petrel) #1 Petrel 0.1 (Linux personality)\n");
        break;
    case LX_PROC_LOADAVG: {
        int count = 0, last = 0;
        for (struct lx_proc *q = lx_procs(); q; q = q->next)
            if (!q->ended) {
                count++;
                last = q->pid > last ? q->pid : last;
            }
        lx_proc_put("0.00 0.00 0.00 1/%d %d\n", count, last);
        break;
    }
    case LX_PROC_FILESYSTEMS:
        lx_proc_put("nodev\ttmpfs\nnodev\tdevtmpfs\nnodev\tproc\nnodev\tdevpts\n\text2\n");
        break;
    case LX_PROC_KSTAT: {
        /* In USER_HZ ticks since boot: the CPU time of the processes there are (and of the
         * children they waited for) as user time, the rest of the time since boot as idle. */
        uint64_t tick = 1000000000u / 100, user = 0;
        int running = 0;
        for (struct lx_proc *q = lx_procs(); q; q = q->next) {
            if (q->ended)
                continue;
            user += lx_proc_cpu_ns(q) + q->cpu_children;
            running += state_of(q) == 'R';
        }
        /* Every core's time since boot; the user time is not kept per core,
         * so each core's line has an even share of it. */
        uint64_t ncpu = (uint64_t)lx_ncpus(), up = ns / tick, u = user / tick, idle = up * ncpu > u ? up * ncpu - u : 0;
        lx_proc_put("cpu  %lu 0 0 %lu 0 0 0 0 0 0\n", (unsigned long)u, (unsigned long)idle);
        for (uint64_t m = lx_cpus_online(); m; m &= m - 1)
            lx_proc_put("cpu%d %lu 0 0 %lu 0 0 0 0 0 0\n", __builtin_ctzll(m), (unsigned long)(u / ncpu), (unsigned long)(idle / ncpu));
        lx_proc_put("intr 0\nctxt 0\nbtime %lu\nprocesses %lu\nprocs_running %d\nprocs_blocked 0\nsoftirq 0\n",
            (unsigned long)(lx_realtime_base() / 1000000000u), (unsigned long)lx_ids_given(), running);
        break;
    }
    case LX_PROC_PETREL: {
        /* Petrel's own (Linux has no such file): what the personality holds now, so that a
         * test can see everything a program made go when it ends. */
        uint32_t nprocs = lx_procs_alive(), nthreads = lx_threads_alive();
        uint32_t evs, watches, nodes, nodes_max;
        uint64_t bytes;
        lx_events_in_use(&evs, &watches);
        lx_fs_usage(&bytes, &nodes, &nodes_max);
        lx_proc_put("procs %u\nthreads %u\nfiles %u\npipes %u\nsockets %u\nevents %u\nwatches %u\nmobjs %u\n"
            "nodes %u\nfs_bytes %lu\nlocks %u\nheap_bytes %lu\n", nprocs, nthreads, lx_files_in_use(),
            lx_pipes_in_use(), lx_socks_in_use(), evs, watches, lx_mobjs_in_use(), nodes, (unsigned long)bytes,
            lx_locks_in_use(), (unsigned long)lx_heap_bytes());
        break;
    }
    case LX_PROC_PETREL_SHARED:
        /* Petrel's own too: the calls answered on several cores at once
         * (docs/design/personality.md, "Several cores"), apart from
         * /proc/petrel, whose counts come back when a program ends. */
        lx_proc_put("shared_calls %lu\n", (unsigned long)lx_shared_calls());
        break;
    case LX_PROC_NET_DEV:
    case LX_PROC_NET_TCP:
    case LX_PROC_NET_UDP:
    case LX_PROC_NET_SNMP:
    case LX_PROC_NET_TCP6:
    case LX_PROC_NET_UDP6:
    case LX_PROC_NET_ROUTE:
        lx_inet_proc(n->proc);
        break;
    case LX_PROC_TCP_CC:
        lx_proc_put("%s\n", lx_inet_cc_default());
        break;
    case LX_PROC_TCP_CC_AVAIL:
        lx_proc_put("reno cubic westwood\n");
        break;
    case LX_PROC_TCP_CC_ALLOWED:
        lx_proc_put("reno cubic\n");                   /* (Linux's: what a process may choose without CAP_NET_ADMIN) */
        break;
    default:
        break;
    }
}

int lx_procfs_writable(uint32_t what)
{
    return what == LX_PROC_TCP_CC;
}

/* A write to a writable /proc file: the whole of it is the new value (a
 * trailing newline aside), as Linux's sysctl files take it. */
int64_t lx_procfs_write(struct lx_ctx *c, int32_t node, uint64_t buf, uint64_t len)
{
    char v[32];
    if (lx_node(node)->proc != LX_PROC_TCP_CC)
        return -LX_EINVAL;
    if (len >= sizeof(v))
        return -LX_EINVAL;
    if (lx_copy_in(c, v, buf, len))
        return -LX_EFAULT;
    v[len] = 0;
    for (uint64_t k = len; k && (v[k - 1] == '\n' || v[k - 1] == ' '); k--)
        v[k - 1] = 0;
    int err = lx_inet_cc_set_default(v);
    return err ? err : (int64_t)len;
}

const char *lx_procfs_text(int32_t node, uint64_t *len)
{
    gen(lx_node(node));
    *len = text_len;
    return text;
}
