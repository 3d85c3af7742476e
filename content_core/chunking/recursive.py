"""FFAI's CharacterChunker, RecursiveChunker and HierarchicalChunker.

As FFAI documents, `chunk_size` and `chunk_overlap` count characters; given
`tokenizer=TokenEstimator(encoding_name=...)` they count exact tokens of that encoding and every
chunk records `metadata["token_count"]`. Chunks are exact slices of the text (whitespace
included), so `chunk.start_char`/`chunk.end_char` locate them; a table's later part also
repeats the table's header (see `metadata["prefix_chars"]`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from content_core.chunking._common import (
    LINE,
    MIN_TOKEN_BUDGET,
    PARAGRAPH,
    SENTENCE,
    WORD,
    check_sizes,
    spans_to_chunks,
)
from content_core.chunking._engine import Level, pack
from content_core.chunking._measure import CharDoc, CharMeasure, TokenDoc, TokenMeasure
from content_core.chunking._tablepack import Packed, Piece, pack_tables, span_of
from content_core.chunking._tables import Table, find_tables
from content_core.chunking.base import Chunk, ChunkBudget, ChunkerOptions, ChunkerSpec
from content_core.tokens import TokenEstimator

__all__ = [
    "CHARACTER_SPEC",
    "CharacterChunker",
    "FixedSizeChunker",
    "HIERARCHICAL_SPEC",
    "HierarchicalChunker",
    "HierarchicalOptions",
    "RECURSIVE_SPEC",
    "RecursiveChunker",
]

# A cut must fill at least this share of the window before a boundary is preferred to the
# budget's edge; below it the chunk is cut where the budget runs out.
_RECURSIVE_FILL = 0.7
_RECURSIVE_LEVELS: tuple[tuple[Level, float], ...] = (
    (PARAGRAPH, _RECURSIVE_FILL),
    (LINE, _RECURSIVE_FILL),
    (SENTENCE, _RECURSIVE_FILL),
)
_WORD_STARTS: tuple[Level, ...] = (WORD,)


def measure_for(tokenizer: TokenEstimator | None) -> CharMeasure | TokenMeasure:
    """Characters by default; exact tokens when given an exact tokenizer."""
    if tokenizer is None:
        return CharMeasure()
    if not tokenizer.is_exact or tokenizer.encoding_name is None:
        raise ValueError("tokenizer must count exactly: TokenEstimator(encoding_name=...)")
    return TokenMeasure(tokenizer.encoding_name)


class FixedSizeChunker:
    """Shared machinery: a measure, sizes, boundary levels and the packing loop."""

    name = "base"
    _levels: tuple[tuple[Level, float], ...] = ()
    _overlap_levels: tuple[Level, ...] = ()

    def __init__(
        self,
        *,
        chunk_size: int = 500,
        chunk_overlap: int = 100,
        tokenizer: TokenEstimator | None = None,
    ) -> None:
        self._measure = measure_for(tokenizer)
        minimum = MIN_TOKEN_BUDGET if self._measure.unit == "tokens" else 1
        check_sizes(chunk_size, chunk_overlap, minimum=minimum)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.tokenizer = tokenizer

    @property
    def unit(self) -> str:
        """ "chars" or "tokens": what chunk_size counts."""
        return self._measure.unit

    def _levels_for(self, doc: CharDoc | TokenDoc) -> Sequence[tuple[Level, float]]:
        return self._levels

    def _spans(
        self, doc: CharDoc | TokenDoc, lo: int, hi: int, size: int, tables: Sequence[Table]
    ) -> list[Packed]:
        levels = self._levels_for(doc)
        return pack_tables(
            doc,
            lo,
            hi,
            budget=size,
            tables=tables,
            region=lambda a, b: pack(
                doc,
                a,
                b,
                budget=size,
                overlap=self.chunk_overlap,
                levels=levels,
                overlap_levels=self._overlap_levels,
                strip=False,
            ),
        )

    def chunk(self, content: str) -> list[Chunk]:
        """Split `content` into chunks of at most chunk_size; Markdown and HTML tables are cut
        between rows only, their header repeated in each part."""
        doc = self._measure.prepare(content)
        tables = find_tables(content)
        spans = [
            s
            for s in self._spans(doc, 0, len(content), self.chunk_size, tables)
            if _has_text(doc, s)
        ]
        return spans_to_chunks(doc, spans, metadata={"chunker": self.name})

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(chunk_size={self.chunk_size}, "
            f"chunk_overlap={self.chunk_overlap}, unit={self.unit!r})"
        )


def _has_text(doc: CharDoc | TokenDoc, item: Packed) -> bool:
    span = span_of(item)
    return not doc.text[span.start : span.end].isspace()


class CharacterChunker(FixedSizeChunker):
    """Fixed windows of chunk_size, each starting chunk_overlap before the previous end."""

    name = "character"


class RecursiveChunker(FixedSizeChunker):
    """Cuts at paragraph breaks, else line breaks, else sentence ends, else at the budget.

    A boundary is taken only when the chunk reaches 70 % of the budget; an overlapping
    start falls at a word start, sharing at most chunk_overlap.
    """

    name = "recursive"
    _levels = _RECURSIVE_LEVELS
    _overlap_levels = _WORD_STARTS


class HierarchicalChunker(FixedSizeChunker):
    """Parent chunks of parent_chunk_size, each cut into child chunks of chunk_size.

    Returns the children (and, with include_parents=True, the parents before them); every
    child carries `metadata["parent_content"]`, `parent_index`, `parent_start` and
    `parent_end`. Only two levels exist, as FFAI documents.
    """

    name = "hierarchical"
    _levels = _RECURSIVE_LEVELS
    _overlap_levels = _WORD_STARTS

    def __init__(
        self,
        *,
        chunk_size: int = 400,
        chunk_overlap: int = 100,
        parent_chunk_size: int = 1500,
        max_levels: int = 2,
        include_parents: bool = False,
        tokenizer: TokenEstimator | None = None,
    ) -> None:
        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap, tokenizer=tokenizer)
        if max_levels != 2:
            raise ValueError("HierarchicalChunker supports max_levels=2 only")
        if parent_chunk_size < chunk_size:
            raise ValueError("parent_chunk_size must be at least chunk_size")
        self.parent_chunk_size = parent_chunk_size
        self.max_levels = max_levels
        self.include_parents = include_parents

    def chunk(self, content: str) -> list[Chunk]:
        """Return the child chunks (parents first when include_parents is set)."""
        doc = self._measure.prepare(content)
        tables = find_tables(content)
        parents = [
            s
            for s in pack_tables(
                doc,
                0,
                len(content),
                budget=self.parent_chunk_size,
                tables=tables,
                region=lambda a, b: pack(
                    doc, a, b, budget=self.parent_chunk_size, levels=self._levels, strip=False
                ),
            )
            if _has_text(doc, s)
        ]
        spans: list[Packed] = []
        extra: list[dict[str, object]] = []
        for p_index, item in enumerate(parents):
            parent = span_of(item)
            parent_text = content[parent.start : parent.end]
            if isinstance(item, Piece):
                parent_text = item.head + parent_text + item.tail
            if self.include_parents:
                spans.append(item)
                extra.append({"hierarchy": "parent", "parent_index": p_index})
            for child in self._spans(doc, parent.start, parent.end, self.chunk_size, tables):
                if not _has_text(doc, child):
                    continue
                spans.append(child)
                extra.append(
                    {
                        "hierarchy": "child",
                        "parent_index": p_index,
                        "parent_start": parent.start,
                        "parent_end": parent.end,
                        "parent_content": parent_text,
                    }
                )
        return spans_to_chunks(doc, spans, metadata={"chunker": self.name}, extra=extra)


class HierarchicalOptions(ChunkerOptions):
    """The hierarchical chunker's own settings."""

    parent_chunk_size: int = Field(
        default=2048, ge=16, description="Tokens per parent (at least chunk_size)."
    )


