"""Device tree fixtures: each mutation changes what it says, and the strict
validator in fdt_check.py accepts good.dtb and rejects every broken blob."""
import shutil
import struct

import pytest

import fdt_check
from conftest import REPO
from petrel import dtbfixtures as fx

SAMPLE_DTS = """/dts-v1/;
/ {
\t#address-cells = <2>;
\t#size-cells = <2>;
\tcompatible = "linux,dummy-virt";
\tmemory@40000000 {
\t\tdevice_type = "memory";
\t\treg = <0x0 0x40000000 0x0 0x20000000>;
\t};
\tchosen {
\t\tbootargs = "ktest";
\t};
};
"""

pytestmark = pytest.mark.skipif(not shutil.which("dtc"), reason="needs dtc (./petrel setup)")


@pytest.fixture(scope="module", params=["sample", "repository"])
def fixtures(request, tmp_path_factory):
    """Generated fixtures, from our sample .dts and from tests/guest/dtb/good.dts."""
    out = tmp_path_factory.mktemp(f"dtb-{request.param}")
    source = REPO / "tests" / "guest" / "dtb" / "good.dts"
    if request.param == "sample":
        source = out / "sample.dts"
        source.write_text(SAMPLE_DTS)
    elif not source.exists():
        pytest.skip("tests/guest/dtb/good.dts not written yet")
    manifest = fx.generate(out, source)
    return out, dict(manifest)


# Returns (good blob, header of good, blob of variant `name`, its header).
def pair(fixtures, name):
    out, _ = fixtures
    good, bad = (out / "good.dtb").read_bytes(), (out / f"{name}.dtb").read_bytes()
    return good, fx.read_header(good), bad, fx.read_header(bad) if len(bad) >= 40 else None


def test_manifest_lists_every_file_once(fixtures):
    out, manifest = fixtures
    assert manifest["good.dtb"] == "ok"
    expected = {f"{n}.dtb" for n in fx.MUTATIONS} | {"deep-nesting.dtb"}
    assert {n for n, e in manifest.items() if e == "bad"} == expected
    lines = (out / "manifest.txt").read_text().splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(manifest)
    assert all((out / name).exists() for name in manifest)


def test_validator_accepts_good_and_rejects_every_bad_one(fixtures):
    out, manifest = fixtures
    fdt_check.check((out / "good.dtb").read_bytes())
    for name, expected in manifest.items():
        if expected == "bad":
            with pytest.raises(fdt_check.FdtError):
                fdt_check.check((out / name).read_bytes())


@pytest.mark.parametrize("name, field, value, message", [
    ("bad-magic", "magic", 0xFEEDD00D, "bad magic"),
    ("bad-version", "version", 1, "unsupported version"),
    ("totalsize-huge", "totalsize", 0xFFFFFF00, "totalsize"),
])
def test_header_mutations(fixtures, name, field, value, message):
    good, gh, bad, bh = pair(fixtures, name)
    assert bh[field] == value and gh[field] != value
    assert len(bad) == len(good)
    with pytest.raises(fdt_check.FdtError, match=message):
        fdt_check.check(bad)


def test_bad_version_lowers_last_compatible_too(fixtures):
    _, _, _, bh = pair(fixtures, "bad-version")
    assert bh["last_comp_version"] == 1


def test_truncated_keeps_the_header_totalsize(fixtures):
    good, gh, bad, bh = pair(fixtures, "truncated")
    assert len(bad) == len(good) // 2 and bh["totalsize"] == gh["totalsize"] == len(good)
    with pytest.raises(fdt_check.FdtError, match="totalsize"):
        fdt_check.check(bad)


def test_block_offset_mutations(fixtures):
    _, gh, _, bh = pair(fixtures, "struct-oob")
    assert bh["off_dt_struct"] > bh["totalsize"] == gh["totalsize"]
    _, gh, bad, bh = pair(fixtures, "strings-oob")
    assert bh["off_dt_strings"] + bh["size_dt_strings"] > bh["totalsize"]
    with pytest.raises(fdt_check.FdtError, match="strings block"):
        fdt_check.check(bad)


