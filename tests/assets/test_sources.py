"""Sources that are not a folder, bound through the source resource: one in memory (shaped like
an object store) and a real S3 prefix on SeaweedFS (with the store on S3 too). The real sensor
discovers each and the real batch job ingests it, so discovery and the pipeline depend on the
EntrySource protocol alone. The real `content-pipeline ingest s3://bucket/prefix` ingests a
prefix too."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import dagster as dg
import pytest

from content_assets.definitions import build_definitions
from content_assets.resources import SourceResource
from content_core.store import ContentStore
from tests.conftest import SAMPLE_INBOX
from tests.support.cli import run_cli
from tests.support.memory_source import MemorySource, MemorySourceResource, registered
from tests.support.s3_server import S3Endpoint, S3Prefix
from tests.support.sensors import tick_sensor


class _Writable(Protocol):
    def put(self, name: str, data: bytes) -> None: ...
    def delete(self, name: str) -> None: ...
    def rename(self, old: str, new: str) -> None: ...


def _run(defs: dg.Definitions, instance: dg.DagsterInstance, batch_id: str) -> tuple[int, int]:
    """Run the batch job in process; how many raw files normalisation processed and reused."""
    job = defs.resolve_job_def("ingest_batch_job")
    result = job.execute_in_process(instance=instance, partition_key=batch_id)
    assert result.success
    (materialization,) = result.asset_materializations_for_node("normalised_artifacts")
    figures = {k: v.value for k, v in materialization.metadata.items()}
    processed, reused = figures["processed"], figures["reused"]
    assert isinstance(processed, int) and isinstance(reused, int)
    return processed, reused


def _batch(tick: dg.SensorResult) -> str:
    """The one batch a sensor tick requested a run of."""
    (request,) = tick.run_requests or []
    assert request.partition_key is not None and request.run_key == request.partition_key
    return request.partition_key


def _current(store: ContentStore) -> dict[str, dict[str, object]]:
    rows = store.query("SELECT path, batch_id, sha256 FROM current_raw_files").to_pylist()
    return {row["path"]: row for row in rows}


def _text(store: ContentStore, path: str) -> list[str]:
    rows = store.query(
        "SELECT text FROM current_normalised_artifacts WHERE path = ? AND len(derived_from) = 0",
        [path],
    ).to_pylist()
    return [row["text"] for row in rows]


@contextmanager
def _source(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[_Writable, Any, str, str, list[bytes] | None]]:
    """The writable source, its resource, the store root, the source root, and the entries
    read (recorded by the in-memory source only)."""
    if kind == "memory":
        with registered(MemorySource("mem")) as memory:
            resource = MemorySourceResource(source_id="mem", settle_s=0)
            yield memory, resource, str(tmp_path / "store"), "memory://mem", memory.opened
        return
    endpoint: S3Endpoint = request.getfixturevalue("s3")
    prefix = S3Prefix(endpoint, f"{tmp_path.name}/inbox")
    resource = SourceResource(uri=prefix.uri, source_id="mem", settle_s=0)
    yield prefix, resource, f"s3://{endpoint.bucket}/{tmp_path.name}/store", prefix.uri, None


@pytest.mark.parametrize("kind", ["memory", "s3"])
def test_source_through_sensor_and_batch(
    kind: str, tmp_path: Path, instance: dg.DagsterInstance, request: pytest.FixtureRequest
) -> None:
    with _source(kind, tmp_path, request) as (source, resource, store_root, where, opened):
        store = ContentStore(store_root)
        defs = build_definitions({"CONTENT_STORE_DIR": store_root})
        resources = {**(defs.resources or {}), "source": resource}
        for name in ("plain.txt", "notes.md", "handbook.pdf", "bundle.zip"):
            source.put(name, (SAMPLE_INBOX / name).read_bytes())

        first = tick_sensor(defs, instance, None, resources)
        first_batch = _batch(first)
        _run(defs, instance, first_batch)
        assert set(_current(store)) == {"plain.txt", "notes.md", "handbook.pdf", "bundle.zip"}
        assert store.query("SELECT DISTINCT source_id, source_root FROM batches").to_pylist() == [
            {"source_id": "mem", "source_root": where}
        ]
        if opened is not None:
            opened.clear()
        quiet = tick_sensor(defs, instance, first.cursor, resources)
        assert not quiet.run_requests and not opened  # a quiet tick reads nothing
        assert store.list_batches("mem") == [first_batch]

        minutes = (SAMPLE_INBOX / "plain.txt").read_bytes()
        rewritten = minutes.upper() if minutes.upper() != minutes else minutes[::-1]
        assert len(rewritten) == len(minutes) and rewritten != minutes
        source.put("plain.txt", rewritten)  # modified, same size
        source.put("added.txt", b"A new note about the quarterly invoices.")
        source.delete("notes.md")
        source.rename("handbook.pdf", "archive/handbook.pdf")
        batch = _batch(tick_sensor(defs, instance, quiet.cursor, resources))
        manifest = store.read_manifest(batch).to_pylist()
        assert {row["path"]: row["change"] for row in manifest} == {
            "added.txt": "added",
            "archive/handbook.pdf": "added",
            "handbook.pdf": "deleted",
            "notes.md": "deleted",
            "plain.txt": "modified",
        }
        assert _run(defs, instance, batch) == (2, 1)  # processed, reused: the renamed PDF

    current = _current(store)
    assert set(current) == {"plain.txt", "added.txt", "archive/handbook.pdf", "bundle.zip"}
    assert current["plain.txt"]["batch_id"] == batch
    assert current["plain.txt"]["sha256"] == hashlib.sha256(rewritten).hexdigest()
    assert current["bundle.zip"]["batch_id"] == first_batch
    assert _text(store, "plain.txt") == [rewritten.decode().strip()]
    assert _text(store, "added.txt") == ["A new note about the quarterly invoices."]
    assert _text(store, "archive/handbook.pdf") and not _text(store, "handbook.pdf")
    for view in ("current_normalised_artifacts", "current_chunks"):
        paths = {r["path"] for r in store.query(f"SELECT DISTINCT path FROM {view}").to_pylist()}
        assert not paths & {"notes.md", "handbook.pdf"}, view


@pytest.mark.timeout(900)  # two ingests through the real command on a loaded machine
def test_the_cli_ingests_an_s3_prefix(s3: S3Endpoint, tmp_path: Path) -> None:
    """The command picks the source by the URI's scheme; endpoint and keys reach it through
    the AWS_* variables the `s3` fixture sets (inherited by the subprocess)."""
    prefix = S3Prefix(s3, f"{tmp_path.name}/inbox")
    prefix.put("a.txt", b"QS3SRC alpha note\n")
    prefix.put("deep/b.md", b"# QS3SRC bravo\n\nA heading and a line.\n")
    prefix.put("handbook.pdf", (SAMPLE_INBOX / "handbook.pdf").read_bytes())
    prefix.put(".hidden/c.txt", b"never ingested\n")
    store_dir, home = tmp_path / "store", tmp_path / "home"

    done = run_cli("ingest", prefix.uri, "--source-id", "bucket", home=home, store=store_dir)
    assert done.returncode == 0, done.stderr
    assert f"source bucket: {prefix.uri}" in done.stdout
    store = ContentStore(store_dir)
    assert store.query("SELECT DISTINCT source_id, source_root FROM batches").to_pylist() == [
        {"source_id": "bucket", "source_root": prefix.uri}
    ]
    assert sorted(_current(store)) == ["a.txt", "deep/b.md", "handbook.pdf"]
    assert _text(store, "a.txt") == ["QS3SRC alpha note"]
    assert "QS3SRC bravo" in _text(store, "deep/b.md")[0]
    assert _text(store, "handbook.pdf")
    chunks = store.query(
        "SELECT count(*) AS n FROM current_chunks WHERE source_id = 'bucket'"
    ).to_pylist()
    assert chunks[0]["n"] >= 3

    # A second ingest of the same prefix finds the one change only.
    prefix.put("a.txt", b"QS3SRC alpha rewritten\n")
    again = run_cli("ingest", prefix.uri, "--source-id", "bucket", home=home, store=store_dir)
    assert again.returncode == 0, again.stderr
    assert "scanned 3 files; 1 batch(es) to run" in again.stdout
    assert _text(store, "a.txt") == ["QS3SRC alpha rewritten"]
    assert len(store.list_batches("bucket")) == 2

    # A scheme no source is registered for: a clear error naming the known ones, exit 2.
    unknown = run_cli("ingest", "gs://bucket/inbox", home=home, store=store_dir)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "no source for the scheme gs:// of gs://bucket/inbox" in unknown.stderr
    assert "file://, s3://" in unknown.stderr
