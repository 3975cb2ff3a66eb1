"""The monitor on the host: the tracepoint table and its generator
(tools/petrel/tracegen.py), the ring reader in C (lib/trace_read.c, built for
this machine) and in Python (tools/petrel/trace.py) on the same copies of an
area, overrun and torn, with exact counts of what they missed; trace files,
the printed log, the Perfetto export read back through perfetto's own trace
schema (the `perfetto` package's perfetto_trace_pb2), the Chrome JSON; and a
kernel configured without tracepoints holding none of their code."""
import json
from pathlib import Path
import re
import shutil
import struct
import subprocess
import sys

import pytest

from conftest import REPO
from petrel import strace, trace, tracegen

TAB = trace.table()
ID = {p.name: p.id for p in TAB.points}


# ---------------------------------------------------------------- the table and its generator

def write(tmp_path, text):
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


GOOD = """
[[group]]
name = "g"
doc = "A group."
[[enum]]
name = "e"
values = ["a", "b"]
[[point]]
id = 3
name = "p"
group = "g"
source = "service"
doc = "A point."
fields = [ { name = "x", type = "u32" }, { name = "y", type = "enum:e" } ]
"""


def test_the_table_loads_and_every_point_has_a_group_and_at_most_five_fields():
    assert TAB.points and all(p.group in TAB.groups and len(p.fields) <= 5 for p in TAB.points)
    assert len({p.id for p in TAB.points}) == len(TAB.points)
    assert {"tcp", "sched", "fault", "irq", "syscall", "linux"} <= set(TAB.groups)


@pytest.mark.parametrize("bad, why", [
    (GOOD.replace("id = 3", "id = 0"), "id must be"),
    (GOOD.replace("id = 3", "id = 256"), "id must be"),
    (GOOD.replace('group = "g"', 'group = "nope"'), "unknown group"),
    (GOOD.replace('source = "service"', 'source = "user"'), "source must be"),
    (GOOD.replace('type = "enum:e"', 'type = "enum:nope"'), "field"),
    (GOOD.replace('type = "u32"', 'type = "float"'), "field"),
    (GOOD.replace('{ name = "y"', '{ name = "x"'), "share a name"),
    (GOOD.replace("fields = [", "fields = [ { name = \"a\", type = \"u64\" }, { name = \"b\", type = \"u64\" }, "
                  "{ name = \"c\", type = \"u64\" }, { name = \"d\", type = \"u64\" },"), "at most 5"),
    (GOOD + GOOD.split("[[point]]")[1].join(["[[point]]", ""]), "unique"),
    (GOOD.replace('doc = "A point."\n', ""), "missing key"),
])
def test_a_malformed_table_is_refused_with_the_reason(tmp_path, bad, why):
    with pytest.raises(tracegen.TraceIdlError, match=why):
        tracegen.load(write(tmp_path, bad))


def test_emitters_are_generated_and_compile_to_nothing_when_configured_out(tmp_path):
    t = tracegen.load(write(tmp_path, GOOD))
    on, off = tracegen.c_header(t, True), tracegen.c_header(t, False)
    assert "#define TP_P 3" in on and "#define TRACE_E_B 1" in on and "TRACE_SERVICE_MASK0 0x8ull" in on
    assert "static inline void trace_p(uint64_t x, uint64_t y)" in on
    assert "TRACE_HIT(TP_P, x, y, 0, 0, 0);" in on
    assert "TRACE_HIT(TP_P" not in off and "(void)x;" in off
    assert 'X("g", 0x8ull, 0x0ull, 0x0ull, 0x0ull)' in on
    page = tracegen.reference(t)
    assert "### 3: `p` *service*" in page and "x (u32), y (enum:e)" in page


def test_the_reference_page_is_current():
    assert (REPO / "docs/reference/tracepoints.md").read_text() == tracegen.reference(TAB)


# ---------------------------------------------------------------- reading rings: C and Python

