"""document_similarity: each document's MinHash signature, and its near-duplicate pairs with
the batch's other documents and the store's current ones (`content_core.search.similarity`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from content_core.pipeline.checks import ARTIFACT_KEYS, covers_documents, unique_rule
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.pipeline.stages._documents import _doc_keys, _documents
from content_core.search.similarity import (
    SIMILARITY_FINGERPRINT,
    THRESHOLD,
    Signed,
    band_keys,
    near_pairs,
    shingles,
    signature_of,
)
from content_core.store import DOCUMENT_SIMILARITY, ContentStore, DocumentSimilarityRow
from content_core.store.locks import state_lock

__all__ = ["build_document_similarity"]

_PAIR_KEYS = (*ARTIFACT_KEYS, "other_source_id", "other_path", "other_artifact_id")


def build_document_similarity(store: ContentStore, batch_id: str) -> StageReport:
    """Write one signature row per document of `batch_id` and one row per near-duplicate pair
    (estimated Jaccard at least `THRESHOLD`) with another document of the batch (once per
    pair) or a document current in the store; the store's candidates are found by their LSH
    band keys in DuckDB, so only they are read, never every signature."""
    # One row per document: an artifact twice in one file (a member stored twice) is one.
    docs = list(
        {(d["source_id"], d["path"], d["artifact_id"]): d for d in _documents(store, batch_id)}
        .values()
    )
    signatures: dict[str, tuple[int, ...] | None] = {}
    counts: dict[str, int] = {}
    for doc in docs:
        if doc["artifact_id"] not in signatures:
            items = shingles(doc["text"])
            counts[doc["artifact_id"]] = len(items)
            signatures[doc["artifact_id"]] = signature_of(items)
    rows = [
        DocumentSimilarityRow(
            **_doc_keys(batch_id, doc),
            signature=signatures[doc["artifact_id"]],
            band_keys=band_keys(sig) if (sig := signatures[doc["artifact_id"]]) else (),
            shingles=counts[doc["artifact_id"]],
            other_batch_id=None,
            other_source_id=None,
            other_path=None,
            other_artifact_id=None,
            jaccard=None,
            fingerprint=SIMILARITY_FINGERPRINT,
        )
        for doc in docs
    ]
    new = [(doc, sig) for doc in docs if (sig := signatures[doc["artifact_id"]]) is not None]
    new.sort(key=lambda item: (item[0]["source_id"], item[0]["path"], item[0]["artifact_id"]))
    keys = sorted({key for row in rows for key in row.band_keys})
    # One batch at a time reads the store's signatures and writes its own, so of two batches
    # run at once (workers, a backfill) the later sees the earlier and records their pairs.
    with state_lock(store.root, DOCUMENT_SIMILARITY):
        old = _candidates(store, batch_id, keys)
        count = _write_pairs(store, batch_id, rows, new, old)
    return StageReport(
        table=DOCUMENT_SIMILARITY,
        batch_id=batch_id,
        rows=count,
        figures={
            "documents": len(docs),
            "pairs": len(rows) - len(docs),
            "store_candidates": len(old),
            "threshold": THRESHOLD,
        },
        preview_markdown=preview(
            [row for row in rows if row.other_path is not None],
            ["path", "other_path", "jaccard"],
        ),
    )


def _write_pairs(
    store: ContentStore,
    batch_id: str,
    rows: list[DocumentSimilarityRow],
    new: Sequence[tuple[Mapping[str, Any], tuple[int, ...]]],
    old: Sequence[Mapping[str, Any]],
) -> int:
    """Append to `rows` (the batch's signature rows) one row per near-duplicate pair of the
    batch's documents `new` with each other and with the store's candidates `old`; write."""
    signed = [Signed(doc["artifact_id"], sig) for doc, sig in new]
    signed_old = [Signed(doc["artifact_id"], doc["signature"]) for doc in old]
    others: list[Mapping[str, Any]] = [doc for doc, _ in new] + list(old)
    for a, b, score in near_pairs(signed, signed_old):
        doc, other = new[a][0], others[b]
        if (doc["source_id"], doc["path"]) == (other["source_id"], other["path"]):
            continue  # two artifacts of one file: one document to search
        rows.append(
            DocumentSimilarityRow(
                **_doc_keys(batch_id, doc),
                signature=None,
                band_keys=(),
                shingles=None,
                other_batch_id=other["batch_id"] if b >= len(new) else batch_id,
                other_source_id=other["source_id"],
                other_path=other["path"],
                other_artifact_id=other["artifact_id"],
                jaccard=round(score, 4),
                fingerprint=SIMILARITY_FINGERPRINT,
            )
        )
    return store.write_rows(DOCUMENT_SIMILARITY, batch_id, rows)


def _candidates(store: ContentStore, batch_id: str, keys: Sequence[int]) -> list[dict[str, Any]]:
    """The store's current documents of other batches (their signature rows) that share an
    LSH band key with one of `keys`."""
    if not keys:
        return []
    # Any: values of a row read back from Parquet, keyed by column name.
    found: list[dict[str, Any]] = store.query(
        "SELECT batch_id, source_id, path, artifact_id, any_value(signature) AS signature "
        f"FROM (SELECT *, unnest(band_keys) AS band_key FROM current_{DOCUMENT_SIMILARITY} "
        "WHERE other_path IS NULL AND signature IS NOT NULL AND fingerprint = ? "
        "AND batch_id <> ?) "
        "WHERE band_key IN (SELECT unnest(?::BIGINT[])) "
        "GROUP BY batch_id, source_id, path, artifact_id "
        "ORDER BY source_id, path, artifact_id",
        [SIMILARITY_FINGERPRINT, batch_id, list(keys)],
    ).to_pylist()
    for doc in found:
        doc["signature"] = tuple(doc["signature"])
    return found


def _build(batch: Batch) -> StageReport:
    return build_document_similarity(batch.store, batch.batch_id)


STAGE = Stage(
    table=DOCUMENT_SIMILARITY,
    row=DocumentSimilarityRow,
    build=_build,
    deps=("normalised_artifacts",),
    checks=(
        unique_rule(DOCUMENT_SIMILARITY, _PAIR_KEYS, "a document and its near-duplicate"),
        covers_documents(DOCUMENT_SIMILARITY),
    ),
    description=(
        "Near-duplicate documents: one row per document (artifact with text) holding the "
        "MinHash signature of its text (word 3-shingles), and one row per pair it makes with "
        f"another document whose estimated Jaccard similarity is at least {THRESHOLD}: the "
        "batch's documents are compared with each other and with the store's current ones "
        "(found by LSH band keys, without reading every signature). The current view keeps a "
        "pair while both files' versions are current. Search folds such documents into one "
        "hit ('also in')."
    ),
)
