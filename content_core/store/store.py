"""ContentStore: the store layout of DESIGN.md section 4 behind one object."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from content_core.store.blobs import BlobStore
from content_core.store.catalog import (
    CATALOG_FILE,
    COMPACTED_DIR,
    connect_views,
    ensure_catalog,
    table_select,
)
from content_core.store.rows import BatchRow, TableRow
from content_core.store.tables import (
    BATCHES,
    PIPELINE_TABLES,
    SCHEMAS,
    conform,
    read_parquet,
    rows_to_table,
    write_parquet_atomic,
)

__all__ = ["ContentStore"]

_EMPTY = "_empty"
_QUERY_ATTEMPTS = 3


class ContentStore:
    """Blobs, one Parquet file per (table, batch), batch manifests and the DuckDB catalog."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser().resolve()
        self.blobs = BlobStore(self.root / "blobs")
        self._ready = False

    # -- layout -------------------------------------------------------------------------------

    @property
    def catalog_path(self) -> Path:
        """Where `content.duckdb` lives."""
        return self.root / CATALOG_FILE

    def ensure_layout(self) -> None:
        """Create the folders, an empty file of each table's schema and the catalog (idempotent).

        A view over a glob that matches no file cannot be created, hence the empty files. They
        are rewritten when the table's schema has changed since, so every view (unioned by
        column name) has every column of the current row model even in an older store.
        """
        if self._ready:
            return
        empties = [(BATCHES, self.root / "batches" / f"{_EMPTY}.parquet")]
        for table in PIPELINE_TABLES:
            empties.append((table, self.table_path(table, _EMPTY)))
            empties.append((table, self._table_dir(table) / COMPACTED_DIR / f"{_EMPTY}.parquet"))
        for table, empty in empties:
            if not empty.is_file() or not pq.read_schema(empty).equals(SCHEMAS[table]):
                write_parquet_atomic(SCHEMAS[table].empty_table(), empty)
        ensure_catalog(self.root)
        self._ready = True

    def _table_dir(self, table: str) -> Path:
        if table not in SCHEMAS or table == BATCHES:
            raise ValueError(f"unknown table {table!r}")
        return self.root / "tables" / table

    def table_path(self, table: str, batch_id: str) -> Path:
        """Return the Parquet file holding `table`'s rows for `batch_id`."""
        return self._table_dir(table) / f"batch={batch_id}" / "data.parquet"

    def manifest_path(self, batch_id: str) -> Path:
        """Return the Parquet file of the manifest of `batch_id`."""
        return self.root / "batches" / f"{batch_id}.parquet"

    # -- writes -------------------------------------------------------------------------------

    def write_rows(self, table: str, batch_id: str, rows: Sequence[TableRow]) -> int:
        """Replace `table`'s rows for `batch_id` with `rows` (of the table's row model, see
        `content_core.store.rows`); returns the row count."""
        self.ensure_layout()
        data = rows_to_table(table, rows)
        write_parquet_atomic(data, self.table_path(table, batch_id))
        return int(data.num_rows)

    def write_manifest(self, batch_id: str, rows: Sequence[BatchRow]) -> None:
        """Write the discovery manifest of `batch_id` (replacing an identical earlier write)."""
        self.ensure_layout()
        write_parquet_atomic(rows_to_table(BATCHES, rows), self.manifest_path(batch_id))

    # -- reads --------------------------------------------------------------------------------

    def read_rows(self, table: str, batch_id: str) -> pa.Table:
        """Return `table`'s rows for `batch_id` (an empty table when none were written)."""
        path = self.table_path(table, batch_id)
        if path.is_file():
            return read_parquet(path, table)
        # Compacted away: read the batch back through the view.
        self.ensure_layout()
        connection = duckdb.connect(":memory:")
        try:
            data = connection.sql(
                f"SELECT * FROM ({table_select(self.root, table)}) WHERE batch_id = ?",
                params=[batch_id],
            ).to_arrow_table()
        finally:
            connection.close()
        return conform(data, table)

    def mark_finished(self, batch_id: str) -> None:
        """Record that every stage of `batch_id` has run."""
        marker = self.root / "state" / "finished" / batch_id
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()

    def list_batches(self, source_id: str | None = None) -> list[str]:
        """Return the ids of every discovered batch (of one source when given), oldest first.

        Batch ids are `<source_id>-<seq:06d>-<digest>`, so name order is discovery order.
        """
        folder = self.root / "batches"
        if not folder.is_dir():
            return []
        prefix = f"{source_id}-" if source_id else ""
        return sorted(
            p.stem
            for p in folder.glob(f"{prefix}*.parquet")
            if not p.name.startswith((".", _EMPTY))
        )

    def is_finished(self, batch_id: str) -> bool:
        """True when every stage of the batch has run (see `mark_finished`)."""
        return (self.root / "state" / "finished" / batch_id).is_file()

    def read_manifest(self, batch_id: str) -> pa.Table:
        """Return the manifest of `batch_id`.

        Raises:
            FileNotFoundError: no such batch was discovered into this store.
        """
        path = self.manifest_path(batch_id)
        if not path.is_file():
            raise FileNotFoundError(f"no manifest for batch {batch_id!r} in {self.root}")
        return read_parquet(path, BATCHES)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with every view; safe while others hold the catalog."""
        self.ensure_layout()
        return connect_views(self.root)

    def query(self, sql: str, parameters: Sequence[Any] | None = None) -> pa.Table:
        """Run `sql` against the views and return the result as Arrow.

        DuckDB lists a view's files when a query starts; a compaction that deletes superseded
        files in that instant makes the read fail once, so such a query is run again.
        """
        attempt = 1
        while True:
            connection = self.connect()
            try:
                relation = connection.sql(sql, params=parameters or None)
                return pa.table({}) if relation is None else relation.to_arrow_table()
            except duckdb.IOException:
                if attempt >= _QUERY_ATTEMPTS:
                    raise
            finally:
                connection.close()
            attempt += 1
