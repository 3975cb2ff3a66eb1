/*
 * Guest test program: commits the EL0 fault named by the boot argument
 * fault=KIND, so that a test can check the kernel reports it exactly and
 * survives. Kinds: null-read null-write kernel-read write-text exec-data
 * exec-kernel undef sysreg align-exclusive pc-align svc0 brk.
 */
#include "petrel.h"

static uint64_t data_word = 0xd65f03c0d65f03c0ull;      /* "ret; ret" as data */

static void commit(const char *kind)
{
    if (!strcmp(kind, "null-read"))
        (void)*(volatile uint32_t *)0x10;
    else if (!strcmp(kind, "null-write"))
        *(volatile uint32_t *)0x10 = 1;
    else if (!strcmp(kind, "kernel-read"))
        (void)*(volatile uint64_t *)0xffffff8040080000ull;
    else if (!strcmp(kind, "write-text"))
        *(volatile uint32_t *)(uintptr_t)&commit = 0;
    else if (!strcmp(kind, "exec-data"))
        ((void (*)(void))(uintptr_t)&data_word)();
    else if (!strcmp(kind, "exec-kernel"))
        ((void (*)(void))0xffffff8040080000ull)();
    else if (!strcmp(kind, "undef"))
        __asm__ volatile(".inst 0x00000000");           /* udf #0 */
    else if (!strcmp(kind, "sysreg"))
        __asm__ volatile("mrs x0, sctlr_el1" ::: "x0");
    else if (!strcmp(kind, "align-exclusive")) {
        uint64_t v, addr = (uintptr_t)&data_word + 1;
        __asm__ volatile("ldxr %0, [%1]" : "=r"(v) : "r"(addr) : "memory");
    } else if (!strcmp(kind, "pc-align"))
        ((void (*)(void))((uintptr_t)&commit + 2))();
    else if (!strcmp(kind, "svc0"))
        __asm__ volatile("mov x8, #172; svc #0" ::: "x0", "x8", "memory");   /* Linux getpid */
    else if (!strcmp(kind, "brk"))
        __asm__ volatile("brk #7");
    else {
        printf("fault: unknown kind \"%s\"\n", kind);
        sys_exit(2);
    }
}

int main(const struct petrel_bootinfo *bi)
{
    char kind[32];
    if (!start_arg("fault", kind, sizeof(kind))) {
        puts("fault: no fault= boot argument");
        return 2;
    }
    printf("fault: committing %s\n", kind);
    commit(kind);
    printf("fault: %s did not fault\n", kind);
    return 1;
}
