"""`search_chunks(query, k)`: a DuckDB table macro in the catalog, for SQL clients.

It computes BM25 as the index does (k1 = 1.2, b = 0.75, log10 IDF, the same terms: for Latin
text `fts`'s tokens and Porter stems, for Chinese, Japanese, Korean and Thai the character
bigrams of the base install, whatever segmenter the index may use) over `current_chunks` at
query time, so it
needs nothing but the catalog and `LOAD fts` (for `stem`) and is always current. It reads every
chunk, so on a large store `content-pipeline search` and `content_core.RAG`, which use the
index in `search.duckdb` (kept current per batch), answer faster. Arrow lambdas: the text
parses on DuckDB 1.2.
"""

from __future__ import annotations

__all__ = [
    "BIGRAM_SCRIPTS",
    "BIGRAM_TOKENIZER",
    "IGNORE",
    "MACRO_NAME",
    "STEMMER",
    "WORD_SCRIPTS",
    "bigram_terms_sql",
    "indexed_text_sql",
    "latin_terms_sql",
    "search_macro_statements",
    "terms_sql",
]

MACRO_NAME = "search_chunks"
# The fts tokenizer's settings, shared by the index (`search.terms`) and the macro.
IGNORE = r"(\.|[^a-z0-9])+"
STEMMER = "porter"
# Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese)
# and Korean, whose space-separated words carry particles: a run of them is indexed as its
# overlapping character bigrams (a one-character run as itself), what CJK full-text engines
# fall back on without a dictionary; U+30FC, the katakana long vowel mark, is script Common.
BIGRAM_SCRIPTS = (
    r"\p{Han}\p{Hiragana}\p{Katakana}\x{30FC}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
)
# Other scripts with spaces between words: each run of their letters (and marks) is a term,
# lower-cased and not stemmed. Latin letters and digits are `IGNORE`'s words, as before.
WORD_SCRIPTS = (
    r"\p{Cyrillic}\p{Greek}\p{Armenian}\p{Georgian}\p{Hebrew}\p{Arabic}\p{Syriac}"
    r"\p{Thaana}\p{Devanagari}\p{Bengali}\p{Gurmukhi}\p{Gujarati}\p{Oriya}\p{Tamil}"
    r"\p{Telugu}\p{Kannada}\p{Malayalam}\p{Sinhala}\p{Tibetan}\p{Ethiopic}"
)
# The name of this tokenizer, recorded in the index (`search.index`): an index built by
# another one (a segmenter installed since) is built anew.
BIGRAM_TOKENIZER = "latin-porter+words+symbols+cjk-bigram-v1"
# A chunk's document title, which the chunks stage puts in its metadata.
_TITLE = "json_extract_string(metadata, '$.title')"


def latin_terms_sql(text: str) -> str:
    """The SQL list of the Latin terms of the SQL expression `text`: lower case, accents
    stripped, split on anything but a-z and 0-9, Porter stems (what `fts` indexes)."""
    return (
        f"list_filter(list_transform(string_split_regex(regexp_replace(lower(strip_accents("
        f"{text})), '{IGNORE}', ' ', 'g'), '\\s+'), w -> stem(w, '{STEMMER}')), w -> w <> '')"
    )


def bigram_terms_sql(text: str) -> str:
    """The SQL list of the character bigrams of each run of `BIGRAM_SCRIPTS` in the SQL
    expression `text` (lower case, accents kept: they tell Japanese kana apart)."""
    return (
        f"flatten(list_transform(regexp_extract_all(lower({text}), '[{BIGRAM_SCRIPTS}]+'), "
        "r -> CASE WHEN length(r) = 1 THEN [r] "
        "ELSE list_transform(range(1, length(r)), i -> substring(r, i, 2)) END))"
    )


def terms_sql(text: str, segmented: str | None = None) -> str:
    """The SQL list of the index terms of the SQL expression `text`: its Latin terms (as
    `fts` indexes them: for Latin text, exactly its terms), then its words in `WORD_SCRIPTS`
    and its symbols (emoji, each one a term), then its CJK and Thai terms: the character
    bigrams of `bigram_terms_sql`, or, when `segmented` names a SQL function (a segmenter
    registered on the connection, see `content_core.search.segment`), that function's list
    of words of `lower(text)`."""
    cjk = bigram_terms_sql(text)
    if segmented is not None:  # a call into Python only for the texts that need one
        cjk = (
            f"CASE WHEN regexp_matches({text}, '[{BIGRAM_SCRIPTS}]') "
            f"THEN {segmented}(lower({text})) ELSE []::VARCHAR[] END"
        )
    # Two-argument list_concat: DuckDB 1.2 (a catalog client, for the macro) has no other.
    return (
        f"list_concat(list_concat({latin_terms_sql(text)}, "
        f"regexp_extract_all(lower({text}), '[{WORD_SCRIPTS}]+|\\p{{So}}')), {cjk})"
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
