/*
 * The service environment inside the kernel. An endpoint bound to a
 * kernel-placed service (service_bind) has no server thread: a call on it
 * is handed straight to the service's skeleton in the caller's own kernel
 * entry, with the message read from the caller's registers and UTCB, and
 * the reply written back into them — one kernel entry per request (a
 * register-only request from the IPC fastpath never becomes a message:
 * ksvc_fast in ksvc.h). A
 * reply kept for later parks the caller exactly as a user-placed server
 * would (waiting for a reply) until the service answers through the
 * token. A call's environment (call->env) is its caller; a send has none
 * (NULL): nothing to answer.
 */
#include "ipc.h"
#include "thread.h"
#include "space.h"
#include "sched.h"
#include "kmalloc.h"
#include "memory.h"
#include "bootimage.h"
#include "fdt.h"
#include "irq.h"
#include "cpu.h"
#include "timer.h"
#include "svc.h"
#include "syscalls_gen.h"

#include "ksvc.h"

/* A passed object held by a kernel-placed service: a reference and rights. */
struct khandle {
    struct object *obj;
    uint32_t rights;
};

/* Give the caller handles to nh objects the service holds (as an IPC
 * transfer would: into its table, values in its UTCB), which the service
 * then no longer holds (t NULL: nobody to give them to); how many the
 * caller got. */
static unsigned give_objects(struct thread *t, unsigned nh, const svc_handle *h, const uint32_t *rights)
{
    unsigned got = 0;
    for (unsigned i = 0; i < nh && i < MSG_MAX_HANDLES; i++) {
        const struct khandle *k = (const struct khandle *)(uintptr_t)h[i];
        int64_t v = k && t ? handle_alloc(t->space, k->obj, k->rights & rights[i], 0) : -E_INVAL;
        if (v > 0)
            t->utcb->recv_handles[got++] = (uint32_t)v;
        svc_handle_release(h[i]);
    }
    return got;
}

/* Write a reply into the caller's saved registers and UTCB. */
static void write_reply(struct thread *t, uint64_t label, unsigned len, const uint64_t *mr, unsigned got)
{
    t->tf.x[0] = 0;
    t->tf.x[1] = MSG_INFO(label, len, got);
    for (unsigned i = 0; i < MSG_REG_MRS; i++)
        t->tf.x[2 + i] = i < len ? mr[i] : 0;
    for (unsigned i = MSG_REG_MRS; i < len; i++)
        t->utcb->mr[i] = mr[i];
    t->tf.x[8] = 0;
    t->tf.x[9] = 0;
}

void svc_reply(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr)
{
    svc_reply_objects(call, label, len, mr, 0, NULL, NULL);
}

void svc_reply_objects(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                       const svc_handle *h, const uint32_t *rights)
{
    struct thread *t = call->env;
    unsigned got = give_objects(t, nh, h, rights);
    if (t)
        write_reply(t, label, MIN(len, MSG_MAX_MRS), mr, got);
}

void svc_fail(struct svc_call *call, int64_t err)
{
    for (unsigned i = 0; i < call->nhandles; i++)
        svc_handle_release(call->handles[i]);
    call->nhandles = 0;
    uint64_t mr[1] = { (uint64_t)err };
    svc_reply(call, call->label, 1, mr);
}

svc_token svc_defer(struct svc_call *call)
{
    struct thread *t = call->env;
    struct reply *r = t ? kmalloc(sizeof(*r)) : NULL;
    if (!r)
        return 0;
    r->caller = t;
    t->reply_holder = r;
    t->state = T_REPLY;
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
    struct thread *t = r->caller;
    unsigned got = give_objects(t, nh, h, rights);
    if (t) {
        t->reply_holder = NULL;
        write_reply(t, label, MIN(len, MSG_MAX_MRS), mr, got);
        if (t != current_thread())
            sched_enqueue(t);
        else
            t->state = T_RUNNING;
    }
    kfree(r, sizeof(*r));
}

void *svc_alloc(size_t size)
{
    if (size <= 2048)
        return kmalloc(size);
    unsigned order = 0;
    while ((4096ull << order) < size)
        order++;
    paddr_t pa = frame_alloc_zeroed(order);
    return pa == PADDR_INVALID ? NULL : phys_to_virt(pa);
}

void svc_free(void *p, size_t size)
{
    if (size <= 2048) {
        kfree(p, size);
        return;
    }
    unsigned order = 0;
    while ((4096ull << order) < size)
        order++;
    frame_free(virt_to_phys(p), order);
}

/* The caller is the current thread: its memory is reached directly. */
int svc_copy_in(struct svc_call *call, void *dst, uint64_t client_addr, uint64_t len)
{
    return copy_from_user(dst, client_addr, len) ? SVC_E_FAULT : 0;
}

int svc_copy_out(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    return copy_to_user(client_addr, src, len) ? SVC_E_FAULT : 0;
}

