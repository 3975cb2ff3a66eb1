"""Device tree fixtures: one good flattened device tree and many broken ones.

The kernel parses the device tree QEMU hands it, and the guest tests also feed
it deliberately malformed blobs (as boot image files) to prove that bad input
gets an error, never a crash. This module compiles `tests/guest/dtb/good.dts`
with dtc and derives each broken variant from the good blob by parsing its
header and structure block, so the mutations follow whatever good.dts holds.

Output (build/test/dtb/):
    good.dtb                the compiled good tree
    <variant>.dtb           one file per entry of MUTATIONS, plus deep-nesting.dtb
    manifest.txt            "<file> ok|bad" per line: what a parser must say

FDT format reference: the Devicetree Specification, chapter 5 (header of ten
big-endian u32, memory reservation block, structure block of tokens,
strings block).

Command line: `python -m petrel.dtbfixtures [--dts FILE] [--out DIR]`.
"""
import argparse
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from petrel import paths

MAGIC = 0xD00DFEED
FIELDS = ("magic", "totalsize", "off_dt_struct", "off_dt_strings", "off_mem_rsvmap",
          "version", "last_comp_version", "boot_cpuid_phys", "size_dt_strings", "size_dt_struct")
HEADER = struct.Struct(">10I")
BEGIN_NODE, END_NODE, PROP, NOP, END = 1, 2, 3, 4, 9
UNDEFINED_TOKEN = 5
DEEP_NESTING = 100


# Returns the header of an FDT blob as a dict of field name -> value.
def read_header(blob: bytes) -> dict:
    return dict(zip(FIELDS, HEADER.unpack_from(blob, 0)))


# Returns a copy of `blob` with some header fields replaced.
def with_header(blob: bytes, **changes) -> bytes:
    header = read_header(blob)
    for key in changes:
        if key not in header:
            raise KeyError(f"no FDT header field {key!r}")
    header.update(changes)
    return HEADER.pack(*(header[f] for f in FIELDS)) + blob[HEADER.size :]


# Returns a copy of `blob` with the u32 at `offset` replaced by `value`.
def put_u32(blob: bytes, offset: int, value: int) -> bytes:
    out = bytearray(blob)
    struct.pack_into(">I", out, offset, value)
    return bytes(out)


# Rounds up to a multiple of 4 (structure block alignment).
def align4(n: int) -> int:
    return (n + 3) & ~3


# Yields (offset, token) for every token of a well-formed blob's structure block,
# ending with FDT_END. Only for trusted input (our own good.dtb).
def tokens(blob: bytes):
    header = read_header(blob)
    pos, end = header["off_dt_struct"], header["off_dt_struct"] + header["size_dt_struct"]
    while pos < end:
        token = struct.unpack_from(">I", blob, pos)[0]
        yield pos, token
        if token == BEGIN_NODE:
            pos = align4(blob.index(b"\0", pos + 4) + 1)
        elif token == PROP:
            length = struct.unpack_from(">I", blob, pos + 4)[0]
            pos = align4(pos + 12 + length)
        elif token in (END_NODE, NOP):
            pos += 4
        elif token == END:
            return
        else:
            raise ValueError(f"unexpected token {token:#x} at {pos:#x} in the good tree")
    raise ValueError("structure block has no FDT_END")


# Returns the offset of the first `wanted` token in the structure block.
def find_token(blob: bytes, wanted: int) -> int:
    for pos, token in tokens(blob):
        if token == wanted:
            return pos
    raise ValueError(f"no token {wanted:#x} in the tree")


# Inserts `count` zero bytes at `at`, moving every block that starts at or after it.
def insert_bytes(blob: bytes, at: int, count: int) -> bytes:
    header = read_header(blob)
    moved = {key: header[key] + count for key in ("off_dt_struct", "off_dt_strings", "off_mem_rsvmap")
             if header[key] >= at}
    out = blob[:at] + bytes(count) + blob[at:]
    return with_header(out, totalsize=header["totalsize"] + count, **moved)


# bad-magic: the magic number is wrong.
def bad_magic(blob: bytes) -> bytes:
    return with_header(blob, magic=0xFEEDD00D)


# bad-version: version 1, far below the oldest layout a parser accepts (16).
def bad_version(blob: bytes) -> bytes:
    return with_header(blob, version=1, last_comp_version=1)


