"""What a PDF page looks like, read from PDFium: its text lines (with font size, weight and
character boxes), its ruling lines, and the document outline (bookmarks).

`pdf_structure` turns these into Markdown headings and tables; this module only reads.
Coordinates are PDF points in the unrotated page frame, origin at the bottom left.
"""

from __future__ import annotations

import ctypes
import functools
import math
import re
from array import array
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "GlyphRow",
    "OutlineEntry",
    "PageLayout",
    "Ruling",
    "TextLine",
    "read_layout",
    "read_outline",
]

# Font weights at and above this are bold (CSS scale: 400 regular, 700 bold).
_BOLD_WEIGHT = 600
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
# TeX's bold extended fonts: CMBX10, SFBX1095, ECBX1200 (no "bold" in the name).
_TEX_BOLD = re.compile(r"[A-Z]{2}BX\d")
# PDF font descriptor flag ForceBold (bit 19).
_FORCE_BOLD = 1 << 18
# A stroke shorter than this is a tick or a glyph-like drawing, not a table rule.
_MIN_RULING_PT = 6.0
# A filled rectangle thinner than this is a drawn rule.
_THIN_PT = 3.0
# Path segments read per page: a page drawn with more (a map, a plot) is a drawing, and
# reading it all would cost more than the text; its tables, if any, are found from the text.
_MAX_PAGE_SEGMENTS = 20_000
_MAX_OUTLINE_ENTRIES = 5000
_MAX_FONT_NAME = 256
# A run of text wider than this many ems per character (two for a wide CJK one) has gaps:
# Courier sets 0.6, proportional fonts about 0.5.
_MAX_RUN_EM_PER_CHAR = 0.62


@dataclass(frozen=True, slots=True)
class GlyphRow:
    """A row of glyphs of a text line that PDFium did not break where the page does: the
    characters from `start` (an index into the line's text) on, up to the next row's."""

    start: int
    bottom: float
    top: float


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of the page's text as PDFium orders it, with its look and its glyph boxes."""

    text: str
    # Arrays of doubles, not tuples of floats: a long document holds a box per character of
    # every page until its structure is known, at 8 bytes a value instead of 32.
    lefts: array[float]
    """Left edge of each character of `text` (same length as `text`)."""
    rights: array[float]
    top: float
    bottom: float
    size: float
    """Median font size of the line's visible characters, in points."""
    bold: bool
    """Every sampled character of the line is in a bold font."""
    font: str = ""
    """Name of the font every sampled character is set in (subset tag dropped), else ""."""
    angle: float = 0.0
    """Rotation of the line's text, in degrees counter-clockwise (0 upright, 90 set bottom to
    top as an arXiv stamp in the left margin is)."""
    glyph_lefts: array[float] | None = None
    """Left edge of each character's glyph (its tight box), where spans of the text that
    start or end inside the line are boxed; None when unknown."""
    glyph_bottom: float | None = None
    """Bottom of the line's glyphs (their tight boxes: `bottom` is the font's descent)."""
    glyph_top: float | None = None
    """Top of the line's glyphs."""
    glyph_rows: tuple[GlyphRow, ...] = ()
    """The rows the line's glyphs sit in when they wrap onto more than one (else empty)."""

    @property
    def left(self) -> float:
        """Left edge of the line."""
        return min(self.lefts) if self.lefts else 0.0

    @property
    def right(self) -> float:
        """Right edge of the line."""
        return max(self.rights) if self.rights else 0.0


