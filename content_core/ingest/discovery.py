"""Discovery: compare a source's files with what the store last recorded and pin the changes
into an immutable batch manifest (the unit of work of every asset).

The truth about "what was last seen" is the manifests themselves (latest row per path), so a
crash between writing a manifest and anything after it repeats work but never loses a change.
A per-source hash cache only saves re-reading files whose stat changed but bytes did not.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import mimetypes
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from content_core.sources import FileStat, LocalFolderSource, os_path_text
from content_core.store import BatchRow, ContentStore, sha256_hex
from content_core.store.tables import write_parquet_atomic

logger = logging.getLogger(__name__)

__all__ = [
    "BatchManifest",
    "DiscoveryResult",
    "ManifestEntry",
    "PendingBatches",
    "discover",
    "discover_pending",
    "known_state",
]

Change = Literal["added", "modified", "deleted"]

_HASH_CACHE_SCHEMA = pa.schema(
    [("path", pa.string()), ("signature", pa.string()), ("sha256", pa.string())]
)


class ManifestEntry(BaseModel):
    """One file version pinned by a batch."""

    model_config = ConfigDict(frozen=True)

    path: str  # text form of path_bytes (`escape_path`): the file's key with its source
    path_bytes: bytes  # the exact bytes of the path as the filesystem gave them
    change: Change
    sha256: str | None  # None for deletions
    size_bytes: int | None
    mtime_ns: int | None
    ctime_ns: int | None
    inode: int | None
    declared_type: str | None


class BatchManifest(BaseModel):
    """An immutable ingest batch: the changes of one source found by one discovery."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    source_id: str
    source_root: str
    seq: int
    entries: tuple[ManifestEntry, ...]


class DiscoveryResult(BaseModel):
    """What one discovery pass did."""

    model_config = ConfigDict(frozen=True)

    batch: BatchManifest | None
    has_more: bool  # changes were left for the next pass (batch size or time budget)
    scanned: int
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class _Known:
    sha256: str | None
    signature: str | None
    seq: int
    deleted: bool


_COLUMN_TYPES = {
    "path": "VARCHAR",
    "path_bytes": "BLOB",
    "change": "VARCHAR",
    "sha256": "VARCHAR",
    "size_bytes": "BIGINT",
    "mtime_ns": "BIGINT",
    "ctime_ns": "BIGINT",
    "inode": "BIGINT",
    "batch_seq": "BIGINT",
    "batch_id": "VARCHAR",
}
_COLUMNS = ", ".join(_COLUMN_TYPES)
# No rows, every column typed: unioned BY NAME with manifests (and snapshots) written before a
# column existed, it supplies that column as nulls.
_NO_ROWS = (
    "SELECT " + ", ".join(f"NULL::{t} AS {c}" for c, t in _COLUMN_TYPES.items()) + " WHERE false"
)
# Manifests read one by one before discovery folds them into the per-source snapshot.
SNAPSHOT_EVERY = 64


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _snapshot_path(store: ContentStore, source_id: str) -> Path:
    return store.root / "state" / f"{source_id}.known.parquet"


def _manifests_after(store: ContentStore, source_id: str, after_seq: int) -> list[Path]:
    """The source's manifest files with a sequence number above `after_seq` (read from names)."""
    name = re.compile(rf"^{re.escape(source_id)}-(\d+)-[0-9a-f]{{10}}$")
    found = []
    for batch_id in store.list_batches(source_id):
        match = name.match(batch_id)
        if match and int(match.group(1)) > after_seq:
            found.append(store.manifest_path(batch_id))
    return found


