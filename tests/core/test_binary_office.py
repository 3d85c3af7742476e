"""Office converters: LibreOffice for real, Gotenberg over HTTP on 127.0.0.1, and the no-op."""

from __future__ import annotations

import shutil

import pytest

from content_core.binary import (
    OFFICE_MEDIA_TYPES,
    BinaryConfig,
    GotenbergConverter,
    LibreOfficeConverter,
    NoOpOfficeConverter,
    OfficeConverter,
    build_office_converter,
)
from content_core.binary import media_types as mt
from content_core.errors import OfficeConversionError
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import minimal_docx
from tests.fixtures.ole2 import word6_document
from tests.fixtures.wordperfect import wp5_document, wp6_document, wp6_text
from tests.support.gotenberg_server import GotenbergServer

HAS_SOFFICE = shutil.which("soffice") is not None
needs_soffice = pytest.mark.skipif(
    not HAS_SOFFICE,
    reason="LibreOffice (soffice) is not installed: apt-get install libreoffice-writer "
    "libreoffice-calc libreoffice-impress",
)


def _pdf_text(pdf: bytes) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    return "\n".join(document[i].get_textpage().get_text_range() for i in range(len(document)))


def test_build_office_converter_follows_the_config() -> None:
    assert isinstance(build_office_converter(BinaryConfig()), NoOpOfficeConverter)
    gotenberg = build_office_converter(
        BinaryConfig(office_converter="gotenberg", gotenberg_url="http://127.0.0.1:1/")
    )
    assert isinstance(gotenberg, GotenbergConverter) and gotenberg.url == "http://127.0.0.1:1"
    libre = build_office_converter(
        BinaryConfig(office_converter="libreoffice", libreoffice_timeout_s=5)
    )
    assert isinstance(libre, LibreOfficeConverter) and libre.timeout_s == 5
    for converter in (gotenberg, libre, NoOpOfficeConverter()):
        assert isinstance(converter, OfficeConverter)


def test_office_media_types_cover_ooxml_odf_and_legacy() -> None:
    for media_type in (mt.DOCX, mt.XLSX, mt.PPTX, mt.ODT, mt.DOC, mt.XLS, mt.PPT,
                       mt.DOCM, mt.XLSM, mt.PPTM, mt.WORDPERFECT):
        assert media_type in OFFICE_MEDIA_TYPES
    assert mt.PDF not in OFFICE_MEDIA_TYPES


async def test_noop_converts_nothing() -> None:
    assert await NoOpOfficeConverter().convert(b"x", media_type=mt.DOCX) is None


@needs_soffice
@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "media_type", "phrase"),
    [
        ("doc/fake.doc", mt.DOC, "Lorem ipsum dolor sit amet"),
        ("xls/tests-example.xls", mt.XLS, "Bagpipes are awesome"),
        ("ppt/fake-power-point.ppt", mt.PPT, "Adding a Bullet Slide"),
    ],
)
async def test_libreoffice_converts_legacy_formats(path: str, media_type: str, phrase: str) -> None:
    converter = LibreOfficeConverter(timeout_s=120)
    try:
        pdf = await converter.convert((CORPUS / path).read_bytes(), media_type=media_type)
    finally:
        converter.close()
    assert pdf is not None and pdf.startswith(b"%PDF-")
    assert phrase in _pdf_text(pdf)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("data", "media_type", "phrase"),
    [
        (wp6_document(wp6_text(["WordPerfect six QLO01 caf\u00e9"])), mt.WORDPERFECT,
         "WordPerfect six QLO01 caf\u00e9"),
        (wp5_document(["WordPerfect five QLO02"]), mt.WORDPERFECT, "WordPerfect five QLO02"),
        (word6_document(["Word ninety-five QLO03"]), mt.DOC, "Word ninety-five QLO03"),
        (word6_document(["Fast saved QLO04 text"], nfib=101, fast_saved=True), mt.DOC,
         "Fast saved QLO04 text"),
    ],
    ids=["wp6", "wp5", "word95", "word6-fast-saved"],
)
async def test_libreoffice_reads_the_hand_built_wordperfect_and_word95_files(
    data: bytes, media_type: str, phrase: str
) -> None:
    # No tool here writes these formats, so the fixtures are built from the file format;
    # LibreOffice (libwpd, its Word 6 filter) reading them is the independent check that they
    # are genuine, and it is the conversion path WordPerfect takes with office_converter set.
    # Not skipped without soffice: CI installs it (.ci/run).
    converter = LibreOfficeConverter(timeout_s=120)
    try:
        pdf = await converter.convert(data, media_type=media_type)
    finally:
        converter.close()
    assert pdf is not None and phrase in _pdf_text(pdf)


@needs_soffice
async def test_libreoffice_failure_is_typed() -> None:
    converter = LibreOfficeConverter(timeout_s=60)
    try:
        with pytest.raises(OfficeConversionError):
            await converter.convert(
                (CORPUS / "xlsx/password_protected.xlsx").read_bytes(), media_type=mt.XLSX
            )
    finally:
        converter.close()


@needs_soffice
async def test_libreoffice_timeout_is_typed() -> None:
    converter = LibreOfficeConverter(timeout_s=0.05)
    try:
        with pytest.raises(OfficeConversionError, match="ran past"):
            await converter.convert(minimal_docx("slow"), media_type=mt.DOCX)
    finally:
        converter.close()


async def test_libreoffice_missing_binary_is_typed() -> None:
    from content_core.errors import MissingDependencyError

    converter = LibreOfficeConverter(soffice_path="/nonexistent/soffice")
    with pytest.raises(MissingDependencyError):
        await converter.convert(b"x", media_type=mt.DOCX)


async def test_gotenberg_round_trip() -> None:
    with GotenbergServer() as server:
        converter = GotenbergConverter(url=server.url, timeout_s=120)
        pdf = await converter.convert(minimal_docx("Gotenberg marker 4471"), media_type=mt.DOCX,
                                      filename="../../evil name.docx")
    assert pdf is not None and pdf.startswith(b"%PDF-")
    # The file sent is named by its sniffed type, never by the untrusted name.
    assert server.requests == [("/forms/libreoffice/convert", "document.docx")]
    if server.use_soffice:
        assert "Gotenberg marker 4471" in _pdf_text(pdf)


async def test_gotenberg_error_status_is_typed() -> None:
    with GotenbergServer(use_soffice=False) as server:
        converter = GotenbergConverter(url=server.url + "/missing-prefix", timeout_s=10)
        with pytest.raises(OfficeConversionError, match="404"):
            await converter.convert(minimal_docx("x"), media_type=mt.DOCX)


async def test_gotenberg_unreachable_is_typed() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    converter = GotenbergConverter(url=f"http://127.0.0.1:{port}", timeout_s=5)
    with pytest.raises(OfficeConversionError, match="unreachable"):
        await converter.convert(minimal_docx("x"), media_type=mt.DOCX)


def test_folders_of_killed_converters_are_swept() -> None:
    import os
    import tempfile
    from pathlib import Path

    from content_core.binary.office import _PROFILE_PREFIX, _sweep_stale_folders

    dead_pid = 4_000_000  # above pid_max: never a live process
    root = Path(tempfile.gettempdir())
    stale = Path(tempfile.mkdtemp(prefix=f"{_PROFILE_PREFIX}{dead_pid}-", dir=root))
    live = Path(tempfile.mkdtemp(prefix=f"{_PROFILE_PREFIX}{os.getpid()}-", dir=root))
    try:
        _sweep_stale_folders()
        assert not stale.exists() and live.exists()
    finally:
        live.rmdir()
