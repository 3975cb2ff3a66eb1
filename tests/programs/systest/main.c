/*
 * Guest test program: the system call boundary as seen from EL0. Every
 * bad argument must come back as an error code; the program prints TAP.
 */
#include "petrel.h"

#define SVC_RAW(n) ({ register int64_t x0 __asm__("x0") = 0; \
    __asm__ volatile("svc #" #n : "+r"(x0) :: "memory"); x0; })

int main(const struct petrel_bootinfo *bi)
{
    tap_ok(bi->magic == PETREL_BOOTINFO_MAGIC && bi->version == 1, "bootinfo: magic and version");
    tap_ok(bi->ncpus >= 1 && bi->ncpus <= 8, "bootinfo: %u cores online", bi->ncpus);
    tap_ok(bi->mem_bytes >= (64ull << 20) && bi->free_bytes < bi->mem_bytes, "bootinfo: memory sizes");
    tap_ok(bi->gic_version == 2 || bi->gic_version == 3, "bootinfo: GIC version %u", bi->gic_version);

    tap_ok(sys_debug_write("", 0) == 0, "debug_write: empty write");
    tap_ok(sys_debug_write("systest: console\n", 17) == 17, "debug_write: returns the length");
    tap_ok(sys_debug_write(NULL, 8) == -E_FAULT, "debug_write: NULL -> E_FAULT");
    tap_ok(sys_debug_write((void *)0xffffff8040080000ull, 8) == -E_FAULT,
           "debug_write: kernel address -> E_FAULT");
    tap_ok(sys_debug_write((void *)(PETREL_USER_STACK_TOP - 8), 64) == -E_FAULT,
           "debug_write: buffer running off the stack top -> E_FAULT");
    tap_ok(sys_debug_write((void *)~0ull, 16) == -E_FAULT, "debug_write: address wrap -> E_FAULT");
    tap_ok(sys_debug_write("x", 1ull << 40) == -E_INVAL, "debug_write: huge length -> E_INVAL");

    tap_ok(sys_null() == 0, "null: returns 0");
    tap_ok(sys_yield() == 0, "yield: returns 0");
    tap_ok(SVC_RAW(999) == -E_NOSYS, "svc #999 -> E_NOSYS");
    tap_ok(SVC_RAW(65535) == -E_NOSYS, "svc #65535 -> E_NOSYS");

    uint64_t t0, t1;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t0));
    for (volatile int i = 0; i < 10000; i++)
        ;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t1));
    tap_ok(t1 > t0, "counter: readable at EL0 and advancing");
    tap_plan();
    return 0;
}