def area(ncpus, slots, counts, torn=(), freq=62_500_000):
    """A copy of a trace area whose core c wrote counts[c] events (event n
    at time n * ncpus + c), the slots of `torn` (core, event) caught while
    being overwritten (seq 0)."""
    buf = bytearray(trace.HEADER_BYTES + ncpus * slots * trace.RECORD.size)
    struct.pack_into("<IIIIQ", buf, 0, trace.MAGIC, trace.VERSION, ncpus, slots, freq)
    for c, count in enumerate(counts):
        struct.pack_into("<Q", buf, trace.CORE_OFFSET + c * trace.CORE_STRIDE, count)
        for n in range(max(0, count - slots), count):
            seq = 0 if (c, n) in torn else n + 1
            e = trace.Event(seq, n * ncpus + c, ID["syscall_enter"], c, 7, (n, 0, 0, 0, 0))
            off = trace.HEADER_BYTES + (c * slots + n % slots) * trace.RECORD.size
            buf[off:off + trace.RECORD.size] = e.pack()
    return bytes(buf)


@pytest.fixture(scope="module")
def cdrive(tmp_path_factory):
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler for the host (./petrel setup installs clang)")
    exe = tmp_path_factory.mktemp("trace") / "tracedrive"
    subprocess.run([compiler, "-O1", "-Wall", "-Werror", "-I", str(REPO / "lib/include"), "-o", str(exe),
                    str(REPO / "tests/host/cc/tracedrive.c"), str(REPO / "lib/trace_read.c")], check=True)

    def run(data, tmp, now=False):
        f = tmp / "area.bin"
        f.write_bytes(data)
        out = subprocess.run([str(exe), str(f)] + (["now"] if now else []), capture_output=True, text=True,
                             timeout=30, check=True).stdout.split("\n")
        if out[0] == "bad":
            return None
        events = [tuple(int(x) for x in line.split()) for line in out if line and not line.startswith("lost")]
        lost = int(next(line for line in out if line.startswith("lost")).split()[1])
        return events, lost
    return run


@pytest.mark.parametrize("ncpus, slots, counts, torn", [
    (1, 16, [10], ()),                          # nothing overwritten
    (1, 16, [16], ()),                          # exactly full
    (1, 16, [50], ()),                          # overrun: 34 missed
    (2, 8, [30, 3], ()),                        # one core overrun, the other not
    (4, 8, [9, 0, 100, 8], {(2, 95)}),          # a slot torn while copied
    (2, 256, [1000, 999], {(0, 900), (1, 998)}),
])
def test_both_readers_give_every_event_held_in_time_order_and_count_exactly_what_they_missed(
        cdrive, tmp_path, ncpus, slots, counts, torn):
    data = area(ncpus, slots, counts, torn)
    held = sorted(((n * ncpus + c, c, n) for c, count in enumerate(counts)
                   for n in range(max(0, count - slots), count) if (c, n) not in torn))
    missed = sum(max(0, count - slots) for count in counts) + len(torn)
    events, lost = cdrive(data, tmp_path)
    assert [(c, seq - 1, t) for c, seq, t, _ in events] == [(c, n, t) for t, c, n in held]
    # (the guest's reader starts at the oldest event held: what was overwritten
    # before it began is not its loss; the host's starts at the first event)
    assert lost == len(torn)
    r = trace.AreaReader(trace.area_info(data), [0] * ncpus)
    got = r.take(data, trace.heads(data, ncpus), quiescent=True)
    real = [e for e in got if e.id != trace.LOST]
    assert sorted((e.time, e.cpu, e.seq - 1) for e in real) == held
    assert sum(e.args[0] for e in got if e.id == trace.LOST) == missed == sum(r.lost)
    assert len(real) + missed == sum(counts)
    assert r.take(data, trace.heads(data, ncpus), quiescent=True) == []     # nothing twice


