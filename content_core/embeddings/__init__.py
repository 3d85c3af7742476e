"""Chunk embeddings: an offline model (WordLlama, weights in its wheel) or any OpenAI-compatible
`/v1/embeddings` endpoint, behind the `Embedder` protocol, cached by text, model and dimension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.embeddings.adapter import EmbedFunction as EmbedFunction
from content_core.embeddings.adapter import FunctionEmbedder as FunctionEmbedder
from content_core.embeddings.adapter import as_embedder as as_embedder
from content_core.embeddings.base import EMBEDDER_ENV as EMBEDDER_ENV
from content_core.embeddings.base import Embedder as Embedder
from content_core.embeddings.base import EmbedderConfig as EmbedderConfig
from content_core.embeddings.base import EmbedderKind as EmbedderKind
from content_core.embeddings.base import Vector as Vector
from content_core.embeddings.base import default_kind as default_kind
from content_core.embeddings.cache import EmbeddingRun as EmbeddingRun
from content_core.embeddings.cache import embed_cached as embed_cached
from content_core.embeddings.cache import embedding_cache_key as embedding_cache_key
from content_core.embeddings.factory import make_embedder as make_embedder
from content_core.embeddings.openai import OpenAIEmbedder as OpenAIEmbedder
from content_core.embeddings.wordllama import WORDLLAMA_DIMENSION as WORDLLAMA_DIMENSION
from content_core.embeddings.wordllama import WordLlamaEmbedder as WordLlamaEmbedder

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
