"""PDF tables drawn with ruling lines: grids of touching rules, cells by the rules, and
merged cells where a rule between two cells is missing (rendered as an HTML table)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from content_core.extract._tables import SpanCell, markdown_table, spanned_table
from content_core.extract.pdf_layout import PageLayout, Ruling, TextLine
from content_core.extract.pdf_tables import SNAP_PT, Table

__all__ = ["ruled_tables"]

# A ruled grid with more cells than this is drawn art (a chart's grid), not looked at for spans.
_MAX_SPAN_GRID = 2500
# Rulings are paired with one another (quadratic); a page with more is a drawing, not a table.
_MAX_RULINGS = 1000


def _cluster(values: Sequence[float]) -> list[float]:
    out: list[float] = []
    for value in sorted(values):
        if out and value - out[-1] <= SNAP_PT:
            continue
        out.append(value)
    return out


def _meets(h: Ruling, v: Ruling) -> bool:
    return (
        h.start - SNAP_PT <= v.at <= h.end + SNAP_PT
        and v.start - SNAP_PT <= h.at <= v.end + SNAP_PT
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
        cuts = sorted(v.at for v in verticals if v.start - SNAP_PT <= centre <= v.end + SNAP_PT)
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
        if abs(lines[nearest] - rule.at) <= SNAP_PT:
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
        return any(r.start - SNAP_PT <= across <= r.end + SNAP_PT for r in rules)

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
    bounds = [xs[0], *(x for x in cuts if xs[0] + SNAP_PT < x < xs[-1] - SNAP_PT), xs[-1]]
    pieces: list[list[str]] = [[] for _ in range(len(xs) - 1)]
    last = -1
    for char, left, right in zip(line.text, line.lefts, line.rights, strict=True):
        cell = bisect.bisect(bounds, (left + right) / 2) - 1
        if char.isspace():
            last = -1
        else:
            inside = bisect.bisect_right(bounds, left + SNAP_PT)
            if inside < len(bounds) and bounds[inside] < right - SNAP_PT:
                return None
            if last >= 0 and cell != last:
                return None
            last = cell
        if 0 <= cell < len(bounds) - 1:
            column = bisect.bisect(xs, bounds[cell] + SNAP_PT) - 1
            pieces[min(max(column, 0), len(pieces) - 1)].append(char)
    return ["".join(chars).strip() for chars in pieces]
