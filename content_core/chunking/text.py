"""Firefly's TextChunker (token, sentence and paragraph strategies) and DocumentSplitter."""

from __future__ import annotations

import re
from typing import Any
from typing import Literal as TypingLiteral

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
from content_core.chunking._measure import TokenMeasure
from content_core.chunking._tablepack import pack_tables
from content_core.chunking._tables import find_tables
from content_core.chunking.base import Chunk, ChunkBudget, ChunkerOptions, ChunkerSpec
from content_core.tokens import DEFAULT_ENCODING, TokenEstimator

__all__ = [
    "DocumentSplitter",
    "PARAGRAPH_SPEC",
    "SENTENCE_SPEC",
    "Strategy",
    "TOKEN_SPEC",
    "TextChunker",
]

Strategy = TypingLiteral["token", "sentence", "paragraph"]

# (boundary, least fill of the window) per strategy, strongest first.
_LEVELS: dict[str, tuple[tuple[Level, float], ...]] = {
    "token": (),
    "sentence": ((SENTENCE, 0.0), (LINE, 0.5), (WORD, 0.5)),
    "paragraph": ((PARAGRAPH, 0.0), (LINE, 0.5), (SENTENCE, 0.5), (WORD, 0.5)),
}
_OVERLAP_LEVELS: dict[str, tuple[Level, ...]] = {
    "token": (),
    "sentence": (SENTENCE, WORD),
    "paragraph": (PARAGRAPH, SENTENCE, WORD),
}


class TextChunker:
    """Splits text into chunks of at most `chunk_size` exact tokens.

    Strategies: "token" cuts where the budget runs out; "sentence" packs whole sentences;
    "paragraph" packs whole paragraphs. A unit too long for the budget is cut at lines,
    sentences or words. Consecutive chunks share at most `chunk_overlap` tokens. Tokens are
    exact counts in `encoding_name` (an exact `estimator` may name the encoding instead).
    Markdown and HTML tables are cut between rows only, their header repeated in each part.
    """

    def __init__(
        self,
        *,
        chunk_size: int = 4000,
        chunk_overlap: int = 200,
        strategy: Strategy = "token",
        estimator: TokenEstimator | None = None,
        encoding_name: str | None = None,
    ) -> None:
        if strategy not in _LEVELS:
            raise ValueError(f"unknown strategy {strategy!r}; use token, sentence or paragraph")
        check_sizes(chunk_size, chunk_overlap, minimum=MIN_TOKEN_BUDGET)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.strategy: Strategy = strategy
        if encoding_name is None:
            exact = estimator is not None and estimator.is_exact
            encoding_name = estimator.encoding_name if exact and estimator else DEFAULT_ENCODING
        self.encoding_name = encoding_name or DEFAULT_ENCODING
        self._measure = TokenMeasure(self.encoding_name)

    def chunk(self, content: str) -> list[Chunk]:
        """Split `content` into chunks; each records its exact `token_count` in metadata."""
        doc = self._measure.prepare(content)
        spans = pack_tables(
            doc,
            0,
            len(content),
            budget=self.chunk_size,
            tables=find_tables(content),
            region=lambda lo, hi: pack(
                doc,
                lo,
                hi,
                budget=self.chunk_size,
                overlap=self.chunk_overlap,
                levels=_LEVELS[self.strategy],
                overlap_levels=_OVERLAP_LEVELS[self.strategy],
            ),
        )
        return spans_to_chunks(doc, spans, metadata={"strategy": self.strategy})

    def __repr__(self) -> str:
        return (
            f"TextChunker(chunk_size={self.chunk_size}, chunk_overlap={self.chunk_overlap}, "
            f"strategy={self.strategy!r})"
        )


def _text_spec(strategy: Strategy, summary: str) -> ChunkerSpec[ChunkerOptions]:
    def build(budget: ChunkBudget, _: ChunkerOptions) -> TextChunker:
        return TextChunker(
            chunk_size=budget.chunk_size,
            chunk_overlap=budget.chunk_overlap,
            strategy=strategy,
            encoding_name=budget.encoding_name,
        )

    def keywords(**kwargs: Any) -> TextChunker:  # Any: TextChunker's own keyword arguments
        return TextChunker(strategy=strategy, **kwargs)

    return ChunkerSpec(strategy, ChunkerOptions, build, summary, keywords)


TOKEN_SPEC = _text_spec("token", "Cuts where the token budget runs out.")
SENTENCE_SPEC = _text_spec("sentence", "Packs whole sentences.")
PARAGRAPH_SPEC = _text_spec("paragraph", "Packs whole paragraphs.")

_DEFAULT_SEPARATOR = r"\f|\n-{3,}\n|\n={3,}\n"


class DocumentSplitter:
    """Splits a multi-document text at separator matches (form feeds, --- or === lines).

    Segments shorter than `min_length` characters (after trimming whitespace) are dropped, as
    the seed documents. Each segment is a `Chunk` with `metadata["type"] == "document_segment"`.
    """

    def __init__(self, *, separator: str = _DEFAULT_SEPARATOR, min_length: int = 10) -> None:
        if min_length < 0:
            raise ValueError("min_length must not be negative")
        self.separator = separator
        self.min_length = min_length
        try:
            self._regex = re.compile(separator)
        except re.error as exc:
            raise ValueError(f"invalid separator regex {separator!r}: {exc}") from exc

    def split(self, content: str) -> list[Chunk]:
        """Return the segments of `content` between separators, trimmed of whitespace."""
        bounds: list[tuple[int, int]] = []
        start = 0
        for match in self._regex.finditer(content):
            if match.end() == match.start():
                continue
            bounds.append((start, match.start()))
            start = match.end()
        bounds.append((start, len(content)))
        kept: list[tuple[int, int]] = []
        for a, b in bounds:
            while a < b and content[a].isspace():
                a += 1
            while b > a and content[b - 1].isspace():
                b -= 1
            if b - a >= max(1, self.min_length):
                kept.append((a, b))
        total = len(kept)
        return [
            Chunk(
                content=content[a:b],
                index=i,
                total_chunks=total,
                source_start=a,
                source_end=b,
                metadata={"type": "document_segment"},
            )
            for i, (a, b) in enumerate(kept)
        ]

    def chunk(self, content: str) -> list[Chunk]:
        """Same as `split`, so a DocumentSplitter satisfies the `Chunker` protocol."""
        return self.split(content)