def test_a_reader_started_now_sees_only_later_events_and_the_host_reader_goes_on_from_its_place(cdrive, tmp_path):
    assert cdrive(area(2, 8, [5, 6]), tmp_path, now=True) == ([], 0)
    r = trace.AreaReader(trace.area_info(area(1, 8, [5])), [0])
    assert len(r.take(area(1, 8, [5]), [5], quiescent=True)) == 5
    later = area(1, 8, [20])
    got = r.take(later, [20], quiescent=True)   # events 5..11 were overwritten meanwhile
    assert got[0].id == trace.LOST and got[0].args[0] == 7 and [e.seq for e in got[1:]] == list(range(13, 21))


def test_a_slot_that_may_have_been_overwritten_while_copied_counts_as_missed():
    data = area(1, 8, [10])
    r = trace.AreaReader(trace.area_info(data), [0])
    got = r.take(data, [12])                    # the heads after the copy: two more were written
    assert sum(e.args[0] for e in got if e.id == trace.LOST) == 5       # 0, 1 overwritten; 2, 3, 4 maybe
    assert [e.seq - 1 for e in got if e.id != trace.LOST] == list(range(5, 10))
    full = area(1, 8, [8])                      # a full ring copied while the guest ran: its oldest slot
    r = trace.AreaReader(trace.area_info(full), [0])    # may hold the next event half written
    got = r.take(full, [8])
    assert [e.args[0] for e in got if e.id == trace.LOST] == [1] and len(got) == 8
    r = trace.AreaReader(trace.area_info(full), [0])
    assert len(r.take(full, [8], quiescent=True)) == 8  # (stopped: all whole)


def test_slot_runs_cover_what_was_written_since_and_wrap():
    assert trace.slot_runs(0, 0, 8) == [] and trace.slot_runs(5, 3, 8) == []
    assert trace.slot_runs(0, 5, 8) == [(0, 5)] and trace.slot_runs(3, 8, 8) == [(3, 8)]
    assert trace.slot_runs(6, 11, 8) == [(6, 8), (0, 3)] and trace.slot_runs(16, 24, 8) == [(0, 8)]
    assert trace.slot_runs(13, 21, 8) == [(5, 8), (0, 5)]      # a whole ring, wrapping


@pytest.mark.parametrize("ncpus, slots, before, after", [
    (1, 16, [0], [10]), (2, 8, [3, 0], [30, 5]), (4, 8, [9, 0, 100, 8], [12, 0, 107, 16]),
])
def test_the_recorder_copies_only_what_a_reader_has_not_read_and_reads_the_same(tmp_path, ncpus, slots, before,
                                                                                  after):
    class FakeQmp:                              # pmemsave of a guest whose area is `now`
        def __init__(self):
            self.now, self.bytes = None, 0

        def command(self, name, val, size, filename):
            assert name == "pmemsave"
            self.bytes += size
            Path(filename).write_bytes(self.now[val - 0x1000:val - 0x1000 + size])

    q = FakeQmp()
    rec = trace.Recorder.__new__(trace.Recorder)
    whole, partial = (trace.AreaReader(trace.area_info(area(ncpus, slots, before)), [0] * ncpus) for _ in range(2))
    tmp = str(tmp_path / "copy")
    copy = bytearray(len(area(ncpus, slots, before)))
    for counts in (before, after):
        q.now = area(ncpus, slots, counts)
        full = q.now
        info = trace.area_info(full)
        snap = rec._snapshot(q, tmp, 0x1000, info, list(partial.next), copy)
        assert whole.take(full, counts, quiescent=True) == partial.take(snap, counts, quiescent=True)
    written = sum(min(b, slots) for b in before) + sum(min(a - b, slots) for a, b in zip(after, before))
    assert q.bytes == 2 * trace.HEADER_BYTES + written * trace.RECORD.size


def test_a_memory_that_is_no_trace_area_is_refused(cdrive, tmp_path):
    bad = bytearray(area(1, 8, [1]))
    bad[0] ^= 1
    assert cdrive(bytes(bad), tmp_path) is None
    with pytest.raises(trace.TraceError):
        trace.area_info(bytes(bad))
    odd = bytearray(area(1, 8, [1]))
    struct.pack_into("<I", odd, 12, 12)         # slots not a power of two
    assert cdrive(bytes(odd), tmp_path) is None


