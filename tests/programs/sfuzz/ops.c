/*
 * The operations of the stateful fuzzer. Each picks its objects from the
 * worker's table of live handles (table.c), so nearly every call reaches
 * a real object in some state — a thread blocked in IPC, a space being
 * torn down, an endpoint with queued callers — and whatever it creates or
 * receives goes back into the table.
 *
 * The rules that keep the worker itself intact (only the kernel may
 * fail): the worker's own space never leaves it with R_MANAGE, so no
 * other process can kill it or run code in it; register rewrites of
 * threads in its own space (or whose home is unknown) touch only x1..x7
 * of a thread suspended in IPC, which the IPC stubs treat as results;
 * scratch memory lives in the slot ranges only; and every reply sets
 * MR1 and MR2 to ~0, so a reply that lands on a faulting thread never
 * moves its pc or sp.
 */
#include "fuzz.h"
#include "noop_if.h"

static volatile uint32_t spawn_lock;

/* Victim slots in the worker's own space: a stack and a UTCB each. */
static struct {
    uint32_t priv;          /* our private handle to the slot's thread, 0: free */
    uint64_t born;          /* the creator's operation count */
} vslot[FZ_VSLOTS];

static uint64_t vslot_stack_top(unsigned k) { return FZ_VICTIM_BASE + k * FZ_VICTIM_STRIDE + FZ_VICTIM_STACK; }
static uint64_t vslot_utcb(unsigned k) { return FZ_VICTIM_BASE + k * FZ_VICTIM_STRIDE + FZ_VICTIM_STACK + 0x4000; }
static uint64_t slot_va(struct fz_ctx *c) { return FZ_SLOT_BASE + below(c, FZ_SLOTS) * FZ_SLOT_SIZE; }

static const uint8_t weight[OP_COUNT];
static unsigned weight_total;

/* Before the first operation: the sum of the weights. */
void fz_ops_init(void)
{
    for (unsigned i = 0; i < OP_COUNT; i++)
        weight_total += weight[i];
}

/* ---------------------------------------------------------------- messages */

/* A random message: label, length, maybe handles; MR1 and MR2 are always ~0
 * (see the file comment). `block` leaves out MSG_NONBLOCK. */
static void make_msg(struct fz_ctx *c, struct petrel_msg *m, bool block, bool handles)
{
    unsigned len = chance(c, 3) ? (unsigned)below(c, 35) : (unsigned)below(c, 7);
    for (unsigned i = 0; i < 32; i++) {
        uint64_t v = i == 1 || i == 2 ? ~0ull : rnd(c);
        if (i < MSG_REG_MRS)
            m->mr[i] = v;
        else
            utcb()->mr[i] = v;
    }
    if (!chance(c, 16) && len > 0)
        m->mr[0] = 0;                   /* a fault reply that resumes, mostly */
    uint64_t label = chance(c, 32) ? LABEL_KERNEL | below(c, 4) : 0x100 + below(c, 64);
    unsigned nh = 0;
    if (handles && chance(c, 3)) {
        nh = 1 + (unsigned)below(c, 3);
        for (unsigned i = 0; i < nh; i++) {
            struct fz_ent e = { 0 };
            fz_pick(c, 0xffff, 0, &e, NULL);
            utcb()->send_handles[i] = e.h;
            utcb()->send_rights[i] = fz_give_rights(c, &e);
            if (chance(c, 16)) {        /* a made-up value: it might name anything of ours */
                utcb()->send_handles[i] = (uint32_t)rnd(c) & 0x3ffff;
                utcb()->send_rights[i] = R_READ;
            }
        }
    }
    m->info = MSG_INFO(label & 0xffffffffffffull, len, nh) | (block ? 0 : MSG_NONBLOCK);
    m->badge = m->pid = 0;
}

/* ---------------------------------------------------------------- objects */

static int64_t op_create(struct fz_ctx *c, int64_t h, unsigned type, unsigned kind)
{
    if (h > 0)
        fz_add(c, (struct fz_ent){ (uint32_t)h, (uint8_t)type, (uint8_t)kind, 0, 0, 0 });
    return h;
}

static int64_t op_mem_create(struct fz_ctx *c)
{
    uint32_t flags = chance(c, 4) ? MEM_EAGER : 0;
    uint64_t size;
    switch (below(c, 16)) {
    case 0: flags |= MEM_PAGE_2M; size = 0x200000; break;
    case 1: case 2: flags |= MEM_PAGE_64K; size = 0x10000 * (1 + below(c, 4)); break;
    case 3: size = 0x1000 * below(c, 3) + (chance(c, 2) ? 0x800 : 0); break;       /* bad sizes */
    default: size = 0x1000 * (1 + below(c, 16)); break;
    }
    return op_create(c, sys_mem_create(size, flags), OBJ_MEMORY, K_OTHER);
}

static int64_t op_mem_clone(struct fz_ctx *c)
{
    struct fz_ent e;
    if (!fz_pick(c, 1u << OBJ_MEMORY, 0, &e, NULL))
        return -E_NOENT;
    return op_create(c, sys_mem_clone(e.h), OBJ_MEMORY, K_OTHER);
}

