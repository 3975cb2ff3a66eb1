"""/data: the disk's ext2 mounted in the Linux personality (services/linux/
ext2fs.c over the blk service), in both placements, with Linux as the
oracle and e2fsck as the judge.

- The same busybox script (a tree of files of many sizes with holes,
  copies by sendfile (cp, cat), a rename over a name, hard and symbolic links, a file read after it was
  unlinked while open, truncation, appends from two processes at once,
  flock between processes, statfs, the errors of bad calls) runs on a
  fresh image under Petrel (user and kernel placement) and under the
  bench's Debian kernel: the transcripts are the same line for line, and
  e2fsck finds each image clean.
- What Petrel wrote, Linux lists with the same types, sizes, links, modes
  and checksums; what Linux wrote, Petrel lists the same way.
- A read-only disk (--disk-ro) is mounted read-only: changes are EROFS,
  as Linux says of a read-only mount, and the image is left as it was.
- A full disk gives ENOSPC, a disk out of inodes ENOSPC, and the files
  written before stay whole; a disk larger than 4 GiB (sparse) takes a
  file past 4 GiB.
- Images corrupted at random: every access answers (an error or data),
  the personality and the kernel stay up, and the next command runs.
- mount(2) and umount2(2) through busybox mount, umount and df: the same
  transcript as Linux's (the disk moved, remounted, refused while busy,
  the errors of bad arguments), in both placements.
- Power loss: QEMU killed at 25 random moments of a run that writes files
  with fsync, fdatasync, O_SYNC and O_DSYNC, in each placement: e2fsck -fy repairs the image, and every
  file whose fsync had returned is whole.
"""
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import REPO
from test_ext2 import e2fsck_clean, e2prog, fresh_image
from test_ext2_linux import LIST, linux, listing

TIMEOUT = 300
SYSTEMS = ["linux-user", "linux-kernel"]

# The oracle's script: each step prints T|<what>|<status>|<output>.
SCRIPT = r"""cd /data
set +e
t() { out=$("$@" 2>&1 </dev/null | busybox tr '\n' ';'); echo "T|$*|$?|$out"; }
t busybox mkdir -p tree/a/b tree/many
for n in 0 1 511 512 513 1023 1024 1025 4095 4096 4097 65536 300001; do busybox head -c $n /src/random > tree/f$n; done
t busybox dd if=/src/random of=tree/holes bs=1000 count=3 seek=5000
t busybox truncate -s 20000000 tree/sparse
t busybox cp /src/random tree/copied
busybox cat /src/random /src/random /src/random > tree/catted
echo one > tree/one
echo two > tree/two
t busybox mv tree/two tree/one
t busybox ln tree/one tree/a/hard
t busybox ln -s ../one tree/a/sym
t busybox ln -s /data/tree/missing tree/dangling
t busybox cat tree/a/sym
for i in $(busybox seq 1 40); do echo entry $i > tree/many/name-of-entry-$i; done
t busybox rm tree/many/name-of-entry-7 tree/many/name-of-entry-19
t busybox mv tree/many/name-of-entry-8 tree/a/b/moved
exec 3< tree/f4096
t busybox rm tree/f4096
echo "T|unlinked open file reads|$(busybox md5sum <&3)"
exec 3<&-
t busybox truncate -s 100 tree/f65536
t busybox truncate -s 70000 tree/f65536
t busybox chmod 4711 tree/f1
t busybox chmod 600 tree/f0
(for i in $(busybox seq 1 150); do echo a$i >> tree/log; done) &
(for i in $(busybox seq 1 150); do echo b$i >> tree/log; done) &
wait
echo "T|appends|$(busybox wc -l < tree/log) $(busybox grep -c '^a' tree/log) $(busybox grep -c '^b' tree/log)"
(busybox flock tree/lk -c 'busybox sleep 1') &
busybox sleep 0.3
t busybox flock -n tree/lk -c true
wait
t busybox flock -n tree/lk -c true
t busybox mkdir tree
t busybox rmdir tree
t busybox rm tree/a
t busybox mv tree tree/a/b
t busybox ln tree/a tree/alink
t busybox cat tree/nope
t busybox mv tree/a tree/one
t busybox rmdir tree/many
t busybox mv tree/one tree/a
t busybox mkdir tree/f0/x
t busybox stat -c '%s %b' tree/sparse
t busybox stat -c '%s %h %a %F' tree/a tree/one tree/a/hard tree/a/sym
t busybox stat -f -c '%T %l %s %S' /data
busybox find tree | busybox sort | while read p; do echo "L|$(busybox stat -c '%n|%F|%s|%h|%a' "$p")"; done
busybox find tree -type f ! -name log | busybox sort | while read p; do echo "M|$(busybox md5sum "$p")"; done
echo "M|log $(busybox sort tree/log | busybox md5sum)"
busybox sync
t busybox rm -r tree/many
t busybox rmdir tree/many
"""


