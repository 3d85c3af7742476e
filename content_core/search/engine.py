"""Search a store's current chunks: BM25, vectors, or both fused by reciprocal rank."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from content_core.errors import SearchError
from content_core.search.bm25 import (
    INDEX_COLUMNS,
    INDEX_TABLE,
    STEMMER,
    bm25_ranking,
    ensure_index,
    store_fingerprint,
)
from content_core.search.types import SEARCH_MODES, SearchFilters, SearchHit, SearchMode
from content_core.store.extensions import load_extension

if TYPE_CHECKING:
    from content_core.search.types import VectorRanking

__all__ = ["RRF_K", "Searcher", "reciprocal_rank_fusion", "search"]

# The constant of reciprocal rank fusion (Cormack et al. 2009): 1 / (60 + rank).
RRF_K = 60
# Each ranking fused contributes this many candidates at least.
_FUSION_DEPTH = 50


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[tuple[str, float]]], k: int, rrf_k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse rankings (best first) into one: each id scores the sum of 1 / (rrf_k + rank)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, (key, _score) in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


def _vector_ranking() -> VectorRanking | None:
    """The vector half (content_core.search.vector), or None where it is not installed."""
    try:
        from content_core.search.vector import vector_ranking
    except ModuleNotFoundError as exc:
        if exc.name != "content_core.search.vector":
            raise
        return None
    ranking: VectorRanking = vector_ranking
    return ranking


class Searcher:
    """Searches one store, reopening its index whenever the store changed."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser().resolve()
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._key: str | None = None

    def connection(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection to the index of the store as it is now."""
        key = store_fingerprint(self.root)
        if self._connection is None or key != self._key:
            self.close()
            path = ensure_index(self.root)
            try:
                connection = duckdb.connect(str(path), read_only=True)
            except duckdb.Error as exc:
                raise SearchError(f"cannot open the search index {path}: {exc}") from exc
            load_extension(connection, "fts")
            self._connection, self._key = connection, key
        return self._connection

    def close(self) -> None:
        """Close the index connection (the next search opens it again)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def stem(self, items: Sequence[str]) -> list[str]:
        """The index's stems of `items` (for highlighting what BM25 matched)."""
        if not items:
            return []
        row = (
            self.connection()
            .execute(
                f"SELECT list_transform(?::VARCHAR[], w -> stem(w, '{STEMMER}'))", [list(items)]
            )
            .fetchone()
        )
        return [str(s) for s in row[0]] if row else list(items)

    def _bm25(
        self,
        connection: duckdb.DuckDBPyConnection,
        query: str,
        k: int,
        filters: SearchFilters,
    ) -> list[tuple[str, float]]:
        try:
            return bm25_ranking(connection, query, k, filters)
        except duckdb.Error as exc:
            raise SearchError(f"BM25 search of {self.root} failed: {exc}") from exc

    def ranking(
        self, query: str, k: int, mode: SearchMode, filters: SearchFilters
    ) -> list[tuple[str, float]]:
        """(chunk_id, score) of the `k` best chunks, best first.

        Raises:
            SearchError: `mode` is unknown, or `vector` was asked where there are no vectors.
        """
        if mode not in SEARCH_MODES:
            raise SearchError(f"unknown search mode {mode!r}; one of {', '.join(SEARCH_MODES)}")
        connection = self.connection()
        if mode == "bm25":
            return self._bm25(connection, query, k, filters)
        vector = _vector_ranking()
        if vector is None and mode == "vector":
            raise SearchError("vector search needs content_core.search.vector (embeddings)")
        from content_core.store import ContentStore  # pyarrow: only for the vector half

        depth = max(k, _FUSION_DEPTH)
        vectors = [] if vector is None else vector(ContentStore(self.root), query, depth, filters)
        if mode == "vector":
            return vectors[:k]
        keyword = self._bm25(connection, query, depth, filters)
        if not vectors:  # no embeddings yet: hybrid is BM25
            return keyword[:k]
        return reciprocal_rank_fusion([keyword, vectors], k)

    def search(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """The `k` best hits for `query`, best first (hybrid falls back to BM25 alone while
        the store has no embeddings)."""
        ranked = self.ranking(query, k, mode, filters or SearchFilters())
        if not ranked:
            return []
        columns = ", ".join(INDEX_COLUMNS)
        rows = (
            self.connection()
            .execute(
                f"SELECT {columns} FROM {INDEX_TABLE} WHERE chunk_id IN (SELECT unnest(?))",
                [[key for key, _ in ranked]],
            )
            .fetchall()
        )
        by_id = {row[0]: row for row in rows}
        hits: list[SearchHit] = []
        for key, score in ranked:
            row = by_id.get(key)
            if row is None:  # a vector of a chunk no longer current
                continue
            values = dict(zip(INDEX_COLUMNS, row, strict=True))
            hits.append(SearchHit(score=score, **values))
        return hits


def search(
    root: Path | str,
    query: str,
    k: int = 10,
    mode: SearchMode = "hybrid",
    filters: SearchFilters | None = None,
) -> list[SearchHit]:
    """Search the store at `root` once (see `Searcher.search`)."""
    with Searcher(root) as searcher:
        return searcher.search(query, k, mode, filters)
