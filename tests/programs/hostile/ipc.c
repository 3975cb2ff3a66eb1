/* Attacks through IPC: a dangling server pointer that would lend its
 * priority to whoever takes the dead thread's place, and a queued
 * message word rewritten into a kernel label. */
#include "hostile_int.h"

#define VICTIMS 4

static struct {
    uint32_t ep_a, ep_b;
    volatile int64_t recv_a, recv_b, call_nb, call;
    volatile uint32_t word;
} px;

/* Receives on A, then on B (both without waiting), then ends. */
static void passing_server(void *arg)
{
    struct petrel_msg m = { MSG_NONBLOCK, { 0 }, 0, 0 };
    px.recv_a = sys_ipc_recv(px.ep_a, &m);
    m.info = MSG_NONBLOCK;
    px.recv_b = sys_ipc_recv(px.ep_b, &m);
}

static void victim(void *arg)
{
    sys_futex_wait((uint64_t)&px.word, 0, 0);
}

static void caller(void *arg)
{
    struct petrel_msg m = { MSG_INFO(1, 0, 0) | MSG_NONBLOCK, { 0 }, 0, 0 };
    px.call_nb = sys_ipc_call(px.ep_a, &m);
    m.info = MSG_INFO(1, 0, 0);
    px.call = sys_ipc_call(px.ep_a, &m);        /* waits: nobody receives */
}

/* The highest priority (base or effective) among the victims. */
static unsigned victims_prio(const int64_t *v)
{
    unsigned top = 0;
    for (int i = 0; i < VICTIMS; i++) {
        struct petrel_thread_stats st = { 0 };
        if (v[i] > 0 && sys_thread_stats((uint32_t)v[i], &st) == 0)
            top = MAX(top, MAX(st.prio, st.effective_prio));
    }
    return top;
}

/*
 * Attack 5: a thread receives on endpoint A, then on B, and dies; its
 * memory is freed. Unrelated threads V are created at priority 10 (one
 * may take the dead thread's place), then a thread at priority 90
 * calls A, without waiting and then waiting, and is killed. Reports the
 * receives' and the non-blocking call's answers, whether the call
 * queued, and the victims' highest priority while it waited and after.
 */
void attack_prio(void)
{
    px.ep_a = (uint32_t)sys_endpoint_create();
    px.ep_b = (uint32_t)sys_endpoint_create();
    px.recv_a = px.recv_b = px.call_nb = 1;
    int64_t a = thread_spawn(passing_server, NULL, 50, -1);
    bool gone = a > 0 && wait_state((uint32_t)a, THREAD_DEAD, 2000);
    sys_handle_close((uint32_t)a);              /* its memory goes now */
    int64_t v[VICTIMS];
    bool parked = gone;
    for (int i = 0; i < VICTIMS; i++) {
        v[i] = thread_spawn(victim, NULL, 10, -1);
        parked = parked && v[i] > 0 && wait_state((uint32_t)v[i], THREAD_FUTEX, 2000);
    }
    int64_t c = thread_spawn(caller, NULL, 90, -1);
    bool queued = parked && c > 0 && wait_state((uint32_t)c, THREAD_SEND, 2000);
    unsigned during = victims_prio(v);
    if (c > 0)
        sys_thread_kill((uint32_t)c);
    unsigned after = victims_prio(v);
    for (int i = 0; i < VICTIMS; i++)
        if (v[i] > 0)
            sys_thread_kill((uint32_t)v[i]);
    report((uint64_t)px.recv_a, (uint64_t)px.recv_b, (uint64_t)px.call_nb, queued, during, after);
}

static struct {
    uint32_t ep;
    volatile int64_t result;
} lx;

static void sender(void *arg)
{
    struct petrel_msg m = { MSG_INFO(LABEL_SENT, 2, 0), { 0x5e1f, 0xd00d }, 0, 0 };
    lx.result = sys_ipc_send(lx.ep, &m);
}

/*
 * Attack 6: a thread of ours waits in ipc_send; its saved x1 (the
 * message word) is rewritten to a kernel label, 40 words and stray
 * flag bits; then we receive. Reports whether the sender was queued,
 * the register write's and the receive's answers, and the word and
 * first two registers received.
 */
void attack_label(void)
{
    lx.ep = (uint32_t)sys_endpoint_create();
    lx.result = 1;
    int64_t s = thread_spawn(sender, NULL, 60, -1);
    bool queued = s > 0 && wait_state((uint32_t)s, THREAD_SEND, 2000);
    struct petrel_regs r;
    int64_t wr = queued ? sys_thread_read_regs((uint32_t)s, &r) : -E_STATE;
    if (wr == 0) {
        r.x[1] = MSG_INFO(LABEL_FAULT, 40, 0) | 0xfe00;
        wr = sys_thread_write_regs((uint32_t)s, &r);
    }
    struct petrel_msg m = { MSG_NONBLOCK, { 0 }, 0, 0 };
    int64_t rr = queued ? sys_ipc_recv(lx.ep, &m) : -E_STATE;
    if (s > 0)
        wait_state((uint32_t)s, THREAD_DEAD, 2000);
    report(queued, (uint64_t)wr, (uint64_t)rr, m.info, m.mr[0], m.mr[1]);
}
