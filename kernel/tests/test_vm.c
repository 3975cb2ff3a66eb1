/*
 * Page-table level tests of memory objects: lazy pages appear only when
 * touched, 64 KiB pages are sixteen contiguous-hint entries over one
 * aligned block, 2 MiB pages are level-2 blocks, and copy-on-write
 * shares blocks until a write.
 */
#include "ktest.h"
#include "space.h"
#include "memobj.h"
#include "memory.h"
#include <arch/mmu_defs.h>

KTEST(vm_lazy_and_superpages, "vm: lazy pages, 64 KiB contiguous-hint pages, 2 MiB blocks")
{
    int err;
    struct space *s = space_create(NULL, &err);
    struct memobj *lazy = memobj_create(0x8000, 0, false, &err);
    struct memobj *k64 = memobj_create(0x20000, 4, false, &err);
    struct memobj *m2 = memobj_create(MiB(4), 9, false, &err);
    if (!KT_CHECK(s && lazy && k64 && m2, "objects"))
        return;
    unsigned level;
    KT_CHECK(memobj_map(s, lazy, 0x100000, 0, 0x8000, R_READ | R_WRITE) == 0, "map lazy");
    KT_CHECK(!space_pte(s, 0x102000, &level), "a lazy page is mapped before the first touch");
    KT_CHECK(memobj_resolve(s, 0x102000, false) == 0, "resolve");
    uint64_t *pte = space_pte(s, 0x102000, &level);
    KT_CHECK(pte && level == 3 && !space_pte(s, 0x103000, &level), "exactly the touched page appears");

    KT_CHECK(memobj_map(s, k64, 0x200000, 0, 0x20000, R_READ | R_WRITE) == 0, "map 64K");
    KT_CHECK(memobj_resolve(s, 0x213000, true) == 0, "resolve 64K");
    bool cont = true;
    paddr_t first = 0;
    for (unsigned i = 0; i < 16; i++) {
        uint64_t *e = space_pte(s, 0x210000 + 4096ull * i, &level);
        cont &= e && level == 3 && (*e & PTE_CONT);
        if (e && i == 0)
            first = *e & PTE_ADDR_MASK;
        cont &= e && (*e & PTE_ADDR_MASK) == first + 4096ull * i;
    }
    KT_CHECK(cont && IS_ALIGNED(first, KiB(64)), "16 contiguous-hint entries over one 64 KiB block");
    KT_CHECK(!space_pte(s, 0x200000, &level), "the other 64 KiB page is still lazy");

    KT_CHECK(memobj_map(s, m2, 0x40000000, 0, MiB(4), R_READ) == 0, "map 2M");
    KT_CHECK(memobj_resolve(s, 0x40234567, false) == 0, "resolve 2M");
    pte = space_pte(s, 0x40234567, &level);
    KT_CHECK(pte && level == 2 && IS_ALIGNED(*pte & PTE_ADDR_MASK, MiB(2)), "a 2 MiB block at level 2");
    obj_unref(&lazy->obj);
    obj_unref(&k64->obj);
    obj_unref(&m2->obj);
    obj_unref(&s->obj);
}

