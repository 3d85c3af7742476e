"""Where the batch job's steps run: in this process (the local default) or on Celery workers
(`CONTENT_EXECUTOR=celery`), with the Celery settings both sides share.

On Celery, each step of a batch run (raw_files, normalised_artifacts, ...) is one task that
any worker listening on the broker's `dagster` queue takes, so the batches of one sensor tick
(one run each) run on several workers, on several hosts, at once.

A worker killed mid-step (SIGKILL, a lost host) costs that step a second execution, never a
lost or duplicated row, for two reasons that hold together:

- late acks: a task is acknowledged only after it returns (`task_acks_late`), so the broker
  still holds the task of a worker that died; Redis hands it to another worker once it has
  been unacknowledged for `visibility_timeout` seconds (`CONTENT_CELERY_VISIBILITY_TIMEOUT_S`,
  an hour by default: set it above the longest step, or a slow step is started twice);
- idempotent steps: a step writes its batch's Parquet file of its table by an atomic rename
  that replaces the file (content_core.store; on an `s3://` store, one PUT of the same key,
  which replaces the object whole, and a killed attempt's unfinished multipart upload is never
  visible), and blobs are content-addressed, so a step run twice, or run after a killed
  attempt, leaves exactly one copy of the batch's rows.
"""

import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg

# The environment variables read here (the workers read the same ones, content_assets.workers).
EXECUTOR_ENV = "CONTENT_EXECUTOR"
BROKER_ENV = "CONTENT_CELERY_BROKER"
BACKEND_ENV = "CONTENT_CELERY_BACKEND"
VISIBILITY_ENV = "CONTENT_CELERY_VISIBILITY_TIMEOUT_S"
CELERY_ENV = (BROKER_ENV, BACKEND_ENV, VISIBILITY_ENV)

DEFAULT_BROKER = "redis://localhost:6379/0"
# A run's orchestrator looks at its steps in flight when one of their results is published on
# the result backend's channel (ResultWait), and at the latest this often: dagster-celery's own
# pace, which also bounds how long a termination request waits.
TICK_S = 1.0
# Without a result channel (a backend that only stores results), it looks this often instead;
# a look is one read of the backend per step in flight.
POLL_INTERVAL_S = 0.1
# Kept Postgres connections: recycled after an hour, and a few more while several threads
# (the run's log capture, the orchestrator) write at once.
_POOL_RECYCLE_S = 3600
_POOL_OVERFLOW = 4
# The instances whose storages keep their connections already.
_KEPT: weakref.WeakSet[dg.DagsterInstance] = weakref.WeakSet()
DEFAULT_VISIBILITY_TIMEOUT_S = 3600.0
EXECUTORS = ("in_process", "celery")


# Any: Celery's own settings, of mixed types, passed through to celery.Celery(config_source=).
def celery_settings(environ: Mapping[str, str]) -> dict[str, Any]:
    """The Celery app settings of the job's executor and of every worker (they must agree)."""
    visibility_s = float(environ.get(VISIBILITY_ENV) or DEFAULT_VISIBILITY_TIMEOUT_S)
    return {
        # Acknowledge a task when it has run, so a dead worker's task goes back to the queue...
        "task_acks_late": True,
        # ... also when the worker's child process dies under a prefork pool.
        "task_reject_on_worker_lost": True,
        # A worker takes one task at a time: a busy worker never holds a waiting step back.
        "worker_prefetch_multiplier": 1,
        # A step runs in the worker's own process, which is not daemonic, so the normaliser's
        # worker pool (time budget, memory cap, crash isolation) starts there as it does
        # locally and stays warm between steps. A prefork child is daemonic and may not start
        # processes. Concurrency is one step per worker process: start one per core.
        "worker_pool": "solo",
        "worker_concurrency": 1,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {
            "visibility_timeout": visibility_s,
            # Sweep for the tasks of dead workers every few seconds, not every 100.
            "unacked_restore_interval": max(1.0, min(visibility_s / 4, 10.0)),
            "unacked_restore_throttle": 1,
        },
        "result_expires": 7 * 24 * 3600,
    }


