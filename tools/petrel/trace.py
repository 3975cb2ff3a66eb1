"""The monitor on the host: record a running guest's trace rings, decode, print, export.

Recording reads the guest's memory through QEMU (QMP's pmemsave), never
through the guest: the kernel publishes the rings' physical address in its
symbol `trace_area_pa` (found in kernel.elf), and the recorder copies the
rings every `interval` seconds, keeping its own place in each core's ring as
the guest's readers do (lib/trace_read.c), so the traced system does nothing
for it. With QEMU's -no-shutdown the recorder takes a last copy after the
guest powers off, then ends QEMU.

A trace file (`.ptrace`) is a first line "PETREL-TRACE 1", a JSON line
(counter frequency, cores, ring size), then 64-byte records as the kernel
wrote them (lib/include/trace_abi.h); a record of id 0 says how many events
of its core the recorder missed (arg 0) before the next one.

Decoding uses idl/tracepoints.toml (petrel.tracegen.load): `lines()` prints
like the Kernel Monitor paper's log (the TCP lines exactly as the guest's
/proc/net/tcpmon), `chrome_json()` and `perfetto()` export a trace with one
track per core, per thread and per TCP connection and counters of cwnd and
ssthresh, `plot()` draws cwnd and ssthresh against time for each connection.
"""
import json
import os
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from petrel import paths, tracegen

MAGIC = 0x43525450
VERSION = 1
HEADER_BYTES = 4096
CORE_OFFSET = 128
CORE_STRIDE = 64
RECORD = struct.Struct("<QQHHI5Q")
AREA_HEADER = struct.Struct("<IIIIQ")
FILE_MAGIC = b"PETREL-TRACE 1\n"
LOST = 0                    # the id of a "missed events" record in a trace file
INFINITE = 0x7fffffff       # TCP_CC_INFINITE: ssthresh before the first loss


@dataclass
class Event:
    seq: int
    time: int               # counter ticks
    id: int
    cpu: int
    pid: int
    args: tuple

    def pack(self) -> bytes:
        return RECORD.pack(self.seq, self.time, self.id, self.cpu, self.pid, *self.args)

    @classmethod
    def unpack(cls, data: bytes, off: int = 0) -> "Event":
        seq, t, i, cpu, pid, *args = RECORD.unpack_from(data, off)
        return cls(seq, t, i, cpu, pid, tuple(args))


class TraceError(ValueError):
    """A trace or a trace area this code cannot read."""


def table() -> tracegen.Table:
    return tracegen.load(paths.REPO / "idl" / "tracepoints.toml")


# ---------------------------------------------------------------- reading an area

@dataclass
class AreaInfo:
    ncpus: int
    slots: int
    freq: int

    @property
    def size(self) -> int:
        return HEADER_BYTES + self.ncpus * self.slots * RECORD.size


def area_info(header: bytes) -> AreaInfo:
    if len(header) < AREA_HEADER.size:
        raise TraceError("a trace area's header is 4096 bytes")
    magic, version, ncpus, slots, freq = AREA_HEADER.unpack_from(header)
    if magic != MAGIC or version != VERSION or not 1 <= ncpus <= 8 or slots <= 0 or slots & (slots - 1):
        raise TraceError(f"not a trace area (magic {magic:#x}, version {version})")
    return AreaInfo(ncpus, slots, freq)


def heads(header: bytes, ncpus: int) -> list:
    return [struct.unpack_from("<Q", header, CORE_OFFSET + c * CORE_STRIDE)[0] for c in range(ncpus)]


def slot_runs(first: int, head: int, slots: int) -> list:
    """The slots of a ring of `slots` that hold events first..head-1 (at
    most a ring's worth), as [lo, hi) runs: one, or two when they wrap."""
    count = min(max(head - first, 0), slots)
    start = first % slots
    if not count:
        return []
    if start + count <= slots:
        return [(start, start + count)]
    return [(start, slots), (0, start + count - slots)]


