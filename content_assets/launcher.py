"""A run launcher that starts each run in a process forked from a warm one.

Dagster's default launcher starts every run as a new interpreter (the code server spawns
`dagster api execute_run`), which imports Dagster, the definitions and the storage and broker
clients again: about 1.5 CPU-seconds of every batch run before it does anything. On a
deployment with many small batches that is a large share of the machine. This launcher keeps
one process (the "zygote", started on the first launch) that has imported them once, and forks
it for every run, so a run starts with everything loaded. Each run is still its own process,
in its own session, and outlives the launcher as a default-launched run does.

    run_launcher:
      module: content_assets.launcher
      class: ForkingRunLauncher
      config:
        preload_modules: [dagster_postgres, kombu.transport.redis, content_assets.definitions]

Runs execute on the launcher's host (the daemon's, for runs the daemon launches), with its
environment, as with the default launcher on a local code location. The zygote imports code
once: after changing the definitions, restart the daemon (and the webserver, if it launches
runs), as you would reload a code location. `terminate` sends SIGTERM to the run's process,
which Dagster turns into an interrupt that cancels the run; run monitoring asks whether the
process is alive.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

import dagster as dg
from dagster._core.launcher import (
    CheckRunHealthResult,
    LaunchRunContext,
    RunLauncher,
    WorkerStatus,
)
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from content_assets.executors import keep_connections
from content_core.sandbox import is_process_alive

__all__ = ["ForkingRunLauncher", "PID_TAG", "HOST_TAG"]

PID_TAG = "content/run_pid"
HOST_TAG = "content/run_host"
DEFAULT_PRELOAD = ("content_assets.definitions",)
_log = logging.getLogger(__name__)
# How long a launch waits for the warm process to answer (it may be importing).
_ANSWER_TIMEOUT_S = 300.0


class ForkingRunLauncher(RunLauncher, ConfigurableClass):
    """Launch each run in a process forked from a process with `preload_modules` imported."""

    def __init__(
        self,
        inst_data: ConfigurableClassData | None = None,
        preload_modules: Sequence[str] = DEFAULT_PRELOAD,
    ) -> None:
        self._inst_data = inst_data
        self._preload = tuple(preload_modules)
        self._zygote: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        super().__init__()  # type: ignore[no-untyped-call]

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict[str, dg.Field]:
        return {
            "preload_modules": dg.Field(
                [str],
                is_required=False,
                default_value=list(DEFAULT_PRELOAD),
                description="Modules the warm process imports before it forks runs.",
            )
        }

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
    ) -> ForkingRunLauncher:
        return cls(inst_data=inst_data, **config_value)

    def start(self) -> None:
        """Start the warm process now, not on the first launch (it imports for a second or
        two)."""
        with self._lock:
            self._running_zygote()

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        if run.job_code_origin is None:
            raise ValueError(f"run {run.run_id} has no code origin to load its job from")
        ref = dg.serialize_value(self._instance.get_ref())
        request = {"run_id": run.run_id, "instance_ref": ref}
        with self._lock:
            reply = self._ask(request)
        if "error" in reply:
            raise RuntimeError(f"the warm run process could not start run {run.run_id}: "
                               f"{reply['error']}")
        self._instance.add_run_tags(
            run.run_id, {PID_TAG: str(reply["pid"]), HOST_TAG: socket.gethostname()}
        )

    def _ask(self, request: Mapping[str, str]) -> dict[str, Any]:
        """Send one request to the zygote (started, or restarted, as needed); its reply."""
        for attempt in range(2):
            zygote = self._running_zygote()
            assert zygote.stdin is not None and zygote.stdout is not None
            try:
                zygote.stdin.write(json.dumps(request).encode() + b"\n")
                zygote.stdin.flush()
                # The first answer waits for the imports; a warm process answers at once.
                answered, _, _ = select.select([zygote.stdout], [], [], _ANSWER_TIMEOUT_S)
                line = zygote.stdout.readline() if answered else b""
            except (BrokenPipeError, ValueError):
                line = b""
            if line:
                reply: dict[str, Any] = json.loads(line)
                return reply
            self._stop_zygote()
            if attempt:
                break
        raise RuntimeError(
            f"the warm run process exited or did not answer in {_ANSWER_TIMEOUT_S:g} s; "
            "see the launcher's stderr"
        )

    def _running_zygote(self) -> subprocess.Popen[bytes]:
        if self._zygote is None or self._zygote.poll() is not None:
            self._zygote = subprocess.Popen(
                [sys.executable, "-m", "content_assets.launcher", *self._preload],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,
            )
        return self._zygote

    def _stop_zygote(self) -> None:
        zygote, self._zygote = self._zygote, None
        if zygote is None:
            return
        if zygote.stdin is not None:
            try:
                zygote.stdin.close()
            except BrokenPipeError:
                pass
        try:
            zygote.wait(timeout=30)
        except subprocess.TimeoutExpired:
            zygote.kill()
            zygote.wait(timeout=30)
        if zygote.stdout is not None:
            zygote.stdout.close()

    def _run_pid(self, run: dg.DagsterRun) -> int | None:
        """The pid of `run`'s process when it ran on this host."""
        if run.tags.get(HOST_TAG) != socket.gethostname() or PID_TAG not in run.tags:
            return None
        return int(run.tags[PID_TAG])

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        pid = self._run_pid(run)
        if pid is None or not is_process_alive(pid):
            return False
        self._instance.report_run_canceling(run)
        os.kill(pid, signal.SIGTERM)
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        pid = self._run_pid(run)
        if pid is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "the run did not start on this host")
        if is_process_alive(pid):
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run's process {pid} is gone")

    def dispose(self) -> None:
        with self._lock:
            self._stop_zygote()


