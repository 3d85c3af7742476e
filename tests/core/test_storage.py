"""The store on a real S3 server (SeaweedFS, `s3` fixture): the same tables as a folder store,
read through the catalog's httpfs views; a batch file is invisible until its upload completes;
compaction keeps every result; no key in the catalog; the S3 source's listing."""

from __future__ import annotations

import io
import shutil
from dataclasses import replace
from pathlib import Path

import duckdb
import obstore
import pyarrow.parquet as pq
import pytest

from content_core.discovery import discover_pending
from content_core.errors import SourceError
from content_core.pipeline import PipelineConfig, run_batch
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig, S3ObjectSource
from content_core.store import BATCHES, PIPELINE_TABLES, RAW_FILES, ContentStore, compact_store
from content_core.store.rows import RawFileRow
from content_core.store.storage import ObjectStorage, S3Settings
from content_core.store.tables import rows_to_table
from tests.fixtures.corpus import CORPUS
from tests.support.cli import run_cli
from tests.support.s3_server import S3Endpoint, S3Prefix

_FILES = (
    "txt/fake-text.txt",
    "docx/handbook-1p.docx",
    "html/test_blog.html",
    "pdf/SPARSE-2024-INV-1234_borderless_table.pdf",
)
# Stamped with the wall clock when a batch is discovered or read: never equal across two runs.
_CLOCK_COLUMNS = {"discovered_at", "fetched_at"}
# Batch ids hold the store's location (two stores sharing a Dagster instance never collide).
_PER_STORE = _CLOCK_COLUMNS | {"batch_id"}


def _ingest(store: ContentStore, folder: Path) -> list[str]:
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="corpus")
    found = discover_pending(source, store, set(), settle_s=0.0)
    batches = store.list_batches("corpus")
    assert batches and set(found.new_batch_ids) <= set(batches)
    for batch_id in batches:
        run_batch(store, batch_id, PipelineConfig())
    return batches


def _rows(store: ContentStore, table: str) -> list[str]:
    data = store.query(f"SELECT * FROM {table}")
    keep = [name for name in data.column_names if name not in _PER_STORE]
    return sorted(repr(row) for row in data.select(keep).to_pylist())


def _s3_store(endpoint: S3Endpoint, tmp_path: Path, name: str = "store") -> ContentStore:
    return ContentStore(f"s3://{endpoint.bucket}/{tmp_path.name}/{name}")


@pytest.mark.timeout(900)
def test_a_store_on_s3_holds_the_tables_of_a_folder_store(
    s3: S3Endpoint, tmp_path: Path
) -> None:
    folder = tmp_path / "inbox"
    for name in _FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS / name, folder / name)
    local = ContentStore(tmp_path / "local")
    remote = _s3_store(s3, tmp_path)
    assert len(_ingest(local, folder)) == len(_ingest(remote, folder))

    for table in (BATCHES, *PIPELINE_TABLES):
        assert _rows(remote, table) == _rows(local, table), table
    assert len(_rows(remote, "current_chunks")) > len(_FILES)
    # Everything shared lives under the prefix: tables, manifests, blobs, finished marks.
    keys = S3Prefix(s3, f"{tmp_path.name}/store").keys()
    assert {key.split("/")[0] for key in keys} == {"batches", "blobs", "state", "tables"}
    shas = remote.query("SELECT DISTINCT sha256 FROM raw_files").column("sha256").to_pylist()
    for sha in shas:
        assert f"blobs/{sha[:2]}/{sha[2:4]}/{sha}" in keys
    # A second machine (another work folder) reads the same store and fetches blobs on use.
    other = ContentStore(remote.location, work_dir=tmp_path / "other-machine")
    assert _rows(other, RAW_FILES) == _rows(remote, RAW_FILES)
    assert other.blobs.get(shas[0]) == remote.blobs.get(shas[0])


def _count(store: ContentStore, batch_id: str) -> int:
    result = store.query("SELECT count(*) AS n FROM raw_files WHERE batch_id = ?", [batch_id])
    return int(result.column("n")[0].as_py())


