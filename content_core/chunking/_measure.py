"""How chunkers measure a span of text: in characters, or in exact tokens of one encoding.

A token measure tokenises the whole text once and then answers every size question from the
token offsets plus two tiny encodes at the span's edges (see `TokenDoc.size`), so an exact
count of any span costs microseconds instead of a second pass over the text.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Any

import numpy as np

from content_core.chunking._chars import CharDoc, CharMeasure
from content_core.tokens import (
    encode_ordinary_safe,
    get_encoding,
    is_tokenizer_overflow,
    whitespace_cuts,
)

__all__ = [
    "CharDoc",
    "CharMeasure",
    "Measure",
    "TokenDoc",
    "TokenMeasure",
    "scrub_surrogates",
    "utf8",
]

# A position p is a "hard" boundary of the cl100k/p50k/r50k pre-tokeniser when text[p-1] is an
# ASCII letter or digit and text[p] is ASCII but neither, or a combining mark (the blocks of
# combining diacritics hold marks only, never a letter or a number): no alternative of those
# patterns matches a letter or digit followed by anything else, and none looks behind, so
# every tokenisation of every substring containing p splits there, and the pieces between two
# such boundaries are the same in the substring and the whole text.
_HARD = re.compile(
    r"[A-Za-z0-9][\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f"
    r"\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"
)
_HARD_SAFE_ENCODINGS = frozenset({"cl100k_base", "p50k_base", "p50k_edit", "r50k_base"})
# Spans shorter than this are simply encoded.
_SMALL_SPAN = 96
# How far from a span's edge to look for a hard boundary before encoding the span whole.
_EDGE_WINDOW = 256
# Steps walked in Python before the regex engine takes over the search for a hard boundary.
_QUICK_STEPS = 8
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(text: str) -> str:
    """`text` with lone surrogates (unencodable in UTF-8) replaced by U+FFFD, as tiktoken
    does; the length, and so every offset, stays the same."""
    return _SURROGATE.sub("\ufffd", text)


def utf8(text: str) -> bytes:
    """The UTF-8 bytes of `text`, lone surrogates counted as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return scrub_surrogates(text).encode("utf-8")


@functools.lru_cache(maxsize=8)
def _byte_lengths(encoding_name: str) -> Any:  # Any: numpy array of token byte lengths
    """Byte length of every token id of the encoding (0 for unused ids)."""
    enc = get_encoding(encoding_name)
    lengths = np.zeros(enc.n_vocab, dtype=np.int64)
    for token in range(enc.n_vocab):
        try:
            lengths[token] = len(enc.decode_single_token_bytes(token))
        except KeyError:  # an unused id between the ranks and the special tokens
            continue
    return lengths


_EDGE_CACHE_SIZE = 65_536
_WS = " \t\n\r\f\v"
# TokenDoc.window's answer: (span end, span size, cut, next start, tokens it shares, token
# holding the next start).
Window = tuple[int, int, int, int, int, int]


def _cut_between(cuts: list[int], lo: int, hi: int) -> bool:
    """True when a cut lies strictly inside (lo, hi)."""
    i = bisect.bisect_right(cuts, lo)
    return i < len(cuts) and cuts[i] < hi


@functools.lru_cache(maxsize=8)
def _edge_cache(encoding_name: str) -> dict[str, int]:
    """The shared token-count cache for short edge strings of one encoding."""
    return {}


