/*
 * Memory objects (in the spirit of OKL4 memsections): a size, a page
 * size (4 KiB, 64 KiB, 2 MiB), a backing — anonymous zero-filled
 * memory, a boot image file mapped in place, or a device range — and
 * eager or lazy commit. Mappings place a window of an object into an
 * address space with rights.
 */
#ifndef PETREL_MEMOBJ_H
#define PETREL_MEMOBJ_H

#include "object.h"
#include "list.h"

struct space;
struct mapping;

enum { MEM_ANON, MEM_FILE, MEM_PHYS };

struct memobj {
    struct object obj;
    uint8_t kind;
    uint8_t order;          /* page order: 0 (4 KiB), 4 (64 KiB), 9 (2 MiB) */
    bool eager;
    uint64_t size;
    paddr_t base;           /* MEM_FILE, MEM_PHYS: physical start */
    paddr_t src_pa;         /* MEM_ANON clone of a file: unwritten pages read from here */
    uint64_t src_size;
    paddr_t *pages;         /* MEM_ANON: one per page, 0 = not yet committed */
    uint64_t npages;
    struct space *owner;    /* charged for every committed page (NULL: the kernel's) */
    struct list mappings;
};

struct memobj *memobj_create(uint64_t size, unsigned order, bool eager, int *err);
/* The same, charged to space `owner` (its memory limit applies). */
struct memobj *memobj_create_for(struct space *owner, uint64_t size, unsigned order, bool eager, int *err);
struct memobj *memobj_create_file(struct space *payer, paddr_t pa, uint64_t size, int *err);
int memobj_map(struct space *s, struct memobj *m, vaddr_t va, uint64_t offset, uint64_t size, uint32_t rights);
/* The same, noting the most rights mem_protect may later give the mapping. */
int memobj_map_max(struct space *s, struct memobj *m, vaddr_t va, uint64_t offset, uint64_t size, uint32_t rights,
                   uint32_t max_rights);
void memobj_unmap(struct mapping *map);
/* Fill or un-share the page under va for an access; 0 if it may now proceed. */
int memobj_resolve(struct space *s, vaddr_t va, bool write);
int memobj_resolve_access(struct space *s, vaddr_t va, bool write, bool exec);

#endif
