"""Beyond one machine, end to end on real services: a Dagster instance in a private PostgreSQL,
a Redis broker, two Celery worker processes, and batch runs through `dagster job execute` with
the Celery executor. Every table equals, order aside, what the local in-process default writes
for the same files; also when one worker is SIGKILLed in the middle of a step."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from content_assets.partitions import INGEST_BATCHES
from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS
from tests.support.distributed import (
    CeleryWorker,
    dagster_home,
    discover_batches,
    run_batches,
    run_local,
    running_workers,
    table_rows,
)
from tests.support.services import (
    PostgresServer,
    RedisServer,
    postgres_bin,
    redis_server_bin,
    running_postgres,
    running_redis,
)

REPO = Path(__file__).resolve().parents[2]
# Worker and orchestrator start-up, three batches and a redelivery on a loaded 2-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# A mix of formats that need no OCR or Office converter (both would only add time here).
MIXED = [
    "7z/bla.7z", "csv/stanley-cups.csv", "docx/docx-tables.docx", "eml/fake-email-attachment.eml",
    "html/test_blog.html", "json/markitdown-test.json", "md/README.md",
    "msg/fake-email.msg", "odt/simple.odt", "pdf/fake-memo.pdf", "csv/test_mskanji.csv",
    "eml/mime-html-only.eml",
]
COPIES = 3  # 36 files
BATCH_FILES = 12
SOURCE_ID = "mixed"
# A step's task goes back to the queue this long after its worker died.
VISIBILITY_S = "20"
_STEP_WAIT_S = 600.0


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    if postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)")
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    if redis_server_bin() is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    with running_redis() as server:
        yield server


def _mixed_folder(folder: Path) -> Path:
    for copy in range(COPIES):
        for name in MIXED:
            target = folder / f"copy-{copy}" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(CORPUS / name, target)
    return folder


def _step_workers(instance: dg.DagsterInstance, step: str) -> dict[str, list[str]]:
    """For each run, the workers that started executing `step`, in order."""
    found: dict[str, list[str]] = {}
    for run in instance.get_runs():
        for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
            event = record.dagster_event
            if event is None or record.step_key != step:
                continue
            # "[CeleryExecutor] Executing steps <step> in celery worker", with the worker's name
            if f"Executing steps {step} in celery worker" not in (event.message or ""):
                continue
            metadata = event.engine_event_data.metadata
            found.setdefault(run.run_id, []).append(str(metadata["Celery worker"].value))
    return found


def _kill_during(
    instance: dg.DagsterInstance, worker: CeleryWorker, step: str, runs: threading.Thread
) -> str:
    """SIGKILL `worker` as soon as it has started `step` of some run; return that run's id."""
    deadline = time.monotonic() + _STEP_WAIT_S
    while time.monotonic() < deadline and runs.is_alive():
        for run_id, names in _step_workers(instance, step).items():
            if names and names[-1].startswith(f"{worker.name}@"):
                worker.kill()
                return run_id
        time.sleep(0.2)
    raise AssertionError(f"{worker.name} never started {step}")


def _distributed(
    folder: Path,
    work: Path,
    postgres: PostgresServer,
    redis_server: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
    *,
    kill: bool,
) -> dict[str, list[str]]:
    database = work.name.replace("-", "_").lower()
    postgres.create_database(database)
    store = ContentStore(work / "store")
    env = {
        **os.environ,
        **postgres.env(database),
        "PYTHONPATH": str(REPO),
        "DAGSTER_HOME": str(dagster_home(work / "home")),
        "DAGSTER_MAX_CONCURRENT_RUNS": "4",
        "CONTENT_STORE_DIR": str(store.root),
        "CONTENT_EXECUTOR": "celery",
        "CONTENT_CELERY_BROKER": redis_server.url(1 if kill else 0),
        "CONTENT_CELERY_VISIBILITY_TIMEOUT_S": VISIBILITY_S,
    }
    for name in ("DAGSTER_HOME", *postgres.env(database), "DAGSTER_MAX_CONCURRENT_RUNS"):
        monkeypatch.setenv(name, env[name])
    batch_ids = discover_batches(folder, store, source_id=SOURCE_ID, batch_files=BATCH_FILES)
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert str(instance.run_storage._engine.url).startswith("postgresql+psycopg2://")  # noqa: SLF001
        instance.add_dynamic_partitions(INGEST_BATCHES, batch_ids)
        with running_workers(["w1", "w2"], env, work / "logs") as (w1, w2):
            errors: list[BaseException] = []

            def run_all() -> None:
                try:
                    run_batches(batch_ids, env, work / "logs", timeout_s=_STEP_WAIT_S * 1.5)
                except BaseException as exc:  # noqa: BLE001  # re-raised in the test's thread
                    errors.append(exc)

            runs = threading.Thread(target=run_all)
            runs.start()
            killed_run = _kill_during(instance, w1, "normalised_artifacts", runs) if kill else None
            runs.join(timeout=_STEP_WAIT_S * 2)
            assert not runs.is_alive() and not errors, errors
            assert "daemonic" not in w2.log.read_text(errors="replace")
        statuses = {r.status for r in instance.get_runs()}
        assert statuses == {dg.DagsterRunStatus.SUCCESS}
        used = {
            name.split("@")[0]
            for names in _step_workers(instance, "normalised_artifacts").values()
            for name in names
        }
        if killed_run is not None:
            # The killed step ran again, on the other worker, in the same run.
            names = _step_workers(instance, "normalised_artifacts")[killed_run]
            assert [n.split("@")[0] for n in names] == ["w1", "w2"]
        else:
            assert used == {"w1", "w2"}  # the batches of one ingest ran on both workers
    return table_rows(store)


@pytest.mark.parametrize("kill", [False, True], ids=["two-workers", "one-worker-killed"])
def test_celery_workers_on_postgres_match_the_local_run(
    tmp_path: Path,
    postgres: PostgresServer,
    redis_server: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
    kill: bool,
) -> None:
    folder = _mixed_folder(tmp_path / "inbox")
    local_store = ContentStore(tmp_path / "local")
    run_local(folder, local_store, source_id=SOURCE_ID, batch_files=BATCH_FILES)
    local = table_rows(local_store)
    distributed = _distributed(
        folder, tmp_path / f"dist-{kill}", postgres, redis_server, monkeypatch, kill=kill
    )
    assert len(local["raw_files"]) == COPIES * len(MIXED)
    assert local["batches"] and local["chunks"]
    assert distributed == local
