"""Reading and writing ext2 (lib/ext2.c, lib/ext2_write.c) against e2fsprogs
and the host's Linux.

Reading: a directory tree of many
shapes (empty, one byte, block edges, indirect, double indirect and sparse
files, a directory of 300 entries over several blocks, a 255-byte name,
short and long symbolic links, a hard link, modes and times) is put into
an image by `mke2fs -t ext2 -d`, with 1 KiB and 4 KiB blocks, and read back
by tests/host/cc/ext2drive.c: every file's type, mode, owner, size, link
count, time and bytes (CRC-32) as the host's own files have them. Then
10,000 images with random bytes of their metadata (superblock, group
descriptors, bitmaps, inode table, directories) changed: each is refused
or read with errors, never a bad memory access (the driver is built with
the address and undefined-behaviour sanitizers) or a walk without end.

Writing: seeded random sequences of file system calls (create, mkdir,
mknod, write with holes and past each indirection level, truncate, chmod,
unlink, rmdir, rename within and across directories and over names, link,
symlink, files unlinked while open) are made on a fresh image by
ext2drive and the same calls on a directory of the host: every call gives
Linux's result (its errno when it fails), e2fsck finds the image clean,
and the tree read back by debugfs (e2fsprogs' own reader) and by lib/ext2.c
is the host's. Then a full disk, and the orphan list after a crash."""
import errno
import os
import random
import shutil
import stat
import subprocess
import zlib

import pytest

from conftest import REPO

def crc(data):
    return zlib.crc32(data)


def mke2fs():
    found = shutil.which("mke2fs") or next((p for p in ("/sbin/mke2fs", "/usr/sbin/mke2fs") if os.path.exists(p)),
                                           None)
    if not found:
        pytest.fail("mke2fs not found (Debian package e2fsprogs: ./petrel setup installs it)")
    return found


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    compiler = shutil.which("clang") or pytest.fail("no clang for the host (./petrel setup installs it)")
    exe = tmp_path_factory.mktemp("ext2") / "ext2drive"
    subprocess.run([compiler, "-O1", "-g", "-Wall", "-Werror", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", "-I", str(REPO / "lib/include"),
                    "-I", str(REPO / "kernel/include/uapi"), "-o", str(exe),
                    str(REPO / "tests/host/cc/ext2drive.c"), str(REPO / "lib/ext2.c"),
                    str(REPO / "lib/ext2_write.c")],
                   check=True)
    return exe


def make_tree(root):
    (root / "empty").write_bytes(b"")
    (root / "one").write_bytes(b"x")
    for n in (1023, 1024, 1025, 4095, 4096, 4097, 12 * 1024 + 1, 300 * 1024, 1100 * 1024):
        (root / f"size-{n}").write_bytes(bytes((i * 7 + n) % 251 for i in range(n)))
    with open(root / "sparse", "wb") as f:          # a hole of 5 MiB, then ten bytes
        f.seek(5 << 20)
        f.write(b"0123456789")
    d = root / "dir" / "deeper" / "deepest"
    d.mkdir(parents=True)
    (d / "leaf").write_bytes(b"leaf\n")
    many = root / "many"
    many.mkdir()
    for i in range(300):
        (many / f"entry-with-a-longish-name-{i:04d}").write_bytes(str(i).encode())
    (root / ("n" * 255)).write_bytes(b"a long name")
    os.symlink("one", root / "short-link")
    os.symlink("dir/deeper/" + "t" * 80, root / "long-link")
    os.link(root / "one", root / "hard")
    (root / "private").write_bytes(b"secret")
    os.chmod(root / "private", 0o600)
    (root / "tool").write_bytes(b"#!/bin/sh\n")
    os.chmod(root / "tool", 0o4755)
    stamp = 1_700_000_000
    for path, dirs, files in os.walk(root, topdown=False):
        for name in files + dirs:
            os.utime(os.path.join(path, name), (stamp, stamp), follow_symlinks=False)
            stamp += 1


