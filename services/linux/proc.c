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
    lx_sig_fork(t, c->t);
    /* Both words are in the shared memory: written before the thread runs, as Linux does. */
    if ((flags & CLONE_CHILD_SETTID) && lx_copy_out(c, ctid, &tid, sizeof(tid)))
        err = -LX_EFAULT;
    if (!err && (flags & CLONE_PARENT_SETTID) && lx_copy_out(c, ptid, &tid, sizeof(tid)))
        err = -LX_EFAULT;
    const uint64_t *mr = c->call->mr;
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
    if (p->utcbs == ~0u)
        return -LX_EAGAIN;
    int slot = __builtin_ctz(~p->utcbs);
    svc_space_kill(child->space);
    svc_handle_release(child->space);
    child->space = p->space;
    child->vm_of = p;
    child->utcbs = 1u << slot;
    ct->utcb = slot;
    p->utcbs |= 1u << slot;
    return 0;
}

int64_t lx_sys_clone(struct lx_ctx *c, uint64_t flags, uint64_t sp, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
    struct lx_proc *p = c->p;
    if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
        return -LX_EINVAL;                      /* Linux's own rules first */
    if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
        return -LX_EINVAL;
    if ((flags & CLONE_THREAD) && (flags & CLONE_THREAD_NEEDS) == CLONE_THREAD_NEEDS &&
        !(flags & ~(uint64_t)CLONE_THREAD_OK))
        return clone_thread(c, flags, sp, ptid, tls, ctid);
    if ((flags & ~(uint64_t)CLONE_PROCESS_OK) || ((flags & CLONE_VM) && !(flags & CLONE_VFORK)) || p->vm_of) {
        static int said;
        if (!said++)
            lx_log("pid %d (%s): clone flags 0x%lx: only processes and whole threads are supported", p->pid,
                   p->comm, (unsigned long)flags);
        return -LX_ENOSYS;
    }
    int err;
    struct lx_proc *child = lx_proc_new(&err);
    if (!child)
        return err;
    child->ppid = p->pid;
    child->pgid = p->pgid;
    child->sid = p->sid;
    child->cwd = p->cwd;
    memcpy(child->comm, p->comm, sizeof(child->comm));
    struct lx_thread *ct = lx_main_thread(child);
    ct->clear_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    lx_sig_fork(ct, c->t);
    for (int fd = 0; fd < LX_FDS; fd++) {
        if (p->fds[fd]) {
            lx_file_get(p->fds[fd]);
            child->fds[fd] = p->fds[fd];
            child->cloexec[fd] = p->cloexec[fd];
        }
    }
    if (flags & CLONE_VM)
        err = borrow_space(p, child);
    else
        err = lx_vmas_fork(p, child);
    int pid = child->pid;
    if (!err && (flags & CLONE_CHILD_SETTID))          /* in the child's memory; a bad address is ignored */
        lx_vma_poke(child->vm_of ? p : child, ctid, &pid, sizeof(pid));
    if (!err && (flags & CLONE_PARENT_SETTID))
        lx_copy_out(c, ptid, &pid, sizeof(pid));
    const uint64_t *mr = c->call->mr;
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
static char exec_strings[LX_ARG_MAX];
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
        int64_t len = lx_copy_str(c, exec_strings + *used, s, sizeof(exec_strings) - *used);
        if (len < 0)
            return len == -LX_ENAMETOOLONG ? -LX_E2BIG : (int)len;
        exec_vec[(*n)++] = exec_strings + *used;
        *used += (uint64_t)len + 1;
    }
    return 0;
}

/* A `#!` script: put the interpreter (and its one argument) before the
 * script's path in argv; the interpreter's node, or a negated errno. */
