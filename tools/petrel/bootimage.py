"""The PBI boot image: the files the kernel receives through QEMU's -initrd.

Layout (all integers little-endian):

    header   32 bytes   magic "PETRELBI", version u32 = 1, count u32,
                        total_size u64 (whole image), reserved u64 = 0
    entries  64 bytes   name[40] (NUL-padded, <= 39 bytes of [A-Za-z0-9._/-]),
             each       offset u64, size u64, flags u32, reserved u32 = 0
    data                each file starts on a 4096-byte boundary, zeros between;
                        total_size is a multiple of 4096

Entry 0 is the root task, the program the kernel starts; it must be an
executable ELF (flag bit 0). Page-aligned data lets the kernel map files
straight into a task's address space without copying.

`unpack` checks everything the kernel's loader relies on, so the host tests
describe exactly which images the kernel may assume never reach it from our
tools (the kernel must still check, the image is input).

Command line: `python -m petrel.bootimage list IMAGE`.
"""
import argparse
import os
import re
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"PETRELBI"
VERSION = 1
PAGE = 4096
HEADER = struct.Struct("<8sIIQQ")
ENTRY = struct.Struct("<40sQQII")
NAME_FIELD = 40
NAME_MAX = NAME_FIELD - 1
FLAG_EXEC = 1 << 0
KNOWN_FLAGS = FLAG_EXEC
NAME_RE = re.compile(r"[A-Za-z0-9._/-]+")
ELF_MACHINE_AARCH64 = 183

assert HEADER.size == 32 and ENTRY.size == 64


@dataclass
class Entry:
    """One file of a boot image, as found by `unpack`."""
    name: str
    offset: int
    size: int
    flags: int
    data: bytes


# Rounds `n` up to the next multiple of the page size.
def page_align(n: int) -> int:
    return (n + PAGE - 1) // PAGE * PAGE


# Raises ValueError unless `name` is a valid entry name; returns its UTF-8 bytes.
def check_name(name: str) -> bytes:
    if not isinstance(name, str) or not name:
        raise ValueError(f"entry name {name!r}: must be a non-empty string")
    if not NAME_RE.fullmatch(name):
        raise ValueError(f"entry name {name!r}: only letters, digits and . _ / - are allowed")
    raw = name.encode("utf-8")
    if len(raw) > NAME_MAX:
        raise ValueError(f"entry name {name!r}: {len(raw)} bytes, at most {NAME_MAX} allowed")
    return raw


# Raises ValueError unless `data` looks like a 64-bit little-endian AArch64 ELF.
def check_elf(name: str, data: bytes) -> None:
    if len(data) < 20 or data[:4] != b"\x7fELF":
        raise ValueError(f"entry {name!r} is flagged executable but is not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ValueError(f"entry {name!r}: not a 64-bit little-endian ELF")
    machine = struct.unpack_from("<H", data, 18)[0]
    if machine != ELF_MACHINE_AARCH64:
        raise ValueError(f"entry {name!r}: ELF machine {machine}, expected AArch64 (183)")


# Checks a list of (name, data, flags) before packing: names, flags, root task.
def check_entries(entries: list) -> None:
    if not entries:
        raise ValueError("a boot image needs at least one entry: entry 0 is the root task")
    seen = set()
    for index, item in enumerate(entries):
        if len(item) != 3:
            raise ValueError(f"entry {index}: expected (name, data, flags), got {item!r}")
        name, data, flags = item
        check_name(name)
        if name in seen:
            raise ValueError(f"entry name {name!r} appears twice")
        seen.add(name)
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError(f"entry {name!r}: data must be bytes")
        if not isinstance(flags, int) or flags < 0 or flags & ~KNOWN_FLAGS:
            raise ValueError(f"entry {name!r}: unknown flags {flags!r}")
        if flags & FLAG_EXEC:
            check_elf(name, data)
    if not entries[0][2] & FLAG_EXEC:
        raise ValueError(f"entry 0 ({entries[0][0]!r}) is the root task and must be an executable ELF")


# Packs (name, data, flags) entries into a boot image and returns its bytes.
def pack(entries: list) -> bytes:
    check_entries(entries)
    table_end = HEADER.size + ENTRY.size * len(entries)
    offsets, offset = [], page_align(table_end)
    for _, data, _ in entries:
        offsets.append(offset)
        offset = page_align(offset + len(data))
    image = bytearray(offset)
    HEADER.pack_into(image, 0, MAGIC, VERSION, len(entries), offset, 0)
    for index, ((name, data, flags), start) in enumerate(zip(entries, offsets)):
        ENTRY.pack_into(image, HEADER.size + index * ENTRY.size,
                        name.encode("utf-8"), start, len(data), flags, 0)
        image[start : start + len(data)] = data
    return bytes(image)


# Decodes and checks the NUL-padded name field of entry `index`.
def decode_name(field: bytes, index: int) -> str:
    end = field.find(b"\0")
    if end < 0:
        raise ValueError(f"entry {index}: name is not NUL-terminated")
    if any(field[end:]):
        raise ValueError(f"entry {index}: name padding is not all zero")
    try:
        name = field[:end].decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"entry {index}: name is not UTF-8") from None
    try:
        check_name(name)
    except ValueError as err:
        raise ValueError(f"entry {index}: {err}") from None
    return name


