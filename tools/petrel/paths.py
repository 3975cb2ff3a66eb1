"""Where things live in the repository and in the build tree.

All paths derive from the location of this file, so the tools work from any
current directory and from any clone. The build tree is always `build/` at the
repository root (the Makefile is invoked with `O=build`).
"""
from pathlib import Path

# Repository root: tools/petrel/paths.py -> tools/petrel -> tools -> root.
REPO = Path(__file__).resolve().parents[2]

BUILD_DIR_NAME = "build"
VENV_DIR_NAME = ".venv"


# Returns the build directory of the repository rooted at `repo`.
def build_dir(repo: Path = REPO) -> Path:
    return repo / BUILD_DIR_NAME


# Returns the raw kernel image for a kernel flavour ("kernel" or "kernel-test").
def kernel_bin(flavour: str = "kernel", repo: Path = REPO) -> Path:
    return build_dir(repo) / flavour / "kernel.bin"


# Returns K2's shadow kernel image (the build's second kernel pass).
def shadow_bin(repo: Path = REPO) -> Path:
    return build_dir(repo) / "k2" / "shadow.bin"


# Returns the ELF of the kernel flavour, for gdb.
def kernel_elf(flavour: str = "kernel", repo: Path = REPO) -> Path:
    return build_dir(repo) / flavour / "kernel.elf"


# Returns the ELF that the Makefile builds for native program `name` (the
# directory <name>/ under user/, tests/programs/ or bench/programs/), or, for
# "svc-<service>", the user-placed build of services/<service>/.
def user_elf(name: str, repo: Path = REPO) -> Path:
    if name.startswith("svc-"):
        return build_dir(repo) / "services" / f"{name[4:]}.elf"
    return build_dir(repo) / "user" / f"{name}.elf"


# Returns the packed boot image of system `name` (systems/<name>.toml).
def system_image(name: str, repo: Path = REPO) -> Path:
    return build_dir(repo) / "images" / f"{name}.pbi"


# Returns the project virtualenv directory.
def venv_dir(repo: Path = REPO) -> Path:
    return repo / VENV_DIR_NAME


# Returns the python interpreter inside the project virtualenv.
def venv_python(repo: Path = REPO) -> Path:
    return venv_dir(repo) / "bin" / "python"


# Shows `path` relative to the repository when it is inside it (for messages).
# The VERSION file a download into .cache/ wrote (linuxbase, busybox), or "unknown".
def cached_version(cache: Path) -> str:
    try:
        return (cache / "VERSION").read_text().strip()
    except OSError:
        return "unknown"


def rel(path: Path, repo: Path = REPO) -> str:
    try:
        return str(Path(path).resolve().relative_to(repo.resolve()))
    except ValueError:
        return str(path)
