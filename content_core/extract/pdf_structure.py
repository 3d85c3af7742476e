"""Markdown structure for PDF pages: headings and tables recovered from the page layout.

- Headings: lines set larger than the body text, or wholly bold short lines, ranked into
  levels by their look; bookmarks (the outline) name headings and fix their levels.
- Tables: grids of ruling lines (cells by the rules), and blocks of lines whose text falls in
  aligned columns separated by wide gaps (no rules, or horizontal rules only).

A page on which nothing is found keeps its text-layer text exactly. Each page's Markdown
stays that page's part, so page spans (and the chunkers' offsets) keep matching.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from content_core.extract._tables import markdown_table
from content_core.extract.pdf_layout import OutlineEntry, PageLayout, Ruling, TextLine

__all__ = ["structure_pages"]

# A line this much larger than the body text is a heading candidate.
_HEADING_SIZE_RATIO = 1.15
_MAX_HEADING_CHARS = 150
_MAX_HEADING_WORDS = 20
_MAX_BOLD_HEADING_CHARS = 100
# A heading text on this many pages is a running header, not a heading.
_RUNNING_PAGES = 3
# Rulings closer than this (points) are one line; a ruling ending this close to another meets it.
_SNAP_PT = 2.0
# Columns of an unruled table are apart by at least this many times the font size.
_COLUMN_GAP_EM = 0.9
# Rows of an unruled table are at most this many font sizes apart.
_ROW_PITCH_EM = 2.4
_MIN_UNRULED_ROWS = 3
_MAX_MEAN_CELL_CHARS = 40
# Share of the cells of an unruled table that hold text.
_MIN_FILL = 0.5
_MAX_COLUMNS = 30
# Rulings are paired with one another (quadratic); a page with more is a drawing, not a table.
_MAX_RULINGS = 1500


@dataclass(slots=True)
class _Table:
    first: int
    lines: set[int]
    markdown: str


@dataclass(slots=True)
class _Heading:
    lines: list[int]
    text: str
    style: tuple[float, bool]
    level: int | None = None


@dataclass(slots=True)
class _Page:
    layout: PageLayout
    tables: list[_Table] = field(default_factory=list)
    headings: dict[int, _Heading] = field(default_factory=dict)


def structure_pages(layouts: Sequence[PageLayout], outline: Sequence[OutlineEntry]) -> list[str]:
    """Return each page's text with headings as `#` lines and tables as Markdown tables."""
    pages = [_Page(layout) for layout in layouts]
    body = _body_size(layouts)
    for page in pages:
        page.tables = _ruled_tables(page.layout)
        taken = {i for table in page.tables for i in table.lines}
        page.tables += _aligned_tables(page.layout, taken)
        page.headings = _font_headings(page.layout, body, taken | _table_lines(page))
    _drop_running_headers(pages)
    _apply_outline(pages, outline)
    _assign_levels(pages)
    return [_render(page) for page in pages]


def _table_lines(page: _Page) -> set[int]:
    return {i for table in page.tables for i in table.lines}


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _body_size(layouts: Sequence[PageLayout]) -> float:
    sizes: Counter[float] = Counter()
    for layout in layouts:
        for line in layout.lines:
            sizes[round(line.size * 2) / 2] += len(line.text.strip())
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _is_heading_text(text: str) -> bool:
    return (
        2 <= len(text) <= _MAX_HEADING_CHARS
        and (text[0].isalnum() or text[0] in "\"'«“§(")
        and len(text.split()) <= _MAX_HEADING_WORDS
        and any(c.isalpha() for c in text)
    )


def _looks_like_heading(line: TextLine, body: float) -> bool:
    text = line.text.strip()
    # A line cut into columns by wide gaps is a table row (a bold header), not a heading.
    if body <= 0 or not _is_heading_text(text) or len(_segments(line)) > 1:
        return False
    if line.top - line.bottom > 2.5 * max(line.size, 1.0):
        return False  # set vertically (an arXiv stamp in the margin)
    if line.size >= body * _HEADING_SIZE_RATIO:
        return True
    return (
        line.bold
        and line.size >= body * 0.95
        and len(text) <= _MAX_BOLD_HEADING_CHARS
        and not text.endswith((".", ",", ";", ":"))
    )


