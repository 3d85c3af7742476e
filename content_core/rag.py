"""The seeds' RAG layer over a content store: `RAG(embed=..., store=...)`, `index`/`aindex`,
`search`/`asearch`.

`index(text, source=...)` ingests a text handed in, as the seeds' does: it becomes a batch of
the store (source `rag`, path `source`), run through every stage (chunked with the RAG's
chunker, embedded, added to the search index) and searchable at once; indexing the same
source again replaces its text. `index()` with no text brings the index up to the store's
chunks (what `content-pipeline ingest` wrote). A hit of the hierarchical chunker carries its
parent section in `SearchHit.parent_content`, as the seeds'.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from content_core.embeddings import EmbedderConfig
from content_core.search.engine import Searcher
from content_core.search.highlight import format_hits
from content_core.search.index import ensure_index
from content_core.search.terms import DOCS_TABLE
from content_core.search.types import SearchFilters, SearchHit, SearchMode

if TYPE_CHECKING:
    from content_core.embeddings import Embedder, EmbedFunction
    from content_core.search.vector import VectorIndex
    from content_core.store import ContentStore

__all__ = ["RAG", "RAG_SOURCE_ID"]

# The source of the texts `RAG.index` is handed.
RAG_SOURCE_ID = "rag"


class RAG:
    """Retrieval over a content store's current chunks.

    Args:
        embed: what embeds queries for the vector half: an `Embedder` (e.g.
            `make_embedder(EmbedderConfig.from_environ())`, the one the store was built with)
            or, as the seeds pass, a function `list[str] -> list[vector]`. With one, searches
            default to hybrid (BM25 and vectors fused by reciprocal rank), without, to BM25
            (a vector search then embeds with the default, `EmbedderConfig()`).
        store: the store (a `ContentStore` or its folder).
        k: hits a search returns unless told otherwise.
        mode: `bm25`, `vector` or `hybrid`; default as `embed` says.
        embed_model: the model a function `embed` computes (only stored vectors of that model
            are compared); default: the model the environment configures (CONTENT_EMBEDDER...).
        chunker, chunk_size, chunk_overlap, parent_chunk_size: how `index(text)` chunks a text
            (as the seeds'; sizes in tokens here); default: the pipeline's `ChunkingConfig()`.

    The vectors are held in memory between searches and reloaded when the store changes.
    """

    def __init__(
        self,
        embed: Embedder | EmbedFunction | None = None,
        store: ContentStore | Path | str = "content_store",
        *,
        k: int = 5,
        mode: SearchMode | None = None,
        embed_model: str | None = None,
        chunker: str | None = None,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        parent_chunk_size: int | None = None,
    ) -> None:
        from content_core.chunking import ChunkingConfig
        from content_core.embeddings import as_embedder

        self.embedder = None if embed is None else as_embedder(embed, embed_model)
        folder = store if isinstance(store, (str, Path)) else store.root
        self.root = Path(folder).expanduser().resolve()
        self.k = k
        self.mode: SearchMode = mode or ("bm25" if embed is None else "hybrid")
        self._searcher = Searcher(self.root, self.embedder)
        default = ChunkingConfig()
        self.chunking = ChunkingConfig(
            chunker=chunker or default.chunker,
            chunk_size=chunk_size or default.chunk_size,
            chunk_overlap=default.chunk_overlap if chunk_overlap is None else chunk_overlap,
            options={} if parent_chunk_size is None else {"parent_chunk_size": parent_chunk_size},
        )
        # One searcher (one index connection, one copy of the vectors) for `search` and
        # `asearch`: DuckDB connections take one statement at a time.
        self._lock = threading.Lock()

    @property
    def vector_index(self) -> VectorIndex | None:
        """The store's vectors held in memory, once a vector or hybrid search loaded them."""
        return self._searcher.vector_index

    def index(self, text: str | None = None, *, source: str | None = None) -> int:
        """Ingest `text` as the document `source` (default: a name from its hash) and make it
        searchable; return its chunk count. Without `text`, bring the index up to the store's
        chunks and return how many it holds.

        Raises:
            SearchError: the index could not be written.
        """
        if text is None:
            return self._count()
        from content_core.discovery.discover import record_bytes
        from content_core.pipeline import PipelineConfig, run_batch
        from content_core.store import ContentStore, sha256_hex

        data = text.encode("utf-8")
        path = source or f"text-{sha256_hex(data)[:16]}.txt"
        store = ContentStore(self.root)
        batch = record_bytes(store, RAG_SOURCE_ID, path, data, location="RAG.index")
        # Without an embedder of its own the RAG embeds as the pipeline is configured.
        config = PipelineConfig(chunking=self.chunking, embedder=EmbedderConfig.from_environ())
        reports = run_batch(store, batch.batch_id, config, embedder=self.embedder)
        chunks = next(r for r in reports if r.table == "chunks")
        return chunks.rows - chunks.failures

    def _count(self) -> int:
        import duckdb

        path = ensure_index(self.root)
        connection = duckdb.connect(str(path), read_only=True)
        try:
            row = connection.execute(f"SELECT count(*) FROM {DOCS_TABLE}").fetchone()
        finally:
            connection.close()
        return int(row[0]) if row else 0

    async def aindex(self, text: str | None = None, *, source: str | None = None) -> int:
        """`index` in a worker thread."""
        return await asyncio.to_thread(self.index, text, source=source)

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """The best chunks for `query`, best first (the index is refreshed first if stale)."""
        with self._lock:
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
        return await asyncio.to_thread(self.search, query, k, mode=mode, filters=filters)

    def context(self, query: str, k: int | None = None) -> str:
        """The hits of `query` formatted for a prompt (`format_hits`)."""
        return format_hits(self.search(query, k))

    def close(self) -> None:
        """Close the index connection and drop the vectors held."""
        with self._lock:
            self._searcher.close()
