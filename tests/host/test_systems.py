"""System descriptions (systems/*.toml) and their packing into boot images."""
import tomllib
from pathlib import Path

import pytest

from petrel import bootimage, paths, systems

GOOD = """
[system]
name = "demo"

[[program]]
name = "root"
binary = "user/root"

[[program]]
name = "hello"
binary = "user/hello"

[[file]]
name = "etc/motd"
path = "motd.txt"

[[file]]
name = "fixture"
path = "build/test/data.bin"
"""


# Writes a fake repository with systems/demo.toml and built user programs.
@pytest.fixture
def repo(tmp_path, elf):
    (tmp_path / "systems").mkdir()
    (tmp_path / "build" / "user").mkdir(parents=True)
    (tmp_path / "build" / "test").mkdir()
    (tmp_path / "build" / "user" / "root.elf").write_bytes(elf(b"root"))
    (tmp_path / "build" / "user" / "hello.elf").write_bytes(elf(b"hello"))
    (tmp_path / "motd.txt").write_text("welcome\n")
    (tmp_path / "build" / "test" / "data.bin").write_bytes(b"\x01\x02")
    return tmp_path


# Writes systems/demo.toml with `text` and returns its path.
def write(repo, text):
    path = repo / "systems" / "demo.toml"
    path.write_text(text)
    return path


def test_pack_system_writes_programs_then_files(repo, elf):
    out = systems.pack_system(write(repo, GOOD), repo)
    assert out == repo / "build" / "images" / "demo.pbi"
    entries = bootimage.unpack(out.read_bytes())
    assert [(e.name, e.flags) for e in entries] == [
        ("root", 1), ("hello", 1), ("etc/motd", 0), ("fixture", 0), ("system.manifest", 0)]
    assert entries[1].data == elf(b"hello")
    assert entries[2].data == b"welcome\n" and entries[3].data == b"\x01\x02"
    assert entries[4].data.decode().splitlines()[1:] == ["program hello 100 - 67108864:256:511:64 -"]


def test_limits_default_and_explicit(repo, elf):
    text = GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\nmemory = "2M"\nthreads = 8\n'
                        'handles = 100000\nspaces = 0')
    system = systems.load_system(write(repo, text), repo)
    assert system.manifest().splitlines()[1:] == ["program hello 100 - 2097152:8:100000:0 -"]
    for bad, message in (("threads = -1", "'threads' must be a number from 0"),
                         ("handles = 262144", "'handles' must be a number from 0 .no limit. to 262143"),
                         ("spaces = true", "'spaces' must be a number"), ('memory = "3X"', "'memory' must be")):
        text = GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\n' + bad)
        with pytest.raises(systems.SystemConfigError, match=message):
            systems.load_system(write(repo, text), repo)


def test_system_name_defaults_to_file_stem(repo):
    path = write(repo, '[[program]]\nname = "root"\nbinary = "user/root"\n')
    assert systems.load_system(path, repo).name == "demo"


@pytest.mark.parametrize("text, message", [
    (GOOD + "\n[extra]\n", "systems/demo.toml: unknown key 'extra'"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\nprio = 3'),
     r"\[\[program\]\] #2: unknown key 'prio'"),
    (GOOD.replace('binary = "user/root"', 'binary = "user/root"\npriority = 3'),
     r"\[\[program\]\] #1: unknown key 'priority'"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\npriority = 300'), "key 'priority' must be"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\ncpu = 9'), "key 'cpu' must be"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\nmemory = "4Q"'), "key 'memory' must be"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\nmemory = 1000'), "multiple of 4 KiB"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\ngrants = ["nope:send"]'),
     "'nope:send' names no \\[\\[endpoint\\]\\]"),
    (GOOD + '[[endpoint]]\nname = "ep"\n', "endpoint 'ep' is granted to no program"),
    (GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\ngrants = ["ep:write"]') +
     '[[endpoint]]\nname = "ep"\n', "must end in :send, :recv or :both"),
    (GOOD + '[[endpoint]]\nname = "ep"\n[[endpoint]]\nname = "ep"\n', "declared twice"),
    (GOOD.replace('name = "demo"', 'name = "demo"\nversion = 1'), r"\[system\]: unknown key 'version'"),
    (GOOD.replace('path = "motd.txt"', 'path = "motd.txt"\nmode = 1'), r"\[\[file\]\] #1: unknown key 'mode'"),
    (GOOD.replace('name = "hello"', 'name = "root"'), "key 'name': 'root' is used twice"),
    (GOOD.replace('binary = "user/hello"', ''), "program 'hello': key 'binary'"),
    (GOOD.replace('name = "hello"', 'name = "he llo"'), "key 'name'.*only letters"),
    ('[[file]]\nname = "x"\npath = "motd.txt"\n', "first is the root task"),
    ("[[program]\n", "systems/demo.toml"),
])
def test_load_errors_name_file_and_key(repo, text, message):
    with pytest.raises(systems.SystemConfigError, match=message):
        systems.pack_system(write(repo, text), repo)


