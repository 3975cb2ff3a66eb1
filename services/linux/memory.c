/*
 * A Linux process's memory: the heap (brk) and anonymous or private file
 * mappings (mmap, munmap).
 *
 * Every piece of memory is a fresh zero-filled memory object made for it,
 * mapped, and its handle released at once: the mapping alone keeps it, so
 * unmapping (munmap, a shrinking brk) frees it, and memory mapped again
 * reads as zeros, as Linux promises. Pages are filled on first touch.
 *
 * The personality keeps the list of mmap regions of each process (to
 * place new ones and to honour MAP_FIXED_NOREPLACE); the kernel keeps the
 * mappings themselves. Mappings are placed top-down below the stack.
 */
#include "lx.h"

#define PROT_READ       1
#define PROT_WRITE      2
#define PROT_EXEC       4
#define MAP_SHARED      0x01
#define MAP_PRIVATE     0x02
#define MAP_SHARED_VALIDATE 0x03
#define MAP_TYPE        0x0f
#define MAP_FIXED       0x10
#define MAP_ANONYMOUS   0x20
#define MAP_FIXED_NOREPLACE 0x100000
#define MAP_KNOWN       (MAP_TYPE | MAP_FIXED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | 0x100 /* GROWSDOWN */ | \
                         0x800 /* DENYWRITE */ | 0x1000 /* EXECUTABLE */ | 0x2000 /* LOCKED */ | \
                         0x4000 /* NORESERVE */ | 0x8000 /* POPULATE */ | 0x10000 /* NONBLOCK */ | \
                         0x20000 /* STACK */ | 0x40000 /* HUGETLB */ | 0x80000 /* SYNC */)
#define LX_EEXIST_MAP   LX_EEXIST

/* Fresh zeroed memory at [va, va + size) of p with `rights`; 0 or -ENOMEM. */
static int map_fresh(struct lx_proc *p, uint64_t va, uint64_t size, uint32_t rights)
{
    int err;
    svc_handle m = svc_mem_create(size, &err);
    if (!m)
        return -LX_ENOMEM;
    err = svc_mem_map(p->space, m, va, 0, size, rights);
    svc_handle_release(m);
    return err ? -LX_ENOMEM : 0;
}

/* Does [start, end) overlap an mmap region of p, its heap's reach or its stack? */
static int taken(struct lx_proc *p, uint64_t start, uint64_t end)
{
    for (unsigned i = 0; i < p->nregions; i++)
        if (start < p->regions[i].end && p->regions[i].start < end)
            return 1;
    if (start < p->brk_start + LX_BRK_MAX && end > p->brk_start - LX_BRK_MAX)
        return 1;                               /* the program and the room its heap may grow into */
    return end > LX_STACK_TOP - LX_STACK_SIZE;
}

/* Take [start, end) out of p's region list (splitting one around it);
 * -ENOMEM if a split needs a slot there is not. */
static int regions_remove(struct lx_proc *p, uint64_t start, uint64_t end)
{
    for (unsigned i = 0; i < p->nregions; i++) {
        struct lx_region *r = &p->regions[i];
        if (end <= r->start || r->end <= start)
            continue;
        if (r->start < start && end < r->end) {
            if (p->nregions == LX_REGIONS)
                return -LX_ENOMEM;
            p->regions[p->nregions++] = (struct lx_region){ end, r->end };
            r->end = start;
        } else if (r->start < start) {
            r->end = start;
        } else if (end < r->end) {
            r->start = end;
        } else {
            p->regions[i--] = p->regions[--p->nregions];
        }
    }
    return 0;
}

/* The highest free gap of `len` bytes below LX_MMAP_TOP, or 0. */
static uint64_t find_gap(struct lx_proc *p, uint64_t len)
{
    uint64_t top = LX_MMAP_TOP;
    while (top >= LX_MMAP_BOTTOM + len) {
        uint64_t start = top - len, lowest = top;
        for (unsigned i = 0; i < p->nregions; i++)
            if (start < p->regions[i].end && p->regions[i].start < top && p->regions[i].start < lowest)
                lowest = p->regions[i].start;
        if (lowest == top && !taken(p, start, top))
            return start;
        if (lowest == top)
            return 0;                           /* the heap is in the way: nothing lower is tried */
        top = lowest;
    }
    return 0;
}

int64_t lx_sys_brk(struct lx_ctx *c, uint64_t addr)
{
    struct lx_proc *p = c->p;
    if (addr < p->brk_start || addr > p->brk_start + LX_BRK_MAX)
        return (int64_t)p->brk;
    uint64_t old_end = lx_page_up(p->brk), new_end = lx_page_up(addr);
    if (new_end > old_end) {
        for (unsigned i = 0; i < p->nregions; i++)
            if (old_end < p->regions[i].end && p->regions[i].start < new_end)
                return (int64_t)p->brk;         /* a mapping is in the way */
        if (map_fresh(p, old_end, new_end - old_end, R_READ | R_WRITE))
            return (int64_t)p->brk;
    } else if (new_end < old_end) {
        svc_mem_unmap(p->space, new_end, old_end - new_end);
    }
    p->brk = addr;
    return (int64_t)addr;
}

