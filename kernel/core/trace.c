/*
 * The monitor's recording side: one ring per core in one physically
 * contiguous area (lib/include/trace_abi.h), switched on by tracepoint.
 *
 * A core writes only its own ring, with interrupts masked, so each ring
 * has one writer and no lock; the traced path never waits: the newest
 * event overwrites the oldest and every reader counts what it missed.
 * Readers share the area read-only: the kernel and kernel-placed services
 * by its kernel address, user programs by mapping it (trace_map), the
 * host through QEMU's view of guest memory (its physical address is on
 * the console at boot).
 */
#include "trace.h"
#include "svc_trace.h"
#include "cpu.h"
#include "thread.h"
#include "space.h"
#include "memory.h"
#include "memobj.h"
#include "object.h"
#include "arch.h"
#include "syscalls_gen.h"
#include "petrel_abi.h"

uint64_t trace_mask[TRACE_MAX_POINTS / 64];

static struct trace_area *area;
/* Where the area is: the host's recorder (tools/petrel/trace.py) finds it
 * through this symbol of kernel.elf, reading guest memory as QEMU holds it. */
paddr_t trace_area_pa;
static uint64_t area_size;
static unsigned area_order;

/* The tracepoints that exist, and those a service may record (trace_emit). */
static const uint64_t service_mask[4] = { TRACE_SERVICE_MASK0, TRACE_SERVICE_MASK1, TRACE_SERVICE_MASK2,
                                          TRACE_SERVICE_MASK3 };

struct trace_group {
    const char *name;
    uint64_t mask[4];
};
#define TRACE_GROUP_ENTRY(n, m0, m1, m2, m3) { n, { m0, m1, m2, m3 } },
static const struct trace_group groups[] = { TRACE_GROUPS(TRACE_GROUP_ENTRY) };
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

/* The object that trace_open hands out: authority over the monitor. */
struct object trace_object = { .type = OBJ_TRACE, .refs = 1 };

void trace_init(void)
{
    if (!CONFIG_TRACE)
        return;
    unsigned ncpus = MIN(ncpus_present, (unsigned)TRACE_MAX_CPUS);
    /* A power of two, and every ring within the largest block the frame
     * allocator gives (2 MiB with the header): 8 cores get 2,048 each. */
    uint32_t slots = 256;
    while (slots * 2 <= (uint32_t)CONFIG_TRACE_SLOTS &&
           TRACE_HEADER + (uint64_t)ncpus * slots * 2 * sizeof(struct trace_record) <= (4096ull << FRAME_MAX_ORDER))
        slots *= 2;
    uint64_t size = TRACE_HEADER + (uint64_t)ncpus * slots * sizeof(struct trace_record);
    unsigned order = 0;
    while ((4096ull << order) < size)
        order++;
    paddr_t pa = frame_alloc_zeroed(order);
    if (pa == PADDR_INVALID) {
        kprintf("trace: no %lu KiB for the rings: tracing is off\n", (unsigned long)(size / 1024));
        return;
    }
    struct trace_area *a = phys_to_virt(pa);
    a->magic = TRACE_MAGIC;
    a->version = TRACE_VERSION;
    a->ncpus = ncpus;
    a->slots = slots;
    a->freq = arch_counter_freq();
    area = a;
    trace_area_pa = pa;
    area_size = ALIGN_UP(size, 4096);
    area_order = order;
    kprintf("trace: %u rings of %u events at 0x%lx\n", ncpus, slots, (unsigned long)pa);
    char list[128];
    if (cmdline_get("trace", list, sizeof(list)) && trace_enable_list(list) != 0)
        kprintf("trace: trace=%s names no group (see docs/reference/tracepoints.md)\n", list);
}

struct trace_area *trace_area(void)
{
    return area;
}

int trace_set(unsigned word, uint64_t set, uint64_t clear)
{
    if (!area || word >= TRACE_MAX_POINTS / 64)
        return -E_INVAL;
    uint64_t known = 0;
    for (unsigned g = 0; g < NGROUPS; g++)
        known |= groups[g].mask[word];
    uint64_t v = (trace_mask[word] & ~clear) | (set & known);
    __atomic_store_n(&trace_mask[word], v, __ATOMIC_RELAXED);
    __atomic_store_n(&area->enabled[word], v, __ATOMIC_RELAXED);
    return 0;
}

