"""`./petrel bench --suite tcp`: the Kernel Monitor paper's experiments, Petrel against Linux.

The paper measured TCP on Android against RTT (its Fig. 7: the window
saturates as the RTT grows) and compared Reno and CUBIC with 0.2 % loss
(Figs. 8-13), reading the congestion window from its monitor. Here the
same runs go over the project's own link (netrelay.py, on 127.0.0.1), with
Debian's iperf3 as in the net suite (netbench.py), each side Debian's
Linux kernel or Petrel:

- throughput against RTT (0, 10, 50, 100, 200 ms) with CUBIC, for
  linux->linux, petrel->linux (the stack in user space and in the kernel)
  and linux->petrel;
- each congestion module (reno, cubic, westwood) with 0 and 0.2 % loss at
  10 ms, for linux->linux and petrel->linux; in the lossy runs the sender's
  window is recorded on both: Petrel's by its monitor (the tcp group,
  recorded from QEMU's side), Linux's by its tcp:tcp_probe tracepoint
  (tracefs in the Linux guest), and plotted side by side;
- petrel->linux with the monitor recording and without (what the monitor
  costs the traced transfer).

Rows go to build/bench/net/results.json (metric tcp_throughput_mbps, with
system, placement, rtt_ms, loss_pct, cc, monitor and the median of --runs;
the net suite's rows stay), the report to build/bench/net/tcp-report.md,
the figures to build/bench/net/tcp-*.png, the traces beside them.
"""
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from petrel import debian, linuxbase, netbench, paths, qemu, rootfs, systems, trace
from petrel.netbench import CLIENT, SERVER, TIMEOUT, TRIES, NetBenchError
from petrel.netrelay import Impairments, Relay

RTTS = (0, 10, 50, 100, 200)
CCS = ("reno", "cubic", "westwood")
LOSSES = (0.0, 0.2)
CC_RTT = 10
SECONDS = 10
METRIC = "tcp_throughput_mbps"
TARGET = 0.95                   # Petrel->Linux against Linux->Linux at every RTT, with CUBIC
WESTWOOD_KEEPS = 0.90           # Westwood+ with 0.2 % loss against its loss-free throughput, at 10 ms
MONITOR_COST = 0.02             # the monitor's cost to the traced transfer
TRACEFS = "/tmp/tracefs"
PROBE_RE = re.compile(r"^PROBE ([0-9.]+) (\d+) (\d+) (\d+)$", re.M)


@dataclass(frozen=True)
class Run(netbench.Pair):
    """A pair (its system and placement as the net suite's), over a link of
    this RTT and loss, with this congestion module."""
    rtt_ms: float = 0.0
    loss_pct: float = 0.0
    cc: str = "cubic"
    monitor: bool = False       # Petrel's side records its tcp group (the client's, when it is Petrel)
    probe: bool = False         # Linux's client records tcp_probe
    record: bool = True         # with monitor: the host copies the rings into a trace file

    @property
    def stem(self) -> str:
        return (f"tcp-{self.client}-to-{self.server}-rtt{self.rtt_ms:g}-loss{self.loss_pct:g}-{self.cc}"
                + ("-monitor" if self.monitor else "") + ("" if self.record or not self.monitor else "-unrecorded"))


def plan() -> list:
    runs = []
    for rtt in RTTS:
        for client, server in (("linux", "linux"), ("user", "linux"), ("kernel", "linux"), ("linux", "user")):
            runs.append(Run(client, server, rtt, 0.0, "cubic"))
    for cc in CCS:
        for loss in LOSSES:
            for client in ("linux", "user"):
                runs.append(Run(client, "linux", CC_RTT, loss, cc, monitor=client != "linux" and loss > 0,
                                probe=client == "linux" and loss > 0))
    runs.append(Run("user", "linux", 0, 0.0, "cubic", monitor=True))        # against the first block's
    return runs


# The monitor's cost alone (--only monitor_cost): Petrel's user-placed
# stack sending, at 0 and 10 ms, with the tcp group off, on and recorded
# from the host, and on but not recorded (what the guest pays, apart from
# the host's copying). main alternates the order of each RTT's runs, as a
# run's place in the sequence moves its throughput by more than the target.
MONITOR_RTTS = (0, 10)


