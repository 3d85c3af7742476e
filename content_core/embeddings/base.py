"""The Embedder protocol and the configuration that picks one."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EMBEDDER_ENV", "Embedder", "EmbedderConfig", "EmbedderKind", "Vector", "default_kind"]

Vector = list[float]
EmbedderKind = Literal["auto", "off", "wordllama", "openai"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of `dimension` floats, one per text, in order.

    `name` identifies the model (part of the cache key and of every stored row), so two
    embedders with the same name and dimension must give the same vectors.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int:
        """Floats per vector (an endpoint may need a call to learn it)."""
        ...

    @property
    def requested_dimension(self) -> int | None:
        """The size asked for, None for the model's own: with `name`, what the cache keys on,
        known without a call."""
        ...

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text. Raises `EmbeddingError` (or a subclass) for the whole call."""
        ...

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        """`embed` for an event loop."""
        ...


def default_kind() -> Literal["off", "wordllama"]:
    """`wordllama` when its package is installed (the `embeddings` extra), else `off`.

    The offline model is the default so that a pipeline run needs no endpoint, no key and no
    network; without the extra the stage writes no vectors rather than failing every chunk.
    """
    return "wordllama" if importlib.util.find_spec("wordllama") is not None else "off"


# The environment variable of each `EmbedderConfig` field: one table, read by the search CLI
# (`from_environ`) and by the Dagster resources, so both use the model the store was built with.
EMBEDDER_ENV: dict[str, str] = {
    "kind": "CONTENT_EMBEDDER",
    "model": "CONTENT_EMBED_MODEL",
    "base_url": "CONTENT_EMBED_URL",
    "dimension": "CONTENT_EMBED_DIM",
    "api_key": "CONTENT_EMBED_API_KEY",
}


class EmbedderConfig(BaseModel):
    """Which embedder: `wordllama` (offline, weights in its wheel), `openai` (any
    OpenAI-compatible `/v1/embeddings` endpoint), `off`, or `auto` (`default_kind`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: EmbedderKind = "auto"
    model: str | None = Field(
        default=None, description="Endpoint model name (openai; required there)."
    )
    base_url: str = Field(
        default="https://api.openai.com/v1", description="API prefix, e.g. http://localhost:11434/v1"
    )
    api_key: str | None = Field(default=None, repr=False)
    dimension: int | None = Field(
        default=None,
        ge=1,
        description="Vector size: wordllama truncates to it (<= 256); openai sends it as "
        "`dimensions` (models that support it), else the model's own size is used.",
    )
    batch_size: int = Field(default=64, ge=1, description="Texts per call.")
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> EmbedderConfig:
        """The configuration the `chunk_embeddings` asset is given by the same variables
        (CONTENT_EMBEDDER, CONTENT_EMBED_MODEL, CONTENT_EMBED_URL, CONTENT_EMBED_DIM,
        CONTENT_EMBED_API_KEY), so a search compares vectors of the model the store was built
        with; unset ones keep their defaults. `environ` defaults to `os.environ`."""
        env = os.environ if environ is None else environ
        given = {field: env.get(name) for field, name in EMBEDDER_ENV.items()}
        # Validated from plain values: environment strings, checked by the model.
        return cls.model_validate({k: v for k, v in given.items() if v})

    def resolved_kind(self) -> Literal["off", "wordllama", "openai"]:
        """The kind after `auto` is resolved."""
        return default_kind() if self.kind == "auto" else self.kind