def _load_latest(connection: duckdb.DuckDBPyConnection, store: ContentStore, source_id: str) -> int:
    """Create table `manifest_latest`: the latest manifest row of every path of the source.

    Reads the snapshot (latest rows up to some batch, a cache derived from the manifests and
    rebuilt when missing or unreadable) plus every newer manifest; returns how many manifest
    files were read one by one, so a caller can fold them into a new snapshot.
    """
    parts, covered = [], 0
    snapshot = _snapshot_path(store, source_id)
    if snapshot.is_file():
        try:
            row = connection.execute(
                f"SELECT coalesce(max(batch_seq), 0) FROM read_parquet({_quote(snapshot)})"
            ).fetchone()
            covered = int(row[0]) if row else 0
            parts.append(
                f"SELECT {_COLUMNS} FROM (SELECT * FROM read_parquet({_quote(snapshot)}) "
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
            f"SELECT {_COLUMNS} FROM (SELECT * FROM read_parquet([{listed}], union_by_name = true) "
            f"WHERE source_id = {_quote(Path(source_id))} UNION ALL BY NAME {_NO_ROWS})"
        )
    if not parts:
        connection.execute(f"CREATE TABLE manifest_latest AS {_NO_ROWS}")
        return 0
    connection.execute(
        "CREATE TABLE manifest_latest AS SELECT * FROM ("
        + " UNION ALL ".join(parts)
        + ") QUALIFY row_number() OVER (PARTITION BY path ORDER BY batch_seq DESC) = 1"
    )
    return len(files)


