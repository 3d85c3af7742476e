"""A run launcher that starts each run in a process forked from a warm one.

Dagster's default launcher starts every run as a new interpreter (the code server spawns
`dagster api execute_run`), which imports Dagster, the definitions and the storage and broker
clients again: about 1.5 CPU-seconds of every batch run before it does anything. On a
deployment with many small batches that is a large share of the machine. This launcher starts,
on its first launch, a small process of its own (the "broker", a new interpreter) that owns a
`multiprocessing` fork server with `preload_modules` imported; each run is a process that fork
server starts, so a run starts with everything loaded. Each run is still its own process, in
its own session, and outlives the launcher as a default-launched run does. Nothing forks from
a process that runs threads: the broker only reads requests, and the fork server is the
standard library's (the same mechanism as the normaliser's worker pool).

    run_launcher:
      module: content_assets.distributed.launcher
      class: ForkingRunLauncher
      config:
        preload_modules: [content_assets.distributed.run_preload]

Runs execute on the launcher's host (the daemon's, for runs the daemon launches), with its
environment, as with the default launcher on a local code location. The fork server imports
code once: after changing the definitions, restart the daemon (and the webserver, if it
launches runs), as you would reload a code location. `terminate` sends SIGTERM to the run's
process, which Dagster turns into an interrupt that cancels the run; run monitoring asks
whether the process is alive.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from multiprocessing import forkserver
from typing import Any

import dagster as dg
from dagster._core.launcher import (
    CheckRunHealthResult,
    LaunchRunContext,
    RunLauncher,
    WorkerStatus,
)
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from content_assets.distributed.executors import keep_connections
from content_core.sandbox import is_process_alive

__all__ = ["ForkingRunLauncher", "PID_TAG", "HOST_TAG"]

PID_TAG = "content/run_pid"
HOST_TAG = "content/run_host"
DEFAULT_PRELOAD = ("content_assets.definitions",)
# The broker's program. Run as `-c`, not `-m`: the run target is then pickled as
# content_assets.distributed.launcher._execute, and no run process imports this module a
# second time as multiprocessing's main module.
_BROKER = "import sys; from content_assets.distributed.launcher import serve; serve(sys.argv[1:])"
# How long a launch waits for the broker to answer (its fork server may be importing).
_ANSWER_TIMEOUT_S = 300.0


class ForkingRunLauncher(RunLauncher, ConfigurableClass):
    """Launch each run in a process started by a fork server that has imported
    `preload_modules` (owned by a broker process this launcher starts)."""

    def __init__(
        self,
        inst_data: ConfigurableClassData | None = None,
        preload_modules: Sequence[str] = DEFAULT_PRELOAD,
    ) -> None:
        self._inst_data = inst_data
        self._preload = tuple(preload_modules)
        self._broker: subprocess.Popen[bytes] | None = None
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
                description="Modules the fork server imports before it starts runs.",
            )
        }

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
    ) -> ForkingRunLauncher:
        return cls(inst_data=inst_data, **config_value)

    def start(self) -> None:
        """Start the broker and its fork server now, not on the first launch (the fork server
        imports for a second or two); return when it is ready."""
        with self._lock:
            self._running_broker()

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        if run.job_code_origin is None:
            raise ValueError(f"run {run.run_id} has no code origin to load its job from")
        ref = dg.serialize_value(self._instance.get_ref())
        request = {"run_id": run.run_id, "instance_ref": ref}
        with self._lock:
            reply = self._ask(request)
        if "error" in reply:
            raise RuntimeError(f"the run launcher's broker could not start run {run.run_id}: "
                               f"{reply['error']}")
        self._instance.add_run_tags(
            run.run_id, {PID_TAG: str(reply["pid"]), HOST_TAG: socket.gethostname()}
        )

    def _ask(self, request: Mapping[str, str]) -> dict[str, Any]:
        """Send one request to the broker (started, or restarted, as needed); its reply."""
        for _ in range(2):
            broker = self._running_broker()
            assert broker.stdin is not None
            try:
                broker.stdin.write(json.dumps(request).encode() + b"\n")
                broker.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass
            else:
                if (reply := _reply(broker)) is not None:
                    return reply
            self._stop_broker()
        raise RuntimeError(
            f"the run launcher's broker exited or did not answer in {_ANSWER_TIMEOUT_S:g} s; "
            "see the launcher's stderr"
        )

    def _running_broker(self) -> subprocess.Popen[bytes]:
        """The broker, started (and ready: its fork server has imported) if it was not."""
        if self._broker is None or self._broker.poll() is not None:
            self._broker = subprocess.Popen(
                [sys.executable, "-c", _BROKER, *self._preload],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,
            )
            if _reply(self._broker) != {"ready": True}:
                self._stop_broker()
                raise RuntimeError(
                    f"the run launcher's broker did not start in {_ANSWER_TIMEOUT_S:g} s; "
                    "see the launcher's stderr"
                )
        return self._broker

    def _stop_broker(self) -> None:
        broker, self._broker = self._broker, None
        if broker is None:
            return
        if broker.stdin is not None:
            try:
                broker.stdin.close()
            except BrokenPipeError:
                pass
        try:
            broker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            broker.kill()
            broker.wait(timeout=30)
        if broker.stdout is not None:
            broker.stdout.close()

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
            self._stop_broker()


def _reply(broker: subprocess.Popen[bytes]) -> dict[str, Any] | None:
    """The broker's next reply line; None when it exited or said nothing in time."""
    assert broker.stdout is not None
    try:
        answered, _, _ = select.select([broker.stdout], [], [], _ANSWER_TIMEOUT_S)
        line = broker.stdout.readline() if answered else b""
    except ValueError:  # its pipe was closed
        return None
    return json.loads(line) if line else None


