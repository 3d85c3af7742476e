"""Running batches through the Dagster instance for `ingest` and `retry`: the job in this
process, or each batch's run submitted to the instance's run queue for the daemon and the
Celery workers (`--executor celery`); its stage events turned into progress, Dagster's console
log quiet unless asked."""

import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import dagster as dg

from content_assets.assets import ALL_ASSETS, ROWS_WRITTEN
from content_assets.cli.progress import IngestView
from content_assets.definitions import build_definitions, build_resources
from content_assets.distributed.executors import EXECUTOR_ENV
from content_assets.jobs import ingest_batch_job
from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import ContentStoreResource, SourceResource
from content_assets.triggers import worker_tags
from content_core.pipeline import all_stages
from content_core.search.index import indexed_chunks
from content_core.store import ContentStore

STAGES = [asset.key.to_user_string() for asset in ALL_ASSETS]
# The stages that write a table (search_index writes the index file beside the catalog).
TABLE_STAGES = [stage.table for stage in all_stages() if stage.row is not None]
# The stage that writes the index file beside the catalog: its current rows are the index's.
_SEARCH_INDEX = "search_index"
# How often the stage events of a running batch are read for the progress bars.
_POLL_S = 0.25

Executor = Literal["in_process", "celery"]
# How long `--executor celery` waits for a submitted run: the instance's run monitoring fails
# a run that runs longer (max_runtime_seconds in deploy/dagster-postgres.yaml).
SUBMITTED_TIMEOUT_S = 7200.0
# A submitted run still queued after this long: say that a daemon must be running.
_QUEUED_HINT_S = 60.0


def batch_job(environ: Mapping[str, str]) -> dg.JobDefinition:
    """The ingest batch job, its resources configured from `environ`."""
    return build_definitions(environ).resolve_job_def(ingest_batch_job.name)


def chosen_executor(flag: str | None, environ: Mapping[str, str]) -> Executor:
    """Where batch runs execute: the `--executor` flag, else CONTENT_EXECUTOR, else here.

    Raises:
        ValueError: a name other than `in_process` or `celery`.
    """
    name = flag or environ.get(EXECUTOR_ENV) or "in_process"
    if name == "in_process":
        return "in_process"
    if name == "celery":
        return "celery"
    raise ValueError(f"executor {name!r}: expected in_process or celery")


def check_executor(instance: dg.DagsterInstance, executor: Executor) -> str | None:
    """Why `instance` cannot run batches on `executor`, or None when it can."""
    if executor == "in_process":
        return None
    from content_assets.distributed.submit import RunQueueError, check_run_queue

    try:
        check_run_queue(instance)
    except RunQueueError as exc:
        return str(exc)
    return None


def resource_config(environ: Mapping[str, str]) -> dict[str, object]:
    """Run config naming the store of `environ`, and its source when it names one: a submitted
    run executes in the daemon's process and on the workers, whose own environment may name
    others (without CONTENT_SOURCE here, the daemon's source stands)."""
    resources = build_resources(environ)
    store, source = resources["store"], resources["source"]
    assert isinstance(store, ContentStoreResource) and isinstance(source, SourceResource)
    # A folder by its absolute path: the daemon's runs start in another folder.
    where = store.store_dir if "://" in store.store_dir else str(Path(store.store_dir).resolve())
    config: dict[str, object] = {"store": {"config": {"store_dir": where}}}
    if environ.get("CONTENT_SOURCE") or environ.get("CONTENT_SOURCE_DIR"):
        config["source"] = {"config": {"uri": source.uri}}
    return config


def log_config(verbose: bool) -> dict[str, object]:
    """Run config of Dagster's console logger: every event with -v, else nothing (the CLI
    prints each stage's counts, and a failed run's reason, itself)."""
    level = "DEBUG" if verbose else "CRITICAL"
    return {"loggers": {"console": {"config": {"log_level": level}}}}


