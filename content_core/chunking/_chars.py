"""Spans measured in characters: the measure of the chunkers' FFAI form, whose sizes count
characters (re-exported by `_measure` beside the token measure)."""

from __future__ import annotations

from content_core.tokens import heuristic_chars_for_tokens

__all__ = ["CharDoc", "CharMeasure"]


class CharDoc:
    """A text measured in characters."""

    exact_tokens = False

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def size(self, a: int, b: int) -> int:
        """Characters in text[a:b]."""
        return b - a

    def reach(self, a: int, budget: int) -> int:
        """The farthest end e with size(a, e) <= budget (at least a + 1)."""
        return min(self.n, a + max(1, budget))

    def back(self, b: int, amount: int) -> int:
        """A start p with size(p, b) about `amount`."""
        return max(0, b - amount)

    def prefix_size(self, prefix: str) -> int:
        """Size of a prefix put before a span."""
        return len(prefix)

    def token_count(self, a: int, b: int) -> int | None:
        """Exact tokens of text[a:b] when this measure counts tokens, else None."""
        return None


class CharMeasure:
    """Measures spans in characters (`scale` characters per unit)."""

    unit = "chars"

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def prepare(self, text: str) -> CharDoc:
        """Return the measured document for `text`."""
        return CharDoc(text)

    def budget(self, units: int) -> int:
        """Convert a budget in this measure's units to the document's size units."""
        if self.scale == 1.0:
            return units
        return heuristic_chars_for_tokens(units)

    def count(self, text: str) -> int:
        """Size of a standalone string."""
        return len(text)
