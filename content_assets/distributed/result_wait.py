"""The Celery executor of a distributed run: dagster-celery's, except that the run notices a
finished step when the step's result is published instead of on its next one-second look.

dagster-celery's orchestration loop (`core_celery_execution_loop`) polls: it reads every step
in flight from the result backend, then sleeps `TICK_SECONDS` (one second), so each step of a
batch ended up to a second after its work did, and a shorter tick costs a backend read per step
in flight per look (at 0.1 s, a third of a run process's CPU). Celery's Redis result backend
already subscribes the sending app to each task's result channel when the task is sent
(`on_task_call`), and the worker publishes there when it stores the result. `ResultWait`
drains that channel (the backend's `result_consumer`, what `AsyncResult.get` waits on), so a
step's end is noticed at once and a quiet wait reads nothing.

The loop sleeps in its own module, so this executor runs a copy of it (`_orchestrate`, the same
events in the same order) whose sleep is `ResultWait.sleep`, rather than replacing the `time`,
`make_app` and `TICK_SECONDS` globals of dagster-celery's module. The Dagster and dagster-celery
names it uses are checked by tests/assets/test_dagster_private_api.py.
"""

import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

import dagster as dg
from celery import Celery
from celery.exceptions import TaskRevokedError
from dagster import _check as check
from dagster._core.events import EngineEventData
from dagster._core.execution.context.system import PlanOrchestrationContext
from dagster._core.execution.plan.instance_concurrency_context import (
    InstanceConcurrencyContext,
)
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._core.execution.plan.step import ExecutionStep, IExecutionStep
from dagster._core.execution.retries import RetryMode
from dagster._utils.error import serializable_error_info_from_exc_info
from dagster_celery import core_execution_loop as stock
from dagster_celery.executor import CeleryExecutor, _submit_task
from dagster_celery.make_app import make_app
from dagster_celery.tags import DAGSTER_CELERY_QUEUE_TAG, DAGSTER_CELERY_STEP_PRIORITY_TAG
from dagster_shared.error import SerializableErrorInfo

# The longest wait between two looks at the steps in flight: dagster-celery's own tick, which
# also bounds how long a termination request waits.
TICK_S = 1.0
# Without a result channel (a backend that only stores results), the loop looks this often;
# a look is one read of the backend per step in flight.
POLL_INTERVAL_S = 0.1

# dagster-celery's functions carry no annotations: the types this module relies on (their
# parameters are checked by tests/assets/test_dagster_private_api.py).
# Any: a Celery AsyncResult, and dagster-celery's untyped app arguments and known state.
_make_app: Callable[[Mapping[str, Any]], Celery] = make_app
_app_args: Callable[[CeleryExecutor], Mapping[str, Any]] = CeleryExecutor.app_args
_submit: Callable[[Celery, PlanOrchestrationContext, ExecutionStep, str, int, Any], Any] = (
    _submit_task
)
_run_priority: Callable[[PlanOrchestrationContext], int] = stock._get_run_priority
_step_priority: Callable[[PlanOrchestrationContext, ExecutionStep, int], int] = (
    stock._get_step_priority
)
_warn_on_priority_misuse: Callable[[PlanOrchestrationContext, ExecutionPlan], None] = (
    stock._warn_on_priority_misuse
)


class _SubprocessErrorType(Protocol):
    def __call__(
        self, message: str, *, subprocess_error_infos: list[SerializableErrorInfo]
    ) -> Exception: ...


# Dagster's error class, whose constructor takes untyped keyword arguments.
_subprocess_error: _SubprocessErrorType = dg.DagsterSubprocessError


class ResultWait:
    """The wait between two looks at a run's steps in flight: it ends as soon as one of their
    results is published on `app`'s result backend, or after `seconds`; with a backend that
    has no channel it sleeps `POLL_INTERVAL_S`."""

    def __init__(self, app: Celery) -> None:
        self._consumer = getattr(app.backend, "result_consumer", None)

    def sleep(self, seconds: float) -> None:
        if self._consumer is None:
            time.sleep(min(seconds, POLL_INTERVAL_S))
            return
        # Returns when a message arrives on a subscribed channel (Celery notes a ready
        # result and unsubscribes), or after at most `seconds` (Celery caps one wait at 1 s).
        self._consumer.drain_events(timeout=seconds)


class ChannelCeleryExecutor(dg.Executor):
    """dagster-celery's executor (`celery`: its settings, task and queue), whose orchestration
    loop waits on result channels (`ResultWait`) instead of sleeping a fixed tick."""

    def __init__(self, celery: CeleryExecutor) -> None:
        self._celery = celery

    @property
    def retries(self) -> RetryMode:
        retries: RetryMode = self._celery.retries
        return retries

    def execute(
        self, plan_context: PlanOrchestrationContext, execution_plan: ExecutionPlan
    ) -> Iterator[dg.DagsterEvent]:
        return _orchestrate(plan_context, execution_plan, _make_app(_app_args(self._celery)))


