"""ContextCompressor: return text unchanged when it fits, else delegate, then enforce the budget."""

from __future__ import annotations

from content_core.compression._text import default_estimator, truncate_to_tokens
from content_core.compression.strategies import CompressionStrategy
from content_core.tokens import TokenEstimator

__all__ = ["ContextCompressor"]


class ContextCompressor:
    """Reduce a text to a token budget with a pluggable strategy.

    The estimator (exact cl100k_base by default) decides whether the text fits; a strategy's
    result that still overshoots (an LLM summary is only asked to be short) is cut at a word
    boundary, so `compress` always returns text within `max_tokens` by the estimator's count.
    """

    def __init__(
        self, strategy: CompressionStrategy, *, estimator: TokenEstimator | None = None
    ) -> None:
        if not isinstance(strategy, CompressionStrategy):
            raise TypeError(f"{type(strategy).__name__} does not implement CompressionStrategy")
        self.strategy = strategy
        self.estimator = estimator or default_estimator()

    async def compress(self, text: str, max_tokens: int) -> str:
        """Return `text` if it fits in `max_tokens`, else the strategy's reduction of it."""
        if max_tokens < 0:
            raise ValueError("max_tokens must be >= 0")
        if self.estimator.fits(text, max_tokens):
            return text
        reduced = await self.strategy.compress(text, max_tokens)
        return truncate_to_tokens(reduced, max_tokens, self.estimator)
