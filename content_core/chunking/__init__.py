"""Chunking: every chunker of the seeds behind one `Chunk` record and the `Chunker` protocol.

Firefly: TextChunker (token, sentence, paragraph), DocumentSplitter, MarkdownChunker,
ImageTiler. FFAI: CharacterChunker, RecursiveChunker, MarkdownChunker, CodeChunker,
HierarchicalChunker, list_chunkers, get_chunker. remdb: chunk_text, smart_chunk_text. The
pipeline builds its chunker from a ChunkingConfig with build_chunker.
"""

from __future__ import annotations

from content_core.chunking.base import Chunk, Chunker
from content_core.chunking.build import build_chunker
from content_core.chunking.code import CodeChunker
from content_core.chunking.config import CHUNKER_NAMES, ChunkingConfig
from content_core.chunking.image import ImageTiler
from content_core.chunking.markdown import MarkdownChunker
from content_core.chunking.recursive import CharacterChunker, HierarchicalChunker, RecursiveChunker
from content_core.chunking.registry import get_chunker, list_chunkers
from content_core.chunking.smart import chunk_text, smart_chunk_text
from content_core.chunking.text import DocumentSplitter, TextChunker

__all__ = [
    "CHUNKER_NAMES",
    "CharacterChunker",
    "Chunk",
    "Chunker",
    "ChunkingConfig",
    "CodeChunker",
    "DocumentSplitter",
    "HierarchicalChunker",
    "ImageTiler",
    "MarkdownChunker",
    "RecursiveChunker",
    "TextChunker",
    "build_chunker",
    "chunk_text",
    "get_chunker",
    "list_chunkers",
    "smart_chunk_text",
]
