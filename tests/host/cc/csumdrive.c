/* The host's driver of lib/inet_csum.c for tests/host/test_inet_csum.py:
 * each stdin line "OFFSET SUM HEX" is checksummed at OFFSET bytes into
 * an 8-aligned buffer (every alignment), and the result printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inet_csum.h"

static _Alignas(8) uint8_t buf[70000];
static char line[140100];

int main(void)
{
    while (fgets(line, sizeof(line), stdin)) {
        unsigned off, sum;
        int at = 0;
        if (sscanf(line, "%u %u %n", &off, &sum, &at) != 2 || off > 16)
            return 2;
        uint32_t len = 0;
        for (char *h = line + at; h[0] && h[0] != '\n' && h[1]; h += 2) {
            char pair[3] = { h[0], h[1], 0 };
            buf[off + len++] = (uint8_t)strtoul(pair, NULL, 16);
        }
        printf("%u\n", inet_checksum(buf + off, len, sum));
    }
    return 0;
}
