/*
 * The service environment inside the kernel. An endpoint bound to a
 * kernel-placed service (service_bind) has no server thread: a call on it
 * is handed straight to the service's skeleton in the caller's own kernel
 * entry, with the message read from the caller's registers and UTCB, and
 * the reply written back into them — one kernel entry per request (a
 * register-only request from the IPC fastpath never becomes a message:
 * ksvc_fast in ksvc.h). A reply kept for later parks the caller exactly as
 * a user-placed server would (waiting for a reply) until the service
 * answers through the token. A call's environment (call->env) is its
 * caller; a send has none (NULL): nothing to answer.
 *
 * Any other request runs on the service's own kernel stack (struct
 * ksvc_run), one request at a time, as a user-placed server thread serves
 * one at a time. Its service code runs without the kernel lock and with
 * interrupts on; what it asks of the kernel takes the lock for that call
 * only, and copies through client buffers go in bounded steps. After an
 * interrupt, if the scheduler would rather run something else on this
 * core, the request stops there, its stack kept, and the caller's thread
 * goes back to its run queue; when the scheduler picks it again the
 * request goes on (ksvc_resume). A caller that finds the service busy
 * waits for it (lending its priority to the caller being served) and then
 * makes its call again. docs/design/hybrid.md has the whole design.
 */
#include "ipc.h"
#include "thread.h"
#include "space.h"
#include "sched.h"
#include "kmalloc.h"
#include "memobj.h"
#include "memory.h"
#include "bootimage.h"
#include "fdt.h"
#include "irq.h"
#include "cpu.h"
#include "virtio_mmio.h"
#include "timer.h"
#include "svc.h"
#include "syscalls_gen.h"

#include "ksvc.h"
#include "svc_transport.h"

struct ksvc_run ksvc_runs[KSVC_BUILTIN_MAX];

/* A kernel-placed service's handle for its own wakeup (svc_wakeup): no
 * struct khandle, only a value it passes in a call (svc_client_call) or
 * signals; releasing it does nothing. */
#define KWAKE_HANDLE    0x7ffffffeu

/* Whom a reply of this call goes to: its caller, unless it is a send or
 * the caller died in the middle of the request. */
static struct thread *reply_target(const struct svc_call *call)
{
    struct thread *t = call->env;
    return t && t->ksvc_run && t->ksvc_run->abort ? NULL : t;
}

/*
 * A request from another kernel-placed service (svc_client_call below):
 * the message, the reply, and the caller's own handle values. Its call's
 * env is NULL, as a send's (no thread to answer), and the callee's run
 * names it (kclient_here), so that the replies of every other request pay
 * nothing for it.
 */
struct kclient {
    uint64_t label, pid;
    unsigned len, nh, cap;
    uint64_t *mr;                       /* the caller's words: the request, then the reply (cap at most) */
    svc_handle handles[MSG_MAX_HANDLES];
    struct khandle *objs[MSG_MAX_HANDLES];  /* what the reply gives the caller */
    unsigned reply_len, nobjs;
    bool answered, done;
};

/* The kernel client of the request running here, if it has one
 * (interrupts off: the request stays on this core). */
static struct kclient *kclient_here(void)
{
    struct ksvc_run *run = this_cpu()->ksvc;
    return run ? run->kclient : NULL;
}

/* Is this call a kernel client's? */
static bool kclient_call(const struct svc_call *call)
{
    if (call->env)
        return false;
    uint64_t flags = arch_irq_save();   /* (the request stays on this core meanwhile) */
    bool k = kclient_here() != NULL;
    arch_irq_restore(flags);
    return k;
}

static void kclient_answer(struct kclient *k, unsigned len, const uint64_t *mr)
{
    if (!k || k->answered)
        return;
    k->reply_len = MIN(len, MSG_MAX_MRS);
    for (unsigned i = 0; i < k->reply_len && i < k->cap; i++)
        k->mr[i] = mr[i];               /* (the request's words were read: dispatch decodes them first) */
    k->answered = true;
}

static int copy_client(uint64_t client_addr, uint8_t *mine, uint64_t len, bool to_client);

/* A copy between a kernel client's memory and the service's: the client's
 * own buffers, in the kernel's half of the address space, or a buffer of
 * the thread the client serves, which it passed on as it is
 * (svc_client_buffer): the user half is that thread's. */
static int kclient_copy(uint64_t client_addr, uint8_t *mine, uint64_t len, bool to_client)
{
    if (client_addr + len < client_addr)
        return SVC_E_FAULT;
    if (client_addr < KERNEL_DIRECT_BASE)
        return copy_client(client_addr, mine, len, to_client);
    if (to_client)
        memcpy((void *)(uintptr_t)client_addr, mine, len);
    else
        memcpy(mine, (const void *)(uintptr_t)client_addr, len);
    return 0;
}

/* Whose memory a client buffer is in: the caller of the request running
 * here (NULL once it died), or on the register path the current thread. */
struct thread *buffer_owner(void)
{
    struct ksvc_run *run = this_cpu()->ksvc;
    if (!run)
        return current_thread();
    return run->abort ? NULL : run->holder;
}

struct ksvc_run *ksvc_env_run(void)
{
    struct ksvc_run *run = this_cpu()->ksvc;
    struct thread *cur = current_thread();     /* none in an interrupt taken while the core idles */
    if (!run && cur && cur->ksvc_fast_svc)
        run = cur->ksvc_fast_svc->run;
    return run;
}

/*
 * A request's service code runs without the kernel lock and with
 * interrupts on (cpu->ksvc_unlocked); what it asks of the kernel takes
 * the lock for that call only (env_lock, env_unlock). Called from an
 * interrupt handler, or from a request finishing without its dead caller,
 * the lock is held already and nothing changes.
 */
bool env_lock(void)
{
    /* Interrupts off before looking: an interrupt between the look and
     * the lock could stop the request and resume it somewhere that holds
     * the lock already (a killer finishing it). Where the flag is clear
     * they were off anyway. */
    arch_irq_disable();
    struct cpu *c = this_cpu();
    if (!c->ksvc_unlocked)
        return false;
    c->ksvc_unlocked = false;
    kernel_lock();
    return true;
}

void env_unlock(bool took)
{
    if (took) {
        this_cpu()->ksvc_unlocked = true;
        kernel_unlock();
        arch_irq_enable();
    }
}

/* Give the caller handles to nh objects the service holds (as an IPC
 * transfer would: into its table, values in its UTCB), which the service
 * then no longer holds (t NULL: nobody to give them to); how many the
 * caller got. */
static unsigned give_objects(struct thread *t, unsigned nh, const svc_handle *h, const uint32_t *rights)
{
    unsigned got = 0;
    struct kclient *kc = t ? NULL : kclient_here();
    for (unsigned i = 0; i < nh && i < MSG_MAX_HANDLES; i++) {
        const struct khandle *k = khandle_of(h[i], false);
        if (k && kc && !kc->answered && kc->nobjs < MSG_MAX_HANDLES) {
            /* a kernel client's: a reference of its own (svc_client_call) */
            struct khandle *mine = kmalloc(sizeof(*mine));
            if (mine) {
                mine->obj = k->obj;
                mine->rights = k->rights & rights[i];
                mine->badge = k->badge;
                obj_ref(mine->obj);
                kc->objs[kc->nobjs++] = mine;
            }
        }
        int64_t v = k && t ? handle_alloc(t->space, k->obj, k->rights & rights[i], k->badge) : -E_INVAL;
        if (v > 0)
            t->utcb->recv_handles[got++] = (uint32_t)v;
        svc_handle_release(h[i]);
    }
    return got;
}

