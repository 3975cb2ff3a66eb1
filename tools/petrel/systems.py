"""System descriptions: `systems/<name>.toml` says what goes into a boot image.

A system file is static, checked at build time, and turned into one PBI image
`build/images/<name>.pbi`:

    [system]
    name = "default"

    [[endpoint]]           # an IPC endpoint the root task creates
    name = "greeting"

    [[program]]            # executable ELF, in order; the first is the root task
    name = "root"
    binary = "user/root"   # its source directory (user/, tests/programs/ or
                           # bench/programs/); the Makefile builds it as
                           # build/user/<last component>.elf

    [[program]]            # started by the root task, in this order
    name = "echo"
    binary = "user/echo"
    priority = 100         # 1-255 (default 100)
    cpu = 0                # optional: the core it runs on
    args = "count=3"       # optional: its arguments
    grants = ["greeting:recv"]   # endpoint:send|recv|both, found by name in the program
    publish = ["counter"]  # optional, with a servicemgr service granted: the names
    lookup = ["counter"]   # it may register and look up there ("*": any name)

    [[file]]               # plain data file (flags 0), after all programs
    name = "etc/motd"
    path = "docs/motd.txt" # relative to the repository root (build/... too)

Every mistake names the file and the key so the message alone is enough to fix
it.
"""
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

# The services a kernel-placed service may call (kernel/include/ksvc.h KSVC_LINKS).
KSVC_LINKS = 8

from petrel import bootimage, paths

TOP_KEYS = {"system", "program", "file", "endpoint", "service"}
LIMIT_KEYS = ("memory", "threads", "handles", "spaces")
# What a program or user-placed service may use unless its entry says otherwise
# (memory counts its kernel objects and page tables too; 0 means no limit of its own).
DEFAULT_LIMITS = {"memory": 64 << 20, "threads": 256, "handles": 511, "spaces": 64}
# The most handles a process can hold: the kernel's HANDLE_MAX (18 index bits, slot 0 unused).
HANDLES_MAX = (1 << 18) - 1
SERVICE_KEYS = {"name", "interface", "placement", "priority", "cpu", "devices", "bootfiles", "calls", *LIMIT_KEYS}
PLACEMENTS = ("kernel", "user")
SYSTEM_KEYS = {"name", "machine"}
# What a system may ask of the machine `./petrel run` starts it on.
MACHINE_DEVICES = ("keyboard", "tablet", "display")
PROGRAM_KEYS = {"name", "binary", "priority", "cpu", "args", "grants", "publish", "lookup", *LIMIT_KEYS}
ROOT_KEYS = {"name", "binary"}
FILE_KEYS = {"name", "path"}
ENDPOINT_KEYS = {"name"}
GRANT_RIGHTS = ("send", "recv", "both")
MANIFEST = "system.manifest"
# The service manager's permissions (services/servicemgr), a boot file made
# from the programs' publish and lookup: "BADGE publish NAME" a line.
POLICY = "servicemgr.policy"
SERVICEMGR = "servicemgr"


class SystemConfigError(ValueError):
    """A system description is malformed or refers to something missing."""


@dataclass
class Item:
    """One boot image entry of a system: its name, source file and flags."""
    name: str
    path: Path
    flags: int


@dataclass
class Program:
    """A program the root task starts: how, and with which handles."""
    name: str
    priority: int = 100
    cpu: int | None = None
    args: str = ""
    grants: tuple = ()
    limits: tuple = tuple(DEFAULT_LIMITS.values())  # memory bytes, threads, handles, spaces (0: none)
    publish: tuple = ()     # names it may register with the service manager
    lookup: tuple = ()      # names it may look up there


@dataclass
class Service:
    """A service: its interface, where it runs, and (user placement) its thread."""
    name: str
    interface: str
    interface_id: int
    placement: str
    priority: int = 100
    cpu: int | None = None
    devices: tuple = ()         # device tree compatible strings it drives
    bootfiles: bool = False     # may read the boot image's files
    calls: tuple = ()           # services it may call
    limits: tuple = tuple(DEFAULT_LIMITS.values())  # of a user-placed instance, as Program.limits


