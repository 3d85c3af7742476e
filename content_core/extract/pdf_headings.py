"""Headings of a PDF document, found from how its lines look and sit against the body text.

A line is a heading when it is set larger than the body, wholly in bold, or (short, with
space above it) in another font family or in capitals; captions, theorem lead-ins, author and
date lines, equations and running heads are not. Levels come from the section number when
there is one ("2.3.1" is level 3), else from the style's rank; the title (the largest text
opening page 1) is level 1. The outline (bookmarks) confirms headings the page shows and sets
their levels; a bookmark whose title the page does not show as a heading is ignored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from content_core.extract.pdf_heading_lines import (
    SECTION_NUMBER,
    BodyStyle,
    body_style,
    half_point,
    looks_like_heading,
    section_depth,
)
from content_core.extract.pdf_layout import OutlineEntry, PageLayout

__all__ = ["Heading", "find_headings"]

# Marks of an author or affiliation line under a paper's title.
_AUTHOR_MARKS = re.compile(
    r"@|[∗†‡¶]|\b(?:university|universität|institute|institut|department|college"
    r"|laboratory|school of|inc\.|ltd\.)",
    re.IGNORECASE,
)
# A heading text on this many pages is a running header, not a heading.
_RUNNING_PAGES = 3


@dataclass(slots=True)
class Heading:
    """A heading: the indices of its lines on the page, its text, its look and its level."""

    lines: list[int]
    text: str
    style: tuple[float, bool]
    level: int | None = None
    depth: int = 0
    """How deep its section number nests ("2.3" is 2); 0 when it has none."""


def find_headings(
    layouts: Sequence[PageLayout], outline: Sequence[OutlineEntry], skips: Sequence[set[int]]
) -> list[dict[int, Heading]]:
    """Return each page's headings keyed by their first line; `skips` are each page's lines
    that belong to something else (tables)."""
    body = body_style(layouts)
    pages = [
        _page_headings(layout, body, skip) for layout, skip in zip(layouts, skips, strict=True)
    ]
    _drop_running_headers(layouts, pages)
    title = _title(layouts, pages, body)
    _apply_outline(layouts, pages, outline, skips)
    _assign_levels(pages, title)
    return pages


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _page_headings(layout: PageLayout, body: BodyStyle, skip: set[int]) -> dict[int, Heading]:
    """Heading candidates by look; a heading set on two lines of one style is one heading."""
    headings: dict[int, Heading] = {}
    previous: Heading | None = None
    lines = layout.lines
    for index, line in enumerate(lines):
        if index in skip or not looks_like_heading(lines, index, body):
            previous = None
            continue
        style = (half_point(line.size), line.bold)
        last = lines[index - 1] if index else None
        if (
            previous is not None
            and previous.style[0] == style[0]
            and last is not None
            and 0 <= last.bottom - line.top < 0.9 * line.size
            and section_depth(line.text.strip()) == 0
        ):
            previous.lines.append(index)
            previous.text += " " + line.text.strip()
            continue
        text = line.text.strip()
        previous = Heading([index], text, style, depth=section_depth(text))
        headings[index] = previous
    return headings


def _drop_running_headers(
    layouts: Sequence[PageLayout], pages: Sequence[dict[int, Heading]]
) -> None:
    """Drop heading candidates that are running headers or footers: the same text on
    `_RUNNING_PAGES` pages or more, or at the same height on two pages or more."""
    per_text: Counter[str] = Counter()
    per_place: Counter[tuple[str, int]] = Counter()
    for layout, headings in zip(layouts, pages, strict=True):
        per_text.update({_norm(h.text) for h in headings.values()})
        per_place.update({_place(layout, h) for h in headings.values()})
    for layout, headings in zip(layouts, pages, strict=True):
        for first, heading in list(headings.items()):
            if (
                per_text[_norm(heading.text)] >= _RUNNING_PAGES
                or per_place[_place(layout, heading)] > 1
            ):
                del headings[first]


def _place(layout: PageLayout, heading: Heading) -> tuple[str, int]:
    return _norm(heading.text), round(layout.lines[heading.lines[0]].top)


def _title(
    layouts: Sequence[PageLayout], pages: Sequence[dict[int, Heading]], body: BodyStyle
) -> Heading | None:
    """The document's title: the largest text opening page 1 (level 1). The lines between
    it and the body text that read as authors, affiliations or dates are not headings."""
    if not layouts or not pages[0]:
        return None
    layout, headings = layouts[0], pages[0]
    lines = layout.lines
    first = min(headings, key=lambda i: (-headings[i].style[0], i))
    title = headings[first]
    if title.style[0] < body.size * 1.3 or title.depth:
        return None
    # Only small print (a journal line, a stamp) may come before the title.
    if any(
        lines[i].size >= body.size * 0.95 and len(lines[i].text.split()) > 3 for i in range(first)
    ):
        return None
    end = next(
        (
            i
            for i in range(first + 1, len(lines))
            if abs(lines[i].size - body.size) < 0.5 and len(lines[i].text.split()) > 8
        ),
        len(lines),
    )
    for index in [i for i in headings if first < i < end]:
        heading = headings[index]
        text = heading.text
        if heading.depth:
            continue
        if _AUTHOR_MARKS.search(text) or text.count(",") >= 2 or not lines[index].bold:
            del headings[index]
    return title


def _apply_outline(
    layouts: Sequence[PageLayout],
    pages: Sequence[dict[int, Heading]],
    outline: Sequence[OutlineEntry],
    skips: Sequence[set[int]],
) -> None:
    """Make each bookmark's line on its target page a heading at the bookmark's level. A
    bookmark is trusted only where the page shows its title as a whole line (or lines): a
    bookmark titled otherwise than the page ("First" over "1 Foo") changes nothing."""
    for entry in outline:
        if entry.page is None or not 0 <= entry.page < len(pages):
            continue
        layout, headings = layouts[entry.page], pages[entry.page]
        match = _find_title(layout, headings, skips[entry.page], _norm(entry.title))
        if match is None:
            continue
        line = layout.lines[match[0]]
        known = match[0] in headings
        if known and headings[match[0]].lines[: len(match)] == match:
            headings[match[0]].level = min(entry.level + 1, 6)
            continue
        for index in match:
            headings.pop(index, None)
        text = " ".join(layout.lines[i].text.strip() for i in match)
        headings[match[0]] = Heading(
            match,
            text,
            (half_point(line.size), line.bold),
            level=min(entry.level + 1, 6),
            depth=section_depth(text),
        )


def _find_title(
    layout: PageLayout, headings: dict[int, Heading], skip: set[int], title: str
) -> list[int] | None:
    """The lines that read as the bookmark's title; of several, the ones that look like a
    heading (a running head repeating the title comes before it on the page)."""
    lines = layout.lines
    taken = skip | {i for h in headings.values() if h.level is not None for i in h.lines}
    found: list[int] | None = None
    for start in range(len(lines)):
        if start in taken:
            continue
        joined = ""
        for end in range(start, min(start + 4, len(lines))):
            joined = _norm(f"{joined} {lines[end].text}")
            # Bookmarks often leave out the section number the page shows ("1.2 Scope").
            number, _, rest = joined.partition(" ")
            bare = rest if SECTION_NUMBER.match(number.upper()) else joined
            if title in (joined, bare):
                if start in headings:
                    return list(range(start, end + 1))
                found = found or list(range(start, end + 1))
                break
            if not (title.startswith(joined) or title.startswith(bare)):
                break
    return found


def _assign_levels(pages: Sequence[dict[int, Heading]], title: Heading | None) -> None:
    """Levels: the outline's where it named the heading (or its style), else the section
    number's depth, else the style's rank among the heading styles."""
    from_outline: dict[tuple[float, bool], int] = {}
    depths: dict[tuple[float, bool], Counter[int]] = {}
    for headings in pages:
        for heading in headings.values():
            if heading is title:
                title.level = 1
                continue
            counts = depths.setdefault(heading.style, Counter())
            if heading.depth:
                counts[heading.depth] += 1
            if heading.level is not None:
                from_outline.setdefault(heading.style, heading.level)
    by_style: dict[tuple[float, bool], int] = {}
    last = 0
    for style in sorted(depths, key=lambda s: (-s[0], not s[1])):
        if style in from_outline:
            last = from_outline[style]
        elif depths[style]:
            last = depths[style].most_common(1)[0][0]
        else:
            last = last + 1
        by_style[style] = min(max(last, 1), 6)
    # Under a title every section sits a level lower, unless the outline said otherwise.
    shift = int(
        title is not None
        and not from_outline
        and bool(by_style)
        and min(by_style.values()) == 1
        and all(style[0] < title.style[0] for style in by_style)
    )
    for headings in pages:
        for heading in headings.values():
            if heading.level is None:
                level = heading.depth or by_style[heading.style]
                heading.level = min(level + shift, 6)
