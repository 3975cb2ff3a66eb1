/* ELF64 executables: the structures and checks shared by the kernel's
 * root task loader (kernel/core/elf.c) and the runtime's spawn
 * (user/rt/spawn.c), which then apply their own placement rules. */
#ifndef PETREL_PELF_H
#define PETREL_PELF_H

#include <stdbool.h>
#include <stdint.h>

#define PT_LOAD     1
#define PF_X        1
#define PF_W        2
#define PF_R        4
#define EM_AARCH64  183
#define ET_EXEC     2

struct elf64_ehdr {
    uint8_t ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

/* The header of a 64-bit little-endian AArch64 executable of `size`
 * bytes whose program header table lies inside the file: 0 or -E_BADFORMAT. */
int elf_check_header(const struct elf64_ehdr *eh, uint64_t size);

/* Do segment p's file bytes lie inside the file and fit its memory size? */
bool elf_segment_in_file(const struct elf64_phdr *p, uint64_t size);

#endif
