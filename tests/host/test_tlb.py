"""The TLB budget report."""
from conftest import REPO
from petrel import tlb


def test_page_counting():
    assert tlb.pages(0x400000, 1) == 1
    assert tlb.pages(0x400ff0, 0x20) == 2           # straddles a page boundary
    assert tlb.pages(0x400000, 0x10000) == 16


def test_budget_of_the_file_service_systems():
    elf = REPO / "build" / "user" / "root.elf"
    assert elf.exists(), "run ./petrel build first"
    user_sys, user_rows, entries = tlb.budget(REPO / "systems" / "fs-user.toml", "cortex-a53", REPO)
    kern_sys, kern_rows, _ = tlb.budget(REPO / "systems" / "fs-kernel.toml", "cortex-a53", REPO)
    assert entries == 512
    spaces = {r[0] for r in user_rows}
    assert {"root", "fstest", "svc-fs", "kernel"} <= spaces
    assert "svc-fs" not in {r[0] for r in kern_rows}          # kernel placement: no process of its own
    text = tlb.report(user_sys, user_rows, entries, "cortex-a53")
    assert "they fit" in text and "| svc-fs | durable state (one 2 MiB page) | 2,097,152 | 2 MiB | 1 |" in text


def test_kernel_image_counts_as_the_kernel_maps_it():
    assert tlb.cont_entries(0x10000, 0x20000) == 2             # two aligned 64 KiB pages
    assert tlb.cont_entries(0x1000, 0x20000) == 15 + 1 + 1     # 4 KiB up to alignment, one 64 KiB, one 4 KiB
    assert tlb.cont_entries(0x10000, 0x8000) == 8              # too short for a 64 KiB page
    # Two 32 KiB slots of 16 KiB stacks: per slot the emergency page and the four stack pages.
    assert tlb.stack_pages(0x40000, 0x50000, 0x4000) == 10
    _, rows, _ = tlb.budget(REPO / "systems" / "fs-kernel.toml", "cortex-a53", REPO)
    image = [r for r in rows if r[0] == "kernel" and r[1].startswith("image")]
    assert [r[3] for r in image] == ["64 KiB"] * 3 and all(r[2] % 0x10000 == 0 for r in image)
    assert all(r[4] == r[2] // 0x10000 for r in image)        # the linker script ends each part on 64 KiB
