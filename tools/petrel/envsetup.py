"""Setup: everything Petrel needs on a fresh Debian 12 machine, installed by us.

Two parts:
- Debian packages (QEMU, clang/lld/llvm, make, dtc, gdb-multiarch, and clang
  14's sanitizer and libFuzzer runtimes for the host fuzzer), checked
  with one dpkg-query call and installed with apt-get when missing.
- A project-local virtualenv `.venv/` with the Python packages of
  requirements.txt. A stamp file `.venv/.petrel-setup` holds a hash of
  requirements.txt and the apt package list; while it matches, pip is not run,
  so a setup with nothing to do costs one dpkg-query (well under a second).

Every subcommand but `setup` runs `ensure(quiet=True)` first and then
re-executes itself under `.venv/bin/python` (see `reexec_in_venv`), so the
tools can import the venv's packages. The environment variable PETREL_IN_VENV
marks the re-executed process and prevents loops.

This module uses only the standard library: it runs before anything is set up.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from petrel import paths

APT_PACKAGES = ["qemu-system-arm", "clang", "lld", "llvm", "make",
                "device-tree-compiler", "gdb-multiarch", "qemu-user-static", "gcc-aarch64-linux-gnu",
                "libc6-dev-arm64-cross", "libgcc-s1-arm64-cross", "musl-dev:arm64",
                "clang-14", "libclang-rt-14-dev",     # the host fuzzer: clang 14, its sanitizer and libFuzzer runtimes
                "tshark",                             # judges the frames network tests record
                "e2fsprogs"]                          # mke2fs for ./petrel run --disk, e2fsck for storage tests
FOREIGN_ARCH = "arm64"      # musl-dev:arm64 gives aarch64-linux-musl-gcc (the Linux baseline)
VENV_APT_PACKAGE = "python3-venv"
# Commands that stand for the packages where there is no dpkg (non-Debian hosts).
APT_COMMANDS = {"qemu-system-arm": "qemu-system-aarch64", "clang": "clang", "lld": "ld.lld",
                "llvm": "llvm-objcopy", "make": "make", "device-tree-compiler": "dtc",
                "gdb-multiarch": "gdb-multiarch", "tshark": "tshark", "qemu-user-static": "qemu-aarch64-static",
                "gcc-aarch64-linux-gnu": "aarch64-linux-gnu-gcc", "musl-dev:arm64": "aarch64-linux-musl-gcc",
                "libc6-dev-arm64-cross": "aarch64-linux-gnu-gcc", "libgcc-s1-arm64-cross": "aarch64-linux-gnu-gcc",
                "clang-14": "clang-14", "libclang-rt-14-dev": "clang-14", "e2fsprogs": "mke2fs"}
STAMP_NAME = ".petrel-setup"
MARKER = "PETREL_IN_VENV"


class SetupError(RuntimeError):
    """An installation step failed."""


# Prints one progress line of setup.
def say(message: str) -> None:
    print(f"setup: {message}", flush=True)


# Returns the subset of `packages` that dpkg does not report as installed,
# or None when dpkg-query is not available (not a Debian-like system).
def missing_apt(packages: list) -> list | None:
    if not shutil.which("dpkg-query"):
        return None
    proc = subprocess.run(["dpkg-query", "-W", "-f=${binary:Package} ${Status}\n", *packages],
                          capture_output=True, text=True)
    installed = set()
    for line in proc.stdout.splitlines():
        name, _, status = line.partition(" ")
        if status.strip() == "install ok installed":
            installed.add(name)
            if name.endswith(":amd64") or ":" not in name:
                installed.add(name.split(":")[0])
    return [p for p in packages if p not in installed]


# Returns the packages whose stand-in command is missing (used without dpkg).
def missing_commands(packages: list) -> list:
    return [p for p in packages if not shutil.which(APT_COMMANDS.get(p, p))]


# Returns a command prefix that runs as root: [] when we are root, else sudo.
def as_root() -> list:
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo"):
        return ["sudo"]
    raise SetupError("not root and sudo is missing: install the packages as root")


# Runs a command, raising SetupError with its name when it fails.
def check_call(argv: list, **kwargs) -> None:
    try:
        subprocess.run(argv, check=True, **kwargs)
    except FileNotFoundError:
        raise SetupError(f"{argv[0]} not found") from None
    except subprocess.CalledProcessError as err:
        raise SetupError(f"`{' '.join(argv)}` failed with status {err.returncode}") from None


class Apt:
    """Installs Debian packages, running `apt-get update` at most once."""

    def __init__(self):
        self.updated = False

    # Installs `packages` with apt-get (non-interactive, no recommends),
    # first enabling the foreign architecture if one of them needs it.
    def install(self, packages: list) -> None:
        if not shutil.which("apt-get"):
            raise SetupError(f"missing {' '.join(packages)} and there is no apt-get: install them yourself")
        run = as_root() + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
        if any(p.endswith(":" + FOREIGN_ARCH) for p in packages):
            foreign = subprocess.run(["dpkg", "--print-foreign-architectures"], capture_output=True, text=True)
            if FOREIGN_ARCH not in foreign.stdout.split():
                say(f"dpkg --add-architecture {FOREIGN_ARCH}")
                check_call(as_root() + ["dpkg", "--add-architecture", FOREIGN_ARCH])
                self.updated = False
        if not self.updated:
            say("apt-get update")
            check_call(run + ["update", "-q"])
            self.updated = True
        say(f"installing apt packages: {' '.join(packages)}")
        check_call(run + ["install", "-y", "-q", "--no-install-recommends", *packages])


# Returns the hash recorded in the stamp: requirements.txt plus the apt list.
def stamp_value(repo: Path) -> str:
    digest = hashlib.sha256()
    digest.update((repo / "requirements.txt").read_bytes())
    digest.update("\n".join(APT_PACKAGES + [VENV_APT_PACKAGE]).encode())
    return digest.hexdigest()


# True when the venv exists and its stamp matches the current requirements.
def venv_current(repo: Path) -> bool:
    stamp = paths.venv_dir(repo) / STAMP_NAME
    try:
        return paths.venv_python(repo).exists() and stamp.read_text().strip() == stamp_value(repo)
    except OSError:
        return False


# True when this interpreter can create virtualenvs with pip (ensurepip present).
def venv_supported() -> bool:
    proc = subprocess.run([sys.executable, "-c", "import ensurepip, venv"],
                          capture_output=True)
    return proc.returncode == 0


# Creates .venv (installing python3-venv if needed) and installs requirements.
def make_venv(repo: Path, apt: Apt) -> None:
    venv = paths.venv_dir(repo)
    if not paths.venv_python(repo).exists():
        if venv.exists():
            say(f"{paths.VENV_DIR_NAME} is broken, recreating it")
            shutil.rmtree(venv)
        say(f"creating virtualenv {paths.VENV_DIR_NAME}")
        create = [sys.executable, "-m", "venv", str(venv)]
        if subprocess.run(create).returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            apt.install([VENV_APT_PACKAGE])
            check_call(create)
    say(f"installing python packages into {paths.VENV_DIR_NAME}: "
        f"{' '.join(requirement_names(repo))}")
    check_call([str(paths.venv_python(repo)), "-m", "pip", "install", "-q",
                "--disable-pip-version-check", "-r", str(repo / "requirements.txt")])
    (venv / STAMP_NAME).write_text(stamp_value(repo) + "\n")


# Returns the package names listed in requirements.txt (for messages).
def requirement_names(repo: Path) -> list:
    names = []
    for line in (repo / "requirements.txt").read_text().splitlines():
        name = re.split(r"[<>=!~\[; ]", line.split("#", 1)[0].strip(), maxsplit=1)[0]
        if name:
            names.append(name)
    return names


# Returns a list of human-readable items that setup would install.
def check(repo: Path = paths.REPO) -> list:
    todo = []
    missing = missing_apt(APT_PACKAGES)
    if missing is None:
        missing = missing_commands(APT_PACKAGES)
    if missing:
        todo.append(f"apt packages: {' '.join(missing)}")
    if not paths.venv_python(repo).exists():
        if not venv_supported():
            todo.append(f"apt package: {VENV_APT_PACKAGE}")
        todo.append(f"virtualenv {paths.VENV_DIR_NAME}")
    if not venv_current(repo):
        todo.append(f"python packages: {' '.join(requirement_names(repo))}")
    from petrel import busybox, linuxbase
    if not linuxbase.present(repo):
        todo.append("the Linux baseline kernel (Debian's linux-image-arm64)")
    if not busybox.present(repo):
        todo.append("Debian's busybox-static (arm64)")
    from petrel import debian
    todo += [f"Debian's {p} (arm64)" for p in debian.missing(repo)]
    if debian.apps_missing(repo):
        todo.append("the real-programs suite's Debian packages (arm64)")
    if debian.bench_missing(repo):
        todo.append("the application benchmarks' Debian packages (arm64)")
    return todo


# Installs whatever is missing. Quiet mode prints only when something happens.
def ensure(repo: Path = paths.REPO, quiet: bool = False) -> None:
    apt = Apt()
    missing = missing_apt(APT_PACKAGES)
    if missing is None:
        missing = missing_commands(APT_PACKAGES)
        if missing:
            raise SetupError(f"not a Debian system: install the equivalents of {' '.join(missing)}")
    elif missing:
        apt.install(missing)
    if not venv_current(repo):
        make_venv(repo, apt)
    from petrel import busybox, linuxbase
    if not linuxbase.present(repo):
        linuxbase.fetch(repo, say)
    if not busybox.present(repo):
        busybox.fetch(repo, say)
    from petrel import debian
    debian.fetch(repo, say)
    debian.fetch_apps(repo, say)
    debian.fetch_bench(repo, say)
    if not quiet:
        say("everything is installed")


# True when this process runs on the project's virtualenv interpreter.
def in_venv(repo: Path = paths.REPO) -> bool:
    try:
        return Path(sys.prefix).resolve() == paths.venv_dir(repo).resolve()
    except OSError:
        return False


# Replaces this process with the same command under .venv/bin/python, unless
# already there or already re-executed once (the marker variable prevents loops).
def reexec_in_venv(script: Path, argv: list, repo: Path = paths.REPO) -> None:
    if in_venv(repo) or os.environ.get(MARKER):
        return
    python = str(paths.venv_python(repo))
    os.environ[MARKER] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(python, [python, str(script), *argv])
