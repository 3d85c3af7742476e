"""MarkdownChunker: sections at headings found by markdown-it-py, with a breadcrumb on every
chunk and a hard budget that counts the breadcrumb."""

from __future__ import annotations

from typing import Any

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
from content_core.chunking._engine import Level, Positions, Span, pack
from content_core.chunking._mdscan import Section, markdown_sections
from content_core.chunking._measure import CharDoc, CharMeasure, TokenDoc, TokenMeasure
from content_core.chunking._tablepack import Packed, pack_tables
from content_core.chunking._tables import find_tables
from content_core.chunking.base import Chunk, ChunkBudget, ChunkerOptions, ChunkerSpec
from content_core.tokens import DEFAULT_ENCODING, TokenEstimator

__all__ = ["MARKDOWN_SPEC", "MarkdownChunker", "MarkdownOptions"]

_ELLIPSIS = "\u2026"
# The breadcrumb may take at most this share of the budget; the body keeps the rest.
_BREADCRUMB_SHARE = 3


_LEVELS_TAIL: tuple[tuple[Level, float], ...] = (
    (PARAGRAPH, 0.5),
    (LINE, 0.5),
    (SENTENCE, 0.5),
    (WORD, 0.5),
)
_OVERLAP_LEVELS: tuple[Level, ...] = (LINE, SENTENCE, WORD)


