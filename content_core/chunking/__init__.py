"""Chunking: every chunker of the seeds behind one `Chunk` record and the `Chunker` protocol."""

from __future__ import annotations

from content_core.chunking.base import Chunk, Chunker
from content_core.chunking.build import build_chunker
from content_core.chunking.config import CHUNKER_NAMES, ChunkingConfig
from content_core.chunking.text import DocumentSplitter, TextChunker

__all__ = [
    "CHUNKER_NAMES",
    "Chunk",
    "Chunker",
    "ChunkingConfig",
    "DocumentSplitter",
    "TextChunker",
    "build_chunker",
]
