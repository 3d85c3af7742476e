"""chunks: documents split to exact token budgets, with offsets, page and tokens."""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from content_core.chunking import Chunk, Chunker, ChunkingConfig
from content_core.extract import TextBox, span_boxes, stored_text_boxes
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
from content_core.sandbox import TaskFailure, run_task
from content_core.store import (
    CHUNKS,
    ChunkBox,
    ChunkRow,
    ContentStore,
)
from content_core.tokens import count_tokens


def _page_of(pages: Sequence[Mapping[str, int]], offset: int) -> int | None:
    if not pages:
        return None
    starts = [p["start"] for p in pages]
    index = max(bisect.bisect_right(starts, offset) - 1, 0)
    return pages[index]["page"]


def _chunk_boxes(
    lines: Sequence[TextBox], text: str, start: int, end: int
) -> tuple[ChunkBox, ...]:
    return tuple(ChunkBox(*box) for box in span_boxes(lines, start, end, text))


def _chunk_id(artifact_id: str, fingerprint: str, index: int) -> str:
    return hashlib.sha256(f"{artifact_id}:{fingerprint}:{index}".encode()).hexdigest()[:32]


def chunker_fingerprint(chunker: Chunker) -> str:
    """A short stable hash of a chunker instance's class and public settings (16 hex
    digits), standing for `ChunkingConfig.fingerprint()` in the ids of the chunks it makes."""
    settings = {
        key: value
        for key, value in sorted(getattr(chunker, "__dict__", {}).items())
        if not key.startswith("_")
    }
    payload = json.dumps(
        [type(chunker).__module__, type(chunker).__qualname__, settings],
        sort_keys=True,
        # A setting that is an object (a tokenizer): its encoding, else its class.
        default=lambda value: getattr(value, "encoding_name", None) or type(value).__qualname__,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def build_chunks(
    store: ContentStore,
    batch_id: str,
    config: ChunkingConfig,
    *,
    pool: ProcessingConfig | None = None,
    chunker: Chunker | None = None,
) -> StageReport:

    """chunks: every document split by the configured chunker, with offsets, page and tokens.
    The chunkers run in the worker pool of `pool` (normalisation's settings; defaults if
    None). A caller's `chunker` instance (`RAG(chunker=...)`) chunks instead of `config`'s,
    in this process and without the time budget: its code and state stay the caller's."""
    if chunker is not None:
        return _build_with(store, batch_id, config, chunker)
    fingerprint = config.fingerprint()
    docs = _distinct_documents(store, batch_id)
    # Each document is chunked in a worker under config.timeout_s (see pipeline/pool.py).
    settings = pool or ProcessingConfig()
    results = _once_per_artifact(
        docs, lambda texts: chunk_documents(texts, config, pool=settings)
    )
    return _write(
        store, batch_id, config, config.chunker, fingerprint, docs, results, None, False
    )


def _build_with(
    store: ContentStore, batch_id: str, config: ChunkingConfig, chunker: Chunker
) -> StageReport:
    """`build_chunks` with a caller's chunker instance."""
    name = getattr(chunker, "name", None)
    label = name if isinstance(name, str) and name else type(chunker).__name__
    docs = _distinct_documents(store, batch_id)
    results = _once_per_artifact(docs, lambda texts: [run_task(chunker.chunk, t) for t in texts])
    size = getattr(chunker, "chunk_size", None)
    return _write(
        store,
        batch_id,
        config,
        label,
        chunker_fingerprint(chunker),
        docs,
        results,
        size if isinstance(size, int) else None,
        True,
    )


def _distinct_documents(store: ContentStore, batch_id: str) -> list[dict[str, Any]]:
    seen: set[tuple[str, str, str]] = set()
    docs = []
    for doc in _documents(store, batch_id):
        key = (doc["source_id"], doc["path"], doc["artifact_id"])
        if key in seen:  # one artifact reached twice inside one file (identical attachments)
            continue
        seen.add(key)
        docs.append(doc)
    return docs


def _write(
    store: ContentStore,
    batch_id: str,
    config: ChunkingConfig,
    chunker_name: str,
    fingerprint: str,
    docs: Sequence[Mapping[str, Any]],
    results: Sequence[list[Chunk] | TaskFailure],
    chunk_size: int | None,
    recount: bool,
) -> StageReport:
    """The rows of `results` (chunks or a failure per document of `docs`), written. A caller's
    chunker (`recount`) has its chunks counted here, in `config.encoding_name` (it may
    size in characters, or count in another encoding), so every row has its exact count in
    the encoding its `encoding` column names."""
    rows: list[ChunkRow] = []
    table_chunks = table_row_splits = 0
    for doc, chunks in zip(docs, results, strict=True):
        if isinstance(chunks, TaskFailure):
            rows.append(
                _chunk_failure_row(batch_id, doc, fingerprint, chunker_name, chunks, config)
            )
            continue
        pages = doc["pages"] or []
        lines = stored_text_boxes(doc.get("text_boxes"))
        for chunk in chunks:
            metadata = dict(chunk.metadata)
            # Table chunks, and pieces of rows too large for the budget (cut on purpose).
            table_chunks += bool(metadata.get("table"))
            table_row_splits += bool(metadata.get("table_row_split"))
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
                    token_count=(
                        count_tokens(chunk.content, config.encoding_name)
                        if recount
                        else metadata.get("token_count")
                    ),
                    overlap_tokens=chunk.overlap_tokens,
                    page_start=_page_of(pages, chunk.source_start),
                    # The last character's page: a chunk that runs onto page 2 ends there.
                    page_end=_page_of(pages, max(chunk.source_end - 1, chunk.source_start)),
                    breadcrumb=metadata.get("breadcrumb"),
                    chunker=chunker_name,
                    chunker_fingerprint=fingerprint,
                    metadata=json.dumps(metadata, sort_keys=True, default=str),
                    encoding=config.encoding_name,
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
            "strategy": chunker_name,
            "chunk_size": config.chunk_size if chunk_size is None else chunk_size,
            "documents": len(docs),
            "max_chunk_tokens": max(tokens, default=0),
            "total_tokens": sum(tokens),
            "table_chunks": table_chunks,
            "table_row_splits": table_row_splits,
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
    chunker_name: str,
    failure: TaskFailure,
    config: ChunkingConfig,
) -> ChunkRow:
    """The one chunks row of a document that could not be chunked: its keys, no content."""
    return ChunkRow(
        **_doc_keys(batch_id, doc),
        chunk_id=_chunk_id(doc["artifact_id"], fingerprint, -1),
        **_NO_CHUNK_CONTENT,
        chunker=chunker_name,
        chunker_fingerprint=fingerprint,
        error_type=failure.error_type,
        error_message=failure.message,
        encoding=config.encoding_name,
    )


def _build(batch: Batch) -> StageReport:
    return build_chunks(
        batch.store,
        batch.batch_id,
        batch.config.chunking,
        pool=batch.config.processing,
        chunker=batch.chunker,
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
        "the artifact text (`source_start`, `source_end`), page, breadcrumb, exact "
        "token count and the chunker's fingerprint. Chunk ids are stable across reruns."
    ),
)
