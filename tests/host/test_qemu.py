"""QEMU command lines, and real runs of tiny fake kernels."""
import os
import time
from pathlib import Path

import pytest

from petrel import qemu
from petrel.qemu import Machine


# Returns the value following `flag` in argv.
def value(argv, flag):
    return argv[argv.index(flag) + 1]


def test_test_argv_has_machine_boot_files_and_captured_serial():
    argv = qemu.build_argv("k.bin", "img.pbi", Machine("cortex-a72", 3, 4, "1G"), "ktest x=1")
    assert argv[0] == "qemu-system-aarch64"
    assert value(argv, "-M") == "virt,gic-version=3"
    assert value(argv, "-cpu") == "cortex-a72"
    assert value(argv, "-smp") == "4" and value(argv, "-m") == "1G"
    assert value(argv, "-kernel") == "k.bin" and value(argv, "-initrd") == "img.pbi"
    assert value(argv, "-append") == "ktest x=1"
    assert value(argv, "-serial") == "stdio" and value(argv, "-monitor") == "none"
    assert value(argv, "-semihosting-config") == "enable=on,target=native"
    assert value(argv, "-display") == "none" and "-no-reboot" in argv
    assert "-icount" not in argv and "-gdb" not in argv and "-S" not in argv
    # No default devices: the default NIC needs an option ROM a fresh machine may lack.
    assert "-nodefaults" in argv and "-nic" not in argv and "-device" not in argv


def test_interactive_argv_puts_monitor_on_terminal_and_gdb_waits():
    argv = qemu.build_argv("k.bin", "img.pbi", Machine(), interactive=True, gdb_port=1234)
    # One stdio chardev for console and monitor (Ctrl-A c), Ctrl-C to the guest.
    assert value(argv, "-chardev") == "stdio,id=console,mux=on,signal=off"
    assert value(argv, "-serial") == "chardev:console" and value(argv, "-mon") == "chardev=console,mode=readline"
    assert "-monitor" not in argv
    assert value(argv, "-gdb") == "tcp::1234" and "-S" in argv
    assert value(argv, "-M") == "virt,gic-version=2" and value(argv, "-cpu") == "cortex-a53"
    assert value(argv, "-append") == ""


def test_icount_and_no_image():
    argv = qemu.build_argv("k.bin", None, Machine(icount=True))
    assert value(argv, "-icount") == "shift=0,align=off,sleep=off"
    assert "-initrd" not in argv


@pytest.mark.parametrize("machine, message", [
    (Machine(cpu="max"), "cpu"),
    (Machine(gic=4), "gic"),
    (Machine(smp=0), "smp"),
    (Machine(gic=2, smp=9), "at most 8"),
    (Machine(mem="lots"), "mem"),
    (Machine(net="bridge"), "net 'bridge'"),
    (Machine(pcap="x.pcap"), "needs a network"),
])
def test_bad_machines_are_rejected(machine, message):
    with pytest.raises(ValueError, match=message):
        qemu.build_argv("k.bin", None, machine)


def test_network_is_virtio_net_on_a_modern_transport_and_isolated_for_tests():
    assert "-netdev" not in qemu.build_argv("k", None, Machine())
    user = qemu.build_argv("k", None, Machine(net="user"))
    assert value(user, "-netdev") == "user,id=net0" and value(user, "-device") == "virtio-net-device,netdev=net0"
    assert value(user, "-global") == "virtio-mmio.force-legacy=false" and "-object" not in user
    isolated = qemu.build_argv("k", None, Machine(net="isolated", pcap="out.pcap"))
    assert value(isolated, "-netdev") == "user,id=net0,restrict=on"
    assert value(isolated, "-object") == "filter-dump,id=dump0,netdev=net0,file=out.pcap"
    snapped = qemu.build_argv("k", None, Machine(net="isolated", pcap="out.pcap", pcap_snap=128))
    assert value(snapped, "-object") == "filter-dump,id=dump0,netdev=net0,file=out.pcap,maxlen=128"


def test_gicv3_allows_many_cores():
    assert value(qemu.build_argv("k", None, Machine(gic=3, smp=16)), "-smp") == "16"


def test_missing_qemu_is_explained():
    with pytest.raises(qemu.QemuMissing, match="petrel setup"):
        qemu.run(["qemu-system-does-not-exist", "-version"], 5)


def test_console_normalises_line_ends():
    assert qemu.decode_console(b"a\r\nb\rc\n\xff") == "a\nb\nc\n\ufffd"


def test_run_returns_psci_exit_and_console(fake_kernel):
    kernel = fake_kernel("hello from the guest\r\n", "psci")
    status, console = qemu.run(qemu.build_argv(kernel, None, Machine()), 20)
    assert status == 0
    assert console == "hello from the guest\n"


def test_run_returns_semihosting_exit_status(fake_kernel):
    kernel = fake_kernel("PANIC: boom\n", 3)
    status, console = qemu.run(qemu.build_argv(kernel, None, Machine(cpu="cortex-a72", gic=3, smp=2)), 20)
    assert status == 3 and "PANIC: boom" in console


def test_run_times_out_and_kills_qemu(fake_kernel):
    kernel = fake_kernel("stuck\n", "hang")
    start = time.monotonic()
    status, console = qemu.run(qemu.build_argv(kernel, None, Machine()), 1.0)
    assert status is None
    assert "stuck" in console
    assert time.monotonic() - start < 10
    assert not qemu._live


def test_typed_input_ends_with_ctrl_d_until_the_guest_stops(tmp_path):
    # A stand-in for QEMU that reads its console input: a first Ctrl-D is
    # taken by a program, a second one ends the shell. Typing keeps
    # sending Ctrl-D after the input ends, as a closed pipe stays at its end.
    fake = tmp_path / "guest.py"
    fake.write_text(
        "import sys\n"
        "seen = b''\n"
        "while seen.count(b'\\x04') < 2:\n"
        "    b = sys.stdin.buffer.read(1)\n"
        "    if not b:\n"
        "        sys.exit(3)\n"
        "    seen += b\n"
        "sys.exit(0 if seen.startswith(b'ls\\n\\x04') else 4)\n")
    import io
    import sys
    status = qemu.run_typed([sys.executable, str(fake)], io.BytesIO(b"ls\n"), eof_every=0.05)
    assert status == 0


def test_a_typed_run_stopped_by_a_signal_stops_its_guest(tmp_path):
    # `./petrel run < input` of a guest that never powers off (a server
    # behind --forward), ended by kill: QEMU must go with it.
    import sys
    import subprocess
    pid_file = tmp_path / "guest.pid"
    guest = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(300)"
    runner = subprocess.Popen([sys.executable, "-c",
                               "import io, sys; from petrel import qemu; "
                               f"sys.exit(qemu.run_typed([sys.executable, '-c', {guest!r}], io.BytesIO(b'')) & 255)"],
                              cwd=str(Path(qemu.__file__).parent.parent))
    deadline = time.monotonic() + 20
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    runner.terminate()
    assert runner.wait(10) != 0
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
