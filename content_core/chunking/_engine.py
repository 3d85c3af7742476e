"""The one packing loop behind every text chunker.

A chunker describes where it likes to cut (levels of boundaries, strongest first) and the
packer walks the text: from a start it reaches as far as the budget allows, cuts at the last
boundary of the strongest level that lies in the acceptable part of that window, verifies the
exact size of the span (shrinking it if the estimate was short) and steps back by at most the
overlap for the next start.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Level", "Literal", "Marked", "Pattern", "Positions", "Span", "pack", "WS"]

WS = " \t\n\r\f\v"


class Level(Protocol):
    """A kind of boundary: a position where a chunk may end and the next begin."""

    def last(self, text: str, lo: int, hi: int) -> int:
        """The largest boundary p with lo <= p <= hi, or -1."""
        ...

    def first(self, text: str, lo: int, hi: int) -> int:
        """The smallest boundary p with lo <= p <= hi, or -1."""
        ...


@dataclass(frozen=True, slots=True)
class Literal:
    """Boundaries right after each occurrence of a separator string."""

    sep: str

    def last(self, text: str, lo: int, hi: int) -> int:
        """The largest boundary in [lo, hi], or -1."""
        width = len(self.sep)
        i = text.rfind(self.sep, max(0, lo - width), hi)
        return -1 if i < 0 else i + width

    def first(self, text: str, lo: int, hi: int) -> int:
        """The smallest boundary in [lo, hi], or -1."""
        width = len(self.sep)
        i = text.find(self.sep, max(0, lo - width), hi)
        return -1 if i < 0 else i + width


# The first window a Pattern searches backwards from the end of a span.
_LAST_WINDOW = 256
# Marks tried one by one in a window before the regex engine scans it.
_MARK_TRIES = 16


@dataclass(frozen=True, slots=True)
class Pattern:
    """Boundaries at the end of each match of a regular expression."""

    regex: re.Pattern[str]
    lookbehind: int = 8

    def last(self, text: str, lo: int, hi: int) -> int:
        """The largest boundary in [lo, hi], or -1."""
        # Searched backwards from hi in growing windows: the last boundary is usually near
        # the end, and every match before it would cost a match object.
        width = _LAST_WINDOW
        top = hi
        while True:
            start = max(lo, hi - width)
            found = -1
            for match in self.regex.finditer(text, max(0, start - self.lookbehind), top):
                end = match.end()
                if end >= start:
                    found = end
            if found >= 0 or start <= lo:
                return found
            # Matches ending before `start` are searched next, up to where this window began.
            top = start + self.lookbehind
            width *= 4

    def first(self, text: str, lo: int, hi: int) -> int:
        """The smallest boundary in [lo, hi], or -1."""
        for match in self.regex.finditer(text, max(0, lo - self.lookbehind), hi):
            if match.end() >= lo:
                return match.end()
        return -1


@dataclass(frozen=True, slots=True)
class Marked:
    """Boundaries at the end of each match of a regular expression that starts with one of a
    few mark characters (sentence ends: . ! ?).

    The marks are found with str.find/str.rfind, many times faster than a regex search
    over a window of text, and only their positions are tried with the regex.
    """

    marks: str
    regex: re.Pattern[str]
    lookbehind: int = 8

    def last(self, text: str, lo: int, hi: int) -> int:
        """The largest boundary in [lo, hi], or -1."""
        start = max(0, lo - self.lookbehind)
        # Marks are looked for in windows growing back from hi: the last boundary is usually
        # near, and a mark that does not occur would otherwise be looked for in all of it.
        top, width = hi, _LAST_WINDOW
        while top > start:
            bottom = max(start, top - width)
            found = [text.rfind(mark, bottom, top) for mark in self.marks]
            for _ in range(_MARK_TRIES):
                p = max(found)
                if p < 0:
                    break
                match = self.regex.match(text, p, hi)
                if match is not None and match.end() >= lo:
                    return match.end()
                k = found.index(p)
                found[k] = text.rfind(self.marks[k], bottom, p)
            else:
                # Marks everywhere ("....", version numbers): let the regex engine scan.
                end = -1
                for match in self.regex.finditer(text, max(0, bottom - self.lookbehind), top):
                    if match.end() >= lo:
                        end = match.end()
                if end >= 0:
                    return end
            top, width = bottom, width * 4
        return -1

    def first(self, text: str, lo: int, hi: int) -> int:
        """The smallest boundary in [lo, hi], or -1."""
        bottom, width = max(0, lo - self.lookbehind), _LAST_WINDOW
        absent = hi + 1
        while bottom < hi:
            top = min(hi, bottom + width)
            found = [text.find(mark, bottom, top) for mark in self.marks]
            found = [p if p >= 0 else absent for p in found]
            for _ in range(_MARK_TRIES):
                p = min(found)
                if p == absent:
                    break
                match = self.regex.match(text, p, hi)
                if match is not None and match.end() >= lo:
                    return match.end()
                k = found.index(p)
                nxt = text.find(self.marks[k], p + 1, top)
                found[k] = nxt if nxt >= 0 else absent
            else:
                for match in self.regex.finditer(text, p, hi):
                    if match.end() >= lo:
                        return match.end()
                return -1
            bottom, width = top, width * 4
        return -1


@dataclass(frozen=True, slots=True)
class Positions:
    """Boundaries known in advance (sorted), e.g. block starts from a parser."""

    points: Sequence[int]

    def last(self, text: str, lo: int, hi: int) -> int:
        """The largest boundary in [lo, hi], or -1."""
        i = bisect.bisect_right(self.points, hi) - 1
        return self.points[i] if i >= 0 and self.points[i] >= lo else -1

    def first(self, text: str, lo: int, hi: int) -> int:
        """The smallest boundary in [lo, hi], or -1."""
        i = bisect.bisect_left(self.points, lo)
        return self.points[i] if i < len(self.points) and self.points[i] <= hi else -1


class _Doc(Protocol):
    text: str
    n: int

    def size(self, a: int, b: int) -> int: ...

    def reach(self, a: int, budget: int) -> int: ...

    def back(self, b: int, amount: int) -> int: ...


@dataclass(frozen=True, slots=True)
class Span:
    """text[start:end] with its exact size and the size it shares with the previous span."""

    start: int
    end: int
    size: int
    overlap: int


_NON_WS = re.compile(r"[^ \t\n\r\f\v]")


def _skip_ws(text: str, a: int, hi: int) -> int:
    # Runs of whitespace are mostly one or two characters: step over those in Python, and
    # let the regex engine cross a longer run.
    for _ in range(3):
        if a >= hi or text[a] not in WS:
            return a
        a += 1
    match = _NON_WS.search(text, a, hi)
    return hi if match is None else match.start()


def _rstrip(text: str, a: int, b: int) -> int:
    while b > a and text[b - 1] in WS:
        b -= 1
    return b


def pack(
    doc: _Doc,
    lo: int,
    hi: int,
    *,
    budget: int,
    overlap: int = 0,
    levels: Sequence[tuple[Level, float]] = (),
    overlap_levels: Sequence[Level] = (),
    strip: bool = True,
) -> list[Span]:
    """Cut doc.text[lo:hi] into spans of at most `budget` (exact, in the doc's measure).

    Args:
        levels: boundary kinds, strongest first, each with the least fill (0..1 of the window)
            a cut of that kind must reach to be taken; with none found the span is cut where
            the budget runs out.
        overlap_levels: where an overlapping start may fall (earliest such boundary whose
            overlap fits), strongest first; with none the start falls on the budget's edge.
        strip: leave leading and trailing whitespace out of every span.
    """
    if budget < 1:
        raise ValueError("budget must be at least 1")
    overlap = max(0, min(overlap, budget - 1))
    text = doc.text
    spans: list[Span] = []
    a = _skip_ws(text, lo, hi) if strip else lo
    end_all = _rstrip(text, a, hi) if strip else hi
    prev_end = prev_cut = -1
    shared = 0
    # Cut where the budget runs out: a token document does a whole step in one call.
    window = getattr(doc, "window", None) if strip and not levels and not overlap_levels else None
    hint = -1
    while a < end_all:
        if window is not None:
            step = window(a, budget, overlap, end_all, hint)
            if step is not None and step[0] > prev_end:
                b, size, prev_cut, nxt, next_shared, hint = step
                spans.append(Span(a, b, size, shared))
                prev_end = b
                a = _skip_ws(text, nxt, hi)
                shared = next_shared if a == nxt else 0
                continue
        e = doc.reach(a, budget)
        cut = -1
        if e >= end_all:
            size = doc.size(a, end_all)
            if size <= budget:
                spans.append(Span(a, end_all, size, shared))
                break
            e = min(e, end_all)
        floor = prev_end + 1 if prev_end > a else a + 1
        if strip:
            # Whitespace after the window's edge is stripped, so a boundary there still fits.
            e = _skip_ws(text, e, end_all)
        while True:
            cut = _choose(text, a, e, floor, levels)
            b = _rstrip(text, a, cut) if strip else cut
            while b <= prev_end and cut < e:
                # Stripping pulled the end back onto the previous one: cut further on.
                cut = _choose(text, a, e, cut + 1, levels)
                b = _rstrip(text, a, cut) if strip else cut
            if b <= a:
                b = cut
            size = doc.size(a, b)
            if size <= budget:
                break
            # The estimate was short: aim lower by the excess and try again.
            shorter = doc.reach(a, max(1, budget - (size - budget)))
            e = shorter if shorter < e else e - 1
            if e <= a:
                raise ValueError(f"a single character at {a} exceeds a budget of {budget}")
            floor = min(floor, e)
        if b <= prev_end and prev_cut > a:
            # From this overlapping start nothing past the previous span fits (a long
            # whitespace run follows it): start after the previous cut instead, unshared.
            a = _skip_ws(text, prev_cut, hi) if strip else prev_cut
            shared = 0
            continue
        spans.append(Span(a, b, size, shared))
        prev_end, prev_cut = b, cut
        nxt = cut
        shared = 0
        if overlap and b < end_all:
            start, shared = _overlap_start(doc, a, b, overlap, overlap_levels, strip)
            if start > a:
                nxt = start
            else:
                shared = 0
        a = _skip_ws(text, nxt, hi) if strip else nxt
        if a >= prev_end:
            shared = 0
        elif a != nxt:
            shared = doc.size(a, prev_end)
    return spans


def _choose(text: str, a: int, e: int, floor: int, levels: Sequence[tuple[Level, float]]) -> int:
    """Where to end a span that starts at a and may reach e."""
    width = e - a
    for level, fill in levels:
        lo = max(floor, a + math.ceil(fill * width))
        if lo > e:
            continue
        p = level.last(text, lo, e)
        if p >= lo:
            return p
    return e


def _overlap_start(
    doc: _Doc, a: int, b: int, overlap: int, levels: Sequence[Level], strip: bool
) -> tuple[int, int]:
    """The next span's start inside (a, b) sharing at most `overlap`, and what it shares."""
    text = doc.text
    p = max(a + 1, doc.back(b, overlap))
    if p >= b:
        return -1, 0
    for level in levels:
        start = level.first(text, p + 1, b - 1)
        while a < start < b:
            begin = _skip_ws(text, start, b) if strip else start
            if begin >= b:
                break
            shared = doc.size(begin, b)
            if shared <= overlap:
                return begin, shared
            start = level.first(text, start + 1, b - 1)
    start = p
    while start < b:
        begin = _skip_ws(text, start, b) if strip else start
        if begin >= b:
            break
        shared = doc.size(begin, b)
        if shared <= overlap:
            return begin, shared
        # Measured from `begin`: aim later by the excess, always moving forward.
        start = max(doc.back(b, overlap - (shared - overlap)), begin + 1)
    return -1, 0
