"""WordLlama: a static token-embedding model (MIT) whose 256-dimension weights and tokenizer
ship inside its wheel, so it embeds offline, on CPU, in about a millisecond per chunk."""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from content_core.embeddings.base import Vector
from content_core.errors import EmbeddingError, MissingDependencyError
from content_core.logs import root_logging_kept

if TYPE_CHECKING:
    from wordllama.inference import WordLlamaInference

__all__ = ["WORDLLAMA_DIMENSION", "WordLlamaEmbedder"]

WORDLLAMA_DIMENSION = 256
_CONFIG = "l2_supercat"


class WordLlamaEmbedder:
    """The `l2_supercat` WordLlama model, loaded from the package's own files, never fetched.

    `dimension` below 256 truncates the vectors (a Matryoshka model: a prefix is a usable
    embedding); vectors are L2-normalised.
    """

    def __init__(self, dimension: int | None = None) -> None:
        dim = dimension or WORDLLAMA_DIMENSION
        if not 1 <= dim <= WORDLLAMA_DIMENSION:
            raise ValueError(f"wordllama dimension must be 1..{WORDLLAMA_DIMENSION}, not {dim}")
        self._dimension = dim
        self._model: WordLlamaInference | None = None

    @property
    def name(self) -> str:
        """The model name stored with every vector."""
        return f"wordllama-{_CONFIG}"

    @property
    def dimension(self) -> int:
        """Floats per vector."""
        return self._dimension

    @property
    def requested_dimension(self) -> int:
        """Always known: the same as `dimension`."""
        return self._dimension

    def load(self) -> WordLlamaInference:
        """The model, loaded on first use (or earlier, by calling this: a worker warming up).

        Raises:
            MissingDependencyError: wordllama or its packaged model files are missing.
        """
        if self._model is None:
            self._model = _load(self._dimension)
        return self._model

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One normalised vector per text.

        Raises:
            EmbeddingError: a text has no token the model knows (its vector would be NaN).
        """
        if not texts:
            return []
        model = self.load()
        import numpy as np  # a dependency of wordllama

        # A text with no known token divides by a zero norm: NaN, reported below as an error.
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = model.embed(list(texts), norm=True)
        vectors: list[Vector] = matrix.tolist()
        for text, vector in zip(texts, vectors, strict=True):
            if not all(math.isfinite(x) for x in vector):
                raise EmbeddingError(f"no token to embed in {text[:40]!r}", stage="embed")
        return vectors

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        """`embed` on a worker thread."""
        return await asyncio.to_thread(self.embed, texts)


@functools.cache
def _load(dimension: int) -> WordLlamaInference:
    """The model truncated to `dimension`, loaded once per process (and once for a pool's
    workers, which inherit it from the fork server: content_core.pipeline._worker_preload)."""
    try:
        # wordllama calls logging.basicConfig(level=INFO) when imported, which would print
        # every library's INFO records in this process: its set-up is undone.
        with root_logging_kept():
            import wordllama
    except ImportError as exc:
        raise MissingDependencyError(
            "the wordllama embedder needs the package wordllama", extra="embeddings"
        ) from exc
    # The wheel keeps its files in <package>/weights and <package>/tokenizers, which is the
    # layout of a cache folder: naming the package folder as the cache finds both (the
    # package's own lookup misses the tokenizer folder), and disable_download makes a missing
    # file an error instead of a Hugging Face download.
    folder = Path(wordllama.__file__).parent
    try:
        return wordllama.WordLlama.load(
            _CONFIG,
            cache_dir=folder,
            dim=WORDLLAMA_DIMENSION,
            trunc_dim=None if dimension == WORDLLAMA_DIMENSION else dimension,
            disable_download=True,
        )
    except FileNotFoundError as exc:
        raise MissingDependencyError(
            f"wordllama's packaged model is missing: {exc}", extra="embeddings"
        ) from exc
