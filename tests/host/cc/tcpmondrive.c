/* Host driver of /proc/net/tcpmon's printer (services/linux/tcpmon.c,
 * built for this machine): reads a copy of a trace area from the file
 * argv[1], opens the log as a Linux program would and prints what reads of
 * argv[2] bytes at a time give, so that tests/host/test_trace.py compares
 * each line with ./petrel trace's line of the same event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lx.h"
#include "svc_trace.h"

static uint64_t mem[1 << 20];
static const struct trace_area *area;

const struct trace_area *svc_trace_area(void) { return area; }
void *lx_alloc(size_t size) { return calloc(1, size); }
void lx_free(void *p, size_t size) { (void)size; free(p); }

int main(int argc, char **argv)
{
    FILE *f = argc > 2 ? fopen(argv[1], "rb") : NULL;
    if (!f || fread(mem, 1, sizeof(mem), f) < TRACE_HEADER)
        return 2;
    fclose(f);
    area = (const struct trace_area *)mem;
    struct lx_file file;
    memset(&file, 0, sizeof(file));
    char buf[4096];
    size_t chunk = (size_t)atoi(argv[2]);
    if (chunk < 1 || chunk > sizeof(buf))
        return 2;
    for (;;) {
        int64_t n = lx_tcpmon_read(&file, buf, chunk);
        if (n < 0)
            return 3;
        if (n == 0)
            break;
        fwrite(buf, 1, (size_t)n, stdout);
    }
    lx_tcpmon_close(&file);
    return 0;
}
