/*
 * Processes and threads: fork (clone of a process, and vfork), clone of
 * a thread, execve, wait4 and waitid, process groups and sessions.
 *
 * fork makes a new space and gives it a copy-on-write clone of every
 * memory object of the parent's mappings, mapped at the same addresses
 * (memory.c), the parent's descriptors (the same open files, one more
 * reference each) and a thread that is a copy of the parent's (the
 * kernel's thread_copy: registers, TLS, FP/SIMD), resumed after the
 * `svc` with x0 = 0. The parent's reply carries the child's pid. With
 * CLONE_VFORK the parent's reply is kept until the child calls execve or
 * ends.
 *
 * execve loads the new program into a new space first; only when that
 * worked is the old one killed (the calling thread with it: the call has
 * no reply) and the new one takes its place under the same pid.
 *
 * A thread (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
 * CLONE_THREAD, as pthread_create asks) is a new kernel thread in the
 * caller's space, a copy of the caller's registers with the new stack
 * and TLS, faulting to the personality with its tid as badge. It shares
 * everything of its process (struct lx_proc); what is its own is in its
 * struct lx_thread: its signal mask, its blocked call, its alternate
 * stack. It ends with exit (its clear_tid word zeroed and woken); the
 * process ends with exit_group, a fatal signal, or its last thread.
 * execve from any thread ends the others first, as Linux's does.
 *
 * A child that ends stays (a zombie, its wait status kept) until its
 * parent waits for it; a parent waiting for a child that runs keeps its
 * reply and runs its call again when a child ends. Children of a parent
 * that ends are orphans: nobody waits for them, and they go when they end.
 */
#include "lx.h"

#define CSIGNAL             0xff
#define CLONE_VM            0x100
#define CLONE_FS            0x200
#define CLONE_FILES         0x400
#define CLONE_SIGHAND       0x800
#define CLONE_PIDFD         0x1000
#define CLONE_PTRACE        0x2000
#define CLONE_VFORK         0x4000
#define CLONE_PARENT        0x8000
#define CLONE_THREAD        0x10000
#define CLONE_SYSVSEM       0x40000
#define CLONE_SETTLS        0x80000
#define CLONE_PARENT_SETTID 0x100000
#define CLONE_CHILD_CLEARTID 0x200000
#define CLONE_DETACHED      0x400000
#define CLONE_UNTRACED      0x800000
#define CLONE_CHILD_SETTID  0x01000000
#define CLONE_PROCESS_OK    (CSIGNAL | CLONE_VM | CLONE_FS | CLONE_PTRACE | CLONE_VFORK | CLONE_SYSVSEM | \
                             CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_DETACHED | \
                             CLONE_UNTRACED | CLONE_CHILD_SETTID)
#define CLONE_THREAD_NEEDS  (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD)
#define CLONE_THREAD_OK     (CSIGNAL | CLONE_THREAD_NEEDS | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | \
                             CLONE_CHILD_CLEARTID | CLONE_DETACHED | CLONE_CHILD_SETTID)

/* clone of a thread: the caller's process gets one more. */
static int64_t clone_thread(struct lx_ctx *c, uint64_t flags, uint64_t sp, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
    int err;
    struct lx_thread *t = lx_thread_new(c->p, 0, &err);
    if (!t)
        return err;
    int tid = t->tid;
    t->clear_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    t->cpus = c->t->cpus;
    lx_sig_fork(t, c->t);
    /* Both words are in the shared memory: written before the thread runs, as Linux does. */
    if ((flags & CLONE_CHILD_SETTID) && lx_copy_out(c, ctid, &tid, sizeof(tid)))
        err = -LX_EFAULT;
    if (!err && (flags & CLONE_PARENT_SETTID) && lx_copy_out(c, ptid, &tid, sizeof(tid)))
        err = -LX_EFAULT;
    const uint64_t *mr = c->mr;
    if (!err)
        err = lx_thread_start(t, c->t->thread, mr[FAULT_MR_PC], sp ? sp : mr[FAULT_MR_SP], 0,
                              (flags & CLONE_SETTLS) ? &tls : NULL);
    if (err) {
        lx_thread_free(t);
        return err == -LX_EFAULT ? err : -LX_EAGAIN;
    }
    return tid;
}

#define WNOHANG     0x1
#define WUNTRACED   0x2
#define WEXITED     0x4
#define WCONTINUED  0x8
#define WNOWAIT     0x01000000
#define WALL_BITS   0xe0000000u     /* __WNOTHREAD, __WALL, __WCLONE */
#define P_ALL       0
#define P_PID       1
#define P_PGID      2
#define SIGCHLD     17
#define CLD_EXITED  1
#define CLD_KILLED  2

/* A vfork child with CLONE_VM runs in its parent's space (its own new one
 * goes), on a control page of the parent's, until it execs or ends; the
 * parent waits meanwhile (its other threads may run). 0 or -EAGAIN. */
