"""The distributed setup of tests and bench_distributed: a Dagster home with the Postgres
instance yaml, Celery worker processes (`celery -A content_assets.distributed.workers worker`),
the Dagster daemon (`dagster-daemon run`), and batch runs launched by the instance's run
launcher with the Celery executor, one process per batch, as the daemon launches them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableRepository

from content_assets.definitions import build_definitions
from content_assets.distributed.executors import keep_connections
from content_assets.partitions import INGEST_BATCHES
from content_core.discovery import discover_pending
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig, S3ObjectSource
from content_core.sources.cursor import ContentSourceBase
from content_core.store import PIPELINE_TABLES, ContentStore

__all__ = [
    "INSTANCE_YAML",
    "SOURCE_COLUMNS",
    "CeleryWorker",
    "dagster_home",
    "discover_batches",
    "launch_batches",
    "run_local",
    "running_daemon",
    "running_workers",
    "table_rows",
]

REPO = Path(__file__).resolve().parents[2]
INSTANCE_YAML = REPO / "deploy" / "dagster-postgres.yaml"
_BIN = Path(sys.executable).parent
_READY_TIMEOUT_S = 180.0
_STOP_TIMEOUT_S = 60.0
JOB = "ingest_batch_job"
# Runs log their events to the instance; the console (the launcher's stderr) only errors.
_QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
# Columns that differ between two ingests of the same files: write times.
_VOLATILE = {"fetched_at", "discovered_at", "batch_id"}
# Columns that say where the source is and how it signs a version (a folder: mtime, ctime and
# inode; S3: ETag and last-modified): equal only for two ingests from the same kind of source.
SOURCE_COLUMNS = frozenset({"source_root", "signature"})


def dagster_home(folder: Path) -> Path:
    """A DAGSTER_HOME whose dagster.yaml is deploy/dagster-postgres.yaml."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INSTANCE_YAML, folder / "dagster.yaml")
    return folder


@dataclass
class CeleryWorker:
    """One worker process (and its session: the normaliser's pool dies with it)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    killed: bool = field(default=False)

    def kill(self) -> None:
        """SIGKILL the worker and every process it started, as a lost host would end them."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=_STOP_TIMEOUT_S)
        self.killed = True

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL whatever is left of its session."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.process.poll() is None:
            self.process.wait(timeout=_STOP_TIMEOUT_S)


WORKERS_APP = "content_assets.distributed.workers"


def _start_worker(
    name: str, env: Mapping[str, str], logs: Path, work_dirs: Path | None, app: str
) -> CeleryWorker:
    log = logs / f"{name}.log"
    if work_dirs is not None:
        # Each worker its own work folder for an s3:// store, as on separate hosts.
        env = {**env, "CONTENT_STORE_WORK_DIR": str(work_dirs / name)}
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [str(_BIN / "celery"), "-A", app, "worker",
             "--hostname", f"{name}@%h", "--queues", "dagster", "--loglevel", "INFO",
             "--without-gossip", "--without-mingle"],
            cwd=REPO, env=dict(env), stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return CeleryWorker(name, process, log)


def _wait_ready(worker: CeleryWorker) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if worker.process.poll() is not None:
            raise RuntimeError(f"worker {worker.name} exited: {worker.log.read_text()}")
        if " ready." in worker.log.read_text(errors="replace"):
            return
        time.sleep(0.3)
    raise RuntimeError(f"worker {worker.name} not ready in {_READY_TIMEOUT_S} s")


@contextmanager
def running_workers(
    names: Sequence[str],
    env: Mapping[str, str],
    logs: Path,
    *,
    work_dirs: Path | None = None,
    app: str = WORKERS_APP,
) -> Iterator[list[CeleryWorker]]:
    """Start one Celery worker per name, wait until each listens, stop them all on exit.
    With `work_dirs`, each worker's CONTENT_STORE_WORK_DIR is `work_dirs/<name>`; `app` is
    the Celery app module (`-A`)."""
    logs.mkdir(parents=True, exist_ok=True)
    workers: list[CeleryWorker] = []
    try:
        for name in names:
            workers.append(_start_worker(name, env, logs, work_dirs, app))
        for worker in workers:
            _wait_ready(worker)
        yield workers
    finally:
        for worker in workers:
            worker.stop()


@contextmanager
def running_daemon(
    env: Mapping[str, str], log: Path, instance: dg.DagsterInstance
) -> Iterator[subprocess.Popen[bytes]]:
    """`dagster-daemon run -m content_assets.definitions` (the README's command) with `env`,
    its output in `log`, once its run queue daemon has sent a heartbeat to `instance`;
    stopped (SIGTERM, then SIGKILL of its session) on exit."""
    from dagster._daemon.controller import get_daemon_statuses

    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [str(_BIN / "dagster-daemon"), "run", "-m", "content_assets.definitions"],
            cwd=REPO, env=dict(env), stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    daemon = CeleryWorker("daemon", process, log)
    try:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        queue = "QUEUED_RUN_COORDINATOR"
        while not get_daemon_statuses(instance, [queue], ignore_errors=True)[queue].healthy:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dagster-daemon not running: {log.read_text()}")
            time.sleep(0.5)
        yield process
    finally:
        daemon.stop()