class AreaReader:
    """A reader of copies of the area, as lib/trace_read.c reads the area
    itself: its place in each core's ring and what it missed."""

    def __init__(self, info: AreaInfo, start: list):
        self.info = info
        self.next = list(start)
        self.lost = [0] * info.ncpus

    # The events of `snapshot` after this reader's place, per core in order,
    # and what was missed before each; `after` is the cores' heads read once
    # the copy was done: a slot the writer may have been overwriting while
    # it was copied counts as missed, as a changed seq does in the guest
    # (the event `slots` after it may have been half written: a copy is not
    # atomic). `quiescent`: nothing ran meanwhile (the guest had stopped),
    # so a full ring's oldest event is whole.
    def take(self, snapshot: bytes, after: list, quiescent: bool = False) -> list:
        out = []
        last = 0                                        # (the time a trailing "lost" record gets)
        for c in range(self.info.ncpus):
            head = heads(snapshot, self.info.ncpus)[c]
            n, missed = self.next[c], 0
            if head - n > self.info.slots:
                missed += head - self.info.slots - n
                n = head - self.info.slots
            ring = HEADER_BYTES + c * self.info.slots * RECORD.size
            while n < head:
                e = Event.unpack(snapshot, ring + (n % self.info.slots) * RECORD.size)
                if e.seq != n + 1 or after[c] - n > self.info.slots - (0 if quiescent else 1):
                    missed += 1
                else:
                    if missed:
                        out.append(Event(0, e.time, LOST, c, 0, (missed, 0, 0, 0, 0)))
                        self.lost[c] += missed
                        missed = 0
                    out.append(e)
                    last = max(last, e.time)
                n += 1
            if missed:
                out.append(Event(0, last, LOST, c, 0, (missed, 0, 0, 0, 0)))
                self.lost[c] += missed
            self.next[c] = n
        return out


# ---------------------------------------------------------------- recording through QEMU

