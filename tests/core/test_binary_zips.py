"""zips: entry names decoded as their writer meant them, and the overlap check on byte ranges.

Zips written on Japanese, Chinese or Western Windows systems store names in the system code
page without the UTF-8 flag; they are ordinary files and must unpack, with names kept.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from content_core.binary import ArchiveUnpacker
from content_core.binary import media_types as mt
from content_core.binary.archives import ExpansionBudget
from content_core.binary.zips import check_zip_layout, decode_zip_names
from content_core.errors import UnsafeInputError
from tests.fixtures.hostile import overlapping_zip_bomb


def _budget() -> ExpansionBudget:
    return ExpansionBudget(max_bytes=64 * 1024 * 1024, max_files=100)


def zip_with_raw_names(names: list[bytes], *, compress: bool = True) -> bytes:
    """A zip whose entry names are the given raw bytes, without the UTF-8 flag (as legacy
    Windows tools write them): written with ASCII placeholders of the same length, which are
    then replaced in the local and central headers."""
    placeholders = [(f"{index:02d}" + "_" * len(raw))[: len(raw)] for index, raw in
                    enumerate(names)]
    assert all(len(p) == len(r) and len(r) >= 2 for p, r in zip(placeholders, names, strict=True))
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for index, placeholder in enumerate(placeholders):
            archive.writestr(placeholder, f"content of member {index} QZ{index}\n" * 50)
    data = buffer.getvalue()
    for placeholder, raw in zip(placeholders, names, strict=True):
        assert data.count(placeholder.encode()) == 2  # local header + central directory
        data = data.replace(placeholder.encode(), raw)
    return data


# Each case: the names as meant, the code page the writer used.
NAME_CASES = [
    pytest.param(["日本語のファイル.txt", "資料/報告書.txt", "ソフト.txt"], "cp932",
                 id="shift-jis"),  # "ソ" ends in 0x5C, a backslash byte
    pytest.param(["中文文件.txt", "报告/数据.txt"], "gbk", id="gbk"),
    pytest.param(["résumé.txt", "Ärger über Öl.txt"], "cp1252", id="cp1252"),
    pytest.param(["café-menu.txt", "Straße.txt"], "cp437", id="cp437"),
    pytest.param(["naïve-ñandú.txt", "ünïcode.txt"], "utf-8", id="utf-8-without-flag"),
]


@pytest.mark.parametrize(("names", "encoding"), NAME_CASES)
def test_legacy_names_are_decoded_and_the_zip_unpacks(names: list[str], encoding: str) -> None:
    data = zip_with_raw_names([n.encode(encoding) for n in names])
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert not any(info.flag_bits & 0x800 for info in infos)
    assert decode_zip_names(infos) == names
    members = list(ArchiveUnpacker().unpack(data, mt.ZIP, _budget(), filename="legacy.zip"))
    assert [m.name for m in members] == [n.rsplit("/", 1)[-1] for n in names]
    assert all(m.error is None and b"content of member" in (m.data or b"") for m in members)


def test_shift_jis_zip_is_not_an_overlap() -> None:
    """The reported false refusal: the old check measured names re-encoded as UTF-8, longer
    than the Shift-JIS bytes on disk, so stored (uncompressed) members seemed to overlap."""
    names = [f"報告書{i}.txt".encode("cp932") for i in range(3)]
    data = zip_with_raw_names(names, compress=False)
    check_zip_layout(zipfile.ZipFile(io.BytesIO(data)).infolist(), data, "sjis.zip")
    assert len(list(ArchiveUnpacker().unpack(data, mt.ZIP, _budget()))) == 3


def test_undecodable_name_bytes_survive_as_escapes() -> None:
    # 0x81 and 0x8d are unassigned in CP1252; the Latin letters make CP1252 the guess.
    data = zip_with_raw_names([b"r\xe9sum\xe9\x81.txt", b"caf\xe9\x8d.txt"])
    members = list(ArchiveUnpacker().unpack(data, mt.ZIP, _budget()))
    assert [m.name for m in members] == ["résumé\\x81.txt", "café\\x8d.txt"]


def test_overlapping_ranges_are_still_refused() -> None:
    data = overlapping_zip_bomb(copies=3, kernel_bytes=1024)
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    with pytest.raises(UnsafeInputError, match="share data"):
        check_zip_layout(infos, data, "bomb.zip")


def test_an_entry_pointing_outside_fails_alone() -> None:
    """A damaged offset is not an attack: that member is a failure, its siblings are read."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("good.txt", b"good member QZ9")
        archive.writestr("lost.txt", b"lost member")
    data = bytearray(buffer.getvalue())
    second = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 4)
    data[second + 42 : second + 46] = (len(data) + 1000).to_bytes(4, "little")
    members = list(ArchiveUnpacker().unpack(bytes(data), mt.ZIP, _budget()))
    assert [(m.name, m.data) for m in members] == [("good.txt", b"good member QZ9"),
                                                    ("lost.txt", None)]
    assert members[1].error is not None and members[1].error.error_type == "CorruptFileError"
