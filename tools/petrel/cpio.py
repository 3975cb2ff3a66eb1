"""A writer of cpio archives in the "newc" format (the Linux initramfs format).

With `align`, the contents of the files it names start at a multiple of
4 KiB inside the archive, so that a loader can map their pages in place
(Petrel's Linux personality maps program text that way). The padding goes
into the entry's name field (NUL bytes after the name, which every reader
ignores: the name is a C string); when the field would have to grow past
4096 bytes (Linux skips such entries), a "." entry is put first to move
the next header to a page boundary.
"""
import stat

PAGE = 4096
HEADER = 110


def _entry(name: str, mode: int, data: bytes, ino: int, at: int = 0, align: bool = False) -> bytes:
    name_b = name.encode() + b"\0"
    if align and data:
        pad = -(at + HEADER + len(name_b)) % PAGE
        name_b += b"\0" * pad
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0]
    head = b"070701" + b"".join(b"%08X" % f for f in fields)
    out = head + name_b
    out += b"\0" * (-len(out) % 4)
    out += data
    out += b"\0" * (-len(out) % 4)
    return out


# A "." entry that ends exactly at a page boundary, from offset `at`.
def _filler(at: int, ino: int) -> bytes:
    size = -(at + HEADER) % PAGE or PAGE
    fields = [ino, stat.S_IFDIR | 0o755, 0, 0, 2, 0, 0, 0, 0, 0, 0, size, 0]
    return b"070701" + b"".join(b"%08X" % f for f in fields) + b".\0".ljust(size, b"\0")


# Returns a newc archive of `files` ({path: bytes}, executable when the path
# is in `executables`), `dirs` and `links` ({path: target}), closed by the
# TRAILER!!! entry. The root directory's own entry (".") comes first when
# `root_mode` is given. Files in `aligned` have their contents page-aligned.
def archive(files: dict, dirs=(), executables=(), links=None, aligned=(), root_mode=None) -> bytes:
    out, ino = b"", 1
    if root_mode is not None:
        out += _entry(".", stat.S_IFDIR | root_mode, b"", ino)
        ino += 1
    for d in dirs:
        out += _entry(d.strip("/"), stat.S_IFDIR | 0o755, b"", ino)
        ino += 1
    for path, target in (links or {}).items():
        out += _entry(path.strip("/"), stat.S_IFLNK | 0o777, target.encode(), ino)
        ino += 1
    for path, data in files.items():
        mode = 0o755 if path in executables else 0o644
        name = path.strip("/")
        align = path in aligned
        if align and data and -(len(out) + HEADER + len(name) + 1) % PAGE + len(name) + 1 > PAGE:
            out += _filler(len(out), ino)
            ino += 1
        out += _entry(name, stat.S_IFREG | mode, data, ino, len(out), align)
        ino += 1
    out += _entry("TRAILER!!!", 0, b"", 0)
    return out + b"\0" * (-len(out) % 512)
