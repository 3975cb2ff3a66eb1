"""The root file system of Linux programs: one cpio archive for both sides.

The same archive is Petrel's root file system (boot image file
`rootfs.cpio`, read by the Linux personality) and the Linux baseline's
initramfs. It holds:

    /init              tests/linux/init.c: runs /etc/lxrun on Linux
    /bin/NAME          the static musl programs of tests/linux/NAME.c
    /bin/busybox       Debian's busybox-static (busybox.py), with /bin/sh and
                       the applets of busybox.APPLETS as links to it
    /etc, /data, ...   the data files of tests/linux/root/
    /etc/hello-link    a symbolic link (to hello.txt)
    /etc/lxrun         the commands to run, one per line
    /etc/shell         /bin/sh: what the default system runs
    /lib/...           glibc's and musl's interpreters, glibc's libc.so.6 and
                       libm.so.6 from Debian's libc6 (SHARED_LIBS), for
                       dynamically linked programs
    /dev, /proc, /root, /tmp  empty directories (Linux mounts devtmpfs and proc)

With `packages` (Debian package names, fetched by debian.py), their files
go in at their own paths, symbolic links kept, before busybox's applet
links (a package's /bin/ls wins over busybox's), and the scripts of the
real-programs suite (tests/apps/) at /apps.

Program contents are page-aligned inside the archive, so the personality
maps their text in place. `--add HOST[:GUEST]` files go in as they are.

    python3 -m petrel.rootfs OUT [--run 'CMD' ...] [--add HOST[:GUEST] ...]
"""
import argparse
import sys
from pathlib import Path

from petrel import busybox, cpio, debian, paths

DEFAULT_RUN = "hello\nargs one two\n"

# The C libraries dynamic programs need: glibc's interpreter, libc.so.6 and
# libm.so.6 of one build, Debian's arm64 libc6, and the unwinder glibc loads
# at pthread_exit and cancellation (debian.py fetches them at setup); musl's
# interpreter from the package setup installs (musl-dev:arm64).
# guest path -> (Debian package, its file) or a host file.
GLIBC_INTERP = "lib/ld-linux-aarch64.so.1"
GLIBC_LIBC = "lib/aarch64-linux-gnu/libc.so.6"
SHARED_LIBS = {
    GLIBC_INTERP: ("libc6", "lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"),
    GLIBC_LIBC: ("libc6", "lib/aarch64-linux-gnu/libc.so.6"),
    "lib/aarch64-linux-gnu/libm.so.6": ("libc6", "lib/aarch64-linux-gnu/libm.so.6"),
    "lib/aarch64-linux-gnu/libgcc_s.so.1": ("libgcc-s1", "lib/aarch64-linux-gnu/libgcc_s.so.1"),
    "lib/ld-musl-aarch64.so.1": Path("/usr/lib/aarch64-linux-musl/libc.so"),
}


def shared_lib_source(spec, repo: Path = paths.REPO) -> Path:
    return spec if isinstance(spec, Path) else debian.file(spec[0], spec[1], repo)


# Refuses an archive whose glibc interpreter and libc.so.6 are of two
# builds (a libc.so.6 added beside the archive's interpreter, or the
# reverse): programs then fail in ways hard to trace (threads hang).
def check_glibc(files: dict) -> None:
    interp, libc = files.get(GLIBC_INTERP), files.get(GLIBC_LIBC)
    if interp is None or libc is None:
        return
    a, b = debian.glibc_build(interp), debian.glibc_build(libc)
    if a != b:
        raise ValueError(f"--add: /{GLIBC_LIBC} is glibc build '{b}' but the interpreter /{GLIBC_INTERP} is "
                         f"'{a}': add both from one build (Debian's libc6 package has them together)")


def linux_dir(repo: Path = paths.REPO) -> Path:
    return paths.build_dir(repo) / "linux"


def archive_path(repo: Path = paths.REPO) -> Path:
    return linux_dir(repo) / "rootfs.cpio"


# Parses one --add value: (host path, guest path in the archive).
def parse_add(spec: str) -> tuple:
    host, sep, guest = spec.partition(":")
    host_path = Path(host)
    if not sep:
        guest = "/bin/" + host_path.name if host_path.is_file() else "/" + host_path.name
    if not guest.startswith("/") or ".." in guest.split("/"):
        raise ValueError(f"--add {spec}: the guest path must be absolute and without '..'")
    return host_path, guest


