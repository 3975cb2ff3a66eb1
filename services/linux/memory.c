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
 *
 * A MAP_SHARED mapping of a file maps the file's own object (rootfs.c,
 * lx_node_share), which holds its contents for read and write too; a
 * range of it maps only the pages the file reaches (lx_mobj_span), and
 * follows the file as it grows and shrinks (lx_file_resized), so a touch
 * of a page wholly past the end faults to us and is SIGBUS, as on Linux.
 * A private mapping of such a file is a copy-on-write clone of it.
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
#define MAP_NORESERVE   0x4000
/* Linux's LEGACY_MAP_MASK: the flags a MAP_SHARED_VALIDATE file mapping takes. */
#define MAP_LEGACY      (MAP_TYPE | MAP_FIXED | MAP_ANONYMOUS | 0x100 /* GROWSDOWN */ | 0x800 /* DENYWRITE */ | \
                         0x1000 /* EXECUTABLE */ | 0x2000 /* LOCKED */ | 0x4000 /* NORESERVE */ | \
                         0x8000 /* POPULATE */ | 0x10000 /* NONBLOCK */ | 0x20000 /* STACK */ | \
                         0x40000 /* HUGETLB */ | 0x4000000 /* UNINITIALIZED */)

static struct lx_mobj file_obj = { .refs = 1, .file = 1, .node = -1 };
static uint32_t mobjs_live;                     /* records of lx_mobj_new not freed yet */

uint32_t lx_mobjs_in_use(void)
{
    return mobjs_live;
}

struct lx_mobj *lx_file_mobj(void)
{
    file_obj.h = lx_fs_object();
    return &file_obj;
}

struct lx_mobj *lx_mobj_new(svc_handle h, int file)
{
    struct lx_mobj *o = lx_alloc(sizeof(*o));
    if (!o) {
        svc_handle_release(h);
        return NULL;
    }
    o->h = h;
    o->file = (uint8_t)file;
    o->node = -1;
    mobjs_live++;
    return o;
}

/* Give o's record back (its handle and file are released already). */
static void mobj_free(struct lx_mobj *o)
{
    lx_free(o, sizeof(*o));
    mobjs_live--;
}

struct lx_mobj *lx_mobj_of_file(svc_handle h, int32_t node)
{
    struct lx_mobj *o = lx_mobj_new(h, 0);
    if (o) {
        o->shared = 1;
        o->of_file = 1;
        o->node = node;
    }
    return o;
}

void lx_mobj_file_gone(struct lx_mobj *o)
{
    if (!o || !o->of_file || o->refs)
        return;
    svc_handle_release(o->h);
    mobj_free(o);
}

/* The bytes of len from off that a file reaching `reach` bytes (the end
 * of its last page) has. */
static uint64_t reach_span(uint64_t reach, uint64_t off, uint64_t len)
{
    if (off >= reach)
        return 0;
    return reach - off < len ? reach - off : len;
}

uint64_t lx_mobj_span(const struct lx_mobj *o, uint64_t off, uint64_t len)
{
    if (!o || !o->of_file)
        return len;
    const struct lx_node *n = lx_node(o->node);
    return reach_span(n ? lx_page_up(n->size) : 0, off, len);
}

void lx_file_resized(const struct lx_node *n, uint64_t old)
{
    uint64_t was = lx_page_up(old), now = lx_page_up(n->size);
    if (!n->obj || was == now)
        return;
    for (struct lx_proc *p = lx_procs(); p; p = p->next) {
        for (const struct lx_vma *v = p->used ? lx_vma_first(p) : NULL; v; v = lx_vma_next(v)) {
            if (v->obj != n->obj || !v->rights)
                continue;
            uint64_t len = v->node.size, a = reach_span(was, v->off, len), b = reach_span(now, v->off, len);
            if (b > a)                          /* grown: the new pages mapped beside the old */
                svc_mem_map(p->space, v->obj->h, v->node.start + a, v->off + a, b - a, v->rights);
            else if (a > b)                     /* shrunk: the pages past the end go (SIGBUS) */
                svc_mem_unmap(p->space, v->node.start + b, a - b);
        }
    }
}

int lx_vma_file_page(struct lx_proc *p, uint64_t va, uint32_t need)
{
    const struct lx_vma *v = lx_vma_at(p, va);
    if (!v || !v->obj || !v->obj->of_file || (v->rights & need) != need)
        return -1;
    return va - v->node.start < lx_mobj_span(v->obj, v->off, v->node.size);
}

void lx_mobj_origin(struct lx_mobj *o, int32_t node, uint64_t foff, uint64_t fend)
{
    if (o->node >= 0 || !lx_node(node) || foff > UINT32_MAX || fend > UINT32_MAX)
        return;                                 /* (too large to say: treated as anonymous) */
    lx_node(node)->opens++;
    o->node = node;
    o->foff = (uint32_t)foff;
    o->fend = (uint32_t)fend;
}

/* The handle and the file of o go, and its record. */
static void mobj_release(struct lx_mobj *o)
{
    svc_handle_release(o->h);
    if (o->node >= 0) {
        struct lx_node *n = lx_node(o->node);
        if (n && n->opens) {
            n->opens--;
            lx_node_maybe_free(o->node);
        }
    }
    mobj_free(o);
}

/* One range stopped using o: the last one releases it (a file's own
 * object stays with its node, which may go now: an unlinked file). */
static void mobj_put(struct lx_mobj *o)
{
    if (!o || o->file || --o->refs)
        return;
    if (o->of_file)
        lx_node_maybe_free(o->node);
    else
        mobj_release(o);
}

void lx_mobj_unused(struct lx_mobj *o)
{
    if (o && !o->file && !o->of_file && !o->refs)
        mobj_release(o);
}

/* Range v of p stops using its object (the heap forgets an object it
 * held the last reference to, so that brk never maps it again). */
static void vma_drop_obj(struct lx_proc *p, struct lx_vma *v)
{
    if (v->obj && v->obj == p->heap_obj && v->obj->refs == 1)
        p->heap_obj = NULL;
    mobj_put(v->obj);
    v->obj = NULL;
}

static uint32_t rights_of(uint64_t prot)
{
    return ((prot & PROT_READ) ? R_READ : 0) | ((prot & PROT_WRITE) ? R_READ | R_WRITE : 0) |
           ((prot & PROT_EXEC) ? R_READ | R_EXEC : 0);
}

/* ---------------------------------------------------------------- range records */

/* Records set aside by vma_reserve, linked through node.left: a change
 * that cuts ranges takes them first, so that it cannot fail half way for
 * want of memory. The calls that reserve give the rest back when they
 * return (vma_unreserve), so nothing stays set aside between calls. */
static struct vanode *spare;
static unsigned nspare;

