"""Key presses on a virtio keyboard: `keys` of cases.toml, QMP's events, QEMU's argv and runs."""
import os
import shutil
import subprocess
import time

import pytest

from petrel import cases, linuxbase, oracle, qemu, trace
from petrel.qemu import Keys, Machine

# (it times key presses and holds)
pytestmark = pytest.mark.serial


# The event input-send-event takes for one key going down or up.
def key(name, down):
    return {"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": name}}}


# Returns the one case of a cases.toml [[case]] body.
def case_of(body: str) -> cases.Case:
    return cases.parse_cases(f'[[case]]\nname = "c"\n{body}\n')[0]


def test_a_plain_press_is_its_key_down_then_up():
    assert qemu.parse_keys("h") == [[key("h", True), key("h", False)]]


def test_a_chord_holds_its_keys_in_order_and_releases_them_in_reverse():
    assert qemu.press_events("shift-a") == [key("shift", True), key("a", True), key("a", False), key("shift", False)]
    assert [(e["data"]["key"]["data"], e["data"]["down"]) for e in qemu.press_events("ctrl-alt-delete")] == [
        ("ctrl", True), ("alt", True), ("delete", True), ("delete", False), ("alt", False), ("ctrl", False)]


def test_presses_are_separated_by_spaces_one_list_of_events_each():
    presses = qemu.parse_keys("h i  shift-a\tret 1 minus f12")
    assert [[e["data"]["key"]["data"] for e in p if e["data"]["down"]] for p in presses] == [
        ["h"], ["i"], ["shift", "a"], ["ret"], ["1"], ["minus"], ["f12"]]


@pytest.mark.parametrize("text, message", [
    ("shift-foo", "unknown key 'foo'"),
    ("A", "unknown key 'A'"),
    ("h f13", "unknown key 'f13'"),
    ("a--b", "joined by '-'"),
    ("shift-", "joined by '-'"),
    ("-", "joined by '-'"),
    ("a-a", "named twice"),
    ("", "no key presses"),
    ("  ", "no key presses"),
])
def test_unknown_names_and_malformed_presses_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        qemu.parse_keys(text)


def test_the_known_names_are_qemus_qkeycodes():
    assert len(set(qemu.QKEYS)) == len(qemu.QKEYS) == 26 + 10 + 34 + 12
    for name in ("ret", "spc", "shift_r", "bracket_left", "grave_accent", "pgdn", "caps_lock", "meta_l", "f1"):
        assert name in qemu.QKEYS


def test_a_case_with_keys_has_a_keyboard_and_key_steps():
    c = case_of('keys = [["ready", "h i shift-a ret"], ["again\\\\n", "esc"]]')
    assert c.keys == [["ready", "h i shift-a ret"], ["again\\n", "esc"]]
    assert c.machine().keyboard
    assert c.steps() == c.key_steps() == [("ready", Keys("h i shift-a ret")), ("again\\n", Keys("esc"))]
    plain = case_of('typing = [["/ # ", "ls\\n"]]')
    assert not plain.machine().keyboard and plain.steps() == [("/ # ", "ls\n")] and plain.key_steps() == []


@pytest.mark.parametrize("body, message", [
    ('keys = "h i"', "key 'keys' must be list"),
    ('keys = [["ready"]]', r"\[regex, keys\] pairs"),
    ('keys = [["ready", 1]]', r"\[regex, keys\] pairs"),
    ('keys = ["ready", "h"]', r"\[regex, keys\] pairs"),
    ('keys = [["(ready", "h"]]', "key 'keys': bad regex"),
    ('keys = [["ready", "shift-foo"]]', r"\(c\): key 'keys': 'shift-foo': unknown key 'foo'"),
    ('keys = [["ready", ""]]', "key 'keys': '': no key presses"),
    ('keys = [["ready", "h"]]\ntyping = [["x", "y"]]', "key 'keys' goes without 'typing'"),
    ('keys = [["ready", "h"]]\ninput = "y"', "key 'keys' goes without 'typing', 'input'"),
    ('keys = [["ready", "h"]]\ninput_after = "y"', "key 'keys' goes without"),
])
def test_malformed_keys_are_case_errors(body, message):
    with pytest.raises(cases.CaseError, match=message):
        case_of(body)


