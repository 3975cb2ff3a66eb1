/*
 * TCP congestion control modules (tcp_cc.h): NewReno, CUBIC with
 * HyStart++, Westwood+. Windows are in bytes, times in microseconds
 * (CUBIC's curve in milliseconds), all in integers.
 */
#include "tcp_cc.h"

static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t max32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static uint32_t clamp_window(uint64_t w) { return w > TCP_CC_INFINITE ? TCP_CC_INFINITE : (uint32_t)w; }

uint32_t tcp_cc_initial_window(uint32_t mss)
{
    return min32(10 * mss, max32(2 * mss, 14600));
}

uint64_t tcp_cc_cbrt(uint64_t x)
{
    uint64_t lo = 0, hi = 2097152;              /* 2^21: (2^21)^3 = 2^63 > any x here */
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (mid * mid * mid <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void tcp_cc_start(struct tcp_cc *cc, const struct tcp_cc_ops *ops, uint32_t mss)
{
    for (unsigned i = 0; i < sizeof(cc->priv) / sizeof(cc->priv[0]); i++)
        cc->priv[i] = 0;
    cc->ops = ops;
    cc->mss = mss ? mss : 536;
    cc->event = 0;
    cc->ca_acked = 0;
    ops->init(cc);
}

/* ---------------------------------------------------------------- NewReno (RFC 5681, RFC 6582) */

/* A module's own event, for the stack's monitor (tcp_cc.h). */
static void note(struct tcp_cc *cc, uint32_t event, uint64_t a, uint64_t b)
{
    cc->event = event;
    cc->event_a = a;
    cc->event_b = b;
}

static void reno_init(struct tcp_cc *cc)
{
    cc->cwnd = tcp_cc_initial_window(cc->mss);
    cc->ssthresh = TCP_CC_INFINITE;
}

/* Slow start, RFC 5681 (2): cwnd += min(N, SMSS); congestion avoidance
 * by the bytes acknowledged (RFC 3465 2.1, as Linux's tcp_cong_avoid_ai):
 * cwnd += SMSS once a window's worth is acknowledged. Not (3)'s SMSS*SMSS/
 * cwnd an ACK: a receiver that acknowledges every second segment, or a
 * run of them at once, would slow the growth to a half or less. */
static void reno_grow(struct tcp_cc *cc, uint32_t acked)
{
    if (cc->cwnd < cc->ssthresh) {
        cc->cwnd = clamp_window((uint64_t)cc->cwnd + min32(acked, cc->mss));
        return;
    }
    cc->ca_acked += acked;
    if (cc->ca_acked >= cc->cwnd) {
        cc->ca_acked -= cc->cwnd;
        if (cc->ca_acked >= cc->cwnd)
            cc->ca_acked = 0;                   /* (one step an ACK, as RFC 3465 asks) */
        cc->cwnd = clamp_window((uint64_t)cc->cwnd + cc->mss);
    }
}

static void reno_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
    reno_grow(cc, a->acked);
}

/* RFC 5681 (4): ssthresh = max(FlightSize / 2, 2*SMSS); recovery starts
 * from it (RFC 6675; a NewReno peer's inflation is the stack's). */
static void reno_congestion(struct tcp_cc *cc, uint32_t flight, uint64_t now_us)
{
    (void)now_us;
    cc->ca_acked = 0;
    cc->ssthresh = max32(flight / 2, 2 * cc->mss);
    cc->cwnd = cc->ssthresh;
}

/* RFC 6582, 3.2 step 3, the first choice: min(ssthresh, max(FlightSize, SMSS) + SMSS). */
static void reno_recovered(struct tcp_cc *cc, uint32_t flight)
{
    cc->cwnd = min32(cc->ssthresh, max32(flight, cc->mss) + cc->mss);
}

/* RFC 5681 (4) and the loss window: one segment. */
static void reno_timeout(struct tcp_cc *cc, uint32_t flight, uint64_t now_us)
{
    (void)now_us;
    cc->ca_acked = 0;
    cc->ssthresh = max32(flight / 2, 2 * cc->mss);
    cc->cwnd = cc->mss;
}

const struct tcp_cc_ops tcp_cc_newreno = { "newreno", reno_init, reno_ack, reno_congestion, reno_recovered,
                                           reno_timeout, 0 };

/* ---------------------------------------------------------------- CUBIC (RFC 9438) with HyStart++ (RFC 9406) */

/* beta_cubic = 0.7 = 7/10; C = 0.4 segments/s^3; alpha_cubic = 3(1 - beta)/(1 + beta) = 9/17. */
enum {
    CU_WMAX, CU_K_MS, CU_EPOCH_US, CU_WEST, CU_PRIOR, CU_EPOCH_CWND,
    HS_STATE, HS_WINDOW_END, HS_LAST_MIN, HS_CUR_MIN, HS_SAMPLES, HS_CSS_BASE, HS_CSS_ROUNDS,
};
enum { HS_SLOW_START, HS_CSS, HS_DONE };
#define HS_NONE         UINT64_MAX
#define HS_MIN_THRESH   4000u           /* us */
#define HS_MAX_THRESH   16000u
#define HS_N_SAMPLE     8u
#define HS_CSS_DIVISOR  4u
#define HS_CSS_ROUNDS   5u
#define HS_L            8u              /* cwnd grows by at most L*SMSS an ACK (not paced) */
#define CU_T_MAX_MS     100000          /* the curve's time argument is bounded: 100 s */

static void cubic_init(struct tcp_cc *cc)
{
    reno_init(cc);
    cc->priv[HS_STATE] = HS_SLOW_START;
    cc->priv[HS_LAST_MIN] = cc->priv[HS_CUR_MIN] = cc->priv[HS_CSS_BASE] = HS_NONE;
    cc->priv[HS_WINDOW_END] = HS_NONE;          /* the first ACK starts the first round */
}

/* RFC 9438 (1): W_cubic(t) = C (t - K)^3 + W_max, in bytes, t in ms. */
static int64_t cubic_w(const struct tcp_cc *cc, int64_t t_ms)
{
    int64_t d = t_ms - (int64_t)cc->priv[CU_K_MS];
    if (d > CU_T_MAX_MS)
        d = CU_T_MAX_MS;
    if (d < -CU_T_MAX_MS)
        d = -CU_T_MAX_MS;
    return (int64_t)cc->priv[CU_WMAX] + 2 * (int64_t)cc->mss * d * d * d / 5000000000ll;
}

/* HyStart++ (RFC 9406, 4.2): a round ends when snd_una passes its end. */
static void hystart_round(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
    uint64_t *p = cc->priv;
    if (p[HS_WINDOW_END] != HS_NONE && (int32_t)(a->snd_una - (uint32_t)p[HS_WINDOW_END]) < 0)
        return;
    p[HS_WINDOW_END] = a->snd_nxt;
    p[HS_LAST_MIN] = p[HS_CUR_MIN];
    p[HS_CUR_MIN] = HS_NONE;
    p[HS_SAMPLES] = 0;
    if (p[HS_STATE] == HS_CSS && ++p[HS_CSS_ROUNDS] >= HS_CSS_ROUNDS) {
        p[HS_STATE] = HS_DONE;                      /* to congestion avoidance */
        cc->ssthresh = cc->cwnd;
        note(cc, TCP_CC_EV_HYSTART_DONE, cc->cwnd, 0);
    }
}

static void hystart_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
    uint64_t *p = cc->priv;
    hystart_round(cc, a);
    if (a->rtt_us) {
        if (a->rtt_us < p[HS_CUR_MIN])
            p[HS_CUR_MIN] = a->rtt_us;
        p[HS_SAMPLES]++;
    }
    uint32_t grow = min32(a->acked, HS_L * cc->mss);
    if (p[HS_STATE] == HS_SLOW_START) {
        cc->cwnd = clamp_window((uint64_t)cc->cwnd + grow);
        if (p[HS_SAMPLES] >= HS_N_SAMPLE && p[HS_CUR_MIN] != HS_NONE && p[HS_LAST_MIN] != HS_NONE) {
            uint64_t thresh = p[HS_LAST_MIN] / 8;
            thresh = thresh < HS_MIN_THRESH ? HS_MIN_THRESH : thresh > HS_MAX_THRESH ? HS_MAX_THRESH : thresh;
            if (p[HS_CUR_MIN] >= p[HS_LAST_MIN] + thresh) {
                p[HS_STATE] = HS_CSS;               /* the RTT went up: conservative slow start */
                p[HS_CSS_BASE] = p[HS_CUR_MIN];
                p[HS_CSS_ROUNDS] = 0;
                note(cc, TCP_CC_EV_HYSTART_CSS, p[HS_CUR_MIN], p[HS_LAST_MIN]);
            }
        }
    } else {
        cc->cwnd = clamp_window((uint64_t)cc->cwnd + grow / HS_CSS_DIVISOR);
        if (p[HS_SAMPLES] >= HS_N_SAMPLE && p[HS_CUR_MIN] < p[HS_CSS_BASE]) {
            p[HS_STATE] = HS_SLOW_START;            /* it was a spurious rise: back to slow start */
            p[HS_CSS_BASE] = HS_NONE;
        }
    }
}

