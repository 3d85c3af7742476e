"""S3ObjectSource: the objects under an S3 bucket prefix (`s3://bucket/prefix`), listed with
size, ETag and last-modified, read by exactly the version listed (If-Match).

An object's signature is its ETag and last-modified time: any rewrite changes the ETag (the
MD5 of the bytes for a plain PUT), so a same-size rewrite is found; a rename is a copy under a
new key plus a delete, which discovery pairs by content hash like a renamed file. Objects are
never visible half-written, so no settle time is needed for them, but it applies as for files.
Credentials and endpoint come from the AWS_* variables (`content_core.store.S3Settings`).
"""

from __future__ import annotations

import hashlib
import io
from datetime import datetime
from typing import TYPE_CHECKING, Any, BinaryIO

import pyarrow as pa

from content_core.errors import SourceError
from content_core.paths import escape_path, escape_path_array
from content_core.sources.base import LISTING_SCHEMA, SourceEntry
from content_core.sources.cursor import ContentSourceBase
from content_core.store.storage import S3Settings, s3_store, split_uri

if TYPE_CHECKING:
    from obstore import GetOptions
    from obstore.store import S3Store

__all__ = ["S3ObjectSource", "source_id_for_uri"]

# Objects per LIST page: S3's maximum, so 100,000 objects take 100 requests.
_PAGE = 1000


def source_id_for_uri(uri: str) -> str:
    """A stable, readable source id for `s3://bucket/prefix`."""
    bucket, prefix = split_uri(uri)
    digest = hashlib.sha256(f"s3://{bucket}/{prefix}".encode()).hexdigest()[:8]
    name = (prefix.rpartition("/")[2] or bucket)
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in name) or "root"
    return f"{name}-{digest}"


def _nanoseconds(stamp: datetime) -> int:
    return int(stamp.timestamp()) * 1_000_000_000 + stamp.microsecond * 1000


def _signature(e_tag: str | None, modified_ns: int) -> str:
    return f"{e_tag or ''}@{modified_ns}"


class S3ObjectSource(ContentSourceBase):
    """The objects under an S3 prefix; keys with a dot-named part, and folder markers (keys
    ending in '/'), are skipped unless `include_hidden`."""

    def __init__(
        self,
        uri: str,
        *,
        source_id: str | None = None,
        include_hidden: bool = False,
        settings: S3Settings | None = None,
        store: S3Store | None = None,
    ) -> None:
        super().__init__()
        self.bucket, self.prefix = split_uri(uri)
        self.source_id = source_id or source_id_for_uri(uri)
        self.include_hidden = include_hidden
        self.store = store or s3_store(self.bucket, self.prefix, settings)

    @property
    def location(self) -> str:
        """`s3://bucket/prefix`."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def _skip(self, key: str) -> bool:
        if key.endswith("/") or not key:
            return True
        return not self.include_hidden and any(p.startswith(".") for p in key.split("/"))

    def list_entries(self) -> pa.Table:
        """Every object as a table of `LISTING_SCHEMA`, sorted by path (1,000 keys a request).

        Raises:
            SourceError: the prefix cannot be listed (no such bucket, refused, unreachable).
        """
        import obstore
        from obstore.exceptions import BaseError

        keys: list[bytes] = []
        sizes: list[int] = []
        signatures: list[str] = []
        changed: list[int] = []
        try:
            for page in obstore.list(self.store, None, chunk_size=_PAGE):
                for item in page:
                    key = item["path"]
                    if self._skip(key):
                        continue
                    modified = _nanoseconds(item["last_modified"])
                    keys.append(key.encode())
                    sizes.append(int(item["size"]))
                    signatures.append(_signature(item["e_tag"], modified))
                    changed.append(modified)
        except (OSError, BaseError) as exc:
            raise SourceError(f"cannot list {self.location}: {exc}") from exc
        raw = pa.array(keys, pa.binary())
        listed = pa.table(
            [
                escape_path_array(raw),
                raw,
                pa.array(sizes, pa.int64()),
                pa.array(signatures, pa.string()),
                pa.array(changed, pa.int64()),
            ],
            schema=LISTING_SCHEMA,
        )
        return listed.sort_by("path")

    def _entry(self, path_bytes: bytes, meta: Any) -> SourceEntry:
        # Any: obstore's ObjectMeta is a TypedDict of its own stubs.
        modified = _nanoseconds(meta["last_modified"])
        return SourceEntry(
            escape_path(path_bytes),
            path_bytes,
            int(meta["size"]),
            _signature(meta["e_tag"], modified),
            modified,
        )

    def stat_entry(self, path_bytes: bytes) -> SourceEntry | None:
        """The object's current state (a HEAD); None when it is gone.

        Raises:
            SourceError: the object's state cannot be read.
        """
        import obstore
        from obstore.exceptions import BaseError

        try:
            meta = obstore.head(self.store, path_bytes.decode())
        except FileNotFoundError:
            return None
        except (OSError, BaseError, UnicodeDecodeError) as exc:
            raise SourceError(
                f"cannot stat {escape_path(path_bytes)} in {self.location}: {exc}",
                document_id=escape_path(path_bytes),
            ) from exc
        return self._entry(path_bytes, meta)

    def open_entry(self, entry: SourceEntry) -> BinaryIO:
        """The bytes of exactly the version listed: a GET with If-Match on its ETag.

        Raises:
            SourceError: the object vanished or was replaced since it was listed.
        """
        import obstore
        from obstore.exceptions import BaseError

        e_tag = entry.signature.rpartition("@")[0]
        try:
            options: GetOptions | None = {"if_match": e_tag} if e_tag else None
            result = obstore.get(self.store, entry.path_bytes.decode(), options=options)
            return io.BytesIO(bytes(result.bytes()))
        except (OSError, BaseError, UnicodeDecodeError) as exc:
            raise SourceError(
                f"cannot read {entry.path} in {self.location}: {exc}", document_id=entry.path
            ) from exc
