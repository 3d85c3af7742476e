"""ContentStore: the store layout of DESIGN.md section 4 behind one object, in a folder or on
an object store (`s3://bucket/prefix`, see `content_core.store.storage`)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from content_core.store.blobs import BlobStore
from content_core.store.catalog import (
    COMPACTED_DIR,
    connect_views,
    ensure_catalog,
    table_select,
)
from content_core.store.layout import StoreLayout, table_prefix
from content_core.store.rows import BatchRow, TableRow
from content_core.store.storage import (
    LocalStorage,
    ObjectStorage,
    Storage,
    default_work_dir,
    is_object_uri,
)
from content_core.store.tables import (
    BATCHES,
    conform,
    pipeline_tables,
    rows_to_table,
    table_schema,
    write_parquet_atomic,
)

__all__ = ["ContentStore"]

_EMPTY = "_empty"
_QUERY_ATTEMPTS = 3


class ContentStore:
    """Blobs, one Parquet file per (table, batch), batch manifests and the DuckDB catalog.

    `root` is a folder, or an object-store URI `s3://bucket/prefix` (credentials and endpoint
    from the AWS_* variables, see `S3Settings`). Every machine shares what is under the URI:
    blobs, tables, manifests and finished marks. What stays on each machine is under
    `self.root`, its work folder (`work_dir`, default `default_work_dir`): the catalog file
    (views over the `s3://` files), locks, caches and a copy of the blobs it read. Every path
    under `self.root` comes from `self.layout` (`content_core.store.layout`).
    """

    def __init__(self, root: Path | str, *, work_dir: Path | None = None) -> None:
        self.storage: Storage
        if is_object_uri(root):
            self.storage = ObjectStorage(str(root))
            self.root = (work_dir or default_work_dir(self.storage.location)).resolve()
            self.layout = StoreLayout(self.root)
            self.blobs = BlobStore(self.layout.blobs, remote=self.storage)
        else:
            self.storage = LocalStorage(Path(root))
            self.root = Path(root).expanduser().resolve()
            self.layout = StoreLayout(self.root)
            self.blobs = BlobStore(self.layout.blobs)
        self._ready = False

    # -- layout -------------------------------------------------------------------------------

    @property
    def location(self) -> str:
        """The store root as text: its folder or its `s3://` URI."""
        return self.storage.location

    @property
    def catalog_path(self) -> Path:
        """Where `content.duckdb` lives (on this machine)."""
        return self.layout.catalog

    def ensure_layout(self) -> None:
        """Create the folders, an empty file of each table's schema and the catalog (idempotent).

        A view over a glob that matches no file cannot be created, hence the empty files. They
        are rewritten when the table's schema has changed since, so every view (unioned by
        column name) has every column of the current row model even in an older store.
        """
        if self._ready:
            return
        empties = [(BATCHES, f"batches/{_EMPTY}.parquet")]
        for table in pipeline_tables():
            empties.append((table, self.table_key(table, _EMPTY)))
            empties.append((table, f"{self._table_dir(table)}/{COMPACTED_DIR}/{_EMPTY}.parquet"))
        for table, empty in empties:
            if not self.storage.exists(empty) or not pq.read_schema(
                io.BytesIO(self.storage.read(empty))
            ).equals(table_schema(table)):
                self._write_table(table_schema(table).empty_table(), empty)
        self.root.mkdir(parents=True, exist_ok=True)
        ensure_catalog(self.storage, self.root)
        self._ready = True

    def _write_table(self, data: pa.Table, key: str) -> None:
        """Replace the Parquet file `key`, atomically for readers (a rename, or one PUT)."""
        if isinstance(self.storage, LocalStorage):
            write_parquet_atomic(data, self.storage.root / key)
            return
        sink = io.BytesIO()
        pq.write_table(data, sink, compression="zstd")
        self.storage.write(key, sink.getvalue())

    def _read_table(self, key: str, table: str) -> pa.Table:
        return conform(pq.read_table(io.BytesIO(self.storage.read(key))), table)

    def _table_dir(self, table: str) -> str:
        if table == BATCHES or table not in pipeline_tables():
            raise ValueError(f"unknown table {table!r}")
        return table_prefix(table).rstrip("/")

    def table_key(self, table: str, batch_id: str) -> str:
        """The key (relative to the root) of the Parquet file of `table`'s rows for `batch_id`."""
        return f"{self._table_dir(table)}/batch={batch_id}/data.parquet"

    def _folder(self) -> Path:
        if not isinstance(self.storage, LocalStorage):
            raise ValueError(f"{self.location} is an object store: use its keys and URLs")
        return self.storage.root

    def table_path(self, table: str, batch_id: str) -> Path:
        """Return the Parquet file holding `table`'s rows for `batch_id` (a folder store's).

        Raises:
            ValueError: the store is on an object store (`table_key` names the object).
        """
        return self._folder() / self.table_key(table, batch_id)

    def manifest_url(self, batch_id: str) -> str:
        """What DuckDB reads for the manifest of `batch_id`: a path or an `s3://` URL."""
        return self.storage.url(f"batches/{batch_id}.parquet")

    def manifest_path(self, batch_id: str) -> Path:
        """Return the Parquet file of the manifest of `batch_id` (a folder store's).

        Raises:
            ValueError: the store is on an object store (`manifest_url` names the object).
        """
        return self._folder() / "batches" / f"{batch_id}.parquet"

    # -- writes -------------------------------------------------------------------------------

    def write_rows(self, table: str, batch_id: str, rows: Sequence[TableRow]) -> int:
        """Replace `table`'s rows for `batch_id` with `rows` (of the table's row model, see
        `content_core.store.rows`); returns the row count."""
        self.ensure_layout()
        data = rows_to_table(table, rows)
        self._write_table(data, self.table_key(table, batch_id))
        return int(data.num_rows)

    def write_manifest(self, batch_id: str, rows: Sequence[BatchRow]) -> None:
        """Write the discovery manifest of `batch_id` (replacing an identical earlier write)."""
        self.ensure_layout()
        self._write_table(rows_to_table(BATCHES, rows), f"batches/{batch_id}.parquet")

    # -- reads --------------------------------------------------------------------------------

    def read_rows(self, table: str, batch_id: str) -> pa.Table:
        """Return `table`'s rows for `batch_id` (an empty table when none were written)."""
        try:
            return self._read_table(self.table_key(table, batch_id), table)
        except FileNotFoundError:
            pass  # compacted away: read the batch back through the view
        self.ensure_layout()
        connection = duckdb.connect(":memory:")
        try:
            self.storage.prepare(connection)
            data = connection.sql(
                f"SELECT * FROM ({table_select(self.storage, table)}) WHERE batch_id = ?",
                params=[batch_id],
            ).to_arrow_table()
        finally:
            connection.close()
        return conform(data, table)

    def mark_finished(self, batch_id: str) -> None:
        """Record that every stage of `batch_id` has run."""
        self.storage.write(f"state/finished/{batch_id}", b"")

    def list_batches(self, source_id: str | None = None) -> list[str]:
        """Return the ids of every discovered batch (of one source when given), oldest first.

        Batch ids are `<source_id>-<seq:06d>-<digest>`, so name order is discovery order.
        """
        prefix = f"{source_id}-" if source_id else ""
        return sorted(
            name.removesuffix(".parquet")
            for item in self.storage.list("batches/")
            if (name := item.key.rpartition("/")[2]).startswith(prefix)
            and name.endswith(".parquet")
            and "/" not in item.key.removeprefix("batches/")
            and not name.startswith(_EMPTY)
        )

    def is_finished(self, batch_id: str) -> bool:
        """True when every stage of the batch has run (see `mark_finished`)."""
        return self.storage.exists(f"state/finished/{batch_id}")

    def read_manifest(self, batch_id: str) -> pa.Table:
        """Return the manifest of `batch_id`.

        Raises:
            FileNotFoundError: no such batch was discovered into this store.
        """
        try:
            return self._read_table(f"batches/{batch_id}.parquet", BATCHES)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no manifest for batch {batch_id!r} in {self.location}"
            ) from None

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with every view; safe while others hold the catalog."""
        self.ensure_layout()
        return connect_views(self.storage)

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