def test_the_keyboards_modules_may_be_loaded_on_linux():
    c = case_of('system = "linux-user"\noracle = ["keytest"]\nkeys = [["ready", "a"]]\n'
                'modules = ["virtio_mmio", "virtio_input", "evdev"]')
    assert c.modules == ["virtio_mmio", "virtio_input", "evdev"]
    with pytest.raises(cases.CaseError, match="only binder_linux, virtio_mmio, virtio_input, evdev"):
        case_of('system = "linux-user"\noracle = ["keytest"]\nmodules = ["usbhid"]')


def test_argv_adds_the_keyboard_after_the_other_devices_on_modern_virtio_mmio():
    argv = qemu.build_argv("k", None, Machine(keyboard=True))
    assert argv[-2:] == ["-device", "virtio-keyboard-device"]
    assert argv.count("-global") == 1 and argv[argv.index("-global") + 1] == "virtio-mmio.force-legacy=false"
    argv = qemu.build_argv("k", None, Machine(net="isolated", disk="d.img", keyboard=True))
    devices = [argv[n + 1] for n, a in enumerate(argv) if a == "-device"]
    assert devices == ["virtio-net-device,netdev=net0", "virtio-blk-device,drive=disk0", "virtio-keyboard-device"]
    assert argv.count("-global") == 1
    assert "virtio-keyboard-device" not in qemu.build_argv("k", None, Machine(net="isolated"))
    assert "-qmp" not in qemu.build_argv("k", None, Machine(keyboard=True))


def test_the_keyboard_is_part_of_the_machine_linux_runs_are_kept_by():
    assert repr(Machine()) != repr(Machine(keyboard=True))
    with pytest.raises(ValueError, match="keyboard"):
        qemu.check_machine(Machine(keyboard="yes"))


def test_linux_runs_press_the_same_keys_and_are_kept_by_their_steps(tmp_path, monkeypatch):
    runs = []
    monkeypatch.setattr(linuxbase, "present", lambda repo: True)
    monkeypatch.setattr(linuxbase, "image", lambda repo: tmp_path / "Image")
    monkeypatch.setattr(qemu, "run", lambda argv, timeout, steps=(): runs.append((argv, steps)) or (0, "lx: done"))
    archive = tmp_path / "keys.cpio"
    archive.write_bytes(b"one archive")
    machine = case_of('keys = [["ready", "h"]]').machine()
    for steps in ([("ready", Keys("h"))], [("ready", Keys("h"))], [("ready", Keys("i"))]):
        assert oracle.run_linux(archive, machine, tmp_path, 30, steps) == (0, "lx: done")
    assert [s for _argv, s in runs] == [[("ready", Keys("h"))], [("ready", Keys("i"))]]
    assert runs[0][0][-2:] == ["-device", "virtio-keyboard-device"]


def test_the_archive_brings_the_keyboards_modules_in_their_order(tmp_path, monkeypatch):
    from petrel import rootfs
    built = []
    monkeypatch.setattr(rootfs, "build", lambda text, adds, repo, chosen: built.append(adds) or b"cpio")
    oracle.write_archive("k", ["keytest"], tmp_path, modules=["virtio_mmio", "evdev", "virtio_input"])
    adds, = built
    cache = linuxbase.cache_dir(tmp_path)
    assert adds[:3] == [(cache / "virtio_mmio.ko", "/lib/petrel/virtio_mmio.ko"),
                        (cache / "evdev.ko", "/lib/petrel/evdev.ko"),
                        (cache / "virtio_input.ko", "/lib/petrel/virtio_input.ko")]
    assert adds[3][1] == "/etc/modules"
    assert adds[3][0].read_text() == "/lib/petrel/virtio_mmio.ko\n/lib/petrel/evdev.ko\n/lib/petrel/virtio_input.ko\n"


def test_the_baseline_is_not_present_without_the_keyboards_modules(tmp_path):
    cache = linuxbase.cache_dir(tmp_path)
    cache.mkdir(parents=True)
    for name in ["Image", "binder_linux.ko"] + [f"{m}.ko" for m in {**linuxbase.NET_MODULES, **linuxbase.CC_MODULES,
                                                                      **linuxbase.BLK_MODULES}]:
        (cache / name).write_bytes(b"x")
    assert not linuxbase.present(tmp_path)
    for m in linuxbase.INPUT_MODULES:
        (cache / f"{m}.ko").write_bytes(b"x")
    assert linuxbase.present(tmp_path)
    assert linuxbase.INPUT_MODULES == {"virtio_input": "drivers/virtio/virtio_input.ko",
                                       "evdev": "drivers/input/evdev.ko"}


