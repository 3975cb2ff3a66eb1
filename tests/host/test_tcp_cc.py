"""TCP congestion control against its RFCs (lib/tcp_cc.c, lib/include/tcp_cc.h).

Each module is built for this machine with a small driver
(tests/host/cc/ccdrive.c) and fed a scripted sequence of ACKs, losses
and timeouts; after each step its cwnd and ssthresh are compared with
what the RFC's formulas give, computed here independently in floating
point: RFC 5681 and RFC 6582 for NewReno (exactly), RFC 9438 for CUBIC
and RFC 9406 for HyStart++ (within a segment: the module works in whole
bytes and milliseconds), and Westwood+'s bandwidth estimate times the
least RTT (within a segment)."""
import math
import shutil
import subprocess

import pytest

from conftest import REPO

MSS = 1460
INF = 0x7fffffff


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler for the host (./petrel setup installs clang)")
    exe = tmp_path_factory.mktemp("cc") / "ccdrive"
    subprocess.run([compiler, "-O1", "-Wall", "-Werror", "-I", str(REPO / "lib/include"), "-o", str(exe),
                    str(REPO / "tests/host/cc/ccdrive.c"), str(REPO / "lib/tcp_cc.c")], check=True)

    # Runs the commands; returns (cwnd, ssthresh) after each (or the printed value).
    def run(commands):
        out = subprocess.run([str(exe)], input="".join(c + "\n" for c in commands), capture_output=True,
                             text=True, timeout=30, check=True).stdout.split("\n")
        rows = [tuple(int(x) for x in line.split()) for line in out if line]
        assert len(rows) == len(commands), out
        return rows
    return run


def ack(acked, rtt=0, srtt=0, una=0, nxt=0, now=0):
    return f"ack {acked} {rtt} {srtt} {una} {nxt} {now}"


def test_initial_window_and_cube_root(drive):
    for mss in (536, 1000, 1460, 4000, 9000):
        assert drive([f"iw {mss}"]) == [(min(10 * mss, max(2 * mss, 14600)),)]      # RFC 6928
    for x in (0, 1, 7, 8, 26, 27, 28, 10 ** 6, 10 ** 15 + 7, 2 ** 62):
        r = round(x ** (1 / 3))
        while r ** 3 > x:
            r -= 1
        while (r + 1) ** 3 <= x:
            r += 1
        assert drive([f"cbrt {x}"]) == [(r,)]


# ---------------------------------------------------------------- NewReno