# Parses and validates a boot image; returns its entries or raises ValueError.
def unpack(data: bytes) -> list:
    if len(data) < HEADER.size:
        raise ValueError(f"image is {len(data)} bytes, shorter than the {HEADER.size}-byte header")
    magic, version, count, total, reserved = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise ValueError(f"bad magic {magic!r}, expected {MAGIC!r}")
    if version != VERSION:
        raise ValueError(f"unsupported version {version}, expected {VERSION}")
    if reserved:
        raise ValueError("header reserved field is not zero")
    if total != len(data):
        raise ValueError(f"header total_size {total} does not match the image length {len(data)}")
    if total % PAGE:
        raise ValueError(f"total_size {total} is not a multiple of {PAGE}")
    if count == 0:
        raise ValueError("image has no entries (entry 0 must be the root task)")
    table_end = HEADER.size + ENTRY.size * count
    if table_end > total:
        raise ValueError(f"entry table of {count} entries does not fit in the image")
    entries, names = [], set()
    for index in range(count):
        field, offset, size, flags, res = ENTRY.unpack_from(data, HEADER.size + index * ENTRY.size)
        name = decode_name(field, index)
        where = f"entry {index} ({name!r})"
        if name in names:
            raise ValueError(f"{where}: duplicate name")
        names.add(name)
        if res:
            raise ValueError(f"{where}: reserved field is not zero")
        if flags & ~KNOWN_FLAGS:
            raise ValueError(f"{where}: unknown flags {flags:#x}")
        if offset % PAGE:
            raise ValueError(f"{where}: offset {offset:#x} is not page-aligned")
        if offset < table_end:
            raise ValueError(f"{where}: offset {offset:#x} overlaps the header or entry table")
        if offset + size > total:
            raise ValueError(f"{where}: data [{offset:#x}, {offset + size:#x}) runs past the image end {total:#x}")
        blob = bytes(data[offset : offset + size])
        if flags & FLAG_EXEC:
            check_elf(name, blob)
        entries.append(Entry(name, offset, size, flags, blob))
    check_overlaps(entries)
    if not entries[0].flags & FLAG_EXEC:
        raise ValueError(f"entry 0 ({entries[0].name!r}) is the root task and must be an executable ELF")
    return entries


# Raises ValueError if the data ranges of two entries overlap.
def check_overlaps(entries: list) -> None:
    spans = sorted((e.offset, e.offset + e.size, e.name) for e in entries if e.size)
    for (_, end_a, name_a), (start_b, _, name_b) in zip(spans, spans[1:]):
        if start_b < end_a:
            raise ValueError(f"entries {name_a!r} and {name_b!r} overlap")


# Packs `entries` and writes the image to `path`, creating its directory.
# An image already as packed is left alone; a new one appears whole (a
# temporary file of its own renamed over it), also while another build
# writes the same image.
def write_image(path, entries: list) -> None:
    image = pack(entries)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.stat().st_size == len(image) and path.read_bytes() == image:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# Returns a human-readable table of an image's entries.
def format_listing(entries: list) -> str:
    lines = [f"{'#':>3}  {'name':<39} {'offset':>10} {'size':>10}  flags"]
    for index, e in enumerate(entries):
        kind = "exec" if e.flags & FLAG_EXEC else "data"
        lines.append(f"{index:>3}  {e.name:<39} {e.offset:>#10x} {e.size:>10}  {kind}")
    return "\n".join(lines)


# Command line entry: `python -m petrel.bootimage list IMAGE`.
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m petrel.bootimage",
                                     description="Inspect Petrel boot images (.pbi).")
    sub = parser.add_subparsers(dest="command", required=True)
    lister = sub.add_parser("list", help="check an image and print its entries")
    lister.add_argument("image", help="path of a .pbi file")
    args = parser.parse_args(argv)
    try:
        entries = unpack(Path(args.image).read_bytes())
    except (OSError, ValueError) as err:
        print(f"{args.image}: {err}", file=sys.stderr)
        return 1
    print(format_listing(entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
