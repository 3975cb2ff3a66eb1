"""Linux as the oracle: the same programs on Linux and on Petrel, compared.

A guest case with an `oracle` list of command lines boots twice with one
root archive (tools/petrel/rootfs.py) whose /etc/lxrun holds the commands:

- Petrel: the case's system (the Linux personality and lxrun) with that
  archive as its `rootfs.cpio`;
- Linux: Debian's arm64 kernel (linuxbase.py) in the same QEMU, with that
  archive as its initramfs and /init (tests/linux/init.c) running the
  commands.

Both print `lx: run CMD`, the program's output and `lx: exit N` for each,
then `lx: done`. The transcripts from the first `lx: run` to `lx: done`
must be identical line for line, except that everything from " ~" on in a
line is masked (the programs print varying values that way) and lines of
the personality's own log ("petrel-linux: ...") are left out.

Linux gets LINUX_TIMEOUT seconds, or the case's timeout when that is
longer (a case whose programs run for a fixed time, such as stress).

A case that presses keys (`keys`) has them pressed on Linux's machine too,
after the same regexes, on the same virtio keyboard.
"""
import difflib
import hashlib
import threading
from pathlib import Path

from petrel import bootimage, debian, linuxbase, paths, qemu, rootfs

LINUX_APPEND = "console=ttyAMA0 quiet loglevel=1 rdinit=/init"
LINUX_TIMEOUT = 120
MASK = " ~"
OWN_LOG = "petrel-linux:"
# Lines of Petrel's own programs that run beside the Linux ones (the root
# task's, and netcfg's as it leases the interface's address): not the
# Linux programs' output, whenever they come.
OWN_LINES = (OWN_LOG, "root: ", "netcfg: ")


# The compared part of a console: from the first "lx: run" to "lx: done".
def transcript(console: str, petrel: bool) -> list:
    lines, on = [], False
    for line in console.replace("\r", "").split("\n"):
        if line.startswith("lx: run "):
            on = True
        if not on or (petrel and line.startswith(OWN_LINES)):
            continue
        at = line.find(MASK)
        lines.append(line if at < 0 else line[:at] + MASK)
        if line == "lx: done":
            break
    return lines


# Returns a unified diff of two transcripts ([] when they are equal).
def compare(linux: list, petrel: list) -> list:
    return list(difflib.unified_diff(linux, petrel, "linux", "petrel", lineterm="", n=2))


def archive_path(name: str, repo: Path = paths.REPO) -> Path:
    return paths.build_dir(repo) / "test" / "oracle" / f"{name}.cpio"


# Writes the case's root archive (with the Debian package set `packages`
# named, "apps" or ""); returns its path.
# With `modules` (names of Linux's modules the baseline has: binder_linux,
# and virtio_mmio, virtio_input and evdev for the keyboard), Linux's run
# loads them first, in their order (/etc/modules, tests/linux/init.c);
# Petrel's personality has these devices of its own and reads neither file.
def write_archive(name: str, commands: list, repo: Path = paths.REPO, packages: str = "",
                  modules: list = ()) -> Path:
    out = archive_path(name, repo)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        chosen = debian.apps_ready(repo) if packages == "apps" else ()
    except debian.DebianError as err:
        raise ValueError(str(err)) from None
    adds = []
    if modules:
        known = {"binder_linux": linuxbase.binder_module(repo),
                 **{m: linuxbase.net_module(m, repo) for m in ("virtio_mmio", *linuxbase.INPUT_MODULES)}}
        listing = out.with_suffix(".modules")
        listing.write_text("".join(linuxbase.module_line(m, f"/lib/petrel/{m}.ko") for m in modules))
        adds = [(known[m], f"/lib/petrel/{m}.ko") for m in modules] + [(listing, "/etc/modules")]
    out.write_bytes(rootfs.build("".join(c + "\n" for c in commands), adds, repo, chosen))
    return out


# The boot image entries of a system with `archive` as its rootfs.cpio.
def with_archive(entries: list, archive: Path) -> list:
    data = archive.read_bytes()
    out = [(n, data, f) if n == "rootfs.cpio" else (n, d, f) for n, d, f in entries]
    if not any(n == "rootfs.cpio" for n, _d, _f in entries):
        raise ValueError("the system has no rootfs.cpio file to replace")
    return out


def write_image(out: Path, entries: list, archive: Path) -> Path:
    bootimage.write_image(out, with_archive(entries, archive))
    return out


# Linux's answers so far in this run, by archive contents, machine and
# steps: the cases that differ only in Petrel's system (the personality's
# placement) compare with one boot of Linux.
_linux_runs = {}
_linux_lock = threading.Lock()


# Boots Linux with `archive` as initramfs, doing `steps` as qemu.run does
# (the case's key presses); returns (status, console). Raises
# qemu.StepFailed when QEMU refuses a press.
def run_linux(archive: Path, machine: qemu.Machine, repo: Path = paths.REPO,
              timeout: float = LINUX_TIMEOUT, steps=()) -> tuple:
    if not linuxbase.present(repo):
        raise RuntimeError("the Linux baseline is missing: run `./petrel setup`")
    steps = list(steps)
    key = (hashlib.sha256(archive.read_bytes()).hexdigest(), repr(machine), repr(steps))
    with _linux_lock:
        if key in _linux_runs:
            return _linux_runs[key]
    argv = qemu.build_argv(linuxbase.image(repo), archive, machine, LINUX_APPEND)
    wait = max(timeout, LINUX_TIMEOUT)
    result = qemu.run(argv, wait, steps=steps) if steps else qemu.run(argv, wait)
    if result[0] == 0:
        with _linux_lock:
            _linux_runs[key] = result
    return result