# ---------------------------------------------------------------- trace files, the log, exports

def ev(time_ticks, name, args, cpu=0, pid=3, seq=1):
    return trace.Event(seq, time_ticks, ID[name], cpu, pid, tuple(args) + (0,) * (5 - len(args)))


def sample(tmp_path):
    t = trace.Trace(62_500_000, 2, 4096)
    t.events = [
        ev(62_500_000, "tcp_state", [4, 7, 2, 40000, 80]),
        ev(62_600_000, "tcp_cwnd", [4, 0, 14480, trace.INFINITE, 0]),
        ev(62_700_000, "tcp_rtt", [4, 1200, 1200, 600, 200]),
        ev(62_800_000, "tcp_cwnd", [4, 1, 28960, trace.INFINITE, 1448]),
        ev(62_900_000, "tcp_dupack", [4, 3, 0x1000, 2896]),
        ev(63_000_000, "tcp_cwnd", [4, 2, 11584, 11584, 23168]),
        ev(63_000_100, "tcp_retransmit", [4, 0x1000, 1448, 2]),
        ev(63_100_000, "sched_switch", [5, 3, 6, 3], cpu=1),
        ev(63_200_000, "sched_switch", [6, 3, 0, 0], cpu=1),
        ev(63_300_000, "lx_enter", [1, 1, 56, 0xffffffffffffff9c, 0x1234]),
        ev(63_400_000, "lx_exit", [1, 1, 56, (1 << 64) - 2]),
        trace.Event(0, 63_500_000, trace.LOST, 1, 0, (17, 0, 0, 0, 0)),
    ]
    path = tmp_path / "s.ptrace"
    trace.write(path, t)
    return path


def test_a_trace_file_reads_back_and_prints_like_the_monitor_papers_log(tmp_path):
    t = trace.load(sample(tmp_path))
    assert len(t.events) == 12 and t.lost == 17
    out = list(trace.lines(t, TAB, trace.select(t, TAB)))
    assert out[0] == trace.TCP_HEADER
    assert out[1] == "     1.000000000     4  state              -        -  closed>syn_sent ports=40000>80"
    assert out[2] == "     1.001600000     4  init           14480      inf  flight=0"
    assert out[6] == "     1.008000000     4  dupack         11584    11584  flight=23168"
    assert out[10].endswith("cpu0 [pid 1] openat(AT_FDCWD, 0x1234, O_RDONLY) = -1 ENOENT (No such file or directory)")
    assert out[11].startswith("# lost 17 events of cpu 1")
    only = list(trace.lines(t, TAB, trace.select(t, TAB, {"tcp"}, {4})))
    assert len(only) == 1 + 7 and all("cpu" not in line for line in only[1:])


def test_the_perfetto_export_reads_back_through_perfettos_schema(tmp_path):
    pb2 = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                              reason="the perfetto package (./petrel setup installs it)")
    t = trace.load(sample(tmp_path))
    data = trace.perfetto(t, TAB, trace.select(t, TAB))
    tr = pb2.Trace()
    tr.ParseFromString(data)
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in tr.packet if p.HasField("track_descriptor")}
    names = {d.name for d in tracks.values()}
    assert {"cpu1", "tcp connection 4", "tcp 4 cwnd", "tcp 4 ssthresh"} <= names
    assert any(d.HasField("thread") and d.thread.tid == 1 for d in tracks.values())
    by_name = {d.name: u for u, d in tracks.items()}
    counters = [(p.timestamp, p.track_event.counter_value) for p in tr.packet
                if p.HasField("track_event") and p.track_event.type == pb2.TrackEvent.TYPE_COUNTER
                and p.track_event.track_uuid == by_name["tcp 4 cwnd"]]
    assert counters == [(1_001_600_000, 14480), (1_004_800_000, 28960), (1_008_000_000, 11584)]
    slices = [p.track_event.type for p in tr.packet if p.HasField("track_event")
              and p.track_event.track_uuid == by_name["cpu1"]]
    assert slices[:2] == [pb2.TrackEvent.TYPE_SLICE_BEGIN, pb2.TrackEvent.TYPE_SLICE_END]
    lost = [p for p in tr.packet if p.HasField("track_event") and p.track_event.name.startswith("lost 17")]
    assert len(lost) == 1


