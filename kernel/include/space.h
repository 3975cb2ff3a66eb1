/*
 * Address spaces (processes): page tables with an ASID, a handle table,
 * the threads that run in it, and the mappings of memory objects.
 */
#ifndef PETREL_SPACE_H
#define PETREL_SPACE_H

#include "object.h"
#include "list.h"
#include "arch.h"
#include "vatree.h"

#define USER_VA_LIMIT   0x0000008000000000ull  /* 512 GiB of user space */
#define VM_READ     R_READ
#define VM_WRITE    R_WRITE
#define VM_EXEC     R_EXEC

struct memobj;

struct mapping {
    struct vanode node;         /* in space->mappings, keyed by [va, va + size) */
    struct list mem_link;       /* in memobj->mappings */
    struct space *space;
    struct memobj *mem;
    vaddr_t va;
    uint64_t size;
    uint64_t offset;            /* into the memory object */
    uint32_t rights;
    uint32_t max_rights;        /* what mem_protect may give it back (the handle's) */
};

struct space {
    struct object obj;
    uint64_t *l1;               /* kernel alias of the top-level table */
    paddr_t l1_pa;
    uint16_t asid;
    uint32_t id;                /* process id, as IPC receivers see it */
    struct handle_table handles;
    struct list threads;
    struct vatree mappings;     /* its mapping records, by address */
    unsigned nthreads;
    bool had_threads;
    bool torn_down;             /* no threads, handles or mappings any more, ever */
    bool kcall_cached;          /* a thread of it may have a light call (struct kcall) */
    bool teardown_queued;
    struct space *next_teardown;    /* on the teardown work list */
    struct space *parent;       /* the space that created it (a reference): charged too */
    struct list children;       /* spaces it created, not yet freed */
    struct list child_link;     /* in parent->children */
    struct list ep_watches;     /* its struct ep_watch records (endpoint_watch) */
    uint64_t limit[LIMIT_KINDS];    /* 0: none of its own */
    uint64_t used[LIMIT_KINDS];     /* its own and its descendants' */
    uint64_t table_pages;       /* page-table pages allocated for it (charged) */
    paddr_t spare_table;        /* an emptied table kept for the next one needed (0: none) */
    uint32_t inner_handles;     /* handles to it held by itself or the spaces it made */
};

/*
 * Resource accounting: charge `amount` of `kind` (LIMIT_*) to s and every
 * ancestor; -E_LIMIT, charging nobody, if that passes any of their
 * limits. space_charge_force charges past the limits (for bounded
 * amounts the kernel cannot refuse at that point, e.g. a page table
 * under a mapping). NULL s: the kernel's own, not charged.
 */
int space_charge(struct space *s, unsigned kind, uint64_t amount);
void space_charge_force(struct space *s, unsigned kind, uint64_t amount);
void space_uncharge(struct space *s, unsigned kind, uint64_t amount);

/* A new space created by (and charged to) `parent` (NULL: the kernel). */
struct space *space_create(struct space *parent, int *err);
/* Whether the space numbered id still runs (space_alive). */
bool space_id_alive(uint64_t id);
/* Set limit `kind` of s for a request of space `by` (which may not raise
 * or remove a limit over itself or an ancestor); the usage, or an error. */
int64_t space_set_limit(struct space *s, struct space *by, unsigned kind, uint64_t value);
/* Close its handles and remove its mappings now (space_teardown_later
 * is the way in for everything but the teardown work list itself). */
void space_teardown(struct space *s);
/* A handle to s went: if s has no threads and only handles held inside
 * itself (or its children) remain, nothing can use it again: tear it down. */
void space_maybe_orphaned(struct space *s);
/* Kill every thread of s and tear it down; returns the threads killed. */
unsigned space_kill(struct space *s);
static inline void space_activate(const struct space *s)
{
    arch_space_activate(s->l1_pa, s->asid);
}
struct mapping *space_find_mapping(struct space *s, vaddr_t va);
int space_map_pages(struct space *s, vaddr_t va, paddr_t pa, uint64_t size, uint32_t rights,
                    unsigned page_order, bool device);
void space_unmap_range(struct space *s, vaddr_t va, uint64_t size);
uint64_t *space_pte(struct space *s, vaddr_t va, unsigned *level);

/* Kernel access to the current user space (AT S1E0R/W: what EL0 could do). */
void *user_ptr(vaddr_t va, bool write);
int copy_from_user(void *dst, vaddr_t src, size_t len);
int copy_to_user(vaddr_t dst, const void *src, size_t len);

/* Arch page-table primitives (arch/aarch64/mmu.c). mmu_map_range's `how`:
 * MAP_BLOCKS allows 1 GiB and 2 MiB blocks, MAP_CONT 64 KiB pages. */
#define MAP_BLOCKS  1u
#define MAP_CONT    2u
int mmu_map_range(uint64_t *l1, vaddr_t va, paddr_t pa, uint64_t size, uint64_t attrs, unsigned how);
uint64_t *mmu_lookup_page(uint64_t *l1, vaddr_t va);
uint64_t *mmu_kernel_l1(void);
uint64_t *mmu_walk(uint64_t *l1, vaddr_t va, unsigned *level);
uint64_t mmu_user_attrs(uint32_t rights, bool device);
/* Map one page; *tables counts the table pages it had to create. */
int mmu_map_user(uint64_t *l1, vaddr_t va, paddr_t pa, uint64_t attrs, unsigned page_order, unsigned *tables,
                 paddr_t *spare);
unsigned mmu_tables_needed(uint64_t *l1, vaddr_t va, unsigned page_order);
/* Unmap a range; frees tables it leaves empty and returns how many. */
unsigned mmu_unmap_user(uint64_t *l1, uint16_t asid, vaddr_t va, uint64_t size, paddr_t *spare);
void mmu_set_pte(uint64_t *l1, uint16_t asid, uint64_t *pte, uint64_t value, vaddr_t va);
void mmu_free_tables(uint64_t *l1);
bool mmu_range_empty(uint64_t *l1, vaddr_t va, uint64_t size);
int mmu_asid_alloc(uint16_t *asid);
void mmu_asid_free(uint16_t asid);
paddr_t mmu_pte_pa(uint64_t pte);
paddr_t mmu_user_pa(uint64_t *l1, vaddr_t va, bool write);
/* Copy between the current space and another (the caller of a server). */
int space_copy(struct space *other, vaddr_t other_va, vaddr_t my_va, size_t len, bool to_other);
/* The same between a kernel buffer and other_va. */
int space_copy_kernel(struct space *other, vaddr_t other_va, uint8_t *kbuf, size_t len, bool to_other);
bool mmu_pte_writable(uint64_t pte);

#endif
