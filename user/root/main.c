/*
 * The root task of the default system: the first program at EL0. For
 * now it greets, reports what the kernel told it, and exits, which
 * powers the machine off.
 */
#include "petrel.h"

int main(const struct petrel_bootinfo *bi)
{
    if (bi->magic != PETREL_BOOTINFO_MAGIC) {
        puts("root: boot information page missing");
        return 1;
    }
    printf("Hello from the Petrel root task: EL0 on a %s, %u cores online, %lu MiB RAM, GICv%u.\n",
           bi->cpu_name, bi->ncpus, (unsigned long)(bi->mem_bytes >> 20), bi->gic_version);
    printf("root: %lu KiB free, tick %u Hz, counter %lu Hz\n",
           (unsigned long)(bi->free_bytes >> 10), bi->tick_hz, (unsigned long)bi->counter_hz);
    return 0;
}