def test_missing_binary_and_file_are_reported(repo):
    (repo / "build" / "user" / "hello.elf").unlink()
    with pytest.raises(systems.SystemConfigError, match="'hello' key 'binary': build/user/hello.elf does not exist"
                       r".*under user/, tests/programs/ or bench/programs/\?"):
        systems.pack_system(write(repo, GOOD), repo)
    (repo / "motd.txt").unlink()
    with pytest.raises(systems.SystemConfigError, match="'etc/motd' key 'path': motd.txt"):
        systems.pack_system(write(repo, GOOD.replace("user/hello", "user/root")), repo)


def test_manifest_lists_endpoints_and_programs(repo):
    text = GOOD.replace('binary = "user/hello"', 'binary = "user/hello"\npriority = 90\ncpu = 1\n'
                        'args = "count=2"\ngrants = ["ep:send", "log:both"]')
    text += '[[endpoint]]\nname = "ep"\n[[endpoint]]\nname = "log"\n'
    system = systems.load_system(write(repo, text), repo)
    assert system.manifest().splitlines()[1:] == [
        "endpoint ep", "endpoint log", "program hello 90 1 67108864:256:511:64 ep:send,log:both count=2"]


def test_repository_demo_system_is_valid():
    from conftest import REPO
    system = systems.load_system(REPO / "systems" / "demo.toml", REPO)
    assert system.name == "demo"
    assert system.items[0].name == "root"
    assert system.items[0].path == REPO / "build" / "user" / "root.elf"


# A program's binary names its source directory; its last component names
# the ELF the Makefile builds (build/user/<name>.elf, wherever the source is).
def test_every_binary_names_a_program_directory():
    from conftest import REPO
    for source in sorted((REPO / "systems").glob("*.toml")):
        system = systems.load_system(source, REPO)
        doc = tomllib.loads(source.read_text())
        for prog, item in zip(doc.get("program", []), system.items):
            binary = prog["binary"]
            assert (REPO / binary / "main.c").is_file(), f"{source.name}: {binary} has no main.c"
            assert item.path == REPO / "build" / "user" / f"{Path(binary).name}.elf"


def test_services_in_the_manifest_and_image():
    from conftest import REPO
    kernel = systems.load_system(REPO / "systems" / "demo.toml", REPO)
    user = systems.load_system(REPO / "systems" / "demo-user.toml", REPO)
    assert "service noop noop 1 kernel 120 - - 0 - 67108864:256:511:64" in kernel.manifest().splitlines()
    assert "service noop noop 1 user 120 - - 0 - 67108864:256:511:64" in user.manifest().splitlines()
    assert "svc-noop" not in [i.name for i in kernel.items]
    assert "svc-noop" in [i.name for i in user.items]
    # The only difference between the two descriptions is the placement.
    a = [x for x in (REPO / "systems" / "demo.toml").read_text().splitlines() if not x.startswith("#")]
    b = [x for x in (REPO / "systems" / "demo-user.toml").read_text().splitlines() if not x.startswith("#")]
    assert len(a) == len(b)
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    assert changed == [('name = "demo"', 'name = "demo-user"'), ('placement = "kernel"', 'placement = "user"')]


@pytest.mark.parametrize("service, message", [
    ('name = "s"\ninterface = "nope"\nplacement = "user"', "needs idl/nope.toml"),
    ('name = "s"\ninterface = "noop"\nplacement = "both"', "'placement' must be"),
    ('name = "s"\ninterface = "noop"\nplacement = "user"\npriority = 0', "'priority' must be"),
    ('name = "s"\ninterface = "noop"\nplacement = "user"\ncolour = 1', "unknown key 'colour'"),
    ('name = "s"\ninterface = "noop"\nplacement = "user"\ncalls = ["ghost"]', "'ghost' is not a \\[\\[service\\]\\]"),
    ('name = "s"\ninterface = "noop"\nplacement = "user"\ncalls = ["s"]', "cycle: s -> s"),
    ('name = "s"\ninterface = "noop"\nplacement = "kernel"\ncalls = ["s"]', "cycle: s -> s"),
    ('name = "s"\ninterface = "noop"\nplacement = "user"\ndevices = ["arm;pl011"]', "without spaces or ';'"),
    ('name = "s"\ninterface = "noop"\nplacement = "user"\nbootfiles = "yes"', "'bootfiles' must be"),
])
def test_bad_services_are_refused(service, message):
    from conftest import REPO
    import tempfile, pathlib
    text = (REPO / "systems" / "demo.toml").read_text() + "\n[[service]]\n" + service + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "x.toml"
        path.write_text(text)
        with pytest.raises(systems.SystemConfigError, match=message):
            systems.load_system(path, REPO)


