/* Host driver of the trace reader (lib/trace_read.c): reads a copy of a
 * trace area from the file argv[1] and prints each event it gives, in
 * order ("cpu seq time id"), then "lost N"; "bad" if the reader refuses
 * the area. argv[2] "now" starts the reader at the newest event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_abi.h"

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    if (!f)
        return 2;
    static uint64_t mem[1 << 20];               /* 8 MiB, aligned as the guest's pages are */
    size_t n = fread(mem, 1, sizeof(mem), f);
    fclose(f);
    if (n < TRACE_HEADER)
        return 2;
    struct trace_reader r;
    if (trace_reader_init(&r, (const struct trace_area *)mem, argc > 2 && !strcmp(argv[2], "now")) != 0) {
        puts("bad");
        return 0;
    }
    struct trace_record e;
    while (trace_reader_next(&r, &e))
        printf("%u %lu %lu %u\n", e.cpu, (unsigned long)e.seq, (unsigned long)e.time, e.id);
    printf("lost %lu\n", (unsigned long)r.lost);
    return 0;
}
