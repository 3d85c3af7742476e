"""PDF tables on real PDFs: cells keep their neighbours, merged headers come out as HTML,
a table across a page break reads as one table, and prose in columns is not a table."""

from __future__ import annotations

from functools import cache

import pytest

from content_core.extract._tables import SpanCell, html_table, spanned_table
from content_core.extract.base import Blob, ExtractOptions, SniffInfo
from content_core.extract.pdf import PdfiumExtractor
from tests.fixtures.corpus import CORPUS
from tests.fixtures.table_truth import (
    REAL_TRUTH,
    docx_grids,
    join_page_tables,
    neighbour_checks,
    score,
    text_tables,
)

TABLES = CORPUS / "layout" / "tables"
DOCX_CASES = sorted(p.stem for p in TABLES.glob("*.docx"))


@cache
def _pages(name: str) -> tuple[str, ...]:
    data = (CORPUS / name).read_bytes()
    result = PdfiumExtractor().extract(
        Blob(data, SniffInfo(media_type="application/pdf")), ExtractOptions()
    )
    return tuple(result.text[span.start : span.end] for span in result.pages)


def _found(name: str) -> list[list[list[str]]]:
    return join_page_tables([text_tables(page) for page in _pages(name)])


def test_corpus_has_every_kind_of_table() -> None:
    # ruled, borderless, partly ruled, merged header, and a page break with and without
    # the header repeated: each kind the finder claims to read has a rendered DOCX.
    assert DOCX_CASES == [
        "borderless",
        "merged-header",
        "page-break",
        "page-break-repeated-header",
        "partly-ruled",
        "ruled",
    ]


@pytest.mark.parametrize("stem", DOCX_CASES)
def test_rendered_docx_tables_keep_cell_neighbours(stem: str) -> None:
    checks = neighbour_checks(docx_grids(TABLES / f"{stem}.docx"))
    assert len(checks) >= 20
    passed = score(checks, _found(f"layout/tables/{stem}.pdf"))
    assert passed / len(checks) >= 0.95, f"{passed}/{len(checks)}"


@pytest.mark.parametrize("name", sorted(REAL_TRUTH))
def test_real_pdf_tables_keep_cell_neighbours(name: str) -> None:
    checks = neighbour_checks([grid for page in REAL_TRUTH[name] for grid in page])
    passed = score(checks, _found(name))
    assert passed / len(checks) >= 0.95, f"{passed}/{len(checks)}"


def test_real_pdf_tables_sit_on_their_pages() -> None:
    for name, pages in REAL_TRUTH.items():
        found = [len(text_tables(page)) for page in _pages(name)]
        assert found == [len(tables) for tables in pages], name


def test_merged_header_is_an_html_table_with_spans() -> None:
    (page,) = _pages("layout/tables/merged-header.pdf")
    start, end = page.index("<table>"), page.index("</table>")
    table = page[start:end]
    assert '<th rowspan="2">Method</th>' in table
    assert '<th colspan="2">Validation set</th>' in table
    assert '<th colspan="2">Test set</th>' in table
    assert "<td>Boosted trees</td><td>0.83</td>" in table
    # The spans are not also given as Markdown (the table is said once).
    assert "| Method" not in page


def test_merged_header_reads_the_same_from_the_docx_and_its_pdf() -> None:
    # One HTML renderer for every format: the DOCX's merged cells (gridSpan, vMerge) and
    # the PDF's missing rules give the same table.
    from content_core.extract.docx import DocxExtractor

    data = (TABLES / "merged-header.docx").read_bytes()
    media_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    text = DocxExtractor().extract(Blob(data, SniffInfo(media_type=media_type)), ExtractOptions())
    (page,) = _pages("layout/tables/merged-header.pdf")
    from_docx = text.text[text.text.index("<table>") : text.text.index("</table>")]
    assert from_docx == page[page.index("<table>") : page.index("</table>")]


@pytest.mark.parametrize("stem", ["page-break", "page-break-repeated-header"])
def test_table_across_a_page_break_is_one_table(stem: str) -> None:
    first, second = _pages(f"layout/tables/{stem}.pdf")
    before, after = text_tables(first)[-1], text_tables(second)[0]
    # Each page's part is a whole table under the same header, repeated in the PDF or not.
    assert before[0] == after[0] == ["Entry", "Account", "Amount"]
    assert before[-1][0] == "E-107"
    assert after[1][0] == "E-108"
    (joined,) = _found(f"layout/tables/{stem}.pdf")
    assert [row[0] for row in joined[1:]] == [f"E-{100 + i}" for i in range(30)]


def test_wrapped_cells_stay_one_cell() -> None:
    grids = _found("layout/tables/borderless.pdf") + _found("layout/tables/ruled.pdf")
    cells = {cell for grid in grids for row in grid for cell in row}
    assert "Oak plank, planed and oiled on both faces" in cells
    assert "standing water in the lower half most of the year" in cells


@pytest.mark.parametrize(
    "name",
    ["pdf/multi-column-2p.pdf", "pdf/layout-parser-paper-fast.pdf", "pdf/markitdown-test.pdf"],
)
def test_prose_in_columns_is_not_a_table(name: str) -> None:
    pages = _pages(name)
    assert sum(len(page) for page in pages) > 2000
    assert [text_tables(page) for page in pages] == [[] for _ in pages]
    assert not any("<table>" in page for page in pages)


def test_html_table_escapes_text_and_marks_header_cells() -> None:
    rows = [
        [SpanCell("A & B", columns=2)],
        [SpanCell("<x>"), SpanCell("y\n z")],
    ]
    assert html_table(rows) == (
        '<table>\n<tr><th colspan="2">A &amp; B</th></tr>\n'
        "<tr><td>&lt;x&gt;</td><td>y z</td></tr>\n</table>"
    )


def test_spanned_table_is_markdown_without_spans() -> None:
    rows = [[SpanCell("h1"), SpanCell("h2")], [SpanCell("a|b"), SpanCell("c")]]
    assert spanned_table(rows) == "| h1 | h2 |\n|---|---|\n| a\\|b | c |"
    assert spanned_table(rows, header_rows=2).startswith("<table>")


def test_html_table_of_empty_cells_is_empty() -> None:
    assert html_table([[SpanCell(" "), SpanCell("", rows=2)]]) == ""
