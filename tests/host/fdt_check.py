"""A small, strict flattened device tree validator for the host tests.

It states what "a well-formed FDT" means for Petrel's fixtures: every check a
careful kernel parser must make before trusting a blob. The dtb fixture tests
use it to show that good.dtb passes and every broken variant is rejected for
the reason it was broken for.

`check(blob)` returns None for a good blob and raises FdtError otherwise.
"""
import struct

MAGIC = 0xD00DFEED
HEADER = struct.Struct(">10I")
FIELDS = ("magic", "totalsize", "off_dt_struct", "off_dt_strings", "off_mem_rsvmap",
          "version", "last_comp_version", "boot_cpuid_phys", "size_dt_strings", "size_dt_struct")
BEGIN_NODE, END_NODE, PROP, NOP, END = 1, 2, 3, 4, 9
MAX_DEPTH = 64  # as Linux's FDT_MAX_DEPTH


class FdtError(ValueError):
    """The blob is not a well-formed flattened device tree."""


# Checks the header fields and block bounds; returns the header as a dict.
def check_header(blob: bytes) -> dict:
    if len(blob) < HEADER.size:
        raise FdtError("shorter than the header")
    h = dict(zip(FIELDS, HEADER.unpack_from(blob, 0)))
    if h["magic"] != MAGIC:
        raise FdtError(f"bad magic {h['magic']:#x}")
    if h["version"] < 16 or h["last_comp_version"] > 17:
        raise FdtError(f"unsupported version {h['version']} (last compatible {h['last_comp_version']})")
    if not HEADER.size <= h["totalsize"] <= len(blob):
        raise FdtError(f"totalsize {h['totalsize']:#x} but {len(blob):#x} bytes present")
    if h["off_mem_rsvmap"] % 8 or h["off_dt_struct"] % 4:
        raise FdtError("misaligned memory reservation or structure block")
    for name, off, size in (("structure", h["off_dt_struct"], h["size_dt_struct"]),
                            ("strings", h["off_dt_strings"], h["size_dt_strings"]),
                            ("reservation", h["off_mem_rsvmap"], 16)):
        if off < HEADER.size or off + size > h["totalsize"]:
            raise FdtError(f"{name} block [{off:#x}, {off + size:#x}) outside the blob")
    return h


# Checks that the memory reservation map ends with a zero entry inside the blob.
def check_rsvmap(blob: bytes, h: dict) -> None:
    pos = h["off_mem_rsvmap"]
    while pos + 16 <= h["totalsize"]:
        if struct.unpack_from(">QQ", blob, pos) == (0, 0):
            return
        pos += 16
    raise FdtError("memory reservation map has no terminating entry")


# Returns the property name at `nameoff` of the strings block, checking bounds.
def prop_name(blob: bytes, h: dict, nameoff: int) -> str:
    if nameoff >= h["size_dt_strings"]:
        raise FdtError(f"property name offset {nameoff:#x} outside the strings block")
    start = h["off_dt_strings"] + nameoff
    end = blob.find(b"\0", start, h["off_dt_strings"] + h["size_dt_strings"])
    if end < 0:
        raise FdtError("property name not NUL-terminated inside the strings block")
    return blob[start:end].decode("ascii", "replace")


# Walks the structure block token by token, checking nesting and bounds.
def check_struct(blob: bytes, h: dict) -> None:
    pos, end = h["off_dt_struct"], h["off_dt_struct"] + h["size_dt_struct"]
    depth, roots = 0, 0
    while pos + 4 <= end:
        token = struct.unpack_from(">I", blob, pos)[0]
        if token == BEGIN_NODE:
            name_end = blob.find(b"\0", pos + 4, end)
            if name_end < 0:
                raise FdtError(f"node name at {pos:#x} not terminated")
            if depth == 0:
                roots += 1
                if roots > 1:
                    raise FdtError("more than one root node")
            depth += 1
            if depth > MAX_DEPTH:
                raise FdtError(f"nodes nest deeper than {MAX_DEPTH}")
            pos = (name_end + 1 + 3) & ~3
        elif token == END_NODE:
            if depth == 0:
                raise FdtError(f"FDT_END_NODE without a node at {pos:#x}")
            depth -= 1
            pos += 4
        elif token == PROP:
            if depth == 0 or pos + 12 > end:
                raise FdtError(f"property at {pos:#x} outside a node or the block")
            length, nameoff = struct.unpack_from(">II", blob, pos + 4)
            if pos + 12 + length > end:
                raise FdtError(f"property at {pos:#x}: value of {length:#x} bytes runs past the block")
            prop_name(blob, h, nameoff)
            pos = (pos + 12 + length + 3) & ~3
        elif token == NOP:
            pos += 4
        elif token == END:
            if depth or not roots:
                raise FdtError(f"FDT_END at {pos:#x} with {depth} node(s) open")
            return
        else:
            raise FdtError(f"unknown token {token:#x} at {pos:#x}")
    raise FdtError("structure block ends without FDT_END")


# Raises FdtError unless `blob` is a well-formed flattened device tree.
def check(blob: bytes) -> None:
    h = check_header(blob)
    check_rsvmap(blob, h)
    check_struct(blob, h)
