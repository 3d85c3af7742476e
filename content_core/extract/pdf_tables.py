"""PDF tables from the page layout: lines in aligned columns, and tables continued across a
page break (grids of ruling lines: `pdf_ruled_tables`).

Used by `pdf_structure`; a table is the set of text lines it takes and its Markdown.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from content_core.extract._tables import markdown_table
from content_core.extract.pdf_layout import PageLayout, TextLine

__all__ = ["SNAP_PT", "Table", "aligned_tables", "continue_tables", "segments"]

# Rulings closer than this (points) are one line; a ruling ending this close to another meets it.
SNAP_PT = 2.0
# Columns of an unruled table are apart by at least this many times the font size.
_COLUMN_GAP_EM = 0.9
# Rows of an unruled table are at most this many font sizes apart.
_ROW_PITCH_EM = 3.0
_MIN_UNRULED_ROWS = 3
# A cell wrapped onto a second line sits at most this many font sizes below the first.
_WRAP_PITCH_EM = 1.5
_MAX_MEAN_CELL_CHARS = 40
_MAX_MEAN_CELL_WORDS = 5
# Share of the cells of an unruled table that hold text.
_MIN_FILL = 0.5
# Lines after a line (in the text layer's order) searched for the rest of its row.
_BESIDE_LOOKAHEAD = 8
# Cells of one row differ in font size and in top or bottom edge by less than this (em).
_ROW_SLACK_EM = 0.15
_MAX_COLUMNS = 30
# A line this short at a page's edge is a page number, not content.
_PAGE_MARK_CHARS = 4


@dataclass(slots=True)
class Table:
    """A table found on a page: its first line, every line it takes, its Markdown and the
    horizontal extent of each column."""

    first: int
    lines: set[int]
    markdown: str
    columns: tuple[tuple[float, float], ...] = ()
    grid: list[list[str]] = field(default_factory=list)
    """The cells, row by row, of a table rendered as Markdown (empty for HTML)."""


def segments(line: TextLine) -> list[tuple[float, float, str]]:
    """Return the line cut at gaps wider than a column gap: (left, right, text) per piece."""
    gap = _COLUMN_GAP_EM * line.size
    lefts, rights = line.lefts, line.rights
    if (
        lefts
        and lefts[0] - rights[0] <= gap
        and lefts.count(lefts[0]) == len(lefts)
        and rights.count(rights[0]) == len(rights)
    ):
        # One text run (every character has the line's box): no gap inside, one piece.
        visible = line.text.strip()
        return [(lefts[0], rights[0], visible)] if visible else []
    pieces: list[tuple[float, float, str]] = []
    start = previous = -1
    for index, char in enumerate(line.text):
        if char.isspace():
            continue
        if start < 0:
            start = index
        elif line.lefts[index] - line.rights[previous] > gap:
            pieces.append((line.lefts[start], line.rights[previous], line.text[start:index]))
            start = index
        previous = index
    if start >= 0:
        pieces.append((line.lefts[start], line.rights[previous], line.text[start:]))
    return [(left, right, text.strip()) for left, right, text in pieces]


_Piece = tuple[float, float, str]
_Entry = tuple[int, list[_Piece], bool]
"""A line of a table block: its index, its pieces, and whether it joins the row above."""


def aligned_tables(layout: PageLayout, taken: set[int]) -> list[Table]:
    """Tables of three or more lines in shared columns, among the lines not in `taken`.

    A line beside a row (PDFium may set cells on a line of their own when their baselines
    differ a little, or give a wrapped cell's lines before the rest of its row) or of one
    piece just below it (a cell wrapped onto more lines) belongs to that row.
    """
    tables: list[Table] = []
    block: list[_Entry] = []
    row: TextLine | None = None
    floor = 0.0
    consumed: set[int] = set()
    for index, line in enumerate(layout.lines):
        if index in consumed:
            continue
        pieces = segments(line) if index not in taken else []
        # A one-piece line inside a table may be a wrapped first cell whose row PDFium
        # gives after the wrapped lines.
        wrapped = block and len(pieces) == 1
        besides = (
            _besides(layout, index, pieces, taken | consumed, _row_edges(block)) if wrapped else []
        )
        count = len(pieces) + sum(len(other) for _, other in besides)
        pitch = floor - line.bottom if block else -1.0
        size = max(line.size, 1.0)
        beside = row is not None and line.bottom < row.top and line.top > row.bottom
        if pieces and block and beside:
            block.append((index, pieces, True))
        elif count >= 2 and (not block or 0 <= pitch <= _ROW_PITCH_EM * size):
            block.append((index, pieces, False))
            row = line
        elif count == 1 and block and 0 <= pitch <= _WRAP_PITCH_EM * size:
            block.append((index, pieces, True))
        else:
            _close_block(block, tables)
            block = [(index, pieces, False)] if count >= 2 else []
            row, floor = (line, line.bottom) if block else (None, 0.0)
            if block:
                block.extend((other, more, True) for other, more in besides)
                consumed.update(other for other, _ in besides)
            continue
        block.extend((other, more, True) for other, more in besides)
        consumed.update(other for other, _ in besides)
        floor = min(floor, line.bottom) if len(block) > 1 else line.bottom
    _close_block(block, tables)
    return tables


def _row_edges(block: list[_Entry]) -> list[tuple[float, float]]:
    return [(left, right) for _, pieces, joins in block if not joins for left, right, _ in pieces]


def _besides(
    layout: PageLayout,
    index: int,
    pieces: list[_Piece],
    skip: set[int],
    edges: list[tuple[float, float]],
) -> list[tuple[int, list[_Piece]]]:
    """Lines a little later in the text layer's order that sit beside line `index` (their
    middles within each other's height), clear of its pieces and with each piece starting or
    ending where a cell of the rows above does (`edges`): the rest of a row whose first cell
    wraps, which PDFium gives after the wrapped lines."""
    line = layout.lines[index]
    middle = (line.top + line.bottom) / 2
    spans = [(left, right) for left, right, _ in pieces]
    found: list[tuple[int, list[_Piece]]] = []
    for other in range(index + 1, min(index + _BESIDE_LOOKAHEAD, len(layout.lines))):
        candidate = layout.lines[other]
        if (
            other in skip
            or not candidate.bottom < middle < candidate.top
            or not line.bottom < (candidate.top + candidate.bottom) / 2 < line.top
            # Cells of a row share their font and their top or bottom edge; the parts of a
            # formula (a fraction, indices) do not.
            or abs(candidate.size - line.size) > _ROW_SLACK_EM * line.size
            or min(abs(candidate.top - line.top), abs(candidate.bottom - line.bottom))
            > _ROW_SLACK_EM * line.size
        ):
            continue
        more = segments(candidate)
        # Apart from the row's other cells by a column gap (a formula's parts are close).
        gap = _COLUMN_GAP_EM * line.size
        aligned = all(
            any(abs(left - a) <= SNAP_PT or abs(right - b) <= SNAP_PT for a, b in edges)
            for left, right, _ in more
        )
        if (
            more
            and aligned
            and all(b + gap < left or right + gap < a for left, right, _ in more for a, b in spans)
        ):
            found.append((other, more))
            spans += [(left, right) for left, right, _ in more]
    return found


def _close_block(block: list[_Entry], tables: list[Table]) -> None:
    rows = [pieces for _, pieces, joins in block if not joins]
    if len(rows) < _MIN_UNRULED_ROWS:
        return
    spans = sorted((left, right) for pieces in rows for left, right, _ in pieces)
    columns: list[list[float]] = []
    for left, right in spans:
        if columns and left <= columns[-1][1] + 1.0:
            columns[-1][1] = max(columns[-1][1], right)
        else:
            columns.append([left, right])
    if not 2 <= len(columns) <= _MAX_COLUMNS:
        return
    cells = [text for pieces in rows for _, _, text in pieces]
    # Cells of prose (columns of a page layout that PDFium joined line by line) are long.
    if (
        statistics.fmean(len(cell) for cell in cells) > _MAX_MEAN_CELL_CHARS
        or statistics.fmean(len(cell.split()) for cell in cells) > _MAX_MEAN_CELL_WORDS
    ):
        return
    grid: list[list[str]] = []
    members: set[int] = set()
    for index, pieces, joins in block:
        placed = _placed(pieces, columns)
        if placed is None or joins and not grid:
            continue
        if not joins:
            grid.append([""] * len(columns))
        for column, text in placed:
            grid[-1][column] = f"{grid[-1][column]} {text}".strip()
        members.add(index)
    # Columns are shared by the rows: words of staggered lines (a title page, spaced-out
    # letters) fall each in a column of their own.
    filled = [sum(1 for cells_row in grid if cells_row[c]) for c in range(len(columns))]
    if min(filled) < 2 or sum(filled) < _MIN_FILL * len(grid) * len(columns):
        return
    markdown = markdown_table(grid)
    if markdown:
        extents = tuple((column[0], column[1]) for column in columns)
        tables.append(Table(min(members), members, markdown, extents, grid))


def _placed(pieces: list[_Piece], columns: list[list[float]]) -> list[tuple[int, str]] | None:
    """The column of each piece: the one whose start precedes its middle, provided the piece
    stays clear of the neighbouring columns (a wrapped line may be wider than the first);
    None when a piece does not."""
    starts = [column[0] for column in columns]
    placed: list[tuple[int, str]] = []
    for left, right, text in pieces:
        column = max(bisect.bisect(starts, (left + right) / 2) - 1, 0)
        low = columns[column - 1][1] if column > 0 else float("-inf")
        high = columns[column + 1][0] if column + 1 < len(columns) else float("inf")
        if not low < left < right < high:
            return None
        placed.append((column, text))
    return placed


def continue_tables(
    layouts: Sequence[PageLayout], tables: Sequence[list[Table]], taken: Sequence[set[int]]
) -> None:
    """Add to `tables` the rows a page break cut off a table: up to two lines at the bottom
    of a page, in the columns of a table that opens the next page, or at the top of a page,
    in the columns of a table that closes the previous one (too few to be found alone).
    Running headers and footers (the same text, numbers aside, at the same height on two
    pages or more) and page numbers do not count as content between a table and the edge."""
    if len(layouts) < 2:
        return
    keys = [[_running_key(line) for line in layout.lines] for layout in layouts]
    places = Counter(place for page_keys in keys for place in set(page_keys))
    content = [
        [
            i
            for i, (line, key) in enumerate(zip(layout.lines, page_keys, strict=True))
            if len(line.text.strip()) > _PAGE_MARK_CHARS and places[key] < 2
        ]
        for layout, page_keys in zip(layouts, keys, strict=True)
    ]
    for index in range(len(layouts) - 1):
        here, there = layouts[index], layouts[index + 1]
        closing = _edge_table(content[index], tables[index], last=True)
        opening = _edge_table(content[index + 1], tables[index + 1], last=False)
        if opening is not None:
            tail = _edge_rows(here, content[index], taken[index], last=True)
            _add_fragment(here, tail, opening.columns, tables[index], taken[index])
        if closing is not None:
            head = _edge_rows(there, content[index + 1], taken[index + 1], last=False)
            _add_fragment(there, head, closing.columns, tables[index + 1], taken[index + 1])
            opening = _edge_table(content[index + 1], tables[index + 1], last=False)
            if opening is not None:
                _repeat_header(closing, opening)


def _repeat_header(closing: Table, opening: Table) -> None:
    """Give `opening`, the rest of `closing` on the next page, the header row of `closing`
    when the page does not repeat it: each page's part reads as a whole table, and the
    parts join into one table under one header."""
    if not closing.grid or not opening.grid or len(closing.columns) != len(opening.columns):
        return
    if any(
        a_right < b_left or b_right < a_left
        for (a_left, a_right), (b_left, b_right) in zip(
            closing.columns, opening.columns, strict=True
        )
    ):
        return
    header = closing.grid[0]
    if [" ".join(cell.split()) for cell in opening.grid[0]] == [
        " ".join(cell.split()) for cell in header
    ]:
        return
    opening.grid = [list(header), *opening.grid]
    opening.markdown = markdown_table(opening.grid)


def _running_key(line: TextLine) -> tuple[str, int]:
    text = line.text
    if not text.isascii():
        return "".join(c for c in text if not c.isdigit()).strip(), round(line.top)
    return text.translate(_NO_ASCII_DIGITS).strip(), round(line.top)


# ASCII text has no digits but 0-9, deleted in one C call.
_NO_ASCII_DIGITS = str.maketrans("", "", "0123456789")


def _edge_table(lines: list[int], tables: Sequence[Table], *, last: bool) -> Table | None:
    if not lines or not tables:
        return None
    edge = lines[-1] if last else lines[0]
    return next((table for table in tables if edge in table.lines and table.columns), None)


def _edge_rows(layout: PageLayout, lines: list[int], taken: set[int], *, last: bool) -> list[int]:
    rows: list[int] = []
    for index in reversed(lines) if last else lines:
        if index in taken or len(segments(layout.lines[index])) < 2 or len(rows) == 2:
            break
        rows.append(index)
    return sorted(rows)


def _add_fragment(
    layout: PageLayout,
    rows: list[int],
    columns: tuple[tuple[float, float], ...],
    tables: list[Table],
    taken: set[int],
) -> None:
    grid: list[list[str]] = []
    for index in rows:
        row = [""] * len(columns)
        for left, right, text in segments(layout.lines[index]):
            centre = (left + right) / 2
            column = next(
                (c for c, (a, b) in enumerate(columns) if a - SNAP_PT <= centre <= b + SNAP_PT),
                None,
            )
            if column is None:
                return
            row[column] = f"{row[column]} {text}".strip()
        grid.append(row)
    markdown = markdown_table(grid) if grid else ""
    if markdown:
        tables.append(Table(rows[0], set(rows), markdown, columns, grid))
        taken.update(rows)
