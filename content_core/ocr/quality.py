"""The per-page quality score that decides which PDF pages a vision-language model reads.

A score of 1.0 is a clean text layer, 0.0 a page with no readable text at all; the reason
names the worst signal. The signals are cheap: they read the page's extracted text (its
unreadable glyphs, its density of mathematical symbols, lines broken into fragments), and
only on a page with almost no text, its count of vector paths (text drawn as outlines).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["PageQuality", "drawn_text_quality", "scan_quality", "text_quality"]

# A page whose share of unreadable glyphs reaches this is as hard as a page of garbage;
# OcrConfig.max_garbage_share (0.2 by default) sends such pages to OCR already.
_GLYPHS_HARD = 0.2
# Shares at which a page counts as fully formula-bound. Measured on a real mathematics thesis
# (the GeoTopo thesis of py-pdf's sample files): its formula pages hold 4-11 % mathematical
# symbols (non-ASCII: ASCII "+", "=", "|" fill ordinary tables) and a third to half of their
# lines are fragments of three characters or fewer; prose pages hold under 1 % and few
# fragments, the table pages in tests/corpus/pdf none and under a quarter.
_MATH_HARD = 0.08
_FRAGMENTS_HARD = 0.6
# Fewer symbols or fragments than these say nothing (a Greek name, a short list).
_MIN_MATH = 10
_MIN_FRAGMENTS = 10
_FRAGMENT_CHARS = 3
# A page with almost no text but this many vector paths draws its text as outlines
# (or is a dense chart, which is as hard for a text layer).
_DRAWN_PATHS = 400


@dataclass(frozen=True, slots=True)
class PageQuality:
    """How readable a page's text is (0 unreadable .. 1 clean) and the worst signal's name:
    "ok", "glyphs", "formulas", "vector_text", or the OCR layer's reason for a scan."""

    score: float
    reason: str


def scan_quality(reason: str) -> PageQuality:
    """A page without a usable text layer (the OCR layer's `reason`: "no_text", "garbage",
    "image"): the hardest kind."""
    return PageQuality(0.0, reason)


def text_quality(text: str) -> PageQuality:
    """The quality of a page's text layer, from its unreadable glyphs and formula density."""
    chars = "".join(text.split())
    if not chars:
        return PageQuality(0.0, "no_text")
    bad = math = 0
    # Each distinct character is classified once (a page has a few dozen of them).
    for c, count in Counter(chars).items():
        if c == "\ufffd" or unicodedata.category(c) in ("Co", "Cn", "Cc"):
            bad += count
        elif ord(c) >= 128 and _is_math(c):
            math += count
    hardness = {"glyphs": bad / len(chars) / _GLYPHS_HARD}
    if math >= _MIN_MATH:
        hardness["formulas"] = math / len(chars) / _MATH_HARD
    if math:
        lines = [line for line in text.splitlines() if line.strip()]
        fragments = sum(1 for line in lines if len(line.strip()) <= _FRAGMENT_CHARS)
        if fragments >= _MIN_FRAGMENTS:
            hardness["formulas"] = max(
                hardness.get("formulas", 0.0), fragments / len(lines) / _FRAGMENTS_HARD
            )
    reason, worst = max(hardness.items(), key=lambda item: item[1])
    if worst <= 0.0:
        return PageQuality(1.0, "ok")
    return PageQuality(round(max(0.0, 1.0 - worst), 4), reason)


def drawn_text_quality(pdfium: Any, page: Any) -> PageQuality:
    """For a page with almost no text layer: "vector_text" when it draws many paths."""
    paths = 0
    for _ in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_PATH], max_depth=2):
        paths += 1
        if paths >= _DRAWN_PATHS:
            return PageQuality(0.1, "vector_text")
    return PageQuality(1.0, "ok")


def _is_math(c: str) -> bool:
    """A mathematical symbol, Greek letter or mathematical alphanumeric."""
    o = ord(c)
    return (
        unicodedata.category(c) == "Sm"
        or 0x370 <= o <= 0x3FF
        or 0x1D400 <= o <= 0x1D7FF
        or 0x2100 <= o <= 0x214F
    )