def plan_monitor() -> list:
    return [Run("user", "linux", rtt, 0.0, "cubic", monitor=m, record=rec)
            for rtt in MONITOR_RTTS for m, rec in ((False, True), (True, True), (True, False))]


# /etc/lxrun of a side.
def commands(role: str, linux: bool, cc: str, probe: bool) -> list:
    addr = SERVER if role == "server" else CLIENT
    lines = [f"lxnetpeer role=up addr={addr}"] if linux else []
    if role == "server":
        return lines + ["iperf3 -s -1 -f m"]
    if linux and cc == "westwood":
        lines.append("busybox insmod /tcp_westwood.ko")
    if probe:
        t = TRACEFS
        lines.append(f"sh -c 'mkdir -p {t}; mount -t tracefs nodev {t} && echo 32768 > {t}/buffer_size_kb && "
                     f"echo 1 > {t}/events/tcp/tcp_probe/enable && echo probing'")
    lines.append(f"sh -c 'i=0; while [ $i -lt {TRIES} ]; do iperf3 -c {SERVER} -t {SECONDS} -f m -C {cc} "
                 f"&& exit 0; i=$((i+1)); sleep 1; done; exit 1'")
    if probe:
        lines.append("sh /probe.sh")            # (PROBE_SCRIPT: its quotes are more than lxrun's words take)
    return lines


# Linux's window, in segments, at each change of the data the sender's
# tcp_probe events carry: "PROBE time source-port cwnd ssthresh".
PROBE_SCRIPT = (f"echo 0 > {TRACEFS}/tracing_on\n"
                f"sed -n 's/.* \\([0-9.]*\\): tcp_probe:.*src=[0-9.]*:\\([0-9]*\\) dest={SERVER}:5201 "
                f".*snd_cwnd=\\([0-9]*\\) ssthresh=\\([0-9]*\\).*/PROBE \\1 \\2 \\3 \\4/p' {TRACEFS}/trace | "
                "awk '$3 != p || $4 != c || $5 != s { print; p = $3; c = $4; s = $5 }'\n")


class Archives:
    """The root archives, made as runs need them."""

    def __init__(self, repo: Path):
        self.repo = repo
        fetched = set(debian.apps_ready(repo))
        self.packages = [p for p in debian.walk(debian.NET_APPS, debian.NET_NOT_NEEDED) if p in fetched]
        self.modules = [(linuxbase.net_module(m, repo), f"/{m}.ko")
                        for m in {**linuxbase.NET_MODULES, **linuxbase.CC_MODULES}]
        self.made = {}

    def get(self, role: str, linux: bool, cc: str, probe: bool) -> Path:
        key = (role, linux, cc if role == "client" else "", probe)
        if key not in self.made:
            path = netbench.out_dir(self.repo) / f"tcp-{role}-{'linux' if linux else 'petrel'}-{key[2] or 'any'}" \
                f"{'-probe' if probe else ''}.cpio"
            run = "".join(c + "\n" for c in commands(role, linux, cc, probe))
            adds = list(self.modules) if linux else []
            if probe:
                script = netbench.out_dir(self.repo) / "tcp-probe.sh"
                script.write_text(PROBE_SCRIPT)
                adds.append((script, "/probe.sh"))
            path.write_bytes(rootfs.build(run, adds, self.repo, self.packages))
            self.made[key] = path
        return self.made[key]


