/*
 * Multi-core bring-up. The boot core reads the cores from /cpus, gives
 * itself index 0 and the others 1..n-1 in tree order, and starts each
 * through the firmware (PSCI CPU_ON) at the boot stub's secondary
 * entry. A secondary turns its MMU on with the kernel's final table,
 * sets up its exception vectors, GIC CPU interface and tick, announces
 * itself and idles in WFI until work arrives.
 */
#include "cpu.h"
#include "fdt.h"
#include "irq.h"
#include "timer.h"

struct cpu cpus[CONFIG_MAX_CPUS];
unsigned ncpus_present;

/* Read the cores; the running one becomes index 0. */
int smp_discover(const struct fdt *fdt)
{
    int node = fdt_path(fdt, "/cpus");
    if (node < 0)
        return -E_NOENT;
    uint32_t ac = 1;
    fdt_prop_u32(fdt, node, "#address-cells", &ac);
    uint64_t me = arch_cpu_hwid();
    cpus[0].hwid = me;
    unsigned n = 1, seen = 0;
    for (int c = fdt_first_child(fdt, node); c >= 0; c = fdt_next_sibling(fdt, c)) {
        uint32_t len;
        const char *type = fdt_prop(fdt, c, "device_type", &len);
        const void *reg = fdt_prop(fdt, c, "reg", &len);
        if (!type || strcmp(type, "cpu") != 0 || !reg || len < 4 * ac || ac < 1 || ac > 2)
            continue;
        seen++;
        uint64_t hwid = fdt_read_cells(reg, ac);
        if (hwid == me)
            continue;
        if (n == CONFIG_MAX_CPUS) {
            kprintf("smp: core 0x%lx ignored (CONFIG_MAX_CPUS is %u)\n", hwid, CONFIG_MAX_CPUS);
            continue;
        }
        cpus[n].hwid = hwid;
        n++;
    }
    if (seen == 0)
        return -E_NOENT;
    for (unsigned i = 0; i < n; i++) {
        cpus[i].index = i;
        cpus[i].kstack_top = arch_kstack_top(i);
        sched_init_cpu(i);
    }
    ncpus_present = n;
    return 0;
}

/* Start the secondaries one by one, waiting up to a second for each. */
unsigned smp_boot_secondaries(void)
{
    smp_running = ncpus_present > 1;
    for (unsigned i = 1; i < ncpus_present; i++) {
        int err = arch_cpu_start(cpus[i].hwid, i);
        if (err) {
            kprintf("smp: cpu%u (mpidr 0x%lx) did not start: %s\n", i, cpus[i].hwid, error_name(err));
            continue;
        }
        uint64_t deadline = arch_counter() + arch_counter_freq();
        while (!READ_ONCE(cpus[i].online) && arch_counter() < deadline)
            arch_cpu_relax();
        if (!READ_ONCE(cpus[i].online))
            kprintf("smp: cpu%u (mpidr 0x%lx) did not report in\n", i, cpus[i].hwid);
    }
    return smp_online_count();
}

uint64_t smp_online_mask(void)
{
    uint64_t m = 0;
    for (unsigned i = 0; i < ncpus_present; i++)
        if (READ_ONCE(cpus[i].online))
            m |= 1ull << i;
    return m;
}

unsigned smp_online_count(void)
{
    return (unsigned)__builtin_popcountll(smp_online_mask());
}

/* An inter-processor interrupt: count it and run any work posted for
 * this core. A wake-up needs only the timer re-armed (another core may
 * have given a thread here an earlier timeout): returning to user space
 * goes through the scheduler, which picks whatever was queued here. */
static void ipi_handler(unsigned irq, void *arg)
{
    struct cpu *c = this_cpu();
    c->ipis++;
    if (irq == IRQ_SGI_WAKE)
        timer_rearm();
    void (*fn)(void *) = c->work;
    if (irq == IRQ_SGI_TEST && fn) {
        c->work = NULL;
        fn(c->work_arg);
        __atomic_store_n(&c->work_done, 1, __ATOMIC_RELEASE);
    }
}

/* Register the IPI handlers (boot core, before the secondaries start). */
static void smp_ipi_init(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    irq_register_lockless(IRQ_SGI_WAKE, ipi_handler, NULL);
    irq_register_lockless(IRQ_SGI_TEST, ipi_handler, NULL);
}

NORETURN void secondary_main(unsigned index)
{
    struct cpu *c = &cpus[index];
    arch_set_this_cpu(c);
    arch_trap_init();
    arch_mmu_secondary_init();
    irq_cpu_init();
    timer_cpu_init();
    kprintf("cpu%u: online (mpidr 0x%lx)\n", index, c->hwid);
    __atomic_store_n(&c->online, 1, __ATOMIC_RELEASE);
    kernel_lock();
    sched_idle();
}

/* Called by the boot core before starting anyone. */
void smp_init_boot_cpu(void)
{
    smp_ipi_init();
    cpus[0].online = 1;
}