static int borrow_space(struct lx_proc *p, struct lx_proc *child)
{
    struct lx_thread *ct = lx_main_thread(child);
    int slot = lx_utcb_take(p);
    if (slot < 0)
        return -LX_EAGAIN;
    svc_space_kill(child->space);
    svc_handle_release(child->space);
    child->space = p->space;
    child->vm_of = p;
    p->borrowed++;
    lx_utcb_give(child, ct->utcb);              /* its own space's page: none used until it execs */
    ct->utcb = slot;
    return 0;
}

int64_t lx_sys_clone(struct lx_ctx *c, uint64_t flags, uint64_t sp, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
    struct lx_proc *p = c->p;
    if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
        return -LX_EINVAL;                      /* Linux's own rules first */
    if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
        return -LX_EINVAL;
    if ((flags & CLONE_THREAD) && p->vm_of)
        return -LX_EAGAIN;                      /* a vfork child makes no threads in its parent's memory */
    if ((flags & CLONE_THREAD) && (flags & CLONE_THREAD_NEEDS) == CLONE_THREAD_NEEDS &&
        !(flags & ~(uint64_t)CLONE_THREAD_OK))
        return clone_thread(c, flags, sp, ptid, tls, ctid);
    if ((flags & ~(uint64_t)CLONE_PROCESS_OK) || ((flags & CLONE_VM) && !(flags & CLONE_VFORK))) {
        static int said;
        if (!said++)
            lx_log("pid %d (%s): clone flags 0x%lx: only processes and whole threads are supported", p->pid,
                   p->comm, (unsigned long)flags);
        return -LX_ENOSYS;
    }
    int err;
    struct lx_proc *child = lx_proc_new(p, &err);
    if (!child)
        return err;
    child->pgid = p->pgid;
    child->sid = p->sid;
    child->cwd = p->cwd;
    memcpy(child->rlim, p->rlim, sizeof(child->rlim));
    child->nice = p->nice;
    memcpy(child->comm, p->comm, sizeof(child->comm));
    lx_procfs_fork(child, p);
    struct lx_thread *ct = lx_main_thread(child);
    ct->clear_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    ct->cpus = c->t->cpus;
    lx_sig_fork(ct, c->t);
    if (lx_fds_fork(p, child)) {
        lx_proc_discard(child);
        return -LX_ENOMEM;
    }
    struct lx_proc *mem = lx_memory_of(p);
    if (flags & CLONE_VM)
        err = borrow_space(mem, child);
    else
        err = lx_vmas_fork(mem, child);
    int pid = child->pid;
    if (!err && (flags & CLONE_CHILD_SETTID))          /* in the child's memory; a bad address is ignored */
        lx_vma_poke(lx_memory_of(child), ctid, &pid, sizeof(pid));
    if (!err && (flags & CLONE_PARENT_SETTID))
        lx_copy_out(c, ptid, &pid, sizeof(pid));
    const uint64_t *mr = c->mr;
    if (!err)
        err = lx_thread_start(ct, c->t->thread, mr[FAULT_MR_PC], sp ? sp : mr[FAULT_MR_SP], 0,
                              (flags & CLONE_SETTLS) ? &tls : NULL);
    if (err) {
        lx_proc_discard(child);
        return err == -LX_ENOMEM ? -LX_ENOMEM : -LX_EAGAIN;
    }
    if (flags & CLONE_VFORK) {
        return lx_block(c, LX_BLK_VFORK, pid);  /* answered when the child execs or ends */
    }
    return pid;
}

/* clone3: the same, from a struct clone_args of `size` bytes. */
int64_t lx_sys_clone3(struct lx_ctx *c, uint64_t uargs, uint64_t size)
{
    struct {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
                 cgroup;
    } a;
    if (size < 64)
        return -LX_EINVAL;                      /* CLONE_ARGS_SIZE_VER0 */
    if (size > 4096)
        return -LX_E2BIG;
    memset(&a, 0, sizeof(a));
    if (lx_copy_in(c, &a, uargs, size < sizeof(a) ? size : sizeof(a)))
        return -LX_EFAULT;
    for (uint64_t off = sizeof(a); off < size; off += 8) {     /* a newer struct: its tail must be zeros */
        uint64_t w = 0;
        if (lx_copy_in(c, &w, uargs + off, size - off < 8 ? size - off : 8))
            return -LX_EFAULT;
        if (w)
            return -LX_E2BIG;
    }
    if ((a.flags >> 32) || (a.flags & CSIGNAL) || a.exit_signal > LX_NSIG || a.set_tid || a.set_tid_size ||
        a.cgroup || (a.flags & CLONE_PIDFD))
        return -LX_EINVAL;                      /* (set_tid, pidfds and cgroups: not supported) */
    if ((a.stack == 0) != (a.stack_size == 0) || ((a.flags & (CLONE_THREAD | CLONE_PARENT)) && a.exit_signal))
        return -LX_EINVAL;
    uint64_t sp = a.stack ? a.stack + a.stack_size : 0;
    return lx_sys_clone(c, a.flags | a.exit_signal, sp, a.parent_tid, a.tls, a.child_tid);
}

