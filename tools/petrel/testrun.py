"""The test runner behind `./petrel test`: guest cases in QEMU, then host pytest.

A guest case boots the system once (see cases.py) and is judged from QEMU's
exit status and the serial console:

- the exit status matches `expect_exit` before the timeout (0 = PSCI SYSTEM_OFF),
- no console line contains "PANIC" (unless `allow_panic`),
- every `expect` regex matches, each after the previous match,
- for `tap` cases: a plan is present, every planned test reported, none failed,
- for `oracle` cases: the same commands on Linux print the same (oracle.py);
  a `run` case has its commands run on Petrel only (as /etc/lxrun).

Every case counts as one test ("<case>"); a TAP case adds one test per planned
test ("<case>/<description>"). Host tests come from pytest's JUnit XML. The
last line is always "N passed, N failed" (", N skipped" when there are any).
Consoles are saved to build/test/logs/<case>.log.
"""
import collections
import os
import re
import subprocess
import sys
import threading
import tempfile
import time
import struct
import xml.etree.ElementTree as ET
import zlib
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from petrel import bootimage, build, cases, dtbfixtures, oracle, paths, qemu, tap

# Host-side preparation steps a case may name in `pre`.
PRE_STEPS = {"dtb-fixtures": dtbfixtures.prepare}
TAIL_LINES = 30
SUMMARY_EVIDENCE_CASES = 4      # failed cases whose evidence the summary repeats
INDENT = " " * 8


@dataclass
class Outcome:
    """The verdict on one reported test."""
    name: str
    status: str          # "ok", "FAIL" or "skip"
    detail: str = ""
    evidence: list = field(default_factory=list)    # console lines the summary repeats


@dataclass
class CaseResult:
    """Everything one guest case produced."""
    case: cases.Case
    outcomes: list       # outcomes[0] is the case itself
    reasons: list        # why the case itself failed (empty when it passed)
    console: str = ""
    seconds: float = 0.0
    log: Path | None = None

    # True when any of the case's tests failed.
    @property
    def failed(self) -> bool:
        return any(o.status == "FAIL" for o in self.outcomes)


@dataclass
class Tally:
    """Counts of passed, failed and skipped tests."""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list = field(default_factory=list)

    # Adds the outcomes of a list to the counts.
    def add(self, outcomes: list) -> None:
        for o in outcomes:
            if o.status == "ok":
                self.passed += 1
            elif o.status == "skip":
                self.skipped += 1
            else:
                self.failed += 1
                self.failures.append(o)

    # The closing lines of a run: the failed tests again, so that the tail of a long log
    # names them (the first few with the console lines that tell why), then the counts.
    def summary(self) -> str:
        lines = []
        for n, o in enumerate(self.failures):
            lines.append(f"failed: {o.name}{'  (' + o.detail + ')' if o.detail else ''}")
            if n < SUMMARY_EVIDENCE_CASES:
                lines += [f"{INDENT}| {line}" for line in o.evidence]
        line = f"{self.passed} passed, {self.failed} failed"
        lines.append(line + (f", {self.skipped} skipped" if self.skipped else ""))
        return "\n".join(lines)


# Describes an exit status problem, or returns "" when the status is as expected.
def check_exit(case: cases.Case, status) -> str:
    if status is None:
        return f"timeout: no exit within {case.timeout:g}s (hang?)"
    if case.expect_exit == "nonzero":
        return "" if status != 0 else "exit status 0, expected non-zero"
    if status != case.expect_exit:
        return f"exit status {status}, expected {case.expect_exit}"
    return ""


# Returns the reasons why `expect` patterns fail to match `console` in order.
def check_expect(case: cases.Case, console: str) -> list:
    pos = 0
    for pattern in case.expect:
        match = re.compile(pattern, re.MULTILINE).search(console, pos)
        if not match:
            where = " after the previous expected text" if pos else ""
            return [f"expected /{pattern}/ not found on the console{where}"]
        pos = match.end()
    return []


