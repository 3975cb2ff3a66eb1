/*
 * A driver for lib/tcp_rtx.c on the host (tests/host/test_tcp_rtx.py):
 * reads one command a line from stdin and prints one line of results.
 *
 *   rto_init | rto_sample US | rto_backoff     -> srtt rttvar rto
 *   sb_clear | sb_ack UNA | sb_add UNA MAX S E -> added n start end ...
 *   sb_lost SEQ MSS                            -> 0 or 1
 *   sb_pipe UNA NXT HIGH_RXT MSS               -> pipe
 *   sb_next UNA HIGH_RXT MSS RULE3             -> found seq len
 */
#include <stdio.h>
#include <string.h>

#include "tcp_rtx.h"

static struct tcp_rto rto;
static struct tcp_sb sb;

static void ranges(unsigned added)
{
    printf("%u %u", added, sb.n);
    for (unsigned i = 0; i < sb.n; i++)
        printf(" %u %u", sb.start[i], sb.end[i]);
    printf("\n");
}

int main(void)
{
    char cmd[32];
    unsigned a, b, c, d;
    tcp_rto_init(&rto);
    tcp_sb_clear(&sb);
    while (scanf("%31s", cmd) == 1) {
        if (!strcmp(cmd, "rto_init")) {
            tcp_rto_init(&rto);
        } else if (!strcmp(cmd, "rto_sample") && scanf("%u", &a) == 1) {
            tcp_rto_sample(&rto, a);
        } else if (!strcmp(cmd, "rto_backoff")) {
            tcp_rto_backoff(&rto);
        } else if (!strcmp(cmd, "sb_clear")) {
            tcp_sb_clear(&sb);
            ranges(0);
            continue;
        } else if (!strcmp(cmd, "sb_ack") && scanf("%u", &a) == 1) {
            tcp_sb_ack(&sb, a);
            ranges(0);
            continue;
        } else if (!strcmp(cmd, "sb_add") && scanf("%u %u %u %u", &a, &b, &c, &d) == 4) {
            ranges(tcp_sb_add(&sb, a, b, c, d));
            continue;
        } else if (!strcmp(cmd, "sb_lost") && scanf("%u %u", &a, &b) == 2) {
            printf("%d\n", tcp_sb_is_lost(&sb, a, b));
            continue;
        } else if (!strcmp(cmd, "sb_pipe") && scanf("%u %u %u %u", &a, &b, &c, &d) == 4) {
            printf("%u\n", tcp_sb_pipe(&sb, a, b, c, d));
            continue;
        } else if (!strcmp(cmd, "sb_next") && scanf("%u %u %u %u", &a, &b, &c, &d) == 4) {
            unsigned seq = 0, len = 0;
            int found = tcp_sb_next_seg(&sb, a, b, c, (int)d, &seq, &len);
            printf("%d %u %u\n", found, found ? seq : 0, found ? len : 0);
            continue;
        } else {
            printf("bad command %s\n", cmd);
            return 1;
        }
        printf("%u %u %u\n", rto.srtt_us, rto.rttvar_us, rto.rto_us);
    }
    return 0;
}
