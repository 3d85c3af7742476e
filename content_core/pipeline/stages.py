"""The pipeline stages, one function each: read a batch's upstream rows from the store,
call the library, write the stage's table for the batch, report what happened.

Dagster assets call these one-to-one; `run_batch` (content_core.pipeline.run) calls them in
order in this process.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from content_core.agents import (
    AgentConfig,
    ExtractionInput,
    ExtractionRecord,
    merge_extractions,
    run_extractions,
)
from content_core.binary.sniff import sniff_file
from content_core.chunking import ChunkingConfig
from content_core.compression import CompressionConfig, CompressionResult
from content_core.pipeline.pool import (
    chunk_documents,
    compress_documents,
    extract_offline,
)
from content_core.pipeline.processing import ProcessingConfig
from content_core.pipeline.report import StageReport, preview
from content_core.sandbox import TaskFailure
from content_core.store import (
    AGENTIC_EXTRACTIONS,
    CHUNKS,
    COMPRESSED_CONTEXTS,
    MERGED_EXTRACTIONS,
    NORMALISED_ARTIFACTS,
    RAW_FILES,
    AgenticExtractionRow,
    ChunkRow,
    CompressedContextRow,
    ContentStore,
    MergedExtractionRow,
    RawFileRow,
)

__all__ = [
    "build_chunks",
    "build_compressed_contexts",
    "build_extractions",
    "build_merged_extractions",
    "build_raw_files",
]

R = TypeVar("R")


# The raw_files columns that are the manifest entry's own.
_FROM_MANIFEST = (
    "source_id", "path", "path_bytes", "batch_seq", "change", "size_bytes", "sha256",
    "declared_type",
)


def build_raw_files(store: ContentStore, batch_id: str) -> StageReport:
    """raw_files: one row per manifest entry, with the media type sniffed from the pinned bytes
    (the one sniff of the raw file: later stages carry it)."""
    rows = []
    for entry in store.read_manifest(batch_id).to_pylist():
        media_type = None
        if entry["sha256"] is not None:
            media_type = sniff_file(store.blobs.path(entry["sha256"]), entry["path"])
        rows.append(
            RawFileRow(
                **{column: entry[column] for column in _FROM_MANIFEST},
                batch_id=batch_id,
                media_type=media_type,
                # The bytes were fetched into the blob store at discovery: a rerun keeps it.
                fetched_at=entry["discovered_at"],
            )
        )
    count = store.write_rows(RAW_FILES, batch_id, rows)
    changes = {c: sum(1 for r in rows if r.change == c) for c in ("added", "modified", "deleted")}
    return StageReport(
        table=RAW_FILES,
        batch_id=batch_id,
        rows=count,
        figures={**changes, "bytes": sum(r.size_bytes or 0 for r in rows)},
        preview_markdown=preview(rows, ["path", "change", "media_type", "size_bytes"]),
    )


def _documents(store: ContentStore, batch_id: str) -> list[dict[str, Any]]:
    """Artifacts of the batch that carry text: the documents later stages work on."""
    rows = store.read_rows(NORMALISED_ARTIFACTS, batch_id).to_pylist()
    return [r for r in rows if r["text"] and not r["error_type"]]


def _doc_keys(batch_id: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    """The key columns of a row about one document (an artifact under one path)."""
    # Any: values of a row read back from Parquet, keyed by column name.
    return {
        "batch_id": batch_id,
        "source_id": doc["source_id"],
        "path": doc["path"],
        "path_bytes": doc["path_bytes"],
        "artifact_id": doc["artifact_id"],
    }


def _once_per_artifact(
    docs: Sequence[Mapping[str, Any]], run: Callable[[list[str]], Sequence[R]]
) -> list[R]:
    """`run` over the texts of `docs`, each distinct artifact once (copies of a file share the
    work; rows stay per path), the results in the order of `docs`."""
    texts = {doc["artifact_id"]: doc["text"] for doc in docs}
    results = dict(zip(texts, run(list(texts.values())), strict=True))
    return [results[doc["artifact_id"]] for doc in docs]


def _page_of(pages: Sequence[Mapping[str, int]], offset: int) -> int | None:
    if not pages:
        return None
    starts = [p["start"] for p in pages]
    index = max(bisect.bisect_right(starts, offset) - 1, 0)
    return pages[index]["page"]


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


def build_compressed_contexts(
    store: ContentStore,
    batch_id: str,
    config: CompressionConfig,
    *,
    pool: ProcessingConfig | None = None,
) -> StageReport:
    """compressed_contexts: one row per document, its text fitted to the token budget.
    Compression runs in the worker pool of `pool`, as chunking does."""
    rows: list[CompressedContextRow] = []
    docs = _documents(store, batch_id)
    # Each document is compressed in a worker under config.timeout_s (see pipeline/pool.py).
    settings = pool or ProcessingConfig()
    results = _once_per_artifact(
        docs, lambda texts: compress_documents(texts, config, pool=settings)
    )
    for doc, result in zip(docs, results, strict=True):
        failed = result if isinstance(result, TaskFailure) else None
        done = result if isinstance(result, CompressionResult) else None
        rows.append(
            CompressedContextRow(
                **_doc_keys(batch_id, doc),
                strategy=done.strategy if done else config.strategy,
                max_tokens=config.max_tokens,
                tokens_before=done.tokens_before if done else None,
                tokens_after=done.tokens_after if done else None,
                text=done.text if done else None,
                error_type=failed.error_type if failed else None,
                error_message=failed.message if failed else None,
            )
        )
    count = store.write_rows(COMPRESSED_CONTEXTS, batch_id, rows)
    return StageReport(
        table=COMPRESSED_CONTEXTS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_type),
        figures={
            "strategy": config.strategy,
            "max_tokens": config.max_tokens,
            "tokens_before": sum(r.tokens_before or 0 for r in rows),
            "tokens_after": sum(r.tokens_after or 0 for r in rows),
        },
        preview_markdown=preview(rows, ["path", "tokens_before", "tokens_after", "text"]),
    )


def build_extractions(
    store: ContentStore,
    batch_id: str,
    config: AgentConfig,
    *,
    pool: ProcessingConfig | None = None,
) -> StageReport:
    """agentic_extractions: the agent's validated output for every chunk (cached by content).
    The offline agent (CPU-bound) runs in the worker pool of `pool`, one document per task;
    an LLM agent waits on its endpoint, concurrently, in this process."""
    # A document that could not be chunked has one failure row and nothing to extract from.
    chunk_rows = [r for r in store.read_rows(CHUNKS, batch_id).to_pylist() if not r["error_type"]]
    items = [
        ExtractionInput(
            chunk_id=r["chunk_id"],
            artifact_id=r["artifact_id"],
            path=r["path"],
            content=r["content"],
            index=r["index"],
            total_chunks=r["total_chunks"],
            metadata=json.loads(r["metadata"] or "{}"),
        )
        for r in chunk_rows
    ]
    cache_dir = store.layout.cache("extractions")
    if config.kind == "offline":
        run = extract_offline(items, config, cache_dir=cache_dir, pool=pool or ProcessingConfig())
    else:
        run = run_extractions(items, config, cache_dir=cache_dir)
    # Records come back in input order: each carries its chunk row's keys.
    rows = [
        AgenticExtractionRow(
            **_doc_keys(batch_id, chunk),
            # Every other field of the record is a column; `cached` is run metadata.
            **record.model_dump(exclude={"artifact_id", "path", "cached"}),
        )
        for chunk, record in zip(chunk_rows, run.records, strict=True)
    ]
    count = store.write_rows(AGENTIC_EXTRACTIONS, batch_id, rows)
    return StageReport(
        table=AGENTIC_EXTRACTIONS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_type),
        figures={
            "agent": config.kind,
            "model": rows[0].model if rows else (config.model or config.kind),
            "calls": run.calls,
            "cache_hits": run.cache_hits,
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
        },
        preview_markdown=preview(rows, ["path", "schema_name", "model", "output_json"]),
    )


def build_merged_extractions(
    store: ContentStore, batch_id: str, config: AgentConfig
) -> StageReport:
    """merged_extractions: one row per document and schema, merging its chunks' outputs."""
    extraction_rows = store.read_rows(AGENTIC_EXTRACTIONS, batch_id).to_pylist()
    fields = set(ExtractionRecord.model_fields)
    records = [
        ExtractionRecord(**{k: v for k, v in r.items() if k in fields}) for r in extraction_rows
    ]
    # One merged row per (path, artifact, schema) in order of first appearance: each carries
    # the keys of its group's first row.
    firsts: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in extraction_rows:
        firsts.setdefault((r["path"], r["artifact_id"], r["schema_name"]), r)
    merged = merge_extractions(records, config)
    rows = [
        MergedExtractionRow(
            **_doc_keys(batch_id, first), **m.model_dump(exclude={"artifact_id", "path"})
        )
        for first, m in zip(firsts.values(), merged, strict=True)
    ]
    count = store.write_rows(MERGED_EXTRACTIONS, batch_id, rows)
    store.mark_finished(batch_id)
    return StageReport(
        table=MERGED_EXTRACTIONS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_count),
        figures={"strategy": config.merge_strategy, "documents": count},
        preview_markdown=preview(rows, ["path", "schema_name", "chunk_count", "output_json"]),
    )
