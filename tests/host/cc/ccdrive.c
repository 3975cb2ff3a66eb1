/* Drives lib/tcp_cc.c on the host for tests/host/test_tcp_cc.py: one
 * command a line on stdin, cwnd and ssthresh printed after each.
 *   start NAME MSS | ack ACKED RTT_US SRTT_US SND_UNA SND_NXT NOW_US |
 *   dlv ACKED RTT_US FINE NOW_US (delivered in recovery: no ack()) |
 *   cong FLIGHT NOW_US | rec FLIGHT | rto FLIGHT NOW_US | cbrt X | iw MSS
 * (an "ack" line's RTT is fine: timed to the microsecond) */
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include "tcp_cc.h"

int main(void)
{
    struct tcp_cc cc;
    char line[256], name[32];
    memset(&cc, 0, sizeof(cc));
    while (fgets(line, sizeof(line), stdin)) {
        unsigned long long a, b, c, d, e, f;
        if (sscanf(line, "start %31s %llu", name, &a) == 2) {
            const struct tcp_cc_ops *ops = tcp_cc_find(name);
            if (!ops) {
                printf("no module %s\n", name);
                continue;
            }
            tcp_cc_start(&cc, ops, (uint32_t)a);
        } else if (sscanf(line, "ack %llu %llu %llu %llu %llu %llu", &a, &b, &c, &d, &e, &f) == 6) {
            struct tcp_cc_ack k = { (uint32_t)a, (uint32_t)b, (uint32_t)c, (uint32_t)d, (uint32_t)e, f, 1 };
            if (cc.ops->delivered)                      /* (as the stack calls them outside recovery) */
                cc.ops->delivered(&cc, &k);
            cc.ops->ack(&cc, &k);
        } else if (sscanf(line, "dlv %llu %llu %llu %llu", &a, &b, &c, &d) == 4) {
            struct tcp_cc_ack k = { (uint32_t)a, (uint32_t)b, 0, 0, 0, d, (uint8_t)c };
            if (cc.ops->delivered)
                cc.ops->delivered(&cc, &k);
        } else if (sscanf(line, "cong %llu %llu", &a, &b) == 2) {
            cc.ops->congestion(&cc, (uint32_t)a, b);
        } else if (sscanf(line, "rec %llu", &a) == 1) {
            cc.ops->recovered(&cc, (uint32_t)a);
        } else if (sscanf(line, "rto %llu %llu", &a, &b) == 2) {
            cc.ops->timeout(&cc, (uint32_t)a, b);
        } else if (sscanf(line, "cbrt %llu", &a) == 1) {
            printf("%" PRIu64 "\n", tcp_cc_cbrt(a));
            continue;
        } else if (sscanf(line, "iw %llu", &a) == 1) {
            printf("%u\n", tcp_cc_initial_window((uint32_t)a));
            continue;
        } else {
            printf("bad command: %s", line);
            continue;
        }
        printf("%u %u\n", cc.cwnd, cc.ssthresh);
    }
    return 0;
}