class Reno:
    """RFC 5681 (2)-(4), RFC 6582 3.2 step 3, in bytes."""

    def __init__(self, mss):
        self.mss, self.cwnd, self.ssthresh = mss, min(10 * mss, max(2 * mss, 14600)), INF
        self.bytes_acked = 0

    def ack(self, n):
        if self.cwnd < self.ssthresh:
            self.cwnd += min(n, self.mss)                           # (2)
            return
        self.bytes_acked += n                                       # RFC 3465 2.1: a segment a window
        if self.bytes_acked >= self.cwnd:
            self.bytes_acked -= self.cwnd
            if self.bytes_acked >= self.cwnd:
                self.bytes_acked = 0
            self.cwnd += self.mss

    def congestion(self, flight):
        self.ssthresh = max(flight // 2, 2 * self.mss)              # (4)
        self.cwnd = self.ssthresh
        self.bytes_acked = 0

    def recovered(self, flight):
        self.cwnd = min(self.ssthresh, max(flight, self.mss) + self.mss)

    def timeout(self, flight):
        self.ssthresh = max(flight // 2, 2 * self.mss)
        self.cwnd = self.mss                                        # the loss window
        self.bytes_acked = 0


def test_newreno_follows_rfc_5681_and_6582(drive):
    model, script, expect = Reno(MSS), ["start newreno 1460"], [(14600, INF)]

    def step(cmd, fn, *args):
        script.append(cmd)
        fn(*args)
        expect.append((model.cwnd, model.ssthresh))
    for i in range(30):                                  # slow start, some ACKs covering two segments
        n = MSS * (1 + i % 2)
        step(ack(n), model.ack, n)
    step("cong 50000 0", model.congestion, 50000)        # three duplicate ACKs
    step("rec 20000", model.recovered, 20000)            # the recovery point acknowledged
    for i in range(200):                                 # congestion avoidance: a segment a window acknowledged,
        n = MSS * (1 + i % 3)                            # one, two or three segments an ACK
        step(ack(n), model.ack, n)
    step("cong 2000 0", model.congestion, 2000)          # ssthresh no less than two segments
    step("rec 0", model.recovered, 0)                    # FlightSize under a segment counts as one
    step("rto 40000 0", model.timeout, 40000)
    for i in range(40):                                  # slow start again, through ssthresh
        step(ack(MSS), model.ack, MSS)
    assert drive(script) == expect
    assert expect[-1][0] > expect[-1][1]                 # it did reach congestion avoidance


# ---------------------------------------------------------------- CUBIC

class Cubic:
    """RFC 9438 in segments and seconds (C = 0.4, beta = 0.7), RFC 9406 in slow start."""
    C, BETA = 0.4, 0.7
    ALPHA = 3 * (1 - 0.7) / (1 + 0.7)

    def __init__(self, mss):
        self.mss = mss
        self.cwnd, self.ssthresh = min(10 * mss, max(2 * mss, 14600)), INF
        self.w_max = 0.0
        self.epoch = None
        self.prior = 0
        self.hs = "ss"
        self.window_end, self.last_min, self.cur_min, self.samples = None, None, None, 0
        self.css_base, self.css_rounds = None, 0
        self.friendly = 0           # ACKs answered in the Reno-friendly region

    def hystart(self, n, rtt, una, nxt):
        if self.window_end is None or una >= self.window_end:              # a new round
            self.window_end, self.last_min, self.cur_min, self.samples = nxt, self.cur_min, None, 0
            if self.hs == "css":
                self.css_rounds += 1
                if self.css_rounds >= 5:                                    # CSS_ROUNDS
                    self.hs, self.ssthresh = "done", self.cwnd
        if rtt:
            self.cur_min = rtt if self.cur_min is None else min(self.cur_min, rtt)
            self.samples += 1
        grow = min(n, 8 * self.mss)                                          # L = 8
        if self.hs == "ss":
            self.cwnd += grow
            if self.samples >= 8 and self.cur_min is not None and self.last_min is not None:
                thresh = min(max(self.last_min / 8, 4000), 16000)           # RttThresh
                if self.cur_min >= self.last_min + thresh:
                    self.hs, self.css_base, self.css_rounds = "css", self.cur_min, 0
        else:
            self.cwnd += grow // 4                                           # CSS_GROWTH_DIVISOR
            if self.samples >= 8 and self.cur_min < self.css_base:
                self.hs, self.css_base = "ss", None

    def w_cubic(self, t):
        return self.C * (t - self.k) ** 3 + self.w_max                      # (1), segments

    def ack(self, n, rtt, srtt, una, nxt, now_us):
        if self.cwnd < self.ssthresh:
            if self.hs != "done":
                self.hystart(n, rtt, una, nxt)
            else:
                self.cwnd += min(n, self.mss)
            return
        seg = self.cwnd / self.mss
        if self.epoch is None:
            self.epoch, self.cwnd_epoch = now_us, seg
            if self.w_max <= seg:
                self.w_max, self.k = seg, 0.0
            else:
                self.k = ((self.w_max - seg) / self.C) ** (1 / 3)           # (2)
            self.w_est = seg
        t = (now_us - self.epoch) / 1e6
        alpha = 1 if self.w_est * self.mss >= self.prior else self.ALPHA
        self.w_est += alpha * (n / self.mss) / seg                           # (4)
        if self.w_cubic(t) < self.w_est:
            self.cwnd = int(self.w_est * self.mss)                           # Reno-friendly
            self.friendly += 1
            return
        target = min(max(self.w_cubic(t + (srtt or rtt) / 1e6), seg), 1.5 * seg)
        self.cwnd = int(self.cwnd + (target - seg) * self.mss * (n / self.mss) / seg)

    def reduce(self, flight):
        self.epoch = None
        seg = self.cwnd / self.mss
        self.w_max = seg * (1 + self.BETA) / 2 if seg < self.w_max else seg   # fast convergence (4.7)
        self.prior = self.cwnd
        self.hs = "done"
        self.ssthresh = max(int(flight * self.BETA), 2 * self.mss)            # 4.6

    def congestion(self, flight):
        self.reduce(flight)
        self.cwnd = self.ssthresh

    def recovered(self, flight):
        self.cwnd = self.ssthresh

    def timeout(self, flight):
        self.reduce(flight)
        self.cwnd = self.mss                                                   # 4.8


def compare(drive, script, expect, tolerance):
    got = drive(script)
    for i, (g, e, cmd) in enumerate(zip(got, expect, script)):
        assert abs(g[0] - e[0]) <= tolerance and abs(g[1] - e[1]) <= tolerance, \
            f"step {i} ({cmd}): module cwnd/ssthresh {g}, RFC {e}"
    return got


def test_cubic_follows_rfc_9438(drive):
    model = Cubic(MSS)
    script, expect = ["start cubic 1460"], [(model.cwnd, model.ssthresh)]
    now, una, nxt = 1000, 0, 0

    def step(cmd, fn, *args):
        script.append(cmd)
        fn(*args)
        expect.append((model.cwnd, model.ssthresh))
    for i in range(60):                                      # slow start, RTT steady: HyStart++ stays out
        una += MSS
        nxt = una + model.cwnd
        now += 1000
        step(ack(MSS, 50000, 50000, una, nxt, now), model.ack, MSS, 50000, 50000, una, nxt, now)
    step(f"cong {model.cwnd} {now}", model.congestion, model.cwnd)
    step(f"rec {model.cwnd}", model.recovered, model.cwnd)
    for i in range(600):                                     # congestion avoidance for 3 s of 5 ms ACKs
        now += 5000
        step(ack(MSS, 50000, 50000, 0, 0, now), model.ack, MSS, 50000, 50000, 0, 0, now)
    w_max_reached = model.cwnd
    step(f"cong {model.cwnd // 2} {now}", model.congestion, model.cwnd // 2)   # below W_max: fast convergence
    for i in range(400):
        now += 5000
        step(ack(2 * MSS, 50000, 50000, 0, 0, now), model.ack, 2 * MSS, 50000, 50000, 0, 0, now)
    step(f"rto {model.cwnd} {now}", model.timeout, model.cwnd)
    for i in range(30):
        now += 5000
        step(ack(MSS, 50000, 50000, 0, 0, now), model.ack, MSS, 50000, 50000, 0, 0, now)
    got = compare(drive, script, expect, MSS)
    assert w_max_reached > 2 * 36000 and got[-31] == (MSS, got[-31][1])     # it grew, and the timeout cut it


def test_cubic_is_reno_friendly_when_acks_come_fast(drive):
    model = Cubic(MSS)
    script, expect = ["start cubic 1460"], [(model.cwnd, model.ssthresh)]
    now = 1000
    for i in range(100):                    # slow start to about 110 segments
        now += 100
        script.append(ack(MSS, 1000, 1000, 0, 0, now))
        model.ack(MSS, 1000, 1000, 0, 0, now)
        expect.append((model.cwnd, model.ssthresh))
    for cmd, fn in ((f"cong {model.cwnd} {now}", model.congestion), (f"rec {model.cwnd}", model.recovered)):
        script.append(cmd)
        fn(model.cwnd)
        expect.append((model.cwnd, model.ssthresh))
    for i in range(3000):                   # an ACK every 100 us, 1 ms RTT: W_est outgrows W_cubic
        now += 100
        script.append(ack(MSS, 1000, 1000, 0, 0, now))
        model.ack(MSS, 1000, 1000, 0, 0, now)
        expect.append((model.cwnd, model.ssthresh))
    compare(drive, script, expect, MSS)
    assert model.friendly > 2000


def test_hystart_plus_plus_leaves_slow_start_when_the_rtt_rises(drive):
    model = Cubic(MSS)
    script, expect = ["start cubic 1460"], [(model.cwnd, model.ssthresh)]
    rtts = [100000, 100000, 120000, 130000, 90000] + [150000] * 7
    states, now = [], 0
    # Round r's ACKs acknowledge segments 10r+1 .. 10r+10; the one that
    # acknowledges its last segment ends it and begins round r+1, whose end
    # SND.NXT is then, and whose RTT it carries.
    for r in range(len(rtts)):
        for j in range(1, 11):
            una, now = (10 * r + j) * MSS, now + 2000
            nxt = 10 * (r + 1) * MSS if j < 10 else 10 * (r + 2) * MSS
            rtt = rtts[r] if j < 10 or r + 1 == len(rtts) else rtts[r + 1]
            if r == 0 and j == 1:
                nxt = 10 * MSS
            script.append(ack(MSS, rtt, rtt, una, nxt, now))
            model.ack(MSS, rtt, rtt, una, nxt, now)
            expect.append((model.cwnd, model.ssthresh))
        states.append(model.hs)
    assert states[:6] == ["ss", "ss", "css", "css", "ss", "css"] and states[-1] == "done", states
    got = compare(drive, script, expect, MSS)      # congestion avoidance at the end: CUBIC's rounding
    slow = [i for i, e in enumerate(expect) if e[1] == INF]
    assert [got[i] for i in slow] == [expect[i] for i in slow]     # slow start and CSS: exactly
    assert got[-1][1] != INF        # ssthresh set where CSS ended


def test_westwood_sets_ssthresh_from_bandwidth_and_least_rtt(drive):
    script, expect = ["start westwood 1460"], []
    reno = Reno(MSS)
    bw_ns = bw = 0.0
    win_start, bk, rtt_last, rtt_min = None, 0, 0, None
    now = 0
    for i in range(1000):           # 1,460 bytes a millisecond for half a second, then twice that
        now += 1000
        rtt = 40000 + (i % 7) * 1000
        n = MSS if i < 500 else 2 * MSS
        script.append(ack(n, rtt, rtt, 0, 0, now))
        rtt_last, rtt_min = rtt, rtt if rtt_min is None else min(rtt_min, rtt)
        win_start = now if win_start is None else win_start
        bk += n
        delta = now - win_start
        if delta > max(rtt_last, 50000):
            sample = bk * 1e6 / delta
            if bw_ns == 0 and bw == 0:
                bw_ns = bw = sample
            else:
                bw_ns = (7 * bw_ns + sample) / 8
                bw = (7 * bw + bw_ns) / 8
            bk, win_start = 0, now
        reno.ack(n)
    assert drive(script)[-1] == (reno.cwnd, INF)       # the window grows as Reno's
    ss = max(bw * rtt_min / 1e6, 2 * MSS)
    after = drive(script + [f"cong {reno.cwnd} {now}", f"rec {reno.cwnd}", f"rto {reno.cwnd} {now}"])[-3:]
    assert abs(after[0][1] - ss) <= MSS and after[0][0] == min(reno.cwnd, after[0][1])
    assert after[1] == (after[0][1], after[0][1])
    assert after[2][0] == MSS and abs(after[2][1] - ss) <= MSS
    assert 1.6e6 < bw < 2.4e6 and rtt_min == 40000      # on its way from 1.46 MB/s to 2.92


def test_westwood_counts_what_recovery_delivers_and_its_least_rtt_is_a_fine_one(drive):
    """The bytes a recovery delivers (SACKed, then the holes) count toward
    the estimate, and a coarse sample (a timestamp's echo, 1 ms a tick)
    does not lower the least RTT once a fine one (timed to the
    microsecond) is there: each would take more off the window at a loss
    than the path asks."""
    def run(during):
        script, now = ["start westwood 1460"], 0
        for i in range(200):                # 2,920 bytes a millisecond, RTT 10.6 ms timed
            now += 1000
            script.append(ack(2 * MSS, 10600, 10600, 0, 0, now))
        script.append(f"cong {60 * MSS} {now}")
        for i in range(150):                # a long recovery (a burst of losses): coarse samples of 10 ms
            now += 1000
            script.append(f"dlv {during} 10000 0 {now}")
        script.append(f"rec {40 * MSS}")
        for i in range(10):
            now += 1000
            script.append(ack(2 * MSS, 10600, 10600, 0, 0, now))
        script.append(f"cong {60 * MSS} {now}")
        return drive(script)[-1][1]
    counted, lost = run(2 * MSS), run(0)
    rate = 2 * MSS * 1000                   # bytes a second, all along
    assert abs(counted - rate * 10600 / 1e6) <= MSS, counted       # BWE x the fine least RTT
    assert lost < counted - MSS, (lost, counted)                    # (what a recovery delivers does count)
