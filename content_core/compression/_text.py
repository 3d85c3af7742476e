"""Sentence splitting and exact token-budget trimming shared by the compression strategies."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from content_core.chunking import TokenDoc
from content_core.tokens import TokenEstimator

__all__ = [
    "Span",
    "fits_tokens",
    "fitting_window",
    "pack_spans",
    "split_sentences",
    "truncate_to_tokens",
]

# A sentence ends at . ! ? (optionally followed by a closing quote or bracket) before whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*+\s+")
# Lines that stand alone (headings, table rows, fences) and lines that open a new block.
_STANDALONE = re.compile(r"^\s{0,3}(#{1,6}\s|\||```|~~~)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
_BLOCK_START = re.compile(r"^\s{0,3}([-*+]\s|\d+[.)]\s|>)")
_LINE = re.compile(r"[^\n]*+(?:\n|$)")
# A line that is blank, stands alone, fences code or opens a block: the union of the tests
# above, each applied to one line (so "\s" before the marker never crosses a newline).
_SPECIAL_LINE = re.compile(
    r"(?m)^(?:[^\S\n]*+$|[^\S\n]{0,3}(?:#{1,6}\s|\||```|~~~|[-*+]\s|\d+[.)]\s|>))"
)
_WHITESPACE = re.compile(r"\s+")
_NON_SPACE = re.compile(r"\S")


@dataclass(frozen=True, slots=True)
class Span:
    """A unit of text: `text[start:end]`, without its surrounding whitespace."""

    start: int
    end: int
    kind: str = "prose"  # prose, heading, table or code


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

    pos, end = 0, len(text)
    while pos < end:
        if not in_fence:
            # Plain lines only extend the block: skip to the next line that does more, so a
            # million short lines cost one regex scan, not a million Python steps.
            special = _SPECIAL_LINE.search(text, pos)
            following = end if special is None else special.start()
            if following > pos:
                if block_start is None:
                    block_start = pos
                block_end = pos = following
                continue
        match = _LINE.match(text, pos)
        assert match is not None  # [^\n]*+ always matches
        line = match.group()
        if not line:
            break
        pos = match.end()
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


# The first window `truncate_to_tokens` measures, in characters per token of the budget.
_WINDOW_CHARS_PER_TOKEN = 8


def fitting_window(text: str, max_tokens: int, estimator: TokenEstimator) -> int:
    """A length w such that every prefix of `text` that fits `max_tokens` lies within
    `text[:w]`: the first window, doubled from about eight characters per token of the budget,
    whose own count is over the budget, or `len(text)` when no shorter window is.

    Prefix counts grow (nearly) with the prefix, so a search for the longest fitting prefix
    needs to look at `text[:w]` only. The cost is a few passes over about `w` characters,
    however long `text` is, instead of a pass over all of it per probe.
    """
    w = max(64, (max_tokens + 1) * _WINDOW_CHARS_PER_TOKEN)
    while w < len(text):
        if not estimator.fits(text[:w], max_tokens):
            return w
        w *= 2
    return len(text)


def fits_tokens(text: str, max_tokens: int, estimator: TokenEstimator) -> bool:
    """`estimator.fits(text, max_tokens)`, deciding from a prefix when a prefix is already over
    the budget, so a long text that does not fit costs about the budget, not its length."""
    return fitting_window(text, max_tokens, estimator) >= len(text) and estimator.fits(
        text, max_tokens
    )


def truncate_to_tokens(
    text: str, max_tokens: int, estimator: TokenEstimator, *, suffix: str = ""
) -> str:
    """Return the longest prefix of `text`, cut at a word boundary, that fits with `suffix`.

    The prefix plus `suffix` is checked with `estimator`, so with an exact estimator the
    result fits by exact count. When even the suffix alone does not fit, the suffix is dropped;
    when no whole word fits, the cut falls inside the first word. Only the start of `text` that
    can matter is measured (see `fitting_window`), so the time does not grow with the rest.
    """
    if max_tokens <= 0:
        return ""
    window = fitting_window(text, max_tokens, estimator)
    if window >= len(text) and estimator.fits(text, max_tokens):
        return text
    if not estimator.fits(suffix, max_tokens):
        suffix = ""
    head = text[: window + 1]  # one more character: a cut may fall at the window's end
    count = _prefix_counter(head, estimator, suffix)
    # Candidate cut points: every position where whitespace starts (so text[:c] ends in a
    # non-space and needs no rstrip).
    cuts = [m.start() for m in _WHITESPACE.finditer(head) if m.start() <= window]
    best = _search(cuts, lambda c: count(c) <= max_tokens)
    if best is not None and text[:best].strip():
        return text[:best].rstrip() + suffix
    # No whole word fits: cut by characters instead.
    chars = _search(range(1, window + 1), lambda c: count(c) <= max_tokens)
    return (text[:chars] + suffix) if chars else ""


def _prefix_counter(head: str, estimator: TokenEstimator, suffix: str) -> Callable[[int], int]:
    """Tokens of `head[:c] + suffix` for a cut c: from one tokenisation of `head` when the
    estimator is exact and there is no suffix (a suffix may merge with the cut's last token),
    else by encoding each probe."""
    if not suffix and estimator.is_exact and estimator.encoding_name is not None:
        doc = TokenDoc(head, estimator.encoding, estimator.encoding_name)
        return lambda c: doc.size(0, c)
    return lambda c: estimator.estimate(head[:c] + suffix)


def _search(candidates: Sequence[int], ok: Callable[[int], bool]) -> int | None:
    """Largest candidate for which `ok` holds, assuming ok is (nearly) monotone decreasing."""
    lo, hi, found = 0, len(candidates) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(candidates[mid]):
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return None if found is None else candidates[found]


def _cut_sentence(
    text: str, start: int, end: int, max_tokens: int, estimator: TokenEstimator, units: list[str]
) -> None:
    """Append `text[start:end]` to `units`, cut at word boundaries into pieces that fit.

    Each cut looks at a window just past what fits, never at the whole rest of the sentence,
    so a sentence of any length is cut in linear time.
    """
    pos = start
    cap = max(64, (max_tokens + 1) * _WINDOW_CHARS_PER_TOKEN)
    while pos < end:
        stop = min(end, pos + cap)
        piece = text[pos:stop]
        if estimator.fits(piece, max_tokens):
            if stop == end:
                units.append(piece)
                return
            cap *= 2  # the window must reach past what fits
            continue
        head = truncate_to_tokens(piece, max_tokens, estimator)
        if not head:
            units.append(text[pos:end])
            return
        units.append(head)
        rest = _NON_SPACE.search(text, pos + len(head), end)
        pos = end if rest is None else rest.start()


def pack_spans(
    text: str, chunk_tokens: int, overlap_tokens: int, estimator: TokenEstimator
) -> list[str]:
    """Group sentence spans of `text` into pieces of at most `chunk_tokens` tokens each.

    Consecutive pieces share up to `overlap_tokens` tokens of whole sentences. A single
    sentence longer than `chunk_tokens` is cut at word boundaries.
    """
    units: list[str] = []
    for span in split_sentences(text):
        _cut_sentence(text, span.start, span.end, chunk_tokens, estimator, units)
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
