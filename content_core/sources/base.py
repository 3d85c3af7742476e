"""The source contract: what discovery needs of a place files come from (`EntrySource`: list
entries with their change signature, open one), and the seed's cursor-based `ContentSource`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LISTING_SCHEMA", "ContentSource", "EntrySource", "RawFile", "SourceEntry"]


class RawFile(BaseModel):
    """One file as a source sees it, before any byte is read."""

    model_config = ConfigDict(frozen=True)

    source_id: str
    name: str  # path relative to the source root, '/'-separated, in text form (`escape_path`)
    mime_type: str | None = None  # declared (from the name); the pipeline sniffs the real one
    size_bytes: int
    etag: str  # changes whenever the file may have changed
    fetched_at: datetime | None = None
    # Open, as the seed defines it: per-source details (signature, changed_ns, ...).
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The exact bytes of the name as the source gave them; None means `unescape_path(name)`.
    name_bytes: bytes | None = None


# One row per entry, sorted by path: what `EntrySource.list_entries` returns. A table rather
# than objects, because a listing of 100,000 entries is compared with the store in DuckDB.
LISTING_SCHEMA = pa.schema(
    [
        ("path", pa.string()),  # text form of path_bytes (`escape_path`)
        ("path_bytes", pa.binary()),  # the exact bytes of the name; what the entry is opened by
        ("size_bytes", pa.int64()),
        ("signature", pa.string()),  # source-defined; see SourceEntry.signature
        ("changed_ns", pa.int64()),  # see SourceEntry.changed_ns
    ]
)


@dataclass(frozen=True, slots=True)
class SourceEntry:
    """What a source knows of one entry without reading its bytes (a row of a listing).

    A slotted dataclass rather than a pydantic model: discovery makes one per changed entry.
    """

    path: str  # relative to the source root, '/'-separated, in text form (`escape_path`)
    path_bytes: bytes  # the exact bytes of `path`
    size_bytes: int
    # Together with the size, changes whenever the bytes may have changed: a local folder's
    # mtime, ctime and inode; an object store's ETag or generation. Equal size and signature
    # mean "not read again".
    signature: str
    # When the entry last changed, in ns since the epoch (ctime, last-modified): an entry
    # changed less than the settle time ago may still be being written and waits.
    changed_ns: int


@runtime_checkable
class EntrySource(Protocol):
    """A place files come from, as discovery uses it: list entries, stat one, open one.

    Discovery lists every entry on every tick and compares size and signature with what the
    store recorded, so `list_entries` must stay cheap at 100,000 entries; it reads bytes only
    of entries that changed, through `open_entry`, checking `stat_entry` before and after.
    """

    source_id: str

    @property
    def location(self) -> str:
        """Where the source is, as text for people (a folder, a bucket URI)."""
        ...

    def list_entries(self) -> pa.Table:
        """Every entry as a table of `LISTING_SCHEMA`, sorted by path.

        Raises:
            SourceError: the source itself cannot be listed.
        """
        ...

    def stat_entry(self, path_bytes: bytes) -> SourceEntry | None:
        """The entry's current state; None when it is gone (or no longer a file).

        Raises:
            SourceError: the entry exists but its state cannot be read.
        """
        ...

    def open_entry(self, entry: SourceEntry) -> BinaryIO:
        """A binary stream of the entry's bytes (the caller closes it).

        Raises:
            SourceError: the entry cannot be read (vanished, refused).
        """
        ...


@runtime_checkable
class ContentSource(Protocol):
    """The seed's contract: list what changed since a cursor, fetch one, track the cursor."""

    source_id: str

    def list_changed(self, since: Mapping[str, str] | None) -> AsyncIterator[RawFile]:
        """Yield the files whose etag differs from `since` (every file when `since` is None)."""
        ...

    async def fetch(self, file: RawFile) -> Path:
        """Return a local path holding the bytes of `file`."""
        ...

    def current_cursor(self) -> dict[str, str]:
        """The last committed cursor."""
        ...

    def pending_cursor(self) -> dict[str, str]:
        """The cursor the last listing would commit."""
        ...

    def commit_delta(self, cursor: Mapping[str, str]) -> None:
        """Make `cursor` the committed one."""
        ...
