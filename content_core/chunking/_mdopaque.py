"""Where a Markdown text may hold a fenced code block or a raw-HTML block, found without a
parser: the spans a heading scan must not cut through, each marked exact when it surely is
such a block at the top level (see `_mdscan`)."""

from __future__ import annotations

import bisect
import functools
import re

__all__ = ["at_line_starts", "opaque_regions"]

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


def at_line_starts(body: str, text: str, flags: int = 0) -> list[re.Match[str]]:
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


def opaque_regions(text: str) -> list[tuple[int, int, bool]]:
    """Spans that may lie inside a fenced code block or a raw-HTML block of kinds 1-5.

    Over-approximates: an opener at any indentation counts, and a fence closes only at a line
    that closes it under every container it could sit in (same character, at least as long,
    no info string, indented no deeper than the opener). A span is marked exact when it is
    surely a top-level fence or HTML block: opened at the margin (so in no list item, quote
    or indented code), with no HTML line since the last blank line (so in no other HTML
    block), and preceded only by exact spans.
    """
    fences = at_line_starts(_FENCE, text)
    htmls = at_line_starts(_HTML_OPEN, text, re.IGNORECASE)
    blocks = at_line_starts(_html_block(), text, re.IGNORECASE)
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
