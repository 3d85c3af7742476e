"""Evaluate the project's sensor in a test as the daemon would."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg


def tick_sensor(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    cursor: str | None,
    resources: Mapping[str, Any] | None = None,
) -> dg.SensorResult:
    """Evaluate `source_sensor` once and apply its partition requests, as the daemon
    would; returns the sensor's result."""
    sensor = defs.resolve_sensor_def("source_sensor")
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, resources=resources or defs.resources
    )
    result = sensor(context)
    assert isinstance(result, dg.SensorResult)
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    return result
