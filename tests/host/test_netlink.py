"""The project's own link (tools/petrel/netrelay.py): the relay's
impairments on plain UDP sockets, then two Petrel machines joined through
it, one sending numbered frames through its network device service in
the kernel, the other counting them through the service in user space
(tests/programs/netpair), every count compared with what the relay did;
then two Petrel network stacks (services/net, one in the kernel, one in
user space) pinging and echoing UDP, then 400,000 bytes through a TCP
echo, over a clean link and a lossy one (tests/programs/netpeer), the
clean run's frames judged by tshark; then Petrel with a Linux peer
(tests/linux/lxnetpeer): TCP echoes each way, and Linux's stack as the
oracle of Petrel's in each placement (pings, UDP of every size to 65,507,
refused connections, 1 MiB and 64 MiB each way, a full backlog, 100
connections at once, a peer that vanishes)."""
import re
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO
from petrel import cpio, linuxbase, netrelay, oracle, paths, qemu, testrun, trace
from petrel.netrelay import Impairments, Relay

# (its relay delays, spaces and drops frames by the clock)
pytestmark = pytest.mark.serial

HOST = "127.0.0.1"


class Side:
    """A stand-in for a QEMU: a UDP socket on the guest port of one side of the relay."""

    def __init__(self, relay, side):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((HOST, relay.guest_port[side]))
        self.to = (HOST, relay.port_for[side])

    def send(self, frame):
        self.sock.sendto(frame, self.to)

    def receive(self, quiet=0.3):
        got = []
        self.sock.settimeout(quiet)
        try:
            while True:
                got.append((self.sock.recv(65536), time.monotonic()))
        except socket.timeout:
            return got


def frame(i, size=200):
    return b"\xff" * 6 + b"\x02" * 6 + b"\x88\xb5" + i.to_bytes(4, "big") + bytes((i + k) % 251 for k in range(size - 18))


def pump(imp, n, size=200, pace=0.0):
    with Relay(imp) as relay:
        a, b = Side(relay, "a"), Side(relay, "b")
        sent = {}
        for i in range(n):
            sent[i] = time.monotonic()
            a.send(frame(i, size))
            if pace:
                time.sleep(pace)
        got = b.receive()
    return relay, sent, got


def test_impairments_are_checked():
    for bad in (Impairments(loss=1.5), Impairments(corrupt=-0.1), Impairments(rtt_ms=-1), Impairments(rate_bps=-5)):
        with pytest.raises(ValueError):
            Relay(bad)
    with pytest.raises(ValueError, match="link:GUEST_PORT:RELAY_PORT"):
        qemu.build_argv("k", None, qemu.Machine(net="link:1"))
    argv = qemu.build_argv("k", None, qemu.Machine(net="link:4000:4001"))
    assert "dgram,id=net0,local.type=inet,local.host=127.0.0.1,local.port=4000,remote.type=inet," \
           "remote.host=127.0.0.1,remote.port=4001" in argv


def test_a_clean_link_passes_every_frame_in_order_after_its_delay():
    relay, sent, got = pump(Impairments(rtt_ms=40), 200)
    frames = [f for f, _ in got]
    assert frames == [frame(i) for i in range(200)]
    delays = [t - sent[int.from_bytes(f[14:18], "big")] for f, t in got]
    assert min(delays) >= 0.019
    st = relay.stats["ab"]
    assert (st.frames, st.delivered, st.dropped, relay.stats["ba"].frames) == (200, 200, 0, 0)


