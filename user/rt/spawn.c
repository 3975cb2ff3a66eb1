/*
 * Loading a program of the boot image into a new process, without
 * copying what need not be copied: read-only segments map the boot
 * image file itself; writable segments map a copy-on-write clone of it
 * (only the pages written get copied), with the bytes past the file
 * part of the last page cleared; .bss beyond that is a lazy zero-filled
 * object. The child gets a stack, a UTCB, a start information page with
 * its arguments and the handles it was granted by name, its own space
 * and main thread handles, and starts at its entry point.
 */
#include "petrel.h"
#include "petrel_rt.h"
#include "pelf.h"

#define CHILD_STACK 0x10000ull

int64_t bootfile_find(const char *name, struct petrel_bootfile *bf)
{
    for (uint64_t i = 0; ; i++) {
        int64_t err = sys_bootfile_info(i, bf);
        if (err < 0)
            return err;
        if (strcmp(bf->name, name) == 0)
            return (int64_t)i;
    }
}

static uint64_t page_up(uint64_t x) { return (x + 4095) & ~4095ull; }

/* Map `mem` here for a moment, run fn on it, unmap. */
static int64_t with_local_map(uint32_t mem, uint64_t offset, uint64_t size, uint32_t rights, uint64_t *va)
{
    *va = va_alloc(size, 4096);
    return sys_mem_map(self_space(), mem, *va, offset, size, rights);
}

/* Check the ELF header and program headers of a file mapped at `img`. */
static int64_t check_elf(const uint8_t *img, uint64_t size, const struct elf64_phdr **ph)
{
    const struct elf64_ehdr *eh = (const void *)img;
    if (elf_check_header(eh, size) != 0)
        return -E_BADFORMAT;
    *ph = (const void *)(img + eh->phoff);
    for (unsigned i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *p = &(*ph)[i];
        if (p->type != PT_LOAD)
            continue;
        if (!elf_segment_in_file(p, size) || (p->offset & 4095) != (p->vaddr & 4095) ||
            ((p->flags & PF_W) && (p->flags & PF_X)))
            return -E_BADFORMAT;       /* file pages are mapped: offsets must match addresses */
    }
    return 0;
}

/* One PT_LOAD segment of `file` into space `sp`. */
static int64_t load_segment(uint32_t sp, uint32_t file, const struct elf64_phdr *p)
{
    uint64_t start = p->vaddr & ~4095ull, foff = p->offset & ~4095ull;
    uint64_t file_end = page_up(p->vaddr + p->filesz), mem_end = page_up(p->vaddr + p->memsz);
    uint32_t rights = R_READ | ((p->flags & PF_W) ? R_WRITE : 0) | ((p->flags & PF_X) ? R_EXEC : 0);
    int64_t err = 0;
    if (file_end > start) {
        uint32_t obj = file;
        if (p->flags & PF_W) {
            int64_t c = sys_mem_clone(file);
            if (c < 0)
                return c;
            obj = (uint32_t)c;
            uint64_t tail = p->vaddr + p->filesz;
            if (tail & 4095) {
                /* Clear what follows the file bytes in their last page. */
                uint64_t va;
                err = with_local_map(obj, foff + (tail & ~4095ull) - start, 4096, R_READ | R_WRITE, &va);
                if (!err) {
                    memset((uint8_t *)va + (tail & 4095), 0, 4096 - (tail & 4095));
                    sys_mem_unmap(self_space(), va);
                }
                va_free(va, 4096);
            }
        }
        if (!err)
            err = sys_mem_map(sp, obj, start, foff, file_end - start, rights);
        if (obj != file)
            sys_handle_close(obj);
        if (err)
            return err;
    }
    if (mem_end > file_end) {
        int64_t bss = sys_mem_create(mem_end - MAX(file_end, start), 0);
        if (bss < 0)
            return bss;
        err = sys_mem_map(sp, (uint32_t)bss, MAX(file_end, start), 0, mem_end - MAX(file_end, start), rights);
        sys_handle_close((uint32_t)bss);
    }
    return err;
}

/* Give handle h to the child and note it in the start information. */
static int64_t grant(uint32_t sp, struct petrel_startinfo *si, const char *name, uint32_t h, uint32_t rights)
{
    if (si->nhandles == STARTINFO_HANDLES)
        return -E_NOMEM;
    int64_t v = sys_handle_give(sp, h, rights);
    if (v < 0)
        return v;
    unsigned i = si->nhandles++;
    memcpy(si->handles[i].name, name, strnlen(name, sizeof(si->handles[i].name) - 1));
    si->handles[i].value = (uint32_t)v;
    si->handles[i].rights = rights;
    return 0;
}

