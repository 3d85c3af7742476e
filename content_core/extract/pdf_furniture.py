"""Page furniture of PDF pages: running headers and footers, page numbers, rotated margin
strips (download stamps, arXiv identifiers) and watermarks, found from the page layout.

Conservative by design: a line is furniture only on clear evidence: at the page's top or bottom
edge and set apart from the body, repeated across pages (same words, or the same look at the
same height), or rotated outside the body. `pdf_reading` takes it out of the pages' text.
"""

from __future__ import annotations

import re
import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from content_core.extract.base import FurnitureKind, PageFurniture
from content_core.extract.pdf_layout import PageLayout, TextLine

__all__ = ["Row", "Shape", "find_furniture", "furniture_entries", "page_rows", "page_shape"]

# Rows this close to the page's top or bottom edge (share of its height) may be furniture.
_BAND = 0.2
_MAX_EDGE_ROWS = 3
# Set apart: the distance to the next row in, over the body's line pitch.
_APART_STRONG = 1.15
_APART_REPEATED = 1.3
_APART_PLACED = 1.5
_APART_ALONE = 2.0
# Same place on two pages: baselines this close (points).
_SAME_Y_PT = 3.0
_MAX_ALONE_CHARS = 120
# A footnote rule is short (LaTeX: 2 in); a table's rules run across it.
_SHORT_RULE_PT = 200.0
# Rotated text is furniture only while it is a small part of the page (else: a landscape
# page set sideways, a rotated table).
_MAX_ROTATED_SHARE = 0.15
_WATERMARK_SIZE = 1.5

_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"(?i:page|p\.|pg\.?|seite|pagina|página)?\s*[-–—(\[]?\s*(?:\d{1,4}|[ivxlc]{1,7})\s*"
    r"[-–—)\]]?\s*(?:(?:/|of|von|de|sur|di)\s*\d{1,4})?",
)
_FURNITURE_WORDS = re.compile(
    r"downloaded|copyright|©|all rights reserved|licen[cs]e|\bdoi\b|arxiv|preprint|"
    r"https?://|www\.|\bpage\b",
    re.IGNORECASE,
)
_NOTE_MARKS = "*∗†‡§¶"


@dataclass(slots=True)
class Row:
    """Lines of a page sharing one baseline band, as a reader sees one row."""

    lines: list[int]
    top: float
    bottom: float
    base: float
    size: float
    bold: bool
    text: str


@dataclass(slots=True)
class _Edge:
    """A row at a page's top or bottom edge: where, and its distance to the next row in."""

    page: int
    side: str
    row: Row
    key: str
    apart: float
    depth: int


@dataclass(frozen=True, slots=True)
class Shape:
    """Each line's left and right edge and whether it is upright: read once a page, since a
    line's edges are a min and a max over its characters."""

    spans: list[tuple[float, float]]
    upright: list[bool]


def page_shape(layout: PageLayout) -> Shape:
    """The page's line edges and uprightness."""
    spans = [(line.left, line.right) for line in layout.lines]
    upright = [_is_upright(line, span) for line, span in zip(layout.lines, spans, strict=True)]
    return Shape(spans, upright)


def find_furniture(
    layouts: Sequence[PageLayout], shapes: Sequence[Shape], body: float
) -> list[dict[int, FurnitureKind]]:
    """The furniture of each page: its line indices with their kind; `shapes` are the pages'
    `page_shape`s and `body` the document's body font size."""
    found: list[dict[int, FurnitureKind]] = [{} for _ in layouts]
    rows_of: dict[int, list[Row]] = {}
    for number, (layout, shape) in enumerate(zip(layouts, shapes, strict=True)):
        if layout.lines:
            found[number] = _rotated(layout, shape, body)
            keep = [i for i, up in enumerate(shape.upright) if up and i not in found[number]]
            rows_of[number] = page_rows(layout, shape, keep)
    pitch = _pitch(list(rows_of.values()), body)
    edges: list[_Edge] = []
    for number, rows in rows_of.items():
        edges += _edges(number, layouts[number], rows, pitch)
    _mark_edges(edges, found, layouts, body, len(rows_of))
    return found


