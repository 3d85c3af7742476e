"""Every private name of Dagster and dagster-celery that content_assets.distributed uses still
exists with the parameters it is called with. This test is what guards the upper bounds on
`dagster` and `dagster-celery` in pyproject.toml: raise a bound only when it passes on the new
release (and the distributed tests with it)."""

from __future__ import annotations

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

