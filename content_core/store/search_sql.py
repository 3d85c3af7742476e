"""`search_chunks(query, k)`: a DuckDB table macro in the catalog, for SQL clients.

It computes BM25 exactly as the `fts` index does (k1 = 1.2, b = 0.75, log10 IDF, the same
tokenizer and Porter stems: the scores are equal) over `current_chunks` at query time, so it
needs nothing but the catalog and `LOAD fts` (for `stem`) and is always current. It reads every
chunk, so on a large store `content-pipeline search` and `content_core.RAG`, which use the
index in `search.duckdb` (kept current per batch), answer faster. Arrow lambdas: the text
parses on DuckDB 1.2.
"""

from __future__ import annotations

__all__ = [
    "IGNORE",
    "MACRO_NAME",
    "STEMMER",
    "indexed_text_sql",
    "search_macro_statements",
    "terms_sql",
]

MACRO_NAME = "search_chunks"
# The fts tokenizer's settings, shared by the index (`search.terms`) and the macro.
IGNORE = r"(\.|[^a-z0-9])+"
STEMMER = "porter"
# A chunk's document title, which the chunks stage puts in its metadata.
_TITLE = "json_extract_string(metadata, '$.title')"


def terms_sql(text: str) -> str:
    """The SQL list of the index terms of the SQL expression `text`: lower case, accents
    stripped, split on anything but letters and digits, Porter stems (what `fts` indexes)."""
    return (
        f"list_filter(list_transform(string_split_regex(regexp_replace(lower(strip_accents("
        f"{text})), '{IGNORE}', ' ', 'g'), '\\s+'), w -> stem(w, '{STEMMER}')), w -> w <> '')"
    )


def indexed_text_sql(title: str, content: str) -> str:
    """The SQL expression of the text a chunk is indexed by, from the SQL expressions of its
    document's title (null for none) and its content: the title, then the content. Every
    chunk carries its document's title, so a search by title words finds the document."""
    return f"concat_ws(' ', {title}, {content})"


def search_macro_statements() -> list[str]:
    """The DDL of the `search_chunks(query, k := 10)` table macro (columns chunk_id,
    source_id, path, page_start, page_end, breadcrumb, score, content; best first)."""
    return [
        f"CREATE OR REPLACE MACRO {MACRO_NAME}(q, k := 10) AS TABLE "
        # One document per chunk under each path (as the index counts them), one hit per
        # chunk: its best-scoring path.
        "WITH docs AS MATERIALIZED ("
        "SELECT row_number() OVER () AS doc, chunk_id, source_id, path, page_start, page_end, "
        "breadcrumb, content, "
        f"{terms_sql(indexed_text_sql(_TITLE, 'content'))} AS terms FROM current_chunks "
        "WHERE content IS NOT NULL AND error_type IS NULL "
        "AND coalesce(json_extract_string(metadata, '$.hierarchy'), '') <> 'parent' "
        "QUALIFY row_number() OVER (PARTITION BY source_id, path, chunk_id) = 1), "
        f"qterms AS (SELECT DISTINCT unnest({terms_sql('q')}) AS term), "
        "stats AS (SELECT count(*) AS n, avg(len(terms)) AS avglen FROM docs), "
        "tf AS (SELECT d.doc, t.term, len(list_filter(d.terms, x -> x = t.term)) AS tf, "
        "len(d.terms) AS dl FROM docs d, qterms t WHERE list_contains(d.terms, t.term)), "
        "df AS (SELECT term, count(*) AS df FROM tf GROUP BY term), "
        "scored AS (SELECT tf.doc, sum(log((s.n - df.df + 0.5) / (df.df + 0.5) + 1) "
        "* tf.tf * 2.2 / (tf.tf + 1.2 * (0.25 + 0.75 * tf.dl / s.avglen))) AS score "
        "FROM tf JOIN df ON tf.term = df.term CROSS JOIN stats s GROUP BY tf.doc) "
        "SELECT d.chunk_id, d.source_id, d.path, d.page_start, d.page_end, d.breadcrumb, "
        "sc.score, d.content FROM scored sc JOIN docs d ON sc.doc = d.doc "
        "QUALIFY row_number() OVER (PARTITION BY d.chunk_id "
        "ORDER BY sc.score DESC, d.source_id, d.path) = 1 "
        "ORDER BY sc.score DESC, d.chunk_id LIMIT k"
    ]
