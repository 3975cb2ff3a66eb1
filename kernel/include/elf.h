/* Loading static AArch64 ELF executables into a user address space. */
#ifndef PETREL_ELF_H
#define PETREL_ELF_H

#include "types.h"

struct space;

/* Programs load below this address; the stack and boot info sit above. */
#define USER_LOAD_LIMIT     0x0000007f00000000ull

int elf_load(struct space *s, const void *data, uint64_t size, vaddr_t *entry);

#endif
