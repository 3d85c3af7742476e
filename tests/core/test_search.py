"""The search library's pure parts: the highlight, the snippet, reciprocal rank fusion, the
filters' SQL (run on a real DuckDB table), and the BM25 index over an in-memory table."""

from __future__ import annotations

import duckdb
import pytest

from content_core.search import SearchFilters, highlight, reciprocal_rank_fusion, snippet
from content_core.search.bm25 import IGNORE, STEMMER, bm25_ranking
from content_core.search.engine import RRF_K, VECTOR_WEIGHT
from content_core.search.highlight import ANSI_MARKS
from content_core.search.terms import apply_rows, create_tables, index_counts
from content_core.search.vector import VECTORS_TABLE, rank_vectors
from content_core.store import load_extension


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
    assert fused[0][1] == 1 / (RRF_K + 2) + 1 / (RRF_K + 1)


def test_weighted_fusion_lets_the_first_ranking_lead() -> None:
    """The engine's weights: a chunk BM25 ranks first beats one the vectors rank first."""
    keyword = [("a", 9.0), ("b", 5.0)]
    vector = [("b", 0.9), ("c", 0.8), ("a", 0.1)]
    fused = reciprocal_rank_fusion([keyword, vector], 3, weights=(1.0, VECTOR_WEIGHT))
    assert [key for key, _ in fused] == ["a", "b", "c"]
    assert fused[2][1] == pytest.approx(VECTOR_WEIGHT / (RRF_K + 2))
    # Equal weights are the plain fusion.
    assert reciprocal_rank_fusion([keyword, vector], 3, weights=(1.0, 1.0)) == (
        reciprocal_rank_fusion([keyword, vector], 3)
    )


def _index(connection: duckdb.DuckDBPyConnection, rows: str, batch: int = 1) -> None:
    """Apply the chunks of `rows` (a relation: chunk_id, source_id, path, media_type,
    page_start, page_end, content) as batch `b<batch>` (its raw_files: their paths)."""
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE _c AS SELECT 'b{batch}' AS batch_id, *, "
        f"NULL::VARCHAR AS breadcrumb, NULL::VARCHAR AS metadata, NULL::VARCHAR AS error_type "
        f"FROM {rows}"
    )
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE _r AS SELECT DISTINCT 'b{batch}' AS batch_id, source_id, "
        f"path, {batch}::BIGINT AS batch_seq, 'added' AS change, media_type FROM _c"
    )
    apply_rows(connection, "_r", "_c")


def _fts(connection: duckdb.DuckDBPyConnection) -> None:
    """`fts`'s own index over the indexed documents, to compare scores with."""
    load_extension(connection, "fts")
    connection.execute("CREATE OR REPLACE TABLE fts_docs AS SELECT docid, content FROM chunk_index")
    ignore = IGNORE.replace("'", "''")
    connection.execute(
        f"PRAGMA create_fts_index('fts_docs', 'docid', 'content', stemmer='{STEMMER}', "
        f"stopwords='none', ignore='{ignore}', strip_accents=1, lower=1, overwrite=1)"
    )


def _match_bm25(connection: duckdb.DuckDBPyConnection, query: str) -> dict[str, float]:
    rows = connection.execute(
        "SELECT c.chunk_id, s.score FROM (SELECT docid, "
        "fts_main_fts_docs.match_bm25(docid, ?) AS score FROM fts_docs) s "
        "JOIN chunk_index c USING (docid) WHERE s.score IS NOT NULL",
        [query],
    ).fetchall()
    return {str(chunk): float(score) for chunk, score in rows}


def _table() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    create_tables(connection)
    connection.execute(
        "CREATE TABLE chunks AS SELECT * FROM (VALUES "
        "('1', 's1', 'a/x.pdf', 'application/pdf', 1, 2, 'zebra stripes on page one'), "
        "('2', 's1', 'a/y.txt', 'text/plain', NULL, NULL, 'zebra in plain text'), "
        "('3', 's2', 'b/z.pdf', 'application/pdf', 5, 5, 'a zebra zebra on page five'), "
        "('4', 's2', 'b/w.txt', 'text/plain', NULL, NULL, 'nothing to see')"
        ") t(chunk_id, source_id, path, media_type, page_start, page_end, content)"
    )
    _index(connection, "chunks")
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
    _fts(connection)
    for query in ("zebra", "zebras on page", "plain page one"):
        ours = bm25_ranking(connection, query, 10, SearchFilters())
        theirs = _match_bm25(connection, query)
        assert dict(ours) == pytest.approx(theirs)
        assert len(ours) == len(theirs) > 0


