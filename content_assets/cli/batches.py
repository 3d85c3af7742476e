"""`content-pipeline status` and `retry`: the state of every batch, read from the store (its
manifests, finished markers and worker-failure rows) and the Dagster instance's runs."""

import os
import sys
from collections import Counter
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import dagster as dg

from content_assets.cli.progress import IngestView, embeddings_line
from content_assets.cli.query import StoreNotFoundError, existing_store, store_location
from content_assets.cli.runs import (
    STAGES,
    TABLE_STAGES,
    batch_job,
    check_executor,
    chosen_executor,
    current_rows,
    run_batches,
    run_failure,
)
from content_assets.distributed.executors import EXECUTOR_ENV
from content_assets.distributed.sensor_ticks import last_sensor_tick
from content_assets.jobs import ingest_batch_job
from content_assets.sensors import source_sensor
from content_assets.state import dagster_home
from content_assets.triggers import PARTITION_TAG, fail_dead_runs
from content_core.embeddings import EmbedderConfig
from content_core.pipeline import all_stages
from content_core.store import CHUNK_EMBEDDINGS, NORMALISED_ARTIFACTS, ContentStore
from content_core.store.storage import LocalStorage

State = Literal["pending", "running", "failed", "done"]
STATES: tuple[State, ...] = ("pending", "running", "failed", "done")
# Rows a worker wrote when processing did not finish (crash, time or memory limit): the batch
# has run, but those files need another run.
_WORKER_STAGE = "worker"
# The tables whose rows record a failure's cause (`error_type`), in pipeline order: the
# artifacts' first, so a file that could not be read leads the `errors:` line.
_ERROR_TABLES = [
    stage.table
    for stage in all_stages()
    if stage.row is not None and "error_type" in {f.name for f in fields(stage.row)}
]
_FAILED_RUN = {dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
_ACTIVE_RUN = {
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
}


@dataclass(frozen=True, slots=True)
class BatchState:
    """Where one batch stands, and why when it failed."""

    batch_id: str
    source_id: str
    state: State
    reason: str | None
    files: int


def _worker_rows(store: ContentStore) -> dict[str, Counter[str]]:
    """Per batch, the error types of rows whose processing did not finish."""
    rows = store.query(
        f"SELECT batch_id, error_type, count(*) AS n FROM {NORMALISED_ARTIFACTS} "
        "WHERE stage = ? GROUP BY ALL",
        [_WORKER_STAGE],
    ).to_pylist()
    found: dict[str, Counter[str]] = {}
    for row in rows:
        found.setdefault(row["batch_id"], Counter())[row["error_type"]] += row["n"]
    return found


def batch_states(instance: dg.DagsterInstance, store: ContentStore) -> list[BatchState]:
    """Every batch of the store, oldest first, with its state.

    failed: its latest run failed or was canceled, or it finished with rows a worker left
    unfinished (`WorkerCrashedError`, `WorkerTimeoutError`, ...); running: a run is under way
    (a run whose worker process died is marked failed first); done: every stage ran; pending:
    discovered, no run yet.
    """
    batch_ids = store.list_batches()
    latest: dict[str, dg.DagsterRun] = {}
    if batch_ids:
        records = instance.get_run_records(
            filters=dg.RunsFilter(job_name=ingest_batch_job.name, tags={PARTITION_TAG: batch_ids})
        )
        for record in sorted(records, key=lambda r: r.create_timestamp):
            latest[record.dagster_run.tags.get(PARTITION_TAG, "")] = record.dagster_run
    unfinished = _worker_rows(store) if batch_ids else {}
    sources = {
        row["batch_id"]: (row["source_id"], row["n"])
        for row in store.query(
            "SELECT batch_id, any_value(source_id) AS source_id, count(*) AS n "
            "FROM batches GROUP BY batch_id"
        ).to_pylist()
    }
    states = []
    for batch_id in batch_ids:
        source_id, files = sources.get(batch_id, ("?", 0))
        run = latest.get(batch_id)
        if run is not None and run.status in _ACTIVE_RUN and fail_dead_runs(instance, run):
            run = instance.get_run_by_id(run.run_id) or run
        state: State
        reason = None
        if run is not None and run.status in _ACTIVE_RUN:
            state = "running"
        elif run is not None and run.status in _FAILED_RUN:
            state, reason = "failed", run_failure(instance, run)
        elif store.is_finished(batch_id) and batch_id in unfinished:
            counts = unfinished[batch_id]
            state = "failed"
            reason = "unfinished rows: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items()))
        elif store.is_finished(batch_id):
            state = "done"
        else:
            state = "pending"
        states.append(BatchState(batch_id, source_id, state, reason, files))
    return states


def failed_rows(store: ContentStore, source_id: str) -> dict[str, Counter[str]]:
    """Per table, the current rows of `source_id` that record a failure, by error type."""
    sql = " UNION ALL ".join(
        f"SELECT '{table}' AS stage, error_type, count(*) AS n FROM current_{table} "
        "WHERE source_id = ? AND coalesce(error_type, '') <> '' GROUP BY error_type"
        for table in _ERROR_TABLES
    )
    found: dict[str, Counter[str]] = {}
    for row in store.query(sql, [source_id] * len(_ERROR_TABLES)).to_pylist():
        found.setdefault(row["stage"], Counter())[row["error_type"]] += row["n"]
    return {table: found[table] for table in _ERROR_TABLES if table in found}


def errors_line(failed: dict[str, Counter[str]]) -> str:
    """`1 EmptyFileError, 2 CorruptFileError` (the artifacts' failures), then other tables'
    failures named by table; `none` when no current row failed."""
    parts = []
    for table, counts in failed.items():
        text = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        parts.append(text if table == NORMALISED_ARTIFACTS else f"{table}: {text}")
    return "; ".join(parts) or "none"


def _vectors(store: ContentStore) -> int:
    rows = store.query(
        f"SELECT count(*) AS n FROM current_{CHUNK_EMBEDDINGS} WHERE embedding IS NOT NULL"
    ).to_pylist()
    return int(rows[0]["n"]) if rows else 0


def _last_tick(instance: dg.DagsterInstance) -> str:
    tick = last_sensor_tick(instance, source_sensor.name)
    if tick is None:
        return "never (the sensor runs under `make dev` (dg dev) or the daemon)"
    when = datetime.fromtimestamp(tick.timestamp, UTC).isoformat(timespec="seconds")
    note = f": {tick.skip_reason}" if tick.skip_reason else ""
    return f"{when} {tick.status.lower()}{note}"


def _size(store: ContentStore) -> int:
    if not isinstance(store.storage, LocalStorage):
        return sum(item.size_bytes for item in store.storage.list(""))
    total = 0
    root = store.root
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:  # replaced or compacted away while we walked
                continue
    return total


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def _open(store_arg: Path | str | None) -> ContentStore | None:
    """The store (a folder, or `s3://` with its catalog in this machine's work folder)."""
    try:
        existing_store(store_arg)
        return ContentStore(store_location(store_arg))
    except StoreNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def status_command(store_arg: Path | str | None) -> int:
    """Print batches per source (by state, failed ones with their reason), files and rows per
    source, the sensor's last tick and the store's size."""
    store = _open(store_arg)
    if store is None:
        return 2
    dagster_home()
    with dg.DagsterInstance.get() as instance:
        states = batch_states(instance, store)
        tick = _last_tick(instance)
    print(f"store:       {store.location}  ({_human(_size(store))})")
    print(f"last tick:   {tick}")
    print(embeddings_line(EmbedderConfig.from_environ(), _vectors(store)))
    for source_id in sorted({s.source_id for s in states}):
        mine = [s for s in states if s.source_id == source_id]
        counts = Counter(s.state for s in mine)
        rows = current_rows(store, source_id)
        print()
        print(f"source {source_id}")
        print("  batches:   " + ", ".join(f"{counts[state]} {state}" for state in STATES))
        print(f"  files:     {rows.get('raw_files', 0)} current")
        print("  rows:      " + ", ".join(f"{s} {rows.get(s, 0)}" for s in TABLE_STAGES))
        indexed = rows.get("search_index")
        note = " chunks in the search index" if isinstance(indexed, int) else ""
        print(f"  indexed:   {indexed}{note}")
        print(f"  errors:    {errors_line(failed_rows(store, source_id))}")
        for state in mine:
            if state.state == "failed":
                print(f"  failed     {state.batch_id}: {state.reason}")
            elif state.state in ("pending", "running"):
                print(f"  {state.state:<10} {state.batch_id} ({state.files} files)")
    if not states:
        print("no batches yet")
    return 0


def retry_command(
    store_arg: Path | str | None,
    batch_ids: list[str],
    verbose: bool,
    executor_flag: str | None = None,
) -> int:
    """Run the given batches again (default: every failed one); their rows are replaced: in
    this process, or submitted to the instance's run queue (`--executor celery`)."""
    try:
        executor = chosen_executor(executor_flag, os.environ)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    store = _open(store_arg)
    if store is None:
        return 2
    dagster_home()
    environ = {**os.environ, "CONTENT_STORE_DIR": store.location, EXECUTOR_ENV: executor}
    job = batch_job(environ)
    with dg.DagsterInstance.get() as instance:
        if (refused := check_executor(instance, executor)) is not None:
            print(f"error: {refused}", file=sys.stderr)
            return 2
        states = {s.batch_id: s for s in batch_states(instance, store)}
        unknown = [b for b in batch_ids if b not in states]
        if unknown:
            print(f"error: no batch {', '.join(unknown)} in {store.location}", file=sys.stderr)
            return 2
        chosen = batch_ids or [b for b, s in states.items() if s.state == "failed"]
        if not chosen:
            print("no failed batch to retry")
            return 0
        for batch_id in chosen:
            print(f"retry {batch_id}: {states[batch_id].reason or states[batch_id].state}")
        files = sum(states[b].files for b in chosen)
        view = IngestView(STAGES, files)
        try:
            outcomes = run_batches(
                instance,
                job,
                store,
                chosen,
                view,
                verbose=verbose,
                executor=executor,
                environ=environ,
            )
        finally:
            view.close()
    view.summary(current_rows(store, None))
    return 1 if any(not o.success for o in outcomes) else 0
