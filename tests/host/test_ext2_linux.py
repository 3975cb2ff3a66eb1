"""Linux as the oracle of Petrel's ext2 (lib/ext2.c, lib/ext2_write.c), both
ways, on the Debian kernel the bench boots (`./petrel run --linux --disk`,
its ext4 driver mounting ext2 at /data):

- Linux writes a tree (files of many sizes, a sparse one, a directory of
  300 entries, hard and symbolic links, set-id modes, a rename over a name,
  a file removed), lists it and unmounts; e2fsck finds the image clean, and
  Petrel's reader shows every file with Linux's type, size, link count,
  mode and MD5.
- Petrel's writer makes a tree by seeded random calls (the same calls on a
  host directory give the expected tree); Linux mounts the image and lists
  exactly that tree, then changes it (removes, renames, appends, makes);
  e2fsck finds it clean and Petrel's reader shows Linux's tree."""
import hashlib
import os
import random
import stat
import subprocess

import pytest

from conftest import REPO
from test_ext2 import Host, drive, e2fsck_clean, fresh_image, random_calls, run_ops  # noqa: F401 (a fixture)

LIST = ("cd /data && busybox find . ! -path './lost+found*' ! -name . -exec busybox stat -c 'S|%n|%F|%s|%h|%a' {} \\;\n"
        "busybox find . -type f ! -path './lost+found*' -exec busybox md5sum {} \\;\n")


def linux(image, script):
    """Run the shell script under Linux with image at /data; its console lines."""
    path = image.parent / "script.sh"
    path.write_text("set -e\n" + script)
    out = subprocess.run([str(REPO / "petrel"), "run", "--linux", "--disk", str(image), "--add", f"{path}:/s.sh",
                          "--exec", "busybox sh /s.sh"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "lx: done" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
    assert "lx: mount" not in out.stdout and "lx: module" not in out.stdout and "lx: umount" not in out.stdout, \
        out.stdout[-3000:]
    return out.stdout.replace("\r", "").splitlines()


def listing(lines):
    """{path: (type, size (not for directories), links, mode, md5 of a file)} from LIST's output."""
    kinds = {"regular file": "file", "regular empty file": "file", "directory": "dir", "symbolic link": "link",
             "fifo": "fifo"}
    seen, sums = {}, {}
    for line in lines:
        if line.startswith("S|"):
            _, name, kind, size, links, mode = line.split("|")
            k = kinds[kind]
            seen[name[2:]] = [k, None if k == "dir" else int(size), int(links), mode]
        elif len(line) > 34 and line[32:34] == "  " and line[34:36] == "./":
            sums[line[36:]] = line[:32]
    for name, md5 in sums.items():
        seen[name].append(md5)
    return {k: tuple(v) for k, v in seen.items()}


def petrel_listing(drive, image):
    """The same, as Petrel's reader sees the image."""
    out = subprocess.run([str(drive), str(image), "tree"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]
    seen = {}
    for line in out.stdout.splitlines():
        if line.startswith("#"):
            continue
        path, kind, mode, uid, gid, size, links, mtime, h = line.split("\t")
        if path == "lost+found":
            continue
        kind = {"other": "fifo"}.get(kind, kind)
        entry = [kind, None if kind == "dir" else int(size), int(links), mode.lstrip("0") or "0"]
        if kind == "file":
            data = subprocess.run([str(drive), str(image), "cat", path], capture_output=True, check=True).stdout
            entry.append(hashlib.md5(data).hexdigest())
        seen[path] = tuple(entry)
    return seen


def host_listing(root):
    seen = {}
    for path, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(path, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            mode = oct(st.st_mode & 0o7777)[2:]
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = ("link", st.st_size, st.st_nlink, mode)
            elif stat.S_ISDIR(st.st_mode):
                seen[rel] = ("dir", None, st.st_nlink, mode)
            elif stat.S_ISFIFO(st.st_mode):
                seen[rel] = ("fifo", 0, st.st_nlink, mode)
            else:
                with open(full, "rb") as f:
                    seen[rel] = ("file", st.st_size, st.st_nlink, mode, hashlib.md5(f.read()).hexdigest())
    return seen


def test_what_linux_writes_petrels_ext2_reads_as_linux_lists_it(drive, tmp_path):
    image = tmp_path / "linux.img"
    fresh_image(image, 32 << 20, 1024)
    script = """cd /data
busybox mkdir -p a/b/c many
echo one > a/one
busybox dd if=/dev/urandom of=a/b/big bs=1024 count=1500 2>/dev/null
busybox dd if=/dev/urandom of=sparse bs=1 count=7 seek=9000000 2>/dev/null
busybox head -c 12289 /dev/urandom > a/b/c/edge
for i in $(busybox seq 1 300); do echo $i > many/entry-with-a-longish-name-$i; done
busybox ln a/one a/b/hard
busybox ln -s a/one short
busybox ln -s $(busybox head -c 120 /dev/zero | busybox tr '\\0' x) long
busybox chmod 4755 a/one
busybox mkfifo pipe
echo two > a/two
busybox mv a/two a/one
busybox rm many/entry-with-a-longish-name-7
busybox mv many/entry-with-a-longish-name-8 a/b/c/
""" + LIST
    want = listing(linux(image, script))
    assert len(want) > 300 and want["a/one"][0] == "file" and want["sparse"][1] == 9000007
    e2fsck_clean(image)
    got = petrel_listing(drive, image)
    assert {k for k in got} == {k for k in want}
    for k, v in want.items():
        if v[0] == "dir":
            assert got[k][0] == "dir" and got[k][3] == v[3], (k, got[k], v)
        else:
            assert got[k] == v, (k, got[k], v)


@pytest.mark.parametrize("block,seed", [(1024, 21), (4096, 22)])
def test_what_petrels_ext2_writes_linux_lists_and_changes_and_petrel_reads_back(drive, tmp_path, block, seed):
    old = os.umask(0)
    try:
        host = Host(tmp_path / "host")
        os.mkdir(host.root)
        calls = random_calls(random.Random(seed), host, 300, block)
    finally:
        os.umask(old)
    image = tmp_path / "petrel.img"
    fresh_image(image, 64 << 20, block)
    got = run_ops(drive, image, [" ".join(w) for w, _ in calls])
    assert got == [want for _, want in calls]
    expected = host_listing(host.root)
    assert len(expected) > 10
    change = """cd /data
busybox mkdir -p linux/made
echo added >> linux/made/f
for x in *; do if [ -f "$x" ] && [ ! -L "$x" ]; then echo more >> "$x"; fi; done
for x in *; do if [ -d "$x" ] && [ "$x" != lost+found ] && [ "$x" != linux ]; then busybox mv "$x" linux/made/; break; fi; done
busybox rm -rf b
"""
    lines = linux(image, LIST + "echo ==\n" + change + LIST)
    cut = lines.index("==")
    before, after = listing(lines[:cut]), listing(lines[cut:])
    assert before == {k: v for k, v in expected.items()}, \
        sorted(set(before.items()) ^ set(expected.items()))[:10]
    e2fsck_clean(image)
    assert petrel_listing(drive, image) == after
