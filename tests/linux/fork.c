/* fork, wait4 and waitid: the child's copy of memory, wait status
 * encodings, getppid, WNOHANG, ECHILD, vfork, FP registers across fork,
 * orphans, process groups and sessions. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

static int counter = 100;

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

/* Write to an address the compiler cannot see. */
static void poke(uintptr_t a)
{
    volatile int *bad = (volatile int *)a;
    __asm__ volatile("" : "+r"(bad));
    *bad = 1;
}

static void show_status(const char *what, int st)
{
    printf("%s: raw 0x%x exited %d code %d signaled %d sig %d\n", what, st, WIFEXITED(st), WEXITSTATUS(st),
           WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t me = getpid();
    char *heap = malloc(100000);
    memset(heap, 'p', 100000);
    char *anon = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    anon[0] = 'a';

    pid_t pid = fork();
    if (pid == 0) {
        /* The child: its own copy of everything. */
        counter++;
        heap[5] = 'c';
        anon[0] = 'c';
        printf("child: getppid is the parent: %d\n", getppid() == me);
        printf("child: getpid is new: %d\n", getpid() != me);
        printf("child: counter %d heap %c anon %c\n", counter, heap[5], anon[0]);
        _exit(7);
    }
    int st = 0;
    pid_t got = waitpid(pid, &st, 0);           /* (before printing: the child prints meanwhile) */
    printf("fork returned a pid: %d\n", pid > 0);
    printf("waitpid returned the child: %d\n", got == pid);
    show_status("exit 7", st);
    printf("parent: counter %d heap %c anon %c\n", counter, heap[5], anon[0]);

    /* Exit codes are taken modulo 256. */
    if ((pid = fork()) == 0)
        exit(256 + 42);
    waitpid(pid, &st, 0);
    show_status("exit 298", st);

    /* A child killed by a fault. */
    if ((pid = fork()) == 0) {
        poke(8);
        _exit(0);
    }
    waitpid(pid, &st, 0);
    show_status("segv", st);

    /* wait4 with rusage, any child, several children in any order. */
    pid_t kids[3];
    for (int i = 0; i < 3; i++)
        if ((kids[i] = fork()) == 0)
            _exit(10 + i);
    int sum = 0, seen = 0;
    for (int i = 0; i < 3; i++) {
        struct rusage ru;
        pid_t w = wait4(-1, &st, 0, &ru);
        for (int k = 0; k < 3; k++)
            if (w == kids[k])
                seen |= 1 << k;
        sum += WEXITSTATUS(st);
    }
    printf("three children: codes sum %d, each seen %d\n", sum, seen == 7);
    SHOW("wait with no children", wait(&st));
    SHOW("waitpid of a stranger", waitpid(1, &st, 0));
    SHOW("waitpid bad options", waitpid(-1, &st, 0x4000));

    /* WNOHANG while the child runs, then it ends. */
    int p2c[2];
    pipe(p2c);
    if ((pid = fork()) == 0) {
        char b;
        read(p2c[0], &b, 1);
        _exit(3);
    }
    SHOW("WNOHANG while it runs", waitpid(pid, &st, WNOHANG));
    write(p2c[1], "x", 1);
    waitpid(pid, &st, 0);
    show_status("after the pipe", st);
    close(p2c[0]);
    close(p2c[1]);

    /* waitid: the siginfo of an exit, WNOWAIT keeps the zombie. */
    if ((pid = fork()) == 0)
        _exit(5);
    siginfo_t si;
    memset(&si, 0xff, sizeof(si));
    int r = waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
    printf("waitid WNOWAIT: %d signo %d code %d status %d pid %d\n", r, si.si_signo, si.si_code, si.si_status,
           si.si_pid == pid);
    memset(&si, 0xff, sizeof(si));
    r = waitid(P_ALL, 0, &si, WEXITED);
    printf("waitid: %d signo %d code %d status %d pid %d\n", r, si.si_signo, si.si_code, si.si_status,
           si.si_pid == pid);
    SHOW("waitid again", waitid(P_PID, pid, &si, WEXITED));
    SHOW("waitid without WEXITED", waitid(P_ALL, 0, &si, 0));
    if ((pid = fork()) == 0) {
        poke(16);
        _exit(0);
    }
    memset(&si, 0, sizeof(si));
    waitid(P_PID, pid, &si, WEXITED);
    printf("waitid of a fault: code %d status %d\n", si.si_code, si.si_status);

    /* vfork (musl's is a fork on arm64; posix_spawn in exec.c uses CLONE_VFORK). */
    if ((pid = vfork()) == 0)
        _exit(9);
    waitpid(pid, &st, 0);
    show_status("vfork exit 9", st);

    /* CLONE_VFORK without CLONE_VM: a copy, and the parent waits until the
     * child ends, so the child's line always comes first. */
    if ((pid = (pid_t)syscall(SYS_clone, CLONE_VFORK | SIGCHLD, 0, 0, 0, 0)) == 0) {
        printf("CLONE_VFORK child runs first\n");
        _exit(8);
    }
    printf("CLONE_VFORK parent goes on\n");
    waitpid(pid, &st, 0);
    show_status("CLONE_VFORK exit 8", st);

    /* clone's own rules, and a parent tid written. */
    SHOW("clone CLONE_THREAD without CLONE_SIGHAND", syscall(SYS_clone, CLONE_THREAD | CLONE_VM, 0, 0, 0, 0));
    SHOW("clone CLONE_SIGHAND without CLONE_VM", syscall(SYS_clone, CLONE_SIGHAND, 0, 0, 0, 0));
    pid_t ptid = 0;
    if ((pid = (pid_t)syscall(SYS_clone, CLONE_PARENT_SETTID | SIGCHLD, 0, &ptid, 0, 0)) == 0)
        _exit(0);
    printf("CLONE_PARENT_SETTID wrote the child's pid: %d\n", ptid == pid);
    waitpid(pid, &st, 0);
    volatile pid_t ctid = 0;
    if ((pid = (pid_t)syscall(SYS_clone, CLONE_CHILD_SETTID | SIGCHLD, 0, 0, 0, &ctid)) == 0)
        _exit(ctid == getpid() ? 1 : 2);
    waitpid(pid, &st, 0);
    printf("CLONE_CHILD_SETTID: in the child's copy %d, not in the parent's %d\n", WEXITSTATUS(st) == 1, ctid == 0);
    uint64_t tp;
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
    if ((pid = (pid_t)syscall(SYS_clone, CLONE_SETTLS | SIGCHLD, 0, 0, tp + 64, 0)) == 0) {
        uint64_t mine;
        __asm__ volatile("mrs %0, tpidr_el0" : "=r"(mine));
        register long x0 __asm__("x0") = mine == tp + 64 ? 1 : 2;   /* no libc: its TLS moved */
        register long x8 __asm__("x8") = SYS_exit_group;
        __asm__ volatile("svc #0" : : "r"(x0), "r"(x8));
    }
    waitpid(pid, &st, 0);
    printf("CLONE_SETTLS: the child's thread pointer %d\n", WEXITSTATUS(st));
    if ((pid = fork()) == 0)
        _exit(1);
    while (waitid(P_PID, pid, NULL, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    SHOW("wait4 into a bad pointer (the child is reaped anyway)", wait4(pid, (int *)hidden(8), 0, NULL));
    SHOW("then it is gone", waitpid(pid, &st, WNOHANG));

    /* FP/SIMD registers are the parent's in the child. */
    volatile double x = 2.5;
    double y = x * 3;
    if ((pid = fork()) == 0)
        _exit(y == 7.5 ? 1 : 2);
    waitpid(pid, &st, 0);
    printf("child saw the parent's double: %d\n", WEXITSTATUS(st) == 1);

    /* An orphan: its parent exits first, nothing waits for it. */
    if ((pid = fork()) == 0) {
        if (fork() == 0)
            _exit(0);
        _exit(4);
    }
    waitpid(pid, &st, 0);
    show_status("orphan's parent", st);

    /* Process groups and sessions. */
    printf("getpgid(0) == getpgrp(): %d\n", getpgid(0) == getpgrp());
    SHOW("getpgid of nobody", getpgid(99999));
    SHOW("setpgid(0, 0)", setpgid(0, 0));
    printf("now its own group: %d\n", getpgrp() == getpid());
    SHOW("setsid as a group leader", setsid());
    if ((pid = fork()) == 0) {
        printf("child in the parent's group: %d\n", getpgrp() == getppid());
        pid_t s = setsid();
        printf("child setsid: %d, leader of group %d and session %d\n", s == getpid(), getpgrp() == getpid(),
               getsid(0) == getpid());
        _exit(0);
    }
    waitpid(pid, &st, 0);
    int hold[2];
    pipe(hold);
    if ((pid = fork()) == 0) {
        char b;
        close(hold[1]);
        read(hold[0], &b, 1);                   /* until the parent closes its end */
        _exit(0);
    }
    close(hold[0]);
    SHOW("setpgid of a child to its own group", setpgid(pid, pid));
    printf("its group: %d\n", getpgid(pid) == pid);
    SHOW("setpgid to a group that is not there", setpgid(pid, 99999));
    close(hold[1]);
    waitpid(pid, &st, 0);
    show_status("the held child", st);
    return 0;
}