/* Write a reply into the caller's saved registers and UTCB; a reply to a
 * fault resumes or stops the thread as its words say (fault_apply).
 * Returns false if that killed it. */
static NOINLINE bool write_reply(struct thread *t, uint64_t label, unsigned len, const uint64_t *mr, unsigned got)
{
    if (t->in_fault)
        return fault_apply(t, len, mr);
    t->tf.x[0] = 0;
    t->tf.x[1] = MSG_INFO(label, len, got);
    /* past the length the caller keeps its own registers, as after a server's reply */
    unsigned regs = MIN(len, MSG_REG_MRS);
    for (unsigned i = 0; i < regs; i++)
        t->tf.x[2 + i] = mr[i];
    for (unsigned i = MSG_REG_MRS; i < len; i++)
        t->utcb->mr[i] = mr[i];
    t->tf.x[8] = 0;
    t->tf.x[9] = 0;
    return true;
}

/* Not svc_reply_objects with no objects: every reply of the Linux
 * personality's register entry comes here, and the object-giving path
 * around write_reply costs it 16 instructions. */
void svc_reply(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr)
{
    bool l = env_lock();
    struct thread *t = reply_target(call);
    if (t)
        write_reply(t, label, MIN(len, MSG_MAX_MRS), mr, 0);
    else
        kclient_answer(kclient_here(), len, mr);
    env_unlock(l);
}

void svc_reply_objects(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                       const svc_handle *h, const uint32_t *rights)
{
    bool l = env_lock();
    struct thread *t = reply_target(call);
    unsigned got = give_objects(t, nh, h, rights);
    if (t)
        write_reply(t, label, MIN(len, MSG_MAX_MRS), mr, got);
    else
        kclient_answer(kclient_here(), len, mr);  /* (its objects went above: give_objects) */
    env_unlock(l);
}

void svc_fail(struct svc_call *call, int64_t err)
{
    for (unsigned i = 0; i < call->nhandles; i++)
        svc_handle_release(call->handles[i]);
    call->nhandles = 0;
    if (call->label == LABEL_FAULT) {
        /* A fault the service does not take (its handler is not this
         * service's business): the thread stops, as user_env.c does, rather
         * than resume into the same fault again and again. */
        uint64_t stop[1] = { FAULT_REPLY_STOP };
        svc_reply(call, 0, 1, stop);
        return;
    }
    uint64_t mr[1] = { (uint64_t)err };
    svc_reply(call, call->label, 1, mr);
}

svc_token svc_defer(struct svc_call *call)
{
    bool l = env_lock();
    struct thread *t = reply_target(call);
    struct reply *r = t ? kmalloc(sizeof(*r)) : NULL;
    if (r) {
        r->caller = t;
        t->reply_holder = r;
        t->state = T_REPLY;
    }
    env_unlock(l);
    return (svc_token)(uintptr_t)r;
}

void svc_reply_later(svc_token token, uint64_t label, unsigned len, const uint64_t *mr)
{
    svc_reply_later_objects(token, label, len, mr, 0, NULL, NULL);
}

void svc_reply_later_objects(svc_token token, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                             const svc_handle *h, const uint32_t *rights)
{
    struct reply *r = (struct reply *)(uintptr_t)token;
    bool l = env_lock();
    struct thread *t = r->caller;
    unsigned got = give_objects(t, nh, h, rights);
    if (t) {
        t->reply_holder = NULL;
        if (!write_reply(t, label, MIN(len, MSG_MAX_MRS), mr, got))
            ;                           /* a fault answered with "stop": it is dead */
        else if (t != current_thread())
            sched_enqueue(t);
        else
            t->state = T_RUNNING;
    }
    kfree(r, sizeof(*r));
    env_unlock(l);
}

static unsigned alloc_order(size_t size)
{
    unsigned order = 0;
    while ((4096ull << order) < size)
        order++;
    return order;
}

/* What an allocation of `size` takes, charged to the service's account. */
static uint64_t alloc_bytes(size_t size)
{
    return size <= 2048 ? kmalloc_size(size) : 4096ull << alloc_order(size);
}

void *svc_alloc(size_t size)
{
    bool l = env_lock();
    void *p = NULL;
    struct ksvc_run *run = ksvc_env_run();
    struct space *acct = run ? run->account : NULL;
    if (!acct || space_charge(acct, LIMIT_MEMORY, alloc_bytes(size)) == 0) {
        if (size <= 2048) {
            p = kmalloc(size);
        } else {
            paddr_t pa = frame_alloc_zeroed(alloc_order(size));
            p = pa == PADDR_INVALID ? NULL : phys_to_virt(pa);
        }
        if (!p && acct)
            space_uncharge(acct, LIMIT_MEMORY, alloc_bytes(size));
    }
    env_unlock(l);
    return p;
}

void svc_free(void *p, size_t size)
{
    bool l = env_lock();
    struct ksvc_run *run = ksvc_env_run();
    if (run && run->account)
        space_uncharge(run->account, LIMIT_MEMORY, alloc_bytes(size));
    if (size <= 2048)
        kfree(p, size);
    else
        frame_free(virt_to_phys(p), alloc_order(size));
    env_unlock(l);
}

uint64_t svc_memory_limit(void)
{
    struct ksvc_run *run = ksvc_env_run();
    return run && run->account ? run->account->limit[LIMIT_MEMORY] : 0;
}

/* In the kernel a block of frames is contiguous and its address known. */
void *svc_dma_alloc(size_t size, uint64_t *pa)
{
    if (size == 0 || size > MiB(2))
        return NULL;
    void *p = svc_alloc(size < 4096 ? 4096 : size);
    if (p)
        *pa = virt_to_phys(p);
    return p;
}

void svc_dma_free(void *p, size_t size)
{
    svc_free(p, size < 4096 ? 4096 : size);
}

/* Shared memory is one MEM_DMA page of a memory object (committed at
 * creation, never moved or shared by a clone): the kernel reaches it
 * through its linear map, where it stays for the object's life. */
static unsigned page_order_for(size_t size)
{
    return size <= KiB(4) ? 0 : size <= KiB(64) ? 4 : 9;
}

void *svc_shared_alloc(size_t size, svc_handle *mem, uint64_t *pa)
{
    *mem = 0;
    if (size == 0 || size > MiB(2))
        return NULL;
    bool l = env_lock();
    struct ksvc_run *run = ksvc_env_run();
    struct space *acct = run ? run->account : NULL;
    int err;
    unsigned order = page_order_for(size);
    struct memobj *m = acct ? memobj_create_for(acct, ALIGN_UP(size, KiB(4) << order), order, true, &err) : NULL;
    struct khandle *k = m ? kmalloc(sizeof(*k)) : NULL;
    void *p = NULL;
    if (k) {
        m->dma = true;
        k->obj = &m->obj;
        k->rights = R_READ | R_WRITE | R_GRANT | R_DUP;
        *mem = (svc_handle)(uintptr_t)k;
        p = phys_to_virt(m->pages[0]);
        if (pa)
            *pa = m->pages[0];
    } else if (m) {
        obj_unref(&m->obj);
    }
    env_unlock(l);
    return p;
}

