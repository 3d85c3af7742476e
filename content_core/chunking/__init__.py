"""Chunking: every chunker of the seeds behind one `Chunk` record and the `Chunker` protocol.

Firefly: TextChunker (token, sentence, paragraph), DocumentSplitter, MarkdownChunker,
ImageTiler. FFAI: CharacterChunker, RecursiveChunker, MarkdownChunker, CodeChunker,
HierarchicalChunker, list_chunkers, get_chunker. remdb: chunk_text, smart_chunk_text. The
pipeline builds its chunker from a ChunkingConfig with build_chunker; every name it accepts
is a `ChunkerSpec` in the registry (built-in, or a plug-in's through the entry point group
`content_pipeline.chunkers`).
"""

from __future__ import annotations

from content_core.chunking._measure import TokenDoc
from content_core.chunking.base import Chunk, ChunkBudget, Chunker, ChunkerOptions, ChunkerSpec
from content_core.chunking.build import build_chunker, get_chunker
from content_core.chunking.code import CodeChunker
from content_core.chunking.config import ChunkingConfig
from content_core.chunking.image import ImageTiler
from content_core.chunking.markdown import MarkdownChunker
from content_core.chunking.recursive import CharacterChunker, HierarchicalChunker, RecursiveChunker
from content_core.chunking.registry import ENTRY_POINT_GROUP, chunker_spec, list_chunkers
from content_core.chunking.smart import chunk_text, smart_chunk_text
from content_core.chunking.text import DocumentSplitter, TextChunker

__all__ = [
    "CharacterChunker",
    "Chunk",
    "ChunkBudget",
    "Chunker",
    "ChunkerOptions",
    "ChunkerSpec",
    "ChunkingConfig",
    "CodeChunker",
    "DocumentSplitter",
    "ENTRY_POINT_GROUP",
    "HierarchicalChunker",
    "ImageTiler",
    "MarkdownChunker",
    "RecursiveChunker",
    "TextChunker",
    "TokenDoc",
    "build_chunker",
    "chunk_text",
    "chunker_spec",
    "get_chunker",
    "list_chunkers",
    "smart_chunk_text",
]
