"""Where a text holds tables, found without a parser: Markdown pipe tables (a header line, a
delimiter row, then rows, each line starting with `|`) and HTML `<table>` elements, with
their header, their rows and their caption, so that chunkers cut between rows only.

The scans are linear: candidates are found with literal searches (`\\n|`, `<table`) and each
line or tag is matched once, with patterns that cannot backtrack over a long run.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

__all__ = ["Table", "find_tables"]

# A delimiter row as extractors write it (`|---|---|`, `| --- | :-: |`), up to three spaces in.
# Possessive: a line that is almost a delimiter row fails without backtracking through it.
_DELIMITER = re.compile(r" {0,3}\|(?:[ \t]*+:?-++:?[ \t]*+\|)++[ \t]*+")
# The rows after a delimiter row: the run of lines that start with a pipe.
_PIPE_LINES = re.compile(r"(?:\n {0,3}\|[^\n]*+)*+")
_PIPE_LINE = re.compile(r" {0,3}\|")
# Where a delimiter row may start: a literal newline lets the regex engine skip ahead.
_DELIMITER_START = re.compile(r"\n {0,3}\|[ \t]*:?-")
# `<table ...>` and `</table>`, and the tags that shape a table, each matched once without
# backtracking: an attribute list is a bounded run of non-`>` characters (unbounded, every
# `<table` of a text without `>` would scan to its end).
_TABLE_EDGE = re.compile(r"<(/?)table(?=[\s>/])[^>]{0,2000}+>", re.IGNORECASE)
_TABLE_TAG = re.compile(
    r"<(/?)(table|tr|thead|tbody|tfoot|caption)(?=[\s>/])[^>]{0,2000}+>", re.IGNORECASE
)
_TAG = re.compile(r"<[^>]{0,2000}+>")
# A caption line: "Table 3", "Table 2.1:", "**Table IV.**", "Table A1" at the line's start.
_CAPTION = re.compile(
    r"[ \t]*(?:\*\*|__|\*|_)?table[ \t]+(?:\d+(?:[.\-]\d+)*|[ivxlc]+|[a-z]\.?\d+)\b",
    re.IGNORECASE,
)
# Longest caption kept in metadata (characters).
_CAPTION_CHARS = 300


@dataclass(frozen=True, slots=True)
class Table:
    """A table of a text: `text[start:end]`, its header `text[start:header_end]` (for HTML
    from `<table>` to the end of its header rows), its body rows as (start, end) offsets in
    order, and what a part of it needs to stand alone: `head` (the header to repeat before
    a later part, ending with a newline) and `tail` (the closing markup after a part that
    does not reach the end: `</table>` for HTML, nothing for Markdown).

    `lead` is where the table's segment begins: the start of a caption line right above
    it, else `start`. `bare` is the least a part needs to stand alone when the header is too
    large to repeat: the opening `<table>` tag for HTML, nothing for Markdown.
    """

    kind: str  # "markdown" or "html"
    start: int
    header_end: int
    end: int
    rows: tuple[tuple[int, int], ...]
    head: str
    tail: str
    caption: str | None
    lead: int
    bare: str = ""


def find_tables(text: str) -> list[Table]:
    """The tables of `text`, in order and not overlapping (a table nested in an HTML table
    belongs to its row)."""
    tables = _html_tables(text) if "<" in text else []
    if "|" in text:
        taken = [(t.start, t.end) for t in tables]
        tables.extend(t for t in _markdown_tables(text) if not _overlaps(taken, t.start, t.end))
        tables.sort(key=lambda t: t.start)
    return tables


def _overlaps(spans: list[tuple[int, int]], a: int, b: int) -> bool:
    return any(s < b and a < e for s, e in spans)


def _line_end(text: str, p: int) -> int:
    e = text.find("\n", p)
    return len(text) if e < 0 else e


def _line_start(text: str, p: int) -> int:
    return text.rfind("\n", 0, p) + 1


def _strip_end(text: str, a: int, b: int) -> int:
    while b > a and text[b - 1] in " \t\r":
        b -= 1
    return b


def _markdown_tables(text: str) -> list[Table]:
    tables: list[Table] = []
    pos = 0
    for candidate in _DELIMITER_START.finditer(text):
        p = candidate.start() + 1
        if p < pos:
            continue
        delim_end = _line_end(text, p)
        header_end = _strip_end(text, p, delim_end)
        start = _line_start(text, p - 1)
        if (
            _DELIMITER.fullmatch(text, p, header_end) is None
            or start >= p - 1
            or _PIPE_LINE.match(text, start) is None
        ):
            continue
        rows: list[tuple[int, int]] = []
        block = _PIPE_LINES.match(text, delim_end)
        cursor = block.end() if block is not None else delim_end
        at = delim_end + 1
        for line in text[delim_end + 1 : cursor].split("\n") if cursor > delim_end else ():
            rows.append((at + len(line) - len(line.lstrip(" ")), at + len(line.rstrip(" \t\r"))))
            at += len(line) + 1
        end = rows[-1][1] if rows else header_end
        head = text[start:header_end] + "\n"
        tables.append(_with_caption(text, "markdown", start, header_end, end, rows, head, ""))
        pos = cursor
    return tables


def _first_non_space(text: str, p: int) -> int:
    while p < len(text) and text[p] in " \t":
        p += 1
    return p


def _html_tables(text: str) -> list[Table]:
    """The outermost closed `<table>` elements: openings and closings are paired in one pass
    (an opening never closed is no table, and the tables inside it are looked at instead),
    then each table's own tags are read once."""
    open_tags: list[re.Match[str]] = []
    pairs: list[tuple[re.Match[str], int]] = []
    for edge in _TABLE_EDGE.finditer(text):
        if not edge.group(1):
            open_tags.append(edge)
        elif open_tags:
            pairs.append((open_tags.pop(), edge.end()))
    pairs.sort(key=lambda pair: pair[0].start())
    tables: list[Table] = []
    for opening, end in pairs:
        if tables and opening.start() < tables[-1].end:
            continue  # a table inside a cell belongs to its row
        tables.append(_html_table(text, opening, end))
    return tables