# Returns the console lines that report a kernel panic.
def panic_lines(console: str) -> list:
    return [line.strip() for line in console.splitlines() if "PANIC" in line]


# Turns the TAP stream of a case into outcomes and stream-level reasons.
def tap_outcomes(case: cases.Case, console: str) -> tuple:
    report = tap.parse(console)
    reasons = []
    if report.plan is None:
        reasons.append("no TAP plan (1..N) on the console")
    if report.bail_out is not None:
        reasons.append(f"Bail out! {report.bail_out}")
    reasons += report.problems
    outcomes = []
    for r in report.results:
        name = f"{case.name}/{r.description or r.number}"
        if r.failed:
            outcomes.append(Outcome(name, "FAIL", "; ".join([f"not ok {r.number}"] + r.comments)))
        elif r.skipped:
            outcomes.append(Outcome(name, "skip", f"{r.directive.upper()} {r.reason}".strip()))
        else:
            outcomes.append(Outcome(name, "ok"))
    for number in report.missing():
        outcomes.append(Outcome(f"{case.name}/{number}", "FAIL", "planned but never reported"))
    return outcomes, reasons


# Judges one finished boot; returns (reasons the case failed, outcomes).
def evaluate(case: cases.Case, status, console: str) -> tuple:
    reasons = []
    problem = check_exit(case, status)
    if problem:
        reasons.append(problem)
    panics = [] if case.allow_panic else panic_lines(console)
    if panics:
        reasons.append(f"kernel panic: {panics[0]}")
    reasons += check_expect(case, console)
    sub = []
    if case.tap:
        sub, tap_reasons = tap_outcomes(case, console)
        reasons += tap_reasons
    head = Outcome(case.name, "FAIL" if reasons else "ok", "; ".join(reasons),
                   evidence(console) if reasons else [])
    return reasons, [head] + sub


# The console lines a failed case's summary line repeats: the first few that
# report a failure or a panic, then the last few (a CI log is often read
# from its end only, where the case's own console tail is long gone).
def evidence(console: str, marked: int = 4, last: int = 6) -> list:
    lines = console.rstrip("\n").splitlines()
    tail = lines[-last:]
    head = [line for line in lines[:-last] if re.search(r"FAIL|PANIC|NOT back", line)][:marked]
    return [line[:200] for line in head + (["..."] if head else []) + tail]


# Packs the case's boot image (a system of systems/, or the case's own list of
# programs) under build/; None when it has no programs.
def pack_case_image(case: cases.Case, repo: Path) -> Path | None:
    out = paths.build_dir(repo) / "test" / "images" / f"{case.slug()}.pbi"
    if case.system:
        from petrel import systems
        try:
            system = systems.load_system(repo / "systems" / f"{case.system}.toml", repo)
            entries = systems.read_entries(system, repo)
            if case.oracle or case.run:
                entries = oracle.with_archive(entries, oracle.write_archive(case.slug(), case.oracle or case.run, repo, case.packages,
                                                                              case.modules))
            bootimage.write_image(out, entries)
        except systems.SystemConfigError as err:
            raise ValueError(str(err)) from None
        return out
    if not case.programs:
        return None
    entries = []
    for program in case.programs:
        entries.append((program, read_input(paths.user_elf(program, repo), repo, "program"),
                        bootimage.FLAG_EXEC))
    for name, path in case.files:
        entries.append((name, read_input(repo / path, repo, "file"), 0))
    bootimage.write_image(out, entries)
    return out


