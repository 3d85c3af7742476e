"""Resources: thin adapters from launchpad/env configuration to content_core objects."""

from enum import Enum
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field, PrivateAttr, field_validator, model_validator

from content_core.agents import AgentConfig, PdfHandling
from content_core.binary import BinaryConfig
from content_core.chunking import ChunkingConfig, list_chunkers
from content_core.compression import CompressionConfig
from content_core.discovery import DiscoveryConfig
from content_core.embeddings import EmbedderConfig
from content_core.errors import UnknownSourceSchemeError
from content_core.ocr import OcrConfig, VlmConfig
from content_core.pipeline.config import ProcessingConfig
from content_core.sources import EntrySource, open_source, source_factory
from content_core.store import ContentStore


class ContentStoreResource(dg.ConfigurableResource["ContentStoreResource"]):
    """Where the content store lives (blobs, Parquet tables, content.duckdb)."""

    store_dir: str = Field(
        default="content_store",
        description="Store folder, or s3://bucket/prefix (CONTENT_STORE_DIR).",
    )

    def get_store(self) -> ContentStore:
        """The content store at `store_dir` (a folder or an `s3://` URI, kept as text)."""
        return ContentStore(self.store_dir)


class SourceResource(dg.ConfigurableResource["SourceResource"]):
    """The source the sensor and the schedule discover, and how much a tick takes from it.

    `uri` picks the kind of source (`content_core.sources.open_source`): a folder path or
    `file://`, `s3://bucket/prefix`, or a scheme an installed plug-in adds. Bound under `source`.
    """

    uri: str = Field(
        default="examples/inbox",
        description="Folder, file:// or s3://bucket/prefix to ingest, or a plug-in's URI "
        "(CONTENT_SOURCE, else CONTENT_SOURCE_DIR); S3 endpoint and keys from the AWS_* variables.",
    )
    source_id: str | None = Field(
        default=None, description="Source id; derived from the location when unset."
    )
    include_hidden: bool = False
    max_batch_files: int = Field(
        default=DiscoveryConfig().max_batch_files, description="Most file changes in one batch."
    )
    settle_s: float = Field(
        default=DiscoveryConfig().settle_s,
        description="Seconds a file must stay unchanged before it is ingested, so a file still "
        "being copied in waits for a later tick (CONTENT_SOURCE_SETTLE_S).",
    )

    @field_validator("uri")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        """Refuse a URI of a scheme no source is registered for when the resource is built."""
        try:
            source_factory(value)
        except UnknownSourceSchemeError as exc:
            raise ValueError(exc.message) from exc
        return value

    def get_source(self) -> EntrySource:
        """The source `uri` names."""
        return open_source(
            self.uri, source_id=self.source_id, include_hidden=self.include_hidden
        )


class NormaliserResource(dg.ConfigurableResource["NormaliserResource"]):
    """Limits and converters of binary normalisation and text extraction."""

    office_converter: str = Field(
        default=BinaryConfig().office_converter, description="none, libreoffice or gotenberg."
    )
    gotenberg_url: str = Field(
        default=BinaryConfig().gotenberg_url, description="Gotenberg base URL."
    )
    timeout_s: float = Field(
        default=ProcessingConfig().timeout_s, description="Time limit per raw file."
    )
    memory_mb: int = Field(
        default=ProcessingConfig().memory_mb, description="Memory cap of a worker process."
    )
    # The library's factory itself: the cores are counted in the process that builds the
    # resource (a run worker), not once at import.
    workers: int = Field(
        default_factory=ProcessingConfig.model_fields["workers"].default_factory,  # type: ignore[arg-type]
        description="Worker processes (CONTENT_WORKERS); default: the cores this process may use.",
    )
    ocr: str = Field(
        default=OcrConfig().mode,
        description="OCR engine: auto, off, tesseract or rapidocr (CONTENT_OCR).",
    )
    ocr_langs: str = Field(
        default="+".join(OcrConfig().languages),
        description="OCR languages, Tesseract codes joined by '+' (CONTENT_OCR_LANGS).",
    )

    vlm_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint of a vision-language model that reads hard PDF "
        "pages, e.g. http://localhost:8000/v1 (CONTENT_VLM_URL); unset: off.",
    )
    vlm_model: str | None = Field(default=None, description="Its model (CONTENT_VLM_MODEL).")
    vlm_api_key: str | None = Field(default=None, description="Its key (CONTENT_VLM_API_KEY).")
    vlm_max_pages: int = Field(
        default=VlmConfig().max_pages_per_file,
        description="Most pages per file sent to it (CONTENT_VLM_MAX_PAGES).",
    )
    vlm_max_batch_pages: int = Field(
        default=VlmConfig().max_pages_per_batch,
        description="Most requests to it per batch (CONTENT_VLM_MAX_BATCH_PAGES).",
    )

    # The OcrConfig built from `ocr`, `ocr_langs` and the `vlm_*` fields when the resource is
    # validated.
    _ocr: OcrConfig = PrivateAttr()

    @model_validator(mode="after")
    def _valid_ocr(self) -> "NormaliserResource":
        """Refuse a bad CONTENT_OCR, CONTENT_OCR_LANGS or CONTENT_VLM_* when the resource is
        built, and keep the OcrConfig so built for `to_core`."""
        vlm = {
            "url": self.vlm_url,
            "model": self.vlm_model,
            "api_key": self.vlm_api_key,
            "max_pages_per_file": self.vlm_max_pages,
            "max_pages_per_batch": self.vlm_max_batch_pages,
        }
        # Validated from plain values: all are launchpad or environment strings.
        self._ocr = OcrConfig.model_validate(
            {"mode": self.ocr, "languages": self.ocr_langs, "vlm": vlm}
        )
        return self

    def to_core(self) -> ProcessingConfig:
        """The library's processing configuration."""
        return ProcessingConfig(
            # Validated from plain values: these are launchpad or environment strings.
            binary=BinaryConfig.model_validate(
                {"office_converter": self.office_converter, "gotenberg_url": self.gotenberg_url}
            ),
            ocr=self._ocr,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            workers=self.workers,
        )


