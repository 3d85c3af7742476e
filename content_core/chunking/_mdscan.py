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

from content_core.chunking._measure import utf8

__all__ = ["Section", "line_starts", "markdown_sections"]

_NEWLINE = re.compile(r"\r\n?|\n")
# A clean point: after a blank line, a line that starts at the margin. Such a line cannot
# continue a list item (its text is indented), a block quote or a paragraph (a blank line ends
# them), an indented code block or an HTML block of kinds 6-7; it may start a sibling list
# item, whose content does not depend on the items before it.
_CLEAN = re.compile(r"\n[ \t]*\n(?=\S)")
# Lines that may open or close a fenced code block (any indentation, to stay on the safe side).
_FENCE = r"([ \t]*)(`{3,}|~{3,})([^\n]*)$"
# Raw-HTML blocks of kinds 1-5 run until an end marker, across blank lines.
_HTML_OPEN = (
    r" {0,3}<(?:(script|pre|style|textarea)(?=[\s>]|$)|(!--)|(\?)|(![A-Za-z])|(!\[CDATA\[))"
)


@functools.lru_cache(maxsize=1)
def _html_block() -> str:
    """Lines opening an HTML block of kind 6 (a block-level tag, up to a blank line), at the
    margin only; markdown-it's own list of tags, imported lazily."""
    from markdown_it.common.html_blocks import block_names

    return r"</?(?:" + "|".join(block_names) + r")(?=[ \t]|/?>|$)"