static int64_t build(const struct spawn_req *req, uint32_t file, uint64_t fsize, struct spawn_result *out)
{
    uint64_t img;
    int64_t err = with_local_map(file, 0, page_up(fsize), R_READ, &img);
    if (err) {
        va_free(img, page_up(fsize));
        return err;
    }
    const struct elf64_phdr *ph;
    const struct elf64_ehdr *eh = (const void *)img;
    err = check_elf((const uint8_t *)img, fsize, &ph);
    for (unsigned i = 0; !err && i < eh->phnum; i++)
        if (ph[i].type == PT_LOAD)
            err = load_segment(out->space, file, &ph[i]);
    uint64_t entry = eh->entry;
    sys_mem_unmap(self_space(), img);
    va_free(img, page_up(fsize));
    if (err)
        return err;

    int64_t stack = sys_mem_create(CHILD_STACK, 0);
    if (stack < 0)
        return stack;
    err = sys_mem_map(out->space, (uint32_t)stack, PETREL_USER_STACK_TOP - CHILD_STACK, 0, CHILD_STACK, R_READ | R_WRITE);
    sys_handle_close((uint32_t)stack);
    if (err)
        return err;

    int64_t t = sys_thread_create(out->space, PETREL_ROOT_UTCB_VA);
    if (t < 0)
        return t;
    out->thread = (uint32_t)t;

    uint32_t info;
    struct petrel_startinfo *si = mem_alloc(4096, 0, &info);
    if (!si)
        return -E_NOMEM;
    si->magic = PETREL_STARTINFO_MAGIC;
    memcpy(si->name, req->program, strnlen(req->program, sizeof(si->name) - 1));
    if (req->args)
        memcpy(si->args, req->args, strnlen(req->args, sizeof(si->args) - 1));
    err = grant(out->space, si, "space", out->space, R_ALL);
    if (!err)
        err = grant(out->space, si, "thread", out->thread, R_ALL);
    for (unsigned i = 0; !err && i < req->ngrants; i++)
        err = grant(out->space, si, req->grants[i].name, req->grants[i].handle, req->grants[i].rights);
    if (!err)
        err = sys_mem_map(out->space, info, PETREL_BOOTINFO_VA, 0, 4096, R_READ);
    sys_mem_unmap(self_space(), (uint64_t)si);
    va_free((uint64_t)si, 4096);
    sys_handle_close(info);
    if (err)
        return err;

    if (req->prio)
        err = sys_thread_set_priority(out->thread, req->prio);
    if (!err && req->cpu >= 0)
        err = sys_thread_set_affinity(out->thread, (uint64_t)req->cpu);
    if (!err && req->fault_ep)
        err = sys_thread_set_fault_handler(out->thread, req->fault_ep);
    if (!err)
        err = sys_thread_start(out->thread, entry, PETREL_USER_STACK_TOP, PETREL_BOOTINFO_VA);
    return err;
}

int64_t spawn(const struct spawn_req *req, struct spawn_result *out)
{
    struct petrel_bootfile bf;
    int64_t index = bootfile_find(req->program, &bf);
    if (index < 0)
        return index;
    if (!(bf.flags & 1))
        return -E_BADFORMAT;
    int64_t file = sys_mem_from_bootfile(root_handle(), (uint64_t)index);
    if (file < 0)
        return file;
    int64_t sp = sys_space_create();
    if (sp < 0) {
        sys_handle_close((uint32_t)file);
        return sp;
    }
    out->space = (uint32_t)sp;
    out->thread = 0;
    /* The limits hold from the start: building the process is charged too. */
    const uint64_t limits[LIMIT_KINDS] = { req->mem_limit, req->max_threads, req->max_handles, req->max_spaces };
    int64_t err = 0;
    for (unsigned k = 0; k < LIMIT_KINDS && !err; k++)
        err = limits[k] ? MIN(sys_space_set_limit((uint32_t)sp, k, limits[k]), 0) : 0;
    if (!err)
        err = build(req, (uint32_t)file, bf.size, out);
    sys_handle_close((uint32_t)file);
    if (err) {
        if (out->thread) {
            sys_thread_kill(out->thread);
            sys_handle_close(out->thread);
        }
        sys_handle_close(out->space);
        return err;
    }
    out->pid = (uint64_t)sys_space_id(out->space);
    return 0;
}
