"""LocalFolderSource: files under a folder on this machine."""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from content_core.errors import SourceError
from content_core.sources.base import FileStat, RawFile

__all__ = ["LocalFolderSource", "LocalFolderSourceConfig", "source_id_for_folder"]


class LocalFolderSourceConfig(BaseModel):
    """Where to look and what to skip."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    folder: Path
    include_hidden: bool = False
    # Called with the path relative to the folder; True skips the file.
    exclude_predicate: Callable[[Path], bool] | None = None


def source_id_for_folder(folder: Path) -> str:
    """Derive a stable, readable source id from a folder's absolute path."""
    resolved = Path(folder).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in resolved.name) or "root"
    return f"{name}-{digest}"


class LocalFolderSource:
    """Walks a folder tree; never follows symlinks and ignores special files."""

    def __init__(self, config: LocalFolderSourceConfig, *, source_id: str | None = None) -> None:
        self.config = config
        self.root = Path(config.folder).expanduser().resolve()
        self.source_id = source_id or source_id_for_folder(self.root)
        self._committed: dict[str, str] = {}
        self._pending: dict[str, str] = {}

    def scan(self) -> Iterator[FileStat]:
        """Yield a FileStat for every regular file under the folder, in path order.

        Raises:
            SourceError: the folder itself cannot be listed.
        """
        if not self.root.is_dir():
            raise SourceError(f"source folder {self.root} does not exist or is not a folder")
        yield from self._walk(self.root, "")

    def _walk(self, folder: Path, prefix: str) -> Iterator[FileStat]:
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            if prefix:  # a sub-folder that vanished or is unreadable: skip it, keep the rest
                return
            raise
        for entry in entries:
            if not self.config.include_hidden and entry.name.startswith("."):
                continue
            relative = prefix + entry.name
            if self.config.exclude_predicate is not None and self.config.exclude_predicate(
                Path(relative)
            ):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:  # vanished between listing and stat; the next scan sees it gone
                continue
            if stat.S_ISDIR(info.st_mode):
                yield from self._walk(Path(entry.path), relative + "/")
            elif stat.S_ISREG(info.st_mode):
                yield FileStat(
                    path=relative,
                    size_bytes=info.st_size,
                    mtime_ns=info.st_mtime_ns,
                    ctime_ns=info.st_ctime_ns,
                    inode=info.st_ino,
                )

    def absolute(self, relative: str) -> Path:
        """Return the absolute path of a file given relative to the folder."""
        return self.root / relative

    def raw_file(self, item: FileStat) -> RawFile:
        """Describe a scanned file as a RawFile."""
        declared, _ = mimetypes.guess_type(item.path, strict=False)
        return RawFile(
            source_id=self.source_id,
            name=item.path,
            mime_type=declared,
            size_bytes=item.size_bytes,
            etag=item.signature,
            fetched_at=datetime.now(UTC),
            metadata={"mtime_ns": item.mtime_ns, "inode": item.inode},
        )

    async def list_changed(self, since: Mapping[str, str] | None) -> AsyncIterator[RawFile]:
        """Yield files whose etag differs from `since`; the listing becomes the pending cursor."""
        previous = since or {}
        pending: dict[str, str] = {}
        for item in self.scan():
            pending[item.path] = item.signature
            if previous.get(item.path) != item.signature:
                yield self.raw_file(item)
        self._pending = pending

    async def fetch(self, file: RawFile) -> Path:
        """Return the file's path on disk (a local folder needs no download)."""
        path = self.absolute(file.name)
        if not path.is_file():
            raise SourceError(f"{file.name} vanished from {self.root}", document_id=file.name)
        return path

    def current_cursor(self) -> dict[str, str]:
        """The last committed cursor: path -> etag."""
        return dict(self._committed)

    def pending_cursor(self) -> dict[str, str]:
        """The cursor seen by the last complete listing."""
        return dict(self._pending)

    def commit_delta(self, cursor: Mapping[str, str]) -> None:
        """Commit `cursor` so the next `list_changed(self.current_cursor())` starts from it."""
        self._committed = dict(cursor)
