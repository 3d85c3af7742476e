"""A source that is not a folder (in memory, shaped like an object store) bound through the
source resource: the real sensor discovers it and the real batch job ingests it, so discovery
and the pipeline depend on the EntrySource protocol alone."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg

from content_assets.definitions import build_definitions
from content_core.store import ContentStore
from tests.conftest import SAMPLE_INBOX
from tests.support.memory_source import MemorySource, MemorySourceResource, registered
from tests.support.sensors import tick_sensor


def _run(defs: dg.Definitions, instance: dg.DagsterInstance, batch_id: str) -> dict[str, int]:
    """Run the batch job in process; the figures of its normalised_artifacts step."""
    job = defs.resolve_job_def("ingest_batch_job")
    result = job.execute_in_process(instance=instance, partition_key=batch_id)
    assert result.success
    (materialization,) = result.asset_materializations_for_node("normalised_artifacts")
    return {k: v.value for k, v in materialization.metadata.items()}


def _current(store: ContentStore) -> dict[str, dict[str, object]]:
    rows = store.query("SELECT path, batch_id, sha256 FROM current_raw_files").to_pylist()
    return {row["path"]: row for row in rows}


def _text(store: ContentStore, path: str) -> list[str]:
    rows = store.query(
        "SELECT text FROM current_normalised_artifacts WHERE path = ? AND len(derived_from) = 0",
        [path],
    ).to_pylist()
    return [row["text"] for row in rows]


def test_in_memory_source_through_sensor_and_batch(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = build_definitions({"CONTENT_STORE_DIR": str(store.root)})
    resources = {
        **(defs.resources or {}),
        "source_folder": MemorySourceResource(source_id="mem", settle_s=0),
    }
    with registered(MemorySource("mem")) as source:
        for name in ("plain.txt", "notes.md", "handbook.pdf", "bundle.zip"):
            source.put(name, (SAMPLE_INBOX / name).read_bytes())

        first = tick_sensor(defs, instance, None, resources)
        (request,) = first.run_requests or []
        _run(defs, instance, request.partition_key)
        assert set(_current(store)) == {"plain.txt", "notes.md", "handbook.pdf", "bundle.zip"}
        assert store.query("SELECT DISTINCT source_id, source_root FROM batches").to_pylist() == [
            {"source_id": "mem", "source_root": "memory://mem"}
        ]
        source.opened.clear()
        quiet = tick_sensor(defs, instance, first.cursor, resources)
        assert not quiet.run_requests and source.opened == []  # a quiet tick reads nothing

        minutes = (SAMPLE_INBOX / "plain.txt").read_bytes()
        rewritten = minutes.upper() if minutes.upper() != minutes else minutes[::-1]
        assert len(rewritten) == len(minutes) and rewritten != minutes
        source.put("plain.txt", rewritten)  # modified, same size
        source.put("added.txt", b"A new note about the quarterly invoices.")
        source.delete("notes.md")
        source.rename("handbook.pdf", "archive/handbook.pdf")
        second = tick_sensor(defs, instance, quiet.cursor, resources)
        (request,) = second.run_requests or []
        changes = store.query(
            "SELECT path, change FROM batches WHERE batch_id = ? ORDER BY path",
            [request.partition_key],
        ).to_pylist()
        assert changes == [
            {"path": "added.txt", "change": "added"},
            {"path": "archive/handbook.pdf", "change": "added"},
            {"path": "handbook.pdf", "change": "deleted"},
            {"path": "notes.md", "change": "deleted"},
            {"path": "plain.txt", "change": "modified"},
        ]
        figures = _run(defs, instance, request.partition_key)
        assert (figures["processed"], figures["reused"]) == (2, 1)  # the renamed PDF: reused

    current = _current(store)
    assert set(current) == {"plain.txt", "added.txt", "archive/handbook.pdf", "bundle.zip"}
    assert current["plain.txt"]["batch_id"] == request.partition_key
    assert current["plain.txt"]["sha256"] == hashlib.sha256(rewritten).hexdigest()
    assert current["bundle.zip"]["batch_id"] == first.run_requests[0].partition_key
    assert _text(store, "plain.txt") == [rewritten.decode().strip()]
    assert _text(store, "added.txt") == ["A new note about the quarterly invoices."]
    assert _text(store, "archive/handbook.pdf") and not _text(store, "handbook.pdf")
    for view in ("current_normalised_artifacts", "current_chunks"):
        paths = {r["path"] for r in store.query(f"SELECT DISTINCT path FROM {view}").to_pylist()}
        assert not paths & {"notes.md", "handbook.pdf"}, view
