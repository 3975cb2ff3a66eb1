"""The benchmark harness: initramfs writer, BENCH line parsing, the report
and targets, and the Linux benchmark program itself (under qemu-user)."""
import os
import shutil
import subprocess

import pytest

from conftest import REPO
from petrel import bench, cpio, qemu


# Reads a newc archive back: [(name, mode, data)].
def read_newc(blob: bytes) -> list:
    out, at = [], 0
    while True:
        assert blob[at:at + 6] == b"070701"
        fields = [int(blob[at + 6 + 8 * i: at + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name = blob[at + 110: at + 110 + namesize - 1].decode()
        at += 110 + namesize
        at += -at % 4
        data = blob[at: at + size]
        at += size
        at += -at % 4
        if name == "TRAILER!!!":
            return out
        out.append((name, mode, data))


def test_cpio_round_trip():
    blob = cpio.archive({"init": b"\x7fELF...", "etc/x": b"abc"}, dirs=["dev", "proc"], executables=["init"])
    assert len(blob) % 512 == 0
    entries = read_newc(blob)
    assert [e[0] for e in entries] == ["dev", "proc", "init", "etc/x"]
    assert entries[0][1] == 0o040755 and entries[2][1] == 0o100755 and entries[3][1] == 0o100644
    assert entries[2][2] == b"\x7fELF..." and entries[3][2] == b"abc"


def test_parse_keeps_only_known_metrics():
    console = ("boot noise\nBENCH null_syscall petrel 138.000 20000\nBENCH-START petrel\n"
               "BENCH ipc_rtt_4b linux-binder 28884.5 2500\nBENCH bogus petrel 1 1\n"
               "BENCH mem_read_bw linux 4567.000 33554432 MB/s\nBENCH page_fault petrel notanumber 3\n")
    assert bench.parse(console) == {("null_syscall", "petrel"): 138.0, ("ipc_rtt_4b", "linux-binder"): 28884.5,
                                    ("mem_read_bw", "linux"): 4567.0}


ROWS = [
    {"metric": "null_syscall", "system": "petrel", "median": 138.0},
    {"metric": "null_syscall", "system": "linux", "median": 543.0},
    {"metric": "ipc_rtt_4b", "system": "petrel", "median": 500.0},
    {"metric": "ipc_rtt_4b", "system": "linux-binder", "median": 28000.0},
    {"metric": "ipc_rtt_4b", "system": "linux-pipe", "median": 15000.0},
    {"metric": "mem_read_bw", "system": "petrel", "median": 4500.0},
    {"metric": "mem_read_bw", "system": "linux", "median": 4600.0},
]


def test_ratios_and_targets():
    assert bench.ratio("ipc_rtt_4b", 500.0, 28000.0) == 56.0
    assert bench.ratio("mem_read_bw", 4500.0, 4600.0) == pytest.approx(0.978, abs=0.001)
    assert bench.ratio("page_fault", None, 3.0) is None
    results = dict(bench.targets(ROWS))
    assert results["ipc_rtt_4b <= 600 instructions"]
    assert results["ipc_rtt_4b >= 50x cheaper than linux-binder"]
    assert results["null_syscall <= Linux getppid"]
    assert results["mem_read_bw within 3% of Linux"]
    slow = [dict(r, median=700.0) if r["metric"] == "ipc_rtt_4b" and r["system"] == "petrel" else r for r in ROWS]
    assert not dict(bench.targets(slow))["ipc_rtt_4b <= 600 instructions"]


def test_hot_path_targets_are_ratios_of_the_same_run():
    rows = [{"metric": m, "system": "petrel", "median": v} for m, v in [
        ("null_syscall", 80.0), ("ipc_rtt_4b", 383.0), ("noop_kernel_service", 104.0),
        ("noop_user_service", 481.0), ("page_fault", 700.0), ("thread_create_exit", 6000.0),
        ("process_spawn_exit", 50807.0), ("object_rpc_rtt_4b", 574.5)]]
    results = dict(bench.hot_path_targets(rows))
    assert all(results.values()), results
    over = {"null_syscall": 92.0, "ipc_rtt_4b": 401.0, "noop_kernel_service": 104.5,
            "noop_user_service": 481.5, "page_fault": 701.0, "thread_create_exit": 6001.0,
            "process_spawn_exit": 50808.0, "object_rpc_rtt_4b": 575.0}
    for metric, bad in over.items():
        worse = [dict(r, median=bad) if r["metric"] == metric else r for r in rows]
        failed = [name for name, ok in bench.hot_path_targets(worse) if not ok]
        assert len(failed) >= 1 and any(name.startswith(metric) for name in failed), (metric, failed)
    assert not all(dict(bench.hot_path_targets(rows[:1])).values())     # a row missing: not met


def test_report_has_a_row_per_measured_metric():
    text = bench.report(ROWS, qemu.Machine("cortex-a53", 2, 1, "512M", True), "./petrel bench")
    assert "| null_syscall | 138 | 543 |" in text
    assert "binder 56.0x" in text and "pipe 30.0x" in text
    assert "OKL4 paper Fig. 4" in text
    assert "page_fault" not in text                 # nothing measured for it


@pytest.mark.skipif(not shutil.which("qemu-aarch64-static"), reason="qemu-user-static not installed")
def test_linux_benchmark_program_runs(tmp_path):
    program = REPO / "build" / "bench" / "linux" / "init"
    assert program.exists(), "run ./petrel build first"
    r = subprocess.run(["qemu-aarch64-static", str(program), "quick=1"], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    found = bench.parse(r.stdout)
    assert "BENCH-END linux" in r.stdout, r.stdout[-2000:]
    for metric in ["null_syscall", "ipc_rtt_4b", "ipc_rtt_124b", "ipc_rtt_same_as", "notify_wake",
                   "ctx_switch_2p", "page_fault", "map_unmap_4k", "thread_create_exit", "futex_wake",
                   "mem_read_bw", "mem_copy_bw"]:
        assert any(m == metric for m, _ in found), f"{metric} missing"
    for system in ["linux-pipe", "linux-unix", "linux-futex"]:
        assert ("ipc_rtt_4b", system) in found


# lxbench --trace ROW finds a row's group in its own table of rows: it must
# list every lx row of the bench, group by group, in the program's order.
def test_lxbench_trace_table_lists_every_row():
    import re
    src = (REPO / "bench" / "linux" / "lxbench.c").read_text()
    table = re.search(r"static const char \*const rows\[\] = \{(.*?)\};", src, re.S).group(1)
    rows = re.findall(r'"((?:lx|binder)_\w+)"', table)
    # (the Binder rows are timed from a table of their own: { "binder_rtt_4b", 4 })
    timed = re.findall(r'(?:TIME|report)\("(lx_\w+)"|\{ "(binder_\w+)", \d+ \}', src)
    timed = [a or b for a, b in timed]
    assert sorted(rows) == sorted(bench.LX_METRICS)
    assert rows == list(dict.fromkeys(timed)), "the rows in the order the program runs them"


# The application benchmarks (--suite apps): the rows of bench/apps/apps.sh's
# boot, what it said beside them, the report's Table IV section and targets.
APPS_CONSOLE = """lx: run sh /bench/apps.sh
/usr/bin/gs: error while loading shared libraries: libXau.so.6: failed to map segment from shared object
apps: /usr/bin/gs does not load
petrel-linux: pid 9 (gs): unknown system call 999, returning ENOSYS
BENCH app_lame - 101000000.000 1
BENCH-OUT lame.mp3 aaaa
BENCH-SKIP app_ghostscript /usr/bin/gs exited with status 127
BENCH-OUT ghostscript.png -
BENCH app_xz - 500000000.000 1
BENCH-OUT xz.xz cccc
BENCH-END
"""


def test_app_rows_and_what_the_boot_said():
    assert bench.parse(APPS_CONSOLE, "petrel-linux-kernel") == {
        ("app_lame", "petrel-linux-kernel"): 101000000.0, ("app_xz", "petrel-linux-kernel"): 500000000.0}
    notes = bench.app_notes(APPS_CONSOLE)
    assert notes["skip"] == {"app_ghostscript": "/usr/bin/gs exited with status 127"}
    assert notes["out"] == {"lame.mp3": "aaaa", "ghostscript.png": "-", "xz.xz": "cccc"}
    assert notes["said"] == ["/usr/bin/gs: error while loading shared libraries: libXau.so.6: failed to map "
                             "segment from shared object", "/usr/bin/gs does not load"]
    assert notes["unknown"] == ["gs: 999"]


# Every app row on the three systems (Petrel's at Linux's time), but for
# app_lame, app_ghostscript (missing in the kernel placement) and app_xz.
def apps_rows(kernel_lame: float) -> list:
    figures = {"linux": (100e6, 1200e6, 550e6), "petrel-linux-kernel": (kernel_lame, None, 500e6),
               "petrel-linux-user": (100.5e6, 1210e6, 551e6)}
    rows = []
    for system, (lame, gs, xz) in figures.items():
        given = {"app_lame": lame, "app_ghostscript": gs, "app_xz": xz}
        rows += [{"metric": m, "system": system, "median": given.get(m, 1e6)} for m in bench.SUITE_APPS
                 if given.get(m, 1e6) is not None]
    return rows


def test_apps_report_shows_slowdowns_beside_table_iv_and_what_went_wrong():
    linux = bench.app_notes(APPS_CONSOLE.replace("BENCH-OUT ghostscript.png -", "BENCH-OUT ghostscript.png bbbb")
                            .replace("BENCH-OUT xz.xz cccc", "BENCH-OUT xz.xz dddd"))
    linux.update(said=[], skip={}, unknown=[])
    notes = {"linux": linux, "petrel-linux-kernel": bench.app_notes(APPS_CONSOLE), "failed": {}}
    text = bench.report(apps_rows(101e6), qemu.Machine("cortex-a53", 2, 1, "512M", True),
                        "./petrel bench --suite apps", notes)
    assert "| metric | Petrel |" not in text            # no rows of the default suite
    assert "| app_lame | lame: 4 s of 44.1 kHz stereo WAV to a 128 kbit/s MP3 | 100,000,000 | 101,000,000 | " \
           "1.010x | 100,500,000 | 1.005x | lame | 78.69 | 81.1 | 1.03x |" in text
    assert "| app_ghostscript |" in text and "| failed | – |" in text
    assert "| app_xz |" in text and "| – | – | – | – |" in text        # no Table IV row for xz
    assert "- petrel-linux-kernel: app_ghostscript failed (/usr/bin/gs exited with status 127)" in text
    assert "- petrel-linux-kernel: unknown system call gs: 999" in text
    assert "- petrel-linux-kernel: outputs unlike Linux's (or not made): ghostscript.png, xz.xz" in text
    clean = {s: dict(linux) for s in bench.LX_SYSTEMS}
    text = bench.report(apps_rows(101e6), qemu.Machine("cortex-a53", 2, 1, "512M", True), "x", clean)
    assert "each of the 3 output files is the same as Linux's" in text and "What went wrong" not in text


def test_apps_targets_want_every_row_within_two_percent_in_both_placements():
    with_gs = apps_rows(101e6) + [{"metric": "app_ghostscript", "system": "petrel-linux-kernel", "median": 1e9}]
    kernel, user = bench.apps_targets(with_gs)
    assert "petrel-linux-kernel" in kernel[0] and "worst app_lame 1.010x" in kernel[0] and kernel[1]
    assert user[1] and "worst app_ghostscript 1.008x" in user[0]
    kernel, _ = bench.apps_targets(apps_rows(102.5e6) + with_gs[-1:])
    assert not kernel[1] and "worst app_lame 1.025x" in kernel[0]
    kernel, user = bench.apps_targets(apps_rows(101e6))             # ghostscript missing in the kernel placement
    assert not kernel[1] and kernel[0].endswith("missing app_ghostscript)") and user[1]


# apps.sh times exactly the rows the harness knows, in its order, and each
# row's Table IV counterpart is one of the paper's rows.
def test_apps_script_times_the_suite_rows():
    import re
    script = (REPO / "bench" / "apps" / "apps.sh").read_text()
    assert re.findall(r"lxbench --time (app_\w+) ", script) == list(bench.SUITE_APPS)
    assert all(paper is None or paper in bench.TABLE_IV for _, paper in bench.SUITE_APPS.values())
    assert len(bench.TABLE_IV) == 18


def test_suite_option_is_checked_before_building(capsys):
    assert bench.main("icount", "cortex-a53", 1, "lx_stat", None, suite="apps") == 2
    assert "--only names an app_ row" in capsys.readouterr().err
    assert bench.main("icount", "cortex-a53", 1, None, None, suite="nosuch") == 2


# The parallel speed-up rows (lxpar, wall mode, --smp N >= 2): each boot's
# speed-up is time(1) / time(N) of that boot; a row's figure the median.
PAR_CONSOLE = """lx: run lxpar threads 1
lxpar: threads 1 worker, 1260000000 steps, every answer right; cpus 1
BENCH lx_parallel_time_threads_1 - 1500000000 1260000000
lxpar: threads 2 workers, 1260000000 steps, every answer right; cpus 1 0>1
BENCH lx_parallel_time_threads_2 - 750000000 1260000000
lxpar: procs 1 worker, 1260000000 steps, every answer right; cpus 0
BENCH lx_parallel_time_procs_1 - 1400000000 1260000000
BENCH-FAIL lx_parallel_time_procs_2 worker 2 of 2: ended at 1, expected 2
lx: exit 1
BENCH-END
"""


def test_parallel_rows_pair_the_times_of_one_boot():
    samples, notes = {}, {"said": [], "cpus": {}}
    bench.speedup_boot(bench.PAR, PAR_CONSOLE, "linux", 2, samples, notes)
    bench.speedup_boot(bench.PAR, PAR_CONSOLE.replace("750000000", "1000000000"), "linux", 2, samples, notes)
    assert samples == {("lx_parallel_speedup_threads_2", "linux"): [2.0, 1.5]}       # procs: no time with 2
    assert notes["said"] == ["linux: BENCH-FAIL lx_parallel_time_procs_2 worker 2 of 2: ended at 1, expected 2"] * 2
    assert notes["cpus"][("linux", "lx_parallel_time_threads_2")] == {"0>1 1": 2}
    rows = bench.summary(samples, "wall")
    assert rows[0]["unit"] == "x" and rows[0]["median"] == 1.75 and rows[0]["min"] == 1.5
    assert ("lx_parallel_time_threads_2", "linux") in bench.parse(PAR_CONSOLE, "linux")


def test_parallel_targets_want_nine_tenths_of_linux_in_both_placements():
    rows = [{"metric": "lx_parallel_speedup_threads_2", "system": s, "median": v, "min": v, "max": v, "runs": 5}
            for s, v in [("linux", 1.9), ("petrel-linux-kernel", 1.72), ("petrel-linux-user", 1.0)]]
    (kernel, ok_k), (user, ok_u), *procs = bench.speedup_targets(
        bench.PAR, rows, ["lx_parallel_speedup_threads_2", "lx_parallel_speedup_procs_2"])
    assert ok_k and "1.72x against 1.90x, 0.91" in kernel
    assert not ok_u and "petrel-linux-user" in user
    assert len(procs) == 2 and all(not ok and name.endswith("(missing)") for name, ok in procs)
    text = bench.report(rows, qemu.Machine("cortex-a53", 2, 2, "512M", False), "x",
                        par={"lx_parallel_speedup": {"rows": ["lx_parallel_speedup_threads_2"], "failed": {},
                                                     "said": [], "cpus": {}}})
    assert "| lx_parallel_speedup_threads_2 | 1.90x (1.90–1.90) | 1.72x (1.72–1.72) | 0.91 | 1.00x" in text
    assert "host cores" not in text
    text = bench.report(rows, qemu.Machine("cortex-a53", 2, 4, "512M", False), "x",
                        par={"lx_parallel_speedup": {"rows": [], "failed": {}, "said": [], "cpus": {}, "smp": 4,
                                                     "host_cores": 2}})
    assert "runs the 4 virtual cores on 2 host cores" in text


def test_parallel_rows_are_not_applicable_under_icount_or_on_one_core(capsys):
    assert bench.not_applicable(qemu.Machine(smp=2, icount=True))
    assert bench.not_applicable(qemu.Machine(smp=1))
    assert bench.not_applicable(qemu.Machine(smp=4)) is None
    par = bench.PAR
    assert bench.wanted(par, "") and bench.wanted(par, "lx") and bench.wanted(par, "lx_parallel_speedup_procs_4")
    assert not bench.wanted(par, "lx_stat") and not bench.wanted(par, "lx_syscall_scaling")
    text = bench.report([], qemu.Machine(smp=1, icount=True), "./petrel bench",
                        par={"lx_parallel_speedup": {"na": bench.not_applicable(qemu.Machine(smp=1, icount=True))}})
    assert "Not applicable: under -icount" in text
    # Refused before anything is built: icount, one core, a row of another N.
    assert bench.main("icount", "cortex-a53", 2, "lx_parallel_speedup", None) == 2
    assert bench.main("wall", "cortex-a53", 1, "lx_parallel_speedup", None) == 2
    assert bench.main("wall", "cortex-a53", 2, "lx_parallel_speedup_threads_4", None) == 2
    assert "the machine has --smp 2" in capsys.readouterr().err


# lxpar checks every worker's answer: right for any split, and its BENCH
# line names the row the harness pairs.
@pytest.mark.skipif(not shutil.which("qemu-aarch64-static"), reason="qemu-user-static not installed")
def test_lxpar_checks_every_worker(tmp_path):
    program = REPO / "build" / "linux" / "bin" / "lxpar"
    assert program.exists(), "run ./petrel build first"
    for kind, workers in [("threads", 1), ("threads", 3), ("procs", 4)]:
        r = subprocess.run(["qemu-aarch64-static", str(program), kind, str(workers), "10007"], capture_output=True,
                           text=True, timeout=60, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "every answer right" in r.stdout
        assert (f"lx_parallel_time_{kind}_{workers}", "linux") in bench.parse(r.stdout, "linux")
    r = subprocess.run(["qemu-aarch64-static", str(program), "threads", "0"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr


# The system call scaling rows (lxscale, wall mode, --smp N >= 2): each
# boot's speed-up is the time of the job on one core / on N cores.
SCALE_CONSOLE = """lx: run lxscale --cores 1 getppid 2
lxscale: getppid 2 workers on 1 core, 150000 calls each, every one right; cpus 0 0
BENCH lx_syscall_time_getppid_2_on_1 - 3000000000 300000
lxscale: getppid 2 workers on 2 cores, 150000 calls each, every one right; cpus 1 0
BENCH lx_syscall_time_getppid_2_on_2 - 1600000000 300000
lxscale: pipe 2 workers on 1 core, 10000 round trips each, every one right; cpus 0/0 0/0
BENCH lx_syscall_time_pipe_2_on_1 - 2800000000 20000
lxscale: pipe 2 workers on 2 cores, 10000 round trips each, every one right; cpus 1/0 0>1/1
BENCH lx_syscall_time_pipe_2_on_2 - 1400000000 20000
BENCH-FAIL lx_syscall_time_zero_2_on_1 partner of worker 2 of 2: read 7: read returned -1 (Bad address)
lx: exit 1
BENCH-END
"""


def test_scaling_rows_pair_one_core_with_n_cores_in_one_boot():
    samples, notes = {}, {"said": [], "cpus": {}}
    bench.speedup_boot(bench.SCALE, SCALE_CONSOLE, "petrel-linux-user", 2, samples, notes)
    bench.speedup_boot(bench.SCALE, SCALE_CONSOLE.replace("1600000000", "2000000000"), "petrel-linux-user", 2,
                       samples, notes)
    assert samples == {("lx_syscall_scaling_getppid_2", "petrel-linux-user"): [1.875, 1.5],
                       ("lx_syscall_scaling_pipe_2", "petrel-linux-user"): [2.0, 2.0]}      # zero: no times
    assert notes["said"] == ["petrel-linux-user: BENCH-FAIL lx_syscall_time_zero_2_on_1 partner of worker 2 of 2: "
                             "read 7: read returned -1 (Bad address)"] * 2
    # The cores in a canonical order: by worker's core, then partner's.
    assert notes["cpus"][("petrel-linux-user", "lx_syscall_time_getppid_2_on_2")] == {"0 1": 2}
    assert notes["cpus"][("petrel-linux-user", "lx_syscall_time_pipe_2_on_2")] == {"0>1/1 1/0": 2}
    assert notes["cpus"][("petrel-linux-user", "lx_syscall_time_pipe_2_on_1")] == {"0/0 0/0": 2}
    figures = bench.parse(SCALE_CONSOLE, "linux")
    assert figures[("lx_syscall_time_pipe_2_on_2", "linux")] == 1.4e9
    assert ("lx_syscall_time_getppid_2", "linux") not in figures
    rows = bench.summary(samples, "wall")
    assert rows[0]["unit"] == "x" and rows[0]["median"] == 1.6875
    assert bench.speedup_of("lx_syscall_scaling_zero_4") is bench.SCALE
    assert bench.speedup_of("lx_syscall_time_zero_2_on_1") is None and bench.speedup_of("lx_stat") is None
    assert [cmd for cmd, _, _ in bench.SCALE.jobs("pipe", 4)] == ["lxscale --cores 1 pipe 4", "lxscale pipe 4"]


def scale_rows(n, figures):
    return [{"metric": f"lx_syscall_scaling_{kind}_{n}", "system": s, "median": v, "min": v, "max": v, "runs": 3}
            for kind, by_system in figures.items() for s, v in by_system.items()]


def test_scaling_targets_want_1_7x_at_two_cores_in_both_placements():
    rows = scale_rows(2, {"getppid": {"linux": 1.95, "petrel-linux-kernel": 1.72, "petrel-linux-user": 0.4},
                          "pipe": {"linux": 1.5, "petrel-linux-kernel": 1.8}})
    measured = ["lx_syscall_scaling_getppid_2", "lx_syscall_scaling_pipe_2"]
    (kernel, ok_k), (user, ok_u), (pipe_k, ok_pk), (pipe_u, ok_pu) = bench.speedup_targets(bench.SCALE, rows,
                                                                                           measured)
    assert ok_k and kernel == "lx_syscall_scaling_getppid_2, petrel-linux-kernel: speed-up at least 1.7x " \
                              "(1.72x; Linux 1.95x)"
    assert not ok_u and "(0.40x; Linux 1.95x)" in user
    assert ok_pk and "Linux 1.50x" in pipe_k                # Linux's own figure does not matter
    assert not ok_pu and pipe_u.endswith("(missing; Linux 1.50x)")
    assert bench.speedup_targets(bench.SCALE, scale_rows(4, {"zero": {"linux": 3.0}}),
                                 ["lx_syscall_scaling_zero_4"]) == []       # no target at N = 4
    notes = {"rows": measured, "failed": {"petrel-linux-user": "no end"}, "said": [],
             "cpus": {("linux", "lx_syscall_time_pipe_2_on_2"): {"0/1 1/0": 3}}, "smp": 2, "host_cores": 2}
    rows.append({"metric": "lx_syscall_time_pipe_2_on_2", "system": "linux", "median": 1.4e9, "min": 1.4e9,
                 "max": 1.4e9, "runs": 3})
    text = bench.report(rows, qemu.Machine("cortex-a53", 2, 2, "512M", False), "x", par={"lx_syscall_scaling": notes})
    assert "## System call scaling (lx_syscall_scaling)" in text and "the median of 3 boots" in text
    assert "| lx_syscall_scaling_getppid_2 | 1.95x (1.95–1.95) | 1.72x (1.72–1.72) | 0.88 | 0.40x" in text
    assert "| pipe, 2 workers on 2 cores | 1.400 s; cores 0/1 1/0 (3) | – | – |" in text
    assert "| pipe, 2 workers on 1 core | – | – | – |" in text
    assert "- petrel-linux-user: no end" in text and "Parallel speed-up" not in text


def test_scaling_rows_are_refused_where_they_cannot_be_measured(capsys):
    assert bench.wanted(bench.SCALE, "") and bench.wanted(bench.SCALE, "lx")
    assert bench.wanted(bench.SCALE, "lx_syscall_scaling") and not bench.wanted(bench.SCALE, "lx_parallel_speedup")
    assert bench.main("icount", "cortex-a53", 2, "lx_syscall_scaling", None) == 2
    assert bench.main("wall", "cortex-a53", 1, "lx_syscall_scaling_pipe_1", None) == 2
    assert bench.main("wall", "cortex-a53", 2, "lx_syscall_scaling_zero_4", None) == 2
    assert "its N is 4, the machine has --smp 2" in capsys.readouterr().err
    text = bench.report([], qemu.Machine(smp=1), "./petrel bench",
                        par={"lx_syscall_scaling": {"na": bench.not_applicable(qemu.Machine(smp=1))}})
    assert "Not applicable: one core" in text and "--only lx_syscall_scaling`" in text


# lxscale checks every process's calls, pins them where it says, and its
# BENCH line names the time row the harness pairs.
@pytest.mark.skipif(not shutil.which("qemu-aarch64-static"), reason="qemu-user-static not installed")
def test_lxscale_runs_every_kind_on_one_core_and_on_all(tmp_path):
    program = REPO / "build" / "linux" / "bin" / "lxscale"
    assert program.exists(), "run ./petrel build first"
    for args, row in [(["getppid", "2", "500"], None), (["--cores", "1", "zero", "3", "300"], "zero_3_on_1"),
                      (["--cores", "1", "pipe", "2", "200"], "pipe_2_on_1"), (["pipe", "1", "200"], None)]:
        r = subprocess.run(["qemu-aarch64-static", str(program), *args], capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "every one right" in r.stdout
        (metric, _), = bench.parse(r.stdout, "linux")
        assert bench.SCALE.time_re.fullmatch(metric) and (row is None or metric == f"lx_syscall_time_{row}")
        job, cores = bench.SCALE.cores_seen(r.stdout.splitlines()[0])
        assert job == metric
        if row:                                  # one core: every process on the first core of the mask
            assert set(cores.replace("/", " ").split()) == {str(min(os.sched_getaffinity(0)))}
    more = str(len(os.sched_getaffinity(0)) + 1)                   # more cores than the host gives it
    r = subprocess.run(["qemu-aarch64-static", str(program), "--cores", more, "getppid", "1", "10"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.startswith("BENCH-FAIL lx_syscall_time_getppid_1 worker 1 of 1: fewer cores")
    for args in (["pipe", "0"], ["--cores", "99", "getppid", "1"], ["getpid", "1"]):
        r = subprocess.run(["qemu-aarch64-static", str(program), *args], capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
        assert r.returncode == 2 and "usage" in r.stderr


# Other work on the host takes host cores a speed-up needs: the report
# says how much there was, and warns above OTHER_LOAD.
def test_speedup_report_says_what_else_the_host_ran():
    assert bench.host_other((0.0, 100.0, 5.0), (10.0, 130.0, 25.0)) == 1.0      # 30 s busy, 20 of them ours
    assert bench.host_other((0.0, 100.0, 5.0), (10.0, 120.0, 26.0)) == 0.0
    assert bench.host_other((0.0, None, 5.0), (10.0, None, 25.0)) is None
    wall, busy, own = bench.host_times()
    assert wall > 0 and own > 0 and (busy is None or busy > 0)
    notes = {"rows": [], "failed": {}, "said": [], "cpus": {}, "smp": 2, "host_cores": 2, "host_other": 0.93}
    text = bench.report([], qemu.Machine(smp=2), "x", par={"lx_syscall_scaling": notes})
    assert "kept 0.93 of its cores busy on average during these boots: the N-core jobs had fewer" in text
    notes["host_other"] = 0.05
    text = bench.report([], qemu.Machine(smp=2), "x", par={"lx_syscall_scaling": notes})
    assert "kept 0.05 of its cores busy on average during these boots.\n" in text


def test_input_rows_compare_each_path_with_linuxs_and_want_10x_from_petrels_own():
    figures = {"linux": 27000.0, "petrel": 1500.0, "petrel-user": 2900.0, "petrel-linux-kernel": 12000.0,
               "petrel-linux-user": 16000.0}
    rows = [{"metric": "input_path_e2e", "system": s, "median": v} for s, v in figures.items()]
    text = "".join(bench.input_report(rows, "guest instructions"))
    assert "| input_path_e2e | 27,000 | 1,500 | 18.00x | 2,900 | 9.31x | 12,000 | 2.25x | 16,000 | 1.69x |" in text
    target = [ok for name, ok in bench.lx_targets(rows) if name.startswith("input_path_e2e")]
    assert target == [True]
    slow = [dict(r, median=3000.0) if r["system"] == "petrel" else r for r in rows]
    assert [ok for name, ok in bench.lx_targets(slow) if name.startswith("input_path_e2e")] == [False]
    found = bench.parse("BENCH input_path_e2e - 1440.000 20\nBENCH input_obtain - 208.000 20\n", "petrel")
    assert found == {("input_path_e2e", "petrel"): 1440.0, ("input_obtain", "petrel"): 208.0}
