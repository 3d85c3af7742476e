"""ChunkingConfig: the chunker and its settings as the pipeline configures them."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["CHUNKER_NAMES", "ChunkingConfig"]

# Every name build_chunker accepts: the FFAI registry's names plus Firefly's TextChunker
# strategies.
CHUNKER_NAMES: tuple[str, ...] = (
    "character",
    "recursive",
    "markdown",
    "code",
    "hierarchical",
    "token",
    "sentence",
    "paragraph",
)


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
    min_body_tokens: int = Field(default=10, ge=0, description="Markdown: merge thinner sections.")
    breadcrumb_separator: str = " > "
    parent_chunk_size: int = Field(default=2048, ge=16, description="Hierarchical: parent size.")
    language: str | None = Field(default=None, description="Code: language, or None to detect.")
    encoding_name: str = "cl100k_base"
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Most seconds one artifact may take to chunk; past it the artifact is a "
        "StageTimeoutError row. Not part of the fingerprint: it never changes a chunk.",
    )

    @field_validator("chunker")
    @classmethod
    def _known_chunker(cls, value: str) -> str:
        name = value.strip().lower()
        if name not in CHUNKER_NAMES:
            raise ValueError(f"unknown chunker {value!r}; choose one of {', '.join(CHUNKER_NAMES)}")
        return name

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self

    def fingerprint(self) -> str:
        """A short stable hash of every setting but the time budget (16 hex digits), used in
        chunk ids."""
        settings = self.model_dump(mode="json", exclude={"timeout_s"})
        payload = json.dumps(settings, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