def transcript(text):
    return [line for line in text.replace("\r", "").splitlines() if line[:2] in ("T|", "L|", "M|")]


def random_file(tmp_path):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "random").write_bytes(random.Random(25).randbytes(400000))
    return src


def petrel(image, script, system, tmp_path, extra=(), ro=False, check=True):
    """Run the shell script on Petrel (`system`) with image at /data; its console."""
    path = tmp_path / "petrel-script.sh"
    path.write_text(script)
    argv = [str(REPO / "petrel"), "run", "--system", system, "--disk", str(image), "--add", f"{path}:/s.sh",
            "--exec", "busybox sh /s.sh"] + (["--disk-ro"] if ro else [])
    for host, guest in extra:
        argv += ["--add", f"{host}:{guest}"]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
    text = out.stdout.replace("\r", "")
    if check:
        assert out.returncode == 0 and "lx: done" in text, text[-4000:] + out.stderr[-2000:]
        assert "faulted" not in text and "not put away cleanly" not in text, text[-4000:]
    return text


def linux_with_src(image, script, src):
    """linux() of test_ext2_linux, with the random source at /src."""
    path = image.parent / "script.sh"
    path.write_text(script)
    out = subprocess.run([str(REPO / "petrel"), "run", "--linux", "--disk", str(image), "--add", f"{path}:/s.sh",
                          "--add", f"{src}:/src", "--exec", "busybox sh /s.sh"], cwd=REPO, capture_output=True,
                         text=True, timeout=TIMEOUT)
    assert out.returncode == 0 and "lx: done" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
    return out.stdout.replace("\r", "")


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """The script's transcript under Linux, and the image it left."""
    tmp = tmp_path_factory.mktemp("oracle")
    src = random_file(tmp)
    image = tmp / "linux.img"
    fresh_image(image, 64 << 20, 1024)
    lines = transcript(linux_with_src(image, SCRIPT, src))
    assert len(lines) > 60, lines
    return lines, image, src


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_script_on_data_gives_linuxs_transcript_and_a_clean_image(oracle, system, tmp_path):
    want, _, src = oracle
    image = tmp_path / "petrel.img"
    fresh_image(image, 64 << 20, 1024)
    got = transcript(petrel(image, SCRIPT, system, tmp_path, extra=[(src, "/src")]))
    diff = [(w, g) for w, g in zip(want, got) if w != g]
    assert len(got) == len(want) and not diff, (len(got), len(want), diff[:8])
    e2fsck_clean(image)


def test_linux_lists_what_petrel_wrote_and_petrel_lists_what_linux_wrote(oracle, tmp_path):
    _, linux_image, src = oracle
    image = tmp_path / "petrel.img"
    fresh_image(image, 64 << 20, 1024)
    petrel(image, SCRIPT, "linux-user", tmp_path, extra=[(src, "/src")])
    linux_view = listing(linux(image, LIST))
    petrel_view = listing(petrel(image, LIST, "linux-kernel", tmp_path).splitlines())
    assert len(linux_view) > 20 and linux_view == petrel_view
    e2fsck_clean(image)
    theirs = tmp_path / "theirs.img"
    shutil.copyfile(linux_image, theirs)
    assert listing(petrel(theirs, LIST, "linux-user", tmp_path).splitlines()) == listing(linux(theirs, LIST))
    e2fsck_clean(theirs)