/* A kernel-placed service lives as long as the kernel: its state is fresh once. */
void *svc_state(size_t size, int *fresh)
{
    *fresh = 1;
    return size <= MiB(2) ? svc_alloc(size) : NULL;
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

volatile void *svc_device(const char *compat, uint32_t *irq)
{
    int node = fdt_find_compatible(&boot_fdt, -1, compat);
    uint64_t pa, size;
    void *va;
    if (node < 0 || !fdt_reg(&boot_fdt, node, 0, &pa, &size) || arch_map_device(pa, size ? size : 4096, &va))
        return NULL;
    uint32_t len;
    const uint8_t *p = fdt_prop(&boot_fdt, node, "interrupts", &len);
    *irq = p && len >= 12 ? be32(p + 4) + (be32(p) == 0 ? 32 : 16) : 0;
    return va;
}

static void (*irq_handlers[IRQ_MAX])(void);
static unsigned irq_cpu[IRQ_MAX];

/* Kernel interrupt context (kernel lock held): mask, then the service. */
static void service_irq(unsigned irq, void *arg)
{
    irq_disable(irq);
    if (irq_handlers[irq])
        irq_handlers[irq]();
}

int svc_irq_attach(uint32_t irq, void (*handler)(void))
{
    if (irq < 32 || irq >= IRQ_MAX || irq == timer_irq())
        return SVC_E_INVAL;
    irq_handlers[irq] = handler;
    irq_cpu[irq] = this_cpu()->index;
    int err = irq_register(irq, service_irq, NULL);
    if (err && err != -E_BUSY)
        return err;
    irq_enable(irq);
    return 0;
}

void svc_irq_done(uint32_t irq)
{
    if (irq < IRQ_MAX)
        irq_enable_on(irq, irq_cpu[irq]);
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
int svc_signal(svc_handle n, uint64_t bits)
{
    struct khandle *k = (struct khandle *)(uintptr_t)n;
    if (!k || k->obj->type != OBJ_NOTIFICATION)
        return -E_BADHANDLE;
    if (!(k->rights & R_WRITE))
        return -E_PERM;
    if (!(bits & 0x7fffffffffffffffull))
        return -E_INVAL;
    notify_raise(list_entry(k->obj, struct notification, obj), bits);
    return 0;
}

svc_handle svc_notify_create(void)
{
    struct thread *t = current_thread();
    struct khandle *k = kmalloc(sizeof(*k));
    struct notification *n = k ? notify_create(t->space) : NULL;
    if (!n) {
        kfree(k, sizeof(*k));
        return 0;
    }
    k->obj = &n->obj;               /* the creation's reference is the service's */
    k->rights = R_ALL;
    return (svc_handle)(uintptr_t)k;
}

void svc_handle_release(svc_handle h)
{
    struct khandle *k = (struct khandle *)(uintptr_t)h;
    if (k) {
        obj_unref(k->obj);
        kfree(k, sizeof(*k));
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
        obj_ref(k->obj);
        call->handles[call->nhandles++] = (svc_handle)(uintptr_t)k;
    }
    return 0;
}

int64_t ksvc_call(struct endpoint *ep, uint64_t info, uint64_t badge, bool is_call)
{
    struct thread *t = current_thread();
    struct svc_call call;
    int err = take_handles(t, MSG_HANDLES(info), &call);
    if (err)
        return err;
    call.label = MSG_LABEL(info);
    call.len = MSG_LEN(info);
    for (unsigned i = 0; i < call.len; i++)
        call.mr[i] = i < MSG_REG_MRS ? t->tf.x[2 + i] : t->utcb->mr[i];
    call.badge = badge;
    call.pid = t->space->id;
    call.env = is_call ? t : NULL;      /* a send gets no reply */
    ep->ksvc->entry(&call);
    return is_call ? (int64_t)t->tf.x[0] : 0;
}

/* The IPC fastpath's call on a kernel-placed service: the interface's own
 * (ksvc_fast in ksvc.h, one per interface in the generated table). */
struct trapframe *ksvc_fastcall(struct trapframe *tf, struct endpoint *ep, uint64_t info, uint64_t badge)
{
    return ep->ksvc->fastcall(tf, ep, info, badge);
}

/* A fastpath call its register entry did not take: the skeleton answers. */
struct trapframe *ksvc_slowcall(struct trapframe *tf, struct endpoint *ep, uint64_t info, uint64_t badge)
{
    tf->x[0] = (uint64_t)ksvc_call(ep, info, badge, true);
    return sched_exit();
}

int64_t sys_service_bind(uint32_t root, uint32_t ep_h, uint64_t id)
{
    struct handle_slot *rs, *es;
    struct space *s = current_thread()->space;
    int err = handle_get(s, root, OBJ_ROOT, R_MANAGE, &rs);
    if (!err)
        err = handle_get(s, ep_h, OBJ_ENDPOINT, R_MANAGE, &es);
    if (err)
        return err;
    struct endpoint *ep = list_entry(es->obj, struct endpoint, obj);
    if (ep->ksvc || !list_empty(&ep->receivers) || !list_empty(&ep->senders))
        return -E_BUSY;
    for (unsigned i = 0; i < ksvc_count; i++) {
        if (ksvc_table[i].id == id) {
            ep->ksvc = &ksvc_table[i];
            return 0;
        }
    }
    return -E_NOENT;
}
