"""Content-addressed blob storage: bytes written once under their SHA-256, in a folder or, for
an object-store root, as objects with a local read-through copy (the same bytes forever under
one name, so a cached copy never goes stale)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from content_core.store.storage import Storage

__all__ = ["BlobStore", "blob_key", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """Return the hex SHA-256 of `data` (the blob id)."""
    return hashlib.sha256(data).hexdigest()


def blob_key(blob_id: str) -> str:
    """The blob's key under the store root: `blobs/ab/cd/<sha256>`."""
    return f"blobs/{blob_id[:2]}/{blob_id[2:4]}/{blob_id}"


class BlobStore:
    """Blobs under `<root>/ab/cd/<sha256>`; a put of existing bytes is free and idempotent.

    With `remote` (an object store's `Storage`), the blobs are objects `blobs/ab/cd/<sha256>`
    there and `root` is this machine's copy: a put PUTs the object before keeping the copy,
    and `path` downloads a blob another machine stored on first use.
    """

    def __init__(self, root: Path, remote: Storage | None = None) -> None:
        self.root = Path(root)
        self.remote = remote

    def _local(self, blob_id: str) -> Path:
        return self.root / blob_id[:2] / blob_id[2:4] / blob_id

    def path(self, blob_id: str) -> Path:
        """Return a local file holding the blob `blob_id` (where it would be when it is not
        stored: the path does not exist then)."""
        local = self._local(blob_id)
        if self.remote is not None and not local.is_file():
            try:
                data = self.remote.read(blob_key(blob_id))
            except FileNotFoundError:
                return local
            self._keep(local, data)
        return local

    def has(self, blob_id: str) -> bool:
        """True when the blob is stored."""
        if self._local(blob_id).is_file():
            return True
        return self.remote is not None and self.remote.exists(blob_key(blob_id))

    @staticmethod
    def _keep(target: Path, data: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def put(self, data: bytes, *, blob_id: str | None = None) -> str:
        """Store `data` and return its blob id; concurrent writers of the same bytes are safe.

        `blob_id` is the SHA-256 of `data` when the caller has just computed it (discovery,
        a raw file's row): the bytes are then not hashed a second time.
        """
        blob_id = blob_id or sha256_hex(data)
        target = self._local(blob_id)
        if target.is_file():
            return blob_id
        # The object first, the local copy after: a local copy always means a stored object.
        if self.remote is not None:
            self.remote.write(blob_key(blob_id), data)
        # Write aside then rename: a reader never sees a partial blob, and two writers of the
        # same bytes both succeed (rename over an identical file is harmless).
        self._keep(target, data)
        return blob_id

    def put_file(self, source: Path, *, chunk_bytes: int = 1 << 20) -> tuple[str, int]:
        """Stream `source` into the store; return its blob id and size, reading it once."""
        with open(source, "rb") as reader:
            return self.put_stream(reader, chunk_bytes=chunk_bytes)

    def put_stream(self, reader: BinaryIO, *, chunk_bytes: int = 1 << 20) -> tuple[str, int]:
        """Store the bytes `reader` yields up to its end; return their blob id and size."""
        self.root.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as writer:
                while block := reader.read(chunk_bytes):
                    digest.update(block)
                    writer.write(block)
                    size += len(block)
            blob_id = digest.hexdigest()
            target = self._local(blob_id)
            if target.is_file():
                Path(tmp).unlink()
            else:
                if self.remote is not None:
                    self.remote.write(blob_key(blob_id), Path(tmp).read_bytes())
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return blob_id, size

    def get(self, blob_id: str) -> bytes:
        """Return the bytes of blob `blob_id`."""
        return self.path(blob_id).read_bytes()