# Reads an input file of a case, with a clear error when it is missing.
def read_input(path: Path, repo: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        raise ValueError(f"{what} {paths.rel(path, repo)} does not exist (not built?)") from None


# Writes the console of a case, with the command that produced it, to its log.
def write_log(case: cases.Case, argv: list, status, console: str, repo: Path) -> Path:
    log = paths.build_dir(repo) / "test" / "logs" / f"{case.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    end = "timeout" if status is None else f"exit status {status}"
    log.write_text(f"$ {qemu.format_argv(argv)}\n{console}\n[{end}]\n")
    return log


# Boots one case and judges it. Never raises for problems of the case itself.
def run_case(case: cases.Case, repo: Path, failed_steps: dict) -> CaseResult:
    start = time.monotonic()
    broken = [f"preparation step {s!r} failed: {failed_steps[s]}" for s in case.pre if s in failed_steps]
    kernel = paths.kernel_bin(case.kernel, repo)
    if not kernel.exists():
        broken.append(f"{paths.rel(kernel, repo)} does not exist (not built?)")
    try:
        image = None if broken else pack_case_image(case, repo)
    except ValueError as err:
        broken.append(str(err))
    if broken:
        return CaseResult(case, [Outcome(case.name, "FAIL", "; ".join(broken))], broken)
    machine = case.machine()
    if machine.net != "none":                   # the frames, for a host-side test to judge
        machine.pcap = str(paths.build_dir(repo) / "test" / "logs" / f"{case.slug()}.pcap")
        Path(machine.pcap).parent.mkdir(parents=True, exist_ok=True)
    append, rec, on_start = case.append, None, None
    if case.trace:
        from petrel import trace
        append = (append + " trace=" + case.trace).strip()
    argv = qemu.build_argv(kernel, image, machine, append)
    if case.trace:
        qmp = Path(tempfile.mkdtemp(prefix="petrel-qmp-")) / "qmp"
        argv += trace.qemu_argv(str(qmp))
        rec = trace.Recorder(str(qmp), paths.build_dir(repo) / "test" / "logs" / f"{case.slug()}.ptrace",
                             paths.kernel_elf(case.kernel, repo))
        on_start = lambda proc: trace.watch(proc, rec)
    logs = paths.build_dir(repo) / "test" / "logs"
    shots = [logs / f"{case.slug()}.screen{i + 1}.ppm" for i in range(len(case.screens))]
    for shot in shots:
        shot.parent.mkdir(parents=True, exist_ok=True)
        shot.unlink(missing_ok=True)
        shot.with_suffix(".png").unlink(missing_ok=True)
    steps = case.steps([qemu.Screendump(str(shot)) for shot in shots])
    try:
        status, console = qemu.run(argv, case.timeout, case.input, case.input_after, steps, on_start)
        stopped = ""
    except qemu.StepFailed as err:
        status, console, stopped = None, err.console, str(err)
    reasons, outcomes = evaluate(case, status, console)
    if stopped:                                 # (QEMU was stopped: its exit status says nothing)
        reasons = [stopped] + [r for r in reasons if r != check_exit(case, None)]
        outcomes[0] = Outcome(case.name, "FAIL", "; ".join(reasons), evidence(console))
    log = write_log(case, argv, status, console, repo)
    screens = [judge_screen(shot, screen[1], repo) for screen, shot in zip(case.screens, shots)]
    if any(screens):
        reasons += [r for r in screens if r]
        outcomes[0] = Outcome(case.name, "FAIL", "; ".join(reasons))
    if rec:
        rec.join()
        reasons += judge_trace(rec, console, "tcp" in case.trace.split(","), case.traced, case.strace, repo)
        outcomes[0] = Outcome(case.name, "FAIL" if reasons else "ok", "; ".join(reasons))
    if case.oracle:
        reasons += against_linux(case, console, repo)
        outcomes[0] = Outcome(case.name, "FAIL" if reasons else "ok", "; ".join(reasons))
    if machine.pcap:
        reasons += judge_frames(Path(machine.pcap), case.frames, repo)
        outcomes[0] = Outcome(case.name, "FAIL" if reasons else "ok", "; ".join(reasons))
    return CaseResult(case, outcomes, reasons, console, time.monotonic() - start, log)


# Writes w by h pixels (r, g, b bytes, row by row) as a PNG file: beside
# each screendump, for a person to look at (the docs' pictures are these).
def write_png(path: Path, w: int, h: int, px: bytes) -> None:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + px[3 * w * y:3 * w * (y + 1)] for y in range(h))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                     chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


