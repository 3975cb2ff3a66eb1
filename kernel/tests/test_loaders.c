/*
 * Tests of the loaders and the user-space mapping rules: malformed boot
 * images and ELF files are refused with an error, and user mappings
 * never become writable and executable or reach kernel addresses.
 */
#include "ktest.h"
#include "bootimage.h"
#include "elf.h"
#include "memory.h"
#include "vm.h"

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
    struct vm_space vs;
    vaddr_t entry;
    KT_CHECK(vm_space_init(&vs) == 0, "address space");
    make_elf();
    KT_CHECK(elf_load(&vs, elf, sizeof(elf), &entry) == 0 && entry == 0x400000, "valid ELF refused");
    for (int i = 0; i < 9; i++) {
        struct vm_space fresh;
        KT_CHECK(vm_space_init(&fresh) == 0, "address space");
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
        int err = elf_load(&fresh, elf, sizeof(elf), &entry);
        KT_CHECK(err == want, "case %d: got %s, want %s", i, error_name(err), error_name(want));
    }
}

KTEST(vm_rules, "vm: W+X, kernel addresses, misalignment and double mapping are refused")
{
    struct vm_space vs;
    KT_CHECK(vm_space_init(&vs) == 0, "address space");
    paddr_t pa = frame_alloc_zeroed(0);
    KT_CHECK(vm_map_page(&vs, 0x10000, pa, VM_READ | VM_WRITE | VM_EXEC) == -E_PERM, "W+X mapped");
    KT_CHECK(vm_map_page(&vs, 0xffffff8000000000ull, pa, VM_READ) == -E_INVAL, "kernel address mapped");
    KT_CHECK(vm_map_page(&vs, 0x10001, pa, VM_READ) == -E_INVAL, "unaligned address mapped");
    KT_CHECK(vm_map_page(&vs, 0x10000, pa, VM_READ | VM_WRITE) == 0, "plain mapping");
    KT_CHECK(vm_map_page(&vs, 0x10000, pa, VM_READ) == -E_BUSY, "double mapping");
    KT_CHECK(vm_space_init(&vs) == 0 && vs.asid != 0, "ASID");
}
