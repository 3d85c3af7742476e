"""PDF pages as a reader takes them in: page furniture set aside (`pdf_furniture`) and the
body's lines in column order, full-width rows between bands of columns, footnotes last.

Works on `pdf_layout.PageLayout`s before headings and tables are looked for. Lines are
reordered only when the page shows clear columns (gutters in the x-projection of its lines);
a page where nothing changes keeps its text-layer text exactly.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from content_core.extract.base import PageFurniture
from content_core.extract.pdf_furniture import (
    Shape,
    find_furniture,
    furniture_entries,
    page_rows,
    page_shape,
)
from content_core.extract.pdf_layout import PageLayout, TextLine

__all__ = ["ReadPages", "read_pages"]

_NOTE_MARKS = "*∗†‡§¶"
# Columns: lines shorter than this do not vote (superscripts, labels); a column needs
# this many lines on each side of its gutter.
_MIN_COLUMN_CHARS = 8
_MIN_COLUMN_LINES = 5
_MIN_GUTTER_PT = 4.0
_MAX_DEPTH = 2


@dataclass(frozen=True, slots=True)
class ReadPages:
    """The pages with furniture out of their lines and their lines in reading order, and the
    furniture taken out (page order, then line order)."""

    pages: tuple[PageLayout, ...]
    furniture: tuple[PageFurniture, ...]


def read_pages(layouts: Sequence[PageLayout]) -> ReadPages:
    """Return `layouts` with furniture removed and lines in reading order, plus the
    furniture; a page where nothing changes is returned as it came (same text)."""
    body = _body_size(layouts)
    if body <= 0:
        return ReadPages(tuple(layouts), ())
    shapes = [page_shape(layout) for layout in layouts]
    found = find_furniture(layouts, shapes, body)
    pages: list[PageLayout] = []
    furniture: list[PageFurniture] = []
    for number, layout in enumerate(layouts):
        kinds = found[number]
        if kinds and len(kinds) == len(layout.lines):
            kinds = {}  # a page that is all furniture keeps it: nothing would be left
        kept = [i for i in range(len(layout.lines)) if i not in kinds]
        order = _reading_order(layout, shapes[number], kept, body)
        furniture += furniture_entries(layout, kinds, number + 1)
        if not kinds and order == kept:
            pages.append(layout)
            continue
        lines = tuple(layout.lines[i] for i in order)
        text = "\n".join(line.text for line in lines)
        pages.append(replace(layout, text=text, lines=lines))
    return ReadPages(tuple(pages), tuple(furniture))


def _body_size(layouts: Sequence[PageLayout]) -> float:
    sizes: Counter[float] = Counter()
    for layout in layouts:
        for line in layout.lines:
            sizes[round(line.size * 2) / 2] += len(line.text.strip())
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _reading_order(layout: PageLayout, shape: Shape, kept: list[int], body: float) -> list[int]:
    """`kept` (line indices) in reading order: `kept` itself unless the page has columns."""
    lines, spans = layout.lines, shape.spans
    upright = [i for i in kept if shape.upright[i]]
    gutters = _gutters(lines, spans, upright, 0)
    if not gutters:
        return kept
    edges = sorted(g for gutter in gutters for g in gutter)
    rows = page_rows(layout, shape, upright)
    # A row with a line across a gutter (a title, an author list, a wide caption) is read
    # whole, in its own order; full-width rows cut the page into bands read one after the
    # other, column by column within a band.
    spanning = [row for row in rows if any(_crosses(spans[i], gutters) for i in row.lines)]
    centres = sorted(-(row.top + row.bottom) / 2 for row in spanning)
    keys: dict[int, tuple[int, int, int]] = {}
    for rank, row in enumerate(spanning):
        for index in row.lines:
            keys[index] = (2 * rank + 1, 0, index)
    column: dict[int, int] = {}
    for index in kept:
        if index in keys:
            continue
        line = lines[index]
        column[index] = bisect_left(edges, (spans[index][0] + spans[index][1]) / 2) // 2
        band = bisect_left(centres, -(line.top + line.bottom) / 2)
        keys[index] = (2 * band, column[index], index)
    last = 2 * len(spanning)
    for index in _footnotes(lines, [i for i in column if keys[i][0] == last], column, body):
        keys[index] = (last + 1, column[index], index)
    return sorted(kept, key=lambda i: keys[i])


def _crosses(span: tuple[float, float], gutters: list[tuple[float, float]]) -> bool:
    return any(span[0] < left and span[1] > right for left, right in gutters)


def _gutters(
    lines: Sequence[TextLine], spans: list[tuple[float, float]], indices: list[int], depth: int
) -> list[tuple[float, float]]:
    """The gaps between text columns among `indices`: an x-range that few lines cross with
    at least `_MIN_COLUMN_LINES` lines of real text on each side, split again on each side."""
    voters = [i for i in indices if len(lines[i].text.strip()) >= _MIN_COLUMN_CHARS]
    if depth > _MAX_DEPTH or len(voters) < 2 * _MIN_COLUMN_LINES:
        return []
    lefts = sorted(spans[i][0] for i in voters)
    rights = sorted(spans[i][1] for i in voters)
    low, high = lefts[0], rights[-1]
    width = high - low
    if width <= 0:
        return []
    best: tuple[int, float] | None = None
    for x in (*(r + 0.5 for r in rights), *(left - 0.5 for left in lefts)):
        if not low + 0.2 * width <= x <= high - 0.2 * width:
            continue
        crossing = bisect_left(lefts, x) - bisect_right(rights, x)
        if best is None or crossing < best[0]:
            best = (crossing, x)
    if best is None:
        return []
    crossing, x = best
    left_side = [i for i in voters if spans[i][1] <= x]
    right_side = [i for i in voters if spans[i][0] >= x]
    if min(len(left_side), len(right_side)) < _MIN_COLUMN_LINES:
        return []
    if crossing > 0.5 * min(len(left_side), len(right_side)):
        return []
    gap_left = max(spans[i][1] for i in left_side)
    gap_right = min(spans[i][0] for i in right_side)
    if gap_right - gap_left < _MIN_GUTTER_PT:
        return []
    # Text columns, not the cells of a table: their lines fill most of the column's width.
    for side, start, end in ((left_side, low, gap_left), (right_side, gap_right, high)):
        widths = [spans[i][1] - spans[i][0] for i in side]
        if statistics.median(widths) < 0.6 * (end - start):
            return []
    inner_left = [i for i in indices if spans[i][1] <= x]
    inner_right = [i for i in indices if spans[i][0] >= x]
    return [
        *_gutters(lines, spans, inner_left, depth + 1),
        (gap_left, gap_right),
        *_gutters(lines, spans, inner_right, depth + 1),
    ]


def _footnotes(
    lines: Sequence[TextLine], last_band: list[int], column: dict[int, int], body: float
) -> list[int]:
    """Lines of the last band that are footnotes: smaller than the body, below each column's
    lowest body line, the first starting with a note mark."""
    notes: list[int] = []
    for col in sorted({column[i] for i in last_band}):
        members = [i for i in last_band if column[i] == col]
        text_lines = [i for i in members if lines[i].size >= 0.95 * body]
        if not text_lines:
            continue
        floor = min(lines[i].bottom for i in text_lines)
        below = sorted(
            (i for i in members if lines[i].top <= floor + 1.0), key=lambda i: -lines[i].top
        )
        if not below or any(lines[i].size >= 0.92 * body for i in below):
            continue
        first = lines[below[0]]
        text = first.text.strip()
        if first.size <= 0.75 * body or text[:1] in _NOTE_MARKS or text[:1].isdigit():
            notes += below
    return notes
