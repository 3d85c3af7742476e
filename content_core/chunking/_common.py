"""Boundary kinds shared by the chunkers, and the step that turns spans into `Chunk` records."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from content_core.chunking._engine import Literal, Marked, Pattern
from content_core.chunking._measure import CharDoc, TokenDoc
from content_core.chunking._tablepack import Packed, Piece
from content_core.chunking.base import Chunk

__all__ = [
    "LINE",
    "MIN_TOKEN_BUDGET",
    "PARAGRAPH",
    "SENTENCE",
    "SENTENCE_START",
    "WORD",
    "check_sizes",
    "spans_to_chunks",
]

# A blank line (possibly holding spaces) ends a paragraph; the cut falls after it.
PARAGRAPH = Pattern(re.compile(r"\n[ \t]*\n"), lookbehind=64)
LINE = Literal("\n")
# A sentence ends at . ! ? (optionally closed by a quote or bracket) before whitespace, or at
# a CJK full stop; the cut falls where the next sentence starts.
_SENTENCE_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+|[\u3002\uff01\uff1f]+\s*")
SENTENCE = Marked(".!?\u3002\uff01\uff1f", _SENTENCE_RE)
SENTENCE_START = SENTENCE
WORD = Literal(" ")
# A span must hold at least one character: a code point is at most four byte tokens.
MIN_TOKEN_BUDGET = 4


def check_sizes(chunk_size: int, chunk_overlap: int, *, minimum: int = 1) -> None:
    """Reject sizes a chunker cannot honour."""
    if chunk_size < minimum:
        raise ValueError(f"chunk_size must be at least {minimum}, got {chunk_size}")
    if chunk_overlap < 0:
        raise ValueError(f"chunk_overlap must not be negative, got {chunk_overlap}")
    if chunk_overlap >= chunk_size:
        raise ValueError(
            f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
        )


def spans_to_chunks(
    doc: CharDoc | TokenDoc,
    spans: Sequence[Packed],
    *,
    prefixes: Sequence[str] | None = None,
    prefix_sizes: Sequence[int] | None = None,
    breadcrumbs: Sequence[str] | None = None,
    metadata: dict[str, Any] | None = None,
    extra: Sequence[dict[str, Any]] | None = None,
) -> list[Chunk]:
    """Build the `Chunk` records for `spans` of `doc.text`, numbered in order.

    A token document records `metadata["token_count"]`: the exact count of the chunk's content,
    prefix included (a prefix ends with a newline and a span starts with a non-space, so the
    two counts add up exactly). A table's piece also records its table fields, and
    `prefix_chars`/`suffix_chars`: the characters of content before and after
    `text[source_start:source_end]` (breadcrumb and repeated header; closing markup).
    """
    text = doc.text
    total = len(spans)
    chunks: list[Chunk] = []
    exact = doc.exact_tokens
    for i, item in enumerate(spans):
        meta: dict[str, Any] = dict(metadata) if metadata else {}
        if extra is not None:
            meta.update(extra[i])
        prefix = prefixes[i] if prefixes is not None else ""
        if breadcrumbs is not None:
            meta["breadcrumb"] = breadcrumbs[i]
        head = tail = ""
        if isinstance(item, Piece):
            span, head, tail, size = item.span, item.head, item.tail, item.size
            meta.update(item.meta)
            meta["prefix_chars"] = len(prefix) + len(head)
            meta["suffix_chars"] = len(tail)
        else:
            span, size = item, item.size
        if exact:
            meta["token_count"] = size + (prefix_sizes[i] if prefix_sizes else 0)
        chunks.append(
            Chunk(
                content=prefix + head + text[span.start : span.end] + tail,
                index=i,
                total_chunks=total,
                source_start=span.start,
                source_end=span.end,
                overlap_tokens=span.overlap if exact else 0,
                metadata=meta,
            )
        )
    return chunks
