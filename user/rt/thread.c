/* This process's address space layout, memory and threads. */
#include "petrel.h"
#include "petrel_rt.h"

#define VA_BASE     0x0000001000000000ull   /* handed out upwards from here */
#define STACK_SIZE  0x10000ull

static uint64_t va_next = VA_BASE;

/* Ranges given back with va_free, handed out again by va_alloc, so that a
 * long-lived process (a supervisor spawning again and again) never runs
 * out of address space or grows page tables for it. */
#define VA_FREE_MAX 64
static struct { uint64_t va, size; } va_freed[VA_FREE_MAX];
static volatile uint32_t va_lock;

static void va_lock_take(void)
{
    while (__atomic_exchange_n(&va_lock, 1, __ATOMIC_ACQUIRE))
        sys_yield();
}

static void va_lock_drop(void)
{
    __atomic_store_n(&va_lock, 0, __ATOMIC_RELEASE);
}

uint64_t va_alloc(uint64_t size, uint64_t align)
{
    if (align < 4096)
        align = 4096;
    size = (size + 4095) & ~4095ull;
    va_lock_take();
    for (unsigned i = 0; i < VA_FREE_MAX; i++) {
        /* A freed range that fits without wasting more than its size. */
        if (va_freed[i].size >= size && va_freed[i].size <= 2 * size && !(va_freed[i].va & (align - 1))) {
            uint64_t va = va_freed[i].va;
            va_freed[i].size = 0;
            va_lock_drop();
            return va;
        }
    }
    uint64_t va = (va_next + align - 1) & ~(align - 1);
    va_next = va + size + 4096;         /* a guard page between */
    va_lock_drop();
    return va;
}

void va_free(uint64_t va, uint64_t size)
{
    va_lock_take();
    for (unsigned i = 0; i < VA_FREE_MAX; i++) {
        if (!va_freed[i].size) {
            va_freed[i].va = va;
            va_freed[i].size = (size + 4095) & ~4095ull;
            break;
        }
    }
    va_lock_drop();                     /* a full list forgets the range: only address space */
}

void *mem_alloc(uint64_t size, uint32_t flags, uint32_t *handle)
{
    uint64_t page = 4096ull << ((flags & MEM_PAGE_MASK) == MEM_PAGE_64K ? 4 : (flags & MEM_PAGE_MASK) == MEM_PAGE_2M ? 9 : 0);
    size = (size + page - 1) & ~(page - 1);
    int64_t m = sys_mem_create(size, flags);
    if (m < 0)
        return NULL;
    uint64_t va = va_alloc(size, page);
    if (sys_mem_map(self_space(), (uint32_t)m, va, 0, size, R_READ | R_WRITE) < 0) {
        sys_handle_close((uint32_t)m);
        return NULL;
    }
    if (handle)
        *handle = (uint32_t)m;
    else
        sys_handle_close((uint32_t)m);      /* the mapping keeps the object */
    return (void *)va;
}

void sleep_ms(uint64_t ms)
{
    static volatile uint32_t never;
    sys_futex_wait((uint64_t)&never, never, ms * 1000000ull);
}

unsigned thread_state(uint32_t t)
{
    struct petrel_thread_stats st = { 0 };
    if (sys_thread_stats(t, &st) != 0)
        return THREAD_DEAD;
    return st.state;
}

bool wait_state(uint32_t t, unsigned state, uint64_t ms)
{
    uint64_t end = (uint64_t)sys_clock_ns() + ms * 1000000ull;
    while (thread_state(t) != state && (uint64_t)sys_clock_ns() < end)
        sleep_ms(1);
    return thread_state(t) == state;
}

extern char thread_entry[];

/* The stacks of threads thread_spawn made, so thread_reap can unmap them. */
#define MAX_STACKS  256
static struct { uint32_t thread; uint64_t stack, utcb; } stacks[MAX_STACKS];

static void note_stack(uint32_t thread, uint64_t stack, uint64_t utcb)
{
    for (unsigned n = 0, i = thread % MAX_STACKS; n < MAX_STACKS; n++, i = (i + 1) % MAX_STACKS) {
        if (!stacks[i].thread) {
            stacks[i].thread = thread;
            stacks[i].stack = stack;
            stacks[i].utcb = utcb;
            return;
        }
    }
}

/* Stacks of reaped threads, kept for the next thread_spawn (as a C library
 * keeps them): a new thread then costs no memory object, mapping, unmapping
 * or first-touch page fault for its stack. */
#define KEPT_STACKS 4
static uint64_t kept[KEPT_STACKS];
static unsigned nkept;

/* A kept stack, or 0. */
static uint64_t stack_take(void)
{
    uint64_t stack = 0;
    va_lock_take();
    if (nkept)
        stack = kept[--nkept];
    va_lock_drop();
    return stack;
}

/* Keep a stack no thread uses any more; false if there are enough kept. */
static bool stack_keep(uint64_t stack)
{
    bool done = false;
    va_lock_take();
    if (nkept < KEPT_STACKS) {
        kept[nkept++] = stack;
        done = true;
    }
    va_lock_drop();
    return done;
}

int64_t thread_reap(uint32_t thread)
{
    int64_t err = sys_thread_kill(thread);
    if (err == -E_BADHANDLE)
        return err;
    /* Dead means it runs nowhere (not even on a core yet to take the kill):
     * nothing can touch its stack any more. */
    bool stopped = thread_state(thread) == THREAD_DEAD;
    sys_handle_close(thread);
    for (unsigned n = 0, i = thread % MAX_STACKS; n < MAX_STACKS; n++, i = (i + 1) % MAX_STACKS) {
        if (stacks[i].thread == thread) {
            if (!stopped || !stack_keep(stacks[i].stack)) {
                sys_mem_unmap(self_space(), stacks[i].stack);
                va_free(stacks[i].stack, STACK_SIZE);
            }
            va_free(stacks[i].utcb, 4096);      /* the kernel unmapped it at the thread's death */
            stacks[i].thread = 0;
            break;
        }
    }
    return 0;
}

int64_t thread_spawn(void (*fn)(void *), void *arg, unsigned prio, int cpu)
{
    uint8_t *stack = (uint8_t *)stack_take();
    if (!stack)
        stack = mem_alloc(STACK_SIZE, 0, NULL);
    uint64_t utcb_va = va_alloc(4096, 4096);
    if (!stack)
        return -E_NOMEM;
    int64_t t = sys_thread_create(self_space(), utcb_va);
    if (t < 0) {
        sys_mem_unmap(self_space(), (uint64_t)stack);
        return t;
    }
    uint64_t *top = (uint64_t *)(stack + STACK_SIZE) - 2;
    top[0] = (uint64_t)fn;
    top[1] = (uint64_t)arg;
    int64_t err = sys_thread_set_priority((uint32_t)t, prio);
    if (!err && cpu >= 0)
        err = sys_thread_set_affinity((uint32_t)t, (uint64_t)cpu);
    if (!err && cpu == THREAD_ANY_CORE)
        err = sys_thread_set_cpus((uint32_t)t, (uint64_t)sys_cpus_online());
    if (!err)
        err = sys_thread_set_tls((uint32_t)t, utcb_va);
    if (!err)
        err = sys_thread_start((uint32_t)t, (uint64_t)thread_entry, (uint64_t)top, (uint64_t)top);
    if (err) {
        sys_thread_kill((uint32_t)t);
        sys_handle_close((uint32_t)t);
        sys_mem_unmap(self_space(), (uint64_t)stack);
        return err;
    }
    note_stack((uint32_t)t, (uint64_t)stack, utcb_va);
    return t;
}
