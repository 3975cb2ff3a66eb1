"""`./petrel bench --suite net`: TCP throughput over the project's own link.

Debian's iperf3 runs between two QEMUs joined by the relay of netrelay.py
(on 127.0.0.1, no delay or loss unless --rtt and --loss ask for them): a
server (`iperf3 -s -1`, at 10.9.0.1) and a client (`iperf3 -c 10.9.0.1 -t
SECONDS`, at 10.9.0.2) that sends to it. Each side is either

- Linux: Debian's kernel (the bench's), the root archive as initramfs,
  tests/linux/init.c running /etc/lxrun, whose first command
  (`lxnetpeer role=up`) loads the virtio NIC's modules and sets eth0's
  address; or
- Petrel: the Linux personality in user space with Petrel's TCP/IP stack
  in user space (systems/linux-user.toml) or in the kernel
  (linux-user-knet.toml), netcfg giving the interface its static address;

with CUBIC, Linux's default, as the congestion control on both. The pairs:
linux->linux, petrel->linux and linux->petrel (those two in each placement
of Petrel's stack). A run boots the server, then the client, which tries
to connect once a second until the server listens; the figure is what
iperf3's server received (its client's "receiver" line, Mbit/s). Each
pair runs --runs times, the pairs taking turns (a slow moment of the
host's falls on all of them alike); the rows (metric tcp_throughput_mbps) go to
build/bench/net/results.json with the median, minimum and maximum, and a
report with the ratios to Linux->Linux to build/bench/net/report.md.
"""
import dataclasses
import json
import re
import statistics
import sys
import time
import threading
from dataclasses import dataclass
from pathlib import Path

from petrel import debian, linuxbase, oracle, paths, qemu, rootfs, systems
from petrel.netrelay import Impairments, Relay

SERVER, CLIENT = "10.9.0.1", "10.9.0.2"
SECONDS = 10                    # iperf3's -t
CC = "cubic"                    # Linux's default, and netcfg's cc= on Petrel's side
TIMEOUT = 180                   # a boot's limit: the transfer, boots, and a client's tries
PCAP_SNAP = 128                 # --pcap: the bytes of each frame recorded (Ethernet, IP and TCP headers)
TRIES = 60                      # the client's connection attempts, a second apart
PLACEMENTS = {"user": "linux-user", "kernel": "linux-user-knet"}
METRIC = "tcp_throughput_mbps"
TARGET = 0.95                   # Petrel->Linux at least this fraction of Linux->Linux

# iperf3's summary line of the data the server received, in -f m's units.
RECEIVER_RE = re.compile(r"^\[\s*\d+\]\s+\S+\s+sec\s+\S+ \w?Bytes\s+([0-9.]+) Mbits/sec.*\breceiver\s*$", re.M)


class NetBenchError(RuntimeError):
    """A run of the net suite failed."""


@dataclass(frozen=True)
class Pair:
    """A client and a server: each "linux" or a Petrel placement of the stack."""
    client: str
    server: str

    @property
    def system(self) -> str:
        def side(s):
            return "linux" if s == "linux" else "petrel"
        return f"{side(self.client)}->{side(self.server)}"

    @property
    def placement(self) -> str:
        return next((s for s in (self.client, self.server) if s != "linux"), "")

    @property
    def label(self) -> str:
        return self.system + (f" ({self.placement} stack)" if self.placement else "")


PAIRS = (Pair("linux", "linux"),) + tuple(Pair(p, "linux") for p in PLACEMENTS) + \
    tuple(Pair("linux", p) for p in PLACEMENTS)
SYSTEMS = tuple(dict.fromkeys(p.system for p in PAIRS))     # what --only chooses from


def out_dir(repo: Path = paths.REPO) -> Path:
    return paths.build_dir(repo) / "bench" / "net"


