"""PDF headings and tables as Markdown, on generated PDFs whose structure is known."""

from __future__ import annotations

import io
import re

import pypdfium2 as pdfium
import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, clean_text
from content_core.extract.pdf import PdfiumExtractor
from tests.fixtures.structured_pdf import TABLE_STYLES, make_structured_pdf

_HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)


def _extract(data: bytes) -> ExtractedText:
    blob = Blob(data, SniffInfo(media_type="application/pdf"))
    return PdfiumExtractor().extract(blob, ExtractOptions())


def _text_layer(data: bytes) -> str:
    """The first page's text as PDFium's text layer gives it, cleaned as extraction cleans."""
    document = pdfium.PdfDocument(data)
    try:
        return clean_text(document[0].get_textpage().get_text_range()).strip("\n")
    finally:
        document.close()


def _table_rows(text: str) -> set[tuple[str, ...]]:
    return {
        tuple(cell.strip() for cell in line[2:-2].split(" | "))
        for line in text.splitlines()
        if line.startswith("| ") and line.endswith(" |")
    }


@pytest.mark.parametrize("outline", [True, False], ids=["bookmarks", "font-only"])
def test_headings_come_out_at_their_levels(outline: bool) -> None:
    doc = make_structured_pdf(4, outline=outline)
    found = {text: len(marks) for marks, text in _HEADING.findall(_extract(doc.data).text)}
    assert found == {text: level for level, text in doc.headings}


@pytest.mark.parametrize("seed", range(len(TABLE_STYLES)), ids=lambda s: f"seed{s}")
def test_tables_come_out_as_markdown_tables(seed: int) -> None:
    # One section per document, so its table stays on one page; the seeds give the table
    # styles in turn (grid, rules only, no rules, no rules with wrapped cells).
    doc = make_structured_pdf(seed, sections=1)
    assert len(doc.tables) == 1
    rows = _table_rows(_extract(doc.data).text)
    for table in doc.tables:
        assert all(row in rows for row in table), table


def test_headings_and_tables_lie_in_their_page_spans() -> None:
    doc = make_structured_pdf(2)
    result = _extract(doc.data)
    document = pdfium.PdfDocument(doc.data)
    try:
        assert len(result.pages) == len(document)
        for span in result.pages:
            layer = document[span.page - 1].get_textpage().get_text_range()
            page_text = result.text[span.start : span.end]
            for _, text in _HEADING.findall(page_text):
                assert text in clean_text(layer).replace("\n", " ")
    finally:
        document.close()
    for level, text in doc.headings:
        offset = result.text.index("#" * level + " " + text + "\n")
        assert any(span.start <= offset < span.end for span in result.pages)
    for table in doc.tables:
        row = "| " + " | ".join(table[-1]) + " |"
        offset = result.text.index(row)
        span = next(s for s in result.pages if s.start <= offset < s.end)
        assert offset + len(row) <= span.end


def test_a_bookmark_makes_a_body_font_line_a_heading() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    pdf.drawString(72, 780, "Memo QX7")
    pdf.bookmarkHorizontal("memo", 0, 790)
    pdf.addOutlineEntry("Memo QX7", "memo", level=0)
    pdf.drawString(72, 760, "Opening words of the memo in the body font.")
    pdf.drawString(72, 740, "Terms of payment")
    pdf.bookmarkHorizontal("terms", 0, 750)
    pdf.addOutlineEntry("Terms of payment", "terms", level=1)
    pdf.drawString(72, 720, "Payment is due within thirty days of the invoice date.")
    pdf.save()
    text = _extract(buffer.getvalue()).text
    assert text.startswith("# Memo QX7\n\nOpening words of the memo in the body font.\n")
    assert "\n## Terms of payment\n" in text


def test_a_page_without_structure_keeps_its_text_layer() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    for number in range(12):
        pdf.drawString(72, 760 - 14 * number, f"Line {number} of a plain memo ZK{number} here.")
    pdf.save()
    assert _extract(buffer.getvalue()).text == _text_layer(buffer.getvalue())


@pytest.mark.parametrize("seed", [2, 24], ids=lambda s: f"seed{s}")
def test_a_table_cut_by_a_page_break_keeps_its_rows(seed: int) -> None:
    # With these seeds a table starts at the foot of a page and ends on the next one, one or
    # two of its rows on one side: too few to be a table alone.
    doc = make_structured_pdf(seed)
    result = _extract(doc.data)
    pages = [_table_rows(result.text[s.start : s.end]) for s in result.pages]
    split = [
        table
        for table in doc.tables
        if sum(1 for rows in pages if any(row in rows for row in table)) == 2
    ]
    assert split
    rows = set().union(*pages)
    for table in doc.tables:
        assert all(row in rows for row in table), table


def test_a_section_number_set_apart_from_its_title_is_one_heading() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(72, 760, "2")
    pdf.drawString(72 + 22, 760, "Method QS1")  # a quad away, as LaTeX sets it
    pdf.setFont("Helvetica", 10)
    for number in range(6):
        pdf.drawString(72, 730 - 13 * number, f"Body line {number} of the method section here.")
    pdf.save()
    text = _extract(buffer.getvalue()).text
    assert text.startswith("# 2 Method QS1\n\nBody line 0 of the method section here.\n")


