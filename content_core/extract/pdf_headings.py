"""Headings of a PDF document, found from how its lines look and sit against the body text.

A line is a heading when it is set larger than the body, wholly in bold, or (short, with
space above it) in another font family or in capitals; captions, theorem lead-ins, author and
date lines, equations and running heads are not. Levels come from the section number when
there is one ("2.3.1" is level 3), else from the style's rank; the title (the largest text
opening page 1) is level 1. The outline (bookmarks) confirms headings the page shows and sets
their levels; a bookmark whose title the page does not show as a heading is ignored.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from content_core.extract.pdf_layout import OutlineEntry, PageLayout, TextLine
from content_core.extract.pdf_tables import segments

__all__ = ["Heading", "find_headings"]

# A line this much larger than the body text is a heading candidate.
_HEADING_SIZE_RATIO = 1.15
_MAX_HEADING_CHARS = 150
_MAX_HEADING_WORDS = 20
_MAX_BOLD_HEADING_CHARS = 100
# A heading told only by its font or capitals is short.
_MAX_PLAIN_HEADING_WORDS = 12
_MAX_CAPS_HEADING_WORDS = 8
# A bold label ending in a colon ("Summary Statistics:") is a heading when this short.
_MAX_LABEL_WORDS = 6
# Spacing and combining marks PDFium reports as letters ("Pˆ" is a symbol, not a word).
_MODIFIERS = frozenset("ˆˇ˘˙˚˛˜˝¨´`¯¸")
# "1", "2.3", "A.1", "IV.", "§ 4": a section number before a title.
_SECTION_NUMBER = re.compile(r"(?:§\s?)?(?:\d{1,3}|[A-Z]|[IVX]{1,5})(?:\.\d{1,3}){0,5}\.?$")
# The number at the start of a heading's text and how deep it nests.
_NUMBERED = re.compile(
    r"(?:(?P<word>chapter|kapitel|chapitre|part|teil|appendix|anhang|annex)\s+[0-9A-Z]{1,4}\b"
    r"|§\s?\d{1,3}(?:\.\d{1,3})*"
    r"|(?P<digits>\d{1,3}(?:\.\d{1,3}){0,5})\.?(?=\s+\S)"
    r"|(?P<letter>[A-Z])(?P<sub>(?:\.\d{1,3}){1,5}\.?|\.)(?=\s+\S)"
    r"|[IVX]{1,5}\.(?=\s+\S))",
    re.IGNORECASE,
)
# Figure and table captions, theorem-like lead-ins: set apart like headings, but not headings.
_NOT_HEADING = re.compile(
    r"(?:fig(?:ure|\.)?|table|tab\.|algorithm|listing|abbildung|tabelle|chart|exhibit"
    r"|definition|theorem|lemma|satz|korollar|corollary|proposition|example|beispiel"
    r"|remark|bemerkung|proof|beweis|notation|exercise|aufgabe|equation|folgerung|hinweis)"
    r"\s*[0-9IVX(:.]",
    re.IGNORECASE,
)
# A table of contents line: a title and its page number, often with dot leaders.
_TOC_ENTRY = re.compile(
    r"(?:\.\s?){3,}\s*\d{1,4}$|^(?:\d{1,3}(?:\.\d{1,3})*|[A-Z]\.?)\s.*\D\s\d{1,4}$"
)
_MATHS = re.compile(r"[=+<>^_{}()\[\]|/\\∈⊆⊂∪∩→⇒≤≥±∑∫√∞]")
_MONTHS = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|januar|februar|märz|mai|juni|juli"
    r"|oktober|dezember)[a-z]*\.?"
)
_DATE = re.compile(rf"(?:\d{{1,2}}\.?\s+)?{_MONTHS}\s+(?:\d{{1,2}},?\s+)?\d{{4}}$", re.IGNORECASE)
# Marks of an author or affiliation line under a paper's title.
_AUTHOR_MARKS = re.compile(
    r"@|[∗†‡¶]|\b(?:university|universität|institute|institut|department|college"
    r"|laboratory|school of|inc\.|ltd\.)",
    re.IGNORECASE,
)
# Italic, monospaced and math fonts differ from the body font inside prose, not for headings.
_INLINE_FONTS = re.compile(r"italic|oblique|mono|courier|code|math|symbol|^cm(?:mi|sy|ex|ti|tt)")
_FONT_STYLE = re.compile(
    r"[-,_ ]?(?:bold|italic|oblique|regular|roman|medium|semibold|light|black|heavy|book"
    r"|mt|ps|psmt)+$|\d+$",
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


@dataclass(frozen=True, slots=True)
class _Body:
    size: float
    family: str
    gap: float
    """Usual white space between two lines of a paragraph, in points."""


def find_headings(
    layouts: Sequence[PageLayout], outline: Sequence[OutlineEntry], skips: Sequence[set[int]]
) -> list[dict[int, Heading]]:
    """Return each page's headings keyed by their first line; `skips` are each page's lines
    that belong to something else (tables)."""
    body = _body(layouts)
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


@functools.lru_cache(maxsize=512)
def _family(font: str) -> str:
    name = font.split("+")[-1]
    for _ in range(3):
        name = _FONT_STYLE.sub("", name)
    return name.casefold()


def _body(layouts: Sequence[PageLayout]) -> _Body:
    sizes: Counter[float] = Counter()
    fonts: Counter[tuple[float, str]] = Counter()
    for layout in layouts:
        for line in layout.lines:
            chars = len(line.text.strip())
            sizes[_half(line.size)] += chars
            if line.font:
                fonts[_half(line.size), _family(line.font)] += chars
    if not sizes:
        return _Body(0.0, "", 0.0)
    size = sizes.most_common(1)[0][0]
    family = max(((n, f) for (s, f), n in fonts.items() if s == size), default=(0, ""))[1]
    gaps: list[float] = []
    for layout in layouts:
        lines = layout.lines
        for above, line in zip(lines, lines[1:], strict=False):
            if _half(above.size) == size == _half(line.size):
                gap = above.bottom - line.top
                if -0.5 * size <= gap < 1.5 * size:
                    gaps.append(gap)
    gaps.sort()
    return _Body(size, family, gaps[len(gaps) // 2] if gaps else 0.3 * size)


def _half(size: float) -> float:
    return round(size * 2) / 2


def _gap_above(lines: Sequence[TextLine], index: int) -> float:
    """White space between the line and the one before it; infinite when it opens the page
    or a column (the line before is not above it)."""
    if index == 0:
        return float("inf")
    above, line = lines[index - 1], lines[index]
    if above.bottom < line.top - 1.0:
        return float("inf")
    # The first and last character boxes stand for the line's extent (`left` and `right`
    # scan every box, and this runs for most lines).
    if (
        above.lefts
        and line.lefts
        and (above.rights[-1] < line.lefts[0] or line.rights[-1] < above.lefts[0])
    ):
        return float("inf")
    return above.bottom - line.top


def _depth(text: str) -> int:
    match = _NUMBERED.match(text)
    if match is None:
        return 0
    if match.group("digits"):
        return match.group("digits").count(".") + 1
    if match.group("letter") and match.group("sub") != ".":
        return match.group("sub").rstrip(".").count(".") + 1
    return 1


def _is_heading_text(text: str) -> bool:
    if not (
        2 <= len(text) <= _MAX_HEADING_CHARS
        and (text[0].isalnum() or text[0] in "\"'«“§(")
        and len(text.split()) <= _MAX_HEADING_WORDS
    ):
        return False
    # An equation line or a row of numbers has few letters (an accent alone is no letter).
    letters = sum(c.isalpha() and c not in _MODIFIERS for c in text)
    return letters >= 2 and letters >= 0.5 * sum(not c.isspace() for c in text)


def _looks_like_heading(lines: Sequence[TextLine], index: int, body: _Body) -> bool:
    line = lines[index]
    if body.size <= 0 or line.size < body.size * 0.95:
        return False
    by_size = line.size >= body.size * _HEADING_SIZE_RATIO
    # Cheap tests first: most lines are body text, neither larger, bold nor set apart.
    if not (by_size or line.bold) and _gap_above(lines, index) <= body.gap + 0.6 * body.size:
        return False
    text = line.text.strip()
    if not _is_heading_text(text) or _NOT_HEADING.match(text):
        return False
    if _DATE.match(text) or _TOC_ENTRY.search(text):
        return False
    open_end = not text.endswith((".", ",", ";", ":"))
    if not by_size and not (
        line.bold and len(text) <= _MAX_BOLD_HEADING_CHARS and _bold_heading(lines, index, body)
    ):
        if not open_end or not _plain_heading(line, text, body):
            return False
    if line.top - line.bottom > 2.5 * max(line.size, 1.0):
        return False  # set vertically (an arXiv stamp in the margin)
    # A line cut into columns by wide gaps is a table row (a bold header), not a heading;
    # but a section number is often set a quad away from its title ("1   Introduction").
    pieces = segments(line)
    return len(pieces) == 1 or len(pieces) == 2 and bool(_SECTION_NUMBER.match(pieces[0][2]))


def _bold_heading(lines: Sequence[TextLine], index: int, body: _Body) -> bool:
    """A wholly bold line is a heading unless it ends like a sentence; a short bold label
    ending in a colon ("Approval:") is one when space sets it apart from what is above."""
    text = lines[index].text.strip()
    if not text.endswith((".", ",", ";", ":")):
        return True
    return (
        text.endswith(":")
        and text.count(":") == 1
        and len(text.split()) <= _MAX_LABEL_WORDS
        and _gap_above(lines, index) > body.gap + 0.6 * body.size
    )


def _plain_heading(line: TextLine, text: str, body: _Body) -> bool:
    """A short line at body size and weight, set apart by space above (tested already), is a
    heading when set in another font family than the body, or in capitals."""
    words = len(text.split())
    if words > _MAX_PLAIN_HEADING_WORDS or _MATHS.search(text):
        return False
    letters = sum(c.isalpha() for c in text)
    if letters < 0.8 * len(text.replace(" ", "")):
        return False
    family = _family(line.font)
    other_font = (
        bool(family and body.family)
        and family != body.family
        and not _INLINE_FONTS.search(line.font.casefold())
        and (text[0].isupper() or _depth(text) > 0)
    )
    capitals = (
        text.upper() == text != text.lower() and words <= _MAX_CAPS_HEADING_WORDS and letters >= 4
    )
    return other_font or capitals


def _page_headings(layout: PageLayout, body: _Body, skip: set[int]) -> dict[int, Heading]:
    """Heading candidates by look; a heading set on two lines of one style is one heading."""
    headings: dict[int, Heading] = {}
    previous: Heading | None = None
    lines = layout.lines
    for index, line in enumerate(lines):
        if index in skip or not _looks_like_heading(lines, index, body):
            previous = None
            continue
        style = (_half(line.size), line.bold)
        last = lines[index - 1] if index else None
        if (
            previous is not None
            and previous.style[0] == style[0]
            and last is not None
            and 0 <= last.bottom - line.top < 0.9 * line.size
            and _depth(line.text.strip()) == 0
        ):
            previous.lines.append(index)
            previous.text += " " + line.text.strip()
            continue
        text = line.text.strip()
        previous = Heading([index], text, style, depth=_depth(text))
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
    layouts: Sequence[PageLayout], pages: Sequence[dict[int, Heading]], body: _Body
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
            (_half(line.size), line.bold),
            level=min(entry.level + 1, 6),
            depth=_depth(text),
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
            bare = rest if _SECTION_NUMBER.match(number.upper()) else joined
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
