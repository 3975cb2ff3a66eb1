"""The network stack (services/net) spoken to from the host, frame by frame,
in both placements: the test is the other machine on the wire. QEMU's dgram
netdev puts each frame the guest sends into a UDP datagram to this test's
socket on 127.0.0.1 and takes each datagram the test sends as a frame.

First scripted conversations (in the manner of packetdrill, the frames
made and read with scapy): ARP, ping, a UDP echo, the ICMP errors for a
closed port and an unknown protocol, the RSTs for TCP to a closed port
(none for a RST or a bad checksum), each reply checked field by field
with its checksums; fragments: a datagram sent in fragments out of order
is reassembled and its echo comes back in fragments, a duplicate fragment
is ignored, overlapping ones lose their datagram (as on Linux); ARP: a
neighbour that never answers is asked three times a second apart and
given up, a known one is confirmed by a unicast request; what must
get no answer (a broadcast ping, a frame for another MAC) gets none. Then
100,000 malformed frames of twenty-two kinds, after which the stack still
answers and has counted them; last, six datagrams that never complete
from one sender: the four newest (a sender has at most four in
reassembly) end 30 s later in an ICMP time exceeded each, after which the
stack's memory is what it was before the conversations.
The guest runs tests/programs/netpeer role=echo at 10.9.0.2."""
import random
import re
import socket
import threading
import time

import pytest

from conftest import REPO
from petrel import netrelay, paths, qemu

scapy = pytest.importorskip("scapy.all", reason="scapy is installed by ./petrel setup")
from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, Raw, fragment  # noqa: E402
from scapy.layers.inet import in4_chksum  # noqa: E402

# (it times the stack's answers and its silences)
pytestmark = pytest.mark.serial

GUEST_IP, HOST_IP = "10.9.0.2", "10.9.0.9"
GUEST_MAC, HOST_MAC = "52:54:00:12:34:56", "02:00:00:00:00:09"
FLOOD = 100_000


class Wire:
    """This test's end of the guest's NIC. Like a host on the link, it
    answers the guest's ARP requests for HOST_IP (and records every ARP
    request the guest sends: time, Ethernet destination, address asked)."""

    def __init__(self):
        self.arp_seen = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.guest = ("127.0.0.1", netrelay.free_port())
        self.net = f"link:{self.guest[1]}:{self.sock.getsockname()[1]}"

    def send(self, frame):
        self.sock.sendto(bytes(frame), self.guest)

    def _arp(self, data):
        if len(data) < 42 or data[12:14] != b"\x08\x06" or data[20:22] != b"\x00\x01":
            return
        asked = socket.inet_ntoa(data[38:42])
        self.arp_seen.append((time.monotonic(), data[0:6], asked))
        if asked == HOST_IP:
            self.send(Ether(src=HOST_MAC, dst=GUEST_MAC) /
                      ARP(op=2, hwsrc=HOST_MAC, psrc=HOST_IP, hwdst=GUEST_MAC, pdst=socket.inet_ntoa(data[28:32])))

    # The frames that come within `seconds` and that `match` takes.
    def expect(self, match, seconds=2.0, count=1):
        got, end = [], time.monotonic() + seconds
        while len(got) < count and time.monotonic() < end:
            self.sock.settimeout(max(0.01, end - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            self._arp(data)
            frame = Ether(data)
            if match(frame):
                got.append(frame)
        return got

    def drain(self):
        self.sock.settimeout(0)
        try:
            while True:
                self._arp(self.sock.recv(65536))
        except (BlockingIOError, socket.timeout):
            pass


def checksums_hold(frame) -> bool:
    """Do the IP, ICMP and UDP checksums of a received frame verify?"""
    again = Ether(bytes(frame))
    for layer in (IP, ICMP, UDP, TCP):
        if layer in again:
            sent = again[layer].chksum
            del again[layer].chksum
            if Ether(bytes(again))[layer].chksum != sent:
                return False
            again = Ether(bytes(frame))
    return True


def udp_data(frame) -> bytes:
    """A received datagram's data (without the frame's padding)."""
    return bytes(frame[UDP])[8:frame[UDP].len]


def echo_in_fragments(wire, data, sport, frags):
    """Send the IP fragments `frags` (of a datagram to port 7 from sport
    carrying `data`) and answer the echo's fragments as received (each
    checked: the guest's address, DF clear, MF on all but the last, offsets
    in 8-byte units, header checksums) and its reassembled UDP payload,
    whose length and checksum are checked; (None, []) if no echo came."""
    for f in frags:
        wire.send(to_guest(f))
    want = (len(data) + 8 + 1479) // 1480
    got = wire.expect(lambda f: IP in f and f[IP].src == GUEST_IP and f[IP].proto == 17, 2.0, want)
    if not got:
        return None, []
    got.sort(key=lambda f: f[IP].frag)
    payload = b""
    for i, f in enumerate(got):
        ip = f[IP]
        last = i == len(got) - 1
        assert (ip.dst, ip.id, ip.flags.DF, ip.flags.MF, ip.frag * 8) == \
            (HOST_IP, got[0][IP].id, 0, 0 if last else 1, len(payload)), f.summary()
        assert last or ip.len == 1500, f.summary()
        again = IP(bytes(ip)[:20])
        del again.chksum
        assert IP(bytes(again)).chksum == ip.chksum, f"fragment {i}: bad header checksum"
        payload += bytes(ip.payload)[:ip.len - 20]
    udp = UDP(payload)
    assert (udp.sport, udp.dport, udp.len, len(payload)) == (7, sport, 8 + len(data), 8 + len(data))
    assert in4_chksum(17, IP(src=GUEST_IP, dst=HOST_IP), payload) == 0, "bad UDP checksum over the datagram"
    return payload[8:], got


def stack_counters(wire):
    """The guest's stack's counters by name (asked of netpeer)."""
    for _ in range(5):
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4999, dport=7) / Raw(b"stats?")))
        got = wire.expect(lambda f: UDP in f and f[UDP].dport == 4999, 1.0)
        if got:
            counters = {k.decode(): int(v) for k, v in re.findall(rb"(\w+) (\d+)", udp_data(got[0]))}
            assert "mem" in counters, udp_data(got[0])
            return counters
    raise AssertionError("netpeer did not say its stack's counters")