svc_handle svc_dma_object(uint64_t size)
{
    if (size == 0 || size > GiB(1))
        return 0;
    bool l = env_lock();
    struct ksvc_run *run = ksvc_env_run();
    struct space *acct = run ? run->account : NULL;
    int err;
    struct memobj *m = acct ? memobj_create_for(acct, ALIGN_UP(size, KiB(4)), 0, true, &err) : NULL;
    struct khandle *k = m ? kmalloc(sizeof(*k)) : NULL;
    if (k) {
        m->dma = true;
        k->obj = &m->obj;
        k->rights = R_READ | R_WRITE | R_GRANT | R_DUP;
    } else if (m) {
        obj_unref(&m->obj);
    }
    env_unlock(l);
    return (svc_handle)(uintptr_t)k;
}

int64_t svc_dma_page(svc_handle mem, uint64_t offset)
{
    bool l = env_lock();
    struct khandle *k = khandle_of(mem, false);
    int64_t r = -E_INVAL;
    if (k && k->obj->type == OBJ_MEMORY) {
        struct memobj *m = list_entry(k->obj, struct memobj, obj);
        if (m->kind == MEM_ANON && m->dma && offset < m->size)
            r = (int64_t)(m->pages[offset / (KiB(4) << m->order)] + offset % (KiB(4) << m->order));
    }
    env_unlock(l);
    return r;
}

svc_handle svc_shared_give(svc_handle mem)
{
    bool l = env_lock();
    struct khandle *k = khandle_of(mem, false), *give = k ? kmalloc(sizeof(*give)) : NULL;
    if (give) {
        give->obj = k->obj;
        give->rights = k->rights & (R_READ | R_WRITE | R_GRANT);
        obj_ref(give->obj);
    }
    env_unlock(l);
    return (svc_handle)(uintptr_t)give;
}

void *svc_shared_map(svc_handle mem, size_t size)
{
    bool l = env_lock();
    struct khandle *k = khandle_of(mem, false);
    void *p = NULL;
    if (k && k->obj->type == OBJ_MEMORY && (k->rights & (R_READ | R_WRITE)) == (R_READ | R_WRITE)) {
        struct memobj *m = list_entry(k->obj, struct memobj, obj);
        if (m->kind == MEM_ANON && m->dma && m->npages == 1 && size && size <= m->size)
            p = phys_to_virt(m->pages[0]);
    }
    env_unlock(l);
    return p;
}

/*
 * Copies through a client's buffer: the caller is the current thread, so
 * its memory is reached directly, a page at a time under the lock (its
 * mappings cannot change in the middle). Within the page the copy goes
 * COPY_POLL bytes at a time and stops early when an interrupt is pending,
 * so interrupts (and with them a better thread) wait for one short piece
 * (about 110 instructions: memcpy moves it 128 bytes a round, copy.S);
 * other cores wait for the lock one page at most.
 */
#define COPY_POLL 1024

/* A buffer the client lent of its own caller's memory (reply_lend): a page
 * at a time, the lend looked at again for each under the lock. */
static int copy_lent(uint64_t va, uint8_t *mine, uint64_t len, bool to_client)
{
    while (len) {
        uint64_t n = MIN(len, 4096 - (va & 4095));
        bool l = env_lock();
        struct thread *owner = lent_owner(buffer_owner(), va, n, to_client);
        int err = owner ? space_copy_kernel(owner->space, va, mine, n, to_client) : -E_FAULT;
        env_unlock(l);
        if (err)
            return SVC_E_FAULT;
        va += n, mine += n, len -= n;
    }
    return 0;
}

static int copy_client(uint64_t client_addr, uint8_t *mine, uint64_t len, bool to_client)
{
    if (client_addr + len < client_addr)
        return SVC_E_FAULT;
    if (client_addr & SVC_BUFFER_LENT)
        return copy_lent(client_addr & ~SVC_BUFFER_LENT, mine, len, to_client);
    while (len) {
        uint64_t n = MIN(len, 4096 - (client_addr & 4095)), done = 0;
        bool l = env_lock();
        uint8_t *theirs = buffer_owner() ? user_ptr(client_addr, to_client) : NULL;
        while (theirs && done < n) {
            uint64_t k = MIN(n - done, COPY_POLL);
            if (to_client)
                memcpy(theirs + done, mine + done, k);
            else
                memcpy(mine + done, theirs + done, k);
            done += k;
            if (arch_irq_pending())
                break;
        }
        env_unlock(l);
        if (!theirs)
            return SVC_E_FAULT;
        client_addr += done, mine += done, len -= done;
    }
    return 0;
}

/* A request's code runs for a thread (its holder) whose address space is
 * the current one, and the services it calls run for that same thread
 * (kclient_run): they reach its memory as this one does (kclient_copy). */
uint64_t svc_client_buffer(struct svc_call *call, uint64_t addr, uint64_t len, int writable)
{
    (void)call, (void)len, (void)writable;
    uint64_t flags = arch_irq_save();   /* (the request stays on this core meanwhile) */
    int passes = this_cpu()->ksvc_unlocked && buffer_owner() != NULL;
    arch_irq_restore(flags);
    return passes ? addr : 0;
}

int svc_copy_in(struct svc_call *call, void *dst, uint64_t client_addr, uint64_t len)
{
    if (kclient_call(call))
        return kclient_copy(client_addr, dst, len, false);
    return copy_client(client_addr, dst, len, false);
}

int svc_copy_out(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    if (kclient_call(call))
        return kclient_copy(client_addr, (uint8_t *)src, len, true);
    return copy_client(client_addr, (uint8_t *)src, len, true);
}

/*
 * In a shared entry (this_cpu()->shared_in) the kernel lock is not held:
 * the caller's pages are reached through its own translation (the MMU's,
 * AT), never filled here. A page stays where it is meanwhile: only the
 * service's other code, which waits for the shared entry to end, and the
 * caller itself, which is here, unmap or replace a writable page of a
 * Linux process (copy-on-write replaces only read-only ones).
 */
int svc_copy_out_try(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    if (!this_cpu()->shared_in)
        return svc_copy_out(call, client_addr, src, len);
    const uint8_t *mine = src;
    if (client_addr + len < client_addr)
        return SVC_E_FAULT;
    while (len) {
        uint64_t n = MIN(len, 4096 - (client_addr & 4095));
        uint8_t *theirs = arch_user_translate(client_addr, true);
        if (!theirs)
            return SVC_E_AGAIN;
        memcpy(theirs, mine, n);
        client_addr += n, mine += n, len -= n;
    }
    return 0;
}

/* A kernel-placed service lives as long as the kernel: its state is fresh once. */
void *svc_state(size_t size, int *fresh)
{
    *fresh = 1;
    return size <= MiB(2) ? svc_alloc(size) : NULL;     /* (svc_alloc takes the lock) */
}

int svc_bootfile(uint32_t index, struct petrel_bootfile *info, const void **data)
{
    struct bootimage_file f;
    if (bootimage_get(index, &f) != 0)
        return SVC_E_NOENT;
    memset(info, 0, sizeof(*info));
    memcpy(info->name, f.name, strnlen(f.name, sizeof(info->name) - 1));
    info->size = f.size;
    info->flags = f.flags;
    *data = f.data;
    return 0;
}

extern struct fdt boot_fdt;

/* The interrupt id of device tree node `node` (0 if none). */
static uint32_t node_irq(int node)
{
    uint32_t len;
    const uint8_t *p = fdt_prop(&boot_fdt, node, "interrupts", &len);
    return p && len >= 12 ? be32(p + 4) + (be32(p) == 0 ? 32 : 16) : 0;
}

