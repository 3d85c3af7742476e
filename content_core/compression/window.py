"""SlidingWindowManager: a token-bounded window over a stream of messages or chunks."""

from __future__ import annotations

from collections import deque

from content_core.compression._text import truncate_to_tokens
from content_core.tokens import TokenEstimator, default_estimator

__all__ = ["SlidingWindowManager"]


class SlidingWindowManager:
    """Keep the most recent segments whose token total stays within `max_tokens`.

    Adding a segment evicts the oldest ones until the total fits. A single segment larger
    than the whole budget is cut to its first `max_tokens` tokens rather than dropped.
    The total is the sum of per-segment counts; `get_context` joins with `separator`.
    """

    def __init__(
        self,
        *,
        max_tokens: int = 128_000,
        estimator: TokenEstimator | None = None,
        separator: str = "\n\n",
    ) -> None:
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self.max_tokens = max_tokens
        self.estimator = estimator or default_estimator()
        self.separator = separator
        self._segments: deque[tuple[str, int]] = deque()
        self._total = 0

    def add(self, text: str) -> int:
        """Append `text`, evict the oldest segments as needed, and return how many were evicted."""
        tokens = self.estimator.estimate(text)
        if tokens > self.max_tokens:
            text = truncate_to_tokens(text, self.max_tokens, self.estimator)
            tokens = self.estimator.estimate(text)
        self._segments.append((text, tokens))
        self._total += tokens
        evicted = 0
        while self._total > self.max_tokens and len(self._segments) > 1:
            _, old = self._segments.popleft()
            self._total -= old
            evicted += 1
        return evicted

    def get_context(self) -> str:
        """Return the segments in the window, oldest first, joined by the separator."""
        return self.separator.join(text for text, _ in self._segments)

    def segments(self) -> list[str]:
        """Return the segments in the window, oldest first."""
        return [text for text, _ in self._segments]

    @property
    def segment_count(self) -> int:
        """Number of segments in the window."""
        return len(self._segments)

    @property
    def estimated_tokens(self) -> int:
        """Sum of the token counts of the segments in the window."""
        return self._total

    def clear(self) -> None:
        """Empty the window."""
        self._segments.clear()
        self._total = 0
