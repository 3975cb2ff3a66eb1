/*
 * coretest: guest tests of the microkernel core. It runs as the root
 * task (so it holds the system handle) and spawns corepeer processes
 * from the boot image where a test needs another address space. Prints
 * TAP; each group lives in its own file.
 */
#include "coretest.h"

unsigned ncpus;
uint64_t my_pid;

uint64_t now_ns(void)
{
    return (uint64_t)sys_clock_ns();
}

/* Serve echo requests on ep until LABEL_QUIT (see echo.h). */
void echo_serve(uint32_t ep)
{
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(ep, &m);
    for (;;) {
        if (r < 0)
            return;
        uint64_t label = MSG_LABEL(m.info);
        unsigned len;
        if (label == LABEL_XFER) {
            uint32_t h = utcb()->recv_handles[0];
            m.mr[0] = MSG_HANDLES(m.info);
            m.mr[1] = (uint64_t)sys_handle_info(h);
            struct petrel_msg probe = { MSG_NONBLOCK, { 0 }, 0, 0 };
            m.mr[2] = (uint64_t)sys_ipc_recv(h, &probe);
            struct petrel_msg probe2 = { MSG_INFO(1, 0, 0) | MSG_NONBLOCK, { 0 }, 0, 0 };
            m.mr[3] = (uint64_t)sys_ipc_send(h, &probe2);
            m.mr[4] = (uint64_t)sys_handle_close(h);
            len = 5;
        } else {
            len = echo_answer(&m);
        }
        m.info = MSG_INFO(label + 1, len, 0);
        if (label == LABEL_QUIT) {
            sys_ipc_reply(0, &m);
            return;
        }
        r = sys_ipc_reply_recv(ep, &m);
    }
}

void echo_thread(void *arg)
{
    echo_serve((uint32_t)(uintptr_t)arg);
}

bool echo_roundtrip(uint32_t ep, unsigned len, uint64_t seed)
{
    struct petrel_msg m = { MSG_INFO(LABEL_ECHO, len, 0), { 0 }, 0, 0 };
    for (unsigned i = 0; i < len; i++) {
        uint64_t v = seed * 0x9e3779b97f4a7c15ull + i * 0x100000001b3ull;
        if (i < MSG_REG_MRS)
            m.mr[i] = v;
        else
            utcb()->mr[i] = v;
    }
    if (sys_ipc_call(ep, &m) != 0 || MSG_LEN(m.info) != len || MSG_LABEL(m.info) != LABEL_ECHO + 1)
        return false;
    for (unsigned i = 0; i < len; i++) {
        uint64_t v = seed * 0x9e3779b97f4a7c15ull + i * 0x100000001b3ull;
        uint64_t got = i < MSG_REG_MRS ? m.mr[i] : utcb()->mr[i];
        if (got != ~v)
            return false;
    }
    return true;
}

int64_t spawn_peer(const char *mode, const struct spawn_grant *g, unsigned ng, int cpu, uint32_t fault_ep,
                   struct spawn_result *r)
{
    char args[64];
    snprintf(args, sizeof(args), "mode=%s", mode);
    struct spawn_req req = { "corepeer", args, 0, cpu, g, ng, fault_ep, 0, 0, 0, 0 };
    return spawn(&req, r);
}

int main(const struct petrel_bootinfo *bi)
{
    ncpus = bi->ncpus;
    my_pid = (uint64_t)sys_space_id(self_space());
    printf("# coretest: %u cores, pid %lu\n", ncpus, (unsigned long)my_pid);
    char only[32] = "";
    start_arg("only", only, sizeof(only));
    struct { const char *name; void (*fn)(void); } groups[] = {
        { "ipc", test_ipc }, { "objects", test_objects }, { "handles", test_handles },
        { "memory", test_memory },
        { "sched", test_sched }, { "irq", test_irq }, { "faults", test_faults }, { "trace", test_trace },
        { "fuzz", test_fuzz },
    };
    for (unsigned i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        if (only[0] && strcmp(only, groups[i].name) != 0)
            continue;
        printf("# group %s\n", groups[i].name);
        groups[i].fn();
    }
    if (!strcmp(only, "review")) {
        printf("# group review\n");
        test_review();      /* reproducers: never part of the default run */
    }
    tap_plan();
    return 0;
}