def test_prop_len_oob_sets_first_property_length(fixtures):
    good, _, bad, _ = pair(fixtures, "prop-len-oob")
    at = fx.find_token(good, fx.PROP)
    assert struct.unpack_from(">I", bad, at + 4)[0] == 0x7FFFFFFF
    assert bad[:at + 4] == good[:at + 4] and bad[at + 8:] == good[at + 8:]
    with pytest.raises(fdt_check.FdtError, match="runs past"):
        fdt_check.check(bad)


def test_name_unterminated_cuts_into_the_last_name(fixtures):
    good, gh, bad, bh = pair(fixtures, "name-unterminated")
    assert bh["size_dt_strings"] < gh["size_dt_strings"]
    block = bad[bh["off_dt_strings"] : bh["off_dt_strings"] + bh["size_dt_strings"]]
    assert not block.endswith(b"\0")
    with pytest.raises(fdt_check.FdtError, match="not NUL-terminated|outside the strings"):
        fdt_check.check(bad)


@pytest.mark.parametrize("name, token, message", [
    ("bad-token", fx.UNDEFINED_TOKEN, "unknown token"),
    ("early-end", fx.END, "node\\(s\\) open"),
])
def test_token_mutations_replace_the_first_property(fixtures, name, token, message):
    good, _, bad, _ = pair(fixtures, name)
    at = fx.find_token(good, fx.PROP)
    assert struct.unpack_from(">I", bad, at)[0] == token
    with pytest.raises(fdt_check.FdtError, match=message):
        fdt_check.check(bad)


def test_no_end_replaces_fdt_end_with_nop(fixtures):
    good, _, bad, _ = pair(fixtures, "no-end")
    at = fx.find_token(good, fx.END)
    assert struct.unpack_from(">I", bad, at)[0] == fx.NOP
    with pytest.raises(ValueError, match="no FDT_END"):
        list(fx.tokens(bad))
    with pytest.raises(fdt_check.FdtError, match="without FDT_END"):
        fdt_check.check(bad)


def test_misaligned_struct_moves_blocks_consistently(fixtures):
    good, gh, bad, bh = pair(fixtures, "misaligned-struct")
    assert bh["off_dt_struct"] == gh["off_dt_struct"] + 2 and bh["off_dt_struct"] % 4 == 2
    assert bh["totalsize"] == gh["totalsize"] + 2 == len(bad)
    s = gh["off_dt_struct"]
    assert bad[s + 2 : s + 2 + gh["size_dt_struct"]] == good[s : s + gh["size_dt_struct"]]
    with pytest.raises(fdt_check.FdtError, match="misaligned"):
        fdt_check.check(bad)


def test_deep_nesting_is_100_levels(fixtures):
    out, _ = fixtures
    blob = (out / "deep-nesting.dtb").read_bytes()
    depth = deepest = 0
    for _, token in fx.tokens(blob):
        depth += {fx.BEGIN_NODE: 1, fx.END_NODE: -1}.get(token, 0)
        deepest = max(deepest, depth)
    assert deepest == 101  # the root plus 100 nested nodes
    with pytest.raises(fdt_check.FdtError, match="deeper than 64"):
        fdt_check.check(blob)


def test_validator_rejects_more_hand_made_damage(fixtures):
    out, _ = fixtures
    good = (out / "good.dtb").read_bytes()
    with pytest.raises(fdt_check.FdtError, match="shorter"):
        fdt_check.check(good[:20])
    end_node = fx.find_token(good, fx.END_NODE)
    with pytest.raises(fdt_check.FdtError, match="unknown token 0x102"):
        fdt_check.check(fx.put_u32(good, end_node, fx.END_NODE + 0x100))
