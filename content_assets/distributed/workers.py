"""The Celery app of the batch job's workers, configured from the same environment variables
as the job's executor (content_assets.distributed.executors):

    celery -A content_assets.distributed.workers worker --hostname w1@%h --queues dagster

Every worker needs what a step needs: this package, the Dagster instance's settings
(DAGSTER_HOME, the DAGSTER_POSTGRES_* variables), the store (CONTENT_STORE_DIR: object storage,
or a path every worker reaches) and the resources' variables and secrets (OPENAI_API_KEY,
AWS_*, ...), because a step loads content_assets.definitions in the worker from the worker's
own environment.

A worker renews the hold on the task it runs (content_assets.distributed.heartbeat), so a
step longer than the visibility timeout is never handed to a second worker, while a killed
worker's step is, one timeout (90 s by default) after the kill.

The task is dagster-celery's `execute_plan` (same name, same arguments, same events), with one
change: the worker keeps one `DagsterInstance` per instance ref for its whole life instead of
building one per task. Building it from PostgreSQL (storages, schema checks) took about a
quarter of a second of every step. Keeping it is safe: the worker runs one task at a time in
one thread (the solo pool), and an instance is a long-lived object by design (the webserver and
the daemon hold one). Its storages keep their database connection (`keep_connections`, as the
webserver's do): opening one per operation was the largest cost of a step. A connection that
PostgreSQL dropped (a restart) fails the operation that finds it, and SQLAlchemy opens a new
one for the next; the step's retry covers the failed one.
"""

import importlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_received, worker_ready
from dagster import DagsterInstance, serialize_value
from dagster._core.definitions.reconstruct import ReconstructableJob
from dagster._core.events import EngineEventData
from dagster._core.execution.api import create_execution_plan, execute_plan_iterator
from dagster._core.instance.ref import InstanceRef
from dagster._grpc.types import ExecuteStepArgs
from dagster._serdes import unpack_value
from dagster_celery.config import TASK_EXECUTE_PLAN_NAME
from dagster_celery.core_execution_loop import DELEGATE_MARKER
from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app

from content_assets.definitions import build_resources
from content_assets.distributed.executors import (
    keep_connections,
    visibility_timeout_s,
    worker_app_args,
)
from content_assets.distributed.heartbeat import TaskHold
from content_assets.resources import EmbedderResource, NormaliserResource
from content_core.formats import default_formats
from content_core.pipeline.pool import warm_pool

# dagster-celery's functions carry no annotations: the types relied on here (their parameters
# are checked by tests/assets/test_dagster_private_api.py). Any: Celery's settings, of mixed types.
_for_cli: Callable[..., CeleryExecutor] = CeleryExecutor.for_cli
_app_args: Callable[[CeleryExecutor], Mapping[str, Any]] = CeleryExecutor.app_args
_make_app: Callable[[Mapping[str, Any]], Celery] = make_app

# The calls dagster-celery's own `app` module makes.
executor = _for_cli(**worker_app_args(os.environ))
app = _make_app(_app_args(executor))

_INSTANCES: dict[str, DagsterInstance] = {}
_log = logging.getLogger(__name__)
# The tasks this worker has taken, their hold in Redis renewed while they run.
_HOLD = TaskHold(app, visibility_timeout_s(os.environ))


# Any: Celery's worker request and signal arguments are untyped.
@task_received.connect  # type: ignore[untyped-decorator]
def hold_task(request: Any, **_signal: Any) -> None:
    """Renew the hold on a task from when this worker takes it."""
    _HOLD.hold(request.task_id, request.message.delivery_tag)


@task_postrun.connect  # type: ignore[untyped-decorator]
def release_task(task_id: str, **_signal: Any) -> None:
    """Stop renewing a task that has run (late acks: acknowledged next)."""
    _HOLD.release(task_id)


@worker_ready.connect  # type: ignore[untyped-decorator]
def warm_up(**_signal: Any) -> None:
    """Before the first task: start the pool the steps will use (the resources' settings from
    this environment), and load what a worker's first step used to load on its own (about a
    second of CPU): the instance and its database connection, the job through Dagster's own
    loading path, the format registry and the table reader. What fails here is logged: the
    first step then loads it, or fails with its own error."""
    _HOLD.start()
    resources = build_resources(os.environ)
    normaliser, embedder = resources["normaliser"], resources["embedder"]
    assert isinstance(normaliser, NormaliserResource) and isinstance(embedder, EmbedderResource)
    started = time.perf_counter()
    try:
        warm_pool(normaliser.to_core(), embedder.to_core())
        _log.info("the worker's pool started in %.1f s", time.perf_counter() - started)
    except Exception:
        _log.exception("the worker's pool did not start; its first step will start it")
    started = time.perf_counter()
    try:
        if home := os.environ.get("DAGSTER_HOME"):
            # The ref a run sends is its instance's, read from the same folder.
            worker_instance(InstanceRef.from_dir(home))
        # What a run's process inherits from its fork server: the clients, and the job loaded
        # through Dagster's own loading path.
        importlib.import_module("content_assets.distributed.run_preload")
        default_formats()
        importlib.import_module("pyarrow.dataset")
        _log.info("the worker's instance and job loaded in %.1f s", time.perf_counter() - started)
    except Exception:
        _log.exception("the worker's instance or job did not load; its first step will load it")


def worker_instance(ref: InstanceRef) -> DagsterInstance:
    """This worker process's instance for `ref`, built on first use and kept."""
    key = serialize_value(ref)
    if key not in _INSTANCES:
        instance = DagsterInstance.from_ref(ref)
        keep_connections(instance)
        _INSTANCES[key] = instance
    return _INSTANCES[key]


# Any: Celery's bound task and dagster-celery's packed arguments are untyped JSON values.
# Celery's decorator is untyped; the signature below is the task's.
@app.task(bind=True, name=TASK_EXECUTE_PLAN_NAME)  # type: ignore[untyped-decorator]
def execute_plan(self: Any, execute_step_args_packed: Any, executable_dict: Any) -> list[str]:
    """Run the steps of `execute_step_args_packed` and return their serialised events: what
    dagster_celery.tasks.create_task's task does, on the worker's kept instance."""
    args = unpack_value(execute_step_args_packed, as_type=ExecuteStepArgs)
    assert args.instance_ref is not None, "the executor always sends its instance"
    instance = worker_instance(args.instance_ref)
    recon_job = ReconstructableJob.from_dict(executable_dict)
    run = instance.get_run_by_id(args.run_id)
    if run is None:
        raise LookupError(f"Could not load run {args.run_id}")
    plan = create_execution_plan(
        recon_job,
        run.run_config,
        step_keys_to_execute=args.step_keys_to_execute,
        known_state=args.known_state,
    )
    step_keys = ", ".join(args.step_keys_to_execute or [])
    handle = plan.step_handle_for_single_step_plans()
    events: list[Any] = [
        instance.report_engine_event(
            f"Executing steps {step_keys} in celery worker",
            run,
            EngineEventData(
                {"step_keys": step_keys, "Celery worker": self.request.hostname},
                marker_end=DELEGATE_MARKER,
            ),
            CeleryExecutor,
            step_key=handle.to_key() if handle else None,
        )
    ]
    events.extend(
        execute_plan_iterator(
            execution_plan=plan,
            job=recon_job,
            dagster_run=run,
            instance=instance,
            retry_mode=args.retry_mode,
            run_config=run.run_config,
        )
    )
    return [serialize_value(event) for event in events]
