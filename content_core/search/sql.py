"""`search_chunks(query, k)`: a DuckDB table macro in the catalog, for SQL clients.

It computes BM25 exactly as the `fts` index does (k1 = 1.2, b = 0.75, log10 IDF, the same
tokenizer and Porter stems: the scores are equal) over `current_chunks` at query time, so it
needs nothing but the catalog and `LOAD fts` (for `stem`) and is always current. It reads every
chunk, so on a large store `content-pipeline search` and `content_core.RAG`, which use the
prebuilt index in `search.duckdb`, answer faster. Arrow lambdas: the text parses on DuckDB 1.2.
"""

from __future__ import annotations

__all__ = ["MACRO_NAME", "search_macro_statements"]

MACRO_NAME = "search_chunks"
# Same as bm25.IGNORE and bm25.STEMMER (kept here so the catalog imports nothing of search).
_IGNORE = r"(\.|[^a-z0-9])+"
_STEMMER = "porter"


def _terms(text: str) -> str:
    return (
        f"list_filter(list_transform(string_split_regex(regexp_replace(lower(strip_accents("
        f"{text})), '{_IGNORE}', ' ', 'g'), '\\s+'), w -> stem(w, '{_STEMMER}')), w -> w <> '')"
    )


def search_macro_statements() -> list[str]:
    """The DDL of the `search_chunks(query, k := 10)` table macro (columns chunk_id,
    source_id, path, page_start, page_end, breadcrumb, score, content; best first)."""
    return [
        f"CREATE OR REPLACE MACRO {MACRO_NAME}(q, k := 10) AS TABLE "
        "WITH docs AS MATERIALIZED ("
        "SELECT chunk_id, source_id, path, page_start, page_end, breadcrumb, content, "
        f"{_terms('content')} AS terms FROM current_chunks "
        "WHERE content IS NOT NULL AND error_type IS NULL "
        "AND coalesce(json_extract_string(metadata, '$.hierarchy'), '') <> 'parent' "
        "QUALIFY row_number() OVER (PARTITION BY chunk_id ORDER BY source_id, path) = 1), "
        f"qterms AS (SELECT DISTINCT unnest({_terms('q')}) AS term), "
        "stats AS (SELECT count(*) AS n, avg(len(terms)) AS avglen FROM docs), "
        "tf AS (SELECT d.chunk_id, t.term, len(list_filter(d.terms, x -> x = t.term)) AS tf, "
        "len(d.terms) AS dl FROM docs d, qterms t WHERE list_contains(d.terms, t.term)), "
        "df AS (SELECT term, count(*) AS df FROM tf GROUP BY term), "
        "scored AS (SELECT tf.chunk_id, sum(log((s.n - df.df + 0.5) / (df.df + 0.5) + 1) "
        "* tf.tf * 2.2 / (tf.tf + 1.2 * (0.25 + 0.75 * tf.dl / s.avglen))) AS score "
        "FROM tf JOIN df ON tf.term = df.term CROSS JOIN stats s GROUP BY tf.chunk_id) "
        "SELECT d.chunk_id, d.source_id, d.path, d.page_start, d.page_end, d.breadcrumb, "
        "sc.score, d.content FROM scored sc JOIN docs d ON sc.chunk_id = d.chunk_id "
        "ORDER BY sc.score DESC, d.chunk_id LIMIT k"
    ]
