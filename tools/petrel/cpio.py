"""A writer of cpio archives in the "newc" format (the Linux initramfs format)."""
import stat


def _entry(name: str, mode: int, data: bytes, ino: int) -> bytes:
    name_b = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0]
    head = b"070701" + b"".join(b"%08X" % f for f in fields)
    out = head + name_b
    out += b"\0" * (-len(out) % 4)
    out += data
    out += b"\0" * (-len(out) % 4)
    return out


# Returns a newc archive of `files` ({path: bytes}, executable when the path
# is in `executables`) and `dirs`, closed by the TRAILER!!! entry.
def archive(files: dict, dirs=(), executables=()) -> bytes:
    out, ino = b"", 1
    for d in dirs:
        out += _entry(d.strip("/"), stat.S_IFDIR | 0o755, b"", ino)
        ino += 1
    for path, data in files.items():
        mode = 0o755 if path in executables else 0o644
        out += _entry(path.strip("/"), stat.S_IFREG | mode, data, ino)
        ino += 1
    out += _entry("TRAILER!!!", 0, b"", 0)
    return out + b"\0" * (-len(out) % 512)
