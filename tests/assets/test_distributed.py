"""Beyond one machine, end to end on real services: a Dagster instance in a private PostgreSQL,
a Redis broker, two Celery worker processes (each with its own work folder, as on two hosts),
the source and the store on an S3 server (SeaweedFS), and batch runs launched by the deploy
yaml's run launcher (processes forked from a warm one) with the Celery executor. Every table
equals, order aside, what the local in-process default writes for the same files from a folder
into a folder; also when one worker is SIGKILLed in the middle of a step, and when the runs
come from `content-pipeline ingest --executor celery` through the daemon's run queue."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    SOURCE_COLUMNS,
    CeleryWorker,
    dagster_home,
    discover_batches,
    launch_batches,
    run_local,
    running_daemon,
    running_workers,
    table_rows,
)
from tests.support.s3_server import S3Endpoint, S3Prefix
from tests.support.services import (
    PostgresServer,
    RedisServer,
    postgres_bin,
    running_postgres,
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
STEP = "normalised_artifacts"  # the step a worker is killed in


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    if postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)")
    with running_postgres() as server:
        yield server


def _mixed_folder(folder: Path) -> Path:
    for copy in range(COPIES):
        for name in MIXED:
            target = folder / f"copy-{copy}" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(CORPUS / name, target)
    return folder


def _executions(instance: dg.DagsterInstance) -> list[tuple[str, str, str]]:
    """(run id, step, worker name) of every step execution a Celery worker started, in order."""
    found = []
    for run in instance.get_runs():
        for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
            event = record.dagster_event
            # "[CeleryExecutor] Executing steps <step> in celery worker", naming the worker
            if event is None or "in celery worker" not in (event.message or ""):
                continue
            worker = str(event.engine_event_data.metadata["Celery worker"].value)
            found.append((run.run_id, str(record.step_key), worker.split("@")[0]))
    return found


def _kill_during(
    instance: dg.DagsterInstance, workers: list[CeleryWorker], step: str, runs: threading.Thread
) -> tuple[str, str]:
    """SIGKILL the first worker seen starting `step`; return the run's id and the worker's name."""
    by_name = {worker.name: worker for worker in workers}
    deadline = time.monotonic() + _STEP_WAIT_S
    while time.monotonic() < deadline and runs.is_alive():
        for run_id, started, name in _executions(instance):
            if started == step:
                by_name[name].kill()
                return run_id, name
        time.sleep(0.2)
    raise AssertionError(f"no worker started {step}")


def _distributed(
    source: str,
    work: Path,
    services: tuple[PostgresServer, RedisServer, S3Endpoint],
    monkeypatch: pytest.MonkeyPatch,
    *,
    kill: bool,
) -> dict[str, list[str]]:
    postgres, redis_server, s3 = services
    database = work.name.replace("-", "_").lower()
    postgres.create_database(database)
    store_uri = f"s3://{s3.bucket}/{work.parent.name}/{work.name}/store"
    # Discovery (the sensor's host) has a work folder of its own, as has each run's process.
    store = ContentStore(store_uri, work_dir=work / "sensor")
    env = {
        **os.environ,
        **postgres.env(database),
        **s3.environ(),
        "PYTHONPATH": str(REPO),
        "DAGSTER_HOME": str(dagster_home(work / "home")),
        "DAGSTER_MAX_CONCURRENT_RUNS": "4",
        "CONTENT_STORE_DIR": store_uri,
        "CONTENT_STORE_WORK_DIR": str(work / "orchestrator"),
        "CONTENT_SOURCE": source,
        "CONTENT_SOURCE_ID": SOURCE_ID,
        "CONTENT_EXECUTOR": "celery",
        "CONTENT_CELERY_BROKER": redis_server.url(1 if kill else 0),
        "CONTENT_CELERY_VISIBILITY_TIMEOUT_S": VISIBILITY_S,
    }
    # The run launcher's processes take this process's environment, as a daemon's runs do.
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    batch_ids = discover_batches(source, store, source_id=SOURCE_ID, batch_files=BATCH_FILES)
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert str(instance.run_storage._engine.url).startswith("postgresql+psycopg2://")  # noqa: SLF001
        instance.add_dynamic_partitions(INGEST_BATCHES, batch_ids)
        with running_workers(
            ["w1", "w2"], env, work / "logs", work_dirs=work / "hosts"
        ) as workers:
            errors: list[BaseException] = []

            def run_all() -> None:
                try:
                    launch_batches(instance, batch_ids, timeout_s=_STEP_WAIT_S * 1.5)
                except BaseException as exc:  # noqa: BLE001  # re-raised in the test's thread
                    errors.append(exc)

            runs = threading.Thread(target=run_all)
            runs.start()
            killed = _kill_during(instance, workers, STEP, runs) if kill else None
            runs.join(timeout=_STEP_WAIT_S * 2)
            assert not runs.is_alive() and not errors, errors
            for worker in workers:
                # The normaliser's pool ran in the worker, with its time budget, started
                # when the worker was ready, as were its instance and job.
                log = worker.log.read_text(errors="replace")
                assert "daemonic" not in log and "the worker's pool started" in log
                assert "the worker's instance and job loaded" in log
        statuses = {r.status for r in instance.get_runs()}
        assert statuses == {dg.DagsterRunStatus.SUCCESS}
        executions = _executions(instance)
        if killed is not None:
            # The killed step ran again, on the other worker, in the same run.
            run_id, name = killed
            again = [w for r, step, w in executions if r == run_id and step == STEP]
            assert again == [name, ({"w1", "w2"} - {name}).pop()]
        else:
            # The batches of one ingest ran on both workers.
            assert {w for _, _, w in executions} == {"w1", "w2"}
    # Each host kept its own work folder; the store's files are only in the bucket.
    assert sorted(p.name for p in (work / "hosts").iterdir()) == ["w1", "w2"]
    assert not list((work / "hosts").rglob("*.parquet"))
    return table_rows(store, ignore=SOURCE_COLUMNS)


@pytest.mark.parametrize("kill", [False, True], ids=["two-workers", "one-worker-killed"])
def test_celery_workers_on_postgres_and_s3_match_the_local_run(
    tmp_path: Path,
    postgres: PostgresServer,
    redis_server: RedisServer,
    s3: S3Endpoint,
    monkeypatch: pytest.MonkeyPatch,
    kill: bool,
) -> None:
    folder = _mixed_folder(tmp_path / "inbox")
    local_store = ContentStore(tmp_path / "local")
    run_local(folder, local_store, source_id=SOURCE_ID, batch_files=BATCH_FILES)
    local = table_rows(local_store, ignore=SOURCE_COLUMNS)
    source = S3Prefix(s3, f"{tmp_path.name}/inbox").put_tree(folder)
    distributed = _distributed(
        source, tmp_path / f"dist-{kill}", (postgres, redis_server, s3), monkeypatch, kill=kill
    )
    assert len(local["raw_files"]) == COPIES * len(MIXED)
    assert local["batches"] and local["chunks"]
    assert distributed == local


def test_ingest_executor_celery_runs_on_the_workers_and_matches_the_local_run(
    tmp_path: Path,
    postgres: PostgresServer,
    redis_server: RedisServer,
    s3: S3Endpoint,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's distributed commands: the daemon and two workers, then
    `content-pipeline ingest s3://... --executor celery`, which submits every batch run to the
    instance's run queue; the daemon launches them and their steps run on both workers. The
    daemon and the workers name another store and source (their own environment): the runs
    write where the command said, and the tables equal a local run's."""
    folder = _mixed_folder(tmp_path / "inbox")
    local_store = ContentStore(tmp_path / "local")
    run_local(folder, local_store, source_id=SOURCE_ID, batch_files=BATCH_FILES)
    local = table_rows(local_store, ignore=SOURCE_COLUMNS)
    source = S3Prefix(s3, f"{tmp_path.name}/inbox").put_tree(folder)
    work = tmp_path / "dist"
    postgres.create_database("ingest_celery")
    store_uri = f"s3://{s3.bucket}/{tmp_path.name}/store"
    empty = tmp_path / "daemon-inbox"
    empty.mkdir()
    env = {
        **os.environ,
        **postgres.env("ingest_celery"),
        **s3.environ(),
        "PYTHONPATH": str(REPO),
        "DAGSTER_HOME": str(dagster_home(work / "home")),
        "DAGSTER_MAX_CONCURRENT_RUNS": "4",
        # The daemon's own store and source (its sensor finds nothing there).
        "CONTENT_STORE_DIR": str(tmp_path / "daemon-store"),
        "CONTENT_SOURCE": str(empty),
        "CONTENT_STORE_WORK_DIR": str(work / "orchestrator"),
        "CONTENT_EXECUTOR": "celery",
        "CONTENT_CELERY_BROKER": redis_server.url(2),
        "CONTENT_CELERY_VISIBILITY_TIMEOUT_S": VISIBILITY_S,
    }
    for name in (*postgres.env("ingest_celery"), "DAGSTER_HOME", "DAGSTER_MAX_CONCURRENT_RUNS"):
        monkeypatch.setenv(name, env[name])
    with (
        dg.DagsterInstance.get() as watcher,
        running_workers(["w1", "w2"], env, work / "logs", work_dirs=work / "hosts"),
        running_daemon(env, work / "logs" / "daemon.log", watcher),
    ):
        cli_env = {**env, "CONTENT_STORE_WORK_DIR": str(work / "cli")}
        done = subprocess.run(
            [sys.executable, "-m", "content_assets.cli", "ingest", source,
             "--executor", "celery", "--store", store_uri, "--source-id", SOURCE_ID,
             "--max-batch-files", str(BATCH_FILES)],
            cwd=REPO, env=cli_env, capture_output=True, encoding="utf-8",
            timeout=_STEP_WAIT_S * 1.5,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    batches = COPIES * len(MIXED) // BATCH_FILES
    assert "submitted 3 run(s) to the instance's run queue" in done.stdout
    assert done.stdout.count(" ok in ") == batches, done.stdout
    with dg.DagsterInstance.get() as instance:
        # Every run went through the queue (the daemon launched it with the deploy yaml's
        # launcher) and its steps ran on the Celery workers, both of them.
        runs = instance.get_runs()
        assert len(runs) == batches
        assert {r.status for r in runs} == {dg.DagsterRunStatus.SUCCESS}
        for run in runs:
            assert instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_ENQUEUED)
            assert "content/run_pid" in run.tags
        assert {w for _, _, w in _executions(instance)} == {"w1", "w2"}
    # The daemon's own store holds no row (its tables exist: its sensor opened it).
    assert not any(table_rows(ContentStore(tmp_path / "daemon-store")).values())
    store = ContentStore(store_uri, work_dir=work / "check")
    assert table_rows(store, ignore=SOURCE_COLUMNS) == local


