"""The Linux oracle's host-side pieces: page-aligned cpio, the root archive, transcripts."""
import stat

import pytest

from petrel import cases, cpio, debian, oracle, rootfs


# Walks a newc archive: [(name, mode, data offset, data)].
def entries(blob: bytes) -> list:
    out, at = [], 0
    while True:
        f = [int(blob[at + 6 + 8 * i: at + 14 + 8 * i], 16) for i in range(13)]
        namesize, size = f[11], f[6]
        name = blob[at + 110: at + 110 + namesize].split(b"\0")[0].decode()
        data_at = (at + 110 + namesize + 3) & ~3
        if name == "TRAILER!!!":
            return out
        assert namesize <= 4096, "Linux skips entries whose name field passes PATH_MAX"
        out.append((name, f[1], data_at, blob[data_at: data_at + size]))
        at = (data_at + size + 3) & ~3


def test_aligned_files_start_on_pages_and_others_do_not_move():
    files = {f"bin/p{i}": bytes([i]) * (1000 + 777 * i) for i in range(12)}
    files["etc/note"] = b"hello"
    blob = cpio.archive(files, dirs=["bin", "etc"], executables=[f"bin/p{i}" for i in range(12)],
                        links={"etc/l": "note"}, aligned=[f"bin/p{i}" for i in range(12)], root_mode=0o755)
    found = {name: (mode, at, data) for name, mode, at, data in entries(blob)}
    for i in range(12):
        mode, at, data = found[f"bin/p{i}"]
        assert at % 4096 == 0 and data == files[f"bin/p{i}"] and mode & 0o777 == 0o755
    assert found["etc/note"][2] == b"hello"
    assert stat.S_ISLNK(found["etc/l"][0]) and found["etc/l"][2] == b"note"
    assert stat.S_ISDIR(found["."][0])


def test_long_names_get_a_filler_entry_instead_of_a_long_name_field():
    name = "bin/" + "n" * 200
    for pad in range(0, 4096, 97):
        blob = cpio.archive({"x": b"a" * pad, name: b"\x7fELF"}, aligned=[name])
        got = {n: at for n, _m, at, _d in entries(blob)}
        assert got[name] % 4096 == 0


def test_transcript_masks_varying_values_and_drops_the_personality_log():
    console = "boot noise\nlx: run misc\npid: 1 ~42\npetrel-linux: pid 3: unknown system call 9\nlx: exit 0\n" \
              "lx: done\nafter\n"
    assert oracle.transcript(console, True) == ["lx: run misc", "pid: 1 ~", "lx: exit 0", "lx: done"]
    linux = "lx: run misc\r\npid: 1 ~7\r\nlx: exit 0\r\nlx: done\r\n"
    assert oracle.compare(oracle.transcript(linux, False), oracle.transcript(console, True)) == []
    assert oracle.compare(["lx: run a", "x"], ["lx: run a", "y"])


def test_with_archive_replaces_the_root_file_system_only():
    entries_in = [("root", b"elf", 1), ("rootfs.cpio", b"old", 0), ("system.manifest", b"m", 0)]
    assert [(n, f) for n, _d, f in entries_in] == [(n, f) for n, _d, f in oracle.with_archive(entries_in, _Tmp())]
    with pytest.raises(ValueError):
        oracle.with_archive([("root", b"elf", 1)], _Tmp())


class _Tmp:
    def read_bytes(self):
        return b"new"


def test_linux_gets_the_cases_timeout_when_it_is_longer(tmp_path, monkeypatch):
    from petrel import linuxbase, qemu
    timeouts = []
    monkeypatch.setattr(linuxbase, "present", lambda repo: True)
    monkeypatch.setattr(linuxbase, "image", lambda repo: tmp_path / "Image")
    monkeypatch.setattr(qemu, "run", lambda argv, timeout: timeouts.append(timeout) or (1, ""))
    machine = qemu.Machine(smp=4)
    for n, timeout in enumerate((240, 30)):
        archive = tmp_path / f"a{n}.cpio"
        archive.write_bytes(b"archive %d" % n)
        oracle.run_linux(archive, machine, tmp_path, timeout)
    assert timeouts == [240, oracle.LINUX_TIMEOUT]


def test_add_specs():
    assert rootfs.parse_add("/tmp/nope/prog:/opt/prog")[1] == "/opt/prog"
    with pytest.raises(ValueError):
        rootfs.parse_add("x:relative/path")
    with pytest.raises(ValueError):
        rootfs.parse_add("x:/a/../b")


