"""The boxes on the page of a span of extracted text: one per line it covers, cut where the
span starts or ends inside a line, merged into blocks where lines of one column touch."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from content_core.extract.base import TextBox

__all__ = ["PageBox", "span_boxes", "stored_text_boxes"]

# Lines merge into one block when the gap between them is at most this share of the smaller
# line's height, their left edges are within this share of a height of each other, and the
# narrower is at least this share of the wider (a short last line of a paragraph stays apart,
# and a title across two columns never swallows a column's line).
_MAX_GAP_HEIGHTS = 0.6
_MAX_INDENT_HEIGHTS = 1.0
_MIN_WIDTH_SHARE = 0.5
# A box cut inside a line stops this far short of the next character's left edge, so that
# it does not touch the glyph after it.
_CUT_INSET_PT = 0.05


class PageBox(NamedTuple):
    """A rectangle on page `page` (1-based), in the frame of the `TextBox`es it came from."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


def stored_text_boxes(rows: Iterable[Mapping[str, Any]] | None) -> list[TextBox]:
    """`TextBox`es of a `text_boxes` column read back from the store (none in rows written
    before the column existed)."""
    # Any: struct values as Arrow or DuckDB return them.
    return [
        TextBox(b["start"], b["end"], b["page"], b["x0"], b["y0"], b["x1"], b["y1"],
                tuple(b["edges"] or ()))
        for b in rows or ()
    ]  # fmt: skip


def span_boxes(
    boxes: Sequence[TextBox], start: int, end: int, text: str | None = None
) -> list[PageBox]:
    """The boxes of `text[start:end]` given the text's line boxes (in text order): each line
    the span overlaps, cut to the span where the line's glyph edges are known, and touching
    lines of one column merged into one box. With `text`, a line or block the span only
    grazes (white space, the closing tag of a table) is left out. Empty when no line lies in
    the span."""
    if end <= start or not boxes:
        return []
    first = max(bisect_right([box.end for box in boxes], start), 0)
    cut: list[tuple[PageBox, bool]] = []
    for box in boxes[first:]:
        if box.start >= end:
            break
        if box.end <= start:
            continue
        if text is not None and not _has_words(text, max(start, box.start), min(end, box.end)):
            continue
        cut.append(_clipped(box, start, end))
    return _merged(cut)


def _has_words(text: str, start: int, end: int) -> bool:
    return any(char.isalnum() for char in text[start:end])


def _clipped(box: TextBox, start: int, end: int) -> tuple[PageBox, bool]:
    """The part of `box` inside [start, end), and whether it is the whole line."""
    whole = PageBox(box.page, box.x0, box.y0, box.x1, box.y1)
    if start <= box.start and end >= box.end:
        return whole, True
    edges = box.edges
    if len(edges) != box.end - box.start:
        return whole, False
    first = max(start - box.start, 0)
    last = min(end, box.end) - box.start  # exclusive
    x0 = edges[first] if first > 0 else box.x0
    x1 = edges[last] - _CUT_INSET_PT if last < len(edges) else box.x1
    if x1 <= x0:
        return whole, False
    return PageBox(box.page, max(x0, box.x0), box.y0, min(x1, box.x1), box.y1), False


def _merged(cut: Sequence[tuple[PageBox, bool]]) -> list[PageBox]:
    out: list[PageBox] = []
    whole_last = False
    for box, whole in cut:
        if out and whole and whole_last and _touch(out[-1], box):
            last = out[-1]
            out[-1] = PageBox(box.page, min(last.x0, box.x0), min(last.y0, box.y0),
                              max(last.x1, box.x1), max(last.y1, box.y1))  # fmt: skip
        else:
            out.append(box)
        whole_last = whole
    # A block may cover a line of its own text that PDFium cut into pieces (the piece after a
    # superscript): a box inside another one adds nothing.
    return [box for i, box in enumerate(out)
            if not any(j != i and _inside(box, other) for j, other in enumerate(out))]


def _inside(box: PageBox, other: PageBox) -> bool:
    """Whether `box` lies within `other` (a tenth of a point's tolerance), and is the smaller."""
    tol = 0.1
    return (
        box.page == other.page and box != other
        and box.x0 >= other.x0 - tol and box.x1 <= other.x1 + tol
        and box.y0 >= other.y0 - tol and box.y1 <= other.y1 + tol
        and (box.x1 - box.x0) * (box.y1 - box.y0) < (other.x1 - other.x0) * (other.y1 - other.y0)
    )  # fmt: skip


def _touch(block: PageBox, line: PageBox) -> bool:
    """Whether `line` continues `block` downwards in the same column."""
    if block.page != line.page:
        return False
    height = min(block.y1 - block.y0, line.y1 - line.y0)
    gap = block.y0 - line.y1
    if height <= 0 or not -0.5 * height <= gap <= _MAX_GAP_HEIGHTS * height:
        return False
    if abs(block.x0 - line.x0) > _MAX_INDENT_HEIGHTS * height:
        return False
    narrow, wide = sorted((block.x1 - block.x0, line.x1 - line.x0))
    return wide > 0 and narrow >= _MIN_WIDTH_SHARE * wide
