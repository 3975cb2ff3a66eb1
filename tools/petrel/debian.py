"""Debian's own arm64 packages whose files go into the root archive.

`fetch` downloads each package with `apt-get download NAME:arm64` (the arm64
architecture is added by setup, as for the Linux baseline) and unpacks it
with `dpkg-deb -x` into `.cache/debian/NAME/` (outside the build tree; never
committed), with the package's file name in `VERSION`. The root archive
(rootfs.py) takes glibc from here: the interpreter, libc.so.6 and libm.so.6
of one build, Debian's libc6, the same build the Debian programs a user
adds were linked against (the cross toolchain's glibc is another build,
whose interpreter does not go with Debian's libc.so.6).
"""
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from petrel import paths

# The packages the root archive needs: glibc, and the unwinder glibc loads
# at pthread_exit and cancellation.
PACKAGES = ("libc6", "libgcc-s1")


class DebianError(RuntimeError):
    """A package could not be obtained."""


def cache_dir(repo: Path = paths.REPO) -> Path:
    return repo / ".cache" / "debian"


def tree(package: str, repo: Path = paths.REPO) -> Path:
    return cache_dir(repo) / package


def file(package: str, rel: str, repo: Path = paths.REPO) -> Path:
    return tree(package, repo) / rel


def version(package: str, repo: Path = paths.REPO) -> str:
    return paths.cached_version(tree(package, repo))


def missing(repo: Path = paths.REPO, packages=PACKAGES) -> list:
    return [p for p in packages if not (tree(p, repo) / "VERSION").exists()]


# Downloads PACKAGE:arm64 with apt-get and unpacks it into `into` (made);
# returns the package file's name without ".deb". `error` is raised when
# apt-get cannot get it.
def unpack(package: str, into: Path, error=DebianError) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["apt-get", "download", f"{package}:arm64"], cwd=tmp, capture_output=True, text=True)
        debs = list(Path(tmp).glob("*.deb"))
        if r.returncode != 0 or not debs:
            raise error(f"apt-get download {package}:arm64 failed: {r.stderr.strip()[-300:]}")
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(into)], check=True)
        return debs[0].name.removesuffix(".deb")


# Downloads and unpacks the packages not in the cache yet.
def fetch(repo: Path = paths.REPO, say=print, packages=PACKAGES) -> None:
    for package in missing(repo, packages):
        say(f"downloading Debian's {package} (arm64)")
        dest = tree(package, repo)
        if dest.exists():
            shutil.rmtree(dest)
        name = unpack(package, dest)
        (dest / "VERSION").write_text(name + "\n")
        say(f"{package} ready: {paths.rel(dest, repo)} ({version(package, repo)})")


GLIBC_BUILD = re.compile(rb"\(([^()\n]*GLIBC[^()\n]*)\) stable release version ([0-9]+(?:\.[0-9]+)*)")


# The glibc build a libc.so.6 or interpreter says it is of ("Debian GLIBC
# 2.36-9+deb12u14 2.36"), or None for a file that says none.
def glibc_build(data: bytes):
    m = GLIBC_BUILD.search(data)
    return f"{m.group(1).decode(errors='replace')} {m.group(2).decode()}" if m else None
