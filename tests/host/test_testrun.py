"""The guest test runner: judging consoles, and real runs of fake kernels."""
import pytest

from petrel import bootimage, cases, testrun


# Returns one case parsed from the body of a [[case]] table.
def case(body: str) -> cases.Case:
    return cases.parse_cases(f'[[case]]\nname = "c"\n{body}\n', steps=testrun.PRE_STEPS)[0]


# Returns the statuses of evaluate()'s outcomes as a list of (name, status).
def statuses(outcomes):
    return [(o.name, o.status) for o in outcomes]


def test_passing_boot():
    reasons, outcomes = testrun.evaluate(case('expect = ["Petrel", "cores: 1"]'), 0, "Petrel\ncores: 1\n")
    assert reasons == [] and statuses(outcomes) == [("c", "ok")]


def test_expect_must_match_in_order():
    reasons, _ = testrun.evaluate(case('expect = ["b", "a"]'), 0, "a\nb\n")
    assert reasons == ["expected /a/ not found on the console after the previous expected text"]
    reasons, _ = testrun.evaluate(case(r'expect = ["^cores: \\d+$"]'), 0, "x cores: 2\ncores: 2\n")
    assert reasons == []


def test_wrong_exit_timeout_and_panic_fail():
    c = case("")
    assert testrun.evaluate(c, 1, "")[0] == ["exit status 1, expected 0"]
    assert "timeout" in testrun.evaluate(c, None, "")[0][0]
    reasons, outcomes = testrun.evaluate(c, 0, "boot\nPANIC: data abort at 0x0\n")
    assert reasons == ["kernel panic: PANIC: data abort at 0x0"] and outcomes[0].status == "FAIL"


def test_expect_exit_nonzero_and_allow_panic():
    c = case('expect_exit = "nonzero"\nallow_panic = true\nexpect = ["PANIC"]')
    assert testrun.evaluate(c, 3, "PANIC: on purpose\n")[0] == []
    assert testrun.evaluate(c, 0, "PANIC: on purpose\n")[0] == ["exit status 0, expected non-zero"]


def test_tap_case_reports_each_test_and_missing_ones():
    console = "1..4\nok 1 - alpha\nnot ok 2 - beta\n# got 0\nok 3 - gamma # SKIP later\nPANIC: oops\n"
    reasons, outcomes = testrun.evaluate(case("tap = true"), 1, console)
    assert statuses(outcomes) == [("c", "FAIL"), ("c/alpha", "ok"), ("c/beta", "FAIL"),
                                  ("c/gamma", "skip"), ("c/4", "FAIL")]
    assert outcomes[2].detail == "not ok 2; got 0"
    assert outcomes[4].detail == "planned but never reported"
    assert reasons[0] == "exit status 1, expected 0" and "PANIC" in reasons[1]


def test_tap_case_without_plan_fails():
    reasons, outcomes = testrun.evaluate(case("tap = true"), 0, "ok 1 - a\n")
    assert reasons == ["no TAP plan (1..N) on the console"]
    assert statuses(outcomes) == [("c", "FAIL"), ("c/a", "ok")]


def test_tally_summary_names_failures_then_counts():
    tally = testrun.Tally()
    tally.add([testrun.Outcome("a", "ok"), testrun.Outcome("b", "FAIL"), testrun.Outcome("c", "ok")])
    assert tally.summary() == "failed: b\n2 passed, 1 failed"
    tally.add([testrun.Outcome("d", "skip"), testrun.Outcome("e", "FAIL", "timeout")])
    assert tally.summary() == "failed: b\nfailed: e  (timeout)\n2 passed, 2 failed, 1 skipped"
    clean = testrun.Tally()
    clean.add([testrun.Outcome("a", "ok")])
    assert clean.summary() == "1 passed, 0 failed"


def test_summary_repeats_the_console_lines_that_tell_why():
    console = "".join(f"line {i}\n" for i in range(40)).replace("line 3\n", "x: FAIL op 3\n")
    console += "x: 10 ops, 1 failures, usage ~NOT back\nend\n"
    _, outcomes = testrun.evaluate(case('expect = ["usage ~back"]'), 0, console)
    assert outcomes[0].evidence == ["x: FAIL op 3", "...", "line 36", "line 37", "line 38", "line 39",
                                    "x: 10 ops, 1 failures, usage ~NOT back", "end"]
    assert testrun.evaluate(case('expect = ["end"]'), 0, console)[1][0].evidence == []
    tally = testrun.Tally()
    tally.add([outcomes[0]] + [testrun.Outcome(f"c{i}", "FAIL", "", ["why"]) for i in range(5)])
    text = tally.summary().splitlines()
    assert text[0].startswith("failed: c  (expected /usage ~back/") and text[1] == "        | x: FAIL op 3"
    assert text.count("        | why") == 3 and text[-2:] == ["failed: c4", "0 passed, 6 failed"]


