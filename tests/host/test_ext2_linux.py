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
  e2fsck finds it clean and Petrel's reader shows Linux's tree.
- Files and directories get chattr's immutable and append-only flags
  (debugfs sets them); then the same calls
  on files and directories so marked fail or succeed under Linux and
  under Petrel's writer alike."""
import hashlib
import os
import shutil
import stat
import subprocess

import pytest

from conftest import REPO
from test_ext2 import drive, e2fsck_clean, e2prog, fresh_image, host_calls, read_tree, run_ops  # noqa: F401 (a fixture)

LIST = ("cd /data && busybox find . ! -path './lost+found*' ! -name . -exec busybox stat -c 'S|%n|%F|%s|%h|%a' {} \\;\n"
        "busybox find . -type f ! -path './lost+found*' -exec busybox md5sum {} \\;\n")


def linux(image, script):
    """Run the shell script under Linux with image at /data; its console lines."""
    path = image.parent / "script.sh"
    path.write_text("set -e\n" + script)
    out = subprocess.run([str(REPO / "petrel"), "run", "--linux", "--disk", str(image), "--add", f"{path}:/s.sh",
                          "--exec", "busybox sh /s.sh"], cwd=REPO, capture_output=True, text=True, timeout=120)
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
    seen = {}
    for path, kind, mode, uid, gid, size, links, mtime, h in read_tree(drive, image, dir_links=True)[0]:
        kind = {"other": "fifo"}.get(kind, kind)
        entry = [kind, None if kind == "dir" else size, links, mode.lstrip("0") or "0"]
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
    host, calls = host_calls(tmp_path, seed, 300, block)
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


# Calls on inodes chattr marked: Petrel's ext2drive form, and the shell's under Linux.
FLAGGED = [
    ("write imm 0 1 1", "echo x > imm"),
    ("append app 2 1", "echo x >> app"),
    ("write app 0 1 1", "echo x > app"),
    ("trunc app 0", "busybox truncate -s 0 app"),
    ("unlink imm", "busybox rm -f imm"),
    ("unlink app", "busybox rm -f app"),
    ("rename imm moved", "busybox mv -f imm moved"),
    ("link app l2", "busybox ln app l2"),
    ("create appdir/new 644", "busybox touch appdir/new"),
    ("unlink appdir/f", "busybox rm -f appdir/f"),
    ("create immdir/new 644", "busybox touch immdir/new"),
    ("unlink immdir/f", "busybox rm -f immdir/f"),
    ("rename plain appdir/f", "busybox mv -f plain appdir/f"),
    ("rename plain appdir/g", "busybox mv -f plain appdir/g"),
    ("rename appdir/g back", "busybox mv -f appdir/g back"),
    ("mkdir immdir/d 755", "busybox mkdir immdir/d"),
    ("rmdir appdir/sub", "busybox rmdir appdir/sub"),
    ("unlink free", "busybox rm -f free"),
]


def test_chattrs_immutable_and_append_only_flags_hold_as_under_linux(drive, tmp_path):
    image = tmp_path / "flags.img"
    fresh_image(image, 8 << 20, 1024)
    linux(image, """cd /data
echo data > imm
echo data > app
echo data > plain
echo data > free
busybox mkdir -p appdir/sub immdir
echo f > appdir/f
echo f > immdir/f
""")
    for path, flag in (("imm", 0x10), ("immdir", 0x10), ("app", 0x20), ("appdir", 0x20)):
        subprocess.run([e2prog("debugfs"), "-w", "-R", f"sif {path} flags {flag:#x}", str(image)], check=True,
                       capture_output=True)                 # (chattr +i, +a: Debian's busybox has no chattr)
    marked = tmp_path / "marked.img"
    shutil.copyfile(image, marked)
    script = "cd /data\nset +e\n" + "".join(
        f"if out=$( ( {sh} ) </dev/null 2>&1 ); then echo 'R|ok'; else echo \"R|err|$out\"; fi\n" for _, sh in FLAGGED)
    lines = [x for x in linux(image, script) if x.startswith("R|")]
    got = run_ops(drive, marked, [op for op, _ in FLAGGED])
    assert len(lines) == len(got) == len(FLAGGED), (lines, got)
    fails = 0
    for (op, sh), want, have in zip(FLAGGED, lines, got):
        if want == "R|ok":
            assert have == "ok", (op, sh, want, have)
        else:
            fails += 1
            assert have.startswith("err ") and os.strerror(int(have.split()[1])) in want, (op, sh, want, have)
    assert fails == 14, fails                       # (four calls succeed: an append, two new names, a removal)
    e2fsck_clean(marked)
