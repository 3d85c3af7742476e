"""Every default of a resource is its library model's: a resource left at its defaults yields
the model left at its defaults, field by field, and the CLI reads the same models."""

import pytest
from pydantic import BaseModel, ValidationError

from content_assets.cli import _parser
from content_assets.resources import (
    AgentResource,
    ChunkerResource,
    CompressorResource,
    EmbedderResource,
    MessagePartsResource,
    NormaliserResource,
    SourceResource,
)
from content_core.agents import AgentConfig, PdfHandling
from content_core.chunking import ChunkingConfig
from content_core.compression import CompressionConfig
from content_core.discovery import DiscoveryConfig
from content_core.embeddings import EmbedderConfig
from content_core.pipeline.config import ProcessingConfig


def _differences(built: BaseModel, default: BaseModel) -> dict[str, tuple[object, object]]:
    """The fields (nested models included) where `built` and `default` disagree."""
    got, want = built.model_dump(), default.model_dump()
    return {name: (got[name], want[name]) for name in want if got[name] != want[name]}


@pytest.mark.parametrize(
    ("resource", "model"),
    [
        (NormaliserResource, ProcessingConfig),  # binary, ocr, timeout, memory cap, workers
        (ChunkerResource, ChunkingConfig),
        (CompressorResource, CompressionConfig),
        (MessagePartsResource, PdfHandling),
        (EmbedderResource, EmbedderConfig),
        (AgentResource, AgentConfig),
    ],
    ids=lambda value: value.__name__,
)
def test_a_default_resource_yields_the_default_model(
    resource: type[NormaliserResource], model: type[BaseModel]
) -> None:
    assert _differences(resource().to_core(), model()) == {}


@pytest.mark.parametrize("name", sorted(DiscoveryConfig.model_fields))
def test_source_resources_take_the_discovery_defaults(name: str) -> None:
    # Both kinds of source, and the sensor and schedule that read them, wait as the CLI's
    # discovery call would by default (see DiscoveryConfig for why 2 s).
    want = getattr(DiscoveryConfig(), name)
    assert getattr(SourceResource(uri="examples/inbox"), name) == want
    assert getattr(SourceResource(uri="s3://bucket/prefix"), name) == want


def test_the_settle_default_is_two_seconds_everywhere() -> None:
    assert SourceResource(uri="examples/inbox").settle_s == DiscoveryConfig().settle_s == 2.0


def test_cli_batch_cap_is_the_discovery_configs() -> None:
    args = _parser().parse_args(["ingest", "folder"])
    assert args.max_batch_files == DiscoveryConfig().max_batch_files


def test_ocr_setting_is_validated_once_and_kept() -> None:
    resource = NormaliserResource(ocr="off", ocr_langs="eng+deu")
    first, second = resource.to_core().ocr, resource.to_core().ocr
    assert first is second  # the OcrConfig built when the resource was validated
    assert (first.mode, first.languages) == ("off", ("eng", "deu"))
    with pytest.raises(ValidationError):
        NormaliserResource(ocr="sideways")
    with pytest.raises(ValidationError):
        NormaliserResource(ocr_langs="English")


def test_chunk_and_budget_resources_take_the_target_model() -> None:
    # A launchpad that names gpt-4o counts chunks and budgets in its encoding, o200k_base.
    assert ChunkerResource(model="gpt-4o").to_core().encoding_name == "o200k_base"
    assert CompressorResource(model="gpt-5-mini").to_core().encoding_name == "o200k_base"
    assert CompressorResource(encoding_name="o200k_base").to_core().model is None
    with pytest.raises(ValidationError):
        ChunkerResource(model="gpt-4o", encoding_name="cl100k_base").to_core()


def test_the_agent_resource_passes_its_model_limits_file() -> None:
    resource = AgentResource(kind="openai", model="gpt-4o", model_limits_file="/etc/limits.toml")
    assert resource.to_core().limits_file == "/etc/limits.toml"
