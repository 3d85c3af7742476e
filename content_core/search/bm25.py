"""The BM25 index: DuckDB's `fts` over the current chunks, in `<store>/search.duckdb`.

Built lazily, at the first search after the store changed, not as a step of the batch job: a
search then always sees exactly what the catalog shows (a batch is searchable as soon as its
chunks are written, a deleted file drops out with the batch that deletes it) whichever way the
store was written (Dagster job, retry, compaction, `ContentStore` in a script), and no batch
pays for an index nobody queries. The index is keyed by the Parquet files the views read
(chunks and raw_files: name, size, mtime), so an unchanged store never rebuilds; a rebuild
writes a new file beside the old one and renames it into place, so a reader is never blocked.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb

from content_core.errors import SearchError
from content_core.search.types import SearchFilters
from content_core.store.extensions import load_extension

__all__ = [
    "INDEX_COLUMNS",
    "INDEX_FILE",
    "INDEX_TABLE",
    "bm25_ranking",
    "build_index",
    "ensure_index",
    "open_index",
    "store_fingerprint",
]

INDEX_FILE = "search.duckdb"
INDEX_TABLE = "chunk_index"
# The fts tokenizer, shared with the catalog's search_chunks macro: lower case, accents
# stripped, digits kept (identifiers and numbers are what exact-phrase queries often hold),
# Porter stems, no stop-word list (BM25's IDF already weighs common words down).
STEMMER = "porter"
IGNORE = r"(\.|[^a-z0-9])+"
INDEX_COLUMNS = (
    "chunk_id",
    "batch_id",
    "source_id",
    "path",
    "media_type",
    "page_start",
    "page_end",
    "breadcrumb",
    "content",
    "parent_content",
)
_STATE_TABLE = "search_state"
# Part of the key: an index laid out by an older version of this module is rebuilt.
_INDEX_FORMAT = "postings-v1"
# The tables whose files decide what current_chunks shows.
_KEY_TABLES = ("chunks", "raw_files")


def store_fingerprint(root: Path) -> str:
    """A digest of every Parquet file behind current_chunks: changes with any batch written,
    rerun, compacted or deleted."""
    entries: list[str] = [_INDEX_FORMAT]
    for table in _KEY_TABLES:
        folder = root / "tables" / table
        for dirpath, _dirs, files in os.walk(folder):
            for name in files:
                if name.endswith(".parquet"):
                    path = Path(dirpath) / name
                    try:
                        stat = path.stat()
                    except FileNotFoundError:  # removed by a compaction while listed
                        continue
                    entries.append(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(entries)).encode()).hexdigest()


def _select_current(root: Path) -> str:
    """The chunks to index: the searchable rows of current_chunks, one per chunk_id."""
    from content_core.store.catalog import catalog_statements  # pyarrow: only when building

    views = ";\n".join(catalog_statements(root))
    columns = ", ".join(f"c.{c}" for c in INDEX_COLUMNS[:4])
    return (
        f"{views};\nCREATE TEMP TABLE _current AS SELECT {columns}, r.media_type, "
        "c.page_start, c.page_end, c.breadcrumb, c.content, "
        "json_extract_string(c.metadata, '$.parent_content') AS parent_content "
        "FROM current_chunks c LEFT JOIN current_raw_files r "
        "ON c.batch_id = r.batch_id AND c.source_id = r.source_id AND c.path = r.path "
        "WHERE c.content IS NOT NULL AND c.error_type IS NULL "
        # Parent chunks (include_parents) are context, not hits: the seeds never index them.
        "AND coalesce(json_extract_string(c.metadata, '$.hierarchy'), '') <> 'parent' "
        "QUALIFY row_number() OVER (PARTITION BY c.chunk_id ORDER BY c.source_id, c.path) = 1"
    )


def build_index(connection: duckdb.DuckDBPyConnection, table: str = INDEX_TABLE) -> None:
    """Create (or replace) the fts index over `table`'s content, keyed by chunk_id, and the
    table `bm25_ranking` reads: `postings` (termid, docid, tf, doc_len), one row per term of a
    chunk, sorted by term so a query reads only its terms' row groups; `table` gets each
    chunk's `docid`, in docid order."""
    load_extension(connection, "fts")
    ignore = IGNORE.replace("'", "''")
    schema = f"fts_main_{table}"
    connection.execute(
        f"PRAGMA create_fts_index('{table}', 'chunk_id', 'content', stemmer='{STEMMER}', "
        f"stopwords='none', ignore='{ignore}', strip_accents=1, lower=1, overwrite=1)"
    )
    connection.execute(
        f"CREATE OR REPLACE TABLE {schema}.postings AS SELECT t.termid, t.docid, "
        "count(*)::INTEGER AS tf, any_value(d.len)::INTEGER AS doc_len "
        f"FROM {schema}.terms t JOIN {schema}.docs d ON d.docid = t.docid "
        "GROUP BY t.termid, t.docid ORDER BY t.termid, t.docid"
    )
    connection.execute(
        f"CREATE OR REPLACE TABLE {table} AS SELECT d.docid, c.* EXCLUDE (docid) "
        f"FROM (SELECT NULL::BIGINT AS docid, * FROM {table}) c "
        f"JOIN {schema}.docs d ON d.name = c.chunk_id ORDER BY d.docid"
    )


