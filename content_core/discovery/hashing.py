"""Reading a changed entry into the blob store through its source, only when it holds still, a
few entries ahead in threads, and the per-source cache that spares re-reading entries whose
signature moved but bytes did not."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from content_core.errors import SourceError
from content_core.paths import escape_path, os_path_text
from content_core.sandbox import available_cores
from content_core.sources import EntrySource, SourceEntry
from content_core.store import ContentStore, sha256_hex
from content_core.store.tables import write_parquet_atomic

logger = logging.getLogger(__name__)

__all__ = ["HashCache", "cache_key", "read_ahead", "read_stable"]

_HASH_CACHE_SCHEMA = pa.schema(
    [("path", pa.string()), ("signature", pa.string()), ("sha256", pa.string())]
)
# Read in one call and hashed in memory; bigger entries stream into the blob store.
_SMALL_ENTRY = 4 << 20


def cache_key(entry: SourceEntry) -> str:
    """The hash cache's key of an entry's version: its size and signature (the cache's
    `signature` column; discovery's SQL builds the same text with concat_ws)."""
    return f"{entry.size_bytes}:{entry.signature}"


class HashCache:
    """path -> (size and signature, sha256) for entries whose signature moved but bytes may not
    have (a touch, a same-bytes rewrite).

    Kept as Arrow and joined in DuckDB; only the rows learnt by this pass live in Python.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.learnt: dict[str, tuple[str, str]] = {}

    def table(self) -> pa.Table:
        """The stored cache (empty when there is none or it is unreadable)."""
        if self.path.is_file():
            try:
                return pq.read_table(self.path).select(_HASH_CACHE_SCHEMA.names)
            except (OSError, pa.ArrowException, KeyError) as exc:
                logger.warning(
                    "hash cache %s unreadable (%s); starting afresh", os_path_text(self.path), exc
                )
        return _HASH_CACHE_SCHEMA.empty_table()

    def remember(self, entry: SourceEntry, sha256: str) -> None:
        """Record the hash of the version of `entry` that was read."""
        self.learnt[entry.path] = (cache_key(entry), sha256)

    def save(self) -> None:
        """Merge what this pass learnt into the stored cache (atomic replace)."""
        if not self.learnt:
            return
        paths = sorted(self.learnt)
        fresh = pa.table(
            {
                "path": paths,
                "signature": [self.learnt[p][0] for p in paths],
                "sha256": [self.learnt[p][1] for p in paths],
            },
            schema=_HASH_CACHE_SCHEMA,
        )
        old = self.table().cast(_HASH_CACHE_SCHEMA)
        kept = old.filter(pc.invert(pc.is_in(old.column("path"), value_set=fresh.column("path"))))
        write_parquet_atomic(pa.concat_tables([kept, fresh]), self.path)
        self.learnt.clear()


def read_stable(
    source: EntrySource, store: ContentStore, path_bytes: bytes, settled_before_ns: int = 0
) -> tuple[str, SourceEntry] | None:
    """Copy an entry into the blob store; its sha256 and the state of the version read, or
    None when it vanished, changed while being read, or cannot be read now.

    The entry's state before and after reading must be equal and match the bytes read, so a
    version being written is never pinned (its bytes may reach the blob store unreferenced,
    which is harmless). A listing that is stale by now is fine: the version read is recorded
    with its own state. An entry changed after `settled_before_ns` is left for a later pass:
    a writer that pauses between writes shows no change during one read.
    """
    try:
        before = source.stat_entry(path_bytes)
        if before is None:
            return None  # vanished since the listing: its deletion shows next pass
        if before.changed_ns > settled_before_ns > 0:
            return None  # written to moments ago: maybe still being written
        with source.open_entry(before) as handle:
            if before.size_bytes <= _SMALL_ENTRY:
                data = handle.read(_SMALL_ENTRY + 1)
                size, sha256 = len(data), sha256_hex(data)
                if size == before.size_bytes and not store.blobs.has(sha256):
                    store.blobs.put(data, blob_id=sha256)
            else:
                sha256, size = store.blobs.put_stream(handle)
        after = source.stat_entry(path_bytes)
    except (SourceError, OSError) as exc:
        logger.warning("cannot read %s: %s; retrying next pass", escape_path(path_bytes), exc)
        return None
    if after != before or size != before.size_bytes:
        return None  # written to while we read it: never pin a half-written version
    return sha256, before


# Entries read at once: reading is copying and hashing (I/O and hashlib, outside the GIL), so
# the cores the process is given, and a few more for a source that waits on the network.
_READERS = min(8, available_cores() * 2)


def read_ahead(
    rows: list[dict[str, Any]],
    wanted: Callable[[dict[str, Any]], bool],
    read: Callable[[dict[str, Any]], tuple[str, SourceEntry] | None],
) -> Iterator[tuple[dict[str, Any], tuple[str, SourceEntry] | None]]:
    """Each row with `read(row)` (None where not `wanted`), in order, with at most a few
    reads ahead of the consumer, so that one that stops early (its time budget spent) leaves
    few reads done for nothing."""
    # Any: rows of the plan's DuckDB query, keyed by column name.
    with ThreadPoolExecutor(max_workers=_READERS, thread_name_prefix="discovery-read") as pool:
        pending: deque[tuple[dict[str, Any], Future[tuple[str, SourceEntry] | None] | None]] = (
            deque()
        )
        queue = iter(rows)
        try:
            while True:
                while len(pending) < 2 * _READERS:
                    row = next(queue, None)
                    if row is None:
                        break
                    pending.append((row, pool.submit(read, row) if wanted(row) else None))
                if not pending:
                    return
                row, future = pending.popleft()
                yield row, future.result() if future is not None else None
        finally:
            for _, future in pending:
                if future is not None:
                    future.cancel()