class Qmp:
    """A QMP client on a unix socket: commands, and the events seen."""

    def __init__(self, path: str, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise TraceError(f"QMP socket {path}: QEMU did not open it")
                time.sleep(0.05)
        self.buf = b""
        self.events = []
        self._read()                                    # the greeting
        self.command("qmp_capabilities")

    def _read(self) -> dict:
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("QEMU closed QMP")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name: str, **args) -> dict:
        self.sock.sendall(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        while True:
            msg = self._read()
            if "event" in msg:
                self.events.append(msg["event"])
                continue
            if "error" in msg:
                raise TraceError(f"QMP {name}: {msg['error'].get('desc', msg['error'])}")
            return msg.get("return", {})

    def close(self) -> None:
        self.sock.close()


def kernel_symbol(elf: Path, name: str) -> int:
    out = subprocess.run(["llvm-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise TraceError(f"{elf}: no symbol {name} (a kernel built with CONFIG_TRACE=n records nothing)")


KERNEL_DIRECT_BASE = 0xFFFFFF8000000000


class Recorder:
    """Copies a running guest's rings into a trace file until QEMU stops."""

    def __init__(self, qmp_path: str, out: Path, kernel_elf: Path, interval: float = 0.05, on_events=None):
        self.qmp_path, self.out, self.interval = qmp_path, Path(out), interval
        self.on_events = on_events          # called with each copy's new events, in time order
        self.pa_of_pa = kernel_symbol(kernel_elf, "trace_area_pa") - KERNEL_DIRECT_BASE
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error = None
        self.events = 0
        self.lost = 0
        self.stop = threading.Event()

    def start(self) -> None:
        self.thread.start()

    def join(self, timeout: float = 30.0) -> None:
        self.thread.join(timeout)

    def _read(self, q: Qmp, tmp: str, pa: int, size: int) -> bytes:
        q.command("pmemsave", val=pa, size=size, filename=tmp)
        return Path(tmp).read_bytes()

    def _run(self) -> None:
        fd, tmp = tempfile.mkstemp(prefix="petrel-trace-")
        os.close(fd)
        try:
            q = Qmp(self.qmp_path)
            self._record(q, tmp)
        except (OSError, EOFError, TraceError) as e:
            self.error = str(e)
        finally:
            os.unlink(tmp)

    def _record(self, q: Qmp, tmp: str) -> None:
        while True:                                     # until the kernel has made its rings
            stopped = self._stopped(q)
            pa = struct.unpack("<Q", self._read(q, tmp, self.pa_of_pa, 8))[0]
            if pa:
                break
            if stopped:
                raise TraceError("the kernel made no trace rings (CONFIG_TRACE=n, or no memory for them)")
            time.sleep(self.interval)
        info = area_info(self._read(q, tmp, pa, HEADER_BYTES))
        reader = AreaReader(info, [0] * info.ncpus)
        copy = bytearray(info.size)                     # (one, refreshed where the reader needs it)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        with open(self.out, "wb") as f:
            f.write(FILE_MAGIC)
            f.write(json.dumps({"freq": info.freq, "ncpus": info.ncpus, "slots": info.slots}).encode() + b"\n")
            while True:
                last = self._stopped(q)
                snap = self._snapshot(q, tmp, pa, info, reader.next, copy)
                after = heads(self._read(q, tmp, pa, HEADER_BYTES), info.ncpus)
                new = reader.take(snap, after, quiescent=last)
                for e in new:
                    f.write(e.pack())
                    self.events += e.id != LOST
                f.flush()
                if self.on_events and new:
                    self.on_events(sorted(new, key=lambda e: (e.time, e.cpu, e.seq)))
                if last:
                    break
                time.sleep(self.interval)
        self.lost = sum(reader.lost)
        try:
            q.command("quit")
        except (OSError, EOFError, TraceError):
            pass

    # `copy` brought up to date as far as a reader at `next` needs it: the
    # header, then of each core's ring the slots written since (at most a
    # ring); the other slots keep what they had. Copying the whole area
    # each time (2 MiB with the default slots) kept this thread busy long
    # enough to delay the frames of a network relay in the same process
    # (tcpbench's): a tenth less throughput at 10 ms RTT (./petrel bench
    # --suite tcp --only monitor_cost). A copy is now about what was
    # written meanwhile, into the one buffer.
    def _snapshot(self, q: Qmp, tmp: str, pa: int, info: AreaInfo, next_: list, copy: bytearray) -> bytearray:
        header = self._read(q, tmp, pa, HEADER_BYTES)
        copy[:HEADER_BYTES] = header
        for c, head in enumerate(heads(header, info.ncpus)):
            first = max(next_[c], head - info.slots)
            for lo, hi in slot_runs(first, head, info.slots):
                off = HEADER_BYTES + (c * info.slots + lo) * RECORD.size
                copy[off:off + (hi - lo) * RECORD.size] = self._read(q, tmp, pa + off, (hi - lo) * RECORD.size)
        return copy

    # Has the guest powered off (QEMU, with -no-shutdown, keeps its memory)?
    def _stopped(self, q: Qmp) -> bool:
        status = q.command("query-status")
        return self.stop.is_set() or status.get("status") in ("shutdown", "guest-panicked", "internal-error") \
            or not status.get("running", True) and status.get("status") != "prelaunch"


def watch(proc: subprocess.Popen, rec: Recorder) -> None:
    """Start rec on proc (a QEMU with qemu_argv's options): once it is done
    (QEMU quit, or the recording failed), a QEMU still there is ended, as
    -no-shutdown would otherwise keep it after the guest powers off."""
    def end():
        rec.thread.join()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    rec.start()
    threading.Thread(target=end, daemon=True).start()


def strace_printer():
    """A recorder's on_events that prints the Linux calls as strace does, on stderr."""
    import sys
    from petrel import strace
    view = strace.Strace(table())

    def show(events):
        for line in view.feed(events):
            print(line, file=sys.stderr, flush=True)
    return show


def summary(rec: Recorder, out: Path) -> str:
    if rec.error:
        return f"trace: recording failed: {rec.error}"
    return (f"trace: {rec.events} events in {out}" + (f" ({rec.lost} missed)" if rec.lost else "") +
            f"; see them with ./petrel trace {out}")


def qemu_argv(qmp_path: str) -> list:
    """What QEMU needs to be recorded: a QMP socket, and to stay after power-off."""
    return ["-qmp", f"unix:{qmp_path},server=on,wait=off", "-no-shutdown"]


# ---------------------------------------------------------------- trace files

@dataclass
class Trace:
    freq: int
    ncpus: int
    slots: int
    events: list = field(default_factory=list)

    def seconds(self, e: Event) -> float:
        return e.time / self.freq

    @property
    def lost(self) -> int:
        return sum(e.args[0] for e in self.events if e.id == LOST)


def load(path: Path) -> Trace:
    data = Path(path).read_bytes()
    if not data.startswith(FILE_MAGIC):
        raise TraceError(f"{path}: not a Petrel trace (no '{FILE_MAGIC.decode().strip()}' line)")
    end = data.index(b"\n", len(FILE_MAGIC))
    meta = json.loads(data[len(FILE_MAGIC):end])
    body = data[end + 1:]
    if len(body) % RECORD.size:
        body = body[:len(body) - len(body) % RECORD.size]      # (a recording cut short)
    t = Trace(int(meta["freq"]) or 1, int(meta["ncpus"]), int(meta["slots"]))
    t.events = [Event.unpack(body, off) for off in range(0, len(body), RECORD.size)]
    return t


def write(path: Path, t: Trace) -> None:
    with open(path, "wb") as f:
        f.write(FILE_MAGIC)
        f.write(json.dumps({"freq": t.freq, "ncpus": t.ncpus, "slots": t.slots}).encode() + b"\n")
        for e in t.events:
            f.write(e.pack())


# Events in time order (sorted: a ring holds a service's batches after later kernel events).
def ordered(t: Trace) -> list:
    return sorted(t.events, key=lambda e: (e.time, e.cpu, e.seq))


def select(t: Trace, tab: tracegen.Table, groups=None, conns=None) -> list:
    byid = tab.by_id()
    out = []
    for e in ordered(t):
        p = byid.get(e.id)
        if e.id != LOST and (p is None or (groups and p.group not in groups)):
            continue
        if conns is not None and (p is None or p.group != "tcp" or e.args[0] not in conns):
            continue
        out.append(e)
    return out


# ---------------------------------------------------------------- printing

def value(tab: tracegen.Table, f: tracegen.Field, v: int) -> str:
    if f.enum:
        names = tab.enums[f.enum][1]
        return names[v] if v < len(names) else str(v)
    if f.type == "hex":
        return hex(v)
    if f.type == "i64":
        return str(v - (1 << 64) if v >> 63 else v)
    if f.type == "u32":
        return str(v & 0xffffffff)
    return str(v)


def clock(t: Trace, e: Event) -> str:
    return f"{e.time // t.freq:6d}.{(e.time % t.freq) * 1000000000 // t.freq:09d}"


# The TCP log line of /proc/net/tcpmon (services/linux/tcpmon.c), or None.
def tcp_line(t: Trace, tab: tracegen.Table, e: Event) -> str:
    p = tab.by_id().get(e.id)
    if p is None or p.group != "tcp":
        return None
    a = e.args
    why = tab.enums["tcp_why"][1]
    states = tab.enums["tcp_state"][1]
    name = lambda names, v: names[v] if v < len(names) else "?"
    cwnd = ssthresh = "-"
    if p.name == "tcp_cwnd":
        event, cwnd = name(why, a[1]), str(a[2] & 0xffffffff)
        ssthresh = "inf" if a[3] >= INFINITE else str(a[3] & 0xffffffff)
        detail = f"flight={a[4] & 0xffffffff}"
    elif p.name == "tcp_rtt":
        event, detail = "rtt", f"sample={a[1]}us srtt={a[2]}us rttvar={a[3]}us rto={a[4]}ms"
    elif p.name == "tcp_state":
        event, detail = "state", f"{name(states, a[1])}>{name(states, a[2])} ports={a[3]}>{a[4]}"
    elif p.name == "tcp_dupack":
        event, detail = "dup_ack", f"n={a[1]} ack={a[2]:#x} sacked={a[3]}"
    elif p.name == "tcp_retransmit":
        event, detail = "retransmit", f"seq={a[1]:#x} len={a[2]} why={name(why, a[3])}"
    elif p.name == "tcp_window":
        event, detail = "rwnd", f"rwnd={a[1]} flight={a[2]}"
    elif p.name == "tcp_rcvbuf":
        event, detail = "rcvbuf", f"size={a[1]} grown={a[2]}"
    else:
        return None
    return f"{clock(t, e)} {a[0] & 0xffffffff:5d}  {event:<11s} {cwnd:>8s} {ssthresh:>8s}  {detail}"


TCP_HEADER = "#       time  conn  event           cwnd ssthresh  detail"


def lines(t: Trace, tab: tracegen.Table, events: list):
    """The log: TCP events as /proc/net/tcpmon prints them, others as
    time, core, process, tracepoint and fields."""
    from petrel import strace
    byid = tab.by_id()
    calls = strace.Strace(tab)
    yield TCP_HEADER
    for e in events:
        if e.id == LOST:
            yield f"# lost {e.args[0]} events of cpu {e.cpu} (the rings overwrote them before the recorder came)"
            continue
        line = tcp_line(t, tab, e)
        if byid[e.id].group == "linux":
            for said in calls.feed([e]):
                yield f"{clock(t, e)} cpu{e.cpu} {said}"
            continue
        if line is None:
            p = byid[e.id]
            fields = " ".join(f"{f.name}={value(tab, f, v)}" for f, v in zip(p.fields, e.args))
            line = f"{clock(t, e)} cpu{e.cpu} pid {e.pid:<4d} {p.name:<14s} {fields}"
        yield line
    yield from calls.unfinished()


# ---------------------------------------------------------------- connections

# Per TCP connection: (times in seconds, cwnd, ssthresh) of its tcp_cwnd events.
def windows(t: Trace, tab: tracegen.Table, events: list) -> dict:
    cwnd_id = next(p.id for p in tab.points if p.name == "tcp_cwnd")
    out = {}
    for e in events:
        if e.id == cwnd_id:
            ts, cw, ss = out.setdefault(e.args[0] & 0xffffffff, ([], [], []))
            ts.append(t.seconds(e))
            cw.append(e.args[2] & 0xffffffff)
            ss.append(None if e.args[3] >= INFINITE else e.args[3] & 0xffffffff)
    return out


def plot(t: Trace, tab: tracegen.Table, events: list, out: Path, title: str = "") -> int:
    """cwnd and ssthresh against time, one panel per connection; returns the connections drawn."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    w = windows(t, tab, events)
    if not w:
        raise TraceError("no tcp_cwnd events to plot (record with the tcp group: --trace tcp)")
    fig, axes = plt.subplots(len(w), 1, figsize=(8, 2.6 * len(w)), squeeze=False, sharex=True)
    for ax, (conn, (ts, cw, ss)) in zip(axes[:, 0], sorted(w.items())):
        ax.step(ts, [c / 1024 for c in cw], where="post", label="cwnd")
        pts = [(x, s / 1024) for x, s in zip(ts, ss) if s is not None]
        if pts:
            ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", label="ssthresh", linestyle="--")
        ax.set_ylabel("KiB")
        ax.set_title(f"connection {conn}", fontsize=9)
        ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return len(w)


# ---------------------------------------------------------------- Chrome JSON

def chrome_json(t: Trace, tab: tracegen.Table, events: list) -> dict:
    """The Trace Event Format: instants on (process, thread) tracks, each
    core's running thread as slices, counters of cwnd and ssthresh."""
    byid = tab.by_id()
    out, running = [], {}
    us = lambda e: e.time * 1e6 / t.freq
    for e in events:
        if e.id == LOST:
            out.append({"name": "lost", "ph": "i", "s": "g", "ts": us(e), "pid": 0, "tid": 0,
                        "args": {"events": e.args[0], "cpu": e.cpu}})
            continue
        p = byid[e.id]
        args = {f.name: value(tab, f, v) for f, v in zip(p.fields, e.args)}
        if p.name == "sched_switch":
            prev = running.pop(e.cpu, None)
            if prev:
                out.append({"name": prev[0], "ph": "X", "ts": prev[1], "dur": us(e) - prev[1], "pid": "cpus",
                            "tid": f"cpu{e.cpu}"})
            if e.args[2]:
                running[e.cpu] = (f"pid {e.args[3]} tid {e.args[2]}", us(e))
        if p.name == "tcp_cwnd":
            conn = e.args[0] & 0xffffffff
            vals = {"cwnd": e.args[2] & 0xffffffff}
            if e.args[3] < INFINITE:
                vals["ssthresh"] = e.args[3] & 0xffffffff
            out.append({"name": f"tcp {conn}", "ph": "C", "ts": us(e), "pid": "tcp", "args": vals})
        out.append({"name": p.name, "cat": p.group, "ph": "i", "s": "t", "ts": us(e), "pid": e.pid,
                    "tid": e.cpu, "args": args})
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"source": "Petrel monitor", "lost": t.lost}}


# ---------------------------------------------------------------- Perfetto (protobuf TrackEvent)

def _varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(num: int, wire: int) -> bytes:
    return _varint(num << 3 | wire)


def _int(num: int, v: int) -> bytes:
    return _key(num, 0) + _varint(v)


def _bytes(num: int, v: bytes) -> bytes:
    return _key(num, 2) + _varint(len(v)) + v


def _str(num: int, v: str) -> bytes:
    return _bytes(num, v.encode())


# Field numbers of perfetto's trace.proto (TracePacket, TrackDescriptor, TrackEvent, ...).
PKT_TIMESTAMP, PKT_SEQ_ID, PKT_TRACK_EVENT, PKT_SEQ_FLAGS, PKT_TRACK_DESCRIPTOR = 8, 10, 11, 13, 60
TD_UUID, TD_NAME, TD_PROCESS, TD_THREAD, TD_PARENT, TD_COUNTER = 1, 2, 3, 4, 5, 8
PD_PID, PD_NAME = 1, 6
THD_PID, THD_TID, THD_NAME = 1, 2, 5
CD_UNIT = 3
TE_ANNOTATIONS, TE_TYPE, TE_TRACK, TE_NAME, TE_CATEGORIES, TE_COUNTER = 4, 9, 11, 23, 22, 30
DA_UINT, DA_INT, DA_STRING, DA_NAME = 3, 4, 6, 10
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
SEQ = 1
SEQ_INCREMENTAL_STATE_CLEARED = 1
UNIT_COUNT = 4


def _packet(body: bytes, ts: int = None) -> bytes:
    pkt = (_int(PKT_TIMESTAMP, ts) if ts is not None else b"") + _int(PKT_SEQ_ID, SEQ) + body
    return _bytes(1, pkt)                               # Trace.packet


def perfetto(t: Trace, tab: tracegen.Table, events: list) -> bytes:
    """A Perfetto trace: a track per core (its threads as slices), per
    process and thread (their events as instants), per TCP connection (its
    events), and counter tracks of each connection's cwnd and ssthresh."""
    byid = tab.by_id()
    ns = lambda e: e.time * 1000000000 // t.freq
    out = [_bytes(1, _int(PKT_SEQ_ID, SEQ) + _int(PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED))]
    uuids = {}

    def track(key, desc: bytes) -> int:
        if key not in uuids:
            uuids[key] = len(uuids) + 1
            out.append(_packet(_bytes(PKT_TRACK_DESCRIPTOR, _int(TD_UUID, uuids[key]) + desc)))
        return uuids[key]

    def cpu_track(c):
        return track(("cpu", c), _str(TD_NAME, f"cpu{c}"))

    def process_track(pid):
        return track(("pid", pid), _bytes(TD_PROCESS, _int(PD_PID, pid) +
                                          _str(PD_NAME, "kernel" if pid == 0 else f"process {pid}")))

    def thread_track(pid, tid):
        parent = process_track(pid)
        return track(("tid", pid, tid), _int(TD_PARENT, parent) + _bytes(
            TD_THREAD, _int(THD_PID, pid) + _int(THD_TID, tid) + _str(THD_NAME, f"thread {tid}")))

    def conn_track(conn):
        return track(("conn", conn), _str(TD_NAME, f"tcp connection {conn}"))

    def counter_track(conn, what):
        parent = conn_track(conn)
        return track(("counter", conn, what), _str(TD_NAME, f"tcp {conn} {what}") + _int(TD_PARENT, parent) +
                     _bytes(TD_COUNTER, _int(CD_UNIT, UNIT_COUNT)))

    def instant(trk, name, cat, e, p):
        ann = b""
        for f, v in zip(p.fields, e.args) if p else ():
            shown = value(tab, f, v)
            ann += _bytes(TE_ANNOTATIONS, _str(DA_NAME, f.name) + (
                _str(DA_STRING, shown) if f.enum or f.type == "hex" else
                _int(DA_INT, int(shown)) if f.type == "i64" else _int(DA_UINT, int(shown))))
        out.append(_packet(_bytes(PKT_TRACK_EVENT, _int(TE_TYPE, INSTANT) + _int(TE_TRACK, trk) + _str(TE_NAME, name) +
                                  _str(TE_CATEGORIES, cat) + ann), ns(e)))

    open_slice = {}
    tid_pid = {}
    for e in events:
        if e.id == LOST:
            instant(cpu_track(e.cpu), f"lost {e.args[0]} events", "lost", e, None)
            continue
        p = byid[e.id]
        if p.name == "sched_switch":
            prev_tid, prev_pid, next_tid, next_pid = e.args[:4]
            trk = cpu_track(e.cpu)
            if open_slice.get(e.cpu):
                out.append(_packet(_bytes(PKT_TRACK_EVENT, _int(TE_TYPE, SLICE_END) + _int(TE_TRACK, trk)), ns(e)))
                open_slice[e.cpu] = False
            if next_tid:
                tid_pid[next_tid] = next_pid
                out.append(_packet(_bytes(PKT_TRACK_EVENT, _int(TE_TYPE, SLICE_BEGIN) + _int(TE_TRACK, trk) +
                                          _str(TE_NAME, f"pid {next_pid} tid {next_tid}")), ns(e)))
                open_slice[e.cpu] = True
            continue
        if p.group == "tcp":
            conn = e.args[0] & 0xffffffff
            instant(conn_track(conn), p.name, p.group, e, p)
            if p.name == "tcp_cwnd":
                out.append(_packet(_bytes(PKT_TRACK_EVENT, _int(TE_TYPE, COUNTER) + _int(TE_TRACK, counter_track(
                    conn, "cwnd")) + _int(TE_COUNTER, e.args[2] & 0xffffffff)), ns(e)))
                if e.args[3] < INFINITE:
                    out.append(_packet(_bytes(PKT_TRACK_EVENT, _int(TE_TYPE, COUNTER) + _int(
                        TE_TRACK, counter_track(conn, "ssthresh")) + _int(TE_COUNTER, e.args[3])), ns(e)))
            continue
        if p.group == "linux":
            instant(thread_track(1000000 + e.args[0], e.args[1]), p.name, p.group, e, p)
            continue
        instant(process_track(e.pid) if e.pid else cpu_track(e.cpu), p.name, p.group, e, p)
    return b"".join(out)


# ---------------------------------------------------------------- the command

def main(args) -> int:
    tab = table()
    try:
        t = load(args.file)
    except (OSError, TraceError, ValueError) as e:
        print(f"trace: {e}")
        return 2
    groups = set(args.filter.split(",")) if args.filter else None
    if groups and not groups <= set(tab.groups):
        print(f"trace: --filter {args.filter}: groups are {', '.join(tab.groups)}")
        return 2
    conns = {int(c) for c in args.conn.split(",")} if args.conn else None
    events = select(t, tab, groups, conns)
    wrote = False
    if args.perfetto:
        Path(args.perfetto).write_bytes(perfetto(t, tab, events))
        print(f"trace: {args.perfetto}: Perfetto trace of {len(events)} events (open in ui.perfetto.dev)")
        wrote = True
    if args.json:
        Path(args.json).write_text(json.dumps(chrome_json(t, tab, events)))
        print(f"trace: {args.json}: Chrome JSON trace of {len(events)} events")
        wrote = True
    if args.plot:
        try:
            n = plot(t, tab, events, Path(args.plot), args.title or Path(args.file).name)
        except TraceError as e:
            print(f"trace: {e}")
            return 1
        print(f"trace: {args.plot}: cwnd and ssthresh of {n} connection(s)")
        wrote = True
    try:
        if args.strace:
            from petrel import strace
            view = strace.Strace(tab)
            for line in view.feed(events) + view.unfinished():
                print(line)
        elif not wrote or args.print:
            for line in lines(t, tab, events):
                print(line)
    except BrokenPipeError:
        pass
    return 0
