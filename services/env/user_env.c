/*
 * The service environment in user space: the service is its own process,
 * a server loop over IPC on the endpoint its spawner granted as "service".
 * A reply kept for later is a reply handle (reply_save), answered with
 * ipc_reply_to.
 */
#include "petrel.h"
#include "svc.h"
#include "user_env.h"
#include "virtio_mmio.h"
#include "svc_trace.h"

struct user_env {
    int have_reply;             /* a reply for the current call is in `out` */
    struct petrel_msg *out;     /* the server loop's message: the reply is sent from it */
    unsigned ngiven;            /* handles the reply gives away: closed once it is sent */
    uint32_t given[MSG_MAX_HANDLES];
};

/* Load mr[0..len) into a message: MR0..5 in registers, the rest in the UTCB. */
static void load(struct petrel_msg *m, uint64_t label, unsigned len, const uint64_t *mr)
{
    m->info = MSG_INFO(label, len, 0);
    for (unsigned i = 0; i < len && i < MSG_REG_MRS; i++)
        m->mr[i] = mr[i];
    for (unsigned i = MSG_REG_MRS; i < len; i++)
        utcb()->mr[i] = mr[i];
}

void svc_reply(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr)
{
    struct user_env *env = call->env;
    load(env->out, label, len, mr);
    env->have_reply = 1;
}

/* Put nh handles (with rights) into the next message sent: the kernel
 * transfers them with the reply. Returns how many (the nonzero ones),
 * listed in out[]. */
static unsigned attach(struct petrel_msg *m, unsigned nh, const svc_handle *h, const uint32_t *rights,
                       uint32_t *out)
{
    unsigned n = 0;
    for (unsigned i = 0; i < nh && i < MSG_MAX_HANDLES; i++) {
        if (!h[i])
            continue;
        utcb()->send_handles[n] = (uint32_t)h[i];
        utcb()->send_rights[n] = rights[i];
        out[n++] = (uint32_t)h[i];
    }
    m->info |= (uint64_t)n << 6;
    return n;
}

void svc_reply_objects(struct svc_call *call, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                       const svc_handle *h, const uint32_t *rights)
{
    struct user_env *env = call->env;
    svc_reply(call, label, len, mr);
    env->ngiven = attach(env->out, nh, h, rights, env->given);
}

void svc_fail(struct svc_call *call, int64_t err)
{
    for (unsigned i = 0; i < call->nhandles; i++)
        svc_handle_release(call->handles[i]);
    call->nhandles = 0;
    if (call->label == LABEL_FAULT) {
        /* A fault the service does not take: the thread stops (a reply to a
         * fault carries a plain label), as svc_kernel.c does. */
        uint64_t stop[1] = { FAULT_REPLY_STOP };
        svc_reply(call, 0, 1, stop);
        return;
    }
    uint64_t mr[1] = { (uint64_t)err };
    svc_reply(call, call->label, 1, mr);
}

svc_token svc_defer(struct svc_call *call)
{
    int64_t h = sys_reply_save();
    return h > 0 ? (svc_token)h : 0;
}

void svc_reply_later(svc_token token, uint64_t label, unsigned len, const uint64_t *mr)
{
    svc_reply_later_objects(token, label, len, mr, 0, NULL, NULL);
}

void svc_reply_later_objects(svc_token token, uint64_t label, unsigned len, const uint64_t *mr, unsigned nh,
                             const svc_handle *h, const uint32_t *rights)
{
    struct petrel_msg m = { 0 };
    uint32_t given[MSG_MAX_HANDLES];
    load(&m, label, len, mr);
    unsigned n = attach(&m, nh, h, rights, given);
    sys_ipc_reply_to((uint32_t)token, &m);
    for (unsigned i = 0; i < n; i++)
        sys_handle_close(given[i]);     /* given away */
}

svc_handle svc_notify_create(void)
{
    int64_t h = sys_notify_create();
    return h > 0 ? (svc_handle)h : 0;
}

void *svc_alloc(size_t size)
{
    return mem_alloc(size, 0, NULL);
}

void svc_free(void *p, size_t size)
{
    sys_mem_unmap(self_space(), (uint64_t)p);
}

uint64_t svc_memory_limit(void)
{
    int64_t r = sys_space_usage(self_space(), LIMIT_MEMORY | LIMIT_QUERY_MAX);
    return r > 0 ? (uint64_t)r : 0;
}

