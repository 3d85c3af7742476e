"""What the stages after normalisation share: the batch's documents (artifacts with text), the
key columns of a row about one document, and work done once per distinct artifact."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from content_core.store import (
    NORMALISED_ARTIFACTS,
    ContentStore,
)

R = TypeVar("R")


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
