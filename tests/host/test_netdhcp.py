"""The network stack's DHCP client (services/net/dhcp.c) against a DHCP
server played by this test with scapy, frame by frame, in both placements
(the guest runs tests/programs/netpeer role=dhcp): the DISCOVER, an OFFER
of a lease of 8 seconds, the REQUEST for it and the ACK; at T1 (half the
lease) the client asks the server to renew by unicast from its address;
the server says NAK, the client drops the address and starts over with a
DISCOVER, which it sends again about 4 s later when nobody answers. Every
message is checked field by field."""
import re
import threading
import time

import pytest

from petrel import paths, qemu
from test_nethostile import GUEST_MAC, HOST_IP, HOST_MAC, Wire

scapy = pytest.importorskip("scapy.all", reason="scapy is installed by ./petrel setup")
from scapy.all import BOOTP, DHCP, IP, UDP, Ether  # noqa: E402

# (it times the lease's renewals and retries)
pytestmark = pytest.mark.serial

LEASED, ROUTER, DNS = "10.9.0.50", "10.9.0.1", "10.9.0.53"


def options(frame):
    return {o[0]: o[1:] for o in frame[DHCP].options if isinstance(o, tuple)}


def from_server(xid, mtype, yiaddr="0.0.0.0", extra=()):
    return (Ether(src=HOST_MAC, dst="ff:ff:ff:ff:ff:ff") /
            IP(src=HOST_IP, dst="255.255.255.255") / UDP(sport=67, dport=68) /
            BOOTP(op=2, xid=xid, yiaddr=yiaddr, siaddr=HOST_IP, chaddr=bytes.fromhex(GUEST_MAC.replace(":", "")),
                  flags=0x8000) /
            DHCP(options=[("message-type", mtype), ("server_id", HOST_IP), *extra, "end"]))


def is_dhcp(kind):
    return lambda f: DHCP in f and options(f).get("message-type") == (kind,)


@pytest.mark.parametrize("system", ["netpeer-dhcp-kernel", "netpeer-dhcp"], ids=["kernel", "user"])
def test_lease_renewal_nak_and_retries(system):
    assert paths.system_image(system).exists(), "run ./petrel build first"
    wire = Wire()
    result = {}

    def boot():
        argv = qemu.build_argv(paths.kernel_bin(), paths.system_image(system), qemu.Machine(net=wire.net), "")
        result["run"] = qemu.run(argv, 90)
    thread = threading.Thread(target=boot)
    thread.start()
    try:
        got = wire.expect(is_dhcp(1), 30.0)
        assert got, "no DISCOVER"
        d = got[0]
        assert (d.src, d.dst, d[IP].src, d[IP].dst, d[UDP].sport, d[UDP].dport) == \
            (GUEST_MAC, "ff:ff:ff:ff:ff:ff", "0.0.0.0", "255.255.255.255", 68, 67), d.summary()
        assert (d[BOOTP].op, d[BOOTP].flags, d[BOOTP].chaddr[:6]) == \
            (1, 0x8000, bytes.fromhex(GUEST_MAC.replace(":", ""))), d[BOOTP].show(dump=True)
        xid = d[BOOTP].xid
        lease = [("lease_time", 8), ("subnet_mask", "255.255.255.0"), ("router", ROUTER), ("name_server", DNS)]
        wire.send(from_server(xid, 2, LEASED, lease))
        got = wire.expect(is_dhcp(3), 5.0)
        assert got, "no REQUEST for the offer"
        r = got[0]
        o = options(r)
        assert (r[BOOTP].xid, r[IP].dst, o.get("requested_addr"), o.get("server_id")) == \
            (xid, "255.255.255.255", (LEASED,), (HOST_IP,)), r.summary()
        wire.send(from_server(xid, 5, LEASED, lease))
        leased_at = time.monotonic()

        # T1: half of the 8 s lease, a unicast REQUEST from the address.
        got = wire.expect(is_dhcp(3), 8.0)
        assert got, "no renewal at T1"
        n = got[0]
        t1 = time.monotonic() - leased_at
        assert 3.0 <= t1 <= 6.0, t1
        assert (n[IP].src, n[IP].dst, n.dst, n[BOOTP].ciaddr) == (LEASED, HOST_IP, HOST_MAC, LEASED), n.summary()
        assert "requested_addr" not in options(n), n[DHCP].options
        wire.send(from_server(n[BOOTP].xid, 6))       # NAK: the address goes, discovery again
        got = wire.expect(is_dhcp(1), 3.0)
        assert got and got[0][IP].src == "0.0.0.0", "no DISCOVER after the NAK"
        first = time.monotonic()
        got = wire.expect(is_dhcp(1), 7.0)
        assert got, "the DISCOVER was not sent again"
        again = time.monotonic() - first
        assert 2.5 <= again <= 5.5, again
    finally:
        thread.join(timeout=100)
    status, out = result["run"]
    assert status == 0, out[-2000:]
    m = re.search(r"netpeer: dhcp: error (-?\d+), leased (\w+)/(\d+) via (\w+), dns (\w+), for (\d+) s", out)
    assert m and m.groups() == ("0", "a090032", "24", "a090001", "a090035", "8"), out[-2000:]
    assert "netpeer: dhcp: address now 0" in out, out[-2000:]