def stack_memory(wire):
    """The bytes the guest's stack holds allocated."""
    return stack_counters(wire)["mem"]


def to_guest(payload):
    return Ether(src=HOST_MAC, dst=GUEST_MAC) / payload


def hostile_frames(rng):
    """Malformed frames of every kind (Ethernet payloads and whole frames), as bytes."""
    good = bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7) / Raw(b"x" * 32)))
    eth, ip = good[:14], bytearray(good[14:])

    def with_ip(mutate):
        b = bytearray(ip)
        mutate(b)
        return eth + bytes(b)

    kinds = {
        "runt": lambda: good[:rng.randrange(1, 14)],
        "truncated IP header": lambda: eth + bytes(ip[:rng.randrange(0, 20)]),
        "IP version 6 in an IPv4 frame": lambda: with_ip(lambda b: b.__setitem__(0, 0x65)),
        "IHL below 5": lambda: with_ip(lambda b: b.__setitem__(0, 0x40 | rng.randrange(0, 5))),
        "options past the header": lambda: with_ip(lambda b: b.__setitem__(0, 0x4f)),
        "total length past the frame": lambda: with_ip(lambda b: b.__setitem__(slice(2, 4), (len(ip) + rng.randrange(1, 2000)).to_bytes(2, "big"))),
        "total length inside the header": lambda: with_ip(lambda b: b.__setitem__(slice(2, 4), rng.randrange(0, 20).to_bytes(2, "big"))),
        "bad IP checksum": lambda: with_ip(lambda b: b.__setitem__(10, b[10] ^ (1 << rng.randrange(8)))),
        "UDP length past the packet": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7, len=rng.randrange(41, 65535)) / Raw(b"x" * 32))),
        "UDP length below its header": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7, len=rng.randrange(0, 8)) / Raw(b"x" * 32))),
        "bad UDP checksum": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7, chksum=rng.randrange(1, 65535)) / Raw(b"y" * 32))),
        "ICMP with a bad checksum": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / ICMP(type=8, chksum=rng.randrange(1, 65535)) / Raw(b"p" * 16))),
        "truncated ICMP": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP, proto=1) / Raw(b"\x08" * rng.randrange(0, 8)))),
        "fragment": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP, flags="MF", frag=rng.randrange(0, 100)) / UDP(sport=4000, dport=7) / Raw(b"f" * 64))),
        "TCP data offset past the segment": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / TCP(sport=4000, dport=80, dataofs=rng.randrange(6, 16), flags="S"))),
        "fragment past the largest datagram": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP, id=9, flags="MF", frag=rng.randrange(8180, 8192)) / Raw(b"b" * 64))),
        "overlapping last fragment": lambda: bytes(to_guest(IP(src=HOST_IP, dst=GUEST_IP, frag=rng.randrange(1, 8)) / Raw(b"o" * 64))),
        "martian source 127.0.0.1": lambda: bytes(to_guest(IP(src="127.0.0.1", dst=GUEST_IP) / ICMP() / Raw(b"m" * 8))),
        "truncated ARP": lambda: eth[:12] + b"\x08\x06" + bytes(ARP(op=1, psrc=HOST_IP, pdst=GUEST_IP, hwsrc=HOST_MAC))[:rng.randrange(0, 28)],
        "ARP with 7-byte addresses": lambda: eth[:12] + b"\x08\x06" + bytes(ARP(op=1, hwlen=7, psrc=HOST_IP, pdst=GUEST_IP, hwsrc=HOST_MAC)),
        "garbage": lambda: eth[:12] + b"\x08\x00" + rng.randbytes(rng.randrange(0, 1500)),
        "oversized frame": lambda: eth + bytes(ip) + rng.randbytes(rng.randrange(1501, 1900)),
    }
    return kinds


