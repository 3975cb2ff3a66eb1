/*
 * Tests of the loaders and the user-space mapping rules: malformed boot
 * images and ELF files are refused with an error, and user mappings
 * never become writable and executable or reach kernel addresses.
 */
#include "ktest.h"
#include "bootimage.h"
#include "elf.h"
#include "memory.h"
#include "space.h"
#include "memobj.h"

static uint8_t img[3 * 4096] __attribute__((aligned(4096)));

struct hdr { char magic[8]; uint32_t version, count; uint64_t total, reserved; };
struct ent { char name[40]; uint64_t offset, size; uint32_t flags, reserved; };

/* A valid two-file image in img[]. */
static void make_image(void)
{
    memset(img, 0, sizeof(img));
    struct hdr *h = (void *)img;
    memcpy(h->magic, "PETRELBI", 8);
    h->version = 1;
    h->count = 2;
    h->total = sizeof(img);
    struct ent *e = (void *)(h + 1);
    memcpy(e[0].name, "root", 5);
    e[0].offset = 4096;
    e[0].size = 100;
    memcpy(e[1].name, "data", 5);
    e[1].offset = 8192;
    e[1].size = 4096;
}

KTEST(bootimage_validation, "bootimage: malformed images are rejected")
{
    const char *why;
    struct hdr *h = (void *)img;
    struct ent *e = (void *)(h + 1);
    make_image();
    KT_CHECK(bootimage_check(img, sizeof(img), &why) == 0, "valid image rejected: %s", why);
    struct { const char *what; int field; } cases[] = {
        { "bad magic", 0 }, { "bad version", 1 }, { "count too large", 2 }, { "total > size", 3 },
        { "data past the end", 4 }, { "data misaligned", 5 }, { "data over the table", 6 },
        { "unterminated name", 7 }, { "empty name", 8 }, { "size overflow", 9 },
    };
    for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
        make_image();
        switch (cases[i].field) {
        case 0: h->magic[0] = 'X'; break;
        case 1: h->version = 2; break;
        case 2: h->count = 1000000; break;
        case 3: h->total = sizeof(img) + 4096; break;
        case 4: e[1].size = 4097; break;
        case 5: e[1].offset = 8200; break;
        case 6: e[0].offset = 0; break;
        case 7: memset(e[0].name, 'a', sizeof(e[0].name)); break;
        case 8: e[0].name[0] = 0; break;
        case 9: e[1].size = ~0ull - 100; break;
        }
        KT_CHECK(bootimage_check(img, sizeof(img), &why) == -E_BADFORMAT, "%s accepted", cases[i].what);
    }
    KT_CHECK(bootimage_check(img, 16, &why) == -E_BADFORMAT, "short image accepted");
}

/* A minimal valid AArch64 executable: one R-X segment at 0x400000. */
static uint8_t elf[4096] __attribute__((aligned(8)));
struct ehdr { uint8_t ident[16]; uint16_t type, machine; uint32_t version; uint64_t entry, phoff, shoff;
              uint32_t flags; uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx; };
struct phdr { uint32_t type, flags; uint64_t offset, vaddr, paddr, filesz, memsz, align; };

static void make_elf(void)
{
    memset(elf, 0, sizeof(elf));
    struct ehdr *eh = (void *)elf;
    memcpy(eh->ident, "\177ELF\2\1\1", 7);
    eh->type = 2;
    eh->machine = 183;
    eh->entry = 0x400000;
    eh->phoff = sizeof(*eh);
    eh->phentsize = sizeof(struct phdr);
    eh->phnum = 1;
    struct phdr *ph = (void *)(eh + 1);
    ph->type = 1;
    ph->flags = 5;
    ph->offset = 0;
    ph->vaddr = 0x400000;
    ph->filesz = 256;
    ph->memsz = 8192;
}