@dataclass
class System:
    """A loaded system description."""
    name: str
    source: Path
    items: list
    endpoints: tuple = ()
    programs: tuple = ()      # every program but the root task
    services: tuple = ()
    machine: tuple = ()       # MACHINE_DEVICES a run attaches for it

    # The manifest the root task reads: endpoints, services, then programs in order.
    # The services with each one after those it calls (there is no cycle:
    # check_services), so that the root task, starting them in this order,
    # has made a callee's endpoint before it grants it to a caller.
    def services_in_call_order(self) -> list:
        by_name, order = {v.name: v for v in self.services}, []

        def visit(v):
            if v not in order:
                for c in v.calls:
                    visit(by_name[c])
                order.append(v)
        for v in self.services:
            visit(v)
        return order

    # A program's handle of a service manager is badged with its number
    # (1 on, "servicemgr:send#3"): the service knows the caller by it.
    def badge_of(self, program) -> int:
        return self.programs.index(program) + 1

    def grant_word(self, program, grant: str) -> str:
        name = grant.partition(":")[0]
        if any(v.name == name and v.interface == SERVICEMGR for v in self.services):
            return f"{grant}#{self.badge_of(program)}"
        return grant

    def policy(self) -> str:
        lines = [f"# {POLICY}: generated from {self.source.name} by tools/petrel/systems.py\n"]
        for p in self.programs:
            lines += [f"{self.badge_of(p)} publish {n}\n" for n in p.publish]
            lines += [f"{self.badge_of(p)} lookup {n}\n" for n in p.lookup]
        return "".join(lines)

    def manifest(self) -> str:
        lines = [f"# {MANIFEST}: generated from {self.source.name} by tools/petrel/systems.py\n"]
        lines += [f"endpoint {e}\n" for e in self.endpoints]
        for v in self.services_in_call_order():
            cpu = "-" if v.cpu is None else str(v.cpu)
            lines.append(f"service {v.name} {v.interface} {v.interface_id} {v.placement} {v.priority} {cpu} "
                         f"{';'.join(v.devices) or '-'} {1 if v.bootfiles else 0} {';'.join(v.calls) or '-'} "
                         f"{':'.join(map(str, v.limits))}\n")
        for p in self.programs:
            cpu = "-" if p.cpu is None else str(p.cpu)
            grants = ",".join(self.grant_word(p, g) for g in p.grants) or "-"
            limits = ":".join(map(str, p.limits))
            lines.append(f"program {p.name} {p.priority} {cpu} {limits} {grants} {p.args}".rstrip() + "\n")
        return "".join(lines)


# Raises SystemConfigError if `table` has keys outside `known`.
def check_keys(where: str, table: dict, known: set) -> None:
    for key in table:
        if key not in known:
            raise SystemConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(known))})")


