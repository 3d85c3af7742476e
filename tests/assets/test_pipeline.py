"""End to end: the sensor discovers a folder, the batch job runs in process, every view has
rows; reruns replace; the next tick carries exactly the next changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg

from content_assets.assets import ROWS_CURRENT, ROWS_WRITTEN
from content_assets.definitions import build_definitions
from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import SourceResource
from content_core.store import PIPELINE_TABLES, ContentStore
from tests.support.sensors import tick_sensor

VIEWS = [*PIPELINE_TABLES, *(f"current_{t}" for t in PIPELINE_TABLES if t != "compressed_contexts")]


def _run(
    defs: dg.Definitions, instance: dg.DagsterInstance, batch_id: str
) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def("ingest_batch_job")
    result = job.execute_in_process(instance=instance, partition_key=batch_id)
    assert result.success
    return result


def _snapshot(store: ContentStore) -> dict[str, list[tuple[object, ...]]]:
    snapshot = {}
    for table in PIPELINE_TABLES:
        rows = store.query(f"SELECT * FROM {table}").to_pylist()
        snapshot[table] = sorted(tuple(str(v) for v in row.values()) for row in rows)
    return snapshot


def _counts(
    store: ContentStore, result: dg.ExecuteInProcessResult, batch_id: str
) -> dict[str, tuple[int, int]]:
    """Each table's (rows written, rows current) as the batch's materialisations name them,
    checked against the table: the batch's rows and the current view's rows of its source."""
    (source_id,) = set(store.read_manifest(batch_id).column("source_id").to_pylist())
    counts = {}
    for table in PIPELINE_TABLES:
        (materialization,) = result.asset_materializations_for_node(table)
        meta = {k: v.value for k, v in materialization.metadata.items()}
        assert "dagster/row_count" not in meta  # Dagster reads it as the whole table's rows
        written = store.query(
            f"SELECT count(*) AS n FROM {table} WHERE batch_id = ?", [batch_id]
        ).column("n")[0].as_py()
        current = store.query(
            f"SELECT count(*) AS n FROM current_{table} WHERE source_id = ?", [source_id]
        ).column("n")[0].as_py()
        assert meta[ROWS_WRITTEN] == meta["dagster/partition_row_count"] == written, table
        assert meta[ROWS_CURRENT] == current, table
        counts[table] = (written, current)
    return counts


def test_sensor_batch_rerun_and_next_changes(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    handbook = (inbox / "handbook.pdf").read_bytes()
    (inbox / "truncated.pdf").write_bytes(handbook[: len(handbook) // 2])
    store = ContentStore(tmp_path / "store")
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(inbox),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )

    first = tick_sensor(defs, instance, None)
    assert len(first.run_requests or []) == 1
    batch = first.run_requests[0].partition_key
    assert first.run_requests[0].run_key == batch
    assert instance.get_dynamic_partitions(INGEST_BATCHES) == [batch]
    assert first.cursor is not None
    assert json.loads(first.cursor) == {"has_more": False, "pending": 1}

    result = _run(defs, instance, batch)
    for view in VIEWS:
        count = store.query(f"SELECT count(*) AS n FROM {view}").to_pylist()[0]["n"]
        assert count > 0, view
    bad = store.query(
        "SELECT error_type FROM normalised_artifacts WHERE path = 'truncated.pdf'"
    ).to_pylist()
    assert bad and bad[0]["error_type"] == "CorruptFileError"
    zipped = store.query(
        "SELECT filename FROM normalised_artifacts "
        "WHERE path = 'bundle.zip' AND len(derived_from) > 0"
    ).to_pylist()
    assert {"config.json", "readme.txt"} <= {Path(r["filename"]).name for r in zipped}
    # The first batch holds every file: what it wrote is what is current.
    first_counts = _counts(store, result, batch)
    assert all(written == current for written, current in first_counts.values())
    assert first_counts["chunks"][0] > 0

    before = _snapshot(store)
    _run(defs, instance, batch)
    assert _snapshot(store) == before

    quiet = tick_sensor(defs, instance, first.cursor)
    assert not quiet.run_requests

    (inbox / "added.txt").write_text(
        "A brand new file about invoices, sent to billing@example.org."
    )
    target = inbox / "plain.txt"
    stat = target.stat()
    target.write_text("Rewritten minutes that keep their old timestamp.")
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (inbox / "notes.md").unlink()
    second = tick_sensor(defs, instance, quiet.cursor)
    assert len(second.run_requests or []) == 1
    batch2 = second.run_requests[0].partition_key
    changes = store.query(
        "SELECT path, change FROM batches WHERE batch_id = ? ORDER BY path", [batch2]
    ).to_pylist()
    assert changes == [
        {"path": "added.txt", "change": "added"},
        {"path": "notes.md", "change": "deleted"},
        {"path": "plain.txt", "change": "modified"},
    ]
    counts = _counts(store, _run(defs, instance, batch2), batch2)
    # Three changed files were written; the files the batch left alone stay current.
    assert counts["raw_files"] == (3, len(list(inbox.iterdir())))
    assert counts["chunks"][0] < counts["chunks"][1]
    current = {
        r["path"]: r["batch_id"] for r in store.query("SELECT * FROM current_raw_files").to_pylist()
    }
    assert "notes.md" not in current
    assert current["added.txt"] == batch2 and current["plain.txt"] == batch2
    assert current["handbook.pdf"] == batch
    texts = store.query(
        "SELECT text FROM current_normalised_artifacts WHERE path = 'plain.txt'"
    ).to_pylist()
    assert texts == [{"text": "Rewritten minutes that keep their old timestamp."}]
    for view in ("current_chunks", "current_merged_extractions"):
        paths = {r["path"] for r in store.query(f"SELECT DISTINCT path FROM {view}").to_pylist()}
        assert "notes.md" not in paths and "added.txt" in paths


def test_sensor_waits_for_files_to_settle(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    """A file still being copied in (status changed within settle_s) waits for a later tick.

    No sleep and no race with the machine's load: the settle time is an hour, so the files
    just copied in are certainly within it; for the later tick the hour has passed, which is
    the same comparison (`ctime > now - settle_s`) as a settle time shortened by that hour.
    The moving clock itself is tested in tests/core/test_discovery.py."""
    store = ContentStore(tmp_path / "store")
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(inbox),
            "CONTENT_SOURCE_SETTLE_S": "3600",
        }
    )
    early = tick_sensor(defs, instance, None)
    assert not early.run_requests and early.cursor is not None
    assert json.loads(early.cursor)["has_more"] is True
    source = (defs.resources or {})["source"]
    an_hour_later = {
        **(defs.resources or {}),
        "source": SourceResource(uri=source.uri, settle_s=0.001),
    }
    later = tick_sensor(defs, instance, early.cursor, an_hour_later)
    assert len(later.run_requests or []) == 1
    entries = store.read_manifest(later.run_requests[0].partition_key).num_rows
    assert entries == len(list(inbox.iterdir()))