static void cubic_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
    uint64_t *p = cc->priv;
    if (cc->cwnd < cc->ssthresh) {
        if (p[HS_STATE] != HS_DONE) {
            hystart_ack(cc, a);
            return;
        }
        reno_grow(cc, a->acked);                    /* slow start after a timeout: RFC 5681's */
        return;
    }
    if (!p[CU_EPOCH_US]) {                          /* the first ACK of a congestion avoidance stage */
        p[CU_EPOCH_US] = a->now_us ? a->now_us : 1;
        p[CU_EPOCH_CWND] = cc->cwnd;
        if (p[CU_WMAX] <= cc->cwnd) {
            p[CU_WMAX] = cc->cwnd;
            p[CU_K_MS] = 0;
        } else {                                    /* (2): K = cbrt((W_max - cwnd_epoch) / C) */
            p[CU_K_MS] = tcp_cc_cbrt((p[CU_WMAX] - cc->cwnd) * 5000000000ull / (2ull * cc->mss));
        }
        p[CU_WEST] = cc->cwnd;
        note(cc, TCP_CC_EV_CUBIC_EPOCH, p[CU_WMAX], p[CU_K_MS]);
    }
    int64_t t_ms = (int64_t)((a->now_us - p[CU_EPOCH_US]) / 1000);
    uint32_t rtt = a->srtt_us ? a->srtt_us : a->rtt_us;
    /* (4): W_est grows by alpha_cubic segments a window (1 once past cwnd_prior). */
    uint64_t num = p[CU_WEST] >= p[CU_PRIOR] ? 1 : 9, den = p[CU_WEST] >= p[CU_PRIOR] ? 1 : 17;
    p[CU_WEST] += num * a->acked * cc->mss / (den * cc->cwnd);
    if (cubic_w(cc, t_ms) < (int64_t)p[CU_WEST]) {
        cc->cwnd = clamp_window(p[CU_WEST]);        /* the Reno-friendly region */
        return;
    }
    /* 4.4: target = W_cubic(t + RTT) within [cwnd, 1.5 cwnd]; cwnd += (target - cwnd) / cwnd a segment. */
    int64_t target = cubic_w(cc, t_ms + rtt / 1000);
    if (target < (int64_t)cc->cwnd)
        target = cc->cwnd;
    if (target > (int64_t)cc->cwnd * 3 / 2)
        target = (int64_t)cc->cwnd * 3 / 2;
    cc->cwnd = clamp_window(cc->cwnd + (uint64_t)(target - cc->cwnd) * a->acked / cc->cwnd);
}

