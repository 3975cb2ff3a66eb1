/*
 * Tracepoints in a service's code, in either placement (idl/tracepoints.toml):
 * `trace_<name>(fields)` records an event if its tracepoint is on. Kernel-
 * placed, it stores into the core's ring as the kernel's own tracepoints
 * do; user-placed, it asks the kernel (trace_emit) with the monitor handle
 * the root task granted the service as "trace". Off, it costs a load of
 * the enabled bits and a branch; with CONFIG_TRACE=n, nothing.
 */
#ifndef PETREL_SVC_TRACE_H
#define PETREL_SVC_TRACE_H

#include <stdint.h>
#include "trace_abi.h"

/* The trace area's enabled bits, never NULL (all zero when nothing records). */
extern const uint64_t *svc_trace_enabled;

void svc_trace_record(unsigned id, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);

/* The trace area to read (trace_reader_init), or NULL when there is none
 * or this service was not granted it. */
const struct trace_area *svc_trace_area(void);

#ifndef TRACE_HIT       /* (the kernel's trace.h has its own: kernel/core/trace.c includes both) */
#define TRACE_HIT(id, a0, a1, a2, a3, a4)                                     \
    do {                                                                        \
        if (svc_trace_enabled[(id) / 64] >> ((id) % 64) & 1)                    \
            svc_trace_record((id), (a0), (a1), (a2), (a3), (a4));               \
    } while (0)
#endif

#include "trace_points.h"

#endif
