/* Faults as IPC: a page fault, an undefined instruction and a Linux
 * system call each reach the fault handler, which resumes the thread
 * with changed state, or stops it. */
#include "coretest.h"

void test_faults(void)
{
    uint32_t fe = (uint32_t)sys_endpoint_create();
    uint32_t results = (uint32_t)sys_endpoint_create();
    int64_t badged = sys_handle_dup(fe, R_WRITE | R_GRANT, 0xfa17);
    struct spawn_grant g[] = { { "results", results, R_WRITE } };
    struct spawn_result r;
    int64_t err = spawn_peer("faulter", g, 1, -1, (uint32_t)badged, &r);
    struct petrel_msg m = { 0 };
    bool kinds[3] = { false, false, false };
    uint64_t mem_value = 0x1234abcd;
    for (int i = 0; i < 3 && !err; i++) {
        if (sys_ipc_recv(fe, &m) != 0 || MSG_LABEL(m.info) != LABEL_FAULT || m.badge != 0xfa17 || m.pid != r.pid)
            break;
        uint64_t kind = m.mr[FAULT_MR_KIND], pc = m.mr[FAULT_MR_PC], sp = m.mr[FAULT_MR_SP];
        if (kind == FAULT_FOREIGN_SYSCALL && m.mr[FAULT_MR_ADDR] == 172) {
            /* Emulate Linux getpid: resume after the svc with x0 = 42. */
            m.info = MSG_INFO(0, 4, 0);
            m.mr[0] = FAULT_REPLY_RESUME;
            m.mr[1] = pc;
            m.mr[2] = sp;
            m.mr[3] = 42;
            kinds[0] = true;
        } else if (kind == FAULT_UNDEF) {
            m.info = MSG_INFO(0, 4, 0);
            m.mr[0] = FAULT_REPLY_RESUME;
            m.mr[1] = pc + 4;
            m.mr[2] = sp;
            m.mr[3] = 7;
            kinds[1] = true;
        } else if (kind == FAULT_DATA && m.mr[FAULT_MR_ADDR] == 0x500000010ull) {
            /* Be the pager: back the page and resume unchanged. */
            uint32_t h;
            uint64_t *page = mem_alloc(4096, 0, &h);
            page[2] = mem_value;
            sys_mem_map(r.space, h, 0x500000000ull, 0, 4096, R_READ);
            sys_handle_close(h);
            m.info = MSG_INFO(0, 1, 0);
            m.mr[0] = FAULT_REPLY_RESUME;
            kinds[2] = true;
        } else {
            break;
        }
        sys_ipc_reply(0, &m);
    }
    int64_t rr = err ? err : sys_ipc_recv(results, &m);
    tap_ok(kinds[0] && rr == 0 && m.mr[0] == 42, "faults: svc #0 reaches the handler, which returns x0 = 42 (got %ld)",
           (long)m.mr[0]);
    tap_ok(kinds[1] && rr == 0 && m.mr[1] == 7, "faults: an undefined instruction is skipped by the handler with x0 = 7");
    tap_ok(kinds[2] && rr == 0 && m.mr[2] == mem_value, "faults: a page fault is resolved by a user-level pager");
    if (rr == 0) {
        m.info = 0;
        sys_ipc_reply(0, &m);
    }
    /* The next fault: stop the thread. */
    bool stopped = false;
    if (!err && sys_ipc_recv(fe, &m) == 0 && MSG_LABEL(m.info) == LABEL_FAULT) {
        m.info = MSG_INFO(0, 1, 0);
        m.mr[0] = FAULT_REPLY_STOP;
        sys_ipc_reply(0, &m);
        sleep_ms(10);
        struct petrel_thread_stats st;
        stopped = sys_thread_stats(r.thread, &st) == 0 && st.state == THREAD_DEAD;
    }
    tap_ok(stopped, "faults: the handler can stop the faulting thread");
    sys_handle_close(fe);
    sys_handle_close(results);
}
