"""`./petrel bench`: Petrel against Linux, side by side in the same QEMU.

Both systems boot on exactly the same machine (cpu, cores, memory, mode):
Petrel with the bench image (bench/programs/: bench as the root task,
benchpeer, benchnull), Linux (Debian's arm64 kernel, see linuxbase.py) with
an initramfs whose /init is bench/linux/bench.c. Each prints BENCH lines
(bench/common/bench.h), which are collected into build/bench/results.json,
a report build/bench/report.md in the source papers' shape, and a bar
chart of the ratios, build/bench/ratios.png.

`--suite apps` runs only the application benchmarks (the L4Linux paper's
Table IV with Debian's programs, bench/apps/apps.sh) on Linux and on
Petrel's Linux personality in both placements; the default suite leaves
them out.

In wall mode on two cores or more (--smp N), the lx_parallel_speedup
rows time lxpar (bench/linux/lxpar.c) doing the same CPU-bound work with
one worker and with N, as threads and as processes, and the
lx_syscall_scaling rows time lxscale (bench/linux/lxscale.c) running N
processes that make system calls (getppid, reads of /dev/zero, pipe round
trips), all on one core and then spread over the N, on the same three
systems: Petrel's speed-up against Linux's (collect_speedup).

--mode icount runs QEMU with `-icount shift=0,align=off,sleep=off`: one
guest instruction is one nanosecond of guest time, so a figure is an
instruction count and repeats exactly. --mode wall runs plain TCG several
times and keeps the median, minimum and maximum.
"""
import dataclasses
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from petrel import bootimage, build, cpio, debian, linuxbase, paths, qemu

METRICS = [
    "null_syscall", "ipc_rtt_4b", "ipc_rtt_124b", "ipc_rtt_same_as", "ipc_rtt_cross_core",
    "notify_wake", "ctx_switch_2p", "page_fault", "map_unmap_4k", "thread_create_exit",
    "process_spawn_exit", "futex_wake", "mem_read_bw", "mem_copy_bw",
    "noop_function_call", "noop_kernel_service", "noop_user_service",
    "file_read_kernel", "file_read_user", "file_write_kernel", "file_write_user",
    "irq_latency_under_kservice", "monitor_event", "monitor_off", "monitor_emit",
    "monitor_emit_many", "object_rpc_rtt_4b",
]
# Native object RPC (the Android issue): a call of an object that a program
# serves through idlc's skeleton, looked up in the service manager
# (systems/object-rpc-bench.toml, tests/programs/rpccli bench=N), on a boot of
# its own.
OBJECT_RPC = "object_rpc_rtt_4b"
OBJECT_RPC_SYSTEM = "object-rpc-bench"
# Measured on Petrel alone: the worst lateness of a timer wake-up of a
# priority-250 thread while a priority-100 thread on core 0 reads 1 MiB at a
# time through the file service in the kernel (system petrel), in user space
# (petrel-user), or runs a plain loop (petrel-loop), or nothing runs
# (petrel-idle). On one core the sleeper shares core 0; with --smp 2 it
# runs on core 1 (see docs/benchmarks.md on what icount does to that).
PETREL_ONLY = {"irq_latency_under_kservice", "monitor_event", "monitor_off", "monitor_emit", "monitor_emit_many"}
# The monitor's rows (the bench program's monitor()): one system call timed
# with every tracepoint off and with one recording, and on a kernel built
# with CONFIG_TRACE=n (build/notrace, made here): monitor_event is what a
# recorded event adds, monitor_off what each of the call's two disabled
# sites adds to the kernel without tracepoints.
MONITOR_RAW = ["monitor_path_off", "monitor_path_on", "monitor_path_base"]
MONITOR_SITES = 2
MONITOR_TARGETS = {"monitor_event": 60, "monitor_off": 3, "monitor_emit": None, "monitor_emit_many": 60}
# The Linux system call rows (the L4Linux paper's Tables II and III): one
# static program, bench/linux/lxbench.c, booted unchanged on Linux and on
# Petrel's Linux personality in the kernel and in user space, with the
# same root archive. Its "BENCH lx_... - value n" lines get the system of
# the boot.
LX_METRICS = [
    "lx_null_syscall", "lx_read_dev_zero", "lx_write_dev_null", "lx_stat", "lx_fstat", "lx_open_close",
    "lx_select_10", "lx_sig_install", "lx_sig_catch", "lx_prot_fault", "lx_pipe_rtt", "lx_unix_rtt",
    "lx_fork_exit", "lx_fork_1000", "lx_fork_execve", "lx_fork_sh", "lx_file_mmap_fault", "lx_mmap_1m", "lx_ctx_2p",
    "lx_pread_4k", "lx_pread_4k_shared", "lx_pwrite_4k_shared", "lx_open_close_10k_fds", "lx_mmap_1m_20k_maps",
    "lx_fork_exit_1k_procs", "lx_tcp_rr_loopback", "lx_udp_rr_loopback", "lx_tcp_connect_loopback",
    "lx_tcp_stream_loopback", "lx_cpu_loop", "lx_fs_create_0k", "lx_fs_create_10k", "lx_fs_delete_0k",
    "lx_fs_read_seq_1m", "lx_fs_write_seq_1m_fsync", "lx_fs_read_rand_4k", "lx_fs_stat",
    "lx_fs_write_256m_fsync", "lx_fs_read_256m", "binder_rtt_4b", "binder_rtt_4k",
]
# The file system rows (lxbench's fs group) run on /data: each boot of the
# lxbench archive gets a fresh ext2 image (FS_DISK bytes, 4 KiB blocks) as
# its disk, Linux's ext4 driver and Petrel's personality mounting it.
LX_FS = ["lx_fs_create_0k", "lx_fs_create_10k", "lx_fs_delete_0k", "lx_fs_read_seq_1m",
         "lx_fs_write_seq_1m_fsync", "lx_fs_read_rand_4k", "lx_fs_stat"]
FS_DISK = 256 << 20
# In wall mode lxbench also times a 256 MiB sequential write with fsync
# and its reading back (lxbench --fs-throughput), on a larger disk: the
# storage issue's throughput rows. Under icount they would time the
# host's disk more than either system.
LX_FS_WALL = ["lx_fs_write_256m_fsync", "lx_fs_read_256m"]
FS_DISK_WALL = 768 << 20
# Rows timed again with much else alive (lxbench's crowded group), each
# beside the same row on an empty system: the cost of a call must not grow
# with the descriptors, mappings and processes there are. lx_fork_1000
# (lxbench's processes group) forks 1,000 in a row and then reaps them: the
# Android issue's process scale, per process.
LX_CROWDED = {"lx_open_close_10k_fds": "lx_open_close", "lx_mmap_1m_20k_maps": "lx_mmap_1m",
              "lx_fork_exit_1k_procs": "lx_fork_exit", "lx_fork_1000": "lx_fork_exit"}
# The loopback network rows (lxbench's network group): netperf's TCP_RR and
# UDP_RR with 1-byte messages, TCP_CRR (connect, 1-byte request and
# response, close), and the time of one 64 KiB write of a stream.
LX_NET = ["lx_tcp_rr_loopback", "lx_udp_rr_loopback", "lx_tcp_connect_loopback", "lx_tcp_stream_loopback"]
LX_SYSTEMS = {"linux": None, "petrel-linux-kernel": "linux-kernel", "petrel-linux-user": "linux-user"}
# The boot itself: from reset to a shell running its first command (sh -c
# 'lxbench --since-boot boot_to_shell', the first command of the lxbench
# boot: the virtual counter, which starts at reset).
BOOT_METRICS = ["boot_to_shell"]
# Whole Debian programs (the real-programs suite's packages, tests/apps/),
# timed by `lxbench --time` on the same three systems: the time of one run.
APP_METRICS = ["lx_python_startup", "lx_sqlite_insert_1000"]
# The input path as Android has it on Linux (lxbench --input, the OKL4
# paper's Figs. 6-8): a reader process reads each key press from
# /dev/input/event0 and hands it to the application process over Binder;
# per press, the interrupt to the read, the read to the application, and
# end to end. The harness presses INPUT_PRESSES keys on the machine's
# virtio keyboard through QMP, each after lxbench asks for it.
INPUT_METRICS = ["input_obtain", "input_dispatch", "input_path_e2e"]
INPUT_PRESSES = 20
PRESS_DELAY = 0.05            # seconds between a program's "press I" line and the press
# Its systems: Linux's path on Linux; Petrel's own (systems/input-bench-*.toml);
# Linux's path on Petrel's personality.
INPUT_SYSTEMS = ["linux", "petrel", "petrel-user", "petrel-linux-kernel", "petrel-linux-user"]
INPUT_NATIVE = {"petrel": "input-bench-kernel", "petrel-user": "input-bench-user"}
SQLITE_1000 = ("'drop table if exists t; create table t(k integer primary key, v text); begin; "
               "with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000) "
               "insert into t select x, hex(x * 7919) from c; commit;'")
APP_RUN = (f"lxbench --time lx_python_startup 3 /usr/bin/python3.11 -c pass\n"
           f"lxbench --time lx_sqlite_insert_1000 3 /usr/bin/sqlite3 /tmp/bench.db {SQLITE_1000}\n"
           f"lxbench --end\n")
