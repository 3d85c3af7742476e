"""The Dagster UI, started as the README says, lists the six assets, the sensor (running) and
the schedules (stopped): asked through the webserver's own GraphQL API on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]

QUERY = """
{ repositoriesOrError { ... on RepositoryConnection { nodes {
    assetNodes { assetKey { path } }
    sensors { name sensorState { status } }
    schedules { name scheduleState { status } }
} } } }
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
@pytest.mark.timeout(600)  # the webserver's start is given 240 s
def test_ui_lists_assets_sensor_and_schedule(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "CONTENT_STORE_DIR": str(tmp_path / "s")}
    webserver = Path(sys.executable).parent / "dagster-webserver"
    process = subprocess.Popen(
        [str(webserver), "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Generous: on a loaded 2-core machine the webserver takes a while to load the code.
        deadline = time.monotonic() + 240
        answer = None
        while time.monotonic() < deadline:
            try:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/graphql", json={"query": QUERY}, timeout=60
                )
                answer = response.json()["data"]["repositoriesOrError"]["nodes"]
                if answer:
                    break
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                pass
            time.sleep(0.5)
        assert answer, "the webserver did not answer"
        (repository,) = answer
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
        assert sensors["source_folder_sensor"] == "RUNNING"
        schedules = {s["name"]: s["scheduleState"]["status"] for s in repository["schedules"]}
        assert schedules["hourly_ingest_batch_job_schedule"] == "STOPPED"
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
