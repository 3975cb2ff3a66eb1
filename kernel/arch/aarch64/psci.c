/*
 * PSCI firmware calls: starting secondary cores and powering off. The
 * device tree's /psci node says whether they go through hvc or smc.
 * A failure exit uses semihosting SYS_EXIT, which makes QEMU exit with
 * the given status (our QEMU command lines enable semihosting).
 */
#include "arch.h"
#include "fdt.h"
#include "kernel.h"

#define PSCI_CPU_ON_64      0xC4000003
#define PSCI_SYSTEM_OFF     0x84000008

static bool use_smc;
static bool psci_present;

static uint64_t psci_call(uint64_t fn, uint64_t a, uint64_t b, uint64_t c)
{
    register uint64_t x0 __asm__("x0") = fn;
    register uint64_t x1 __asm__("x1") = a;
    register uint64_t x2 __asm__("x2") = b;
    register uint64_t x3 __asm__("x3") = c;
    if (use_smc)
        __asm__ volatile("smc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
    else
        __asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}

/* Find the PSCI conduit. */
int arch_firmware_init(const void *fdt_ptr)
{
    const struct fdt *fdt = fdt_ptr;
    int node = fdt_find_compatible(fdt, -1, "arm,psci-1.0");
    if (node < 0)
        node = fdt_find_compatible(fdt, -1, "arm,psci-0.2");
    if (node < 0)
        return -E_NOENT;
    uint32_t len;
    const char *method = fdt_prop(fdt, node, "method", &len);
    if (!method)
        return -E_BADFORMAT;
    use_smc = strncmp(method, "smc", 4) == 0;
    psci_present = true;
    return 0;
}

extern char secondary_entry[];

/* Start core hwid at the boot stub's secondary entry with its index. */
int arch_cpu_start(uint64_t hwid, unsigned index)
{
    if (!psci_present)
        return -E_NOSYS;
    int64_t r = (int64_t)psci_call(PSCI_CPU_ON_64, hwid, virt_to_phys(secondary_entry), index);
    return r == 0 ? 0 : -E_BUSY;
}

/* Start core hwid at a physical entry point with x0 = context (K2: the
 * shadow kernel's image, with the device tree's address). */
int arch_cpu_start_at(uint64_t hwid, paddr_t entry, uint64_t context)
{
    if (!psci_present)
        return -E_NOSYS;
    int64_t r = (int64_t)psci_call(PSCI_CPU_ON_64, hwid, entry, context);
    return r == 0 ? 0 : -E_BUSY;
}

NORETURN void arch_system_off(void)
{
    if (psci_present)
        psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
    for (;;)
        __asm__ volatile("wfi");
}

/* Stop QEMU with a failure status (semihosting SYS_EXIT). */
NORETURN void arch_system_fail(int status)
{
    static volatile uint64_t block[2];
    block[0] = 0x20026;         /* ADP_Stopped_ApplicationExit */
    block[1] = (uint64_t)status;
    register uint64_t x0 __asm__("x0") = 0x18;
    register uint64_t x1 __asm__("x1") = (uint64_t)block;
    __asm__ volatile("hlt #0xf000" :: "r"(x0), "r"(x1) : "memory");
    for (;;)
        __asm__ volatile("wfi");
}
