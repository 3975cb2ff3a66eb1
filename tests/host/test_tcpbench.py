"""`./petrel bench --suite tcp` (tools/petrel/tcpbench.py) without booting:
the runs it plans, the commands each side runs (the congestion module, the
Linux sender's tcp_probe), Linux's window read back from probe lines, and
the report's verdicts on its targets."""
from petrel import qemu, tcpbench
from petrel.tcpbench import Run


def test_the_plan_covers_the_papers_experiments():
    runs = tcpbench.plan()
    rtt = {(r.system, r.placement, r.rtt_ms) for r in runs if r.loss_pct == 0 and r.cc == "cubic" and not r.monitor}
    for ms in tcpbench.RTTS:
        assert {("linux->linux", "", ms), ("petrel->linux", "user", ms), ("petrel->linux", "kernel", ms),
                ("linux->petrel", "user", ms)} <= rtt
    for cc in tcpbench.CCS:
        for loss in tcpbench.LOSSES:
            assert {r.system for r in runs if r.cc == cc and r.loss_pct == loss and r.rtt_ms == tcpbench.CC_RTT} >= \
                {"linux->linux", "petrel->linux"}
    lossy = [r for r in runs if r.loss_pct > 0]
    assert all(r.monitor == (r.client != "linux") and r.probe == (r.client == "linux") for r in lossy)
    assert any(r.monitor and r.loss_pct == 0 for r in runs)      # the monitor's cost


def test_each_side_runs_its_module_and_the_linux_sender_its_probe():
    client = tcpbench.commands("client", True, "westwood", True)
    assert client[0].startswith("lxnetpeer role=up") and "busybox insmod /tcp_westwood.ko" in client
    assert any("events/tcp/tcp_probe/enable" in c for c in client) and client[-1] == "sh /probe.sh"
    assert any("-C westwood" in c for c in client)
    petrel = tcpbench.commands("client", False, "reno", False)
    assert len(petrel) == 1 and "-C reno" in petrel[0]
    assert tcpbench.commands("server", False, "cubic", False) == ["iperf3 -s -1 -f m"]
    assert "'" not in "".join(c.replace("sh -c '", "", 1)[:-1] for c in client if c.startswith("sh -c"))


def test_linux_window_is_the_data_connections_from_its_first_probe():
    console = "\n".join(["PROBE 10.000000 40000 10 2147483647",      # the control connection
                         "PROBE 10.100000 40002 10 2147483647", "PROBE 10.200000 40002 20 2147483647",
                         "PROBE 10.300000 40002 14 14", "noise", "PROBE 10.400000 40002 15 14"])
    assert [(round(t, 6), c, s) for t, c, s in tcpbench.linux_window(console)] == \
        [(0.0, 10, 2147483647), (0.1, 20, 2147483647), (0.2, 14, 14), (0.3, 15, 14)]
    assert tcpbench.linux_window("nothing") == []


def test_the_report_says_which_targets_are_met():
    rows = []
    for ms in tcpbench.RTTS:
        rows.append(tcpbench.row_of(Run("linux", "linux", ms, 0.0, "cubic"), [100.0]))
        rows.append(tcpbench.row_of(Run("user", "linux", ms, 0.0, "cubic"), [96.0 if ms else 90.0]))
    for cc in tcpbench.CCS:
        rows.append(tcpbench.row_of(Run("user", "linux", 10, 0.0, cc), [50.0]))
        rows.append(tcpbench.row_of(Run("user", "linux", 10, 0.2, cc, monitor=True), [46.0]))
    rows.append(tcpbench.row_of(Run("user", "linux", 0, 0.0, "cubic", monitor=True), [89.0]))
    text = tcpbench.report(rows, "./petrel bench --suite tcp", qemu.Machine())
    assert "- NOT met: petrel->linux (user stack) >= 95% of linux->linux at 0 ms" in text
    assert "- met: petrel->linux (user stack) >= 95% of linux->linux at 10 ms" in text
    assert "- met: Westwood+ keeps >= 90% of its loss-free throughput with 0.2 % loss" in text
    assert "- met: the monitor costs <= 2% of the traced transfer's throughput" in text
    assert "| westwood | - | - | 50 | 46 | 92% |" in text
