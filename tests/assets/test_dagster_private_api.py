"""Every private name of Dagster and dagster-celery that content_assets.distributed uses still
exists with the parameters it is called with. This test is what guards the upper bounds on
`dagster` and `dagster-celery` in pyproject.toml: raise a bound only when it passes on the new
release (and the distributed tests with it)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
from typing import Any

import pytest

# (module, attribute path, the parameter names it must accept in this order, or None for a
# value that is not called). A new private name used in content_assets.distributed belongs here.
PRIVATE_NAMES: list[tuple[str, str, list[str] | None]] = [
    # launcher.py: the run launcher's interface and what `dagster api execute_run` calls
    ("dagster._core.launcher", "RunLauncher.launch_run", ["self", "context"]),
    ("dagster._core.launcher", "RunLauncher.terminate", ["self", "run_id"]),
    ("dagster._core.launcher", "RunLauncher.check_run_worker_health", ["self", "run"]),
    ("dagster._core.launcher", "RunLauncher.supports_check_run_worker_health", None),
    ("dagster._core.launcher", "RunLauncher.dispose", ["self"]),
    ("dagster._core.launcher", "RunLauncher._instance", None),
    ("dagster._core.launcher", "CheckRunHealthResult", ["status", "msg"]),
    ("dagster._core.launcher", "LaunchRunContext.dagster_run", None),
    ("dagster._core.launcher", "WorkerStatus.RUNNING", None),
    ("dagster._core.launcher", "WorkerStatus.FAILED", None),
    ("dagster._core.launcher", "WorkerStatus.UNKNOWN", None),
    ("dagster._serdes", "ConfigurableClass.config_type", []),
    ("dagster._serdes", "ConfigurableClass.from_config_value", ["inst_data", "config_value"]),
    ("dagster._serdes", "ConfigurableClassData", ["module_name", "class_name", "config_yaml"]),
    (
        "dagster._cli.api",
        "_execute_run_command_body",
        ["run_id", "instance", "write_stream_fn", "set_exit_code_on_failure"],
    ),
    ("dagster._core.instance.ref", "InstanceRef.from_dir", ["base_dir"]),
    ("dagster._utils.interrupts", "capture_interrupts", []),
    ("dagster._utils.interrupts", "setup_interrupt_handlers", []),
    # run_preload.py: the job loaded through Dagster's own loading path
    (
        "dagster._core.definitions.reconstruct",
        "ReconstructableRepository.for_module",
        ["module", "fn_name"],
    ),
    ("dagster._core.definitions.reconstruct", "ReconstructableRepository.get_definition",
     ["self"]),
    # workers.py: dagster-celery's execute_plan task, on a kept instance
    ("dagster._core.definitions.reconstruct", "ReconstructableJob.from_dict", ["val"]),
    ("dagster._core.events", "EngineEventData", ["metadata", "error", "marker_start",
                                                 "marker_end"]),
    (
        "dagster._core.execution.api",
        "create_execution_plan",
        ["job", "run_config", "step_keys_to_execute", "known_state"],
    ),
    (
        "dagster._core.execution.api",
        "execute_plan_iterator",
        ["execution_plan", "job", "dagster_run", "instance", "retry_mode", "run_config"],
    ),
    (
        "dagster._grpc.types",
        "ExecuteStepArgs",
        ["job_origin", "run_id", "step_keys_to_execute", "instance_ref", "retry_mode",
         "known_state"],
    ),
    ("dagster._serdes", "unpack_value", ["val", "as_type"]),
    (
        "dagster",
        "DagsterInstance.report_engine_event",
        ["self", "message", "dagster_run", "engine_event_data", "cls", "step_key"],
    ),
    ("dagster_celery.config", "TASK_EXECUTE_PLAN_NAME", None),
    ("dagster_celery.core_execution_loop", "DELEGATE_MARKER", None),
    ("dagster_celery.executor", "CeleryExecutor.for_cli",
     ["broker", "backend", "include", "config_source"]),
    ("dagster_celery.executor", "CeleryExecutor.app_args", ["self"]),
    ("dagster_celery.make_app", "make_app", ["app_args"]),
    # result_wait.py: dagster-celery's orchestration loop, copied with its wait changed
    ("dagster_celery.executor", "_submit_task",
     ["app", "plan_context", "step", "queue", "priority", "known_state"]),
    ("dagster_celery.core_execution_loop", "_get_run_priority", ["context"]),
    ("dagster_celery.core_execution_loop", "_get_step_priority",
     ["context", "step", "task_default_priority"]),
    ("dagster_celery.core_execution_loop", "_warn_on_priority_misuse",
     ["context", "execution_plan"]),
    ("dagster_celery.tags", "DAGSTER_CELERY_QUEUE_TAG", None),
    ("dagster_celery.tags", "DAGSTER_CELERY_STEP_PRIORITY_TAG", None),
    ("dagster._core.execution.context.system", "PlanOrchestrationContext.for_step", None),
    ("dagster._core.execution.context.system", "PlanOrchestrationContext.executor", None),
    ("dagster._core.execution.plan.plan", "ExecutionPlan.artifacts_persisted", None),
    ("dagster._core.execution.plan.plan", "ExecutionPlan.step_keys_to_execute", None),
    ("dagster._core.execution.plan.plan", "ExecutionPlan.get_step_by_key", ["self", "key"]),
    (
        "dagster._core.execution.plan.plan",
        "ExecutionPlan.start",
        ["self", "retry_mode", "sort_key_fn", "max_concurrent", "tag_concurrency_limits",
         "instance_concurrency_context"],
    ),
    ("dagster._core.execution.plan.active", "ActiveExecution.is_complete", None),
    ("dagster._core.execution.plan.active", "ActiveExecution.check_for_interrupts", ["self"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.mark_interrupted", ["self"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.get_step_by_key",
     ["self", "step_key"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.handle_event",
     ["self", "dagster_event"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.verify_complete",
     ["self", "job_context", "step_key"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.plan_events_iterator",
     ["self", "job_context"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.get_steps_to_execute", ["self"]),
    ("dagster._core.execution.plan.active", "ActiveExecution.get_known_state", ["self"]),
    ("dagster._core.execution.plan.instance_concurrency_context", "InstanceConcurrencyContext",
     ["instance", "dagster_run"]),
    ("dagster._core.execution.plan.step", "IExecutionStep", None),
    ("dagster._core.execution.retries", "RetryMode", None),
    ("dagster._core.events", "EngineEventData.interrupted", ["steps_interrupted"]),
    ("dagster._core.events", "EngineEventData.engine_error", ["error"]),
    ("dagster._utils.error", "serializable_error_info_from_exc_info", ["exc_info"]),
    ("dagster._check", "invariant", ["condition", "desc"]),
    ("dagster_shared.error", "SerializableErrorInfo", None),
    ("dagster", "DagsterEvent.engine_event", ["plan_context", "message", "event_specific_data"]),
    ("dagster", "DagsterSubprocessError", None),
    # sensor_ticks.py: a sensor's last tick for `content-pipeline status`
    ("dagster._core.definitions.run_request", "InstigatorType.SENSOR", None),
    (
        "dagster",
        "DagsterInstance.all_instigator_state",
        ["self", "repository_origin_id", "repository_selector_id", "instigator_type"],
    ),
    ("dagster", "DagsterInstance.get_ticks", ["self", "origin_id", "selector_id", "before",
                                              "after", "limit"]),
]


def _resolve(module: str, path: str) -> Any:
    value: Any = importlib.import_module(module)
    for part in path.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize(
    ("module", "path", "parameters"), PRIVATE_NAMES, ids=[f"{m}:{p}" for m, p, _ in PRIVATE_NAMES]
)
def test_private_name_is_unchanged(module: str, path: str, parameters: list[str] | None) -> None:
    if path.endswith("._instance"):
        # An attribute every RunLauncher's instance carries (set when the instance loads it).
        klass = _resolve(module, path.rsplit(".", 1)[0])
        assert isinstance(getattr(klass, "_instance", None), property), path
        return
    value = _resolve(module, path)
    if parameters is None:
        return
    found = list(inspect.signature(value).parameters)
    # The leading parameters we pass, in order; any later ones must have defaults.
    assert found[: len(parameters)] == parameters, (path, found)
    rest = list(inspect.signature(value).parameters.values())[len(parameters):]
    assert all(p.default is not p.empty or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
               for p in rest), (path, found)


# inspect.getsource of dagster_celery.core_execution_loop.core_celery_execution_loop, 0.29.27.
_STOCK_LOOP_SHA256 = "3f780815d35a19871a6e2d42ee85a49ffbe8aeb6e36b473c16c8811b6a792389"


def test_the_copied_orchestration_loop_matches_dagster_celerys() -> None:
    """content_assets.distributed.result_wait._orchestrate is a copy of dagster-celery's loop
    with its wait changed. When dagster-celery changes its loop, port the change into the copy,
    then put the new digest here."""
    from dagster_celery import core_execution_loop

    source = inspect.getsource(core_execution_loop.core_celery_execution_loop)
    assert hashlib.sha256(source.encode()).hexdigest() == _STOCK_LOOP_SHA256
