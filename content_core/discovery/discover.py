"""Discovery: compare a source's listing with what the store last recorded and pin the changes
into immutable batch manifests (the unit of work of every asset).

Works on any `EntrySource`: the listing gives each entry's size and signature, and only the
entries whose size or signature differs from their latest manifest row are read. The truth
about "what was last seen" is the manifests themselves (see `known.py`), so a crash between
writing a manifest and anything after it repeats work but never loses a change.
"""

from __future__ import annotations

import hashlib
import mimetypes
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import duckdb
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from content_core.discovery.config import DiscoveryConfig
from content_core.discovery.hashing import HashCache, read_ahead, read_stable
from content_core.discovery.known import SNAPSHOT_EVERY, load_latest, save_snapshot
from content_core.sources import EntrySource, SourceEntry
from content_core.store import BatchRow, ContentStore
from content_core.store.locks import state_lock

__all__ = [
    "BatchManifest",
    "ManifestEntry",
    "PendingBatches",
    "discover_pending",
    "record_bytes",
]

Change = Literal["added", "modified", "deleted"]

# The defaults of `discover_pending`'s keywords: DiscoveryConfig's, never numbers of its own.
_DEFAULTS = DiscoveryConfig()


class ManifestEntry(BaseModel):
    """One file version pinned by a batch."""

    model_config = ConfigDict(frozen=True)

    path: str  # text form of path_bytes (`escape_path`): the file's key with its source
    path_bytes: bytes  # the exact bytes of the path as the source gave them
    change: Change
    sha256: str | None  # None for deletions
    size_bytes: int | None
    signature: str | None  # the source's change signature of the version pinned
    declared_type: str | None


class BatchManifest(BaseModel):
    """An immutable ingest batch: the changes of one source found by one discovery."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    source_id: str
    source_root: str
    seq: int
    entries: tuple[ManifestEntry, ...]


@contextmanager
def _source_lock(store: ContentStore, source_id: str) -> Iterator[None]:
    """One discovery per source at a time, across processes (sensor, schedule, CLI)."""
    with state_lock(store.root, source_id):
        yield


def _batch_id(
    store: ContentStore,
    source_id: str,
    seq: int,
    previous: str | None,
    entries: list[ManifestEntry],
) -> str:
    """Unique per store too: two stores fed from one folder share a Dagster instance without
    taking each other's batches (partitions and run keys are batch ids)."""
    digest = hashlib.sha256(f"{store.location}\n{source_id}\n{previous}\n".encode())
    for entry in entries:
        digest.update(f"{entry.path}\0{entry.change}\0{entry.sha256}\n".encode())
    return f"{source_id}-{seq:06d}-{digest.hexdigest()[:10]}"


# Every path whose listing differs from its latest manifest row (size or signature), in
# listing order, deletions last.
_CHANGED = """
CREATE TABLE changed AS
SELECT coalesce(s.path, k.path) AS path,
       -- a path known from before path_bytes existed was valid UTF-8: its bytes are its text
       coalesce(s.path_bytes, k.path_bytes, encode(k.path)) AS path_bytes,
       s.size_bytes, s.signature, s.ord,
       k.change AS known_change, k.sha256 AS known_sha256
FROM scan s
FULL OUTER JOIN manifest_latest k ON s.path = k.path
WHERE (s.path IS NULL AND k.change <> 'deleted')
   OR (s.path IS NOT NULL AND (
        k.path IS NULL OR k.change = 'deleted'
        OR s.size_bytes IS DISTINCT FROM k.size_bytes
        OR s.signature IS DISTINCT FROM k.signature))
"""
# The changed paths with the hash cache's hash of the listed version (the cache's key is
# `hashing.cache_key`: size and signature).
_CANDIDATES = """
SELECT ch.path, ch.path_bytes, ch.size_bytes, ch.signature, ch.known_change, ch.known_sha256,
       c.sha256 AS cached_sha256
FROM changed ch
LEFT JOIN hash_cache c
       ON c.path = ch.path AND c.signature = concat_ws(':', ch.size_bytes, ch.signature)
ORDER BY ch.ord NULLS LAST, ch.path
"""