def test_a_read_only_disk_is_mounted_read_only_and_left_as_it_was(tmp_path):
    image = tmp_path / "ro.img"
    fresh_image(image, 8 << 20, 1024)
    linux(image, "echo kept > /data/f\n")
    before = hashlib.md5(image.read_bytes()).hexdigest()
    text = petrel(image, """cd /data
busybox cat f
busybox grep /data /proc/mounts
echo x > g || echo "create: $?"
busybox rm f || echo "rm: $?"
busybox mkdir d || echo "mkdir: $?"
busybox touch f || echo "touch: $?"
busybox stat -f -c '%T' /data
""", "linux-user", tmp_path, ro=True)
    assert "kept" in text and "/dev/vda /data ext2 ro,relatime 0 0" in text, text[-3000:]
    assert text.count("Read-only file system") >= 4 and "create: " in text and "rm: 1" in text, text[-3000:]
    assert hashlib.md5(image.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_full_disk_and_one_out_of_inodes_say_enospc_and_keep_what_was_written(system, tmp_path):
    image = tmp_path / "small.img"
    fresh_image(image, 2 << 20, 1024, inodes=64)
    text = petrel(image, """cd /data
busybox head -c 200000 /dev/urandom > keep
busybox md5sum keep
busybox dd if=/dev/zero of=fill bs=4096 2>&1 | busybox head -1
i=0; while [ $i -lt 100 ]; do busybox touch n$i 2>/tmp/err || break; i=$((i + 1)); done; echo "made $i"
busybox cat /tmp/err
busybox rm fill
busybox mkdir d || echo "mkdir: $?"
busybox md5sum keep
busybox df /data | busybox tail -1
""", system, tmp_path)
    sums = re.findall(r"^([0-9a-f]{32})  keep$", text, re.M)
    assert len(sums) == 2 and sums[0] == sums[1], text[-3000:]
    assert text.count("No space left on device") == 2, text[-3000:]    # dd's blocks, then touch's inodes
    made = int(re.search(r"^made (\d+)$", text, re.M)[1])
    assert 40 < made < 64, text[-3000:]                    # the inodes ran out before the loop did
    e2fsck_clean(image)


def test_a_disk_past_4_gib_takes_a_file_past_4_gib(tmp_path):
    src = random_file(tmp_path)
    image = tmp_path / "big.img"
    fresh_image(image, 5 << 30, 4096)                     # sparse on the host
    want = hashlib.md5((src / "random").read_bytes()[:8192]).hexdigest()
    text = petrel(image, """cd /data
busybox dd if=/src/random of=far bs=4096 count=2 seek=1100000 2>/dev/null
busybox stat -c 'size %s' far
busybox tail -c 8192 far | busybox md5sum
""", "linux-user", tmp_path, extra=[(src, "/src")])
    assert "size 4505608192" in text and want in text, text[-3000:]
    e2fsck_clean(image)
    assert want in "\n".join(linux(image, "busybox tail -c 8192 /data/far | busybox md5sum\n"))


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_writer_faster_than_the_disk_writes_every_byte(system, tmp_path):
    """48 MiB in whole-MiB writes, six times the blk service's cache: the
    file system's hand-overs wait for the disk's writes, none is refused."""
    image = tmp_path / "fast.img"
    fresh_image(image, 128 << 20, 4096)
    text = petrel(image, """cd /data
busybox dd if=/dev/zero of=fast bs=1048576 count=48 conv=fsync 2>/dev/null
echo "dd $?"
busybox stat -c 'size %s' fast
busybox md5sum fast
""", system, tmp_path)
    want = hashlib.md5(bytes(48 << 20)).hexdigest()
    assert "dd 0" in text and "size 50331648" in text and want in text, text[-3000:]
    e2fsck_clean(image)
    assert want in "\n".join(linux(image, "busybox md5sum /data/fast\n"))


@pytest.mark.parametrize("system", SYSTEMS)
def test_corrupt_images_answer_every_access_and_nothing_goes_down(system, tmp_path):
    base = tmp_path / "base.img"
    fresh_image(base, 2 << 20, 1024)
    linux(base, """cd /data
busybox mkdir -p a/b c
for i in $(busybox seq 1 30); do echo file $i > a/f$i; done
busybox head -c 70000 /dev/urandom > a/b/big
busybox ln -s ../a c/link
""")
    data = base.read_bytes()
    rng = random.Random(2025 + SYSTEMS.index(system))
    probe = """busybox ls -lR /data > /dev/null 2>&1; echo "ls $?"
busybox find /data -type f -exec busybox head -c 200000 {} + 2>/dev/null | busybox md5sum > /dev/null; echo "sum $?"
echo x > /data/new 2>/dev/null; echo "write $?"
busybox rm -rf /data/a 2>/dev/null; echo "rm $?"
echo alive
"""
    for k in range(6):
        image = tmp_path / f"bad{k}.img"
        bad = bytearray(data)
        for _ in range(rng.randrange(20, 200)):     # bytes of the metadata: superblock, descriptors, tables
            at = rng.randrange(1024, 64 * 1024)
            bad[at] = rng.randrange(256)
        image.write_bytes(bytes(bad))
        text = petrel(image, probe, system, tmp_path, check=False)
        assert "alive" in text and "lx: done" in text, (k, text[-3000:])
        assert "faulted" not in text and "panic" not in text.lower(), (k, text[-3000:])


# mount(2) and umount2(2) through busybox: the disk moved to another
# directory and back, remounted read-only and with flags, refused while
# busy, and the errors of bad sources, targets, types and options.
MOUNT_SCRIPT = r"""set +e
t() { out=$("$@" 2>&1 </dev/null | busybox tr '\n' ';'); echo "T|$*|$?|$out"; }
busybox mkdir -p /mnt/a
echo plain > /mnt/file
t busybox grep vda /proc/mounts
t busybox grep -w ext2 /proc/filesystems
t busybox stat -c '%t:%T %F %a %u %g' /dev/vda
t busybox umount /data
t busybox grep -c vda /proc/mounts
t busybox umount /data
t busybox mount -t ext2 /dev/vda /mnt/a
t busybox grep vda /proc/mounts
echo hello > /mnt/a/f
t busybox cat /mnt/a/f
printf '#!/bin/sh\necho ran\n' > /mnt/a/s
busybox chmod 755 /mnt/a/s
t /mnt/a/s
t busybox mount -o remount,ro /mnt/a
t busybox grep vda /proc/mounts
t busybox touch /mnt/a/g
t busybox mount -o remount,rw,nosuid,nodev,noatime /mnt/a
t busybox grep vda /proc/mounts
t busybox touch /mnt/a/g
cd /mnt/a
t busybox umount /mnt/a
cd /
exec 3< /mnt/a/f
t busybox umount /mnt/a
exec 3<&-
t busybox df /mnt/a
t busybox umount /mnt/a
t busybox umount /mnt/a
t busybox umount /mnt
t busybox umount /mnt/nope
t busybox mount -t ext2 /dev/null /mnt/a
t busybox mount -t ext2 /dev/nope /mnt/a
t busybox mount -t nosuchfs /dev/vda /mnt/a
t busybox mount -t ext2 /dev/vda /mnt/a/nope
t busybox mount -t ext2 /dev/vda /mnt/file
t busybox mount -t ext2 -o bogus /dev/vda /mnt/a
t busybox mount -t ext2 -o ro,noexec,sync /dev/vda /mnt/a
t busybox grep vda /proc/mounts
t busybox cat /mnt/a/f
t /mnt/a/s
t busybox ls /mnt/a
t busybox umount /mnt/a
t busybox mount /dev/vda /mnt/a
t busybox grep vda /proc/mounts
t busybox mount -o remount,sync /mnt/a
t busybox grep vda /proc/mounts
echo synced > /mnt/a/g
t busybox cat /mnt/a/g
t busybox umount /mnt/a
busybox mkdir -p /tmp/gone
cd /tmp/gone
busybox rmdir /tmp/gone
t busybox mount -t ext2 /dev/vda .
cd /
busybox mkdir -p "/mnt/a b"
t busybox mount -t ext2 /dev/vda "/mnt/a b"
t busybox grep vda /proc/mounts
busybox head -c 6000000 /dev/zero > "/mnt/a b/big"
busybox mkdir "/mnt/a b/d"
cd "/mnt/a b/d"
t busybox rmdir "/mnt/a b/d"
cd /
busybox mkdir "/mnt/a b/d2" "/mnt/a b/d3"
t busybox umount "/mnt/a b"
t busybox mount -t ext2 /dev/vda "/mnt/a b"
t busybox sh -c 'busybox dd if="/mnt/a b/big" of=/dev/null bs=6000000 count=1 2>&1 | busybox head -2'
t busybox ls "/mnt/a b"
t busybox umount "/mnt/a b"
t busybox mount -t ext2 /dev/vda /data
t busybox ls /data
busybox sync
"""


def both_ways(script, system, tmp_path, size=16 << 20, block=1024):
    """The script's console under Linux and under Petrel (`system`), each on
    a fresh image of its own; and Petrel's image."""
    theirs, ours = tmp_path / "linux.img", tmp_path / "petrel.img"
    fresh_image(theirs, size, block)
    fresh_image(ours, size, block)
    empty = tmp_path / "src"
    empty.mkdir()
    return linux_with_src(theirs, script, empty), petrel(ours, script, system, tmp_path), ours


@pytest.mark.parametrize("system", SYSTEMS)
def test_mount_and_umount_of_the_disk_give_linuxs_transcript(system, tmp_path):
    theirs, mine, ours = both_ways(MOUNT_SCRIPT, system, tmp_path)
    want, got = transcript(theirs), transcript(mine)
    assert len(want) > 50 and got == want, [(w, g) for w, g in zip(want, got) if w != g][:8] or (want, got)
    e2fsck_clean(ours)


# A command of lxrun's script whose program is on the disk: it is not
# read yet when the script comes to it, and no Linux process waits for it,
# so the run stops there (`run` answers E_AGAIN) and goes on once lxrun
# asks again. The program runs once, announced once, as it does from the
# root archive.
@pytest.mark.parametrize("system", SYSTEMS)
def test_a_program_on_the_disk_runs_straight_from_the_script(system, tmp_path):
    image = tmp_path / "disk.img"
    fresh_image(image, 16 << 20, 4096)
    hello = REPO / "build" / "linux" / "bin" / "hello"
    for cmd in (f"write {hello} hello", "set_inode_field hello mode 0100755"):
        subprocess.run([e2prog("debugfs"), "-w", "-R", cmd, str(image)], check=True, capture_output=True)
    runs = {}
    for path in ("/data/hello", "/bin/hello"):
        out = subprocess.run([str(REPO / "petrel"), "run", "--system", system, "--disk", str(image), "--exec", path],
                             cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
        text = out.stdout.replace("\r", "")
        assert out.returncode == 0 and "lx: exit 0" in text and "lx: done" in text, text[-3000:]
        assert text.count(f"lx: run {path}") == 1, text[-3000:]
        runs[path] = text[text.index("lx: run"):text.index("lx: exit")].splitlines()[1:]
    assert runs["/data/hello"] == runs["/bin/hello"] and runs["/bin/hello"], runs
    e2fsck_clean(image)


# tests/linux/mounthostile.c: mount(2) and umount2(2) with wild pointers,
# names past the limits, unknown types and flags, calls that make no sense
# (its "M|" lines: Linux's errors exactly), then 3,000 random calls, after
# which the disk is mounted at /data again and a file written and read
# there. Linux's transcript once for both placements.
@pytest.fixture(scope="module")
def mounthostile_linux(tmp_path_factory):
    d = tmp_path_factory.mktemp("mounthostile")
    image, empty = d / "linux.img", d / "src"
    fresh_image(image, 16 << 20, 1024)
    empty.mkdir()
    return transcript(linux_with_src(image, "mounthostile\n", empty))


@pytest.mark.parametrize("system", SYSTEMS)
def test_hostile_mount_calls_fail_as_on_linux_and_leave_the_disk_working(system, tmp_path, mounthostile_linux):
    want = mounthostile_linux
    image = tmp_path / "petrel.img"
    fresh_image(image, 16 << 20, 1024)
    got = transcript(petrel(image, "mounthostile\n", system, tmp_path))
    assert len(want) > 70 and want[-1] == "M|mounthostile: survived", want
    assert got == want, [(w, g) for w, g in zip(want, got) if w != g][:8] or (want, got)
    e2fsck_clean(image)


# The power-loss test's writer: file i is `count` KB of /src/random from i KB
# on, made durable in turn by fsync, O_SYNC, fdatasync and O_DSYNC
# (tests/linux/syncwrite.c), and then announced.
POWER_FILES = 40


def power_count(i):
    return (i * 37) % 150 + 1


POWER_MODES = ("fsync", "osync", "fdatasync", "dsync")
POWER_SCRIPT = "cd /data\n" + "".join(
    f"syncwrite /src/random {i * 1024} {power_count(i) * 1024} f{i} {POWER_MODES[i % 4]} && echo synced {i}\n"
    for i in range(1, POWER_FILES + 1))


def run_and_kill(argv, rng, timeout=120):
    """Start `petrel run` (argv), kill its QEMU at a random moment of the
    writes: after a random number of announced fsyncs and a random delay.
    The announcements seen before the kill."""
    target = rng.randrange(0, POWER_FILES)
    delay = rng.random() * 0.05
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    seen, text = [], []
    deadline = time.monotonic() + timeout
    try:
        for line in proc.stdout:
            text.append(line)
            m = re.match(r"synced (\d+)", line.replace("\r", ""))
            if m:
                seen.append(int(m[1]))
            started = target == 0 and line.startswith("lx: run")
            if started or (target and len(seen) >= target) or time.monotonic() > deadline:
                time.sleep(delay)
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
        proc.wait()
    for line in rest.replace("\r", "").splitlines():
        m = re.match(r"synced (\d+)", line)
        if m:
            seen.append(int(m[1]))              # (printed before the kill, read after it)
    assert time.monotonic() <= deadline, "".join(text)[-3000:]
    return seen, "".join(text)


@pytest.mark.parametrize("system", SYSTEMS)
def test_power_loss_at_25_moments_leaves_an_image_e2fsck_repairs_with_every_fsynced_file_whole(system, tmp_path):
    src = random_file(tmp_path)
    data = (src / "random").read_bytes()
    script = tmp_path / "power.sh"
    script.write_text(POWER_SCRIPT)
    rng = random.Random(91 + SYSTEMS.index(system))
    image = tmp_path / "power.img"
    out = tmp_path / "out"
    kept = 0
    for run in range(25):
        fresh_image(image, 16 << 20, 1024)
        argv = [str(REPO / "petrel"), "run", "--system", system, "--disk", str(image), "--add", f"{script}:/s.sh",
                "--add", f"{src}:/src", "--exec", "busybox sh /s.sh"]
        seen, text = run_and_kill(argv, rng)
        fsck = subprocess.run([e2prog("e2fsck"), "-fy", str(image)], capture_output=True, text=True, timeout=300)
        assert fsck.returncode in (0, 1), (run, fsck.stdout[-3000:], text[-2000:])
        e2fsck_clean(image)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        cmds = tmp_path / "dump.cmds"
        cmds.write_text("".join(f"dump /f{i} {out}/f{i}\n" for i in seen))
        subprocess.run([e2prog("debugfs"), "-f", str(cmds), str(image)], capture_output=True, timeout=300)
        for i in seen:
            want = data[i * 1024:(i + power_count(i)) * 1024]
            got = (out / f"f{i}").read_bytes() if (out / f"f{i}").exists() else b""
            assert got == want, (run, i, len(got), len(want), seen, text[-2000:])
        kept += len(seen)
    assert kept > 100                           # (the kills fell all over the run, not only at its start)


@pytest.mark.parametrize("system", SYSTEMS)
def test_hard_links_made_by_linux_and_large_files_freed_in_steps(system, tmp_path):
    image = tmp_path / "links.img"
    fresh_image(image, 256 << 20, 1024)
    linux(image, """cd /data
echo shared > a
busybox ln a b
echo other > c
busybox ln c d
busybox dd if=/dev/urandom of=big bs=65536 count=640 2>/dev/null
busybox dd if=/dev/urandom of=cut bs=65536 count=640 2>/dev/null
busybox df /data | busybox tail -1
""")
    text = petrel(image, """cd /data
busybox stat -c '%n %h %i' a b c d
exec 3< a
busybox rm a b
echo "open: $(busybox cat <&3)"
exec 3<&-
busybox mv c d
busybox ls
busybox stat -c '%n %h' d
busybox rm big
busybox truncate -s 1 cut
busybox stat -c '%n %s %b' cut
busybox df /data | busybox tail -1
""", system, tmp_path)
    assert "open: shared" in text, text[-3000:]
    inos = re.findall(r"^([abcd]) (\d) (\d+)$", text, re.M)
    assert len(inos) == 4 and inos[0][1:] == inos[1][1:] and inos[2][1:] == inos[3][1:], text[-3000:]
    assert re.search(r"^c\s+cut\s+d\s+lost\+found$", text, re.M) or "d 2" in text, text[-3000:]
    assert "cut 1 2" in text, text[-3000:]
    e2fsck_clean(image)
    after = listing(linux(image, LIST))
    assert set(after) == {"c", "d", "cut"} and after["d"][2] == 2 and after["cut"][1] == 1, after


# A hostile second client of the blk service (tests/programs/blkhostile:
# bad buffers and lengths, prefetch floods, syncs from 24 threads at once,
# tickets never asked after) beside the personality, in both placements of
# both: every answer is one idl/blk.toml names, and the Linux programs
# writing and fsyncing 40 files on /data meanwhile do not notice. The
# files are whole on the image, which e2fsck finds clean.
@pytest.mark.parametrize("placement", ["user", "kernel"])
def test_a_hostile_second_client_of_the_disk_does_not_hurt_the_files_on_it(placement, tmp_path):
    src = random_file(tmp_path)
    data = (src / "random").read_bytes()
    image = tmp_path / "shared.img"
    fresh_image(image, 16 << 20, 1024)
    script = POWER_SCRIPT.replace("cd /data\n", "cd /data\nbusybox sleep 1\n") + "busybox sync && echo all synced\n"
    text = petrel(image, script, f"blk-hostile-{placement}", tmp_path, extra=[(src, "/src")])
    oks = re.findall(r"^(ok|not ok) \d+ - (blkhostile: .*)$", text, re.M)
    assert len(oks) == 3 and all(v == "ok" for v, _ in oks) and "blkhostile: done" in text, text[-4000:]
    oks = re.findall(r"^(ok|not ok) \d+ - (ext2hostile: .*)$", text, re.M)
    assert len(oks) == 2 and all(v == "ok" for v, _ in oks) and "ext2hostile: done" in text, text[-4000:]
    synced = [int(m) for m in re.findall(r"^synced (\d+)$", text, re.M)]
    assert synced == list(range(1, POWER_FILES + 1)) and "all synced" in text, text[-4000:]
    e2fsck_clean(image)
    out = tmp_path / "out"
    out.mkdir()
    cmds = tmp_path / "dump.cmds"
    cmds.write_text("".join(f"dump /f{i} {out}/f{i}\n" for i in synced))
    subprocess.run([e2prog("debugfs"), "-f", str(cmds), str(image)], capture_output=True, timeout=300)
    for i in synced:
        assert (out / f"f{i}").read_bytes() == data[i * 1024:(i + power_count(i)) * 1024], i


# The user-placed ext2 file system service killed (tests/programs/ext2crash)
# eight times in a seeded schedule, each time after 1 to 24 of its writes
# to blk (in the middle of handing a transaction over, or of a sync),
# while three rounds of the power-loss script write and sync 120 files
# (in three directories the host made).
# The root task restarts the service and the personality mounts it again
# each time; a write or fsync that lost what it wrote fails (the file is
# not announced). Every file announced is whole, and e2fsck finds the
# image clean: blk never held part of a change.
RESTART_ROUNDS = 3


def test_the_file_system_service_killed_mid_write_comes_back_with_a_clean_image_and_every_fsynced_file(tmp_path):
    src = random_file(tmp_path)
    data = (src / "random").read_bytes()
    image = tmp_path / "restart.img"
    fresh_image(image, 32 << 20, 1024)
    made = subprocess.run([e2prog("debugfs"), "-w", "-f", "-", str(image)], capture_output=True, text=True,
                          input="".join(f"mkdir r{k}\n" for k in range(RESTART_ROUNDS)), timeout=60)
    assert made.returncode == 0, made.stderr
    script = "".join(POWER_SCRIPT.replace("cd /data\n", f"cd /data/r{k}\n")
                     .replace("echo synced ", f"echo synced {k} ") for k in range(RESTART_ROUNDS))
    text = petrel(image, script + "busybox sync && echo all synced\n", "ext2-restart-user", tmp_path,
                  extra=[(src, "/src")], check=False)
    assert "lx: done" in text and "ext2crash: done" in text, text[-4000:]
    faults = text.count("root: service ext2fs faulted")
    assert faults >= 2 and text.count("root: service ext2fs is back") == faults, text[-4000:]
    assert text.count("mounted again after the file system service restarted") >= 1, text[-4000:]
    synced = [tuple(int(x) for x in m) for m in re.findall(r"^synced (\d+) (\d+)$", text, re.M)]
    assert len(synced) >= RESTART_ROUNDS * POWER_FILES - 2 * faults and "all synced" in text, text[-4000:]
    e2fsck_clean(image)
    out = tmp_path / "out"
    out.mkdir()
    cmds = tmp_path / "dump.cmds"
    cmds.write_text("".join(f"dump /r{k}/f{i} {out}/r{k}f{i}\n" for k, i in synced))
    subprocess.run([e2prog("debugfs"), "-f", str(cmds), str(image)], capture_output=True, timeout=300)
    for k, i in synced:
        assert (out / f"r{k}f{i}").read_bytes() == data[i * 1024:(i + power_count(i)) * 1024], (k, i)


# tests/linux/manyfiles.c on /data: 6,000 files and 600 directories in
# one directory, listed, renamed, removed: more nodes and entries than the
# personality's tables had at start (they grow). Its output is Linux's,
# in both placements, and e2fsck finds the image clean.
def many_output(text):
    text = text.replace("\r", "")
    return text[text.index("lx: run"):text.index("lx: exit")].splitlines()[1:]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_directory_of_thousands_of_files_on_the_disk_is_as_on_linux(system, tmp_path):
    theirs, mine, ours = both_ways("manyfiles /data/many 6000\n", system, tmp_path, 64 << 20, 4096)
    want, got = many_output(theirs), many_output(mine)
    assert len(want) > 8 and "made 6000 files and 600 directories of 6000" in want and got == want, (want, got)
    e2fsck_clean(ours)