def furniture_entries(
    layout: PageLayout, kinds: dict[int, FurnitureKind], page: int
) -> list[PageFurniture]:
    """The page's furniture, a rotated strip that PDFium cut in two (a glyph run apart)
    as one entry."""
    entries: list[PageFurniture] = []
    previous: TextLine | None = None
    for index in sorted(kinds):
        line = layout.lines[index]
        text = " ".join(line.text.split())
        if (
            previous is not None
            and kinds[index] == "margin"
            and entries[-1].kind == "margin"
            and kinds.get(index - 1) == "margin"
            and line.left < previous.right
            and previous.left < line.right
            and min(abs(line.bottom - previous.top), abs(previous.bottom - line.top)) < 1.0
        ):
            joined = entries[-1].text + text
            entries[-1] = entries[-1].model_copy(update={"text": joined})
        else:
            entries.append(PageFurniture(page=page, kind=kinds[index], text=text))
        previous = line
    return entries


def _is_upright(line: TextLine, span: tuple[float, float]) -> bool:
    if 5.0 < line.angle < 355.0:
        return False
    height, width = line.top - line.bottom, span[1] - span[0]
    # Glyphs stacked one above the other: a vertical strip even when each one is upright.
    return not (height > 4 * max(line.size, 1.0) and height > 3 * max(width, 1.0))


def _rotated(layout: PageLayout, shape: Shape, body: float) -> dict[int, FurnitureKind]:
    """Rotated lines that are margin strips (outside the upright text's width) or watermarks
    (large rotated text), while rotated text is a small part of the page."""
    lines, spans = layout.lines, shape.spans
    rotated = [i for i, up in enumerate(shape.upright) if not up]
    if not rotated:
        return {}
    total = sum(len(line.text.strip()) for line in lines)
    if sum(len(lines[i].text.strip()) for i in rotated) > _MAX_ROTATED_SHARE * total:
        return {}
    upright = [i for i, up in enumerate(shape.upright) if up and len(lines[i].text.strip()) >= 8]
    if not upright:
        return {}
    left = min(spans[i][0] for i in upright)
    right = max(spans[i][1] for i in upright)
    kinds: dict[int, FurnitureKind] = {}
    for index in rotated:
        middle = (spans[index][0] + spans[index][1]) / 2
        if middle < left or middle > right:
            kinds[index] = "margin"
        elif lines[index].size >= _WATERMARK_SIZE * body:
            kinds[index] = "watermark"
    return kinds


def page_rows(layout: PageLayout, shape: Shape, keep: Sequence[int]) -> list[Row]:
    """The lines `keep` (upright ones) grouped into rows, top to bottom."""
    order = sorted(keep, key=lambda i: -layout.lines[i].top)
    rows: list[Row] = []
    for index in order:
        line = layout.lines[index]
        middle = (line.top + line.bottom) / 2
        row = rows[-1] if rows else None
        if row is not None and row.bottom <= middle <= row.top:
            row.lines.append(index)
            row.bottom = min(row.bottom, line.bottom)
            row.size = max(row.size, line.size)
            row.bold = row.bold and line.bold
            continue
        rows.append(Row([index], line.top, line.bottom, line.bottom, line.size, line.bold, ""))
    for row in rows:
        row.lines.sort(key=lambda i: shape.spans[i][0])
        texts = [layout.lines[i].text.strip() for i in row.lines]
        row.text = " ".join(" ".join(texts).split())
        widest = max(row.lines, key=lambda i: len(layout.lines[i].text))
        row.base = layout.lines[widest].bottom
    return rows


def _pitch(pages: Sequence[list[Row]], body: float) -> float:
    """The body's baseline-to-baseline distance, over the document (a page of formulas
    alone would make it look wider)."""
    steps = [step for rows in pages for step in _steps(rows, body)]
    return statistics.median(steps) if steps else 1.2 * body


def _steps(rows: Sequence[Row], body: float) -> list[float]:
    return [
        upper.base - lower.base
        for upper, lower in zip(rows, rows[1:], strict=False)
        if abs(upper.size - body) <= 0.6 and abs(lower.size - body) <= 0.6
        and upper.base - lower.base > 0.5 * body
    ]  # fmt: skip


def _edges(number: int, layout: PageLayout, rows: list[Row], pitch: float) -> list[_Edge]:
    """The rows at the page's top and bottom edge that could be furniture, with how far
    each block of them stands apart from the body."""
    if len(rows) < 2:
        return []
    top = layout.top if layout.top > layout.bottom else rows[0].top
    bottom = layout.bottom if layout.top > layout.bottom else rows[-1].bottom
    band = _BAND * (top - bottom)
    edges: list[_Edge] = []
    for side, ordered in (("top", rows), ("bottom", rows[::-1])):
        block: list[_Edge] = []
        for depth, row in enumerate(ordered[:_MAX_EDGE_ROWS]):
            inside = row.bottom >= top - band if side == "top" else row.top <= bottom + band
            if not inside or depth + 1 >= len(ordered):
                break
            nxt = ordered[depth + 1]
            apart = abs(row.base - nxt.base) / pitch
            block.append(_Edge(number, side, row, _key(row.text), apart, depth))
        # A row is set apart when the block it opens ends in a wide gap.
        for depth in range(len(block) - 2, -1, -1):
            block[depth].apart = max(block[depth].apart, block[depth + 1].apart)
        edges += block
    return edges


