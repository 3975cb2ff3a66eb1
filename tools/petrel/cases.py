"""Guest test cases: `tests/guest/cases.toml` read, checked and expanded.

Each [[case]] boots the real system once in QEMU. [defaults] gives values for
keys a case leaves out. A `matrix` table expands a case into one case per
combination of its values, in the order system, cpu, gic, smp, mem, with a name
suffix such as "-a53-gicv2-smp1" (a system adds its name: "-linux-kernel"):

    [[case]]
    name = "boot"
    expect = ["cores: {smp}"]
    matrix = { cpu = ["cortex-a53", "cortex-a72"], gic = [2, 3], smp = [1, 4] }

The matrix key `except` leaves out the combinations that have every value
of one of its tables: `except = [{ cpu = "cortex-a72", smp = 4 }]` drops
the two a72 four-core cases above.

Placeholders {name} {cpu} {cpu_short} {cpu_model} {gic} {smp} {mem} in `expect` and
`append` are replaced by the case's own values (every case, matrix or not).
Only these exact names are replaced, so regex braces such as `\\d{2}` stay as
they are; `{{` and `}}` give literal braces, as with str.format.

`keys` presses keys on a virtio keyboard the case's machine then has, each
entry once its regex has appeared on the console (after the previous
entry's match), as `typing` types text:

    keys = [["keytest: ready", "h i shift-a ret"], ["keytest: again", "ctrl-alt-delete 1 minus"]]

The presses are separated by spaces; a press is QEMU's QKeyCode names
(qemu.QKEYS: a-z, 0-9, ret, spc, tab, esc, backspace, minus, shift, ctrl,
alt, f1-f12, up, ...) joined by "-", held down in order and released in the
reverse order: "shift-a" is shift down, a down, a up, shift up. Each press
is one QMP input-send-event, sent once QEMU answered the one before; a
press with ":MS" ("a:800") is held that many milliseconds (1 to 10,000),
its downs and its ups two events with the wait between them. An
`oracle` case's Linux run presses the same keys after the same regexes;
Linux drives the keyboard with its modules virtio_mmio, virtio_input and
evdev, which the case lists in `modules` in that order. A key pressed
before the guest's driver took the device is lost: wait for a line the
program prints once it reads the keyboard.

A word "click@X,Y" among the presses clicks the left button at pixel (X, Y)
of the 640x480 screen on a virtio tablet the machine then has (two events:
the move with the button down, then the button up). A machine with both
has the keyboard at the lower address: a service's `devices` names it
"virtio-input", the tablet "virtio-input#1".

`k2 = true` boots K2 (docs/design/k2.md): QEMU loads the shadow kernel,
build/k2/shadow.bin, where it is linked to run, and the boot argument k2
makes the main kernel start it on the machine's last core (smp 2 or more).
"""
import fnmatch
import itertools
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from petrel import bootimage, paths, qemu

MATRIX_KEYS = ("system", "cpu", "gic", "smp", "mem")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
KERNEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
PLACEHOLDER_RE = re.compile(r"\{\{|\}\}|\{(name|cpu|cpu_short|cpu_model|gic|smp|mem)\}")


class CaseError(ValueError):
    """cases.toml is malformed."""


