"""`./petrel run --exec CMD [--add HOST[:GUEST]] [--apps]`: Linux programs, one command.

The root archive (rootfs.py) is rebuilt with the host files of `--add`
and with CMD as /etc/lxrun, and the system (default linux-user) is packed
again with it as its rootfs.cpio, into build/run/PID/ (this process's,
removed when it ends: two runs at once do not share files). Petrel then boots
non-interactively: the console is copied here, and the exit status is the
command's (its `lx: exit N`; 128 + N for `lx: signal N`), so scripts and CI
can use it. With `--linux` the same archive boots Debian's kernel instead
(its /init runs the same command), for comparison; with `--disk` it loads
Debian's virtio-blk and ext4 modules and mounts the disk at /data first. `--apps` puts Debian's
programs of the real-programs suite into the archive (tests/apps/README.md);
without --exec it boots the default system's shell on that archive.
"""
import atexit
import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
import sys
from pathlib import Path

from petrel import bootimage, debian, linuxbase, oracle, paths, qemu, rootfs, systems

LINE_MAX = 4096         # a command line of /etc/lxrun, its newline included (services/linux, tests/linux/init.c)
RESULT = re.compile(r"^lx: (exit|signal) (\d+)\s*$")


# The system with its lxrun program running /etc/lxrun (where the command
# goes), whatever script it runs when booted on its own (the default
# systems' /etc/shell); ValueError for a system without lxrun.
def runs_lxrun_script(desc):
    progs = [p for p in desc.programs if p.name == "lxrun"]
    if not progs:
        raise ValueError(f"system {desc.name} has no lxrun program to run a Linux command in")
    args = " ".join(a for a in progs[0].args.split() if not a.startswith("script=")) + " script=/etc/lxrun"
    return dataclasses.replace(desc, programs=tuple(
        dataclasses.replace(p, args=args.strip()) if p.name == "lxrun" else p for p in desc.programs))


made_dirs = set()


# This process's directory of packed files, build/run/PID/: made on first
# use (with those of processes that are gone removed), removed at exit.
def run_dir(repo: Path = paths.REPO) -> Path:
    top = paths.build_dir(repo) / "run"
    out = top / str(os.getpid())
    if out not in made_dirs:
        top.mkdir(parents=True, exist_ok=True)
        for old in top.iterdir():
            if old.is_dir() and old.name.isdigit() and not pid_alive(int(old.name)):
                shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)      # a killed run's, with this number
        out.mkdir()
        made_dirs.add(out)
        atexit.register(shutil.rmtree, out, True)
    return out


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# Packs rootfs.cpio and <system>.pbi (with the Debian `packages` too) into
# run_dir(); returns their paths.
def prepare(system: str, command: str, adds: list, repo: Path = paths.REPO, packages=()) -> tuple:
    out = run_dir(repo)
    archive = out / "rootfs.cpio"
    if len(command.encode()) > LINE_MAX - 1:
        raise ValueError(f"the command is {len(command.encode())} bytes long; at most {LINE_MAX - 1} run")
    run = command + "\n" if command else rootfs.DEFAULT_RUN
    archive.write_bytes(rootfs.build(run, [rootfs.parse_add(a) for a in adds], repo, packages))
    desc = systems.load_system(repo / "systems" / f"{system}.toml", repo)
    if command:
        desc = runs_lxrun_script(desc)
    image = out / f"{system}.pbi"
    bootimage.write_image(image, oracle.with_archive(systems.read_entries(desc, repo), archive))
    return archive, image


# Boots argv, copying the console here; returns the command's exit status.
def boot(argv: list, trace_out: Path = None, strace: bool = False) -> int:
    status = 0
    rec = None
    if trace_out:
        from petrel import trace
        qmp = Path(tempfile.mkdtemp(prefix="petrel-qmp-")) / "qmp"
        argv = argv + trace.qemu_argv(str(qmp))
        rec = trace.Recorder(str(qmp), trace_out, paths.kernel_elf(),
                             on_events=trace.strace_printer() if strace else None)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if rec:
        trace.watch(proc, rec)
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", errors="replace")
            sys.stdout.write(line)
            sys.stdout.flush()
            m = RESULT.match(line.replace("\r", ""))
            if m:
                status = int(m.group(2)) + (128 if m.group(1) == "signal" else 0)
        proc.wait()
    except KeyboardInterrupt:
        proc.kill()
        proc.wait()
        return 130
    if rec:
        rec.join()
        print(trace.summary(rec, trace_out), flush=True)
    return status if proc.returncode == 0 else (proc.returncode or 1)


# --add specs for Linux's disk: the modules, and /etc/modules naming them in order (tests/linux/init.c);
# `extra`: (name, path) of more modules loaded after them (the bench's binder_linux).
def disk_modules(repo: Path = paths.REPO, extra=()) -> list:
    out = run_dir(repo) / "modules"
    out.mkdir(parents=True, exist_ok=True)
    mods = list(linuxbase.blk_modules(repo)) + list(extra)
    (out / "list").write_text("".join(linuxbase.module_line(name, f"/lib/petrel/{name}.ko") for name, _ in mods))
    return [f"{path}:/lib/petrel/{name}.ko" for name, path in mods] + [f"{out / 'list'}:/etc/modules"]


def main(system: str, command: str, adds: list, linux: bool, machine: qemu.Machine,
         repo: Path = paths.REPO, with_apps: bool = False, append: str = "", trace_out: Path = None,
         strace: bool = False) -> int:
    if linux and not linuxbase.present(repo):
        print("run: the Linux baseline is missing: run `./petrel setup`", file=sys.stderr)
        return 2
    if linux and machine.disk:
        adds = list(adds) + disk_modules(repo)
    try:
        archive, image = prepare(system, command, adds, repo, debian.apps_ready(repo) if with_apps else ())
    except (ValueError, OSError, systems.SystemConfigError, debian.DebianError) as err:
        print(f"run: {err}", file=sys.stderr)
        return 2
    if linux:
        argv = qemu.build_argv(linuxbase.image(repo), archive, machine, (oracle.LINUX_APPEND + " " + append).strip())
    else:
        argv = qemu.build_argv(paths.kernel_bin(repo=repo), image, machine, append)
    argv[0] = qemu.find_qemu()
    return boot(argv, None if linux else trace_out, strace)