/* A zeroed range record: a spare one, else a new one; NULL without memory. */
static struct lx_vma *vma_new(void)
{
    if (!spare)
        return lx_alloc(sizeof(struct lx_vma));
    struct lx_vma *v = lx_vma_of(spare);
    spare = spare->left;
    nspare--;
    memset(v, 0, sizeof(*v));
    return v;
}

static void vma_unreserve(void)
{
    while (spare) {
        struct vanode *n = spare;
        spare = n->left;
        lx_free(lx_vma_of(n), sizeof(struct lx_vma));
    }
    nspare = 0;
}

/* What a call that may have set records aside returns, once they are
 * given back (brk, mmap, munmap, mprotect, madvise and mremap end here). */
static int64_t unreserved(int64_t result)
{
    vma_unreserve();
    return result;
}

/* Have n spare records; 0, or -ENOMEM (none kept). */
static int vma_reserve(uint64_t n)
{
    while (nspare < n) {
        struct lx_vma *v = lx_alloc(sizeof(*v));
        if (!v) {
            vma_unreserve();
            return -LX_ENOMEM;
        }
        v->node.left = spare;
        spare = &v->node;
        nspare++;
    }
    return 0;
}

/* Take range v out of p's tree and free it (its object is the caller's).
 * A range gone at or above where find_gap resumes may open a gap there:
 * the next search starts from the top again. */
static void vma_delete(struct lx_proc *p, struct lx_vma *v)
{
    if (lx_vma_end(v) > p->gap_top)
        p->gap_top = 0;
    vatree_remove(&p->vmas, &v->node);
    lx_free(v, sizeof(*v));
}

/* The lowest range of p overlapping [start, end), or NULL. */
static struct lx_vma *first_in(const struct lx_proc *p, uint64_t start, uint64_t end)
{
    return end > start ? lx_vma_of(vatree_first_overlap(&p->vmas, start, end - start)) : NULL;
}

/* Record range v (merged into the one before it when it continues it with
 * the same object, rights and fork advice: Linux keeps ranges of other
 * madvise flags apart, so heap grown past a MADV_DONTFORK range is not). */
static int vma_add(struct lx_proc *p, struct lx_vma *v)
{
    uint64_t start = v->node.start;
    struct lx_vma *w = start ? lx_vma_at(p, start - 1) : NULL;
    if (w && w->obj == v->obj && v->obj && w->off + w->node.size == v->off && w->rights == v->rights &&
        w->kind == v->kind && w->nowrite == v->nowrite && w->on_fork == v->on_fork) {
        w->node.size += v->node.size;           /* (the tree's order stays: v's room was free) */
        mobj_put(v->obj);                       /* one range holds it once */
        lx_free(v, sizeof(*v));
        return 0;
    }
    if (vatree_insert(&p->vmas, &v->node) == 0)
        return 0;
    mobj_put(v->obj);                           /* (not expected: the callers unmapped the room) */
    lx_free(v, sizeof(*v));
    return -LX_ENOMEM;
}

/* lx_vma_map for a range that may never be made writable (nowrite: a
 * shared mapping of a file not open for writing). Of a file's own object
 * only the pages the file reaches are mapped in the kernel. Like Linux,
 * a process past its limit of ranges gets no more (ENOMEM). */
static int vma_map(struct lx_proc *p, struct lx_mobj *obj, uint64_t va, uint64_t off, uint64_t size, uint32_t rights,
                   int kind, int nowrite)
{
    if (p->vmas.count > LX_MAP_COUNT)
        return -LX_ENOMEM;
    struct lx_vma *v = vma_new();
    if (!v)
        return -LX_ENOMEM;
    uint64_t span = lx_mobj_span(obj, off, size);
    if (obj && rights && span && svc_mem_map(p->space, obj->h, va, off, span, rights)) {
        lx_free(v, sizeof(*v));
        return -LX_ENOMEM;
    }
    if (obj)
        obj->refs++;
    v->node.start = va;
    v->node.size = size;
    v->off = off;
    v->obj = obj;
    v->rights = rights;
    v->kind = (uint8_t)kind;
    v->nowrite = (uint8_t)nowrite;
    return vma_add(p, v);
}

int lx_vma_map(struct lx_proc *p, struct lx_mobj *obj, uint64_t va, uint64_t off, uint64_t size, uint32_t rights,
               int kind)
{
    return vma_map(p, obj, va, off, size, rights, kind, 0);
}

