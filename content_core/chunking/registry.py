"""FFAI's registry: list_chunkers() and get_chunker(name, **kwargs)."""

from __future__ import annotations

from typing import Any

from content_core.chunking.base import Chunker
from content_core.chunking.code import CodeChunker
from content_core.chunking.markdown import MarkdownChunker
from content_core.chunking.recursive import CharacterChunker, HierarchicalChunker, RecursiveChunker

__all__ = ["get_chunker", "list_chunkers"]

_REGISTRY: dict[str, type[Any]] = {
    "character": CharacterChunker,
    "recursive": RecursiveChunker,
    "markdown": MarkdownChunker,
    "code": CodeChunker,
    "hierarchical": HierarchicalChunker,
}


def list_chunkers() -> list[str]:
    """Names of the chunking strategies, in FFAI's order."""
    return list(_REGISTRY)


def get_chunker(name: str = "recursive", **kwargs: Any) -> Chunker:  # Any: each class's kwargs
    """Return the chunker called `name`, built with `kwargs`.

    Sizes count characters unless `tokenizer=TokenEstimator(encoding_name=...)` is passed,
    in which case they count exact tokens. Unknown names and arguments raise ValueError.
    """
    cls = _REGISTRY.get(name.strip().lower())
    if cls is None:
        raise ValueError(f"unknown chunker {name!r}; choose one of {', '.join(_REGISTRY)}")
    if cls is MarkdownChunker:
        kwargs.setdefault("chunk_size", 500)
        kwargs.setdefault("chunk_overlap", 50)
    try:
        chunker: Chunker = cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"bad arguments for chunker {name!r}: {exc}") from exc
    return chunker
