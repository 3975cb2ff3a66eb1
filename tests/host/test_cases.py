"""cases.toml: defaults, matrix expansion, placeholders and errors."""
import pytest

from petrel import cases

STEPS = {"dtb-fixtures": None}

MATRIX = """
[defaults]
timeout = 20
mem = "256M"

[[case]]
name = "boot"
expect = ["Petrel", "cores: {smp}", "gic: v{gic}", "cpu: {cpu} \\\\({cpu_short}\\\\)", "\\\\d{{2}}", "x\\\\d{2}"]
append = "name={name}"
matrix = { smp = [1, 4], cpu = ["cortex-a53", "cortex-a72"], gic = [2, 3] }
"""


def test_matrix_expands_every_combination_in_cpu_gic_smp_order():
    names = [c.name for c in cases.parse_cases(MATRIX, steps=STEPS)]
    assert names == [
        "boot-a53-gicv2-smp1", "boot-a53-gicv2-smp4", "boot-a53-gicv3-smp1", "boot-a53-gicv3-smp4",
        "boot-a72-gicv2-smp1", "boot-a72-gicv2-smp4", "boot-a72-gicv3-smp1", "boot-a72-gicv3-smp4"]


def test_matrix_except_leaves_out_the_combinations_it_names():
    text = MATRIX.replace("gic = [2, 3] }", 'gic = [2, 3], except = [{ cpu = "cortex-a72", smp = 4 }, { gic = 3, smp = 1 }] }')
    names = [c.name for c in cases.parse_cases(text, steps=STEPS)]
    assert names == ["boot-a53-gicv2-smp1", "boot-a53-gicv2-smp4", "boot-a53-gicv3-smp4", "boot-a72-gicv2-smp1"]
    for bad in ('[{ smp = 8 }]', '[{ system = "linux-user" }]', '[{}]', '{ smp = 4 }', '[{ smp = 1 }, { smp = 4 }]'):
        with pytest.raises(cases.CaseError, match="matrix key 'except'"):  # (the last: nothing left)
            cases.parse_cases(MATRIX.replace("gic = [2, 3] }", f"gic = [2, 3], except = {bad} }}"), steps=STEPS)


def test_placeholders_take_each_case_values_and_keep_regex_braces():
    case = cases.parse_cases(MATRIX, steps=STEPS)[7]
    assert (case.cpu, case.gic, case.smp) == ("cortex-a72", 3, 4)
    assert case.expect == ["Petrel", "cores: 4", "gic: v3", r"cpu: cortex-a72 \(a72\)", r"\d{2}", r"x\d{2}"]
    assert case.append == "name=boot-a72-gicv3-smp4"


def test_defaults_fill_in_and_cases_override():
    text = '[defaults]\ntimeout = 5\nsmp = 2\n[[case]]\nname = "a"\n[[case]]\nname = "b"\nsmp = 1\n'
    a, b = cases.parse_cases(text)
    assert (a.timeout, a.smp, b.smp) == (5, 2, 1)
    assert a.programs == ["root"] and a.kernel == "kernel" and a.expect_exit == 0
    assert a.machine().mem == "512M"


def test_full_case_keys_are_read():
    text = """[[case]]
name = "dtb/bad-magic"
kernel = "kernel-test"
programs = ["root", "fault"]
files = [["dtb/bad-magic.dtb", "build/test/dtb/bad-magic.dtb"]]
append = "ktest dtb=bad-magic"
tap = true
expect_exit = "nonzero"
pre = ["dtb-fixtures"]
icount = true
allow_panic = true
"""
    case, = cases.parse_cases(text, steps=STEPS)
    assert case.files == [["dtb/bad-magic.dtb", "build/test/dtb/bad-magic.dtb"]]
    assert case.slug() == "dtb_bad-magic" and case.tap and case.expect_exit == "nonzero"
    assert case.machine().icount and case.allow_panic


@pytest.mark.parametrize("text, message", [
    ('[[case]]\nname = "a"\ncolour = 1\n', "unknown key 'colour'"),
    ('[defaults]\nsmp = "two"\n', r"\[defaults\]: key 'smp' must be int"),
    ('[[case]]\nname = "a"\ngic = true\n', "key 'gic' must be int"),
    ('[[case]]\nexpect = []\n', "key 'name' is missing"),
    ('[[case]]\nname = "a"\n[[case]]\nname = "a"\n', "'a' is used twice"),
    ('[[case]]\nname = "a"\nmatrix = { smp = [1, 1] }\n', "'a-smp1' is used twice"),
    ('[[case]]\nname = "a"\nmatrix = { colour = [1] }\n', "matrix key 'colour'"),
    ('[[case]]\nname = "a"\nmatrix = { smp = [] }\n', "non-empty list"),
    ('[[case]]\nname = "a"\nmatrix = { smp = [1, "x"] }\n', r"\(a-smpx\): key 'smp' must be int"),
    ('[[case]]\nname = "a"\nexpect_exit = "sometimes"\n', "nonzero"),
    ('[[case]]\nname = "a"\ngic = 2\nsmp = 16\n', "at most 8"),
    ('[[case]]\nname = "a"\ncpu = "cortex-m4"\n', "cpu 'cortex-m4'"),
    ('[[case]]\nname = "a"\nexpect = ["(unclosed"]\n', "bad regex"),
    ('[[case]]\nname = "a"\npre = ["make-coffee"]\n', "unknown step 'make-coffee'"),
    ('[[case]]\nname = "a"\nfiles = [["x"]]\n', "image name, path"),
    ('[[case]]\nname = "a"\nprograms = []\nfiles = [["x", "y"]]\n', "root task"),
    ('[[case]]\nname = "../evil"\n', "bad name"),
    ('[[case]]\nname = "a"\nprograms = ["bad name"]\n', "only letters"),
    ('[[case]]\nname = "a"\ntimeout = 0\n', "positive"),
    ('[[cases]]\nname = "a"\n', "unknown top-level key 'cases'"),
    ('[defaults]\nname = "x"\n', "cannot have a default"),
    ('[[case]\n', "cases.toml"),
    ('[[case]]\nname = "a"\nsystem = "linux-user"\nk2 = true\nsmp = 2\noracle = ["hello"]\n', "'k2' goes without 'oracle'"),
    ('[[case]]\nname = "a"\nk2 = true\n', "core of its own"),
])
def test_errors_name_the_case_and_key(text, message):
    with pytest.raises(cases.CaseError, match=message):
        cases.parse_cases(text, steps=STEPS)


def test_select_by_substring_and_glob():
    all_cases = cases.parse_cases(MATRIX, steps=STEPS)
    assert len(cases.select(all_cases, "a72-gicv3")) == 2
    assert [c.name for c in cases.select(all_cases, "boot-*-smp4")][:1] == ["boot-a53-gicv2-smp4"]
    assert len(cases.select(all_cases, "boot-*-smp4")) == 4
    assert cases.select(all_cases, None) == all_cases
    assert cases.is_glob("a*") and not cases.is_glob("boot/a53")


def test_repository_cases_file_parses_if_present():
    from conftest import REPO
    from petrel import testrun
    path = REPO / "tests" / "guest" / "cases.toml"
    if not path.exists():
        pytest.skip("tests/guest/cases.toml not written yet")
    assert cases.load_cases(path, steps=testrun.PRE_STEPS)
