"""The store's BM25 index file, `<store>/search.duckdb`: kept current per batch, caught up on
search when it is behind.

`update_index(root, batch_id)` is the per-batch step (the `search_index` asset, and
`run_batch`): it adds the batch's chunks and drops the rows of the files the batch replaces or
deletes (`search.terms.apply_rows`), leaving every other document's postings as they are.
The index records, per batch, the signature (size, mtime) of the `chunks` and `raw_files`
files it was built from, so `ensure_index` (run before every search) finds any batch written
without the step (a script, an older run) or rewritten since, and applies just those.

DuckDB lets one process write a database file, and a reader holding it open would block that
writer; so, like the catalog, the file is never changed in place: a writer copies it, applies
the batch to the copy and renames the copy over it, under `state/search_index.lock` (an
`flock`, like discovery's and compaction's), so two batches materialising at once apply one
after the other and a search under way keeps reading the file it opened.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from content_core.errors import SearchError
from content_core.search.segment import active_tokenizer, register_tokenizer
from content_core.search.terms import (
    DOCS_TABLE,
    ApplyCounts,
    apply_rows,
    bound_memory,
    create_tables,
    index_counts,
)
from content_core.store.layout import SEARCH_INDEX_FILE, StoreLayout, table_prefix
from content_core.store.locks import state_lock
from content_core.store.storage import Storage, open_storage

if TYPE_CHECKING:
    from content_core.store.store import ContentStore

logger = logging.getLogger(__name__)

__all__ = [
    "INDEX_FILE",
    "IndexUpdate",
    "ensure_index",
    "indexed_chunks",
    "open_index",
    "store_fingerprint",
    "update_index",
]

INDEX_FILE = SEARCH_INDEX_FILE
_BATCHES_TABLE = "index_batches"  # batch_id, signature: what each batch was applied from
_META_TABLE = "index_meta"  # one row: format, compacted (the compacted files seen)
# Part of the state: an index laid out by another version of this module is built anew.
# v2: chunks are indexed with their document's title (a `title` column in the documents).
# v3: CJK and Thai terms, other scripts' words; the tokenizer's name follows (`_format`).
_INDEX_FORMAT = "terms-v3"
# The tables whose rows decide what current_chunks shows, hence the index.
_KEY_TABLES = ("chunks", "raw_files")
_COMPACTED = "compacted"
_EMPTY = "batch=_empty"


@dataclass(frozen=True, slots=True)
class IndexUpdate:
    """What one `update_index` or `ensure_index` did to the index file."""

    path: Path
    batches: tuple[str, ...]  # the batches applied (every batch for a full build)
    full_build: bool
    docs: int  # documents in the index afterwards
    postings: int
    docs_added: int = 0
    docs_removed: int = 0
    postings_added: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class _FileState:
    batches: dict[str, str]  # batch_id -> signature of its per-batch files
    compacted: str  # digest of the compacted files


def _format() -> str:
    """The format an index built now records: the layout's version and the tokenizer's name
    (an index of another tokenizer, say before a segmenter was installed, is built anew)."""
    return f"{_INDEX_FORMAT} tokenizer={active_tokenizer().name}"


def _file_state(storage: Storage) -> _FileState:
    """Per batch, the size and version of its per-batch `chunks` and `raw_files` files; a
    digest of the compacted ones. A listing of those two tables (stat calls on a folder)."""
    parts: dict[str, list[str]] = {}
    packed: list[str] = []
    for number, table in enumerate(_KEY_TABLES):
        prefix = table_prefix(table)
        for item in storage.list(prefix):
            folder, _, name = item.key[len(prefix) :].partition("/")
            stat = f"{item.size_bytes}:{item.version}"
            if folder.startswith("batch=") and folder != _EMPTY and name == "data.parquet":
                slot = parts.setdefault(folder[len("batch=") :], ["-"] * len(_KEY_TABLES))
                slot[number] = stat
            elif folder == _COMPACTED and name.startswith("part-"):
                packed.append(f"{item.key}:{stat}")
    batches = {batch: "|".join(slot) for batch, slot in parts.items()}
    return _FileState(batches, hashlib.sha256("\n".join(sorted(packed)).encode()).hexdigest())


def store_fingerprint(root: Path | str) -> str:
    """A digest of every Parquet file behind current_chunks: changes with any batch written,
    rerun, compacted or deleted."""
    state = _file_state(open_storage(root))
    entries = sorted(f"{b}={s}" for b, s in state.batches.items())
    return hashlib.sha256(
        "\n".join([_format(), state.compacted, *entries]).encode()
    ).hexdigest()


@dataclass(frozen=True, slots=True)
class _Recorded:
    batches: dict[str, str]
    compacted: str


def _recorded(target: Path) -> _Recorded | None:
    """What the index file says it was built from; None when it must be built anew."""
    if not target.is_file():
        return None
    try:
        connection = duckdb.connect(str(target), read_only=True)
    except duckdb.Error:
        return None  # unreadable or half written: built anew
    try:
        meta = connection.execute(f"SELECT format, compacted FROM {_META_TABLE}").fetchone()
        if meta is None or meta[0] != _format():
            return None
        rows = connection.execute(f"SELECT batch_id, signature FROM {_BATCHES_TABLE}").fetchall()
    except duckdb.Error:
        return None
    finally:
        connection.close()
    return _Recorded({str(b): str(s) for b, s in rows}, str(meta[1]))


def _stale(storage: Storage, state: _FileState, recorded: _Recorded) -> list[str]:
    """Batches whose per-batch files differ from what the index applied, and batches only in
    compacted files that it never applied (compaction itself changes no row)."""
    stale = [b for b, sig in state.batches.items() if recorded.batches.get(b) != sig]
    if state.compacted != recorded.compacted:
        stale += [
            b
            for b in _compacted_batches(storage)
            if b not in recorded.batches and b not in state.batches
        ]
    return sorted(set(stale))


def _compacted_batches(storage: Storage) -> list[str]:
    connection = duckdb.connect(":memory:")
    found: set[str] = set()
    try:
        storage.prepare(connection)
        for table in _KEY_TABLES:
            for item in storage.list(f"{table_prefix(table)}{_COMPACTED}/"):
                if item.key.endswith(".parquet"):
                    rows = connection.execute(
                        "SELECT DISTINCT batch_id FROM read_parquet(?)", [storage.url(item.key)]
                    ).fetchall()
                    found.update(str(row[0]) for row in rows)
    finally:
        connection.close()
    return sorted(found)


def _source_views(
    connection: duckdb.DuckDBPyConnection, storage: Storage, batches: list[str] | None
) -> None:
    """Temp relations `_raw` and `_chunks`: the rows of `batches` (None: of every batch)."""
    from content_core.store.catalog import table_select

    storage.prepare(connection)
    where = "" if batches is None else " WHERE batch_id IN (SELECT unnest(?::VARCHAR[]))"
    for view, table in (("_raw", "raw_files"), ("_chunks", "chunks")):
        select = f"SELECT * FROM ({table_select(storage, table)}){where}"
        if batches is not None:  # parameters cannot go into a view: read once, here
            connection.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS {select}", [batches])
        else:
            connection.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {select}")


def _write(
    root: Path, storage: Storage, state: _FileState, batches: list[str] | None
) -> tuple[ApplyCounts, int, int]:
    """Apply `batches` (None: build from every batch) to a copy of the index, record `state`
    for them, rename the copy into place; (counts, documents, postings) of the new file."""
    target = StoreLayout(root).search_index
    tmp = target.with_name(f".{INDEX_FILE}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    if batches is not None:
        shutil.copyfile(target, tmp)
    spill = target.with_name(f".{INDEX_FILE}.{os.getpid()}.spill")
    connection = duckdb.connect(str(tmp))
    try:
        # A long build (segmenters run in Python) would draw DuckDB's progress bar on stdout,
        # which `search --format jsonl` writes its hits to.
        connection.execute("SET enable_progress_bar = false")
        tokenizer = register_tokenizer(connection)
        # A full build of millions of chunks stays within the build's memory limit, spilling
        # here (docs/reference/search.md).
        bound_memory(connection, spill)
        if batches is None:
            create_tables(connection)
            connection.execute(
                f"CREATE TABLE {_BATCHES_TABLE} (batch_id VARCHAR, signature VARCHAR)"
            )
            connection.execute(f"CREATE TABLE {_META_TABLE} (format VARCHAR, compacted VARCHAR)")
            connection.execute(
                f"INSERT INTO {_META_TABLE} VALUES (?, '')",
                [f"{_INDEX_FORMAT} tokenizer={tokenizer.name}"],
            )
        _source_views(connection, storage, batches)
        counts = apply_rows(connection, "_raw", "_chunks")
        if batches is None:
            rows = connection.execute("SELECT DISTINCT batch_id FROM _raw").fetchall()
            applied = sorted({*state.batches, *(str(row[0]) for row in rows)})
        else:
            applied = batches
        signatures = [(b, state.batches.get(b, _COMPACTED)) for b in applied]
        connection.execute(
            f"DELETE FROM {_BATCHES_TABLE} WHERE batch_id IN (SELECT unnest(?::VARCHAR[]))",
            [applied],
        )
        if signatures:
            connection.executemany(f"INSERT INTO {_BATCHES_TABLE} VALUES (?, ?)", signatures)
        connection.execute(f"UPDATE {_META_TABLE} SET compacted = ?", [state.compacted])
        docs, postings = index_counts(connection)
        connection.execute("CHECKPOINT")
    except duckdb.Error as exc:
        tmp.unlink(missing_ok=True)
        raise SearchError(f"cannot index the chunks of {root}: {exc}") from exc
    finally:
        connection.close()
        shutil.rmtree(spill, ignore_errors=True)
    os.replace(tmp, target)
    Path(f"{tmp}.wal").unlink(missing_ok=True)
    return counts, docs, postings


def _bring_up(root: Path, storage: Storage) -> IndexUpdate:
    """Apply every stale batch, or build anew; under the lock."""
    started = time.perf_counter()
    target = StoreLayout(root).search_index
    with state_lock(root, "search_index"):  # one writer per store
        # Stat before reading rows: a file rewritten meanwhile is found stale next time.
        state = _file_state(storage)
        recorded = _recorded(target)
        if recorded is None:
            batches = None
        else:
            # A batch step's own batch is among them unless the index holds its files as they
            # are now (a step that waited on the lock may find it applied by the one before).
            batches = _stale(storage, state, recorded)
            if not batches and state.compacted == recorded.compacted:
                return IndexUpdate(target, (), False, *_counts(target))
        counts, docs, postings = _write(root, storage, state, batches)
    update = IndexUpdate(
        path=target,
        batches=tuple(batches or ()),
        full_build=batches is None,
        docs=docs,
        postings=postings,
        docs_added=counts.docs_added,
        docs_removed=counts.docs_removed,
        postings_added=counts.postings_added,
        seconds=time.perf_counter() - started,
    )
    logger.info(
        "search index of %s: %s batches, +%d -%d documents in %.1f s",
        root.name,
        "all" if update.full_build else len(update.batches),
        update.docs_added,
        update.docs_removed,
        update.seconds,
    )
    return update


def _counts(target: Path) -> tuple[int, int]:
    connection = duckdb.connect(str(target), read_only=True)
    try:
        return index_counts(connection)
    finally:
        connection.close()


def update_index(store: ContentStore, batch_id: str) -> IndexUpdate:
    """The per-batch step: make the index hold `batch_id`'s chunks and drop the rows of the
    files it replaced or deleted (with any other batch the index is behind on: a batch is
    stale when its `chunks` or `raw_files` file is not the one the index applied, so a rerun
    of `batch_id`, which rewrites them, is applied again).

    Raises:
        SearchError: the store's tables could not be read or the index written.
        MissingDependencyError: the `fts` extension package (for `stem`) is missing.
    """
    store.ensure_layout()
    return _bring_up(store.root, store.storage)


def ensure_index(root: Path) -> Path:
    """Make `<root>/search.duckdb` index the store's current chunks; return its path.

    Cheap when the index is current (a stat of each batch's files and a read of the index's
    record); otherwise the batches it is behind on are applied (the whole index is built only
    when there is none).

    Raises:
        SearchError: the store's tables could not be read.
        MissingDependencyError: the `fts` extension package is missing.
    """
    root = Path(root).resolve()
    storage = open_storage(root)
    target = StoreLayout(root).search_index
    recorded = _recorded(target)
    if recorded is not None:
        state = _file_state(storage)
        if state.compacted == recorded.compacted and not _stale(storage, state, recorded):
            return target
    layout = StoreLayout(root)
    if not layout.tables.is_dir() and not layout.catalog.is_file():
        raise SearchError(f"no content store at {root}")
    return _bring_up(root, storage).path


def open_index(root: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the store's up-to-date index, with `fts` loaded (`stem`)."""
    from content_core.store.extensions import load_extension

    path = ensure_index(root)
    connection = duckdb.connect(str(path), read_only=True)
    load_extension(connection, "fts")
    register_tokenizer(connection)
    return connection


def indexed_chunks(store: ContentStore, source_id: str | None = None) -> int | None:
    """The chunks the store's search index holds now (of `source_id` when given), or None
    while there is no index file (no batch has reached the `search_index` stage)."""
    target = store.layout.search_index
    if not target.is_file():
        return None
    connection = duckdb.connect(str(target), read_only=True)
    try:
        where, params = ("", []) if source_id is None else (" WHERE source_id = ?", [source_id])
        row = connection.execute(f"SELECT count(*) FROM {DOCS_TABLE}{where}", params).fetchone()
    except duckdb.Error as exc:
        raise SearchError(f"cannot read the search index {target}: {exc}") from exc
    finally:
        connection.close()
    return int(row[0]) if row else 0
