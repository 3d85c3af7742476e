"""agentic_extractions: the agent's validated output for every chunk (cached by content)."""

from __future__ import annotations

import json

from content_core.agents import (
    AgentConfig,
    ExtractionInput,
    run_extractions,
)
from content_core.pipeline.checks import (
    CHUNK_KEYS,
    ERROR_ROWS,
    covers_chunks,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.pool import (
    extract_offline,
)
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.pipeline.stages._documents import (
    _doc_keys,
)
from content_core.store import (
    AGENTIC_EXTRACTIONS,
    CHUNKS,
    AgenticExtractionRow,
    ContentStore,
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


def _build(batch: Batch) -> StageReport:
    return build_extractions(
        batch.store, batch.batch_id, batch.config.agent, pool=batch.config.processing
    )


STAGE = Stage(
    table=AGENTIC_EXTRACTIONS,
    row=AgenticExtractionRow,
    build=_build,
    deps=("chunks",),
    uses=("agent", "processing"),
    checks=(
        unique_rule(AGENTIC_EXTRACTIONS, (*CHUNK_KEYS, "schema_name"), "a chunk and schema"),
        covers_chunks(AGENTIC_EXTRACTIONS),
        failures_rule(AGENTIC_EXTRACTIONS, ERROR_ROWS, "chunks the agent failed on"),
    ),
    description=(
        "One row per chunk and extraction schema: the agent's validated JSON output, the "
        "model, the cache key, and the tokens it cost. Outputs are cached by chunk text, "
        "schema, model and prompt, so a rerun with nothing changed makes no agent call."
    ),
    retry=True,
)
