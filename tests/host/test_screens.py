"""Screendumps of guest cases (`screens` of cases.toml): when they are taken
among a case's key presses, how they are judged, the PNG beside each; and
the devices a system description asks of the machine."""
import struct
import zlib

import pytest

from petrel import cases, cli, qemu, systems, testrun
from petrel.qemu import Keys, Screendump


def case_of(body: str) -> cases.Case:
    return cases.parse_cases(f'[[case]]\nname = "c"\n{body}\n')[0]


def test_a_screen_is_taken_after_the_keys_entry_it_names():
    c = case_of('keys = [["a", "h"], ["b", "i"], ["c", "esc"]]\n'
                'screens = [["after b", "fbpattern", 2], ["at the start", "fbpattern", 0], ["end", "fbpattern"]]')
    shots = [Screendump("1"), Screendump("2"), Screendump("3")]
    assert c.steps(shots) == [("at the start", shots[1]), ("a", Keys("h")), ("b", Keys("i")),
                              ("after b", shots[0]), ("c", Keys("esc")), ("end", shots[2])]
    assert case_of('screens = [["drawn", "fbpattern"]]').steps([shots[0]]) == [("drawn", shots[0])]


@pytest.mark.parametrize("body", [
    'screens = [["x", "fbpattern", 1]]',                     # no keys entry 1
    'keys = [["a", "h"]]\nscreens = [["x", "fbpattern", 2]]',
    'keys = [["a", "h"]]\nscreens = [["x", "fbpattern", true]]',
    'keys = [["a", "h"]]\nscreens = [["x", "fbpattern", -1]]',
    'screens = [["x"]]',
])
def test_malformed_screens_are_refused(body):
    with pytest.raises(cases.CaseError, match="key 'screens' must be a list of"):
        case_of(body)


def test_screens_go_without_typing_and_name_known_pictures():
    with pytest.raises(cases.CaseError, match="goes without 'typing'"):
        case_of('typing = [["a", "b"]]\nscreens = [["x", "fbpattern"]]')
    with pytest.raises(cases.CaseError, match="unknown pattern 'nothing' .known: fbpattern, android-demo"):
        case_of('screens = [["x", "nothing"]]')


def ppm(path, w, h, px: bytes):
    path.write_bytes(b"P6\n%d %d\n255\n" % (w, h) + px)


def test_a_screendump_is_judged_and_written_beside_as_png(tmp_path):
    w, h = qemu.DISPLAY_SIZE
    want = cases.SCREEN_PATTERNS["fbpattern"]
    px = bytearray(b"".join(bytes(want(x, y, w, h)) for y in range(h) for x in range(w)))
    shot = tmp_path / "s.ppm"
    ppm(shot, w, h, bytes(px))
    assert testrun.judge_screen(shot, "fbpattern", tmp_path) == ""
    png = (tmp_path / "s.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    assert struct.unpack(">II", png[16:24]) == (w, h)
    idat = png.index(b"IDAT")
    length = struct.unpack(">I", png[idat - 4:idat])[0]
    rows = zlib.decompress(png[idat + 4:idat + 4 + length])
    assert rows == b"".join(b"\0" + bytes(px[3 * w * y:3 * w * (y + 1)]) for y in range(h))
    px[3 * (7 * w + 5)] ^= 1
    ppm(shot, w, h, bytes(px))
    assert "(5, 7) is" in testrun.judge_screen(shot, "fbpattern", tmp_path)
    assert "was taken" in testrun.judge_screen(tmp_path / "none.ppm", "fbpattern", tmp_path)


def test_the_demos_screen_is_judged_by_its_panels(tmp_path):
    w, h = qemu.DISPLAY_SIZE
    shot = tmp_path / "s.ppm"
    ppm(shot, w, h, bytes(3 * w * h))
    wrong = cases.android_demo_screen(w, h, bytes(3 * w * h))
    assert len(wrong) == 19 and wrong[0] == "(300, 400), the native panel's background, is (0, 0, 0), not (32, 48, 80)"
    assert testrun.judge_screen(shot, "android-demo", tmp_path).count(";") == 2    # (the first three)


def test_a_system_asks_for_the_machines_devices(tmp_path):
    from conftest import REPO
    demo = systems.load_system(REPO / "systems" / "android-demo.toml", REPO)
    assert demo.machine == ("keyboard", "tablet", "display")
    assert systems.load_system(REPO / "systems" / "demo.toml", REPO).machine == ()
    base = (REPO / "systems" / "demo.toml").read_text()
    for bad in ('machine = ["mouse"]', 'machine = "keyboard"'):
        path = tmp_path / "x.toml"
        path.write_text(base.replace('name = "demo"', f'name = "demo"\n{bad}'))
        with pytest.raises(systems.SystemConfigError, match="key 'machine' must be a list of keyboard, tablet"):
            systems.load_system(path, REPO)
    args = cli.make_parser().parse_args(["run", "--system", "android-demo"])
    m = cli.run_machine(args, False)
    assert m.keyboard and m.tablet and m.display
    plain = cli.run_machine(cli.make_parser().parse_args(["run", "--system", "demo", "--tablet"]), False)
    assert plain.tablet and not plain.keyboard and not plain.display
