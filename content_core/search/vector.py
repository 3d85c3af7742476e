"""Vector search over `current_chunk_embeddings` with DuckDB's array distance functions.

Brute force: a scan of `FLOAT[n]` vectors with `array_cosine_distance`. At the sizes measured
(bench/bench_vectors.py: 1,000,000 vectors of 256 floats) it meets the latency goal, while an
HNSW index (the `vss` extension) lives only in a DuckDB table, not over Parquet views: it would
have to be rebuilt for every new batch and held in memory by every reader.
"""

from __future__ import annotations

from typing import Protocol

from content_core.embeddings import Embedder, EmbedderConfig, make_embedder
from content_core.store import ContentStore

__all__ = ["VectorFilters", "vector_ranking"]


class VectorFilters(Protocol):
    """What narrows a search (every field optional); `SearchFilters` of content_core.search
    has these fields."""

    @property
    def source_id(self) -> str | None: ...

    @property
    def path_prefix(self) -> str | None: ...

    @property
    def media_type(self) -> str | None: ...

    @property
    def page(self) -> int | None: ...


def _where(filters: VectorFilters | None) -> tuple[list[str], list[object], bool]:
    """SQL conditions and their parameters, and whether the artifacts view is needed."""
    clauses: list[str] = []
    params: list[object] = []
    if filters is None:
        return clauses, params, False
    if filters.source_id is not None:
        clauses.append("e.source_id = ?")
        params.append(filters.source_id)
    if filters.path_prefix is not None:
        clauses.append("starts_with(e.path, ?)")
        params.append(filters.path_prefix)
    if filters.page is not None:
        clauses.append("? BETWEEN c.page_start AND coalesce(c.page_end, c.page_start)")
        params.append(filters.page)
    if filters.media_type is not None:
        clauses.append("a.media_type = ?")
        params.append(filters.media_type)
    return clauses, params, filters.media_type is not None


def vector_ranking(
    store: ContentStore,
    query: str,
    k: int,
    filters: VectorFilters | None = None,
    *,
    embedder: Embedder | None = None,
) -> list[tuple[str, float]]:
    """The `k` chunks nearest `query`, best first, as `(chunk_id, cosine similarity)`.

    `chunk_id` names a chunk's content (artifact, chunker, position): a file stored under two
    paths has the same chunk ids under both, and they are one hit here; join `current_chunks`
    on `chunk_id` for the rows. Only vectors of `embedder`'s model and dimension are compared
    (default: the configured default embedder, `EmbedderConfig()`); with none, no hits.
    """
    if k <= 0:
        return []
    embedder = embedder or make_embedder(EmbedderConfig())
    if embedder is None:
        return []
    [vector] = embedder.embed([query])
    n = len(vector)
    clauses, params, with_media = _where(filters)
    joins = "JOIN current_chunks c USING (batch_id, source_id, path, artifact_id, chunk_id) "
    if with_media:
        joins += (
            "JOIN current_normalised_artifacts a "
            "USING (batch_id, source_id, path, artifact_id) "
        )
    conditions = " AND ".join(
        ["e.model = ?", "e.dimension = ?", "e.embedding IS NOT NULL", *clauses]
    )
    # `n` is an int from the embedder, never user text: safe to format into the type.
    sql = (
        f"SELECT e.chunk_id, max(1 - array_cosine_distance(e.embedding::FLOAT[{int(n)}], "
        f"?::FLOAT[{int(n)}])) AS score "
        f"FROM current_chunk_embeddings e {joins}WHERE {conditions} "
        "GROUP BY e.chunk_id ORDER BY score DESC, e.chunk_id LIMIT ?"
    )
    rows = store.query(sql, [vector, embedder.name, n, *params, k]).to_pylist()
    return [(str(row["chunk_id"]), float(row["score"])) for row in rows]