/* One MEM_DMA page of the smallest size that holds `size`: contiguous. */
void *svc_dma_alloc(size_t size, uint64_t *pa)
{
    uint32_t order = size <= 4096 ? MEM_PAGE_4K : size <= 0x10000 ? MEM_PAGE_64K : MEM_PAGE_2M;
    if (size == 0 || size > 0x200000)
        return NULL;
    uint32_t h;
    void *p = mem_alloc(size, order | MEM_DMA, &h);
    if (!p)
        return NULL;
    int64_t addr = sys_mem_dma_addr(h, 0);
    sys_handle_close(h);                        /* the mapping keeps the object */
    if (addr < 0) {
        sys_mem_unmap(self_space(), (uint64_t)p);
        return NULL;
    }
    *pa = (uint64_t)addr;
    return p;
}

void svc_dma_free(void *p, size_t size)
{
    (void)size;
    sys_mem_unmap(self_space(), (uint64_t)p);
}

/* One MEM_DMA page, as svc_dma_alloc's, whose handle is kept to give. */
void *svc_shared_alloc(size_t size, svc_handle *mem, uint64_t *pa)
{
    uint32_t order = size <= 4096 ? MEM_PAGE_4K : size <= 0x10000 ? MEM_PAGE_64K : MEM_PAGE_2M;
    *mem = 0;
    if (size == 0 || size > 0x200000)
        return NULL;
    uint32_t h;
    void *p = mem_alloc(size, order | MEM_DMA, &h);
    int64_t addr = p && pa ? sys_mem_dma_addr(h, 0) : 0;
    if (addr < 0) {
        sys_mem_unmap(self_space(), (uint64_t)p);
        sys_handle_close(h);
        return NULL;
    }
    if (pa)
        *pa = (uint64_t)addr;
    if (p)
        *mem = h;
    return p;
}

svc_handle svc_dma_object(uint64_t size)
{
    int64_t h = sys_mem_create(size, MEM_PAGE_4K | MEM_EAGER | MEM_DMA);
    return h > 0 ? (svc_handle)h : 0;
}

int64_t svc_dma_page(svc_handle mem, uint64_t offset)
{
    return sys_mem_dma_addr((uint32_t)mem, offset);
}

svc_handle svc_shared_give(svc_handle mem)
{
    int64_t h = sys_handle_dup((uint32_t)mem, R_READ | R_WRITE | R_GRANT, 0);
    return h > 0 ? (svc_handle)h : 0;
}

void *svc_shared_map(svc_handle mem, size_t size)
{
    int64_t have = sys_mem_size((uint32_t)mem);
    if (size == 0 || have < 0 || (uint64_t)have < size)
        return NULL;
    uint64_t va = va_alloc((uint64_t)have, 0x200000);     /* (room for a 2 MiB page) */
    if (sys_mem_map(self_space(), (uint32_t)mem, va, 0, (uint64_t)have, R_READ | R_WRITE) != 0) {
        va_free(va, (uint64_t)have);
        return NULL;
    }
    return (void *)va;
}

int svc_signal(svc_handle n, uint64_t bits)
{
    return (int)sys_notify_signal((uint32_t)n, bits);
}

svc_handle svc_handle_copy(svc_handle h)
{
    int64_t info = sys_handle_info((uint32_t)h);
    int64_t c = info < 0 ? info : sys_handle_dup((uint32_t)h, (uint32_t)(info >> 8) & 0xff, 0);
    return c > 0 ? (svc_handle)c : 0;
}

int svc_endpoint_alive(svc_handle h)
{
    int64_t info = sys_handle_info((uint32_t)h);
    if (info < 0 || (info & 0xff) != OBJ_ENDPOINT)
        return SVC_E_INVAL;
    return !(info & HANDLE_INFO_DEAD);
}

int svc_client_alive(uint64_t pid)
{
    return pid == 0 || sys_space_alive(pid) == 1;   /* (0: a kernel-placed caller charged to no process) */
}

int svc_token_alive(svc_token token)
{
    int64_t info = sys_handle_info((uint32_t)token);
    return info >= 0 && (info & 0xff) == OBJ_REPLY && !(info & HANDLE_INFO_DEAD);
}

int svc_handle_rights(svc_handle h)
{
    int64_t info = sys_handle_info((uint32_t)h);
    return info < 0 ? SVC_E_INVAL : (int)((info >> 8) & 0xff);
}

void svc_handle_release(svc_handle h)
{
    user_proc_forget((uint32_t)h);              /* a view of it goes (before its number can be used again) */
    sys_handle_close((uint32_t)h);
}

