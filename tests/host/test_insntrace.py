"""The per-function attribution of a QEMU instruction trace (tools/petrel/insntrace.py)."""
import pytest

from petrel import insntrace

SYMS = [(0x1000, "loop"), (0x1010, "call"), (0x2000, "kernel")]


def test_exec_log_lines_give_pcs():
    log = ["Trace 0: 0x7f00 [00000000/0000000000001000/00000011/ff020000] loop\n",
           "Linking TBs 0x1 [0000000000001000] index 0 -> 0x2 [0000000000001004]\n",
           "Trace 0: 0x7f40 [00000000/ffffff8040092c00/00000011/ff020000] \n"]
    assert insntrace.pcs_of(log) == [0x1000, 0xffffff8040092c00]


def test_one_iteration_from_the_middle_is_attributed_in_order():
    once = [0x1010, 0x1014, 0x2000, 0x2004, 0x2008, 0x1018, 0x1000, 0x1004]
    pcs = [0x1000] + once * 4                 # warm-up, then four iterations of `call`
    parts, window = insntrace.attribute(pcs, SYMS, "call")
    assert parts == [("call", 3), ("kernel", 3), ("loop", 2)]
    assert len(window) == len(once) and window[0] == 0x1010


def test_a_pc_below_every_symbol_and_a_missing_anchor():
    assert insntrace.name_of(0x10, SYMS) == "?" and insntrace.name_of(0x2000, SYMS) == "kernel"
    with pytest.raises(ValueError, match="no symbol"):
        insntrace.attribute([0x1000], SYMS, "nothere")
    with pytest.raises(ValueError, match="no whole iteration"):
        insntrace.attribute([0x1010, 0x1000], SYMS, "call")


def test_only_the_traced_rows_hits_count_when_lxbench_marks_it():
    syms = SYMS + [(0x3000, "lxbench_traced_begin"), (0x3010, "lxbench_traced_end")]
    other = [0x1010, 0x2000, 0x1018]             # another row of the group calling the anchor
    once = [0x1010, 0x1014, 0x1018, 0x1000]      # the traced row's iteration: no kernel
    pcs = other * 5 + [0x3000] + once * 3 + [0x3010] + other * 5
    parts, window = insntrace.attribute(pcs, syms, "call")
    assert parts == [("call", 3), ("loop", 1)] and window == once
