"""The deployment files: each instance yaml validated by Dagster's own config schemas (the
instance and every configurable class it names), the executor switch, and docker-compose.yml
and the Helm values parsed and cross-checked against the environment variables the code reads."""

from __future__ import annotations

import importlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster._config import process_config, resolve_to_config_type
from dagster._core.instance.ref import InstanceRef
from dagster._serdes.config_class import ConfigurableClassData
from dagster_postgres.utils import pg_url_from_config

from content_assets.definitions import build_definitions
from content_assets.distributed.executors import (
    BACKEND_ENV,
    BROKER_ENV,
    EXECUTOR_ENV,
    build_executor,
    celery_settings,
    keep_connections,
    worker_app_args,
)
from content_core.store.storage import split_uri

REPO = Path(__file__).resolve().parents[2]
INSTANCE_YAMLS = [REPO / "dagster.yaml", REPO / "deploy" / "dagster-postgres.yaml"]
COMPOSE = REPO / "docker-compose.yml"
HELM_VALUES = REPO / "deploy" / "helm" / "values.yaml"
HELM_S3_VALUES = REPO / "deploy" / "helm" / "values-s3.yaml"
# Services of docker-compose.yml that run the project's code (and so need its environment).
DAGSTER_SERVICES = ("webserver", "daemon", "worker")
# The variables S3Settings reads (content_core.store.storage).
_S3_ENV = ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
           "CONTENT_S3_URL_STYLE")
_ENV_NAME = re.compile(r"\b(?:CONTENT|OPENAI|DAGSTER)_[A-Z0-9_]+\b")


def _env_refs(value: object) -> Iterator[str]:
    """The variable names of every `env:` source in a parsed yaml document."""
    if isinstance(value, dict):
        if set(value) == {"env"}:
            yield str(value["env"])
        for item in value.values():
            yield from _env_refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _env_refs(item)


def _instance_env(path: Path) -> set[str]:
    return set(_env_refs(yaml.safe_load(path.read_text())))


def _names_the_code_reads() -> set[str]:
    """Environment variable names named in the code of both packages and the instance yaml."""
    names = set()
    for package in ("content_assets", "content_core"):
        for source in (REPO / package).rglob("*.py"):
            names |= set(_ENV_NAME.findall(source.read_text(encoding="utf-8")))
    return names | _instance_env(INSTANCE_YAMLS[1])


def _class_data(ref: InstanceRef) -> list[ConfigurableClassData]:
    return [v for v in ref._asdict().values() if isinstance(v, ConfigurableClassData)]