# Reads a binary PPM (P6, 8 bits a colour, as QEMU's screendump writes it):
# (width, height, rgb bytes).
def read_ppm(path: Path) -> tuple:
    data = path.read_bytes()
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        if data[at:at + 1] == b"#":
            at = data.index(b"\n", at) + 1
            continue
        end = at
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[at:end])
        at = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError(f"{path}: not an 8-bit P6 picture")
    w, h = int(fields[1]), int(fields[2])
    pixels = data[at + 1:at + 1 + 3 * w * h]
    if len(pixels) != 3 * w * h:
        raise ValueError(f"{path}: {len(pixels)} bytes of pixels for {w}x{h}")
    return w, h, pixels


# Judges a case's screendump against its expected pattern: "" if every
# pixel is the pattern's, else why not (the first pixels that differ).
def judge_screen(shot: Path, pattern: str, repo: Path) -> str:
    if not shot.exists():
        return f"no screendump {paths.rel(shot, repo)} was taken (its line never came?)"
    try:
        w, h, px = read_ppm(shot)
        write_png(shot.with_suffix(".png"), w, h, px)
    except (OSError, ValueError, IndexError) as err:
        return f"screendump {paths.rel(shot, repo)}: {err}"
    if (w, h) != qemu.DISPLAY_SIZE:
        return f"screendump {paths.rel(shot, repo)}: {w}x{h}, not the display's {qemu.DISPLAY_SIZE[0]}x" \
               f"{qemu.DISPLAY_SIZE[1]}"
    if pattern in cases.SCREEN_CHECKS:
        wrong = cases.SCREEN_CHECKS[pattern](w, h, px)
        return f"screendump {paths.rel(shot, repo)} is not {pattern}: {'; '.join(wrong[:3])}" if wrong else ""
    want = cases.SCREEN_PATTERNS[pattern]
    wrong = []
    for y in range(h):
        for x in range(w):
            got = tuple(px[3 * (y * w + x):3 * (y * w + x) + 3])
            if got != want(x, y, w, h):
                wrong.append(f"({x}, {y}) is {got}, not {want(x, y, w, h)}")
                if len(wrong) == 3:
                    break
        if len(wrong) == 3:
            break
    return f"screendump {paths.rel(shot, repo)} differs from {pattern}: {'; '.join(wrong)}" if wrong else ""


# Judges a case's recording: it worked, it holds an event of each
# tracepoint `traced` names, its strace view has lines matching `stracing`
# in order, and (`tcpmon`) each line of
# /proc/net/tcpmon the console shows is the recorder's line of the same
# event, in the same order: two readers of the rings, one in the guest and
# one on the host, and two printers of the log, agree.
def judge_trace(rec, console: str, tcpmon: bool, traced: list, stracing: list, repo: Path) -> list:
    from petrel import strace, trace
    if rec.error:
        return [f"trace recording: {rec.error}"]
    t = trace.load(rec.out)
    tab = trace.table()
    seen = {tab.by_id()[e.id].name for e in t.events if e.id in tab.by_id()}
    missing = [name for name in traced if name not in seen]
    if missing:
        return [f"the recording {paths.rel(rec.out, repo)} holds no {', '.join(missing)} event"]
    if stracing:
        text = "\n".join(strace.Strace(tab).feed(trace.select(t, tab, {"linux"})))
        at = 0
        for want in stracing:
            m = re.compile(want, re.M).search(text, at)
            if not m:
                return [f"the strace view of {paths.rel(rec.out, repo)} has no line matching {want!r} after "
                        f"those before it"]
            at = m.end()
    if not tcpmon:
        return []
    shown = [line.rstrip() for line in console.splitlines() if TCPMON_LINE.match(line)]
    recorded = [line for line in (trace.tcp_line(t, tab, e) for e in trace.select(t, tab, {"tcp"})) if line]
    at = 0
    for line in shown:
        try:
            at = recorded.index(line, at) + 1
        except ValueError:
            return [f"/proc/net/tcpmon's line {line!r} is not in the recording {paths.rel(rec.out, repo)} "
                    f"({len(recorded)} TCP events) after the lines before it"]
    return []