# L4Linux paper, Table II and III (us): native Linux, L4Linux.
LX_PAPER = {
    "lx_null_syscall": (0.7158, 22.3718), "lx_read_dev_zero": (3.6399, 34.3318),
    "lx_write_dev_null": (3.1738, 30.9641), "lx_stat": (16.2348, 106.0476), "lx_fstat": (4.2553, 44.4267),
    "lx_open_close": (39.0611, 208.7772), "lx_select_10": (4.3945, 50.335), "lx_sig_install": (2.619, 36.2203),
    "lx_sig_catch": (9.8543, 136.0835), "lx_prot_fault": (4.0656, 43.9095), "lx_pipe_rtt": (127.8178, 698.4668),
    "lx_unix_rtt": (205.9367, 876.9344), "lx_fork_exit": (5213.2701, 54736.8421),
    "lx_fork_execve": (15915.493, 110000), "lx_fork_sh": (45000, 232000), "lx_file_mmap_fault": (46.0907, 307.4131),
    "lx_ctx_2p": (40.02, 132.9),
}
# The application benchmarks (`--suite apps`, the L4Linux paper's Table IV):
# Debian's programs of debian.BENCH_APPS, each run once by `lxbench --time`
# from bench/apps/apps.sh on the three systems of LX_SYSTEMS, on inputs the
# script makes first. Row: (what it runs, the Table IV row it stands for).
SUITE_APPS = {
    "app_lame": ("lame: 4 s of 44.1 kHz stereo WAV to a 128 kbit/s MP3", "lame"),
    "app_madplay_short": ("madplay: a 1 s MP3 to WAV", "mad (small MP3 file)"),
    "app_madplay_long": ("madplay: a 4 s MP3 to WAV", "mad (large MP3 file)"),
    "app_cjpeg": ("cjpeg: a 960x720 PPM (bench/linux/picture.c) to JPEG, quality 90", "jpeg"),
    "app_djpeg": ("djpeg: that JPEG (quality 75) back to PPM", "jpeg"),
    "app_tiff2bw": ("tiff2bw: the 960x720 RGB TIFF to grey", "tiff2bw"),
    "app_tiffdither": ("tiffdither: the grey TIFF to 1 bit, Floyd-Steinberg", "tiffdither"),
    "app_tiffmedian": ("tiffmedian: the RGB TIFF to a 256-colour palette", "tiffmedian"),
    "app_ghostscript": ("gs: bench/apps/page.ps to a 100 dpi PNG", "ghostscript"),
    "app_ispell": ("ispell -l: its dictionary's 49,204 words, every fifth (of 4 letters or more) misspelt", "ispell"),
    "app_toast": ("toast: 30 s of 8 kHz u-law to GSM 06.10", "GSM"),
    "app_sox": ("sox: the 4 s WAV to IMA ADPCM", "adpcm"),
    "app_flac": ("flac -5: the 4 s WAV", None),
    "app_xz": ("xz -6: the 440 KB text", None),
}
APPS_SUITE_RUN = "sh /bench/apps.sh\nlxbench --end\n"
SUITES = ("default", "apps", "net", "tcp", "k2")
# K2 (docs/design/k2.md, --suite k2): rows the main kernel measures itself
# (boot argument k2.bench) with the shadow kernel on the machine's last
# core: the mailbox's round trip, one DSM page fault taken by each kernel
# (a page the other holds), an allocation in each kernel (the paper's
# Table 4 sizes) and one 16 MiB balloon block each way. The main kernel's
# allocation rows are measured again with K2 off (the one-kernel system,
# "petrel"): k2_probe_cost is what K2 adds to a 4 KiB allocation. Targets:
# a fault costs at most K2_FAULT_BOUND round trips (the paper's Table 5:
# 52 and 48 us against a round trip of about 5 us); main's allocations
# within K2_PROBE_BOUND instructions of the one-kernel system's.
K2_ALLOC_SIZES = ["4k", "256k", "1m"]
K2_METRICS = (["k2_mbox_rtt", "k2_dsm_fault_main", "k2_dsm_fault_shadow"]
              + [f"k2_alloc_{size}_{who}" for who in ("main", "shadow") for size in K2_ALLOC_SIZES]
              + ["k2_probe_cost"]
              + [f"k2_balloon_{op}_{who}" for op in ("deflate", "inflate") for who in ("main", "shadow")])
K2_FAULT_BOUND = 11
K2_PROBE_BOUND = 20
# The L4Linux paper, Table IV (seconds): native Linux, L4Linux.
TABLE_IV = {
    "lame": (78.69, 81.1), "mad (small MP3 file)": (0.232, 0.598), "mad (large MP3 file)": (1.828, 2.506),
    "mad (larger MP3 file)": (7.842, 9.012), "mplayer": (5.512, 5.712), "jpeg": (0.84, 1.44),
    "tiff2bw": (0.64, 1.814), "tiffdither": (1.44, 1.892), "tiffmedian": (1.742, 3.52), "typeset": (7.86, 9.118),
    "ghostscript": (6.188, 7.7354), "ispell": (6.658, 8.71), "stringsearch": (0.07, 0.332),
    "rsynth": (24.75, 25.642), "CRC32": (0.7, 1.088), "FFT": (10.794, 11.63), "GSM": (9.8, 10.61),
    "adpcm": (0.37, 1.088),
}
# The apps rows' target: within 2% of Linux's time in both placements.
APPS_TARGET = 1.02
# The speed-up rows (wall mode, --smp N with N >= 2): a static program
# times a job twice in each boot of the three systems of LX_SYSTEMS,
# printing "BENCH <time>_<kind>_... - ns count", and a row
# <row>_<kind>_<N> is the first time / the second of one boot, median over
# the boots. Under -icount the guest clock counts every core's
# instructions, and one core has nothing to share: no rows then
# (not_applicable says why). Two families:
#
# - lx_parallel_speedup: lxpar (bench/linux/lxpar.c) does a fixed amount
#   of CPU-bound work with one worker and then with N, as threads and as
#   processes ("lx_parallel_time_<kind>_<workers>"); the target is
#   Petrel's speed-up at least `share` of Linux's, in each placement.
# - lx_syscall_scaling: lxscale (bench/linux/lxscale.c) runs N processes
#   making getppid calls, 4 KiB reads of /dev/zero or pipe round trips
#   with a partner of their own, first all on one core and then each on a
#   core of its own ("lx_syscall_time_<kind>_<N>_on_<cores>"); the target
#   is a speed-up of at least `least` at N = 2, in each placement.
@dataclass(frozen=True)
class Speedup:
    row: str                            # the rows' prefix
    title: str                          # its section of the report
    program: str                        # the program in the root archive
    kinds: tuple
    time: str                           # the prefix of its BENCH lines
    one_core: bool                      # the first job: all on one core (True) or one worker (False)
    share: float = 0.0                  # target: Petrel's speed-up at least this share of Linux's
    least: float = 0.0                  # target: a speed-up at least this at N = 2

    @property
    def row_re(self):
        return re.compile(rf"{self.row}_({'|'.join(self.kinds)})_([1-9][0-9]*)")

    @property
    def time_re(self):
        return re.compile(rf"{self.time}_({'|'.join(self.kinds)})_([1-9][0-9]*)" +
                          ("_on_([1-9][0-9]*)" if self.one_core else ""))

    # The two jobs of row (kind, n), each (command, time row, what it is).
    def jobs(self, kind: str, n: int) -> list:
        if self.one_core:
            return [(f"{self.program} --cores 1 {kind} {n}", f"{self.time}_{kind}_{n}_on_1",
                     f"{kind}, {n} workers on 1 core"),
                    (f"{self.program} {kind} {n}", f"{self.time}_{kind}_{n}_on_{n}",
                     f"{kind}, {n} workers on {n} cores")]
        return [(f"{self.program} {kind} 1", f"{self.time}_{kind}_1", f"{kind}, 1 worker"),
                (f"{self.program} {kind} {n}", f"{self.time}_{kind}_{n}", f"{kind}, {n} workers")]

    # The program's line of where its workers ran: (its time row, the
    # cores in a canonical order) or None.
    def cores_seen(self, line: str):
        m = re.match(rf"{self.program}: ({'|'.join(self.kinds)}) (\d+) workers?(?: on (\d+) cores?)?, .*; "
                     rf"cpus ([-0-9>/ ]+)$", line.strip())
        if not m:
            return None
        kind, workers, cores, seen = m.groups()
        job = f"{self.time}_{kind}_{workers}" + (f"_on_{cores}" if self.one_core else "")
        return job, " ".join(sorted(seen.split(), key=lambda c: [int(x) for x in re.split(r"[>/]", c)]))


# Other work on the host (host cores, on average) above which the report
# says that the speed-up rows are not to be trusted.
OTHER_LOAD = 0.2
PAR = Speedup("lx_parallel_speedup", "Parallel speed-up", "lxpar", ("threads", "procs"), "lx_parallel_time",
              one_core=False, share=0.9)
SCALE = Speedup("lx_syscall_scaling", "System call scaling", "lxscale", ("getppid", "zero", "pipe"),
                "lx_syscall_time", one_core=True, least=1.7)
SPEEDUPS = (PAR, SCALE)
LATENCY_SYSTEMS = ["petrel", "petrel-user", "petrel-loop", "petrel-idle"]
LINUX_SYSTEMS = ["linux", "linux-binder", "linux-pipe", "linux-unix", "linux-futex", "linux-tmpfs"]
BANDWIDTH = {"mem_read_bw", "mem_copy_bw", "file_read_kernel", "file_read_user", "file_write_kernel",
             "file_write_user"}

# The source papers' figures for the same rows (and the BRIEF's anchors).
PAPER = {
    "null_syscall": "L4Linux paper Table II: simple syscall 0.72 us native, 22.37 us L4Linux (31x); "
                    "seL4 91 insns, Linux 6.1 getppid 497 insns",
    "ipc_rtt_4b": "OKL4 paper Fig. 4: OKL4 1,592 cycles, Binder 93,053 cycles (58x); seL4 fastpath 514 insns; "
                  "Linux 6.1 pipe ~15,100 insns",
    "ipc_rtt_124b": "OKL4 paper Fig. 4: OKL4 2,146 cycles, Binder 106,663 cycles (49x)",
    "ctx_switch_2p": "L4Linux paper Table III: 2p/0k 40.02 us native, 132.9 us L4Linux; Linux 6.1 ~4,500 insns",
    "page_fault": "L4Linux paper Table II: pagefaults 46.09 us native, 307.41 us L4Linux; Linux 6.1 ~1,270 insns",
    "process_spawn_exit": "L4Linux paper Table II: fork+exit 5,213 us native, 54,737 us L4Linux",
    "noop_function_call": "hybrid kernel paper Table 1: NoOp function call 22 cycles (PowerPC405)",
    "noop_kernel_service": "hybrid kernel paper Table 1: NoOp system call 302 cycles (two context switches)",
    "noop_user_service": "hybrid kernel paper 3.4: a user-placed service adds about 280 cycles (two more switches)",
    "object_rpc_rtt_4b": "OKL4 paper Fig. 4: Android's Binder on OKL4 IPC (its libraries rewritten); "
                         "Petrel: Binder's guarantees on Petrel's handles, target within 1.5x of ipc_rtt_4b",
}