def _html_table(text: str, opening: re.Match[str], end: int) -> Table:
    """The table from `opening` to `end` (just after its closing tag)."""
    depth = 1
    rows: list[tuple[int, int]] = []
    row_start = -1
    thead_rows, thead_end = -1, -1
    caption: str | None = None
    caption_start = caption_end = -1
    tbody_at, tbody = -1, ""
    for tag in _TABLE_TAG.finditer(text, opening.end(), end):
        closing, name = tag.group(1) == "/", tag.group(2).lower()
        if name == "table":
            depth += -1 if closing else 1
            if depth == 0:
                if row_start >= 0:  # the last row's </tr> was left out
                    rows.append((row_start, _ws_back(text, tag.start())))
                break
            continue
        if depth != 1:
            continue
        if name == "tr" and not closing:
            if row_start >= 0:  # the previous row's </tr> was left out
                rows.append((row_start, _ws_back(text, tag.start())))
            row_start = tag.start()
        elif name == "tr" and closing and row_start >= 0:
            rows.append((row_start, tag.end()))
            row_start = -1
        elif name == "caption" and not closing:
            caption_start = tag.end()
        elif name == "caption" and closing and caption_start >= 0:
            caption = _caption_text(html.unescape(_TAG.sub(" ", text[caption_start : tag.start()])))
            caption_end = tag.end()
        elif name == "thead" and closing:
            thead_rows, thead_end = len(rows), tag.end()
        elif name == "tbody" and not closing and tbody_at < 0:
            tbody_at, tbody = tag.start(), tag.group(0)
    header_rows = thead_rows
    if header_rows < 0:
        # Header rows: the leading rows made of <th> cells only.
        header_rows = 0
        for a, b in rows:
            cells = text[a:b].lower()
            if "<th" not in cells or "<td" in cells:
                break
            header_rows += 1
    if 0 < header_rows < len(rows):
        header_end = thead_end if thead_end >= 0 else rows[header_rows - 1][1]
    else:
        header_rows = 0
        header_end = max(opening.end(), caption_end)
    body = rows[header_rows:]
    start = opening.start()
    if tbody_at >= header_end and (not body or tbody_at < body[0][0]):
        # A <tbody> opened between the header and the first row belongs to the header, so
        # each later part reopens it.
        header_end = tbody_at + len(tbody)
    head = text[start:header_end] + "\n"
    tail = "\n" + ("</tbody>\n" if tbody_at >= 0 else "") + "</table>"
    table = _with_caption(text, "html", start, header_end, end, body, head, tail)
    bare = opening.group(0) + "\n" + (tbody + "\n" if tbody_at >= 0 else "")
    return Table(
        "html",
        start,
        header_end,
        end,
        table.rows,
        head,
        tail,
        caption if caption is not None else table.caption,
        table.lead,
        bare,
    )


def _ws_back(text: str, p: int) -> int:
    while p > 0 and text[p - 1] in " \t\r\n":
        p -= 1
    return p


def _caption_text(line: str) -> str | None:
    text = " ".join(line.split()).strip("*_ ")
    return text[:_CAPTION_CHARS] or None


def _with_caption(
    text: str,
    kind: str,
    start: int,
    header_end: int,
    end: int,
    rows: list[tuple[int, int]],
    head: str,
    tail: str,
) -> Table:
    """The table with its caption: the nearest non-blank line above it (at most one blank
    line between) or below it that starts with "Table N"."""
    caption: str | None = None
    lead = start
    above = _neighbour_line(text, start, up=True)
    if above is not None and _CAPTION.match(text, above[0], above[1]):
        caption = _caption_text(text[above[0] : above[1]])
        lead = _first_non_space(text, above[0])
    else:
        below = _neighbour_line(text, end, up=False)
        if below is not None and _CAPTION.match(text, below[0], below[1]):
            caption = _caption_text(text[below[0] : below[1]])
    return Table(kind, start, header_end, end, tuple(rows), head, tail, caption, lead)


def _neighbour_line(text: str, p: int, *, up: bool) -> tuple[int, int] | None:
    """The nearest non-blank line above the line starting at p (or below the one ending at
    p), skipping at most one blank line, as (start, end)."""
    for _ in range(2):
        if up:
            if p <= 0:
                return None
            end = p - 1
            start = _line_start(text, end)
            p = start
        else:
            if p >= len(text):
                return None
            start = p + 1
            end = _line_end(text, start)
            p = end
        if text[start:end].strip():
            return start, _strip_end(text, start, end)
    return None
