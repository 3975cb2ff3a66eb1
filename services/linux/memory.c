/*
 * A Linux process's memory: the program, the heap (brk), the stack and
 * mmap regions, each a mapped range (struct lx_vma) of a memory object.
 *
 * Every piece of anonymous memory is a fresh zero-filled object made for
 * it, so memory mapped again reads as zeros, as Linux promises; pages are
 * filled on first touch. The personality keeps each object's handle
 * (struct lx_mobj, shared by the ranges a munmap or mprotect cut from one
 * mapping) and each process's ranges: it places new mappings with them,
 * and fork gives the child a copy-on-write clone of every object, mapped
 * at the same addresses. The kernel keeps the mappings themselves.
 *
 * The heap grows through objects of at least LX_HEAP_CHUNK bytes, mapped
 * a piece at a time as the break moves, so a program that moves it a page
 * at a time makes one range, not thousands. Growing again over a part
 * that was given back takes a new object (zeros).
 */
#include "lx.h"

#define PROT_READ       1
#define PROT_WRITE      2
#define PROT_EXEC       4
#define PROT_GROWSDOWN  0x01000000
#define PROT_GROWSUP    0x02000000
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

static struct lx_mobj mobjs[LX_MOBJS];
static struct lx_mobj file_obj = { 0, 1, 1 };

struct lx_mobj *lx_file_mobj(void)
{
    file_obj.h = lx_fs_object();
    return &file_obj;
}

struct lx_mobj *lx_mobj_new(svc_handle h, int file)
{
    for (int i = 0; i < LX_MOBJS; i++) {
        if (!mobjs[i].h) {
            mobjs[i] = (struct lx_mobj){ h, 0, (uint8_t)file };
            return &mobjs[i];
        }
    }
    svc_handle_release(h);
    return NULL;
}

/* One range stopped using o: the last one releases it. */
static void mobj_put(struct lx_mobj *o)
{
    if (!o || o->file || --o->refs)
        return;
    svc_handle_release(o->h);
    o->h = 0;
}

/* A record nothing came to use (a failed mapping) is released. */
static void mobj_unused(struct lx_mobj *o)
{
    if (o && !o->file && !o->refs) {
        svc_handle_release(o->h);
        o->h = 0;
    }
}

static uint32_t rights_of(uint64_t prot)
{
    return ((prot & PROT_READ) ? R_READ : 0) | ((prot & PROT_WRITE) ? R_READ | R_WRITE : 0) |
           ((prot & PROT_EXEC) ? R_READ | R_EXEC : 0);
}

/* Record a range (merged into the one before it when it continues it). */
static int vma_add(struct lx_proc *p, struct lx_vma v)
{
    for (unsigned i = 0; i < p->nvmas; i++) {
        struct lx_vma *w = &p->vmas[i];
        if (w->end == v.start && w->obj == v.obj && v.obj && w->off + (w->end - w->start) == v.off &&
            w->rights == v.rights && w->kind == v.kind) {
            w->end = v.end;
            mobj_put(v.obj);                    /* one range holds it once */
            return 0;
        }
    }
    if (p->nvmas == LX_VMAS)
        return -LX_ENOMEM;
    p->vmas[p->nvmas++] = v;
    return 0;
}

int lx_vma_map(struct lx_proc *p, struct lx_mobj *obj, uint64_t va, uint64_t off, uint64_t size, uint32_t rights,
               int kind)
{
    if (p->nvmas == LX_VMAS)
        return -LX_ENOMEM;
    if (obj && rights && svc_mem_map(p->space, obj->h, va, off, size, rights))
        return -LX_ENOMEM;
    if (obj)
        obj->refs++;
    return vma_add(p, (struct lx_vma){ va, va + size, off, obj, rights, (uint8_t)kind });
}