class BenchError(RuntimeError):
    """A benchmark boot failed."""


def bench_dir(repo: Path = paths.REPO) -> Path:
    return paths.build_dir(repo) / "bench"


# Packs the Petrel bench image and the Linux initramfs; returns their paths.
def prepare(repo: Path = paths.REPO) -> tuple:
    out = bench_dir(repo)
    out.mkdir(parents=True, exist_ok=True)
    image = out / "petrel-bench.pbi"
    files = [(name, paths.user_elf(name, repo).read_bytes(), bootimage.FLAG_EXEC)
             for name in ("bench", "benchpeer", "benchnull", "svc-noop", "svc-fs")]
    files.append(("pattern", (paths.build_dir(repo) / "data" / "pattern-1m.bin").read_bytes(), 0))
    bootimage.write_image(image, files)
    linux_dir = paths.build_dir(repo) / "bench" / "linux"
    initrd = out / "linux-initramfs.cpio"
    files = {"init": (linux_dir / "init").read_bytes(), "null": (linux_dir / "null").read_bytes(),
             "binder_linux.ko": linuxbase.binder_module(repo).read_bytes()}
    initrd.write_bytes(cpio.archive(files, dirs=["dev", "proc"], executables=["init", "null"]))
    return image, initrd


# Parses "BENCH metric system value iters [MB/s]" lines into {(metric, system): value};
# a system "-" (lxbench's) is `system`.
def parse(console: str, system: str = "") -> dict:
    found = {}
    for line in console.splitlines():
        parts = line.strip().split()
        if len(parts) >= 5 and parts[2] == "-" and system:
            parts[2] = system
        if len(parts) >= 5 and parts[0] == "BENCH" and (parts[1] in METRICS + LX_METRICS + APP_METRICS +
                                                        INPUT_METRICS + BOOT_METRICS + list(SUITE_APPS) + MONITOR_RAW +
                                                        K2_METRICS
                                                        or any(f.time_re.fullmatch(parts[1]) for f in SPEEDUPS)):
            try:
                found[(parts[1], parts[2])] = float(parts[3])
            except ValueError:
                continue
    return found


# Boots one system and streams its console; returns the BENCH figures
# (a "-" system is `system`).
def boot(argv: list, label: str, timeout: float, log: Path, system: str = "", keys: list = ()) -> dict:
    start = time.monotonic()
    lines = []
    qmp_dir = tempfile.mkdtemp(prefix="petrel-bench-") if keys else None
    if qmp_dir:
        argv = argv + qemu.qmp_argv(os.path.join(qmp_dir, "qmp"))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    keyboard, pressed = None, 0
    try:
        for line in proc.stdout:
            lines.append(line)
            if pressed < len(keys) and re.search(keys[pressed][0], line):
                # (the key of a step, pressed once lxbench asked for it: the keyboard's QMP;
                # a moment later, so that the program waits for it and is not still
                # printing its line when it comes: else the time it takes to reach its
                # wait counts as the path's)
                keyboard = keyboard or qemu.qmp_connect(os.path.join(qmp_dir, "qmp"))
                time.sleep(PRESS_DELAY)
                qemu.send_keys(keyboard, keys[pressed][1])
                pressed += 1
            if line.startswith("BENCH ") and not line.startswith("BENCH-"):
                print(f"  {label}: {line.strip()[6:]}", flush=True)
            if time.monotonic() - start > timeout:
                proc.kill()
                raise BenchError(f"{label}: no end after {timeout:.0f}s")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        if keyboard:
            keyboard.close()
        if qmp_dir:
            shutil.rmtree(qmp_dir, ignore_errors=True)
        log.write_text("".join(lines))
    console = "".join(lines)
    if f"BENCH-END" not in console:
        raise BenchError(f"{label}: the benchmarks did not finish (console in {paths.rel(log)})")
    return parse(console, system)


def petrel_argv(image: Path, machine: qemu.Machine, only: str) -> list:
    append = f"only={only}" if only else ""
    return qemu.build_argv(paths.kernel_bin(), image, machine, append)


def linux_argv(initrd: Path, machine: qemu.Machine, repo: Path, only: str = "") -> list:
    append = "console=ttyAMA0 quiet loglevel=1 rdinit=/init" + (f" only={only}" if only else "")
    return qemu.build_argv(linuxbase.image(repo), initrd, machine, append)


# Runs both systems `runs` times; returns rows for results.json. On one
# core, the cross-core round trip gets its own pair of two-core boots.
# What the speed-up rows' boots said goes into `par`, {family's row:
# notes} (collect_speedup; with "na", why they were not measured).
def measure(machine: qemu.Machine, runs: int, only: str, repo: Path = paths.REPO, par: dict = None) -> list:
    only = only or ""                   # the command line's "not given" is None
    image, initrd = prepare(repo)
    samples = {}
    mode = "icount" if machine.icount else "wall"
    plan = [(machine, only)] if not only.startswith("lx") and only not in BOOT_METRICS + INPUT_METRICS else []
    if machine.smp == 1 and only in ("", "ipc_rtt_cross_core"):
        two = qemu.Machine(machine.cpu, machine.gic, 2, machine.mem, machine.icount)
        plan = ([(machine, only)] if not only else []) + [(two, "ipc_rtt_cross_core")]
    for m, what in plan:
        collect(m, what, runs, image, initrd, samples, repo)
    if not only or only == "lx" or only in LX_METRICS + BOOT_METRICS:
        collect_lx(machine, only, runs, samples, repo)
    if not only or only == "lx" or only in APP_METRICS:
        collect_apps(machine, only, runs, samples, repo)
    if not only or only == "lx" or only in INPUT_METRICS:
        collect_input(machine, only, runs, samples, repo)
    for family in SPEEDUPS:
        if wanted(family, only):
            why = not_applicable(machine)
            notes = {"na": why} if why else collect_speedup(family, machine, only, runs, samples, repo)
            if par is not None:
                par[family.row] = notes
    return summary(samples, mode)


# The application benchmarks alone (--suite apps): rows for results.json,
# and what the boots said beside them (collect_suite_apps).
def measure_apps(machine: qemu.Machine, runs: int, only: str, repo: Path = paths.REPO) -> tuple:
    samples = {}
    notes = collect_suite_apps(machine, only or "", runs, samples, repo)
    return summary(samples, "icount" if machine.icount else "wall"), notes


# Rows for results.json from {(metric, system): [values]}: median, min, max.
def summary(samples: dict, mode: str) -> list:
    rows = []
    for (metric, system), values in sorted(samples.items()):
        unit = "MB/s" if metric in BANDWIDTH else "x" if speedup_of(metric) else \
            "insns" if mode == "icount" else "ns"
        rows.append({"metric": metric, "system": system, "mode": mode, "unit": unit,
                     "median": statistics.median(values), "min": min(values), "max": max(values),
                     "runs": len(values)})
    return rows


# Boots Petrel and Linux on machine m `runs` times each, adding to samples.
def collect(machine: qemu.Machine, only: str, runs: int, image: Path, initrd: Path, samples: dict,
            repo: Path) -> None:
    mode = "icount" if machine.icount else "wall"
    boots = [("petrel", petrel_argv(image, machine, only), 600)] if only != OBJECT_RPC else []
    if only not in PETREL_ONLY and only != OBJECT_RPC:
        boots.append(("linux", linux_argv(initrd, machine, repo, only), 1500))
    monitor = only in ("", "monitor_event", "monitor_off", "monitor_emit", "monitor_emit_many")
    if monitor:
        base = notrace_kernel(repo)
        boots.append(("petrel-notrace", qemu.build_argv(base, image, machine, "only=monitor_off"), 600))
    if only in ("", OBJECT_RPC):
        image_rpc = paths.system_image(OBJECT_RPC_SYSTEM, repo)
        boots.append(("petrel", qemu.build_argv(paths.kernel_bin(repo=repo), image_rpc, machine, ""), 600,
                      OBJECT_RPC_SYSTEM))
    for system, argv, timeout, *name in boots:
        for run in range(runs):
            label = f"{system} {run + 1}/{runs}"
            print(f"bench: booting {system} ({mode}, {machine.cpu}, {machine.smp} core"
                  f"{'s' if machine.smp > 1 else ''}), run {run + 1} of {runs}", flush=True)
            log = bench_dir(repo) / f"{name[0] if name else system}-{mode}-smp{machine.smp}-{run + 1}.log"
            for key, value in boot(argv, label, timeout, log, system).items():
                if not only or key[0] == only or (monitor and key[0] in MONITOR_RAW):
                    samples.setdefault(key, []).append(value)
    if monitor:
        monitor_rows(samples)


# A kernel built with CONFIG_TRACE=n, for the monitor's base: build/notrace.
def notrace_kernel(repo: Path) -> Path:
    out = paths.build_dir(repo) / "notrace"
    out.mkdir(parents=True, exist_ok=True)
    config = (repo / "configs" / "defconfig").read_text().replace("CONFIG_TRACE=y", "CONFIG_TRACE=n")
    if not (out / ".config").exists() or (out / ".config").read_text() != config:
        (out / ".config").write_text(config)
    print("bench: building the kernel without tracepoints (build/notrace)", flush=True)
    done = subprocess.run(["make", "-s", f"-j{os.cpu_count() or 2}", f"O={out}", f"PYTHON={sys.executable}",
                           "kernel"], cwd=repo, capture_output=True, text=True)
    if done.returncode:
        raise BenchError(f"building build/notrace failed: {done.stderr.strip()[-500:]}")
    return out / "kernel" / "kernel.bin"


# monitor_event and monitor_off from the raw rows, run by run.
def monitor_rows(samples: dict) -> None:
    off = samples.pop(("monitor_path_off", "petrel"), [])
    on = samples.pop(("monitor_path_on", "petrel"), [])
    base = samples.pop(("monitor_path_base", "petrel"), [])       # (the other kernel's boot prints "petrel" too)
    if off and on:
        samples[("monitor_event", "petrel")] = [b - a for a, b in zip(off, on)]
    if off and base:
        samples[("monitor_off", "petrel")] = [(a - b) / MONITOR_SITES for a, b in zip(off, base)]


