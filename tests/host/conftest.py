"""Shared fixtures of the host tests: the tools package on sys.path, fake ELF
files, and tiny fake kernels that really boot in QEMU (print a text, then
power off, exit through semihosting, or hang)."""
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

UART = 0x09000000  # PL011 of QEMU virt


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: times something, so ./petrel test runs it alone, after the "
                                       "tests it runs in parallel")


# Returns the bytes of a minimal 64-bit little-endian AArch64 ELF header (+ payload).
def fake_elf(payload: bytes = b"") -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 183, 1, 0x400000, 64, 0, 0, 64, 56, 0, 64, 0, 0)
    return header + payload


@pytest.fixture
def elf():
    """Factory of fake AArch64 ELF files."""
    return fake_elf


# Returns the assembly of a fake kernel that prints `text` and then ends as `end` says.
def fake_kernel_source(text: str, end) -> str:
    if end == "psci":
        finish = "ldr x0, =0x84000008\n hvc #0\n9: b 9b"
    elif end == "hang":
        finish = "9: wfi\n b 9b"
    else:
        finish = "mov x0, #0x18\n adr x1, block\n hlt #0xf000\n9: b 9b"
    data = ", ".join(str(b) for b in text.encode() + b"\0")
    code = 0 if end in ("psci", "hang") else int(end)
    return f""".global _start
_start:
 adr x1, msg
 ldr x2, ={UART:#x}
1: ldrb w3, [x1], #1
 cbz w3, 2f
 strb w3, [x2]
 b 1b
2: {finish}
.ltorg
.balign 8
block: .quad 0x20026, {code}
msg: .byte {data}
"""


@pytest.fixture(scope="session")
def fake_kernel(tmp_path_factory):
    """Factory: fake_kernel(text, end) -> path of a raw kernel image.
    end is "psci" (exit 0), "hang", or an int (semihosting exit status)."""
    tools = ["clang", "ld.lld", "llvm-objcopy", "qemu-system-aarch64"]
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip(f"needs {' '.join(missing)} (./petrel setup)")
    out = tmp_path_factory.mktemp("fake-kernels")
    count = [0]

    def make(text: str, end="psci") -> Path:
        count[0] += 1
        base = out / f"k{count[0]}"
        base.with_suffix(".S").write_text(fake_kernel_source(text, end))
        for argv in (["clang", "--target=aarch64-none-elf", "-c", f"{base}.S", "-o", f"{base}.o"],
                     ["ld.lld", "-Ttext=0x40080000", f"{base}.o", "-o", f"{base}.elf"],
                     ["llvm-objcopy", "-O", "binary", f"{base}.elf", f"{base}.bin"]):
            subprocess.run(argv, check=True, capture_output=True)
        return base.with_suffix(".bin")
    return make
