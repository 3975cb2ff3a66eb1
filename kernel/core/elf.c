/*
 * ELF loader for the root task (every other program is loaded by the
 * root task itself, from memory objects). Every header field that steers
 * a copy is checked against the file size and the user address range
 * first; a segment asking to be writable and executable is refused.
 * Each PT_LOAD segment becomes an eager anonymous memory object holding
 * a copy of its bytes, mapped with the segment's rights.
 */
#include "elf.h"
#include "pelf.h"
#include "kernel.h"
#include "memobj.h"
#include "space.h"

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
    int err = elf_check_header(eh, size);
    if (err)
        return err;
    const struct elf64_phdr *ph = (const void *)((const uint8_t *)data + eh->phoff);
    bool entry_ok = false;
    for (unsigned i = 0; i < eh->phnum; i++) {
        if (ph[i].type != PT_LOAD)
            continue;
        if ((ph[i].flags & PF_W) && (ph[i].flags & PF_X))
            return -E_PERM;
        if (!elf_segment_in_file(&ph[i], size))
            return -E_BADFORMAT;
        if (ph[i].vaddr < 4096 || ph[i].memsz > USER_LOAD_LIMIT || ph[i].vaddr > USER_LOAD_LIMIT - ph[i].memsz)
            return -E_RANGE;
        if (eh->entry >= ph[i].vaddr && eh->entry < ph[i].vaddr + ph[i].memsz && (ph[i].flags & PF_X))
            entry_ok = true;
    }
    if (!entry_ok)
        return -E_BADFORMAT;            /* also: no segments at all */
    for (unsigned i = 0; i < eh->phnum; i++)
        if (ph[i].type == PT_LOAD && (err = load_segment(s, data, &ph[i])) != 0)
            return err;
    *entry = eh->entry;
    return 0;
}
