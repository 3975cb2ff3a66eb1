"""The QEMU `virt` machine Petrel boots on: its command line and a timed run.

One function builds the argv (pure, unit-tested), one runs it with a timeout.
The kernel is the raw image (kernel.bin): QEMU loads it at RAM base + 0x80000
and passes the device tree address in x0. The boot image goes in as -initrd,
so QEMU records its place in the device tree's /chosen node.

Semihosting is enabled so the kernel can end QEMU with a non-zero status on a
panic; PSCI SYSTEM_OFF ends QEMU with status 0.

A machine may have a virtio keyboard and a virtio tablet; a run presses
keys and clicks on them through QMP (input-send-event), each press once a
regex has appeared on the console, as it types console text (`steps`, with
Keys actions).
"""
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

QEMU = "qemu-system-aarch64"
CPUS = ("cortex-a53", "cortex-a72")
GICS = (2, 3)
GICV2_MAX_CPUS = 8
MEM_RE = re.compile(r"[1-9][0-9]*[KMGT]?")
ICOUNT = "shift=0,align=off,sleep=off"
# The keys a press may name: QEMU's QKeyCode names (its qapi/ui.json).
QKEYS = (tuple("abcdefghijklmnopqrstuvwxyz") + tuple("0123456789") +
         ("ret", "spc", "tab", "esc", "backspace", "minus", "equal", "comma", "dot", "slash", "semicolon",
          "apostrophe", "bracket_left", "bracket_right", "backslash", "grave_accent",
          "shift", "shift_r", "ctrl", "ctrl_r", "alt", "alt_r", "meta_l", "caps_lock",
          "up", "down", "left", "right", "home", "end", "pgup", "pgdn", "insert", "delete") +
         tuple(f"f{n}" for n in range(1, 13)))
QMP_CONNECT_TIMEOUT = 5.0       # seconds a run waits for QEMU's QMP socket to open

# QEMU processes started by run() and still going (for kill_all on Ctrl-C).
_live = set()
_live_lock = threading.Lock()


class QemuMissing(RuntimeError):
    """qemu-system-aarch64 is not installed."""


class StepFailed(RuntimeError):
    """A step's key presses failed (QMP refused them): the run was stopped."""

    def __init__(self, message: str, console: str):
        super().__init__(message)
        self.console = console


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
    keyboard: bool = False          # a virtio keyboard (virtio-keyboard-device; run() presses Keys on it)
    tablet: bool = False            # a virtio tablet (virtio-tablet-device; run() clicks on it: click@X,Y)
    display: bool = False           # a virtio-gpu screen of DISPLAY_SIZE (run() takes Screendumps of it)
    k2: str = ""                    # K2: this shadow kernel image (build/k2/shadow.bin) runs on the last core


# The screen a machine with a display has: what QEMU's virtio-gpu reports
# to the guest as its size (xres, yres).
DISPLAY_SIZE = (640, 480)


@dataclass(frozen=True)
class Screendump:
    """A step's picture of the screen: QMP's screendump into `path` (PPM)."""
    path: str


@dataclass(frozen=True)
class Keys:
    """A step's action on the keyboard: presses, as parse_keys reads them."""
    text: str


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
    if not isinstance(m.keyboard, bool):
        raise ValueError(f"keyboard {m.keyboard!r}: expected true or false")
    if not isinstance(m.tablet, bool):
        raise ValueError(f"tablet {m.tablet!r}: expected true or false")
    if not isinstance(m.display, bool):
        raise ValueError(f"display {m.display!r}: expected true or false")
    if m.k2 and m.smp < 2:
        raise ValueError(f"k2: the shadow kernel needs a core of its own: smp 2 or more, not {m.smp}")
    if m.k2 and mem_bytes(m.mem) < K2_MIN_MEM:
        raise ValueError(f"k2: mem {m.mem} is too small: K2's regions need at least 128M")