@dataclass(slots=True)
class _Plan:
    candidates: list[dict[str, Any]]  # Any: DuckDB row values of the comparison query
    scanned: int
    last_seq: int
    last_batch: str | None


def _plan(source: EntrySource, store: ContentStore, cache: HashCache) -> _Plan:
    """List the source once and compare it with the manifests in DuckDB (no per-entry Python).

    The manifests load on a DuckDB thread while the source is listed.
    """
    connection = duckdb.connect(":memory:")
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            loading = pool.submit(load_latest, connection.cursor(), store, source.source_id)
            scan = source.list_entries()
            read_one_by_one = loading.result()
        if read_one_by_one >= SNAPSHOT_EVERY:
            save_snapshot(connection, store, source.source_id)
        scan = scan.append_column("ord", pa.array(range(scan.num_rows), pa.int64()))
        connection.register("scan", scan)
        # Paths are latest-per-path, so the newest batch always shows among them.
        top = connection.execute(
            "SELECT batch_seq, batch_id FROM manifest_latest ORDER BY batch_seq DESC LIMIT 1"
        ).fetchone()
        last_seq, last_batch = (int(top[0]), str(top[1])) if top else (0, None)
        connection.execute(_CHANGED)
        candidates: list[dict[str, Any]] = []
        if connection.execute("SELECT count(*) FROM changed").fetchone() != (0,):
            connection.register("hash_cache", cache.table())  # read only when it may serve
            cursor = connection.execute(_CANDIDATES)
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
        signature=None,
        declared_type=None,
    )


@dataclass(slots=True)
class _Pass:
    batches: list[BatchManifest]
    has_more: bool
    scanned: int


def _discover(
    source: EntrySource,
    store: ContentStore,
    *,
    max_batch_files: int,
    time_budget_s: float,
    started: float,
    settle_s: float,
    clock_ns: Callable[[], int] = time.time_ns,
) -> _Pass:
    """One listing, then as many batches as the budget allows, each manifest written at once."""
    if max_batch_files < 1:
        raise ValueError("max_batch_files must be at least 1")
    store.ensure_layout()
    with _source_lock(store, source.source_id):
        cache = HashCache(store.layout.state(f"{source.source_id}.hashes.parquet"))
        plan = _plan(source, store, cache)
        seq, previous = plan.last_seq, plan.last_batch
        batches: list[BatchManifest] = []
        entries: list[ManifestEntry] = []
        has_more = False

        def flush() -> None:
            nonlocal seq, previous, entries
            seq += 1
            batch = BatchManifest(
                batch_id=_batch_id(store, source.source_id, seq, previous, entries),
                source_id=source.source_id,
                source_root=source.location,
                seq=seq,
                entries=tuple(entries),
            )
            _write_manifest(store, batch)
            batches.append(batch)
            previous, entries = batch.batch_id, []

        def read_row(row: dict[str, Any]) -> tuple[str, SourceEntry] | None:
            settled = clock_ns() - int(settle_s * 1e9) if settle_s > 0 else 0
            return read_stable(source, store, bytes(row["path_bytes"]), settled)

        for row, read in read_ahead(plan.candidates, _needs_read, read_row):
            late = time.monotonic() - started > time_budget_s
            if late and (entries or batches):  # every pass pins something, however late
                has_more = True
                break
            path, path_bytes = str(row["path"]), bytes(row["path_bytes"])
            known_live = _known_live(row)
            if row["size_bytes"] is None:  # listed before, gone now
                entries.append(_deletion(path, path_bytes))
            else:
                if not _needs_read(row):
                    continue  # same bytes under a new signature, checked on an earlier pass
                if read is None:
                    has_more = True  # changing or vanished: the next pass looks again
                    continue
                sha256, stable = read
                cache.remember(stable, sha256)
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
                        signature=stable.signature,
                        declared_type=declared,
                    )
                )
            if len(entries) >= max_batch_files:
                flush()
        if entries:
            flush()
        # After the manifests: losing the cache costs re-hashing, never a change.
        cache.save()
    return _Pass(batches=batches, has_more=has_more, scanned=plan.scanned)


