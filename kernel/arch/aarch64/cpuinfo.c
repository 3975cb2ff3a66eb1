/* The name of this core's CPU model, from MIDR_EL1. */
#include "arch.h"
#include "kernel.h"

const char *arch_cpu_name(void)
{
    static const struct { uint32_t part; const char *name; } arm_parts[] = {
        { 0xd03, "Cortex-A53" }, { 0xd04, "Cortex-A35" }, { 0xd05, "Cortex-A55" },
        { 0xd07, "Cortex-A57" }, { 0xd08, "Cortex-A72" }, { 0xd09, "Cortex-A73" },
        { 0xd0a, "Cortex-A75" }, { 0xd0b, "Cortex-A76" }, { 0xd0c, "Neoverse-N1" },
    };
    uint64_t midr = read_sysreg(midr_el1);
    uint32_t part = (midr >> 4) & 0xfff;
    if (((midr >> 24) & 0xff) == 0x41)
        for (unsigned i = 0; i < ARRAY_SIZE(arm_parts); i++)
            if (arm_parts[i].part == part)
                return arm_parts[i].name;
    return "unknown AArch64 core";
}
