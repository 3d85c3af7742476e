"""Right-to-left PDF text in logical (reading) order; left-to-right text exactly as before.

PDFium gives Arabic and Hebrew close to the visual order the glyphs are drawn in: a Hebrew
phrase inside an English line with its words swapped, a lam-alef ligature turned around, a
vowel mark before its letter, brackets the wrong way round.
"""

from __future__ import annotations

import asyncio

import pypdfium2 as pdfium
import pytest

from content_core.binary.office import LibreOfficeConverter
from content_core.extract import extract_text
from content_core.extract._bidi import PlacedChar, logical_text
from tests.core.extract_inputs import ODT, make_odf, make_pdf, pdf_visual_rtl
from tests.fixtures.corpus import CORPUS


def _pdfium_text(pdf: bytes) -> str:
    document = pdfium.PdfDocument(pdf)
    try:
        return str(document[0].get_textpage().get_text_range())
    finally:
        document.close()


# Glyphs left to right as a producer draws them, and the line in reading order.
VISUAL_LINES: list[tuple[list[str | float], str]] = [
    # A Hebrew phrase in an English line; the space between the Hebrew words is only a gap.
    ([*"Hebrew line: ", *"םלוע", -600, *"םולש", *" QR6601 end"],
     "Hebrew line: שלום עולם QR6601 end"),
    # One glyph for lam-alef that maps to two characters.
    (["م", "لا", "س", "ل", "ا", " ", *"QR6602"], "QR6602 السلام"),
    # A vowel mark (fatha) drawn over its letter.
    ([*"يبيب", "ح", "َ"], "حَبيبي"),
    # Brackets drawn mirrored in a right-to-left line, a number kept left to right.
    ([*"2024 טסקט לש )הקידב( ןחבמ הז"], "זה מבחן (בדיקה) של טקסט 2024"),
]


def test_visual_order_pdf_comes_out_in_reading_order() -> None:
    pdf = pdf_visual_rtl([glyphs for glyphs, _ in VISUAL_LINES])
    expected = [logical for _, logical in VISUAL_LINES]
    raw_lines = _pdfium_text(pdf).split("\r\n")
    assert all(raw != logical for raw, logical in zip(raw_lines, expected, strict=True))
    result = extract_text(pdf, "application/pdf")
    assert result.handler == "pdfium"
    assert result.text.split("\n") == expected


def test_libreoffice_pdf_with_hebrew_and_arabic() -> None:
    paragraphs = [
        "Hebrew line: שלום עולם QR6611 end",
        "מבחן (בדיקה) של טקסט בעברית",
        "Mixed: السلام عليكم and more QR6612",
        "حَبيبي يا نور العين",
        "مرحبا بالعالم ٣٤٥ مرة",
    ]
    body = "".join(f"<text:p>{paragraph}</text:p>" for paragraph in paragraphs)
    odt = make_odf(ODT, f"<office:text>{body}</office:text>")
    converter = LibreOfficeConverter(timeout_s=180)
    try:
        pdf = asyncio.run(converter.convert(odt, media_type=ODT, filename="rtl.odt"))
    finally:
        converter.close()
    assert pdf is not None
    lines = [line.strip() for line in extract_text(pdf, "application/pdf").text.split("\n")]
    assert [line for line in lines if line] == paragraphs


def test_arabic_corpus_pdf() -> None:
    # weasyprint maps the whole Arabic word onto single glyphs; it must still read right.
    text = extract_text((CORPUS / "pdf/habibi.pdf").read_bytes(), "application/pdf").text
    assert "حَبيبي" in text and "habibi" in text
    assert "يبيبَح" not in text  # the visual (reversed) spelling is gone


def test_left_to_right_pdf_text_is_unchanged() -> None:
    pdf = make_pdf(["Plain   spaced line QR6621 (a) [b]", "Second page QR6622"])
    result = extract_text(pdf, "application/pdf")
    document = pdfium.PdfDocument(pdf)
    try:
        raw = [str(page.get_textpage().get_text_range()) for page in document]
    finally:
        document.close()
    assert [result.text[s.start : s.end] for s in result.pages] == raw


@pytest.mark.parametrize("text", ["abc  def\r\n(x) 12", "", "\r\n\r\n"])
def test_lines_without_rtl_letters_are_returned_as_given(text: str) -> None:
    chars = [PlacedChar(char, float(i), float(i), 10.0) for i, char in enumerate(text)]
    assert logical_text(chars) == text
