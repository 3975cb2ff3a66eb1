"""K2's two kernels from one tree (docs/design/k2.md): the main kernel
(build/kernel/kernel.elf) and the shadow kernel (build/k2/shadow.elf) agree
on every shared object's address and size, keep their images apart, each in
its own local region, and use one VA-PA offset; the build's second pass and
the QEMU command line that boots it."""
import re
import subprocess

import pytest

from conftest import REPO
from petrel import kconfig, qemu

MAIN = REPO / "build" / "kernel" / "kernel.elf"
SHADOW = REPO / "build" / "k2" / "shadow.elf"
KERNEL_VA_BASE = 0xFFFFFF8000000000
MAIN_LOCAL = (0x40000000, 0x41000000)
SHADOW_LOCAL = (0x41000000, 0x42000000)
SHARED = {".k2hw": 0x42000000, ".k2shared": 0x42010000}


def readelf(elf, *flags) -> str:
    assert elf.exists(), f"{elf} is missing: run ./petrel build"
    return subprocess.run(["llvm-readelf", "--wide", *flags, str(elf)], capture_output=True, text=True,
                          check=True).stdout


# {section name: (index, address, size)}
def sections(elf) -> dict:
    out = {}
    for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", readelf(elf, "-S"),
                         re.M):
        out[m[2]] = (int(m[1]), int(m[3], 16), int(m[4], 16))
    return out


