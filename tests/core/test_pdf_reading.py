"""Reading order and page furniture on real PDFs (content_core.extract.pdf_reading): running
heads, page numbers and margin stamps leave the text and are kept as furniture; two-column
pages read column by column, footnotes after the body."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from content_core.extract import ExtractedText, PageFurniture, extract_text
from content_core.extract.pdf_layout import PageLayout, read_layout
from content_core.extract.pdf_reading import read_pages

CORPUS = Path(__file__).parents[1] / "corpus"
PAPER = CORPUS / "pdf" / "layout-parser-paper-fast.pdf"
TWO_COLUMNS = CORPUS / "pdf" / "multi-column-2p.pdf"
FOUR_PAGES = CORPUS / "layout" / "004-pdflatex-4-pages" / "pdflatex-4-pages.pdf"
THESIS = CORPUS / "layout" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"
MULTICOLUMN = CORPUS / "layout" / "026-latex-multicolumn" / "multicolumn.pdf"
CANAL = CORPUS / "layout" / "generated" / "canal-paper.pdf"
MEMO = CORPUS / "pdf" / "fake-memo.pdf"


@cache
def _extract(path: Path) -> ExtractedText:
    return extract_text(path.read_bytes(), "application/pdf", filename=path.name)


def _page(result: ExtractedText, number: int) -> str:
    span = result.pages[number - 1]
    return result.text[span.start : span.end]


def _layouts(path: Path) -> list[PageLayout]:
    document = pdfium.PdfDocument(path.read_bytes())
    try:
        layouts = []
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            text = str(textpage.get_text_range())
            layouts.append(read_layout(pdfium.raw, page, textpage, text, index))
            textpage.close()
            page.close()
        return layouts
    finally:
        document.close()


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("path", "stamp"),
    [
        pytest.param(PAPER, "arXiv:2103.15348v2 [cs.CV] 21 Jun 2021", id="layout-parser"),
        pytest.param(TWO_COLUMNS, "arXiv:2004.04906v3 [cs.CL] 30 Sep 2020", id="dpr"),
    ],
)
def test_vertical_arxiv_stamp_is_margin_furniture(path: Path, stamp: str) -> None:
    """The identifier set bottom to top in the left margin leaves the text, kept as margin."""
    result = _extract(path)
    assert PageFurniture(page=1, kind="margin", text=stamp) in result.furniture
    assert "arXiv:" not in result.text
    assert [f.page for f in result.furniture if f.kind == "margin"] == [1]


def test_page_numbers_of_a_latex_document_are_furniture() -> None:
    """pdflatex's bare page number at the foot of each of 4 pages is a page_number entry and
    no page keeps a line holding only its number; the body is untouched."""
    result = _extract(FOUR_PAGES)
    assert [(f.page, f.kind, f.text) for f in result.furniture] == [
        (n, "page_number", str(n)) for n in range(1, 5)
    ]
    for number in range(1, 5):
        lines = _page(result, number).splitlines()
        assert str(number) not in lines
    assert "Hello, here is some text without a meaning" in result.text


def test_thesis_running_heads_and_page_numbers_are_furniture_not_its_body() -> None:
    """The thesis' running heads (page number and section title, bold, small) are headers on
    the pages that carry them; the lines under them (a "Bemerkung", a heading) and the
    footnotes at the foot of a page stay in the text."""
    result = _extract(THESIS)
    headers = {f.page: f.text for f in result.furniture if f.kind == "header"}
    assert headers[7] == "4 1.1. TOPOLOGISCHE RÄUME"
    assert headers[8] == "5 1.1. TOPOLOGISCHE RÄUME"
    assert headers[11] == "8 1.2. METRISCHE RÄUME"
    assert len(headers) >= 100  # of 117 pages: chapter openings and the title pages have none
    # "4 1.1. TOPOLOGISCHE RÄUME", "2 Inhaltsverzeichnis", "101 Lösungen der Übungsaufgaben"
    head = re.compile(r"\d+ (?:(?:\d\.)+ [A-ZÄÖÜ -]+|[A-ZÄÖÜ][\w ]+)")
    assert all(head.fullmatch(text) for text in headers.values())
    assert "TOPOLOGISCHE RÄUME" not in _page(result, 7)
    assert "Bemerkung 29" in _page(result, 34)
    assert "1Diese Metrik wird auch „französische Eisenbahnmetrik“ genannt." in _page(result, 12)
    assert not {f.kind for f in result.furniture} - {"header", "page_number"}


def test_two_columns_read_left_column_then_right_with_footnotes_after() -> None:
    """DPR page 1 (looked at rendered): the left column ends "of improving retrieval." over
    three footnotes; the right column starts "Retrieval in open-domain QA is usually
    implemented". The footnotes come after the right column's last line."""
    page = _words(_page(_extract(TWO_COLUMNS), 1))
    assert "of improving retrieval. Retrieval in open-domain QA is usually implemented" in page
    body_end = page.index("state-of-the-art results on multiple open-domain")
    assert page.index("∗Equal contribution") > body_end
    assert page.index("1The code and trained models have been released at") > body_end
    # The title block above the columns keeps its own order.
    assert page.index("Dense Passage Retrieval") < page.index("Vladimir Karpukhin")
    assert page.index("danqic@cs.princeton.edu") < page.index("Abstract")


def test_interleaved_columns_are_put_in_column_order() -> None:
    """The two-column LaTeX page (looked at rendered: the left column ends "Vivamus viverra
    fermentum felis. Donec nonummy", the right one starts "pellentesque ante. Phasellus") with
    its lines given row by row across both columns, as some producers write them: read column
    by column all the same; the title and the page number stay where they belong."""
    layout = _layouts(MULTICOLUMN)[0]
    across = sorted(layout.lines, key=lambda line: (-round(line.top), line.left))
    shuffled = replace(layout, lines=tuple(across), text="\n".join(x.text for x in across))
    (page,), furniture = read_pages([shuffled]).pages, read_pages([shuffled]).furniture
    text = _words(page.text)
    assert "Donec nonummy pellentesque ante. Phasellus adipiscing semper elit." in text
    assert text.startswith("Two-Column Document with Lorem Ipsum Your Name January 3, 2024")
    assert text.index("This is a sample document") < text.index("Quisque ullamcorper placerat")
    assert [(f.kind, f.text) for f in furniture] == [("page_number", "1")]


def test_a_page_with_nothing_to_change_keeps_its_text_layer() -> None:
    """A one-column memo without furniture: the very same page comes back (PDFium's text)."""
    layouts = _layouts(MEMO)
    read = read_pages(layouts)
    assert read.furniture == ()
    assert all(a is b for a, b in zip(read.pages, layouts, strict=True))


def test_download_stamp_running_heads_and_footers_of_a_rendered_paper() -> None:
    """A LibreOffice-rendered paper with a rotated "Downloaded from" strip, a journal header
    and "Page n of 3" footers: all furniture, none in the text, the body kept."""
    result = _extract(CANAL)
    kinds = {(f.page, f.kind) for f in result.furniture}
    assert {(p, k) for p in (1, 2, 3) for k in ("margin", "header", "footer")} <= kinds
    margins = [f.text for f in result.furniture if f.kind == "margin"]
    stamp = "Downloaded from inland-navigation.example.org on 3 March 2026"
    assert margins == [stamp] * 3  # one entry a page, the strip PDFium cut in two joined
    assert "Downloaded from" not in result.text and "nloaded from" not in result.text
    assert "Page 2 of 3" not in result.text
    assert "Journal of Inland Navigation" not in result.text
    assert "Freight Routing on Inland Canals" in result.text