# One run: (Mbit/s, the client's console, its recording or None).
def run_one(r: Run, made: Archives, machine: qemu.Machine, n: int, repo: Path) -> tuple:
    out = netbench.out_dir(repo)
    imp = Impairments(rtt_ms=r.rtt_ms, loss=r.loss_pct / 100, seed=7 + n)
    consoles = {}
    traced = "client" if r.client != "linux" else "server"        # (Petrel's side)
    recorded = out / f"{r.stem}-{n}.ptrace" if r.monitor and r.record else None
    with Relay(imp) as relay:
        def boot(side_name, role, who):
            m = qemu.Machine(machine.cpu, machine.gic, machine.smp, machine.mem, False, net=relay.net_for(side_name))
            archive = made.get(role, who == "linux", r.cc, r.probe and role == "client")
            rec = None
            append = "trace=tcp" if r.monitor and role == traced else ""
            argv = netbench.side_argv(who, role, archive, m, repo, append, "tcp-")   # (each side's -C chooses)
            if recorded and role == traced:
                qmp = str(Path(tempfile.mkdtemp(prefix="petrel-qmp-")) / "qmp")
                argv += trace.qemu_argv(qmp)
                rec = trace.Recorder(qmp, recorded, paths.kernel_elf(repo=repo))
            consoles[role] = qemu.run(argv, TIMEOUT + r.rtt_ms, on_start=(lambda p: trace.watch(p, rec)) if rec else None)
            if rec:
                rec.join()
                if rec.error:
                    consoles[role + "-trace"] = rec.error
        server = threading.Thread(target=boot, args=("b", "server", r.server))
        server.start()
        time.sleep(2)
        client = threading.Thread(target=boot, args=("a", "client", r.client))
        client.start()
        client.join()
        server.join()
    for role in ("client", "server"):
        (out / f"{r.stem}-{n}-{role}.log").write_text(consoles[role][1])
    mbps = netbench.received_mbps(consoles["client"][1])
    if mbps is None:
        raise NetBenchError(f"{r.stem}: iperf3 gave no result (consoles in {paths.rel(out)}/{r.stem}-{n}-*.log)")
    for role in ("client", "server"):
        if role + "-trace" in consoles:
            raise NetBenchError(f"{r.stem}: recording Petrel's monitor failed: {consoles[role + '-trace']}")
    return mbps, consoles["client"][1], recorded


# Linux's window from tcp_probe lines: [(seconds, cwnd, ssthresh)] of the
# data connection (the source port with the most lines; iperf3's control
# connection goes to the same port), in segments, time from its first.
def linux_window(console: str) -> list:
    rows = [(float(t), int(port), int(c), int(s)) for t, port, c, s in PROBE_RE.findall(console)]
    if not rows:
        return []
    counts = {}
    for _, port, _, _ in rows:
        counts[port] = counts.get(port, 0) + 1
    data = max(counts, key=counts.get)
    mine = [(t, c, s) for t, port, c, s in rows if port == data]
    t0 = mine[0][0]
    return [(t - t0, c, s) for t, c, s in mine]


