"""The `./petrel` command line: one entry point for setup, build, run and test.

Every subcommand except `setup` first makes sure the machine is set up (quietly
when nothing is missing) and then re-executes itself under the project
virtualenv, so the tools can use its packages.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from petrel import bench, build, envsetup, paths, qemu, testrun

SCRIPT = paths.REPO / "petrel"
DESCRIPTION = """\
Petrel: a small AArch64 microkernel OS for QEMU virt.

Start with `./petrel run` (build and boot to the serial console) and
`./petrel test` (build, boot every guest test case, run the host tests).
"""


# Adds the `setup` subcommand.
def add_setup(sub) -> None:
    p = sub.add_parser("setup", help="install what the project needs (apt packages, .venv)",
                       description="Install the Debian packages Petrel needs (QEMU, clang, lld, llvm, "
                                   "make, dtc, gdb-multiarch, clang 14's sanitizer and libFuzzer runtimes) and the "
                                   "Python packages of "
                                   "requirements.txt into the project virtualenv .venv/, and download Debian's "
                                   "arm64 packages the Linux side uses (the baseline kernel, busybox, glibc, the "
                                   "real-programs suite's and the application benchmarks' programs) into .cache/. "
                                   "Idempotent; fast when everything is there.")
    p.add_argument("--check", action="store_true",
                   help="only report what is missing; exit 1 if anything is")


# Adds the `build` subcommand.
def add_build(sub) -> None:
    p = sub.add_parser("build", help="compile everything and pack the boot images",
                       description="Run `make O=build` (kernel, test kernel, user programs), then pack "
                                   "every systems/*.toml into build/images/<name>.pbi.")
    p.add_argument("--kernel-test", action="store_true",
                   help="also name the kernel-test target explicitly (build/kernel-test/kernel.bin)")
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="parallel make jobs (default: all cores)")
    p.add_argument("-v", "--verbose", action="store_true", help="show full compiler command lines (make V=1)")


# Adds the `run` subcommand.
def add_run(sub) -> None:
    p = sub.add_parser("run", help="build, then boot Petrel in QEMU on this terminal",
                       description="Build, then boot build/kernel/kernel.bin with the default system "
                                   "image in QEMU virt. The serial console is this terminal; "
                                   "Ctrl-A x quits QEMU, Ctrl-A c toggles its monitor. "
                                   "Exits with QEMU's exit status.")
    p.add_argument("--smp", type=int, default=1, metavar="N", help="number of cores (default 1)")
    p.add_argument("--cpu", choices=qemu.CPUS, default="cortex-a53", help="CPU model (default cortex-a53)")
    p.add_argument("--gic", type=int, choices=qemu.GICS, default=2, help="GIC version (default 2)")
    p.add_argument("--mem", default="512M", help="guest memory size (default 512M)")
    p.add_argument("--gdb", type=int, nargs="?", const=1234, metavar="PORT",
                   help="start halted and wait for gdb on PORT (default 1234)")
    p.add_argument("--image", metavar="PATH", help="boot image to pass (default build/images/default.pbi)")
    p.add_argument("--system", metavar="NAME",
                   help="boot systems/NAME.toml (default: default; linux-user with --exec or --add)")
    p.add_argument("--exec", metavar="CMD", dest="exec_cmd",
                   help="run the Linux command CMD (a program of the root archive and its arguments) and exit "
                        "with its status; the console is copied, not interactive")
    p.add_argument("--add", action="append", default=[], metavar="HOST[:GUEST]",
                   help="put a host file or directory into the root archive (repeatable; default GUEST: "
                        "/bin/NAME for a file, /NAME for a directory)")
    p.add_argument("--apps", action="store_true",
                   help="put Debian's programs of the real-programs suite (python3.11, sqlite3, coreutils, "
                        "tar, xz, gawk, jq, lua5.4, ...; tests/apps/README.md) into the root archive; "
                        "without --exec, boot the shell on it")
    p.add_argument("--linux", action="store_true",
                   help="with --exec/--add: boot Debian's Linux kernel on the same archive instead")
    p.add_argument("--append", default="", metavar="ARGS", help="kernel command line (bootargs)")
    p.add_argument("--icount", action="store_true",
                   help="deterministic instruction counting: -icount shift=0,align=off,sleep=off")
    p.add_argument("--k2", action="store_true",
                   help="K2: boot the shadow kernel (build/k2/shadow.bin) on the last core beside the main "
                        "kernel on the others (needs --smp 2 or more; docs/guide/k2.md)")
    p.add_argument("--net", choices=qemu.NETS,
                   help="the virtio-net NIC's network: user (QEMU's user-mode network, 10.0.2.0/24; the default "
                        "of an interactive run), isolated (the same with restrict=on: nothing beyond QEMU's own "
                        "addresses; the default with --exec or typed input), or none")
    p.add_argument("--pcap", metavar="FILE", help="record the NIC's frames in FILE (pcap, for tshark or wireshark)")
    p.add_argument("--forward", action="append", default=[], metavar="HOSTPORT:GUESTPORT", type=forward_arg,
                   help="forward TCP connections to 127.0.0.1:HOSTPORT on the host to GUESTPORT of the guest "
                        "(repeatable; QEMU's user-mode network, so not with --net none)")
    p.add_argument("--disk", metavar="FILE",
                   help="attach FILE, a raw disk image, as a virtio-blk disk (the blk service drives it: "
                        "--system blk-user or blk-kernel; with --linux, Debian's kernel mounts it at /data); made "
                        "with the host's mke2fs as an empty ext2 file system of --disk-size when it does not exist")
    p.add_argument("--disk-size", default="64M", metavar="SIZE", type=disk_size_arg,
                   help="the size of a disk --disk makes (default 64M; K, M or G, from 1M to 64G)")
    p.add_argument("--disk-ro", action="store_true", help="attach --disk read-only (the disk says so; writes fail)")
    p.add_argument("--keyboard", action="store_true",
                   help="attach a virtio keyboard (QEMU's virtio-keyboard-device, after the NIC and the disk); "
                        "press its keys from QEMU's monitor: Ctrl-A c, then sendkey and QKeyCode names joined by "
                        "- (sendkey shift-a), then Ctrl-A c back to the console")
    p.add_argument("--tablet", action="store_true",
                   help="attach a virtio tablet (QEMU's virtio-tablet-device: an absolute pointer that follows "
                        "the mouse in the --display viewer) before the keyboard, so that a service's devices name "
                        "the keyboard virtio-input and the tablet virtio-input#1")
    p.add_argument("--display", action="store_true",
                   help="attach a virtio-gpu screen of 640x480 (the display service drives it; Linux programs "
                        "draw into /dev/fb0) and show it to a VNC viewer on the host's loopback: 127.0.0.1 port "
                        "5900, or the next free one up to 5999")
    p.add_argument("--trace", metavar="GROUPS",
                   help="switch the monitor's tracepoint groups on from boot (comma-separated: tcp, sched, fault, "
                        "irq, syscall, linux, or all; docs/reference/tracepoints.md) and record them to "
                        "--trace-out while the guest runs, from QEMU's side (the guest does nothing for it)")
    p.add_argument("--strace", action="store_true",
                   help="print every Linux system call of the programs as strace does (process, name, decoded "
                        "arguments and strings, result and errno), on stderr as they happen; recorded in "
                        "--trace-out too (the monitor's linux group)")
    p.add_argument("--trace-out", metavar="FILE", default="build/trace/run.ptrace",
                   help="where --trace records (default build/trace/run.ptrace); read it with ./petrel trace FILE")


def add_trace(sub) -> None:
    p = sub.add_parser("trace", help="print, export or plot a trace the monitor recorded",
                       description="Decode a trace recorded by ./petrel run --trace (or a test case's) and print "
                                   "it like the Kernel Monitor paper's log: TCP events as /proc/net/tcpmon shows "
                                   "them, the others as time, core, process, tracepoint and fields. --perfetto, "
                                   "--json and --plot write the trace instead (add --print to print as well).")
    p.add_argument("file", help="a trace file (.ptrace)")
    p.add_argument("--filter", metavar="GROUPS", help="only these tracepoint groups (comma-separated)")
    p.add_argument("--conn", metavar="N[,N]", help="only these TCP connections' events")
    p.add_argument("--perfetto", metavar="OUT", help="write a Perfetto trace (protobuf TrackEvent): a track per "
                   "core, process, thread and TCP connection, counters of cwnd and ssthresh")
    p.add_argument("--json", metavar="OUT", help="write the Chrome JSON trace format (chrome://tracing, Perfetto)")
    p.add_argument("--plot", metavar="OUT.png", help="plot cwnd and ssthresh against time, a panel a connection")
    p.add_argument("--title", help="the plot's title (default: the file's name)")
    p.add_argument("--print", action="store_true", help="print the log as well as writing the files")
    p.add_argument("--strace", action="store_true", help="print the Linux calls alone, as strace does (the "
                   "recording needs the linux group)")


# `--forward HOSTPORT:GUESTPORT` as a pair of ports.
def forward_arg(text: str) -> tuple:
    m = re.fullmatch(r"([0-9]{1,5}):([0-9]{1,5})", text)
    if not m or not all(1 <= int(port) <= 65535 for port in m.groups()):
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOSTPORT:GUESTPORT, ports from 1 to 65535")
    return int(m[1]), int(m[2])


# `--disk-size SIZE` in bytes: a size as the system descriptions write
# one (systems.parse_size: K, M or G), from 1 MiB to 64 GiB.
def disk_size_arg(text: str) -> int:
    from petrel import systems
    try:
        size = systems.parse_size("--disk-size", text)
    except systems.SystemConfigError:
        size = 0
    if not 1 << 20 <= size <= 64 << 30:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a size from 1M to 64G (K, M or G), a multiple of 4K")
    return size


# FILE of --disk, made as an empty ext2 file system of `size` bytes by the
# host's mke2fs (e2fsprogs, which setup installs) when it does not exist.
def make_disk(path: Path, size: int) -> None:
    if path.exists():
        return
    mke2fs = shutil.which("mke2fs") or next((p for p in ("/sbin/mke2fs", "/usr/sbin/mke2fs") if Path(p).exists()),
                                            None)
    if not mke2fs:
        raise SystemExit("run: --disk: mke2fs not found (Debian package e2fsprogs): run ./petrel setup")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)                                  # (sparse: the file system writes what it uses)
    made = subprocess.run([mke2fs, "-q", "-F", "-t", "ext2", "-L", "petrel", str(path)], capture_output=True,
                          text=True)
    if made.returncode:
        path.unlink()
        raise SystemExit(f"run: --disk: mke2fs failed: {made.stderr.strip()}")
    print(f"run: made {path} ({size >> 20} MiB, ext2)", file=sys.stderr)


# The machine `./petrel run` boots: a person's interactive run gets QEMU's
# ordinary user-mode network, anything else an isolated one.
def run_machine(args, interactive: bool) -> qemu.Machine:
    net = args.net or ("user" if interactive else "isolated")
    disk = getattr(args, "disk", None)
    if getattr(args, "disk_ro", False) and not disk:
        raise SystemExit("run: --disk-ro goes with --disk FILE")
    if disk and qemu.disk_path_problem(disk):
        raise SystemExit(f"run: --disk {qemu.disk_path_problem(disk)}")   # (before the image is made)
    if disk:
        make_disk(Path(disk), args.disk_size)
    wants = system_machine(getattr(args, "system", None))
    return qemu.Machine(args.cpu, args.gic, args.smp, args.mem, args.icount, net=net, pcap=args.pcap or "",
                        forward=tuple(args.forward), disk=disk or "", disk_ro=bool(getattr(args, "disk_ro", False)),
                        keyboard=bool(getattr(args, "keyboard", False)) or "keyboard" in wants,
                        tablet=bool(getattr(args, "tablet", False)) or "tablet" in wants,
                        display=bool(getattr(args, "display", False)) or "display" in wants,
                        k2=str(paths.shadow_bin()) if getattr(args, "k2", False) else "")


# The devices a system description asks of the machine ([system] machine),
# () without one or when it cannot be read (the build says why).
def system_machine(name) -> tuple:
    from petrel import systems
    path = paths.REPO / "systems" / f"{name}.toml"
    if not name or not path.exists():
        return ()
    try:
        return systems.load_system(path, paths.REPO).machine
    except (systems.SystemConfigError, OSError):
        return ()


# A run's screen (--display): QEMU's VNC server on the loopback only, at
# the first free display from :0 (port 5900).
def with_screen(argv: list, machine: qemu.Machine) -> list:
    if not machine.display:
        return argv
    at = argv.index("-display")
    print("run: the screen is on VNC at 127.0.0.1:5900 (or the next free port up to 5999)", flush=True)
    return argv[:at + 1] + ["vnc=127.0.0.1:0,to=99"] + argv[at + 2:]


# Adds the `test` subcommand.
def add_test(sub) -> None:
    p = sub.add_parser("test", help="build and run all guest and host tests",
                       description="Build (including the test kernel), boot every case of "
                                   "tests/guest/cases.toml in QEMU, then run pytest on tests/host. "
                                   "Prints one line per test and ends with 'N passed, N failed'. "
                                   "Consoles are saved in build/test/logs/.")
    p.add_argument("-k", metavar="PATTERN", dest="pattern",
                   help="only guest cases whose name contains PATTERN (or matches it as a glob), "
                        "and host tests selected by pytest -k PATTERN")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--guest-only", action="store_true", help="skip the host tests")
    where.add_argument("--host-only", action="store_true", help="skip the guest cases (and the build)")
    p.add_argument("-j", "--jobs", type=int, default=2, metavar="N",
                   help="host cores for guests (default 2): cases run in parallel while "
                        "their cores (-smp) fit in N; a case with N cores or more runs alone; "
                        "the host tests run in N processes, a file at a time")
    p.add_argument("--list", action="store_true", help="list the tests without running them")


# Adds the `bench` subcommand.
def add_bench(sub) -> None:
    p = sub.add_parser("bench", help="benchmark Petrel against Linux in the same QEMU",
                       description="Build, then boot Petrel and the Linux baseline on the same QEMU machine, "
                                   "run the same benchmarks on both, and write build/bench/results.json, "
                                   "build/bench/report.md and build/bench/ratios.png. See docs/benchmarks.md.")
    p.add_argument("--mode", choices=("icount", "wall"),
                   help="icount: -icount shift=0 (figures are guest instructions, exactly repeatable); "
                        "wall: plain TCG, median of --runs (default icount; wall with --suite net)")
    p.add_argument("--cpu", choices=qemu.CPUS, default="cortex-a53", help="CPU model (default cortex-a53)")
    p.add_argument("--smp", type=int, default=1, metavar="N",
                   help="cores (default 1; ipc_rtt_cross_core needs 2; under icount every core's "
                        "instructions advance the clock)")
    p.add_argument("--mem", default="512M", help="guest memory (default 512M)")
    p.add_argument("--suite", choices=bench.SUITES, default="default",
                   help="default: Petrel's own rows, the Linux system call rows, python3/sqlite3 and the boot "
                        "(about a minute under icount); apps: only the application benchmarks of the L4Linux "
                        "paper's Table IV (lame, madplay, cjpeg/djpeg, the TIFF tools, ghostscript, ispell, toast, "
                        "sox, flac, xz: Debian's programs on inputs the bench makes) on Linux and in both "
                        "placements, a few minutes; the default suite does not run them; net: iperf3's TCP "
                        "throughput between two QEMUs over the project's relay on 127.0.0.1, Petrel->Linux, "
                        "Linux->Petrel (each placement of Petrel's stack) and Linux->Linux, wall mode, "
                        "build/bench/net/; tcp: the Kernel Monitor paper's experiments, throughput against RTT "
                        "and each congestion module with 0.2 %% loss, Petrel against Linux, the senders' windows "
                        "from Petrel's monitor and Linux's tcp_probe, the monitor's cost, about 15 minutes a run "
                        "(wall mode, build/bench/net/tcp-*); k2: K2's rows (the mailbox's round trip, a DSM page fault taken "
                        "by each kernel) measured by the main kernel with the shadow kernel on the last core (--smp 2 "
                        "or more, default 2), build/bench/k2/ (default: default)")
    p.add_argument("--only", metavar="NAME", help="run one benchmark: " + ", ".join(bench.METRICS + bench.LX_METRICS +
                   bench.APP_METRICS + bench.BOOT_METRICS + list(bench.SUITE_APPS)) +
                   "; lx: every lx_ row; an app_ row boots the whole apps suite and keeps that row; "
                   f"{bench.PAR.row}: the parallel speed-up rows (--mode wall, --smp 2 or more), or one of them, "
                   f"{', '.join(bench.speedup_rows(bench.PAR, 'N'))}; {bench.SCALE.row}: the system call scaling "
                   f"rows (the same), or one of them, {', '.join(bench.speedup_rows(bench.SCALE, 'N'))}; with --suite "
                   "net, one pair: linux->linux, petrel->linux or linux->petrel; with --suite tcp, monitor_cost: the "
                   "monitor's cost alone (Petrel's user-placed stack sending with the tcp group off and recording, "
                   "at 0 and 10 ms, 6 runs each unless --runs, which of a pair runs first alternating); with --suite k2, "
                   "one of " + ", ".join(bench.K2_METRICS))
    p.add_argument("--runs", type=int, metavar="N",
                   help="boots per system (default 1 for icount, 5 for wall)")
    p.add_argument("--rtt", type=float, default=0.0, metavar="MS",
                   help="--suite net: the relay's round-trip delay in milliseconds (default 0)")
    p.add_argument("--loss", type=float, default=0.0, metavar="PCT",
                   help="--suite net: the relay's random loss in percent, each direction (default 0)")
    p.add_argument("--pcap", action="store_true",
                   help="--suite net: record each run's frames on both sides, their first 128 bytes, in "
                        "build/bench/net/<run>-client.pcap and -server.pcap (for tshark)")


# Adds the `tlb` subcommand.
def add_tlb(sub) -> None:
    p = sub.add_parser("tlb", help="the TLB budget of a system description",
                       description="Count the TLB entries every address space of a system needs at its page "
                                   "sizes, against the main TLB of the core (the hybrid kernel paper, 3.3). "
                                   "Writes build/tlb/<system>.md.")
    p.add_argument("--system", default="default", help="systems/<NAME>.toml (default: default)")
    p.add_argument("--cpu", choices=("cortex-a53", "cortex-a72"), default="cortex-a53",
                   help="the core whose TLB to compare with (default cortex-a53)")


# Adds the `profile` subcommand (petrel/insntrace.py).
def add_profile(sub) -> None:
    from petrel import bench
    p = sub.add_parser("profile", help="where one benchmark iteration's instructions go, by function",
                       description="Boot the benchmark image (written by ./petrel bench) in icount mode with "
                                   "QEMU's per-instruction log, running only METRIC, and attribute one iteration "
                                   "(from one run of ANCHOR, a function the loop calls once per iteration, to "
                                   "the next) to the kernel's and the bench program's functions. A Linux row "
                                   "(lx_*) boots lxbench --trace ROW on the Linux personality instead (--system), and "
                                   "only ANCHOR's calls inside ROW's own loop count, not those of the other rows "
                                   "of its group. "
                                   "Examples: ./petrel profile noop_kernel_service noop_ping; "
                                   "./petrel profile lx_sig_install sigaction --system linux-user")
    p.add_argument("metric", help="the benchmark: " + ", ".join(bench.METRICS + bench.LX_METRICS))
    p.add_argument("anchor", help="a function the benchmark loop calls once per iteration")
    p.add_argument("--system", default="linux-kernel", choices=["linux-kernel", "linux-user"],
                   help="for an lx_* row: the personality's placement (default linux-kernel)")
    p.add_argument("--listing", action="store_true", help="print every instruction of the iteration")
    p.add_argument("--log", metavar="FILE", help="QEMU's log (large; default build/bench/insntrace.log)")


# Adds the `config` subcommand.
def add_config(sub) -> None:
    p = sub.add_parser("config", help="show or change the kernel build options (Kconfig)",
                       description="The kernel's build options (kernel/Kconfig) live in build/.config, made from "
                                   "configs/defconfig. With no option: the interactive menuconfig. The next "
                                   "./petrel build uses the new values.")
    p.add_argument("--show", action="store_true", help="print every option with its value and range")
    p.add_argument("--set", nargs="+", metavar="NAME=VALUE", help="set options, e.g. --set HZ=250 MAX_CPUS=4")
    p.add_argument("--reset", action="store_true", help="go back to configs/defconfig")


# Adds the `fuzz` subcommand (petrel/fuzz.py).
def add_fuzz(sub) -> None:
    p = sub.add_parser("fuzz", help="fuzz the Linux personality on this machine (libFuzzer, ASan, UBSan)",
                       description="Build the Linux personality's sources for this machine with AddressSanitizer, "
                                   "UndefinedBehaviorSanitizer and libFuzzer against a test double of the service "
                                   "environment (tests/hostfuzz/), and drive them with system calls of several "
                                   "processes and threads for a while. New corpus entries go to build/fuzz/corpus, "
                                   "crashes to build/fuzz/crashes; a progress line each minute. Exits 1 if a crash "
                                   "was found, printing how to replay it. See docs/design/fuzzing.md.")
    p.add_argument("target", choices=("personality",), help="what to fuzz: personality (services/linux/)")
    p.add_argument("--minutes", type=float, default=10, metavar="N", help="how long to fuzz (default 10)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="fuzzing processes (libFuzzer -fork=N; default 1)")
    p.add_argument("--replay", metavar="FILE",
                   help="run one input (a crash) once, tracing each operation, instead of fuzzing")
    p.add_argument("-v", "--verbose", action="store_true", help="show the build and a progress line each second")


# Returns the argument parser of ./petrel.
def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="petrel", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (add_setup, add_build, add_run, add_test, add_bench, add_profile, add_config, add_tlb,
                add_fuzz, add_trace):
        add(sub)
    return parser


# `./petrel setup`.
def cmd_setup(args) -> int:
    if args.check:
        todo = envsetup.check()
        for item in todo:
            print(f"setup: missing {item}")
        if not todo:
            print("setup: nothing is missing")
        return 1 if todo else 0
    envsetup.ensure(quiet=False)
    return 0


# `./petrel build`.
def cmd_build(args) -> int:
    return build.build(kernel_test=args.kernel_test, jobs=args.jobs, verbose=args.verbose)


# `./petrel run`: checks the options, builds, then replaces this process with QEMU.
# --trace GROUPS: the kernel's trace= boot argument; the file to record to (None: none).
def run_trace(args):
    groups = [g for g in (args.trace or "").split(",") if g] + (["linux"] if args.strace else [])
    if not groups:
        return None
    args.append = (args.append + " trace=" + ",".join(dict.fromkeys(groups))).strip()
    out = Path(args.trace_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def cmd_run(args) -> int:
    if (args.trace or args.strace) and args.linux:
        print("run: --trace records Petrel's monitor, not the Linux kernel's (--linux)", file=sys.stderr)
        return 2
    trace_out = run_trace(args)
    if args.exec_cmd is not None or args.add or args.linux:
        return cmd_run_linux(args, trace_out)
    image = args.image or paths.system_image(args.system or "default")
    if args.apps and args.image:
        print("run: --apps goes without --image", file=sys.stderr)
        return 2
    typed = not sys.stdin.isatty()
    machine = run_machine(args, not typed)
    try:
        argv = with_screen(qemu.build_argv(paths.kernel_bin(), image, machine, args.append,
                                           interactive=not typed, gdb_port=args.gdb), machine)
        argv[0] = qemu.find_qemu()
    except (ValueError, qemu.QemuMissing) as err:
        print(f"run: {err}", file=sys.stderr)
        return 2
    status = build.build()
    if status:
        return status
    if args.apps:
        from petrel import debian, linuxrun
        try:
            image = linuxrun.prepare(args.system or "default", "", [], paths.REPO, debian.apps_ready())[1]
        except (ValueError, OSError, debian.DebianError) as err:
            print(f"run: {err}", file=sys.stderr)
            return 2
        argv[argv.index("-initrd") + 1] = str(image)
    if args.gdb is not None:
        elf = paths.rel(paths.kernel_elf())
        print(f"waiting for gdb on port {args.gdb}: gdb-multiarch {elf} -ex 'target remote :{args.gdb}'")
    if trace_out:
        return run_traced(argv, trace_out, typed, args.strace)
    if typed:
        return qemu.run_typed(argv, sys.stdin.buffer)
    print("run: console follows; Ctrl-A x quits", flush=True)
    os.execv(argv[0], argv)


# QEMU with the recorder watching it from the side.
def run_traced(argv: list, out: Path, typed: bool, strace: bool = False) -> int:
    import subprocess
    import tempfile
    from petrel import trace
    qmp = Path(tempfile.mkdtemp(prefix="petrel-qmp-")) / "qmp"
    argv = argv + trace.qemu_argv(str(qmp))
    rec = trace.Recorder(str(qmp), out, paths.kernel_elf(), on_events=trace.strace_printer() if strace else None)
    if not typed:
        print("run: console follows; Ctrl-A x quits", flush=True)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if typed else None)
    trace.watch(proc, rec)
    try:
        if typed:
            for chunk in iter(lambda: sys.stdin.buffer.read1(4096), b""):
                proc.stdin.write(chunk)
                proc.stdin.flush()
            while proc.poll() is None:              # (the end of the input: Ctrl-D, as run_typed types it)
                try:
                    proc.stdin.write(b"\x04")
                    proc.stdin.flush()
                except BrokenPipeError:
                    break
                time.sleep(0.5)
        status = proc.wait()
    except KeyboardInterrupt:
        proc.kill()
        status = proc.wait()
    rec.join()
    print(trace.summary(rec, out), flush=True)
    return status


# `./petrel run --exec/--add/--linux`: Linux programs, non-interactively.
def cmd_run_linux(args, trace_out=None) -> int:
    from petrel import linuxrun
    if args.image or args.gdb is not None:
        print("run: --exec, --add and --linux go without --image and --gdb", file=sys.stderr)
        return 2
    if args.linux and args.k2:
        print("run: --k2 boots Petrel's two kernels, not Debian's Linux (--linux)", file=sys.stderr)
        return 2
    machine = run_machine(args, False)
    try:
        qemu.check_machine(machine)
    except ValueError as err:
        print(f"run: {err}", file=sys.stderr)
        return 2
    status = build.build()
    if status:
        return status
    return linuxrun.main(args.system or "linux-user", args.exec_cmd or "", args.add, args.linux, machine,
                         with_apps=args.apps, append=args.append, trace_out=trace_out, strace=args.strace)


# `./petrel test`.
def cmd_test(args) -> int:
    return testrun.main(pattern=args.pattern, guest=not args.host_only, host=not args.guest_only,
                        jobs=args.jobs, list_only=args.list)


# `./petrel bench`.
def cmd_bench(args) -> int:
    if args.suite == "tcp":
        if args.rtt or args.loss or args.pcap:
            print("bench: --suite tcp sets its own RTTs and losses (no --rtt, --loss, --pcap)", file=sys.stderr)
            return 2
        return bench.main_tcp(args.mode, args.cpu, args.smp, args.only, args.runs, args.mem)
    if args.suite == "k2":
        if args.rtt or args.loss or args.pcap:
            print("bench: --rtt, --loss and --pcap are the relay's, for --suite net", file=sys.stderr)
            return 2
        return bench.main_k2(args.mode or "icount", args.cpu, args.smp, args.only, args.runs, args.mem)
    if args.suite == "net":
        return bench.main_net(args.mode, args.cpu, args.smp, args.only, args.runs, args.mem, args.rtt, args.loss,
                              pcap=args.pcap)
    if args.rtt or args.loss or args.pcap:
        print("bench: --rtt, --loss and --pcap are the relay's, for --suite net", file=sys.stderr)
        return 2
    return bench.main(args.mode or "icount", args.cpu, args.smp, args.only, args.runs, args.mem, suite=args.suite)


# `./petrel config`.
def cmd_config(args) -> int:
    from petrel import kconfig
    files = (paths.REPO / "kernel" / "Kconfig", paths.build_dir() / ".config", paths.REPO / "configs" / "defconfig")
    if args.reset:
        import shutil
        files[1].parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(files[2], files[1])
        print("config: back to configs/defconfig")
        return 0
    if args.set:
        problems = kconfig.set_values(*files, args.set)
        for p in problems:
            print(f"config: {p}", file=sys.stderr)
        return 1 if problems else 0
    if args.show:
        print(kconfig.show(*files))
        return 0
    return kconfig.menuconfig(*files)


# `./petrel tlb`.
def cmd_tlb(args) -> int:
    from petrel import tlb
    status = build.build()
    return status or tlb.main(args.system, args.cpu)


# `./petrel profile`: needs the image ./petrel bench writes.
def cmd_profile(args) -> int:
    from petrel import insntrace
    argv = [args.metric, args.anchor, "--system", args.system] + (["--listing"] if args.listing else []) + \
        (["--log", args.log] if args.log else [])
    return insntrace.main(argv)


# `./petrel fuzz`.
def cmd_fuzz(args) -> int:
    from petrel import fuzz
    if args.minutes <= 0 or args.jobs < 1:
        print("fuzz: --minutes and --jobs must be positive", file=sys.stderr)
        return 2
    return fuzz.main(args.target, args.minutes, args.jobs, args.replay, args.verbose)


# `./petrel trace FILE`.
def cmd_trace(args) -> int:
    from petrel import trace
    return trace.main(args)


COMMANDS = {"setup": cmd_setup, "build": cmd_build, "run": cmd_run, "test": cmd_test, "bench": cmd_bench,
            "profile": cmd_profile, "config": cmd_config, "tlb": cmd_tlb, "fuzz": cmd_fuzz, "trace": cmd_trace}


def interrupted(signum, frame):
    raise KeyboardInterrupt


# Entry point of ./petrel; returns the exit status.
def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    # Stopped by kill or a closed terminal, a command ends as on Ctrl-C:
    # what it started (QEMU in its own session) is stopped on the way out.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    try:
        # (the marker says this process is the re-executed one; taken out
        # of the environment so that a ./petrel it starts, which its
        # shebang runs with the system's python3, goes into .venv too)
        if args.command != "setup" and not os.environ.pop(envsetup.MARKER, None):
            envsetup.ensure(quiet=True)
            envsetup.reexec_in_venv(SCRIPT, argv)
        return COMMANDS[args.command](args)
    except envsetup.SetupError as err:
        print(f"setup: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