def assert_refused(text, message):
    """A system description `text` is refused with `message`."""
    from conftest import REPO
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "x.toml"
        path.write_text(text)
        with pytest.raises(systems.SystemConfigError, match=message):
            systems.load_system(path, REPO)


def test_a_device_goes_to_one_service_and_calls_do_not_cycle():
    from conftest import REPO
    base = (REPO / "systems" / "demo.toml").read_text()
    two = ('\n[[service]]\nname = "a"\ninterface = "console"\nplacement = "user"\ndevices = ["arm,pl011"]\n'
           '\n[[service]]\nname = "b"\ninterface = "console"\nplacement = "user"\ndevices = ["arm,pl011"]\n')
    loop = ('\n[[service]]\nname = "a"\ninterface = "noop"\nplacement = "user"\ncalls = ["b"]\n'
            '\n[[service]]\nname = "b"\ninterface = "noop"\nplacement = "user"\ncalls = ["a"]\n')
    for extra, message in ((two, "'arm,pl011' is given to both 'a' and 'b'"), (loop, "cycle: a -> b -> a")):
        assert_refused(base + extra, message)
    console = systems.load_system(REPO / "systems" / "console-user.toml", REPO)
    assert "service console console 3 user 150 - arm,pl011 0 - 67108864:256:511:64" in console.manifest().splitlines()


def test_a_kernel_placed_service_calls_only_kernel_placed_ones():
    from conftest import REPO
    base = (REPO / "systems" / "demo.toml").read_text()

    def svc(name, placement, calls=()):
        listed = ", ".join(f'"{c}"' for c in calls)
        return (f'\n[[service]]\nname = "{name}"\ninterface = "noop"\nplacement = "{placement}"\n'
                f'calls = [{listed}]\n')
    user_callee = svc("b", "user") + svc("a", "kernel", ["b"])
    nine = "".join(svc(f"c{i}", "kernel") for i in range(9)) + svc("a", "kernel", [f"c{i}" for i in range(9)])
    for extra, message in ((user_callee, "'a' is placed in the kernel and calls b, placed in user space"),
                           (nine, "calls 9 services: at most 8")):
        assert_refused(base + extra, message)
    # Kernel to kernel, and user to either: accepted, the callee listed on
    # the caller's manifest line (the root task links them: service_link).
    both = systems.load_system(REPO / "systems" / "linux-kernel.toml", REPO)
    lines = both.manifest().splitlines()
    assert [x.split()[:4] for x in lines if x.startswith("service ")] == [
        ["service", "net", "net", "6"], ["service", "blk", "blk", "7"], ["service", "ext2fs", "ext2fs", "130"],
        ["service", "input", "input", "8"], ["service", "display", "display", "9"], ["service", "linux", "linux", "4"]]
    assert [x.split()[9] for x in lines if x.startswith("service ")] == ["-", "-", "blk", "-", "-",
                                                                         "net;blk;ext2fs;input;display"]


def test_a_program_calling_a_service_must_be_granted_one():
    from conftest import REPO
    import tempfile, pathlib
    hello = (REPO / "build" / "user" / "hello.elf").read_bytes()
    assert "noop_add" in systems.elf_functions(hello)
    assert systems.called_interfaces(hello, REPO) == {"noop": "noop_add"}
    text = (REPO / "systems" / "demo.toml").read_text().replace(
        'grants = ["greeting:send", "noop:send"]', 'grants = ["greeting:send"]')
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "x.toml"
        path.write_text(text)
        system = systems.load_system(path, REPO)
        with pytest.raises(systems.SystemConfigError, match="calls the noop interface .noop_add. but is granted no noop"):
            systems.read_entries(system, REPO)


