"""The TLB budget of a system (the hybrid kernel paper, section 3.3).

For every address space a system description creates — the root task, each
program, each user-placed service — this counts the translations its
mappings need at their page sizes (4 KiB pages one entry each, 64 KiB
contiguous-hint pages one per 64 KiB, 2 MiB blocks one each), and adds the
kernel's own (its image in 64 KiB contiguous-hint pages, its stacks in
4 KiB pages; the direct map of RAM in 2 MiB blocks is not counted, as it
is only touched in the kernel). The
total is set against the main TLB of the configured core, so a designer can
see whether the working set of every process fits without TLB misses, and
which mapping to move to larger pages if it does not.

`./petrel tlb [--system NAME] [--cpu cortex-a53]` prints the report and
writes build/tlb/<system>.md.
"""
import struct
import sys
from pathlib import Path

from petrel import paths, systems

# Main (unified, second-level) TLB entries, from the cores' Technical Reference Manuals.
TLB_ENTRIES = {"cortex-a53": 512, "cortex-a72": 1024}
STACK = 0x10000               # each main thread's stack (user/rt/spawn.c, kernel/core/task.c)
SERVICE_STATE = 0x200000      # a supervised service's state object (user/root)
PAGE = 4096


# PT_LOAD segments of an ELF file: [(vaddr, memsz, flags)].
def load_segments(path: Path) -> list:
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segs = []
    for i in range(phnum):
        ptype, flags, _off, vaddr, _pa, _filesz, memsz, _align = struct.unpack_from("<IIQQQQQQ", data,
                                                                                   phoff + i * phentsize)
        if ptype == 1 and memsz:
            segs.append((vaddr, memsz, flags))
    return segs