# The commands of /etc/lxrun for a side: the role's iperf3 (a client tries
# TRIES times to connect, as the server may still be booting).
def commands(role: str, linux: bool) -> list:
    addr = SERVER if role == "server" else CLIENT
    lines = [f"lxnetpeer role=up addr={addr}"] if linux else []
    if role == "server":
        lines.append("iperf3 -s -1 -f m")
    else:
        lines.append(f"sh -c 'i=0; while [ $i -lt {TRIES} ]; do iperf3 -c {SERVER} -t {SECONDS} -f m "
                     f"&& exit 0; i=$((i+1)); sleep 1; done; exit 1'")
    return lines


# The root archives, by (role, linux side): iperf3 with what it loads,
# busybox, and on Linux's side the NIC's modules.
def archives(repo: Path = paths.REPO) -> dict:
    fetched = set(debian.apps_ready(repo))
    packages = [p for p in debian.walk(debian.NET_APPS, debian.NET_NOT_NEEDED) if p in fetched]
    modules = [(linuxbase.net_module(m, repo), f"/{m}.ko") for m in linuxbase.NET_MODULES]
    out = out_dir(repo)
    made = {}
    for role in ("server", "client"):
        for linux in (True, False):
            path = out / f"{role}-{'linux' if linux else 'petrel'}.cpio"
            run = "".join(c + "\n" for c in commands(role, linux))
            path.write_bytes(rootfs.build(run, modules if linux else (), repo, packages))
            made[(role, linux)] = path
    return made


# The QEMU argv of one side on `machine` with root archive `archive`;
# Petrel's with kernel command line `append`, its image named `stem`.
def side_argv(side: str, role: str, archive: Path, machine: qemu.Machine, repo: Path, append: str = "",
              stem: str = "") -> list:
    if side == "linux":
        return qemu.build_argv(linuxbase.image(repo), archive, machine, oracle.LINUX_APPEND)
    system = systems.load_system(repo / "systems" / f"{PLACEMENTS[side]}.toml", repo)
    addr = SERVER if role == "server" else CLIENT
    progs = tuple(dataclasses.replace(p, args=f"ip={addr}/24 cc={CC}") if p.name == "netcfg" else p
                  for p in system.programs)
    system = dataclasses.replace(system, programs=progs)
    image = oracle.write_image(out_dir(repo) / f"{stem}{role}-{side}.pbi", systems.read_entries(system, repo),
                               archive)
    return qemu.build_argv(paths.kernel_bin(repo=repo), image, machine, append)


# What the client's console says the server received, in Mbit/s (None: no summary).
def received_mbps(console: str):
    found = RECEIVER_RE.findall(console)
    return float(found[-1]) if found else None


# One run of `pair`: boots the server and then the client on a relay with
# `imp`; returns the throughput. The consoles go to build/bench/net/.
def run_pair(pair: Pair, made: dict, machine: qemu.Machine, imp: Impairments, run: int, repo: Path,
             pcap: bool = False) -> float:
    consoles = {}
    stem = f"{pair.client}-to-{pair.server}-{run}"
    with Relay(imp) as relay:
        def boot(side, role, who):
            m = qemu.Machine(machine.cpu, machine.gic, machine.smp, machine.mem, False, net=relay.net_for(side))
            if pcap:                            # (headers: a run is a few hundred thousand frames)
                m = dataclasses.replace(m, pcap=str(out_dir(repo) / f"{stem}-{role}.pcap"), pcap_snap=PCAP_SNAP)
            consoles[role] = qemu.run(side_argv(who, role, made[(role, who == "linux")], m, repo), TIMEOUT)
        server = threading.Thread(target=boot, args=("b", "server", pair.server))
        server.start()
        time.sleep(2)
        client = threading.Thread(target=boot, args=("a", "client", pair.client))
        client.start()
        client.join()
        server.join()
    out = out_dir(repo)
    for role, (_, text) in consoles.items():
        (out / f"{stem}-{role}.log").write_text(text)
    mbps = received_mbps(consoles["client"][1])
    if mbps is None:
        raise NetBenchError(f"{pair.label}: iperf3 gave no result (consoles in "
                            f"{paths.rel(out / stem)}-client.log and -server.log)")
    return mbps


