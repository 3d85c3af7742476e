"""content_assets.distributed.launcher.ForkingRunLauncher on a real instance: a launched run
executes in a process started by the broker's fork server, in a session of its own; terminate
cancels a running run; a broker that died is started again on the next launch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster._core.definitions.reconstruct import ReconstructableRepository
from dagster._core.launcher import WorkerStatus

from content_assets.distributed.launcher import PID_TAG, ForkingRunLauncher
from content_core.sandbox import is_process_alive

REPO = Path(__file__).resolve().parents[2]
JOBS = "tests.support.launcher_jobs"
_WAIT_S = 120.0


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    launcher = {
        "module": "content_assets.distributed.launcher",
        "class": "ForkingRunLauncher",
        "config": {"preload_modules": [JOBS]},
    }
    with dg.instance_for_test(overrides={"run_launcher": launcher}) as test_instance:
        yield test_instance


def _launch(instance: dg.DagsterInstance, note: Path, wait_s: float = 0.0) -> str:
    recon_job = ReconstructableRepository.for_module(
        JOBS, "defs", working_directory=str(REPO)
    ).get_reconstructable_job("note_job")
    run = instance.create_run_for_job(
        job_def=recon_job.get_definition(),
        run_config={"ops": {"note_and_wait": {"config": {"note": str(note), "wait_s": wait_s}}}},
        job_code_origin=recon_job.get_python_origin(),
    )
    instance.launch_run(run.run_id, workspace=None)  # type: ignore[arg-type]
    return run.run_id


def _until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + _WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} after {_WAIT_S} s")
        time.sleep(0.1)


def _finished(instance: dg.DagsterInstance, run_id: str) -> dg.DagsterRun:
    _until(lambda: instance.get_run_by_id(run_id).is_finished, f"run {run_id} finished")  # type: ignore[union-attr]
    run = instance.get_run_by_id(run_id)
    assert run is not None
    return run


def _launcher(instance: dg.DagsterInstance) -> ForkingRunLauncher:
    launcher = instance.run_launcher
    assert isinstance(launcher, ForkingRunLauncher)
    return launcher


def _broker_pid(instance: dg.DagsterInstance) -> int:
    broker = _launcher(instance)._broker  # noqa: SLF001
    assert broker is not None
    return broker.pid


def _fork_server_of(pid: int) -> int:
    """The parent of `pid`, checked to be a multiprocessing fork server; its own parent."""
    command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    assert "multiprocessing.forkserver" in command, command
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def test_start_returns_once_the_fork_server_has_imported_its_preload(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = tmp_path / "imported"
    monkeypatch.setenv("CONTENT_TEST_IMPORT_NOTE", str(note))  # the broker inherits it
    _launcher(instance).start()
    assert note.exists()  # no wait: start() waited for it
    assert _fork_server_of(int(note.read_text())) == _broker_pid(instance)


def test_the_deployments_preload_loads_what_runs_need_and_starts_no_thread() -> None:
    config = yaml.safe_load((REPO / "deploy" / "dagster-postgres.yaml").read_text())
    preload = config["run_launcher"]["config"]["preload_modules"]
    assert preload == ["content_assets.distributed.run_preload"]
    # Checked in the new interpreter only: importing the preload here would load the
    # definitions and the clients into the test process for nothing.
    code = (
        "import json, sys, threading\n"
        "from content_assets.distributed import run_preload\n"
        "modules = [*run_preload._MODULES, 'content_assets.definitions']\n"
        "missing = [m for m in modules if m not in sys.modules]\n"
        "print(json.dumps([threading.active_count(), missing]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "CONTENT_EXECUTOR": "celery"}, check=True,
    )
    threads, missing = json.loads(done.stdout.splitlines()[-1])
    # A fork server must not run threads (a forked run would inherit their locks).
    assert threads == 1 and missing == []
    assert "could not load" not in done.stderr


def test_a_launched_run_runs_in_a_process_of_the_brokers_fork_server(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    run = _finished(instance, _launch(instance, tmp_path / "note.json"))
    assert run.status == dg.DagsterRunStatus.SUCCESS
    ran = json.loads((tmp_path / "note.json").read_text())
    assert ran["pid"] == int(run.tags[PID_TAG]) != os.getpid()
    assert _fork_server_of(ran["parent"]) == _broker_pid(instance)
    # Dagster's own record of the run's process names the same pid.
    started = [
        r.dagster_event.message
        for r in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        if r.dagster_event is not None and "Started process" in (r.dagster_event.message or "")
    ]
    assert started == [f"Started process for run (pid: {ran['pid']})."]
    # The process exits (and its fork server reaps it) shortly after the run's last event.
    launcher = _launcher(instance)
    _until(
        lambda: launcher.check_run_worker_health(run).status == WorkerStatus.FAILED,
        "the run's process reported gone",
    )


def test_terminate_cancels_a_running_run(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    note = tmp_path / "note.json"
    run_id = _launch(instance, note, wait_s=_WAIT_S)
    _until(note.exists, "the op started")
    run = instance.get_run_by_id(run_id)
    assert run is not None and run.status == dg.DagsterRunStatus.STARTED
    assert _launcher(instance).check_run_worker_health(run).status == WorkerStatus.RUNNING
    assert _launcher(instance).terminate(run_id)
    assert _finished(instance, run_id).status == dg.DagsterRunStatus.CANCELED
    pid = json.loads(note.read_text())["pid"]
    _until(lambda: not is_process_alive(pid), "the run's process gone")
    assert not _launcher(instance).terminate(run_id)


def test_a_dead_broker_is_started_again(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    first = _finished(instance, _launch(instance, tmp_path / "first.json"))
    assert first.status == dg.DagsterRunStatus.SUCCESS
    dead = _broker_pid(instance)
    os.kill(dead, signal.SIGKILL)
    second = _finished(instance, _launch(instance, tmp_path / "second.json"))
    assert second.status == dg.DagsterRunStatus.SUCCESS
    parent = json.loads((tmp_path / "second.json").read_text())["parent"]
    assert _fork_server_of(parent) == _broker_pid(instance) != dead