@pytest.mark.parametrize("path", INSTANCE_YAMLS, ids=lambda p: p.name)
def test_instance_yaml_is_valid_dagster_config(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An operator sets what the scale-out page names: every variable the file reads is there.
    documented = (REPO / "docs" / "operations" / "scale-out.md").read_text(encoding="utf-8")
    assert {n for n in _instance_env(path) if f"`{n}`" not in documented} == set()
    for name in _instance_env(path):
        numeric = name.endswith("_PORT") or name.endswith("_RUNS")
        monkeypatch.setenv(name, "5432" if numeric else "x")
    shutil.copyfile(path, tmp_path / "dagster.yaml")
    # The instance schema, then each class it names (storage, run coordinator, ...) against its
    # own config schema, with `env:` sources resolved: what DagsterInstance does, short of
    # connecting to a database.
    ref = InstanceRef.from_dir(str(tmp_path))
    classes = _class_data(ref)
    assert classes
    for data in classes:
        klass: Any = getattr(importlib.import_module(data.module_name), data.class_name)
        result = process_config(resolve_to_config_type(klass.config_type()), data.config_dict)
        assert result.success, (data.class_name, result.errors)
        if data.class_name == "DagsterPostgresStorage":
            url = pg_url_from_config(result.value)
            assert url.startswith("postgresql+psycopg2://x:x@x:5432/x")


def test_executor_switch() -> None:
    assert build_executor({}) is dg.in_process_executor
    celery = build_executor({EXECUTOR_ENV: "celery", BROKER_ENV: "redis://h:1/0"})
    assert celery.name == "celery"
    with pytest.raises(ValueError, match="CONTENT_EXECUTOR"):
        build_executor({EXECUTOR_ENV: "threads"})
    job = build_definitions({EXECUTOR_ENV: "celery"}).resolve_job_def("ingest_batch_job")
    assert job.executor_def.name == "celery"
    local = build_definitions({}).resolve_job_def("ingest_batch_job")
    assert local.executor_def is dg.in_process_executor
    # The workers' app: the broker of the environment, results next to it unless set apart,
    # and the same late-ack settings as the executor.
    args = worker_app_args({BROKER_ENV: "redis://h:1/0"})
    assert (args["broker"], args["backend"]) == ("redis://h:1/0", "redis://h:1/0")
    assert worker_app_args({BROKER_ENV: "a", BACKEND_ENV: "b"})["backend"] == "b"
    settings = celery_settings({})
    assert settings["task_acks_late"] and settings["worker_pool"] == "solo"


def test_docker_compose_wires_every_service() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert {"postgres", "redis", "s3", *DAGSTER_SERVICES} <= set(services)
    known = _names_the_code_reads()
    needed = _instance_env(INSTANCE_YAMLS[1]) | {EXECUTOR_ENV, BROKER_ENV, "CONTENT_STORE_DIR"}
    needed |= {"CONTENT_SOURCE", "CONTENT_STORE_WORK_DIR", *_S3_ENV}
    for name in DAGSTER_SERVICES:
        env = services[name]["environment"]
        assert needed <= set(env), (name, needed - set(env))
        assert set(_ENV_NAME.findall(" ".join(env))) <= known, name
        assert env[EXECUTOR_ENV] == "celery"
    command = services["worker"]["command"]
    assert command[:4] == ["celery", "-A", "content_assets.distributed.workers", "worker"]
    assert "--queues" in command and "dagster" in command  # dagster-celery's queue
    postgres = services["postgres"]["environment"]
    shared = services["webserver"]["environment"]
    assert postgres["POSTGRES_USER"] == shared["DAGSTER_POSTGRES_USER"]
    assert postgres["POSTGRES_DB"] == shared["DAGSTER_POSTGRES_DB"]
    assert shared["DAGSTER_POSTGRES_HOST"] == "postgres"
    assert shared[BROKER_ENV].startswith("redis://redis:")
    dockerfile = (REPO / services["webserver"]["build"]["dockerfile"]).read_text()
    assert "deploy/dagster-postgres.yaml" in dockerfile and "distributed" in dockerfile
    # The source and the store on the SeaweedFS service, with the keys it was started with;
    # no volume of the store or the inbox is shared between services.
    s3 = services["s3"]
    assert s3["image"].startswith("chrislusf/seaweedfs") and "profiles" not in s3
    assert s3["command"][:2] == ["server", "-s3"] and "-s3.port=8333" in s3["command"]
    assert shared["AWS_ENDPOINT_URL"] == "http://s3:8333"
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert s3["environment"][key] == shared[key]
    assert shared["CONTENT_STORE_DIR"].startswith("s3://")
    assert shared["CONTENT_SOURCE"].startswith("s3://")
    assert split_uri(shared["CONTENT_STORE_DIR"])[0] == split_uri(shared["CONTENT_SOURCE"])[0]
    for name in DAGSTER_SERVICES:
        mounts = services[name].get("volumes", [])
        assert not [m for m in mounts if "/data" in m], (name, mounts)
        assert "s3" in services[name]["depends_on"]


def test_helm_values_use_the_k8s_run_launcher() -> None:
    values = yaml.safe_load(HELM_VALUES.read_text())
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is True
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    args = deployment["dagsterApiGrpcArgs"]
    module, attribute = args[args.index("--module-name") + 1], args[args.index("--attribute") + 1]
    assert isinstance(getattr(importlib.import_module(module), attribute), dg.Definitions)
    env = {item["name"]: item["value"] for item in deployment["env"]}
    assert set(env) <= _names_the_code_reads()
    assert env[EXECUTOR_ENV] == "in_process"  # each run is its own pod
    mounts = {m["mountPath"] for m in deployment["volumeMounts"]}
    assert env["CONTENT_STORE_DIR"] in mounts
    assert deployment["includeConfigInLaunchedRuns"]["enabled"] is True


def test_helm_s3_values_put_the_store_on_object_storage() -> None:
    # Helm merges maps and replaces lists: the overlay's deployment replaces the base's whole.
    base = yaml.safe_load(HELM_VALUES.read_text())
    overlay = yaml.safe_load(HELM_S3_VALUES.read_text())
    (deployment,) = overlay["dagster-user-deployments"]["deployments"]
    (volume_based,) = base["dagster-user-deployments"]["deployments"]
    assert set(deployment) == set(volume_based)
    assert deployment["image"] == volume_based["image"]
    assert deployment["dagsterApiGrpcArgs"] == volume_based["dagsterApiGrpcArgs"]
    env = {item["name"]: item["value"] for item in deployment["env"]}
    assert set(env) <= _names_the_code_reads() | set(_S3_ENV)
    assert env[EXECUTOR_ENV] == "in_process"
    split_uri(env["CONTENT_STORE_DIR"])  # an s3:// URI, else ValueError
    split_uri(env["CONTENT_SOURCE"])
    assert deployment["volumes"] == [] and deployment["volumeMounts"] == []
    # Keys come from a Kubernetes secret, never from the values.
    assert not {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} & set(env)
    assert "content-pipeline-s3" in {s["name"] for s in deployment["envSecrets"]}


def test_keep_connections_replaces_an_instances_engines_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A run's process keeps its instance's connections when it starts (the launcher) and
    # again when its executor is built: the second call must not open a second set.
    with dg.instance_for_test() as instance:
        calls: list[dict[str, Any]] = []
        monkeypatch.setattr(instance, "optimize_for_webserver", lambda **kw: calls.append(kw))
        keep_connections(instance)
        keep_connections(instance)
        assert len(calls) == 1 and calls[0]["statement_timeout"] == 0
    with dg.instance_for_test() as other:
        monkeypatch.setattr(other, "optimize_for_webserver", lambda **kw: calls.append(kw))
        keep_connections(other)
        assert len(calls) == 2
