"""A Test Anything Protocol (TAP) reader for kernel consoles.

The in-kernel self tests print TAP on the serial console, mixed with ordinary
kernel log lines:

    Petrel 0.1 booting on 2 cores
    1..3
    ok 1 - pmm: alloc and free
    [cpu1] online
    not ok 2 - ipc: call and reply
    # expected 7, got 0
    ok 3 - timer: tick # SKIP no timer irq under icount

Lines that are not TAP are ignored, so log output may interleave freely
between TAP lines (not inside one). The plan may come first or last. The
report says which planned tests never appeared, which failed, and what looked
wrong with the stream itself (duplicate numbers, numbers outside the plan,
several plans, "Bail out!").

A `not ok ... # TODO` counts as a known failure, not a failure, as in TAP.
"""
import re
from dataclasses import dataclass, field

PLAN_RE = re.compile(r"^\s*1\.\.(\d+)\s*(?:#\s*(.*))?$")
RESULT_RE = re.compile(r"^\s*(not\s+)?ok(?:\s+(\d+))?(?:\s+(.*))?$")
DIRECTIVE_RE = re.compile(r"(?<!\\)#\s*(SKIP|TODO)\S*\s*(.*)$", re.IGNORECASE)
BAIL_RE = re.compile(r"^\s*Bail out!\s*(.*)$")


@dataclass
class Result:
    """One `ok` / `not ok` line."""
    number: int
    ok: bool
    description: str
    directive: str = ""     # "", "skip" or "todo"
    reason: str = ""        # text after the directive
    comments: list = field(default_factory=list)  # "# ..." lines right after it

    # True when this result should count as a failure.
    @property
    def failed(self) -> bool:
        return not self.ok and self.directive != "todo"

    # True when this result was skipped (or is an expected TODO failure).
    @property
    def skipped(self) -> bool:
        return self.directive == "skip" or (self.directive == "todo" and not self.ok)


@dataclass
class Report:
    """Everything read from one TAP stream."""
    plan: int | None = None
    plan_reason: str = ""
    results: list = field(default_factory=list)
    bail_out: str | None = None
    problems: list = field(default_factory=list)

    # Returns planned test numbers that never reported a result.
    def missing(self) -> list:
        if self.plan is None:
            return []
        seen = {r.number for r in self.results}
        return [n for n in range(1, self.plan + 1) if n not in seen]

    # Returns the results that count as failures.
    def failures(self) -> list:
        return [r for r in self.results if r.failed]

    # True when the stream is complete, well-formed and nothing failed.
    def passed(self) -> bool:
        return (self.plan is not None and not self.missing() and not self.failures()
                and self.bail_out is None and not self.problems)


# Splits "- description # SKIP reason" into (description, directive, reason).
def split_description(rest: str) -> tuple:
    directive, reason = "", ""
    match = DIRECTIVE_RE.search(rest)
    if match:
        directive, reason = match.group(1).lower(), match.group(2).strip()
        rest = rest[: match.start()]
    rest = rest.strip()
    if rest.startswith("-"):
        rest = rest[1:].strip()
    return rest.replace("\\#", "#"), directive, reason


# Records a plan line in `report`.
def add_plan(report: Report, match: re.Match) -> None:
    if report.plan is not None:
        report.problems.append(f"more than one plan (second: 1..{match.group(1)})")
        return
    report.plan = int(match.group(1))
    report.plan_reason = (match.group(2) or "").strip()


# Records an ok / not ok line in `report`, numbering it if the number is absent.
def add_result(report: Report, match: re.Match) -> None:
    number = int(match.group(2)) if match.group(2) else len(report.results) + 1
    description, directive, reason = split_description(match.group(3) or "")
    if any(r.number == number for r in report.results):
        report.problems.append(f"test {number} reported more than once")
    report.results.append(Result(number, match.group(1) is None, description, directive, reason))


# Parses a console text into a Report, ignoring non-TAP lines. A "# ..." line
# is kept as a diagnostic of the latest result.
def parse(text: str) -> Report:
    report = Report()
    for line in text.splitlines():
        if match := PLAN_RE.match(line):
            add_plan(report, match)
        elif match := RESULT_RE.match(line):
            add_result(report, match)
        elif match := BAIL_RE.match(line):
            if report.bail_out is None:
                report.bail_out = match.group(1).strip()
        elif line.lstrip().startswith("#") and report.results:
            report.results[-1].comments.append(line.lstrip()[1:].strip())
    if report.plan is not None:
        for r in report.results:
            if not 1 <= r.number <= report.plan:
                report.problems.append(f"test {r.number} is outside the plan 1..{report.plan}")
    return report
