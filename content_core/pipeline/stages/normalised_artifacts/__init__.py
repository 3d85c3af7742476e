"""The normalised_artifacts stage: fan every raw file out into artifacts with text, reusing
what an earlier batch already produced from the same bytes under the same configuration.

Its worker side lives here too: `worker` (`process_files`: each raw file in a pool worker,
under its time and memory limits) and `records` (how one file's artifacts become rows)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from importlib import metadata
from pathlib import PurePosixPath
from typing import Any

from content_core.pipeline.checks import (
    ARTIFACT_KEYS,
    ERROR_ROWS,
    FILE_KEYS,
    covers_rule,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.store import (
    NORMALISED_ARTIFACTS,
    RAW_FILES,
    SCHEMAS,
    ContentStore,
    FurnitureLine,
    NormalisedArtifactRow,
    OcrReading,
    PageRange,
    TextLineBox,
    rows_from_table,
)

__all__ = ["build_normalised_artifacts", "normalisation_fingerprint"]

# Worker failures (time limit, memory cap) may pass on a retry, so they are never reused.
_TRANSIENT_STAGE = "worker"


def normalisation_fingerprint(config: ProcessingConfig) -> str:
    """The configuration and code version that produced a row: equal means reusable."""
    try:
        version = metadata.version("content-pipeline")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return hashlib.sha256(f"{config.fingerprint()}:{version}".encode()).hexdigest()[:16]


def _artifact_row(
    record: ArtifactRecord, raw: Mapping[str, Any], fingerprint: str
) -> NormalisedArtifactRow:

    """The row of one record, under the raw file's path it was processed for."""
    # Any: values of a raw_files row read back from Parquet, keyed by column name.
    return NormalisedArtifactRow(
        batch_id=raw["batch_id"],
        source_id=raw["source_id"],
        path=raw["path"],
        path_bytes=raw["path_bytes"],
        artifact_id=record.artifact_id,
        derived_from=record.derived_from,
        kind=record.kind,
        media_type=record.media_type,
        filename=record.filename,
        title=record.title,
        page_count=record.page_count,
        text=record.text,
        pages=tuple(PageRange(p.page, p.start, p.end) for p in record.pages),
        text_status=record.text_status,
        error_type=record.error_type,
        error_message=record.error_message,
        stage=record.stage,
        notes=record.notes,
        ocr_engine=record.ocr_engine,
        ocr_confidence=record.ocr_confidence,
        ocr_pages=tuple(
            OcrReading(p.page, p.confidence, p.rotation, p.reason) for p in record.ocr_pages
        ),
        page_furniture=tuple(FurnitureLine(f.page, f.kind, f.text) for f in record.page_furniture),
        raw_sha256=raw["sha256"],
        fingerprint=fingerprint,
        text_boxes=tuple(TextLineBox(*box) for box in record.text_boxes),
    )


def _reusable(
    store: ContentStore, shas: list[str], fingerprint: str
) -> dict[str, list[NormalisedArtifactRow]]:
    """Rows an earlier normalisation made from these bytes, one (batch, path) group per sha."""
    if not shas:
        return {}
    columns = ", ".join(SCHEMAS[NORMALISED_ARTIFACTS].names)
    table = store.query(
        f"SELECT {columns} FROM {NORMALISED_ARTIFACTS} "
        "WHERE raw_sha256 IN (SELECT unnest(?::VARCHAR[])) AND fingerprint = ? "
        "QUALIFY dense_rank() OVER (PARTITION BY raw_sha256 ORDER BY batch_id DESC, path) = 1",
        [shas, fingerprint],
    )
    found: dict[str, list[NormalisedArtifactRow]] = {}
    for row in rows_from_table(NormalisedArtifactRow, table):
        found.setdefault(row.raw_sha256, []).append(row)
    return {
        sha: rows
        for sha, rows in found.items()
        if not any(r.stage == _TRANSIENT_STAGE for r in rows)
    }