class TokenDoc:
    """A text tokenised once, measured in exact tokens."""

    exact_tokens = True

    def __init__(self, text: str, encoding: Any, encoding_name: str) -> None:
        self.text = text
        self.n = len(text)
        self._enc = encoding
        self._encode = functools.partial(encode_ordinary_safe, encoding)
        self._hard = encoding_name in _HARD_SAFE_ENCODINGS
        self._edge_cache = _edge_cache(encoding_name)
        # Lone surrogates are what UTF-8 cannot encode: scrub them only when encoding fails.
        data = None
        clean = text
        if not text.isascii():
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                clean = scrub_surrogates(text)
                data = clean.encode("utf-8")
        self._cuts: list[int] = []
        try:
            if hasattr(encoding, "encode_to_numpy"):
                tokens = encoding.encode_to_numpy(clean, disallowed_special=())
            else:  # tiktoken before 0.8
                tokens = np.asarray(encoding.encode_ordinary(clean), dtype=np.uint32)
        except BaseException as exc:  # pyo3's PanicException derives from BaseException
            if not is_tokenizer_overflow(exc):
                raise
            # tiktoken cannot encode this text whole (huge whitespace runs): encode slices.
            # Token offsets across a cut may differ from the whole text's, so a span over
            # one is measured by encoding it.
            self._cuts = whitespace_cuts(clean)
            tokens = np.asarray(encode_ordinary_safe(encoding, clean), dtype=np.uint32)
        self.n_tokens = int(tokens.shape[0])
        # One array, filled in place: fresh memory costs page faults, a sizeable share of
        # everything after the tokeniser. 64-bit, as Python ints are: searchsorted with a
        # Python int on a 32-bit array converts the whole array on every call.
        starts = np.zeros(self.n_tokens + 1, dtype=np.int64)
        starts[1:] = _byte_lengths(encoding_name)[tokens]
        np.cumsum(starts, out=starts)
        if data is not None:
            # A char offset is the byte offset minus the UTF-8 continuation bytes before it;
            # a token boundary inside a multi-byte character maps to that character's end.
            raw = np.frombuffer(data, dtype=np.uint8)
            continuation = np.flatnonzero((raw & 0xC0) == 0x80)
            np.subtract(starts, continuation.searchsorted(starts), out=starts, casting="unsafe")
        self._starts = starts
        self._find = starts.searchsorted
        # The last span start and end measured: (position, hard boundary, edge tokens,
        # index of the boundary's token).
        self._head = (-1, -1, 0, 0)
        self._tail = (-1, -1, 0, 0)

    # -- token <-> char
    def _tok_floor(self, c: int) -> int:
        """Index of the token that contains char position c (n_tokens at the end)."""
        return int(self._starts.searchsorted(c, "right")) - 1

    def _tok_at(self, c: int) -> int:
        """Number of tokens before char c, when c is a token boundary."""
        return int(self._starts.searchsorted(c, "left"))

    def char_of_token(self, i: int) -> int:
        """Char position where token i starts (the text's end for i >= n_tokens)."""
        if i >= self.n_tokens:
            return self.n
        return int(self._starts[max(0, i)])

    # -- the measure interface
    def size(self, a: int, b: int) -> int:
        """Exact tokens of text[a:b].

        With hard boundaries m1 (first after a) and m2 (last before b), the tokens of
        text[m1:m2] are exactly those of the whole text between them, so only the two edges
        are encoded. Each edge is remembered: a span's end is measured again for the
        overlap that ends there, and the overlap's start again as the next span's start.
        """
        if b - a <= _SMALL_SPAN or not self._hard:
            return len(self._encode(self.text[a:b]))
        if a == self._head[0]:
            _, m1, head, i1 = self._head
        else:
            m1 = self._first_after(a, b)
            if m1 < 0:
                return len(self._encode(self.text[a:b]))
            head = self._count_edge(self.text[a:m1]) if m1 > a else 0
            i1 = int(self._find(m1))
            self._head = (a, m1, head, i1)
        if b == self._tail[0]:
            _, m2, tail, i2 = self._tail
        else:
            m2 = self._last_before(b)
            tail = self._count_edge(self.text[m2:b]) if b > m2 >= 0 else 0
            i2 = int(self._find(m2)) if m2 >= 0 else 0
            self._tail = (b, m2, tail, i2)
        if m2 < m1 or (self._cuts and _cut_between(self._cuts, m1, m2)):
            return len(self._encode(self.text[a:b]))
        return head + i2 - i1 + tail

    def _first_after(self, a: int, b: int) -> int:
        """The first hard boundary in (a, min(b, a + _EDGE_WINDOW)], or -1."""
        text = self.text
        alnum = _ASCII_ALNUM
        # Words are short: a few steps in Python usually find it, cheaper than a regex call
        # (b - a > _SMALL_SPAN, so every index here is inside the text).
        for i in range(a + 1, a + 1 + _QUICK_STEPS):
            if text[i - 1] in alnum and text[i] not in alnum and text[i] < "\x80":
                return i
        return self._first_hard(a + 1, min(b, a + _EDGE_WINDOW))

    def _last_before(self, b: int) -> int:
        """The last hard boundary in [b - _EDGE_WINDOW, b], or -1."""
        text = self.text
        if b < self.n and text[b - 1] in _ASCII_ALNUM and text[b] not in _ASCII_ALNUM:
            if text[b] < "\x80":
                return b
        return self._last_hard(max(1, b - _EDGE_WINDOW), b)

    def _first_hard(self, lo: int, hi: int) -> int:
        """The smallest hard boundary i with lo <= i <= hi (lo >= 1), or -1."""
        text, n = self.text, self.n
        # Words are short: a few steps in Python usually find it, cheaper than a regex call.
        alnum = _ASCII_ALNUM
        for i in range(lo, min(hi, lo + _QUICK_STEPS) + 1):
            if text[i - 1] in alnum and (i == n or text[i] not in alnum and text[i] < "\x80"):
                return i
        match = _HARD.search(text, lo - 1, min(hi + 1, n))
        if match is not None:
            return match.start() + 1
        # The text's end is a hard boundary after a letter or digit.
        if hi >= n >= lo and text[n - 1] in _ASCII_ALNUM:
            return n
        return -1

    def _last_hard(self, lo: int, hi: int) -> int:
        """The largest hard boundary i with lo <= i <= hi (lo >= 1), or -1."""
        text, n = self.text, self.n
        if hi >= n >= lo and text[n - 1] in _ASCII_ALNUM:
            return n
        alnum = _ASCII_ALNUM
        for i in range(hi, max(lo, hi - _QUICK_STEPS) - 1, -1):
            if text[i - 1] in alnum and text[i] not in alnum and text[i] < "\x80":
                return i
        last = -1
        for match in _HARD.finditer(text, lo - 1, min(hi + 1, n)):
            last = match.start() + 1
        return last

    def _count_edge(self, piece: str) -> int:
        """Tokens of a short edge string; edges repeat (words, indentation), so they are
        cached per encoding: a tiktoken call costs microseconds even for one word."""
        cache = self._edge_cache
        count = cache.get(piece)
        if count is None:
            count = len(self._encode(piece))
            if len(cache) >= _EDGE_CACHE_SIZE:
                cache.clear()
            cache[piece] = count
        return count

    def window(self, a: int, budget: int, overlap: int, end: int, hint: int = -1) -> Window | None:
        """One span cut where `budget` runs out, in one call (the packer's loop without
        boundary levels, stripped of whitespace): (end of the span, its size, the cut, the
        next start sharing at most `overlap`, what it shares, the token holding that start),
        or None when the span needs the packer's general loop (near `end`, an estimate
        short of the exact count, an overlap that does not fit).

        `hint` is the token holding `a`, as the previous step returned it.
        """
        text, starts, ws = self.text, self._starts, _WS
        if 0 <= hint < self.n_tokens and starts[hint] <= a < starts[hint + 1]:
            i = hint
        else:
            i = int(self._find(a, "right")) - 1
        j = i + budget
        if j >= self.n_tokens:
            return None
        cut = b = int(starts[j])
        if cut >= end or cut <= a:
            return None
        while cut < end and text[cut] in ws:
            cut += 1
        while b > a and text[b - 1] in ws:
            b -= 1
        size = self._counted(a, i, b, j)
        if size > budget or b <= a:
            return None
        if not overlap:
            return b, size, cut, cut, 0, -1
        if b == starts[j]:
            k = max(0, j - overlap)
            begin = max(a + 1, int(starts[k]))
        else:
            begin, k = max(a + 1, self.back(b, overlap)), -1
        while begin < b and text[begin] in ws:
            begin += 1
        if begin >= b:
            return None
        if not (0 <= k < self.n_tokens and starts[k] <= begin < starts[k + 1]):
            k = int(self._find(begin, "right")) - 1
        shared = self._counted(begin, k, b, j)
        if shared > overlap:
            return None
        return b, size, cut, begin, shared, k

    def _counted(self, a: int, i: int, b: int, j: int) -> int:
        """Exact tokens of text[a:b], where token i holds a and token j starts at or after b:
        when the token boundaries next to a and at b are hard, only the head is encoded and
        no offset is looked up; otherwise `size`."""
        starts, text = self._starts, self.text
        if b - a > _SMALL_SPAN and self._hard and not self._cuts and b == starts[j] < self.n:
            m1 = int(starts[i])
            if m1 < a:
                i, m1 = i + 1, int(starts[i + 1])
            alnum = _ASCII_ALNUM
            if (
                a < m1 < b
                and text[m1 - 1] in alnum
                and text[m1] not in alnum
                and text[m1] < "\x80"
                and text[b - 1] in alnum
                and text[b] not in alnum
                and text[b] < "\x80"
            ):
                return self._count_edge(text[a:m1]) + j - i
        return self.size(a, b)

    def reach(self, a: int, budget: int) -> int:
        """About the farthest end e with size(a, e) <= budget (at least a + 1)."""
        i = self._tok_floor(a)
        partial = 1 if self.char_of_token(i) < a else 0
        e = self.char_of_token(i + partial + max(1, budget - partial))
        if e <= a:
            e = min(self.n, a + 1)
        return e

    def back(self, b: int, amount: int) -> int:
        """About the start p with size(p, b) == amount."""
        if b == self._tail[0] == self._tail[1]:
            # b is a hard boundary just measured: a token starts there (ASCII at b, so no
            # other token shares its char offset).
            j = self._tail[3]
        else:
            j = self._tok_floor(b)
            if self.char_of_token(j) < b:
                j += 1
        return self.char_of_token(max(0, j - amount))

    def prefix_size(self, prefix: str) -> int:
        """Exact tokens of a prefix put before a span (which must end with a newline)."""
        if not prefix:
            return 0
        if len(prefix) <= _EDGE_WINDOW:
            return self._count_edge(prefix)
        return len(self._encode(prefix))

    def token_count(self, a: int, b: int) -> int | None:
        """Exact tokens of text[a:b]."""
        return self.size(a, b)


class TokenMeasure:
    """Measures spans in exact tokens of a tiktoken encoding (cl100k_base by default)."""

    unit = "tokens"

    def __init__(self, encoding_name: str = "cl100k_base") -> None:
        self.encoding_name = encoding_name
        self._enc = get_encoding(encoding_name)

    def prepare(self, text: str) -> TokenDoc:
        """Tokenise `text` once and return its measured document."""
        return TokenDoc(text, self._enc, self.encoding_name)

    def budget(self, units: int) -> int:
        """Budgets are already in tokens."""
        return units

    def count(self, text: str) -> int:
        """Exact tokens of a standalone string."""
        return len(self._enc.encode_ordinary(text))


Measure = CharMeasure | TokenMeasure
