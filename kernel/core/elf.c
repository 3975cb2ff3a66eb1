/*
 * ELF loader for the root task (every other program is loaded by the
 * root task itself, from memory objects). Every header field that steers
 * a copy is checked against the file size and the user address range
 * first; a segment asking to be writable and executable is refused.
 * Each PT_LOAD segment becomes an eager anonymous memory object holding
 * a copy of its bytes, mapped with the segment's rights.
 */
#include "elf.h"
#include "kernel.h"
#include "memobj.h"
#include "space.h"

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

/* One segment: a memory object with a copy of its bytes, mapped. */
static int load_segment(struct space *s, const uint8_t *file, const struct elf64_phdr *ph)
{
    uint32_t rights = R_READ | ((ph->flags & PF_W) ? R_WRITE : 0) | ((ph->flags & PF_X) ? R_EXEC : 0);
    vaddr_t start = ALIGN_DOWN(ph->vaddr, 4096), end = ALIGN_UP(ph->vaddr + ph->memsz, 4096);
    int err;
    struct memobj *m = memobj_create(end - start, 0, true, &err);
    if (!m)
        return err;
    for (vaddr_t va = start; va < end; va += 4096) {
        uint8_t *page = phys_to_virt(m->pages[(va - start) / 4096]);
        uint64_t lo = MAX(va, ph->vaddr), hi = MIN(va + 4096, ph->vaddr + ph->filesz);
        if (lo < hi)
            memcpy(page + (lo - va), file + ph->offset + (lo - ph->vaddr), hi - lo);
    }
    __asm__ volatile("dsb ish; ic ialluis; dsb ish; isb" ::: "memory");
    err = memobj_map(s, m, start, 0, end - start, rights);
    obj_unref(&m->obj);             /* the mapping holds it */
    return err;
}

/* Load an executable into s; *entry gets its entry point. */
int elf_load(struct space *s, const void *data, uint64_t size, vaddr_t *entry)
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
        if (ph[i].type == PT_LOAD && (err = load_segment(s, data, &ph[i])) != 0)
            return err;
    *entry = eh->entry;
    return 0;
}