# Returns the archive's bytes: the built test programs, the data tree,
# `run` as /etc/lxrun, the (host, guest) pairs of `adds` and the files of
# Debian `packages` but those under `pruned`.
def build(run: str = DEFAULT_RUN, adds=(), repo: Path = paths.REPO, packages=(), pruned=debian.PRUNED) -> bytes:
    out = linux_dir(repo)
    files, executables, links, elf = {}, set(), {}, set()
    dirs = ["bin", "etc", "dev", "proc", "root", "tmp"]      # Linux's own initramfs adds /root too
    if packages:
        add_packages(packages, files, executables, links, dirs, elf, repo, pruned)
    init = out / "init"
    if init.exists():
        files["init"] = init.read_bytes()
        executables.add("init")
    for prog in sorted((out / "bin").glob("*")):
        files[f"bin/{prog.name}"] = prog.read_bytes()
        executables.add(f"bin/{prog.name}")
    data = repo / "tests" / "linux" / "root"
    for item in sorted(data.rglob("*")):
        rel = item.relative_to(data).as_posix()
        if item.is_dir():
            dirs.append(rel) if rel not in dirs else None
        else:
            files[rel] = item.read_bytes()
            if item.stat().st_mode & 0o111:
                executables.add(rel)
    for host, guest in adds:
        if not host.exists():
            raise ValueError(f"--add: {host} does not exist")
        items = [(host, guest)] if host.is_file() else \
            [(p, f"{guest.rstrip('/')}/{p.relative_to(host).as_posix()}") for p in sorted(host.rglob("*"))]
        for src, dst in items:
            rel = dst.strip("/")
            parts = rel.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.append(d)
            if src.is_dir():
                dirs.append(rel) if rel not in dirs else None
                continue
            files[rel] = src.read_bytes()
            if src.stat().st_mode & 0o111:
                executables.add(rel)
    files["etc/lxrun"] = run.encode()
    files["etc/shell"] = b"/bin/sh\n"         # the default system's one command (systems/default.toml)
    if "etc/hello.txt" in files:
        links["etc/hello-link"] = "hello.txt"
    for guest, spec in SHARED_LIBS.items():
        host = shared_lib_source(spec, repo)
        if host.exists() and guest not in files and guest not in links:
            files[guest] = host.read_bytes()
            executables.add(guest)          # (page-aligned in the archive: mapped in place)
            dirs.append(guest.rsplit("/", 1)[0]) if guest.rsplit("/", 1)[0] not in dirs else None
    check_glibc(files)
    if busybox.present(repo) and "bin/busybox" not in files:
        files["bin/busybox"] = busybox.binary(repo).read_bytes()
        executables.add("bin/busybox")
        for applet in busybox.APPLETS:
            if f"bin/{applet}" not in files and f"bin/{applet}" not in links:
                links[f"bin/{applet}"] = "busybox"
    return cpio.archive(files, dirs=dirs, executables=executables, links=links, aligned=executables | elf,
                        root_mode=0o755)


# Adds the files of Debian `packages` (without `pruned`) and tests/apps/
# (at /apps); ELF files (shared libraries are not executable) go into
# `elf`, to be mapped in place.
def add_packages(packages, files: dict, executables: set, links: dict, dirs: list, elf: set, repo: Path,
                 pruned=debian.PRUNED) -> None:
    hosts, package_links, package_dirs = debian.contents(packages, repo, pruned)
    apps = repo / "tests" / "apps"
    for item in sorted(apps.rglob("*")) if apps.is_dir() else ():
        rel = "apps/" + item.relative_to(apps).as_posix()
        if item.is_dir():
            package_dirs.append(rel)
        else:
            hosts[rel] = item
    package_dirs.insert(0, "apps") if apps.is_dir() else None
    for d in package_dirs:
        dirs.append(d) if d not in dirs else None
    links.update(package_links)
    for rel, host in hosts.items():
        files[rel] = host.read_bytes()
        if host.stat().st_mode & 0o111:
            executables.add(rel)
        if files[rel][:4] == b"\x7fELF":
            elf.add(rel)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m petrel.rootfs", description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--run", action="append", default=[], help="a command line for /etc/lxrun (repeatable)")
    ap.add_argument("--add", action="append", default=[], metavar="HOST[:GUEST]")
    args = ap.parse_args(argv)
    try:
        adds = [parse_add(a) for a in args.add]
        data = build("".join(c + "\n" for c in args.run) if args.run else DEFAULT_RUN, adds)
    except (ValueError, OSError) as err:
        print(f"rootfs: {err}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
