"""The BM25 term tables and their incremental upkeep: documents, a term dictionary with
document frequencies, postings and the collection statistics, as plain DuckDB tables.

DuckDB's `fts` builds its index in one `create_fts_index` call over a whole table and has no
way to add or drop a document (a rebuild at a million chunks took 84 to 169 s here). These
tables hold what its `match_bm25` reads (term frequency, document length, document frequency,
document count, average length) with the same tokenizer (`store.search_sql.terms_sql`, with
the segmenters of `search.segment` when the connection has them), so the scores are equal
(tests/core/test_search.py), and a batch of chunks is added, and the rows of
the files it replaces or deletes removed, by touching only their own postings and the `df` of
their own terms.

`apply_rows` does both from two relations of the connection: the `raw_files` rows of the
batches applied (which paths they touch, at what `batch_seq`) and their `chunks` rows. Per
`(source_id, path)` the version with the highest `batch_seq` wins, whatever order batches are
applied in, as in the catalog's `current_*` views.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from content_core.search.segment import segment_function
from content_core.store.extensions import load_extension
from content_core.store.search_sql import indexed_text_sql, terms_sql

__all__ = [
    "DOCS_TABLE",
    "INDEX_COLUMNS",
    "PATHS_TABLE",
    "POSTINGS_TABLE",
    "STATS_TABLE",
    "TERMS_TABLE",
    "ApplyCounts",
    "SLICE_DOCS",
    "apply_rows",
    "bound_memory",
    "create_tables",
    "index_counts",
]

# One row per indexed chunk row (a chunk under each path that holds it): `docid` and the
# columns a hit shows and the filters read.
DOCS_TABLE = "chunk_index"
TERMS_TABLE = "index_terms"  # termid, term, df
POSTINGS_TABLE = "index_postings"  # termid, docid, tf, doc_len: one row per term of a document
# One row: num_docs, total_len (their terms), next_docid, next_termid, postings, tail_rows.
STATS_TABLE = "index_stats"
PATHS_TABLE = "index_paths"  # source_id, path, batch_seq, batch_id: the version indexed
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
    "title",
)
# Postings appended since the table was last sorted by term: a query reads the sorted part by
# zone map and scans the appended tail, so the tail is folded in (one sort of the postings,
# no tokenizing) when it passes this many rows and this share of all postings.
_RESORT_MIN_ROWS = 2_000_000
# Documents tokenized at a time by `apply_rows`: their terms lists are the one intermediate
# held whole (about 0.3 GB per 100,000 chunks of 40 to 120 words, measured by
# bench/bench_search.py latency), everything else is a table DuckDB spills to disk.
SLICE_DOCS = 100_000
# The DuckDB memory limit of a build (`bound_memory`): its buffers stay under it and spill to
# the temporary directory past it; a process's peak adds Python and allocations DuckDB makes
# outside its buffer manager (docs/reference/search.md).
BUILD_MEMORY_MB = 1024
_RESORT_SHARE = 0.2
# A chunk's document title (the chunks stage puts it in the chunk's metadata) is indexed
# with the chunk's content; DOCS_TABLE keeps it, so a removal tokenizes what was added.
_CHUNK_TITLE = "json_extract_string(c.metadata, '$.title')"
_INDEXED = indexed_text_sql("title", "content")


@dataclass(frozen=True, slots=True)
class ApplyCounts:
    """What one `apply_rows` changed."""

    docs_added: int
    docs_removed: int
    postings_added: int
    postings_removed: int
    resorted: bool


def create_tables(connection: duckdb.DuckDBPyConnection) -> None:
    """Create the empty term tables (an index of nothing)."""
    connection.execute(
        f"CREATE TABLE {DOCS_TABLE} (docid BIGINT, chunk_id VARCHAR, batch_id VARCHAR, "
        "source_id VARCHAR, path VARCHAR, media_type VARCHAR, page_start INTEGER, "
        "page_end INTEGER, breadcrumb VARCHAR, content VARCHAR, parent_content VARCHAR, "
        "title VARCHAR, doc_len INTEGER)"
    )
    _index_chunk_ids(connection)
    connection.execute(f"CREATE TABLE {TERMS_TABLE} (termid INTEGER, term VARCHAR, df BIGINT)")
    connection.execute(
        f"CREATE TABLE {POSTINGS_TABLE} (termid INTEGER, docid BIGINT, tf INTEGER, doc_len INTEGER)"
    )
    connection.execute(
        f"CREATE TABLE {STATS_TABLE} AS SELECT 0::BIGINT AS num_docs, 0::BIGINT AS total_len, "
        "0::BIGINT AS next_docid, 0::INTEGER AS next_termid, 0::BIGINT AS postings, "
        "0::BIGINT AS tail_rows"
    )
    connection.execute(
        f"CREATE TABLE {PATHS_TABLE} (source_id VARCHAR, path VARCHAR, batch_seq BIGINT, "
        "batch_id VARCHAR)"
    )


def _index_chunk_ids(connection: duckdb.DuckDBPyConnection) -> None:
    """An ART index on DOCS_TABLE's chunk ids: a search reads the rows of the chunks it ranked
    by chunk id (the hits, then collapsed per document), which without it scans every row's
    columns (about 130 ms a search at a million chunks, 5 ms with it; bench/bench_search.py).
    Created on files written before it at their next batch."""
    connection.execute(
        f"CREATE INDEX IF NOT EXISTS {DOCS_TABLE}_chunk_id ON {DOCS_TABLE} (chunk_id)"
    )


def bound_memory(
    connection: duckdb.DuckDBPyConnection,
    temp_directory: Path | str | None = None,
    *,
    memory_limit_mb: int = BUILD_MEMORY_MB,
) -> None:
    """Set `connection`'s DuckDB to build the index in bounded memory: a memory limit of
    `memory_limit_mb` (the default is 80 % of the machine, which a 5M-chunk build would use),
    spilling to `temp_directory` (a file database's default is `<file>.tmp`), and no
    insertion order kept for results without ORDER BY (every order the tables rely on is
    an ORDER BY)."""
    connection.execute(f"SET memory_limit = '{int(memory_limit_mb)}MB'")
    connection.execute("SET preserve_insertion_order = false")
    if temp_directory is not None:
        connection.execute("SET temp_directory = ?", [str(temp_directory)])


def _count(connection: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = connection.execute(sql).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _remove(connection: duckdb.DuckDBPyConnection, slice_docs: int) -> tuple[int, int]:
    """Drop the documents of the winning paths (`_won`); (documents, postings) removed."""
    connection.execute(
        "CREATE OR REPLACE TEMP TABLE _gone AS SELECT row_number() OVER () - 1 AS n, docid, "
        f"doc_len FROM {DOCS_TABLE} SEMI JOIN _won USING (source_id, path)"
    )
    docs = _count(connection, "SELECT count(*) FROM _gone")
    if not docs:
        return 0, 0
    # The removed postings, from the documents' own text (tokenized as when they were added):
    # their terms' df goes down without reading the postings, which are sorted by term, so
    # every row group holds some of them; the one scan left is the delete. Tokenized a slice
    # of documents at a time, so a batch replacing most of the index stays in bounded memory.
    connection.execute("CREATE OR REPLACE TEMP TABLE _gone_terms (termid INTEGER, n BIGINT)")
    indexed_terms = terms_sql(_INDEXED, segment_function(connection))
    for low in range(0, docs, slice_docs):
        connection.execute(
            "INSERT INTO _gone_terms SELECT t.termid, count(*) AS n FROM "
            "(SELECT DISTINCT docid, term FROM (SELECT docid, "
            f"unnest({indexed_terms}) AS term FROM {DOCS_TABLE} WHERE docid IN "
            "(SELECT docid FROM _gone WHERE n >= ? AND n < ?))) "
            f"JOIN {TERMS_TABLE} t USING (term) GROUP BY t.termid",
            [low, low + slice_docs],
        )
    postings = _count(connection, "SELECT sum(n) FROM _gone_terms")
    connection.execute(
        f"UPDATE {TERMS_TABLE} t SET df = t.df - g.n FROM (SELECT termid, sum(n) AS n "
        "FROM _gone_terms GROUP BY termid) g WHERE t.termid = g.termid"
    )
    connection.execute(f"DELETE FROM {POSTINGS_TABLE} WHERE docid IN (SELECT docid FROM _gone)")
    connection.execute(f"DELETE FROM {DOCS_TABLE} WHERE docid IN (SELECT docid FROM _gone)")
    connection.execute(
        f"UPDATE {STATS_TABLE} SET num_docs = num_docs - (SELECT count(*) FROM _gone), "
        "total_len = total_len - (SELECT coalesce(sum(doc_len), 0) FROM _gone), "
        f"postings = postings - {postings}"
    )
    return docs, postings


def _add(connection: duckdb.DuckDBPyConnection, chunks: str, slice_docs: int) -> tuple[int, int]:
    """Add the chunks of the winning paths; (documents, postings) added.

    Staged so that memory does not grow with the batch: the documents are numbered by one
    sort (spilled to disk past the connection's memory limit) without their terms; each slice
    of `slice_docs` documents is then tokenized, written to DOCS_TABLE and its postings (by
    term string) appended to a staging table; the new terms are numbered in term order once,
    and the staged postings merged into POSTINGS_TABLE by one external sort. Every id is the
    one a single pass gives: docids by (source_id, path, chunk_id), termids by term.
    """
    # Parent chunks (include_parents) are context, not hits: the seeds never index them.
    connection.execute(
        "CREATE OR REPLACE TEMP TABLE _fresh AS SELECT "
        f"(SELECT next_docid FROM {STATS_TABLE}) + row_number() OVER "
        "(ORDER BY c.source_id, c.path, c.chunk_id) - 1 AS docid, "
        "c.chunk_id, c.batch_id, c.source_id, c.path, w.media_type, c.page_start, c.page_end, "
        "c.breadcrumb, c.content, "
        "json_extract_string(c.metadata, '$.parent_content') AS parent_content, "
        f"{_CHUNK_TITLE} AS title "
        f"FROM {chunks} c JOIN _won w ON c.batch_id = w.batch_id "
        "AND c.source_id = w.source_id AND c.path = w.path "
        "WHERE w.change <> 'deleted' AND c.content IS NOT NULL AND c.error_type IS NULL "
        "AND coalesce(json_extract_string(c.metadata, '$.hierarchy'), '') <> 'parent' "
        "QUALIFY row_number() OVER (PARTITION BY c.source_id, c.path, c.chunk_id) = 1"
    )
    docs = _count(connection, "SELECT count(*) FROM _fresh")
    if not docs:
        return 0, 0
    first = _count(connection, f"SELECT next_docid FROM {STATS_TABLE}")
    connection.execute(
        "CREATE OR REPLACE TEMP TABLE _staged (term VARCHAR, docid BIGINT, tf INTEGER, "
        "doc_len INTEGER)"
    )
    total_len = 0
    indexed_terms = terms_sql(_INDEXED, segment_function(connection))
    for low in range(first, first + docs, slice_docs):
        connection.execute(
            f"CREATE OR REPLACE TEMP TABLE _slice AS SELECT docid, {indexed_terms} "
            "AS terms FROM _fresh WHERE docid >= ? AND docid < ?",
            [low, low + slice_docs],
        )
        connection.execute(
            "INSERT INTO _staged SELECT term, docid, count(*)::INTEGER, any_value(doc_len) "
            "FROM (SELECT docid, len(terms) AS doc_len, unnest(terms) AS term FROM _slice) "
            "GROUP BY term, docid"
        )
        connection.execute(
            f"INSERT INTO {DOCS_TABLE} SELECT docid, chunk_id, batch_id, source_id, path, "
            "media_type, page_start, page_end, breadcrumb, content, parent_content, title, "
            "len(s.terms)::INTEGER FROM _fresh JOIN _slice s USING (docid) "
            "WHERE docid >= ? AND docid < ? ORDER BY docid",
            [low, low + slice_docs],
        )
        total_len += _count(connection, "SELECT sum(len(terms)) FROM _slice")
    connection.execute("DROP TABLE _slice")
    connection.execute(
        f"INSERT INTO {TERMS_TABLE} SELECT (SELECT next_termid FROM {STATS_TABLE}) "
        "+ row_number() OVER (ORDER BY term) - 1, term, 0 FROM "
        "(SELECT DISTINCT term FROM _staged) "
        f"ANTI JOIN {TERMS_TABLE} USING (term)"
    )
    postings = _count(connection, "SELECT count(*) FROM _staged")
    # Into an empty table (a full build) the sorted rows are the sorted table: no tail.
    tail = postings if _count(connection, f"SELECT postings FROM {STATS_TABLE}") else 0
    connection.execute(
        f"INSERT INTO {POSTINGS_TABLE} SELECT t.termid, s.docid, s.tf, s.doc_len "
        f"FROM _staged s JOIN {TERMS_TABLE} t USING (term) ORDER BY t.termid, s.docid"
    )
    connection.execute(
        f"UPDATE {TERMS_TABLE} t SET df = t.df + g.n FROM (SELECT term, count(*) AS n "
        "FROM _staged GROUP BY term) g WHERE t.term = g.term"
    )
    connection.execute("DROP TABLE _staged")
    connection.execute(
        f"UPDATE {STATS_TABLE} SET num_docs = num_docs + {docs}, "
        f"total_len = total_len + {total_len}, next_docid = {first + docs}, "
        f"next_termid = (SELECT coalesce(max(termid) + 1, 0) FROM {TERMS_TABLE}), "
        f"postings = postings + {postings}, tail_rows = tail_rows + {tail}"
    )
    connection.execute("DROP TABLE _fresh")
    return docs, postings


def _resort_if_due(connection: duckdb.DuckDBPyConnection, *, force: bool) -> bool:
    tail, total = connection.execute(
        f"SELECT tail_rows, postings FROM {STATS_TABLE}"
    ).fetchone() or (0, 0)
    if not force and (tail < _RESORT_MIN_ROWS or tail < _RESORT_SHARE * total):
        return False
    connection.execute(
        f"CREATE OR REPLACE TABLE {POSTINGS_TABLE} AS SELECT * FROM {POSTINGS_TABLE} "
        "ORDER BY termid, docid"
    )
    connection.execute(f"UPDATE {STATS_TABLE} SET tail_rows = 0")
    return True


def apply_rows(
    connection: duckdb.DuckDBPyConnection,
    raw_files: str,
    chunks: str,
    *,
    resort: bool = False,
    slice_docs: int = SLICE_DOCS,
) -> ApplyCounts:
    """Bring the term tables up to the batches whose rows `raw_files` and `chunks` (names of
    relations in `connection`) hold: for every `(source_id, path)` they touch at a `batch_seq`
    at least the indexed one, drop the indexed documents and add the batch's chunks (none for
    a deletion). Other documents and their postings are not touched.

    The postings appended are sorted by term when the unsorted tail has grown past its limit
    (`resort`: now). Documents are tokenized `slice_docs` at a time and every larger
    intermediate is a DuckDB table, so memory stays within the connection's limit (see
    `bound_memory`) however many chunks a batch or a full build holds.
    """
    if slice_docs < 1:
        raise ValueError(f"slice_docs must be positive, not {slice_docs}")
    load_extension(connection, "fts")  # `stem`
    connection.execute("BEGIN TRANSACTION")
    try:
        _index_chunk_ids(connection)
        connection.execute(
            "CREATE OR REPLACE TEMP TABLE _won AS SELECT i.* FROM (SELECT source_id, path, "
            "batch_id, batch_seq, change, media_type FROM "
            f"{raw_files} QUALIFY row_number() OVER (PARTITION BY source_id, path "
            "ORDER BY batch_seq DESC) = 1) i "
            f"LEFT JOIN {PATHS_TABLE} p USING (source_id, path) "
            "WHERE p.batch_seq IS NULL OR i.batch_seq >= p.batch_seq"
        )
        removed, postings_removed = _remove(connection, slice_docs)
        added, postings_added = _add(connection, chunks, slice_docs)
        connection.execute(
            f"DELETE FROM {PATHS_TABLE} p USING _won w "
            "WHERE p.source_id = w.source_id AND p.path = w.path"
        )
        connection.execute(
            f"INSERT INTO {PATHS_TABLE} SELECT source_id, path, batch_seq, batch_id FROM _won"
        )
        resorted = _resort_if_due(connection, force=resort)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return ApplyCounts(
        docs_added=added,
        docs_removed=removed,
        postings_added=postings_added,
        postings_removed=postings_removed,
        resorted=resorted,
    )


def index_counts(connection: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(documents, postings) the tables hold."""
    row = connection.execute(f"SELECT num_docs, postings FROM {STATS_TABLE}").fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)
