"""The one chunk record shared by every chunker, and the Chunker protocol."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Chunk", "Chunker"]


class Chunk(BaseModel):
    """A slice of a text: `content` ends with `text[source_start:source_end]`.

    Whatever stands before that slice in `content` is a prefix the chunker added (a Markdown
    breadcrumb), also given in `metadata["breadcrumb"]`.
    """

    model_config = ConfigDict(frozen=True)

    content: str
    index: int
    total_chunks: int
    source_start: int
    source_end: int
    overlap_tokens: int = 0
    # An open dict, as the seed defines it: chunkers put breadcrumbs, tile geometry, etc. here.
    metadata: dict[str, Any] = Field(default_factory=dict)

    # FFAI's TextChunk names for the same values, read-only.
    @property
    def chunk_index(self) -> int:
        """Position of the chunk in its document (FFAI's name for `index`)."""
        return self.index

    @property
    def start_char(self) -> int:
        """Start offset in the source text (FFAI's name for `source_start`)."""
        return self.source_start

    @property
    def end_char(self) -> int:
        """End offset in the source text (FFAI's name for `source_end`)."""
        return self.source_end

    @property
    def token_count(self) -> int | None:
        """Exact token count recorded by a token-budgeted chunker, if any."""
        value = self.metadata.get("token_count")
        return value if isinstance(value, int) else None


@runtime_checkable
class Chunker(Protocol):
    """Anything with `chunk(content) -> list[Chunk]`."""

    def chunk(self, content: str) -> list[Chunk]:
        """Split `content` into chunks."""
        ...