@dataclass(frozen=True, slots=True)
class Ruling:
    """A horizontal or vertical line drawn on the page (a table rule or cell border)."""

    horizontal: bool
    at: float
    """y of a horizontal ruling, x of a vertical one."""
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class PageLayout:
    """A page's text as the text layer gives it, plus its lines and rulings."""

    index: int
    text: str
    lines: tuple[TextLine, ...] = ()
    rulings: tuple[Ruling, ...] = ()
    top: float = 0.0
    """Top edge of the page's visible box (0 when unknown), in the lines' frame."""
    bottom: float = 0.0
    """Bottom edge of the page's visible box."""
    rtl_lines: tuple[TextLine, ...] = ()
    """The lines as drawn of a page with right-to-left text, whose `text` is in logical order
    and which has no `lines`: they only place its lines on the page, one for one."""


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A bookmark: its title, nesting level (0 = top) and target page index (or None)."""

    title: str
    level: int
    page: int | None


def read_layout(raw: Any, page: Any, textpage: Any, text: str, index: int) -> PageLayout:
    """Return the layout of one page whose text-layer text is `text`."""
    lines = tuple(_lines(raw, textpage, text))
    _, bottom, _, top = page.get_bbox()
    return PageLayout(
        index=index, text=text, lines=lines, rulings=tuple(_rulings(raw, page)),
        top=float(top), bottom=float(bottom),
    )  # fmt: skip


def read_outline(document: Any) -> tuple[OutlineEntry, ...]:
    """Return the document's bookmarks in order (empty when it has none)."""
    entries: list[OutlineEntry] = []
    for bookmark in document.get_toc(max_depth=6):
        if len(entries) >= _MAX_OUTLINE_ENTRIES:
            break
        title = " ".join(bookmark.get_title().split())
        if not title:
            continue
        dest = bookmark.get_dest()
        page = dest.get_index() if dest is not None else None
        entries.append(OutlineEntry(title=title, level=bookmark.level, page=page))
    return tuple(entries)


def _lines(raw: Any, textpage: Any, text: str) -> list[TextLine]:
    count = raw.FPDFText_CountChars(textpage.raw)
    if count <= 0:
        return []
    # FPDFText_GetText is indexed like the characters unless the page holds characters
    # outside the BMP (two UTF-16 units, one character); then ask for each code point.
    if len(text) != count:
        text = "".join(_char(raw, textpage, i) for i in range(count))
    rect = raw.FS_RECTF()
    lines: list[TextLine] = []
    start = 0
    while start < count:
        end = text.find("\n", start)
        end = count if end < 0 else end
        line_end = end - 1 if end > start and text[end - 1] == "\r" else end
        line = _line(raw, textpage, text, start, line_end, rect)
        if line is not None:
            lines.append(_with_glyphs(raw, textpage, line, start, line_end))
        start = end + 1
    return lines


def _char(raw: Any, textpage: Any, index: int) -> str:
    code = raw.FPDFText_GetUnicode(textpage.raw, index)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def _line(raw: Any, textpage: Any, text: str, start: int, end: int, rect: Any) -> TextLine | None:
    if end <= start or not text[start:end].strip():
        return None
    # PDFium cuts a line into one rectangle per text run; a line of one run has no gap
    # inside, so its characters need no box of their own (most prose lines: far fewer calls).
    if raw.FPDFText_CountRects(textpage.raw, start, end - start) == 1:
        line = _single_run_line(raw, textpage, text, start, end)
        # A run far wider than its text is set with gaps (a LaTeX table row is one run):
        # its columns show only in the characters' boxes.
        span = text[start:end]
        ems = len(span) if span.isascii() else sum(2 if c >= "\u2e80" else 1 for c in span)
        if line is None or line.right - line.left <= _MAX_RUN_EM_PER_CHAR * line.size * ems:
            return line
    lefts: list[float] = []
    rights: list[float] = []
    tops: list[float] = []
    bottoms: list[float] = []
    left = right = 0.0
    visible: list[int] = []
    get_box, handle, box = raw.FPDFText_GetLooseCharBox, textpage.raw, ctypes.byref(rect)
    for index in range(start, end):
        space = text[index].isspace()
        if get_box(handle, index, box):
            left, right = rect.left, rect.right
            if not space:
                visible.append(index)
                tops.append(rect.top)
                bottoms.append(rect.bottom)
        else:
            # A character PDFium made up (a space between words): no box of its own.
            left = right
        lefts.append(left)
        rights.append(left if space else right)
    if not visible:
        return None
    top, bottom = max(tops), min(bottoms)
    return _described(
        raw, textpage, text[start:end], visible, array("d", lefts), array("d", rights), top, bottom
    )


