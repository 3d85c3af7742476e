"""Where the store's files live: a folder on this machine or an object-store prefix
(`s3://bucket/prefix`), behind one small interface the store, blobs and compaction use.

Both keep the same layout (DESIGN.md section 4) and the same rule: a reader sees a file whole
or not at all. A folder gets it by writing aside and renaming; an object store by the PUT
itself (one PUT, or one completed multipart upload, replaces an object atomically, and an
unfinished upload is never listed). Nothing else is needed for the tables: every batch of a
table is one file, so a batch is visible whole or not at all on both; see
`content_core.store.compaction` for why folding files stays safe with plain PUTs and deletes.

The object store is reached through obstore (chosen by bench/bench_objstore.py: fastest
listing and PUT/GET of obstore, s3fs and pyarrow.fs on SeaweedFS), imported only when an
`s3://` store is opened (the `s3` extra).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

import duckdb

from content_core.errors import MissingDependencyError
from content_core.store.extensions import load_extension

if TYPE_CHECKING:
    from obstore.store import ClientConfig, S3Config, S3Store

__all__ = [
    "LocalStorage",
    "ObjectStorage",
    "S3Settings",
    "Storage",
    "StoredObject",
    "default_work_dir",
    "is_object_uri",
    "open_storage",
    "s3_store",
    "split_uri",
]

_EXTRA = "s3"


def is_object_uri(location: str | Path) -> bool:
    """True when `location` names an object-store prefix (`s3://...`) rather than a folder."""
    return isinstance(location, str) and location.startswith("s3://")


@dataclass(frozen=True, slots=True)
class StoredObject:
    """One file of the store as a listing gives it."""

    key: str  # relative to the store root, '/'-separated
    size_bytes: int
    # Changes whenever the file is replaced: an ETag, or a folder's mtime and inode.
    version: str


class Storage(Protocol):
    """The files of one store, by key (a '/'-separated path relative to the store root)."""

    @property
    def location(self) -> str:
        """The root as text: an absolute folder or `s3://bucket/prefix`."""
        ...

    def url(self, key: str) -> str:
        """What DuckDB's `read_parquet` reads for `key` (globs allowed)."""
        ...

    def exists(self, key: str) -> bool:
        """True when the file is there."""
        ...

    def read(self, key: str) -> bytes:
        """The file's bytes. Raises FileNotFoundError when it is not there."""
        ...

    def write(self, key: str, data: bytes) -> None:
        """Replace the file with `data`, atomically for readers."""
        ...

    def upload(self, key: str, local: Path) -> None:
        """Move the finished local file `local` into place as `key`, atomically for readers
        (the local file is consumed)."""
        ...

    def list(self, prefix: str) -> list[StoredObject]:
        """Every file under `prefix` (a folder key ending in '/'), skipping dot-named ones."""
        ...

    def delete(self, key: str) -> None:
        """Remove the file; nothing when it is gone already."""
        ...

    def prepare(self, connection: duckdb.DuckDBPyConnection) -> None:
        """Make `connection` able to read `url(...)` (httpfs and a secret, for an object store)."""
        ...


