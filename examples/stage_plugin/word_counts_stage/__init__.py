"""An example stage plug-in: `word_counts`, the number of words of each artifact with text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from content_core.pipeline import Batch, Stage, StageReport
from content_core.pipeline.checks import (
    ARTIFACT_KEYS,
    covers_documents,
    failures_rule,
    unique_rule,
)
from content_core.store import NORMALISED_ARTIFACTS, ArtifactRow, Col

__all__ = ["STAGE", "WordCountRow"]

TABLE = "word_counts"


@dataclass(frozen=True, slots=True, kw_only=True)
class WordCountRow(ArtifactRow):
    """One row per artifact with text: how many words it has."""

    TABLE: ClassVar[str] = TABLE
    ONE_ROW_PER: ClassVar[str] = "artifact with text"

    words: Annotated[int, Col("words of the artifact's text (white space separated)")]


def build_word_counts(batch: Batch) -> StageReport:
    """word_counts: the words of every artifact of the batch that has text."""
    store = batch.store
    artifacts = store.read_rows(NORMALISED_ARTIFACTS, batch.batch_id).to_pylist()
    rows = [
        WordCountRow(
            batch_id=batch.batch_id,
            source_id=artifact["source_id"],
            path=artifact["path"],
            path_bytes=artifact["path_bytes"],
            artifact_id=artifact["artifact_id"],
            words=len(artifact["text"].split()),
        )
        for artifact in artifacts
        if artifact["text"] and not artifact["error_type"]
    ]
    count = store.write_rows(TABLE, batch.batch_id, rows)
    return StageReport(
        table=TABLE,
        batch_id=batch.batch_id,
        rows=count,
        figures={"words": sum(row.words for row in rows)},
    )


STAGE = Stage(
    table=TABLE,
    row=WordCountRow,
    build=build_word_counts,
    deps=(NORMALISED_ARTIFACTS,),
    checks=(
        unique_rule(TABLE, ARTIFACT_KEYS, "an artifact of one file"),
        covers_documents(TABLE),
        failures_rule(TABLE, "words < 0", "artifacts with a negative count"),
    ),
    description="One row per artifact with text: how many words it has.",
)