int lx_vma_fresh(struct lx_proc *p, uint64_t va, uint64_t size, uint32_t rights, int kind)
{
    int err;
    svc_handle m = svc_mem_create(size, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (!o)
        return -LX_ENOMEM;
    err = lx_vma_map(p, o, va, 0, size, rights, kind);
    mobj_unused(o);
    return err;
}

void lx_vmas_drop(struct lx_proc *p)
{
    for (unsigned i = 0; i < p->nvmas; i++)
        mobj_put(p->vmas[i].obj);
    p->nvmas = 0;
    p->heap_obj = NULL;
    p->heap_va = p->heap_end = p->heap_top = 0;
}

/* How many new records cutting the ranges at start and at end takes
 * (one for each address strictly inside a range). */
static unsigned splits(struct lx_proc *p, uint64_t start, uint64_t end)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->nvmas; i++)
        n += (p->vmas[i].start < start && start < p->vmas[i].end) + (p->vmas[i].start < end && end < p->vmas[i].end);
    return n;
}

/* Cut the ranges at address a (so that none crosses it); -ENOMEM without a slot. */
static int split_at(struct lx_proc *p, uint64_t a)
{
    for (unsigned i = 0; i < p->nvmas; i++) {
        struct lx_vma *v = &p->vmas[i];
        if (v->start < a && a < v->end) {
            if (p->nvmas == LX_VMAS)
                return -LX_ENOMEM;
            struct lx_vma hi = *v;
            hi.off += a - v->start;
            hi.start = a;
            v->end = a;
            if (hi.obj)
                hi.obj->refs++;
            p->vmas[p->nvmas++] = hi;
            return 0;
        }
    }
    return 0;
}

/* Take [start, end) out of p's ranges (the kernel's mappings are the
 * caller's); -ENOMEM, changing nothing, if a split needs a slot there is not. */
static int vmas_remove(struct lx_proc *p, uint64_t start, uint64_t end)
{
    if (p->nvmas + splits(p, start, end) > LX_VMAS)
        return -LX_ENOMEM;
    split_at(p, start);
    split_at(p, end);
    for (unsigned i = 0; i < p->nvmas; i++) {
        struct lx_vma *v = &p->vmas[i];
        if (start <= v->start && v->end <= end) {
            mobj_put(v->obj);
            p->vmas[i--] = p->vmas[--p->nvmas];
        }
    }
    return 0;
}

/* Does [start, end) overlap a range of p, its heap's reach or its stack? */
static int taken(struct lx_proc *p, uint64_t start, uint64_t end)
{
    for (unsigned i = 0; i < p->nvmas; i++)
        if (start < p->vmas[i].end && p->vmas[i].start < end)
            return 1;
    if (start < p->brk_start + LX_BRK_MAX && end > p->brk_start - LX_BRK_MAX)
        return 1;                               /* the program and the room its heap may grow into */
    return end > LX_STACK_TOP - LX_STACK_SIZE;
}

/* The highest free gap of `len` bytes below LX_MMAP_TOP, or 0. */
static uint64_t find_gap(struct lx_proc *p, uint64_t len)
{
    uint64_t top = LX_MMAP_TOP;
    while (top >= LX_MMAP_BOTTOM + len) {
        uint64_t start = top - len, lowest = top;
        for (unsigned i = 0; i < p->nvmas; i++)
            if (start < p->vmas[i].end && p->vmas[i].start < top && p->vmas[i].start < lowest)
                lowest = p->vmas[i].start;
        if (lowest == top && !taken(p, start, top))
            return start;
        if (lowest == top)
            return 0;                           /* the heap is in the way: nothing lower is tried */
        top = lowest;
    }
    return 0;
}

/* Map [from, to) of the heap: on from the current object if it continues
 * it, else from a new one. */
