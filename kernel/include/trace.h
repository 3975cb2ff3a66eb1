/*
 * Tracepoints in the kernel (idl/tracepoints.toml, lib/include/trace_abi.h).
 * A tracepoint is `trace_<name>(fields)`: switched off, one load and one
 * branch; switched on, trace_record stores one record into this core's
 * ring; with CONFIG_TRACE=n, nothing at all.
 */
#ifndef PETREL_TRACE_H
#define PETREL_TRACE_H

#include "kernel.h"
#include "trace_abi.h"

/* The area's physical address (0: none), for the host's recorder. */
extern paddr_t trace_area_pa;

/* Bit id of word id/64: the tracepoint records (the header's `enabled`). */
extern uint64_t trace_mask[TRACE_MAX_POINTS / 64];

void trace_record(unsigned id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);

#define TRACE_HIT(id, a0, a1, a2, a3, a4)                                     \
    do {                                                                        \
        if (trace_mask[(id) / 64] >> ((id) % 64) & 1)                           \
            trace_record((id), (a0), (a1), (a2), (a3), (a4));                   \
    } while (0)

#include "trace_points.h"

/* Is either of tracepoints a and b (of one word of the mask) on? One test
 * for a pair of sites on a hot path, which then goes out of line. */
#define TRACE_EITHER(a, b)                                                      \
    (CONFIG_TRACE && (trace_mask[(a) / 64] & (1ull << ((a) % 64) | 1ull << ((b) % 64))))

/* Is tracepoint id on? (For a site that calls out of line itself.) */
#define TRACE_ON(id) (CONFIG_TRACE && (trace_mask[(id) / 64] >> ((id) % 64) & 1))

/* svc_request of a kernel-placed service's request (trace.c): out of line,
 * so that a site on the light and register entries is its test alone. */
void trace_ksvc_request(uint64_t label, uint32_t client_pid);

/* The rings, sized for the cores the device tree names; then the groups
 * the boot argument trace=GROUP,... names are switched on. */
void trace_init(void);
/* The area, or NULL (no tracing: CONFIG_TRACE=n or no memory for it). */
struct trace_area *trace_area(void);
/* Switch the tracepoints of `list` (group names, comma-separated; "all")
 * on; -E_INVAL naming no group. */
int trace_enable_list(const char *list);
/* enabled[word] = (enabled[word] & ~clear) | set, over the tracepoints that exist. */
int trace_set(unsigned word, uint64_t set, uint64_t clear);

#endif
