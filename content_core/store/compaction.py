"""Compaction: fold many small per-batch Parquet files into one file per table, changing no
query result at any moment (see `catalog.table_select` for why no row is ever doubled).

The same steps hold on an object store, where one PUT is the only atomic step: the folded
file is PUT under a new name (`compacted/part-<ns>.parquet`, newer names win), so until it is
complete the old files answer every query; once it is, each batch that still has its
per-batch file is read from that file (per-batch files win), so deleting them afterwards
changes nothing; a per-batch file whose ETag changed since it was read (a rerun) is kept and
keeps winning. No manifest object is needed: the names and the view's rule are the commit.
"""

from __future__ import annotations

import logging
import os
import time

import duckdb
from pydantic import BaseModel, ConfigDict

from content_core.paths import os_path_text
from content_core.store.catalog import COMPACTED_DIR, table_select
from content_core.store.locks import state_lock
from content_core.store.storage import StoredObject
from content_core.store.store import ContentStore
from content_core.store.tables import pipeline_tables

logger = logging.getLogger(__name__)

__all__ = ["CompactionReport", "compact_store", "sweep_stale_temp_files"]

_EMPTY = "_empty"
# Older than this, a temporary file belongs to a writer that died (a write takes seconds).
STALE_TEMP_S = 3600.0


class CompactionReport(BaseModel):
    """What one compaction did to one table."""

    model_config = ConfigDict(frozen=True)

    table: str
    files_before: int
    files_after: int
    rows: int


def _data_files(store: ContentStore, table: str) -> tuple[list[StoredObject], list[str]]:
    """The table's per-batch files (with their versions) and its compacted files' keys."""
    fresh, packed = [], []
    for item in store.storage.list(f"tables/{table}/"):
        parts = item.key.split("/")
        if len(parts) == 4 and parts[3] == "data.parquet" and parts[2].startswith("batch="):
            if parts[2] != f"batch={_EMPTY}":
                fresh.append(item)
        elif len(parts) == 4 and parts[2] == COMPACTED_DIR and parts[3].endswith(".parquet"):
            if parts[3] != f"{_EMPTY}.parquet":
                packed.append(item.key)
    return fresh, sorted(packed)


def _compact_table(store: ContentStore, table: str, min_files: int) -> CompactionReport:
    fresh, packed = _data_files(store, table)
    before = len(fresh) + len(packed)
    if before < min_files:
        return CompactionReport(table=table, files_before=before, files_after=before, rows=-1)
    target = f"tables/{table}/{COMPACTED_DIR}/part-{time.time_ns():020d}.parquet"
    work = store.root / "state" / "compaction"
    work.mkdir(parents=True, exist_ok=True)
    tmp = work / f".{table}.{os.getpid()}.parquet.tmp"
    connection = duckdb.connect(":memory:")
    try:
        store.storage.prepare(connection)
        rows = connection.execute(
            f"SELECT count(*) FROM ({table_select(store.storage, table)})"
        ).fetchone()
        connection.execute(
            f"COPY (SELECT * FROM ({table_select(store.storage, table)}) "
            f"ORDER BY source_id, path, batch_id) TO '{tmp}' "
            "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)"
        )
    finally:
        connection.close()
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    # A rename (same file system) or one PUT: from here the new file is the newest copy of
    # every batch, and whatever per-batch file exists still wins over it.
    store.storage.upload(target, tmp)
    # Delete only what was read: a per-batch file rewritten meanwhile (a rerun) must survive.
    read = {item.key: item.version for item in fresh}
    for item in store.storage.list(f"tables/{table}/"):
        if read.get(item.key) == item.version:
            store.storage.delete(item.key)
    for key in packed:
        store.storage.delete(key)
    fresh_after, packed_after = _data_files(store, table)
    return CompactionReport(
        table=table,
        files_before=before,
        files_after=len(fresh_after) + len(packed_after),
        rows=int(rows[0]) if rows else 0,
    )


def sweep_stale_temp_files(store: ContentStore, *, older_than_s: float = STALE_TEMP_S) -> int:
    """Delete temporary files that killed writers left behind; return how many went.

    Atomic writes go through dot-named `*.tmp` files (tables, manifests, state, catalog) and
    `.tmp-*` files (blobs) that no view or reader ever opens, so a crash leaves only litter.
    Only files older than `older_than_s` are removed, so a live writer keeps its own.
    """
    cutoff = time.time() - older_than_s
    removed = 0
    for folder in ("tables", "batches", "state", "blobs"):
        base = store.root / folder
        if not base.is_dir():
            continue
        for pattern in (".*.tmp", ".tmp-*"):
            for path in base.rglob(pattern):
                try:
                    if path.is_file() and path.stat().st_mtime < cutoff:
                        path.unlink()
                        removed += 1
                except FileNotFoundError:
                    continue
    for path in store.root.glob(".*.tmp"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    if removed:
        logger.info("removed %d stale temporary files from %s", removed, os_path_text(store.root))
    return removed


def compact_store(store: ContentStore, *, min_files: int = 2) -> list[CompactionReport]:
    """Compact every table of `store` that has at least `min_files` data files.

    Safe while batches are written: readers see each batch in exactly one file throughout,
    and only one compaction runs at a time per store (per machine, for an object store: the
    lock is a local file, so schedule compaction on one machine). Stale temporary files of
    killed writers are swept first (`sweep_stale_temp_files`).

    One caveat for readers: DuckDB lists a view's files when a query starts and opens them
    after, so a query that starts while compaction deletes the files it folded can fail once
    with "Cannot open file" (measured: 7 of 411 back-to-back queries during 15 compactions in
    a row). Its result is never wrong, and rerunning it succeeds; hence a daily schedule at a
    quiet hour.
    """
    store.ensure_layout()
    sweep_stale_temp_files(store)
    with state_lock(store.root, "compaction"):
        return [_compact_table(store, table, min_files) for table in pipeline_tables()]
