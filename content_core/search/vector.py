"""Vector search over `current_chunk_embeddings` with DuckDB's array distance functions.

Brute force: a scan of `FLOAT[n]` vectors with `array_cosine_distance`, exact. Measured with
bench/bench_vectors.py on this 2-core machine: `vector_ranking` over Parquet takes p50 ~0.3 s
at 100k vectors and ~2.4 s at 1M (reading and decoding the lists dominates); a `VectorIndex`
holds them as a memory-mapped float32 matrix (`search.matrix.VectorMatrix`, 1,024 MB of page
cache per million 256-d vectors; bench/bench_search.py latency --forms compares it with the
DuckDB `FLOAT[n]` table `rank_vectors` scans and with int8 codes). The `vss` extension's HNSW index
answered in ~28 ms at 100k but took ~270 s to build there (1M: out of reach here), lives only
in one process's memory, must be rebuilt for every batch, and is approximate: it does not pay
off at these sizes, so it is not used.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from content_core.embeddings import Embedder, EmbedderConfig, make_embedder
from content_core.search.matrix import VectorMatrix
from content_core.search.types import SearchFilters
from content_core.store import CHUNK_EMBEDDINGS, RAW_FILES, ContentStore, table_prefix

__all__ = ["VECTORS_TABLE", "VectorIndex", "rank_vectors", "vector_ranking"]

# The table of a `VectorIndex`: the columns of `_candidates_sql`, `embedding` as `FLOAT[n]`.
VECTORS_TABLE = "vectors"
# Vectors read from Parquet per Arrow batch while a `VectorIndex` loads.
_LOAD_ROWS = 100_000


def _where(filters: SearchFilters | None) -> tuple[list[str], list[object]]:
    """SQL conditions on the candidate columns, and their parameters."""
    if filters is None:
        return [], []
    clause, params = filters.where()
    return ([] if clause == "TRUE" else [clause]), params


def _candidates_sql(n: int, *, with_media: bool) -> str:
    """The current vectors of one model (parameters: model, dimension) as `FLOAT[n]`, with the
    columns the filters read. Parquet holds no fixed-size list, so the cast is made here."""
    media = "a.media_type" if with_media else "NULL::VARCHAR AS media_type"
    join = (
        "JOIN current_normalised_artifacts a USING (batch_id, source_id, path, artifact_id) "
        if with_media
        else ""
    )
    # `n` is an int (a vector's length), never user text: safe to format into the type.
    return (
        f"SELECT e.chunk_id, e.source_id, e.path, c.page_start, c.page_end, {media}, "
        f"e.embedding::FLOAT[{int(n)}] AS embedding "
        "FROM current_chunk_embeddings e "
        "JOIN current_chunks c USING (batch_id, source_id, path, artifact_id, chunk_id) "
        f"{join}WHERE e.model = ? AND e.dimension = ? AND e.embedding IS NOT NULL"
    )


def _ranking_sql(source: str, n: int, clauses: list[str]) -> str:
    """Top chunks of `source` (parameters: query vector, source's, filters', k)."""
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    return (
        f"SELECT chunk_id, max(1 - array_cosine_distance(embedding, ?::FLOAT[{int(n)}])) "
        f"AS score FROM ({source}) v {where}"
        "GROUP BY chunk_id ORDER BY score DESC, chunk_id LIMIT ?"
    )


def _default_embedder(embedder: Embedder | None) -> Embedder | None:
    return embedder or make_embedder(EmbedderConfig())


def vector_ranking(
    store: ContentStore,
    query: str,
    k: int,
    filters: SearchFilters | None = None,
    *,
    embedder: Embedder | None = None,
) -> list[tuple[str, float]]:
    """The `k` chunks nearest `query`, best first, as `(chunk_id, cosine similarity)`.

    `chunk_id` names a chunk's content (artifact, chunker, position): a file stored under two
    paths has the same chunk ids under both, and they are one hit here; join `current_chunks`
    on `chunk_id` for the rows. Only vectors of `embedder`'s model and dimension are compared
    (default: the configured default embedder, `EmbedderConfig()`); with none, no hits.

    Every call scans the Parquet files (about 2.4 s for 1,000,000 vectors here, see
    bench/bench_vectors.py); a process that searches repeatedly should hold a `VectorIndex`.
    """
    embedder = _default_embedder(embedder)
    if k <= 0 or embedder is None:
        return []
    [vector] = embedder.embed([query])
    n = len(vector)
    clauses, params = _where(filters)
    source = _candidates_sql(n, with_media=filters is not None and filters.media_type is not None)
    sql = _ranking_sql(source, n, clauses)
    rows = store.query(sql, [vector, embedder.name, n, *params, k]).to_pylist()
    return [(str(row["chunk_id"]), float(row["score"])) for row in rows]


class VectorIndex:
    """The current vectors of one model held for repeated searches (a `VectorMatrix`: unit
    float32 rows in a memory-mapped temporary file, their columns in DuckDB), reloaded when a
    `chunk_embeddings` or `raw_files` file changed: `ranking` then costs one matrix-vector
    product, not a scan of Parquet.

    Memory per million 256-d vectors: 1,024 MB of page cache for the file (shared, reclaimable)
    and about 330 MB of the process's own for the columns and ids (docs/reference/search.md).
    """

    def __init__(self, store: ContentStore, embedder: Embedder | None = None) -> None:
        self.store = store
        self.embedder = _default_embedder(embedder)
        self._signature: tuple[tuple[str, str, int], ...] | None = None
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._matrix: VectorMatrix | None = None
        self.loads = 0

    def _files(self) -> tuple[tuple[str, str, int], ...]:
        found = []
        for table in (CHUNK_EMBEDDINGS, RAW_FILES):
            for item in self.store.storage.list(table_prefix(table)):
                if item.key.endswith(".parquet"):
                    found.append((item.key, item.version, item.size_bytes))
        return tuple(found)

    def _load(self, embedder: Embedder) -> VectorMatrix:
        signature = self._files()
        if self._matrix is not None and signature == self._signature:
            return self._matrix
        n = embedder.dimension
        connection = self.store.connect()
        matrix = VectorMatrix(connection, n)
        # Read through a cursor: the matrix writes its rows table on the connection while the
        # vectors stream in, _LOAD_ROWS at a time.
        cursor = connection.cursor()
        try:
            cursor.execute(_candidates_sql(n, with_media=True), [embedder.name, n])
            for batch in cursor.to_arrow_reader(_LOAD_ROWS):
                matrix.append(batch)
        finally:
            cursor.close()
        self.close()
        self._connection, self._matrix, self._signature = connection, matrix, signature
        self.loads += 1
        return matrix

    def ranking(
        self, query: str, k: int, filters: SearchFilters | None = None
    ) -> list[tuple[str, float]]:
        """As `vector_ranking`, from the held vectors."""
        if k <= 0 or self.embedder is None:
            return []
        matrix = self._load(self.embedder)
        [vector] = self.embedder.embed([query])
        return matrix.ranking(vector, k, filters)

    def close(self) -> None:
        """Drop the vectors held."""
        if self._matrix is not None:
            self._matrix.close()
            self._matrix = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def rank_vectors(
    connection: duckdb.DuckDBPyConnection,
    vector: Sequence[float],
    k: int,
    filters: SearchFilters | None = None,
) -> list[tuple[str, float]]:
    """The `k` rows of `connection`'s `VECTORS_TABLE` nearest `vector`, best first, as
    `(chunk_id, cosine similarity)` (what `VectorIndex.ranking` runs once it is loaded).

    A chunk stored under several paths has several rows, one hit. Grouping every row by
    `chunk_id` cost more than the distances (about 430 ms against 190 ms at 1,000,000 rows),
    so the nearest rows are taken by a top-N sort, 4k of them, more while they hold fewer than
    `k` chunks: exact, since a chunk left out has no row nearer than the k-th chunk kept.
    """
    clauses, params = _where(filters)
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    sql = (
        f"SELECT chunk_id, 1 - array_cosine_distance(embedding, ?::FLOAT[{len(vector)}]) "
        f"AS score FROM {VECTORS_TABLE} {where}ORDER BY score DESC, chunk_id LIMIT ?"
    )
    depth = 4 * k
    while True:
        rows = connection.execute(sql, [list(vector), *params, depth]).fetchall()
        best: dict[str, float] = {}
        for chunk_id, score in rows:  # best first: a chunk's first row is its best
            best.setdefault(str(chunk_id), float(score))
        if len(best) >= k or len(rows) < depth:
            return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
        depth *= 4