/* A copy through a client's buffer is one kernel entry per COPY_STEP bytes:
 * each entry is short (a 16 KiB copy is about 4,000 instructions), so the
 * server thread (and whoever needs the core or the kernel lock more
 * urgently) waits at most one step; and long enough that a 64 KiB socket
 * write's copies are not mostly kernel entries (at 4 KiB a step, each of
 * the four copies of a write over the loopback took 16). */
#define COPY_STEP 16384

/* A buffer the client lent of its own client's (svc_client_buffer) is
 * reached with REPLY_COPY_LENT. */
static int copy_with_client(uint64_t dir, uint64_t client_addr, uint64_t mine, uint64_t len)
{
    if (client_addr & SVC_BUFFER_LENT)
        dir |= REPLY_COPY_LENT, client_addr &= ~SVC_BUFFER_LENT;
    for (uint64_t done = 0; done < len; done += COPY_STEP) {
        uint64_t n = MIN(len - done, COPY_STEP);
        if (sys_reply_copy(dir, client_addr + done, mine + done, n) < 0)
            return SVC_E_FAULT;
    }
    return 0;
}

int svc_copy_in(struct svc_call *call, void *dst, uint64_t client_addr, uint64_t len)
{
    (void)call;
    return copy_with_client(0, client_addr, (uint64_t)dst, len);
}

int svc_copy_out(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    (void)call;
    return copy_with_client(1, client_addr, (uint64_t)src, len);
}

/* (One server thread runs the service: no shared entry, a copy as any.) */
int svc_copy_out_try(struct svc_call *call, uint64_t client_addr, const void *src, uint64_t len)
{
    return svc_copy_out(call, client_addr, src, len);
}

/* The state object the supervisor granted as "state" (it survives us),
 * or, without one, fresh memory of our own. */
void *svc_state(size_t size, int *fresh)
{
    uint32_t h = start_handle("state");
    *fresh = 0;
    if (h) {
        int64_t have = sys_mem_size(h);
        if (have < 0 || (uint64_t)have < size)
            return NULL;
        uint64_t va = va_alloc((uint64_t)have, 0x200000);     /* room for 2 MiB pages */
        return sys_mem_map(self_space(), h, va, 0, (uint64_t)have, R_READ | R_WRITE) == 0 ? (void *)va : NULL;
    }
    *fresh = 1;
    return mem_alloc(size, 0, NULL);
}

int svc_bootfile(uint32_t index, struct petrel_bootfile *info, const void **data)
{
    static struct { const void *data; int mapped; } cache[64];
    if (sys_bootfile_info(index, info) < 0)
        return SVC_E_NOENT;
    if (index < 64 && cache[index].mapped) {
        *data = cache[index].data;
        return 0;
    }
    int64_t m = sys_mem_from_bootfile(root_handle(), index);
    uint64_t size = (info->size + 4095) & ~4095ull, va = va_alloc(size, 4096);
    if (m < 0 || sys_mem_map(self_space(), (uint32_t)m, va, 0, size, R_READ) < 0)
        return SVC_E_PERM;
    sys_handle_close((uint32_t)m);
    if (index < 64) {
        cache[index].data = (const void *)va;
        cache[index].mapped = 1;
    }
    *data = (const void *)va;
    return 0;
}

/* Interrupt objects the spawner gave with the device ("irq:<compat>"). */
static struct { uint32_t irq, handle; } given_irqs[8];
static unsigned ngiven;

/* Only what the system description declared: the root task grants the
 * device's registers ("dev:<compat>") and interrupt ("irq:<compat>") as
 * objects of their own; a service never holds authority to make them. */
volatile void *svc_device(const char *compat, uint32_t *irq)
{
    char name[64];
    snprintf(name, sizeof(name), "dev:%s", compat);
    uint32_t dev = start_handle(name);
    unsigned skip = 0;                          /* "dev:<type>#K": the root task's (user/root) */
    while (!dev && ++skip < 8) {
        snprintf(name, sizeof(name), "dev:%s#%u", compat, skip);
        dev = start_handle(name);
    }
    int64_t size = dev ? sys_mem_size(dev) : -E_NOENT;
    uint64_t va = size > 0 ? va_alloc((uint64_t)size, 4096) : 0;
    if (size <= 0 || sys_mem_map(self_space(), dev, va, 0, (uint64_t)size, R_READ | R_WRITE) < 0)
        return NULL;
    /* A virtio transport shares its page with others: the one of the
     * type asked for at the lowest address, past the `skip` the grant's
     * name says lie below it (virtio_mmio.h). */
    uint32_t id = virtio_device_id(compat);
    for (uint64_t off = 0; id && off < (uint64_t)size; off += VIRTIO_MMIO_STRIDE) {
        if (virtio_mmio_is((const volatile void *)(va + off), id) && !skip--) {
            va += off;
            id = 0;
        }
    }
    if (id)
        return NULL;                            /* (the root task granted a page without one) */
    snprintf(name, sizeof(name), "irq:%s", compat);
    uint32_t ih = start_handle(name);
    *irq = 0;
    if (ih && ngiven < 8) {
        *irq = 1000 + ngiven;               /* a private number for the given object */
        given_irqs[ngiven].irq = *irq;
        given_irqs[ngiven++].handle = ih;
    }
    return (volatile void *)va;
}

