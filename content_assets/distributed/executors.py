"""Where the batch job's steps run: in this process (the local default) or on Celery workers
(`CONTENT_EXECUTOR=celery`), with the Celery settings both sides share.

On Celery, each step of a batch run (raw_files, normalised_artifacts, ...) is one task that
any worker listening on the broker's `dagster` queue takes, so the batches of one sensor tick
(one run each) run on several workers, on several hosts, at once.

A worker killed mid-step (SIGKILL, a lost host) costs that step a second execution, never a
lost or duplicated row, for two reasons that hold together:

- late acks: a task is acknowledged only after it returns (`task_acks_late`), so the broker
  still holds the task of a worker that died; Redis hands it to another worker once its hold
  is `visibility_timeout` seconds old (`CONTENT_CELERY_VISIBILITY_TIMEOUT_S`, 90 s by
  default). A live worker renews the hold on the task it runs every sixth of that
  (content_assets.distributed.heartbeat), so a step longer than the timeout is never started
  twice, and a dead worker's step goes to another worker about 90 to 100 s after it died;
- idempotent steps: a step writes its batch's Parquet file of its table by an atomic rename
  that replaces the file (content_core.store; on an `s3://` store, one PUT of the same key,
  which replaces the object whole, and a killed attempt's unfinished multipart upload is never
  visible), and blobs are content-addressed, so a step run twice, or run after a killed
  attempt, leaves exactly one copy of the batch's rows.
"""

import warnings
import weakref
from collections.abc import Mapping
from typing import Any

import dagster as dg

# The environment variables read here (the workers read the same ones:
# content_assets.distributed.workers).
EXECUTOR_ENV = "CONTENT_EXECUTOR"
BROKER_ENV = "CONTENT_CELERY_BROKER"
BACKEND_ENV = "CONTENT_CELERY_BACKEND"
VISIBILITY_ENV = "CONTENT_CELERY_VISIBILITY_TIMEOUT_S"
CELERY_ENV = (BROKER_ENV, BACKEND_ENV, VISIBILITY_ENV)

DEFAULT_BROKER = "redis://localhost:6379/0"
# Kept Postgres connections: recycled after an hour, and a few more while several threads
# (the run's log capture, the orchestrator) write at once.
_POOL_RECYCLE_S = 3600
_POOL_OVERFLOW = 4
# The instances whose storages keep their connections already.
_KEPT: weakref.WeakSet[dg.DagsterInstance] = weakref.WeakSet()
# With the workers' renewal of their holds (heartbeat.py), this is how long a dead worker's
# task waits, not a bound on a step's duration.
DEFAULT_VISIBILITY_TIMEOUT_S = 90.0
EXECUTORS = ("in_process", "celery")


def visibility_timeout_s(environ: Mapping[str, str]) -> float:
    """Seconds after which Redis hands out again a task whose hold was not renewed."""
    return float(environ.get(VISIBILITY_ENV) or DEFAULT_VISIBILITY_TIMEOUT_S)


# Any: Celery's own settings, of mixed types, passed through to celery.Celery(config_source=).
def celery_settings(environ: Mapping[str, str]) -> dict[str, Any]:
    """The Celery app settings of the job's executor and of every worker (they must agree)."""
    visibility_s = visibility_timeout_s(environ)
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
        keep_connections(context.instance)
        # dagster-celery defines its task again for every step it submits; Celery 5.7 warns
        # each time that the name is taken (by that same task).
        warnings.filterwarnings(
            "ignore", message=f"Task name '{TASK_EXECUTE_PLAN_NAME}' is already registered"
        )
        make = celery_executor.executor_creation_fn
        assert make is not None, "dagster-celery's executor definition makes its executor"
        return make(context)

    executor = dg.ExecutorDefinition(
        name="celery",
        config_schema=celery_executor.config_schema.as_field(),
        requirements=celery_executor.get_requirements,
        executor_creation_fn=create,
        description=celery_executor.description,
    )
    return executor.configured(config, name="celery")