def test_losses_duplicates_reordering_and_corruption_are_as_the_relay_says():
    imp = Impairments(loss=0.05, duplicate=0.05, reorder=0.05, corrupt=0.05, seed=3)
    relay, _, got = pump(imp, 2000, pace=0.0002)
    st = relay.stats["ab"]
    fates = st.fates
    assert len(fates) == 2000 and st.frames == 2000
    for name, letter in (("dropped", "l"), ("duplicated", "d"), ("reordered", "r"), ("corrupted", "c")):
        count = sum(letter in f for f in fates)
        assert count == getattr(st, name) and 50 <= count <= 160, (name, count)   # 5 % of 2,000, roughly
    def original(f):                # the frame number (a corrupted number: the frame one byte away)
        i = int.from_bytes(f[14:18], "big")
        for k in [i] + list(range(2000)):
            if k < 2000 and sum(x != y for x, y in zip(f, frame(k))) <= 1:
                return k
        raise AssertionError(f"a frame no frame sent is one byte away from: {f[:20]!r}")
    copies = {}
    for f, _ in got:
        copies.setdefault(original(f), []).append(f)
    for i, fate in enumerate(fates):
        if "l" in fate:
            assert i not in copies
            continue
        assert len(copies.get(i, [])) == (2 if "d" in fate else 1), (i, fate)
        diff = [k for k in range(len(frame(i))) if copies[i][0][k] != frame(i)[k]]
        assert diff == ([diff[0]] if "c" in fate else []) and (not diff or diff[0] >= 14), (i, fate, diff)
    order = [original(f) for f, _ in got]
    late = sum(1 for k in range(1, len(order)) if order[k] < max(order[:k]))
    assert late >= st.reordered // 2 and st.delivered == len(got)


def test_the_same_seed_gives_the_same_fates():
    imp = Impairments(loss=0.1, duplicate=0.1, reorder=0.1, corrupt=0.1, seed=11)
    first, _, got1 = pump(imp, 300)
    second, _, got2 = pump(imp, 300)
    other, _, _ = pump(Impairments(loss=0.1, duplicate=0.1, reorder=0.1, corrupt=0.1, seed=12), 300)
    assert first.stats["ab"].fates == second.stats["ab"].fates != other.stats["ab"].fates
    assert sorted(f for f, _ in got1) == sorted(f for f, _ in got2)


def test_the_rate_cap_spaces_frames_out():
    relay, sent, got = pump(Impairments(rate_bps=1_000_000), 100, size=1250)     # 10 ms a frame
    assert len(got) == 100
    assert got[-1][1] - sent[0] >= 0.95


# Expected receiver counts from the relay's fates of the sender's frames:
# n data frames, then end frames until the first that arrives intact.
def expected_counts(fates, n):
    good = sum(1 for f in fates[:n] if "l" not in f and "c" not in f)
    dups = sum(1 for f in fates[:n] if "d" in f and "l" not in f and "c" not in f)
    # A held-back frame arrives after the next frame not lost, and is out of
    # order if that one is a data frame that arrived intact (an end frame
    # comes 200 ms later: the frame before it goes when its hold runs out).
    late = 0
    for i, f in enumerate(fates[:n]):
        if "r" in f and "l" not in f and "c" not in f:
            j = next((k for k in range(i + 1, len(fates)) if "l" not in fates[k]), None)
            late += j is not None and j < n and "c" not in fates[j]
    bad = sum(1 + ("d" in f) for f in fates[:n] if "c" in f and "l" not in f)
    for f in fates[n:]:
        if "l" in f:
            continue
        if "c" in f:
            bad += 1 + ("d" in f)
            continue
        break
    return good, bad, dups, late


def test_two_petrels_over_the_link():
    for system in ("netpair-send", "netpair-recv"):
        assert paths.system_image(system).exists(), "run ./petrel build first"
    imp = Impairments(rtt_ms=10, rate_bps=16_000_000, loss=0.02, duplicate=0.02, reorder=0.02, corrupt=0.02, seed=7)
    consoles = {}
    with Relay(imp) as relay:
        def boot(side, system):
            machine = qemu.Machine(net=relay.net_for(side))
            argv = qemu.build_argv(paths.kernel_bin(), paths.system_image(system), machine, "")
            consoles[side] = qemu.run(argv, 120)
        receiver = threading.Thread(target=boot, args=("b", "netpair-recv"))
        receiver.start()
        time.sleep(1.0)                 # listening before the first frame
        sender = threading.Thread(target=boot, args=("a", "netpair-send"))
        sender.start()
        sender.join()
        receiver.join()
    status_a, out_a = consoles["a"]
    status_b, out_b = consoles["b"]
    assert status_a == 0 and "netpair: sent 2000 frames" in out_a, (relay.stats, out_a[-2000:])
    line = next((l for l in out_b.splitlines() if l.startswith("netpair: received")), out_b[-2000:])
    st = relay.stats["ab"]
    good, bad, dups, late = expected_counts(st.fates, 2000)
    assert line == (f"netpair: received {good} good, {bad} corrupted, {dups} duplicates, {late} out of order, "
                    f"{2000 - good} missing, 0 other"), (line, st)
    assert st.frames >= 2001 and st.dropped > 0 and st.corrupted > 0 and st.duplicated > 0 and st.reordered > 0
    assert status_b == 0