KTEST(vm_cow_sharing, "vm: copy-on-write shares blocks until a write")
{
    int err;
    struct space *s = space_create(NULL, &err);
    struct memobj *m = memobj_create(0x2000, 0, true, &err);
    if (!KT_CHECK(s && m, "objects"))
        return;
    KT_CHECK(memobj_map(s, m, 0x100000, 0, 0x2000, R_READ | R_WRITE) == 0, "map");
    paddr_t p0 = m->pages[0];
    KT_CHECK(frame_sharers(p0) == 1, "one sharer before the clone");
    /* Clone through the same path as mem_clone: share, count, drop views. */
    struct memobj *c = memobj_create(0x2000, 0, false, &err);
    for (unsigned i = 0; i < 2; i++) {
        frame_share(m->pages[i]);
        c->pages[i] = m->pages[i];
    }
    space_unmap_range(s, 0x100000, 0x2000);
    KT_CHECK(frame_sharers(p0) == 2, "two sharers after the clone");
    KT_CHECK(memobj_resolve(s, 0x100000, false) == 0, "read");
    unsigned level;
    uint64_t *pte = space_pte(s, 0x100000, &level);
    KT_CHECK(pte && !mmu_pte_writable(*pte), "a shared block is mapped read-only");
    KT_CHECK(memobj_resolve(s, 0x100000, true) == 0, "write");
    pte = space_pte(s, 0x100000, &level);
    KT_CHECK(m->pages[0] != p0 && c->pages[0] == p0 && frame_sharers(p0) == 1 && pte && mmu_pte_writable(*pte),
             "a write copies the block and maps the copy writable");
    obj_unref(&c->obj);
    obj_unref(&m->obj);
    obj_unref(&s->obj);
}

KTEST(vm_read_write, "vm: memobj_read gives what memobj_write wrote, zeros elsewhere, committing nothing")
{
    int err;
    struct memobj *m = memobj_create(0x4000, 0, false, &err);
    if (!KT_CHECK(m, "object"))
        return;
    uint8_t buf[64];
    static const char text[] = "across a page boundary";
    KT_CHECK(memobj_write(m, 0x1ff0, text, sizeof(text)) == 0, "write");
    KT_CHECK(memobj_read(m, 0x1ff0, buf, sizeof(text)) == 0 && !memcmp(buf, text, sizeof(text)), "read it back");
    memset(buf, 0xaa, sizeof(buf));
    KT_CHECK(memobj_read(m, 0x3000, buf, sizeof(buf)) == 0 && buf[0] == 0 && buf[63] == 0,
             "a page never written reads zeros");
    KT_CHECK(!m->pages[3], "and reading it committed nothing");
    KT_CHECK(memobj_read(m, 0x3fff, buf, 2) == -E_INVAL && memobj_read(m, ~0ull, buf, 2) == -E_INVAL,
             "past the end or wrapping: E_INVAL");
    struct memobj *c = memobj_clone(NULL, m, &err);
    KT_CHECK(c && memobj_read(c, 0x1ff0, buf, sizeof(text)) == 0 && !memcmp(buf, text, sizeof(text)),
             "a clone reads its source's bytes");
    if (c)
        obj_unref(&c->obj);
    obj_unref(&m->obj);
}

/* The kernel maps its image in 64 KiB contiguous-hint pages (one TLB
 * entry each): every page of text, rodata and data is a level-3 entry
 * with the hint, each 64 KiB group over one aligned physical block, text
 * read-only and executable, rodata read-only, data writable, neither of
 * those two executable. */
static bool image_part_ok(vaddr_t lo, vaddr_t hi, bool ro, bool exec)
{
    bool ok = IS_ALIGNED(lo | hi, KiB(64));
    for (vaddr_t va = lo; ok && va < hi; va += 4096) {
        unsigned level;
        uint64_t *e = mmu_walk(mmu_kernel_l1(), va, &level);
        ok = e && level == 3 && (*e & PTE_CONT) && (*e & PTE_ADDR_MASK) == virt_to_phys((void *)va) &&
             !!(*e & PTE_AP_RO) == ro && !(*e & PTE_PXN) == exec;
    }
    return ok;
}

KTEST(vm_kernel_image_pages, "vm: the kernel image is mapped in 64 KiB contiguous-hint pages")
{
    KT_CHECK(image_part_ok((vaddr_t)__kernel_start, (vaddr_t)__text_end, true, true), "text");
    KT_CHECK(image_part_ok((vaddr_t)__text_end, (vaddr_t)__rodata_end, true, false), "rodata");
    KT_CHECK(image_part_ok((vaddr_t)__rodata_end, (vaddr_t)__data_end, false, false), "data and bss");
}