@dataclass
class Case:
    """One boot of the system under test, with what its console must show."""
    name: str
    kernel: str = "kernel"
    programs: list = field(default_factory=lambda: ["root"])
    system: str = ""
    input: str = ""             # typed on the serial console
    input_after: str = ""       # ... once this regex has appeared on it
    typing: list = field(default_factory=list)  # [regex, text] pairs: each text typed once its regex appeared
    keys: list = field(default_factory=list)    # [regex, keys] pairs: each entry's keys pressed on a virtio
                                                # keyboard once its regex appeared ("h shift-a ret": see above)
    display: bool = False                       # a virtio-gpu screen (also with `screens`)
    screens: list = field(default_factory=list) # [regex, pattern] pairs: once the regex appeared, the screen
                                                # of a virtio-gpu the machine then has is taken (QMP's
                                                # screendump) and must show SCREEN_PATTERNS[pattern] (or
                                                # pass SCREEN_CHECKS[pattern]); a third element N takes it
                                                # after the Nth `keys` entry's presses (default: after all)
    files: list = field(default_factory=list)
    cpu: str = "cortex-a53"
    gic: int = 2
    smp: int = 1
    mem: str = "512M"
    icount: bool = False
    virtualization: bool = False
    k2: bool = False            # K2: the shadow kernel (build/k2/shadow.bin) on the last core (docs/guide/k2.md)
    net: str = "none"           # a NIC on QEMU's user-mode network: "isolated" (qemu.NETS), its frames
                                # recorded in build/test/logs/<name>.pcap
    frames: list = field(default_factory=list)  # with a network: protocols its recorded frames must hold
                                                # (tshark's names: "arp", "icmp", ...); every frame is judged
    append: str = ""
    tap: bool = False
    expect: list = field(default_factory=list)
    expect_exit: object = 0
    timeout: float = 30
    pre: list = field(default_factory=list)
    allow_panic: bool = False
    oracle: list = field(default_factory=list)  # Linux command lines: run on Linux and Petrel, compared (oracle.py)
    run: list = field(default_factory=list)     # Linux command lines run on Petrel only (judged by `expect`)
    packages: str = ""          # "apps": the root archive has Debian's programs of the real-programs suite
    modules: list = field(default_factory=list)  # Linux's modules the archive brings for its Linux run
                                # (/lib/petrel/NAME.ko and /etc/modules, loaded by tests/linux/init.c)
    trace: str = ""             # the monitor's groups switched on from boot (trace=...), recorded from QEMU's
                                # side into build/test/logs/<name>.ptrace; with "tcp" among them, each
                                # /proc/net/tcpmon line the console shows must be in the recording, in order
    traced: list = field(default_factory=list)  # with `trace`: tracepoints the recording must hold
    strace: list = field(default_factory=list)  # with `trace` (linux): regexes, in order, of the recording's
                                                # strace view (./petrel trace --strace)

    # The QEMU machine this case boots on.
    def machine(self) -> qemu.Machine:
        needs = [qemu.devices_of(k[1]) for k in self.keys if isinstance(k, list) and len(k) == 2
                 and isinstance(k[1], str)]
        return qemu.Machine(self.cpu, self.gic, self.smp, self.mem, self.icount, self.virtualization, self.net,
                            keyboard=any(k for k, _ in needs), tablet=any(t for _, t in needs),
                            display=self.display or bool(self.screens),
                            k2=str(paths.shadow_bin()) if self.k2 else "")

    # The steps of a run of this case (qemu.run): `typing`'s texts or `keys`'
    # presses, and each of `shots` (Screendump actions, one for each entry of
    # `screens`) after the `keys` entry it names.
    def steps(self, shots=()) -> list:
        keys = self.key_steps()
        at = [screen[2] if len(screen) == 3 else len(keys) for screen in self.screens]
        steps = [tuple(t) for t in self.typing]
        for n in range(len(keys) + 1):
            steps += [(screen[0], shot) for screen, shot, after in zip(self.screens, shots, at) if after == n]
            steps += keys[n:n + 1]
        return steps

    # The steps of `keys` alone, as the case's Linux run does them too.
    def key_steps(self) -> list:
        return [(after, qemu.Keys(keys)) for after, keys in self.keys]

    # File-system-safe form of the case name (used for its boot image).
    def slug(self) -> str:
        return self.name.replace("/", "_")