TCPMON_LINE = re.compile(r"^ +\d+\.\d{9} +\d+  \S")


# Runs an oracle case's commands on Linux, with the case's key presses,
# and compares the transcripts; returns the reasons the case fails (none
# when they are the same).
def against_linux(case: cases.Case, console: str, repo: Path) -> list:
    archive = oracle.archive_path(case.slug(), repo)
    log = paths.build_dir(repo) / "test" / "logs" / f"{case.name}.linux.log"
    try:
        status, linux = oracle.run_linux(archive, case.machine(), repo, case.timeout, case.key_steps())
    except qemu.StepFailed as err:
        log.write_text(err.console)
        return [f"Linux run: {err} (console in {paths.rel(log, repo)})"]
    except (RuntimeError, OSError) as err:
        return [f"Linux run: {err}"]
    log.write_text(linux)
    if status != 0:
        return [f"Linux run: exit status {status} (console in {paths.rel(log, repo)})"]
    diff = oracle.compare(oracle.transcript(linux, False), oracle.transcript(console, True))
    if not diff:
        return []
    shown = "\n".join(diff[:40]) + ("\n..." if len(diff) > 40 else "")
    return [f"Petrel's output differs from Linux's ({paths.rel(log, repo)}):\n{shown}"]


# Checksums tshark checks (it leaves them unverified by default).
TSHARK_CHECKS = ["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"]


