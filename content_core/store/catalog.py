"""The DuckDB catalog: views over the Parquet tables, written only when their text changes.

On an object store the views name `s3://` URLs and DuckDB reads them through httpfs (loaded
from its package); the credentials come from a temporary secret made from the environment
when a connection opens (`ObjectStorage.prepare`), never from the view SQL or the file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb

from content_core.errors import MissingDependencyError
from content_core.store.extensions import load_extension
from content_core.store.layout import CATALOG_FILE
from content_core.store.search_sql import search_macro_statements
from content_core.store.storage import LocalStorage, Storage, open_storage
from content_core.store.tables import BATCHES, RAW_FILES, pipeline_tables, row_model

__all__ = [
    "CATALOG_FILE",
    "CATALOG_STORAGE_VERSION",
    "COMPACTED_DIR",
    "catalog_statements",
    "connect_views",
    "ensure_catalog",
    "table_select",
]

# The storage format of the catalog file: every DuckDB from 1.2 on reads it, and the views'
# SQL is tested with 1.2. Fixed here, not left to the writer: DuckDB 2 writes its own newest
# format, which older clients (the DuckDB CLI, DBeaver, R, an older Python module) refuse with
# "Trying to read a database file with version number 69".
CATALOG_STORAGE_VERSION = "v1.2.0"
COMPACTED_DIR = "compacted"
_VERSION_FILE = "catalog.version"



def _quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _storage(root: Path | str | Storage) -> Storage:
    return open_storage(root) if isinstance(root, (Path, str)) else root


def catalog_statements(root: Path | str | Storage) -> list[str]:
    """Return the DDL of every view, naming the store by absolute path (or `s3://` URL).

    DuckDB resolves relative paths against the reader's working directory, so the views must
    carry the absolute root; a moved store needs its catalog rebuilt (`ensure_catalog` does it).
    """
    storage = _storage(root)
    statements = [
        f"CREATE OR REPLACE VIEW {BATCHES} AS SELECT * FROM read_parquet("
        f"{_quote(storage.url('batches/*.parquet'))}, union_by_name = true)"
    ]
    tables = pipeline_tables()
    for table in tables:
        statements.append(f"CREATE OR REPLACE VIEW {table} AS {table_select(storage, table)}")
    statements.append(
        f"CREATE OR REPLACE VIEW current_{RAW_FILES} AS SELECT * FROM ("
        f"SELECT * FROM {RAW_FILES} QUALIFY row_number() OVER ("
        "PARTITION BY source_id, path ORDER BY batch_seq DESC) = 1"
        ") WHERE change <> 'deleted'"
    )
    # Every other table's current_* view keeps only rows of each file's latest, undeleted
    # version.
    for table in (table for table in tables if table != RAW_FILES):
        statements.append(
            f"CREATE OR REPLACE VIEW current_{table} AS SELECT t.* FROM {table} t "
            f"SEMI JOIN current_{RAW_FILES} r "
            "ON t.batch_id = r.batch_id AND t.source_id = r.source_id AND t.path = r.path"
            + _other_file_current(table)
        )
    return statements


def _other_file_current(table: str) -> str:
    """For a table of rows about two files (`TableRow.OTHER_FILE`), the condition that the
    other file's version is current too (or that the row names none)."""
    other = row_model(table).OTHER_FILE
    if other is None:
        return ""
    batch, source, path = other
    return (
        f" WHERE t.{path} IS NULL OR EXISTS (SELECT 1 FROM current_{RAW_FILES} o "
        f"WHERE o.batch_id = t.{batch} AND o.source_id = t.{source} AND o.path = t.{path})"
    )


