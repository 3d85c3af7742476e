"""Find the headings of a Markdown text with markdown-it-py, parsing only what can hold one.

markdown-it-py costs tens of microseconds per line, several times a tokeniser pass. Headings
are rare, so the text is cut at "clean" points where CommonMark has closed every block (a blank
line followed by a line that starts at the margin with a letter, outside any fenced code or
raw-HTML block), and only the pieces holding a heading candidate (a line with `#` markers, or
an `===`/`---` underline) go through markdown-it. Those pieces are parsed together, so a `#`
in a code fence, an HTML block or an indented code block is judged by markdown-it itself.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from content_core.chunking._mdopaque import at_line_starts, opaque_regions
from content_core.chunking._measure import utf8

__all__ = ["Section", "line_starts", "markdown_sections"]

_NEWLINE = re.compile(r"\r\n?|\n")
# A clean point: after a blank line, a line that starts at the margin. Such a line cannot
# continue a list item (its text is indented), a block quote or a paragraph (a blank line ends
# them), an indented code block or an HTML block of kinds 6-7; it may start a sibling list
# item, whose content does not depend on the items before it.
_CLEAN = re.compile(r"\n[ \t]*\n(?=\S)")
# Heading candidates: a line with `#` markers (perhaps inside list or quote markers), or an
# `===`/`---` underline right below a non-blank line (after a blank line it is a rule).
_CANDIDATE = r"[ \t>*+\-0-9.)]*#{1,6}(?:[ \t]|$)|(?<=\S\n)[ \t>]*(?:=+|-+)[ \t]*$"
# A "plain" line: at most three spaces, then a letter or digit (not an ordered-list marker),
# and no "<" or "|". It can neither open nor close a block, so a run of them parses exactly
# like a single one and is shrunk to one stand-in line before parsing.
_PLAIN = re.compile(r" {0,3}(?!\d{1,9}[.)](?:[ \t]|$))[A-Za-z0-9][^<|]*")
# Parse everything when the pieces to parse are most of the text anyway.
_PARSE_ALL_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's section: from its heading line to the next heading."""

    start: int  # char offset of the heading line (0 for the text before the first heading)
    body: int  # char offset where the text after the heading lines begins
    end: int
    path: tuple[str, ...]  # heading texts from the top level down to this section