class MarkdownChunker:
    """Splits Markdown at headings and prefixes every chunk with its heading breadcrumb.

    Firefly's arguments (`max_chunk_tokens`, `chunk_overlap`, `min_body_tokens`,
    `breadcrumb_separator`) count exact cl100k tokens, and no chunk exceeds
    `max_chunk_tokens` with its breadcrumb and overlap included: a breadcrumb longer than a
    third of the budget is shortened. FFAI's form, `MarkdownChunker(chunk_size=500,
    chunk_overlap=50)`, counts characters instead, or exact tokens when given
    `tokenizer=TokenEstimator(encoding_name=...)`.

    A section whose body is under `min_body_tokens` is merged into the next one, so a
    heading directly followed by a sub-heading does not become a chunk of its own.

    Markdown and HTML tables are cut between rows only: each part after the first starts
    with the table's header again (see `metadata["table_part"]`, `"prefix_chars"`).
    """

    def __init__(
        self,
        *,
        max_chunk_tokens: int = 600,
        chunk_overlap: int = 80,
        min_body_tokens: int = 10,
        breadcrumb_separator: str = " > ",
        chunk_size: int | None = None,
        tokenizer: TokenEstimator | None = None,
        encoding_name: str | None = None,
    ) -> None:
        budget = chunk_size if chunk_size is not None else max_chunk_tokens
        exact_tokenizer = tokenizer is not None and tokenizer.is_exact
        if chunk_size is not None and not exact_tokenizer and encoding_name is None:
            self._measure: CharMeasure | TokenMeasure = CharMeasure()
            check_sizes(budget, chunk_overlap)
        else:
            name = encoding_name or (
                tokenizer.encoding_name if tokenizer is not None and exact_tokenizer else None
            )
            self._measure = TokenMeasure(name or DEFAULT_ENCODING)
            check_sizes(budget, chunk_overlap, minimum=MIN_TOKEN_BUDGET * 2)
        if min_body_tokens < 0:
            raise ValueError("min_body_tokens must not be negative")
        self.max_chunk_tokens = budget
        self.chunk_size = budget
        self.chunk_overlap = chunk_overlap
        self.min_body_tokens = min_body_tokens
        self.breadcrumb_separator = breadcrumb_separator

    @property
    def unit(self) -> str:
        """ "tokens" or "chars": what the budget counts."""
        return self._measure.unit

    def chunk(self, content: str) -> list[Chunk]:
        """Split `content` into breadcrumbed chunks within the budget."""
        doc = self._measure.prepare(content)
        sections, blocks = markdown_sections(content)
        sections = self._merge_thin(doc, sections)
        levels = ((Positions(blocks), 0.3), *_LEVELS_TAIL)
        tables = find_tables(content)
        all_spans: list[Packed] = []
        prefixes: list[str] = []
        prefix_sizes: list[int] = []
        crumbs: list[str] = []
        paths: list[dict[str, Any]] = []
        for section in sections:
            crumb, prefix, cost = self._breadcrumb(doc, section.path)
            body_budget = self.max_chunk_tokens - cost

            def region(lo: int, hi: int, body_budget: int = body_budget) -> list[Span]:
                return pack(
                    doc,
                    lo,
                    hi,
                    budget=body_budget,
                    overlap=min(self.chunk_overlap, body_budget - 1),
                    levels=levels,
                    overlap_levels=_OVERLAP_LEVELS,
                )

            spans = pack_tables(
                doc,
                section.start,
                section.end,
                budget=body_budget,
                tables=tables,
                region=region,
            )
            all_spans.extend(spans)
            prefixes.extend([prefix] * len(spans))
            prefix_sizes.extend([cost] * len(spans))
            crumbs.extend([crumb] * len(spans))
            paths.extend([{"headings": list(section.path)}] * len(spans))
        return spans_to_chunks(
            doc,
            all_spans,
            prefixes=prefixes,
            prefix_sizes=prefix_sizes,
            breadcrumbs=crumbs,
            extra=paths,
        )

    def _merge_thin(self, doc: CharDoc | TokenDoc, sections: list[Section]) -> list[Section]:
        """Fold sections whose body is under min_body_tokens into their successor."""
        if self.min_body_tokens <= 0 or len(sections) < 2:
            return sections
        merged: list[Section] = []
        carry: int | None = None
        for k, section in enumerate(sections):
            start = section.start if carry is None else carry
            last = k == len(sections) - 1
            thin = section.body >= section.end or (
                section.end - section.body < 4 * self.min_body_tokens
                and doc.size(section.body, section.end) < self.min_body_tokens
            )
            if thin and not last and section.path:
                carry = start
                continue
            merged.append(Section(start, max(section.body, start), section.end, section.path))
            carry = None
        return merged

    def _breadcrumb(self, doc: CharDoc | TokenDoc, path: tuple[str, ...]) -> tuple[str, str, int]:
        """The breadcrumb, the prefix put before each chunk, and the prefix's size."""
        if not path:
            return "", "", 0
        limit = self.max_chunk_tokens // _BREADCRUMB_SHARE
        parts = [" ".join(p.split()) for p in path]
        sep = self.breadcrumb_separator

        def cost(items: list[str]) -> int:
            return doc.prefix_size(sep.join(items) + "\n\n")

        size = cost(parts)
        while size > limit:
            bases = [p.rstrip(_ELLIPSIS) for p in parts]
            shrinkable = [i for i, base in enumerate(bases) if len(base) > 1]
            if shrinkable:
                longest = max(shrinkable, key=lambda i: len(bases[i]))
                base = bases[longest]
                keep = max(1, min(len(base) - 1, (len(base) * 2) // 3))
                parts[longest] = base[:keep].rstrip() + _ELLIPSIS
            elif len(parts) > 1:
                parts.pop(0)
            else:
                return "", "", 0
            size = cost(parts)
        crumb = sep.join(parts)
        if not crumb.strip():
            return "", "", 0
        return crumb, crumb + "\n\n", size


class MarkdownOptions(ChunkerOptions):
    """The Markdown chunker's own settings."""

    min_body_tokens: int = Field(default=10, ge=0, description="Merge thinner sections.")
    breadcrumb_separator: str = " > "


def _build_markdown(budget: ChunkBudget, options: MarkdownOptions) -> MarkdownChunker:
    return MarkdownChunker(
        max_chunk_tokens=budget.chunk_size,
        chunk_overlap=budget.chunk_overlap,
        min_body_tokens=options.min_body_tokens,
        breadcrumb_separator=options.breadcrumb_separator,
        encoding_name=budget.encoding_name,
    )


def _markdown_keywords(**kwargs: Any) -> MarkdownChunker:  # Any: the class's own arguments
    # FFAI's registry form counts characters, with FFAI's default sizes.
    kwargs.setdefault("chunk_size", 500)
    kwargs.setdefault("chunk_overlap", 50)
    return MarkdownChunker(**kwargs)


MARKDOWN_SPEC = ChunkerSpec(
    "markdown",
    MarkdownOptions,
    _build_markdown,
    "Sections at headings, each chunk prefixed with its heading breadcrumb.",
    _markdown_keywords,
)