/* "virtio-<type>": the virtio,mmio node holding that type at the lowest
 * address (virtio_mmio.h), or -1. */
static int virtio_node(const char *compat)
{
    uint32_t id = virtio_device_id(compat);
    int best = -1;
    uint64_t best_pa = 0;
    for (int node = -1; id && (node = fdt_find_compatible(&boot_fdt, node, VIRTIO_MMIO_COMPAT)) >= 0; ) {
        uint64_t pa, size;
        void *va;
        if (!fdt_reg(&boot_fdt, node, 0, &pa, &size) || arch_map_device(pa, VIRTIO_MMIO_STRIDE, &va))
            continue;
        if (virtio_mmio_is(va, id) && (best < 0 || pa < best_pa)) {
            best = node;
            best_pa = pa;
        }
    }
    return best;
}

static volatile void *device_locked(const char *compat, uint32_t *irq)
{
    int node = virtio_device_id(compat) ? virtio_node(compat) : fdt_find_compatible(&boot_fdt, -1, compat);
    uint64_t pa, size;
    void *va;
    if (node < 0 || !fdt_reg(&boot_fdt, node, 0, &pa, &size) || arch_map_device(pa, size ? size : 4096, &va))
        return NULL;
    *irq = node_irq(node);
    return va;
}

volatile void *svc_device(const char *compat, uint32_t *irq)
{
    bool l = env_lock();
    volatile void *va = device_locked(compat, irq);
    env_unlock(l);
    return va;
}

static void (*irq_handlers[IRQ_MAX])(void);
static unsigned irq_cpu[IRQ_MAX];
static struct ksvc_run *irq_run[IRQ_MAX];

/* Kernel interrupt context (kernel lock held): mask, then the service —
 * after its request in progress, if it has one, as a user-placed server
 * takes interrupts between requests. */
static void service_irq(unsigned irq, void *arg)
{
    irq_disable(irq);
    struct ksvc_run *run = irq_run[irq];
    if (run && run->holder) {
        run->irq_pending[irq / 64] |= 1ull << (irq % 64);
        run->irq_words |= 1ull << (irq / 64);
        return;
    }
    if (!irq_handlers[irq])
        return;
    if (!run) {                         /* (attach always names the service: never so) */
        irq_handlers[irq]();
        return;
    }
    /* Its environment calls are its own, as its timer's are: what it
     * allocates is charged to the service, a timer it sets is its own. */
    struct cpu *c = this_cpu();
    struct ksvc_run *outer = c->ksvc;
    c->ksvc = run;
    ksvc_excl_begin(run);
    irq_handlers[irq]();
    ksvc_excl_end(run);
    c->ksvc = outer;
}

static int irq_attach_locked(uint32_t irq, void (*handler)(void))
{
    if (irq < 32 || irq >= IRQ_MAX || irq == timer_irq())
        return SVC_E_INVAL;
    irq_handlers[irq] = handler;
    irq_cpu[irq] = this_cpu()->index;
    struct ksvc_run *run = this_cpu()->ksvc;
    irq_run[irq] = run ? run : current_thread()->ksvc_fast_svc->run;
    int err = irq_register(irq, service_irq, NULL);
    if (err && err != -E_BUSY)
        return err;
    irq_enable(irq);
    return 0;
}

int svc_irq_attach(uint32_t irq, void (*handler)(void))
{
    bool l = env_lock();
    int err = irq_attach_locked(irq, handler);
    env_unlock(l);
    return err;
}

void svc_irq_done(uint32_t irq)
{
    bool l = env_lock();
    if (irq < IRQ_MAX)
        irq_enable_on(irq, irq_cpu[irq]);
    env_unlock(l);
}

void ksvc_timer_tick(unsigned cpu)
{
    for (unsigned i = 0; i < ksvc_count; i++) {
        struct ksvc_run *run = ksvc_table[i].run;
        if (!run->timer || run->timer_cpu != cpu || !run->timer_at || arch_counter() < run->timer_at)
            continue;
        kernel_lock();
        if (run->timer_at && arch_counter() >= run->timer_at) {
            run->timer_at = 0;
            if (run->holder) {
                run->timer_due = true;  /* between requests, never during one */
            } else {
                struct cpu *c = this_cpu();
                struct ksvc_run *outer = c->ksvc;
                c->ksvc = run;          /* its environment calls are its own (no client) */
                ksvc_excl_begin(run);
                run->timer();
                ksvc_excl_end(run);
                c->ksvc = outer;
            }
        }
        kernel_unlock();
    }
}

uint64_t ksvc_timer_next(unsigned cpu)
{
    uint64_t next = ~0ull;
    for (unsigned i = 0; i < ksvc_count; i++) {
        const struct ksvc_run *run = ksvc_table[i].run;
        if (run->timer && run->timer_cpu == cpu && run->timer_at && run->timer_at < next)
            next = run->timer_at;
    }
    return next;
}

int svc_crash_for_testing(void)
{
    return SVC_E_PERM;          /* a fault here would be a kernel panic */
}

/*
 * A call (or send) on an endpoint bound to a kernel service, from the
 * current thread. Returns the value for x0 when the service answered or
 * kept the reply (the registers are already written), or an error.
 */
static int signal_locked(svc_handle n, uint64_t bits)
{
    struct ksvc_run *run = ksvc_env_run();
    if (n == KWAKE_HANDLE && run && run->wake_note) {
        ksvc_wake(run);                 /* its own wakeup: the handler, now or after this request */
        return 0;
    }
    struct khandle *k = khandle_of(n, false);
    if (!k || k->obj->type != OBJ_NOTIFICATION)
        return -E_BADHANDLE;
    if (!(k->rights & R_WRITE))
        return -E_PERM;
    if (!(bits & 0x7fffffffffffffffull))
        return -E_INVAL;
    notify_raise(list_entry(k->obj, struct notification, obj), bits);
    return 0;
}

int svc_signal(svc_handle n, uint64_t bits)
{
    bool l = env_lock();
    int err = signal_locked(n, bits);
    env_unlock(l);
    return err;
}

static svc_handle notify_create_locked(void)
{
    struct thread *t = buffer_owner();      /* charged to the caller */
    struct khandle *k = t ? kmalloc(sizeof(*k)) : NULL;
    struct notification *n = k ? notify_create(t->space) : NULL;
    if (!n) {
        kfree(k, sizeof(*k));
        return 0;
    }
    k->obj = &n->obj;               /* the creation's reference is the service's */
    k->rights = R_ALL;
    return (svc_handle)(uintptr_t)k;
}

svc_handle svc_notify_create(void)
{
    bool l = env_lock();
    svc_handle h = notify_create_locked();
    env_unlock(l);
    return h;
}

/* The khandle of a service's svc_handle: an object a kernel client got in
 * a reply is KGOT_HANDLE + its slot in the run's table (svc_client_call). */
struct khandle *khandle_of(svc_handle h, bool forget)
{
    if (h < KGOT_HANDLE || h >= KGOT_HANDLE + KSVC_GOT)
        return h == KWAKE_HANDLE ? NULL : (struct khandle *)(uintptr_t)h;
    uint64_t flags = arch_irq_save();
    struct ksvc_run *run = ksvc_env_run();
    struct khandle *k = run ? run->got[h - KGOT_HANDLE] : NULL;
    if (k && forget)
        run->got[h - KGOT_HANDLE] = NULL;
    arch_irq_restore(flags);
    return k;
}

