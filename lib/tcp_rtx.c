/*
 * TCP's retransmission arithmetic: RFC 6298's timeout and RFC 6675's SACK
 * scoreboard (lib/include/tcp_rtx.h says what each function does).
 */
#include "tcp_rtx.h"

/* ---------------------------------------------------------------- RFC 6298 */

static uint32_t clamp_rto(uint64_t us)
{
    return us < TCP_RTO_MIN_US ? TCP_RTO_MIN_US : us > TCP_RTO_MAX_US ? TCP_RTO_MAX_US : (uint32_t)us;
}

void tcp_rto_init(struct tcp_rto *r)
{
    r->srtt_us = r->rttvar_us = 0;
    r->base_us = r->rto_us = TCP_RTO_INITIAL_US;
    r->backoffs = 0;
}

void tcp_rto_sample(struct tcp_rto *r, uint32_t rtt_us)
{
    if (rtt_us == 0)
        rtt_us = 1;                     /* (0 is "no sample yet" in srtt_us) */
    if (!r->srtt_us) {                  /* 2.2: the first */
        r->srtt_us = rtt_us;
        r->rttvar_us = rtt_us / 2;
    } else {                            /* 2.3: beta 1/4, alpha 1/8; RTTVAR first, with the old SRTT */
        uint32_t diff = r->srtt_us > rtt_us ? r->srtt_us - rtt_us : rtt_us - r->srtt_us;
        r->rttvar_us = (uint32_t)(((uint64_t)r->rttvar_us * 3 + diff) / 4);
        r->srtt_us = (uint32_t)(((uint64_t)r->srtt_us * 7 + rtt_us) / 8);
    }
    uint64_t k = 4ull * r->rttvar_us;
    r->base_us = r->rto_us = clamp_rto((uint64_t)r->srtt_us + (k > TCP_CLOCK_G_US ? k : TCP_CLOCK_G_US));
    r->backoffs = 0;
}

void tcp_rto_backoff(struct tcp_rto *r)
{
    r->rto_us = clamp_rto((uint64_t)r->rto_us * 2);
    if (r->backoffs < 255)
        r->backoffs++;
}

/* ---------------------------------------------------------------- RFC 6675 */

void tcp_sb_clear(struct tcp_sb *sb)
{
    sb->n = 0;
}

static void drop(struct tcp_sb *sb, uint32_t i)
{
    for (uint32_t k = i; k + 1 < sb->n; k++) {
        sb->start[k] = sb->start[k + 1];
        sb->end[k] = sb->end[k + 1];
    }
    sb->n--;
}

uint32_t tcp_sb_ack(struct tcp_sb *sb, uint32_t una)
{
    uint32_t below = 0;
    while (sb->n && seq_le(sb->end[0], una)) {
        below += sb->end[0] - sb->start[0];
        drop(sb, 0);
    }
    if (sb->n && seq_lt(sb->start[0], una)) {
        below += una - sb->start[0];
        sb->start[0] = una;
    }
    return below;
}

uint32_t tcp_sb_add(struct tcp_sb *sb, uint32_t una, uint32_t max, uint32_t start, uint32_t end)
{
    if (!seq_lt(start, end) || seq_le(end, una) || seq_lt(max, end))
        return 0;                       /* empty, all below SND.UNA (old, or a D-SACK), or never sent */
    if (seq_lt(start, una))
        start = una;
    /* The ranges it overlaps or touches merge with it: [first, last). */
    uint32_t first = 0, covered = 0;
    while (first < sb->n && seq_lt(sb->end[first], start))
        first++;
    uint32_t last = first;
    while (last < sb->n && seq_le(sb->start[last], end)) {
        start = seq_min(start, sb->start[last]);
        end = seq_max(end, sb->end[last]);
        covered += sb->end[last] - sb->start[last];
        last++;
    }
    uint32_t added = (end - start) - covered;
    if (last > first) {                 /* one range in place of those */
        sb->start[first] = start;
        sb->end[first] = end;
        for (uint32_t k = first + 1; k < last; k++)
            drop(sb, first + 1);
        return added;
    }
    if (sb->n == TCP_SB_BLOCKS) {
        if (first == sb->n)
            return 0;                   /* above every range, and no room: the highest goes, itself */
        sb->n--;                        /* the highest goes */
    }
    for (uint32_t k = sb->n; k > first; k--) {
        sb->start[k] = sb->start[k - 1];
        sb->end[k] = sb->end[k - 1];
    }
    sb->start[first] = start;
    sb->end[first] = end;
    sb->n++;
    return added;
}

