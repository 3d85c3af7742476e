"""Search over a store's chunks: BM25 (DuckDB `fts`), vectors (`vector`, the embeddings'
half) and both fused by reciprocal rank; the seeds' `SearchHit` and `format_hits` (their
`RAG` is `content_core.rag`, on top of the pipeline); `InMemoryStore`, the same searches over
chunks held in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.search.engine import RRF_K as RRF_K
from content_core.search.engine import Searcher as Searcher
from content_core.search.engine import reciprocal_rank_fusion as reciprocal_rank_fusion
from content_core.search.engine import search as search
from content_core.search.highlight import format_hits as format_hits
from content_core.search.highlight import highlight as highlight
from content_core.search.highlight import snippet as snippet
from content_core.search.memory import InMemoryStore as InMemoryStore
from content_core.search.types import SEARCH_MODES as SEARCH_MODES
from content_core.search.types import HitBox as HitBox
from content_core.search.types import SearchFilters as SearchFilters
from content_core.search.types import SearchHit as SearchHit
from content_core.search.types import SearchMode as SearchMode

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
