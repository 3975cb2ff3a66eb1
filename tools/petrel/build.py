"""Build: compile everything with make, then pack the system boot images.

The Makefile owns compilation (`make -C <repo> O=build`: kernel, test kernel,
user programs) and prints its own "  CC  file" lines, which pass straight
through. Afterwards every systems/*.toml is packed into build/images/<name>.pbi.
"""
import fcntl
import os
import shutil
import subprocess
import sys

from petrel import paths, systems


# Runs make on the repository; returns make's exit status.
def run_make(targets=(), jobs=None, verbose=False, repo=paths.REPO) -> int:
    if not shutil.which("make"):
        print("build: make not found: run `./petrel setup`", file=sys.stderr)
        return 127
    argv = ["make", "-C", str(repo), f"O={paths.BUILD_DIR_NAME}", f"-j{jobs or os.cpu_count() or 1}",
            "--no-print-directory", f"PYTHON={sys.executable}"]
    if verbose:
        argv.append("V=1")
    sys.stdout.flush()
    return subprocess.run(argv + list(targets)).returncode


# Packs every system description; returns 0, or 1 after printing the error.
def pack_images(repo=paths.REPO) -> int:
    try:
        for image in systems.pack_all(repo):
            print(f"  PBI     {paths.rel(image, repo)}", flush=True)
    except (ValueError, OSError) as err:
        print(f"build: {err}", file=sys.stderr)
        return 1
    return 0


# Builds everything (and the test kernel target when asked); returns a
# status. One build at a time in a tree: a second ./petrel (a host test's
# ./petrel run beside another's) waits for the first.
def build(kernel_test=False, jobs=None, verbose=False, repo=paths.REPO) -> int:
    targets = ["all", "kernel-test"] if kernel_test else []
    lock = paths.build_dir(repo) / ".build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        status = run_make(targets, jobs, verbose, repo)
        if status:
            print(f"build: make failed with status {status}", file=sys.stderr)
            return status
        return pack_images(repo)