def expected(root):
    lines = []

    def walk(d, rel):
        for entry in sorted(os.scandir(d), key=lambda e: e.name):
            st = entry.stat(follow_symlinks=False)
            path = f"{rel}{entry.name}"
            if entry.is_symlink():
                lines.append((path, "link", oct(st.st_mode & 0o7777)[2:], st.st_uid, st.st_gid, st.st_size,
                              st.st_nlink, int(st.st_mtime), f"{crc(os.readlink(entry.path).encode()):08x}"))
            elif entry.is_dir():
                lines.append((path, "dir", oct(st.st_mode & 0o7777)[2:], st.st_uid, st.st_gid, 0, None,
                              int(st.st_mtime), "-"))
                walk(entry.path, path + "/")
            elif entry.is_file(follow_symlinks=False):
                with open(entry.path, "rb") as f:
                    h = crc(f.read())
                lines.append((path, "file", oct(st.st_mode & 0o7777)[2:], st.st_uid, st.st_gid, st.st_size,
                              st.st_nlink, int(st.st_mtime), f"{h:08x}"))
            else:                                   # (a FIFO, socket or device: ext2drive hashes no bytes)
                lines.append((path, "other", oct(st.st_mode & 0o7777)[2:], st.st_uid, st.st_gid, 0,
                              st.st_nlink, int(st.st_mtime), f"{0:08x}"))
    walk(root, "")
    return sorted(lines)


