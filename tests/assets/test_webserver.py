"""The Dagster UI, started as the README says, lists the six assets, the sensor (running) and
the schedules (stopped): asked through the webserver's own GraphQL API on 127.0.0.1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.webserver import running_webserver


@pytest.mark.slow
@pytest.mark.timeout(600)  # the webserver's start is given 240 s
def test_ui_lists_assets_sensor_and_schedule(tmp_path: Path) -> None:
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "CONTENT_STORE_DIR": str(tmp_path / "s")}
    with running_webserver(env) as (_, nodes):
        (repository,) = nodes
        assets = {"/".join(node["assetKey"]["path"]) for node in repository["assetNodes"]}
        assert {
            "raw_files",
            "normalised_artifacts",
            "chunks",
            "compressed_contexts",
            "agentic_extractions",
            "merged_extractions",
        } <= assets
        sensors = {s["name"]: s["sensorState"]["status"] for s in repository["sensors"]}
        assert sensors["source_sensor"] == "RUNNING"
        schedules = {s["name"]: s["scheduleState"]["status"] for s in repository["schedules"]}
        assert schedules["hourly_ingest_batch_job_schedule"] == "STOPPED"
