"""PDF tables from the page layout: grids of ruling lines, and lines in aligned columns.

Used by `pdf_structure`; a table is the set of text lines it takes and its Markdown.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from content_core.extract._tables import SpanCell, markdown_table, spanned_table
from content_core.extract.pdf_layout import PageLayout, Ruling, TextLine

__all__ = ["Table", "aligned_tables", "continue_tables", "ruled_tables", "segments"]

# Rulings closer than this (points) are one line; a ruling ending this close to another meets it.
_SNAP_PT = 2.0
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
# A ruled grid with more cells than this is drawn art (a chart's grid), not looked at for spans.
_MAX_SPAN_GRID = 2500
# Rulings are paired with one another (quadratic); a page with more is a drawing, not a table.
_MAX_RULINGS = 1000


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


def _cluster(values: Sequence[float]) -> list[float]:
    out: list[float] = []
    for value in sorted(values):
        if out and value - out[-1] <= _SNAP_PT:
            continue
        out.append(value)
    return out


def _meets(h: Ruling, v: Ruling) -> bool:
    return (
        h.start - _SNAP_PT <= v.at <= h.end + _SNAP_PT
        and v.start - _SNAP_PT <= h.at <= v.end + _SNAP_PT
    )


def _grids(rulings: Sequence[Ruling]) -> list[tuple[list[Ruling], list[Ruling]]]:
    """Groups of horizontal and vertical rulings that touch one another (union-find)."""
    hs = [r for r in rulings if r.horizontal]
    vs = [r for r in rulings if not r.horizontal]
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, h in enumerate(hs):
        for j, v in enumerate(vs):
            if _meets(h, v):
                parent[find(i)] = find(len(hs) + j)
    groups: dict[int, tuple[list[Ruling], list[Ruling]]] = {}
    for i, h in enumerate(hs):
        groups.setdefault(find(i), ([], []))[0].append(h)
    for j, v in enumerate(vs):
        groups.setdefault(find(len(hs) + j), ([], []))[1].append(v)
    return list(groups.values())


def ruled_tables(layout: PageLayout) -> list[Table]:
    """Tables drawn as grids of ruling lines (a one-band grid: one row per text line)."""
    if len(layout.rulings) > _MAX_RULINGS:
        return []
    tables: list[Table] = []
    for hs, vs in _grids(layout.rulings):
        xs = _cluster([v.at for v in vs])
        ys = _cluster([h.at for h in hs])
        if len(xs) < 3 or len(ys) < 2:
            continue
        table = _grid_table(layout, xs, ys, vs, hs)
        if table is not None:
            tables.append(table)
    return tables


def _grid_table(
    layout: PageLayout,
    xs: list[float],
    ys: list[float],
    verticals: Sequence[Ruling],
    horizontals: Sequence[Ruling],
) -> Table | None:
    """Cells bounded by `xs` (left to right) and `ys` (bottom to top); a grid with one band
    of rows (only its outline ruled across) gets one row per text line. A line that a rule
    cuts through a word is text over the drawing, not a row, and stays text; a word across
    a column line that does not reach its height (a header over merged cells) stays whole."""
    one_band = len(ys) == 2
    members: list[int] = []
    rows: dict[int, list[list[str]]] = {}
    for index, line in enumerate(layout.lines):
        centre = (line.top + line.bottom) / 2
        if not (ys[0] < centre < ys[-1] and line.left < xs[-1] and line.right > xs[0]):
            continue
        cuts = sorted(v.at for v in verticals if v.start - _SNAP_PT <= centre <= v.end + _SNAP_PT)
        pieces = _cells_of_line(line, xs, cuts)
        if pieces is None:
            continue
        row = len(members) if one_band else len(ys) - 1 - bisect.bisect(ys, centre)
        members.append(index)
        cells = rows.setdefault(row, [[] for _ in range(len(xs) - 1)])
        for column, text in enumerate(pieces):
            if text:
                cells[column].append(text)
    grid = [[" ".join(cell) for cell in rows[key]] for key in sorted(rows)]
    grid = [row for row in grid if any(row)]
    # One row can be a table (a page break leaves one row of a ruled table on a page), but
    # then of three cells or more: two labelled boxes of a form are not a table.
    # A row with two cells of text at least: boxes each beside a label (check boxes) are not.
    filled = sum(1 for row in grid for cell in row if cell)
    widest = max((sum(1 for cell in row if cell) for row in grid), default=0)
    if widest < 2 or len(grid) == 1 and filled < 3:
        return None
    # Rules around text without a letter are a chart's frame and axes with their tick
    # labels, or a drawing: a table names what it holds somewhere.
    if not any(char.isalpha() for row in grid for cell in row for char in cell):
        return None
    merged = None if one_band else _merged_cells(rows, xs, ys, verticals, horizontals)
    markdown = spanned_table(*merged) if merged is not None else markdown_table(grid)
    if not markdown:
        return None
    extents = tuple(zip(xs, xs[1:], strict=False))
    return Table(members[0], set(members), markdown, extents, [] if merged else grid)


def _rules_along(rules: Sequence[Ruling], lines: list[float]) -> list[list[Ruling]]:
    """The rules on each of the grid lines `lines` (sorted; a rule snaps to its nearest)."""
    along: list[list[Ruling]] = [[] for _ in lines]
    for rule in rules:
        i = bisect.bisect(lines, rule.at)
        nearest = min(
            (j for j in (i - 1, i) if 0 <= j < len(lines)), key=lambda j: abs(lines[j] - rule.at)
        )
        if abs(lines[nearest] - rule.at) <= _SNAP_PT:
            along[nearest].append(rule)
    return along


def _merged_cells(
    rows: dict[int, list[list[str]]],
    xs: list[float],
    ys: list[float],
    verticals: Sequence[Ruling],
    horizontals: Sequence[Ruling],
) -> tuple[list[list[SpanCell]], int] | None:
    """The grid's cells with their spans, and its header rows, when a missing rule joins
    two cells (a header over two columns, a label over two rows); None when none does, or
    the joined cells are not rectangles (then the rules are not a cell grid)."""
    height, width = len(ys) - 1, len(xs) - 1
    if height * width > _MAX_SPAN_GRID:
        return None
    owner = list(range(height * width))

    def find(i: int) -> int:
        while owner[i] != i:
            owner[i] = owner[owner[i]]
            i = owner[i]
        return i

    # The rules along each grid line, so that each cell edge looks at its own line only.
    at_x = _rules_along(verticals, xs)
    at_y = _rules_along(horizontals, ys)

    def ruled(rules: Sequence[Ruling], across: float) -> bool:
        return any(r.start - _SNAP_PT <= across <= r.end + _SNAP_PT for r in rules)

    for r in range(height):
        top, bottom = ys[height - r], ys[height - r - 1]
        for c in range(width):
            if c + 1 < width and not ruled(at_x[c + 1], (top + bottom) / 2):
                owner[find(r * width + c + 1)] = find(r * width + c)
            if r + 1 < height and not ruled(at_y[height - r - 1], (xs[c] + xs[c + 1]) / 2):
                owner[find((r + 1) * width + c)] = find(r * width + c)
    groups: dict[int, list[int]] = {}
    for i in range(height * width):
        groups.setdefault(find(i), []).append(i)
    if len(groups) == height * width:
        return None
    starts: dict[int, SpanCell] = {}
    for cells in groups.values():
        top_row, last_row = cells[0] // width, cells[-1] // width
        left, right = min(i % width for i in cells), max(i % width for i in cells)
        if len(cells) != (last_row - top_row + 1) * (right - left + 1):
            return None
        text = " ".join(
            t for i in cells for t in rows.get(i // width, [[]] * width)[i % width] if t
        )
        starts[cells[0]] = SpanCell(text, last_row - top_row + 1, right - left + 1)
    grid = [
        [starts[r * width + c] for c in range(width) if r * width + c in starts]
        for r in range(height)
    ]
    header = max(cell.rows for cell in grid[0]) if grid and grid[0] else 1
    return [row for row in grid if row], header


def _cells_of_line(line: TextLine, xs: list[float], cuts: list[float]) -> list[str] | None:
    """The line's text per column between `xs`, or None when a rule at the line's height
    (`cuts`) passes through a word, a glyph, or a run of text whose characters share a box.

    The line is cut only by the rules at its height, so the text of merged cells (a header
    over two columns) stays in one cell, the first column it covers.
    """
    # The grid's outer edges bound every row, drawn at its height or not.
    bounds = [xs[0], *(x for x in cuts if xs[0] + _SNAP_PT < x < xs[-1] - _SNAP_PT), xs[-1]]
    pieces: list[list[str]] = [[] for _ in range(len(xs) - 1)]
    last = -1
    for char, left, right in zip(line.text, line.lefts, line.rights, strict=True):
        cell = bisect.bisect(bounds, (left + right) / 2) - 1
        if char.isspace():
            last = -1
        else:
            inside = bisect.bisect_right(bounds, left + _SNAP_PT)
            if inside < len(bounds) and bounds[inside] < right - _SNAP_PT:
                return None
            if last >= 0 and cell != last:
                return None
            last = cell
        if 0 <= cell < len(bounds) - 1:
            column = bisect.bisect(xs, bounds[cell] + _SNAP_PT) - 1
            pieces[min(max(column, 0), len(pieces) - 1)].append(char)
    return ["".join(chars).strip() for chars in pieces]


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
            any(abs(left - a) <= _SNAP_PT or abs(right - b) <= _SNAP_PT for a, b in edges)
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
                (c for c, (a, b) in enumerate(columns) if a - _SNAP_PT <= centre <= b + _SNAP_PT),
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