needs_qemu = pytest.mark.skipif(not shutil.which(qemu.QEMU), reason="needs qemu-system-aarch64 (./petrel setup)")


@needs_qemu
def test_qemu_takes_every_known_press_on_its_keyboard_and_clicks_beside_a_second_qmp_socket(tmp_path):
    keys, other = str(tmp_path / "keys"), str(tmp_path / "trace")
    argv = [qemu.QEMU, "-nodefaults", "-M", "virt", "-cpu", "cortex-a53", "-display", "none", "-S",
            *qemu.tablet_argv(Machine(tablet=True)), *qemu.keyboard_argv(Machine(keyboard=True)),
            *qemu.qmp_argv(keys), *trace.qemu_argv(other)]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        q, q2 = qemu.qmp_connect(keys), qemu.qmp_connect(other)
        with pytest.raises(trace.TraceError, match="VM not running"):      # (-S: stopped)
            q.command("input-send-event", events=qemu.press_events("a"))
        assert q2.command("cont") == {}
        assert q.command("input-send-event", events=qemu.press_events("shift-a")) == {}
        for name in qemu.QKEYS:
            assert q.command("input-send-event", events=qemu.press_events(name)) == {}, name
        qemu.send_keys(q, Keys("h i shift-a ret 1 minus click@0,0 click@639,479 a"))
        with pytest.raises(trace.TraceError, match="nosuchkey"):
            q.command("input-send-event", events=[qemu.key_event("nosuchkey", True)])
        assert q2.command("query-status")["running"]
        q.command("quit")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# Runs `steps` on a fake kernel that prints "ready" and hangs; returns (result, the QMP
# socket's path, the presses sent).
def run_fake(fake_kernel, monkeypatch, steps, timeout=3.0):
    sockets, sent = [], []
    argv_of, send = qemu.qmp_argv, qemu.send_keys
    monkeypatch.setattr(qemu, "qmp_argv", lambda path: sockets.append(path) or argv_of(path))
    monkeypatch.setattr(qemu, "send_keys", lambda q, keys: sent.append(keys.text) or send(q, keys))
    kernel = fake_kernel("booted\nready\n", "hang")
    return qemu.run(qemu.build_argv(kernel, None, Machine(keyboard=True)), timeout, steps=steps), sockets, sent


@needs_qemu
def test_run_presses_keys_once_their_regex_appeared(fake_kernel, monkeypatch):
    steps = [("booted", "typed\n"), ("ready", Keys("shift-a ret")), ("", Keys("esc"))]
    (status, console), sockets, sent = run_fake(fake_kernel, monkeypatch, steps)
    assert status is None and console == "booted\nready\n"
    assert sent == ["shift-a ret", "esc"]
    assert len(sockets) == 1 and not os.path.exists(os.path.dirname(sockets[0]))
    assert not qemu._live


@needs_qemu
def test_a_press_qemu_refuses_stops_the_run_with_its_answer(fake_kernel, monkeypatch):
    monkeypatch.setattr(qemu, "QKEYS", qemu.QKEYS + ("nosuchkey",))
    start = time.monotonic()
    with pytest.raises(qemu.StepFailed, match=r"step 1, keys 'a nosuchkey': QMP input-send-event: .*nosuchkey") as err:
        run_fake(fake_kernel, monkeypatch, [("ready", Keys("a nosuchkey"))], timeout=30)
    assert err.value.console == "booted\nready\n"
    assert time.monotonic() - start < 15
    assert not qemu._live


# A repository with a root task and two kernels that print "ready": one
# powers off, one hangs.
@pytest.fixture
def keys_repo(tmp_path, fake_kernel, elf):
    (tmp_path / "build" / "user").mkdir(parents=True)
    (tmp_path / "build" / "user" / "root.elf").write_bytes(elf(b"root task"))
    for flavour, end in (("kernel", "psci"), ("kernel-hang", "hang")):
        (tmp_path / "build" / flavour).mkdir()
        (tmp_path / "build" / flavour / "kernel.bin").write_bytes(fake_kernel("ready\n", end).read_bytes())
    return tmp_path


@needs_qemu
def test_a_case_whose_press_qemu_refuses_fails_with_qemus_answer(keys_repo, monkeypatch):
    from petrel import testrun
    monkeypatch.setattr(qemu, "QKEYS", qemu.QKEYS + ("nosuchkey",))
    c, = cases.parse_cases('[[case]]\nname = "k"\nkernel = "kernel-hang"\ntimeout = 30\n'
                           'keys = [["ready", "nosuchkey"]]\nexpect = ["ready"]\n')
    result = testrun.run_case(c, keys_repo, {})
    assert result.failed and len(result.reasons) == 1
    assert "step 1, keys 'nosuchkey': QMP input-send-event:" in result.reasons[0]
    assert result.console == "ready\n" and result.seconds < 15 and "ready" in result.log.read_text()


