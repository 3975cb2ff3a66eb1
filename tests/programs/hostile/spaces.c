/* Attacks through address spaces: dead spaces that should accept
 * nothing, and chains of spaces holding each other. */
#include "hostile_int.h"

int64_t dead_space(void)
{
    int64_t s = sys_space_create();
    if (s < 0)
        return s;
    int64_t t = sys_thread_create((uint32_t)s, FOREIGN_UTCB);
    if (t < 0) {
        sys_handle_close((uint32_t)s);
        return t;
    }
    sys_thread_kill((uint32_t)t);        /* its last thread: the space is torn down */
    sys_handle_close((uint32_t)t);
    return s;
}

/*
 * Attack 1: a page whose slot 1 of a handle table (offset 24, struct
 * handle_slot { obj; badge; rights; gen }) points to a fake system
 * object at 0x100, with code at 0x200, mapped at address 0 of a dead
 * space whose table is gone; then a thread there uses "handle 1" (the
 * slot layout the review found; what counts is that no thread can run
 * there at all).
 * Reports what mapping it (at 0 and above), giving it a handle and
 * creating the thread answered, and mappings below USER_VA_MIN here.
 */
void attack_forge(void)
{
    int64_t s = dead_space();
    uint32_t m;
    uint8_t *page = mem_alloc(4096, 0, &m);
    if (s < 0 || !page) {
        report(s < 0 ? (uint64_t)s : (uint64_t)-E_NOMEM, 0, 0, 0, 0, 0);
        return;
    }
    struct { uint64_t obj, badge; uint32_t rights, gen; } *slot = (void *)(page + 24);
    slot->obj = 0x100;
    slot->rights = R_ALL;
    uint32_t *fake = (uint32_t *)(page + 0x100);
    fake[0] = OBJ_ROOT;                 /* type, refs, handles */
    fake[1] = fake[2] = 1;
    memcpy(page + 0x200, forge_code, (size_t)(forge_code_end - forge_code));

    uint32_t sp = (uint32_t)s;
    int64_t map0 = sys_mem_map(sp, m, 0, 0, 4096, R_READ | R_EXEC);
    int64_t map_high = sys_mem_map(sp, m, STALE_VA, 0, 4096, R_READ | R_EXEC);
    int64_t give = sys_handle_give(sp, self_space(), R_READ);
    int64_t t = sys_thread_create(sp, FOREIGN_UTCB);
    if (t > 0) {
        sys_thread_start((uint32_t)t, 0x200, 0, 0);
        sleep_ms(50);                   /* let it try */
    }
    int64_t own0 = sys_mem_map(self_space(), m, 0, 0, 4096, R_READ);
    int64_t own_low = sys_mem_map(self_space(), m, USER_VA_MIN - 4096, 0, 4096, R_READ);
    report((uint64_t)map0, (uint64_t)map_high, (uint64_t)give, (uint64_t)t, (uint64_t)own0, (uint64_t)own_low);
}

/* Attack 2: a thread in a dead space looks up handle 5 (its table is
 * gone, nothing is mapped at 0). Reports mapping code there, creating
 * and starting the thread. */
void attack_forge0(void)
{
    int64_t s = dead_space();
    uint32_t m;
    uint8_t *code = mem_alloc(4096, 0, &m);
    if (s < 0 || !code) {
        report(s < 0 ? (uint64_t)s : (uint64_t)-E_NOMEM, 0, 0, 0, 0, 0);
        return;
    }
    memcpy(code, info5_code, (size_t)(info5_code_end - info5_code));
    int64_t map = sys_mem_map((uint32_t)s, m, STALE_VA, 0, 4096, R_READ | R_EXEC);
    int64_t t = sys_thread_create((uint32_t)s, FOREIGN_UTCB);
    int64_t start = t > 0 ? sys_thread_start((uint32_t)t, STALE_VA, 0, 0) : t;
    if (t > 0)
        sleep_ms(50);
    report((uint64_t)s, (uint64_t)map, (uint64_t)t, (uint64_t)start, 0, 0);
}

/* Answer the next call of the hand-built thread on ep with `stop`;
 * returns its round number, or an error (-E_TIMEOUT after 2 s). */
