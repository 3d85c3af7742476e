"""Chunk embeddings: an offline model (WordLlama, weights in its wheel) or any OpenAI-compatible
`/v1/embeddings` endpoint, behind the `Embedder` protocol, cached by text, model and dimension.
"""

from __future__ import annotations

from content_core.embeddings.adapter import EmbedFunction, FunctionEmbedder, as_embedder
from content_core.embeddings.base import (
    EMBEDDER_ENV,
    Embedder,
    EmbedderConfig,
    EmbedderKind,
    Vector,
    default_kind,
)
from content_core.embeddings.cache import EmbeddingRun, embed_cached, embedding_cache_key
from content_core.embeddings.factory import make_embedder
from content_core.embeddings.openai import OpenAIEmbedder
from content_core.embeddings.wordllama import WORDLLAMA_DIMENSION, WordLlamaEmbedder

__all__ = [
    "EMBEDDER_ENV",
    "WORDLLAMA_DIMENSION",
    "EmbedFunction",
    "Embedder",
    "EmbedderConfig",
    "EmbedderKind",
    "EmbeddingRun",
    "FunctionEmbedder",
    "OpenAIEmbedder",
    "Vector",
    "WordLlamaEmbedder",
    "as_embedder",
    "default_kind",
    "embed_cached",
    "embedding_cache_key",
    "make_embedder",
]
