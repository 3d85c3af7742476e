"""The search library's pure parts: the highlight, the snippet, reciprocal rank fusion, the
filters' SQL (run on a real DuckDB table), and the BM25 index over an in-memory table."""

from __future__ import annotations

import duckdb
import pytest

from content_core.search import SearchFilters, highlight, reciprocal_rank_fusion, snippet
from content_core.search.bm25 import bm25_ranking, build_index
from content_core.search.highlight import ANSI_MARKS
from content_core.search.vector import VECTORS_TABLE, rank_vectors


def _porter(words: list[str]) -> list[str]:
    # A stand-in stemmer: enough to show that stems, not spellings, decide the marks.
    return [w.removesuffix("s") for w in words]


def test_highlight_marks_each_word_whose_stem_the_query_has() -> None:
    text = "Cats chase the cat; concatenate is not a cat."
    assert highlight(text, "cat", stem=_porter) == (
        "**Cats** chase the **cat**; concatenate is not a **cat**."
    )
    assert highlight("Zebra", "zebra", ANSI_MARKS) == "\x1b[1mZebra\x1b[0m"
    assert highlight("no match here", "zebra") == "no match here"


def test_snippet_is_one_line_around_the_first_match() -> None:
    text = "intro " * 100 + "the zebra\nline " + "outro " * 100
    piece = snippet(text, "zebra", width=80)
    assert "\n" not in piece and "**zebra**" in piece
    assert piece.startswith("… ") and piece.endswith(" …") and len(piece) < 100
    assert snippet("short zebra", "zebra") == "short **zebra**"


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    keyword = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    vector = [("b", 0.9), ("c", 0.8), ("d", 0.1)]
    fused = reciprocal_rank_fusion([keyword, vector], 3)
    assert [key for key, _ in fused] == ["b", "c", "a"]
    assert fused[0][1] == 1 / 62 + 1 / 61


def _table() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE chunk_index AS SELECT * FROM (VALUES "
        "('1', 's1', 'a/x.pdf', 'application/pdf', 1, 2, 'zebra stripes on page one'), "
        "('2', 's1', 'a/y.txt', 'text/plain', NULL, NULL, 'zebra in plain text'), "
        "('3', 's2', 'b/z.pdf', 'application/pdf', 5, 5, 'a zebra zebra on page five'), "
        "('4', 's2', 'b/w.txt', 'text/plain', NULL, NULL, 'nothing to see')"
        ") t(chunk_id, source_id, path, media_type, page_start, page_end, content)"
    )
    build_index(connection)
    return connection


def test_bm25_ranking_with_each_filter() -> None:
    connection = _table()

    def ids(**given: object) -> list[str]:
        filters = SearchFilters(**given)  # type: ignore[arg-type]
        return [key for key, _ in bm25_ranking(connection, "zebras", 10, filters)]

    # Two mentions first, then the shorter text; "zebras" stems to "zebra".
    assert ids() == ["3", "2", "1"]
    assert ids(source_id="s1") == ["2", "1"]
    assert ids(path_prefix="b/") == ["3"]
    assert ids(media_type="text/plain") == ["2"]
    assert ids(page_from=2) == ["3", "1"]
    assert ids(page_from=3, page_to=4) == []
    assert ids(page_to=1) == ["1"]
    assert bm25_ranking(connection, "giraffe", 10, SearchFilters()) == []


def test_bm25_ranking_scores_as_fts_match_bm25() -> None:
    connection = _table()
    for query in ("zebra", "zebras on page", "plain page one"):
        ours = bm25_ranking(connection, query, 10, SearchFilters())
        theirs = connection.execute(
            "SELECT chunk_id, score FROM (SELECT chunk_id, "
            "fts_main_chunk_index.match_bm25(chunk_id, ?) AS score FROM chunk_index) "
            "WHERE score IS NOT NULL ORDER BY score DESC",
            [query],
        ).fetchall()
        assert dict(ours) == pytest.approx(dict(theirs))
        assert len(ours) == len(theirs) > 0


def test_bm25_ranking_prunes_common_terms_without_changing_the_top_k() -> None:
    """60,000 chunks: with a rare term, a term in every chunk is scored only where the rare
    one is (MaxScore); with common terms alone, everything is. fts's scores either way."""
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE chunk_index AS SELECT 'c' || i AS chunk_id, 's' AS source_id, "
        "'p' AS path, NULL AS media_type, NULL::INT AS page_start, NULL::INT AS page_end, "
        "'common filler w' || (i % 500) || repeat(' pad', i % 7) "
        "|| CASE WHEN i % 1000 = 0 THEN ' rare' ELSE '' END AS content FROM range(60000) t(i)"
    )
    build_index(connection)
    for query in ("common rare", "common filler w7", "filler common"):
        ours = bm25_ranking(connection, query, 10, SearchFilters())
        theirs = connection.execute(
            "SELECT score FROM (SELECT fts_main_chunk_index.match_bm25(chunk_id, ?) AS score "
            "FROM chunk_index) WHERE score IS NOT NULL ORDER BY score DESC LIMIT 10",
            [query],
        ).fetchall()
        assert [score for _, score in ours] == pytest.approx([row[0] for row in theirs])
    assert {key for key, _ in bm25_ranking(connection, "common rare", 60, SearchFilters())} == {
        f"c{i}" for i in range(0, 60000, 1000)
    }


def test_rank_vectors_gives_one_hit_per_chunk_as_a_full_grouping_does() -> None:
    connection = duckdb.connect()
    connection.execute(
        f"CREATE TABLE {VECTORS_TABLE} AS SELECT 'c' || j AS chunk_id, 's' AS source_id, "
        "'p' || i AS path, NULL::INTEGER AS page_start, NULL::INTEGER AS page_end, "
        "'text/plain' AS media_type, [cos(j), sin(j), cos(j * 7)]::FLOAT[3] AS embedding "
        "FROM (SELECT i, i % 40 AS j FROM range(400) t(i))"
    )
    query = [1.0, 0.2, 0.5]
    # Every chunk has ten equal rows: the first 4k rows hold 5 chunks, so it looks deeper.

    def grouped(where: str, k: int) -> list[tuple[str, float]]:
        return connection.execute(
            "SELECT chunk_id, max(1 - array_cosine_distance(embedding, ?::FLOAT[3])) AS score "
            f"FROM {VECTORS_TABLE} WHERE {where} GROUP BY chunk_id "
            "ORDER BY score DESC, chunk_id LIMIT ?",
            [query, k],
        ).fetchall()

    full = grouped("TRUE", 12)
    ranked = rank_vectors(connection, query, 12)
    assert [c for c, _ in ranked] == [c for c, _ in full] and len(set(ranked)) == 12
    assert [s for _, s in ranked] == pytest.approx([s for _, s in full])
    filtered = rank_vectors(connection, query, 5, SearchFilters(path_prefix="p1"))
    assert [c for c, _ in filtered] == [c for c, _ in grouped("path LIKE 'p1%'", 5)]
    assert rank_vectors(connection, query, 5, SearchFilters(source_id="none")) == []
