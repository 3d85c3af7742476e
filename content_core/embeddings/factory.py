"""Build the embedder an `EmbedderConfig` names."""

from __future__ import annotations

from content_core.embeddings.base import Embedder, EmbedderConfig
from content_core.embeddings.openai import OpenAIEmbedder
from content_core.embeddings.wordllama import WordLlamaEmbedder

__all__ = ["make_embedder"]


def make_embedder(config: EmbedderConfig) -> Embedder | None:
    """The embedder of `config`, or None when embeddings are off.

    Raises:
        ValueError: `openai` without a model.
    """
    kind = config.resolved_kind()
    if kind == "off":
        return None
    if kind == "wordllama":
        return WordLlamaEmbedder(config.dimension)
    if not config.model:
        raise ValueError("the openai embedder needs a model (CONTENT_EMBED_MODEL)")
    return OpenAIEmbedder(
        config.model,
        base_url=config.base_url,
        api_key=config.api_key,
        dimension=config.dimension,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
    )
