"""The block device service (services/blk, idl/blk.toml) on a real disk:
the host writes an image with a known pattern, boots systems/blk-kernel or
blk-user with it attached as a virtio-blk device, tests/programs/blktest
reads it, is refused bad requests, writes (past the cache's size too) and
syncs, also as a client that cannot wait (watch, sync_start, sync_poll); then the host reads the image back: every sector blktest says it
wrote holds the inverse pattern, every other one what the host wrote. A
read-only disk is left as it was; a machine without a disk gets E_NOENT;
`./petrel run --disk` makes and attaches an image. Sixteen clients that end
holding sync tickets leave their places to the next (systems/blkreap-*)."""
import hashlib
import re

import pytest

from petrel import cli, paths, qemu

SECTOR = 512
SECTORS = 16 * 2048 + 3         # 16 MiB and three sectors: the last cache block is a part one
TIMEOUT = 120


def pattern_rows():
    return [bytes((base + j * 7) & 0xff for j in range(SECTOR)) for base in range(256)]


# The host's pattern of sector s (blktest's expect(): its number, then pattern(s, j)).
def sector_bytes(s, rows):
    return s.to_bytes(8, "little") + rows[(s * 131 + (s >> 8)) & 0xff][8:]


def make_image(path):
    rows = pattern_rows()
    path.write_bytes(b"".join(sector_bytes(s, rows) for s in range(SECTORS)))


def boot(system, disk="", ro=False):
    image = paths.system_image(system)
    assert image.exists(), "run ./petrel build first"
    m = qemu.Machine(disk=str(disk), disk_ro=ro)
    status, console = qemu.run(qemu.build_argv(paths.kernel_bin(), image, m, ""), TIMEOUT)
    assert status is not None, f"{system}: no end in {TIMEOUT} s:\n{console[-3000:]}"
    return console


def tap(console):
    oks = re.findall(r"^(ok|not ok) \d+ - (.*)$", console, re.M)
    bad = [text for verdict, text in oks if verdict != "ok"]
    assert oks and not bad, "\n".join(bad) or console[-3000:]
    return [text for _, text in oks]


@pytest.mark.parametrize("system", ["blk-kernel", "blk-user"])
def test_blktest_reads_writes_and_syncs_what_the_image_then_holds(system, tmp_path):
    disk = tmp_path / "disk.img"
    make_image(disk)
    console = boot(system, disk)
    lines = tap(console)
    assert any(f"the disk has {SECTORS} sectors of 512 bytes" in t for t in lines), lines
    wrote = re.search(r"^blktest: wrote inverse (.*)$", console, re.M)
    assert wrote, console[-3000:]
    ranges = [tuple(int(x) for x in r.split("+")) for r in wrote[1].split()]
    assert ranges == [(3, 1), (7, 1), (1001, 128), (SECTORS - 1, 1), (4096, 12288), (24000, 16)]
    inverse = set()
    for start, count in ranges:
        inverse.update(range(start, start + count))
    rows = pattern_rows()
    data = disk.read_bytes()
    assert len(data) == SECTORS * SECTOR
    wrong = []
    for s in range(SECTORS):
        want = sector_bytes(s, rows)
        if s in inverse:
            want = bytes(b ^ 0xff for b in want)
        if data[s * SECTOR:(s + 1) * SECTOR] != want:
            wrong.append(s)
    assert not wrong, f"{len(wrong)} sectors differ from what blktest wrote or left, first {wrong[:10]}"


@pytest.mark.parametrize("system", ["blkreap-kernel", "blkreap-user"])
def test_sync_tickets_of_clients_that_ended_give_their_places(system, tmp_path):
    # Sixteen clients each end holding a sync ticket they never ask after
    # (the service has 16 places); a seventeenth still gets one.
    disk = tmp_path / "disk.img"
    make_image(disk)
    console = boot(system, disk)
    for k in range(1, 17):
        assert f"blktest: client {k} holds a sync ticket (error 0)" in console, console[-3000:]
    assert "blktest: after sixteen clients ended holding sync tickets, one more: yes" in console, console[-3000:]
    assert "root: all 17 programs have exited" in console, console[-3000:]


def test_a_read_only_disk_refuses_writes_and_is_left_as_it_was(tmp_path):
    disk = tmp_path / "disk.img"
    make_image(disk)
    before = hashlib.sha256(disk.read_bytes()).hexdigest()
    console = boot("blk-user", disk, ro=True)
    lines = tap(console)
    assert any("(read-only)" in t for t in lines) and any("refuses a write with E_PERM" in t for t in lines), lines
    assert hashlib.sha256(disk.read_bytes()).hexdigest() == before


def test_without_a_disk_every_request_is_e_noent():
    lines = tap(boot("blk-kernel"))
    assert any("no disk: every request is E_NOENT" in t for t in lines), lines


def machine_for(*argv):
    args = cli.make_parser().parse_args(["run", *argv])
    return cli.run_machine(args, False)


def test_run_disk_makes_an_ext2_image_and_attaches_it(tmp_path):
    disk = tmp_path / "data.img"
    m = machine_for("--disk", str(disk), "--disk-size", "8M")
    assert m.disk == str(disk) and not m.disk_ro
    assert disk.stat().st_size == 8 << 20
    assert disk.read_bytes()[1024 + 56:1024 + 58] == b"\x53\xef"     # the ext2 superblock's magic
    argv = qemu.build_argv("k", None, m)
    assert argv[argv.index("-drive") + 1] == f"file={disk},if=none,format=raw,id=disk0"
    assert argv[argv.index("-device", argv.index("-drive")) + 1] == "virtio-blk-device,drive=disk0"
    again = machine_for("--disk", str(disk))                          # there already: attached as it is
    assert again.disk == str(disk) and disk.stat().st_size == 8 << 20


@pytest.mark.parametrize("bad", ["0", "12", "1T", "lots", "-4M"])
def test_run_disk_size_must_be_a_size(bad, tmp_path, capsys):
    with pytest.raises(SystemExit):
        machine_for("--disk", str(tmp_path / "d.img"), "--disk-size", bad)
    assert "--disk-size" in capsys.readouterr().err