def test_glibc_of_two_builds_is_refused():
    deb = b"..GNU C Library (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36.\n.."
    deb_ld = b"..ld.so (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36.\n.."
    cross = b"..GNU C Library (Debian GLIBC 2.36-8cross1) stable release version 2.36.\n.."
    assert debian.glibc_build(deb) == "Debian GLIBC 2.36-9+deb12u14 2.36"
    assert debian.glibc_build(b"no version here") is None
    rootfs.check_glibc({rootfs.GLIBC_INTERP: deb_ld, rootfs.GLIBC_LIBC: deb})
    rootfs.check_glibc({rootfs.GLIBC_LIBC: cross})              # (no interpreter: nothing to compare)
    with pytest.raises(ValueError, match="add both from one build"):
        rootfs.check_glibc({rootfs.GLIBC_INTERP: deb_ld, rootfs.GLIBC_LIBC: cross})


def test_oracle_cases_need_a_system_and_one_line_commands():
    with pytest.raises(cases.CaseError):
        cases.parse_cases('[[case]]\nname = "a"\noracle = ["hello"]\n')
    with pytest.raises(cases.CaseError):
        cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\noracle = ["a\\nb"]\n')
    (case,) = cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\noracle = ["hello", "args 1"]\n')
    assert case.oracle == ["hello", "args 1"]


def test_run_cases_take_commands_for_petrel_alone():
    with pytest.raises(cases.CaseError):
        cases.parse_cases('[[case]]\nname = "a"\nrun = ["hello"]\n')
    with pytest.raises(cases.CaseError):
        cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\nrun = ["a"]\noracle = ["b"]\n')
    (case,) = cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\nrun = ["lxfuzz ops=10"]\n')
    assert case.run == ["lxfuzz ops=10"] and not case.oracle


def test_the_personality_is_placed_by_its_description():
    from petrel import paths, systems
    kernel = systems.load_system(paths.REPO / "systems" / "linux-kernel.toml", paths.REPO)
    user = systems.load_system(paths.REPO / "systems" / "linux-user.toml", paths.REPO)
    placed = lambda system: {v.name: v.placement for v in system.services}
    assert placed(kernel) == {"linux": "kernel", "net": "kernel", "blk": "kernel", "ext2fs": "kernel",
                              "input": "kernel", "display": "kernel"}
    assert placed(user) == {"linux": "user", "net": "user", "blk": "user", "ext2fs": "user", "input": "user",
                            "display": "user"}
    assert "svc-linux" not in [i.name for i in kernel.items] and "svc-linux" in [i.name for i in user.items]


def test_busybox_goes_in_with_its_applets_linked_and_never_over_a_program(tmp_path):
    (tmp_path / ".cache" / "busybox").mkdir(parents=True)
    (tmp_path / ".cache" / "busybox" / "busybox").write_bytes(b"\x7fELF busybox")
    (tmp_path / "build" / "linux" / "bin").mkdir(parents=True)
    (tmp_path / "build" / "linux" / "bin" / "cat").write_bytes(b"\x7fELF our cat")
    (tmp_path / "tests" / "linux" / "root").mkdir(parents=True)
    found = {name: (mode, at, data) for name, mode, at, data in entries(rootfs.build("sh\n", (), tmp_path))}
    mode, at, data = found["bin/busybox"]
    assert data == b"\x7fELF busybox" and mode & 0o111 and at % 4096 == 0
    assert stat.S_ISLNK(found["bin/sh"][0]) and found["bin/sh"][2] == b"busybox"
    assert found["bin/cat"][2] == b"\x7fELF our cat"        # a program of the tree wins over an applet


def test_no_busybox_no_shell(tmp_path):
    (tmp_path / "build" / "linux" / "bin").mkdir(parents=True)
    (tmp_path / "tests" / "linux" / "root").mkdir(parents=True)
    names = {name for name, _m, _a, _d in entries(rootfs.build("sh\n", (), tmp_path))}
    assert "bin/busybox" not in names and "bin/sh" not in names


def test_the_archive_has_the_c_libraries_for_dynamic_programs(tmp_path, monkeypatch):
    lib = tmp_path / "host-libc.so.6"
    lib.write_bytes(b"\x7fELF libc")
    monkeypatch.setattr(rootfs, "SHARED_LIBS", {"lib/aarch64-linux-gnu/libc.so.6": lib,
                                                "lib/ld-musl-aarch64.so.1": tmp_path / "absent"})
    (tmp_path / "build" / "linux" / "bin").mkdir(parents=True)
    (tmp_path / "tests" / "linux" / "root").mkdir(parents=True)
    found = {name: (mode, at, data) for name, mode, at, data in entries(rootfs.build("sh\n", (), tmp_path))}
    mode, at, data = found["lib/aarch64-linux-gnu/libc.so.6"]
    assert data == b"\x7fELF libc" and mode & 0o111 and at % 4096 == 0     # mapped in place
    assert stat.S_ISDIR(found["lib/aarch64-linux-gnu"][0])
    assert "lib/ld-musl-aarch64.so.1" not in found      # a library the host lacks is left out


