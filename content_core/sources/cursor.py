"""The seed's cursor-based `ContentSource` methods, written once over any `EntrySource`."""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import BinaryIO

import pyarrow as pa

from content_core.errors import SourceError
from content_core.paths import unescape_path
from content_core.sources.base import LISTING_SCHEMA, RawFile, SourceEntry

__all__ = ["ContentSourceBase", "iter_entries"]

# A temp file keeps the name's suffix (`.pdf`) for tools that go by it; nothing else of the name.
_SAFE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,16}")


def iter_entries(listing: pa.Table) -> Iterator[SourceEntry]:
    """The rows of a listing (`LISTING_SCHEMA`) as entries, in listing order."""
    columns = [listing.column(name).to_pylist() for name in LISTING_SCHEMA.names]
    for path, path_bytes, size, signature, changed_ns in zip(*columns, strict=True):
        yield SourceEntry(path, path_bytes, size, signature, changed_ns)


def _etag(entry: SourceEntry) -> str:
    return f"{entry.size_bytes}:{entry.signature}"


class ContentSourceBase(ABC):
    """`ContentSource` (the seed's `list_changed`, `fetch` and cursors) over the `EntrySource`
    methods a subclass implements: `location`, `list_entries`, `stat_entry`, `open_entry`.

    A cursor maps each path to its etag, the entry's size and signature.
    """

    source_id: str

    def __init__(self) -> None:
        self._committed: dict[str, str] = {}
        self._pending: dict[str, str] = {}

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the source is, as text for people."""

    @abstractmethod
    def list_entries(self) -> pa.Table:
        """Every entry as a table of `LISTING_SCHEMA`, sorted by path."""

    @abstractmethod
    def stat_entry(self, path_bytes: bytes) -> SourceEntry | None:
        """The entry's current state; None when it is gone."""

    @abstractmethod
    def open_entry(self, entry: SourceEntry) -> BinaryIO:
        """A binary stream of the entry's bytes."""

    def raw_file(self, entry: SourceEntry) -> RawFile:
        """Describe a listed entry as the seed's RawFile."""
        declared, _ = mimetypes.guess_type(entry.path, strict=False)
        return RawFile(
            source_id=self.source_id,
            name=entry.path,
            mime_type=declared,
            size_bytes=entry.size_bytes,
            etag=_etag(entry),
            fetched_at=datetime.now(UTC),
            metadata={"signature": entry.signature, "changed_ns": entry.changed_ns},
            name_bytes=entry.path_bytes,
        )

    async def list_changed(self, since: Mapping[str, str] | None) -> AsyncIterator[RawFile]:
        """Yield entries whose etag differs from `since`; the listing becomes the pending cursor.

        Raises:
            SourceError: the source cannot be listed.
        """
        previous = since or {}
        pending: dict[str, str] = {}
        for entry in iter_entries(self.list_entries()):
            etag = pending[entry.path] = _etag(entry)
            if previous.get(entry.path) != etag:
                yield self.raw_file(entry)
        self._pending = pending

    def _entry_of(self, file: RawFile) -> SourceEntry:
        raw = file.name_bytes if file.name_bytes is not None else unescape_path(file.name)
        entry = self.stat_entry(raw)
        if entry is None:
            raise SourceError(f"{file.name} vanished from {self.location}", document_id=file.name)
        return entry

    async def fetch(self, file: RawFile) -> Path:
        """Download the file's current bytes to a new temporary file (the caller removes it).

        Raises:
            SourceError: the file is gone or cannot be read.
        """
        entry = self._entry_of(file)
        match = _SAFE_SUFFIX.fullmatch(PurePosixPath(file.name).suffix)
        return await asyncio.to_thread(self._download, entry, match.group() if match else "")

    def _download(self, entry: SourceEntry, suffix: str) -> Path:
        fd, tmp = tempfile.mkstemp(prefix="content-source-", suffix=suffix)
        try:
            with os.fdopen(fd, "wb") as writer, self.open_entry(entry) as reader:
                shutil.copyfileobj(reader, writer)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return Path(tmp)

    def current_cursor(self) -> dict[str, str]:
        """The last committed cursor: path -> etag."""
        return dict(self._committed)

    def pending_cursor(self) -> dict[str, str]:
        """The cursor seen by the last complete listing."""
        return dict(self._pending)

    def commit_delta(self, cursor: Mapping[str, str]) -> None:
        """Commit `cursor` so the next `list_changed(self.current_cursor())` starts from it."""
        self._committed = dict(cursor)
