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
    bool dma;               /* MEM_DMA: committed now, never shared or moved (a device sees it) */
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
/* The checks of mem_map (W^X; rights within `held`, the rights the mapper
 * holds on m), then memobj_map_max. */
int memobj_map_checked(struct space *s, struct memobj *m, uint32_t held, vaddr_t va, uint64_t offset, uint64_t size,
                       uint32_t rights);
/* mem_unmap_range and mem_protect of a page range of s (splitting mappings). */
int memobj_unmap_range(struct space *s, vaddr_t va, uint64_t size);
int memobj_protect_range(struct space *s, vaddr_t va, uint64_t size, uint32_t rights);
/* Write len bytes into anonymous object m at offset (its pages made or
 * un-shared as a write access would); 0 or an error. */
int memobj_write(struct memobj *m, uint64_t offset, const void *src, uint64_t len);
/* An atomic compare-and-swap of the aligned 32-bit word of anonymous
 * object m at offset (its page made or un-shared as a write would), atomic
 * also against the programs that map it: *old gets what was there. */
int memobj_cas32(struct memobj *m, uint64_t offset, uint32_t expect, uint32_t desired, uint32_t *old);
/* Read len bytes of anonymous or file object m at offset into dst (a page
 * never committed reads as it would be filled, committing nothing); 0 or
 * an error. */
int memobj_read(struct memobj *m, uint64_t offset, void *dst, uint64_t len);
/* A copy-on-write clone of src, charged to owner; NULL with *err. */
struct memobj *memobj_clone(struct space *owner, struct memobj *src, int *err);
/* The rights a creator gets on an anonymous object and on a boot file's. */
#define MEMOBJ_ANON_RIGHTS (R_READ | R_WRITE | R_EXEC | R_GRANT | R_DUP)
#define MEMOBJ_FILE_RIGHTS (R_READ | R_EXEC | R_GRANT | R_DUP)
/* Fill or un-share the page under va for an access; 0 if it may now proceed. */
int memobj_resolve(struct space *s, vaddr_t va, bool write);
int memobj_resolve_access(struct space *s, vaddr_t va, bool write, bool exec);

#endif
