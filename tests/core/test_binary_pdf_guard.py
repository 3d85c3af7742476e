"""PdfGuard: empty-user-password PDFs pass, others are EncryptedPdfError, damage is
CorruptPdfError."""

from __future__ import annotations

import pytest

from content_core.binary import PdfGuard
from content_core.errors import BinaryTooLargeError, CorruptPdfError, EncryptedPdfError
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import page_tree_bomb, pdf_with_broken_stream, pdf_with_text


def test_plain_pdf_reports_pages() -> None:
    report = PdfGuard().check(pdf_with_text("line\n" * 150))
    assert report.page_count == 3
    assert not report.encrypted


def test_owner_password_only_pdf_is_processed_and_flagged() -> None:
    data = pdf_with_text("owner only", owner_password="owner-secret")
    report = PdfGuard().check(data)
    assert report.encrypted and report.owner_password_only
    assert report.decrypted is None  # pdfium opens it as is


def test_user_password_pdf_is_refused_without_a_password() -> None:
    data = pdf_with_text("locked", user_password="pw", owner_password="owner")
    with pytest.raises(EncryptedPdfError):
        PdfGuard().check(data)


def test_configured_password_unlocks_and_returns_a_decrypted_copy() -> None:
    data = pdf_with_text("unlocked with pw", user_password="pw", owner_password="owner")
    report = PdfGuard(passwords=("wrong", "pw")).check(data)
    assert report.decrypted is not None and b"/Encrypt" not in report.decrypted
    import pypdfium2 as pdfium

    text = pdfium.PdfDocument(report.decrypted)[0].get_textpage().get_text_range()
    assert "unlocked with pw" in text


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda d: d[: len(d) // 2], id="truncated-half"),
        pytest.param(lambda d: b"%PDF-1.4\n" + b"garbage " * 100 + b"\n%%EOF\n", id="no-objects"),
        pytest.param(lambda d: d.replace(b"%PDF-", b"%XYZ-"), id="no-header"),
    ],
)
def test_damaged_pdfs_are_corrupt(mangle: object) -> None:
    data = mangle(pdf_with_text("damaged"))  # type: ignore[operator]
    with pytest.raises(CorruptPdfError):
        PdfGuard().check(data)


def test_corrupt_content_stream_is_detected() -> None:
    # pypdf and pdfium would both return empty text for this page without complaint.
    with pytest.raises(CorruptPdfError, match="content stream"):
        PdfGuard().check(pdf_with_broken_stream())


def test_page_limit() -> None:
    with pytest.raises(BinaryTooLargeError):
        PdfGuard(max_pages=2).check(pdf_with_text("line\n" * 300))


def test_page_tree_bomb_is_over_the_page_limit() -> None:
    """The danger the page limit exists for: 1 KB that every reader walks as 100,000 pages
    (pypdf gives up at its own entry limit; PDFium, asked next, counts them all)."""
    data = page_tree_bomb(levels=5, fanout=10)
    assert len(data) < 2048
    with pytest.raises(BinaryTooLargeError, match="max_pdf_pages") as caught:
        PdfGuard().check(data)
    assert (caught.value.limit, caught.value.value) == ("max_pdf_pages", 100_000)


def test_corpus_encrypted_pdfs() -> None:
    root = CORPUS
    assert PdfGuard().check((root / "pdf/copy-protected.pdf").read_bytes()).owner_password_only
    with pytest.raises(EncryptedPdfError):
        PdfGuard().check((root / "pdf/password.pdf").read_bytes())
    assert PdfGuard(passwords=("password",)).check(
        (root / "pdf/password.pdf").read_bytes()
    ).decrypted


def _without_xref(data: bytes) -> bytes:
    """The PDF with its cross-reference table, trailer, startxref and %%EOF cut off."""
    return data[: data.rindex(b"xref")]


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(_without_xref, id="no-xref-trailer-startxref"),
        pytest.param(lambda d: d[:-12], id="truncated-tail"),
        pytest.param(lambda d: d.replace(b"startxref", b"startxrex"), id="startxref-not-found"),
    ],
)
def test_recoverable_structure_is_repaired_by_pdfium(mangle: object) -> None:
    """pypdf refuses these ("startxref not found", no %%EOF); PDFium rebuilds the table, as
    viewers do, so the guard lets them through and the text comes out."""
    data = mangle(pdf_with_text("repairable marker QP41\n" * 80))  # type: ignore[operator]
    report = PdfGuard().check(data)
    assert report.repaired and report.page_count == 2
    from content_core.extract import extract_text

    assert "repairable marker QP41" in extract_text(data, "application/pdf").text


def test_repaired_pdf_keeps_the_page_limit() -> None:
    with pytest.raises(BinaryTooLargeError, match="max_pdf_pages") as caught:
        PdfGuard(max_pages=1).check(_without_xref(pdf_with_text("line\n" * 200)))
    assert (caught.value.limit, caught.value.value, caught.value.maximum) == ("max_pdf_pages", 4, 1)


def test_repaired_pdf_keeps_the_password_check() -> None:
    data = _without_xref(pdf_with_text("locked and damaged", user_password="pw",
                                       owner_password="owner"))
    with pytest.raises(EncryptedPdfError, match="PDF"):
        PdfGuard().check(data)
    report = PdfGuard(passwords=("pw",)).check(data)
    assert report.repaired and report.decrypted is not None
    import pypdfium2 as pdfium

    text = pdfium.PdfDocument(report.decrypted)[0].get_textpage().get_text_range()
    assert "locked and damaged" in text


def test_random_bytes_after_the_header_stay_corrupt() -> None:
    import random

    data = b"%PDF-1.7\n" + random.Random(17).randbytes(4000)
    with pytest.raises(CorruptPdfError, match="PDFium cannot repair") as caught:
        PdfGuard().check(data)
    assert caught.value.error_type == "CorruptFileError"
