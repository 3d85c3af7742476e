"""ContextCompressor: return text unchanged when it fits, else delegate, then enforce the budget."""

from __future__ import annotations

from content_core.compression._text import truncate_to_tokens
from content_core.compression.strategies import CompressionStrategy, TruncationStrategy
from content_core.tokens import TokenEstimator, default_estimator

__all__ = ["ContextCompressor"]


class ContextCompressor:
    """Reduce a text to a token budget with a pluggable strategy.

    The estimator (exact cl100k_base by default) decides whether the text fits; a strategy's
    result that still overshoots (an LLM summary is only asked to be short) is cut at a word
    boundary, so `compress` always returns text within `max_tokens` by the estimator's count;
    a truncation keeps its suffix marker.
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
        if self.estimator.fits(reduced, max_tokens):
            return reduced
        if isinstance(self.strategy, TruncationStrategy):
            # Its cut was sized by its own (heuristic) count; cutting its output again would
            # lose the "..." marker, so cut the text once more by this count, marker kept
            # (unless the budget is too small for any text beside it).
            marked = truncate_to_tokens(
                text, max_tokens, self.estimator, suffix=self.strategy.suffix
            )
            if marked:
                return marked
        return truncate_to_tokens(reduced, max_tokens, self.estimator)
