"""Rows belong to paths: the same bytes under two names are two documents that share work.

Every case runs the real discovery and the six real stages (`run_batch`) over a folder on
disk, then reads the DuckDB views. Also: empty files are an answer, text that comes out empty
says why, and chunks name the pages they span.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from content_core.binary import BinaryConfig
from content_core.discovery import discover_pending
from content_core.pipeline import PipelineConfig, run_batch
from content_core.pipeline.config import ProcessingConfig
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from tests.core.extract_inputs import DOCX, make_pdf, make_zip
from tests.fixtures.hostile import minimal_docx

# Real stages, in this process: the worker pool is covered by the processing tests.
CONFIG = PipelineConfig(processing=ProcessingConfig(isolate=False))
TEXT = (
    "Quarterly report QR7781 for the northern depot. "
    "Contact ops@example.org before 2024-05-01 about the 1,200 EUR invoice.\n"
) * 5


def _ingest(folder: Path, store: ContentStore) -> list[str]:
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="docs")
    found = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0)
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, CONFIG)
    return list(found.batch_ids)


def _rows(store: ContentStore, sql: str) -> list[dict[str, Any]]:
    return store.query(sql).to_pylist()


def _merged(store: ContentStore) -> dict[str, dict[str, Any]]:
    rows = _rows(store, "SELECT * FROM current_merged_extractions ORDER BY path")
    assert len({r["path"] for r in rows}) == len(rows), rows
    return {r["path"]: r for r in rows}


def _chunk_counts(store: ContentStore) -> dict[str, int]:
    rows = _rows(store, "SELECT path, count(*) AS n FROM current_chunks GROUP BY path")
    return {r["path"]: r["n"] for r in rows}


def _root_filenames(store: ContentStore) -> dict[str, str]:
    rows = _rows(
        store,
        "SELECT path, filename FROM current_normalised_artifacts WHERE len(derived_from) = 0",
    )
    return {r["path"]: r["filename"] for r in rows}


def _assert_one_document_per_path(store: ContentStore, paths: list[str]) -> None:
    merged = _merged(store)
    chunks = _chunk_counts(store)
    assert sorted(merged) == sorted(paths)
    for path in paths:
        # Each document merges its own chunks once: never its copy's as well.
        assert merged[path]["chunk_count"] == chunks[path], path
        assert merged[path]["error_count"] == 0


def test_two_copies_in_one_batch_are_two_documents(tmp_path: Path, store: ContentStore) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT)
    (folder / "b.txt").write_text(TEXT)
    _ingest(folder, store)
    assert _root_filenames(store) == {"a.txt": "a.txt", "b.txt": "b.txt"}
    _assert_one_document_per_path(store, ["a.txt", "b.txt"])
    # Work is shared: one normalisation and one set of chunk ids for the two copies.
    ids = _rows(store, "SELECT DISTINCT artifact_id FROM current_normalised_artifacts")
    assert len(ids) == 1
    outputs = _rows(store, "SELECT DISTINCT output_json FROM current_merged_extractions")
    assert len(outputs) == 1

    (folder / "b.txt").unlink()  # deleting one copy keeps the other's every row
    _ingest(folder, store)
    _assert_one_document_per_path(store, ["a.txt"])
    assert _root_filenames(store) == {"a.txt": "a.txt"}
    assert set(_chunk_counts(store)) == {"a.txt"}


def test_copies_across_batches_and_a_rename(tmp_path: Path, store: ContentStore) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT)
    _ingest(folder, store)
    shutil.copy(folder / "a.txt", folder / "b.txt")
    _ingest(folder, store)
    assert _root_filenames(store) == {"a.txt": "a.txt", "b.txt": "b.txt"}
    _assert_one_document_per_path(store, ["a.txt", "b.txt"])

    (folder / "a.txt").rename(folder / "renamed.txt")
    _ingest(folder, store)
    assert _root_filenames(store) == {"b.txt": "b.txt", "renamed.txt": "renamed.txt"}
    _assert_one_document_per_path(store, ["b.txt", "renamed.txt"])


def test_same_member_in_two_archives_and_as_a_plain_file(
    tmp_path: Path, store: ContentStore
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    member = TEXT.encode()
    (folder / "one.zip").write_bytes(make_zip({"inner/report.txt": member}))
    other = b"Other QZ5 text"
    (folder / "two.zip").write_bytes(make_zip({"report.txt": member, "other.txt": other}))
    (folder / "report.txt").write_bytes(member)
    _ingest(folder, store)
    member_rows = _rows(
        store,
        "SELECT path, filename FROM current_normalised_artifacts "
        "WHERE len(derived_from) > 0 AND text LIKE '%QR7781%' ORDER BY path",
    )
    assert [(r["path"], r["filename"]) for r in member_rows] == [
        ("one.zip", "report.txt"),
        ("two.zip", "report.txt"),
    ]
    merged = _rows(
        store,
        "SELECT path, artifact_id, chunk_count FROM current_merged_extractions ORDER BY path",
    )
    by_path: dict[str, list[dict[str, Any]]] = {}
    for row in merged:
        by_path.setdefault(row["path"], []).append(row)
    # The member's document is listed under each container and under the plain file, once each.
    assert sorted(by_path) == ["one.zip", "report.txt", "two.zip"]
    assert len(by_path["one.zip"]) == 1 and len(by_path["report.txt"]) == 1
    assert len(by_path["two.zip"]) == 2  # report.txt and other.txt
    report_id = by_path["report.txt"][0]["artifact_id"]
    chunks = store.query(
        "SELECT path, count(*) AS n FROM current_chunks WHERE artifact_id = ? GROUP BY path",
        [report_id],
    ).to_pylist()
    per_path = {r["path"]: r["n"] for r in chunks}
    assert set(per_path) == {"one.zip", "two.zip", "report.txt"}
    for rows in by_path.values():
        for row in rows:
            if row["artifact_id"] == report_id:
                assert row["chunk_count"] == per_path["report.txt"]


@pytest.mark.parametrize("name", ["empty.txt", "empty.pdf", "no-extension"])
def test_a_zero_byte_file_is_an_empty_file_error_row(
    tmp_path: Path, store: ContentStore, name: str
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / name).write_bytes(b"")
    (folder / "ok.txt").write_text(TEXT)
    _ingest(folder, store)
    rows = {r["path"]: r for r in _rows(store, "SELECT * FROM current_normalised_artifacts")}
    empty = rows[name]
    assert empty["error_type"] == "EmptyFileError"
    assert empty["text_status"] == "error"
    assert empty["kind"] == "empty" and empty["media_type"] == "application/x-empty"
    assert "0 bytes" in empty["error_message"]
    raw = _rows(store, "SELECT path, media_type FROM current_raw_files")
    assert {r["path"]: r["media_type"] for r in raw}[name] == "application/x-empty"
    assert rows["ok.txt"]["text_status"] == "ok"
    assert set(_merged(store)) == {"ok.txt"}


def test_text_status_says_why_there_is_no_text(tmp_path: Path, store: ContentStore) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "blank.txt").write_text("  \n\n \t\n")
    (folder / "scan.pdf").write_bytes(make_pdf(["", ""]))  # pages, but no text on them
    (folder / "bundle.zip").write_bytes(make_zip({"inside.txt": b"Inside QZ9 marker text"}))
    (folder / "garbage.bin").write_bytes(bytes(range(256)) * 4)
    (folder / "good.pdf").write_bytes(make_pdf(["Page one QP1 text", "Page two QP2 text"]))
    _ingest(folder, store)
    status = {
        (r["path"], r["filename"]): r["text_status"]
        for r in _rows(store, "SELECT * FROM current_normalised_artifacts")
    }
    assert status[("blank.txt", "blank.txt")] == "empty"
    assert status[("scan.pdf", "scan.pdf")] == "no_text_layer"
    assert status[("bundle.zip", "bundle.zip")] == "container"
    assert status[("bundle.zip", "inside.txt")] == "ok"
    assert status[("good.pdf", "good.pdf")] == "ok"
    assert status[("garbage.bin", "garbage.bin")] == "error"  # UnsupportedFormatError
    assert set(status.values()) <= {
        "ok", "empty", "no_text_layer", "container", "rendition", "unsupported", "error"
    }


def test_chunks_name_the_pages_they_span(tmp_path: Path, store: ContentStore) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    words = " ".join(f"word{i}" for i in range(120))
    (folder / "pages.pdf").write_bytes(make_pdf([words[:400], words[400:], "Last page QL3"]))
    _ingest(folder, store)
    doc = _rows(store, "SELECT text, pages FROM current_normalised_artifacts")[0]
    chunks = _rows(
        store,
        "SELECT source_start, source_end, page_start, page_end, metadata "
        "FROM current_chunks ORDER BY index",
    )
    assert chunks
    spans = doc["pages"]

    def page_at(offset: int) -> int:
        return max(p["page"] for p in spans if p["start"] <= offset)

    for chunk in chunks:
        assert chunk["page_start"] == page_at(chunk["source_start"])
        assert chunk["page_end"] == page_at(max(chunk["source_end"] - 1, chunk["source_start"]))
        assert chunk["page_start"] <= chunk["page_end"]
        json.loads(chunk["metadata"])
    assert chunks[0]["page_start"] == 1
    assert chunks[-1]["page_end"] == 3


class _RecordedSha256:
    """`hashlib.sha256` that keeps what each hash object was fed, to count the hashes of a
    file's bytes in a real run."""

    fed: ClassVar[list[bytearray]] = []
    real: ClassVar[Callable[..., Any]] = hashlib.sha256

    def __init__(self, data: bytes = b"", **kwargs: Any) -> None:
        self._hash = self.real(data, **kwargs)
        self._fed = bytearray(data)
        self.fed.append(self._fed)

    def update(self, data: bytes) -> None:
        self._hash.update(data)
        self._fed += data

    def __getattr__(self, name: str) -> Any:  # digest, hexdigest, name, ...
        return getattr(self._hash, name)