def _single_run_line(raw: Any, textpage: Any, text: str, start: int, end: int) -> TextLine | None:
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    if not raw.FPDFText_GetRect(textpage.raw, 0, left, top, right, bottom):
        return None
    visible = [i for i in range(start, end) if not text[i].isspace()]
    if not visible:
        return None
    width = end - start
    lefts, rights = array("d", [left.value]) * width, array("d", [right.value]) * width
    return _described(
        raw, textpage, text[start:end], visible, lefts, rights, top.value, bottom.value
    )


def _with_glyphs(raw: Any, textpage: Any, line: TextLine, start: int, end: int) -> TextLine:
    """`line` (the characters `start` to `end`) with its glyphs' tight extent: the left edge
    of each character and the bottom and top of the visible ones. A character without a box
    (a made-up space) starts where the one before it ended."""
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    get_box, handle = raw.FPDFText_GetCharBox, textpage.raw
    lefts = array("d")
    after = line.left
    low, high = line.top, line.bottom
    rows: list[GlyphRow] = []
    row_low, row_high, row_start = line.top, line.bottom, 0
    for index in range(start, end):
        if get_box(handle, index, left, right, bottom, top):
            at = index - start
            # A glyph far left of the one before it and below it starts a new row.
            if lefts and left.value < after - 2 * line.size and top.value < row_low:
                rows.append(GlyphRow(row_start, row_low, row_high))
                row_low, row_high, row_start = line.top, line.bottom, at
            lefts.append(left.value)
            after = right.value
            if top.value > bottom.value and not line.text[at].isspace():
                low, high = min(low, bottom.value), max(high, top.value)
                row_low, row_high = min(row_low, bottom.value), max(row_high, top.value)
        else:
            lefts.append(after)
    if high <= low:
        return line
    if rows:
        rows.append(GlyphRow(row_start, row_low, row_high))
    return replace(
        line, glyph_lefts=lefts, glyph_bottom=low, glyph_top=high, glyph_rows=tuple(rows)
    )


