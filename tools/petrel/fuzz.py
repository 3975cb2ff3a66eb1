"""`./petrel fuzz personality`: the host fuzzer of the Linux personality.

The personality's sources (services/linux/) are built for this machine with
AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer against a test
double of the service environment (tests/hostfuzz/, its Makefile; the design
is in docs/design/fuzzing.md) and fuzzed for a while with libFuzzer's fork
mode. The seeds are tests/hostfuzz/corpus/ (read only); what the fuzzer
adds goes to build/fuzz/corpus/, crashes to build/fuzz/crashes/, libFuzzer's
own output to build/fuzz/fuzz.log. One line of progress a minute; the exit
status is 1 if a crash was found, and its file and the command that replays
it are printed:

    ./petrel fuzz personality --replay build/fuzz/crashes/crash-...

A replay runs the input once with HOSTFUZZ_TRACE=1: each operation with its
result, the personality's console lines, then the sanitizer's report.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from petrel import paths

HOSTFUZZ = paths.REPO / "tests" / "hostfuzz"
SEEDS = HOSTFUZZ / "corpus"
TARGETS = ("personality",)
PROGRESS_EVERY = 60.0           # seconds between progress lines
INPUT_TIMEOUT = 10              # seconds one input may take (a hang is a crash)


# The directory the fuzzer keeps its corpus, crashes and log in.
def fuzz_dir(repo: Path = paths.REPO) -> Path:
    return paths.build_dir(repo) / "fuzz"


# The environment the harness runs in: stack traces for UBSan's reports too.
def run_env(trace: bool = False) -> dict:
    env = dict(os.environ)
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    if trace:
        env["HOSTFUZZ_TRACE"] = "1"
    return env


# Builds the harness (make -f tests/hostfuzz/Makefile); its path, or None if the build failed.
def build_harness(repo: Path = paths.REPO, jobs: int | None = None, quiet: bool = False) -> Path | None:
    argv = ["make", "-f", str(HOSTFUZZ / "Makefile"), f"O={paths.build_dir(repo)}", f"-j{jobs or os.cpu_count() or 1}"]
    proc = subprocess.run(argv, cwd=repo, capture_output=quiet, text=True)
    if proc.returncode:
        if quiet:
            print(proc.stdout + proc.stderr, file=sys.stderr)
        print(f"fuzz: building the harness failed (make status {proc.returncode})", file=sys.stderr)
        return None
    return paths.build_dir(repo) / "hostfuzz" / "fuzz_personality"


# Runs the harness once on each file (libFuzzer's plain run: every input must
# pass); the harness's status and its output.
def replay_files(binary: Path, files: list, trace: bool = False) -> tuple:
    proc = subprocess.run([str(binary), *map(str, files)], capture_output=True, text=True, env=run_env(trace))
    return proc.returncode, proc.stdout + proc.stderr


# Returns the last figures of libFuzzer's log: runs, coverage, corpus, speed.
def progress_of(log: str) -> dict:
    figures = {}
    for line in log.splitlines()[-200:]:
        for key, pattern in (("runs", r"^#(\d+)"), ("cov", r"cov: (\d+)"), ("corp", r"corp: (\d+)"),
                             ("exec/s", r"exec/s:? (\d+)")):
            m = re.search(pattern, line)
            if m:
                figures[key] = int(m.group(1))
    return figures


# Fuzzes for `seconds` with `jobs` processes, keeping corpus, crashes and
# log under base (default build/fuzz), with libFuzzer's random seed `seed`
# (0: its own choice); 0 if nothing crashed, 1 if something did, 2 on errors.
def fuzz(seconds: float, jobs: int = 1, repo: Path = paths.REPO, verbose: bool = False, base: Path | None = None,
         seed: int = 0) -> int:
    binary = build_harness(repo, quiet=not verbose)
    if not binary:
        return 2
    base = base or fuzz_dir(repo)
    corpus, crashes, log_path = base / "corpus", base / "crashes", base / "fuzz.log"
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    before = set(crashes.iterdir())
    argv = [str(binary), f"-fork={max(1, jobs)}", f"-max_total_time={max(1, int(seconds))}",
            f"-timeout={INPUT_TIMEOUT}", f"-artifact_prefix={crashes}/", "-print_final_stats=1",
            *([f"-seed={seed}"] if seed else []), str(corpus), str(SEEDS)]
    print(f"fuzz: {paths.rel(binary, repo)} for {seconds:g} s with {jobs} job(s); corpus {paths.rel(corpus, repo)}, "
          f"crashes {paths.rel(crashes, repo)}, log {paths.rel(log_path, repo)}", flush=True)
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=base, stdout=log, stderr=subprocess.STDOUT, env=run_env())
        next_report = start + PROGRESS_EVERY
        while proc.poll() is None:
            time.sleep(1)
            if verbose or time.monotonic() >= next_report:
                next_report = time.monotonic() + PROGRESS_EVERY
                f = progress_of(log_path.read_text(errors="replace"))
                print(f"fuzz: {time.monotonic() - start:5.0f} s: {f.get('runs', 0)} inputs, coverage "
                      f"{f.get('cov', 0)}, corpus {f.get('corp', 0)}, {f.get('exec/s', 0)} inputs/s", flush=True)
    found = sorted(set(crashes.iterdir()) - before, key=lambda p: p.stat().st_mtime)
    text = log_path.read_text(errors="replace")
    f = progress_of(text)
    print(f"fuzz: done after {time.monotonic() - start:.0f} s: {f.get('runs', 0)} inputs, coverage {f.get('cov', 0)}, "
          f"corpus {f.get('corp', 0)}", flush=True)
    if found:
        for line in text.splitlines():
            if "SUMMARY:" in line or "==hostfuzz==" in line or "ERROR: AddressSanitizer" in line:
                print(f"fuzz: {line.strip()}")
        for path in found:
            print(f"fuzz: crash saved to {paths.rel(path, repo)}")
            print(f"fuzz: replay it with ./petrel fuzz personality --replay {paths.rel(path, repo)}")
        return 1
    if proc.returncode:
        print(f"fuzz: libFuzzer exited with status {proc.returncode}; see {paths.rel(log_path, repo)}",
              file=sys.stderr)
        return 2
    print("fuzz: no crash")
    return 0


# Replays one input with the trace on; the harness's status (0: it passes).
def replay(path: Path, repo: Path = paths.REPO) -> int:
    binary = build_harness(repo, quiet=True)
    if not binary:
        return 2
    if not path.is_file():
        print(f"fuzz: no such input: {path}", file=sys.stderr)
        return 2
    status, out = replay_files(binary, [path], trace=True)
    print(out, end="")
    print(f"fuzz: {'the input passes' if status == 0 else f'the input fails (status {status})'}")
    return 0 if status == 0 else 1


# The `fuzz` subcommand.
def main(target: str, minutes: float, jobs: int, replay_path: str | None, verbose: bool = False) -> int:
    if target not in TARGETS:
        print(f"fuzz: no target {target}; there is {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    if replay_path:
        return replay(Path(replay_path).resolve())
    return fuzz(minutes * 60, jobs, verbose=verbose)
