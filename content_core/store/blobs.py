"""Content-addressed blob storage: bytes written once under their SHA-256."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = ["BlobStore", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """Return the hex SHA-256 of `data` (the blob id)."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Blobs under `<root>/ab/cd/<sha256>`; a put of existing bytes is free and idempotent."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, blob_id: str) -> Path:
        """Return where the blob `blob_id` lives (whether or not it exists yet)."""
        return self.root / blob_id[:2] / blob_id[2:4] / blob_id

    def has(self, blob_id: str) -> bool:
        """True when the blob is stored."""
        return self.path(blob_id).is_file()

    def put(self, data: bytes, *, blob_id: str | None = None) -> str:
        """Store `data` and return its blob id; concurrent writers of the same bytes are safe.

        `blob_id` is the SHA-256 of `data` when the caller has just computed it (discovery,
        a raw file's row): the bytes are then not hashed a second time.
        """
        blob_id = blob_id or sha256_hex(data)
        target = self.path(blob_id)
        if target.is_file():
            return blob_id
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write aside then rename: a reader never sees a partial blob, and two writers of the
        # same bytes both succeed (rename over an identical file is harmless).
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
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
            target = self.path(blob_id)
            if target.is_file():
                Path(tmp).unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return blob_id, size

    def get(self, blob_id: str) -> bytes:
        """Return the bytes of blob `blob_id`."""
        return self.path(blob_id).read_bytes()
