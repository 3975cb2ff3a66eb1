/*
 * The pieces of TCP's retransmission that are arithmetic on sequence
 * numbers and times, kept apart from the stack so that they can be
 * checked against their RFCs on the host (tests/host/test_tcp_rtx.py):
 *
 * - the retransmission timeout (RFC 6298): the smoothed RTT and its
 *   variation from samples, the timeout from them, doubled per expiry;
 * - the SACK scoreboard of RFC 6675: which bytes above SND.UNA the peer
 *   has said it holds (RFC 2018 blocks), whether a hole counts as lost
 *   (IsLost), how many bytes are in the network (SetPipe) and which hole
 *   to retransmit next (NextSeg, its rules 1 and 3: rule 2, new data, and
 *   rule 4, the rescue retransmission, are the sender's).
 *
 * Sequence numbers wrap at 2^32: compared by the sign of their difference
 * (RFC 9293's modular arithmetic). Integer arithmetic only: the stack may
 * run inside the kernel.
 */
#ifndef PETREL_TCP_RTX_H
#define PETREL_TCP_RTX_H

#include <stdint.h>

static inline int seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline uint32_t seq_max(uint32_t a, uint32_t b) { return seq_lt(a, b) ? b : a; }
static inline uint32_t seq_min(uint32_t a, uint32_t b) { return seq_lt(a, b) ? a : b; }

/* ---------------------------------------------------------------- RFC 6298 */

#define TCP_RTO_INITIAL_US  1000000u    /* before the first sample (RFC 6298 2.1) */
#define TCP_RTO_MIN_US      200000u     /* Linux's TCP_RTO_MIN (RFC 6298 says 1 s; Linux is the oracle) */
#define TCP_RTO_MAX_US      120000000u  /* Linux's TCP_RTO_MAX (at least 60 s, RFC 6298 2.5) */
#define TCP_CLOCK_G_US      1000u       /* the clock's granularity G: the stack's timer resolution */

struct tcp_rto {
    uint32_t srtt_us, rttvar_us;        /* 0, 0 before the first sample */
    uint32_t base_us;                   /* the timeout the samples give (before backing off) */
    uint32_t rto_us;                    /* the timeout now: base_us doubled per expiry since the last sample */
    uint8_t backoffs;
};

void tcp_rto_init(struct tcp_rto *r);
/* A measured round trip (RFC 6298 2.2, 2.3; Karn: never of a retransmitted
 * segment unless timestamps tell which one was answered): the timeout is
 * recomputed and its backing off ends. */
void tcp_rto_sample(struct tcp_rto *r, uint32_t rtt_us);
/* The timer expired (RFC 6298 5.5): the timeout doubles, up to TCP_RTO_MAX_US. */
void tcp_rto_backoff(struct tcp_rto *r);

/* ---------------------------------------------------------------- RFC 6675 */

#define TCP_SB_BLOCKS   32u             /* SACKed ranges kept (the oldest holes' first) */
#define TCP_DUPTHRESH   3u

/* The bytes above SND.UNA the peer holds: disjoint ranges [start, end),
 * sorted, none touching another. */
struct tcp_sb {
    uint32_t n;
    uint32_t start[TCP_SB_BLOCKS], end[TCP_SB_BLOCKS];
};

void tcp_sb_clear(struct tcp_sb *sb);
/* SND.UNA moved to una: ranges below it go. Returns the bytes below una
 * that were SACKed (already delivered, as the peer told). */
uint32_t tcp_sb_ack(struct tcp_sb *sb, uint32_t una);
/* A SACK block [start, end) of an ACK (RFC 2018) when SND.UNA is una and
 * SND.MAX (the highest sent) is max: taken if it lies inside (una, max];
 * returns the bytes it SACKed that were not SACKed before. With no room
 * for another range the one highest up goes (the holes nearest SND.UNA
 * are the ones to repair). */
uint32_t tcp_sb_add(struct tcp_sb *sb, uint32_t una, uint32_t max, uint32_t start, uint32_t end);
/* Is the byte at seq SACKed? */
int tcp_sb_has(const struct tcp_sb *sb, uint32_t seq);
/* Bytes SACKed in all. */
uint32_t tcp_sb_bytes(const struct tcp_sb *sb);
/* RFC 6675 IsLost(seq): DupThresh discontiguous SACKed ranges lie above
 * seq, or more than (DupThresh - 1) * SMSS SACKed bytes do. */
int tcp_sb_is_lost(const struct tcp_sb *sb, uint32_t seq, uint32_t mss);
/* RFC 6675 SetPipe: of the bytes from una to nxt not SACKed, each counts
 * once unless it is lost (IsLost of its segment), and once more if it was
 * retransmitted (below high_rxt). Segments are of mss bytes from una. */
uint32_t tcp_sb_pipe(const struct tcp_sb *sb, uint32_t una, uint32_t nxt, uint32_t high_rxt, uint32_t mss);
/* RFC 6675 NextSeg, rules 1 and 3: the first byte to retransmit from,
 * above high_rxt and below the highest SACKed byte, not SACKed; by rule 1
 * only if it is lost, by rule 3 (when rule 1 finds none and there is no
 * new data to send: `rule3`) whatever. *len: how much (up to mss, to the
 * next SACKed range). 0 if there is none; 1 and *seq set if there is. */
int tcp_sb_next_seg(const struct tcp_sb *sb, uint32_t una, uint32_t high_rxt, uint32_t mss, int rule3,
                    uint32_t *seq, uint32_t *len);

#endif
