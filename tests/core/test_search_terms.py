"""The BM25 term tables built in bounded pieces (`search.terms.apply_rows` with small slices
and a memory limit) hold exactly what a one-shot build holds, on a store of corpus files."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from content_core.chunking import ChunkingConfig
from content_core.discovery import discover_pending
from content_core.pipeline import build_chunks, build_normalised_artifacts, build_raw_files
from content_core.pipeline.config import ProcessingConfig
from content_core.search import SearchFilters
from content_core.search.bm25 import bm25_ranking
from content_core.search.terms import (
    DOCS_TABLE,
    PATHS_TABLE,
    POSTINGS_TABLE,
    STATS_TABLE,
    TERMS_TABLE,
    apply_rows,
    bound_memory,
    create_tables,
)
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS

pytestmark = pytest.mark.timeout(600)

_TABLES = (DOCS_TABLE, TERMS_TABLE, POSTINGS_TABLE, STATS_TABLE, PATHS_TABLE)
# Corpus folders of text formats: many chunks, several languages, one file removed later.
_FOLDERS = ("txt", "md", "html", "csv", "eml")


def _batch(store: ContentStore, folder: Path) -> str:
    """Discover `folder` and write its batch's tables up to chunks."""
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder))
    [batch_id] = discover_pending(source, store, set(), time_budget_s=60, settle_s=0.0).discovered
    build_raw_files(store, batch_id)
    build_normalised_artifacts(store, batch_id, ProcessingConfig())
    build_chunks(store, batch_id, ChunkingConfig())
    return batch_id


def _apply(connection: duckdb.DuckDBPyConnection, batch_id: str, slice_docs: int) -> None:
    for view, table in (("_r", "raw_files"), ("_c", "chunks")):
        connection.execute(
            f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM main.{table} WHERE batch_id = ?",
            [batch_id],
        )
    apply_rows(connection, "_r", "_c", slice_docs=slice_docs)


def _contents(connection: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[object, ...]]]:
    return {t: connection.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in _TABLES}


def test_a_build_in_small_slices_equals_a_one_shot_build(tmp_path: Path) -> None:
    """Batch 1 (five corpus folders) builds the tables, batch 2 rewrites one file and deletes
    another; after each, the tables built 5 documents at a time under a 64 MB DuckDB limit
    (spilling to disk) equal, row for row, the tables built in one slice, and so do scores."""
    inbox = tmp_path / "inbox"
    for name in _FOLDERS:
        shutil.copytree(CORPUS / name, inbox / name)
    store = ContentStore(tmp_path / "store")
    first = _batch(store, inbox)
    rewritten = inbox / "txt" / "UDHR_first_article_all.txt"
    rewritten.write_text("Kangaroo paragraph. " + rewritten.read_text()[:2000], encoding="utf-8")
    next(iter(sorted((inbox / "md").iterdir()))).unlink()
    second = _batch(store, inbox)

    catalog = store.connect()
    whole = catalog.cursor()
    pieces = catalog.cursor()
    # Cursors of one connection share the database: two of them build into two schemas.
    for cursor, schema in ((whole, "whole"), (pieces, "pieces")):
        cursor.execute(f"CREATE SCHEMA {schema}")
        cursor.execute(f"USE {schema}")
        create_tables(cursor)
    bound_memory(pieces, tmp_path / "spill", memory_limit_mb=64)
    for batch_id in (first, second):
        _apply(whole, batch_id, slice_docs=1_000_000)
        _apply(pieces, batch_id, slice_docs=5)
        built = _contents(whole)
        assert _contents(pieces) == built
        assert len(built[DOCS_TABLE]) > 50 and len(built[POSTINGS_TABLE]) > 1000
    assert whole.execute(
        f"SELECT count(*) FROM {DOCS_TABLE} WHERE content LIKE 'Kangaroo paragraph%'"
    ).fetchone() == (1,)

    queries = ["kangaroo", "human rights dignity", "Stanley Cup", "email attachment", "der die"]
    for query in queries:
        expected = bm25_ranking(whole, query, 20, SearchFilters())
        assert bm25_ranking(pieces, query, 20, SearchFilters()) == expected
    assert bm25_ranking(whole, "kangaroo", 5, SearchFilters())


def test_apply_rows_refuses_an_empty_slice() -> None:
    connection = duckdb.connect()
    create_tables(connection)
    with pytest.raises(ValueError, match="slice_docs"):
        apply_rows(connection, "none", "none", slice_docs=0)