/* Interrupts arrive as a notification bound to the server thread: its
 * ipc_recv returns LABEL_NOTIFY between requests. */
static struct { uint32_t irq, handle; void (*handler)(void); } irqs[8];
static unsigned nirqs;
static uint32_t irq_notification;

static void (*event_handler)(void);

/* The notification bound to the server thread, made at first use; 0 if none can be. */
static uint32_t loop_notification(void)
{
    if (!irq_notification) {
        int64_t n = sys_notify_create();
        if (n < 0)
            return 0;
        if (sys_notify_bind(self_thread(), (uint32_t)n) < 0) {
            sys_handle_close((uint32_t)n);
            return 0;
        }
        irq_notification = (uint32_t)n;
    }
    return irq_notification;
}

uint32_t user_env_event(void (*handler)(void))
{
    uint32_t n = loop_notification();
    if (n)
        event_handler = handler;
    return n;
}

/* Another service's endpoint, as the root task grants what `calls` names:
 * under the callee's name, to send on. */
svc_handle svc_service(const char *name)
{
    return start_handle(name);
}

int svc_may_call(void)
{
    return 1;                           /* (one thread: a call waits wherever it is made) */
}

uint64_t svc_client_buffer(struct svc_call *call, uint64_t addr, uint64_t len, int writable)
{
    (void)call;
    if (sys_reply_lend(addr, len, writable ? 1 : 0) < 0)
        return 0;                       /* (answering no call, or not a user range) */
    return addr | SVC_BUFFER_LENT;
}

/* The loop's notification, given away to signal only (the receiver could
 * otherwise take it over, binding it to a thread of its own), with the
 * bit set aside for it. */
static void (*wakeup_handler)(void);
static uint32_t wakeup_handle;

svc_handle svc_wakeup(void (*handler)(void), uint64_t *bits)
{
    uint32_t n = loop_notification();
    if (!n || wakeup_handler)
        return 0;
    int64_t h = sys_handle_dup(n, R_WRITE | R_GRANT, 0);
    if (h < 0)
        return 0;
    wakeup_handler = handler;
    wakeup_handle = (uint32_t)h;
    *bits = USER_ENV_WAKEUP;
    return wakeup_handle;
}

int svc_irq_attach(uint32_t irq, void (*handler)(void))
{
    if (nirqs == 8)
        return SVC_E_NOMEM;
    if (!loop_notification())
        return SVC_E_NOMEM;
    int64_t h = -E_BADHANDLE;             /* not an interrupt svc_device gave */
    for (unsigned i = 0; i < ngiven; i++)
        if (given_irqs[i].irq == irq)
            h = given_irqs[i].handle;
    if (h < 0)
        return (int)h;
    if (sys_irq_bind((uint32_t)h, irq_notification, 1ull << nirqs) < 0)
        return SVC_E_INVAL;
    irqs[nirqs].irq = irq;
    irqs[nirqs].handle = (uint32_t)h;
    irqs[nirqs].handler = handler;
    nirqs++;
    return 0;
}

void svc_irq_done(uint32_t irq)
{
    for (unsigned i = 0; i < nirqs; i++)
        if (irqs[i].irq == irq)
            sys_irq_ack(irqs[i].handle);
}

/* A notification arrived with `bits`: run the handlers of those interrupts. */
static void interrupts(uint64_t bits)
{
    for (unsigned i = 0; i < nirqs; i++)
        if (bits & (1ull << i))
            irqs[i].handler();
    if ((bits & USER_ENV_EVENT) && event_handler)
        event_handler();
    if ((bits & USER_ENV_WAKEUP) && wakeup_handler)
        wakeup_handler();
}

int svc_crash_for_testing(void)
{
    *(volatile uint64_t *)0x8 = 1;      /* a data abort: the supervisor takes over */
    return 0;
}

