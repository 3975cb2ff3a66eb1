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
