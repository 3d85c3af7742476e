"""BM25 ranking over the term tables of `search.terms` (the index in `<store>/search.duckdb`,
kept current per batch by `search.index`).

The scores are `fts`'s `match_bm25` (k1 = 1.2, b = 0.75, log10 IDF), computed from the
postings of the query's terms alone.
"""

from __future__ import annotations

import duckdb

from content_core.search.segment import segment_function
from content_core.search.terms import DOCS_TABLE, POSTINGS_TABLE, STATS_TABLE, TERMS_TABLE
from content_core.search.types import SearchFilters
from content_core.store.search_sql import IGNORE, STEMMER, terms_sql

__all__ = ["IGNORE", "STEMMER", "bm25_ranking"]


def bm25_ranking(
    connection: duckdb.DuckDBPyConnection, query: str, k: int, filters: SearchFilters
) -> list[tuple[str, float]]:
    """The `k` best chunks for `query` by BM25 (chunk_id, score), best first, within `filters`.

    The term ids go into the SQL as constants, so each term's postings are read by zone map
    from the term-sorted postings (and the small unsorted tail the latest batches appended).
    A term in most chunks ("the") has a long posting list and a tiny IDF: the chunks holding a
    rarer query term are scored first, and when the k-th of them beats the most the common
    terms alone can add up to (IDF x (k1 + 1) each), no other chunk can enter the top k
    (MaxScore); else every posting is scored. A chunk stored under several paths is one
    document per path and one hit (its best).
    """
    rows = connection.execute(
        f"SELECT t.termid, t.df, log((st.num_docs - t.df + 0.5) / (t.df + 0.5) + 1), "
        f"st.num_docs FROM {TERMS_TABLE} t, {STATS_TABLE} st WHERE t.df > 0 AND t.term IN "
        f"(SELECT DISTINCT unnest({terms_sql('$1', segment_function(connection))}))",
        [query],
    ).fetchall()
    if not rows or k <= 0:
        return []
    terms = [(int(termid), int(df), float(idf)) for termid, df, idf, _ in rows]
    common = {t for t, df, _ in terms if df > _COMMON_SHARE * int(rows[0][3])}
    if len(common) == len(terms) > 1:  # all common: the rarest decides the candidates
        common.discard(min(terms, key=lambda term: (term[1], term[0]))[0])
    depth = k
    while True:
        ranked: list[tuple[int, float]] = []
        if common and len(common) < len(terms) and sum(df for _, df, _ in terms) > _FULL_SCAN:
            ranked = _score(connection, terms, common, depth, filters)
            bound = sum(idf * (_K1 + 1) for t, _, idf in terms if t in common)
            if len(ranked) < depth or ranked[-1][1] <= bound:
                ranked = []  # a chunk of common terms alone might rank: score every posting
        if not ranked:
            ranked = _score(connection, terms, set(), depth, filters)
        best = _by_chunk(connection, ranked)
        if len(best) >= k or len(ranked) < depth:
            return best[:k]
        depth *= 4  # copies of one chunk filled the list: look deeper


def _by_chunk(
    connection: duckdb.DuckDBPyConnection, ranked: list[tuple[int, float]]
) -> list[tuple[str, float]]:
    """(chunk_id, score) of ranked documents, each chunk once at its best, best first."""
    if not ranked:
        return []
    docids = ", ".join(str(docid) for docid, _ in ranked)
    names = dict(
        connection.execute(
            f"SELECT docid, chunk_id FROM {DOCS_TABLE} WHERE docid IN ({docids})"
        ).fetchall()
    )
    best: dict[str, float] = {}
    for docid, score in ranked:  # best first: a chunk's first document is its best
        best.setdefault(str(names[docid]), score)
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))


_K1 = 1.2
# A term in more than this share of the chunks counts as common for MaxScore...
_COMMON_SHARE = 0.02
# ...when the query's postings number more than this (below it, scoring them all is quick).
_FULL_SCAN = 50_000


def _score(
    connection: duckdb.DuckDBPyConnection,
    terms: list[tuple[int, int, float]],
    common: set[int],
    k: int,
    filters: SearchFilters,
) -> list[tuple[int, float]]:
    """The k best (docid, score): with `common` terms, only of the chunks holding another term."""
    rare = " UNION ALL ".join(
        f"SELECT docid FROM {POSTINGS_TABLE} WHERE termid = {t}"
        for t, _, _ in terms
        if t not in common
    )
    parts = []
    for termid, _df, idf in terms:
        only = " AND docid IN (SELECT docid FROM cand)" if termid in common else ""
        parts.append(
            f"SELECT docid, tf, doc_len, {idf!r}::DOUBLE AS idf FROM {POSTINGS_TABLE} "
            f"WHERE termid = {termid}{only}"
        )
    where, params = filters.where("c")
    joined = "" if where == "TRUE" else f"JOIN {DOCS_TABLE} c ON c.docid = p.docid WHERE {where} "
    rows = connection.execute(
        (f"WITH cand AS ({rare}) " if common else "")
        # DOUBLE literals: DuckDB reads 2.2 as a DECIMAL, which overflows in a product.
        + f"SELECT p.docid, sum(p.idf * p.tf * {_K1 + 1!r}::DOUBLE / "
        f"(p.tf + {_K1!r}::DOUBLE * (0.25::DOUBLE + 0.75::DOUBLE * p.doc_len / "
        "(st.total_len::DOUBLE / st.num_docs)))) AS score "
        f"FROM ({' UNION ALL '.join(parts)}) p CROSS JOIN {STATS_TABLE} st {joined}"
        "GROUP BY p.docid ORDER BY score DESC, p.docid LIMIT ?",
        [*params, k],
    ).fetchall()
    return [(int(docid), float(score)) for docid, score in rows]
