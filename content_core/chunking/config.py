"""ChunkingConfig: the chunker and its settings as the pipeline configures them."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from content_core.chunking.base import ChunkerOptions
from content_core.chunking.registry import chunker_spec
from content_core.encodings import CL100K_BASE, resolve_target_encoding

__all__ = ["ChunkingConfig", "OptionValue"]

# A chunker option as a person sets it (launchpad, environment, JSON).
OptionValue = str | int | float | bool | None


class ChunkingConfig(BaseModel):
    """Which chunker the pipeline runs and its budget, in exact tokens of `encoding_name`.

    The default, "markdown", suits mixed documents: extracted text is mostly prose whose
    headings (when present) become breadcrumbs, and text without headings is packed by
    paragraphs, lines, sentences and words.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunker: str = "markdown"
    chunk_size: int = Field(
        default=512, ge=16, description="Most tokens per chunk, prefix included."
    )
    chunk_overlap: int = Field(default=64, ge=0, description="Most tokens shared by neighbours.")
    options: dict[str, OptionValue] = Field(
        default_factory=dict,
        description="The chunker's own settings, checked against the options model it "
        "registers (markdown: min_body_tokens, breadcrumb_separator; code: language; "
        "hierarchical: parent_chunk_size).",
    )
    encoding_name: str = Field(
        default=CL100K_BASE,
        description="The encoding sizes count in (cl100k_base, o200k_base); set by `model` "
        "when that names an OpenAI model.",
    )
    model: str | None = Field(
        default=None,
        description="The model the chunks are meant for: an OpenAI model sets `encoding_name` "
        "(gpt-4o, gpt-4.1, gpt-5, o-series: o200k_base; gpt-4, gpt-3.5-turbo: cl100k_base). "
        "Not part of the fingerprint: only the encoding changes a chunk.",
    )
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Most seconds one artifact may take to chunk; past it the artifact is a "
        "StageTimeoutError row. Not part of the fingerprint: it never changes a chunk.",
    )

    @model_validator(mode="before")
    @classmethod
    def _encoding_from_model(cls, data: object) -> object:
        return resolve_target_encoding(data)

    @field_validator("chunker")
    @classmethod
    def _known_chunker(cls, value: str) -> str:
        return chunker_spec(value).name

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        self.resolved_options()  # unknown or invalid options fail here, not in a worker
        return self

    def resolved_options(self) -> ChunkerOptions:
        """`options` validated by the chunker's own model, defaults filled in."""
        options: ChunkerOptions = chunker_spec(self.chunker).options.model_validate(self.options)
        return options

    def fingerprint(self) -> str:
        """A short stable hash of every setting but the time budget (16 hex digits), used in
        chunk ids."""
        settings = self.model_dump(mode="json", exclude={"timeout_s", "options", "model"})
        # Resolved, so naming a default explicitly or not gives the same chunks and ids.
        settings["options"] = self.resolved_options().model_dump(mode="json")
        payload = json.dumps(settings, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
