"""The Internet checksum (lib/inet_csum.c) against RFC 1071's definition,
computed here the plain way (16-bit big-endian words, end-around carry):
every length from 0 to 80 bytes and sizes up to a whole IP datagram, at
every alignment of the start, with pseudo-header sums, on random data and
on all-0xff data (the carries); and the property the stack relies on:
data holding its own checksum sums to 0."""
import random
import shutil
import subprocess

import pytest

from conftest import REPO


def rfc1071(data: bytes, total: int) -> int:
    if len(data) & 1:
        data += b"\0"
    s = total
    for i in range(0, len(data), 2):
        s += data[i] << 8 | data[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


@pytest.fixture(scope="module")
def checksum(tmp_path_factory):
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler for the host (./petrel setup installs clang)")
    exe = tmp_path_factory.mktemp("csum") / "csumdrive"
    subprocess.run([compiler, "-O2", "-Wall", "-Werror", "-I", str(REPO / "lib/include"), "-o", str(exe),
                    str(REPO / "tests/host/cc/csumdrive.c"), str(REPO / "lib/inet_csum.c")], check=True)

    def run(cases):
        text = "".join(f"{off} {total} {data.hex()}\n" for off, total, data in cases)
        out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, timeout=60, check=True)
        return [int(x) for x in out.stdout.split()]
    return run


def test_every_length_and_alignment(checksum):
    rng = random.Random(1071)
    cases = [(off, rng.choice((0, 6, 0x4fffb, rng.randrange(1 << 19))), bytes(rng.randrange(256) for _ in range(n)))
             for n in range(81) for off in range(9)]
    cases += [(off, 0xffff, b"\xff" * n) for n in (1, 2, 7, 8, 9, 31, 32, 33, 1500) for off in range(9)]
    cases += [(rng.randrange(9), rng.randrange(1 << 18), rng.randbytes(n)) for n in (1480, 9000, 65515, 65535)]
    got = checksum(cases)
    assert got == [rfc1071(data, total) for _, total, data in cases]


def test_data_with_its_checksum_sums_to_zero(checksum):
    rng = random.Random(7)
    cases = []
    for n in (20, 21, 60, 1480, 1481, 65507):
        data = bytearray(rng.randbytes(n))
        data[0:2] = b"\0\0"
        total = rng.randrange(1 << 18)
        value = rfc1071(bytes(data), total)
        data[0:2] = value.to_bytes(2, "big")
        cases.append((rng.randrange(9), total, bytes(data)))
    assert checksum(cases) == [0] * len(cases)