@pytest.fixture(params=["netpeer-echo-kernel", "netpeer-echo"], ids=["kernel", "user"])
def guest(request):
    system = request.param
    assert paths.system_image(system).exists(), "run ./petrel build first"
    wire = Wire()
    result = {}

    def boot():
        argv = qemu.build_argv(paths.kernel_bin(), paths.system_image(system), qemu.Machine(net=wire.net), "")
        result["run"] = qemu.run(argv, 90)
    thread = threading.Thread(target=boot)
    thread.start()
    yield wire, result, thread
    for _ in range(3):                  # (after a failure: netpeer ends at "quit")
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7) / Raw(b"quit")))
    thread.join(timeout=100)


def resolve(wire):
    """Ask for the guest's MAC (ARP) until it has booted and answers."""
    req = Ether(src=HOST_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=HOST_MAC, psrc=HOST_IP, pdst=GUEST_IP)
    for _ in range(150):
        wire.send(req)
        got = wire.expect(lambda f: ARP in f and f[ARP].op == 2, 0.1)
        if got:
            return got[0]
    raise AssertionError("the guest never answered ARP")


def test_scripted_conversations_then_a_flood_of_malformed_frames(guest):
    wire, result, thread = guest
    reply = resolve(wire)
    a = reply[ARP]
    assert (reply.src, reply.dst, a.hwsrc, a.psrc, a.hwdst, a.pdst) == \
        (GUEST_MAC, HOST_MAC, GUEST_MAC, GUEST_IP, HOST_MAC, HOST_IP), reply.summary()
    time.sleep(0.3)                      # netpeer opens its port after the stack answers ARP
    wire.drain()
    mem_before = stack_memory(wire)

    # Ping: the reply mirrors the request.
    ping = to_guest(IP(src=HOST_IP, dst=GUEST_IP, id=77) / ICMP(type=8, id=0x1234, seq=1) / Raw(bytes(range(56))))
    wire.send(ping)
    got = wire.expect(lambda f: ICMP in f)
    assert got, "no echo reply"
    r = got[0]
    assert (r[IP].src, r[IP].dst, r[IP].ttl, r[IP].proto, r[ICMP].type, r[ICMP].code, r[ICMP].id, r[ICMP].seq) == \
        (GUEST_IP, HOST_IP, 64, 1, 0, 0, 0x1234, 1), r.summary()
    assert bytes(r[Raw]) == bytes(range(56)) and checksums_hold(r) and r.dst == HOST_MAC

    # UDP echo on port 7 (netpeer), of several sizes.
    for size in (0, 1, 100, 1472):
        data = bytes((i * 7 + size) & 0xff for i in range(size))
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=40000 + size, dport=7) / Raw(data)))
        got = wire.expect(lambda f: UDP in f)
        assert got, f"no echo of {size} bytes"
        u = got[0]
        assert (u[IP].src, u[IP].dst, u[UDP].sport, u[UDP].dport, u[UDP].len) == \
            (GUEST_IP, HOST_IP, 7, 40000 + size, 8 + size), u.summary()
        assert udp_data(u) == data and checksums_hold(u)

    # A closed port: port unreachable, quoting our header and 8 bytes.
    sent = IP(src=HOST_IP, dst=GUEST_IP, id=4242) / UDP(sport=5555, dport=9999) / Raw(b"hello?")
    wire.send(to_guest(sent))
    got = wire.expect(lambda f: ICMP in f)
    assert got and (got[0][ICMP].type, got[0][ICMP].code) == (3, 3), [g.summary() for g in got]
    quoted = bytes(got[0][ICMP].payload)
    assert quoted == bytes(sent)[:28] and checksums_hold(got[0])

    # An unknown protocol: protocol unreachable.
    wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP, proto=253) / Raw(b"\0" * 8)))
    got = wire.expect(lambda f: ICMP in f)
    assert got and (got[0][ICMP].type, got[0][ICMP].code) == (3, 2), [g.summary() for g in got]

    # TCP to a closed port (every port, so far): RST as RFC 9293 says for a
    # connection that does not exist, as Linux answers.
    def reset_for(seg):
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / seg))
        return wire.expect(lambda f: TCP in f, 0.5)
    got = reset_for(TCP(sport=5555, dport=80, seq=1000, flags="S", window=64240, options=[("MSS", 1460)]))
    assert got, "no RST for a SYN to a closed port"
    t = got[0][TCP]
    assert (got[0][IP].src, got[0][IP].dst, t.sport, t.dport, t.seq, t.ack, str(t.flags), t.window, t.dataofs) == \
        (GUEST_IP, HOST_IP, 80, 5555, 0, 1001, "RA", 0, 5) and checksums_hold(got[0]), got[0].summary()
    got = reset_for(TCP(sport=5556, dport=80, seq=50, ack=777, flags="A") / Raw(b"data"))
    assert got and (got[0][TCP].seq, got[0][TCP].ack, str(got[0][TCP].flags)) == (777, 0, "R"), got
    got = reset_for(TCP(sport=5557, dport=22, seq=2000, flags="PF") / Raw(b"12345"))
    assert got and (got[0][TCP].seq, got[0][TCP].ack, str(got[0][TCP].flags)) == (0, 2006, "RA"), got
    assert reset_for(TCP(sport=5558, dport=80, seq=1, flags="R")) == [], "an answer to a RST"
    assert reset_for(TCP(sport=5559, dport=80, seq=1, flags="S", chksum=0x1234)) == [], "an answer to a bad checksum"

    # Fragments: 4,000 bytes in three, last first; the echo comes back in
    # three of its own (1,480 + 1,480 + 1,048 bytes of the 4,008).
    data = bytes((i * 13 + 5) & 0xff for i in range(4000))
    frags = fragment(IP(src=HOST_IP, dst=GUEST_IP, id=500) / UDP(sport=41000, dport=7) / Raw(data), fragsize=1480)
    assert len(frags) == 3
    echoed, got = echo_in_fragments(wire, data, 41000, list(reversed(frags)))
    assert echoed == data and len(got) == 3, "no echo of a datagram sent in fragments out of order"
    # An exact duplicate of a fragment is ignored: the echo comes once.
    data = bytes((i * 7 + 1) & 0xff for i in range(2500))
    frags = fragment(IP(src=HOST_IP, dst=GUEST_IP, id=501) / UDP(sport=41001, dport=7) / Raw(data), fragsize=1480)
    echoed, got = echo_in_fragments(wire, data, 41001, [frags[0], frags[0], frags[1]])
    assert echoed == data and len(got) == 2, "a duplicated fragment lost its datagram"
    assert wire.expect(lambda f: IP in f and f[IP].src == GUEST_IP, 0.3) == [], "an echo came twice"
    # Overlapping fragments (the second starts 8 bytes inside the first):
    # the datagram is dropped, and what is sent of it afterwards makes no
    # whole datagram (it starts a new one, never completed).
    data = bytes(range(256)) * 8
    whole = bytes(IP(src=HOST_IP, dst=GUEST_IP, id=502) / UDP(sport=41002, dport=7) / Raw(data))
    body = whole[20:]
    first = IP(src=HOST_IP, dst=GUEST_IP, id=502, proto=17, flags="MF", frag=0) / Raw(body[:1480])
    overlap = IP(src=HOST_IP, dst=GUEST_IP, id=502, proto=17, frag=184) / Raw(body[1472:])
    rest = IP(src=HOST_IP, dst=GUEST_IP, id=502, proto=17, frag=185) / Raw(body[1480:])
    echoed, got = echo_in_fragments(wire, data, 41002, [first, overlap, rest])
    assert echoed is None and got == [], "a datagram with overlapping fragments was delivered"

    # ARP: a neighbour that never answers is asked three times, a second
    # apart, then given up (the datagram held for it is dropped); asked
    # again later, it answers and gets the next one.
    other, other_mac = "10.9.0.20", "02:00:00:00:00:20"
    wire.send(to_guest(IP(src=other, dst=GUEST_IP) / UDP(sport=43000, dport=7) / Raw(b"lost")))
    wire.expect(lambda f: False, 4.5)
    asked = [(t, dst) for t, dst, a in wire.arp_seen if a == other]
    gaps = [b[0] - a[0] for a, b in zip(asked, asked[1:])]
    assert len(asked) == 3 and all(dst == b"\xff" * 6 for _, dst in asked) and all(0.8 < g < 1.6 for g in gaps), \
        (asked, gaps)
    wire.send(to_guest(IP(src=other, dst=GUEST_IP) / UDP(sport=43000, dport=7) / Raw(b"found")))
    got = wire.expect(lambda f: ARP in f and f[ARP].op == 1 and f[ARP].pdst == other)
    assert got, "no ARP request for a neighbour asked about again"
    wire.send(Ether(src=other_mac, dst=GUEST_MAC) / ARP(op=2, hwsrc=other_mac, psrc=other, hwdst=GUEST_MAC, pdst=GUEST_IP))
    got = wire.expect(lambda f: UDP in f and f[IP].dst == other, 1.0, 2)
    assert [udp_data(f) for f in got] == [b"found"] and got[0].dst == other_mac, [f.summary() for f in got]

    # No answer to: a broadcast ping, a frame for another MAC.
    wire.send(Ether(src=HOST_MAC, dst="ff:ff:ff:ff:ff:ff") / IP(src=HOST_IP, dst="10.9.0.255") / ICMP(id=9, seq=9))
    wire.send(Ether(src=HOST_MAC, dst="02:00:00:00:00:77") / IP(src=HOST_IP, dst=GUEST_IP) / ICMP(id=8, seq=8))
    assert wire.expect(lambda f: IP in f, 0.5) == []

    # The flood: every kind, seeded (4,000 made, each sent 25 times), paced
    # so that the guest sees most of them.
    rng = random.Random(2026)
    kinds = hostile_frames(rng)
    names = sorted(kinds)
    frames = [kinds[names[i % len(names)]]() for i in range(4000)]
    for i in range(FLOOD):
        wire.send(frames[i % len(frames)])
        if i % 64 == 63:
            time.sleep(0.004)
            wire.drain()
    time.sleep(1.0)
    wire.drain()

    # The stack still answers (once it has worked through what QEMU still
    # holds of the flood), and has counted what it dropped.
    caught_up = None
    for attempt in range(60):
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / ICMP(type=8, id=0x4321, seq=attempt) / Raw(b"there?")))
        if wire.expect(lambda f: ICMP in f and f[ICMP].type == 0 and f[ICMP].id == 0x4321, 0.5):
            caught_up = attempt
            break
    if caught_up is None:
        thread.join(timeout=100)
        status, out = result.get("run", (None, ""))
        raise AssertionError(f"the stack answers no ping 30 s after the flood (status {status}): {out[-3000:]}")
    wire.drain()
    # Six datagrams that never complete (first fragments only) from this
    # sender: it has at most four in reassembly, so the two oldest give way
    # at once; the four newest time out 30 s later, each with an ICMP time
    # exceeded (fragment reassembly) quoting its first fragment.
    probes = {}
    for k in range(6):
        probe = IP(src=HOST_IP, dst=GUEST_IP, id=0x7000 + k, flags="MF") / UDP(sport=42000 + k, dport=7) / Raw(b"p" * 64)
        probes[0x7000 + k] = bytes(probe)[:28]
        wire.send(to_guest(probe))
    probes_sent = time.monotonic()
    for seq in range(2, 6):
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / ICMP(type=8, id=0x1234, seq=seq) / Raw(b"after")))
        got = wire.expect(lambda f: ICMP in f and f[ICMP].type == 0 and f[ICMP].seq == seq)
        assert got, f"no answer to ping {seq} after the flood"
    wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7) / Raw(b"still there")))
    assert wire.expect(lambda f: UDP in f and udp_data(f) == b"still there"), "no UDP echo after the flood"
    exceeded = wire.expect(lambda f: ICMP in f and f[ICMP].type == 11 and
                           int.from_bytes(bytes(f[ICMP].payload)[4:6], "big") in probes, 40.0, 4)
    waited = time.monotonic() - probes_sent
    ids = sorted(int.from_bytes(bytes(f[ICMP].payload)[4:6], "big") for f in exceeded)
    assert ids == [0x7002, 0x7003, 0x7004, 0x7005], [f.summary() for f in exceeded]
    assert 29.0 <= waited <= 40.0, waited
    for f in exceeded:
        assert (f[IP].src, f[IP].dst, f[ICMP].code) == (GUEST_IP, HOST_IP, 1) and checksums_hold(f), f.summary()
        quoted = bytes(f[ICMP].payload)
        assert quoted == probes[int.from_bytes(quoted[4:6], "big")], quoted
    # Everything the conversations and the flood made the stack allocate
    # is back (reassembly buffers, the held packet), but for the one
    # reassembly buffer it keeps for the next datagram.
    mem_after = stack_memory(wire)
    assert mem_before <= mem_after <= mem_before + 65535, (mem_before, mem_after)
    # The guest learnt this test's address from its ARP request (known,
    # not confirmed): once used it was confirmed with a unicast request.
    assert any(dst == bytes.fromhex(HOST_MAC.replace(":", "")) and a == HOST_IP for _, dst, a in wire.arp_seen), \
        wire.arp_seen[:10]
    for _ in range(3):
        wire.send(to_guest(IP(src=HOST_IP, dst=GUEST_IP) / UDP(sport=4000, dport=7) / Raw(b"quit")))
    thread.join(timeout=60)
    status, out = result["run"]
    assert status == 0, out[-2000:]
    m = re.search(r"netpeer: stack counters: ip_in (\d+) ip_dropped (\d+) udp_in (\d+) udp_dropped (\d+) "
                  r"echo_answered \d+ tx_dropped \d+ frags_in (\d+) reassembled (\d+) reasm_failed (\d+)", out)
    assert m, out[-2000:]
    ip_in, ip_dropped, frags_in, reassembled, failed = int(m[1]), int(m[2]), int(m[5]), int(m[6]), int(m[7])
    print(f"{FLOOD} hostile frames sent; the stack saw {ip_in} IPv4 packets, dropped {ip_dropped}, "
          f"took {frags_in} fragments, reassembled {reassembled} datagrams and gave up on {failed}, "
          f"answered again after {caught_up / 2:.1f} s; its memory {mem_before} bytes before, {mem_after} after")
    # 18 of the 22 kinds are IPv4 packets (runts, ARP and oversized frames
    # stop below IP). Nearly all reach the stack (QEMU drops what finds the
    # receive ring full), and every one that does is dropped and counted, or
    # (the three kinds of fragments) taken into a datagram that never
    # completes; the rest of ip_in is the conversations' packets above.
    # Only the conversations' two datagrams were whole.
    hostile_ip = FLOOD * 18 // 22
    assert ip_in >= hostile_ip * 9 // 10 and ip_dropped + frags_in >= ip_in - int(m[3]) - int(m[4]) - 20, m[0]
    assert frags_in >= FLOOD * 3 // 22 * 9 // 10 and reassembled == 2 and failed > 0, m[0]
