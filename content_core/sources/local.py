"""LocalFolderSource: files under a folder on this machine."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict

from content_core.errors import SourceError
from content_core.paths import escape_path, escape_path_array, os_path_text
from content_core.sources.base import LISTING_SCHEMA, RawFile, SourceEntry
from content_core.sources.cursor import ContentSourceBase

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
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:8]
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in resolved.name) or "root"
    return f"{name}-{digest}"


# NUL-separated: NUL is the one byte no name holds (newlines may).
_FIND_FORMAT = "%P\\0%s\\0%T@\\0%C@\\0%i\\0"

_is_reg = stat.S_ISREG
_is_dir = stat.S_ISDIR


def _entry_name(entry: os.DirEntry[bytes]) -> bytes:
    return entry.name


def _nanoseconds(stamps: list[bytes]) -> pa.Array:
    """`seconds.fraction` strings (find's %T@) to exact integer nanoseconds."""
    parts = pc.split_pattern(pa.array(stamps, pa.binary()).cast(pa.string()), ".")
    seconds = pc.list_element(parts, 0).cast(pa.int64())
    fraction = pc.utf8_slice_codeunits(pc.utf8_rpad(pc.list_element(parts, 1), 9, "0"), 0, 9)
    return pc.add(pc.multiply(seconds, 1_000_000_000), fraction.cast(pa.int64()))


def _signature(mtime_ns: int, ctime_ns: int, inode: int) -> str:
    # ctime catches `cp -p` and other writes that restore an old mtime; the inode, a file
    # replaced by another (a rename over it).
    return f"{mtime_ns}:{ctime_ns}:{inode}"


def _signatures(mtime_ns: pa.Array, ctime_ns: pa.Array, inode: pa.Array) -> pa.Array:
    """`_signature` over Arrow columns (a listing of 100,000 files costs milliseconds)."""
    parts = [column.cast(pa.string()) for column in (mtime_ns, ctime_ns, inode)]
    return pc.binary_join_element_wise(*parts, ":")


class LocalFolderSource(ContentSourceBase):
    """Files under a folder on this machine; never follows symlinks and ignores special files.

    An entry's signature is its mtime, ctime and inode (with the size, what `cp -p`, an
    in-place rewrite or a rename over the file changes); it changed at its ctime.
    """

    def __init__(self, config: LocalFolderSourceConfig, *, source_id: str | None = None) -> None:
        super().__init__()
        self.config = config
        self.root = Path(config.folder).expanduser().resolve()
        self.source_id = source_id or source_id_for_folder(self.root)
        self._root_bytes = os.fsencode(self.root)

    @property
    def location(self) -> str:
        """The folder's absolute path, in text form."""
        return os_path_text(self.root)

    def list_entries(self) -> pa.Table:
        """Every regular file as one table of `LISTING_SCHEMA`, sorted by path.

        GNU find lists a folder of 100,000 files several times faster than Python's scandir
        (one C process, no object per file); the Python walk is the fallback (no GNU find, or
        an `exclude_predicate` to call).

        Raises:
            SourceError: the folder itself cannot be listed.
        """
        if not self.root.is_dir():
            raise SourceError(
                f"source folder {os_path_text(self.root)} does not exist or is not a folder"
            )
        listed = self._find() if self.config.exclude_predicate is None else None
        if listed is None:
            rows = list(self._walk(self._root_bytes, b""))
            columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[]] * 5
            raw = pa.array(columns[0], pa.binary())
            mtime, ctime, inode = (pa.array(c, pa.int64()) for c in columns[2:])
            listed = pa.table(
                [
                    escape_path_array(raw),
                    raw,
                    pa.array(columns[1], pa.int64()),
                    _signatures(mtime, ctime, inode),
                    ctime,
                ],
                schema=LISTING_SCHEMA,
            )
        return listed.sort_by("path")

    def _find(self) -> pa.Table | None:
        """List with GNU find; None when it is missing or fails (the caller walks instead)."""
        find = shutil.which("find")
        if find is None:
            return None
        prune = [] if self.config.include_hidden else ["-name", ".*", "-prune", "-o"]
        command = [find, ".", "-mindepth", "1", *prune, "-type", "f", "-printf", _FIND_FORMAT]
        try:
            completed = subprocess.run(
                command, cwd=self.root, capture_output=True, check=False, timeout=600
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        # Files vanishing mid-listing make find warn and exit 1; anything else is a failure.
        if completed.returncode not in (0, 1) or (completed.returncode and not completed.stdout):
            return None
        fields = completed.stdout.split(b"\0")[:-1]
        if len(fields) % 5:
            return None
        raw = pa.array(fields[0::5], pa.binary())
        try:
            ctime = _nanoseconds(fields[3::5])
            return pa.table(
                [
                    escape_path_array(raw),
                    raw,
                    pa.array(fields[1::5], pa.binary()).cast(pa.string()).cast(pa.int64()),
                    _signatures(
                        _nanoseconds(fields[2::5]),
                        ctime,
                        pa.array(fields[4::5], pa.binary()).cast(pa.string()).cast(pa.int64()),
                    ),
                    ctime,
                ],
                schema=LISTING_SCHEMA,
            )
        except pa.ArrowInvalid:
            return None  # not GNU find's format: walk instead

    def _walk(self, folder: bytes, prefix: bytes) -> Iterator[tuple[bytes, int, int, int, int]]:
        """`(path_bytes, size, mtime_ns, ctime_ns, inode)` of every regular file, one `lstat`
        per entry and no object per file."""
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=_entry_name)
        except OSError:
            if prefix:  # a sub-folder that vanished or is unreadable: skip it, keep the rest
                return
            raise
        hidden = self.config.include_hidden
        exclude = self.config.exclude_predicate
        for entry in entries:
            name = entry.name
            if not hidden and name[:1] == b".":
                continue
            relative = prefix + name
            if exclude is not None and exclude(Path(os.fsdecode(relative))):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:  # vanished between listing and stat; the next scan sees it gone
                continue
            mode = info.st_mode
            if _is_reg(mode):
                yield relative, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino
            elif _is_dir(mode):
                yield from self._walk(entry.path, relative + b"/")

    def _absolute(self, path_bytes: bytes) -> bytes:
        return self._root_bytes + b"/" + path_bytes

    def stat_entry(self, path_bytes: bytes) -> SourceEntry | None:
        """The file's current state; None when it is gone or no longer a regular file.

        Raises:
            SourceError: the file's status cannot be read (permissions).
        """
        try:
            info = os.stat(self._absolute(path_bytes), follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise SourceError(
                f"cannot stat {escape_path(path_bytes)} in {self.location}: {exc.strerror}",
                document_id=escape_path(path_bytes),
            ) from exc
        if not _is_reg(info.st_mode):
            return None  # replaced by a folder or a link: the next listing sees what it is now
        return SourceEntry(
            escape_path(path_bytes),
            path_bytes,
            info.st_size,
            _signature(info.st_mtime_ns, info.st_ctime_ns, info.st_ino),
            info.st_ctime_ns,
        )

    def open_entry(self, entry: SourceEntry) -> BinaryIO:
        """The file opened for reading, by the exact bytes of its path.

        Raises:
            SourceError: the file vanished or cannot be opened.
        """
        try:
            return open(self._absolute(entry.path_bytes), "rb")  # noqa: SIM115 (caller closes)
        except OSError as exc:
            raise SourceError(
                f"cannot read {entry.path} in {self.location}: {exc.strerror}",
                document_id=entry.path,
            ) from exc

    async def fetch(self, file: RawFile) -> Path:
        """Return the file's own path on disk: a local folder needs no download.

        Raises:
            SourceError: the file is gone.
        """
        entry = self._entry_of(file)
        return self.root / os.fsdecode(entry.path_bytes)
