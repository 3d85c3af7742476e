"""Markdown structure for PDF pages: headings and tables recovered from the page layout.

- Headings (`pdf_headings`): lines set apart from the body text by size, weight, font,
  capitals and space, leveled by their section numbers or look; the outline confirms them.
- Tables: grids of ruling lines (cells by the rules), and blocks of lines whose text falls in
  aligned columns separated by wide gaps (no rules, or horizontal rules only).

A page on which nothing is found keeps its text-layer text exactly. Each page's Markdown
stays that page's part, so page spans (and the chunkers' offsets) keep matching; each part
comes with the boxes of its lines (a table or a heading is one box, the extent of its lines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from content_core.extract.base import TextBox
from content_core.extract.pdf_headings import Heading, find_headings
from content_core.extract.pdf_layout import OutlineEntry, PageLayout, TextLine
from content_core.extract.pdf_ruled_tables import ruled_tables
from content_core.extract.pdf_tables import Table, aligned_tables, continue_tables

__all__ = ["PageText", "structure_pages"]


@dataclass(frozen=True, slots=True)
class PageText:
    """A page's text and where its lines lie (offsets into `text`, see `TextBox`)."""

    text: str
    boxes: tuple[TextBox, ...]


@dataclass(slots=True)
class _Page:
    layout: PageLayout
    tables: list[Table] = field(default_factory=list)
    headings: dict[int, Heading] = field(default_factory=dict)


def structure_pages(
    layouts: Sequence[PageLayout], outline: Sequence[OutlineEntry]
) -> list[PageText]:
    """Return each page's text with headings as `#` lines and tables as Markdown tables, and
    its line boxes."""
    pages = [_Page(layout) for layout in layouts]
    for page in pages:
        page.tables = ruled_tables(page.layout)
        page.tables += aligned_tables(page.layout, _table_lines(page))
    continue_tables(layouts, [page.tables for page in pages], [_table_lines(p) for p in pages])
    found = find_headings(layouts, outline, [_table_lines(page) for page in pages])
    for page, headings in zip(pages, found, strict=True):
        page.headings = headings
    return [_render(page) for page in pages]


def _table_lines(page: _Page) -> set[int]:
    return {i for table in page.tables for i in table.lines}


def _render(page: _Page) -> PageText:
    rendered = _rendered(page)
    return PageText(rendered.text, _on_page(rendered.boxes, page.layout))


def _on_page(boxes: Sequence[TextBox], layout: PageLayout) -> tuple[TextBox, ...]:
    """The `boxes` that lie at least partly on the page's visible box: text drawn outside it
    (page numbers set below the crop box, one over another) has no place to show."""
    if layout.top <= layout.bottom:
        return tuple(boxes)
    return tuple(box for box in boxes if box.y1 > layout.bottom and box.y0 < layout.top)


def _rendered(page: _Page) -> PageText:
    layout = page.layout
    number = layout.index + 1
    if layout.rtl_lines:
        return PageText(layout.text, tuple(_rtl_boxes(layout.text, layout.rtl_lines, number)))
    if not page.tables and not page.headings:
        return PageText(layout.text, tuple(_found_boxes(layout.text, layout.lines, number)))
    starts = {table.first: table for table in page.tables}
    skip = _table_lines(page) | {i for h in page.headings.values() for i in h.lines[1:]}
    out: list[str] = []
    boxes: list[TextBox] = []
    offset = 0
    # A block after another is set off by a blank line; a line of a paragraph by a newline.
    joint = ""
    for index, line in enumerate(layout.lines):
        if index in starts:
            table = starts[index]
            offset += _put(out, "\n\n" if out else "")
            lines = [layout.lines[i] for i in sorted(table.lines)]
            boxes += _table_boxes(lines, table.markdown, offset, number)
            offset += _put(out, table.markdown)
            joint = "\n\n"
        elif index in page.headings:
            heading = page.headings[index]
            marks = "#" * (heading.level or 1) + " "
            text = " ".join(heading.text.split())
            offset += _put(out, ("\n\n" if out else "") + marks)
            lines = [layout.lines[i] for i in heading.lines]
            boxes += _row_boxes(lines, text, offset, number)
            offset += _put(out, text)
            joint = "\n\n"
        elif index not in skip:
            text = line.text.rstrip()
            offset += _put(out, joint)
            boxes += _line_boxes(line, offset, text, number)
            offset += _put(out, text)
            joint = "\n"
    return PageText("".join(out), tuple(boxes))