# Returns table[key] as a non-empty string or raises SystemConfigError.
def need_str(where: str, table: dict, key: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise SystemConfigError(f"{where}: key {key!r} must be a non-empty string")
    return value


# Returns the list of tables under `key` ([[key]] arrays) or raises SystemConfigError.
def table_list(where: str, doc: dict, key: str) -> list:
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise SystemConfigError(f"{where}: {key!r} must be written as [[{key}]] tables")
    return value


# Resolves a [[file]] path: relative to the repository root (build/... lies inside it).
def resolve_file(path: str, repo: Path) -> Path:
    return repo / path


# Reads and checks systems/<name>.toml; returns a System (files are not read yet).
def load_system(source: Path, repo: Path = paths.REPO) -> System:
    label = paths.rel(source, repo)
    try:
        doc = tomllib.loads(Path(source).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise SystemConfigError(f"{label}: {err}") from None
    check_keys(label, doc, TOP_KEYS)
    head = doc.get("system", {})
    if not isinstance(head, dict):
        raise SystemConfigError(f"{label}: 'system' must be a [system] table")
    check_keys(f"{label}: [system]", head, SYSTEM_KEYS)
    name = need_str(f"{label}: [system]", head, "name") if "name" in head else Path(source).stem
    machine = head.get("machine", [])
    if not isinstance(machine, list) or not all(m in MACHINE_DEVICES for m in machine):
        raise SystemConfigError(f"{label}: [system] key 'machine' must be a list of {', '.join(MACHINE_DEVICES)}")
    endpoints = []
    for index, ep in enumerate(table_list(label, doc, "endpoint")):
        where = f"{label}: [[endpoint]] #{index + 1}"
        check_keys(where, ep, ENDPOINT_KEYS)
        ep_name = need_str(where, ep, "name")
        if not ep_name.replace("-", "").replace("_", "").isalnum() or len(ep_name) > 23:
            raise SystemConfigError(f"{where}: key 'name': {ep_name!r} must be letters, digits, - or _ (at most 23)")
        if ep_name in endpoints:
            raise SystemConfigError(f"{where}: key 'name': endpoint {ep_name!r} is declared twice")
        endpoints.append(ep_name)
    services = []
    for index, svc in enumerate(table_list(label, doc, "service")):
        services.append(load_service(f"{label}: [[service]] #{index + 1}", svc, endpoints, services, repo))
    check_services(label, services)
    endpoints_and_services = endpoints + [v.name for v in services]
    items, programs, used = [], [], set()
    for index, prog in enumerate(table_list(label, doc, "program")):
        where = f"{label}: [[program]] #{index + 1}"
        check_keys(where, prog, ROOT_KEYS if index == 0 else PROGRAM_KEYS)
        entry = need_str(where, prog, "name")
        binary = need_str(f"{label}: program {entry!r}", prog, "binary")
        items.append(Item(entry, paths.user_elf(Path(binary).name, repo), bootimage.FLAG_EXEC))
        if index > 0:
            programs.append(load_program(f"{label}: program {entry!r}", entry, prog, endpoints_and_services, used))
    for index, data in enumerate(table_list(label, doc, "file")):
        where = f"{label}: [[file]] #{index + 1}"
        check_keys(where, data, FILE_KEYS)
        entry = need_str(where, data, "name")
        items.append(Item(entry, resolve_file(need_str(f"{label}: file {entry!r}", data, "path"), repo), 0))
    managers = {v.name for v in services if v.interface == SERVICEMGR}
    for p in programs:
        for g in p.grants:
            granted, _, right = g.partition(":")
            if granted in managers and right != "send":
                raise SystemConfigError(f"{label}: program {p.name!r} key 'grants': {g!r}: a service manager is "
                                        f"granted :send only (its handle says who the program is)")
        if (p.publish or p.lookup) and not managers & {g.partition(":")[0] for g in p.grants}:
            key = "publish" if p.publish else "lookup"
            raise SystemConfigError(f"{label}: program {p.name!r} key {key!r}: it is granted no {SERVICEMGR} "
                                    f"service (add \"NAME:send\" of one to its grants)")
    if managers:
        items.append(Item(POLICY, None, 0))
    unused = [e for e in endpoints if e not in used]
    if unused:
        raise SystemConfigError(f"{label}: endpoint {unused[0]!r} is granted to no program")
    for v in services:
        if v.placement == "user" and not any(i.name == f"svc-{v.interface}" for i in items):
            items.append(Item(f"svc-{v.interface}", paths.user_elf(f"svc-{v.interface}", repo), bootimage.FLAG_EXEC))
    if programs or services:
        items.append(Item(MANIFEST, None, 0))
    check_items(label, items)
    return System(name, Path(source), items, tuple(endpoints), tuple(programs), tuple(services), tuple(machine))


# Checks one [[service]]: its interface exists (idl/ and services/), a
# placement, and for user placement the server thread's priority and core.
def load_service(where: str, svc: dict, endpoints: list, services: list, repo: Path) -> Service:
    check_keys(where, svc, SERVICE_KEYS)
    name = need_str(where, svc, "name")
    if name in endpoints or any(v.name == name for v in services):
        raise SystemConfigError(f"{where}: key 'name': {name!r} is already an endpoint or service")
    interface = need_str(where, svc, "interface")
    idl = repo / "idl" / f"{interface}.toml"
    if not idl.exists() or not (repo / "services" / interface).is_dir():
        raise SystemConfigError(f"{where}: key 'interface': {interface!r} needs idl/{interface}.toml and "
                                f"services/{interface}/")
    from petrel import idlc
    try:
        interface_id = idlc.load(idl).id
    except idlc.IdlError as err:
        raise SystemConfigError(f"{where}: key 'interface': {err}") from None
    placement = svc.get("placement")
    if placement not in PLACEMENTS:
        raise SystemConfigError(f"{where}: key 'placement' must be \"kernel\" or \"user\"")
    prog = load_program(where, name, {k: v for k, v in svc.items() if k in ("priority", "cpu", *LIMIT_KEYS)}, [], set())
    devices, calls = svc.get("devices", []), svc.get("calls", [])
    for key, value in (("devices", devices), ("calls", calls)):
        if not isinstance(value, list) or not all(isinstance(x, str) and x and ";" not in x and " " not in x
                                                  and len(x) < 40 for x in value):
            raise SystemConfigError(f"{where}: key {key!r} must be a list of names without spaces or ';'")
    for d in devices:
        kind, nth = device_kind(d)
        if nth is None or (nth and not kind.startswith("virtio-")):
            raise SystemConfigError(f"{where}: key 'devices': {d!r}: only a virtio type takes a number, as "
                                    f"virtio-input#1 (the second virtio-input device by address)")
        if nth and placement == "kernel":
            raise SystemConfigError(f"{where}: key 'devices': {d!r}: a service placed in the kernel drives the "
                                    f"first device of its kind ({kind}); place it in user space to drive another")
    bootfiles = svc.get("bootfiles", interface == SERVICEMGR)
    if not isinstance(bootfiles, bool):
        raise SystemConfigError(f"{where}: key 'bootfiles' must be true or false")
    if interface == SERVICEMGR and not bootfiles:
        raise SystemConfigError(f"{where}: key 'bootfiles': the service manager reads its policy from the "
                                f"boot image ({POLICY}): it cannot be false")
    return Service(name, interface, interface_id, placement, prog.priority, prog.cpu, tuple(devices), bootfiles,
                   tuple(calls), prog.limits)


# A `devices` entry's kind and number: "virtio-input#1" is ("virtio-input",
# 1), the second device of that type by address; a name without "#N" is
# number 0; a malformed number gives None.
def device_kind(name: str) -> tuple:
    kind, hash_, nth = name.partition("#")
    if not hash_:
        return kind, 0
    return kind, int(nth) if re.fullmatch(r"[0-9]{1,2}", nth) else None


# Checks across services: each device driven by one service only, calls name
# services, and no service waits on itself through a chain of calls.
def check_services(label: str, services: list) -> None:
    owner, names = {}, {v.name for v in services}
    placed = {v.name: v.placement for v in services}
    for v in services:
        for d in v.devices:
            if device_kind(d) in owner:
                raise SystemConfigError(f"{label}: device {d!r} is given to both {owner[device_kind(d)]!r} and "
                                        f"{v.name!r}")
            owner[device_kind(d)] = v.name
        for c in v.calls:
            if c not in names:
                raise SystemConfigError(f"{label}: service {v.name!r} key 'calls': {c!r} is not a [[service]]")
        user = [c for c in v.calls if placed[c] != "kernel"]
        if v.placement == "kernel" and user:
            raise SystemConfigError(f"{label}: service {v.name!r} is placed in the kernel and calls "
                                    f"{', '.join(user)}, placed in user space: a kernel-placed service calls "
                                    f"only kernel-placed services")
        if v.placement == "kernel" and len(v.calls) > KSVC_LINKS:
            raise SystemConfigError(f"{label}: service {v.name!r} is placed in the kernel and calls "
                                    f"{len(v.calls)} services: at most {KSVC_LINKS}")
    calls = {v.name: v.calls for v in services}

    def visit(name, path):
        if name in path:
            cycle = " -> ".join(path[path.index(name):] + [name])
            raise SystemConfigError(f"{label}: services call each other in a cycle: {cycle}")
        for c in calls.get(name, ()):
            visit(c, path + [name])
    for v in services:
        visit(v.name, [])
    in_kernel = {}
    for v in services:
        if v.placement == "kernel" and v.interface in in_kernel:
            raise SystemConfigError(f"{label}: services {in_kernel[v.interface]!r} and {v.name!r} both place the "
                                    f"{v.interface} interface in the kernel, which holds one instance of each "
                                    f"interface: place one of them in user space")
        if v.placement == "kernel":
            in_kernel[v.interface] = v.name


# Checks one started program's priority, core, arguments and grants.
def load_program(where: str, name: str, prog: dict, endpoints: list, used: set) -> Program:
    priority = prog.get("priority", 100)
    if not isinstance(priority, int) or isinstance(priority, bool) or not 1 <= priority <= 255:
        raise SystemConfigError(f"{where}: key 'priority' must be a number from 1 to 255")
    cpu = prog.get("cpu")
    if cpu is not None and (not isinstance(cpu, int) or isinstance(cpu, bool) or not 0 <= cpu < 8):
        raise SystemConfigError(f"{where}: key 'cpu' must be a core number from 0 to 7")
    args = prog.get("args", "")
    if not isinstance(args, str) or "\n" in args or len(args) > 200:
        raise SystemConfigError(f"{where}: key 'args' must be one line of at most 200 characters")
    grants = prog.get("grants", [])
    if not isinstance(grants, list) or not all(isinstance(g, str) for g in grants):
        raise SystemConfigError(f"{where}: key 'grants' must be a list of \"endpoint:right\" strings")
    seen = set()
    for g in grants:
        ep, _, right = g.partition(":")
        if ep not in endpoints:
            raise SystemConfigError(f"{where}: key 'grants': {g!r} names no [[endpoint]] (declared: "
                                    f"{', '.join(endpoints) or 'none'})")
        if right not in GRANT_RIGHTS:
            raise SystemConfigError(f"{where}: key 'grants': {g!r} must end in :send, :recv or :both")
        if ep in seen:
            raise SystemConfigError(f"{where}: key 'grants': endpoint {ep!r} is granted twice")
        seen.add(ep)
        used.add(ep)
    limits = [parse_size(where, prog.get("memory", DEFAULT_LIMITS["memory"]))]
    for key, top in (("threads", 100000), ("handles", HANDLES_MAX), ("spaces", 100000)):
        value = prog.get(key, DEFAULT_LIMITS[key])
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
            raise SystemConfigError(f"{where}: key {key!r} must be a number from 0 (no limit) to {top}")
        limits.append(value)
    names = {}
    for key in ("publish", "lookup"):
        value = prog.get(key, [])
        if not isinstance(value, list) or not all(isinstance(n, str) and valid_object_name(n) for n in value):
            raise SystemConfigError(f"{where}: key {key!r} must be a list of names of 1 to 32 letters, digits, "
                                    f"'.', '-' or '_', or \"*\" for any")
        names[key] = tuple(value)
    return Program(name, priority, cpu, args, tuple(grants), tuple(limits), names["publish"], names["lookup"])


def valid_object_name(name: str) -> bool:
    return name == "*" or (0 < len(name) <= 32 and all(c.isascii() and (c.isalnum() or c in ".-_") for c in name))


# A memory size: bytes, or a string with K, M or G ("4M"); a multiple of 4 KiB.
def parse_size(where: str, value) -> int:
    if isinstance(value, str):
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        number, unit = value[:-1], value[-1:].upper()
        if unit not in units or not number.isdigit():
            raise SystemConfigError(f"{where}: key 'memory' must be bytes or a size such as \"4M\"")
        value = int(number) * units[unit]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value % 4096:
        raise SystemConfigError(f"{where}: key 'memory' must be a multiple of 4 KiB")
    return value


# Checks entry names (charset, length, duplicates) and that a program comes first.
def check_items(label: str, items: list) -> None:
    if not items or not items[0].flags & bootimage.FLAG_EXEC:
        raise SystemConfigError(f"{label}: needs at least one [[program]]: the first is the root task")
    seen = set()
    for item in items:
        try:
            bootimage.check_name(item.name)
        except ValueError as err:
            raise SystemConfigError(f"{label}: key 'name': {err}") from None
        if item.name in seen:
            raise SystemConfigError(f"{label}: key 'name': {item.name!r} is used twice")
        seen.add(item.name)


# Function symbols defined in an ELF file (its symbol table).
def elf_functions(data: bytes) -> set:
    import struct
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return set()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _name, stype, _f, _a, off, size, link, _i, _al, entsize in sections:
        if stype != 2 or not entsize:                   # SHT_SYMTAB
            continue
        stroff = sections[link][4]
        for at in range(off, off + size, entsize):
            st_name, st_info = struct.unpack_from("<IB", data, at)
            if st_info & 0xf == 2:                      # STT_FUNC
                end = data.index(b"\0", stroff + st_name)
                names.add(data[stroff + st_name:end].decode(errors="replace"))
    return names


# The interfaces (idl/*.toml) whose client proxies a program's binary calls.
def called_interfaces(data: bytes, repo: Path) -> dict:
    from petrel import idlc
    funcs, found = elf_functions(data), {}
    for idl in sorted((repo / "idl").glob("*.toml")):
        if idl.name == "syscalls.toml":
            continue
        try:
            itf = idlc.load(idl)
        except idlc.IdlError:
            continue
        if itf.objects:
            continue        # objects a program serves: reached through the service manager, not granted
        used = [f"{itf.name}_{m.name}" for m in itf.methods if f"{itf.name}_{m.name}" in funcs]
        if used:
            found[itf.name] = used[0]
    return found


# A program calling a service's interface must be granted such a service.
def check_calls(label: str, system: System, name: str, data: bytes, repo: Path) -> None:
    program = next((p for p in system.programs if p.name == name), None)
    if program is None:
        return
    granted = {g.partition(":")[0] for g in program.grants}
    have = {v.interface for v in system.services if v.name in granted}
    for interface, symbol in called_interfaces(data, repo).items():
        if interface not in have:
            raise SystemConfigError(f"{label}: program {name!r} calls the {interface} interface ({symbol}) "
                                    f"but is granted no {interface} service")


# Reads every item's file; returns bootimage entries or raises SystemConfigError.
def read_entries(system: System, repo: Path = paths.REPO) -> list:
    label = paths.rel(system.source, repo)
    entries = []
    for item in system.items:
        if item.path is None and item.name == MANIFEST:
            entries.append((item.name, system.manifest().encode(), 0))
            continue
        if item.path is None and item.name == POLICY:
            entries.append((item.name, system.policy().encode(), 0))
            continue
        kind = "binary" if item.flags & bootimage.FLAG_EXEC else "path"
        try:
            data = item.path.read_bytes()
        except OSError:
            hint = (" (not built? is there a main.c for it under user/, tests/programs/ or bench/programs/?)"
                    if kind == "binary" else "")
            raise SystemConfigError(f"{label}: {item.name!r} key {kind!r}: {paths.rel(item.path, repo)} "
                               f"does not exist{hint}") from None
        if item.flags & bootimage.FLAG_EXEC:
            check_calls(label, system, item.name, data, repo)
        entries.append((item.name, data, item.flags))
    return entries


# Packs system file `source` into build/images/<name>.pbi; returns the image path.
def pack_system(source: Path, repo: Path = paths.REPO) -> Path:
    system = load_system(source, repo)
    out = paths.system_image(system.name, repo)
    entries = read_entries(system, repo)
    try:
        bootimage.write_image(out, entries)
    except ValueError as err:
        raise SystemConfigError(f"{paths.rel(source, repo)}: {err}") from None
    return out


# Packs every systems/*.toml; returns the written image paths.
def pack_all(repo: Path = paths.REPO) -> list:
    return [pack_system(src, repo) for src in sorted((repo / "systems").glob("*.toml"))]
