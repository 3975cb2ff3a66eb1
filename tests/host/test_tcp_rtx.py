"""TCP's retransmission arithmetic against its RFCs (lib/tcp_rtx.c,
lib/include/tcp_rtx.h), built for this machine with a small driver
(tests/host/cc/rtxdrive.c).

RFC 6298's timeout is compared with the RFC's formulas step by step
(Linux's 200 ms floor and 120 s ceiling). RFC 6675's scoreboard is compared
with a model here that keeps the SACKed bytes as a set of byte numbers and
applies the RFC's definitions byte by byte (IsLost, SetPipe, NextSeg rules
1 and 3), over thousands of random ACK sequences, some of them across the
2^32 wrap of sequence numbers."""
import random
import shutil
import subprocess

import pytest

from conftest import REPO

MSS = 10                # (small, so that the model may go byte by byte)
DUPTHRESH = 3


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler for the host (./petrel setup installs clang)")
    exe = tmp_path_factory.mktemp("rtx") / "rtxdrive"
    subprocess.run([compiler, "-O1", "-Wall", "-Werror", "-I", str(REPO / "lib/include"), "-o", str(exe),
                    str(REPO / "tests/host/cc/rtxdrive.c"), str(REPO / "lib/tcp_rtx.c")], check=True)

    def run(commands):
        out = subprocess.run([str(exe)], input="".join(c + "\n" for c in commands), capture_output=True,
                             text=True, timeout=60, check=True).stdout.split("\n")
        rows = [tuple(int(x) for x in line.split()) for line in out if line]
        assert len(rows) == len(commands), out[-5:]
        return rows
    return run


# ---------------------------------------------------------------- RFC 6298

def rfc6298(samples_and_backoffs):
    """(srtt, rttvar, rto) after each step, by RFC 6298 in integers as the
    RFC's equations give them (truncating), clamped like Linux's."""
    srtt = rttvar = 0
    base = rto = 1_000_000
    out = []
    for step in samples_and_backoffs:
        if step == "backoff":
            rto = min(max(rto * 2, 200_000), 120_000_000)
        else:
            r = max(step, 1)
            if srtt == 0:
                srtt, rttvar = r, r // 2
            else:
                rttvar = (3 * rttvar + abs(srtt - r)) // 4
                srtt = (7 * srtt + r) // 8
            base = rto = min(max(srtt + max(1000, 4 * rttvar), 200_000), 120_000_000)
        out.append((srtt, rttvar, rto))
    return out


def test_rto_follows_rfc6298(drive):
    assert drive(["rto_init"]) == [(0, 0, 1_000_000)]           # 2.1: 1 s before any sample
    rng = random.Random(6298)
    for _ in range(50):
        steps = []
        for _ in range(rng.randrange(1, 40)):
            steps.append("backoff" if rng.random() < 0.2 else rng.choice(
                [rng.randrange(0, 2000), rng.randrange(1000, 300_000), rng.randrange(100_000, 5_000_000)]))
        cmds = ["rto_init"] + [("rto_backoff" if s == "backoff" else f"rto_sample {s}") for s in steps]
        assert drive(cmds)[1:] == rfc6298(steps), steps




def test_rto_floor_ceiling_and_backoff(drive):
    rows = drive(["rto_init", "rto_sample 1000", "rto_backoff", "rto_backoff", "rto_sample 1000",
                  "rto_init", "rto_sample 50000000", "rto_backoff", "rto_backoff"])
    assert rows[1] == (1000, 500, 200_000)                       # a LAN RTT: the 200 ms floor
    assert [r[2] for r in rows[2:4]] == [400_000, 800_000]       # 5.5: doubled per expiry
    assert rows[4][2] == 200_000                                  # a sample ends the backing off
    assert rows[6] == (50_000_000, 25_000_000, 120_000_000)      # 50 s + 4 x 25 s: the 120 s ceiling
    assert [r[2] for r in rows[7:]] == [120_000_000] * 2


# ---------------------------------------------------------------- RFC 6675

