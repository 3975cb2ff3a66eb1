/*
 * Loading a static (or static-PIE) AArch64 ELF program into a new
 * process, and its initial stack exactly as Linux lays it out:
 *
 *     sp ->  argc
 *            argv[0..argc-1], NULL
 *            envp[...], NULL
 *            auxv pairs, AT_NULL
 *            (padding to 16 bytes)
 *            16 random bytes (AT_RANDOM), "aarch64" (AT_PLATFORM)
 *            argument and environment strings, the file name (AT_EXECFN)
 *     top of the stack
 *
 * Segments that are not writable map the file's pages in place from the
 * root archive when they are page-aligned there (the archive packer
 * aligns them); writable segments, any segment that is not aligned, and
 * every segment of a file written since (in memory, or in a memory object
 * once mapped MAP_SHARED: rootfs.c) are copied into a fresh anonymous
 * object with .bss zeroed. Each is a mapped range of the process
 * (memory.c), as the stack is. The headers are read into a buffer
 * (lx_node_read), wherever the file's bytes are.
 *
 * A dynamic program (PT_INTERP) gets its interpreter (ld-linux-aarch64.so.1,
 * ld-musl-aarch64.so.1: a static-PIE ELF of the root archive) mapped at
 * LX_INTERP_BASE too, and starts there, with AT_BASE saying where; the
 * interpreter maps the libraries itself with open and mmap, as on Linux.
 */
#include "lx.h"
#include "pelf.h"

#define ET_DYN      3
#define PT_INTERP   3
#define PT_PHDR     6

enum {
    AT_NULL = 0, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_BASE = 7, AT_FLAGS = 8,
    AT_ENTRY = 9, AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14, AT_PLATFORM = 15, AT_HWCAP = 16,
    AT_CLKTCK = 17, AT_SECURE = 23, AT_RANDOM = 25, AT_HWCAP2 = 26, AT_EXECFN = 31, AT_MINSIGSTKSZ = 51,
};

/* What the cores QEMU's virt board emulates here (Cortex-A53, A72) offer:
 * fp, asimd, aes, pmull, sha1, sha2, crc32. Not HWCAP_CPUID: reading ID
 * registers from EL0 is not emulated. */
#define LX_HWCAP        0xfbull
#define LX_MINSIGSTKSZ  4720    /* the signal frame Linux 6.1 gives these cores (no SVE) */

/* Check the ELF header of a file of `size` bytes at img. */
static int check_header(const struct elf64_ehdr *eh, uint64_t size)
{
    if (size < sizeof(*eh) || memcmp(eh->ident, "\177ELF", 4) != 0 || eh->ident[4] != 2 || eh->ident[5] != 1)
        return -LX_ENOEXEC;
    if ((eh->type != ET_EXEC && eh->type != ET_DYN) || eh->machine != EM_AARCH64)
        return -LX_ENOEXEC;
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0 || eh->phnum > 64 || eh->phoff > size ||
        (uint64_t)eh->phnum * sizeof(struct elf64_phdr) > size - eh->phoff)
        return -LX_ENOEXEC;
    return 0;
}

/* Map one PT_LOAD segment of file `node` into p's space at base +
 * vaddr: in place when the file is in the archive (its bytes at archive
 * offset data_off), else a copy. */