class LocalStorage:
    """A folder on this machine; writes go aside and are renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()

    @property
    def location(self) -> str:
        """The folder's absolute path."""
        return str(self.root)

    def url(self, key: str) -> str:
        """The absolute path of `key` (DuckDB resolves relative ones against its own cwd)."""
        return str(self.root / key)

    def exists(self, key: str) -> bool:
        """True when the file is there."""
        return (self.root / key).is_file()

    def read(self, key: str) -> bytes:
        """The file's bytes."""
        return (self.root / key).read_bytes()

    def write(self, key: str, data: bytes) -> None:
        """Write aside (a dot-named `.tmp` no glob matches), fsync, rename into place."""
        target = self.root / key
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def upload(self, key: str, local: Path) -> None:
        """Rename `local` into place (same file system: a rename; else a copy aside first)."""
        target = self.root / key
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(local, target)
        except OSError:
            self.write(key, local.read_bytes())
            local.unlink()

    def list(self, prefix: str) -> list[StoredObject]:
        """Every regular file under `prefix`, sorted by key."""
        base = self.root / prefix
        found = []
        for path in base.rglob("*") if base.is_dir() else ():
            relative = path.relative_to(self.root)
            if any(part.startswith(".") for part in relative.parts):
                continue
            try:
                info = path.stat()
            except FileNotFoundError:
                continue
            if path.is_file():
                found.append(
                    StoredObject(
                        relative.as_posix(), info.st_size, f"{info.st_mtime_ns}:{info.st_ino}"
                    )
                )
        return sorted(found, key=lambda item: item.key)

    def delete(self, key: str) -> None:
        """Unlink the file, and its folder when that is left empty (a `batch=<id>` folder)."""
        path = self.root / key
        path.unlink(missing_ok=True)
        try:
            path.parent.rmdir()
        except OSError:
            return  # not empty (or gone): folders are kept while they hold anything

    def prepare(self, connection: duckdb.DuckDBPyConnection) -> None:
        """Nothing: DuckDB reads local files as they are."""
        return None


@dataclass(frozen=True, slots=True)
class S3Settings:
    """How to reach an S3-compatible service, from the standard AWS_* variables.

    `url_style` is `path` (bucket in the path: SeaweedFS, MinIO, most self-hosted servers) or
    `vhost` (bucket in the host name: AWS); CONTENT_S3_URL_STYLE sets it, and it defaults to
    `path` when AWS_ENDPOINT_URL names a server of your own, `vhost` otherwise.
    """

    endpoint: str | None
    region: str
    access_key_id: str | None
    secret_access_key: str | None
    session_token: str | None
    url_style: str

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> S3Settings:
        """Read AWS_ENDPOINT_URL, AWS_REGION (or AWS_DEFAULT_REGION), AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and CONTENT_S3_URL_STYLE."""
        env = os.environ if environ is None else environ
        endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
        style = env.get("CONTENT_S3_URL_STYLE") or ("path" if endpoint else "vhost")
        if style not in ("path", "vhost"):
            raise ValueError(f"CONTENT_S3_URL_STYLE must be path or vhost, not {style!r}")
        return cls(
            endpoint=endpoint,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            access_key_id=env.get("AWS_ACCESS_KEY_ID") or None,
            secret_access_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
            session_token=env.get("AWS_SESSION_TOKEN") or None,
            url_style=style,
        )

    def secret_sql(self, name: str) -> str:
        """A `CREATE TEMPORARY SECRET` for DuckDB's httpfs, with the values as parameters.

        Temporary: it lives in the connection's memory only, so the catalog file never holds
        a key (the views name `s3://` URLs and nothing else).
        """
        options: dict[str, str] = {"REGION": self.region, "URL_STYLE": self.url_style}
        if self.access_key_id and self.secret_access_key:
            options["KEY_ID"] = self.access_key_id
            options["SECRET"] = self.secret_access_key
        if self.session_token:
            options["SESSION_TOKEN"] = self.session_token
        if self.endpoint:
            parts = urlsplit(self.endpoint)
            options["ENDPOINT"] = parts.netloc + parts.path.rstrip("/")
            options["USE_SSL"] = "true" if parts.scheme == "https" else "false"
        # DuckDB takes no bound parameters in CREATE SECRET: values are quoted literals.
        body = ", ".join(f"{key} {_literal(value)}" for key, value in options.items())
        return f"CREATE OR REPLACE TEMPORARY SECRET {name} (TYPE s3, {body})"


def _literal(value: str) -> str:
    if value in ("true", "false"):
        return value
    return "'" + value.replace("'", "''") + "'"