# Each key a case may set, with the check its value must pass.
FIELD_TYPES = {
    "name": str, "kernel": str, "programs": list, "system": str, "input": str, "input_after": str, "typing": list, "keys": list, "display": bool, "screens": list, "files": list, "cpu": str, "gic": int,
    "smp": int, "mem": str, "icount": bool, "virtualization": bool, "k2": bool, "net": str, "frames": list, "append": str, "tap": bool, "expect": list,
    "expect_exit": (int, str), "timeout": (int, float), "pre": list, "allow_panic": bool, "oracle": list,
    "run": list, "packages": str, "modules": list, "trace": str, "traced": list, "strace": list,
}
PACKAGE_SETS = ("", "apps")
LINUX_MODULES = ("binder_linux", "virtio_mmio", "virtio_input", "evdev")
CASE_KEYS = set(FIELD_TYPES) | {"matrix"}


# Returns the short CPU name used in matrix suffixes: "cortex-a53" -> "a53".
def cpu_short(cpu: str) -> str:
    return cpu.removeprefix("cortex-")


# Returns the CPU model name the kernel prints: "cortex-a53" -> "Cortex-A53".
def cpu_model(cpu: str) -> str:
    return "Cortex-" + cpu_short(cpu).upper() if cpu.startswith("cortex-") else cpu


# Returns the name suffix for one matrix combination, e.g. "-a53-gicv2-smp1".
def matrix_suffix(combo: dict) -> str:
    parts = {"system": lambda v: v, "cpu": lambda v: cpu_short(v), "gic": lambda v: f"gicv{v}",
             "smp": lambda v: f"smp{v}", "mem": lambda v: f"mem{v}"}
    return "".join("-" + parts[key](combo[key]) for key in MATRIX_KEYS if key in combo)


# Replaces the known {placeholders} of `text` with the values of `case`.
def fill(text: str, case: Case) -> str:
    values = {"name": case.name, "cpu": case.cpu, "cpu_short": cpu_short(case.cpu),
              "cpu_model": cpu_model(case.cpu),
              "gic": str(case.gic), "smp": str(case.smp), "mem": case.mem}

    def sub(match: re.Match) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return values[match.group(1)]
    return PLACEHOLDER_RE.sub(sub, text)


# Raises CaseError unless every key of `table` is known and has the right type.
def check_fields(where: str, table: dict) -> None:
    for key, value in table.items():
        if key not in CASE_KEYS:
            raise CaseError(f"{where}: unknown key {key!r}")
        if key == "matrix":
            continue
        wanted = FIELD_TYPES[key]
        if isinstance(value, bool) and wanted not in (bool, list, str):
            raise CaseError(f"{where}: key {key!r} must be {type_name(wanted)}, not a boolean")
        if not isinstance(value, wanted):
            raise CaseError(f"{where}: key {key!r} must be {type_name(wanted)}")


# Describes an isinstance() type spec for messages.
def type_name(wanted) -> str:
    if isinstance(wanted, tuple):
        return " or ".join(t.__name__ for t in wanted)
    return wanted.__name__


