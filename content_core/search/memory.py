"""An index held in memory for quick scripts (`RAG(store=InMemoryStore())`): chunks in a list,
ranked by BM25 over the same terms the store's index uses, by cosine similarity of their
vectors, or by both fused by reciprocal rank, as the store's searches are."""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb
import numpy as np

from content_core.errors import SearchError
from content_core.search.engine import RRF_K, reciprocal_rank_fusion
from content_core.search.types import SEARCH_MODES, SearchFilters, SearchHit, SearchMode
from content_core.store.extensions import load_extension
from content_core.store.search_sql import terms_sql

__all__ = ["InMemoryStore"]

# BM25 as DuckDB's fts scores it (`search.bm25`): k1, b and a log10 IDF.
_K1 = 1.2
_B = 0.75
# Each ranking fused contributes this many candidates at least (as `search.engine`).
_FUSION_DEPTH = 50


@dataclass(frozen=True, slots=True)
class _Entry:
    hit: SearchHit
    terms: Counter[str]
    length: int


def _passes(hit: SearchHit, filters: SearchFilters) -> bool:
    """`filters.where()` in Python: the same conditions over one hit."""
    if filters.source_id is not None and hit.source_id != filters.source_id:
        return False
    if filters.path_prefix is not None and not hit.path.startswith(filters.path_prefix):
        return False
    if filters.media_type is not None and hit.media_type != filters.media_type:
        return False
    if filters.page_from is None and filters.page_to is None:
        return True
    if hit.page_start is None:
        return False
    if filters.page_to is not None and hit.page_start > filters.page_to:
        return False
    end = hit.page_end if hit.page_end is not None else hit.page_start
    return filters.page_from is None or end >= filters.page_from


class InMemoryStore:
    """Chunks (as `SearchHit`s with score 0) and their vectors, searched in memory.

    Nothing is written to disk and nothing outlives the process: the store for a script or a
    notebook. `RAG(store=InMemoryStore())` chunks, embeds and adds what `RAG.index` is given;
    `add` takes chunks made elsewhere. Terms are the store index's (lower case, accents
    stripped, Porter stems), so a query ranks the same chunks here as in a content store.

    Raises (from `add` and `search`):
        MissingDependencyError: DuckDB's `fts` extension package is not installed (its stemmer
            makes the terms).
    """

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._vectors: list[np.ndarray | None] = []
        self._connection: duckdb.DuckDBPyConnection | None = None
        # DuckDB connections take one statement at a time; `RAG.asearch` runs in threads.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def hits(self) -> list[SearchHit]:
        """Every chunk held, in the order added."""
        return [entry.hit for entry in self._entries]

    def _terms(self, texts: Sequence[str]) -> list[list[str]]:
        with self._lock:
            if self._connection is None:
                connection = duckdb.connect(":memory:")
                load_extension(connection, "fts")
                self._connection = connection
            row = self._connection.execute(
                f"SELECT list_transform(?::VARCHAR[], t -> {terms_sql('t')})", [list(texts)]
            ).fetchone()
        return [list(terms) for terms in row[0]] if row else [[] for _ in texts]

    def add(
        self, hits: Sequence[SearchHit], vectors: Sequence[Sequence[float]] | None = None
    ) -> int:
        """Hold `hits` (and, in the same order, their `vectors`); return how many chunks the
        store now holds."""
        if vectors is not None and len(vectors) != len(hits):
            raise ValueError(f"{len(vectors)} vectors for {len(hits)} chunks")
        titled = [" ".join(filter(None, (hit.title, hit.content))) for hit in hits]
        for i, (hit, terms) in enumerate(zip(hits, self._terms(titled), strict=True)):
            self._entries.append(_Entry(hit, Counter(terms), len(terms)))
            vector = None if vectors is None else np.asarray(vectors[i], dtype=np.float32)
            self._vectors.append(vector)
        return len(self._entries)

    def remove(self, source_id: str, path: str) -> int:
        """Drop the chunks of the document `source_id`/`path`; return how many were dropped."""
        keep = [
            i
            for i, entry in enumerate(self._entries)
            if (entry.hit.source_id, entry.hit.path) != (source_id, path)
        ]
        dropped = len(self._entries) - len(keep)
        self._entries = [self._entries[i] for i in keep]
        self._vectors = [self._vectors[i] for i in keep]
        return dropped

    def _bm25(self, query: str, k: int, filters: SearchFilters) -> list[tuple[int, float]]:
        wanted = set(self._terms([query])[0])
        if not wanted or not self._entries:
            return []
        count = len(self._entries)
        average = sum(entry.length for entry in self._entries) / count or 1.0
        frequency = {t: sum(1 for e in self._entries if t in e.terms) for t in wanted}
        idf = {t: math.log10((count - df + 0.5) / (df + 0.5) + 1) for t, df in frequency.items()}
        scored: list[tuple[int, float]] = []
        for position, entry in enumerate(self._entries):
            if not _passes(entry.hit, filters):
                continue
            norm = _K1 * (1 - _B + _B * entry.length / average)
            score = sum(
                idf[t] * entry.terms[t] * (_K1 + 1) / (entry.terms[t] + norm)
                for t in wanted
                if entry.terms[t]
            )
            if score > 0:
                scored.append((position, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]

    def _cosine(
        self, query_vector: Sequence[float], k: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        query = np.asarray(query_vector, dtype=np.float32)
        scale = float(np.linalg.norm(query)) or 1.0
        scored: list[tuple[int, float]] = []
        for position, vector in enumerate(self._vectors):
            if vector is None or vector.shape != query.shape:
                continue
            if not _passes(self._entries[position].hit, filters):
                continue
            norm = float(np.linalg.norm(vector)) or 1.0
            scored.append((position, float(vector @ query) / (norm * scale)))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]

    def search(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode = "bm25",
        filters: SearchFilters | None = None,
        query_vector: Sequence[float] | None = None,
    ) -> list[SearchHit]:
        """The `k` best chunks for `query`, best first, with their scores. `vector` and
        `hybrid` compare `query_vector` (the query embedded by the caller) with the vectors
        held; hybrid without one, or with no vectors held, is BM25.

        Raises:
            SearchError: `mode` is unknown, or `vector` was asked with no query vector.
        """
        if mode not in SEARCH_MODES:
            raise SearchError(f"unknown search mode {mode!r}; one of {', '.join(SEARCH_MODES)}")
        where = filters or SearchFilters()
        if mode == "vector" and query_vector is None:
            raise SearchError("a vector search needs the query's vector: pass an embedder")
        depth = max(k, _FUSION_DEPTH)
        keyword = [] if mode == "vector" else self._bm25(query, depth, where)
        vectors = [] if query_vector is None else self._cosine(query_vector, depth, where)
        if mode == "bm25" or (mode == "hybrid" and not vectors):
            ranked = keyword[:k]
        elif mode == "vector":
            ranked = vectors[:k]
        else:
            fused = reciprocal_rank_fusion(
                [[(str(p), s) for p, s in keyword], [(str(p), s) for p, s in vectors]], k, RRF_K
            )
            ranked = [(int(p), s) for p, s in fused]
        return [replace(self._entries[p].hit, score=s) for p, s in ranked]