def _put(out: list[str], piece: str) -> int:
    out.append(piece)
    return len(piece)


def _line_boxes(line: TextLine, start: int, text: str, page: int) -> list[TextBox]:
    """The boxes of `line` whose (stripped) `text` starts at `start`: its glyphs' extent, one
    box per row of glyphs when the line wraps."""
    edges: tuple[float, ...] = ()
    if line.angle == 0.0 and line.glyph_lefts is not None:
        edges = tuple(line.glyph_lefts[: len(text)])
    if not line.glyph_rows or not edges:
        bottom, top = _extent(line)
        return [TextBox(start, start + len(text), page, line.left, bottom, line.right, top,
                        edges)]  # fmt: skip
    boxes: list[TextBox] = []
    rows = line.glyph_rows
    for number, row in enumerate(rows):
        first = min(row.start, len(text))
        last = min(rows[number + 1].start if number + 1 < len(rows) else len(text), len(text))
        if last <= first:
            continue
        row_edges = edges[first:last]
        right = line.right if number + 1 == len(rows) else max(row_edges)
        # The row's right edge: the last glyph's right is not kept; the next row's start is
        # no help, so the widest left edge stands in, widened by one glyph of the line's size.
        if number + 1 < len(rows):
            right = min(line.right, right + line.size)
        boxes.append(TextBox(start + first, start + last, page, min(row_edges), row.bottom,
                             right, row.top, row_edges))  # fmt: skip
    return boxes


def _extent(line: TextLine) -> tuple[float, float]:
    """Bottom and top of the line's glyphs (of its font's descent and ascent if unknown)."""
    if line.glyph_bottom is None or line.glyph_top is None:
        return line.bottom, line.top
    return line.glyph_bottom, line.glyph_top


def _block_box(lines: Sequence[TextLine], start: int, end: int, page: int) -> TextBox:
    """One box over `lines` (a table, a heading) for the text from `start` to `end`."""
    extents = [_extent(line) for line in lines]
    return TextBox(
        start, end, page, min(line.left for line in lines), min(b for b, _ in extents),
        max(line.right for line in lines), max(t for _, t in extents),
    )  # fmt: skip


def _table_boxes(
    lines: Sequence[TextLine], markdown: str, start: int, page: int
) -> list[TextBox]:
    """A box per row of the table rendered as `markdown` (Markdown or HTML) at `start`, when
    its rows match the rows its lines sit in; else one box over the table."""
    rendered: list[tuple[int, int]] = []
    at = 0
    for text in markdown.split("\n"):
        markup = text.startswith("|") and not set(text) <= set("|-: ")
        if markup or text.startswith("<tr"):
            rendered.append((at, at + len(text)))
        at += len(text) + 1
    rows = _rows_of(lines)
    if len(rows) != len(rendered):
        rows = _rows_by_text(lines, [markdown[a:b] for a, b in rendered])
    if len(rows) != len(rendered):
        return [_block_box(lines, start, start + len(markdown), page)]
    boxes: list[TextBox] = []
    for row, (first, last) in zip(rows, rendered, strict=True):
        boxes += _row_boxes(row, markdown[first:last], start + first, page)
    return boxes


def _row_boxes(row: Sequence[TextLine], text: str, start: int, page: int) -> list[TextBox]:
    """The boxes of a table row (or a heading) rendered as `text` at `start`: one per line of
    it, in text order, when each line's text is found in `text` (a chunk that starts or ends
    inside it is boxed by its lines); else one box over all of `row`."""
    boxes: list[TextBox] = []
    used: list[tuple[int, int]] = []
    for line in row:
        stripped = line.text.strip()
        at = text.find(stripped) if stripped else -1
        while at >= 0 and any(a < at + len(stripped) and at < b for a, b in used):
            at = text.find(stripped, at + 1)
        if at >= 0:
            used.append((at, at + len(stripped)))
            boxes += _line_boxes(line, start + at, stripped, page)
            continue
        pieces = _cell_pieces(line, text, start, page)
        if not pieces:
            return [_block_box(row, start, start + len(text), page)]
        boxes += pieces
    return sorted(boxes, key=lambda box: box.start)