static int64_t next_round(uint32_t ep, uint64_t stop)
{
    for (int i = 0; i < 2000; i++) {
        struct petrel_msg m = { MSG_NONBLOCK, { 0 }, 0, 0 };
        int64_t r = sys_ipc_recv(ep, &m);
        if (r == -E_AGAIN) {
            sleep_ms(1);
            continue;
        }
        if (r != 0)
            return r;
        uint64_t round = m.mr[0];
        bool ours = MSG_LABEL(m.info) == LABEL_ROUND;
        m.info = MSG_INFO(0, 1, 0);
        m.mr[0] = stop;
        sys_ipc_reply(0, &m);
        if (ours)
            return (int64_t)round;
    }
    return -E_TIMEOUT;
}

/*
 * Attack 3: map an object into a dead space at STALE_VA, drop that
 * space, build a new one (it may reuse the old one's memory) whose
 * thread has its UTCB at STALE_VA, then clone the object (a clone
 * removes its source's mappings). Reports the mapping's answer, the
 * set-up, the thread's round before the clone, the clone, its round
 * after the clone and its state then.
 */
void attack_stale_mapping(void)
{
    int64_t ep = sys_endpoint_create();
    int64_t s = dead_space();
    int64_t m = sys_mem_create(4096, 0);
    if (ep < 0 || s < 0 || m < 0) {
        report((uint64_t)-E_NOMEM, 0, 0, 0, 0, 0);
        return;
    }
    int64_t map = sys_mem_map((uint32_t)s, (uint32_t)m, STALE_VA, 0, 4096, R_READ);
    sys_handle_close((uint32_t)s);

    uint32_t code;
    uint8_t *p = mem_alloc(4096, 0, &code);
    int64_t s2 = sys_space_create();
    int64_t setup = !p ? -E_NOMEM : s2;
    if (setup > 0) {
        memcpy(p, round_code, (size_t)(round_code_end - round_code));
        setup = sys_mem_map((uint32_t)s2, code, 0x200000, 0, 4096, R_READ | R_EXEC);
    }
    int64_t ep2 = setup < 0 ? setup : sys_handle_give((uint32_t)s2, (uint32_t)ep, R_WRITE);
    int64_t t = ep2 < 0 ? ep2 : sys_thread_create((uint32_t)s2, STALE_VA);
    setup = t < 0 ? t : sys_thread_start((uint32_t)t, 0x200000, 0, (uint64_t)ep2);

    int64_t before = setup < 0 ? setup : next_round((uint32_t)ep, 0);
    int64_t clone = sys_mem_clone((uint32_t)m);
    int64_t after = setup < 0 ? setup : next_round((uint32_t)ep, 1);
    unsigned state = t > 0 ? thread_state((uint32_t)t) : THREAD_DEAD;
    report((uint64_t)map, (uint64_t)setup, (uint64_t)before, (uint64_t)clone, (uint64_t)after, state);
}

/*
 * Attack 4 (and 7c with a small memory limit): a chain of spaces, each
 * holding a handle to the one before, n=N long or (n=0) as long as the
 * limits allow. close=1 closes the head and waits for the chain's
 * spaces to be gone; otherwise the program exits holding it. Reports
 * the length, what stopped it (0: nothing), the spaces and memory it
 * used, the close's answer and the spaces left after it.
 */
void attack_chain(void)
{
    uint64_t want = start_arg_u64("n", 0), cap = want ? want : CHAIN_MAX;
    int64_t prev = 0, err = 0;
    uint64_t n = 0;
    while (n < cap) {
        int64_t s = sys_space_create();
        if (s < 0) {
            err = s;
            break;
        }
        if (prev) {
            int64_t g = sys_handle_give((uint32_t)s, (uint32_t)prev, R_ALL);
            if (g < 0) {
                err = g;
                sys_handle_close((uint32_t)s);
                break;
            }
            sys_handle_close((uint32_t)prev);
        }
        prev = s;
        n++;
    }
    int64_t spaces = sys_space_usage(self_space(), LIMIT_SPACES);
    int64_t mem = sys_space_usage(self_space(), LIMIT_MEMORY);
    int64_t closed = -1, left = -1;
    if (start_arg_u64("close", 0) && prev > 0) {
        closed = sys_handle_close((uint32_t)prev);
        for (int i = 0; i < 2000 && (left = sys_space_usage(self_space(), LIMIT_SPACES)) > 0; i++)
            sleep_ms(1);
    }
    report(n, (uint64_t)err, (uint64_t)spaces, (uint64_t)mem, (uint64_t)closed, (uint64_t)left);
}
