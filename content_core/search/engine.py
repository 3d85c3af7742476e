"""Search a store's current chunks: BM25, vectors, or both fused by reciprocal rank."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from content_core.errors import SearchError
from content_core.search.bm25 import STEMMER, bm25_ranking
from content_core.search.collapse import (
    DocumentKey,
    chunk_copies,
    collapse_search,
    near_duplicate_groups,
)
from content_core.search.hit_boxes import with_boxes
from content_core.search.index import ensure_index, store_fingerprint
from content_core.search.segment import register_tokenizer
from content_core.search.terms import DOCS_TABLE, INDEX_COLUMNS
from content_core.search.types import SEARCH_MODES, SearchFilters, SearchHit, SearchMode
from content_core.store.extensions import load_extension

if TYPE_CHECKING:
    from content_core.embeddings import Embedder
    from content_core.search.vector import VectorIndex

__all__ = ["RRF_K", "VECTOR_WEIGHT", "Searcher", "reciprocal_rank_fusion", "search"]

# Reciprocal rank fusion (Cormack et al. 2009) weighted: BM25's hit at rank r scores
# 1 / (RRF_K + r), the vectors' VECTOR_WEIGHT / (RRF_K + r). Chosen by bench_search.py recall
# on the known-answer set (docs/reference/search.md has the table): with the textbook 60 and
# equal weights hybrid found fewer answers than BM25 alone; with these it finds more.
RRF_K = 10
VECTOR_WEIGHT = 0.2
# Each ranking fused contributes this many candidates at least.
_FUSION_DEPTH = 50


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[tuple[str, float]]],
    k: int,
    rrf_k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse rankings (best first) into one: each id scores the sum over the rankings of
    weight / (rrf_k + rank) (every weight 1 unless `weights` gives one per ranking)."""
    scores: dict[str, float] = {}
    for number, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[number]
        for rank, (key, _score) in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


class Searcher:
    """Searches one store, reopening its index whenever the store changed.

    Args:
        root: the store's folder.
        embedder: embeds queries for the vector half; only stored vectors of its model and
            dimension are compared. Default: `EmbedderConfig()` (offline WordLlama when
            installed); a store built with another configuration needs its embedder here
            (`make_embedder(EmbedderConfig.from_environ())` reads the asset's variables).
        hold_vectors: keep the store's vectors in memory (a `VectorIndex`, reloaded when the
            store changes) so repeated searches scan memory, not Parquet (about 190 ms instead
            of 2.4 s per query at 1,000,000 vectors); False for one search (the CLI), where
            loading them would cost more than one Parquet scan.
    """

    def __init__(
        self, root: Path | str, embedder: Embedder | None = None, *, hold_vectors: bool = True
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self.embedder = embedder
        self.hold_vectors = hold_vectors
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._key: str | None = None
        self._vectors: VectorIndex | None = None
        self._groups: tuple[str | None, dict[DocumentKey, DocumentKey]] | None = None

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
            register_tokenizer(connection)
            self._connection, self._key = connection, key
        return self._connection

    def close(self) -> None:
        """Close the index connection and drop the vectors held (the next search opens and
        loads them again)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None

    @property
    def vector_index(self) -> VectorIndex | None:
        """The vectors held in memory, once a vector or hybrid search loaded them."""
        return self._vectors

    def _vector(self, query: str, k: int, filters: SearchFilters) -> list[tuple[str, float]]:
        # Imported here: the vector half reads Parquet (pyarrow), which BM25 never needs.
        from content_core.search.vector import VectorIndex, vector_ranking
        from content_core.store import ContentStore

        store = ContentStore(self.root)
        if not self.hold_vectors:
            return vector_ranking(store, query, k, filters, embedder=self.embedder)
        if self._vectors is None:
            self._vectors = VectorIndex(store, self.embedder)
        return self._vectors.ranking(query, k, filters)

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
        depth = max(k, _FUSION_DEPTH)
        vectors = self._vector(query, depth, filters)
        if mode == "vector":
            return vectors[:k]
        keyword = self._bm25(connection, query, depth, filters)
        if not vectors:  # no embeddings yet: hybrid is BM25
            return keyword[:k]
        return reciprocal_rank_fusion([keyword, vectors], k, weights=(1.0, VECTOR_WEIGHT))

    def search(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filters: SearchFilters | None = None,
        *,
        per_document: bool = True,
    ) -> list[SearchHit]:
        """The `k` best hits for `query`, best first (hybrid falls back to BM25 alone while
        the store has no embeddings); `per_document`: the `k` best documents, each its best
        chunk with the others counted and its copies and near-duplicates folded in
        (`search.collapse`), else the `k` best chunks."""
        if per_document:
            fetch = functools.partial(self._hits, query, mode=mode, filters=filters)
            hits = collapse_search(fetch, k, self.near_duplicates())
        else:
            hits = self._hits(query, k, mode, filters)[0]
        # Looked up for the hits shown only (the chunks files of their batches).
        return with_boxes(self.root, hits)

    def _hits(
        self, query: str, k: int, mode: SearchMode, filters: SearchFilters | None
    ) -> tuple[list[SearchHit], dict[str, list[DocumentKey]], int]:
        """The `k` best chunks as hits, the files holding each, and how many were ranked."""
        ranked = self.ranking(query, k, mode, filters or SearchFilters())
        if not ranked:
            return [], {}, 0
        columns = ", ".join(INDEX_COLUMNS)
        rows = (
            self.connection()
            .execute(
                f"SELECT {columns} FROM {DOCS_TABLE} WHERE chunk_id IN (SELECT unnest(?)) "
                "ORDER BY docid",
                [[key for key, _ in ranked]],
            )
            .fetchall()
        )
        # Any: DuckDB row values, typed by SearchHit's fields.
        by_id: dict[str, tuple[Any, ...]] = {}
        for found in rows:  # a chunk under several paths: the path indexed first
            by_id.setdefault(found[0], found)
        hits: list[SearchHit] = []
        for key, score in ranked:
            row = by_id.get(key)
            if row is None:  # a vector of a chunk no longer current
                continue
            values = dict(zip(INDEX_COLUMNS, row, strict=True))
            hits.append(SearchHit(score=score, **values))
        return hits, chunk_copies(rows, INDEX_COLUMNS), len(ranked)

    def near_duplicates(self) -> dict[DocumentKey, DocumentKey]:
        """The store's near-duplicate groups (`near_duplicate_groups`), read once per store
        state."""
        self.connection()  # brings self._key up to date
        if self._groups is None or self._groups[0] != self._key:
            self._groups = (self._key, near_duplicate_groups(self.root))
        return self._groups[1]


def search(
    root: Path | str,
    query: str,
    k: int = 10,
    mode: SearchMode = "hybrid",
    filters: SearchFilters | None = None,
    *,
    embedder: Embedder | None = None,
    per_document: bool = True,
) -> list[SearchHit]:
    """Search the store at `root` once (see `Searcher.search`)."""
    with Searcher(root, embedder, hold_vectors=False) as searcher:
        return searcher.search(query, k, mode, filters, per_document=per_document)
