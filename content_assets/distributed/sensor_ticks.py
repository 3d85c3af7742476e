"""A sensor's last tick, read from the instance's schedule storage (what `content-pipeline
status` prints); instigator types are not part of Dagster's public API."""

from dataclasses import dataclass

import dagster as dg
from dagster._core.definitions.run_request import InstigatorType


@dataclass(frozen=True, slots=True)
class SensorTick:
    """One evaluation of a sensor: when (a Unix time), how it ended, and why it skipped."""

    timestamp: float
    status: str
    skip_reason: str | None


def last_sensor_tick(instance: dg.DagsterInstance, sensor_name: str) -> SensorTick | None:
    """The latest tick of the sensor named `sensor_name`; None when it has never ticked."""
    for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
        if state.instigator_name != sensor_name:
            continue
        ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=1)
        if ticks:
            tick = ticks[0]
            return SensorTick(tick.timestamp, tick.status.value, tick.skip_reason)
    return None
