"""Right-to-left text of a PDF page back in logical (reading) order.

A PDF draws glyphs where they go, so Arabic and Hebrew come out of the content stream in visual
order, left to right. PDFium reverses only the strong right-to-left runs it finds, word by word
on mostly-LTR lines, so a Hebrew phrase in an English line reads with its words swapped, and a
ligature (lam-alef) or a vowel mark lands on the wrong side.

For each line holding a right-to-left letter this module rebuilds the visual order from where
the glyphs stand (glyphs sorted by position, a glyph that maps to several characters kept
whole, a combining mark put on the visual side of its base that reading order needs, spaces
set from the gaps between glyphs), then applies the Unicode bidi
algorithm (python-bidi) to that visual line. The algorithm's reordering is its own inverse when
the levels come out the same on both sides, which holds for plain text (no explicit
embeddings); brackets PDFium mirrored are mirrored back by the same step. The paragraph
direction is the majority direction of the line's letters (the bytes do not say it: an RTL
paragraph and an LTR one can look alike). Lines without a right-to-left letter are returned
exactly as given.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

# The pure-Python implementation: unlike the Rust one it also mirrors brackets at right-to-left
# levels, which undoes the mirroring PDFium applies to the runs it turns.
from bidi.algorithm import get_display

__all__ = ["PlacedChar", "has_rtl", "logical_text"]

# Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, Arabic supplements and presentation
# forms, and the supplementary-plane RTL scripts.
_RTL = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)
_MARK_CATEGORIES = frozenset({"Mn", "Me"})
# A gap wider than this (in ems of the font size) between two glyph boxes is a word space.
_SPACE_GAP_EM = 0.15


@dataclass(frozen=True, slots=True)
class PlacedChar:
    """One character of a page in the extractor's order, with its glyph's horizontal extent.

    `left` and `right` bound the glyph's advance (PDFium's loose box), so that the glyphs of
    a word touch and a gap means a space; `size` is the font size.
    """

    char: str
    left: float
    right: float
    size: float

    @property
    def center(self) -> float:
        """The middle of the glyph box."""
        return (self.left + self.right) / 2


def has_rtl(text: str) -> bool:
    """Return whether `text` holds a right-to-left letter (Hebrew, Arabic, ...)."""
    return _RTL.search(text) is not None


def logical_text(chars: Sequence[PlacedChar]) -> str:
    """Return the text of `chars`, lines split at CR/LF, right-to-left lines in logical order."""
    out: list[str] = []
    line: list[PlacedChar] = []
    for placed in chars:
        if placed.char in "\r\n":
            out.append(_line_text(line))
            out.append(placed.char)
            line = []
        else:
            line.append(placed)
    out.append(_line_text(line))
    return "".join(out)


def _line_text(line: list[PlacedChar]) -> str:
    text = "".join(placed.char for placed in line)
    if not has_rtl(text):
        return text
    return _get_display(_visual(line), base_dir=_direction(text))


def _get_display(visual: str, *, base_dir: str) -> str:
    return str(get_display(visual, base_dir=base_dir))


def _direction(text: str) -> str:
    rtl = ltr = 0
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            rtl += 1
        elif kind == "L":
            ltr += 1
    return "R" if rtl > ltr else "L"


def _visual(line: list[PlacedChar]) -> str:
    """Return the characters of `line` in visual order, left to right, from where they stand.

    Characters sharing one glyph box (a glyph that maps to several characters, such as a
    lam-alef ligature) stay together in the extractor's order; a combining mark drawn as a glyph
    of its own joins the nearest base glyph, on its left when the base is right-to-left (so that
    it follows the base once the run is turned to reading order). Spaces are set again from the
    gaps between glyph boxes: right-to-left producers often draw none (a gap does the job) or
    draw them apart from the words, and the positions PDFium gives its own spaces are unreliable.
    """
    clusters: list[list[PlacedChar]] = []
    for placed in line:
        if placed.char.isspace():
            continue
        last = clusters[-1][0] if clusters else None
        if last is not None and (last.left, last.right) == (placed.left, placed.right):
            clusters[-1].append(placed)
        else:
            clusters.append([placed])
    bases = [c for c in clusters if not all(_is_mark(p.char) for p in c)]
    if not bases:
        return "".join(p.char for p in line)
    # Two glyphs at one place (a broken font mapping): the right-to-left one first, so that
    # turning its run around cannot split the left-to-right text that follows.
    bases.sort(key=lambda c: (c[0].center, not has_rtl(c[0].char)))
    centers = [c[0].center for c in bases]
    before: dict[int, str] = {}
    after: dict[int, str] = {}
    for cluster in clusters:
        if not all(_is_mark(p.char) for p in cluster):
            continue
        marks = "".join(p.char for p in cluster)
        at = bisect.bisect_left(centers, cluster[0].center)
        near = min((i for i in (at - 1, at) if 0 <= i < len(bases)),
                   key=lambda i: abs(centers[i] - cluster[0].center))
        if has_rtl(bases[near][0].char):
            before[near] = before.get(near, "") + marks
        else:
            after[near] = after.get(near, "") + marks
    out: list[str] = []
    for index, cluster in enumerate(bases):
        if index:
            previous = bases[index - 1][0]
            size = max(previous.size, cluster[0].size, 1.0)
            if cluster[0].left - previous.right > _SPACE_GAP_EM * size:
                out.append(" ")
        out.append(before.get(index, "") + "".join(p.char for p in cluster) + after.get(index, ""))
    return "".join(out)


def _is_mark(char: str) -> bool:
    return unicodedata.category(char) in _MARK_CATEGORIES