def test_a_batch_file_is_invisible_until_its_upload_completes(
    s3: S3Endpoint, tmp_path: Path
) -> None:
    store = _s3_store(s3, tmp_path)
    store.ensure_layout()
    assert isinstance(store.storage, ObjectStorage)
    sink = io.BytesIO()
    pq.write_table(rows_to_table(RAW_FILES, _rows_of("b1")), sink)
    data = sink.getvalue()
    # A multipart upload: parts are sent, the object exists only once it is completed.
    writer = obstore.open_writer(store.storage.store, store.table_key(RAW_FILES, "b1"),
                                 buffer_size=5 * 1024 * 1024)
    writer.write(data[: len(data) // 2])
    writer.flush()
    assert _count(store, "b1") == 0
    writer.write(data[len(data) // 2:])
    writer.close()
    assert _count(store, "b1") == 1
    # A replacement is one PUT: readers see the old rows or the new, never both or neither.
    store.write_rows(RAW_FILES, "b1", [])
    assert _count(store, "b1") == 0


def test_compaction_on_s3_changes_no_result_and_a_rerun_still_wins(
    s3: S3Endpoint, tmp_path: Path
) -> None:
    store = _s3_store(s3, tmp_path)
    for batch in ("b1", "b2", "b3"):
        store.write_rows(RAW_FILES, batch, _rows_of(batch))
    before = _rows(store, RAW_FILES)
    reports = {report.table: report for report in compact_store(store)}
    assert reports[RAW_FILES].files_before == 3 and reports[RAW_FILES].files_after == 1
    assert _rows(store, RAW_FILES) == before
    keys = [item.key for item in store.storage.list(f"tables/{RAW_FILES}/")]
    assert not [key for key in keys if "batch=b" in key]  # the folded files are gone
    # A rerun after compaction writes a per-batch file again, which wins over the folded copy.
    (row,) = _rows_of("b2")
    rerun = [replace(row, path="b2-again.txt", path_bytes=b"b2-again.txt")]
    store.write_rows(RAW_FILES, "b2", rerun)
    paths = "SELECT path FROM raw_files WHERE batch_id = ?"
    assert store.query(paths, ["b2"]).column("path").to_pylist() == ["b2-again.txt"]
    compact_store(store)
    assert store.query(paths, ["b2"]).column("path").to_pylist() == ["b2-again.txt"]
    assert _count(store, "b1") == 1 and _count(store, "b3") == 1


def _rows_of(batch_id: str) -> list[RawFileRow]:
    return [
        RawFileRow(
            source_id="s", path=f"{batch_id}.txt", path_bytes=f"{batch_id}.txt".encode(),
            batch_id=batch_id, batch_seq=1, change="added", size_bytes=1, sha256="0" * 64,
            declared_type=None, media_type=None, fetched_at=None,
        )
    ]


def test_the_catalog_holds_no_key(s3: S3Endpoint, tmp_path: Path) -> None:
    store = _s3_store(s3, tmp_path)
    store.write_rows(RAW_FILES, "b1", _rows_of("b1"))
    catalog = store.catalog_path
    assert catalog.is_file() and not catalog.is_relative_to(Path.cwd())
    connection = duckdb.connect(str(catalog), read_only=True)
    try:
        views = connection.execute("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall()
        secrets = connection.execute("SELECT count(*) FROM duckdb_secrets()").fetchone()
    finally:
        connection.close()
    text = "\n".join(sql for (sql,) in views)
    assert f"s3://{s3.bucket}/{tmp_path.name}/store/tables/raw_files/" in text
    for secret in (s3.secret_key, s3.access_key):
        assert secret not in text
        assert secret.encode() not in catalog.read_bytes()
    assert secrets == (0,)
    # The views read through httpfs with the secret made from the environment on connect,
    # in this process and in `content-pipeline query` (the catalog file, then a secret).
    assert _count(store, "b1") == 1
    done = run_cli(
        "query", "SELECT path FROM raw_files", "--format", "csv",
        home=tmp_path / "home", store=None, CONTENT_STORE_DIR=store.location,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["path", "b1.txt"]


def test_settings_come_from_the_environment() -> None:
    aws = S3Settings.from_environ({"AWS_REGION": "eu-west-3"})
    assert (aws.endpoint, aws.region, aws.url_style) == (None, "eu-west-3", "vhost")
    own = S3Settings.from_environ(
        {"AWS_ENDPOINT_URL": "https://s3.example:9000", "AWS_ACCESS_KEY_ID": "k",
         "AWS_SECRET_ACCESS_KEY": "it's"}
    )
    assert own.url_style == "path"
    sql = own.secret_sql("x")
    assert "TEMPORARY" in sql and "ENDPOINT 's3.example:9000'" in sql and "USE_SSL true" in sql
    assert "SECRET 'it''s'" in sql  # quoted, never spliced raw
    with pytest.raises(ValueError, match="CONTENT_S3_URL_STYLE"):
        S3Settings.from_environ({"CONTENT_S3_URL_STYLE": "virtual"})


def test_the_s3_source_lists_size_etag_and_last_modified(s3: S3Endpoint, tmp_path: Path) -> None:
    prefix = S3Prefix(s3, f"{tmp_path.name}/src")
    prefix.put("a.txt", b"alpha")
    prefix.put("sub/b.txt", b"bravo!")
    prefix.put(".hidden/c.txt", b"c")
    source = S3ObjectSource(prefix.uri)
    listing = source.list_entries()
    assert listing.column("path").to_pylist() == ["a.txt", "sub/b.txt"]
    assert listing.column("size_bytes").to_pylist() == [5, 6]
    first = dict(zip(listing.column("path").to_pylist(),
                     listing.column("signature").to_pylist(), strict=True))
    prefix.put("a.txt", b"ALPHA")  # same size, within the same second: the ETag tells
    entry = source.stat_entry(b"a.txt")
    assert entry is not None and entry.signature != first["a.txt"]
    with source.open_entry(entry) as handle:
        assert handle.read() == b"ALPHA"
    assert source.stat_entry(b"gone.txt") is None
    # The version listed is the version read: a rewrite since makes the read fail, not mix.
    prefix.put("a.txt", b"alpha, rewritten")
    with pytest.raises(SourceError, match="a.txt"):
        source.open_entry(entry)