# Boots lxbench on Linux and on Petrel in both placements of the
# personality, `runs` times each, adding to samples.
def collect_lx(machine: qemu.Machine, only: str, runs: int, samples: dict, repo: Path) -> None:
    from petrel import linuxrun, rootfs
    modules = [(Path(spec.rsplit(":", 1)[0]), spec.rsplit(":", 1)[1])
               for spec in linuxrun.disk_modules(repo, [("binder_linux", linuxbase.binder_module(repo))])]
    script = "sh -c 'lxbench --since-boot boot_to_shell'\nlxbench\n" + ("" if machine.icount else "lxbench --fs-throughput\n")
    boot_three(machine, only, runs, samples, repo, "lxbench", rootfs.build(script, modules, repo),
               disk=FS_DISK if machine.icount else FS_DISK_WALL)


# Boots lxbench --input on Linux (with its virtio_input, evdev and
# binder_linux modules) and on Petrel in both placements, on a machine with
# a virtio keyboard, pressing a key each time lxbench asks for one.
def collect_input(machine: qemu.Machine, only: str, runs: int, samples: dict, repo: Path) -> None:
    from dataclasses import replace
    from petrel import linuxrun, rootfs
    extra = [("binder_linux", linuxbase.binder_module(repo))] + \
        [(m, linuxbase.net_module(m, repo)) for m in linuxbase.INPUT_MODULES]
    modules = [(Path(spec.rsplit(":", 1)[0]), spec.rsplit(":", 1)[1])
               for spec in linuxrun.disk_modules(repo, extra)]
    script = f"lxbench --input {INPUT_PRESSES}\nlxbench --end\n"
    keys = [(f"lxbench: press {i}\\b", qemu.Keys("a")) for i in range(1, INPUT_PRESSES + 1)]
    keyboard = replace(machine, keyboard=True)
    boot_three(keyboard, only, runs, samples, repo, "lxinput", rootfs.build(script, modules, repo), keys=keys)
    native = [(f"inapp: press {i}\\b", qemu.Keys("a")) for i in range(1, INPUT_PRESSES + 1)]
    mode = "icount" if machine.icount else "wall"
    for system, desc in INPUT_NATIVE.items():
        argv = qemu.build_argv(paths.kernel_bin(repo=repo), paths.system_image(desc, repo), keyboard, "")
        for run in range(runs):
            print(f"bench: booting {system} with {desc} ({mode}, {machine.cpu}), run {run + 1} of {runs}",
                  flush=True)
            log = bench_dir(repo) / f"{system}-inputbench-{mode}-smp{machine.smp}-{run + 1}.log"
            for key, v in boot(argv, f"{system} {run + 1}/{runs}", 300, log, system, native).items():
                samples.setdefault(key, []).append(v)


# A fresh, empty ext2 image of `size` bytes at path (sparse; 4 KiB blocks).
def fresh_disk(path: Path, size: int) -> None:
    mke2fs = next((p for p in ("/sbin/mke2fs", "/usr/sbin/mke2fs") if os.path.exists(p)), "mke2fs")
    path.unlink(missing_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)
    done = subprocess.run([mke2fs, "-q", "-F", "-t", "ext2", "-b", "4096", str(path)], capture_output=True, text=True)
    if done.returncode:
        raise BenchError(f"mke2fs {path}: {done.stderr.strip()}")


# Boots the apps rows (Debian's programs, timed by lxbench --time) on the
# three systems; skipped, with a message, before setup has fetched them.
def collect_apps(machine: qemu.Machine, only: str, runs: int, samples: dict, repo: Path) -> None:
    from petrel import debian, rootfs
    try:
        packages = debian.apps_ready(repo)
    except debian.DebianError as err:
        print(f"bench: skipping the apps rows: {err}")
        return
    boot_three(machine, only, runs, samples, repo, "apps", rootfs.build(APP_RUN, (), repo, packages))


# Does `only` ask for the family's rows? Everything (""), every lx row,
# the family's prefix (all of its rows at this --smp) or one of them.
def wanted(family: Speedup, only: str) -> bool:
    return only in ("", "lx", family.row) or bool(family.row_re.fullmatch(only))


# The family whose row (or prefix) `metric` is, or None.
def speedup_of(metric: str):
    return next((f for f in SPEEDUPS if metric == f.row or f.row_re.fullmatch(metric)), None)


# Why the speed-up rows cannot be measured on `machine`, or None.
def not_applicable(machine: qemu.Machine):
    if machine.icount:
        return ("under -icount the guest clock advances with the instructions of every core, run one after "
                "the other, so N workers take as long by it as one: use --mode wall")
    if machine.smp < 2:
        return "one core: nothing to run workers side by side on (use --smp 2 or more)"
    return None


# The family's rows at `smp` cores (of `kinds`).
def speedup_rows(family: Speedup, smp, kinds=None) -> list:
    return [f"{family.row}_{kind}_{smp}" for kind in kinds or family.kinds]


# Boots the family's program on the three systems `runs` times each: in
# each boot, both jobs of each kind at machine.smp (only one kind if
# `only` names its row). Adds the time rows and each boot's speed-up (the
# first job's time / the second's) to samples. Returns the notes the
# report shows: "rows" measured, "failed" boots {system: why}, "said"
# [the program's BENCH-FAIL lines, with the system], "cpus" {(system,
# time row): {the cores the workers ran on: boots}}.
def collect_speedup(family: Speedup, machine: qemu.Machine, only: str, runs: int, samples: dict,
                    repo: Path) -> dict:
    from petrel import rootfs
    n = machine.smp
    kinds = [k for k in family.kinds if not family.row_re.fullmatch(only) or only == f"{family.row}_{k}_{n}"]
    run = "".join(command + "\n" for kind in kinds for command, _, _ in family.jobs(kind, n)) + "lxbench --end\n"
    failed, times = {}, {}
    before = host_times()
    logs = boot_three(machine, "", runs, times, repo, family.program, rootfs.build(run, (), repo),
                      keep_going=True, failed=failed)
    for key, values in times.items():
        samples.setdefault(key, []).extend(values)
    notes = {"rows": speedup_rows(family, n, kinds), "failed": failed, "said": [], "cpus": {}, "smp": n,
             "host_cores": len(os.sched_getaffinity(0)), "host_other": host_other(before, host_times())}
    for system, log in logs:
        speedup_boot(family, log.read_text(errors="replace") if log.exists() else "", system, n, samples, notes)
    return notes


# The host's clocks for host_other: (wall seconds, seconds its cores were
# busy in all, the CPU seconds of this process and its waited children);
# None for the busy time where there is no /proc/stat.
def host_times() -> tuple:
    busy = None
    try:
        ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        busy = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")     # all but idle and iowait
    except (OSError, ValueError, IndexError):
        pass
    own = sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
              for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return time.monotonic(), busy, own


# How many host cores other work kept busy on average between two
# host_times (the host's busy time less ours, over the wall time), or None.
# A speed-up on N guest cores needs N host cores free: the report warns
# when other work took some.
def host_other(before: tuple, after: tuple):
    wall = after[0] - before[0]
    if before[1] is None or after[1] is None or wall <= 0:
        return None
    return max(0.0, (after[1] - before[1]) - (after[2] - before[2])) / wall


# One boot's console: each kind's speed-up, the first job's time / the
# second's in this boot, into samples; its BENCH-FAIL lines and where the
# workers ran into notes (collect_speedup's).
def speedup_boot(family: Speedup, console: str, system: str, n: int, samples: dict, notes: dict) -> None:
    figures = parse(console, system)
    for kind in family.kinds:
        (_, first, _), (_, second, _) = family.jobs(kind, n)
        one, many = figures.get((first, system)), figures.get((second, system))
        if one and many:
            samples.setdefault((f"{family.row}_{kind}_{n}", system), []).append(one / many)
    for line in console.replace("\r", "").splitlines():
        if line.startswith(f"BENCH-FAIL {family.time}_"):
            notes["said"].append(f"{system}: {line.strip()}")
        seen = family.cores_seen(line)
        if seen:
            job, cores = seen
            counts = notes["cpus"].setdefault((system, job), {})
            counts[cores] = counts.get(cores, 0) + 1


# Boots `archive` (a root archive whose /etc/lxrun prints BENCH lines) on
# Linux and on Petrel in both placements, `runs` times each; returns the
# (system, console log) of each boot. With `keep_going`, a boot that does
# not finish is noted in `failed` ({system: why}) with the figures it
# printed kept, and the other systems still boot.
def boot_three(machine: qemu.Machine, only: str, runs: int, samples: dict, repo: Path, name: str,
               archive_bytes: bytes, keep_going: bool = False, failed: dict = None, disk: int = 0,
               keys: list = ()) -> list:
    from dataclasses import replace
    from petrel import oracle, systems
    mode = "icount" if machine.icount else "wall"
    out = bench_dir(repo)
    archive = out / f"{name}-rootfs.cpio"
    archive.write_bytes(archive_bytes)
    boots, logs = [], []
    for system, desc in LX_SYSTEMS.items():
        m = replace(machine, disk=str(out / f"{name}-{system}-disk.img")) if disk else machine
        if desc is None:
            argv = qemu.build_argv(linuxbase.image(repo), archive, m, oracle.LINUX_APPEND)
        else:
            entries = systems.read_entries(systems.load_system(repo / "systems" / f"{desc}.toml", repo), repo)
            image = oracle.write_image(out / f"{name}-{desc}.pbi", entries, archive)
            argv = qemu.build_argv(paths.kernel_bin(repo=repo), image, m, "")
        boots.append((system, argv, m.disk))
    for system, argv, disk_path in boots:
        for run in range(runs):
            if disk_path:
                fresh_disk(Path(disk_path), disk)       # (each boot on an empty disk)
            print(f"bench: booting {system} with {name} ({mode}, {machine.cpu}, {machine.smp} core"
                  f"{'s' if machine.smp > 1 else ''}), run {run + 1} of {runs}", flush=True)
            log = out / f"{system}-{name}-{mode}-smp{machine.smp}-{run + 1}.log"
            logs.append((system, log))
            try:
                found = boot(argv, f"{system} {run + 1}/{runs}", 900, log, system, keys)
            except BenchError as err:
                if not keep_going:
                    raise
                print(f"bench: {err}", file=sys.stderr)
                failed[system] = str(err)
                found = parse(log.read_text(errors="replace"), system) if log.exists() else {}
            for key, v in found.items():
                if only in ("", "lx") or key[0] == only:
                    samples.setdefault(key, []).append(v)
    return logs