int lx_vma_fresh(struct lx_proc *p, uint64_t va, uint64_t size, uint32_t rights, int kind)
{
    int err;
    svc_handle m = svc_mem_create(size, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (!o)
        return -LX_ENOMEM;
    err = lx_vma_map(p, o, va, 0, size, rights, kind);
    lx_mobj_unused(o);
    return err;
}

void lx_vmas_drop(struct lx_proc *p)
{
    struct lx_vma *v;
    while ((v = lx_vma_first(p)) != NULL) {
        mobj_put(v->obj);
        vatree_remove(&p->vmas, &v->node);
        lx_free(v, sizeof(*v));
    }
    vatree_init(&p->vmas);
    p->gap_top = p->gap_need = 0;
    p->heap_obj = NULL;
    p->heap_va = p->heap_end = p->heap_top = 0;
}

/* Does cutting p's ranges at address a take a new record (a strictly
 * inside a range)? */
static int splits_at(const struct lx_proc *p, uint64_t a)
{
    const struct lx_vma *v = lx_vma_at(p, a);
    return v && v->node.start < a;
}

/* How many new records cutting the ranges at start and at end takes. */
static unsigned splits(const struct lx_proc *p, uint64_t start, uint64_t end)
{
    return (unsigned)(splits_at(p, start) + splits_at(p, end));
}

/* Cut the ranges at address a (so that none crosses it): the part from a
 * on becomes a record of its own; -ENOMEM without one. */
static struct lx_vma *split_vma(struct lx_proc *p, struct lx_vma *v, uint64_t a);

static int split_at(struct lx_proc *p, uint64_t a)
{
    struct lx_vma *v = lx_vma_at(p, a);
    if (!v || v->node.start == a)
        return 0;
    return split_vma(p, v, a) ? 0 : -LX_ENOMEM;
}

/* Cut record v (a strictly inside it) at a: the upper part, or NULL without a record. */
static struct lx_vma *split_vma(struct lx_proc *p, struct lx_vma *v, uint64_t a)
{
    struct lx_vma *hi = vma_new();
    if (!hi)
        return NULL;
    uint64_t below = a - v->node.start;
    hi->node.start = a;
    hi->node.size = v->node.size - below;
    hi->off = v->off + below;
    hi->obj = v->obj;
    hi->rights = v->rights;
    hi->kind = v->kind;
    hi->nowrite = v->nowrite;
    hi->on_fork = v->on_fork;
    v->node.size = below;
    if (hi->obj)
        hi->obj->refs++;
    vatree_insert(&p->vmas, &hi->node);
    return hi;
}

/* Split p's ranges at start and end, so that [start, end) is whole ranges;
 * -ENOMEM, changing nothing, without the records for the pieces, or past
 * the limit of ranges when `bounded` (mprotect and madvise, as Linux:
 * munmap's pieces go, so it checks only a cut in the middle, below). */
static int cut(struct lx_proc *p, uint64_t start, uint64_t end, int bounded)
{
    unsigned n = splits(p, start, end);
    if ((bounded && p->vmas.count + n > LX_MAP_COUNT) || vma_reserve(n))
        return -LX_ENOMEM;
    split_at(p, start);
    split_at(p, end);
    return 0;
}

/* Take [start, end) out of p's ranges (the kernel's mappings are the
 * caller's); -ENOMEM, changing nothing, if a hole in the middle of a range
 * would pass the limit of ranges, or without records for the pieces. */
static int vmas_remove(struct lx_proc *p, uint64_t start, uint64_t end)
{
    /* One search: the ranges to go follow the first in address order. */
    struct lx_vma *v = first_in(p, start, end);
    if (!v)
        return 0;
    struct lx_vma *w = v;
    while (w && lx_vma_end(w) <= end)
        w = lx_vma_next(w);
    int lo = v->node.start < start, hi = w && w->node.start < end;
    if (lo && w == v && p->vmas.count >= LX_MAP_COUNT)
        return -LX_ENOMEM;
    if (vma_reserve((unsigned)(lo + hi)))
        return -LX_ENOMEM;
    if (lo) {
        struct lx_vma *up = split_vma(p, v, start);
        if (w == v)
            w = up;
        v = up;
    }
    if (hi)
        split_vma(p, w, end);
    while (v && v->node.start < end) {
        struct lx_vma *next = lx_vma_next(v);
        vma_drop_obj(p, v);
        vma_delete(p, v);
        v = next;
    }
    return 0;
}

/* Does [start, end) overlap a range of p? */
static int mapped(struct lx_proc *p, uint64_t start, uint64_t end)
{
    return first_in(p, start, end) != NULL;
}

/* A fresh object of `size` zero bytes (shared: MAP_SHARED memory), not
 * mapped yet; NULL without memory. */
static struct lx_mobj *anon(uint64_t size, int shared)
{
    int err;
    svc_handle m = svc_mem_create(size, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (o)
        o->shared = (uint8_t)shared;
    return o;
}

/* A fresh object of `size` bytes holding file node's bytes from `off`
 * (zeros past its end), for fend bytes (past them, zeros: fend == size
 * for a file mapping); not mapped yet. NULL without memory. */
static struct lx_mobj *file_copy_to(int32_t node, uint64_t off, uint64_t size, uint64_t fend)
{
    struct lx_mobj *o = anon(size, 0);
    struct lx_node *n = lx_node(node);
    if (!o || !n)
        return o;
    uint64_t want = fend < size ? fend : size;
    if (off < n->size && want) {
        uint64_t k = n->size - off < want ? n->size - off : want;
        if (lx_node_copy_out(n, off, o->h, 0, k)) {
            lx_mobj_unused(o);
            return NULL;
        }
    }
    lx_mobj_origin(o, node, off, fend);
    return o;
}

/* A private file mapping's object and, in *at, the offset in it of the
 * file's byte off: a copy-on-write clone of the file's own object if it
 * has one (the file's bytes at their own offsets), else a copy of the
 * file's bytes from off, all of it file-backed. NULL without memory. */
static struct lx_mobj *file_private(int32_t node, uint64_t off, uint64_t size, uint64_t *at)
{
    struct lx_node *n = lx_node(node);
    *at = 0;
    if (!n->obj || off > lx_vfs_bytes() || size > lx_vfs_bytes() - off)
        return file_copy_to(node, off, size, size);
    int err;
    svc_handle m = svc_mem_clone(n->obj->h, &err);
    struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
    if (o)
        lx_mobj_origin(o, node, 0, lx_vfs_bytes());
    *at = off;
    return o;
}

/* Does [start, end) overlap a range of p, its heap's reach or its stack? */
static int reserved_room(struct lx_proc *p, uint64_t start, uint64_t end)
{
    if (start < p->brk_start + LX_BRK_MAX && end > p->brk_start - LX_BRK_MAX)
        return 1;                               /* the program and the room its heap may grow into */
    return end > LX_STACK_TOP - LX_STACK_SIZE;
}

static int taken(struct lx_proc *p, uint64_t start, uint64_t end)
{
    return mapped(p, start, end) || reserved_room(p, start, end);
}

/* The highest free gap of `len` bytes below LX_MMAP_TOP, or 0: windows of
 * len bytes tried from the top down, each ending where the last one met
 * a range. Mappings placed one after another below each other would make
 * every search walk all of them, so p remembers where the last one ended
 * (gap_top) and that no gap above it held gap_need bytes: a search for at
 * least that many resumes there and finds what a search from the top
 * would. A range that goes at or above gap_top forgets it (vma_delete). */
static uint64_t find_gap(struct lx_proc *p, uint64_t len)
{
    uint64_t top = p->gap_top && len >= p->gap_need ? p->gap_top : LX_MMAP_TOP;
    while (top >= LX_MMAP_BOTTOM + len) {
        uint64_t start = top - len;
        const struct lx_vma *lowest = first_in(p, start, top);
        if (lowest) {
            top = lowest->node.start;
            continue;
        }
        if (reserved_room(p, start, top))     /* (first_in found no range there) */
            return 0;                           /* the heap is in the way: nothing lower is tried */
        p->gap_top = top;                       /* (LX_MMAP_TOP, or a range's start) */
        p->gap_need = len;
        return start;
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
        lx_mobj_unused(o);
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

/* Linux's overcommit heuristic (vm.overcommit_memory 0): a call that would
 * reserve more than all of memory at once fails (brk, mmap and mremap of
 * private writable or shared anonymous memory); anything less is let
 * through, to be made when touched. */
static int too_big(uint64_t bytes)
{
    return bytes > LX_MEM_TOTAL;
}

static int64_t brk_call(struct lx_ctx *c, uint64_t addr)
{
    struct lx_proc *p = c->p;
    if (addr < p->brk_start || addr > p->brk_start + LX_BRK_MAX)
        return (int64_t)p->brk;
    uint64_t old_end = lx_page_up(p->brk), new_end = lx_page_up(addr);
    if (new_end > old_end) {
        if (too_big(new_end - old_end))
            return (int64_t)p->brk;
        if (mapped(p, old_end, new_end))
            return (int64_t)p->brk;             /* a mapping is in the way */
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

int64_t lx_sys_brk(struct lx_ctx *c, uint64_t addr)
{
    return unreserved(brk_call(c, addr));
}

/* /dev/binder's buffers at va (binder.c): read-only, never a fork's,
 * 4 MiB at most of the range asked for. */
static int64_t binder_map(struct lx_ctx *c, struct lx_file *f, uint64_t va, uint64_t size, uint64_t prot)
{
    struct lx_mobj *o;
    uint64_t len;
    int64_t err = lx_binder_mmap(c, f, size, prot, &o, &len);
    if (err)
        return err;
    if (vma_map(c->p, o, va, 0, len, rights_of(prot), LX_VMA_MMAP, 1)) {
        lx_binder_mapped(f, 0);                 /* (not mapped after all: a later mmap may) */
        return -LX_ENOMEM;
    }
    for (struct lx_vma *v = first_in(c->p, va, va + len); v && v->node.start < va + len; v = lx_vma_next(v))
        v->on_fork = LX_VMA_DONTFORK;           /* (Linux's VM_DONTCOPY) */
    lx_binder_mapped(f, va);
    return (int64_t)va;
}

static int64_t mmap_call(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int64_t fd,
                         uint64_t off)
{
    struct lx_proc *p = c->p;
    uint32_t fl = (uint32_t)flags, type = fl & MAP_TYPE;
    if (len == 0 || (off & (LX_PAGE - 1)))
        return -LX_EINVAL;
    if (type != MAP_SHARED && type != MAP_PRIVATE && type != MAP_SHARED_VALIDATE)
        return -LX_EINVAL;
    if (type == MAP_SHARED_VALIDATE && (fl & MAP_ANONYMOUS))
        return -LX_EINVAL;                      /* (Linux 6.1 validates only file mappings) */
    uint64_t size = lx_page_up(len);
    if (size < len || size > LX_MMAP_TOP - LX_MMAP_BOTTOM)
        return -LX_ENOMEM;
    if ((prot & PROT_WRITE) && (prot & PROT_EXEC))
        return -LX_EACCES;                      /* Petrel never maps memory writable and executable */
    struct lx_node *file = NULL;
    struct lx_file *binder = NULL;
    int fbdev = 0;
    int32_t fnode = -1;
    int nowrite = 0;
    if (!(fl & MAP_ANONYMOUS)) {
        /* Linux's order: the descriptor, the file's largest offset, the
         * flags, its access mode (a shared mapping writes the file, every
         * mapping reads it), then its kind. */
        struct lx_file *f = (int32_t)fd >= 0 ? lx_fd_file(p, (uint32_t)fd) : NULL;
        if (!f || (f->flags & O_PATH))
            return -LX_EBADF;
        if (off > (uint64_t)INT64_MAX - size)
            return -LX_EOVERFLOW;
        if (type == MAP_SHARED_VALIDATE && (fl & ~(uint32_t)MAP_LEGACY))
            return -LX_EOPNOTSUPP;              /* (MAP_SYNC, MAP_FIXED_NOREPLACE: not for these files) */
        uint32_t acc = f->flags & O_ACCMODE;
        if (type != MAP_PRIVATE && (prot & PROT_WRITE) && acc == 0)
            return -LX_EACCES;
        nowrite = type != MAP_PRIVATE && acc == 0;
        if (acc == O_WRONLY)
            return -LX_EACCES;
        if (f->binder)
            binder = f;                         /* /dev/binder: its buffers (binder.c) */
        else if (f->node >= 0 && (lx_node(f->node)->mode & LX_S_IFMT) == LX_S_IFCHR &&
                 lx_node(f->node)->dev == LX_DEV_FB)
            fbdev = 1;                          /* /dev/fb0 (fbdev.c) */
        else if (f->node < 0)
            return -LX_ENODEV;                  /* a pipe, a socket, an event descriptor */
        fnode = binder || fbdev ? -1 : f->node;
        file = binder || fbdev ? NULL : lx_node(fnode);
        if (file && ((file->mode & LX_S_IFMT) != LX_S_IFREG || file->proc))
            return -LX_ENODEV;
        if (file && (prot & PROT_EXEC) && lx_data_refuses(file, LX_MS_NOEXEC))
            return -LX_EPERM;                   /* a noexec mount's file, as Linux says */
        if (file && file->fs == LX_FS_DATA && type != MAP_PRIVATE)
            return -LX_ENODEV;                  /* (the disk's files are copied, not shared, for now) */
        int64_t wait = file ? lx_data_prefetch(file, off, size) : 0;   /* (copied at once below: at hand first) */
        if (wait)
            return wait;
    }
    uint64_t va;
    if (fl & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
        va = addr;
        if ((va & (LX_PAGE - 1)) || va < 0x10000 || va + size < va || va + size > LX_UTCB_VA)
            return (va & (LX_PAGE - 1)) ? -LX_EINVAL : -LX_ENOMEM;
        if ((fl & MAP_FIXED_NOREPLACE) && mapped(p, va, va + size))
            return -LX_EEXIST;
    } else {
        va = addr & ~(LX_PAGE - 1);
        if (!va || va < LX_MMAP_BOTTOM || va + size > LX_MMAP_TOP || va + size < va || taken(p, va, va + size))
            va = find_gap(p, size);
        if (!va)
            return -LX_ENOMEM;
    }
    if (p->vmas.count > LX_MAP_COUNT)
        return -LX_ENOMEM;                      /* Linux's check: past vm.max_map_count */
    if (fl & MAP_FIXED) {                       /* replaces whatever was there */
        if (vmas_remove(p, va, va + size))
            return -LX_ENOMEM;
        svc_mem_unmap(p->space, va, size);
    }
    if (binder)
        return binder_map(c, binder, va, size, prot);
    if (fbdev) {                                /* /dev/fb0: the display's own pixels, shared */
        struct lx_mobj *o;
        int64_t err = lx_fb_mmap(p, off, size, &o);
        if (err)
            return err;
        return vma_map(p, o, va, off, size, rights_of(prot), LX_VMA_MMAP, nowrite) ? -LX_ENOMEM : (int64_t)va;
    }
    uint32_t rights = rights_of(prot);
    int shared = !file && type != MAP_PRIVATE;
    int reserves = (type == MAP_PRIVATE && (prot & PROT_WRITE)) || shared;
    if (reserves && !(fl & MAP_NORESERVE) && too_big(size))
        return -LX_ENOMEM;
    if (!file && !rights && !shared)            /* reserved: an object only for what mprotect opens later */
        return lx_vma_map(p, NULL, va, 0, size, 0, LX_VMA_MMAP) ? -LX_ENOMEM : (int64_t)va;
    /* Anonymous memory (shared: the same object in every process that
     * forks from this one), the file's own object (shared), or a private
     * copy of the file. */
    uint64_t at = 0;
    struct lx_mobj *o = !file ? anon(size, shared) : type != MAP_PRIVATE ? lx_node_share(fnode) :
                        file_private(fnode, off, size, &at);
    if (!o)
        return -LX_ENOMEM;
    if (file && type != MAP_PRIVATE)
        at = off;
    int err = vma_map(p, o, va, at, size, rights, LX_VMA_MMAP, nowrite);
    lx_mobj_unused(o);
    return err ? -LX_ENOMEM : (int64_t)va;
}

int64_t lx_sys_mmap(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, int64_t fd,
                    uint64_t off)
{
    return unreserved(mmap_call(c, addr, len, prot, flags, fd, off));
}

/* Unmap [addr, addr + len) of p (munmap, mremap): EINVAL past the end of
 * user space; nothing is mapped past Petrel's end. 0 or a negated errno. */
static int unmap(struct lx_proc *p, uint64_t addr, uint64_t len)
{
    if (len > LX_TASK_SIZE || addr > LX_TASK_SIZE - len)
        return -LX_EINVAL;
    uint64_t end = addr + len < LX_UTCB_VA ? addr + len : LX_UTCB_VA;
    if (addr >= end)
        return 0;
    if (vmas_remove(p, addr, end))
        return -LX_ENOMEM;
    svc_mem_unmap(p->space, addr, end - addr);
    return 0;
}

static int64_t munmap_call(struct lx_ctx *c, uint64_t addr, uint64_t len)
{
    uint64_t size = lx_page_up(len);
    if ((addr & (LX_PAGE - 1)) || len == 0 || size < len || addr + size < addr || addr + size > LX_TASK_SIZE)
        return -LX_EINVAL;                      /* Linux's rules */
    return unmap(c->p, addr, size);
}

int64_t lx_sys_munmap(struct lx_ctx *c, uint64_t addr, uint64_t len)
{
    return unreserved(munmap_call(c, addr, len));
}

/* Every page of [start, end) in one of p's ranges? */
static int covered(struct lx_proc *p, uint64_t start, uint64_t end)
{
    const struct lx_vma *v = lx_vma_at(p, start);
    while (v && lx_vma_end(v) < end) {
        const struct lx_vma *next = lx_vma_next(v);
        if (!next || next->node.start != lx_vma_end(v))
            return 0;
        v = next;
    }
    return v != NULL;
}

/* Put fresh object o (not mapped yet) under range v in place of its
 * object, mapped with `rights` (0: left unmapped); if it cannot be
 * mapped, v stays as it was and o goes. 0 or -ENOMEM. */
static int swap_obj(struct lx_proc *p, struct lx_vma *v, struct lx_mobj *o, uint32_t rights)
{
    uint64_t n = v->node.size;
    if (rights) {
        svc_mem_unmap(p->space, v->node.start, n);
        if (svc_mem_map(p->space, o->h, v->node.start, 0, n, rights)) {
            if (v->rights)
                svc_mem_map(p->space, v->obj->h, v->node.start, v->off, n, v->rights);
            lx_mobj_unused(o);
            return -LX_ENOMEM;
        }
    }
    vma_drop_obj(p, v);
    o->refs++;
    v->obj = o;
    v->off = 0;
    return 0;
}

/* Range v maps the root archive's pages in place (a program's read-only
 * segment): give it a private copy of them, mapped with `rights`, so it
 * may be written as a private file mapping may on Linux. 0 or -ENOMEM. */
static int own_copy(struct lx_proc *p, struct lx_vma *v, uint32_t rights)
{
    uint64_t n = v->node.size;
    struct lx_mobj *o = anon(n, 0);
    if (!o || svc_mem_write(o->h, 0, lx_fs_data() + v->off, n)) {
        lx_mobj_unused(o);
        return -LX_ENOMEM;
    }
    return swap_obj(p, v, o, rights);
}

static int64_t mprotect_call(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot)
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
    for (const struct lx_vma *v = first_in(p, addr, end); v && v->node.start < end && (prot & PROT_WRITE);
         v = lx_vma_next(v))
        if (v->nowrite)
            return -LX_EACCES;                  /* a shared mapping of a file open read-only */
    if (cut(p, addr, end, 1))
        return -LX_ENOMEM;
    uint32_t rights = rights_of(prot);
    int64_t result = 0;
    for (struct lx_vma *v = first_in(p, addr, end); v && v->node.start < end; v = lx_vma_next(v)) {
        if (v->rights == rights)
            continue;
        uint64_t n = v->node.size;
        int err = 0;
        if (!v->obj) {                          /* reserved (PROT_NONE): fresh memory from now on */
            int err2;
            svc_handle m = svc_mem_create(n, &err2);
            struct lx_mobj *o = m ? lx_mobj_new(m, 0) : NULL;
            if (!o || svc_mem_map(p->space, o->h, v->node.start, 0, n, rights))
                err = -LX_ENOMEM;
            else
                o->refs++, v->obj = o, v->off = 0;
            lx_mobj_unused(o);
        } else if (!rights) {
            err = svc_mem_unmap(p->space, v->node.start, n) ? -LX_ENOMEM : 0;
        } else if (v->obj->file && (rights & R_WRITE)) {
            err = own_copy(p, v, rights);       /* the archive's pages are read-only for everyone */
        } else if (!v->rights) {
            uint64_t span = lx_mobj_span(v->obj, v->off, n);    /* (a file's pages: those it reaches) */
            err = span && svc_mem_map(p->space, v->obj->h, v->node.start, v->off, span, rights) ? -LX_EACCES : 0;
        } else {
            uint64_t span = lx_mobj_span(v->obj, v->off, n);
            err = span && svc_mem_protect(p->space, v->node.start, span, rights) ? -LX_EACCES : 0;
        }
        if (err)
            result = err;
        else
            v->rights = rights;
    }
    return result;
}

int64_t lx_sys_mprotect(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t prot)
{
    return unreserved(mprotect_call(c, addr, len, prot));
}

/* ---------------------------------------------------------------- madvise, mremap, msync */

/* Page-align a length as Linux does (wrapping to 0 for the last page's worth). */
static uint64_t page_align(uint64_t len)
{
    return (len + LX_PAGE - 1) & ~(LX_PAGE - 1);
}

/* What range v would hold if it were made again from scratch, `size`
 * bytes from `off` of its object on: zeros for anonymous memory, the file's
 * bytes again for a private copy of a file (past fend, zeros), the same
 * kind of object (shared or not). A fresh object, not mapped; NULL
 * without memory. */
static struct lx_mobj *fresh_like(const struct lx_vma *v, uint64_t off, uint64_t size)
{
    const struct lx_mobj *o = v->obj;
    if (o && o->node >= 0 && off < o->fend)
        return file_copy_to(o->node, o->foff + off, size, o->fend - off);
    return anon(size, o && o->shared);
}

/* Write what fresh_like would hold over `len` bytes of o from `off` on
 * (zeros, or the file's bytes), in place. 0 or -ENOMEM. */
static int refill(struct lx_mobj *o, uint64_t off, uint64_t len)
{
    static const uint8_t zeros[4096];
    struct lx_node *n = o->node >= 0 ? lx_node(o->node) : NULL;
    for (uint64_t at = 0; at < len; at += sizeof(zeros)) {
        uint64_t k = len - at < sizeof(zeros) ? len - at : sizeof(zeros), pos = off + at;
        uint64_t fpos = n ? o->foff + pos : 0;
        int err = n && pos + k <= o->fend && fpos + k <= n->size ?
                  lx_node_copy_out(n, fpos, o->h, pos, k) :     /* (a page partly file, partly not: zeros) */
                  svc_mem_write(o->h, pos, zeros, k);
        if (err)
            return -LX_ENOMEM;
    }
    return 0;
}

/* MADV_DONTNEED on [start, end): each private range there reads as if
 * never touched (zeros, or the file's bytes for a copy of a file): it gets
 * a fresh object, and the old one's pages go with its last range. Shared
 * memory and the archive's own pages keep their contents, as on Linux.
 * Without free range records for the cuts, the bytes are rewritten in
 * place instead. */
static int64_t discard(struct lx_proc *p, uint64_t start, uint64_t end)
{
    int in_place = cut(p, start, end, 1) != 0;
    for (struct lx_vma *v = first_in(p, start, end); v && v->node.start < end; v = lx_vma_next(v)) {
        uint64_t from = v->node.start > start ? v->node.start : start, to = lx_vma_end(v) < end ? lx_vma_end(v) : end;
        if (!v->obj || v->obj->file || v->obj->shared)
            continue;
        if (in_place) {
            if (refill(v->obj, v->off + (from - v->node.start), to - from))
                return -LX_ENOMEM;
            continue;
        }
        struct lx_mobj *o = fresh_like(v, v->off, v->node.size);
        if (!o || swap_obj(p, v, o, v->rights))
            return -LX_ENOMEM;
    }
    return 0;
}

#define MADV_NORMAL         0
#define MADV_RANDOM         1
#define MADV_SEQUENTIAL     2
#define MADV_WILLNEED       3
#define MADV_DONTNEED       4
#define MADV_FREE           8
#define MADV_MERGEABLE      12
#define MADV_UNMERGEABLE    13
#define MADV_HUGEPAGE       14
#define MADV_NOHUGEPAGE     15
#define MADV_DONTDUMP       16
#define MADV_DODUMP         17
#define MADV_COLD           20
#define MADV_PAGEOUT        21
#define MADV_DONTFORK       10
#define MADV_DOFORK         11
#define MADV_WIPEONFORK     18
#define MADV_KEEPONFORK     19

/* Is range v anonymous memory as Linux counts it (not a file's pages,
 * not shared memory)? MADV_FREE takes only that. */
static int anonymous(const struct lx_vma *v)
{
    return !v->obj || (!v->obj->file && !v->obj->shared && v->obj->node < 0);
}

/* madvise: MADV_DONTNEED (above); MADV_FREE on anonymous memory (the pages
 * may be freed: here they are kept, which the call allows); the hints
 * (NORMAL, RANDOM, SEQUENTIAL, WILLNEED, COLD, PAGEOUT, HUGEPAGE,
 * NOHUGEPAGE, MERGEABLE, UNMERGEABLE, DONTDUMP, DODUMP) are taken and change
 * nothing; DONTFORK and WIPEONFORK (private anonymous memory only: EINVAL)
 * mark the range for fork (lx_vmas_fork), DOFORK and KEEPONFORK unmark it.
 * Other advice is EINVAL. As on Linux, the mapped parts of a range with holes are
 * advised and the call then fails with ENOMEM. */
static int64_t madvise_call(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t advice)
{
    struct lx_proc *p = c->p;
    switch ((int32_t)advice) {
    case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED: case MADV_DONTNEED:
    case MADV_FREE: case MADV_MERGEABLE: case MADV_UNMERGEABLE: case MADV_HUGEPAGE: case MADV_NOHUGEPAGE:
    case MADV_DONTDUMP: case MADV_DODUMP: case MADV_COLD: case MADV_PAGEOUT:
    case MADV_DONTFORK: case MADV_DOFORK: case MADV_WIPEONFORK: case MADV_KEEPONFORK:
        break;
    default:
        return -LX_EINVAL;
    }
    uint64_t size = page_align(len), end = addr + size;
    if ((addr & (LX_PAGE - 1)) || (len && !size) || end < addr)
        return -LX_EINVAL;
    if (end == addr)
        return 0;
    int any = 0, hole = !covered(p, addr, end);
    for (const struct lx_vma *v = first_in(p, addr, end); v && v->node.start < end; v = lx_vma_next(v)) {
        any = 1;
        if (((int32_t)advice == MADV_FREE || (int32_t)advice == MADV_WIPEONFORK) && !anonymous(v))
            return -LX_EINVAL;
    }
    if (!any)
        return -LX_ENOMEM;
    if ((int32_t)advice == MADV_DONTNEED) {
        int64_t err = discard(p, addr, end);
        if (err)
            return err;
    }
    uint8_t set = (int32_t)advice == MADV_DONTFORK ? LX_VMA_DONTFORK : (int32_t)advice == MADV_WIPEONFORK ?
                  LX_VMA_WIPEONFORK : 0;
    uint8_t clear = (int32_t)advice == MADV_DOFORK ? LX_VMA_DONTFORK : (int32_t)advice == MADV_KEEPONFORK ?
                    LX_VMA_WIPEONFORK : 0;
    if (set | clear) {
        if (cut(p, addr, end, 1))
            return -LX_ENOMEM;                  /* (no record for a piece: nothing changed) */
        for (struct lx_vma *v = first_in(p, addr, end); v && v->node.start < end; v = lx_vma_next(v))
            v->on_fork = (uint8_t)((v->on_fork | set) & ~clear);
    }
    return hole ? -LX_ENOMEM : 0;
}

int64_t lx_sys_madvise(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t advice)
{
    return unreserved(madvise_call(c, addr, len, advice));
}

#define MREMAP_MAYMOVE      1
#define MREMAP_FIXED        2
#define MREMAP_DONTUNMAP    4

/* The ranges of [addr, addr + len) if they make one mapping as Linux sees
 * one: every page mapped, with the same rights, kind and sharing; 0, or
 * -EFAULT. */
static int one_mapping(struct lx_proc *p, uint64_t addr, uint64_t len)
{
    if (!covered(p, addr, addr + len))
        return -LX_EFAULT;
    const struct lx_vma *first = first_in(p, addr, addr + len);
    for (const struct lx_vma *v = first; v && v->node.start < addr + len; v = lx_vma_next(v)) {
        if (v->rights != first->rights || v->kind != first->kind ||
                 (v->obj && v->obj->shared) != (first->obj && first->obj->shared))
            return -LX_EFAULT;
    }
    return 0;
}

/* Map [at, at + size) of p as the continuation of range v, whose end is
 * `at` or was (mremap moved it): more of the same kind of memory. 0 or
 * -ENOMEM. */
static int extend(struct lx_proc *p, const struct lx_vma *v, uint64_t at, uint64_t size)
{
    if (!v->obj)
        return lx_vma_map(p, NULL, at, 0, size, 0, v->kind) ? -LX_ENOMEM : 0;
    if (v->obj->of_file)                        /* the file's next pages */
        return vma_map(p, v->obj, at, v->off + v->node.size, size, v->rights, v->kind, v->nowrite) ?
               -LX_ENOMEM : 0;
    struct lx_mobj *o = fresh_like(v, v->off + v->node.size, size);
    if (!o)
        return -LX_ENOMEM;
    int err = lx_vma_map(p, o, at, 0, size, v->rights, v->kind);
    lx_mobj_unused(o);
    return err ? -LX_ENOMEM : 0;
}

/* Move the ranges of [from, from + len) to `to` (the same objects, so the
 * contents go with them); without `keep` the old addresses are unmapped,
 * with it (MREMAP_DONTUNMAP) they stay mapped and read as fresh memory. */
static int64_t move(struct lx_proc *p, uint64_t from, uint64_t len, uint64_t to, int keep)
{
    uint64_t end = from + len;
    split_at(p, from);
    split_at(p, end);
    for (struct lx_vma *v = lx_vma_at(p, from); v && v->node.start < end; v = lx_vma_next(v)) {
        /* (A piece mapped right after the old range may have merged into
         * its last piece: that one is cut at the old end.) */
        uint64_t size = (lx_vma_end(v) < end ? lx_vma_end(v) : end) - v->node.start;
        if (vma_map(p, v->obj, to + (v->node.start - from), v->off, size, v->rights, v->kind, v->nowrite))
            return -LX_ENOMEM;                  /* (records were set aside: not expected) */
    }
    if (keep)
        return discard(p, from, from + len);
    vmas_remove(p, from, from + len);
    svc_mem_unmap(p->space, from, len);
    return 0;
}

/* mremap: shrink (the tail unmapped), grow in place when the pages after
 * are free (more of the same memory: zeros, or the file's next bytes),
 * else move with MREMAP_MAYMOVE (the same objects mapped elsewhere: no
 * byte is copied), MREMAP_FIXED to new_addr (what was there unmapped),
 * MREMAP_DONTUNMAP (the old range stays, as fresh memory). Linux's
 * errors: EINVAL for bad flags, alignment or overlap, EFAULT for a range
 * that is not one mapping, ENOMEM when it cannot grow. An old length of 0
 * (Linux's duplicate of a shared mapping) is EINVAL here. */
static int64_t mremap_call(struct lx_ctx *c, uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags,
                           uint64_t new_addr)
{
    struct lx_proc *p = c->p;
    if (flags & ~(uint64_t)(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
        return -LX_EINVAL;
    if ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE))
        return -LX_EINVAL;
    if ((flags & MREMAP_DONTUNMAP) && (!(flags & MREMAP_MAYMOVE) || old_len != new_len))
        return -LX_EINVAL;
    if (addr & (LX_PAGE - 1))
        return -LX_EINVAL;
    uint64_t old = page_align(old_len), size = page_align(new_len);
    if (!size)
        return -LX_EINVAL;
    if (!lx_vma_at(p, addr))
        return -LX_EFAULT;
    if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
        if (new_addr & (LX_PAGE - 1))
            return -LX_EINVAL;
        if (size > LX_TASK_SIZE || new_addr > LX_TASK_SIZE - size)
            return -LX_EINVAL;
        if (addr + old > new_addr && new_addr + size > addr)
            return -LX_EINVAL;                  /* the old and new ranges overlap */
        int err;
        if (flags & MREMAP_FIXED) {
            if (new_addr < 0x10000 || new_addr + size > LX_UTCB_VA)
                return -LX_ENOMEM;              /* outside what Petrel maps */
            if ((err = unmap(p, new_addr, size)) != 0)
                return err;
        }
        if (old > size) {
            if ((err = unmap(p, addr + size, old - size)) != 0)
                return err;
            old = size;
        }
    } else if (old >= size) {                   /* shrinking: the tail goes */
        int err = unmap(p, addr + size, old - size);
        return err ? err : (int64_t)addr;
    }
    if (!old)
        return -LX_EINVAL;
    if (old > LX_TASK_SIZE - addr)
        return -LX_EFAULT;                      /* past any mapping */
    if (size > LX_MMAP_TOP - LX_MMAP_BOTTOM)
        return -LX_ENOMEM;                      /* more than there is room for */
    int err = one_mapping(p, addr, old);
    if (err)
        return err;
    uint64_t pieces = 0;
    for (const struct lx_vma *v = first_in(p, addr, addr + old); v && v->node.start < addr + old; v = lx_vma_next(v))
        pieces++;
    uint64_t need = splits(p, addr, addr + old) + pieces + 1;
    if (p->vmas.count + need > LX_MAP_COUNT || vma_reserve(need))
        return -LX_ENOMEM;                      /* no records for the moved ranges */
    struct lx_vma last = *lx_vma_at(p, addr + old - 1);
    last.node.size = addr + old - last.node.start;  /* (what a tail continues) */
    if (size > old && (last.rights & R_WRITE) && too_big(size - old))
        return -LX_ENOMEM;
    uint64_t to;
    if (flags & MREMAP_FIXED) {
        to = new_addr;
    } else if (!(flags & MREMAP_DONTUNMAP) && addr + size > addr &&
               addr + size <= LX_STACK_TOP - LX_STACK_SIZE && !mapped(p, addr + old, addr + size)) {
        return extend(p, &last, addr + old, size - old) ? -LX_ENOMEM : (int64_t)addr;    /* in place */
    } else if (!(flags & MREMAP_MAYMOVE)) {
        return -LX_ENOMEM;
    } else {
        int hint = (flags & MREMAP_DONTUNMAP) && new_addr >= LX_MMAP_BOTTOM && new_addr + size <= LX_MMAP_TOP &&
                   !taken(p, new_addr, new_addr + size);
        to = hint ? new_addr : find_gap(p, size);
        if (!to)
            return -LX_ENOMEM;
    }
    err = (int)move(p, addr, old, to, (flags & MREMAP_DONTUNMAP) != 0);
    if (!err && size > old)
        err = extend(p, &last, to + old, size - old);
    return err ? err : (int64_t)to;
}

int64_t lx_sys_mremap(struct lx_ctx *c, uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags,
                      uint64_t new_addr)
{
    return unreserved(mremap_call(c, addr, old_len, new_len, flags, new_addr));
}

#define MS_ASYNC        1
#define MS_INVALIDATE   2
#define MS_SYNC         4

/* msync: everything is in memory, so there is nothing to write back; the
 * flags and the range are checked as Linux checks them (an unmapped page
 * is ENOMEM; with MS_ASYNC alone, at once if the range starts unmapped). */
int64_t lx_sys_msync(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t flags)
{
    struct lx_proc *p = c->p;
    int32_t fl = (int32_t)flags;
    if (fl & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC))
        return -LX_EINVAL;
    if (addr & (LX_PAGE - 1))
        return -LX_EINVAL;
    if ((fl & MS_ASYNC) && (fl & MS_SYNC))
        return -LX_EINVAL;
    uint64_t end = addr + page_align(len);
    if (end < addr)
        return -LX_ENOMEM;
    if (end == addr)
        return 0;
    return covered(p, addr, end) ? 0 : -LX_ENOMEM;
}

#define MLOCK_ONFAULT   1

/* mlock, munlock and mlock2: every page of a Linux process stays in memory
 * (nothing is swapped), so locking changes nothing; Linux's checks: the
 * flags, a range that wraps (EINVAL), then the range (from its page, its
 * length rounded up) wholly mapped, else ENOMEM. */
int64_t lx_sys_mlock(struct lx_ctx *c, uint64_t addr, uint64_t len, uint64_t flags)
{
    if (flags & ~(uint64_t)MLOCK_ONFAULT)
        return -LX_EINVAL;
    uint64_t start = addr & ~(LX_PAGE - 1), end = start + page_align(len + (addr & (LX_PAGE - 1)));
    if (end < start)
        return -LX_EINVAL;                      /* the range wraps */
    if (end == start)
        return 0;
    return covered(c->p, start, end) ? 0 : -LX_ENOMEM;
}

/* The object child maps for range v of p: the object itself if it is
 * shared (or the archive's), else a copy-on-write copy, one per object
 * (the ranges cut from one object share one copy: the first makes it
 * and leaves it in the object's fork_copy). NULL for a reserved range;
 * *err set without memory. */
static struct lx_mobj *fork_obj(const struct lx_vma *v, int *err)
{
    struct lx_mobj *o = v->obj;
    *err = 0;
    if (!o || o->file || o->shared)
        return o;
    if (o->fork_copy)
        return o->fork_copy;
    int e;
    svc_handle m = svc_mem_clone(o->h, &e);
    struct lx_mobj *to = m ? lx_mobj_new(m, 0) : NULL;
    if (!to) {
        *err = -LX_ENOMEM;
        return NULL;
    }
    if (o->node >= 0)
        lx_mobj_origin(to, o->node, o->foff, o->fend);
    return to;
}

/* Give child range v of p: a copy of it, fresh zeros (MADV_WIPEONFORK,
 * kept by the child, as Linux), or nothing (MADV_DONTFORK). 0 or a
 * negated errno. */
static int fork_range(struct lx_proc *p, const struct lx_vma *v, struct lx_proc *child)
{
    uint64_t start = v->node.start, size = v->node.size;
    if (v->on_fork & LX_VMA_DONTFORK)
        return 0;
    if (v->on_fork & LX_VMA_WIPEONFORK) {
        int err = lx_vma_fresh(child, start, size, v->rights, v->kind);
        struct lx_vma *w = err ? NULL : lx_vma_at(child, start);
        if (w && w->node.start == start)
            w->on_fork = LX_VMA_WIPEONFORK;
        return err;
    }
    int err;
    struct lx_mobj *to = fork_obj(v, &err);
    if (err)
        return err;
    err = vma_map(child, to, start, v->off, size, v->rights, v->kind, v->nowrite);
    if (to && to != v->obj && !err)
        v->obj->fork_copy = to;                 /* (held by the child's range now) */
    if (to)
        lx_mobj_unused(to);
    if (!err && v->obj && v->obj == p->heap_obj)
        child->heap_obj = to;
    return err;
}

int lx_vmas_fork(struct lx_proc *p, struct lx_proc *child)
{
    int err = 0;
    for (const struct lx_vma *v = lx_vma_first(p); v && !err; v = lx_vma_next(v))
        err = fork_range(p, v, child);
    for (const struct lx_vma *v = lx_vma_first(p); v; v = lx_vma_next(v))
        if (v->obj)
            v->obj->fork_copy = NULL;           /* (nothing of a fork stays in the parent's objects) */
    if (err)
        return err;
    child->brk_start = p->brk_start;
    child->brk = p->brk;
    child->heap_va = p->heap_va;
    child->heap_end = child->heap_obj ? p->heap_end : 0;
    child->heap_top = p->heap_top;
    return 0;
}

/* The range of p holding all of [va, va + len) (len > 0), with its memory
 * object, or NULL. */
static struct lx_vma *vma_holding(struct lx_proc *p, uint64_t va, uint64_t len)
{
    struct lx_vma *v = lx_vma_at(p, va);
    if (!v || va + len > lx_vma_end(v) || va + len < va)
        return NULL;
    return v->obj ? v : NULL;
}

int lx_vma_target(struct lx_proc *p, uint64_t va, uint64_t len, svc_handle *h, uint64_t *off)
{
    struct lx_vma *v = lx_range_ok(va, len ? len : 1) ? vma_holding(p, va, len ? len : 1) : NULL;
    if (!v || v->obj->file || !(v->rights & R_WRITE))
        return -LX_EFAULT;
    *h = v->obj->h;
    *off = v->off + (va - v->node.start);
    return 0;
}

int lx_vma_poke(struct lx_proc *p, uint64_t va, const void *src, uint64_t len)
{
    svc_handle h;
    uint64_t off;
    if (lx_vma_target(p, va, len, &h, &off))
        return -LX_EFAULT;
    return svc_mem_write(h, off, src, len) ? -LX_EFAULT : 0;
}


int lx_vma_peek(struct lx_proc *p, uint64_t va, void *dst, uint64_t len)
{
    struct lx_vma *v = vma_holding(p, va, len);
    if (!v || !(v->rights & R_READ))
        return -LX_EFAULT;
    return svc_mem_read(v->obj->h, v->off + (va - v->node.start), dst, len) ? -LX_EFAULT : 0;
}

int lx_vma_cas32(struct lx_proc *p, uint64_t va, uint32_t expect, uint32_t desired, uint32_t *old)
{
    struct lx_vma *v = vma_holding(p, va, 4);
    if (!v || v->obj->file || !(v->rights & R_WRITE) || (va & 3))
        return -LX_EFAULT;
    return svc_mem_cas32(v->obj->h, v->off + (va - v->node.start), expect, desired, old) ? -LX_EFAULT : 0;
}

int lx_vma_has(struct lx_proc *p, uint64_t va)
{
    return lx_vma_at(p, va) != NULL;
}
