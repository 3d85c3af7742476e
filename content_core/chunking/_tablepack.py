"""Packing a text around its tables: the text between tables goes to the chunker's own packer,
and each table is cut between its rows only, its header repeated at the top of each later
part (and, for HTML, `</table>` closing each part that does not reach the table's end).

A table that fits the budget whole joins the chunk before it when both fit together; a row
larger than the budget on its own is cut at words as a last resort, and every piece of it is
flagged `table_row_split`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from content_core.chunking._engine import WS, Level, Span, pack
from content_core.chunking._measure import CharDoc, TokenDoc
from content_core.chunking._tables import Table

__all__ = ["Piece", "pack_tables", "span_of"]

# Cut a row that is too large at spaces, else wherever the budget runs out.
_ROW_LEVELS: tuple[tuple[Level, float], ...] = ()
# A repeated header (with the closing markup) may take at most this share of the budget;
# a larger one is not repeated.
_HEADER_SHARE = 2
# The fewest units left for a row's text when a header is repeated before it (a code point
# is at most four byte tokens).
_MIN_ROOM = 4


@dataclass(frozen=True, slots=True)
class Piece:
    """A chunk's span of the text with what is put around it: `head` (a repeated table
    header) before and `tail` (closing markup) after; `size` counts all three exactly."""

    span: Span
    head: str
    tail: str
    size: int
    meta: dict[str, Any] = field(default_factory=dict)


Packed = Span | Piece
# Packs text[lo:hi] the chunker's own way.
Region = Callable[[int, int], list[Span]]


def span_of(item: Packed) -> Span:
    """The source span of a packed item."""
    return item.span if isinstance(item, Piece) else item


def pack_tables(
    doc: CharDoc | TokenDoc,
    lo: int,
    hi: int,
    *,
    budget: int,
    tables: Sequence[Table],
    region: Region,
) -> list[Packed]:
    """Cut doc.text[lo:hi] into spans of at most `budget`, never inside a table row.

    `tables` are the text's tables in order (`find_tables`); `region` packs the text
    between them. A table partly outside [lo, hi) is cut as if the part inside were its
    own, with the header repeated when the part does not start with it.
    """
    if not tables:
        return list(region(lo, hi))
    out: list[Packed] = []
    cur = lo
    k = bisect.bisect_right(tables, lo, key=lambda t: t.end)
    while k < len(tables) and tables[k].start < hi:
        table = tables[k]
        k += 1
        a = max(cur, table.lead if table.lead >= cur else table.start)
        b = min(hi, table.end)
        if b <= a:
            continue
        before = region(cur, a) if a > cur else []
        parts = _table_parts(doc, table, a, b, budget)
        if len(parts) == 1 and before and isinstance(before[-1], Span):
            last = before[-1]
            joined = doc.size(last.start, b)
            if joined <= budget and not parts[0].head and not parts[0].tail:
                before.pop()
                parts = [Piece(Span(last.start, b, joined, last.overlap), "", "", joined,
                               parts[0].meta)]
        out.extend(before)
        out.extend(parts)
        cur = b
    if cur < hi:
        out.extend(region(cur, hi))
    return out


def _skip_ws(text: str, p: int, hi: int) -> int:
    while p < hi and text[p] in WS:
        p += 1
    return p


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    header: bool
    closing: bool = False


def _units(text: str, table: Table, a: int, b: int) -> list[_Unit]:
    """The header (when [a, b) starts before the table's rows), the rows inside [a, b), and
    the closing markup after the last row up to b (`</table>`), if any."""
    units: list[_Unit] = []
    if a < table.header_end:
        units.append(_Unit(a, min(b, table.header_end), True))
    for start, end in table.rows:
        if end <= a or start >= b:
            continue
        if units:
            # Whatever lies between two rows (markup, not only whitespace) goes with the
            # row after it, so that nothing is left out of every piece.
            start = min(start, _skip_ws(text, units[-1].end, start))
        units.append(_Unit(max(start, a), min(end, b), False))
    if not units:
        return [_Unit(a, b, False)]
    closing = _skip_ws(text, units[-1].end, b)
    if closing < b:
        units.append(_Unit(closing, b, False, closing=True))
    return units


def _table_parts(doc: CharDoc | TokenDoc, table: Table, a: int, b: int, budget: int) -> list[Piece]:
    """Table `table` restricted to [a, b), cut between rows into pieces within `budget`."""
    units = _units(doc.text, table, a, b)
    starts_mid = a > table.start
    ends_mid = b < table.end
    tail_cost = doc.prefix_size(table.tail) if table.tail else 0
    # What a later part starts with, best first: the whole header, the bare opening tag
    # (HTML), nothing; each with whether it is closed by the tail. One that takes more
    # than its share of the budget is not tried.
    heads: list[tuple[str, bool]] = [
        (head, True)
        for head in dict.fromkeys((table.head, table.bare))
        if head and (doc.prefix_size(head) + tail_cost) * _HEADER_SHARE <= budget
    ]
    heads.append(("", False))
    pieces: list[Piece] = []
    n = len(units)
    i = 0
    while i < n:
        # The first part holds the header itself, unless [a, b) starts past it.
        own = units[i].header or (i == 0 and not starts_mid)
        grown = None
        for head, wrap in heads:
            if units[i].closing:
                # Closing markup alone: opened again by the bare tag, not under the header.
                head = table.bare if head else ""
            grown = _grow(doc, table, units, i, budget, "" if own else head, wrap, ends_mid)
            if grown is not None:
                break
        if grown is not None:
            i = grown[0] + 1
            pieces.append(grown[1])
            continue
        head, wrap = heads[0]
        last = i == n - 1 and not ends_mid
        pieces.extend(_split_unit(doc, table, units[i], budget, "" if own else head, wrap, last))
        i += 1
    total = len(pieces)
    return [
        Piece(p.span, p.head, p.tail, p.size, _meta(table, number, total, p.meta))
        for number, p in enumerate(pieces, start=1)
    ]


def _grow(
    doc: CharDoc | TokenDoc,
    table: Table,
    units: list[_Unit],
    i: int,
    budget: int,
    head: str,
    wrap: bool,
    ends_mid: bool,
) -> tuple[int, Piece] | None:
    """The longest run of units from units[i] that fits the budget as one piece, with
    `head` before it and (when `wrap`) the table's tail after it unless it ends the table
    (ends_mid: the last unit does not), as (index of its last unit, piece); None when not
    even units[i] fits."""
    n = len(units)
    start = units[i].start
    head_cost = doc.prefix_size(head) if head else 0
    tail_cost = doc.prefix_size(table.tail) if wrap and table.tail else 0

    def fits(j: int) -> bool:
        tail = 0 if j == n - 1 and not ends_mid else tail_cost
        return doc.size(start, units[j].end) + head_cost + tail <= budget

    # Sizes grow with j: gallop, then bisect, for the last j that fits.
    best = i - 1
    if fits(i):
        best, step = i, 1
        high = n
        while best + step < n:
            if not fits(best + step):
                high = best + step
                break
            best += step
            step *= 2
        while high - best > 1:
            middle = (best + high) // 2
            if fits(middle):
                best = middle
            else:
                high = middle
    while best >= i:
        ends = best == n - 1 and not ends_mid
        tail = table.tail if wrap and not ends else ""
        piece = _piece(doc, start, units[best].end, head, tail)
        if piece.size <= budget:
            return best, piece
        best -= 1
    return None


def _piece(doc: CharDoc | TokenDoc, a: int, b: int, head: str, tail: str) -> Piece:
    size = doc.size(a, b)
    if tail or (head and doc.text[a] not in "|<"):
        total = doc.prefix_size(head + doc.text[a:b] + tail)
    else:
        # A head ends with a newline and the span starts with `|` or `<`: no pre-token of
        # the tokenisers spans the seam, so the two counts add up exactly.
        total = size + (doc.prefix_size(head) if head else 0)
    return Piece(Span(a, b, size, 0), head, tail, total)


def _split_unit(
    doc: CharDoc | TokenDoc,
    table: Table,
    unit: _Unit,
    budget: int,
    head: str,
    wrap: bool,
    last: bool,
) -> list[Piece]:
    """A row (or header) too large for the budget, cut where the budget runs out.

    Each piece gets `head` before it and, when `wrap`, the tail after it (not the table's
    last piece); the pieces of a header after its first, which holds the opening tag, get
    the bare opening tag instead. When that leaves too little room, nothing is added.
    """
    heads = [head]
    if unit.header:
        heads = ["", table.bare if wrap else ""]
    tail = table.tail if wrap else ""
    extra = max(doc.prefix_size(h) if h else 0 for h in heads)
    room = budget - extra - (doc.prefix_size(tail) if tail else 0)
    minimum = _MIN_ROOM if doc.exact_tokens else 1
    if room < minimum:
        heads, tail, room = [""], "", budget
    while True:
        spans = pack(doc, unit.start, unit.end, budget=room, levels=_ROW_LEVELS)
        pieces = []
        for k, span in enumerate(spans):
            piece_head = heads[min(k, len(heads) - 1)]
            piece_tail = "" if last and k == len(spans) - 1 else tail
            pieces.append(_piece(doc, span.start, span.end, piece_head, piece_tail))
        excess = max((p.size - budget for p in pieces), default=0)
        if excess <= 0:
            flag = {"table_row_split": True}
            return [Piece(p.span, p.head, p.tail, p.size, flag) for p in pieces]
        if room - excess < minimum:
            heads, tail, room = [""], "", budget
        else:
            room -= excess


def _meta(table: Table, part: int, parts: int, extra: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"table": True, "table_kind": table.kind}
    if table.caption is not None:
        meta["table_caption"] = table.caption
    meta["table_part"] = part
    meta["table_parts"] = parts
    meta.update(extra)
    return meta