def _cell_pieces(line: TextLine, text: str, start: int, page: int) -> list[TextBox]:
    """The boxes of a one-row `line` that crosses cells of the row rendered as `text` at
    `start`: its characters found in order among the row's (markup and white space aside), a
    box per run that no markup interrupts; empty when the line is not found so."""
    if line.glyph_rows or line.angle != 0.0 or len(line.lefts) != len(line.text):
        return []
    kept = [(i, c) for i, c in enumerate(line.text) if not c.isspace()]
    places = [m.start() for m in re.finditer(r"\S", _MARKUP.sub(_blank, text))]
    chars = "".join(text[i] for i in places)
    at = chars.find("".join(c for _, c in kept))
    if at < 0 or not kept:
        return []
    runs: list[list[tuple[int, int]]] = []
    for k, (index, _) in enumerate(kept):
        place = places[at + k]
        if runs and not set(text[runs[-1][-1][1] + 1 : place]) & set("<>|"):
            runs[-1].append((index, place))
        else:
            runs.append([(index, place)])
    bottom, top = _extent(line)
    return [_piece(line, text, run, start, page, bottom, top) for run in runs]


def _piece(
    line: TextLine, text: str, run: Sequence[tuple[int, int]], start: int, page: int,
    bottom: float, top: float,
) -> TextBox:
    """The box of one `run` of (line index, row offset) pairs: with its glyphs' left edges
    when its text in the row is the line's own, character for character."""
    (first, at), (last, end) = run[0], run[-1]
    lefts = line.glyph_lefts if line.glyph_lefts is not None else line.lefts
    edges = tuple(lefts[first : last + 1]) if text[at : end + 1] == line.text[first : last + 1] \
        else ()
    return TextBox(start + at, start + end + 1, page, line.lefts[first], bottom,
                   max(line.rights[i] for i, _ in run), top, edges)


def _blank(match: re.Match[str]) -> str:
    """White space as long as the markup `match` found (offsets keep their places)."""
    return " " * len(match.group(0))


_MARKUP = re.compile(r"<[^>]*>|[|\s]")


def _rows_by_text(lines: Sequence[TextLine], rendered: Sequence[str]) -> list[list[TextLine]]:
    """`lines` grouped by the `rendered` row whose text holds theirs, top to bottom (a row
    whose cells wrap onto several lines); empty when a line is in no row or a row gets none."""
    texts = [_MARKUP.sub("", row) for row in rendered]
    rows: list[list[TextLine]] = [[] for _ in texts]
    at = 0
    for line in sorted(lines, key=lambda line: -line.top):
        text = _MARKUP.sub("", line.text)
        found = next((i for i in range(at, len(texts)) if text in texts[i]), None)
        if found is None:
            return []
        rows[found].append(line)
        at = found
    return rows if all(rows) else []


def _rows_of(lines: Sequence[TextLine]) -> list[list[TextLine]]:
    """`lines` grouped into rows, top to bottom: a line whose middle lies within the row's
    height joins it."""
    rows: list[list[TextLine]] = []
    low = high = 0.0
    for line in sorted(lines, key=lambda line: -line.top):
        middle = (line.top + line.bottom) / 2
        if rows and low <= middle <= high:
            rows[-1].append(line)
            continue
        rows.append([line])
        low, high = line.bottom, line.top
    return rows


def _rtl_boxes(text: str, drawn: Sequence[TextLine], page: int) -> list[TextBox]:
    """A box per line of a right-to-left page's (logical) `text`, from its `drawn` lines one
    for one; none when their counts differ. No glyph edges: the order is not the drawing's."""
    spans: list[tuple[int, int]] = []
    at = 0
    for piece in text.split("\n"):
        stripped = piece.rstrip()
        if stripped.strip():
            spans.append((at, at + len(stripped)))
        at += len(piece) + 1
    if len(spans) != len(drawn):
        return []
    boxes: list[TextBox] = []
    for (start, end), line in zip(spans, drawn, strict=True):
        bottom, top = _extent(line)
        boxes.append(TextBox(start, end, page, line.left, bottom, line.right, top))
    return boxes


def _found_boxes(text: str, lines: Sequence[TextLine], page: int) -> list[TextBox]:
    """The boxes of `lines` in the page `text` they make up in order (the text layer's own,
    lines joined by CRLF, or `pdf_reading`'s reordering)."""
    boxes: list[TextBox] = []
    cursor = 0
    for line in lines:
        stripped = line.text.rstrip()
        at = text.find(stripped, cursor)
        if at < 0:
            continue
        boxes += _line_boxes(line, at, stripped, page)
        cursor = at + len(stripped)
    return boxes
