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

# The programs of the real-programs suite (tests/apps/, `packages = "apps"`
# in cases.toml): fetched with every arm64 package they depend on (APPS_LIST
# records that closure), and put into the root archive at / as Debian
# installs them (their own /bin and /usr/bin programs in place of busybox's
# applets of the same name).
APPS = ("python3.11-minimal", "libpython3.11-stdlib", "sqlite3", "coreutils", "findutils", "grep", "sed",
        "gawk", "diffutils", "tar", "gzip", "xz-utils", "bzip2", "bc", "jq", "lua5.4", "file", "dash",
        "bsdutils")
# Dependencies that only a package manager uses (maintainer scripts), and
# elogind's stand-in for libsystemd0 (an alternative of a dependency).
NOT_NEEDED = ("dpkg", "install-info", "debconf", "perl-base", "libelogind0")
# What the archive leaves out of a package: documentation, manual pages,
# translations and glibc's character set converters (iconv's, 20 MiB).
PRUNED = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian",
          "usr/share/bug", "usr/lib/aarch64-linux-gnu/gconv")
APPS_LIST = "apps.list"


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


# The arm64 packages `roots` need, themselves included (Depends and
# Pre-Depends, recursively, from apt's lists), without NOT_NEEDED.
def closure(roots=APPS, error=DebianError) -> list:
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                        "--no-breaks", "--no-replaces", "--no-enhances"] + [f"{p}:arm64" for p in roots],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise error(f"apt-cache depends failed: {r.stderr.strip()[-300:]}")
    names = {line.removesuffix(":arm64") for line in r.stdout.splitlines()
             if line.endswith(":arm64") and not line.startswith((" ", "<"))}
    return sorted(names - set(NOT_NEEDED))


# The packages of the apps set as fetched (APPS_LIST), or None before.
def apps_packages(repo: Path = paths.REPO):
    listed = cache_dir(repo) / APPS_LIST
    return listed.read_text().split() if listed.exists() else None


def apps_missing(repo: Path = paths.REPO) -> list:
    listed = apps_packages(repo)
    if listed is None:
        return list(APPS)
    return [p for p in APPS if p not in listed] + missing(repo, listed)   # (APPS grown since: fetched again)


# The apps set's packages, all fetched; DebianError before setup has them.
def apps_ready(repo: Path = paths.REPO) -> list:
    if apps_missing(repo):
        raise DebianError("the real-programs suite's Debian packages are missing: run `./petrel setup`")
    return apps_packages(repo)


# Fetches the apps set and its dependencies; records the closure.
def fetch_apps(repo: Path = paths.REPO, say=print) -> None:
    if not apps_missing(repo):
        return
    packages = closure()
    say(f"the real-programs suite needs {len(packages)} Debian packages (arm64)")
    fetch(repo, say, packages)
    (cache_dir(repo) / APPS_LIST).write_text("\n".join(packages) + "\n")


# The files of unpacked packages as the root archive takes them:
# ({guest path: host file}, {guest path: link target}, [directories]),
# without PRUNED, in package order (a later package's file wins).
def contents(packages, repo: Path = paths.REPO) -> tuple:
    files, links, dirs = {}, {}, []
    for package in packages:
        top = tree(package, repo)
        if not (top / "VERSION").exists():
            raise DebianError(f"Debian's {package} is not fetched: run `./petrel setup`")
        for item in sorted(top.rglob("*")):
            rel = item.relative_to(top).as_posix()
            if rel == "VERSION" or any(rel == p or rel.startswith(p + "/") for p in PRUNED):
                continue
            if item.is_symlink():
                links[rel] = str(item.readlink())
            elif item.is_dir():
                dirs.append(rel)
            else:
                files[rel] = item
    return files, links, dirs


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