static int32_t script(int32_t node, int *argc)
{
    struct lx_node *n = lx_node(node);
    const char *text = (const char *)lx_node_data(n);
    uint64_t len = n->size < 256 ? n->size : 256, i = 2, end;
    while (i < len && (text[i] == ' ' || text[i] == '\t'))
        i++;
    for (end = i; end < len && text[end] != '\n' && text[end] != ' ' && text[end] != '\t'; end++)
        ;
    if (end == i || end == len)
        return -LX_ENOEXEC;
    uint64_t arg = end, arg_end;
    while (arg < len && (text[arg] == ' ' || text[arg] == '\t'))
        arg++;
    for (arg_end = arg; arg_end < len && text[arg_end] != '\n'; arg_end++)
        ;
    while (arg_end > arg && (text[arg_end - 1] == ' ' || text[arg_end - 1] == '\t'))
        arg_end--;
    int extra = 1 + (arg_end > arg);
    if (*argc + extra > EXEC_ARGS)
        return -LX_E2BIG;
    /* The strings go into exec_path's tail: interpreter, then its argument. */
    uint64_t plen = strlen(exec_path) + 1, need = (end - i) + 1 + (arg_end - arg) + 1;
    if (plen + need > sizeof(exec_path))
        return -LX_ENAMETOOLONG;
    char *interp = exec_path + plen, *iarg = interp + (end - i) + 1;
    memcpy(interp, text + i, end - i);
    interp[end - i] = 0;
    memcpy(iarg, text + arg, arg_end - arg);
    iarg[arg_end - arg] = 0;
    memmove(&exec_vec[extra + 1], &exec_vec[1], sizeof(exec_vec[0]) * (size_t)(*argc > 0 ? *argc - 1 : 0));
    exec_vec[0] = interp;
    if (extra == 2)
        exec_vec[1] = iarg;
    exec_vec[extra] = exec_path;
    *argc = (*argc > 0 ? *argc : 1) + extra;
    int32_t in = lx_lookup(LX_ROOT, interp, 1);
    if (in < 0)
        return in;
    struct lx_node *inode = lx_node(in);
    if ((inode->mode & LX_S_IFMT) != LX_S_IFREG || !(inode->mode & 0111))
        return -LX_EACCES;
    return in;
}

