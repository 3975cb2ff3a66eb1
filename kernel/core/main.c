/*
 * kernel_main: the boot core's path from the boot stub to the root task.
 *
 *   device tree -> RAM and reservations -> final kernel map -> console
 *   -> frame allocator -> interrupt controller and tick -> boot image
 *   -> secondary cores -> (self tests) -> root task at EL0
 *
 * Everything the kernel learns about the machine comes from the device
 * tree QEMU passes in x0; the boot stub hard-codes only its own load
 * address.
 */
#include "kernel.h"
#include "arch.h"
#include "cpu.h"
#include "trace.h"
#include "fdt.h"
#include "memory.h"
#include "irq.h"
#include "timer.h"
#include "bootimage.h"
#include "thread.h"
#include "ktest.h"
#include "platform.h"
#include "sched.h"
#include "k2.h"

#define PETREL_VERSION "0.1.0"

struct fdt boot_fdt;
extern uint64_t boot_entry_el;      /* recorded by the boot stub */
paddr_t boot_dtb_pa;

/* Locate the boot image through /chosen/linux,initrd-{start,end}. */
static int open_boot_image(void)
{
    int chosen = fdt_path(&boot_fdt, "/chosen");
    uint32_t l1, l2;
    const void *s = chosen >= 0 ? fdt_prop(&boot_fdt, chosen, "linux,initrd-start", &l1) : NULL;
    const void *e = chosen >= 0 ? fdt_prop(&boot_fdt, chosen, "linux,initrd-end", &l2) : NULL;
    if (!s || !e || (l1 != 4 && l1 != 8) || (l2 != 4 && l2 != 8))
        return -E_NOENT;
    paddr_t start = fdt_read_cells(s, l1 / 4), end = fdt_read_cells(e, l2 / 4);
    if (end <= start)
        return -E_BADFORMAT;
    return bootimage_open(start, end - start);
}

/* Print what the kernel found: cores, memory, GIC, timer, console. */
static void banner(void)
{
    const struct mem_range *ram;
    unsigned nram = mem_ram_ranges(&ram);
    const struct irqchip *gic = irq_chip();
    kprintf("\nPetrel " PETREL_VERSION " microkernel (aarch64, qemu-virt)\n");
    kprintf("cpu: %s, %u cores\n", arch_cpu_name(), ncpus_present);
    kprintf("memory: %lu MiB", mem_total() >> 20);
    for (unsigned i = 0; i < nram; i++)
        kprintf(" [0x%lx-0x%lx]", ram[i].base, ram[i].base + ram[i].size - 1);
    kprintf("\n");
    kprintf("gic: %s (distributor 0x%lx, %s 0x%lx)\n", gic->name, gic->dist_base,
            gic->version == 3 ? "redistributors" : "cpu interface", gic->cpu_base);
    kprintf("timer: %lu kHz counter, %u Hz tick on irq %u\n",
            arch_counter_freq() / 1000, timer_hz(), timer_irq());
    kprintf("console: pl011 at 0x%lx\n", platform.uart_pa);
    kprintf("boot: entered at EL%lu, running at EL1, kernel at 0x%lx\n", boot_entry_el,
            virt_to_phys(__kernel_start));
    if (cmdline()[0])
        kprintf("bootargs: %s\n", cmdline());
}

/* The boot core's first steps, the same in both K2 kernels: per-core
 * pointer, vectors, and the device tree, validated before anything reads
 * it, with the boot arguments. */
void boot_cpu_and_tree(paddr_t dtb_pa)
{
    arch_set_this_cpu(&cpus[0]);
    cpus[0].kstack_top = arch_kstack_top(0);    /* the stack overflow check needs it */
    arch_trap_init();
    arch_zero_init();

    const void *dtb = phys_to_virt(dtb_pa);
    uint32_t dtb_size = fdt_header_size(dtb);
    if (dtb_size == 0 || dtb_size > MiB(2) || fdt_open(&boot_fdt, dtb, dtb_size) != 0)
        arch_system_fail(2);            /* no console yet: nothing to print to */
    boot_dtb_pa = dtb_pa;
    int chosen = fdt_path(&boot_fdt, "/chosen");
    uint32_t len;
    const char *args = chosen >= 0 ? fdt_prop(&boot_fdt, chosen, "bootargs", &len) : NULL;
    cmdline_init(args && len && !args[len - 1] ? args : "");
}

NORETURN void kernel_main(paddr_t dtb_pa);

NORETURN void kernel_main(paddr_t dtb_pa)
{
    if (CONFIG_K2_SHADOW)
        k2_shadow_main(dtb_pa);         /* K2's shadow kernel boots its own way */
    boot_cpu_and_tree(dtb_pa);
    if (mem_discover(&boot_fdt, dtb_pa) != 0)
        arch_system_fail(3);
    k2_layout();                        /* (with `k2`: the console's lock is a shared one) */
    arch_mmu_init_kernel(0, 0);
    if (platform_console_init(&boot_fdt, true) != 0)
        arch_system_fail(4);
    if (smp_discover(&boot_fdt) != 0)
        panic("no cores in /cpus");
    cpus[0].index = 0;

    int err = frame_init();
    if (err)
        panic("frame allocator: %s", error_name(err));
    k2_mem_boot();                      /* K2: main's first blocks of the balloon pool */
    if ((err = irq_init(&boot_fdt, true)) != 0)
        panic("no supported interrupt controller: %s", error_name(err));
    if ((err = timer_init(&boot_fdt)) != 0)
        panic("no architectural timer: %s", error_name(err));
    if ((err = arch_firmware_init(&boot_fdt)) != 0)
        kprintf("psci: not found; secondary cores stay off\n");
    banner();
    k2_cores();                         /* K2: the last core is the shadow kernel's */
    trace_init();

    irq_cpu_init();
    timer_cpu_init();
    smp_init_boot_cpu();
    arch_irq_enable();

    kprintf("memory: %lu KiB free of %lu KiB managed\n",
            frame_free_pages() * 4, frame_managed_pages() * 4);
    if ((err = open_boot_image()) != 0)
        panic("no usable boot image (initrd): %s", error_name(err));
    kprintf("bootimage: %u files, %lu KiB\n", bootimage_count(), bootimage_size() / 1024);

    unsigned online = smp_boot_secondaries();
    kprintf("smp: %u of %u cores online\n", online, ncpus_present);
    k2_start();

    if (CONFIG_KTEST && cmdline_has("kpanic")) {
        kprintf("petrel: kpanic: touching an unmapped kernel address\n");
        *(volatile uint64_t *)phys_to_virt(0xdead0000) = 1;
    }
    if (CONFIG_KTEST && cmdline_has("kstackoverflow"))
        ktest_stack_overflow();
    if (CONFIG_KTEST && cmdline_has("ktest")) {
        ktest_run_all();
        kprintf("petrel: self tests done, shutting down\n");
        arch_system_off();
    }

    arch_irq_disable();
    kernel_lock();
    err = task_start_root();
    if (err)
        panic("root task did not start: %s", error_name(err));
    arch_enter_user(sched_exit());
}