# Judges a case's recorded frames with tshark: none may be malformed, carry
# an error or have a bad checksum, and each protocol of `must`
# must appear. Returns the reasons the case fails.
def judge_frames(pcap: Path, must: list, repo: Path) -> list:
    if not pcap.exists():
        return [f"no frames were recorded ({paths.rel(pcap, repo)} is missing)"]
    base = ["tshark", "-n", "-r", str(pcap)] + TSHARK_CHECKS
    try:
        bad = subprocess.run(base + ["-Y", "_ws.malformed || _ws.expert.severity >= error || _ws.expert.group == checksum"],
                             capture_output=True, text=True, timeout=120)
        seen = subprocess.run(base + ["-T", "fields", "-e", "frame.protocols"],
                              capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        return ["tshark is not installed (./petrel setup installs it)"]
    except subprocess.TimeoutExpired:
        return [f"tshark took over 120 s on {paths.rel(pcap, repo)}"]
    if bad.returncode != 0 or seen.returncode != 0:
        return [f"tshark failed on {paths.rel(pcap, repo)}: {(bad.stderr or seen.stderr).strip()[-300:]}"]
    reasons = []
    if bad.stdout.strip():
        lines = bad.stdout.strip().splitlines()
        reasons.append(f"{len(lines)} frames of {paths.rel(pcap, repo)} malformed, in error or with a bad checksum, first: "
                       + "\n".join(lines[:5]))
    protocols = {p for line in seen.stdout.splitlines() for p in line.strip().split(":") if p}
    missing = [p for p in must if p not in protocols]
    if missing:
        reasons.append(f"no {', '.join(missing)} frames in {paths.rel(pcap, repo)} (seen: {', '.join(sorted(protocols))})")
    return reasons


# Formats the lines printed for a finished case.
def format_case(result: CaseResult, index: int, total: int, repo: Path) -> list:
    width = len(str(total))
    verdict = "FAIL" if result.failed else "ok"
    extra = f", {len(result.outcomes) - 1} tests" if result.case.tap else ""
    lines = [f"[{index:>{width}}/{total}] {result.case.name} ... {verdict} ({result.seconds:.1f}s{extra})"]
    for o in result.outcomes[1:]:
        detail = f"  ({o.detail})" if o.detail and o.status != "ok" else ""
        lines.append(f"{INDENT}{o.status:<4} {o.name}{detail}")
    for reason in result.reasons:
        lines.append(f"{INDENT}reason: {reason}")
    if result.failed and result.console:
        tail = result.console.rstrip("\n").splitlines()[-TAIL_LINES:]
        lines.append(f"{INDENT}--- last {len(tail)} console lines ({paths.rel(result.log, repo)}) ---")
        lines += [f"{INDENT}| {line}" for line in tail]
    return lines


# Runs the preparation steps the cases need, once each; returns {step: error}.
def run_pre_steps(selected: list, repo: Path) -> dict:
    failed = {}
    for step in dict.fromkeys(s for c in selected for s in c.pre):
        print(f"prepare: {step}", flush=True)
        try:
            PRE_STEPS[step](repo)
        except Exception as err:  # a failed step fails its cases, not the runner
            print(f"prepare: {step} failed: {err}", flush=True)
            failed[step] = str(err)
    return failed


# Returns the result of a finished run_case future; an error inside the runner
# (such as QEMU missing) becomes a failure of that case instead of a crash.
def finished(future, case: cases.Case) -> CaseResult:
    try:
        return future.result()
    except Exception as err:
        reason = f"runner error: {err}"
        return CaseResult(case, [Outcome(case.name, "FAIL", reason)], [reason])


# Host cores handed to guests: a case takes one per core of its machine
# (at most all of them), in the order the cases were listed. QEMU runs
# each guest core on a host thread, and a guest core that spins for a lock
# its holder's descheduled thread holds burns its whole host time slice:
# with more guest cores than host cores, SMP guests (Petrel's and Linux's)
# slow down many times over and their tests' timeouts become lotteries.
class CoreSlots:
    def __init__(self, cores: int):
        self.cores = max(1, cores)
        self.free = self.cores
        self.queue = collections.deque()
        self.cv = threading.Condition()

    def acquire(self, want: int) -> int:
        want = max(1, min(want, self.cores))
        me = object()
        with self.cv:
            self.queue.append(me)
            self.cv.wait_for(lambda: self.queue[0] is me and self.free >= want)
            self.queue.popleft()
            self.free -= want
            self.cv.notify_all()
        return want

    def release(self, n: int):
        with self.cv:
            self.free += n
            self.cv.notify_all()


def run_case_on(slots: CoreSlots, case, repo: Path, failed_steps):
    n = slots.acquire(case.smp)
    try:
        return run_case(case, repo, failed_steps)
    finally:
        slots.release(n)


# Runs the guest cases on `jobs` host cores (see CoreSlots), printing each
# as it finishes.
def run_guest(selected: list, jobs: int, repo: Path) -> list:
    failed_steps = run_pre_steps(selected, repo)
    results = []
    slots = CoreSlots(jobs)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_case_on, slots, c, repo, failed_steps): c for c in selected}
        try:
            for future in as_completed(futures):
                results.append(finished(future, futures[future]))
                lines = format_case(results[-1], len(results), len(selected), repo)
                print("\n".join(lines), flush=True)
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            qemu.kill_all()
            raise
    return results


# Reads pytest's JUnit XML into outcomes named "host/<module>::<test>".
def junit_outcomes(xml_path: Path) -> list:
    outcomes = []
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        module = case.get("classname", "").removeprefix("tests.host.")
        name = f"host/{module}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes.append(Outcome(name, "FAIL"))
        elif case.find("skipped") is not None:
            outcomes.append(Outcome(name, "skip"))
        else:
            outcomes.append(Outcome(name, "ok"))
    return outcomes


# Returns the interpreter that has pytest: the project venv when it exists.
def host_python(repo: Path) -> str:
    venv = paths.venv_python(repo)
    return str(venv) if venv.exists() else sys.executable


# pytest's options that spread the host tests over `jobs` processes, a
# file at a time (pytest-xdist, from requirements.txt): most of them wait
# on a guest or a timer, not on a core. None when there is one job or no
# pytest-xdist.
def parallel_args(python: str, jobs: int) -> list:
    if jobs < 2 or subprocess.run([python, "-c", "import xdist"], capture_output=True).returncode:
        return []
    return ["-n", str(min(jobs, os.cpu_count() or 1)), "--dist", "loadfile"]