static int load_segment(struct lx_proc *p, int32_t node, uint64_t base, const struct elf64_phdr *ph)
{
    const struct lx_node *n = lx_node(node);
    int in_place = !n->mem && !n->obj && n->fs != LX_FS_DATA;
    uint64_t va = base + ph->vaddr, start = va & ~(LX_PAGE - 1), end = lx_page_up(va + ph->memsz);
    uint32_t rights = ((ph->flags & PF_R) ? R_READ : 0) | ((ph->flags & PF_W) ? R_WRITE | R_READ : 0) |
                      ((ph->flags & PF_X) ? R_EXEC | R_READ : 0);
    if (!rights || end <= start)
        return 0;
    if ((ph->flags & PF_W) && (ph->flags & PF_X))
        return -LX_ENOEXEC;                     /* Petrel maps nothing writable and executable */
    uint64_t file_at = n->data_off + ph->offset - (va - start);
    if (in_place && !(ph->flags & PF_W) && (file_at & (LX_PAGE - 1)) == 0 && ph->filesz == ph->memsz) {
        /* In place: the archive's own pages (bytes past the segment in its
         * last page are the file's next bytes, as on Linux). */
        return lx_vma_map(p, lx_file_mobj(), start, file_at, end - start, rights, LX_VMA_PROG) ? -LX_ENOMEM : 0;
    }
    int err;
    svc_handle m = svc_mem_create(end - start, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (!o)
        return -LX_ENOMEM;
    if (ph->filesz && (err = lx_node_copy_out(n, ph->offset, o->h, va - start, ph->filesz)) != 0)
        err = err == -LX_EFBIG || err == -LX_EIO ? err : -LX_ENOMEM;
    else
        err = lx_vma_map(p, o, start, 0, end - start, rights, LX_VMA_PROG) ? -LX_ENOMEM : 0;
    if (ph->filesz && ph->offset >= va - start)     /* its file pages: what MADV_DONTNEED reads again */
        lx_mobj_origin(o, node, ph->offset - (va - start), lx_page_up(va - start + ph->filesz));
    lx_mobj_unused(o);                          /* (never mapped: released) */
    return err;
}

/* The stack image: buf stands for [top - size, top) of the process. */
struct stack_image {
    uint8_t *buf;
    uint64_t top, size;
};

/* Lay out strings and tables from the top down (see the top of this
 * file); the initial sp, or 0 if they do not fit in the image. */
static uint64_t build_stack(struct stack_image *s, const char *execfn, char *const argv[], int argc,
                            char *const envp[], int envc, const uint64_t *aux, unsigned naux)
{
    uint64_t strings = strlen(execfn) + 1;
    for (int i = 0; i < argc; i++)
        strings += strlen(argv[i]) + 1;
    for (int i = 0; i < envc; i++)
        strings += strlen(envp[i]) + 1;
    uint64_t words = 1 + (uint64_t)argc + 1 + (uint64_t)envc + 1 + naux + 2 * 5;
    uint64_t below = ((strings + 15) & ~15ull) + 16 + 16;       /* random bytes, platform string */
    uint64_t used = ((below + words * 8 + 15) & ~15ull);
    if (used > s->size)
        return 0;
    uint8_t *img = s->buf + s->size;                            /* the image's top */
    uint64_t str = s->top - strings, sp = s->top - used;
    uint64_t random_at = s->top - ((strings + 15) & ~15ull) - 16, platform_at = random_at - 16;
    uint64_t *table = (uint64_t *)(img - used);
    uint64_t w = 0;
    table[w++] = (uint64_t)argc;
    for (int pass = 0; pass < 2; pass++) {
        char *const *list = pass ? envp : argv;
        for (int i = 0; i < (pass ? envc : argc); i++) {
            uint64_t len = strlen(list[i]) + 1;
            memcpy(img - (s->top - str), list[i], len);
            table[w++] = str;
            str += len;
        }
        table[w++] = 0;
    }
    uint64_t execfn_at = str;
    memcpy(img - (s->top - str), execfn, strlen(execfn) + 1);
    lx_random(img - (s->top - random_at), 16);
    memcpy(img - (s->top - platform_at), "aarch64", 8);
    for (unsigned i = 0; i < naux; i++)
        table[w++] = aux[i];
    table[w++] = AT_RANDOM, table[w++] = random_at;
    table[w++] = AT_HWCAP2, table[w++] = 0;
    table[w++] = AT_EXECFN, table[w++] = execfn_at;
    table[w++] = AT_PLATFORM, table[w++] = platform_at;
    table[w++] = AT_NULL, table[w++] = 0;
    return sp;
}

/* A program or interpreter file, checked and mapped. */
struct elf_image {
    uint64_t base;              /* where an ET_DYN file went (0 for ET_EXEC) */
    uint64_t entry, phdr, phnum, end;
    const char *interp;         /* its PT_INTERP path (NUL-terminated in the file), or NULL */
};

/* Check the ELF file of node `node` and map its PT_LOAD segments into p;
 * an ET_DYN file goes at `dyn_base`. 0 or a negated errno. */
static int map_elf(struct lx_proc *p, int32_t node, uint64_t dyn_base, struct elf_image *im)
{
    static struct elf64_ehdr header;
    static struct elf64_phdr phdrs[64];
    static char interp[2][LX_PATH_MAX];         /* the program's PT_INTERP path, kept while its
                                                 * interpreter is mapped (whose own goes to [1]) */
    struct lx_node *n = lx_node(node);
    const struct elf64_ehdr *eh = &header;
    int64_t wait = lx_data_prefetch(n, 0, n->size);    /* a file on the disk: all of it at hand first */
    if (wait)
        return (int)wait;
    if (n->size < sizeof(header) || lx_node_read(n, 0, &header, sizeof(header)))
        return -LX_ENOEXEC;
    int err = check_header(eh, n->size);
    if (err || lx_node_read(n, eh->phoff, phdrs, eh->phnum * sizeof(phdrs[0])))
        return err ? err : -LX_ENOEXEC;
    const struct elf64_phdr *ph = phdrs;
    char *path = interp[dyn_base == LX_INTERP_BASE];
    uint64_t base = eh->type == ET_DYN ? dyn_base : 0, phdr = 0, lo = ~0ull, hi = 0;
    im->interp = NULL;
    for (unsigned i = 0; i < eh->phnum; i++) {
        if (ph[i].type == PT_INTERP) {
            /* A path inside the file, NUL-terminated within the segment. */
            if (!elf_segment_in_file(&ph[i], n->size) || ph[i].filesz < 2 || ph[i].filesz > LX_PATH_MAX ||
                lx_node_read(n, ph[i].offset, path, ph[i].filesz) || path[ph[i].filesz - 1] != 0)
                return -LX_ENOEXEC;
            im->interp = path;
        }
        if (ph[i].type == PT_PHDR)
            phdr = base + ph[i].vaddr;
        if (ph[i].type != PT_LOAD)
            continue;
        if (!elf_segment_in_file(&ph[i], n->size) || (ph[i].offset & (LX_PAGE - 1)) != (ph[i].vaddr & (LX_PAGE - 1)) ||
            ph[i].vaddr + ph[i].memsz < ph[i].vaddr || base + ph[i].vaddr + ph[i].memsz > LX_MMAP_BOTTOM ||
            base + ph[i].vaddr < 0x10000)
            return -LX_ENOEXEC;
        if (ph[i].offset == 0 && !phdr)
            phdr = base + ph[i].vaddr + eh->phoff;
        lo = ph[i].vaddr < lo ? ph[i].vaddr : lo;
        hi = ph[i].vaddr + ph[i].memsz > hi ? ph[i].vaddr + ph[i].memsz : hi;
    }
    if (hi == 0 || base + eh->entry < base + lo || base + eh->entry >= base + hi)
        return -LX_ENOEXEC;
    for (unsigned i = 0; i < eh->phnum; i++)
        if (ph[i].type == PT_LOAD && (err = load_segment(p, node, base, &ph[i])) != 0)
            return err;
    im->base = base;
    im->entry = base + eh->entry;
    im->phdr = phdr;
    im->phnum = eh->phnum;
    im->end = base + hi;
    return 0;
}

/* The interpreter of a dynamic program: a regular file of the root
 * archive, itself static (no interpreter of its own). */
static int map_interp(struct lx_proc *p, const char *path, struct elf_image *im)
{
    int32_t node = lx_lookup(LX_ROOT, path, 1);
    if (node < 0)
        return node == -LX_ENOENT ? -LX_ENOENT : node;
    if ((lx_node(node)->mode & LX_S_IFMT) != LX_S_IFREG || lx_data_refuses(lx_node(node), LX_MS_NOEXEC))
        return -LX_EACCES;
    int err = map_elf(p, node, LX_INTERP_BASE, im);
    if (!err && (im->interp || im->base == 0))
        err = -LX_ELIBBAD;                      /* an interpreter must be position-independent and alone */
    return err;
}

int lx_load(struct lx_proc *p, int32_t node, const char *execfn, const char *exe, char *const argv[], int argc,
            char *const envp[], int envc, uint64_t *pc, uint64_t *sp)
{
    struct elf_image prog, interp = { 0 };
    int err = map_elf(p, node, LX_PIE_BASE, &prog);
    if (!err && prog.interp) {
        err = map_interp(p, prog.interp, &interp);
        if (err)
            lx_log("%s: its interpreter %s cannot be loaded: error %d", execfn, prog.interp, -err);
    }
    if (err)
        return err;
    p->brk_start = p->brk = lx_page_up(prog.end);

    /* The stack: 8 MiB filled on touch; its top pages written now. */
    if (lx_vma_fresh(p, LX_STACK_TOP - LX_STACK_SIZE, LX_STACK_SIZE, R_READ | R_WRITE, LX_VMA_STACK))
        return -LX_ENOMEM;
    static uint8_t *image;                      /* kept: every exec builds its stack here */
    if (!image)
        image = svc_alloc(LX_ARG_MAX);
    struct stack_image s = { image, LX_STACK_TOP, LX_ARG_MAX };
    if (!s.buf)
        return -LX_ENOMEM;
    const uint64_t aux[] = {
        AT_MINSIGSTKSZ, LX_MINSIGSTKSZ, AT_HWCAP, LX_HWCAP, AT_PAGESZ, LX_PAGE, AT_CLKTCK, 100,
        AT_PHDR, prog.phdr, AT_PHENT, sizeof(struct elf64_phdr), AT_PHNUM, prog.phnum, AT_BASE, interp.base,
        AT_FLAGS, 0, AT_ENTRY, prog.entry, AT_UID, 0, AT_EUID, 0, AT_GID, 0, AT_EGID, 0, AT_SECURE, 0,
    };
    *sp = build_stack(&s, execfn, argv, argc, envp, envc, aux, sizeof(aux) / sizeof(aux[0]));
    uint64_t used = LX_STACK_TOP - *sp;
    err = !*sp ? -LX_E2BIG : lx_vma_poke(p, *sp, s.buf + s.size - used, used) ? -LX_ENOMEM : 0;
    *pc = prog.interp ? interp.entry : prog.entry;
    if (!err)
        lx_procfs_exec(p, exe, argv, argc, envp, envc);
    return err;
}
