"""chunk_embeddings: one vector per chunk of a batch, through the embeddings cache (the
stage beside the others of stages.py, in its own module)."""

from __future__ import annotations

from content_core.embeddings import (
    Embedder,
    EmbedderConfig,
    WordLlamaEmbedder,
    embed_cached,
    make_embedder,
)
from content_core.errors import ContentError
from content_core.pipeline.checks import (
    CHUNK_KEYS,
    ERROR_ROWS,
    covers_chunks,
    failures_rule,
    unique_rule,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.pool import embed_locally
from content_core.pipeline.report import StageReport, preview
from content_core.pipeline.stage import Batch, Stage
from content_core.store import (
    CHUNK_EMBEDDINGS,
    CHUNKS,
    ChunkEmbeddingRow,
    ContentStore,
)

__all__ = ["OFF_MODEL", "OFF_REASON", "build_chunk_embeddings"]

# The `model` figure of a batch embedded while embeddings are off (no rows are written).
OFF_MODEL = "off"
# Why the table holds no rows for a batch then: the asset's metadata and the UI say so.
OFF_REASON = (
    "embeddings off: no vectors written (install the embeddings extra, or set CONTENT_EMBEDDER)"
)


def build_chunk_embeddings(
    store: ContentStore,
    batch_id: str,
    config: EmbedderConfig,
    embedder: Embedder | None = None,
    *,
    pool: ProcessingConfig | None = None,
) -> StageReport:

    """chunk_embeddings: a vector for every chunk of `batch_id` (not the chunking failure rows).

    A chunk that cannot be embedded is a row with `error_type`. With embeddings off (no
    `embeddings` extra, or CONTENT_EMBEDDER=off) the batch gets no rows at all, and the report
    says why (`skipped`): the coverage check accepts a batch with no rows as "off". A model
    that runs here (WordLlama) computes in the worker pool of `pool` (normalisation's
    settings); an endpoint is called from this process.

    Raises:
        EmbeddingUnavailableError: the endpoint stayed down through its retries (retry the run).
    """
    chunks = [r for r in store.read_rows(CHUNKS, batch_id).to_pylist() if not r["error_type"]]
    # The pool's workers build their model from `config`: only then can they stand in for it.
    in_pool = embedder is None
    embedder = embedder or make_embedder(config)
    keys = [
        {
            "batch_id": batch_id,
            "source_id": r["source_id"],
            "path": r["path"],
            "path_bytes": r["path_bytes"],
            "artifact_id": r["artifact_id"],
            "chunk_id": r["chunk_id"],
        }
        for r in chunks
    ]
    skipped: dict[str, int | float | str] = {}
    if embedder is None:
        rows: list[ChunkEmbeddingRow] = []
        calls = hits = 0
        model = OFF_MODEL
        skipped = {"skipped": OFF_REASON, "chunks_not_embedded": len(keys)}
    else:
        model = embedder.name
        texts = [r["content"] or "" for r in chunks]
        cache_dir = store.layout.cache("embeddings")
        if in_pool and isinstance(embedder, WordLlamaEmbedder):
            run = embed_locally(
                texts, config, embedder, cache_dir=cache_dir, pool=pool or ProcessingConfig()
            )
        else:
            run = embed_cached(texts, embedder, cache_dir, batch_size=config.batch_size)
        # The vectors' own size: asking an endpoint for its dimension would cost a call.
        sizes = [len(r) for r in run.results if not isinstance(r, ContentError)]
        dimension = sizes[0] if sizes else (embedder.requested_dimension or 0)
        rows = [
            ChunkEmbeddingRow(
                **k,
                model=model,
                dimension=dimension,
                embedding=None if isinstance(result, ContentError) else tuple(result),
                error_type=result.error_type if isinstance(result, ContentError) else None,
                error_message=result.message if isinstance(result, ContentError) else None,
            )
            for k, result in zip(keys, run.results, strict=True)
        ]
        calls, hits = run.calls, run.cache_hits
    count = store.write_rows(CHUNK_EMBEDDINGS, batch_id, rows)
    return StageReport(
        table=CHUNK_EMBEDDINGS,
        batch_id=batch_id,
        rows=count,
        failures=sum(1 for r in rows if r.error_type),
        figures={
            "model": model,
            "dimension": rows[0].dimension if rows else 0,
            "calls": calls,
            "cache_hits": hits,
            **skipped,
        },
        preview_markdown=(
            f"{OFF_REASON}; {len(keys)} chunks not embedded."
            if embedder is None
            else preview(rows, ["path", "chunk_id", "model", "error_type"])
        ),
    )


def _build(batch: Batch) -> StageReport:
    return build_chunk_embeddings(
        batch.store,
        batch.batch_id,
        batch.config.embedder,
        batch.embedder,
        pool=batch.config.processing,
    )


STAGE = Stage(
    table=CHUNK_EMBEDDINGS,
    row=ChunkEmbeddingRow,
    build=_build,
    deps=("chunks",),
    uses=("embedder", "processing"),
    checks=(
        unique_rule(CHUNK_EMBEDDINGS, CHUNK_KEYS, "a chunk of one file"),
        covers_chunks(CHUNK_EMBEDDINGS, unless_empty="embeddings were off for the batch"),
        failures_rule(CHUNK_EMBEDDINGS, ERROR_ROWS, "chunks that could not be embedded"),
    ),
    description=(
        "One row per chunk: its vector (`FLOAT[n]`) from the configured embedder, the model "
        "and dimension, or the error that chunk met. Vectors are cached by chunk text, model "
        "and dimension, so a rerun with nothing changed makes no embedding call. With "
        "embeddings off (no `embeddings` extra, or CONTENT_EMBEDDER=off) a batch has no rows "
        "here and its metadata says so (`skipped`)."
    ),
    retry=True,
)
