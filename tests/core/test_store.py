"""The content store: atomic per-batch tables, idempotent rewrites, views, blobs."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb

from content_core.store import CHUNKS, RAW_FILES, ContentStore, compact_store


def _raw_row(batch: str, path: str, seq: int, change: str = "added") -> dict[str, object]:
    return {
        "batch_id": batch,
        "source_id": "src",
        "path": path,
        "batch_seq": seq,
        "change": change,
        "sha256": None if change == "deleted" else hashlib.sha256(path.encode()).hexdigest(),
    }


def test_views_exist_and_are_empty_before_any_batch(store: ContentStore) -> None:
    store.ensure_layout()
    for view in ("batches", "raw_files", "chunks", "current_merged_extractions"):
        assert store.query(f"SELECT count(*) AS n FROM {view}").to_pylist() == [{"n": 0}]


def test_rewriting_a_batch_replaces_its_rows(store: ContentStore) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1), _raw_row("b1", "b.txt", 1)])
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1), _raw_row("b1", "b.txt", 1)])
    assert store.query("SELECT count(*) AS n FROM raw_files").to_pylist() == [{"n": 2}]
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1)])
    assert store.query("SELECT path FROM raw_files").to_pylist() == [{"path": "a.txt"}]


def test_current_views_keep_latest_version_and_drop_deleted(store: ContentStore) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1), _raw_row("b1", "b.txt", 1)])
    store.write_rows(
        RAW_FILES,
        "b2",
        [_raw_row("b2", "a.txt", 2, "modified"), _raw_row("b2", "b.txt", 2, "deleted")],
    )
    chunk = {"source_id": "src", "artifact_id": "x", "chunk_id": "c", "content": "hi"}
    store.write_rows(CHUNKS, "b1", [{**chunk, "batch_id": "b1", "path": "a.txt"}])
    store.write_rows(CHUNKS, "b2", [{**chunk, "batch_id": "b2", "path": "a.txt"}])
    current = store.query("SELECT path, batch_id, change FROM current_raw_files").to_pylist()
    assert current == [{"path": "a.txt", "batch_id": "b2", "change": "modified"}]
    assert store.query("SELECT batch_id FROM current_chunks").to_pylist() == [{"batch_id": "b2"}]


def test_catalog_file_is_not_rewritten_while_views_are_unchanged(store: ContentStore) -> None:
    store.ensure_layout()
    before = store.catalog_path.stat().st_mtime_ns
    ContentStore(store.root).ensure_layout()
    assert store.catalog_path.stat().st_mtime_ns == before
    connection = duckdb.connect(str(store.catalog_path), read_only=True)
    views = {r[0] for r in connection.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    connection.close()
    assert {"raw_files", "current_raw_files", "current_chunks"} <= views


def test_no_temporary_file_is_left_or_visible(store: ContentStore) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1)])
    leftovers = [p for p in store.root.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_blobs_are_content_addressed_and_idempotent(store: ContentStore, tmp_path: Path) -> None:
    blob_id = store.blobs.put(b"hello")
    assert blob_id == hashlib.sha256(b"hello").hexdigest()
    assert store.blobs.put(b"hello") == blob_id
    source = tmp_path / "file.bin"
    source.write_bytes(b"x" * 3_000_000)
    streamed, size = store.blobs.put_file(source)
    assert size == 3_000_000 and store.blobs.get(streamed) == source.read_bytes()
    assert streamed == hashlib.sha256(source.read_bytes()).hexdigest()


def test_compaction_keeps_every_query_result_and_reruns_win(store: ContentStore) -> None:
    for seq in range(1, 6):
        batch = f"b{seq}"
        store.write_rows(
            RAW_FILES,
            batch,
            [_raw_row(batch, f"f{seq}.txt", seq), _raw_row(batch, "all.txt", seq, "modified")],
        )
    query = "SELECT path, batch_id, change FROM current_raw_files ORDER BY path"
    before = store.query(query).to_pylist()
    everything = store.query("SELECT * FROM raw_files ORDER BY batch_id, path").to_pylist()
    reports = {r.table: r for r in compact_store(store)}
    assert reports[RAW_FILES].files_before == 5 and reports[RAW_FILES].files_after == 1
    assert store.query(query).to_pylist() == before
    assert store.query("SELECT * FROM raw_files ORDER BY batch_id, path").to_pylist() == everything
    assert store.read_rows(RAW_FILES, "b3").num_rows == 2
    # A rerun of a compacted batch replaces its rows instead of adding to them.
    store.write_rows(RAW_FILES, "b3", [_raw_row("b3", "f3.txt", 3)])
    assert store.query("SELECT count(*) AS n FROM raw_files WHERE batch_id = 'b3'").to_pylist() == [
        {"n": 1}
    ]
    # A second compaction folds the first one's file and the rerun.
    compact_store(store)
    assert store.query("SELECT count(*) AS n FROM raw_files WHERE batch_id = 'b3'").to_pylist() == [
        {"n": 1}
    ]
    assert store.query("SELECT count(*) AS n FROM raw_files").to_pylist() == [{"n": 9}]


def test_a_crash_after_writing_the_compacted_file_doubles_nothing(store: ContentStore) -> None:
    """The state a SIGKILL between the new file's rename and the deletions leaves behind."""
    for seq in range(1, 4):
        store.write_rows(RAW_FILES, f"b{seq}", [_raw_row(f"b{seq}", f"f{seq}.txt", seq)])
    compact_store(store)
    packed = next((store.root / "tables" / RAW_FILES / "compacted").glob("part-*.parquet"))
    shutil.copy(packed, packed.with_name("part-99999999999999999999.parquet"))  # newer copy
    store.write_rows(RAW_FILES, "b2", [_raw_row("b2", "f2.txt", 2)])  # an undeleted fresh file
    assert store.query("SELECT count(*) AS n FROM raw_files").to_pylist() == [{"n": 3}]
