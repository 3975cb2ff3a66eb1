/* Handle tables that grow and shrink: corepeer mode=handles fills its own
 * table to 100,000 handles and to the kernel's most, then meets its own
 * memory and handle limits; here we check each step of its report. */
#include "coretest.h"

#define HANDLES_MOST    ((1u << 18) - 1)    /* the kernel's HANDLE_MAX */

/* The next report of the peer (six words), answered at once. */
static bool step(uint32_t ep, uint64_t *v)
{
    struct petrel_msg m = { 0 };
    if (sys_ipc_recv(ep, &m) != 0 || MSG_LEN(m.info) != 6) {
        memset(v, 0, 6 * sizeof(*v));
        return false;
    }
    memcpy(v, m.mr, 6 * sizeof(*v));
    m.info = 0;
    sys_ipc_reply(0, &m);
    return true;
}

void test_handles(void)
{
    uint32_t ep = (uint32_t)sys_endpoint_create();
    struct spawn_grant g[] = { { "ep", ep, R_WRITE } };
    struct spawn_req req = { "corepeer", "mode=handles", 0, -1, g, 1, 0, 16u << 20, 0, 0, 0 };
    struct spawn_result r;
    int64_t err = spawn(&req, &r);
    uint64_t v[6];

    bool ok = !err && step(ep, v);
    tap_ok(ok && v[0] == 100000 && v[1] == 100000 && v[2] == 100000,
           "handles: a process holds 100,000 handles, each resolving (%lu made, %lu resolved, %lu counted)",
           (unsigned long)v[0], (unsigned long)v[1], (unsigned long)v[2]);
    /* 100,000 handles fill about 781 more pages of 128 slots, and a larger top level. */
    tap_ok(ok && v[3] >= 780 * 4096 && v[3] <= 800 * 4096 && v[4] == 0 && v[5] == 0,
           "handles: they are paid for as memory (%lu KiB), and closing them all gives it back (%lu bytes, %lu handles left)",
           (unsigned long)(v[3] >> 10), (unsigned long)(uint32_t)v[5], (unsigned long)(v[5] >> 32));

    ok = ok && step(ep, v);
    tap_ok(ok && (int64_t)v[0] == -E_NOMEM && v[1] == HANDLES_MOST && v[2] == 0 && v[3] == 0 && v[4] == 0,
           "handles: a table stops at %u handles with E_NOMEM (%s at %lu), and shrinks back (%lu bytes, %lu handles left)",
           HANDLES_MOST, error_str((int64_t)v[0]), (unsigned long)v[1], (unsigned long)v[3], (unsigned long)v[4]);

    ok = ok && step(ep, v);
    tap_ok(ok && (int64_t)v[0] > 0 && v[1] == 0 && v[2] == 1 && v[3] == 0 && v[4] == 0,
           "handles: a closed value (0x%lx) names nothing for the next 16,382 handles in its slot; the 16,383rd reuses it (%s)",
           (unsigned long)v[0], v[2] ? "yes" : "no");

    ok = ok && step(ep, v);
    tap_ok(ok && (int64_t)v[0] == -E_LIMIT && v[1] >= 256 && v[1] < 3 * 128 && v[2] <= 8192 && v[3] == 0 && v[4] == 0,
           "handles: two pages under its memory limit a process gets %lu handles, then %s; closing them gives the memory back",
           (unsigned long)v[1], error_str((int64_t)v[0]));

    ok = ok && step(ep, v);
    tap_ok(ok && (int64_t)v[0] == -E_LIMIT && v[1] == 200 && v[2] == 200 && v[3] == 0 && v[4] == 0,
           "handles: 200 handles under its handle limit a process gets %lu, then %s",
           (unsigned long)v[1], error_str((int64_t)v[0]));

    struct petrel_thread_stats st = { 0 };
    for (int i = 0; !err && i < 500 && st.state != THREAD_DEAD; i++) {
        sleep_ms(2);
        sys_thread_stats(r.thread, &st);
    }
    tap_ok(!err && st.state == THREAD_DEAD, "handles: the process then exits normally");
    if (!err) {
        sys_handle_close(r.thread);
        sys_handle_close(r.space);
    }
    sys_handle_close(ep);
}
