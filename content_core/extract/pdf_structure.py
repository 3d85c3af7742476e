"""Markdown structure for PDF pages: headings and tables recovered from the page layout.

- Headings: lines set larger than the body text, or wholly bold short lines, ranked into
  levels by their look; bookmarks (the outline) name headings and fix their levels.
- Tables: grids of ruling lines (cells by the rules), and blocks of lines whose text falls in
  aligned columns separated by wide gaps (no rules, or horizontal rules only).

A page on which nothing is found keeps its text-layer text exactly. Each page's Markdown
stays that page's part, so page spans (and the chunkers' offsets) keep matching.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from content_core.extract.pdf_layout import OutlineEntry, PageLayout, TextLine
from content_core.extract.pdf_tables import (
    Table,
    aligned_tables,
    continue_tables,
    ruled_tables,
    segments,
)

__all__ = ["structure_pages"]

# A line this much larger than the body text is a heading candidate.
_HEADING_SIZE_RATIO = 1.15
_MAX_HEADING_CHARS = 150
_MAX_HEADING_WORDS = 20
_MAX_BOLD_HEADING_CHARS = 100
# "1", "2.3", "A.1", "IV.", "§ 4": a section number before a title.
_SECTION_NUMBER = re.compile(r"(?:§\s?)?(?:\d{1,3}|[A-Z]|[IVX]{1,5})(?:\.\d{1,3}){0,5}\.?$")
# A heading text on this many pages is a running header, not a heading.
_RUNNING_PAGES = 3


@dataclass(slots=True)
class _Heading:
    lines: list[int]
    text: str
    style: tuple[float, bool]
    level: int | None = None


@dataclass(slots=True)
class _Page:
    layout: PageLayout
    tables: list[Table] = field(default_factory=list)
    headings: dict[int, _Heading] = field(default_factory=dict)


def structure_pages(layouts: Sequence[PageLayout], outline: Sequence[OutlineEntry]) -> list[str]:
    """Return each page's text with headings as `#` lines and tables as Markdown tables."""
    pages = [_Page(layout) for layout in layouts]
    body = _body_size(layouts)
    for page in pages:
        page.tables = ruled_tables(page.layout)
        page.tables += aligned_tables(page.layout, _table_lines(page))
    continue_tables(layouts, [page.tables for page in pages], [_table_lines(p) for p in pages])
    for page in pages:
        page.headings = _font_headings(page.layout, body, _table_lines(page))
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
    if body <= 0 or not _is_heading_text(text):
        return False
    by_size = line.size >= body * _HEADING_SIZE_RATIO
    by_weight = (
        line.bold
        and line.size >= body * 0.95
        and len(text) <= _MAX_BOLD_HEADING_CHARS
        and not text.endswith((".", ",", ";", ":"))
    )
    if not (by_size or by_weight):
        return False
    if line.top - line.bottom > 2.5 * max(line.size, 1.0):
        return False  # set vertically (an arXiv stamp in the margin)
    # A line cut into columns by wide gaps is a table row (a bold header), not a heading;
    # but a section number is often set a quad away from its title ("1   Introduction").
    pieces = segments(line)
    return len(pieces) == 1 or len(pieces) == 2 and bool(_SECTION_NUMBER.match(pieces[0][2]))


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
    """Drop heading candidates that are running headers or footers: the same text on
    `_RUNNING_PAGES` pages or more, or at the same height on two pages or more."""
    per_text: Counter[str] = Counter()
    per_place: Counter[tuple[str, int]] = Counter()
    for page in pages:
        per_text.update({_norm(h.text) for h in page.headings.values()})
        per_place.update({_place(page, h) for h in page.headings.values()})
    for page in pages:
        for first, heading in list(page.headings.items()):
            if (
                per_text[_norm(heading.text)] >= _RUNNING_PAGES
                or per_place[_place(page, heading)] > 1
            ):
                del page.headings[first]


def _place(page: _Page, heading: _Heading) -> tuple[str, int]:
    return _norm(heading.text), round(page.layout.lines[heading.lines[0]].top)


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
            # Bookmarks often leave out the section number the page shows ("1.2 Scope").
            number, _, rest = joined.partition(" ")
            bare = rest if _SECTION_NUMBER.match(number.upper()) else joined
            if title in (joined, bare):
                return list(range(start, end + 1))
            if not (title.startswith(joined) or title.startswith(bare)):
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