def test_a_command_runs_in_the_default_systems_too():
    # `./petrel run --system default-kernel --exec CMD`: lxrun runs /etc/lxrun
    # (where the command goes) instead of the shell's /etc/shell, and keeps
    # its other arguments (the Binder devices, and the disk at /data first).
    from petrel import linuxrun
    for name in ("default", "default-kernel", "linux-user"):
        desc = systems.load_system(paths.REPO / "systems" / f"{name}.toml")
        lxrun = [p for p in linuxrun.runs_lxrun_script(desc).programs if p.name == "lxrun"]
        assert lxrun and lxrun[0].args == "binder=hwbinder,vndbinder mount=/data script=/etc/lxrun"
    demo = systems.load_system(paths.REPO / "systems" / "demo.toml")
    with pytest.raises(ValueError, match="no lxrun program"):
        linuxrun.runs_lxrun_script(demo)


def test_the_service_managers_permissions_become_badges_and_a_policy():
    from conftest import REPO
    system = systems.load_system(REPO / "systems" / "object-rpc-user.toml", REPO)
    names = [p.name for p in system.programs]
    manifest = system.manifest().splitlines()
    # Each program's handle of the service manager is badged with its number.
    for i, name in enumerate(names, start=1):
        assert any(line.startswith(f"program {name} ") and f"servicemgr:send#{i}" in line for line in manifest)
    policy = system.policy().splitlines()
    cli = names.index("rpccli") + 1
    assert f"{cli} publish cli.obj" in policy and f"{cli} lookup rpc.a" in policy
    assert f"{names.index('rpc-hostile') + 1} publish *" in policy
    assert not any(line.startswith(f"{cli} publish rpc.") for line in policy)
    assert systems.POLICY in [i.name for i in system.items]
    manager = next(v for v in system.services if v.interface == "servicemgr")
    assert manager.bootfiles


@pytest.mark.parametrize("extra, message", [
    ('publish = ["a b"]', "key 'publish' must be a list of names"),
    ('lookup = ["' + "x" * 33 + '"]', "key 'lookup' must be a list of names"),
    ('publish = "rpc.a"', "key 'publish' must be a list of names"),
    ('lookup = ["rpc.a"]', "granted no servicemgr service"),
])
def test_bad_permissions_are_refused(extra, message):
    from conftest import REPO
    text = (REPO / "systems" / "demo.toml").read_text() + \
        '\n[[program]]\nname = "x"\nbinary = "user/hello"\n' + extra + "\n"
    assert_refused(text, message)


def test_the_service_manager_must_read_its_policy():
    from conftest import REPO
    text = (REPO / "systems" / "object-rpc-user.toml").read_text().replace(
        'placement = "user"', 'placement = "user"\nbootfiles = false', 1)
    assert_refused(text, "'bootfiles': the service manager reads its policy")


def test_a_service_manager_is_granted_for_sending_only():
    from conftest import REPO
    text = (REPO / "systems" / "object-rpc-user.toml").read_text().replace(
        'args = "name=rpc.b"\ngrants = ["servicemgr:send"]', 'args = "name=rpc.b"\ngrants = ["servicemgr:both"]', 1)
    assert "servicemgr:both" in text
    assert_refused(text, "a service manager is granted :send only")


def test_a_second_device_of_a_kind_is_numbered_and_driven_from_user_space():
    from conftest import REPO
    base = (REPO / "systems" / "demo.toml").read_text()

    def svc(name, devices, placement="user", interface="input"):
        listed = ", ".join(f'"{d}"' for d in devices)
        return (f'\n[[service]]\nname = "{name}"\ninterface = "{interface}"\nplacement = "{placement}"\n'
                f'devices = [{listed}]\n')
    for extra, message in (
            (svc("a", ["virtio-input"]) + svc("b", ["virtio-input#0"]), "given to both 'a' and 'b'"),
            (svc("a", ["virtio-input#1"], "kernel"), "drives the first device of its kind"),
            (svc("a", ["arm,pl011#1"]), "only a virtio type takes a number"),
            (svc("a", ["virtio-input#x"]), "only a virtio type takes a number"),
            (svc("a", ["virtio-input"], "kernel") + svc("b", [], "kernel"),
             "'a' and 'b' both place the input interface in the kernel")):
        assert_refused(base + extra, message)
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "x.toml"
        path.write_text(base + svc("keyboard", ["virtio-input"], "kernel") + svc("tablet", ["virtio-input#1"]))
        lines = systems.load_system(path, REPO).manifest().splitlines()
    assert [x.split()[7] for x in lines if x.startswith("service ")][-2:] == ["virtio-input", "virtio-input#1"]