svc_handle svc_handle_copy(svc_handle h)
{
    bool l = env_lock();
    struct khandle *k = khandle_of(h, false);
    struct khandle *c = k && (k->rights & R_DUP) ? kmalloc(sizeof(*c)) : NULL;     /* (as handle_dup) */
    if (c) {
        *c = *k;
        obj_ref(c->obj);
    }
    env_unlock(l);
    return (svc_handle)(uintptr_t)c;
}

int svc_endpoint_alive(svc_handle h)
{
    bool l = env_lock();
    struct khandle *k = khandle_of(h, false);
    int r = !k || k->obj->type != OBJ_ENDPOINT ? SVC_E_INVAL : !list_entry(k->obj, struct endpoint, obj)->dead;
    env_unlock(l);
    return r;
}

int svc_client_alive(uint64_t pid)
{
    if (pid == 0)
        return 1;                       /* (a kernel-placed service's call, charged to no process) */
    bool l = env_lock();
    int r = space_id_alive(pid);
    env_unlock(l);
    return r;
}

int svc_token_alive(svc_token token)
{
    bool l = env_lock();
    int r = ((struct reply *)(uintptr_t)token)->caller != NULL;
    env_unlock(l);
    return r;
}

int svc_handle_rights(svc_handle h)
{
    struct khandle *k = khandle_of(h, false);
    return k ? (int)k->rights : SVC_E_INVAL;
}

void svc_handle_release(svc_handle h)
{
    struct khandle *k = khandle_of(h, true);
    if (k) {
        bool l = env_lock();
        obj_unref(k->obj);
        kfree(k, sizeof(*k));
        env_unlock(l);
    }
}

/* Take the objects the caller passes with its request (like an IPC transfer:
 * each needs R_GRANT; it gets the rights the caller chose, masked by its own). */
static int take_handles(struct thread *t, unsigned nh, struct svc_call *call)
{
    call->nhandles = 0;
    for (unsigned i = 0; i < nh; i++) {
        struct handle_slot *sl;
        struct khandle *k = NULL;
        int err = handle_get(t->space, t->utcb->send_handles[i], OBJ_NONE, R_GRANT, &sl);
        if (!err && sl->obj->type == OBJ_REPLY)
            err = -E_INVAL;
        if (!err && !(k = kmalloc(sizeof(*k))))
            err = -E_NOMEM;
        if (err) {
            for (unsigned j = 0; j < call->nhandles; j++)
                svc_handle_release(call->handles[j]);
            call->nhandles = 0;
            return err == -E_BADHANDLE ? -E_INVAL : err;
        }
        k->obj = sl->obj;
        k->rights = sl->rights & t->utcb->send_rights[i];
        k->badge = sl->badge;           /* an object stays the one it was: never an unbadged copy */
        obj_ref(k->obj);
        call->handles[call->nhandles++] = (svc_handle)(uintptr_t)k;
    }
    return 0;
}

/* ---------------------------------------------------------------- requests */

static struct ksvc_run *run_of(const struct ksvc *svc)
{
    return svc->run;
}

/* Go on with run's request on this core until it stops or finishes. */
static void run_request(struct ksvc_run *run, struct arch_kctx *from)
{
    struct cpu *c = this_cpu();
    struct ksvc_run *outer = c->ksvc;
    c->ksvc = run;
    run->back = from;
    arch_kctx_switch(from, &run->ctx);
    this_cpu()->ksvc = outer;
}

/*
 * An interrupt came while this core ran a request's service code. Its
 * handlers ran with the lock held, as anywhere; now, if the scheduler would
 * rather run something else here, the request stops (its stack and this
 * interrupt's frame kept) until its caller runs again. Returns whether
 * the service code must go on with interrupts masked: a request resumed
 * only to be finished without its dead caller (ksvc_abort) keeps the
 * lock of whoever resumed it to the end.
 */
bool ksvc_irq_exit(void)
{
    struct cpu *c = this_cpu();
    struct ksvc_run *run = c->ksvc;
    struct thread *t = run->holder;
    kernel_lock();
    if (!run->abort && t->state == T_RUNNING && sched_should_yield(c, t)) {
        t->ksvc_stopped = true;         /* sched_exit puts it back in its run queue */
        arch_kctx_switch(&run->ctx, run->back);
        c = this_cpu();                 /* resumed, perhaps on another core, lock held */
    }
    if (run->abort)
        return true;
    c->ksvc_unlocked = true;
    kernel_unlock();
    return false;
}

/* An interrupt on this core: was it running a request's service code? */
bool ksvc_irq_enter(void)
{
    struct cpu *c = this_cpu();
    if (!c->ksvc_unlocked)
        return false;
    c->ksvc_unlocked = false;           /* the handlers take the lock as anywhere */
    return true;
}

/* The request is over: free the service for the next caller, run the
 * interrupts that came meanwhile, and leave its stack for good. */
static NORETURN void finish_request(struct ksvc_run *run)
{
    struct thread *t = run->holder;
    if (run->kclient) {
        /* a call from another kernel service: its request goes on (and
         * gives back what waiters lent when it finishes) */
        run->kclient->done = true;
        run->kclient = NULL;
    } else {
        t->ksvc_run = NULL;
        if (!run->abort) {
            if (t->prio != run->prio_before)
                thread_set_prio(t, MAX(run->prio_before, t->base_prio));  /* what waiters lent */
            if (t->ksvc_suspend) {
                t->ksvc_suspend = false;
                sched_dequeue(t);
                t->suspended = true;
            }
        }
    }
    run->holder = NULL;
    /* Every waiter makes its call again (best priority first in each run
     * queue): one takes the service, the others wait again. Woken alone,
     * the best waiter would be the only one left to free the rest, and it
     * may never take the service — answered on a register entry, which
     * finishes no request; killed or suspended before it runs. Each
     * keeps its turn on its core: it was stopped by the busy service, not
     * done, and at the back of a queue of threads that call the service
     * too it would find it busy again at every turn. (Taken from the
     * last, so that the fronts keep the waiters' order.) */
    while (!list_empty(&run->waiters)) {
        struct thread *w = list_entry(run->waiters.prev, struct thread, link);
        list_del(&w->link);
        w->ksvc_wait = NULL;
        sched_enqueue_front(w);
    }
    if (run->timer_due) {
        run->timer_due = false;
        run->timer();
    }
    if (run->wake_due) {
        run->wake_due = false;
        run->wake();
    }
    while (run->irq_words) {
        unsigned w = (unsigned)__builtin_ctzll(run->irq_words);
        run->irq_words &= ~(1ull << w);
        while (run->irq_pending[w]) {
            unsigned bit = (unsigned)__builtin_ctzll(run->irq_pending[w]);
            run->irq_pending[w] &= ~(1ull << bit);
            if (irq_handlers[w * 64 + bit])
                irq_handlers[w * 64 + bit]();
        }
    }
    ksvc_excl_end(run);                 /* (taken with the service: ksvc_call) */
    arch_kctx_switch(&run->ctx, run->back);
    panic("a finished kernel service request resumed");
}

/* The service's code for a request (lock held, interrupts off, on its
 * stack): unlocked and interruptible, then the lock again. */