@functools.lru_cache(maxsize=16)
def _line_patterns(body: str, flags: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """`body` anchored where a match starts, and `body` after a newline: the newline, a
    literal, lets the regex engine skip from line to line instead of trying each position."""
    flags |= re.MULTILINE
    return re.compile(body, flags), re.compile("\n(?:" + body + ")", flags)


def _at_line_starts(body: str, text: str, flags: int = 0) -> list[re.Match[str]]:
    """The matches of `body` that start at a line start, in order."""
    anchored, after_newline = _line_patterns(body, flags)
    found = [anchored.match(text, 0)]
    found.extend(anchored.match(text, hit.start() + 1) for hit in after_newline.finditer(text))
    return [match for match in found if match is not None]


_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")
_HTML_END = (
    re.compile(r"</(?:script|pre|style|textarea)>", re.I),
    re.compile(r"-->"),
    re.compile(r"\?>"),
    re.compile(r">"),
    re.compile(r"\]\]>"),
)
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


def _opaque_regions(text: str) -> list[tuple[int, int, bool]]:
    """Spans that may lie inside a fenced code block or a raw-HTML block of kinds 1-5.

    Over-approximates: an opener at any indentation counts, and a fence closes only at a line
    that closes it under every container it could sit in (same character, at least as long,
    no info string, indented no deeper than the opener). A span is marked exact when it is
    surely a top-level fence or HTML block: opened at the margin (so in no list item, quote
    or indented code), with no HTML line since the last blank line (so in no other HTML
    block), and preceded only by exact spans.
    """
    fences = _at_line_starts(_FENCE, text)
    htmls = _at_line_starts(_HTML_OPEN, text, re.IGNORECASE)
    blocks = _at_line_starts(_html_block(), text, re.IGNORECASE)
    opener_starts = ([m.start() for m in fences], [m.start() for m in htmls])
    html_lines = _HtmlLines(text)
    regions: list[tuple[int, int, bool]] = []
    trusted = True
    pos = 0
    i = j = k = 0
    while True:
        while i < len(fences) and fences[i].start() < pos:
            i += 1
        while j < len(htmls) and htmls[j].start() < pos:
            j += 1
        while k < len(blocks) and blocks[k].start() < pos:
            k += 1
        fence = fences[i] if i < len(fences) else None
        html = htmls[j] if j < len(htmls) else None
        block = blocks[k] if k < len(blocks) else None
        if block is not None and all(
            other is None or block.start() < other.start() for other in (fence, html)
        ):
            k += 1
            if trusted:
                # A block-level tag at the margin, outside every fence and raw-HTML span,
                # opens an HTML block under any container (it ends a list item or a quote,
                # and interrupts a paragraph) that runs to the next blank line: whatever
                # it holds (fences, comments, '#' lines) is raw HTML.
                blank = _BLANK_LINE.search(text, block.start())
                end = len(text) if blank is None else blank.start()
                regions.append((block.start(), end, True))
                pos = end
            continue
        if fence is None and html is None:
            return regions
        if html is None or (fence is not None and fence.start() < html.start()):
            assert fence is not None
            i += 1
            marker, info = fence.group(2), fence.group(3)
            if marker[0] == "`" and "`" in info:
                continue  # not an opener: a backtick fence's info string has no backtick
            end, restart, exact = _fence_span(text, fences, i, trusted, html_lines)
            trusted = exact
            regions.append((fence.start(), end, exact))
            pos = restart
        else:
            j += 1
            margin = trusted and html.group().startswith("<")
            exact = margin and not html_lines.since_blank(html.start())
            kind = next(n for n in range(5) if html.group(n + 1) is not None)
            closing = _HTML_END[kind].search(text, html.end() if kind else html.start())
            if closing is None:
                end = len(text)
            else:
                newline = text.find("\n", closing.end())
                end = len(text) if newline < 0 else newline
            if margin and not exact:
                # Right below other HTML lines: either raw text of an HTML block that they
                # opened (it ends at the next blank line) or a block of its own (it ends at
                # `end`). When `end` comes first and no fence or HTML opener lies between
                # the two, both readings are at the top level again after the blank line.
                blank = _BLANK_LINE.search(text, html.start())
                stop = len(text) if blank is None else blank.start()
                if end <= stop and not _opener_between(opener_starts, end, stop):
                    regions.append((html.start(), stop, False))
                    pos = stop
                    continue
            trusted = exact
            regions.append((html.start(), end, exact))
            pos = end


def _opener_between(starts: tuple[list[int], list[int]], lo: int, hi: int) -> bool:
    """True when one of the sorted offsets (fence lines, HTML openers) lies in [lo, hi)."""
    for found in starts:
        k = bisect.bisect_left(found, lo)
        if k < len(found) and found[k] < hi:
            return True
    return False


def _closes(opener: re.Match[str], line: re.Match[str]) -> bool:
    """True when fence `line` has the opener's character, its length or more, no info."""
    marker = opener.group(2)
    return (
        line.group(2)[0] == marker[0]
        and len(line.group(2)) >= len(marker)
        and not line.group(3).strip()
    )


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


_LESS_INDENTED = {k: re.compile(rf"\n {{0,{k - 1}}}\S") for k in (1, 2, 3)}


def _fence_span(
    text: str,
    fences: list[re.Match[str]],
    i: int,
    trusted: bool,
    html_lines: _HtmlLines,
) -> tuple[int, int, bool]:
    """(end, where to resume the scan, exact) for the fence line fences[i - 1].

    An opener indented up to three columns, outside any HTML block, is a real fence whatever
    list item it sits in. Its span is exact when the first fence line that could close it is
    indented between the opener's indentation and three columns (a closer under every
    possible container) and no line in between is indented less than the opener (which
    would close its list item). Otherwise the span reaches the first line that surely ends
    it, and the scan resumes at that line, which may open a fence in turn.
    """
    opener = fences[i - 1]
    k = _width(opener.group(1))
    if trusted and k <= 3 and not html_lines.since_blank(opener.start()):
        closer = None
        for index in range(i, len(fences)):
            if _closes(opener, fences[index]) and _width(fences[index].group(1)) <= k + 3:
                closer = fences[index]
                break
        stop = closer.start() if closer is not None else len(text)
        nested_ok = k == 0 or _LESS_INDENTED[k].search(text, opener.end(), stop) is None
        if nested_ok and (closer is None or k <= _width(closer.group(1)) <= 3):
            end = closer.end() if closer is not None else len(text)
            return end, end, True
    for index in range(i, len(fences)):
        f = fences[index]
        if _closes(opener, f) and _width(f.group(1)) <= k:
            return f.end(), f.start(), False
    return len(text), len(text), False


_BLANK_OR_HTML = re.compile(r"\n[ \t]*(?=\n)|\n {0,3}<")
_HTML_AT_START = re.compile(r" {0,3}<")


class _HtmlLines:
    """Answers "is there a line starting with '<' since the last blank line?" by bisection
    over one scan of the text, made on the first question."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._ends: list[int] | None = None
        self._html: list[bool] = []

    def since_blank(self, pos: int) -> bool:
        """True when such a line lies between the last blank line and `pos`."""
        if self._ends is None:
            marks = list(_BLANK_OR_HTML.finditer(self._text))
            self._ends = [m.end() for m in marks]
            self._html = [m.group().endswith("<") for m in marks]
        k = bisect.bisect_right(self._ends, pos) - 1
        if k < 0:
            # No blank line since the text's start: its first line (no newline before it)
            # counts when it lies before `pos`.
            return pos > 0 and _HTML_AT_START.match(self._text) is not None
        return self._html[k]


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
    for match in _at_line_starts(_CANDIDATE, text):
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
    regions = _opaque_regions(norm)
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
