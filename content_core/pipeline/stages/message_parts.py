"""message_parts: each artifact of a batch as the parts of a message for a vision-capable
model (images as data URLs, PDF pages as images when asked, text otherwise)."""

from __future__ import annotations

from typing import Any

from content_core.agents.pages import PdfHandling
from content_core.agents.parts import is_picture
from content_core.extract import span_boxes, stored_text_boxes
from content_core.pipeline.checks import (
    ARTIFACT_KEYS,
    ERROR_ROWS,
    covers_documents,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.pool import PartsTask, parts_of_artifacts
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.sandbox import TaskFailure
from content_core.store import (
    MESSAGE_PARTS,
    NORMALISED_ARTIFACTS,
    ChunkBox,
    ContentStore,
    MessagePartRow,
)

__all__ = ["build_message_parts"]


def _wanted(row: dict[str, Any], handling: PdfHandling) -> bool:
    """An artifact that has parts: an image, a PDF whose pages are asked for, or text."""
    # Any: a normalised_artifacts row read back from Parquet.
    if row["error_type"]:
        return False
    media_type = str(row["media_type"])
    return (
        is_picture(media_type)
        or (media_type == "application/pdf" and handling.mode == "pages")
        or bool(row["text"])
    )


def build_message_parts(
    store: ContentStore,
    batch_id: str,
    handling: PdfHandling,
    *,
    pool: ProcessingConfig | None = None,
) -> StageReport:

    """message_parts: the parts of every artifact of `batch_id` that has an image or text (see
    `artifact_parts`), each artifact made once however many paths share it, in a worker under
    `handling.timeout_s`. An artifact whose parts cannot be made in time or at all is one row
    with its error and no part."""
    fingerprint = handling.fingerprint()
    artifacts: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for row in store.read_rows(NORMALISED_ARTIFACTS, batch_id).to_pylist():
        key = (row["source_id"], row["path"], row["artifact_id"])
        if _wanted(row, handling) and key not in seen:  # identical attachments: one artifact
            seen.add(key)
            artifacts.append(row)
    tasks = {a["artifact_id"]: _task(store, a, handling) for a in artifacts}
    made = dict(zip(tasks, parts_of_artifacts(
        list(tasks.values()), handling, pool=pool or ProcessingConfig()
    ), strict=True))
    rows: list[MessagePartRow] = []
    for artifact in artifacts:
        keys = {
            "batch_id": batch_id,
            "source_id": artifact["source_id"],
            "path": artifact["path"],
            "path_bytes": artifact["path_bytes"],
            "artifact_id": artifact["artifact_id"],
        }
        result = made[artifact["artifact_id"]]
        if isinstance(result, TaskFailure):
            rows.append(
                MessagePartRow(
                    **keys, part_index=0, part_type=None, page=None, text=None, image_url=None,
                    image_sha256=None, fingerprint=fingerprint,
                    error_type=result.error_type, error_message=result.message,
                )
            )
            continue
        lines = stored_text_boxes(artifact.get("text_boxes"))
        for index, item in enumerate(result):
            part = item.part
            boxes: tuple[ChunkBox, ...] = ()
            if lines and item.span is not None:
                start, end = item.span
                boxes = tuple(
                    ChunkBox(*box) for box in span_boxes(lines, start, end, artifact["text"])
                )
            rows.append(
                MessagePartRow(
                    **keys,
                    part_index=index,
                    part_type=part.type,
                    page=item.page,
                    text=part.text if part.type == "text" else None,
                    image_url=part.image_url.url if part.type == "image_url" else None,
                    image_sha256=item.image_sha256,
                    fingerprint=fingerprint,
                    boxes=boxes,
                )
            )
    count = store.write_rows(MESSAGE_PARTS, batch_id, rows)
    return StageReport(
        table=MESSAGE_PARTS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_type),
        figures={
            "pdf": handling.mode,
            "artifacts": len(made),
            "image_parts": sum(1 for r in rows if r.part_type == "image_url"),
            "text_parts": sum(1 for r in rows if r.part_type == "text"),
            "image_url_bytes": sum(len(r.image_url or "") for r in rows),
            "boxed_text_parts": sum(1 for r in rows if r.boxes),
        },
        preview_markdown=preview(rows, ["path", "part_index", "part_type", "page", "text"]),
    )


def _task(store: ContentStore, artifact: dict[str, Any], handling: PdfHandling) -> PartsTask:
    # Any: a normalised_artifacts row read back from Parquet.
    media_type = str(artifact["media_type"])
    needs_bytes = is_picture(media_type) or (
        media_type == "application/pdf" and handling.mode == "pages"
    )
    data = store.blobs.get(artifact["artifact_id"]) if needs_bytes else None
    pages = tuple((p["page"], p["start"], p["end"]) for p in artifact["pages"] or [])
    return data, media_type, artifact["text"], pages


def _build(batch: Batch) -> StageReport:
    return build_message_parts(
        batch.store, batch.batch_id, batch.config.message_parts, pool=batch.config.processing
    )


STAGE = Stage(
    table=MESSAGE_PARTS,
    row=MessagePartRow,
    build=_build,
    deps=("normalised_artifacts",),
    uses=("message_parts", "processing"),
    checks=(
        unique_rule(
            MESSAGE_PARTS, (*ARTIFACT_KEYS, "part_index"), "a part of one artifact of one file"
        ),
        covers_documents(MESSAGE_PARTS),
        failures_rule(MESSAGE_PARTS, ERROR_ROWS, "artifacts whose parts could not be made"),
    ),
    description=(
        "One row per part of each artifact's message for a vision-capable model, in order "
        "(`part_index`): an image as an `image_url` data URL (then its OCR text), a PDF's "
        'pages as images when `pdf` is "pages" (CONTENT_MESSAGE_PDF), any other text as a '
        "`text` part. Read an artifact's parts in order and send them as one user message."
    ),
)
