"""Opened PDFs travel as values from PdfGuard to the PDFium extractor: one parse per document,
each document its own handle, and every handle closed, once, also when its file fails."""

from __future__ import annotations

import asyncio
import hashlib
import io
import time
import zipfile
from pathlib import Path

import pytest

from content_core.binary import BinaryNormalizer, PdfGuard
from content_core.binary.artifact import BinaryArtifact
from content_core.binary.config import BinaryConfig
from content_core.binary.pdf_handles import OpenedPdf, PdfHandles
from content_core.errors import BinaryTooLargeError
from content_core.extract import extract_text
from content_core.ocr import OcrConfig, OcrRun
from content_core.pipeline.stages.normalised_artifacts.records import ArtifactRecord, records_of
from content_core.store.blobs import BlobStore
from tests.fixtures.hostile import pdf_with_text

PDF = "application/pdf"
# Two pages each (a page holds ~60 lines), so that more than one loaded page is handed over.
FIRST = pdf_with_text("first document marker KQ73\n" * 100)
SECOND = pdf_with_text("second document marker ZV58\n" * 100)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _records(
    artifacts: list[BinaryArtifact], tmp_path: Path, pdfs: PdfHandles
) -> list[ArtifactRecord]:
    ocr = OcrRun(OcrConfig(mode="off"), tmp_path / "ocr", time.monotonic() + 60)
    raw_id = _sha256(artifacts[0].bytes)
    return records_of(artifacts, BlobStore(tmp_path / "blobs"), raw_id, BinaryConfig(), ocr,
                      pdfs=pdfs)


def _held(pdfs: PdfHandles, *datas: bytes) -> list[OpenedPdf]:
    """The handles `pdfs` holds for `datas` (each put back, so records_of still finds it)."""
    held = []
    for data in datas:
        opened = pdfs.take(_sha256(data))
        assert opened is not None, "the guard left no handle for these bytes"
        pdfs.keep(_sha256(data), opened)
        held.append(opened)
    return held


def test_two_pdfs_guarded_before_either_is_extracted_each_read_their_own() -> None:
    """The case a one-document slot mishandles: the second check must not close (or stand in
    for) the first document; each extraction reads its own handle's pages."""
    guard = PdfGuard()
    _, first = guard.check_open(FIRST)
    _, second = guard.check_open(SECOND)
    assert first is not None and second is not None
    assert len(first.pages) == 2 and len(second.pages) == 2  # both still open after both checks
    with first, second:
        text_second = extract_text(SECOND, PDF, opened_pdf=second).text
        text_first = extract_text(FIRST, PDF, opened_pdf=first).text
        # The loaded pages were read (and closed) rather than parsed again; the documents are
        # their owner's to close.
        assert not first.pages and not second.pages
        assert not first.closed and not second.closed
    assert first.closed and second.closed
    assert "KQ73" in text_first and "ZV58" not in text_first
    assert "ZV58" in text_second and "KQ73" not in text_second
    assert text_first == extract_text(FIRST, PDF).text  # the same text as from bytes alone


def test_pipeline_reads_each_member_pdf_from_its_handle_and_closes_it(tmp_path: Path) -> None:
    data = _zip({"first.pdf": FIRST, "second.pdf": SECOND})
    with PdfHandles() as pdfs:
        artifacts = asyncio.run(BinaryNormalizer().normalise(data, filename="two.zip", pdfs=pdfs))
        held = _held(pdfs, FIRST, SECOND)
        records = _records(artifacts, tmp_path, pdfs)
        assert len(pdfs) == 0 and all(opened.closed for opened in held)
    texts = {record.filename: record.text or "" for record in records}
    assert "KQ73" in texts["first.pdf"] and "ZV58" not in texts["first.pdf"]
    assert "ZV58" in texts["second.pdf"] and "KQ73" not in texts["second.pdf"]


def test_a_raw_pdf_is_read_from_its_handle(tmp_path: Path) -> None:
    """The common case: the raw file is the PDF; its handle is keyed by the raw file's id."""
    with PdfHandles() as pdfs:
        artifacts = asyncio.run(BinaryNormalizer().normalise(FIRST, filename="first.pdf",
                                                             pdfs=pdfs))
        (held,) = _held(pdfs, FIRST)
        (record,) = _records(artifacts, tmp_path, pdfs)
        assert len(pdfs) == 0 and held.closed  # taken by the extraction, closed once read
    assert "KQ73" in (record.text or "") and record.page_count == 2


def test_handles_past_the_limits_are_closed_at_the_check(tmp_path: Path) -> None:
    """Memory stays bounded: past `max_documents` the guard closes what it opened, and the
    extractor parses those bytes itself."""
    data = _zip({"first.pdf": FIRST, "second.pdf": SECOND})
    with PdfHandles(max_documents=1) as pdfs:
        artifacts = asyncio.run(BinaryNormalizer().normalise(data, filename="two.zip", pdfs=pdfs))
        assert len(pdfs) == 1
        records = _records(artifacts, tmp_path, pdfs)
    texts = {record.filename: record.text or "" for record in records}
    assert "KQ73" in texts["first.pdf"] and "ZV58" in texts["second.pdf"]
    with PdfHandles(max_pages=3) as pdfs:
        asyncio.run(BinaryNormalizer().normalise(data, filename="two.zip", pdfs=pdfs))
        first, second = _held(pdfs, FIRST, SECOND)
        assert (len(first.pages), len(second.pages)) == (2, 1)


def test_a_handle_is_closed_when_its_extraction_fails(tmp_path: Path) -> None:
    """An error out of an artifact's extraction (here: a handle of other bytes, a caller's
    bug) still closes that artifact's handle."""
    _, wrong = PdfGuard().check_open(SECOND)
    assert wrong is not None
    pdfs = PdfHandles()
    pdfs.keep(_sha256(FIRST), wrong)
    artifact = BinaryArtifact(bytes=FIRST, media_type=PDF, filename="first.pdf", kind="pdf")
    with pytest.raises(ValueError, match="other bytes"):
        _records([artifact], tmp_path, pdfs)
    assert wrong.closed and len(pdfs) == 0


def test_handles_nobody_took_are_closed_when_the_file_fails() -> None:
    _, opened = PdfGuard().check_open(FIRST)
    assert opened is not None
    with pytest.raises(RuntimeError), PdfHandles() as pdfs:
        pdfs.keep(_sha256(FIRST), opened)
        raise RuntimeError("the file's processing failed")
    assert opened.closed
    opened.close()  # closing again does nothing: every handle is closed exactly once


def test_a_pdf_that_fails_its_check_leaves_no_handle() -> None:
    data = _zip({"first.pdf": FIRST, "long.pdf": pdf_with_text("line\n" * 400)})
    normalizer = BinaryNormalizer(config=BinaryConfig(max_pdf_pages=3))
    with PdfHandles() as pdfs:
        artifacts = asyncio.run(normalizer.normalise(data, filename="two.zip", pdfs=pdfs))
        assert len(pdfs) == 1  # the first PDF's only
    failed = [a for a in artifacts if a.filename == "long.pdf"]
    assert failed and failed[0].error_type == "LimitExceededError"
    with pytest.raises(BinaryTooLargeError):
        PdfGuard(max_pages=3).check_open(pdf_with_text("line\n" * 400))


def test_a_pdf_opened_with_a_password_gives_no_handle() -> None:
    """Text tools read the decrypted copy, so the encrypted document is not kept open."""
    data = pdf_with_text("locked", user_password="pw", owner_password="owner")
    report, opened = PdfGuard(passwords=("pw",)).check_open(data)
    assert opened is None and report.decrypted is not None
