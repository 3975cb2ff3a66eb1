"""`./petrel bench`: Petrel against Linux, side by side in the same QEMU.

Both systems boot on exactly the same machine (cpu, cores, memory, mode):
Petrel with the bench image (user/bench as the root task, user/benchpeer,
user/benchnull), Linux (Debian's arm64 kernel, see linuxbase.py) with an
initramfs whose /init is bench/linux/bench.c. Each prints BENCH lines
(bench/common/bench.h), which are collected into build/bench/results.json,
a report build/bench/report.md in the source papers' shape, and a bar
chart of the ratios, build/bench/ratios.png.

--mode icount runs QEMU with `-icount shift=0,align=off,sleep=off`: one
guest instruction is one nanosecond of guest time, so a figure is an
instruction count and repeats exactly. --mode wall runs plain TCG several
times and keeps the median, minimum and maximum.
"""
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from petrel import bootimage, build, cpio, linuxbase, paths, qemu

METRICS = [
    "null_syscall", "ipc_rtt_4b", "ipc_rtt_124b", "ipc_rtt_same_as", "ipc_rtt_cross_core",
    "notify_wake", "ctx_switch_2p", "page_fault", "map_unmap_4k", "thread_create_exit",
    "process_spawn_exit", "futex_wake", "mem_read_bw", "mem_copy_bw",
    "noop_function_call", "noop_kernel_service", "noop_user_service",
    "file_read_kernel", "file_read_user", "file_write_kernel", "file_write_user",
    "irq_latency_under_kservice",
]
# Measured on Petrel alone: the worst lateness of a timer wake-up of a
# priority-250 thread while a priority-100 thread on core 0 reads 1 MiB at a
# time through the file service in the kernel (system petrel), in user space
# (petrel-user), or runs a plain loop (petrel-loop), or nothing runs
# (petrel-idle). On one core the sleeper shares core 0; with --smp 2 it
# runs on core 1 (see docs/benchmarks.md on what icount does to that).
PETREL_ONLY = {"irq_latency_under_kservice"}
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


# Parses "BENCH metric system value iters [MB/s]" lines into {(metric, system): value}.
def parse(console: str) -> dict:
    found = {}
    for line in console.splitlines():
        parts = line.strip().split()
        if len(parts) >= 5 and parts[0] == "BENCH" and parts[1] in METRICS:
            try:
                found[(parts[1], parts[2])] = float(parts[3])
            except ValueError:
                continue
    return found


# Boots one system and streams its console; returns the BENCH figures.
def boot(argv: list, label: str, timeout: float, log: Path) -> dict:
    start = time.monotonic()
    lines = []
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("BENCH ") and not line.startswith("BENCH-"):
                print(f"  {label}: {line.strip()[6:]}", flush=True)
            if time.monotonic() - start > timeout:
                proc.kill()
                raise BenchError(f"{label}: no end after {timeout:.0f}s")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.write_text("".join(lines))
    console = "".join(lines)
    if f"BENCH-END" not in console:
        raise BenchError(f"{label}: the benchmarks did not finish (console in {paths.rel(log)})")
    return parse(console)


def petrel_argv(image: Path, machine: qemu.Machine, only: str) -> list:
    append = f"only={only}" if only else ""
    return qemu.build_argv(paths.kernel_bin(), image, machine, append)


def linux_argv(initrd: Path, machine: qemu.Machine, repo: Path, only: str = "") -> list:
    append = "console=ttyAMA0 quiet loglevel=1 rdinit=/init" + (f" only={only}" if only else "")
    return qemu.build_argv(linuxbase.image(repo), initrd, machine, append)


# Runs both systems `runs` times; returns rows for results.json. On one
# core, the cross-core round trip gets its own pair of two-core boots.
def measure(machine: qemu.Machine, runs: int, only: str, repo: Path = paths.REPO) -> list:
    only = only or ""                   # the command line's "not given" is None
    image, initrd = prepare(repo)
    samples = {}
    mode = "icount" if machine.icount else "wall"
    plan = [(machine, only)]
    if machine.smp == 1 and only in ("", "ipc_rtt_cross_core"):
        two = qemu.Machine(machine.cpu, machine.gic, 2, machine.mem, machine.icount)
        plan = ([(machine, only)] if not only else []) + [(two, "ipc_rtt_cross_core")]
    for m, what in plan:
        collect(m, what, runs, image, initrd, samples, repo)
    rows = []
    for (metric, system), values in sorted(samples.items()):
        unit = "MB/s" if metric in BANDWIDTH else ("insns" if mode == "icount" else "ns")
        rows.append({"metric": metric, "system": system, "mode": mode, "unit": unit,
                     "median": statistics.median(values), "min": min(values), "max": max(values),
                     "runs": len(values)})
    return rows


