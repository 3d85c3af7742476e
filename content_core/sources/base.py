"""The source contract: RawFile descriptors and the cursor-based ContentSource protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ContentSource", "FileStat", "RawFile"]


class RawFile(BaseModel):
    """One file as a source sees it, before any byte is read."""

    model_config = ConfigDict(frozen=True)

    source_id: str
    name: str  # path relative to the source root, '/'-separated, in text form (`escape_path`)
    mime_type: str | None = None  # declared (from the name); the pipeline sniffs the real one
    size_bytes: int
    etag: str  # changes whenever the file may have changed
    fetched_at: datetime | None = None
    # Open, as the seed defines it: per-source details (mtime_ns, inode, ...).
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The exact bytes of the name as the source gave them; None means `unescape_path(name)`.
    name_bytes: bytes | None = None


@dataclass(frozen=True, slots=True)
class FileStat:
    """What a folder listing knows of a file without reading it.

    A slotted dataclass rather than a pydantic model: discovery makes one per file per tick,
    100,000 of them on a large folder.
    """

    path: str  # relative to the source root, '/'-separated, in text form (`escape_path`)
    size_bytes: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    path_bytes: bytes  # the exact bytes of `path`; what the file is opened by

    @property
    def signature(self) -> str:
        """Changes whenever the file's bytes may have changed (ctime catches `cp -p`)."""
        return f"{self.size_bytes}:{self.mtime_ns}:{self.ctime_ns}:{self.inode}"


@runtime_checkable
class ContentSource(Protocol):
    """Where files come from: list what changed since a cursor, fetch one, track the cursor."""

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