static void serve(struct ksvc_run *run, struct svc_call *call)
{
    this_cpu()->ksvc_unlocked = true;
    kernel_unlock();
    arch_irq_enable();
    run->svc->entry(call);
    arch_irq_disable();
    struct cpu *c = this_cpu();
    if (c->ksvc_unlocked) {             /* (not when finishing without a dead caller) */
        c->ksvc_unlocked = false;
        kernel_lock();
    }
}

/* A request from start to end, on the service's stack. */
static NORETURN void request_main(void *arg)
{
    struct ksvc_run *run = arg;
    struct thread *t = run->holder;
    uint64_t mr[MSG_MAX_MRS];
    struct svc_call call;
    call.mr = mr;
    int err = take_handles(t, MSG_HANDLES(run->info), &call);
    if (err) {
        t->tf.x[0] = (uint64_t)err;
        finish_request(run);
    }
    call.label = MSG_LABEL(run->info);
    call.len = MSG_LEN(run->info);
    /* (three plain loops: one question per request, not per word) */
    unsigned regs = t->in_fault ? 0 : MIN(call.len, MSG_REG_MRS);
    for (unsigned i = 0; t->in_fault && i < call.len; i++)
        mr[i] = t->fault_msg[i];
    for (unsigned i = 0; i < regs; i++)
        mr[i] = t->tf.x[2 + i];
    for (unsigned i = regs; !t->in_fault && i < call.len; i++)
        mr[i] = t->utcb->mr[i];
    call.badge = run->badge;
    call.pid = t->space->id;
    call.env = run->is_call ? t : NULL;     /* a send gets no reply */
    serve(run, &call);
    if (!run->is_call && !run->abort)
        t->tf.x[0] = 0;
    finish_request(run);
}

/* Queue t among run's waiters, best priority first (before the first worse one). */
static void waiters_add(struct ksvc_run *run, struct thread *t)
{
    struct list *pos = run->waiters.next;
    while (pos != &run->waiters && list_entry(pos, struct thread, link)->prio >= t->prio)
        pos = pos->next;
    list_add_tail(pos, &t->link);
}

/* The service is busy: t waits (best priority first), lending its
 * priority to the caller being served, then makes its call again. */
static void wait_for_service(struct ksvc_run *run, struct thread *t, bool rewind)
{
    t->ksvc_rewound = rewind;
    if (rewind)
        t->tf.pc -= 4;                  /* back onto its svc instruction */
    t->state = T_SEND;
    t->ksvc_wait = run;
    waiters_add(run, t);
    /* The holder gets t's priority; if it waits in turn for a busy
     * service (a kernel-placed service's call to another: kclient_run),
     * so does that one's holder, and so on (links never loop). */
    for (struct thread *h = run->holder; h && t->prio > h->prio; h = h->ksvc_wait ? h->ksvc_wait->holder : NULL) {
        thread_set_prio(h, t->prio);
        if (h->ksvc_wait) {
            list_del(&h->link);         /* its place among that service's waiters moves up */
            waiters_add(h->ksvc_wait, h);
        }
    }
}

void ksvc_cancel_wait(struct thread *t)
{
    list_del(&t->link);
    t->ksvc_wait = NULL;
    if (t->ksvc_rewound)
        t->tf.pc += 4;                  /* it will not make the call again */
}

/*
 * A call (or send) on an endpoint bound to a kernel service, from the
 * current thread. Returns the value for x0: the result written when the
 * service answered or kept the reply, or, while the request is stopped or
 * waits for the service, x0 as it is (the registers are not touched).
 */
int64_t ksvc_call(struct endpoint *ep, uint64_t info, uint64_t badge, bool is_call)
{
    struct thread *t = current_thread();
    struct ksvc_run *run = run_of(ep->ksvc);
    if (run->holder) {
        if (info & MSG_NONBLOCK)
            return -E_AGAIN;
        wait_for_service(run, t, true);
        return (int64_t)t->tf.x[0];
    }
    if (t->suspended) {
        /* Suspended from another core after it left user space for this
         * call: it stops when the request is done, as a thread suspended
         * during one does. Stopped inside it, it would hold the service. */
        t->suspended = false;
        t->ksvc_suspend = true;
    }
    ksvc_excl_begin(run);               /* the service is the request's until finish_request */
    run->holder = t;
    run->svc = ep->ksvc;
    run->info = info;
    run->badge = badge;
    run->is_call = is_call;
    run->abort = false;
    run->prio_before = t->prio;
    t->ksvc_run = run;
    arch_kctx_init(&run->ctx, arch_service_stack_top(run->stack), request_main, run);
    struct arch_kctx here;
    run_request(run, &here);
    return (int64_t)t->tf.x[0];
}

/* A fault offered to the service's register entry for faults, on this
 * stack with the lock held: true if it answered. */
static bool fault_fast(struct thread *t, const struct ksvc *svc, uint64_t badge)
{
    struct svc_call call;
    call.label = LABEL_FAULT;
    call.badge = badge;
    call.pid = t->space->id;
    call.env = t;
    call.len = 0;                       /* the message is t->fault_msg, read in place */
    call.nhandles = 0;
    call.mr = NULL;
    t->ksvc_fast_svc = svc;
    if (likely(!svc->run->shared))
        return svc->fault_fast(&call, t->fault_msg) == SVC_FAST_ANSWERED;
    ksvc_excl_begin(svc->run);
    int r = svc->fault_fast(&call, t->fault_msg);
    ksvc_excl_end(svc->run);
    return r == SVC_FAST_ANSWERED;
}

/* ---------------------------------------------------------------- the shared entry */

void ksvc_excl_wait(struct ksvc_run *run)
{
    /* Dekker's handshake with ksvc_shared_fault: each side writes its own
     * flag, then (after a full barrier) reads the other's, so at least one
     * of them sees the other and backs off. Shared entries take a bounded
     * number of steps with interrupts masked and never take the kernel
     * lock, so waiting for them here, lock held, always ends. */
    run->excl = true;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    unsigned me = this_cpu()->index;
    for (unsigned i = 0; i < ncpus_present; i++)
        while (i != me && __atomic_load_n(&cpus[i].shared_in, __ATOMIC_ACQUIRE) == run)
            arch_cpu_relax();
}

bool ksvc_shared_fault(struct trapframe *tf, uint64_t esr, const struct ksvc *svc)
{
    struct thread *t = (struct thread *)tf;     /* the frame is the thread's first member */
    struct ksvc_run *run = svc->run;
    struct cpu *c = this_cpu();
    c->shared_in = run;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&run->excl, __ATOMIC_ACQUIRE) || t->state != T_RUNNING) {
        __atomic_store_n(&c->shared_in, NULL, __ATOMIC_RELEASE);
        return false;
    }
    /* The message is built as for any fault of t (ksvc_foreign_syscall);
     * the fields read here change only under the kernel lock by t's own
     * core (fault handler, badge) or not at all while t runs (space). */
    fault_msg_fill(t, FAULT_FOREIGN_SYSCALL, tf->x[8], esr);
    struct svc_call call;
    call.label = LABEL_FAULT;
    call.badge = t->fault_badge;
    call.pid = t->space->id;
    call.env = t;
    call.len = 0;
    call.nhandles = 0;
    call.mr = NULL;
    int r = svc->fault_shared(&call, t->fault_msg);
    __atomic_store_n(&c->shared_in, NULL, __ATOMIC_RELEASE);
    if (r == SVC_FAST_ANSWERED)
        return true;
    t->send_is_fault = false;   /* (as before fault_msg_fill: the usual path fills it again) */
    t->in_fault = false;
    return false;
}