/* ---------------------------------------------------------------- execve */

#define EXEC_ARGS   1024                        /* argv and envp entries together */

static char exec_path[LX_PATH_MAX];
static char *exec_strings;                     /* LX_ARG_MAX bytes, made at the first exec (not in the
                                                 * kernel image: its TLB entries are precious) */
static char *exec_vec[EXEC_ARGS + 4];
static struct lx_proc image;                    /* the new program, until it replaces the old */

/* Copy the NULL-terminated vector of strings at uvec (NULL: none) into
 * exec_strings from *used on, and pointers to them into exec_vec from *n
 * on; 0 or a negated errno (E2BIG past the limits, EFAULT). */
static int copy_vector(struct lx_ctx *c, uint64_t uvec, uint64_t *used, int *n)
{
    for (uint64_t i = 0; uvec; i++) {
        uint64_t s;
        if (lx_copy_in(c, &s, uvec + i * 8, 8))
            return -LX_EFAULT;
        if (!s)
            return 0;
        if (*n >= EXEC_ARGS)
            return -LX_E2BIG;
        int64_t len = lx_copy_str(c, exec_strings + *used, s, LX_ARG_MAX - *used);
        if (len < 0)
            return len == -LX_ENAMETOOLONG ? -LX_E2BIG : (int)len;
        exec_vec[(*n)++] = exec_strings + *used;
        *used += (uint64_t)len + 1;
    }
    return 0;
}

int lx_script_line(int32_t node, char *interp, uint64_t isize, char *arg, uint64_t asize)
{
    struct lx_node *n = lx_node(node);
    char text[256];
    uint64_t len = n->size < sizeof(text) ? n->size : sizeof(text), i = 2, end;
    if (lx_node_read(n, 0, text, len))
        return -LX_ENOMEM;
    while (i < len && (text[i] == ' ' || text[i] == '\t'))
        i++;
    for (end = i; end < len && text[end] != '\n' && text[end] != ' ' && text[end] != '\t'; end++)
        ;
    if (end == i || end == len)
        return -LX_ENOEXEC;
    uint64_t at = end, at_end;
    while (at < len && (text[at] == ' ' || text[at] == '\t'))
        at++;
    for (at_end = at; at_end < len && text[at_end] != '\n'; at_end++)
        ;
    while (at_end > at && (text[at_end - 1] == ' ' || text[at_end - 1] == '\t'))
        at_end--;
    if (end - i >= isize || at_end - at >= asize)
        return -LX_ENAMETOOLONG;
    memcpy(interp, text + i, end - i);
    interp[end - i] = 0;
    memcpy(arg, text + at, at_end - at);
    arg[at_end - at] = 0;
    return at_end > at;
}

int32_t lx_script_interp(const char *interp)
{
    int32_t in = lx_lookup(LX_ROOT, interp, 1);
    if (in < 0)
        return in;
    struct lx_node *inode = lx_node(in);
    if ((inode->mode & LX_S_IFMT) != LX_S_IFREG || !(inode->mode & 0111) || lx_data_refuses(inode, LX_MS_NOEXEC))
        return -LX_EACCES;
    return in;
}

/* A `#!` script: put the interpreter (and its one argument) before the
 * script's path in argv; the interpreter's node, or a negated errno. */
static int32_t script(int32_t node, int *argc, int hidden)
{
    if (hidden)
        return -LX_ENOENT;                      /* its path (/dev/fd/N of a close-on-exec fd) is gone after exec */
    /* The strings go into exec_path's tail: interpreter, then its argument. */
    uint64_t plen = strlen(exec_path) + 1;
    if (plen >= sizeof(exec_path))
        return -LX_ENAMETOOLONG;
    char *interp = exec_path + plen;
    uint64_t room = sizeof(exec_path) - plen;
    char iarg[256];
    int has_arg = lx_script_line(node, interp, room, iarg, sizeof(iarg));
    if (has_arg < 0)
        return has_arg;
    uint64_t ilen = strlen(interp) + 1, alen = strlen(iarg) + 1;
    if (ilen + alen > room)
        return -LX_ENAMETOOLONG;
    memcpy(interp + ilen, iarg, alen);
    int extra = 1 + has_arg;
    if (*argc + extra > EXEC_ARGS)
        return -LX_E2BIG;
    memmove(&exec_vec[extra + 1], &exec_vec[1], sizeof(exec_vec[0]) * (size_t)(*argc > 0 ? *argc - 1 : 0));
    exec_vec[0] = interp;
    if (extra == 2)
        exec_vec[1] = interp + ilen;
    exec_vec[extra] = exec_path;
    *argc = (*argc > 0 ? *argc : 1) + extra;
    return lx_script_interp(interp);
}

