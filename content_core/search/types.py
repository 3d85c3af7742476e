"""Values shared by every search mode: the filters, a hit, and the modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = ["SEARCH_MODES", "HitBox", "SearchFilters", "SearchHit", "SearchMode"]

SearchMode = Literal["bm25", "vector", "hybrid"]
SEARCH_MODES: tuple[SearchMode, ...] = ("bm25", "vector", "hybrid")


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Which chunks a search may return; every field left None lets everything through.

    `page` keeps the chunks whose page range (`page_start`..`page_end`) holds one of the pages
    `page_from`..`page_to`; a chunk with no page (plain text) fails any page filter.
    """

    source_id: str | None = None
    path_prefix: str | None = None
    media_type: str | None = None
    page_from: int | None = None
    page_to: int | None = None

    def where(self, alias: str = "") -> tuple[str, list[object]]:
        """A SQL condition over a chunk table (columns source_id, path, media_type,
        page_start, page_end) and its parameters; `TRUE` when nothing is filtered."""
        col = f"{alias}." if alias else ""
        clauses: list[str] = []
        params: list[object] = []
        if self.source_id is not None:
            clauses.append(f"{col}source_id = ?")
            params.append(self.source_id)
        if self.path_prefix is not None:
            clauses.append(f"starts_with({col}path, ?)")
            params.append(self.path_prefix)
        if self.media_type is not None:
            clauses.append(f"{col}media_type = ?")
            params.append(self.media_type)
        if self.page_to is not None:
            clauses.append(f"{col}page_start <= ?")
            params.append(self.page_to)
        if self.page_from is not None:
            clauses.append(f"coalesce({col}page_end, {col}page_start) >= ?")
            params.append(self.page_from)
        return (" AND ".join(clauses) or "TRUE"), params


class HitBox(NamedTuple):
    """A rectangle of page `page` a hit's chunk covers (as `chunks.boxes`: PDF points, origin
    at the bottom left; image pixels, origin at the top left, for an image)."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One chunk a search returned, best first; `parent_content` is the enclosing section's
    text when the hierarchical chunker made the chunk, else None; `title` is its document's
    declared title (indexed with the chunk), if it has one; `more_in_document` and `also_in`
    are set when hits are collapsed per document (`search.collapse`); `boxes` is where the
    chunk lies on its pages (empty for formats without boxes)."""

    chunk_id: str
    score: float
    content: str
    source_id: str
    path: str
    media_type: str | None = None
    page_start: int | None = None
    page_end: int | None = None
    breadcrumb: str | None = None
    parent_content: str | None = None
    batch_id: str | None = None
    title: str | None = None
    # Per-document search (the default): the document's other chunks among the hits fetched,
    # and the files folded into this hit (copies, near-duplicates) as `source_id:path`.
    more_in_document: int = 0
    also_in: tuple[str, ...] = ()
    boxes: tuple[HitBox, ...] = ()

    @property
    def source(self) -> str:
        """Where the chunk comes from, as the seeds' hits name it: `source_id:path`."""
        return f"{self.source_id}:{self.path}"