def test_sha256_media_type_and_source_id_travel_from_raw_files(
    tmp_path: Path, store: ContentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each raw file is hashed once (at discovery) and sniffed once (raw_files): its id, type
    and source reach every table, even for a 3 MiB DOCX refused in its worker, whose parts lie
    past the first MiB (a sniff of a prefix would call it a zip)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text(TEXT)
    (folder / "paper.pdf").write_bytes(make_pdf(["QCY01 first page", "QCY02 second page"]))
    (folder / "bundle.zip").write_bytes(make_zip({"inner.txt": TEXT.replace("QR7781", "QCY03")}))
    (folder / "small.docx").write_bytes(minimal_docx("QCY04 small document"))
    (folder / "big.docx").write_bytes(minimal_docx("QCY05 big", picture_bytes=3 << 20))
    fed: list[bytearray] = []
    monkeypatch.setattr(_RecordedSha256, "fed", fed)
    monkeypatch.setattr(hashlib, "sha256", _RecordedSha256)
    limits = ProcessingConfig(isolate=False, binary=BinaryConfig(max_bytes=2 << 20))
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="docs")
    found = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0)
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, CONFIG.model_copy(update={"processing": limits}))
    monkeypatch.undo()

    raw = {r["path"]: r for r in _rows(store, "SELECT * FROM current_raw_files")}
    assert sorted(raw) == ["big.docx", "bundle.zip", "notes.txt", "paper.pdf", "small.docx"]
    for path in raw:
        data = (folder / path).read_bytes()
        assert sum(1 for hashed in fed if hashed == data) == 1, path
    assert raw["big.docx"]["media_type"] == DOCX
    roots = _rows(
        store, "SELECT * FROM current_normalised_artifacts WHERE len(derived_from) = 0"
    )
    assert sorted(r["path"] for r in roots) == sorted(raw)
    for root in roots:
        source_row = raw[root["path"]]
        assert root["artifact_id"] == root["raw_sha256"] == source_row["sha256"], root["path"]
        assert root["media_type"] == source_row["media_type"], root["path"]
    big = next(r for r in roots if r["path"] == "big.docx")
    assert (big["error_type"], big["kind"]) == ("LimitExceededError", "docx")
    for view in ("normalised_artifacts", "chunks", "compressed_contexts",
                 "agentic_extractions", "merged_extractions"):
        rows = _rows(store, f"SELECT source_id, path, path_bytes FROM current_{view}")
        assert rows and {r["source_id"] for r in rows} == {"docs"}, view
        assert all(r["path_bytes"] == r["path"].encode() for r in rows), view