def launch_batches(
    instance: dg.DagsterInstance,
    batch_ids: Sequence[str],
    *,
    timeout_s: float,
    max_concurrent: int | None = None,
) -> list[str]:
    """Create the batch job's run for every batch and launch it with `instance`'s run launcher
    (deploy/dagster-postgres.yaml's ForkingRunLauncher), at most `max_concurrent` at once (all
    when None), as the sensor and the queued run coordinator of the daemon do; the run ids.
    Raise when one fails or the whole outlives `timeout_s`.

    The job is built from os.environ, as the launched run's process loads it: set the
    deployment's variables there first. `instance` keeps its database connections from here
    on, as a daemon's does."""
    keep_connections(instance)
    recon_job = ReconstructableRepository.for_module(
        "content_assets.definitions", "defs", working_directory=str(REPO)
    ).get_reconstructable_job(JOB)
    job = build_definitions(os.environ).resolve_job_def(JOB)
    waiting = list(batch_ids)
    running: dict[str, str] = {}
    launched: list[str] = []
    failed: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        while waiting or running:
            while waiting and (max_concurrent is None or len(running) < max_concurrent):
                batch_id = waiting.pop(0)
                run = instance.create_run_for_job(
                    job_def=job,
                    run_config=_QUIET_CONSOLE,
                    tags={"dagster/partition": batch_id},
                    job_code_origin=recon_job.get_python_origin(),
                )
                instance.launch_run(run.run_id, workspace=None)  # type: ignore[arg-type]
                running[run.run_id] = batch_id
                launched.append(run.run_id)
            if time.monotonic() > deadline:
                failed += [f"{b}: still running after {timeout_s} s" for b in running.values()]
                break
            for run in instance.get_runs(dg.RunsFilter(run_ids=list(running))):
                if run.is_finished:
                    batch_id = running.pop(run.run_id)
                    if run.status != dg.DagsterRunStatus.SUCCESS:
                        failed.append(f"{batch_id}: run {run.run_id} {run.status.value}")
            time.sleep(0.2)
    finally:
        for run_id in running:
            instance.run_launcher.terminate(run_id)
    if failed:
        raise RuntimeError(f"batch runs failed: {failed}")
    return launched


def discover_batches(
    location: Path | str, store: ContentStore, *, source_id: str, batch_files: int
) -> list[str]:
    """Discover `location` (a folder or `s3://bucket/prefix`) into `store` (batches of
    `batch_files`); the batch ids to run. Two stores that discover the same files under one
    source id get the same batches, whether from a folder or an S3 prefix (batch ids digest
    paths and hashes, never signatures)."""
    source: ContentSourceBase
    if isinstance(location, str):
        source = S3ObjectSource(location, source_id=source_id)
    else:
        source = LocalFolderSource(LocalFolderSourceConfig(folder=location), source_id=source_id)
    found = discover_pending(
        source, store, set(), max_batch_files=batch_files, time_budget_s=float("inf"), settle_s=0.0
    )
    return list(found.batch_ids)


def run_local(folder: Path, store: ContentStore, *, source_id: str, batch_files: int) -> None:
    """The local default: discover, then every batch in process on a test instance, in turn."""
    job = build_definitions({"CONTENT_STORE_DIR": str(store.root)}).resolve_job_def(
        "ingest_batch_job"
    )
    with dg.instance_for_test() as instance:
        batch_ids = discover_batches(
            folder, store, source_id=source_id, batch_files=batch_files
        )
        instance.add_dynamic_partitions(INGEST_BATCHES, batch_ids)
        for batch_id in batch_ids:
            assert job.execute_in_process(instance=instance, partition_key=batch_id).success


def table_rows(
    store: ContentStore, *, ignore: frozenset[str] = frozenset()
) -> dict[str, list[str]]:
    """Every table's rows without write times (nor the columns `ignore`), sorted: equal for
    two ingests of the same files whatever order or process wrote them."""
    skip = _VOLATILE | ignore
    return {
        table: sorted(
            repr(sorted((k, v) for k, v in _oriented(table, row).items() if k not in skip))
            for row in store.query(f"SELECT * FROM {table}").to_pylist()
        )
        for table in ("batches", *PIPELINE_TABLES)
    }


# The columns naming each side of a document_similarity pair row.
_SIDES = (("source_id", "path", "path_bytes", "artifact_id", "batch_id"),
          ("other_source_id", "other_path", None, "other_artifact_id", "other_batch_id"))


def _oriented(table: str, row: dict[str, object]) -> dict[str, object]:
    """A document_similarity pair is written by whichever of its two batches ran later, so
    runs in another order hold it the other way round: one orientation (the lesser document
    first) and no batch of the writer, so equal pairs compare equal."""
    if table != "document_similarity" or row.get("other_path") is None:
        return row
    this, other = ([row[c] if c else None for c in side] for side in _SIDES)
    first, second = sorted([this, other], key=lambda side: (side[0], side[1], side[3]))
    keep = {k: v for k, v in row.items() if k not in {c for side in _SIDES for c in side if c}}
    names = ("source_id", "path", "artifact_id")
    keep.update({f"a_{n}": first[i] for n, i in zip(names, (0, 1, 3), strict=True)})
    keep.update({f"b_{n}": second[i] for n, i in zip(names, (0, 1, 3), strict=True)})
    return keep
