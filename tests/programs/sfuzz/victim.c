/*
 * Victims: threads the fuzzer starts and then kills, suspends, rewrites
 * and abandons while they wait in IPC, on notifications and futexes.
 * The same code runs in the worker's own space and in child spaces
 * spawned from the boot image (the program is at the same addresses
 * everywhere). A victim uses only its stack, its argument block, its
 * UTCB and the read-only futex word, so nothing it does — or anything
 * done to it — can touch the state of the process it runs in. Every
 * error ends it; so does a bounded number of rounds, so that pairs of
 * victims cannot ping-pong forever.
 */
#include "sfuzz.h"

/* In .rodata: every sfuzz process maps the boot file's page in place,
 * so this word is one physical futex shared by all of them. */
const volatile uint32_t victim_word __attribute__((section(".rodata.victim_word"))) = 0;

static void close_received(uint64_t info)
{
    for (unsigned i = 0; i < MSG_HANDLES(info); i++)
        sys_handle_close(utcb()->recv_handles[i]);
}

/* A message of random length, maybe carrying one of our handles. */
static void make_msg(struct petrel_msg *m, uint64_t *seed, uint32_t h, bool fault)
{
    if (fault) {            /* a fault reply: resume or stop, nothing else */
        m->info = MSG_INFO(0x51, 1, 0);
        m->mr[0] = fz_next(seed) % 2;
        return;
    }
    unsigned len = (unsigned)(fz_next(seed) % 12), nh = h && fz_next(seed) % 3 == 0;
    for (unsigned i = 0; i < len; i++) {
        if (i < MSG_REG_MRS)
            m->mr[i] = fz_next(seed);
        else
            utcb()->mr[i] = fz_next(seed);
    }
    utcb()->send_handles[0] = h;
    utcb()->send_rights[0] = (uint32_t)fz_next(seed) & R_ALL;
    m->info = MSG_INFO(0x100 + fz_next(seed) % 64, len, nh);
}

static void serve(const struct victim_arg *a, uint64_t *seed, unsigned rounds)
{
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(a->h[0], &m);
    while (r == 0 && rounds--) {
        close_received(m.info);
        make_msg(&m, seed, a->h[1], MSG_LABEL(m.info) == LABEL_FAULT);
        switch (fz_next(seed) % 16) {
        case 0:
            break;          /* never answered: a later call drops it */
        case 1: case 2: case 3: case 4: {
            int64_t rh = sys_reply_save();
            if (rh > 0 && fz_next(seed) % 4)
                sys_ipc_reply_to((uint32_t)rh, &m);
            else if (rh > 0)
                sys_handle_close((uint32_t)rh);
            break;
        }
        default:
            sys_ipc_reply(0, &m);
            break;
        }
        m.info = 0;
        r = sys_ipc_recv(a->h[0], &m);
    }
}

static void reply_recv(const struct victim_arg *a, uint64_t *seed, unsigned rounds)
{
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(a->h[0], &m);
    while (r == 0 && rounds--) {
        close_received(m.info);
        make_msg(&m, seed, a->h[1], MSG_LABEL(m.info) == LABEL_FAULT);
        r = sys_ipc_reply_recv(a->h[0], &m);
    }
}

static void client(const struct victim_arg *a, uint64_t *seed, unsigned rounds, bool call)
{
    for (;;) {
        if (!rounds--)
            return;
        struct petrel_msg m = { 0 };
        make_msg(&m, seed, a->h[1 + fz_next(seed) % 2], false);
        int64_t r = call ? sys_ipc_call(a->h[0], &m) : sys_ipc_send(a->h[0], &m);
        if (r != 0)
            return;
        if (call)
            close_received(m.info);
    }
}

void victim_entry(struct victim_arg *arg)
{
    struct victim_arg a = *arg;
    uint64_t seed = a.seed | 1;
    unsigned rounds = 16 + (unsigned)(fz_next(&seed) % 240);
    switch (a.kind % V_KINDS) {
    case V_SERVER:
        serve(&a, &seed, rounds);
        break;
    case V_REPLY_RECV:
        reply_recv(&a, &seed, rounds);
        break;
    case V_CALLER:
        client(&a, &seed, rounds, true);
        break;
    case V_SENDER:
        client(&a, &seed, rounds, false);
        break;
    case V_NOTIFY:
        while (rounds-- && sys_notify_wait(a.h[0]) >= 0)
            ;
        break;
    case V_FUTEX:
        while (rounds-- && sys_futex_wait((uint64_t)&victim_word, 0, 0) == 0)
            ;
        break;
    case V_SPIN:
        while (rounds--)
            sys_yield();
        break;
    case V_SIGNAL:
        while (rounds-- && sys_notify_signal(a.h[0], fz_next(&seed) & 0xff) == 0)
            sys_futex_wait((uint64_t)&victim_word, 0, 200000);
        break;
    case V_FAULT:
        /* A data abort, resumed or fatal; registers a handler's reply may
         * rewrite (x0..x8) play no part in it. */
        __asm__ volatile("mov x20, #0x10\n1: str x21, [x20]\n b 1b" ::: "x20", "x21", "memory");
        break;
    default:
        break;
    }
    sys_thread_exit(0);
}