def _for_path(
    artifact: NormalisedArtifactRow, batch_id: str, raw: Mapping[str, Any]
) -> NormalisedArtifactRow:
    """An artifact row under one path: rows belong to paths, so the file's own row is named
    after this path even when its bytes were normalised under another name (a copy, a rename)."""
    # Any: values of a raw_files row read back from Parquet, keyed by column name.
    return dataclasses.replace(
        artifact,
        batch_id=batch_id,
        source_id=raw["source_id"],
        path=raw["path"],
        path_bytes=raw["path_bytes"],
        filename=artifact.filename if artifact.derived_from else PurePosixPath(raw["path"]).name,
    )


def build_normalised_artifacts(
    store: ContentStore, batch_id: str, config: ProcessingConfig
) -> StageReport:
    """normalised_artifacts: the fan-out of every raw file, text extracted, failures as rows.

    Each raw file's sha256 and sniffed media type come from its raw_files row and are carried
    onto its rows, never hashed or sniffed again.
    """
    raw = [
        row
        for row in store.read_rows(RAW_FILES, batch_id).to_pylist()
        if row["change"] != "deleted"
    ]
    # The same bytes under two paths, or seen by an earlier batch, are normalised once.
    unique: dict[str, dict[str, Any]] = {}
    for row in raw:
        unique.setdefault(row["sha256"], row)
    fingerprint = normalisation_fingerprint(config)
    by_sha = _reusable(store, list(unique), fingerprint)
    todo = [sha for sha in unique if sha not in by_sha]
    inputs = [
        FileInput(
            key=sha,
            path=store.blobs.path(sha),
            filename=PurePosixPath(unique[sha]["path"]).name,
            declared_type=unique[sha]["declared_type"],
            sha256=sha,
            media_type=unique[sha]["media_type"],
        )
        for sha in todo
    ]
    for sha, records in zip(
        todo, process_files(inputs, config, blob_store=store.blobs), strict=True
    ):
        by_sha[sha] = [_artifact_row(record, unique[sha], fingerprint) for record in records]
    rows = [
        _for_path(artifact, batch_id, row) for row in raw for artifact in by_sha[row["sha256"]]
    ]
    count = store.write_rows(NORMALISED_ARTIFACTS, batch_id, rows)
    return StageReport(
        table=NORMALISED_ARTIFACTS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_type),
        figures={
            "files": len(raw),
            "processed": len(todo),
            "reused": len(unique) - len(todo),
            "with_text": sum(1 for r in rows if r.text),
            "characters": sum(len(r.text or "") for r in rows),
        },
        preview_markdown=preview(rows, ["path", "kind", "media_type", "page_count", "error_type"]),
    )


def _build(batch: Batch) -> StageReport:
    return build_normalised_artifacts(batch.store, batch.batch_id, batch.config.processing)


STAGE = Stage(
    table=NORMALISED_ARTIFACTS,
    row=NormalisedArtifactRow,
    build=_build,
    deps=("raw_files",),
    uses=("processing",),
    checks=(
        unique_rule(NORMALISED_ARTIFACTS, ARTIFACT_KEYS, "an artifact of one file"),
        covers_rule(
            NORMALISED_ARTIFACTS,
            "cover_raw_files",
            RAW_FILES,
            FILE_KEYS,
            "change <> 'deleted'",
            "Every raw file that was not deleted (a file that cannot be read is a failure row)",
        ),
        failures_rule(NORMALISED_ARTIFACTS, ERROR_ROWS, "artifacts with an error"),
    ),
    description=(
        "One row per artifact: the raw file itself, archive members, email bodies and "
        "attachments, converted images and Office renders, each with `derived_from` back to "
        "its raw file, its media type, page count and extracted text. A file that cannot be "
        "read is a row with `error_type` and `error_message` set; the rest of the batch goes "
        "on."
    ),
)
