/*
 * The trace area: what the kernel records tracepoints into and what every
 * reader sees, the same bytes whether read by the kernel, by a service in
 * either placement (mapped read-only, trace_map), or by the host (QEMU's
 * pmemsave of its physical pages, tools/petrel/trace.py).
 *
 * One header page, then one ring per core of `slots` 64-byte records (a
 * power of two). Only its own core writes a ring, with interrupts masked,
 * so a ring has one writer and needs no lock. A ring never blocks and never
 * refuses: the newest event overwrites the oldest, and a reader, who keeps
 * its own place (the core's event number it reads next), learns exactly how
 * many it missed. A record's `seq` is its event number + 1, written last
 * (0 while it is written): a reader that copied a record and finds `seq`
 * unchanged afterwards holds a whole record.
 */
#ifndef PETREL_TRACE_ABI_H
#define PETREL_TRACE_ABI_H

#include <stdint.h>

#define TRACE_MAGIC      0x43525450u    /* "PTRC" */
#define TRACE_VERSION    1
#define TRACE_MAX_CPUS   8
#define TRACE_MAX_POINTS 256            /* ids 0..255: bits of `enabled` */
#define TRACE_ARGS       5
#define TRACE_HEADER     4096           /* the rings start a page in */

struct trace_record {
    uint64_t seq;               /* event number on its core + 1; 0: being written or never */
    uint64_t time;              /* the generic timer's count (`freq` a second) */
    uint16_t id;                /* the tracepoint (idl/tracepoints.toml) */
    uint16_t cpu;
    uint32_t pid;               /* the process whose thread ran (0: none, the kernel's own) */
    uint64_t arg[TRACE_ARGS];
};

struct trace_core {
    uint64_t head;              /* events written on this core (the next one's number) */
    uint64_t pad[7];            /* a cache line each */
};

struct trace_area {
    uint32_t magic;
    uint32_t version;
    uint32_t ncpus;             /* rings */
    uint32_t slots;             /* records per ring, a power of two */
    uint64_t freq;              /* counter ticks per second */
    uint64_t enabled[TRACE_MAX_POINTS / 64];    /* bit id: the tracepoint records */
    uint64_t pad[9];
    struct trace_core core[TRACE_MAX_CPUS];     /* at offset 128 (tools/petrel/trace.py reads it there) */
};

/* An event a user-placed service hands the kernel in a group
 * (trace_emit_many): stamped by the service when it happened, with the
 * generic timer's count as the kernel stamps its own. */
struct trace_event {
    uint64_t time;
    uint32_t id;
    uint32_t pad;
    uint64_t arg[TRACE_ARGS];
};
#define TRACE_EMIT_MAX 32               /* events one trace_emit_many takes */

_Static_assert(sizeof(struct trace_record) == 64, "a record is 64 bytes");
_Static_assert(__builtin_offsetof(struct trace_record, cpu) == 18 && __builtin_offsetof(struct trace_record, pid) == 20,
               "id, cpu and pid in one word, in that order (little-endian: trace.c writes them at once)");
_Static_assert(sizeof(struct trace_area) <= TRACE_HEADER, "the header fits its page");
_Static_assert(__builtin_offsetof(struct trace_area, core) == 128, "the cores' heads at offset 128");

static inline struct trace_record *trace_ring(const struct trace_area *a, unsigned cpu)
{
    return (struct trace_record *)((uintptr_t)a + TRACE_HEADER) + (uint64_t)cpu * a->slots;
}

static inline int trace_point_enabled(const struct trace_area *a, unsigned id)
{
    return id < TRACE_MAX_POINTS && (__atomic_load_n(&a->enabled[id / 64], __ATOMIC_RELAXED) >> (id % 64) & 1);
}

/*
 * A reader: its place in each core's ring and what it missed. Start it
 * with trace_reader_init (from the oldest event the rings hold, or, with
 * `from_now`, from the next one), then take events with trace_reader_next
 * in time order across cores.
 */
struct trace_reader {
    const struct trace_area *area;
    uint64_t next[TRACE_MAX_CPUS];      /* per core: the event number it reads next */
    uint64_t stop[TRACE_MAX_CPUS];      /* per core: where it stops (trace_reader_bound; ~0: nowhere) */
    uint64_t lost;                      /* events overwritten before it read them */
    /* a record of each core read ahead, to merge the cores by time */
    struct trace_record ahead[TRACE_MAX_CPUS];
    uint8_t have[TRACE_MAX_CPUS];
};

/* 0, or -1 if `a` is not a trace area this code reads. */
int trace_reader_init(struct trace_reader *r, const struct trace_area *a, int from_now);
/* The next event in time order into *out: 1, or 0 if none is there yet. */
int trace_reader_next(struct trace_reader *r, struct trace_record *out);
/* Stop at the events the rings hold now: a reader of busy rings then ends
 * its work (at most a ring a core) instead of chasing the writers. */
void trace_reader_bound(struct trace_reader *r);

#endif