def test_the_chrome_json_export(tmp_path):
    t = trace.load(sample(tmp_path))
    doc = json.loads(json.dumps(trace.chrome_json(t, TAB, trace.select(t, TAB))))
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    assert [c["args"] for c in counters] == [{"cwnd": 14480}, {"cwnd": 28960}, {"cwnd": 11584, "ssthresh": 11584}]
    assert any(e["ph"] == "X" and e["tid"] == "cpu1" for e in doc["traceEvents"])
    assert doc["otherData"]["lost"] == 17


def test_the_plot_draws_each_connection(tmp_path):
    t = trace.load(sample(tmp_path))
    out = tmp_path / "cwnd.png"
    assert trace.plot(t, TAB, trace.select(t, TAB), out) == 1
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    empty = trace.Trace(62_500_000, 1, 16)
    with pytest.raises(trace.TraceError, match="no tcp_cwnd"):
        trace.plot(empty, TAB, [], out)


def test_a_file_that_is_no_trace_is_refused(tmp_path):
    p = tmp_path / "x.ptrace"
    p.write_bytes(b"hello\n")
    with pytest.raises(trace.TraceError):
        trace.load(p)


# ---------------------------------------------------------------- configured out

def test_a_kernel_configured_without_tracepoints_has_none_of_their_code(tmp_path):
    """CONFIG_TRACE=n: the kernel is built in its own directory, and no
    function of the monitor, nor any reference to its enabled bits, is in
    the image; every tracepoint site compiled to nothing."""
    out = tmp_path / "build"
    out.mkdir()
    (out / ".config").write_text((REPO / "configs/defconfig").read_text().replace("CONFIG_TRACE=y", "CONFIG_TRACE=n"))
    subprocess.run(["make", "-s", "-j2", f"O={out}", f"PYTHON={sys.executable}", "kernel"], cwd=REPO, check=True,
                   capture_output=True, timeout=900)
    syms = subprocess.run(["llvm-nm", str(out / "kernel/kernel.elf")], capture_output=True, text=True,
                          check=True).stdout
    assert " trace_area_pa" in syms                 # (the recorder finds no rings through it: they are 0)
    dis = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(out / "kernel/kernel.elf")],
                         capture_output=True, text=True, check=True).stdout
    assert re.findall(r"\bbl\s+\S+ <(?:svc_)?trace_record>", dis) == []
    body = dis.split("<trace_record>:\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    assert body[0].split()[-1] == "ret" and all(line.split()[-1] == "nop" for line in body[1:]), body
    assert "#define TRACE_COMPILED 0" in (out / "gen/services/trace_points.h").read_text()
    on = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(REPO / "build/kernel/kernel.elf")],
                        capture_output=True, text=True, check=True).stdout
    assert len(re.findall(r"\bbl\s+\S+ <(?:svc_)?trace_record>", on)) >= 10   # (the same sites, configured in)


# ---------------------------------------------------------------- the strace view

def lx(time_ticks, name, args, seq=1):
    return ev(time_ticks, name, args, seq=seq)