# {symbol name: (address, size)} of the symbols defined in section index `ndx`.
def symbols_in(elf, ndx: int) -> dict:
    out = {}
    for m in re.finditer(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(\d+)\s+(\S+)", readelf(elf, "-s"), re.M):
        if int(m[3]) == ndx:
            out[m[4]] = (int(m[1], 16), int(m[2]))
    return out


def symbol(elf, name: str) -> int:
    m = re.search(r"^\s*\d+:\s+([0-9a-f]+)\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+" + re.escape(name) + r"$",
                  readelf(elf, "-s"), re.M)
    assert m, f"{name} not in {elf}"
    return int(m[1], 16)


def test_shared_objects_have_one_address_and_size_in_both_kernels():
    main, shadow = sections(MAIN), sections(SHADOW)
    for name, pa in SHARED.items():
        assert main[name][1] == shadow[name][1] == KERNEL_VA_BASE + pa, name
        assert main[name][2] == shadow[name][2], f"{name}: {main[name][2]} bytes in main, {shadow[name][2]} in shadow"
        ours, theirs = symbols_in(MAIN, main[name][0]), symbols_in(SHADOW, shadow[name][0])
        assert ours and ours == theirs, f"{name}: {ours} in main, {theirs} in shadow"
    assert {"k2_hw", "k2_shared"} <= set(symbols_in(MAIN, main[".k2hw"][0])) | set(symbols_in(MAIN, main[".k2shared"][0]))


def test_each_image_lies_in_its_own_local_region_and_they_are_apart():
    spans = {}
    for elf, (lo, hi) in ((MAIN, MAIN_LOCAL), (SHADOW, SHADOW_LOCAL)):
        start, end = symbol(elf, "__kernel_start") - KERNEL_VA_BASE, symbol(elf, "__kernel_end") - KERNEL_VA_BASE
        assert lo <= start < end <= hi, f"{elf.name}: image {start:#x}-{end:#x} outside {lo:#x}-{hi:#x}"
        spans[elf] = (start, end)
    (a, b), (c, d) = spans[MAIN], spans[SHADOW]
    assert b <= c or d <= a
    text_main, text_shadow = sections(MAIN)[".text"], sections(SHADOW)[".text"]
    assert text_main[1] + text_main[2] <= text_shadow[1] or text_shadow[1] + text_shadow[2] <= text_main[1]


def test_both_kernels_use_one_offset_from_physical_to_virtual():
    for elf in (MAIN, SHADOW):
        loads = re.findall(r"^\s*LOAD\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", readelf(elf, "-l"), re.M)
        assert loads, elf
        for vaddr, paddr in loads:
            assert int(vaddr, 16) - int(paddr, 16) == KERNEL_VA_BASE, (elf.name, vaddr, paddr)


def test_the_shadow_image_says_what_it_is():
    shadow = (REPO / "build" / "k2" / "shadow.bin").read_bytes()
    main = (REPO / "build" / "kernel" / "kernel.bin").read_bytes()
    assert shadow[0x38:0x3c] == main[0x38:0x3c] == b"ARM\x64"
    assert shadow[0x20:0x28] == b"K2SHADOW" and main[0x20:0x28] == bytes(8)


def test_the_second_pass_overrides_options(tmp_path):
    out = tmp_path / "autoconf.h"
    kconfig.write_header(REPO / "kernel" / "Kconfig", tmp_path / ".config", REPO / "configs" / "defconfig", out,
                         overrides=["K2_SHADOW=y", "MAX_CPUS=1"])
    text = out.read_text()
    assert "#define CONFIG_K2_SHADOW 1" in text and "#define CONFIG_MAX_CPUS 1" in text
    kconfig.write_header(REPO / "kernel" / "Kconfig", tmp_path / ".config", REPO / "configs" / "defconfig", out)
    assert "#define CONFIG_K2_SHADOW 0" in out.read_text()
    for bad in ("NO_SUCH_OPTION=1", "MAX_CPUS=0", "MAX_CPUS=abc", "K2_SHADOW=yes", "HZ="):
        with pytest.raises(ValueError):
            kconfig.write_header(REPO / "kernel" / "Kconfig", tmp_path / ".config", REPO / "configs" / "defconfig",
                                 out, overrides=[bad])


def test_qemu_loads_the_shadow_where_it_is_linked():
    argv = qemu.build_argv("k.bin", "i.pbi", qemu.Machine(smp=3, k2="build/k2/shadow.bin"), "quiet")
    assert argv[argv.index("-device") + 1] == "loader,file=build/k2/shadow.bin,addr=0x41000000,force-raw=on"
    assert argv[argv.index("-append") + 1] == "k2 quiet"
    assert "loader" not in " ".join(qemu.build_argv("k.bin", "i.pbi", qemu.Machine(smp=3), ""))
    with pytest.raises(ValueError, match="core of its own"):
        qemu.build_argv("k.bin", None, qemu.Machine(smp=1, k2="s.bin"))
    with pytest.raises(ValueError, match="too small"):
        qemu.build_argv("k.bin", None, qemu.Machine(smp=2, mem="64M", k2="s.bin"))
    qemu.build_argv("k.bin", None, qemu.Machine(smp=2, mem="128M", k2="s.bin"))


def test_the_k2_suite_reads_its_rows_and_judges_the_fault_bound():
    from petrel import bench
    console = ("BENCH k2_mbox_rtt petrel-k2 647 10000\nBENCH k2_dsm_fault_main petrel-k2 1865 256\n"
               "BENCH k2_dsm_fault_shadow petrel-k2 7200 256\nBENCH-END\n")
    figures = bench.parse(console)
    assert figures == {("k2_mbox_rtt", "petrel-k2"): 647.0, ("k2_dsm_fault_main", "petrel-k2"): 1865.0,
                       ("k2_dsm_fault_shadow", "petrel-k2"): 7200.0}
    rows = bench.summary({k: [v] for k, v in figures.items()}, "icount")
    text = bench.k2_report(rows, qemu.Machine(smp=2, icount=True, k2="s.bin"), "./petrel bench --suite k2")
    assert "| k2_dsm_fault_main | 1,865 | - | - | 2.9 |" in text
    assert "- met: k2_dsm_fault_main <= 11 x k2_mbox_rtt" in text
    assert "- NOT met: k2_dsm_fault_shadow <= 11 x k2_mbox_rtt" in text     # 7,200 > 11 x 647


def test_the_k2_suite_sets_main_allocations_beside_the_one_kernel_system():
    from petrel import bench
    k2 = bench.parse("BENCH k2_alloc_4k_main petrel-k2 230 512\nBENCH k2_alloc_1m_main petrel-k2 400 128\n"
                     "BENCH k2_alloc_4k_shadow petrel-k2 260 512\nBENCH-END\n")
    one = bench.parse("BENCH k2_alloc_4k_main petrel 226 512\nBENCH k2_alloc_1m_main petrel 370 128\nBENCH-END\n")
    rows = bench.k2_rows(bench.summary({k: [v] for k, v in {**k2, **one}.items()}, "icount"))
    assert bench.value(rows, "k2_probe_cost", "petrel-k2") == 4
    text = bench.k2_report(rows, qemu.Machine(smp=2, icount=True, k2="s.bin"), "./petrel bench --suite k2")
    assert "| k2_alloc_4k_main | 230 | 226 | 1.02 | - |" in text
    assert "| k2_alloc_4k_shadow | 260 | - | - | - |" in text
    assert "| k2_probe_cost | 4.0 | - | - | - |" in text
    assert "- met: k2_alloc_4k_main within 20 instructions of the one-kernel system's (+4)" in text
    assert "- NOT met: k2_alloc_1m_main within 20 instructions of the one-kernel system's (+30)" in text
