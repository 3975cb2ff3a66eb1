/*
 * ELF loader for static AArch64 executables. Every header field that
 * steers a copy is checked against the file size and the user address
 * range first; a segment asking to be writable and executable is
 * refused (W^X).
 */
#include "elf.h"
#include "kernel.h"
#include "memory.h"
#include "vm.h"

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

/* Check the file header; 0 or -E_BADFORMAT. */
static int check_header(const struct elf64_ehdr *eh, uint64_t size)
{
    if (size < sizeof(*eh) || memcmp(eh->ident, "\177ELF", 4) != 0)
        return -E_BADFORMAT;
    if (eh->ident[4] != 2 || eh->ident[5] != 1)        /* 64-bit, little endian */
        return -E_BADFORMAT;
    if (eh->type != ET_EXEC || eh->machine != EM_AARCH64)
        return -E_BADFORMAT;
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0 ||
        eh->phoff > size || (uint64_t)eh->phnum * sizeof(struct elf64_phdr) > size - eh->phoff)
        return -E_BADFORMAT;
    return 0;
}

/* Load one PT_LOAD segment page by page into fresh zeroed frames. */
static int load_segment(struct vm_space *vs, const uint8_t *file, const struct elf64_phdr *ph)
{
    unsigned rights = VM_READ | ((ph->flags & PF_W) ? VM_WRITE : 0) | ((ph->flags & PF_X) ? VM_EXEC : 0);
    vaddr_t start = ALIGN_DOWN(ph->vaddr, 4096), end = ALIGN_UP(ph->vaddr + ph->memsz, 4096);
    for (vaddr_t va = start; va < end; va += 4096) {
        paddr_t pa = frame_alloc_zeroed(0);
        if (pa == PADDR_INVALID)
            return -E_NOMEM;
        /* Copy the part of the file image that falls in this page. */
        uint64_t lo = MAX(va, ph->vaddr), hi = MIN(va + 4096, ph->vaddr + ph->filesz);
        if (lo < hi)
            memcpy((uint8_t *)phys_to_virt(pa) + (lo - va), file + ph->offset + (lo - ph->vaddr), hi - lo);
        int err = vm_map_page(vs, va, pa, rights);
        if (err) {
            frame_free(pa, 0);
            return err;
        }
    }
    return 0;
}

/* Load an executable into vs; *entry gets its entry point. */
int elf_load(struct vm_space *vs, const void *data, uint64_t size, vaddr_t *entry)
{
    const struct elf64_ehdr *eh = data;
    int err = check_header(eh, size);
    if (err)
        return err;
    const struct elf64_phdr *ph = (const void *)((const uint8_t *)data + eh->phoff);
    bool entry_ok = false;
    for (unsigned i = 0; i < eh->phnum; i++) {
        if (ph[i].type != PT_LOAD)
            continue;
        if ((ph[i].flags & PF_W) && (ph[i].flags & PF_X))
            return -E_PERM;
        if (ph[i].filesz > ph[i].memsz || ph[i].offset > size || ph[i].filesz > size - ph[i].offset)
            return -E_BADFORMAT;
        if (ph[i].vaddr < 4096 || ph[i].memsz > USER_LOAD_LIMIT || ph[i].vaddr > USER_LOAD_LIMIT - ph[i].memsz)
            return -E_RANGE;
        if (eh->entry >= ph[i].vaddr && eh->entry < ph[i].vaddr + ph[i].memsz && (ph[i].flags & PF_X))
            entry_ok = true;
    }
    if (!entry_ok)
        return -E_BADFORMAT;
    for (unsigned i = 0; i < eh->phnum; i++)
        if (ph[i].type == PT_LOAD && (err = load_segment(vs, data, &ph[i])) != 0)
            return err;
    *entry = eh->entry;
    return 0;
}
