"""Reading ext2 (lib/ext2.c) against e2fsprogs: a directory tree of many
shapes (empty, one byte, block edges, indirect, double indirect and sparse
files, a directory of 300 entries over several blocks, a 255-byte name,
short and long symbolic links, a hard link, modes and times) is put into
an image by `mke2fs -t ext2 -d`, with 1 KiB and 4 KiB blocks, and read back
by tests/host/cc/ext2drive.c: every file's type, mode, owner, size, link
count, time and bytes (hashed) as the host's own files have them. Then
10,000 images with random bytes of their metadata (superblock, group
descriptors, bitmaps, inode table, directories) changed: each is refused
or read with errors, never a bad memory access (the driver is built with
the address and undefined-behaviour sanitizers) or a walk without end."""
import os
import shutil
import subprocess

import pytest

from conftest import REPO

FNV_START, FNV_PRIME = 0xcbf29ce484222325, 0x100000001b3


def fnv(data):
    h = FNV_START
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xffffffffffffffff
    return h


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
                    str(REPO / "tests/host/cc/ext2drive.c"), str(REPO / "lib/ext2.c")],
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
                              st.st_nlink, int(st.st_mtime), f"{fnv(os.readlink(entry.path).encode()):016x}"))
            elif entry.is_dir():
                lines.append((path, "dir", oct(st.st_mode & 0o7777)[2:], st.st_uid, st.st_gid, 0, None,
                              int(st.st_mtime), "-"))
                walk(entry.path, path + "/")
            else:
                with open(entry.path, "rb") as f:
                    h = fnv(f.read())
                lines.append((path, "file", oct(st.st_mode & 0o7777)[2:], st.st_uid, st.st_gid, st.st_size,
                              st.st_nlink, int(st.st_mtime), f"{h:016x}"))
    walk(root, "")
    return sorted(lines)


def read_tree(drive, image):
    out = subprocess.run([str(drive), str(image), "tree"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    got = []
    for line in out.stdout.splitlines():
        if line.startswith("#"):
            continue
        path, kind, mode, uid, gid, size, links, mtime, h = line.split("\t")
        if path == "lost+found":
            continue
        got.append((path, kind, mode, int(uid), int(gid), int(size), None if kind == "dir" else int(links),
                    int(mtime), h))
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


def test_ten_thousand_corrupted_images_are_refused_or_read_with_errors(drive, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    make_tree(src)
    shutil.rmtree(src / "many")                     # (a small image: its metadata in its first 48 KiB)
    for big in ("size-307200", "size-1126400", "sparse"):
        (src / big).unlink()
    image = tmp_path / "small.img"
    with open(image, "wb") as f:
        f.truncate(4 << 20)
    subprocess.run([mke2fs(), "-q", "-F", "-t", "ext2", "-b", "1024", "-N", "64", "-d", str(src), str(image)],
                   check=True, capture_output=True)
    out = subprocess.run([str(drive), str(image), "fuzz", "10000", "7", str(48 << 10)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    words = out.stdout.replace(",", "").split()
    refused, errors, clean = int(words[3]), int(words[5]), int(words[7])
    assert refused + errors + clean == 10000
    assert refused > 100 and errors > 100 and clean > 100, out.stdout
