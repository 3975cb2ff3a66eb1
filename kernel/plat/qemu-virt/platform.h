/* What the qemu-virt platform found in the device tree. */
#ifndef PETREL_PLATFORM_H
#define PETREL_PLATFORM_H

#include "types.h"

struct fdt;

struct platform_info {
    paddr_t uart_pa;
    unsigned uart_irq;
};

extern struct platform_info platform;

int platform_console_init(const struct fdt *fdt, bool owner);
void pl011_init(void *va);
void pl011_attach(void *va);

#endif