/* A child process running this program as a victim, with up to two of our handles. */
static int64_t op_spawn(struct fz_ctx *c)
{
    struct fz_ent a = { 0 }, b = { 0 };
    fz_pick(c, (1u << OBJ_ENDPOINT) | (1u << OBJ_NOTIFICATION), 0, &a, NULL);
    fz_pick(c, 0xffff, 0, &b, NULL);
    struct spawn_grant g[2] = { { "a", a.h, fz_give_rights(c, &a) }, { "b", b.h, fz_give_rights(c, &b) } };
    char args[96];
    snprintf(args, sizeof(args), "mode=child kind=%u seed=%lu", (unsigned)below(c, V_KINDS),
             (unsigned long)rnd(c));
    struct spawn_req req = { "sfuzz", args, W.prio - 1 - (unsigned)below(c, 4), (int)below(c, W.ncpus),
                             g, (unsigned)(a.h ? (b.h ? 2 : 1) : 0), 0, 0, 0, 0, 0 };
    if (chance(c, 2)) {             /* limits of its own, some too tight to start with */
        req.mem_limit = 0x10000 * (1 + below(c, 64));
        req.max_threads = below(c, 8);
        req.max_handles = below(c, 64);
        req.max_spaces = below(c, 3);
    }
    struct spawn_result r;
    fz_lock(&spawn_lock);               /* the runtime's address allocator is not thread-safe */
    int64_t err = spawn(&req, &r);
    fz_unlock(&spawn_lock);
    fz_remember_space(err ? err : r.space);
    if (err)
        return err;
    fz_add(c, (struct fz_ent){ r.space, OBJ_SPACE, K_CHILD, 0, 0, 0 });
    fz_add(c, (struct fz_ent){ r.thread, OBJ_THREAD, K_CHILD, F_STARTED, 0, 0 });
    W.sh->victims++;
    return 0;
}

/* ---------------------------------------------------------------- threads */

/* A free victim slot (recycling those whose thread died or lived long
 * enough), or -1. */
static int vslot_get(struct fz_ctx *c)
{
    for (unsigned n = 0; n < FZ_VSLOTS; n++) {
        unsigned k = (unsigned)((c->index * 5 + n) % FZ_VSLOTS);
        fz_lock(&fz_table_lock);
        uint32_t priv = vslot[k].priv;
        if (priv == 0)
            vslot[k].priv = ~0u;        /* ours while we set it up */
        fz_unlock(&fz_table_lock);
        if (priv == 0)
            return (int)k;
        if (priv == ~0u)
            continue;
        struct petrel_thread_stats st;
        int64_t e = sys_thread_stats(priv, &st);
        bool stale = st.state != THREAD_DEAD && c->st->done - vslot[k].born > 1500;     /* a victim's life */
        if (e == 0 && (st.state == THREAD_DEAD || stale)) {
            fz_lock(&fz_table_lock);
            bool mine = vslot[k].priv == priv;
            if (mine)
                vslot[k].priv = ~0u;
            fz_unlock(&fz_table_lock);
            if (mine) {
                if (stale)
                    sys_thread_kill(priv);
                sys_handle_close(priv);
                return (int)k;
            }
        }
    }
    return -1;
}

/* Stack and argument block for a victim in space `sp` (not ours): a fresh
 * object, filled through our temporary window, mapped there. Returns the
 * stack pointer, or 0. */
static uint64_t child_stack(struct fz_ctx *c, uint32_t sp, uint64_t n, const struct victim_arg *va)
{
    int64_t m = sys_mem_create(FZ_VICTIM_STACK, 0);
    if (m < 0)
        return 0;
    uint64_t base = FZ_CHILD_BASE + (n % 64) * FZ_VICTIM_STRIDE, top = base + FZ_VICTIM_STACK - 64;
    int64_t err = sys_mem_map(W.own_space, (uint32_t)m, c->temp_va, 0, FZ_VICTIM_STACK, R_READ | R_WRITE);
    if (!err) {
        memcpy((void *)(c->temp_va + FZ_VICTIM_STACK - 64), va, sizeof(*va));
        sys_mem_unmap(W.own_space, c->temp_va);
        err = sys_mem_map(sp, (uint32_t)m, base, 0, FZ_VICTIM_STACK, R_READ | R_WRITE);
    }
    sys_handle_close((uint32_t)m);
    return err ? 0 : top;
}

/* Handles for a victim of this kind: an endpoint or a notification first. */
static void victim_handles(struct fz_ctx *c, unsigned kind, struct fz_ent e[3])
{
    unsigned first = kind == V_NOTIFY || kind == V_SIGNAL ? 1u << OBJ_NOTIFICATION : 1u << OBJ_ENDPOINT;
    unsigned not_own = ~(1u << K_OWN);     /* victims pass handles on with any rights */
    memset(e, 0, 3 * sizeof(*e));
    fz_pick(c, chance(c, 16) ? 0xffff : first, not_own, &e[0], NULL);
    fz_pick(c, 0xffff, not_own, &e[1], NULL);
    fz_pick(c, 0xffff, not_own, &e[2], NULL);
}

