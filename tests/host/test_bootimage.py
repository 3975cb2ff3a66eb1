"""The PBI boot image format: packing, unpacking and every validation rule."""
import struct

import pytest

from petrel import bootimage
from petrel.bootimage import ENTRY, FLAG_EXEC, HEADER, PAGE


# Packs a root task and two data files, used by most tests below.
def sample(elf) -> bytes:
    return bootimage.pack([("root", elf(b"R" * 5000), FLAG_EXEC),
                           ("etc/motd", b"hello\n", 0),
                           ("empty", b"", 0)])


# Returns `image` with entry `index`'s fields replaced.
def patch_entry(image: bytes, index: int, **fields) -> bytes:
    at = HEADER.size + index * ENTRY.size
    name, offset, size, flags, reserved = ENTRY.unpack_from(image, at)
    values = {**dict(name=name, offset=offset, size=size, flags=flags, reserved=reserved), **fields}
    out = bytearray(image)
    ENTRY.pack_into(out, at, values["name"], values["offset"], values["size"], values["flags"],
                    values["reserved"])
    return bytes(out)


# Returns `image` with header fields replaced.
def patch_header(image: bytes, **fields) -> bytes:
    magic, version, count, total, reserved = HEADER.unpack_from(image, 0)
    values = {**dict(magic=magic, version=version, count=count, total=total, reserved=reserved), **fields}
    out = bytearray(image)
    HEADER.pack_into(out, 0, values["magic"], values["version"], values["count"], values["total"],
                     values["reserved"])
    return bytes(out)


def test_round_trip_keeps_names_data_and_order(elf):
    root = elf(b"R" * 5000)
    entries = bootimage.unpack(sample(elf))
    assert [e.name for e in entries] == ["root", "etc/motd", "empty"]
    assert entries[0].data == root and entries[0].flags == FLAG_EXEC
    assert entries[1].data == b"hello\n" and entries[1].flags == 0
    assert entries[2].size == 0


def test_layout_is_page_aligned_and_zero_padded(elf):
    image = sample(elf)
    magic, version, count, total, reserved = HEADER.unpack_from(image, 0)
    assert (magic, version, count, reserved) == (b"PETRELBI", 1, 3, 0)
    assert total == len(image) and total % PAGE == 0
    entries = bootimage.unpack(image)
    assert entries[0].offset == PAGE  # header + table fit in the first page
    assert entries[1].offset == 3 * PAGE  # root's 5000+ bytes take two pages
    assert image[entries[0].offset + entries[0].size : entries[1].offset] == bytes(
        entries[1].offset - entries[0].offset - entries[0].size)


def test_name_field_is_nul_padded(elf):
    image = sample(elf)
    assert image[HEADER.size : HEADER.size + 40] == b"root" + bytes(36)


@pytest.mark.parametrize("name, message", [
    ("", "non-empty"),
    ("a" * 40, "at most 39"),
    ("has space", "only letters"),
    ("tab\t", "only letters"),
    ("ünïcode", "only letters"),
])
def test_pack_rejects_bad_names(elf, name, message):
    with pytest.raises(ValueError, match=message):
        bootimage.pack([("root", elf(), FLAG_EXEC), (name, b"x", 0)])


def test_name_of_39_bytes_is_the_longest_allowed(elf):
    name = "n" * 39
    entries = bootimage.unpack(bootimage.pack([(name, elf(), FLAG_EXEC)]))
    assert entries[0].name == name


def test_pack_rejects_duplicates_empty_and_non_elf_root(elf):
    with pytest.raises(ValueError, match="twice"):
        bootimage.pack([("root", elf(), FLAG_EXEC), ("root", b"x", 0)])
    with pytest.raises(ValueError, match="at least one entry"):
        bootimage.pack([])
    with pytest.raises(ValueError, match="root task"):
        bootimage.pack([("data", b"x", 0)])
    with pytest.raises(ValueError, match="not an ELF"):
        bootimage.pack([("root", b"#!/bin/sh\n", FLAG_EXEC)])
    with pytest.raises(ValueError, match="AArch64"):
        x86 = bytearray(elf())
        struct.pack_into("<H", x86, 18, 62)
        bootimage.pack([("root", bytes(x86), FLAG_EXEC)])
    with pytest.raises(ValueError, match="unknown flags"):
        bootimage.pack([("root", elf(), FLAG_EXEC | 4)])


BAD_IMAGES = [
    (lambda img: img[:16], "shorter than"),
    (lambda img: patch_header(img, magic=b"PETRELBX"), "bad magic"),
    (lambda img: patch_header(img, version=2), "unsupported version"),
    (lambda img: patch_header(img, reserved=1), "reserved"),
    (lambda img: patch_header(img, total=len(img) + PAGE), "does not match"),
    (lambda img: img + bytes(PAGE), "does not match"),
    (lambda img: patch_header(img[:-100], total=len(img) - 100), "not a multiple"),
    (lambda img: patch_header(img, count=0), "no entries"),
    (lambda img: patch_header(img, count=10_000), "does not fit"),
    (lambda img: patch_entry(img, 1, name=b"x" * 40), "not NUL-terminated"),
    (lambda img: patch_entry(img, 1, name=b"a\0b" + bytes(37)), "padding"),
    (lambda img: patch_entry(img, 1, name=b"bad name"), "only letters"),
    (lambda img: patch_entry(img, 1, name=b"root"), "duplicate"),
    (lambda img: patch_entry(img, 1, offset=3 * PAGE + 8), "not page-aligned"),
    (lambda img: patch_entry(img, 1, offset=0), "overlaps the header"),
    (lambda img: patch_entry(img, 1, size=10 * PAGE), "runs past"),
    (lambda img: patch_entry(img, 1, offset=PAGE, size=6), "overlap"),
    (lambda img: patch_entry(img, 1, flags=2), "unknown flags"),
    (lambda img: patch_entry(img, 1, reserved=7), "reserved"),
    (lambda img: patch_entry(img, 0, flags=0), "root task"),
    (lambda img: patch_entry(img, 1, flags=FLAG_EXEC), "not an ELF"),
]


@pytest.mark.parametrize("mutate, message", BAD_IMAGES, ids=[m for _, m in BAD_IMAGES])
def test_unpack_rejects_bad_images(elf, mutate, message):
    with pytest.raises(ValueError, match=message):
        bootimage.unpack(mutate(sample(elf)))


def test_write_image_and_list_command(elf, tmp_path, capsys):
    path = tmp_path / "images" / "x.pbi"
    bootimage.write_image(path, [("root", elf(), FLAG_EXEC), ("cfg", b"k=v", 0)])
    assert bootimage.main(["list", str(path)]) == 0
    out = capsys.readouterr().out
    assert "root" in out and "exec" in out and "cfg" in out and "data" in out
    path.write_bytes(b"garbage" * 10)
    assert bootimage.main(["list", str(path)]) == 1
    assert "bad magic" in capsys.readouterr().err
