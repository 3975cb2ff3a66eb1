/*
 * The personality's small records (threads, open files, mapped ranges,
 * memory object records, timers, ...): size classes carved from pages of
 * the service's memory (svc_alloc, charged to its account), so that a
 * record costs its size, not a page, and a table grows with use instead
 * of being fixed at build time.
 *
 * A page of a class starts with its header (struct slab) and holds
 * records of one size after it; its free records are a list through
 * their first word. The pages of a class that have a free record are a
 * list of their own, so lx_alloc takes the first record of the first
 * page. lx_free finds the header by rounding the record's address down
 * to its page (svc_alloc gives page-aligned pages in both placements); a
 * page whose last record goes is given back at once, unless it is the
 * class's only page with room (which stays, so that one record made and
 * freed in a loop does not make and free a page each time). Records
 * bigger than the largest class are pages of their own (svc_alloc).
 *
 * Every operation is O(1). The personality serves one request at a time
 * in either placement (the kernel's service lock, the user server loop),
 * so nothing here locks.
 */
#include "lx.h"

#define SLAB_PAGE   4096u

struct slab {
    struct slab *next, *prev;   /* the class's pages with a free record */
    void *free;                 /* its first free record */
    uint16_t cls, used;         /* its class; records in use */
    uint32_t pad;
};

/* The record sizes: multiples of 16, chosen so that each wastes little of
 * a page (4,064 bytes after the header). */
static const uint16_t class_size[] = { 16, 32, 48, 64, 96, 128, 176, 256, 336, 448, 576, 672, 800, 1008, 1344, 2032 };
#define CLASSES (sizeof(class_size) / sizeof(class_size[0]))

_Static_assert(sizeof(struct slab) == 32, "the header is 32 bytes");

static struct slab *partial[CLASSES];
static uint64_t in_use;         /* bytes of the records given out and not freed (their classes' sizes) */

static unsigned class_of(size_t size)
{
    unsigned c = 0;
    while (class_size[c] < size)
        c++;
    return c;
}

static unsigned per_page(unsigned c)
{
    return (SLAB_PAGE - sizeof(struct slab)) / class_size[c];
}

static void unlink_slab(struct slab *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        partial[s->cls] = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
}

static void push_slab(struct slab *s)
{
    s->prev = NULL;
    s->next = partial[s->cls];
    if (s->next)
        s->next->prev = s;
    partial[s->cls] = s;
}

static struct slab *new_slab(unsigned c)
{
    struct slab *s = svc_alloc(SLAB_PAGE);
    if (!s)
        return NULL;
    s->cls = (uint16_t)c;
    uint8_t *first = (uint8_t *)s + sizeof(struct slab);
    unsigned n = per_page(c);
    for (unsigned i = 0; i < n; i++)
        *(void **)(first + (size_t)i * class_size[c]) = i + 1 < n ? first + (size_t)(i + 1) * class_size[c] : NULL;
    s->free = first;
    push_slab(s);
    return s;
}

void *lx_alloc(size_t size)
{
    if (size > class_size[CLASSES - 1]) {
        void *p = svc_alloc(size);
        if (p)
            in_use += lx_page_up(size);
        return p;
    }
    unsigned c = class_of(size ? size : 1);
    struct slab *s = partial[c];
    if (!s && !(s = new_slab(c)))
        return NULL;
    void *p = s->free;
    s->free = *(void **)p;
    if (++s->used == per_page(c))
        unlink_slab(s);                 /* full */
    memset(p, 0, class_size[c]);
    in_use += class_size[c];
    return p;
}

void lx_free(void *p, size_t size)
{
    if (!p)
        return;
    if (size > class_size[CLASSES - 1]) {
        svc_free(p, size);
        in_use -= lx_page_up(size);
        return;
    }
    struct slab *s = (struct slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_PAGE - 1));
    unsigned c = s->cls;
    int was_full = s->used == per_page(c);
    *(void **)p = s->free;
    s->free = p;
    s->used--;
    in_use -= class_size[c];
    if (was_full)
        push_slab(s);
    if (s->used == 0 && (s->next || s->prev)) {     /* empty, and not the class's only page with room */
        unlink_slab(s);
        svc_free(s, SLAB_PAGE);
    }
}

void lx_heap_trim(void)
{
    for (unsigned c = 0; c < CLASSES; c++) {
        struct slab *s = partial[c];
        while (s) {
            struct slab *next = s->next;
            if (s->used == 0) {
                unlink_slab(s);
                svc_free(s, SLAB_PAGE);
            }
            s = next;
        }
    }
}

uint64_t lx_heap_bytes(void)
{
    return in_use;
}