static int64_t op_thread_create(struct fz_ctx *c)
{
    struct fz_ent s;
    unsigned idx;
    if (chance(c, 3)) {
        s = (struct fz_ent){ W.own_space, OBJ_SPACE, K_OWN, 0, 0, 0 };
        idx = ~0u;
    } else if (!fz_pick(c, 1u << OBJ_SPACE, 0, &s, &idx)) {
        return -E_NOENT;
    }
    if (s.kind == K_OWN) {
        int k = vslot_get(c);
        if (k < 0)
            return -E_BUSY;
        int64_t t = sys_thread_create(s.h, vslot_utcb((unsigned)k));
        int64_t priv = t > 0 ? sys_handle_dup((uint32_t)t, R_ALL, 0) : -E_NOMEM;
        if (priv < 0 && t > 0) {
            sys_thread_kill((uint32_t)t);
            sys_handle_close((uint32_t)t);
            t = priv;
        }
        vslot[k].born = c->st->done;
        fz_lock(&fz_table_lock);
        vslot[k].priv = t > 0 ? (uint32_t)priv : 0;
        fz_unlock(&fz_table_lock);
        if (t > 0)
            fz_add(c, (struct fz_ent){ (uint32_t)t, OBJ_THREAD, K_OWN, 0, (uint8_t)k, 0 });
        return t;
    }
    /* Another space: count the victims made there in the space's entry. */
    uint64_t n = idx != ~0u ? fz_count_aux(idx, s.h, below(c, 64)) : below(c, 64);
    uint64_t utcb_va = FZ_CHILD_BASE + (n % 64) * FZ_VICTIM_STRIDE + FZ_VICTIM_STACK + 0x4000;
    uint64_t sp = 0;
    if (s.kind == K_CHILD) {
        /* Our program runs there: a real victim with handles given to that space. */
        struct victim_arg va = { below(c, V_KINDS), rnd(c), { 0, 0, 0 }, 0 };
        struct fz_ent e[3];
        victim_handles(c, (unsigned)va.kind, e);
        for (int i = 0; i < 3; i++) {
            int64_t v = e[i].h ? sys_handle_give(s.h, e[i].h, fz_give_rights(c, &e[i])) : 0;
            va.h[i] = v > 0 ? (uint32_t)v : 0;
        }
        sp = child_stack(c, s.h, n, &va);
    }
    int64_t t = sys_thread_create(s.h, utcb_va);
    if (t > 0) {
        sys_thread_set_tls((uint32_t)t, utcb_va);
        /* Mostly a fault handler from the table: faults as IPC (and less console). */
        struct fz_ent ep;
        if (!chance(c, 8) && fz_pick(c, 1u << OBJ_ENDPOINT, 0, &ep, NULL))
            sys_thread_set_fault_handler((uint32_t)t, ep.h);
        fz_add(c, (struct fz_ent){ (uint32_t)t, OBJ_THREAD, (uint8_t)(s.kind == K_CHILD && sp ? K_CHILD : K_EMPTY),
                                0, 0, sp });
    }
    return t;
}

static int64_t op_thread_start(struct fz_ctx *c)
{
    struct fz_ent t;
    unsigned idx;
    bool found = false;
    for (int tries = 0; tries < 4 && !found; tries++)
        found = fz_pick(c, 1u << OBJ_THREAD, 0, &t, &idx) && !(t.flags & F_STARTED);
    if (!found)
        return -E_NOENT;
    uint64_t pc, sp;
    if (t.kind == K_OWN) {
        struct victim_arg va = { below(c, V_KINDS), rnd(c), { 0, 0, 0 }, 0 };
        struct fz_ent e[3];
        victim_handles(c, (unsigned)va.kind, e);
        for (int i = 0; i < 3; i++)
            va.h[i] = e[i].h;
        sp = vslot_stack_top(t.slot) - 64;
        memcpy((void *)sp, &va, sizeof(va));
        pc = (uint64_t)victim_entry;
        sys_thread_set_priority(t.h, W.prio - (chance(c, 8) ? 0 : 1 + below(c, 6)));
    } else if (t.kind == K_CHILD && t.aux) {
        pc = (uint64_t)victim_entry;
        sp = t.aux;
    } else {
        /* No code of ours there: it faults at once (to a handler, if it has one). */
        static const uint64_t pcs[] = { 0x10, FZ_SLOT_BASE, FZ_SLOT_BASE + FZ_SLOT_SIZE, 0x400000 };
        pc = pcs[below(c, 4)];
        sp = FZ_SLOT_BASE + FZ_SLOT_SIZE - 64;
    }
    int64_t r = sys_thread_start(t.h, pc, sp, sp);
    if (r == 0 || r == -E_STATE)
        fz_set_flags(idx, t.h, F_STARTED);
    if (r == 0)
        W.sh->victims++;
    return r;
}

static int64_t op_kill(struct fz_ctx *c)
{
    struct fz_ent t;
    if (!fz_pick(c, 1u << OBJ_THREAD, 0, &t, NULL))
        return -E_NOENT;
    struct petrel_thread_stats st;
    int64_t e = sys_thread_stats(t.h, &st);
    int64_t r = sys_thread_kill(t.h);
    if (r == 0)
        W.sh->kill_state[e == 0 && st.state <= THREAD_DEAD ? st.state + 1 : 0]++;
    if (r == 0 && st.state == THREAD_DEAD && chance(c, 2)) {
        fz_forget(t.h);                    /* make room for the living */
        sys_handle_close(t.h);
    }
    return r;
}

