"""Which lines of a PDF page look like headings: set apart from the document's body text by
size, weight, font family, capitals or space above, and not a caption, a theorem lead-in, a
date, a contents line or a formula. `pdf_headings` builds the document's headings from them.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from content_core.extract.pdf_layout import PageLayout, TextLine
from content_core.extract.pdf_tables import segments

__all__ = [
    "SECTION_NUMBER",
    "BodyStyle",
    "body_style",
    "half_point",
    "looks_like_heading",
    "section_depth",
]

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
SECTION_NUMBER = re.compile(r"(?:§\s?)?(?:\d{1,3}|[A-Z]|[IVX]{1,5})(?:\.\d{1,3}){0,5}\.?$")
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
# Italic, monospaced and math fonts differ from the body font inside prose, not for headings.
_INLINE_FONTS = re.compile(r"italic|oblique|mono|courier|code|math|symbol|^cm(?:mi|sy|ex|ti|tt)")
_FONT_STYLE = re.compile(
    r"[-,_ ]?(?:bold|italic|oblique|regular|roman|medium|semibold|light|black|heavy|book"
    r"|mt|ps|psmt)+$|\d+$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class BodyStyle:
    """The document's body text: its size, font family and usual space between lines."""

    size: float
    family: str
    gap: float
    """Usual white space between two lines of a paragraph, in points."""


@functools.lru_cache(maxsize=512)
def _family(font: str) -> str:
    name = font.split("+")[-1]
    for _ in range(3):
        name = _FONT_STYLE.sub("", name)
    return name.casefold()


def body_style(layouts: Sequence[PageLayout]) -> BodyStyle:
    """The most used size (by characters), its most used font family and line spacing."""
    sizes: Counter[float] = Counter()
    fonts: Counter[tuple[float, str]] = Counter()
    for layout in layouts:
        for line in layout.lines:
            chars = len(line.text.strip())
            sizes[half_point(line.size)] += chars
            if line.font:
                fonts[half_point(line.size), _family(line.font)] += chars
    if not sizes:
        return BodyStyle(0.0, "", 0.0)
    size = sizes.most_common(1)[0][0]
    family = max(((n, f) for (s, f), n in fonts.items() if s == size), default=(0, ""))[1]
    gaps: list[float] = []
    for layout in layouts:
        lines = layout.lines
        for above, line in zip(lines, lines[1:], strict=False):
            if half_point(above.size) == size == half_point(line.size):
                gap = above.bottom - line.top
                if -0.5 * size <= gap < 1.5 * size:
                    gaps.append(gap)
    gaps.sort()
    return BodyStyle(size, family, gaps[len(gaps) // 2] if gaps else 0.3 * size)


def half_point(size: float) -> float:
    """The size rounded to half a point, so that one style reads as one size."""
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


def section_depth(text: str) -> int:
    """How deep the section number opening `text` nests ("2.3.1 ..." is 3); 0 for none."""
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


def looks_like_heading(lines: Sequence[TextLine], index: int, body: BodyStyle) -> bool:
    """Whether line `index` of a page is set apart from the body text as a heading."""
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
    return len(pieces) == 1 or len(pieces) == 2 and bool(SECTION_NUMBER.match(pieces[0][2]))


def _bold_heading(lines: Sequence[TextLine], index: int, body: BodyStyle) -> bool:
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


def _plain_heading(line: TextLine, text: str, body: BodyStyle) -> bool:
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
        and (text[0].isupper() or section_depth(text) > 0)
    )
    capitals = (
        text.upper() == text != text.lower() and words <= _MAX_CAPS_HEADING_WORDS and letters >= 4
    )
    return other_font or capitals