def test_junit_outcomes(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text("""<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="tests.host.test_x" name="test_ok"/>
<testcase classname="tests.host.test_x" name="test_bad"><failure message="x"/></testcase>
<testcase classname="tests.host.test_x" name="test_err"><error message="x"/></testcase>
<testcase classname="tests.host.test_x" name="test_skip"><skipped message="x"/></testcase>
</testsuite></testsuites>""")
    assert statuses(testrun.junit_outcomes(xml)) == [
        ("host/test_x::test_ok", "ok"), ("host/test_x::test_bad", "FAIL"),
        ("host/test_x::test_err", "FAIL"), ("host/test_x::test_skip", "skip")]


def test_format_case_shows_counter_tests_reasons_and_console_tail(tmp_path):
    c = case("tap = true")
    console = "".join(f"line {i}\n" for i in range(40)) + "1..1\nnot ok 1 - x\n"
    reasons, outcomes = testrun.evaluate(c, 0, console)
    result = testrun.CaseResult(c, outcomes, reasons, console, 0.42, tmp_path / "c.log")
    lines = testrun.format_case(result, 3, 25, tmp_path)
    assert lines[0] == "[ 3/25] c ... FAIL (0.4s, 1 tests)"
    assert lines[1].split() == ["FAIL", "c/x", "(not", "ok", "1)"]
    assert "last 30 console lines" in lines[2]
    assert lines[-1].endswith("| not ok 1 - x") and len(lines) == 33


# Builds a fake repository whose kernel flavours are fake kernels.
@pytest.fixture
def fake_repo(tmp_path, fake_kernel, elf):
    (tmp_path / "build" / "user").mkdir(parents=True)
    (tmp_path / "build" / "user" / "root.elf").write_bytes(elf(b"root task"))
    for flavour, text, end in (("kernel", "Petrel\ncores: 1\n", "psci"),
                               ("kernel-test", "1..2\nok 1 - a\nnot ok 2 - b\n", 1),
                               ("kernel-hang", "1..2\nok 1 - a\n", "hang")):
        (tmp_path / "build" / flavour).mkdir()
        (tmp_path / "build" / flavour / "kernel.bin").write_bytes(fake_kernel(text, end).read_bytes())
    (tmp_path / "data.txt").write_text("data")
    return tmp_path


def test_guest_cases_run_in_qemu_end_to_end(fake_repo, capsys):
    text = """
[defaults]
timeout = 10
[[case]]
name = "boot/ok"
expect = ["Petrel", "cores: {smp}"]
files = [["notes", "data.txt"]]
[[case]]
name = "ktest"
kernel = "kernel-test"
tap = true
expect_exit = "nonzero"
[[case]]
name = "hang"
kernel = "kernel-hang"
tap = true
timeout = 1
[[case]]
name = "unbuilt"
kernel = "kernel-nope"
"""
    selected = cases.parse_cases(text, steps=testrun.PRE_STEPS)
    results = {r.case.name: r for r in testrun.run_guest(selected, 2, fake_repo)}
    assert statuses(results["boot/ok"].outcomes) == [("boot/ok", "ok")]
    assert statuses(results["ktest"].outcomes) == [("ktest", "ok"), ("ktest/a", "ok"), ("ktest/b", "FAIL")]
    assert statuses(results["hang"].outcomes) == [("hang", "FAIL"), ("hang/a", "ok"), ("hang/2", "FAIL")]
    assert "does not exist" in results["unbuilt"].reasons[0]
    log = fake_repo / "build" / "test" / "logs" / "boot" / "ok.log"
    assert "cores: 1" in log.read_text() and "-initrd" in log.read_text()
    image = bootimage.unpack((fake_repo / "build" / "test" / "images" / "boot_ok.pbi").read_bytes())
    assert [e.name for e in image] == ["root", "notes"]
    out = capsys.readouterr().out
    assert "/4] boot/ok ... ok (" in out and "FAIL ktest/b" in out


def test_missing_program_fails_the_case_without_booting(fake_repo):
    c, = cases.parse_cases('[[case]]\nname = "x"\nprograms = ["root", "nothere"]\n')
    result = testrun.run_case(c, fake_repo, {})
    assert result.failed and "build/user/nothere.elf does not exist" in result.reasons[0]


def test_failed_preparation_step_fails_its_cases(fake_repo):
    c, = cases.parse_cases('[[case]]\nname = "x"\npre = ["dtb-fixtures"]\n', steps=testrun.PRE_STEPS)
    failed = testrun.run_pre_steps([c], fake_repo)  # no good.dts in the fake repository
    assert "good.dts is missing" in failed["dtb-fixtures"]
    result = testrun.run_case(c, fake_repo, failed)
    assert result.failed and "preparation step 'dtb-fixtures' failed" in result.reasons[0]


def test_runner_errors_become_case_failures(fake_repo, monkeypatch):
    from petrel import qemu

    def no_qemu(argv, timeout, input_text="", input_after="", steps=(), on_start=None):
        raise qemu.QemuMissing("qemu-system-aarch64 not found")
    monkeypatch.setattr(qemu, "run", no_qemu)
    selected = cases.parse_cases('[[case]]\nname = "x"\n')
    result, = testrun.run_guest(selected, 1, fake_repo)
    assert result.failed and result.reasons == ["runner error: qemu-system-aarch64 not found"]


# Guest cores never outnumber the host cores the runner was given: cases
# of 1, 2 and 4 cores on 2 host cores, run by as many workers as cases,
# never hold more than 2 at once, and a case wider than the host takes
# all of it, alone.
def test_core_slots_never_oversubscribe():
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    slots = testrun.CoreSlots(2)
    lock = threading.Lock()
    busy = [0]
    peak = [0]
    alone = []

    def run(smp):
        n = slots.acquire(smp)
        with lock:
            busy[0] += n
            peak[0] = max(peak[0], busy[0])
            if smp >= 2:
                alone.append(busy[0] == 2)
        time.sleep(0.01)
        with lock:
            busy[0] -= n
        slots.release(n)
        return n

    widths = [1, 2, 1, 4, 1, 1, 2, 1] * 3
    with ThreadPoolExecutor(max_workers=len(widths)) as pool:
        taken = list(pool.map(run, widths))
    assert taken == [min(w, 2) for w in widths]
    assert peak[0] == 2 and all(alone) and busy[0] == 0 and slots.free == 2


# A pcap file (libpcap format, Ethernet) holding `frames`.
def write_pcap(path, frames):
    import struct
    data = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    for i, f in enumerate(frames):
        data += struct.pack("<IIII", 1000 + i, 0, len(f), len(f)) + f
    path.write_bytes(data)


# An Ethernet frame with an IPv4 ICMP echo request; `good`: its checksums right.
def icmp_frame(good=True):
    def csum(b):
        s = sum(int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2))
        while s >> 16:
            s = (s & 0xffff) + (s >> 16)
        return (~s & 0xffff).to_bytes(2, "big")
    icmp = bytearray(b"\x08\x00\x00\x00\x12\x34\x00\x01" + bytes(range(32)))
    icmp[2:4] = csum(bytes(icmp)) if good else b"\xde\xad"
    ip = bytearray(b"\x45\x00" + (20 + len(icmp)).to_bytes(2, "big") + b"\x00\x01\x40\x00\x40\x01\x00\x00"
                   + bytes([10, 0, 2, 15, 10, 0, 2, 2]))
    ip[10:12] = csum(bytes(ip))
    return b"\x52\x55\x0a\x00\x02\x02\x52\x54\x00\x12\x34\x56\x08\x00" + bytes(ip) + bytes(icmp)


def test_recorded_frames_are_judged_by_tshark(tmp_path):
    good = tmp_path / "good.pcap"
    write_pcap(good, [icmp_frame()])
    assert testrun.judge_frames(good, ["icmp"], tmp_path) == []
    missing = testrun.judge_frames(good, ["arp", "icmp"], tmp_path)
    assert len(missing) == 1 and missing[0].startswith("no arp frames in good.pcap (seen: ")
    bad = tmp_path / "bad.pcap"
    write_pcap(bad, [icmp_frame(), icmp_frame(False), icmp_frame()[:20]])
    reasons = testrun.judge_frames(bad, ["icmp"], tmp_path)
    assert len(reasons) == 1 and reasons[0].startswith("2 frames of bad.pcap malformed, in error or with a bad checksum")
    assert testrun.judge_frames(tmp_path / "none.pcap", [], tmp_path) == ["no frames were recorded (none.pcap is missing)"]