static int64_t op_write_regs(struct fz_ctx *c)
{
    struct fz_ent t;
    if (!fz_pick(c, 1u << OBJ_THREAD, 0, &t, NULL))
        return -E_NOENT;
    bool was_suspended = sys_thread_suspend(t.h) != 0;
    struct petrel_regs r;
    struct petrel_thread_stats st;
    int64_t err = sys_thread_read_regs(t.h, &r);
    if (!err)
        err = sys_thread_stats(t.h, &st);
    if (!err) {
        W.sh->wregs_state[st.state <= THREAD_DEAD ? st.state + 1 : 0]++;
        bool in_ipc = st.state == THREAD_SEND || st.state == THREAD_RECV || st.state == THREAD_REPLY;
        if (t.kind == K_CHILD || t.kind == K_EMPTY) {
            /* Nothing of ours runs there: anything goes. */
            for (int i = 0; i < 31; i++)
                if (chance(c, 3))
                    r.x[i] = rnd(c);
            if (chance(c, 4))
                r.pc = chance(c, 2) ? (uint64_t)victim_entry : rnd(c) & 0xffffffffffull;
            if (chance(c, 4))
                r.sp = chance(c, 2) ? rnd(c) : FZ_SLOT_BASE + below(c, 0x1000) * 16;
        } else if (in_ipc) {
            /* Message registers of a thread suspended in IPC: forged words included. */
            for (int i = 1; i <= 7; i++)
                if (chance(c, 2))
                    r.x[i] = rnd(c);
            if (chance(c, 2))
                r.x[1] = MSG_INFO(chance(c, 2) ? LABEL_KERNEL | 1 : below(c, 0x1000), below(c, 64), below(c, 4));
        }
        err = sys_thread_write_regs(t.h, &r);
        struct petrel_fpregs fp;
        if (chance(c, 2) && sys_thread_read_fp(t.h, &fp) == 0) {
            if (t.kind == K_CHILD || t.kind == K_EMPTY)
                for (int i = 0; i < 66; i++)
                    if (chance(c, 4))
                        ((uint64_t *)&fp)[i] = rnd(c);     /* FPCR and FPSR included */
            sys_thread_write_fp(t.h, &fp);
        }
    }
    if (!was_suspended)
        sys_thread_resume(t.h);
    return err;
}

/* thread_copy into a created thread where nothing of ours runs, from any thread. */
static int64_t op_thread_copy(struct fz_ctx *c)
{
    struct fz_ent dst, src;
    if (!fz_pick(c, 1u << OBJ_THREAD, (1u << K_CHILD) | (1u << K_EMPTY), &dst, NULL) ||
        !fz_pick(c, 1u << OBJ_THREAD, 0, &src, NULL))
        return -E_NOENT;
    return sys_thread_copy(dst.h, src.h);
}

static int64_t op_thread_misc(struct fz_ctx *c, unsigned op)
{
    struct fz_ent t;
    unsigned kinds = op == OP_set_tls ? (1u << K_CHILD) | (1u << K_EMPTY) : 0;
    if (!fz_pick(c, 1u << OBJ_THREAD, kinds, &t, NULL))
        return -E_NOENT;
    switch (op) {
    case OP_suspend: return sys_thread_suspend(t.h);
    case OP_resume: return sys_thread_resume(t.h);
    case OP_priority: return sys_thread_set_priority(t.h, W.prio - below(c, 12) + (chance(c, 16) ? 20 : 0));
    case OP_affinity: return sys_thread_set_affinity(t.h, below(c, W.ncpus + (chance(c, 8) ? 2 : 0)));
    case OP_cpus: return sys_thread_set_cpus(t.h, chance(c, 4) ? rnd(c) : rnd(c) & ((1ull << W.ncpus) - 1));
    case OP_read_regs: {
        struct petrel_regs r;
        return sys_thread_read_regs(t.h, &r);
    }
    case OP_stats: {
        struct petrel_thread_stats st;
        return sys_thread_stats(t.h, &st);
    }
    case OP_fault_handler: {
        struct fz_ent ep = { 0 };
        if (!chance(c, 4))
            fz_pick(c, 1u << OBJ_ENDPOINT, 0, &ep, NULL);
        return sys_thread_set_fault_handler(t.h, ep.h);
    }
    case OP_set_tls:
        return sys_thread_set_tls(t.h, chance(c, 2) ? rnd(c) : FZ_SLOT_BASE);
    case OP_bind: {
        struct fz_ent n = { 0 };
        if (!chance(c, 4))
            fz_pick(c, 1u << OBJ_NOTIFICATION, 0, &n, NULL);
        return sys_notify_bind(t.h, n.h);
    }
    default:
        return -E_NOSYS;
    }
}

/* ---------------------------------------------------------------- handles */