# truncated: only the first half is present, the header still claims the whole.
def truncated(blob: bytes) -> bytes:
    return blob[: len(blob) // 2]


# totalsize-huge: the header claims nearly 4 GiB.
def totalsize_huge(blob: bytes) -> bytes:
    return with_header(blob, totalsize=0xFFFFFF00)


# struct-oob: the structure block starts beyond the end of the blob.
def struct_oob(blob: bytes) -> bytes:
    return with_header(blob, off_dt_struct=align4(read_header(blob)["totalsize"] + 8))


# strings-oob: the strings block runs past the end of the blob.
def strings_oob(blob: bytes) -> bytes:
    header = read_header(blob)
    return with_header(blob, size_dt_strings=header["totalsize"] - header["off_dt_strings"] + 16)


# prop-len-oob: the first property claims a 2 GiB value.
def prop_len_oob(blob: bytes) -> bytes:
    return put_u32(blob, find_token(blob, PROP) + 4, 0x7FFFFFFF)


# name-unterminated: the strings block ends in the middle of its last name, so
# that name has no NUL inside the block.
def name_unterminated(blob: bytes) -> bytes:
    header = read_header(blob)
    start, size = header["off_dt_strings"], header["size_dt_strings"]
    block = blob[start : start + size]
    if not block.endswith(b"\0"):
        raise ValueError("good tree's strings block does not end in NUL")
    last = block.rfind(b"\0", 0, size - 1) + 1
    cut = last + max(1, (size - 1 - last) // 2)
    return with_header(blob, size_dt_strings=cut)


# bad-token: the first FDT_PROP token becomes an undefined token value.
def bad_token(blob: bytes) -> bytes:
    return put_u32(blob, find_token(blob, PROP), UNDEFINED_TOKEN)


# early-end: an FDT_END token (0x9) appears inside the root node.
def early_end(blob: bytes) -> bytes:
    return put_u32(blob, find_token(blob, PROP), END)


# no-end: the FDT_END token is replaced by FDT_NOP, so the tree never ends.
def no_end(blob: bytes) -> bytes:
    return put_u32(blob, find_token(blob, END), NOP)


# misaligned-struct: the structure block starts 2 bytes off a 4-byte boundary.
def misaligned_struct(blob: bytes) -> bytes:
    return insert_bytes(blob, read_header(blob)["off_dt_struct"], 2)


# Variant name -> function deriving it from good.dtb. All must be rejected.
MUTATIONS = {
    "bad-magic": bad_magic,
    "bad-version": bad_version,
    "truncated": truncated,
    "totalsize-huge": totalsize_huge,
    "struct-oob": struct_oob,
    "strings-oob": strings_oob,
    "prop-len-oob": prop_len_oob,
    "name-unterminated": name_unterminated,
    "bad-token": bad_token,
    "early-end": early_end,
    "no-end": no_end,
    "misaligned-struct": misaligned_struct,
}


# Returns a .dts whose nodes nest `depth` levels below the root.
def deep_nesting_dts(depth: int = DEEP_NESTING) -> str:
    lines = ["/dts-v1/;", "", "/ {", '\tcompatible = "petrel,deep-nesting";']
    for level in range(depth):
        lines.append("\t" * (level + 1) + f"n{level} {{")
    lines.append("\t" * (depth + 1) + 'deepest = "yes";')
    for level in reversed(range(depth)):
        lines.append("\t" * (level + 1) + "};")
    lines.append("};")
    return "\n".join(lines) + "\n"


# Compiles a .dts file with dtc and returns the blob.
def compile_dts(source: Path) -> bytes:
    dtc = shutil.which("dtc")
    if not dtc:
        raise RuntimeError("dtc not found: run `./petrel setup` (Debian package device-tree-compiler)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.dtb"
        proc = subprocess.run([dtc, "-q", "-I", "dts", "-O", "dtb", "-o", str(out), str(source)],
                              capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"dtc failed on {source}:\n{proc.stderr.strip()}")
        return out.read_bytes()


# Writes good.dtb, every variant and manifest.txt into `out_dir`; returns
# the manifest as a list of (file name, "ok" | "bad").
def generate(out_dir: Path, good_dts: Path) -> list:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    good = compile_dts(good_dts)
    files = {"good.dtb": (good, "ok")}
    for name, mutate in MUTATIONS.items():
        files[f"{name}.dtb"] = (mutate(good), "bad")
    deep_src = out_dir / "deep-nesting.dts"
    deep_src.write_text(deep_nesting_dts())
    # Deeper than any sane tree: parsers limit depth (Linux: 64) and must refuse it.
    files["deep-nesting.dtb"] = (compile_dts(deep_src), "bad")
    manifest = []
    for name, (blob, expected) in files.items():
        (out_dir / name).write_bytes(blob)
        manifest.append((name, expected))
    (out_dir / "manifest.txt").write_text("".join(f"{n} {e}\n" for n, e in manifest))
    return manifest


# The "dtb-fixtures" preparation step of the guest tests.
def prepare(repo: Path = paths.REPO) -> None:
    source = repo / "tests" / "guest" / "dtb" / "good.dts"
    if not source.exists():
        raise RuntimeError(f"{paths.rel(source, repo)} is missing")
    generate(paths.build_dir(repo) / "test" / "dtb", source)


# Command line entry: writes the fixtures and prints the manifest.
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m petrel.dtbfixtures",
                                     description="Write good and malformed device tree blobs.")
    parser.add_argument("--dts", type=Path, default=paths.REPO / "tests/guest/dtb/good.dts",
                        help="source of the good tree (default: tests/guest/dtb/good.dts)")
    parser.add_argument("--out", type=Path, default=paths.build_dir() / "test" / "dtb",
                        help="output directory (default: build/test/dtb)")
    args = parser.parse_args(argv)
    try:
        manifest = generate(args.out, args.dts)
    except (OSError, RuntimeError, ValueError) as err:
        print(f"dtbfixtures: {err}", file=sys.stderr)
        return 1
    for name, expected in manifest:
        print(f"{name} {expected}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
