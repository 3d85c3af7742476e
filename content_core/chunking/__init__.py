"""Chunking: every chunker of the seeds behind one `Chunk` record and the `Chunker` protocol.

Firefly: TextChunker (token, sentence, paragraph), DocumentSplitter, MarkdownChunker,
ImageTiler. FFAI: CharacterChunker, RecursiveChunker, MarkdownChunker, CodeChunker,
HierarchicalChunker, ChunkerBase (a custom chunker's base), list_chunkers, get_chunker. remdb:
chunk_text, smart_chunk_text. The pipeline builds its chunker from a ChunkingConfig with
build_chunker; every name it accepts is a `ChunkerSpec` in the registry (built-in, or a
plug-in's through the entry point group `content_pipeline.chunkers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.chunking._measure import TokenDoc as TokenDoc
from content_core.chunking.base import Chunk as Chunk
from content_core.chunking.base import ChunkBudget as ChunkBudget
from content_core.chunking.base import Chunker as Chunker
from content_core.chunking.base import ChunkerBase as ChunkerBase
from content_core.chunking.base import ChunkerOptions as ChunkerOptions
from content_core.chunking.base import ChunkerSpec as ChunkerSpec
from content_core.chunking.build import build_chunker as build_chunker
from content_core.chunking.build import get_chunker as get_chunker
from content_core.chunking.code import CodeChunker as CodeChunker
from content_core.chunking.config import ChunkingConfig as ChunkingConfig
from content_core.chunking.image import ImageTiler as ImageTiler
from content_core.chunking.markdown import MarkdownChunker as MarkdownChunker
from content_core.chunking.recursive import CharacterChunker as CharacterChunker
from content_core.chunking.recursive import HierarchicalChunker as HierarchicalChunker
from content_core.chunking.recursive import RecursiveChunker as RecursiveChunker
from content_core.chunking.registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from content_core.chunking.registry import chunker_spec as chunker_spec
from content_core.chunking.registry import list_chunkers as list_chunkers
from content_core.chunking.smart import chunk_text as chunk_text
from content_core.chunking.smart import smart_chunk_text as smart_chunk_text
from content_core.chunking.text import DocumentSplitter as DocumentSplitter
from content_core.chunking.text import TextChunker as TextChunker

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
