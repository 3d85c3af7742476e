"""InMemoryStore: the store index's terms, BM25 and cosine rankings fused by reciprocal rank,
the same filters as a store's search, and documents replaced by their source and path."""

from __future__ import annotations

import pytest

from content_core.errors import SearchError
from content_core.search import InMemoryStore, SearchFilters, SearchHit


def _hit(key: str, content: str, path: str, **fields: object) -> SearchHit:
    return SearchHit(chunk_id=key, score=0.0, content=content, source_id="notes", path=path,
                     **fields)  # type: ignore[arg-type]


@pytest.fixture
def store() -> InMemoryStore:
    held = InMemoryStore()
    held.add(
        [
            _hit("a", "Running shoes for the marathon.", "sport/a.txt", page_start=1, page_end=2),
            _hit("b", "The runner ran past the bakery.", "sport/b.txt", page_start=3),
            _hit("c", "Fresh bread from the bakery.", "food/c.txt", media_type="text/markdown"),
        ],
        [[1.0, 0.0], [0.7, 0.7], [0.0, 1.0]],
    )
    return held


def test_terms_are_the_indexs_stems(store: InMemoryStore) -> None:
    # Porter stems, as the store's index: "running" and "runs" meet at "run".
    assert [h.chunk_id for h in store.search("runs", 5)] == ["a"]
    assert {h.chunk_id for h in store.search("bakeries", 5)} == {"b", "c"}
    assert store.search("croissant", 5) == []
    hits = store.search("bakery bread", 5)
    assert hits[0].chunk_id == "c" and hits[0].score > hits[1].score > 0


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        pytest.param(SearchFilters(path_prefix="sport/"), ["b"], id="path-prefix"),
        pytest.param(SearchFilters(media_type="text/markdown"), ["c"], id="media-type"),
        pytest.param(SearchFilters(page_from=2, page_to=3), ["b"], id="pages"),
        pytest.param(SearchFilters(source_id="elsewhere"), [], id="other-source"),
    ],
)
def test_filters_hold_as_in_a_store(
    store: InMemoryStore, filters: SearchFilters, expected: list[str]
) -> None:
    assert [h.chunk_id for h in store.search("bakery", 5, filters=filters)] == expected


def test_vectors_rank_by_cosine_and_hybrid_fuses_both(store: InMemoryStore) -> None:
    assert [h.chunk_id for h in store.search("", 3, "vector", query_vector=[0.0, 2.0])] == [
        "c",
        "b",
        "a",
    ]
    # BM25 finds "b" and "c" for "bakery"; the vector of "a" brings it into the fusion, last.
    fused = store.search("bakery", 3, "hybrid", query_vector=[1.0, 0.0])
    assert {h.chunk_id for h in fused[:2]} == {"b", "c"} and fused[2].chunk_id == "a"
    assert [h.chunk_id for h in store.search("bakery", 3, "hybrid")] == [
        h.chunk_id for h in store.search("bakery", 3, "bm25")
    ]


def test_removing_a_document_and_bad_calls(store: InMemoryStore) -> None:
    assert store.remove("notes", "food/c.txt") == 1 and len(store) == 2
    assert [h.chunk_id for h in store.hits] == ["a", "b"]
    with pytest.raises(SearchError, match="unknown search mode"):
        store.search("bread", 3, "fuzzy")  # type: ignore[arg-type]
    with pytest.raises(SearchError, match="embedder"):
        store.search("bread", 3, "vector")
    with pytest.raises(ValueError, match="2 vectors for 1 chunks"):
        store.add([_hit("d", "x", "d.txt")], [[1.0], [2.0]])