static int heap_grow(struct lx_proc *p, uint64_t from, uint64_t to)
{
    if (!p->heap_obj || from != p->heap_end || to > p->heap_top) {
        uint64_t size = to - from > LX_HEAP_CHUNK ? to - from : LX_HEAP_CHUNK;
        int err;
        svc_handle m = svc_mem_create(size, &err);
        struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
        if (!o)
            return -LX_ENOMEM;
        err = lx_vma_map(p, o, from, 0, to - from, R_READ | R_WRITE, LX_VMA_HEAP);
        mobj_unused(o);
        if (err)
            return err;
        p->heap_obj = o;
        p->heap_va = from;
        p->heap_top = from + size;
    } else if (lx_vma_map(p, p->heap_obj, from, from - p->heap_va, to - from, R_READ | R_WRITE, LX_VMA_HEAP)) {
        return -LX_ENOMEM;
    }
    p->heap_end = to;
    return 0;
}

int64_t lx_sys_brk(struct lx_ctx *c, uint64_t addr)
{
    struct lx_proc *p = c->p;
    if (addr < p->brk_start || addr > p->brk_start + LX_BRK_MAX)
        return (int64_t)p->brk;
    uint64_t old_end = lx_page_up(p->brk), new_end = lx_page_up(addr);
    if (new_end > old_end) {
        for (unsigned i = 0; i < p->nvmas; i++)
            if (old_end < p->vmas[i].end && p->vmas[i].start < new_end)
                return (int64_t)p->brk;         /* a mapping is in the way */
        if (heap_grow(p, old_end, new_end))
            return (int64_t)p->brk;
    } else if (new_end < old_end) {
        if (vmas_remove(p, new_end, old_end))
            return (int64_t)p->brk;
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
        if (f->node < 0)
            return -LX_ENODEV;                  /* a pipe */
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
            return -LX_EEXIST;
    } else {
        va = addr & ~(LX_PAGE - 1);
        if (!va || va < LX_MMAP_BOTTOM || va + size > LX_MMAP_TOP || va + size < va || taken(p, va, va + size))
            va = find_gap(p, size);
        if (!va)
            return -LX_ENOMEM;
    }
    if (p->nvmas == LX_VMAS)
        return -LX_ENOMEM;
    if (fl & MAP_FIXED) {                       /* replaces whatever was there */
        if (vmas_remove(p, va, va + size))
            return -LX_ENOMEM;
        svc_mem_unmap(p->space, va, size);
        if (p->nvmas == LX_VMAS)
            return -LX_ENOMEM;
    }
    uint32_t rights = rights_of(prot);
    if (!file && !rights)                       /* reserved: an object only for what mprotect opens later */
        return lx_vma_map(p, NULL, va, 0, size, 0, LX_VMA_MMAP) ? -LX_ENOMEM : (int64_t)va;
    if (!file)
        return lx_vma_fresh(p, va, size, rights, LX_VMA_MMAP) ? -LX_ENOMEM : (int64_t)va;
    /* A private copy of the file (the root never changes under it). */
    int err;
    svc_handle m = svc_mem_create(size, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (!o)
        return -LX_ENOMEM;
    err = 0;
    if (off < file->size) {
        uint64_t n = file->size - off < size ? file->size - off : size;
        err = svc_mem_write(o->h, 0, lx_node_data(file) + off, n);
    }
    if (!err)
        err = lx_vma_map(p, o, va, 0, size, rights, LX_VMA_MMAP);
    mobj_unused(o);
    return err ? -LX_ENOMEM : (int64_t)va;
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
    if (vmas_remove(p, addr, end))
        return -LX_ENOMEM;
    svc_mem_unmap(p->space, addr, end - addr);
    return 0;
}

/* Every page of [start, end) in one of p's ranges? */
static int covered(struct lx_proc *p, uint64_t start, uint64_t end)
{
    while (start < end) {
        unsigned i = 0;
        while (i < p->nvmas && !(p->vmas[i].start <= start && start < p->vmas[i].end))
            i++;
        if (i == p->nvmas)
            return 0;
        start = p->vmas[i].end;
    }
    return 1;
}

int64_t lx_sys_mprotect(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot)
{
    struct lx_proc *p = c->p;
    if ((addr & (LX_PAGE - 1)) || (prot & ~(uint64_t)(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN |
                                                       PROT_GROWSUP)))
        return -LX_EINVAL;
    if ((prot & PROT_GROWSDOWN) && (prot & PROT_GROWSUP))
        return -LX_EINVAL;
    uint64_t size = lx_page_up(len), end = addr + size;
    if (size < len || end < addr)
        return -LX_ENOMEM;
    if (size == 0)
        return 0;
    if (!covered(p, addr, end))
        return -LX_ENOMEM;
    if ((prot & PROT_WRITE) && (prot & PROT_EXEC))
        return -LX_EACCES;                      /* never writable and executable */
    if (p->nvmas + splits(p, addr, end) > LX_VMAS)
        return -LX_ENOMEM;
    split_at(p, addr);
    split_at(p, end);
    uint32_t rights = rights_of(prot);
    int64_t result = 0;
    for (unsigned i = 0; i < p->nvmas; i++) {
        struct lx_vma *v = &p->vmas[i];
        if (v->start < addr || v->end > end || v->rights == rights)
            continue;
        uint64_t n = v->end - v->start;
        int err = 0;
        if (!v->obj) {                          /* reserved (PROT_NONE): fresh memory from now on */
            int err2;
            svc_handle m = svc_mem_create(n, &err2);
            struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
            if (!o || svc_mem_map(p->space, o->h, v->start, 0, n, rights))
                err = -LX_ENOMEM;
            else
                o->refs++, v->obj = o, v->off = 0;
            mobj_unused(o);
        } else if (!rights) {
            err = svc_mem_unmap(p->space, v->start, n) ? -LX_ENOMEM : 0;
        } else if (!v->rights) {
            err = svc_mem_map(p->space, v->obj->h, v->start, v->off, n, rights) ? -LX_EACCES : 0;
        } else {
            err = svc_mem_protect(p->space, v->start, n, rights) ? -LX_EACCES : 0;
        }
        if (err)
            result = err;
        else
            v->rights = rights;
    }
    return result;
}

int lx_vmas_fork(struct lx_proc *p, struct lx_proc *child)
{
    static struct { struct lx_mobj *from, *to; } clones[LX_VMAS];
    unsigned nclones = 0;
    for (unsigned i = 0; i < p->nvmas; i++) {
        struct lx_vma v = p->vmas[i];
        struct lx_mobj *to = v.obj;
        if (v.obj && !v.obj->file) {
            to = NULL;
            for (unsigned k = 0; k < nclones && !to; k++)
                if (clones[k].from == v.obj)
                    to = clones[k].to;
            if (!to) {
                int err;
                svc_handle m = svc_mem_clone(v.obj->h, &err);
                if (!m || !(to = lx_mobj_new(m, 0)))
                    return -LX_ENOMEM;
                clones[nclones].from = v.obj;
                clones[nclones++].to = to;
            }
        }
        int err = lx_vma_map(child, to, v.start, v.off, v.end - v.start, v.rights, v.kind);
        if (to)
            mobj_unused(to);
        if (err)
            return err;
        if (v.obj == p->heap_obj && v.obj)
            child->heap_obj = to;
    }
    child->brk_start = p->brk_start;
    child->brk = p->brk;
    child->heap_va = p->heap_va;
    child->heap_end = child->heap_obj ? p->heap_end : 0;
    child->heap_top = p->heap_top;
    return 0;
}

int lx_vma_poke(struct lx_proc *p, uint64_t va, const void *src, uint64_t len)
{
    for (unsigned i = 0; i < p->nvmas; i++) {
        struct lx_vma *v = &p->vmas[i];
        if (v->start <= va && va + len <= v->end && va + len >= va) {
            if (!v->obj || v->obj->file || !(v->rights & R_WRITE))
                return -LX_EFAULT;
            return svc_mem_write(v->obj->h, v->off + (va - v->start), src, len) ? -LX_EFAULT : 0;
        }
    }
    return -LX_EFAULT;
}

int lx_vma_has(struct lx_proc *p, uint64_t va)
{
    for (unsigned i = 0; i < p->nvmas; i++)
        if (p->vmas[i].start <= va && va < p->vmas[i].end)
            return 1;
    return 0;
}