/* Does the comma-separated list's word w[0..n) name group g ("all": every one)? */
static bool names_group(const char *w, size_t n, const struct trace_group *g)
{
    size_t len = strlen(g->name);
    return (n == 3 && memcmp(w, "all", 3) == 0) || (n == len && memcmp(w, g->name, n) == 0);
}

int trace_enable_list(const char *list)
{
    bool any = false;
    for (const char *p = list; *p; ) {
        size_t n = 0;
        while (p[n] && p[n] != ',')
            n++;
        for (unsigned g = 0; g < NGROUPS; g++) {
            if (!names_group(p, n, &groups[g]))
                continue;
            for (unsigned w = 0; w < 4; w++)
                trace_set(w, groups[g].mask[w], 0);
            any = true;
        }
        p += n + (p[n] == ',');
    }
    return any ? 0 : -E_INVAL;
}

/* Record n of a core's ring, into slot r: its seq 0 while it is written,
 * then n + 1, then the core's head past it (interrupts masked: the ring
 * has one writer). `who` is the id, core and process as one word. */
static inline __attribute__((always_inline)) void put(struct trace_core *tc, struct trace_record *r, uint64_t n,
                                                      uint64_t time, uint64_t who, const uint64_t *arg)
{
    __atomic_store_n(&r->seq, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    r->time = time;
    __builtin_memcpy(&r->id, &who, sizeof(who));
    for (unsigned k = 0; k < TRACE_ARGS; k++)
        r->arg[k] = arg[k];
    __atomic_store_n(&r->seq, n + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&tc->head, n + 1, __ATOMIC_RELEASE);
}

/* The record word of id on core `cpu`, for thread t's process. */
static inline uint64_t who_of(const struct thread *t, uint64_t cpu, unsigned id)
{
    return (uint64_t)(t && t->space ? t->space->id : 0) << 32 | cpu << 16 | id;
}

void trace_record(unsigned id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    if (!CONFIG_TRACE)
        return;                                 /* (no tracepoint calls it then) */
    uint64_t irq = arch_irq_save();
    struct cpu *c = this_cpu();
    uint64_t cpu = c->index;
    struct trace_core *tc = &area->core[cpu];
    uint64_t n = tc->head;
    uint32_t slots = area->slots;
    struct trace_record *r = (struct trace_record *)((uintptr_t)area + TRACE_HEADER) +
                             (cpu * slots + (n & (slots - 1)));
    const uint64_t arg[TRACE_ARGS] = { a0, a1, a2, a3, a4 };
    put(tc, r, n, arch_counter_relaxed(), who_of(c->current, cpu, id), arg);
    arch_irq_restore(irq);
}

/* ---------------------------------------------------------------- kernel-placed services */

NOINLINE void trace_ksvc_request(uint64_t label, uint32_t client_pid)
{
    trace_svc_request(label, client_pid, TRACE_PLACEMENT_KERNEL);
}

const uint64_t *svc_trace_enabled = trace_mask;

void svc_trace_record(unsigned id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    trace_record(id, a0, a1, a2, a3, a4);
}

const struct trace_area *svc_trace_area(void)
{
    return area;
}

/* ---------------------------------------------------------------- system calls */

int64_t sys_trace_open(uint32_t root)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, root, OBJ_ROOT, R_MANAGE, &sl);
    if (err)
        return err;
    if (!area)
        return -E_NOENT;
    return handle_alloc(current_thread()->space, &trace_object, R_READ | R_WRITE | R_MANAGE | R_GRANT | R_DUP, 0);
}

int64_t sys_trace_ctl(uint32_t trace, uint64_t word, uint64_t set, uint64_t clear)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, trace, OBJ_TRACE, R_MANAGE, &sl);
    if (err)
        return err;
    if (word >= TRACE_MAX_POINTS / 64)
        return -E_INVAL;
    return trace_set((unsigned)word, set, clear);
}

