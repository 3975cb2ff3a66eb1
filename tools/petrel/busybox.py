"""Debian's busybox-static for arm64: the shell and tools of the root archive.

`fetch` downloads the package with `apt-get download busybox-static:arm64`
(the arm64 architecture is added by setup, as for the Linux baseline),
unpacks it with `dpkg-deb -x` and keeps the one static binary in
`.cache/busybox/busybox` (outside the build tree; never committed). The
root archive builder (rootfs.py) puts it in as /bin/busybox, with /bin/sh
and the applets of APPLETS as symbolic links to it.
"""
import shutil
import tempfile
from pathlib import Path

from petrel import debian, paths

PACKAGE = "busybox-static:arm64"

# The applets linked in /bin (each a link to busybox, which looks at argv[0]).
APPLETS = (
    "sh", "ash", "ls", "cat", "echo", "true", "false", "test", "[", "printf", "pwd", "mkdir", "rmdir", "rm",
    "cp", "mv", "ln", "touch", "wc", "head", "tail", "sort", "uniq", "grep", "sed", "awk", "tr", "cut", "xargs",
    "expr", "seq", "sleep", "kill", "ps", "date", "env", "tee", "od", "md5sum", "sha256sum", "stat", "du", "id",
    "uname", "basename", "dirname", "yes", "find", "cmp", "diff", "gzip", "gunzip", "tar", "dd",
    "stty", "top", "free", "uptime", "readlink", "realpath", "which", "whoami", "hostname", "nproc", "sync",
    "mktemp", "more", "vi", "clear", "time", "timeout", "chmod", "chown", "nohup", "usleep", "hexdump", "xxd",
)


class BusyboxError(RuntimeError):
    """busybox-static could not be obtained."""


def cache_dir(repo: Path = paths.REPO) -> Path:
    return repo / ".cache" / "busybox"


def binary(repo: Path = paths.REPO) -> Path:
    return cache_dir(repo) / "busybox"


def version(repo: Path = paths.REPO) -> str:
    return paths.cached_version(cache_dir(repo))


def present(repo: Path = paths.REPO) -> bool:
    return binary(repo).exists()


# Downloads and unpacks the package into the cache.
def fetch(repo: Path = paths.REPO, say=print) -> None:
    say(f"downloading Debian's busybox: {PACKAGE}")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "x"
        name = debian.unpack(PACKAGE.removesuffix(":arm64"), tree, BusyboxError)
        found = tree / "bin" / "busybox"
        if not found.is_file():
            raise BusyboxError(f"{name}.deb has no bin/busybox")
        cache_dir(repo).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, binary(repo))
        binary(repo).chmod(0o755)
        (cache_dir(repo) / "VERSION").write_text(name + "\n")
    say(f"busybox ready: {paths.rel(binary(repo), repo)} ({version(repo)})")
