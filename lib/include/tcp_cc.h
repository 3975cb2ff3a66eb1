/*
 * TCP congestion control behind one small interface, in the manner of
 * Linux's tcp_congestion_ops: the stack tells a module what each ACK did,
 * when it detects a loss, when recovery ends and when the retransmission
 * timer fires; the module keeps cwnd and ssthresh (in bytes). How segments
 * are retransmitted during recovery (RFC 6675's pipe, or NewReno's window
 * inflation for a peer without SACK) is the stack's: a module sets
 * ssthresh and the window recovery starts from, and the window after it.
 *
 * Modules: "newreno" (RFC 5681 and RFC 6582), "cubic" (RFC 9438, with
 * HyStart++ of RFC 9406 in slow start), "westwood" (Westwood+: ssthresh
 * from the bandwidth estimate times the least RTT after a loss). Integer
 * arithmetic only: the stack may run inside the kernel.
 */
#ifndef PETREL_TCP_CC_H
#define PETREL_TCP_CC_H

#include <stdint.h>

/* What one ACK that acknowledged new data told the stack. */
struct tcp_cc_ack {
    uint32_t acked;             /* bytes newly acknowledged (cumulatively or by SACK) */
    uint32_t rtt_us;            /* an RTT sample it gave (0: none) */
    uint32_t srtt_us;           /* the smoothed RTT (RFC 6298) after it (0: none yet) */
    uint32_t snd_una, snd_nxt;  /* the send sequence after it: a round ends when snd_una passes
                                 * what snd_nxt was when the round began */
    uint64_t now_us;
    uint8_t rtt_fine;           /* rtt_us was timed to the microsecond (a segment's own send time), not from a
                                 * timestamp's echo, whose tick of 1 ms may put it nearly a tick low */
};

struct tcp_cc;

struct tcp_cc_ops {
    const char *name;
    /* A new connection: cwnd the initial window (RFC 6928), ssthresh "infinite". */
    void (*init)(struct tcp_cc *cc);
    /* New data acknowledged outside loss recovery: grow cwnd. */
    void (*ack)(struct tcp_cc *cc, const struct tcp_cc_ack *a);
    /* A loss detected by duplicate ACKs or SACK (fast retransmit): set
     * ssthresh, and cwnd to what recovery starts from. `flight`: the bytes
     * outstanding when it was detected. */
    void (*congestion)(struct tcp_cc *cc, uint32_t flight, uint64_t now_us);
    /* Recovery over (the ACK that covers the recovery point): set cwnd.
     * `flight`: bytes outstanding after that ACK. */
    void (*recovered)(struct tcp_cc *cc, uint32_t flight);
    /* The retransmission timer fired: set ssthresh and cwnd (1 segment). */
    void (*timeout)(struct tcp_cc *cc, uint32_t flight, uint64_t now_us);
    /* Any ACK that told of data delivered, in recovery too (outside it,
     * with ack() besides):
     * a->acked the bytes newly acknowledged cumulatively (not SACKed
     * before) and newly SACKed, so that each byte counts once. For a
     * module that measures the delivery rate; NULL: the module does not. */
    void (*delivered)(struct tcp_cc *cc, const struct tcp_cc_ack *a);
};

struct tcp_cc {
    const struct tcp_cc_ops *ops;
    uint32_t mss;               /* SMSS: bytes of payload in a full segment */
    uint32_t cwnd;              /* bytes */
    uint32_t ssthresh;          /* bytes */
    uint32_t ca_acked;          /* bytes acknowledged toward congestion avoidance's next SMSS (RFC 3465) */
    uint32_t event;             /* the module's own event in its last call (TCP_CC_EV_*; 0: none), which
                                 * the stack gives its monitor and clears */
    uint64_t event_a, event_b;
    uint64_t priv[16];          /* the module's own state */
};

/* A module's own events (idl/tracepoints.toml's tcp_cc_event, in this order). */
enum {
    TCP_CC_EV_NONE,
    TCP_CC_EV_CUBIC_EPOCH,      /* a congestion avoidance epoch began: a = W_max (bytes), b = K (ms) */
    TCP_CC_EV_HYSTART_CSS,      /* HyStart++ saw the RTT rise: a = this round's least RTT, b = the last's (us) */
    TCP_CC_EV_HYSTART_DONE,     /* HyStart++ left slow start: a = cwnd (= ssthresh now) */
    TCP_CC_EV_WESTWOOD_BW,      /* Westwood+'s bandwidth estimate: a = bytes a second, b = the least RTT (us) */
};

#define TCP_CC_INFINITE 0x7fffffffu

/* The modules, in the order /proc/sys/net/ipv4/tcp_available_congestion_control lists them. */
extern const struct tcp_cc_ops tcp_cc_newreno, tcp_cc_cubic, tcp_cc_westwood;
extern const struct tcp_cc_ops *const tcp_cc_modules[3];

/* The module called `name`, or NULL. */
const struct tcp_cc_ops *tcp_cc_find(const char *name);
/* Start cc with module ops for segments of mss bytes. */
void tcp_cc_start(struct tcp_cc *cc, const struct tcp_cc_ops *ops, uint32_t mss);

/* RFC 6928's initial window: min(10 SMSS, max(2 SMSS, 14,600 bytes)). */
uint32_t tcp_cc_initial_window(uint32_t mss);
/* Integer cube root (the largest r with r^3 <= x). */
uint64_t tcp_cc_cbrt(uint64_t x);

#endif