def run_failure(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str:
    """Why `run` failed, on one line: the failed step and the innermost error's first line."""
    head = f"run {run.run_id[:8]} {run.status.value.lower()}"
    for kind in (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE):
        for record in instance.all_logs(run.run_id, of_type=kind):
            event = record.dagster_event
            error = getattr(event.event_specific_data, "error", None) if event else None
            while error is not None and error.cause is not None:
                error = error.cause  # Dagster wraps the asset's exception
            text = (error.message if error is not None else record.message) or ""
            if text.strip():
                step = f" in {record.step_key}" if record.step_key else ""
                return f"{head}{step}: {text.strip().splitlines()[0]}"
    return head


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """How one batch run ended."""

    batch_id: str
    run_id: str
    success: bool
    seconds: float


class _StageEvents:
    """Reads a run's materialisation events while it executes and reports each stage once."""

    def __init__(self, instance: dg.DagsterInstance, run_id: str, files: int, view: IngestView):
        self._instance, self._run_id, self._files, self._view = instance, run_id, files, view
        self._cursor: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> "_StageEvents":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        self.read()  # whatever arrived after the last poll

    def _poll(self) -> None:
        while not self._stop.wait(_POLL_S):
            self.read()

    def read(self) -> None:
        """Report the stages materialised since the last read."""
        with self._lock:
            connection = self._instance.get_records_for_run(
                self._run_id,
                cursor=self._cursor,
                of_type=dg.DagsterEventType.ASSET_MATERIALIZATION,
            )
            self._cursor = connection.cursor
            for record in connection.records:
                materialization = record.asset_materialization
                if materialization is None:
                    continue
                meta = materialization.metadata
                rows = meta[ROWS_WRITTEN].value if ROWS_WRITTEN in meta else 0
                failures = meta["failures"].value if "failures" in meta else 0
                self._view.stage_done(
                    materialization.asset_key.to_user_string(),
                    self._files,
                    int(rows),  # type: ignore[arg-type]  # an int metadata value
                    int(failures),  # type: ignore[arg-type]  # an int metadata value
                )


def run_batches(
    instance: dg.DagsterInstance,
    job: dg.JobDefinition,
    store: ContentStore,
    batch_ids: list[str],
    view: IngestView,
    *,
    verbose: bool,
    executor: Executor = "in_process",
    environ: Mapping[str, str] | None = None,
) -> list[BatchOutcome]:
    """Run the job for each batch, reporting stages to `view`: in turn in this process, or
    (`celery`) all submitted to the instance's run queue at once, then waited for in turn;
    `environ` names the store and the source the submitted runs use."""
    known = set(instance.get_dynamic_partitions(INGEST_BATCHES))
    missing = [b for b in batch_ids if b not in known]
    if missing:  # a batch discovered under another instance (another DAGSTER_HOME)
        instance.add_dynamic_partitions(INGEST_BATCHES, missing)
    submitted: dict[str, str] = {}
    if executor == "celery":
        from content_assets.distributed.submit import submit_batch_run

        config = {**log_config(verbose), "resources": resource_config(environ or {})}
        submitted = {b: submit_batch_run(instance, job, b, config) for b in batch_ids}
        view.line(f"submitted {len(submitted)} run(s) to the instance's run queue")
    deadline = time.monotonic() + SUBMITTED_TIMEOUT_S
    outcomes = []
    for number, batch_id in enumerate(batch_ids, start=1):
        changes = store.read_manifest(batch_id).column("change").to_pylist()
        summary = ", ".join(f"{changes.count(c)} {c}" for c in ("added", "modified", "deleted"))
        view.line(f"[{number}/{len(batch_ids)}] batch {batch_id}: {summary}")
        # Dagster's own run ids are random UUIDs; one is made here so the events can be read
        # while the run executes.
        run_id = submitted.get(batch_id) or str(uuid.uuid4())
        started = time.monotonic()
        with _StageEvents(instance, run_id, len(changes), view):
            if submitted:
                success, reason = _wait_for(instance, run_id, deadline, view)
            else:
                success = job.execute_in_process(
                    instance=instance,
                    partition_key=batch_id,
                    run_id=run_id,
                    run_config=log_config(verbose),
                    tags=worker_tags(),
                    raise_on_error=False,
                ).success
                reason = ""
        outcome = BatchOutcome(batch_id, run_id, success, time.monotonic() - started)
        if outcome.success:
            view.line(f"    run {run_id[:8]} ok in {outcome.seconds:.1f}s")
        elif not reason:
            run = instance.get_run_by_id(run_id)
            reason = run_failure(instance, run) if run else f"run {run_id[:8]} failed"
        if not outcome.success:
            view.line(f"    FAILED in {outcome.seconds:.1f}s: {reason}")
        if outcome.success:
            view.report.batches_ok += 1
        else:
            view.report.batches_failed.append(batch_id)
        outcomes.append(outcome)
    return outcomes


def _wait_for(
    instance: dg.DagsterInstance, run_id: str, deadline: float, view: IngestView
) -> tuple[bool, str]:
    """Poll the submitted run until it ends or `deadline` passes: whether it succeeded, and
    why not when it is left running (empty when the run's own failure says why)."""
    hinted_at = time.monotonic() + _QUEUED_HINT_S
    while True:
        run = instance.get_run_by_id(run_id)
        if run is None:
            return False, f"run {run_id[:8]} is gone from the instance"
        if run.is_finished:
            return run.status == dg.DagsterRunStatus.SUCCESS, ""
        if time.monotonic() > deadline:
            return False, (
                f"run {run_id[:8]} still {run.status.value.lower()} after "
                f"{SUBMITTED_TIMEOUT_S:.0f} s (left to the daemon)"
            )
        if run.status == dg.DagsterRunStatus.QUEUED and time.monotonic() > hinted_at:
            view.line(
                f"    run {run_id[:8]} still queued after {_QUEUED_HINT_S:.0f} s: is "
                "dagster-daemon running on this instance, with CONTENT_EXECUTOR=celery?"
            )
            hinted_at = float("inf")
        time.sleep(_POLL_S * 2)


def current_rows(store: ContentStore, source_id: str | None) -> dict[str, int | str]:
    """Rows of each stage's current_* view (of one source when given), and the chunks the
    search index holds (`search_index`: "no index yet" before its first batch)."""
    where = "" if source_id is None else " WHERE source_id = ?"
    sql = " UNION ALL ".join(
        f"SELECT '{stage}' AS stage, count(*) AS n FROM current_{stage}{where}"
        for stage in TABLE_STAGES
    )
    params = [] if source_id is None else [source_id] * len(TABLE_STAGES)
    rows: dict[str, int | str] = {
        row["stage"]: row["n"] for row in store.query(sql, params).to_pylist()
    }
    indexed = indexed_chunks(store, source_id)
    rows[_SEARCH_INDEX] = "no index yet" if indexed is None else indexed
    return rows