int64_t lx_sys_execve(struct lx_ctx *c, uint64_t upath, uint64_t uargv, uint64_t uenvp)
{
    struct lx_proc *p = c->p;
    int64_t len = lx_copy_str(c, exec_path, upath, sizeof(exec_path));
    if (len < 0)
        return len;
    if (len == 0)
        return -LX_ENOENT;
    /* The strings first, then the file, in Linux's order: argv to
     * exec_vec[0..argc), envp after it, then moved to envp[]. */
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
    int32_t node = lx_lookup(exec_path[0] == '/' ? LX_ROOT : p->cwd, exec_path, 1);
    if (node < 0)
        return node;
    struct lx_node *n = lx_node(node);
    if ((n->mode & LX_S_IFMT) != LX_S_IFREG || !(n->mode & 0111))
        return -LX_EACCES;
    if (n->size >= 2 && !memcmp(lx_node_data(n), "#!", 2)) {
        node = script(node, &argc);
        if (node < 0)
            return node;
    }
    memset(&image, 0, sizeof(image));
    image.space = lx_space_new();
    if (!image.space)
        return -LX_ENOMEM;
    uint64_t pc, sp;
    err = lx_load(&image, node, exec_path, exec_vec, argc, envp, nenv, &pc, &sp);
    if (err) {
        lx_vmas_drop(&image);
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
    t->tid = p->pid;
    if (p->vm_of) {                             /* a vfork child: the lender's space stays, its page goes back */
        svc_thread_kill(t->thread);
        p->vm_of->utcbs &= ~(1u << t->utcb);
        p->vm_of = NULL;
    } else {
        lx_end_borrowers(p);
        svc_space_kill(p->space);
        svc_handle_release(p->space);
    }
    svc_handle_release(t->thread);
    t->thread = 0;
    lx_vmas_drop(p);
    p->space = image.space;
    memcpy(p->vmas, image.vmas, sizeof(p->vmas));
    p->nvmas = image.nvmas;
    p->brk_start = image.brk_start;
    p->brk = image.brk;
    p->heap_obj = NULL;
    p->heap_va = p->heap_end = p->heap_top = 0;
    t->clear_tid = 0;
    lx_sig_exec(t);
    for (int fd = 0; fd < LX_FDS; fd++) {
        if (p->fds[fd] && p->cloexec[fd]) {
            lx_file_put(p->fds[fd]);
            p->fds[fd] = NULL;
        }
        p->cloexec[fd] = 0;
    }
    const char *base = exec_path;
    for (const char *s = exec_path; *s; s++)
        if (*s == '/' && s[1])
            base = s + 1;
    memset(p->comm, 0, sizeof(p->comm));
    memcpy(p->comm, base, strnlen(base, sizeof(p->comm) - 1));
    lx_wake_all(LX_BLK_VFORK, p->pid);          /* a vfork parent goes on */
    if (lx_thread_start(t, 0, pc, sp, 0, NULL)) {
        lx_log("pid %d (%s): no thread for the new program", p->pid, p->comm);
        lx_proc_end(p, 9);
    }
    return LX_NORETURN;
}

/* ---------------------------------------------------------------- waiting */

/* Is q a child of p that wait's selector `pid` names? */
static int selects(struct lx_proc *p, struct lx_proc *q, int32_t pid)
{
    if (!q->used || q->ppid != p->pid)
        return 0;
    if (pid > 0)
        return q->pid == pid;
    if (pid == -1)
        return 1;
    return q->pgid == (pid == 0 ? p->pgid : -pid);
}

int64_t lx_sys_wait4(struct lx_ctx *c, int64_t upid, uint64_t ustatus, uint64_t options, uint64_t rusage)
{
    struct lx_proc *p = c->p, *procs = lx_procs();
    int32_t pid = (int32_t)upid;
    uint32_t opt = (uint32_t)options;
    if (opt & ~(WNOHANG | WUNTRACED | WCONTINUED | WALL_BITS))
        return -LX_EINVAL;
    if (pid == INT32_MIN)
        return -LX_ESRCH;
    int any = 0;
    for (int i = 0; i < LX_PROCS; i++) {
        struct lx_proc *q = &procs[i];
        if (!selects(p, q, pid))
            continue;
        any = 1;
        int32_t status = q->status, qpid = q->pid;
        if (!q->ended && (opt & WUNTRACED) && q->stopped && q->report && q->report != 0xffff) {
            status = q->report << 8 | 0x7f;     /* stopped by that signal: reported once */
            q->report = 0;
        } else if (!q->ended && (opt & WCONTINUED) && q->report == 0xffff) {
            status = 0xffff;
            q->report = 0;
        } else if (!q->ended) {
            continue;
        } else {
            q->used = 0;                        /* reaped */
        }
        if (ustatus && lx_copy_out(c, ustatus, &status, sizeof(status)))
            return -LX_EFAULT;
        static const uint8_t zero_rusage[144];
        if (rusage && lx_copy_out(c, rusage, zero_rusage, sizeof(zero_rusage)))
            return -LX_EFAULT;
        return qpid;
    }
    if (!any)
        return -LX_ECHILD;
    if (opt & WNOHANG)
        return 0;
    return lx_block(c, LX_BLK_WAIT, 0);
}

int64_t lx_sys_waitid(struct lx_ctx *c, uint64_t idtype, uint64_t id, uint64_t info, uint64_t options)
{
    struct lx_proc *p = c->p, *procs = lx_procs();
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
    for (int i = 0; i < LX_PROCS; i++) {
        struct lx_proc *q = &procs[i];
        if (!selects(p, q, sel))
            continue;
        any = 1;
        si[0] = SIGCHLD;
        si[4] = q->pid;
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
                q->used = 0;
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
    if (info && (lx_copy_out(c, info, si, 12) || lx_copy_out(c, info + 16, &si[4], 12)))
        return -LX_EFAULT;
    return 0;
}

/* ---------------------------------------------------------------- groups and sessions */

/* The process `pid` names for p (0: p itself), or NULL. */
static struct lx_proc *target(struct lx_proc *p, int64_t upid)
{
    int32_t pid = (int32_t)upid;
    if (pid == 0)
        return p;
    struct lx_proc *q = pid > 0 ? lx_proc_of_pid(pid) : NULL;
    return q && !q->ended ? q : NULL;
}

int64_t lx_sys_setpgid(struct lx_ctx *c, int64_t upid, int64_t upgid)
{
    struct lx_proc *p = c->p, *procs = lx_procs();
    int32_t pgid = (int32_t)upgid;
    if (pgid < 0)
        return -LX_EINVAL;
    struct lx_proc *q = target(p, upid);
    if (!q || (q != p && q->ppid != p->pid))
        return -LX_ESRCH;
    if (q->pid == q->sid || q->sid != p->sid)
        return -LX_EPERM;                       /* a session leader, or a child in another session */
    if (pgid == 0)
        pgid = q->pid;
    if (pgid != q->pid) {
        int found = 0;
        for (int i = 0; i < LX_PROCS && !found; i++)
            found = procs[i].used && procs[i].pgid == pgid && procs[i].sid == p->sid;   /* zombies count */
        if (!found)
            return -LX_EPERM;
    }
    q->pgid = pgid;
    return 0;
}

int64_t lx_sys_getpgid(struct lx_ctx *c, int64_t pid)
{
    struct lx_proc *q = target(c->p, pid);
    return q ? q->pgid : -LX_ESRCH;
}

int64_t lx_sys_getsid(struct lx_ctx *c, int64_t pid)
{
    struct lx_proc *q = target(c->p, pid);
    return q ? q->sid : -LX_ESRCH;
}

int64_t lx_sys_setsid(struct lx_ctx *c)
{
    struct lx_proc *p = c->p, *procs = lx_procs();
    for (int i = 0; i < LX_PROCS; i++)
        if (procs[i].used && procs[i].pgid == p->pid)       /* a zombie keeps its group too */
            return -LX_EPERM;                   /* already a group's leader */
    p->pgid = p->sid = p->pid;
    return p->pid;
}
