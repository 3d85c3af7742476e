"""compressed_contexts: one row per document, its text fitted to the token budget."""

from __future__ import annotations

from content_core.compression import CompressionConfig, CompressionResult
from content_core.pipeline.checks import (
    ARTIFACT_KEYS,
    ERROR_ROWS,
    covers_documents,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.pool import (
    compress_documents,
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
    COMPRESSED_CONTEXTS,
    CompressedContextRow,
    ContentStore,
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
                encoding=config.encoding_name,
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


def _build(batch: Batch) -> StageReport:
    return build_compressed_contexts(
        batch.store, batch.batch_id, batch.config.compression, pool=batch.config.processing
    )


STAGE = Stage(
    table=COMPRESSED_CONTEXTS,
    row=CompressedContextRow,
    build=_build,
    deps=("normalised_artifacts",),
    uses=("compression", "processing"),
    checks=(
        unique_rule(COMPRESSED_CONTEXTS, ARTIFACT_KEYS, "a document of one file"),
        covers_documents(COMPRESSED_CONTEXTS),
        failures_rule(COMPRESSED_CONTEXTS, ERROR_ROWS, "documents not compressed"),
    ),
    description=(
        "One row per document (artifact with text): its text compressed to `max_tokens` by "
        "the configured strategy, with the token counts before and after."
    ),
)
