/* User address spaces: page tables tagged with an ASID. */
#ifndef PETREL_VM_H
#define PETREL_VM_H

#include "types.h"

#define VM_READ     1
#define VM_WRITE    2
#define VM_EXEC     4

struct vm_space {
    uint64_t *l1;       /* kernel alias of the top-level table */
    paddr_t l1_pa;
    uint16_t asid;
};

int vm_space_init(struct vm_space *vs);
int vm_map_page(struct vm_space *vs, vaddr_t va, paddr_t pa, unsigned rights);
void vm_space_activate(const struct vm_space *vs);
void *vm_user_ptr(vaddr_t va, bool write);
int copy_from_user(void *dst, vaddr_t src, size_t len);

/* arch page-table primitives used by the above (arch/aarch64/mmu.c). */
int mmu_map_range(uint64_t *l1, vaddr_t va, paddr_t pa, uint64_t size, uint64_t attrs, bool blocks);
uint64_t *mmu_lookup_page(uint64_t *l1, vaddr_t va);

#endif