bool ksvc_fault(struct thread *t, struct endpoint *ep, uint64_t badge)
{
    struct ksvc_run *run = run_of(ep->ksvc);
    if (!run->holder && ep->ksvc->fault_fast && fault_fast(t, ep->ksvc, badge))
        return true;
    if (run->holder) {
        /* Busy: wait, then fault again — a system call by running its
         * `svc` once more, any other fault by its instruction. */
        t->in_fault = false;
        t->send_is_fault = false;
        wait_for_service(run, t, t->fault_msg[FAULT_MR_KIND] == FAULT_FOREIGN_SYSCALL);
        return false;
    }
    ksvc_call(ep, MSG_INFO(LABEL_FAULT, FAULT_MSG_LEN, 0), badge, true);
    return false;
}

struct trapframe *ksvc_foreign_syscall(struct trapframe *tf, uint64_t esr, struct endpoint *ep)
{
    struct thread *t = (struct thread *)tf;     /* the frame is the thread's first member */
    fault_msg_fill(t, FAULT_FOREIGN_SYSCALL, tf->x[8], esr);
    if (ksvc_fault(t, ep, t->fault_badge) && ksvc_resume_now(t)) {
        kernel_unlock();
        return tf;          /* answered, nothing better here: as ksvc_fast */
    }
    return sched_exit();
}

/* A fastpath call its register entry did not take: a request on the
 * service's stack, then the scheduler. */
struct trapframe *ksvc_slowcall(struct trapframe *tf, struct endpoint *ep, uint64_t info, uint64_t badge)
{
    tf->x[0] = (uint64_t)ksvc_call(ep, info, badge, true);
    return sched_exit();
}

/* The scheduler picked t, whose request stopped at a step: go on with it. */
void ksvc_resume(struct thread *t)
{
    struct arch_kctx here;
    t->ksvc_stopped = false;
    run_request(t->ksvc_run, &here);
}

/* t is dying with a request in a service. Running on another core (between
 * two steps) it notices at its next step; stopped, it is finished here and
 * now — it touches nothing of t's any more — so the service is free again. */
void ksvc_abort(struct thread *t)
{
    struct ksvc_run *run = t->ksvc_run;
    run->abort = true;
    if (t->ksvc_stopped) {
        t->ksvc_stopped = false;
        struct arch_kctx here;
        run_request(run, &here);
    }
}

/* ---------------------------------------------------------------- calls to other kernel services */

/*
 * A kernel-placed service calls another kernel-placed one (svc_client_call,
 * under the generated <interface>_kclient.c proxies) for the thread whose
 * request it serves. The callee's request runs on the callee's own stack,
 * as any of its requests does, held by that same thread; its client is a
 * struct kclient rather than a user's registers and buffers: its reply
 * lands there, and its copies go to and from the caller's memory, which is
 * the kernel's. When the callee's request stops at a step (an interrupt, a
 * better thread), the caller's stops with it; the scheduler resumes the
 * caller, which resumes the callee. A busy callee is waited for as a busy
 * service is by a user caller. The root task links a service only to
 * kernel-placed services (service_link), and never in a cycle.
 */
svc_handle svc_service(const char *name)
{
    struct ksvc_run *run = ksvc_env_run();
    for (unsigned i = 0; run && i < KSVC_LINKS; i++)
        if (__atomic_load_n(&run->links[i].svc, __ATOMIC_ACQUIRE) && strcmp(run->links[i].name, name) == 0)
            return i + 1;
    return 0;
}

int svc_may_call(void)
{
    uint64_t flags = arch_irq_save();   /* (the request stays on this core meanwhile) */
    int may = this_cpu()->ksvc_unlocked;
    arch_irq_restore(flags);
    return may;
}

/* The service's wakeup: a notification charged to its account that runs
 * `handler` when signalled (ksvc_wake); one per service. */
svc_handle svc_wakeup(void (*handler)(void), uint64_t *bits)
{
    bool l = env_lock();
    struct ksvc_run *run = ksvc_env_run();
    svc_handle h = 0;
    if (run && !run->wake_note) {
        struct notification *n = notify_create(run->account);
        if (n) {
            n->kwake = run;
            run->wake_note = n;         /* (the creation's reference: kept as long as the kernel) */
            run->wake = handler;
            h = KWAKE_HANDLE;
        }
    }
    env_unlock(l);
    *bits = h ? 1 : 0;
    return h;
}

void ksvc_wake(struct ksvc_run *run)
{
    if (run->holder) {
        run->wake_due = true;           /* after its request (finish_request) */
        return;
    }
    struct cpu *c = this_cpu();
    struct ksvc_run *outer = c->ksvc;
    c->ksvc = run;                      /* its environment calls are its own, as in service_irq */
    ksvc_excl_begin(run);
    run->wake();
    ksvc_excl_end(run);
    c->ksvc = outer;
}

/* The callee's request, on its own stack. */
static NORETURN void kclient_main(void *arg)
{
    struct ksvc_run *run = arg;
    struct kclient *k = run->kclient;
    struct svc_call call;
    call.label = k->label;
    call.badge = 0;
    call.pid = k->pid;
    call.env = NULL;                    /* (no thread: its reply goes to k, kclient_here) */
    call.len = k->len;
    call.mr = k->mr;
    call.nhandles = k->nh;
    for (unsigned i = 0; i < k->nh; i++)
        call.handles[i] = k->handles[i];
    serve(run, &call);
    finish_request(run);
}

/* Release the objects of a request that never reached its service. */
static void kclient_drop(struct kclient *k)
{
    for (unsigned i = 0; i < k->nh; i++)
        svc_handle_release(k->handles[i]);
    k->nh = 0;
}

/* The caller's request stops here (lock held) until the scheduler picks
 * its thread again; whether it was resumed only to finish without it. */
static bool stop_request(struct ksvc_run *run, struct thread *t)
{
    t->ksvc_stopped = true;
    arch_kctx_switch(&run->ctx, run->back);
    return run->abort;
}

/* k's request to callee for run's caller t (lock held): the reply in k,
 * or an error; *masked set when the caller is being finished without t. */
static int64_t kclient_run(struct ksvc_run *run, struct thread *t, const struct ksvc *callee_svc,
                           struct kclient *k, bool *masked)
{
    struct ksvc_run *callee = callee_svc->run;
    while (callee->holder) {
        /* (t->ksvc_run: the outermost request of a chain of calls, which
         * ksvc_abort marks when t dies while this one runs) */
        if (!run->abort && !t->ksvc_run->abort) {
            wait_for_service(callee, t, false);
            *masked = stop_request(run, t);
        }
        if (run->abort || t->ksvc_run->abort) {
            /* Its thread is dead (killed by another, or by this very
             * request): nothing waits for it any more. */
            if (t->ksvc_wait)
                ksvc_cancel_wait(t);
            kclient_drop(k);
            return -E_CLOSED;
        }
    }
    ksvc_excl_begin(callee);            /* (ended by finish_request) */
    callee->holder = t;
    callee->svc = callee_svc;
    callee->kclient = k;
    callee->abort = false;
    callee->is_call = true;
    arch_kctx_init(&callee->ctx, arch_service_stack_top(callee->stack), kclient_main, callee);
    struct arch_kctx here;
    run_request(callee, &here);
    while (!k->done) {
        /* The callee's request stopped (t gave way): so does this one;
         * resumed, it resumes the callee's, perhaps to finish without t. */
        if (stop_request(run, t)) {
            *masked = true;
            callee->abort = true;
        }
        run_request(callee, &here);
    }
    return k->answered ? (int64_t)k->reply_len : -E_CLOSED;
}