def test_markdown_chunks_of_a_pdf_find_their_headings_and_pages() -> None:
    from content_core import MarkdownChunker

    doc = make_structured_pdf(5)
    result = _extract(doc.data)
    document = pdfium.PdfDocument(doc.data)
    try:
        layers = [page.get_textpage().get_text_range() for page in document]
    finally:
        document.close()
    chunks = MarkdownChunker(max_chunk_tokens=120, chunk_overlap=0).chunk(result.text)
    for level, heading in doc.headings:
        offset = result.text.index("#" * level + " " + heading + "\n")
        # The page span holding the heading is the page whose text layer holds it.
        [span] = [s for s in result.pages if s.start <= offset < s.end]
        assert heading in layers[span.page - 1]
        chunk = next(c for c in chunks if c.source_start <= offset < c.source_end)
        assert chunk.content.endswith(result.text[chunk.source_start : chunk.source_end])
        assert heading in chunk.content


def test_two_columns_of_prose_are_not_a_table() -> None:
    # Lines of two text columns share baselines; PDFium may join them into one line each,
    # with a wide gap between the halves, like the rows of a table without rules.
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    words = "the survey of river birds counted herons and egrets along both banks".split()
    for number in range(20):
        left = " ".join(words[(number + k) % len(words)] for k in range(7))
        right = " ".join(words[(number + 3 + k) % len(words)] for k in range(7))
        pdf.drawString(72, 760 - 13 * number, left)
        pdf.drawString(310, 760 - 13 * number, right)
    pdf.save()
    text = _extract(buffer.getvalue()).text
    assert "|" not in text
    assert "the survey of river birds counted herons" in text


def test_a_page_that_is_a_dense_drawing_keeps_its_text_layer() -> None:
    # Graph paper: tens of thousands of rules, more than a page's budget of path segments;
    # the page is a drawing, not a table, and keeps its text as the text layer gives it.
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setLineWidth(0.1)
    lines = [(x, 40, x, 800) for x in range(40, 560, 1)]
    lines += [(40, y, 560, y) for y in range(40, 800, 1)] * 20
    pdf.lines(lines)
    pdf.setFont("Helvetica", 10)
    for number in range(3):
        pdf.drawString(72, 700 - 14 * number, f"Note {number} written on graph paper QG{number}.")
    pdf.save()
    assert _extract(buffer.getvalue()).text == _text_layer(buffer.getvalue())


def test_two_labelled_form_boxes_are_not_a_table() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    for column in range(2):
        for row in range(2):
            pdf.rect(72 + 120 * column, 700 - 20 * row, 120, 20)
    pdf.drawString(78, 706, "Female QF1")
    pdf.drawString(198, 706, "Male QF2")
    pdf.drawString(72, 640, "Tick one box.")
    pdf.save()
    text = _extract(buffer.getvalue()).text
    assert "|" not in text
    assert "Female QF1" in text


def test_a_header_over_merged_cells_stays_in_its_ruled_table() -> None:
    from reportlab.lib import colors
    from reportlab.platypus import SimpleDocTemplate, Table, TableStyle

    rows = [
        ["Region", "Quarterly results QM1", ""],
        ["", "First", "Second"],
        ["North", "10", "12"],
        ["South", "7", "9"],
    ]
    table = Table(rows, hAlign="LEFT")
    table.setStyle(
        TableStyle([("SPAN", (1, 0), (2, 0)), ("GRID", (0, 0), (-1, -1), 0.5, colors.black)])
    )
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4).build([table])
    # A header over merged cells is a span Markdown cannot say: the table is HTML.
    text = _extract(buffer.getvalue()).text
    assert "<tr><td>North</td><td>10</td><td>12</td></tr>" in text
    assert "<tr><td>South</td><td>7</td><td>9</td></tr>" in text
    assert '<th colspan="2">Quarterly results QM1</th>' in text


def test_a_bookmark_without_the_section_number_finds_its_numbered_heading() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    pdf.drawString(72, 760, "Opening words of the report in the body font.")
    pdf.drawString(72, 740, "4.2 Limits of liability QB1")
    pdf.bookmarkHorizontal("limits", 0, 750)
    pdf.addOutlineEntry("Limits of liability QB1", "limits", level=0)
    pdf.drawString(72, 720, "Liability is limited to the fees paid.")
    pdf.save()
    text = _extract(buffer.getvalue()).text
    assert "\n# 4.2 Limits of liability QB1\n" in text


def test_an_unruled_table_keeps_cells_wrapped_onto_two_lines() -> None:
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

    style = ParagraphStyle("cell", fontName="Helvetica", fontSize=10, leading=12)
    rows = [
        ["Part", "Description", "Price"],
        ["bolt", Paragraph("Hex bolt in zinc plated steel QW1 for frames", style), "0.40"],
        ["nut", "Hex nut QW2", "0.10"],
        ["washer", Paragraph("Flat washer for the bolt above, wide QW3 rim", style), "0.05"],
        ["pin", "Split pin QW4", "0.02"],
    ]
    table = Table(rows, colWidths=[60, 130, 50], hAlign="LEFT")
    # Cells aligned at their top, as word processors set them.
    table.setStyle(
        TableStyle(
            [("FONT", (0, 0), (-1, -1), "Helvetica", 10), ("VALIGN", (0, 0), (-1, -1), "TOP")]
        )
    )
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4).build([table])
    found = _table_rows(_extract(buffer.getvalue()).text)
    assert ("bolt", "Hex bolt in zinc plated steel QW1 for frames", "0.40") in found
    assert ("washer", "Flat washer for the bolt above, wide QW3 rim", "0.05") in found
    assert ("pin", "Split pin QW4", "0.02") in found