static int64_t op_handles(struct fz_ctx *c, unsigned op)
{
    struct fz_ent e;
    if (!fz_pick(c, 0xffff, 0, &e, NULL))
        return -E_NOENT;
    switch (op) {
    case OP_dup: {
        uint32_t rights = fz_rights_of(e.h);
        if (chance(c, 3))
            rights &= (uint32_t)rnd(c);
        if (chance(c, 16))
            rights = (uint32_t)rnd(c) & R_ALL;
        int64_t h = sys_handle_dup(e.h, rights, chance(c, 4) ? rnd(c) & 0xffff : 0);
        if (h > 0) {
            e.h = (uint32_t)h;
            fz_add(c, e);
        }
        return h;
    }
    case OP_close:
        fz_forget(e.h);
        if (chance(c, 2))
            return sys_handle_close(e.h);
        fz_drop(c, &e);
        return 0;
    case OP_give: {
        struct fz_ent s = { W.own_space, OBJ_SPACE, K_OWN, 0, 0, 0 };
        if (!chance(c, 4) && !fz_pick(c, 1u << OBJ_SPACE, 0, &s, NULL))
            return -E_NOENT;
        int64_t h = sys_handle_give(s.h, e.h, fz_give_rights(c, &e));
        if (h > 0 && s.kind == K_OWN) {
            e.h = (uint32_t)h;
            fz_add(c, e);
        }
        return h;
    }
    case OP_info:
        return sys_handle_info(e.h);
    default:
        return -E_NOSYS;
    }
}

/* ---------------------------------------------------------------- memory */

static int64_t op_map(struct fz_ctx *c)
{
    struct fz_ent s = { W.own_space, OBJ_SPACE, K_OWN, 0, 0, 0 }, m;
    if (!chance(c, 2) && !fz_pick(c, 1u << OBJ_SPACE, 0, &s, NULL))
        return -E_NOENT;
    if (!fz_pick(c, 1u << OBJ_MEMORY, 0, &m, NULL))
        return -E_NOENT;
    int64_t size = sys_mem_size(m.h);
    if (size < 0)
        return size;
    uint64_t off = 0, len = (uint64_t)size;
    if (chance(c, 4) && len > 0x1000) {
        off = 0x1000 * below(c, len / 0x1000);
        len = 0x1000 * (1 + below(c, (len - off) / 0x1000));
    }
    static const uint32_t rights[] = { R_READ, R_READ | R_WRITE, R_READ | R_WRITE, R_READ | R_EXEC,
                                       R_READ | R_WRITE | R_EXEC, R_WRITE };
    uint64_t va = slot_va(c) + (chance(c, 8) ? 0x1000 * below(c, 16) : 0);
    return sys_mem_map(s.h, m.h, va, off, MIN(len, FZ_SLOT_SIZE), rights[below(c, 6)]);
}

static int64_t op_unmap(struct fz_ctx *c)
{
    struct fz_ent s = { W.own_space, OBJ_SPACE, K_OWN, 0, 0, 0 };
    if (!chance(c, 2) && !fz_pick(c, 1u << OBJ_SPACE, 0, &s, NULL))
        return -E_NOENT;
    return sys_mem_unmap(s.h, slot_va(c));
}

/* A range for munmap / mprotect: in the scratch slots, across their
 * mappings' ends and between slots; in other spaces sometimes over the
 * victims' stacks and UTCBs too. Mostly page aligned. */
static int64_t op_range(struct fz_ctx *c, unsigned op)
{
    struct fz_ent s = { W.own_space, OBJ_SPACE, K_OWN, 0, 0, 0 };
    if (!chance(c, 2) && !fz_pick(c, 1u << OBJ_SPACE, 0, &s, NULL))
        return -E_NOENT;
    uint64_t va = slot_va(c) + 0x1000 * below(c, 24) - (chance(c, 8) ? 0x1000 * below(c, 4) : 0);
    if (s.kind != K_OWN && chance(c, 4))
        va = FZ_CHILD_BASE + below(c, 8) * FZ_VICTIM_STRIDE + 0x1000 * below(c, 20);
    uint64_t size = 0x1000 * (1 + below(c, chance(c, 8) ? 1024 : 24));
    if (chance(c, 32))
        va += 0x800;
    if (chance(c, 32))
        size = chance(c, 2) ? 0 : size + 0x10;
    if (op == OP_unmap_range)
        return sys_mem_unmap_range(s.h, va, size);
    if (!chance(c, 4)) {            /* mostly inside one mapping, so that it can succeed */
        va = slot_va(c) + 0x1000 * below(c, 4);
        size = 0x1000 * (1 + below(c, 8));
    }
    static const uint32_t rights[] = { R_READ, R_READ | R_WRITE, R_READ | R_EXEC, R_READ | R_WRITE | R_EXEC, 0, R_WRITE };
    return sys_mem_protect(s.h, va, size, rights[chance(c, 8) ? below(c, 6) : below(c, 3)]);
}

/* A load or store in a scratch slot: lazy fill, copy-on-write, or a fault
 * that the worker's fault server resumes past (then -E_FAULT). */
static int64_t op_touch(struct fz_ctx *c)
{
    uint64_t va = slot_va(c) + 0x1000 * below(c, 20) + 8 * below(c, 512);
    uint64_t faults = W.faults[c->index];
    if (chance(c, 2)) {
        uint64_t v = rnd(c);
        __asm__ volatile("str %1, [%0]" :: "r"(va), "r"(v) : "memory");
    } else {
        uint64_t v = 0;
        __asm__ volatile("ldr %0, [%1]" : "+r"(v) : "r"(va) : "memory");
    }
    return W.faults[c->index] != faults ? -E_FAULT : 0;
}