def _nothing() -> None:
    """The fork server's first process, which shows that it has imported its preload."""


def _execute(request: Mapping[str, str]) -> None:
    """In a process the fork server started: run the requested run to its end, as
    `dagster api execute_run` does."""
    from dagster._cli.api import _execute_run_command_body
    from dagster._core.instance.ref import InstanceRef
    from dagster._utils.interrupts import capture_interrupts, setup_interrupt_handlers

    os.setsid()  # its own session: a signal to the launcher's group does not reach the run
    setup_interrupt_handlers()
    with capture_interrupts():
        ref = dg.deserialize_value(request["instance_ref"], InstanceRef)
        with dg.DagsterInstance.from_ref(ref) as instance:
            keep_connections(instance)
            _execute_run_command_body(
                request["run_id"], instance, lambda _event: None, set_exit_code_on_failure=True
            )


def serve(preload: Sequence[str]) -> None:
    """The broker: start a run process per request line on stdin, from a fork server that has
    imported `preload`, and answer each with its pid (a JSON line on stdout). Ends when stdin
    closes, leaving the runs running."""
    stdin = sys.stdin.buffer
    # Replies go on a descriptor of their own; stdout becomes stderr, so that nothing the fork
    # server or a run prints can reach the launcher as a reply.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    forkserver.ensure_running()  # it imports `preload` now, not on the first launch
    # The fork server starts a first process once it has imported `preload`: then say ready.
    probe = context.Process(target=_nothing)
    probe.start()
    probe.join(timeout=_ANSWER_TIMEOUT_S)
    replies.write(json.dumps({"ready": True}).encode() + b"\n")
    replies.flush()
    for line in stdin:
        request = json.loads(line)
        process = context.Process(target=_execute, args=(request,), name=request["run_id"])
        try:
            process.start()
            reply: dict[str, Any] = {"pid": process.pid}
        except OSError as exc:
            reply = {"error": str(exc)}
        replies.write(json.dumps(reply).encode() + b"\n")
        replies.flush()
        multiprocessing.active_children()  # forgets the runs that have ended
    replies.close()
    # Not Python's usual exit, which would wait for every run still going.
    os._exit(0)
