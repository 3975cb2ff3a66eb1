/*
 * Kernel object memory: size classes of 32 to 2048 bytes, each a free
 * list of slots carved from whole 4 KiB frames. Freed slots go back to
 * their class's list (frames are not returned to the frame allocator;
 * the classes keep what they once needed). Callers pass the size back to
 * kfree, so no header is needed. Allocations are zeroed. Callers hold
 * the kernel lock or own the memory in some other way; the lists have
 * their own lock so that boot code and self tests can use them too.
 */
#include "kmalloc.h"
#include "kernel.h"
#include "memory.h"
#include "spinlock.h"

#define MIN_SHIFT   5
#define MAX_SHIFT   11
#define NCLASSES    (MAX_SHIFT - MIN_SHIFT + 1)

struct slot { struct slot *next; };

static struct slot *free_slots[NCLASSES];
static uint64_t in_use;
static spinlock_t lock = SPINLOCK_INIT;

static unsigned class_of(size_t size)
{
    unsigned c = 0;
    while ((1u << (c + MIN_SHIFT)) < size)
        c++;
    return c;
}

/* Carve a fresh frame into slots of class c. */
static bool refill(unsigned c)
{
    paddr_t pa = frame_alloc(0);
    if (pa == PADDR_INVALID)
        return false;
    size_t sz = 1u << (c + MIN_SHIFT);
    uint8_t *base = phys_to_virt(pa);
    for (size_t off = 0; off + sz <= 4096; off += sz) {
        struct slot *s = (struct slot *)(base + off);
        s->next = free_slots[c];
        free_slots[c] = s;
    }
    return true;
}

void *kmalloc(size_t size)
{
    if (size == 0 || size > (1u << MAX_SHIFT))
        return NULL;
    unsigned c = class_of(size);
    uint64_t flags = spin_lock_irqsave(&lock);
    if (!free_slots[c] && !refill(c)) {
        spin_unlock_irqrestore(&lock, flags);
        return NULL;
    }
    struct slot *s = free_slots[c];
    free_slots[c] = s->next;
    in_use += 1u << (c + MIN_SHIFT);
    spin_unlock_irqrestore(&lock, flags);
    memset(s, 0, 1u << (c + MIN_SHIFT));
    return s;
}

void kfree(void *p, size_t size)
{
    if (!p)
        return;
    unsigned c = class_of(size);
    uint64_t flags = spin_lock_irqsave(&lock);
    struct slot *s = p;
    s->next = free_slots[c];
    free_slots[c] = s;
    in_use -= 1u << (c + MIN_SHIFT);
    spin_unlock_irqrestore(&lock, flags);
}

uint64_t kmalloc_in_use(void) { return in_use; }

uint32_t kmalloc_size(size_t size)
{
    return size > (1u << MAX_SHIFT) ? 0 : 1u << (class_of(size) + MIN_SHIFT);
}
