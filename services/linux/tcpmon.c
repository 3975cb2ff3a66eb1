/*
 * /proc/net/tcpmon: the Kernel Monitor's log of Petrel's TCP, read from the
 * monitor's rings (svc_trace_area, lib/include/trace_abi.h), one line per
 * event of the tcp group: time, connection, event, cwnd, ssthresh, the
 * rest. tools/petrel/trace.py prints the same lines from a host recording.
 *
 * Each open file is a reader of its own: its first read starts at the
 * oldest event the rings still hold, and every read goes on from where the
 * last stopped (whole lines only), so `cat` prints what is held and ends,
 * and a program that reads again later gets only what came since. Events
 * the rings overwrote before the reader came to them show as one line
 * "lost N". The rings are never waited for and never written: a reader
 * that never reads costs the traced system nothing.
 */
#include "lx.h"
#include "format.h"
#include "svc_trace.h"

#define LINE_MAX_LEN 160

struct lx_tcpmon {
    struct trace_reader r;
    int started;                        /* the reader was set on the rings (0: there are none) */
    uint64_t lost_told;                 /* of r.lost, what a "lost" line has said */
    struct trace_record held;           /* the event after a "lost" line, to say next */
    int have_held;
    uint32_t line_len, line_off;        /* a line made and not all read yet */
    char line[LINE_MAX_LEN];
};

static const char *const why_names[] = { "init", "ack", "dupack", "sack", "timeout", "recovered", "local", "module" };
static const char *const state_names[] = { "none", "established", "syn_sent", "syn_received", "fin_wait_1",
                                           "fin_wait_2", "time_wait", "closed", "close_wait", "last_ack", "listen",
                                           "closing" };

static const char *name_of(const char *const *names, unsigned n, uint64_t v)
{
    return v < n ? names[v] : "?";
}

#define NAME(table, v) name_of(table, sizeof(table) / sizeof(table[0]), (v))

static int put(char *buf, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));

static int put(char *buf, size_t size, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = fmt_vsnprintf(buf, size, f, ap);
    va_end(ap);
    return n < (int)size ? n : (int)size - 1;
}

/* The event's line into m->line: its length, or 0 for an event of
 * another group (no line). */
static uint32_t make_line(struct lx_tcpmon *m, const struct trace_record *e)
{
    const uint64_t *a = e->arg;
    char cwnd[12] = "-", ssthresh[12] = "-", detail[96];
    const char *event;
    switch (e->id) {
    case TP_TCP_CWND:
        event = NAME(why_names, a[1]);
        put(cwnd, sizeof(cwnd), "%u", (unsigned)a[2]);
        if (a[3] >= 0x7fffffffu)
            put(ssthresh, sizeof(ssthresh), "inf");
        else
            put(ssthresh, sizeof(ssthresh), "%u", (unsigned)a[3]);
        put(detail, sizeof(detail), "flight=%u", (unsigned)a[4]);
        break;
    case TP_TCP_RTT:
        event = "rtt";
        put(detail, sizeof(detail), "sample=%uus srtt=%uus rttvar=%uus rto=%ums", (unsigned)a[1], (unsigned)a[2],
            (unsigned)a[3], (unsigned)a[4]);
        break;
    case TP_TCP_STATE:
        event = "state";
        put(detail, sizeof(detail), "%s>%s ports=%u>%u", NAME(state_names, a[1]), NAME(state_names, a[2]),
            (unsigned)a[3], (unsigned)a[4]);
        break;
    case TP_TCP_DUPACK:
        event = "dup_ack";
        put(detail, sizeof(detail), "n=%u ack=0x%x sacked=%u", (unsigned)a[1], (unsigned)a[2], (unsigned)a[3]);
        break;
    case TP_TCP_RETRANSMIT:
        event = "retransmit";
        put(detail, sizeof(detail), "seq=0x%x len=%u why=%s", (unsigned)a[1], (unsigned)a[2], NAME(why_names, a[3]));
        break;
    case TP_TCP_WINDOW:
        event = "rwnd";
        put(detail, sizeof(detail), "rwnd=%u flight=%u", (unsigned)a[1], (unsigned)a[2]);
        break;
    case TP_TCP_RCVBUF:
        event = "rcvbuf";
        put(detail, sizeof(detail), "size=%u grown=%u", (unsigned)a[1], (unsigned)a[2]);
        break;
    default:
        return 0;
    }
    uint64_t freq = m->r.area->freq ? m->r.area->freq : 1;
    return (uint32_t)put(m->line, sizeof(m->line), "%6lu.%09lu %5u  %-11s %8s %8s  %s\n",
                         (unsigned long)(e->time / freq), (unsigned long)((e->time % freq) * 1000000000ull / freq),
                         (unsigned)a[0], event, cwnd, ssthresh, detail);
}

static const char header[] = "#       time  conn  event           cwnd ssthresh  detail\n";

/* The next line to read into m->line: its length (0: none yet). Events
 * lost before an event are said in a line of their own before its. */
static uint32_t next_line(struct lx_tcpmon *m)
{
    struct trace_record e;
    for (;;) {
        if (m->have_held) {
            e = m->held;
            m->have_held = 0;
        } else if (!m->started || !trace_reader_next(&m->r, &e)) {
            return 0;
        }
        if (m->r.lost != m->lost_told) {
            uint32_t n = (uint32_t)put(m->line, sizeof(m->line), "# lost %lu events (the rings overwrote them)\n",
                                       (unsigned long)(m->r.lost - m->lost_told));
            m->lost_told = m->r.lost;
            m->held = e;
            m->have_held = 1;
            return n;
        }
        uint32_t n = make_line(m, &e);
        if (n)
            return n;
    }
}

int64_t lx_tcpmon_read(struct lx_file *f, char *dst, uint64_t len)
{
    struct lx_tcpmon *m = f->mon;
    if (!m) {
        m = lx_alloc(sizeof(*m));
        if (!m)
            return -LX_ENOMEM;
        memset(m, 0, sizeof(*m));
        const struct trace_area *a = svc_trace_area();
        m->started = a && trace_reader_init(&m->r, a, 0) == 0;
        memcpy(m->line, header, sizeof(header) - 1);
        m->line_len = sizeof(header) - 1;
        f->mon = m;
    }
    if (m->started)
        trace_reader_bound(&m->r);              /* (a read ends at what the rings held when it began) */
    uint64_t done = 0;
    while (done < len) {
        if (m->line_off == m->line_len) {
            m->line_off = 0;
            m->line_len = next_line(m);
            if (!m->line_len)
                break;
        }
        uint64_t n = m->line_len - m->line_off < len - done ? m->line_len - m->line_off : len - done;
        memcpy(dst + done, m->line + m->line_off, n);
        m->line_off += (uint32_t)n;
        done += n;
    }
    return (int64_t)done;
}

void lx_tcpmon_close(struct lx_file *f)
{
    lx_free(f->mon, sizeof(struct lx_tcpmon));
    f->mon = NULL;
}