#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_EMPTY_PATH       0x1000

/* The file execveat names: `exec_path` (len bytes) from dirfd, or dirfd
 * itself for an empty path; a node or a negated errno. */
static int32_t exec_node(struct lx_ctx *c, int64_t dirfd, int64_t len, uint32_t flags)
{
    if (len == 0) {                             /* AT_EMPTY_PATH: the descriptor's file */
        if ((int32_t)dirfd == AT_FDCWD)
            return c->p->cwd;
        struct lx_file *f = (int32_t)dirfd >= 0 ? lx_fd_file(c->p, (uint32_t)dirfd) : NULL;
        if (!f)
            return -LX_EBADF;
        return f->node >= 0 ? f->node : -LX_EACCES;     /* a pipe or an event object: not a program */
    }
    int32_t dir = lx_start_dir(c, dirfd, exec_path);
    if (dir < 0)
        return dir;
    int32_t node = lx_lookup(dir, exec_path, !(flags & AT_SYMLINK_NOFOLLOW));
    if (node >= 0 && (lx_node(node)->mode & LX_S_IFMT) == LX_S_IFLNK)
        return -LX_ELOOP;                       /* AT_SYMLINK_NOFOLLOW on a link */
    return node;
}

/* Name a program found through descriptor fd as Linux does, for AT_EXECFN,
 * its comm and a script's interpreter: "/dev/fd/N", or "/dev/fd/N/PATH"
 * for the relative path of len bytes in exec_path. 0 or -ENAMETOOLONG. */
