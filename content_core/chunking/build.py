"""build_chunker: the chunker a ChunkingConfig names, counting exact tokens; get_chunker: one
by name and keyword arguments (the seeds' form)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from content_core.chunking.base import ChunkBudget, Chunker
from content_core.chunking.config import ChunkingConfig
from content_core.chunking.registry import chunker_spec

__all__ = ["build_chunker", "get_chunker"]

_BUDGET_FIELDS = frozenset(field.name for field in fields(ChunkBudget))


def build_chunker(config: ChunkingConfig) -> Chunker:
    """Return the chunker `config` names, with its budget in exact tokens.

    Every built-in chunker records `metadata["token_count"]` on each chunk, the exact count of
    its content (breadcrumb included), which never exceeds `config.chunk_size`; the Markdown
    chunker also records `metadata["breadcrumb"]`.
    """
    spec = chunker_spec(config.chunker)
    budget = ChunkBudget(
        chunk_size=config.chunk_size,
        chunk_overlap=config.chunk_overlap,
        encoding_name=config.encoding_name,
    )
    return spec.build(budget, spec.options.model_validate(config.options))


def get_chunker(name: str = "recursive", **kwargs: Any) -> Chunker:  # Any: each class's kwargs
    """Return the chunker called `name`, built with `kwargs`.

    Sizes count characters unless `tokenizer=TokenEstimator(encoding_name=...)` is passed,
    in which case they count exact tokens. A plug-in without a keyword form takes
    `chunk_size`, `chunk_overlap` and `encoding_name` (exact tokens) and its own options.
    Unknown names and arguments raise ValueError.
    """
    spec = chunker_spec(name)
    if spec.keywords is None:
        budget = {k: v for k, v in kwargs.items() if k in _BUDGET_FIELDS}
        options = {k: v for k, v in kwargs.items() if k not in _BUDGET_FIELDS}
        return build_chunker(ChunkingConfig(chunker=spec.name, options=options, **budget))
    try:
        return spec.keywords(**kwargs)
    except TypeError as exc:
        raise ValueError(f"bad arguments for chunker {name!r}: {exc}") from exc