def read_tree(drive, image, dir_links=False):
    out = subprocess.run([str(drive), str(image), "tree"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    got = []
    for line in out.stdout.splitlines():
        if line.startswith("#"):
            continue
        path, kind, mode, uid, gid, size, links, mtime, h = line.split("\t")
        if path == "lost+found":
            continue
        got.append((path, kind, mode, int(uid), int(gid), int(size),
                    None if kind == "dir" and not dir_links else int(links), int(mtime), h))
    return sorted(got), out.stdout


@pytest.mark.parametrize("block", [1024, 4096])
def test_a_tree_mke2fs_made_reads_back_as_the_host_has_it(drive, tmp_path, block):
    src = tmp_path / "src"
    src.mkdir()
    make_tree(src)
    image = tmp_path / "fs.img"
    with open(image, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-t", "ext2", "-b", str(block), "-L", "petrel-test", "-d", str(src),
                    str(image)], check=True, capture_output=True)
    got, text = read_tree(drive, image)
    assert f"# block {block} " in text and "label petrel-test" in text
    want = expected(src)
    missing = [w for w in want if w not in got]
    extra = [g for g in got if g not in want]
    assert not missing and not extra, f"missing {missing[:5]}\nextra {extra[:5]}"
    assert len(got) > 320


def test_what_is_not_ext2_or_not_read_here_is_refused_with_a_reason(drive, tmp_path):
    blank = tmp_path / "blank.img"
    blank.write_bytes(bytes(1 << 20))
    out = subprocess.run([str(drive), str(blank), "tree"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no ext2 superblock" in out.stdout
    ext4 = tmp_path / "ext4.img"
    with open(ext4, "wb") as f:
        f.truncate(8 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-t", "ext4", str(ext4)], check=True, capture_output=True)
    out = subprocess.run([str(drive), str(ext4), "tree"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "incompatible features" in out.stdout, out.stdout


def small_image(tmp_path):
    """The tree of make_tree less its large parts, in a 4 MiB image whose metadata is in its first 48 KiB."""
    src = tmp_path / "src"
    src.mkdir()
    make_tree(src)
    shutil.rmtree(src / "many")
    for big in ("size-307200", "size-1126400", "sparse"):
        (src / big).unlink()
    image = tmp_path / "small.img"
    with open(image, "wb") as f:
        f.truncate(4 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-t", "ext2", "-b", "1024", "-N", "64", "-d", str(src), str(image)],
                   check=True, capture_output=True)
    return image


def test_ten_thousand_corrupted_images_are_refused_or_read_with_errors(drive, tmp_path):
    image = small_image(tmp_path)
    out = subprocess.run([str(drive), str(image), "fuzz", "10000", "7", str(48 << 10)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    words = out.stdout.replace(",", "").split()
    refused, errors, clean = int(words[3]), int(words[5]), int(words[7])
    assert refused + errors + clean == 10000
    assert refused > 100 and errors > 100 and clean > 100, out.stdout


# ---- writing ----------------------------------------------------------------

def e2prog(name):
    found = shutil.which(name) or next((p for p in (f"/sbin/{name}", f"/usr/sbin/{name}") if os.path.exists(p)), None)
    if not found:
        pytest.fail(f"{name} not found (Debian package e2fsprogs: ./petrel setup installs it)")
    return found


def fresh_image(path, size, block, inodes=None):
    with open(path, "wb") as f:
        f.truncate(size)
    subprocess.run([mke2fs(), "-q", "-F", "-t", "ext2", "-b", str(block)] + (["-N", str(inodes)] if inodes else [])
                   + [str(path)], check=True, capture_output=True)


def e2fsck_clean(image):
    out = subprocess.run([e2prog("e2fsck"), "-fn", str(image)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]
    return out.stdout


def run_ops(drive, image, lines, again=None):
    out = subprocess.run([str(drive), str(image), "ops"] + (["again", str(again)] if again else []),
                         input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "mount:" not in out.stdout, out.stdout[-2000:] + out.stderr[-3000:]
    if again:
        return out.stdout.splitlines(), int(out.stderr.split("retries")[1].split()[0])
    return out.stdout.splitlines()


def pattern(off, n, seed):
    return bytes(((off + i) * 31 + seed) % 251 for i in range(n))


class Host:
    """The same calls on a directory of the host: Linux's answers."""

    def __init__(self, root):
        self.root = root
        self.slots = {}

    def p(self, path):
        return os.path.join(self.root, path)

    def call(self, words):
        try:
            return self._call(words)
        except OSError as e:
            return f"err {e.errno}"

    def _call(self, w):
        op = w[0]
        if op == "mkdir":
            os.mkdir(self.p(w[1]), int(w[2], 8))
        elif op == "create":
            os.close(os.open(self.p(w[1]), os.O_CREAT | os.O_EXCL | os.O_WRONLY, int(w[2], 8)))
        elif op == "mknod":
            os.mknod(self.p(w[1]), int(w[2], 8))
        elif op == "write":
            fd = os.open(self.p(w[1]), os.O_WRONLY)
            try:
                self.write(fd, int(w[2]), int(w[3]), int(w[4]))
            finally:
                os.close(fd)
        elif op == "wfd":
            self.write(self.slots[int(w[1])], int(w[2]), int(w[3]), int(w[4]))
        elif op == "trunc":
            os.truncate(self.p(w[1]), int(w[2]))
        elif op == "chmod":
            os.chmod(self.p(w[1]), int(w[2], 8))
        elif op == "unlink":
            os.unlink(self.p(w[1]))
        elif op == "rmdir":
            os.rmdir(self.p(w[1]))
        elif op == "rename":
            os.rename(self.p(w[1]), self.p(w[2]))
        elif op == "link":
            os.link(self.p(w[1]), self.p(w[2]), follow_symlinks=False)
        elif op == "symlink":
            os.symlink(w[1], self.p(w[2]))
        elif op == "open":
            fd = os.open(self.p(w[1]), os.O_WRONLY)
            slot = min(set(range(16)) - set(self.slots))
            self.slots[slot] = fd
            return f"ok {slot}"
        elif op == "close":
            os.close(self.slots.pop(int(w[1])))
        elif op == "remount":
            pass
        else:
            raise AssertionError(op)
        return "ok"

    @staticmethod
    def write(fd, off, n, seed):
        for at in range(0, n, 1 << 20):
            os.pwrite(fd, pattern(off + at, min(1 << 20, n - at), seed), off + at)


NAMES = ["a", "b", "c", "dd", "e" * 200]


def random_calls(rng, host, count, block):
    """count calls on paths of one to three of NAMES: many fail (no such
    parent, not a directory, exists), as they should. Writes, truncates and
    opens go to regular files (the host's would follow symbolic links)."""
    paths = [x for x in NAMES] + [f"{x}/{y}" for x in NAMES[:4] for y in NAMES] + \
        [f"{x}/{y}/{z}" for x in NAMES[:3] for y in NAMES[:3] for z in NAMES[:3]]
    per = block // 4
    offsets = [0, 1, block - 1, block, 11 * block, 12 * block - 3, (12 + per) * block, (12 + per + 5) * block,
               3 << 20] + ([(12 + per + per * per) * block + 17] if block == 1024 else [])   # (triple: 64 MiB on)
    ops = ["create"] * 8 + ["mkdir"] * 6 + ["write"] * 8 + ["unlink"] * 4 + ["rmdir"] * 3 + ["rename"] * 7 + \
        ["link"] * 3 + ["symlink"] * 2 + ["trunc"] * 3 + ["chmod"] * 1 + ["mknod"] * 1 + ["open"] * 2 + \
        ["wfd"] * 2 + ["close"] * 2 + ["remount"] * 1
    calls = []
    while len(calls) < count:
        op = rng.choice(ops)
        path = rng.choice(paths)
        if rng.random() < 0.8:                      # (mostly a name in a directory there is)
            dirs = [os.path.relpath(d, host.root) for d, _, _ in os.walk(host.root)]
            parent = rng.choice(dirs)
            path = rng.choice(NAMES) if parent == "." else f"{parent}/{rng.choice(NAMES)}"
        regular = os.path.isfile(host.p(path)) and not os.path.islink(host.p(path))
        if op in ("create", "mkdir"):
            w = [op, path, rng.choice(["644", "755", "600", "4755", "700"])]
        elif op == "mknod":
            w = [op, path, "10644"]
        elif op in ("write", "trunc", "chmod", "open"):
            if not regular:
                continue
            if op == "write":
                w = [op, path, str(rng.choice(offsets) + rng.randrange(3)),
                     str(rng.choice([1, 100, block, 3 * block + 5, 70000, 400000])), str(rng.randrange(100))]
            elif op == "trunc":
                w = [op, path, str(rng.choice([0, 1, block + 3, 12 * block, 20 * block, 5 << 20]))]
            elif op == "chmod":
                w = [op, path, rng.choice(["600", "640", "2755"])]
            else:
                if len(host.slots) >= 4:
                    continue
                w = [op, path]
        elif op in ("wfd", "close"):
            if not host.slots:
                continue
            slot = rng.choice(sorted(host.slots))
            w = [op, str(slot)] + ([str(rng.choice(offsets)), str(rng.choice([10, 5000])), str(rng.randrange(100))]
                                   if op == "wfd" else [])
        elif op in ("rename", "link"):
            other = rng.choice([p for p in paths if p.count("/") <= path.count("/") + 1])
            w = [op, path, other] if rng.random() < 0.7 else [op, other, path]
        elif op == "symlink":
            w = [op, rng.choice(["a", "../b/c", "t" * rng.choice([10, 59, 60, 300])]), path]
        else:
            w = [op] + ([path] if op != "remount" else [])
        walked = [a for a in w[1:] if "/" in a and not a.startswith(("t", ".."))]
        if any(os.path.islink(host.p(a[:i])) for a in walked for i in range(len(a)) if a[i] == "/"):
            continue                                # (the drive does not follow links on the way: the personality will)
        calls.append((w, host.call(w)))
    for slot in sorted(host.slots):
        w = ["close", str(slot)]
        calls.append((w, host.call(w)))
    return calls


def host_calls(tmp_path, seed, count, block):
    """random_calls on a new directory of the host (no umask, as ext2drive has none): it and the calls."""
    old = os.umask(0)
    try:
        host = Host(tmp_path / "host")
        os.mkdir(host.root)
        return host, random_calls(random.Random(seed), host, count, block)
    finally:
        os.umask(old)


def tree_of(drive, image):
    got, _ = read_tree(drive, image)
    return sorted((path, kind, mode, size, links, h) for path, kind, mode, uid, gid, size, links, mtime, h in got)


def host_tree(root):
    return sorted((path, kind, mode, size, links, h) for path, kind, mode, uid, gid, size, links, mtime, h in
                  expected(root))


def files_of(root):
    """Every name below root: its kind, and a regular file's bytes or a link's target, and its permissions
    (debugfs's rdump changes the owner after the mode, which drops set-id bits: they are left out)."""
    seen = {}
    for path, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(path, name)
            rel = os.path.relpath(full, root)
            if rel == "lost+found":
                continue
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                seen[rel] = ("dir", oct(st.st_mode & 0o777))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    seen[rel] = ("file", crc(f.read()), oct(st.st_mode & 0o777))
    return seen


@pytest.mark.parametrize("block,seed", [(1024, 1), (1024, 2), (4096, 3), (4096, 4)])
def test_random_calls_give_linuxs_results_and_an_image_e2fsck_and_debugfs_agree_with(drive, tmp_path, block, seed):
    host, calls = host_calls(tmp_path, seed, 500, block)
    image = tmp_path / "fs.img"
    fresh_image(image, 32 << 20, block)
    got = run_ops(drive, image, [" ".join(w) for w, _ in calls])
    diffs = [f"{' '.join(w)}: Linux {want}, ext2 {have}" for (w, want), have in zip(calls, got) if want != have]
    assert len(got) == len(calls) and not diffs, "\n".join(diffs[:20])
    fails = sum(1 for _, want in calls if want.startswith("err"))
    assert 50 < fails < 350, fails                  # (both kinds, many of each)
    e2fsck_clean(image)
    assert tree_of(drive, image) == host_tree(host.root)
    dump = tmp_path / "dump"
    dump.mkdir()
    subprocess.run([e2prog("debugfs"), "-R", f"rdump / {dump}", str(image)], check=True, capture_output=True)
    host_files = {k: v for k, v in files_of(host.root).items() if not stat.S_ISFIFO(os.lstat(host.p(k)).st_mode)}
    assert files_of(dump) == host_files


def test_a_full_disk_says_enospc_and_everything_freed_comes_back(drive, tmp_path):
    image = tmp_path / "fs.img"
    fresh_image(image, 8 << 20, 1024)
    before = e2fsck_clean(image).splitlines()[-1]
    got = run_ops(drive, image, ["mkdir d 755", "full d/big", "create d/small 644", "write d/small 0 5000 1",
                                 "mkdir d/sub 755", "remount", "unlink d/big", "write d/small 0 5000 1",
                                 "unlink d/small", "rmdir d/sub", "rmdir d"])
    assert got[0] == "ok" and got[1].startswith("ok ") and int(got[1].split()[1]) > 6 << 20, got
    assert got[2] == "ok" and got[3] == f"err {errno.ENOSPC}" and got[4] == f"err {errno.ENOSPC}", got
    assert got[5:] == ["ok"] * 4 + [f"err {errno.ENOENT}", "ok"], got     # (d/sub was never made)
    assert e2fsck_clean(image).splitlines()[-1] == before


def test_files_run_out_of_inodes_with_enospc(drive, tmp_path):
    image = tmp_path / "fs.img"
    fresh_image(image, 4 << 20, 1024, inodes=32)
    got = run_ops(drive, image, [f"create f{i} 644" for i in range(40)])
    assert "err 28" in got and got[:20] == ["ok"] * 20, got
    e2fsck_clean(image)


def test_a_file_unlinked_while_open_lives_until_closed_and_a_crash_leaves_it_to_the_next_mount(drive, tmp_path):
    image = tmp_path / "fs.img"
    fresh_image(image, 8 << 20, 4096)
    free = e2fsck_clean(image).splitlines()[-1]
    got = run_ops(drive, image, ["create f 644", "write f 0 100000 5", "open f", "unlink f", "wfd 0 200000 10 1",
                                 "close 0", "create g 644", "write g 0 300000 5", "open g", "unlink g", "crash"])
    assert got == ["ok", "ok", "ok 0", "ok", "ok", "ok", "ok", "ok", "ok 0", "ok"], got
    out = subprocess.run([e2prog("e2fsck"), "-fn", str(image)], capture_output=True, text=True, timeout=60)
    assert "orphan" in out.stdout.lower() or out.returncode != 0, out.stdout
    assert run_ops(drive, image, ["create h 644", "unlink h"]) == ["ok", "ok"]
    assert e2fsck_clean(image).splitlines()[-1] == free, "the orphan's blocks and inode came back at mount"


def test_a_file_past_4_gib_on_a_disk_past_4_gib(drive, tmp_path):
    """A sparse 6 GiB disk, a file written at 5 GiB (through the triple
    indirect block): e2fsck clean, and debugfs sees the size and the block."""
    image = tmp_path / "big.img"
    fresh_image(image, 6 << 30, 4096)
    off = (5 << 30) + 123
    assert run_ops(drive, image, ["create f 644", f"write f {off} 10 7", "create g 644", "write g 0 10 7"]) == ["ok"] * 4
    e2fsck_clean(image)
    out = subprocess.run([e2prog("debugfs"), "-R", "stat f", str(image)], capture_output=True, text=True, check=True)
    assert f"Size: {off + 10}" in out.stdout, out.stdout
    out = subprocess.run([e2prog("debugfs"), "-R", f"bmap f {off // 4096}", str(image)], capture_output=True, text=True,
                         check=True)
    assert int(out.stdout.split()[-1]) > 0, out.stdout
    dumped = tmp_path / "g"
    subprocess.run([e2prog("debugfs"), "-R", f"dump g {dumped}", str(image)], capture_output=True, check=True)
    assert dumped.read_bytes() == pattern(0, 10, 7)


def test_ten_thousand_corrupted_images_written_to_give_errors_never_a_bad_access(drive, tmp_path):
    """The writing calls on hostile images: a bitmap that frees metadata or
    blocks in use, pointers outside the disk or into its inode tables,
    counts that disagree, records that overrun: each call fails or does
    what it can, without a bad memory access (sanitizers), a loop without
    end, or a write outside the image."""
    image = small_image(tmp_path)
    before = image.read_bytes()
    out = subprocess.run([str(drive), str(image), "wfuzz", "10000", "11", str(48 << 10)], capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert image.read_bytes() == before             # (the corrupted copies were private)
    words = out.stdout.replace(",", "").split()
    refused, done, failed = int(words[-5]), int(words[-3]), int(words[-1])
    assert done > 10000 and failed > 1000 and refused > 100, out.stdout


@pytest.mark.parametrize("block,seed", [(1024, 5), (4096, 6)])
def test_every_call_taken_back_at_a_cache_miss_and_made_again_gives_the_same_image(drive, tmp_path, block, seed):
    """The file system service's way with a block its cache lacks: the call
    is taken back (an undo log of its writes, copies of its state) and made
    again once the block is in. Through a cache that starts empty now and
    then, each call meets many misses; every answer, and the image byte for
    byte, are those of the calls made straight."""
    host, calls = host_calls(tmp_path, seed, 300, block)
    lines = [" ".join(w) for w, _ in calls]
    straight, retried = tmp_path / "straight.img", tmp_path / "retried.img"
    fresh_image(straight, 32 << 20, block)
    retried.write_bytes(straight.read_bytes())
    want = run_ops(drive, straight, lines)
    got, retries = run_ops(drive, retried, lines, again=seed)
    assert got == want and want == [w for _, w in calls]
    assert retries > 500, retries
    assert retried.read_bytes() == straight.read_bytes()
    e2fsck_clean(retried)


def debugfs_w(image, *requests):
    for r in requests:
        subprocess.run([e2prog("debugfs"), "-w", "-R", r, str(image)], check=True, capture_output=True)


def test_corner_cases_a_review_found(drive, tmp_path):
    """Each once wrong: a directory growing into its indirect block on a
    full disk (that block leaked); a 3 GB file on a revision 0 file system
    (large_file set without revision 1); a file unlinked while open on
    revision 0 (never released); an orphan list pointing past the inodes or
    at a live inode's free bits (the mount failed, or freed another file's
    blocks); sparse_super2 (copies taken for metadata where there were
    none); the largest file of 64 KiB blocks (an overflow past Linux's)."""
    name = "n" * 245
    img = tmp_path / "dir.img"
    with open(img, "wb") as f:
        f.truncate(4 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-t", "ext2", "-b", "1024", "-m", "0", str(img)], check=True)
    got = run_ops(drive, img, ["mkdir d 755"] + [f"create d/{name}{i} 644" for i in range(47)] +
                  ["create s 644", "write s 0 1 1", "full big", "unlink s", f"create d/{name}99 644"])
    assert got[-1] == f"err {errno.ENOSPC}" and got[:48] == ["ok"] * 48, got
    e2fsck_clean(img)

    img = tmp_path / "rev0.img"
    with open(img, "wb") as f:
        f.truncate(8 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-r", "0", str(img)], check=True)
    assert run_ops(drive, img, ["create f 644", "write f 3000000000 10 1", "create g 644", "write g 0 5000 1",
                                "open g", "unlink g", "close 0"]) == ["ok"] * 4 + ["ok 0", "ok", "ok"]
    e2fsck_clean(img)

    img = tmp_path / "orphans.img"
    fresh_image(img, 8 << 20, 1024)
    debugfs_w(img, "ssv last_orphan 99999")
    assert run_ops(drive, img, ["create a 644"]) == ["ok"]
    e2fsck_clean(img)
    out = subprocess.run([e2prog("dumpe2fs"), "-h", str(img)], capture_output=True, text=True)
    assert "with errors" in out.stdout                      # (so that e2fsck looks)
    img = tmp_path / "live.img"
    fresh_image(img, 8 << 20, 1024)
    assert run_ops(drive, img, ["create A 644", "write A 0 5000 1", "create B 644"]) == ["ok"] * 3
    debugfs_w(img, "unlink A", "sif <12> links_count 0", "kill_file <12>")
    assert run_ops(drive, img, ["write B 0 5000 2"]) == ["ok"]
    debugfs_w(img, "ssv last_orphan 12")
    assert run_ops(drive, img, ["write B 5000 10 2"]) == ["ok"]
    e2fsck_clean(img)

    img = tmp_path / "sparse2.img"
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-b", "1024", "-N", "1024", "-O", "sparse_super2", str(img)], check=True)
    got = run_ops(drive, img, ["full big", "unlink big", "create y 644", "write y 0 10 1"])
    assert int(got[0].split()[1]) > 55 << 20 and got[1:] == ["ok"] * 3, got
    e2fsck_clean(img)

    for block, linux_max in ((65536, 0x1fff7fe0000), (4096, 2196873666560), (1024, 17247252480)):
        img = tmp_path / f"max{block}.img"                   # (Linux's ext2_max_size for the block size)
        with open(img, "wb") as f:
            f.truncate(64 << 20)
        subprocess.run([mke2fs(), "-q", "-F", "-t", "ext2", "-b", str(block), str(img)], check=True,
                       capture_output=True)
        got = run_ops(drive, img, ["create f 644", f"trunc f {linux_max}", f"trunc f {linux_max + 1}",
                                   f"write f {linux_max - 10} 10 1"])
        assert got == ["ok", "ok", f"err {errno.EFBIG}", "ok"], (block, got)
        e2fsck_clean(img)