/* Serve requests on `ep` forever with `entry` (the service's dispatcher). */
/* A register-only request through the service's register path. The
 * loop's message sits right after a word standing for x0, so x[1] is the
 * message word and x[2..7] MR0..5, exactly the frame the kernel's register
 * path reads and answers into: nothing is copied. True if the request was
 * answered (the reply is in the message) or kept; false if it is not
 * register-only and the skeleton must take it. */
static bool serve_fast(int (*fast)(struct svc_call *, uint64_t *), struct svc_call *call, uint64_t *x,
                       bool *answered)
{
    call->label = MSG_LABEL(x[1]);
    call->len = MSG_LEN(x[1]);
    call->nhandles = 0;
    int r = fast(call, x);
    *answered = r == SVC_FAST_ANSWERED;
    return r != SVC_FAST_OTHER;
}

_Static_assert(sizeof(struct petrel_msg) == 9 * sizeof(uint64_t), "a message is the words x1..x9 of a frame");

/* A fault through the service's register entry for faults: the message
 * (its first words from the registers, the rest from the control page)
 * copied out first, since a reply the entry sends meanwhile (waking
 * another caller: svc_reply) is loaded into the control page. True if it
 * was answered (the reply is in the loop's message). */
static bool serve_fault_fast(int (*fault_fast)(struct svc_call *, const uint64_t *), struct svc_call *call,
                             const struct petrel_msg *m)
{
    uint64_t msg[FAULT_MSG_LEN];
    __builtin_memcpy(msg, m->mr, MSG_REG_MRS * sizeof(uint64_t));
    __builtin_memcpy(msg + MSG_REG_MRS, utcb()->mr + MSG_REG_MRS, (FAULT_MSG_LEN - MSG_REG_MRS) * sizeof(uint64_t));
    call->label = LABEL_FAULT;
    call->len = FAULT_MSG_LEN;
    call->nhandles = 0;
    return fault_fast(call, msg) == SVC_FAST_ANSWERED;
}

/* Reply with m and wait for the next request. A reply the kernel refuses
 * (a message it does not take) ends neither the service nor its loop: it
 * waits for the next request all the same (a receive that fails fails
 * again, and ends the loop). */
/* A server thread's batch of events (svc_trace_record, below). */
#define TRACE_BATCH     16
#define UTCB_BATCH      0

struct trace_batch {
    uint64_t n;                         /* events held */
    struct trace_event ev[TRACE_BATCH];
} __attribute__((aligned(1024)));       /* (inside a page: the kernel reads the events there) */

static inline void trace_flush_held(struct trace_batch *b);
static struct trace_batch *trace_batch_start(unsigned me);

/*
 * A pool of server threads (svc_serve_pool, for a program serving
 * objects): handlers run on several threads at once, without `excl` (the
 * program guards its own state), and the pool grows on demand, as Binder's
 * does with BR_SPAWN_LOOPER: a thread that takes a call when no other
 * thread of the pool waits for the next one starts one more, up to `max`.
 * `idle` counts the threads waiting to receive (or on their way there).
 */
static struct {
    unsigned max;                       /* 0: no pool (a service) */
    unsigned prio;
    volatile uint32_t threads;          /* started, the first included */
    volatile uint32_t idle;
    volatile uint32_t growing;          /* a thread is starting one (thread_spawn is not for two at once) */
} pool;

static void serve_loop(unsigned me);

static void pool_main(void *arg)
{
    serve_loop((unsigned)(uintptr_t)arg);
}

/* A call was taken by a thread of the pool. */
static void pool_taken(void)
{
    if (!pool.max || __atomic_sub_fetch(&pool.idle, 1, __ATOMIC_SEQ_CST) != 0)
        return;
    if (pool.threads >= pool.max || __atomic_exchange_n(&pool.growing, 1, __ATOMIC_ACQUIRE))
        return;                         /* (full, or another thread is starting one) */
    uint32_t n = pool.threads;
    __atomic_add_fetch(&pool.idle, 1, __ATOMIC_SEQ_CST);    /* (the new one, on its way to receive) */
    int64_t t = thread_spawn(pool_main, (void *)(uintptr_t)n, pool.prio, THREAD_ANY_CORE);
    if (t < 0)
        __atomic_sub_fetch(&pool.idle, 1, __ATOMIC_SEQ_CST);
    else
        __atomic_store_n(&pool.threads, n + 1, __ATOMIC_RELEASE);
    if (t > 0)
        sys_handle_close((uint32_t)t);  /* (it runs on; the pool never ends one) */
    __atomic_store_n(&pool.growing, 0, __ATOMIC_RELEASE);
}