# Checks the values of a fully expanded case; raises CaseError.
def check_case(where: str, case: Case, steps) -> None:
    if not NAME_RE.fullmatch(case.name) or ".." in case.name or case.name.endswith("/"):
        raise CaseError(f"{where}: bad name {case.name!r} (letters, digits and . _ / -)")
    if not KERNEL_RE.fullmatch(case.kernel):
        raise CaseError(f"{where}: key 'kernel': {case.kernel!r} is not a kernel name")
    try:
        qemu.check_machine(case.machine())
    except ValueError as err:
        raise CaseError(f"{where}: {err}") from None
    if not all(isinstance(p, str) for p in case.programs):
        raise CaseError(f"{where}: key 'programs' must be a list of program names")
    if not all(isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f)
               for f in case.files):
        raise CaseError(f"{where}: key 'files' must be a list of [image name, path] pairs")
    if not all(isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t) for t in case.typing):
        raise CaseError(f"{where}: key 'typing' must be a list of [regex, text] pairs")
    if case.typing and (case.input or case.input_after):
        raise CaseError(f"{where}: key 'typing' goes without 'input' and 'input_after'")
    check_keys(where, case)
    check_screens(where, case)
    if case.files and not case.programs:
        raise CaseError(f"{where}: key 'files' needs 'programs': entry 0 must be the root task")
    for name in case.programs + [f[0] for f in case.files]:
        try:
            bootimage.check_name(name)
        except ValueError as err:
            raise CaseError(f"{where}: {err}") from None
    if isinstance(case.expect_exit, str) and case.expect_exit != "nonzero":
        raise CaseError(f"{where}: key 'expect_exit' must be a number or \"nonzero\"")
    if case.timeout <= 0:
        raise CaseError(f"{where}: key 'timeout' must be positive")
    for key in ("oracle", "run"):
        commands = getattr(case, key)
        if not all(isinstance(c, str) and c.strip() and "\n" not in c and len(c) < 200 for c in commands):
            raise CaseError(f"{where}: key '{key}' must be a list of one-line commands")
        if commands and not case.system:
            raise CaseError(f"{where}: key '{key}' needs 'system' (one with the Linux personality and rootfs.cpio)")
    if case.packages not in PACKAGE_SETS:
        raise CaseError(f"{where}: key 'packages': {case.packages!r} is not a package set (known: apps)")
    if case.packages and not (case.oracle or case.run):
        raise CaseError(f"{where}: key 'packages' goes with 'oracle' or 'run'")
    if case.oracle and case.run:
        raise CaseError(f"{where}: keys 'oracle' and 'run' go in different cases")
    if case.k2 and case.oracle:
        raise CaseError(f"{where}: key 'k2' goes without 'oracle' (its Linux run boots Debian's kernel, not K2)")
    if any(m not in LINUX_MODULES for m in case.modules):
        raise CaseError(f"{where}: key 'modules': only {', '.join(LINUX_MODULES)} can be loaded")
    if case.modules and not case.oracle:
        raise CaseError(f"{where}: key 'modules' goes with 'oracle' (they are Linux's)")
    if not all(isinstance(step, str) for step in case.pre):
        raise CaseError(f"{where}: key 'pre' must be a list of step names")
    for step in case.pre:
        if steps is not None and step not in steps:
            raise CaseError(f"{where}: key 'pre': unknown step {step!r} (known: {', '.join(sorted(steps))})")
    for pattern in case.expect:
        if not isinstance(pattern, str):
            raise CaseError(f"{where}: key 'expect' must be a list of regex strings")
        try:
            re.compile(pattern)
        except re.error as err:
            raise CaseError(f"{where}: key 'expect': bad regex {pattern!r}: {err}") from None


# Raises CaseError unless `keys` is a list of [regex, keys] pairs whose regexes
# compile and whose keys are presses of known names, in a case without
# console input.
def check_keys(where: str, case: Case) -> None:
    if not all(isinstance(k, list) and len(k) == 2 and all(isinstance(x, str) for x in k) for k in case.keys):
        raise CaseError(f"{where}: key 'keys' must be a list of [regex, keys] pairs, such as "
                        "[\"ready\", \"h i shift-a ret\"]")
    if case.keys and (case.typing or case.input or case.input_after):
        raise CaseError(f"{where}: key 'keys' goes without 'typing', 'input' and 'input_after'")
    for after, keys in case.keys:
        try:
            re.compile(after)
            qemu.parse_keys(keys)
        except re.error as err:
            raise CaseError(f"{where}: key 'keys': bad regex {after!r}: {err}") from None
        except ValueError as err:
            raise CaseError(f"{where}: key 'keys': {err}") from None


