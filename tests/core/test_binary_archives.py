"""ArchiveUnpacker and check_zip_package: members in memory, one budget, hostile layouts."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from content_core.binary import ArchiveUnpacker
from content_core.binary import media_types as mt
from content_core.binary.archives import ExpansionBudget, check_zip_package, gunzip, safe_name
from content_core.errors import (
    ArchiveExtractionError,
    BinaryFanoutError,
    BinaryTooLargeError,
    EncryptedFileError,
    UnsafeInputError,
    UnsupportedFormatError,
)
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import (
    docx_bomb,
    minimal_docx,
    overlapping_zip_bomb,
    seven_zip_bomb,
    seven_zip_with_symlink,
    tar_with_traversal,
    wide_zip,
    zip_flagged_encrypted,
    zip_ratio_bomb,
)
from tests.support.budget import cpu_budget

MIB = 1024 * 1024


def _budget(max_bytes: int = 64 * MIB, max_files: int = 100) -> ExpansionBudget:
    return ExpansionBudget(max_bytes=max_bytes, max_files=max_files)


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("zip/simple.zip", mt.ZIP),
        ("tar/bla.tar", mt.TAR),
        ("7z/bla.7z", mt.SEVEN_ZIP),
    ],
)
def test_corpus_archives_unpack(path: str, media_type: str) -> None:
    members = list(ArchiveUnpacker().unpack((CORPUS / path).read_bytes(), media_type, _budget()))
    assert len(members) == 2 and all(m.data for m in members)


def test_gzip_yields_the_inner_tar() -> None:
    budget = _budget()
    members = list(ArchiveUnpacker().unpack(
        (CORPUS / "targz/bla.tgz").read_bytes(), mt.GZIP, budget, filename="bla.tgz"
    ))
    assert [m.name for m in members] == ["bla.tar"]
    assert budget.used_bytes == len(members[0].data or b"")


def test_encrypted_7z_needs_a_configured_password() -> None:
    data = (CORPUS / "7z/bla.encrypted.7z").read_bytes()
    with pytest.raises(EncryptedFileError, match="7z") as caught:
        list(ArchiveUnpacker().unpack(data, mt.SEVEN_ZIP, _budget()))
    assert caught.value.error_type == "EncryptedFileError" and caught.value.file_format == "7z"
    members = list(ArchiveUnpacker(passwords=("foo",)).unpack(data, mt.SEVEN_ZIP, _budget()))
    assert b"oracle.jdbc.driver.OracleDriver" in b"".join(m.data or b"" for m in members)


def test_encrypted_zip_member_with_and_without_password() -> None:
    members = list(ArchiveUnpacker().unpack(zip_flagged_encrypted(), mt.ZIP, _budget()))
    assert members[0].data is None
    assert isinstance(members[0].error, EncryptedFileError)
    assert "zip" in members[0].error.message and members[0].error.file_format == "zip"


def test_zip_ratio_bomb_stops_at_the_budget() -> None:
    data = zip_ratio_bomb(64 * MIB)
    with cpu_budget(5), pytest.raises(BinaryTooLargeError):
        list(ArchiveUnpacker().unpack(data, mt.ZIP, _budget(max_bytes=8 * MIB)))


def test_zip_ratio_limit_applies_inside_a_large_budget() -> None:
    budget = ExpansionBudget(max_bytes=1024 * MIB, max_files=10, max_ratio=100)
    with pytest.raises(BinaryTooLargeError, match="expands more than"):
        list(ArchiveUnpacker().unpack(zip_ratio_bomb(16 * MIB), mt.ZIP, budget))
    assert budget.used_bytes < 4 * MIB


def test_overlapping_entries_are_refused_before_inflating() -> None:
    with cpu_budget(2), pytest.raises(UnsafeInputError, match="overlapping"):
        list(ArchiveUnpacker().unpack(overlapping_zip_bomb(), mt.ZIP, _budget()))


def test_member_count_budget() -> None:
    with pytest.raises(BinaryFanoutError):
        list(ArchiveUnpacker().unpack(wide_zip(50), mt.ZIP, _budget(max_files=10)))


def test_tar_traversal_links_and_devices_are_never_followed(tmp_path: object) -> None:
    marker = "cc-tar-marker-7731"
    members = list(ArchiveUnpacker().unpack(tar_with_traversal(marker), mt.TAR, _budget()))
    by_name = {m.name: m for m in members}
    # Path parts are gone from names; the contents are read in memory only.
    assert by_name[f"{marker}-dotdot.txt"].data == f"escaped dotdot {marker}".encode()
    assert by_name[f"{marker}-absolute.txt"].data == f"escaped absolute {marker}".encode()
    # Links out of the archive are traversal attempts; devices and FIFOs have no content.
    for special, error in (("symlink", UnsafeInputError), ("hardlink", UnsafeInputError),
                           ("device", UnsupportedFormatError), ("fifo", UnsupportedFormatError)):
        member = by_name[f"{marker}-{special}"]
        assert member.data is None and isinstance(member.error, error), (special, member.error)
    assert all("/" not in m.name and not m.name.startswith(".") for m in members)


def test_seven_zip_declared_size_over_budget() -> None:
    data = seven_zip_bomb(16 * MIB)
    with pytest.raises(BinaryTooLargeError):
        list(ArchiveUnpacker().unpack(data, mt.SEVEN_ZIP, _budget(max_bytes=4 * MIB)))


def test_gunzip_budget_and_damage() -> None:
    import gzip

    with pytest.raises(BinaryTooLargeError):
        gunzip(gzip.compress(b"\x00" * (8 * MIB)), _budget(max_bytes=MIB), "z.gz")
    with pytest.raises(ArchiveExtractionError):
        gunzip(gzip.compress(b"hello world" * 100)[:-30], _budget(), "z.gz")
    assert gunzip(gzip.compress(b"a") + gzip.compress(b"b"), _budget(), "z.gz") == b"ab"


def test_check_zip_package_counts_office_parts_against_the_budget() -> None:
    budget = _budget(max_bytes=8 * MIB)
    assert check_zip_package(minimal_docx("fine"), budget) > 0
    with pytest.raises(BinaryTooLargeError):
        check_zip_package(docx_bomb(32 * MIB), _budget(max_bytes=8 * MIB))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("/abs/path/file.txt", "file.txt"),
        ("..\\..\\windows\\evil.dll", "evil.dll"),
        ("dir/", "dir"),
        ("..", "fallback"),
        (".hidden", "hidden"),
        ("a\x00b\x1fc.txt", "abc.txt"),
    ],
)
def test_safe_name(raw: str, expected: str) -> None:
    assert safe_name(raw, "fallback") == expected


def test_seven_zip_symlinks_are_reported_not_extracted(tmp_path: Path) -> None:
    data = seven_zip_with_symlink(tmp_path)
    members = list(ArchiveUnpacker().unpack(data, mt.SEVEN_ZIP, _budget()))
    assert [(m.name, m.data) for m in members] == [("regular.txt", b"regular 7z member"),
                                                    ("link", None)]
    assert isinstance(members[1].error, UnsupportedFormatError)


def test_undecodable_tar_names_keep_their_bytes_as_escapes() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT,
                      encoding="latin-1") as archive:
        info = tarfile.TarInfo("dir/café.txt")  # written as Latin-1 bytes: not UTF-8
        info.size = 4
        archive.addfile(info, io.BytesIO(b"data"))
    [member] = ArchiveUnpacker().unpack(buffer.getvalue(), mt.TAR, _budget())
    assert member.name == "caf\\xe9.txt" and member.data == b"data"
