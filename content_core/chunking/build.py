"""build_chunker: the chunker a ChunkingConfig names, counting exact tokens."""

from __future__ import annotations

from content_core.chunking.base import Chunker
from content_core.chunking.code import CodeChunker
from content_core.chunking.config import ChunkingConfig
from content_core.chunking.markdown import MarkdownChunker
from content_core.chunking.recursive import CharacterChunker, HierarchicalChunker, RecursiveChunker
from content_core.chunking.text import TextChunker
from content_core.tokens import TokenEstimator

__all__ = ["build_chunker"]


def build_chunker(config: ChunkingConfig) -> Chunker:
    """Return the chunker `config` names, with its budget in exact tokens.

    Every chunk it returns records `metadata["token_count"]`, the exact count of its content
    (breadcrumb included), which never exceeds `config.chunk_size`; the Markdown chunker also
    records `metadata["breadcrumb"]`.
    """
    size, overlap = config.chunk_size, config.chunk_overlap
    name = config.chunker
    if name in ("token", "sentence", "paragraph"):
        return TextChunker(
            chunk_size=size,
            chunk_overlap=overlap,
            strategy=name,  # type: ignore[arg-type]  # narrowed by the test above
            encoding_name=config.encoding_name,
        )
    if name == "markdown":
        return MarkdownChunker(
            max_chunk_tokens=size,
            chunk_overlap=overlap,
            min_body_tokens=config.min_body_tokens,
            breadcrumb_separator=config.breadcrumb_separator,
            encoding_name=config.encoding_name,
        )
    tokenizer = TokenEstimator(encoding_name=config.encoding_name)
    if name == "code":
        return CodeChunker(
            chunk_size=size, chunk_overlap=overlap, language=config.language, tokenizer=tokenizer
        )
    if name == "hierarchical":
        return HierarchicalChunker(
            chunk_size=size,
            chunk_overlap=overlap,
            parent_chunk_size=max(config.parent_chunk_size, size),
            tokenizer=tokenizer,
        )
    if name == "character":
        return CharacterChunker(chunk_size=size, chunk_overlap=overlap, tokenizer=tokenizer)
    return RecursiveChunker(chunk_size=size, chunk_overlap=overlap, tokenizer=tokenizer)
