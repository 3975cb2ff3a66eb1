"""Debian's own arm64 packages whose files go into the root archive.

`fetch` downloads each package with `apt-get download NAME:arm64` (the arm64
architecture is added by setup, as for the Linux baseline) and unpacks it
with `dpkg-deb -x` into `.cache/debian/NAME/` (outside the build tree; never
committed), with the package's file name in `VERSION`. The root archive
(rootfs.py) takes glibc from here: the interpreter, libc.so.6 and libm.so.6
of one build, Debian's libc6, the same build the Debian programs a user
adds were linked against (the cross toolchain's glibc is another build,
whose interpreter does not go with Debian's libc.so.6).

Two larger sets go into root archives on demand: the real-programs
suite's (APPS, with everything apt would install for them) and the
application benchmarks' (BENCH_APPS, without what their runs never load,
and BENCH_DATA, their architecture "all" data); each is fetched by setup
and its package list kept in the cache.
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
# The network tools of the suite (iperf3 and its libraries), fetched one
# level at a time (walk) without what only their maintainer scripts need:
# apt's whole closure of them holds adduser, perl and PAM.
NET_APPS = ("iperf3",)
NET_NOT_NEEDED = NOT_NEEDED + ("adduser", "cdebconf", "init-system-helpers")

# The programs of the application benchmarks (`./petrel bench --suite apps`,
# the L4Linux paper's Table IV): MP3 encoding and decoding, JPEG, TIFF,
# PostScript, a spelling checker, GSM, sound, lossless audio and xz.
# Fetched with what they need (walk(), without BENCH_NOT_NEEDED), listed
# in BENCH_LIST.
BENCH_APPS = ("lame", "madplay", "libjpeg-turbo-progs", "libtiff-tools", "ghostscript", "ispell", "libgsm-tools",
              "sox", "flac", "xz-utils")
# Their data, of architecture "all" (downloaded by bare name, their own
# dependencies not followed): ispell's American dictionary and the English
# affix file it links to, Ghostscript's Resource tree (Init files, the
# Font links) and ICC profiles, and the URW fonts those Font links name.
BENCH_DATA = ("iamerican", "ienglish-common", "libgs10-common", "libgs-common", "fonts-urw-base35")
# What the bench's programs never load, besides NOT_NEEDED: sox's format
# plugins (sound devices, and file types it reads through libsndfile and
# others; WAV, raw and IMA ADPCM are libsox's own), libmagic's database
# (sox looks at a file's contents only when nothing else names its type)
# and debconf's other implementation.
BENCH_NOT_NEEDED = NOT_NEEDED + ("libsox-fmt-alsa", "libsox-fmt-ao", "libsox-fmt-oss", "libsox-fmt-pulse",
                                 "libsox-fmt-base", "libmagic-mgc", "cdebconf")
# What the bench's archive also leaves out: the URW fonts' copies for X11
# and in OpenType, and their metrics (Ghostscript reads the Type 1 files
# of usr/share/fonts/type1).
BENCH_PRUNED = PRUNED + ("usr/share/fonts/X11", "usr/share/fonts/opentype", "usr/share/fonts/afm",
                         "etc/X11", "usr/share/fontconfig", "usr/share/metainfo")
BENCH_LIST = "bench-apps.list"
# The options of apt-cache depends: what a package needs to run (Depends, Pre-Depends).
APT_DEPENDS = ["apt-cache", "depends", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
               "--no-replaces", "--no-enhances"]


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


# The arm64 packages `roots` need, themselves included, one level of
# Depends and Pre-Depends at a time (first_choices), leaving out `skip` and
# whatever only a left-out package needs.
def walk(roots, skip=BENCH_NOT_NEEDED, error=DebianError) -> list:
    found, todo = set(), sorted(set(roots) - set(skip))
    while todo:
        found.update(todo)
        r = subprocess.run(APT_DEPENDS + [f"{p}:arm64" for p in todo], capture_output=True, text=True)
        if r.returncode != 0:
            raise error(f"apt-cache depends failed: {r.stderr.strip()[-300:]}")
        todo = sorted(first_choices(r.stdout) - set(skip) - found)
    return sorted(found)


# The packages a non-recursive `apt-cache depends` output picks: for each
# dependency, its first alternative (a|b), or that one's first provider
# when it lists any (a virtual package, or one another architecture
# satisfies); only arm64 packages, named without the suffix (a dependency
# that an architecture "all" package satisfies is data, named on its own).
def first_choices(text: str) -> set:
    picked, current, providers_open, continued = set(), None, False, False

    def commit():
        if current and current.endswith(":arm64") and not current.startswith("<"):
            picked.add(current.removesuffix(":arm64"))

    for line in text.splitlines():
        dep = re.match(r"^ ([ |])(?:Pre)?Depends: (\S+)$", line)
        if line.startswith("    "):
            if providers_open:
                current, providers_open = line.strip(), False
            continue
        if dep and not continued:
            commit()
            current, providers_open = dep.group(2), True
        elif dep:
            providers_open = False
        else:
            commit()
            current, providers_open = None, False
        continued = bool(dep) and dep.group(1) == "|"
    commit()
    return picked


# The packages of a set as fetched (its list file in the cache), or None before.
def listed(list_name: str, repo: Path = paths.REPO):
    path = cache_dir(repo) / list_name
    return path.read_text().split() if path.exists() else None


# A set's packages not fetched yet: its roots before setup (or roots added
# since), and the listed packages not unpacked.
def set_missing(roots, list_name: str, repo: Path = paths.REPO) -> list:
    names = listed(list_name, repo)
    if names is None:
        return list(roots)
    return [p for p in roots if p not in names] + missing(repo, names)


# A set's packages, all fetched; DebianError (naming `what`, a possessive) before setup has them.
def set_ready(roots, list_name: str, what: str, repo: Path = paths.REPO) -> list:
    if set_missing(roots, list_name, repo):
        raise DebianError(f"{what} Debian packages are missing: run `./petrel setup`")
    return listed(list_name, repo)


def apps_missing(repo: Path = paths.REPO) -> list:
    return set_missing(APPS + NET_APPS, APPS_LIST, repo)


def apps_ready(repo: Path = paths.REPO) -> list:
    return set_ready(APPS + NET_APPS, APPS_LIST, "the real-programs suite's", repo)


# Fetches the apps set and its dependencies; records the closure.
def fetch_apps(repo: Path = paths.REPO, say=print) -> None:
    if not apps_missing(repo):
        return
    packages = sorted(set(closure()) | set(walk(NET_APPS, NET_NOT_NEEDED)))
    say(f"the real-programs suite needs {len(packages)} Debian packages (arm64)")
    fetch(repo, say, packages)
    (cache_dir(repo) / APPS_LIST).write_text("\n".join(packages) + "\n")


def bench_missing(repo: Path = paths.REPO) -> list:
    return set_missing(BENCH_APPS + BENCH_DATA, BENCH_LIST, repo)


def bench_ready(repo: Path = paths.REPO) -> list:
    return set_ready(BENCH_APPS + BENCH_DATA, BENCH_LIST, "the application benchmarks'", repo)


# Fetches the bench set: the programs and what they need, and their data;
# records the list.
def fetch_bench(repo: Path = paths.REPO, say=print) -> None:
    if not bench_missing(repo):
        return
    packages = walk(BENCH_APPS) + list(BENCH_DATA)
    say(f"the application benchmarks need {len(packages)} Debian packages (arm64 and all)")
    fetch(repo, say, packages)
    (cache_dir(repo) / BENCH_LIST).write_text("\n".join(packages) + "\n")


# The files of unpacked packages as the root archive takes them:
# ({guest path: host file}, {guest path: link target}, [directories]),
# without `pruned`, in package order (a later package's file wins).
def contents(packages, repo: Path = paths.REPO, pruned=PRUNED) -> tuple:
    files, links, dirs = {}, {}, []
    for package in packages:
        top = tree(package, repo)
        if not (top / "VERSION").exists():
            raise DebianError(f"Debian's {package} is not fetched: run `./petrel setup`")
        for item in sorted(top.rglob("*")):
            rel = item.relative_to(top).as_posix()
            if rel == "VERSION" or any(rel == p or rel.startswith(p + "/") for p in pruned):
                continue
            if item.is_symlink():
                links[rel] = str(item.readlink())
            elif item.is_dir():
                dirs.append(rel)
            else:
                files[rel] = item
    return files, links, dirs


# Downloads PACKAGE:arm64 (PACKAGE itself for one of architecture "all",
# BENCH_DATA) with apt-get and unpacks it into `into` (made); returns the
# package file's name without ".deb". `error` is raised when apt-get cannot
# get it.
def unpack(package: str, into: Path, error=DebianError) -> str:
    name = package if package in BENCH_DATA else f"{package}:arm64"
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["apt-get", "download", name], cwd=tmp, capture_output=True, text=True)
        debs = list(Path(tmp).glob("*.deb"))
        if r.returncode != 0 or not debs:
            raise error(f"apt-get download {name} failed: {r.stderr.strip()[-300:]}")
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
