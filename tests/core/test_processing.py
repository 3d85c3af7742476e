"""process_files: the corpus end to end, records, ids, blobs, isolation and failure rows."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from content_core.binary import BinaryConfig
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.store.blobs import BlobStore
from tests.core import extract_inputs as inputs
from tests.core import format_inputs as formats
from tests.fixtures.corpus import CORPUS, manifest_rows
from tests.fixtures.hostile import pdf_with_text
from tests.fixtures.ole2 import word6_document
from tests.fixtures.wordperfect import wp6_document, wp6_text
from tests.support.worker_probe import PROBED

# Failures the corpus may legitimately produce (encrypted inputs without a password, an XML
# entity bomb refused by the XML extractor).
EXPECTED_ERRORS = {
    "EncryptedFileError",  # password_protected.xlsx (OLE2-wrapped OOXML), PGP part of a .msg
    "EmptyFileError",  # txt/empty.txt is 0 bytes
    "UnsafeInputError",  # svg/billion-laughs.svg is XML with an entity bomb
}


def _inputs(rows: list[dict[str, str]]) -> list[FileInput]:
    return [
        FileInput(key=row["sha256"], path=CORPUS / row["path"], filename=Path(row["path"]).name)
        for row in rows
    ]


slow_corpus = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, list, BlobStore, float]:
    rows = manifest_rows()
    store = BlobStore(tmp_path_factory.mktemp("store"))
    config = ProcessingConfig(binary=BinaryConfig(passwords=("foo", "password")), workers=2)
    started = time.monotonic()
    results = process_files(_inputs(rows), config, blob_store=store)
    return rows, results, store, time.monotonic() - started


def _all_text(records: list[ArtifactRecord]) -> str:
    return "\n".join(r.text for r in records if r.text)


@slow_corpus
def test_corpus_every_file_processed_without_unhandled_errors(corpus_run: tuple) -> None:
    rows, results, _, elapsed = corpus_run
    assert len(results) == len(rows)
    print(f"corpus: {len(rows)} files in {elapsed:.1f} s")
    for row, records in zip(rows, results, strict=True):
        raw = records[0]
        assert raw.derived_from == () and raw.artifact_id == row["sha256"], row["path"]
        for record in records:
            assert not (record.error_type or "").startswith(("Unexpected", "Worker")), (
                row["path"], record.error_type, record.error_message)
            if record.error_type:
                assert record.error_type in EXPECTED_ERRORS, (row["path"], record)


@slow_corpus
def test_corpus_must_contain_hit_rate(corpus_run: tuple) -> None:
    rows, results, _, _ = corpus_run
    checked = hits = 0
    missed = []
    for row, records in zip(rows, results, strict=True):
        phrase = row.get("must_contain", "")
        if not phrase or "needs OCR" in row.get("notes", ""):
            continue
        checked += 1
        if phrase in _all_text(records):
            hits += 1
        else:
            missed.append(row["path"])
    rate = hits / checked
    print(f"must_contain: {hits}/{checked} = {rate:.1%}; missed {missed}")
    assert rate >= 0.95, missed


@slow_corpus
def test_corpus_records_are_safe_for_duckdb(corpus_run: tuple) -> None:
    import duckdb

    _, results, _, _ = corpus_run
    texts = [r.text for records in results for r in records if r.text]
    for text in texts:
        assert "\x00" not in text
        text.encode("utf-8")  # raises on lone surrogates
    connection = duckdb.connect()
    connection.execute("create table t (text varchar)")
    connection.executemany("insert into t values (?)", [[t] for t in texts])
    assert connection.execute("select count(*) from t").fetchone()[0] == len(texts)


@slow_corpus
def test_corpus_blobs_and_chains(corpus_run: tuple) -> None:
    _, results, store, _ = corpus_run
    for records in results:
        ids = {r.artifact_id for r in records}
        for record in records:
            if store.has(record.artifact_id):
                data = store.get(record.artifact_id)
                assert hashlib.sha256(data).hexdigest() == record.artifact_id
            else:
                assert record.error_type is not None  # only failures may lack bytes
            assert set(record.derived_from) <= ids, record
            if record.derived_from:
                assert record.derived_from[0] == records[0].artifact_id


@slow_corpus
def test_corpus_text_pages_are_offsets(corpus_run: tuple) -> None:
    _, results, _, _ = corpus_run
    for records in results:
        for record in records:
            for span in record.pages:
                assert record.text is not None
                assert 0 <= span.start <= span.end <= len(record.text)


@slow_corpus
def test_encrypted_corpus_files_open_with_configured_passwords(corpus_run: tuple) -> None:
    rows, results, _, _ = corpus_run
    by_path = {row["path"]: records for row, records in zip(rows, results, strict=True)}
    assert "File with password" in _all_text(by_path["pdf/password.pdf"])
    assert "oracle.jdbc.driver.OracleDriver" in _all_text(by_path["7z/bla.encrypted.7z"])


def test_without_passwords_encrypted_files_are_typed_errors(tmp_path: Path) -> None:
    rows = [r for r in manifest_rows() if r["path"] in ("pdf/password.pdf",
                                                        "7z/bla.encrypted.7z")]
    results = process_files(_inputs(rows), ProcessingConfig(isolate=False),
                            blob_store=BlobStore(tmp_path))
    assert [records[0].error_type for records in results] == [
        "EncryptedFileError", "EncryptedFileError"
    ]
    assert all(records[0].stage == "normalise" for records in results)


def _write(tmp_path: Path, name: str, data: bytes) -> FileInput:
    path = tmp_path / "raw" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return FileInput(key=name, path=path, filename=name)


def test_isolated_and_in_process_runs_agree_and_are_deterministic(tmp_path: Path) -> None:
    inputs = [_write(tmp_path, "a.pdf", pdf_with_text("determinism marker")),
              _write(tmp_path, "b.txt", b"plain text marker\n")]
    shutil.copy(CORPUS / "zip/simple.zip", tmp_path / "raw" / "c.zip")
    inputs.append(FileInput(key="c", path=tmp_path / "raw" / "c.zip", filename="c.zip"))
    store = BlobStore(tmp_path / "store")
    isolated = process_files(inputs, ProcessingConfig(), blob_store=store)
    again = process_files(inputs, ProcessingConfig(), blob_store=store)
    in_process = process_files(inputs, ProcessingConfig(isolate=False), blob_store=store)
    assert isolated == again == in_process
    assert "determinism marker" in (isolated[0][0].text or "")
    assert [r.kind for r in isolated[2]] == ["archive", "html", "csv"]


def test_timeout_becomes_a_worker_row_and_the_batch_goes_on(tmp_path: Path) -> None:
    heavy = _write(tmp_path, "heavy.heic", (CORPUS / "heic/example.heic").read_bytes())
    light = _write(tmp_path, "light.txt", b"still processed\n")
    config = ProcessingConfig(timeout_s=0.05, workers=1)
    [heavy_records, light_records] = process_files([heavy, light], config,
                                                   blob_store=BlobStore(tmp_path / "s"))
    [row] = heavy_records
    assert (row.error_type, row.stage, row.kind) == ("WorkerTimeoutError", "worker", "image")
    assert row.artifact_id == hashlib.sha256(heavy.path.read_bytes()).hexdigest()
    # The light file may also miss a 50 ms limit on a loaded machine; it must not crash.
    assert light_records[0].error_type in (None, "WorkerTimeoutError")


def test_missing_file_is_a_source_error_row(tmp_path: Path) -> None:
    item = FileInput(key="gone", path=tmp_path / "nope.bin", filename="nope.bin")
    [[row]] = process_files([item], ProcessingConfig(isolate=False),
                            blob_store=BlobStore(tmp_path / "s"))
    assert row.error_type == "SourceError" and row.stage == "sniff"


def test_legacy_office_text_comes_through_the_pdf_rendition(tmp_path: Path) -> None:
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    item = _write(tmp_path, "fake.ppt", (CORPUS / "ppt/fake-power-point.ppt").read_bytes())
    config = ProcessingConfig(binary=BinaryConfig(office_converter="libreoffice"), workers=1,
                              timeout_s=120)
    [records] = process_files([item], config, blob_store=BlobStore(tmp_path / "s"))
    assert [(r.kind, r.media_type) for r in records] == [
        ("ppt", "application/vnd.ms-powerpoint"), ("pdf", "application/pdf")
    ]
    assert "Adding a Bullet Slide" in (records[0].text or "")
    assert records[1].text is None and records[0].page_count == records[1].page_count


def test_fingerprint_tracks_output_settings_only() -> None:
    base = ProcessingConfig()
    assert base.fingerprint() == ProcessingConfig(workers=7, isolate=False).fingerprint()
    assert base.fingerprint() != ProcessingConfig(
        binary=BinaryConfig(max_expanded_files=3)
    ).fingerprint()


def test_config_is_frozen_and_strict() -> None:
    with pytest.raises(ValueError):
        ProcessingConfig(unknown=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        ProcessingConfig().timeout_s = 3  # type: ignore[misc]


def _process_inside_daemon(folder: str) -> None:
    root = Path(folder)
    item = FileInput(key="t", path=root / "in.txt", filename="in.txt")
    [[record]] = process_files([item], ProcessingConfig(), blob_store=BlobStore(root / "s"))
    (root / "out.txt").write_text(record.text or "")


def test_daemonic_callers_fall_back_to_in_process(tmp_path: Path) -> None:
    import multiprocessing

    (tmp_path / "in.txt").write_text("daemon marker text\n")
    process = multiprocessing.get_context("spawn").Process(
        target=_process_inside_daemon, args=(str(tmp_path),), daemon=True
    )
    process.start()
    process.join(240)
    if process.is_alive():
        process.kill()
        process.join(10)
    assert process.exitcode == 0
    assert "daemon marker text" in (tmp_path / "out.txt").read_text()


def test_files_over_max_bytes_are_refused_before_reading(tmp_path: Path) -> None:
    item = _write(tmp_path, "big.txt", b"x" * 5000)
    config = ProcessingConfig(binary=BinaryConfig(max_bytes=1000), isolate=False)
    [[row]] = process_files([item], config, blob_store=BlobStore(tmp_path / "s"))
    assert (row.error_type, row.stage, row.kind) == ("LimitExceededError", "sniff", "text")
    assert "max_bytes=1000" in (row.error_message or "")
    assert row.artifact_id == hashlib.sha256(b"x" * 5000).hexdigest()


def test_slow_office_rendering_fails_alone_and_the_document_keeps_its_text(
    tmp_path: Path,
) -> None:
    from tests.fixtures.hostile import minimal_docx
    from tests.support.gotenberg_server import GotenbergServer

    item = _write(tmp_path, "slow.docx", minimal_docx("text survives slow rendering"))
    # The server answers after a minute, the client gives up after 2 s, and the file has a
    # minute in all: the text extraction keeps ample room on a loaded machine.
    with GotenbergServer(use_soffice=False, delay_s=60) as server:
        config = ProcessingConfig(
            binary=BinaryConfig(
                office_converter="gotenberg", gotenberg_url=server.url, gotenberg_timeout_s=2
            ),
            timeout_s=60,
            workers=1,
        )
        [records] = process_files([item], config, blob_store=BlobStore(tmp_path / "s"))
    assert records[0].kind == "docx" and "text survives slow rendering" in (records[0].text or "")
    assert records[1].error_type == "OfficeConversionError"
    assert "timed out" in (records[1].error_message or "")


@pytest.mark.parametrize(
    ("error_type", "stage"),
    [
        ("EncryptedFileError", "normalise"),  # a fact about the file: cacheable
        ("WorkerTimeoutError", "worker"),
        ("WorkerMemoryError", "worker"),
        ("UnexpectedError.OSError", "worker"),  # e.g. a full disk: retry, never cache
    ],
)
def test_failure_rows_from_workers_say_whether_they_are_transient(
    tmp_path: Path, error_type: str, stage: str
) -> None:
    from content_core.pipeline.stages.normalised_artifacts.worker import _worker_failure
    from content_core.sandbox import TaskFailure

    item = _write(tmp_path, "f.pdf", pdf_with_text("x"))
    row = _worker_failure(item, TaskFailure(error_type, "message"))
    assert (row.error_type, row.stage, row.kind) == (error_type, stage, "pdf")


def _format_cases() -> list[tuple[str, bytes, str, str, str]]:
    return [
        ("memo.wpd", wp6_document(wp6_text(["Memo QPR01"])), "wordperfect",
         "application/vnd.wordperfect", "Memo QPR01"),
        ("old.doc", word6_document(["Word 95 QPR02"]), "doc", "application/msword",
         "Word 95 QPR02"),
        ("strict.docx", formats.docx_strict(), "docx", inputs.DOCX, "Strict body text QGS02"),
        ("strict.xlsx", formats.xlsx_strict(), "xlsx", inputs.XLSX, "Strict cell QGS12"),
        ("book.xlsm", formats.xlsm_workbook(), "xlsx",
         "application/vnd.ms-excel.sheet.macroenabled.12", "Widget QG302"),
        ("letter.xml", formats.WORDML_2003_DOC, "wordml", "application/vnd.ms-wordml",
         "Opening remarks QGW02"),
        ("sheet.xml", formats.SPREADSHEETML_2003_DOC, "spreadsheetml",
         "application/vnd.ms-spreadsheetml", "Bolt QGX02"),
    ]


@pytest.mark.parametrize(
    ("name", "data", "kind", "media_type", "marker"),
    _format_cases(),
    ids=[case[0] for case in _format_cases()],
)
def test_formats_from_real_corpora_end_as_text_rows(
    tmp_path: Path, name: str, data: bytes, kind: str, media_type: str, marker: str
) -> None:
    # Each was a failure or a wrong label before (issue 9, finding 7); now each is sniffed,
    # given a kind that carries text, and extracted without the Office converter.
    [[row]] = process_files([_write(tmp_path, name, data)], ProcessingConfig(isolate=False),
                            blob_store=BlobStore(tmp_path / "s"))
    assert (row.kind, row.media_type, row.error_type) == (kind, media_type, None)
    assert marker in (row.text or "")


def test_truncated_docx_is_a_corrupt_docx_row_not_a_zip(tmp_path: Path) -> None:
    item = _write(tmp_path, "cut.docx", formats.docx_cut_before_body())
    [[row]] = process_files([item], ProcessingConfig(isolate=False),
                            blob_store=BlobStore(tmp_path / "s"))
    assert (row.kind, row.media_type) == ("docx", inputs.DOCX)
    assert row.error_type == "CorruptFileError" and row.stage == "normalise"
    assert "not a readable zip package" in (row.error_message or "")


def _large_docx(tmp_path: Path) -> FileInput:
    """A 3 MiB DOCX whose parts and directory lie past its first MiB."""
    from tests.fixtures.hostile import minimal_docx

    return _write(tmp_path, "report.docx", minimal_docx("QCR01 body", picture_bytes=3 << 20))


@pytest.mark.parametrize("carried", [True, False], ids=["from-raw-files", "bare-caller"])
def test_a_large_docx_refused_in_its_worker_is_a_docx_row_not_a_zip(
    tmp_path: Path, carried: bool
) -> None:
    """The row of a file no worker could process keeps the type raw_files sniffed from all of
    its bytes (a bare caller's file is sniffed the same way), never a 1 MiB prefix's zip."""
    item = _large_docx(tmp_path)
    sha = hashlib.sha256(item.path.read_bytes()).hexdigest()
    if carried:
        item = item.model_copy(update={"sha256": sha, "media_type": inputs.DOCX})
    config = ProcessingConfig(binary=BinaryConfig(max_bytes=1 << 20), isolate=False)
    [[row]] = process_files([item], config, blob_store=BlobStore(tmp_path / "s"))
    assert (row.error_type, row.stage) == ("LimitExceededError", "sniff")
    assert (row.artifact_id, row.media_type, row.kind) == (sha, inputs.DOCX, "docx")


@pytest.mark.parametrize("error_type", ["WorkerTimeoutError", "WorkerCrashedError"])
def test_a_large_docx_whose_worker_died_is_a_docx_row(tmp_path: Path, error_type: str) -> None:
    from content_core.pipeline.stages.normalised_artifacts.worker import _worker_failure
    from content_core.sandbox import TaskFailure

    item = _large_docx(tmp_path)
    row = _worker_failure(item, TaskFailure(error_type, "message"))
    assert (row.media_type, row.kind, row.stage) == (inputs.DOCX, "docx", "worker")
    assert row.artifact_id == hashlib.sha256(item.path.read_bytes()).hexdigest()


def test_a_worker_that_times_out_reports_what_the_caller_knows(tmp_path: Path) -> None:
    """A real timeout: the row takes the caller's id and type, without reading the file."""
    heavy = _write(tmp_path, "heavy.heic", (CORPUS / "heic/example.heic").read_bytes())
    known = heavy.model_copy(update={"sha256": "a" * 64, "media_type": "image/heic"})
    config = ProcessingConfig(timeout_s=0.05, workers=1)
    [[row]] = process_files([known], config, blob_store=BlobStore(tmp_path / "s"))
    assert (row.error_type, row.stage) == ("WorkerTimeoutError", "worker")
    assert (row.artifact_id, row.media_type, row.kind) == ("a" * 64, "image/heic", "image")


PRELOAD_PROBE = """
import json
from content_core.pipeline.stages.normalised_artifacts.worker import WORKER_PRELOAD
from content_core.sandbox import shared_pool
from tests.support.worker_probe import preloaded

pool = shared_pool(workers=1, memory_mb=2048, preload=WORKER_PRELOAD)
print(json.dumps(pool.map(preloaded, [None], timeout_s=120)[0]))
"""


def test_a_pool_worker_starts_with_the_parsers_tokeniser_and_model_loaded() -> None:
    """The fork server loads them once; a worker forked from it has them before any task."""
    # A fresh interpreter: this one's fork server may have started without the preload.
    done = subprocess.run(
        [sys.executable, "-c", PRELOAD_PROBE],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"modules": list(PROBED), "models": 1}