class ResultWait:
    """Stands for the `time` module in dagster-celery's orchestration loop, whose one use of
    it is the sleep between two looks at the steps in flight: the sleep ends as soon as one of
    those steps' results is published, instead of after a fixed tick.

    dagster-celery polled: a look every second (TICK_SECONDS), so each step of a batch ended
    up to a second after its work did, and a shorter tick costs a backend read per step in
    flight per look (at 0.1 s, a third of a run process's CPU). Celery's Redis result backend
    already subscribes the sending app to each task's result channel when the task is sent
    (`on_task_call`), and the worker publishes there when it stores the result; this drains
    that channel (the backend's `result_consumer`, what `AsyncResult.get` waits on), so a
    step's end is noticed at once and a quiet wait reads nothing. The app is the one the loop
    made in this thread (`make_app`, wrapped by `install`); with a backend that has no channel
    it sleeps `POLL_INTERVAL_S`.
    """

    def __init__(self) -> None:
        self._apps = threading.local()

    # Any: a Celery app, typed loosely in dagster-celery.
    def _remembering(self, make_app: Callable[..., Any]) -> Callable[..., Any]:
        """`make_app`, noting the app it returns as this thread's."""

        def make(*args: Any, **kwargs: Any) -> Any:
            app = make_app(*args, **kwargs)
            self._apps.app = app
            return app

        return make

    def sleep(self, seconds: float) -> None:
        app = getattr(self._apps, "app", None)
        consumer = getattr(app.backend, "result_consumer", None) if app is not None else None
        if consumer is None:
            time.sleep(min(seconds, POLL_INTERVAL_S))
            return
        # Returns when a message arrives on a subscribed channel (Celery notes a ready
        # result and unsubscribes), or after at most `seconds` (Celery caps one wait at 1 s).
        consumer.drain_events(timeout=seconds)

    @classmethod
    def install(cls) -> "ResultWait":
        """Make dagster-celery's loop in this process wait on result channels (once)."""
        from dagster_celery import core_execution_loop

        # The loop module's own imports, replaced: not part of its exported names.
        current = core_execution_loop.time  # type: ignore[attr-defined]
        if isinstance(current, cls):
            return current
        wait = cls()
        make_app = core_execution_loop.make_app  # type: ignore[attr-defined]
        core_execution_loop.make_app = wait._remembering(make_app)  # type: ignore[attr-defined]
        core_execution_loop.time = wait  # type: ignore[attr-defined,assignment]
        # The module's longest wait; declared an int there, any number works.
        core_execution_loop.TICK_SECONDS = TICK_S  # type: ignore[assignment]
        return wait


def keep_connections(instance: dg.DagsterInstance) -> None:
    """Let `instance`'s storages keep their database connection between operations.

    dagster-postgres opens a new connection for every read and write by default (so that an
    idle process holds none); a step writes a dozen events, and each connection costs a
    Postgres backend process, which made connecting the largest cost of a distributed step.
    A Celery worker and a run's orchestrator write all the time, so they keep one, as
    Dagster's webserver does (the same call). No statement timeout: a step's writes must
    not be cut short. A SQLite instance is left as it is. A second call for one instance does
    nothing (each call would replace the storages' engines, and their connections, again).
    """
    if instance in _KEPT:
        return
    instance.optimize_for_webserver(
        statement_timeout=0, pool_recycle=_POOL_RECYCLE_S, max_overflow=_POOL_OVERFLOW
    )
    _KEPT.add(instance)


def _broker(environ: Mapping[str, str]) -> str:
    return environ.get(BROKER_ENV) or DEFAULT_BROKER


def worker_app_args(environ: Mapping[str, str]) -> dict[str, Any]:
    """Broker, result backend and settings of a worker's Celery app, resolved from `environ`."""
    broker = _broker(environ)
    return {
        "broker": broker,
        "backend": environ.get(BACKEND_ENV) or broker,
        "config_source": celery_settings(environ),
    }


def _source(environ: Mapping[str, str], name: str, default: str) -> str | dict[str, str]:
    # An {"env": NAME} source is resolved where the run executes and never stored with the
    # run: a broker URL may carry a password.
    return {"env": name} if environ.get(name) else default


def build_executor(environ: Mapping[str, str]) -> dg.ExecutorDefinition:
    """The executor named by CONTENT_EXECUTOR: `in_process` (default) or `celery`."""
    kind = environ.get(EXECUTOR_ENV) or "in_process"
    if kind == "in_process":
        return dg.in_process_executor
    if kind != "celery":
        raise ValueError(f"{EXECUTOR_ENV}={kind!r}: expected one of {', '.join(EXECUTORS)}")
    try:
        from dagster_celery import celery_executor
        from dagster_celery.config import TASK_EXECUTE_PLAN_NAME
    except ImportError as exc:
        raise ImportError(
            f"{EXECUTOR_ENV}=celery needs dagster-celery: "
            "pip install 'content-pipeline[distributed]'"
        ) from exc
    broker = _broker(environ)
    # Results go next to the tasks unless a backend is set apart (as worker_app_args does).
    backend_env = BACKEND_ENV if environ.get(BACKEND_ENV) else BROKER_ENV
    config = {
        "broker": _source(environ, BROKER_ENV, broker),
        "backend": _source(environ, backend_env, broker),
        "config_source": celery_settings(environ),
    }

    def create(context: dg.InitExecutorContext) -> dg.Executor:
        # In the run's own process, where the orchestration loop runs.
        ResultWait.install()
        keep_connections(context.instance)
        # dagster-celery defines its task again for every step it submits; Celery 5.7 warns
        # each time that the name is taken (by that same task).
        warnings.filterwarnings(
            "ignore", message=f"Task name '{TASK_EXECUTE_PLAN_NAME}' is already registered"
        )
        return celery_executor.executor_creation_fn(context)  # type: ignore[misc]

    executor = dg.ExecutorDefinition(
        name="celery",
        config_schema=celery_executor.config_schema.as_field(),
        requirements=celery_executor.get_requirements,
        executor_creation_fn=create,
        description=celery_executor.description,
    )
    return executor.configured(config, name="celery")
