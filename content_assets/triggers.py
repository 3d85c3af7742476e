"""What the sensor, the schedule and the CLI share: one discovery call, the run requests of the
batches that still need a run (retries included), and the tiny cursor."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
from typing import TYPE_CHECKING

import dagster as dg

from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import ContentStoreResource, SourceResource
from content_core import discovery
from content_core.sandbox import is_process_alive

if TYPE_CHECKING:
    from content_core.discovery import PendingBatches

logger = logging.getLogger(__name__)

# Under the sensor's 60 s evaluation limit, with room for Dagster's own work.
TICK_BUDGET_S = 40.0
# Runs a trigger launches for one batch before leaving it to a person (a rerun or a backfill).
MAX_ATTEMPTS = 3
# Callers may tag runs with their pid and host (surer than the engine events read otherwise).
WORKER_PID_TAG = "content/worker_pid"
WORKER_HOST_TAG = "content/worker_host"
PARTITION_TAG = "dagster/partition"

# Engine events naming the run worker's pid: a launched run worker, or in-process execution.
_PID_EVENT = re.compile(r"(?:Started process for run|Executing steps in process) \(pid: (\d+)\)")
_ACTIVE = {
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
}


def pending_batches(
    instance_partitions: list[str],
    store: ContentStoreResource,
    source: SourceResource,
    time_budget_s: float = TICK_BUDGET_S,
) -> PendingBatches:
    """Discover the watched source and list the batches that need a run."""
    return discovery.discover_pending(
        source.get_source(),
        store.get_store(),
        set(instance_partitions),
        max_batch_files=source.max_batch_files,
        time_budget_s=time_budget_s,
        settle_s=source.settle_s,
    )


def worker_tags() -> dict[str, str]:
    """Tags an in-process run should carry so a trigger can tell when its process died."""
    return {WORKER_PID_TAG: str(os.getpid()), WORKER_HOST_TAG: socket.gethostname()}


def _worker_pid(instance: dg.DagsterInstance, run: dg.DagsterRun) -> int | None:
    """The pid of the process executing `run` on this host, when Dagster or the caller said it."""
    tags = run.tags
    if WORKER_PID_TAG in tags and tags.get(WORKER_HOST_TAG) == socket.gethostname():
        return int(tags[WORKER_PID_TAG])
    if type(instance.run_launcher).__name__ != "DefaultRunLauncher":
        return None  # workers elsewhere (Docker, Kubernetes): run monitoring's business
    for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        match = _PID_EVENT.search(record.message or "")
        if match:
            return int(match.group(1))
    return None


def fail_dead_runs(instance: dg.DagsterInstance, run: dg.DagsterRun) -> bool:
    """Mark `run` failed when its worker process on this host is gone (killed, crashed).

    The default run launcher cannot report worker health, so run monitoring alone would only
    catch such a run at its maximum runtime. Returns True when the run was marked failed.
    """
    if run.status != dg.DagsterRunStatus.STARTED:
        return False
    pid = _worker_pid(instance, run)
    if pid is None or is_process_alive(pid):
        return False
    instance.report_run_failed(run, f"worker process {pid} is gone; the batch will be retried")
    return True


def run_key(batch_id: str, attempt: int) -> str:
    """The run key of the `attempt`-th run (1-based) of a batch: the batch id, then suffixed."""
    return batch_id if attempt <= 1 else f"{batch_id}#attempt-{attempt}"


def batch_run_requests(
    instance: dg.DagsterInstance,
    job_name: str,
    batch_ids: tuple[str, ...] | list[str],
    *,
    max_attempts: int = MAX_ATTEMPTS,
) -> list[dg.RunRequest]:
    """Run requests for the unfinished batches that have no run under way.

    A batch whose earlier runs ended (failed, canceled, or succeeded while the store lost the
    result) gets a new run key, so Dagster's run-key deduplication never strands it; runs whose
    worker died are marked failed first. After `max_attempts` a batch waits for a person.
    """
    if not batch_ids:
        return []
    records = instance.get_run_records(
        filters=dg.RunsFilter(job_name=job_name, tags={PARTITION_TAG: list(batch_ids)})
    )
    runs: dict[str, list[dg.DagsterRun]] = {}
    for record in records:
        run = record.dagster_run
        runs.setdefault(run.tags.get(PARTITION_TAG, ""), []).append(run)
    requests = []
    for batch_id in batch_ids:
        history = runs.get(batch_id, [])
        active = [r for r in history if r.status in _ACTIVE and not fail_dead_runs(instance, r)]
        if active:
            continue
        attempt = len(history) + 1
        if attempt > max_attempts:
            logger.warning(
                "batch %s failed %d runs; rerun it by hand (or backfill)", batch_id, len(history)
            )
            continue
        requests.append(
            dg.RunRequest(
                partition_key=batch_id,
                run_key=run_key(batch_id, attempt),
                tags={"content/attempt": str(attempt)},
            )
        )
    return requests


def cursor_for(found: PendingBatches) -> str:
    """A small JSON cursor: whether changes are left for the next tick, and how many batches
    wait for a run (shown in the UI; no decision reads the cursor: the state is the store)."""
    return json.dumps({"has_more": found.has_more, "pending": len(found.batch_ids)}, sort_keys=True)


__all__ = [
    "INGEST_BATCHES",
    "MAX_ATTEMPTS",
    "TICK_BUDGET_S",
    "WORKER_PID_TAG",
    "batch_run_requests",
    "cursor_for",
    "fail_dead_runs",
    "pending_batches",
    "run_key",
    "worker_tags",
]