/* 4.6 and 4.7: W_max (with fast convergence), ssthresh = flight * beta. */
static void cubic_reduce(struct tcp_cc *cc, uint32_t flight)
{
    cc->ca_acked = 0;
    uint64_t *p = cc->priv;
    p[CU_EPOCH_US] = 0;
    p[CU_WMAX] = cc->cwnd < p[CU_WMAX] ? (uint64_t)cc->cwnd * 17 / 20 : cc->cwnd;
    p[CU_PRIOR] = cc->cwnd;
    p[HS_STATE] = HS_DONE;
    cc->ssthresh = max32((uint32_t)((uint64_t)flight * 7 / 10), 2 * cc->mss);
}

static void cubic_congestion(struct tcp_cc *cc, uint32_t flight, uint64_t now_us)
{
    (void)now_us;
    cubic_reduce(cc, flight);
    cc->cwnd = cc->ssthresh;
}

static void cubic_recovered(struct tcp_cc *cc, uint32_t flight)
{
    (void)flight;
    cc->cwnd = cc->ssthresh;
}

/* 4.8: as a congestion event, then the loss window. */
static void cubic_timeout(struct tcp_cc *cc, uint32_t flight, uint64_t now_us)
{
    (void)now_us;
    cubic_reduce(cc, flight);
    cc->cwnd = cc->mss;
}

const struct tcp_cc_ops tcp_cc_cubic = { "cubic", cubic_init, cubic_ack, cubic_congestion, cubic_recovered,
                                         cubic_timeout, 0 };

/* ---------------------------------------------------------------- Westwood+ */

/* The bandwidth estimate (bytes a second) is sampled once an RTT (at least
 * 50 ms) from the bytes acknowledged meanwhile and filtered twice with
 * 7/8 of the old value and 1/8 of the new, as Linux's tcp_westwood does;
 * after a loss ssthresh is that estimate times the least RTT seen. */