@needs_qemu
def test_a_press_as_the_guest_powers_off_is_no_failure(keys_repo):
    from petrel import testrun
    c, = cases.parse_cases('[[case]]\nname = "k"\ntimeout = 10\nkeys = [["ready", "a b c"]]\nexpect = ["ready"]\n')
    result = testrun.run_case(c, keys_repo, {})
    assert not result.failed, result.reasons


@needs_qemu
def test_a_press_after_the_guest_powered_off_under_no_shutdown_is_no_failure(fake_kernel, monkeypatch):
    send = qemu.send_keys
    monkeypatch.setattr(qemu, "send_keys", lambda q, keys: time.sleep(0.5) or send(q, keys))
    argv = qemu.build_argv(fake_kernel("ready\n", "psci"), None, Machine(keyboard=True)) + ["-no-shutdown"]
    assert qemu.run(argv, 3, steps=[("ready", Keys("a"))]) == (None, "ready\n")   # (QEMU stays till killed)


def test_a_held_press_waits_between_its_downs_and_ups():
    downs, ups, hold = qemu.press_parts("shift-a:700")
    assert [(e["data"]["key"]["data"], e["data"]["down"]) for e in downs + ups] == [
        ("shift", True), ("a", True), ("a", False), ("shift", False)]
    assert hold == 0.7
    assert qemu.press_events("a:700") == qemu.press_events("a")
    assert len(qemu.parse_keys("h a:300 ret")) == 3
    for bad in ("a:", "a:0", "a:x", "a:10001", "a:-5"):
        try:
            qemu.press_parts(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was taken")


def test_a_click_moves_the_tablet_then_presses_and_releases_its_left_button():
    downs, ups = qemu.click_parts("click@100,50")
    assert downs == [{"type": "abs", "data": {"axis": "x", "value": 5120}},
                     {"type": "abs", "data": {"axis": "y", "value": 3414}},
                     {"type": "btn", "data": {"down": True, "button": "left"}}]
    assert ups == [{"type": "btn", "data": {"down": False, "button": "left"}}]
    # A guest scaling the axis to the screen (value * size / 0x8000) reads back each pixel.
    w, h = qemu.DISPLAY_SIZE
    for x in range(w):
        assert qemu.click_parts(f"click@{x},0")[0][0]["data"]["value"] * w // qemu.ABS_RANGE == x
    for y in range(h):
        v = qemu.click_parts(f"click@0,{y}")[0][1]["data"]["value"]
        assert v * h // qemu.ABS_RANGE == y and v < qemu.ABS_RANGE
    assert qemu.parse_keys("a click@0,0") == [qemu.press_events("a"), sum(qemu.click_parts("click@0,0"), [])]


@pytest.mark.parametrize("text", ["click@640,0", "click@0,480", "click@1", "click@-1,2", "click@1,2,3", "click@"])
def test_a_click_off_the_screen_or_malformed_is_refused(text):
    with pytest.raises(ValueError, match="a click is click@X,Y with X below 640 and Y below 480"):
        qemu.parse_keys(f"a {text}")


def test_clicks_give_the_machine_a_tablet_keys_a_keyboard():
    both = case_of('keys = [["ready", "a click@1,2"]]').machine()
    assert both.keyboard and both.tablet
    clicks = case_of('keys = [["ready", "click@1,2"], ["again", "click@3,4"]]').machine()
    assert clicks.tablet and not clicks.keyboard
    assert not case_of('keys = [["ready", "a"]]').machine().tablet
    with pytest.raises(cases.CaseError, match="click@700,1"):
        case_of('keys = [["ready", "click@700,1"]]')


def test_argv_puts_the_tablet_before_the_keyboard():
    argv = qemu.build_argv("k", None, Machine(keyboard=True, tablet=True, display=True))
    devices = [argv[n + 1] for n, a in enumerate(argv) if a == "-device"]
    assert devices == ["virtio-tablet-device", "virtio-keyboard-device", "virtio-gpu-device,xres=640,yres=480"]
    assert argv.count("-global") == 1
    with pytest.raises(ValueError, match="tablet"):
        qemu.check_machine(Machine(tablet=1))

