/*
 * Kernel object memory: size classes of 32 to 2048 bytes carved from
 * whole 4 KiB frames ("slabs"). Each class keeps its free slots on a
 * doubly linked list; each slab counts the slots in use in its frame
 * descriptor's owner word. When the last slot of a slab is freed the
 * slab goes back to the frame allocator — except one empty slab per
 * class, kept so that a create/destroy loop does not carve a frame every
 * time. So memory a process made the kernel allocate returns to
 * everyone once it is freed, not only to objects of the same size.
 *
 * Callers pass the size back to kfree, so no header is needed.
 * Allocations are zeroed. Callers hold the kernel lock or own the memory
 * in some other way; the lists have their own lock so that boot code and
 * self tests can use them too.
 */
#include "kmalloc.h"
#include "kernel.h"
#include "memory.h"
#include "spinlock.h"
#include "arch.h"

#define MIN_SHIFT   5
#define MAX_SHIFT   11
#define NCLASSES    (MAX_SHIFT - MIN_SHIFT + 1)

struct slot { struct slot *next, *prev; };

static struct slot free_slots[NCLASSES];    /* list heads (circular) */
static bool kept_empty[NCLASSES];           /* one empty slab kept per class */
static uint64_t in_use;
static spinlock_t lock = SPINLOCK_INIT;

static unsigned class_of(size_t size)
{
    if (size <= (1u << MIN_SHIFT))
        return 0;
    return 64 - (unsigned)__builtin_clzll(size - 1) - MIN_SHIFT;   /* ceil(log2(size)) - MIN_SHIFT */
}

static void slot_push(unsigned c, struct slot *s)
{
    struct slot *head = &free_slots[c];
    if (!head->next)
        head->next = head->prev = head;
    s->next = head->next;
    s->prev = head;
    head->next->prev = s;
    head->next = s;
}

static void slot_unlink(struct slot *s)
{
    s->prev->next = s->next;
    s->next->prev = s->prev;
}

static bool class_empty(unsigned c)
{
    return !free_slots[c].next || free_slots[c].next == &free_slots[c];
}

/* The number of slots in use in the slab holding p. */
static uint64_t *slab_used(const void *p)
{
    return frame_owner_word(virt_to_phys((void *)ALIGN_DOWN((uintptr_t)p, 4096)));
}

/* Carve a fresh frame into slots of class c. */
static bool refill(unsigned c)
{
    paddr_t pa = frame_alloc(0);
    if (pa == PADDR_INVALID)
        return false;
    size_t sz = 1u << (c + MIN_SHIFT);
    uint8_t *base = phys_to_virt(pa);
    for (size_t off = 0; off + sz <= 4096; off += sz)
        slot_push(c, (struct slot *)(base + off));
    kept_empty[c] = true;       /* counts as the class's empty slab until used */
    return true;
}

void *kmalloc(size_t size)
{
    if (size == 0 || size > (1u << MAX_SHIFT))
        return NULL;
    unsigned c = class_of(size);
    uint64_t flags = spin_lock_irqsave(&lock);
    if (class_empty(c) && !refill(c)) {
        spin_unlock_irqrestore(&lock, flags);
        return NULL;
    }
    struct slot *s = free_slots[c].next;
    slot_unlink(s);
    uint64_t *used = slab_used(s);
    if ((*used)++ == 0)
        kept_empty[c] = false;  /* the kept empty slab is in use again */
    in_use += 1u << (c + MIN_SHIFT);
    spin_unlock_irqrestore(&lock, flags);
    if (c + MIN_SHIFT >= 8)
        arch_zero(s, 1u << (c + MIN_SHIFT));    /* 256 bytes and up: block zeroing */
    else
        memset(s, 0, 1u << (c + MIN_SHIFT));
    return s;
}

void kfree(void *p, size_t size)
{
    if (!p)
        return;
    unsigned c = class_of(size);
    size_t sz = 1u << (c + MIN_SHIFT);
    uint64_t flags = spin_lock_irqsave(&lock);
    slot_push(c, p);
    in_use -= sz;
    uint64_t *used = slab_used(p);
    ASSERT(used && *used > 0);      /* only what kmalloc handed out */
    if (--*used == 0) {
        if (!kept_empty[c]) {
            kept_empty[c] = true;
        } else {
            /* A second empty slab: unlink its slots and give the frame back. */
            uint8_t *base = (uint8_t *)ALIGN_DOWN((uintptr_t)p, 4096);
            for (size_t off = 0; off + sz <= 4096; off += sz)
                slot_unlink((struct slot *)(base + off));
            frame_free(virt_to_phys(base), 0);
        }
    }
    spin_unlock_irqrestore(&lock, flags);
}

uint64_t kmalloc_in_use(void) { return in_use; }

uint32_t kmalloc_size(size_t size)
{
    return size > (1u << MAX_SHIFT) ? 0 : 1u << (class_of(size) + MIN_SHIFT);
}
