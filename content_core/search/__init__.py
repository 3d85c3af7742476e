"""Search over a store's chunks: BM25 (DuckDB `fts`), vectors (`vector`, the embeddings'
half) and both fused by reciprocal rank; the seeds' `SearchHit` and `format_hits` (their
`RAG` is `content_core.rag`, on top of the pipeline)."""

from __future__ import annotations

from content_core.search.engine import RRF_K, Searcher, reciprocal_rank_fusion, search
from content_core.search.highlight import format_hits, highlight, snippet
from content_core.search.types import SEARCH_MODES, SearchFilters, SearchHit, SearchMode

__all__ = [
    "RRF_K",
    "SEARCH_MODES",
    "SearchFilters",
    "SearchHit",
    "SearchMode",
    "Searcher",
    "format_hits",
    "highlight",
    "reciprocal_rank_fusion",
    "search",
    "snippet",
]