int64_t lx_sys_mmap(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int64_t fd,
                    uint64_t off)
{
    struct lx_proc *p = c->p;
    uint32_t fl = (uint32_t)flags, type = fl & MAP_TYPE;
    if (len == 0 || (off & (LX_PAGE - 1)))
        return -LX_EINVAL;
    if (type != MAP_SHARED && type != MAP_PRIVATE && type != MAP_SHARED_VALIDATE)
        return -LX_EINVAL;
    if (type == MAP_SHARED_VALIDATE && (fl & ~(uint32_t)MAP_KNOWN))
        return -LX_EINVAL;
    uint64_t size = lx_page_up(len);
    if (size < len || size > LX_MMAP_TOP - LX_MMAP_BOTTOM)
        return -LX_ENOMEM;
    if ((prot & PROT_WRITE) && (prot & PROT_EXEC))
        return -LX_EACCES;                      /* Petrel never maps memory writable and executable */
    struct lx_node *file = NULL;
    if (!(fl & MAP_ANONYMOUS)) {
        struct lx_file *f = (int32_t)fd >= 0 && (uint32_t)fd < LX_FDS ? p->fds[(uint32_t)fd] : NULL;
        if (!f)
            return -LX_EBADF;
        file = lx_node(f->node);
        if ((file->mode & LX_S_IFMT) != LX_S_IFREG)
            return -LX_ENODEV;
        if (type != MAP_PRIVATE && (prot & PROT_WRITE))
            return -LX_EACCES;                  /* the root is read-only */
    }
    uint64_t va;
    if (fl & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
        va = addr;
        if ((va & (LX_PAGE - 1)) || va < 0x10000 || va + size < va || va + size > LX_UTCB_VA)
            return (va & (LX_PAGE - 1)) ? -LX_EINVAL : -LX_ENOMEM;
        if ((fl & MAP_FIXED_NOREPLACE) && !(fl & MAP_FIXED) && taken(p, va, va + size))
            return -LX_EEXIST_MAP;
    } else {
        va = addr & ~(LX_PAGE - 1);
        if (!va || va < LX_MMAP_BOTTOM || va + size > LX_MMAP_TOP || va + size < va || taken(p, va, va + size))
            va = find_gap(p, size);
        if (!va)
            return -LX_ENOMEM;
    }
    if (p->nregions == LX_REGIONS)
        return -LX_ENOMEM;
    if (fl & MAP_FIXED) {                       /* replaces whatever was there */
        if (regions_remove(p, va, va + size))
            return -LX_ENOMEM;
        svc_mem_unmap(p->space, va, size);
    }
    uint32_t rights = ((prot & PROT_READ) ? R_READ : 0) | ((prot & PROT_WRITE) ? R_READ | R_WRITE : 0) |
                      ((prot & PROT_EXEC) ? R_READ | R_EXEC : 0);
    if (rights) {
        int err;
        svc_handle m = svc_mem_create(size, &err);
        if (!m)
            return -LX_ENOMEM;
        err = 0;
        if (file && off < file->size) {         /* a private copy: the root never changes under it */
            uint64_t n = file->size - off < size ? file->size - off : size;
            err = svc_mem_write(m, 0, lx_fs_data() + file->data_off + off, n);
        }
        if (!err)
            err = svc_mem_map(p->space, m, va, 0, size, rights);
        svc_handle_release(m);
        if (err)
            return -LX_ENOMEM;
    }
    /* PROT_NONE: the region is reserved, nothing is mapped (every touch faults). */
    p->regions[p->nregions++] = (struct lx_region){ va, va + size };
    return (int64_t)va;
}

int64_t lx_sys_munmap(struct lx_ctx *c, uint64_t addr, uint64_t len)
{
    struct lx_proc *p = c->p;
    uint64_t size = lx_page_up(len);
    if ((addr & (LX_PAGE - 1)) || len == 0 || size < len || addr + size < addr || addr + size > LX_TASK_SIZE)
        return -LX_EINVAL;                      /* Linux's rules: nothing is mapped past Petrel's end */
    uint64_t end = addr + size < LX_UTCB_VA ? addr + size : LX_UTCB_VA;
    if (addr >= end)
        return 0;
    if (regions_remove(p, addr, end))
        return -LX_ENOMEM;
    svc_mem_unmap(p->space, addr, end - addr);
    return 0;
}
