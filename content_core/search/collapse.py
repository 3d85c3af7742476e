"""Search hits collapsed per document: the best chunk of each file shown, its other chunks
among the hits counted, and copies and near-duplicates of it (the same chunk under other paths,
pairs in `current_document_similarity`) folded into it as "also in".

Collapsing reads only the hits a search fetched (`COLLAPSE_DEPTH` times `k`) and a map of the
store's near-duplicate groups, loaded once per store state; never the index itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb

from content_core.errors import SearchError
from content_core.search.types import SearchHit

__all__ = [
    "COLLAPSE_DEPTH",
    "MAX_COLLAPSE_DEPTH",
    "DocumentKey",
    "chunk_copies",
    "collapse_hits",
    "collapse_search",
    "near_duplicate_groups",
]

# A per-document search fetches this many chunks per document asked for: enough that the k
# documents are found when a few files hold most of the best chunks (one zip held three of
# five places in the corpus), few enough that collapsing costs nothing next to the ranking.
# When the chunks fetched hold fewer than k documents and more were there, it fetches 4 times
# as many, up to MAX_COLLAPSE_DEPTH per document.
COLLAPSE_DEPTH = 5
MAX_COLLAPSE_DEPTH = 80

DocumentKey = tuple[str, str]  # (source_id, path): a file, the unit a result stands for


def near_duplicate_groups(root: Path | str) -> dict[DocumentKey, DocumentKey]:
    """Each file with a current near-duplicate, mapped to its group's representative (the
    least (source_id, path) of the group): pairs of `current_document_similarity` joined
    transitively, so copies below the threshold with each other but above it with a third
    are one group.

    Raises:
        SearchError: the store's tables could not be read.
    """
    # Imported here: the store brings pyarrow, which a BM25 search never needs otherwise.
    from content_core.store import DOCUMENT_SIMILARITY, ContentStore

    try:
        rows = ContentStore(root).query(
            "SELECT DISTINCT source_id, path, other_source_id, other_path "
            f"FROM current_{DOCUMENT_SIMILARITY} WHERE other_path IS NOT NULL"
        ).to_pylist()
    except duckdb.Error as exc:
        raise SearchError(f"cannot read the near-duplicates of {root}: {exc}") from exc
    parent: dict[DocumentKey, DocumentKey] = {}

    def find(key: DocumentKey) -> DocumentKey:
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for row in rows:
        a = find((str(row["source_id"]), str(row["path"])))
        b = find((str(row["other_source_id"]), str(row["other_path"])))
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {key: find(key) for key in parent}


def chunk_copies(
    rows: Iterable[Sequence[Any]], columns: Sequence[str]
) -> dict[str, list[DocumentKey]]:
    """The files holding each chunk, from index rows (`columns` names their values): a file
    stored under several paths has the same chunks under each."""
    # Any: DuckDB row values, read by column name.
    chunk, source, path = (columns.index(name) for name in ("chunk_id", "source_id", "path"))
    found: dict[str, list[DocumentKey]] = {}
    for row in rows:
        key = (str(row[source]), str(row[path]))
        paths = found.setdefault(str(row[chunk]), [])
        if key not in paths:
            paths.append(key)
    return found


@dataclass(slots=True)
class _Result:
    hit: SearchHit
    more: int = 0
    also: list[DocumentKey] = field(default_factory=list)


def collapse_hits(
    hits: Sequence[SearchHit],
    k: int,
    groups: Mapping[DocumentKey, DocumentKey],
    copies: Mapping[str, Sequence[DocumentKey]] | None = None,
) -> list[SearchHit]:
    """At most `k` hits, one per document, best first: each file's best chunk among `hits`
    (best first), with `more_in_document` counting its other chunks there and `also_in`
    naming (`source_id:path`) the files folded into it: those holding the same chunk
    (`copies`, from `chunk_copies`) and those of its near-duplicate group (`groups`, from
    `near_duplicate_groups`). A folded file's own chunks are not counted again."""
    results: list[_Result] = []
    placed: dict[DocumentKey, int] = {}  # a file -> the result it is shown in or folded into
    by_group: dict[DocumentKey, int] = {}
    skipped: set[DocumentKey] = set()  # new files met once k results were made
    for hit in hits:
        doc = (hit.source_id, hit.path)
        if doc in placed:
            shown = results[placed[doc]]
            if (shown.hit.source_id, shown.hit.path) == doc:
                shown.more += 1
            continue
        if doc in skipped:
            continue
        group = groups.get(doc)
        index = by_group.get(group) if group is not None else None
        if index is None:
            index = next(
                (placed[d] for d in (copies or {}).get(hit.chunk_id, ()) if d in placed), None
            )
        if index is not None:
            _fold(results[index], doc, index, placed)
            continue
        if len(results) >= k:
            skipped.add(doc)
            continue
        index = len(results)
        results.append(_Result(hit))
        placed[doc] = index
        if group is not None:
            by_group[group] = index
        for other in (copies or {}).get(hit.chunk_id, ()):
            if other not in placed:
                _fold(results[index], other, index, placed)
                if (other_group := groups.get(other)) is not None:
                    by_group.setdefault(other_group, index)
    return [
        replace(
            result.hit,
            more_in_document=result.more,
            also_in=tuple(f"{source}:{path}" for source, path in result.also),
        )
        for result in results
    ]


def _fold(result: _Result, doc: DocumentKey, index: int, placed: dict[DocumentKey, int]) -> None:
    placed[doc] = index
    if doc != (result.hit.source_id, result.hit.path) and doc not in result.also:
        result.also.append(doc)


def collapse_search(
    fetch: Callable[[int], tuple[Sequence[SearchHit], Mapping[str, Sequence[DocumentKey]], int]],
    k: int,
    groups: Mapping[DocumentKey, DocumentKey],
) -> list[SearchHit]:
    """The `k` best documents (`collapse_hits`) of the chunks `fetch(n)` ranks: hits, the
    files of each chunk and how many chunks were ranked. `k * COLLAPSE_DEPTH` chunks are
    fetched, more only while they hold fewer than `k` documents and the ranking was full."""
    depth = COLLAPSE_DEPTH
    while True:
        hits, copies, ranked = fetch(k * depth)
        results = collapse_hits(hits, k, groups, copies)
        if len(results) >= k or ranked < k * depth or depth >= MAX_COLLAPSE_DEPTH:
            return results
        depth *= 4
