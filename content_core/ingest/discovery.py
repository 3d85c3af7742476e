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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from content_core.sources import FileStat, LocalFolderSource
from content_core.store import ContentStore
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

    path: str
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

    def counts(self) -> dict[str, int]:
        """Number of entries per change kind."""
        result = {"added": 0, "modified": 0, "deleted": 0}
        for entry in self.entries:
            result[entry.change] += 1
        return result


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


def known_state(store: ContentStore, source_id: str) -> dict[str, _Known]:
    """Return the latest recorded version of every path of `source_id`, from the manifests."""
    table = store.query(
        "SELECT path, change, sha256, size_bytes, mtime_ns, ctime_ns, inode, batch_seq "
        "FROM batches WHERE source_id = ? "
        "QUALIFY row_number() OVER (PARTITION BY path ORDER BY batch_seq DESC) = 1",
        [source_id],
    )
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


def _last_seq(store: ContentStore, source_id: str) -> tuple[int, str | None]:
    row = store.query(
        "SELECT batch_seq, batch_id FROM batches WHERE source_id = ? "
        "ORDER BY batch_seq DESC LIMIT 1",
        [source_id],
    ).to_pylist()
    return (row[0]["batch_seq"], row[0]["batch_id"]) if row else (0, None)


@contextmanager
def _source_lock(store: ContentStore, source_id: str) -> Iterator[None]:
    """One discovery per source at a time, across processes (sensor, schedule, CLI)."""
    lock_path = store.root / "state" / f"{source_id}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class _HashCache:
    """path -> (stat signature, sha256) for files whose stat moved but bytes may not have."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, tuple[str, str]] = {}
        self.dirty = False
        if path.is_file():
            for row in pq.read_table(path).to_pylist():
                self.entries[row["path"]] = (row["signature"], row["sha256"])

    def lookup(self, path: str, signature: str) -> str | None:
        hit = self.entries.get(path)
        return hit[1] if hit and hit[0] == signature else None

    def remember(self, path: str, signature: str, sha256: str) -> None:
        self.entries[path] = (signature, sha256)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        paths = sorted(self.entries)
        table = pa.table(
            {
                "path": paths,
                "signature": [self.entries[p][0] for p in paths],
                "sha256": [self.entries[p][1] for p in paths],
            },
            schema=_HASH_CACHE_SCHEMA,
        )
        write_parquet_atomic(table, self.path)


def _read_stable(
    source: LocalFolderSource, store: ContentStore, item: FileStat
) -> tuple[str, FileStat] | None:
    """Copy a file into the blob store; None when it vanished or changed while being read."""
    path = source.absolute(item.path)
    try:
        sha256, size = store.blobs.put_file(path)
        after = path.stat(follow_symlinks=False)
    except FileNotFoundError:
        return None  # vanished between listing and reading: its deletion shows next pass
    except OSError as exc:
        logger.warning("cannot read %s: %s; retrying next pass", path, exc)
        return None
    stable = FileStat(
        path=item.path,
        size_bytes=after.st_size,
        mtime_ns=after.st_mtime_ns,
        ctime_ns=after.st_ctime_ns,
        inode=after.st_ino,
    )
    if stable.signature != item.signature or size != after.st_size:
        return None  # written to while we read it: never pin a half-written version
    return sha256, stable


def _batch_id(source_id: str, seq: int, previous: str | None, entries: list[ManifestEntry]) -> str:
    digest = hashlib.sha256(f"{source_id}\n{previous}\n".encode())
    for entry in entries:
        digest.update(f"{entry.path}\0{entry.change}\0{entry.sha256}\n".encode())
    return f"{source_id}-{seq:06d}-{digest.hexdigest()[:10]}"


def discover(
    source: LocalFolderSource,
    store: ContentStore,
    *,
    max_batch_files: int = 2000,
    time_budget_s: float | None = None,
) -> DiscoveryResult:
    """Find what changed in `source` since the store's last record and write one batch manifest.

    Added, modified (any stat change whose bytes differ, old mtimes included) and deleted files
    are found by comparing every file with the latest manifest row of its path. At most
    `max_batch_files` changes go into the batch; `has_more` says whether a next pass is due.
    """
    started = time.monotonic()
    store.ensure_layout()
    with _source_lock(store, source.source_id):
        known = known_state(store, source.source_id)
        cache = _HashCache(store.root / "state" / f"{source.source_id}.hashes.parquet")
        entries: list[ManifestEntry] = []
        seen: set[str] = set()
        has_more = False
        scanned = 0
        for item in source.scan():
            scanned += 1
            seen.add(item.path)
            record = known.get(item.path)
            if record is not None and not record.deleted and record.signature == item.signature:
                continue
            if has_more:
                continue
            full = len(entries) >= max_batch_files
            late = time_budget_s is not None and time.monotonic() - started > time_budget_s
            if full or late:
                has_more = True
                continue
            cached = cache.lookup(item.path, item.signature)
            if record is not None and not record.deleted and cached == record.sha256:
                continue  # metadata-only change already checked
            read = _read_stable(source, store, item)
            if read is None:
                has_more = True
                continue
            sha256, stable = read
            cache.remember(item.path, stable.signature, sha256)
            if record is not None and not record.deleted and sha256 == record.sha256:
                continue  # touched (chmod, same-bytes rewrite): nothing to ingest
            declared, _ = mimetypes.guess_type(item.path, strict=False)
            entries.append(
                ManifestEntry(
                    path=item.path,
                    change="added" if record is None or record.deleted else "modified",
                    sha256=sha256,
                    size_bytes=stable.size_bytes,
                    mtime_ns=stable.mtime_ns,
                    ctime_ns=stable.ctime_ns,
                    inode=stable.inode,
                    declared_type=declared,
                )
            )
        for path in sorted(set(known) - seen):
            if known[path].deleted:
                continue
            if len(entries) >= max_batch_files:
                has_more = True
                break
            entries.append(
                ManifestEntry(
                    path=path,
                    change="deleted",
                    sha256=None,
                    size_bytes=None,
                    mtime_ns=None,
                    ctime_ns=None,
                    inode=None,
                    declared_type=None,
                )
            )
        batch = None
        if entries:
            last_seq, last_batch = _last_seq(store, source.source_id)
            seq = last_seq + 1
            batch = BatchManifest(
                batch_id=_batch_id(source.source_id, seq, last_batch, entries),
                source_id=source.source_id,
                source_root=str(source.root),
                seq=seq,
                entries=tuple(entries),
            )
            _write_manifest(store, batch)
        # After the manifest: losing the cache costs re-hashing, never a change.
        cache.save()
    return DiscoveryResult(
        batch=batch, has_more=has_more, scanned=scanned, elapsed_s=time.monotonic() - started
    )


def _write_manifest(store: ContentStore, batch: BatchManifest) -> None:
    now = datetime.now(UTC)
    store.write_manifest(
        batch.batch_id,
        [
            {
                "batch_id": batch.batch_id,
                "source_id": batch.source_id,
                "path": entry.path,
                "batch_seq": batch.seq,
                "source_root": batch.source_root,
                "change": entry.change,
                "size_bytes": entry.size_bytes,
                "mtime_ns": entry.mtime_ns,
                "ctime_ns": entry.ctime_ns,
                "inode": entry.inode,
                "sha256": entry.sha256,
                "declared_type": entry.declared_type,
                "discovered_at": now,
            }
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
) -> PendingBatches:
    """Discover until the source holds no unrecorded change or the time budget is spent, then
    list every batch of the source that still needs a run.

    The one discovery function of the sensor, the schedule and the CLI. A batch written by a
    discovery whose caller crashed before requesting it is found again here, so no change is
    ever lost; `is_finished` (default: its last table exists) keeps finished batches out.
    """
    started = time.monotonic()
    discovered: list[str] = []
    has_more = True
    scanned = 0
    while has_more:
        remaining = time_budget_s - (time.monotonic() - started)
        if remaining <= 0:
            break
        result = discover(source, store, max_batch_files=max_batch_files, time_budget_s=remaining)
        scanned = result.scanned
        has_more = result.has_more
        if result.batch is None:
            break
        discovered.append(result.batch.batch_id)
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
