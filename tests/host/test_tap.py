"""The TAP reader: plans, results, directives, and kernel log noise."""
from petrel import tap

KERNEL_LOG = """\
Petrel 0.1 (cortex-a53, 2 cores)
[0.000100] gic: v2 at 0x8000000
1..4
ok 1 - pmm: alloc and free
[0.000200] cpu1: online
not ok 2 - ipc: call and reply
# expected 7
#   got 0
okay this line is kernel chatter, not TAP
ok 3 - timer # SKIP no interrupts under icount
not ok 4 - futex # TODO not written yet
PSCI: system off
"""


def test_plan_results_and_noise():
    report = tap.parse(KERNEL_LOG)
    assert report.plan == 4
    assert [(r.number, r.ok, r.description) for r in report.results] == [
        (1, True, "pmm: alloc and free"), (2, False, "ipc: call and reply"),
        (3, True, "timer"), (4, False, "futex")]
    assert report.missing() == [] and report.problems == []


def test_not_ok_fails_with_its_diagnostics():
    report = tap.parse(KERNEL_LOG)
    assert [r.number for r in report.failures()] == [2]
    assert report.results[1].comments == ["expected 7", "got 0"]
    assert not report.passed()


def test_skip_and_todo_directives():
    report = tap.parse(KERNEL_LOG)
    skip, todo = report.results[2], report.results[3]
    assert skip.directive == "skip" and skip.reason == "no interrupts under icount"
    assert skip.skipped and not skip.failed
    assert todo.directive == "todo" and todo.skipped and not todo.failed


def test_missing_tests_are_those_planned_but_not_reported():
    report = tap.parse("1..5\nok 1\nok 2 - b\nPANIC: data abort\n")
    assert report.missing() == [3, 4, 5]
    assert not report.passed()


def test_no_plan_means_not_passed():
    report = tap.parse("ok 1 - a\nok 2 - b\n")
    assert report.plan is None and not report.passed()


def test_trailing_plan_and_unnumbered_results():
    report = tap.parse("ok - first\nok\nnot ok - third # todo later\n1..3\n")
    assert [r.number for r in report.results] == [1, 2, 3]
    assert report.results[0].description == "first"
    assert report.passed()


def test_passing_stream_with_crlf_and_indentation():
    report = tap.parse("TAP version 13\r\n1..2\r\n  ok 1 - a\r\nok 2 - b\r\n")
    assert report.passed() and len(report.results) == 2


def test_duplicates_out_of_plan_and_second_plan_are_problems():
    report = tap.parse("1..2\nok 1\nok 1\nok 3\n1..3\n")
    assert any("more than once" in p for p in report.problems)
    assert any("outside the plan" in p for p in report.problems)
    assert any("more than one plan" in p for p in report.problems)
    assert report.missing() == [2]
    assert not report.passed()


def test_bail_out_fails_the_stream():
    report = tap.parse("1..1\nBail out! no memory\nok 1\n")
    assert report.bail_out == "no memory" and not report.passed()


def test_lookalike_lines_are_not_results():
    report = tap.parse("1..0\nok, booting\nokay\nbook 1\nnot okay\n# stray comment\n")
    assert report.results == [] and report.passed()


def test_escaped_hash_stays_in_description():
    report = tap.parse("1..1\nok 1 - count \\# of pages\n")
    assert report.results[0].description == "count # of pages"
    assert report.results[0].directive == ""