# Boots the systems `first` (side b) and `second` (side a) on the relay,
# the first `head_start` seconds ahead so that it listens before the other
# speaks, and answers their (status, console) by side. A system is a
# Petrel system's name, or a function of the machine giving QEMU's argv
# (a Linux peer). pcaps: side -> file to record. traces: side -> the
# trace file to record Petrel's monitor into (its tcp group on from boot).
def boot_pair(relay, first, second, pcaps=None, head_start=1.0, timeout=120, traces=None):
    for system in (first, second):
        assert callable(system) or paths.system_image(system).exists(), "run ./petrel build first"
    consoles = {}

    def boot(side, system):
        machine = qemu.Machine(net=relay.net_for(side), pcap=str((pcaps or {}).get(side, "")))
        out = (traces or {}).get(side)
        argv = system(machine) if callable(system) else \
            qemu.build_argv(paths.kernel_bin(), paths.system_image(system), machine, "trace=tcp" if out else "")
        rec = None
        if out:
            qmp = str(Path(tempfile.mkdtemp(prefix="petrel-qmp-")) / "qmp")
            argv += trace.qemu_argv(qmp)
            rec = trace.Recorder(qmp, out, paths.kernel_elf())
        consoles[side] = qemu.run(argv, timeout, on_start=(lambda proc: trace.watch(proc, rec)) if rec else None)
        if rec:
            rec.join()
            assert not rec.error, rec.error
    b = threading.Thread(target=boot, args=("b", first))
    b.start()
    time.sleep(head_start)
    a = threading.Thread(target=boot, args=("a", second))
    a.start()
    a.join()
    b.join()
    return consoles


@pytest.mark.parametrize("lossy", [False, True], ids=["clean", "lossy"])
def test_two_stacks_ping_and_echo_udp(tmp_path, lossy):
    imp = (Impairments(rtt_ms=10, loss=0.02, duplicate=0.02, reorder=0.02, corrupt=0.02, seed=5) if lossy
           else Impairments(rtt_ms=2))
    pcaps = {} if lossy else {"a": tmp_path / "client.pcap", "b": tmp_path / "echo.pcap"}
    with Relay(imp) as relay:
        consoles = boot_pair(relay, "netpeer-echo", "netpeer-client", pcaps)
    (status_a, out_a), (status_b, out_b) = consoles["a"], consoles["b"]
    summary = next((l for l in out_a.splitlines() if "datagrams echoed" in l), out_a[-1500:])
    assert status_a == 0 and status_b == 0, (out_a[-1500:], out_b[-1500:])
    m = re.fullmatch(r"netpeer: (\d)/5 pings answered, (\d+)/300 datagrams echoed intact "
                     r"\((\d+) sent again, (\d+) wrong\)", summary)
    assert m, summary
    pings, intact, again, wrong = map(int, m.groups())
    assert intact == 300 and wrong == 0, summary
    resent = check_tcp_lines(out_a)
    echoed = re.search(r"netpeer: echoed (\d+) datagrams, answered (\d+) pings", out_b)
    assert echoed, out_b[-1500:]
    if lossy:
        # 2 % of each direction's frames lost: some datagrams go again, and
        # the relay did corrupt some, which the checksums kept out.
        st_ab, st_ba = relay.stats["ab"], relay.stats["ba"]
        assert again > 0 and st_ab.corrupted + st_ba.corrupted > 0 and pings >= 3, (summary, st_ab, st_ba)
        assert resent > 0, out_a[-1500:]
        assert int(echoed[1]) >= 300
    else:
        assert pings == 5 and again == 0 and int(echoed[1]) == 300 and int(echoed[2]) == 5, (summary, echoed[0])
        for side in ("a", "b"):
            assert testrun.judge_frames(pcaps[side], ["arp", "icmp", "udp", "tcp"], REPO) == []


