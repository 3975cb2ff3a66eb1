/* rt_sigaction and handlers: SA_SIGINFO's siginfo and ucontext (the
 * AArch64 frame's records), the old action, SA_RESETHAND, SA_NODEFER,
 * sa_mask, SIG_IGN and default actions, FP/SIMD registers kept across a
 * handler, the errors. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include "lxtest.h"

struct ksigaction { void *handler; unsigned long flags; void *restorer; uint64_t mask; };

static volatile int hits, depth, max_depth;
static volatile uint64_t mask_in_handler;
static siginfo_t last_info;
static uint32_t rec_magic, rec_size, next_magic;
static int sp_aligned, uc_mask_has_usr1, lr_is_restorer;
static uintptr_t restorer;

static void on_info(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    hits++;
    last_info = *si;
    uint32_t *rec = (uint32_t *)uc->uc_mcontext.__reserved;
    rec_magic = rec[0];
    rec_size = rec[1];
    next_magic = *(uint32_t *)((char *)rec + rec_size);
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    sp_aligned = ((uintptr_t)si & 15) == 0 && (sp & 15) == 0;
    uc_mask_has_usr1 = sigismember(&uc->uc_sigmask, SIGUSR1);
    lr_is_restorer = (uintptr_t)__builtin_return_address(0) == restorer;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    mask_in_handler = (sigismember(&now, SIGUSR1) ? 1 : 0) | (sigismember(&now, SIGUSR2) ? 2 : 0) |
                      (sigismember(&now, SIGHUP) ? 4 : 0);
}

static volatile int calls;

static void nested(int sig)
{
    depth++;
    calls++;
    if (depth > max_depth)
        max_depth = depth;
    if (calls < 3)
        raise(sig);
    depth--;
}

static void clobber_fp(int sig)
{
    hits++;
    __asm__ volatile("movi v16.2d, #0\n movi v8.2d, #0\n fmov d0, xzr" ::: "v0", "v8", "v16");
}

static void show_status(const char *what, int st)
{
    printf("%s: exited %d code %d signaled %d sig %d\n", what, WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : 0,
           WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = { 0 }, old;
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO;
    sigaddset(&sa.sa_mask, SIGHUP);
    SHOW("sigaction SIGUSR1", sigaction(SIGUSR1, &sa, NULL));
    struct ksigaction k;
    SHOW("raw old action of SIGUSR1", syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8));
    restorer = (uintptr_t)k.restorer;
    printf("flags 0x%lx handler is ours %d mask 0x%llx\n", k.flags, k.handler == (void *)on_info,
           (unsigned long long)k.mask);

    SHOW("raise SIGUSR1", raise(SIGUSR1));
    printf("hits %d signo %d code %d pid is mine %d uid %d\n", hits, last_info.si_signo, last_info.si_code,
           last_info.si_pid == getpid(), last_info.si_uid);
    printf("records: fpsimd magic 0x%x size %u, then 0x%x\n", rec_magic, rec_size, next_magic);
    printf("aligned %d, uc_sigmask had SIGUSR1 %d, lr is the restorer %d\n", sp_aligned, uc_mask_has_usr1,
           lr_is_restorer);
    printf("blocked in the handler: usr1 %d usr2 %d hup %d\n", (int)(mask_in_handler & 1),
           (int)(mask_in_handler >> 1 & 1), (int)(mask_in_handler >> 2 & 1));
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("after: usr1 blocked %d hup blocked %d\n", sigismember(&now, SIGUSR1), sigismember(&now, SIGHUP));

    SHOW("kill self SIGUSR1", kill(getpid(), SIGUSR1));
    printf("hits %d code %d\n", hits, last_info.si_code);
    SHOW("tgkill self SIGUSR1", syscall(SYS_tgkill, getpid(), getpid(), SIGUSR1));
    printf("hits %d code %d\n", hits, last_info.si_code);

    /* The old action comes back, flags as set. */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    SHOW("ignore SIGUSR1", sigaction(SIGUSR1, &sa, &old));
    printf("old: siginfo %d handler is ours %d\n", (old.sa_flags & SA_SIGINFO) != 0, old.sa_sigaction == on_info);
    SHOW("raise ignored SIGUSR1", raise(SIGUSR1));
    printf("hits %d\n", hits);

    /* SA_NODEFER: the handler may run inside itself. */
    sa.sa_handler = nested;
    sa.sa_flags = SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    printf("SA_NODEFER depth %d\n", max_depth);
    max_depth = calls = 0;
    sa.sa_flags = 0;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    printf("without it, depth %d calls %d (the nested one waits until it returns)\n", max_depth, calls);

    /* SA_RESETHAND: once, then the default action ends the child. */
    pid_t pid = fork();
    if (pid == 0) {
        sa.sa_handler = clobber_fp;
        sa.sa_flags = SA_RESETHAND;
        sigaction(SIGTERM, &sa, NULL);
        raise(SIGTERM);
        printf("child: handled once, hits %d\n", hits);
        sigaction(SIGTERM, NULL, &old);
        printf("child: handler now SIG_DFL %d\n", old.sa_handler == SIG_DFL);
        raise(SIGTERM);
        printf("child: not reached\n");
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    show_status("SA_RESETHAND child", st);

    /* Default actions: terminate, ignore. */
    int sigs[] = { SIGTERM, SIGHUP, SIGUSR2, SIGALRM, SIGQUIT, SIGABRT, SIGCHLD, SIGWINCH, SIGURG, SIGCONT };
    for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        pid = fork();
        if (pid == 0) {
            raise(sigs[i]);
            _exit(42);
        }
        waitpid(pid, &st, 0);
        char what[40];
        snprintf(what, sizeof(what), "default action of %d", sigs[i]);
        show_status(what, st);
    }

    /* FP/SIMD registers survive a handler that clobbers them. */
    sa.sa_handler = clobber_fp;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    uint64_t v16 = 0, v8 = 0;
    long r;
    register long x0 __asm__("x0") = getpid();
    register long x1 __asm__("x1") = SIGUSR1;
    register long x8 __asm__("x8") = SYS_kill;
    __asm__ volatile("movz x9, #0x1234\n dup v16.2d, x9\n movz x9, #0x5678\n dup v8.2d, x9\n"
                     "svc #0\n umov %1, v16.d[1]\n umov %2, v8.d[0]"
                     : "+r"(x0), "=r"(v16), "=r"(v8) : "r"(x1), "r"(x8) : "x9", "v8", "v16", "memory");
    r = x0;
    printf("kill in asm: %ld, hits %d, v16 0x%llx v8 0x%llx\n", r, hits, (unsigned long long)v16,
           (unsigned long long)v8);

    /* Errors. */
    SHOW("rt_sigaction with sigsetsize 4", syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 4));
    SHOW("sigaction SIGKILL", sigaction(SIGKILL, &sa, NULL));
    SHOW("sigaction SIGSTOP", sigaction(SIGSTOP, &sa, NULL));
    SHOW("query SIGKILL", syscall(SYS_rt_sigaction, SIGKILL, NULL, &k, 8));
    SHOW("rt_sigaction 0", syscall(SYS_rt_sigaction, 0, NULL, &k, 8));
    SHOW("rt_sigaction 65", syscall(SYS_rt_sigaction, 65, NULL, &k, 8));
    SHOW("rt_sigaction 64", syscall(SYS_rt_sigaction, 64, NULL, &k, 8));
    SHOW("rt_sigaction act at 8", syscall(SYS_rt_sigaction, SIGUSR1, (void *)8, NULL, 8));
    SHOW("rt_sigaction oact at 8", syscall(SYS_rt_sigaction, SIGUSR1, NULL, (void *)8, 8));
    SHOW("rt_sigaction SIGKILL act at 8", syscall(SYS_rt_sigaction, SIGKILL, (void *)8, NULL, 8));
    k.flags = 0xffffffffffffffffull;
    k.handler = SIG_DFL;
    SHOW("rt_sigaction with every flag", syscall(SYS_rt_sigaction, SIGUSR2, &k, NULL, 8));
    SHOW("read back", syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, 8));
    printf("flags kept 0x%lx\n", k.flags);

    /* Without SA_RESTORER (glibc's way): the handler returns through the
     * system's own trampoline (Linux's vDSO, Petrel's sigreturn address). */
    struct ksigaction plain = { (void *)on_info, SA_SIGINFO, NULL, 0 };
    SHOW("rt_sigaction without SA_RESTORER", syscall(SYS_rt_sigaction, SIGUSR2, &plain, NULL, 8));
    int before = hits;
    SHOW("kill self SIGUSR2", syscall(SYS_kill, getpid(), SIGUSR2));
    printf("handled %d, came back, records 0x%x\n", hits - before, rec_magic);
    return 0;
}
