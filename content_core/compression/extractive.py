"""Offline extractive compression: keep the highest-scoring sentences that fit the budget."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from content_core.compression._text import (
    Span,
    fits_tokens,
    split_sentences,
    truncate_to_tokens,
)
from content_core.tokens import TokenEstimator

__all__ = ["ExtractiveStrategy", "extractive_compress"]

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
# URLs, path-like tokens (also a URL's wrapped tail, "k/sport1/hi/...") and e-mail addresses
# carry no topic. A candidate is a whole whitespace-delimited token holding "http(s)://",
# "www.", two slashes or an "@"; matching starts only at a token's start and every repeat is
# possessive, so a run of any length without whitespace is scanned a bounded number of times
# (`\S*` before an alternation, as this used to be, backtracks quadratically).
_URLISH_TOKEN = re.compile(r"(?<!\S)\S*?(?:https?://|www\.|/[^\s/]*+/|@)\S*+")
_DOT_WORD = re.compile(r"\.(?=\w)")
_WORD_RUN = re.compile(r"\w*+")
# Headings name what follows; code and table rows rarely summarise a document on their own.
_KIND_WEIGHT = {"prose": 1.0, "heading": 1.5, "table": 0.7, "code": 0.3}

# Common English function words: they carry no topic, so they do not score.
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves shall may might must one two also via per""".split()
)


def _strip_urlish_token(match: re.Match[str]) -> str:
    """" " for a URL- or path-like token; for an e-mail-like one, " " in place of its
    `local@domain.tld` part (what the former `\\S+@\\S+\\.\\w+` alternative removed)."""
    token = match.group()
    if "://" in token and ("http://" in token or "https://" in token):
        return " "
    if "www." in token or token.count("/") >= 2:
        return " "
    at = token.find("@", 1)
    if at < 0:
        return token
    last = None
    for match in _DOT_WORD.finditer(token, at + 2):
        last = match
    if last is None:
        return token
    end = _WORD_RUN.match(token, last.end())
    assert end is not None  # \w*+ always matches
    return " " + token[end.end() :]


def strip_urlish(text: str) -> str:
    """`text` with URLs, paths and e-mail addresses replaced by a space, in linear time."""
    return _URLISH_TOKEN.sub(_strip_urlish_token, text)


def _terms(text: str) -> list[str]:
    return [
        w
        for w in map(str.casefold, _WORD.findall(text))
        if len(w) > 2 and w not in _STOPWORDS and not w.isdigit()
    ]


def score_sentences(text: str, spans: list[Span]) -> list[float]:
    """Score each span by how many of the document's frequent terms it carries.

    A span's score is the sum of the (log-damped) document frequencies of its distinct terms,
    divided by the square root of its term count so long sentences do not win by length
    alone, weighted by the span's kind (headings up, code and table rows down), with a bonus
    for the first full prose sentences and a penalty for fragments and link lists. A span
    that repeats an earlier one up to numbers and links (boilerplate) scores zero.
    """
    pieces = [text[s.start : s.end] for s in spans]
    plain = [strip_urlish(piece) for piece in pieces]
    per_span = [_terms(p) for p in plain]
    freq = Counter(t for terms in per_span for t in set(terms))
    scores: list[float] = []
    seen: set[str] = set()
    opening = 0
    for position, (span, terms) in enumerate(zip(spans, per_span, strict=True)):
        # Sentences that differ only in numbers, dates or links (citation lists, log lines)
        # count once.
        shape = " ".join(sorted({t for t in terms if not any(map(str.isdigit, t))}))
        if not shape or shape in seen:
            scores.append(0.0)
            continue
        seen.add(shape)
        distinct = set(terms)
        base = sum(math.log1p(freq[t]) for t in distinct) / math.sqrt(len(terms) + 1)
        base *= _KIND_WEIGHT.get(span.kind, 1.0)
        # Mostly links: a reference list, not content.
        if len(plain[position].strip()) < 0.5 * len(pieces[position]):
            base *= 0.2
        # Earlier sentences matter more (documents state their subject first).
        base *= 1.5 - 0.5 * position / len(spans)
        if len(terms) < 4:
            base *= 0.5  # fragments: a wrapped line's tail, a lone label
        elif span.kind == "prose" and opening < 3 and pieces[position].endswith((".", "!", "?")):
            # The first full sentences usually say what the whole document is about.
            base *= 2.0 - 0.3 * opening
            opening += 1
        scores.append(base)
    return scores


def extractive_compress(
    text: str,
    max_tokens: int,
    estimator: TokenEstimator,
    *,
    span_tokens: Callable[[int, int], int] | None = None,
) -> str:
    """Return the best-scoring sentences of `text`, in document order, within `max_tokens`.

    Sentences are picked greedily by score; the joined result is re-counted with `estimator`
    and the weakest picked sentence is dropped until it fits, so the budget holds exactly.
    If not even one sentence fits, the best sentence is cut at a word boundary.
    `span_tokens(a, b)`, when given, counts the tokens of `text[a:b]` exactly as `estimator`
    does, from a tokenisation of the whole text, instead of encoding every sentence again.
    """
    if max_tokens <= 0:
        return ""
    if fits_tokens(text, max_tokens, estimator):
        return text
    spans = split_sentences(text)
    if not spans:
        return truncate_to_tokens(text, max_tokens, estimator)
    scores = score_sentences(text, spans)
    if span_tokens is None:
        costs = [estimator.estimate(text[s.start : s.end]) + 1 for s in spans]
    else:
        costs = [span_tokens(s.start, s.end) + 1 for s in spans]
    # Only spans that carry some term compete; repeats and bare punctuation are left out.
    order = sorted((i for i in range(len(spans)) if scores[i] > 0), key=lambda i: (-scores[i], i))
    if not order:
        return truncate_to_tokens(text, max_tokens, estimator)
    chosen: set[int] = set()
    used = 0
    for i in order:
        if used + costs[i] <= max_tokens:
            chosen.add(i)
            used += costs[i]
    if not chosen:
        best = text[spans[order[0]].start : spans[order[0]].end]
        return truncate_to_tokens(best, max_tokens, estimator)
    result = _assemble(text, spans, chosen)
    while not estimator.fits(result, max_tokens):
        if len(chosen) == 1:
            return truncate_to_tokens(result, max_tokens, estimator)
        chosen.discard(min(chosen, key=lambda i: (scores[i], -i)))
        result = _assemble(text, spans, chosen)
    return result


def _assemble(text: str, spans: list[Span], chosen: set[int]) -> str:
    """Join chosen spans in order, keeping original whitespace between neighbours."""
    parts: list[str] = []
    previous: int | None = None
    for i in sorted(chosen):
        span = spans[i]
        if previous is not None:
            if previous == i - 1:
                parts.append(text[spans[previous].end : span.start])
            else:
                gap = text[spans[previous].end : span.start]
                parts.append("\n" if "\n" in gap else " ")
        parts.append(text[span.start : span.end])
        previous = i
    return "".join(parts)


class ExtractiveStrategy:
    """Compress offline by keeping the document's most informative sentences.

    No model is called: sentences are scored by term frequency and position, the best ones
    that fit are kept in their original order. Results fit the budget by the estimator's
    count (exact cl100k by default).
    """

    def __init__(self, *, estimator: TokenEstimator | None = None) -> None:
        from content_core.tokens import default_estimator

        self.estimator = estimator or default_estimator()

    async def compress(self, text: str, max_tokens: int) -> str:
        """Return `text` reduced to at most `max_tokens` tokens."""
        return extractive_compress(text, max_tokens, self.estimator)