def _font_headings(layout: PageLayout, body: float, skip: set[int]) -> dict[int, _Heading]:
    """Heading candidates by look; a heading set on two lines of one style is one heading."""
    headings: dict[int, _Heading] = {}
    previous: _Heading | None = None
    for index, line in enumerate(layout.lines):
        if index in skip or not _looks_like_heading(line, body):
            previous = None
            continue
        style = (round(line.size * 2) / 2, line.bold)
        last = layout.lines[index - 1] if index else None
        if (
            previous is not None
            and previous.style == style
            and last is not None
            and 0 <= last.bottom - line.top < 0.6 * line.size
        ):
            previous.lines.append(index)
            previous.text += " " + line.text.strip()
            continue
        previous = _Heading([index], line.text.strip(), style)
        headings[index] = previous
    return headings


def _drop_running_headers(pages: Sequence[_Page]) -> None:
    per_text: Counter[str] = Counter()
    for page in pages:
        per_text.update({_norm(h.text) for h in page.headings.values()})
    for page in pages:
        for first, heading in list(page.headings.items()):
            if per_text[_norm(heading.text)] >= _RUNNING_PAGES:
                del page.headings[first]


def _apply_outline(pages: Sequence[_Page], outline: Sequence[OutlineEntry]) -> None:
    """Make each bookmark's line on its target page a heading at the bookmark's level."""
    for entry in outline:
        if entry.page is None or not 0 <= entry.page < len(pages):
            continue
        page = pages[entry.page]
        match = _find_title(page, _norm(entry.title))
        if match is None:
            continue
        for index in match:
            page.headings.pop(index, None)
        text = " ".join(page.layout.lines[i].text.strip() for i in match)
        line = page.layout.lines[match[0]]
        page.headings[match[0]] = _Heading(
            match, text, (round(line.size * 2) / 2, line.bold), level=min(entry.level + 1, 6)
        )


def _find_title(page: _Page, title: str) -> list[int] | None:
    lines = page.layout.lines
    taken = _table_lines(page) | {
        i for h in page.headings.values() if h.level is not None for i in h.lines
    }
    for start in range(len(lines)):
        if start in taken:
            continue
        joined = ""
        for end in range(start, min(start + 4, len(lines))):
            joined = _norm(f"{joined} {lines[end].text}")
            if joined == title:
                return list(range(start, end + 1))
            if not title.startswith(joined):
                break
    return None


def _assign_levels(pages: Sequence[_Page]) -> None:
    """Levels from the outline where a style was bookmarked, else by the style's rank."""
    from_outline: dict[tuple[float, bool], int] = {}
    styles: set[tuple[float, bool]] = set()
    for page in pages:
        for heading in page.headings.values():
            styles.add(heading.style)
            if heading.level is not None:
                from_outline.setdefault(heading.style, heading.level)
    ranked = sorted(styles, key=lambda s: (-s[0], not s[1]))
    for page in pages:
        for heading in page.headings.values():
            if heading.level is None:
                rank = ranked.index(heading.style) + 1
                heading.level = from_outline.get(heading.style, min(rank, 6))


def _render(page: _Page) -> str:
    if not page.tables and not page.headings:
        return page.layout.text
    starts = {table.first: table for table in page.tables}
    skip = _table_lines(page) | {i for h in page.headings.values() for i in h.lines[1:]}
    blocks: list[str] = []
    paragraph: list[str] = []
    for index, line in enumerate(page.layout.lines):
        block = None
        if index in starts:
            block = starts[index].markdown
        elif index in page.headings:
            heading = page.headings[index]
            block = "#" * (heading.level or 1) + " " + " ".join(heading.text.split())
        elif index not in skip:
            paragraph.append(line.text.rstrip())
        if block is not None:
            if paragraph:
                blocks.append("\n".join(paragraph))
                paragraph = []
            blocks.append(block)
    if paragraph:
        blocks.append("\n".join(paragraph))
    return "\n\n".join(blocks)


# Tables drawn with rules -------------------------------------------------------------------


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


def _ruled_tables(layout: PageLayout) -> list[_Table]:
    if len(layout.rulings) > _MAX_RULINGS:
        return []
    tables: list[_Table] = []
    for hs, vs in _grids(layout.rulings):
        xs = _cluster([v.at for v in vs])
        ys = _cluster([h.at for h in hs])
        if len(xs) < 3 or len(ys) < 2:
            continue
        table = _grid_table(layout, xs, ys)
        if table is not None:
            tables.append(table)
    return tables