# A Linux peer: Debian's kernel (the bench's) with tests/linux/lxnetpeer as
# init and the modules of a virtio-mmio NIC, playing `args` (its role).
def linux_peer(tmp_path, args):
    if not linuxbase.present(REPO):
        pytest.fail("the Linux baseline is missing: run ./petrel setup")
    initrd = tmp_path / "lxnetpeer.cpio"
    files = {"init": (paths.build_dir(REPO) / "linux" / "bin" / "lxnetpeer").read_bytes()}
    for m in linuxbase.NET_MODULES:
        files[f"{m}.ko"] = linuxbase.net_module(m, REPO).read_bytes()
    initrd.write_bytes(cpio.archive(files, dirs=["dev", "proc"], executables=["init"]))
    return lambda machine: qemu.build_argv(linuxbase.image(REPO), initrd, machine, f"{oracle.LINUX_APPEND} {args}")


TCP_LINE = (r"netpeer: tcp (\w+): (\d+)/(\d+) bytes echoed, (\d+) wrong, in (\d+) ms; (\d+) segments sent "
            r"again; then the end \((-?\d+)\), state (\d+), error (-?\d+)")


def check_tcp_lines(console, modules=("newreno", "cubic", "westwood")):
    """netpeer's client transfers (0 and 1 byte, then 400,000 with each
    congestion module; lxnetpeer's one with Linux's): every byte echoed
    intact, the end read, the socket CLOSE (its connection in TIME_WAIT, as
    on Linux) without error. Answers the segments sent again in all."""
    lines = re.findall(TCP_LINE, console)
    sizes = [(cc, int(total)) for cc, _, total, *_ in lines]
    want = ([("newreno", 0), ("newreno", 1)] if len(modules) > 1 else []) + [(m, 400000) for m in modules]
    assert sizes == want, (sizes, console[-1500:])
    for cc, got, total, wrong, ms, resent, eof, state, err in lines:
        assert (int(got), int(wrong), int(eof), int(state), int(err)) == (int(total), 0, 0, 7, 0), lines
    return sum(int(line[5]) for line in lines)


def test_petrel_client_with_a_linux_echo_through_loss(tmp_path):
    """Petrel's client (its stack in the kernel) against Linux's own stack:
    pings, 300 UDP datagrams up to 5,920 bytes (fragments both ways) and
    400,000 bytes through Linux's TCP echo, with 1 % loss, duplication,
    reordering and corruption each way. The monitor records Petrel's TCP
    meanwhile: its losses, duplicate ACKs, retransmissions and recoveries,
    and NewReno's window at each as RFC 5681 and RFC 6582 give it."""
    imp = Impairments(rtt_ms=10, loss=0.01, duplicate=0.01, reorder=0.01, corrupt=0.01, seed=9)
    recorded = tmp_path / "client.ptrace"
    with Relay(imp) as relay:
        peer = linux_peer(tmp_path, "role=echo addr=10.9.0.2")
        consoles = boot_pair(relay, peer, "netpeer-client", head_start=4.0, traces={"a": recorded})
    (status_a, out_a), (status_b, out_b) = consoles["a"], consoles["b"]
    assert status_a == 0 and "lxnetpeer: echo done" in out_b, (out_a[-1500:], out_b[-1500:])
    summary = next((l for l in out_a.splitlines() if "datagrams echoed" in l), out_a[-1500:])
    m = re.fullmatch(r"netpeer: (\d)/5 pings answered, (\d+)/300 datagrams echoed intact "
                     r"\((\d+) sent again, (\d+) wrong\)", summary)
    assert m and int(m[1]) >= 3 and (int(m[2]), int(m[4])) == (300, 0), summary
    check_tcp_lines(out_a)
    check_monitor(recorded)


