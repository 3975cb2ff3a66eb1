"""The Linux baseline: Debian's arm64 kernel, for side-by-side benchmarks.

`fetch` resolves the versioned package behind the `linux-image-arm64`
metapackage, downloads it with `apt-get download`, unpacks it with
`dpkg-deb -x` and keeps only what the benchmarks and the Linux peers boot:
the kernel Image, the `binder_linux` module, the modules a virtio-mmio
network card needs (NET_MODULES, in the order they load), those a
virtio-mmio disk with an ext2 file system needs (BLK_MODULES) and those a
virtio-mmio keyboard's events need (INPUT_MODULES). Everything lands in `.cache/linux/`
(outside the build tree, so `make clean` keeps it).
"""
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from petrel import debian, paths


class BaselineError(RuntimeError):
    """The Linux baseline could not be obtained."""


def cache_dir(repo: Path = paths.REPO) -> Path:
    return repo / ".cache" / "linux"


def image(repo: Path = paths.REPO) -> Path:
    return cache_dir(repo) / "Image"


def binder_module(repo: Path = paths.REPO) -> Path:
    return cache_dir(repo) / "binder_linux.ko"


# Module name -> its path in the package: what a virtio-mmio NIC needs, in
# the order they load (each after what its modinfo `depends=` names).
NET_MODULES = {"virtio_mmio": "drivers/virtio/virtio_mmio.ko", "failover": "net/core/failover.ko",
               "net_failover": "drivers/net/net_failover.ko", "virtio_net": "drivers/net/virtio_net.ko"}
# Congestion control modules Debian builds as modules (./petrel bench --suite tcp loads them).
CC_MODULES = {"tcp_westwood": "net/ipv4/tcp_westwood.ko"}
# A virtio-mmio disk and ext2 on it (Debian's ext4 driver mounts ext2: CONFIG_EXT4_USE_FOR_EXT2), in the
# order they load (after virtio_mmio of NET_MODULES; ext4's modinfo depends= names jbd2, mbcache, crc16).
BLK_MODULES = {"virtio_blk": "drivers/block/virtio_blk.ko", "crc16": "lib/crc16.ko", "mbcache": "fs/mbcache.ko",
               "jbd2": "fs/jbd2/jbd2.ko", "crc32c_generic": "crypto/crc32c_generic.ko", "ext4": "fs/ext4/ext4.ko"}
# A virtio-mmio keyboard (QEMU's virtio-keyboard-device) and its events in /dev/input/event*, loaded
# after virtio_mmio of NET_MODULES (a keyboard case lists all three in its `modules`).
INPUT_MODULES = {"virtio_input": "drivers/virtio/virtio_input.ko", "evdev": "drivers/input/evdev.ko"}
# Parameters a module is loaded with (tests/linux/init.c passes the rest of
# its /etc/modules line): binder_linux makes the Binder devices Petrel's
# Linux systems make (lxrun's binder= in systems/linux-*.toml).
MODULE_PARAMS = {"binder_linux": "devices=binder,hwbinder,vndbinder"}


# The /etc/modules line of a module at `path`: the path, then its parameters.
def module_line(name: str, path: str) -> str:
    params = MODULE_PARAMS.get(name, "")
    return f"{path} {params}\n" if params else f"{path}\n"


# The modules a Linux machine with a disk loads, in order: (name, cached file).
def blk_modules(repo: Path = paths.REPO) -> list:
    return [(m, net_module(m, repo)) for m in ["virtio_mmio", *BLK_MODULES]]


def net_module(name: str, repo: Path = paths.REPO) -> Path:
    return cache_dir(repo) / f"{name}.ko"


def version(repo: Path = paths.REPO) -> str:
    return paths.cached_version(cache_dir(repo))


# True when the kernel and every module are in the cache.
def present(repo: Path = paths.REPO) -> bool:
    return image(repo).exists() and binder_module(repo).exists() and \
        all(net_module(m, repo).exists() for m in {**NET_MODULES, **CC_MODULES, **BLK_MODULES, **INPUT_MODULES})


# Returns the versioned kernel package the metapackage depends on.
def resolve_package() -> str:
    out = subprocess.run(["apt-cache", "depends", "linux-image-arm64:arm64"], capture_output=True, text=True)
    match = re.search(r"Depends:\s*(linux-image-[0-9][^\s:]*-arm64)", out.stdout)
    if not match:
        raise BaselineError("apt-cache does not know linux-image-arm64:arm64 (is the arm64 architecture "
                            "added and apt-get update run?)")
    return match.group(1)


# Downloads and unpacks the kernel package into the cache.
def fetch(repo: Path = paths.REPO, say=print) -> None:
    package = resolve_package()
    say(f"downloading the Linux baseline kernel: {package}:arm64")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "x"
        name = debian.unpack(package, tree, BaselineError)
        kernels = list((tree / "boot").glob("vmlinuz-*"))
        modules = list(tree.glob("lib/modules/*/kernel/drivers/android/binder_linux.ko*"))
        if not kernels or not modules:
            raise BaselineError(f"{name}.deb has no kernel image or binder_linux module")
        out = cache_dir(repo)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kernels[0], image(repo))
        if modules[0].suffix != ".ko":
            raise BaselineError(f"compressed module {modules[0].name} is not supported")
        shutil.copyfile(modules[0], binder_module(repo))
        for mod, rel in {**NET_MODULES, **CC_MODULES, **BLK_MODULES, **INPUT_MODULES}.items():
            found = list(tree.glob(f"lib/modules/*/kernel/{rel}"))
            if not found:
                raise BaselineError(f"{name}.deb has no {rel}")
            shutil.copyfile(found[0], net_module(mod, repo))
        (out / "VERSION").write_text(kernels[0].name.removeprefix("vmlinuz-") + "\n")
    say(f"Linux baseline ready: {paths.rel(image(repo), repo)} ({version(repo)})")