def _needs_read(row: dict[str, Any]) -> bool:
    """Whether a candidate's bytes must be read: listed now, and not a live path whose
    listed version an earlier pass already hashed to the bytes it holds."""
    # Any: a row of the plan's DuckDB query, keyed by column name.
    if row["size_bytes"] is None:
        return False
    return not (_known_live(row) and row["cached_sha256"] == row["known_sha256"])


def _known_live(row: dict[str, Any]) -> bool:
    """Whether the store holds a live (not deleted) version of the candidate's path."""
    return row["known_change"] is not None and row["known_change"] != "deleted"


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
                signature=entry.signature,
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
    source: EntrySource,
    store: ContentStore,
    known: set[str],
    *,
    max_batch_files: int = _DEFAULTS.max_batch_files,
    time_budget_s: float = 40.0,
    is_finished: Callable[[str], bool] | None = None,
    settle_s: float = _DEFAULTS.settle_s,
    clock_ns: Callable[[], int] = time.time_ns,
) -> PendingBatches:
    """Discover until the source holds no unrecorded change or the time budget is spent, then
    list every batch of the source that still needs a run.

    The one discovery function of the sensor, the schedule and the CLI. Added, modified (any
    change of size or signature whose bytes differ, old mtimes included) and deleted entries
    are found by comparing every listed entry with the latest manifest row of its path; a
    rename is the deletion of one path and the addition of another. Each batch holds at most
    `max_batch_files` changes; `has_more` says whether a next pass is due. An entry that
    changes while it is read, or that changed less than `settle_s` seconds ago (default
    `DiscoveryConfig().settle_s`; pass 0 when the files are known to be complete), is left
    for the next pass and never pinned half-written; `clock_ns` is the wall clock
    that `changed_ns` is compared with (a test may pass its own).

    A batch written by a discovery whose caller crashed before requesting it is found again
    here, so no change is ever lost; `is_finished` (default: its last table exists) keeps
    finished batches out.

    Raises:
        SourceError: the source cannot be listed.
    """
    started = time.monotonic()
    result = _discover(
        source,
        store,
        max_batch_files=max_batch_files,
        time_budget_s=time_budget_s,
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


def record_bytes(
    store: ContentStore, source_id: str, path: str, data: bytes, *, location: str
) -> BatchManifest:
    """Pin `data`, handed in directly rather than found in a source (the seeds' `RAG.index`
    of a text), as the next batch of `source_id`: one entry at `path`, added or modified.

    Same batch ids, lock and manifest as discovery, so every stage, `status` and `retry` treat
    it like any other batch; `location` names where the bytes came from, for people.
    """
    store.ensure_layout()
    with _source_lock(store, source_id):
        sha256 = store.blobs.put(data)
        earlier = store.list_batches(source_id)
        previous = earlier[-1] if earlier else None
        seq = int(previous.rsplit("-", 2)[-2]) if previous else 0
        known = store.query(
            "SELECT change FROM batches WHERE source_id = ? AND path = ? "
            "ORDER BY batch_seq DESC LIMIT 1",
            [source_id, path],
        ).to_pylist()
        live = bool(known) and known[0]["change"] != "deleted"
        entry = ManifestEntry(
            path=path,
            path_bytes=path.encode(),
            change="modified" if live else "added",
            sha256=sha256,
            size_bytes=len(data),
            signature=sha256,
            declared_type=mimetypes.guess_type(path, strict=False)[0],
        )
        batch = BatchManifest(
            batch_id=_batch_id(store, source_id, seq + 1, previous, [entry]),
            source_id=source_id,
            source_root=location,
            seq=seq + 1,
            entries=(entry,),
        )
        _write_manifest(store, batch)
    return batch
