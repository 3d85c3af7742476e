"""A plain function `list[str] -> list[vector]` as an `Embedder`, for callers (the seeds'
`RAG(embed=embed)`) that hand one in rather than an embedder object."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from content_core.embeddings.base import Embedder, EmbedderConfig, Vector
from content_core.embeddings.factory import make_embedder
from content_core.errors import EmbeddingError

__all__ = ["EmbedFunction", "FunctionEmbedder", "as_embedder"]

EmbedFunction = Callable[[list[str]], Sequence[Sequence[float]]]


class FunctionEmbedder:
    """`function` behind the `Embedder` protocol. Stored vectors are compared only with those
    of the same model `name`, so it names the model whose vectors `function` computes."""

    def __init__(self, function: EmbedFunction, name: str) -> None:
        self.function = function
        self._name = name
        self._dimension: int | None = None

    @property
    def name(self) -> str:
        """The model `function` computes vectors of."""
        return self._name

    @property
    def dimension(self) -> int:
        """Floats per vector, learnt from a one-text call."""
        known = self._dimension
        return known if known is not None else len(self.embed(["dimension probe"])[0])

    @property
    def requested_dimension(self) -> int | None:
        """Never asked for: the function's own size."""
        return None

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """`function(texts)` as lists of floats, one per text."""
        vectors = [[float(x) for x in vector] for vector in self.function(list(texts))]
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{self._name}: {len(vectors)} vectors for {len(texts)} texts")
        if vectors:
            self._dimension = len(vectors[0])
        return vectors

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        """`embed` in a worker thread."""
        return await asyncio.to_thread(self.embed, texts)


def as_embedder(embed: Embedder | EmbedFunction, name: str | None = None) -> Embedder:
    """`embed` itself when it is an `Embedder`, else the function wrapped in a
    `FunctionEmbedder` named `name`, by default the model configured by the environment
    (`EmbedderConfig.from_environ`: the one the store's vectors were made with).

    Raises:
        TypeError: `embed` is neither an embedder nor callable.
    """
    if isinstance(embed, Embedder):
        return embed
    if not callable(embed):
        raise TypeError(f"embed must be an Embedder or a function of texts, not {embed!r}")
    if name is None:
        configured = make_embedder(EmbedderConfig.from_environ())
        name = configured.name if configured is not None else "function"
    return FunctionEmbedder(embed, name)
