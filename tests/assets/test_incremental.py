"""Incremental ingestion through the real sensor, schedule and jobs: capped batches and a tiny
cursor at 3,000 files, renames that re-extract nothing, deletions that leave every current view,
failed runs retried under a new run key, backfills kept free by the content-hash caches, and a
compaction job that changes no query result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg

from content_assets.assets import ROWS_WRITTEN
from content_assets.definitions import build_definitions
from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import SourceResource
from content_core.store import PIPELINE_TABLES, ContentStore
from tests.support.opened import files_opened_under
from tests.support.sensors import tick_sensor

CURRENT_VIEWS = [f"current_{t}" for t in PIPELINE_TABLES]
# Timestamps of when a row was written are not content.
_VOLATILE = {"fetched_at", "discovered_at"}


def _defs(store: ContentStore, folder: Path) -> dg.Definitions:
    return build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(folder),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )


def _resources(defs: dg.Definitions, **source: Any) -> dict[str, Any]:
    resources = dict(defs.resources or {})
    if source:
        current = resources["source"]
        resources["source"] = SourceResource(
            uri=current.uri, settle_s=current.settle_s, **source
        )
    return resources


def _run(
    defs: dg.Definitions, instance: dg.DagsterInstance, request: dg.RunRequest, ok: bool = True
) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def("ingest_batch_job")
    result = job.execute_in_process(
        instance=instance,
        partition_key=request.partition_key,
        tags=dict(request.tags),
        raise_on_error=False,
    )
    assert result.success is ok
    return result


def _figures(result: dg.ExecuteInProcessResult, node: str) -> dict[str, Any]:
    (materialization,) = result.asset_materializations_for_node(node)
    return {k: v.value for k, v in materialization.metadata.items()}


def snapshot(store: ContentStore, views: list[str]) -> dict[str, list[tuple[str, ...]]]:
    """Every row of every view, order-free, without write timestamps."""
    result = {}
    for view in views:
        rows = store.query(f"SELECT * FROM {view}").to_pylist()
        result[view] = sorted(
            tuple(f"{k}={v}" for k, v in row.items() if k not in _VOLATILE) for row in rows
        )
    return result


def test_three_thousand_files_capped_batches_small_cursor_quick_quiettick_sensor(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    folder = tmp_path / "many"
    for number in range(3000):
        sub = folder / f"d{number // 500}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{number:05d}.txt").write_text(f"note {number} for customer {number % 11}\n")
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, folder)
    resources = _resources(defs, max_batch_files=500)
    # One tick normally; a loaded machine may spend a tick's discovery budget (40 s) first,
    # and then the next ticks go on where it stopped, as the daemon's would.
    first = tick_sensor(defs, instance, None, resources)
    for _ in range(20):
        assert first.cursor is not None and len(first.cursor.encode()) < 300
        if not json.loads(first.cursor)["has_more"]:
            break
        first = tick_sensor(defs, instance, first.cursor, resources)
    keys = [r.run_key for r in first.run_requests or []]
    batches = instance.get_dynamic_partitions(INGEST_BATCHES)
    assert len(batches) == 6 and keys == batches
    assert [len(store.read_manifest(b)) for b in batches] == [500] * 6
    with files_opened_under(folder) as opened:
        quiet = tick_sensor(defs, instance, first.cursor, resources)
    # Nothing new: the same run keys, which the sensor daemon never launches twice.
    assert instance.get_dynamic_partitions(INGEST_BATCHES) == batches
    assert [r.run_key for r in quiet.run_requests or []] == keys
    assert not quiet.dynamic_partitions_requests
    assert opened == []  # quick because it reads no file (no wall-clock bound on a shared box)
    assert quiet.cursor is not None and len(quiet.cursor.encode()) < 300


def test_rename_reextracts_nothing_and_deletions_leave_every_current_view(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, inbox)
    first = tick_sensor(defs, instance, None)
    (request,) = first.run_requests or []
    _run(defs, instance, request)
    quiet = tick_sensor(defs, instance, first.cursor)
    assert not quiet.run_requests and quiet.cursor is not None

    (inbox / "archive").mkdir()
    (inbox / "plain.txt").rename(inbox / "archive" / "minutes.txt")
    (inbox / "notes.md").unlink()
    second = tick_sensor(defs, instance, quiet.cursor)
    (request,) = second.run_requests or []
    changes = store.query(
        "SELECT path, change FROM batches WHERE batch_id = ? ORDER BY path",
        [request.partition_key],
    ).to_pylist()
    assert changes == [
        {"path": "archive/minutes.txt", "change": "added"},
        {"path": "notes.md", "change": "deleted"},
        {"path": "plain.txt", "change": "deleted"},
    ]
    result = _run(defs, instance, request)
    figures = _figures(result, "normalised_artifacts")
    assert (figures["processed"], figures["reused"]) == (0, 1)  # the renamed bytes: reused
    assert _figures(result, "agentic_extractions")["calls"] == 0
    for view in CURRENT_VIEWS:
        paths = {r["path"] for r in store.query(f"SELECT DISTINCT path FROM {view}").to_pylist()}
        assert not paths & {"plain.txt", "notes.md"}, view
        if view not in ("current_compressed_contexts",):
            assert "archive/minutes.txt" in paths, view
    assert not tick_sensor(defs, instance, second.cursor).run_requests


def test_failed_run_is_requested_again_under_a_new_run_key(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, inbox)
    first = tick_sensor(defs, instance, None)
    (request,) = first.run_requests or []
    batch = request.partition_key
    # Break the batch for real: one pinned blob goes missing, so raw_files cannot read it.
    sha = store.read_manifest(batch).to_pylist()[0]["sha256"]
    data = store.blobs.get(sha)
    store.blobs.path(sha).unlink()
    _run(defs, instance, request, ok=False)
    retry = tick_sensor(defs, instance, first.cursor)
    (again,) = retry.run_requests or []
    assert (again.partition_key, again.run_key) == (batch, f"{batch}#attempt-2")
    assert not retry.dynamic_partitions_requests
    store.blobs.put(data)
    _run(defs, instance, again)
    assert store.is_finished(batch)
    assert not tick_sensor(defs, instance, retry.cursor).run_requests


def test_retries_stop_after_the_attempt_limit(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, inbox)
    cursor = None
    keys = []
    sha = None
    for _ in range(4):
        tick = tick_sensor(defs, instance, cursor)
        cursor = tick.cursor
        if not tick.run_requests:
            break
        (request,) = tick.run_requests
        keys.append(request.run_key)
        if sha is None:
            sha = store.read_manifest(request.partition_key).to_pylist()[0]["sha256"]
            store.blobs.path(sha).unlink()
        _run(defs, instance, request, ok=False)
    batch = keys[0]
    assert keys == [batch, f"{batch}#attempt-2", f"{batch}#attempt-3"]


def _scheduled(
    schedule: dg.ScheduleDefinition, context: dg.ScheduleEvaluationContext
) -> list[dg.RunRequest]:
    result = schedule(context)
    return [] if isinstance(result, dg.SkipReason) else list(result)


def test_schedule_discovers_and_backfill_reprocesses_for_free(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, inbox)
    schedule = defs.resolve_schedule_def("hourly_ingest_batch_job_schedule")
    context = dg.build_schedule_context(instance=instance, resources=defs.resources)
    requests = _scheduled(schedule, context)
    assert len(requests) == 1
    assert instance.get_dynamic_partitions(INGEST_BATCHES) == [requests[0].partition_key]
    first = _run(defs, instance, requests[0])
    assert _figures(first, "normalised_artifacts")["processed"] > 0
    assert _figures(first, "agentic_extractions")["calls"] > 0
    (inbox / "later.txt").write_text("A later note about the quarterly invoice run.")
    context = dg.build_schedule_context(instance=instance, resources=defs.resources)
    later = _scheduled(schedule, context)
    assert len(later) == 1 and later[0].partition_key != requests[0].partition_key
    _run(defs, instance, later[0])
    quiet = dg.build_schedule_context(instance=instance, resources=defs.resources)
    assert _scheduled(schedule, quiet) == []

    before = snapshot(store, list(PIPELINE_TABLES))
    # A backfill of every partition, as the UI launches it: one run per batch.
    for batch in instance.get_dynamic_partitions(INGEST_BATCHES):
        rerun = _run(defs, instance, dg.RunRequest(partition_key=batch))
        normalised = _figures(rerun, "normalised_artifacts")
        extractions = _figures(rerun, "agentic_extractions")
        assert normalised["processed"] == 0 and normalised["reused"] > 0
        assert extractions["calls"] == 0
        assert extractions["cache_hits"] == _figures(rerun, "chunks")[ROWS_WRITTEN]
    assert snapshot(store, list(PIPELINE_TABLES)) == before


def test_compaction_job_changes_no_query_result(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, inbox)
    cursor = None
    for step in range(3):
        (inbox / f"extra-{step}.txt").write_text(f"Extra note number {step} about invoices.")
        if step == 2:
            (inbox / "notes.md").unlink()
        tick = tick_sensor(defs, instance, cursor)
        cursor = tick.cursor
        for request in tick.run_requests or []:
            _run(defs, instance, request)
    views = [*PIPELINE_TABLES, *CURRENT_VIEWS]
    before = snapshot(store, views)
    files_before = len(list((store.root / "tables").rglob("batch=*/data.parquet")))
    job = defs.resolve_job_def("compact_store_job")
    assert job.execute_in_process(instance=instance).success
    assert snapshot(store, views) == before
    files_after = len(list((store.root / "tables").rglob("batch=*/data.parquet")))
    assert files_before > 6 * 3 - 1 and files_after == len(PIPELINE_TABLES)  # the empty ones
    # The compacted store keeps working: a new change lands as a per-batch file again.
    (inbox / "after.txt").write_text("Written after compaction.")
    tick = tick_sensor(defs, instance, cursor)
    for request in tick.run_requests or []:
        _run(defs, instance, request)
    paths = {r["path"] for r in store.query("SELECT path FROM current_raw_files").to_pylist()}
    assert "after.txt" in paths and "notes.md" not in paths
    assert json.loads(tick.cursor or "{}")["has_more"] is False
