"""The one chunk record shared by every chunker, the Chunker protocol, FFAI's `ChunkerBase`
(what a custom chunker subclasses), and how a chunker declares itself to the registry
(`ChunkerSpec`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Chunk", "ChunkBudget", "Chunker", "ChunkerBase", "ChunkerOptions", "ChunkerSpec"]


class Chunk(BaseModel):
    """A slice of a text: `content` ends with `text[source_start:source_end]`.

    Whatever stands before that slice in `content` is a prefix the chunker added (a Markdown
    breadcrumb), also given in `metadata["breadcrumb"]`. A table's part may also repeat the
    table's header before the slice and close an HTML table after it: its metadata then
    gives `prefix_chars` and `suffix_chars`, the characters around the slice.
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


class ChunkerBase(ABC):
    """FFAI's base of a chunker: subclass it and implement `chunk`; `RAG(chunker=...)` takes
    any instance.

    It is also a structural check: every object with a callable `chunk` method (each built-in
    chunker, any `Chunker`) is an instance, as with the `collections.abc` classes. `unit`
    says what the chunker's sizes count, "chars" (FFAI's default) or "tokens"; a chunker that
    does not say counts characters.
    """

    unit: str = "chars"

    @abstractmethod
    def chunk(self, content: str) -> list[Chunk]:
        """Split `content` into chunks."""

    @classmethod
    def __subclasshook__(cls, other: type) -> bool:
        if cls is ChunkerBase:
            return callable(getattr(other, "chunk", None))
        result: bool = NotImplemented  # the ABC protocol's "decide as usual"
        return result


@dataclass(frozen=True, slots=True)
class ChunkBudget:
    """The settings every chunker gets from the pipeline: sizes in exact tokens of
    `encoding_name`."""

    chunk_size: int
    chunk_overlap: int
    encoding_name: str


class ChunkerOptions(BaseModel):
    """A chunker's own settings (none by default); a chunker with settings subclasses this.

    The pipeline passes them as `ChunkingConfig(options={...})`, validated against this model
    when the config is built.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")


OptionsT = TypeVar("OptionsT", bound=ChunkerOptions)


@dataclass(frozen=True, slots=True)
class ChunkerSpec(Generic[OptionsT]):
    """One chunker as the registry knows it: its name, its options model and its factory.

    A chunker module declares one (`SPEC = ChunkerSpec(...)`); the built-in ones are listed
    once in `content_core.chunking.registry`, and other packages expose theirs through the
    entry point group `content_pipeline.chunkers` (`name = "package.module:SPEC"`).
    """

    name: str
    options: type[OptionsT]
    # Builds the pipeline's chunker: sizes count exact tokens.
    factory: Callable[[ChunkBudget, OptionsT], Chunker]
    summary: str = ""
    # FFAI's `get_chunker(name, **kwargs)` form (sizes in characters unless a tokenizer is
    # given); None lets get_chunker build through the factory instead. Any: each chunker's
    # own keyword arguments.
    keywords: Callable[..., Chunker] | None = None

    def build(self, budget: ChunkBudget, options: OptionsT) -> Chunker:
        """The chunker for `budget` and `options`."""
        return self.factory(budget, options)