# The values of the named symbols in the ELF file `path` ({name: value}).
def symbols(path: Path, names: set) -> dict:
    data = path.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    found = {}
    for i in range(shnum):
        _name, stype, _fl, _addr, off, size, link, _info, _al, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        if stype != 2 or not entsize:                       # SHT_SYMTAB
            continue
        stroff = struct.unpack_from("<IIQQQQ", data, shoff + link * shentsize)[4]
        for j in range(size // entsize):
            sname, _i, _o, _s, value, _sz = struct.unpack_from("<IBBHQQ", data, off + j * entsize)
            end = data.index(b"\0", stroff + sname)
            name = data[stroff + sname:end].decode("ascii", "replace")
            if name in names:
                found[name] = value
    missing = names - found.keys()
    if missing:
        raise ValueError(f"{path}: no symbol {', '.join(sorted(missing))}")
    return found


# The TLB entries of [va, va + size) mapped as the kernel maps its image
# (mmu_map_range with MAP_CONT): a 64 KiB page wherever one is aligned and
# fits, 4 KiB pages elsewhere.
def cont_entries(va: int, size: int) -> int:
    n, end = 0, va + size
    while va < end:
        step = 0x10000 if va % 0x10000 == 0 and end - va >= 0x10000 else PAGE
        n, va = n + 1, va + step
    return n


# The pages the kernel maps of its stacks: per slot the emergency stack and
# the stack (arch/kstack.h: a slot is two stack sizes, its guards unmapped).
def stack_pages(start: int, end: int, kstack: int) -> int:
    touched = set()
    for slot in range(start, end - 2 * kstack + 1, 2 * kstack):
        touched.update(range((slot + PAGE) // PAGE, (slot + 2 * PAGE) // PAGE))
        touched.update(range((slot + kstack) // PAGE, (slot + 2 * kstack) // PAGE))
    return len(touched)


# CONFIG_KSTACK_SIZE of the built kernel (0: not known).
def kstack_size(repo: Path) -> int:
    import re
    conf = paths.build_dir(repo) / "gen" / "kernel" / "autoconf.h"
    m = re.search(r"^#define CONFIG_KSTACK_SIZE (\d+)$", conf.read_text(), re.M) if conf.exists() else None
    return int(m.group(1)) if m else 0


def pages(vaddr: int, size: int, page: int = PAGE) -> int:
    start, end = vaddr // page * page, (vaddr + size + page - 1) // page * page
    return (end - start) // page


def flags_str(f: int) -> str:
    return ("r" if f & 4 else "-") + ("w" if f & 2 else "-") + ("x" if f & 1 else "-")


# Rows [(space, mapping, size, page size, entries)] for one program's ELF.
def program_rows(name: str, elf: Path, extra: list) -> list:
    rows = []
    for vaddr, memsz, flags in load_segments(elf):
        rows.append((name, f"segment {flags_str(flags)} at 0x{vaddr:x}", memsz, "4 KiB", pages(vaddr, memsz)))
    rows.append((name, "stack", STACK, "4 KiB", STACK // PAGE))
    rows.append((name, "UTCB, start information", 2 * PAGE, "4 KiB", 2))
    rows += extra
    return rows


def budget(system_path: Path, cpu: str, repo: Path = paths.REPO) -> tuple:
    system = systems.load_system(system_path, repo)
    rows = []
    for item in system.items:
        if item.path is None or not item.flags:
            continue
        extra = []
        service = next((v for v in system.services if f"svc-{v.interface}" == item.name), None)
        if service:
            extra.append((item.name, "durable state (one 2 MiB page)", SERVICE_STATE, "2 MiB", 1))
            extra.append((item.name, "the monitor's enabled bits (trace header)", PAGE, "4 KiB", 1))
        rows += program_rows(item.name, item.path, extra)
    kernel = paths.kernel_elf("kernel", repo)
    sym = symbols(kernel, {"__kernel_start", "__text_end", "__rodata_end", "__data_end", "__kernel_end"})
    for what, lo, hi in (("text r-x", "__kernel_start", "__text_end"), ("rodata r--", "__text_end", "__rodata_end"),
                         ("data and bss rw-", "__rodata_end", "__data_end")):
        size = sym[hi] - sym[lo]
        rows.append(("kernel", f"image {what}", size, "64 KiB", cont_entries(sym[lo], size)))
    kstack, size = kstack_size(repo), sym["__kernel_end"] - sym["__data_end"]
    if kstack:
        rows.append(("kernel", "stacks rw- (guard pages unmapped)", size, "4 KiB",
                     stack_pages(sym["__data_end"], sym["__kernel_end"], kstack)))
    else:                                       # (no configuration: the guards counted too, at most)
        rows.append(("kernel", "stacks rw- (stack size unknown: every page)", size, "4 KiB",
                     pages(sym["__data_end"], size)))
    for v in system.services:
        if v.placement == "kernel":
            rows.append(("kernel", f"service {v.name} (in the kernel image)", 0, "-", 0))
    return system, rows, TLB_ENTRIES[cpu]


def report(system, rows, tlb: int, cpu: str) -> str:
    out = [f"# TLB budget of system `{system.name}` on {cpu}\n\n",
           f"From `./petrel tlb --system {system.name} --cpu {cpu}`. One TLB entry per 4 KiB page, per "
           f"64 KiB contiguous-hint page and per 2 MiB block; {cpu}'s main TLB holds {tlb} entries.\n\n",
           "| address space | mapping | size | page size | TLB entries |\n|---|---|---:|---|---:|\n"]
    per_space = {}
    for space, what, size, page, n in rows:
        out.append(f"| {space} | {what} | {size:,} | {page} | {n} |\n")
        per_space[space] = per_space.get(space, 0) + n
    total = sum(per_space.values())
    out.append("\n| address space | TLB entries |\n|---|---:|\n")
    for space, n in per_space.items():
        out.append(f"| {space} | {n} |\n")
    kernel = per_space.get("kernel", 0)
    biggest = max((n for s, n in per_space.items() if s != "kernel"), default=0)
    out.append(f"| **all** | **{total}** |\n\n")
    out.append(f"All mappings together need {total} entries of {tlb} "
               f"({'they fit' if total <= tlb else 'they do not fit'}); the largest address space together "
               f"with the kernel needs {biggest + kernel}.\n")
    return "".join(out)


def main(system: str, cpu: str, repo: Path = paths.REPO) -> int:
    path = repo / "systems" / f"{system}.toml"
    if cpu not in TLB_ENTRIES:
        print(f"tlb: unknown cpu {cpu!r}", file=sys.stderr)
        return 2
    try:
        sysd, rows, tlb = budget(path, cpu, repo)
    except (systems.SystemConfigError, ValueError, OSError) as err:
        print(f"tlb: {err}", file=sys.stderr)
        return 1
    text = report(sysd, rows, tlb, cpu)
    out = paths.build_dir(repo) / "tlb" / f"{sysd.name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"tlb: wrote {paths.rel(out, repo)}")
    return 0
