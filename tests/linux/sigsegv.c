/* Signals from real faults: SIGSEGV (SEGV_MAPERR, SEGV_ACCERR, si_addr),
 * caught and left with siglongjmp, or fixed (mprotect) and returned from;
 * SIGBUS from an unaligned exclusive load, SIGILL from an undefined
 * instruction, SIGTRAP from brk; the ESR record of a fault's frame; a
 * fault with its signal blocked or ignored ends the process. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include "lxtest.h"

static sigjmp_buf env;
static volatile int sig_seen, code_seen, fixes;
static volatile uintptr_t addr_seen, pc_seen;
static volatile uint32_t second_record;
static char *page;

static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static void jump_out(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    sig_seen = sig;
    code_seen = si->si_code;
    addr_seen = (uintptr_t)si->si_addr;
    pc_seen = uc->uc_mcontext.pc;
    uint32_t *rec = (uint32_t *)uc->uc_mcontext.__reserved;
    second_record = *(uint32_t *)((char *)rec + rec[1]);
    siglongjmp(env, 1);
}

static void fix(int sig, siginfo_t *si, void *ucv)
{
    fixes++;
    addr_seen = (uintptr_t)si->si_addr;
    code_seen = si->si_code;
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static void catch(int sig, void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction sa = { 0 };
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
}

static void show(const char *what)
{
    printf("%s: signal %d code %d\n", what, sig_seen, code_seen);
}

static void show_status(const char *what, int st)
{
    printf("%s: signaled %d sig %d\n", what, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    catch(SIGSEGV, jump_out);
    catch(SIGBUS, jump_out);
    catch(SIGILL, jump_out);
    catch(SIGTRAP, jump_out);

    if (sigsetjmp(env, 1) == 0)
        *(volatile int *)hidden(8) = 1;
    show("write to 8");
    printf("si_addr 0x%lx, ESR record next %d\n", (unsigned long)addr_seen, second_record == 0x45535201);

    page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(env, 1) == 0)
        *(volatile char *)hidden((uintptr_t)page + 100) = 1;
    show("write to a read-only page");
    printf("si_addr is the page + 100: %d\n", addr_seen == (uintptr_t)page + 100);

    mprotect(page, 4096, PROT_NONE);
    if (sigsetjmp(env, 1) == 0)
        (void)*(volatile char *)hidden((uintptr_t)page + 8);
    show("read of a PROT_NONE page");
    printf("si_addr is the page + 8: %d\n", addr_seen == (uintptr_t)page + 8);

    munmap(page, 4096);
    if (sigsetjmp(env, 1) == 0)
        (void)*(volatile char *)hidden((uintptr_t)page);
    show("read of an unmapped page");

    /* The mask is back after siglongjmp (sigsetjmp saved it). */
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("SIGSEGV blocked after the jump: %d\n", sigismember(&now, SIGSEGV));

    /* A jump to an unmapped address: si_addr and pc are that address. */
    if (sigsetjmp(env, 1) == 0)
        ((void (*)(void))hidden(0x12340))();
    show("call to 0x12340");
    printf("si_addr 0x%lx pc 0x%lx\n", (unsigned long)addr_seen, (unsigned long)pc_seen);

    /* Fix the page and return: the write happens. */
    page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    catch(SIGSEGV, fix);
    *(volatile char *)hidden((uintptr_t)page + 5) = 'z';
    printf("fixed: %d time(s), code %d, wrote '%c', si_addr is the page + 5: %d\n", fixes, code_seen, page[5],
           addr_seen == (uintptr_t)page + 5);
    catch(SIGSEGV, jump_out);

    /* An unaligned exclusive load. */
    static uint64_t words[4];
    if (sigsetjmp(env, 1) == 0) {
        uint64_t v, a = (uintptr_t)hidden((uintptr_t)words + 1);
        __asm__ volatile("ldxr %0, [%1]" : "=r"(v) : "r"(a) : "memory");
    }
    show("ldxr at an odd address");
    printf("si_addr is it: %d\n", addr_seen == (uintptr_t)words + 1);

    /* An undefined instruction, and brk. */
    static volatile uintptr_t where;
    uintptr_t at;
    if (sigsetjmp(env, 1) == 0) {
        __asm__ volatile("adr %0, 1f\n str %0, [%1]\n1: udf #0" : "=&r"(at) : "r"(&where) : "memory");
    }
    show("udf");
    printf("si_addr is the instruction: %d\n", addr_seen == where);
    if (sigsetjmp(env, 1) == 0) {
        __asm__ volatile("adr %0, 1f\n str %0, [%1]\n1: brk #7" : "=&r"(at) : "r"(&where) : "memory");
    }
    show("brk");
    printf("si_addr is the instruction: %d\n", addr_seen == where);

    /* Blocked or ignored: the fault ends the process anyway. */
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGSEGV);
        sigprocmask(SIG_BLOCK, &set, NULL);
        *(volatile int *)hidden(16) = 1;
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    show_status("fault with SIGSEGV blocked", st);
    pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_IGN);
        *(volatile int *)hidden(16) = 1;
        _exit(0);
    }
    waitpid(pid, &st, 0);
    show_status("fault with SIGSEGV ignored", st);

    /* A handler with no room for its frame: the stack pointer is wild. */
    pid = fork();
    if (pid == 0) {
        __asm__ volatile("mov sp, %0\n str xzr, [sp]" :: "r"(16ul) : "memory");
        _exit(0);
    }
    waitpid(pid, &st, 0);
    show_status("fault with no stack for the frame", st);
    return 0;
}
