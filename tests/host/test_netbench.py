"""`./petrel bench --suite net` (tools/petrel/netbench.py): what it reads
from iperf3's report, the commands each side runs, the pairs, the rows
and the report's targets, and the command line's refusals. (The suite
itself boots QEMUs for minutes: it is the bench's, not the tests'.)"""
from petrel import bench, cli, netbench, qemu

CLIENT_REPORT = """Connecting to host 10.9.0.1, port 5201
[  5] local 10.9.0.2 port 49153 connected to 10.9.0.1 port 5201
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd
[  5]   0.00-1.00   sec  11.7 MBytes  97.9 Mbits/sec   21    130 KBytes
[  5]   4.00-5.00   sec  20.0 MBytes   167 Mbits/sec   36    151 KBytes
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-5.00   sec  81.1 MBytes   136 Mbits/sec  116             sender
[  5]   0.00-5.01   sec  81.0 MBytes   135 Mbits/sec                  receiver

iperf Done.
"""


def test_the_receivers_figure():
    assert netbench.received_mbps(CLIENT_REPORT) == 135.0
    assert netbench.received_mbps(CLIENT_REPORT.replace("135 Mbits", "0.52 Mbits")) == 0.52
    # An interrupted run has per-second lines and no summary: no figure.
    assert netbench.received_mbps(CLIENT_REPORT.split("- - -")[0]) is None
    assert netbench.received_mbps("iperf3: error - unable to connect to server: Connection refused\n") is None


def test_each_sides_commands():
    server, client = netbench.commands("server", True), netbench.commands("client", False)
    assert server == [f"lxnetpeer role=up addr={netbench.SERVER}", "iperf3 -s -1 -f m"]
    assert len(client) == 1 and f"iperf3 -c {netbench.SERVER} -t {netbench.SECONDS} -f m" in client[0]
    assert netbench.commands("client", True)[0] == f"lxnetpeer role=up addr={netbench.CLIENT}"
    assert all(len(c) < 4096 for c in server + client)


def test_the_pairs():
    labels = [p.label for p in netbench.PAIRS]
    assert labels == ["linux->linux", "petrel->linux (user stack)", "petrel->linux (kernel stack)",
                      "linux->petrel (user stack)", "linux->petrel (kernel stack)"]
    assert netbench.SYSTEMS == ("linux->linux", "petrel->linux", "linux->petrel")


def test_rows_and_targets():
    imp = netbench.Impairments(rtt_ms=10, loss=0.002)
    samples = {netbench.PAIRS[0]: [100.0, 120.0, 110.0], netbench.PAIRS[1]: [96.0, 90.0, 99.0],
               netbench.PAIRS[2]: [80.0, 94.0, 95.0]}
    rows = netbench.rows_of(samples, imp)
    assert [(r["system"], r["placement"], r["median"], r["min"], r["max"]) for r in rows] == [
        ("linux->linux", "", 110.0, 100.0, 120.0), ("petrel->linux", "user", 96.0, 90.0, 99.0),
        ("petrel->linux", "kernel", 94.0, 80.0, 95.0)]
    assert all(r["metric"] == "tcp_throughput_mbps" and r["rtt_ms"] == 10 and abs(r["loss_pct"] - 0.2) < 1e-9
               and r["cc"] == "cubic" for r in rows)
    text = netbench.report(rows, qemu.Machine(), "./petrel bench --suite net")
    assert "| petrel->linux | user | 96 | 90 | 99 | 0.87 |" in text
    assert "- NOT met: petrel->linux (user stack) >= 95% of linux->linux (87%)" in text
    rows[1]["median"] = 105.0
    assert "- met: petrel->linux (user stack) >= 95% of linux->linux (95%)" in \
        netbench.report(rows, qemu.Machine(), "x")


def test_the_command_line_refuses(capsys):
    assert bench.main_net("icount", "cortex-a53", 1, None, None, "512M", 0, 0) == 2
    assert "wall mode only" in capsys.readouterr().err
    assert bench.main_net(None, "cortex-a53", 1, "lx_null_syscall", None, "512M", 0, 0) == 2
    assert bench.main_net(None, "cortex-a53", 1, None, 0, "512M", 0, 0) == 2
    assert "--runs 0" in capsys.readouterr().err
    assert netbench.main(qemu.Machine(), 1, -1, 0) == 2
    assert "rtt_ms" in capsys.readouterr().err
    assert cli.main(["bench", "--pcap"]) == 2
    assert "for --suite net" in capsys.readouterr().err
    assert netbench.main(qemu.Machine(), 1, -1, 0) == 2
    assert "rtt_ms" in capsys.readouterr().err
    assert netbench.main(qemu.Machine(), 1, 0, 150) == 2