def s3_store(bucket: str, prefix: str, settings: S3Settings | None = None) -> S3Store:
    """An obstore `S3Store` of `bucket` under `prefix`, configured from `settings`.

    Raises:
        MissingDependencyError: obstore is not installed (the `s3` extra).
    """
    try:
        from obstore.store import S3Store
    except ImportError as exc:
        raise MissingDependencyError("s3:// locations need obstore", extra=_EXTRA) from exc
    settings = settings or S3Settings.from_environ()
    config: S3Config = {
        "region": settings.region,
        "virtual_hosted_style_request": settings.url_style == "vhost",
    }
    if settings.endpoint:
        config["endpoint"] = settings.endpoint
    if settings.access_key_id and settings.secret_access_key:
        config["access_key_id"] = settings.access_key_id
        config["secret_access_key"] = settings.secret_access_key
    if settings.session_token:
        config["session_token"] = settings.session_token
    client: ClientConfig = {"allow_http": bool(settings.endpoint and settings.endpoint.startswith("http://"))}
    return S3Store(bucket, prefix=prefix or None, config=config, client_options=client)


def split_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix/` -> (`bucket`, `some/prefix`)."""
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"not an s3://bucket/prefix URI: {uri!r}")
    return parts.netloc, parts.path.strip("/")


class ObjectStorage:
    """An S3 bucket prefix: one PUT per file, listings by prefix, DuckDB through httpfs."""

    def __init__(self, uri: str, settings: S3Settings | None = None) -> None:
        self.bucket, self.prefix = split_uri(uri)
        self.settings = settings or S3Settings.from_environ()
        self.store = s3_store(self.bucket, self.prefix, self.settings)

    @property
    def location(self) -> str:
        """`s3://bucket/prefix`."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def url(self, key: str) -> str:
        """The object's `s3://` URL."""
        return f"{self.location}/{key}"

    def exists(self, key: str) -> bool:
        """True when a HEAD finds the object."""
        import obstore

        try:
            obstore.head(self.store, key)
        except FileNotFoundError:
            return False
        return True

    def read(self, key: str) -> bytes:
        """The object's bytes (FileNotFoundError when there is none)."""
        import obstore

        return bytes(obstore.get(self.store, key).bytes())

    def write(self, key: str, data: bytes) -> None:
        """One PUT (a multipart upload for large data, visible only once completed)."""
        import obstore

        obstore.put(self.store, key, data)

    def upload(self, key: str, local: Path) -> None:
        """PUT the local file's bytes under `key`, then remove the local file."""
        import obstore

        obstore.put(self.store, key, local)
        local.unlink()

    def list(self, prefix: str) -> list[StoredObject]:
        """Every object under `prefix`, sorted by key, with its ETag as version."""
        import obstore

        found = []
        for chunk in obstore.list(self.store, prefix, chunk_size=1000):
            for item in chunk:
                key = item["path"]
                if any(part.startswith(".") for part in key.split("/")):
                    continue
                found.append(StoredObject(key, int(item["size"]), str(item["e_tag"] or "")))
        return sorted(found, key=lambda item: item.key)

    def delete(self, key: str) -> None:
        """DELETE the object (S3 answers success for a missing key)."""
        import obstore

        obstore.delete(self.store, key)

    def prepare(self, connection: duckdb.DuckDBPyConnection) -> None:
        """Load httpfs from its package and create a temporary secret from the environment.

        Raises:
            MissingDependencyError: duckdb-extension-httpfs is not installed.
        """
        load_extension(connection, "httpfs")
        connection.execute(self.settings.secret_sql("content_store_s3"))


def default_work_dir(uri: str) -> Path:
    """This machine's folder for an object-store root: CONTENT_STORE_WORK_DIR, else under
    `~/.cache/content-pipeline/`, one per URI."""
    given = os.environ.get("CONTENT_STORE_WORK_DIR")
    if given:
        return Path(given).expanduser().resolve()
    digest = hashlib.sha256(uri.encode()).hexdigest()[:12]
    return Path("~/.cache/content-pipeline").expanduser().resolve() / f"store-{digest}"


def open_storage(location: str | Path) -> Storage:
    """The storage of a store root: `s3://bucket/prefix` or a folder."""
    if is_object_uri(location):
        return ObjectStorage(str(location))
    return LocalStorage(Path(location))