/* A thread of the pool goes back to receive. */
static inline void pool_back(void)
{
    if (pool.max)
        __atomic_add_fetch(&pool.idle, 1, __ATOMIC_SEQ_CST);
}

unsigned svc_pool_threads(void)
{
    return pool.max ? __atomic_load_n(&pool.threads, __ATOMIC_RELAXED) : 1;
}

static int64_t reply_and_wait(uint32_t ep, struct petrel_msg *m, struct trace_batch *tb)
{
    pool_back();
    trace_flush_held(tb);
    int64_t r = sys_ipc_reply_recv(ep, m);
    if (r < 0) {
        m->info = 0;
        r = sys_ipc_recv(ep, m);
    }
    return r;
}

/*
 * Several server threads. A service with a shared entry gets a server
 * thread on each core online besides the first (helpers, started by
 * svc_serve), each waiting on the same endpoint, so that a client's call
 * is taken on the client's own core. The shared entry runs on all of them
 * at once; everything else of the service (its other entries, interrupt
 * and event handlers) on one at a time, under `excl`. The two meet as
 * Dekker's handshake: a thread entering the shared entry raises its flag
 * and then looks at excl; one taking excl sets it and then waits for
 * every flag to fall. The shared entry takes a bounded number of steps
 * and never waits for anything, so that wait always ends.
 */
#define MAX_SERVERS 64

static struct {
    volatile uint32_t in_shared;        /* this server thread runs the shared entry */
    uint8_t pad[60];                    /* (a cache line each) */
} servers[MAX_SERVERS];
static volatile uint32_t excl;          /* a server thread runs the service's other code */
static unsigned nservers = 1;

static struct {
    uint32_t ep;
    void (*entry)(struct svc_call *);
    int (*fast)(struct svc_call *, uint64_t *);
    int (*fault_fast)(struct svc_call *, const uint64_t *);
    int (*fault_shared)(struct svc_call *, const uint64_t *);
} loop;

/* excl: 0 free, 1 taken, 2 taken with a server thread asleep on it (a
 * futex word, as a Drepper mutex). A thread that cannot have it sleeps
 * rather than spins: the service's threads outrank its clients, and one
 * spinning would keep its core from the clients whose calls it waits to
 * serve (and, with more guest cores than host cores, from the holder). */