def _save_snapshot(
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


def known_state(store: ContentStore, source_id: str) -> dict[str, _Known]:
    """Return the latest recorded version of every path of `source_id`, from the manifests.

    Discovery itself never builds this dict (it compares in DuckDB); it serves inspection.
    """
    connection = duckdb.connect(":memory:")
    try:
        _load_latest(connection, store, source_id)
        table = connection.sql("SELECT * FROM manifest_latest").to_arrow_table()
    finally:
        connection.close()
    state: dict[str, _Known] = {}
    for row in table.to_pylist():
        signature = None
        if row["change"] != "deleted":
            signature = f"{row['size_bytes']}:{row['mtime_ns']}:{row['ctime_ns']}:{row['inode']}"
        state[row["path"]] = _Known(
            sha256=row["sha256"],
            signature=signature,
            seq=row["batch_seq"],
            deleted=row["change"] == "deleted",
        )
    return state


@contextmanager
def _source_lock(store: ContentStore, source_id: str) -> Iterator[None]:
    """One discovery per source at a time, across processes (sensor, schedule, CLI).

    An flock dies with its process, so a discovery killed mid-way never leaves the source locked.
    """
    lock_path = store.root / "state" / f"{source_id}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class _HashCache:
    """path -> (stat signature, sha256) for files whose stat moved but bytes may not have.

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

    def remember(self, path: str, signature: str, sha256: str) -> None:
        self.learnt[path] = (signature, sha256)

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


_SMALL_FILE = 4 << 20  # read in one call and hashed in memory; bigger files stream to a temp


def _stat_of(listed: FileStat, info: os.stat_result) -> FileStat:
    return FileStat(
        listed.path,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_ino,
        listed.path_bytes,
    )


def _read_stable(
    source: LocalFolderSource, store: ContentStore, listed: FileStat, settled_before_ns: int = 0
) -> tuple[str, FileStat] | None:
    """Copy a file into the blob store; None when it vanished or changed while being read.

    The file's stat before and after reading must be equal and match the bytes read, so a
    version being written is never pinned (its bytes may reach the blob store unreferenced,
    which is harmless). A listing that is stale by now is fine: the version read is recorded
    with its own stat. A file whose ctime is after `settled_before_ns` is left for a later
    pass: a writer that pauses between writes shows no change during one read.
    """
    path = source.absolute(listed.path_bytes)  # the exact bytes, never the text form
    try:
        before = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(before.st_mode):
            return None  # replaced by a folder or a link: the next pass sees what it is now
        if before.st_ctime_ns > settled_before_ns > 0:
            return None  # written to moments ago: maybe still being written
        if before.st_size <= _SMALL_FILE:
            with open(path, "rb") as handle:
                data = handle.read(_SMALL_FILE + 1)
            size = len(data)
            sha256 = sha256_hex(data)
            if size == before.st_size and not store.blobs.has(sha256):
                store.blobs.put(data, blob_id=sha256)
        else:
            sha256, size = store.blobs.put_file(path)
        after = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None  # vanished between listing and reading: its deletion shows next pass
    except OSError as exc:
        logger.warning("cannot read %s: %s; retrying next pass", os_path_text(path), exc)
        return None
    stable = _stat_of(listed, after)
    if stable != _stat_of(listed, before) or size != after.st_size:
        return None  # written to while we read it: never pin a half-written version
    return sha256, stable


def _batch_id(source_id: str, seq: int, previous: str | None, entries: list[ManifestEntry]) -> str:
    digest = hashlib.sha256(f"{source_id}\n{previous}\n".encode())
    for entry in entries:
        digest.update(f"{entry.path}\0{entry.change}\0{entry.sha256}\n".encode())
    return f"{source_id}-{seq:06d}-{digest.hexdigest()[:10]}"


# Every path whose listing differs from its latest manifest row, in listing order, deletions
# last; with the known version's hash and the cache's hash for the listed signature.
_CANDIDATES = """
WITH known AS ({latest}),
scan_sig AS (
    SELECT *, concat_ws(':', size_bytes, mtime_ns, ctime_ns, inode) AS signature FROM scan
)
SELECT coalesce(s.path, k.path) AS path,
       -- a path known from before path_bytes existed was valid UTF-8: its bytes are its text
       coalesce(s.path_bytes, k.path_bytes, encode(k.path)) AS path_bytes,
       s.size_bytes, s.mtime_ns, s.ctime_ns, s.inode,
       k.change AS known_change, k.sha256 AS known_sha256, c.sha256 AS cached_sha256
FROM scan_sig s
FULL OUTER JOIN known k ON s.path = k.path
LEFT JOIN hash_cache c ON c.path = s.path AND c.signature = s.signature
WHERE (s.path IS NULL AND k.change <> 'deleted')
   OR (s.path IS NOT NULL AND (
        k.path IS NULL OR k.change = 'deleted'
        OR s.size_bytes IS DISTINCT FROM k.size_bytes OR s.mtime_ns IS DISTINCT FROM k.mtime_ns
        OR s.ctime_ns IS DISTINCT FROM k.ctime_ns OR s.inode IS DISTINCT FROM k.inode))
ORDER BY s.ord NULLS LAST, path
"""


def _listing(source: LocalFolderSource) -> pa.Table:
    listed = source.stat_table()
    return listed.append_column("ord", pa.array(range(listed.num_rows), pa.int64()))


@dataclass(slots=True)
class _Plan:
    candidates: list[dict[str, Any]]  # Any: DuckDB row values of the comparison query
    scanned: int
    last_seq: int
    last_batch: str | None


def _plan(source: LocalFolderSource, store: ContentStore, cache: _HashCache) -> _Plan:
    """List the folder once and compare it with the manifests in DuckDB (no per-file Python).

    The manifests load on a DuckDB thread while the folder is listed.
    """
    connection = duckdb.connect(":memory:")
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            loading = pool.submit(_load_latest, connection.cursor(), store, source.source_id)
            scan = _listing(source)
            read_one_by_one = loading.result()
        if read_one_by_one >= SNAPSHOT_EVERY:
            _save_snapshot(connection, store, source.source_id)
        connection.register("scan", scan)
        connection.register("hash_cache", cache.table())
        # Paths are latest-per-path, so the newest batch always shows among them.
        top = connection.execute(
            "SELECT batch_seq, batch_id FROM manifest_latest ORDER BY batch_seq DESC LIMIT 1"
        ).fetchone()
        last_seq, last_batch = (int(top[0]), str(top[1])) if top else (0, None)
        cursor = connection.execute(_CANDIDATES.format(latest="SELECT * FROM manifest_latest"))
        names = [column[0] for column in cursor.description]
        candidates = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        connection.close()
    return _Plan(
        candidates=candidates, scanned=scan.num_rows, last_seq=last_seq, last_batch=last_batch
    )


def _deletion(path: str, path_bytes: bytes) -> ManifestEntry:
    return ManifestEntry(
        path=path,
        path_bytes=path_bytes,
        change="deleted",
        sha256=None,
        size_bytes=None,
        mtime_ns=None,
        ctime_ns=None,
        inode=None,
        declared_type=None,
    )


@dataclass(slots=True)
class _Pass:
    batches: list[BatchManifest]
    has_more: bool
    scanned: int


def _discover(
    source: LocalFolderSource,
    store: ContentStore,
    *,
    max_batch_files: int,
    time_budget_s: float | None,
    max_batches: int | None,
    started: float,
    settle_s: float = 0.0,
    clock_ns: Callable[[], int] = time.time_ns,
) -> _Pass:
    """One listing, then as many batches as the budget allows, each manifest written at once."""
    if max_batch_files < 1:
        raise ValueError("max_batch_files must be at least 1")
    store.ensure_layout()
    with _source_lock(store, source.source_id):
        cache = _HashCache(store.root / "state" / f"{source.source_id}.hashes.parquet")
        plan = _plan(source, store, cache)
        seq, previous = plan.last_seq, plan.last_batch
        batches: list[BatchManifest] = []
        entries: list[ManifestEntry] = []
        has_more = False

        def flush() -> None:
            nonlocal seq, previous, entries
            seq += 1
            batch = BatchManifest(
                batch_id=_batch_id(source.source_id, seq, previous, entries),
                source_id=source.source_id,
                source_root=os_path_text(source.root),
                seq=seq,
                entries=tuple(entries),
            )
            _write_manifest(store, batch)
            batches.append(batch)
            previous, entries = batch.batch_id, []

        for row in plan.candidates:
            late = time_budget_s is not None and time.monotonic() - started > time_budget_s
            if late and (entries or batches):  # every pass pins something, however late
                has_more = True
                break
            path, path_bytes = str(row["path"]), bytes(row["path_bytes"])
            known_live = row["known_change"] is not None and row["known_change"] != "deleted"
            if row["size_bytes"] is None:  # listed before, gone now
                entries.append(_deletion(path, path_bytes))
            else:
                listed = FileStat(
                    path,
                    int(row["size_bytes"]),
                    int(row["mtime_ns"]),
                    int(row["ctime_ns"]),
                    int(row["inode"]),
                    path_bytes,
                )
                if known_live and row["cached_sha256"] == row["known_sha256"]:
                    continue  # metadata-only change, checked on an earlier pass
                settled = clock_ns() - int(settle_s * 1e9) if settle_s > 0 else 0
                read = _read_stable(source, store, listed, settled)
                if read is None:
                    has_more = True  # changing or vanished: the next pass looks again
                    continue
                sha256, stable = read
                cache.remember(path, stable.signature, sha256)
                if known_live and sha256 == row["known_sha256"]:
                    continue  # touched (chmod, same-bytes rewrite): nothing to ingest
                declared, _ = mimetypes.guess_type(path, strict=False)
                entries.append(
                    ManifestEntry(
                        path=path,
                        path_bytes=path_bytes,
                        change="modified" if known_live else "added",
                        sha256=sha256,
                        size_bytes=stable.size_bytes,
                        mtime_ns=stable.mtime_ns,
                        ctime_ns=stable.ctime_ns,
                        inode=stable.inode,
                        declared_type=declared,
                    )
                )
            if len(entries) >= max_batch_files:
                flush()
                if max_batches is not None and len(batches) >= max_batches:
                    has_more = True
                    break
        if entries:
            if max_batches is None or len(batches) < max_batches:
                flush()
            else:
                has_more = True
        # After the manifests: losing the cache costs re-hashing, never a change.
        cache.save()
    return _Pass(batches=batches, has_more=has_more, scanned=plan.scanned)


def discover(
    source: LocalFolderSource,
    store: ContentStore,
    *,
    max_batch_files: int = 2000,
    time_budget_s: float | None = None,
    settle_s: float = 0.0,
    clock_ns: Callable[[], int] = time.time_ns,
) -> DiscoveryResult:
    """Find what changed in `source` since the store's last record and write one batch manifest.

    Added, modified (any stat change whose bytes differ, old mtimes included) and deleted files
    are found by comparing every file with the latest manifest row of its path. At most
    `max_batch_files` changes go into the batch; `has_more` says whether a next pass is due.
    A file that changes while it is read, or (with `settle_s`) whose status changed less than
    `settle_s` seconds ago, is left for the next pass and never pinned half-written.
    `clock_ns` is the wall clock that file ctimes are compared with (a test may pass its own).
    """
    started = time.monotonic()
    result = _discover(
        source,
        store,
        max_batch_files=max_batch_files,
        time_budget_s=time_budget_s,
        max_batches=1,
        started=started,
        settle_s=settle_s,
        clock_ns=clock_ns,
    )
    return DiscoveryResult(
        batch=result.batches[0] if result.batches else None,
        has_more=result.has_more,
        scanned=result.scanned,
        elapsed_s=time.monotonic() - started,
    )


def _write_manifest(store: ContentStore, batch: BatchManifest) -> None:
    now = datetime.now(UTC)
    store.write_manifest(
        batch.batch_id,
        [
            BatchRow(
                batch_id=batch.batch_id,
                source_id=batch.source_id,
                path=entry.path,
                path_bytes=entry.path_bytes,
                batch_seq=batch.seq,
                source_root=batch.source_root,
                change=entry.change,
                size_bytes=entry.size_bytes,
                mtime_ns=entry.mtime_ns,
                ctime_ns=entry.ctime_ns,
                inode=entry.inode,
                sha256=entry.sha256,
                declared_type=entry.declared_type,
                discovered_at=now,
            )
            for entry in batch.entries
        ],
    )


class PendingBatches(BaseModel):
    """Batches a trigger should request: new ones and any discovered earlier but not finished."""

    model_config = ConfigDict(frozen=True)

    batch_ids: tuple[str, ...]  # every unfinished batch of the source, oldest first
    new_batch_ids: tuple[str, ...]  # those not yet among `known` (partitions to add)
    discovered: tuple[str, ...]  # batches written by this call
    has_more: bool
    scanned: int
    elapsed_s: float


def discover_pending(
    source: LocalFolderSource,
    store: ContentStore,
    known: set[str],
    *,
    max_batch_files: int = 2000,
    time_budget_s: float = 40.0,
    is_finished: Callable[[str], bool] | None = None,
    settle_s: float = 0.0,
    clock_ns: Callable[[], int] = time.time_ns,
) -> PendingBatches:
    """Discover until the source holds no unrecorded change or the time budget is spent, then
    list every batch of the source that still needs a run.

    The one discovery function of the sensor, the schedule and the CLI. A batch written by a
    discovery whose caller crashed before requesting it is found again here, so no change is
    ever lost; `is_finished` (default: its last table exists) keeps finished batches out.
    `settle_s` and `clock_ns` are as in `discover`.
    """
    started = time.monotonic()
    result = _discover(
        source,
        store,
        max_batch_files=max_batch_files,
        time_budget_s=time_budget_s,
        max_batches=None,
        started=started,
        settle_s=settle_s,
        clock_ns=clock_ns,
    )
    discovered = [batch.batch_id for batch in result.batches]
    has_more, scanned = result.has_more, result.scanned
    finished = is_finished or store.is_finished
    pending = [b for b in store.list_batches(source.source_id) if not finished(b)]
    return PendingBatches(
        batch_ids=tuple(pending),
        new_batch_ids=tuple(b for b in pending if b not in known),
        discovered=tuple(discovered),
        has_more=has_more,
        scanned=scanned,
        elapsed_s=time.monotonic() - started,
    )
