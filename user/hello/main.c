/*
 * hello: a small client. It calls the echo server count=N times through
 * its "greeting" endpoint, prints each answer, and tells it to quit; then
 * it asks the noop service (wherever the system placed it) for a sum.
 */
#include "petrel.h"
#include "noop_if.h"

#define LABEL_TEXT  1
#define LABEL_QUIT  2

int main(void *info)
{
    uint32_t ep = start_handle("greeting");
    char count_s[8] = "1";
    start_arg("count", count_s, sizeof(count_s));
    unsigned count = (unsigned)(count_s[0] - '0');
    for (unsigned i = 1; ep && i <= count && count <= 9; i++) {
        struct petrel_msg m = { MSG_INFO(LABEL_TEXT, 6, 0), { 0 }, 0, 0 };
        snprintf((char *)m.mr, 40, "hello number %u, over IPC", i);
        int64_t err = sys_ipc_call(ep, &m);
        if (err) {
            printf("hello: call failed: %s\n", error_str(err));
            return 1;
        }
        printf("hello: echo (pid %lu) answered \"%s\" to pid %lu\n", (unsigned long)m.pid,
               (char *)m.mr, (unsigned long)m.mr[5]);
    }
    struct petrel_msg q = { MSG_INFO(LABEL_QUIT, 0, 0), { 0 }, 0, 0 };
    sys_ipc_call(ep, &q);
    uint32_t noop = start_handle("noop");
    uint64_t sum = 0;
    if (noop && noop_add(noop, 40, 2, &sum) == 0)
        printf("hello: the noop service says 40 + 2 = %lu\n", (unsigned long)sum);
    return 0;
}
