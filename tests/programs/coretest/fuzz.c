/* The random system call test: an unprivileged process throws 100,000
 * system calls with random arguments; the kernel must stay intact. */
#include "coretest.h"

void test_fuzz(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    uint32_t n = (uint32_t)sys_notify_create();
    int64_t mem = sys_mem_create(0x10000, 0);
    struct spawn_grant g[] = { { "results", ep, R_WRITE }, { "n", n, R_ALL }, { "mem", (uint32_t)mem, R_READ | R_WRITE } };
    struct spawn_result r;
    char args[64] = "mode=fuzz calls=100000";
    char calls[16];
    if (start_arg("fuzzcalls", calls, sizeof(calls)))
        snprintf(args, sizeof(args), "mode=fuzz calls=%s", calls);
    struct spawn_req req = { "corepeer", args, 50, -1, g, 3, 0, 0, 0, 0, 0 };
    int64_t err = spawn(&req, &r);
    struct petrel_msg m = { 0 };
    int64_t rr = err ? err : sys_ipc_recv(ep, &m);
    tap_ok(rr == 0 && m.mr[0] >= 100000 && m.mr[1] > 0 && m.mr[2] > 0,
           "fuzz: %lu random system calls from an unprivileged process (%lu succeeded, %lu errors)",
           (unsigned long)m.mr[0], (unsigned long)m.mr[1], (unsigned long)m.mr[2]);
    if (rr == 0) {
        m.info = 0;
        sys_ipc_reply(0, &m);
    }
    /* Is the kernel intact? IPC, memory, threads still work. */
    uint32_t e2 = (uint32_t)sys_endpoint_create();
    int64_t t = thread_spawn(echo_thread, (void *)(uintptr_t)e2, 100, -1);
    bool ipc = t > 0 && echo_roundtrip(e2, 3, 1) && echo_roundtrip(e2, 20, 2);
    uint64_t *p = mem_alloc(0x10000, 0, NULL);
    bool memory = p && p[100] == 0 && (p[100] = 5, p[100] == 5);
    tap_ok(ipc && memory, "fuzz: afterwards IPC, memory and threads still work");
    struct petrel_msg q = { MSG_INFO(LABEL_QUIT, 0, 0), { 0 }, 0, 0 };
    sys_ipc_call(e2, &q);
    sys_handle_close(e2);
    sys_handle_close(ep);
}
