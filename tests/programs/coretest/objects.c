/* Object lifetime: destroying what threads wait on wakes them with E_CLOSED;
 * bad handles and rights get errors. */
#include "coretest.h"

struct blocked {
    uint32_t h;
    int kind;               /* 0 recv, 1 notify_wait, 2 call */
    volatile int64_t result;
    volatile int done;
};

static void block_on(void *arg)
{
    struct blocked *b = arg;
    struct petrel_msg m = { MSG_INFO(1, 0, 0), { 0 }, 0, 0 };
    if (b->kind == 0)
        b->result = sys_ipc_recv(b->h, &m);
    else if (b->kind == 1)
        b->result = sys_notify_wait(b->h);
    else
        b->result = sys_ipc_call(b->h, &m);
    b->done = 1;
}

static bool wait_done(volatile int *done)
{
    for (int i = 0; i < 200 && !*done; i++)
        sleep_ms(1);
    return *done;
}

static void server_dies(void *arg)
{
    struct petrel_msg m = { 0 };
    sys_ipc_recv((uint32_t)(uintptr_t)arg, &m);
    sys_thread_exit(0);                 /* never replies */
}

void test_objects(void)
{
    struct blocked r = { (uint32_t)sys_endpoint_create(), 0, 1, 0 };
    thread_spawn(block_on, &r, 150, -1);
    tap_ok(!r.done && sys_handle_close(r.h) == 0 && wait_done(&r.done) && r.result == -E_CLOSED,
           "objects: closing an endpoint wakes its receiver with E_CLOSED (%s)", error_str(r.result));

    struct blocked s = { (uint32_t)sys_endpoint_create(), 2, 1, 0 };
    thread_spawn(block_on, &s, 150, -1);
    tap_ok(!s.done && sys_handle_close(s.h) == 0 && wait_done(&s.done) && s.result == -E_CLOSED,
           "objects: closing an endpoint wakes its caller with E_CLOSED (%s)", error_str(s.result));

    struct blocked n = { (uint32_t)sys_notify_create(), 1, 1, 0 };
    thread_spawn(block_on, &n, 150, -1);
    tap_ok(!n.done && sys_handle_close(n.h) == 0 && wait_done(&n.done) && n.result == -E_CLOSED,
           "objects: closing a notification wakes its waiter with E_CLOSED (%s)", error_str(n.result));

    uint32_t ep = (uint32_t)sys_endpoint_create();
    thread_spawn(server_dies, (void *)(uintptr_t)ep, 90, -1);
    struct petrel_msg m = { MSG_INFO(1, 0, 0), { 0 }, 0, 0 };
    int64_t c = sys_ipc_call(ep, &m);
    tap_ok(c == -E_CLOSED, "objects: a server that dies before replying gives its caller E_CLOSED (%s)", error_str(c));
    sys_handle_close(ep);

    tap_ok(sys_handle_close(0) == -E_BADHANDLE && sys_handle_close(0xfffff) == -E_BADHANDLE &&
           sys_handle_info(12345) == -E_BADHANDLE, "handles: unknown handles are refused");
    uint32_t e2 = (uint32_t)sys_endpoint_create();
    sys_handle_close(e2);
    uint32_t e3 = (uint32_t)sys_endpoint_create();
    tap_ok(e3 != e2 && sys_handle_info(e2) == -E_BADHANDLE, "handles: a closed handle's value does not name its slot's next object");
    tap_ok(sys_notify_signal(e3, 1) == -E_BADHANDLE, "handles: a handle of the wrong type is refused");
    int64_t ro = sys_handle_dup(e3, R_READ, 0);
    struct petrel_msg m2 = { MSG_INFO(1, 0, 0) | MSG_NONBLOCK, { 0 }, 0, 0 };
    tap_ok(ro > 0 && sys_ipc_send((uint32_t)ro, &m2) == -E_PERM, "handles: a missing right is refused");
    tap_ok(sys_handle_dup(e3, R_ALL, 0x5) > 0 && sys_handle_dup(self_space(), R_READ, 0x5) == -E_INVAL,
           "handles: only endpoints and notifications take badges");
    sys_handle_close(e3);
    tap_ok(sys_mem_create_phys(self_space(), 0x9000000, 4096) == -E_BADHANDLE &&
           sys_irq_create(self_space(), 40) == -E_BADHANDLE, "handles: device memory and interrupts need the system handle");

    /* R_READ on the system object opens the boot files and nothing else. */
    int64_t rd = sys_handle_dup(root_handle(), R_READ, 0);
    int64_t file = rd > 0 ? sys_mem_from_bootfile((uint32_t)rd, 0) : rd;
    struct petrel_device dev;
    uint32_t bind_ep = (uint32_t)sys_endpoint_create();
    tap_ok(file > 0 && sys_mem_create_phys((uint32_t)rd, 0x9010000, 4096) == -E_PERM &&
           sys_irq_create((uint32_t)rd, 40) == -E_PERM &&
           sys_device_find((uint32_t)rd, "arm,pl011", 9, 0, &dev) == -E_PERM &&
           sys_service_bind((uint32_t)rd, bind_ep, 1, 0) == -E_PERM && sys_system_off((uint32_t)rd) == -E_PERM,
           "handles: a read-only system handle opens boot files but gives no device, interrupt or power");
    int64_t wr = sys_handle_dup(root_handle(), R_MANAGE, 0);
    tap_ok(wr > 0 && sys_mem_from_bootfile((uint32_t)wr, 0) == -E_PERM,
           "handles: boot files need R_READ on the system handle");
    sys_handle_close(bind_ep);
    if (file > 0)
        sys_handle_close((uint32_t)file);
    sys_handle_close((uint32_t)rd);
    sys_handle_close((uint32_t)wr);
}
