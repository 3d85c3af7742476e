"""Sentence splitting and exact token-budget trimming shared by the compression strategies."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from content_core.tokens import TokenEstimator

__all__ = ["Span", "default_estimator", "pack_spans", "split_sentences", "truncate_to_tokens"]

# A sentence ends at . ! ? (optionally followed by a closing quote or bracket) before whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
# Lines that stand alone (headings, table rows, fences) and lines that open a new block.
_STANDALONE = re.compile(r"^\s{0,3}(#{1,6}\s|\||```|~~~)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
_BLOCK_START = re.compile(r"^\s{0,3}([-*+]\s|\d+[.)]\s|>)")
_LINE = re.compile(r"[^\n]*(?:\n|$)")


@dataclass(frozen=True, slots=True)
class Span:
    """A unit of text: `text[start:end]`, without its surrounding whitespace."""

    start: int
    end: int
    kind: str = "prose"  # prose, heading, table or code


@functools.lru_cache(maxsize=1)
def default_estimator() -> TokenEstimator:
    """The exact cl100k_base counter (falls back to the word heuristic if tiktoken is absent)."""
    return TokenEstimator(encoding_name="cl100k_base")


def split_sentences(text: str) -> list[Span]:
    """Split `text` into sentence spans, in order, covering every non-blank character.

    Soft-wrapped prose lines join into one block that is split at sentence ends; blank lines
    end a block; structural lines (headings, list items, table rows, code) stand alone.
    """
    spans: list[Span] = []
    block_start: int | None = None
    block_end = 0
    in_fence = False

    def flush() -> None:
        nonlocal block_start
        if block_start is not None:
            _split_block(text, block_start, block_end, spans)
            block_start = None

    for match in _LINE.finditer(text):
        line = match.group()
        if not line:
            break
        fence = bool(_FENCE.match(line))
        if not line.strip() or in_fence or fence or _STANDALONE.match(line):
            flush()
            if line.strip():
                _add_span(text, match.start(), match.end(), spans, _line_kind(line, in_fence))
            in_fence = in_fence != fence
            continue
        if _BLOCK_START.match(line):
            flush()
        if block_start is None:
            block_start = match.start()
        block_end = match.end()
    flush()
    return spans


def _line_kind(line: str, in_fence: bool) -> str:
    if in_fence or _FENCE.match(line):
        return "code"
    if _HEADING_LINE.match(line):
        return "heading"
    return "table"


def _split_block(text: str, start: int, end: int, spans: list[Span]) -> None:
    pos = start
    for match in _SENTENCE_END.finditer(text, start, end):
        _add_span(text, pos, match.start() + _closing_len(match.group()), spans)
        pos = match.end()
    _add_span(text, pos, end, spans)


def _closing_len(separator: str) -> int:
    # The closing quotes/brackets matched after the full stop belong to the sentence.
    return len(separator) - len(separator.lstrip("\"')]"))


def _add_span(text: str, start: int, end: int, spans: list[Span], kind: str = "prose") -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        spans.append(Span(start + lead, start + lead + len(stripped), kind))


def truncate_to_tokens(
    text: str, max_tokens: int, estimator: TokenEstimator, *, suffix: str = ""
) -> str:
    """Return the longest prefix of `text`, cut at a word boundary, that fits with `suffix`.

    The prefix plus `suffix` is checked with `estimator`, so with an exact estimator the
    result fits by exact count. When even the suffix alone does not fit, the suffix is dropped;
    when no whole word fits, the cut falls inside the first word.
    """
    if max_tokens <= 0:
        return ""
    if estimator.fits(text, max_tokens):
        return text
    if not estimator.fits(suffix, max_tokens):
        suffix = ""
    # Candidate cut points: every position where whitespace starts.
    cuts = [m.start() for m in re.finditer(r"\s+", text)]
    best = _search(cuts, lambda c: estimator.fits(text[:c].rstrip() + suffix, max_tokens))
    if best is not None and text[:best].strip():
        return text[:best].rstrip() + suffix
    # No whole word fits: cut by characters instead.
    chars = _search(
        list(range(1, len(text) + 1)),
        lambda c: estimator.fits(text[:c] + suffix, max_tokens),
    )
    return (text[:chars] + suffix) if chars else ""


def _search(candidates: list[int], ok: Callable[[int], bool]) -> int | None:
    """Largest candidate for which `ok` holds, assuming ok is (nearly) monotone decreasing."""
    lo, hi, found = 0, len(candidates) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(candidates[mid]):
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    if found is None:
        return None
    # Token counts of prefixes are not strictly monotone; step down until the check holds.
    while found >= 0 and not ok(candidates[found]):
        found -= 1
    return candidates[found] if found >= 0 else None


def pack_spans(
    text: str, chunk_tokens: int, overlap_tokens: int, estimator: TokenEstimator
) -> list[str]:
    """Group sentence spans of `text` into pieces of at most `chunk_tokens` tokens each.

    Consecutive pieces share up to `overlap_tokens` tokens of whole sentences. A single
    sentence longer than `chunk_tokens` is cut at word boundaries.
    """
    units: list[str] = []
    for span in split_sentences(text):
        unit = text[span.start : span.end]
        while not estimator.fits(unit, chunk_tokens):
            head = truncate_to_tokens(unit, chunk_tokens, estimator)
            if not head:
                break
            units.append(head)
            unit = unit[len(head) :].lstrip()
        if unit:
            units.append(unit)
    costs = [estimator.estimate(u) + 1 for u in units]
    pieces: list[str] = []
    i = 0
    while i < len(units):
        j, used = i, 0
        while j < len(units) and (j == i or used + costs[j] <= chunk_tokens):
            used += costs[j]
            j += 1
        pieces.append(" ".join(units[i:j]))
        if j >= len(units):
            break
        # Step back over whole sentences worth at most `overlap_tokens`, always advancing.
        back, k = 0, j
        while k - 1 > i and back + costs[k - 1] <= overlap_tokens:
            back += costs[k - 1]
            k -= 1
        i = k
    return pieces