int tcp_sb_has(const struct tcp_sb *sb, uint32_t seq)
{
    for (uint32_t i = 0; i < sb->n; i++)
        if (seq_le(sb->start[i], seq) && seq_lt(seq, sb->end[i]))
            return 1;
    return 0;
}

uint32_t tcp_sb_bytes(const struct tcp_sb *sb)
{
    uint32_t b = 0;
    for (uint32_t i = 0; i < sb->n; i++)
        b += sb->end[i] - sb->start[i];
    return b;
}

/* IsLost for every byte of the hole below range i (all of a hole is above
 * the same ranges: i to the last). */
static int hole_lost(const struct tcp_sb *sb, uint32_t i, uint32_t mss)
{
    uint32_t bytes = 0;
    for (uint32_t k = i; k < sb->n; k++)
        bytes += sb->end[k] - sb->start[k];
    return sb->n - i >= TCP_DUPTHRESH || bytes > (TCP_DUPTHRESH - 1) * mss;
}

int tcp_sb_is_lost(const struct tcp_sb *sb, uint32_t seq, uint32_t mss)
{
    uint32_t i = 0, bytes = 0;
    while (i < sb->n && seq_le(sb->start[i], seq))
        i++;
    for (uint32_t k = i; k < sb->n; k++)
        bytes += sb->end[k] - sb->start[k];
    if (i > 0 && seq_lt(seq, sb->end[i - 1]))
        bytes += sb->end[i - 1] - (seq + 1);    /* (seq inside a range: that range's bytes above it) */
    return sb->n - i >= TCP_DUPTHRESH || bytes > (TCP_DUPTHRESH - 1) * mss;
}

/* The length of [a, b) ∩ [c, d) (0 if they do not meet). */
static uint32_t overlap(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t lo = seq_max(a, c), hi = seq_min(b, d);
    return seq_lt(lo, hi) ? hi - lo : 0;
}

uint32_t tcp_sb_pipe(const struct tcp_sb *sb, uint32_t una, uint32_t nxt, uint32_t high_rxt, uint32_t mss)
{
    uint32_t pipe = 0, from = una;
    for (uint32_t i = 0; i <= sb->n; i++) {         /* the hole below range i (i == n: above them all) */
        uint32_t to = i < sb->n ? sb->start[i] : nxt;
        uint32_t h0 = seq_max(from, una), h1 = seq_min(to, nxt);
        if (seq_lt(h0, h1)) {
            if (i == sb->n || !hole_lost(sb, i, mss))
                pipe += h1 - h0;
            pipe += overlap(h0, h1, una, high_rxt);
        }
        if (i < sb->n)
            from = sb->end[i];
    }
    return pipe;
}

int tcp_sb_next_seg(const struct tcp_sb *sb, uint32_t una, uint32_t high_rxt, uint32_t mss, int rule3,
                    uint32_t *seq, uint32_t *len)
{
    if (!sb->n)
        return 0;
    uint32_t from = una, lo = seq_max(una, high_rxt);
    for (int pass = 0; pass < (rule3 ? 2 : 1); pass++) {
        from = una;
        for (uint32_t i = 0; i < sb->n; i++) {      /* holes below the highest SACKed byte */
            uint32_t h0 = seq_max(from, lo), h1 = sb->start[i];
            from = sb->end[i];
            if (!seq_lt(h0, h1) || (pass == 0 && !hole_lost(sb, i, mss)))
                continue;
            *seq = h0;
            *len = h1 - h0 < mss ? h1 - h0 : mss;
            return 1;
        }
    }
    return 0;
}