def _key(text: str) -> str:
    return _DIGITS.sub("#", " ".join(text.split()).casefold())


def _mark_edges(
    edges: list[_Edge],
    found: list[dict[int, FurnitureKind]],
    layouts: Sequence[PageLayout],
    body: float,
    page_count: int,
) -> None:
    """Mark edge rows that are furniture: walking in from each edge, stop at the first row
    that is not."""
    same_text: dict[tuple[str, str], list[float]] = {}
    same_look: dict[tuple[str, float, bool], list[float]] = {}
    for edge in edges:
        same_text.setdefault((edge.side, edge.key), []).append(edge.row.base)
        if edge.apart >= _APART_PLACED:
            look = (edge.side, round(edge.row.size * 2) / 2, edge.row.bold)
            same_look.setdefault(look, []).append(edge.row.base)
    for values in (*same_text.values(), *same_look.values()):
        values.sort()
    stopped: set[tuple[int, str]] = set()
    for edge in edges:
        if (edge.page, edge.side) in stopped:
            continue
        texts = _near(same_text[(edge.side, edge.key)], edge.row.base)
        look = (edge.side, round(edge.row.size * 2) / 2, edge.row.bold)
        looks = _near(same_look.get(look, []), edge.row.base)
        if not _is_furniture(edge, texts, looks, body, page_count, layouts[edge.page]):
            stopped.add((edge.page, edge.side))
            continue
        kind: FurnitureKind = "header" if edge.side == "top" else "footer"
        if _PAGE_NUMBER.fullmatch(edge.row.text):
            kind = "page_number"
        for index in edge.row.lines:
            found[edge.page][index] = kind


def _near(values: list[float], y: float) -> int:
    return bisect_right(values, y + _SAME_Y_PT) - bisect_left(values, y - _SAME_Y_PT)


def _is_furniture(
    edge: _Edge, texts: int, looks: int, body: float, page_count: int, layout: PageLayout
) -> bool:
    row, apart = edge.row, edge.apart
    # The same words (numbers aside) at the same height on many pages, not in the body's run
    # of lines (a table's header row repeated on each page is).
    if texts >= 3 and texts >= page_count / 2 and apart >= _APART_STRONG:
        return True
    page_number = bool(_PAGE_NUMBER.fullmatch(row.text))
    # Under a running head the next row is often the body's first (a heading, "Definition
    # 4"): past the edge row only the evidence above counts.
    if edge.depth > 0:
        return False
    if texts >= 2 and apart >= _APART_REPEATED:
        return True
    smaller = row.size < 0.95 * body
    if edge.side == "bottom" and not page_number and _footnote_like(row, layout, body):
        return False
    # Running heads whose words change (the chapter's title): same look, same height.
    if looks >= 3 and apart >= _APART_PLACED and (smaller or (page_number and not row.bold)):
        return True
    if looks >= 3 and apart >= _APART_PLACED and row.size <= body and not row.bold:
        return page_number or bool(_FURNITURE_WORDS.search(row.text))
    # Alone on its page (a one-page document): clearly apart, short, and plainly furniture.
    if apart < _APART_ALONE or len(row.text) > _MAX_ALONE_CHARS or row.size > body * 1.05:
        return False
    if page_number or (smaller and _numbered_as_page(row.text, edge.page + 1)):
        return True
    return smaller and bool(_FURNITURE_WORDS.search(row.text))


def _numbered_as_page(text: str, page: int) -> bool:
    """A running head carrying the page's own number at one end ("2 Z. Shen et al.")."""
    words = text.split()
    return len(words) >= 2 and str(page) in (words[0], words[-1])


def _footnote_like(row: Row, layout: PageLayout, body: float) -> bool:
    """A footnote: starts with a marker, or sits just under a short rule."""
    if row.text[:1].isdigit() or row.text[:1] in _NOTE_MARKS:
        return True
    return any(
        r.horizontal and row.top <= r.at <= row.top + 3 * body and r.end - r.start < _SHORT_RULE_PT
        for r in layout.rulings
    )