def table_select(root: Path | str | Storage, table: str) -> str:
    """The SELECT behind a table's view: per-batch files, plus compacted files for batches that
    have no per-batch file, each batch from the newest compacted file that holds it.

    So a batch is always read from exactly one file: a rerun after compaction (a new per-batch
    file) wins over the compacted copy, and a compaction that crashed between writing its new
    file and deleting the old ones duplicates nothing.
    """
    storage = _storage(root)
    folder = f"tables/{table}"
    # The batch=<id> folders are not Hive partitions to DuckDB: batch_id is a column already,
    # and a second `batch` column would be a view column that no table model has.
    fresh = (
        f"read_parquet({_quote(storage.url(f'{folder}/batch=*/data.parquet'))}, "
        "union_by_name = true, hive_partitioning = false)"
    )
    packed = (
        f"read_parquet({_quote(storage.url(f'{folder}/{COMPACTED_DIR}/*.parquet'))}, "
        "union_by_name = true, hive_partitioning = false, filename = '_file')"
    )
    return (
        f"WITH fresh AS (SELECT * FROM {fresh}), packed AS (SELECT * FROM {packed}), "
        "newest AS (SELECT batch_id, max(_file) AS _file FROM packed GROUP BY batch_id) "
        "SELECT * FROM fresh UNION ALL BY NAME "
        "SELECT p.* EXCLUDE (_file) FROM packed p "
        "SEMI JOIN newest n ON p.batch_id = n.batch_id AND p._file = n._file "
        "WHERE p.batch_id NOT IN (SELECT DISTINCT batch_id FROM fresh)"
    )


def _create_macros(connection: duckdb.DuckDBPyConnection) -> None:
    """Add the `search_chunks` macro, which binds `fts`'s `stem`: without the `fts` package
    the catalog has its views and no macro."""
    try:
        load_extension(connection, "fts")
    except MissingDependencyError:
        return
    for statement in search_macro_statements():
        connection.execute(statement)


def connect_views(root: Path | str | Storage) -> duckdb.DuckDBPyConnection:
    """Open an in-memory DuckDB connection holding every view (and the `search_chunks`
    macro); never locks the catalog file."""
    storage = _storage(root)
    connection = duckdb.connect(":memory:")
    storage.prepare(connection)
    for statement in catalog_statements(storage):
        connection.execute(statement)
    _create_macros(connection)
    return connection


def ensure_catalog(root: Path | str | Storage, work_dir: Path | None = None) -> Path:
    """Make `<root>/content.duckdb` hold the current views, rewriting it only when they changed.

    The new catalog is built aside and renamed into place, so a user holding the old file open
    in the DuckDB CLI is never blocked and keeps a working (old) catalog. It is written in the
    storage format of `CATALOG_STORAGE_VERSION`, so every DuckDB from 1.2 on opens it. For an
    object store the file goes to `work_dir` (this machine's), its views naming `s3://` URLs;
    a client opening it loads httpfs and makes an S3 secret first
    (docs/operations/object-storage.md).
    """
    storage = _storage(root)
    if work_dir is None:
        if not isinstance(storage, LocalStorage):
            raise ValueError("an object-store catalog needs a local work_dir")
        work_dir = storage.root
    root = Path(work_dir).resolve()
    statements = catalog_statements(storage)
    # The storage version is part of the key, so a catalog written in another format is rebuilt.
    version = hashlib.sha256(
        "\n".join([CATALOG_STORAGE_VERSION, *statements, *search_macro_statements()]).encode()
    ).hexdigest()
    target = root / CATALOG_FILE
    version_file = root / _VERSION_FILE
    if target.is_file() and version_file.is_file() and version_file.read_text() == version:
        return target
    tmp = root / f".{CATALOG_FILE}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    connection = duckdb.connect(
        str(tmp), config={"storage_compatibility_version": CATALOG_STORAGE_VERSION}
    )
    try:
        storage.prepare(connection)  # a view is bound (its files read) when it is created
        for statement in statements:
            connection.execute(statement)
        _create_macros(connection)
    finally:
        connection.close()
    os.replace(tmp, target)
    version_tmp = root / f".{_VERSION_FILE}.{os.getpid()}.tmp"
    version_tmp.write_text(version)
    os.replace(version_tmp, version_file)
    return target