/* The same through the kernel: a write (thread_stats) or a read (futex_wake). */
static int64_t op_ktouch(struct fz_ctx *c)
{
    uint64_t va = slot_va(c) + 0x1000 * below(c, 20) + 8 * below(c, 500);
    if (chance(c, 2))
        return sys_thread_stats(W.main_thread, (struct petrel_thread_stats *)va);
    return sys_futex_wake(va & ~3ull, 1);
}

/* ---------------------------------------------------------------- IPC */

static int64_t op_ipc(struct fz_ctx *c, unsigned op)
{
    struct fz_ent ep = { 0 };
    struct petrel_msg m;
    bool block = chance(c, 16);
    if (op != OP_reply && !fz_pick(c, 1u << OBJ_ENDPOINT, 0, &ep, NULL))
        return -E_NOENT;
    if (chance(c, 64))
        ep.h = (uint32_t)rnd(c) & 0x3ffff;      /* a stale or made-up value */
    make_msg(c, &m, block, op != OP_recv);
    int64_t r;
    c->st->may_block = 1;
    switch (op) {
    case OP_send:
        r = sys_ipc_send(ep.h, &m);
        break;
    case OP_recv:
        m.info = block ? 0 : MSG_NONBLOCK;
        r = sys_ipc_recv(ep.h, &m);
        break;
    case OP_call:
        r = sys_ipc_call(ep.h, &m);
        break;
    case OP_reply:
        r = sys_ipc_reply(0, &m);
        break;
    default:        /* OP_reply_recv: the receive never waits */
        m.info |= MSG_NONBLOCK;
        r = sys_ipc_reply_recv(ep.h, &m);
        break;
    }
    c->st->may_block = 0;
    if (r == 0 && op != OP_send && op != OP_reply)
        fz_add_received_msg(c, m.info);
    return r;
}

/*
 * A register-only request of the NoOp service placed in the kernel: the
 * request a thread repeats through one handle becomes its light call
 * (docs/design/ipc-fastpath.md), so the other operations close, give and
 * badge its handles under it. Through the worker's own handle to the
 * service (its sums must be right), a badged duplicate put in the table,
 * or any endpoint of the table; now and then with a word the service does
 * not take.
 */
static int64_t op_kcall(struct fz_ctx *c)
{
    static const uint64_t words[] = {
        MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_PING, 0, 0),
        MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_ADD, 2, 0),
        MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_WHO, 0, 0),
        MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_LOW, 2, 0),
        MSG_INFO(((uint64_t)NOOP_IF_ID << 16) | NOOP_WORK, 1, 0),
    };
    static volatile uint32_t dups[4];       /* badged duplicates of W.kservice made here (maybe gone since) */
    struct fz_ent ep = { W.kservice, OBJ_ENDPOINT, K_OTHER, 0, 0, 0 };
    unsigned how = (unsigned)below(c, 8);
    if (how == 0) {
        int64_t h = sys_handle_dup(W.kservice, R_WRITE | R_GRANT | R_DUP, rnd(c));
        if (h > 0)
            dups[below(c, 4)] = (uint32_t)h;
        return op_create(c, h, OBJ_ENDPOINT, K_OTHER);
    }
    if (how < 3)
        ep.h = dups[below(c, 4)];
    else if (how == 3 && !fz_pick(c, 1u << OBJ_ENDPOINT, 0, &ep, NULL))
        return -E_NOENT;
    bool own = how >= 4;
    unsigned k = chance(c, 4) ? (unsigned)below(c, sizeof(words) / sizeof(words[0])) : c->kcall_word;
    c->kcall_word = k;
    struct petrel_msg m = { words[k], { rnd(c), rnd(c) >> below(c, 64), rnd(c), rnd(c), rnd(c), rnd(c) }, 0, 0 };
    if (k == 4)
        m.mr[0] = below(c, 2000);                       /* work: a short spin */
    if (k == 3 && !chance(c, 8))
        m.mr[1] = below(c, 70);                         /* low: mostly a 32-bit bit count */
    if (chance(c, 32))
        m.info = rnd(c) & ~(0x3ull << 6);               /* a word it may not take (no handles) */
    if (how == 3 && !chance(c, 16))
        m.info |= MSG_NONBLOCK;                         /* any endpoint: mostly no waiting for a server */
    /* the same request a few times over: from the second on, a light call */
    int64_t r = 0;
    struct petrel_msg sent = m;
    for (unsigned rep = 1 + (unsigned)below(c, 4); rep > 0 && r == 0; rep--) {
        m = sent;
        c->st->may_block = 1;
        r = sys_ipc_call(ep.h, &m);
        c->st->may_block = 0;
        if (own && k == 1 && sent.info == words[1] && r == 0) {
            uint64_t a = sent.mr[0], b = sent.mr[1];
            W.sh->kcall_checked++;
            bool right = a + b < a ? (int64_t)m.mr[0] == -E_RANGE : m.mr[0] == 0 && m.mr[1] == a + b;
            if (!right)
                W.sh->kcall_wrong++;
        }
    }
    return r;
}