def test_packages_go_in_with_links_kept_docs_pruned_and_libraries_on_pages(tmp_path):
    (tmp_path / ".cache" / "busybox").mkdir(parents=True)
    (tmp_path / ".cache" / "busybox" / "busybox").write_bytes(b"\x7fELF busybox")
    (tmp_path / "build" / "linux" / "bin").mkdir(parents=True)
    (tmp_path / "tests" / "linux" / "root").mkdir(parents=True)
    (tmp_path / "tests" / "apps").mkdir(parents=True)
    (tmp_path / "tests" / "apps" / "task.sh").write_text("echo task\n")
    pkg = debian.tree("dash", tmp_path)
    (pkg / "bin").mkdir(parents=True)
    (pkg / "bin" / "dash").write_bytes(b"\x7fELF dash")
    (pkg / "bin" / "dash").chmod(0o755)
    (pkg / "bin" / "sh").symlink_to("dash")
    (pkg / "usr" / "lib").mkdir(parents=True)
    (pkg / "usr" / "lib" / "libx.so.1").write_bytes(b"\x7fELF lib")        # not executable, as Debian ships it
    (pkg / "usr" / "share" / "doc" / "dash").mkdir(parents=True)
    (pkg / "usr" / "share" / "doc" / "dash" / "copyright").write_text("c")
    (pkg / "VERSION").write_text("dash_1_arm64\n")
    found = {name: (mode, at, data) for name, mode, at, data in entries(rootfs.build("sh\n", (), tmp_path, ["dash"]))}
    assert stat.S_ISLNK(found["bin/sh"][0]) and found["bin/sh"][2] == b"dash"     # the package's sh, not busybox's
    assert found["bin/dash"][2] == b"\x7fELF dash" and found["bin/dash"][0] & 0o111
    mode, at, data = found["usr/lib/libx.so.1"]
    assert data == b"\x7fELF lib" and not mode & 0o111 and at % 4096 == 0
    assert not any(name.startswith("usr/share/doc") for name in found) and "VERSION" not in found
    assert found["apps/task.sh"][2] == b"echo task\n"
    assert stat.S_ISLNK(found["bin/cat"][0]) and found["bin/cat"][2] == b"busybox"
    with pytest.raises(debian.DebianError, match="setup"):
        rootfs.build("sh\n", (), tmp_path, ["jq"])


def test_package_sets_of_cases():
    with pytest.raises(cases.CaseError, match="package set"):
        cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\noracle = ["x"]\npackages = "all"\n')
    with pytest.raises(cases.CaseError, match="oracle"):
        cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\npackages = "apps"\n')
    (case,) = cases.parse_cases('[[case]]\nname = "a"\nsystem = "linux-user"\noracle = ["x"]\npackages = "apps"\n')
    assert case.packages == "apps"


def test_the_apps_set_is_a_dependency_closure_without_the_package_manager(monkeypatch):
    class Done:
        returncode, stderr = 0, ""
        stdout = "sqlite3:arm64\n  Depends: libc6:arm64\nlibc6:arm64\n<virtual:arm64>\ndpkg:arm64\nperl:amd64\n"
    monkeypatch.setattr(debian.subprocess, "run", lambda *a, **k: Done())
    assert debian.closure(["sqlite3"]) == ["libc6", "sqlite3"]


def test_the_apps_set_is_refused_with_a_message_before_setup(tmp_path):
    with pytest.raises(debian.DebianError, match="run `./petrel setup`"):
        debian.apps_ready(tmp_path)
    with pytest.raises(ValueError, match="run `./petrel setup`"):
        oracle.write_archive("x", ["hello"], tmp_path, "apps")
    (debian.cache_dir(tmp_path)).mkdir(parents=True)
    listed = list(debian.APPS + debian.NET_APPS) + ["libjq1"]
    (debian.cache_dir(tmp_path) / debian.APPS_LIST).write_text("\n".join(listed[1:]) + "\n")
    for name in listed:
        (debian.tree(name, tmp_path)).mkdir(parents=True)
        (debian.tree(name, tmp_path) / "VERSION").write_text(f"{name}_1_arm64\n")
    with pytest.raises(debian.DebianError):
        debian.apps_ready(tmp_path)                     # a package of APPS not in the list: fetched again
    (debian.cache_dir(tmp_path) / debian.APPS_LIST).write_text("\n".join(listed) + "\n")
    (debian.tree("libjq1", tmp_path) / "VERSION").unlink()
    with pytest.raises(debian.DebianError):
        debian.apps_ready(tmp_path)                     # listed, not unpacked
    (debian.tree("libjq1", tmp_path) / "VERSION").write_text("libjq1_1_arm64\n")
    assert debian.apps_ready(tmp_path) == listed


