"""PDF headings on real PDFs (LaTeX, Google Docs, a Korean leaflet, papers, a report): the
headings a reader sees come out as `#` lines at their levels; lines that only look apart
(authors, dates, captions, theorem lead-ins, table rows, contents lines, formulas) do not.

The truth was read off the rendered pages and, for the LaTeX files, their sources."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from content_core.extract.base import Blob, ExtractOptions, SniffInfo
from content_core.extract.pdf import PdfiumExtractor
from content_core.extract.pdf_layout import read_layout

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
_HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)


@cache
def _text(path: str) -> str:
    blob = Blob((CORPUS / path).read_bytes(), SniffInfo(media_type="application/pdf"))
    return PdfiumExtractor().extract(blob, ExtractOptions()).text


def _headings(path: str) -> tuple[tuple[int, str], ...]:
    return tuple((len(marks), title.strip()) for marks, title in _HEADING.findall(_text(path)))


_SECTIONS = [(1, "Contents")] + [
    (1, f"{n} {name}") for n, name in enumerate(["Foo", "Bar", "Baz"] * 3, start=1)
]

# Every heading of the file, in page order, at its level: nothing missing, nothing more.
EXACT = {
    # A LaTeX article with a table of contents: the contents lines ("1 Foo 2") are not
    # headings, the section lines are.
    "layout/006-pdflatex-outline/pdflatex-outline.pdf": _SECTIONS,
    # The same document with bookmarks titled "First", "Second", ...: the page wins.
    "layout/014-outlines/mistitled_outlines_example.pdf": _SECTIONS,
    # Title, then author and date lines set larger than the body: not headings.
    "layout/026-latex-multicolumn/multicolumn.pdf": [
        (1, "Two-Column Document with Lorem Ipsum"),
        (2, "Abstract"),
    ],
    # A Google Docs title over a table whose header cells are bold: only the title.
    "layout/011-google-doc-document/google-doc-document.pdf": [(1, "Example document")],
    # Blind text only: no heading, no page number made one.
    "layout/004-pdflatex-4-pages/pdflatex-4-pages.pdf": [],
    # An arXiv paper: the title set on two lines in two fonts is one level-1 heading; the
    # "Abstract." lead-in, the authors and the margin stamp are not headings.
    "pdf/layout-parser-paper-fast.pdf": [
        (1, "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"),
        (2, "1 Introduction"),
    ],
    # A two-column paper: bold author lines under the title are not headings.
    "pdf/multi-column-2p.pdf": [
        (1, "Dense Passage Retrieval for Open-Domain Question Answering"),
        (2, "Abstract"),
        (2, "1 Introduction"),
        (2, "2 Background"),
        (2, "3 Dense Passage Retriever (DPR)"),
        (3, "3.1 Overview"),
    ],
    # A page of prose whose list items open with bold lead-ins ("Customizable and
    # conversable agents.") inside the paragraph.
    "pdf/markitdown-test.pdf": [(1, "1 Introduction")],
    # A memo: a date line and a salutation, no heading.
    "pdf/fake-memo.pdf": [],
    # A report whose sections are short bold labels ending in a colon.
    "pdf/SPARSE-2024-INV-1234_borderless_table.pdf": [
        (1, "INVENTORY RECONCILIATION REPORT"),
        (2, "Variance Analysis:"),
        (2, "Summary Statistics:"),
        (2, "Detailed Analysis by Category:"),
        (2, "Extended Inventory Review:"),
        (2, "Recommendations:"),
        (2, "Approval:"),
    ],
}


@pytest.mark.parametrize("path", sorted(EXACT), ids=lambda p: Path(p).stem)
def test_the_headings_a_reader_sees_and_no_others(path: str) -> None:
    assert list(_headings(path)) == EXACT[path]


def test_a_leaflet_set_in_a_scaled_one_point_font_has_its_headings() -> None:
    # Every character of this PDF is a 1-point font scaled by its text matrix: the size a
    # reader sees (16 pt titles over 8 pt text) comes from the matrix, and the short bold
    # section labels (one of two Hangul syllables) are headings below the titles.
    found = set(_headings("pdf/korean-text-with-tables.pdf"))
    assert {
        (1, "할인점·주유·온라인쇼핑몰 1.5% 빅포인트 적립"),
        (1, "커피전문점·제과점·편의점 2% 빅포인트 적립"),
        (2, "서비스 제공 기준"),
        (2, "적립 제외 대상"),
        (2, "기타"),
        (2, "전월 이용금액 기준"),
        (2, "전월 이용금액 제외 대상"),
    } == found


def test_a_scaled_font_is_read_at_the_size_it_is_seen() -> None:
    document = pdfium.PdfDocument((CORPUS / "pdf/korean-text-with-tables.pdf").read_bytes())
    try:
        page = document[0]
        textpage = page.get_textpage()
        layout = read_layout(pdfium.raw, page, textpage, textpage.get_text_range(), 0)
    finally:
        document.close()
    sizes = {line.text.strip(): line.size for line in layout.lines}
    assert sizes["할인점·주유·온라인쇼핑몰"] == pytest.approx(16.0, abs=0.2)
    assert sizes["기타"] == pytest.approx(8.0, abs=0.2)
    fonts = {line.text.strip(): line.font for line in layout.lines}
    assert fonts["기타"] == "YoonGothicPro780"  # the subset tag "IJMAAR+" dropped


def test_a_thesis_has_its_chapters_and_sections_at_their_levels() -> None:
    found = _headings("layout/009-pdflatex-geotopo/GeoTopo-komprimiert.pdf")
    for heading in [
        (1, "Einführung in die Geometrie und Topologie"),  # the title page, two lines
        (1, "Vorwort"),
        (2, "Danksagungen"),
        (1, "1 Topologische Grundbegriffe"),
        (2, "1.1 Topologische Räume"),
        (2, "1.2 Metrische Räume"),
        (1, "5 Krümmung"),
        (2, "5.4 Erste und zweite Fundamentalform"),
        (3, "4.2.1 Flächeninhalt"),
        (1, "Stichwortverzeichnis"),
    ]:
        assert heading in found, heading
    titles = [title for _, title in found]
    # Once each: the running heads repeating them on every page are not headings.
    assert titles.count("1 Topologische Grundbegriffe") == 1
    assert titles.count("1.1 Topologische Räume") == 1


@pytest.mark.parametrize(
    "line",  # the start of the line
    [
        "Definition 1",  # a theorem-like lead-in in bold extended
        "Beispiel 1 (Topologien)",
        "Bemerkung 1 (Mengen, die offen & abgeschlossen sind, ex.)",
        "Abbildung 0.1: Beispiele für verschiedene Formen",  # a figure caption
        "U ⊆ R",  # a display formula in capitals
        "1.1 Topologische Räume . . . .",  # a contents line with dot leaders
        "1 Topologische Grundbegriffe 2",  # a contents line without dot leaders
        "0. Auflage, 31. Dezember 2016 Martin Thoma",  # the title page's date line
    ],
)
def test_a_thesis_line_that_only_looks_apart_is_not_a_heading(line: str) -> None:
    path = "layout/009-pdflatex-geotopo/GeoTopo-komprimiert.pdf"
    body = [text.strip() for text in _text(path).splitlines() if not text.startswith("#")]
    assert any(text.startswith(line) for text in body)  # kept as a line of the body
    assert not any(title.startswith(line) for _, title in _headings(path))
