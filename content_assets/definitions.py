"""The one Definitions object. The environment is read here, once."""

import os
from collections.abc import Mapping
from typing import Any

import dagster as dg

from content_assets.assets import ALL_ASSETS
from content_assets.compaction import compact_store_job, daily_compact_store_job_schedule
from content_assets.distributed.executors import build_executor
from content_assets.jobs import ingest_batch_job
from content_assets.resources import (
    AgentResource,
    ChunkerResource,
    CompressorResource,
    ContentStoreResource,
    EmbedderResource,
    MessagePartsResource,
    NormaliserResource,
    SourceResource,
)
from content_assets.schedules import hourly_ingest_batch_job_schedule
from content_assets.sensors import source_sensor
from content_assets.state import default_store
from content_core.embeddings import EMBEDDER_ENV

DEFAULT_SOURCE_DIR = "examples/inbox"
_EMBED_KEY = EMBEDDER_ENV["api_key"]
_VLM_KEY = "CONTENT_VLM_API_KEY"


# Any: the values are environment strings; each resource validates and converts its own fields.
def _given(**fields: str | None) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value}


def _source(environ: Mapping[str, str]) -> SourceResource:
    """CONTENT_SOURCE (or CONTENT_SOURCE_DIR): a folder, or any URI `open_source` reads."""
    where = environ.get("CONTENT_SOURCE") or environ.get("CONTENT_SOURCE_DIR")
    return SourceResource(
        uri=where or DEFAULT_SOURCE_DIR,
        **_given(
            source_id=environ.get("CONTENT_SOURCE_ID"),
            settle_s=environ.get("CONTENT_SOURCE_SETTLE_S"),
        ),
    )


# Any: resources of several classes, each its own ConfigurableResource parameter.
def build_resources(environ: Mapping[str, str]) -> dict[str, dg.ConfigurableResource[Any]]:
    """Resources configured from environment variables, with local defaults for the rest."""
    env = environ.get
    return {
        "store": ContentStoreResource(store_dir=env("CONTENT_STORE_DIR") or str(default_store())),
        "source": _source(environ),
        "normaliser": NormaliserResource(
            **_given(
                office_converter=env("CONTENT_OFFICE_CONVERTER"),
                ocr=env("CONTENT_OCR"),
                ocr_langs=env("CONTENT_OCR_LANGS"),
                workers=env("CONTENT_WORKERS"),
                vlm_url=env("CONTENT_VLM_URL"),
                vlm_model=env("CONTENT_VLM_MODEL"),
                vlm_max_pages=env("CONTENT_VLM_MAX_PAGES"),
                vlm_max_batch_pages=env("CONTENT_VLM_MAX_BATCH_PAGES"),
            ),
            # A secret, like the agent's key.
            **_given(vlm_api_key=dg.EnvVar(_VLM_KEY) if env(_VLM_KEY) else None),
        ),
        "chunker": ChunkerResource(**_given(chunker=env("CONTENT_CHUNKER"))),
        "compressor": CompressorResource(),
        "parts": MessagePartsResource(**_given(pdf=env("CONTENT_MESSAGE_PDF"))),
        "embedder": EmbedderResource(
            **_given(**{f: env(name) for f, name in EMBEDDER_ENV.items() if f != "api_key"}),
            # A secret, like the agent's key below.
            **_given(api_key=dg.EnvVar(_EMBED_KEY) if env(_EMBED_KEY) else None),
        ),
        "agent": AgentResource(
            **_given(
                kind=env("CONTENT_AGENT"),
                model=env("CONTENT_AGENT_MODEL"),
                base_url=env("OPENAI_BASE_URL"),
                schema_path=env("CONTENT_AGENT_SCHEMA"),
                model_limits_file=env("CONTENT_MODEL_LIMITS"),
            ),
            # A secret: resolved from the process environment at run time, never shown in the UI.
            **_given(api_key=dg.EnvVar("OPENAI_API_KEY") if env("OPENAI_API_KEY") else None),
        ),
    }


def build_definitions(environ: Mapping[str, str]) -> dg.Definitions:
    """The project's Definitions for a given environment (tests pass their own)."""
    return dg.Definitions(
        assets=ALL_ASSETS,
        jobs=[ingest_batch_job, compact_store_job],
        sensors=[source_sensor],
        schedules=[hourly_ingest_batch_job_schedule, daily_compact_store_job_schedule],
        resources=build_resources(environ),
        # In process unless CONTENT_EXECUTOR=celery: a step subprocess costs about a second
        # here, more than most stages take; Celery workers pay that to spread batches over hosts.
        executor=build_executor(environ),
    )


defs = build_definitions(os.environ)