def test_run_apps_goes_without_image(capsys):
    from petrel import cli
    assert cli.main(["run", "--apps", "--image", "x.pbi"]) == 2
    assert "--apps goes without --image" in capsys.readouterr().err


# apt-cache depends (not recursive) as the bench set's walk reads it: the
# first of alternatives, a virtual package's first provider, and nothing
# that an architecture "all" package satisfies.
APT_DEPENDS = """sox:arm64
 |Depends: libsox-fmt-alsa:arm64
  Depends: libsox-fmt-pulse:arm64
  Depends: libsox3:arm64
  Depends: libc6:arm64
libgs10:arm64
  Depends: <libgs10-common:arm64>
    libgs10-common
  Depends: libcups2:arm64
  Depends: <debconf-2.0:arm64>
    cdebconf:arm64
    debconf
  Breaks: libgs9:arm64
  Depends: fontconfig-config:arm64
    fontconfig-config
<iamerican:arm64>
lame:arm64
  PreDepends: libtinfo6:arm64
 |Depends: <libfoo:arm64>
    libfoo1:arm64
  Depends: libbar:arm64
"""


def test_the_bench_set_takes_first_choices_of_arm64_packages():
    assert debian.first_choices(APT_DEPENDS) == {"libsox-fmt-alsa", "libsox3", "libc6", "libcups2", "cdebconf",
                                                 "libtinfo6", "libfoo1"}


def test_the_bench_set_walk_leaves_out_what_only_a_skipped_package_needs(monkeypatch):
    graph = {"sox": ["libsox-fmt-alsa", "libsox3"], "libsox-fmt-alsa": ["libasound2"], "libsox3": ["libc6"],
             "libc6": [], "libasound2": ["libc6"]}
    asked = []

    class Done:
        returncode, stderr = 0, ""

        def __init__(self, argv):
            names = [a.removesuffix(":arm64") for a in argv if a.endswith(":arm64")]
            asked.append(names)
            self.stdout = "".join(f"{n}:arm64\n" + "".join(f"  Depends: {d}:arm64\n" for d in graph[n])
                                  for n in names)
    monkeypatch.setattr(debian.subprocess, "run", lambda argv, **k: Done(argv))
    assert debian.walk(["sox"], skip=("libsox-fmt-alsa",)) == ["libc6", "libsox3", "sox"]
    assert asked == [["sox"], ["libsox3"], ["libc6"]]                  # one apt-cache call a level


def test_the_bench_set_is_refused_before_setup_and_fetches_data_by_bare_name(tmp_path, monkeypatch):
    with pytest.raises(debian.DebianError, match="application benchmarks.*run `./petrel setup`"):
        debian.bench_ready(tmp_path)
    assert set(debian.bench_missing(tmp_path)) == set(debian.BENCH_APPS + debian.BENCH_DATA)
    fetched = []
    monkeypatch.setattr(debian, "walk", lambda roots: list(roots) + ["libc6"])
    monkeypatch.setattr(debian, "fetch", lambda repo, say, packages: fetched.extend(packages))
    debian.cache_dir(tmp_path).mkdir(parents=True)
    debian.fetch_bench(tmp_path, say=lambda m: None)
    assert fetched == [*debian.BENCH_APPS, "libc6", *debian.BENCH_DATA]
    assert debian.listed(debian.BENCH_LIST, tmp_path) == fetched
    for p in fetched:
        (debian.tree(p, tmp_path)).mkdir(parents=True)
        (debian.tree(p, tmp_path) / "VERSION").write_text(f"{p}_1\n")
    assert debian.bench_ready(tmp_path) == fetched
    argvs = []

    class Fail:
        returncode, stderr = 1, "no"
    monkeypatch.setattr(debian.subprocess, "run", lambda argv, **k: argvs.append(argv) or Fail())
    for name in ("iamerican", "lame"):
        with pytest.raises(debian.DebianError):
            debian.unpack(name, tmp_path / "x")
    assert argvs == [["apt-get", "download", "iamerican"], ["apt-get", "download", "lame:arm64"]]


def test_the_bench_archive_leaves_out_the_fonts_other_copies(tmp_path):
    top = debian.tree("fonts-urw-base35", tmp_path)
    for rel in ("usr/share/fonts/type1/urw-base35/N.t1", "usr/share/fonts/X11/Type1/N.pfb",
                "usr/share/fonts/opentype/urw-base35/N.otf", "usr/share/doc/fonts-urw-base35/copyright"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("x")
    (top / "VERSION").write_text("fonts_1\n")
    files, _, _ = debian.contents(["fonts-urw-base35"], tmp_path, debian.BENCH_PRUNED)
    assert list(files) == ["usr/share/fonts/type1/urw-base35/N.t1"]
    files, _, _ = debian.contents(["fonts-urw-base35"], tmp_path)
    assert len(files) == 3
