"""raw_files: one row per manifest entry, the media type sniffed once from the pinned bytes."""

from __future__ import annotations

from content_core.binary.sniff import sniff_file
from content_core.pipeline.checks import (
    FILE_KEYS,
    covers_rule,
    unique_rule,
)
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.store import (
    BATCHES,
    RAW_FILES,
    ContentStore,
    RawFileRow,
)

# The raw_files columns that are the manifest entry's own.
_FROM_MANIFEST = (
    "source_id",
    "path",
    "path_bytes",
    "batch_seq",
    "change",
    "size_bytes",
    "sha256",
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


def _build(batch: Batch) -> StageReport:
    return build_raw_files(batch.store, batch.batch_id)


STAGE = Stage(
    table=RAW_FILES,
    row=RawFileRow,
    build=_build,
    checks=(
        unique_rule(RAW_FILES, FILE_KEYS, "a file"),
        covers_rule(
            RAW_FILES, "cover_manifest", BATCHES, FILE_KEYS, "TRUE", "Every manifest entry"
        ),
    ),
    description=(
        "One row per file version in the batch (added, modified or deleted), keyed by "
        "source_id and path, with its SHA-256 (bytes pinned in the blob store at discovery) "
        "and the media type sniffed from its bytes. Written once per batch; "
        "`current_raw_files` keeps each file's latest version and drops deleted files."
    ),
)
