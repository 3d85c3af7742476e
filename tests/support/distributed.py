"""The distributed setup of tests and bench_distributed: a Dagster home with the Postgres
instance yaml, Celery worker processes (`celery -A content_assets.workers worker`), and batch
runs through `dagster job execute` with the Celery executor, one process per batch as the
daemon's run launcher would start them."""

from __future__ import annotations

import json
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

from content_core.store import PIPELINE_TABLES, ContentStore

__all__ = [
    "INSTANCE_YAML",
    "CeleryWorker",
    "dagster_home",
    "run_batches",
    "running_workers",
    "table_rows",
]

REPO = Path(__file__).resolve().parents[2]
INSTANCE_YAML = REPO / "deploy" / "dagster-postgres.yaml"
_BIN = Path(sys.executable).parent
_READY_TIMEOUT_S = 180.0
_STOP_TIMEOUT_S = 60.0
# Columns that differ between two ingests of the same files: write times.
_VOLATILE = {"fetched_at", "discovered_at"}


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


def _start_worker(name: str, env: Mapping[str, str], logs: Path) -> CeleryWorker:
    log = logs / f"{name}.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [str(_BIN / "celery"), "-A", "content_assets.workers", "worker",
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
    names: Sequence[str], env: Mapping[str, str], logs: Path
) -> Iterator[list[CeleryWorker]]:
    """Start one Celery worker per name, wait until each listens, stop them all on exit."""
    logs.mkdir(parents=True, exist_ok=True)
    workers: list[CeleryWorker] = []
    try:
        for name in names:
            workers.append(_start_worker(name, env, logs))
        for worker in workers:
            _wait_ready(worker)
        yield workers
    finally:
        for worker in workers:
            worker.stop()


def run_batches(
    batch_ids: Sequence[str], env: Mapping[str, str], logs: Path, *, timeout_s: float
) -> None:
    """Run the batch job for every batch at once, each in its own `dagster job execute`
    process (the run's orchestrator, which hands its steps to the executor of `env`); raise
    when one fails or outlives `timeout_s`."""
    logs.mkdir(parents=True, exist_ok=True)
    runs = []
    for batch_id in batch_ids:
        output = open(logs / f"run-{batch_id}.log", "wb")  # noqa: SIM115  # closed below
        process = subprocess.Popen(
            [str(_BIN / "dagster"), "job", "execute", "-m", "content_assets.definitions",
             "-a", "defs", "-j", "ingest_batch_job",
             "--tags", json.dumps({"dagster/partition": batch_id})],
            cwd=REPO, env=dict(env), stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        runs.append((batch_id, process, output))
    deadline = time.monotonic() + timeout_s
    failed = []
    try:
        for batch_id, process, _ in runs:
            try:
                code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                code = None
            if code != 0:
                failed.append(f"{batch_id}: exit {code}")
    finally:
        for _, process, output in runs:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=_STOP_TIMEOUT_S)
            output.close()
    if failed:
        raise RuntimeError(f"batch runs failed ({logs}): {failed}")


def table_rows(store: ContentStore) -> dict[str, list[str]]:
    """Every table's rows without write times, sorted: equal for two ingests of the same
    files whatever order or process wrote them."""
    return {
        table: sorted(
            repr(sorted((k, v) for k, v in row.items() if k not in _VOLATILE))
            for row in store.query(f"SELECT * FROM {table}").to_pylist()
        )
        for table in ("batches", *PIPELINE_TABLES)
    }