class Model:
    """The scoreboard as a set of SACKed byte numbers (offsets from a base)."""

    def __init__(self):
        self.sacked = set()

    def runs_above(self, o):
        runs, prev = 0, None
        for b in sorted(x for x in self.sacked if x > o):
            if prev is None or b != prev + 1:
                runs += 1
            prev = b
        return runs

    def is_lost(self, o, mss):
        above = sum(1 for x in self.sacked if x > o)
        return self.runs_above(o) >= DUPTHRESH or above > (DUPTHRESH - 1) * mss

    def pipe(self, una, nxt, high_rxt, mss):
        p = 0
        for o in range(una, nxt):
            if o in self.sacked:
                continue
            if not self.is_lost(o, mss):
                p += 1
            if o < high_rxt:
                p += 1
        return p

    def next_seg(self, una, high_rxt, mss, rule3):
        if not self.sacked:
            return (0, 0, 0)
        top = max(self.sacked)
        for want_lost in ([True, False] if rule3 else [True]):
            for o in range(max(una, high_rxt), top):
                if o in self.sacked or (want_lost and not self.is_lost(o, mss)):
                    continue
                n = 0
                while n < mss and o + n not in self.sacked:
                    n += 1
                return (1, o, n)
        return (0, 0, 0)

    def runs(self):
        out, start, prev = [], None, None
        for b in sorted(self.sacked):
            if start is None:
                start = b
            elif b != prev + 1:
                out.append((start, prev + 1))
                start = b
            prev = b
        if start is not None:
            out.append((start, prev + 1))
        return out


def check_scenario(drive, rng, base, steps):
    """Random ACKs with SACK blocks over `steps` steps, from sequence number
    `base`; every result compared with the model (in offsets from base)."""
    seq = lambda o: (base + o) % 2 ** 32            # noqa: E731
    model, una, sent = Model(), 0, 40 * MSS
    cmds, want = ["sb_clear"], [(0, 0)]
    for _ in range(steps):
        kind = rng.random()
        if kind < 0.15 and una < sent - MSS:
            una += rng.randrange(1, 3 * MSS)
            una = min(una, sent - 1)
            model.sacked = {x for x in model.sacked if x >= una}
            cmds.append(f"sb_ack {seq(una)}")
            want.append((0, len(model.runs())) + tuple(seq(v) for r in model.runs() for v in r))
        elif kind < 0.7:
            s = rng.randrange(max(0, una - MSS), sent)
            e = s + rng.randrange(1, 3 * MSS)
            if rng.random() < 0.1:
                e = sent + rng.randrange(1, MSS)             # past what was sent: refused whole
            new = set()
            if s < e and e > una and e <= sent:
                new = set(range(max(s, una), e)) - model.sacked
                model.sacked |= new
            cmds.append(f"sb_add {seq(una)} {seq(sent)} {seq(s)} {seq(e)}")
            want.append((len(new), len(model.runs())) + tuple(seq(v) for r in model.runs() for v in r))
        elif kind < 0.8:
            o = rng.randrange(una, sent)
            cmds.append(f"sb_lost {seq(o)} {MSS}")
            want.append((int(model.is_lost(o, MSS)),))
        elif kind < 0.9:
            hr = rng.choice([una, rng.randrange(una, sent + 1)])
            cmds.append(f"sb_pipe {seq(una)} {seq(sent)} {seq(hr)} {MSS}")
            want.append((model.pipe(una, sent, hr, MSS),))
        else:
            hr = rng.choice([una, rng.randrange(una, sent + 1)])
            r3 = rng.randrange(2)
            cmds.append(f"sb_next {seq(una)} {seq(hr)} {MSS} {r3}")
            f, o, n = model.next_seg(una, hr, MSS, r3)
            want.append((f, seq(o) if f else 0, n))
    got = drive(cmds)
    for c, g, w in zip(cmds, got, want):
        assert g == w, (c, g, w)


@pytest.mark.parametrize("base", [1, 2 ** 32 - 20 * MSS], ids=["low", "wrapping"])
def test_scoreboard_matches_rfc6675_byte_by_byte(drive, base):
    rng = random.Random(6675 + base)
    for _ in range(40):
        check_scenario(drive, rng, base, 60)


def test_scoreboard_keeps_the_lowest_ranges_when_full(drive):
    # 33 separate ranges: the highest one goes (the holes nearest SND.UNA matter).
    cmds = ["sb_clear"] + [f"sb_add 0 100000 {i * 100} {i * 100 + 50}" for i in range(1, 34)]
    rows = drive(cmds)
    assert rows[32][1] == 32 and rows[33][:2] == (0, 32)         # the 33rd, above them all, is not kept
    cmds = ["sb_clear"] + [f"sb_add 0 100000 {i * 100} {i * 100 + 50}" for i in range(2, 34)] + \
        ["sb_add 0 100000 100 150"]
    last = drive(cmds)[-1]
    assert last[:2] == (50, 32) and last[2:4] == (100, 150) and last[-2:] == (3200, 3250)


def test_old_and_dsack_blocks_add_nothing(drive):
    rows = drive(["sb_clear", "sb_add 5000 9000 1000 4000", "sb_add 5000 9000 4000 5000",
                  "sb_add 5000 9000 6000 6000", "sb_add 5000 9000 6000 9001", "sb_add 5000 9000 4000 6000"])
    assert [r[:2] for r in rows[1:5]] == [(0, 0)] * 4
    assert rows[5] == (1000, 1, 5000, 6000)                       # the part above SND.UNA only
