"""The ./petrel command line and the setup step's bookkeeping."""
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from petrel import cli, envsetup


def test_run_options_and_defaults():
    args = cli.make_parser().parse_args(["run"])
    assert (args.smp, args.cpu, args.gic, args.mem, args.gdb, args.icount) == (1, "cortex-a53", 2, "512M", None, False)
    args = cli.make_parser().parse_args(["run", "--gdb", "--smp", "4", "--gic", "3", "--cpu", "cortex-a72"])
    assert (args.gdb, args.smp, args.gic, args.cpu) == (1234, 4, 3, "cortex-a72")
    assert cli.make_parser().parse_args(["run", "--gdb", "4000"]).gdb == 4000


def test_bad_options_are_refused():
    for argv in (["run", "--gic", "4"], ["run", "--cpu", "max"], ["test", "--guest-only", "--host-only"]):
        with pytest.raises(SystemExit):
            cli.make_parser().parse_args(argv)


def test_test_options():
    args = cli.make_parser().parse_args(["test", "-k", "boot/a53", "-j", "4", "--list"])
    assert (args.pattern, args.jobs, args.list) == ("boot/a53", 4, True)
    assert cli.make_parser().parse_args(["test"]).jobs == 2


@pytest.mark.parametrize("command", [[], ["setup"], ["build"], ["run"], ["test"]])
def test_every_command_has_help(command):
    proc = subprocess.run([sys.executable, str(REPO / "petrel"), *command, "--help"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "usage: petrel" in proc.stdout
    if not command:
        assert "./petrel run" in proc.stdout and "./petrel test" in proc.stdout


@pytest.mark.skipif(not shutil.which("dpkg-query"), reason="needs dpkg")
def test_missing_apt_reports_only_absent_packages():
    assert envsetup.missing_apt(["dpkg", "petrel-no-such-package"]) == ["petrel-no-such-package"]


def test_stamp_follows_requirements(tmp_path):
    (tmp_path / "requirements.txt").write_text("pytest>=8  # tests\nkconfiglib==14.1.0\n\n")
    assert envsetup.requirement_names(tmp_path) == ["pytest", "kconfiglib"]
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text("")
    assert not envsetup.venv_current(tmp_path)
    (tmp_path / ".venv" / envsetup.STAMP_NAME).write_text(envsetup.stamp_value(tmp_path) + "\n")
    assert envsetup.venv_current(tmp_path)
    (tmp_path / "requirements.txt").write_text("pytest>=8\n")
    assert not envsetup.venv_current(tmp_path)


def test_reexec_is_skipped_once_marked(monkeypatch, tmp_path):
    monkeypatch.setenv(envsetup.MARKER, "1")
    monkeypatch.setattr(envsetup.os, "execv", lambda *a: pytest.fail("re-executed twice"))
    envsetup.reexec_in_venv(tmp_path / "petrel", ["test"], repo=tmp_path)