def check_monitor(path):
    """The monitor's record of netpeer's transfers (connections 1 and 2 of 0
    and 1 byte, then 3, 4 and 5 of 400,000 bytes with NewReno, CUBIC and
    Westwood+): every kind of TCP event under loss, CUBIC's epochs and
    Westwood+'s bandwidth estimates among them, and NewReno's window
    after each event as RFC 5681 (4) and RFC 6582 3.2 compute it from the
    flight the event records."""
    tab = trace.table()
    t = trace.load(path)
    byid = tab.by_id()
    events = [e for e in trace.select(t, tab, {"tcp"})]
    names = [byid[e.id].name for e in events]
    why = tab.enums["tcp_why"][1]
    cwnd = [e for e in events if byid[e.id].name == "tcp_cwnd"]
    kinds = {why[e.args[1]] for e in cwnd}
    assert {"init", "ack", "recovered"} <= kinds and kinds & {"dupack", "sack"}, kinds
    for name in ("tcp_rtt", "tcp_state", "tcp_dupack", "tcp_retransmit", "tcp_window", "tcp_cc"):
        assert name in names, (name, set(names))
    cc_kinds = tab.enums["tcp_cc_event"][1]
    module = {cc_kinds[e.args[1]] for e in events if byid[e.id].name == "tcp_cc"}
    assert {"cubic_epoch", "westwood_bw"} <= module, module
    inits = [e for e in cwnd if why[e.args[1]] == "init"]
    assert len(inits) >= 3, inits
    newreno = inits[2].args[0]
    mss = inits[2].args[2] // 10                # RFC 6928's initial window: 10 segments of this size
    checked = 0
    for e in cwnd:
        if e.args[0] != newreno:
            continue
        w, ss, flight = e.args[2], e.args[3], e.args[4]
        kind = why[e.args[1]]
        if kind in ("dupack", "sack"):
            assert ss == max(flight // 2, 2 * mss) and w == ss, (kind, w, ss, flight, mss)
        elif kind == "timeout":
            assert ss == max(flight // 2, 2 * mss) and w == mss, (kind, w, ss, flight, mss)
        elif kind == "recovered":
            assert w == min(ss, max(flight, mss) + mss), (kind, w, ss, flight, mss)
        else:
            continue
        checked += 1
    assert checked >= 2, f"NewReno's connection {newreno} had {checked} losses"


def test_linux_client_with_a_petrel_echo(tmp_path):
    """Linux's client and its TCP (CUBIC) against Petrel's echo (its stack
    in user space) over a clean link: 400,000 bytes echoed intact, both
    ends closed as Linux closes them (its socket CLOSE, no error), every
    frame Petrel saw well formed to tshark."""
    pcap = tmp_path / "petrel.pcap"
    with Relay(Impairments(rtt_ms=2)) as relay:
        peer = linux_peer(tmp_path, "role=client addr=10.9.0.1 peer=10.9.0.2")
        consoles = boot_pair(relay, "netpeer-echo", peer, pcaps={"b": pcap})
    (status_a, out_a), (status_b, out_b) = consoles["a"], consoles["b"]
    assert status_b == 0, (out_a[-1500:], out_b[-1500:])
    check_tcp_lines(out_a, modules=("cubic",))
    assert testrun.judge_frames(pcap, ["arp", "tcp", "udp"], REPO) == []


# Linux's TCP/IP as the oracle: lxnetpeer role=oracle (Linux's stack)
# against netpeer role=echo (Petrel's stack in user space, then in the
# kernel) over a clean link, one run a placement whose lines the tests
# below judge each in turn: pings of
# Petrel, UDP datagrams of every size through its echo, connections to
# closed ports both ways, 1 MiB and 64 MiB each way, 100 connections at
# once, a full backlog, and a peer that vanishes with a connection open.
@pytest.fixture(scope="module", params=["netpeer-echo", "netpeer-echo-kernel"], ids=["user", "kernel"])
def oracle_run(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle")
    with Relay(Impairments()) as relay:
        peer = linux_peer(tmp, "role=oracle addr=10.9.0.1 peer=10.9.0.2")
        started = time.monotonic()
        consoles = boot_pair(relay, request.param, peer, timeout=240)
    (status_a, linux), (status_b, petrel) = consoles["a"], consoles["b"]
    assert status_a == 0 and status_b == 0, (linux[-3000:], petrel[-3000:])
    return linux, petrel, time.monotonic() - started


def line_of(console, pattern):
    m = re.search(pattern, console)
    assert m, (pattern, console[-3000:])
    return m


def test_linux_pings_petrel(oracle_run):
    """Linux's ping socket: seven echo requests of 0 to 65,507 bytes of data
    (the last in 45 fragments each way), every reply Petrel's with the
    request's sequence number and data, and Petrel counting them."""
    linux, petrel, _ = oracle_run
    m = line_of(linux, r"lxnetpeer: ping: (\d+)/(\d+) answered with their sequence numbers, (\d+) with wrong data")
    assert (int(m[1]), int(m[2]), int(m[3])) == (7, 7, 0), m[0]
    assert int(line_of(petrel, r"netpeer: echoed \d+ datagrams, answered (\d+) pings")[1]) == 7


def udp_sizes():
    """The sizes lxnetpeer's udp_sizes() sends, computed here on their own."""
    sizes = list(range(0, 1601)) + list(range(1607, 3001, 7))
    sizes += [k * 1480 - 8 + d for k in range(2, 45) for d in (-1, 0, 1) if k * 1480 - 8 + d <= 65507]
    return sizes + list(range(4009, 65506, 1009)) + [65506, 65507]


def test_udp_of_every_size_both_ways(oracle_run):
    """Every UDP datagram size to 1,600 bytes, every 7th to 3,000, those
    filling k fragments exactly and a byte either side, a stride to 65,507
    and 65,507 itself: from Linux to Petrel's echo and back, each intact the
    first time (a clean link), Petrel having echoed exactly those."""
    linux, petrel, _ = oracle_run
    m = line_of(linux, r"lxnetpeer: udp: (\d+)/(\d+) sizes echoed intact \((\d+) sent again, (\d+) wrong\), "
                       r"the largest (\d+) bytes")
    want = len(udp_sizes())
    assert tuple(map(int, m.groups())) == (want, want, 0, 0, 65507), m[0]
    # The echo's count: the datagrams, and the three "connect" commands of the TCP checks.
    assert int(line_of(petrel, r"netpeer: echoed (\d+) datagrams")[1]) == want + 3


def test_closed_ports_refuse_both_ways(oracle_run):
    """A Linux client connecting where Petrel does not listen gets
    ECONNREFUSED from Petrel's RST; Petrel connecting where Linux does not
    listen gets Linux's RST: tcp_info's error ECONNREFUSED, E_CLOSED told
    by recv, the socket CLOSE, nothing sent."""
    linux, _, _ = oracle_run
    m = line_of(linux, r"lxnetpeer: refused: connecting to Petrel's closed port 23: (-?\d+), errno (\d+)")
    assert (int(m[1]), int(m[2])) == (-1, 111), m[0]
    m = line_of(linux, r"lxnetpeer: refused: Petrel connecting to our closed port 24: "
                       r"connect: err (-?\d+) sent (\d+) got (\d+) state (\d+) error (\d+)")
    assert tuple(map(int, m.groups())) == (-13, 0, 0, 7, 111), m[0]   # -13: E_CLOSED


def test_bulk_tcp_both_ways(oracle_run):
    """1 MiB and 64 MiB from Linux to Petrel's sink, which checks every byte
    and answers the count and a hash of them, and as much from Petrel to
    Linux, which checks every byte: counts and hashes as the senders say,
    nothing wrong, every connection ended without error."""
    linux, petrel, elapsed = oracle_run
    to = re.findall(r"lxnetpeer: tcp to Petrel: sent (\d+) bytes, hash (\w+), in (\d+) ms \(error (-?\d+)\); "
                    r"Petrel says: sink: (\d+) bytes, (\d+) wrong, hash (\w+)", linux)
    assert [(int(sent), h, int(err), int(got), int(wrong), h2 == h) for sent, h, _, err, got, wrong, h2 in to] == \
        [(n, h, 0, n, 0, True) for n, (_, h, *_) in zip((1 << 20, 64 << 20), to)], (to, linux[-3000:])
    assert len(re.findall(r"netpeer: tcp sink: (\d+) bytes, 0 wrong", petrel)) == 2
    back = re.findall(r"lxnetpeer: tcp from Petrel: got (\d+) bytes, (\d+) wrong, hash (\w+), in (\d+) ms "
                      r"\(error (-?\d+)\); Petrel says: connect: err (-?\d+) sent (\d+) got 0 state (\d+) "
                      r"error (\d+) port \d+ hash (\w+)", linux)
    assert [(int(got), int(wrong), int(err), int(perr), int(sent), int(state), int(error), h == h2)
            for got, wrong, h, _, err, perr, sent, state, error, h2 in back] == \
        [(n, 0, 0, 0, n, 7, 0, True) for n in (1 << 20, 64 << 20)], (back, linux[-3000:])
    print(f"64 MiB to Petrel in {to[1][2]} ms, from Petrel in {back[1][3]} ms; the whole run {elapsed:.0f} s")


def test_a_full_backlog_as_linux_fills_its_own(oracle_run):
    """Five connections 200 ms apart to a listener with a backlog of 2 that
    never accepts, Petrel's and then Linux's own (over its loopback): as
    many established (the accept queue takes one past the backlog) and as
    many left waiting, their SYNs dropped rather than refused."""
    linux, _, _ = oracle_run
    m = line_of(linux, r"lxnetpeer: backlog 2, never accepted, 5 connecting: Petrel's (\d+) established, (\d+) "
                       r"waiting; Linux's own (\d+) established, (\d+) waiting")
    petrel, own = tuple(map(int, m.groups()[:2])), tuple(map(int, m.groups()[2:]))
    assert petrel == own == (3, 2), m[0]


def test_a_hundred_connections_at_once(oracle_run):
    """Linux opens 100 connections to Petrel's echo (its listener's backlog
    8: the rest by SYN cookies or SYNs sent again) before any sends; each
    echoes its own 100 bytes, all are established when the last echo is in
    and only then closed; Petrel held the 100 at once."""
    linux, petrel, _ = oracle_run
    m = line_of(linux, r"lxnetpeer: 100 connections: (\d+) connected, (\d+) echoed intact, (\d+) still established")
    assert tuple(map(int, m.groups())) == (100, 100, 100), m[0]
    assert int(line_of(petrel, r"netpeer: tcp: at most (\d+) connections open at once")[1]) >= 100
    assert int(line_of(petrel, r"netpeer: stack counters: .* syn_cookies (\d+)")[1]) > 0   # (past the backlog)


def test_a_vanished_peer_times_out(oracle_run):
    """Linux opens a connection to Petrel's keepalive echo (1 s idle, probes
    1 s apart, 3 of them), sees its echo, and powers off without closing:
    Petrel's side ends with ETIMEDOUT about 4 s after the peer's last data
    (idle + 3 intervals), not before its probes were due, not long after."""
    linux, petrel, _ = oracle_run
    assert "lxnetpeer: vanishing with a connection open to port 17 (its echo: 12 bytes)" in linux, linux[-3000:]
    m = line_of(petrel, r"netpeer: tcp keepalive: the connection ended with error (\d+), (\d+) ms after")
    assert int(m[1]) == 110 and 3900 <= int(m[2]) <= 5500, m[0]
