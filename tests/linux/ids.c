/* The user and group ids of one user, root: every get call says 0, every
 * set call that keeps root (0, or -1 for unchanged) succeeds, the errors
 * are Linux's. (Becoming another user is not compared: Petrel has no other
 * user and refuses it with EPERM.) Raw system calls throughout: musl's
 * set*id wrappers act on every thread and abort on a partial failure. */
#include <stdint.h>
#include <sys/syscall.h>
#include "lxtest.h"

/* An address the compiler cannot see through. */
static void *hidden(uintptr_t a)
{
    void *p = (void *)a;
    __asm__ volatile("" : "+r"(p));
    return p;
}

static void show_ids(const char *when)
{
    unsigned r = 7, e = 7, s = 7, gr = 7, ge = 7, gs = 7;
    syscall(SYS_getresuid, &r, &e, &s);
    syscall(SYS_getresgid, &gr, &ge, &gs);
    printf("%s: uid %ld euid %ld gid %ld egid %ld, resuid %u %u %u, resgid %u %u %u\n", when, syscall(SYS_getuid),
           syscall(SYS_geteuid), syscall(SYS_getgid), syscall(SYS_getegid), r, e, s, gr, ge, gs);
}

int main(void)
{
    show_ids("at first");
    unsigned r = 7, e = 7, s = 7;
    SHOW("getresuid", syscall(SYS_getresuid, &r, &e, &s));
    SHOW("getresuid, the first pointer bad", syscall(SYS_getresuid, hidden(8), &e, &s));
    r = e = s = 7;
    SHOW("getresuid, the second pointer bad", syscall(SYS_getresuid, &r, hidden(8), &s));
    printf("the first was written, the third not: %u %u\n", r, s);
    r = e = s = 7;
    SHOW("getresgid, the third pointer bad", syscall(SYS_getresgid, &r, &e, hidden(8)));
    printf("the first two were written: %u %u\n", r, e);
    SHOW("getresuid with NULL", syscall(SYS_getresuid, NULL, NULL, NULL));

    SHOW("setuid(0)", syscall(SYS_setuid, 0));
    SHOW("setgid(0)", syscall(SYS_setgid, 0));
    SHOW("setuid(-1)", syscall(SYS_setuid, -1));
    SHOW("setgid(-1)", syscall(SYS_setgid, -1));
    SHOW("setuid(1 << 32): the low 32 bits", syscall(SYS_setuid, 1ul << 32));
    SHOW("setreuid(-1, -1)", syscall(SYS_setreuid, -1, -1));
    SHOW("setreuid(0, 0)", syscall(SYS_setreuid, 0, 0));
    SHOW("setreuid(0, -1)", syscall(SYS_setreuid, 0, -1));
    SHOW("setregid(-1, 0)", syscall(SYS_setregid, -1, 0));
    SHOW("setresuid(-1, -1, -1)", syscall(SYS_setresuid, -1, -1, -1));
    SHOW("setresuid(0, 0, 0)", syscall(SYS_setresuid, 0, 0, 0));
    SHOW("setresgid(0, -1, 0)", syscall(SYS_setresgid, 0, -1, 0));

    gid_t list[8] = { 7, 7 };
    SHOW("getgroups(0, NULL)", syscall(SYS_getgroups, 0, NULL));
    SHOW("getgroups(8, list)", syscall(SYS_getgroups, 8, list));
    printf("nothing was written: %d\n", list[0] == 7);
    SHOW("getgroups(-1)", syscall(SYS_getgroups, -1, list));
    SHOW("getgroups(8, bad pointer) with no groups", syscall(SYS_getgroups, 8, hidden(8)));
    SHOW("setgroups(0, NULL)", syscall(SYS_setgroups, 0, NULL));
    SHOW("setgroups(65537)", syscall(SYS_setgroups, 65537, list));
    SHOW("setgroups(-1)", syscall(SYS_setgroups, -1, list));
    SHOW("setgroups(1, bad pointer)", syscall(SYS_setgroups, 1, hidden(8)));
    list[0] = (gid_t)-1;
    SHOW("setgroups(1, {-1})", syscall(SYS_setgroups, 1, list));
    show_ids("at the end");
    return 0;
}
