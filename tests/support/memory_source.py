"""An in-memory source: a second `EntrySource`, shaped like an object store (each write makes a
new generation, a rename is a copy under a new key), so tests prove that discovery, the sensor
and a batch depend on the protocol alone, not on a local folder."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

import pyarrow as pa

from content_assets.resources import SourceResource
from content_core.errors import SourceError
from content_core.paths import escape_path
from content_core.sources import LISTING_SCHEMA, ContentSourceBase, SourceEntry

__all__ = [
    "MEMORY_SOURCES",
    "MemorySource",
    "MemorySourceResource",
    "open_memory_source",
    "registered",
]


@dataclass(frozen=True, slots=True)
class _Object:
    data: bytes
    generation: int
    changed_ns: int


def _key(name: str | bytes) -> bytes:
    return name if isinstance(name, bytes) else name.encode()


class MemorySource(ContentSourceBase):
    """Named byte strings in a dict. `opened` records every entry read, in order."""

    def __init__(self, source_id: str) -> None:
        super().__init__()
        self.source_id = source_id
        self._objects: dict[bytes, _Object] = {}
        self._generation = 0
        self.opened: list[bytes] = []

    # -- what a test does to the source ------------------------------------------------------

    def put(self, name: str | bytes, data: bytes, *, changed_ns: int | None = None) -> None:
        """Write `data` under `name` as a new generation (changed now unless told)."""
        self._generation += 1
        stamp = time.time_ns() if changed_ns is None else changed_ns
        self._objects[_key(name)] = _Object(data, self._generation, stamp)

    def delete(self, name: str | bytes) -> None:
        """Remove `name`."""
        del self._objects[_key(name)]

    def rename(self, old: str | bytes, new: str | bytes) -> None:
        """Move the bytes of `old` to `new`, as an object store does: copy, then delete."""
        self.put(new, self._objects[_key(old)].data)
        self.delete(old)

    # -- EntrySource -------------------------------------------------------------------------

    @property
    def location(self) -> str:
        """A URI naming the source."""
        return f"memory://{self.source_id}"

    def _entry(self, key: bytes, item: _Object) -> SourceEntry:
        return SourceEntry(
            escape_path(key), key, len(item.data), f"g{item.generation}", item.changed_ns
        )

    def list_entries(self) -> pa.Table:
        """Every object, sorted by path."""
        entries = sorted(
            (self._entry(k, v) for k, v in self._objects.items()), key=lambda e: e.path
        )
        return pa.table(
            {name: [getattr(e, name) for e in entries] for name in LISTING_SCHEMA.names},
            schema=LISTING_SCHEMA,
        )

    def stat_entry(self, path_bytes: bytes) -> SourceEntry | None:
        """The object's current state; None when there is none."""
        item = self._objects.get(path_bytes)
        return None if item is None else self._entry(path_bytes, item)

    def open_entry(self, entry: SourceEntry) -> BinaryIO:
        """The bytes of exactly the generation listed (an object store's If-Match)."""
        self.opened.append(entry.path_bytes)
        now = self.stat_entry(entry.path_bytes)
        if now is None or now.signature != entry.signature:
            raise SourceError(f"{entry.path} changed or vanished", document_id=entry.path)
        return io.BytesIO(self._objects[entry.path_bytes].data)


# The sources a `MemorySourceResource` can bind, by source id (tests register theirs).
MEMORY_SOURCES: dict[str, MemorySource] = {}


@contextmanager
def registered(source: MemorySource) -> Iterator[MemorySource]:
    """Make `source` reachable through `MemorySourceResource(source_id=...)` while in use."""
    MEMORY_SOURCES[source.source_id] = source
    try:
        yield source
    finally:
        del MEMORY_SOURCES[source.source_id]


def open_memory_source(
    uri: str, *, source_id: str | None = None, include_hidden: bool = False
) -> MemorySource:
    """The registered source `memory://<source id>` names: a source plug-in's factory, as an
    entry point of `content_pipeline.sources` would name it."""
    del source_id, include_hidden  # the registered source has its id; no name is hidden
    return MEMORY_SOURCES[uri.removeprefix("memory://")]


class MemorySourceResource(SourceResource):
    """Binds a registered in-memory source by its id (overriding `get_source`, not by URI)."""

    def get_source(self) -> MemorySource:
        """The registered source of `source_id`."""
        if self.source_id is None:
            raise ValueError("MemorySourceResource needs a source_id")
        return MEMORY_SOURCES[self.source_id]