def data_events(tid, arg, data, more=False, out=False):
    where = arg | len(data) << 16 | (strace.WHERE_MORE if more else 0) | (strace.WHERE_OUT if out else 0)
    padded = data + b"\0" * (-len(data) % 24 or (24 if not data else 0))
    return [lx(0, "lx_data", [tid, where | i << 8] + [int.from_bytes(padded[i * 24 + k * 8:i * 24 + k * 8 + 8],
                                                                    "little") for k in range(3)])
            for i in range(max(1, len(padded) // 24))]


def test_the_strace_view_decodes_calls_as_strace_shows_them():
    calls, _ = strace.names()
    nr = {name: n for n, name in calls.items()}
    view = strace.Strace(TAB)
    path = b"/a/rather/long/path/name/of/more/than/twenty-four/bytes"
    events = [lx(1, "lx_enter", [4, 9, nr["openat"], (1 << 64) - 100, 0x1000]),
              lx(2, "lx_args", [9, 0o2000000 | 0o100 | 1, 0o644, 0, 0])] + data_events(9, 1, path) + \
             [lx(3, "lx_exit", [4, 9, nr["openat"], 3]),
              lx(4, "lx_enter", [4, 9, nr["read"], 3, 0x2000]), lx(5, "lx_args", [9, 4096, 0, 0, 0])] + \
             data_events(9, 1, b"x\ty\n\x01", more=True, out=True) + \
             [lx(6, "lx_exit", [4, 9, nr["read"], 4000]),
              lx(7, "lx_enter", [4, 9, nr["newfstatat"], (1 << 64) - 100, 0x3000]),
              lx(8, "lx_args", [9, 0x4000, 0x100, 0, 0])] + data_events(9, 1, b"/nope") + \
             [lx(9, "lx_exit", [4, 9, nr["newfstatat"], (1 << 64) - 2]),
              lx(10, "lx_enter", [4, 9, nr["dup3"], 3, 1]), lx(11, "lx_args", [9, 0o2000000, 0, 0, 0]),
              lx(12, "lx_exit", [4, 9, nr["dup3"], 1]),
              lx(13, "lx_enter", [4, 9, nr["mmap"], 0, 8192]), lx(14, "lx_args", [9, 3, 0x22, (1 << 64) - 1, 0]),
              lx(15, "lx_exit", [4, 9, nr["mmap"], 0x7f0000]),
              lx(16, "lx_exit", [4, 10, nr["close"], 0]),                 # (its entry was not recorded)
              lx(17, "lx_enter", [4, 9, 999, 1, 2]), lx(18, "lx_args", [9, 3, 4, 5, 6]),
              lx(19, "lx_exit", [4, 9, 999, (1 << 64) - 38]),
              lx(20, "lx_enter", [4, 9, nr["exit_group"], 3, 0]), lx(21, "lx_args", [9, 0, 0, 0, 0]),
              lx(22, "lx_enter", [4, 11, nr["nanosleep"], 0x10, 0])]
    lines = view.feed(events) + view.unfinished()
    assert lines == [
        '[pid 4] openat(AT_FDCWD, "/a/rather/long/path/name/of/more/than/twenty-four/bytes", '
        'O_WRONLY|O_CREAT|O_CLOEXEC, 0644) = 3',
        '[pid 4] read(3, "x\\ty\\n\\1"..., 4096) = 4000',
        '[pid 4] newfstatat(AT_FDCWD, "/nope", 0x4000, AT_SYMLINK_NOFOLLOW) = -1 ENOENT (No such file or directory)',
        '[pid 4] dup3(3, 1, O_CLOEXEC) = 1',
        '[pid 4] mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0x0) = 0x7f0000',
        '[pid 4] close(...) = 0',
        '[pid 4] syscall_0x3e7(0x1, 0x2, 0x3) = -1 ENOSYS (Function not implemented)',
        '[pid 4] exit_group(3) = ?', '[pid 4] +++ exited with 3 +++',
        '[pid 4] nanosleep(0x10, NULL <unfinished ...>']


# ---------------------------------------------------------------- /proc/net/tcpmon's printer

@pytest.fixture(scope="module")
def tcpmon(tmp_path_factory):
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler for the host (./petrel setup installs clang)")
    d = tmp_path_factory.mktemp("tcpmon")
    gen = d / "gen"
    from petrel import idlc
    for name in ("linux", "net"):
        idlc.compile_interface(REPO / "idl" / f"{name}.toml", gen)
    tracegen.generate(REPO / "idl/tracepoints.toml", "-", gen / "trace_points.h")
    exe = d / "tcpmondrive"
    subprocess.run([compiler, "-O1", "-w", "-I", str(REPO / "services/linux"), "-I", str(REPO / "services/include"),
                    "-I", str(REPO / "lib/include"), "-I", str(REPO / "kernel/include/uapi"), "-I", str(gen),
                    "-o", str(exe), str(REPO / "tests/host/cc/tcpmondrive.c"), str(REPO / "services/linux/tcpmon.c"),
                    str(REPO / "lib/trace_read.c"), str(REPO / "lib/format.c")], check=True)
    return exe


def test_proc_net_tcpmon_prints_every_tcp_event_as_petrel_trace_does(tcpmon, tmp_path):
    """The guest's printer (C) and the host's (Python) give the same line for
    every kind of TCP event, whatever size the reads are; other groups'
    events are left out; an event overwritten while read is said as lost."""
    why = TAB.enums["tcp_why"][1]
    events = []
    for i, w in enumerate(why):
        events.append(("tcp_cwnd", [3, i, 14480 + i, trace.INFINITE if i < 2 else 7240, 1448 * i]))
    events += [("tcp_rtt", [3, 1200, 1100, 600, 201]), ("tcp_state", [3, 2, 1, 40000, 80]),
               ("tcp_state", [9, 0, 99, 1, 2]),                   # (a state the table does not know: "?")
               ("tcp_dupack", [3, 3, 0xdeadbeef, 2896]), ("tcp_retransmit", [3, 0x1000, 1448, 4]),
               ("tcp_window", [3, 0, 5792]), ("tcp_rcvbuf", [3, 131072, 1]), ("tcp_cc", [3, 1, 200000, 12]),
               ("sched_switch", [1, 2, 3, 4]), ("lx_enter", [1, 1, 56, 0, 0]), ("tcp_cwnd", [4, 99, 1, 2, 3])]
    ncpus, slots = 2, 64
    buf = bytearray(trace.HEADER_BYTES + ncpus * slots * trace.RECORD.size)
    struct.pack_into("<IIIIQ", buf, 0, trace.MAGIC, trace.VERSION, ncpus, slots, 62_500_000)
    counts = [0, 0]
    recs = []
    for k, (name, args) in enumerate(events):
        c = k % 2
        n = counts[c]
        e = trace.Event(n + 1, 62_500_000 + 1000 * k, ID[name], c, 5, tuple(args) + (0,) * (5 - len(args)))
        off = trace.HEADER_BYTES + (c * slots + n) * trace.RECORD.size
        buf[off:off + trace.RECORD.size] = e.pack()
        counts[c] += 1
        recs.append(e)
    for c in range(ncpus):
        struct.pack_into("<Q", buf, trace.CORE_OFFSET + c * trace.CORE_STRIDE, counts[c])
    t = trace.Trace(62_500_000, ncpus, slots, recs)
    want = [trace.TCP_HEADER] + [line for line in (trace.tcp_line(t, TAB, e) for e in trace.ordered(t)) if line]
    assert len(want) == 1 + len(why) + 8 and any("why=timeout" in w for w in want)
    area_file = tmp_path / "area.bin"
    area_file.write_bytes(bytes(buf))
    for chunk in (1, 7, 4096):
        out = subprocess.run([str(tcpmon), str(area_file), str(chunk)], capture_output=True, text=True, timeout=30,
                             check=True).stdout.splitlines()
        assert out == want, (chunk, [(a, b) for a, b in zip(out, want) if a != b][:3])
    torn = bytearray(buf)
    struct.pack_into("<Q", torn, trace.HEADER_BYTES + (0 * slots + 2) * trace.RECORD.size, 0)   # cpu 0's third
    area_file.write_bytes(bytes(torn))
    out = subprocess.run([str(tcpmon), str(area_file), "4096"], capture_output=True, text=True, timeout=30,
                         check=True).stdout.splitlines()
    assert "# lost 1 events (the rings overwrote them)" in out and len(out) == len(want)