def _zygote_instance(
    request: Mapping[str, str], instances: dict[str, dg.DagsterInstance]
) -> dg.DagsterInstance | None:
    """The zygote's instance for the request's ref, built on first use (its storages check
    their schema then) and inherited by every child; None when it cannot be built here (the
    child then builds its own, and reports why it cannot)."""
    key = request["instance_ref"]
    if key not in instances:
        from dagster._core.instance.ref import InstanceRef

        try:
            instances[key] = dg.DagsterInstance.from_ref(dg.deserialize_value(key, InstanceRef))
        except Exception:
            _log.exception("the warm run process could not load the instance")
            return None
    return instances[key]


def _execute(
    request: Mapping[str, str], stdout: IO[bytes], instance: dg.DagsterInstance | None
) -> None:
    """In the forked child: run the requested run to its end, as `dagster api execute_run`."""
    from dagster._cli.api import _execute_run_command_body
    from dagster._core.instance.ref import InstanceRef
    from dagster._utils.interrupts import capture_interrupts, setup_interrupt_handlers

    stdout.close()  # the zygote's reply pipe: only the zygote writes there
    os.dup2(sys.stderr.fileno(), 1)
    setup_interrupt_handlers()
    with capture_interrupts():
        if instance is None:
            instance = dg.DagsterInstance.from_ref(
                dg.deserialize_value(request["instance_ref"], InstanceRef)
            )
        # The inherited storages hold no connection (they open one per operation); this
        # process opens its own and keeps them.
        keep_connections(instance)
        _execute_run_command_body(
            request["run_id"], instance, lambda _event: None, set_exit_code_on_failure=True
        )


def serve(preload: Sequence[str]) -> None:
    """The zygote: import `preload`, then fork a run process per request line on stdin and
    answer each with the child's pid (a JSON line on stdout). Ends when stdin closes."""
    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:
            _log.exception("the warm run process could not preload %s", module)
    # Children are reaped as they exit; nobody waits for a run's exit status here.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    instances: dict[str, dg.DagsterInstance] = {}
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        request = json.loads(line)
        instance = _zygote_instance(request, instances)
        try:
            pid = os.fork()
        except OSError as exc:
            stdout.write(json.dumps({"error": str(exc)}).encode() + b"\n")
            stdout.flush()
            continue
        if pid == 0:
            code = 1
            try:
                os.setsid()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _execute(request, stdout, instance)
                code = 0
            except BaseException:
                _log.exception("run %s failed to execute", request.get("run_id"))
            finally:
                sys.stderr.flush()
                os._exit(code)
        stdout.write(json.dumps({"pid": pid}).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    serve(sys.argv[1:])