# The pictures a case's `screens` may expect: name -> the colour (r, g, b)
# of the pixel at (x, y) of a screen of w by h. "fbpattern" is what
# tests/linux/fb.c draws into /dev/fb0.
SCREEN_PATTERNS = {
    "fbpattern": lambda x, y, w, h: (x * 255 // (w - 1), y * 255 // (h - 1), (x ^ y) & 0xff),
}


# Whole pictures a case's `screens` may judge: name -> a function of the
# screen's width, height and pixels (r, g, b bytes, row by row) that
# returns what is wrong with it ([] if nothing).
def android_demo_screen(w: int, h: int, px: bytes) -> list:
    """The screen of the case services/android-demo once the native
    application has ended: its panel (left) focused, "HI" typed, clicks at
    (100, 100) and (50, 300); the Linux program's (right) "OK" typed, a
    click at (400, 200). Colours and places as lib/include/draw.h draws them."""
    white, text = (255, 255, 255), (0xe0, 0xe0, 0xe0)
    native_bg, linux_bg = (0x20, 0x30, 0x50), (0x20, 0x40, 0x20)
    want = [
        ((300, 400), native_bg, "the native panel's background"),
        ((1, 240), (0xff, 0xd0, 0x00), "the native panel's frame, focused"),
        ((12, 14), white, "the native panel's title"),
        ((100, 100), white, "the native panel's first click"), ((50, 300), white, "its second click"),
        ((96, 96), white, "the first click's square"), ((95, 95), native_bg, "around the first click's square"),
        ((13, 51), text, "H typed in the native panel"), ((16, 51), native_bg, "the gap in H's top row"),
        ((31, 51), native_bg, "the corner of I"), ((34, 51), text, "I typed in the native panel"),
        ((620, 400), linux_bg, "the Linux panel's background"),
        ((321, 240), (0x40, 0xa0, 0x40), "the Linux panel's frame"),
        ((332, 14), white, "the Linux panel's title"),
        ((400, 200), white, "the Linux panel's click"),
        ((333, 51), linux_bg, "the corner of O"), ((336, 51), text, "O typed in the Linux panel"),
        ((351, 51), text, "K typed in the Linux panel"), ((354, 51), linux_bg, "the gap in K's top row"),
    ]
    wrong = []
    for (x, y), colour, what in want:
        got = tuple(px[3 * (y * w + x):3 * (y * w + x) + 3])
        if got != colour:
            wrong.append(f"({x}, {y}), {what}, is {got}, not {colour}")
    return wrong


SCREEN_CHECKS = {"android-demo": android_demo_screen}


# Raises CaseError unless `screens` is a list of [regex, pattern] pairs
# with known patterns (and, in a case with `keys`, maybe the number of the
# `keys` entry after which the screen is taken), in a case without typing
# (whose steps would interleave with them in no defined order).
def check_screens(where: str, case: Case) -> None:
    if not all(isinstance(k, list) and len(k) in (2, 3) and all(isinstance(x, str) for x in k[:2]) and
               (len(k) == 2 or (isinstance(k[2], int) and not isinstance(k[2], bool) and 0 <= k[2] <= len(case.keys)))
               for k in case.screens):
        raise CaseError(f"{where}: key 'screens' must be a list of [regex, pattern] pairs, such as "
                        "[\"fb: drawn\", \"fbpattern\"], each maybe with the number of the 'keys' entry it "
                        "comes after")
    if case.screens and (case.typing or case.input or case.input_after):
        raise CaseError(f"{where}: key 'screens' goes without 'typing', 'input' and 'input_after'")
    for after, pattern, *_ in case.screens:
        try:
            re.compile(after)
        except re.error as err:
            raise CaseError(f"{where}: key 'screens': bad regex {after!r}: {err}") from None
        if pattern not in SCREEN_PATTERNS and pattern not in SCREEN_CHECKS:
            raise CaseError(f"{where}: key 'screens': unknown pattern {pattern!r} "
                            f"(known: {', '.join([*SCREEN_PATTERNS, *SCREEN_CHECKS])})")


# Returns the combinations of a matrix table as dicts, in a stable order.
def combinations(where: str, matrix) -> list:
    if not isinstance(matrix, dict) or not matrix:
        raise CaseError(f"{where}: key 'matrix' must be a table such as {{ smp = [1, 2] }}")
    matrix = dict(matrix)
    excepts = matrix.pop("except", [])
    for key, values in matrix.items():
        if key not in MATRIX_KEYS:
            raise CaseError(f"{where}: matrix key {key!r} unknown (known: {', '.join(MATRIX_KEYS)})")
        if not isinstance(values, list) or not values:
            raise CaseError(f"{where}: matrix key {key!r} must be a non-empty list")
    if not isinstance(excepts, list) or not all(isinstance(e, dict) and e and set(e) <= set(matrix) and
                                                all(v in matrix[k] for k, v in e.items()) for e in excepts):
        raise CaseError(f"{where}: matrix key 'except' must be a list of tables of the matrix's keys and values, "
                        "such as [{ system = \"linux-user\", smp = 4 }]")
    keys = [k for k in MATRIX_KEYS if k in matrix]
    combos = [dict(zip(keys, combo)) for combo in itertools.product(*(matrix[k] for k in keys))]
    combos = [c for c in combos if not any(all(c[k] == v for k, v in e.items()) for e in excepts)]
    if not combos:
        raise CaseError(f"{where}: matrix key 'except' leaves out every combination")
    return combos


# Expands one [[case]] table (defaults already merged) into concrete cases.
def expand(where: str, table: dict, steps) -> list:
    table = dict(table)
    matrix = table.pop("matrix", None)
    if "name" not in table:
        raise CaseError(f"{where}: key 'name' is missing")
    combos = [{}] if matrix is None else combinations(f"{where} ({table['name']})", matrix)
    out = []
    for combo in combos:
        values = dict(table, **combo)
        values["name"] = table["name"] + matrix_suffix(combo)
        here = f"{where} ({values['name']})"
        check_fields(here, values)
        case = Case(**values)
        case = replace(case, expect=[fill(e, case) if isinstance(e, str) else e for e in case.expect],
                       append=fill(case.append, case), files=[list(f) for f in case.files])
        check_case(here, case, steps)
        out.append(case)
    return out


# Parses cases.toml text into a list of expanded, checked cases.
def parse_cases(text: str, label: str = "cases.toml", steps=None) -> list:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CaseError(f"{label}: {err}") from None
    for key in doc:
        if key not in ("defaults", "case"):
            raise CaseError(f"{label}: unknown top-level key {key!r} (known: defaults, case)")
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise CaseError(f"{label}: 'defaults' must be a [defaults] table")
    check_fields(f"{label}: [defaults]", defaults)
    if "name" in defaults:
        raise CaseError(f"{label}: [defaults]: key 'name' cannot have a default")
    tables = doc.get("case", [])
    if not isinstance(tables, list):
        raise CaseError(f"{label}: cases must be written as [[case]] tables")
    cases, names = [], set()
    for index, table in enumerate(tables):
        for case in expand(f"{label}: [[case]] #{index + 1}", dict(defaults, **table), steps):
            if case.name in names:
                raise CaseError(f"{label}: case name {case.name!r} is used twice")
            names.add(case.name)
            cases.append(case)
    return cases


# Reads and expands a cases.toml file.
def load_cases(path: Path, label: str | None = None, steps=None) -> list:
    return parse_cases(Path(path).read_text(encoding="utf-8"), label or str(path), steps)


# True when a -k pattern uses glob characters (and so is not a pytest -k expression).
def is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


# Returns the cases whose name contains `pattern` or matches it as a glob.
def select(cases: list, pattern: str | None) -> list:
    if not pattern:
        return list(cases)
    return [c for c in cases if pattern in c.name or fnmatch.fnmatchcase(c.name, pattern)]