# Petrel's window from its recording, in segments of its MSS: [(seconds,
# cwnd, ssthresh or None)] of the connection that moved the most bytes.
def petrel_window(path: Path) -> list:
    tab = trace.table()
    t = trace.load(path)
    w = trace.windows(t, tab, trace.select(t, tab, {"tcp"}))
    if not w:
        return []
    conn = max(w, key=lambda k: len(w[k][0]))
    ts, cw, ss = w[conn]
    mss = max(1, cw[0] // 10)                   # RFC 6928's initial window: ten segments
    return [(x - ts[0], c / mss, None if s is None else s / mss) for x, c, s in zip(ts, cw, ss)]


def plot_windows(pairs: dict, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(pairs), 2, figsize=(11, 2.6 * len(pairs)), squeeze=False)
    for row, (cc, (petrel, linux)) in enumerate(pairs.items()):
        for col, (who, pts) in enumerate((("Petrel (its monitor)", petrel), ("Linux (tcp_probe)", linux))):
            ax = axes[row, col]
            if pts:
                ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", label="cwnd")
                ss = [(p[0], p[2]) for p in pts if p[2] is not None and p[2] < 1e6]
                if ss:
                    ax.step([p[0] for p in ss], [p[1] for p in ss], where="post", linestyle="--", label="ssthresh")
                ax.legend(loc="upper right", fontsize=7)
            ax.set_title(f"{who}, {cc}, {CC_RTT} ms, 0.2 % loss", fontsize=9)
            ax.set_ylabel("segments")
            ax.grid(alpha=0.3)
    for col in range(2):
        axes[-1, col].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def plot_rtt(rows: list, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, pick in (("linux->linux", lambda r: r["system"] == "linux->linux"),
                        ("petrel->linux (user stack)", lambda r: r["system"] == "petrel->linux" and r["placement"] == "user"),
                        ("petrel->linux (kernel stack)", lambda r: r["system"] == "petrel->linux" and r["placement"] == "kernel"),
                        ("linux->petrel (user stack)", lambda r: r["system"] == "linux->petrel")):
        pts = sorted((r["rtt_ms"], r["median"]) for r in rows if pick(r) and r["loss_pct"] == 0 and r["cc"] == "cubic"
                     and not r["monitor"])
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("Mbit/s")
    ax.set_title("iperf3 throughput against RTT (CUBIC)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def row_of(r: Run, values: list) -> dict:
    return {"metric": METRIC, "suite": "tcp", "system": r.system, "placement": r.placement, "rtt_ms": r.rtt_ms,
            "loss_pct": r.loss_pct, "cc": r.cc,
            "monitor": ("on" if r.record else "on, not recorded") if r.monitor else "off", "seconds": SECONDS,
            "median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values),
            "mode": "wall"}


# What tells a row of results.json from another of the suite.
def key(row: dict) -> tuple:
    return tuple(row.get(k) for k in ("system", "placement", "rtt_ms", "loss_pct", "cc", "monitor"))


def find(rows, **want):
    return next((r for r in rows if all(r.get(k) == v for k, v in want.items())), None)


def report(rows: list, command: str, machine: qemu.Machine) -> str:
    out = [f"# The Kernel Monitor paper's experiments (wall mode)\n\n`{command}`: iperf3, {SECONDS} s a run, over "
           f"the relay, {machine.cpu}, {machine.smp} core(s) a QEMU; median of {rows[0]['runs']} run(s).\n\n"
           "## Throughput against RTT (the paper's Fig. 7), CUBIC, no loss\n\n"
           "| RTT (ms) | linux->linux | petrel->linux (user) | petrel->linux (kernel) | linux->petrel (user) | "
           "petrel->linux / linux->linux |\n|---:|---:|---:|---:|---:|---|\n"]
    verdicts = []
    for rtt in RTTS:
        base = find(rows, system="linux->linux", rtt_ms=rtt, loss_pct=0.0, cc="cubic", monitor="off")
        cells = [find(rows, system=s, placement=p, rtt_ms=rtt, loss_pct=0.0, cc="cubic", monitor="off")
                 for s, p in (("petrel->linux", "user"), ("petrel->linux", "kernel"), ("linux->petrel", "user"))]
        ratios = [f"{c['median'] / base['median']:.2f} ({c['placement']})" for c in cells[:2] if c and base]
        out.append(f"| {rtt} | {base['median']:.0f} | " if base else f"| {rtt} | - | ")
        out.append(" | ".join(f"{c['median']:.0f}" if c else "-" for c in cells) + f" | {', '.join(ratios)} |\n")
        for c in cells[:2]:
            if c and base:
                verdicts.append((f"petrel->linux ({c['placement']} stack) >= {TARGET:.0%} of linux->linux at "
                                 f"{rtt} ms", c["median"] >= TARGET * base["median"]))
    out.append("\n## Each congestion module with and without 0.2 % loss, "
               f"{CC_RTT} ms RTT (the paper's Fig. 8)\n\n| cc | linux->linux 0 % | linux->linux 0.2 % | "
               "petrel->linux 0 % | petrel->linux 0.2 % | Petrel keeps |\n|---|---:|---:|---:|---:|---:|\n")
    for cc in CCS:
        cells = [find(rows, system=s, rtt_ms=CC_RTT, loss_pct=loss, cc=cc)
                 for s in ("linux->linux", "petrel->linux") for loss in LOSSES]
        keep = f"{cells[3]['median'] / cells[2]['median']:.0%}" if cells[2] and cells[3] else "-"
        out.append(f"| {cc} | " + " | ".join(f"{c['median']:.0f}" if c else "-" for c in cells) + f" | {keep} |\n")
        if cc == "westwood" and cells[2] and cells[3]:
            verdicts.append((f"Westwood+ keeps >= {WESTWOOD_KEEPS:.0%} of its loss-free throughput with 0.2 % loss",
                             cells[3]["median"] >= WESTWOOD_KEEPS * cells[2]["median"]))
    for rtt in MONITOR_RTTS:
        on, off, quiet = (find(rows, system="petrel->linux", placement="user", rtt_ms=rtt, loss_pct=0.0, cc="cubic",
                               monitor=m) for m in ("on", "off", "on, not recorded"))
        if not (on and off):
            continue
        if rtt == MONITOR_RTTS[0]:
            out.append("\n## The monitor's cost\n\n")
        out.append(f"petrel->linux (user stack), {rtt} ms: {off['median']:.0f} Mbit/s without the monitor, "
                   f"{on['median']:.0f} with its tcp group recording ({on['median'] / off['median']:.1%}; "
                   f"{on['runs']} and {off['runs']} runs)"
                   + (f", {quiet['median']:.0f} with it on but not recorded from the host "
                      f"({quiet['median'] / off['median']:.1%})" if quiet else "") + ".\n\n")
        if rtt == 0:
            verdicts.append((f"the monitor costs <= {MONITOR_COST:.0%} of the traced transfer's throughput",
                             on["median"] >= (1 - MONITOR_COST) * off["median"]))
    out.append("\n## Targets\n\n" + "".join(f"- {'met' if ok else 'NOT met'}: {name}\n" for name, ok in verdicts))
    out.append("\nFigures: tcp-rtt.png (throughput against RTT), tcp-cwnd.png (the sender's window with 0.2 % loss: "
               "Petrel's from its monitor, Linux's from tcp_probe).\n")
    return "".join(out)


def main(machine: qemu.Machine, runs: int, repo: Path = paths.REPO, only_runs: list = None,
         alternate: bool = False) -> int:
    if not linuxbase.present(repo):
        print("bench: the Linux baseline is missing: run ./petrel setup", file=sys.stderr)
        return 1
    out = netbench.out_dir(repo)
    out.mkdir(parents=True, exist_ok=True)
    todo = only_runs or plan()
    samples = {r: [] for r in todo}
    windows = {}
    try:
        print("bench: packing iperf3's root archives", flush=True)
        made = Archives(repo)
        for n in range(runs):
            for i, r in enumerate(todo[::-1] if alternate and n % 2 else todo):
                print(f"bench: [{i + 1}/{len(todo)}] {r.stem}, run {n + 1} of {runs}", flush=True)
                mbps, console, recorded = run_one(r, made, machine, n + 1, repo)
                print(f"  {mbps:g} Mbit/s", flush=True)
                samples[r].append(mbps)
                if n == 0 and r.loss_pct > 0 and r.client == "linux" and r.probe:
                    windows.setdefault(r.cc, [[], []])[1] = linux_window(console)
                if n == 0 and recorded and r.client != "linux" and r.loss_pct > 0:
                    windows.setdefault(r.cc, [[], []])[0] = petrel_window(recorded)
    except (NetBenchError, debian.DebianError, systems.SystemConfigError, ValueError, trace.TraceError) as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    rows = [row_of(r, v) for r, v in samples.items()]
    results = out / "results.json"
    kept = []
    if results.exists():
        try:
            mine = {key(row) for row in rows}
            kept = [row for row in json.loads(results.read_text())
                    if row.get("suite") != "tcp" or (only_runs and key(row) not in mine)]
        except ValueError:
            kept = []
    results.write_text(json.dumps(kept + rows, indent=1) + "\n")
    command = "./petrel bench " + " ".join(sys.argv[2:])
    text = report(rows, command, machine)
    if only_runs:                               # (part of the suite: the whole suite's report and plots stay)
        (out / "tcp-part-report.md").write_text(text)
        print()
        print(text)
        print(f"bench: wrote {paths.rel(results)}, {paths.rel(out / 'tcp-part-report.md')}")
        return 0
    (out / "tcp-report.md").write_text(text)
    plot_rtt(rows, out / "tcp-rtt.png")
    if windows:
        plot_windows({cc: tuple(v) for cc, v in windows.items() if cc != "any"}, out / "tcp-cwnd.png")
    print()
    print(text)
    print(f"bench: wrote {paths.rel(results)}, {paths.rel(out / 'tcp-report.md')}, tcp-rtt.png, tcp-cwnd.png")
    return 0