# Boots Petrel and Linux on machine m `runs` times each, adding to samples.
def collect(machine: qemu.Machine, only: str, runs: int, image: Path, initrd: Path, samples: dict,
            repo: Path) -> None:
    mode = "icount" if machine.icount else "wall"
    boots = [("petrel", petrel_argv(image, machine, only), 600)]
    if only not in PETREL_ONLY:
        boots.append(("linux", linux_argv(initrd, machine, repo, only), 1500))
    for system, argv, timeout in boots:
        for run in range(runs):
            label = f"{system} {run + 1}/{runs}"
            print(f"bench: booting {system} ({mode}, {machine.cpu}, {machine.smp} core"
                  f"{'s' if machine.smp > 1 else ''}), run {run + 1} of {runs}", flush=True)
            log = bench_dir(repo) / f"{system}-{mode}-smp{machine.smp}-{run + 1}.log"
            for key, value in boot(argv, label, timeout, log).items():
                if not only or key[0] == only:
                    samples.setdefault(key, []).append(value)


def value(rows: list, metric: str, system: str):
    for r in rows:
        if r["metric"] == metric and r["system"] == system:
            return r["median"]
    return None


# Ratio Linux/Petrel for latencies (how many times cheaper Petrel is),
# Petrel/Linux for bandwidth (how fast Petrel is relative to Linux).
def ratio(metric: str, petrel, other):
    if petrel is None or other is None or petrel == 0 or other == 0:
        return None
    return petrel / other if metric in BANDWIDTH else other / petrel


def fmt(v) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


# The report: one row per metric, Petrel, every Linux variant, the best
# (smallest) ratio against Linux, and the papers' figures.
def report(rows: list, machine: qemu.Machine, command: str) -> str:
    mode = "icount" if machine.icount else "wall"
    unit = "guest instructions" if mode == "icount" else "nanoseconds"
    lines = [f"# Petrel vs Linux, side by side\n\n",
             f"`{command}` on QEMU virt, {machine.cpu}, {machine.smp} core(s), {machine.mem}, mode {mode}; "
             f"Linux {linuxbase.version()} (Debian). Latencies in {unit} per operation (lower is better), "
             f"bandwidth in MB/s of guest time. Ratio: Linux / Petrel for latencies (how many times "
             f"cheaper Petrel is), Petrel / Linux for bandwidth."
             + (" ipc_rtt_cross_core is measured on a second pair of two-core boots." if machine.smp == 1 else "")
             + "\n\n",
             "| metric | Petrel | " + " | ".join(LINUX_SYSTEMS) + " | ratio vs each | source papers |\n",
             "|---|---:|" + "---:|" * len(LINUX_SYSTEMS) + "---|---|\n"]
    for metric in METRICS:
        p = value(rows, metric, "petrel")
        others = [value(rows, metric, s) for s in LINUX_SYSTEMS]
        if metric in PETREL_ONLY or (p is None and not any(o is not None for o in others)):
            continue
        ratios = [f"{s.removeprefix('linux-') if s != 'linux' else 'linux'} {ratio(metric, p, o):.1f}x"
                  for s, o in zip(LINUX_SYSTEMS, others) if ratio(metric, p, o) is not None]
        lines.append(f"| {metric} | {fmt(p)} | " + " | ".join(fmt(o) for o in others) +
                     f" | {', '.join(ratios) or '–'} | {PAPER.get(metric, '')} |\n")
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
        ("mem_read_bw within 3% of Linux",
         abs((ratio("mem_read_bw", value(rows, "mem_read_bw", "petrel"), value(rows, "mem_read_bw", "linux")) or 0) - 1) <= 0.03),
    ]:
        out.append((name, ok))
    return out


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
    if not values:
        return False
    fig, ax = plt.subplots(figsize=(max(8, len(values) * 0.45), 5))
    ax.bar(range(len(values)), values, color=["#2b7bba" if v >= 1 else "#d6604d" for v in values])
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_ylabel("Linux / Petrel (latency), Petrel / Linux (bandwidth)")
    ax.set_title("Petrel vs Linux in the same QEMU (above 1: Petrel better)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(mode: str, cpu: str, smp: int, only: str, runs, mem: str = "512M", repo: Path = paths.REPO) -> int:
    if only and only not in METRICS:
        print(f"bench: unknown benchmark {only!r}; choose from {', '.join(METRICS)}", file=sys.stderr)
        return 2
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
    try:
        rows = measure(machine, runs, only, repo)
    except BenchError as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    out = bench_dir(repo)
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = report(rows, machine, command)
    checks = targets(rows) if machine.icount and not only else []
    if checks:
        text += "\n## Targets\n\n" + "".join(f"- {'met' if ok else 'NOT met'}: {name}\n" for name, ok in checks)
    (out / "report.md").write_text(text)
    drew = chart(rows, out / "ratios.png")
    print()
    print(text)
    print(f"bench: wrote {paths.rel(out / 'results.json')}, {paths.rel(out / 'report.md')}"
          + (f", {paths.rel(out / 'ratios.png')}" if drew else ""))
    return 0