static int fd_path(int32_t fd, int64_t len)
{
    char num[16];
    int k = 0;
    uint32_t v = (uint32_t)fd;
    do
        num[k++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    uint64_t prefix = 8 + (uint64_t)k + (len ? 1 : 0);
    if (prefix + (uint64_t)len + 1 > sizeof(exec_path))
        return -LX_ENAMETOOLONG;
    memmove(exec_path + prefix, exec_path, (uint64_t)len + 1);
    memcpy(exec_path, "/dev/fd/", 8);
    for (int i = 0; i < k; i++)
        exec_path[8 + i] = num[k - 1 - i];
    if (len)
        exec_path[prefix - 1] = '/';
    return 0;
}

/* execve, and execveat: the program at path `upath` from dirfd (AT_FDCWD:
 * the working directory), or dirfd's own file with AT_EMPTY_PATH and an
 * empty path; AT_SYMLINK_NOFOLLOW refuses a final link (ELOOP). */
static int64_t exec_at(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t uargv, uint64_t uenvp,
                       uint32_t flags)
{
    struct lx_proc *p = c->p;
    int64_t len = lx_path_in(c, exec_path, upath);     /* (/proc/self is the caller) */
    if (len < 0)
        return len;
    if (len == 0 && !(flags & AT_EMPTY_PATH))
        return -LX_ENOENT;
    /* The strings first, then the file, in Linux's order: argv to
     * exec_vec[0..argc), envp after it, then moved to envp[]. */
    if (!exec_strings && !(exec_strings = svc_alloc(LX_ARG_MAX)))
        return -LX_ENOMEM;
    uint64_t used = 0;
    int count = 0;
    int err = copy_vector(c, uargv, &used, &count);
    int argc = count;
    if (!err)
        err = copy_vector(c, uenvp, &used, &count);
    if (err)
        return err;
    static char *envp[EXEC_ARGS];
    int nenv = count - argc;
    memcpy(envp, &exec_vec[argc], sizeof(envp[0]) * (size_t)nenv);
    if (flags & ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -LX_EINVAL;
    int32_t node = exec_node(c, dirfd, len, flags);
    if (node < 0)
        return node;
    int by_fd = (int32_t)dirfd != AT_FDCWD && exec_path[0] != '/';
    if (by_fd && (err = fd_path((int32_t)dirfd, len)) != 0)
        return err;
    struct lx_node *n = lx_node(node);
    if ((n->mode & LX_S_IFMT) != LX_S_IFREG || !(n->mode & 0111) || lx_data_refuses(n, LX_MS_NOEXEC))
        return -LX_EACCES;
    char magic[2];
    const char *exe = exec_path;                /* /proc/PID/exe: the program, a script's interpreter */
    int64_t wait = lx_data_prefetch(n, 0, 4096);        /* a file on the disk: its "#!" line at hand */
    if (wait)
        return wait;
    if (n->size >= 2 && lx_node_read(n, 0, magic, 2) == 0 && !memcmp(magic, "#!", 2)) {
        node = script(node, &argc, by_fd && lx_fd_cloexec(p, (uint32_t)dirfd));
        if (node < 0)
            return node;
        exe = exec_vec[0];
    }
    memset(&image, 0, sizeof(image));
    image.space = lx_space_new();
    if (!image.space)
        return -LX_ENOMEM;
    uint64_t pc, sp;
    err = lx_load(&image, node, exec_path, exe, exec_vec, argc, envp, nenv, &pc, &sp);
    if (err) {
        lx_vmas_drop(&image);
        lx_procfs_drop(&image);
        svc_space_kill(image.space);
        svc_handle_release(image.space);
        return err;
    }
    /* The point of no return: the old program goes, every thread of it
     * (the caller's kernel thread with its space); the caller's record
     * stays as the process's only thread, with the pid as its tid. */
    struct lx_thread *t = c->t;
    while (p->first_thread != t || t->sibling)
        lx_thread_free(p->first_thread != t ? p->first_thread : t->sibling);
    lx_futex_thread_gone(t);                    /* its robust list, in the old program's memory */
    lx_thread_renumber(t, p->pid);
    p->cpu_gone += lx_thread_cpu_ns(t);         /* the old program's time stays the process's */
    if (p->vm_of) {                             /* a vfork child: the lender's space stays, its page goes back */
        svc_thread_kill(t->thread);
        lx_utcb_give(p->vm_of, t->utcb);
        p->vm_of->borrowed--;
        p->vm_of = NULL;
        t->utcb = lx_utcb_take(p);              /* its own map has room: it holds none now */
    } else {
        lx_end_borrowers(p);
        svc_space_kill(p->space);
        svc_handle_release(p->space);
    }
    svc_handle_release(t->thread);
    t->thread = 0;
    p->execed = 1;
    lx_vmas_drop(p);
    p->space = image.space;
    lx_procfs_drop(p);
    p->started = image.started;                 /* what it was started with, for /proc */
    image.started = NULL;
    p->vmas = image.vmas;                       /* (the tree's records are the image's: moved, not copied) */
    p->brk_start = image.brk_start;
    p->brk = image.brk;
    p->heap_obj = NULL;
    p->heap_va = p->heap_end = p->heap_top = 0;
    t->clear_tid = 0;
    lx_sig_exec(t);
    lx_ptimers_exec(p);
    lx_fds_exec(p);
    const char *base = exec_path;
    for (const char *s = exec_path; *s; s++)
        if (*s == '/' && s[1])
            base = s + 1;
    struct lx_dent *named = len == 0 && by_fd ? lx_dent(lx_dent_of(node)) : NULL;
    memset(p->comm, 0, sizeof(p->comm));
    if (named)                                  /* by descriptor: the file's own name, as Linux does */
        memcpy(p->comm, named->name, named->len < sizeof(p->comm) - 1 ? named->len : sizeof(p->comm) - 1);
    else
        memcpy(p->comm, base, strnlen(base, sizeof(p->comm) - 1));
    lx_wake_all(LX_BLK_VFORK, p->pid);          /* a vfork parent goes on */
    if (lx_thread_start(t, 0, pc, sp, 0, NULL)) {
        lx_log("pid %d (%s): no thread for the new program", p->pid, p->comm);
        lx_proc_end(p, 9);
    }
    return LX_NORETURN;
}

int64_t lx_sys_execve(struct lx_ctx *c, uint64_t upath, uint64_t uargv, uint64_t uenvp)
{
    return exec_at(c, AT_FDCWD, upath, uargv, uenvp, 0);
}

int64_t lx_sys_execveat(struct lx_ctx *c, int64_t dirfd, uint64_t upath, uint64_t uargv, uint64_t uenvp,
                        uint64_t flags)
{
    return exec_at(c, dirfd, upath, uargv, uenvp, (uint32_t)flags);
}

/* ---------------------------------------------------------------- waiting */

/* Is q a child of p that wait's selector `pid` names? */
static int selects(struct lx_proc *p, struct lx_proc *q, int32_t pid)
{
    if (!q->used || q->ppid != p->pid)
        return 0;                               /* (the children list holds p's only) */
    if (pid > 0)
        return q->pid == pid;
    if (pid == -1)
        return 1;
    return q->pgid == (pid == 0 ? p->pgid : -pid);
}

/* The first of p's children that wait's selector `pid` may name: that
 * one itself for a pid (found by its number, so that waiting for one of
 * many children does not look at the others), else the oldest. */
static struct lx_proc *first_selected(struct lx_proc *p, int32_t pid)
{
    if (pid > 0) {
        struct lx_proc *q = lx_proc_of_pid(pid);
        return q && q->ppid == p->pid ? q : NULL;
    }
    return p->first_child;
}

/* A child's CPU time with that of the children it waited for (what wait4's rusage reports). */
static uint64_t child_cpu(const struct lx_proc *q)
{
    return (q->ended ? q->cpu_gone : lx_proc_cpu_ns(q)) + q->cpu_children;
}

/* p waits for ended child q: its slot goes, its time is p's children's. */
static void reap(struct lx_proc *p, struct lx_proc *q)
{
    p->cpu_children += child_cpu(q);
    lx_proc_free(q);
}

int64_t lx_sys_wait4(struct lx_ctx *c, int64_t upid, uint64_t ustatus, uint64_t options, uint64_t rusage)
{
    struct lx_proc *p = c->p;
    int32_t pid = (int32_t)upid;
    uint32_t opt = (uint32_t)options;
    if (opt & ~(WNOHANG | WUNTRACED | WCONTINUED | WALL_BITS))
        return -LX_EINVAL;
    if (pid == INT32_MIN)
        return -LX_ESRCH;
    int any = 0;
    for (struct lx_proc *q = first_selected(p, pid); q; q = pid > 0 ? NULL : q->sibling) {
        if (!selects(p, q, pid))
            continue;
        any = 1;
        int32_t status = q->status, qpid = q->pid;
        uint64_t cpu = child_cpu(q);
        if (!q->ended && (opt & WUNTRACED) && q->stopped && q->report && q->report != 0xffff) {
            status = q->report << 8 | 0x7f;     /* stopped by that signal: reported once */
            q->report = 0;
        } else if (!q->ended && (opt & WCONTINUED) && q->report == 0xffff) {
            status = 0xffff;
            q->report = 0;
        } else if (!q->ended) {
            continue;
        } else {
            reap(p, q);
        }
        if (ustatus && lx_copy_out(c, ustatus, &status, sizeof(status)))
            return -LX_EFAULT;
        if (rusage && lx_rusage_out(c, rusage, cpu))
            return -LX_EFAULT;
        return qpid;
    }
    if (!any)
        return -LX_ECHILD;
    if (opt & WNOHANG)
        return 0;
    return lx_block(c, LX_BLK_WAIT, 0);
}

int64_t lx_sys_waitid(struct lx_ctx *c, uint64_t idtype, uint64_t id, uint64_t info, uint64_t options,
                      uint64_t rusage)
{
    struct lx_proc *p = c->p;
    uint32_t opt = (uint32_t)options, type = (uint32_t)idtype;
    int32_t sel = (int32_t)id;
    if (opt & ~(WNOHANG | WUNTRACED | WEXITED | WCONTINUED | WNOWAIT | WALL_BITS))
        return -LX_EINVAL;
    if (!(opt & (WEXITED | WUNTRACED | WCONTINUED)))
        return -LX_EINVAL;
    if (type == P_ALL)
        sel = -1;
    else if (type == P_PID && sel > 0)
        ;
    else if (type == P_PGID && sel >= 0)
        sel = sel ? -sel : 0;
    else
        return -LX_EINVAL;
    int any = 0;
    int32_t si[7] = { 0 };                      /* signo, errno, code, (pad), pid, uid, status */
    uint64_t cpu = 0;
    for (struct lx_proc *q = first_selected(p, sel); q; q = sel > 0 ? NULL : q->sibling) {
        if (!selects(p, q, sel))
            continue;
        any = 1;
        si[0] = SIGCHLD;
        si[4] = q->pid;
        cpu = child_cpu(q);
        if (!q->ended && (opt & WUNTRACED) && q->stopped && q->report && q->report != 0xffff) {
            si[2] = LX_CLD_STOPPED;
            si[6] = q->report;
        } else if (!q->ended && (opt & WCONTINUED) && q->report == 0xffff) {
            si[2] = LX_CLD_CONTINUED;
            si[6] = LX_SIGCONT;
        } else if (!q->ended || !(opt & WEXITED)) {
            si[0] = si[4] = 0;
            continue;
        } else {
            si[2] = (q->status & 0x7f) ? CLD_KILLED : CLD_EXITED;
            si[6] = (q->status & 0x7f) ? (q->status & 0x7f) : (q->status >> 8) & 0xff;
        }
        if (!(opt & WNOWAIT)) {
            if (q->ended)
                reap(p, q);
            else
                q->report = 0;
        }
        break;
    }
    if (!any)
        return -LX_ECHILD;
    if (!si[0] && !(opt & WNOHANG)) {
        return lx_block(c, LX_BLK_WAIT, 0);
    }
    if (si[0] && rusage && lx_rusage_out(c, rusage, cpu))
        return -LX_EFAULT;                      /* (nothing found with WNOHANG: rusage untouched) */
    if (info && (lx_copy_out(c, info, si, 12) || lx_copy_out(c, info + 16, &si[4], 12)))
        return -LX_EFAULT;
    return 0;
}

/* ---------------------------------------------------------------- groups and sessions */

/* The process `pid` names for p (0: p itself; a zombie too, as Linux
 * finds it until it is waited for; the tid of a thread names its
 * process, and *thread says so), or NULL. */
struct lx_proc *lx_proc_target(struct lx_proc *p, int64_t upid, int *thread)
{
    int32_t pid = (int32_t)upid;
    *thread = 0;
    if (pid == 0)
        return p;
    struct lx_proc *q = pid > 0 ? lx_proc_of_pid(pid) : NULL;
    if (q)
        return q;
    struct lx_thread *t = pid > 0 ? lx_thread_of_tid(pid) : NULL;
    *thread = t != NULL;
    return t ? t->p : NULL;
}

/* setpgid, in Linux's order: the process (ESRCH; a thread that does not
 * lead its process, EINVAL), a child in another session (EPERM) or one
 * that has called execve (EACCES), a session leader (EPERM), a group
 * that is not in the caller's session (EPERM). */
int64_t lx_sys_setpgid(struct lx_ctx *c, int64_t upid, int64_t upgid)
{
    struct lx_proc *p = c->p;
    int32_t pid = (int32_t)upid ? (int32_t)upid : p->pid, pgid = (int32_t)upgid ? (int32_t)upgid : pid;
    if (pgid < 0)
        return -LX_EINVAL;                      /* (setpgid(-1, 0) too: the group would be -1) */
    int thread;
    struct lx_proc *q = lx_proc_target(p, pid, &thread);
    if (!q)
        return -LX_ESRCH;
    if (thread)
        return -LX_EINVAL;
    if (q != p && q->ppid != p->pid)
        return -LX_ESRCH;
    if (q != p && q->sid != p->sid)
        return -LX_EPERM;
    if (q != p && q->execed)
        return -LX_EACCES;
    if (q->pid == q->sid)
        return -LX_EPERM;                       /* a session leader */
    if (pgid != q->pid) {
        int found = 0;
        for (struct lx_proc *g = lx_procs(); g && !found; g = g->next)
            found = g->pgid == pgid && g->sid == p->sid;    /* zombies count */
        if (!found)
            return -LX_EPERM;
    }
    q->pgid = pgid;
    return 0;
}

int64_t lx_sys_getpgid(struct lx_ctx *c, int64_t pid)
{
    int thread;
    struct lx_proc *q = lx_proc_target(c->p, pid, &thread);
    return q ? q->pgid : -LX_ESRCH;
}

int64_t lx_sys_getsid(struct lx_ctx *c, int64_t pid)
{
    int thread;
    struct lx_proc *q = lx_proc_target(c->p, pid, &thread);
    return q ? q->sid : -LX_ESRCH;
}

int64_t lx_sys_setsid(struct lx_ctx *c)
{
    struct lx_proc *p = c->p;
    for (struct lx_proc *q = lx_procs(); q; q = q->next)
        if (q->pgid == p->pid)                  /* a zombie keeps its group too */
            return -LX_EPERM;                   /* already a group's leader */
    p->pgid = p->sid = p->pid;
    return p->pid;
}

/* ---------------------------------------------------------------- priorities and scheduling */

#define PRIO_PROCESS    0
#define PRIO_PGRP       1
#define PRIO_USER       2
#define NICE_MIN        (-20)
#define NICE_MAX        19

/* Does getpriority's or setpriority's (which, who) name process q, as
 * seen by p? who 0 is p itself, p's group, or root (every process). */
static int prio_names(struct lx_proc *p, struct lx_proc *q, uint32_t which, int32_t who)
{
    if (!q->used)
        return 0;
    switch (which) {
    case PRIO_PROCESS: {
        if (who == 0)
            return q == p;
        struct lx_thread *t = lx_thread_of_tid(who);
        return q->pid == who || (t && t->p == q);
    }
    case PRIO_PGRP:
        return q->pgid == (who ? who : p->pgid);
    default:
        return who == 0;                        /* PRIO_USER: root's processes are all of them */
    }
}

/* getpriority: the highest priority (20 - nice: 1 to 40) among the
 * processes named; ESRCH if none. Nice values are kept per process and
 * inherited; Petrel's scheduler does not look at them. */
int64_t lx_sys_getpriority(struct lx_ctx *c, uint64_t which, uint64_t who)
{
    if ((uint32_t)which > PRIO_USER)
        return -LX_EINVAL;
    int64_t best = -LX_ESRCH;
    for (struct lx_proc *q = lx_procs(); q; q = q->next)
        if (prio_names(c->p, q, (uint32_t)which, (int32_t)who) && 20 - q->nice > best)
            best = 20 - q->nice;
    return best;
}

/* setpriority: the nice value (clamped to -20..19) of every process named
 * (root may lower it as well as raise it); ESRCH if none. */
int64_t lx_sys_setpriority(struct lx_ctx *c, uint64_t which, uint64_t who, uint64_t niceval)
{
    if ((uint32_t)which > PRIO_USER)
        return -LX_EINVAL;
    int32_t nice = (int32_t)niceval;
    nice = nice < NICE_MIN ? NICE_MIN : nice > NICE_MAX ? NICE_MAX : nice;
    int64_t err = -LX_ESRCH;
    for (struct lx_proc *q = lx_procs(); q; q = q->next) {
        if (prio_names(c->p, q, (uint32_t)which, (int32_t)who)) {
            q->nice = nice;
            err = 0;
        }
    }
    return err;
}

/* The thread a scheduling call's pid names (0: the caller), or NULL. */
static struct lx_thread *sched_thread(struct lx_ctx *c, int32_t pid)
{
    return pid == 0 ? c->t : pid > 0 ? lx_thread_of_tid(pid) : NULL;
}

#define CPUMASK_BYTES   8                       /* Linux's cpumask_size() for up to 64 cores */

/* A thread's affinity: the cores it may run on that are online. */
static uint64_t affinity(const struct lx_thread *t)
{
    uint64_t online = lx_cpus_online();
    return t->cpus && (t->cpus & online) ? t->cpus & online : online;
}

/* sched_getaffinity: the thread's cores, as Linux's rules have it: a
 * length of fewer bits than the highest core online, or not a multiple of
 * 8, is EINVAL; the mask's size (8 bytes) is returned. */
int64_t lx_sys_sched_getaffinity(struct lx_ctx *c, int64_t pid, uint64_t len, uint64_t umask)
{
    uint32_t n = (uint32_t)len;                 /* an unsigned int on Linux */
    if (n == 0 || (n & (CPUMASK_BYTES - 1)) || (uint64_t)n * 8 < 64 - (uint64_t)__builtin_clzll(lx_cpus_online()))
        return -LX_EINVAL;
    struct lx_thread *t = sched_thread(c, (int32_t)pid);
    if (!t)
        return -LX_ESRCH;
    uint64_t mask = affinity(t);
    return lx_copy_out(c, umask, &mask, CPUMASK_BYTES) ? -LX_EFAULT : CPUMASK_BYTES;
}

/* sched_setaffinity: the thread may run only on the cores of the mask
 * that are online (none: EINVAL), and moves to one at once if its core
 * is not among them. A length under 8 bytes reads that much, the rest
 * zeros; bits past the first 64 cores are not read. */
int64_t lx_sys_sched_setaffinity(struct lx_ctx *c, int64_t pid, uint64_t len, uint64_t umask)
{
    uint32_t n = (uint32_t)len < CPUMASK_BYTES ? (uint32_t)len : CPUMASK_BYTES;   /* an unsigned int on Linux */
    uint64_t mask = 0;
    if (lx_copy_in(c, &mask, umask, n))
        return -LX_EFAULT;
    struct lx_thread *t = sched_thread(c, (int32_t)pid);
    if (!t)
        return -LX_ESRCH;
    if (!(mask & lx_cpus_online()))
        return -LX_EINVAL;
    if (t->thread && svc_thread_set_cpus(t->thread, mask))
        return -LX_EINVAL;
    t->cpus = mask & lx_cpus_online();
    return 0;
}

/* getcpu: the core the caller runs on, node 0; NULL pointers are skipped. */
int64_t lx_sys_getcpu(struct lx_ctx *c, uint64_t ucpu, uint64_t unode)
{
    uint32_t cpu = lx_thread_core(c->t), node = 0;
    if (ucpu && lx_copy_out(c, ucpu, &cpu, sizeof(cpu)))
        return -LX_EFAULT;
    if (unode && lx_copy_out(c, unode, &node, sizeof(node)))
        return -LX_EFAULT;
    return 0;
}

#define SCHED_OTHER     0
#define SCHED_FIFO      1
#define SCHED_RR        2
#define SCHED_BATCH     3
#define SCHED_IDLE      5
#define SCHED_DEADLINE  6

/* sched_getscheduler: every Linux thread is SCHED_OTHER here. */
int64_t lx_sys_sched_getscheduler(struct lx_ctx *c, int64_t pid)
{
    if ((int32_t)pid < 0)
        return -LX_EINVAL;
    return sched_thread(c, (int32_t)pid) ? SCHED_OTHER : -LX_ESRCH;
}

/* sched_getparam: priority 0, SCHED_OTHER's. */
int64_t lx_sys_sched_getparam(struct lx_ctx *c, int64_t pid, uint64_t param)
{
    if (!param || (int32_t)pid < 0)
        return -LX_EINVAL;
    if (!sched_thread(c, (int32_t)pid))
        return -LX_ESRCH;
    int32_t prio = 0;
    return lx_copy_out(c, param, &prio, sizeof(prio));
}

/* sched_get_priority_max and _min: Linux's ranges for each policy. */
int64_t lx_sched_priority_limit(uint32_t policy, int max)
{
    switch (policy) {
    case SCHED_FIFO:
    case SCHED_RR:
        return max ? 99 : 1;
    case SCHED_OTHER:
    case SCHED_BATCH:
    case SCHED_IDLE:
    case SCHED_DEADLINE:
        return 0;
    default:
        return -LX_EINVAL;
    }
}
