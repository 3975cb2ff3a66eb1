/*
 * sfuzz: the stateful kernel fuzzer (see sfuzz.h for its parts).
 *
 *   (root task)    the driver: spawn the workers, watch, check, report (TAP)
 *   mode=worker    a fuzzing process (worker.c)
 *   mode=child     a victim process: victim_entry with the handles "a", "b"
 *   mode=echo      an echo server on "ep" (the driver's liveness check)
 *   mode=nest      a process with a child process (repro.c)
 */
#include "sfuzz.h"

#define FZ_NAME(name) #name,
const char *const fz_op_names[OP_COUNT] = { FZ_OPS(FZ_NAME) };
#undef FZ_NAME

uint64_t fz_arg(const char *key, uint64_t def)
{
    char s[24];
    if (!start_arg(key, s, sizeof(s)))
        return def;
    uint64_t v = 0;
    const char *p = s;
    if (p[0] == '0' && p[1] == 'x') {
        for (p += 2; *p; p++) {
            unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0') : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 16;
            if (d == 16)
                break;
            v = v * 16 + d;
        }
        return v;
    }
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v;
}

int child_main(void)
{
    static struct victim_arg a;
    a.kind = fz_arg("kind", V_EXIT);
    a.seed = fz_arg("seed", 1);
    a.h[0] = start_handle("a");
    a.h[1] = start_handle("b");
    victim_entry(&a);
}

static int echo_main(void)
{
    uint32_t ep = start_handle("ep");
    struct petrel_msg m = { 0 };
    int64_t r = sys_ipc_recv(ep, &m);
    while (r == 0) {
        unsigned len = MSG_LEN(m.info);
        for (unsigned i = 0; i < len; i++) {
            if (i < MSG_REG_MRS)
                m.mr[i] = ~m.mr[i];
            else
                utcb()->mr[i] = ~utcb()->mr[i];
        }
        bool quit = MSG_LABEL(m.info) == 0x1ff;
        m.info = MSG_INFO(MSG_LABEL(m.info) + 1, len, 0);
        if (quit) {
            sys_ipc_reply(0, &m);
            return 0;
        }
        r = sys_ipc_reply_recv(ep, &m);
    }
    return 1;
}

/* A process with a child process that has a thread (repro
 * kill-leaves-children): says so on "ep", then waits. */
static int nest_main(void)
{
    int64_t sp = sys_space_create();
    int64_t t = sp > 0 ? sys_thread_create((uint32_t)sp, 0x4000000000ull) : sp;
    struct petrel_msg m = { MSG_INFO(1, 2, 0), { (uint64_t)sp, (uint64_t)t }, 0, 0 };
    sys_ipc_call(start_handle("ep"), &m);
    int64_t n = sys_notify_create();
    for (;;)
        sys_notify_wait((uint32_t)n);
}

int main(const struct petrel_bootinfo *bi)
{
    char mode[16] = "";
    start_arg("mode", mode, sizeof(mode));
    if (!startinfo())
        return driver_main(bi);
    if (!strcmp(mode, "worker"))
        return worker_main();
    if (!strcmp(mode, "child"))
        return child_main();
    if (!strcmp(mode, "echo"))
        return echo_main();
    if (!strcmp(mode, "nest"))
        return nest_main();
    printf("sfuzz: unknown mode \"%s\"\n", mode);
    return 1;
}