# tests.support.slow_tasks's task (not imported here: it builds the workers' app).
SLOW_TASK = "tests.slow_task"
# The hold's test: far below the default (90 s) so that a task outlives it many times over.
_HOLD_VISIBILITY_S = "3"
_LONG_TASK_S = 15.0  # five visibility timeouts


def _lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def test_a_live_workers_long_task_runs_once_and_a_killed_workers_runs_again(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """A task that runs five visibility timeouts on a live worker runs once (the worker renews
    its hold; the idle worker's sweeps hand nothing out); the same task on a worker that is
    SIGKILLed runs again on the other worker, in the same task, whose result arrives."""
    from celery import Celery

    broker = redis_server.url(3)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "CONTENT_CELERY_BROKER": broker,
        "CONTENT_CELERY_VISIBILITY_TIMEOUT_S": _HOLD_VISIBILITY_S,
        "CONTENT_WORKERS": "1",
    }
    env.pop("DAGSTER_HOME", None)
    client = Celery(broker=broker, backend=broker)
    live, killed = tmp_path / "live.log", tmp_path / "killed.log"
    with running_workers(
        ["w1", "w2"], env, tmp_path / "logs", app="tests.support.slow_tasks"
    ) as workers:
        result = client.send_task(SLOW_TASK, args=[_LONG_TASK_S, str(live)], queue="dagster")
        assert result.get(timeout=_STEP_WAIT_S) == _lines(live)[0]
        assert len(_lines(live)) == 1, _lines(live)

        result = client.send_task(SLOW_TASK, args=[_LONG_TASK_S, str(killed)], queue="dagster")
        deadline = time.monotonic() + _STEP_WAIT_S
        while not _lines(killed) and time.monotonic() < deadline:
            time.sleep(0.1)
        first = _lines(killed)[0]
        {w.name: w for w in workers}[first].kill()
        other = ({"w1", "w2"} - {first}).pop()
        assert result.get(timeout=_STEP_WAIT_S) == other
        assert _lines(killed) == [first, other]
