"""Embedding through the extraction cache: a chunk text already embedded by the same model at
the same dimension is read back, never sent again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from content_core.cache import CachedOutput, ExtractionCache, cache_key
from content_core.embeddings.base import Embedder, Vector
from content_core.errors import EmbeddingError
from content_core.sandbox import report_progress

__all__ = ["EmbeddingRun", "embed_cached", "embedding_cache_key"]


def embedding_cache_key(text: str, model: str, dimension: int | None) -> str:
    """The cache key of `text` embedded by `model` at `dimension` (None: the model's own)."""
    size = "native" if dimension is None else str(dimension)
    return cache_key(chunk_text=text, schema=f"embedding:{size}", model=model, prompt="")


@dataclass(slots=True)
class EmbeddingRun:
    """One result per input text (a vector, or the error that text met), and the cost."""

    results: list[Vector | EmbeddingError] = field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0


def embed_cached(
    texts: Sequence[str], embedder: Embedder, cache_dir: Path, *, batch_size: int = 64
) -> EmbeddingRun:
    """Embed `texts`, reading and filling the cache under `cache_dir`.

    Texts missing from the cache go to the embedder `batch_size` at a time; a batch that fails
    is retried text by text, so one bad text becomes one error and its neighbours are kept.
    A retryable error (the endpoint down after its retries) is raised: the whole stage should
    be retried, not recorded as failed chunks.
    """
    cache = ExtractionCache(cache_dir)
    # Keyed on the size asked for: learning an endpoint's own size would cost a call.
    model, dimension = embedder.name, embedder.requested_dimension
    keys = [embedding_cache_key(text, model, dimension) for text in texts]
    run = EmbeddingRun(results=[EmbeddingError("not embedded")] * len(texts))
    missing: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        entry = cache.get(key)
        if entry is not None:
            run.results[i] = [float(x) for x in json.loads(entry.output_json)]
            run.cache_hits += 1
        else:
            missing.setdefault(key, []).append(i)  # the same text twice costs one call
    todo = list(missing)
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        outcomes = _embed_batch(embedder, [texts[missing[key][0]] for key in batch], run)
        for key, outcome in zip(batch, outcomes, strict=True):
            if not isinstance(outcome, EmbeddingError):
                cache.put(key, CachedOutput(output_json=json.dumps(outcome), model=model))
            for i in missing[key]:
                run.results[i] = outcome
        report_progress()  # in a pool's worker: each batch has its own time limit
    return run


def _embed_batch(
    embedder: Embedder, texts: list[str], run: EmbeddingRun
) -> list[Vector | EmbeddingError]:
    run.calls += 1
    try:
        return list(embedder.embed(texts))
    except EmbeddingError as exc:
        if exc.retryable:
            raise
        if len(texts) == 1:
            return [exc]
    outcomes: list[Vector | EmbeddingError] = []
    for text in texts:
        outcomes.extend(_embed_batch(embedder, [text], run))
    return outcomes
