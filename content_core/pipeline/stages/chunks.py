"""chunks: documents split to exact token budgets, with offsets, page and tokens."""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from content_core.chunking import ChunkingConfig
from content_core.extract import TextBox, span_boxes
from content_core.pipeline.checks import (
    CHUNK_KEYS,
    ERROR_ROWS,
    covers_documents,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.pool import (
    chunk_documents,
)
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.pipeline.stages._documents import (
    _doc_keys,
    _documents,
    _once_per_artifact,
)
from content_core.sandbox import TaskFailure
from content_core.store import (
    CHUNKS,
    ChunkBox,
    ChunkRow,
    ContentStore,
)


def _page_of(pages: Sequence[Mapping[str, int]], offset: int) -> int | None:
    if not pages:
        return None
    starts = [p["start"] for p in pages]
    index = max(bisect.bisect_right(starts, offset) - 1, 0)
    return pages[index]["page"]


def _text_boxes(doc: Mapping[str, Any]) -> list[TextBox]:
    """The artifact's line boxes (none in rows written before text_boxes existed)."""
    return [
        TextBox(b["start"], b["end"], b["page"], b["x0"], b["y0"], b["x1"], b["y1"],
                tuple(b["edges"] or ()))
        for b in doc.get("text_boxes") or ()
    ]  # fmt: skip


def _chunk_boxes(
    lines: Sequence[TextBox], text: str, start: int, end: int
) -> tuple[ChunkBox, ...]:
    return tuple(ChunkBox(*box) for box in span_boxes(lines, start, end, text))


def _chunk_id(artifact_id: str, fingerprint: str, index: int) -> str:
    return hashlib.sha256(f"{artifact_id}:{fingerprint}:{index}".encode()).hexdigest()[:32]


def build_chunks(
    store: ContentStore,
    batch_id: str,
    config: ChunkingConfig,
    *,
    pool: ProcessingConfig | None = None,
) -> StageReport:

    """chunks: every document split by the configured chunker, with offsets, page and tokens.
    The chunkers run in the worker pool of `pool` (normalisation's settings; defaults if
    None)."""
    fingerprint = config.fingerprint()
    rows: list[ChunkRow] = []
    seen: set[tuple[str, str, str]] = set()
    docs = []
    for doc in _documents(store, batch_id):
        key = (doc["source_id"], doc["path"], doc["artifact_id"])
        if key in seen:  # one artifact reached twice inside one file (identical attachments)
            continue
        seen.add(key)
        docs.append(doc)
    # Each document is chunked in a worker under config.timeout_s (see pipeline/pool.py).
    settings = pool or ProcessingConfig()
    results = _once_per_artifact(
        docs, lambda texts: chunk_documents(texts, config, pool=settings)
    )
    for doc, chunks in zip(docs, results, strict=True):
        if isinstance(chunks, TaskFailure):
            rows.append(_chunk_failure_row(batch_id, doc, fingerprint, config, chunks))
            continue
        pages = doc["pages"] or []
        lines = _text_boxes(doc)
        for chunk in chunks:
            metadata = dict(chunk.metadata)
            if doc["title"]:  # searched with every chunk (search.terms)
                metadata["title"] = doc["title"]
            rows.append(
                ChunkRow(
                    **_doc_keys(batch_id, doc),
                    chunk_id=_chunk_id(doc["artifact_id"], fingerprint, chunk.index),
                    index=chunk.index,
                    total_chunks=chunk.total_chunks,
                    content=chunk.content,
                    source_start=chunk.source_start,
                    source_end=chunk.source_end,
                    token_count=metadata.get("token_count"),
                    overlap_tokens=chunk.overlap_tokens,
                    page_start=_page_of(pages, chunk.source_start),
                    # The last character's page: a chunk that runs onto page 2 ends there.
                    page_end=_page_of(pages, max(chunk.source_end - 1, chunk.source_start)),
                    breadcrumb=metadata.get("breadcrumb"),
                    chunker=config.chunker,
                    chunker_fingerprint=fingerprint,
                    metadata=json.dumps(metadata, sort_keys=True, default=str),
                    boxes=_chunk_boxes(lines, doc["text"], chunk.source_start, chunk.source_end),
                )
            )
    count = store.write_rows(CHUNKS, batch_id, rows)
    tokens = [r.token_count or 0 for r in rows]
    return StageReport(
        table=CHUNKS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_type),
        figures={
            "strategy": config.chunker,
            "chunk_size": config.chunk_size,
            "documents": len(seen),
            "max_chunk_tokens": max(tokens, default=0),
            "total_tokens": sum(tokens),
        },
        preview_markdown=preview(
            rows, ["path", "index", "token_count", "page_start", "page_end", "content"]
        ),
    )


# The columns of a chunk's content: null on the row of a document that could not be chunked.
# Any: spread into ChunkRow, whose fields type the columns (each one nullable).
_NO_CHUNK_CONTENT: dict[str, Any] = dict.fromkeys(
    (
        "index", "total_chunks", "content", "source_start", "source_end", "token_count",
        "overlap_tokens", "page_start", "page_end", "breadcrumb", "metadata",
    ),
    None,
)


def _chunk_failure_row(
    batch_id: str,
    doc: Mapping[str, Any],
    fingerprint: str,
    config: ChunkingConfig,
    failure: TaskFailure,
) -> ChunkRow:
    """The one chunks row of a document that could not be chunked: its keys, no content."""
    return ChunkRow(
        **_doc_keys(batch_id, doc),
        chunk_id=_chunk_id(doc["artifact_id"], fingerprint, -1),
        **_NO_CHUNK_CONTENT,
        chunker=config.chunker,
        chunker_fingerprint=fingerprint,
        error_type=failure.error_type,
        error_message=failure.message,
    )


def _build(batch: Batch) -> StageReport:
    return build_chunks(
        batch.store, batch.batch_id, batch.config.chunking, pool=batch.config.processing
    )


STAGE = Stage(
    table=CHUNKS,
    row=ChunkRow,
    build=_build,
    deps=("normalised_artifacts",),
    uses=("chunking", "processing"),
    checks=(
        unique_rule(CHUNKS, CHUNK_KEYS, "a chunk of one file"),
        covers_documents(CHUNKS),
        failures_rule(CHUNKS, ERROR_ROWS, "documents that could not be chunked"),
    ),
    description=(
        "One row per chunk of every artifact with text: content, exact character offsets into "
        "the artifact text (`source_start`, `source_end`), page, breadcrumb, exact cl100k "
        "token count and the chunker's fingerprint. Chunk ids are stable across reruns."
    ),
)