if TYPE_CHECKING:
    ChunkerName = Enum
else:
    # The launchpad offers every registered chunker (plug-ins included) as a choice; the
    # members are only known once the registry has loaded, so the enum is built here.
    ChunkerName = Enum("ChunkerName", [(name, name) for name in list_chunkers()], module=__name__)


class ChunkerResource(dg.ConfigurableResource["ChunkerResource"]):
    """Which chunker splits documents, and its budget."""

    chunker: ChunkerName = Field(
        default=ChunkerName(ChunkingConfig().chunker), description="Chunker name."
    )
    chunk_size: int = Field(default=ChunkingConfig().chunk_size, description="Tokens per chunk.")
    chunk_overlap: int = Field(
        default=ChunkingConfig().chunk_overlap, description="Overlap tokens."
    )
    timeout_s: float = Field(
        default=ChunkingConfig().timeout_s, description="Time budget per document, seconds."
    )
    model: str | None = Field(
        default=None, description="Target model: an OpenAI model's encoding counts the tokens."
    )
    encoding_name: str | None = Field(
        default=None, description="Encoding tokens count in, when no model is named."
    )

    def to_core(self) -> ChunkingConfig:
        """The library's chunking configuration."""
        return ChunkingConfig.model_validate(
            {
                "chunker": str(self.chunker.value),
                "chunk_size": self.chunk_size,
                "chunk_overlap": self.chunk_overlap,
                "timeout_s": self.timeout_s,
                **_target(self.model, self.encoding_name),
            }
        )


class CompressorResource(dg.ConfigurableResource["CompressorResource"]):
    """How documents are compressed to a token budget."""

    strategy: str = Field(
        default=CompressionConfig().strategy, description="extractive or truncation."
    )
    max_tokens: int = Field(default=CompressionConfig().max_tokens, description="Token budget.")
    timeout_s: float = Field(
        default=CompressionConfig().timeout_s, description="Time budget per document, seconds."
    )
    model: str | None = Field(
        default=None, description="Target model: an OpenAI model's encoding counts the budget."
    )
    encoding_name: str | None = Field(
        default=None, description="Encoding the budget counts in, when no model is named."
    )

    def to_core(self) -> CompressionConfig:
        """The library's compression configuration."""
        # Validated from plain values: `strategy` is a launchpad string, checked there.
        return CompressionConfig.model_validate(
            {
                "strategy": self.strategy,
                "max_tokens": self.max_tokens,
                "timeout_s": self.timeout_s,
                **_target(self.model, self.encoding_name),
            }
        )


def _target(model: str | None, encoding_name: str | None) -> dict[str, str]:
    """The target model and encoding a person set; the library's defaults for the rest."""
    given = {"model": model, "encoding_name": encoding_name}
    return {key: value for key, value in given.items() if value}