static int64_t op_reply_to(struct fz_ctx *c)
{
    struct fz_ent rh;
    if (!fz_pick(c, 1u << OBJ_REPLY, 0, &rh, NULL))
        return -E_NOENT;
    struct petrel_msg m;
    make_msg(c, &m, false, true);
    int64_t r = sys_ipc_reply_to(rh.h, &m);
    if (r == 0 || r == -E_CLOSED || r == -E_BADHANDLE)
        fz_forget(rh.h);           /* used up (the kernel closed it) */
    return r;
}

static int64_t op_reply_copy(struct fz_ctx *c)
{
    uint64_t len = chance(c, 16) ? 0x10001 : below(c, 0x2000);
    return sys_reply_copy(below(c, 5), slot_va(c) + below(c, 0x4000), slot_va(c) + below(c, 0x4000), len);
}

/* A lend of a range (sometimes wrapping, past user space, or with a bad
 * rights word) for the servers a call answered here would call. */
static int64_t op_reply_lend(struct fz_ctx *c)
{
    uint64_t va = chance(c, 16) ? ~0ull - below(c, 0x1000) : slot_va(c) + below(c, 0x4000);
    return sys_reply_lend(va, below(c, 0x8000), below(c, 3));
}

/* The monitor's calls on any handle of ours (never one of the monitor: the
 * worker is given none) or a made-up one, with random words, ids and
 * fields: every one refused, nothing recorded or switched. */
static int64_t op_trace(struct fz_ctx *c)
{
    struct fz_ent e;
    uint32_t h = fz_pick(c, 0xffff, 0, &e, NULL) && !chance(c, 8) ? e.h : (uint32_t)rnd(c);
    switch (below(c, 5)) {
    case 0: return sys_trace_open(h);
    case 1: return sys_trace_ctl(h, below(c, 6), rnd(c), rnd(c));
    case 2: return sys_trace_map(h);
    case 3: return sys_trace_emit_many(h, (const void *)(uintptr_t)rnd(c), below(c, 40));
    default: return sys_trace_emit((rnd(c) & ~0xffffffffull) | h, rnd(c), rnd(c), rnd(c), rnd(c), rnd(c));
    }
}

/* ---------------------------------------------------------------- notifications, futexes */

static int64_t op_notify(struct fz_ctx *c, unsigned op)
{
    struct fz_ent n;
    if (!fz_pick(c, 1u << OBJ_NOTIFICATION, 0, &n, NULL))
        return -E_NOENT;
    if (op == OP_signal)
        return sys_notify_signal(n.h, chance(c, 8) ? 0 : rnd(c) & (chance(c, 2) ? 0xff : ~0ull));
    return sys_notify_poll(n.h);
}

static int64_t op_futex(struct fz_ctx *c, unsigned op)
{
    uint64_t va = chance(c, 2) ? (uint64_t)&victim_word : slot_va(c) + 4 * below(c, 1024);
    if (op == OP_futex_wake)
        return sys_futex_wake(va, 1 + below(c, 4));
    uint64_t timeout = chance(c, 32) ? 2000000 : 10000 + below(c, 200000);
    return sys_futex_wait(va, chance(c, 4) ? (uint32_t)rnd(c) : 0, timeout);
}

/* ---------------------------------------------------------------- spaces */

static int64_t op_space(struct fz_ctx *c, unsigned op)
{
    struct fz_ent s;
    /* Never our own space with these: killing or limiting it ends the worker. */
    unsigned kinds = op == OP_usage || op == OP_space_id ? 0 : ~(1u << K_OWN);
    if (!fz_pick(c, 1u << OBJ_SPACE, kinds, &s, NULL))
        return -E_NOENT;
    uint32_t kind = (uint32_t)below(c, LIMIT_KINDS + 1);
    switch (op) {
    case OP_space_kill:
        return sys_space_kill(s.h);
    case OP_set_limit: {
        int64_t used = sys_space_usage(s.h, kind);
        uint64_t v = used > 0 ? (uint64_t)used : 0;
        switch (below(c, 4)) {
        case 0: v = 0; break;
        case 1: v = v ? v - 1 : 0; break;
        case 2: v += below(c, 4) * (kind == LIMIT_MEMORY ? 0x1000 : 1); break;
        default: v = rnd(c) & 0xfffff; break;
        }
        return sys_space_set_limit(s.h, kind, v);
    }
    case OP_usage:
        return sys_space_usage(s.h, kind | (chance(c, 4) ? LIMIT_QUERY_MAX : 0));
    default:
        return sys_space_id(s.h);
    }
}

/* ---------------------------------------------------------------- the loop */