# Boots the application benchmarks (bench/apps/apps.sh over Debian's
# programs of debian.BENCH_APPS, their files at /bench) on the three
# systems; returns what the boots said beside their figures (app_notes of
# each system's last boot, and "failed": the boots that did not finish).
def collect_suite_apps(machine: qemu.Machine, only: str, runs: int, samples: dict, repo: Path) -> dict:
    from petrel import rootfs
    packages = debian.bench_ready(repo)
    archive = rootfs.build(APPS_SUITE_RUN, [(repo / "bench" / "apps", "/bench")], repo, packages,
                           debian.BENCH_PRUNED)
    failed = {}
    logs = boot_three(machine, only if only in SUITE_APPS else "", runs, samples, repo, "appbench", archive,
                      keep_going=True, failed=failed)
    notes = {system: app_notes(log.read_text(errors="replace")) for system, log in logs if log.exists()}
    notes["failed"] = failed
    return notes


# What an apps boot said beside its figures: "skip" {row: why} (lxbench's
# BENCH-SKIP: the program failed), "out" {output file: sha256}, "said"
# [apps.sh's complaints: inputs it could not make, programs that do not
# load, and the dynamic linker's reasons], "unknown" [the personality's
# unknown system calls, "NAME: N"].
def app_notes(console: str) -> dict:
    notes = {"skip": {}, "out": {}, "said": [], "unknown": []}
    for line in console.replace("\r", "").splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "BENCH-SKIP" and parts[1] in SUITE_APPS:
            notes["skip"][parts[1]] = " ".join(parts[2:])
        elif len(parts) == 3 and parts[0] == "BENCH-OUT":
            notes["out"][parts[1]] = parts[2]
        elif line.startswith("apps: ") or "error while loading shared libraries" in line:
            notes["said"].append(line.removeprefix("apps: ").strip())
        elif "unknown system call" in line:
            m = re.search(r"\(([^)]*)\): unknown system call (\d+)", line)
            call = f"{m.group(1)}: {m.group(2)}" if m else line.strip()
            if call not in notes["unknown"]:
                notes["unknown"].append(call)
    return notes


# The output files of a Petrel system's boot that differ from Linux's (or
# that one of the two did not make).
def output_differences(notes: dict, system: str) -> list:
    linux, other = notes.get("linux", {}).get("out", {}), notes.get(system, {}).get("out", {})
    return sorted(f for f in set(linux) | set(other) if linux.get(f) != other.get(f))


def value(rows: list, metric: str, system: str):
    for r in rows:
        if r["metric"] == metric and r["system"] == system:
            return r["median"]
    return None


# Ratio Linux/Petrel for latencies (how many times cheaper Petrel is),
# Petrel/Linux for bandwidth and speed-ups (how fast Petrel is relative to
# Linux).
def ratio(metric: str, petrel, other):
    if petrel is None or other is None or petrel == 0 or other == 0:
        return None
    return petrel / other if metric in BANDWIDTH or speedup_of(metric) else other / petrel


def fmt(v) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


# The report: one row per metric, Petrel, every Linux variant, the best
# (smallest) ratio against Linux, and the papers' figures; the Linux
# programs' table, and with `notes` (--suite apps) the applications' one.
def report(rows: list, machine: qemu.Machine, command: str, notes: dict = None, par: dict = None) -> str:
    mode = "icount" if machine.icount else "wall"
    unit = "guest instructions" if mode == "icount" else "nanoseconds"
    lines = [f"# Petrel vs Linux, side by side\n\n",
             f"`{command}` on QEMU virt, {machine.cpu}, {machine.smp} core(s), {machine.mem}, mode {mode}; "
             f"Linux {linuxbase.version()} (Debian)."]
    if any(r["metric"] in METRICS for r in rows):
        lines += [f" Latencies in {unit} per operation (lower is better), "
                  f"bandwidth in MB/s of guest time. Ratio: Linux / Petrel for latencies (how many times "
                  f"cheaper Petrel is), Petrel / Linux for bandwidth."
                  + (" ipc_rtt_cross_core is measured on a second pair of two-core boots." if machine.smp == 1 else "")
                  + "\n\n",
                  "| metric | Petrel | " + " | ".join(LINUX_SYSTEMS) + " | ratio vs each | source papers |\n",
                  "|---|---:|" + "---:|" * len(LINUX_SYSTEMS) + "---|---|\n"]
    else:
        lines.append("\n")
    for metric in METRICS:
        p = value(rows, metric, "petrel")
        others = [value(rows, metric, s) for s in LINUX_SYSTEMS]
        if metric in PETREL_ONLY or (p is None and not any(o is not None for o in others)):
            continue
        ratios = [f"{s.removeprefix('linux-') if s != 'linux' else 'linux'} {ratio(metric, p, o):.1f}x"
                  for s, o in zip(LINUX_SYSTEMS, others) if ratio(metric, p, o) is not None]
        lines.append(f"| {metric} | {fmt(p)} | " + " | ".join(fmt(o) for o in others) +
                     f" | {', '.join(ratios) or '–'} | {PAPER.get(metric, '')} |\n")
    lines += lx_report(rows, unit)
    lines += input_report(rows, unit)
    for family in SPEEDUPS:
        if par and family.row in par:
            lines += speedup_report(family, rows, par[family.row])
    if notes is not None:
        lines += apps_report(rows, notes, unit)
    mon = [(m, value(rows, m, "petrel")) for m in ("monitor_event", "monitor_off", "monitor_emit", "monitor_emit_many")]
    if any(v is not None for _, v in mon):
        lines += ["\n## The monitor\n\n",
                  "What a tracepoint costs (idl/tracepoints.toml), in " + unit + ": an event recorded into "
                  "its core's ring, and a site switched off, measured on a system call with two sites "
                  "against the same call on a kernel built without tracepoints (CONFIG_TRACE=n); "
                  "monitor_emit: an event of a user-placed service alone (the trace_emit system call); "
                  "monitor_emit_many: one as a user-placed service records it, stamped into its batch and "
                  "handed over with 15 others (trace_emit_many).\n\n",
                  "| metric | Petrel | target |\n|---|---:|---:|\n"]
        lines += [f"| {m} | {fmt(v)} | {'<= ' + str(MONITOR_TARGETS[m]) if MONITOR_TARGETS[m] else '-'} |\n"
                  for m, v in mon if v is not None]
    lat = [value(rows, "irq_latency_under_kservice", s) for s in LATENCY_SYSTEMS]
    if any(v is not None for v in lat):
        idle = lat[3]
        cell = lambda v: fmt(v) + (f" ({v / idle:.2f}x idle)" if v is not None and idle else "")
        where = "on core 0 beside it" if machine.smp == 1 else "on core 1"
        lines += ["\n## Interrupt latency beside a long kernel-service request\n\n",
                  "The worst lateness of 1,000 timer wake-ups (50 us sleeps) of a priority-250 thread "
                  f"{where} while a priority-100 thread on core 0 reads 1 MiB at a time through the file service, "
                  f"in {unit}.\n\n",
                  "| metric | service in the kernel | service in user space | a user-space loop | nothing |\n"
                  "|---|---:|---:|---:|---:|\n",
                  f"| irq_latency_under_kservice | {cell(lat[0])} | {cell(lat[1])} | {cell(lat[2])} | {fmt(idle)} |\n"]
    return "".join(lines)


