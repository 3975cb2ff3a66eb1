"""The project's own network link: two QEMUs joined through a relay on
127.0.0.1 that can delay, drop, duplicate, reorder and corrupt frames and
cap the bandwidth, all decided by a seeded random generator, so that a run
can be replayed.

Each QEMU gets a `dgram` netdev (qemu.Machine(net="link:GUEST:RELAY")):
it sends every frame as one UDP datagram to the relay's port for its side
and receives on its own port. The relay forwards each frame to the other
side after its impairments:

- delay: a fixed one-way delay (half the round trip asked for);
- rate: the link's bandwidth in bits a second (0: none), a frame waiting
  until the ones before it are through;
- loss, duplicate, reorder, corrupt: each a probability per frame. A
  reordered frame is held back until the next frame of its direction has
  gone (or twice the delay and 10 ms have passed); a corrupted one has one
  byte after its Ethernet header changed; a duplicate goes 1 ms after it.

The decisions for each direction come from their own generator seeded
with the seed and the direction, in the order frames arrive: the same
frames in the same order meet the same fate. `Relay.stats` counts what was
done to each direction's frames.
"""
import heapq
import random
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field

HOST = "127.0.0.1"
ETH_HEADER = 14


@dataclass
class Impairments:
    """What the link does to frames (every probability from 0 to 1)."""
    rtt_ms: float = 0.0         # round trip: each direction delays a frame by half of it
    rate_bps: int = 0           # bandwidth cap (0: none)
    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    corrupt: float = 0.0
    seed: int = 1

    def check(self) -> None:
        for name in ("loss", "duplicate", "reorder", "corrupt"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} {value!r}: expected a probability from 0 to 1")
        if not 0 <= self.rtt_ms <= 10000:
            raise ValueError(f"rtt_ms {self.rtt_ms!r}: expected 0 to 10000")
        if self.rate_bps < 0:
            raise ValueError(f"rate_bps {self.rate_bps!r}: expected 0 (no cap) or more")


@dataclass
class DirectionStats:
    """What happened to one direction's frames."""
    frames: int = 0             # arrived at the relay
    dropped: int = 0
    duplicated: int = 0
    reordered: int = 0
    corrupted: int = 0
    delivered: int = 0          # sent on, duplicates included
    fates: list = field(default_factory=list)   # per frame in arrival order: "l" (lost), or any of
                                                # "d", "r", "c" (duplicated, held back, corrupted), or ""


# A free UDP port on 127.0.0.1 (for a QEMU to bind: the relay learns it).
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Relay:
    """Joins side "a" and side "b": a QEMU on side X sends to port_for[X]
    and listens on guest_port[X]. start() runs it on a thread; stop() ends it."""

    def __init__(self, imp: Impairments):
        imp.check()
        self.imp = imp
        self.socks = {}
        self.port_for, self.guest_port = {}, {}
        for side in ("a", "b"):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)   # a burst waits here, not lost
            s.bind((HOST, 0))
            s.setblocking(False)
            self.socks[side] = s
            self.port_for[side] = s.getsockname()[1]
            self.guest_port[side] = free_port()
        self.stats = {"ab": DirectionStats(), "ba": DirectionStats()}
        self._rng = {d: random.Random(f"{imp.seed}:{d}") for d in ("ab", "ba")}
        self._queue = []            # (time, order, side to, frame)
        self._order = 0
        self._line_free = {"ab": 0.0, "ba": 0.0}
        self._held = {"ab": None, "ba": None}     # (deadline, frame) of a reordered frame
        self._stop = threading.Event()
        self._thread = None

    # The netdev argument (qemu.Machine.net) for the QEMU of `side`.
    def net_for(self, side: str) -> str:
        return f"link:{self.guest_port[side]}:{self.port_for[side]}"

    def start(self) -> "Relay":
        self._thread = threading.Thread(target=self._run, name="netrelay", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        for s in self.socks.values():
            s.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _schedule(self, at: float, to: str, frame: bytes) -> None:
        self._order += 1
        heapq.heappush(self._queue, (at, self._order, to, frame))

    # When a frame of `size` bytes leaving at `ready` is through the direction's line.
    def _through(self, direction: str, ready: float, size: int) -> float:
        if not self.imp.rate_bps:
            return ready
        start = max(ready, self._line_free[direction])
        self._line_free[direction] = start + size * 8 / self.imp.rate_bps
        return self._line_free[direction]

    def _arrive(self, frm: str, frame: bytes, now: float) -> None:
        direction, to = ("ab", "b") if frm == "a" else ("ba", "a")
        st, rng, imp = self.stats[direction], self._rng[direction], self.imp
        st.frames += 1
        # Four draws a frame, always, so one fate does not shift the next frame's.
        lost, dup, reorder, corrupt = (rng.random() < p for p in (imp.loss, imp.duplicate, imp.reorder, imp.corrupt))
        where, value = rng.randrange(1 << 30), 1 + rng.randrange(255)
        if lost:
            st.dropped += 1
            st.fates.append("l")
            return
        held = self._held[direction]
        reorder = reorder and held is None              # one frame held back at a time
        st.fates.append("".join(c for c, on in (("d", dup), ("r", reorder), ("c", corrupt)) if on))
        if corrupt and len(frame) > ETH_HEADER:
            at = ETH_HEADER + where % (len(frame) - ETH_HEADER)
            frame = frame[:at] + bytes([frame[at] ^ value]) + frame[at + 1:]
            st.corrupted += 1
        when = self._through(direction, now + imp.rtt_ms / 2000, len(frame))
        if reorder:
            st.reordered += 1
            self._held[direction] = (when + max(imp.rtt_ms / 1000, 0) + 0.010, to, frame)
        else:
            self._schedule(when, to, frame)
            if held is not None:                    # it goes right after the one that overtook it
                self._schedule(when, held[1], held[2])
                self._held[direction] = None
        if dup:
            st.duplicated += 1
            self._schedule(when + 0.001, to, frame)

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for side, s in self.socks.items():
            sel.register(s, selectors.EVENT_READ, side)
        while not self._stop.is_set():
            now = time.monotonic()
            for direction, held in self._held.items():
                if held is not None and held[0] <= now:   # nothing overtook it in time
                    self._schedule(now, held[1], held[2])
                    self._held[direction] = None
            while self._queue and self._queue[0][0] <= now:
                _, _, to, frame = heapq.heappop(self._queue)
                try:
                    self.socks[to].sendto(frame, (HOST, self.guest_port[to]))
                    self.stats["ab" if to == "b" else "ba"].delivered += 1
                except OSError:
                    pass                                  # that QEMU is not listening (yet, or any more)
            deadlines = [q[0] for q in self._queue[:1]] + [h[0] for h in self._held.values() if h]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else 0.05
            for key, _ in sel.select(min(timeout, 0.05)):
                while True:
                    try:
                        frame, _ = key.fileobj.recvfrom(65536)
                    except (BlockingIOError, OSError):
                        break
                    self._arrive(key.data, frame, time.monotonic())
        sel.close()