def _orchestrate(
    job_context: PlanOrchestrationContext, execution_plan: ExecutionPlan, app: Celery
) -> Iterator[dg.DagsterEvent]:
    """dagster_celery.core_execution_loop.core_celery_execution_loop (0.29), line for line
    but for the wait at the end of each look."""
    # If there are no step keys to execute, then any io managers will not be used.
    if len(execution_plan.step_keys_to_execute) > 0:
        # https://github.com/dagster-io/dagster/issues/2440
        check.invariant(
            execution_plan.artifacts_persisted,
            "Cannot use in-memory storage with Celery, use filesystem (on top of NFS or "
            "similar system that allows files to be available to all nodes), S3, or GCS",
        )
    wait = ResultWait(app)
    task_default_priority = int(app.conf.task_default_priority)
    task_default_queue = str(app.conf.task_default_queue)

    def priority_for_step(step: IExecutionStep) -> float:
        tags = step.tags or {}
        step_priority = int(tags.get(DAGSTER_CELERY_STEP_PRIORITY_TAG, task_default_priority))
        return -1 * step_priority + -1 * _run_priority(job_context)

    def priority_for_key(step_key: str) -> float:
        return priority_for_step(execution_plan.get_step_by_key(step_key))

    _warn_on_priority_misuse(job_context, execution_plan)
    step_results: dict[str, Any] = {}  # Any: step key -> celery.AsyncResult
    step_errors: dict[str, SerializableErrorInfo] = {}

    with InstanceConcurrencyContext(
        job_context.instance, job_context.dagster_run
    ) as instance_concurrency_context:
        with execution_plan.start(
            retry_mode=job_context.executor.retries,
            sort_key_fn=priority_for_step,
            instance_concurrency_context=instance_concurrency_context,
        ) as active_execution:
            stopping = False

            while (not active_execution.is_complete and not stopping) or step_results:
                if active_execution.check_for_interrupts():
                    yield dg.DagsterEvent.engine_event(
                        job_context,
                        "Celery executor: received termination signal - revoking active tasks from"
                        " workers",
                        EngineEventData.interrupted(list(step_results.keys())),
                    )
                    stopping = True
                    active_execution.mark_interrupted()
                    for result in step_results.values():
                        result.revoke()
                results_to_pop = []
                for step_key, result in sorted(
                    step_results.items(), key=lambda x: priority_for_key(x[0])
                ):
                    if result.ready():
                        try:
                            step_events = result.get()
                        except TaskRevokedError:
                            step_events = []
                            step = active_execution.get_step_by_key(step_key)
                            yield dg.DagsterEvent.engine_event(
                                job_context.for_step(step),
                                f'celery task for running step "{step_key}" was revoked.',
                                EngineEventData(marker_end=stock.DELEGATE_MARKER),
                            )
                        except Exception:
                            # A step whose task failed: reported with every other one below.
                            step_events = []
                            step_errors[step_key] = serializable_error_info_from_exc_info(
                                sys.exc_info()
                            )
                        for step_event in step_events:
                            event = dg.deserialize_value(step_event, dg.DagsterEvent)
                            yield event
                            active_execution.handle_event(event)

                        results_to_pop.append(step_key)

                for step_key in results_to_pop:
                    if step_key in step_results:
                        del step_results[step_key]
                        active_execution.verify_complete(job_context, step_key)

                # process skips from failures or uncovered inputs
                yield from active_execution.plan_events_iterator(job_context)

                # don't add any new steps if we are stopping
                if stopping or step_errors:
                    continue

                for step in active_execution.get_steps_to_execute():
                    try:
                        queue = step.tags.get(DAGSTER_CELERY_QUEUE_TAG, task_default_queue)
                        yield dg.DagsterEvent.engine_event(
                            job_context.for_step(step),
                            f'Submitting celery task for step "{step.key}" to queue "{queue}".',
                            EngineEventData(marker_start=stock.DELEGATE_MARKER),
                        )
                        priority = _step_priority(job_context, step, task_default_priority)
                        step_results[step.key] = _submit(
                            app,
                            job_context,
                            step,
                            queue,
                            priority,
                            active_execution.get_known_state(),
                        )
                    except Exception:
                        yield dg.DagsterEvent.engine_event(
                            job_context,
                            "Encountered error during celery task submission.",
                            event_specific_data=EngineEventData.engine_error(
                                serializable_error_info_from_exc_info(sys.exc_info()),
                            ),
                        )
                        raise

                # The one change: wait for a result to be published, at most a tick.
                wait.sleep(TICK_S)

            if step_errors:
                raise _subprocess_error(
                    "During celery execution errors occurred in workers:\n{error_list}".format(
                        error_list="\n".join(
                            [f"[{key}]: {err.to_string()}" for key, err in step_errors.items()]
                        )
                    ),
                    subprocess_error_infos=list(step_errors.values()),
                )
