"""Markdown structure for PDF pages: headings and tables recovered from the page layout.

- Headings (`pdf_headings`): lines set apart from the body text by size, weight, font,
  capitals and space, leveled by their section numbers or look; the outline confirms them.
- Tables: grids of ruling lines (cells by the rules), and blocks of lines whose text falls in
  aligned columns separated by wide gaps (no rules, or horizontal rules only).

A page on which nothing is found keeps its text-layer text exactly. Each page's Markdown
stays that page's part, so page spans (and the chunkers' offsets) keep matching.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from content_core.extract.pdf_headings import Heading, find_headings
from content_core.extract.pdf_layout import OutlineEntry, PageLayout
from content_core.extract.pdf_ruled_tables import ruled_tables
from content_core.extract.pdf_tables import Table, aligned_tables, continue_tables

__all__ = ["structure_pages"]


@dataclass(slots=True)
class _Page:
    layout: PageLayout
    tables: list[Table] = field(default_factory=list)
    headings: dict[int, Heading] = field(default_factory=dict)


def structure_pages(layouts: Sequence[PageLayout], outline: Sequence[OutlineEntry]) -> list[str]:
    """Return each page's text with headings as `#` lines and tables as Markdown tables."""
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
