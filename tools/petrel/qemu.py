"""The QEMU `virt` machine Petrel boots on: its command line and a timed run.

One function builds the argv (pure, unit-tested), one runs it with a timeout.
The kernel is the raw image (kernel.bin): QEMU loads it at RAM base + 0x80000
and passes the device tree address in x0. The boot image goes in as -initrd,
so QEMU records its place in the device tree's /chosen node.

Semihosting is enabled so the kernel can end QEMU with a non-zero status on a
panic; PSCI SYSTEM_OFF ends QEMU with status 0.
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass

QEMU = "qemu-system-aarch64"
CPUS = ("cortex-a53", "cortex-a72")
GICS = (2, 3)
GICV2_MAX_CPUS = 8
MEM_RE = re.compile(r"[1-9][0-9]*[KMGT]?")
ICOUNT = "shift=0,align=off,sleep=off"

# QEMU processes started by run() and still going (for kill_all on Ctrl-C).
_live = set()
_live_lock = threading.Lock()


class QemuMissing(RuntimeError):
    """qemu-system-aarch64 is not installed."""


@dataclass
class Machine:
    """The emulated board: CPU model, GIC version, cores, memory, icount."""
    cpu: str = "cortex-a53"
    gic: int = 2
    smp: int = 1
    mem: str = "512M"
    icount: bool = False
    virtualization: bool = False    # start the cores at EL2
    net: str = "none"               # a virtio-net NIC: NETS
    pcap: str = ""                  # with a NIC: record its frames in this file (QEMU's filter-dump)
    pcap_snap: int = 0              # ... only their first this many bytes (0: whole)
    forward: tuple = ()             # (host port, guest port) pairs: TCP from 127.0.0.1 to the guest
    disk: str = ""                  # a raw disk image, attached as a virtio-blk device (its path; "": none)
    disk_ro: bool = False           # ... read-only (the device says so; writes fail)


# The network a machine may have: "none"; "user", QEMU's user-mode network
# (10.0.2.0/24, the host at 10.0.2.2, its DHCP and DNS), as a person's own
# `./petrel run` gets it; "isolated", the same with restrict=on, so that the
# guest reaches nothing beyond QEMU's own addresses (tests, benchmarks, CI).
NETS = ("none", "user", "isolated")
# Or "link:GUEST:RELAY": a dgram netdev on 127.0.0.1 that receives on port
# GUEST and sends to the relay's port RELAY (netrelay.py: the project's own
# link between two QEMUs).
LINK_RE = re.compile(r"link:([0-9]{1,5}):([0-9]{1,5})")


# Why QEMU's -drive cannot take `path` (it reads a comma as the next
# option and a colon as a protocol's prefix), or "" when it can.
def disk_path_problem(path: str) -> str:
    return f"{path!r}: QEMU's -drive cannot take a path with a comma or a colon" if "," in path or ":" in path else ""


# Raises ValueError unless `m` describes a machine QEMU virt can start.
def check_machine(m: Machine) -> None:
    if m.cpu not in CPUS:
        raise ValueError(f"cpu {m.cpu!r}: expected one of {', '.join(CPUS)}")
    if m.gic not in GICS:
        raise ValueError(f"gic {m.gic!r}: expected 2 or 3")
    if not isinstance(m.smp, int) or m.smp < 1:
        raise ValueError(f"smp {m.smp!r}: expected a positive number of cores")
    if m.gic == 2 and m.smp > GICV2_MAX_CPUS:
        raise ValueError(f"smp {m.smp}: GICv2 supports at most {GICV2_MAX_CPUS} cores, use gic 3")
    if not isinstance(m.mem, str) or not MEM_RE.fullmatch(m.mem):
        raise ValueError(f"mem {m.mem!r}: expected a size such as 512M or 1G")
    link = LINK_RE.fullmatch(m.net) if isinstance(m.net, str) else None
    if m.net not in NETS and not link:
        raise ValueError(f"net {m.net!r}: expected one of {', '.join(NETS)} or link:GUEST_PORT:RELAY_PORT")
    if link and not all(1 <= int(port) <= 65535 for port in link.groups()):
        raise ValueError(f"net {m.net!r}: ports are from 1 to 65535")
    if m.pcap and m.net == "none":
        raise ValueError("pcap: recording frames needs a network (net 'user' or 'isolated')")
    if m.forward and m.net not in ("user", "isolated"):
        raise ValueError(f"forward: forwarding a port needs QEMU's user-mode network (net 'user' or 'isolated'), "
                         f"not {m.net!r}")
    hosts = [h for h, _ in m.forward]
    for h, g in m.forward:
        if not all(isinstance(port, int) and 1 <= port <= 65535 for port in (h, g)):
            raise ValueError(f"forward {h}:{g}: ports are from 1 to 65535")
    if len(set(hosts)) != len(hosts):
        raise ValueError("forward: a host port is forwarded twice")
    if m.disk_ro and not m.disk:
        raise ValueError("disk_ro: a read-only disk needs a disk")
    if m.disk and disk_path_problem(str(m.disk)):
        raise ValueError(f"disk {disk_path_problem(str(m.disk))}")


# Returns the QEMU argv. `interactive` puts the console and monitor on the
# terminal (Ctrl-A x quits); otherwise the serial goes to stdout for capture.
def build_argv(kernel, image=None, machine: Machine = Machine(), append: str = "",
               interactive: bool = False, gdb_port=None, qemu: str = QEMU) -> list:
    check_machine(machine)
    board = f"virt,gic-version={machine.gic}" + (",virtualization=on" if machine.virtualization else "")
    # -nodefaults: no default NIC (its option ROM is an optional package),
    # no default monitor, serial or parallel port; every device is named here.
    argv = [qemu, "-nodefaults", "-M", board, "-cpu", machine.cpu,
            "-smp", str(machine.smp), "-m", machine.mem, "-display", "none", "-no-reboot",
            "-semihosting-config", "enable=on,target=native", "-kernel", str(kernel)]
    if image is not None:
        argv += ["-initrd", str(image)]
    argv += ["-append", append]
    if interactive:
        # The terminal is the console and, after Ctrl-A c, the monitor;
        # Ctrl-C goes to the guest (its shell), not to QEMU as a signal.
        argv += ["-chardev", "stdio,id=console,mux=on,signal=off", "-serial", "chardev:console",
                 "-mon", "chardev=console,mode=readline"]
    else:
        argv += ["-serial", "stdio", "-monitor", "none"]
    if machine.icount:
        argv += ["-icount", ICOUNT]
    argv += net_argv(machine)
    argv += disk_argv(machine, "-global" not in argv)
    if gdb_port is not None:
        argv += ["-gdb", f"tcp::{gdb_port}", "-S"]
    return argv


# The NIC's part of the argv: a virtio-net device on a modern (version 2)
# virtio-mmio transport, on QEMU's user-mode network.
def net_argv(machine: Machine) -> list:
    if machine.net == "none":
        return []
    link = LINK_RE.fullmatch(machine.net)
    if link:
        netdev = (f"dgram,id=net0,local.type=inet,local.host=127.0.0.1,local.port={link[1]},"
                  f"remote.type=inet,remote.host=127.0.0.1,remote.port={link[2]}")
    else:
        netdev = "user,id=net0" + (",restrict=on" if machine.net == "isolated" else "")
        # Forwards listen on the host's loopback only: nothing beyond this
        # machine reaches the guest through them.
        netdev += "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in machine.forward)
    argv = ["-global", "virtio-mmio.force-legacy=false", "-netdev", netdev,
            "-device", "virtio-net-device,netdev=net0"]
    if machine.pcap:
        argv += ["-object", f"filter-dump,id=dump0,netdev=net0,file={machine.pcap}" +
                 (f",maxlen={machine.pcap_snap}" if machine.pcap_snap else "")]
    return argv


# The disk's part of the argv: a raw image as a virtio-blk device on a
# modern (version 2) virtio-mmio transport (the -global once in the argv).
def disk_argv(machine: Machine, modern: bool = True) -> list:
    if not machine.disk:
        return []
    drive = f"file={machine.disk},if=none,format=raw,id=disk0" + (",readonly=on" if machine.disk_ro else "")
    return (["-global", "virtio-mmio.force-legacy=false"] if modern else []) + \
        ["-drive", drive, "-device", "virtio-blk-device,drive=disk0"]


# Returns the path of qemu-system-aarch64 or raises QemuMissing with a hint.
def find_qemu(name: str = QEMU) -> str:
    found = shutil.which(name)
    if not found:
        raise QemuMissing(f"{name} not found: run `./petrel setup` "
                          "(Debian package qemu-system-arm)")
    return found


# Turns raw console bytes into text with plain "\n" line ends.
def decode_console(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


# Kills the whole process group of `proc` (QEMU and anything it started).
def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# Runs QEMU non-interactively (`on_start(proc)` is called once it started),
# typing `input_text` on its serial console
# (the UART takes it as the guest reads); returns (exit status, or None on
# timeout, console text). stderr is merged into the console so QEMU's own errors show up in logs.
# With `input_after` the text is typed once that regex has appeared; `steps`
# is a list of such (regex, text) pairs, typed in turn, each regex looked for
# in what came after the previous step was typed.
# QEMU runs in its own process group, so a timeout kills all of it.
def run(argv: list, timeout: float, input_text: str = "", input_after: str = "", steps=(), on_start=None) -> tuple:
    find_qemu(argv[0])
    steps = list(steps) or ([(input_after, input_text)] if input_text and input_after else [])
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if input_text or steps else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    with _live_lock:
        _live.add(proc)
    if on_start:
        on_start(proc)
    try:
        if steps:
            return _run_typing(proc, timeout, steps)
        out, _ = proc.communicate(input=input_text.encode() if input_text else None, timeout=timeout)
        return proc.returncode, decode_console(out)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        return None, decode_console(out)
    finally:
        if proc.poll() is None:
            kill_group(proc)
            proc.wait()
        with _live_lock:
            _live.discard(proc)


# Reads the console as it comes and types each step's text once its regex
# has appeared, the way a person waits for a prompt.
def _run_typing(proc, timeout: float, steps: list) -> tuple:
    import re
    import threading
    import time
    chunks = []
    state = {"next": 0, "from": 0}

    def reader():
        while True:
            data = proc.stdout.read1(4096)
            if not data:
                return
            chunks.append(data)
            while state["next"] < len(steps):
                after, text = steps[state["next"]]
                seen = decode_console(b"".join(chunks))
                m = re.search(after, seen[state["from"]:])
                if not m:
                    break
                state["next"] += 1
                state["from"] += m.end()
                try:
                    proc.stdin.write(text.encode())
                    proc.stdin.flush()
                    if state["next"] == len(steps):
                        proc.stdin.close()
                except OSError:
                    pass

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is None:
        kill_group(proc)
        proc.wait()
        t.join(5)
        return None, decode_console(b"".join(chunks))
    t.join(5)
    return proc.returncode, decode_console(b"".join(chunks))


# Kills every QEMU that run() started and that is still running.
def kill_all() -> None:
    with _live_lock:
        for proc in list(_live):
            kill_group(proc)


# Returns the argv as one shell-quoted line, for logs and messages.
def format_argv(argv: list) -> str:
    return shlex.join(argv)


# Runs QEMU with its serial console's input from `source` (a file or pipe,
# not a terminal): its bytes are typed as they come; once it ends, Ctrl-D
# is typed every half second until QEMU exits, so the end of the input
# stays an end of file to whatever reads the console next, as a closed
# pipe is (a Ctrl-D typed before the shell reads, or read by a program
# the shell runs, would otherwise leave the shell waiting for ever). The
# default system's shell exits on it and the machine powers off. The
# console goes to stdout. Returns QEMU's exit status. Stopped by a signal
# (Ctrl-C, kill, a closed terminal), it stops QEMU too: a guest that never
# powers off (a server) must not outlive the command that started it.
def run_typed(argv: list, source, eof_every: float = 0.5) -> int:
    def stop(signum, frame):
        raise KeyboardInterrupt
    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _run_typed_input(argv, source, eof_every)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _run_typed_input(argv: list, source, eof_every: float) -> int:
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE)
    try:
        while True:
            chunk = source.read1(4096) if hasattr(source, "read1") else source.read(4096)
            if not chunk:
                break
            proc.stdin.write(chunk)
            proc.stdin.flush()
        while True:
            proc.stdin.write(b"\x04")
            proc.stdin.flush()
            try:
                return proc.wait(timeout=eof_every)
            except subprocess.TimeoutExpired:
                continue
    except BrokenPipeError:
        pass
    except KeyboardInterrupt:
        proc.kill()
    return proc.wait()