# One pytest run over tests/host: its status and outcomes.
def run_pytest(python: str, extra: list, xml_path: Path, pattern: str | None, repo: Path) -> tuple:
    xml_path.unlink(missing_ok=True)
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra,
            f"--junitxml={xml_path}", "tests/host"] + (["-k", pattern] if pattern else [])
    status = subprocess.run(argv, cwd=repo, env=child_env()).returncode
    return status, junit_outcomes(xml_path) if xml_path.exists() else []


# Runs pytest on tests/host, shows its output, returns the outcomes. With
# several jobs, the tests marked `serial` (those that time things: their
# files say why) run alone afterwards.
def run_host(pattern: str | None, repo: Path, jobs: int = 1) -> list:
    xml_path = paths.build_dir(repo) / "test" / "pytest.xml"
    xml_path.parent.mkdir(parents=True, exist_ok=True)
    python = host_python(repo)
    spread = parallel_args(python, jobs)
    runs = [(spread + ["-m", "not serial"], xml_path), (["-m", "serial"], xml_path.with_name("pytest-serial.xml"))] \
        if spread else [([], xml_path)]
    print(f"host: pytest tests/host{f' ({spread[1]} processes, then the serial ones alone)' if spread else ''}",
          flush=True)
    outcomes = []
    for extra, path in runs:
        status, got = run_pytest(python, extra, path, pattern, repo)
        outcomes += got
        if status not in (0, 1, 5) and not any(o.status == "FAIL" for o in got):
            outcomes.append(Outcome("host/pytest", "FAIL", f"pytest exited with status {status}"))
    for o in outcomes:
        print(f"{o.status:<4} {o.name}{'  (' + o.detail + ')' if o.detail else ''}")
    return outcomes


# Environment for child Python processes: no __pycache__ litter in the tree.
def child_env() -> dict:
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1")


# Lists guest cases and host tests without running anything.
def list_tests(selected: list, host: bool, pattern: str | None, repo: Path) -> int:
    for case in selected:
        print(case.name)
    if host and not (pattern and cases.is_glob(pattern)):
        argv = [host_python(repo), "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                "tests/host"] + (["-k", pattern] if pattern else [])
        status = subprocess.run(argv, cwd=repo, env=child_env()).returncode
        return 0 if status in (0, 5) else status
    return 0


# Loads tests/guest/cases.toml; returns (cases, error message or "").
def load_guest_cases(repo: Path) -> tuple:
    path = repo / "tests" / "guest" / "cases.toml"
    if not path.exists():
        print(f"guest: {paths.rel(path, repo)} does not exist, no guest cases")
        return [], ""
    try:
        return cases.load_cases(path, paths.rel(path, repo), PRE_STEPS), ""
    except (OSError, ValueError) as err:
        return [], str(err)


# `./petrel test`: returns the exit status (0 only when nothing failed).
def main(pattern=None, guest=True, host=True, jobs=2, list_only=False, repo=paths.REPO) -> int:
    tally = Tally()
    selected, error = load_guest_cases(repo) if guest else ([], "")
    selected = cases.select(selected, pattern)
    if error:
        print(f"guest: {error}")
        tally.add([Outcome("guest/cases.toml", "FAIL", error)])
    if list_only:
        return list_tests(selected, host, pattern, repo) or (1 if error else 0)
    # The build, unless --host-only: the host tests that boot the system
    # themselves (test_blk, test_netforward, ...) need its images even
    # when -k selects no guest case.
    if guest:
        if build.build(kernel_test=True, repo=repo):
            tally.add([Outcome("build", "FAIL")])
            print("FAIL build: guest cases not run")
        elif selected:
            for result in run_guest(selected, jobs, repo):
                tally.add(result.outcomes)
    if host and pattern and cases.is_glob(pattern):
        print(f"host: -k {pattern!r} is a glob, which selects guest cases only; host tests skipped")
    elif host:
        tally.add(run_host(pattern, repo, jobs))
    print(tally.summary())
    if tally.passed + tally.failed + tally.skipped == 0:
        print("test: no tests ran", file=sys.stderr)
        return 1
    return 1 if tally.failed else 0