# The Linux system call table: Linux, Petrel with the personality in the
# kernel and in user space, each ratio Linux / Petrel (above 1: Petrel
# cheaper), and the L4Linux paper's slowdown on the same row.
def input_report(rows: list, unit: str) -> list:
    if not any(value(rows, m, s) is not None for m in INPUT_METRICS for s in INPUT_SYSTEMS):
        return []
    lines = ["\n## The input path (the OKL4 paper's Figs. 6-8)\n\n",
             f"A key press from the keyboard's interrupt to the application, {unit} per press "
             f"({INPUT_PRESSES} presses through QEMU's QMP). Linux: Android's path, a reader process reading "
             f"/dev/input/event0 and handing the press to the application over Binder (lxbench --input); the "
             f"same binary on Petrel's Linux personality (petrel-linux-kernel, petrel-linux-user). Petrel: its "
             f"own path, the input service's ring to the dispatcher, the dispatcher to the focused application "
             f"over IPC (tests/programs/inapp presses=N; the services in the kernel, petrel, or in user space, "
             f"petrel-user). Ratio: Linux / the column before it (above 1: cheaper than Linux).\n\n",
             "| stage | linux | petrel | ratio | petrel-user | ratio | petrel-linux-kernel | ratio | "
             "petrel-linux-user | ratio |\n", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"]
    for metric in INPUT_METRICS:
        lx = value(rows, metric, "linux")
        cells = []
        for s in INPUT_SYSTEMS[1:]:
            v = value(rows, metric, s)
            r = ratio(metric, v, lx)
            cells += [fmt(v), f"{r:.2f}x" if r else "–"]
        lines.append(f"| {metric} | {fmt(lx)} | " + " | ".join(cells) + " |\n")
    return lines


def lx_report(rows: list, unit: str) -> list:
    if not any(value(rows, m, "linux") is not None
               for m in LX_METRICS + APP_METRICS + INPUT_METRICS + BOOT_METRICS):
        return []
    lines = ["\n## Linux programs on Petrel (the L4Linux paper's Tables II and III)\n\n",
             f"One static program (bench/linux/lxbench.c), unchanged, on Linux and on Petrel's Linux personality "
             f"placed in the kernel and in user space; {unit} per operation (lx_python_startup and "
             f"lx_sqlite_insert_1000: one run of Debian's python3.11 -c pass and of sqlite3 inserting 1,000 rows "
             f"in one transaction, timed by lxbench --time). Ratio: Linux / Petrel (above 1: "
             f"Petrel cheaper). L4Linux: the paper's L4Linux / native Linux (its slowdown).\n\n",
             "| metric | linux | petrel-linux-kernel | ratio | petrel-linux-user | ratio | L4Linux paper |\n",
             "|---|---:|---:|---:|---:|---:|---:|\n"]
    for metric in LX_METRICS + APP_METRICS + BOOT_METRICS:
        lx, k, u = (value(rows, metric, s) for s in LX_SYSTEMS)
        if lx is None and k is None and u is None:
            continue
        rk, ru = ratio(metric, k, lx), ratio(metric, u, lx)
        paper = LX_PAPER.get(metric)
        lines.append(f"| {metric} | {fmt(lx)} | {fmt(k)} | {f'{rk:.2f}x' if rk else '–'} | {fmt(u)} | "
                     f"{f'{ru:.2f}x' if ru else '–'} | {f'{paper[1] / paper[0]:.1f}x slower' if paper else '–'} |\n")
    return lines


# What a family's table measures (before it), and its table of times.
SPEEDUP_ABOUT = {
    PAR.row: ("lxpar (bench/linux/lxpar.c), one static program on Linux and on Petrel's Linux personality in the "
              "kernel and in user space, does a fixed amount of integer work with one worker and with N, as threads "
              "and as processes. Speed-up: the job's time with one worker / with N, in one boot; {boots}. Ratio: "
              "Petrel's speed-up / Linux's; the target is {share} or more (within 10% of Linux's).\n\n",
              "\nThe jobs' median times (seconds), and the cores the workers ran on, as lxpar saw them (sched_getcpu "
              "before and after its part: a core, or where it started > where it finished), with the number of "
              "boots that saw each placement in brackets:\n\n"),
    SCALE.row: ("lxscale (bench/linux/lxscale.c), one static program on Linux and on Petrel's Linux personality in "
                "the kernel and in user space, runs N processes that each make the same number of system calls: "
                "getppid, 4 KiB reads of /dev/zero, or pipe round trips with a partner process of their own, pinned "
                "to the next core. Speed-up: the job's time with all its processes on one core / with worker i on "
                "core i, in one boot; {boots}. Ratio: Petrel's speed-up / Linux's. The target is a speed-up of "
                "{least}x or more at N = 2, in each placement.\n\n",
                "\nThe jobs' median times (seconds), and the cores the processes ran on, as lxscale saw them "
                "(sched_getcpu before and after the loop: a core, or where it started > where it finished; pipe: "
                "worker/partner), with the number of boots that saw each placement in brackets:\n\n"),
}


# A family's speed-up table: each row's median speed-up (min-max of the
# boots) on Linux and in both placements, Petrel / Linux beside, the jobs'
# median times, the cores the workers ran on, and what went wrong; or
# why the rows were not measured.
def speedup_report(family: Speedup, rows: list, par: dict) -> list:
    lines = [f"\n## {family.title} ({family.row})\n\n"]
    if par.get("na"):
        return lines + [f"Not applicable: {par['na']} (`./petrel bench --mode wall --smp 2 --only {family.row}`).\n"]
    runs = max((r["runs"] for r in rows if r.get("runs") and family.row_re.fullmatch(r["metric"])), default=0)
    about, times = SPEEDUP_ABOUT[family.row]
    boots = f"the median of {runs} boot{'s' if runs != 1 else ''} (min–max)"
    lines += [about.format(boots=boots, share=family.share, least=family.least),
              "| row | linux | petrel-linux-kernel | ratio | petrel-linux-user | ratio |\n",
              "|---|---:|---:|---:|---:|---:|\n"]
    row_of = lambda metric, system: next((r for r in rows if r["metric"] == metric and r["system"] == system), None)
    cell = lambda r: f"{r['median']:.2f}x ({r['min']:.2f}–{r['max']:.2f})" if r else "–"
    for metric in par.get("rows", []):
        lx, k, u = (row_of(metric, system) for system in LX_SYSTEMS)
        rk, ru = (ratio(metric, r["median"] if r else None, lx["median"] if lx else None) for r in (k, u))
        lines.append(f"| {metric} | {cell(lx)} | {cell(k)} | {f'{rk:.2f}' if rk else '–'} | {cell(u)} | "
                     f"{f'{ru:.2f}' if ru else '–'} |\n")
    lines += [times, "| job | linux | petrel-linux-kernel | petrel-linux-user |\n", "|---|---|---|---|\n"]
    for metric in par.get("rows", []):
        kind, n = family.row_re.fullmatch(metric).groups()
        for _, job, label in family.jobs(kind, int(n)):
            cells = []
            for system in LX_SYSTEMS:
                t = value(rows, job, system)
                seen = par.get("cpus", {}).get((system, job), {})
                cores = ", ".join(f"{c} ({b})" for c, b in sorted(seen.items()))
                cells.append(f"{t / 1e9:.3f} s" + (f"; cores {cores}" if cores else "") if t is not None else "–")
            lines.append(f"| {label} | " + " | ".join(cells) + " |\n")
    host, smp = par.get("host_cores"), par.get("smp")
    if host and smp and host < smp:
        lines.append(f"\nThis host runs the {smp} virtual cores on {host} host core{'s' if host > 1 else ''}: no "
                     f"system can speed up more than {host} times here, so these rows cannot tell a system that "
                     f"scales to {smp} cores from one that scales to {host}.\n")
    other = par.get("host_other")
    if other is not None:
        lines.append(f"\nOther work on the host kept {other:.2f} of its cores busy on average during these boots"
                     + (f": the N-core jobs had fewer host cores than guest cores, and these figures understate "
                        f"every system's speed-up (measure on a quiet host).\n" if other >= OTHER_LOAD else ".\n"))
    problems = [f"- {system}: {why}\n" for system, why in sorted(par.get("failed", {}).items())]
    problems += [f"- {said}\n" for said in par.get("said", [])]
    if problems:
        lines += ["\nWhat went wrong:\n\n"] + problems
    return lines


# A family's targets on every row measured, in each placement (a row
# missing on either side is not met): Petrel's speed-up at least `share`
# of Linux's, or at least `least` on the rows of N = 2.
def speedup_targets(family: Speedup, rows: list, measured: list) -> list:
    out = []
    for metric in measured:
        if family.least and int(family.row_re.fullmatch(metric).group(2)) != 2:
            continue
        lx = value(rows, metric, "linux")
        for system in ("petrel-linux-kernel", "petrel-linux-user"):
            p = value(rows, metric, system)
            if family.share:
                r = ratio(metric, p, lx)
                shown = f"{p:.2f}x against {lx:.2f}x, {r:.2f}" if r else "missing"
                out.append((f"{metric}, {system}: speed-up at least {family.share} of Linux's ({shown})",
                            r is not None and r >= family.share))
            else:
                shown = (f"{p:.2f}x" if p is not None else "missing") + (f"; Linux {lx:.2f}x" if lx else "")
                out.append((f"{metric}, {system}: speed-up at least {family.least}x ({shown})",
                            p is not None and p >= family.least))
    return out


# The application benchmarks' table (the L4Linux paper's Table IV): the
# guest time of one run of each program on Linux and on Petrel in both
# placements, Petrel / Linux (its slowdown, as the paper's L4Linux /
# native), the paper's figures for the row, and what went wrong: failed
# programs and inputs, unknown system calls, outputs unlike Linux's.
def apps_report(rows: list, notes: dict, unit: str) -> list:
    lines = ["\n## Debian's applications on Petrel (the L4Linux paper's Table IV)\n\n",
             f"One run of each program, timed by `lxbench --time` from bench/apps/apps.sh on inputs it makes "
             f"first, in {unit}. Slowdown: Petrel / Linux (1.00x: Linux's time; above 1: Petrel slower), as the "
             f"paper's L4Linux / native Linux (its Table IV, seconds on an ARM11).\n\n",
             "| row | what runs | linux | petrel-linux-kernel | slowdown | petrel-linux-user | slowdown | "
             "Table IV row | native (s) | L4Linux (s) | L4Linux slowdown |\n",
             "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n"]
    for metric, (what, paper_row) in SUITE_APPS.items():
        lx, k, u = (value(rows, metric, s) for s in LX_SYSTEMS)
        cell = lambda v, system: fmt(v) if v is not None else (
            "failed" if metric in notes.get(system, {}).get("skip", {}) else "–")
        slow = lambda v: f"{v / lx:.3f}x" if v is not None and lx else "–"
        native, l4 = TABLE_IV.get(paper_row, (None, None))
        lines.append(f"| {metric} | {what} | {cell(lx, 'linux')} | {cell(k, 'petrel-linux-kernel')} | {slow(k)} | "
                     f"{cell(u, 'petrel-linux-user')} | {slow(u)} | {paper_row or '–'} | "
                     f"{native if native else '–'} | {l4 if l4 else '–'} | "
                     f"{f'{l4 / native:.2f}x' if native else '–'} |\n")
    lines.append("\n")
    problems = []
    for system, why in sorted(notes.get("failed", {}).items()):
        problems.append(f"- {system}: {why}\n")
    for system in LX_SYSTEMS:
        said = notes.get(system)
        if said is None:
            continue
        problems += [f"- {system}: {row} failed ({why})\n" for row, why in sorted(said["skip"].items())]
        problems += [f"- {system}: {what}\n" for what in said["said"]]
        problems += [f"- {system}: unknown system call {call}\n" for call in said["unknown"]]
        if system != "linux" and "linux" in notes:
            differ = output_differences(notes, system)
            problems += [f"- {system}: outputs unlike Linux's (or not made): {', '.join(differ)}\n"] if differ else []
    if problems:
        lines += ["What went wrong:\n\n"] + problems
    elif all(s in notes for s in LX_SYSTEMS):
        lines.append(f"Every program ran on every system, and each of the {len(notes['linux']['out'])} output "
                     f"files is the same as Linux's (sha256) in both placements; no unknown system call.\n")
    return lines


# The apps rows' target: each within APPS_TARGET of Linux's time in each
# placement (a row missing on either side is not met).
def apps_targets(rows: list) -> list:
    out = []
    for system in ("petrel-linux-kernel", "petrel-linux-user"):
        pairs = {m: (value(rows, m, system), value(rows, m, "linux")) for m in SUITE_APPS}
        missing = [m for m, (p, lx) in pairs.items() if not p or not lx]
        slow = {m: p / lx for m, (p, lx) in pairs.items() if m not in missing}
        worst = max(slow, key=slow.get) if slow else None
        said = [f"worst {worst} {slow[worst]:.3f}x"] if worst else []
        said += [f"missing {', '.join(missing)}"] if missing else []
        shown = ", ".join(said)
        out.append((f"every app_ row within {APPS_TARGET:.2f}x of Linux, {system} ({shown})",
                    not missing and slow[worst] <= APPS_TARGET))
    return out


# The targets of the benchmark issue, checked on icount figures.
def targets(rows: list) -> list:
    out = []
    rtt = value(rows, "ipc_rtt_4b", "petrel")
    for name, ok in [
        ("ipc_rtt_4b <= 600 instructions", rtt is not None and rtt <= 600),
        ("ipc_rtt_4b >= 50x cheaper than linux-binder",
         (ratio("ipc_rtt_4b", rtt, value(rows, "ipc_rtt_4b", "linux-binder")) or 0) >= 50),
        ("ipc_rtt_4b >= 5x cheaper than linux-pipe",
         (ratio("ipc_rtt_4b", rtt, value(rows, "ipc_rtt_4b", "linux-pipe")) or 0) >= 5),
        ("null_syscall <= Linux getppid",
         (value(rows, "null_syscall", "petrel") or 1e18) <= (value(rows, "null_syscall", "linux") or 0)),
        ("noop_user_service costs more than noop_kernel_service",
         (value(rows, "noop_user_service", "petrel") or 0) > (value(rows, "noop_kernel_service", "petrel") or 1e18)),
        ("irq_latency_under_kservice (kernel-placed) within 2x of the idle machine",
         (value(rows, "irq_latency_under_kservice", "petrel") or 1e18)
         <= 2 * (value(rows, "irq_latency_under_kservice", "petrel-idle") or 0)),
        ("monitor_event <= 60 instructions", (value(rows, "monitor_event", "petrel") or 1e18) <= 60),
        ("monitor_off <= 3 instructions a site", (value(rows, "monitor_off", "petrel") or 1e18) <= 3),
        ("mem_read_bw within 3% of Linux",
         abs((ratio("mem_read_bw", value(rows, "mem_read_bw", "petrel"), value(rows, "mem_read_bw", "linux")) or 0) - 1) <= 0.03),
    ] + hot_path_targets(rows) + lx_targets(rows):
        out.append((name, ok))
    return out


# The hot paths' targets (issue 10): seL4's null call (91) and fastpath
# round trip (514, with 400 as the bar) on this machine, a kernel-placed
# request within 1.3 null calls, a user-placed one within an IPC round trip
# and a tenth plus 60, and the halving or better of what the first profile
# measured for a page fault, a thread and a process.
def hot_path_targets(rows: list) -> list:
    v = lambda metric: value(rows, metric, "petrel")
    big = 1e18
    null, rtt = v("null_syscall"), v("ipc_rtt_4b")
    return [
        ("null_syscall <= 91 instructions (seL4)", (null or big) <= 91),
        ("ipc_rtt_4b <= 400 instructions", (rtt or big) <= 400),
        ("noop_kernel_service <= 1.3x null_syscall", (v("noop_kernel_service") or big) <= 1.3 * (null or 0)),
        ("noop_user_service <= 1.1x ipc_rtt_4b + 60", (v("noop_user_service") or big) <= 1.1 * (rtt or 0) + 60),
        ("object_rpc_rtt_4b within 1.5x of ipc_rtt_4b", (v(OBJECT_RPC) or big) <= 1.5 * (rtt or 0)),
        ("page_fault <= 700 instructions", (v("page_fault") or big) <= 700),
        ("thread_create_exit <= 6,000 instructions", (v("thread_create_exit") or big) <= 6000),
        ("process_spawn_exit <= 50,807 instructions (half of 101,615)", (v("process_spawn_exit") or big) <= 101615 / 2),
    ]


# The Linux personality's targets (issue 11), on the lx rows.
def lx_targets(rows: list) -> list:
    v = lambda metric, system: value(rows, metric, system)
    big = 1e18
    return [
        ("lx_null_syscall, kernel-placed personality <= Linux",
         (v("lx_null_syscall", "petrel-linux-kernel") or big) <= (v("lx_null_syscall", "linux") or 0)),
        ("lx_null_syscall, user-placed personality <= 1.5x Linux",
         (v("lx_null_syscall", "petrel-linux-user") or big) <= 1.5 * (v("lx_null_syscall", "linux") or 0)),
        ("lx_pipe_rtt <= Linux in both placements",
         max(v("lx_pipe_rtt", "petrel-linux-kernel") or big, v("lx_pipe_rtt", "petrel-linux-user") or big)
         <= (v("lx_pipe_rtt", "linux") or 0)),
        ("lx_fork_exit <= 1.5x Linux in both placements",
         max(v("lx_fork_exit", "petrel-linux-kernel") or big, v("lx_fork_exit", "petrel-linux-user") or big)
         <= 1.5 * (v("lx_fork_exit", "linux") or 0)),
        ("boot_to_shell at most a tenth of Linux's in both placements",
         max(v("boot_to_shell", "petrel-linux-kernel") or big, v("boot_to_shell", "petrel-linux-user") or big)
         <= 0.1 * (v("boot_to_shell", "linux") or 0)),
        ("lx_python_startup, kernel-placed personality <= Linux",
         (v("lx_python_startup", "petrel-linux-kernel") or big) <= (v("lx_python_startup", "linux") or 0)),
        ("lx_sqlite_insert_1000, kernel-placed personality <= Linux",
         (v("lx_sqlite_insert_1000", "petrel-linux-kernel") or big) <= (v("lx_sqlite_insert_1000", "linux") or 0)),
        *[(f"{crowded} within 1.1x of {empty} in both placements",
           all((v(crowded, s) or big) <= 1.1 * (v(empty, s) or 0) for s in ("petrel-linux-kernel", "petrel-linux-user")))
          for crowded, empty in LX_CROWDED.items()],
        # The network rows (the networking issue): at or below Linux with
        # the personality (and the stack) in the kernel, within 1.3x in
        # user space.
        *[(f"{m}, kernel-placed personality <= Linux",
           (v(m, "petrel-linux-kernel") or big) <= (v(m, "linux") or 0)) for m in LX_NET],
        *[(f"{m}, user-placed personality within 1.3x Linux",
           (v(m, "petrel-linux-user") or big) <= 1.3 * (v(m, "linux") or 0)) for m in LX_NET],
        # The file system rows (the storage issue): the same targets.
        *[(f"{m}, kernel-placed personality <= Linux",
           (v(m, "petrel-linux-kernel") or big) <= (v(m, "linux") or 0)) for m in LX_FS],
        *[(f"{m}, user-placed personality within 1.3x Linux",
           (v(m, "petrel-linux-user") or big) <= 1.3 * (v(m, "linux") or 0)) for m in LX_FS],
        # Its wall-mode throughput rows (when measured): at least 90 % of
        # Linux's throughput, so at most 1/0.9 of its time, in both placements.
        *[(f"{m}, throughput at least 90% of Linux's in both placements",
           all((v(m, s) or big) <= (v(m, "linux") or 0) / 0.9 for s in ("petrel-linux-kernel", "petrel-linux-user")))
          for m in LX_FS_WALL if v(m, "linux") is not None],
        # The Binder rows (the Android issue): a round trip at least 20x
        # cheaper than Linux's with the personality in the kernel, 10x in
        # user space.
        *[(f"{m} >= {k}x cheaper than Linux, {p}-placed personality",
           (v(m, "linux") or 0) >= k * (v(m, f"petrel-linux-{p}") or big))
          for m in ("binder_rtt_4b", "binder_rtt_4k") for p, k in (("kernel", 20), ("user", 10))],
        # The input path (the Android issue): Petrel's own, end to end, at
        # least 10x cheaper than Android's on Linux (evdev read, Binder).
        ("input_path_e2e >= 10x cheaper than Linux's, Petrel's own path (services in the kernel)",
         (v("input_path_e2e", "linux") or 0) >= 10 * (v("input_path_e2e", "petrel") or big)),
        ("lx_cpu_loop no more than 1% slower than Linux in both placements",
         all((v("lx_cpu_loop", s) or big) <= 1.01 * (v("lx_cpu_loop", "linux") or 0)
             for s in ("petrel-linux-kernel", "petrel-linux-user"))),
    ]


# A bar chart of the ratios (log scale), one bar per metric and Linux variant.
def chart(rows: list, path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels, values = [], []
    for metric in METRICS:
        p = value(rows, metric, "petrel")
        for s in LINUX_SYSTEMS:
            r = ratio(metric, p, value(rows, metric, s))
            if r is not None:
                labels.append(f"{metric}\n{s}")
                values.append(r)
    speedups = sorted({r["metric"] for r in rows if speedup_of(r["metric"])})
    for metric in LX_METRICS + APP_METRICS + INPUT_METRICS + BOOT_METRICS + list(SUITE_APPS) + speedups:
        for s in ("petrel-linux-kernel", "petrel-linux-user"):
            r = ratio(metric, value(rows, metric, s), value(rows, metric, "linux"))
            if r is not None:
                labels.append(f"{metric}\n{s.removeprefix('petrel-')}")
                values.append(r)
    if not values:
        return False
    fig, ax = plt.subplots(figsize=(max(8, len(values) * 0.45), 5))
    ax.bar(range(len(values)), values, color=["#2b7bba" if v >= 1 else "#d6604d" for v in values])
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_ylabel("Linux / Petrel (latency), Petrel / Linux (bandwidth, speed-up)")
    ax.set_title("Petrel vs Linux in the same QEMU (above 1: Petrel better)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# `./petrel bench --suite net` (netbench.py): wall mode only, every pair.
def main_net(mode, cpu: str, smp: int, only, runs, mem: str, rtt_ms: float, loss_pct: float,
             repo: Path = paths.REPO, pcap: bool = False) -> int:
    from petrel import netbench
    if mode == "icount" or (only and only not in netbench.SYSTEMS):
        print(f"bench: --suite net is wall mode only (iperf3's throughput); --only is one of "
              f"{', '.join(netbench.SYSTEMS)}", file=sys.stderr)
        return 2
    machine = wall_machine(cpu, smp, mem, runs)
    status = 2 if machine is None else build.build(repo=repo)
    return status or netbench.main(machine, runs or 5, rtt_ms, loss_pct, only, repo, pcap=pcap)


# The machine of a wall-mode suite over the relay, or None (said why).
def wall_machine(cpu: str, smp: int, mem: str, runs):
    return checked_machine(qemu.Machine(cpu, 2 if smp <= 8 else 3, smp, mem, False), runs)


# `machine` if QEMU can start it and --runs is sensible, else None (said why).
def checked_machine(machine: qemu.Machine, runs):
    try:
        qemu.check_machine(machine)
        if runs is not None and runs < 1:
            raise ValueError(f"--runs {runs}: expected 1 or more")
    except ValueError as err:
        print(f"bench: {err}", file=sys.stderr)
        return None
    return machine


# `./petrel bench --suite tcp`: the Kernel Monitor paper's experiments (tcpbench.py).
def main_tcp(mode, cpu: str, smp: int, only, runs, mem: str, repo: Path = paths.REPO) -> int:
    from petrel import tcpbench
    if mode == "icount" or (only and only != "monitor_cost"):
        print("bench: --suite tcp is wall mode only, and runs all of its experiments or, with --only "
              "monitor_cost, the monitor's cost alone", file=sys.stderr)
        return 2
    machine = wall_machine(cpu, smp, mem, runs)
    status = 2 if machine is None else build.build(repo=repo)
    if status or only != "monitor_cost":
        return status or tcpbench.main(machine, runs or 1, repo)
    return tcpbench.main(machine, runs or 6, repo, tcpbench.plan_monitor(), alternate=True)


# `./petrel bench --suite k2`: K2's rows, each run one boot of the main
# kernel with the shadow (icount by default: figures are instructions);
# build/bench/k2/results.json and report.md.
def main_k2(mode: str, cpu: str, smp: int, only, runs, mem: str, repo: Path = paths.REPO) -> int:
    if only and only not in K2_METRICS:
        print(f"bench: --suite k2 has the rows {', '.join(K2_METRICS)}", file=sys.stderr)
        return 2
    machine = checked_machine(qemu.Machine(cpu, 2 if smp <= 8 else 3, max(smp, 2), mem, mode == "icount",
                                           k2=str(paths.shadow_bin(repo))), runs)
    if machine is None:
        return 2
    runs = runs or (1 if machine.icount else 5)
    status = build.build(repo=repo)
    if status:
        return status
    out = bench_dir(repo) / "k2"
    out.mkdir(parents=True, exist_ok=True)
    image = paths.system_image("demo", repo)
    # (the one-kernel system on as many cores as main has beside the shadow:
    # one core or several changes the allocator's locking)
    one_kernel = dataclasses.replace(machine, k2="", smp=machine.smp - 1)
    boots = [("petrel-k2", qemu.build_argv(paths.kernel_bin(repo=repo), image, machine, "k2.bench"))]
    if not only or re.fullmatch(r"k2_alloc_\w+_main|k2_probe_cost", only):
        boots.append(("petrel", qemu.build_argv(paths.kernel_bin(repo=repo), image, one_kernel, "k2.bench")))
    samples = {}
    try:
        for run in range(runs):
            for label, argv in boots:
                print(f"bench: {label}, boot {run + 1} of {runs}", flush=True)
                figures = boot(argv, label, 600, out / f"{label}-{run + 1}.log")
                for key, value in figures.items():
                    samples.setdefault(key, []).append(value)
    except BenchError as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    if only:
        samples = {key: v for key, v in samples.items() if key[0] == only or
                   (only == "k2_probe_cost" and key[0] == "k2_alloc_4k_main")}
    rows = k2_rows(summary(samples, "icount" if machine.icount else "wall"))
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = k2_report(rows, machine, "./petrel bench " + " ".join(sys.argv[2:]))
    (out / "report.md").write_text(text)
    print()
    print(text)
    print(f"bench: wrote {paths.rel(out / 'results.json')}, {paths.rel(out / 'report.md')}")
    return 0


# The rows with k2_probe_cost (main's 4 KiB allocation with K2 less the
# one-kernel system's, from the medians) added.
def k2_rows(rows: list) -> list:
    k2, base = value(rows, "k2_alloc_4k_main", "petrel-k2"), value(rows, "k2_alloc_4k_main", "petrel")
    rows = [r for r in rows if r["metric"] != "k2_probe_cost"]
    if k2 is not None and base is not None:
        unit = next(r["unit"] for r in rows if r["metric"] == "k2_alloc_4k_main")
        rows.append({"metric": "k2_probe_cost", "system": "petrel-k2", "mode": rows[0]["mode"], "unit": unit,
                     "median": k2 - base, "min": k2 - base, "max": k2 - base, "runs": 1})
    return rows


# The k2 suite's report: each row, beside the one-kernel system where it
# has one, in round trips too, and the targets.
def k2_report(rows: list, machine: qemu.Machine, command: str) -> str:
    unit = "instructions" if machine.icount else "ns"
    rtt = value(rows, "k2_mbox_rtt", "petrel-k2")
    lines = [f"# K2 (`{command}`)", "",
             f"{machine.cpu}, {machine.smp} cores (the shadow kernel on the last), GICv{machine.gic}, "
             f"{'icount' if machine.icount else 'wall clock, median of the runs'}; figures in {unit}. "
             f"petrel: the same kernel with K2 off on {machine.smp - 1} core{'s' if machine.smp > 2 else ''}, "
             "as many as the main kernel has.", "",
             "| row | petrel-k2 | petrel | k2 / petrel | round trips |", "|---|---:|---:|---:|---:|"]
    for metric in K2_METRICS:
        v, b = value(rows, metric, "petrel-k2"), value(rows, metric, "petrel")
        if v is None:
            continue
        trips = f"{v / rtt:.1f}" if rtt and metric != "k2_probe_cost" else "-"
        ratio_text = f"{v / b:.2f}" if b else "-"
        lines.append(f"| {metric} | {fmt(v)} | {fmt(b) if b is not None else '-'} | {ratio_text} | {trips} |")
    checks = [(f"{metric} <= {K2_FAULT_BOUND} x k2_mbox_rtt", value(rows, metric, "petrel-k2") <= K2_FAULT_BOUND * rtt)
              for metric in ("k2_dsm_fault_main", "k2_dsm_fault_shadow")
              if rtt and value(rows, metric, "petrel-k2") is not None]
    for size in K2_ALLOC_SIZES:
        v, b = value(rows, f"k2_alloc_{size}_main", "petrel-k2"), value(rows, f"k2_alloc_{size}_main", "petrel")
        if machine.icount and v is not None and b is not None:
            checks.append((f"k2_alloc_{size}_main within {K2_PROBE_BOUND} instructions of the one-kernel system's "
                           f"({v - b:+.0f})", v - b <= K2_PROBE_BOUND))
    if checks:
        lines += ["", "## Targets", ""] + [f"- {'met' if ok else 'NOT met'}: {name}" for name, ok in checks]
    return "\n".join(lines) + "\n"


# `./petrel bench`: the default suite (Petrel's own rows, the Linux
# programs' rows, the boot), or --suite apps (the application benchmarks
# alone); --only one row of either.
def main(mode: str, cpu: str, smp: int, only: str, runs, mem: str = "512M", repo: Path = paths.REPO,
         suite: str = "default") -> int:
    known = METRICS + LX_METRICS + APP_METRICS + INPUT_METRICS + BOOT_METRICS + list(SUITE_APPS)
    if only and only not in known and only != "lx" and not speedup_of(only):
        print(f"bench: unknown benchmark {only!r}; choose from {', '.join(known)}, or lx (all lx_ rows), or "
              + ", or ".join(f"{f.row} (with --mode wall --smp N, N >= 2: {', '.join(speedup_rows(f, 'N'))})"
                             for f in SPEEDUPS), file=sys.stderr)
        return 2
    family = speedup_of(only) if only else None
    if family:
        row = family.row_re.fullmatch(only)
        why = not_applicable(qemu.Machine(smp=smp, icount=mode == "icount"))
        if why or (row and int(row.group(2)) != smp):
            print(f"bench: {only} is not measured here: "
                  f"{why or f'its N is {row.group(2)}, the machine has --smp {smp}'}", file=sys.stderr)
            return 2
    if suite not in SUITES or (suite == "apps" and only and only not in SUITE_APPS):
        print(f"bench: --suite is one of {', '.join(SUITES)}; with --suite apps, --only names an app_ row",
              file=sys.stderr)
        return 2
    apps = suite == "apps" or only in SUITE_APPS
    machine = qemu.Machine(cpu, 2 if smp <= 8 else 3, smp, mem, mode == "icount")
    try:
        qemu.check_machine(machine)
    except ValueError as err:
        print(f"bench: {err}", file=sys.stderr)
        return 2
    runs = runs or (1 if mode == "icount" else 5)
    status = build.build(repo=repo)
    if status:
        return status
    if not linuxbase.present(repo):
        print("bench: the Linux baseline is missing: run ./petrel setup", file=sys.stderr)
        return 1
    command = "./petrel bench " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "./petrel bench"
    par = {}
    try:
        rows, notes = measure_apps(machine, runs, only, repo) if apps else \
            (measure(machine, runs, only, repo, par), None)
    except (BenchError, debian.DebianError) as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    out = bench_dir(repo)
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = report(rows, machine, command, notes, par)
    if not machine.icount:
        checks = [check for family in SPEEDUPS if family.row in par
                  for check in speedup_targets(family, rows, par[family.row].get("rows", []))]
    elif apps:
        checks = apps_targets(rows) if not only else []
    else:
        checks = targets(rows) if not only else lx_targets(rows) if only == "lx" else []
    if checks:
        text += "\n## Targets\n\n" + "".join(f"- {'met' if ok else 'NOT met'}: {name}\n" for name, ok in checks)
    (out / "report.md").write_text(text)
    drew = chart(rows, out / "ratios.png")
    print()
    print(text)
    print(f"bench: wrote {paths.rel(out / 'results.json')}, {paths.rel(out / 'report.md')}"
          + (f", {paths.rel(out / 'ratios.png')}" if drew else ""))
    return 0
