"""Where the instructions of one benchmark iteration go, function by function.

    ./petrel profile noop_kernel_service noop_ping

boots the benchmark image (build/bench/petrel-bench.pbi, written by
`./petrel bench`) with the bench's own QEMU command line in icount mode,
running only METRIC, plus `-singlestep -d exec,nochain -D LOG`: QEMU then
logs every guest instruction's PC. Each PC is named by the nearest symbol
at or below it (`llvm-nm -n` of the kernel and of the bench program), and
one iteration (from one executed instance of ANCHOR, a function the loop
calls once per iteration, to the next) in the middle of the run is printed
per function, in the order the functions first run, with its total.
`--listing` adds every instruction with its disassembly. The figures in
docs/design/ipc-fastpath.md come from this command.

A Linux row (lx_*) boots `lxbench --trace ROW` (the group of rows ROW is
in, five times each) on the Linux personality of `--system`
(linux-kernel or linux-user) instead, and names the PCs of the kernel,
lxbench and, in user space, the personality:

    ./petrel profile lx_sig_install sigaction --system linux-kernel
"""
import argparse
import dataclasses
import bisect
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from petrel import bench, paths, qemu

TRACE_FLAGS = ["-singlestep", "-d", "exec,nochain"]
_EXEC = re.compile(r"Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")


# The PCs of a QEMU `-d exec` log, in execution order.
def pcs_of(lines) -> list:
    return [int(m.group(1), 16) for m in map(_EXEC.search, lines) if m]


# The function symbols of an ELF file: sorted (address, name) pairs.
def symbols(elf: Path) -> list:
    out = subprocess.run(["llvm-nm", "-n", str(elf)], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    return sorted(syms)


# One iteration of pcs: from the middle hit of `anchor`'s address to the
# next one. Returns [(function, instructions)] in order of first execution
# and the PCs of the iteration. Where the trace runs the traced row's loop
# between hits of lxbench_traced_begin and lxbench_traced_end (lxbench
# --trace ROW), only the anchor's hits between them count: the other rows
# of ROW's group may call the anchor too.
def attribute(pcs: list, syms: list, anchor: str) -> tuple:
    starts = [a for a, name in syms if name == anchor]
    if not starts:
        raise ValueError(f"no symbol {anchor!r}")
    marks = dict((name, a) for a, name in syms if name in ("lxbench_traced_begin", "lxbench_traced_end"))
    lo, hi = 0, len(pcs)
    if len(marks) == 2:
        begin = next((i for i, pc in enumerate(pcs) if pc == marks["lxbench_traced_begin"]), None)
        end = next((i for i, pc in enumerate(pcs) if pc == marks["lxbench_traced_end"] and i > (begin or 0)), None)
        if begin is not None and end is not None:
            lo, hi = begin, end
    hits = [i for i in range(lo, hi) if pcs[i] == starts[0]]
    if len(hits) < 2:
        raise ValueError(f"{anchor} ran {len(hits)} times: no whole iteration")
    mid = len(hits) // 2
    window = pcs[hits[mid - 1]:hits[mid]]
    counts = Counter(name_of(pc, syms) for pc in window)
    return list(counts.items()), window


# The function holding pc: the nearest symbol at or below it.
def name_of(pc: int, syms: list) -> str:
    i = bisect.bisect_right(syms, (pc, "\U0010ffff")) - 1
    return syms[i][1] if i >= 0 else "?"


def _disassembly(elfs) -> dict:
    text = {}
    for elf in elfs:
        out = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(elf)],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
            if m:
                text[int(m.group(1), 16)] = m.group(2)
    return text


# The QEMU command line that runs `lxbench --trace ROW` on the Linux
# personality of `system` (an image of its own in build/bench/), and the
# ELF files whose symbols name the PCs.
def lx_trace(row: str, system: str, machine) -> tuple:
    from petrel import oracle, rootfs, systems
    out = bench.bench_dir()
    out.mkdir(parents=True, exist_ok=True)
    archive = out / "lx-trace-rootfs.cpio"
    archive.write_bytes(rootfs.build(f"lxbench --trace {row}\n", (), paths.REPO))
    entries = systems.read_entries(systems.load_system(paths.REPO / "systems" / f"{system}.toml", paths.REPO),
                                   paths.REPO)
    image = oracle.write_image(out / f"lx-trace-{system}.pbi", entries, archive)
    elfs = [paths.kernel_elf(), paths.build_dir() / "linux" / "bin" / "lxbench"]
    if system == "linux-user":
        elfs.append(paths.user_elf("svc-linux"))
    if row in bench.LX_FS:                      # (the file system rows: a fresh disk, as the bench gives them)
        disk = out / "lx-trace-disk.img"
        bench.fresh_disk(disk, bench.FS_DISK)
        machine = dataclasses.replace(machine, disk=str(disk))
    return qemu.build_argv(paths.kernel_bin(), image, machine, ""), elfs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="petrel.insntrace", description=__doc__.splitlines()[0])
    p.add_argument("metric", help="the benchmark to run: " + ", ".join(bench.METRICS + bench.LX_METRICS))
    p.add_argument("anchor", help="a function the benchmark loop calls once per iteration")
    p.add_argument("--system", default="linux-kernel", choices=["linux-kernel", "linux-user"],
                   help="for an lx_* row: the system whose personality runs lxbench")
    p.add_argument("--log", type=Path, default=None,
                   help="QEMU's log (large; default build/bench/insntrace.log)")
    p.add_argument("--listing", action="store_true", help="print every instruction of the iteration")
    args = p.parse_args(argv)
    machine = qemu.Machine("cortex-a53", 2, 1, "512M", True)
    args.log = args.log or bench.bench_dir() / "insntrace.log"
    if args.metric in bench.LX_METRICS:
        argv, elfs = lx_trace(args.metric, args.system, machine)
    else:
        image = bench.bench_dir() / "petrel-bench.pbi"
        elfs = [paths.kernel_elf(), paths.user_elf("bench")]
        if args.metric not in bench.METRICS or not image.exists():
            print(f"insntrace: needs a benchmark name and {paths.rel(image)} (run ./petrel bench first)",
                  file=sys.stderr)
            return 2
        argv = bench.petrel_argv(image, machine, args.metric)
    subprocess.run(argv + TRACE_FLAGS + ["-D", str(args.log)], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, timeout=1200, check=True)
    with open(args.log) as f:
        pcs = pcs_of(f)
    syms = sorted(s for elf in elfs for s in symbols(elf))
    try:
        parts, window = attribute(pcs, syms, args.anchor)
    except ValueError as err:
        print(f"insntrace: {err}", file=sys.stderr)
        return 1
    for name, n in parts:
        print(f"{n:6d}  {name}")
    print(f"{len(window):6d}  total")
    if args.listing:
        text = _disassembly(elfs)
        for pc in window:
            print(f"{pc:16x}  {name_of(pc, syms):24s}  {text.get(pc, '?')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