def rows_of(samples: dict, imp: Impairments) -> list:
    rows = []
    for pair, values in samples.items():
        rows.append({"metric": METRIC, "system": pair.system, "placement": pair.placement,
                     "rtt_ms": imp.rtt_ms, "loss_pct": imp.loss * 100, "cc": CC, "seconds": SECONDS,
                     "median": statistics.median(values), "min": min(values), "max": max(values),
                     "runs": len(values), "mode": "wall"})
    return rows


def report(rows: list, machine: qemu.Machine, command: str) -> str:
    base = next((r["median"] for r in rows if r["system"] == "linux->linux"), None)
    rtt, loss = (rows[0]["rtt_ms"], rows[0]["loss_pct"]) if rows else (0, 0)
    lines = [f"# Petrel network benchmarks (wall mode)\n\n`{command}`: iperf3 TCP, {SECONDS} s a run, "
             f"{CC}, over the relay ({rtt:g} ms RTT, {loss:g} % loss), {machine.cpu}, {machine.smp} "
             f"core{'s' if machine.smp > 1 else ''} a QEMU. Median of {rows[0]['runs'] if rows else 0} runs "
             f"(minimum and maximum beside it); ratio to Linux->Linux.\n\n",
             "| pair | Petrel's stack | Mbit/s | min | max | ratio |\n|---|---|---:|---:|---:|---:|\n"]
    for r in rows:
        ratio = f"{r['median'] / base:.2f}" if base else "-"
        lines.append(f"| {r['system']} | {r['placement'] or '-'} | {r['median']:.0f} | {r['min']:.0f} | "
                     f"{r['max']:.0f} | {ratio} |\n")
    if base:
        lines.append("\n## Targets\n\n")
        for r in rows:
            if r["system"] == "petrel->linux":
                ok = r["median"] >= TARGET * base
                lines.append(f"- {'met' if ok else 'NOT met'}: petrel->linux ({r['placement']} stack) >= "
                             f"{TARGET:.0%} of linux->linux ({r['median'] / base:.0%})\n")
    return "".join(lines)


# `only`: one of SYSTEMS, its pairs alone ("" or None: every pair).
def main(machine: qemu.Machine, runs: int, rtt_ms: float, loss_pct: float, only: str = "",
         repo: Path = paths.REPO, pcap: bool = False) -> int:
    imp = Impairments(rtt_ms=rtt_ms, loss=loss_pct / 100)
    try:
        imp.check()
    except ValueError as err:
        print(f"bench: {err}", file=sys.stderr)
        return 2
    if not linuxbase.present(repo):
        print("bench: the Linux baseline is missing: run ./petrel setup", file=sys.stderr)
        return 1
    out = out_dir(repo)
    out.mkdir(parents=True, exist_ok=True)
    try:
        print("bench: packing iperf3's root archives", flush=True)
        made = archives(repo)
        pairs = [p for p in PAIRS if not only or p.system == only]
        samples = {pair: [] for pair in pairs}
        for run in range(runs):                 # (each pair in turn: the host's slow moments hit them alike)
            for pair in pairs:
                print(f"bench: {pair.label}, run {run + 1} of {runs}", flush=True)
                mbps = run_pair(pair, made, machine, imp, run + 1, repo, pcap)
                print(f"  {pair.label} {run + 1}/{runs}: {mbps:g} Mbit/s", flush=True)
                samples[pair].append(mbps)
    except (NetBenchError, debian.DebianError, systems.SystemConfigError, ValueError) as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    rows = rows_of(samples, imp)
    command = "./petrel bench " + " ".join(sys.argv[2:])
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = report(rows, machine, command)
    (out / "report.md").write_text(text)
    print()
    print(text)
    print(f"bench: wrote {paths.rel(out / 'results.json')}, {paths.rel(out / 'report.md')}")
    return 0
