"""build_chunker: the chunker a ChunkingConfig names, counting exact tokens."""

from __future__ import annotations

from content_core.chunking.base import ChunkBudget, Chunker
from content_core.chunking.config import ChunkingConfig
from content_core.chunking.registry import chunker_spec

__all__ = ["build_chunker"]


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
