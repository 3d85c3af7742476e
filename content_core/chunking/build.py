"""build_chunker: the chunker a ChunkingConfig names, counting exact tokens."""

from __future__ import annotations

from content_core.chunking.base import Chunker
from content_core.chunking.config import ChunkingConfig
from content_core.chunking.text import TextChunker

__all__ = ["build_chunker"]


def build_chunker(config: ChunkingConfig) -> Chunker:
    """Return the chunker `config` names; its chunks carry `metadata["token_count"]`."""
    strategy = config.chunker if config.chunker in ("token", "sentence") else "paragraph"
    return TextChunker(
        chunk_size=config.chunk_size,
        chunk_overlap=config.chunk_overlap,
        strategy=strategy,  # type: ignore[arg-type]
        encoding_name=config.encoding_name,
    )