def _build_character(budget: ChunkBudget, _: ChunkerOptions) -> CharacterChunker:
    return CharacterChunker(
        chunk_size=budget.chunk_size,
        chunk_overlap=budget.chunk_overlap,
        tokenizer=TokenEstimator(encoding_name=budget.encoding_name),
    )


def _build_recursive(budget: ChunkBudget, _: ChunkerOptions) -> RecursiveChunker:
    return RecursiveChunker(
        chunk_size=budget.chunk_size,
        chunk_overlap=budget.chunk_overlap,
        tokenizer=TokenEstimator(encoding_name=budget.encoding_name),
    )


def _build_hierarchical(budget: ChunkBudget, options: HierarchicalOptions) -> HierarchicalChunker:
    return HierarchicalChunker(
        chunk_size=budget.chunk_size,
        chunk_overlap=budget.chunk_overlap,
        parent_chunk_size=max(options.parent_chunk_size, budget.chunk_size),
        tokenizer=TokenEstimator(encoding_name=budget.encoding_name),
    )


CHARACTER_SPEC = ChunkerSpec(
    "character",
    ChunkerOptions,
    _build_character,
    "Fixed-size windows, cut where the budget runs out.",
    CharacterChunker,
)
RECURSIVE_SPEC = ChunkerSpec(
    "recursive",
    ChunkerOptions,
    _build_recursive,
    "Cuts at paragraphs, then lines, then sentences.",
    RecursiveChunker,
)
HIERARCHICAL_SPEC = ChunkerSpec(
    "hierarchical",
    HierarchicalOptions,
    _build_hierarchical,
    "Child chunks that each carry their larger parent.",
    HierarchicalChunker,
)