def test_a_batch_replaces_and_deletes_paths_without_touching_other_postings() -> None:
    """Incremental upkeep: batch 2 rewrites one file and deletes another; the postings of the
    files it does not touch are the very rows batch 1 wrote, and the scores are still fts's
    over what is current. A batch applied late (an older seq) changes nothing it lost."""
    connection = _table()
    before = connection.execute(
        "SELECT termid, docid, tf FROM index_postings WHERE docid IN "
        "(SELECT docid FROM chunk_index WHERE path IN ('a/y.txt', 'b/z.pdf')) ORDER BY ALL"
    ).fetchall()
    connection.execute(
        "CREATE TABLE chunks2 AS SELECT * FROM (VALUES "
        "('5', 's1', 'a/x.pdf', 'application/pdf', 1, 1, 'a giraffe replaced the zebra page')"
        ") t(chunk_id, source_id, path, media_type, page_start, page_end, content)"
    )
    _index(connection, "chunks2", batch=2)
    connection.execute(
        "INSERT INTO _r VALUES ('b2', 's2', 'b/w.txt', 2, 'deleted', NULL)"
    )  # a deletion: a raw_files row and no chunk
    apply_rows(connection, "_r", "_c")
    after = connection.execute(
        "SELECT termid, docid, tf FROM index_postings WHERE docid IN "
        "(SELECT docid FROM chunk_index WHERE path IN ('a/y.txt', 'b/z.pdf')) ORDER BY ALL"
    ).fetchall()
    assert after == before
    paths = connection.execute("SELECT path FROM chunk_index ORDER BY path").fetchall()
    assert [p for (p,) in paths] == ["a/x.pdf", "a/y.txt", "b/z.pdf"]
    assert [k for k, _ in bm25_ranking(connection, "giraffe", 10, SearchFilters())] == ["5"]
    assert bm25_ranking(connection, "nothing", 10, SearchFilters()) == []
    _fts(connection)
    for query in ("zebra", "page", "giraffe zebra"):
        assert dict(bm25_ranking(connection, query, 10, SearchFilters())) == pytest.approx(
            _match_bm25(connection, query)
        )
    # Batch 1 again (a retry that lands after batch 2): nothing of batch 2 is undone.
    counts = index_counts(connection)
    _index(connection, "chunks", batch=1)
    assert index_counts(connection) == counts
    assert [k for k, _ in bm25_ranking(connection, "stripes", 10, SearchFilters())] == []


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


def _titled(connection: duckdb.DuckDBPyConnection, batch: int, title: str, content: str) -> None:
    """Apply one chunk of `a/doc.html` whose metadata carries its document's `title`."""
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE _c AS SELECT 'b{batch}' AS batch_id, 'c{batch}' AS "
        "chunk_id, 's1' AS source_id, 'a/doc.html' AS path, 'text/html' AS media_type, "
        "NULL::INTEGER AS page_start, NULL::INTEGER AS page_end, NULL::VARCHAR AS breadcrumb, "
        "json_object('title', ?::VARCHAR) AS metadata, ?::VARCHAR AS content, "
        "NULL::VARCHAR AS error_type",
        [title, content],
    )
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE _r AS SELECT DISTINCT batch_id, source_id, path, "
        f"{batch}::BIGINT AS batch_seq, 'added' AS change, media_type FROM _c"
    )
    apply_rows(connection, "_r", "_c")


def test_a_chunk_is_found_by_its_documents_title_until_the_title_changes() -> None:
    """The title in a chunk's metadata is indexed with its content; a new version of the file
    removes the old title's postings and df as it removes the old content's."""
    connection = duckdb.connect()
    create_tables(connection)
    _titled(connection, 1, "Marmalade almanac", "weather tables for the harbour")
    assert [k for k, _ in bm25_ranking(connection, "almanac", 10, SearchFilters())] == ["c1"]
    _titled(connection, 2, "Quince gazette", "weather tables for the harbour")
    assert bm25_ranking(connection, "almanac", 10, SearchFilters()) == []
    assert [k for k, _ in bm25_ranking(connection, "quince", 10, SearchFilters())] == ["c2"]
    df = dict(connection.execute("SELECT term, df FROM index_terms").fetchall())
    assert (df["almanac"], df["quinc"], df["harbour"]) == (0, 1, 1)
    title = connection.execute("SELECT title FROM chunk_index").fetchall()
    assert title == [("Quince gazette",)]
    assert index_counts(connection) == (1, 7)  # two title terms and five of the content
