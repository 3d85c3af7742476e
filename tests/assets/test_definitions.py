"""The real definitions load, validate, and hold exactly the expected objects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pydantic
import pytest

from content_assets.definitions import build_definitions

REPO = Path(__file__).resolve().parents[2]

EXPECTED_ASSETS = {
    "raw_files",
    "normalised_artifacts",
    "chunks",
    "chunk_embeddings",
    "search_index",
    "message_parts",
    "compressed_contexts",
    "agentic_extractions",
    "merged_extractions",
    "document_similarity",
}


def test_definitions_hold_the_expected_objects(tmp_path: Path) -> None:
    defs = build_definitions({"CONTENT_STORE_DIR": str(tmp_path)})
    repository = defs.get_repository_def()
    keys = {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()}
    assert keys == EXPECTED_ASSETS
    assert {job.name for job in repository.get_all_jobs()} >= {
        "ingest_batch_job",
        "compact_store_job",
    }
    assert {s.name for s in repository.sensor_defs} == {"source_sensor"}
    assert {s.name for s in repository.schedule_defs} == {
        "hourly_ingest_batch_job_schedule",
        "daily_compact_store_job_schedule",
    }
    sensor = defs.resolve_sensor_def("source_sensor")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    schedule = defs.resolve_schedule_def("hourly_ingest_batch_job_schedule")
    assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED
    compaction = defs.resolve_schedule_def("daily_compact_store_job_schedule")
    assert compaction.default_status == dg.DefaultScheduleStatus.STOPPED
    for key in EXPECTED_ASSETS:
        spec = repository.asset_graph.get(dg.AssetKey(key))
        assert spec.description and spec.group_name == "content"
        assert spec.partitions_def is not None
    # merged_extractions marks the batch finished: every other asset must run before it.
    final = dg.AssetKey("merged_extractions")
    upstream = repository.asset_graph.get_ancestor_asset_keys(final)
    assert {key.to_user_string() for key in upstream} == EXPECTED_ASSETS - {"merged_extractions"}


def test_resources_take_the_environment(tmp_path: Path) -> None:
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(tmp_path),
            "CONTENT_AGENT": "openai",
            "CONTENT_AGENT_MODEL": "gpt-4o-mini",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "CONTENT_OCR": "rapidocr",
            "CONTENT_OCR_LANGS": "eng+deu",
            "CONTENT_EMBEDDER": "openai",
            "CONTENT_EMBED_URL": "http://127.0.0.1:9/v1",
            "CONTENT_EMBED_MODEL": "nomic-embed-text",
            "CONTENT_EMBED_DIM": "128",
        }
    )
    resources = defs.resources or {}
    embedder = resources["embedder"].to_core()
    assert (embedder.kind, embedder.base_url, embedder.model, embedder.dimension) == (
        "openai",
        "http://127.0.0.1:9/v1",
        "nomic-embed-text",
        128,
    )
    assert resources["store"].store_dir == str(tmp_path)
    ocr = resources["normaliser"].to_core().ocr
    assert (ocr.mode, ocr.languages) == ("rapidocr", ("eng", "deu"))
    agent = resources["agent"].to_core()
    assert (agent.kind, agent.model, agent.base_url) == (
        "openai",
        "gpt-4o-mini",
        "http://127.0.0.1:9/v1",
    )


@pytest.mark.parametrize(
    "environment",
    [{"CONTENT_OCR": "paddle"}, {"CONTENT_OCR_LANGS": "english"}],
    ids=["unknown-engine", "not-a-language-code"],
)
def test_a_bad_ocr_setting_is_refused_when_resources_are_built(
    tmp_path: Path, environment: dict[str, str]
) -> None:
    with pytest.raises(pydantic.ValidationError):
        build_definitions({"CONTENT_STORE_DIR": str(tmp_path), **environment})


@pytest.mark.parametrize(
    ("environment", "uri", "kind"),
    [
        pytest.param({}, "examples/inbox", "LocalFolderSource", id="default-folder"),
        pytest.param({"CONTENT_SOURCE_DIR": "/data/in"}, "/data/in", "LocalFolderSource",
                     id="source-dir"),
        pytest.param({"CONTENT_SOURCE": "file:///data/in"}, "file:///data/in",
                     "LocalFolderSource", id="file-uri"),
        # CONTENT_SOURCE wins over CONTENT_SOURCE_DIR, as it always did.
        pytest.param({"CONTENT_SOURCE": "s3://bucket/inbox", "CONTENT_SOURCE_DIR": "/data/in"},
                     "s3://bucket/inbox", "S3ObjectSource", id="s3-prefix"),
    ],
)
def test_the_source_resource_is_bound_under_source(
    tmp_path: Path, environment: dict[str, str], uri: str, kind: str
) -> None:
    defs = build_definitions(
        {"CONTENT_STORE_DIR": str(tmp_path), "CONTENT_SOURCE_ID": "in", **environment}
    )
    resources = defs.resources or {}
    assert "source_folder" not in resources
    source = resources["source"]
    assert source.uri == uri
    built = source.get_source()
    assert type(built).__name__ == kind and built.source_id == "in"
    for instigator in (
        defs.resolve_sensor_def("source_sensor"),
        defs.resolve_schedule_def("hourly_ingest_batch_job_schedule"),
    ):
        assert {"store", "source"} <= set(instigator.required_resource_keys)


def test_a_source_of_an_unknown_scheme_is_refused_when_resources_are_built(
    tmp_path: Path,
) -> None:
    with pytest.raises(pydantic.ValidationError, match=r"no source for the scheme gs://.*s3://"):
        build_definitions({"CONTENT_STORE_DIR": str(tmp_path), "CONTENT_SOURCE": "gs://b/in"})


def test_dagster_validates_the_workspace(tmp_path: Path) -> None:
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "CONTENT_STORE_DIR": str(tmp_path / "s")}
    dagster = Path(sys.executable).parent / "dagster"
    completed = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