def _grid_table(layout: PageLayout, xs: list[float], ys: list[float]) -> _Table | None:
    """Cells bounded by `xs` (left to right) and `ys` (bottom to top); a grid with one band
    of rows (only its outline ruled across) gets one row per text line. A line that a rule
    cuts through a word is text over the drawing, not a row, and stays text."""
    one_band = len(ys) == 2
    members: list[int] = []
    rows: dict[int, list[list[str]]] = {}
    for index, line in enumerate(layout.lines):
        centre = (line.top + line.bottom) / 2
        if not (ys[0] < centre < ys[-1] and line.left < xs[-1] and line.right > xs[0]):
            continue
        pieces = _cells_of_line(line, xs)
        if pieces is None:
            continue
        row = len(members) if one_band else len(ys) - 1 - bisect.bisect(ys, centre)
        members.append(index)
        cells = rows.setdefault(row, [[] for _ in range(len(xs) - 1)])
        for column, text in enumerate(pieces):
            if text:
                cells[column].append(text)
    grid = [[" ".join(cell) for cell in rows[key]] for key in sorted(rows)]
    # One row is enough: a ruled table split over two pages leaves a row on one of them.
    if sum(1 for row in grid for cell in row if cell) < 2:
        return None
    markdown = markdown_table(grid)
    return _Table(members[0], set(members), markdown) if markdown else None


def _cells_of_line(line: TextLine, xs: list[float]) -> list[str] | None:
    """The line's text per column between `xs`, or None when a rule cuts a word."""
    pieces: list[list[str]] = [[] for _ in range(len(xs) - 1)]
    last = -1
    for char, left, right in zip(line.text, line.lefts, line.rights, strict=True):
        column = bisect.bisect(xs, (left + right) / 2) - 1
        if char.isspace():
            last = -1
        elif last >= 0 and column != last:
            return None
        else:
            last = column
        if 0 <= column < len(pieces):
            pieces[column].append(char)
    return ["".join(chars).strip() for chars in pieces]


# Tables without vertical rules: columns from aligned text -------------------------------------


def _segments(line: TextLine) -> list[tuple[float, float, str]]:
    """The line cut at gaps wider than a column gap: (left, right, text) per piece."""
    gap = _COLUMN_GAP_EM * line.size
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


def _aligned_tables(layout: PageLayout, taken: set[int]) -> list[_Table]:
    tables: list[_Table] = []
    block: list[tuple[int, list[tuple[float, float, str]]]] = []
    for index, line in enumerate(layout.lines):
        pieces = _segments(line) if index not in taken else []
        previous = layout.lines[block[-1][0]] if block else None
        close = previous is not None and (
            0 <= previous.bottom - line.bottom <= _ROW_PITCH_EM * max(line.size, 1.0)
        )
        if len(pieces) >= 2 and (not block or close):
            block.append((index, pieces))
            continue
        _close_block(block, tables)
        block = [(index, pieces)] if len(pieces) >= 2 else []
    _close_block(block, tables)
    return tables


def _close_block(
    block: list[tuple[int, list[tuple[float, float, str]]]], tables: list[_Table]
) -> None:
    if len(block) < _MIN_UNRULED_ROWS:
        return
    spans = sorted((left, right) for _, pieces in block for left, right, _ in pieces)
    columns: list[list[float]] = []
    for left, right in spans:
        if columns and left <= columns[-1][1] + 1.0:
            columns[-1][1] = max(columns[-1][1], right)
        else:
            columns.append([left, right])
    if not 2 <= len(columns) <= _MAX_COLUMNS:
        return
    starts = [column[0] for column in columns]
    grid: list[list[str]] = []
    for _, pieces in block:
        row = [""] * len(columns)
        for left, right, text in pieces:
            column = bisect.bisect(starts, (left + right) / 2) - 1
            row[column] = f"{row[column]} {text}".strip()
        grid.append(row)
    cells = [cell for row in grid for cell in row if cell]
    if statistics.fmean(len(cell) for cell in cells) > _MAX_MEAN_CELL_CHARS:
        return
    # Columns are shared by the rows: words of staggered lines (a title page, spaced-out
    # letters) fall each in a column of their own.
    filled = [sum(1 for row in grid if row[c]) for c in range(len(columns))]
    if min(filled) < 2 or len(cells) < _MIN_FILL * len(grid) * len(columns):
        return
    markdown = markdown_table(grid)
    if markdown:
        tables.append(_Table(block[0][0], {index for index, _ in block}, markdown))