def _described(
    raw: Any,
    textpage: Any,
    text: str,
    visible: list[int],
    lefts: array[float],
    rights: array[float],
    top: float,
    bottom: float,
) -> TextLine:
    """The line with its font size, weight and font name, sampled at its first, middle and
    last visible characters."""
    samples = sorted({visible[0], visible[len(visible) // 2], visible[-1]})
    handle = textpage.raw
    matrix, flags = raw.FS_MATRIX(), ctypes.c_int(0)
    buffer = ctypes.create_string_buffer(_MAX_FONT_NAME)
    sizes: list[float] = []
    names: set[str] = set()
    bold = True
    # The size a line is seen at: many producers set a 1-point font and scale it by the text
    # matrix, or draw in pixels scaled to points. One matrix a line: its scale rarely varies.
    scale = angle = 0.0
    if raw.FPDFText_GetMatrix(handle, visible[len(visible) // 2], ctypes.byref(matrix)):
        scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
        # The same matrix says which way the text runs (margin stamps, watermarks).
        angle = round(math.degrees(math.atan2(matrix.b, matrix.a)) % 360.0, 1) % 360.0
    scale = scale or 1.0
    for index in samples:
        sizes.append(float(raw.FPDFText_GetFontSize(handle, index)) * scale)
        length = raw.FPDFText_GetFontInfo(
            handle, index, buffer, _MAX_FONT_NAME, ctypes.byref(flags)
        )
        name, bold_name = _font_name(buffer.raw[: max(min(length, _MAX_FONT_NAME) - 1, 0)])
        names.add(name)
        bold = bold and (
            bold_name
            or bool(flags.value & _FORCE_BOLD)
            or raw.FPDFText_GetFontWeight(handle, index) >= _BOLD_WEIGHT
        )
    sizes.sort()
    return TextLine(
        text=text, lefts=lefts, rights=rights, top=float(top), bottom=float(bottom),
        size=round(sizes[len(sizes) // 2], 1), bold=bold,
        font=names.pop() if len(names) == 1 else "", angle=angle,
    )  # fmt: skip


@functools.lru_cache(maxsize=512)
def _font_name(raw_name: bytes) -> tuple[str, bool]:
    """The font's name without its subset tag ("ABCDEF+") and whether the name says bold."""
    name = raw_name.decode("latin-1")
    if len(name) > 7 and name[6] == "+" and name[:6].isupper():
        name = name[7:]
    lower = name.lower()
    return name, any(mark in lower for mark in _BOLD_NAMES) or bool(_TEX_BOLD.match(name))


def _rulings(raw: Any, page: Any) -> list[Ruling]:
    """Axis-aligned straight segments of the page's top-level path objects."""
    rulings: list[Ruling] = []
    budget = _MAX_PAGE_SEGMENTS
    matrix = raw.FS_MATRIX()
    x, y = ctypes.c_float(), ctypes.c_float()
    for obj_index in range(raw.FPDFPage_CountObjects(page.raw)):
        obj = raw.FPDFPage_GetObject(page.raw, obj_index)
        if not obj or raw.FPDFPageObj_GetType(obj) != raw.FPDF_PAGEOBJ_PATH:
            continue
        if not raw.FPDFPageObj_GetMatrix(obj, ctypes.byref(matrix)):
            continue
        count = raw.FPDFPath_CountSegments(obj)
        budget -= max(count, 0)
        if budget < 0:
            return []
        points: list[tuple[float, float]] = []
        first: tuple[float, float] | None = None
        for seg_index in range(count):
            segment = raw.FPDFPath_GetPathSegment(obj, seg_index)
            if not segment or not raw.FPDFPathSegment_GetPoint(segment, x, y):
                continue
            point = (
                matrix.a * x.value + matrix.c * y.value + matrix.e,
                matrix.b * x.value + matrix.d * y.value + matrix.f,
            )
            kind = raw.FPDFPathSegment_GetType(segment)
            if kind == raw.FPDF_SEGMENT_MOVETO:
                first = point
            elif kind == raw.FPDF_SEGMENT_LINETO and points:
                _add_segment(rulings, points[-1], point)
            if raw.FPDFPathSegment_GetClose(segment) and first is not None:
                _add_segment(rulings, point, first)
            points.append(point)
    return _thin_boxes_as_rules(rulings)


def _add_segment(out: list[Ruling], a: tuple[float, float], b: tuple[float, float]) -> None:
    (x0, y0), (x1, y1) = a, b
    if abs(y0 - y1) < 0.5 and abs(x1 - x0) >= _MIN_RULING_PT:
        out.append(Ruling(True, (y0 + y1) / 2, min(x0, x1), max(x0, x1)))
    elif abs(x0 - x1) < 0.5 and abs(y1 - y0) >= _MIN_RULING_PT:
        out.append(Ruling(False, (x0 + x1) / 2, min(y0, y1), max(y0, y1)))


def _thin_boxes_as_rules(rulings: list[Ruling]) -> list[Ruling]:
    """Fold the two long edges of a thin filled rectangle (a rule drawn as a box) into one."""
    out: list[Ruling] = []
    for ruling in sorted(rulings, key=lambda r: (r.horizontal, r.start, r.end, r.at)):
        last = out[-1] if out else None
        if (
            last is not None
            and last.horizontal == ruling.horizontal
            and abs(last.start - ruling.start) < 0.5
            and abs(last.end - ruling.end) < 0.5
            and abs(last.at - ruling.at) < _THIN_PT
        ):
            out[-1] = Ruling(ruling.horizontal, (last.at + ruling.at) / 2, last.start, last.end)
            continue
        out.append(ruling)
    return out