/* Relative weights of the operations. */
static const uint8_t weight[OP_COUNT] = {
    [OP_ep_create] = 4, [OP_notify_create] = 3, [OP_mem_create] = 4, [OP_mem_clone] = 2, [OP_bootfile] = 1,
    [OP_space_create] = 2, [OP_spawn] = 1, [OP_thread_create] = 6, [OP_thread_start] = 4,
    [OP_dup] = 4, [OP_close] = 6, [OP_give] = 4, [OP_info] = 1,
    [OP_map] = 8, [OP_unmap] = 3, [OP_unmap_range] = 2, [OP_protect] = 3, [OP_touch] = 4, [OP_ktouch] = 2, [OP_mem_size] = 1,
    [OP_kill] = 4, [OP_suspend] = 3, [OP_resume] = 3, [OP_priority] = 2, [OP_affinity] = 2, [OP_cpus] = 2,
    [OP_read_regs] = 2, [OP_write_regs] = 4, [OP_stats] = 2, [OP_fault_handler] = 3, [OP_set_tls] = 1,
    [OP_bind] = 2, [OP_thread_copy] = 2,
    [OP_send] = 6, [OP_recv] = 6, [OP_call] = 5, [OP_kcall] = 4, [OP_reply] = 3, [OP_reply_recv] = 3, [OP_reply_save] = 2,
    [OP_reply_to] = 2, [OP_reply_copy] = 2, [OP_reply_lend] = 2, [OP_trace] = 2,
    [OP_signal] = 4, [OP_poll] = 2, [OP_futex_wait] = 2, [OP_futex_wake] = 3,
    [OP_space_kill] = 2, [OP_set_limit] = 2, [OP_usage] = 2, [OP_space_id] = 1,
    [OP_yield] = 3,
};

static unsigned pick_op(struct fz_ctx *c)
{
    unsigned x = (unsigned)below(c, weight_total);
    for (unsigned i = 0; i < OP_COUNT; i++) {
        if (x < weight[i])
            return i;
        x -= weight[i];
    }
    return OP_yield;
}

static int64_t run_op(struct fz_ctx *c, unsigned op)
{
    switch (op) {
    case OP_ep_create:
        if (chance(c, 4))
            return op_create(c, sys_handle_dup(W.shared_ep, R_ALL, 0), OBJ_ENDPOINT, K_OTHER);
        return op_create(c, sys_endpoint_create(), OBJ_ENDPOINT, K_OTHER);
    case OP_notify_create:
        if (chance(c, 4))
            return op_create(c, sys_handle_dup(W.shared_n, R_ALL, 0), OBJ_NOTIFICATION, K_OTHER);
        return op_create(c, sys_notify_create(), OBJ_NOTIFICATION, K_OTHER);
    case OP_mem_create: return op_mem_create(c);
    case OP_mem_clone: return op_mem_clone(c);
    case OP_bootfile:
        return op_create(c, sys_mem_from_bootfile(W.root_ro, below(c, 2)), OBJ_MEMORY, K_OTHER);
    case OP_space_create: {
        int64_t h = sys_space_create();
        fz_remember_space(h);
        return op_create(c, h, OBJ_SPACE, K_EMPTY);
    }
    case OP_spawn: return op_spawn(c);
    case OP_thread_create: return op_thread_create(c);
    case OP_thread_start: return op_thread_start(c);
    case OP_dup: case OP_close: case OP_give: case OP_info:
        return op_handles(c, op);
    case OP_map: return op_map(c);
    case OP_unmap: return op_unmap(c);
    case OP_unmap_range: case OP_protect: return op_range(c, op);
    case OP_touch: return op_touch(c);
    case OP_ktouch: return op_ktouch(c);
    case OP_mem_size: {
        struct fz_ent m;
        return fz_pick(c, 1u << OBJ_MEMORY, 0, &m, NULL) ? sys_mem_size(m.h) : -E_NOENT;
    }
    case OP_kill: return op_kill(c);
    case OP_thread_copy: return op_thread_copy(c);
    case OP_write_regs: return op_write_regs(c);
    case OP_suspend: case OP_resume: case OP_priority: case OP_affinity: case OP_cpus: case OP_read_regs:
    case OP_stats: case OP_fault_handler: case OP_set_tls: case OP_bind:
        return op_thread_misc(c, op);
    case OP_send: case OP_recv: case OP_call: case OP_reply: case OP_reply_recv:
        return op_ipc(c, op);
    case OP_kcall: return op_kcall(c);
    case OP_reply_save: {
        int64_t h = sys_reply_save();
        return h > 0 ? op_create(c, h, OBJ_REPLY, K_OTHER) : h;
    }
    case OP_reply_to: return op_reply_to(c);
    case OP_reply_copy: return op_reply_copy(c);
    case OP_reply_lend: return op_reply_lend(c);
    case OP_trace: return op_trace(c);
    case OP_signal: case OP_poll: return op_notify(c, op);
    case OP_futex_wait: case OP_futex_wake: return op_futex(c, op);
    case OP_space_kill: case OP_set_limit: case OP_usage: case OP_space_id:
        return op_space(c, op);
    default:
        if (chance(c, 2))
            return sys_yield();
        return sys_futex_wait((uint64_t)&victim_word, 0, 20000 + below(c, 300000)) == -E_TIMEOUT ? 0 : -E_STATE;
    }
}

/* Run this thread's share of operations (continuing where a killed
 * predecessor stopped). */
void fz_run(struct fz_ctx *c)
{
    struct fz_thread_stats *st = c->st;
    while (st->done < W.ops) {
        unsigned op = pick_op(c);
        st->cur_op = op;
        if (W.trace)
            printf("sfuzz: w%u.%u #%lu %s\n", W.id, c->index, (unsigned long)st->done, fz_op_names[op]);
        int64_t r = run_op(c, op);
        if (W.trace)
            printf("sfuzz: w%u.%u #%lu %s = %ld\n", W.id, c->index, (unsigned long)st->done, fz_op_names[op],
                   (long)r);
        st->count[op][fz_class(r)]++;
        st->done++;
    }
}