# K2 (docs/design/k2.md): where the shadow kernel is linked to run, the
# start of its local region, and the least memory with which QEMU puts the
# boot image and the device tree (at half the memory, up to 128 MiB in)
# past K2's fixed regions (0x41000000-0x425fffff).
K2_SHADOW_PA = 0x41000000
K2_MIN_MEM = 128 << 20


# The bytes of a size QEMU's -m takes ("512M"; a bare number is MiB).
def mem_bytes(mem: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if mem[-1] in units:
        return int(mem[:-1]) * units[mem[-1]]
    return int(mem) << 20


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
    if machine.k2:
        # The shadow kernel's image goes where it is linked to run; the
        # boot argument k2 makes the main kernel start it on the last core.
        argv += ["-device", f"loader,file={machine.k2},addr={K2_SHADOW_PA:#x},force-raw=on"]
        append = ("k2 " + append).strip()
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
    argv += tablet_argv(machine, "-global" not in argv)
    argv += keyboard_argv(machine, "-global" not in argv)
    argv += display_argv(machine, "-global" not in argv)
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


# The keyboard's part of the argv: a virtio-input keyboard on a modern
# (version 2) virtio-mmio transport, after the NIC and the disk.
def keyboard_argv(machine: Machine, modern: bool = True) -> list:
    if not machine.keyboard:
        return []
    return (["-global", "virtio-mmio.force-legacy=false"] if modern else []) + \
        ["-device", "virtio-keyboard-device"]


# The tablet's part of the argv: a virtio-input tablet (absolute pointer,
# left, right and middle buttons) on a modern virtio-mmio transport, before
# the keyboard: QEMU gives a later -device a lower address, so the keyboard
# stays the virtio-input device at the lowest address ("virtio-input" of a
# service's `devices`) and the tablet is the next ("virtio-input#1").
def tablet_argv(machine: Machine, modern: bool = True) -> list:
    if not machine.tablet:
        return []
    return (["-global", "virtio-mmio.force-legacy=false"] if modern else []) + \
        ["-device", "virtio-tablet-device"]


# The screen's part of the argv: a virtio-gpu device (2D) on a modern
# virtio-mmio transport. QEMU shows it only where a display is asked for
# (`-display` of a `./petrel run --display`); a test takes screendumps.
def display_argv(machine: Machine, modern: bool = True) -> list:
    if not machine.display:
        return []
    return (["-global", "virtio-mmio.force-legacy=false"] if modern else []) + \
        ["-device", f"virtio-gpu-device,xres={DISPLAY_SIZE[0]},yres={DISPLAY_SIZE[1]}"]


# The QMP events of one key for input-send-event: pressed (down) or released.
def key_event(name: str, down: bool) -> dict:
    return {"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": name}}}


# The events of one press, QKeyCode names joined by "-" ("shift-a"): each
# key down in order, then up in the reverse order. Raises ValueError.
def press_events(press: str) -> list:
    downs, ups, _hold = press_parts(press)
    return downs + ups


# A press's key-down events, its key-up events, and how long the keys are
# held between them in seconds: "a:700" holds a for 700 ms (0: released at
# once). Raises ValueError.
def press_parts(press: str) -> tuple:
    hold = 0.0
    if ":" in press:
        press, ms = press.split(":", 1)
        if not ms.isdigit() or not 0 < int(ms) <= 10000:
            raise ValueError(f"{press}:{ms}: a hold is 1 to 10000 ms, such as a:700")
        hold = int(ms) / 1000
    names = press.split("-")
    if "" in names:
        raise ValueError(f"{press!r}: a press is key names joined by '-', such as shift-a")
    for name in names:
        if name not in QKEYS:
            others = ", ".join(k for k in QKEYS if len(k) > 1)
            raise ValueError(f"{press!r}: unknown key {name!r} (QEMU's QKeyCode names: a-z, 0-9, {others})")
    if len(set(names)) != len(names):
        raise ValueError(f"{press!r}: a key is named twice in one press")
    return [key_event(n, True) for n in names], [key_event(n, False) for n in reversed(names)], hold


