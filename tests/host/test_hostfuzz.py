"""The host fuzzer of the Linux personality (tests/hostfuzz/, docs/design/fuzzing.md):
it builds, every seed of its corpus passes, and a short fuzzing run finds no
crash. PETREL_FUZZ_SECONDS sets how long that run is (default 300: five minutes each time
the suite runs)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from petrel import cli, fuzz, paths

SECONDS = float(os.environ.get("PETREL_FUZZ_SECONDS", "300"))

needs_clang = pytest.mark.skipif(not shutil.which("clang-14") and not shutil.which("clang"),
                                 reason="needs clang 14 and libclang-rt-14-dev (./petrel setup)")


def test_fuzz_command_line():
    args = cli.make_parser().parse_args(["fuzz", "personality"])
    assert (args.target, args.minutes, args.jobs, args.replay) == ("personality", 10, 1, None)
    args = cli.make_parser().parse_args(["fuzz", "personality", "--minutes", "2", "--jobs", "2", "--replay", "x"])
    assert (args.minutes, args.jobs, args.replay) == (2, 2, "x")
    with pytest.raises(SystemExit):
        cli.make_parser().parse_args(["fuzz", "kernel"])
    proc = subprocess.run([sys.executable, str(REPO / "petrel"), "fuzz", "--help"], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0 and "--minutes" in proc.stdout and "--replay" in proc.stdout


def test_progress_is_read_from_libfuzzer_lines():
    log = ("#512\tpulse  cov: 300 ft: 700 corp: 40/2Kb exec/s: 256 rss: 90Mb\n"
           "#9000: cov: 2400 ft: 6500 corp: 210 exec/s 450 oom/timeout/crash: 0/0/0 time: 20s job: 3 dft_time: 0\n")
    assert fuzz.progress_of(log) == {"runs": 9000, "cov": 2400, "corp": 210, "exec/s": 450}


@pytest.fixture(scope="module")
def harness():
    binary = fuzz.build_harness(REPO, quiet=True)
    assert binary and binary.exists(), "the host fuzzer does not build (make -f tests/hostfuzz/Makefile)"
    return binary


def test_seeds_are_the_ones_mkseeds_writes(tmp_path):
    """tests/hostfuzz/corpus/ is what mkseeds.py makes: regenerate it when ops.h or a seed changes."""
    subprocess.run([sys.executable, str(fuzz.HOSTFUZZ / "mkseeds.py"), str(tmp_path)], check=True)
    for made in tmp_path.iterdir():
        kept = fuzz.SEEDS / made.name
        assert kept.exists() and kept.read_bytes() == made.read_bytes(), made.name


@needs_clang
def test_every_seed_passes(harness):
    seeds = sorted(fuzz.SEEDS.iterdir())
    assert len(seeds) >= 4
    status, out = fuzz.replay_files(harness, seeds)
    if status:
        failing = [s.name for s in seeds if fuzz.replay_files(harness, [s])[0]]
        pytest.fail(f"seeds failing: {', '.join(failing)} (replay one with ./petrel fuzz personality --replay "
                    f"tests/hostfuzz/corpus/NAME)\n{out[-4000:]}")


@needs_clang
def test_a_short_fuzzing_run_finds_no_crash(harness):
    base = paths.build_dir(REPO) / "fuzz" / "test"
    for old in ("corpus", "crashes"):
        shutil.rmtree(base / old, ignore_errors=True)
    status = fuzz.fuzz(SECONDS, jobs=1, repo=REPO, base=base, seed=1)
    crashes = sorted((base / "crashes").iterdir(), key=lambda p: p.stat().st_mtime)
    assert status == 0, (f"the fuzzer found a crash: ./petrel fuzz personality --replay "
                         f"{paths.rel(crashes[-1]) if crashes else base}")