int64_t sys_trace_map(uint32_t trace)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, trace, OBJ_TRACE, 0, &sl);
    if (err)
        return err;
    /* R_READ: the whole area. R_WRITE alone (a service that records): the
     * header, whose enabled bits its sites test; not the others' events. */
    uint64_t size = (sl->rights & R_READ) ? area_size : (sl->rights & R_WRITE) ? TRACE_HEADER : 0;
    if (!size)
        return -E_PERM;
    struct memobj *m = memobj_create_file(current_thread()->space, trace_area_pa, size, &err);
    if (!m)
        return err;
    int64_t h = handle_alloc(current_thread()->space, &m->obj, R_READ | R_DUP | R_GRANT, 0);
    obj_unref(&m->obj);
    return h;
}

int64_t sys_trace_emit(uint64_t handle_id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, (uint32_t)handle_id, OBJ_TRACE, R_WRITE, &sl);
    if (err)
        return err;
    uint64_t id = handle_id >> 32;
    if (id >= TRACE_MAX_POINTS || !(service_mask[id / 64] >> (id % 64) & 1))
        return -E_INVAL;
    if (!(trace_mask[id / 64] >> (id % 64) & 1))
        return 0;
    trace_record((unsigned)id, a0, a1, a2, a3, a4);
    return 1;
}

int64_t sys_trace_emit_many(uint32_t trace, vaddr_t events, uint64_t count)
{
    struct handle_slot *sl;
    int err = handle_get(current_thread()->space, trace, OBJ_TRACE, R_WRITE, &sl);
    if (err)
        return err;
    if (count == 0 || count > TRACE_EMIT_MAX)
        return -E_INVAL;
    /* Read where they are when they lie in one page (user_env.c's batches
     * do), else copied whole onto the stack. */
    uint64_t bytes = count * sizeof(struct trace_event);
    struct trace_event copy[TRACE_EMIT_MAX];
    const struct trace_event *ev = (events & 4095) + bytes <= 4096 ? user_ptr(events, false) : NULL;
    if (!ev) {
        if (copy_from_user(copy, events, bytes))
            return -E_FAULT;
        ev = copy;
    }
    uint64_t on[TRACE_MAX_POINTS / 64];         /* what a service records and is switched on */
    for (unsigned w = 0; w < TRACE_MAX_POINTS / 64; w++)
        on[w] = service_mask[w] & __atomic_load_n(&trace_mask[w], __ATOMIC_RELAXED);
    uint64_t now = arch_counter_relaxed();
    uint64_t irq = arch_irq_save();
    struct cpu *c = this_cpu();
    struct trace_core *tc = &area->core[c->index];
    uint64_t n = tc->head, first = n;
    uint32_t slots = area->slots;
    struct trace_record *ring = (struct trace_record *)((uintptr_t)area + TRACE_HEADER) + (uint64_t)c->index * slots;
    uint64_t who = who_of(c->current, c->index, 0);
    int64_t result = 0;
    for (uint64_t i = 0; i < count; i++) {
        const struct trace_event *e = &ev[i];
        uint32_t id = __atomic_load_n(&e->id, __ATOMIC_RELAXED);    /* (once: the caller's other threads may
                                                                     * change it meanwhile) */
        uint64_t time = e->time;
        if (id >= TRACE_MAX_POINTS || !(on[id / 64] >> (id % 64) & 1)) {
            if (id < TRACE_MAX_POINTS && (service_mask[id / 64] >> (id % 64) & 1))
                continue;                       /* switched off */
            result = -E_INVAL;                  /* (those before it stay recorded) */
            break;
        }
        /* Its own stamp, never later than the call; the head moved after
         * each (a copier's heads read after a copy say which slot may be
         * half written). */
        put(tc, &ring[n & (slots - 1)], n, time && time < now ? time : now, who | id, e->arg);
        n++;
    }
    arch_irq_restore(irq);
    return result ? result : (int64_t)(n - first);
}