int64_t svc_client_call(uint32_t ep, uint64_t label, unsigned len, uint64_t *mr, unsigned cap, unsigned nh,
                        const uint32_t *handles, uint32_t *got)
{
    if (got)
        got[0] = got[1] = got[2] = 0;   /* (set below for the objects a reply gives) */
    if (len > MSG_MAX_MRS || nh > MSG_MAX_HANDLES)
        return -E_INVAL;
    bool took = env_lock();
    struct ksvc_run *run = this_cpu()->ksvc;
    if (!took) {
        /* An interrupt's, timer's or wakeup's handler, the register path,
         * or a request finishing without its dead caller: nothing may
         * wait here. */
        return run && run->abort ? -E_CLOSED : -E_STATE;
    }
    const struct ksvc *callee = ep >= 1 && ep <= KSVC_LINKS ? run->links[ep - 1].svc : NULL;
    struct kclient k;
    k.label = label;
    k.pid = run->account ? run->account->id : 0;
    k.len = len;
    k.nh = 0;
    k.cap = cap;
    k.mr = mr;                          /* (no copy either way) */
    k.reply_len = 0;
    k.answered = k.done = false;
    int64_t r = callee ? 0 : -E_BADHANDLE;
    for (unsigned i = 0; !r && i < nh; i++) {
        /* the caller's only object to pass on: its wakeup, to signal */
        struct khandle *kh = handles[i] == KWAKE_HANDLE && run->wake_note ? kmalloc(sizeof(*kh)) : NULL;
        if (!kh) {
            r = handles[i] == KWAKE_HANDLE && run->wake_note ? -E_NOMEM : -E_INVAL;
            break;
        }
        kh->obj = &run->wake_note->obj;
        kh->rights = R_WRITE;
        obj_ref(kh->obj);
        k.handles[k.nh++] = (svc_handle)(uintptr_t)kh;
    }
    if (r) {
        kclient_drop(&k);
        env_unlock(took);
        return r;
    }
    bool masked = false;
    k.nobjs = 0;
    r = kclient_run(run, run->holder, callee, &k, &masked);
    /* The reply's objects: kept in the caller's table (KGOT_HANDLE + i),
     * or released if it asked for none or its table is full. */
    for (unsigned i = 0, slot = 0; i < k.nobjs; i++) {
        while (got && slot < KSVC_GOT && run->got[slot])
            slot++;
        if (got && slot < KSVC_GOT && r >= 0) {
            run->got[slot] = k.objs[i];
            got[i] = KGOT_HANDLE + slot;
        } else {
            obj_unref(k.objs[i]->obj);
            kfree(k.objs[i], sizeof(*k.objs[i]));
        }
    }
    env_unlock(took && !masked);
    return r;
}

void svc_client_drop(const uint32_t *got)
{
    for (unsigned i = 0; i < MSG_MAX_HANDLES; i++)
        if (got[i])
            svc_handle_release(got[i]);
}

/* Does kernel service `from` call `to`, itself or through others? */
static bool ksvc_reaches(const struct ksvc *from, const struct ksvc *to, unsigned depth)
{
    if (from == to)
        return true;
    for (unsigned i = 0; depth && i < KSVC_LINKS; i++)
        if (from->run->links[i].svc && ksvc_reaches(from->run->links[i].svc, to, depth - 1))
            return true;
    return false;
}

int64_t sys_service_link(uint32_t root, uint32_t ep_h, uint32_t callee_h, vaddr_t name, uint64_t len)
{
    struct handle_slot *rs, *es, *cs;
    struct space *s = current_thread()->space;
    int err = handle_get(s, root, OBJ_ROOT, R_MANAGE, &rs);
    if (!err)
        err = handle_get(s, ep_h, OBJ_ENDPOINT, R_MANAGE, &es);
    if (!err)
        err = handle_get(s, callee_h, OBJ_ENDPOINT, R_WRITE, &cs);
    if (err)
        return err;
    const struct ksvc *caller = list_entry(es->obj, struct endpoint, obj)->ksvc;
    const struct ksvc *callee = list_entry(cs->obj, struct endpoint, obj)->ksvc;
    struct ksvc_link *links = caller ? caller->run->links : NULL;
    if (!caller || !callee || len == 0 || len >= sizeof(links[0].name))
        return -E_INVAL;
    char n[sizeof(links[0].name)];
    if (copy_from_user(n, name, len))
        return -E_FAULT;
    n[len] = 0;
    if (strlen(n) != len)
        return -E_INVAL;
    if (ksvc_reaches(callee, caller, ksvc_count))
        return -E_INVAL;                /* a cycle: each would wait for the other */
    struct ksvc_link *free = NULL;
    for (unsigned i = 0; i < KSVC_LINKS; i++) {
        if (links[i].svc && strcmp(links[i].name, n) == 0)
            return -E_BUSY;
        if (!links[i].svc && !free)
            free = &links[i];
    }
    if (!free)
        return -E_LIMIT;
    memcpy(free->name, n, len + 1);
    __atomic_store_n(&free->svc, callee, __ATOMIC_RELEASE);     /* (svc_service reads it unlocked) */
    return 0;
}

int64_t sys_service_bind(uint32_t root, uint32_t ep_h, uint64_t id, uint32_t account_h)
{
    struct handle_slot *rs, *es, *as = NULL;
    struct space *s = current_thread()->space;
    int err = handle_get(s, root, OBJ_ROOT, R_MANAGE, &rs);
    if (!err)
        err = handle_get(s, ep_h, OBJ_ENDPOINT, R_MANAGE, &es);
    if (!err && account_h)
        err = handle_get(s, account_h, OBJ_SPACE, R_MANAGE, &as);
    if (err)
        return err;
    struct endpoint *ep = list_entry(es->obj, struct endpoint, obj);
    if (ep->dead)
        return -E_CLOSED;
    if (ep->ksvc || !list_empty(&ep->receivers) || !list_empty(&ep->senders))
        return -E_BUSY;
    for (unsigned i = 0; i < ksvc_count; i++) {
        if (ksvc_table[i].id == id) {
            struct ksvc_run *run = ksvc_table[i].run;   /* (one per service: the build checks) */
            if (as && run->account && run->account != (struct space *)as->obj)
                return -E_BUSY;                         /* charged elsewhere already */
            if (!run->ready) {
                /* A stack for each service the system places in the kernel,
                 * of the KSVC_STACKS there are (not one for each built in). */
                static unsigned stacks_taken;
                if (stacks_taken == ARCH_SERVICE_STACKS)
                    return -E_LIMIT;
                list_init(&run->waiters);
                run->stack = stacks_taken++;
                /* (smp_running is final before the root task, which binds, runs) */
                run->shared = ksvc_table[i].fault_shared != NULL && smp_running;
                run->ready = true;
            }
            if (as && !run->account) {
                run->account = list_entry(as->obj, struct space, obj);
                obj_ref(as->obj);                       /* kept as long as the kernel */
            }
            if (!run->ep) {
                run->ep = ep;
                obj_ref(&ep->obj);
            }
            ep->ksvc = &ksvc_table[i];
            return 0;
        }
    }
    return -E_NOENT;
}

