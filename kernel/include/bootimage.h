/*
 * The boot image: the archive of programs and files the build packs and
 * QEMU hands over as the initrd (format in docs/design/boot.md). File
 * data is page aligned so that it can later be mapped without copying.
 */
#ifndef PETREL_BOOTIMAGE_H
#define PETREL_BOOTIMAGE_H

#include "types.h"

#define BOOTIMAGE_NAME_MAX  40
#define BOOTIMAGE_EXEC      1

struct bootimage_file {
    const char *name;
    const void *data;       /* kernel alias */
    paddr_t pa;
    uint64_t size;
    uint32_t flags;
};

/* Validate the image at [pa, pa+size); 0 or -E_BADFORMAT. */
int bootimage_open(paddr_t pa, uint64_t size);
/* Validate an image held at a kernel address (self tests use this). */
int bootimage_check(const void *data, uint64_t size, const char **why);
unsigned bootimage_count(void);
int bootimage_get(unsigned index, struct bootimage_file *f);
int bootimage_find(const char *name, struct bootimage_file *f);
uint64_t bootimage_size(void);

#endif