@functools.lru_cache(maxsize=1)
def _parser() -> Any:  # Any: markdown_it.MarkdownIt, imported lazily
    """A CommonMark block parser with GFM tables; inline parsing is off (not needed here)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.disable(["inline", "text_join"])
    return md


def line_starts(text: str) -> list[int]:
    """Char offset of every line start, with lines broken as markdown-it breaks them."""
    if "\r" in text:
        starts = [0]
        starts.extend(m.end() for m in _NEWLINE.finditer(text))
        return starts
    data = np.frombuffer(utf8(text), dtype=np.uint8)
    newlines = np.flatnonzero(data == 10) + 1
    if not text.isascii():
        # Byte offsets to char offsets: drop the UTF-8 continuation bytes before each one.
        newlines -= np.flatnonzero((data & 0xC0) == 0x80).searchsorted(newlines)
    result: list[int] = [0]
    result.extend(newlines.tolist())
    return result


def _clean_points(text: str, regions: list[tuple[int, int, bool]]) -> list[int]:
    """Offsets where every block is closed, outside fenced code and raw HTML."""
    points = [m.end() for m in _CLEAN.finditer(text)]
    if not regions:
        return points
    kept = []
    r = 0
    for p in points:
        while r < len(regions) and regions[r][1] < p:
            r += 1
        if r < len(regions) and regions[r][0] <= p <= regions[r][1]:
            continue
        kept.append(p)
    return kept


def _pieces(
    text: str, points: list[int], regions: list[tuple[int, int, bool]]
) -> list[tuple[int, int, bool]]:
    """The spans that must be parsed: (start, end, cut) for each heading candidate.

    A span starts at the clean point before a candidate and ends at the next clean point, or,
    when that is far, two lines after the candidate (`cut` is then True): a line's heading
    status depends only on what precedes it and on the line below it (a table's delimiter
    row). A span is cut only outside every fence or raw-HTML span, so a blank line closes
    whatever it leaves open. Candidates inside an exact fence cannot be headings and are
    skipped; overlapping spans are merged.
    """
    exact = [(a, b) for a, b, sure in regions if sure]
    region_starts = [a for a, _, _ in regions]
    pieces: list[tuple[int, int, bool]] = []
    r = 0
    for match in at_line_starts(_CANDIDATE, text):
        p = match.start()
        while r < len(exact) and exact[r][1] < p:
            r += 1
        if r < len(exact) and exact[r][0] < p < exact[r][1]:
            continue
        k = bisect.bisect_right(points, p)
        start = points[k - 1] if k > 0 else 0
        end = points[k] if k < len(points) else len(text)
        newline = text.find("\n", p)
        newline = text.find("\n", newline + 1) if newline >= 0 else -1
        cut = False
        if 0 <= newline < end - 1:
            g = bisect.bisect_left(region_starts, newline + 1) - 1
            if g < 0 or regions[g][1] < newline + 1:
                end, cut = newline + 1, True
        if pieces and start <= pieces[-1][1]:
            last = pieces[-1]
            if end >= last[1]:
                pieces[-1] = (last[0], end, cut)
        else:
            pieces.append((start, end, cut))
    return pieces


def _compress(lines: list[str]) -> tuple[str, list[int]]:
    """The text markdown-it parses, and the index in `lines` of each of its lines."""
    out: list[str] = []
    origin: list[int] = []
    plain = _PLAIN.fullmatch
    previous_plain = False
    for number, line in enumerate(lines):
        if plain(line) is not None:
            if previous_plain:
                continue
            previous_plain = True
            indent = len(line) - len(line.lstrip(" "))
            out.append(" " * indent + "x")
        else:
            previous_plain = False
            out.append(line)
        origin.append(number)
    origin.append(len(lines))
    return "\n".join(out), origin


def markdown_sections(text: str) -> tuple[list[Section], list[int]]:
    """Sections of `text` at its headings, and char offsets where blocks begin (ascending).

    Headings are markdown-it-py's heading tokens, so a `#` line inside a code fence, an HTML
    block or a table is never a heading.
    """
    norm = _NEWLINE.sub("\n", text) if "\r" in text else text
    norm_starts = line_starts(norm) if norm is not text else None
    starts = line_starts(text)
    regions = opaque_regions(norm)
    points = _clean_points(norm, regions)
    pieces = _pieces(norm, points, regions)
    if sum(b - a for a, b, _ in pieces) > _PARSE_ALL_SHARE * len(norm):
        pieces = [(0, len(norm), False)] if norm else []
    # Lines (of `norm`) handed to markdown-it, piece after piece.
    lines: list[str] = []
    line_of: list[int] = []
    line_index = norm_starts if norm_starts is not None else starts
    for a, b, cut in pieces:
        first = bisect.bisect_right(line_index, a) - 1
        chunk = norm[a:b].split("\n")
        if chunk and chunk[-1] == "" and b < len(norm):
            chunk.pop()
        if cut:
            chunk.append("")  # a blank line closes what the cut left open
        lines.extend(chunk)
        line_of.extend(range(first, first + len(chunk)))
    compressed, origin = _compress(lines)
    tokens = _parser().parse(compressed) if lines else []

    n_lines = len(starts)

    def source_line(parsed: int) -> int:
        index = origin[parsed] if parsed < len(origin) else len(lines)
        return line_of[index] if index < len(line_of) else n_lines

    def offset(line: int) -> int:
        return starts[line] if line < n_lines else len(text)

    norm_lines: list[str] | None = None
    blocks: list[int] = []
    headings: list[tuple[int, int, int, str]] = []  # (start, body, level, title)
    for i, token in enumerate(tokens):
        if token.map is None or token.nesting == -1:
            continue
        first_line = source_line(token.map[0])
        if token.level <= 2:
            blocks.append(offset(first_line))
        if token.type != "heading_open":
            continue
        last_line = source_line(token.map[1] - 1)
        if token.markup in ("=", "-"):
            # Setext: the title is the source text above the underline.
            if norm_lines is None:
                norm_lines = norm.split("\n")
            title = " ".join(norm_lines[first_line:last_line])
        else:
            title = tokens[i + 1].content if i + 1 < len(tokens) else ""
        headings.append(
            (offset(first_line), offset(last_line + 1), int(token.tag[1]), " ".join(title.split()))
        )
    if norm_starts is not None:
        # Clean points are offsets in `norm`; map them to `text` through their line numbers.
        blocks.extend(offset(bisect.bisect_right(norm_starts, p) - 1) for p in points)
    else:
        blocks.extend(points)
    headings.sort()
    sections: list[Section] = []
    if not headings or headings[0][0] > 0:
        sections.append(Section(0, 0, headings[0][0] if headings else len(text), ()))
    stack: list[tuple[int, str]] = []
    for k, (start, body, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[k + 1][0] if k + 1 < len(headings) else len(text)
        sections.append(Section(start, min(body, end), end, tuple(t for _, t in stack)))
    return sections, sorted(set(blocks))
