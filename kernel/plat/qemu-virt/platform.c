/*
 * qemu-virt platform discovery: the console UART. The device tree names
 * it in /chosen/stdout-path; failing that, the first "arm,pl011" node.
 */
#include "platform.h"
#include "fdt.h"
#include "kernel.h"
#include "arch.h"

struct platform_info platform;

/* Find the console node: stdout-path ("/pl011@9000000:115200n8") or pl011. */
static int find_console(const struct fdt *fdt)
{
    int chosen = fdt_path(fdt, "/chosen");
    uint32_t len;
    const char *path = chosen >= 0 ? fdt_prop(fdt, chosen, "stdout-path", &len) : NULL;
    if (path && len > 1 && len < 128 && path[0] == '/') {
        char buf[128];
        size_t n = 0;
        while (n < len && path[n] && path[n] != ':')
            n++;
        memcpy(buf, path, n);
        buf[n] = '\0';
        int node = fdt_path(fdt, buf);
        if (node >= 0 && fdt_compatible(fdt, node, "arm,pl011"))
            return node;
    }
    return fdt_find_compatible(fdt, -1, "arm,pl011");
}

/* Map the console UART and route kernel output to it. */
/* owner: take the UART over (8N1, on); K2's shadow kernel only writes to
 * it, as the main kernel set it up. */
int platform_console_init(const struct fdt *fdt, bool owner)
{
    int node = find_console(fdt);
    uint64_t base, size;
    if (node < 0 || !fdt_reg(fdt, node, 0, &base, &size))
        return -E_NOENT;
    void *va;
    int err = arch_map_device(base, size ? size : 4096, &va);
    if (err)
        return err;
    platform.uart_pa = base;
    uint32_t len;
    const uint8_t *irq = fdt_prop(fdt, node, "interrupts", &len);
    if (irq && len >= 12)
        platform.uart_irq = be32(irq + 4) + (be32(irq) == 0 ? 32 : 16);
    if (owner)
        pl011_init(va);
    else
        pl011_attach(va);
    return 0;
}