class MessagePartsResource(dg.ConfigurableResource["MessagePartsResource"]):
    """What a PDF becomes in message_parts: its text, or its pages as images."""

    pdf: str = Field(
        default=PdfHandling().mode, description="text or pages (CONTENT_MESSAGE_PDF)."
    )
    max_pages: int = Field(default=PdfHandling().max_pages, description="Pages rendered per PDF.")
    dpi: int = Field(default=PdfHandling().dpi, description="Rendering resolution.")
    image_format: str = Field(default=PdfHandling().image_format, description="png or jpeg.")
    with_text: bool = Field(
        default=PdfHandling().with_text, description="Each page image followed by its text."
    )
    timeout_s: float = Field(
        default=PdfHandling().timeout_s, description="Time budget per artifact, seconds."
    )

    def to_core(self) -> PdfHandling:
        """The library's PDF handling."""
        # Validated from plain values: `pdf` and `image_format` are launchpad strings.
        return PdfHandling.model_validate(
            {
                "mode": self.pdf,
                "max_pages": self.max_pages,
                "dpi": self.dpi,
                "image_format": self.image_format,
                "with_text": self.with_text,
                "timeout_s": self.timeout_s,
            }
        )


class EmbedderResource(dg.ConfigurableResource["EmbedderResource"]):
    """How chunks are embedded: offline WordLlama, an OpenAI-compatible endpoint, or off."""

    kind: str = Field(
        default=EmbedderConfig().kind,
        description="auto (wordllama when installed, else off), off, wordllama or openai "
        "(CONTENT_EMBEDDER).",
    )
    model: str | None = Field(default=None, description="Endpoint model (CONTENT_EMBED_MODEL).")
    base_url: str = Field(
        default=EmbedderConfig().base_url, description="Endpoint (CONTENT_EMBED_URL)."
    )
    api_key: str | None = Field(default=None, description="API key (CONTENT_EMBED_API_KEY).")
    dimension: int | None = Field(
        default=None, description="Vector size; the model's own when unset (CONTENT_EMBED_DIM)."
    )
    batch_size: int = EmbedderConfig().batch_size
    timeout_s: float = EmbedderConfig().timeout_s
    max_retries: int = EmbedderConfig().max_retries

    def to_core(self) -> EmbedderConfig:
        """The library's embedder configuration."""
        # Validated from plain values: `kind` is a launchpad string, checked there.
        return EmbedderConfig.model_validate(
            {
                "kind": self.kind,
                "model": self.model,
                "base_url": self.base_url,
                "api_key": self.api_key,
                "dimension": self.dimension,
                "batch_size": self.batch_size,
                "timeout_s": self.timeout_s,
                "max_retries": self.max_retries,
            }
        )


class AgentResource(dg.ConfigurableResource["AgentResource"]):
    """The extraction agent: the offline extractor or an OpenAI-compatible endpoint."""

    kind: str = Field(default=AgentConfig().kind, description="offline or openai (CONTENT_AGENT).")
    model: str | None = Field(default=None, description="Model name (CONTENT_AGENT_MODEL).")
    base_url: str | None = Field(default=None, description="Endpoint (OPENAI_BASE_URL).")
    api_key: str | None = Field(default=None, description="API key (OPENAI_API_KEY).")
    schema_path: str | None = Field(default=None, description="pkg.module:Model extraction schema.")
    prompt: str | None = Field(default=None, description="Prompt template; default per schema.")
    concurrency: int = AgentConfig().concurrency
    timeout_s: float = AgentConfig().timeout_s
    chunk_timeout_s: float = Field(
        default=AgentConfig().chunk_timeout_s,
        description="Time budget per chunk (per merge), retries included, seconds.",
    )
    max_retries: int = AgentConfig().max_retries
    merge_strategy: str = Field(
        default=AgentConfig().merge_strategy,
        description="merge_json, concatenate_list or llm_merge (needs kind openai).",
    )
    merge_dedupe: bool = Field(
        default=AgentConfig().merge_dedupe,
        description="Drop repeated list items when merging (the seed's strategies keep them).",
    )
    model_limits_file: str | None = Field(
        default=None,
        description="TOML file adding or correcting model limits rows (CONTENT_MODEL_LIMITS).",
    )

    def to_core(self) -> AgentConfig:
        """The library's agent configuration."""
        # Validated from plain values: `kind` is a launchpad string, checked there.
        return AgentConfig.model_validate(
            {
                "kind": self.kind,
                "model": self.model,
                "base_url": self.base_url,
                "api_key": self.api_key,
                "schema_path": self.schema_path,
                "prompt": self.prompt,
                "concurrency": self.concurrency,
                "timeout_s": self.timeout_s,
                "chunk_timeout_s": self.chunk_timeout_s,
                "max_retries": self.max_retries,
                "merge_strategy": self.merge_strategy,
                "merge_dedupe": self.merge_dedupe,
                "limits_file": self.model_limits_file,
            }
        )
