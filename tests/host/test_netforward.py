"""`./petrel run --forward HOSTPORT:GUESTPORT`: the option as the command
line takes it, QEMU's argv it makes (listening on 127.0.0.1 only), and a
real run: a host program connects to the forwarded port and a TCP echo in
Petrel (tests/programs/netpeer on services/net, systems/forward-echo.toml)
answers it through QEMU's user-mode network."""
import socket
import subprocess
import threading
import time

import pytest

from petrel import cli, paths, qemu


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_for(*argv):
    args = cli.make_parser().parse_args(["run", *argv])
    return cli.run_machine(args, False)


def test_forward_option_makes_loopback_only_forwards():
    m = machine_for("--forward", "8080:80", "--forward", "2222:22")
    assert m.forward == ((8080, 80), (2222, 22)) and m.net == "isolated"
    argv = qemu.build_argv("k", None, m)
    assert argv[argv.index("-netdev") + 1] == \
        "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:8080-:80,hostfwd=tcp:127.0.0.1:2222-:22"


@pytest.mark.parametrize("bad", ["80", "0:80", "80:70000", "a:b", "80:80:80"])
def test_forward_option_rejects_what_is_not_two_ports(bad, capsys):
    with pytest.raises(SystemExit):
        machine_for("--forward", bad)
    assert "expected HOSTPORT:GUESTPORT" in capsys.readouterr().err


def test_forward_needs_a_user_mode_network():
    with pytest.raises(ValueError, match="needs QEMU's user-mode network"):
        qemu.build_argv("k", None, machine_for("--net", "none", "--forward", "8080:80"))
    with pytest.raises(ValueError, match="forwarded twice"):
        qemu.build_argv("k", None, machine_for("--forward", "8080:80", "--forward", "8080:81"))


def test_a_host_program_reaches_a_petrel_server_through_the_forward():
    image = paths.system_image("forward-echo")
    assert image.exists(), "run ./petrel build first"
    port = free_port()
    argv = qemu.build_argv(paths.kernel_bin(), image, machine_for("--forward", f"{port}:7"), "")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    console, ready = [], threading.Event()

    def read():
        for line in proc.stdout:
            console.append(line.decode(errors="replace"))
            if "echoing on UDP and TCP port 7" in console[-1]:
                ready.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(60), "".join(console)[-2000:]
        data = bytes((i * 7 + i // 1021) % 256 for i in range(200_000))
        got = bytearray()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            sender = threading.Thread(target=s.sendall, args=(data,))
            sender.start()
            deadline = time.monotonic() + 60
            while len(got) < len(data) and time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            sender.join(30)
            s.shutdown(socket.SHUT_WR)
            rest = s.recv(1)            # the echo closes once it read our end
        assert bytes(got) == data and rest == b"", (len(got), "".join(console)[-2000:])
    finally:
        qemu.kill_group(proc)
        proc.wait()


def test_busybox_httpd_in_petrel_serves_the_host_through_the_forward():
    """Debian's busybox httpd, a Linux program on the personality's AF_INET
    sockets, on port 80 of the guest's DHCP address; the host's urllib
    fetches a page and a missing one through --forward."""
    import urllib.error
    import urllib.request
    port = free_port()
    cmd = "sh -c 'mkdir /tmp/w; echo hello from petrel > /tmp/w/index.html; httpd -p 80 -h /tmp/w; sleep 25'"
    run = subprocess.Popen([str(paths.REPO / "petrel"), "run", "--forward", f"{port}:80", "--exec", cmd],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        body, missing, deadline = None, None, time.monotonic() + 120
        while body is None and time.monotonic() < deadline:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/nothing", timeout=5)
        except urllib.error.HTTPError as err:
            missing = err.code
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.terminate()
            run.wait(30)
    console = out.decode(errors="replace")
    assert body == b"hello from petrel\n", console[-2000:]
    assert missing == 404, console[-2000:]
    # (QEMU's DHCP server names no router or DNS server on a restricted network)
    assert "netcfg: 10.0.2.15/24, dns 0.0.0.0, leased for 86400 s" in console, console[-2000:]
    assert run.returncode == 0, console[-2000:]