enum { WW_BW_NS, WW_BW, WW_RTT_MIN, WW_WIN_START, WW_BK, WW_RTT, WW_RTT_MIN_COARSE };
#define WW_RTT_FLOOR    50000u

static void westwood_init(struct tcp_cc *cc)
{
    reno_init(cc);
    cc->priv[WW_RTT_MIN] = cc->priv[WW_RTT_MIN_COARSE] = UINT64_MAX;
}

static uint64_t ww_filter(uint64_t old, uint64_t sample) { return (7 * old + sample) / 8; }

/* Every byte delivered, in recovery too (as Linux's westwood_acked_count
 * counts duplicate ACKs), so that a sample spanning a recovery is not
 * low; the least RTT from samples timed to the microsecond only (a
 * timestamp's 1 ms tick would put it up to a tenth low at 10 ms, and
 * each loss would take a tenth more off the window than the path asks). */
static void westwood_delivered(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
    uint64_t *p = cc->priv;
    if (a->rtt_us) {
        p[WW_RTT] = a->rtt_us;
        if (a->rtt_fine && a->rtt_us < p[WW_RTT_MIN])
            p[WW_RTT_MIN] = a->rtt_us;
        if (a->rtt_us < p[WW_RTT_MIN_COARSE])
            p[WW_RTT_MIN_COARSE] = a->rtt_us;       /* (until a fine one comes) */
    }
    if (!p[WW_WIN_START])
        p[WW_WIN_START] = a->now_us ? a->now_us : 1;
    p[WW_BK] += a->acked;
    uint64_t delta = a->now_us - p[WW_WIN_START];
    if (p[WW_RTT] && delta > (p[WW_RTT] > WW_RTT_FLOOR ? p[WW_RTT] : WW_RTT_FLOOR)) {
        uint64_t sample = p[WW_BK] * 1000000 / delta;
        if (!p[WW_BW_NS] && !p[WW_BW]) {
            p[WW_BW_NS] = p[WW_BW] = sample;
        } else {
            p[WW_BW_NS] = ww_filter(p[WW_BW_NS], sample);
            p[WW_BW] = ww_filter(p[WW_BW], p[WW_BW_NS]);
        }
        p[WW_BK] = 0;
        p[WW_WIN_START] = a->now_us;
        note(cc, TCP_CC_EV_WESTWOOD_BW, p[WW_BW], p[WW_RTT_MIN] != UINT64_MAX ? p[WW_RTT_MIN] : p[WW_RTT_MIN_COARSE]);
    }
}

/* BWE x RTTmin, at least two segments. */
static uint32_t ww_ssthresh(const struct tcp_cc *cc)
{
    uint64_t rtt = cc->priv[WW_RTT_MIN] != UINT64_MAX ? cc->priv[WW_RTT_MIN] : cc->priv[WW_RTT_MIN_COARSE];
    uint64_t w = rtt == UINT64_MAX ? 0 : cc->priv[WW_BW] * rtt / 1000000;
    return max32(clamp_window(w), 2 * cc->mss);
}

static void westwood_congestion(struct tcp_cc *cc, uint32_t flight, uint64_t now_us)
{
    (void)flight, (void)now_us;
    cc->ca_acked = 0;
    cc->ssthresh = ww_ssthresh(cc);
    cc->cwnd = min32(cc->cwnd, cc->ssthresh);
}

static void westwood_recovered(struct tcp_cc *cc, uint32_t flight)
{
    (void)flight;
    cc->cwnd = cc->ssthresh;
}

static void westwood_timeout(struct tcp_cc *cc, uint32_t flight, uint64_t now_us)
{
    (void)flight, (void)now_us;
    cc->ca_acked = 0;
    cc->ssthresh = ww_ssthresh(cc);
    cc->cwnd = cc->mss;
}

const struct tcp_cc_ops tcp_cc_westwood = { "westwood", westwood_init, reno_ack, westwood_congestion,
                                            westwood_recovered, westwood_timeout, westwood_delivered };

const struct tcp_cc_ops *const tcp_cc_modules[3] = { &tcp_cc_newreno, &tcp_cc_cubic, &tcp_cc_westwood };

const struct tcp_cc_ops *tcp_cc_find(const char *name)
{
    for (unsigned i = 0; i < 3; i++) {
        const char *a = name, *b = tcp_cc_modules[i]->name;
        while (*a && *a == *b)
            a++, b++;
        if (!*a && !*b)
            return tcp_cc_modules[i];
    }
    return 0;
}