def ensure_index(root: Path) -> Path:
    """Make `<root>/search.duckdb` index the store's current chunks; return its path.

    Raises:
        SearchError: the store's tables could not be read.
        MissingDependencyError: the `fts` extension package is missing.
    """
    root = Path(root).resolve()
    target = root / INDEX_FILE
    key = store_fingerprint(root)
    if _indexed_key(target) == key:
        return target
    tmp = root / f".{INDEX_FILE}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    connection = duckdb.connect(str(tmp))
    try:
        connection.execute(_select_current(root))
        connection.execute(
            f"CREATE TABLE {INDEX_TABLE} AS SELECT * FROM _current ORDER BY chunk_id"
        )
        build_index(connection)
        connection.execute(f"CREATE TABLE {_STATE_TABLE} AS SELECT ? AS store_key", [key])
        connection.execute("CHECKPOINT")
    except duckdb.Error as exc:
        raise SearchError(f"cannot index the chunks of {root}: {exc}") from exc
    finally:
        connection.close()
    os.replace(tmp, target)
    Path(f"{tmp}.wal").unlink(missing_ok=True)
    return target


def _indexed_key(target: Path) -> str | None:
    if not target.is_file():
        return None
    try:
        connection = duckdb.connect(str(target), read_only=True)
    except duckdb.Error:
        return None  # unreadable, locked or half written: rebuilt
    try:
        row = connection.execute(f"SELECT store_key FROM {_STATE_TABLE}").fetchone()
    except duckdb.Error:
        return None
    finally:
        connection.close()
    return None if row is None else str(row[0])


def open_index(root: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the store's up-to-date index, with `fts` loaded."""
    path = ensure_index(root)
    connection = duckdb.connect(str(path), read_only=True)
    load_extension(connection, "fts")
    return connection


def bm25_ranking(
    connection: duckdb.DuckDBPyConnection,
    query: str,
    k: int,
    filters: SearchFilters,
    table: str = INDEX_TABLE,
) -> list[tuple[str, float]]:
    """The `k` best chunks for `query` by BM25 (chunk_id, score), best first, within `filters`.

    The scores are fts's `match_bm25` (k1 = 1.2, b = 0.75, log10 IDF), computed from the
    postings of the query's terms alone (`match_bm25` scores every row of the table: seconds a
    query at a million chunks). The term ids go into the SQL as constants, so each term's
    postings are read by zone map from the term-sorted `postings` table. A term in most chunks
    ("the") has a long posting list and a tiny IDF: the chunks holding a rarer query term are
    scored first, and when the k-th of them beats the most the common terms alone can add up
    to (IDF x (k1 + 1) each), no other chunk can enter the top k (MaxScore); else every posting
    is scored.
    """
    schema = f"fts_main_{table}"
    rows = connection.execute(
        f"SELECT d.termid, d.df, log((st.num_docs - d.df + 0.5) / (d.df + 0.5) + 1), "
        f"st.num_docs FROM {schema}.dict d, {schema}.stats st WHERE d.term IN "
        f"(SELECT DISTINCT stem(unnest({schema}.tokenize(?)), '{STEMMER}'))",
        [query],
    ).fetchall()
    if not rows:
        return []
    terms = [(int(termid), int(df), float(idf)) for termid, df, idf, _ in rows]
    common = {t for t, df, _ in terms if df > _COMMON_SHARE * int(rows[0][3])}
    ranked: list[tuple[int, float]] = []
    if common and len(common) < len(terms) and sum(df for _, df, _ in terms) > _FULL_SCAN:
        ranked = _score(connection, schema, table, terms, common, k, filters)
        bound = sum(idf * (_K1 + 1) for t, _, idf in terms if t in common)
        if len(ranked) < k or ranked[-1][1] <= bound:
            ranked = []  # a chunk of common terms alone might rank: score every posting
    if not ranked:
        ranked = _score(connection, schema, table, terms, set(), k, filters)
    if not ranked:
        return []
    docids = ", ".join(str(docid) for docid, _ in ranked)
    names = dict(
        connection.execute(
            f"SELECT docid, chunk_id FROM {table} WHERE docid IN ({docids})"
        ).fetchall()
    )
    return [(str(names[docid]), score) for docid, score in ranked]


_K1 = 1.2
# A term in more than this share of the chunks counts as common for MaxScore...
_COMMON_SHARE = 0.02
# ...when the query's postings number more than this (below it, scoring them all is quick).
_FULL_SCAN = 50_000


def _score(
    connection: duckdb.DuckDBPyConnection,
    schema: str,
    table: str,
    terms: list[tuple[int, int, float]],
    common: set[int],
    k: int,
    filters: SearchFilters,
) -> list[tuple[int, float]]:
    """The k best (docid, score): with `common` terms, only of the chunks holding another term."""
    rare = " UNION ALL ".join(
        f"SELECT docid FROM {schema}.postings WHERE termid = {t}"
        for t, _, _ in terms
        if t not in common
    )
    parts = []
    for termid, _df, idf in terms:
        only = " AND docid IN (SELECT docid FROM cand)" if termid in common else ""
        parts.append(
            f"SELECT docid, tf, doc_len, {idf!r}::DOUBLE AS idf FROM {schema}.postings "
            f"WHERE termid = {termid}{only}"
        )
    where, params = filters.where("c")
    joined = "" if where == "TRUE" else f"JOIN {table} c ON c.docid = p.docid WHERE {where} "
    rows = connection.execute(
        (f"WITH cand AS ({rare}) " if common else "")
        # DOUBLE literals: DuckDB reads 2.2 as a DECIMAL, which overflows in a product.
        + f"SELECT p.docid, sum(p.idf * p.tf * {_K1 + 1!r}::DOUBLE / "
        f"(p.tf + {_K1!r}::DOUBLE * (0.25::DOUBLE + 0.75::DOUBLE * p.doc_len / st.avgdl))) "
        "AS score "
        f"FROM ({' UNION ALL '.join(parts)}) p CROSS JOIN {schema}.stats st {joined}"
        "GROUP BY p.docid ORDER BY score DESC, p.docid LIMIT ?",
        [*params, k],
    ).fetchall()
    return [(int(docid), float(score)) for docid, score in rows]
