"""Snippets with the query's words marked, and the seeds' `format_hits`."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from content_core.search.types import SearchHit

__all__ = ["ANSI_MARKS", "PLAIN_MARKS", "format_hits", "highlight", "snippet", "words"]

# (before, after) each marked word: bold on a terminal, Markdown's bold elsewhere.
ANSI_MARKS = ("\x1b[1m", "\x1b[0m")
PLAIN_MARKS = ("**", "**")
# The words fts indexes (its `ignore` pattern splits on anything else).
_WORD = re.compile(r"[^\W_]+")
_SNIPPET_CHARS = 240
_PARENT_CHARS = 300

Stemmer = Callable[[Sequence[str]], list[str]]


def words(text: str) -> list[str]:
    """The lower-cased words of `text`, as the index splits it."""
    return [m.group(0).lower() for m in _WORD.finditer(text)]


def _identity(items: Sequence[str]) -> list[str]:
    return list(items)


def _marked_spans(text: str, query: str, stem: Stemmer) -> list[tuple[int, int]]:
    wanted = set(stem(words(query)))
    matches = list(_WORD.finditer(text))
    stems = stem([m.group(0).lower() for m in matches])
    return [(m.start(), m.end()) for m, s in zip(matches, stems, strict=True) if s in wanted]


def highlight(
    text: str,
    query: str,
    marks: tuple[str, str] = PLAIN_MARKS,
    stem: Stemmer = _identity,
) -> str:
    """`text` with every word that matches a query word (by `stem`) wrapped in `marks`."""
    out: list[str] = []
    last = 0
    for start, end in _marked_spans(text, query, stem):
        out.append(text[last:start] + marks[0] + text[start:end] + marks[1])
        last = end
    return "".join(out) + text[last:]


def snippet(
    text: str,
    query: str,
    marks: tuple[str, str] = PLAIN_MARKS,
    stem: Stemmer = _identity,
    width: int = _SNIPPET_CHARS,
) -> str:
    """About `width` characters of `text` on one line around its first match, marked."""
    flat = " ".join(text.split())
    spans = _marked_spans(flat, query, stem)
    start = max(0, spans[0][0] - width // 3) if spans else 0
    if start:
        # Start on a word boundary.
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < spans[0][0] else start
    piece = flat[start : start + width]
    if start + width < len(flat):
        cut = piece.rfind(" ")
        piece = (piece[:cut] if cut > width // 2 else piece) + " …"
    return ("… " if start else "") + highlight(piece, query, marks, stem)


def format_hits(hits: Sequence[SearchHit], *, max_chars: int = 500) -> str:
    """The hits as numbered context blocks for a prompt, as the seeds' `format_hits` prints
    them: source, page and text, then `[Parent context: ...]` when the chunk has a parent."""
    blocks: list[str] = []
    for number, hit in enumerate(hits, start=1):
        where = hit.source
        if hit.page_start is not None:
            pages = (
                f"{hit.page_start}"
                if hit.page_end in (None, hit.page_start)
                else (f"{hit.page_start}-{hit.page_end}")
            )
            where += f" p.{pages}"
        lines = [f"[{number}] {where} (score {hit.score:.3f})", hit.content[:max_chars]]
        if hit.parent_content:
            lines.append(f"[Parent context: {hit.parent_content[:_PARENT_CHARS]}]")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