static bool excl_try(void)
{
    uint32_t free = 0;
    return __atomic_compare_exchange_n(&excl, &free, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static void excl_take(unsigned me, bool several)
{
    if (!several)
        return;
    bool got = excl_try();
    for (unsigned spins = 0; !got && spins < 64; spins++) {   /* held for one short call, as a rule */
        __asm__ volatile("yield" ::: "memory");
        got = !__atomic_load_n(&excl, __ATOMIC_RELAXED) && excl_try();
    }
    while (!got && __atomic_exchange_n(&excl, 2, __ATOMIC_SEQ_CST) != 0)
        sys_futex_wait((uint64_t)(uintptr_t)&excl, 2, 0);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < nservers; i++)
        while (i != me && __atomic_load_n(&servers[i].in_shared, __ATOMIC_ACQUIRE))
            __asm__ volatile("yield" ::: "memory");
}

static void excl_give(bool several)
{
    if (several && __atomic_exchange_n(&excl, 0, __ATOMIC_RELEASE) == 2)
        sys_futex_wake((uint64_t)(uintptr_t)&excl, 1);
}

/* The shared entry, unless another server thread has the service to
 * itself: true if it answered. */
static bool serve_shared(unsigned me, struct svc_call *call, const struct petrel_msg *m)
{
    servers[me].in_shared = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    bool answered = false;
    if (!__atomic_load_n(&excl, __ATOMIC_ACQUIRE))
        answered = serve_fault_fast(loop.fault_shared, call, m);
    __atomic_store_n(&servers[me].in_shared, 0, __ATOMIC_RELEASE);
    return answered;
}

static void serve_loop(unsigned me)
{
    /* (The loop's constants in registers: read from memory after every
     * call out, they cost the one-core path its instructions.) */
    uint32_t ep = loop.ep;
    void (*entry)(struct svc_call *) = loop.entry;
    int (*fast)(struct svc_call *, uint64_t *) = loop.fast;
    int (*fault_fast)(struct svc_call *, const uint64_t *) = loop.fault_fast;
    bool several = nservers > 1;
    uint64_t x[1 + sizeof(struct petrel_msg) / sizeof(uint64_t)] = { 0 };
    struct petrel_msg *m = (struct petrel_msg *)&x[1];
    struct user_env env = { .out = m };
    uint64_t mr[MSG_MAX_MRS];
    struct svc_call call;
    call.mr = mr;
    struct trace_batch *tb = trace_batch_start(me);
    int64_t r = sys_ipc_recv(ep, m);
    for (;;) {
        if (r < 0) {
            printf("service: receive failed: %s\n", error_str(r));
            return;
        }
        if (MSG_LABEL(m->info) == LABEL_NOTIFY) {
            excl_take(me, several);
            interrupts(m->mr[0]);
            excl_give(several);
            m->info = 0;
            trace_flush_held(tb);
            r = sys_ipc_recv(ep, m);
            continue;
        }
        pool_taken();
        call.badge = m->badge;
        call.pid = m->pid;
        call.env = &env;
        trace_svc_request(MSG_LABEL(m->info), m->pid, TRACE_PLACEMENT_USER);
        bool answered, fault = m->info == MSG_INFO(LABEL_FAULT, FAULT_MSG_LEN, 0);
        if (fault && several && serve_shared(me, &call, m)) {
            r = reply_and_wait(ep, m, tb);
            continue;
        }
        excl_take(me, several);
        if (fault && fault_fast && serve_fault_fast(fault_fast, &call, m)) {
            excl_give(several);
            r = reply_and_wait(ep, m, tb);
            continue;
        }
        if (fast && MSG_HANDLES(m->info) == 0 && serve_fast(fast, &call, x, &answered)) {
            excl_give(several);
            if (answered) {
                r = reply_and_wait(ep, m, tb);
            } else {
                m->info = 0;             /* kept for later (svc_defer) */
                pool_back();
                trace_flush_held(tb);
                r = sys_ipc_recv(ep, m);
            }
            continue;
        }
        call.label = MSG_LABEL(m->info);
        call.len = MSG_LEN(m->info);
        for (unsigned i = 0; i < call.len; i++)
            call.mr[i] = i < MSG_REG_MRS ? m->mr[i] : utcb()->mr[i];
        call.nhandles = MSG_HANDLES(m->info);
        for (unsigned i = 0; i < call.nhandles; i++)
            call.handles[i] = utcb()->recv_handles[i];
        env.have_reply = 0;                 /* (what entry's svc_reply sets: the fast paths answer by their result) */
        env.ngiven = 0;
        entry(&call);
        if (env.have_reply && env.ngiven) {
            trace_flush_held(tb);
            sys_ipc_reply(0, m);           /* the objects go with it; then they are no longer ours */
            for (unsigned i = 0; i < env.ngiven; i++)
                sys_handle_close(env.given[i]);
            excl_give(several);
            m->info = 0;
            pool_back();
            r = sys_ipc_recv(ep, m);
        } else if (env.have_reply) {
            excl_give(several);
            r = reply_and_wait(ep, m, tb);     /* svc_reply wrote the reply into m */
        } else {
            excl_give(several);
            m->info = 0;
            pool_back();
            trace_flush_held(tb);
            r = sys_ipc_recv(ep, m);
        }
    }
}

static void helper_main(void *arg)
{
    serve_loop((unsigned)(uintptr_t)arg);
}

/* A server thread on each core online but this one's, at this one's
 * priority, its faults going where this one's go (the supervisor's
 * "fault" grant: a fault of any of them restarts the service). */
static void start_helpers(void)
{
    struct petrel_thread_stats st;
    uint64_t online = (uint64_t)sys_cpus_online();
    uint32_t fault = start_handle("fault");
    if (sys_thread_stats(self_thread(), &st) < 0 || !(online & ~(1ull << st.cpu)))
        return;
    if (!fault) {
        puts("service: no \"fault\" endpoint granted: one server thread");
        return;
    }
    /* Every slot counted before any helper runs: a slot whose helper could
     * not be had stays out of the shared entry, and the lock is taken from
     * the first request on. */
    unsigned n = 1, slots[MAX_SERVERS];
    for (unsigned cpu = 0; cpu < 64 && n < MAX_SERVERS; cpu++)
        if ((online & (1ull << cpu)) && cpu != st.cpu)
            slots[n++] = cpu;
    nservers = n;
    for (unsigned i = 1; i < n; i++) {
        int64_t t = thread_spawn(helper_main, (void *)(uintptr_t)i, st.prio, (int)slots[i]);
        if (t < 0) {
            printf("service: no server thread for core %u: %s\n", slots[i], error_str(t));
            continue;
        }
        int64_t err = sys_thread_set_fault_handler((uint32_t)t, fault);
        if (err < 0)
            printf("service: the server thread on core %u faults to nobody: %s\n", slots[i], error_str(err));
    }
}

/* The monitor, if the root task granted it as "trace": its area mapped
 * read-only (the enabled bits are read there), its handle to record with. */
static const uint64_t no_trace[TRACE_MAX_POINTS / 64];
const uint64_t *svc_trace_enabled = no_trace;
static const struct trace_area *trace_view;
static uint32_t trace_h;

static void trace_attach(void)
{
    uint32_t h = start_handle("trace");
    int64_t m = h ? sys_trace_map(h) : -E_BADHANDLE;
    int64_t size = m > 0 ? sys_mem_size((uint32_t)m) : -E_BADHANDLE;
    uint64_t va = size > 0 ? va_alloc((uint64_t)size, 4096) : 0;
    if (!va || sys_mem_map(self_space(), (uint32_t)m, va, 0, (uint64_t)size, R_READ) < 0)
        return;
    trace_view = (uint64_t)size > TRACE_HEADER ? (const struct trace_area *)va : NULL;   /* (R_READ: the rings too) */
    trace_h = h;
    svc_trace_enabled = ((const struct trace_area *)va)->enabled;
}

/*
 * A server thread's events wait in its batch, each stamped when it
 * happened, and go to the kernel together (trace_emit_many) before the
 * thread next answers or waits, or when the batch is full: one kernel
 * entry for a request's events instead of one each. The thread control
 * page's first user word says where its batch is (0: none, a thread that
 * is no server thread, whose events go one by one); the server loop keeps
 * it at hand, so that a request pays a load and a branch for it.
 */
static struct trace_batch batches[TRACE_MAX_CPUS];
static struct trace_batch no_batch;     /* (a thread that keeps none: always empty) */

/* Server thread `me`'s batch, where its events wait if it is to record any. */
static struct trace_batch *trace_batch_start(unsigned me)
{
    if (!trace_h || me >= TRACE_MAX_CPUS)
        return &no_batch;
    utcb()->user[UTCB_BATCH] = (uint64_t)(uintptr_t)&batches[me];
    return &batches[me];
}

/* Hand batch b to the kernel. */
static __attribute__((noinline)) void trace_flush(struct trace_batch *b)
{
    sys_trace_emit_many(trace_h, b->ev, b->n);
    b->n = 0;
}

/* Before a server thread answers or waits: its events go first. */
static inline void trace_flush_held(struct trace_batch *b)
{
    if (__builtin_expect(b->n != 0, 0))
        trace_flush(b);
}

void svc_trace_record(unsigned id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    struct trace_batch *b = (struct trace_batch *)(uintptr_t)utcb()->user[UTCB_BATCH];
    if (!b) {
        sys_trace_emit((uint64_t)id << 32 | trace_h, a0, a1, a2, a3, a4);
        return;
    }
    struct trace_event *e = &b->ev[b->n];
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(e->time));     /* (the kernel's clock: EL0 may read it) */
    e->id = id;
    e->arg[0] = a0;
    e->arg[1] = a1;
    e->arg[2] = a2;
    e->arg[3] = a3;
    e->arg[4] = a4;
    if (++b->n == TRACE_BATCH)
        trace_flush(b);
}

const struct trace_area *svc_trace_area(void)
{
    return trace_view;
}

void svc_serve(uint32_t ep, void (*entry)(struct svc_call *), int (*fast)(struct svc_call *, uint64_t *),
               int (*fault_fast)(struct svc_call *, const uint64_t *),
               int (*fault_shared)(struct svc_call *, const uint64_t *))
{
    loop.ep = ep;
    loop.entry = entry;
    loop.fast = fast;
    loop.fault_fast = fault_fast;
    loop.fault_shared = fault_shared;
    trace_attach();
    if (fault_shared)
        start_helpers();
    serve_loop(0);
}

void svc_serve_pool(uint32_t ep, void (*entry)(struct svc_call *), int (*fast)(struct svc_call *, uint64_t *),
                    unsigned max)
{
    struct petrel_thread_stats st;
    loop.ep = ep;
    loop.entry = entry;
    loop.fast = fast;
    pool.prio = sys_thread_stats(self_thread(), &st) == 0 ? st.prio : 100;
    pool.threads = pool.idle = 1;
    pool.max = max < 1 ? 1 : max > MAX_SERVERS ? MAX_SERVERS : max;
    trace_attach();
    serve_loop(0);
}
