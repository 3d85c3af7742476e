"""What discovery last recorded of a source: the latest manifest row of every path, read from
the manifests (the truth) through a per-source snapshot (a cache derived from them)."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import duckdb

from content_core.paths import os_path_text
from content_core.store import ContentStore

logger = logging.getLogger(__name__)

__all__ = ["SNAPSHOT_EVERY", "load_latest", "save_snapshot"]

_COLUMN_TYPES = {
    "path": "VARCHAR",
    "path_bytes": "BLOB",
    "change": "VARCHAR",
    "sha256": "VARCHAR",
    "size_bytes": "BIGINT",
    "signature": "VARCHAR",
    "batch_seq": "BIGINT",
    "batch_id": "VARCHAR",
}
# Manifests written before `signature` existed came from the local folder and recorded its
# parts instead; their signature is rebuilt from them in the local folder's form.
_LEGACY_TYPES = {"mtime_ns": "BIGINT", "ctime_ns": "BIGINT", "inode": "BIGINT"}
_SELECT = ", ".join(c for c in _COLUMN_TYPES if c != "signature") + (
    ", coalesce(signature, CASE WHEN mtime_ns IS NOT NULL "
    "THEN concat_ws(':', mtime_ns, ctime_ns, inode) END) AS signature"
)
# No rows, every column typed: unioned BY NAME with manifests (and snapshots) written before a
# column existed, it supplies that column as nulls.
_NO_ROWS = (
    "SELECT "
    + ", ".join(f"NULL::{t} AS {c}" for c, t in {**_COLUMN_TYPES, **_LEGACY_TYPES}.items())
    + " WHERE false"
)
# Manifests read one by one before discovery folds them into the per-source snapshot.
SNAPSHOT_EVERY = 64


def _quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _snapshot_path(store: ContentStore, source_id: str) -> Path:
    return store.layout.state(f"{source_id}.known.parquet")


def _manifests_after(store: ContentStore, source_id: str, after_seq: int) -> list[str]:
    """The source's manifest files with a sequence number above `after_seq` (read from names)."""
    name = re.compile(rf"^{re.escape(source_id)}-(\d+)-[0-9a-f]{{10}}$")
    found = []
    for batch_id in store.list_batches(source_id):
        match = name.match(batch_id)
        if match and int(match.group(1)) > after_seq:
            found.append(store.manifest_url(batch_id))
    return found


def load_latest(connection: duckdb.DuckDBPyConnection, store: ContentStore, source_id: str) -> int:
    """Create table `manifest_latest`: the latest manifest row of every path of the source.

    Reads the snapshot (latest rows up to some batch, rebuilt when missing or unreadable) plus
    every newer manifest; returns how many manifest files were read one by one, so a caller
    can fold them into a new snapshot.
    """
    parts, covered = [], 0
    store.storage.prepare(connection)  # the manifests may be s3:// objects
    snapshot = _snapshot_path(store, source_id)
    if snapshot.is_file():
        try:
            row = connection.execute(
                f"SELECT coalesce(max(batch_seq), 0) FROM read_parquet({_quote(snapshot)})"
            ).fetchone()
            covered = int(row[0]) if row else 0
            parts.append(
                f"SELECT {_SELECT} FROM (SELECT * FROM read_parquet({_quote(snapshot)}) "
                f"UNION ALL BY NAME {_NO_ROWS})"
            )
        except duckdb.Error as exc:
            logger.warning(
                "snapshot %s unreadable (%s); reading every manifest", os_path_text(snapshot), exc
            )
            covered = 0
    files = _manifests_after(store, source_id, covered)
    if files:
        listed = ", ".join(_quote(f) for f in files)
        parts.append(
            f"SELECT {_SELECT} FROM (SELECT * FROM read_parquet([{listed}], union_by_name = true) "
            f"WHERE source_id = {_quote(source_id)} UNION ALL BY NAME {_NO_ROWS})"
        )
    if not parts:
        connection.execute(f"CREATE TABLE manifest_latest AS SELECT {_SELECT} FROM ({_NO_ROWS})")
        return 0
    connection.execute(
        "CREATE TABLE manifest_latest AS SELECT * FROM ("
        + " UNION ALL ".join(parts)
        + ") QUALIFY row_number() OVER (PARTITION BY path ORDER BY batch_seq DESC) = 1"
    )
    return len(files)


def save_snapshot(
    connection: duckdb.DuckDBPyConnection, store: ContentStore, source_id: str
) -> None:
    """Write `manifest_latest` as the source's snapshot (atomic; deletions kept as rows)."""
    target = _snapshot_path(store, source_id)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    connection.execute(
        f"COPY (SELECT * FROM manifest_latest ORDER BY path) TO {_quote(tmp)} "
        "(FORMAT parquet, COMPRESSION zstd)"
    )
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, target)