# The range of a tablet's axes in QMP's input-send-event (INPUT_EVENT_ABS_MIN
# to _MAX); virtio-tablet-device reports the same range as ABS_X and ABS_Y.
ABS_RANGE = 0x8000
CLICK_RE = re.compile(r"click@([0-9]+),([0-9]+)")


# Whether a step's word is a click ("click@X,Y") rather than a key press.
def is_click(word: str) -> bool:
    return word.startswith("click@")


# A click's events: the tablet moved to pixel (X, Y) of the screen
# (DISPLAY_SIZE) with the left button down, then the button up, as two
# lists (two input-send-events, so the guest gets two packets). The axis
# value is the smallest that a guest scaling it to the screen
# (value * width / ABS_RANGE, rounded down) reads back as X. Raises ValueError.
def click_parts(word: str) -> tuple:
    m = CLICK_RE.fullmatch(word)
    w, h = DISPLAY_SIZE
    if not m or not (int(m[1]) < w and int(m[2]) < h):
        raise ValueError(f"{word!r}: a click is click@X,Y with X below {w} and Y below {h}, such as click@100,50")
    x, y = ((int(v) * ABS_RANGE + size - 1) // size for v, size in ((m[1], w), (m[2], h)))
    downs = [{"type": "abs", "data": {"axis": "x", "value": x}}, {"type": "abs", "data": {"axis": "y", "value": y}},
             {"type": "btn", "data": {"down": True, "button": "left"}}]
    return downs, [{"type": "btn", "data": {"down": False, "button": "left"}}]


# Reads a step's key presses and clicks, separated by spaces ("h i shift-a
# ret click@10,20"): a list of each one's events. Raises ValueError.
def parse_keys(text: str) -> list:
    presses = text.split()
    if not presses:
        raise ValueError(f"{text!r}: no key presses (names separated by spaces, such as \"h i ret\")")
    return [sum(click_parts(p), []) if is_click(p) else press_events(p) for p in presses]


# Which devices a step's text needs: (a keyboard, a tablet).
def devices_of(text: str) -> tuple:
    words = text.split()
    return any(not is_click(w) for w in words), any(is_click(w) for w in words)


# What QEMU needs to take key presses: a QMP socket at `path` that it does
# not wait on.
def qmp_argv(path: str) -> list:
    return ["-qmp", f"unix:{path},server=on,wait=off"]


# Connects to QEMU's QMP socket `path` (waiting up to `timeout` seconds for
# QEMU to open it) and leaves capabilities negotiation. trace.Qmp skips
# the asynchronous events while it waits for a command's answer and raises
# trace.TraceError on an error answer.
def qmp_connect(path: str, timeout: float = QMP_CONNECT_TIMEOUT):
    from petrel import trace
    return trace.Qmp(path, timeout)


# Presses the keys of `keys` (a Keys) through `qmp`: one input-send-event a
# press, in order, each after QEMU answered the one before; a held press
# ("a:700") sends its downs, waits, then its ups; a click sends its move
# and button down, then its button up.
def send_keys(qmp, keys: Keys) -> None:
    for press in keys.text.split():
        if is_click(press):
            for events in click_parts(press):
                qmp.command("input-send-event", events=events)
            continue
        downs, ups, hold = press_parts(press)
        if hold:
            qmp.command("input-send-event", events=downs)
            time.sleep(hold)
            qmp.command("input-send-event", events=ups)
        else:
            qmp.command("input-send-event", events=downs + ups)


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
# is a list of such (regex, action) pairs, done in turn, each regex looked for
# in what came after the previous step's match. An action is text to type,
# or Keys to press on the machine's keyboard (Machine.keyboard) through a
# QMP socket that run() adds to the argv, in a temporary directory of its
# own; when QMP refuses a press, QEMU is stopped and run() raises
# StepFailed, which holds the console so far.
# QEMU runs in its own process group, so a timeout kills all of it.
def run(argv: list, timeout: float, input_text: str = "", input_after: str = "", steps=(), on_start=None) -> tuple:
    find_qemu(argv[0])
    steps = list(steps) or ([(input_after, input_text)] if input_text and input_after else [])
    typed = input_text or any(isinstance(action, str) for _, action in steps)
    qmp_dir = tempfile.mkdtemp(prefix="petrel-keys-") if any(isinstance(a, (Keys, Screendump)) for _, a in steps) \
        else None
    qmp = os.path.join(qmp_dir, "qmp") if qmp_dir else None
    if qmp:
        argv = argv + qmp_argv(qmp)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if typed else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except BaseException:
        if qmp_dir:
            shutil.rmtree(qmp_dir, ignore_errors=True)
        raise
    with _live_lock:
        _live.add(proc)
    if on_start:
        on_start(proc)
    try:
        if steps:
            return _run_steps(proc, timeout, steps, qmp)
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
        if qmp_dir:
            shutil.rmtree(qmp_dir, ignore_errors=True)


# Reads the console as it comes and does each step's action once its regex
# has appeared, the way a person waits for a prompt: text is typed on the
# console, Keys are pressed through the QMP socket `qmp` (connected at the
# first of them). The actions are done in order on a thread of their own,
# so that the console is read while QEMU answers. A press QMP refuses
# stops QEMU and raises StepFailed.
def _run_steps(proc, timeout: float, steps: list, qmp) -> tuple:
    chunks = []
    state = {"next": 0, "from": 0}
    todo = queue.Queue()                # indexes of the steps to act on; None: no more
    failed = []
    last_text = max((n for n, (_, action) in enumerate(steps) if isinstance(action, str)), default=-1)

    def reader():
        while True:
            data = proc.stdout.read1(4096)
            if not data:
                todo.put(None)
                return
            chunks.append(data)
            while state["next"] < len(steps):
                seen = decode_console(b"".join(chunks))
                m = re.search(steps[state["next"]][0], seen[state["from"]:])
                if not m:
                    break
                todo.put(state["next"])
                state["next"] += 1
                state["from"] += m.end()
                if state["next"] == len(steps):
                    todo.put(None)

    def actor():
        keyboard = None
        for n in iter(todo.get, None):
            action = steps[n][1]
            try:
                if isinstance(action, Keys):
                    keyboard = keyboard or qmp_connect(qmp)
                    send_keys(keyboard, action)
                elif isinstance(action, Screendump):
                    keyboard = keyboard or qmp_connect(qmp)
                    keyboard.command("screendump", filename=action.path)
                else:
                    proc.stdin.write(action.encode())
                    proc.stdin.flush()
                    if n == last_text:
                        proc.stdin.close()
            except (OSError, EOFError, ValueError) as err:     # (trace.TraceError is a ValueError)
                # Text QEMU no longer takes, or keys of a guest that is
                # ending, are the end of the run, judged as it is.
                if not isinstance(action, str) and not _ended(proc, keyboard):
                    what = f"keys {action.text!r}" if isinstance(action, Keys) else f"screendump {action.path}"
                    failed.append(f"step {n + 1}, {what}: {err}")
                    kill_group(proc)
                    break
        if keyboard:
            keyboard.close()

    threads = [threading.Thread(target=reader, daemon=True), threading.Thread(target=actor, daemon=True)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    status = proc.poll()
    if status is None:
        kill_group(proc)
        proc.wait()
    threads[0].join(5)
    todo.put(None)
    threads[1].join(5)
    console = decode_console(b"".join(chunks))
    if failed:
        raise StepFailed(failed[0], console)
    return status, console


# True when the guest has ended: it powered off or panicked (QEMU, with
# -no-shutdown, stays), or QEMU `proc` has ended or ends within `wait`
# seconds.
def _ended(proc, qmp, wait: float = 1.0) -> bool:
    try:
        if qmp and qmp.command("query-status").get("status") in ("shutdown", "guest-panicked"):
            return True
    except (OSError, EOFError, ValueError):
        pass
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return False
    return True


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