KTEST(elf_validation, "elf: malformed or W+X executables are refused")
{
    struct ehdr *eh = (void *)elf;
    struct phdr *ph = (void *)(eh + 1);
    vaddr_t entry;
    int cerr;
    struct space *s = space_create(NULL, &cerr);
    if (!KT_CHECK(s != NULL, "address space"))
        return;
    make_elf();
    KT_CHECK(elf_load(s, elf, sizeof(elf), &entry) == 0 && entry == 0x400000, "valid ELF refused");
    obj_unref(&s->obj);
    for (int i = 0; i < 9; i++) {
        struct space *fresh = space_create(NULL, &cerr);
        if (!KT_CHECK(fresh != NULL, "address space"))
            return;
        make_elf();
        int want = -E_BADFORMAT;
        switch (i) {
        case 0: eh->ident[0] = 0; break;
        case 1: eh->machine = 62; break;                /* x86-64 */
        case 2: eh->ident[4] = 1; break;                /* 32-bit */
        case 3: eh->phnum = 200; break;                 /* table past the file */
        case 4: ph->flags = 7; want = -E_PERM; break;   /* W+X */
        case 5: ph->filesz = 9000; break;               /* more file than memory */
        case 6: ph->offset = 4000; break;               /* data past the file */
        case 7: ph->vaddr = 0xffffff8000000000ull; want = -E_RANGE; break;
        case 8: eh->entry = 0x900000; break;            /* entry outside any segment */
        }
        int err = elf_load(fresh, elf, sizeof(elf), &entry);
        KT_CHECK(err == want, "case %d: got %s, want %s", i, error_name(err), error_name(want));
        obj_unref(&fresh->obj);
    }
}

/* One round of mapping checks; returns false if an object was not made. */
static bool vm_round(void)
{
    int err;
    struct space *s = space_create(NULL, &err);
    struct memobj *m = memobj_create(KiB(64), 0, false, &err);
    struct memobj *big = memobj_create(MiB(2), 4, false, &err);
    if (!KT_CHECK(s && m && big, "objects"))
        return false;
    KT_CHECK(memobj_map(s, m, 0x10000, 0, 4096, R_READ | R_WRITE | R_EXEC) == -E_PERM, "W+X mapped");
    KT_CHECK(memobj_map(s, m, 0xffffff8000000000ull, 0, 4096, R_READ) == -E_INVAL, "kernel address mapped");
    KT_CHECK(memobj_map(s, m, 0x10001, 0, 4096, R_READ) == -E_INVAL, "unaligned address mapped");
    KT_CHECK(memobj_map(s, m, 0x10000, 0, KiB(128), R_READ) == -E_INVAL, "beyond the object");
    KT_CHECK(memobj_map(s, m, 0x10000, 0, 0, R_READ) == -E_INVAL, "empty mapping");
    KT_CHECK(memobj_map(s, m, 0x10000, 0, KiB(64), R_WRITE) == -E_INVAL, "mapping without R_READ");
    KT_CHECK(memobj_map(s, big, 0x21000, 0, KiB(64), R_READ) == -E_INVAL, "64K pages at a 4K boundary");
    KT_CHECK(memobj_map(s, m, 0x10000, 0, KiB(64), R_READ | R_WRITE) == 0, "plain mapping");
    KT_CHECK(memobj_map(s, m, 0x18000, 0, 4096, R_READ) == -E_BUSY, "overlapping mapping");
    KT_CHECK(memobj_map(s, big, 0x200000, 0, MiB(2), R_READ) == 0, "64K-page mapping");
    KT_CHECK(s->asid != 0, "ASID");
    obj_unref(&m->obj);
    obj_unref(&big->obj);
    obj_unref(&s->obj);
    return true;
}

KTEST(vm_rules, "vm: W+X, kernel addresses, misalignment, overlap and overrun are refused, nothing leaks")
{
    /* The first round lets the kernel allocator carve its slabs; the
     * second must give back every frame it takes. */
    if (!vm_round())
        return;
    uint64_t before = frame_free_pages();
    vm_round();
    KT_CHECK(frame_free_pages() == before, "frames leaked: %ld", (long)(before - frame_free_pages()));
}
