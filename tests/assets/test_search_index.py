"""The `search_index` asset in the real batch job, in process: a batch is searchable as soon
as its partition is materialised (the step, not a search, put it there), a deleted file is gone
after the next batch, and a second batch adds its own postings without rebuilding the first's."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb

from content_assets.definitions import build_definitions
from content_assets.partitions import INGEST_BATCHES
from content_core import Searcher
from content_core.discovery import discover_pending
from content_core.search.index import INDEX_FILE
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore


def _materialise(
    defs: dg.Definitions, instance: dg.DagsterInstance, store: ContentStore, inbox: Path
) -> dict[str, object]:
    """Discover `inbox` into one batch, run the batch job for it; the search_index metadata."""
    source = LocalFolderSource(LocalFolderSourceConfig(folder=inbox))
    [batch] = discover_pending(source, store, set(), time_budget_s=60, settle_s=0.0).discovered
    instance.add_dynamic_partitions(INGEST_BATCHES, [batch])
    job = defs.resolve_job_def("ingest_batch_job")
    result = job.execute_in_process(instance=instance, partition_key=batch)
    assert result.success
    [event] = result.asset_materializations_for_node("search_index")
    return {key: value.value for key, value in event.metadata.items()}


def _index(store: ContentStore, sql: str) -> list[tuple[object, ...]]:
    """Rows of `sql` on the index file as the step left it (no search, so no catch-up)."""
    connection = duckdb.connect(str(store.root / INDEX_FILE), read_only=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def _postings_of(store: ContentStore, path: str) -> list[tuple[object, ...]]:
    return _index(
        store,
        "SELECT p.* FROM index_postings p JOIN chunk_index c USING (docid) "
        f"WHERE c.path = '{path}' ORDER BY ALL",
    )


def test_each_batch_is_searchable_once_materialised_and_deletions_drop_out(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "okapi.txt").write_text("The okapi lives in the Ituri rainforest.")
    (inbox / "tapir.txt").write_text("A tapir browses along the riverbank at dusk.")
    defs = build_definitions({"CONTENT_STORE_DIR": str(store.root), "CONTENT_EMBEDDER": "off"})

    first = _materialise(defs, instance, store, inbox)
    assert first["full_build"] == 1 and first["docs_added"] == 2
    assert _index(store, "SELECT path FROM chunk_index ORDER BY path") == [
        ("okapi.txt",),
        ("tapir.txt",),
    ]
    tapir = _postings_of(store, "tapir.txt")
    assert tapir

    (inbox / "quokka.txt").write_text("A quokka smiles on Rottnest Island.")
    second = _materialise(defs, instance, store, inbox)
    # Only the new batch was applied: one document and its postings added, nothing removed,
    # and the first batch's postings are the very rows it wrote (same docids, same tf).
    assert (second["full_build"], second["batches_applied"]) == (0, 1)
    assert (second["docs_added"], second["docs_removed"], second["index_docs"]) == (1, 0, 3)
    assert _postings_of(store, "tapir.txt") == tapir
    assert [h.path for h in Searcher(store.root).search("quokka", 5, "bm25")] == ["quokka.txt"]

    (inbox / "okapi.txt").unlink()
    (inbox / "tapir.txt").write_text("A tapir swims across the river.")
    third = _materialise(defs, instance, store, inbox)
    assert (third["docs_added"], third["docs_removed"], third["index_docs"]) == (1, 2, 2)
    with Searcher(store.root) as searcher:
        assert searcher.search("okapi", 5, "bm25") == []
        assert searcher.search("browses", 5, "bm25") == []
        assert [h.path for h in searcher.search("tapir swims", 5, "bm25")] == ["tapir.txt"]
    batches = _index(store, "SELECT count(*) FROM index_batches")
    assert batches == [(3,)]
