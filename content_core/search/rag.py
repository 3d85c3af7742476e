"""The seeds' RAG layer over a content store: `RAG(embed=..., store=...)`, `index`/`aindex`,
`search`/`asearch`.

The seeds' RAG chunks text it is handed; here the pipeline has chunked every ingested file
already (`content-pipeline ingest`, with the chunker configured there, hierarchical included),
so `index` brings the store's search index up to date and `search` reads it. A hit of the
hierarchical chunker carries its parent section in `SearchHit.parent_content`, as the seeds'.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from content_core.search.bm25 import INDEX_TABLE, ensure_index
from content_core.search.engine import Searcher
from content_core.search.highlight import format_hits
from content_core.search.types import SearchFilters, SearchHit, SearchMode

if TYPE_CHECKING:
    from content_core.store import ContentStore

__all__ = ["RAG"]


class RAG:
    """Retrieval over a content store's current chunks.

    Args:
        embed: the embedder of the vector half; with one, searches default to hybrid (BM25 and
            vectors fused by reciprocal rank), without, to BM25.
        store: the store (a `ContentStore` or its folder).
        k: hits a search returns unless told otherwise.
        mode: `bm25`, `vector` or `hybrid`; default as `embed` says.
    """

    def __init__(
        self,
        embed: object | None = None,
        store: ContentStore | Path | str = "content_store",
        *,
        k: int = 5,
        mode: SearchMode | None = None,
    ) -> None:
        self.embed = embed
        folder = store if isinstance(store, (str, Path)) else store.root
        self.root = Path(folder).expanduser().resolve()
        self.k = k
        self.mode: SearchMode = mode or ("bm25" if embed is None else "hybrid")
        self._searcher = Searcher(self.root)

    def index(self) -> int:
        """Bring the search index up to the store's current chunks; return how many it holds."""
        import duckdb

        path = ensure_index(self.root)
        connection = duckdb.connect(str(path), read_only=True)
        try:
            row = connection.execute(f"SELECT count(*) FROM {INDEX_TABLE}").fetchone()
        finally:
            connection.close()
        return int(row[0]) if row else 0

    async def aindex(self) -> int:
        """`index` in a worker thread."""
        return await asyncio.to_thread(self.index)

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """The best chunks for `query`, best first (the index is refreshed first if stale)."""
        return self._searcher.search(query, k or self.k, mode or self.mode, filters)

    async def asearch(
        self,
        query: str,
        k: int | None = None,
        *,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """`search` in a worker thread."""
        searcher = Searcher(self.root)  # a connection of its own: DuckDB's are not shared
        try:
            return await asyncio.to_thread(
                searcher.search, query, k or self.k, mode or self.mode, filters
            )
        finally:
            searcher.close()

    def context(self, query: str, k: int | None = None) -> str:
        """The hits of `query` formatted for a prompt (`format_hits`)."""
        return format_hits(self.search(query, k))

    def close(self) -> None:
        """Close the index connection."""
        self._searcher.close()
