"""merged_extractions: one row per document and schema, merging its chunks' outputs."""

from __future__ import annotations

from typing import Any

from content_core.agents import (
    AgentConfig,
    ExtractionRecord,
    merge_extractions,
)
from content_core.pipeline.checks import (
    ARTIFACT_KEYS,
    covers_rule,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.pipeline.stages._documents import (
    _doc_keys,
)
from content_core.store import (
    AGENTIC_EXTRACTIONS,
    MERGED_EXTRACTIONS,
    ContentStore,
    MergedExtractionRow,
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


def _build(batch: Batch) -> StageReport:
    return build_merged_extractions(batch.store, batch.batch_id, batch.config.agent)


STAGE = Stage(
    table=MERGED_EXTRACTIONS,
    row=MergedExtractionRow,
    build=_build,
    deps=("agentic_extractions",),
    uses=("agent",),
    checks=(
        unique_rule(MERGED_EXTRACTIONS, (*ARTIFACT_KEYS, "schema_name"), "a document and schema"),
        covers_rule(
            MERGED_EXTRACTIONS,
            "cover_extractions",
            AGENTIC_EXTRACTIONS,
            (*ARTIFACT_KEYS, "schema_name"),
            "TRUE",
            "Every document and schema with chunk extractions",
        ),
        failures_rule(MERGED_EXTRACTIONS, "error_count > 0", "documents with a failed chunk"),
    ),
    description=(
        "One row per document and schema: the per-chunk outputs merged by the configured "
        "strategy, with provenance saying which chunk gave which item."
    ),
    finishes=True,
)
