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
# The tables whose files decide what current_chunks shows.
_KEY_TABLES = ("chunks", "raw_files")


def store_fingerprint(root: Path) -> str:
    """A digest of every Parquet file behind current_chunks: changes with any batch written,
    rerun, compacted or deleted."""
    entries: list[str] = []
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
    """Create (or replace) the fts index over `table`'s content, keyed by chunk_id."""
    load_extension(connection, "fts")
    ignore = IGNORE.replace("'", "''")
    connection.execute(
        f"PRAGMA create_fts_index('{table}', 'chunk_id', 'content', stemmer='{STEMMER}', "
        f"stopwords='none', ignore='{ignore}', strip_accents=1, lower=1, overwrite=1)"
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
    """The `k` best chunks for `query` by BM25 (chunk_id, score), best first, within `filters`."""
    where, params = filters.where()
    rows = connection.execute(
        f"SELECT chunk_id, score FROM (SELECT chunk_id, "
        f"fts_main_{table}.match_bm25(chunk_id, ?) AS score FROM {table} WHERE {where}) "
        "WHERE score IS NOT NULL ORDER BY score DESC, chunk_id LIMIT ?",
        [query, *params, k],
    ).fetchall()
    return [(str(chunk_id), float(score)) for chunk_id, score in rows]
